"""How reliably `certify attack` finds planted false bounds, over seeds: `python -m benchmarks.attack [--long]
[--seeds K] [CASE ...]`.

Each case is an attack (certify.search.attack.attack) on a bound that is false, of graded difficulty (more
tokens and dimensions, thin heads, two layers, a value matrix, a bound false only where L = a D^2 is small,
only where it is large or only between 2 and 4, only at a diameter a stack reaches, or only where D_0 is near
e^5), or on a true claim as a control, run from seeds 0 .. K-1 (default 10).  Printed per case: how many seeds
reported a certified violation (for a control it must be none: a violation of a true claim would be a soundness
bug, and the case says FAILED), the median and worst number of evaluations until the search first saw a point it
believed violated (a score above rounding; the counterexample is certified after the search), and the median and
total seconds of a run, certification and shrinking included.

Why the false bounds are false (docs/claims.md, collapse.tanh): two opposite tokens along A's top singular
direction give D'/D = tanh(a D^2 / 4), whose gap 1 - tanh(L/4) is about 2 exp(-L/2); a bound
(1 - exp(-a D^2 / k)) D with k > 2 fails once L > 2 k ln 2 / (k - 2), and a D^3 / k with k > 4 where L is small.
The short run takes a minute or two on one core; --long adds larger searches (more variables, the default
budget) and takes several minutes.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass, field

from certify.search import attack, objective

SLOW_L = "(1-exp(-a*D**2/3))*D"  # false for L > 6 ln 2 = 4.16
NEAR_L = "(1-exp(-a*D**2/2.5))*D"  # false for L > 10 ln 2 = 6.93, and only by a factor exp(-L/10) in the gap
SMALL_L = "a*D**3/5"  # false for L below about 2.4 only
MID_L = "tanh(a*D**2/4)*D*(1-0.01*max(0,1-(a*D**2-3)**2))"  # 1% below the sharp bound, only for L in (2, 4)
# the sharp bound but where the diameter is near exp(-30), reached only through a stack (tests/test_attack.py): the
# extremal structure is its equality there, a trap for a search that follows it
WINDOW = "tanh(a*D**2/4)*D*(1 - 0.5*max(0, 1 - (log(D) + 30)**2))"
# the sharp bound but where D is near e^5, which one layer reaches only with D_0 there: a target that does not scale
# like D, seen only by probing D_0 across its range (objective.scales_like_D; tests/test_attack.py)
D0_WINDOW = "tanh(a*D**2/4)*D*(1 - 0.5*max(0, 1 - 4*(log(D) - 5)**2))"


@dataclass(frozen=True)
class Case:
    name: str
    false: bool  # a planted false bound (to be found) or a true claim (never to be reported violated)
    options: dict = field(default_factory=dict)


SHORT = (
    Case("n2 d2", True, dict(bound=SLOW_L, n=2, d=2, budget=400)),
    Case("n2 d2 thin", True, dict(bound=SLOW_L, n=2, d=2, d_k=1, budget=400)),
    Case("n2 d2 small L", True, dict(bound=SMALL_L, n=2, d=2, budget=400)),
    Case("n4 d3 near", True, dict(bound=NEAR_L, n=4, d=3, budget=1000)),
    Case("n4 d2 mid-L dip", True, dict(bound=MID_L, n=4, d=2, budget=1000)),
    Case("n3 d2 mid-L dip", True, dict(bound=MID_L, n=3, d=2, budget=1000)),  # odd: a token hidden
    Case("n3 d4 thin", True, dict(bound=SLOW_L, n=3, d=4, d_k=2, budget=1000)),
    Case("n3 d2 2 layers", True, dict(bound=SLOW_L, n=3, d=2, layers=2, budget=1000)),
    Case("n3 d2 V", True, dict(bound="v*" + SLOW_L, n=3, d=2, budget=1000)),
    Case("n2 d1 3 layers window", True, dict(bound=WINDOW, n=2, d=1, layers=3, budget=900)),
    Case("n2 d1 D_0 window", True, dict(bound=D0_WINDOW, n=2, d=1, budget=400)),
    Case("control tanh n2 d2", False, dict(claim="collapse.tanh", n=2, d=2, budget=400)),
    Case("control n3 d3 thin", False, dict(bound="(1-exp(-a*D**2/2))*D", n=3, d=3, d_k=1, budget=600)),
    Case("control trajectory", False, dict(claim="collapse.trajectory", n=3, d=2, layers=2, budget=600)),
)
LONG = (
    Case("n4 d4 near", True, dict(bound=NEAR_L, n=4, d=4, budget=3000)),
    Case("n6 d4 thin", True, dict(bound=SLOW_L, n=6, d=4, d_k=1, budget=3000)),
    Case("n4 d3 V 2 layers", True, dict(bound="v*" + SLOW_L, n=4, d=3, layers=2, budget=3000)),
    Case("n4 d4 small L", True, dict(bound=SMALL_L, n=4, d=4, budget=3000)),
    Case("control tanh n4 d4", False, dict(claim="collapse.tanh", n=4, d=4, budget=3000)),
)


# a score the search believes: the equality of a sharp bound scores a rounding error of either sign
ABOVE_ROUNDING = 1e-9


class FirstViolating:
    """objective.evaluate counted, with the count at the first score > ABOVE_ROUNDING (the same for any version of
    the search)."""

    def __init__(self):
        self.calls, self.first, self.real = 0, None, objective.evaluate

    def __enter__(self):
        def evaluate(*args, **kwargs):
            e = self.real(*args, **kwargs)
            self.calls += 1
            if e.score > ABOVE_ROUNDING and self.first is None:
                self.first = self.calls
            return e
        objective.evaluate = evaluate
        return self

    def __exit__(self, *exc):
        objective.evaluate = self.real


def run(case: Case, seeds: int) -> str:
    found, firsts, seconds = 0, [], []
    for seed in range(seeds):
        started = time.perf_counter()
        with FirstViolating() as counted:
            report = attack.attack(**case.options, seed=seed)
        seconds.append(time.perf_counter() - started)
        found += report.violated
        if report.violated and counted.first is not None:
            firsts.append(counted.first)
    if case.false:
        verdict = "" if found == seeds else "  (missed on some seeds)"
    else:
        verdict = "  FAILED: a true claim reported violated" if found else ""
    evaluations = (f"{statistics.median(firsts):6.0f} {max(firsts):6d}" if firsts else f"{'-':>6} {'-':>6}")
    return (f"{case.name:22} {'false' if case.false else 'true':5} {found:3d}/{seeds:<3d} {evaluations} "
            f"{statistics.median(seconds):6.2f} {sum(seconds):7.1f}{verdict}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.attack", description=__doc__.split("\n\n")[0])
    parser.add_argument("--long", action="store_true", help="add the larger searches")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0 .. K-1 for every case (default 10)")
    parser.add_argument("cases", nargs="*", help="only the cases whose name contains one of these")
    args = parser.parse_args(argv)
    cases = SHORT + (LONG if args.long else ())
    if args.cases:
        cases = tuple(c for c in cases if any(part in c.name for part in args.cases))
    print(f"{'case':22} {'bound':5} {'found':7} {'first violating':>13} {'s/run':>6} {'total s':>7}", flush=True)
    print(f"{'':22} {'':5} {'':7} {'median':>6} {'worst':>6}", flush=True)
    for case in cases:
        print(run(case, args.seeds), flush=True)


if __name__ == "__main__":
    main()
