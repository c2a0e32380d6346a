"""The pairs of rows of a ball matrix P that can hold the least overlap o_ik = sum_j min(P_ij, P_kj), the
Dobrushin coefficient's (certify.core.quantities.dobrushin), found by a binary64 screen of every pair with a rigorous
error bound: the ball arithmetic then sums only the pairs the screen cannot rule out (the n^3 / 2 ball minima of
every pair were half of `certify model`'s time at 110 tokens).

The screen (the parts shared with the centred coefficient's screen are in certify.core.arith.screen).  Every entry's
binary64 midpoint m_ij is within e_ij (screen.entry_errors) of the true entry; min is exact in binary64 and
1-Lipschitz in each argument; and a binary64 sum of n terms t_j, in any order, is within gamma_(n-1) sum_j |t_j| of
the exact sum.  So the screened overlap f_ik = fl(sum_j min(m_ij, m_kj)) is within E_i + E_k of o_ik, with
E_i = sum_j e_ij + gamma_(n-1) sum_j |m_ij| (screen.row_errors), hence within E = 2 max_i E_i.

Which pairs are kept.  Every value the balls of P allow has its least overlap between the least lower end and the least
upper end of the pairs' balls.  A ball of radius at most W that holds o_ik has both ends within 2W of it, so a pair can
hold either least end only if o_ik - 2W <= o_min, hence only if f_ik <= f_min + 2E + 2W: those pairs are kept, so the
kept pairs' least ends are all pairs' least ends, and the minimum of their balls holds the least overlap of every P the
balls allow (what soundness needs).  arb's min rounds the ends it returns outward, by amounts that depend on the balls
it is given: that minimum is the ball over every pair up to that rounding (equal to it in practice, not by
construction).  W (screen.radius_bound) bounds an overlap ball's radius at the working precision p: the entries' radii,
sum_j max(r_ij, r_kj) <= E, and the midpoints' rounding at p bits, 2^(1-p) |s| at each of n additions, s a partial sum,
at most sum_j max(|m_ij|, |m_kj|) + E <= 2 S + E (S = max_i sum_j |m_ij|), and 2^(2-p) |v| at each minimum v (its ends
and its midpoint rounded): n + 2 roundings of 2^(1-p) (2 S + E) in all.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import ctx

from certify.core.arith import screen
from certify.core.arith.pairs import above_diagonal
from certify.core.arith.rounding import abs_sum_upper, float_at_least


def screened_pairs(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, k), i < k, of rows of the n x n object array of balls P that can hold the least overlap (module
    docstring); every pair of a small or batched P, or where the screen's bounds do not hold."""
    n = P.shape[-1]
    i, k = above_diagonal(P.shape[-2])
    if not screen.usable(P):
        return i, k
    with np.errstate(all="ignore"):
        found = screen.binary64(P)
        if found is None:
            return i, k
        mid, rad = found
        size = abs_sum_upper(mid)  # sum_j |m_ij|
        rows = screen.row_errors(screen.entry_errors(mid, rad), size, n - 1)  # E_i
        overlaps = screen.per_pair(lambda a, b: np.minimum(a, b).sum(axis=1), mid, i, k)
    if not (np.isfinite(overlaps).all() and rows.max() <= 1):  # an error above 1 rules out no overlap (at most 1)
        return i, k
    E = 2 * Fraction(rows.max())
    W = screen.radius_bound(E, Fraction(size.max()), n, ctx.prec)
    threshold = float_at_least(Fraction(overlaps.min()) + 2 * E + 2 * W)
    kept = overlaps <= threshold
    return i[kept], k[kept]
