"""The Dobrushin coefficient of one attention matrix by each way certify computes it, next to plain float64 in the same
run: the overlap form tau(P) = 1 - min_{i<k} sum_j min(P_ij, P_kj), and the centred form
tau(P) = (1/2) max_{i<k} sum_j |P_ij - P_kj| from P = Pi + Delta (`certify trajectory` near consensus).

    python -m benchmarks.tau [--sizes 32,110,256,512] [--centred-sizes 64,128,256] [--precision 64]
                             [--all-pairs-up-to 256]

Overlap form: P is the softmax of Gaussian scores (N(0, 4)), as balls at --precision bits.  Centred form: Pi the
softmax of Gaussian column terms (every row alike, or causal: row i over tokens 0..i), P that of the column terms plus
scores of N(0, 10^-6), Delta = P - Pi, as balls.  Columns (CPU time of this process, one BLAS thread, best of ROUNDS):
    float64      every pair in plain numpy (all n^3 / 2 entries, in blocks): what an uncertified tau costs
    engine       the engine on the balls (certify.core.quantities.dobrushin, certify.core.centred.dobrushin): the
                 binary64 screen (certify.core.arith.overlaps, certify.core.arith.differences), then the balls of the
                 kept pairs
    engine all   the same over every pair (the screen switched off): what it cost before the screen
    checker      the checker (certify_checker.forward.dobrushin, certify_checker.centred.centred_tau): its own
                 screen (certify_checker.overlaps), then balls
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
from certify.core import centred, quantities
from certify.core.arith import BALL, differences, overlaps, pairs
from certify_checker import centred as checker_centred, forward

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


def float64_centred_tau(Delta: np.ndarray, Pi: np.ndarray | None) -> float:
    i, k = pairs.above_diagonal(len(Delta))

    def largest(a, b):
        difference = Delta[a] - Delta[b] if Pi is None else (Delta[a] - Delta[b]) + (Pi[a] - Pi[b])
        return np.abs(difference).sum(axis=1).max()
    return max(largest(a, b) for a, b in pairs.blocks_of(i, k, len(Delta), 1 << 20)) / 2


def centred_row(n: int, precision: int, all_pairs: bool, masked: bool, rng) -> dict:
    mask = np.tril(np.ones((n, n), dtype=bool)) if masked else np.ones((n, n), dtype=bool)
    column, scores = rng.normal(size=n), rng.normal(scale=1e-3, size=(n, n))
    with ctx.workprec(precision):
        weights = BALL.exp(BALL.array(column.tolist()))[None, :] * mask
        Pi = weights / weights.sum(axis=1, keepdims=True)
        exponentials = BALL.exp(BALL.array(scores.tolist())) * Pi
        Delta = exponentials / exponentials.sum(axis=1, keepdims=True) - Pi
        att = centred.Attention(Pi=Pi, Delta=Delta, complete=not masked)
        Pi_rows, Delta_rows = Pi.tolist(), Delta.tolist()
        midpoints = np.array([[float(x.mid()) for x in row] for row in Delta_rows])
        Pi64 = None if not masked else np.array([[float(x.mid()) for x in row] for row in Pi_rows])
        out = {"n": n, "float64": best(lambda: float64_centred_tau(midpoints, Pi64)),
               "kept": len(differences.screened_pairs(Delta, Pi if masked else None)[0]),
               "engine": best(lambda: centred.dobrushin(BALL, att)),
               "checker": best(lambda: checker_centred.centred_tau(Pi_rows, Delta_rows, not masked))}
        if all_pairs:
            with mock.patch.object(type(BALL), "difference_pairs", staticmethod(pairs.all_pairs)):
                out["engine all"] = best(lambda: centred.dobrushin(BALL, att))
            every = lambda Delta, Pi: list(itertools.combinations(range(len(Delta)), 2))  # noqa: E731
            with mock.patch.object(certify_checker.overlaps, "difference_pairs", every):
                out["checker all"] = best(lambda: checker_centred.centred_tau(Pi_rows, Delta_rows, not masked))
    return out


def table(title: str, found_rows) -> None:
    columns = ("engine", "engine all", "checker", "checker all")
    print(title)
    print(f"{'n':>5} {'pairs':>7} {'kept':>6} {'float64 s':>10}" + "".join(f"{c:>22}" for c in columns))
    for found in found_rows:
        n = found["n"]
        cells = [f"{found[c]:9.4f} s {found[c] / found['float64']:7.0f}x" if c in found else "-" for c in columns]
        print(f"{n:>5} {n * (n - 1) // 2:>7} {found['kept']:>6} {found['float64']:>10.4f}"
              + "".join(f"{cell:>22}" for cell in cells), flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tau", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="32,110,256,512")
    parser.add_argument("--centred-sizes", default="64,128,256")
    parser.add_argument("--precision", type=int, default=64)
    parser.add_argument("--all-pairs-up-to", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f} (CPU time of this process; ratios to float64 in the same run), "
          f"{args.precision} bits, best of {ROUNDS}")
    rng = np.random.default_rng(args.seed)
    sizes = lambda text: [int(size) for size in text.split(",") if size]  # noqa: E731
    with threadpool_limits(1):
        table("overlap form", (row(n, args.precision, n <= args.all_pairs_up_to, rng) for n in sizes(args.sizes)))
        for masked in (False, True):
            table("centred form, " + ("causal mask" if masked else "no mask"),
                  (centred_row(n, args.precision, n <= args.all_pairs_up_to, masked, rng)
                   for n in sizes(args.centred_sizes)))


if __name__ == "__main__":
    main()
