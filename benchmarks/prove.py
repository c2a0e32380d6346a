"""Region proofs: the time `certify prove` takes on the cases of its design goal, one core.

    python -m benchmarks.prove [--budget S] [--only N]

Each case runs in this process (one core) with a time budget (default 60 s): collapse.global and
collapse.tanh for two tokens in every dimension up to a D^2 = 8192 (radius 1, norm 2048);
collapse.global in d = 1 for n = 3, 4, 5 at radius = norm = 2 and n = 6 at 1; collapse.tanh for
n = 3 in d = 1 at radius 1, norm 3/2 and at radius = norm = 2 (the tight curve w = ln 2 inside both),
for n = 4 at radius 1/2, norm 1 (tight along positions 0, 0, 1, 1 at w = 0), at radius = norm = 1 and at
radius = norm = 2 (positions 0, 0, 0, 1 tight along w = ln 3 too, and up to L = 32 an inner position within
about e^(-L/2) of 0), and for n = 5 at radius = norm = 1 and 2 (the last one about a minute; give --budget 120).  The proving time
includes the checker's replay of the certificate, which is also timed apart.  The load average is printed
first: other jobs on the machine slow every number.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import certify_checker as checker
from certify.prove import profiles, reductions
from certify.prove import region as region_proof

# (claim, n, d, radius, norm)
CASES = [
    ("collapse.global", 2, None, "1", "2048"),
    ("collapse.tanh", 2, None, "1", "2048"),
    ("collapse.global", 3, 1, "2", "2"),
    ("collapse.global", 4, 1, "2", "2"),
    ("collapse.global", 5, 1, "2", "2"),
    ("collapse.global", 6, 1, "1", "1"),
    ("collapse.tanh", 3, 1, "1", "3/2"),  # w up to 3/4: the tight curve t = 0, w = ln 2 lies inside
    ("collapse.tanh", 3, 1, "2", "2"),
    ("collapse.tanh", 4, 1, "1/2", "1"),  # tight along t = (0, 1), w = 0 for every L: the corner faces close it
    ("collapse.tanh", 4, 1, "1", "1"),
    ("collapse.tanh", 4, 1, "2", "2"),  # w up to 4: the corner 0, 0, 0, 1 is tight along w = ln 3 as well
    ("collapse.tanh", 5, 1, "1", "1"),
    ("collapse.tanh", 5, 1, "2", "2"),  # 27,000 boxes: the ordered leaves leave the sorted part t2 <= t3 <= t4
]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.prove", description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=60.0, help="seconds per case (default 60)")
    parser.add_argument("--only", type=int, action="append", help="run only the case with this index (0-based)")
    args = parser.parse_args(argv)
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, load average "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"{'claim':<16} {'n':>2} {'d':>4} {'radius':>6} {'norm':>6} {'a D^2 <=':>9}  {'verdict':<10} "
          f"{'leaves':>7} {'boxes':>7} {'prove s':>8} {'check s':>8}  volume proved")
    for index, (claim, n, d, radius, norm) in enumerate(CASES):
        if args.only and index not in args.only:
            continue
        region = reductions.region(n, d, radius, norm)
        started = time.perf_counter()
        result = region_proof.prove(region, profiles.claim_profile(claim), time_limit=args.budget)
        proving = time.perf_counter() - started
        started = time.perf_counter()
        confirmed = checker.verify(result.certificate).ok
        checking = time.perf_counter() - started
        verdict = result.verdict if confirmed else f"{result.verdict}?"
        print(f"{claim:<16} {n:>2} {d or 'any':>4} {radius:>6} {norm:>6} {float(reductions.reduce(region).root[1][1]):>9g}  "
              f"{verdict:<10} {len(result.leaves):>7} {result.boxes:>7} {proving:>8.2f} {checking:>8.2f}  "
              f"{float(result.volume_proved):.4%}", flush=True)
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
