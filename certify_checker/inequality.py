"""Checker for "inequality" certificates: lhs <= rhs between quantities of a layer stack.

The claims it knows are written here again, on purpose: the checker does not trust the
engine's registry.  Each entry: scope ("layer": every layer; "stack": rhs iterated through
the stack from D_0), hypothesis on the layers, and the inequalities.
"""

from __future__ import annotations

import ast
import hashlib
import json

from flint import arb, ctx, fmpq

from certify_checker import forward
from certify_checker import norms
from certify_checker import schema
from certify_checker import windowed
from certify_checker.exact import agrees, rational

G = "(1 - exp(-a*D**2))*D"


def _stochastic(layer: dict) -> bool:
    """Any attention matrix, masked or not, applied as P X."""
    return not (set(layer) & {"V", "ffn", "layernorm"}) and not layer.get("residual")


def _pure(layer: dict) -> bool:
    """X' = P X: no value matrix, mask, residual, feed-forward or LayerNorm."""
    return _stochastic(layer) and "mask" not in layer


def value_layer(layer: dict) -> bool:
    """X' = P X V^T: a value matrix, no mask, residual, feed-forward or LayerNorm."""
    return "V" in layer and _pure({k: v for k, v in layer.items() if k != "V"})


def residual_layer(layer: dict) -> bool:
    """X' = X + P X V^T, masked or not, no feed-forward or LayerNorm."""
    return layer.get("residual") is True and "V" in layer and not set(layer) & {"ffn", "layernorm"}


def _residual_unmasked(layer: dict) -> bool:
    return residual_layer(layer) and "mask" not in layer


def _ffn(layer: dict) -> bool:
    """X' = f(P X): a feed-forward network after pure attention."""
    return "ffn" in layer and _pure({k: v for k, v in layer.items() if k != "ffn"})


def _one_value_matrix(layers: list) -> bool:
    return all(layer["V"] == layers[0]["V"] for layer in layers)


CLAIMS = {
    "collapse.global": ("layer", _pure, [("D_out", G)]),
    "collapse.tanh": ("layer", _pure, [("D_out", "tanh(a*D**2/4)*D")]),
    "collapse.dobrushin": ("layer", _stochastic, [("D_PX", "tau*D")]),
    "collapse.tau": ("layer", _pure, [("tau", "1 - exp(-a*D**2)")]),
    "collapse.cubic": ("layer", _pure, [("D_out", "a*D**3")]),
    "collapse.trajectory": ("stack", _pure, [("D_out", G)]),
    "value.bounded": ("stack", value_layer, [("D_out/M", "(1 - exp(-a*M**2*D_0**2))*D")]),
    "value.expansive": ("layer", value_layer, [("D_out", "v*(1 - exp(-a*D**2))*D"), ("D_out", "v*a*D**3")]),
    "residual.two_sided": ("layer", residual_layer, [("(1 - v*tau)*D", "D_out"), ("D_out", "(1 + v*tau)*D")]),
    "residual.two_sided.global": ("layer", _residual_unmasked, [("(1 - v*(1 - exp(-a*D**2)))*D", "D_out"),
                                                                ("D_out", "(1 + v*(1 - exp(-a*D**2)))*D")]),
    "ffn.lipschitz": ("layer", _ffn, [("D_out", "L*(1 - exp(-a*D**2))*D"), ("D_out", "L*a*D**3")]),
    "init.scaling": ("layer", _pure, [("D_out", "(1 - gap)*D")]),
    # Wu et al.: windows of layers sharing one mask (names and stack hypotheses in windowed.py)
    "mask.collapse": ("window", _stochastic, [("eps_theory", "w_min"), ("eps**r", "col"), ("D_end", "(1 - eps**r)*D"),
                                              ("mu_end", "sqrt(n/2)*D_0*(1 - eps_all**r)**(t/r)")]),
    "ln.collapse": ("window", windowed.post_ln_orthogonal, [("eps_theory", "w_min"), ("eps**k", "col"),
                                                            ("D_end*m", "(1 - delta)*D")]),
}
# Hypotheses about the whole stack, on top of the per-layer ones.
STACK_HYPOTHESES = {"value.bounded": _one_value_matrix}
USER_NAMES = {"D", "a", "n", "d", "v"}
FUNCTIONS = {"exp", "log", "sqrt", "tanh", "sinh", "cosh", "min", "max"}
MIN_PRECISION, MAX_PRECISION = 53, 1 << 20
MAX_POWER = 1024


def evaluate(text: str, env) -> arb:
    """Evaluate a formula of the restricted grammar (numbers exact, ** with integer powers by products)."""
    source = text.strip()

    def walk(node):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            q = rational(ast.get_source_segment(source, node))
            return arb(q.numerator) if q.denominator == 1 else arb(fmpq(q.numerator, q.denominator))
        if isinstance(node, ast.Name):
            return env(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.BinOp):
            left = walk(node.left)
            if isinstance(node.op, ast.Pow):
                power = node.right
                if isinstance(power, ast.Constant) and type(power.value) is int and power.value >= 0:
                    if power.value > MAX_POWER:  # a product per unit of the exponent: D**10**9 would never end
                        raise ValueError(f"formula {text!r}: exponent {power.value} above {MAX_POWER}")
                    result = arb(1)
                    for _ in range(power.value):
                        result = result * left
                    return result
                return (walk(power) * left.log()).exp()
            right = walk(node.right)
            ops = {ast.Add: lambda: left + right, ast.Sub: lambda: left - right,
                   ast.Mult: lambda: left * right, ast.Div: lambda: left / right}
            return ops[type(node.op)]()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
            args = [walk(a) for a in node.args]
            if node.func.id in ("min", "max"):
                result = args[0]
                for value in args[1:]:
                    if not isinstance(value, arb):  # a number type of the caller's (region proofs' Dual) leads
                        result, value = value, result
                    result = result.min(value) if node.func.id == "min" else result.max(value)
                return result
            (value,) = args
            return getattr(value, node.func.id)()
        raise ValueError(f"formula {text!r}: {ast.dump(node)[:60]} is not allowed")

    return walk(ast.parse(source, mode="eval").body)


class Layer:
    """The quantities of one layer step, computed when first asked for."""

    def __init__(self, spec: dict, X, X0, witness: dict, t: int, depth: int = 1):
        self.spec, self.X, self.X0, self.witness, self.t, self.depth = spec, X, X0, witness, t, depth
        self.step = forward.layer_step(spec, X)
        self.values: dict = {}

    def __call__(self, name: str) -> arb:
        if name not in self.values:
            self.values[name] = self._compute(name)
        return self.values[name]

    def _compute(self, name: str) -> arb:
        if name == "D":
            return forward.diameter(self.X)
        if name == "D_out":
            return forward.diameter(self.step["out"])
        if name == "D_PX":
            return forward.diameter(self.step["PX"])
        if name == "D_0":
            return forward.diameter(self.X0)
        if name == "mu":
            return forward.consensus_distance(self.X)
        if name == "mu_out":
            return forward.consensus_distance(self.step["out"])
        if name == "tau":
            return forward.dobrushin(self.step["P"])
        if name == "a":
            return forward.spectral_norm(forward.query_key(self.spec), self.witness[f"A{self.t}"])
        if name == "v":
            return forward.spectral_norm(forward.matrix(self.spec["V"]), self.witness[f"V{self.t}"])
        if name == "gap":
            return (-self("a") * self("D") * self("D")).exp()
        if name == "M":
            return norms.power_bound(forward.matrix(self.spec["V"]), self.depth, self.witness, f"V{self.t}")
        if name == "L":
            return norms.ffn_lipschitz(self.spec["ffn"], self.witness, self.t)
        if name == "n":
            return arb(len(self.X))
        if name == "d":
            return arb(len(self.X[0]))
        raise ValueError(f"unknown quantity {name!r}")


def _outcome(lhs: arb, rhs: arb):
    if lhs <= rhs:
        return True
    if lhs > rhs:
        return False
    return None


def verify(cert: dict) -> tuple[bool, str]:
    claim, bound, inputs = cert["claim"], cert["bound"], cert["inputs"]
    canonical = json.dumps({"claim": claim, "bound": bound, "inputs": inputs}, sort_keys=True, separators=(",", ":"))
    if hashlib.sha256(canonical.encode("utf-8")).hexdigest() != cert["inputs_sha256"]:
        return False, "the inputs, claim or bound do not match the certificate's digest (edited?)"
    precision = cert["precision"]
    if type(precision) is not int or not MIN_PRECISION <= precision <= MAX_PRECISION:
        return False, f"precision {precision!r} out of range"
    if (claim is None) == (bound is None):
        return False, "a certificate states exactly one of claim and bound"
    if unreadable := schema.problem(inputs):
        return False, unreadable
    if claim is not None:
        if claim not in CLAIMS:
            return False, f"the checker does not know claim {claim!r}"
        scope, hypothesis, inequalities = CLAIMS[claim]
        layers = inputs["layers"]
        if not all(hypothesis(layer) for layer in layers):
            return False, f"the layers do not satisfy the hypotheses of {claim}"
        if not STACK_HYPOTHESES.get(claim, lambda _: True)(layers):
            return False, f"the stack does not satisfy the hypotheses of {claim}"
        if scope == "window" and (unmet := windowed.unmet_hypothesis(claim, inputs)):
            return False, unmet
    else:
        names = {n.id for n in ast.walk(ast.parse(bound, mode="eval")) if isinstance(n, ast.Name)}
        if not names <= USER_NAMES | FUNCTIONS:
            return False, f"the bound uses names outside {sorted(USER_NAMES)}"
        scope, inequalities = "layer", [("D_out", bound)]
    if cert["verdict"] not in ("holds", "violated"):
        return False, f"verdict {cert['verdict']!r} is not a decided verdict"

    with ctx.workprec(precision):
        X0 = forward.matrix(inputs["X"])  # at least two tokens (schema)
        steps, X = [], X0
        for t, spec in enumerate(inputs["layers"]):
            steps.append(Layer(spec, X, X0, cert["witness"], t, len(inputs["layers"])))
            X = steps[-1].step["out"]
        compared = []
        frames = windowed.frames(claim, inputs, steps) if scope == "window" else []
        for lhs_text, rhs_text in inequalities:
            if scope == "window":
                compared += [(frame.t, lhs_text, rhs_text, evaluate(lhs_text, frame), evaluate(rhs_text, frame))
                             for frame in frames]
                continue
            if scope == "stack":
                bound_value = steps[0]("D")
                for step in steps:
                    bound_value = evaluate(rhs_text, lambda name, s=step, b=bound_value: b if name == "D" else s(name))
                lhs = evaluate(lhs_text, steps[-1])
                compared.append((None, lhs_text, f"composed {rhs_text}", lhs, bound_value))
            else:
                for step in steps:
                    compared.append((step.t, lhs_text, rhs_text, evaluate(lhs_text, step), evaluate(rhs_text, step)))
        outcomes = [_outcome(lhs, rhs) for *_, lhs, rhs in compared]
        verdict = "violated" if False in outcomes else "holds" if all(o is True for o in outcomes) else None
        if verdict != cert["verdict"]:
            return False, f"the checker finds {verdict or 'undecided'} at {precision} bits, the certificate says {cert['verdict']}"

        stated = cert["values"]
        if len(stated["comparisons"]) != len(compared):
            return False, "the certificate lists a different number of comparisons"
        for (t, lhs_text, rhs_text, lhs, rhs), entry, outcome in zip(compared, stated["comparisons"], outcomes):
            if entry["layer"] != t or entry["holds"] is not outcome:
                return False, f"comparison at layer {t}: stated outcome {entry['holds']} differs from {outcome}"
            if (entry["lhs_expr"], entry["rhs_expr"]) != (lhs_text, rhs_text):
                return False, f"comparison at layer {t}: it states {entry['lhs_expr']} <= {entry['rhs_expr']}"
            if not (agrees(lhs, entry["lhs"], precision) and agrees(rhs, entry["rhs"], precision)):
                return False, f"comparison at layer {t}: stated enclosures do not match the recomputed ones"
        if len(stated["layers"]) != len(steps):
            return False, "the certificate lists values for a different number of layers"
        for step, values in zip(steps, stated["layers"]):
            for name, text in values.items():
                if not agrees(step(name), text, precision):
                    return False, f"layer {step.t}: stated {name} = {text[:40]} does not match the recomputed value"
        summary = {"D_in": steps[0]("D"), "D_out": steps[-1]("D_out")}
        for name, mine in summary.items():
            if not agrees(mine, stated[name], precision):
                return False, f"stated {name} does not match the recomputed value"
        deciding = next((c for c, o in zip(compared, outcomes) if o is False), compared[-1])
        if not agrees(deciding[-1], stated["bound"], precision):
            return False, "stated bound does not match the recomputed value"
    return True, f"confirmed: {cert['verdict']} at {precision} bits"

