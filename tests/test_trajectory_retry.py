"""A stated enclosure that misses the checker's own only by the two evaluations' rounding is confirmed by a
recomputation at a higher precision (certify_checker.exact.finer); one that excludes the value is not."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from flint import arb, ctx

import certify
from certify_checker import verify
from certify_checker import trajectory as checker
from certify_checker.exact import ESCALATION, finer
from certify_checker.limits import cost, limbs, step_parts


@pytest.fixture(scope="module")
def traced():
    """32 tokens in 64 dimensions through 6 layers."""
    rng = np.random.default_rng(1)
    X, A = rng.normal(size=(32, 64)), rng.normal(scale=64 ** -0.5, size=(64, 64))
    return certify.trajectory({"X": X, "A": A}, layers=6)


def _missing_at_stated_precision(cert: dict) -> list:
    inputs = checker.schema.expanded(cert["inputs"])
    flags = [point["resolved"] for point in cert["points"]]
    points = checker.run(inputs, cert["layers"], False, cert["step_precisions"], flags)[0]
    return [(t, key) for t, point in enumerate(points) for key in ("D", "mu", "tau")
            if point[key] is not None and not checker.inside(point[key], checker.read_ball(cert["points"][t][key]))]


def test_an_honest_trajectory_whose_tau_misses_the_checkers_by_rounding_is_certified(traced, monkeypatch):
    """The engine and the checker make a centred step's balls alike; a checker whose tau is wider by 2^16 ulps (as
    its rounding once left it, the engine's being tighter) misses the stated tau_0 at the stated precision, and agrees
    at twice it."""
    cert = traced.certificate
    assert traced.confirmation.startswith("confirmed"), traced.confirmation
    centred_tau = checker.centred.centred_tau
    monkeypatch.setattr(checker.centred, "centred_tau",
                        lambda *step: (tau := centred_tau(*step)) + arb(0, abs(tau).upper() * arb(2) ** (16 - ctx.prec)))
    assert (0, "tau") in _missing_at_stated_precision(cert)  # the retry is needed
    assert verify(cert).ok


@pytest.mark.parametrize("radii", [3, -3, 50])
def test_a_stated_tau_shifted_by_radii_is_still_rejected(traced, radii):
    """Shifted off the checker's ball by a few of its radii, as accurate as before: no precision rescues it."""
    cert = copy.deepcopy(traced.certificate)
    m, e, r, f = map(int, cert["points"][1]["tau"])
    low = min(e, f)  # the midpoint moved by 2 radii per step, exactly: the stated ball and the shifted one are disjoint
    cert["points"][1]["tau"] = [str((m << (e - low)) + 2 * radii * (r << (f - low))), str(low), str(r), str(f)]
    confirmation = verify(cert)
    assert not confirmation.ok and "t = 1: stated tau" in confirmation.message, confirmation.message


def test_finer_recomputes_at_each_multiple_until_nothing_misses():
    asked = []

    def still_missing(factor, labels):
        asked.append((factor, set(labels)))
        return {label for label in labels if label == "wrong" or factor < ESCALATION[-1] and label == "late"}

    assert finer({"late", "wrong", "near"}, still_missing) == {"wrong"}
    assert [factor for factor, _ in asked] == list(ESCALATION)
    assert asked[-1][1] == {"late", "wrong"}  # only what still misses is recomputed
    assert finer(set(), still_missing) == set() and len(asked) == len(ESCALATION)


def test_the_steps_are_priced_with_their_recomputations():
    """The checker's estimate counts the retry: each step's Python at both runs and its arithmetic at cost() of its
    precision and of FINER times it (arb's products grow as L + L^2 / 64 in the limbs L, faster than the limbs three
    times it was once priced at), for the sizes of the certificate's configuration."""
    cert = {"layers": 3, "inputs": {"X": [[0, 1], [1, 0], [2, 2]], "layers": [{"A": [[1, 0], [0, 1]]}]},
            "precision": 200, "curve_precision": 100, "norm_precision": 100, "step_precisions": [200, 100, 64, 53],
            "curves": ["global.step"]}
    python, arithmetic = step_parts(3, 2)
    price = checker.step_prices(cert)
    for bits in (53, 64, 106, 1000, 65536):
        assert price(bits) == 2 * python + arithmetic * (cost(bits) + sum(cost(f * bits) for f in checker.FINER))
        assert price(bits) >= arithmetic * (limbs(bits) + sum(limbs(f * bits) for f in checker.FINER))
    assert checker.stated_price(cert) == sum(map(price, cert["step_precisions"]))
    curves = checker.work(cert) - checker.stated_price(cert)
    assert curves > 0 and checker.step_work(cert) == 0  # no value curve: no powers of V, no approach
    assert checker.work(cert, priced=7) == 7 + curves  # a planned total in place of the stated steps' (the engine's meter)