"""The pairs i < k of n tokens, and the parts of a Gram matrix that the pairwise distances read.

||x_i - x_k||^2 = G_ii + G_kk - 2 G_ik (certify.core.quantities) reads G's diagonal and the entries
above it; a backend returns them as two arrays (protocol.Arithmetic.centred_gram_pairs), so that
Ball can read them from its arb_mat without making the n x n array of balls.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=64)
def above_diagonal(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs i < k of n tokens, row by row (numpy's triu_indices)."""
    return np.triu_indices(n, 1)


@functools.lru_cache(maxsize=64)
def above_diagonal_positions(n: int) -> tuple[tuple[int, int], ...]:
    """The same pairs as (i, k) tuples, in the same order, for a matrix indexed entry by entry."""
    i, k = above_diagonal(n)
    return tuple(zip(i.tolist(), k.tolist()))


@functools.lru_cache(maxsize=64)
def diagonal_positions(n: int) -> tuple[tuple[int, int], ...]:
    """(i, i) for i < n."""
    return tuple((i, i) for i in range(n))


def diagonal_and_above(G) -> tuple:
    """G_ii and G_ik for i < k of the last two axes (leading axes kept), as arrays of G's own kind."""
    i, k = above_diagonal(G.shape[-1])
    return np.diagonal(G, axis1=-2, axis2=-1), G[..., i, k]
