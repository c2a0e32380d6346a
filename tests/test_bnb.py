"""certify.prove.bnb: certified branch and bound, checked against an independent mpmath computation."""

from fractions import Fraction

import mpmath
import pytest
from flint import arb
from mpmath import mp

from certify.prove.bnb import prove_le, prove_nonnegative, remainder_ball
from certify.errors import BadInput

mp.dps = 50


def _mp(q: Fraction):
    return mp.mpf(q.numerator) / q.denominator


def test_proves_a_true_inequality_away_from_its_tight_point():
    result = prove_le(lambda x: 1 - (-x).exp(), lambda x: x, [("1/100", 10)])
    assert result.proved and not result.refuted
    # the reported lower bound on the worst box is below every true value in that box
    lo, hi = result.worst_box[0]
    true_min = min(_mp(x) - 1 + mp.exp(-_mp(x)) for x in (lo, hi, (lo + hi) / 2))
    assert result.worst_lower <= true_min


def test_refuses_a_false_inequality_with_a_checked_witness():
    # 1 - exp(-x) <= 0.99 x fails for x < about 0.02
    result = prove_le(lambda x: 1 - (-x).exp(), lambda x: arb(99) / 100 * x, [(0, 1)])
    assert not result.proved and result.refuted
    (w,) = result.witness
    assert 1 - mp.exp(-_mp(w)) > mp.mpf("0.99") * _mp(w)


def test_tight_point_needs_the_reduced_form():
    # h(x) = x - 1 + exp(-x) = 0 at x = 0: plain subdivision cannot close the box touching 0 ...
    direct = prove_nonnegative(lambda x: x - 1 + (-x).exp(), [(0, 1)], max_boxes=2000)
    assert not direct.proved and not direct.refuted
    # ... while h / x^2, enclosed by the Taylor remainder, is proved positive
    reduced = prove_nonnegative(lambda x: remainder_ball(lambda t: (-t).exp(), 2, arb(0), x),
                                [(0, 1)], strict=True)
    assert reduced.proved


def test_two_variables():
    # sin x + cos y <= 21/10 holds (max 2 at (pi/2, 0)); <= 19/10 does not
    box = [(0, 3), (0, 3)]
    holds = prove_le(lambda x, y: x.sin() + y.cos(), lambda x, y: arb(21) / 10 + 0 * x, box)
    assert holds.proved
    fails = prove_le(lambda x, y: x.sin() + y.cos(), lambda x, y: arb(19) / 10 + 0 * x, box)
    assert fails.refuted
    wx, wy = fails.witness
    assert mp.sin(_mp(wx)) + mp.cos(_mp(wy)) > mp.mpf("1.9")


@pytest.mark.parametrize("order", [1, 2, 3])
def test_remainder_ball_encloses_the_true_quotient(order):
    # h = exp, c = 1/2: (exp(x) - T_{k-1}(x)) / (x - c)^k at points of a box, against mpmath
    c = Fraction(1, 2)
    lo, hi = Fraction(3, 5), Fraction(4, 5)
    ball = remainder_ball(lambda t: t.exp(), order, arb(1) / 2, (arb(3) / 5).union(arb(4) / 5))
    for x in (lo, (lo + hi) / 2, hi):
        xm, cm = _mp(x), _mp(c)
        taylor = sum(mp.exp(cm) * (xm - cm)**j / mp.factorial(j) for j in range(order))
        quotient = (mp.exp(xm) - taylor) / (xm - cm)**order
        assert ball.lower() <= arb(mpmath.nstr(quotient, 30)) <= ball.upper()


def test_bad_boxes_are_bad_input():
    with pytest.raises(BadInput):
        prove_nonnegative(lambda x, y, z: x, [(0, 1)] * 3)
    with pytest.raises(BadInput):
        prove_nonnegative(lambda x: x, [(1, 0)])


def test_a_box_left_at_the_depth_limit_is_not_proved():
    """h(x) = x - 1 + exp(-x) >= 0 touches 0 at x = 0, so the box at 0 never closes: at a depth limit of 4 it stays
    open (the answer is "not proved", naming that box), whatever the box budget."""
    result = prove_nonnegative(lambda x: x - 1 + (-x).exp(), [(0, 1)], max_depth=4, max_boxes=10**6)
    assert not result.proved and not result.refuted and "depth" in result.reason
    assert result.worst_box[0][0] == 0


def test_strict_does_not_close_a_box_where_h_is_zero():
    """h = 0 on [0, 1]: h >= 0 is proved at once, h > 0 never (every box's value is the exact 0, not > 0)."""
    assert prove_nonnegative(lambda x: 0 * x, [(0, 1)], max_depth=6).proved
    strict = prove_nonnegative(lambda x: 0 * x, [(0, 1)], strict=True, max_depth=6)
    assert not strict.proved and not strict.refuted
