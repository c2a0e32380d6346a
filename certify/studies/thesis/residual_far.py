"""residual.far, certified: `certify counterexample residual-far --q 0.1 [--lam L] [--out CERT]`.

For every q > 0 a residual layer shrinks some configuration's diameter below q D: V = -I,
A = lambda I, X = (e1, -e1) give D'/D = 2 / (exp(2 lambda) + 1), so no uniform lower bound
D' >= q D holds far from consensus (near it, residual.two_sided gives D' >= (1 - v a D^2) D).
The certificate (kind "residual-far", re-derived by certify_checker.residual_far from its own code)
proves exactly: D(X') <= q D(X) for the configuration in its inputs.config; evaluate() below is
the engine's side, with the generic layer formulas.  That configuration is an ordinary
config file too: `certify check CONFIG --bound "q*D"` answers holds on it.
"""

from __future__ import annotations

from certify.claims.residual import residual_attention
from certify.core import config, quantities
from certify.core.arith import BALL
from certify.core.layers import apply_layer
from certify.engine.counterexamples import Found, Outcome, certify_named, checker_limits, stage_of, value_lines
from certify.studies.thesis import counterexample_configs as configs

KIND = "residual-far"

HELP = "residual.far: X + P X V^T with V = -I, A = lambda I, X = (e1, -e1) gives D' <= q D"


def add_arguments(parser) -> None:
    """Add this counterexample's options to the `certify counterexample residual-far` parser. (--q, --lam)."""
    parser.add_argument("--q", default="0.1", help="the ratio to reach, exact and > 0 (default 0.1)")
    parser.add_argument("--lam", default=None,
                        help="lambda (exact); default: the multiple of 1/64 one to two steps past ln(2/q - 1)/2, "
                             "where 2/(exp(2 lambda)+1) = q")


def evaluate(inputs: dict, witness: dict) -> Found:
    """D(X') <= q D(X) for the one residual layer X' = X + P X V^T of inputs.config, in ball arithmetic."""
    case, q_exact = config.parse(inputs["config"]), configs.exact(inputs["q"], "q")
    found = Found(claims=[f"D(X') <= q D(X) with q = {q_exact} for X' = X + P X V^T, the residual attention "
                          "layer and tokens of inputs.config"])
    q = BALL.number(q_exact)
    found.require(q > 0, "q > 0")
    found.require(len(case.layers) == 1 and residual_attention(case, allow_mask=True) is None,
                  "one residual layer X + P X V^T and nothing else")
    X = BALL.array(case.X)
    D, D_out = quantities.diameter(BALL, X), quantities.diameter(BALL, apply_layer(BALL, case.layers[0], X).out)
    found.require(D > 0, "D(X) > 0 (with D(X) = 0 no lower bound is contradicted)")
    found.values.update(q=q, D=D, D_out=D_out, ratio=D_out / D)
    found.require(D_out <= q * D, "D(X') <= q D(X)", refuted=D_out > q * D)
    return found


def _summary(found, witness) -> list[str]:
    return value_lines(found, ("q", "D", "D_out", "ratio"))


def build(args) -> Outcome:
    """Run `certify counterexample residual-far`: the residual layer V = -I, A = lambda I on X = (e1, -e1),
    D(X') <= q D(X) decided in ball arithmetic and confirmed by the checker (BadInput for q <= 0, lambda <
    0 or a non-number)."""
    q = configs.exact(args.q, "--q")
    lam = configs.exact(args.lam, "--lam") if args.lam is not None else configs.residual_far_lambda(q)
    inputs = {"q": str(q), "config": configs.residual_far(q, lam)}  # lambda is in it: A = lambda I
    outcome = certify_named(KIND, evaluate, inputs, lambda precision: {}, _summary, *configs.PRECISION_RANGE,
                            limits=checker_limits(args), stage=stage_of(args))
    outcome.summary.insert(0, f"  lambda   {lam} (V = -I, A = lambda I, X = (e1, -e1))")
    return outcome
