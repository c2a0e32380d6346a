"""Rigorous trajectories: enclosures of D_t and mu_t through T layers, next to the claimed bound curves.

Layers.  Layer t is the configuration's layer t mod L (L layers): a single-layer configuration is
that layer repeated T times, a stack of L layers runs exactly once when T = L and cyclically
beyond.

Precision.  When every layer is translation-equivariant (attention, masks, V, residual) the tokens
are carried as X = 1 c^T + E (certify.core.centred): D_t = D(E_t) keeps its relative accuracy however
far the trajectory collapses, and the precision needed depends on one step's conditioning (near
consensus relative errors grow about threefold per layer).  With LayerNorm or a feed-forward
network the tokens are absolute balls (radii about 2^-p times their size), so D_t keeps relative
accuracy only while 2^-p << D_t, and a doubly exponential collapse needs about log2(1 / D_t) bits;
the reason is reported as the representation.  The trajectory runs at 53 bits; while some D_t has
fewer than RESOLVED_BITS bits of relative accuracy, or some bound is undecided, it restarts from the
exact X_0 at a higher precision (a ball cannot be sharpened midway), up to the cap.  Layers still
unresolved at the cap are reported as such and not continued: relative accuracy that a ball has
lost does not come back.

Step precisions.  In centred form the run's precision is that of its first step only: near
consensus D_t loses about log2(3) bits of relative accuracy per layer, so T layers need some 2T
bits at t = 0 but ever fewer later, and T steps all at 2T bits would cost about twice as much.
Step t runs at the relative accuracy of D_{t-1} plus STEP_GUARD_BITS (its roundings then add about
2^-STEP_GUARD_BITS of the ball's radius), never above the run's precision nor below
START_PRECISION nor below its precision in any attempt before (a higher precision then never
costs the checker less); any precision gives an enclosure, so the schedule only affects the radii.  Each
point states its precision in the certificate, where the checker recomputes it at that precision.
In absolute coordinates every step runs at the run's precision (there the precision needed grows
with t).  When a centred run leaves some D_t unresolved, the next precision is predicted from the
bits lost per layer (_next_precision) rather than doubled: doubling overshoots by up to 2x, and
every extra bit at t = 0 is carried through all T steps.

Certification.  The curves are compared through their logarithms (log D_t <= log curve; the
composed curve is iterated in log form, see log_g).  Everything reported goes into a "trajectory"
certificate (certify.studies.trajectory_certificate) that the independent checker re-derives; a
trajectory the checker does not confirm is labelled not certified and exits 3.  The run prices that
certificate as the checker will (certify.studies.trajectory_budget): the precision rises no higher
than a certificate of every D_t can fit the limits, an attempt stops as soon as its steps show that
it cannot, and the run then reports the attempt before (undecided, `stopped` says why).

Curves (docs/claims.md), drawn only when their hypotheses hold, from t = 1 on (at t = 0 each is
D_0 itself or trivially above it):
    global.step      D_t <= g_{a_{t-1}}(D_{t-1}),  g_a(D) = (1 - exp(-a D^2)) D     pure attention
    global.composed  D_t <= g_{a_{t-1}}( ... g_{a_0}(D_0))                           pure attention
    cubic            D_t <= a^{-1/2} (sqrt(a) D_0)^(3^t), a = max a_t,
                     when sqrt(a) D_0 < 1 is certified                                pure attention
    value.bounded    D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0, M = max_{k<=T} ||V^k||_2   X' = P X V^T
    value.approach   r_t <= M prod_{s<t} tau(P_s) D_0,  r_t = max_i ||x_i^(t) - V^t c||   (one V;
                     c a point of the last hull of Q_t X_0's rows: "The approach r_t" below)
    value.expansive  D_t <= c^{-1/2} (sqrt(c) D_0)^(3^t), c = rho a, rho = ||V||_2,
                     when sqrt(c) D_0 < 1 is certified (collapse near consensus)      X' = P X V^T (one V)
a_t = ||A_t||_2 is certified by certify.core.spectral (a thin head's through its d_k x d_k reduction,
certify.core.thin_norm, as `certify check` encloses it); for a stack the cubic and value curves use the
largest a_t (each step's factor only grows with a).

The approach r_t.  x_i^(t) = V^t y_i^(t) with Y_t = Q_t X_0, Q_t = P_{t-1} ... P_0: the convex hulls of the
rows of Y_t are nested (each P_s is row-stochastic), and c is any point of the hull of the last resolved
layer's, so of every earlier one (the rows' limit where they collapse, as under value.bounded; they need not:
V = 2 I keeps two antipodal tokens apart).  Hence r_t <= ||V^t||_2 D(Y_t) <= M D(Y_t), and with
the estimate c^ = the mean row of Y_last (the last resolved layer), ||c - c^|| <= D(Y_last), so r_t
is within M D(Y_last) of r^_t = max_i ||x_i^(t) - V^t c^||.  The reported enclosure of r_t is the
intersection of both: a certified enclosure of the distance to the trajectory V^t c, whichever point c of
that hull.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
from flint import arb, ctx, fmpz

from certify.core import config
from certify.core.arguments import Spelling, callback, integer
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits
from certify.core import quantities
from certify.core import centred
from certify.studies import trajectory_budget, trajectory_certificate
from certify.engine import certificate
from certify.core.arith import BALL, FLOAT64
from certify.core.exponents import log10_ball, log10_from_log
from certify.core.numbers import ball_text as text
from certify.core.precision import (DEFAULT_MAX_PRECISION, RESOLVED_BITS, START_PRECISION, check_precision_cap,
                                    escalate, is_resolved, working)
from certify.core.verdicts import EXIT_CODES, HOLDS, NOT_CERTIFIED, UNDECIDED, VIOLATED, labelled, short_repr
from certify.errors import BadInput
from certify.core.layers import apply_layer, layer_arrays
from certify.core.primitives import LayerView

# A collapsing trajectory needs about 2T bits at t = 0 and its time grows about like T^2 even with
# step precisions: 4000 layers of examples/layer.json take about 45 s of CPU, engine and checker
# (benchmarks/trajectory.py), their certificate 1.5e9 of the checker's work (its default limit takes every
# D_t through some 3700); 10,000 would take minutes.
MAX_LAYERS = 4_000
NORM_PRECISION = 128  # ||V^k||_2 only scales the curves: 128 bits keep them tight enough (_value_norms)
FLOAT64_EXPONENT_ROOM = 1000  # log2 of the largest ||V^k|| whose float64 witness does not overflow
CURVE_GUARD_BITS = 64  # the cubic and composed curves lose about log2(3) bits per layer
STEP_GUARD_BITS = 32  # a step's precision above the relative accuracy of the D_t it starts from
PREDICTION_MARGIN = 1.1  # on the bits per layer measured in an unresolved run, for the next precision's guess
PREDICTION_MIN_STEPS = 16  # fewer resolved layers than this measure no rate: the next precision doubles
BETWEEN = 64  # bits: an attempt stopped by the limits, precisions below it are tried to within a limb (_between)

UNRESOLVED = "unresolved"
CENTRED = "centred"
ENCLOSED = "enclosed"  # every D_t certified, but no bound curve applies to these layers
OUTCOMES = {True: HOLDS, False: VIOLATED, None: UNDECIDED}  # BALL.certainly_le's answer in words

# curve -> (the quantity it bounds, its hypothesis)
CURVES = {
    "global.step": ("D", "pure attention: D_t <= (1 - exp(-a D_{t-1}^2)) D_{t-1}"),
    "global.composed": ("D", "pure attention: D_t <= g_{a_{t-1}}(... g_{a_0}(D_0))"),
    "cubic": ("D", "pure attention with sqrt(a) D_0 < 1: D_t <= a^{-1/2} (sqrt(a) D_0)^(3^t)"),
    "value.bounded": ("D", "X' = P X V^T, one V: D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0"),
    "value.approach": ("approach", "X' = P X V^T, one V: max_i ||x_i^(t) - V^t c|| <= M prod tau(P_s) D_0"),
    "value.expansive": ("D", "X' = P X V^T, one V, with sqrt(rho a) D_0 < 1: D_t <= (rho a)^{-1/2} "
                             "(sqrt(rho a) D_0)^(3^t), rho = ||V||_2"),
}


@dataclass
class Point:
    """One depth t: the enclosures entering layer t and the curves at t."""

    t: int
    D: arb | None  # None: beyond the first layer unresolved at the cap, not computed
    mu: arb | None
    resolved: bool
    tau: arb | None = None  # Dobrushin coefficient of P_t (the attention of layer t), t < T
    approach: arb | None = None  # enclosure of max_i ||x_i^(t) - V^t c|| (value curves only)
    curves: dict = field(default_factory=dict)  # curve name -> arb
    log_curves: dict = field(default_factory=dict)  # curve name -> its natural logarithm (arb), what is compared
    checks: dict = field(default_factory=dict)  # curve name -> holds | violated | undecided | unresolved
    precision: int | None = None  # bits at which D, mu, tau and layer t were computed (None: not computed)


@dataclass
class Trajectory:
    """D_t, mu_t and the bound curves through T layers (certify.trajectory), with the trajectory
    certificate and whether the independent checker confirmed it (certified)."""

    name: str
    T: int
    cycle: int  # L: layer t is the configuration's layer t mod L
    points: list
    precision: int  # bits of the run whose enclosures are reported
    max_precision: int
    curve_precision: int
    a: list  # ||A||_2 of each configuration layer
    M: arb | None  # max_{k<=T} ||V^k||_2 when the value curves are drawn
    drawn: dict  # curve -> hypothesis
    skipped: dict  # curve -> why it is not drawn
    representation: str = CENTRED  # or "absolute: <why the centred form does not apply>"
    certificate: dict | None = field(default=None, repr=False)
    confirmation: str = ""  # the checker's message on the certificate
    certified: bool = False  # the checker confirmed every stated enclosure and outcome
    seconds: float = 0.0
    stopped: str = ""  # why the precision was not raised further: a checker's limit (studies.trajectory_budget)
    # the highest precision the run could rise to: max_precision, or lower where the checker's limits stopped it
    # (the summary stated --max-prec's 65536 beside a stop line "not raised beyond 2858 bits")
    precision_cap: int = 0
    # rho = ||V||_2, value.expansive's factor (c = rho a) when the value curves are drawn: M alone was shown, and
    # sqrt(rho a) D_0, the curve's hypothesis, could not be read off the output
    rho: arb | None = None

    @property
    def step_precisions(self) -> list:
        """The bits of each computed point's step, from t = 0 (what the certificate states)."""
        return [p.precision for p in self.points if p.precision is not None]

    @property
    def resolved_through(self) -> int:
        """The last t whose D_t is resolved; -1 when not even D_0 is (tokens far closer than their size)."""
        return max((p.t for p in self.points if p.resolved), default=-1)

    @property
    def verdict(self) -> str:
        """violated if any drawn bound is certified violated; holds if every D_t is resolved and every
        drawn bound certified at every t (enclosed when no bound applies); otherwise undecided."""
        outcomes = [o for p in self.points for o in p.checks.values()]
        if VIOLATED in outcomes:
            return VIOLATED
        if all(p.resolved for p in self.points) and all(o == HOLDS for o in outcomes):
            return HOLDS if self.drawn else ENCLOSED
        return UNDECIDED

    @property
    def exit_code(self) -> int:
        """The verdict's code once the checker has confirmed the certificate, else 3 (undecided)."""
        if not self.certified:
            return EXIT_CODES[UNDECIDED]
        return {**EXIT_CODES, ENCLOSED: 0}[self.verdict]

    def __repr__(self) -> str:
        """One short line: the verdict (marked not certified unless the checker confirmed it, as `certify trajectory`
        prints it), how far D_t is resolved, D_T, and whether the checker confirmed."""
        last = self.points[self.resolved_through] if self.resolved_through >= 0 else None
        D = "" if last is None else f", D_{last.t} = {last.D.str(4, radius=False)}"
        checker = "confirmed by the checker" if self.certified else NOT_CERTIFIED
        return short_repr(f"trajectory {labelled(self.verdict, self.certified)}",
                          f"{self.name or 'configuration'}, {self.T} layers, "
                          f"resolved through t = {self.resolved_through}{D}, {self.precision} bits, {checker}")


# the options as a caller of certify.trajectory writes them, named so in its refusals
KEYWORDS = Spelling.keywords(("layers", "max_prec"))
OPTIONS = Spelling.command(KEYWORDS.names)  # as `certify trajectory` names them


def trace(source, layers: int, max_prec: int = DEFAULT_MAX_PRECISION,
          progress: Callable[[int, int, str], None] | None = None, limits: Limits = DEFAULT_LIMITS) -> Trajectory:
    """Enclose D_t, mu_t (and the approach to V^t c) for t = 0..layers, and check the curves;
    `progress(done, layers, stage)` is called as each layer of an attempt begins (done: the layers behind it; stage:
    the attempt's precision; each attempt restarts from X_0) and as the checker begins (done = layers).  `limits` (certify.core.limits)
    are the reader's and the checker's (`certify verify` at the same limits must be able to confirm the
    certificate): a run refused whatever it found is refused before it starts, and the escalation stops
    where its certificate could no longer fit them (certify.studies.trajectory_budget).  BadInput names the
    keywords (layers=, max_prec=) where a value is refused, and where a refusal or why the precision `stopped` says
    how to raise a limit (limits=Limits(work=N)); the certificate keeps the command's words."""
    with KEYWORDS.respelling(OPTIONS):
        tr = traced(source, KEYWORDS, layers, max_prec, progress, limits)
    return replace(tr, stopped=KEYWORDS.respelled(tr.stopped, OPTIONS),
                   confirmation=KEYWORDS.respelled(tr.confirmation, OPTIONS))


def traced(source, names: Spelling, layers: int, max_prec: int = DEFAULT_MAX_PRECISION,
           progress: Callable[[int, int, str], None] | None = None, limits: Limits = DEFAULT_LIMITS) -> Trajectory:
    """trace, its refusals of layers and max_prec naming them as `names` spells them (the command's --layers,
    the API's layers=)."""
    stage = callback(progress, "progress") or (lambda done, total, what: None)
    limits = given_limits(limits)
    case = config.load(source, limits)
    layers, max_prec = integer(layers, names.option("layers")), integer(max_prec, names.option("max_prec"))
    if not 1 <= layers <= MAX_LAYERS:
        raise BadInput(f"{names.option('layers')} must be an integer from 1 to {MAX_LAYERS}, got {layers!r}")
    check_precision_cap(max_prec, names.option("max_prec"))
    if all(row == case.X[0] for row in case.X):
        raise BadInput("the tokens coincide (D_0 = 0): the trajectory is constant, there is nothing to trace")
    started = time.time()
    drawn, skipped = _hypotheses(case, layers)
    # without the value curves there is no M: its precision is stated at the least, where 128 bits set the
    # certificate's precision and refused 2 layers at --limit precision=100 (their curves take 68 bits)
    unused = START_PRECISION if "value.bounded" not in drawn else NORM_PRECISION
    budget = trajectory_budget.Budget(config.to_json(case), layers, list(drawn), limits, _curve_precision,
                                      unused, centred=_representation(case, layers) is None, routes=_routes(case))
    _admit(budget)
    witnesses: dict = {}
    (M, rho), budget.norm_precision = (_value_norms(case, layers, witnesses, max_prec) if "value.bounded" in drawn
                                       else ((None, None), unused))
    _admit(budget)  # again at M's precision, which the value curves' work grows with
    cap, capped = budget.cap(max_prec)
    attempts: list = []
    floors: list = []  # per t, the highest precision an attempt ran step t at: no later attempt runs it lower

    def attempt(precision: int) -> _Traced:
        meter = budget.meter(precision, floors, last=precision >= cap)
        # each attempt restarts from the exact X_0 (a ball cannot be sharpened midway)
        attempts.append(_trace_at(case, layers, precision, M, rho, dict(drawn), dict(skipped), witnesses,
                                  final=precision >= cap, floors=list(floors), meter=meter,
                                  tick=lambda t: stage(t, layers, f"at {precision} bits")))
        floors[:] = [max(pair) for pair in itertools.zip_longest(floors, attempts[-1].run.steps, fillvalue=0)]
        return attempts[-1]

    try:
        traced, precision = escalate(attempt, lambda traced: traced.settled, START_PRECISION, cap,
                                     guess=lambda bits, traced: _next_precision(bits, traced, layers))
        stopped = "" if traced.settled or not capped else f"not raised beyond {cap} bits: {capped}"
        used_cap = cap
    except trajectory_budget.OverLimit as over:
        if not attempts:  # the one attempt, at the cap: every certificate it could write is refused
            raise BadInput(f"stopped, no certificate the checker can verify: {over}") from None
        over = _between(attempt, attempts, over)
        traced, precision = attempts[-1], attempts[-1].precision  # the highest attempt the checker can follow
        _finish(case, traced, M, rho, witnesses)
        stopped = "" if traced.settled else f"not raised beyond {precision} bits: {over}"
        used_cap = precision  # the highest precision found to fit the limits (one above it was stopped)
    fallback = _representation(case, layers)
    tr = Trajectory(name=case.name, T=layers, cycle=len(case.layers), points=traced.points, precision=precision,
                    max_precision=max_prec, curve_precision=traced.curve_precision, a=traced.a, M=M,
                    drawn=traced.drawn, skipped=traced.skipped,
                    representation=CENTRED if fallback is None else f"absolute: {fallback}", stopped=stopped,
                    precision_cap=used_cap, rho=rho)
    tr.certificate = trajectory_certificate.build(tr, case, witnesses, budget.norm_precision)
    stage(layers, layers, "the checker")
    confirmation = certificate.confirm(tr.certificate, limits)
    tr.certified, tr.confirmation = confirmation.ok, confirmation.message
    tr.seconds = time.time() - started
    return tr


def _between(attempt: Callable[[int], "_Traced"], attempts: list, over: trajectory_budget.OverLimit):
    """After an attempt stopped by the limits (`over`), the precisions between it and the attempt before,
    by bisection to within BETWEEN bits of the stopped one (the checker prices a step by its 64-bit limbs):
    the escalation's guess leaps (106 bits, then 1181 for 500 layers of examples/layer.json), and a
    precision in between may resolve every D_t within the limits (1079 bits there, at nine tenths of the
    1181-bit certificate's work) or at least more of them.  Ends at a settled attempt or with the stop of the
    lowest precision found over the limits; attempts[-1] is then the highest attempt that fits (one stopped
    by the limits is not kept)."""
    low, high = attempts[-1].precision, over.precision
    while not attempts[-1].settled and high - low > BETWEEN:
        middle = (low + high) // 2
        try:
            attempt(middle)
            low = middle
        except trajectory_budget.OverLimit as closer:
            high, over = middle, closer
    return over


def _admit(budget: trajectory_budget.Budget) -> None:
    """BadInput when even the least certificate a run can write is beyond the checker's limits: the run would
    end "not certified" whatever it found (certify.studies.trajectory_budget)."""
    if refusal := budget.refusal():
        raise BadInput(f"refused before starting: a certificate of {budget.T} layers would pass {refusal}")


@dataclass
class _Traced:
    run: "_Run"
    precision: int
    points: list
    drawn: dict
    skipped: dict
    curve_precision: int
    a: list = field(default_factory=list)
    settled: bool = False  # every D_t resolved and every comparison decided: more precision would not help
    finished: bool = False  # the curves drawn and checked (_finish)

    @property
    def centred(self) -> bool:
        """The run's representation (its step precisions follow D_t's accuracy)."""
        return self.run.centred


def _trace_at(case: config.Case, T: int, precision: int, M, rho, drawn: dict, skipped: dict, witnesses: dict,
              final: bool, floors: list, meter: trajectory_budget.Meter,
              tick: Callable[[int], None] | None = None) -> _Traced:
    """The trajectory at one precision, its curves and their checks.  A run left unresolved below the
    cap (not final) only leads to the next precision: its curves are not drawn (the composed one is
    iterated through all T layers at some 1.6T bits, whatever the run resolved) unless the run ends
    there, stopped by the checker's limits (_finish then)."""
    run = _run(case, T, precision, track_value=M is not None, floors=floors, meter=meter, tick=tick)
    points = run.points + [Point(t, None, None, False) for t in range(len(run.points), T + 1)]
    traced = _Traced(run=run, precision=precision, points=points, drawn=drawn, skipped=skipped,
                     curve_precision=_curve_precision(precision, T))
    if run.complete or final:
        _finish(case, traced, M, rho, witnesses)
    return traced


def _finish(case: config.Case, traced: _Traced, M, rho, witnesses: dict) -> None:
    """Draw the curves of a traced run and check them; settled when nothing is left to decide."""
    if traced.finished:
        return
    if M is not None:
        with working(traced.precision):
            _approach(case, traced.run, M)
    with working(traced.curve_precision):
        traced.a = _query_key_norms(case, witnesses)
        _curves(case, traced.points, traced.a, M, rho, traced.drawn, traced.skipped)
        _check(traced.points, traced.drawn)  # logarithms of the quantities, at the curves' precision
    undecided = any(o == UNDECIDED for p in traced.points for o in p.checks.values())
    traced.settled, traced.finished = traced.run.complete and not undecided, True


def _curve_precision(precision: int, T: int) -> int:
    """The curves' precision for a run at `precision` through T layers (they lose about log2(3) bits a layer)."""
    return max(precision, CURVE_GUARD_BITS + math.ceil(T * math.log2(3)))


def _next_precision(precision: int, traced: _Traced, T: int) -> int | None:
    """The next run's precision when a centred run left D_t unresolved: enough for the bits lost per
    layer so far (with PREDICTION_MARGIN) to leave RESOLVED_BITS plus a guard at t = T; None (the ladder
    doubles) in absolute coordinates, when every D_t is resolved (an undecided bound) or when too few
    layers were resolved to measure a rate."""
    resolved = [p for p in traced.points if p.resolved]
    if not traced.centred or len(resolved) == len(traced.points) or len(resolved) <= PREDICTION_MIN_STEPS:
        return None
    # the rate over the later half: the first layers, far from consensus, can lose more than the rest
    middle, last = resolved[len(resolved) // 2], resolved[-1]
    rate = (middle.D.rel_accuracy_bits() - last.D.rel_accuracy_bits()) / (last.t - middle.t)
    if not math.isfinite(rate) or rate <= 0:
        return None
    lost = precision - last.D.rel_accuracy_bits()  # bits lost by t = last, at this precision
    return math.ceil(lost + RESOLVED_BITS + STEP_GUARD_BITS + PREDICTION_MARGIN * rate * (T - last.t))


def _step_precision(top: int, D: arb) -> int:
    """The precision of the step after the one that enclosed D (module docstring, step precisions)."""
    if D.is_zero() and D.is_exact():
        return top
    return min(top, max(START_PRECISION, D.rel_accuracy_bits() + STEP_GUARD_BITS))


def _hypotheses(case: config.Case, T: int) -> tuple[dict, dict]:
    used = case.layers[:T]  # the configuration layers that T layers apply
    drawn, skipped = {}, {}
    pure = all(layer.is_pure_attention for layer in used)
    for name in ("global.step", "global.composed", "cubic"):
        if pure:
            drawn[name] = CURVES[name][1]
        else:
            parts = sorted({config.COMPONENTS[part] for layer in used for part in layer.components()})
            skipped[name] = "needs pure attention X' = P X; the layers have " + ", ".join(parts)
    value_form = all(layer.components() == ["V"] for layer in used)  # X' = P X V^T and nothing else
    for name in ("value.bounded", "value.approach", "value.expansive"):
        if not value_form:
            skipped[name] = "needs layers X' = P X V^T with a value matrix V and nothing else"
        elif len({layer.V for layer in used}) != 1:
            skipped[name] = "needs one value matrix V shared by every layer (the bound is about powers V^t)"
        elif _log2_growth(used[0].V, T) > FLOAT64_EXPONENT_ROOM:
            skipped[name] = "||V||^T leaves float64's range, where the witnesses for M = max ||V^k|| are found"
        else:
            drawn[name] = CURVES[name][1]
    return drawn, skipped


def _log2_growth(V, T: int) -> float:
    """log2 of ||V||^T in float64; inf when an entry of V is beyond binary64 (its float64 array, where
    the witnesses are found, holds an infinity: np.linalg.norm gives nan, the SVD fails)."""
    V64 = FLOAT64.array(V)
    if not np.isfinite(V64).all():
        return math.inf
    return T * math.log2(max(1.0, float(np.linalg.norm(V64, 2))))


@dataclass
class _Run:
    points: list
    Y: list  # Y_t = Q_t X_0 in centred form (value curves only)
    drifts: list  # delta_t: the centre of Y_{t+1} minus that of Y_t
    complete: bool  # every D_t for t <= T resolved
    centred: bool

    @property
    def steps(self) -> list:
        """The precision of each computed point's step, from t = 0."""
        return [p.precision for p in self.points]


def _routes(case: config.Case) -> dict:
    """The shapes of the witnesses of `a` the certificate states, which the checker's work estimate reads: d_k x d_k
    for a thin head that reduces (config.reduced_width, the route _query_key_norms is certain to take), else d x d.
    Stated none, the estimate priced every thin head through its reduction: a 256 x 1024 head with d_k = 8 whose
    a was enclosed through the d x d A ran half a minute at 2 GB beyond the limits, and the checker refused its
    certificate."""
    return {f"A{t}": {"basis": {"shape": [width, width]}}
            for t, layer in enumerate(case.layers) for width in [config.reduced_width(layer) or case.d]}


def _representation(case: config.Case, T: int) -> str | None:
    """None when every layer used is translation-equivariant (the centred form applies), else why not."""
    for t, layer in enumerate(case.layers[:T]):
        reason = centred.unsupported(layer)
        if reason:
            return f"layer {t}: {reason}"
    return None


def _run(case: config.Case, T: int, precision: int, track_value: bool, floors: list = (),
         meter: trajectory_budget.Meter | None = None, tick: Callable[[int], None] | None = None) -> _Run:
    """One pass from the exact X_0, its first step at `precision`; stops at the first unresolved D_t.

    In centred form (certify.core.centred) when every layer allows it: then D_t keeps its relative
    accuracy however small it gets, and later steps run at less precision (_step_precision).
    Otherwise in absolute coordinates (radii about 2^-p times the tokens' size), every step at
    `precision`.  No step runs below its precision in `floors` (the highest of the attempts before):
    a higher precision then never costs the checker less, which lets the meter
    (certify.studies.trajectory_budget) stop an attempt as soon as no higher one can fit the limits
    either.  The meter counts each step before it runs; tick(t), when given, is told of it (the layers behind it).
    """
    L = len(case.layers)
    use_centred = _representation(case, T) is None
    points, Ys, drifts = [], [], []
    with working(precision):
        arrays = [layer_arrays(BALL, layer, case.n) for layer in case.layers]
        X0 = BALL.array(case.X)
        X = Y = centred.centre(BALL, X0) if use_centred else X0
    bits = precision
    for t in range(T + 1):
        if tick is not None:
            tick(t)
        if meter is not None:
            meter.charge(t, bits)
        with working(bits):
            E = X.E if use_centred else X
            D = quantities.diameter(BALL, E)
            point = Point(t, D, quantities.consensus_distance(BALL, E), is_resolved(D), precision=bits)
            points.append(point)
            if track_value:
                Ys.append(Y)
            if not point.resolved or t == T:
                break
            layer = case.layers[t % L]
            if use_centred:
                step = centred.apply_layer(BALL, layer, arrays[t % L], X)
                point.tau = centred.dobrushin(BALL, step.attention)
                if track_value:
                    Y, drift = centred.transport(BALL, step.attention, Y)
                    drifts.append(drift)
            else:
                step = apply_layer(BALL, layer, X, arrays[t % L])
                point.tau = quantities.dobrushin(BALL, step.P)
            X = step.out
        if use_centred:
            bits = max([_step_precision(precision, D)] + list(floors[t + 1:t + 2]))
    return _Run(points=points, Y=Ys, drifts=drifts, complete=len(points) == T + 1 and points[-1].resolved,
                centred=use_centred)


def _approach(case: config.Case, run: _Run, M: arb) -> None:
    """Enclose r_t = max_i ||x_i^(t) - V^t c|| for the resolved t (see the module docstring).

    With Y_t = 1 y_t^T + G_t (centred) and c^ the mean row of Y_last:
    x_i^(t) - V^t c^ = V^t (g_i^(t) - mean(G_last) - sum_{t <= s < last} delta_s), all small terms.
    """
    resolved = [p.t for p in run.points if p.resolved]
    if not resolved:  # D_0 itself unresolved at this precision: no Y_last to take c^ from, nothing to enclose
        return
    last = max(resolved)
    V = BALL.array(case.layers[0].V)
    G_last = run.Y[last].E
    miss = M * quantities.diameter(BALL, G_last)  # >= ||V^t (c - c^)|| for every t
    offsets_by_t = {}
    to_estimate = -(G_last.sum(axis=0) / BALL.number(case.n))  # y_last - c^
    for t in reversed(range(last + 1)):  # y_t - c^ = (y_last - c^) - sum_{t <= s < last} delta_s
        if t < last:
            to_estimate = to_estimate - run.drifts[t]
        offsets_by_t[t] = run.Y[t].E + to_estimate  # rows y_i^(t) - c^
    power = BALL.array([[int(i == j) for j in range(case.d)] for i in range(case.d)])  # V^t
    for t in range(last + 1):
        offsets = BALL.matmul(offsets_by_t[t], power.T)  # rows x_i^(t) - V^t c^
        observed = BALL.maximum(BALL.sqrt_nonneg((offsets * offsets).sum(axis=1)))
        ceiling = M * quantities.diameter(BALL, run.Y[t].E)  # r_t <= ||V^t|| D(Y_t)
        low = (observed - miss).lower().max(arb(0))
        high = (observed + miss).upper().min(ceiling.upper())
        run.points[t].approach = low.union(high)
        power = BALL.matmul(V, power)


def _value_norms(case: config.Case, T: int, witnesses: dict, max_prec: int) -> tuple[tuple[arb, arb], int]:
    """((M, rho), bits): M = max_{0<=k<=T} ||V^k||_2, the primitive "M" of certify.core.primitives (float64
    screen for the witnesses "V0^k", then the ball pass), and rho = ||V||_2 from the witness of V^1, as the checker
    computes both (its power_norms), from NORM_PRECISION bits, doubled up to max_prec while M has fewer than
    RESOLVED_BITS correct bits.  M only scales the curves, but the
    balls of V^k widen by about || |V| ||_2 / ||V||_2 per power (1.38 for a rotation by 1 rad): at 128
    bits M was nan from T = 280, every curve undecided, and the run escalated to its cap for nothing."""
    layer = case.layers[0]

    def attempt(precision: int) -> tuple[arb, arb]:
        for ar in (FLOAT64, BALL):
            view = LayerView(ar=ar, t=0, layer=layer, arrays=layer_arrays(ar, layer, case.n), X=None, step=None,
                             X0=None, witnesses=witnesses, depth=T)
            M = view.get("M")
        return M, BALL.spectral_norm(view.arrays.V, witnesses, "V0^1")

    return escalate(attempt, lambda norms: norms[0].is_finite() and is_resolved(norms[0]), NORM_PRECISION, max_prec)


def _query_key_norms(case: config.Case, witnesses: dict) -> list:
    """a = ||A||_2 of each configuration layer, certified at the current precision (witnesses "A<t>"), as `certify
    check` encloses it (the primitive "a" of certify.core.primitives): a thin head through its d_k x d_k reduction
    where W_K^T W_K is certainly positive definite, else through the d x d A, whose norm costs 4 d^3 (a 256 x 768
    head with d_k = 64 passed the checker's default work limit in 2 layers); a repeated head once."""
    shared: dict = {}  # what the layers share: an earlier layer's a for the same head
    return [LayerView(ar=BALL, t=t, layer=layer, arrays=layer_arrays(BALL, layer, case.n), X=None, step=None,
                      X0=None, witnesses=witnesses, shared=shared).get("a") for t, layer in enumerate(case.layers)]


def one_minus_gap(a: arb, D: arb) -> arb:
    """1 - exp(-a D^2) as -expm1(-a D^2): full relative accuracy when a D^2 is tiny."""
    return -BALL.expm1(-(a * D * D))


def log_g(a: arb, log_D: arb) -> arb:
    """log g_a(D) = log(1 - exp(-a D^2)) + log D from log D, for the composed curve.

    The composed curve inherits the radius of a (about 1e-16 relative, from its float64 witness)
    tripled at each layer near consensus, so past some 30 layers D itself is known only through
    its logarithm.  With x = a D^2 <= 2^-prec: (1 - e^-x)/x lies in [1 - x/2, 1], so
    log(1 - e^-x) = log x + [-x, 0]; otherwise it is evaluated directly.
    """
    log_x = a.log() + 2 * log_D
    if log_x.upper() < -ctx.prec * math.log(2):
        x_upper = log_x.upper().exp()
        return log_x + arb(0).union(-x_upper) + log_D
    return (-BALL.expm1(-(a * (2 * log_D).exp()))).log() + log_D


def _cubic(c: arb, D0: arb, T: int, named: str) -> dict | str:
    """{t: log of c^{-1/2} (sqrt(c) D_0)^(3^t)} for t = 1..T, the bound of layers with D' <= c D^3 (u = sqrt(c) D
    gives u' <= u^3: doubly exponential collapse), or why it is not drawn, c written as `named`: c > 0 or
    sqrt(c) D_0 < 1 not proven.  With c = 0 the hypothesis sqrt(c) D_0 < 1 holds but the curve divides by
    sqrt(c): "needs sqrt(rho a) D_0 < 1; here rho a = 0" read as a hypothesis that failed."""
    if not c > 0:
        return f"needs {named} > 0 (the curve divides by sqrt({named})); here {named} " + (
            "= 0" if c.is_zero() else "> 0 is not proven")
    root = c.sqrt()
    base = root * D0
    if not base < 1:
        return (f"needs sqrt({named}) D_0 < 1 (near consensus); here sqrt({named}) D_0 = "
                f"{base.str(5, radius=False)} is not proven < 1")
    return {t: arb(fmpz(3) ** t) * base.log() - root.log() for t in range(1, T + 1)}


def _curves(case: config.Case, points: list, a: list, M, rho, drawn: dict, skipped: dict) -> None:
    """The drawn curves at every t, as logarithms (point.log_curves) and values (point.curves); M and rho = ||V||_2
    for the value curves."""
    L = len(case.layers)
    T = len(points) - 1
    D0 = quantities.diameter(BALL, BALL.array(case.X))
    a_max = BALL.maximum(a[:T])  # of the layers used
    logs = {name: {} for name in drawn}
    if "global.step" in drawn:
        for t in range(1, T + 1):
            previous = points[t - 1]
            if previous.resolved:
                logs["global.step"][t] = one_minus_gap(a[(t - 1) % L], previous.D).log() + previous.D.log()
    if "global.composed" in drawn:
        log_bound = D0.log()
        for t in range(1, T + 1):
            log_bound = log_g(a[(t - 1) % L], log_bound)
            logs["global.composed"][t] = log_bound
    # D' <= a D^3 (collapse.cubic); with V, D' <= ||V|| (1 - exp(-a D^2)) D <= ||V|| a D^3 (value.expansive)
    for name, c, named in (("cubic", a_max, "a"), ("value.expansive", None if rho is None else rho * a_max, "rho a")):
        if name in drawn:
            found = _cubic(c, D0, T, named)
            if isinstance(found, str):
                skipped[name] = found
                del drawn[name], logs[name]
            else:
                logs[name] = found
    if "value.bounded" in drawn:
        log_factor = one_minus_gap(a_max, M * D0).log()
        for t in range(1, T + 1):
            logs["value.bounded"][t] = M.log() + t * log_factor + D0.log()
    if "value.approach" in drawn:
        log_product = M.log() + D0.log()
        for t in range(1, T + 1):
            tau = points[t - 1].tau
            if tau is None:
                break
            log_product = log_product + tau.log()
            logs["value.approach"][t] = log_product
    for name, by_t in logs.items():
        for t, log_value in by_t.items():
            points[t].log_curves[name] = log_value
            points[t].curves[name] = log_value.exp()


def compare(quantity: arb, log_curve: arb):
    """quantity <= exp(log_curve), three-valued (True, False, None): through logarithms when the
    quantity is certainly positive (a curve known only through its log stays comparable)."""
    if quantity > 0:
        return BALL.certainly_le(quantity.log(), log_curve)
    if quantity.is_zero() and quantity.is_exact():
        return True  # every curve is positive
    return BALL.certainly_le(quantity, log_curve.exp())


def _check(points: list, drawn: dict) -> None:
    """Each drawn curve against its quantity, three-valued; unresolved where the quantity is."""
    for point in points:
        for name in drawn:
            if name not in point.curves:
                continue
            quantity = point.D if CURVES[name][0] == "D" else point.approach
            if quantity is None or not point.resolved:
                point.checks[name] = UNRESOLVED
            else:
                point.checks[name] = OUTCOMES[compare(quantity, point.log_curves[name])]


FLOAT64_TINY = arb(2) ** -1022  # the smallest normal binary64: below it a value is shown as 10^(log10)
FLOAT64_HUGE = arb(2) ** 1023


def in_float64_range(x: arb) -> bool:
    """Whether |x| is 0 or between the smallest normal and the largest binary64 (printable as is)."""
    return x.is_zero() or FLOAT64_TINY <= abs(x) <= FLOAT64_HUGE


def log10(x: arb | None) -> float | None:
    """log10 of a positive ball's midpoint, for plots and tables (None when not certainly positive, or
    when the logarithm itself is beyond float64: log10 D_t = -3^t is, from t = 646, and JSON has no
    -Infinity; log10_ball keeps it)."""
    if x is None or not x > 0:
        return None
    return finite_float(log10_ball(x))


def finite_float(x: arb) -> float | None:
    """x's midpoint as a float64, or None when it is beyond float64's range (or not finite)."""
    value = float(x.mid()) if x.is_finite() else math.nan
    return value if math.isfinite(value) else None


def to_json(trajectory: Trajectory) -> dict:
    """The trajectory as JSON; logarithms are taken at its curve precision (exponents can have 47 digits)."""
    with working(trajectory.curve_precision):
        return _to_json(trajectory)


def _to_json(trajectory: Trajectory) -> dict:
    tr = trajectory

    def shown(verdict: str) -> str:  # a verdict the checker did not confirm reads "(not certified)"
        return labelled(verdict, tr.certified)

    def point_json(p: Point) -> dict:
        return {"t": p.t, "resolved": p.resolved, "D": text(p.D), "log10_D": log10(p.D),
                "log10_D_ball": None if p.D is None or not p.D > 0 else text(log10_ball(p.D)), "mu": text(p.mu),
                "tau": text(p.tau), "approach": text(p.approach),
                "curves": {name: text(value) for name, value in p.curves.items()},
                "log10_curves": {name: finite_float(log10_from_log(value)) for name, value in p.log_curves.items()},
                "log10_curve_balls": {name: text(log10_from_log(value)) for name, value in p.log_curves.items()},
                "checks": {name: shown(outcome) for name, outcome in p.checks.items()}}

    return {
        "name": tr.name, "layers": tr.T, "cycle": tr.cycle,
        "schedule": "layer t applies the configuration's layer t mod cycle",
        "verdict": shown(tr.verdict), "resolved_through": tr.resolved_through,
        "precision": tr.precision, "step_precisions": tr.step_precisions, "max_precision": tr.max_precision,
        "precision_cap": tr.precision_cap,
        "curve_precision": tr.curve_precision,
        "resolved_bits": RESOLVED_BITS,
        "a": [text(a) for a in tr.a], "M": text(tr.M), "rho": text(tr.rho),
        "curves": dict(tr.drawn), "skipped": dict(tr.skipped),
        "points": [point_json(p) for p in tr.points],
        "representation": tr.representation, "certified": tr.certified, "checker": tr.confirmation,
        "stopped": tr.stopped or None,
        "seconds": round(tr.seconds, 2),
    }

