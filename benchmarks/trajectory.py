"""Long collapsing trajectories, timed: examples/layer.json through T layers (`python -m benchmarks.trajectory
[T ...]`, default 500 1000 2000 3000; under a minute in all on one core; 4000, the most `certify trajectory`
takes, in some 40 to 50 s more), under a work limit of WORK: the checker prices each step's arithmetic at the cost
of its precision and of twice it, and its default limit stops the escalation short of every D_t from some 3800
layers on.

Near consensus D_t loses about log2(3) bits of relative accuracy per layer, so T layers need some 2T
bits at t = 0 and the time grows about like T^2 whatever is done; the step precisions
(certify.studies.trajectory) run each later step at the accuracy left, and the next run's precision is
predicted from the bits lost per layer.  Times are wall and CPU (the machine may be shared), split
into the engine's escalation and the checker's re-derivation of the certificate.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from certify.core.limits import Limits
from certify.studies import trajectory

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "layer.json"
LAYERS = (500, 1000, 2000, 3000)
WORK = 2 * 10**9  # the checker's estimate of 4000 layers' certificate is 1.5e9


def timed(T: int) -> str:
    marks = {}

    def stage(done: int, layers: int, name: str) -> None:  # trace's progress(done, layers, stage)
        marks.setdefault("checker" if name == "the checker" else "engine", (time.perf_counter(), time.process_time()))
    started = (time.perf_counter(), time.process_time())
    tr = trajectory.trace(str(EXAMPLE), T, progress=stage, limits=Limits(work=WORK))
    wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    checker_cpu = started[1] + cpu - marks["checker"][1]
    steps = tr.step_precisions
    return (f"T = {T:5d}: {tr.verdict}, certified {tr.certified}, {tr.precision} bits at t = 0, {steps[-1]} at "
            f"t = {len(steps) - 1}; wall {wall:.1f} s, CPU {cpu:.1f} s (checker {checker_cpu:.1f} s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.trajectory", description=__doc__.split("\n\n")[0])
    parser.add_argument("layers", nargs="*", type=int, metavar="T",
                        help=f"the depths to time (default {' '.join(map(str, LAYERS))})")
    for T in parser.parse_args(argv).layers or LAYERS:
        print(timed(T), flush=True)


if __name__ == "__main__":
    main()
