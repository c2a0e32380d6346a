"""The attention-head checker's decisions on planted balls whose midpoints say one thing and whose ends another, its
thin norm against mpmath, and the frame it shares with the counterexample kinds (digest, verdict)."""

from __future__ import annotations

import copy

import numpy as np
from flint import arb, ctx
from mpmath import mp

import certify_checker
from certify_checker import forward, head as checker_head, norms, schema
from certify_checker.counterexample import Evaluation
from test_heads import confirmed_steps, sample_head


def test_a_step_holds_only_when_its_whole_ball_is_below_the_other_side(monkeypatch):
    """tau(P) planted as its true value widened to +-1: its midpoint is below 1 - exp(-a D^2), its ball is not, so
    the tau step is not proven and the certificate's "holds" is not confirmed; the dobrushin step, tau times D, too."""
    cert = confirmed_steps(sample_head()).certificate
    assert certify_checker.verify(cert).ok
    inputs, witness = cert["inputs"], cert["witness"]
    honest = forward.dobrushin
    monkeypatch.setattr(forward, "dobrushin", lambda P: honest(P) + arb(0, 1))
    with ctx.workprec(cert["precision"]):
        found = checker_head.evaluate(inputs, witness)
        tau, gap = found.values["tau"], found.values["gap"]
        assert tau.mid() < (1 - gap).mid() and not tau <= 1 - gap  # the planted case
    assert found.verdict != "certified"
    assert any(failure.startswith("tau:") for failure in found.failures)
    assert any(failure.startswith("dobrushin:") for failure in found.failures)


def test_a_regime_is_certain_only_on_the_whole_ball_of_a_d_squared():
    """54 ln 2 - 1/8 +- 1/4 holds numbers on both sides of 54 ln 2: neither informative nor indistinguishable;
    54 ln 2 - 1/2 +- 1/4 is informative."""
    with ctx.workprec(64):
        edge = checker_head.SATURATION_LN2 * arb(2).log()
        straddling = arb((edge - arb(1) / 8).mid(), arb(1) / 4)
        assert not checker_head._in_regime(straddling, "informative")
        assert not checker_head._in_regime(straddling, "indistinguishable")
        assert checker_head._in_regime(arb((edge - arb(1) / 2).mid(), arb(1) / 4), "informative")


def test_the_checkers_thin_norm_holds_the_mpmath_norm_for_nearly_equal_key_columns():
    """W_K's first two columns 1e-4 apart: the k x k reduction's Cholesky factor is large, and the radius it carries
    into C (W_Q^T W_Q) C^T is what holds ||W_Q W_K^T||_2 (mpmath, 60 digits)."""
    head = sample_head(n=6, d=24, k=9)
    head.W_K[:, 1] = head.W_K[:, 0] + 1e-4 * np.random.default_rng(2).normal(size=24)
    cert = confirmed_steps(head).certificate
    witness = schema.expanded(cert["witness"])
    assert witness["route"] == "thin"
    with mp.workdps(60):
        truth = max(mp.svd_r(mp.matrix(head.W_Q.tolist()) * mp.matrix(head.W_K.tolist()).T, compute_uv=False))
    with ctx.workprec(53):
        norm = norms.thin_product_norm(head.W_Q.tolist(), head.W_K.tolist(), witness)
    with ctx.workprec(250):
        assert norm.contains(arb(mp.nstr(truth, 60, strip_zeros=False))), (norm, truth)


def test_a_head_certificate_whose_digest_differs_is_rejected():
    cert = copy.deepcopy(confirmed_steps(sample_head()).certificate)
    cert["inputs_sha256"] = cert["inputs_sha256"][::-1]
    found = certify_checker.verify(cert)
    assert not found.ok and "digest" in found.message


def test_refuted_needs_every_failed_check_proven_false():
    """One check proven false beside one merely not proven: undecided, not refuted."""
    found = Evaluation()
    found.require(False, "first", refuted=True)
    assert found.verdict == "refuted"
    found.require(False, "second")
    assert found.verdict == "undecided"
