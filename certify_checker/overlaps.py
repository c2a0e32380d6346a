"""The pairs of rows of an attention matrix P (balls) that can hold the least overlap o_ik = sum_j min(P_ij, P_kj)
of the Dobrushin coefficient (forward.dobrushin): a binary64 screen of every pair with a rigorous bound on its error,
so that the balls are summed only for the pairs it cannot rule out.

Every entry's binary64 midpoint m_ij = float(mid P_ij) is within e_ij = r_ij + ulp(r_ij) + ulp(m_ij) of the true
entry (r_ij = float(rad P_ij); a conversion errs by less than an ulp); min is exact in binary64 and 1-Lipschitz in
each argument; math.fsum rounds the exact sum once, so f_ik = fsum_j min(m_ij, m_kj) is within E_i + E_k of o_ik,
E_i = sum_j e_ij + 2^-51 sum_j |m_ij| (fsum errs by half an ulp, by one where the C library double-rounds; this takes
two), hence within E = 2 max_i E_i (the bounds summed in arb, so rigorously).  A ball of radius at most W holding o_ik
has both ends within 2W of it, so only a pair with f_ik <= f_min + 2E + 2W can hold the least lower or upper end of
the pairs' balls: the minimum of the kept pairs' balls is that of all pairs', end for end.  W (radius_bound): the
radii, sum_j max(r_ij, r_kj) <= E, grown by arb's 30-bit radii rounded up at each operation (n 2^-20 E holds them with
room), and the midpoints' rounding at p bits, 2^(1-p) |s| at n additions (|s| <= 2 S + E, S = max_i sum_j |m_ij|) and
2^(2-p) |v| at each minimum v: (4 n + 8) 2^-p (S + E).  Where binary64 does not round to nearest with subnormals
kept, a midpoint lies outside [-2, 2] or a bound is not finite, every pair is kept.
"""

from __future__ import annotations

import itertools
import math

from flint import arb, ctx

SCREEN_FROM = 32  # rows: below, the balls of every pair cost less than the screen


def _binary64_rounds_to_nearest() -> bool:
    """Round to nearest with ties to even, and subnormals not flushed to zero (which fsum and the ulps rely on)."""
    u, least_normal = 2.0 ** -53, 2.0 ** -1022  # names, so that each operation below runs now, not when compiled
    return 1.0 + u == 1.0 and 1.0 + 3 * u == 1.0 + 4 * u and -1.0 - u == -1.0 and least_normal / 2 > 0


def candidate_pairs(P: list) -> list:
    """The pairs (i, k), i < k, whose overlap can hold the least end (module docstring); every pair when the screen
    cannot rule one out."""
    n, precision = len(P), ctx.prec  # the overlaps' balls are summed at the working precision
    every = list(itertools.combinations(range(n), 2))
    if n < SCREEN_FROM or not _binary64_rounds_to_nearest():
        return every
    mids = [[float(x.mid()) for x in row] for row in P]
    rads = [[float(x.rad()) for x in row] for row in P]
    # entries of a stochastic matrix lie in [0, 1]: a midpoint beyond 2 (or not finite) marks balls too wide to screen
    if not (all(abs(v) <= 2 for row in mids for v in row) and all(math.isfinite(v) for row in rads for v in row)):
        return every
    overlaps = [math.fsum(map(min, mids[i], mids[k])) for i, k in every]
    with ctx.workprec(64):
        sizes = [sum((arb(abs(m)) for m in row), arb(0)) for row in mids]
        rows = [sum((arb(r) + math.ulp(r) + math.ulp(m) for r, m in zip(rad, mid)), arb(0)) + size * arb(2) ** -51
                for rad, mid, size in zip(rads, mids, sizes)]
        E = 2 * max(row.upper() for row in rows)
        W = radius_bound(E, max(size.upper() for size in sizes), n, precision)
        bound = (arb(min(overlaps)) + 2 * E + 2 * W).upper()
    if not bound.is_finite() or not E < 1:  # an error of 1 rules out no overlap (they are at most about 1)
        return every
    threshold = float(bound)
    while arb(threshold) < bound:  # float() rounds to nearest: up to the next binary64 above the bound
        threshold = math.nextafter(threshold, math.inf)
    return [pair for pair, overlap in zip(every, overlaps) if overlap <= threshold]


def radius_bound(E: arb, size: arb, n: int, precision: int) -> arb:
    """W of the module docstring, size its S, at most an overlap ball's radius at `precision` bits."""
    return E * (1 + n * arb(2) ** -20) + 4 * (n + 2) * arb(2) ** -precision * (1 + size + E)
