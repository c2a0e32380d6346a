"""The checker's own enclosures for region proofs (no code shared with certify).

The reduced ratio is F = m(w + L/2) - m(w - L/2), m the mean of the positions 0, t_2, ...,
t_{n-1}, 1 under the weights p_j = exp(theta tau_j) / sum_k exp(theta tau_k); the claim is
h = g(L) - F >= 0 with g the profile of the bound D g(a D^2).  Inputs are exact rational boxes;
every exp is taken at an exact rational point, so positive terms keep their sign (a ball of exp
over a wide interval does not).
"""

from __future__ import annotations

from fractions import Fraction

from flint import arb, fmpq


def point(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


def _spread(theta, lo: Fraction, hi: Fraction):
    products = [theta[0] * lo, theta[0] * hi, theta[1] * lo, theta[1] * hi]
    return min(products), max(products)


def _taus(inner):
    return [(Fraction(0), Fraction(0)), *inner, (Fraction(1), Fraction(1))]


def weights(theta, taus):
    """(lower, upper) balls of each p_j = 1 / (1 + sum_{k != j} exp(theta (tau_k - tau_j)))."""
    out = []
    for j, (a_j, b_j) in enumerate(taus):
        smallest = largest = arb(1)
        for k, (a_k, b_k) in enumerate(taus):
            if k != j:
                lo, hi = _spread(theta, a_k - b_j, b_k - a_j)
                smallest += point(lo).exp()
                largest += point(hi).exp()
        out.append((1 / largest, 1 / smallest))
    return out


def mean_and_rest(theta, inner):
    """Lower and upper ends of m and of 1 - m for theta and the positions in their intervals."""
    taus = _taus(inner)
    m_lo = m_hi = u_lo = u_hi = arb(0)
    for (a_j, b_j), (p_lo, p_hi) in zip(taus, weights(theta, taus)):
        m_lo, m_hi = m_lo + point(a_j) * p_lo, m_hi + point(b_j) * p_hi
        u_lo, u_hi = u_lo + point(1 - b_j) * p_lo, u_hi + point(1 - a_j) * p_hi
    return (m_lo, m_hi), (u_lo, u_hi)


def rest_of_ratio_lower(w, L, inner) -> arb:
    """1 - F >= (1 - m)(w_hi + L_hi/2) + m(w_lo - L_hi/2), m increasing in theta."""
    top, bottom = w[1] + L[1] / 2, w[0] - L[1] / 2
    _, (u_lo, _) = mean_and_rest((top, top), inner)
    (m_lo, _), _ = mean_and_rest((bottom, bottom), inner)
    return (u_lo + m_lo).lower()


def mean_ends(theta, inner):
    """Points below and above m over the theta interval (m increases in theta)."""
    (m_lo, _), (_, u_hi) = mean_and_rest((theta[0], theta[0]), inner)
    (_, m_hi), (u_lo, _) = mean_and_rest((theta[1], theta[1]), inner)
    low = m_lo.lower().max((1 - u_hi.upper()).lower()).max(arb(0))
    high = m_hi.upper().min((1 - u_lo.lower()).upper()).min(arb(1))
    return low, high


def variance_upper(theta, inner) -> arb:
    """Var = m (1 - m) - sum_j p_j tau_j (1 - tau_j): the first term at most its value nearest
    m = 1/2 (1/4 at most), the sum at least its terms' lower ends (tau (1 - tau) is concave)."""
    low, high = mean_ends(theta, inner)
    if high.upper() < arb(0.5):
        spread = high * (1 - high)
    elif low.lower() > arb(0.5):
        spread = low * (1 - low)
    else:
        spread = arb(0.25)
    taus = _taus(inner)
    correction = arb(0)
    for (a, b), (p_lo, _) in zip(taus, weights(theta, taus)):
        least = min(a * (1 - a), b * (1 - b))
        correction += p_lo.lower().max(arb(0)) * point(least)
    return (spread - correction.max(arb(0))).upper()


class Dual:
    """value + slope eps with eps^2 = 0: first derivatives of a bound, forward mode."""

    def __init__(self, value, slope=None):
        self.value = value if isinstance(value, arb) else arb(value)
        self.slope = arb(0) if slope is None else slope

    @staticmethod
    def of(x):
        return x if isinstance(x, Dual) else Dual(x)

    def __add__(self, o):
        o = Dual.of(o)
        return Dual(self.value + o.value, self.slope + o.slope)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.value, -self.slope)

    def __sub__(self, o):
        return self + (-Dual.of(o))

    def __rsub__(self, o):
        return Dual.of(o) + (-self)

    def __mul__(self, o):
        o = Dual.of(o)
        return Dual(self.value * o.value, self.value * o.slope + self.slope * o.value)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Dual.of(o)
        q = self.value / o.value
        return Dual(q, (self.slope - q * o.slope) / o.value)

    def __rtruediv__(self, o):
        return Dual.of(o) / self

    def exp(self):
        e = self.value.exp()
        return Dual(e, e * self.slope)

    def log(self):
        return Dual(self.value.log(), self.slope / self.value)

    def sqrt(self):
        s = self.value.sqrt()
        return Dual(s, self.slope / (2 * s))

    def tanh(self):
        t = self.value.tanh()
        return Dual(t, (1 - t * t) * self.slope)

    def sinh(self):
        return Dual(self.value.sinh(), self.value.cosh() * self.slope)

    def cosh(self):
        return Dual(self.value.cosh(), self.value.sinh() * self.slope)

    def _pick(self, o, larger: bool):
        o = Dual.of(o)
        if (o.value > self.value) if larger else (o.value < self.value):
            return o
        if (o.value < self.value) if larger else (o.value > self.value):
            return self
        both = self.value.max(o.value) if larger else self.value.min(o.value)
        return Dual(both, self.slope.union(o.slope))  # Clarke: either side's derivative

    def max(self, o):
        return self._pick(o, True)

    def min(self, o):
        return self._pick(o, False)
