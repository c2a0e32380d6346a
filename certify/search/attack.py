"""`certify attack`: adversarial search for tight cases and counterexamples of a claim or a bound.

Untrusted search, trusted verdicts: the optimiser only proposes configurations; a violation is
reported only after `certify.engine.check` has certified it (and the independent checker has
confirmed it), on the shrunk configuration that is written out.

The search maximises the score of certify.search.objective (> 0: the target looks violated)
over the tokens X_0 and the parameters of one layer or of a stack of T layers (with a fixed mask;
each head the entries of A, or of W_Q and W_K for thin heads: certify.search.heads),
with D normalised to 1 and L = a D^2 explicit, in four phases sharing the budget (five with scale variables):
    explore  first EXTREMAL_POINTS shapes near the known extremal structure (two opposite groups of
             coinciding tokens along A's top singular direction: Layout.extremal_shape) evaluated
             across the range of L, kept only where they look violated; then many starts, each
             optimised (Nelder-Mead) at a fixed L drawn from its own stratum of log L, so the whole
             range of L is searched, not only where the score is steepest, every other one random
             and the others from the best shapes found nearest in L;
    sweep    the best shapes, and the extremal structure, evaluated on a fine grid of L: a shape that is
             good at one L is nearly as good nearby, and this catches bounds that fail only in a narrow range;
    scales   for a stack, or a target that does not scale like D: the best shapes with each later layer's
             head, and D_0, moved on a grid across orders of magnitude (Layout.rescaled), the sweep's
             reasoning for the diameters and L_t of the later layers, which the starts keep near D_0 and L;
    ladder   continuation in L: the best shape re-optimised at fixed L on rungs up to the
             largest L and down to the smallest, each rung starting from the previous optimum;
    polish   the best points optimised jointly in shape and log L.
Meanwhile every evaluation updates, per band of L, the largest ratio lhs/rhs and the largest
exponent c = -ln(1 - D'/D) / (a D^2) seen, which is what says how tight a bound is.

Everything above is sequential and a function of the seed, of the objective's values and, for a
time budget, of the clock: with a folder (`out`), those are journaled as they happen and a run on
the same folder replays them instead of computing them again (certify.search.attack_folder), so an
interrupted attack resumes without losing or repeating its evaluations.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import minimize

from certify import engine
from certify.core import config, numbers, seeds
from certify.core.files import folder_path
from certify.core.arguments import Spelling, callback, flag, integer
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits, size as in_bytes
from certify.core.precision import check_precision_cap
from certify.core.verdicts import short_repr
from certify.errors import BadInput, CertainlyUndefined, counted, shown
from certify.search import attack_folder, objective, shrink
from certify.search.l_range import LRange
from certify.search.objective import Evaluation, Layout

DEFAULT_STARTS = 16  # the most starts chosen automatically, and the number for a time budget
MIN_STARTS = 4
EVALUATIONS_PER_DIMENSION = 40
DEFAULT_BUDGET = "3000"
DEFAULT_L_RANGE = (2.0**-4, 2.0**10)
L_RANGE = LRange(2.0**-20, 2.0**14, fixed=False, why="the search moves L within it; beyond, exp(-L) is 1 to "
                 "the precision used or absurdly small")
MAX_EVALUATIONS = 10**7
MAX_SECONDS = 24 * 3600
MAX_STARTS = 10_000
MAX_SIZE = 64  # tokens and dimension: the search is for small, readable configurations
PHASES = (("explore", 0.5), ("sweep", 0.6), ("ladder", 0.85), ("polish", 1.0))  # cumulative shares of the budget
# with scale variables besides L (Layout.scales: a stack's later heads, D_0 of a target not scaling like D), the
# scales phase takes a tenth of the budget from the explore
SCALED_PHASES = (("explore", 0.4), ("sweep", 0.5), ("scales", 0.6), ("ladder", 0.85), ("polish", 1.0))
SCALE_POINTS = 40  # the fewest points on a scale's grid: steps of 2^2 in L_t over HEAD_SCALE_RANGE
EXTREMAL_POINTS = 8  # shapes near the extremal structure evaluated before the explore's local runs
# the score an extremal point needs to be kept: on a sharp bound it is the equality, whose float64 score is a
# rounding error of either sign (up to 1.4e-12 seen), and kept it led the search to the equality, not elsewhere
EXTREMAL_MARGIN = 1e-9
SWEEP_SHAPES = 3
RUNGS = 6  # fixed-L re-optimisations on each side of the best point
TRANSFERS = 4  # shapes tried as the start of a local run at a new L
POLISH_POINTS = 3
FINALISTS = 3
CHECK_MAX_PREC = 1 << 14  # finalists and shrinking: an equality (undecided) must not cost minutes


class Exhausted(Exception):
    """The current share of the budget is spent."""


@dataclass
class Budget:
    """A number of objective evaluations (reproducible) or of seconds (not reproducible)."""

    evaluations: int | None = None
    seconds: float | None = None
    spent: int = 0
    started: float = field(default_factory=time.monotonic)
    clock: Callable[[], float] | None = None  # seconds of search, when not since `started` (a journal's)

    @classmethod
    def parse(cls, text: str | int, option: str = "--budget") -> Budget:
        """The budget written as "3000" (evaluations, 50 to MAX_EVALUATIONS, an integer option: "1e3" too) or
        "10s" (seconds, a real option, up to MAX_SECONDS); BadInput for anything else, saying why (the budget
        named `option`, the command's --budget or the API's budget=)."""
        text = str(text).strip()
        if text.endswith("s"):
            try:
                seconds = numbers.option_real(text[:-1])
            except numbers.RefusedOption as wrong:
                raise BadInput(f"{option} {shown(text)}: the seconds {wrong.reason}") from None
            if not 0 < seconds <= MAX_SECONDS:
                raise BadInput(f"{option} {shown(text)}: a time budget is more than 0 and at most {MAX_SECONDS} seconds")
            return cls(seconds=seconds)
        try:  # the integer options' rules: "1e3" was refused here where --seed 1e3 is taken
            evaluations = numbers.option_integer(text)
        except numbers.RefusedOption as wrong:
            raise BadInput(f"{option} {wrong.reason}; a budget is a number of evaluations (e.g. 3000) or of "
                           "seconds (e.g. 10s)") from None
        if not 50 <= evaluations <= MAX_EVALUATIONS:
            raise BadInput(f"{option} {shown(text)}: between 50 and {MAX_EVALUATIONS} evaluations")
        return cls(evaluations=evaluations)

    def used(self) -> float:
        """The share of the budget used, from 0 to 1: of a time budget, that of its seconds or, when more, of
        MAX_EVALUATIONS (most_evaluations)."""
        if self.evaluations is not None:
            return self.spent / self.evaluations
        # at most 1: over a subnormal budget (--budget 1e-320s) the seconds overflowed the share to inf, which the
        # sweep took times no evaluations left for a NaN count
        seconds = min((self.clock() if self.clock else time.monotonic() - self.started) / self.seconds, 1.0)
        return max(seconds, self.spent / MAX_EVALUATIONS)

    @property
    def most_evaluations(self) -> int:
        """The most evaluations a search of this budget makes: a time budget ends at MAX_EVALUATIONS too, the most
        an evaluation budget may ask.  Its journal is then bounded (24 h at 4000 evaluations a second were 3 x 10^8
        evaluations and as many clock readings, 40 GB, to scan when resumed), and so is the sweep's estimate of the
        evaluations left, which a clock that did not advance (a journal's readings) made 10^9 a point, a grid of
        terabytes."""
        return MAX_EVALUATIONS if self.evaluations is None else self.evaluations

    @property
    def most_clock_readings(self) -> int:
        """The most readings of the clock a search of this budget takes: none for evaluations (used() reads none);
        for seconds one before each evaluation (_Search.score) and besides them at most 3 a start (MAX_STARTS)
        and some tens in the other phases (measured: 94 in all at 16 starts, 1533 at 500 starts on a clock of 20 us a
        reading), far fewer than MAX_EVALUATIONS more."""
        return 0 if self.evaluations is not None else 2 * MAX_EVALUATIONS

    def describe(self) -> str:
        """The budget as a reader sees it: "3000 evaluations" or "10 s"."""
        return f"{self.evaluations} evaluations" if self.evaluations is not None else f"{self.seconds:g} s"

    def to_json(self) -> dict:
        """{"evaluations": N} or {"seconds": S}: the budget exactly, for an attack folder's parameters."""
        return {"evaluations": self.evaluations} if self.evaluations is not None else {"seconds": self.seconds}


SEARCH_LABEL = ("float64 (not certified): best, best_exponent, bands and finalists; a counterexample is reported only "
                "once certified")


@dataclass
class Band:
    """The largest ratio and exponent seen for L in [low, high)."""

    low: float
    high: float
    evaluations: int = 0
    ratio: Evaluation | None = None
    exponent: Evaluation | None = None


@dataclass
class AttackReport:
    """An adversarial search (certify.attack): what it evaluated, the best points per band of
    L = a D^2, and a shrunk counterexample confirmed by the checker when one was found."""

    target: str
    claim: str | None
    bound: str | None
    layout: Layout
    seed: int
    starts: int
    budget: str
    l_range: tuple[float, float]
    evaluations: int
    seconds: float
    best: Evaluation | None  # the highest score
    best_exponent: Evaluation | None
    bands: list[Band]
    finalists: list[dict]  # each candidate with score > 0 and what the engine said about it
    counterexample: shrink.Shrunk | None
    interrupted: bool = False  # a Ctrl-C stopped it: best points so far, a violation only if already certified
    replayed: int = 0  # of the evaluations, those taken from the journal of the folder it resumed
    undefined: int = 0  # of the evaluations, those where the bound is certainly undefined: not scored
    undefined_reason: str = ""  # why, at one of them
    files: dict = field(default_factory=dict)  # {name: path} of the files written into its folder

    @property
    def violated(self) -> bool:
        """Whether a certified counterexample was found."""
        return self.counterexample is not None

    @property
    def searched(self) -> bool:
        """Whether the search evaluated at least one point: a time budget can run out before the first (a
        budget of 1e-9 s, or a first evaluation slower than the budget), and then nothing was searched."""
        return self.evaluations > 0

    @property
    def outcome(self) -> str:
        """"violated" (a certified counterexample), "nothing found" (which guarantees nothing) or "nothing
        searched" (no point evaluated: no answer either way)."""
        return "violated" if self.violated else "nothing found" if self.searched else "nothing searched"

    @property
    def exit_code(self) -> int:
        """1 when a certified counterexample was found; 0 when the search ran and found nothing (which guarantees
        nothing); 3, undecided, when it evaluated no point: reading that as "nothing found" would report a
        search that never ran as if it had looked and seen no violation."""
        return 1 if self.violated else 0 if self.searched else 3

    def __repr__(self) -> str:
        if self.counterexample is not None:
            result = self.counterexample.result
            found = (f"certified counterexample with {self.counterexample.case.n} tokens, margin {result.margin_text}, "
                     "confirmed by the checker")
        elif self.searched:
            found = "no violation found (nothing is guaranteed)"
        else:
            found = "no point evaluated (the budget ran out first): no answer"
        found += "; interrupted" if self.interrupted else ""
        found += f"; {self.replayed} evaluations replayed" if self.replayed else ""
        return short_repr(f"attack {self.outcome}",
                          f"{found}; {self.evaluations} evaluations in {self.seconds:.1f} s; {self.target}")

    def configuration(self, evaluation: Evaluation, name: str) -> dict:
        """The configuration file (JSON dict) of an evaluated point."""
        arrays = self.layout.arrays(evaluation.shape, evaluation.L_param)
        return config.to_json(self.layout.case(*arrays, name=name))

    def to_json(self) -> dict:
        """The report as JSON (what `certify attack --json` prints)."""
        pure = not self.layout.with_v and not self.layout.residual and self.layout.mask is None
        return {
            "target": self.target, "claim": self.claim, "bound": self.bound,
            "layout": self.layout.describe(), "n": self.layout.n, "d": self.layout.d, "d_k": self.layout.d_k,
            "layers": self.layout.layers, "mask": self.layout.mask,
            "seed": self.seed, "starts": self.starts, "budget": self.budget, "L_range": list(self.l_range),
            "evaluations": self.evaluations, "replayed": self.replayed, "undefined": self.undefined,
            "seconds": round(self.seconds, 2),
            "violated": self.violated, "outcome": self.outcome,
            "interrupted": self.interrupted,
            # as the text report says, and as check --json labels its float64 screen: the JSON showed these
            # figures unlabelled beside a certified counterexample
            "search": SEARCH_LABEL,
            "best": _point_json(self.best),
            "best_exponent": _point_json(self.best_exponent),
            "bands": [{"L_from": b.low, "L_to": b.high, "evaluations": b.evaluations,
                       "best_ratio": _point_json(b.ratio), "best_exponent": _point_json(b.exponent),
                       **({"antipodal_exponent": antipodal_exponent(b.exponent.L)} if pure and b.exponent else {})}
                      for b in self.bands],
            "finalists": self.finalists,
            "counterexample": None if self.counterexample is None else {
                "configuration": config.to_json(self.counterexample.case),
                "verdict": self.counterexample.result.verdict,
                "margin": self.counterexample.result.margin_text,
                "precision": self.counterexample.result.precision,
                "shrink_steps": [{"move": s.move, "kept": s.kept} for s in self.counterexample.steps],
            },
        }


def antipodal_exponent(L: float) -> float:
    """c = -ln(1 - tanh(L/4)) / L = ln((e^{L/2} + 1) / 2) / L: two antipodal tokens at a D^2 = L.

    For pure attention it is the largest exponent any configuration can have at this L:
    tau(P) <= tanh(Delta / 4) (Birkhoff-Hopf; Delta <= a D^2 bounds the spread of
    log(P_ij / P_kj) over j), so D' <= tanh(a D^2 / 4) D; it tends to 1/2 from below.
    """
    half = L / 2
    return (half + math.log1p(math.exp(-half)) - math.log(2)) / L


def _point_json(e: Evaluation | None) -> dict | None:
    if e is None:
        return None
    return {"score": e.score, "log_ratio": e.log_ratio, "ratio": e.ratio, "exponent": e.exponent, "L": e.L}


class _Search:
    """One attack's state: the objective with its budget, and what it has seen."""

    def __init__(self, claim, layout: Layout, budget: Budget, rng, l_range, progress,
                 journal: attack_folder.Journal | None = None, on_certify: Callable[[str], None] | None = None):
        self.claim, self.layout, self.budget, self.rng, self.progress = claim, layout, budget, rng, progress
        self.on_certify = on_certify or (lambda status: None)
        self.journal = journal
        self.log_range = (math.log(l_range[0]), math.log(l_range[1]))
        # bands [4^k, 4^(k+1)) covering the range; a point just outside (rounding) joins the nearest one
        self.band_range = (math.floor(math.log2(l_range[0]) / 2), math.ceil(math.log2(l_range[1]) / 2) - 1)
        self.limit = 1.0
        self.best: Evaluation | None = None
        self.best_exponent: Evaluation | None = None
        # what the sweep and the ladder start from: best and best_exponent but for the extremal points that do
        # not look violated (see extremal)
        self.lead: Evaluation | None = None
        self.lead_exponent: Evaluation | None = None
        self.bands: dict[int, Band] = {}
        self.candidates: list[Evaluation] = []  # the best point of every local run and sweep
        self.finalists: list[dict] = []  # each candidate checked, with what the engine said about it
        self.counterexample: shrink.Shrunk | None = None  # certified violated from the moment it is set
        self.undefined = 0  # evaluations where the bound is certainly undefined (unscored)
        self.undefined_reason = ""  # why, at the first of them evaluated (not replayed) when there is one

    def score(self, shape: np.ndarray, L: float, lead: bool = True) -> Evaluation:
        """The evaluation of one point, recorded (and, unless `lead` is False, a possible lead)."""
        if self.budget.used() >= self.limit:
            raise Exhausted
        point = np.array(shape, dtype=float)
        if self.journal is None:
            e = objective.evaluate(self.claim, self.layout, point, L)
        else:
            e = self.journal.evaluation(point, L, lambda: objective.evaluate(self.claim, self.layout, point, L))
        self.budget.spent += 1
        if e.undefined:
            self.undefined += 1
            if not self.undefined_reason or self.undefined_reason == attack_folder.UNDEFINED_REPLAYED:
                self.undefined_reason = e.undefined
        self._record(e)
        if lead:
            self._lead(e)
        if self.progress:  # after the record: an interruption the bar's count invites finds the point counted
            self.progress(1)
        return e

    def _lead(self, e: Evaluation) -> None:
        if not math.isfinite(e.score):
            return
        if self.lead is None or e.score > self.lead.score:
            self.lead = e
        if e.exponent is not None and (self.lead_exponent is None or e.exponent > self.lead_exponent.exponent):
            self.lead_exponent = e

    def _record(self, e: Evaluation) -> None:
        if not math.isfinite(e.score):
            return
        if self.best is None or e.score > self.best.score:
            self.best = e
        if not 0 < e.L < math.inf:  # a journal's L may be anything, and inf has no band (floor(log2(inf)) raises)
            return
        k = min(max(math.floor(math.log2(e.L) / 2), self.band_range[0]), self.band_range[1])
        band = self.bands.setdefault(k, Band(4.0**k, 4.0 ** (k + 1)))
        band.evaluations += 1
        if band.ratio is None or e.log_ratio > band.ratio.log_ratio:
            band.ratio = e
        if e.exponent is not None:
            if band.exponent is None or e.exponent > band.exponent.exponent:
                band.exponent = e
            if self.best_exponent is None or e.exponent > self.best_exponent.exponent:
                self.best_exponent = e

    def local(self, decode: Callable, x0: np.ndarray, until: float) -> Evaluation | None:
        """Nelder-Mead from x0 until the budget share `until`; the best point it evaluated."""
        best: Evaluation | None = None

        def negative_score(x):
            nonlocal best
            e = self.score(*decode(x))
            if best is None or e.score > best.score:
                best = e
            return -e.score if math.isfinite(e.score) else 1e300

        self.limit = until
        try:
            minimize(negative_score, x0, method="Nelder-Mead",
                     options={"maxfev": 10**9, "xatol": 1e-12, "fatol": 1e-15, "adaptive": len(x0) > 4})
        except Exhausted:
            pass
        if best is not None and math.isfinite(best.score):
            self.candidates.append(best)
            return best
        return None

    def run_until(self, end: float, runs_left: int) -> float:
        """The budget share at which the next of `runs_left` local runs stops: an equal part of what is left."""
        used = self.budget.used()
        return min(end, used + (end - used) / runs_left)

    def clip_L(self, log_L: float) -> float:
        return math.exp(min(max(log_L, self.log_range[0]), self.log_range[1]))

    def explore(self, starts: int, end: float) -> None:
        """Starts at fixed L, one per stratum of log L; every other one begins from a shape found before.

        A shape that is good at one L is a good start nearby (continuation in L): the structure of
        a tight case is easy to find where the score is steep and hard where it saturates.
        """
        lo, hi = self.log_range
        self.limit = end
        try:
            self.extremal(EXTREMAL_POINTS)
        except Exhausted:
            return
        for done, stratum in enumerate(self.rng.permutation(starts)):
            L = math.exp(lo + (stratum + self.rng.uniform()) / starts * (hi - lo))
            until = self.run_until(end, starts - done)
            self.limit = until  # the transfer start evaluates too
            try:
                shape = self._start_shape(L, transfer=done % 2 == 1)
            except Exhausted:
                return
            self.local(lambda x, L=L: (x, L), shape, until)
            if self.budget.used() >= end:
                return

    def extremal(self, points: int) -> None:
        """Shapes near the known extremal structure (Layout.extremal_shape), one evaluated at the middle of each
        of `points` strata of log L; those that look violated are kept as candidates (and so certified) and may
        lead the later phases, the others only count in the report (best, bands).

        Random shapes in 8 or more variables rarely come near that structure, and where L is large its score
        is the only steep one: a bound false only there was found on 0 to 6 of 10 seeds from random starts
        alone (benchmarks/attack.py).  Evaluated, not optimised, and kept only when violating: on a true
        sharp bound the structure is its equality, the highest score there is (a rounding error, often > 0),
        and made a candidate it led the later phases away from violations elsewhere (a bound failing only
        at a stack's third layer, benchmarks/attack.py's window, was found on 14 of 36 seeds instead of 21).
        """
        lo, hi = self.log_range
        for k in range(points):
            self._keep_violating(self.score(self.layout.extremal_shape(self.rng),
                                            math.exp(lo + (k + 0.5) / points * (hi - lo)), lead=False))

    def _keep_violating(self, e: Evaluation) -> None:
        """A point near the extremal structure, scored with lead=False: a candidate and a possible lead only when
        it looks violated (extremal says why)."""
        if e.score > EXTREMAL_MARGIN:
            self.candidates.append(e)
            self._lead(e)

    def _start_shape(self, L: float, transfer: bool) -> np.ndarray:
        """A random shape, or the best at L of the shapes found nearest in log L (one evaluation each)."""
        if not transfer or not self.candidates:
            return self.layout.random_shape(self.rng)
        nearest = sorted(self.candidates, key=lambda e: abs(math.log(e.L_param / L)))[:TRANSFERS]
        trials = [self.score(e.shape, L) for e in nearest]
        return max(trials, key=lambda e: e.score).shape

    def sweep(self, end: float) -> None:
        """The most violating shape, the tightest (largest exponent) and the next most violating, over all L; then
        a shape near the extremal structure (Layout.extremal_shape), kept only where it looks violated.

        The explore evaluates that structure at EXTREMAL_POINTS values of L only, steps of a factor 4 or more
        apart, and random shapes in 8 or more variables come near it no closer than about 1% in lhs/rhs: a
        bound 1% below the sharp one only for L in (2, 4) was found on 0 of 5 seeds at n = 2, d = 4 and at
        n = 4, d = 2 under the default budget (benchmarks/attack.py's mid-L dip), and at n = 3, d = 2, where
        the structure needs its odd token hidden (Layout.extremal_shape's hidden_at).
        """
        shapes = self._leading(SWEEP_SHAPES)
        points = max(16, int((end - self.budget.used()) * self._total_evaluations() / (len(shapes) + 1)))
        grid = np.exp(np.linspace(*self.log_range, points))
        self.limit = end
        for e in shapes:
            self._best_of((e.shape, float(L)) for L in grid)
        # the structure itself, with an odd token hidden at each L where it can be (Layout.extremal_shape)
        self._best_of(((self.layout.extremal_shape(self.rng, noise=0.0, hidden_at=float(L)), float(L)) for L in grid),
                      lead=False)

    def scales(self, end: float) -> None:
        """The best shapes with each scale variable (Layout.rescaled) evaluated on a grid across its range, at
        the shape's L: the sweep's reasoning for the other quantities a bound can depend on.

        Through a stack, the later layers' D_t and L_t follow from the ratios of the heads, which random starts
        keep near 1 and local runs move by small steps: a bound false only where D_2 is near exp(-30)
        (benchmarks/attack.py's window) was found on 14 of 20 seeds, by starts that happened to drift there.
        """
        scales = self.layout.scales
        if not scales:
            return
        evaluations = (end - self.budget.used()) * self._total_evaluations()
        shapes = self._leading(min(SWEEP_SHAPES, max(1, int(evaluations // (SCALE_POINTS * scales)))))
        if not shapes:
            return
        places = np.linspace(0.0, 1.0, max(SCALE_POINTS, int(evaluations / (len(shapes) * scales))))
        self.limit = end
        for e in shapes:
            for scale in range(scales):
                self._best_of((shape, e.L_param) for shape in self.layout.rescaled(e.shape, scale, places))

    def _leading(self, count: int) -> list[Evaluation]:
        """Up to `count` distinct shapes to move: the lead, the tightest, then the candidates by score."""
        first = [e for e in (self.lead, self.lead_exponent) if e is not None]
        return self.distinct(first + _by_score(self.candidates), count)

    def _best_of(self, points, lead: bool = True) -> None:
        """Evaluate the (shape, L) points in order until the share is spent; the best of them is a candidate (with
        lead=False, points near the extremal structure: only when it looks violated, see _keep_violating)."""
        best = None
        try:
            for shape, L in points:
                trial = self.score(shape, L, lead=lead)
                if best is None or trial.score > best.score:
                    best = trial
        except Exhausted:
            pass
        if best is not None and lead:
            self.candidates.append(best)
        elif best is not None:
            self._keep_violating(best)

    def ladder(self, end: float) -> None:
        """Continuation in L: the best shape re-optimised on rungs up to the largest L, then down to the smallest.

        Where L is large the score saturates and random starts rarely find the structure of a tight
        case; carried up from where it was found, the structure only needs adjusting.
        """
        start = self.lead
        if start is None:
            return
        here, (lo, hi) = math.log(start.L_param), self.log_range
        rungs = [list(np.linspace(here, hi, RUNGS + 1)[1:]), list(np.linspace(here, lo, RUNGS + 1)[1:])]
        left = 2 * RUNGS
        for side in rungs:
            shape = start.shape
            for log_L in side:
                until = self.run_until(end, left)
                left -= 1
                rung = math.exp(log_L)
                found = self.local(lambda x, L=rung: (x, L), shape, until)
                if found is not None:
                    shape = found.shape
                if self.budget.used() >= end:
                    return

    def _total_evaluations(self) -> float:
        """Evaluations the whole budget allows (estimated from the pace so far for a time budget)."""
        if self.budget.evaluations is not None:
            return self.budget.evaluations
        return self.budget.spent / max(self.budget.used(), 1e-9)

    def distinct(self, ranked: list[Evaluation], count: int) -> list[Evaluation]:
        """The first `count` of `ranked` whose normalised configurations (at L = 1) differ (by their tokens,
        query-key matrices A and value matrices: thin heads with other factors of the same A are the same)."""
        chosen: list[tuple[Evaluation, list]] = []
        for e in ranked:
            # at the point's own L, where it was built (a head too small to scale to L = 1 has no arrays there)
            X, Hs, Vs = self.layout.arrays(e.shape, e.L_param)
            arrays = [m for m in (X, [self.layout.head.matrix(H) / e.L_param for H in Hs], Vs) if m is not None]
            if not any(_same(arrays, seen) for _, seen in chosen):
                chosen.append((e, arrays))
            if len(chosen) == count:
                break
        return [e for e, _ in chosen]

    def certify_finalists(self, claim_id: str | None, bound: str | None, max_prec: int, limits: Limits) -> None:
        """Check the most violating distinct points until one is certified violated, then shrink that one
        (self.counterexample holds a certified violation throughout, should a Ctrl-C stop the shrinking)."""
        violating = [e for e in [self.lead] + self.candidates if e is not None and e.score > 0]
        finalists = self.distinct(_by_score(violating), FINALISTS)
        # then the most violating point of each band of L (the report's table) whose lhs/rhs is above 1 by more
        # than an equality's rounding, by its ratio: the score saturates at large L, where the sides agree to about
        # exp(-L) and the precision cap may decide none of the top scores, while a band below shows lhs/rhs well
        # above 1 (at --max-prec 53, (1-exp(-a*D**2/3))*D: three points at L = 1024 undecided, NOTHING FOUND
        # beside log(lhs/rhs) = 0.046)
        leaders = [b.ratio for b in self.bands.values()
                   if b.ratio is not None and b.ratio.log_ratio > EXTREMAL_MARGIN]
        finalists += [e for e in sorted(leaders, key=lambda e: e.log_ratio, reverse=True)
                      if not any(math.isclose(e.L, f.L, rel_tol=1e-6) and len(self.distinct([f, e], 2)) == 1
                                 for f in finalists)][:FINALISTS]
        for number, e in enumerate(finalists, 1):
            case = self.layout.case(*self.layout.arrays(e.shape, e.L_param))
            self.on_certify(f"candidate {number} of {len(finalists)} at L = {e.L:.4g}")
            # engine.check returns a violation only once the checker has confirmed its certificate,
            # and shrinking keeps only such results: the counterexample needs no further check
            try:
                result = engine.check(case, claim=claim_id, bound=bound, max_prec=max_prec, limits=limits)
            except CertainlyUndefined as undefined:
                # float64 scored a point where the bound is certainly undefined (a cancellation it rounded to a
                # positive log argument): no counterexample there, as the search's own undefined points are not,
                # and the next finalist is checked (this ended the attack as bad input, its journal discarded)
                self.finalists.append({"score": e.score, "L": e.L, "verdict": engine.UNDECIDED, "reason": str(undefined)})
                continue
            self.finalists.append({"score": e.score, "L": e.L, "verdict": result.verdict, "reason": result.reason})
            if result.verdict == engine.VIOLATED:
                self.counterexample = shrink.Shrunk((case, result))
                shrink.simplify(self.counterexample, claim_id, bound, max_prec=max_prec, limits=limits,
                                on_move=self._shrinking)
                return

    def _shrinking(self, move: str) -> None:
        """The status of a shrink move about to be certified: the counterexample as it stands, and the move."""
        shrunk = self.counterexample
        self.on_certify(f"shrinking: {shrunk.case.n} tokens, {shrunk.result.precision} bits; {move}")

    def polish(self, end: float) -> None:
        seeds = self.distinct(_by_score(self.candidates), POLISH_POINTS)
        for done, e in enumerate(seeds):
            x0 = np.append(e.shape, math.log(e.L_param))
            self.local(lambda x: (x[:-1], self.clip_L(x[-1])), x0, self.run_until(end, len(seeds) - done))


def _by_score(evaluations: list[Evaluation]) -> list[Evaluation]:
    """Highest score first."""
    return sorted(evaluations, key=lambda e: e.score, reverse=True)


def _same(first: list, second: list) -> bool:
    return all(np.allclose(m, c, rtol=1e-6, atol=1e-9) for m, c in zip(first, second))


def phases(layout: Layout) -> tuple:
    """The phases of the search and the cumulative shares of the budget they end at."""
    return SCALED_PHASES if layout.scales else PHASES


def auto_starts(budget: Budget, dimension: int) -> int:
    """Enough starts to cover the range of L, few enough that each local run can move (about 40 per dimension)."""
    if budget.evaluations is None:
        return DEFAULT_STARTS
    explore = PHASES[0][1] * budget.evaluations  # as many starts with a scales phase, each a little shorter
    return int(min(max(explore // (EVALUATIONS_PER_DIMENSION * dimension), MIN_STARTS), DEFAULT_STARTS))


# the options as `certify attack` and certify.attack name them where a value is refused
OPTIONS = Spelling.command(("n", "d", "seed", "starts", "budget", "with_v", "l_range", "max_prec", "layers", "d_k",
                            "interruptible", "claim", "bound", "mask", "out"), interruptible="interruptible")
KEYWORDS = Spelling.keywords(OPTIONS.names)


def attack(claim: str | None = None, bound: str | None = None, *, n: int = 3, d: int = 2, seed: int = 0,
           starts: int | None = None, budget: str | int = DEFAULT_BUDGET, with_v: bool = False,
           l_range: tuple[float, float] = DEFAULT_L_RANGE, progress: Callable[[int], None] | None = None,
           max_prec: int = CHECK_MAX_PREC, layers: int = 1, mask: str | None = None,
           interruptible: bool = False, out=None, on_resume: Callable[[int], None] | None = None,
           limits: Limits = DEFAULT_LIMITS, d_k: int | None = None,
           on_certify: Callable[[str], None] | None = None) -> AttackReport:
    """Search for the configuration that violates the claim (default collapse.global) or bound the most,
    over X_0 and the parameters of `layers` layers together (with a fixed `mask`, a named mask; with
    `d_k`, 1 <= d_k < d, every head is a thin one, W_Q and W_K of d x d_k, searched entry by entry).

    A violation is shrunk and certified before it is reported (report.counterexample); without
    one, nothing was found and nothing is guaranteed.  When `interruptible`, a KeyboardInterrupt
    after the set-up ends the attack at that moment (report.interrupted): the best points so far,
    and a counterexample only when one was already certified (shrunk as far as it got); otherwise
    it propagates.

    `out`: a folder (certify.search.attack_folder) that keeps the journal of the search and, at the
    end, the results (report.files); the same attack run again on it resumes the search, replaying
    the journal (report.replayed, announced to on_resume(evaluations journaled) before the search),
    so an evaluation budget gives exactly the search of one uninterrupted run.  A folder of another
    attack, or not of an attack, is BadInput before any work.  `limits` (certify.core.limits): the caps
    the candidates are certified under.  A value refused is named as its keyword (budget=).
    `progress(k)` is told of every k evaluations, then `on_certify(status)` of every certified check after the
    search (each finalist, each shrink move), which can take longer than the search itself.  A refusal that says
    how to raise a limit names limits=Limits(work=N); the finalists' reasons, which the folder keeps, are the
    engine's.
    """
    with KEYWORDS.respelling(OPTIONS):
        return attacked(KEYWORDS, claim, bound, n=n, d=d, seed=seed, starts=starts, budget=budget, with_v=with_v,
                        l_range=l_range, progress=progress, max_prec=max_prec, layers=layers, mask=mask,
                        interruptible=interruptible, out=out, on_resume=on_resume, limits=limits, d_k=d_k,
                        on_certify=on_certify)


def attacked(names: Spelling, claim: str | None, bound: str | None, *, n, d, seed, starts, budget, with_v, l_range,
             progress, max_prec, layers, mask, interruptible, out, on_resume, limits, d_k,
             on_certify) -> AttackReport:
    """attack, a value refused named as `names` spells it (OPTIONS, the command's --budget; KEYWORDS, budget=)."""
    n, d, seed, layers, max_prec = (integer(value, names.option(key)) for key, value in (
        ("n", n), ("d", d), ("seed", seed), ("layers", layers), ("max_prec", max_prec)))
    starts = None if starts is None else integer(starts, names.option("starts"))
    with_v, interruptible = flag(with_v, names.option("with_v")), flag(interruptible, names.option("interruptible"))
    progress, on_resume = callback(progress, "progress"), callback(on_resume, "on_resume")
    on_certify = callback(on_certify, "on_certify")
    limits = given_limits(limits)
    out = None if out is None else folder_path(out, names.option("out"))
    claim_obj, bound_expr = engine.resolve_target(claim, bound)
    if bound_expr is not None:
        claim_obj = engine.bound_claim(bound_expr)  # the claim engine.check decides for a bound
    for key, size in (("n", n), ("d", d)):  # each named with its value, as objective.layout_for names 1
        if size > MAX_SIZE:
            raise BadInput(f"{names.option(key)} must be at most {MAX_SIZE} (the attack looks for small, readable "
                           f"configurations), got {size}")
    l_range = L_RANGE.checked(l_range, names.option("l_range"))
    seeds.checked(seed, names.option("seed"))
    check_precision_cap(max_prec, names.option("max_prec"))  # refused before the search, not after
    spend = Budget.parse(budget, names.option("budget"))
    needs_v = bound_expr is not None and "v" in bound_expr.names
    layout = objective.layout_for(claim_obj, n, d, with_v, needs_v, layers=layers, mask=mask, d_k=d_k,
                                  option=names.option)
    # Nelder-Mead holds a simplex of size + 1 points of size entries: --n 64 --d 64 --layers 16 asked numpy for
    # 36 GiB two seconds in and ended as "out of memory"; refused before any work, under the memory limit
    simplex = 8 * (layout.size + 1) * layout.size
    if simplex > limits.memory:
        raise BadInput(f"the search has {layout.size} variables, whose simplex takes {in_bytes(simplex)}, above "
                       f"the memory limit of {in_bytes(limits.memory)} (lower "
                       f"{names.option('n')}, {names.option('d')} or {names.option('layers')})")
    # the candidates are certified under `limits`: a layout none of whose configurations they admit (--limit
    # tokens=1, work=100) was refused only after the whole search, when its first finalist was checked
    X, H, V = layout.arrays(layout.random_shape(np.random.default_rng(seed)), 1.0)
    try:
        engine.preflight(config.load(layout.case(X, H, V), limits), claim_obj, limits, max_prec=max_prec)
    except BadInput as refused:
        raise BadInput(f"no candidate of this search could be certified under the limits: {refused}") from None
    chosen = {"starts": names.option("budget")} if starts is None else {}  # for the refusal of another attack's folder
    starts = auto_starts(spend, layout.size) if starts is None else starts
    if not 1 <= starts <= MAX_STARTS:
        raise BadInput(f"{names.option('starts')} must be between 1 and {MAX_STARTS}, got {starts}")
    claim_id = claim_obj.id or None  # None for a bound
    # everything the search and its certification depend on: a folder is resumed by the same attack only
    parameters = {"claim": claim_id, "bound": bound_expr.text if bound_expr else None, "n": n, "d": d,
                  "with_v": with_v, "layers": layers, "mask": mask, "seed": seed, "starts": starts,
                  "budget": spend.to_json(), "l_range": [float(x) for x in l_range], "max_prec": max_prec}
    if layout.d_k is not None:  # only when given: the folders of full heads keep the parameters they have
        parameters["d_k"] = layout.d_k
    with attack_folder.opened(out, parameters, names, spend, chosen) if out is not None else nullcontext() as folder:
        journal = None if folder is None else folder.journal
        if journal is not None and journal.journaled["evaluations"] and on_resume is not None:
            on_resume(journal.journaled["evaluations"])
        rng = np.random.default_rng(seed)
        layout = replace(layout, scale_free=objective.scales_like_D(claim_obj, layout, rng))
        spend.started = time.monotonic()  # the time budget counts the search, not the set-up
        if journal is not None:
            journal.start()
            spend.clock = journal.clock  # a time budget counts the time journaled too
        search = _Search(claim_obj, layout, spend, rng, l_range, progress, journal, on_certify)
        phase_steps = {"explore": lambda end: search.explore(starts, end), "sweep": search.sweep,
                       "scales": search.scales, "ladder": search.ladder, "polish": search.polish}
        interrupted = False
        try:
            for name, end in phases(layout):
                phase_steps[name](end)
            search.certify_finalists(claim_id, bound, max_prec, limits)
        except KeyboardInterrupt:
            if not interruptible:
                raise
            interrupted = True
        report = AttackReport(target=claim_obj.id or f"bound: {bound_expr.text}", claim=claim_id,
                              bound=bound_expr.text if bound_expr else None, layout=layout, seed=seed, starts=starts,
                              budget=spend.describe(), l_range=tuple(l_range), evaluations=spend.spent,
                              seconds=time.monotonic() - spend.started, best=search.best,
                              best_exponent=search.best_exponent, bands=[search.bands[k] for k in sorted(search.bands)],
                              finalists=search.finalists, counterexample=search.counterexample,
                              interrupted=interrupted, replayed=0 if journal is None else journal.replayed,
                              undefined=search.undefined, undefined_reason=search.undefined_reason)
        if report.searched and report.undefined == report.evaluations and not interrupted:
            # as `certify check` refuses a bound certainly undefined where it is evaluated: here, everywhere searched
            raise BadInput(f"{report.undefined_reason}, at every one of the {counted(report.evaluations, 'point')} "
                           "the search evaluated")
        if folder is not None:
            report.files = folder.write(report)  # while the folder is still locked for this run
    return report
