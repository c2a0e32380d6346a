"""Quantities of a token configuration and an attention matrix, generic over the arithmetic.

Definitions are those of shared/CLAIMS.md ("Quantities").
"""

from __future__ import annotations

import numpy as np


def pairwise_sq_distances(X):
    diffs = X[:, None, :] - X[None, :, :]
    return (diffs * diffs).sum(axis=2)


def diameter(ar, X):
    """D(X) = max_{i,k} ||x_i - x_k||_2."""
    n = X.shape[0]
    sq = pairwise_sq_distances(X)
    upper = [sq[i, k] for i in range(n) for k in range(i + 1, n)]
    return ar.sqrt_nonneg(ar.maximum(np.array(upper, dtype=sq.dtype)))


def consensus_distance(ar, X):
    """mu(X) = ||X - 1 xbar^T||_F, xbar the mean token (Wu et al.)."""
    centred = X - X.sum(axis=0) / X.shape[0]
    return ar.sqrt_nonneg((centred * centred).sum())


def dobrushin(ar, P):
    """tau(P) = 1 - min_{i,k} sum_j min(P_ij, P_kj) (the Dobrushin ergodicity coefficient)."""
    n = P.shape[0]
    overlaps = [ar.pairwise_min(P[i], P[k]).sum() for i in range(n) for k in range(i + 1, n)]
    return 1 - ar.minimum(np.array(overlaps, dtype=P.dtype))
