"""rigorous -> escalate precision -> verdict + certificate; the float64 screen on request.

1. The ball pass evaluates the claim's formulas in arb at 53 bits, then 106, 212, ... up to a cap; past the first
   rung a stack of translation-equivariant layers in centred form (carries_centred), where a collapsed D_t keeps its
   digits.
   Each norm is enclosed from a witness (singular vectors): the SVD of the binary64 midpoints of
   its ball matrix (the inputs themselves when they are binary64), found on first use and kept for
   the later precisions and the certificate; from 106 bits refined to the precision (certify.core.refine),
   so that the norm's enclosure narrows with it, as far as the certificate's share of the checker's
   limits allows (certificate.witness_bits).
   Each inequality lhs <= rhs is three-valued: certainly holds, certainly violated, or
   undecided (the balls overlap).  Verdict: violated if any inequality is certainly violated,
   holds if all certainly hold, otherwise undecided: at the cap, or when the sides are equal
   (ball arithmetic cannot decide an exact equality), or sooner when a bound overflows arb's exponent
   range at every precision up to the cap (certify.core.expr.undefined).
2. A decided verdict is re-derived by the independent checker from the certificate before it
   is reported; a precision at which the checker cannot follow is escalated too.
3. The float64 screen (Result.screen: the same formulas in numpy, with witnesses of its own) is
   evaluated only when something reads it, after the verdict; it never decides anything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from flint import arb

from certify import claims
from certify.engine import certificate
from certify.core import config
from certify.core import expr
from certify.core import refine
from certify.core.arith import BALL, FLOAT64
from certify.core.arguments import integer
from certify.claims import Claim, Inequality, applies_always
from certify.errors import BadInput, UndefinedLayer
from certify.core import centred
from certify.core.layers import Step, apply_layer, layer_arrays
from certify.core.primitives import PRIMITIVES, LayerView
from certify.core import windows
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits, raised_with, resource_problem
from certify.core.numbers import float_bounds, signed_text
from certify.core.precision import (DEFAULT_MAX_PRECISION, PRECISION_LIMIT, START_PRECISION, check_precision_cap,
                                    escalate, highest_allowed, is_wide, working)
from certify.core.verdicts import EXIT_CODES, HOLDS, NOT_CERTIFIED, UNDECIDED, VIOLATED, short_repr


@dataclass
class Comparison:
    """One inequality lhs <= rhs at one layer (a stack claim's: after that layer, against its rhs composed
    through the layers up to it), its two sides and its three-valued outcome."""
    layer: int
    lhs_expr: str
    rhs_expr: str
    lhs: object
    rhs: object
    outcome: bool | None  # True holds, False violated, None undecided
    undefined: str = ""  # where an rhs with no finite value loses it (certify.core.expr.undefined)
    finite_from: int = 0  # the least precision at which it can have one, past arb's range below (expr.undefined)


@dataclass
class Result:
    """The outcome of certify.check: the verdict, the comparisons, the checker-confirmed certificate (None when
    undecided), and the float64 screen's comparisons on request (screen)."""
    verdict: str
    target: str  # claim id, or "bound: EXPR"
    precision: int | None
    comparisons: list[Comparison]
    reason: str = ""
    certificate: dict | None = field(default=None, repr=False)
    # what the float64 screen evaluates: the configuration and the claim decided
    case: config.Case | None = field(default=None, repr=False, compare=False)
    claim: Claim | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def screen(self) -> list[Comparison]:
        """The float64 screen's comparisons (not certified), evaluated on first read with witnesses of its
        own, so that reading it changes nothing decided; [] when float64 leaves its range (float64_screen)."""
        return [] if self.case is None else float64_screen(self.case, self.claim)

    @property
    def exit_code(self) -> int:
        """The exit code of `certify check`: 0 holds, 1 violated, 3 undecided."""
        return EXIT_CODES[self.verdict]

    @property
    def tightest(self) -> Comparison:
        """The comparison closest to failing: largest lhs - rhs relative to |rhs|, ordered by the exact midpoints
        (in binary64, relative slacks of 1e-434 and -1e-435 were both 0.0, and a violated result showed a margin
        that holds)."""
        def closeness(c):
            lhs, rhs = _ball(c.lhs), _ball(c.rhs)
            slack = (rhs - lhs) / abs(rhs) if rhs != 0 else rhs - lhs
            return slack.mid()  # exact: arb orders two exact values exactly
        with self._working_precision():
            return min(self.comparisons, key=closeness)

    @property
    def margin(self) -> tuple[float, float]:
        """(lo, hi): binary64 bounds of rhs - lhs of the tightest comparison, rounded outward (a margin
        below binary64's range, such as 2e-434, is (0.0, 5e-324): margin_ball says it exactly)."""
        return self._of_margin(float_bounds)

    @property
    def margin_ball(self) -> str:
        """rhs - lhs of the tightest comparison as the decimal ball that encloses it (15 digits), or as the
        interval "[lo, hi]" that does, rounded outward, where that ball shows no digit but excludes 0
        (numbers.signed_text: "[+/- 8.13e-19]" hid a violated margin's sign)."""
        return self._of_margin(lambda x: signed_text(x, 15))

    @property
    def margin_text(self) -> str:
        """rhs - lhs of the tightest comparison, to 3 digits, for a line of text."""
        return self._of_margin(short)

    def _of_margin(self, f: Callable[[arb], object]):
        """f(rhs - lhs of the tightest comparison), the difference and the ends f reads (lower() and upper() are
        rounded to the precision) at the verdict's precision."""
        c = self.tightest
        with self._working_precision():
            return f(_ball(c.rhs - c.lhs))

    def _working_precision(self):
        """The verdict's precision for the arithmetic on its sides, whatever the caller's ctx.prec: at 2 bits a
        stack's tightest comparison was another layer's, at 20 bits margin_ball had 6 digits, not 15, and margin
        was (0.375, 0.5) for a margin of 0.4272."""
        return working(self.precision or START_PRECISION)

    def __repr__(self) -> str:
        """One line of at most REPR_LIMIT characters: the verdict, the tightest comparison and its margin."""
        c = self.tightest
        where = f" at layer {c.layer}"
        target = self.target if len(self.target) <= 60 else self.target[:57] + "..."
        detail = (f"{target}{where}; {c.lhs_expr} = {short(c.lhs, 8)}"
                  f" vs {c.rhs_expr} = {short(c.rhs, 8)}, margin {self.margin_text}")
        detail += f", {self.precision} bits" if self.precision else ""
        return short_repr(self.verdict, detail + (f"; {self.reason}" if self.reason else ""))


def _ball(x) -> arb:
    """A side of a comparison as an arb (the float64 screen's are plain floats, exact as arb)."""
    return x if isinstance(x, arb) else arb(float(x))


def short(x, digits: int = 3) -> str:
    """A ball to the digits of `digits` it is sure of; a ball sure of none as its interval "[lo, hi]" rounded
    outward when it excludes 0 (its sign decided: numbers.signed_text), else as arb writes it, +/- a bound on
    its absolute value (without the radius arb would print such a ball as "0e-12", and its radius alone
    understates a ball that does not sit on zero)."""
    if isinstance(x, arb):
        text = signed_text(x, digits)
        if text.startswith("[+/-"):
            return "+/-" + text[len("[+/- "):-1]
        return x.str(digits, radius=False) if " +/- " in text else text
    return f"{x:.{digits}g}"


def resolve_target(claim_id: str | None, bound: str | None) -> tuple[Claim | None, expr.Expr | None]:
    """The claim of --claim (default collapse.global), or the parsed bound of --bound; both is bad input."""
    if claim_id is not None and bound is not None:
        raise BadInput("give either --claim or --bound, not both")
    if bound is not None:
        return None, expr.parse(bound)
    return claims.get(claims.chosen(claim_id)), None


def bound_claim(bound: expr.Expr) -> Claim:
    """A user's bound D(layer output) <= EXPR, checked at every layer."""
    return Claim(id="", statement=f"D(layer output) <= {bound.text}", inequalities=(Inequality("D_out", bound.text),),
                 source="user", hypotheses="any layer", applies=applies_always)


class _Overlay:
    """A layer view with some names overridden (the running bound of a stack claim)."""

    def __init__(self, view: LayerView, **names):
        self.view, self.names = view, names

    def __getitem__(self, name):
        return self.names[name] if name in self.names else self.view.get(name)


_LAYER_NAMES = frozenset(PRIMITIVES)  # the names of a layer's quantities (a frozenset: parse's cache key as is)


def carries_centred(case: config.Case, claim: Claim) -> bool:
    """Whether a check's rungs after its first carry the tokens as X = 1 c^T + E (certify.core.centred; the
    certificate says so, and the checker follows): through a stack of two or more layers, all translation-equivariant,
    for a claim of layers or of the stack.  A stack collapsing doubly exponentially leaves D_t far below 2^-p times
    the tokens' size, which in absolute coordinates no precision resolves (20 layers of examples/pure-stack.json:
    undecided at 65536 bits); in centred form D_t keeps its relative accuracy.  One layer gains nothing from it, and a
    window's quantities read the tokens themselves.  The first rung stays absolute (centred_rung): there a layer is
    arb_mat products and an exp an entry of P where the centred softmax takes an expm1 and prefix sums (1.1 to 1.8 times
    slower a layer at 53 bits from 32 tokens up, twice at 3), and far from consensus absolute coordinates are as
    accurate (11 of 17071 random masked or residual stacks needed twice the precision centred)."""
    return (len(case.layers) > 1 and claim.scope != "window"
            and all(centred.unsupported(layer) is None for layer in case.layers))


def centred_rung(carried: bool, precision: int, start_prec: int) -> bool:
    """Whether the rung at `precision` runs in centred form: every rung after the first of a check that
    carries_centred (`carried`)."""
    return carried and precision > start_prec


def evaluate(ar, case: config.Case, claim: Claim, witnesses: dict,
             in_centred_form: bool = False) -> tuple[list[LayerView], list[Comparison]]:
    """Run the stack in backend `ar` (in centred form when asked: carries_centred) and evaluate the claim's
    inequalities."""
    X0 = ar.array(case.X)
    X, views, shared = centred.centre(ar, X0) if in_centred_form else X0, [], {}
    for t, layer in enumerate(case.layers):
        arrays = layer_arrays(ar, layer, case.n)
        if in_centred_form:
            moved = centred.apply_layer(ar, layer, arrays, X)
            entering, attention, X = X.E, moved.attention, moved.out
            # no P = Pi + Delta formed (n^2 sums a layer): tau reads the attention itself (primitives._tau), and a
            # claim of windows, which reads P, is never carried so
            step = Step(P=None, out=X.E, PX=moved.PX.E)
        else:
            entering, attention = X, None
            try:
                step = apply_layer(ar, layer, X, arrays)
            except UndefinedLayer as undefined:  # named as the configuration names the layer (certify.core.config)
                raise UndefinedLayer(f"{'layer' if len(case.layers) == 1 else f'layers[{t}]'}: {undefined}") from None
            X = step.out
        views.append(LayerView(ar=ar, t=t, layer=layer, arrays=arrays, X=entering, step=step, X0=X0,
                               witnesses=witnesses, depth=len(case.layers), shared=shared, attention=attention))
    # windows of layers (Wu et al.) have names of their own
    names = windows.NAMES if claim.scope == "window" else _LAYER_NAMES
    comparisons = []
    frames = windows.frames(ar, case, claim, views) if claim.scope == "window" else []
    for inequality in claim.inequalities:
        lhs_e, rhs_e = expr.parse(inequality.lhs, names), expr.parse(inequality.rhs, names)
        if claim.scope == "window":
            for frame in frames:
                lhs, rhs = lhs_e.evaluate(ar, frame), rhs_e.evaluate(ar, frame)
                comparisons.append(Comparison(frame.t, inequality.lhs, inequality.rhs, lhs, rhs,
                                              ar.certainly_le(lhs, rhs)))
            continue
        if claim.scope == "stack":
            # The claim is about D_t for every t <= T (every prefix of a stack is a stack): after each
            # layer t its lhs against the rhs composed through layers 0..t, not only at the last layer.
            bound = views[0].get("D")
            for view in views:
                overlay = _Overlay(view, D=bound)
                bound = rhs_e.evaluate(ar, overlay)
                lhs = lhs_e.evaluate(ar, _Overlay(view))
                comparisons.append(Comparison(view.t, inequality.lhs, f"composed {inequality.rhs}", lhs, bound,
                                              ar.certainly_le(lhs, bound), *_undefined(rhs_e, ar, overlay, bound)))
            continue
        for view in views:
            overlay = _Overlay(view)
            lhs, rhs = lhs_e.evaluate(ar, overlay), rhs_e.evaluate(ar, overlay)
            comparisons.append(Comparison(view.t, inequality.lhs, inequality.rhs, lhs, rhs, ar.certainly_le(lhs, rhs),
                                          *_undefined(rhs_e, ar, overlay, rhs)))
    for view in views:  # the gap is reported wherever a was needed
        if "a" in view.cache:
            view.get("gap")
    return views, comparisons


def _undefined(rhs_e: expr.Expr, ar, env, rhs) -> tuple[str, int]:
    """Where a ball rhs with no finite value loses it and the least precision at which it can have one
    (certify.core.expr.undefined), else ("", 0)."""
    finite = getattr(rhs, "is_finite", None)
    return ("", 0) if finite is None or finite() else expr.undefined(rhs_e, ar, env)


def _verdict(comparisons: list[Comparison]) -> str:
    outcomes = [c.outcome for c in comparisons]
    if any(o is False for o in outcomes):
        return VIOLATED
    if all(o is True for o in outcomes):
        return HOLDS
    return UNDECIDED


def _past_range(verdict: str, comparisons: list[Comparison], cap: int) -> Comparison | None:
    """The first undecided comparison when no precision up to `cap` gives any undecided one a finite rhs (arb's
    exponent range: Comparison.finite_from), else None: no rung of the ladder can decide the check then."""
    open_ = [c for c in comparisons if c.outcome is None]
    return open_[0] if verdict == UNDECIDED and all(c.finite_from > cap for c in open_) else None


def _range_reason(c: Comparison, precision: int, cap: int, higher: str) -> str:
    """Why a check whose comparison c is past arb's range up to its cap (_past_range) stopped at `precision`;
    `higher` says how the cap is raised."""
    where = ("at every precision certify takes" if c.finite_from > PRECISION_LIMIT else
             f"below {c.finite_from} bits, above the cap of {cap} bits ({higher})")
    return f"{_not_finite(c, precision)}: beyond arb's exponent range {where}"


def _not_finite(c: Comparison, precision: int) -> str:
    """'the value of RHS is not finite at P bits (the part that is not, and why)': the why alone where that part is
    the whole bound, which the words would name twice ("X is not finite at 53 bits (X is not finite (too large))")."""
    whole, why = f"{c.rhs_expr} is not finite ", c.undefined
    if why and why.startswith(whole):
        why = why[len(whole):].removeprefix("(").removesuffix(")")
    return f"the value of {c.rhs_expr} is not finite at {precision} bits" + (f" ({why})" if why else "")


def _equality_reason(comparisons: list[Comparison], precision: int, higher: str = "raise --max-prec") -> str:
    """Why the comparisons stay undecided at this precision; `higher` says how more precision is had."""
    open_ = [c for c in comparisons if c.outcome is None]
    undefined = [c for c in open_ if not (c.lhs.is_finite() and c.rhs.is_finite())]
    if undefined and undefined[0].lhs.is_finite():  # the right side alone: what it compares with is defined
        c = undefined[0]
        return f"{_not_finite(c, precision)}: undefined on these inputs, or too close to where it is to tell ({higher})"
    if undefined:
        return (f"an enclosure is not finite at {precision} bits: a quantity undefined on these inputs (LayerNorm"
                " of a zero token, or of a constant one with eps = 0), or inputs of extreme size that need more"
                f" precision ({higher})")
    for c in open_:
        # e.g. a = 0 (A = 0 maps every token to their mean): D_out = [0 +/- r], an inexact 0, not a magnified width
        if c.rhs.is_zero() and c.rhs.is_exact():  # undecided, so the lhs holds 0
            return (f"{c.rhs_expr} is exactly 0 and the enclosure of {c.lhs_expr} holds 0 at {precision} bits: either"
                    f" {c.lhs_expr} is exactly 0 too (an equality, which ball arithmetic cannot decide) or it is"
                    f" above 0 by at most {c.lhs.upper().str(3, radius=False)} ({higher})")
    # a side this wide is not an agreement of the sides: a bound can magnify an input's width past what the
    # precision gives (a norm's witness is refined only as far as the certificate's share of the limits allows)
    for c in open_:
        for side, text in ((c.lhs, c.lhs_expr), (c.rhs, c.rhs_expr)):
            if is_wide(side, precision):
                bits = side.rel_accuracy_bits()
                accuracy = f"{bits} bits of relative accuracy" if bits > 0 else "its radius exceeds its value"
                return (f"the enclosure of {text} is still wide at {precision} bits ({accuracy}): the"
                        " sides are not known to agree; the bound may magnify the width of an input (a norm's"
                        " witness is refined only as far as the certificate's share of the checker's limits allows),"
                        f" or need more precision ({higher})")
    widths = [(c.lhs - c.rhs) for c in open_]
    if all(w.contains(0) for w in widths):
        return (f"the two sides agree to {precision} bits: either an exact equality (ball arithmetic cannot"
                " decide lhs <= rhs when lhs = rhs; e.g. n = 2 makes D(PX) = tau(P) D(X) exact) or a margin"
                f" below the precision cap ({higher})")
    return f"undecided at the precision cap of {precision} bits ({higher})"


def float64_screen(case: config.Case, claim: Claim) -> list[Comparison]:
    """The float64 screen's comparisons (never a verdict), or [] ("no screen") when float64 leaves its
    range: an input beyond binary64 (an exact 1e400, a d_k of 10^400), a side or a norm witness that
    is not finite, or an evaluation float64 cannot do."""
    witnesses: dict = {}
    try:
        with np.errstate(all="ignore"):  # the screen may overflow or underflow: that is why it decides nothing
            comparisons = evaluate(FLOAT64, case, claim, witnesses)[1]
    except BadInput:
        raise
    except (ArithmeticError, ValueError):  # ZeroDivisionError (python floats), numpy's LinAlgError
        comparisons = None
    finite = comparisons is not None and all(np.isfinite([c.lhs, c.rhs]).all() for c in comparisons) and all(
        np.isfinite(w.basis).all() and np.isfinite(w.top).all() for w in witnesses.values())
    # Python floats (the same values): numpy's scalars printed as np.float64(...) in the comparisons' repr
    return [replace(c, lhs=float(c.lhs), rhs=float(c.rhs)) for c in comparisons] if finite else []


def _uses_tau(claim: Claim) -> bool:
    return any("tau" in q.lhs + q.rhs for q in claim.inequalities)


def window_sizes(case: config.Case, claim: Claim) -> tuple[int, int]:
    """(how many, of how many layers) the windows of a claim of scope "window" on the case (certify.core.windows.frames),
    which the work estimate prices (certify.core.limits.window_parts); (0, 0) for another scope, or where the claim
    does not apply (no one mask, a graph without a centre: refused before any work)."""
    if claim.scope != "window" or claim.window is None:
        return 0, 0
    try:
        first, k, _ = claim.window(case)
    except (AttributeError, TypeError):  # no one mask (shared_graph's report None), or no radius (2 * None)
        return 0, 0
    return (max(len(case.layers) - first - k + 1, 0), k) if k else (0, 0)


@dataclass(frozen=True)
class Target:
    """What is decided: a registered claim, or a user's bound (its claim built by bound_claim)."""

    claim: Claim
    bound: expr.Expr | None = None

    @property
    def name(self) -> str:
        """The claim id, or "bound: EXPR"."""
        return self.claim.id or f"bound: {self.bound.text}"


def target(claim_id: str | None = None, bound: str | None = None) -> Target:
    """The target of --claim ID or --bound EXPR (default collapse.global), its bound parsed once."""
    claim_obj, bound_expr = resolve_target(claim_id, bound)
    return Target(bound_claim(bound_expr), bound_expr) if bound_expr is not None else Target(claim_obj)


def _goal(goal: Target | None, claim: str | None, bound: str | None) -> Target:
    """`goal` (a Target prepared once, a campaign's), else the target of claim and bound; BadInput for a goal that
    is no Target, or one given beside a claim or a bound, which it replaced without a word."""
    if goal is None:
        return target(claim, bound)
    if not isinstance(goal, Target):
        raise BadInput(f"goal= is a Target (certify.engine.target(claim, bound)), not {type(goal).__name__}")
    if claim is not None or bound is not None:
        raise BadInput("give claim= and bound=, or goal=, not both")
    return goal


def admit(goal: Target, case: config.Case) -> None:
    """BadInput unless the target can be decided on the case (its names exist, its hypotheses hold)."""
    if goal.bound is not None and "v" in goal.bound.names and any(layer.V is None for layer in case.layers):
        raise BadInput("the bound uses v = ||V||_2 but a layer has no value matrix V")
    goal.claim.check_applies(case)


@dataclass(frozen=True)
class _Plan:
    """What a check's sizes, claim, precisions and limits settle before any work."""
    refused: str | None  # why even the start precision is refused, or None
    cap: int  # the highest precision of the ladder within the resource limits
    stopped: str | None  # why the precision after the cap is refused, or None


@functools.lru_cache(maxsize=256)
def _plan(sizes: tuple, uses_tau: bool, start_prec: int, max_prec: int, limits: Limits, thin: int = 0,
          value: bool = False, layernorm: bool = False, window: tuple[int, int] = (0, 0),
          texts: tuple[int, int] = (0, 0), operations: int = 0, centred_form: bool = False) -> _Plan:
    """The check's _Plan (precision.highest_allowed for the cap), remembered: a campaign's checks share
    their sizes and limits, and the key is hashed once per check.  The precision limit caps the ladder as
    memory and work do: a certificate above it is one `certify verify` at the same limits refuses (the
    checker confirms under them), so --max-prec beyond it rises no higher and says why.  texts: the numbers the
    certificate states as text (certificate.text_reading), priced at each precision as the checker prices them, as are
    operations, a user's bound's at every layer (certificate.bound_work); the refinement of the witnesses on each
    rung, the engine's alone (refinement); centred_form: the rungs after the first carry the layers in centred form
    (carries_centred)."""
    def refusal(precision: int) -> str | None:
        if precision > limits.precision:
            return (f"the precision limit is {limits.precision} bits, the most a certificate may state; --limit"
                    " precision=N raises it")
        return resource_problem(*sizes, precision, limits, uses_tau, thin, value, layernorm, window,
                                certificate.text_work(texts, precision) + certificate.bound_work(operations, precision),
                                refinement(*sizes[1:], thin, precision, start_prec, limits),
                                centred_rung(centred_form, precision, start_prec))

    refused = refusal(start_prec)
    if refused:
        return _Plan(refused, start_prec, None)
    top = min(max_prec, limits.precision)  # the ladder's last rung: the limit itself where it is the lower
    cap, stopped = highest_allowed(start_prec, top, refusal)
    if not stopped and max_prec == limits.precision:  # the default of both: --max-prec alone would rise no higher
        stopped = (f"--max-prec and the precision limit are both {max_prec} bits: raise --max-prec with "
                   f"{raised_with(['precision'])}")
    return _Plan(None, cap, stopped if stopped or top == max_prec else refusal(max_prec))


def text_reading(case: config.Case) -> tuple[int, int]:
    """(units, count) of the numbers the case's certificate states as text (its inputs are config.to_json's: a
    p/q, an integer or a hex float where a number is not a binary64 of a matrix), as the checker prices them
    (certificate.text_reading): a configuration of long texts cost the checker hundreds of times the estimate."""
    return certificate.text_reading(config.to_json(case))


def preflight(case: config.Case, claim: Claim, limits: Limits = DEFAULT_LIMITS, start_prec: int = START_PRECISION,
              max_prec: int = DEFAULT_MAX_PRECISION, inputs: dict | None = None) -> _Plan:
    """The plan of a check of `case` (a loaded one: its sizes within the limits), or BadInput when even its
    start precision passes the memory, work or precision limit, or when the inputs its certificate states pass
    the checker's size or nesting limit: what `check` refuses before any work, and what `certify attack` asks of
    a configuration of its layout before it searches for candidates to check.  inputs: config.to_json(case), made
    here when the caller has not (a check states the same in its certificate: made once, 3 x 20 us at 16 x 16)."""
    inputs = config.to_json(case) if inputs is None else inputs
    bound = None if claim.id else claim.inequalities[0].rhs  # a user's bound (bound_claim), evaluated at every layer
    plan = _plan(case.sizes(), _uses_tau(claim), start_prec, max_prec, limits, case.thin, case.value, case.normed,
                 window_sizes(case, claim), certificate.text_reading(inputs),
                 len(case.layers) * certificate.bound_operations(bound), carries_centred(case, claim))
    if plan.refused:
        raise BadInput(f"refused before starting: {plan.refused}")
    # {"inputs": ...} nests as deep as the certificate stating them, and measures less
    if structural := certificate.tree_limit({"inputs": inputs}, limits):
        raise BadInput(f"refused before starting: its certificate would be {structural}")
    return plan


def _refine_bits(precision: int, witnesses: dict, limits: Limits) -> int:
    """The bits to which this rung refines the norm witnesses (certify.core.refine): the precision, or fewer where
    their texts would take more than their share of the checker's limits (certificate.witness_bits), counted from
    the witnesses the earlier rungs found (0 on the first rung, which finds them: there is none to refine; counted
    from none, a check started at 4000 bits refined a 64 x 64 witness to 4000 bits, twice its share, in 10.6 s)."""
    if precision < refine.REFINE_FROM or not witnesses:
        return 0
    entries = sum(w.basis.size + w.top.size for w in {id(w): w for w in witnesses.values()}.values())
    return certificate.witness_bits(precision, entries, limits)


def refinement(d: int, layers: int, hidden: int, thin: int, precision: int, start_prec: int,
               limits: Limits) -> tuple[int, int]:
    """(the bits to which a rung at this precision refines the norm witnesses, the bits they have before it) as the plan
    prices them (certify.core.limits.refine_work), before any witness is found: none on the first rung (_refine_bits),
    from binary64's on the second (0), else from the rung below's (half the precision, the ladder's).  The bits are
    certificate.witness_bits of a witness of the narrowest width in every layer, the most to which every layer's are
    refined (more norms only lower them), where the precision itself would price a refinement the share allows none of
    (a 384 x 384 witness is never refined at the default limits).  A stack of one repeated head refines its one witness
    to more bits than that: one norm's refinement, less than the priced evaluation of a layer at this precision."""
    if precision <= start_prec or precision < refine.REFINE_FROM:
        return 0, 0
    width = min(thin if 0 < thin < d else d, hidden or d)
    entries = layers * width * (width + 1)  # a basis and top vector a layer
    bits = certificate.witness_bits(precision, entries, limits)
    return bits, 0 if precision <= 2 * start_prec else certificate.witness_bits(precision // 2, entries, limits)


def check(source, claim: str | None = None, bound: str | None = None, *,
          max_prec: int = DEFAULT_MAX_PRECISION, start_prec: int = START_PRECISION,
          limits: Limits = DEFAULT_LIMITS, goal: Target | None = None) -> Result:
    """Decide a claim (default collapse.global) or a user bound on a configuration.

    `source` is a configuration path, dict or parsed Case.  Returns a Result whose verdict is
    holds, violated or undecided, with its certificate (re-verified by the checker; None when undecided,
    as `certify check` writes none: nothing was decided).  `goal`, a
    Target prepared once (a campaign's), replaces claim and bound.  Inputs beyond `limits`
    (certify.core.limits) are refused before any work; the precision escalation stops, undecided,
    where the next precision would pass the memory or work estimate.  A refused `max_prec` is named so
    (max_prec=).
    """
    return checked(source, "max_prec=", claim, bound, max_prec=max_prec, start_prec=start_prec, limits=limits,
                   goal=goal)


def checked(source, max_prec_option: str, claim: str | None = None, bound: str | None = None, *,
            max_prec: int = DEFAULT_MAX_PRECISION, start_prec: int = START_PRECISION,
            limits: Limits = DEFAULT_LIMITS, goal: Target | None = None,
            stage: Callable[[str], None] = lambda text: None) -> Result:
    """check, a refused precision cap named `max_prec_option` as its caller writes it (`certify check`'s --max-prec,
    the API's max_prec=); stage(text) is told as each evaluation and each call of the checker begins."""
    max_prec = integer(max_prec, max_prec_option)
    start_prec = integer(start_prec, "the starting precision")
    limits = given_limits(limits)
    check_precision_cap(max_prec, max_prec_option)  # the words of every command's --max-prec
    if not START_PRECISION <= start_prec <= max_prec:
        raise BadInput(f"the starting precision must be an integer from {START_PRECISION} bits to the cap of {max_prec}, "
                       f"got {start_prec!r}")
    case = config.load(source, limits)
    goal = _goal(goal, claim, bound)
    admit(goal, case)
    claim_obj, bound_expr, target_name = goal.claim, goal.bound, goal.name

    inputs = config.to_json(case)  # what the certificate states, measured by the preflight
    plan = preflight(case, claim_obj, limits, start_prec, max_prec, inputs)

    witnesses: dict = {}  # the norm witnesses, found by the first ball pass, kept for the next and the certificate
    centred_later = carries_centred(case, claim_obj)
    refusals: list[str] = []
    refused: list[str] = []  # why the checker refused a certificate (past a limit): more precision only enlarges it

    def attempt(precision: int) -> tuple[str, list[Comparison], dict | None]:
        """The verdict at this precision, its comparisons, and the certificate once the checker confirms it."""
        stage(f"its evaluation at {precision} bits")
        with refine.refining(_refine_bits(precision, witnesses, limits)):
            views, comparisons = evaluate(BALL, case, claim_obj, witnesses,
                                          centred_rung(centred_later, precision, start_prec))
        verdict = _verdict(comparisons)
        if verdict == UNDECIDED:
            return verdict, comparisons, None
        cert = certificate.build(inputs, claim_obj.id or None, bound_expr.text if bound_expr else None,
                                 verdict, precision, views, comparisons, witnesses)
        stage(f"the checker, at {precision} bits")
        confirmation = certificate.confirm(cert, limits)
        if confirmation.ok:
            return verdict, comparisons, cert
        # a precision at which the checker cannot follow is escalated too, unless the checker refused the certificate
        refusals.append(f"{verdict} at {precision} bits, {NOT_CERTIFIED}: the checker did not confirm it "
                        f"({confirmation.message})")
        if confirmation.refused:
            refused.append(certificate.said(confirmation, cert, limits))
        return verdict, comparisons, None

    def done(found) -> bool:  # confirmed, refused by the checker, or past arb's range at every rung left
        return found[2] is not None or bool(refused) or _past_range(found[0], found[1], plan.cap) is not None

    (verdict, comparisons, cert), precision = escalate(attempt, done, start_prec, plan.cap)
    if cert is not None:
        return Result(verdict, target_name, precision, comparisons, certificate=cert, case=case, claim=claim_obj)
    if refused:
        return Result(UNDECIDED, target_name, precision, comparisons, case=case, claim=claim_obj,
                      reason=f"{refusals[-1]}; not raised further: {refused[-1]}")
    if past := _past_range(verdict, comparisons, plan.cap):
        return Result(UNDECIDED, target_name, precision, comparisons, case=case, claim=claim_obj,
                      reason=_range_reason(past, precision, plan.cap, plan.stopped or "raise --max-prec"))
    higher = f"not raised beyond {plan.cap} bits: {plan.stopped}" if plan.stopped else "raise --max-prec"
    reason = refusals[-1] + (f"; {higher}" if plan.stopped else "") if refusals else (
        _equality_reason(comparisons, precision, higher))
    return Result(UNDECIDED, target_name, precision, comparisons, reason=reason, case=case, claim=claim_obj)
