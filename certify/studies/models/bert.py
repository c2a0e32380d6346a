"""A BERT-style encoder in float64 numpy, in the conventions of docs/claims.md.

Tokens are rows: X in R^{n x d}.  One encoder layer (post-LN, as in BERT) is

    Y   = LN_1(X + sum_h P_h (X W_V,h^T + 1 b_V,h^T) W_O,h^T + 1 b_O^T)
    X'  = LN_2(Y + GELU(Y W_1^T + 1 b_1^T) W_2^T + 1 b_2^T)

with, for head h, scores S_ij = q_i^T k_j / sqrt(d_k), q_i = W_Q,h^T x_i + b_Q,h,
k_j = W_K,h^T x_j + b_K,h (W_Q,h, W_K,h in R^{d x d_k}, as in docs/claims.md), P_h = softmax of the
rows of S over the unmasked keys, v_j = W_V,h x_j + b_V,h (W_V,h in R^{d_k x d}) and W_O,h in
R^{d x d_k} the head's columns of the output projection.  LN is the real LayerNorm
g * (x - mean) / sqrt(var + eps) + b, GELU the exact erf form (both from certify.core.layers).

The forward pass records what the analysis of a layer needs: the tokens entering each layer, the
attention matrix of every head and the layer's output.  Everything here is float64 screening;
certified statements are made elsewhere, from the parameters these classes hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from certify.core.layers import gelu, softmax_rows, standard_layernorm
from certify.core.arith import FLOAT64
from certify.errors import BadInput


@dataclass(frozen=True)
class BertConfig:
    """The shape of a BERT encoder, read from its config.json."""

    n_layers: int
    n_heads: int
    d: int  # hidden size
    d_ff: int  # intermediate (feed-forward) size
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float

    @property
    def d_k(self) -> int:
        """The size of a head's queries and keys: d / n_heads."""
        return self.d // self.n_heads


@dataclass(frozen=True)
class LayerNorm:
    """LN(x) = gain * (x - mean(x)) / sqrt(var(x) + eps) + bias, per token (row)."""

    gain: np.ndarray  # (d,)
    bias: np.ndarray  # (d,)
    eps: float

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return standard_layernorm(FLOAT64, X, self.eps, self.gain, self.bias)


@dataclass(frozen=True)
class AttentionHead:
    """One head's parameters.  Query and key follow docs/claims.md (d x d_k, applied transposed);
    value and output act on tokens as column vectors (the PyTorch Linear layout)."""

    W_Q: np.ndarray  # (d, d_k): q_i = W_Q^T x_i + b_Q
    b_Q: np.ndarray  # (d_k,)
    W_K: np.ndarray  # (d, d_k): k_j = W_K^T x_j + b_K
    b_K: np.ndarray  # (d_k,)
    W_V: np.ndarray  # (d_k, d): v_j = W_V x_j + b_V
    b_V: np.ndarray  # (d_k,)
    W_O: np.ndarray  # (d, d_k): this head's columns of the output projection

    @property
    def d_k(self) -> int:
        """The size of this head's queries and keys (the columns of W_Q)."""
        return self.W_Q.shape[1]

    def query_key_matrix(self) -> np.ndarray:
        """A_h = W_Q W_K^T / sqrt(d_k) (d x d): S_ij = x_i^T A_h x_j + u^T x_j (key_bias_direction) + terms
        of i alone, which P ignores (u^T x_j it does not: it cancels only in P_ij / P_kj)."""
        return self.W_Q @ self.W_K.T / math.sqrt(self.d_k)

    def key_bias_direction(self) -> np.ndarray:
        """u = W_K b_Q / sqrt(d_k): the score term u^T x_j shared by every row i (docs/claims.md)."""
        return self.W_K @ self.b_Q / math.sqrt(self.d_k)

    def value_output_matrix(self) -> np.ndarray:
        """V_h = W_O W_V (d x d): the head adds P_h X V_h^T (plus the constant W_O b_V)."""
        return self.W_O @ self.W_V

    def scores(self, X: np.ndarray) -> np.ndarray:
        """S = Q K^T / sqrt(d_k) with the biases, n x n."""
        queries = X @ self.W_Q + self.b_Q
        keys = X @ self.W_K + self.b_K
        return queries @ keys.T / math.sqrt(self.d_k)

    def attention(self, X: np.ndarray, key_mask: np.ndarray | None = None) -> np.ndarray:
        """P: the row softmax of the scores over the keys j with key_mask[j] true."""
        S = self.scores(X)
        keys = np.ones(S.shape[-1], dtype=bool) if key_mask is None else key_mask
        return softmax_rows(FLOAT64, S, np.broadcast_to(keys, S.shape))

    def output(self, X: np.ndarray, P: np.ndarray) -> np.ndarray:
        """This head's contribution to the attention sublayer, before the output bias."""
        values = X @ self.W_V.T + self.b_V
        return P @ values @ self.W_O.T


@dataclass(frozen=True)
class EncoderLayer:
    """One post-LayerNorm encoder layer's parameters: its heads, the output bias, the feed-forward
    network and both LayerNorms (X' = LN_2(Y + FFN(Y)), Y = LN_1(X + attention sublayer))."""

    heads: tuple[AttentionHead, ...]
    b_O: np.ndarray  # (d,) bias of the output projection (shared by the heads)
    ln_attention: LayerNorm  # after the attention residual
    W_1: np.ndarray  # (d_ff, d): hidden = GELU(W_1 y + b_1)
    b_1: np.ndarray  # (d_ff,)
    W_2: np.ndarray  # (d, d_ff): f(y) = W_2 hidden + b_2
    b_2: np.ndarray  # (d,)
    ln_ffn: LayerNorm  # after the feed-forward residual

    def feed_forward(self, Y: np.ndarray) -> np.ndarray:
        """FFN(Y) = GELU(Y W_1^T + b_1) W_2^T + b_2 on the tokens (rows) of Y, in float64."""
        return gelu(FLOAT64, Y @ self.W_1.T + self.b_1) @ self.W_2.T + self.b_2


@dataclass(frozen=True)
class Embeddings:
    """The embedding tables (word, position, token type) and the LayerNorm applied to their sum."""

    word: np.ndarray  # (vocab_size, d)
    position: np.ndarray  # (max_positions, d)
    token_type: np.ndarray  # (type_vocab_size, d)
    layer_norm: LayerNorm


@dataclass(frozen=True)
class LayerTrace:
    """What one layer saw and did on one token sequence."""

    tokens_in: np.ndarray  # (n, d): the configuration X entering the layer
    attention: np.ndarray  # (n_heads, n, n): P_h, rows sum to 1 over the unmasked keys
    after_attention: np.ndarray  # (n, d): Y = LN_1(X + attention sublayer)
    tokens_out: np.ndarray  # (n, d): X' = LN_2(Y + FFN(Y)), the next layer's input


@dataclass(frozen=True)
class ForwardTrace:
    """A forward pass on one token sequence: its ids, which tokens are keys, and every layer's trace."""

    input_ids: np.ndarray  # (n,)
    attention_mask: np.ndarray  # (n,) of 0/1: which tokens are keys (and are pooled)
    layers: tuple[LayerTrace, ...]

    @property
    def hidden_states(self) -> np.ndarray:
        """The encoder's output, (n, d)."""
        return self.layers[-1].tokens_out


@dataclass(frozen=True)
class BertModel:
    """A BERT encoder's weights as float64 arrays (embeddings, layers) with its shape and source; it runs
    the forward pass whose configurations certify.studies.models.certified then certifies."""

    config: BertConfig
    embeddings: Embeddings
    layers: tuple[EncoderLayer, ...]
    source: str  # where the weights were read from, for reports

    def head(self, layer: int, head: int) -> AttentionHead:
        """The parameters of head `head` of layer `layer` (both from 0)."""
        return self.layers[layer].heads[head]

    def checked_input(self, input_ids: np.ndarray,
                      token_type_ids: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The token ids and token type ids (zeros by default) as int64 arrays, or BadInput unless the model can
        embed them: a sequence of 1 to max_positions ids in its vocabulary, and as many types in its range."""
        ids = np.asarray(input_ids, dtype=np.int64)
        n = ids.shape[0] if ids.ndim == 1 else -1
        if n < 1:
            raise BadInput("the input must be a non-empty 1-d sequence of token ids")
        if n > self.config.max_positions:
            raise BadInput(f"{n} tokens is more than the model's {self.config.max_positions} positions")
        if ids.min() < 0 or ids.max() >= self.config.vocab_size:
            raise BadInput(f"token ids must lie in [0, {self.config.vocab_size})")
        types = np.zeros(n, dtype=np.int64) if token_type_ids is None else np.asarray(token_type_ids)
        if types.shape != (n,) or types.min() < 0 or types.max() >= self.config.type_vocab_size:
            raise BadInput(f"token type ids must be {n} values in [0, {self.config.type_vocab_size})")
        return ids, types

    def embed(self, input_ids: np.ndarray, token_type_ids: np.ndarray | None = None) -> np.ndarray:
        """X_0 = LN(word + position + token type embeddings), (n, d)."""
        ids, types = self.checked_input(input_ids, token_type_ids)
        n = ids.shape[0]
        e = self.embeddings
        return _float64_step(lambda: e.layer_norm(e.word[ids] + e.position[:n] + e.token_type[types]),
                             "in the embeddings")

    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray | None = None,
        token_type_ids: np.ndarray | None = None,
    ) -> ForwardTrace:
        """Run the encoder on one sequence; attention_mask (default all ones) marks the tokens
        that may be attended to; masked tokens still get outputs, as in BERT."""
        X = self.embed(input_ids, token_type_ids)
        n = X.shape[0]
        mask = np.ones(n, dtype=np.int64) if attention_mask is None else np.asarray(attention_mask)
        if mask.shape != (n,) or not np.isin(mask, (0, 1)).all() or not mask.any():
            raise BadInput(f"the attention mask must be {n} values 0/1, not all 0")
        keys = mask.astype(bool)
        traces = []
        for index, layer in enumerate(self.layers):
            trace = _float64_step(lambda: run_layer(layer, X, keys), f"in layer {index}")
            traces.append(trace)
            X = trace.tokens_out
        return ForwardTrace(np.asarray(input_ids, dtype=np.int64), mask, tuple(traces))


def run_layer(layer: EncoderLayer, X: np.ndarray, key_mask: np.ndarray | None = None) -> LayerTrace:
    """One post-LN encoder layer on the configuration X (n x d)."""
    P = np.stack([head.attention(X, key_mask) for head in layer.heads])
    attended = sum(head.output(X, P_h) for head, P_h in zip(layer.heads, P)) + layer.b_O
    Y = layer.ln_attention(X + attended)
    out = layer.ln_ffn(Y + layer.feed_forward(Y))
    return LayerTrace(tokens_in=X, attention=P, after_attention=Y, tokens_out=out)


def _float64_step(compute, where: str):
    """compute() with float64 overflow, invalid operations and division by zero refused as bad input:
    huge (finite) weights made the forward pass produce inf and NaN tokens (internal errors in the
    analysis) or flatten a token through an infinite variance, and the analysis certified statements
    about such tokens as if they were the model's."""
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            out = compute()
    except FloatingPointError:
        out = None
    arrays = [] if out is None else [out] if isinstance(out, np.ndarray) else [out.attention, out.after_attention,
                                                                                 out.tokens_out]  # fmt: skip
    if out is None or not all(np.isfinite(a).all() for a in arrays):  # matmul may overflow without raising
        raise BadInput(f"the float64 forward pass overflows {where}: the weights are too large for it")
    return out


def mean_pool(hidden_states: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """The mean of the unmasked tokens (sentence-transformers' mean pooling)."""
    weights = np.asarray(attention_mask, dtype=np.float64)
    return weights @ hidden_states / weights.sum()


def sentence_embedding(trace: ForwardTrace) -> np.ndarray:
    """Mean pooling then L2 normalisation: the sentence vector of all-MiniLM-L6-v2 and kin."""
    pooled = mean_pool(trace.hidden_states, trace.attention_mask)
    return pooled / max(np.linalg.norm(pooled), 1e-12)  # the floor of torch's F.normalize

