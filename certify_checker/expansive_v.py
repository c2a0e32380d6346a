"""Checker for "expansive-v" certificates (claim value.expansive, docs/claims.md).

With rho = ||V||_2 > 1 collapse holds near consensus only: far from it some stacks
X_{t+1} = P_t X_t V^T never collapse.  Inputs: "config", a configuration whose layers all have a
value matrix and no mask, residual, FFN or LayerNorm.  Certified means: D(X_{t+1}) > D(X_t) for
every layer t, decided in ball arithmetic, hence D(X_T) > D(X_0); refuted: D(X_(t+1)) <= D(X_t), decided so, at
the first layer t not proven to grow.  No witness is needed.  The configuration's name, if stated, is
expansive-v-rho{rho}-T{T} of its T layers, each with V = rho I for one rho (rho = 3/2, T = 4: rho3_2-T4).
"""

from __future__ import annotations

from certify_checker import forward
from certify_checker import schema
from certify_checker.counterexample import FINER, Evaluation, confirm, tag, text_price
from certify_checker.exact import rational, smallest
from certify_checker.inequality import TEXT_READS, value_layer

KIND = "expansive-v"
ESCALATION = FINER  # its finer run: its layers priced there too (over_limits: their Python, their arithmetic)
INPUT_KEYS = {"config"}


def evaluate(inputs: dict, witness: dict) -> Evaluation:
    if witness:  # a witness nothing reads is a field nobody checks
        raise ValueError("this kind of certificate states no witness")
    config = inputs["config"]
    if unreadable := schema.problem(config):
        raise ValueError(unreadable)
    layers = config["layers"]
    T = len(layers)
    found = Evaluation(claims=[f"D(X_(t+1)) > D(X_t) for t = 0, ..., {T - 1} through the {T} layers "
                               "X_(t+1) = P_t X_t V^T of inputs.config, so D(X_T) > D(X_0): no collapse"])
    found.require(T >= 1 and all(value_layer(layer) for layer in layers),
                  "every layer is X' = P X V^T with a V and nothing else")
    X = forward.matrix(config["X"])
    diameters = [forward.diameter(X)]
    for t, layer in enumerate(layers):
        X = forward.layer_step(layer, X)["out"]
        diameters.append(forward.diameter(X))
        # Rounding compounds through the layers: report the first step not decided, then stop.  A step proven not to
        # grow is the whole reason; of one undecided, the layers after it are not proven either (not "proven false":
        # they are not evaluated, and the diameter of another configuration may grow again after a step down)
        shrank = diameters[-1] <= diameters[-2]
        after = "" if shrank else ", and the layers after"
        if not found.require(diameters[-1] > diameters[-2], f"D(X_{t + 1}) > D(X_{t}){after}", refuted=shrank):
            return found
    steps = [after / before for before, after in zip(diameters, diameters[1:])]
    found.values.update(D_0=diameters[0], D_T=diameters[-1], growth=diameters[-1] / diameters[0],
                        smallest_step=smallest(steps))
    return found


def work(cert: dict) -> int:
    """Beyond its layers' (certify_checker.limits, ESCALATION): reading the configuration's numbers stated as text,
    as often as a pass of an inequality's reads them (inequality.TEXT_READS), at each precision: a pass here reads
    each once, and name() reads V once more in all."""
    return text_price(cert, TEXT_READS)


def name(inputs: dict) -> str | None:
    """The configuration's name as certify writes it, expansive-v-rho{rho}-T{T}, when every layer's V is rho I for one
    rho, else None (the layers are well-formed: confirm asks after evaluate has read them)."""
    layers = inputs["config"]["layers"]
    scales = {_scale(layer.get("V")) for layer in layers}  # no V: an undecided certificate's, named by no rho
    return f"expansive-v-rho{tag(scales.pop())}-T{len(layers)}" if len(scales) == 1 and None not in scales else None


def _scale(V: list | None):
    """rho when the d x d matrix V is rho I, else None."""
    if V is None:
        return None
    rho = rational(V[0][0])
    same = all(rational(v) == (rho if i == j else 0) for i, row in enumerate(V) for j, v in enumerate(row))
    return rho if same else None


def verify(cert: dict) -> tuple[bool, str]:
    return confirm(cert, KIND, evaluate, INPUT_KEYS, name)
