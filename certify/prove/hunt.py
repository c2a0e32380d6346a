"""Where to look for a violation of a region proof's bound: a float screen and a local search.

Hints only, never a verdict: a point found here is tried in ball arithmetic and reported only once
a configuration of the region near it is certified violated (certify.prove.region).

The screen is phi = log(1 - F) - log(1 - g(L)) at a point (w, L, tau...) of the reduced form,
negative where the bound fails.  Logarithms keep it accurate where both gaps are far below 1
(1 - F ~ exp(-L/2)): the bounds just stronger than the true one fail only there, on a thin set
(three tokens, 1 - exp(-0.45 L), ||x_i|| <= 3, ||A||_2 <= 2: L > 14 and t below 1.5e-4 at L = 16,
below 1e-5 from L = 24 on) that no midpoint of a box reaches.  Such a set lies along a tight set of
the reduction (positions in two clusters, 0 and 1), so those points are screened first, at the first
box; later, bounded local searches climb from them and from the best screened points onto the set (t
to its bound 0), moving w only inside the part of the box a configuration of the region realises
(|w| <= r sqrt(norm L) - L/2, reductions.realise).
"""

from __future__ import annotations

import heapq
import math
import time
from fractions import Fraction

from certify.core.precision import escalate
from certify.prove.profiles import Profile
from certify.prove.reductions import Reduction, Region

# A local search's end point is tried only when phi is below -TOLERANCE (1 + |w| + L): float logarithms
# of sums of exp(theta tau) lose about 1e-16 (1 + |theta|), and phi = 0 up to rounding at L = 0.
TOLERANCE = 1e-9
# (start, cap, factor) of the precision of log(1 - g): beyond 848 bits the point is left to the prover.
GAP_PRECISIONS = (53, 848, 4)
# log(1 - g) is taken only once its error, about rad / |1 - g|, is below 2^-34, well inside TOLERANCE: at
# 2^-10 the screen was off by 1e-3 where 1 - g cancels (1 - g ~ 2^-41 at 53 bits) and spared points the
# balls find violated.
GAP_BITS = 34
# Keep w this far inside the realisable range: realise rounds D and the centre to 32 bits.
INSIDE = 1 - 2.0 ** -20


def _logsumexp(values: list[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def log_one_minus_ratio(w: float, L: float, taus: tuple[float, ...]) -> float:
    """log(1 - F) at a point: 1 - F = (1 - m(w + L/2)) + m(w - L/2), each a ratio of sums of
    exp(theta tau_j) taken in logarithms (no cancellation, no overflow)."""
    positions = (0.0, *taus, 1.0)
    plus, minus = w + L / 2, w - L / 2
    upper = [plus * t + math.log(1 - t) for t in positions if t < 1]
    lower = [minus * t + math.log(t) for t in positions if t > 0]
    tail_plus = _logsumexp(upper) - _logsumexp([plus * t for t in positions])
    tail_minus = _logsumexp(lower) - _logsumexp([minus * t for t in positions])
    top = max(tail_plus, tail_minus)
    return top + math.log1p(math.exp(min(tail_plus, tail_minus) - top))


def log_gap(profile: Profile, L: float) -> float | None:
    """log(1 - g(L)) at a point to within 2^-GAP_BITS (the profile's own formula in balls, with more bits
    where 1 - g cancels: 1 - (1 - exp(-L)) at L = 100), None where 1 - g <= 0 (g >= 1 > F: no
    violation there) or is not known that well at GAP_PRECISIONS' cap (the point is then left to the balls)."""
    q = Fraction(L)

    def attempt(precision: int) -> float | bool | None:  # None: more bits; False: no value
        gap = profile.gap_upper((q, q))
        if not gap.is_finite() or gap < 0 or gap == 0:
            return False
        if not gap > 0 or gap.rad() * 2 ** GAP_BITS > abs(gap).lower():
            return None
        return float(gap.log().mid())

    value, _ = escalate(attempt, lambda found: found is not None, *GAP_PRECISIONS)
    return value if isinstance(value, float) and math.isfinite(value) else None


def phi(point: tuple[float, ...], profile: Profile, gaps: dict | None = None) -> tuple[float, float] | None:
    """(phi, rank) at a point (w, L, tau...): phi = log(1 - F) - log(1 - g(L)) is negative where the
    bound fails; rank = phi / -log(1 - g(L)) (phi itself where 1 - g >= 1) orders points by how close
    they come to failing relative to the gap, so that L -> 0, where both gaps tend to 1 and phi to 0,
    does not look like the best place to search.  None where the bound cannot fail (1 - g <= 0) or
    the float evaluation broke down.  `gaps` caches log(1 - g) by L (neighbouring boxes share their L)."""
    w, L, taus = point[0], point[1], tuple(point[2:])
    if not all(0.0 <= t <= 1.0 for t in taus) or not L >= 0:
        return None
    if gaps is None:
        gap = log_gap(profile, L)
    elif L in gaps:
        gap = gaps[L]
    else:
        gap = gaps[L] = log_gap(profile, L)
    if gap is None:
        return None
    try:
        value = log_one_minus_ratio(w, L, taus) - gap
    except (ValueError, OverflowError):
        return None
    if not math.isfinite(value):
        return None
    return value, (value / -gap if gap < 0 else value)


def noise(point: tuple[float, ...]) -> float:
    """How far from 0 phi must be for float to tell its sign at the point (the scale of its exponents)."""
    return TOLERANCE * (1 + abs(point[0]) + point[1])


def descend(f, x: list[float], step: float = 1 / 16, smallest: float = 2.0 ** -30, budget: int = 2000):
    """A compass search for a local minimum of f on [0, 1]^k from x: along each axis in turn, take a
    step in the direction that lowers f, and halve the step after a pass where none does; stop below
    `smallest` or after `budget` evaluations.  (No gradient: f is a float screen, and a few thousand evaluations are enough for the
    few variables of a reduction.)"""
    fx, evaluations = f(x), 1
    while step >= smallest and evaluations < budget:
        moved = False
        for k in range(len(x)):
            for sign in (1.0, -1.0):
                y = list(x)
                y[k] = min(1.0, max(0.0, x[k] + sign * step))
                if y[k] == x[k]:
                    continue
                fy = f(y)
                evaluations += 1
                if fy < fx:
                    x, fx, moved = y, fy, True
                    break
        if not moved:
            step /= 2
    return x, fx


class Hunt:
    """The best screened points of the search so far, and local searches from them now and then.

    `screen` keeps the KEEP points of lowest rank; `step`, between two boxes, screens the seeds (the
    tight sets) once, then, when `due`, `search` runs a bounded local minimisation of the rank from two
    seeds and the STARTS best points not started from before and tries the points where phi ends below
    0 with `confirm` (the caller's certification), best first.  The searches take
    at most SHARE of the time since the first screen, and none runs before FIRST seconds: a proof
    that closes quickly never searches.
    """

    KEEP = 64
    STARTS = 4
    SEED_LS = (1.0, 0.5, 0.75, 0.25, 0.875, 0.625, 0.375, 0.125)
    FIRST = 2.0
    SHARE = 0.04

    def __init__(self, region: Region, reduction: Reduction, profile: Profile):
        self.region, self.reduction, self.profile = region, reduction, profile
        self.heap: list[tuple[float, int, tuple[float, ...]]] = []  # the KEEP lowest ranks, as a max-heap (by -rank)
        self.count = 0
        self.started: set[tuple[float, ...]] = set()
        self.begun: float | None = None
        self.spent = 0.0
        self.gaps: dict[float, float | None] = {}  # log(1 - g) at the screened points' L
        self.kept: set[tuple[float, ...]] = set()  # the points in the heap
        self.seeds: list[tuple[float, ...]] | None = None  # built at the first search
        # norm r^2 exactly, then as a float: at most 2^38 (reductions.MAX_SPAN), where radius 1e400 or
        # norm 1e-800 alone would overflow or vanish
        self.scale = float(region.norm * region.radius ** 2)

    def screen(self, point: tuple[Fraction, ...]) -> bool:
        """Whether the point is worth trying in ball arithmetic: phi is not clearly positive there, or
        could not be computed (the screen only ever spares work).  Keeps the point if a configuration
        of the region realises it and its rank is among the KEEP lowest seen (a point outside, however
        close to failing, would only start searches on the edge of the realisable range)."""
        if self.begun is None:
            self.begun = time.monotonic()
        floats = tuple(float(x) for x in point)
        values = phi(floats, self.profile, self.gaps)
        if values is None:
            return True
        if floats not in self.started and floats[0] <= self._w_top(floats[1]):
            self._keep(floats, values[1])  # only points the region realises: the searches start there
        return values[0] < noise(floats)

    def _keep(self, floats: tuple[float, ...], rank: float) -> None:
        if floats in self.kept:  # neighbouring boxes share faces, and so candidates
            return
        self.count += 1
        entry = (-rank, self.count, floats)
        if len(self.heap) < self.KEEP:
            heapq.heappush(self.heap, entry)
        elif entry[0] > self.heap[0][0]:
            self.kept.discard(heapq.heapreplace(self.heap, entry)[2])
        else:
            return
        self.kept.add(floats)

    def _seeds(self) -> list[tuple[float, ...]]:
        """Points of the tight sets of the reduction, where a bound just stronger than the true one fails
        first: the positions in two clusters, 0 (k of them) and 1 (n - k), whose tilted mean is
        sigma(theta - ln(k / (n - k))), at w = ln(k / (n - k)) (w >= 0: k >= n - k; the reflection
        t -> 1 - t gives the others) or as near it as the region reaches, at SEED_LS fractions of the
        largest L.  The searches start from them first, two at a time."""
        n = len(self.reduction.root)  # w, L and the n - 2 inner positions
        low, high = (float(end) for end in self.reduction.root[1])
        seeds = []
        for fraction in self.SEED_LS:
            L = low + fraction * (high - low)
            for ones in range(1, n // 2 + 1):
                zeros = n - ones
                w = min(math.log(zeros / ones), self._w_top(L))
                seeds.append((w, L, *([0.0] * (zeros - 1) + [1.0] * (ones - 1))))
        return seeds

    def due(self) -> bool:
        """Whether a search may run now: points to start from, and time to spare."""
        if not self.heap or self.begun is None:
            return False
        elapsed = time.monotonic() - self.begun
        return elapsed >= self.FIRST and self.spent <= self.SHARE * elapsed

    def step(self, confirm):
        """Between two boxes: at the first call, the seeds themselves (screened, then `confirm`ed where phi
        is not clearly positive: a bound may fail right at a tight set, and that costs a few float
        evaluations); later, when `due`, a search.  The first `confirm(point)` that is not None, else None."""
        if self.seeds is None:
            self.seeds = self._seeds()
            for seed in self.seeds:
                point = tuple(Fraction(x) for x in seed)
                found = confirm(point) if self.screen(point) else None
                if found is not None:
                    return found
            return None
        return self.search(confirm) if self.due() else None

    def search(self, confirm):
        """Local searches from the best points kept; the first `confirm(point)` that is not None
        (tried at every end point where phi < 0, as exact Fractions), else None."""
        began = time.monotonic()
        try:
            for end in self._ends():
                found = confirm(tuple(Fraction(x) for x in end))
                if found is not None:
                    return found
            return None
        finally:
            self.spent += time.monotonic() - began

    def _w_top(self, L: float) -> float:
        """The largest w a configuration of the region realises at this L (0 when none)."""
        top = min(float(self.reduction.root[0][1]), math.sqrt(self.scale * max(L, 0.0)) - L / 2)
        return max(top, 0.0) * INSIDE

    def _ends(self) -> list[tuple[float, ...]]:
        """The end points of the local searches from the STARTS best points where phi < 0, best first.
        The search runs on [0, 1]^k: w as a fraction of the realisable range at L, L scaled to the root."""
        if self.seeds is None:
            self.seeds = self._seeds()
        starts = [entry[2] for entry in heapq.nlargest(self.STARTS, self.heap)]
        self.heap = [entry for entry in self.heap if entry[2] not in starts]
        heapq.heapify(self.heap)
        self.kept.difference_update(starts)
        starts = self.seeds[:2] + starts
        del self.seeds[:2]
        low, high = (float(end) for end in self.reduction.root[1])

        def point(x):
            L = low + x[1] * (high - low)
            return (x[0] * self._w_top(L), L, *x[2:])

        def objective(x):
            values = phi(point(x), self.profile)
            return math.inf if values is None else values[1]

        found = []
        for start in starts:
            self.started.add(start)
            top = self._w_top(start[1])
            x0 = [min(start[0] / top, 1.0) if top > 0 else 0.0, (start[1] - low) / (high - low) if high > low else 0.0,
                  *start[2:]]
            x, _ = descend(objective, x0)
            end = point(x)
            values = phi(end, self.profile)
            if values is not None and values[0] < -noise(end):
                found.append((values[1], end))
        found.sort(key=lambda item: item[0])
        return [end for _, end in found]
