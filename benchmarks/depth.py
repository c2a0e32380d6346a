"""Deep trajectories at fixed precision: the two deep examples, timed (`python -m benchmarks.depth`).

Each is traced with the precision cap at 256 bits: the centred form (certify.core.centred) keeps
D_t's relative accuracy however far it collapses, so the precision needed depends on one step's
conditioning.  The time includes the checker's re-derivation of the certificate.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from certify.studies import trajectory

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
CASES = [("rotation-20.json", 20), ("pure-stack.json", 100)]


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(prog="python -m benchmarks.depth", description=__doc__.split("\n\n")[0]).parse_args(argv)
    for name, T in CASES:
        started = time.perf_counter()
        tr = trajectory.trace(str(EXAMPLES / name), T, max_prec=256)
        seconds = time.perf_counter() - started
        resolved = sum(p.resolved for p in tr.points)
        last = trajectory.log10_ball(tr.points[-1].D).str(6, radius=False)
        print(f"{name:20s} T = {T:3d}: {resolved}/{T + 1} D_t resolved at {tr.precision} bits, "
              f"log10 D_T = {last}, verdict {tr.verdict}, certified {tr.certified}, {seconds:.2f} s")


if __name__ == "__main__":
    main()
