"""float64 screening of a real model's layers: ||A_h||_2 and a D^2 per head, on one text.

This is a first look, not a certificate: the numbers come from float64 SVDs and distances.
The spectral norm uses the thin factors (certify.core.thin_norm.product_norm_estimate):
||W_Q W_K^T||_2 = ||R_1 R_2^T||_2 for the reduced QR factors, d_k x d_k instead of d x d.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from certify.core.arith import FLOAT64
from certify.studies.models.bert import AttentionHead, BertModel, ForwardTrace
from certify.core.thin_norm import product_norm_estimate
from certify.core.quantities import diameter


@dataclass(frozen=True)
class HeadScreen:
    """A head's float64 first look: estimates of a = ||A_h||_2 and of a D^2 (NOT certified)."""

    head: int
    a: float  # float64 estimate of ||A_h||_2
    a_D2: float  # a * D(X)^2, the exponent in collapse.global


@dataclass(frozen=True)
class LayerScreen:
    """A layer's float64 first look: its number of tokens, the diameter D entering it, and each head's screen."""

    layer: int
    n_tokens: int
    D: float  # float64 diameter of the configuration entering the layer
    heads: tuple[HeadScreen, ...]


def spectral_norm_estimate(head: AttentionHead) -> float:
    """float64 ||W_Q W_K^T / sqrt(d_k)||_2 through the reduced QR factors (see module doc)."""
    return product_norm_estimate(head.W_Q, head.W_K) / math.sqrt(head.d_k)


def screen(model: BertModel, trace: ForwardTrace) -> list[LayerScreen]:
    """Per layer: the tokens entering it, their diameter D, and per head a and a D^2."""
    rows = []
    for index, (layer, seen) in enumerate(zip(model.layers, trace.layers)):
        D = float(diameter(FLOAT64, seen.tokens_in))
        heads = []
        for h, head in enumerate(layer.heads):
            a = spectral_norm_estimate(head)
            heads.append(HeadScreen(head=h, a=a, a_D2=a * D * D))
        rows.append(LayerScreen(layer=index, n_tokens=seen.tokens_in.shape[0], D=D, heads=tuple(heads)))
    return rows
