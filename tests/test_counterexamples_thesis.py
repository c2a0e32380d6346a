"""The thesis's named counterexamples: residual-far (D' <= q D) and expansive-v (the diameter
grows), against their closed forms in mpmath; certificates confirmed, forgeries rejected, and
the configurations usable as ordinary `certify check` inputs."""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from fractions import Fraction

import pytest

from certify.core import numbers
from flint import arb, ctx
from mpmath import mp

import certify_checker as checker
from certify_checker import expansive_v as checked_expansive_v
from certify.cli import main
from certify.core.limits import DEFAULT as DEFAULT_LIMITS
from certify.engine import certificate
from certify.studies import counterexamples
from certify.studies.thesis import counterexample_configs as configs
from certify.studies.thesis import expansive_v
from certify.studies.thesis import residual_far
from certify.studies.wu import fig1


ROOT = Path(__file__).resolve().parents[1]


def far(q="0.1", lam=None):
    return residual_far.build(argparse.Namespace(q=q, lam=lam))


def grow(rho="2", layers="6", lam=None):
    return expansive_v.build(argparse.Namespace(rho=rho, layers=layers, lam=lam))


def mp_fraction(text):
    q = Fraction(text)
    return mp.mpf(q.numerator) / q.denominator


def inside(ball_text, value, digits=30) -> bool:
    """The stated ball meets the mpmath value (computed at 100 digits, compared to `digits`)."""
    ball = arb(ball_text)
    tolerance = abs(value) * mp.mpf(10) ** -digits
    return ball.overlaps(arb(mp.nstr(value, 60)).union(arb(mp.nstr(value + tolerance, 60))))


def stated_lambda(cert: dict) -> Fraction:
    """lambda of A = lambda I in the certificate's configuration (the one field that states it)."""
    config = cert["inputs"]["config"]
    layer = config["layers"][0] if "layers" in config else config
    return numbers.parse_number(layer["A"][0][0])


# --- residual-far -----------------------------------------------------------------------------

@pytest.mark.parametrize("q", ["0.1", "1/3", "1e-30", "0.9"])
def test_residual_far_matches_the_closed_form_and_is_below_q(q):
    outcome = far(q)
    assert outcome.confirmed and outcome.verdict == "certified"
    cert = outcome.certificate
    with mp.workdps(100):
        lam = mp_fraction(stated_lambda(cert))
        ratio = 2 / (mp.exp(2 * lam) + 1)  # proofs/residual_far.py
        assert ratio < mp_fraction(q)
        assert inside(cert["values"]["ratio"], ratio)
        assert inside(cert["values"]["D"], mp.mpf(2))
        assert inside(cert["values"]["D_out"], 2 * ratio)
        # the chosen lambda is one grid step past the threshold, not far beyond it
        step_back = lam - mp.mpf(2) / configs.GRID
        at_grid_start = Fraction(stated_lambda(cert)) <= Fraction(1, configs.GRID)
        assert at_grid_start or 2 / (mp.exp(2 * step_back) + 1) > mp_fraction(q)
    assert checker.verify(cert).ok


def test_residual_far_for_q_at_least_one_takes_any_lambda():
    outcome = far("2")
    assert outcome.verdict == "certified" and Fraction(stated_lambda(outcome.certificate)) > 0


def test_residual_far_with_too_small_a_lambda_is_refuted_at_the_first_precision():
    """lambda = 1/8 gives D'/D = 1 - tanh(1/8) ~ 0.876 > 1/2: D' <= q D is false, and proven so (refuted, confirmed
    by the checker) at the first precision: no finer one would prove the claim, so none is tried."""
    outcome = far("1/2", lam="1/8")
    assert outcome.verdict == "refuted" and outcome.confirmed
    assert outcome.certificate["precision"] == configs.PRECISION_RANGE[0]
    assert "  proven false: D(X') <= q D(X)" in outcome.summary
    with mp.workdps(50):
        assert 1 - mp.tanh(mp.mpf(1) / 8) > mp.mpf(1) / 2
        assert inside(outcome.certificate["values"]["ratio"], 1 - mp.tanh(mp.mpf(1) / 8))


@pytest.fixture(scope="module")
def far_cert():
    return far("0.1").certificate


@pytest.mark.parametrize("edit", ["smaller q", "weaker A", "no residual", "values", "claims", "V = +I"])
def test_an_edited_residual_far_certificate_is_rejected(far_cert, edit):
    cert = copy.deepcopy(far_cert)
    layer = cert["inputs"]["config"]["layers"][0]
    if edit == "smaller q":  # below the true ratio 0.0949: D' <= q D is false
        cert["inputs"]["q"] = "0.09"
    elif edit == "weaker A":
        layer["A"] = [["1/2", "0"], ["0", "1/2"]]
    elif edit == "no residual":
        del layer["residual"]
    elif edit == "values":
        cert["values"]["ratio"] = "[0.05 +/- 1e-10]"
    elif edit == "claims":
        cert["claims"] = [cert["claims"][0].replace("q D(X)", "q D(X) / 2")]
    else:
        layer["V"] = [["1", "0"], ["0", "1"]]
    assert not checker.verify(cert).ok


def test_a_counterexample_certificate_of_an_earlier_version_is_named_so(far_cert):
    """An earlier version of certify wrote counterexample certificates without their digest: not read, and said so."""
    cert = copy.deepcopy(far_cert)
    del cert["inputs_sha256"]
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "written by an earlier version of certify" in confirmation.message, confirmation
    del cert["values"]  # not the fields of any version
    assert "earlier" not in checker.verify(cert).message


# --- expansive-v ------------------------------------------------------------------------------

def mp_diameters(rho, lam, layers):
    """D_(t+1) = rho tanh(lambda D_t^2 / 4) D_t from D_0 = 2 (proofs/value_expansive.py)."""
    D = [mp.mpf(2)]
    for _ in range(layers):
        D.append(rho * mp.tanh(lam * D[-1] ** 2 / 4) * D[-1])
    return D


@pytest.mark.parametrize("rho, layers", [("2", "6"), ("3/2", "12"), ("1.05", "3")])
def test_expansive_v_grows_as_the_closed_form(rho, layers):
    outcome = grow(rho, layers)
    assert outcome.confirmed and outcome.verdict == "certified"
    cert = outcome.certificate
    with mp.workdps(100):
        D = mp_diameters(mp_fraction(rho), mp_fraction(stated_lambda(cert)), int(layers))
        assert all(b > a for a, b in zip(D, D[1:]))
        assert inside(cert["values"]["D_T"], D[-1]) and inside(cert["values"]["growth"], D[-1] / D[0])
        assert inside(cert["values"]["smallest_step"], min(b / a for a, b in zip(D, D[1:])))
        # far from consensus: rho a D_0^2 >= 1, outside value.expansive's collapse regime
        assert mp_fraction(rho) * mp_fraction(stated_lambda(cert)) * 4 >= 1
    assert checker.verify(cert).ok


def test_expansive_v_below_the_threshold_collapses_and_is_refuted():
    """rho tanh(lambda) < 1 (rho = 2, lambda = 1/4): the diameter shrinks at the first layer, proven so."""
    outcome = grow("2", "3", lam="1/4")
    assert outcome.verdict == "refuted" and outcome.confirmed
    # the step proven not to grow, and nothing said of the layers after it, which are not evaluated
    assert outcome.summary[-1] == "  proven false: D(X_1) > D(X_0)", outcome.summary
    with ctx.workprec(outcome.certificate["precision"]):
        assert checked_expansive_v.evaluate(outcome.certificate["inputs"], {}).refuted == ["D(X_1) > D(X_0)"]
    with mp.workdps(50):
        D = mp_diameters(mp.mpf(2), mp.mpf(1) / 4, 3)
        assert D[1] < D[0]


def test_expansive_v_states_its_rho_and_layers():
    """The summary named lambda and the layers but not rho, and said "1 layers"."""
    assert grow("3/2", "1").summary[0].endswith("(V = rho I with rho = 3/2, A = lambda I, X = (e1, -e1), 1 layer)")
    assert grow("2", "4").summary[0].endswith("rho = 2, A = lambda I, X = (e1, -e1), 4 layers)")


def test_a_long_stack_needs_and_gets_more_precision():
    outcome = grow("3/2", "60")
    assert outcome.verdict == "certified" and outcome.certificate["precision"] > 512


@pytest.fixture(scope="module")
def grow_cert():
    return grow("2", "5").certificate


@pytest.mark.parametrize("edit", ["contracting V", "one layer less", "residual", "values"])
def test_an_edited_expansive_v_certificate_is_rejected(grow_cert, edit):
    cert = copy.deepcopy(grow_cert)
    layers = cert["inputs"]["config"]["layers"]
    if edit == "contracting V":
        layers[-1]["V"] = [["1/2", "0"], ["0", "1/2"]]
    elif edit == "one layer less":
        layers.pop()
    elif edit == "residual":
        layers[0]["residual"] = True
    else:
        cert["values"]["D_T"] = "[1e6 +/- 1]"
    assert not checker.verify(cert).ok


def rehash(cert: dict) -> dict:
    """The certificate with its digest recomputed, as a producer that edits its inputs on purpose would."""
    cert["inputs_sha256"] = checker.counterexample.digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    return cert


@pytest.mark.parametrize("build, honest", [(lambda: far("0.1"), "certified"), (lambda: far("1/2", lam="1/8"), "refuted"),
                                           (lambda: grow("2", "4"), "certified"), (lambda: grow("2", "3", lam="1/4"), "refuted")],
                         ids=["far certified", "far refuted", "grow certified", "grow refuted"])
def test_a_certificate_stating_another_verdict_than_its_inputs_give_is_rejected(build, honest):
    """The digest covers the inputs, not the verdict: a certified counterexample restated as refuted (or the
    reverse, or either as undecided) is re-derived and rejected, at the stated precision and the finer one."""
    cert = build().certificate
    assert cert["verdict"] == honest and checker.verify(cert).ok
    for forged in {"certified", "refuted", "undecided"} - {honest}:
        confirmation = checker.verify(dict(cert, verdict=forged))
        assert not confirmation.ok and f"the checker finds {honest}" in confirmation.message, (forged, confirmation)


def test_a_refutation_whose_hypotheses_fail_is_undecided_not_refuted():
    """Refuted means the inputs meet the counterexample's hypotheses and its inequality is proven false: with a
    second layer the inequality is still false (D' > q D after the first) but the configuration is not the one the
    claim is about, so the checker finds undecided and rejects a "refuted" that a producer re-hashed."""
    cert = copy.deepcopy(far("1/2", lam="1/8").certificate)
    layers = cert["inputs"]["config"]["layers"]
    layers.append(copy.deepcopy(layers[0]))
    confirmation = checker.verify(rehash(cert))
    assert not confirmation.ok and "the checker finds undecided (one residual layer" in confirmation.message, confirmation


def test_a_kind_that_cannot_refute_rejects_a_refuted_verdict():
    """Only the thesis's two witness-free counterexamples prove their checks false: wu-fig1's checks are on a
    witness (another might pass), so "refuted" there is always rejected."""
    cert = fig1.build(argparse.Namespace(w="2")).certificate
    assert cert["verdict"] == "certified"
    confirmation = checker.verify(dict(cert, verdict="refuted"))
    assert not confirmation.ok and "the checker finds certified" in confirmation.message, confirmation


# --- the command line, and the configurations as ordinary inputs ------------------------------

def test_cli_says_refuted_and_exits_3_and_verify_confirms(tmp_path, capsys):
    """Too small a lambda: "refuted" (the check proven false, not "undecided"), exit 3 as for any result that is
    not the counterexample (never 1: no claim is violated), and `certify verify` confirms the refutation."""
    out = tmp_path / "far.json"
    assert main(["counterexample", "residual-far", "--lam", "1/100", "--out", str(out)]) == 3
    printed = capsys.readouterr().out
    assert "verdict: refuted" in printed and "proven false: D(X') <= q D(X)" in printed and "not proven" not in printed
    assert main(["verify", str(out)]) == 0
    assert "confirmed: refuted" in capsys.readouterr().out
    assert main(["counterexample", "residual-far", "--lam", "1/100", "--json"]) == 3
    assert json.loads(capsys.readouterr().out)["verdict"] == "refuted"


def test_cli_certifies_and_verify_confirms(tmp_path, capsys):
    for name, options in (("residual-far", ["--q", "0.1"]), ("expansive-v", ["--rho", "2", "--layers", "4"])):
        out = tmp_path / f"{name}.json"
        assert main(["counterexample", name, *options, "--out", str(out)]) == 0
        assert "certified" in capsys.readouterr().out
        assert main(["verify", str(out)]) == 0
        cert = json.loads(out.read_text())
        cert["inputs"]["config"]["X"][0][0] = "2"
        out.write_text(json.dumps(cert))
        assert main(["verify", str(out)]) == 1


def test_more_layers_than_the_layers_limit_are_refused_before_a_certificate_is_written(tmp_path, capsys):
    """--layers 65 (the option allows 100) wrote a certificate `certify verify` refused (layers above its limit of
    64) and printed "certified (not certified)": it is bad input unless --limit layers=N raises the cap for both."""
    out = tmp_path / "grow.json"
    assert main(["counterexample", "expansive-v", "--layers", "65", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--limit layers=" in err[0] and not out.exists()
    assert main(["counterexample", "expansive-v", "--layers", "65", "--limit", "layers=65", "--out", str(out)]) == 0
    assert main(["verify", str(out), "--limit", "layers=65"]) == 0


def least_work_limit(cert: dict) -> int:
    """The checker's own estimate of a certificate's work: the least work limit under which it reads it."""
    low, high = 1, 1 << 62
    while low < high:
        middle = (low + high) // 2
        if certificate.checker_refusal(cert, dataclasses.replace(DEFAULT_LIMITS, work=middle)) is None:
            high = middle
        else:
            low = middle + 1
    return low


@pytest.mark.parametrize("name", sorted(counterexamples.REGISTRY))
def test_a_work_limit_no_certificate_fits_is_refused_before_any_work(tmp_path, name):
    """--limit work=1 ran the whole search and evaluation, wrote the certificate and exited 3 when the checker
    refused it; `check` and `verify` refuse such a limit before any work.  Now so does `counterexample`: exit 2,
    one line, no traceback and no certificate written (the checker prices the least certificate the run can
    write)."""
    out = tmp_path / "cert.json"
    run = subprocess.run([sys.executable, "-m", "certify", "counterexample", name, "--limit", "work=1", "--out",
                          str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    err = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(err) == 1, run.stderr
    assert "refused before starting" in err[0] and "--limit work=N" in err[0] and "Traceback" not in run.stderr
    assert not out.exists() and run.stdout == ""


@pytest.mark.parametrize("name", sorted(counterexamples.REGISTRY))
@pytest.mark.parametrize("limit", ["bytes=10", "nesting=1"])
def test_a_size_or_nesting_limit_no_certificate_fits_is_refused_before_any_work(tmp_path, capsys, name, limit):
    """--limit bytes=10 or nesting=1 ran the whole search and evaluation and then exited 3, the checker not
    confirming a certificate larger or deeper than the limit, where a work limit no certificate fits is refused
    before any work: the least certificate is measured as the checker reads a certificate's tree (exit 2, one
    line naming the limit, nothing written)."""
    out = tmp_path / "cert.json"
    assert main(["counterexample", name, "--limit", limit, "--out", str(out), "-q"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "refused before starting" in err[0], captured.err
    assert f"--limit {limit.split('=')[0]}=N" in err[0] and not out.exists() and captured.out == ""


def test_a_certificate_the_checker_refuses_is_not_raised_to_more_digits(monkeypatch):
    """A checker's refusal is final (every limit it prices grows with the digits): only a refusal of the certificate's
    text stopped the escalation, and one past the checker's work limit (a checker pricing it above the estimate that
    admitted the run) was built and checked again at each precision to the cap.  It stops at the first, refused."""
    confirm, stated = certificate.confirm, []

    def stricter(cert, _limits=DEFAULT_LIMITS, written=True):  # the checker's work limit below this certificate's price
        stated.append(cert["precision"])
        return confirm(cert, dataclasses.replace(DEFAULT_LIMITS, work=10), written)

    monkeypatch.setattr(certificate, "confirm", stricter)
    outcome = far()
    assert outcome.refused and not outcome.confirmed and "above the checker's limit of 10" in outcome.message, outcome
    assert stated == [configs.PRECISION_RANGE[0]], stated


def test_a_certificate_past_the_byte_limit_is_neither_confirmed_nor_written(tmp_path, capsys):
    """One byte below the size of the file it writes, the certificate was confirmed (by the checker's measure of a
    value's tree, an entry a byte, shorter than its text) and written, and `certify verify` with that limit refused
    the file (exit 2).  Confirmed as the text written, it is refused at once (more digits only lengthen it: no
    climb to a certificate of 80 kB) and not written; at its own size it is written and verified."""
    full = tmp_path / "full.json"
    assert main(["counterexample", "residual-far", "--q", "0.1", "--out", str(full)]) == 0
    size = full.stat().st_size
    below, at_size = tmp_path / "below.json", tmp_path / "at-size.json"
    capsys.readouterr()
    assert main(["counterexample", "residual-far", "--q", "0.1", "--limit", f"bytes={size - 1}", "--out", str(below)]) == 3
    printed = capsys.readouterr().out
    assert "--limit bytes=N" in printed and "no certificate written" in printed and not below.exists(), printed
    assert main(["counterexample", "residual-far", "--q", "0.1", "--limit", f"bytes={size}", "--out", str(at_size)]) == 0
    assert at_size.read_bytes() == full.read_bytes()
    assert main(["verify", str(at_size), "--limit", f"bytes={size}"]) == 0


@pytest.mark.parametrize("name, below", [("wu-fig1", 3), ("residual-far", 2), ("expansive-v", 2)])
def test_the_refusal_before_work_never_refuses_a_limit_the_certificate_fits(tmp_path, capsys, name, below):
    """At the checker's own estimate of the certificate a run writes, the run is admitted and confirmed (the least
    certificate priced before the run never costs more); one unit below it the checker refuses the certificate:
    after the run (exit 3) where the search finds what the least certificate leaves out (wu-fig1's trapping arc's
    pieces), before it (exit 2) where the certificate is the least one."""
    out = tmp_path / "cert.json"
    assert main(["counterexample", name, "--out", str(out)]) == 0
    work = least_work_limit(json.loads(out.read_text()))
    out.unlink()
    assert main(["counterexample", name, "--limit", f"work={work}", "--out", str(out)]) == 0 and out.exists()
    capsys.readouterr()
    assert main(["counterexample", name, "--limit", f"work={work - 1}"]) == below
    assert ("refused before starting" in capsys.readouterr().err) == (below == 2)


def test_a_counterexample_the_checker_does_not_confirm_reads_undecided_not_certified(tmp_path, capsys):
    """Under a work limit the checker refuses, the engine's "certified" was shown "certified (not certified)",
    which contradicts itself: it reads "undecided (not certified)", as `check` says undecided, exit 3 (a limit
    the least certificate fits, so that the run is admitted: one unit below its certificate's price)."""
    out = tmp_path / "fig1.json"
    assert main(["counterexample", "wu-fig1", "--out", str(out)]) == 0
    argv = ["counterexample", "wu-fig1", "--limit", f"work={least_work_limit(json.loads(out.read_text())) - 1}"]
    capsys.readouterr()
    assert main(argv) == 3
    out = capsys.readouterr().out
    assert "verdict: undecided (not certified)" in out and "certified (not certified)" not in out, out
    assert "the checker does not confirm the certificate: an estimated work" in out
    assert main(argv + ["--json"]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "undecided (not certified)" and data["confirmed"] is False
    assert main(["counterexample", "wu-fig1", "--json"]) == 0  # confirmed: the certificate's own word
    assert json.loads(capsys.readouterr().out)["verdict"] == "certified"


@pytest.mark.parametrize("argv, words", [
    (["residual-far", "--q", "0"], "positive"),
    (["residual-far", "--q", "-1"], "positive"),
    (["residual-far", "--q", "abc"], "not a number"),
    (["expansive-v", "--rho", "1"], "greater than 1"),
    (["expansive-v", "--layers", "0"], "between 1"),
    (["expansive-v", "--layers", "two"], "whole number"),
    (["expansive-v", "--rho", "2", "--lam", "-1"], ">= 0"),
])
def test_cli_bad_parameters_are_one_line_and_exit_2(argv, words, capsys):
    assert main(["counterexample", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_the_configurations_are_ordinary_check_inputs(tmp_path, far_cert, grow_cert):
    """A user's own counterexample is a config on which `certify check` decides the statement."""
    far_path, grow_path = tmp_path / "far.json", tmp_path / "grow.json"
    far_path.write_text(json.dumps(far_cert["inputs"]["config"]))
    grow_path.write_text(json.dumps(grow_cert["inputs"]["config"]))
    assert main(["check", str(far_path), "--bound", "0.1*D"]) == 0  # D' <= q D holds
    assert main(["check", str(far_path), "--bound", "0.09*D"]) == 1  # and not for q below the ratio
    assert main(["check", str(grow_path), "--bound", "D"]) == 1  # D' <= D violated: growth
    assert main(["check", str(grow_path), "--claim", "value.expansive"]) == 0  # the theorem still holds
    assert main(["check", str(far_path), "--claim", "residual.two_sided", "--max-prec", "128"]) == 3  # attained


@pytest.mark.parametrize("module", [residual_far, expansive_v])
def test_the_engine_evaluates_and_the_checker_only_confirms(module, monkeypatch):
    """The engine's evaluation is its own (certify.core formulas): a planted error in it reaches the
    certificate and the checker, which re-derives the values with its own code, refuses it."""
    from certify.engine import counterexamples

    inputs = far().certificate["inputs"] if module is residual_far else grow().certificate["inputs"]
    honest = counterexamples.certify_named(module.KIND, module.evaluate, inputs, lambda p: {}, lambda f, w: [],
                                           64, 128)
    assert honest.confirmed and honest.verdict == "certified"

    def planted(inputs, witness):
        found = module.evaluate(inputs, witness)
        name = next(iter(found.values))
        found.values[name] = found.values[name] * (1 + arb("1e-6"))  # a wrong enclosure, claims untouched
        return found

    forged = counterexamples.certify_named(module.KIND, planted, inputs, lambda p: {}, lambda f, w: [], 64, 128)
    assert forged.verdict == "certified" and not forged.confirmed and "does not match" in forged.message
