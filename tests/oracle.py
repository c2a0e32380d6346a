"""An independent high-precision oracle (mpmath mp, 60 digits) written for the tests.

It shares no code with certify: it reads a configuration dict itself and evaluates one layer
(or a stack) of attention with plain mpmath matrices.
"""

from __future__ import annotations

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
    n = X.rows
    return max(mp.norm(X[i, :] - X[k, :]) for i in range(n) for k in range(n))


def consensus_distance(X):
    n = X.rows
    mean = [sum(X[i, j] for i in range(n)) / n for j in range(X.cols)]
    return mp.sqrt(sum((X[i, j] - mean[j]) ** 2 for i in range(n) for j in range(X.cols)))


def dobrushin(P):
    n = P.rows
    return 1 - min(sum(min(P[i, j], P[k, j]) for j in range(n)) for i in range(n) for k in range(n) if i != k)


def spectral_norm(M):
    return max(mpmath.svd_r(M, compute_uv=False))


def layer(spec: dict, X):
    """One layer: scores, masked softmax, value matrix and residual (no FFN or LayerNorm)."""
    with mp.workdps(DPS):
        n = X.rows
        beta = num(spec.get("beta", 1))
        if "A" in spec:
            A = mat(spec["A"]) * beta
            S = X * A * X.T
        else:
            WQ, WK = mat(spec["W_Q"]), mat(spec["W_K"])
            dk = spec.get("d_k", WQ.cols)
            Q, K = X * WQ, X * WK
            for name, M in (("b_Q", Q), ("b_K", K)):
                if name in spec:
                    for i in range(n):
                        for j in range(M.cols):
                            M[i, j] += num(spec[name][j])
            S = Q * K.T * beta / mp.sqrt(dk)
            A = WQ * WK.T * beta / mp.sqrt(dk)
        mask = spec.get("mask") or [[1] * n for _ in range(n)]
        P = mp.matrix(n, n)
        for i in range(n):
            total = sum(mp.exp(S[i, j]) for j in range(n) if mask[i][j])
            for j in range(n):
                P[i, j] = mp.exp(S[i, j]) / total if mask[i][j] else mp.mpf(0)
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
