"""Wu et al. (2024), Figures 1-3: the float64 simulations behind the figures.

Figure 1 (the N = 2 phase portrait) runs the generic layer formulas of certify.core.layers directly.
Figures 2 and 3 (mu(X_t) against depth) run vectorised numpy over a batch of inputs.

These are screening numerics, not certificates (certify.studies.wu.spot_check certifies one number per
figure with ball arithmetic).  Depth t counts layers: X_0 is the input, layer t maps X_t to
X_{t+1}, and mu(X) = ||X - 1 xbar^T||_F (docs/claims.md; certify.core.quantities in float64) is recorded
for t = 0..T.

Every layer of Figures 2 and 3 is a post-LN BERT encoder layer (certify.studies.models.bert: H heads,
value and output projections W_V, W_O, LayerNorms, a GELU feed-forward of width 4d), random or
pretrained, of which a variant keeps some parts:
    SAN             Y = Att(X)                   Att(X) = sum_h P_h (X W_V,h^T + b_V,h) W_O,h^T + b_O
    SAN+skip        Y = X + Att(X)
    SAN+LN          Y = LN(Att(X))               LN: the layer's own LayerNorm ("model") or, in the
    SAN+skip+LN     Y = LN(X + Att(X))           project setting and the variant SAN+LN(sphere),
    SAN+LN(sphere)  Y = x / ||x||_2 of Att(X)    Wu et al.'s x / ||x||_2 (sphere), token by token
    full            Y = LN_1(X + Att(X)), X' = LN_2(Y + FFN(Y))
with P_h the row softmax over the mask of S_h = (X W_Q,h + b_Q,h)(X W_K,h + b_K,h)^T / sqrt(d_QK),
d_QK = d_k (the standard scaling) in Figure 2, swept over {1/64, 1, 64} in Figure 3 (Wu et al.'s
convention; in the configuration schema beta = sqrt(d_k / d_QK), exact for d_k / d_QK a square).
The four masks of certify.core.masks: complete, causal, sliding (previous, self, next), uni
(previous, self).

Dropout (train mode, as a model built from a configuration runs in common frameworks): with rate
p > 0, inverted dropout (certify.core.layers.dropout) on every head's attention probabilities P_h,
on the attention sublayer's output Att(X) and on the feed-forward output FFN(Y), before the
residual; a fresh mask per layer and per run, from the seed.  p = 0 is eval mode.

Random initialisation: two settings (SETTINGS), tokens x_i ~ N(0, I_d) (a fresh X_0 per input),
every layer drawn independently (layer t from its own seed, so it can be rebuilt for the
certified spot check), all biases 0, LayerNorm gain 1, bias 0, eps 1e-12:
    bert     BERT's initialisation: H heads (d_k = d / H) with W_O; every weight ~ N(0, 0.02^2);
             SAN+LN and SAN+skip+LN use the standard LayerNorm, SAN+LN(sphere) the sphere one
    project  one head, d_k = d, no output projection (W_O = I); W_Q, W_K, W_V ~ N(0, 1/d),
             W_1 (4d x d) ~ N(0, 1/d), W_2 (d x 4d) ~ N(0, 1/(4d)); SAN+LN and SAN+skip+LN use
             the sphere LayerNorm (the LayerNorm of Wu et al.'s analysis), full the standard one.

Pretrained (Figure 2 second row): all-MiniLM-L6-v2 (certify.studies.models 'minilm': 6 layers, 12 heads,
d = 384, post-LN).  The inputs are [CLS] w_1 .. w_{N-2} [SEP] with word pieces w drawn uniformly
from the whole-word entries of its vocabulary, embedded by the model (X_0 = its embedding
output).  Layer t is the model's layer t mod 6: the six real layers, then repeated to reach depth
T (pretrained_layer_used says which layer and which pass made X_t), and every variant keeps that
layer's own parts (learned LayerNorm gains and biases).

The vectorised step is checked against the generic formulas of certify.core.layers (exact_step,
also used in ball arithmetic by the spot checks) and against certify.studies.models.bert.run_layer
(pretrained) in the tests.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
from threadpoolctl import ThreadpoolController

from certify.core import progress as progress_display
from certify.core.arith import FLOAT64
from certify.core.config import FeedForward, Layer, LayerNorm, exact_matrix, exact_vector
from certify.errors import BadInput
from certify.core.layers import (apply_layer, attention, dropout, feed_forward, layer_arrays, layernorm, softmax_rows,
                                 sphere_layernorm)
from certify.core.masks import named_mask
from certify.core.quantities import consensus_distance
from certify.studies.models.bert import AttentionHead, EncoderLayer
from certify.studies.models.bert import LayerNorm as ModelLayerNorm

MASKS = ("complete", "causal", "sliding", "uni")
D_QK_SWEEP = (Fraction(1, 64), Fraction(1), Fraction(64))
LN_EPS = 1e-12


@dataclass(frozen=True)
class Variant:
    """Which parts of an encoder layer a curve keeps: the residual connection, the LayerNorm after attention
    ("model", "sphere" or None) and the feed-forward sublayer (module docstring's table)."""
    name: str
    skip: bool  # the residual connection X + ...
    layernorm: str | None  # after the attention sublayer: "model" (the layer's own), "sphere" or None
    ffn: bool  # the feed-forward sublayer (only the full layer)


SAN = Variant("SAN", skip=False, layernorm=None, ffn=False)
SAN_SKIP = Variant("SAN+skip", skip=True, layernorm=None, ffn=False)
FULL = Variant("full", skip=True, layernorm="model", ffn=True)
SPHERE_LN = Variant("SAN+LN(sphere)", skip=False, layernorm="sphere", ffn=False)


def _ln_variants(kind: str) -> tuple[Variant, Variant]:
    return Variant("SAN+LN", skip=False, layernorm=kind, ffn=False), Variant("SAN+skip+LN", skip=True, layernorm=kind,
                                                                             ffn=False)


@dataclass(frozen=True)
class Setting:
    """How the random layers are built (see the module docstring)."""

    name: str
    initialisation: str  # in words, for the figure and the JSON
    bert_init: bool  # N(0, 0.02^2) with W_O; else N(0, 1/fan_in), one head, W_O = I
    variants: tuple[Variant, ...]
    dropout: float  # the default train-mode rate (a run also has the eval-mode curves)

    def std(self, fan_in: int) -> float:
        """The standard deviation of a random weight with this fan-in: 0.02 (BERT) or 1/sqrt(fan_in)."""
        return 0.02 if self.bert_init else 1 / math.sqrt(fan_in)


BERT = Setting("bert", "BERT: H heads with W_O, every weight ~ N(0, 0.02^2), biases 0, standard LayerNorm "
                       "(gain 1, bias 0, eps 1e-12); SAN+LN(sphere): x/||x||_2",
               True, (SAN, SAN_SKIP, *_ln_variants("model"), FULL, SPHERE_LN), dropout=0.1)
PROJECT = Setting("project", "one head, d_k = d, W_O = I; W_Q, W_K, W_V ~ N(0, 1/d), W_1 ~ N(0, 1/d), "
                             "W_2 ~ N(0, 1/(4d)), biases 0; SAN+LN, SAN+skip+LN: x/||x||_2 (sphere); "
                             "full: standard LayerNorm (gain 1, bias 0, eps 1e-12)",
                  False, (SAN, SAN_SKIP, *_ln_variants("sphere"), FULL), dropout=0.0)
SETTINGS = {s.name: s for s in (BERT, PROJECT)}
PRETRAINED_VARIANTS = (SAN, SAN_SKIP, *_ln_variants("model"), FULL, SPHERE_LN)


@dataclass(frozen=True)
class Size:
    """How big a run is: random-init tokens, width, heads, depth, inputs; the same for the pretrained row."""

    tokens: int
    d: int
    heads: int
    depth: int
    inputs: int
    pretrained_tokens: int
    pretrained_depth: int
    pretrained_inputs: int
    fig1_steps: int


# (setting, long) -> size.  bert --long is the paper's experiment: N = 128 tokens, BERT-base width
# (d = 768, 12 heads); its depth and inputs are what 15 minutes on two cores allow.
SIZES = {
    ("project", False): Size(16, 16, 1, 32, 12, 12, 12, 2, 30),
    ("project", True): Size(32, 64, 1, 128, 64, 64, 48, 8, 60),
    ("bert", False): Size(16, 64, 4, 32, 6, 12, 12, 2, 30),
    ("bert", True): Size(128, 768, 12, 64, 2, 128, 48, 2, 60),
}
DEFAULT_SETTING = {False: "project", True: "bert"}  # the default setting without and with --long


# ------------------------------------------------------------------ shared float64 pieces


def mask_matrix(name: str, n: int) -> np.ndarray:
    """The n x n boolean matrix of a named mask (certify.core.masks): entry [i, j] says whether query i
    attends to key j."""
    return np.array(named_mask(name, n), dtype=bool)


# ------------------------------------------------------------------ random initialisation


def random_layer(setting: Setting, d: int, heads: int, rng: np.random.Generator, ffn: bool = True) -> EncoderLayer:
    """One layer at random initialisation (the module docstring); without ffn the feed-forward
    weights are empty (the full variant is then not available)."""
    if d % heads:
        raise BadInput(f"d = {d} is not a multiple of the {heads} heads")
    d_k = d // heads

    def gaussian(fan_in, *shape):
        return rng.normal(scale=setting.std(fan_in), size=shape)

    def head() -> AttentionHead:
        W_Q, W_K, W_V = gaussian(d, d, d_k), gaussian(d, d, d_k), gaussian(d, d_k, d)
        W_O = gaussian(d, d, d_k) if setting.bert_init else np.eye(d)
        zero = np.zeros(d_k)
        return AttentionHead(W_Q=W_Q, b_Q=zero, W_K=W_K, b_K=zero, W_V=W_V, b_V=zero, W_O=W_O)

    if not setting.bert_init and heads != 1:
        raise BadInput("the project setting has one head")
    hidden = 4 * d if ffn else 0
    ln = ModelLayerNorm(gain=np.ones(d), bias=np.zeros(d), eps=LN_EPS)
    return EncoderLayer(heads=tuple(head() for _ in range(heads)), b_O=np.zeros(d), ln_attention=ln,
                        W_1=gaussian(d, hidden, d), b_1=np.zeros(hidden), W_2=gaussian(hidden or 1, d, hidden),
                        b_2=np.zeros(d), ln_ffn=ln)


@dataclass(frozen=True)
class RandomModel:
    """depth independent random layers; layer t is drawn from the seed [seed, 1, t] when asked for."""

    setting: Setting
    d: int
    heads: int
    depth: int
    seed: int
    ffn: bool = True

    def layer(self, t: int) -> EncoderLayer:
        """Layer t (0-based), drawn from the seed [seed, 1, t]: the same layer however many others were drawn
        before."""
        return random_layer(self.setting, self.d, self.heads, np.random.default_rng([self.seed, 1, t]), self.ffn)


def random_inputs(n: int, d: int, inputs: int, seed: int) -> np.ndarray:
    """The random inputs of Figures 2 and 3: an array (inputs, n, d) of N(0, 1) entries from the seed [seed,
    0]."""
    return np.random.default_rng([seed, 0]).normal(size=(inputs, n, d))


# ------------------------------------------------------------------ the vectorised layer


@dataclass(frozen=True)
class StackedLayer:
    """One encoder layer with its heads stacked, as contiguous right factors for batched products."""

    heads: int
    W_QKV: np.ndarray  # (d, 3 H d_k): [W_Q | W_K | W_V^T] of every head, side by side
    b_QKV: np.ndarray  # (3 H d_k,)
    W_O_T: np.ndarray  # (H d_k, d): the output projection, transposed
    source: EncoderLayer  # for b_O, the LayerNorms and the FFN


def stack_heads(layer: EncoderLayer) -> StackedLayer:
    """The layer with its heads stacked side by side (StackedLayer) for the batched float64 simulation."""
    heads = layer.heads
    columns = [h.W_Q for h in heads] + [h.W_K for h in heads] + [h.W_V.T for h in heads]
    biases = [h.b_Q for h in heads] + [h.b_K for h in heads] + [h.b_V for h in heads]
    return StackedLayer(heads=len(heads), W_QKV=np.ascontiguousarray(np.concatenate(columns, axis=1)),
                        b_QKV=np.concatenate(biases),
                        W_O_T=np.ascontiguousarray(np.concatenate([h.W_O for h in heads], axis=1).T), source=layer)


@functools.cache
def _blas_threads() -> ThreadpoolController:
    return ThreadpoolController()


def _one_blas_thread():
    return _blas_threads().limit(limits=1, user_api="blas")


def _dense(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """X (..., m) @ W (m, k) as one matrix product over all leading axes (much faster than numpy's
    stacked matmul for a batch of small matrices)."""
    return (X.reshape(-1, X.shape[-1]) @ W).reshape(*X.shape[:-1], W.shape[1])


def _split_heads(Z: np.ndarray, heads: int, transpose: bool = False) -> np.ndarray:
    """(B, n, H d_k) -> (B, H, n, d_k), or (B, H, d_k, n) when transposed; contiguous, because
    numpy's stacked matmul is many times slower on strided views."""
    B, n, width = Z.shape
    return np.ascontiguousarray(Z.reshape(B, n, heads, width // heads).transpose(0, 2, 3, 1) if transpose
                                else Z.reshape(B, n, heads, width // heads).transpose(0, 2, 1, 3))


@dataclass(frozen=True)
class Run:
    """One curve of a figure: a variant on a mask, in eval mode (dropout 0) or train mode."""

    variant: Variant
    mask: str
    dropout: float = 0.0
    d_qk: Fraction | None = None  # None: d_QK = d_k


def encoder_step(layer: StackedLayer, variant: Variant, mask: np.ndarray, X: np.ndarray,
                 d_qk: Fraction | None = None, p: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
    """The variant of one encoder layer on a batch X (B, n, d), with train-mode dropout p (module docstring)."""
    H = layer.heads
    Q, K, V = np.split(_dense(X, layer.W_QKV) + layer.b_QKV, 3, axis=-1)
    queries, keys_t, values = _split_heads(Q, H), _split_heads(K, H, transpose=True), _split_heads(V, H)
    scale = 1 / math.sqrt(queries.shape[-1] if d_qk is None else d_qk)
    P = softmax_rows(FLOAT64, queries @ keys_t * scale, mask)
    mixed = dropout(P, p, rng) @ values  # (B, H, n, d_k)
    B, _, n, _ = mixed.shape
    Y = dropout(_dense(mixed.transpose(0, 2, 1, 3).reshape(B, n, -1), layer.W_O_T) + layer.source.b_O, p, rng)
    if variant.skip:
        Y = X + Y
    if variant.layernorm == "sphere":
        Y = sphere_layernorm(FLOAT64, Y)
    elif variant.layernorm == "model":
        Y = layer.source.ln_attention(Y)
    if variant.ffn:
        hidden = layer.source.feed_forward(Y.reshape(-1, Y.shape[-1])).reshape(Y.shape)  # one product, as _dense
        Y = layer.source.ln_ffn(Y + dropout(hidden, p, rng))
    return Y


def simulate(layer_at: Callable[[int], StackedLayer], depth: int, runs: list[Run], X0: np.ndarray, seed: int,
             progress: bool | None = None, label: str = "") -> dict[Run, np.ndarray]:
    """mu(X_t), t = 0..depth, for every run: {run: (depth + 1, inputs)}.  Layer by layer (each
    layer built once for all runs); run i draws its dropout masks from the seed [seed, 2, i]."""
    masks = {m: mask_matrix(m, X0.shape[-2]) for m in {run.mask for run in runs}}
    rngs = [np.random.default_rng([seed, 2, i]) for i in range(len(runs))]
    states = [X0] * len(runs)
    mus = [[consensus_distance(FLOAT64, X0)] for _ in runs]
    # One BLAS thread: the B H per-head products are small, and threading them costs far more
    # than it saves (on a shared machine, many times more); the large products lose little.
    with np.errstate(under="ignore", over="ignore", invalid="ignore"), _one_blas_thread(), \
            progress_display.bar(total=depth * len(runs), desc=label, unit="layer", show=progress) as bar:
        for t in range(depth):
            layer = layer_at(t)
            for i, run in enumerate(runs):
                states[i] = encoder_step(layer, run.variant, masks[run.mask], states[i], run.d_qk, run.dropout, rngs[i])
                mus[i].append(consensus_distance(FLOAT64, states[i]))
                bar.update()
    return {run: np.array(mu) for run, mu in zip(runs, mus)}


def pretrained_layer_used(t: int, layers: int) -> str:
    """Which real layer made X_t (t >= 1) when the model's layers are repeated to reach depth."""
    if t == 0:
        return "input"
    return f"layer {(t - 1) % layers + 1} of {layers}, pass {(t - 1) // layers + 1}"


def pretrained_inputs(text_model, n: int, inputs: int, rng: np.random.Generator) -> np.ndarray:
    """Embedded random sequences [CLS] w_1 .. w_{n-2} [SEP] of whole-word vocabulary entries."""
    tokenizer = text_model.tokenizer
    words = sorted(i for token, i in tokenizer.get_vocab().items() if token.isalpha() and token.isascii())
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    if cls is None or sep is None or not words:
        raise BadInput("the model's vocabulary has no [CLS], [SEP] or whole words")
    ids = [[cls, *rng.choice(words, size=n - 2), sep] for _ in range(inputs)]
    return np.stack([text_model.model.embed(np.array(row)) for row in ids])


# ------------------------------------------------------------------ the same layer, exactly


def score_beta(d_k: int, d_qk: Fraction | None) -> Fraction:
    """beta with beta / sqrt(d_k) = 1 / sqrt(d_QK), exactly: beta = sqrt(d_k / d_QK)."""
    if d_qk is None:
        return Fraction(1)
    ratio = Fraction(d_k) / Fraction(d_qk)
    num, den = math.isqrt(ratio.numerator), math.isqrt(ratio.denominator)
    if num * num != ratio.numerator or den * den != ratio.denominator:
        raise BadInput(f"d_k / d_QK = {ratio} is not the square of a rational: choose d_k a perfect square")
    return Fraction(num, den)


def _exact_ln(ln: ModelLayerNorm) -> LayerNorm:
    return LayerNorm(position="post", kind="standard", gain=exact_vector(ln.gain), bias=exact_vector(ln.bias),
                     eps=Fraction(ln.eps))


def exact_step(layer: EncoderLayer, variant: Variant, mask_name: str, n: int,
               d_qk: Fraction | None = None) -> Callable:
    """The eval-mode variant of one layer as step(ar, X) -> X' through the generic formulas of
    certify.core.layers, the float64 weights read as exact rationals: one configuration Layer per
    head (V_h = W_O,h W_V,h, exact), their outputs summed; the constant W_O b_V + b_O is added once
    (every row of P_h sums to 1).  With the BALL backend this encloses the exact variant of the
    very layer encoder_step runs in float64."""
    mask = tuple(tuple(bool(v) for v in row) for row in named_mask(mask_name, n))
    heads = []
    for h in layer.heads:
        V = np.empty((layer.b_O.shape[0], h.W_V.shape[1]), dtype=object)
        W_O, W_V = exact_matrix(h.W_O), exact_matrix(h.W_V)
        for i, row in enumerate(W_O):  # V = W_O W_V in exact rationals
            for j in range(V.shape[1]):
                V[i, j] = sum(a * W_V[k][j] for k, a in enumerate(row))
        heads.append(Layer(d=V.shape[1], W_Q=exact_matrix(h.W_Q), W_K=exact_matrix(h.W_K), b_Q=exact_vector(h.b_Q),
                           b_K=exact_vector(h.b_K), d_k=h.d_k, beta=score_beta(h.d_k, d_qk),
                           V=tuple(map(tuple, V)), mask=mask))
    constant = sum((h.W_O @ h.b_V for h in layer.heads), layer.b_O)  # float64: exact when the biases are 0
    exact_constant = exact_vector(constant)
    ln_attention, ln_ffn = _exact_ln(layer.ln_attention), _exact_ln(layer.ln_ffn)
    ffn = FeedForward(W1=exact_matrix(layer.W_1), b1=exact_vector(layer.b_1), W2=exact_matrix(layer.W_2),
                      b2=exact_vector(layer.b_2), activation="gelu", residual=True) if variant.ffn else None

    def step(ar, X):
        Y = ar.array((exact_constant,))
        for head in heads:
            arrays = layer_arrays(ar, head, n)
            Y = Y + ar.matmul(ar.matmul(attention(ar, arrays, X), X), arrays.V.T)
        if variant.skip:
            Y = X + Y
        if variant.layernorm == "sphere":
            Y = sphere_layernorm(ar, Y)
        elif variant.layernorm == "model":
            Y = layernorm(ar, ln_attention, Y)
        if ffn is not None:
            Y = layernorm(ar, ln_ffn, feed_forward(ar, ffn, Y))
        return Y

    return step


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
