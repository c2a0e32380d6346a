"""A norm's witness refined past binary64 (certify.core.refine): a bound that needs a = ||A||_2 (or v = ||V||_2, or a
thin head's a) closer than binary64's 1e-16 is decided, and its certificate, which states the refined basis as exact
hex texts, is confirmed by `certify verify`; the enclosures hold mpmath's singular value and narrow with the
precision; repeated and zero singular values stay correct; a forged witness cannot make the checker confirm."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from flint import arb, arb_mat, ctx
from mpmath import mp

import certify_checker
from certify import engine
from certify.cli import main
from certify.core import refine, spectral
from certify.core.limits import Limits
from certify.engine import decide
from certify.search import campaign
from certify_checker import forward

ROOT = Path(__file__).resolve().parent.parent


def _small() -> dict:
    """The 8 x 4 configuration of the report: its two largest singular values 1.216 and 1.120."""
    rng = np.random.default_rng([1, 8, 4])
    X = rng.standard_normal((8, 4))
    return {"X": X.tolist(), "A": (rng.standard_normal((4, 4)) / 2).tolist()}


def _mp(rows) -> mp.matrix:
    return mp.matrix([[mp.mpf(x) for x in row] for row in rows])


def _largest_singular_value(M: mp.matrix):
    return mp.sqrt(max(mp.eigsy(M.T * M, eigvals_only=True)))


def _truth(config: dict, norm: str, digits: int = 80) -> tuple:
    """(D_out, the norm) of a one-layer configuration in mpmath at `digits` digits: scores X A X^T (or a head's
    beta (X W_Q)(X W_K)^T / sqrt(d_k)), P their softmax by rows, the output P X (V^T), its diameter; norm "a" is
    ||A||_2 (a head's |beta| ||W_Q W_K^T||_2 / sqrt(d_k)), "v" ||V||_2."""
    with mp.workdps(digits):
        X = _mp(config["X"])
        n = X.rows
        if "A" in config:
            A = _mp(config["A"])
        else:
            A = _mp(config["W_Q"]) * _mp(config["W_K"]).T * mp.mpf(config.get("beta", 1)) / mp.sqrt(config["d_k"])
        S = X * A * X.T
        P = mp.matrix(n, n)
        for i in range(n):
            top = max(S[i, j] for j in range(n))
            weights = [mp.exp(S[i, j] - top) for j in range(n)]
            for j in range(n):
                P[i, j] = weights[j] / sum(weights)
        Y = P * X * (_mp(config["V"]).T if "V" in config else 1)
        D = max(mp.norm(Y[i, :] - Y[k, :]) for i in range(n) for k in range(i + 1, n))
        value = _largest_singular_value(A if norm == "a" else _mp(config["V"]))
        return +D, +value


def _bound(config: dict, norm: str, r: str, sign: int) -> str:
    """C * norm with C = D_out / norm * (1 + sign r): it holds for sign +1 and is violated for -1, by r relative."""
    D, value = _truth(config, norm, 150)
    with mp.workdps(150):
        return f"{mp.nstr(D / value * (1 + sign * mp.mpf(r)), 140)}*{norm}"  # 140 digits: r >= 1e-120 is kept


def _verify(path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "certify", "verify", str(path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def _decided(tmp_path, config: dict, norm: str, r: str, capsys) -> list[dict]:
    """The certificates of C * norm at r above and below the truth (holds, violated), each confirmed by
    `certify verify` as a command."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    certificates = []
    for sign, verdict, code in ((1, "holds", 0), (-1, "violated", 1)):
        out = tmp_path / f"{verdict}.json"
        bound = _bound(config, norm, r, sign)
        assert main(["check", str(path), "--bound", bound, "--max-prec", "1024", "--out", str(out)]) == code, (
            capsys.readouterr())
        cert = json.loads(out.read_text())
        assert cert["verdict"] == verdict and cert["precision"] > 53
        done = _verify(out)
        assert done.returncode == 0 and done.stdout.startswith(f"OK: confirmed: {verdict}"), done.stdout + done.stderr
        certificates.append(cert)
    return certificates


def _refined_texts(witness: dict, precision: int) -> None:
    """Every entry of a stated witness is an exact hex text of at most `precision` bits of mantissa."""
    for entry in [x for row in witness["basis"] for x in row] + witness["top"]:
        assert isinstance(entry, str) and "0x" in entry, entry
        assert int(entry.split("0x")[1].split("p")[0], 16).bit_length() <= precision, entry


@pytest.mark.parametrize("r", ["1e-18", "1e-25"])
def test_the_report_s_bound_on_a_is_decided_both_ways_and_confirmed(tmp_path, capsys, r):
    """D_out <= C a with C = D_out / a (1 +- r): the binary64 witness left a 1e-16 wide (the violated side undecided
    from r = 1e-16, the holding one at 1e-25 from a's lower end), "the two sides agree to 1024 bits"."""
    for cert in _decided(tmp_path, _small(), "a", r, capsys):
        _refined_texts(cert["witness"]["A0"], cert["precision"])


def test_a_thin_head_s_a_and_a_value_matrix_s_v_are_decided_past_binary64(tmp_path, capsys):
    rng = np.random.default_rng(7)
    X = rng.standard_normal((6, 5))
    head = {"X": X.tolist(), "W_Q": (rng.standard_normal((5, 2)) / 2).tolist(),
            "W_K": (rng.standard_normal((5, 2)) / 2).tolist(), "d_k": 2}
    for cert in _decided(tmp_path, head, "a", "1e-25", capsys):
        assert len(cert["witness"]["A0"]["basis"]) == 2  # the d_k x d_k witness of the thin route, refined
        _refined_texts(cert["witness"]["A0"], cert["precision"])
    head["W_K"] = [[x, 0.0] for x, _ in head["W_K"]]  # a zero column: R^T R singular, the d x d route
    for cert in _decided(tmp_path, head, "a", "1e-25", capsys):
        assert len(cert["witness"]["A0"]["basis"]) == 5
        _refined_texts(cert["witness"]["A0"], cert["precision"])
    value = {"X": X.tolist(), "A": (rng.standard_normal((5, 5)) / 3).tolist(),
             "V": rng.standard_normal((5, 5)).tolist()}
    for cert in _decided(tmp_path, value, "v", "1e-25", capsys):
        _refined_texts(cert["witness"]["V0"], cert["precision"])


def _rotated(diagonal, seed: int) -> list:
    """Q diag Q^T in binary64 for a random orthogonal Q."""
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(diagonal), len(diagonal))))[0]
    return (Q @ np.diag(diagonal) @ Q.T).tolist()


SPECIAL = {
    "a multiple of the identity": (0.7 * np.eye(4)).tolist(),
    "a repeated largest singular value": _rotated([1.5, 1.5, 0.8, 0.3], 3),
    "rank 2 of 4": (np.outer([1.0, -0.5, 0.25, 2.0], [0.3, 0.1, -1.0, 0.5])
                    + np.outer([0.2, 1.0, -0.7, 0.1], [1.0, -0.4, 0.2, 0.6])).tolist(),
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_repeated_and_zero_singular_values_give_correct_confirmed_verdicts(tmp_path, capsys, name):
    """The iteration neither crashes nor loops on a cluster (it orthogonalises it, or keeps the witness it had)."""
    config = {"X": np.random.default_rng(5).standard_normal((6, 4)).tolist(), "A": SPECIAL[name]}
    _decided(tmp_path, config, "a", "1e-25", capsys)


MATRICES = {"4 x 4": _small()["A"], "wide 3 x 6": np.random.default_rng(2).standard_normal((3, 6)).tolist(),
            "tall 7 x 5": np.random.default_rng(4).standard_normal((7, 5)).tolist(), **SPECIAL}


@pytest.mark.parametrize("name", list(MATRICES))
@pytest.mark.parametrize("precision", [256, 1024])
def test_refined_enclosures_hold_the_singular_value_and_narrow_with_the_precision(name, precision):
    rows = MATRICES[name]
    with mp.workdps(1000), ctx.workprec(3400):
        truth = _largest_singular_value(_mp(rows))
        exact = arb(mp.nstr(truth, 1000))
    A = np.array(rows)
    with ctx.workprec(precision):
        M = arb_mat(rows)
        found = spectral.witness(A)
        plain = spectral.enclose(M, found)
        with refine.refining(precision):
            witness = refine.refined(M, found)
        ball = spectral.enclose(M, witness)
    with ctx.workprec(3400):
        assert ball.contains(exact) and plain.contains(exact), (name, ball, truth)
        width = (ball.upper() - ball.lower()) / exact
        assert width < arb(2) ** (20 - precision) or ball.rad() == 0, (name, width)
        if name != "a multiple of the identity":  # binary64's own witness is exact there
            assert witness.refined is not None and (plain.upper() - plain.lower()) / exact > arb(2) ** -80


# A binary64 SVD's basis of "rank 2 of 4" (its rank-2 matrix has binary64 singular values 3e-16 and 9e-17 beside
# 2.7 and 1.5), as one LAPACK gives it: the iteration split that tiny pair barely past delta and lost its
# orthogonality twice (refine._apart), so the enclosure at 256 bits stayed 1e-64 wide.  Stated here, not drawn from
# numpy, so that the case does not depend on which basis of the null space a LAPACK returns.
SPLIT_LATE = [[-0.28772875996782415, -0.7496805345323946, 0.583636376244786, 0.12066415024544708],
              [-0.07221392959000178, 0.35572440722892174, 0.234904158363406, 0.9017013534748534],
              [0.8449258825144308, -0.4190421297288495, -0.17955508460549413, 0.27975689117845554],
              [-0.4450815230019759, -0.36856876665985344, -0.756272826630541, 0.3067750215146722]]


@pytest.mark.parametrize("precision", [256, 1024])
def test_a_tiny_pair_below_the_top_split_late_does_not_stall_the_refinement(precision):
    rows = SPECIAL["rank 2 of 4"]
    with mp.workdps(1000), ctx.workprec(3400):
        exact = arb(mp.nstr(_largest_singular_value(_mp(rows)), 1000))
    basis = np.array(SPLIT_LATE)
    start = spectral.NormWitness(basis=basis, top=basis[:, 0].copy())
    with ctx.workprec(precision):
        M = arb_mat(rows)
        with refine.refining(precision):
            ball = spectral.enclose(M, refine.refined(M, start))
    with ctx.workprec(3400):
        assert ball.contains(exact)
        assert (ball.upper() - ball.lower()) / exact < arb(2) ** (20 - precision)


def test_a_forged_refined_witness_neither_moves_the_norm_nor_confirms_a_wrong_verdict(tmp_path, capsys):
    """The checker's rules are rigorous whatever the witness: a top vector and basis changed in the certificate give an
    enclosure that still holds the true a, and a certificate stating holds for a violated bound is not confirmed."""
    config = _small()
    _, cert = _decided(tmp_path, config, "a", "1e-25", capsys)
    with mp.workdps(1000), ctx.workprec(3400):
        exact = arb(mp.nstr(_truth(config, "a", 1000)[1], 1000))
    forged = copy.deepcopy(cert)
    witness = forged["witness"]["A0"]
    witness["top"] = [f"0x{(int(i == 1) + 3) << 60:x}p-60" for i in range(4)]  # another vector, not A's top
    witness["basis"][0][0] = witness["basis"][0][0] + "1"  # an entry 16 times its value and a digit
    with ctx.workprec(cert["precision"]):
        ball = forward.spectral_norm(forward.matrix_mat(config["A"]), witness)
    with ctx.workprec(3400):
        assert ball.contains(exact), ball
    # D_out > C a: stating holds (with the forged witness, and the comparison's outcome) is rejected
    forged["verdict"] = "holds"
    for comparison in forged["values"]["comparisons"]:
        comparison["holds"] = True
    assert not certify_checker.verify(forged).ok
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged))
    assert _verify(path).returncode == 1


def test_a_side_far_wider_than_the_precision_is_named_not_called_an_agreement():
    """The reason of an undecided check names a side with fewer bits than half the precision, with its accuracy: a
    witness the certificate's share of a small bytes limit keeps to 128 bits leaves a some 120 bits at 1024, which
    a bound 1e-100 from the truth needs more of (it said "the two sides agree to 1024 bits")."""
    config = _small()
    limits = Limits(bytes=20_000)
    bound = _bound(config, "a", "1e-100", -1)
    result = engine.check(config, bound=bound, max_prec=1024, limits=limits)
    assert result.verdict == engine.UNDECIDED and result.precision == 1024, result
    wide = result.comparisons[0].rhs.rel_accuracy_bits()
    assert 100 < wide < 512, wide
    assert result.reason.startswith(f"the enclosure of {bound} is still wide at 1024 bits ({wide} bits of relative "
                                    "accuracy)"), result.reason
    # the same at the default limits: refined to 1024 bits, decided
    assert engine.check(config, bound=bound, max_prec=1024).verdict == engine.VIOLATED


def test_two_sides_resolved_to_the_precision_still_read_as_agreeing():
    with ctx.workprec(1024):
        third = arb(1) / 3
        close = decide.Comparison(0, "lhs", "rhs", third, third + arb(0, arb(2) ** -1000), None)
        wide = decide.Comparison(0, "lhs", "rhs", third, third + arb(0, arb(2) ** -60), None)
        assert decide._equality_reason([close], 1024).startswith("the two sides agree to 1024 bits")
        assert decide._equality_reason([wide], 1024).startswith("the enclosure of rhs is still wide at 1024 bits (")


def test_a_bound_of_exactly_0_beside_an_enclosure_of_0_is_called_an_equality_at_0_not_a_wide_side():
    """A = 0 maps every token to their mean: D_out = [0 +/- r] (an inexact 0) beside a bound of exactly 0 (a = 0) was
    reported as "the enclosure of D_out is still wide (its radius exceeds its value) ... the bound may magnify the
    width of an input", which nothing here does."""
    config = {"X": [[1, 0], [0, 1], [-1, 0.5]], "A": [[0, 0], [0, 0]]}
    result = engine.check(config, max_prec=256)
    assert result.verdict == engine.UNDECIDED and result.comparisons[0].lhs.contains(0), result
    assert result.reason.startswith("(1 - exp(-a*D**2))*D is exactly 0 and the enclosure of D_out holds 0 at 256 "
                                    "bits: either D_out is exactly 0 too (an equality"), result.reason
    assert campaign.reason_kind(result.reason).startswith("a bound of exactly 0 beside a side enclosing 0")
    with ctx.workprec(256):  # a wide side beside a bound of 0: how far above 0 it may be
        wide = decide.Comparison(0, "lhs", "rhs", arb(1, 2), arb(0), None)
        assert "or it is above 0 by at most 3.00 (" in decide._equality_reason([wide], 256)

