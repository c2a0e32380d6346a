"""The checks of the counterexample frame and of the wu-fig1 and centred-rank kinds, one at a time: a certificate the
engine writes, forged in the one way a missing check would let through (the forger states what the checker computes
and redoes the digest), is rejected; what the forgery states is shown false independently (mpmath or exact rationals)."""

from __future__ import annotations

import argparse
import copy
from fractions import Fraction

import numpy as np
import pytest
from flint import ctx
from mpmath import mp

import certify_checker
from certify.engine import certificate
from certify.studies.wu import fig1
from certify_checker import wu_fig1
from certify_checker.counterexample import Evaluation, digest

mp.dps = 50


@pytest.fixture(scope="module")
def wu() -> dict:
    outcome = fig1.build(argparse.Namespace(w="2"))
    assert outcome.confirmed and outcome.verdict == "certified", outcome.message
    return outcome.certificate


def _forged(cert: dict, edit, evaluate=wu_fig1.evaluate) -> dict:
    """cert edited, stating as certified the claims and values the checker's own evaluation gives, digest redone."""
    forged = copy.deepcopy(cert)
    edit(forged)
    with ctx.workprec(forged["precision"]):
        found = evaluate(forged["inputs"], forged["witness"])
    forged.update(verdict="certified", claims=found.claims,
                  values={name: value.str(30, radius=True) for name, value in found.values.items()})
    forged["inputs_sha256"] = digest(forged["kind"], forged["inputs"], forged["witness"], forged["precision"])
    return forged


def _verdict(cert: dict) -> tuple[bool, str]:
    found = certify_checker.verify(cert)
    return found.ok, found.message


def _mp(text: str):
    exact = Fraction(text)
    return mp.mpf(exact.numerator) / exact.denominator


def _f_prime(w, th):
    u = mp.tan(th / 2 + mp.pi / 4)
    return (1 + u * u) / (2 * (1 + (w + u) ** 2))


def test_the_forger_states_what_the_checker_computes(wu):
    """The forgery below changes only what each test edits: unedited, it is the genuine certificate, confirmed."""
    assert certify_checker.verify(_forged(wu, lambda c: None)).ok


@pytest.mark.parametrize("cuts", [["2", "9/2"], [f"{k}/1000" for k in range(1700, 1801)] + ["9/2"]])
def test_a_trapping_arc_over_A_is_rejected_whichever_piece_holds_A(wu, cuts):
    """0 < f' < 1 on every piece, the last one too (the pieces before it, on [1.7, 1.8], pass): f'(A) > 1 (mpmath),
    and A = 2 pi / 3 lies in the arc."""
    assert _f_prime(mp.mpf(2), 2 * mp.pi / 3) > 1
    assert _mp(cuts[-2]) < 2 * mp.pi / 3 < _mp(cuts[-1])
    ok, why = _verdict(_forged(wu, lambda c: c["witness"].update(trapping_cuts=cuts)))
    assert not ok and "f'" in why, why


def test_a_trapping_arc_without_B_is_rejected(wu):
    """The arc [4.3, 4.6] has 0 < f' < 1 but B = 4 pi / 3 lies below it: every start on it tends to B is not shown."""
    assert 4 * mp.pi / 3 < mp.mpf("4.3")
    ok, why = _verdict(_forged(wu, lambda c: c["witness"].update(trapping_cuts=["43/10", "46/10"])))
    assert not ok and "trapping arc" in why, why


def test_a_trapping_arc_beyond_three_halves_pi_is_rejected(wu):
    """Past 3 pi / 2, cos th > 0 and the angle map is not token 2's dynamics: th = 5 goes to about 1.15 (mpmath),
    off the arc the claim says is mapped into itself."""
    th, w = mp.mpf(5), 2
    image = mp.atan2(w * mp.cos(th) + 1 + mp.sin(th), mp.cos(th)) % (2 * mp.pi)
    assert image < mp.mpf("4.1")
    cuts = lambda c: c["witness"]["trapping_cuts"].__setitem__(-1, "5")
    ok, why = _verdict(_forged(wu, cuts))
    assert not ok and "arc" in why, why


def test_a_token1_horizon_too_short_is_rejected(wu):
    """With a_min = 1/10 and T = 1 the start (1/10, -sqrt(0.99)) is after one layer (mpmath) far from (0, 1): farther
    than the bound u sqrt(1 + u^2) that M = T w alone (without the start's own offset) would give."""
    w, a = mp.mpf(2), mp.mpf("0.1")
    b = -mp.sqrt(1 - a * a)
    x = mp.matrix([a, b + w * a]) / mp.norm(mp.matrix([a, b + w * a]))
    u = 1 / mp.sqrt(1 + (1 * w) ** 2)
    assert mp.norm(x - mp.matrix([0, 1])) > u * mp.sqrt(1 + u * u)
    ok, why = _verdict(_forged(wu, lambda c: c["witness"]["token1"].update(T=1)))
    assert not ok and "a_min" in why, why


def test_an_input_nobody_reads_is_rejected(wu):
    ok, why = _verdict(_forged(wu, lambda c: c["inputs"].update(note="2")))
    assert not ok and "fields" in why, why


def test_a_precision_out_of_range_is_rejected_with_its_digest_redone(wu):
    ok, why = _verdict(_forged(wu, lambda c: c.update(precision=8)))
    assert not ok and "out of range" in why, why


def test_an_edit_that_keeps_every_check_passing_is_still_caught_by_the_digest(wu):
    """At 128 bits the certificate would confirm; stated with the 64-bit digest, it was edited."""
    finer = _forged(wu, lambda c: c.update(precision=128))
    assert certify_checker.verify(finer).ok
    finer["inputs_sha256"] = wu["inputs_sha256"]
    ok, why = _verdict(finer)
    assert not ok and "digest" in why, why


def test_refuted_needs_every_failed_check_proven_false():
    """One check proven false beside one merely not proven: the inputs may still be a counterexample."""
    found = Evaluation()
    found.require(False, "proven false", refuted=True)
    found.require(False, "not proven")
    assert found.verdict == "undecided"
    found = Evaluation()
    found.require(False, "proven false", refuted=True)
    assert found.verdict == "refuted"


def _rank(X, witness=None) -> dict:
    n, d = len(X), len(X[0])
    claim = f"the centred tokens X - 1 xbar^T of inputs.X have rank {min(n - 1, d)} = min(n - 1, d)"
    cert = certificate.named("centred-rank", [claim], "certified", {"X": X}, witness or {}, {}, 64)
    cert["inputs_sha256"] = digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    return cert


def test_rank_of_tokens_on_a_line_off_the_origin_is_rejected():
    """Four tokens in R^2 on the line y = 1: they span R^2 (X^T X is positive definite), but centred they span one
    dimension (exactly), not min(n - 1, d) = 2: the rank is of the centred tokens."""
    X = [["0", "1"], ["1", "1"], ["2", "1"], ["3", "1"]]
    rows = [[Fraction(x) for x in row] for row in X]
    mean = [sum(column) / 4 for column in zip(*rows)]
    assert all(row[1] - mean[1] == 0 for row in rows)  # centred: second column 0, rank 1
    assert np.linalg.matrix_rank(np.array(rows, dtype=float)) == 2
    found = certify_checker.verify(_rank(X))
    assert not found.ok and "Cholesky" in found.message, found.message


def test_rank_claims_min_n_minus_one_d_and_states_no_witness():
    X = np.random.default_rng(5).normal(size=(4, 6)).tolist()
    assert certify_checker.verify(_rank(X)).ok
    claimed_n = _rank(X)
    claimed_n["claims"] = ["the centred tokens X - 1 xbar^T of inputs.X have rank 4 = min(n - 1, d)"]
    assert not certify_checker.verify(claimed_n).ok  # centred rows sum to 0: rank at most n - 1 = 3
    found = certify_checker.verify(_rank(X, {"basis": [["1"]]}))
    assert not found.ok and "witness" in found.message, found.message
