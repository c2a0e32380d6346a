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


INF = arb("inf")


def _ends(*balls):
    """(lowest lower end, highest upper end) of the balls; a NaN ball leaves that side unbounded."""
    lo, hi = INF, -INF
    for b in balls:
        lo, hi = lo.min(-INF if b.is_nan() else b.lower()), hi.max(INF if b.is_nan() else b.upper())
    return lo, hi


def _mul(x, y):
    """The products of two intervals' ends (0 times an infinite end is 0: every value is a finite real)."""
    return _ends(*(arb(0) if a == 0 or b == 0 else a * b for a in x for b in y))


def _sum(x, y):
    return _ends(x[0] + y[0])[0], _ends(x[1] + y[1])[1]


def _abs(x):
    lo, hi = x
    return (lo, hi) if lo >= 0 else (-hi, -lo) if hi <= 0 else (arb(0), hi.max(-lo))


def _image(f, x):
    """f over the interval x, f monotone on it: the hull of its values at the ends."""
    return _ends(f(x[0]), f(x[1]))


def _inverse(x, positive):
    """1/x over the interval x of values > 0 (1/0 = +inf at a lower end clipped to 0) or certainly < 0."""
    if not (positive or x[1] < 0):
        raise ArithmeticError("a division by a value not proved nonzero")
    return _ends(1 / x[1])[0], (INF if positive and not x[0] > 0 else _ends(1 / x[0])[1])


class Dual:
    """A bound g and its slope g' over L in (0, top] as intervals whose ends may be infinite, and whether g > 0
    there: for every such L, g(L) and g'(L) (a Clarke generalised derivative at a min or max) lie in them, so
    sqrt(L)' = 1/(2 sqrt(L)) keeps its lower end 1/(2 sqrt(top)), which a ball over [0, top] loses.  Monotone
    functions (cosh, squares in |x|) take their values at the ends; division, log, sqrt and x**p (p < 1) need the
    argument proved > 0 on (0, top] (x**p for p > 1: >= 0), else ArithmeticError: no enclosure."""

    def __init__(self, value, slope, positive=False):
        self.value, self.slope = value, slope
        self.positive = positive or value[0] > 0

    @staticmethod
    def over(top):
        return Dual((arb(0), point(top)), (arb(1), arb(1)), True)

    @staticmethod
    def of(x):
        return x if isinstance(x, Dual) else Dual(_ends(x if isinstance(x, arb) else arb(x)), (arb(0), arb(0)))

    def _then(self, value, derivative, positive):
        return Dual(value, _mul(derivative, self.slope), positive)

    def __add__(self, o):
        o = Dual.of(o)
        positive = (self.positive and o.value[0] >= 0) or (o.positive and self.value[0] >= 0)
        return Dual(_sum(self.value, o.value), _sum(self.slope, o.slope), positive)

    __radd__ = __add__

    def __neg__(self):
        return Dual((-self.value[1], -self.value[0]), (-self.slope[1], -self.slope[0]))

    def __sub__(self, o):
        return self + (-Dual.of(o))

    def __rsub__(self, o):
        return Dual.of(o) + (-self)

    def __mul__(self, o):
        o = Dual.of(o)
        slope = _sum(_mul(self.value, o.slope), _mul(self.slope, o.value))
        return Dual(_mul(self.value, o.value), slope, self.positive and o.positive)

    __rmul__ = __mul__

    def __truediv__(self, o):
        o = Dual.of(o)
        inverse = _inverse(o.value, o.positive)
        q = _mul(self.value, inverse)
        return Dual(q, _mul(_sum(self.slope, _mul((-q[1], -q[0]), o.slope)), inverse), self.positive and o.positive)

    def __rtruediv__(self, o):
        return Dual.of(o) / self

    def _needs_positive(self):
        if not self.positive:
            raise ArithmeticError("log, sqrt or a power below 1 of a value not proved > 0")

    def exp(self):
        e = _image(arb.exp, self.value)
        return self._then(e, e, True)

    def log(self):
        self._needs_positive()
        return self._then(_image(lambda x: x.log() if x > 0 else -INF, self.value), _inverse(self.value, True), False)

    def sqrt(self):
        self._needs_positive()
        s = _image(lambda x: x.max(arb(0)).sqrt(), self.value)
        return self._then(s, _inverse(_mul((arb(2), arb(2)), s), True), True)

    def power(self, p: arb):
        """self**p for a constant p > 0: the slope p self**(p - 1) self', x**q monotone in x >= 0."""
        if not (self.positive or (p > 1 and self.value[0] >= 0)):
            self._needs_positive()
        if not (p > 1 or p < 1 or p == 1):  # 0**(p - 1) is 0 or +inf by the sign of p - 1
            raise ArithmeticError("an exponent not certainly above, below or at 1")
        to = lambda e: lambda x: (arb(0) if e > 0 else arb(1) if e == 0 else INF) if x == 0 else (e * x.log()).exp()
        ends = (self.value[0].max(arb(0)), self.value[1])
        return self._then(_image(to(p), ends), _mul(_ends(p), _image(to(p - 1), ends)), self.positive)

    def tanh(self):  # tanh' = 1/cosh^2: no cancellation as tanh nears 1
        c = _image(arb.cosh, _abs(self.value))
        return self._then(_image(arb.tanh, self.value), _inverse(_mul(c, c), True), self.positive)

    def sinh(self):
        return self._then(_image(arb.sinh, self.value), _image(arb.cosh, _abs(self.value)), self.positive)

    def cosh(self):
        return self._then(_image(arb.cosh, _abs(self.value)), _image(arb.sinh, self.value), True)

    def _pick(self, o, larger: bool):
        o = Dual.of(o)
        if (o.value[0] > self.value[1]) if larger else (o.value[1] < self.value[0]):
            return o
        if (o.value[1] < self.value[0]) if larger else (o.value[0] > self.value[1]):
            return self
        ends = [arb.max(a, b) if larger else arb.min(a, b) for a, b in zip(self.value, o.value)]
        positive = (self.positive or o.positive) if larger else (self.positive and o.positive)
        return Dual(tuple(ends), _ends(*self.slope, *o.slope), positive)  # Clarke: either side's derivative

    def max(self, o):
        return self._pick(o, True)

    def min(self, o):
        return self._pick(o, False)
