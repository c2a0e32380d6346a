"""The centred form X = 1 c^T + E of translation-equivariant layers (no LayerNorm, no FFN), written again from its
derivation (proofs/centred_dynamics.py), as certify.core.centred computes it:
    w_j = exp(k^T e_j), k = A^T c (+ W_K b_Q beta / sqrt(d_k)),  Pi_ij = w_j / sum_{l in N(i)} w_l,
    u = expm1(q - shift), q_ij = e_i^T A e_j,  Z_i = sum_l Pi_il exp(q_il - shift_i) = 1 + sum_l Pi_il u_il,
    Delta_ij = Pi_ij ((1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il) / Z_i  where every |u_il| <= 1/2 (Z_i as 1 + ubar_i),
    otherwise Delta_ij = Pi_ij exp(q_ij - shift_i) / Z_i - Pi_ij (Z_i as the sum of positive terms),
    P = Pi + Delta;  no mask: P X = 1 (c + pi^T E)^T + Delta E;  masked: F = Pi E + Delta E, recentred;
    then V and the residual act on c and E separately.
D(X) = D(E) and tau(P) from Delta keep their relative accuracy however far the tokens have collapsed: the
trajectory checker's representation, and that of an inequality certificate stating "representation": "centred".
"""

from __future__ import annotations

import functools

from flint import arb, arb_mat, ctx

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


def expm1(x: arb, constants: tuple | None = None) -> arb:
    """exp(x) - 1 (constants: _expm1_constants at the working precision).  arb's own keeps only about 28 bits once the
    exponent of x passes 2^62; for |t| <= T = 2^-prec <= 1/2, Taylor's theorem with the Lagrange remainder gives
    |expm1(t) - t| <= t^2 e^|t| / 2 <= |t| T e^(1/2) / 2 < |t| T: expm1(t) = t (1 + eta), |eta| < T, so x times
    [1 +/- T] holds expm1 of every point of x (one product an entry of P)."""
    tiny, near_one = constants or _expm1_constants(ctx.prec)
    return x * near_one if abs(x) <= tiny else x.expm1()


@functools.lru_cache(maxsize=64)
def _expm1_constants(precision: int) -> tuple[arb, arb]:
    """2^-precision, exact, and [1 +/- 2^-precision] (its radius rounded up): made once a precision (expm1 runs for
    every entry of P; the power took a third of its time at 384 tokens)."""
    return arb(2) ** -precision, arb(1, arb((1, -precision)))


def _shift(values) -> arb:
    """An exact number (the midpoint of the largest value): softmax does not see it."""
    best = values[0]
    for v in values[1:]:
        best = best.max(v)
    return arb(best.mid())


def attention(layer: dict, c, E):
    """(Pi, Delta, complete) of the layer at X = 1 c^T + E."""
    n, Em = len(E), arb_mat(E)
    k, q = _column_and_quadratic(layer, c, Em)
    if "b_Q" in layer:  # the query bias's share of the column term, W_K b_Q beta / sqrt(d_k)
        scale = forward.ball(layer.get("beta", "1")) / arb(int(layer["d_k"])).sqrt()
        k = k + forward.matrix_mat(layer["W_K"]) * _column(forward.vector(layer["b_Q"])) * scale
    column, q = (Em * k).entries(), q.tolist()
    mask = layer.get("mask") or [[1] * n for _ in range(n)]
    complete = all(v == 1 for r in mask for v in r)
    top = _shift(column)
    w = [(x - top).exp() for x in column]
    Pi = []
    for row in mask[:1] if complete else mask:  # without a mask one row, the same for every i
        total = sum((x for x, keep in zip(w, row) if keep), arb(0))
        Pi.append([x / total if keep else arb(0) for x, keep in zip(w, row)])
    Pi = Pi * n if complete else Pi  # one list n times: rows are read, never written
    Delta, constants = [], _expm1_constants(ctx.prec)
    for i in range(n):
        shift = _shift([x for x, keep in zip(q[i], mask[i]) if keep])
        shifted = [x - shift if keep else arb(0) for x, keep in zip(q[i], mask[i])]
        u = [expm1(x, constants) if keep else x for x, keep in zip(shifted, mask[i])]  # exact zeros off the mask
        if not all(abs(x) <= 0.5 for x in u):  # far from consensus: P - Pi directly, Z a sum of positive terms
            exponentials = [x.exp() if keep else arb(0) for x, keep in zip(shifted, mask[i])]
            Z = sum((p * x for p, x in zip(Pi[i], exponentials)), arb(0))
            Delta.append([p * x / Z - p for p, x in zip(Pi[i], exponentials)])
            continue
        weighted = [p * x for p, x in zip(Pi[i], u)]
        before, after = [arb(0)] * n, [arb(0)] * n  # sums of weighted[l] over l < j and over l > j
        for j in range(1, n):
            before[j] = before[j - 1] + weighted[j - 1]
            after[n - 1 - j] = after[n - j] + weighted[n - j]
        Z = 1 + (before[n - 1] + weighted[n - 1])  # 1 + ubar_i in [1/2, 3/2]: the row of Pi sums to 1
        # u_ij - ubar_i = (1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il: the term l = j enters once
        Delta.append([p * ((1 - p) * x - (b + a)) / Z for p, x, b, a in zip(Pi[i], u, before, after)])
    return Pi, Delta, complete


def _column_and_quadratic(layer: dict, c, Em: arb_mat) -> tuple[arb_mat, arb_mat]:
    """k = A^T c (a column) and q = E A E^T, as arb_mats; a head of W_Q and W_K through W_K (W_Q^T c) and
    (E W_Q)(E W_K)^T, scaled by beta / sqrt(d_k), without forming the d x d matrix A."""
    if "A" in layer:
        A = forward.query_key_matrix(layer)
        return A.transpose() * _column(c), Em * A * Em.transpose()
    scale = forward.ball(layer.get("beta", "1")) / arb(int(layer["d_k"])).sqrt()
    W_Q, W_K = forward.matrix_mat(layer["W_Q"]), forward.matrix_mat(layer["W_K"])
    return W_K * (W_Q.transpose() * _column(c)) * scale, (Em * W_Q) * (Em * W_K).transpose() * scale


def _column(values: list) -> arb_mat:
    return arb_mat(len(values), 1, values)


def transport(Pi, Delta, complete: bool, c, E):
    """P X = 1 (c + delta)^T + E_PX; returns (c + delta, E_PX, delta)."""
    n, Em = len(E), arb_mat(E)
    if complete:
        drift = (arb_mat(Pi[:1]) * Em).entries()
        return [x + y for x, y in zip(c, drift)], (arb_mat(Delta) * Em).tolist(), drift
    F = (arb_mat(Pi) * Em + arb_mat(Delta) * Em).tolist()
    drift = [sum(column, arb(0)) / n for column in zip(*F)]
    return [x + y for x, y in zip(c, drift)], [[f - m for f, m in zip(row, drift)] for row in F], drift


def centred_step(layer: dict, c, E):
    Pi, Delta, complete = attention(layer, c, E)
    c_px, E_px, drift = transport(Pi, Delta, complete, c, E)
    if "V" in layer:
        V = forward.matrix_mat(layer["V"])
        c_out, E_out = (V * _column(c_px)).entries(), (arb_mat(E_px) * V.transpose()).tolist()
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
