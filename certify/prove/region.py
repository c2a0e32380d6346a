"""`certify prove`: a claim for every configuration of a region, by branch and bound on a reduction.

The region is reduced to a box (certify.prove.reductions); boxes are bisected at the midpoint of
one variable (chosen by a look-ahead heuristic and recorded in the bisection tree) until every
sub-box is closed by one test of the menu (certify.prove.closing), a point of a sub-box violates
the reduced claim and a configuration of the region near it is certified violated by `certify
check`, or the time runs out.  The result is a "region-proof" certificate that certify_checker
replays: it rebuilds the boxes from the tree, so the leaves tile the domain exactly, and re-runs
every leaf's test with its own code.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction

from flint import arb

from certify import claims
from certify.core import jsonfile
from certify.core.config import refuse_sizes
from certify.core.arguments import Spelling, callback, integer, real
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits
from certify.core.numbers import from_numpy, parse_number
from certify.core.precision import escalate, working
from certify.core.verdicts import NOT_CERTIFIED, labelled, short_repr
from certify.errors import BadInput
from certify.engine import certificate as certificates
from certify.engine import VIOLATED
from certify.engine import check as check_configuration
from certify.engine.certificate import FORMAT
from certify.prove import bnb, budget, closing, hunt, profiles, reductions
from certify.prove.profiles import Profile
from certify.prove.tilt import Interval, one_minus_ratio_lower

KIND = "region-proof"
PROVED, VIOLATED_VERDICT, UNDECIDED = "proved", "violated", "undecided"
EXIT = {PROVED: 0, VIOLATED_VERDICT: 1, UNDECIDED: 3}  # the exit codes of `certify prove`
# The bisection tree is a string in preorder: a digit k for a box bisected at the midpoint of
# variable k (at most 8 variables), "." for a leaf (the next one of "leaves"), "?" for a box left
# open (the next one of "left").
# (start, cap, factor) of the precision ladder 53, 212, 848, 3392 bits: a user's bound may need more
# bits for 1 - g(L) at large L
PRECISIONS = (53, 3392, 4)
MAX_DEPTH = 90
# L may not stay IMBALANCE times wider (relative to the domain) than the narrowest variable the look-ahead may
# split: near the tight sets the look-ahead alone keeps splitting t and starves L.  On the line (three or more
# variables) L keeps pace with that variable (1), now that a position whose sign of dF/dt is proved is neither
# split nor counted (_best_axis): collapse.tanh on four tokens at radius = norm = 2 took 65,000 boxes with 4,
# 95,000 and no proof with 8, 13,000 with 1 (with 1/2, radius = norm = 1 closed no box: L split for ever); five
# tokens at radius = norm = 1 12,700 boxes with 8, 4,000 with 1; three tokens at radius = norm = 2 1,500 and
# 1,200.  Two tokens take 8.
IMBALANCE = {2: 1 << 3}
DEFAULT_IMBALANCE = 1
L_AXIS = 1
# The look-ahead weighs the monotone-t tests on three tokens only (boxes of three variables): with k inner
# positions each half costs k sign tests and a split 2 (k + 2) halves; without them collapse.tanh on four tokens
# (radius 1/2, norm 1) proves in 203 boxes and on five in 515, where with them five tokens stayed open after
# 40 s and proofs closed by the direct test alone took three times as long.  Three tokens need them (without:
# 4,943 boxes for radius 1 instead of 1,097).
SIGNS_AHEAD = 3
# The look-ahead does not weigh chord and rise (they still close boxes): weighed, their slack steered the
# splits of five tokens (radius 1/2, norm 1) from 507 boxes to more than 6,000 without a proof, and a bound
# (1 - exp(-a D^2/2)) D on four tokens at radius = norm = 1 from 389 boxes to no proof in 60 s.
UNWEIGHED = ("chord", "rise", "ordered")
# Cheapest and most often closing first; the checker accepts any method of the reduction's menu.
ORDER = ("ordered", "monotone-w/identity", "monotone-w/direct", "monotone-w/divided", "direct", "divided", "chord", "rise",
         "monotone-t/pair", "monotone-t/direct", "monotone-t/divided", "monotone-t/chord", "monotone-t/rise")


@dataclass
class ProofResult:
    """A region proof (certify.prove): proved, violated (with a counterexample) or undecided, the
    bisection tree and its leaves, and the region-proof certificate the checker confirmed (confirmed)."""

    verdict: str
    region: reductions.Region
    reduction: reductions.Reduction
    profile: Profile
    leaves: list = field(default_factory=list)  # (box, method, precision), in preorder
    left: list = field(default_factory=list)  # boxes still open, in preorder
    tree: str = ""  # the bisection tree, in preorder
    boxes: int = 0
    seconds: float = 0.0
    counterexample: dict | None = None  # {"config": ..., "certificate": ...}
    certificate: dict | None = None
    confirmed: bool = False
    message: str = ""
    interrupted: bool = False  # a Ctrl-C stopped the search (as the time limit would have, at that moment)
    stopped: str = ""  # which of the checker's limits stopped the search, and how to raise it (certify.prove.budget)

    @property
    def volume_proved(self) -> Fraction:
        """The fraction of the reduced domain's volume proved (proved_fraction)."""
        root = volume(self.reduction.root)
        direct = sum((volume(box) for box, method, _ in self.leaves if method != "ordered"), Fraction(0))
        return proved_fraction(self.reduction.root, direct / root,
                               sum((volume(box) for box in self.left), Fraction(0)) / root,
                               any(method == "ordered" for _, method, _ in self.leaves))

    @property
    def exit_code(self) -> int:
        """The exit code of `certify prove`: 0 proved, 1 violated, 3 undecided or not confirmed by the checker."""
        return EXIT[self.verdict] if self.confirmed else EXIT[UNDECIDED]

    def __repr__(self) -> str:
        """One short line: the verdict (marked not certified unless the checker confirmed it, as `certify prove`
        prints it), the region, the leaves and whether the checker confirmed."""
        checker = "confirmed by the checker" if self.confirmed else NOT_CERTIFIED
        checker += ", interrupted" if self.interrupted else ""
        region = self.region
        d = "every d" if region.d is None else f"d = {region.d}"
        target = self.profile.claim or f"bound {self.profile.bound}"
        return short_repr(f"prove {labelled(self.verdict, self.confirmed)}",
                          f"{target} for n = {region.n}, {d}, ||x_i|| <= {region.radius}, ||A||_2 <= {region.norm}, "
                          f"{self.reduction.scope}; {len(self.leaves)} leaves, "
                          f"{percent(self.volume_proved)} of the volume, {checker}")


def proved_fraction(root: tuple[Interval, ...], direct_fraction, open_fraction, ordered: bool):
    """The fraction of the reduced domain proved, given the fractions of its volume in leaves closed directly (all
    but the ordered ones) and in open boxes: without "ordered" leaves 1 - open_fraction (= direct_fraction).  With
    them (closing.ordered) the proof decides the sorted part of the domain, 1/(n - 2)! of it, and every point
    through its sorted permutation: the open boxes hold at most their volume of that part, so at least
    1 - (n - 2)! open_fraction of the points are proved, and at least the leaves closed directly."""
    multiplicity = math.factorial(len(root) - 2) if ordered else 1
    return max(direct_fraction, 1 - multiplicity * open_fraction)


def below(fraction: Fraction) -> float:
    """The largest binary64 number not above `fraction`: a part of the volume proved, read as a float, is never
    rounded up (1 - 1e-27 proved is not 1.0, all of it)."""
    nearest = float(fraction)
    return math.nextafter(nearest, -math.inf) if Fraction(nearest) > fraction else nearest


def percent(fraction: Fraction | float) -> str:
    """`fraction` (exact, or read by `below`) as a percentage to 4 decimals, rounded down: an open box left is
    never shown as 100.0000%."""
    return f"{math.floor(fraction * 10**6) / 10**4:.4f}%"


def volume(box: tuple[Interval, ...]) -> Fraction:
    """The exact volume of a box: the product of its intervals' widths."""
    out = Fraction(1)
    for lo, hi in box:
        out *= hi - lo
    return out


def _ladder(profile: Profile) -> tuple[int, int, int]:
    """The precision ladder of a profile's tests: PRECISIONS for a user's bound, its first rung alone for a claim
    (whose g is exact enough at the start: more bits change nothing)."""
    start, cap, factor = PRECISIONS
    return (start, cap if profile.claim is None else start, factor)


def _first_closing(box, reduction, profile, above: int = 0) -> tuple[str, int] | None:
    """The first test of the menu that closes the box, and the first precision of the ladder at which one does.
    above: the precision of a leaf the checker did not confirm; it is closed again at a higher rung of PRECISIONS,
    for a claim too (the checker rounds its own way: more bits narrow what it loses, if not what the prover does),
    or not at all past the ladder's cap."""
    methods = [m for m in ORDER if m in reduction.methods]
    start, cap, factor = _ladder(profile) if not above else PRECISIONS
    if above:
        if above >= cap:
            return None
        start = min(above * factor, cap)

    def attempt(precision: int) -> tuple[str, str | None]:
        """("closed", method), ("final", None) where more bits change nothing, else ("more", None)."""
        for method in methods:
            if closing.closes(method, box, profile):
                return "closed", method
        final = not above and (profile.claim is not None or _gap_resolved(box, profile))
        return ("final" if final else "more"), None

    (state, method), precision = escalate(attempt, lambda found: found[0] != "more", start, cap, factor)
    return (method, precision) if state == "closed" else None


def _best_axis(box, root, reduction, profile) -> int:
    """The variable to bisect (a heuristic only; the checker replays whatever was chosen).

    Look one bisection ahead: prefer the variable whose halves close most often, then the one
    whose worse half comes closest to closing; but L when it lags IMBALANCE times behind the
    narrowest variable.  Chord and rise are not weighed (UNWEIGHED).  Beyond SIGNS_AHEAD variables, an
    inner position whose dF/dt has a proved sign on the box is not split, nor counted as the narrowest:
    the monotone-t tests decide on its face, whatever its width, and the halves are weighed on that face.
    """
    methods = [m for m in ORDER if m in reduction.methods and m.split("/")[-1] not in UNWEIGHED]
    face, fixed = box, ()
    if len(box) > SIGNS_AHEAD:
        methods = [m for m in methods if not m.startswith("monotone-t/")]
        if any(m.startswith("monotone-t/") for m in reduction.methods) and box[1][0] >= 0:
            with working(PRECISIONS[0]):
                face, fixed, _ = closing.t_face(box)
    axes = [k for k in range(len(box)) if k not in fixed]
    relative = [(box[k][1] - box[k][0]) / (root[k][1] - root[k][0]) for k in range(len(box))]
    if relative[L_AXIS] > IMBALANCE.get(len(box), DEFAULT_IMBALANCE) * min(relative[k] for k in axes):
        return L_AXIS

    def best(half):  # the largest slack, None when no method applies; a closing method ends the search
        slacks = []
        for method in methods:
            value = closing.slack(closing.margin(method, half, profile))
            if value is not None:
                slacks.append(value)
                if value >= 0:
                    break
        return max(slacks, key=_Exact) if slacks else None

    def score(axis):
        halves = [best(half) for half in bnb.bisect(face, axis)]
        closed = sum(1 for s in halves if s is not None and s >= 0)
        worse = None if None in halves else min(halves, key=_Exact)
        return (closed, worse is not None, _Exact(worse if worse is not None else arb(0)), relative[axis], -axis)

    with working(PRECISIONS[0]):
        return max(axes, key=score)


class _Exact:
    """An exact arb point ordered by value (arb's own < is three-valued, and min() needs a key)."""

    def __init__(self, value: arb):
        self.value = value

    def __lt__(self, other: "_Exact") -> bool:
        return bool(self.value < other.value)

    def __eq__(self, other) -> bool:
        return bool(self.value == other.value)


def _gap_resolved(box, profile) -> bool:
    """1 - g(L_lo) is known to 8 bits: more precision would not sharpen the direct test."""
    L = box[1][0]
    gap = profile.gap_upper((L, L))
    return gap.is_finite() and (gap.is_exact() or gap.rad() * 256 <= abs(gap).lower())


def _candidates(box: tuple[Interval, ...]) -> list[tuple[Fraction, ...]]:
    """Points to try for a violation: the midpoint, the midpoint of the face w = w_lo (F is largest
    there for two tokens, where the claims are tight) and, on the line, of the face where the inner
    positions are at their lower ends (positions 0, 0, ..., 1 are the line's tight set at w > 0)."""
    centre = closing.midpoint(box)
    points = [centre, (box[0][0],) + centre[1:]]
    if len(box) > 2:
        points.append(centre[:2] + tuple(lo for lo, _ in box[2:]))
    return points


def _violates_at(point: tuple[Fraction, ...], profile: Profile) -> bool:
    """h < 0 at the point of the reduced form (a hint; only a certified configuration counts)."""
    box = tuple((x, x) for x in point)

    def attempt(precision: int) -> bool | None:
        h = one_minus_ratio_lower(box[0], box[1], box[2:]) - profile.gap_upper(box[1])
        if not h.is_finite() or h > 0:
            return False
        return True if h < 0 else None

    violates, _ = escalate(attempt, lambda found: found is not None, *_ladder(profile))
    return bool(violates)


def _certified_violation(region, point, profile, limits: Limits = DEFAULT_LIMITS) -> dict | None:
    # refused from its sizes as `certify check` refuses it, before realise writes its d x d matrix A out: --d 100000
    # wrote 10^10 texts on finding a violation
    refuse_sizes((region.n, region.d or 1, 1, 0), limits)
    config = reductions.realise(region, point)
    if config is None:
        return None
    # confirmed under the user's limits, as `certify check` of the counterexample would be
    result = check_configuration(config, claim=profile.claim, bound=None if profile.claim else profile.bound,
                                 limits=limits)
    if result.verdict != VIOLATED:
        return None
    return {"config": result.certificate["inputs"], "certificate": result.certificate}


@dataclass
class Start:
    """What a search starts from (preflight), priced once: a resumed proof's split axes (box -> variable), closed
    leaves (box -> (method, precision)) and open boxes with their bisections (None: the root alone); the boxes the
    search closes, as it goes (decided); the bisections of the deepest box so far; the meter of the certificate
    these make; and the set in which the checker records the leaf tests it closes (certify.engine.certificate.confirm),
    from its confirmation of the resumed proof (resumable) on: the merged proof's confirmation does not run them
    again."""

    reduction: reductions.Reduction
    axes: dict
    closed: dict
    boxes: list | None
    checked: set | None = None
    decided: dict = field(default_factory=dict)
    deepest: int = 0
    meter: budget.Meter | None = None


def prove(region: reductions.Region, profile: Profile, *, time_limit: float = 60.0,
          progress=None, interruptible: bool = False, resume: dict | None = None,
          limits: Limits = DEFAULT_LIMITS, start: Start | None = None) -> ProofResult:
    """Decide the profile's bound on the region; `progress(closed, queue, fraction)` is called after every box,
    and `progress(leaves, open, fraction, "the checker")` once the search ends, before the checker's replay.
    The checker confirms the certificate under `limits` (certify.core.limits), as `certify verify` would.

    When `interruptible`, a Ctrl-C (KeyboardInterrupt) during the search ends it as the time limit
    would at that moment (result.interrupted): the boxes closed so far make the certificate, which the
    checker confirms as for any undecided proof.  A Ctrl-C after the search, during the checker's
    replay, propagates: no result, so nothing to write.  `resume`, an undecided region proof of the same
    target and region (see resumable), is continued from its open boxes: its splits and leaves are kept,
    and the merged proof is checked in full like any other (but for the leaf tests the checker closed confirming
    `resume`: start.checked).  start: preflight's, made before (the search's state and meter, priced once; resume and
    limits as preflight was given them), else made here."""
    start = start or preflight(region, profile, limits, resume)
    reduction, axes, closed, decided, meter = start.reduction, start.axes, start.closed, start.decided, start.meter
    result = ProofResult(UNDECIDED, region, reduction, profile)
    earlier_boxes = len(axes) + len(closed)  # a resumed proof's boxes decided before: split or closed
    began = time.monotonic()
    hunter = hunt.Hunt(region, reduction, profile)

    def confirm(point):
        return _certified_violation(region, point, profile, limits) if _violates_at(point, profile) else None

    def between():  # the tight sets, then local searches from the best candidates now and then (certify.prove.hunt)
        return hunter.step(confirm)

    def decide(box, depth):
        closing_found = _first_closing(box, reduction, profile)
        if closing_found is not None:
            meter.closed(closing_found[1], closing_found[0])
            decided[box] = closing_found
            return "closed", closing_found
        for candidate in _candidates(box):
            if hunter.screen(candidate) and _violates_at(candidate, profile):
                found = _certified_violation(region, candidate, profile, limits)
                if found is not None:
                    return "refuted", found
        return "split", None

    root_volume = volume(reduction.root)
    tally = {"counted": 0, "volume": 0.0, "direct": 0.0, "ordered": False}

    def count(box, method) -> None:
        tally["volume"] += float(volume(box) / root_volume)
        tally["direct"] += 0.0 if method == "ordered" else float(volume(box) / root_volume)
        tally["ordered"] |= method == "ordered"

    for box, (method, _) in closed.items():
        count(box, method)

    def report(found, queue_length):  # the volume closed so far, shown as proved_fraction counts it
        for box, (method, _) in found.leaves[tally["counted"]:]:
            count(box, method)
        tally["counted"] = len(found.leaves)
        progress(len(found.leaves), queue_length, proved_fraction(reduction.root, min(tally["direct"], 1.0),
                                                                  1 - min(tally["volume"], 1.0), tally["ordered"]))

    def split(box, depth):
        start.deepest = max(start.deepest, depth + 1)
        axes[box] = _best_axis(box, reduction.root, reduction, profile)
        meter.split()
        return bnb.bisect(box, axes[box])

    found = bnb.explore(reduction.root, decide, split, max_depth=MAX_DEPTH, deadline=began + time_limit,
                        progress=report if progress is not None else None, interruptible=interruptible,
                        start=start.boxes, between=between, admit=meter.admits)
    result.interrupted = found.stop == "interrupted"
    if found.stop == "limits":
        result.stopped = f"one more box would take its certificate past {meter.reason(quote=False)}"
    closed.update(found.leaves)
    result.tree, result.leaves, result.left = _preorder(reduction.root, axes, closed, {box for box, _ in found.left})
    result.boxes = earlier_boxes + found.boxes  # of the whole proof, as its leaves are
    if found.refuted is not None:
        result.verdict, result.counterexample = VIOLATED_VERDICT, found.refuted[1]
    elif not result.left:
        result.verdict = PROVED
    result.seconds = time.monotonic() - began
    if progress is not None:  # the checker's replay of every leaf comes next: seconds for thousands of them
        progress(len(result.leaves), len(result.left), float(result.volume_proved), "the checker")
    _confirm(result, axes, closed, limits, start.checked)
    return result


def _confirm(result: ProofResult, axes: dict, closed: dict, limits: Limits, checked: set | None = None) -> None:
    """Have the checker confirm the result's certificate (result.certificate, confirmed, message).  The checker
    replays each leaf's test in its own code and rounds its own way: a leaf the prover closed by a unit of
    rounding may not close there (a bound at L ~ 2^-52, at 53 bits).  As `certify check` escalates a precision
    the checker cannot follow, the leaves it does not confirm (_rejected) are closed again a rung higher
    (_first_closing) and the whole proof confirmed again, until it is, or a rejected leaf is at the ladder's cap
    (or closes no more): the result then stays unconfirmed, with the checker's message.  checked: Start.checked."""
    while True:
        result.certificate = certificate(result)
        confirmation = certificates.confirm(result.certificate, limits, closed=checked)
        result.confirmed, result.message = confirmation.ok, certificates.said(confirmation, result.certificate, limits)
        if confirmation.ok or confirmation.refused or result.verdict == VIOLATED_VERDICT:
            return
        rejected = _rejected(result, axes, result.leaves, limits, checked)
        again = [_first_closing(box, result.reduction, result.profile, above=precision)
                 for box, _, precision in rejected]
        if not rejected or None in again:
            return
        closed.update((box, closing_found) for (box, _, _), closing_found in zip(rejected, again))
        result.tree, result.leaves, result.left = _preorder(result.reduction.root, axes, closed, set(result.left))


def _rejected(result: ProofResult, axes: dict, leaves: list, limits: Limits, checked: set | None = None) -> list:
    """The leaves (box, method, precision) among `leaves` that the checker does not confirm: those of a certificate
    that closes them alone (the paths from the root to them split, every other box open) that it rejects, halved
    until a single leaf is (a few rejected leaves cost a few replays of the proof, not one a leaf)."""
    if not leaves:
        return []
    closed = {box: (method, precision) for box, method, precision in leaves}
    tree, kept, left = _preorder(result.reduction.root, _paths(result.reduction.root, axes, closed), closed, set())
    part = replace(result, verdict=UNDECIDED if left else PROVED, tree=tree, leaves=kept, left=left)
    if certificates.confirm(certificate(part), limits, closed=checked).ok:
        return []
    if len(leaves) == 1:
        return list(leaves)
    half = len(leaves) // 2
    return _rejected(result, axes, leaves[:half], limits, checked) + _rejected(result, axes, leaves[half:], limits, checked)


def _paths(root, axes: dict, boxes) -> dict:
    """The split axes (box -> variable) of the boxes on the paths from the root to `boxes`."""
    kept = {}
    for box in boxes:
        node = root
        while node != box:
            kept[node] = axes[node]
            lower, upper = bnb.bisect(node, axes[node])
            node = lower if all(lo <= b_lo and b_hi <= hi for (lo, hi), (b_lo, b_hi) in zip(lower, box)) else upper
    return kept


def preflight(region: reductions.Region, profile: Profile, limits: Limits = DEFAULT_LIMITS,
              resume: dict | None = None, checked: set | None = None) -> Start:
    """The search's start (Start): the proof it continues (`resume`, confirmed by resumable, whose record of the leaf
    tests the checker closed is `checked`) or the root box, and the meter of its certificate under the checker's
    limits (certify.prove.budget), which measures the certificate as the search stands; BadInput, before any work,
    when not even the next box can be decided within them."""
    reduction = reductions.reduce(region)
    axes, closed, boxes = _replayed(resume, reduction) if resume is not None else ({}, {}, None)
    start = Start(reduction, axes, closed, boxes, checked, deepest=max((depth for _, depth in boxes or ()), default=0))
    blank = ProofResult(UNDECIDED, region, reduction, profile)

    def current():  # the certificate as the search stands: the resumed proof's splits and leaves, and those decided
        tree, leaves, left = _preorder(reduction.root, axes, closed | start.decided, set())
        return certificate(replace(blank, tree=tree, leaves=leaves, left=left))

    stated = {"format": FORMAT, "kind": KIND, "verdict": UNDECIDED, "claim": profile.claim,
              "bound": None if profile.claim else profile.bound, "region": region.as_json()}
    tree, closings = (resume["tree"], [(leaf["precision"], leaf["method"]) for leaf in resume["leaves"]]) if resume \
        else ("?", ())
    top = _ladder(profile)[1]  # a leaf is closed at most at the top
    start.meter = budget.Meter(stated, limits, top, tree, closings,
                               text=_text_meter(reduction, top, current, lambda: start.deepest))
    if not start.meter.admits():
        raise BadInput(f"refused before starting: deciding its {'next' if resume else 'first'} box would take "
                       f"the proof's certificate past {start.meter.reason()}")
    return start


def _text_meter(reduction: reductions.Reduction, top: int, current, depth):
    """budget.Meter's text: the checker reads the certificate as its text, which the meter's measure of the
    skeleton's tree falls short of (a byte limit was found passed only once the search had ended: PROVED, not
    certified, and nothing written).  Under the defaults too: there the checker's confirmation measures the tree only
    of a certificate whose text is certain to fit (certify.engine.certificate.confirm), and a proof whose text passed
    the byte limit, which the tree's measure (9 bytes a box at its dearest, some 90 written) let the search reach, was
    refused the same.  The bytes so far (current()'s text, with room for its volume proved, a dyadic fraction of at
    most MAX_DEPTH bits), and the most m more boxes add: each a split, which trades an open box for two, or a
    closing, which moves one to the leaves, of boxes at most depth() + m bisections deep."""
    room = 2 * len(str(2 ** MAX_DEPTH)) + 1

    def entry(key: str, value) -> int:  # the bytes of one more entry of the certificate's list `key`
        return len(jsonfile.dumps({key: [value, value]})) - len(jsonfile.dumps({key: [value]}))

    def growth(boxes: int) -> int:
        deep = _longest_box(reduction.root, min(MAX_DEPTH, depth() + boxes))
        leaf = {"box": deep, "method": max(reduction.methods, key=len), "precision": top}
        return boxes * (2 * entry("left", deep) + entry("leaves", leaf) + 2)

    return lambda: len(jsonfile.dumps(current()).encode("utf-8")) + room, growth


def _longest_box(root: tuple[Interval, ...], depth: int) -> list[list[str]]:
    """A box whose ends' texts are as long as those of any box at most `depth` bisections below the root can be: an
    end there is p/q with q dividing the root's denominators times 2^depth and p/q at most the root's upper end."""
    out = []
    for lo, hi in root:
        q = lo.denominator * hi.denominator * 2 ** depth
        text = "9" * len(str(math.ceil(hi * q))) + "/" + "9" * len(str(q))
        out.append([text, text])
    return out


def resumable(cert: dict, region: reductions.Region, profile: Profile, limits: Limits = DEFAULT_LIMITS,
              checked: set | None = None) -> dict:
    """An undecided region proof of this target and region that the checker confirms, to continue
    (prove's `resume`); BadInput otherwise, before any work.  checked: an empty set, in which the checker records the
    leaf tests it closes (Start.checked): the merged proof's confirmation does not run them again."""
    if cert.get("kind") != KIND:
        raise BadInput("--resume: not a region proof")
    if cert.get("verdict") != UNDECIDED:
        raise BadInput(f"--resume: the proof is {cert.get('verdict')}, not undecided: nothing to continue")
    stated = (cert.get("claim"), cert.get("bound"), cert.get("region"))
    if stated != (profile.claim, None if profile.claim else profile.bound, region.as_json()):
        raise BadInput("--resume: the proof is of another claim, bound or region than this command's")
    confirmation = certificates.confirm(cert, limits, closed=checked)
    if not confirmation.ok:
        raise BadInput(f"--resume: the checker does not confirm the proof: {confirmation.message}")
    return cert


def _replayed(cert: dict, reduction: reductions.Reduction) -> tuple[dict, dict, list]:
    """A confirmed partial proof's split axes (box -> variable), closed leaves (box -> (method, precision))
    and open boxes as (box, depth), rebuilt from the reduction's root by the prover's own bisection."""
    axes, closed, left = {}, {}, []
    leaves, stack = iter(cert["leaves"]), [(reduction.root, 0)]
    for symbol in cert["tree"]:
        box, depth = stack.pop()
        if symbol == ".":
            leaf = next(leaves)
            closed[box] = (leaf["method"], leaf["precision"])
        elif symbol == "?":
            left.append((box, depth))
        else:
            axes[box] = int(symbol)
            lower, upper = bnb.bisect(box, axes[box])
            stack.extend([(upper, depth + 1), (lower, depth + 1)])
    return axes, closed, left


def target(claim: str | None, bound: str | None, n: int, d: int | None) -> Profile:
    """The profile of a claim (default collapse.global) or of a bound D*g(a*D**2) on n tokens in d."""
    if claim is not None and bound is not None:
        raise BadInput("give a claim or --bound, not both")
    # an empty bound (an unset variable) is refused as a bound, not read as no bound: it proved collapse.global
    return profiles.bound_profile(bound, n, d) if bound is not None else profiles.claim_profile(claims.chosen(claim))


# prove_claim's keywords as `certify prove` names them in a text written once ("give --d"), and as certify.prove does
OPTIONS = Spelling.command((*reductions.OPTIONS.names, "bound", "limits"), limits="--limit")
KEYWORDS = Spelling.keywords(OPTIONS.names)


def prove_claim(claim: str | None = None, *, bound: str | None = None, n: int, d: int | None = None, radius, norm,
                time_limit: float = 60.0, progress=None, limits: Limits = DEFAULT_LIMITS) -> ProofResult:
    """Prove a claim (collapse.global by default, or collapse.tanh) or a bound D*g(a*D**2) for every
    configuration of n tokens with ||x_i|| <= radius and ||A||_2 <= norm (radius and norm exact: 2, "1/3"; a float
    is the binary64 value it holds, 0.3 a little below 3/10, as in a configuration: write "0.3" for 3/10);
    d = None for n = 2 covers every dimension.  The result's certificate is confirmed by the checker
    (result.confirmed) under `limits` (certify.core.limits, as `certify prove --limit`); what no reduction covers is
    refused (BadInput) before any work, a value refused named as its keyword (n=), as are the options a refusal,
    the checker's message or why the search stopped names (bound=, limits=Limits(bytes=N))."""
    progress = callback(progress, "progress")
    with KEYWORDS.respelling(OPTIONS):
        region, profile = prepare(claim, bound, n, d, radius, norm, time_limit, reductions.KEYWORDS)
        result = prove(region, profile, time_limit=time_limit, progress=progress, limits=given_limits(limits))
    return replace(result, stopped=KEYWORDS.respelled(result.stopped, OPTIONS),
                   message=KEYWORDS.respelled(result.message, OPTIONS))


def prepare(claim: str | None, bound: str | None, n: int, d: int | None, radius, norm, time_limit: float,
            names: Spelling = reductions.OPTIONS) -> tuple[reductions.Region, Profile]:
    """The region and profile of prove_claim's arguments, or BadInput before any work naming them as `names`
    spells them (reductions.OPTIONS, the command's --n; reductions.KEYWORDS, the API's n=)."""
    time_limit = real(time_limit, names.option("time_limit"))
    if not time_limit > 0:
        raise BadInput(f"{names.option('time_limit')} must be positive, got {time_limit}")
    n, d = integer(n, names.option("n")), None if d is None else integer(d, names.option("d"))
    radius, norm = (parse_number(from_numpy(value, {}, names.option(key)), names.option(key))
                    for key, value in (("radius", radius), ("norm", norm)))
    region = reductions.region(n, d, radius, norm, names)
    profile = target(claim, bound, n, d)
    reductions.reduce(region)  # refuse what no reduction covers
    return region, profile


def _preorder(root, axes: dict, closed: dict, open_boxes: set):
    """The bisection tree as a string, with the leaves and open boxes in the order it meets them."""
    symbols, leaves, left = [], [], []
    stack = [root]
    while stack:
        box = stack.pop()
        if box in closed:
            symbols.append(".")
            leaves.append((box, *closed[box]))
        elif box in open_boxes or box not in axes:
            symbols.append("?")
            left.append(box)
        else:
            symbols.append(str(axes[box]))
            lower, upper = bnb.bisect(box, axes[box])
            stack.extend((upper, lower))
    return "".join(symbols), leaves, left


def _box_json(box: tuple[Interval, ...]) -> list[list[str]]:
    return [[str(lo), str(hi)] for lo, hi in box]


def certificate(result: ProofResult) -> dict:
    """The region proof's certificate as JSON (what certify_checker replays): the target, region, reduction
    and its root box, the lemmas it rests on, and either the counterexample (violated) or the split tree,
    the closed leaves with their method and precision, the boxes left open and the volume proved."""
    reduction = result.reduction
    cert = {
        "format": FORMAT,
        "kind": KIND,
        "verdict": result.verdict,
        "claim": result.profile.claim,
        "bound": None if result.profile.claim else result.profile.bound,
        "region": result.region.as_json(),
        "reduction": {"name": reduction.name, "variables": list(reduction.variables),
                      "domain": _box_json(reduction.root)},
        "lemmas": reductions.LEMMAS[reduction.name],
    }
    if result.verdict == VIOLATED_VERDICT:
        cert["counterexample"] = result.counterexample
        return cert
    cert["tree"] = result.tree
    cert["leaves"] = [{"box": _box_json(box), "method": method, "precision": precision}
                      for box, method, precision in result.leaves]
    cert["left"] = [_box_json(box) for box in result.left]
    cert["volume_proved"] = str(result.volume_proved)
    return cert
