"""The Dobrushin coefficient tau(P) = 1 - min_{i<k} sum_j min(P_ij, P_kj) of one attention matrix, by each way
certify computes it, next to plain float64 in the same run.

    python -m benchmarks.tau [--sizes 32,110,256,512] [--precision 64] [--all-pairs-up-to 256]

P is the softmax of Gaussian scores (N(0, 4)), as balls at --precision bits.  Columns (CPU time of this process,
one BLAS thread, best of ROUNDS):
    float64      every pair in plain numpy (np.minimum and sum over all n^3 / 2 entries): what an uncertified
                 tau costs
    engine       certify.core.quantities.dobrushin on the balls: the binary64 screen (certify.core.arith.overlaps),
                 then the balls of the kept pairs
    engine all   the same over every pair (the screen switched off): what it cost before the screen
    checker      certify_checker.forward.dobrushin: the checker's own screen (certify_checker.overlaps), then balls
    checker all  the checker over every pair
Each ratio is to float64 in the same run; "kept" is how many pairs the engine's screen kept.  Sizes above
--all-pairs-up-to skip the two "all" columns (n = 512 over every pair takes about half a minute each).
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from unittest import mock

import numpy as np
from flint import ctx
from threadpoolctl import threadpool_limits

import certify_checker.overlaps
from certify.core import quantities
from certify.core.arith import BALL, overlaps, pairs
from certify_checker import forward

ROUNDS = 3
_clock = time.process_time  # CPU time: on a shared machine the wall clock also counts other jobs


def best(function) -> float:
    """The least CPU time of ROUNDS calls."""
    times = []
    for _ in range(ROUNDS):
        start = _clock()
        function()
        times.append(_clock() - start)
    return min(times)


def float64_tau(P: np.ndarray) -> float:
    i, k = pairs.above_diagonal(len(P))
    return 1 - min(np.minimum(P[a], P[b]).sum(axis=1).min() for a, b in pairs.blocks_of(i, k, len(P), 1 << 20))


def row(n: int, precision: int, all_pairs: bool, rng) -> dict:
    scores = rng.normal(scale=2.0, size=(n, n))
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    P64 = weights / weights.sum(axis=1, keepdims=True)
    with ctx.workprec(precision):
        balls = BALL.exp(BALL.array(scores.tolist()))
        balls = balls / balls.sum(axis=1, keepdims=True)
        rows = balls.tolist()
        out = {"n": n, "float64": best(lambda: float64_tau(P64)), "kept": len(overlaps.screened_pairs(balls)[0]),
               "engine": best(lambda: quantities.dobrushin(BALL, balls)),
               "checker": best(lambda: forward.dobrushin(rows))}
        if all_pairs:
            with mock.patch.object(type(BALL), "overlap_pairs", staticmethod(pairs.all_pairs)):
                out["engine all"] = best(lambda: quantities.dobrushin(BALL, balls))
            every = lambda P: list(itertools.combinations(range(len(P)), 2))  # noqa: E731
            with mock.patch.object(certify_checker.overlaps, "candidate_pairs", every):
                out["checker all"] = best(lambda: forward.dobrushin(rows))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="32,110,256,512")
    parser.add_argument("--precision", type=int, default=64)
    parser.add_argument("--all-pairs-up-to", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} (CPU time of this process; ratios to float64 in the same run), "
          f"{args.precision} bits, best of {ROUNDS}")
    columns = ("engine", "engine all", "checker", "checker all")
    print(f"{'n':>5} {'pairs':>7} {'kept':>6} {'float64 s':>10}" + "".join(f"{c:>22}" for c in columns))
    rng = np.random.default_rng(args.seed)
    with threadpool_limits(1):
        for n in (int(size) for size in args.sizes.split(",")):
            found = row(n, args.precision, n <= args.all_pairs_up_to, rng)
            cells = [f"{found[c]:9.4f} s {found[c] / found['float64']:7.0f}x" if c in found else "-" for c in columns]
            print(f"{n:>5} {n * (n - 1) // 2:>7} {found['kept']:>6} {found['float64']:>10.4f}"
                  + "".join(f"{cell:>22}" for cell in cells))


if __name__ == "__main__":
    main()
