"""The certified analysis of a model on one text as a JSON-ready report (format below).

Every enclosure is {"ball": "[mid +/- rad]", "lower": float, "upper": float}: the ball string is
the certified statement; lower and upper are binary64 numbers rounded outward from its endpoints
(so lower <= exact <= upper still holds), null when not finite.  A gap exp(-a D^2) below the
binary64 range has lower 0.0 and upper the smallest subnormal: its ball and log10 say more.
The report is all that rendering needs: tables and plots are re-drawn from it without re-running.
"""

from __future__ import annotations

import dataclasses
import math

from flint import arb

from certify.engine.certificate import arb_text
from certify.engine import HOLDS, UNDECIDED, VIOLATED
from certify.core.float64_limits import GAP_UNDERFLOWS, GAP_UNDERFLOWS_LN2, ONE_MINUS_GAP_IS_ONE, ONE_MINUS_GAP_IS_ONE_LN2
from certify.studies.models.certified import HeadCertificate, LayerCertificate, regime_counts

FORMAT = "certify-model-report/1"
ARITHMETIC = ("arb ball arithmetic: every enclosure contains the exact value for the float64 weights and the "
              "token configurations of the float64 forward pass, both taken as exact")  # fmt: skip
STEPS = {
    "step1": "D(P_h X) <= tau(P_h) D (collapse.dobrushin)",
    "step2": "tau(P_h) <= 1 - exp(-a D^2) (collapse.tau, query and key biases included)",
}


def enclosure(x: arb, bits: int) -> dict:
    """A ball as the report stores it: its text at `bits` of precision and its outward binary64 [lower, upper]."""
    return {"ball": arb_text(x, bits), **dict(zip(("lower", "upper"), bounds(x)))}


def bounds(x: arb) -> list[float | None]:
    """[lower, upper]: binary64 numbers rounded outward from the ball's endpoints (None when not finite)."""
    return [_outward(x.lower(), -math.inf), _outward(x.upper(), math.inf)]


def build(model_source: str, config, text: str, tokens: list[str], layers: list[LayerCertificate],
          bits: int, max_bits: int, truncation: dict | None = None) -> dict:  # fmt: skip
    """The report of one text (module docstring): the model, its shape, the text and tokens, the truncation the
    model folder sets (tokenize.Tokens.truncation_report: max_seq_length, side and the tokens of the whole text;
    None when it sets none), the arithmetic, the precision ladder, float64's thresholds, the steps' statements, a
    summary (regime and step counts, full-rank layers) and every layer and head certified by certified.iter_layers."""
    heads = [head for layer in layers for head in layer.heads]
    return {
        "format": FORMAT,
        "model": model_source,
        "config": dataclasses.asdict(config),
        "text": text,
        "tokens": tokens,
        "truncation": truncation,
        "arithmetic": ARITHMETIC,
        "precision_bits": {"start": bits, "max": max_bits},
        "thresholds": {
            "saturation": {"ln2_multiple": ONE_MINUS_GAP_IS_ONE_LN2, "value": ONE_MINUS_GAP_IS_ONE,
                           "meaning": "a D^2 >= this: 1 - exp(-a D^2) is exactly 1.0 in float64"},
            "underflow": {"ln2_multiple": GAP_UNDERFLOWS_LN2, "value": GAP_UNDERFLOWS,
                          "meaning": "a D^2 >= this: exp(-a D^2) is exactly 0.0 in float64"},
        },
        "steps": STEPS,
        "summary": {
            "layers": len(layers),
            "heads": len(heads),
            "regimes": regime_counts(layers),
            **{step: {v: sum(getattr(h, step) == v for h in heads) for v in (HOLDS, VIOLATED, UNDECIDED)}
               for step in STEPS},
            "full_rank_layers": sum(layer.configuration.rank_certified for layer in layers),
        },
        "layers": [_layer(layer, bits) for layer in layers],
    }


def midpoint(enclosure: dict) -> float:
    """The middle of an encoded enclosure, for display; nan when it is not finite."""
    if enclosure["lower"] is None or enclosure["upper"] is None:
        return float("nan")
    return (enclosure["lower"] + enclosure["upper"]) / 2


def _layer(layer: LayerCertificate, bits: int) -> dict:
    c = layer.configuration
    return {
        "layer": layer.layer,
        "n_tokens": layer.n_tokens,
        "D": enclosure(layer.D, bits),
        "configuration": {
            "rank": c.rank, "rank_max": c.rank_max, "rank_certified": c.rank_certified,
            "sigma_min": enclosure(c.sigma_min, bits), "stable_rank": enclosure(c.stable_rank, bits),
            "mean_abs_cos": enclosure(c.mean_abs_cos, bits),
        },
        "heads": [_head(head) for head in layer.heads],
    }


def _head(h: HeadCertificate) -> dict:
    balls = {name: enclosure(getattr(h, name), h.bits) for name in ("a", "v", "a_D2", "gap", "log10_gap", "tau")}
    return {
        "head": h.head,
        "bits": h.bits,
        **balls,
        "D_PX_over_D": enclosure(h.ratio, h.bits),
        "regime": h.regime,
        "step1": h.step1,
        "step2": h.step2,
        "checker": h.checker,
        "float64": {"a_D2": h.float_a_D2, "factor_is_one": h.float_factor_is_one, "gap_is_zero": h.float_gap_is_zero},
    }


def _outward(endpoint: arb, direction: float) -> float | None:
    """The binary64 number nearest an exact endpoint, moved one step outward if rounding went inward."""
    value = float(endpoint)
    if not math.isfinite(value):
        return None
    inward = arb(value) > endpoint if direction < 0 else arb(value) < endpoint
    return math.nextafter(value, direction) if inward else value
