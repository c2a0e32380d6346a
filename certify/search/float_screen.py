"""float64 screening of many pure-attention layers at once (numpy, batched over configurations).

Untrusted and never a verdict: this is the fast pass of a campaign (the float64 value of
L = a D^2, and whether float64 already loses the gap exp(-L)), and the plain-float64 baseline
the throughput benchmark compares the certified evaluation with.  It is the formula of
certify.layers for one head X' = P X with P = softmax_rows(X A X^T), written over a leading
batch axis; the quantities are those of certify.primitives, for one layer.
"""

from __future__ import annotations

import numpy as np

from certify import claims, expr
from certify.arith import Float64
from certify.primitives import PRIMITIVES


class _BatchedFloat64(Float64):
    """float64 on arrays of shape (batch,): min/max reduce across arguments, never across the batch."""

    @staticmethod
    def stack(values):
        return np.stack(np.broadcast_arrays(*values))

    @staticmethod
    def maximum(x):
        return np.max(x, axis=0)

    @staticmethod
    def minimum(x):
        return np.min(x, axis=0)


BATCHED = _BatchedFloat64()


def _diameter(X: np.ndarray) -> np.ndarray:
    diffs = X[:, :, None, :] - X[:, None, :, :]
    return np.sqrt((diffs * diffs).sum(axis=3).max(axis=(1, 2)))


def layer_quantities(X: np.ndarray, A: np.ndarray) -> dict[str, np.ndarray]:
    """D, a, gap = exp(-a D^2), L = a D^2, tau, D_out for X' = P X; X is (batch, n, d), A (batch, d, d)."""
    batch, n, d = X.shape
    D = _diameter(X)
    a = np.linalg.svd(A, compute_uv=False)[:, 0]
    S = X @ A @ X.swapaxes(1, 2)
    weights = np.exp(S - S.max(axis=2, keepdims=True))
    P = weights / weights.sum(axis=2, keepdims=True)
    D_out = _diameter(P @ X)
    overlaps = np.minimum(P[:, :, None, :], P[:, None, :, :]).sum(axis=3)
    upper_i, upper_k = np.triu_indices(n, 1)
    tau = 1 - overlaps[:, upper_i, upper_k].min(axis=1)
    L = a * D * D
    return {"D": D, "D_0": D, "a": a, "L": L, "gap": np.exp(-L), "tau": tau, "D_out": D_out, "D_PX": D_out,
            "n": np.full(batch, float(n)), "d": np.full(batch, float(d))}


def inequalities(claim_id: str | None, bound: str | None) -> list[tuple[str, str]]:
    """The (lhs, rhs) expressions a campaign compares: a claim's, or D_out <= bound."""
    if bound is not None:
        return [("D_out", bound)]
    return [(q.lhs, q.rhs) for q in claims.get(claim_id).inequalities]


def sides(pairs: list[tuple[str, str]], quantities: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """float64 lhs and rhs of each inequality, per configuration (one layer, so a stack claim's
    composed rhs is its rhs at D_0)."""
    names = set(PRIMITIVES)
    return [(expr.parse(lhs, names).evaluate(BATCHED, quantities), expr.parse(rhs, names).evaluate(BATCHED, quantities))
            for lhs, rhs in pairs]
