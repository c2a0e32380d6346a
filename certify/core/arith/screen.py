"""A binary64 screen of the pairs of rows of ball matrices, the parts common to the Dobrushin coefficient's two
screens: certify.core.arith.overlaps (the least overlap sum_j min(P_ij, P_kj)) and certify.core.arith.differences
(the largest sum_j |P_ij - P_kj|, in centred coordinates).  Each screen computes one binary64 number f_ik a pair,
within E of the pair's value at the balls' midpoints, and keeps only the pairs whose ball can hold an end of the
extreme; its module docstring derives E and which pairs it keeps.

What they share.  A ball's binary64 midpoint m_ij = float(mid) is within e_ij = rad + (an ulp of m_ij) of every point
of the ball, the radius itself rounded up by an ulp (float() errs by an ulp at most; rounding.rounding_radius bounds
an ulp, subnormals included), so within e_ij of the exact midpoint too (entry_errors).  A row's error bound
E_i = sum_j e_ij + gamma_k sum_j |m_ij| (row_errors) takes a binary64 sum of k + 1 terms, in any order, as within
gamma_k sum_j |t_j| of the exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (4.4);
additions are exact in the subnormals).  W (radius_bound) bounds a pair's ball's radius at the working precision p
when the radii it sums are at most E and its roundings of midpoints to p bits (each adds at most 2^(1-p) |v| for the
rounded v) add up to at most n + 2 times 2^(1-p) (2 S + E), S = max_i sum_j |m_ij| (entries of any sign): E grown by
arb's rounding of radii to 30 bits, upward, at each operation (a few roundings of 2^-29 a term and step, which
n 2^-20 E holds with room; at 40 rows two rows widened in alternate columns have an overlap ball 2.6e-8 E wider
than E), and (4 n + 8) 2^-p (1 + S + E) for the midpoints.

The vectors of bounds are rounded upward (rounding.up and its sums), the scalars computed as exact fractions; all of
it rests on the floating-point model that certify.core.arith.fpmodel checks: where it does not hold (usable), or a
midpoint, radius or bound is not finite, a screen keeps every pair.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from certify.core.arith import fpmodel
from certify.core.arith.pairs import blocks_of
from certify.core.arith.rounding import float_at_least, gamma, nonneg_sum_upper, rounding_radius, up

# Below this many rows the balls of every pair cost less than the screen (and the floating-point model's probes,
# run on a process's first screen)
SCREEN_FROM = 32
# Pairs screened at once: their binary64 terms, n numbers a pair, stay within some 8 MB
SCREEN_BLOCK = 1 << 20


def usable(P: np.ndarray) -> bool:
    """A screen may rule pairs of P out: one matrix (not a batch) of SCREEN_FROM rows or more, and the floating-point
    model holds."""
    return P.ndim == 2 and P.shape[0] >= SCREEN_FROM and fpmodel.tier3_usable()[0]


def binary64(P: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The binary64 midpoints and radii of the balls of P (float() of each, within an ulp); None where one is not
    finite."""
    entries = P.tolist()
    mid = np.array([[float(x.mid()) for x in row] for row in entries])
    rad = np.array([[float(x.rad()) for x in row] for row in entries])
    return (mid, rad) if np.isfinite(mid).all() and np.isfinite(rad).all() else None


def entry_errors(mid: np.ndarray, rad: np.ndarray) -> np.ndarray:
    """e_ij >= the distance from m_ij to any point of its ball: the radius, rounded up by its ulp, and m_ij's ulp
    (float() errs by an ulp at most)."""
    return up(up(rad + rounding_radius(rad)) + rounding_radius(mid))


def row_errors(errors: np.ndarray, size: np.ndarray, k: int) -> np.ndarray:
    """E_i = sum_j e_ij + gamma_k size_i, rounded up (size_i >= sum_j |m_ij|, abs_sum_upper)."""
    return up(nonneg_sum_upper(errors) + up(float_at_least(gamma(k)) * size))


def per_pair(value, mid: np.ndarray, i: np.ndarray, k: np.ndarray) -> np.ndarray:
    """value(mid[a], mid[b]), a number a pair, over the pairs (i, k) in blocks of about SCREEN_BLOCK terms."""
    return np.concatenate([value(mid[a], mid[b]) for a, b in blocks_of(i, k, mid.shape[-1], SCREEN_BLOCK)])


def radius_bound(E: Fraction, size: Fraction, n: int, precision: int) -> Fraction:
    """W, a bound of the radius of a pair's ball summed at `precision` bits from entries whose radii sum to at most
    E over any two rows and whose midpoints' |.| sum to at most `size` over a row, its midpoints' roundings n + 2
    times 2^(1-p) (2 size + E) at most (module docstring): E grown by arb's 30-bit radii, and the midpoints'
    rounding."""
    return E * (1 + n * Fraction(2) ** -20) + 4 * (n + 2) * Fraction(2) ** -precision * (1 + size + E)
