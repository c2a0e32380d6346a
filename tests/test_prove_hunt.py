"""The region prover's search for violations (certify.prove.hunt and the candidates of certify.prove.region):
bounds just stronger than the true one, whose failing set is narrow, end violated at a configuration the
checker confirms; the float screen agrees with the ball evaluation and never hides a violation it finds;
true bounds stay proved however often the local search runs."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import pytest
from flint import ctx

import certify_checker as checker
from certify.engine import check
from certify.prove import bnb, closing, hunt, reductions
from certify.prove import region as region_proof
from certify.prove.tilt import one_minus_ratio_lower
from certify_checker import region_proof as checker_region

NEAR = "D*(1-exp(-0.45*a*D**2))"  # the sharp exponent is 1/2 (tanh(L/4)): false once a D^2 > 14 near w = ln 2
NEARER = "D*(1-exp(-0.48*a*D**2))"  # false only once a D^2 > 35


def _setup(bound, n, radius, norm):
    region, profile = region_proof.prepare(None, bound, n, 1, radius, norm, 30)
    return region, profile, reductions.reduce(region)


# Seconds: a proof stops at its certified violation (5 to 8 s on a loaded machine, where 10 s failed), so its
# wall-clock limit only bounds a failing run; the machine's load must not decide the test.
SEARCH_LIMIT = 120


def _assert_certified_violation(result, bound):
    assert result.verdict == "violated" and result.confirmed, result.message
    config = result.counterexample["config"]
    assert check(config, bound=bound).verdict == "violated"
    assert checker_region._inside(config, result.certificate["region"]) is None
    assert checker.verify(json.loads(json.dumps(result.certificate))).ok


def _old_candidates(box):
    """The candidates before the face of low inner positions: the midpoint and the face w = w_lo."""
    centre = closing.midpoint(box)
    return [centre, (box[0][0],) + centre[1:]]


# ---- bounds that stayed undecided within 20 seconds are violated at a certified point

@pytest.mark.parametrize("bound,n,radius,norm", [
    (NEAR, 3, 3, 2),
    (NEAR, 3, 5, 1),
    (NEAR, 4, 2, 2),
    (NEARER, 3, 3, 2),
    ("D*tanh(0.245*a*D**2)", 3, 1, 1),  # tanh(L/4) is sharp at w = ln 2, outside the region's w <= 1/2
])
def test_near_sharp_bounds_are_violated_at_a_certified_point(bound, n, radius, norm):
    region, profile, _ = _setup(bound, n, radius, norm)
    _assert_certified_violation(region_proof.prove(region, profile, time_limit=SEARCH_LIMIT), bound)


@pytest.mark.parametrize("bound,n,radius,norm", [(NEAR, 3, 3, 2), (NEARER, 3, 3, 2), (NEAR, 3, 2, 4)])
def test_the_local_search_alone_finds_them(bound, n, radius, norm, monkeypatch):
    """Without the face of low inner positions among the candidates and without the seeds (either finds
    these at once), the local searches between the boxes climb onto the failing set."""
    monkeypatch.setattr(region_proof, "_candidates", _old_candidates)
    monkeypatch.setattr(hunt.Hunt, "_seeds", lambda self: [])  # nor the tight sets
    monkeypatch.setattr(hunt.Hunt, "FIRST", 0.0)
    region, profile, _ = _setup(bound, n, radius, norm)
    _assert_certified_violation(region_proof.prove(region, profile, time_limit=SEARCH_LIMIT), bound)


@pytest.mark.parametrize("bound,n,radius,norm,corner", [
    (NEAR, 4, 2, 1, (0, 16, 0, 1)),  # false only near w = 0, a D^2 = 16 = 4 norm r^2, positions 0, 0, 1, 1
    (NEARER, 4, 3, 1, (0, 36, 0, 1)),  # false only for a D^2 in [34.7, 36]
])
def test_a_bound_failing_only_at_a_corner_of_the_tight_set_is_violated_at_the_first_box(bound, n, radius, norm,
                                                                                        corner):
    region, profile, reduction = _setup(bound, n, radius, norm)
    seeds = hunt.Hunt(region, reduction, profile)._seeds()
    assert tuple(map(float, corner)) in seeds
    result = region_proof.prove(region, profile, time_limit=10)
    _assert_certified_violation(result, bound)
    assert result.boxes == 1


def test_a_search_from_random_points_ends_at_a_configuration_check_confirms():
    region, profile, reduction = _setup(NEAR, 3, 3, 2)
    hunter = hunt.Hunt(region, reduction, profile)
    rng = random.Random(0)
    for _ in range(300):
        hunter.screen(tuple(lo + Fraction(rng.random()) * (hi - lo) for lo, hi in reduction.root))

    def confirm(point):
        assert reductions.realise(region, point) is not None  # the search stays where the region reaches
        if region_proof._violates_at(point, profile):
            return region_proof._certified_violation(region, point, profile)
        return None

    found = None
    for _ in range(4):
        found = found or hunter.search(confirm)
    assert found is not None and check(found["config"], bound=NEAR).verdict == "violated"
    assert hunter.spent > 0


# ---- the float screen

@pytest.mark.parametrize("point", [
    (Fraction(1, 3), Fraction(16), (Fraction(1, 100),)),
    (Fraction(7, 10), Fraction(60), (Fraction(0),)),
    (Fraction(2), Fraction(1, 1000), (Fraction(1, 2),)),
    (Fraction(1, 2), Fraction(2000), (Fraction(0), Fraction(1, 3))),  # 1 - F ~ exp(-1000): below float64's range
    (Fraction(0), Fraction(5), ()),
])
def test_log_one_minus_ratio_agrees_with_the_ball_enclosure(point):
    w, L, inner = point
    with ctx.workprec(200):
        ball = one_minus_ratio_lower((w, w), (L, L), tuple((t, t) for t in inner))
        exact_log = float(ball.log().mid())
    assert math.isclose(hunt.log_one_minus_ratio(float(w), float(L), tuple(map(float, inner))), exact_log,
                        rel_tol=1e-12, abs_tol=1e-12)


def test_log_gap_takes_more_bits_where_one_minus_g_cancels():
    _, profile, _ = _setup(NEAR, 3, 3, 2)
    assert math.isclose(hunt.log_gap(profile, 200.0), -90.0, rel_tol=1e-9)  # 1 - (1 - exp(-90))
    assert hunt.log_gap(profile, 0.0) == 0.0
    _, above_one, _ = _setup("D*(1 + exp(-a*D**2))", 3, 3, 2)  # g > 1: 1 - g < 0, nothing can fail there
    assert hunt.log_gap(above_one, 1.0) is None


@pytest.mark.parametrize("bound,n,radius,norm", [(NEAR, 3, 3, 2), ("D*tanh(0.24*a*D**2)", 4, 1, 1)])
def test_the_screen_never_spares_a_point_the_balls_find_violated(bound, n, radius, norm):
    region, profile, reduction = _setup(bound, n, radius, norm)
    hunter = hunt.Hunt(region, reduction, profile)
    rng = random.Random(1)
    violated = spared = 0
    for _ in range(3000):
        # points near the failing set (low inner positions) as often as anywhere else
        point = tuple(lo + Fraction(rng.random() ** (8 if k > 1 else 1)) * (hi - lo)
                      for k, (lo, hi) in enumerate(reduction.root))
        worth = hunter.screen(point)
        if region_proof._violates_at(point, profile):
            violated += 1
            assert worth, point
        elif not worth:
            spared += 1
    assert violated > 0 and spared > 0  # both kinds were met: the assertion above was tested


def test_the_screen_never_spares_a_violated_point_where_one_minus_g_cancels():
    """1 - g = 1 - (2 - (1 + 2.500025 exp(-L/2))): at 53 bits the ball's midpoint of 1 + x is rounded toward
    0, so 1 - g comes out up to 2^-10 too small near 1 - g ~ 2^-41 (L ~ 50); 1 - F at positions 0, 0, 1 is
    within 1e-5 of it there, and a screen that trusted 10 bits of log(1 - g) called such points clearly safe."""
    region, profile, reduction = _setup("D*(2-(1+2.500025*exp(-a*D**2/2)))", 3, 4, 1)
    hunter = hunt.Hunt(region, reduction, profile)
    violated = 0
    for k in range(400):
        point = (Fraction(0), Fraction(48) + Fraction(k, 64), Fraction(0))
        if region_proof._violates_at(point, profile):
            violated += 1
            assert hunter.screen(point), point
    assert violated > 0


def test_descend_reaches_a_minimum_on_a_face():
    x, fx = hunt.descend(lambda x: (x[0] + 0.5) ** 2 + (x[1] - 0.3) ** 2, [0.9, 0.9])
    assert x[0] == 0.0 and abs(x[1] - 0.3) < 1e-6 and math.isclose(fx, 0.25, abs_tol=1e-9)


# ---- true bounds stay proved, and the search between boxes ends the exploration only with a refutation

@pytest.mark.parametrize("claim,bound,n,radius,norm", [
    ("collapse.global", None, 3, 2, 2),
    (None, "D*(1-exp(-0.5*a*D**2))", 3, 1, 1),
    (None, "D*(1-exp(-0.5*a*D**2))", 4, 1, 1),
])
def test_true_bounds_stay_proved_when_the_local_search_runs_after_every_box(claim, bound, n, radius, norm, monkeypatch):
    monkeypatch.setattr(hunt.Hunt, "FIRST", 0.0)
    monkeypatch.setattr(hunt.Hunt, "SHARE", math.inf)
    searches = []
    original = hunt.Hunt.search
    monkeypatch.setattr(hunt.Hunt, "search", lambda self, confirm: searches.append(1) or original(self, confirm))
    region, profile = region_proof.prepare(claim, bound, n, 1, radius, norm, 30)
    result = region_proof.prove(region, profile, time_limit=60)
    assert result.verdict == "proved" and result.confirmed and not result.left, result.message
    assert searches  # the searches ran and found nothing to refute


def test_explore_stops_at_what_between_returns_and_only_then():
    root = ((Fraction(0), Fraction(1)),)
    calls = []

    def between():
        calls.append(1)
        return "found" if len(calls) == 3 else None

    found = bnb.explore(root, lambda box, depth: ("split", None), lambda box, depth: bnb.bisect(box),
                        max_depth=10, between=between)
    assert found.stop == "refuted" and found.refuted == (None, "found") and found.boxes == 3
    quiet = bnb.explore(root, lambda box, depth: ("split", None), lambda box, depth: bnb.bisect(box),
                        max_depth=3, between=lambda: None)
    assert quiet.stop == "done" and quiet.refuted is None and len(quiet.left) == 8


# ---- regions at the ends of float64's range

@pytest.mark.parametrize("radius,norm", [("1e400", "1e-800"), ("2e-200", "1e400"), ("5e200", "1e-400")])
def test_the_search_reaches_as_far_in_a_region_beyond_float_range_as_in_its_rescaled_twin(radius, norm):
    """Only norm r^2 matters to the reduced form: radius 1e400 (no float) or norm 1e-400 (float 0) give
    the searches the same realisable range of w as the region of the same norm r^2 in ordinary numbers."""
    region, profile, reduction = _setup(NEAR, 3, radius, norm)
    scale = Fraction(norm) * Fraction(radius) ** 2
    twin_region, _, twin_reduction = _setup(NEAR, 3, 1, scale)
    hunter, twin = hunt.Hunt(region, reduction, profile), hunt.Hunt(twin_region, twin_reduction, profile)
    for fraction in (0.1, 0.5, 0.9):  # of the largest L, 4 norm r^2, where the range closes
        L = fraction * float(reduction.root[1][1])
        assert hunter._w_top(L) == twin._w_top(L) > 0
    result = region_proof.prove(region, profile, time_limit=5)
    assert result.confirmed, result.message
