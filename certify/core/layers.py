"""The dynamical systems, written once and generic over the arithmetic backend `ar`.

Tokens are rows (docs/claims.md); softmax, LayerNorm, GELU and the attention formulas also
accept leading batch axes (float64: many configurations, or heads, at once).  These are the only
definitions of softmax, LayerNorm and GELU outside the checker: the models, the figures and the
screens call them with the Float64 backend.  One layer maps X to X':
    Z  = LN(X) if pre-LN else X
    P  = softmax over the allowed j of S_ij,  S = beta (Z W_Q + b_Q)(Z W_K + b_K)^T / sqrt(d_k)
         (or S = beta Z A Z^T)
    Y  = P Z V^T                       (V = I when no value matrix is given)
    Y  = X + Y                         with a residual connection
    Y  = LN(Y)                         post-LN
    Y  = f(Y)  or  Y + f(Y)            feed-forward, token-wise; then LN again when post-LN
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from certify.core.config import FeedForward, Layer, LayerNorm
from certify.errors import UndefinedLayer
from certify.core.numbers import columns, side_by_side


@dataclass
class LayerArrays:
    """A layer's data converted once into one backend's numbers (an attention head's, for the
    studies that take the weights of a real or sampled model)."""

    A: object | None  # beta * A, or None when given by W_Q, W_K
    W_Q: object | None
    W_K: object | None
    b_Q: object | None
    b_K: object | None
    score_scale: object  # beta / sqrt(d_k) for the W_Q, W_K form
    V: object | None
    mask: np.ndarray  # boolean n x n
    ffn: tuple | None = None  # (W1, b1, W2, b2) in the backend's numbers; None: converted from the layer's FFN
    # [W_Q | W_K] side by side, W_Q and W_K its two column blocks (layer_arrays), or None: the queries
    # and keys of the tokens in one product (arb's block product needs 64 columns or more; d_k = 32
    # alone takes its classical one, three times slower for both)
    W_QK: object | None = None

    @classmethod
    def bilinear(cls, A, mask: np.ndarray) -> LayerArrays:
        """Scores Z A Z^T (A already in the backend's numbers, beta included)."""
        return cls(A=A, W_Q=None, W_K=None, b_Q=None, b_K=None, score_scale=1, V=None, mask=mask)

    @classmethod
    def factored(cls, W_Q, W_K, score_scale, mask: np.ndarray, b_Q=None, b_K=None) -> LayerArrays:
        """Scores (Z W_Q + b_Q)(Z W_K + b_K)^T score_scale, no value matrix."""
        return cls(A=None, W_Q=W_Q, W_K=W_K, b_Q=b_Q, b_K=b_K, score_scale=score_scale, V=None, mask=mask)


@functools.lru_cache(maxsize=64)
def full_mask(n: int) -> np.ndarray:
    """Every token attends to every token (read-only, made once per n: every layer of every check has one)."""
    mask = np.ones((n, n), dtype=bool)
    mask.setflags(write=False)
    return mask


def layer_arrays(ar, layer: Layer, n: int) -> LayerArrays:
    """The layer's matrices in backend `ar`, with beta (and 1/sqrt(d_k)) folded into the scores, and its n x n mask."""
    mask = full_mask(n) if layer.mask is None else np.array(layer.mask, dtype=bool)
    beta = ar.number(layer.beta)
    V = None if layer.V is None else ar.array(layer.V)
    if layer.A is not None:
        A = ar.array(layer.A)  # times beta, unless beta is exactly 1 (the products keep A's converted form)
        return LayerArrays(A=A if layer.beta == 1 else A * beta, W_Q=None, W_K=None, b_Q=None, b_K=None,
                           score_scale=beta, V=V, mask=mask)
    scale = beta / ar.sqrt_nonneg(ar.number(layer.d_k))
    W_QK, k = ar.array(side_by_side(layer.W_Q, layer.W_K)), columns(layer.W_Q)
    return LayerArrays(
        A=None, W_Q=W_QK[..., :k], W_K=W_QK[..., k:],
        b_Q=None if layer.b_Q is None else ar.array(layer.b_Q),
        b_K=None if layer.b_K is None else ar.array(layer.b_K),
        score_scale=scale, V=V, mask=mask, W_QK=W_QK,
    )


def query_key_matrix(ar, arrays: LayerArrays):
    """A = beta W_Q W_K^T / sqrt(d_k) (or beta A): the matrix whose norm a = ||A||_2 enters the bounds."""
    if arrays.A is not None:
        return arrays.A
    return ar.matmul(arrays.W_Q, _transposed(arrays.W_K)) * arrays.score_scale


def _transposed(M):
    """M^T of the last two axes (a leading batch axis is kept)."""
    return np.swapaxes(M, -1, -2)


def scores(ar, arrays: LayerArrays, Z):
    """The attention scores z_i^T A z_j, or (W_Q^T z_i + b_Q)^T (W_K^T z_j + b_K) scaled, for every pair
    (batched over leading axes)."""
    if arrays.A is not None:
        return ar.product(Z, arrays.A, np.swapaxes(Z, -1, -2))
    if arrays.W_QK is not None:
        both, k = ar.matmul(Z, arrays.W_QK), arrays.W_Q.shape[-1]
        queries, keys = both[..., :k], both[..., k:]
    else:
        queries = ar.matmul(Z, arrays.W_Q)
        keys = ar.matmul(Z, arrays.W_K)
    if arrays.b_Q is not None:
        queries = queries + arrays.b_Q
    if arrays.b_K is not None:
        keys = keys + arrays.b_K
    return ar.matmul(queries, _transposed(keys)) * arrays.score_scale


def softmax_rows(ar, S, mask):
    """P_ij = exp(S_ij - m_i) / sum_{l allowed} exp(S_il - m_i), zero off the mask.

    m_i is an exact shift (softmax does not see it); masked entries are replaced by the shift
    before exp so that nothing overflows, then multiplied by an exact 0.
    """
    shift = ar.row_shift(S, mask)[..., None]
    if mask.all():  # no mask: nothing to replace and nothing to zero (2 n^2 operations fewer)
        weights = ar.exp(S - shift)
    else:
        weights = ar.exp(np.where(mask, S - shift, S * 0)) * mask
    return weights / weights.sum(axis=-1, keepdims=True)


def attention(ar, arrays: LayerArrays, Z):
    """The attention matrix P: the masked row softmax of the scores of Z."""
    return softmax_rows(ar, scores(ar, arrays, Z), arrays.mask)


def sphere_layernorm(ar, Y, where: str = "LayerNorm"):
    """LN(x) = x / ||x||_2 on every token (Wu et al.'s LayerNorm); `where` names it in UndefinedLayer."""
    squared_norms = (Y * Y).sum(axis=-1, keepdims=True)
    _divisors_not_zero(ar, squared_norms, where, "its norm is exactly 0")
    return Y / ar.sqrt_nonneg(squared_norms)


def standard_layernorm(ar, Y, eps, gain=None, bias=None, where: str = "LayerNorm"):
    """LN(x) = gain (x - mean(x)) / sqrt(var(x) + eps) + bias on every token, with the biased
    variance (as PyTorch); no gain and bias is LayerNorm at initialisation (gain 1, bias 0).  `where` names it in
    UndefinedLayer."""
    d = Y.shape[-1]
    centred = Y - Y.sum(axis=-1, keepdims=True) / d
    variance = (centred * centred).sum(axis=-1, keepdims=True) / d
    squared_scales = variance + eps
    # an exact 0 is a variance of exactly 0 with eps 0 (eps >= 0: certify.core.config)
    _divisors_not_zero(ar, squared_scales, where, "its variance is exactly 0 and eps is 0")
    out = centred / ar.sqrt_nonneg(squared_scales)
    if gain is not None:
        out = out * gain
    return out if bias is None else out + bias


def _divisors_not_zero(ar, squared_divisors, where: str, cause: str) -> None:
    """UndefinedLayer where a token's squared divisor is certainly the exact number 0 (ar.first_zero: a ball of
    radius 0, never one that merely holds 0; float64 certifies nothing).  Its LayerNorm is then 0/0 whatever the
    precision: without this the ball pass climbed every rung to the cap on nan enclosures."""
    token = ar.first_zero(squared_divisors[..., 0])
    if token is not None:
        raise UndefinedLayer(f"{where} of token {token} is undefined: {cause}")


def layernorm(ar, spec: LayerNorm, Y):
    """Token-wise LayerNorm of a configuration's kind: the sphere projection or the standard one."""
    where = f"the {spec.position} LayerNorm"
    if spec.kind == "sphere":
        return sphere_layernorm(ar, Y, where)
    return standard_layernorm(ar, Y, ar.number(spec.eps), ar.array(spec.gain), ar.array(spec.bias), where)


def gelu(ar, x):
    """GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2, the exact (erf) form."""
    return x * (1 + ar.erf(x / ar.sqrt_nonneg(ar.number(2)))) / 2


def ffn_weights(ar, spec: FeedForward) -> tuple:
    """(W1, b1, W2, b2) of an FFN in the backend's numbers."""
    return ar.array(spec.W1), ar.array(spec.b1), ar.array(spec.W2), ar.array(spec.b2)


def feed_forward(ar, spec: FeedForward, Y, weights: tuple | None = None):
    """The token-wise MLP W2 s(W1 y + b1) + b2 on every row of Y (plus Y when residual); the weights
    as ffn_weights gives them (converted here when None)."""
    W1, b1, W2, b2 = weights or ffn_weights(ar, spec)
    hidden = ar.matmul(Y, _transposed(W1)) + b1
    hidden = ar.relu(hidden) if spec.activation == "relu" else gelu(ar, hidden)
    out = ar.matmul(hidden, _transposed(W2)) + b2
    return Y + out if spec.residual else out


def dropout(X: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """Train-mode (inverted) dropout in float64: every entry is zeroed with probability p, the
    others scaled by 1 / (1 - p), so that the expectation is X (as in common frameworks)."""
    if p == 0:
        return X
    return X * (rng.random(X.shape) >= p) / (1 - p)


@dataclass
class Step:
    """One layer applied: its attention matrix and its output."""

    P: object
    out: object
    PX: object  # P Z, before the value matrix, residual and the rest


def apply_layer(ar, layer: Layer, X, arrays: LayerArrays | None = None, translated=None) -> Step:
    """One layer on tokens X: LayerNorm (pre), attention P, P X, V, residual, FFN, LayerNorm (post); the Step
    keeps P and P X.

    `translated`: the tokens E = X - 1 c^T for an exact vector c (certify.core.centred.centre), for a
    layer without LayerNorm or FFN.  P is still computed from X, and P X and the output from E: as the
    rows of P sum to 1, they are the true ones translated by -c (-V c, -(c + V c) with a residual), so
    every diameter is the same, and near consensus their enclosures stay of the size of E, not of c."""
    arrays = arrays or layer_arrays(ar, layer, X.shape[0])
    ln = layer.layernorm
    if translated is not None and (ln is not None or layer.ffn is not None):
        raise ValueError("only a translation-equivariant layer (no LayerNorm or FFN) takes translated tokens")
    Z = layernorm(ar, ln, X) if ln is not None and ln.position == "pre" else X
    P = attention(ar, arrays, Z)
    values = Z if translated is None else translated
    PX = ar.matmul(P, values)
    Y = PX if arrays.V is None else ar.matmul(PX, _transposed(arrays.V))
    if layer.residual:  # the skip carries X itself, not LN(X): X' = X + P LN(X) V^T when pre-LN
        Y = (X if translated is None else translated) + Y
    post = ln is not None and ln.position == "post"
    if post:
        Y = layernorm(ar, ln, Y)
    if layer.ffn is not None:
        Y = feed_forward(ar, layer.ffn, Y, arrays.ffn)
        if post:
            Y = layernorm(ar, ln, Y)
    return Step(P=P, out=Y, PX=PX)
