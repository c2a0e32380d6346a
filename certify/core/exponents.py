"""Balls too large or too small for arb's text to be read: printed as 10^[exponent ball].

arb writes a ball's decimal exponent in full: exp(exp(exp(4 D))) at D = 2.2 is about 10^(2.4e3066), and
its text was 6000 characters.  Past EXPONENT_DIGITS digits of exponent, a human-readable line shows an
enclosure of log10 |x| instead, its own exponent in scientific notation.  Certificates and JSON keep
arb's full text.
"""

from __future__ import annotations

import math

import flint
from flint import arb

from certify.core.precision import working

EXPONENT_DIGITS = 12  # 10^[exponent] keeps the exponent's integer digits up to this many
EXPONENT_SHOWN_DIGITS = 6  # significant digits of an exponent written in scientific notation


def log10_ball(x: arb) -> arb:
    """An enclosure of log10 x (x > 0)."""
    return log10_from_log(x.log())


def log10_from_log(log_x: arb) -> arb:
    """log10 x from log x (a value known only through its logarithm)."""
    return log_x / arb(10).log()


def _magnitude_bits(x: arb) -> int:
    """b with |x| < 2^b (0 for x = 0), from the exact midpoint's binary exponent."""
    mantissa, power = (int(part) for part in x.mid().man_exp())
    return mantissa.bit_length() + power if mantissa else 0


def integer_digits(x: arb) -> int:
    """About how many decimal digits the integer part of x's midpoint has."""
    return math.ceil(max(_magnitude_bits(x), 0) * math.log10(2))


def exponent_text(exponent: arb) -> str:
    """10^[exponent ball], with 4 digits after the point while the exponent has at most EXPONENT_DIGITS
    integer digits; past them, in scientific notation to EXPONENT_SHOWN_DIGITS digits: a doubly
    exponential collapse takes the exponent beyond float64, -3^1000 at t = 1000, and its 477 digits
    made each row of a trajectory's table 1500 characters wide."""
    digits = integer_digits(exponent)
    digits = 4 + 1 + digits if digits <= EXPONENT_DIGITS else EXPONENT_SHOWN_DIGITS
    return "10^" + exponent.str(digits, radius=not exponent.is_exact())


def short_form(x: arb) -> str | None:
    """The finite ball x as 10^[enclosure of log10 |x|] (signed; "[+/- 10^[...]]", a bound on |x|, for a ball
    around 0) when arb would write a decimal exponent of more than EXPONENT_DIGITS digits; None when arb's own
    text is short (the ball in ordinary range, or not finite)."""
    if not x.is_finite():
        return None
    # x's decimal exponent is about bits * log10 2, for the midpoint and for the radius that arb also writes
    # (compared as an integer with a float: bits * log10 2 itself overflows a float past 2^1024)
    bits = max(abs(_magnitude_bits(x.mid())), abs(_magnitude_bits(x.rad())))
    if bits < 10**EXPONENT_DIGITS / math.log10(2):
        return None
    # log |x| has bits.bit_length() bits before its point: 64 more give its EXPONENT_SHOWN_DIGITS digits and more
    with working(max(flint.ctx.prec, bits.bit_length() + 64)):
        if x.contains(0):
            return f"[+/- {exponent_text(log10_ball(abs(x).upper()))}]"
        sign = "-" if x < 0 else ""
        return sign + exponent_text(log10_ball(abs(x)))
