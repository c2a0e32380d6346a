"""An independent high-precision oracle (mpmath mp, 60 digits) written for the tests.

It shares no code with certify: it reads a configuration dict itself and evaluates one layer
(or a stack) of attention with plain mpmath matrices.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import mpmath
from mpmath import mp

DPS = 60


def num(value):
    if isinstance(value, str):
        if value.lower().lstrip("+-").startswith("0x"):
            return _hex(value)
        q = Fraction(value)
        return mp.mpf(q.numerator) / q.denominator
    return mp.mpf(value)


def _hex(text):
    q = Fraction(float.fromhex(text))
    return mp.mpf(q.numerator) / q.denominator


def mat(rows):
    return mp.matrix([[num(v) for v in row] for row in rows])


def diameter(X):
    rows = X.tolist()
    return max((mp.sqrt(mp.fsum((x - y) ** 2 for x, y in zip(rows[i], rows[k])))
                for i in range(len(rows)) for k in range(i + 1, len(rows))), default=mp.mpf(0))


def consensus_distance(X):
    n = X.rows
    mean = [sum(X[i, j] for i in range(n)) / n for j in range(X.cols)]
    return mp.sqrt(sum((X[i, j] - mean[j]) ** 2 for i in range(n) for j in range(X.cols)))


def dobrushin(P):
    """max over pairs of rows of (1/2) ||p - r||_1, which is 1 - min sum_j min(p_j, r_j) for rows summing to 1.
    Each pair's heaviest column is taken through the others: near 1 its entries round away the differences of the
    tiny weights, which a plain sum then misses (rows of P agreeing to 1e-3000 gave half of tau at 300 digits)."""
    n = P.rows
    return max((_half_l1([P[i, j] for j in range(n)], [P[k, j] for j in range(n)])
                for i in range(n) for k in range(i + 1, n)), default=mp.mpf(0))


def _half_l1(p, r):
    m = max(range(len(p)), key=lambda j: p[j] + r[j])
    rest = [p[j] - r[j] for j in range(len(p)) if j != m]
    return (mp.fsum(abs(x) for x in rest) + abs(mp.fsum(rest))) / 2


def spectral_norm(M):
    return _spectral_norm(tuple(tuple(M[i, j] for j in range(M.cols)) for i in range(M.rows)), mp.prec)


@functools.lru_cache(maxsize=4096)  # a search rescales the tokens many times, never the matrices
def _spectral_norm(rows, prec):
    return max(mpmath.svd_r(mp.matrix(rows), compute_uv=False))


def scores(X, beta, A=None, W_Q=None, W_K=None, b_Q=None, b_K=None, d_k=None):
    """(S, A): the scores X A X^T beta of the bilinear form, or (X W_Q + b_Q)(X W_K + b_K)^T beta / sqrt(d_k)
    of the thin head (biases added to every row), and the effective bilinear matrix A."""
    if A is not None:
        A = A * beta
        return X * A * X.T, A
    scale = beta / mp.sqrt(W_Q.cols if d_k is None else d_k)
    Q, K = (X * W if b is None else rows_plus(X * W, b) for W, b in ((W_Q, b_Q), (W_K, b_K)))
    return Q * K.T * scale, W_Q * W_K.T * scale


def rows_plus(M, b):
    """M with the vector b added to every row (a bias)."""
    return mp.matrix([[M[i, j] + b[j] for j in range(M.cols)] for i in range(M.rows)])


def softmax_rows(S, mask=None):
    """The row softmax of S over the columns mask[i][j] allows (all without a mask), zero elsewhere; each row is
    shifted by its largest allowed score first."""
    n = S.rows
    P = mp.matrix(n, S.cols)
    for i in range(n):
        allowed = [j for j in range(S.cols) if mask is None or mask[i][j]]
        top = max(S[i, j] for j in allowed)
        weights = {j: mp.exp(S[i, j] - top) for j in allowed}
        total = mp.fsum(weights.values())
        for j in allowed:
            P[i, j] = weights[j] / total
    return P


def layer(spec: dict, X):
    """One layer: scores, masked softmax, value matrix and residual (no FFN or LayerNorm)."""
    with mp.workdps(DPS):
        biases = {name: [num(v) for v in spec[name]] for name in ("b_Q", "b_K") if name in spec}
        head = {"A": mat(spec["A"])} if "A" in spec else {"W_Q": mat(spec["W_Q"]), "W_K": mat(spec["W_K"])}
        S, A = scores(X, num(spec.get("beta", 1)), d_k=spec.get("d_k"), **head, **biases)
        P = softmax_rows(S, spec.get("mask"))
        PX = P * X
        out = PX * mat(spec["V"]).T if "V" in spec else PX
        if spec.get("residual"):
            out = X + out
        return {"P": P, "PX": PX, "out": out, "A": A}


def quantities(config: dict) -> list[dict]:
    """Per layer: D, D_out, D_PX, tau, a (and v when V is given), at 60 digits."""
    with mp.workdps(DPS):
        X = mat(config["X"])
        specs = config["layers"] if "layers" in config else [config]
        out = []
        for spec in specs:
            step = layer(spec, X)
            values = {"D": diameter(X), "D_out": diameter(step["out"]), "D_PX": diameter(step["PX"]),
                      "tau": dobrushin(step["P"]), "a": spectral_norm(step["A"]),
                      "mu": consensus_distance(X), "mu_out": consensus_distance(step["out"])}
            if "V" in spec:
                values["v"] = spectral_norm(mat(spec["V"]))
            values["gap"] = mp.exp(-values["a"] * values["D"] ** 2)
            out.append(values)
            X = step["out"]
        return out
