"""A bound past arb's exponent range: exp of a number of 2^(2 p) or more is [+/- inf] at p bits, so a check whose bound
overflows at every precision up to its cap stops, undecided, instead of climbing to it (expr.undefined)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flint import arb, ctx

from certify import engine
from certify.core import expr
from certify.core.arith import BALL
from certify.search import campaign

LAYER = json.loads((Path(__file__).resolve().parents[1] / "examples" / "layer.json").read_text())


def _at(precision: int, bound: expr.Expr, x: arb):
    with ctx.workprec(precision):
        return bound.evaluate(BALL, {"D": arb(x)})


def test_a_bound_past_arbs_range_at_every_precision_is_not_raised_to_the_cap():
    """exp(exp(exp(D*1000))) overflowed at every rung: the check climbed to 65536 bits, then said "undefined on these
    inputs, or too close to where it is to tell".  Once the inner exp has a value (e^(e^2215), past 2^(2^21)), it
    stops, naming arb's range.  exp(exp(D*100)) overflows at 53 and 106 bits too, but has a value from 212: it is
    still decided, as mpmath confirms its sign."""
    past = engine.check(LAYER, bound="exp(exp(exp(D*1000)))")
    assert past.verdict == engine.UNDECIDED and past.certificate is None
    assert past.precision < 1 << 13, (past.precision, past.reason)
    assert "beyond arb's exponent range at every precision certify takes" in past.reason, past.reason
    # named once, with why: it read "exp(exp(exp(D*1000))) is not finite at 3392 bits (exp(exp(exp(D*1000))) is ..."
    assert past.reason.count("exp(exp(exp(D*1000)))") == 1 and "bits (too large): " in past.reason, past.reason
    within = engine.check(LAYER, bound="exp(exp(D*100))")
    assert within.verdict == engine.HOLDS and within.certificate is not None, within.reason


def test_a_cap_below_where_the_bound_can_have_a_value_stops_at_once_and_says_so():
    """exp(exp(exp(D*4))) can have a value from some 5000 bits (exp(7000) is 2^10100): under --max-prec 1024 the check
    stops at 53 bits and names that precision; under the default cap it holds (at 13568 bits)."""
    capped = engine.check(LAYER, bound="exp(exp(exp(D*4)))", max_prec=1024)
    assert capped.verdict == engine.UNDECIDED and capped.precision == 53, (capped.precision, capped.reason)
    assert "above the cap of 1024 bits (raise --max-prec)" in capped.reason, capped.reason
    needed = int(capped.reason.split("range below ")[1].split(" bits")[0])
    assert 4096 < needed < 1 << 13, needed  # exp(7000) is 2^10100, within 2^(2 needed)
    assert engine.check(LAYER, bound="exp(exp(exp(D*4)))").verdict == engine.HOLDS


@pytest.mark.parametrize("text, argument", [("exp(D)", 1), ("sinh(D)", 1), ("sinh(-D)", 1), ("cosh(-D)", 1),
                                            ("D**(D/2)", 0)])
@pytest.mark.parametrize("precision", [53, 300, 2000])
def test_finite_from_names_no_precision_that_gives_a_value(text, argument, precision):
    """Where expr.undefined says a bound can have a value only from F bits, arb gives it none at any precision below F
    (the lowest, the one it was asked at, and F - 1), and does give one a little higher: the rule is arb's own range.
    The argument is D itself, or D/2 log D for the power."""
    bound = expr.parse(text)
    bits = 2 * (precision + expr.RANGE_MARGIN) + 1  # exp of 2^bits is past arb's range at this precision
    d = arb(2) ** bits if argument else arb(2) ** (bits + 1)  # D/2 log D = 2^bits (bits + 1) log 2 > 2^bits
    with ctx.workprec(precision):
        assert not bound.evaluate(BALL, {"D": d}).is_finite()
        first = expr.undefined(bound, BALL, {"D": d})[1]
    assert precision < first <= 4 * precision + 4 * expr.RANGE_MARGIN, first
    for below in (53, first - 1):
        assert not _at(below, bound, d).is_finite(), below
    assert _at(first + 2 * expr.RANGE_MARGIN + 64, bound, d).is_finite()


@pytest.mark.parametrize("text", ["tanh(E)", "1/E", "E/3", "E*0", "0*E", "E - E", "-E", "log(E)", "sqrt(E)", "exp(-E)",
                                  "min(E, 1)", "max(2, E)", "E**2", "E**0", "2**E", "E**0.5", "cosh(E)", "E + exp(-1)"])
def test_no_operation_of_a_bound_gives_a_value_from_an_overflow(text):
    """expr.undefined's second premise: every operation of the grammar maps a part with no finite value (an overflowed
    exp: arb's [+/- inf]) to no finite value, whatever the other operand (an exact 0 too), at any precision."""
    bound = expr.parse(text.replace("E", "exp(D)"))
    for precision in (53, 1000):
        assert not _at(precision, bound, arb(2) ** (2 * (precision + expr.RANGE_MARGIN) + 1)).is_finite(), precision


def test_a_side_left_wide_at_the_cap_is_not_called_an_agreement_of_the_sides():
    """exp(exp(a*1700)) is finite at 4096 bits, but magnifies a's width there (about 2^-4096 relative, its witness
    refined) by some 2^4250, past its value: the reason said "the two sides agree to 4096 bits: either an exact
    equality ...".  It names the wide side; an exact equality still reads as one.  (exp(exp(a*1000)) was such a side
    while a's binary64 witness left it 1e-16 wide at every precision; it now holds from 3392 bits.)"""
    wide = engine.check(LAYER, bound="exp(exp(a*1700))", max_prec=4096)
    assert wide.verdict == engine.UNDECIDED and wide.comparisons[-1].rhs.is_finite(), wide.reason
    assert wide.reason.startswith("the enclosure of exp(exp(a*1700)) is still wide at 4096 bits (its radius exceeds "
                                  "its value): the sides are not known to agree"), wide.reason
    assert campaign.reason_kind(wide.reason) == "a side still wide at the precision cap"  # one kind in a summary
    # n = 2: D(PX) = tau(P) D(X) exactly
    equal = engine.check({"X": [[0.0], [1.0]], "A": [[1.0]]}, claim="collapse.dobrushin", max_prec=128)
    assert equal.verdict == engine.UNDECIDED, equal.reason
    assert equal.reason.startswith("the two sides agree to 128 bits"), equal.reason
