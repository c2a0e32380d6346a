"""decimal_ends and signed_text on arbitrary arb balls: exponents far past binary64's, exact points, radius 0,
balls around 0, up to 60 digits.  Every printed end, read as an exact decimal, lies outside the ball, a ball
that excludes 0 keeps its sign in both ends, and a ball that is not finite gives the whole line."""

from __future__ import annotations

from fractions import Fraction

from flint import arb, fmpz
from hypothesis import example, given, settings
from hypothesis import strategies as st

from certify.core.numbers import decimal_ends, signed_text

EXPONENT = 3_400_000  # 2^3.4e6 ~ 10^(10^6)


def _exact(point: arb) -> Fraction:
    mantissa, exponent = (int(part) for part in point.mid().man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


def _dyadic(mantissa: int, exponent: int) -> arb:
    return arb(fmpz(mantissa)) * arb(2) ** exponent  # exact: a power of two times an integer


@st.composite
def balls(draw):
    mid = _dyadic(draw(st.integers(-2**80, 2**80)), draw(st.integers(-EXPONENT, EXPONENT)))
    if draw(st.booleans()):
        return mid  # an exact point (radius 0), 0 included
    near = draw(st.booleans())  # a radius close to the midpoint's size: the ball may or may not reach 0
    if near and mid != 0:
        exponent = int(mid.mid().man_exp()[1]) + mid.mid().man_exp()[0].bit_length() - draw(st.integers(-2, 40))
    else:
        exponent = draw(st.integers(-EXPONENT, EXPONENT))
    return arb(mid, _dyadic(draw(st.integers(1, 2**30)), exponent))


def _sign(x: arb) -> int:
    return 1 if x > 0 else -1 if x < 0 else 0


@settings(max_examples=60, deadline=None)
@given(balls(), st.integers(1, 60))
@example(arb(arb("1.96e+1000006"), arb("1.66e+999991")), 1)  # moving m by r in the default context overflowed
def test_decimal_ends_enclose_every_point_and_keep_the_sign(ball, digits):
    lo, hi = decimal_ends(ball, digits)
    low, high = Fraction(lo), Fraction(hi)
    assert low <= _exact(ball.lower()) and _exact(ball.upper()) <= high
    assert "-0" not in (lo, hi) and len(lo.lstrip("-").split("e")[0].replace(".", "").lstrip("0")) <= digits
    sign = _sign(ball)
    if sign:  # within decimal's exponents a rounding outward never reaches 0: both ends show the sign
        assert _sign(arb(low.numerator) / low.denominator) == sign == _sign(arb(high.numerator) / high.denominator)


@settings(max_examples=60, deadline=None)
@given(balls(), st.integers(1, 60))
def test_signed_text_shows_a_decided_sign(ball, digits):
    text = signed_text(ball, digits)
    if text.startswith("[") and "+/-" not in text:
        lo, hi = (Fraction(end) for end in text.strip("[]").split(", "))
        assert lo <= _exact(ball.lower()) and _exact(ball.upper()) <= hi
        assert (lo > 0) == (ball > 0) and (hi < 0) == (ball < 0)
    else:
        assert text == ball.str(digits, radius=True)
        if text.startswith("[+/-"):  # arb's text without a digit is kept only where the sign is undecided
            assert ball.contains(0)


def test_balls_that_are_not_finite_give_the_whole_line():
    for ball in (arb("nan"), arb("inf"), arb("-inf"), arb(0, arb("inf")), arb(1, arb("nan"))):
        assert decimal_ends(ball, 5) == ("-inf", "+inf")
        assert signed_text(ball, 5) == ball.str(5, radius=True)
