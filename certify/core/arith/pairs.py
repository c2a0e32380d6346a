"""The pairs i < k of n tokens, and the squared distances of the pairs from a Gram matrix.

||x_i - x_k||^2 = G_ii + G_kk - 2 G_ik (squared_distance) reads G's diagonal and the entries above
it: float64 and tier 3 on arrays over the pairs (squared_distances), Ball pair by pair from its
arb_mat (protocol.Arithmetic.pairwise_sq_distances), without the n x n array of balls.
"""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=64)
def above_diagonal(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The index pairs i < k of n tokens, row by row (numpy's triu_indices)."""
    return np.triu_indices(n, 1)


def blocks_of(i: np.ndarray, k: np.ndarray, width: int, entries: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The pairs (i, k) in consecutive blocks of about `entries` entries of rows `width` wide: a reduction over the
    pairs formed block by block holds one block's rows at a time, not n^2 / 2 of them."""
    step = max(1, entries // max(width, 1))
    return [(i[s:s + step], k[s:s + step]) for s in range(0, len(i), step)]


def all_pairs(P: np.ndarray, *others) -> tuple[np.ndarray, np.ndarray]:
    """Every pair i < k of the rows of P (the last two axes), whatever the other matrices: the overlap and difference
    pairs of an arithmetic without a screen."""
    return above_diagonal(P.shape[-2])


@functools.lru_cache(maxsize=64)
def above_diagonal_positions(n: int) -> tuple[tuple[int, int], ...]:
    """The same pairs as (i, k) tuples, in the same order, for a matrix indexed entry by entry."""
    i, k = above_diagonal(n)
    return tuple(zip(i.tolist(), k.tolist()))


@functools.lru_cache(maxsize=64)
def diagonal_positions(n: int) -> tuple[tuple[int, int], ...]:
    """(i, i) for i < n."""
    return tuple((i, i) for i in range(n))


def squared_distance(g_i, g_k, h):
    """||x_i - x_k||^2 = G_ii + G_kk - 2 G_ik from a Gram matrix G = Y Y^T of the tokens translated by an
    exact vector (Y = X - 1 c^T: distances do not see c); of one pair's numbers or of arrays over the pairs."""
    return g_i + g_k - 2 * h


def squared_distances(G):
    """squared_distance of every pair i < k of the last two axes of G (leading axes kept), a last axis
    in the order of above_diagonal, on arrays of G's own kind."""
    i, k = above_diagonal(G.shape[-1])
    g = np.diagonal(G, axis1=-2, axis2=-1)
    return squared_distance(g[..., i], g[..., k], G[..., i, k])
