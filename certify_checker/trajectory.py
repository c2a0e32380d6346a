"""Checker for "trajectory" certificates: D_t, mu_t, tau_t (and the approach r_t) through T layers,
and every bound curve's outcome at every t, re-derived from the exact inputs.

Layer t is the configuration's layer t mod L.  When no layer has LayerNorm or a feed-forward
network, the tokens are carried as X = 1 c^T + E (certify_checker.centred), so D_t = D(E_t) keeps its
relative accuracy however small it gets.  Otherwise the plain forward pass (forward.layer_step) runs in
absolute coordinates.

Step precisions.  Point t (D_t, mu_t, tau_t and layer t) is recomputed at the precision the
certificate states for it (step_precisions, bound by the digest; without that field every step at
precision).  Any precision gives an enclosure, so the schedule is not trusted, only followed: it
must cover exactly the points the checker computes, none above precision (the limits' estimate), the
first at precision (the precision the certificate and the confirmation name).

Curves (hypotheses checked here), compared as natural logarithms when the quantity is certainly
positive: global.step g_a(D_{t-1}), global.composed g iterated from D_0 (in log form),
cubic a^{-1/2} (sqrt(a) D_0)^(3^t) with a = max a_t (when sqrt(a) D_0 < 1 is certified), all for
pure attention; value.bounded M (1 - exp(-a M^2 D_0^2))^t D_0, value.approach M prod_{s<t} tau_s D_0 and
value.expansive c^{-1/2} (sqrt(c) D_0)^(3^t) with c = ||V||_2 a (when sqrt(c) D_0 < 1 is certified) for
X' = P X V^T with one V.  g_a(D) = -expm1(-a D^2) D.
"""

from __future__ import annotations

import hashlib
import json
import re

from flint import arb, ctx, fmpz

from certify_checker import centred
from certify_checker import forward, precision_problem, sizes
from certify_checker import inequality
from certify_checker import norms
from certify_checker import schema
from certify_checker.exact import as_accurate
from certify_checker.exact import finer
from certify_checker.limits import cost, passes, step_cost

RESOLVED_BITS = 20
MAX_LAYERS = 10_000
PURE_CURVES = ("global.step", "global.composed", "cubic")
VALUE_CURVES = ("value.bounded", "value.approach", "value.expansive")
# Every field is checked (certify.studies.trajectory_certificate writes these and nothing else): an
# unchecked one, a point's "t", an approach or a curve where none is drawn, M without a value curve,
# would show numbers the checker never confirmed.
CERT_KEYS = {"format", "kind", "layers", "inputs", "inputs_sha256", "representation", "precision", "curve_precision",
             "norm_precision", "witness", "a", "curves", "M", "points", "verdict"}
CURVE_WORK = 64  # ball operations per point beyond its step: the curves' logarithms, the stated balls read and compared
# A stated D, mu, tau or curve that misses the checker's ball by rounding: the steps through it and the curves are
# recomputed at twice their precision (exact.finer; one finer run, as a trajectory's may be its whole work), so
# every step and curve is priced at both (step_prices).  Not named ESCALATION, which over_limits reads as the multiples
# a kind's configured layers are recomputed at: a trajectory's norms are not, its steps are priced here.
FINER = (2,)
# Characters of a layer's numbers stated as text a unit at every step: a ball of an exact rational of 4300 digits
# over 4300 costs up to 3 us, 8600 characters (0.3 ns each), priced nowhere else (STEP_WEIGHT's 2 us an entry of A)
TEXT_DIGITS = 256
STEPS_KEY = "step_precisions"  # optional: certificates written before it ran every step at precision
POINT_KEYS = {"t", "resolved", "D", "mu", "tau", "approach", "log_curves", "checks"}


def digest(layers: int, inputs: dict, precisions: list) -> str:
    """sha256 of what the certificate is about, its precisions (the three, then the step precisions
    when stated) bound exactly."""
    canonical = json.dumps({"kind": "trajectory", "layers": layers, "inputs": inputs, "precisions": precisions},
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def read_ball(value) -> tuple[arb, arb] | None:
    """[mid mantissa, mid exponent, radius mantissa, radius exponent] as decimal strings, as the exact numbers
    (mid, rad); null for none; "non-finite" (nan, 0) for a ball that is not finite."""
    if value is None:
        return None
    if value == "non-finite":
        return arb.nan(), arb(0)
    # a list (an object's four keys, or a text's four digits, were read as the integers, its values shown unread) of
    # texts (str(int): fmpz reads " 5", True)
    if not (isinstance(value, list) and len(value) == 4
            and all(type(v) is str and re.fullmatch("-?[0-9]+", v, re.A) for v in value)):
        raise ValueError(f"a ball is not a list of four integers in decimal ASCII digits: {str(value)[:80]}")
    m, e, r, f = (fmpz(v) for v in value)  # (int() stops at 4300 digits; a 65536-bit midpoint has 19729)
    if r < 0:
        raise ValueError("negative radius")
    return arb((m, e)), arb((r, f))


def agrees(mine: arb, theirs: tuple[arb, arb] | None, precision: int) -> bool:
    """The stated (mid, rad) contains the recomputed ball and is about as accurate (exact.accurate's slack);
    a non-finite one agrees only with a non-finite recomputation."""
    return agreement(mine, theirs, precision) == "agrees"


def agreement(mine: arb, theirs: tuple[arb, arb] | None, precision: int) -> str:
    """"agrees" (as agrees), "outside" (finite, about as accurate, but not containing the recomputed ball: a
    finer recomputation may be, exact.finer) or "differs".  Containment is decided on the ends
    mid -+ rad formed exactly (rounded inward past 2^20 bits), never on arb(mid, rad): arb rounds that radius up
    by about 2^-29 of it, and a stated ball missing the recomputed one (and the true value) by as much passed."""
    if theirs is None or not (theirs[0].is_finite() and mine.is_finite()):
        return "agrees" if theirs is not None and not theirs[0].is_finite() and not mine.is_finite() else "differs"
    mid, rad = theirs
    if not as_accurate(mine, arb(mid, rad), precision):
        return "differs"
    return "agrees" if inside(mine, theirs) else "outside"


def inside(mine: arb, theirs: tuple[arb, arb]) -> bool:
    """The stated finite (mid, rad) contains the finite recomputed ball (agreement's exact ends)."""
    (mid, rad), parts = theirs, [x.mid().man_exp() for x in (mine.mid(), mine.rad(), *theirs)]
    spans = [(int(e), int(e) + int(m).bit_length()) for m, e in parts if m != 0]  # exact sums need these digits
    digits = max((top for _, top in spans), default=0) - min((low for low, _ in spans), default=0) + 2
    with ctx.workprec(min(max(digits, ctx.prec), 1 << 20)):
        return bool((mid - rad).upper() <= mine.lower()) and bool(mine.upper() <= (mid + rad).lower())


def resolved(x: arb) -> bool:
    return (x.is_zero() and x.is_exact()) or x.rel_accuracy_bits() >= RESOLVED_BITS


def run(inputs: dict, T: int, value_curves: bool, steps: list, flags: list) -> tuple[list, list, list, bool]:
    """Points {D, mu, tau, resolved} through the first one that flags[t] (the stated resolutions) leaves unresolved,
    or through the last step precision when those end first; point t at steps[t] bits (the centre at steps[0]); the
    centred Y_t and drifts (value curves).  The flags are followed, then checked (_confirm_points): the engine's ball
    and the checker's may straddle RESOLVED_BITS by their rounding, and a run that stopped where the certificate's
    went on confirmed nothing."""
    layers = inputs["layers"]
    with ctx.workprec(steps[0]):
        X0 = forward.matrix(inputs["X"])
        use_centred = all(centred.supported(layer) for layer in layers[:T])
        X = centred.centre(X0) if use_centred else X0
    Y, Ys, drifts, points = X, [], [], []
    for t, bits in enumerate(steps[:T + 1]):
        with ctx.workprec(bits):
            E = X[1] if use_centred else X
            point = {"D": forward.diameter(E), "mu": forward.consensus_distance(E), "tau": None, "resolved": flags[t]}
            points.append(point)
            Ys.append(Y)
            if not flags[t] or t == T or t + 1 == len(steps):
                break
            layer = layers[t % len(layers)]
            if use_centred:
                step = centred.centred_step(layer, *X)
                point["tau"] = centred.centred_tau(step["Pi"], step["Delta"], step["complete"])
                if value_curves:
                    y_c, y_E, drift = centred.transport(step["Pi"], step["Delta"], step["complete"], *Y)
                    Y = (y_c, y_E)
                    drifts.append(drift)
                X = (step["c"], step["E"])
            else:
                step = forward.layer_step(layer, X)
                point["tau"] = forward.dobrushin(step["P"])
                X = step["out"]
    return points, Ys, drifts, use_centred


def approach(inputs: dict, points: list, Ys: list, drifts: list, M: arb) -> list:
    """Enclosures of r_t = max_i ||x_i^(t) - V^t c|| (certify's trajectory docstring): observed
    distance to V^t c^, c^ the mean row of Y_last, widened by M D(Y_last), capped by M D(Y_t)."""
    last = max((t for t, p in enumerate(points) if p["resolved"]), default=None)
    if last is None:  # D_0 unresolved: no Y_last to take c^ from (certify encloses nothing either)
        return []
    n, d = len(inputs["X"]), len(inputs["X"][0])
    V = forward.matrix(inputs["layers"][0]["V"])
    G_last = Ys[last][1]
    miss = M * forward.diameter(G_last)
    offset = [-(sum((row[m] for row in G_last), arb(0)) / n) for m in range(d)]  # y_last - c^
    rows_by_t = {}
    for t in reversed(range(last + 1)):
        if t < last:
            offset = [o - x for o, x in zip(offset, drifts[t])]
        rows_by_t[t] = [[e + o for e, o in zip(row, offset)] for row in Ys[t][1]]
    power = [[arb(int(i == j)) for j in range(d)] for i in range(d)]
    out = []
    for t in range(last + 1):
        moved = forward.product(rows_by_t[t], forward.transpose(power))
        observed = None
        for row in moved:
            length = forward.norm(row)
            observed = length if observed is None else observed.max(length)
        ceiling = M * forward.diameter(Ys[t][1])
        out.append((observed - miss).lower().max(arb(0)).union((observed + miss).upper().min(ceiling.upper())))
        power = forward.product(V, power)
    return out


def one_minus_gap(a: arb, D: arb) -> arb:
    return -centred.expm1(-(a * D * D))


def log_g(a: arb, log_D: arb) -> arb:
    """log((1 - exp(-a D^2)) D) from log D: for x = a D^2 <= 2^-prec, log(1 - e^-x) = log x + [-x, 0]."""
    log_x = a.log() + 2 * log_D
    if log_x.upper() < -ctx.prec * arb(2).log():
        return log_x + arb(0).union(-log_x.upper().exp()) + log_D
    return one_minus_gap(a, (log_D).exp()).log() + log_D


def cubic(c: arb, D0: arb, T: int, name: str) -> dict:
    """{t: log of c^{-1/2} (sqrt(c) D_0)^(3^t)} for t = 1..T, the bound of layers with D' <= c D^3 (u = sqrt(c) D
    gives u' <= u^3); stated where sqrt(c) D_0 < 1 is not proven, the curve is rejected."""
    root = c.sqrt()
    base = root * D0
    if not (c > 0 and base < 1):
        raise ValueError(f"the {name} curve is stated but its sqrt(c) D_0 < 1 is not proven")
    return {t: arb(3) ** t * base.log() - root.log() for t in range(1, T + 1)}


def curves(names, inputs: dict, T: int, points: list, a: list, M, rho) -> dict:
    """name -> {t: natural log of the curve} for t = 1..T (as certify draws them); M and rho = ||V||_2 for the value
    curves."""
    L = len(inputs["layers"])
    D0 = forward.diameter(forward.matrix(inputs["X"]))
    a_max = a[0]
    for value in a[1:min(T, L)]:
        a_max = a_max.max(value)
    out = {name: {} for name in names}
    if "global.step" in names:
        for t in range(1, T + 1):
            if t - 1 < len(points) and points[t - 1]["resolved"]:
                previous = points[t - 1]["D"]
                out["global.step"][t] = one_minus_gap(a[(t - 1) % L], previous).log() + previous.log()
    if "global.composed" in names:
        log_bound = D0.log()
        for t in range(1, T + 1):
            log_bound = log_g(a[(t - 1) % L], log_bound)
            out["global.composed"][t] = log_bound
    if "cubic" in names:  # D' <= a D^3 (collapse.cubic)
        out["cubic"] = cubic(a_max, D0, T, "cubic")
    if "value.bounded" in names:
        log_factor = one_minus_gap(a_max, M * D0).log()
        for t in range(1, T + 1):
            out["value.bounded"][t] = M.log() + t * log_factor + D0.log()
    if "value.approach" in names:
        log_product = M.log() + D0.log()
        for t in range(1, T + 1):
            if t - 1 >= len(points) or points[t - 1]["tau"] is None:
                break
            log_product = log_product + points[t - 1]["tau"].log()
            out["value.approach"][t] = log_product
    if "value.expansive" in names:  # D' <= ||V|| (1 - exp(-a D^2)) D <= ||V|| a D^3 (value.expansive)
        out["value.expansive"] = cubic(rho * a_max, D0, T, "value.expansive")
    return out


def _hypotheses_hold(names, layers: list) -> str | None:
    for name in names:
        if name in PURE_CURVES and not all(inequality._pure(layer) for layer in layers):
            return f"curve {name} needs pure attention in every layer"
        if name in VALUE_CURVES and not (all(inequality.value_layer(layer) for layer in layers)
                                         and inequality._one_value_matrix(layers)):
            return f"curve {name} needs X' = P X V^T with one V in every layer"
        if name not in PURE_CURVES + VALUE_CURVES:
            return f"unknown curve {name!r}"
    return None


def _compare(quantity: arb, log_curve: arb) -> str:
    """quantity <= exp(log_curve), through logarithms when the quantity is certainly positive."""
    if quantity.is_zero() and quantity.is_exact():
        return "holds"  # every curve is positive
    mine, theirs = (quantity.log(), log_curve) if quantity > 0 else (quantity, log_curve.exp())
    if mine <= theirs:
        return "holds"
    if mine > theirs:
        return "violated"
    return "undecided"


def _confirm_points(stated: list, points: list, approaches: list, names: list, drawn: dict, precision: int,
                    curve_precision: int, steps: list, missing: set) -> tuple[str | None, list]:
    """Every stated point against the recomputed one (D, mu, tau at their step's precision): enclosures,
    curves and outcomes (the problem, or None, and the outcomes); the (t, key) of a stated D, mu, tau or curve
    that misses the recomputed ball though about as accurate are added to missing (for _recompute_points)."""
    outcomes = []
    for t, entry in enumerate(stated):
        if set(entry) != POINT_KEYS or type(entry["t"]) is not int or entry["t"] != t:
            return f"point {t}: its fields are not {sorted(POINT_KEYS)} with t = {t}", []
        if not (isinstance(entry["log_curves"], dict) and isinstance(entry["checks"], dict)):
            return f"t = {t}: log_curves and checks are objects", []
        if t >= len(approaches) and entry["approach"] is not None:
            return f"t = {t}: an approach is stated where the checker computes none", []
        if set(entry["log_curves"]) != {name for name in names if drawn[name].get(t) is not None}:
            return f"t = {t}: the stated curves are not those the checker draws", []
        mine = points[t] if t < len(points) else None
        is_resolved = mine is not None and mine["resolved"]  # as stated, where the checker computes the point
        if entry["resolved"] is not is_resolved:
            return f"t = {t}: stated resolved = {entry['resolved']!r} (not a boolean, or past the stated run's end)", []
        if is_resolved and not resolved(mine["D"]):
            missing.add((t, "resolved"))  # resolved at a finer precision, or not at all (_recompute_points)
        for key in ("D", "mu", "tau"):
            theirs = read_ball(entry[key])
            if (theirs is None) != (mine is None or mine[key] is None):
                return f"t = {t}: {key} stated where the checker has none, or missing", []
            found = "agrees" if theirs is None else agreement(mine[key], theirs, steps[t])
            if found == "differs":
                return f"t = {t}: stated {key} does not match the recomputed enclosure", []
            if found == "outside":
                missing.add((t, key))
        if t < len(approaches):
            if not agrees(approaches[t], read_ball(entry["approach"]), precision):
                return f"t = {t}: stated approach does not match the recomputed enclosure", []
        if set(entry["checks"]) - set(names):
            return f"t = {t}: a check of a curve that is not drawn", []
        for name in names:
            value = drawn[name].get(t)
            if value is None:
                if name in entry["checks"]:
                    return f"t = {t}: {name} is checked where the checker draws no value", []
                continue
            found = agreement(value, read_ball(entry["log_curves"][name]), curve_precision)
            if found == "differs":
                return f"t = {t}: stated {name} does not match the recomputed curve", []
            if found == "outside":
                missing.add((t, name))
            if name == "value.approach":
                quantity = approaches[t] if t < len(approaches) else None
            else:
                quantity = None if mine is None else mine["D"]
            with ctx.workprec(curve_precision):
                outcome = _compare(quantity, value) if is_resolved and quantity is not None else "unresolved"
            if entry["checks"].get(name) != outcome:
                return f"t = {t}: {name} stated {entry['checks'].get(name)}, the checker finds {outcome}", []
            outcomes.append(outcome)
    return None, outcomes


def _recompute_points(inputs: dict, T: int, stated: list, steps: list, flags: list, factor: int, labels: set,
                      names: list, a: list, M, rho, curve_precision: int) -> set:
    """The (t, key) of labels (D, mu, tau or a curve's name) whose stated ball misses the one recomputed with every
    step at factor times its precision (the steps through the last t of labels, and the next: tau_t is computed
    with step t + 1) and the curves from those points at factor times their precision (a and M as enclosed); and
    of (t, "resolved") those whose D_t recomputed so has fewer than RESOLVED_BITS."""
    last = max(t for t, _ in labels)
    points = run(inputs, T, False, [factor * bits for bits in steps[:last + 2]], flags)[0]
    finer_balls = {(t, key): points[t][key.replace("resolved", "D")] for t, key in labels
                   if key in ("D", "mu", "tau", "resolved") and t < len(points)}
    if any(key not in ("D", "mu", "tau", "resolved") for _, key in labels):
        with ctx.workprec(factor * curve_precision):
            drawn = curves(names, inputs, T, points, a, M, rho)
        finer_balls.update({(t, key): drawn[key].get(t) for t, key in labels if key in drawn})
    return {(t, key) for t, key in labels if (mine := finer_balls.get((t, key))) is None or not mine.is_finite()
            or not (resolved(mine) if key == "resolved" else
                    inside(mine, read_ball(stated[t][key] if key in POINT_KEYS else stated[t]["log_curves"][key])))}


def stated_steps(cert: dict) -> list | None:
    """The step precisions stated, when well-formed (1 to T + 1 in range, none above precision), else None."""
    T, top, steps = cert.get("layers"), cert.get("precision"), cert.get(STEPS_KEY)
    if type(T) is not int or not 1 <= T <= MAX_LAYERS or precision_problem(top) or not isinstance(steps, list):
        return None
    return steps if 1 <= len(steps) <= T + 1 and not any(precision_problem(p) or p > top for p in steps) else None


def step_prices(cert: dict):
    """The price of one step of this certificate's trajectory at given bits, in work units: limits.step_cost of its
    sizes (over_limits') there and at each FINER multiple, and reading its widest layer's text (_digits) at each.
    certify.studies.trajectory_budget meters a run in it."""
    n, d, _, hidden, _, d_k, _, _ = sizes(cert)
    layers = cert["inputs"].get("layers") if isinstance(cert.get("inputs"), dict) else None
    text = max(map(_digits, layers), default=0) // TEXT_DIGITS if isinstance(layers, list) else 0
    return lambda bits: step_cost(n, d, hidden, d_k, bits, FINER) + (1 + len(FINER)) * text


def _digits(value, key: str | None = None) -> int:
    """The characters of a layer's numbers stated as text, or an integer's digits: each is made a ball at every
    step's precision (exact.ball of the fmpq schema.exact read), a binary64 one at no cost beyond the step's."""
    if isinstance(value, dict) and set(value) != {"binary64", "shape"}:  # a block is binary64
        return sum(_digits(v, k) for k, v in value.items())
    if isinstance(value, list):
        return sum(_digits(v, key) for v in value)
    if key not in schema.NUMBERS:
        return 0
    return len(value) if isinstance(value, str) else value.bit_length() // 3 if type(value) is int else 0


def _extent(cert: dict) -> tuple[int, int]:
    """(the T + 1 points the checker may compute, the highest precision stated)."""
    T = cert.get("layers")
    top = max([p for p in map(cert.get, ("precision", "curve_precision", "norm_precision")) if type(p) is int] + [0])
    return (min(max(T, 0), MAX_LAYERS) + 1 if type(T) is int else 0), top


def stated_price(cert: dict) -> int:
    """step_prices summed over the steps the checker computes: each at its stated precision, or all T + 1 at the
    highest without a well-formed list (rejected before any step)."""
    (count, top), steps, price = _extent(cert), stated_steps(cert), step_prices(cert)
    return count * price(top) if steps is None else sum(map(price, steps))


def step_work(cert: dict) -> int:
    """The 53-bit layer steps the checker computes beyond the configured layers and the stated steps: with a value
    curve (or no list of curves) T + 1 once at the highest precision (the powers of V at norm_precision, the
    approach at precision)."""
    (count, top), curves = _extent(cert), cert.get("curves")
    value = not isinstance(curves, list) or any(c in VALUE_CURVES for c in curves if isinstance(c, str))
    return count * cost(top) if value else 0


def work(cert: dict, priced: int | None = None) -> int:
    """The work beyond certify_checker.limits' estimate of the configured layers: the steps (priced: their
    step_prices summed, stated_price unless given, certify_checker.over_limits), each point's CURVE_WORK at
    the curves' precision and FINER times it, and reading the inputs' texts once (schema.exact, by schema.reading:
    "12345678e-4000" takes 35 us, a p/q of 4300-digit parts 0.4 ms)."""
    bits = cert.get("curve_precision")
    curves = _extent(cert)[0] * CURVE_WORK * passes(bits, FINER) if type(bits) is int else 0  # recomputed too
    return (stated_price(cert) if priced is None else priced) + curves + schema.reading(cert.get("inputs"))[0]


def verify(cert: dict) -> tuple[bool, str]:
    if set(cert) - {STEPS_KEY} != CERT_KEYS:
        return False, f"the certificate's fields are not {sorted(CERT_KEYS)} (and optionally {STEPS_KEY})"
    inputs, T = cert["inputs"], cert["layers"]
    if type(T) is not int or not 1 <= T <= MAX_LAYERS:
        return False, f"layers {T!r} out of range"
    precisions = [cert["precision"], cert["curve_precision"], cert["norm_precision"]]
    bound = precisions + ([cert[STEPS_KEY]] if STEPS_KEY in cert else [])
    if digest(T, inputs, bound) != cert["inputs_sha256"]:
        return False, "the inputs, the number of layers or the precisions do not match the certificate's digest (edited?)"
    if any(precision_problem(p) for p in precisions):
        return False, f"precisions {precisions!r} out of range"
    steps = stated_steps(cert) if STEPS_KEY in cert else [precisions[0]] * (T + 1)  # as the limits' estimate
    if steps is None:
        return False, f"{STEPS_KEY} must list 1 to {T + 1} precisions in range, none above precision"
    if steps[0] != precisions[0]:  # precision is the run's first step's: a 53-bit run was confirmed "at 65536 bits"
        return False, f"the first step is at {steps[0]} bits, not at the certificate's precision {precisions[0]}"
    inputs = schema.expanded(inputs)  # a binary64 block (a matrix of more than 64 numbers) as its rows of numbers
    if unreadable := schema.problem(inputs):
        return False, unreadable
    names = cert["curves"]  # a list of names (an object's values would be shown, never read), none twice
    if not (isinstance(names, list) and all(isinstance(name, str) for name in names)) or len(set(names)) != len(names):
        return False, "the curves are not a list of distinct curve names"
    used = inputs["layers"][:T]
    if problem := _hypotheses_hold(names, used):
        return False, problem
    inputs = schema.exact(inputs)  # every number read once, not at every step through its layer
    precision, curve_precision, norm_precision = precisions
    stated = cert["points"]
    witness = cert["witness"]
    read = {f"A{t}" for t in range(len(inputs["layers"]))} | {f"V0^{k}" for k in range(1, T + 1) if set(names) & set(VALUE_CURVES)}
    # an unread witness, or a field beside a witness's basis and top, would be shown, never checked
    if not (isinstance(witness, dict) and set(witness) == read
            and all(isinstance(w, dict) and set(w) in inequality.WITNESS_FORMS for w in witness.values())):
        return False, ("the witness is not exactly the norm witnesses read (each layer's A, V's powers for a value "
                       "curve), each a basis and a top vector")
    if len(stated) != T + 1:  # before the run: a miscount costs nothing
        return False, "the certificate lists a different number of points"
    flags = [isinstance(entry, dict) and entry.get("resolved") is True for entry in stated]
    points, Ys, drifts, use_centred = run(inputs, T, "value.approach" in names, steps, flags)
    if cert["representation"] != ("centred" if use_centred else "absolute"):
        return False, f"the certificate says {cert['representation']} coordinates"
    if STEPS_KEY in cert and (len(points) != len(steps) or (len(points) <= T and points[-1]["resolved"])):
        return False, (f"{len(steps)} step precisions are stated, the checker computes {len(points)} points "
                       f"through the first unresolved one")
    M = rho = None
    if any(name in VALUE_CURVES for name in names):
        with ctx.workprec(norm_precision):
            powers = norms.power_norms(forward.matrix(inputs["layers"][0]["V"]), T, witness, "V0")
            M, rho = norms.power_bound(powers), powers[0]
        if not agrees(M, read_ball(cert["M"]), norm_precision):
            return False, "stated M does not match the recomputed value"
    elif cert["M"] is not None:
        return False, "M is stated but no value curve is drawn"
    approaches = []
    if "value.approach" in names:
        with ctx.workprec(precision):
            approaches = approach(inputs, points, Ys, drifts, M)
    with ctx.workprec(curve_precision):
        # by the witness's size: a thin head's d_k x d_k (W_K^T W_K certainly positive definite, else rejected) or
        # the d x d A's, which certificates stated for thin heads too before they took the reduction
        a = [norms.query_key_norm(layer, witness[f"A{t}"]) for t, layer in enumerate(inputs["layers"])]
        if len(cert["a"]) != len(a) or not all(agrees(mine, read_ball(theirs), curve_precision)
                                               for mine, theirs in zip(a, cert["a"])):
            return False, "stated ||A_t||_2 do not match the recomputed enclosures"
        drawn = curves(names, inputs, T, points, a, M, rho)
    missing = set()
    problem, outcomes = _confirm_points(stated, points, approaches, names, drawn, precision, curve_precision, steps,
                                        missing)
    if problem:
        return False, problem
    # an honest ball that misses the checker's own only by the two evaluations' rounding contains a finer one
    if missing := finer(missing, lambda factor, labels: _recompute_points(inputs, T, stated, steps, flags, factor,
                                                                          labels, names, a, M, rho, curve_precision),
                                 FINER):
        t, key = min(missing)
        told = f"stated resolved, but D has fewer than {RESOLVED_BITS} bits in" if key == "resolved" else f"stated {key} does not match"
        return False, f"t = {t}: {told} the recomputed enclosure (nor one at {FINER[-1]} times its precision)"
    all_resolved = all(flags)  # each stated exactly true (checked per point above), not merely truthy
    if "violated" in outcomes:
        verdict = "violated"
    elif all_resolved and all(o == "holds" for o in outcomes):
        verdict = "holds" if names else "enclosed"
    else:
        verdict = "undecided"
    if cert["verdict"] != verdict:
        return False, f"the checker finds {verdict}, the certificate says {cert['verdict']}"
    return True, f"confirmed: trajectory {verdict} through {T} layers at {precision} bits"

