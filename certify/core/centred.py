"""Centred representation X = 1 c^T + E of translation-equivariant layers, generic over the arithmetic.

Near consensus the tokens agree to many digits: in absolute coordinates a ball's radius is about
2^-p times the tokens' size, so D_t keeps relative accuracy only while 2^-p << D_t, and a
doubly exponential collapse eats about log2(1/D_t) bits.  Here the disagreement E is stored
directly and every formula is arranged so that no term of the size of c is subtracted from
another: the precision needed depends on one step's conditioning, not on how far the trajectory
has collapsed.  The identities used are derived in proofs/centred_dynamics.py:

    scores     x_i^T A x_j = (row constant) + k^T e_j + q_ij,  q_ij = e_i^T A e_j,
               k = A^T c (+ W_K b_Q beta / sqrt(d_k) with a query bias); a key bias adds a row constant
    softmax    P_ij = Pi_ij exp(q_ij) / sum_l Pi_il exp(q_il),  Pi_ij = w_j / sum_{l in N(i)} w_l on the
               mask, w_j = exp(k^T e_j): the column term k^T e_j is absorbed into the reference Pi
    deviation  Delta = P - Pi,  Delta_ij = Pi_ij (u_ij - ubar_i) / Z_i,  u = expm1(q - sigma),
               ubar_i = sum_l Pi_il u_il, Z_i = 1 + ubar_i = sum_l Pi_il exp(q_il - sigma_i) (sigma_i an
               exact row shift): relative accuracy when q is tiny; in rows far from consensus
               (some |u_il| > 1/2) Delta = Pi exp(q - sigma) / Z - Pi instead
    transport  P E = Pi E + Delta E; without a mask every row of Pi is w / sum w, so Pi E = 1 (pi^T E)
               is a translation, added to c, and the disagreement is Delta E alone
    recentre   F = 1 m^T + (F - 1 m^T), m the mean row: the part m joins the translation
    layer      P X = 1 (c + delta)^T + E_PX with delta = pi^T E + m (no mask);
               X' = 1 (V (c + delta))^T + E_PX V^T,  and with a residual 1 (c + V (c + delta))^T + E + E_PX V^T
Diameters and tau need E and Delta only: x_i - x_k = e_i - e_k, and without a mask
||P_i - P_k||_1 = ||Delta_i - Delta_k||_1.

LayerNorm and a feed-forward network are not translation-equivariant (f(c + e) is no translate of
f(e)): `unsupported` names them and callers fall back to absolute coordinates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from certify.core import quantities
from certify.core.arith.pairs import blocks_of
from certify.core.config import Layer
from certify.core.layers import LayerArrays


@dataclass
class Centred:
    """Tokens X = 1 c^T + E: c a d-vector, E an n x d array (rows e_i)."""

    c: object
    E: object


@dataclass
class Attention:
    """P = Pi + Delta (see the module docstring); `complete`: no mask, so every row of Pi is the same."""

    Pi: object
    Delta: object
    complete: bool

    @property
    def P(self):
        """The attention matrix P = Pi + Delta."""
        return self.Pi + self.Delta


@dataclass
class Step:
    """One layer in centred form: its attention, P X, the output, and the drift of the centre."""
    attention: Attention
    PX: Centred  # P X, before the value matrix and the residual
    out: Centred
    drift: object  # delta: P X = 1 (c + delta)^T + E_PX, a small vector near consensus


def unsupported(layer: Layer) -> str | None:
    """Why the layer is not translation-equivariant (None when it is)."""
    if layer.layernorm is not None:
        return "LayerNorm is not translation-equivariant (LN(c + e) is no translate of LN(e))"
    if layer.ffn is not None:
        return "a feed-forward network is not translation-equivariant (f(c + e) is no translate of f(e))"
    return None


def centre(ar, X) -> Centred:
    """c = the mean token and E = X - 1 c^T (the true E has zero column sums; the balls enclose it; the
    trajectory certificate states the mean-token form the checker recomputes).  Batched: X (..., n, d),
    c (..., d)."""
    c = X.sum(axis=-2) / ar.number(X.shape[-2])
    return Centred(c, X - c[..., None, :])


def attention(ar, arrays: LayerArrays, X: Centred) -> Attention:
    """Pi and Delta = P - Pi of the layer's attention at X (module docstring, softmax and deviation)."""
    k, q = _column_and_quadratic(ar, arrays, X)
    if arrays.b_Q is not None:  # (W_Q^T x_i + b_Q)^T W_K^T e_j: the bias's share of the column term
        k = k + ar.matmul(arrays.W_K, arrays.b_Q) * arrays.score_scale
    mask = arrays.mask
    complete = bool(mask.all())
    Pi = _reference(ar, ar.matmul(X.E, k), mask, complete)
    shift = ar.row_shift(q, mask)[:, None]
    shifted = q - shift if complete else np.where(mask, q - shift, q * 0)  # <= 0 on the mask, up to rounding
    u = _on_mask(ar.expm1, shifted, mask)
    # Near consensus (every |u_il| <= 1/2) the expm1 form keeps Delta's relative accuracy; farther, its
    # numerators u_ij - ubar_i can cancel, and P - Pi with P = Pi exp(q - sigma) / Z is the better
    # enclosure.  Both are exact identities, so the choice (made per row) only affects the radius.
    near = (ar.abs(u) <= 0.5).all(axis=1)
    Delta = np.empty_like(q)
    if near.any():
        rows = slice(None) if near.all() else near
        Delta[rows] = _near(Pi[rows], Pi[:1] if complete else Pi[rows], u[rows])
    if not near.all():
        rows = ~near
        Delta[rows] = _far(ar, Pi[rows], shifted[rows], mask[rows])
    return Attention(Pi=Pi, Delta=Delta, complete=complete)


def _reference(ar, column, mask, complete: bool):
    """Pi_ij = w_j / sum_{l in N(i)} w_l, w_j = exp(k^T e_j) (column: the k^T e_j); without a mask every row is the
    same, divided once (the same balls)."""
    n = mask.shape[0]
    # exact shifts (softmax does not see them) keep exp() of moderate size
    weights = ar.exp(column - ar.row_shift(column[None, :], np.ones((1, n), dtype=bool))[0])
    if complete:
        return np.tile(weights / weights.sum(), (n, 1))
    masked_weights = np.where(mask, weights[None, :], weights * 0)  # not w * mask: a product by 1 widens a radius
    return masked_weights / masked_weights.sum(axis=1, keepdims=True)


def _near(Pi, rows_of_Pi, u):
    """Delta's rows where every |u_il| <= 1/2: Delta_ij = Pi_ij (u_ij - ubar_i) / Z_i, Z_i = 1 + ubar_i in [1/2, 3/2]
    (the rows of Pi sum to 1), and u_ij - ubar_i = (1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il: the term l = j
    enters once, not twice as in u_ij - ubar_i; the sums leaving one term out come from prefix and suffix sums (O(n^2),
    no cancellation), the prefix sums' last the whole ubar_i.  rows_of_Pi: Pi's rows, or its one row when all are
    the same (1 - Pi_ij then made once a column)."""
    weighted = Pi * u
    prefix = np.cumsum(weighted, axis=1)
    zero = weighted[:, :1] * 0
    before = np.concatenate([zero, prefix[:, :-1]], axis=1)
    after = np.concatenate([np.cumsum(weighted[:, ::-1], axis=1)[:, ::-1][:, 1:], zero], axis=1)
    return Pi * ((1 - rows_of_Pi) * u - (before + after)) / (1 + prefix[:, -1:])


def _far(ar, Pi, shifted, mask):
    """Delta's rows farther from consensus: P - Pi, P = Pi exp(q - sigma) / Z with Z_i = sum_l Pi_il exp(q_il - sigma_i),
    a sum of positive terms (no cancellation even where the quadratic and the column terms pull apart)."""
    exponentials = _on_mask(ar.exp, shifted, mask)
    Z = (Pi * exponentials).sum(axis=1, keepdims=True)
    return Pi * exponentials / Z - Pi


def _on_mask(function, x, mask):
    """function of x's entries on the mask, exact zeros elsewhere (a sliding window's rows: its width of them)."""
    if mask.all():
        return function(x)
    out = x * 0
    out[mask] = function(x[mask])
    return out


def _column_and_quadratic(ar, arrays: LayerArrays, X: Centred):
    """k = A^T c and q = E A E^T (module docstring, scores); a head of W_Q and W_K through W_K (W_Q^T c) and
    (E W_Q)(E W_K)^T, scaled, without forming the d x d matrix A (at 128 x 384 with d_k = 32, E A E^T took seven
    times the products)."""
    if arrays.A is not None:
        return ar.matmul(arrays.A.T, X.c), ar.matmul(ar.matmul(X.E, arrays.A), X.E.T)
    k = ar.matmul(arrays.W_K, ar.matmul(arrays.W_Q.T, X.c)) * arrays.score_scale
    q = ar.matmul(ar.matmul(X.E, arrays.W_Q), ar.matmul(X.E, arrays.W_K).T) * arrays.score_scale
    return k, q


def transport(ar, att: Attention, X: Centred) -> tuple[Centred, object]:
    """P X as 1 (c + delta)^T + E_PX (E_PX with zero column sums), and delta."""
    if att.complete:
        # Pi E = 1 (pi^T E): every row of Pi is pi.  Delta E needs no recentring: its rows sum to
        # zero up to terms of higher order, and subtracting their mean would double every radius.
        drift = ar.matmul(att.Pi[0], X.E)
        return Centred(X.c + drift, ar.matmul(att.Delta, X.E)), drift
    F = ar.matmul(att.Pi, X.E) + ar.matmul(att.Delta, X.E)
    drift = F.sum(axis=0) / ar.number(F.shape[0])
    return Centred(X.c + drift, F - drift), drift


def apply_layer(ar, layer: Layer, arrays: LayerArrays, X: Centred) -> Step:
    """One translation-equivariant layer (unsupported(layer) is None) in centred form."""
    att = attention(ar, arrays, X)
    PX, drift = transport(ar, att, X)
    if arrays.V is None:
        c, E = PX.c, PX.E
    else:
        c, E = ar.matmul(arrays.V, PX.c), ar.matmul(PX.E, arrays.V.T)  # E V^T keeps zero column sums
    if layer.residual:
        c, E = X.c + c, X.E + E
    return Step(attention=att, PX=PX, out=Centred(c, E), drift=drift)


def dobrushin(ar, att: Attention):
    """tau(P) = (1/2) max_{i,k} ||P_i - P_k||_1, from Delta (and Pi's differences when masked), over the pairs that
    can hold the largest (ar.difference_pairs: every pair, or of balls those a binary64 screen keeps,
    certify.core.arith.differences), in blocks of about quantities.PAIR_BLOCK entries (all n^3 / 2 differences at
    once were 1.5 GB at n = 256)."""

    def largest(i, k):
        difference = att.Delta[i, :] - att.Delta[k, :]
        if not att.complete:
            difference = difference + (att.Pi[i, :] - att.Pi[k, :])
        return ar.maximum(ar.abs(difference).sum(axis=-1))

    i, k = ar.difference_pairs(att.Delta, None if att.complete else att.Pi)
    blocks = [largest(a, b) for a, b in blocks_of(i, k, att.Delta.shape[-1], quantities.PAIR_BLOCK)]
    return (blocks[0] if len(blocks) == 1 else ar.maximum(ar.stack(blocks))) / 2
