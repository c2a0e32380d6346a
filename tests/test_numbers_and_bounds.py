"""Exact numbers at the boundary, and the restricted bound grammar."""

from __future__ import annotations

import decimal
from fractions import Fraction

import pytest
from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from certify.core import expr
from certify_checker import bound as checker_bound
from certify.core.arith import BALL, FLOAT64
from certify.errors import BadInput
from certify.core.numbers import decimal_ends, encode, parse_number, signed_text


@pytest.mark.parametrize("text, value", [
    ("0.1", Fraction(1, 10)), ("1/3", Fraction(1, 3)), ("0x1.8p-3", Fraction(3, 16)), ("-0x.8p1", Fraction(-1)),
    ("2.5e-3", Fraction(1, 400)), (0.1, Fraction(3602879701896397, 2**55)), (7, Fraction(7)),
    ("0x1.0000000000000001p0", Fraction(2**64 + 1, 2**64)),  # more bits than a double: still exact
])
def test_numbers_are_exact(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("bad", ["nan", "inf", "-Infinity", "1/0", "abc", "", True, None, [1], float("nan"), "1e99999"])
def test_bad_numbers(bad):
    with pytest.raises(BadInput):
        parse_number(bad)


@pytest.mark.parametrize("text, value", [("1e4000", Fraction(10) ** 4000), ("1e-4000", Fraction(10) ** -4000),
                                         ("0x1p-14000", Fraction(2) ** -14000), ("1e4001", None), ("1e-4001", None),
                                         ("0x1p16001", None)])
def test_written_exponents_are_capped_where_the_readme_says(text, value):
    """README, "Configuration file": a written exponent at most 4000 in absolute value, 16000 after p."""
    if value is not None:
        assert parse_number(text) == value
    else:
        with pytest.raises(BadInput, match="absurd exponent"):
            parse_number(text)


@pytest.mark.parametrize("text", ["\u0665", "\uff11/\uff12", "1.\u0665", "0x1p\u0661"])
def test_numbers_in_other_scripts_digits_are_bad_input(text):
    """Python's Fraction and float read any script's digits ("\u0665", an Arabic-Indic 5, looks like 0): a
    configuration or a certificate could then hold a number other than the one a reader sees."""
    with pytest.raises(BadInput, match="ASCII"):
        parse_number(text)


# Within the exponent caps, yet more than 4300 digits above or below the fraction bar: no certificate
# could write them down (Python refuses the decimal text of such an integer).
TOO_MANY_DIGITS = ["0x1p-16000", "-0x1p16000", "0x" + "f" * 4000, "0." + "0" * 3990 + "1e-4000", "9" * 4000 + "e4000",
                   "1" * 4301, "1/" + "3" * 4301, Fraction(1, 2**16445)]


@pytest.mark.parametrize("text", TOO_MANY_DIGITS, ids=lambda t: t[:16] if isinstance(t, str) else "long-double")
def test_numbers_too_long_to_write_are_bad_input_in_one_short_line(text):
    with pytest.raises(BadInput, match="4300 digits") as caught:
        parse_number(text, "X[0][0]")
    assert len(str(caught.value)) < 200 and "\n" not in str(caught.value)


@pytest.mark.parametrize("text", ["1e-4000", "1e4000", "0x1p-14000", "9" * 4300, "9" * 4300 + "/" + "7" * 4300,
                                  "0x" + "f" * 3500])
def test_the_longest_numbers_accepted_are_written_back_exactly(text):
    value = parse_number(text)
    assert parse_number(encode(value)) == value


def _decimal_length(x: int) -> int:
    """Digits of x >= 0 by comparisons with powers of ten (str() stops at 4300 digits)."""
    k = max(1, int(x.bit_length() * 0.30103))
    while 10**k <= x:
        k += 1
    while k > 1 and 10 ** (k - 1) > x:
        k -= 1
    return k


@pytest.mark.parametrize("value", [Fraction(7), Fraction(-10**4300), Fraction(1, 3**5000), Fraction(1, 2**14000),
                                   Fraction(0), Fraction(10**4299 - 1, 10**4299)])
def test_digits_never_undercounts_the_longer_side_of_the_bar(value):
    from certify.core.numbers import digits
    longer = max(_decimal_length(abs(value.numerator)), _decimal_length(value.denominator))
    assert longer <= digits(value) <= longer + 2


def test_a_bound_literal_too_long_to_write_is_bad_input():
    with pytest.raises(BadInput, match="4300 digits"):
        expr.parse("9" * 1990 + "e4000*D")


def test_float64_screen_numbers_beyond_binary64_are_signed_infinities():
    assert FLOAT64.number(Fraction(10**4000)) == float("inf")
    assert FLOAT64.number(Fraction(-(10**4000), 3)) == float("-inf")


@given(st.fractions(max_denominator=10**12) | st.floats(allow_nan=False, allow_infinity=False).map(Fraction))
def test_encoding_round_trips_exactly(value):
    assert parse_number(encode(value)) == value


def test_bound_literals_are_exact():
    """0.1 in a bound is 1/10, not the double nearest to it."""
    e = expr.parse("0.1*D")
    value = e.evaluate(BALL, {"D": BALL.number(10)})
    assert value.contains(arb(1)) and not value.contains(arb(float(Fraction(1, 10)) * 10 + 2e-15))


def test_bound_evaluates_like_python_floats():
    e = expr.parse("max(D, a) + min(n, d)**2 - sqrt(tanh(a)) / cosh(D) + log(n) * sinh(a) + exp(-a*D**2)")
    env = {"D": 1.5, "a": 0.25, "n": 4.0, "d": 3.0}
    ball = e.evaluate(BALL, {k: BALL.number(Fraction(v)) for k, v in env.items()})
    import math
    expected = (max(1.5, 0.25) + 9 - math.sqrt(math.tanh(0.25)) / math.cosh(1.5) + math.log(4) * math.sinh(0.25)
                + math.exp(-0.25 * 2.25))
    assert abs(float(ball.mid()) - expected) < 1e-12
    assert abs(e.evaluate(FLOAT64, env) - expected) < 1e-12


def test_integer_power_of_a_ball_around_zero_is_not_nan():
    value = expr.parse("D**2").evaluate(BALL, {"D": arb("[0 +/- 0.5]")})
    assert value.is_finite()


@pytest.mark.parametrize("bad", ["x", "D.real", "D[0]", "lambda: 1", "exp(D, a)", "max(D)", "f(D)", "D if a else 1",
                                 "'D'", "D == a", "[D]", "__import__('os')", "D; a", "D and a"])
def test_bound_grammar_rejects(bad):
    with pytest.raises(BadInput):
        expr.parse(bad)


def test_a_part_without_names_that_is_undefined_is_refused_as_it_is_read():
    """1/0 is undefined whatever the configuration: refused with the bound, not at each configuration (a campaign
    leaves one where a part with names is undefined undecided); parts with names are judged where evaluated."""
    for text in ("D + 1/0", "log(1 - 1)*D", "D**(1/0)", "max(D, sqrt(-1))", "0**-1*D"):
        with pytest.raises(BadInput, match="the bound is undefined"):
            expr.parse(text)
    assert expr.parse("log(a - 1)*D + D/(D*0)").text == "log(a - 1)*D + D/(D*0)"


@pytest.mark.parametrize("text", ["1/(0.1 - 1/10)", "D/(0.1 - 1/10)", "D + log(1/3 - 1/3)", "(1/3*3 - 1)**-1*D",
                                  "D*(0.1 - 1/10)**D", "exp(-a*D**2/(2/3 - 1/3 - 1/3))*D"])
def test_an_operand_of_numbers_alone_is_read_exactly_where_it_makes_the_bound_undefined(text):
    """0.1 - 1/10 is exactly 0, but a ball around 0 at every precision: D/(0.1 - 1/10) climbed to 65536 bits and
    ended undecided (exit 3; certify attack: nothing found, exit 0), where D/(1 - 1) and 1/0 are bad input."""
    with pytest.raises(BadInput, match="the bound is undefined"):
        expr.parse(text)


def test_an_operand_of_numbers_alone_inside_its_domain_is_accepted():
    for text in ("sqrt(1/3 - 1/3)*D", "D/(0.1 - 1/10 + 1e-400)", "(1/3 - 1/3)**0.5 + D", "log(1/3 + 1/3)*D"):
        assert expr.parse(text).text == text


def test_a_bound_whose_canonical_form_is_too_long_is_refused_as_such(tmp_path, capsys):
    """max(D,D,...) of 1984 characters is 2973 in its canonical form (", " between arguments), which a certificate
    states and the checker reads: the engine, parsing that form again, said 'the bound expression is longer than
    2000 characters' of a bound shorter than that."""
    from certify.cli import main
    text = "max(" + ",".join(["D"] * 990) + ")"
    assert len(text) <= expr.MAX_LENGTH
    with pytest.raises(BadInput, match="canonical form is 2973 characters long"):
        expr.parse(text)
    config = tmp_path / "c.json"
    config.write_text('{"X": [[0], [1]], "A": [[1]]}')
    assert main(["check", str(config), "--bound", text]) == 2
    assert "canonical form" in capsys.readouterr().err
    fitting = expr.parse("max(" + ",".join(["D"] * 665) + ")")  # 1998 characters in canonical form: accepted
    assert len(fitting.text) == 1998 and expr.parse(fitting.text) == fitting


def _decimal_text_by_steps(value: Fraction) -> str:
    """A literal's canonical text by the rule's first writing, a power of ten at a time (the reference)."""
    k, m = 0, value
    while m.denominator != 1:
        m, k = m * 10, k - 1
    m = m.numerator
    while m and m % 10 == 0:
        m, k = m // 10, k + 1
    plain = str(m * 10 ** k) if k >= 0 else f"{m // 10 ** -k}.{str(m % 10 ** -k).rjust(-k, '0')}"
    digits = str(m)
    scientific = f"{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{k + len(digits) - 1}"
    return plain if len(plain) <= len(scientific) + 4 else scientific


@settings(max_examples=100, deadline=None)
@given(digits=st.integers(0, 10**40), zeros=st.integers(0, 40), exponent=st.integers(-4000, 4000))
def test_a_literal_s_canonical_text_is_the_rule_s_in_engine_and_checker(digits, zeros, exponent):
    value = Fraction(digits * 10**zeros) * Fraction(10) ** exponent
    expected = _decimal_text_by_steps(value)
    assert expr.render_number(value) == expected and checker_bound.number_text(value) == expected


def test_a_bound_of_long_literals_is_read_and_rendered_without_a_step_per_digit():
    """Both renderings stepped a power of ten at a time (a Fraction product each below the point, a division each
    for trailing zeros): 240 literals 9e-3999 took 5 s to parse, and as long again in the checker's canonical form."""
    import time
    text = "max(D, " + ", ".join(["(" + "*".join(["9e-3999"] * 12) + ")"] * 20) + ")"
    started = time.process_time()
    parsed = expr.parse(text)
    assert checker_bound.canonical(parsed.text) == parsed.text
    assert time.process_time() - started < 1.0
    with pytest.raises(BadInput, match="no decimal form"):
        expr.render_number(Fraction(1, 3))
    with pytest.raises(ValueError, match="not a decimal"):
        checker_bound.number_text(Fraction(1, 3))


def test_absurd_integer_powers_are_bad_input():
    """D**10**11 would be 10^11 products: refused at parse time, with the checker's cap."""
    assert expr.parse(f"D**{expr.MAX_POWER}").names == {"D"}
    with pytest.raises(BadInput, match="larger than"):
        expr.parse(f"D**{expr.MAX_POWER + 1}")


def test_a_bound_evaluated_twice_encloses_mpmath_at_each_precision():
    from flint import ctx
    from mpmath import mp

    e = expr.parse("(1 - exp(-a*D**2))*D / max(n, d) + min(a, 0.1)**1.5 - -log(n)")
    env = {"D": Fraction(3, 2), "a": Fraction(1, 4), "n": 4, "d": 3}
    with mp.workdps(80):
        D, a, n, d = (mp.mpf(Fraction(v).numerator) / Fraction(v).denominator for v in env.values())
        exact = (1 - mp.exp(-a * D**2)) * D / max(n, d) + min(a, mp.mpf(1) / 10) ** mp.mpf(1.5) + mp.log(n)
        for bits in (53, 200):  # the compiled form makes its constants at the precision of each evaluation
            with ctx.workprec(bits):
                value = e.evaluate(BALL, {k: BALL.number(v) for k, v in env.items()})
                assert value.rad() < arb(2) ** (8 - bits)
                with ctx.workprec(300):
                    assert value.contains(arb(mp.nstr(exact, 80, strip_zeros=False)))


def test_an_evaluated_bound_still_pickles_and_evaluates_after():
    import pickle

    e = expr.parse("a*D**2 + 1")
    assert e.evaluate(FLOAT64, {"a": 1.0, "D": 2.0}) == 5.0  # compiled now
    copy = pickle.loads(pickle.dumps(e))  # a campaign may send a target to other processes
    assert copy == e and copy.evaluate(FLOAT64, {"a": 2.0, "D": 3.0}) == 19.0


def _exact(point: arb) -> Fraction:
    """An exact arb point as the rational it is."""
    mantissa, exponent = (int(part) for part in point.mid().man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


@pytest.mark.parametrize("ball", [arb("[-4.85e-19 +/- 3.25e-19]"), arb("[1e-13 +/- 0.5e-13]"), arb(1) / 3,
                                  -arb(2) ** -1442, arb(10) ** 1000 / 7, arb("[-1 +/- 1e-30]"), arb(0.5)])
@pytest.mark.parametrize("digits", [1, 3, 6, 15])
def test_decimal_ends_are_the_ball_ends_rounded_outward_to_their_digits(ball, digits):
    """decimal_ends are the decimal numbers of `digits` digits just outside the ball's ends (a ball of 2^-1442,
    below binary64's range, keeps its digits), checked exactly in rationals and against decimal's own next
    numbers of those digits."""
    lo, hi = decimal_ends(ball, digits)
    low, high = _exact(ball.lower()), _exact(ball.upper())
    assert Fraction(lo) <= low and high <= Fraction(hi)
    places = decimal.Context(prec=digits, Emin=-10**6, Emax=10**6)
    assert all(len(decimal.Decimal(end).as_tuple().digits) <= digits for end in (lo, hi))
    # the tightest such ends: the next decimal of `digits` digits inward crosses the ball's end
    assert Fraction(str(places.next_plus(decimal.Decimal(lo)))) > low
    assert Fraction(str(places.next_minus(decimal.Decimal(hi)))) < high


def test_signed_text_shows_the_sign_arb_hides_and_keeps_arb_text_elsewhere():
    """arb writes a ball in [-8.1e-19, -1.6e-19] as "[+/- 8.13e-19]": no digit, and no sign.  signed_text writes
    it as its interval, rounded outward; a ball with a sure digit, around 0, or not finite stays arb's text."""
    hidden = arb("[-4.85e-19 +/- 3.25e-19]")
    assert hidden.str(3).startswith("[+/-")
    text = signed_text(hidden, 3)
    lo, hi = text.strip("[]").split(", ")
    assert text == f"[{lo}, {hi}]" and Fraction(lo) <= _exact(hidden.lower())
    assert _exact(hidden.upper()) <= Fraction(hi) < 0  # both ends negative: the sign shows
    for kept in (arb("[-4.85e-19 +/- 1e-25]"), arb("[+/- 1e-3]"), arb("inf"), arb(0)):
        assert signed_text(kept, 3) == kept.str(3, radius=True)


@pytest.mark.parametrize("ball, ends", [
    (arb("[4.85e+3010299958940877006 +/- 3.3e+3010299958940877006]"), ("9.99e+999999999999999999", "+inf")),
    (arb("-1e+3010299958940877006"), ("-inf", "-9.99e+999999999999999999")),
    (arb("1e-3010299958940877006"), ("0", "1e-1000000000000000001")),
])
def test_decimal_ends_beyond_decimals_exponent_range_round_outward(ball, ends):
    """arb's exponents go past decimal's (10^(10^18)): such an end rounds its way to an infinity, the largest
    decimal, 0 or the smallest, never inward (a huge positive end once became -inf, m rounded down minus r)."""
    assert decimal_ends(ball, 3) == ends


@pytest.mark.parametrize("text", ["sqrt(1/3 - 1/3)*D + D", "(1/3 - 1/3)**0.5*D + D", "(0.1 - 1/10)**(3/2)*D + D"])
def test_a_root_of_numbers_alone_that_cancel_exactly_is_the_exact_0(text):
    """sqrt(1/3 - 1/3) is sqrt(0) = 0, as sqrt(1 - 1) is, but 1/3 - 1/3 is a ball around 0 at every precision, whose
    root is not finite: check climbed to 65536 bits and ended undecided (exit 3) where sqrt(1 - 1)*D + D holds at 53
    bits; engine and checker now take such an operand as its exact 0."""
    import certify
    result = certify.check({"X": [[1], [-1]], "A": [[1]]}, bound=text)
    assert (result.verdict, result.precision) == ("holds", 53)
