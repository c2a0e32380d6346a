"""What the checker's limits leave a trajectory (certify.studies.trajectory): the highest precision worth
trying, and a meter that stops an attempt as soon as its certificate is certain to be refused.

The checker prices a trajectory's certificate (certify_checker.over_limits, asked through
certify.engine.certificate) from its shapes, its three precisions and the sum over its stated steps of
each step's price (certify_checker.trajectory.step_prices: its Python, and its arithmetic weighted by cost() at its
precision and at twice it, for the configuration's sizes).  An
attempt's first step runs at the attempt's precision p, which fixes the curves' precision and so everything
but that sum: an attempt at p may state steps whose prices add up to at most allowed(p), found by bisection
on the checker's own estimate of that sum (never a copy of it).

How a run ends.  An attempt either resolves every D_t (T + 1 steps; its certificate is the run's unless a
bound is undecided and the precision rises) or stops at its first unresolved D_t; the last attempt's
points through that one are then the certificate, as few as one.  Hence:
  - cap: the highest precision at which a certificate of every D_t can fit (its first step at p, every
    later one at the least a step runs at: START_PRECISION in centred form, p itself in absolute
    coordinates, where every step runs at the attempt's precision).  Above it no attempt can resolve every D_t
    within the limits, so the escalation goes no higher (nor above --max-prec); when not even
    START_PRECISION fits, the run is one attempt at it, whose certificate, if it stops early, may fit.
  - the meter of an attempt below the cap counts the steps run so far plus the least the rest can cost:
    a step never runs below that least nor below its precision in any attempt before (the floors of
    certify.studies.trajectory._run).  Once that is over the limits, no attempt at this or any higher
    precision can resolve every D_t within them; one between it and the attempt before still may (the
    escalation's guess leaps), so those are tried by bisection (certify.studies.trajectory._between) and
    the run reports the highest attempt that fits.
  - the meter of the last attempt (at the cap) counts only the steps run so far, since it may stop at its
    next D_t: once they are over, every certificate it can write is refused.
  - before any work the run is refused when even one step at START_PRECISION is: the least any run states.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

from certify.core.limits import Limits
from certify.core.precision import START_PRECISION
from certify.engine import certificate


class OverLimit(Exception):
    """An attempt stopped before its step t: the certificate it is writing would pass the checker's limits."""

    def __init__(self, precision: int, t: int, T: int, reason: str, rest: bool):
        more = " and the least the rest can cost" if rest else ""
        super().__init__(f"at {precision} bits its steps through t = {t} of {T}{more} would pass {reason}")
        self.precision, self.t = precision, t


@dataclass
class Budget:
    """The checker's limits as they bear on one trajectory: what its certificate may state (module docstring)."""

    inputs: dict  # the configuration as the certificate states it (certify.core.config.to_json)
    T: int
    curves: list  # the curves drawn (value curves add work)
    limits: Limits
    curve_precision: Callable[[int, int], int]  # of a run at precision p through T layers
    norm_precision: int
    centred: bool  # the representation: in absolute coordinates every step runs at the attempt's precision
    routes: dict  # the shapes of the witnesses of `a` the certificate will state (certify_checker prices by them)

    @functools.cached_property
    def price(self) -> Callable[[int], int]:
        """The checker's price of one step at given bits (certify.engine.certificate.step_prices): the same at every
        attempt, as it reads the configuration only."""
        return certificate.step_prices(self._skeleton(START_PRECISION, [START_PRECISION]))

    def least_step(self, precision: int) -> int:
        """The least precision a step after the first runs at in an attempt at `precision`."""
        return START_PRECISION if self.centred else precision

    def refusal(self) -> str | None:
        """Why the least certificate any run can write (one step at START_PRECISION) is refused, or None."""
        return self._explained(START_PRECISION, [START_PRECISION])

    def cap(self, max_prec: int) -> tuple[int, str | None]:
        """(the highest precision up to max_prec at which a certificate of every D_t can fit, START_PRECISION when
        none can; why the next precision cannot, or None when max_prec can)."""
        def complete(p: int, explained: bool = False) -> str | None:
            return (self._explained if explained else self._refusal)(p, [p] + [self.least_step(p)] * self.T)

        if complete(max_prec) is None:
            return max_prec, None
        low, high = START_PRECISION, max_prec  # complete(high) refuses; the largest that does not is sought
        if complete(low):
            return low, f"even at {low} bits a certificate of every D_t would pass {complete(low, True)}"
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if complete(middle) is None else (low, middle)
        return low, f"at {high} bits a certificate of every D_t would pass {complete(high, True)}"

    def meter(self, precision: int, floors: list, last: bool) -> "Meter":
        """The meter of an attempt at `precision` (floors: per t, the least precision its step t runs at)."""
        rest = [0] * (self.T + 2)  # rest[t]: the least steps t..T can cost, when they must all run
        if not last:
            for t in reversed(range(self.T + 1)):
                rest[t] = rest[t + 1] + self.price(max(floors[t:t + 1] + [self.least_step(precision)]))
        return Meter(self, precision, self._allowed(precision), rest)

    def _allowed(self, precision: int) -> int:
        """The largest sum of step prices the checker accepts in a certificate at this precision (0: none)."""
        low, high = 0, (self.T + 1) * self.price(precision)
        if self._refusal_of_sum(precision, high) is None:
            return high
        while high - low > 1:  # the estimate grows with the sum: low is accepted (or 0), high refused
            middle = (low + high) // 2
            low, high = (middle, high) if self._refusal_of_sum(precision, middle) is None else (low, middle)
        return low

    def _refusal_of_sum(self, precision: int, total: int, explained: bool = False) -> str | None:
        """The checker's refusal of a certificate at this precision whose steps' prices add up to total, asked with
        that total in place of the steps' (certify_checker.over_limits' priced): no list of steps need add up to
        it, as cost() leaps between precisions, and the checker's estimate of a list is that of its sum."""
        steps = [precision]  # read for its shape only: total prices the steps
        return self._explained(precision, steps, False, total) if explained else self._refusal(precision, steps, total)

    def _explained(self, precision: int, steps: list, quote: bool = True, priced: int | None = None) -> str | None:
        """The checker's limit a certificate with these steps passes and how to raise it, or None
        (certify.engine.certificate.checker_limit; quote and priced: its)."""
        return certificate.checker_limit(self._skeleton(precision, steps), self.limits, priced, quote)

    def _refusal(self, precision: int, steps: list, priced: int | None = None) -> str | None:
        """The checker's refusal of the certificate with these steps (priced: their prices' sum in their place)."""
        return certificate.checker_refusal(self._skeleton(precision, steps), self.limits, priced)

    def _skeleton(self, precision: int, steps: list) -> dict:
        """What the checker's estimate reads of a certificate at this precision with these steps."""
        return {"kind": "trajectory", "layers": self.T, "inputs": self.inputs, "precision": precision,
                "step_precisions": steps, "curves": self.curves,
                "curve_precision": self.curve_precision(precision, self.T), "norm_precision": self.norm_precision,
                "witness": self.routes}


@dataclass
class Meter:
    """One attempt's running price, in the checker's step prices, against what the checker accepts at its precision."""

    budget: Budget
    precision: int
    allowed: int  # the sum of step prices the checker accepts at this precision
    rest: list  # the least the steps from t on must still cost
    spent: int = 0

    def charge(self, t: int, bits: int) -> None:
        """Count step t at `bits` before it runs; OverLimit once the certificate is certain to be refused."""
        self.spent += self.budget.price(bits)
        total = self.spent + self.rest[t + 1]
        if total > self.allowed:
            reason = self.budget._refusal_of_sum(self.precision, total, explained=True)
            raise OverLimit(self.precision, t, self.budget.T, reason, rest=self.rest[t + 1] > 0)
