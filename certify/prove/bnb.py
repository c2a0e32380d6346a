"""Certified branch and bound: prove h(x) >= 0 (or f <= g) on a box of one or two variables.

The box is split into sub-boxes; on each one the caller's function is evaluated on arb balls
that cover the sub-box (mid +/- rad in every variable), so the result encloses every value the
function takes there.  A sub-box is closed when the enclosure's lower bound is >= 0 (> 0 when
`strict`); a sub-box whose enclosure is entirely < 0, or whose midpoint value is certainly < 0,
refutes the inequality with a certified witness; any other sub-box is bisected along its widest
side, up to `max_depth` splits and `max_boxes` evaluations, after which the answer is
"not proved".

Plain subdivision never closes a sub-box that touches a point where h = 0: the enclosure always
contains values below 0 there.  The caller then passes the inequality in a reduced form, with
the vanishing factor divided out (h(x) = (x - c)^k r(x) with r bounded away from 0 near c);
`remainder_ball` below encloses r for the usual case where c is a point of the Taylor expansion.
Unbounded domains (x -> infinity) are the caller's business: certify a compact box here and
give a separate argument (e.g. a monotone bound past a cut-off, certified at the cut-off).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from flint import arb, fmpq

from certify.core.precision import working
from certify.errors import BadInput

Interval = tuple[Fraction, Fraction]


@dataclass
class BnBResult:
    """The outcome of a branch and bound on a box: proved (h >= 0, or > 0 when strict, on the whole box),
    refuted (a certified witness point with h < 0), or neither; with the number of evaluations, the worst
    sub-box and its lower bound (float, display only). Truthy iff proved."""
    proved: bool  # h >= 0 (or > 0) holds on the whole box
    refuted: bool  # a certified witness point with h < 0 was found
    boxes: int  # function evaluations on sub-boxes
    worst_box: tuple[Interval, ...] | None  # the closed sub-box with the smallest lower bound,
    #                                         or the first sub-box left undecided / refuting
    worst_lower: float | None  # lower bound of h on worst_box (a float, for display only)
    witness: tuple[Fraction, ...] | None = None  # a point where h < 0 is certified
    reason: str = ""

    def __bool__(self) -> bool:
        return self.proved


def _to_fraction(value) -> Fraction:
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, float, str)):
        return Fraction(value)
    raise BadInput(f"box endpoints must be int, float, str or Fraction, not {type(value).__name__}")


def _ball(lo: Fraction, hi: Fraction) -> arb:
    """An arb ball containing the whole interval [lo, hi] (the union of the two endpoint balls)."""
    return arb(fmpq(lo.numerator, lo.denominator)).union(arb(fmpq(hi.numerator, hi.denominator)))


def _point(x: Fraction) -> arb:
    return arb(fmpq(x.numerator, x.denominator))


def certainly_nonnegative(value: arb, strict: bool = False) -> bool:
    """value >= 0 (> 0 when strict) for certain; never for a NaN or infinite enclosure (on a NaN
    ball arb's comparisons are False, but a test written as `not value < 0` would pass)."""
    if not isinstance(value, arb) or not value.is_finite():
        return False
    return bool(value > 0) if strict else bool(value >= 0)


def _is_negative(value: arb, strict: bool) -> bool:
    """Certainly violates: < 0 for h >= 0; <= 0 for h > 0 (only decidable as < 0 for balls)."""
    return value.is_finite() and bool(value < 0)


@dataclass
class Exploration:
    """What `explore` did: the closed boxes with their labels, the boxes left open, a refutation."""

    leaves: list[tuple[tuple[Interval, ...], object]]
    left: list[tuple[tuple[Interval, ...], int]]  # (box, depth) still open when the search stopped
    refuted: tuple[tuple[Interval, ...] | None, object] | None  # (box, what decide said) that ended the search,
    #                                                             or (None, what `between` found)
    boxes: int  # calls of decide
    # "done" | "refuted" | "boxes" | "time" | "limits" | "interrupted" ("done" with boxes left: they hit the depth limit)
    stop: str


def explore(root: tuple[Interval, ...], decide, split, *, max_depth: int, max_boxes: int | None = None,
            deadline: float | None = None, progress=None, interruptible: bool = False,
            start: list[tuple[tuple[Interval, ...], int]] | None = None, between=None, admit=None) -> Exploration:
    """Breadth-first branch and bound: every box is closed, refuted, or split by `split`.

    `decide(box, depth)` returns ("closed", label), ("refuted", info) or ("split", None);
    `split(box, depth)` returns the two halves.  A box that would be split past `max_depth`
    stays open; the search stops at a refutation, after `max_boxes` calls, or at `deadline`
    (time.monotonic()).  `progress(exploration, queue_length)` is called after every box.
    When `interruptible`, a KeyboardInterrupt stops the search as the deadline would, at that
    moment (stop "interrupted"): the box being decided then is left open; otherwise it propagates.
    `start` (box, depth) pairs replace the root: the open boxes of an earlier search, to continue it.
    `between()`, called after every box, may end the search with a refutation found elsewhere than in
    a box (a search between the boxes): whatever it returns other than None is the refutation's info,
    with no box.  `admit()`, asked before each box, may stop the search as the deadline would (stop "limits"):
    a False says the box may not be decided.
    """
    queue = deque([(root, 0)] if start is None else start)
    found = Exploration([], [], None, 0, "done")
    entry, children = None, None  # the (box, depth) being decided, and its halves once queued
    try:
        while queue:
            if (max_boxes is not None and found.boxes >= max_boxes) or (deadline is not None and time.monotonic() > deadline):
                found.stop = "boxes" if max_boxes is not None and found.boxes >= max_boxes else "time"
                break
            if admit is not None and not admit():
                found.stop = "limits"
                break
            entry, children = queue[0], None  # peeked: an interruption before the pop finds it still queued
            queue.popleft()
            box, depth = entry
            found.boxes += 1
            outcome, info = decide(box, depth)
            if outcome == "closed":
                found.leaves.append((box, info))
            elif outcome == "refuted":
                found.refuted, found.stop = (box, info), "refuted"
                found.left.append(entry)
                break
            elif depth >= max_depth:
                found.left.append(entry)
            else:
                children = [(half, depth + 1) for half in split(box, depth)]
                queue.extend(children)
            entry = None
            if progress is not None:
                progress(found, len(queue))
            if between is not None and (info := between()) is not None:
                found.refuted, found.stop = (None, info), "refuted"
                break
    except KeyboardInterrupt:
        if not interruptible:
            raise
        found.stop = "interrupted"
        if entry is not None and not _accounted(entry, children, found, queue):
            found.left.append(entry)
    found.left.extend(queue)
    return found


def _accounted(entry, children, found: Exploration, queue: deque) -> bool:
    """Whether the (box, depth) an interruption came in is already in one place: still queued, closed,
    left open, or split into halves that are queued (a Ctrl-C can land between any two statements)."""
    return bool((queue and queue[0] is entry) or (found.leaves and found.leaves[-1][0] is entry[0])
                or (found.left and found.left[-1] is entry) or (children and queue and queue[-1] is children[-1]))


def prove_nonnegative(h: Callable[..., arb], box: Sequence[tuple], *, strict: bool = False,
                      max_depth: int = 40, max_boxes: int = 100_000,
                      prec: int = 53) -> BnBResult:
    """Prove h(x) >= 0 (> 0 when strict) for every x in the box, with h evaluated on arb balls.

    `h` takes one arb per variable and must return an arb enclosing h over the balls given (any
    composition of arb operations does).  `box` is a sequence of (lo, hi) pairs, one or two.
    """
    if not 1 <= len(box) <= 2:
        raise BadInput("branch and bound takes a box of one or two variables")
    root = tuple((_to_fraction(lo), _to_fraction(hi)) for lo, hi in box)
    for lo, hi in root:
        if not lo <= hi:
            raise BadInput(f"empty interval [{lo}, {hi}] in the box")

    def decide(current, depth):
        value = h(*[_ball(lo, hi) for lo, hi in current])
        if certainly_nonnegative(value, strict):
            return "closed", float(value.lower().mid())
        midpoint = tuple((lo + hi) / 2 for lo, hi in current)
        if _is_negative(value, strict) or _is_negative(h(*[_point(m) for m in midpoint]), strict):
            return "refuted", (midpoint, _lower(value))
        return "split", None

    with working(prec):
        found = explore(root, decide, lambda current, depth: bisect(current), max_depth=max_depth,
                        max_boxes=max_boxes)
    if found.refuted is not None:
        current, (midpoint, lower) = found.refuted
        return BnBResult(False, True, found.boxes, current, lower, midpoint,
                         "h < 0 is certified at the witness point")
    if found.left:
        current, _ = found.left[0]
        with working(prec):
            lower = _lower(h(*[_ball(lo, hi) for lo, hi in current]))
        limit = "box" if found.stop == "boxes" else "depth"
        return BnBResult(False, False, found.boxes, current, lower, None,
                         f"{limit} limit reached on an undecided sub-box")
    worst_box, worst_lower = min(found.leaves, key=lambda leaf: leaf[1]) if found.leaves else (None, None)
    return BnBResult(True, False, found.boxes, worst_box, worst_lower, None,
                     "every sub-box has a certified lower bound " + (">" if strict else ">=") + " 0")


def prove_le(f: Callable[..., arb], g: Callable[..., arb], box: Sequence[tuple],
             **options) -> BnBResult:
    """Prove f(x) <= g(x) on the box (f < g when strict=True): h = g - f >= 0."""
    return prove_nonnegative(lambda *x: g(*x) - f(*x), box, **options)


def _lower(value: arb) -> float | None:
    return float(value.lower().mid()) if value.is_finite() else None


def bisect(current: tuple[Interval, ...], axis: int | None = None) -> tuple[tuple[Interval, ...], tuple[Interval, ...]]:
    """The two halves of a box along `axis` (default: its widest side, the first of equals)."""
    if axis is None:
        widths = [hi - lo for lo, hi in current]
        axis = widths.index(max(widths))
    lo, hi = current[axis]
    mid = (lo + hi) / 2
    left, right = list(current), list(current)
    left[axis], right[axis] = (lo, mid), (mid, hi)
    return tuple(left), tuple(right)


def remainder_ball(derivative: Callable[[arb], arb], order: int, center: arb, x: arb) -> arb:
    """Enclose r(x) = (h(x) - T_{k-1}(x)) / (x - c)^k for x in the ball `x` (k = `order`).

    T_{k-1} is the Taylor polynomial of h at c of degree k-1 and `derivative` evaluates h^(k).
    Taylor's theorem with integral remainder gives
        r(x) = 1/(k-1)! * integral_0^1 (1-s)^(k-1) h^(k)(c + s (x - c)) ds,
    a weighted mean with total weight 1/k!, so r(x) lies in h^(k)(segment [c, x]) / k!.  The ball
    covering every segment from c to a point of `x` is the union of the two balls.  That ball
    always reaches back to c, so the enclosure does not shrink with the box: use the reduced form
    on a short box around c and the function itself away from c.
    """
    segment = x.union(center)
    return derivative(segment) / arb(_factorial(order))


def _factorial(k: int) -> int:
    out = 1
    for i in range(2, k + 1):
        out *= i
    return out
