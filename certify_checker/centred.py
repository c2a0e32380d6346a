"""The centred form X = 1 c^T + E of translation-equivariant layers (no LayerNorm, no FFN), written again from its
derivation (proofs/centred_dynamics.py), as certify.core.centred computes it:
    w_j = exp(k^T e_j), k = A^T c (+ W_K b_Q beta / sqrt(d_k)),  Pi_ij = w_j / sum_{l in N(i)} w_l,
    u = expm1(q - shift), q_ij = e_i^T A e_j,  Z_i = sum_l Pi_il exp(q_il - shift_i) = 1 + sum_l Pi_il u_il,
    Delta_ij = Pi_ij ((1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il) / Z_i  where every |u_il| <= 1/2,
    otherwise Delta_ij = Pi_ij exp(q_ij - shift_i) / Z_i - Pi_ij,
    P = Pi + Delta;  no mask: P X = 1 (c + pi^T E)^T + Delta E;  masked: F = Pi E + Delta E, recentred;
    then V and the residual act on c and E separately.
D(X) = D(E) and tau(P) from Delta keep their relative accuracy however far the tokens have collapsed: the
trajectory checker's representation, and that of an inequality certificate stating "representation": "centred".
"""

from __future__ import annotations

import functools

from flint import arb, ctx

from certify_checker import forward
from certify_checker import overlaps
from certify_checker.exact import largest


def centre(X0: list) -> tuple[list, list]:
    """(c, E): c the mean token, E = X - 1 c^T (rows), at the working precision."""
    n, d = len(X0), len(X0[0])
    c = [sum((row[m] for row in X0), arb(0)) / n for m in range(d)]
    return c, [[x - m for x, m in zip(row, c)] for row in X0]


def supported(layer: dict) -> bool:
    """A translation-equivariant layer: no LayerNorm and no feed-forward network."""
    return not ("ffn" in layer or "layernorm" in layer)


def expm1(x: arb) -> arb:
    """exp(x) - 1; for |x| <= 2^-prec the Taylor form x + x^2/2 +- |x|^3 (arb's own loses accuracy
    once the exponent of x passes 2^62)."""
    if x.abs_upper() <= _tiny(ctx.prec):
        return x + x * x / 2 + arb(0, x.abs_upper() ** 3)
    return x.expm1()


@functools.lru_cache(maxsize=64)
def _tiny(precision: int) -> arb:
    """2^-precision, exact: made once a precision (expm1 runs for every entry of P; the power took a third of its
    time at 384 tokens)."""
    return arb(2) ** -precision


def _dot(u, v) -> arb:
    return sum((a * b for a, b in zip(u, v)), arb(0))


def _shift(values) -> arb:
    """An exact number (the midpoint of the largest value): softmax does not see it."""
    best = values[0]
    for v in values[1:]:
        best = best.max(v)
    return arb(best.mid())


def attention(layer: dict, c, E):
    """(Pi, Delta, complete) of the layer at X = 1 c^T + E."""
    n = len(E)
    k, q = _column_and_quadratic(layer, c, E)
    if "b_Q" in layer:
        scale = forward.ball(layer.get("beta", "1")) / arb(int(layer["d_k"])).sqrt()
        WK, bQ = forward.matrix(layer["W_K"]), forward.vector(layer["b_Q"])
        k = [kj + scale * _dot(row, bQ) for kj, row in zip(k, WK)]
    mask = layer.get("mask") or [[1] * n for _ in range(n)]
    column = [_dot(k, e) for e in E]
    top = _shift(column)
    w = [(x - top).exp() for x in column]
    Pi = []
    for i in range(n):
        total = sum((w[j] for j in range(n) if mask[i][j]), arb(0))
        Pi.append([w[j] / total if mask[i][j] else arb(0) for j in range(n)])
    Delta = []
    for i in range(n):
        shift = _shift([q[i][j] for j in range(n) if mask[i][j]])
        u = [expm1(q[i][j] - shift) if mask[i][j] else arb(0) for j in range(n)]
        exponentials = [(q[i][j] - shift).exp() if mask[i][j] else arb(0) for j in range(n)]
        Z = sum((Pi[i][l] * exponentials[l] for l in range(n)), arb(0))  # = 1 + sum_l Pi_il u_il
        near = all(abs(x) <= arb(1) / 2 for x in u)
        if not near:  # far from consensus: P - Pi directly
            Delta.append([Pi[i][j] * exponentials[j] / Z - Pi[i][j] for j in range(n)])
            continue
        weighted = [Pi[i][l] * u[l] for l in range(n)]
        before, after = [arb(0)] * n, [arb(0)] * n  # sums of weighted[l] over l < j and over l > j
        for j in range(1, n):
            before[j] = before[j - 1] + weighted[j - 1]
            after[n - 1 - j] = after[n - j] + weighted[n - j]
        # u_ij - ubar_i = (1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il: the term l = j enters once
        Delta.append([Pi[i][j] * ((1 - Pi[i][j]) * u[j] - (before[j] + after[j])) / Z for j in range(n)])
    return Pi, Delta, all(v == 1 for r in mask for v in r)


def _column_and_quadratic(layer: dict, c, E):
    """k = A^T c and q = E A E^T; a head of W_Q and W_K through W_K (W_Q^T c) and (E W_Q)(E W_K)^T, scaled by
    beta / sqrt(d_k), without forming the d x d matrix A."""
    if "A" in layer:
        A = forward.query_key_matrix(layer).tolist()
        return ([_dot([A[i][j] for i in range(len(A))], c) for j in range(len(A))],
                forward.product(forward.product(E, A), forward.transpose(E)))
    scale = forward.ball(layer.get("beta", "1")) / arb(int(layer["d_k"])).sqrt()
    W_Q, W_K = forward.matrix(layer["W_Q"]), forward.matrix(layer["W_K"])
    queried = [_dot([row[m] for row in W_Q], c) for m in range(len(W_Q[0]))]  # W_Q^T c
    scores = forward.product(forward.product(E, W_Q), forward.transpose(forward.product(E, W_K)))
    return [scale * _dot(row, queried) for row in W_K], [[scale * x for x in row] for row in scores]


def transport(Pi, Delta, complete: bool, c, E):
    """P X = 1 (c + delta)^T + E_PX; returns (c + delta, E_PX, delta)."""
    n, d = len(E), len(E[0])
    if complete:
        drift = [sum((Pi[0][j] * E[j][m] for j in range(n)), arb(0)) for m in range(d)]
        return [x + y for x, y in zip(c, drift)], forward.product(Delta, E), drift
    F = [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(forward.product(Pi, E), forward.product(Delta, E))]
    drift = [sum((F[i][m] for i in range(n)), arb(0)) / n for m in range(d)]
    return [x + y for x, y in zip(c, drift)], [[f - m for f, m in zip(row, drift)] for row in F], drift


def centred_step(layer: dict, c, E):
    Pi, Delta, complete = attention(layer, c, E)
    c_px, E_px, drift = transport(Pi, Delta, complete, c, E)
    if "V" in layer:
        V = forward.matrix(layer["V"])
        c_out, E_out = [_dot(row, c_px) for row in V], forward.product(E_px, forward.transpose(V))
    else:
        c_out, E_out = c_px, E_px
    if layer.get("residual", False):
        c_out = [x + y for x, y in zip(c, c_out)]
        E_out = [[x + y for x, y in zip(ra, rb)] for ra, rb in zip(E, E_out)]
    return {"Pi": Pi, "Delta": Delta, "complete": complete, "c": c_out, "E": E_out, "E_PX": E_px}


def centred_tau(Pi, Delta, complete: bool) -> arb:
    """(1/2) max_{i<k} sum_j |P_ij - P_kj| with P = Pi + Delta (no mask: the rows of Pi are equal), over the pairs
    that can hold the largest (overlaps.difference_pairs)."""
    def total(i: int, k: int) -> arb:
        if complete:
            return sum((abs(p - q) for p, q in zip(Delta[i], Delta[k])), arb(0))
        return sum((abs((p - q) + (r - s)) for p, q, r, s in zip(Delta[i], Delta[k], Pi[i], Pi[k])), arb(0))
    return largest(total(i, k) for i, k in overlaps.difference_pairs(Delta, None if complete else Pi)) / 2
