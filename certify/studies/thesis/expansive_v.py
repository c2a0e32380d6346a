"""value.expansive's non-collapsing stack, certified:
`certify counterexample expansive-v --rho 2 --layers T [--lam L] [--out CERT]`.

With rho = ||V||_2 > 1, collapse is guaranteed only near consensus (rho a D_0^2 < 1).  Far from
it, V = rho I, A = lambda I and two antipodal tokens X = (e1, -e1) give
D_(t+1) / D_t = rho tanh(lambda D_t^2 / 4), which exceeds 1 once rho tanh(lambda) > 1 and then
keeps growing with D: the diameter increases at every layer.

The certificate is a named counterexample (kind "expansive-v", re-derived by
certify_checker.expansive_v from its own code; evaluate() below is the engine's side) rather than an inequality certificate: what it proves is a growth
statement about every layer, D(X_(t+1)) > D(X_t) for t < T, not a bound of the registry violated
somewhere.  Its inputs.config is an ordinary config file: `certify check CONFIG --bound D`
answers violated on it (D' <= D fails), and value.expansive still holds on it.
"""

from __future__ import annotations

from certify.claims.value import value_attention
from certify.core import config, numbers, quantities
from certify.core.arith import BALL
from certify.core.layers import apply_layer
from certify.core.limits import shape_problem
from certify.engine.counterexamples import Found, Outcome, certify_named, checker_limits, stage_of, value_lines
from certify.errors import BadInput, counted
from certify.studies.thesis import counterexample_configs as configs

KIND = "expansive-v"

HELP = "value.expansive: V = rho I, A = lambda I, X = (e1, -e1): the diameter grows through T layers"


def add_arguments(parser) -> None:
    """Add this counterexample's options to the `certify counterexample expansive-v` parser. (--rho, --layers,
    --lam)."""
    parser.add_argument("--rho", default="2", help="the expansion rho = ||V||_2 > 1, exact (default 2)")
    parser.add_argument("--layers", default="5", help="the number T of layers (default 5)")
    parser.add_argument("--lam", default=None,
                        help="lambda (exact); default: the multiple of 1/64 one to two steps past atanh(1/rho), "
                             "where rho tanh(lambda) = 1")


def evaluate(inputs: dict, witness: dict) -> Found:
    """D(X_(t+1)) > D(X_t) at every layer of inputs.config, in ball arithmetic."""
    case = config.parse(inputs["config"])
    T = len(case.layers)
    found = Found(claims=[f"D(X_(t+1)) > D(X_t) for t = 0, ..., {T - 1} through the {T} layers "
                          "X_(t+1) = P_t X_t V^T of inputs.config, so D(X_T) > D(X_0): no collapse"])
    found.require(value_attention(case) is None, "every layer is X' = P X V^T with a V and nothing else")
    X = BALL.array(case.X)
    diameters = [quantities.diameter(BALL, X)]
    for t, layer in enumerate(case.layers):
        X = apply_layer(BALL, layer, X).out
        diameters.append(quantities.diameter(BALL, X))
        # Rounding compounds through the layers: report the first step not decided, then stop.  A step proven not to
        # grow is the whole reason; of one undecided, the layers after it are not proven either (not "proven false":
        # they are not evaluated, and the diameter of another configuration may grow again after a step down)
        shrank = diameters[-1] <= diameters[-2]
        after = "" if shrank else ", and the layers after"
        if not found.require(diameters[-1] > diameters[-2], f"D(X_{t + 1}) > D(X_{t}){after}", refuted=shrank):
            return found
    steps = BALL.stack([after / before for before, after in zip(diameters, diameters[1:])])
    found.values.update(D_0=diameters[0], D_T=diameters[-1], growth=diameters[-1] / diameters[0],
                        smallest_step=BALL.minimum(steps))
    return found


def _summary(found, witness) -> list[str]:
    return value_lines(found, ("D_0", "D_T", "growth", "smallest_step"))


def build(args) -> Outcome:
    """Run `certify counterexample expansive-v`: the configuration V = rho I, A = lambda I, X = (e1, -e1)
    through T layers, D(X_(t+1)) > D(X_t) decided in ball arithmetic and confirmed by the checker (BadInput
    for rho <= 1, T outside 1..MAX_LAYERS or above the layers limit, lambda < 0 or a non-number)."""
    rho = configs.exact(args.rho, "--rho")
    try:  # the integer options' rules: int() took an Arabic-Indic 3 and 1_0, and refused 1e1
        layers = numbers.option_integer(str(args.layers))
    except numbers.RefusedOption as wrong:
        raise BadInput(f"--layers must be a whole number: {wrong.reason}") from None
    lam = configs.exact(args.lam, "--lam") if args.lam is not None else configs.expansive_lambda(rho)
    inputs = {"config": configs.expansive_v(rho, layers, lam)}  # rho and lambda are in it: V = rho I, A = lambda I
    limits = checker_limits(args)
    # the checker refuses a stack above its layers limit: refused here, before a certificate it would refuse
    X = inputs["config"]["X"]
    if (too_big := shape_problem(len(X), len(X[0]), layers, 0, limits)) is not None:
        raise BadInput(f"--layers {layers}: {too_big}")
    outcome = certify_named(KIND, evaluate, inputs, lambda precision: {}, _summary, *configs.PRECISION_RANGE,
                            limits=limits, stage=stage_of(args))
    # rho too: residual-far's summary states its q, this one stated no rho ("1 layers" for --layers 1)
    outcome.summary.insert(0, f"  lambda         {lam} (V = rho I with rho = {rho}, A = lambda I, X = (e1, -e1), "
                              f"{counted(layers, 'layer')})")
    return outcome
