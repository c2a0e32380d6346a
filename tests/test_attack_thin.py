"""`certify attack --d-k K`: the search over thin heads, W_Q and W_K of d x K (A = W_Q W_K^T / sqrt(K)).

A planted violation is found, certified and shrunk in the W_Q, W_K form, and `certify verify` and `certify check`
accept what is written; a true claim is not reported violated; the points are built at a D^2 = L with the
thin head's a; an interrupted thin attack (Ctrl-C, SIGTERM) resumes to the uninterrupted search without
computing a journaled evaluation again; another K on the folder, and a bad K, are refused in one line.
"""

from __future__ import annotations

import json
import math
import shlex
import signal

import numpy as np
import pytest
from flint import arb

from certify import claims, engine
from certify.cli import main
from certify.core import config, numbers
from certify.core.arith import BALL, FLOAT64
from certify.engine import certificate
from certify.errors import BadInput
from certify.search import attack, attack_folder, objective
from certify_checker import Confirmation

import signalled
from test_attack_resume import Evaluations, journal_lines, same_search

# D(PX) <= tanh(a D^2 / 4) D for pure attention, and tanh(L/4) <= exp(-L/4) exactly when L <= L_STAR: the
# bound below holds for every configuration with a D^2 <= L_STAR and fails on many with a larger a
PLANTED = "exp(-a*D**2/4)*D"
L_STAR = -4 * math.log(0.5436890126920764)  # t = exp(-L/4) solves t^3 + t^2 + t = 1
N, D, K = 3, 3, 2
SEARCH = dict(bound=PLANTED, n=N, d=D, d_k=K, seed=1, budget=300)
ARGV = ["attack", "--bound", PLANTED, "--n", str(N), "--d", str(D), "--d-k", str(K), "--seed", "1",
        "--budget", "300"]


def thin(layer: dict, d: int = D, k: int = K) -> bool:
    """Whether a layer of a configuration file is a thin head of d x k, in the W_Q, W_K, d_k form only."""
    return ("A" not in layer and layer["d_k"] == k and np.shape(layer["W_Q"]) == (d, k)
            and np.shape(layer["W_K"]) == (d, k))


@pytest.fixture(scope="module")
def uninterrupted():
    return attack.attack(**SEARCH)


def test_the_threshold_of_the_planted_bound():
    t = math.exp(-L_STAR / 4)
    assert abs(t**3 + t**2 + t - 1) < 1e-15 and abs(math.tanh(L_STAR / 4) - t) < 1e-15


def test_a_planted_violation_is_found_certified_and_verified_in_the_thin_form(tmp_path, capsys):
    out = tmp_path / "a"
    assert main(ARGV + ["--out", str(out), "-q"]) == 1
    printed = capsys.readouterr().out
    assert f"thin heads W_Q, W_K of {D} x {K}" in printed and "VIOLATED" in printed and "W_Q = [[" in printed
    written = json.loads((out / "counterexample.json").read_text())
    assert all(thin(layer) for layer in written["layers"])
    for name in ("best.json", "tightest.json"):
        assert all(thin(layer) for layer in json.loads((out / name).read_text())["layers"])
    cert = json.loads((out / "certificate.json").read_text())
    assert cert["verdict"] == engine.VIOLATED and cert["inputs"] == written
    # a through the K x K reduction when W_K has rank K (its Cholesky factor exists), else through A itself:
    # the search now starts near the extremal head W_Q = W_K = u e_1^T, and the shrinker may keep it of rank 1
    W_K = np.array([[float(numbers.parse_number(x)) for x in row] for row in written["layers"][0]["W_K"]])
    reduced = np.linalg.matrix_rank(W_K) == K
    assert np.shape(cert["witness"]["A0"]["basis"]) == ((K, K) if reduced else (D, D))
    # the violation needs a large a: its certified a D^2 is beyond L_STAR
    layer = cert["values"]["layers"][0]
    a, diameter = (arb(layer[key]) for key in ("a", "D"))
    assert a * diameter * diameter > L_STAR
    assert main(["verify", str(out / "certificate.json")]) == 0
    assert main(["check", str(out / "counterexample.json"), "--bound", PLANTED]) == 1
    # the sharp bound is never violated by it: it holds, or (exit 3) the counterexample is its equality case, two
    # antipodal tokens along the head's direction, which the search now starts near and ball arithmetic cannot decide
    assert main(["check", str(out / "counterexample.json"), "--bound", "tanh(a*D**2/4)*D"]) in (0, 3)


def test_the_counterexample_is_confirmed_by_the_checker_before_it_is_reported(monkeypatch, uninterrupted):
    """The reported certificate is one the checker confirmed; a checker that confirms nothing leaves the same
    search with no violation to report (its finalists undecided), whatever the search believes."""
    confirmed, real = [], certificate.confirm

    def recording(cert, *args, **kwargs):
        confirmation = real(cert, *args, **kwargs)
        if confirmation.ok:
            confirmed.append(cert)
        return confirmation

    with monkeypatch.context() as patch:
        patch.setattr(certificate, "confirm", recording)
        report = attack.attack(**SEARCH)
    assert report.violated and report.counterexample.result.certificate in confirmed
    assert report.to_json()["counterexample"] == uninterrupted.to_json()["counterexample"]
    monkeypatch.setattr(certificate, "confirm", lambda cert, *args, **kwargs: Confirmation(False, "rejected"))
    refused = attack.attack(**SEARCH)
    assert refused.best.score == uninterrupted.best.score > 0  # the search saw the same violation
    assert not refused.violated and refused.exit_code == 0 and refused.finalists
    assert all(f["verdict"] == engine.UNDECIDED and "did not confirm" in f["reason"] for f in refused.finalists)


def test_a_true_claim_is_not_reported_violated():
    report = attack.attack("collapse.global", n=N, d=D, d_k=K, seed=2, budget=300)
    assert not report.violated and report.exit_code == 0 and report.best.score < 0
    assert report.to_json()["d_k"] == K
    # no thin head beats two antipodal tokens either (tau <= tanh(a D^2 / 4) for every A)
    assert all(b.exponent is None or b.exponent.exponent <= attack.antipodal_exponent(b.exponent.L) + 1e-9
               for b in report.bands)


@pytest.mark.parametrize("layers, with_v", [(1, False), (2, False), (2, True)])
def test_points_are_thin_heads_at_a_D2_equal_to_L(layers, with_v):
    """The search's point is W_Q, W_K of every layer (2 d K entries each) and its L is a D^2 of the layer built
    from it, a from the K x K reduction: the arrays scale A through both factors."""
    layout = objective.Layout(N, D, with_v=with_v, layers=layers, d_k=K)
    assert layout.size == N * D + 2 * D * K * layers + D * D * (layers if with_v else 0)
    shape = layout.random_shape(np.random.default_rng(4))
    for L in (0.1, 7.0, 300.0):
        X, heads, Vs = layout.arrays(shape, L)
        case = layout.case(X, heads, Vs)
        assert all(thin(layer) for layer in config.to_json(case)["layers"])
        for t, layer in enumerate(case.layers):
            A = np.array(layer.W_Q, dtype=float) @ np.array(layer.W_K, dtype=float).T / math.sqrt(K)
            assert np.allclose(A, layout.head.matrix(heads[t]), rtol=1e-14, atol=1e-300)
        views, _ = engine.evaluate(BALL, case, claims.get("collapse.global"), {})
        first = views[0]
        assert abs(float((first.get("a") * first.get("D") ** 2).mid()) / L - 1) < 1e-12
        float_views, _ = engine.evaluate(FLOAT64, case, claims.get("collapse.global"), {})
        assert abs(float(float_views[0].get("D")) - 1) < 1e-12


@pytest.mark.parametrize("stop_after", [1, 90])
def test_an_interrupted_thin_attack_resumes_without_losing_or_repeating(tmp_path, monkeypatch, uninterrupted,
                                                                        stop_after):
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=stop_after)
        stopped = attack.attack(**SEARCH, out=tmp_path, interruptible=True)
    assert stopped.interrupted and stopped.evaluations == stop_after
    assert len(journal_lines(tmp_path)) == stop_after
    counted = Evaluations(monkeypatch)
    resumed = attack.attack(**SEARCH, out=tmp_path)
    assert resumed.replayed == stop_after and counted.calls == uninterrupted.evaluations - stop_after
    same_search(resumed, uninterrupted)
    assert resumed.violated and len(journal_lines(tmp_path)) == uninterrupted.evaluations


def test_sigterm_stops_a_thin_attack_and_the_command_again_resumes_it(tmp_path, monkeypatch, uninterrupted):
    out, done = tmp_path / "a", 70
    argv = ARGV + ["--out", str(out)]
    process = signalled.start(argv, at=("certify.search.objective", "evaluate", done + 1, signal.SIGTERM))
    code, _, err = signalled.finish(process)
    line = signalled.interruption_line(err, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM and f"the search stopped early after {done} evaluations" in line
    assert line.endswith("; continue with: " + shlex.join(["certify", *argv]))
    assert json.loads((out / attack_folder.PARAMETERS).read_text())["d_k"] == K
    counted = Evaluations(monkeypatch)
    assert main(argv + ["-q"]) == 1
    assert counted.calls == uninterrupted.evaluations - done
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replayed"] == done and summary["d_k"] == K and summary["violated"]
    assert main(["verify", str(out / "certificate.json")]) == 0


def test_another_d_k_on_the_folder_is_refused_in_one_line_and_changes_nothing(tmp_path, capsys):
    thin_folder, full_folder = tmp_path / "thin", tmp_path / "full"
    small = ["attack", "--bound", PLANTED, "--n", "2", "--d", str(D), "--budget", "60", "-q"]
    assert main(small + ["--d-k", "2", "--out", str(thin_folder)]) in (0, 1)
    assert main(small + ["--out", str(full_folder)]) in (0, 1)
    assert "d_k" not in json.loads((full_folder / attack_folder.PARAMETERS).read_text())  # as before --d-k
    for folder, other in ((thin_folder, ["--d-k", "1"]), (thin_folder, []), (full_folder, ["--d-k", "2"])):
        before = {path.name: path.read_bytes() for path in folder.iterdir()}
        capsys.readouterr()
        assert main(small + other + ["--out", str(folder)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "holds another attack (different --d-k)" in err, err
        assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    capsys.readouterr()
    assert main(small + ["--d-k", "2", "--out", str(thin_folder)]) in (0, 1)  # the same attack: resumed
    assert json.loads((thin_folder / "summary.json").read_text())["replayed"] == 60


@pytest.mark.parametrize("d, k, message", [
    (3, "0", "--d-k must be between 1 and d - 1 = 2 (a thin head), got 0"),
    (3, "3", "--d-k must be between 1 and d - 1 = 2 (a thin head), got 3"),
    (3, "7", "--d-k must be between 1 and d - 1 = 2 (a thin head), got 7"),
    (3, "-1", "--d-k must be between 1 and d - 1 = 2 (a thin head), got -1"),
    (1, "1", "--d-k needs d >= 2"),
    (3, "1.5", "argument --d-k: invalid integer value: '1.5' is not an integer"),
    (3, "two", "argument --d-k: invalid integer value: 'two'"),
])
def test_a_bad_d_k_is_one_line_and_exit_2_before_any_work(tmp_path, monkeypatch, capsys, d, k, message):
    counted = Evaluations(monkeypatch)
    out = tmp_path / "a"
    assert main(["attack", "--n", "2", "--d", str(d), "--d-k", k, "--budget", "60", "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and message in captured.err, captured.err
    assert counted.calls == 0 and not out.exists()


@pytest.mark.parametrize("d_k", [0, 3, 1.5, "1", True])
def test_the_python_api_refuses_a_bad_d_k(d_k):
    with pytest.raises(BadInput, match="^d_k= "):
        attack.attack(n=2, d=3, d_k=d_k, budget=60)


def test_the_help_names_the_option(capsys):
    with pytest.raises(SystemExit):
        main(["attack", "--help"])
    assert "--d-k K" in capsys.readouterr().out
