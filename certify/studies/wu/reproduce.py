"""Wu et al. (2024), Figures 1-3: the float64 simulations behind the figures.

Figure 1 (the N = 2 phase portrait) runs the generic layer formulas of certify.core.layers directly.
Figures 2 and 3 (mu(X_t) against depth) run vectorised numpy over a batch of inputs.

These are screening numerics, not certificates (certify.studies.wu.spot_check certifies one number per
figure with ball arithmetic).  Depth t counts layers: X_0 is the input, layer t maps X_t to
X_{t+1}, and mu(X) = ||X - 1 xbar^T||_F (CLAIMS.md; certify.core.quantities in float64) is recorded
for t = 0..T.

Random initialisation (Figure 2 first row, Figure 3).  One model of T layers is drawn per seed,
every layer independently, and run on many inputs:
    tokens     x_i ~ N(0, I_d), i = 1..N, independent (a fresh X_0 per input)
    attention  one head, d_k = d; W_Q, W_K, W_V ~ N(0, 1/d) entrywise (d x d)
               S = (X W_Q)(X W_K)^T / sqrt(d_QK), P = the row softmax of S over the mask;
               d_QK = d_k in Figure 2 (the standard scaling), swept over {1/64, 1, 64} in Figure 3
               (in the configuration schema: beta = sqrt(d_k / d_QK), exact for d a square).
    FFN        f(y) = W_2 GELU(W_1 y), W_1 (4d x d) ~ N(0, 1/d), W_2 (d x 4d) ~ N(0, 1/(4d)), no bias
The five variants (Wu et al. write X W_V; in CLAIMS.md that is V = W_V^T):
    SAN          X' = P X W_V
    SAN+skip     X' = X + P X W_V
    SAN+LN       X' = LN(P X W_V)                with LN(x) = x / ||x||_2, the LayerNorm of their
    SAN+skip+LN  X' = LN(X + P X W_V)            analysis (sphere), row by row
    full         Y = LN_s(X + P X W_V), X' = LN_s(Y + f(Y)): a BERT layer at initialisation, with
                 the standard LN_s(x) = (x - mean(x)) / sqrt(var(x) + 1e-12) (gain 1, bias 0)
The four masks of certify.core.masks: complete, causal, sliding (previous, self, next), uni
(previous, self).

Pretrained (Figure 2 second row): all-MiniLM-L6-v2 (certify.studies.models 'minilm': 6 layers, 12 heads,
d = 384, post-LN).  The inputs are [CLS] w_1 .. w_{N-2} [SEP] with word pieces w drawn uniformly
from the whole-word entries of its vocabulary, embedded by the model (X_0 = its embedding
output).  Layer t is the model's layer t mod 6 (the six real layers, then repeated to reach depth
T), and every variant keeps that layer's own parts: SAN = its attention sublayer (12 heads with
their value, output projection and biases, on the chosen mask), +skip its residual, +LN its first
LayerNorm (learned gain and bias), full = the whole encoder layer (both LayerNorms and its FFN).

The vectorised steps here are checked against the generic formulas of certify.core.layers (random
init, through exact_layer) and against certify.studies.models.bert.run_layer (pretrained) in the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from certify.core.arith import FLOAT64
from certify.core.config import FeedForward, Layer, LayerNorm
from certify.errors import BadInput
from certify.core.layers import apply_layer, gelu, layer_arrays, softmax_rows, sphere_layernorm, standard_layernorm
from certify.core.masks import named_mask
from certify.studies.models.bert import EncoderLayer
from certify.core.quantities import consensus_distance

MASKS = ("complete", "causal", "sliding", "uni")
D_QK_SWEEP = (Fraction(1, 64), Fraction(1), Fraction(64))
STANDARD_LN_EPS = Fraction(1, 10**12)


@dataclass(frozen=True)
class Variant:
    name: str
    skip: bool  # the residual connection X + ...
    layernorm: bool  # post-LN (sphere at random init, the model's own when pretrained)
    ffn: bool  # the feed-forward sublayer (only the full layer)


VARIANTS = (
    Variant("SAN", skip=False, layernorm=False, ffn=False),
    Variant("SAN+skip", skip=True, layernorm=False, ffn=False),
    Variant("SAN+LN", skip=False, layernorm=True, ffn=False),
    Variant("SAN+skip+LN", skip=True, layernorm=True, ffn=False),
    Variant("full", skip=True, layernorm=True, ffn=True),
)
VARIANT_BY_NAME = {v.name: v for v in VARIANTS}


@dataclass(frozen=True)
class Size:
    """How big a run is: random-init tokens, width, depth, inputs; the same for the pretrained row."""

    tokens: int
    d: int
    depth: int
    inputs: int
    pretrained_tokens: int
    pretrained_depth: int
    pretrained_inputs: int
    fig1_steps: int


CI = Size(tokens=16, d=16, depth=32, inputs=12, pretrained_tokens=16, pretrained_depth=12, pretrained_inputs=4,
          fig1_steps=30)
LONG = Size(tokens=32, d=64, depth=128, inputs=64, pretrained_tokens=64, pretrained_depth=48, pretrained_inputs=8,
            fig1_steps=60)


# ------------------------------------------------------------------ shared float64 pieces


def mask_matrix(name: str, n: int) -> np.ndarray:
    return np.array(named_mask(name, n), dtype=bool)


# ------------------------------------------------------------------ random initialisation


@dataclass(frozen=True)
class RandomModel:
    """T independent layers at random initialisation (see the module docstring)."""

    W_Q: np.ndarray  # (T, d, d)
    W_K: np.ndarray  # (T, d, d)
    W_V: np.ndarray  # (T, d, d), acting as X W_V
    W_1: np.ndarray  # (T, 4d, d)
    W_2: np.ndarray  # (T, d, 4d)

    @property
    def depth(self) -> int:
        return self.W_Q.shape[0]

    @property
    def d(self) -> int:
        return self.W_Q.shape[1]


def random_model(d: int, depth: int, rng: np.random.Generator) -> RandomModel:
    def gaussian(variance, *shape):
        return rng.normal(scale=math.sqrt(variance), size=(depth, *shape))

    return RandomModel(W_Q=gaussian(1 / d, d, d), W_K=gaussian(1 / d, d, d), W_V=gaussian(1 / d, d, d),
                       W_1=gaussian(1 / d, 4 * d, d), W_2=gaussian(1 / (4 * d), d, 4 * d))


def random_inputs(n: int, d: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(size=(inputs, n, d))


def random_step(model: RandomModel, t: int, variant: Variant, mask: np.ndarray, X: np.ndarray,
                d_qk: Fraction) -> np.ndarray:
    """Layer t of the model on a batch X (inputs, n, d)."""
    S = (X @ model.W_Q[t]) @ np.swapaxes(X @ model.W_K[t], -1, -2) / math.sqrt(d_qk)
    Y = softmax_rows(FLOAT64, S, mask) @ X @ model.W_V[t]
    if variant.skip:
        Y = X + Y
    if variant.ffn:
        eps = float(STANDARD_LN_EPS)  # LayerNorm at initialisation: gain 1, bias 0
        Y = standard_layernorm(FLOAT64, Y, eps)
        return standard_layernorm(FLOAT64, Y + gelu(FLOAT64, Y @ model.W_1[t].T) @ model.W_2[t].T, eps)
    return sphere_layernorm(FLOAT64, Y) if variant.layernorm else Y


def simulate_random(model: RandomModel, variant: Variant, mask_name: str, X0: np.ndarray,
                    d_qk: Fraction | None = None) -> np.ndarray:
    """mu(X_t) for t = 0..T, one column per input: shape (T + 1, inputs)."""
    d_qk = Fraction(model.d) if d_qk is None else d_qk
    mask = mask_matrix(mask_name, X0.shape[-2])
    X, mus = X0, [consensus_distance(FLOAT64, X0)]
    with np.errstate(under="ignore"):
        for t in range(model.depth):
            X = random_step(model, t, variant, mask, X, d_qk)
            mus.append(consensus_distance(FLOAT64, X))
    return np.array(mus)


def score_beta(d_k: int, d_qk: Fraction) -> Fraction:
    """beta with beta / sqrt(d_k) = 1 / sqrt(d_QK), exactly: beta = sqrt(d_k / d_QK)."""
    ratio = Fraction(d_k) / Fraction(d_qk)
    num, den = math.isqrt(ratio.numerator), math.isqrt(ratio.denominator)
    if num * num != ratio.numerator or den * den != ratio.denominator:
        raise BadInput(f"d_k / d_QK = {ratio} is not the square of a rational: choose d a perfect square")
    return Fraction(num, den)


def exact_matrix(matrix: np.ndarray) -> tuple:
    """A float64 matrix as exact Fractions (every float64 is a dyadic rational)."""
    return tuple(tuple(Fraction(float(v)) for v in row) for row in matrix)


def exact_layer(model: RandomModel, t: int, variant: Variant, mask_name: str, n: int,
                d_qk: Fraction | None = None) -> Layer:
    """Layer t as an exact certify.core.config.Layer: the generic formulas (and ball arithmetic) run
    the very same layer as random_step (same float64 weights, read as exact rationals)."""
    d = model.d
    d_qk = Fraction(d) if d_qk is None else d_qk
    ffn, layernorm = None, None
    if variant.ffn:
        hidden = model.W_1.shape[1]
        ffn = FeedForward(W1=exact_matrix(model.W_1[t]), b1=(Fraction(0),) * hidden,
                          W2=exact_matrix(model.W_2[t]), b2=(Fraction(0),) * d, activation="gelu", residual=True)
        layernorm = LayerNorm(position="post", kind="standard", gain=(Fraction(1),) * d,
                              bias=(Fraction(0),) * d, eps=STANDARD_LN_EPS)
    elif variant.layernorm:
        layernorm = LayerNorm(position="post", kind="sphere")
    mask = tuple(tuple(bool(v) for v in row) for row in named_mask(mask_name, n))
    return Layer(d=d, W_Q=exact_matrix(model.W_Q[t]), W_K=exact_matrix(model.W_K[t]), d_k=d,
                 beta=score_beta(d, d_qk), V=exact_matrix(model.W_V[t].T), mask=mask, residual=variant.skip,
                 ffn=ffn, layernorm=layernorm)


# ------------------------------------------------------------------ pretrained (certify.studies.models)


@dataclass(frozen=True)
class StackedLayer:
    """One encoder layer with its heads stacked, for batched products."""

    heads: int
    W_Q: np.ndarray  # (d, H d_k): the heads' W_Q side by side
    b_Q: np.ndarray
    W_K: np.ndarray
    b_K: np.ndarray
    W_V: np.ndarray  # (H d_k, d)
    b_V: np.ndarray
    W_O: np.ndarray  # (d, H d_k)
    source: EncoderLayer  # for b_O, the LayerNorms and the FFN


def stack_heads(layer: EncoderLayer) -> StackedLayer:
    heads = layer.heads
    return StackedLayer(
        heads=len(heads),
        W_Q=np.concatenate([h.W_Q for h in heads], axis=1), b_Q=np.concatenate([h.b_Q for h in heads]),
        W_K=np.concatenate([h.W_K for h in heads], axis=1), b_K=np.concatenate([h.b_K for h in heads]),
        W_V=np.concatenate([h.W_V for h in heads], axis=0), b_V=np.concatenate([h.b_V for h in heads]),
        W_O=np.concatenate([h.W_O for h in heads], axis=1), source=layer,
    )


def _split_heads(Z: np.ndarray, heads: int) -> np.ndarray:
    """(B, n, H d_k) -> (B, H, n, d_k)."""
    B, n, width = Z.shape
    return Z.reshape(B, n, heads, width // heads).transpose(0, 2, 1, 3)


def pretrained_step(layer: StackedLayer, variant: Variant, mask: np.ndarray, X: np.ndarray) -> np.ndarray:
    """The variant of one encoder layer on a batch X (B, n, d) (see the module docstring)."""
    H = layer.heads
    queries = _split_heads(X @ layer.W_Q + layer.b_Q, H)
    keys = _split_heads(X @ layer.W_K + layer.b_K, H)
    values = _split_heads(X @ layer.W_V.T + layer.b_V, H)
    S = queries @ np.swapaxes(keys, -1, -2) / math.sqrt(queries.shape[-1])
    mixed = softmax_rows(FLOAT64, S, mask) @ values  # (B, H, n, d_k)
    B, _, n, _ = mixed.shape
    Y = mixed.transpose(0, 2, 1, 3).reshape(B, n, -1) @ layer.W_O.T + layer.source.b_O
    if variant.skip:
        Y = X + Y
    if variant.layernorm:
        Y = layer.source.ln_attention(Y)
    if variant.ffn:
        Y = layer.source.ln_ffn(Y + layer.source.feed_forward(Y))
    return Y


def simulate_pretrained(layers: list[StackedLayer], variant: Variant, mask_name: str, X0: np.ndarray,
                        depth: int) -> np.ndarray:
    """mu(X_t), t = 0..depth, layer t = layers[t mod len(layers)]: shape (depth + 1, inputs)."""
    mask = mask_matrix(mask_name, X0.shape[-2])
    X, mus = X0, [consensus_distance(FLOAT64, X0)]
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        for t in range(depth):
            X = pretrained_step(layers[t % len(layers)], variant, mask, X)
            mus.append(consensus_distance(FLOAT64, X))
    return np.array(mus)


def pretrained_inputs(text_model, n: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    """Embedded random sequences [CLS] w_1 .. w_{n-2} [SEP] of whole-word vocabulary entries."""
    tokenizer = text_model.tokenizer
    words = sorted(i for token, i in tokenizer.get_vocab().items() if token.isalpha() and token.isascii())
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls is None or sep is None or not words:
        raise BadInput("the model's vocabulary has no [CLS], [SEP] or whole words")
    ids = [[cls, *rng.choice(words, size=n - 2), sep] for _ in range(inputs)]
    return np.stack([text_model.model.embed(np.array(row)) for row in ids])


# ------------------------------------------------------------------ Figure 1 (N = 2, d = 2)


def fig1_layer(w: Fraction, layernorm: bool) -> Layer:
    """Wu et al.'s Figure-1 layer: causal mask, W_Q = W_K = 0 (so P = [[1, 0], [1/2, 1/2]]),
    W_V = [[1, w], [0, 1]] acting as X W_V (V = W_V^T), and post-LN x / ||x|| when asked."""
    zero, one = Fraction(0), Fraction(1)
    return Layer(d=2, A=((zero, zero), (zero, zero)), V=((one, zero), (Fraction(w), one)),
                 mask=((True, False), (True, True)),
                 layernorm=LayerNorm(position="post", kind="sphere") if layernorm else None)


def fig1_trajectory(layer: Layer, X0: np.ndarray, steps: int) -> np.ndarray:
    """X_0, ..., X_steps of the two tokens under the generic layer formulas in float64: (steps + 1, 2, 2)."""
    arrays = layer_arrays(FLOAT64, layer, 2)
    X, path = np.asarray(X0, dtype=float), [np.asarray(X0, dtype=float)]
    for _ in range(steps):
        X = apply_layer(FLOAT64, layer, X, arrays).out
        path.append(X)
    return np.array(path)
