"""The pairs of rows that can hold the largest d_ik = sum_j |P_ij - P_kj| of the Dobrushin coefficient in centred
coordinates (certify.core.centred.dobrushin: P = Pi + Delta, the differences taken as
(Delta_ij - Delta_kj) + (Pi_ij - Pi_kj), or of Delta alone without a mask, where the rows of Pi are equal), found by a
binary64 screen of every pair with a rigorous error bound: the ball arithmetic then sums only the pairs the screen
cannot rule out (every pair's n ball differences were three quarters of `certify trajectory`'s time at 128 tokens).
The parts shared with the overlap form's screen (certify.core.arith.overlaps) are in certify.core.arith.screen.

Scale.  Near consensus Delta's entries can lie below binary64's range (10^-18000 after ten layers) where every one
reads as 0 and a screen rules nothing out; so the balls are first multiplied by 2^s, the power of two that brings the
largest |end| of the balls below 1, near it.  Everything below is in these units: the ball of 2^s x holds 2^s times
every point of x's ball, so its midpoint's binary64 value is within its e_ij (screen.entry_errors) of 2^s times x's
exact midpoint, and 2^s rad x is at most its radius, hence at most e_ij.  2^s d_ik, like d_ik, is a number the
pair's ball (on the unscaled balls) holds times 2^s: d_ik is taken at the exact midpoints of Delta and Pi.

The screen.  Without a mask, m_ij = float(mid 2^s Delta_ij) is within e_ij of 2^s Delta's exact midpoint; with one,
m_ij = fl(a_ij + b_ij), a and b the same of 2^s Delta and 2^s Pi, is within e_ij = e^Delta_ij + e^Pi_ij + (an ulp
of m_ij) of 2^s (Delta + Pi)'s (rounding.rounding_radius: the rounding of a sum, subnormals included).  A binary64
difference g_j = fl(m_ij - m_kj) is within u |m_ij - m_kj| of the exact one (exact in the subnormals), |.| is exact,
and fl(sum_j |g_j|), in any order, is within gamma_(n-1) sum_j |g_j| of the exact sum; so the screened value
f_ik = fl(sum_j |fl(m_ij - m_kj)|) is within (gamma_(n-1) (1 + u) + u) sum_j |m_ij - m_kj| <= gamma_n (S_i + S_k)
of sum_j |m_ij - m_kj| (Higham, Lemma 3.3: (1 + gamma_(n-1)) (1 + u) <= 1 + gamma_n), S_i = sum_j |m_ij|, and
that is within sum_j (e_ij + e_kj) of 2^s d_ik (the triangle inequality).  So f_ik is within E_i + E_k of 2^s d_ik,
E_i = sum_j e_ij + gamma_n S_i (screen.row_errors), hence within E = 2 max_i E_i.

Which pairs are kept.  Every value the balls allow has its largest d_ik between the greatest lower end and the greatest
upper end of all the pairs' balls.  A ball of radius at most W that holds 2^s d_ik (in these units) has both ends
within 2W of it.  Let M = max 2^s d_ik: the pair that attains it has a lower end >= M - 2W and an upper end >= M, so a
pair q holds the greatest lower end only if its lower end, at most 2^s d_q, is >= M - 2W, and the greatest upper end
only if its upper end, at most 2^s d_q + 2W, is >= M: either way 2^s d_q >= M - 2W.  As M >= f_max - E and f_q >= 2^s
d_q - E, such a pair has f_q >= f_max - 2E - 2W: those pairs are kept, so the kept pairs' greatest ends are all pairs'
greatest ends, and the maximum of their balls holds the largest d_ik of every value the balls allow (what soundness
needs); it is the ball over every pair up to arb's outward rounding of the ends max returns, which depends on the balls
it is given (equal to it in practice, not by construction).  W (screen.radius_bound) bounds a pair's ball's radius at
the working precision p: the radii it sums, sum_j (r_ij + r_kj) over Delta's (and Pi's), are at most E_i + E_k <= E;
its midpoints are rounded toward zero at p bits, each rounding at most 2^(1-p) |v|, in Delta's differences and Pi's
(whose |.| sum to at most sum_j (|Delta_ij| + |Delta_kj| + |Pi_ij| + |Pi_kj|) <= 2 T + E at the exact midpoints, T =
max_i sum_j (|a_ij| + |b_ij|), or S without a mask), in their sums (as much again) and in the n - 1 additions over j
(each partial sum at most that): n + 1 roundings of 2^(1-p) (2 T + E), within screen.radius_bound's n + 2.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from flint import arb, ctx

from certify.core.arith import screen
from certify.core.arith.pairs import above_diagonal
from certify.core.arith.rounding import abs_sum_upper, float_at_most, rounding_radius, up


def screened_pairs(Delta: np.ndarray, Pi: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (i, k), i < k, of rows of the n x n object arrays of balls Delta (and Pi, None without a mask) that
    can hold the largest sum_j |P_ij - P_kj| (module docstring); every pair of a small or batched Delta, or where the
    screen's bounds do not hold."""
    n = Delta.shape[-1]
    i, k = above_diagonal(Delta.shape[-2])
    matrices = [Delta] if Pi is None else [Delta, Pi]
    scale = None if not screen.usable(Delta) else power_of_two(matrices)
    if scale is None:
        return i, k
    with np.errstate(all="ignore"):
        found = [screen.binary64(P * scale) for P in matrices]
        if None in found:
            return i, k
        errors = [screen.entry_errors(mid, rad) for mid, rad in found]
        if Pi is None:
            (mid, _), error = found[0], errors[0]
            size = magnitude = abs_sum_upper(mid)
        else:
            (a, _), (b, _) = found
            mid = a + b
            error = up(up(errors[0] + errors[1]) + rounding_radius(mid))
            size, magnitude = abs_sum_upper(mid), up(abs_sum_upper(a) + abs_sum_upper(b))
        rows = screen.row_errors(error, size, n)  # E_i
        sums = screen.per_pair(lambda x, y: np.abs(x - y).sum(axis=1), mid, i, k)
    if not (np.isfinite(sums).all() and np.isfinite(rows).all() and np.isfinite(magnitude).all()):
        return i, k
    E = 2 * Fraction(rows.max())
    W = screen.radius_bound(E, Fraction(magnitude.max()), n, ctx.prec)
    threshold = float_at_most(Fraction(sums.max()) - 2 * E - 2 * W)
    kept = sums >= threshold
    return i[kept], k[kept]


def power_of_two(matrices: list[np.ndarray]) -> arb | None:
    """2^s, exactly, for the s that brings the largest |end| of the balls into [1/2, 1) (1 if every ball is 0); None
    where one is not finite."""
    top = max(x.abs_upper() for P in matrices for x in P.flat)  # exact balls: their comparison is decided
    if not top.is_finite():
        return None
    man, exp = top.man_exp()
    return arb((1, -(int(exp) + int(man).bit_length())))
