"""Where float64 loses the gap exp(-a D^2) of the collapse bound (docs/claims.md, init.scaling).

With correctly rounded binary64:
- 1 - exp(-x) rounds to exactly 1.0 once exp(-x) <= 2^-54 (half the spacing of doubles just
  below 1), i.e. from x = 54 ln 2 (about 37.43): the certified contraction is invisible;
- exp(-x) rounds to 0.0 once exp(-x) <= 2^-1075 (half the smallest subnormal), i.e. from
  x = 1075 ln 2 (about 745.13): the gap itself underflows.
Ball arithmetic keeps the gap at any size; these thresholds only say what float64 would show.
"""

from __future__ import annotations

import math

from flint import arb

ONE_MINUS_GAP_IS_ONE_LN2 = 54
GAP_UNDERFLOWS_LN2 = 1075
# float64 values of the thresholds, for display and for screening (never for a verdict)
ONE_MINUS_GAP_IS_ONE = ONE_MINUS_GAP_IS_ONE_LN2 * math.log(2)
GAP_UNDERFLOWS = GAP_UNDERFLOWS_LN2 * math.log(2)

INFORMATIVE, INDISTINGUISHABLE, UNDERFLOWED, UNDECIDED = "informative", "indistinguishable", "underflowed", "undecided"
REGIME_WORDS = {
    INFORMATIVE: "a D^2 < 54 ln 2: float64 resolves the gap",
    INDISTINGUISHABLE: "54 ln 2 <= a D^2 < 1075 ln 2: float64 computes 1 - exp(-a D^2) = 1.0",
    UNDERFLOWED: "a D^2 >= 1075 ln 2: float64 computes exp(-a D^2) = 0",
    UNDECIDED: "a D^2 is within rounding of a threshold",
}


def regime(a_D2: arb) -> str:
    """The float64 regime of the factor 1 - exp(-a D^2), decided from a ball enclosing a D^2."""
    ln2 = arb(2).log()
    saturation, underflow = ONE_MINUS_GAP_IS_ONE_LN2 * ln2, GAP_UNDERFLOWS_LN2 * ln2
    if a_D2 < saturation:
        return INFORMATIVE
    if a_D2 >= underflow:
        return UNDERFLOWED
    if a_D2 >= saturation and a_D2 < underflow:
        return INDISTINGUISHABLE
    return UNDECIDED


def float64_view(a_D2: float) -> tuple[bool, bool]:
    """What plain float64 makes of the factor at a D^2 = x: (1 - exp(-x) == 1.0, exp(-x) == 0.0)."""
    gap = math.exp(-a_D2)
    return 1.0 - gap == 1.0, gap == 0.0


def describe(a_D2: arb) -> str:
    """The regime in words, for tables."""
    return REGIME_WORDS[regime(a_D2)]
