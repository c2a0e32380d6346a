"""Throughput of the rigorous float64 tier next to plain float64 numpy, measured in the same run.

    python -m benchmarks.tier3 [--long] [--seed S]

For each size, Gaussian configurations (X and the weights standard normal, the scale set so
that a D^2 is uniform in [1, 30]) are decided for collapse.global two ways, batched:
    float64   the same formulas in plain numpy float64 (np.exp softmax, Gram diameters, the
              SVD norm), no rigour: what an uncertified sweep costs
    tier 3    certify.search.tier3.decide: proven enclosures, "holds" or "cannot decide"
and the fraction tier 3 decides.  Best of a few repeats of the CPU time of this process on one
BLAS thread (as benchmarks/throughput.py: on a loaded machine wall time measures the other jobs);
drawing the configurations is not timed.
Sizes 8x4, 16x16, 64x64 use A (d x d); 128x384 uses W_Q, W_K with d_k = 32.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from certify.search import tier3

CLAIM = "collapse.global"
SIZES = [(8, 4, None, 20000), (16, 16, None, 5000), (64, 64, None, 400), (128, 384, 32, 16)]
REPEATS = 3


def _diameters(X):
    G = X @ np.swapaxes(X, -1, -2)
    diag = np.diagonal(G, axis1=-2, axis2=-1)
    return np.sqrt(np.maximum(np.max(diag[..., :, None] + diag[..., None, :] - 2 * G, axis=(-2, -1)), 0.0))


def plain_float64(batch: tier3.Batch) -> np.ndarray:
    """collapse.global's comparison by the same formulas in plain float64: True where it holds."""
    X = batch.X
    if batch.A is not None:
        S = (X @ batch.A) @ np.swapaxes(X, -1, -2)
        a = np.linalg.svd(batch.A, compute_uv=False)[..., 0]
    else:
        scale = np.asarray(batch.beta) / np.sqrt(batch.d_k)
        S = (X @ batch.W_Q) @ np.swapaxes(X @ batch.W_K, -1, -2) * scale[:, None, None]
        _, R_Q = np.linalg.qr(batch.W_Q)
        _, R_K = np.linalg.qr(batch.W_K)
        a = np.linalg.svd(R_Q @ np.swapaxes(R_K, -1, -2), compute_uv=False)[..., 0] * scale
    W = np.exp(S - S.max(axis=-1, keepdims=True))
    P = W / W.sum(axis=-1, keepdims=True)
    D, D_out = _diameters(X), _diameters(P @ X)
    return D_out <= (1 - np.exp(-a * D * D)) * D


def gaussian_batch(n: int, d: int, d_k: int | None, count: int, seed: int) -> tier3.Batch:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((count, n, d))
    target = rng.uniform(1.0, 30.0, count)  # a D^2
    D2 = _diameters(X) ** 2
    if d_k is None:
        A = rng.standard_normal((count, d, d))
        a = np.linalg.svd(A, compute_uv=False)[..., 0]
        return tier3.Batch(X=X, A=A * (target / (a * D2))[:, None, None])
    W_Q, W_K = rng.standard_normal((count, d, d_k)), rng.standard_normal((count, d, d_k))
    a = np.linalg.svd(W_Q @ np.swapaxes(W_K, -1, -2), compute_uv=False)[..., 0] / np.sqrt(d_k)
    return tier3.Batch(X=X, W_Q=W_Q, W_K=W_K, beta=target / (a * D2), d_k=d_k)


def _best_rate(run, count: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(REPEATS):
        started = time.process_time()
        result = run()
        best = min(best, time.process_time() - started)
    return count / best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.tier3", description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="ten times as many configurations")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    scale = 10 if args.long else 1
    threadpool_limits(1)
    tier3.decide(CLAIM, gaussian_batch(4, 2, None, 4, args.seed))  # the start-up probes, not timed
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; claim {CLAIM}; best of {REPEATS}")
    print(f"{'n x d':>16} {'configs':>8} {'float64 / s':>12} {'tier 3 / s':>12} {'ratio':>6} {'decided':>8}")
    for n, d, d_k, count in SIZES:
        count *= scale
        batch = gaussian_batch(n, d, d_k, count, args.seed)
        plain, _ = _best_rate(lambda: plain_float64(batch), count)
        rigorous, verdicts = _best_rate(lambda: tier3.decide(CLAIM, batch), count)
        label = f"{n}x{d}" + (f" (d_k={d_k})" if d_k else "")
        decided = np.mean(verdicts == tier3.HOLDS)
        print(f"{label:>16} {count:>8} {plain:>12.1f} {rigorous:>12.1f} {rigorous / plain:>6.2f} {decided:>8.2%}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
