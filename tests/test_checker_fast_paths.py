"""The checker's per-certificate defences taken by a shorter path must decide as their full computation does:
exact.loose asks the accuracy first, and limits.problem is remembered (a pure function of numbers and frozen
Limits).  Each is checked against a computation of its own here."""

from __future__ import annotations

from fractions import Fraction

import pytest
from flint import arb

from certify_checker import limits as checker_limits
from certify_checker.exact import accuracy, loose, slack
from certify_checker.inequality import ESCALATION


def _exact(x: arb) -> Fraction:
    """An exact number of arb's (a midpoint or a radius) as a Fraction."""
    m, e = x.mid().man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


def _loose_exactly(mine: arb, radius: arb, precision: int) -> bool:
    """loose() in exact rationals: a radius beyond 2^slack times the checker's own (its radius plus its midpoint's
    last bit), where the checker's ball has at most slack correct bits."""
    own = _exact(arb(mine.rad())) + abs(_exact(mine)) * Fraction(1, 2 ** precision)
    return accuracy(mine, precision) <= slack(precision) and _exact(radius) > own * 2 ** slack(precision)


BALLS = [arb(0.5, 1e-16), arb(0.5, 0.4), arb(1e-13, 1e-13), arb(0, 1e-20), arb(3), arb(-2.5, 1e-3), arb(7, 2.0 ** -40)]


@pytest.mark.parametrize("precision", [53, 128, 300])
@pytest.mark.parametrize("mine", BALLS, ids=str)
def test_loose_decides_as_its_exact_computation(mine, precision):
    """Radii 4 times inside and outside the bound (no rounding decides them), and extremes: the cheap test first
    changes no outcome, and both outcomes occur."""
    _agrees_with_exact(mine, precision)


@pytest.mark.parametrize("precision", [53, 128, 300])
def test_loose_at_the_slack_boundary(precision):
    """Balls whose accuracy is the slack itself, a bit below and a bit above (where the cheap test decides)."""
    balls = [arb(1, 2.0 ** -k) for k in range(slack(precision) - 3, slack(precision) + 4)]
    assert {accuracy(b, precision) - slack(precision) for b in balls} >= {-1, 0, 1}
    for mine in balls:
        _agrees_with_exact(mine, precision)


def _agrees_with_exact(mine: arb, precision: int) -> None:
    own = _exact(arb(mine.rad())) + abs(_exact(mine)) * Fraction(1, 2 ** precision)
    bound = own * 2 ** slack(precision)
    radii = [arb(1e-300), arb(1e300)] + ([arb(float(bound / 4)), arb(float(bound * 4))] if bound else [])
    for radius in radii:
        assert loose(mine, radius, precision) is _loose_exactly(mine, radius, precision)
    few_bits = accuracy(mine, precision) <= slack(precision)
    assert loose(mine, arb(1e300), precision) is few_bits  # a loose radius is refused exactly where bits are few


SHAPES = [(8, 4, 1, 0, 53), (8, 4, 1, 0, 1 << 12), (3, 2, 1, 0, 53), (256, 768, 1, 0, 53), (1024, 1024, 1, 0, 53),
          (1024, 1024, 64, 1024, 4000), (1025, 4, 1, 0, 53), (8, 1025, 1, 0, 53), (8, 4, 65, 0, 53),
          (8, 4, 1, 0, (1 << 16) + 1), (128, 384, 6, 1536, 200)]


@pytest.mark.parametrize("n, d, layers, hidden, bits", SHAPES)
def test_remembered_limits_problem_answers_as_computed(n, d, layers, hidden, bits):
    """The remembered estimate answers as the computation it remembers, for each limit (the defaults, tighter
    ones, looser ones) and each pricing option, asked twice (computed, then remembered), both refusing and
    admitting."""
    limit_sets = [checker_limits.LIMITS, checker_limits.Limits(work=100), checker_limits.Limits(memory=1 << 62),
                  checker_limits.Limits(tokens=1 << 20, dim=1 << 20, layers=1 << 20, precision=1 << 20, work=10**18,
                                          memory=1 << 62)]
    options = [{}, {"factors": ESCALATION}, {"thin": max(1, d // 4)}, {"valued": True}, {"steps": 3, "extra": 10**5}]
    outcomes = set()
    for limits in limit_sets:
        for option in options:
            computed = checker_limits.problem.__wrapped__(n, d, layers, hidden, bits, limits, **option)
            for _ in range(2):
                assert checker_limits.problem(n, d, layers, hidden, bits, limits, **option) == computed
            outcomes.add(computed is None)
    assert outcomes == {True, False}  # work=100 refuses every shape, the widest limits admit every one


@pytest.mark.parametrize("radius", ["1e200", "1e30"])
def test_a_loose_radius_read_in_binary64_is_not_accurate(radius):
    """The checker's [0.5 +/- 0.4] has no correct bit, nor has [0.5 +/- 1e200]: their accuracies agree (both 0),
    and the binary64 reading of the stated text decides the accuracy; the loose radius must still be refused
    there, not only on the exact reading."""
    from certify_checker import exact
    text = f"[0.5 +/- {radius}]"
    assert exact._binary64(text) is not None  # decided on the binary64 reading
    assert not exact.accurate(arb(0.5, 0.4), text, 53)
    assert exact.accurate(arb(0.5, 0.4), "[0.5 +/- 0.5]", 53)
