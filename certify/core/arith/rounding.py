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
  Algorithms, 2nd ed., sections 3.1 and 3.4; each product with underflow is a b (1 + d) + e with
  |d| <= u, |e| <= ETA / 2, and additions are exact in the subnormals).  Sums of nonnegative
  terms (no products, so no underflow error) are bounded above by nonneg_sum_upper.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

# Made when the module is loaded, exactly (ldexp, fromhex): 2.0**k is folded into the bytecode, where compiled under
# flush-to-zero 2.0**-1074 held 0, and compiled under a rounding mode set downward (pow errs there) PHI held u, for
# every later run (and the tier was off for a reason that no longer held)
UNIT_ROUNDOFF = math.ldexp(1.0, -53)
PHI = UNIT_ROUNDOFF + math.ldexp(1.0, -105)  # u (1 + 2u), exactly representable
ETA = float.fromhex("0x1p-1074")


def up(c):
    """An upper bound of the real number that c is the round-to-nearest value of: c + (|c| PHI + ETA),
    the same operations in the same order, in one array (a fresh large array costs more than a pass)."""
    step = np.abs(c, dtype=np.float64)
    step *= PHI
    step += ETA
    step += c  # fl(step + c) = fl(c + step)
    return step


def down(c):
    """A lower bound of the real number that c is the round-to-nearest value of: c - (|c| PHI + ETA), in
    one array as up()."""
    step = np.abs(c, dtype=np.float64)
    step *= PHI
    step += ETA
    if isinstance(step, np.ndarray):
        return np.subtract(c, step, out=step)
    return c - step


def rounding_radius(c):
    """|z - c| for every real z with fl(z) = c (one operation): at most u |z| + ETA/2, so at most
    2u |c| + ETA."""
    return up(np.abs(c) * (2 * UNIT_ROUNDOFF) + ETA)


def sqrt_up(x):
    """An upper bound of sqrt(x) (numpy's correctly rounded sqrt, moved up by up())."""
    return up(np.sqrt(x))


def sqrt_down(x):
    """A lower bound of sqrt(x) for x >= 0 (0 where x <= 0)."""
    return np.maximum(down(np.sqrt(np.maximum(x, 0.0))), 0.0)


def float_at_least(value: Fraction) -> float:
    """The smallest binary64 number >= value (value well inside the normal range)."""
    candidate = float(value)
    return candidate if Fraction(candidate) >= value else float(np.nextafter(candidate, np.inf))


def float_at_most(value: Fraction) -> float:
    """The largest binary64 number <= value (value well inside the normal range)."""
    candidate = float(value)
    return candidate if Fraction(candidate) <= value else float(np.nextafter(candidate, -np.inf))


def gamma(k: int) -> Fraction:
    """gamma_k = k u / (1 - k u), exact (k u < 1)."""
    ku = k * Fraction(UNIT_ROUNDOFF)
    if ku >= Fraction(1, 2):
        raise ValueError(f"dot products of length {k} are beyond the a-priori bounds")
    return ku / (1 - ku)


@functools.lru_cache(maxsize=None)
def _sum_factor(k: int) -> float:
    """1 / (1 - gamma_k) rounded up (exact Fractions, once per k)."""
    return float_at_least(1 / (1 - gamma(k)))


SHORT_AXIS = 32  # a last axis up to this long is reduced slice by slice (reduce_axis)


def reduce_axis(ufunc, M: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """ufunc.reduce(M, axis); a short last axis by accumulating its slices: numpy reduces it row by
    row, ten times slower for 8 entries.  A sum so taken is another order of the same terms, which
    the gamma bounds cover (any order)."""
    if axis % M.ndim != M.ndim - 1 or not 1 < M.shape[-1] <= SHORT_AXIS:
        return ufunc.reduce(M, axis=axis, keepdims=keepdims)
    total = M[..., 0].copy()
    for j in range(1, M.shape[-1]):
        ufunc(total, M[..., j], out=total)
    return total[..., None] if keepdims else total


def nonneg_sum_upper(M: np.ndarray, axis: int = -1, keepdims: bool = False) -> np.ndarray:
    """An upper bound of the sum of M >= 0 along axis: additions are exact in the subnormals,
    so fl(sum) >= (1 - gamma_{k-1}) sum in any order."""
    return up(reduce_axis(np.add, M, axis, keepdims) * _sum_factor(max(M.shape[axis] - 1, 1)))


def abs_sum_upper(M: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """nonneg_sum_upper(|M|) over the last axis; a short one slice by slice (the same sums in the same
    order as reduce_axis), without an array of |M| the size of M."""
    width = M.shape[-1]
    if not 1 < width <= SHORT_AXIS:
        return nonneg_sum_upper(np.abs(M), -1, keepdims)
    total, part = np.abs(M[..., 0]), np.empty(M.shape[:-1])
    for j in range(1, width):
        total += np.abs(M[..., j], out=part)
    total = up(total * _sum_factor(width - 1))
    return total[..., None] if keepdims else total
