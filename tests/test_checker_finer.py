"""Honest certificates the checker once rejected, and the finer evaluation that confirms some of them: a named
result's verdict or enclosure that disagrees at the stated precision only by its rounding is judged again at twice
it (certify_checker.counterexample.confirm, exact.finer); a stated value that excludes the true one never is."""

from __future__ import annotations

import argparse
import copy
from decimal import Decimal

import mpmath
import numpy as np
import pytest
from flint import arb, ctx

import certify
import certify_checker
import test_heads
from certify.engine import certificate
from certify.studies import counterexamples, heads
from certify.suite import cases
from certify_checker import counterexample, residual_far
from certify_checker import trajectory as checker_trajectory
from certify_checker.exact import contains, rational


def test_a_head_whose_queries_are_not_all_keys_is_confirmed():
    """Token 1 attends to token 0 alone: P is exactly [[1, 0], [1, 0]] (integer scores are exact), so the engine
    states D(P X) = tau = 0 exactly.  The checker shifted row i by S_ii, a score token i may not attend to, and
    found P_10 = w / w, an inexact 1: it rejected every step."""
    head = heads.Head(X=np.array([[1.0], [2.0]]), W_Q=np.array([[1.0]]), W_K=np.array([[1.0]]), keys=np.array([1, 0]))
    steps = test_heads.confirmed_steps(head)
    assert steps.certificate["values"]["tau"] == "0" and steps.certificate["values"]["D_PX"] == "0"
    assert steps.outcomes == {"dobrushin": "holds", "tau": "holds", "global": "holds"}, steps.checker
    assert certify_checker.verify(steps.certificate).ok


def _unbounded_softmax_head() -> heads.Steps:
    """Scores near 10^66 known to +-10^50: no softmax is finite in ball arithmetic, the regime of a D^2 is."""
    head = heads.Head(X=np.array([[0.0], [1e3]]), W_Q=np.array([[1e30]]), W_K=np.array([[1e30]]))
    return test_heads.confirmed_steps(head)


def test_a_head_whose_softmax_is_not_finite_states_its_regime():
    """The engine states tau and D(P X) as "nan" beside the regime it decides; the checker read "nan" as a
    malformed enclosure and refused the regime with it."""
    steps = _unbounded_softmax_head()
    assert steps.certificate["values"]["tau"] == "nan" and steps.regime == "underflowed", steps.checker
    assert certify_checker.verify(steps.certificate).ok


@pytest.mark.parametrize("name, text", [("D", "nan"), ("D", "[+/- inf]"), ("tau", "[0.5 +/- 0.5]")])
def test_a_non_finite_enclosure_agrees_only_with_a_non_finite_one(name, text):
    """D is finite for the checker: "nan" there is rejected; tau is not: a finite stated one is rejected."""
    cert = copy.deepcopy(_unbounded_softmax_head().certificate)
    cert["values"][name] = text
    assert not certify_checker.verify(cert).ok


def test_the_rank_of_tokens_far_from_unit_size_is_confirmed_at_53_bits():
    """K + 1 1^T mixed K's scale (10^148 here) with 1: the Cholesky needed some 500 bits for what K + c 1 1^T, c of
    K's scale, decides at 53.  mpmath at 600 digits: the smallest of the rank's singular values is far from 0."""
    X = np.random.default_rng(137).normal(size=(5, 30)) * 1e74
    claims = test_heads.rank_certificate(X, 4)["claims"]
    cert = certificate.named("centred-rank", claims, "certified", {"X": X.tolist()}, {}, {}, 53)
    assert certify_checker.verify(cert).ok, certify_checker.verify(cert).message
    with mpmath.workdps(600):
        rows = [[mpmath.mpf(float(v)) for v in row] for row in X]
        mean = [sum(column) / 5 for column in zip(*rows)]
        centred = mpmath.matrix([[v - m for v, m in zip(row, mean)] for row in rows])
        singular = sorted(mpmath.svd_r(centred, compute_uv=False), reverse=True)
        assert singular[3] > singular[0] * mpmath.mpf(10) ** -20  # rank 4: the fifth is the centring's zero
    tiny = certificate.named("centred-rank", claims, "certified", {"X": (X * 1e-148).tolist()}, {}, {}, 53)
    assert certify_checker.verify(tiny).ok  # K of size 10^-148 beside 1 failed alike


def _residual_far() -> dict:
    module = counterexamples.load("residual-far")
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    outcome = module.build(parser.parse_args([]))
    assert outcome.confirmed and outcome.certificate["verdict"] == "certified"
    return outcome.certificate


def _true_ratio(cert: dict) -> mpmath.mpf:
    """D(X') / D(X) = 2 / (exp(2 lambda) + 1) for X = (e1, -e1), V = -I, A = lambda I (residual.far)."""
    lam = rational(cert["inputs"]["config"]["layers"][0]["A"][0][0])
    lam = mpmath.mpf(lam.numerator) / lam.denominator
    return 2 / (mpmath.exp(2 * lam) + 1)


def _checker_ratio(cert: dict) -> arb:
    with ctx.workprec(cert["precision"]):
        return residual_far.evaluate(cert["inputs"], cert["witness"]).values["ratio"]


def test_an_enclosure_of_the_true_value_tighter_than_the_checkers_is_confirmed_finer():
    """A stated ratio centred on the true value (mpmath, 200 digits) with 1/256 of the checker's radius at the
    stated precision misses the checker's ball there, and contains its ball at twice the precision."""
    cert = copy.deepcopy(_residual_far())
    mine = _checker_ratio(cert)
    with mpmath.workdps(200):
        cert["values"]["ratio"] = f"[{mpmath.nstr(_true_ratio(cert), 60)} +/- {float(mine.rad()) / 256:.3e}]"
    assert not contains(mine, cert["values"]["ratio"])  # the retry is needed
    assert certify_checker.verify(cert).ok, certify_checker.verify(cert).message


@pytest.mark.parametrize("side", [1, -1])
def test_a_stated_value_inside_the_checkers_rounding_but_off_the_true_one_is_rejected(side):
    """The checker's ball at the stated precision is m +- r; a stated m +- side r / 2 +- r / 4 lies inside it,
    as accurate, yet excludes the true value (mpmath): no finer evaluation confirms it."""
    cert = copy.deepcopy(_residual_far())
    mine = _checker_ratio(cert)
    with ctx.workprec(4 * cert["precision"]):
        planted = arb(mine.mid() + side * mine.rad() / 2, mine.rad() / 4)
    cert["values"]["ratio"] = text = planted.str(40, radius=True, more=True)
    mid, rad = (rational(part) for part in text.strip("[]").split(" +/- "))
    with mpmath.workdps(200):
        true = _true_ratio(cert)
        low, high = (mpmath.mpf(q.numerator) / q.denominator for q in (mid - rad, mid + rad))
        assert not low <= true <= high and mine.overlaps(planted)
    confirmation = certify_checker.verify(cert)
    assert not confirmation.ok and "stated ratio" in confirmation.message, confirmation.message


def _halving(precision: int):
    """A named result's evaluation: 1 + 2^-(precision + 8) - 1 > 0, undecided at `precision` bits, certain at twice."""
    def evaluate(inputs: dict, witness: dict) -> counterexample.Evaluation:
        x = (arb(1) + arb(2) ** -(precision + 8)) - 1
        found = counterexample.Evaluation(claims=["2^-(p + 8) > 0"], values={"x": x})
        found.require(x > 0, "x > 0")
        return found
    return evaluate


def _named(x: float, precision: int = 64) -> dict:
    """A certified certificate of _halving's claim stating x, exactly."""
    cert = certificate.named("test-kind", ["2^-(p + 8) > 0"], "certified", {}, {}, {}, precision)
    return cert | {"values": {"x": str(Decimal(x)).lower()}}


def test_a_verdict_undecided_at_the_stated_precision_is_certified_finer():
    cert = _named(2.0 ** -72)
    assert cert["verdict"] == "certified"
    assert counterexample.confirm(cert, "test-kind", _halving(64), set()) == (True, "confirmed: certified at 64 bits")


@pytest.mark.parametrize("x", [2.0 ** -71, 2.0 ** -72 * (1 + 2.0 ** -52)])
def test_a_finer_evaluation_confirms_no_wrong_value(x):
    """At 64 bits the checker's x is [0 +- 2^-63], which holds these; at 128 it is 2^-72 exactly."""
    ok, message = counterexample.confirm(_named(x), "test-kind", _halving(64), set())
    assert not ok and "stated x" in message, message


def test_a_trajectory_resolved_by_the_engine_and_by_the_checker_only_finer_is_confirmed(monkeypatch):
    """D_3 has 20 bits in the engine's ball and 19 in the checker's at the stated step precision: the checker
    stopped its run there and rejected an "enclosed" trajectory.  The engine and the checker now make a centred step's
    balls alike: a checker whose D has twice the radius stands for one that rounds differently."""
    diameter = checker_trajectory.forward.diameter
    monkeypatch.setattr(checker_trajectory.forward, "diameter", lambda E: (D := diameter(E)) + arb(0, D.rad()))
    config = {"X": [[-175290.54689700654, 85732.02962833305], [-175290.55686927508, 85732.03217125364],
                    [-175290.55056032294, 85732.02714692462], [-175290.54897861418, 85732.03392160549]],
              "layers": [{"A": [[-160298.3440851453, 339577.1453713365], [-349493.35065611306, -438027.2058974705]],
                          "V": [[-0.12837656772289033, 0.2711447157141185], [0.2711447157141185, 0.12837656772289033]],
                          "residual": True}]}
    traced = certify.trajectory(config, layers=3, max_prec=256)
    cert = traced.certificate
    inputs = checker_trajectory.schema.expanded(cert["inputs"])
    D = checker_trajectory.run(inputs, 3, False, cert["step_precisions"], [True] * 4)[0][3]["D"]
    assert not checker_trajectory.resolved(D) and cert["points"][3]["resolved"]  # the retry is needed
    assert traced.certified and traced.verdict == "enclosed", traced.confirmation
    assert certify_checker.verify(cert).ok


def test_a_trajectory_stated_resolved_beyond_what_any_precision_resolves_is_rejected():
    """A forger states every D_t of 120 layers as the checker computes it at 64 bits and calls each resolved: near
    consensus D_t loses some log2(3) bits a layer, and past t = 70 or so not even 128 bits give it 20."""
    T = 120
    cert = copy.deepcopy(certify.trajectory(cases.near_consensus(), layers=T, max_prec=64).certificate)
    steps = [64] * (T + 1)
    inputs = checker_trajectory.schema.expanded(cert["inputs"])
    points = checker_trajectory.run(inputs, T, False, steps, [True] * (T + 1))[0]

    def ball(x):
        return [str(v) for part in (x.mid(), x.rad()) for v in map(int, part.mid().man_exp())]

    cert["points"] = [{"t": t, "resolved": True, "D": ball(p["D"]), "mu": ball(p["mu"]),
                       "tau": None if p["tau"] is None else ball(p["tau"]), "approach": None, "log_curves": {},
                       "checks": {}} for t, p in enumerate(points)]
    cert.update(curves=[], step_precisions=steps, precision=64, verdict="enclosed")
    cert["inputs_sha256"] = checker_trajectory.digest(T, cert["inputs"], [64, cert["curve_precision"],
                                                                          cert["norm_precision"], steps])
    assert not checker_trajectory.resolved(points[-1]["D"])
    confirmation = certify_checker.verify(cert)
    assert not confirmation.ok and "fewer than 20 bits" in confirmation.message, confirmation.message


def test_a_violated_bound_beside_a_layer_whose_enclosure_is_not_finite_is_confirmed():
    """X = (x, -x), x = 1e117, A = 1: layer 0 keeps D (D_out / D = tanh(x^2) > 0.9, mpmath), so 0.9 D is violated
    there; layer 1's scores, from tokens known to +-10^86, are known to +-10^203: its D_out is stated "nan", which
    the checker refused as malformed (the engine reported the violation undecided, not certified)."""
    x = 1e117
    assert mpmath.tanh(mpmath.mpf(x) ** 2) > 0.9
    result = certify.check({"X": [[x], [-x]], "layers": [{"A": [[1.0]]}, {"A": [[1.0]]}]}, bound="0.9*D", max_prec=256)
    cert = result.certificate
    assert result.verdict == "violated" and cert["values"]["layers"][1]["D_out"] == "nan", result
    assert certify_checker.verify(cert).ok
    planted = copy.deepcopy(cert)
    planted["values"]["layers"][0]["D_out"] = "nan"  # finite for the checker: "nan" there says less than it can
    assert not certify_checker.verify(planted).ok


def test_one_value_matrix_stated_as_numbers_and_as_texts_is_one_v():
    """value.bounded needs one V in every layer: the layers here state it as JSON numbers and as texts ("0", "1").
    The checker compared their JSON and refused the stack (the engine escalated to 65536 bits, then said undecided;
    the trajectory's value curves went unconfirmed); a V that differs by value is still refused."""
    V = [[0, 1], [-1, 0]]
    layers = [{"A": [[1, 0], [0, 1]], "V": V}, {"A": [[1, 0], [0, 1]], "V": [[str(x) for x in row] for row in V]}]
    config = {"X": [[1, 0], [0, 1], [0.5, 0.2]], "layers": layers}
    result = certify.check(config, claim="value.bounded", max_prec=128)
    assert result.verdict == "holds" and certify_checker.verify(result.certificate).ok, result
    traced = certify.trajectory(config, layers=2, max_prec=128)
    assert traced.certified and traced.verdict == "holds", traced.confirmation
    other = copy.deepcopy(result.certificate)
    other["inputs"]["layers"][1]["V"][1][1] = "1/1000000"  # not the first layer's V
    other["inputs_sha256"] = certify_checker.inequality.digest(other)
    confirmation = certify_checker.verify(other)
    assert not confirmation.ok and "hypotheses of value.bounded" in confirmation.message, confirmation.message


def test_a_finite_enclosure_stated_where_the_checkers_is_not_finite_is_checked_finer():
    """The certificate above, layer 1's D_out (not finite at the stated precision) stated as a finite ball that
    excludes it: the checker's own at a finer precision is finite, and the stated ball must contain it there."""
    x = 1e117
    cert = certify.check({"X": [[x], [-x]], "layers": [{"A": [[1.0]]}, {"A": [[1.0]]}]}, bound="0.9*D",
                         max_prec=256).certificate
    planted = copy.deepcopy(cert)
    planted["values"]["layers"][1]["D_out"] = "[5.0 +/- 1.0]"
    confirmation = certify_checker.verify(planted)
    assert not confirmation.ok and "layer 1: D_out" in confirmation.message, confirmation.message
