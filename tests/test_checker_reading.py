"""The checker reads a number's text, and a stated enclosure's, once: what it remembers must not
change what it decides (a reading at one precision served at another, or a containment decided at
a coarser precision than the stated digits)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from flint import arb, ctx
from mpmath import mp

from certify_checker import exact, forward
from certify_checker.exact import ball


def _exact(x: arb):
    """The exact value of an arb with radius 0 (a midpoint or a radius) as an mpmath number."""
    mantissa, exponent = x.man_exp()
    return mp.ldexp(mp.mpf(int(mantissa)), int(exponent))


def _contains_mp(x: arb, value) -> bool:
    with mp.workdps(700):
        return abs(value - _exact(x.mid())) <= _exact(x.rad())


def test_a_number_read_at_one_precision_is_not_served_at_another():
    with mp.workdps(700):
        third = mp.mpf(1) / 3
    with ctx.workprec(53):
        coarse = exact.ball("1/3")
    with ctx.workprec(2000):
        fine = exact.ball("1/3")
        again = exact.ball("1/3")
    with ctx.workprec(53):
        coarse_again = exact.ball("1/3")
    assert _contains_mp(coarse, third) and _contains_mp(fine, third)
    assert fine.rel_accuracy_bits() > 1900 and coarse.rel_accuracy_bits() < 60
    assert again.rel_accuracy_bits() == fine.rel_accuracy_bits()
    assert coarse_again.rel_accuracy_bits() == coarse.rel_accuracy_bits()


def test_containment_of_a_fine_enclosure_is_decided_at_the_digits_of_the_text():
    """A 2000-bit enclosure and its stated text, checked at the default working precision (as
    `certify verify` does): contained; the same text with its midpoint moved by 10^-550 (far inside
    53 bits, far outside the stated radius): not contained, whichever is read first."""
    with ctx.workprec(2000):
        mine = arb(1) / 3
        text = (mine + arb(0, mine.rad() * 4)).str(620, radius=True, more=True)
        shifted = (mine + arb(10) ** -550 + arb(0, mine.rad() * 4)).str(620, radius=True, more=True)
    for _ in range(2):  # the second time from what was remembered
        assert exact.contains(mine, text)
        assert exact.accurate(mine, text, 2000)
        assert not exact.contains(mine, shifted)
    with ctx.workprec(2000):
        assert exact.contains(mine, text) and not exact.contains(mine, shifted)


def test_a_blown_up_or_a_coarser_stated_ball_is_not_accurate():
    with ctx.workprec(200):
        mine = arb(1) / 3
        blown = (mine + arb(0, arb(10) ** -20)).str(80, radius=True, more=True)
        honest = (mine + arb(0, mine.rad() * 4)).str(80, radius=True, more=True)
    assert exact.contains(mine, blown) and not exact.accurate(mine, blown, 200)
    assert exact.accurate(mine, honest, 200)


def _exactly_contains(mine: arb, text: str) -> bool:
    """contains() on the exact reading alone (_stated at the reading precision), as before the
    binary64 reading was put in front of it."""
    precision = exact._reading_precision(text)
    low, high, _ = exact._stated(text, precision)
    with ctx.workprec(precision):
        return mine.is_finite() and bool(low <= mine.lower()) and bool(mine.upper() <= high)


def _truly_contains(mine: arb, text: str) -> bool:
    """[m - r, m + r] of the text's decimals contains mine's exact endpoints (mpmath at 700 digits)."""
    mid, rad = text[1:-1].split(" +/- ")
    with mp.workdps(700):
        m, r, centre, radius = mp.mpf(mid), mp.mpf(rad), _exact(mine.mid()), _exact(mine.rad())
        return m - r <= centre - radius and centre + radius <= m + r


def _stated_around(mine: arb, edge_ulps: int, digits: int) -> str:
    """A stated "[m +/- r]" whose lower end lies edge_ulps units of mine's last bit below (> 0) or above
    (< 0) mine's lower end, its upper end well above mine's: m and r written with `digits` digits."""
    with mp.workdps(200):
        low, high = _exact(mine.lower()), _exact(mine.upper())
        unit = abs(_exact(mine.mid())) * mp.mpf(2) ** -53
        stated_low = low - edge_ulps * unit
        stated_high = high + 50 * unit
        m, r = (stated_low + stated_high) / 2, (stated_high - stated_low) / 2
        return f"[{mp.nstr(m, digits, min_fixed=-5, max_fixed=5)} +/- {mp.nstr(r, 3, min_fixed=1, max_fixed=0)}]"


def test_the_binary64_reading_confirms_only_what_the_exact_reading_confirms():
    """Stated enclosures whose edge passes over the recomputed one's, unit by unit of its last bit: the
    binary64 reading (exact._binary64, _clearly_inside) confirms none that the exact reading rejects
    or that misses the true interval, and confirms the comfortable ones (or it would never help)."""
    import random
    generator = random.Random(11)
    confirmed = comfortable = 0
    for trial in range(400):
        with ctx.workprec(generator.choice([53, 53, 120])):
            mine = arb(generator.uniform(0.1, 9) * 10.0 ** generator.randint(-30, 30)) / 3
            mine = mine + arb(0, mine.rad() * generator.randint(1, 200))
        edge = generator.choice([-3, -1, 0, 1, 2, 3, 5, 8, 16, 40, 200])
        text = _stated_around(mine, edge, generator.choice([17, 19, 25, 40]))
        quick = exact._binary64(text)
        assert quick is not None, text
        if exact._clearly_inside(mine, quick[0], quick[1]):
            confirmed += 1
            assert _exactly_contains(mine, text) and _truly_contains(mine, text), text
        comfortable += edge >= 40
    assert confirmed >= comfortable > 50


def test_the_binary64_accuracy_is_within_two_bits_of_the_exact_reading():
    """Including midpoints and radii at and around powers of two, where a rounding moves an exponent."""
    texts = [f"[{m} +/- {r}]" for m in ("1", "0.99999999999999999999", "1.00000000000000000001", "2", "0.5",
                                       "-3.999999999999999999999", "6.02e23", "-1.5e-280", "12345.678901234567")
             for r in ("1e-15", "1.00e-15", "8.88e-16", "1.1102230246251565e-16", "0.5", "1", "3.55e-15", "2.00e-40")]
    for text in texts:
        precision = exact._reading_precision(text)
        reading = exact._stated(text, precision)[2]
        assert abs(exact._binary64(text)[2] - reading.rel_accuracy_bits()) <= 2, text


def test_texts_out_of_the_binary64_reading_go_to_the_exact_one():
    for text in ("[+/- 1.0e-5]", "3.5", "[1.5 +/- inf]", "[1_0 +/- 1]", "[1e-999 +/- 1e-1000]", "[1e400 +/- 1]",
                 "[1.5 +/- 0]", "[0 +/- 1e-5]", " [1.5 +/- 1e-5]", "[1.5 +/- 1E-5]", "[nan +/- 1]"):
        assert exact._binary64(text) is None, text
    assert not exact.contains(arb(2), "[1.5 +/- 0]") and exact.contains(arb("1.5"), "[1.5 +/- 0]")


def test_the_binary64_reading_decides_accuracy_as_the_exact_one_at_the_slack():
    """Stated radii 2^k times the recomputed one, k across the slack (16 + precision/8 bits): accurate()
    with its binary64 reading first decides as the exact reading does, and both ways occur."""
    decisions = set()
    for precision in (53, 200):
        slack = 16 + precision // 8
        with ctx.workprec(precision):
            mine = arb(7) / 3
        for k in range(slack - 6, slack + 6):
            with ctx.workprec(precision + 64):
                text = (mine + arb(0, mine.rad() * 2 ** k)).str(precision // 3 + 5, radius=True, more=True)
            theirs = exact._stated(text, exact._reading_precision(text))[2]
            exactly = abs(exact.accuracy(mine, precision) - exact.accuracy(theirs, precision)) <= slack
            assert exact._binary64(text) is not None and exact.accurate(mine, text, precision) == exactly, text
            decisions.add(exactly)
    assert decisions == {True, False}


def test_numbers_and_stated_balls_in_other_scripts_digits_are_not_read():
    """An Arabic-Indic 5 ("\u0665", which looks like 0) in an input or a stated enclosure is malformed for the
    checker, as for the engine's reader: what it confirms is what a reader sees."""
    import pytest
    for text in ("\u0665", "\uff11/\uff12"):
        with pytest.raises(ValueError):
            exact.rational(text)
    with ctx.workprec(53), pytest.raises(ValueError):
        exact.contains(arb(5), "[\u0665.0 +/- 1.0]")


def test_a_stated_ball_with_more_digits_than_its_precision_is_refused_unread():
    """A stated midpoint padded with millions of digits was read exactly (4 bits a character: seconds and
    hundreds of MB within the certificate's size cap) and accepted; certify writes ceil(p log10 2) + 3 digits."""
    with ctx.workprec(53):
        mine = arb(2).sqrt()
    honest = mine.str(19, radius=True, more=True)
    padded = honest.replace(" +/-", "3" * 2_000_000 + " +/-", 1)
    assert exact.agrees(mine, honest, 53)
    assert not exact.accurate(mine, padded, 53) and not exact.agrees(mine, padded, 53)
    with ctx.workprec(1 << 20):  # the longest honest text, at the checker's largest precision, is read
        fine = arb(2).sqrt()
        text = fine.str(315_656, radius=True, more=True)
    assert exact.accurate(fine, text, 1 << 20)


def test_a_stated_ball_with_a_long_exponent_is_read_when_its_digits_fit_its_precision():
    """exp(-a D^2) for a D^2 = 10^40 is stated at 3392 bits with 1024 digits and two 41-digit exponents: an
    honest text longer than the digits of the precision only by its exponents (certify check then needed
    twice the precision, or left a claim that holds undecided at its cap).  Padded exponents stay refused."""
    with ctx.workprec(3392):
        mine = (-arb(10) ** 40).exp()
    digits = 3392 * 30103 // 100000 + 4  # certify's ceil(p log10 2) + 3
    honest = mine.str(digits, radius=True, more=True)
    assert len(honest) > 3392 * 31 // 100 + 64 and exact.agrees(mine, honest, 3392)
    with ctx.workprec(53):
        small = arb(2) ** -100 / 3
    padded = small.str(19, radius=True, more=True).replace("e-", "e-" + "0" * 100_000, 1)
    assert exact.agrees(small, small.str(19, radius=True, more=True), 53)
    assert not exact.accurate(small, padded, 53)


def test_a_stated_exponent_with_more_digits_than_the_value_gives_is_refused_unread():
    """Within the digits a precision allows, a forged exponent of thousands of digits made the checker compute
    10^E (minutes at 20,000 digits, a hang on a small certificate); no honest text of a value near 1 has one."""
    with ctx.workprec(1 << 16):
        mine = arb(2).sqrt()
        honest = mine.str(19_732, radius=True, more=True)
    assert exact.accurate(mine, honest, 1 << 16)
    for forged in (honest.replace("e-", "e-" + "7" * 3000, 1), "[1.4142 +/- 1e-" + "9" * 3000 + "]",
                   "[1.4e+" + "1" * 3000 + " +/- 1e-19725]"):
        assert not exact.accurate(mine, forged, 1 << 16)


@pytest.mark.parametrize("value, precision", [("sqrt2", 53), ("tiny", 53), ("huge", 200), ("sqrt2", 1 << 16)])
def test_a_stated_exponent_is_refused_exactly_past_the_digits_of_the_value_or_the_precision(value, precision):
    """An exponent may have as many digits as |mine|'s binary exponent or the precision has bits, times 0.31,
    and 2 more: padded with zeros up to that it is read, one digit more refused (the bound computed here
    from log2 |mine| in mpmath)."""
    with ctx.workprec(precision):
        mine = {"sqrt2": arb(2).sqrt(), "tiny": arb(2) ** -3000 / 3, "huge": arb(10) ** 400 / 7}[value]
        text = mine.str(precision * 30103 // 100000 + 4, radius=True, more=True)
    with mp.workprec(precision + 64):
        binary = int(mp.floor(mp.log(_exact(mine.abs_upper()), 2))) + 1
    most = max(abs(binary).bit_length(), precision.bit_length()) * 31 // 100 + 2
    exponent = re.search(r"e[+-]?(\d+)\]$", text)  # the radius's, as long as the midpoint's or longer
    for digits in range(len(exponent.group(1)), most + 3):
        padded = text[:exponent.start(1)] + exponent.group(1).zfill(digits) + "]"
        assert exact.accurate(mine, padded, precision) == (digits <= most), (digits, most)


def _fraction(x: arb) -> Fraction:
    mantissa, exponent = map(int, x.mid().man_exp())
    return mantissa * Fraction(2) ** exponent


@pytest.mark.parametrize("rows", [[[1e308, 1e308], [-1e308, 5e-324]], [[0.1, -0.0], [2.0 ** -1074, -1.5]],
                                  [[1.0, 2], [3, 0.5]], [[1e308, float("inf")]], [[float("nan"), 1.0]], [[True, 0.5]]])
def test_rows_of_binary64_read_in_one_pass_are_the_balls_of_their_values(rows):
    """forward.matrix and matrix_mat read rows of finite floats in one pass (their finite sum shows none is inf or
    nan): the balls ball() gives each value, exactly, an overflowing sum included; inf, nan and booleans are
    refused as ball() refuses them."""
    try:
        expected = [[ball(v) for v in row] for row in rows]
    except (ValueError, ArithmeticError):
        for read in (forward.matrix, forward.matrix_mat):
            with pytest.raises((ValueError, ArithmeticError)):
                read(rows)
        return
    for read in (forward.matrix(rows), forward.matrix_mat(rows).tolist()):
        assert [[(x.mid().man_exp(), x.rad()) for x in row] for row in read] == \
            [[(x.mid().man_exp(), x.rad()) for x in row] for row in expected]
        assert all(x.is_exact() and _fraction(x) == Fraction(v) for row, values in zip(read, rows)
                   for x, v in zip(row, values))  # the binary64 value itself, not only ball()'s reading of it


def _verify_edited(tmp_path, cert: dict, edit) -> int:
    """`certify verify` of the certificate with `edit` applied to its JSON text and its digest recomputed
    (as a forger would); the exit code."""
    import hashlib
    import json

    from certify.cli import main

    cert = json.loads(edit(json.dumps(cert)))
    canonical = json.dumps({key: cert[key] for key in ("claim", "bound", "inputs", "precision")},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(cert))
    return main(["verify", str(path)])


def test_a_number_spelled_as_certify_refuses_to_read_it_is_rejected(tmp_path):
    """Python's Fraction reads "1_0" as 10 (and "1e1_0", "1_0/3"); certify's reader refuses them, so the
    checker must not confirm a certificate that states a number so: the same value in a spelling outside
    the documented grammar is rejected (exit 1), in an input and in a bound's literal alike, while a
    spelling within it ("1e-1" for "1/10") is confirmed."""
    import json

    from certify import engine

    config = {"X": [["10", "0"], ["0", "1/3"], ["1", "1"]], "A": [["1/10", "0"], ["0", "1/10"]]}
    cert = engine.check(config, bound="(1-exp(-a*D**2/10))*D").certificate
    text = json.dumps(cert)
    for before, after, expected in (('"10"', '"10"', 0), ('"1/10"', '"1e-1"', 0), ('"1/10"', '"0.1"', 0),
                                    ('"10"', '"1_0"', 1), ('"1/3"', '"1/3_0"', 1), ('"1/3"', '"1_0/30"', 1),
                                    ('"1/10"', '"1e-0_1"', 1), ('"1/10"', '"1/1_0"', 1), ("/10)", "/1_0)", 1)):
        assert before in text
        code = _verify_edited(tmp_path, cert, lambda t: t.replace(before, after))
        assert code == expected, (before, after, code)


def test_a_stated_integer_text_is_decimal_digits_only():
    """A trajectory's exact balls are integers written as decimal text (str(int)); flint's fmpz also reads
    blanks around them and True, which no certificate of certify holds."""
    import pytest

    from certify_checker import trajectory

    assert trajectory.read_ball(["5", "-3", "1", "-70"]) is not None
    for bad in (" 5", "5 ", "+5", "5_0", True, 5, "\u0665", "0x5"):
        with pytest.raises(ValueError):
            trajectory.read_ball([bad, "-3", "1", "-70"])
