"""The pairs of rows of a ball matrix P that can hold the least overlap o_ik = sum_j min(P_ij, P_kj), the
Dobrushin coefficient's (certify.core.quantities.dobrushin), found by a binary64 screen of every pair with a rigorous
error bound: the ball arithmetic then sums only the pairs the screen cannot rule out (the n^3 / 2 ball minima of
every pair were half of `certify model`'s time at 110 tokens).

The screen.  Every entry's binary64 midpoint m_ij = float(mid P_ij) is within e_ij = rad P_ij + (an ulp of m_ij) of
the true entry (certify.core.arith.rounding.rounding_radius bounds an ulp, subnormals included); min is exact in
binary64 and 1-Lipschitz in each argument; and a binary64 sum of n terms t_j, in any order, is within
gamma_(n-1) sum_j |t_j| of the exact sum (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (4.4);
additions are exact in the subnormals).  So the screened overlap f_ik = fl(sum_j min(m_ij, m_kj)) is within
E_i + E_k of o_ik, with E_i = sum_j e_ij + gamma_(n-1) sum_j |m_ij|, hence within E = 2 max_i E_i.

Which pairs are kept.  The least overlap's ball has the least lower end and the least upper end of all the pairs'
balls (arb's min works end by end).  A ball of radius at most W that holds o_ik has both ends within 2W of it, so a
pair can hold either least end only if o_ik - 2W <= o_min, hence only if f_ik <= f_min + 2E + 2W: those pairs are kept,
and the minimum over them is the minimum over all pairs, end for end.  W (radius_bound) bounds an overlap ball's
radius at the working precision p: the entries' radii, sum_j max(r_ij, r_kj) <= E, grown by arb's rounding of radii
to 30 bits, upward, at each operation (a few roundings of 2^-29 a term and step, which n 2^-20 E holds with room; at
40 rows two rows widened in alternate columns have a ball 2.6e-8 E wider than E); and the midpoints' rounding at p
bits, 2^(1-p) |s| at each of n additions, s a partial sum, at most sum_j max(|m_ij|, |m_kj|) + E <= 2 S + E (S =
max_i sum_j |m_ij|; entries may be negative), and 2^(2-p) |v| at each minimum v (its ends and its midpoint rounded):
(4 n + 8) 2^-p (S + E) in all.

The vectors of bounds are rounded upward (rounding.up and its sums), the scalars computed as exact fractions; all of
it rests on the floating-point model that certify.core.arith.fpmodel checks: where it does not hold, or a midpoint,
radius or bound is not finite, every pair is kept.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import ctx

from certify.core.arith import fpmodel
from certify.core.arith.pairs import above_diagonal, blocks_of
from certify.core.arith.rounding import abs_sum_upper, float_at_least, gamma, nonneg_sum_upper, rounding_radius, up

# Below this many rows the ball minima of every pair cost less than the screen (and the floating-point model's
# probes, run on a process's first screen)
SCREEN_FROM = 32
# Pairs screened at once: their binary64 minima, n numbers a pair, stay within some 8 MB
SCREEN_BLOCK = 1 << 20


def screened_pairs(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, k), i < k, of rows of the n x n object array of balls P that can hold the least overlap (module
    docstring); every pair of a small or batched P, or where the screen's bounds do not hold."""
    n = P.shape[-1]
    i, k = above_diagonal(P.shape[-2])
    if P.ndim != 2 or P.shape[0] < SCREEN_FROM or not fpmodel.tier3_usable()[0]:
        return i, k
    entries = P.tolist()
    with np.errstate(all="ignore"):
        mid = np.array([[float(x.mid()) for x in row] for row in entries])
        rad = np.array([[float(x.rad()) for x in row] for row in entries])
        if not (np.isfinite(mid).all() and np.isfinite(rad).all()):
            return i, k
        errors = up(up(rad + rounding_radius(rad)) + rounding_radius(mid))  # float() errs by an ulp at most
        size = abs_sum_upper(mid)  # sum_j |m_ij|
        rows = up(nonneg_sum_upper(errors) + up(float_at_least(gamma(n - 1)) * size))  # E_i
        overlaps = np.concatenate([np.minimum(mid[a], mid[b]).sum(axis=1) for a, b in blocks_of(i, k, n, SCREEN_BLOCK)])
    if not (np.isfinite(overlaps).all() and rows.max() <= 1):  # an error above 1 rules out no overlap (at most 1)
        return i, k
    E = 2 * Fraction(rows.max())
    W = radius_bound(E, Fraction(size.max()), n, ctx.prec)
    threshold = float_at_least(Fraction(overlaps.min()) + 2 * E + 2 * W)
    kept = overlaps <= threshold
    return i[kept], k[kept]


def radius_bound(E: Fraction, size: Fraction, n: int, precision: int) -> Fraction:
    """W, a bound of the radius of an overlap ball summed at `precision` bits from entries whose radii sum to at most
    E over any two rows and whose midpoints' |.| sum to at most `size` over a row (module docstring): E grown by arb's
    30-bit radii, and the midpoints' rounding."""
    return E * (1 + n * Fraction(2) ** -20) + 4 * (n + 2) * Fraction(2) ** -precision * (1 + size + E)
