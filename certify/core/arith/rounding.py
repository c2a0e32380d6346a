"""Outward rounding and a-priori error bounds in round-to-nearest binary64, vectorised with numpy.

The floating-point model (IEEE binary64, round to nearest, gradual underflow, BLAS dot products
as sequences of correctly rounded operations in any order, with or without FMA) is checked at
start-up by certify/core/arith/fpmodel.py; nothing here is valid without it.

- up(c), down(c): the arithmetic successor and predecessor of Rump, Zimmermann, Boldo and
  Melquiond (BIT 49, 2009, Algorithm 2): c + (|c| PHI + ETA) with PHI = u (1 + 2u), ETA = 2^-1074,
  evaluated in rounding to nearest, is at least succ(c).  When c = fl(z) is the rounded value of
  any real z (a sum, product, quotient or square root of binary64 numbers), pred(c) <= z <= succ(c),
  so down(c) <= z <= up(c).  inf stays inf; up(-inf), down(inf) are nan ("cannot decide").
- gamma(k) = k u / (1 - k u): a dot product of length k computed in any order, with or without
  FMA, errs by at most gamma(k) |a|^T |b| + k ETA (Higham, Accuracy and Stability of Numerical
  Algorithms, 2nd ed., section 3.1 and 3.4; each product with underflow is a b (1 + d) + e with
  |d| <= u, |e| <= ETA / 2, additions are exact in the subnormals), plus a correction for the
  bound |a|^T |b| being itself computed: see product_error.
- Midpoint-radius matrices: a pair (mid, rad) stands for every matrix M with |M - mid| <= rad
  elementwise; rad None means exact.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

UNIT_ROUNDOFF = 2.0**-53
PHI = 2.0**-53 + 2.0**-105  # u (1 + 2u), exactly representable
ETA = 2.0**-1074


def up(c):
    """An upper bound of the real number that c is the round-to-nearest value of."""
    return c + (np.abs(c) * PHI + ETA)


def down(c):
    """A lower bound of the real number that c is the round-to-nearest value of."""
    return c - (np.abs(c) * PHI + ETA)


def sqrt_up(x):
    return up(np.sqrt(x))


def sqrt_down(x):
    """A lower bound of sqrt(x) for x >= 0 (0 where x <= 0)."""
    return np.maximum(down(np.sqrt(np.maximum(x, 0.0))), 0.0)


def float_at_least(value: Fraction) -> float:
    """The smallest binary64 number >= value (value well inside the normal range)."""
    candidate = float(value)
    return candidate if Fraction(candidate) >= value else float(np.nextafter(candidate, np.inf))


def float_at_most(value: Fraction) -> float:
    candidate = float(value)
    return candidate if Fraction(candidate) <= value else float(np.nextafter(candidate, -np.inf))


def gamma(k: int) -> Fraction:
    """gamma_k = k u / (1 - k u), exact (k u < 1)."""
    ku = k * Fraction(UNIT_ROUNDOFF)
    if ku >= Fraction(1, 2):
        raise ValueError(f"dot products of length {k} are beyond the a-priori bounds")
    return ku / (1 - ku)


def product_error(abs_product: np.ndarray, k: int) -> np.ndarray:
    """An upper bound of |fl(A B) - A B| elementwise, given abs_product = fl(|A| |B|) and the
    inner dimension k.

    With T = |A| |B| exact: |fl(AB) - AB| <= g T + k ETA and |abs_product - T| <= g T + k ETA
    (g = gamma_k), so T <= (abs_product + k ETA) / (1 - g) and the error is at most
    g / (1 - g) abs_product + k ETA / (1 - g) <= g / (1 - g) abs_product + 2 k ETA.
    """
    g = gamma(k)
    factor = float_at_least(g / (1 - g))
    return up(up(abs_product * factor) + 2 * k * ETA)


def nonneg_product_upper(M: np.ndarray, N: np.ndarray) -> np.ndarray:
    """An upper bound of M @ N elementwise for M, N >= 0 (T <= (fl(MN) + k ETA) / (1 - gamma_k))."""
    k = M.shape[-1]
    factor = float_at_least(1 / (1 - gamma(k)))
    return up(up((M @ N) * factor) + 2 * k * ETA)


def nonneg_sum_upper(M: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """An upper bound of the sum of M >= 0 along axis: additions are exact in the subnormals,
    so fl(sum) >= (1 - gamma_{k-1}) sum in any order."""
    k = M.shape[axis]
    factor = float_at_least(1 / (1 - gamma(max(k - 1, 1))))
    return up(M.sum(axis=axis, keepdims=keepdims) * factor)


def nonneg_sum_lower(M: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """A lower bound of the sum of M >= 0 along axis (fl(sum) <= (1 + gamma_{k-1}) sum)."""
    k = M.shape[axis]
    factor = float_at_most(1 / (1 + gamma(max(k - 1, 1))))
    return np.maximum(down(M.sum(axis=axis, keepdims=keepdims) * factor), 0.0)


def matmul(A, A_rad, B, B_rad):
    """(mid, rad) of the product of two midpoint-radius matrices (radius None: exact).

    |A B - A_mid B_mid| <= |A_mid| B_rad + A_rad (|B_mid| + B_rad), plus the rounding of A_mid B_mid.
    """
    k = A.shape[-1]
    mid = A @ B
    abs_A, abs_B = np.abs(A), np.abs(B)
    rad = product_error(abs_A @ abs_B, k)
    if B_rad is not None:
        rad = up(rad + nonneg_product_upper(abs_A, B_rad))
    if A_rad is not None:
        rad = up(rad + nonneg_product_upper(A_rad, abs_B if B_rad is None else up(abs_B + B_rad)))
    return mid, rad
