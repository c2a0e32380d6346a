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
The search is untrusted: the construction is evaluated in arb only to place small boxes.  The
engine's evaluation below decides with a Krawczyk test per token, interval Cholesky for the rank and
a Rayleigh quotient for the stable rank; certify_checker.ln_equilibria re-derives it all with its
own code.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from flint import arb

from flint import arb_mat

from certify.core.arith import BALL
from certify.core import numbers
from certify.core.arith.ball import hull
from certify.core.precision import working
from certify.core.thin_norm import cholesky_upper
from certify.engine.counterexamples import Found, Outcome, certify_named, checker_limits, stage_of
from certify.errors import BadInput
from certify.studies.wu import w_option
from certify.studies.wu.spot_check import exact_value

KIND = "ln-equilibria"

HELP = "Wu et al. Theorem 3: equilibria of every rank 1..N under post-LN (causal mask, Jordan-chain W_V)"
MIN_N, MAX_N = 2, 8
BOX_MARGIN_BITS = 16  # box half-width = 2^-(precision - margin): room for the midpoints' rounding


def add_arguments(parser) -> None:
    """Add this counterexample's options to the `certify counterexample ln-equilibria` parser. (--n, --w,
    --one-per-rank)."""
    parser.add_argument("--n", type=numbers.option_integer, default=4, help=f"number of tokens N = d, {MIN_N}..{MAX_N} (default 4)")
    parser.add_argument("--w", default=None, help="superdiagonal entry of W_V, exact, at least N and at most 2^64 (default N)")
    parser.add_argument("--one-per-rank", action="store_true",
                        help="certify one equilibrium per rank instead of all 2^k of rank k")


def parse(n: int, w_text: str | None) -> tuple[int, Fraction]:
    """Check and return (N, w): N tokens with MIN_N <= N <= MAX_N, w exact (default N) with w >= N as Theorem
    3 asks; BadInput otherwise."""
    if not MIN_N <= n <= MAX_N:
        raise BadInput(f"--n must be between {MIN_N} and {MAX_N}, got {n}")
    w = Fraction(n) if w_text is None else w_option.read(w_text, "tokens")
    if w < n:
        raise BadInput(f"--w must be at least N = {n} (the construction of Theorem 3), got {w_text}")
    return n, w


def ball(x) -> arb:
    """The exact rational x as a ball of the current precision (BALL)."""
    return BALL.number(Fraction(x))


def fixed_point_residual(w: arb, s: list, y: list, lam: arb) -> list:
    """H(y, lam) of (*) on V_m: ((s + y) W_V - lam y), then (||y||^2 - 1)/2."""
    v = [a + b for a, b in zip(s, y)]
    h = [v[c] + (w * v[c - 1] if c else 0) - lam * y[c] for c in range(len(y))]
    return h + [(sum(t * t for t in y) - 1) / 2]


def fixed_point_jacobian(w: arb, y: list, lam: arb) -> arb_mat:
    """dH/d(y, lam): the m equations, then the norm equation."""
    m = len(y)
    J = arb_mat(m + 1, m + 1)
    for c in range(m):
        J[c, c] = 1 - lam
        if c:
            J[c, c - 1] = w
        J[c, m] = -y[c]
        J[m, c] = y[c]
    return J


def krawczyk(w: arb, s: list, box: list) -> list | None:
    """The Krawczyk image K(U) = c - C H(c) + (I - C J(U))(U - c) of the box when it lies strictly
    inside the box (then H has exactly one zero in it), else None."""
    n = len(box)
    U = [hull(lo, hi) for lo, hi in box]
    c = [ball((lo + hi) / 2) for lo, hi in box]
    J_mid = arb_mat([[x.mid() for x in row] for row in fixed_point_jacobian(w, c[:-1], c[-1]).tolist()])
    try:
        inverse = J_mid.inv()
    except ZeroDivisionError:
        return None
    C = arb_mat([[inverse[a, b].mid() for b in range(n)] for a in range(n)])  # any point matrix will do
    H = arb_mat([[h] for h in fixed_point_residual(w, s, c[:-1], c[-1])])
    spread = arb_mat([[u - x] for u, x in zip(U, c)])
    image = arb_mat([[x] for x in c]) - C * H + (arb_mat(n, n, [int(a == b) for a in range(n) for b in range(n)])
                                                 - C * fixed_point_jacobian(w, U[:-1], U[-1])) * spread
    K = [image[a, 0] for a in range(n)]
    inside = all(bool(ball(lo) < k) and bool(k < ball(hi)) for k, (lo, hi) in zip(K, box))
    return K if inside else None


def positive_definite(G: list) -> bool:
    """Interval Cholesky: every symmetric matrix in the ball G is positive definite."""
    return cholesky_upper(arb_mat(G)) is not None


def _equilibrium(found: Found, w: arb, N: int, j: int, entry: dict) -> list | None:
    """The enclosed rows of listed equilibrium j, token by token, or None when one is not certified."""
    rows, s = [], [arb(0)] * N
    for i, token in enumerate(entry["tokens"]):
        m = token["dim"]
        box = [(Fraction(lo), Fraction(hi)) for lo, hi in token["box"]]
        K = krawczyk(w, s[N - m:], box)
        if not found.require(K is not None, f"equilibrium {j}, token {i}: the Krawczyk test fails"):
            return None
        if not found.require(K[-1] > 0, f"equilibrium {j}, token {i}: lam > 0 is not proven"):
            return None
        row = [arb(0)] * (N - m) + K[:-1]
        rows.append(row)
        s = [a + b for a, b in zip(s, row)]
    return rows


def _full_rank(found: Found, rows: list, N: int, j: int, k: int, shift: Fraction) -> bool:
    """lambda_min of the Gram matrix of the last k columns exceeds the shift: rank k."""
    mu = ball(shift)
    cols = range(N - k, N)
    G = [[sum((r[a] * r[b] for r in rows), arb(0)) - (mu if a == b else 0) for b in cols] for a in cols]
    return found.require(positive_definite(G), f"equilibrium {j}: lambda_min(Gram) > {shift} is not proven")


def _apart(a: list, b: list) -> bool:
    return any(not x.overlaps(y) for ra, rb in zip(a, b) for x, y in zip(ra, rb))


def evaluate(inputs: dict, witness: dict) -> Found:
    """Every listed equilibrium is one (Krawczyk), of its rank, distinct from the others of that rank,
    and the rank-N ones have a small stable rank."""
    found = Found()
    N, w_exact = inputs["n"], Fraction(inputs["w"])
    w = ball(w_exact)
    bound_exact = Fraction(N) / (N - Fraction(N - 1) / (w_exact * w_exact))
    by_rank: dict[int, list] = {}
    for j, entry in enumerate(witness["equilibria"]):
        rows = _equilibrium(found, w, N, j, entry)
        k = entry["tokens"][-1]["dim"]
        by_rank.setdefault(k, []).append(rows)
        if rows is None or not _full_rank(found, rows, N, j, k, Fraction(entry["gram_shift"])):
            continue
        if k == N >= 2:  # for N = 1 the stable rank is 1, the bound itself
            v = [ball(t) for t in entry["top_vector"]]
            Xv = [sum((x * t for x, t in zip(r, v)), arb(0)) for r in rows]
            rayleigh = sum((t * t for t in Xv), arb(0)) / sum((t * t for t in v), arb(0))
            found.require(rayleigh > N - (N - 1) / (w * w),
                          f"equilibrium {j}: stable rank < {bound_exact} is not proven")
            found.values[f"eq{j}.stable_rank_at_most"] = N / rayleigh
    for k, listed in sorted(by_rank.items()):
        certified = [rows for rows in listed if rows is not None]
        pairs_apart = all(_apart(a, b) for i, a in enumerate(certified) for b in certified[i + 1:])
        found.require(pairs_apart, f"the equilibria of rank {k} are not proven distinct")
    found.values["stable_rank_bound"] = ball(bound_exact)
    found.claims = claims(N, w_exact, {k: len(v) for k, v in sorted(by_rank.items())}, bound_exact)
    return found


def claims(N: int, w: Fraction, counts: dict, bound: Fraction) -> list[str]:
    """The statements a certified certificate proves, word for word (the checker states them too)."""
    lines = [f"setting: N = d = {N}, causal mask, W_Q = W_K = 0, W_V = I + {w} S (S: superdiagonal ones), post-LN x / ||x||_2"]
    lines += [f"{count} distinct {'equilibrium' if count == 1 else 'equilibria'} of rank {k}, "
              "each enclosed token by token by a Krawczyk test" for k, count in counts.items()]
    if N in counts and N >= 2:
        lines.append(f"each listed equilibrium of rank {N} has stable rank < N / (N - (N-1)/w^2) = {bound}")
    return lines


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
        if positive_definite(shifted):
            return shift / 2  # room for the boxes around the midpoints
        shift /= 2
    return shift


def sign_patterns(k: int, one_per_rank: bool):
    """The sign tuples (sig_0, ..., sig_{k-1}) of the rank-k equilibria to certify: all 2^k of them, or only
    (+1, ..., +1) with `one_per_rank`."""
    if one_per_rank:
        return [(1,) * k]
    return list(itertools.product((1, -1), repeat=k))


def witness(N: int, w: Fraction, one_per_rank: bool, precision: int, done=lambda count: None) -> dict:
    """The untrusted witness: for every rank k = 1..N and sign pattern, the Jordan-chain equilibrium evaluated
    at `precision` + 32 bits and boxed token by token (half-width 2^-(precision - BOX_MARGIN_BITS)), with
    the Gram shift its rank test uses and, for rank N, a float64 top singular vector for the stable-rank
    test; done(count) is told the count boxed so far after each."""
    patterns = [signs for k in range(1, N + 1) for signs in sign_patterns(k, one_per_rank)]
    entries = []
    with working(precision + 32):
        for signs in patterns:
            entries.append(_witness_entry(N, w, signs, precision))
            done(len(entries))
    return {"equilibria": entries}


def _summary(found, witness: dict) -> list[str]:
    lines = [f"  {claim}" for claim in found.claims[1:]]
    at_most = [v for name, v in found.values.items() if name.endswith("stable_rank_at_most")]
    if at_most:
        worst = max(at_most, key=lambda v: v.upper())
        lines.append(f"  largest stable-rank bound among rank-N equilibria: {worst.str(10, radius=True)}"
                     f" < {found.values['stable_rank_bound'].str(10, radius=True)}")
    lines += [f"  not proven: {f}" for f in found.failures[:5]]
    return lines


def build(args) -> Outcome:
    """Run `certify counterexample ln-equilibria`: search the witness, evaluate it in ball arithmetic and have
    the checker confirm the certificate (BadInput for a bad --n or --w)."""
    N, w = parse(args.n, args.w)
    inputs = {"n": N, "w": str(w)}
    listed = sum(len(sign_patterns(k, args.one_per_rank)) for k in range(1, N + 1))  # the equilibria witness() boxes
    stage = stage_of(args) or (lambda _: None)

    def make_witness(precision: int) -> dict:
        # at --n 8 and --w 2^64 a witness takes half a minute: its stage counts the equilibria boxed
        return witness(N, w, args.one_per_rank, precision,
                       lambda count: stage(f"the witness at {precision} bits: {count}/{listed} equilibria"))

    return certify_named(KIND, evaluate, inputs, make_witness, _summary, limits=checker_limits(args), stage=stage,
                         least={"equilibria": [{}] * listed})
