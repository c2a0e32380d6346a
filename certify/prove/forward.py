"""Forward-mode differentiation in arb: a value and its first derivative, carried together.

`Jet(v, d)` stands for v + d eps with eps^2 = 0; every operation applies the chain rule, so a
bound expression evaluated on Jet(L, 1) gives g(L) and g'(L) as balls.  Evaluated on a ball L
that covers an interval, the derivative ball encloses g' at every point of it, which is what a
mean value form needs.  `JETS` is the arithmetic backend of certify.core.expr for jets.

min and max: where the two values may coincide, the derivative is the union of both sides'
(a Clarke generalised derivative, which the mean value inequality allows).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from certify.core.arith.ball import to_arb


@dataclass(frozen=True)
class Jet:
    """value + slope * eps with eps^2 = 0: a ball enclosing g and a ball enclosing g' at the same (interval)
    point, propagated by the chain rule through + - * / and the functions of JETS."""
    value: arb
    slope: arb

    @staticmethod
    def lift(x) -> "Jet":
        """`x` as a jet: a Jet unchanged, a constant (arb, or anything certify.core.arith.ball.to_arb takes)
        with slope 0."""
        return x if isinstance(x, Jet) else Jet(x if isinstance(x, arb) else to_arb(x), arb(0))

    def __add__(self, other):
        other = Jet.lift(other)
        return Jet(self.value + other.value, self.slope + other.slope)

    __radd__ = __add__

    def __neg__(self):
        return Jet(-self.value, -self.slope)

    def __sub__(self, other):
        return self + (-Jet.lift(other))

    def __rsub__(self, other):
        return Jet.lift(other) - self

    def __mul__(self, other):
        other = Jet.lift(other)
        return Jet(self.value * other.value, self.slope * other.value + self.value * other.slope)

    __rmul__ = __mul__

    def __truediv__(self, other):
        other = Jet.lift(other)
        quotient = self.value / other.value
        return Jet(quotient, (self.slope - quotient * other.slope) / other.value)

    def __rtruediv__(self, other):
        return Jet.lift(other) / self


def _chain(x: Jet, value: arb, derivative: arb) -> Jet:
    return Jet(value, derivative * x.slope)


def _apply(name: str, x: Jet) -> Jet:
    v = x.value
    if name == "exp":
        e = v.exp()
        return _chain(x, e, e)
    if name == "log":
        return _chain(x, v.log(), 1 / v)
    if name == "sqrt":
        s = v.sqrt()
        return _chain(x, s, 1 / (2 * s))
    if name == "tanh":
        t = v.tanh()
        return _chain(x, t, 1 - t * t)
    if name == "sinh":
        return _chain(x, v.sinh(), v.cosh())
    if name == "cosh":
        return _chain(x, v.cosh(), v.sinh())
    raise ValueError(f"no derivative rule for {name}")


def _extreme(values, largest: bool) -> Jet:
    best = values[0]
    for other in values[1:]:
        if (other.value > best.value) if largest else (other.value < best.value):
            best = other
        elif not ((other.value < best.value) if largest else (other.value > best.value)):
            best = Jet(best.value.max(other.value) if largest else best.value.min(other.value),
                       best.slope.union(other.slope))
    return best


class _Jets:
    """The backend interface certify.core.expr evaluates with (number, apply, stack, maximum, minimum)."""

    @staticmethod
    def number(value: Fraction) -> Jet:
        return Jet(to_arb(value), arb(0))

    @staticmethod
    def apply(name: str, x) -> Jet:
        return _apply(name, Jet.lift(x))

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
        """Never certain on a box: a log or sqrt outside its domain makes a NaN jet, which closes nothing."""
        return False

    @staticmethod
    def certainly_zero(x) -> bool:
        """Never certain on a box: a division by a jet around 0 is not finite, which closes nothing."""
        return False


JETS = _Jets()
