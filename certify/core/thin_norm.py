"""A certified spectral norm of a thin product L R^T (L, R in R^{d x k}, k << d) through k x k factors.

A head's query-key matrix A_h = W_Q W_K^T / sqrt(d_k) and its value-output map V_h = W_O W_V are
d x d matrices of rank <= d_k (d = 384, d_k = 32 for MiniLM).  Enclosing ||.||_2 of the d x d
ball matrix costs d^3 ball operations per head; the reduction below costs d k^2 + k^3.

Reduction (exact, no approximation enters the value):
    Let G_L = L^T L and G_R = R^T R (k x k).  When R has full column rank, G_R = C^T C with C
    upper triangular and invertible (Cholesky), and Q = R C^{-1} has orthonormal columns:
    Q^T Q = C^{-T} G_R C^{-1} = I.  Then R^T = C^T Q^T and
        L R^T = (L C^T) Q^T,
    and Q^T maps the unit ball of R^d onto the unit ball of R^k, so ||L R^T||_2 = ||L C^T||_2 and
        ||L R^T||_2^2 = ||(L C^T)^T (L C^T)||_2 = ||C G_L C^T||_2,
    the norm (= largest eigenvalue) of a symmetric positive semidefinite k x k matrix.
    (Equivalently ||L R^T||_2^2 = lambda_max(G_L G_R), the nonzero spectrum of L R^T R L^T.)

In ball arithmetic: G_L and G_R are computed with arb_mat from the float64 entries taken as exact;
the Cholesky recurrence below is evaluated in arb, so C encloses the exact factor provided every
pivot is certainly positive (checked; otherwise G_R may be singular and the reduction does not
apply).  certify.core.spectral.enclose then bounds ||C G_L C^T||_2 for every matrix in the ball, hence
for the exact one, and the square root is monotone.  When a pivot is not certainly positive
(rank-deficient R, e.g. a head whose weights are zero) the d x d product is enclosed directly.

The float64 estimate for screening uses the same reduction through QR: with L = Q_1 R_1 and
R = Q_2 R_2 (reduced QR, orthonormal columns), ||L R^T||_2 = ||R_1 R_2^T||_2, a k x k problem.
"""

from __future__ import annotations

import numpy as np
from flint import arb, arb_mat

from certify.core import spectral


def ball_matrix(values: np.ndarray) -> arb_mat:
    """The float64 matrix as an arb_mat of exact entries (every binary64 value is exact in arb)."""
    return arb_mat(np.asarray(values, dtype=np.float64).tolist())


_to_arb = np.frompyfunc(arb, 1, 1)


def ball_array(values: np.ndarray) -> np.ndarray:
    """float64 entries as exact arb balls in an object array (the BALL backend's arrays)."""
    return _to_arb(np.asarray(values, dtype=np.float64))


def product_norm_estimate(L: np.ndarray, R: np.ndarray) -> float:
    """float64 ||L R^T||_2 through the reduced QR factors (module docstring): screening only."""
    return float(np.linalg.norm(np.linalg.qr(L, mode="r") @ np.linalg.qr(R, mode="r").T, 2))


# The k x k route is priced (certify.core.limits.norm_count) only for an R it will take: the float64 Gram R^T R
# factors with every squared pivot at least 2^-PIVOT_MARGIN of its largest diagonal entry, so that the ball
# Cholesky's pivots (errors of about k 2^-53 of that entry at 53 bits, k <= 2^10) are certainly positive too.
# Elsewhere the d x d route runs (4 d^3 where the reduction costs 3 d^2 k + 8 k^3), and pricing it as thin let
# `certify check` admit a 256 x 1024 head with a zero column in W_K, work far beyond the limits and end undecided,
# the checker refusing its certificate.
PIVOT_MARGIN = 30


def reduces(R) -> bool:
    """Whether the k x k reduction certainly applies to R (d x k: a binary64 array, or rows of Fractions, scaled
    by a power of two into range first): float64 finds R^T R well enough conditioned (PIVOT_MARGIN)."""
    if not isinstance(R, np.ndarray):
        top = max((x.numerator.bit_length() - x.denominator.bit_length() for row in R for x in row if x), default=0)
        R = np.array([[float(x / 2 ** top) if top >= 0 else float(x * 2 ** -top) for x in row] for row in R])
    largest = float(np.abs(R).max(initial=0.0))
    if not 0 < largest < np.inf:
        return False
    # entries at most 1: no overflow, the pivots' ratios unchanged; products below binary64's range round to 0, a loss
    # as good as any here, and no error whatever the caller's np.seterr (all="raise" raised FloatingPointError)
    with np.errstate(under="ignore"):
        G = (R / largest).T @ (R / largest)
    try:
        C = np.linalg.cholesky(G)
    except np.linalg.LinAlgError:
        return False
    return bool(np.min(np.diag(C)) ** 2 >= 2.0 ** -PIVOT_MARGIN * np.max(np.diag(G)))


def reduced_witness(L: np.ndarray, R: np.ndarray) -> spectral.NormWitness | None:
    """The witness for the k x k matrix C G_L C^T of the reduction, from one float64 Cholesky and one
    k x k SVD; its estimate is the float64 ||L R^T||_2.  None when float64 finds R rank-deficient."""
    try:
        C = np.linalg.cholesky(R.T @ R).T
    except np.linalg.LinAlgError:
        return None
    reduced = spectral.witness(C @ (L.T @ L) @ C.T)
    return spectral.NormWitness(basis=reduced.basis, top=reduced.top, estimate=float(np.sqrt(reduced.estimate)))


# The float64 reduction C G_L C^T is of the order of |L|^2 |R|^2 d^2: factors whose largest entry lies
# within [2^-THIN_RANGE, 2^THIN_RANGE] keep it finite and normal.
THIN_RANGE = 200


def reduced_witness_of_balls(L: np.ndarray, R: np.ndarray) -> spectral.NormWitness | None:
    """reduced_witness of the binary64 midpoints of two ball matrices (object arrays of arb): the
    float64 factors themselves for binary64 entries, each scaled by a power of two into range where
    its largest entry lies outside [2^-THIN_RANGE, 2^THIN_RANGE] (spectral.midpoints; powers of two
    scale C G_L C^T and leave its singular vectors alone).  None when float64 finds R rank-deficient."""
    return reduced_witness(spectral.midpoints(L, THIN_RANGE), spectral.midpoints(R, THIN_RANGE))


def cholesky_upper(G: arb_mat) -> arb_mat | None:
    """C upper triangular with G = C^T C enclosed, or None when a pivot is not certainly > 0."""
    k = G.nrows()
    entries = G.tolist()
    rows = [[arb(0)] * k for _ in range(k)]  # C's rows as lists: indexing an arb_mat costs more than the product
    for j in range(k):
        pivot = entries[j][j] - sum((rows[i][j] * rows[i][j] for i in range(j)), arb(0))
        if not pivot > 0:
            return None
        rows[j][j] = pivot.sqrt()
        for col in range(j + 1, k):
            rows[j][col] = (entries[j][col] - sum((rows[i][j] * rows[i][col] for i in range(j)), arb(0))) / rows[j][j]
    return arb_mat(rows)


def reduced_matrix(L: arb_mat, R: arb_mat) -> arb_mat | None:
    """The k x k matrix C G_L C^T of the reduction, whose norm is ||L R^T||_2^2, or None when a Cholesky pivot of
    R^T R is not certainly positive (the reduction does not apply at this precision)."""
    C = cholesky_upper(R.transpose() * R)
    return None if C is None else C * (L.transpose() * L) * C.transpose()


def product_norm(L: arb_mat, R: arb_mat) -> arb:
    """A ball containing ||L R^T||_2 for L, R of shape d x k (current flint precision)."""
    return product_norm_witnessed(L, R)[0]


def product_norm_witnessed(L: arb_mat, R: arb_mat) -> tuple[arb, str, spectral.NormWitness]:
    """product_norm, with the route ("thin": the k x k matrix C G_L C^T, or "direct": L R^T) and the
    witness of the matrix whose norm was enclosed, so that a checker can follow."""
    C = cholesky_upper(R.transpose() * R)
    if C is None:
        norm, witness = enclose_from_midpoints(L * R.transpose())
        return norm, "direct", witness
    norm, witness = enclose_from_midpoints(C * (L.transpose() * L) * C.transpose())
    return norm.nonnegative_part().sqrt(), "thin", witness


def midpoint_witness(M: arb_mat) -> spectral.NormWitness:
    """The witness of M from the float64 SVD of its midpoints."""
    return spectral.witness(np.array([[float(x.mid()) for x in row] for row in M.tolist()]))


def enclose_from_midpoints(M: arb_mat) -> tuple[arb, spectral.NormWitness]:
    """spectral.enclose with the witness taken from the midpoints of M."""
    witness = midpoint_witness(M)
    return spectral.enclose(M, witness), witness
