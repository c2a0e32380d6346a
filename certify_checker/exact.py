"""The checker's own reading of exact numbers and arb strings, and the few ball helpers every
kind uses (no code shared with certify)."""

from __future__ import annotations

import base64
import functools
import math
import re
import struct
from decimal import MAX_EMAX, MIN_EMIN, ROUND_05UP, Context
from fractions import Fraction

from flint import arb, ctx, fmpq

_HEX = re.compile(r"^([+-]?)0x([0-9a-f]*)(?:\.([0-9a-f]*))?(?:p([+-]?[0-9]+))?$", re.I | re.A)
_DECIMAL_EXPONENT = re.compile(r"e([+-]?[0-9]+)$", re.IGNORECASE)
# The grammar certify reads (certify.core.numbers): a sign, ASCII digits, a decimal or p/q; Fraction reads
# "1_0", "1e1_0" and other scripts' digits too, which a certificate must not hold where certify refuses them.
_DECIMAL_TEXT = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?|[0-9]+/[0-9]+)", re.I | re.A)
# The exponent caps of certify.core.numbers (decimal 4000, binary 4 x 4000): "1e999999999" took hours.
MAX_DECIMAL_EXPONENT = 4000
# A hex mantissa's bits: 4300 digits' (certify's cap on a number, Python's on a decimal's parts) and the exponent cap's
# (trailing zeros); unbounded, a radius of 4 million hex digits took 3.6 s to square in region_proof.work, uncapped.
MAX_HEX_BITS = (10**4300).bit_length() + 4 * MAX_DECIMAL_EXPONENT


# A decimal to 800 significant digits, the dropped ones leaving a trace in the last (ROUND_05UP: it ends in neither 0
# nor 5 where any were dropped): a binary64 number, or the midpoint of two, has at most 768, so it rounds to binary64
# as the text does, in time linear in the digits (exact fractions of 300,000 digits took 5 s).
_SIGNIFICANT = Context(prec=800, rounding=ROUND_05UP, Emax=MAX_EMAX, Emin=MIN_EMIN)


def nearest_binary64(text: str) -> float:
    """The binary64 number nearest to the decimal `text` (a JSON number), ties to even, +-inf beyond the range,
    from its bits by integer arithmetic alone: float() rounds as the floating-point environment does, which a
    library in the process may have set to round down (0.1 read as the number below it)."""
    mantissa, _, power = text.lower().partition("e")
    digits = power.lstrip("+-").lstrip("0")  # an exponent beyond 10^15 as 10^15 (Decimal refuses 10^18): 0 or inf
    shift = int(digits or 0) if len(digits) <= 15 else 10 ** 15
    exact = _SIGNIFICANT.create_decimal(f"{mantissa}e{'-' if power.startswith('-') else ''}{shift}")
    size = exact.adjusted()  # below 10^-324, under half of 2^-1074: 0; from 10^309: inf
    value = Fraction(0) if exact.is_zero() or size < -324 else Fraction(2) ** 1024 if size > 308 else abs(Fraction(exact))
    e = max(value.numerator.bit_length() - value.denominator.bit_length() - 53, -1074)
    e += value / Fraction(2) ** e >= 2 ** 53  # value / 2^e in [2^52, 2^53), or below for a subnormal
    q = round(value / Fraction(2) ** e)  # half to even
    q, e = (q >> 1, e + 1) if q == 2 ** 53 else (q, e)
    bits = q if q < 2 ** 52 else min(e + 1075, 0x7FF) << 52 | (q - 2 ** 52 if e + 1075 < 0x7FF else 0)
    return struct.unpack("<d", struct.pack("<Q", bits | exact.is_signed() << 63))[0]


_SMALLEST = struct.unpack("<d", struct.pack("<Q", 1))[0]  # 2^-1074 from its bits: equal to 0 under denormals-are-zero


def subnormal_unread(value) -> bool:
    """A nonzero binary64 number below 2^-1022 in the JSON tree `value` (a binary64 block's too, from its bytes) where
    this process reads such a number as 0 or 2^-1023: denormals-are-zero (a fast-math library sets it when loaded)
    makes float.hex, Fraction(x) and arb(x) do so, and a false verdict was confirmed on numbers it does not state."""
    stack = [value] if _SMALLEST == 0.0 else []
    while stack:
        node = stack.pop()
        block = isinstance(node, dict) and set(node) == {"binary64", "shape"}
        raw = base64.b64decode(node["binary64"]) if block else b""
        children = () if block else node.values() if isinstance(node, dict) else node
        floats = [c for c in children if type(c) is float]
        raw = raw[:len(raw) // 8 * 8] + struct.pack(f"<{len(floats)}d", *floats)
        if any(0 < w & ~(1 << 63) < 1 << 52 for w in struct.unpack(f"<{len(raw) // 8}Q", raw)):
            return True
        stack += [c for c in children if isinstance(c, (dict, list))]
    return False


def rational(text) -> Fraction:
    """'p', 'p/q', a decimal, or a hex float, exactly.  A JSON integer is exact; a JSON number with a
    fraction or an exponent is its binary64 value."""
    if isinstance(text, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(text, (int, float)):
        return Fraction(text)
    if type(text) is Fraction:  # read before (a wu-fig1 cut, a box's end): its text made and parsed again took two
        return text  # thirds of a check of 4000-digit ends, in time quadratic in the digits
    text = str(text).strip()
    match = _HEX.match(text)
    if match and (match.group(2) or match.group(3)):
        sign, whole, frac, power = match.groups()
        frac = frac or ""
        shift = int(power or 0) - 4 * len(frac)
        if abs(shift) > 4 * MAX_DECIMAL_EXPONENT:
            raise ValueError(f"number {text[:40]!r} has an absurd exponent")
        mantissa = int((whole or "0") + frac, 16)  # in time linear in its digits (base 16)
        if mantissa.bit_length() > MAX_HEX_BITS:
            raise ValueError(f"number {text[:40]!r} has more than 4300 digits above or below the fraction bar")
        value = Fraction(mantissa) * Fraction(2) ** shift
        return -value if sign == "-" else value
    if not _DECIMAL_TEXT.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not a decimal, p/q or hex float in ASCII digits (no underscores)")
    exponent = _DECIMAL_EXPONENT.search(text)
    if exponent and abs(int(exponent.group(1))) > MAX_DECIMAL_EXPONENT:
        raise ValueError(f"number {text[:40]!r} has an absurd exponent")
    return Fraction(text)


def ball(text) -> arb:
    """The ball of an exact number, at the working precision."""
    if type(text) is int or type(text) is float and math.isfinite(text):  # a JSON number, exact in arb (an int may
        return arb(text)  # pass binary64: math.isfinite of it overflows)
    if isinstance(text, str):
        return _ball_of_text(text, ctx.prec)
    if type(text) is fmpq:  # a number read once (schema.exact): exact as _ball makes it
        return arb(text) if text.q != 1 else arb(text.p)
    return _ball(text)


@functools.lru_cache(maxsize=256)
def _ball_of_text(text: str, precision: int) -> arb:
    """ball() of a number's text at this precision (the working one), read once: the same texts ("1",
    the constants of the claims' formulas) recur in every certificate, and a ball is immutable."""
    return _ball(text)


def binary64(text: str) -> float | None:
    """The binary64 value of a text that is its canonical hex float (float.hex's spelling, as certify writes a scalar
    binary64), read in one step as an entry is; else None (read exactly by rational)."""
    if text[:3] not in ("0x1", "-0x"):
        return None
    try:
        value = float.fromhex(text)
    except (OverflowError, ValueError):  # beyond binary64, or not float.hex's: read exactly, or refused, by rational
        return None
    return value if value.hex() == text else None


def _ball(text) -> arb:
    if isinstance(text, str) and (value := binary64(text)) is not None:  # arb holds it exactly
        return arb(value)
    q = rational(text)
    return arb(q.numerator) if q.denominator == 1 else arb(fmpq(q.numerator, q.denominator))


def interval(lo: Fraction, hi: Fraction) -> arb:
    """A ball containing the closed interval [lo, hi]."""
    return ball(lo).union(ball(hi))


def square(x: arb) -> arb:
    """x^2 as a ball of nonnegative numbers (x*x alone may dip below 0 when the ball holds 0)."""
    return (x * x).nonnegative_part()


def smallest(values) -> arb:
    """A ball enclosing the minimum of the values (arb's min; Python's min would trust `<`)."""
    return functools.reduce(arb.min, values)  # no values: TypeError, read as malformed


def largest(values) -> arb:
    """A ball enclosing the maximum of the values (arb's max)."""
    return functools.reduce(arb.max, values)


def accuracy(x: arb, precision: int) -> int:
    return max(0, min(x.rel_accuracy_bits(), precision))


def slack(precision: int) -> int:
    """The bits by which the relative accuracies of two honest enclosures at this precision may differ (their
    evaluations round differently, a stated one is widened)."""
    return 16 + precision // 8


def as_accurate(mine: arb, theirs: arb, precision: int) -> bool:
    """theirs is about as accurate as mine: both relative accuracies, capped at the precision, within the slack,
    and its radius not far looser than mine (loose)."""
    return abs(accuracy(mine, precision) - accuracy(theirs, precision)) <= slack(precision) and not loose(
        mine, theirs.rad(), precision)


_EXPONENT_DIGITS = re.compile(r"e[+-]?(\d+)", re.IGNORECASE | re.ASCII)
_BALL_TEXT = re.compile(r"^\[(?:(\S+) )?\+/- (\S+)\]$")


def _reading_precision(text: str) -> int:
    """A precision at which the numbers of a stated enclosure's text are read nearly exactly."""
    return max(ctx.prec, 4 * len(text)) + 64


@functools.lru_cache(maxsize=64)  # within one certificate: a stated text may be long, do not keep many
def _stated(text: str, precision: int) -> tuple[arb, arb, arb]:
    """A stated enclosure "[m +/- r]" read at `precision` (_reading_precision): (L, H, the ball
    m +/- r), L an upper bound of m - r and H a lower bound of m + r, so that [L, H] lies inside the
    stated interval whatever the reading rounds.  ValueError when it is not finite.  Read once per
    text (accuracy and containment read the same one; balls are immutable)."""
    with ctx.workprec(precision):
        match = _BALL_TEXT.match(text.strip())
        mid, rad = (arb(match.group(1) or "0"), arb(match.group(2))) if match else (arb(text), arb(0))
        if not (mid.is_finite() and rad.is_finite()):
            raise ValueError(f"not a finite enclosure: {text!r}")
        return (mid - rad).upper(), (mid + rad).lower(), mid + arb(0, rad.upper())


# A stated enclosure in the plain decimal form certify writes, "[m +/- r]", read first in binary64:
_DECIMAL_BALL = re.compile(r"\[(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?) \+/- (\d+(?:\.\d+)?(?:e[+-]?\d+)?)\]", re.ASCII)
_NORMAL = (2.0 ** -960, 2.0 ** 960)  # far inside binary64's normal range: every rounding is relative


@functools.lru_cache(maxsize=64)
def _binary64(text: str) -> tuple[float, float, int] | None:
    """(m, r, the stated ball's relative accuracy in bits) for a text "[m +/- r]" of plain decimals with
    m and r (rounded to nearest binary64 by float()) in _NORMAL, else None.  The accuracy is within 2
    bits of the exact reading's (_stated): the exponents of m and r move by at most 1 each."""
    match = _DECIMAL_BALL.fullmatch(text)
    if not match:
        return None
    m, r = float(match.group(1)), float(match.group(2))
    if not (_NORMAL[0] <= abs(m) <= _NORMAL[1] and _NORMAL[0] <= r <= _NORMAL[1]):
        return None
    return m, r, math.frexp(abs(m))[1] - math.frexp(r)[1] - 1  # arb's -(exp(rad) + 1 - exp(mid))


def _clearly_inside(mine: arb, m: float, r: float) -> bool:
    """Every p in mine has |p - m| <= r by a margin, in binary64 (u = 2^-53).  y, the binary64 of an upper
    bound of |p - m| read in arb (m the binary64 of the stated midpoint), is >= |p - m| (1 - 2u) -
    2^-1022; with |m_exact - m| <= u |m| and r_exact >= r (1 - u) (_binary64), y + 4u |m| + 16u r <= r
    gives |p - m_exact| <= r_exact - 3u (|m| + r), and the exact test of contains (readings at >= 100
    bits, erring by 2^-96 (|m| + r) at most) holds too."""
    y = float((mine - m).abs_upper())
    return y + abs(m) * 2.0 ** -51 + r * 2.0 ** -49 <= r


def contains(mine: arb, theirs_text: str) -> bool:
    """The stated interval [m - r, m + r] contains the recomputed ball, hence the true value.

    Decided soundly whatever the parsing rounds: the test uses the inner approximation [L, H] of
    the stated interval (_stated), and the endpoints of the recomputed ball at the reading precision
    (they are rounded outward at the working precision: a coarser one would lose the containment).
    A ball well inside the stated interval is seen so in binary64 first (_clearly_inside)."""
    quick = _binary64(theirs_text)
    if quick and _clearly_inside(mine, quick[0], quick[1]):
        return True
    precision = _reading_precision(theirs_text)
    low, high, _ = _stated(theirs_text, precision)
    with ctx.workprec(precision):
        return mine.is_finite() and bool(low <= mine.lower()) and bool(mine.upper() <= high)


def accurate(mine: arb, theirs_text: str, precision: int) -> bool:
    """A stated enclosure is about as accurate as the stated precision gives (neither a blown-up ball nor one from
    another precision): both relative accuracies, capped at the precision, agree within slack(precision) bits (the
    stated ball read as for contains: its digits beyond the precision do not count, by the cap); confirmed from the
    binary64 reading (_binary64) when within 2 bits less, else on the exact reading.  A text with more digits than
    the precision gives is not (certify writes ceil(precision log10 2) + 3): its exponents are counted apart, each with
    at most the digits of the checker's own exponent or of the precision (a radius's), so that reading it (10^E) costs
    what an honest text costs (exp(-10^40) has 41-digit exponents; a forged 20,000-digit one took minutes)."""
    exponents = _EXPONENT_DIGITS.findall(theirs_text)
    longest, most = max(map(len, exponents), default=0), precision.bit_length() * 31 // 100 + 2  # the precision's
    if longest > most:  # and the checker's own exponent's (read only then: most texts' exponents are shorter)
        m, e = mine.abs_upper().mid().man_exp() if mine.is_finite() else (0, 0)  # |mine| < 2^(e + bits of m)
        most = max(abs(int(e) + int(m).bit_length()).bit_length(), precision.bit_length()) * 31 // 100 + 2
    if len(theirs_text) - sum(map(len, exponents)) > precision * 31 // 100 + 64 or longest > most:
        return False  # more digits than the precision or the value give (log10 2 < 0.31): costly to read, never honest
    quick = _binary64(theirs_text)
    if quick and abs(accuracy(mine, precision) - max(0, min(quick[2], precision))) <= slack(precision) - 2:
        return not loose(mine, arb(quick[1]), precision)
    return as_accurate(mine, _stated(theirs_text, _reading_precision(theirs_text))[2], precision)


def loose(mine: arb, radius: arb, precision: int) -> bool:
    """A stated radius more than 2^slack times the checker's own (its radius, or its midpoint's last bit at the
    precision), when the checker's ball has at most slack correct bits: there both accuracies are capped at 0,
    which told [0.5 +/- 0.4] from [0.5 +/- 1e300] no more, and a meaningless enclosure was confirmed."""
    if accuracy(mine, precision) > slack(precision):  # settles nearly every ball first, without the powers of 2
        return False
    own = mine.rad() + abs(mine.mid()) * arb(2) ** -precision
    return bool(radius > own * arb(2) ** slack(precision))


NON_FINITE = ("nan", "[+/- inf]")  # arb's texts of balls that are not finite, as certify writes them


def agrees(mine: arb, theirs_text: str, precision: int) -> bool:
    """A stated enclosure contains the recomputed one and is about as accurate.  A recomputed one that is not finite
    (exp of a score known to +-10^40) is agreed with only by a stated one that is not either, which states nothing."""
    if not mine.is_finite() or theirs_text in NON_FINITE:
        return not mine.is_finite() and theirs_text in NON_FINITE
    return accurate(mine, theirs_text, precision) and contains(mine, theirs_text)  # accurate refuses long texts first


# A stated enclosure must contain the checker's own; where it does not at the precision it was computed at (the
# engine and the checker round differently) the checker recomputes at these multiples of it (finer), and its work
# estimate prices every one (certify_checker.over_limits reads a kind's ESCALATION: limits.passes; the counterexample
# kinds price their one finer run themselves, the trajectory its steps' and curves', by cost(), its FINER).
ESCALATION = (2, 4)


def finer(missing: set, still_missing, factors: tuple = ESCALATION) -> set:
    """The labels of `missing` still missing after still_missing(factor, labels) recomputes them at each of the
    factors times the precision.  A stated enclosure that contains the checker's at any precision contains the true
    value: an honest one that missed only by rounding is then accepted, one that excludes the value never."""
    for factor in factors:
        missing = set(still_missing(factor, missing)) if missing else missing
    return missing
