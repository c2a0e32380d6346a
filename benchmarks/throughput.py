"""Throughput: certified configurations per second next to plain float64, measured in the same run.

    python -m benchmarks.throughput [--count K] [--seed S] [--workers W] [--sizes 8x4,16x16]

For each size (n, d), K configurations of the gaussian distribution (certify.search.samplers)
are evaluated for collapse.global three ways:
    float64    the layer and both sides of the claim in float64 numpy, batched over the K
               configurations (certify.search.float_screen): what an uncertified sweep costs
    certified  certify.engine.check on each configuration in this process: float64 screen, arb
               at adaptive precision, and the checker's confirmation of the certificate
    campaign   certify.search.campaign.run on W processes: the `certify sample` path, files included
The ratio float64 / certified is per process.  Drawing the configurations is not timed.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time

import numpy as np

from certify import engine
from certify.search import campaign
from certify.search import float_screen, samplers

CLAIM = "collapse.global"
DISTRIBUTION = "gaussian"
FLOAT_REPEATS = 5  # the float64 pass is fast: keep the best of a few repeats


def _float64_rate(items: list[samplers.Sample]) -> float:
    X, A = np.stack([s.X for s in items]), np.stack([s.A for s in items])
    pairs = float_screen.inequalities(CLAIM, None)
    best = float("inf")
    for _ in range(FLOAT_REPEATS):
        started = time.perf_counter()
        float_screen.sides(pairs, float_screen.layer_quantities(X, A))
        best = min(best, time.perf_counter() - started)
    return len(items) / best


def _certified_rate(items: list[samplers.Sample]) -> tuple[float, dict]:
    verdicts: dict = {}
    started = time.perf_counter()
    for item in items:
        verdict = engine.check(item.config, claim=CLAIM).verdict
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return len(items) / (time.perf_counter() - started), verdicts


def _campaign_rate(n: int, d: int, count: int, seed: int, workers: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        campaign.run(campaign.Campaign(DISTRIBUTION, n, d, count, seed, claim=CLAIM), folder, workers=workers)
        return count / (time.perf_counter() - started)


def measure(n: int, d: int, count: int, seed: int, workers: int) -> dict:
    items = [samplers.sample(DISTRIBUTION, n, d, seed, i) for i in range(count)]
    float_rate = _float64_rate(items)
    certified_rate, verdicts = _certified_rate(items)
    return {"n": n, "d": d, "count": count, "float64_per_s": float_rate, "certified_per_s": certified_rate,
            "ratio": float_rate / certified_rate, "campaign_per_s": _campaign_rate(n, d, count, seed, workers),
            "workers": workers, "verdicts": verdicts}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200, help="configurations per size (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes for the campaign")
    parser.add_argument("--sizes", default="8x4,16x16", help="n x d sizes, comma-separated (default 8x4,16x16)")
    args = parser.parse_args(argv)
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    print(f"{DISTRIBUTION} configurations, {CLAIM}; python {platform.python_version()}, {os.cpu_count()} cores")
    print(f"{'n x d':>8} {'float64/s':>12} {'certified/s':>12} {'float64/certified':>18} "
          f"{'campaign/s':>11}  verdicts")
    for n, d in sizes:
        r = measure(n, d, args.count, args.seed, args.workers)
        print(f"{f'{n} x {d}':>8} {r['float64_per_s']:>12,.0f} {r['certified_per_s']:>12,.1f} {r['ratio']:>18,.0f} "
              f"{r['campaign_per_s']:>11,.1f}  {r['verdicts']} (campaign on {r['workers']} processes)")


if __name__ == "__main__":
    main()
