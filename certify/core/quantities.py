"""Quantities of a token configuration and an attention matrix, generic over the arithmetic.

Definitions are those of shared/CLAIMS.md ("Quantities").  Tokens are the last two axes, so a
float64 batch of configurations (batch, n, d) gives one value per configuration.
"""

from __future__ import annotations

import numpy as np


def pairwise_sq_distances(X):
    diffs = X[..., :, None, :] - X[..., None, :, :]
    return (diffs * diffs).sum(axis=-1)


def diameter(ar, X):
    """D(X) = max_{i,k} ||x_i - x_k||_2."""
    i, k = np.triu_indices(X.shape[-2], 1)
    return ar.sqrt_nonneg(ar.maximum(pairwise_sq_distances(X)[..., i, k]))


def consensus_distance(ar, X):
    """mu(X) = ||X - 1 xbar^T||_F, xbar the mean token (Wu et al.)."""
    centred = X - X.sum(axis=-2, keepdims=True) / X.shape[-2]
    return ar.sqrt_nonneg((centred * centred).sum(axis=(-2, -1)))


def dobrushin(ar, P):
    """tau(P) = 1 - min_{i,k} sum_j min(P_ij, P_kj) (the Dobrushin ergodicity coefficient)."""
    i, k = np.triu_indices(P.shape[-2], 1)
    return 1 - ar.minimum(ar.pairwise_min(P[..., i, :], P[..., k, :]).sum(axis=-1))
