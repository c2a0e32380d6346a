"""The witness-free counterexample checkers (expansive-v, residual-far) on genuine certificates forged one way
each, their digest redone as a forger would: the checker re-derives the verdict and rejects each forgery."""

from __future__ import annotations

import argparse
import copy
from fractions import Fraction

import pytest
from flint import ctx
from mpmath import mp

import certify_checker as checker
from certify_checker import expansive_v as checked_expansive_v
from certify_checker import residual_far as checked_residual_far
from certify.studies.thesis import expansive_v
from certify.studies.thesis import residual_far


def rehash(cert: dict) -> dict:
    cert["inputs_sha256"] = checker.counterexample.digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    return cert


@pytest.fixture(scope="module")
def grow_cert():
    cert = expansive_v.build(argparse.Namespace(rho="2", layers="3", lam=None)).certificate
    assert cert["verdict"] == "certified" and checker.verify(cert).ok
    return cert


def test_equal_diameters_are_no_growth(grow_cert):
    """Two equal tokens stay equal (D = 0 at every layer): D(X_1) > D(X_0) is false, proven so exactly, though the
    two balls are equal; a certificate restated on them as certified is rejected."""
    cert = copy.deepcopy(grow_cert)
    cert["inputs"]["config"]["X"] = [["1", "0"], ["1", "0"]]
    found = checked_expansive_v.evaluate(cert["inputs"], {})
    assert found.refuted == ["D(X_1) > D(X_0)"], found
    assert not checker.verify(rehash(cert)).ok


def test_a_residual_layer_is_not_the_claim_s_stack(grow_cert):
    """X' = X + P X V^T still grows here, but it is not the stack the claim is about: not certified, though the
    digest is redone."""
    cert = copy.deepcopy(grow_cert)
    for layer in cert["inputs"]["config"]["layers"]:
        layer["residual"] = True
    found = checked_expansive_v.evaluate(cert["inputs"], {})
    assert found.verdict == "undecided", found
    assert not checker.verify(rehash(cert)).ok


@pytest.mark.parametrize("build", [
    lambda: expansive_v.build(argparse.Namespace(rho="2", layers="3", lam=None)).certificate,
    lambda: residual_far.build(argparse.Namespace(q="0.1", lam=None)).certificate], ids=["expansive-v", "residual-far"])
def test_a_stated_witness_is_refused(build):
    """These kinds read no witness: one stated (and hashed) is a field nobody checks, refused."""
    cert = build()
    cert["witness"] = {"note": "1"}
    assert not checker.verify(rehash(cert)).ok


def test_a_q_just_below_the_ratio_is_not_certified():
    """q 10^-60 below the true ratio D'/D = 2 / (e^3 + 1) (mpmath, 80 digits): D' <= q D is false, and at 64 bits the
    balls of D' and q D overlap, so only their ends, not their midpoints, decide it (undecided).  Restated as
    certified, with the values the checker computes and the digest redone, it is rejected."""
    with mp.workdps(80):
        true = 2 / (mp.e ** 3 + 1)
        q = Fraction(mp.nstr(true - mp.mpf(10) ** -60, 75))
        assert mp.mpf(q.numerator) / q.denominator < true
    cert = copy.deepcopy(residual_far.build(argparse.Namespace(q="0.1", lam=None)).certificate)
    cert["inputs"]["q"] = str(q)
    with ctx.workprec(cert["precision"]):
        found = checked_residual_far.evaluate(cert["inputs"], {})
    cert["values"] = {name: value.str(30, radius=True) for name, value in found.values.items()}
    cert["claims"] = found.claims
    assert found.verdict == "undecided", found
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "finds undecided" in confirmation.message, confirmation


def test_a_step_too_close_to_call_is_not_refuted(grow_cert):
    """With rho = 2 and A = lam I, D_0 = 2: D_1 = 2 tanh(lam) D_0 (tests/test_counterexamples_thesis.py).  lam 10^-40
    above atanh(1/2) makes D_1 > D_0 true (mpmath) by less than 64 bits resolve: undecided, not refuted; a
    certificate stating "refuted" there, with the digest redone, is rejected."""
    with mp.workdps(80):
        lam = Fraction(mp.nstr(mp.atanh(mp.mpf(1) / 2) + mp.mpf(10) ** -40, 75))
        assert 2 * mp.tanh(mp.mpf(lam.numerator) / lam.denominator) > 1
    cert = copy.deepcopy(grow_cert)
    layer = cert["inputs"]["config"]["layers"][0]
    layer["A"] = [[str(lam), "0"], ["0", str(lam)]]
    cert["inputs"]["config"]["layers"] = [layer]
    with ctx.workprec(cert["precision"]):
        found = checked_expansive_v.evaluate(cert["inputs"], {})
    assert found.verdict == "undecided", found
    cert.update(verdict="refuted", claims=found.claims, values={})
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "finds undecided" in confirmation.message, confirmation


@pytest.mark.parametrize("verdict", ["certified", "refuted"])
def test_a_layer_without_its_residual_is_not_the_claim_s_layer(verdict):
    """residual.far is about X' = X + P X V^T: with the residual taken away the layer is another one, and whatever
    its diameters give, neither verdict is the claim's; stated with the values the checker computes and the digest
    redone, both are rejected."""
    cert = copy.deepcopy(residual_far.build(argparse.Namespace(q="0.1", lam=None)).certificate)
    del cert["inputs"]["config"]["layers"][0]["residual"]
    with ctx.workprec(cert["precision"]):
        found = checked_residual_far.evaluate(cert["inputs"], {})
    assert found.verdict == "undecided", found
    cert.update(verdict=verdict, claims=found.claims,
                values={name: value.str(30, radius=True) for name, value in found.values.items()})
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "finds undecided (one residual layer" in confirmation.message, confirmation


@pytest.mark.parametrize("kind, options, forged", [
    ("residual-far", {"q": "1/10", "lam": None}, "residual-far-q1_1000"),  # the name of a q a hundred times smaller
    ("residual-far", {"q": "0.25", "lam": None}, "residual-far-q1_10"),
    ("expansive-v", {"rho": "3/2", "layers": "3", "lam": None}, "expansive-v-rho101_100-T3"),  # a rho nearer 1
    ("expansive-v", {"rho": "2", "layers": "3", "lam": None}, "expansive-v-rho2-T30"),  # ten times the layers
], ids=["far q", "far q above", "grow rho", "grow T"])
def test_a_name_that_disagrees_with_the_checked_parameters_is_rejected(kind, options, forged):
    """The configuration's name (certify writes residual-far-q1_10, expansive-v-rho2-T3) states q, rho and T, and
    was read by no check: a forger's name, digest redone, was confirmed beside the parameters it misstates.  The
    checker now rebuilds it from the parameters it checks: the honest one is confirmed, a forged one rejected."""
    build = residual_far.build if kind == "residual-far" else expansive_v.build
    honest = build(argparse.Namespace(**options)).certificate
    assert checker.verify(honest).ok, checker.verify(honest).message
    cert = copy.deepcopy(honest)
    cert["inputs"]["config"]["name"] = forged
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "name" in confirmation.message, confirmation.message
    unnamed = copy.deepcopy(honest)  # no name states nothing: still confirmed
    del unnamed["inputs"]["config"]["name"]
    assert checker.verify(rehash(unnamed)).ok


def test_a_name_is_rejected_where_v_is_no_multiple_of_the_identity(grow_cert):
    """expansive-v's name states rho of V = rho I: on layers whose V is not one multiple of I no name is certify's,
    and one stated is rejected, though the stack grows."""
    cert = copy.deepcopy(grow_cert)
    cert["inputs"]["config"]["layers"][0]["V"] = [["2", "0"], ["0", "3"]]
    del cert["inputs"]["config"]["name"]
    assert checker.verify(rehash(cert)).ok  # it still grows: confirmed without a name
    cert["inputs"]["config"]["name"] = "expansive-v-rho2-T3"
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "name" in confirmation.message, confirmation.message
