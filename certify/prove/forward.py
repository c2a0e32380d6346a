"""Forward-mode differentiation over an interval of L, in extended interval arithmetic.

`Jet.variable(lo, hi)` stands for L on the half-open interval (lo, hi], lo >= 0; every operation applies
the chain rule to intervals (lower end, upper end), so a bound expression evaluated on it gives, for every
L in (lo, hi], g(L) in `value` and g'(L) in `slope`.  The ends are exact arb points and may be infinite:
sqrt(L) over (0, h] has the slope 1/(2 sqrt(L)) in [1/(2 sqrt(h)), +inf), whose finite lower end is what
the divided and chord tests need at L_lo = 0 (a ball over [0, h] holds it too, but as a ball of infinite
radius, which loses it).  The rules:
    +, -, *              the ends' sums and the least and largest products of the ends, with 0 times an
                         infinite end 0 (every operand's values are finite reals on (lo, hi]);
    /, sqrt, log, x**p   need the argument > 0 on (lo, hi] (`positive`, proved by the rules below, or a
                         lower end > 0) or, for x**p with p > 1, >= 0: else Undefined (no enclosure);
                         1/y for y > 0 on (lo, hi] with values in [a, b] lies in [1/b, 1/a], 1/a = +inf
                         for a <= 0 (y > 0 where it is taken);
    exp, log, sqrt, tanh, sinh, x**p (p > 0) increase: their values at the ends; cosh decreases then
                         increases (least at the point of the interval nearest 0); x**(p - 1) increases
                         for p > 1 and decreases for p < 1 (0**(p - 1) = +inf there);
    positive             L (lo >= 0), a constant > 0, exp and cosh of anything; x + y when one is positive
                         and the other >= 0; x y, x / y, min(x, y) when both are; sqrt, log-free x**p, tanh,
                         sinh of a positive x; max(x, y) when either is; anything whose lower end is > 0;
    min, max             the ends' extremes; the slope of whichever is larger on the whole interval, else the
                         union of both (a Clarke generalised derivative, which the mean value inequality allows).
A value certainly undefined is not an enclosure: Undefined is raised, and the caller closes nothing with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from certify.core.arith.ball import to_arb

Ends = tuple[arb, arb]
NEG_INF, POS_INF = arb("-inf"), arb("inf")


class Undefined(ArithmeticError):
    """The bound is not proved defined and differentiable on the interval: it has no enclosure there."""


def _low(ball: arb) -> arb:
    return NEG_INF if ball.is_nan() else ball.lower()


def _high(ball: arb) -> arb:
    return POS_INF if ball.is_nan() else ball.upper()


def _hull(*balls: arb) -> Ends:
    """The least lower end and the largest upper end of the balls (NaN: no end is known)."""
    lo, hi = _low(balls[0]), _high(balls[0])
    for ball in balls[1:]:
        lo, hi = lo.min(_low(ball)), hi.max(_high(ball))
    return lo, hi


def _add(x: Ends, y: Ends) -> Ends:
    return _low(x[0] + y[0]), _high(x[1] + y[1])


def _times(x: Ends, y: Ends) -> Ends:
    """The interval of the products: 0 times an infinite end is 0, each operand's values being finite reals."""
    return _hull(*(arb(0) if a.is_zero() or b.is_zero() else a * b for a in x for b in y))


def _monotone(f, x: Ends, increasing: bool = True) -> Ends:
    """f over the interval x from its ends, f increasing (or decreasing) on it."""
    lo, hi = f(x[0]), f(x[1])
    return (_low(lo), _high(hi)) if increasing else (_low(hi), _high(lo))


def _reciprocal(y: Ends, positive: bool) -> Ends:
    """1/y over the interval y, for values > 0 (positive: the lower end clipped at 0) or certainly < 0."""
    a, b = y
    if positive:
        return _low(1 / b), (_high(1 / a) if a > 0 else POS_INF)
    if b < 0:
        return _low(1 / b), _high(1 / a)
    raise Undefined("a division by a value not proved nonzero")


def _magnitude(x: Ends) -> Ends:
    """|x| over the interval x."""
    lo, hi = x
    if lo >= 0:
        return lo, hi
    if hi <= 0:
        return -hi, -lo
    return arb(0), hi.max(-lo)


def _power_end(end: arb, p: arb) -> arb:
    """end**p for an end >= 0 (0**p = 0 for p > 0, +inf for p < 0; inf**p the other way round)."""
    if end.is_zero():
        return arb(0) if p > 0 else POS_INF
    return (p * end.log()).exp()


@dataclass(frozen=True)
class Jet:
    """g and g' over L in an interval (lo, hi], as intervals (ends, possibly infinite), and whether g is proved
    > 0 on it (module docstring)."""
    value: Ends
    slope: Ends
    positive: bool

    @staticmethod
    def variable(lo: Fraction, hi: Fraction) -> "Jet":
        """L itself on (lo, hi], 0 <= lo < hi: > 0 there, slope 1."""
        return Jet((_low(to_arb(lo)), _high(to_arb(hi))), (arb(1), arb(1)), True)

    @staticmethod
    def lift(x) -> "Jet":
        """`x` as a jet: a Jet unchanged, a constant (arb, or anything certify.core.arith.ball.to_arb takes)
        with slope 0."""
        if isinstance(x, Jet):
            return x
        ball = x if isinstance(x, arb) else to_arb(x)
        return Jet.of(_hull(ball), (arb(0), arb(0)), False)

    @staticmethod
    def of(value: Ends, slope: Ends, positive: bool) -> "Jet":
        """The jet of these ends, positive also where its value's lower end is > 0."""
        return Jet(value, slope, positive or value[0] > 0)

    def __add__(self, other):
        other = Jet.lift(other)
        positive = (self.positive and other.value[0] >= 0) or (other.positive and self.value[0] >= 0)
        return Jet.of(_add(self.value, other.value), _add(self.slope, other.slope), positive)

    __radd__ = __add__

    def __neg__(self):
        return Jet.of((-self.value[1], -self.value[0]), (-self.slope[1], -self.slope[0]), False)

    def __sub__(self, other):
        return self + (-Jet.lift(other))

    def __rsub__(self, other):
        return Jet.lift(other) - self

    def __mul__(self, other):
        other = Jet.lift(other)
        slope = _add(_times(self.slope, other.value), _times(self.value, other.slope))
        return Jet.of(_times(self.value, other.value), slope, self.positive and other.positive)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = Jet.lift(other)
        inverse = _reciprocal(other.value, other.positive)
        quotient = _times(self.value, inverse)
        slope = _times(_add(self.slope, _times((-quotient[1], -quotient[0]), other.slope)), inverse)
        return Jet.of(quotient, slope, self.positive and other.positive)

    def __rtruediv__(self, other):
        return Jet.lift(other) / self

    def chain(self, value: Ends, derivative: Ends, positive: bool) -> "Jet":
        """f(self) from f's interval and f''s over self's values: the slope is f' times self's slope."""
        return Jet.of(value, _times(derivative, self.slope), positive)

    def power(self, p: Fraction) -> "Jet":
        """self**p for a constant p > 0 (not a whole number): p self**(p - 1) self'."""
        if not (self.positive or (p > 1 and self.value[0] >= 0)):
            raise Undefined("a power of a value not proved positive")
        ends = (self.value[0].max(arb(0)), self.value[1])
        exponent, below = to_arb(p), to_arb(p - 1)
        value = _monotone(lambda e: _power_end(e, exponent), ends)
        derivative = _times((_low(exponent), _high(exponent)), _monotone(lambda e: _power_end(e, below), ends, p > 1))
        return self.chain(value, derivative, self.positive)


def _apply(name: str, x: Jet) -> Jet:
    if name == "exp":
        value = _monotone(arb.exp, x.value)
        return x.chain(value, value, True)
    cosh = _monotone(arb.cosh, _magnitude(x.value))  # cosh(x) = cosh(|x|), increasing in |x|
    if name == "sinh":
        return x.chain(_monotone(arb.sinh, x.value), cosh, x.positive)
    if name == "cosh":
        return x.chain(cosh, _monotone(arb.sinh, x.value), True)
    if name == "tanh":  # tanh' = 1/cosh^2, > 0 however close tanh comes to 1 (1 - tanh^2 would cancel)
        return x.chain(_monotone(arb.tanh, x.value), _reciprocal(_times(cosh, cosh), True), x.positive)
    if not x.positive:  # log, sqrt: undefined or not differentiable where x = 0
        raise Undefined(f"{name} of a value not proved positive")
    if name == "log":  # log' = 1/x
        value = _monotone(lambda e: e.log() if e > 0 else NEG_INF, x.value)
        return x.chain(value, _reciprocal(x.value, True), False)
    if name == "sqrt":  # sqrt' = 1/(2 sqrt(x))
        value = _monotone(lambda e: e.max(arb(0)).sqrt(), x.value)
        return x.chain(value, _reciprocal(_times((arb(2), arb(2)), value), True), True)
    raise ValueError(f"no derivative rule for {name}")


def _extreme(values, largest: bool) -> Jet:
    best = values[0]
    for other in values[1:]:
        if (other.value[0] > best.value[1]) if largest else (other.value[1] < best.value[0]):
            best = other  # the larger (smaller) on the whole interval
        elif not ((other.value[1] < best.value[0]) if largest else (other.value[0] > best.value[1])):
            pick = arb.max if largest else arb.min
            value = (pick(best.value[0], other.value[0]), pick(best.value[1], other.value[1]))
            slope = (best.slope[0].min(other.slope[0]), best.slope[1].max(other.slope[1]))
            positive = (best.positive or other.positive) if largest else (best.positive and other.positive)
            best = Jet.of(value, slope, positive)
    return best


class _Jets:
    """The backend interface certify.core.expr evaluates with (number, apply, one_minus_exp, stack, maximum, minimum, and
    positive_power: x**p by its own rule, not as exp(p log x), which loses the lower end of p x**(p - 1))."""

    @staticmethod
    def number(value: Fraction) -> Jet:
        return Jet.lift(value)

    @staticmethod
    def apply(name: str, x) -> Jet:
        return _apply(name, Jet.lift(x))

    @staticmethod
    def one_minus_exp(x) -> Jet:
        """1 - exp(x) through exp's own rule (an interval of x is not tiny where cancellation would matter)."""
        return 1 - _apply("exp", Jet.lift(x))

    @staticmethod
    def positive_power(x, p: Fraction) -> Jet:
        return Jet.lift(x).power(p)

    @staticmethod
    def stack(values):
        return [Jet.lift(v) for v in values]

    @staticmethod
    def maximum(values) -> Jet:
        return _extreme(values, largest=True)

    @staticmethod
    def minimum(values) -> Jet:
        return _extreme(values, largest=False)

    @staticmethod
    def outside_domain(name: str, x) -> bool:
        """Never certain on an interval: a log or sqrt of a value not proved positive raises Undefined."""
        return False

    @staticmethod
    def certainly_zero(x) -> bool:
        """Never certain on an interval: a division by a value not proved nonzero raises Undefined."""
        return False


JETS = _Jets()
