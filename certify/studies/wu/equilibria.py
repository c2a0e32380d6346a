"""Equilibria of every rank under post-LN attention (claim ln.equilibria; Wu et al., Theorem 3).

    certify counterexample ln-equilibria --n 4 --w 4 [--one-per-rank] [--out CERT]

The construction (a Jordan chain of W_V; the fixed-point equations are in
certify_checker.ln_equilibria).  For rank k and signs sig_0, ..., sig_{k-1} in {+1, -1}:
- the first N - k + 1 tokens all equal sig_0 e_{N-1}, the eigenvector of W_V (lam_i = i + 1);
- each later token solves (*) with lam = 1, i.e. x W_V - x = w x S = -s W_V for the previous
  partial sum s: x_c = -(s W_V)_{c+1} / w for c < N - 1, and x_{N-1} = sig sqrt(1 - sum_c x_c^2).
  Then s_i W_V = x_i, so the next token has x_c = -(x_i)_{c+1} / w: every chain token after the
  first has |x_{N-1}|^2 >= 1 - 1/w^2, which bounds the stable rank of the rank-N ones.  The
  square roots are real when w > N - 1 (the first chain token needs (N - k + 1)/w < 1); the claim
  asks w >= N.  Each chain token adds one dimension: tokens lie in V_1, ..., V_k and the
  equilibrium has rank exactly k.  That gives 2^k distinct equilibria of rank k.
Everything here is untrusted search: the construction is evaluated in arb only to place small
boxes; the checker's Krawczyk test decides.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from flint import arb, ctx

from certify_checker import ln_equilibria as checker
from certify_checker.exact import ball
from certify.engine.counterexamples import Outcome, certify_by_checker
from certify.errors import BadInput
from certify.studies.wu.spot_check import exact_value

HELP = "Wu et al. Theorem 3: equilibria of every rank 1..N under post-LN (causal mask, Jordan-chain W_V)"
MIN_N, MAX_N = 2, 8
BOX_MARGIN_BITS = 16  # box half-width = 2^-(precision - margin): room for the midpoints' rounding


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=int, default=4, help=f"number of tokens N = d, {MIN_N}..{MAX_N} (default 4)")
    parser.add_argument("--w", default=None, help="superdiagonal entry of W_V, exact, at least N (default N)")
    parser.add_argument("--one-per-rank", action="store_true",
                        help="certify one equilibrium per rank instead of all 2^k of rank k")


def parse(n: int, w_text: str | None) -> tuple[int, Fraction]:
    if not MIN_N <= n <= MAX_N:
        raise BadInput(f"--n must be between {MIN_N} and {MAX_N}, got {n}")
    try:
        w = Fraction(n) if w_text is None else Fraction(str(w_text).strip())
    except (ValueError, ZeroDivisionError):
        raise BadInput(f"--w must be an exact number such as 4, 9/2 or 4.5, got {w_text!r}") from None
    if w < n:
        raise BadInput(f"--w must be at least N = {n} (the construction of Theorem 3), got {w}")
    return n, w


def chain(N: int, w: arb, signs: tuple) -> list[tuple[int, list, arb]]:
    """The tokens of the rank-k equilibrium with these signs: (dim, coordinates in V_dim, lam)."""
    k = len(signs)
    copies = N - k + 1
    tokens = [(1, [arb(signs[0])], arb(i + 1)) for i in range(copies)]
    s = [arb(0)] * (N - 1) + [arb(copies * signs[0])]
    for j, sign in enumerate(signs[1:], start=2):
        sW = [s[c] + (w * s[c - 1] if c else 0) for c in range(N)]
        x = [-sW[c + 1] / w for c in range(N - 1)]
        x.append(sign * (1 - sum(t * t for t in x)).sqrt())
        tokens.append((j, x[N - j:], arb(1)))
        s = [a + b for a, b in zip(s, x)]
    return tokens


def _witness_entry(N: int, w_exact: Fraction, signs: tuple, precision: int) -> dict:
    radius = Fraction(1, 2 ** (precision - BOX_MARGIN_BITS))
    w = ball(w_exact)
    tokens, rows = [], []
    for dim, y, lam in chain(N, w, signs):
        mids = [exact_value(t) for t in y + [lam]]
        tokens.append({"dim": dim, "box": [[str(m - radius), str(m + radius)] for m in mids]})
        rows.append([0.0] * (N - dim) + [float(m) for m in mids[:-1]])
    entry = {"tokens": tokens, "gram_shift": str(_gram_shift(tokens, N))}
    if len(signs) == N:
        _, _, vt = np.linalg.svd(np.array(rows))
        entry["top_vector"] = [str(Fraction(float(t))) for t in vt[0]]
    return entry


def _gram_shift(tokens: list, N: int) -> Fraction:
    """The largest power of 2 below lambda_min of the Gram matrix that interval Cholesky proves."""
    k = tokens[-1]["dim"]
    mids = [[Fraction(0)] * (N - t["dim"]) + [(Fraction(lo) + Fraction(hi)) / 2 for lo, hi in t["box"][:-1]]
            for t in tokens]
    gram = [[sum((ball(r[a] * r[b]) for r in mids), arb(0)) for b in range(N - k, N)] for a in range(N - k, N)]
    shift = Fraction(1)
    while shift > Fraction(1, 2 ** 4000):
        shifted = [[g - (ball(shift) if a == b else 0) for b, g in enumerate(row)] for a, row in enumerate(gram)]
        if checker.positive_definite(shifted):
            return shift / 2  # room for the boxes around the midpoints
        shift /= 2
    return shift


def sign_patterns(k: int, one_per_rank: bool):
    if one_per_rank:
        return [(1,) * k]
    return list(itertools.product((1, -1), repeat=k))


def witness(N: int, w: Fraction, one_per_rank: bool, precision: int) -> dict:
    with ctx.workprec(precision + 32):
        return {"equilibria": [_witness_entry(N, w, signs, precision)
                               for k in range(1, N + 1) for signs in sign_patterns(k, one_per_rank)]}


def _summary(found, witness: dict) -> list[str]:
    lines = [f"verdict: {found.verdict}"] + [f"  {claim}" for claim in found.claims[1:]]
    at_most = [v for name, v in found.values.items() if name.endswith("stable_rank_at_most")]
    if at_most:
        worst = max(at_most, key=lambda v: v.upper())
        lines.append(f"  largest stable-rank bound among rank-N equilibria: {worst.str(10, radius=True)}"
                     f" < {found.values['stable_rank_bound'].str(10, radius=True)}")
    lines += [f"  not proven: {f}" for f in found.failures[:5]]
    return lines


def build(args) -> Outcome:
    N, w = parse(args.n, args.w)
    inputs = {"n": N, "w": str(w)}
    return certify_by_checker(checker.KIND, checker, inputs,
                              lambda p: witness(N, w, args.one_per_rank, p), _summary)
