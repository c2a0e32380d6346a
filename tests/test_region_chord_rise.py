"""The chord and rise closing tests of region proofs (certify.prove.closing, certify_checker.region_proof):
their margins bound h/L and h from below at mpmath points of every box they close, false bounds that
the first-order forms would wrongly accept stay unproved, and a certificate whose chord or rise leaf
is edited is rejected."""

from __future__ import annotations

import copy
import random
from fractions import Fraction

import pytest
from flint import ctx
from mpmath import mp

import certify_checker as checker
from certify.prove import closing, profiles, reductions
from certify.prove import region as region_proof
from certify_checker import region_proof as checker_region

NEW = ("chord", "rise")


def _mp_mean(theta, taus):
    weights = [mp.exp(theta * t) for t in taus]
    return sum(w * t for w, t in zip(weights, taus)) / sum(weights)


def _mp_h(g, w, L, taus):
    return g(L) - (_mp_mean(w + L / 2, taus) - _mp_mean(w - L / 2, taus))


def _value(ball) -> mp.mpf:
    return mp.mpf(ball.mid().str(30, radius=False))


def _random_box(rng):
    inner = []
    for _ in range(rng.choice([1, 2])):
        lo = Fraction(rng.randrange(0, 16), 16)
        inner.append((lo, min(Fraction(1), lo + Fraction(rng.choice([0, 1, 2]), 32))))
    w_lo = Fraction(rng.randrange(0, 32), 16)
    L_lo = Fraction(rng.choice([0, 0, rng.randrange(1, 64)]), 16)
    return ((w_lo, w_lo + Fraction(rng.randrange(1, 4), 64)), (L_lo, L_lo + Fraction(rng.randrange(1, 8), 16)),
            *inner)


CLAIMS = {"collapse.tanh": lambda L: mp.tanh(L / 4), "collapse.global": lambda L: 1 - mp.exp(-L)}


@pytest.mark.parametrize("claim", sorted(CLAIMS))
def test_chord_and_rise_margins_are_below_mpmath_values(claim):
    """chord's margin is at most h/L and rise's at most h at random points of the box (prover and checker);
    the check could fail: an enclosure that drops a term would sit above h somewhere near the tight sets."""
    mp.dps = 40
    rng = random.Random(11)
    g = CLAIMS[claim]
    profile, checker_profile = profiles.claim_profile(claim), checker_region.Profile(claim, None, 4, 1)
    seen = {"chord": 0, "rise": 0}
    for _ in range(300):
        box = _random_box(rng)
        with ctx.workprec(53):
            margins = {"chord": (closing.chord(box, profile), checker_region._margin("chord", box, checker_profile)),
                       "rise": (closing.rise(box, profile), checker_region._margin("rise", box, checker_profile))}
        for _ in range(6):
            point = [mp.mpf(float(lo)) + mp.mpf(float(hi - lo)) * rng.random() for lo, hi in box]
            w, L, taus = point[0], point[1], [mp.mpf(0), *point[2:], mp.mpf(1)]
            if L == 0:
                continue
            h = _mp_h(g, w, L, taus)
            for method, balls in margins.items():
                for ball in balls:
                    if ball is None or not ball.is_finite():
                        continue
                    seen[method] += 1
                    bound = _value(ball.lower())
                    assert bound <= (h / L if method == "chord" else h) + mp.mpf(10) ** -25, (method, box, point)
    assert min(seen.values()) > 100  # both tests were exercised


@pytest.fixture(scope="module")
def tanh_proof():
    """collapse.tanh on three tokens, radius 1, norm 3/2 (the tight curve t = 0, w = ln 2 inside): every test closes
    some of its leaves, chord and rise among them."""
    result = region_proof.prove(reductions.region(3, 1, 1, "3/2"), profiles.claim_profile("collapse.tanh"),
                                time_limit=60)
    assert result.verdict == "proved" and result.confirmed, result.message
    return result


def test_boxes_the_new_tests_close_hold_at_mpmath_points(tanh_proof):
    """Every leaf that chord or rise closed (alone or on a monotone face) has h >= 0 at random mpmath points."""
    mp.dps = 30
    rng = random.Random(3)
    closed = {method: [box for box, m, _ in tanh_proof.leaves if m.split("/")[-1] == method] for method in NEW}
    assert all(closed.values()), {method: len(boxes) for method, boxes in closed.items()}
    for box in closed["chord"] + closed["rise"]:
        for _ in range(5):
            point = [mp.mpf(float(lo)) + mp.mpf(float(hi - lo)) * rng.random() for lo, hi in box]
            taus = [mp.mpf(0), *point[2:], mp.mpf(1)]
            assert _mp_h(CLAIMS["collapse.tanh"], point[0], point[1], taus) >= -mp.mpf(10) ** -25, box


# ---- planted false bounds: just below the tight set at small L, never proved

@pytest.mark.parametrize("bound", [
    "tanh(a*D**2/4)*D*0.999",  # below collapse.tanh by a factor: false along the tight set t = (0, 1), w = 0
    "(a*D**2/4 - (a*D**2)**3/150)*D",  # the right slope at 0, a wrong L^3 coefficient (tanh(L/4) has -1/192)
])
def test_bounds_just_below_the_tight_set_are_not_proved(bound):
    result = region_proof.prove(reductions.region(4, 1, "1/2", 1), profiles.bound_profile(bound, 4, 1), time_limit=20)
    assert result.verdict != "proved"
    assert result.confirmed, result.message  # undecided or violated, what the checker confirms
    if result.verdict == "violated":
        assert checker.verify(result.certificate).ok


# ---- edited leaves of the new tests are rejected

def _relabelled(cert, source: str, target: str):
    """A copy of the certificate with the first leaf closed by `source` that `target` does not close relabelled so."""
    profile = checker_region.Profile(cert["claim"], cert["bound"], cert["region"]["n"], cert["region"]["d"])
    for index, leaf in enumerate(cert["leaves"]):
        box = tuple((Fraction(lo), Fraction(hi)) for lo, hi in leaf["box"])
        if leaf["method"] == source:
            with ctx.workprec(leaf["precision"]):
                if not checker_region._closes(target, box, profile):
                    forged = copy.deepcopy(cert)
                    forged["leaves"][index]["method"] = target
                    return forged
    return None


@pytest.mark.parametrize("source,target", [("direct", "chord"), ("direct", "rise"), ("chord", "direct"),
                                           ("rise", "chord")])
def test_a_leaf_relabelled_to_or_from_the_new_tests_is_rejected(tanh_proof, source, target):
    assert checker.verify(tanh_proof.certificate).ok
    forged = _relabelled(tanh_proof.certificate, source, target)
    assert forged is not None, f"no {source} leaf that {target} leaves open in this proof"
    confirmation = checker.verify(forged)
    assert not confirmation.ok and "is not closed by" in confirmation.message


def test_the_chord_at_l_zero_needs_a_bound_that_vanishes():
    """h(0) = g(0) - 0: a bound with g(0) > 0 cannot use the slope at L = 0, and one with g(0) < 0 is false there."""
    box = ((Fraction(0), Fraction(1, 64)), (Fraction(0), Fraction(1, 64)), (Fraction(1, 2), Fraction(1, 2)))
    for bound in ("(tanh(a*D**2/4) - 1/1000)*D", "(tanh(a*D**2/4) + 1/1000)*D"):
        assert closing.chord(box, profiles.bound_profile(bound, 3, 1)) is None
        assert checker_region._margin("chord", box, checker_region.Profile(None, bound, 3, 1)) is None
