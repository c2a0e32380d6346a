"""residual.far, certified: `certify counterexample residual-far --q 0.1 [--lam L] [--out CERT]`.

For every q > 0 a residual layer shrinks some configuration's diameter below q D: V = -I,
A = lambda I, X = (e1, -e1) give D'/D = 2 / (exp(2 lambda) + 1), so no uniform lower bound
D' >= q D holds far from consensus (near it, residual.two_sided gives D' >= (1 - v a D^2) D).
The certificate (kind "residual-far", checked by certify_checker.residual_far) proves exactly:
D(X') <= q D(X) for the configuration in its inputs.config.  That configuration is an ordinary
config file too: `certify check CONFIG --bound "q*D"` answers holds on it.
"""

from __future__ import annotations

from certify_checker import residual_far as checker
from certify.engine.counterexamples import Outcome, certify_by_checker, value_lines
from certify.studies.thesis import counterexample_configs as configs

HELP = "residual.far: X + P X V^T with V = -I, A = lambda I, X = (e1, -e1) gives D' <= q D"


def add_arguments(parser) -> None:
    parser.add_argument("--q", default="0.1", help="the ratio to reach, exact and > 0 (default 0.1)")
    parser.add_argument("--lam", default=None,
                        help="lambda (exact); default: the multiple of 1/64 one to two steps past ln(2/q - 1)/2, "
                             "where 2/(exp(2 lambda)+1) = q")


def _summary(found, witness) -> list[str]:
    return value_lines(found, ("q", "D", "D_out", "ratio"))


def build(args) -> Outcome:
    q = configs.exact(args.q, "--q")
    lam = configs.exact(args.lam, "--lam") if args.lam is not None else configs.residual_far_lambda(q)
    inputs = {"q": str(q), "config": configs.residual_far(q, lam)}  # lambda is in it: A = lambda I
    outcome = certify_by_checker(checker.KIND, checker, inputs, lambda precision: {}, _summary, configs.PRECISIONS)
    outcome.summary.insert(1, f"  lambda   {lam} (V = -I, A = lambda I, X = (e1, -e1))")
    return outcome
