"""Enclosures of the reduced ratio F = m(w + L/2) - m(w - L/2) over boxes, in endpoint form.

m(theta) is the mean of the positions tau = (0, t_2, ..., t_{n-1}, 1) under the exponential tilt
p_j = exp(theta tau_j) / sum_k exp(theta tau_k) (proofs/region_line.py; n = 2 has no inner
position and m = sigma, proofs/region_two_tokens.py).  Boxes have exact rational sides.

Every positive quantity is kept as a pair of tight balls (a lower and an upper end), each
computed from exact rational arguments: a midpoint-radius ball of exp over a wide interval loses
its sign (exp([0, 100]) is [+/- 2.7e43] in arb), and a sum of positive terms spanning orders of
magnitude would then no longer be known to be positive.
  p_j = 1 / (1 + sum_{k != j} exp(theta (tau_k - tau_j))) lies between the values at the extreme
      exponents, which are products of intervals with exact ends (outward-rounded where inexact);
  1 - m = sum_j (1 - tau_j) p_j and m = sum_j tau_j p_j are sums of nonnegative terms, so
      1 - F = (1 - m(theta+)) + m(theta-) is enclosed with relative accuracy, never by cancellation.
"""

from __future__ import annotations

import functools
from fractions import Fraction

from flint import arb, ctx, fmpq

Interval = tuple[Fraction, Fraction]


def exact(q: Fraction) -> arb:
    """An arb ball containing the rational q (exact when q is dyadic and fits the working precision)."""
    return arb(fmpq(q.numerator, q.denominator))


def _ends(interval: Interval) -> tuple[arb, arb]:
    """Exact points below and above the interval (the box's own ends when they are dyadic)."""
    return exact(interval[0]).lower(), exact(interval[1]).upper()


def _product_ends(x: tuple[arb, arb], y: tuple[arb, arb]) -> tuple[arb, arb]:
    products = [x[0] * y[0], x[0] * y[1], x[1] * y[0], x[1] * y[1]]
    low, high = products[0].lower(), products[0].upper()
    for p in products[1:]:
        low, high = low.min(p.lower()), high.max(p.upper())
    return low, high


def positions(inner: tuple[Interval, ...]) -> list[tuple[arb, arb]]:
    """The ends of all n positions: 0, the inner ones, 1."""
    zero, one = arb(0), arb(1)
    return [(zero, zero), *(_ends(t) for t in inner), (one, one)]


def _scaled_ends(theta: Interval):
    """x -> the ends of theta * [x_lo, x_hi]: by the sign of a point theta, else all four products."""
    if theta[0] == theta[1]:
        t = exact(theta[0])
        if theta[0] >= 0:
            return lambda lo, hi: ((t * lo).lower(), (t * hi).upper())
        return lambda lo, hi: ((t * hi).lower(), (t * lo).upper())
    ends = _ends(theta)
    return lambda lo, hi: _product_ends(ends, (lo, hi))


def weights(theta: Interval, taus: list[tuple[arb, arb]]) -> list[tuple[arb, arb]]:
    """For each j, balls whose lower end of the first and upper end of the second bound p_j."""
    scaled = _scaled_ends(theta)
    out = []
    for j, (a_j, b_j) in enumerate(taus):
        low_sum, high_sum = arb(1), arb(1)  # the k = j term is exp(0) = 1 exactly
        for k, (a_k, b_k) in enumerate(taus):
            if k != j:
                lo, hi = scaled((a_k - b_j).lower(), (b_k - a_j).upper())
                low_sum += lo.exp()
                high_sum += hi.exp()
        out.append((1 / high_sum, 1 / low_sum))
    return out


def tails(theta: Interval, inner: tuple[Interval, ...]) -> tuple[tuple[arb, arb], tuple[arb, arb]]:
    """Lower and upper end balls of m(theta) and of 1 - m(theta) over the box."""
    return _tails(theta, inner, ctx.prec)


@functools.lru_cache(maxsize=1 << 16)  # neighbouring boxes and the split heuristic share many ends
def _tails(theta: Interval, inner: tuple[Interval, ...], precision: int):
    taus = positions(inner)
    p = weights(theta, taus)
    m_lo = sum((a * lo for (a, _), (lo, _) in zip(taus, p)), arb(0))
    m_hi = sum((b * hi for (_, b), (_, hi) in zip(taus, p)), arb(0))
    u_lo = sum(((1 - b) * lo for (_, b), (lo, _) in zip(taus, p)), arb(0))
    u_hi = sum(((1 - a) * hi for (a, _), (_, hi) in zip(taus, p)), arb(0))
    return (m_lo, m_hi), (u_lo, u_hi)


def one_minus_ratio_lower(w: Interval, L: Interval, inner: tuple[Interval, ...]) -> arb:
    """A ball whose lower end bounds 1 - F from below on the box.

    m increases with theta (m' is a variance), so m(w + L/2) <= m(w_hi + L_hi/2) and
    m(w - L/2) >= m(w_lo - L_hi/2): 1 - F >= (1 - m)(w_hi + L_hi/2) + m(w_lo - L_hi/2).
    """
    top = w[1] + L[1] / 2
    bottom = w[0] - L[1] / 2
    _, (u_lo, _) = tails((top, top), inner)
    (m_lo, _), _ = tails((bottom, bottom), inner)
    return u_lo + m_lo


def _ball(ends: tuple[arb, arb]) -> arb:
    return ends[0].union(ends[1])


def _min_spread(a: arb, b: arb) -> arb:
    """A lower end for tau (1 - tau) on [a, b] inside [0, 1] (concave: the smaller end value)."""
    return (a * (1 - a)).lower().min((b * (1 - b)).lower())


def mean_range(theta: Interval, inner: tuple[Interval, ...]) -> tuple[arb, arb]:
    """Exact points below and above m over theta in the interval and the box (m increases in theta)."""
    (m_lo, _), (_, u_hi) = tails((theta[0], theta[0]), inner)
    (_, m_hi), (u_lo, _) = tails((theta[1], theta[1]), inner)
    low = m_lo.lower().max((1 - u_hi.upper()).lower()).max(arb(0))
    high = m_hi.upper().min((1 - u_lo.lower()).upper()).min(arb(1))
    return low, high


def variance_upper(theta: Interval, inner: tuple[Interval, ...]) -> arb:
    """A ball whose upper end bounds m'(theta) = Var over theta in the interval and the box.

    Var = m (1 - m) - sum_j p_j tau_j (1 - tau_j) (proofs/region_tilt.py): m (1 - m) is at most
    its value at the end of m's range nearest 1/2 (1/4 when the range holds 1/2), and the sum is
    at least its terms' lower ends.
    """
    low, high = mean_range(theta, inner)
    half = arb(1) / 2
    if high.upper() < half:
        spread = high * (1 - high)
    elif low.lower() > half:
        spread = low * (1 - low)
    else:
        spread = half * half
    taus = positions(inner)
    p = weights(theta, taus)
    correction = sum((lo.lower().max(arb(0)) * _min_spread(a, b) for (a, b), (lo, _) in zip(taus, p)), arb(0))
    return spread - correction.max(arb(0))


def slope_margins(w: Interval, L: Interval, inner: tuple[Interval, ...]) -> tuple[tuple[arb, arb], ...]:
    """For each inner position t: two balls whose lower ends, when >= 0, prove dF/dt <= 0 (the first) or
    dF/dt >= 0 (the second) on the box.

    dm/dt = p_t (1 + theta (t - m)) and d2m/dtheta dt = p_t ((t - m)(2 + theta (t - m)) - theta Var), Var over
    all n positions (proofs/region_line.py).  Either test proves a sign:
      (A) every dm/dt over the range of theta+ = w + L/2 is below (above) every one over the range of
          theta- = w - L/2;
      (B) d2m/dtheta dt <= 0 (>= 0) over [w_lo - L_hi/2, w_hi + L_hi/2], since dF/dt is the integral of it
          between theta- and theta+ (L >= 0).
    Quantities that depend on each other are enclosed as independent balls: loose, never wrong.
    """
    return _slope_margins(w, L, inner, ctx.prec)


def _best(*candidates: arb) -> arb:
    """The largest of the finite candidates (a NaN ball when none is finite: it closes nothing)."""
    finite = [c for c in candidates if c.is_finite()]
    if not finite:
        return arb("nan")
    out = finite[0]
    for c in finite[1:]:
        out = out.max(c)
    return out


def _times(x: arb, y: arb) -> arb:
    """x y over the intervals of two balls, from their ends: a midpoint-radius product of wide balls loses the
    sign ([1/3, 1/2] [1, 5.9] is [-0.14, 2.9] as balls, [0.33, 2.9] from the ends)."""
    low, high = _product_ends((x.lower(), x.upper()), (y.lower(), y.upper()))
    return low.union(high)


def _square(x: arb) -> arb:
    """x^2 over the interval of a ball, from its ends: [0, max end^2] when it holds 0."""
    a, b = abs(x.lower()), abs(x.upper())
    low = arb(0) if x.lower() <= 0 <= x.upper() else (a * a).lower().min((b * b).lower())
    return low.union((a * a).upper().max((b * b).upper()))


def position_slopes(theta: Interval, inner: tuple[Interval, ...]) -> list[tuple[arb, arb]]:
    """For each inner position t, balls holding dm/dt = p_t (1 + theta (t - m)) and d2m/dtheta dt = p_t ((t - m)
    (2 + theta (t - m)) - theta Var) over theta in the interval and the box, every product taken from ends (_times)."""
    taus = positions(inner)
    p = [_ball(pair) for pair in weights(theta, taus)]
    low, high = mean_range(theta, inner)
    m, th = low.union(high), _ball(_ends(theta))
    variance = sum((_times(pj, _square(_ball(tau) - m)) for pj, tau in zip(p, taus)), arb(0)).nonnegative_part()
    out = []
    for pt, tau in zip(p[1:-1], taus[1:-1]):
        spread = _ball(tau) - m
        tilted = _times(th, spread)
        out.append((_times(pt, 1 + tilted), _times(pt, _times(spread, 2 + tilted) - _times(th, variance))))
    return out


@functools.lru_cache(maxsize=1 << 14)  # the closing tests and the split heuristic ask for the same boxes
def _slope_margins(w: Interval, L: Interval, inner: tuple[Interval, ...], precision: int):
    plus = position_slopes((w[0] + L[0] / 2, w[1] + L[1] / 2), inner)
    minus = position_slopes((w[0] - L[1] / 2, w[1] - L[0] / 2), inner)
    by_ends = [(lo[0].lower() - hi[0].upper(), hi[0].lower() - lo[0].upper()) for hi, lo in zip(plus, minus)]
    if all(a >= 0 or b >= 0 for a, b in by_ends):  # (A) proves every sign: (B) adds nothing
        return tuple(by_ends)
    mixed = position_slopes((w[0] - L[1] / 2, w[1] + L[1] / 2), inner)
    return tuple((_best(a, -both[1].upper()), _best(b, both[1].lower())) for (a, b), both in zip(by_ends, mixed))
