"""Which regime do the heads of a real pretrained encoder occupy?  Certified per layer and head.

For layer l, head h, on the configuration X_l entering the layer (the float64 forward pass's
tokens, taken as exact binary64 numbers; every statement below is about that configuration):

    a        ||A_h||_2, A_h = W_Q W_K^T / sqrt(d_k)      (thin factors, see thin_norm)
    v        ||V_h||_2, V_h = W_O,h W_V,h, the value-output map: the head adds P_h X V_h^T (and the
             row (W_O,h b_V,h)^T of its value bias, the same for every token)
    D        D(X_l), the diameter
    a D^2    the exponent of collapse.global: D(P X) <= (1 - exp(-a D^2)) D
    gap      exp(-a D^2), kept itself (the certified factor is 1 - gap), with log10(gap)
    tau      tau(P_h), P_h the head's real attention, query and key biases included
    ratio    D(P_h X) / D: pure attention P_h X, the quantity the thesis bounds
    step1    D(P_h X) <= tau(P_h) D      (collapse.dobrushin)
    step2    tau(P_h) <= 1 - exp(-a D^2) (collapse.tau; the biases cancel in P_ij / P_kj, docs/claims.md)

The regime of a head, decided in ball arithmetic from the enclosure of a D^2 (docs/claims.md,
init.scaling; float64 rounds to nearest, ties to even):
    informative        a D^2 < 54 ln 2 (about 37.43): exp(-a D^2) > 2^-54, so float64 represents
                       1 - exp(-a D^2) as a number below 1 and the bound visibly contracts
    indistinguishable  54 ln 2 <= a D^2 < 1075 ln 2: exp(-a D^2) <= 2^-54, half the spacing of
                       binary64 just below 1, so 1 - exp(-a D^2) is exactly 1.0 in float64: no
                       contraction visible
    underflowed        a D^2 >= 1075 ln 2 (about 745.13): exp(-a D^2) <= 2^-1075, half the
                       smallest subnormal, so float64 computes the gap itself as 0.0
    undecided          the enclosure straddles a threshold at the highest precision tried
Every step and regime reported is re-derived by the independent checker from an "attention-head"
certificate (certify.studies.heads); what it does not confirm is reported undecided.
Ball arithmetic certifies the gap > 0 in every regime.  The float64 flags next to the regime are
what float64 computes for 1 - exp(-x) and exp(-x) at x = a D^2 rounded to binary64.

Precision: each head starts at `bits` and doubles up to `max_bits` (the last step clipped to it)
while its regime or a step is undecided (the checker follows from 53 bits on).  An exact equality
cannot be decided (n = 2 makes step 1 an equality) and stays undecided.  The per-layer
configuration statistics are in certify.studies.models.configuration.

Cost (all-MiniLM-L6-v2, one 8-token sentence, 64 bits): about 13 s of CPU for the 72 heads, most
of it in the d x d_k Gram products per head (thin_norm, then the checker's own); the rest is the
biased attention and the diameters in ball arithmetic.  a and v depend on the weights alone:
HeadNorms keeps them per head and precision, so certifying many sentences with one HeadNorms
computes them once (the checker still re-derives a from each certificate).
"""

from __future__ import annotations

from dataclasses import dataclass

import flint
import numpy as np
from flint import arb

from certify.core import quantities
from certify.core.limits import DEFAULT as DEFAULT_LIMITS
from certify.core.precision import START_PRECISION, escalate, working
from certify.core.arith import BALL
from certify.engine import UNDECIDED, VIOLATED
from certify.errors import BadInput
from certify.core.float64_limits import INDISTINGUISHABLE, INFORMATIVE, UNDERFLOWED, float64_view
from certify.studies import heads as heads_study
from certify.studies.models.bert import AttentionHead, BertModel, ForwardTrace
from certify.studies.models.configuration import ConfigurationStats, configuration_stats
from certify.core.spectral import NormWitness
from certify.core.thin_norm import ball_array, ball_matrix, product_norm, product_norm_witnessed

DEFAULT_BITS = 64
MAX_BITS = 512  # the default ceiling of the per-head escalation
# The checker confirms a head's certificate only at a precision from 53 bits (START_PRECISION) to the limit
# its default limits allow (a model has no --limit NAME=VALUE): outside, every head would be left undecided.
MIN_BITS, MAX_ALLOWED_BITS = START_PRECISION, DEFAULT_LIMITS.precision

REGIMES = (INFORMATIVE, INDISTINGUISHABLE, UNDERFLOWED, UNDECIDED)
MIN_TOKENS = 2  # D and tau compare tokens


@dataclass(frozen=True)
class HeadCertificate:
    """One head on one configuration, certified: the enclosures of a = ||A_h||_2, ||V_h||_2, a D^2, the gap
    exp(-a D^2) and its log10, tau(P_h) and D(P_h X) / D; the float64 regime of the gap and both steps of
    collapse.global (each confirmed by the checker or undecided); what float64 makes of them; the
    precision that decided it; and the certificate of a violated step."""

    head: int
    bits: int  # the precision that decided it (or the last one tried)
    a: arb
    v: arb
    a_D2: arb
    gap: arb  # exp(-a D^2)
    log10_gap: arb
    tau: arb
    ratio: arb  # D(P_h X) / D
    regime: str
    step1: str  # D(P_h X) <= tau D: holds | violated (confirmed by the checker) | undecided
    step2: str  # tau <= 1 - exp(-a D^2), the same
    float_a_D2: float  # a D^2 rounded to binary64 (from the ball's midpoint)
    float_factor_is_one: bool  # float64: 1 - exp(-a D^2) == 1.0
    float_gap_is_zero: bool  # float64: exp(-a D^2) == 0.0
    checker: str = ""  # the checker's word on the head's certificate (certify.studies.heads)
    violation: dict | None = None  # that certificate when it confirms a violated step (a counterexample)

    @property
    def decided(self) -> bool:
        """True when the regime and both steps are decided (none is undecided)."""
        return UNDECIDED not in (self.regime, self.step1, self.step2)


@dataclass(frozen=True)
class LayerCertificate:
    """One layer on one configuration: its number of tokens, the certified diameter D of the tokens
    entering it, the statistics of that configuration, and the certificate of every head."""

    layer: int
    n_tokens: int
    D: arb
    configuration: ConfigurationStats
    heads: tuple[HeadCertificate, ...]


class HeadNorms:
    """The sentence-independent part of a head's analysis, kept per head object and precision:
    (a = ||A_h||_2, the route and witness of its enclosure that the checker follows, v = ||V_h||_2).
    The same arb computation at the same precision gives the same ball, so a kept one is exact reuse.
    Each entry holds its head, so the id in its key cannot be reused by another head."""

    def __init__(self) -> None:
        self._found: dict[tuple[int, int], tuple[AttentionHead, tuple[arb, str, NormWitness, arb]]] = {}

    def of(self, head: AttentionHead) -> tuple[arb, str, NormWitness, arb]:
        """The norms of `head` at the current flint precision."""
        key = (id(head), flint.ctx.prec)
        if key not in self._found:
            norm, route, witness = product_norm_witnessed(ball_matrix(head.W_Q), ball_matrix(head.W_K))
            v = product_norm(ball_matrix(head.W_O), ball_matrix(head.W_V.T))
            self._found[key] = (head, (norm / arb(head.d_k).sqrt(), route, witness, v))
        return self._found[key][1]


def iter_layers(model: BertModel, trace: ForwardTrace, bits: int = DEFAULT_BITS, max_bits: int = MAX_BITS,
                norms: HeadNorms | None = None):  # fmt: skip
    """Every layer and head of the model on the configurations the trace recorded, one layer at a time (a
    layer of MiniLM takes about a second); pass one HeadNorms for every trace of the model to compute the
    weight-only norms once."""
    check_token_count(trace.input_ids.shape[0])
    if not MIN_BITS <= bits <= max_bits <= MAX_ALLOWED_BITS:
        raise BadInput(f"the precision must satisfy {MIN_BITS} <= bits <= max_bits <= {MAX_ALLOWED_BITS}, "
                       f"not bits {bits} and max_bits {max_bits}")
    keys = trace.attention_mask.astype(bool)
    norms = HeadNorms() if norms is None else norms
    for index, (layer, seen) in enumerate(zip(model.layers, trace.layers)):
        yield certify_layer(index, layer.heads, seen.tokens_in, keys, bits, max_bits, norms)


def check_token_count(n: int) -> None:
    """BadInput unless the analysis can take n tokens."""
    if n < MIN_TOKENS:
        raise BadInput(f"the analysis needs at least {MIN_TOKENS} tokens (D and tau compare tokens), not {n}")


def certify_layer(index: int, heads: tuple[AttentionHead, ...], X: np.ndarray, keys: np.ndarray,
                  bits: int, max_bits: int, norms: HeadNorms) -> LayerCertificate:  # fmt: skip
    """One layer: its configuration statistics, then each head at increasing precision until decided."""
    key_set = None if keys.all() else keys  # every query sees the same keys (BERT)
    with working(bits):
        stats = _within_float64(lambda: configuration_stats(X), f"layer {index}: its tokens")
        D = quantities.diameter(BALL, ball_array(X))
    results: dict[int, HeadCertificate] = {}

    def attempt(precision: int) -> dict[int, HeadCertificate]:
        """Every head not yet decided, at this precision."""
        pending = [h for h in range(len(heads)) if h not in results or not results[h].decided]
        X_ball = ball_array(X)
        for h in pending:
            found = _within_float64(lambda: norms.of(heads[h]), f"layer {index}, head {h}: its weights")
            results[h] = certify_head(h, heads[h], X, X_ball, key_set, precision, found)
        return results

    escalate(attempt, lambda found: all(head.decided for head in found.values()), bits, max_bits)
    return LayerCertificate(layer=index, n_tokens=X.shape[0], D=D, configuration=stats,
                            heads=tuple(results[h] for h in range(len(heads))))  # fmt: skip


def _within_float64(compute, what: str):
    """compute(), whose float64 witnesses (SVD, eigenvectors of Gram matrices) need the squares of the
    entries to be finite: finite weights or tokens beyond that (a float64 checkpoint with entries near
    1e200) were internal errors; they are bad input, named."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # the non-finite witness is refused below
            return compute()
    except np.linalg.LinAlgError:
        raise BadInput(f"{what} are too large for the float64 witnesses of the analysis (their squares overflow)") from None


def certify_head(index: int, head: AttentionHead, X: np.ndarray, X_ball: np.ndarray, keys: np.ndarray | None,
                 bits: int, norms: tuple[arb, str, NormWitness, arb]) -> HeadCertificate:  # fmt: skip
    """One head at the current flint precision (recorded as `bits`), with its HeadNorms.of at that
    precision; its steps and regime as the checker confirms them (certify.studies.heads)."""
    a, route, witness, v = norms
    target = heads_study.Head(X=X, W_Q=head.W_Q, W_K=head.W_K, b_Q=head.b_Q, b_K=head.b_K, keys=keys)
    found = heads_study.values(target, X_ball, a)
    steps = heads_study.confirm_steps(target, found, ("dobrushin", "tau"), route, witness, bits, with_regime=True)
    a_D2 = found["a_D2"]
    float_a_D2 = float(a_D2.mid())
    float_factor_is_one, float_gap_is_zero = float64_view(float_a_D2)
    return HeadCertificate(
        head=index, bits=bits, a=found["a"], v=v, a_D2=a_D2, gap=found["gap"], log10_gap=-a_D2 / arb(10).log(),
        tau=found["tau"], ratio=found["D_PX"] / found["D"], regime=steps.regime,
        step1=steps.outcomes["dobrushin"], step2=steps.outcomes["tau"], checker=steps.checker,
        violation=steps.certificate if VIOLATED in steps.outcomes.values() else None,
        float_a_D2=float_a_D2, float_factor_is_one=float_factor_is_one, float_gap_is_zero=float_gap_is_zero,
    )  # fmt: skip


def regime_counts(layers: list[LayerCertificate]) -> dict[str, int]:
    """How many heads of the layers fall in each regime (every one of REGIMES, 0 included)."""
    counts = dict.fromkeys(REGIMES, 0)
    for layer in layers:
        for head in layer.heads:
            counts[head.regime] += 1
    return counts
