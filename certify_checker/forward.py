"""The checker's own forward pass and quantities, in plain loops over arb (plus arb_mat products).

Tokens are rows.  One layer: Z = LN(X) if pre-LN; P = masked softmax of the scores of Z;
Y = P Z V^T; + X with a residual; LN if post-LN; then the FFN (and LN again if post-LN).
"""

from __future__ import annotations

import functools
import itertools
import math

from flint import arb, arb_mat

from certify_checker import overlaps
from certify_checker.exact import ball, largest, smallest, square

Rows = list  # list of lists of arb


def matrix(rows) -> Rows:
    return [_row(row) for row in rows]


def _row(values) -> list:
    """ball() of each value; a row of finite JSON floats (binary64, exact in arb) in one C-level pass (a finite sum
    has no inf or nan among its terms; one that overflows is read value by value, to the same balls)."""
    if set(map(type, values)) == {float} and math.isfinite(sum(values)):
        return list(map(arb, values))
    return [ball(v) for v in values]


def matrix_mat(rows) -> arb_mat:
    """matrix(rows) as an arb_mat; rows of finite JSON floats (binary64, exact in arb) straight into it."""
    entries = list(itertools.chain.from_iterable(rows))
    if set(map(type, entries)) == {float} and math.isfinite(sum(entries)):  # as in _row
        return arb_mat(rows)
    return arb_mat(matrix(rows))


@functools.lru_cache(maxsize=64)
def _ones(n: int) -> arb_mat:
    """The column 1 of n ones (shared: never written to).  Products by 1 are exact."""
    return arb_mat(n, 1, [1] * n)


@functools.lru_cache(maxsize=64)
def _identity(n: int) -> arb_mat:
    """The n x n identity (shared: never written to)."""
    return arb_mat(n, n, [int(i == k) for i in range(n) for k in range(n)])


def vector(values) -> list:
    return [ball(v) for v in values]


def product(left: Rows, right: Rows) -> Rows:
    return (arb_mat(left) * arb_mat(right)).tolist()


def transpose(rows: Rows) -> Rows:
    return [list(col) for col in zip(*rows)]


def norm(vec) -> arb:
    return sum((square(x) for x in vec), arb(0)).nonnegative_part().sqrt()  # rounding may dip below 0


def diameter(X) -> arb:
    """max_{i<k} ||x_i - x_k||, ||x_i - x_k||^2 = G_ii + G_kk - 2 G_ik with G = Y Y^T, Y = X - 1 c^T and c the
    exact midpoint of token 0 (so |y_i| <= D and the sum keeps D^2's digits).  The n x n matrix of
    G_ii + G_kk - 2 G_ik is formed by arb_mat sums (g 1^T + 1 g^T - 2 G, g the diagonal of G).
    X: rows, or an arb_mat."""
    X = X if isinstance(X, arb_mat) else arb_mat(X)
    n, d = X.nrows(), X.ncols()
    ones = _ones(n)  # products by 1 are exact: 1 c^T and g 1^T are formed in arb_mat
    Y = X - ones * arb_mat(1, d, [X[0, j].mid() for j in range(d)])
    G = Y * Y.transpose()
    across = arb_mat(n, 1, [G[i, i] for i in range(n)]) * ones.transpose()
    squared = across + across.transpose() - 2 * G
    pairs = [squared[i, k] for i in range(n) for k in range(i + 1, n)]
    return functools.reduce(arb.max, pairs).nonnegative_part().sqrt()


def consensus_distance(X: Rows) -> arb:
    """||X - 1 xbar^T||_F."""
    n = len(X)
    mean = [sum(column, arb(0)) / n for column in zip(*X)]
    return sum((square(x - m) for row in X for x, m in zip(row, mean)), arb(0)).nonnegative_part().sqrt()


def dobrushin(P: Rows) -> arb:
    """tau(P) = 1 - min_{i<k} sum_j min(P_ij, P_kj), over the pairs that can hold the least (overlaps)."""
    return 1 - smallest(sum((p.min(q) for p, q in zip(P[i], P[k])), arb(0)) for i, k in overlaps.candidate_pairs(P))


def sphere(X: Rows) -> Rows:
    """x / ||x|| per token, the norm taken once per token (once per entry it was d times the work: 58 s
    at 128 x 384)."""
    return [[x / length for x in row] for row, length in zip(X, map(norm, X))]


def standard_ln(X: Rows, spec: dict) -> Rows:
    gain, bias, eps = vector(spec["gain"]), vector(spec["bias"]), ball(spec["eps"])
    out = []
    for row in X:
        mean = sum(row, arb(0)) / len(row)
        centred = [x - mean for x in row]
        scale = (sum((square(c) for c in centred), arb(0)) / len(row) + eps).sqrt()
        out.append([c / scale * g + b for c, g, b in zip(centred, gain, bias)])
    return out


def layernorm(X: Rows, spec: dict) -> Rows:
    return sphere(X) if spec.get("kind", "sphere") == "sphere" else standard_ln(X, spec)


def query_key_matrix(layer: dict) -> arb_mat:
    """A = beta A_given, or beta W_Q W_K^T / sqrt(d_k)."""
    beta = ball(layer.get("beta", "1"))
    if "A" in layer:
        return matrix_mat(layer["A"]) * beta if "beta" in layer else matrix_mat(layer["A"])  # a product by 1 copies
    scale = beta / arb(int(layer["d_k"])).sqrt()
    return matrix_mat(layer["W_Q"]) * matrix_mat(layer["W_K"]).transpose() * scale


def scores(layer: dict, Z, A: arb_mat | None = None) -> arb_mat:
    """The attention scores of tokens Z (rows, or an arb_mat); A, when given, is query_key_matrix(layer)."""
    Zm = Z if isinstance(Z, arb_mat) else arb_mat(Z)
    if "A" in layer:
        return Zm * (A if A is not None else query_key_matrix(layer)) * Zm.transpose()
    beta = ball(layer.get("beta", "1"))
    scale = beta / arb(int(layer["d_k"])).sqrt()
    Q, K = _queries_and_keys(Zm, layer["W_Q"], layer["W_K"])
    ones = _ones(Zm.nrows())  # 1 b^T: the bias on every row (exact products by 1)
    if "b_Q" in layer:
        Q = Q + ones * arb_mat(1, Q.ncols(), vector(layer["b_Q"]))
    if "b_K" in layer:
        K = K + ones * arb_mat(1, K.ncols(), vector(layer["b_K"]))
    return (Q * K.transpose()) * scale


def _queries_and_keys(Zm: arb_mat, W_Q: list, W_K: list) -> tuple[arb_mat, arb_mat]:
    """Z W_Q and Z W_K from the one product Z [W_Q | W_K] (arb's block product needs 64 columns or
    more: d_k = 32 alone takes the classical one, three times slower for both)."""
    k = len(W_Q[0])
    both = (Zm * matrix_mat([q + w for q, w in zip(W_Q, W_K)])).tolist()
    return arb_mat([row[:k] for row in both]), arb_mat([row[k:] for row in both])


def attention(S: arb_mat, mask) -> arb_mat:
    """The masked softmax of the scores S: row i is exp(S_ij - m_i) normalised over the allowed j (0
    elsewhere; mask None: all allowed), the exact shift m_i, the midpoint of the largest allowed S_ij,
    leaving softmax unchanged: no weight is far above 1, and the largest is 1 exactly where its score is exact
    (S_ii, not always allowed in a head's keys, made a lone allowed key's weight w / w, never exactly 1).
    (The division entry by entry: a product by diag(1 / t) would cost n^3.)"""
    P = []
    for i, row in enumerate(S.tolist()):
        shift = largest(row if mask is None or all(mask[i]) else [s for s, keep in zip(row, mask[i]) if keep]).mid()
        if mask is None or all(mask[i]):
            weights = [(s - shift).exp() for s in row]
        else:
            weights = [(s - shift).exp() if allowed else arb(0) for s, allowed in zip(row, mask[i])]
        total = sum(weights, arb(0))
        P.append([w / total for w in weights])
    return arb_mat(P)


def gelu(x: arb) -> arb:
    return x * (1 + (x / arb(2).sqrt()).erf()) / 2


def feed_forward(Y: Rows, spec: dict) -> Rows:
    W1, b1, W2, b2 = matrix(spec["W1"]), vector(spec["b1"]), matrix(spec["W2"]), vector(spec["b2"])
    hidden = [[h + b for h, b in zip(row, b1)] for row in product(Y, transpose(W1))]
    act = (lambda x: x.max(arb(0))) if spec["activation"] == "relu" else gelu
    hidden = [[act(h) for h in row] for row in hidden]
    out = [[o + b for o, b in zip(row, b2)] for row in product(hidden, transpose(W2))]
    if spec.get("residual", False):
        out = [[y + o for y, o in zip(yr, orow)] for yr, orow in zip(Y, out)]
    return out


class Step(dict):
    """One layer's results: the arb_mats "P_matrix", "PX_matrix", "out_matrix" and the rows "P", "PX",
    "out"; a form not stored is made from the other when first read (most claims need only matrices)."""

    def __missing__(self, key):
        matrix = key.endswith("_matrix")
        other = dict.__getitem__(self, key[:-len("_matrix")] if matrix else key + "_matrix")
        self[key] = value = arb_mat(other) if matrix else other.tolist()
        return value


def layer_step(layer: dict, X: Rows | None, A: arb_mat | None = None, Xm: arb_mat | None = None) -> Step:
    """One layer on tokens X (rows; Xm, when given, the same tokens as an arb_mat, and then X may be
    None; A, when given, query_key_matrix(layer))."""
    ln = layer.get("layernorm")
    pre = bool(ln) and ln["position"] == "pre"
    post = bool(ln) and ln["position"] == "post"
    residual = layer.get("residual", False)
    if X is None and (pre or residual):
        X = Xm.tolist()
    Z = layernorm(X, ln) if pre else X
    Zm = Xm if Xm is not None and not pre else arb_mat(Z)  # once, for the scores and P Z
    P = attention(scores(layer, Zm, A), layer.get("mask") or None)
    step = Step(P_matrix=P, PX_matrix=P * Zm)
    if not ("V" in layer or residual or post or "ffn" in layer):
        step["out_matrix"] = step["PX_matrix"]
        return step
    Y = product(step["PX"], transpose(matrix(layer["V"]))) if "V" in layer else step["PX"]
    if residual:
        Y = [[x + y for x, y in zip(xr, yr)] for xr, yr in zip(X, Y)]
    if post:
        Y = layernorm(Y, ln)
    if "ffn" in layer:
        Y = feed_forward(Y, layer["ffn"])
        if post:
            Y = layernorm(Y, ln)
    step["out"] = Y
    return step


def _column_norm(v: arb_mat) -> arb:
    """||v||_2 of a column, its square v^T v as an arb_mat product (it may dip below 0 by rounding)."""
    return (v.transpose() * v)[0, 0].nonnegative_part().sqrt()


def frobenius(M: arb_mat) -> arb:
    """||M||_F, the norm of its entries as one column (a d^2 dot product; trace(M^T M) was a d x d product, d^3
    work)."""
    entries = M.entries()
    return _column_norm(arb_mat(len(entries), 1, entries))


def spectral_norm(M, witness: dict) -> arb:
    """||M||_2 (rows or an arb_mat) from a witness W (nearly orthogonal) and w: ||M w||/||w|| <= ||M||_2 and
    ||M||_2^2 <= max_i sum_j |E_ij| / (1 - ||W^T W - I||_F), E = (M W)^T (M W) (Gershgorin's discs, E_ii >= 0)."""
    M = M if isinstance(M, arb_mat) else arb_mat(M)
    if "transposed" in witness:  # of M^T (the same norm), only as true for a wide M, where its basis is the smaller
        if witness["transposed"] is not True or not M.nrows() < M.ncols():
            raise ValueError("a witness is marked transposed only as true, for a matrix with fewer rows than columns")
        M = M.transpose()
    d = M.ncols()  # M may be rectangular (an FFN weight)
    basis, top = witness["basis"], witness["top"]
    if len(basis) != d or any(len(row) != d for row in basis) or len(top) != d:
        raise ValueError("witness of the wrong size")
    W, w = matrix_mat(basis), matrix_mat([top]).transpose()
    w_norm = _column_norm(w)
    lower = _column_norm(M * w) / w_norm if w_norm > 0 else arb(0)
    MW = M * W
    E = (MW.transpose() * MW).tolist()
    G = W.transpose() * W - _identity(d)
    drift = frobenius(G)
    if not drift < 1:
        raise ValueError("the witness basis is not nearly orthogonal")
    disc = largest(sum(map(abs, row), arb(0)) for row in E)  # E_ii + sum_{j != i} |E_ij| <= sum_j |E_ij|, E_ii >= 0
    upper = (disc.nonnegative_part() / (1 - drift)).sqrt()
    return lower.lower().union(upper.upper())
