"""The pairs of rows of an attention matrix P (balls) that can hold the extreme of the Dobrushin coefficient, the least
overlap o_ik = sum_j min(P_ij, P_kj) (candidate_pairs, forward.dobrushin) or in centred coordinates the largest
d_ik = sum_j |P_ij - P_kj|, P = Pi + Delta (difference_pairs, centred.centred_tau): a binary64 screen of every
pair with a rigorous bound on its error, so that the balls are summed only for the pairs it cannot rule out.

Both.  A ball's binary64 midpoint m_ij = float(mid) is within e_ij = r_ij + ulp(r_ij) + ulp(m_ij) of every point of
the ball (r_ij = float(rad); a conversion errs by less than an ulp).  math.fsum rounds the exact sum once (it errs by
half an ulp, by one where the C library double-rounds; 2^-51 of the sum takes two); the bounds are summed in arb.
The pairs' sums are exact, in integers: q_ij = sum over the k matrices of floor(2^F m) (|m| <= 2, F =
distances.entry_bits(n) - 4: m 2^F and its floor are exact in binary64) lies in (2^F m_ij - k, 2^F m_ij], and
certify_checker.distances sums every pair's |q_ij - q_kj| a column an operation (a math.fsum of per-entry calls for each
pair made the overlaps' screen 2.7 times slower at 64 rows, 4 times at 128).  A ball of radius at most W holding a
value has both ends within 2W of it.  W (radius_bound): the radii summed, at most E, grown by arb's 30-bit radii
rounded up at each operation (n 2^-20 E holds them with room), and the midpoints' rounding at p bits, 2^(1-p) |v| at
each rounded v, n + 2 times 2^(1-p) (2 S + E) at most.  Where binary64 does not round to nearest with subnormals kept,
a midpoint or radius lies outside [-2, 2] or a bound is not finite, every pair is kept.

Overlaps.  floor is monotone and min 1-Lipschitz, so f_ik = 2^-F sum_j min(q_ij, q_kj) = 2^-F (R_i + R_k - G_ik) / 2
(R_i = sum_j q_ij, G_ik = sum_j |q_ij - q_kj|) is within n 2^-F of sum_j min(m_ij, m_kj), and within E_i + E_k of o_ik,
E_i = sum_j e_ij + n 2^-(F+1), hence within E = 2 max_i E_i.  Only a pair with f_ik <= f_min + 2E + 2W can hold the
least lower or upper end of the pairs' balls, and the least overlap of every P the balls allow lies between those two
ends: the minimum of the kept pairs' balls holds it (what soundness needs).  It is the minimum of all pairs' balls up
to arb's outward rounding of the ends min returns, which depends on the balls it is given (equal in practice, not by
construction).  W's roundings: n additions of partial sums at most 2 S + E, and each minimum's (ends and midpoint)
2^(2-p) |v|.

Differences.  Near consensus Delta can lie below binary64's range: every ball is first multiplied by 2^s, the power of
two that brings the largest |end| below 1, near it.  The product holds 2^s times each point of the ball: its midpoint
is within its e_ij of 2^s times the exact midpoint and its radius is at least 2^s r.  In these units m_ij (with a mask
m_ij = a_ij + b_ij, a and b those of Delta and Pi, summed exactly in q) is within e^Delta_ij (+ e^Pi_ij) of 2^s times
the exact midpoint (sum).  |q_ij - q_kj| is within k of 2^F |m_ij - m_kj|, so f_ik = 2^-F G_ik is within n k 2^-F of
sum_j |m_ij - m_kj|, which is within sum_j (e_ij + e_kj) of 2^s d_ik at the exact midpoints, a value the pair's ball
holds: E_i = sum_j e_ij + n k 2^-(F+1).  The largest d_ik of
every value the balls allow lies between the pairs' balls' greatest lower and greatest upper ends; with M the largest
2^s d_ik, its pair's ends are >= M - 2W and >= M, and a pair's are at most 2^s d_q and 2^s d_q + 2W: it holds either
greatest end only if 2^s d_q >= M - 2W, so only if f_q >= f_max - 2E - 2W (M >= f_max - E): the maximum of the kept
pairs' balls holds the largest d_ik of every value the balls allow, as the minimum above does.  W's S is
T = max_i sum_j (|a_ij| + |b_ij|) with a mask; its roundings: Delta's differences and Pi's, their sums, and n - 1
additions of partial sums at most 2 T + E.
"""
from __future__ import annotations

import itertools
import math
import operator

from flint import arb, ctx

from certify_checker import distances

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


def _integers(mids: list, n: int) -> tuple[int, list, list]:
    """F, q (module docstring; mids: each matrix's binary64 midpoints) and q + k 2^(F+1): distances.pairwise's entries,
    in [0, k 2^(F+2)] (k <= 2 matrices: below 2^entry_bits)."""
    F, scale = distances.entry_bits(n) - 4, math.ldexp(1.0, distances.entry_bits(n) - 4)
    q = [list(map(math.floor, map(scale.__mul__, row))) for row in mids[0]]
    for other in mids[1:]:  # Pi's, with a mask
        q = [list(map(operator.add, row, map(math.floor, map(scale.__mul__, more)))) for row, more in zip(q, other)]
    return F, q, [[x + (len(mids) << (F + 1)) for x in row] for row in q]


def _bounds(parts: list, F: int, n: int, precision: int) -> tuple[arb, arb]:
    """E and W (module docstring) for the values screened from the matrices' (midpoints, radii) `parts`, read as
    integers at 2^-F."""
    with ctx.workprec(64):
        errors = [sum(row) for row in zip(*([_sum_upper(itertools.chain(rad, map(math.ulp, rad), map(math.ulp, mid)))
                                             for mid, rad in zip(*part)] for part in parts))]
        quantum = arb(n * len(parts)) * arb(2) ** -(F + 1)  # exact: the integers' share of E_i
        size = max(sum(row).upper() for row in zip(*([_sum_upper(map(abs, row)) for row in m] for m, _ in parts)))
        E = 2 * max((error + quantum).upper() for error in errors)
        return E, radius_bound(E, size, n, precision)


def _units(x: arb, F: int) -> int:
    """floor(2^F x) of an exact x (>> rounds toward minus infinity)."""
    man, shift = int(x.mid().man_exp()[0]), int(x.mid().man_exp()[1]) + F
    return man << shift if shift >= 0 else man >> -shift


def candidate_pairs(P: list) -> list:
    """The pairs (i, k), i < k, whose overlap can hold the least end (module docstring); every pair when the screen
    cannot rule one out."""
    n, precision = len(P), ctx.prec  # the overlaps' balls are summed at the working precision
    every = list(itertools.combinations(range(n), 2))
    found = _binary64(P) if n >= SCREEN_FROM and distances.AVAILABLE and binary64_rounds_to_nearest() else None
    if found is None:
        return every
    F, q, lanes = _integers([found[0]], n)
    G, R = distances.pairwise(lanes), list(map(sum, q))
    overlaps = [(R[i] + R[k] - G[i, k]) // 2 for i, k in every]  # exact: R_i + R_k - G_ik = 2 sum_j min(q_ij, q_kj)
    E, W = _bounds([found], F, n, precision)
    with ctx.workprec(64):
        bound = (arb(min(overlaps)) * arb(2) ** -F + 2 * E + 2 * W).upper()
    if not bound.is_finite() or not E < 1:  # an error of 1 rules out no overlap (they are at most about 1)
        return every
    most = _units(bound, F)  # 2^-F f <= bound exactly where f <= floor(2^F bound), f an integer
    return [pair for pair, overlap in zip(every, overlaps) if overlap <= most]


def difference_pairs(Delta: list, Pi: list | None) -> list:
    """The pairs (i, k), i < k, whose sum_j |P_ij - P_kj| (P = Pi + Delta; Pi None where its rows are equal, the
    differences Delta's alone) can hold the greatest end (module docstring); every pair when the screen cannot rule
    one out."""
    n, precision, matrices = len(Delta), ctx.prec, [Delta] if Pi is None else [Delta, Pi]
    every = list(itertools.combinations(range(n), 2))
    if n < SCREEN_FROM or not distances.AVAILABLE or not binary64_rounds_to_nearest():
        return every
    top = max(x.abs_upper() for P in matrices for row in P for x in row)  # exact: compared rigorously
    if not top.is_finite():
        return every
    man, exp = top.man_exp()
    scale = arb((1, -(int(exp) + int(man).bit_length())))  # 2^s, exactly
    parts = [_binary64([[x * scale for x in row] for row in P]) for P in matrices]
    if None in parts:
        return every
    F, _, lanes = _integers([mids for mids, _ in parts], n)
    G = distances.pairwise(lanes)
    sums = [G[pair] for pair in every]
    E, W = _bounds(parts, F, n, precision)
    with ctx.workprec(64):
        bound = (arb(max(sums)) * arb(2) ** -F - 2 * E - 2 * W).lower()
    if not bound.is_finite():
        return every
    least = -_units(-bound, F)  # 2^-F f >= bound exactly where f >= ceil(2^F bound), f an integer
    return [pair for pair, difference in zip(every, sums) if difference >= least]


def radius_bound(E: arb, size: arb, n: int, precision: int) -> arb:
    """W of the module docstring, size its S (or T), at most a pair's ball's radius at `precision` bits."""
    return E * (1 + n * arb(2) ** -20) + 4 * (n + 2) * arb(2) ** -precision * (1 + size + E)
