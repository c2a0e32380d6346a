"""x**p for random positive rational constants p = k/m (m up to 10^6, p up to MAX_POWER) on random balls of x:
exact points, tiny and huge, balls touching or crossing 0.  The prover's enclosure and the checker's each hold
mpmath's x**p (at 120 digits) at both ends and the midpoint of the ball wherever it is finite, and a ball with a
negative point never gives a finite enclosure that excludes the power of its admissible points."""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpz
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from certify.core import expr
from certify.core.arith import BALL
from certify.errors import BadInput
from certify_checker import formula


def _dyadic(mantissa: int, exponent: int) -> arb:
    return arb(fmpz(mantissa)) * arb(2) ** exponent


def _mp(point: arb):
    mantissa, exponent = (int(part) for part in point.mid().man_exp())
    return mp.ldexp(mp.mpf(mantissa), exponent)  # exact: mp.prec covers the mantissa


@st.composite
def powers(draw):
    m = draw(st.integers(1, 10**6))
    k = draw(st.integers(1, expr.MAX_POWER * m))
    return Fraction(k, m)


@st.composite
def bases(draw):
    kind = draw(st.sampled_from(["point", "zero", "tiny", "huge", "touching", "crossing", "negative", "any"]))
    mantissa = draw(st.integers(1, 2**60))
    if kind == "zero":
        return arb(0)
    if kind == "tiny":
        return arb(_dyadic(mantissa, -1000 - 60), draw(st.sampled_from([0, 2.0**-1200])))  # ~1e-300
    if kind == "huge":
        return arb(_dyadic(mantissa, 997 - 60), _dyadic(1, draw(st.integers(800, 990))))  # ~1e300
    if kind == "touching":
        r = _dyadic(mantissa, draw(st.integers(-200, 10)))
        return arb(r, r)  # [0, 2r] (arb's radius rounds up: the ball may reach just below 0)
    if kind == "crossing":
        return arb(_dyadic(mantissa, -70), _dyadic(1, draw(st.integers(-20, 5))))
    if kind == "negative":
        return arb(-_dyadic(mantissa, draw(st.integers(-100, 100))))
    exponent = draw(st.integers(-200, 200))
    return arb(_dyadic(draw(st.integers(-2**60, 2**60)), exponent), _dyadic(draw(st.integers(0, 8)), exponent - 3))


def _text(p: Fraction) -> str:
    return f"D**({p.numerator}/{p.denominator})"


def _values(text: str, base: arb) -> dict:
    out = {}
    try:
        out["prover"] = expr.parse(text).evaluate(BALL, {"D": base})
    except BadInput:
        out["prover"] = None  # refused: certainly below 0
    out["checker"] = formula.evaluate(text, lambda name: base)
    return out


@settings(max_examples=120, deadline=None)
@given(powers(), bases(), st.sampled_from([53, 128]))
def test_a_positive_rational_power_encloses_mpmaths_at_every_admissible_point(p, base, precision):
    with ctx.workprec(precision):
        values = _values(_text(p), base)
    with mp.workprec(4000), ctx.workprec(4000):  # the balls' ends exact (at 53 bits lower() rounds outward)
        exponent = mp.mpf(p.numerator) / p.denominator
        points = [_mp(base.lower()), _mp(base.mid()), _mp(base.upper())]
        for who, value in values.items():
            if value is None:
                assert who == "prover" and base < 0
                continue
            if not value.is_finite():
                continue
            assert base >= 0, (who, base, value)  # a finite power: no negative point in the ball
            low, high = _mp(value.lower()), _mp(value.upper())
            for t in points:
                true = mp.zero if t == 0 else mp.exp(exponent * mp.log(t))
                slack = abs(true) * mp.ldexp(1, -3900)  # mpmath's own error at 4000 bits (t**1 is an end exactly)
                assert low - slack <= true <= high + slack, (who, p, base, value, t)
