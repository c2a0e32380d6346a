"""The pairs of rows of an attention matrix P (balls) that can hold the extreme of the Dobrushin coefficient, the least
overlap o_ik = sum_j min(P_ij, P_kj) (candidate_pairs, forward.dobrushin) or in centred coordinates the largest
d_ik = sum_j |P_ij - P_kj|, P = Pi + Delta (difference_pairs, centred.centred_tau): a binary64 screen of every
pair with a rigorous bound on its error, so that the balls are summed only for the pairs it cannot rule out.

Both.  A ball's binary64 midpoint m_ij = float(mid) is within e_ij = r_ij + ulp(r_ij) + ulp(m_ij) of every point of
the ball (r_ij = float(rad); a conversion errs by less than an ulp).  math.fsum rounds the exact sum once (it errs by
half an ulp, by one where the C library double-rounds; 2^-51 of the sum takes two); the bounds are summed in arb.
A ball of radius at most W holding a value has both ends within 2W of it.  W (radius_bound): the radii summed, at
most E, grown by arb's 30-bit radii rounded up at each operation (n 2^-20 E holds them with room), and the
midpoints' rounding at p bits, 2^(1-p) |v| at each rounded v, n + 2 times 2^(1-p) (2 S + E) at most.  Where binary64
does not round to nearest with subnormals kept, a midpoint or radius lies outside [-2, 2] or a bound is not finite,
every pair is kept.

Overlaps.  min is exact in binary64 and 1-Lipschitz, so f_ik = fsum_j min(m_ij, m_kj) is within E_i + E_k of o_ik,
E_i = sum_j e_ij + 2^-51 S_i, S_i = sum_j |m_ij|, hence within E = 2 max_i E_i.  Only a pair with
f_ik <= f_min + 2E + 2W can hold the least lower or upper end of the pairs' balls, and the least overlap of every P
the balls allow lies between those two ends: the minimum of the kept pairs' balls holds it (what soundness needs).
It is the minimum of all pairs' balls up to arb's outward rounding of the ends min returns, which depends on the
balls it is given (equal in practice, not by construction).  W's roundings: n additions of partial sums at most
2 S + E, and each minimum's (ends and midpoint) 2^(2-p) |v|.

Differences.  Near consensus Delta can lie below binary64's range: every ball is first multiplied by 2^s, the power of
two that brings the largest |end| below 1, near it.  The product holds 2^s times each point of the ball: its midpoint
is within its e_ij of 2^s times the exact midpoint and its radius is at least 2^s r.  In these units m_ij (with a
mask m_ij = a_ij + b_ij, a and b those of Delta and Pi) is within e^Delta_ij (+ e^Pi_ij + ulp(m_ij)) of 2^s times
the exact midpoint (sum).  A binary64 difference errs by at most 2^-53 of it (nothing in the subnormals), so
f_ik = fsum_j |m_ij - m_kj| is within (2^-51 (1 + 2^-53) + 2^-53) (S_i + S_k) <= 2^-50 (S_i + S_k) of
sum_j |m_ij - m_kj|, which is within sum_j (e_ij + e_kj) of 2^s d_ik at the exact midpoints, a value the pair's ball
holds: E_i = sum_j e_ij + 2^-50 S_i.  The largest d_ik of every value the balls allow lies between the pairs' balls'
greatest lower and greatest upper ends; with M the largest 2^s d_ik, its pair's ends are >= M - 2W and >= M, and a
pair's are at most 2^s d_q and 2^s d_q + 2W: it holds either greatest end only if 2^s d_q >= M - 2W, so only if
f_q >= f_max - 2E - 2W (M >= f_max - E): the maximum of the kept pairs' balls holds the largest d_ik of every value
the balls allow, as the minimum above does.  W's S is T = max_i sum_j (|a_ij| + |b_ij|) with a mask; its roundings:
Delta's differences and Pi's, their sums, and n - 1 additions of partial sums at most 2 T + E.
"""
from __future__ import annotations

import itertools
import math
import operator

from flint import arb, ctx

SCREEN_FROM = 32  # rows: below, the balls of every pair cost less than the screen


def binary64_rounds_to_nearest() -> bool:
    """Round to nearest with ties to even, once (1 + (u + u/4096): double rounding through x87's extended precision
    lands on the tie 1 + u, then on 1), and subnormals not flushed to zero (which fsum and the ulps rely on)."""
    u, least_normal = math.ldexp(1.0, -53), math.ldexp(1.0, -1022)  # made now, as each operation below runs
    return (1.0 + u == 1.0 and 1.0 + 3 * u == 1.0 + 4 * u and -1.0 - u == -1.0 and least_normal / 2 > 0
            and 1.0 + (u + u / 4096) == 1.0 + 2 * u)


def _binary64(P: list) -> tuple[list, list] | None:
    """The binary64 midpoints and radii of the balls of P; None where one lies outside [-2, 2] (entries of a
    stochastic matrix, and the scaled balls, lie in [-1, 1]: beyond, a ball is too wide to screen, or not finite)."""
    mids, rads = ([[float(getattr(x, end)()) for x in row] for row in P] for end in ("mid", "rad"))
    return (mids, rads) if all(abs(v) <= 2 for rows in (mids, rads) for row in rows for v in row) else None


def _sum_upper(values) -> arb:
    """A ball holding the exact sum of nonnegative binary64 numbers and more: fsum's, which errs by an ulp at most,
    2^-52 of it (nothing in the subnormals), grown by 2^-51 of it."""
    return arb(math.fsum(values)) * (1 + arb(2) ** -51)


def _bounds(parts: list, mids: list, relative: float, n: int, precision: int) -> tuple[arb, arb]:
    """E and W (module docstring) for the values screened from the midpoints `mids`, made of the parts' (midpoints,
    radii) (their sum rounded, when there are two), each screened value within `relative` of its sum_j |.|."""
    with ctx.workprec(64):
        errors = [sum(row) for row in zip(*([_sum_upper(itertools.chain(rad, map(math.ulp, rad), map(math.ulp, mid)))
                                             for mid, rad in zip(*part)] for part in parts))]
        if len(parts) > 1:  # m_ij = a_ij + b_ij rounded: half an ulp of it
            errors = [error + _sum_upper(map(math.ulp, row)) for error, row in zip(errors, mids)]
        rows = [error + _sum_upper(map(abs, row)) * relative for error, row in zip(errors, mids)]
        size = max(sum(row).upper() for row in zip(*([_sum_upper(map(abs, row)) for row in m] for m, _ in parts)))
        E = 2 * max(row.upper() for row in rows)
        return E, radius_bound(E, size, n, precision)


def candidate_pairs(P: list) -> list:
    """The pairs (i, k), i < k, whose overlap can hold the least end (module docstring); every pair when the screen
    cannot rule one out."""
    n, precision = len(P), ctx.prec  # the overlaps' balls are summed at the working precision
    every = list(itertools.combinations(range(n), 2))
    found = _binary64(P) if n >= SCREEN_FROM and binary64_rounds_to_nearest() else None
    if found is None:
        return every
    overlaps = [math.fsum(map(min, found[0][i], found[0][k])) for i, k in every]
    E, W = _bounds([found], found[0], 2.0 ** -51, n, precision)
    with ctx.workprec(64):
        bound = (arb(min(overlaps)) + 2 * E + 2 * W).upper()
    if not bound.is_finite() or not E < 1:  # an error of 1 rules out no overlap (they are at most about 1)
        return every
    return [pair for pair, overlap in zip(every, overlaps) if arb(overlap) <= bound]  # exact: decided


def difference_pairs(Delta: list, Pi: list | None) -> list:
    """The pairs (i, k), i < k, whose sum_j |P_ij - P_kj| (P = Pi + Delta; Pi None where its rows are equal, the
    differences Delta's alone) can hold the greatest end (module docstring); every pair when the screen cannot rule
    one out."""
    n, precision, matrices = len(Delta), ctx.prec, [Delta] if Pi is None else [Delta, Pi]
    every = list(itertools.combinations(range(n), 2))
    if n < SCREEN_FROM or not binary64_rounds_to_nearest():
        return every
    top = max(x.abs_upper() for P in matrices for row in P for x in row)  # exact: compared rigorously
    if not top.is_finite():
        return every
    man, exp = top.man_exp()
    scale = arb((1, -(int(exp) + int(man).bit_length())))  # 2^s, exactly
    parts = [_binary64([[x * scale for x in row] for row in P]) for P in matrices]
    if None in parts:
        return every
    mids = parts[0][0] if Pi is None else [list(map(operator.add, a, b)) for a, b in zip(parts[0][0], parts[1][0])]
    sums = [math.fsum(map(abs, map(operator.sub, mids[i], mids[k]))) for i, k in every]
    E, W = _bounds(parts, mids, 2.0 ** -50, n, precision)
    with ctx.workprec(64):
        bound = (arb(max(sums)) - 2 * E - 2 * W).lower()
    if not bound.is_finite():
        return every
    return [pair for pair, difference in zip(every, sums) if arb(difference) >= bound]  # exact: decided


def radius_bound(E: arb, size: arb, n: int, precision: int) -> arb:
    """W of the module docstring, size its S (or T), at most a pair's ball's radius at `precision` bits."""
    return E * (1 + n * arb(2) ** -20) + 4 * (n + 2) * arb(2) ** -precision * (1 + size + E)
