"""Every field a certificate states is one the checker reads: a witness entry, a key beside a box or
a curve's label that nothing reads would be shown on the certificate and never checked.

The inequality kind already refuses an unread witness; here the same rule for the kinds whose witness
steers a proof (attention-head, wu-fig1, ln-equilibria) and for trajectories.  Each edit leaves the
claims and values as the checker finds them and recomputes the digest, as a forger would; the
control certificate is confirmed.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from flint import ctx

import certify_checker as checker
from certify_checker import counterexample, head, ln_equilibria, trajectory as checker_trajectory, wu_fig1
from certify.engine.certificate import named


def _named(kind: str, evaluate, inputs: dict, witness: dict, precision: int) -> dict:
    """The certificate of what the checker's own evaluation finds, digest included (what a forger writes)."""
    with ctx.workprec(precision):
        found = evaluate(inputs, witness)
    return named(kind, found.claims, found.verdict, inputs, witness, found.values, precision)


def _head() -> dict:
    inputs = {"X": [["1", "0"], ["0", "1"], ["1/2", "-1"]], "W_Q": [["1", "0"], ["0", "1/2"]],
              "W_K": [["1/3", "0"], ["1", "1"]], "steps": {"dobrushin": "holds", "global": "holds"}}
    witness = {"route": "direct", "basis": [["1", "0"], ["0", "1"]], "top": ["1", "0"]}
    return _named("attention-head", head.evaluate, inputs, witness, 64)


def _wu_fig1() -> dict:
    from certify.studies.wu import fig1
    return _named("wu-fig1", wu_fig1.evaluate, {"w": "2"}, fig1.witness(Fraction(2), 64), 64)


def _ln_equilibria() -> dict:
    from certify.studies.wu import equilibria
    return _named("ln-equilibria", ln_equilibria.evaluate, {"n": 2, "w": "2"},
                  equilibria.witness(2, Fraction(2), True, 64), 64)


EVALUATE = {"attention-head": head.evaluate, "wu-fig1": wu_fig1.evaluate, "ln-equilibria": ln_equilibria.evaluate}


def _forge(cert: dict, edit) -> dict:
    """The certificate with its witness edited: claims and values as the checker's evaluation finds them
    (when it reads the edited witness at all), the digest recomputed."""
    witness = copy.deepcopy(cert["witness"])
    edit(witness)
    try:
        return _named(cert["kind"], EVALUATE[cert["kind"]], cert["inputs"], witness, cert["precision"])
    except ValueError:  # the evaluation refuses the witness: keep what the honest one found
        forged = {**copy.deepcopy(cert), "witness": witness}
        forged["inputs_sha256"] = counterexample.digest(cert["kind"], cert["inputs"], witness, cert["precision"])
        return forged


@pytest.mark.parametrize("build, edit", [
    (_head, lambda w: w.update(note="a d x d witness of ||W_Q W_K^T||_2 = 0.1")),
    (_wu_fig1, lambda w: w.update(theta_C=w["theta_A"])),
    (_wu_fig1, lambda w: w["token1"].update(b_min="0")),
    (_wu_fig1, lambda w: w["theta_A"].append("7")),  # a box of three ends: the third was never read
    (_ln_equilibria, lambda w: w.update(rank="every rank")),
    (_ln_equilibria, lambda w: w["equilibria"][0].update(stable_rank="1")),
    (_ln_equilibria, lambda w: w["equilibria"][0]["tokens"][0].update(lam="5")),
    (_ln_equilibria, lambda w: w["equilibria"][0].update(top_vector=["1", "0"])),  # rank 1 of 2: never read
    (_ln_equilibria, lambda w: w["equilibria"][-1]["top_vector"].append("1")),  # zip dropped the extra entry
], ids=["head-note", "fig1-theta_C", "fig1-token1", "fig1-box", "eq-rank", "eq-entry", "eq-token", "eq-top", "eq-top-long"])
def test_a_witness_field_nothing_reads_is_rejected(build, edit):
    cert = build()
    assert checker.verify(cert).ok, checker.verify(cert).message
    assert not checker.verify(_forge(cert, edit)).ok


def _trajectory() -> dict:
    from certify.studies import trajectory
    from certify.suite import cases
    cert = trajectory.trace(cases.antipodal(1.0), 3).certificate
    assert checker.verify(cert).ok and cert["curves"]
    return cert


def _redigest_trajectory(cert: dict) -> dict:
    precisions = [cert["precision"], cert["curve_precision"], cert["norm_precision"]]
    if checker_trajectory.STEPS_KEY in cert:
        precisions.append(cert[checker_trajectory.STEPS_KEY])
    cert["inputs_sha256"] = checker_trajectory.digest(cert["layers"], cert["inputs"], precisions)
    return cert


@pytest.mark.parametrize("edit", [
    lambda c: c["witness"].update(A7=c["witness"]["A0"]),  # a layer the configuration does not have
    lambda c: c["witness"].update({"V0^1": c["witness"]["A0"]}),  # M without a value curve
    lambda c: c.update(curves={name: "holds for every X" for name in c["curves"]}),  # labels beside the names
], ids=["A7", "V0^1", "curves-object"])
def test_a_trajectory_states_only_the_witnesses_and_curves_it_reads(edit):
    forged = copy.deepcopy(_trajectory())
    edit(forged)
    assert not checker.verify(_redigest_trajectory(forged)).ok


def _near_consensus() -> dict:
    """collapse.global at 53 bits on four tokens 2e-4 apart (a sampled near-consensus case): D(PX), about
    1.3e-13, has only a few correct bits."""
    from test_checker_audit import seal
    X = [[-0.7345918498867813, 0.7846002051520956, 2.0790067939315326],
         [-0.7346382436979563, 0.7845908115678543, 2.0790132692410612],
         [-0.7344270531451023, 0.7845848937258788, 2.0790296283177128],
         [-0.7344675654944188, 0.7845200091982334, 2.079014228995255]]
    A = [[-0.27775156516305216, -0.6058074802610158, 0.7804635084097272],
         [0.03430707682567745, -0.02977966152839835, -0.6885735065965344],
         [0.405217631872541, -0.1108095014318538, 0.3215105033118213]]
    cert = seal({"X": X, "layers": [{"A": A}]}, claim="collapse.global")
    assert cert["verdict"] == "holds" and checker.verify(cert).ok
    return cert


@pytest.mark.parametrize("build, edit", [
    (_near_consensus, lambda c: c["values"].update(D_out="[1e-13 +/- 1e300]")),
    (_near_consensus, lambda c: c["values"]["comparisons"][0].update(lhs="[+/- 1e-5]")),
    (_wu_fig1, lambda c: c["values"].update(fprime_on_trapping_arc="[0.5 +/- 1e300]")),
], ids=["D_out", "lhs", "fig1-slope"])
def test_an_enclosure_far_looser_than_the_checkers_own_is_rejected(build, edit):
    """Where the checker's ball has few correct bits (D_out of tokens 2e-4 apart at 53 bits, f' over the
    trapping arc), both relative accuracies were capped at 0 bits and any radius agreed: D_out stated as
    [1e-13 +/- 1e300] (true, and meaningless) was confirmed.  The radius may now exceed the checker's own
    by at most 2^slack, as elsewhere the accuracy may differ by slack bits."""
    cert = build()
    forged = copy.deepcopy(cert)
    edit(forged)  # values are outside every digest: nothing to recompute
    assert not checker.verify(forged).ok
