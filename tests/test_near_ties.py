"""Near-ties against an independent mpmath evaluation: for fixed-seed layers with every component the configuration
format allows (A or thin W_Q, W_K with d_k and biases, a temperature, masks, V, a residual, an FFN, LayerNorm), the
tokens near consensus, softmax saturated or D far beyond binary64's range, a bound `c*f(D, a)` is given the constant
c that puts rhs - lhs at +-1e-10, 1e-20 and 1e-30 relative, and the verdict must be the sign of that margin; a
precision cap too low to separate the sides gives undecided, never the other verdict.  The layer is evaluated here
from docs/claims.md with plain mpmath (sharing no code with certify), translated to a token most rows attend to most
where the layer commutes with translations, so that a near-consensus or saturated output keeps its digits."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest
from mpmath import mp

from certify import engine


def num(v):
    q = Fraction(v) if isinstance(v, (int, str)) else Fraction(float(v))
    return mp.mpf(q.numerator) / q.denominator


def mat(rows):
    return [[num(x) for x in row] for row in rows]


def product(A, B):
    return [[mp.fsum(A[i][k] * B[k][j] for k in range(len(B))) for j in range(len(B[0]))] for i in range(len(A))]


def transposed(M):
    return [list(column) for column in zip(*M)]


def norm(v):
    return mp.sqrt(mp.fsum(x * x for x in v))


def diameter(X):
    return max(norm([a - b for a, b in zip(x, y)]) for x in X for y in X)


def layernorm(spec, Y):
    """x / ||x|| (Wu et al.), or g (x - mean) / sqrt(var + eps) + b with the biased variance."""
    if isinstance(spec, str):
        return [[x / norm(row) for x in row] for row in Y]
    d = len(Y[0])
    gain, bias, eps = [num(x) for x in spec["gain"]], [num(x) for x in spec["bias"]], num(spec.get("eps", "1e-12"))
    out = []
    for row in Y:
        centred = [x - mp.fsum(row) / d for x in row]
        scale = mp.sqrt(mp.fsum(x * x for x in centred) / d + eps)
        out.append([g * x / scale + b for g, x, b in zip(gain, centred, bias)])
    return out


MASKS = {"causal": lambda i, j: j <= i, "sliding": lambda i, j: abs(i - j) <= 1, "uni": lambda i, j: i - 1 <= j <= i}


def layer(spec, X):
    """(D_out, a) of one layer: Z = LN(X) pre-LN; P the masked softmax of beta Z A Z^T (A = W_Q W_K^T / sqrt(d_k) with
    the biases in the queries and keys); Y = P Z V^T (+ X); LN post-LN; then the FFN (+ Y) and LN again post-LN."""
    n, beta, ln = len(X), num(spec.get("beta", 1)), spec.get("layernorm")
    position = ln if isinstance(ln, str) else ln and ln["position"]
    Z = layernorm(ln, X) if position == "pre" else X
    if "A" in spec:
        A = [[beta * x for x in row] for row in mat(spec["A"])]
        S = product(product(Z, A), transposed(Z))
    else:
        WQ, WK = mat(spec["W_Q"]), mat(spec["W_K"])
        scale = beta / mp.sqrt(spec.get("d_k", len(WQ[0])))
        Q, K = product(Z, WQ), product(Z, WK)
        Q = [[q + num(b) for q, b in zip(row, spec.get("b_Q", [0] * len(row)))] for row in Q]
        K = [[k + num(b) for k, b in zip(row, spec.get("b_K", [0] * len(row)))] for row in K]
        S = [[scale * x for x in row] for row in product(Q, transposed(K))]
        A = [[scale * x for x in row] for row in product(WQ, transposed(WK))]
    allowed = MASKS.get(spec.get("mask"), lambda i, j: True)
    P = []
    for i in range(n):
        top = max(S[i][j] for j in range(n) if allowed(i, j))
        w = [mp.exp(S[i][j] - top) if allowed(i, j) else mp.mpf(0) for j in range(n)]
        P.append([x / mp.fsum(w) for x in w])
    translated = ln is None and "ffn" not in spec  # rows of P sum to 1: P (Z - 1 z_m^T) loses no digit to 1 - tiny
    best = [max(range(n), key=lambda j, i=i: P[i][j]) for i in range(n)]
    m = max(set(best), key=best.count) if translated else None
    E = [[x - y for x, y in zip(row, Z[m])] for row in Z] if translated else Z
    Y = product(P, E)
    if "V" in spec:
        Y = product(Y, transposed(mat(spec["V"])))
    if spec.get("residual"):  # the skip carries X itself, also pre-LN
        Y = [[x + y for x, y in zip(r, s)] for r, s in zip(E if translated else X, Y)]
    if position == "post":
        Y = layernorm(ln, Y)
    if "ffn" in spec:
        f = spec["ffn"]
        act = (lambda x: max(x, 0)) if f["activation"] == "relu" else (lambda x: x * (1 + mp.erf(x / mp.sqrt(2))) / 2)
        H = [[act(x + num(b)) for x, b in zip(row, f["b1"])] for row in product(Y, transposed(mat(f["W1"])))]
        O = [[x + num(b) for x, b in zip(row, f["b2"])] for row in product(H, transposed(mat(f["W2"])))]
        Y = [[x + y for x, y in zip(r, s)] for r, s in zip(Y, O)] if f["residual"] else O
        if position == "post":
            Y = layernorm(ln, Y)
    return diameter(Y), max(mpmath.svd_r(mp.matrix(A), compute_uv=False))


def quantities(cfg, dps):
    """(D, D_out, a) at dps digits, checked against 3 dps: both agree to 60 digits."""
    values = []
    for digits in (dps, 3 * dps):
        with mp.workdps(digits):
            values.append((diameter(mat(cfg["X"])), *layer(cfg, mat(cfg["X"]))))
    with mp.workdps(3 * dps):
        assert all(abs(x - y) <= abs(y) * mp.mpf(10) ** -60 for x, y in zip(*values))
    return values[1]


def entry(rng, scale=1.0):
    x = rng.gauss(0, scale)
    return rng.choice([f"{x:.5f}", x, f"{rng.randint(-9, 9)}/{rng.randint(1, 13)}"])


def matrix(rng, rows, cols, scale=1.0):
    return [[entry(rng, scale) for _ in range(cols)] for _ in range(rows)]


def configuration(seed):
    """A random layer; seeds cycle through the regimes: ordinary, near consensus (tokens 10^-20 apart around a
    point), saturated softmax (beta 300) and D near 10^150 (beta 10^-300)."""
    rng, regime = random.Random(seed), ("ordinary", "consensus", "saturated", "large")[seed % 4]
    n, d = rng.randint(2, 5), rng.randint(1, 3)
    cfg = {"X": matrix(rng, n, d)}
    if rng.random() < 0.5:
        cfg["A"] = matrix(rng, d, d, 0.7)
    else:
        k = rng.randint(1, d + 1)
        cfg.update(W_Q=matrix(rng, d, k, 0.7), W_K=matrix(rng, d, k, 0.7), d_k=rng.randint(1, 4),
                   b_Q=[entry(rng) for _ in range(k)], b_K=[entry(rng) for _ in range(k)])
    cfg["mask"] = rng.choice([None, None, "causal", "sliding", "uni"])
    if rng.random() < 0.4:
        cfg["V"] = matrix(rng, d, d, 0.8)
    cfg["residual"] = rng.random() < 0.3
    if regime == "ordinary" and rng.random() < 0.5:
        h = rng.randint(1, 2 * d)
        cfg["ffn"] = {"W1": matrix(rng, h, d), "b1": [entry(rng) for _ in range(h)], "W2": matrix(rng, d, h),
                      "b2": [entry(rng) for _ in range(d)], "activation": rng.choice(["relu", "gelu"]),
                      "residual": rng.random() < 0.5}
    if regime == "ordinary" and d > 1 and rng.random() < 0.5:
        cfg["layernorm"] = rng.choice(["pre", "post", {"position": rng.choice(["pre", "post"]), "kind": "standard",
                                                       "gain": [entry(rng) for _ in range(d)],
                                                       "bias": [entry(rng) for _ in range(d)], "eps": "1e-5"}])
    if regime == "consensus":
        centre = [Fraction(rng.randint(-999, 999), 1000) for _ in range(d)]
        cfg["X"] = [[str(c + Fraction(rng.randint(-99999, 99999), 10**25)) for c in centre] for _ in range(n)]
    elif regime == "saturated":
        cfg["beta"] = "300"
    elif regime == "large":
        cfg["X"] = [[f"{rng.gauss(0, 1):.6f}e150" for _ in range(d)] for _ in range(n)]
        cfg["beta"] = "1e-300"
    return {key: value for key, value in cfg.items() if value is not None}


FAMILIES = {"{c}*D": lambda D, a: D, "{c}*(1-exp(-a*D**2))*D": lambda D, a: -mp.expm1(-a * D**2) * D,
            "{c}*a*D**3": lambda D, a: a * D**3}


def near_ties(cfg):
    """(bound, margin rhs - lhs in mpmath) with the margin +-1e-10, 1e-20, 1e-30 relative to D_out."""
    D, D_out, a = quantities(cfg, 150)
    with mp.workdps(450):
        for template, base in FAMILIES.items():
            for e in (10, 20, 30):
                for sign in (1, -1):
                    c = mp.nstr(D_out / base(D, a) * (1 + sign * mp.mpf(10) ** -e), 80, strip_zeros=False)
                    yield template.format(c=c), num(c) * base(D, a) - D_out


@pytest.mark.parametrize("seed", range(32))
def test_a_near_tie_is_decided_by_its_sign_or_left_undecided_under_a_low_cap(seed):
    cfg = configuration(seed)
    for bound, margin in near_ties(cfg):
        expected = engine.HOLDS if margin > 0 else engine.VIOLATED
        assert engine.check(cfg, bound=bound).verdict == expected, (bound, cfg)
        assert engine.check(cfg, bound=bound, max_prec=64).verdict in (expected, engine.UNDECIDED), (bound, cfg)
