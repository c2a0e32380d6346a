"""The forms of an attention head the search parametrises: a d x d A, or a thin head W_Q, W_K (d x d_k).

A head is a block of a search point's coordinates.  Each form says how many coordinates a head takes,
how a block becomes its float64 arrays, the float64 a = ||A||_2 of those arrays, how A is scaled (so
that the search can set a D^2 = L), and the exact configuration fields of the layer (certify.core.config):
    FullHead   d^2 entries of A                      -> "A"
    ThinHead   2 d d_k entries of W_Q, then of W_K   -> "W_Q", "W_K", "d_k", with A = W_Q W_K^T / sqrt(d_k)
A thin head's arrays are W_Q and W_K stacked into one (2, d, d_k) array, so that a head is one numpy
array in either form (one per layer, or one shared by every layer).  Scaling A by c multiplies W_Q and
W_K each by sqrt(c): the entries stay balanced, and the shrinker rounds and halves them as it does A's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from certify.core import config, thin_norm
from certify.core.arguments import integer
from certify.errors import BadInput


def checked_d_k(d: int, d_k, option: str = "--d-k") -> int | None:
    """d_k (None: a full head) when 1 <= d_k < d, else BadInput in one line naming the `option`: d_k = d would
    be a head of full rank, the d x d norm again, not a thin head."""
    if d_k is None:
        return None
    d_k = integer(d_k, option)
    if not 1 <= d_k < d:
        raise BadInput(f"{option} must be between 1 and d - 1 = {d - 1} (a thin head), got {d_k}"
                       if d > 1 else f"{option} needs d >= 2 (a thin head has 1 <= d_k < d), got d = {d}")
    return d_k


@dataclass(frozen=True)
class FullHead:
    """A d x d query-key matrix A, every entry searched."""

    d: int

    @property
    def size(self) -> int:
        """How many coordinates of a search point the head takes."""
        return self.d * self.d

    def arrays(self, block: np.ndarray) -> np.ndarray:
        """The head's float64 arrays of its block of coordinates."""
        return block.reshape(self.d, self.d)

    def matrix(self, head: np.ndarray) -> np.ndarray:
        """The float64 A of the head's arrays."""
        return head

    def norm(self, head: np.ndarray) -> float:
        """float64 ||A||_2 (nan where the arrays are not finite)."""
        return float(np.linalg.norm(head, 2)) if np.all(np.isfinite(head)) else math.nan

    def scaled(self, head: np.ndarray, factor: float) -> np.ndarray:
        """The head with A multiplied by factor."""
        return factor * head

    def fields(self, head: np.ndarray) -> dict:
        """The layer's exact head fields (certify.core.config.Layer)."""
        return {"A": config.exact_matrix(head)}

    def probe(self) -> np.ndarray:
        """A head with a = 1, for trying whether a claim applies to the layout."""
        return np.eye(self.d)

    def aligned(self, u: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """The block of A = u u^T (u a unit vector): u^T A u = ||A||_2, the extremal head of collapse.tanh; with
        w (a unit vector orthogonal to u), A = u u^T + w w^T, which also sees w (Layout.extremal_shape)."""
        return (np.outer(u, u) + (0 if w is None else np.outer(w, w))).ravel()

    def reaches_two_directions(self) -> bool:
        """Whether aligned takes w: a full A always."""
        return True

    def text(self, head: np.ndarray, entries) -> str:
        """The head to read, its matrices written by entries(matrix)."""
        return f"A ~ {entries(head)}"

    def describe(self) -> str:
        """The form in words, to follow the layout's description ("" for the usual full A)."""
        return ""


@dataclass(frozen=True)
class ThinHead:
    """W_Q and W_K of d x d_k (1 <= d_k < d), every entry searched: A = W_Q W_K^T / sqrt(d_k) has rank <= d_k
    and its norm is certified through the d_k x d_k reduction of certify.core.thin_norm."""

    d: int
    d_k: int

    @property
    def size(self) -> int:
        """How many coordinates of a search point the head takes."""
        return 2 * self.d * self.d_k

    def arrays(self, block: np.ndarray) -> np.ndarray:
        """W_Q and W_K of the block, stacked: a (2, d, d_k) array."""
        return block.reshape(2, self.d, self.d_k)

    def matrix(self, head: np.ndarray) -> np.ndarray:
        """The float64 A = W_Q W_K^T / sqrt(d_k) of the head's arrays."""
        return head[0] @ head[1].T / math.sqrt(self.d_k)

    def norm(self, head: np.ndarray) -> float:
        """float64 ||A||_2 through the d_k x d_k reduction (nan where the arrays are not finite)."""
        if not np.all(np.isfinite(head)):
            return math.nan
        return thin_norm.product_norm_estimate(head[0], head[1]) / math.sqrt(self.d_k)

    def scaled(self, head: np.ndarray, factor: float) -> np.ndarray:
        """The head with A multiplied by factor."""
        # A = W_Q W_K^T / sqrt(d_k) is bilinear: each factor takes sqrt(c) (sign aside: c > 0 here)
        return math.sqrt(factor) * head

    def fields(self, head: np.ndarray) -> dict:
        """The layer's exact head fields (certify.core.config.Layer)."""
        return {"W_Q": config.exact_matrix(head[0]), "W_K": config.exact_matrix(head[1]), "d_k": self.d_k}

    def probe(self) -> np.ndarray:
        """A head with a = 1, for trying whether a claim applies to the layout."""
        eye = np.eye(self.d, self.d_k) * self.d_k ** 0.25  # W_Q W_K^T / sqrt(d_k): a projection, a = 1
        return np.stack([eye, eye])

    def aligned(self, u: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """The block of W_Q = W_K = u in the first column: A = u u^T / sqrt(d_k), u^T A u = ||A||_2; with w, w in
        the second column too (d_k >= 2): A = (u u^T + w w^T) / sqrt(d_k)."""
        block = np.zeros((2, self.d, self.d_k))
        block[:, :, 0] = u
        if w is not None:
            block[:, :, 1] = w
        return block.ravel()

    def reaches_two_directions(self) -> bool:
        """Whether aligned takes w: a head of rank 2 or more."""
        return self.d_k >= 2

    def text(self, head: np.ndarray, entries) -> str:
        """The head to read, its matrices written by entries(matrix)."""
        return f"W_Q ~ {entries(head[0])}, W_K ~ {entries(head[1])}"

    def describe(self) -> str:
        """The form in words, to follow the layout's description."""
        return f", thin heads W_Q, W_K of {self.d} x {self.d_k}"


def of(d: int, d_k: int | None) -> FullHead | ThinHead:
    """The head form of a layout: full without d_k, thin with it (checked_d_k first)."""
    return FullHead(d) if d_k is None else ThinHead(d, d_k)
