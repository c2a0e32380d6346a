"""value.expansive's non-collapsing stack, certified:
`certify counterexample expansive-v --rho 2 --layers T [--lam L] [--out CERT]`.

With rho = ||V||_2 > 1, collapse is guaranteed only near consensus (rho a D_0^2 < 1).  Far from
it, V = rho I, A = lambda I and two antipodal tokens X = (e1, -e1) give
D_(t+1) / D_t = rho tanh(lambda D_t^2 / 4), which exceeds 1 once rho tanh(lambda) > 1 and then
keeps growing with D: the diameter increases at every layer.

The certificate is a named counterexample (kind "expansive-v", checked by
certify_checker.expansive_v) rather than an inequality certificate: what it proves is a growth
statement about every layer, D(X_(t+1)) > D(X_t) for t < T, not a bound of the registry violated
somewhere.  Its inputs.config is an ordinary config file: `certify check CONFIG --bound D`
answers violated on it (D' <= D fails), and value.expansive still holds on it.
"""

from __future__ import annotations

from certify_checker import expansive_v as checker
from certify.engine.counterexamples import Outcome, certify_by_checker, value_lines
from certify.errors import BadInput
from certify.studies.thesis import counterexample_configs as configs

HELP = "value.expansive: V = rho I, A = lambda I, X = (e1, -e1): the diameter grows through T layers"


def add_arguments(parser) -> None:
    parser.add_argument("--rho", default="2", help="the expansion rho = ||V||_2 > 1, exact (default 2)")
    parser.add_argument("--layers", default="5", help="the number T of layers (default 5)")
    parser.add_argument("--lam", default=None,
                        help="lambda (exact); default: the multiple of 1/64 one to two steps past atanh(1/rho), "
                             "where rho tanh(lambda) = 1")


def _summary(found, witness) -> list[str]:
    return value_lines(found, ("D_0", "D_T", "growth", "smallest_step"))


def build(args) -> Outcome:
    rho = configs.exact(args.rho, "--rho")
    try:
        layers = int(args.layers)
    except (TypeError, ValueError):
        raise BadInput(f"--layers must be a whole number, got {args.layers!r}") from None
    lam = configs.exact(args.lam, "--lam") if args.lam is not None else configs.expansive_lambda(rho)
    inputs = {"config": configs.expansive_v(rho, layers, lam)}  # rho and lambda are in it: V = rho I, A = lambda I
    outcome = certify_by_checker(checker.KIND, checker, inputs, lambda precision: {}, _summary, configs.PRECISIONS)
    outcome.summary.insert(1, f"  lambda         {lam} (V = rho I, A = lambda I, X = (e1, -e1), {layers} layers)")
    return outcome
