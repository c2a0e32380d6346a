"""Certified statistics of one token configuration X (n x d, tokens as rows): Wu et al.'s Figure 4.

    rank         of the centred configuration X_c = X - 1 xbar^T, at most r = min(n - 1, d) (its
                 rows sum to 0); certified r (for n <= d + 1: the tokens are affinely independent,
                 far from rank collapse) when the lower bound on sigma_min below is > 0 and the
                 independent checker confirms it from a "centred-rank" certificate
    sigma_min    sigma_r(X_c), the smallest singular value X_c can have without losing rank
    stable rank  ||X||_F^2 / ||X||_2^2 of X itself, in [1, rank X]
    mean |cos|   the mean over pairs i < k of |x_i . x_k| / (||x_i|| ||x_k||) (anisotropy)

sigma_r(X_c)^2 is the smallest eigenvalue of a symmetric matrix M, certified from a float64 witness
like certify.core.spectral does for the top:
    n - 1 <= d: K = X_c X_c^T satisfies K 1 = 0 exactly, and on 1^perp its eigenvalues are the
    squared singular values of X_c.  With an exact c >= trace(K) / n, M = K + c 1 1^T has the
    eigenvalues sigma_1^2, ..., sigma_{n-1}^2 and c n >= trace(K) >= sigma_{n-1}^2, so
    lambda_min(M) = sigma_{n-1}^2.
    n - 1 > d: M = X_c^T X_c (d x d), whose eigenvalues are sigma_1^2, ..., sigma_d^2.
For the float64 eigenvectors U of M (nearly orthogonal, first column the smallest), E = U^T M U is
nearly diagonal; with drift = ||U^T U - I||_F < 1 every unit x = U y has
1 / (1 + drift) <= ||y||^2 <= 1 / (1 - drift), so x^T M x = y^T E y >= g ||y||^2 >=
min(g / (1 + drift), g / (1 - drift)) with g = min_i (E_ii - sum_{j != i} |E_ij|) (Gershgorin, E
symmetric).  The Rayleigh quotient u^T M u / u^T u of the first column u bounds it above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import reduce

import flint
import numpy as np
from flint import arb, arb_mat

from certify.core import spectral
from certify.core.numbers import Binary64Matrix, encode_matrix
from certify.engine import certificate


@dataclass(frozen=True)
class ConfigurationStats:
    """The shape of one token configuration X (n tokens): the rank of the centred configuration
    (certified, or the float64 numerical rank), its smallest singular value, the stable rank and the
    mean |cosine| between tokens, as balls (Wu et al., Figure 4)."""

    n: int
    rank_max: int  # min(n - 1, d): the largest rank a centred configuration can have
    rank: int  # of the centred configuration: rank_max when certified, else the float64 numerical rank
    rank_certified: bool  # sigma_min certainly > 0, so rank = rank_max, confirmed by the checker
    sigma_min: arb  # sigma_{rank_max} of the centred configuration
    stable_rank: arb  # ||X||_F^2 / ||X||_2^2
    mean_abs_cos: arb


def smallest_eigenvalue(M: arb_mat, eigenvectors: np.ndarray) -> arb:
    """A ball containing lambda_min of the symmetric M, from float64 eigenvectors (ascending order)."""
    n = M.nrows()
    U = arb_mat(np.asarray(eigenvectors, dtype=np.float64).tolist())
    E = U.transpose() * M * U
    G = U.transpose() * U - arb_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)])
    drift = sum((G[i, j] * G[i, j] for i in range(n) for j in range(n)), arb(0)).nonnegative_part().sqrt()
    u = U * arb_mat(n, 1, [1] + [0] * (n - 1))  # the first column
    rayleigh = (u.transpose() * M * u)[0, 0] / (u.transpose() * u)[0, 0]
    if not drift < 1:
        return arb("-inf").union(rayleigh.upper())
    g = reduce(arb.min, (E[i, i] - sum((abs(E[i, j]) for j in range(n) if j != i), arb(0)) for i in range(n)))
    lower = (g / (1 + drift)).min(g / (1 - drift))
    return lower.lower().union(rayleigh.upper())


def configuration_stats(X: np.ndarray) -> ConfigurationStats:
    """The statistics above for the float64 configuration X, taken as exact (current precision)."""
    n, d = X.shape
    X_ball = arb_mat(np.asarray(X, dtype=np.float64).tolist())
    gram = X_ball * X_ball.transpose()  # K_ik = x_i . x_k
    lam = smallest_eigenvalue(*_rank_matrix(X, X_ball))
    rank_max = min(n - 1, d)
    certified = bool(lam > 0) and _checker_confirms_rank(X, rank_max)
    rank = rank_max if certified else int(np.linalg.matrix_rank(X - X.mean(axis=0)))

    top = spectral.enclose(np.array(X_ball.transpose().tolist(), dtype=object), spectral.witness(X.T))
    frobenius_sq = sum((gram[i, i] for i in range(n)), arb(0))
    cosines = [abs(gram[i, k]) / (gram[i, i] * gram[k, k]).sqrt() for i in range(n) for k in range(i + 1, n)]
    return ConfigurationStats(
        n=n, rank_max=rank_max, rank=rank, rank_certified=certified, sigma_min=lam.nonnegative_part().sqrt(),
        stable_rank=frobenius_sq / (top * top), mean_abs_cos=sum(cosines, arb(0)) / len(cosines),
    )  # fmt: skip


def _checker_confirms_rank(X: np.ndarray, rank: int) -> bool:
    """The independent checker's confirmation that the centred X has this (the largest) rank."""
    claim = f"the centred tokens X - 1 xbar^T of inputs.X have rank {rank} = min(n - 1, d)"
    tokens = {"X": encode_matrix(Binary64Matrix(X))}  # a block beyond 64 numbers, as a head's (certify.studies.heads)
    cert = certificate.named("centred-rank", [claim], "certified", tokens, {}, {}, max(flint.ctx.prec, 53))
    return certificate.confirm(cert).ok


def _rank_matrix(X: np.ndarray, X_ball: arb_mat) -> tuple[arb_mat, np.ndarray]:
    """M with lambda_min(M) = sigma_{min(n-1, d)}(X_c)^2 (module docstring) and its float64 eigenvectors."""
    n, d = X.shape
    X_c = X - X.mean(axis=0)
    centred = _centring(n) * X_ball
    if n - 1 > d:
        M = centred.transpose() * centred
        _, eigenvectors = np.linalg.eigh(X_c.T @ X_c)
        return M, eigenvectors
    K = centred * centred.transpose()
    trace = sum((K[i, i] for i in range(n)), arb(0))
    c = arb((trace / n).upper())  # exact, >= trace(K) / n
    _, eigenvectors = np.linalg.eigh(X_c @ X_c.T + float(c) * np.ones((n, n)))
    return K + arb_mat(n, n, [c] * (n * n)), eigenvectors


def _centring(n: int) -> arb_mat:
    """H = I - 1 1^T / n: H X has the centred rows."""
    return arb_mat(n, n, [(1 if i == j else 0) - arb(1) / n for i in range(n) for j in range(n)])
