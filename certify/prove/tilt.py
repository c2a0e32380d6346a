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

from fractions import Fraction

from flint import arb, fmpq

Interval = tuple[Fraction, Fraction]


def exact(q: Fraction) -> arb:
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


def weights(theta: Interval, taus: list[tuple[arb, arb]]) -> list[tuple[arb, arb]]:
    """For each j, balls whose lower end of the first and upper end of the second bound p_j."""
    theta_ends = _ends(theta)
    out = []
    for j, (a_j, b_j) in enumerate(taus):
        low_sum, high_sum = arb(1), arb(1)  # the k = j term is exp(0) = 1 exactly
        for k, (a_k, b_k) in enumerate(taus):
            if k != j:
                lo, hi = _product_ends(theta_ends, ((a_k - b_j).lower(), (b_k - a_j).upper()))
                low_sum += lo.exp()
                high_sum += hi.exp()
        out.append((1 / high_sum, 1 / low_sum))
    return out


def tails(theta: Interval, inner: tuple[Interval, ...]) -> tuple[tuple[arb, arb], tuple[arb, arb]]:
    """Lower and upper end balls of m(theta) and of 1 - m(theta) over the box."""
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


def variance_upper(theta: Interval, inner: tuple[Interval, ...]) -> arb:
    """A ball whose upper end bounds m'(theta) = Var over theta in the interval and the box.

    Bhatia-Davis on [0, 1]: Var <= m (1 - m), at most 1/4; m is increasing in theta, so m lies
    between its lower end at theta_lo and its upper end at theta_hi.
    """
    (m_lo, _), (_, u_hi) = tails((theta[0], theta[0]), inner)
    (_, m_hi), (u_lo, _) = tails((theta[1], theta[1]), inner)
    low = m_lo.lower().max((1 - u_hi.upper()).lower()).max(arb(0))
    high = m_hi.upper().min((1 - u_lo.lower()).upper()).min(arb(1))
    half = arb(1) / 2
    # A NaN end fails both tests and leaves Popoviciu's 1/4, which holds for every distribution on [0, 1].
    if high.upper() < half:
        return high * (1 - high)
    if low.lower() > half:
        return low * (1 - low)
    return half * half
