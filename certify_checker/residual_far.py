"""Checker for "residual-far" certificates (claim residual.far, docs/claims.md).

Far from consensus no uniform lower bound D' >= q D holds for X' = X + P X V^T.  Inputs: an exact
q > 0 and "config", a configuration (tokens "X", one layer in "layers") whose layer is a residual
attention layer with a value matrix and nothing else.  Certified means: for that layer and those
tokens, D(X') <= q D(X), decided in ball arithmetic; refuted: D(X') > q D(X), decided so.  No witness
is needed (no norms enter).  The configuration's name, if stated, is residual-far-q{q} of that q (1/10: q1_10).
"""

from __future__ import annotations

from certify_checker import forward
from certify_checker import schema
from certify_checker.counterexample import FINER, Evaluation, confirm, tag, text_price
from certify_checker.exact import ball, rational
from certify_checker.inequality import TEXT_READS, residual_layer

KIND = "residual-far"
ESCALATION = FINER  # its finer run: its layers priced there too (over_limits: their Python, their arithmetic)
INPUT_KEYS = {"q", "config"}


def evaluate(inputs: dict, witness: dict) -> Evaluation:
    if witness:  # a witness nothing reads is a field nobody checks
        raise ValueError("this kind of certificate states no witness")
    config, q = inputs["config"], ball(inputs["q"])
    if unreadable := schema.problem(config):
        raise ValueError(unreadable)
    # q as the exact rational the check used: a JSON number 0.1 is a binary64 slightly above 1/10.
    found = Evaluation(claims=[f"D(X') <= q D(X) with q = {rational(inputs['q'])} for X' = X + P X V^T, the residual "
                               "attention layer and tokens of inputs.config"])
    found.require(q > 0, "q > 0")
    layers = config["layers"]
    found.require(len(layers) == 1 and residual_layer(layers[0]), "one residual layer X + P X V^T and nothing else")
    X = forward.matrix(config["X"])
    D, D_out = forward.diameter(X), forward.diameter(forward.layer_step(layers[0], X)["out"])
    found.require(D > 0, "D(X) > 0 (with D(X) = 0 no lower bound is contradicted)")
    found.values.update(q=q, D=D, D_out=D_out, ratio=D_out / D)
    found.require(D_out <= q * D, "D(X') <= q D(X)", refuted=D_out > q * D)
    return found


def work(cert: dict) -> int:
    """Beyond its layers' (certify_checker.limits, ESCALATION): reading the configuration's numbers stated as text,
    as often as a pass of an inequality's reads them (inequality.TEXT_READS), at each precision."""
    return text_price(cert, TEXT_READS)


def name(inputs: dict) -> str:
    """The configuration's name as certify writes it: residual-far-q1_10 for q = 1/10 (the q checked)."""
    return f"residual-far-q{tag(rational(inputs['q']))}"


def verify(cert: dict) -> tuple[bool, str]:
    return confirm(cert, KIND, evaluate, INPUT_KEYS, name)
