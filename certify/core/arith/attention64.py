"""Rigorous enclosures of one attention layer in vectorised binary64, batched over configurations.

The formulas are those of certify/layers.py and certify/quantities.py (tokens are rows; S = Z A Z^T
times the scale, or (Z W_Q + b_Q)(Z W_K + b_K)^T times beta / sqrt(d_k); P = softmax over the
allowed j; the layer output P X, or P X V^T with a value matrix), evaluated in midpoint-radius binary64 (certify/core/arith/
rounding.py) with the proven exp of exp64.py.  Each function returns bounds that contain the exact
value of every configuration, or nan / inf where binary64 cannot say (the caller then cannot
decide).  Valid only under the floating-point model of fpmodel.py.

Products bound their rounding through row norms: |fl(A B) - A B|_ij <= gamma_k |a_i|^T |b_j| + k ETA
<= gamma_k ||a_i|| ||b_j|| + k ETA (Cauchy-Schwarz), and |A_mid| B_rad <= ||a_i|| ||(B_rad)_j||
likewise, so a product costs one BLAS call and O(n d) more work.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from certify.core.arith import exp64
from certify.core.arith.rounding import (ETA, PHI, UNIT_ROUNDOFF, down, float_at_least, float_at_most, gamma,
                                        nonneg_sum_lower, nonneg_sum_upper, sqrt_down, sqrt_up, times_lower,
                                        times_upper, up)


def rounding_radius(c):
    """|z - c| for every real z with fl(z) = c: at most u |z| <= 2u |c|, plus ETA for underflow."""
    return up(np.abs(c) * 2.0**-52 + ETA)


def row_norms_upper(M):
    """Upper bounds of the Euclidean norms of the rows of M (over the last axis), exactly M's rows."""
    k = M.shape[-1]
    factor = float_at_least(1 / (1 - gamma(k)))
    return sqrt_up(up(up((M * M).sum(axis=-1) * factor) + 2 * k * ETA))


def sum_squares_lower(M):
    """Lower bounds of sum_l M_l^2 over the last axis: fl(sum fl(m^2)) <= (1 + gamma_k) sum + k ETA."""
    k = M.shape[-1]
    factor = float_at_most(1 / (1 + gamma(k)))
    return np.maximum(down(down((M * M).sum(axis=-1) - k * ETA) * factor), 0.0)


_OUTER_SLACK = 1 + 2.0**-50  # (1 + 2^-50)(1 - u)^2 >= 1


def outer_upper(a, b, count: int):
    """R with R_ij >= a_i b_j + count ETA for vectors a, b >= 0 (over the last axis), in two
    binary64 operations per entry.

    With a' = up(a (1 + 2^-50)) and R = fl(fl(a'_i b_j) + (count + 1) ETA): fl(z) >= z (1 - u) - ETA/2
    for a product and fl(s) >= s (1 - u) for a sum of nonnegatives, so R >= a' b (1 - u)^2 +
    (count + 1/2)(1 - u) ETA >= a b + count ETA (count <= 2^52)."""
    scaled = up(a * _OUTER_SLACK)
    R = scaled[..., :, None] * b[..., None, :]
    R += (count + 1) * ETA
    return R


def matmul(A, A_rad, B, B_rad):
    """(mid, rad) of A B for midpoint-radius A (..., n, k) and B (..., k, m); rad None is exact.

    |AB - fl(A_mid B_mid)|_ij <= gamma_k ||a_i|| ||b_j|| + k ETA + ||a_i|| ||br_j|| + ||ar_i|| (||b_j|| + ||br_j||)
    (a_i rows of A_mid, b_j columns of B_mid, ar, br those of the radii; Cauchy-Schwarz)."""
    k = A.shape[-1]
    mid = A @ B
    a_norms = row_norms_upper(A)
    b_norms = row_norms_upper(np.swapaxes(B, -1, -2))
    left = up(float_at_least(gamma(k)) * a_norms)
    if A_rad is not None:
        a_rad_norms = row_norms_upper(A_rad)
        left = up(left + a_rad_norms)
    rad = outer_upper(left, b_norms, k)
    if B_rad is not None:
        b_rad_norms = row_norms_upper(np.swapaxes(B_rad, -1, -2))
        right = a_norms if A_rad is None else up(a_norms + a_rad_norms)
        rad = up(rad + outer_upper(right, b_rad_norms, 0))
    return mid, rad


def scale(mid, rad, s_mid, s_rad):
    """(mid, rad) of the elementwise product of a midpoint-radius array by a midpoint-radius scalar
    (per configuration: s_mid, s_rad broadcast against mid); nothing to do for an exact 1."""
    if np.all(s_mid == 1) and np.all(s_rad == 0):
        return mid, rad
    product = mid * s_mid
    r = up(np.abs(s_mid) * rad) if rad is not None else 0.0
    r = up(r + up(s_rad * (np.abs(mid) if rad is None else up(np.abs(mid) + rad))))
    return product, up(r + up(np.abs(product) * PHI + ETA))


def score_scale(beta, d_k):
    """(mid, rad) of beta / sqrt(d_k) (beta alone when d_k is None), per configuration."""
    beta = np.asarray(beta, dtype=np.float64)
    if d_k is None:
        return beta, np.zeros_like(beta)
    root = np.sqrt(np.float64(d_k))
    lo = np.minimum(down(beta / up(root)), down(beta / down(root)))
    hi = np.maximum(up(beta / up(root)), up(beta / down(root)))
    mid = (lo + hi) * 0.5
    return mid, up(np.maximum(up(hi - mid), up(mid - lo)))


def scores(X, *, A=None, W_Q=None, W_K=None, b_Q=None, b_K=None, beta=1.0, d_k=None):
    """(mid, rad) of the scores S, shape (b, n, n), from exact binary64 inputs."""
    Xt = np.swapaxes(X, -1, -2)
    if A is not None:
        query, query_rad = matmul(X, None, A, None)
        G, G_rad = matmul(query, query_rad, Xt, None)
    else:
        query, query_rad = matmul(X, None, W_Q, None)
        key, key_rad = matmul(X, None, W_K, None)
        if b_Q is not None:
            query = query + b_Q[:, None, :]
            query_rad = up(query_rad + rounding_radius(query))
        if b_K is not None:
            key = key + b_K[:, None, :]
            key_rad = up(key_rad + rounding_radius(key))
        G, G_rad = matmul(query, query_rad, np.swapaxes(key, -1, -2), np.swapaxes(key_rad, -1, -2))
    s_mid, s_rad = score_scale(beta, d_k)
    return scale(G, G_rad, s_mid[..., None, None], s_rad[..., None, None])


def softmax_bounds(S, S_rad, mask=None):
    """(P_lo, P_hi) with P_lo <= P <= P_hi for every S within S_rad of the midpoint S.

    The row maximum m_i of the midpoints is subtracted (softmax does not see the shift); t =
    fl(S - m_i) is within delta_i = max_j S_rad_ij + 2u max_j |t_ij| + ETA of the exact S - m_i,
    so the weight exp(S - m_i) lies in [exp_lo(t) (1 - delta_i), exp_hi(t) (1 + 2 delta_i)]
    (e^-x >= 1 - x, and e^x <= 1 + 2x for 0 <= x <= 1; no bound beyond).  Then
    P_ij >= w_lo_ij / sum_l w_hi_il and P_ij <= w_hi_ij / sum_l w_lo_il.  Entries off the mask are 0.
    """
    if mask is None:
        shift = np.max(S, axis=-1, keepdims=True)
    else:
        allowed = np.asarray(mask, dtype=bool)
        shift = np.max(np.where(allowed, S, -np.inf), axis=-1, keepdims=True)
    t = S - shift
    delta = up(up(np.max(S_rad, axis=-1, keepdims=True) + np.max(np.abs(t), axis=-1, keepdims=True) * 2.0**-52) + ETA)
    delta = np.where(delta <= 1.0, delta, np.inf)  # no bound: [0, inf], so nothing is decided
    exp_lo, exp_hi = exp64.exp_bounds(t)
    w_lo = times_lower(exp_lo, np.maximum(down(1.0 - delta), 0.0))
    w_hi = times_upper(exp_hi, up(1.0 + 2 * delta))
    if mask is not None:
        w_lo *= allowed
        w_hi = np.where(allowed, w_hi, 0.0)
    P_lo = times_lower(w_lo, down(1.0 / nonneg_sum_upper(w_hi, keepdims=True)))
    P_hi = np.minimum(times_upper(w_hi, up(1.0 / nonneg_sum_lower(w_lo, keepdims=True))), 1.0)
    return P_lo, P_hi


def centred(X):
    """(mid, rad) of X - 1 c^T for c the binary64 mean token: D(P X) = D(P (X - 1 c^T)) exactly,
    as the rows of P sum to 1, and the centred tokens are smaller."""
    mid = X - X.mean(axis=-2, keepdims=True)
    return mid, rounding_radius(mid)


def output_diameter_upper(P_lo, P_hi, X, V=None):
    """An upper bound of D(P X) (of D(P X V^T) with a value matrix V) for every P in [P_lo, P_hi]
    whose rows sum to 1.

    Y = P (X - 1 c^T) (V^T) = Y_mid + E with Y_mid = fl(P_mid Xc) (then times V^T):
    - without V, ||E_i|| <= (gamma_n ||p_i|| + ||pr_i||) F + (||p_i|| + ||pr_i||) F_r + n ETA sqrt(d),
      with p_i, pr_i the rows of P_mid and P_rad, F >= ||Xc||_F and F_r >= ||Xc_rad||_F (the
      matmul bound of each entry, then the norm over the columns); with V, the matmul radii;
    - D(Y) <= D(Y_mid) + 2 max_i ||E_i||;
    - D(Y_mid)^2 = max_ik ||y_i||^2 + ||y_k||^2 - 2 G_ik with G = fl(Y_mid Y_mid^T) within
      gamma_d N^2 + d ETA of the exact Gram matrix (N >= max_i ||y_i||); with s_i >= ||y_i||^2,
      c_ik = fl(fl(s_i + s_k) - 2 G_ik) is within 2u (s_i + s_k) + 2u |G_ik| <= 6.1 u N2 + ETA
      of s_i + s_k - 2 G_ik (N2 >= max s_i >= N^2 and |G_ik| <= (1 + gamma_d) N^2 + d ETA).
    """
    n, d = X.shape[-2], X.shape[-1]
    P_mid = (P_lo + P_hi) * 0.5
    P_rad = up(np.maximum(up(P_hi - P_mid), up(P_mid - P_lo)))
    Xc, Xc_rad = centred(X)
    if V is None:
        Y = P_mid @ Xc
        frobenius = row_norms_upper(row_norms_upper(Xc))[..., None]
        frobenius_rad = row_norms_upper(row_norms_upper(Xc_rad))[..., None]
        p_norms, p_rad_norms = row_norms_upper(P_mid), row_norms_upper(P_rad)
        error_rows = up(up(up(float_at_least(gamma(n)) * p_norms) + p_rad_norms) * frobenius)
        error_rows = up(error_rows + up(up(p_norms + p_rad_norms) * frobenius_rad))
        error = up(up(2 * np.max(error_rows, axis=-1)) + 2 * n * ETA * np.sqrt(d) * 1.01)
    else:
        Y, Y_rad = matmul(*matmul(P_mid, P_rad, Xc, Xc_rad), np.swapaxes(V, -1, -2), None)
        error = up(2 * np.max(row_norms_upper(Y_rad), axis=-1))

    G = Y @ np.swapaxes(Y, -1, -2)
    squares = up(row_norms_upper(Y) ** 2)  # s_i >= ||y_i||^2 (the norm bound squared, rounded up)
    top = np.max(squares, axis=-1)         # N2 >= N^2
    centre_sum = squares[..., :, None] + squares[..., None, :]
    centre_sum -= 2 * G
    largest = np.max(centre_sum, axis=(-2, -1))
    gram_error = up(up(float_at_least(gamma(Y.shape[-1])) * top) + Y.shape[-1] * ETA)
    slack = up(up(6.1 * UNIT_ROUNDOFF * top) + up(2 * gram_error) + ETA)
    return up(sqrt_up(np.maximum(up(largest + slack), 0.0)) + error)


def diameter_lower(X):
    """A lower bound of D(X) = max_ik ||x_i - x_k||: the farthest pair by binary64 Gram distances,
    recomputed directly (any pair's distance is at most D).

    With e = fl(x_i - x_k): |x_i - x_k| >= |e| / (1 + u) elementwise, and sum e^2 >=
    (fl(sum fl(e^2)) - d ETA) / (1 + gamma_d)."""
    G = X @ np.swapaxes(X, -1, -2)
    diag = np.diagonal(G, axis1=-2, axis2=-1)
    squared = diag[..., :, None] + diag[..., None, :] - 2 * G
    n = X.shape[-2]
    flat = np.argmax(squared.reshape(squared.shape[:-2] + (n * n,)), axis=-1)
    i, k = np.divmod(flat, n)
    batch = np.arange(X.shape[0])
    e = X[batch, i] - X[batch, k]
    u = Fraction(2) ** -53
    factor = float_at_most(1 / (1 + u) ** 2)
    return sqrt_down(down(sum_squares_lower(e) * factor))


def _top_right_singular_vector(A=None, W_Q=None, W_K=None):
    """A binary64 approximation of the top right singular vector of A or of W_Q W_K^T, batched.

    For A: one step of inverse iteration on A^T A shifted just past its top eigenvalue (a full SVD
    costs ten times more); for the thin W_Q, W_K: W_Q W_K^T = Q_Q (R_Q R_K^T) Q_K^T by
    QR, and the SVD of the d_k x d_k core.  Only the quality of the witness, never the bound,
    depends on this."""
    if A is not None:
        gram = np.swapaxes(A, -1, -2) @ A
        top = np.linalg.eigvalsh(gram)[..., -1]  # the top singular value squared
        shift = (np.abs(top) * (1 + 1e-9) + 1e-300)[..., None, None] * np.eye(A.shape[-1])
        try:
            v = np.linalg.solve(gram - shift, np.ones(A.shape[:-1])[..., None])[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular shift: the SVD's vector instead
            v = np.linalg.svd(A)[2][..., 0, :]
        return v / np.linalg.norm(v, axis=-1, keepdims=True)
    Q_Q, R_Q = np.linalg.qr(W_Q)
    Q_K, R_K = np.linalg.qr(W_K)
    core = np.linalg.svd(R_Q @ np.swapaxes(R_K, -1, -2))[2][..., 0, :]
    return (Q_K @ core[..., None])[..., 0]


def norm_lower(*, A=None, W_Q=None, W_K=None, beta=1.0, d_k=None):
    """A lower bound of a = ||M||_2 for M = scale * A or scale * W_Q W_K^T, per configuration:
    ||M v|| / ||v|| for a binary64 witness v, recomputed with rigorous rounding."""
    if A is not None:
        v = _top_right_singular_vector(A=A)
        w, w_rad = matmul(A, None, v[..., None], None)
    else:
        v = _top_right_singular_vector(W_Q=W_Q, W_K=W_K)
        inner, inner_rad = matmul(np.swapaxes(W_K, -1, -2), None, v[..., None], None)
        w, w_rad = matmul(W_Q, None, inner, inner_rad)
    w, w_rad = w[..., 0], w_rad[..., 0]
    image = np.maximum(down(sqrt_down(sum_squares_lower(w)) - row_norms_upper(w_rad)), 0.0)
    ratio = np.maximum(down(image / row_norms_upper(v)), 0.0)
    s_mid, s_rad = score_scale(beta, d_k)
    return np.maximum(down(ratio * down(np.abs(s_mid) - s_rad)), 0.0)
