"""Checker for "inequality" certificates: lhs <= rhs between quantities of a layer stack.

The claims it knows are written here again, on purpose: the checker does not trust the
engine's registry.  Each entry: scope ("layer": every layer; "stack": after every layer t, lhs
against the rhs iterated from D_0 through layers 0..t), hypothesis on the layers, and the inequalities.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json

from flint import arb, arb_mat, ctx

from certify_checker import centred
from certify_checker import forward, precision_problem, sizes
from certify_checker.formula import evaluate
from certify_checker import norms
from certify_checker import schema
from certify_checker import windowed
from certify_checker.bound import MAX_LENGTH as MAX_BOUND_LENGTH, canonical as canonical_bound, syntax
from certify_checker.exact import ESCALATION, NON_FINITE, accurate, agrees, contains, finer  # ESCALATION: priced
from certify_checker.exact import rational
from certify_checker import limits
from certify_checker.limits import ENTRY, centred_cost, passes, window_parts

G = "(1 - exp(-a*D**2))*D"


def _stochastic(layer: dict) -> bool:
    """Any attention matrix, masked or not, applied as P X."""
    return not (set(layer) & {"V", "ffn", "layernorm"}) and not layer.get("residual")


def _unmasked(layer: dict) -> bool:
    """No mask, or the complete one (every entry 1): "no mask means the complete graph" (CLAIMS.md)."""
    return all(v == 1 for row in layer.get("mask", []) for v in row)


def _pure(layer: dict) -> bool:
    """X' = P X: no value matrix, mask, residual, feed-forward or LayerNorm."""
    return _stochastic(layer) and _unmasked(layer)


def value_layer(layer: dict) -> bool:
    """X' = P X V^T: a value matrix, no mask, residual, feed-forward or LayerNorm."""
    return "V" in layer and _pure({k: v for k, v in layer.items() if k != "V"})


def residual_layer(layer: dict) -> bool:
    """X' = X + P X V^T, masked or not, no feed-forward or LayerNorm."""
    return layer.get("residual") is True and "V" in layer and not set(layer) & {"ffn", "layernorm"}


def _residual_unmasked(layer: dict) -> bool:
    return residual_layer(layer) and _unmasked(layer)


def _ffn(layer: dict) -> bool:
    """X' = f(P X): a feed-forward network after pure attention."""
    return "ffn" in layer and _pure({k: v for k, v in layer.items() if k != "ffn"})


def _one_value_matrix(layers: list) -> bool:
    """The same V in every layer, by value: 1, 1.0 and "1" state one number (compared as JSON alone, a stack stating
    one V in both spellings, which the engine decides as one, was refused); only entries spelled apart are read, the
    first layer's each once."""
    first = layers[0]["V"]
    read = functools.cache(lambda i, j: rational(first[i][j]))
    return all(layer["V"] == first or all(x == first[i][j] or rational(x) == read(i, j) for i, row in
                                          enumerate(layer["V"]) for j, x in enumerate(row)) for layer in layers)


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


class Layer:
    """The quantities of one layer step, computed when first asked for.  centre: in centred form (a certificate's
    "representation": "centred") the c of X = 1 c^T + E, Xm then holding E, and the step's PX and out the
    disagreements of P X and of the output (centred.centred_step): every diameter and mu is that of the tokens."""

    def __init__(self, spec: dict, Xm: arb_mat, X0m: arb_mat, witness: dict, t: int, depth: int = 1,
                 shared: dict | None = None, centre: list | None = None):
        self.spec, self.Xm, self.X0m, self.witness, self.t, self.depth = spec, Xm, X0m, witness, t, depth
        self.shared = {} if shared is None else shared  # what the layers of one recomputation share (_power_bound)
        self.A = forward.query_key_matrix(spec) if "A" in spec else None  # beta A, read once for scores and a
        if centre is None:
            self.moved = None
            self.step = forward.layer_step(spec, None, self.A, Xm)
        else:
            self.moved = centred.centred_step(spec, centre, Xm.tolist())
            self.step = forward.Step(PX=self.moved["E_PX"], out=self.moved["E"])
        self.values: dict = {}

    def tau(self) -> arb:
        """tau(P); in centred form from Delta, which keeps the relative accuracy P's own enclosure loses."""
        if self.moved is not None:
            return centred.centred_tau(self.moved["Pi"], self.moved["Delta"], self.moved["complete"])
        return forward.dobrushin(self.step["P"])

    @functools.cached_property
    def X(self) -> list:
        """The tokens as rows (the few quantities and claims that read them entry by entry)."""
        return self.Xm.tolist()

    def __call__(self, name: str) -> arb:
        if name not in self.values:
            self.values[name] = self._compute(name)
        return self.values[name]

    def _compute(self, name: str) -> arb:
        if name not in _FORMULAS:
            raise ValueError(f"unknown quantity {name!r}")
        return _FORMULAS[name](self)


# The quantities of a layer (certify's PRIMITIVES, written again), each a function of the Layer.
_FORMULAS = {
    "D": lambda s: forward.diameter(s.Xm),
    "D_out": lambda s: forward.diameter(s.step["out_matrix"]),
    "D_PX": lambda s: forward.diameter(s.step["PX_matrix"]), "D_0": lambda s: forward.diameter(s.X0m),
    "mu": lambda s: forward.consensus_distance(s.X), "mu_out": lambda s: forward.consensus_distance(s.step["out"]),
    "tau": lambda s: s.tau(),
    "a": lambda s: _query_key_norm(s),
    "v": lambda s: forward.spectral_norm(forward.matrix(s.spec["V"]), s.witness[f"V{s.t}"]),
    "gap": lambda s: (-s("a") * s("D") * s("D")).exp(),
    "M": lambda s: _power_bound(s),
    "L": lambda s: norms.ffn_lipschitz(s.spec["ffn"], s.witness, s.t),
    "n": lambda s: arb(s.Xm.nrows()), "d": lambda s: arb(s.Xm.ncols()),
}


def _power_bound(s: Layer) -> arb:
    """M of the layer's V; a layer whose V and witnesses of its powers equal an earlier layer's has that
    layer's M (the same computation on the same inputs at the same precision): value.bounded's one V in T
    layers took T^2 norms."""
    V, stated = s.spec["V"], [s.witness[f"V{s.t}^{k}"] for k in range(1, s.depth + 1)]  # every one read
    for V_seen, stated_seen, M in s.shared.setdefault("M", []):
        # a witness stated once and referred to is the same object: compared without its text
        if same(V_seen, V) and all(a is b or same(a, b) for a, b in zip(stated_seen, stated)):
            return M
    M = norms.power_bound(norms.power_norms(forward.matrix(V), s.depth, s.witness, f"V{s.t}"))
    s.shared["M"].append((V, stated, M))
    return M


def _query_key_norm(s: Layer) -> arb:
    """a of the layer's head; a layer whose witness is the very one an earlier layer read (stated once, referred to
    by same_as) and whose head (A, or W_Q, W_K, d_k, beta) is the same has that layer's a (the same computation)."""
    witness = s.witness[f"A{s.t}"]
    head = {key: s.spec[key] for key in ("A", "W_Q", "W_K", "d_k", "beta") if key in s.spec}
    for witness_seen, head_seen, a in s.shared.setdefault("a", []):
        if witness_seen is witness and same(head_seen, head):
            return a
    a = norms.query_key_norm(s.spec, witness, s.A)
    s.shared["a"].append((witness, head, a))
    return a


def same(a, b) -> bool:
    """The same JSON value, types included (true is not 1, nor 1 1.0: the checker refuses one and reads the other):
    the same canonical text."""
    return _CANONICAL.encode(a) == _CANONICAL.encode(b)



WITNESS_FORMS = ({"basis", "top"}, {"basis", "top", "transposed"})  # transposed: forward.spectral_norm reads it
REFERENCE = "same_as"


class _Witnesses(dict):
    """The stated norm witnesses, noting the names the recomputation reads: every stated one must be read (a
    witness nothing reads is a field nobody checks).  Each is a basis and a top vector (and "transposed", which
    forward.spectral_norm judges), or {"same_as": NAME}, the witness stated in full under NAME (value.bounded's
    one V has the same witnesses of its powers in every layer): reading it reads both names.  A basis is rows of
    numbers or, as certify writes one of more than 64 entries, a binary64 block (schema.expanded, which rejects
    a malformed one; outside the digest, as the witness is: a witness can only make a norm looser)."""

    def __init__(self, stated):
        if not isinstance(stated, dict) or not all(
                isinstance(w, dict) and (set(w) in WITNESS_FORMS or _refers(w, stated)) for w in stated.values()):
            raise ValueError("the witness is not a table of norm witnesses, each a basis and a top vector "
                             "(and transposed) or the name of one stated in full (same_as)")
        super().__init__({name: schema.expanded(w) for name, w in stated.items()})
        self.read: set = set()

    def __getitem__(self, name):
        self.read.add(name)
        witness = super().__getitem__(name)
        if REFERENCE in witness:
            self.read.add(witness[REFERENCE])
            return super().__getitem__(witness[REFERENCE])
        return witness


def _refers(witness: dict, stated: dict) -> bool:
    """{"same_as": NAME} with NAME a witness stated in full (not itself a reference: no chains, no loops)."""
    target = witness.get(REFERENCE)
    return (set(witness) == {REFERENCE} and isinstance(target, str) and isinstance(stated.get(target), dict)
            and set(stated[target]) in WITNESS_FORMS)


def _outcome(lhs: arb, rhs: arb):
    if lhs <= rhs:
        return True
    if lhs > rhs:
        return False
    return None


CERT_KEYS = {"format", "kind", "claim", "bound", "verdict", "precision", "inputs", "inputs_sha256", "witness", "values"}
# Optional: "centred" where certify carried the tokens as X = 1 c^T + E (certify_checker.centred), which the
# recomputation then follows; absent, as they are.  Outside the digest: either way every quantity is enclosed, so
# the stated representation can only make the checker's balls wider, never a false statement true.
REPRESENTATION, CENTRED = "representation", "centred"
VALUE_KEYS = {"D_in", "D_out", "bound", "layers", "comparisons"}
COMPARISON_KEYS = {"layer", "lhs_expr", "rhs_expr", "lhs", "rhs", "holds"}


TAU_CLAIMS = {claim for claim, (_, _, pairs) in CLAIMS.items() if any("tau" in side for pair in pairs for side in pair)}


TEXT_READS = 3  # the most a pass reads one number (W_K: the scores, the norm and a window's theory bound)


def work(cert: dict) -> int:
    """The work beyond certify_checker.limits' estimate per layer (in its units): reading the numbers stated as text
    (schema.reading), TEXT_READS times a pass (8000-digit weights took 290 times the estimate without it); for a claim
    that compares tau, its minima of n^3 / 2 pairs of entries each layer (20 s a layer at 512 tokens), ENTRY units each;
    for a claim of windows, each window's (limits.window_parts: its product of k attention matrices, n^3 each, grows
    with the radius of the mask, windowed.graph); for a user's bound, its evaluation at every layer (_bound_work); each
    at the precision and at each ESCALATION of it (limits.passes, as the layers).  0 when malformed (verify judges)."""
    bits = cert.get("precision")
    if type(bits) is not int:
        return 0
    return (text_work(schema.reading([cert.get("inputs"), cert.get("witness")]), bits) + _claim_work(cert)
            + _bound_work(cert) + _centred_work(cert))


def _centred_work(cert: dict) -> int:
    """work's part of the layers in centred form (a stated representation "centred"): each layer's centred step,
    priced as a trajectory's (limits.centred_cost), beside the layer's price, which its norms and quantities keep."""
    if cert.get(REPRESENTATION) != CENTRED:
        return 0
    n, d, layers = sizes(cert)[:3]
    return layers * centred_cost(n, d, cert["precision"], ESCALATION)


def _bound_work(cert: dict) -> int:
    """work's part of a user's bound: its ball operations (operations) at every layer, ENTRY units each (unpriced,
    a bound of 200 terms D**1024 took 18 s a layer at 65536 bits, on a certificate of 6 tokens estimated at 9 s with
    its recomputations, which a stated enclosure that misses the checker's forces)."""
    inputs = cert.get("inputs")
    layers = inputs.get("layers") if isinstance(inputs, dict) else None
    if not isinstance(layers, list):
        return 0
    return bound_work(len(layers) * operations(cert.get("bound")), cert["precision"])


def bound_work(count: int, bits: int) -> int:
    """The work of `count` ball operations of a bound (operations) at the precision and at each ESCALATION of it, and
    once more at the precision with 1 - exp(u) subtracted (_subtracted): also the engine's price of them
    (certify.engine.certificate.bound_work), one formula for both; no operations (no bound) price nothing."""
    return count * ENTRY * (passes(bits, ESCALATION) + limits.cost(bits)) if count else 0


def operations(bound) -> int:
    """The ball operations of one evaluation of a user's bound, the unit its work is priced in (an inequality
    certificate's at every layer, a region proof's at every leaf): a power by a constant k is k products (_power), a
    function call 16.  A bound of 100 factors (a*D**2)**1024 (0 times them, so that every leaf closed) took a second a
    leaf at 2^14 bits, and 25 minutes for the leaves the estimate allowed.  0 for no bound or one verify rejects
    before any evaluation (not a text of the grammar's length)."""
    if not isinstance(bound, str) or not 0 < len(bound) <= MAX_BOUND_LENGTH:
        return 0
    try:
        tree = syntax(bound.strip())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 0
    total = 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant)
                and type(node.right.value) is int and node.right.value >= 0):
            total += node.right.value
        else:
            total += 16 if isinstance(node, ast.Call) else 1
    return total


def text_work(reading: tuple[int, int], bits: int) -> int:
    """work's part of reading the texts (schema.reading's units and count) at the precision and at each ESCALATION
    of it: also the engine's price of them (certify.engine.certificate.text_work), one formula for both."""
    return limits.text_work(reading, bits, TEXT_READS, ESCALATION)


def _claim_work(cert: dict) -> int:
    """work's part of tau or the windows."""
    try:
        X, layers, bits = cert["inputs"]["X"], cert["inputs"]["layers"], cert["precision"]
        n = X["shape"][0] if isinstance(X, dict) else len(X)
        if type(n) is not int or type(bits) is not int or not isinstance(layers, list) or not layers:
            return 0
        n = min(max(n, 0), 1 << 20)
        if cert["claim"] in TAU_CLAIMS:
            return len(layers) * n ** 3 // 2 * ENTRY * passes(bits, ESCALATION)
        mask = layers[0].get("mask")  # none: the complete graph, of radius 1 (not made: verify checks its shape)
        if CLAIMS.get(cert["claim"], ("",))[0] != "window" or (mask and len(mask) != n):  # n within the limit, a mask
            return 0  # of other rows is refused by verify (its graph, n^3 / 64 steps, is searched only on n rows)
        if (radius := windowed.graph(mask)[2] if mask else 1) is None:
            return 0
        first, k = windowed.window_shape(cert["claim"], radius)
        python, arithmetic = window_parts(n, max(sizes(cert)[1], 1), k)
        return max(len(layers) - first - k + 1, 0) * ((1 + len(ESCALATION)) * python
                                                       + arithmetic * passes(bits, ESCALATION))
    except (KeyError, TypeError, IndexError, AttributeError):
        return 0


# The canonical JSON of the digest: json.dumps(..., sort_keys=True, separators=(",", ":")), its encoder built once
# (it keeps no state between calls); a loop in the inputs is a RecursionError, malformed, without the encoder's check.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), check_circular=False)


def digest(cert: dict, fields=("claim", "bound", "inputs", "precision")) -> str:
    """SHA-256 of the canonical JSON of claim, bound, inputs and precision."""
    return hashlib.sha256(_CANONICAL.encode({name: cert[name] for name in fields}).encode("utf-8")).hexdigest()


# An earlier version of certify wrote the same format with a digest of claim, bound and inputs only (and bounds
# as the user typed them): such a certificate is not read (the precision and the bound's one spelling are bound
# since), and is told apart from an edited one by that digest.
EARLIER = ("written by an earlier version of certify (its digest leaves out the precision, which certificates have "
           "bound since), or its precision was edited: this version does not check it; write a current certificate "
           "with certify check CONFIG --out CERT")


def _statement_problem(cert: dict) -> str | dict:
    """The fields are exactly those stated; the digest binds claim, bound, inputs and precision; the
    precision is in range; the inputs are a configuration of the schema; the verdict is decided;
    the stated values have the expected shape.  The reason to reject, or else the inputs with their
    binary64 blocks expanded to rows of numbers (schema.expanded)."""
    if set(cert) - {REPRESENTATION} != CERT_KEYS:
        return f"the certificate's fields are not {sorted(CERT_KEYS)} (and optionally {REPRESENTATION!r})"
    if digest(cert) != cert["inputs_sha256"]:
        if digest(cert, ("claim", "bound", "inputs")) == cert["inputs_sha256"]:
            return EARLIER
        return "the inputs, claim, bound or precision do not match the certificate's digest (edited?)"
    if refused := precision_problem(cert["precision"]):
        return refused
    inputs = schema.expanded(cert["inputs"])
    if unreadable := schema.problem(inputs):
        return unreadable
    if cert["verdict"] not in ("holds", "violated"):
        return f"verdict {cert['verdict']!r} is not a decided verdict"
    stated = cert["values"]
    if not (isinstance(stated, dict) and set(stated) == VALUE_KEYS and isinstance(stated["comparisons"], list)
            and all(isinstance(e, dict) and set(e) == COMPARISON_KEYS for e in stated["comparisons"])
            and isinstance(stated["layers"], list) and all(isinstance(v, dict) for v in stated["layers"])):
        return f"the stated values are not {sorted(VALUE_KEYS)} with comparisons of {sorted(COMPARISON_KEYS)}"
    return inputs


def _target(cert: dict):
    """(scope, inequalities) of the certificate's claim or bound, or a reason to reject it."""
    claim, bound, inputs = cert["claim"], cert["bound"], cert["inputs"]
    if (claim is None) == (bound is None):
        return "a certificate states exactly one of claim and bound"
    if bound is not None:
        try:
            if canonical_bound(bound) != bound:
                return f"the bound is not in its canonical form {canonical_bound(bound)!r}"
        except ValueError as err:
            return str(err)
        return "layer", [("D_out", bound)]
    if claim not in CLAIMS:
        return f"the checker does not know claim {claim!r}"
    scope, hypothesis, inequalities = CLAIMS[claim]
    layers = inputs["layers"]
    if not all(hypothesis(layer) for layer in layers):
        return f"the layers do not satisfy the hypotheses of {claim}"
    if not STACK_HYPOTHESES.get(claim, lambda _: True)(layers):
        return f"the stack does not satisfy the hypotheses of {claim}"
    if scope == "window" and (unmet := windowed.unmet_hypothesis(claim, inputs)):
        return unmet
    return scope, inequalities


def _representation_problem(cert: dict, scope: str) -> str | None:
    """Why a stated representation cannot be followed: the centred form needs every layer translation-equivariant,
    and a window's quantities read the tokens themselves."""
    if REPRESENTATION not in cert:
        return None
    stated = cert[REPRESENTATION]
    if stated != CENTRED:
        return f"representation {str(stated)[:40]!r} is not {CENTRED!r}"
    if scope == "window" or not all(centred.supported(layer) for layer in cert["inputs"]["layers"]):
        return ("the centred representation is stated of layers with LayerNorm or a feed-forward network, or of a"
                " claim of windows: only layers of attention, V and residual are translation-equivariant")
    return None


def _recompute(cert: dict, scope: str, inequalities: list, precision: int):
    """The comparisons (layer, lhs text, rhs text, lhs, rhs) and the layer steps, at this precision."""
    claim, inputs = cert["claim"], cert["inputs"]
    with ctx.workprec(precision):
        X0m = forward.matrix_mat(inputs["X"])  # at least two tokens (schema)
        steps, Xm, shared, c = [], X0m, {}, None
        if cert.get(REPRESENTATION) == CENTRED:
            c, E = centred.centre(X0m.tolist())
            Xm = arb_mat(E)
        for t, spec in enumerate(inputs["layers"]):
            steps.append(Layer(spec, Xm, X0m, cert["witness"], t, len(inputs["layers"]), shared, c))
            Xm = steps[-1].step["out_matrix"]
            c = None if c is None else steps[-1].moved["c"]
        frames = windowed.frames(claim, inputs, steps) if scope == "window" else []
        return _compare(scope, inequalities, steps, frames), steps


def _compare(scope: str, inequalities: list, steps: list, frames: list, expm1: bool = True) -> list:
    """The comparisons (layer, lhs text, rhs text, lhs, rhs) of the recomputed steps, or of a window claim's frames,
    at the working precision; expm1: formula.evaluate's."""
    compared = []
    for lhs_text, rhs_text in inequalities:
        if scope == "window":
            compared += [(frame.t, lhs_text, rhs_text, evaluate(lhs_text, frame, expm1),
                          evaluate(rhs_text, frame, expm1)) for frame in frames]
            continue
        if scope == "stack":
            # D_t for every t <= T: after each layer its lhs against the rhs composed up to it, so a
            # bound that fails at some t < T is violated even where it holds again at T
            bound_value = steps[0]("D")
            for step in steps:
                bound_value = evaluate(rhs_text, lambda name, s=step, b=bound_value: b if name == "D" else s(name),
                                       expm1)
                compared.append((step.t, lhs_text, f"composed {rhs_text}", evaluate(lhs_text, step, expm1),
                                 bound_value))
        else:
            for step in steps:
                compared.append((step.t, lhs_text, rhs_text, evaluate(lhs_text, step, expm1),
                                 evaluate(rhs_text, step, expm1)))
    return compared


def _subtracted(scope: str, inequalities: list, steps: list, precision: int) -> list:
    """The comparisons with 1 - exp(u) evaluated as the subtraction written (formula.evaluate's expm1 off), from the
    same steps: a certificate written before certify evaluated it as -expm1(u) states the balls that subtraction
    gives, honest but less accurate than the checker's own where u is tiny, and decided by them where -expm1's ball
    is the wider (u near -1.5 at 53 bits: up to 8 times); either encloses the true value, so a stated side is judged as
    accurate by either and a comparison decided by either (the layers' own quantities are the same balls).  A window
    claim's formulas have no 1 - exp(u)."""
    if scope == "window":
        return []
    with ctx.workprec(precision):
        return _compare(scope, inequalities, steps, [], expm1=False)


def _enclosures(cert: dict, compared: list, steps: list, precision: int, deciding: int) -> dict:
    """Every enclosure the certificate states, by label: (the checker's own ball, the stated text).
    `deciding`: the comparison whose rhs is the stated bound (the first violated one, else the last)."""
    stated = cert["values"]
    out = {}
    with ctx.workprec(precision):
        for k, ((t, _, _, lhs, rhs), entry) in enumerate(zip(compared, stated["comparisons"])):
            out[f"comparison {k} (layer {t}) lhs"] = (lhs, entry["lhs"])
            out[f"comparison {k} (layer {t}) rhs"] = (rhs, entry["rhs"])
        for step, values in zip(steps, stated["layers"]):
            for name, text in values.items():
                out[f"layer {step.t}: {name}"] = (step(name), text)
        out["D_in"] = (steps[0]("D"), stated["D_in"])
        out["D_out"] = (steps[-1]("D_out"), stated["D_out"])
        out["bound"] = (compared[deciding][-1], stated["bound"])
    return out


def verify(cert: dict) -> tuple[bool, str]:
    """Re-derive an inequality certificate: read what it states, recompute every comparison at the
    stated precision, then accept only when the verdict, every comparison and every stated enclosure
    agree (each must contain the checker's own)."""
    inputs = _statement_problem(cert)
    if isinstance(inputs, str):
        return False, inputs
    cert = {**cert, "inputs": inputs, "witness": _Witnesses(cert["witness"])}  # blocks as rows of numbers
    target = _target(cert)
    if isinstance(target, str):
        return False, target
    scope, inequalities = target
    if refused := _representation_problem(cert, scope):
        return False, refused
    stated, precision = cert["values"], cert["precision"]

    compared, steps = _recompute(cert, scope, inequalities, precision)
    subtracted = functools.cache(lambda: _subtracted(scope, inequalities, steps, precision))
    outcomes = [_outcome(lhs, rhs) for *_, lhs, rhs in compared]
    if None in outcomes and (again := subtracted()):
        outcomes = [_outcome(lhs, rhs) if o is None else o for o, (*_, lhs, rhs) in zip(outcomes, again)]
    verdict = "violated" if False in outcomes else "holds" if all(o is True for o in outcomes) else None
    if verdict != cert["verdict"]:
        return False, f"the checker finds {verdict or 'undecided'} at {precision} bits, the certificate says {cert['verdict']}"
    if len(stated["comparisons"]) != len(compared):
        return False, "the certificate lists a different number of comparisons"
    for (t, lhs_text, rhs_text, lhs, rhs), entry, outcome in zip(compared, stated["comparisons"], outcomes):
        if type(entry["layer"]) is not int or entry["layer"] != t:  # a stack claim's too: one entry per layer
            return False, f"comparison at layer {t}: the certificate states it at layer {str(entry['layer'])[:20]}"
        if entry["holds"] is not outcome:
            return False, f"comparison at layer {t}: stated outcome {entry['holds']} differs from {outcome}"
        if (entry["lhs_expr"], entry["rhs_expr"]) != (lhs_text, rhs_text):
            return False, f"comparison at layer {t}: it states {entry['lhs_expr']} <= {entry['rhs_expr']}"
    if len(stated["layers"]) != len(steps):
        return False, "the certificate lists values for a different number of layers"
    deciding = outcomes.index(False) if False in outcomes else len(compared) - 1
    enclosures = _enclosures(cert, compared, steps, precision, deciding)
    pairs = {}  # one (enclosure, stated text) recurs under several labels (D_in is layer 0's D): read once
    for label, (mine, text) in enclosures.items():
        pairs.setdefault((id(mine), text), (label, mine, text))
    # A ball the checker cannot make finite (exp of scores known to +-10^50: D_out of a layer a violated one
    # precedes) is agreed with by one stated as not finite (exact.agrees), or by a finite one judged finer.
    unfinished = {label for label, (mine, _) in enclosures.items() if not mine.is_finite()}
    as_subtracted = functools.cache(lambda: _enclosures(cert, subtracted(), steps, precision, deciding)
                                    if subtracted() else {})
    for label, mine, text in pairs.values():
        if label not in unfinished and text not in NON_FINITE and not (
                accurate(mine, text, precision) or accurate(as_subtracted().get(label, (mine,))[0], text, precision)):
            return False, f"{label}: the stated {str(text)[:40]} is not as accurate as {precision} bits give"
    # Each stated enclosure must contain the checker's own (so the true value); an honest one that
    # misses it only by the two evaluations' rounding does so at a higher precision.
    inside = {key: agrees(mine, text, precision) if not mine.is_finite() or text in NON_FINITE else contains(mine, text)
              for key, (_, mine, text) in pairs.items()}
    missing = {label for label, (mine, text) in enclosures.items() if not inside[id(mine), text]}

    def still_missing(factor: int, labels: set) -> set:
        compared, steps = _recompute(cert, scope, inequalities, factor * precision)
        again = _enclosures(cert, compared, steps, factor * precision, deciding)
        return {label for label in labels if not (agrees(*again[label], precision) if label in unfinished
                                                  else contains(*again[label]))}

    missing = finer(missing, still_missing)
    if unread := sorted(set(cert["witness"]) - cert["witness"].read):
        return False, f"the certificate states a witness {unread[0][:40]!r} that no stated quantity uses"
    if missing:
        label = sorted(missing)[0]
        return False, (f"{label}: the stated {str(enclosures[label][1])[:40]} does not contain the checker's "
                       f"enclosure {enclosures[label][0].str(8, radius=True)} (it may exclude the true value)")
    return True, f"confirmed: {cert['verdict']} at {precision} bits"
