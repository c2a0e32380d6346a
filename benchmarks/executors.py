"""Throughput of a campaign on the process pool and on Dask side by side: the same campaign, one run.

    python -m benchmarks.executors [--n 8] [--d 4] [--count 1000] [--workers 2] [--repeats 1]

Each executor runs `certify sample`'s campaign (collapse.global on gaussian configurations) into a
fresh folder, alternating pool, dask, pool, dask, ... for --repeats rounds; Dask is the embedded
LocalCluster (`--executor dask`, one thread per worker process).  Columns: the wall time of the
whole run, the part spent starting the executor (the cluster's processes), configurations per
second of wall time once started, and CPU seconds of this process and its workers (children) per
configuration, so that the overhead of an executor shows even on a busy machine.  The load
average is printed before and after: with other jobs running, absolute numbers are rough and the
ratios measured side by side are the ones to read.  The folders must be equal record for record.
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from certify.search import campaign


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the pool's and the cluster's workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(spec: campaign.Campaign, executor: str, workers: int, folder: Path) -> dict:
    cpu, wall = _cpu(), time.perf_counter()
    summary = campaign.run(spec, folder, workers=workers, executor=executor)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    run = summary["run"]
    return {"executor": executor, "wall": wall, "startup": wall - run["seconds"],
            "rate": spec.count / run["seconds"], "cpu_ms": 1000 * cpu / spec.count}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.executors", description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--d", type=int, default=4)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    spec = campaign.Campaign("gaussian", args.n, args.d, args.count, seed=1, claim="collapse.global")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores; "
          f"collapse.global on {args.count} gaussian {args.n} x {args.d}, {args.workers} workers")
    print(f"{'executor':<9} {'wall s':>7} {'startup s':>9} {'configs/s':>10} {'CPU ms/config':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        folders = []
        for round_ in range(args.repeats):
            for executor in ("pool", "dask"):
                folders.append(Path(tmp) / f"{executor}-{round_}")
                row = measure(spec, executor, args.workers, folders[-1])
                print(f"{row['executor']:<9} {row['wall']:>7.2f} {row['startup']:>9.2f} {row['rate']:>10.1f} "
                      f"{row['cpu_ms']:>14.2f}", flush=True)
        reference = campaign.records(folders[0])
        assert all(campaign.records(folder) == reference for folder in folders[1:]), "the folders differ"
    print(f"folders equal record for record; load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
