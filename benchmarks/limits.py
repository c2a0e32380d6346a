"""The work estimates against the CPU time they stand for: `python -m benchmarks.limits [--long] [CASE ...]`.

Each case is a configuration (drawn by certify.search.samplers, or a stack of certify.suite.wu_cases, or
examples/layer.json for a trajectory), run as `certify check CONFIG --claim ID --out CERT` (or `certify trajectory
--out DIR`) and then `certify verify CERT`, each as a process under limits high enough to admit it.  Printed per
case: the engine's estimate of the check (certify.core.limits.work, which prices the checker's confirmation
too), the checker's estimate of the certificate (certify_checker.over_limits, read back as the least work limit
that admits it), the CPU seconds of the check and of the verify, and, for an inequality, of the verify of a copy
whose stated D_out misses the checker's enclosure as by rounding ("forced": the checker recomputes at 2 and 4
times the precision, then rejects; for a trajectory, its last stated curve so moved: every step and curve
recomputed at twice its precision), each estimate over its seconds, so that one row's ratio against another's
shows where the estimate is off.  The estimate is of the most a certificate can make the checker do, those
recomputations included, in units of at most about 0.1 us of one core (README, Limits): here 10^7 to 7 * 10^7 a
second forced, 3 * 10^7 to 10^8 honest, more at high precision, wherever the sizes are large enough to matter
(the smallest rows are Python's start).  A layer's Python is priced the same at any precision and its arithmetic
weighted by cost(), so the rows "at N bits" (8 x 4 to 256 x 768, 424 to 65536 bits) read 0.9 to 13 times 10^7
a second forced (a small head's the least, a 128 x 384 layer at 500 bits the most: 10^8 dense, 1.3 * 10^8 with a value
matrix, whose norm on binary64 entries costs about the same at any precision), 3 to 5 times 10^7 at 65536
(cost()'s limbs squared, at 2 and 4 times the precision).
The stack rows (a bound on every layer, `certify check --bound`) time their forced verify in this process, without
Python's start; their "rational" rows state the tokens and A (or W_Q) as non-dyadic rationals, at the full precision in
every layer, the most a certificate's first layer can cost (1.1 to 1.3 * 10^7 a second forced, where binary64 tokens
read 1.5 to 2.6 * 10^7); the thin rows, a thin head alone of 64 x 256 to 256 x 768 (the longest with --long), state
W_Q and W_K so too in their rational form (1.3 to 3.0 * 10^7 a second forced, binary64 tokens 4 to 7.7 * 10^7); the
"texts" rows state every number as text (p/q of 4300-digit parts, 8 digits times 10^-3500, k/3), priced by
certify_checker.schema.reading (5 to 9 * 10^7 a second forced, 3 * 10^4 to 3.6 * 10^7 before it).
The "tight" rows bound one layer's D_out by C a (or C v) with C = D_out / a (1 + 10^-300) (tight_bound): decided
only once the norm's enclosure is that narrow, the ladder climbs from 53 to 1696 bits, the witness refined on each
rung from 106 bits (certify.core.refine, the engine's alone: certify.core.limits.refine_work), which the engine's
estimate at the last rung prices beside the evaluation of the whole ladder.
The machine's load average is printed first; with other jobs running, CPU time is the number to read.  A few
minutes on one core; --long adds the 256 x 768 dense head (half a minute), the larger rows of the grid (some 3
minutes), 3000 and 4000 layers (some 4 minutes) and trajectory steps of a 256 x 768 thin head and of 24 x 24 at
65536 bits (a minute).

Then one trajectory step at a time (STEPS): the checker's price of a step at each precision (its estimate of a
certificate with one step more, certify_checker.over_limits) against the CPU seconds of the checker's own step
(certify_checker.trajectory.run: the layer, tau, D and mu) from the drawn tokens, at that precision and at twice it
(a stated value missing by rounding has every step recomputed there), so the row's ratio is the work units of a
second the price stands for: at least 10^7 (0.1 us a unit) is not under-priced.
"""

from __future__ import annotations

import argparse
import decimal
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
from flint import arb, ctx

import certify_checker
from certify import claims, engine
from certify.engine import certificate
from certify.engine.decide import bound_claim, evaluate, refinement, text_reading, window_sizes
from certify_checker import inequality as checker_inequality, schema
from certify_checker import trajectory as checker_trajectory
from certify.core import config, expr, limits, refine
from certify.core.arith import BALL
from certify.search import samplers
from certify.suite import wu_cases

ROOT = Path(__file__).resolve().parents[1]
WIDE = ["--limit", "work=1000000000000000", "--limit", "memory=1000000000000", "--limit", "layers=100000"]
WIDE_LIMITS = limits.Limits(work=10**15, memory=10**12, layers=100000)  # WIDE's, for the engine's estimate
IN_PROCESS = limits.Limits(work=1 << 62, memory=1 << 62)  # the limits of a check run in this process


def _draw(n: int, d: int, d_k: int = 0, **parts) -> dict:
    """A sampled configuration with a L = a D^2 of 1 (decided at 53 bits)."""
    return samplers.sample("gaussian", n, d, 0, 0, L_range=(1.0, 1.0), d_k=d_k or None,
                           parts=samplers.LayerParts(**parts).validated(d) if parts else None).config


def _biased(data: dict) -> dict:
    """A drawn head stated by W_Q and W_K with biases b_Q, b_K of dyadic entries in [-1, 1]."""
    rng = np.random.default_rng(0)
    k = len(data["W_Q"][0])
    return {**data, "b_Q": (rng.integers(-8, 9, k) / 8).tolist(), "b_K": (rng.integers(-8, 9, k) / 8).tolist()}


def _stack(n: int, d: int, layers: int, d_k: int = 0, rational: bool = False, **parts) -> dict:
    """A stack of drawn layers (each drawn as _draw's, its tokens the first's); rational: the tokens and the heads'
    A, or W_Q and W_K, stated as non-dyadic rationals, at the full precision in every layer as a hostile certificate may
    state them (binary64 ones keep the first layer's products short)."""
    drawn = [_draw(n, d, d_k, **parts) if t == 0 else samplers.sample(
        "gaussian", n, d, 0, t, L_range=(1.0, 1.0), d_k=d_k or None,
        parts=samplers.LayerParts(**parts).validated(d) if parts else None).config for t in range(layers)]
    third = lambda x: str(Fraction(3 * round(x * 2**20) + 1, 3 * 2**20))  # never dyadic
    stack = [{key: value for key, value in layer.items() if key not in ("X", "name")} for layer in drawn]
    if rational:
        for layer in stack:
            for key in ("A",) if "A" in layer else ("W_Q", "W_K"):
                layer[key] = [[third(x) for x in row] for row in layer[key]]
    X = [[third(x) for x in row] for row in drawn[0]["X"]] if rational else drawn[0]["X"]
    return {"X": X, "layers": stack}


def _texts(n: int, d: int, layers: int, d_k: int, text: str) -> dict:
    """A stack of heads W_Q, W_K (d_k columns) whose tokens and weights are all stated as text of one form: "pq", a
    p/q of two 4300-digit parts (the most Python reads); "decimal", 8 digits times 10^-3500 (its certificate states
    them so: run restates the inputs as given); "third", k/3 (a short p/q)."""
    rng = np.random.default_rng(0)
    def number(i: int) -> str:
        if text == "pq":
            return f"{rng.integers(1, 10)}{''.join(map(str, rng.integers(0, 10, 4299)))}/{7 * 10**4299 + i}"
        return f"{rng.integers(10**7, 10**8)}e-3500" if text == "decimal" else f"{rng.integers(1, 30)}/3"
    count = iter(range(1 << 30))
    matrix = lambda rows, cols: [[number(next(count)) for _ in range(cols)] for _ in range(rows)]
    return {"X": matrix(n, d), "layers": [{"W_Q": matrix(d, d_k), "W_K": matrix(d, d_k), "d_k": d_k}
                                          for _ in range(layers)], "stated": text == "decimal"}


BOUND = "bound:2*D + 1"  # a bound checked at every layer of a stack (`certify check --bound`)
TIGHT_BITS = 2048


def tight_bound(data: dict, norm: str) -> str:
    """C * norm with C = D_out / norm (1 + 10^-300) on a one-layer configuration, from the engine's enclosures at
    TIGHT_BITS with the witnesses refined to them: a bound that holds by 10^-300 relative, which some 1000 bits
    decide."""
    with ctx.workprec(TIGHT_BITS), refine.refining(TIGHT_BITS):
        comparison = evaluate(BALL, config.load(data, IN_PROCESS), bound_claim(expr.parse(norm)), {})[1][0]
        C = comparison.lhs / comparison.rhs * (1 + arb("1e-300"))
    return f"{C.mid().str(400, radius=False)}*{norm}"


def _thin_rows(n: int, d: int, d_k: int) -> dict:
    """A thin head alone's rows (BOUND on one layer of n x d, W_Q and W_K of d x d_k), binary64 and rational, at 53,
    106 and 424 bits."""
    return {f"thin{' rational' if rational else ''} 1 x {n}x{d} d_k {d_k} at {bits} bits":
            (BOUND, functools.partial(_stack, n, d, 1, d_k, rational=rational), bits)
            for bits in (53, 106, 424) for rational in (False, True)}

# name: (claim, a function drawing the configuration[, the precision the check starts at]); a trajectory's claim is
# its number of layers; BOUND's claim a bound on every layer of a stack
CASES = {
    "global 8x4": ("collapse.global", lambda: _draw(8, 4)),
    "global 32x64": ("collapse.global", lambda: _draw(32, 64)),
    "global 64x128": ("collapse.global", lambda: _draw(64, 128)),
    "global 128x384": ("collapse.global", lambda: _draw(128, 384)),
    "global thin 8x257 d_k 256": ("collapse.global", lambda: _draw(8, 257, 256)),  # the reduction's k^3 / 6 Python
    "global 64x128 at 1024 bits": ("collapse.global", lambda: _draw(64, 128), 1024),
    "global 64x128 at 4096 bits": ("collapse.global", lambda: _draw(64, 128), 4096),
    "global 16x16 at 65536 bits": ("collapse.global", lambda: _draw(16, 16), 1 << 16),
    # the grid a layer's Python (the same at any precision) and its arithmetic (weighted by cost()) were set on
    "global 8x4 at 4000 bits": ("collapse.global", lambda: _draw(8, 4), 4000),
    "global 8x4 at 65536 bits": ("collapse.global", lambda: _draw(8, 4), 1 << 16),
    "global 16x16 at 500 bits": ("collapse.global", lambda: _draw(16, 16), 500),
    "global 16x16 at 4000 bits": ("collapse.global", lambda: _draw(16, 16), 4000),
    "global 64x64 at 500 bits": ("collapse.global", lambda: _draw(64, 64), 500),
    "global 64x64 at 4000 bits": ("collapse.global", lambda: _draw(64, 64), 4000),
    "global 128x384 at 500 bits": ("collapse.global", lambda: _draw(128, 384), 500),
    "global 128x384 d_k 32 at 500 bits": ("collapse.global", lambda: _draw(128, 384, 32), 500),
    "ffn.lipschitz 16x16 at 4000 bits": ("ffn.lipschitz", lambda: _draw(16, 16, ffn="gelu"), 4000),
    "value.bounded 16x16 at 4000 bits": ("value.bounded", lambda: _draw(16, 16, value="gaussian", value_norm=0.9),
                                         4000),
    "value.bounded 64x64 at 500 bits": ("value.bounded", lambda: _draw(64, 64, value="gaussian", value_norm=0.9), 500),
    "global 16x16": ("collapse.global", lambda: _draw(16, 16)),  # the value rows' heads alone
    "global 64x64": ("collapse.global", lambda: _draw(64, 64)),
    "value.bounded 16x16": ("value.bounded", lambda: _draw(16, 16, value="gaussian", value_norm=0.9)),
    "value.bounded 16x16 at 500 bits": ("value.bounded", lambda: _draw(16, 16, value="gaussian", value_norm=0.9), 500),
    "value.bounded 64x64": ("value.bounded", lambda: _draw(64, 64, value="gaussian", value_norm=0.9)),
    "value.bounded 128x384 at 500 bits": ("value.bounded", lambda: _draw(128, 384, value="gaussian", value_norm=0.9),
                                          500),
    "value.bounded 64x64 at 4000 bits": ("value.bounded", lambda: _draw(64, 64, value="gaussian", value_norm=0.9),
                                         4000),
    # the other parts of a layer, each alone, at 500 bits (their price against the head's alone)
    "residual 64x64 at 500 bits": ("residual.two_sided.global", lambda: _draw(64, 64, value="gaussian", residual=True),
                                   500),
    "causal dobrushin 64x64 at 500 bits": ("collapse.dobrushin", lambda: _draw(64, 64, mask="causal"), 500),
    "heads 64x64 d_k 64 at 500 bits": ("collapse.global", lambda: _draw(64, 64, 64), 500),
    "biased heads 64x64 d_k 64 at 500 bits": ("collapse.global", lambda: _biased(_draw(64, 64, 64)), 500),
    "ln.collapse n 32 at 500 bits": ("ln.collapse", lambda: wu_cases.layernorm_stack("causal", n=32, seed=14,
                                                                                     positive=True), 500),
    "ln.collapse n 12 at 500 bits": ("ln.collapse", lambda: wu_cases.layernorm_stack("causal", n=12, seed=14,
                                                                                     positive=True), 500),
    # LayerNorm and a claim's windows (their product of k attention matrices, k = r or 2 r for a mask of radius r)
    "ln.collapse n 64 at 53 bits": ("ln.collapse", lambda: wu_cases.layernorm_stack("causal", n=64, seed=14,
                                                                                    positive=True), 53),
    "ln.collapse sliding n 16 at 53 bits": ("ln.collapse", lambda: wu_cases.layernorm_stack("sliding", n=16, seed=14,
                                                                                            positive=True), 53),
    "mask.collapse 64x16 at 53 bits": ("mask.collapse", lambda: wu_cases.masked_stack("causal", n=64, d=16), 53),
    "mask.collapse sliding 32x4 at 53 bits": ("mask.collapse", lambda: wu_cases.masked_stack("sliding", n=32, d=4),
                                              53),
    # stacks: every layer's tokens at the full precision (a layer after the first has them, and a certificate may
    # state the first's so); bounds on every layer, forced through both recomputations, in process
    "stack 2 x 128x16 at 53 bits": (BOUND, lambda: _stack(128, 16, 2), 53),
    "stack 8 x 64x16 at 53 bits": (BOUND, lambda: _stack(64, 16, 8), 53),
    "stack 2 x 64x16 value at 500 bits": (BOUND, lambda: _stack(64, 16, 2, value="gaussian", value_norm=0.9), 500),
    "stack 8 x 64x16 d_k 4 at 500 bits": (BOUND, lambda: _stack(64, 16, 8, 4), 500),
    "stack 4 x 64x64 at 500 bits": (BOUND, lambda: _stack(64, 64, 4), 500),
    "stack 2 x 32x16 at 4000 bits": (BOUND, lambda: _stack(32, 16, 2), 4000),
    "stack 8 x 8x4 at 4000 bits": (BOUND, lambda: _stack(8, 4, 8), 4000),
    "rational 1 x 128x16 at 53 bits": (BOUND, lambda: _stack(128, 16, 1, rational=True), 53),
    "rational 1 x 64x64 at 500 bits": (BOUND, lambda: _stack(64, 64, 1, rational=True), 500),
    "rational 2 x 32x16 at 4000 bits": (BOUND, lambda: _stack(32, 16, 2, rational=True), 4000),
    # thin heads alone (W_Q, W_K of d x d_k): their scores (X W_Q)(X W_K)^T, 2 n d d_k + n^2 d_k; rational: the tokens,
    # W_Q and W_K stated as non-dyadic rationals (the most a certificate can make them cost)
    **_thin_rows(64, 256, 16),
    **_thin_rows(128, 384, 32),
    "rational 1 x 64x128 at 53 bits": (BOUND, lambda: _stack(64, 128, 1, rational=True), 53),
    # bounds needing a norm to 10^-300 (tight_bound: "tight:a" is C a), the ladder from 53 bits, its witness refined (a
    # bound names no FFN weight's norm: their refinement is timed alone, tests/test_limits_refine.py)
    "tight a 8x4": ("tight:a", lambda: _draw(8, 4), 53),
    "tight a 16x16": ("tight:a", lambda: _draw(16, 16), 53),
    "tight a 64x64": ("tight:a", lambda: _draw(64, 64), 53),
    "tight a 128x384 d_k 32": ("tight:a", lambda: _draw(128, 384, 32), 53),
    "tight v 64x64 value": ("tight:v", lambda: _draw(64, 64, value="gaussian", value_norm=0.9), 53),
    # numbers stated as text (certify_checker.schema.reading), each read up to three times a pass
    "texts p/q 4300 8 x 4x16 d_k 15 at 53 bits": (BOUND, lambda: _texts(4, 16, 8, 15, "pq"), 53),
    "texts p/q 4300 2 x 4x16 d_k 15 at 4000 bits": (BOUND, lambda: _texts(4, 16, 2, 15, "pq"), 4000),
    "texts 8e-3500 8 x 4x16 d_k 15 at 53 bits": (BOUND, lambda: _texts(4, 16, 8, 15, "decimal"), 53),
    "texts 8e-3500 4 x 4x16 d_k 15 at 4000 bits": (BOUND, lambda: _texts(4, 16, 4, 15, "decimal"), 4000),
    "texts 1/3 8 x 8x16 d_k 15 at 53 bits": (BOUND, lambda: _texts(8, 16, 8, 15, "third"), 53),
    "texts 1/3 8 x 8x16 d_k 15 at 4000 bits": (BOUND, lambda: _texts(8, 16, 8, 15, "third"), 4000),
    "global 128x384 d_k 32": ("collapse.global", lambda: _draw(128, 384, 32)),
    "global 256x768 d_k 64": ("collapse.global", lambda: _draw(256, 768, 64)),
    "causal dobrushin 64x128": ("collapse.dobrushin", lambda: _draw(64, 128, mask="causal")),
    "causal dobrushin 256x768 d_k 64": ("collapse.dobrushin", lambda: _draw(256, 768, 64, mask="causal")),
    "ffn.lipschitz 32x64": ("ffn.lipschitz", lambda: _draw(32, 64, ffn="gelu")),
    "ffn.lipschitz 64x256": ("ffn.lipschitz", lambda: _draw(64, 256, ffn="gelu")),
    "value.bounded 64x128": ("value.bounded", lambda: _draw(64, 128, value="gaussian", value_norm=0.9)),
    "value.bounded 128x384": ("value.bounded", lambda: _draw(128, 384, value="gaussian", value_norm=0.9)),
    "ln.collapse n 5": ("ln.collapse", lambda: wu_cases.layernorm_stack("causal", n=5, seed=14, positive=True)),
    "ln.collapse n 12": ("ln.collapse", lambda: wu_cases.layernorm_stack("causal", n=12, seed=14, positive=True)),
    "trajectory 32x16 20": (20, lambda: _draw(32, 16)),  # steps after the first on full-precision tokens
    "trajectory 64x16 10": (10, lambda: _draw(64, 16)),
    "trajectory 32x16 20 rational": (20, lambda: _stack(32, 16, 1, rational=True)),
    "trajectory 500": (500, lambda: json.loads((ROOT / "examples" / "layer.json").read_text())),
    "trajectory 1500": (1500, lambda: json.loads((ROOT / "examples" / "layer.json").read_text())),
}
LONG = {
    "global 256x768": ("collapse.global", lambda: _draw(256, 768)),
    "global 256x768 d_k 64 at 424 bits": ("collapse.global", lambda: _draw(256, 768, 64), 424),
    "global 128x384 d_k 32 at 4000 bits": ("collapse.global", lambda: _draw(128, 384, 32), 4000),
    **_thin_rows(256, 768, 64),
    "ffn.lipschitz 64x64 at 4000 bits": ("ffn.lipschitz", lambda: _draw(64, 64, ffn="gelu"), 4000),
    "value.bounded 16x16 at 65536 bits": ("value.bounded", lambda: _draw(16, 16, value="gaussian", value_norm=0.9),
                                          1 << 16),
    "trajectory 3000": (3000, lambda: json.loads((ROOT / "examples" / "layer.json").read_text())),
    "trajectory 4000": (4000, lambda: json.loads((ROOT / "examples" / "layer.json").read_text())),
}
# name: (a function drawing the configuration, the precisions of a step, repetitions timed)
STEPS = {
    "step layer.json 6x3": (lambda: json.loads((ROOT / "examples" / "layer.json").read_text()),
                            (53, 500, 1000, 2000, 4000, 8000), 20),
    "step 8x4": (lambda: _draw(8, 4), (53, 500, 1000, 2000, 4000), 20),
    "step 16x16": (lambda: _draw(16, 16), (53, 500, 2000), 10),
    "step 64x64": (lambda: _draw(64, 64), (53, 500), 2),
    "step 64x256 d_k 16": (lambda: _draw(64, 256, 16), (53, 500), 1),
    "step 32x64 gelu": (lambda: _draw(32, 64, ffn="gelu"), (53, 500, 2000), 2),
}
LONG_STEPS = {
    "step 256x768 d_k 64": (lambda: _draw(256, 768, 64), (53, 500), 1),
    "step 24x24": (lambda: _draw(24, 24), (1 << 16,), 1),
}


def _cpu(command: list[str]) -> tuple[float, int]:
    """The CPU seconds of a certify command run as a process, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "certify", *command], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode == 2:
        raise SystemExit(f"{' '.join(command)}: {done.stderr.strip()}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, done.returncode


def missing_by_rounding(cert: dict) -> dict | None:
    """An inequality certificate whose stated D_out is moved by three of its radii: as accurate as before, no longer
    containing the checker's enclosure, so the checker recomputes at 2 and 4 times the precision before it
    rejects (certify_checker.exact.finer): the most its estimate prices.  A trajectory's last stated curve (or D_t)
    so moved: every step and curve recomputed at twice its precision.  None for other kinds."""
    if cert.get("kind") == "trajectory":
        last = cert["points"][-1]
        name = max(last["log_curves"], default=None)
        ball = last["log_curves"][name] if name else last["D"]
        if not isinstance(ball, list):
            return None
        m, e, r, f = map(int, ball)  # mid m 2^e, radius r 2^f: the mid moved by 3 r 2^f, exactly
        low = min(e, f)
        moved = [str((m << (e - low)) + (3 * r << (f - low))), str(low), str(r), str(f)]
        point = {**last, "log_curves": {**last["log_curves"], name: moved}} if name else {**last, "D": moved}
        return {**cert, "points": [*cert["points"][:-1], point]}
    if cert.get("kind") != "inequality":
        return None
    mid, rad = cert["values"]["D_out"].strip("[]").split(" +/- ")
    with decimal.localcontext() as exact:
        exact.prec = len(mid) + len(rad) + 10
        moved = Decimal(mid) + 3 * Decimal(rad)
    return {**cert, "values": {**cert["values"], "D_out": f"[{moved} +/- {rad}]"}}


def checker_work(cert: dict) -> int:
    """The checker's estimate of a certificate: the least work limit under which it is not refused."""
    wide = {"tokens": 1 << 30, "dim": 1 << 30, "layers": 1 << 30, "memory": 1 << 62}
    low, high = 0, 1 << 62
    while high - low > 1:
        middle = (low + high) // 2
        refused = certify_checker.over_limits(cert, certify_checker.Limits(**wide, work=middle))
        low, high = (middle, high) if refused else (low, middle)
    return high


def run(name: str, folder: Path, claim, draw, bits: int = 0) -> str:
    """A case's row; bits: the check starts there (certify.engine.check's start_prec, which no command takes), in
    this process, its CPU time counted without Python's start."""
    data = draw()
    stated = data.pop("stated", False)  # the certificate restated with the inputs as the configuration gives them
    if isinstance(claim, str) and claim.startswith("tight:"):
        claim = "bound:" + tight_bound(data, claim[len("tight:"):])
    source = folder / "config.json"
    source.write_text(json.dumps(data))
    if bits:
        cert_path, started = folder / "cert.json", time.process_time()
        target = {"bound": claim[len("bound:"):]} if claim.startswith("bound:") else {"claim": claim}
        result = engine.check(data, **target, start_prec=bits, limits=IN_PROCESS)
        check_cpu, code = time.process_time() - started, 0 if result.certificate else 3
        if result.certificate:
            cert_path.write_text(json.dumps(result.certificate))
    elif isinstance(claim, int):  # a trajectory: priced by the checker's estimate of its certificate alone
        check_cpu, code = _cpu(["trajectory", str(source), "--layers", str(claim), "--out", str(folder / "t"), "-q",
                                *WIDE])
        cert_path = folder / "t" / "trajectory-certificate.json"
    else:
        cert_path = folder / "cert.json"
        check_cpu, code = _cpu(["check", str(source), "--claim", claim, "--out", str(cert_path), "-q", *WIDE])
    if not cert_path.exists():
        return f"{name:34s} no certificate (exit {code})"
    cert = json.loads(cert_path.read_text())
    if stated:
        cert["inputs"] = data
        cert["inputs_sha256"] = checker_inequality.digest(cert)
        cert_path.write_text(json.dumps(cert))
    verify_cpu, verified = _cpu(["verify", str(cert_path), *WIDE])
    forced_cpu = None
    if moved := missing_by_rounding(cert):
        (folder / "moved.json").write_text(json.dumps(moved))
        if isinstance(claim, str) and claim.startswith("bound:"):  # a stack's rows: in process, without Python's start
            wide = certify_checker.Limits(tokens=1 << 30, dim=1 << 30, layers=1 << 30, memory=1 << 62, work=1 << 62)
            started = time.process_time()
            rejected = 0 if certify_checker.verify(moved, wide).ok else 1
            forced_cpu = time.process_time() - started
        else:
            forced_cpu, rejected = _cpu(["verify", str(folder / "moved.json"), *WIDE])
        assert rejected == 1, "a stated value three radii off was not rejected"
    checker = checker_work(cert)
    if isinstance(claim, int):
        estimate = checker
    else:
        case = config.load(data, IN_PROCESS)
        bound = claim.startswith("bound:")  # no tau, no windows
        uses_tau = not bound and any("tau" in q.lhs + q.rhs for q in claims.get(claim).inequalities)
        refining = refinement(*case.sizes()[1:], case.thin, cert["precision"], bits or 53,
                              IN_PROCESS if bits else WIDE_LIMITS)  # the plan's: from the check's start, its limits
        windows = (0, 0) if bound else window_sizes(case, claims.get(claim))
        estimate = limits.work(*case.sizes(), cert["precision"], case.thin, uses_tau, case.value, case.normed, windows,
                               refining) + certificate.text_work(text_reading(case), cert["precision"])
    bits = cert["precision"]
    return (f"{name:34s} {bits:6d} {estimate:10.3g} {check_cpu:8.2f} {estimate / max(check_cpu, 1e-3):9.3g}"
            f" {checker:10.3g} {verify_cpu:8.2f} {checker / max(verify_cpu, 1e-3):9.3g}"
            + (f" {forced_cpu:8.2f} {checker / max(forced_cpu, 1e-3):9.3g}" if forced_cpu is not None else f" {'-':>8s} {'-':>9s}")
            + ("" if verified == 0 else f"  verify exit {verified}"))


def step_row(name: str, draw, bits: int, repeats: int) -> str:
    """A trajectory step's row: the checker's price of one step at `bits` (its estimate of the certificate with a
    step more) against the CPU seconds of one step there and one at twice the bits, from the drawn tokens."""
    drawn = config.to_json(config.load(draw(), limits.Limits(work=1 << 62, memory=1 << 62)))
    inputs = schema.exact(schema.expanded(drawn))  # as certify_checker.trajectory.verify reads them
    skeleton = {"format": certify_checker.FORMAT, "kind": "trajectory", "layers": 1, "inputs": inputs,
                "precision": bits, "curve_precision": 53, "norm_precision": 53, "curves": [], "witness": {}}
    price = (checker_work({**skeleton, "step_precisions": [bits, bits]})
             - checker_work({**skeleton, "step_precisions": [bits]}))
    started = time.process_time()
    for _ in range(repeats):  # a step from the drawn tokens, and D and mu before and after it
        for factor in (1, 2):
            checker_trajectory.run(inputs, 1, False, [factor * bits] * 2, [True, True])
    seconds = (time.process_time() - started) / repeats
    return f"{name:34s} {bits:6d} {price:10.3g} {seconds:8.4f} {price / max(seconds, 1e-6):9.3g}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.limits", description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true",
                        help="the 256 x 768 dense head, 3000 and 4000 layers and the long steps too")
    parser.add_argument("cases", nargs="*",
                        help=f"cases by name (default all): {', '.join([*CASES, *LONG, *STEPS, *LONG_STEPS])}")
    args = parser.parse_args(argv)
    table = {**CASES, **LONG} if args.long or args.cases else CASES
    steps = {**STEPS, **LONG_STEPS} if args.long or args.cases else STEPS
    chosen = args.cases or [*table, *steps]
    if unknown := [name for name in chosen if name not in table and name not in steps]:
        parser.error(f"unknown case {unknown[0]!r}")
    print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}; CPU seconds of one process each")
    if any(name in table for name in chosen):
        print(f"{'case':34s} {'bits':>6s} {'engine':>10s} {'check s':>8s} {'per s':>9s} {'checker':>10s} "
              f"{'verify s':>8s} {'per s':>9s} {'forced s':>8s} {'per s':>9s}")
    for name in (name for name in chosen if name in table):
        with tempfile.TemporaryDirectory() as folder:
            print(run(name, Path(folder), *table[name]), flush=True)
    if chosen_steps := [name for name in chosen if name in steps]:
        print(f"{'trajectory step':34s} {'bits':>6s} {'price':>10s} {'step s':>8s} {'per s':>9s}"
              "   (step s: at the bits and at twice them)")
    for name in chosen_steps:
        draw, precisions, repeats = steps[name]
        for bits in precisions:
            print(step_row(name, draw, bits, repeats), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
