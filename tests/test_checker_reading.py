"""The checker reads a number's text, and a stated enclosure's, once: what it remembers must not
change what it decides (a reading at one precision served at another, or a containment decided at
a coarser precision than the stated digits)."""

from __future__ import annotations

from flint import arb, ctx
from mpmath import mp

from certify_checker import exact

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
