"""Throughput of collapse.global: certified configurations per second next to plain float64, one run.

    python -m benchmarks.throughput [--long] [--seed S] [--sizes 8x4,16x16,64x64,128x384]

Rows: n x d, the query-key matrix A (d x d, N(0, 1/d) entries) or, for 128 x 384, W_Q and W_K
(d x d_k, d_k = 32, N(0, 1/d)); tokens x_ij ~ N(0, 1).  Columns (float64 and tier 3 on one batch of
BATCH_ENTRIES entries, 2,000 configurations of 8 x 4 to 20 of 128 x 384, alternated, best of
VECTOR_ROUNDS each; arb and anchor on the first Row.count of them):
    float64     the layer and both sides of the claim in plain numpy, batched over the
                configurations (scores, softmax, P X, diameters, ||A||_2 by SVD): what an
                uncertified sweep costs.  Not the project's screen.
    tier 3      the rigorous vectorised float64 tier (certify.search.tier3), on the same batch
    arb         certify.engine.check on each configuration: arb at adaptive precision (its norm
                witnesses by SVD), the certificate, and the checker's re-derivation of it
    anchor      the bare arb evaluation: the same enclosures with arb_mat products and Gram
                matrices at 53 bits, no engine, no certificate, no checker (what arb itself costs)
Rates are CPU time of this process (one BLAS thread): on a shared machine the wall clock also counts
other jobs.  The arb and anchor columns alternate, best of ROUNDS each, so that their ratio does not
take the machine's drift for a difference.  Ratios are against float64 in the same run.  Then, for
128 x 384, one `certify check --out` as a process (median wall time, peak memory, certificate size),
`certify check` and `certify verify` on an 8 x 4 configuration (wall time of the whole command;
bytecode cached, as installed), and a `certify sample` campaign on 1 and on 2 worker processes with
the cores it kept busy (CPU time over wall time), next to the speedup the
machine gives a pure-Python loop on 2 processes at that moment (its ceiling).  The machine's load
average is printed first: with other jobs running, absolute numbers are rough and the ratios
measured side by side are the ones to read.
Short by default (about a minute on 2 cores); --long takes the median of 5 repeats.  BLAS runs
on one thread throughout (as in a campaign's workers).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from statistics import median

import numpy as np
from flint import arb, arb_mat, ctx
from threadpoolctl import threadpool_limits

from certify import engine
from certify.core import thin_norm
from certify.search import campaign, tier3

CLAIM = "collapse.global"
# The rates are CPU time of this process on one BLAS thread: on a shared machine the wall clock
# also counts the other jobs' time slices, CPU time counts only this work (equal when quiet).
_clock = time.process_time
D_K = 32  # the W_Q, W_K rows: d_k of BERT-base and MiniLM heads
THIN_FROM = 128  # d at or above which a row uses W_Q, W_K (d x d_k)


@dataclass(frozen=True)
class Row:
    n: int
    d: int
    count: int  # configurations certified per repeat (the float64 batch is larger)

    @property
    def thin(self) -> bool:
        return self.d >= THIN_FROM

    @property
    def label(self) -> str:
        return f"{self.n} x {self.d}" + (f" (W_Q, W_K, d_k = {D_K})" if self.thin else "")


SHORT = [Row(8, 4, 100), Row(16, 16, 40), Row(64, 64, 6), Row(128, 384, 2)]
BATCH_ENTRIES = 1 << 19  # the vectorised columns' batch: 2,000 configurations of 8 x 4, 128 of 64 x 64
REPEATS = {"short": 1, "long": 5}
# configurations of the 16 x 16 campaign timed on 1 and 2 workers: about 3 s on one, so that starting
# the pool (about 0.08 s, the same on any number of workers) does not pass for a lack of scaling
CAMPAIGN_COUNT = 600
ROUNDS = 3  # alternations of the arb and anchor columns in one repeat (measure)
VECTOR_ROUNDS = 10  # alternations of the float64 and tier-3 columns in one repeat


def configurations(row: Row, count: int, seed: int) -> list[dict]:
    rng = np.random.default_rng([seed, row.n, row.d])
    out = []
    for _ in range(count):
        X = rng.standard_normal((row.n, row.d))
        if row.thin:
            W_Q, W_K = (rng.standard_normal((row.d, D_K)) / math.sqrt(row.d) for _ in range(2))
            out.append({"X": X.tolist(), "W_Q": W_Q.tolist(), "W_K": W_K.tolist(), "d_k": D_K})
        else:
            out.append({"X": X.tolist(), "A": (rng.standard_normal((row.d, row.d)) / math.sqrt(row.d)).tolist()})
    return out


# --- float64: plain numpy, batched --------------------------------------------------------------


def _float64_arrays(configs: list[dict]):
    X = np.array([c["X"] for c in configs])
    if "A" in configs[0]:
        return X, np.array([c["A"] for c in configs]), None, None
    return X, None, np.array([c["W_Q"] for c in configs]), np.array([c["W_K"] for c in configs])


def _float64_sides(X, A, W_Q, W_K):
    """D(PX) and (1 - exp(-a D^2)) D for a batch, in plain numpy."""
    if A is not None:
        S = X @ A @ np.swapaxes(X, 1, 2)
        a = np.linalg.norm(A, 2, axis=(1, 2))
    else:  # ||W_Q W_K^T||_2 = ||R_Q R_K^T||_2 from the reduced QR factors: d_k x d_k, as fast numpy does it
        S = (X @ W_Q) @ np.swapaxes(X @ W_K, 1, 2) / math.sqrt(D_K)
        R_Q, R_K = np.linalg.qr(W_Q, mode="r"), np.linalg.qr(W_K, mode="r")
        a = np.linalg.norm(R_Q @ np.swapaxes(R_K, 1, 2), 2, axis=(1, 2)) / math.sqrt(D_K)
    E = np.exp(S - S.max(axis=2, keepdims=True))
    PX = (E / E.sum(axis=2, keepdims=True)) @ X
    D, D_out = _float64_diameter(X), _float64_diameter(PX)
    return D_out, (1 - np.exp(-a * D * D)) * D


def _float64_diameter(X):
    G = X @ np.swapaxes(X, 1, 2)
    g = np.diagonal(G, axis1=1, axis2=2)
    return np.sqrt(np.maximum(g[:, :, None] + g[:, None, :] - 2 * G, 0).max(axis=(1, 2)))


def batch_size(row: Row) -> int:
    """Configurations in the batch the vectorised columns (float64 and tier 3) are timed on: about
    BATCH_ENTRIES entries of the n x max(n, d) arrays, between 20 and 2,000 configurations."""
    return min(2000, max(20, tier3.configurations_within(BATCH_ENTRIES, row.n, row.d)))


def batch_configurations(row: Row, seed: int) -> list[dict]:
    return configurations(row, batch_size(row), seed)


def _seconds(evaluate) -> float:
    """The CPU time of one call of evaluate()."""
    started = _clock()
    evaluate()
    return _clock() - started


def vectorised_rates(row: Row, seed: int) -> tuple[float, float | None]:
    """Configurations per second of plain numpy (float64) and of the rigorous vectorised float64 tier
    (certify.search.tier3) on the same batch, alternated, best of VECTOR_ROUNDS each (a few
    milliseconds per timing: a shared machine's hiccups are of that size); tier 3 None where the
    floating-point model probes switched it off.  What tier 3 cannot decide is left to arb (the decided
    fraction is reported by python -m benchmarks.tier3)."""
    configs = batch_configurations(row, seed)
    arrays, batch = _float64_arrays(configs), tier3.batch_of_configs(configs)
    usable = tier3.unusable_reason() is None
    float_best = tier3_best = math.inf
    for _ in range(VECTOR_ROUNDS):
        float_best = min(float_best, _seconds(lambda: _float64_sides(*arrays)))
        if usable:
            tier3_best = min(tier3_best, _seconds(lambda: tier3.evaluate(CLAIM, batch)))
    return len(configs) / float_best, (len(configs) / tier3_best if usable else None)


# --- arb: the certified path and the bare anchor ------------------------------------------------


def arb_rate(configs: list[dict]) -> tuple[float, dict]:
    verdicts: dict = {}
    started = _clock()
    for config in configs:
        verdict = engine.check(config, claim=CLAIM).verdict
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return len(configs) / (_clock() - started), verdicts


def _gram_diameter(M: arb_mat, n: int, d: int) -> arb:
    centre = arb_mat(n, d, [arb(M[0, j].mid()) for j in range(d)] * n)
    Y = M - centre
    G = Y * Y.transpose()
    best = G[0, 0] + G[1, 1] - 2 * G[0, 1]
    for i in range(n):
        for k in range(i + 1, n):
            best = best.max(G[i, i] + G[k, k] - 2 * G[i, k])
    return best.nonnegative_part().sqrt()


def _anchor_norm(M: arb_mat, w: np.ndarray, basis: np.ndarray) -> arb:
    """||M||_2 enclosed as the engine does (lower ||M w||, upper Gershgorin on (MW)^T (MW)), bare."""
    k = M.ncols()
    W, top = arb_mat(basis.tolist()), arb_mat([[float(v)] for v in w])
    image = M * top
    lower = (sum((image[i, 0] ** 2 for i in range(image.nrows())), arb(0))
             / sum((top[i, 0] ** 2 for i in range(k)), arb(0))).sqrt()
    E = (M * W).transpose() * (M * W)
    drift = W.transpose() * W - arb_mat(k, k, [int(i == j) for i in range(k) for j in range(k)])
    drift = sum((drift[i, j] ** 2 for i in range(k) for j in range(k)), arb(0)).sqrt()
    upper = max((E[i, i] + sum((abs(E[i, j]) for j in range(k) if j != i), arb(0)) for i in range(k)),
                key=lambda x: x.upper())
    return lower.union((upper / (1 - drift)).sqrt())


def anchor_once(config: dict) -> tuple[arb, arb]:
    """D(PX) and (1 - exp(-a D^2)) D in bare arb at 53 bits (binary64 inputs are exact)."""
    X = arb_mat(config["X"])
    n, d = X.nrows(), X.ncols()
    if "A" in config:
        A_f = np.array(config["A"])
        A = arb_mat(config["A"])
        S = X * A * X.transpose()
        _, _, vt = np.linalg.svd(A_f)
        a = _anchor_norm(A, vt[0], vt.T)
    else:
        W_Q, W_K = arb_mat(config["W_Q"]), arb_mat(config["W_K"])
        scale = 1 / arb(D_K).sqrt()
        S = (X * W_Q) * (X * W_K).transpose() * scale
        Q_f, K_f = np.array(config["W_Q"]), np.array(config["W_K"])
        C_f = np.linalg.cholesky(K_f.T @ K_f).T
        _, _, vt = np.linalg.svd(C_f @ (Q_f.T @ Q_f) @ C_f.T)
        C = thin_norm.cholesky_upper(W_K.transpose() * W_K)
        a = _anchor_norm(C * (W_Q.transpose() * W_Q) * C.transpose(), vt[0], vt.T).sqrt() * scale
    P = arb_mat(n, n)
    for i in range(n):
        shift = arb(S[i, 0].mid())
        weights = [(S[i, j] - shift).exp() for j in range(n)]
        total = sum(weights, arb(0))
        for j in range(n):
            P[i, j] = weights[j] / total
    D = _gram_diameter(X, n, d)
    return _gram_diameter(P * X, n, d), (1 - (-a * D * D).exp()) * D


def anchor_rate(configs: list[dict]) -> float:
    started = _clock()
    with ctx.workprec(53):
        for config in configs:
            anchor_once(config)
    return len(configs) / (_clock() - started)


# --- whole commands as processes ----------------------------------------------------------------


def _command_env(folder: Path) -> dict:
    """The environment of the timed commands: bytecode cached (in `folder`) as an installed package
    has it, whatever PYTHONDONTWRITEBYTECODE says here; otherwise every start compiles certify's
    sources again.  Untimed runs of the timed commands (check --out, verify) fill the cache with
    every module they load."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(folder / "bytecode")
    config, cert = folder / "warm.json", folder / "warm-cert.json"
    config.write_text(json.dumps(configurations(Row(8, 4, 1), 1, 0)[0]))
    for args in (["check", str(config), "--out", str(cert)], ["verify", str(cert)]):
        subprocess.run([sys.executable, "-m", "certify", *args], env=env, check=False, capture_output=True)
    return env


def _command(args: list[str], env: dict) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of `python -m certify ARGS`, the whole command."""
    before, started = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "certify", *args], env=env, check=False, capture_output=True)
    return time.perf_counter() - started, _children_cpu() - before


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def large_check(seed: int, folder: Path, env: dict, repeats: int) -> dict:
    """`certify check --out` and `certify verify` of one 128 x 384 configuration (medians of `repeats`
    runs), the peak memory of the check and the size of its certificate."""
    config = configurations(Row(128, 384, 1), 1, seed)[0]
    path, cert = folder / "large.json", folder / "large-cert.json"
    path.write_text(json.dumps(config))
    checks = [_command(["check", str(path), "--out", str(cert)], env) for _ in range(repeats)]
    peak = _peak_of(["check", str(path), "--out", str(cert)], env)
    verifies = [_command(["verify", str(cert)], env) for _ in range(repeats)]
    return {"check_s": [median(c[k] for c in checks) for k in (0, 1)],
            "verify_s": [median(v[k] for v in verifies) for k in (0, 1)],
            "peak_MB": peak / 1e6, "certificate_MB": cert.stat().st_size / 1e6}


def _peak_of(args: list[str], env: dict) -> int:
    """Peak resident memory of one command, measured in a fresh process of its own."""
    probe = ("import resource, subprocess, sys; subprocess.run([sys.executable, '-m', 'certify', *sys.argv[1:]], "
             "capture_output=True); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, check=False)
    return int(out.stdout.strip() or 0) * 1024


def small_commands(seed: int, folder: Path, repeats: int, env: dict) -> dict:
    config = configurations(Row(8, 4, 1), 1, seed)[0]
    path, cert = folder / "small.json", folder / "small-cert.json"
    path.write_text(json.dumps(config))
    checks = [_command(["check", str(path), "--out", str(cert)], env) for _ in range(repeats)]
    verifies = [_command(["verify", str(cert)], env) for _ in range(repeats)]
    return {"check_s": [median(c[k] for c in checks) for k in (0, 1)],
            "verify_s": [median(v[k] for v in verifies) for k in (0, 1)]}


def _cpu_with_children() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime + _children_cpu()


def campaign_speedup(seed: int, count: int, repeats: int) -> dict:
    """Configurations per second of a campaign on 1 and on 2 worker processes (wall time: the point
    is to use both cores), alternated, best of `repeats` each; with the CPU time of the run (this
    process and its workers), so that cores / s = CPU / wall tells how many cores the run had: on a
    shared machine another job's core is not ours, and 2 workers then time-share one core."""
    runs: dict = {1: [], 2: []}
    for _ in range(repeats):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as folder:
                cpu, started = _cpu_with_children(), time.perf_counter()
                campaign.run(campaign.Campaign("gaussian", 16, 16, count, seed, claim=CLAIM), folder, workers=workers)
                wall = time.perf_counter() - started
                runs[workers].append((count / wall, (_cpu_with_children() - cpu) / wall))
    (one, one_cores), (two, two_cores) = max(runs[1]), max(runs[2])
    return {"one_worker_per_s": one, "two_workers_per_s": two, "speedup": two / one,
            "one_worker_cores": one_cores, "two_workers_cores": two_cores}


SPIN = 3_000_000  # iterations of the reference loop: about 0.3 s


def _spin(_=None) -> int:
    """A fixed pure-Python loop on a few integers (no memory traffic, no BLAS)."""
    total = 0
    for i in range(SPIN):
        total += i * i % 7
    return total


def machine_speedup(repeats: int) -> float:
    """The wall-time speedup of the reference loop run twice on 2 processes against once on one, best
    of `repeats` each: what the machine gives a second process at the moment (a virtual machine's two
    cores may share one physical core or its caches), the ceiling for the campaign's 2-worker ratio."""
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, range(2)))  # both workers started
        one = two = math.inf
        for _ in range(repeats):
            started = time.perf_counter()
            pool.submit(_spin).result()
            one = min(one, time.perf_counter() - started)
            started = time.perf_counter()
            list(pool.map(_spin, range(2)))
            two = min(two, time.perf_counter() - started)
    return 2 * one / two


# --- the run --------------------------------------------------------------------------------------


def measure(row: Row, seed: int, repeats: int) -> dict:
    configs = configurations(row, row.count, seed)
    engine.check(configs[0], claim=CLAIM)  # untimed: the engine's and the checker's modules load on first use
    with ctx.workprec(53):
        anchor_once(configs[0])
    float_rates, tier3_rates, arb_rates, anchor_rates, verdicts = [], [], [], [], {}
    for _ in range(repeats):
        float_rate, tier3_rate = vectorised_rates(row, seed)
        float_rates.append(float_rate)
        tier3_rates.append(tier3_rate)
        # arb and the anchor alternate, best of ROUNDS each: a shared machine's speed drifts by a
        # factor of 2 within a minute, and a ratio of two rates taken apart would show the drift
        arb_best = anchor_best = 0.0
        for _ in range(ROUNDS):
            rate, verdicts = arb_rate(configs)
            arb_best, anchor_best = max(arb_best, rate), max(anchor_best, anchor_rate(configs))
        arb_rates.append(arb_best)
        anchor_rates.append(anchor_best)
    f, a, b = median(float_rates), median(arb_rates), median(anchor_rates)
    tier3 = None if None in tier3_rates else median(tier3_rates)
    return {"row": row.label, "n": row.n, "d": row.d, "count": row.count, "float64_per_s": f, "tier3_per_s": tier3,
            "arb_per_s": a, "anchor_per_s": b, "float64_over_arb": f / a, "float64_over_anchor": f / b,
            "arb_over_anchor": b / a, "verdicts": verdicts}


def _times(wall_cpu) -> str:
    return f"{wall_cpu[0]:.2f} s wall ({wall_cpu[1]:.2f} s CPU)"


def _rate(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.0f}" if x >= 100 else f"{x:,.1f}" if x >= 1 else f"{x:.2f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.throughput", description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="the median of 5 repeats (about two minutes)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default=None, help="n x d rows, comma-separated (default: the four of the table)")
    parser.add_argument("--json", metavar="FILE", help="also write the measurements as JSON")
    args = parser.parse_args(argv)
    # One BLAS thread for every column (as in a campaign's workers): on a shared 2-core machine a
    # threaded BLAS stalls the float64 column by 10x and more, which would flatter the ratios.
    threadpool_limits(1)
    rows = SHORT if args.sizes is None else [
        next((r for r in SHORT if (r.n, r.d) == tuple(int(v) for v in s.split("x"))),
             Row(*(int(v) for v in s.split("x")), 4)) for s in args.sizes.split(",")]
    repeats = REPEATS["long" if args.long else "short"]
    load = os.getloadavg()
    print(f"{CLAIM} on gaussian configurations; python {platform.python_version()}, {os.cpu_count()} cores, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1, 5, 15 min); "
          f"{'median of ' + str(repeats) if repeats > 1 else 'one'} repeat(s)")
    print("| n x d | float64 / s | tier 3 / s | arb certified / s | bare arb anchor / s "
          "| float64 / arb | arb vs anchor |")
    print("|---|---|---|---|---|---|---|")
    results = []
    for row in rows:
        r = measure(row, args.seed, repeats)
        results.append(r)
        print(f"| {r['row']} | {_rate(r['float64_per_s'])} | {_rate(r['tier3_per_s'])} | {_rate(r['arb_per_s'])} "
              f"| {_rate(r['anchor_per_s'])} | {r['float64_over_arb']:,.0f} | {r['arb_over_anchor']:.1f}x slower |",
              flush=True)
    with tempfile.TemporaryDirectory() as folder:
        env = _command_env(Path(folder))
        large = large_check(args.seed, Path(folder), env, 5 if args.long else 3)
        small = small_commands(args.seed, Path(folder), 5 if args.long else 3, env)
    print(f"128 x 384 (median): `certify check --out` {_times(large['check_s'])}, "
          f"peak memory {large['peak_MB']:.0f} MB, certificate {large['certificate_MB']:.2f} MB; `certify verify` {_times(large['verify_s'])}")
    print(f"8 x 4, the whole command (median): `certify check` {_times(small['check_s'])}, "
          f"`certify verify` {_times(small['verify_s'])}")
    before = os.getloadavg()[0]
    speedup = campaign_speedup(args.seed, CAMPAIGN_COUNT, 5 if args.long else 3)
    speedup["machine"] = machine_speedup(5 if args.long else 3)
    print(f"certify sample, 16 x 16, {CAMPAIGN_COUNT} configurations (best of runs alternated): "
          f"{_rate(speedup['one_worker_per_s'])} / s on 1 worker ({speedup['one_worker_cores']:.2f} cores busy), "
          f"{_rate(speedup['two_workers_per_s'])} / s on 2 ({speedup['two_workers_cores']:.2f} cores busy): "
          f"{speedup['speedup']:.2f}x; a pure-Python loop on 2 processes against 1: {speedup['machine']:.2f}x "
          f"(load average {before:.2f} before, {os.getloadavg()[0]:.2f} after)")
    if args.json:
        Path(args.json).write_text(json.dumps({"load": load, "rows": results, "large": large, "small": small,
                                               "campaign": speedup}, indent=1))


if __name__ == "__main__":
    main()
