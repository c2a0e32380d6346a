"""Quantities of a token configuration and an attention matrix, generic over the arithmetic.

Definitions are those of docs/claims.md ("Quantities").  Tokens are the last two axes, so a
float64 batch of configurations (batch, n, d) gives one value per configuration.
"""

from __future__ import annotations

from certify.core.arith.pairs import blocks_of


def pairwise_sq_distances(ar, X):
    """||x_i - x_k||^2 for i < k (the last axis), from the Gram matrix of the centred tokens.

    With Y = X - 1 c^T for an exact vector c and G = Y Y^T, ||x_i - x_k||^2 = G_ii + G_kk - 2 G_ik
    (distances do not see c).  c is (the midpoint of) token 0, so every |y_i| <= D(X) and the sum
    cancels no more than about log2(d) bits of D^2 however close the tokens are to consensus; one
    matrix product replaces the n^2 d pair differences (the backend's pairwise_sq_distances, by
    certify.core.arith.pairs.squared_distance).
    """
    return ar.pairwise_sq_distances(X)


def diameter(ar, X):
    """D(X) = max_{i,k} ||x_i - x_k||_2."""
    return ar.sqrt_nonneg(ar.maximum(pairwise_sq_distances(ar, X)))


def consensus_distance(ar, X):
    """mu(X) = ||X - 1 xbar^T||_F, xbar the mean token (Wu et al.)."""
    centred = X - X.sum(axis=-2, keepdims=True) / X.shape[-2]
    return ar.sqrt_nonneg((centred * centred).sum(axis=(-2, -1)))


# Entries of the pairwise minima formed at once by dobrushin (per configuration): all n^3/2 of them at n = 256
# were 8.4 million balls, 1 GB; in blocks of pairs the sums are the same and memory stays near that of P.
PAIR_BLOCK = 1 << 20


def dobrushin(ar, P):
    """tau(P) = 1 - min_{i,k} sum_j min(P_ij, P_kj) (the Dobrushin ergodicity coefficient): the sums over j for the
    pairs that can hold the least (ar.overlap_pairs: every pair, or of balls those a binary64 screen keeps,
    certify.core.arith.overlaps), in blocks of about PAIR_BLOCK entries, the minimum over the blocks' minima."""
    i, k = ar.overlap_pairs(P)
    blocks = [ar.minimum(ar.pairwise_min(P[..., a, :], P[..., b, :]).sum(axis=-1))
              for a, b in blocks_of(i, k, P.shape[-1], PAIR_BLOCK)]
    return 1 - (blocks[0] if len(blocks) == 1 else ar.minimum(ar.stack(blocks)))  # one block for n up to about 128
