"""--l-range LO HI, the range of L = a D^2 of `sample` and `attack`: one rule and one message, with each
command's own bounds and reason (a campaign draws L in the range, so LO = HI fixes it; a search moves L
within it, so it needs LO < HI)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from certify.errors import BadInput


@dataclass(frozen=True)
class LRange:
    """The ranges a command takes: LO and HI within [low, high], LO = HI too when `fixed`; `why` the reason."""

    low: float
    high: float
    fixed: bool
    why: str

    @property
    def rule(self) -> str:
        """The rule in words, for the option's help and its refusal."""
        return f"LO {'<=' if self.fixed else '<'} HI within [{_exact(self.low)}, {_exact(self.high)}]: {self.why}"

    def checked(self, l_range, option: str = "--l-range") -> tuple[float, float]:
        """(LO, HI) as floats, or BadInput naming the `option` and stating the rule and the values given."""
        try:
            lo, hi = (float(v) for v in l_range)
        except (TypeError, ValueError):  # from Python: a number, three of them, words
            raise BadInput(f"{option} must be two numbers LO HI, got {l_range!r}") from None
        ordered = lo <= hi if self.fixed else lo < hi
        if not (math.isfinite(lo) and math.isfinite(hi) and self.low <= lo and hi <= self.high and ordered):
            raise BadInput(f"{option} must be {self.rule}; got {lo} {hi}")
        return lo, hi


def _exact(x: float) -> str:
    """A bound written exactly and short: 16384, 1e-12, 2^-20 (whose 6 digits, 9.53674e-07, lie below it)."""
    if x.is_integer():
        return str(int(x))
    if float(f"{x:g}") == x:
        return f"{x:g}"
    mantissa, exponent = math.frexp(x)
    return f"2^{exponent - 1}" if mantissa == 0.5 else repr(x)
