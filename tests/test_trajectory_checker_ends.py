"""The trajectory checker's two comparisons on balls, planted so that the midpoints agree and the ends do not: a
quantity is below a curve only when its whole ball is, and a stated ball contains the recomputed one only when it
holds both of its ends (each compared with exact Fractions)."""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq

from certify_checker import trajectory


def _exact(end: arb) -> Fraction:
    mantissa, exponent = (int(v) for v in end.mid().man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


def _ball(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


def test_a_quantity_holds_below_a_curve_only_when_its_whole_ball_does():
    """D in [1/2, 3/2] against the curve exp(log(11/10)) = 11/10: its midpoint 1 is below, its upper end is not, so
    the outcome is undecided; [1/2, 1] is below (holds), [6/5, 8/5] above (violated)."""
    with ctx.workprec(53):
        curve = (arb(11) / 10).log()
        for mid, rad, expected in ((Fraction(1), Fraction(1, 2), "undecided"), (Fraction(3, 4), Fraction(1, 4), "holds"),
                                   (Fraction(7, 5), Fraction(1, 5), "violated"), (Fraction(6, 5), Fraction(3, 10), "undecided")):
            quantity = _ball(mid) + arb(0, _ball(rad))
            high, low = _exact(quantity.upper()), _exact(quantity.lower())
            truth = "holds" if high < Fraction(11, 10) else "violated" if low > Fraction(11, 10) else "undecided"
            assert truth == expected
            assert trajectory._compare(quantity, curve) == expected, (mid, rad)


def test_a_stated_ball_contains_the_recomputed_one_only_when_it_holds_both_its_ends():
    """The stated 1 +- 2^-20 around the recomputed 1 +- 2^-10 (the same midpoint): not inside; the stated
    1 +- 2^-5 is; so is a stated ball whose midpoint is off by less than the difference of the radii."""
    with ctx.workprec(53):
        mine = arb(1) + arb(0, arb(2) ** -10)
        assert not trajectory.inside(mine, (arb(1), arb(2) ** -20))
        assert trajectory.inside(mine, (arb(1), arb(2) ** -5))
        assert trajectory.inside(mine, (arb(1) + arb(2) ** -7, arb(2) ** -5))
        assert not trajectory.inside(mine, (arb(1) + arb(2) ** -5, arb(2) ** -5))  # misses mine's lower end
