"""Sampling campaigns (`certify sample`): reproducible distributions, rigorous verdicts at volume,
float64's mistakes counted correctly, and resuming without losing or repeating a configuration."""

from __future__ import annotations

import html
import json
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from mpmath import mp

from certify import claims, engine
from certify.search import campaign
import certify_checker as checker
from certify.core import config, expr, jsonfile, numbers
from certify.cli import main
from certify.errors import BadInput
from certify.search import float_screen, samplers

import oracle
import signalled

PLANTED = "(1-exp(-a*D**2/8))*D"  # false: D(PX) = D tanh(a D^2 / 4) for two antipodal tokens
SATURATED = campaign.Campaign("log-L", 4, 3, 40, 1, bound=PLANTED, L_range=(40.0, 2000.0))


@pytest.fixture(scope="module")
def saturated(tmp_path_factory):
    out = tmp_path_factory.mktemp("saturated")
    return out, campaign.run(SATURATED, out, workers=1), campaign.records(out)


# --- distributions ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(samplers.DISTRIBUTIONS))
def test_configuration_i_is_a_pure_function_of_the_campaign_and_i(name):
    L_range = samplers.validate(name, 5, 4, None, None, campaign.OPTIONS.option)
    first, again = (samplers.sample(name, 5, 4, 3, 7, L_range) for _ in range(2))
    assert first.config == again.config and np.array_equal(first.A, again.A)
    assert samplers.sample(name, 5, 4, 3, 8, L_range).config["X"] != first.config["X"]
    assert samplers.sample(name, 5, 4, 4, 7, L_range).config["X"] != first.config["X"]
    case = config.load(first.config)
    assert (case.n, case.d) == (5, 4) and case.layers[0].is_pure_attention
    # the configuration holds exactly the binary64 values the float64 screen uses
    assert all(float(v) == x for row, xrow in zip(case.X, first.X) for v, x in zip(row, xrow))


def test_layernorm_tokens_have_norm_sqrt_d_and_bert_weights_are_small():
    s = samplers.sample("layernorm-bert", 6, 8, 0, 0)
    assert np.allclose(np.linalg.norm(s.X, axis=1), math.sqrt(8))
    assert np.allclose(s.X.mean(axis=1), 0, atol=1e-12)
    W_Q = np.array(s.config["W_Q"])
    assert W_Q.shape == (8, 4) and 0.005 < W_Q.std() < 0.05


def test_L_range_sets_a_D2_log_uniformly():
    L_range = (1e-3, 1e3)
    Ls = [samplers.float64_L(s.X, s.A) for s in (samplers.sample("gaussian", 4, 3, 5, i, L_range) for i in range(300))]
    assert all(1e-3 * (1 - 1e-9) <= L <= 1e3 * (1 + 1e-9) for L in Ls)
    logs = np.log10(Ls)
    # log-uniform on [-3, 3]: each third of the range gets about a third of the draws
    thirds = np.histogram(logs, bins=[-3, -1, 1, 3])[0]
    assert all(60 <= k <= 140 for k in thirds)
    # and the rigorous a D^2 agrees with the drawn one
    s = samplers.sample("gaussian", 4, 3, 5, 0, L_range)
    with mp.workdps(60):
        q = oracle.quantities(s.config)[0]
        assert abs(q["a"] * q["D"] ** 2 / mp.mpf(s.L_target) - 1) < 1e-12


def test_batched_float64_screen_agrees_with_an_independent_mpmath_evaluation():
    samples = [samplers.sample("gaussian", 5, 3, 2, i) for i in range(6)]
    q = float_screen.layer_quantities(np.stack([s.X for s in samples]), np.stack([s.A for s in samples]))
    configs = [s.config for s in samples]
    (lhs, rhs), = float_screen.chunk_sides(claims.get("collapse.global"), True, configs, q)
    for k, s in enumerate(samples):
        exact = oracle.quantities(s.config)[0]
        for name in ("D", "D_out", "tau", "a"):
            assert abs(q[name][k] / float(exact[name]) - 1) < 1e-12, name
        bound = (1 - mp.exp(-exact["a"] * exact["D"] ** 2)) * exact["D"]
        assert abs(rhs[k] / float(bound) - 1) < 1e-12 and lhs[k] == q["D_out"][k]


def test_a_callers_numpy_error_setting_stops_no_campaign(tmp_path):
    """With np.seterr(all="raise") in the caller (a habit for catching NaNs), a campaign of large L = a D^2 failed
    with FloatingPointError from its float64 screen, whose exp(-L) underflows to 0 as it is meant to show."""
    spec = campaign.Campaign("log-L", 3, 2, 4, 1, L_range=(800.0, 2000.0))
    expected = campaign.run(spec, tmp_path / "plain", workers=1)["counts"]
    with np.errstate(all="raise"):
        assert campaign.run(spec, tmp_path / "raising", workers=1)["counts"] == expected


# --- verdicts --------------------------------------------------------------------------------


def test_planted_false_bound_is_found_violated_and_certified(saturated):
    out, summary, decided = saturated
    violated = [r for r in decided if r["verdict"] == engine.VIOLATED]
    assert violated and summary["counts"]["violated"] == len(violated)
    for record in violated:
        cert = json.loads((out / record["certificate"]).read_text())
        confirmation = checker.verify(cert)
        assert confirmation.ok and cert["verdict"] == engine.VIOLATED and cert["bound"] == expr.parse(PLANTED).text  # stored canonical
        # independently, at 60 digits: D(PX) exceeds the planted bound
        exact = oracle.quantities(SATURATED.sample(record["i"]).config)[0]
        with mp.workdps(60):
            assert exact["D_out"] > (1 - mp.exp(-exact["a"] * exact["D"] ** 2 / 8)) * exact["D"]
    assert set(summary["certificates"]["paths"]) >= {r["certificate"] for r in violated}


def test_the_theorem_is_never_reported_violated(tmp_path):
    for name in samplers.DISTRIBUTIONS:
        summary = campaign.run(campaign.Campaign(name, 4, 3, 25, 11), tmp_path / name, workers=1)
        assert summary["counts"] == {"holds": 25, "violated": 0, "undecided": 0}, name
        assert summary["largest_ratio"]["ratio"] <= 1


def test_float64_mistakes_are_counted_on_a_saturated_distribution(saturated):
    out, summary, decided = saturated
    wrong, equal_but_decided, bound_is_D = 0, 0, 0
    for record in decided:
        s = SATURATED.sample(record["i"])
        # plain float64, written here: the layer, a D^2, and the planted bound
        X, A = s.X, s.A
        S = X @ A @ X.T
        P = np.exp(S - S.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        D = max(np.linalg.norm(x - y) for x in X for y in X)
        D_out = max(np.linalg.norm(x - y) for x in P @ X for y in P @ X)
        a = np.linalg.norm(A, 2)
        float_says = engine.HOLDS if D_out <= (1 - np.exp(-a * D * D / 8)) * D else engine.VIOLATED
        wrong += float_says != record["verdict"]
        equal_but_decided += record["float64_equal"] and record["verdict"] != engine.UNDECIDED
        bound_is_D += 1 - np.exp(-a * D * D) == 1
        assert record["float64"] == float_says
    assert summary["float64"]["wrong"] == wrong > 0
    assert summary["float64"]["bound_is_D"] == bound_is_D == len(decided)  # every L >= 40 > 37.43
    assert equal_but_decided > 0 and summary["float64"]["equal_sides"] >= equal_but_decided
    assert summary["float64"]["says_decided_but_undecided"] == 0


def test_undecided_equalities_are_reported_with_their_reason(tmp_path):
    # n = 2 makes D(PX) = tau(P) D(X) exact: ball arithmetic cannot decide it
    spec = campaign.Campaign("gaussian", 2, 2, 6, 0, claim="collapse.dobrushin", max_prec=256)
    summary = campaign.run(spec, tmp_path, workers=1)
    assert summary["counts"] == {"holds": 0, "violated": 0, "undecided": 6}
    assert summary["float64"]["says_decided_but_undecided"] == 6 and summary["float64"]["wrong"] == 0
    (reason,) = summary["undecided_reasons"]
    assert "agree" in reason
    saved = json.loads((tmp_path / "undecided" / "000000003.json").read_text())
    assert engine.check(saved, claim="collapse.dobrushin", max_prec=128).verdict == engine.UNDECIDED


# --- resuming --------------------------------------------------------------------------------

RESUMED = campaign.Campaign("heavy-tailed", 4, 3, 60, 2, bound="(1-exp(-a*D**2))*D/2")


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("uninterrupted")
    summary = campaign.run(RESUMED, out, workers=1)
    assert summary["counts"]["violated"] and summary["counts"]["holds"]  # both kinds of certificate
    return out, summary


def _files(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.json"))
            if p.parent.name in ("certificates", "undecided")}


def _assert_same_as_uninterrupted(out, uninterrupted):
    reference, summary = uninterrupted
    lines = [line for p in (out / "chunks").glob("*.jsonl") for line in p.read_text().splitlines()]
    indices = [json.loads(line)["i"] for line in lines]
    assert sorted(indices) == list(range(RESUMED.count))  # every index once: none lost, none twice
    assert campaign.records(out) == campaign.records(reference)
    assert _files(out) == _files(reference)
    resumed = campaign.summarize(RESUMED.validated(), campaign.records(out))
    assert resumed == {k: v for k, v in summary.items() if k != "run"}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stopped_campaign_resumes_to_the_uninterrupted_result(tmp_path, uninterrupted, workers):
    partial = campaign.run(RESUMED, tmp_path, workers=workers, stop_after=5)
    assert not partial["complete"] and 5 <= partial["decided"] < RESUMED.count
    done = {r["i"] for r in campaign.records(tmp_path)}
    partial_again = campaign.run(RESUMED, tmp_path, workers=workers, stop_after=5)
    assert {r["i"] for r in campaign.records(tmp_path)} > done and partial_again["run"]["decided"] >= 5
    final = campaign.run(RESUMED, tmp_path, workers=workers)
    assert final["complete"] and final["run"]["decided"] == RESUMED.count - partial_again["decided"]
    _assert_same_as_uninterrupted(tmp_path, uninterrupted)
    assert campaign.run(RESUMED, tmp_path, workers=workers)["run"]["decided"] == 0  # nothing left


def _start(out, workers):
    code = "import sys; from certify.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "sample", "--distribution", RESUMED.distribution, "--bound", RESUMED.bound,
            "--n", str(RESUMED.n), "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed),
            "--out", str(out), "--workers", str(workers), "--no-progress"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _wait_for_a_chunk(process, out):
    deadline = time.time() + 60
    while not list((out / "chunks").glob("*.jsonl")) and time.time() < deadline and process.poll() is None:
        time.sleep(0.02)


# how the run is stopped: the signal, and whether the whole process group gets it (a terminal's Ctrl-C, `timeout`,
# a cluster's scheduler, systemd) or the command alone (`kill PID`, `docker stop`)
STOPS = {"ctrl-c": (signal.SIGINT, True), "sigterm": (signal.SIGTERM, True),
         "sigterm to the command alone": (signal.SIGTERM, False), "kill": (signal.SIGKILL, False)}


@pytest.mark.parametrize("how", list(STOPS))
def test_an_interrupted_process_resumes_to_the_uninterrupted_result(tmp_path, uninterrupted, how):
    signum, group = STOPS[how]
    process = _start(tmp_path, workers=2)
    _wait_for_a_chunk(process, tmp_path)
    if group:
        os.killpg(process.pid, signum)
    else:
        os.kill(process.pid, signum)
    _, err = process.communicate(timeout=60)
    if process.returncode in (0, 1):  # it finished before the signal: nothing to resume
        pytest.skip("the campaign ended before it could be interrupted")
    if signum != signal.SIGKILL:
        # one line: how much is kept where, and how to continue; the shell's status for the signal
        line = signalled.interruption_line(err.decode(), signum)
        assert process.returncode == 128 + signum and f"kept in {tmp_path}" in line, err
        assert line.endswith("run the same command again to continue")
        # the summary (and the page drawn from it) of what the folder holds, not of an earlier state
        kept = campaign.records(tmp_path)
        assert json.loads((tmp_path / "summary.json").read_text())["decided"] == len(kept)
        assert f"{len(kept)} of {RESUMED.count} done" in line
    assert signalled.group_ended(process)  # no worker left behind, even by a command killed (they follow it)
    # The signal can land after the last chunk was written and before the process exits: then
    # nothing is left to resume, and the comparison below must still hold.
    assert campaign.records(tmp_path) and len(campaign.records(tmp_path)) <= RESUMED.count
    campaign.run(RESUMED, tmp_path, workers=2)
    _assert_same_as_uninterrupted(tmp_path, uninterrupted)


def test_a_folder_of_another_campaign_is_refused(tmp_path, capsys):
    campaign.run(campaign.Campaign("gaussian", 4, 3, 3, 0), tmp_path, workers=1)
    with pytest.raises(BadInput, match="another campaign.*seed"):
        campaign.run(campaign.Campaign("gaussian", 4, 3, 3, 1), tmp_path, workers=1)
    restarted = campaign.run(campaign.Campaign("gaussian", 4, 3, 3, 1), tmp_path, workers=1, restart=True)
    assert restarted["campaign"]["seed"] == 1 and restarted["decided"] == 3


# --- the command line ------------------------------------------------------------------------


def test_the_certificate_the_summary_names_is_re_checked_under_the_campaigns_limits(tmp_path, capsys):
    """The summary's "(e.g. certify verify CERT)" left out the campaign's --limit options, under which the checker
    confirmed its certificates: one needing a raised limit was refused by the command as printed."""
    out = tmp_path / "c"
    assert main(["sample", "--n", "2", "--d", "1", "--count", "4", "--limit", "work=2000000000", "--out", str(out),
                 "-q"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "(e.g. certify verify " in x)
    command = shlex.split(line[line.index("certify verify "):].rstrip(")"))
    assert command[-2:] == ["--limit", "work=2000000000"] and main(command[1:]) == 0, line
    # the page's verify command of each certificate too (it runs in the page's folder)
    page = html.unescape((out / "index.html").read_text())
    commands = [shlex.split(text) for text in re.findall(r"<code>(certify verify certificates/[^<]*)</code>", page)]
    assert commands and all(command[-2:] == ["--limit", "work=2000000000"] for command in commands), commands


def test_cli_prints_the_summary_and_writes_the_folder(tmp_path, capsys):
    out = tmp_path / "s1"
    code = main(["sample", "--claim", "collapse.global", "--n", "4", "--d", "3", "--count", "12", "--seed", "1",
                 "--out", str(out), "--workers", "1", "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0 and "12 of 12 configurations checked" in printed and "float64 alone" in printed
    assert "(1 worker" in printed and "(1 workers" not in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"]["holds"] == 12 and (out / summary["certificates"]["paths"][0]).is_file()
    assert main(["sample", "--bound", PLANTED, "--distribution", "log-L", "--L-range", "40", "2000", "--n", "4",
                 "--d", "3", "--count", "40", "--seed", "1", "--out", str(tmp_path / "s2"), "--workers", "1",
                 "--no-progress", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["counts"]["violated"] > 0


BAD = {
    "unknown distribution": ["--distribution", "uniform"],
    "one token": ["--n", "1"],
    "no dimension": ["--d", "0"],
    "no configurations": ["--count", "0"],
    "absurd size": ["--n", "100000"],
    "absurd count": ["--count", str(10**12)],
    "L range reversed": ["--L-range", "10", "1"],
    "L range not positive": ["--L-range", "0", "1"],
    "L range absurd": ["--L-range", "1", "1e300"],
    "layernorm in one dimension": ["--distribution", "layernorm-lecun", "--d", "1"],
    "unknown claim": ["--claim", "collapse.nowhere"],
    "bound syntax": ["--bound", "D +* 2"],
    "bound on a missing V": ["--bound", "v*D"],
    "claim and bound": ["--claim", "collapse.global", "--bound", "D"],
    "negative seed": ["--seed", "-1"],
    "no workers": ["--workers", "0"],
    "absurd precision": ["--max-prec", "1"],
    "no thin head": ["--d-k", "0"],
    "a thin head as wide as d": ["--d-k", "3"],
    "a thin head in one dimension": ["--d", "1", "--d-k", "1"],
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_exits_2_with_one_line(name, tmp_path, capsys):
    args = {"--n": "4", "--d": "3", "--count": "5", "--out": str(tmp_path / "out")}
    extra = BAD[name]
    for flag, value in zip(extra[::2], extra[1::2]):
        args.pop(flag, None)
    argv = ["sample", *[x for pair in args.items() for x in pair], *extra, "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out" / "chunks").exists()


@pytest.mark.parametrize("bound, code", [("D**-1024", 1), ("log(D - D)", 3), ("1/(D - D)", 3), ("log(1 - 1)", 2)])
def test_a_bound_float64_cannot_evaluate_warns_nothing(tmp_path, capsys, bound, code):
    """The batched float64 screen may overflow or leave a function's domain: it guesses, and says
    nothing on stderr (a warning would be a second line beside the one of an undefined bound; a bound undefined
    at the configurations drawn, D - D = 0 exactly at d = 1, leaves them undecided)."""
    import warnings
    argv = ["sample", "--n", "2", "--d", "1", "--count", "2", "--out", str(tmp_path / "out"), "--workers", "1",
            "--bound", bound, "--no-progress"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a numpy warning would end the run (exit 4)
        assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == (1 if code == 2 else 0) and "Warning" not in err and "internal error" not in err


@pytest.mark.parametrize("made", [True, False])
def test_a_bound_found_undefined_by_the_run_leaves_no_campaign_behind(tmp_path, capsys, made):
    """1/0 is refused as the first configurations are decided, after the folder was begun: it was left with a
    manifest, and the corrected command was refused as "another campaign (different --bound)".  A folder given
    that holds only hidden entries is new, and they are the user's: they were removed with what the run began."""
    out = tmp_path / "out"
    if not made:  # a folder given, holding only hidden entries: kept, and left as it was
        (out / ".git").mkdir(parents=True)
        (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
        (out / ".DS_Store").write_bytes(b"Bud1")
    argv = ["sample", "--n", "2", "--d", "2", "--count", "3", "--out", str(out), "--workers", "1", "-q"]
    assert main(argv + ["--bound", "1/0"]) == 2
    assert "undefined" in capsys.readouterr().err
    if made:
        assert not out.exists()
    else:
        assert sorted(p.name for p in out.iterdir()) == [".DS_Store", ".git"]
        assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert main(argv + ["--bound", "2*D"]) == 0
    assert main(argv + ["--bound", "1/0", "--count", "4"]) == 2  # another campaign there: refused, never discarded
    assert (out / "manifest.json").is_file() and campaign.records(out)


def test_a_bound_undefined_at_some_drawn_configurations_leaves_them_undecided(tmp_path, capsys):
    """log(a - 1) + D is undefined where the drawn head has a <= 1 (configuration 2 of seed 3): that stopped the
    campaign there as bad input after the chunks before it were written, and every run that resumed it, which
    `certify verify` called interrupted.  Such a configuration is undecided, the reason saying where; the others
    are decided and the campaign re-derives.  A part without names undefined (1/0) is bad input before any."""
    out = tmp_path / "out"
    argv = ["sample", "--n", "3", "--d", "2", "--count", "4", "--seed", "3", "--out", str(out), "--workers", "1", "-q"]
    assert main(argv + ["--bound", "log(a - 1) + D"]) == 1  # a violation besides
    assert capsys.readouterr().err == ""
    records = {record["i"]: record for record in campaign.records(out)}
    assert records[2]["verdict"] == "undecided" and records[2]["certificate"] is None
    assert records[2]["reason"] == "the bound is undefined: log(a - 1) takes an argument outside its domain"
    assert [records[i]["verdict"] for i in (0, 1, 3)] == ["holds", "holds", "violated"]
    assert (out / "undecided" / "000000002.json").is_file()
    assert main(["verify", str(out), "-q"]) == 0
    assert main(["sample", "--n", "3", "--d", "2", "--count", "4", "--out", str(tmp_path / "other"), "--bound",
                 "log(a - 1) + 1/0", "-q"]) == 2
    assert "1/0 divides by zero" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_resuming_into_a_different_campaign_exits_2(tmp_path, capsys):
    def sample(count):
        return main(["sample", "--n", "4", "--d", "3", "--count", count, "--out", str(tmp_path), "--workers", "1",
                     "--no-progress"])

    assert sample("3") == 0
    assert sample("4") == 2
    assert "another campaign (different --count)" in capsys.readouterr().err


def test_run_section_finds_the_planted_bound_and_no_violation_of_the_theorem(tmp_path, monkeypatch):
    from certify.suite import campaigns as campaign_section
    from certify.suite import SuiteRun

    monkeypatch.setattr(campaign_section, "COUNT", 40)
    rows = list(campaign_section.section(SuiteRun(out_dir=tmp_path)))
    assert len(rows) == len(samplers.DISTRIBUTIONS) + 1 and all(row.ok for row in rows)
    assert rows[-1].verdict == engine.VIOLATED and (tmp_path / rows[-1].certificate).is_file()
    assert all(row.verdict == engine.HOLDS for row in rows[:-1])


def test_run_section_says_no_holds_of_a_campaign_left_incomplete(tmp_path, monkeypatch):
    """A campaign whose pool lost a worker leaves its chunks undone (summary "complete": false): `certify run` said
    holds, as expected, from the counts of the configurations decided (384 holds of 2000, exit 0)."""
    from certify.suite import campaigns as campaign_section
    from certify.suite import SuiteRun

    decide = campaign.run
    monkeypatch.setattr(campaign_section, "COUNT", 40)
    monkeypatch.setattr(campaign, "run", lambda spec, folder, **options: decide(spec, folder, stop_after=5, **options))
    rows = list(campaign_section.section(SuiteRun(out_dir=tmp_path, workers=1)))[:-1]  # the theorem's campaigns
    assert all(row.verdict == engine.UNDECIDED and not row.ok for row in rows), rows
    assert all(row.detail.startswith("5 of 40 decided; 5 holds, 0 violated") for row in rows), rows


def test_run_section_of_a_campaign_that_decided_nothing_is_an_undecided_row(tmp_path, monkeypatch):
    """A campaign whose every chunk was lost (its pool's worker killed before the first was committed) has no largest
    lhs/rhs: `certify run` stopped with an internal error (TypeError) instead of its undecided row."""
    from certify.suite import campaigns as campaign_section
    from certify.suite import SuiteRun

    decide = campaign.run
    monkeypatch.setattr(campaign_section, "COUNT", 40)
    monkeypatch.setattr(campaign, "run", lambda spec, folder, **options: decide(spec, folder, stop_after=5, **options))
    monkeypatch.setattr(campaign, "records", lambda store: [])  # as when no chunk was committed
    rows = list(campaign_section.section(SuiteRun(out_dir=tmp_path, workers=1)))
    assert all(row.verdict == engine.UNDECIDED and not row.ok for row in rows), rows
    assert all(row.detail.startswith("0 of 40 decided; 0 holds, 0 violated") for row in rows), rows


def test_validating_a_campaign_decides_nothing(monkeypatch):
    """The target is admitted on configuration 0 without deciding it: the pool decides every one."""
    def refuse(*args, **kwargs):
        raise AssertionError("a configuration was decided before the pool started")

    monkeypatch.setattr(campaign.engine, "check", refuse)
    assert SATURATED.validated().claim is None and SATURATED.validated().bound == expr.parse(PLANTED).text
    with pytest.raises(BadInput, match="does not apply"):
        campaign.Campaign("gaussian", 4, 3, 5, 0, claim="value.bounded").validated()


def test_a_one_worker_campaign_decides_on_one_blas_thread(tmp_path, monkeypatch):
    """The inline run limits BLAS to one thread as the pool's workers do (worker_init): a threaded
    BLAS on a configuration's small matrices only waits for its own threads on a shared machine."""
    from threadpoolctl import threadpool_info

    seen = []
    decide = campaign.decide_chunk

    def watched(*args):
        seen.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
        return decide(*args)

    monkeypatch.setattr(campaign, "decide_chunk", watched)
    campaign.run(campaign.Campaign("gaussian", 3, 2, 4, 0), tmp_path, workers=1)
    assert seen and set(seen) == {1}


def test_certify_run_interrupted_in_its_campaigns_does_not_offer_to_continue(tmp_path, monkeypatch, capsys):
    """`certify run` starts its campaigns afresh (restart): the campaign's "run the same command again to
    continue" would be untrue there, so its Ctrl-C line is the plain one."""
    from certify.errors import Interrupted

    def interrupted(spec, folder, **options):
        raise Interrupted(f"5 of 200 done, kept in {folder}: run the same command again to continue")

    monkeypatch.setattr(campaign, "run", interrupted)
    assert main(["run", "--only", "sampling", "--out", str(tmp_path / "report"), "-q"]) == 130
    assert capsys.readouterr().err == "certify: interrupted\n"


def test_an_interruption_after_the_last_chunk_leaves_the_summary_of_every_record(tmp_path, monkeypatch):
    """Ctrl-C landing once every chunk is committed (the executor waited for the running ones): summary.json
    says what the records say, not what an earlier run's said, so that `certify verify` confirms the folder."""
    from certify.search import audit

    earlier = campaign.run(RESUMED, tmp_path, workers=1, stop_after=5)
    finish = campaign.jobs.run

    def interrupted_after(*args, **kwargs):
        finish(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign.jobs, "run", interrupted_after)
    with pytest.raises(KeyboardInterrupt):
        campaign.run(RESUMED, tmp_path, workers=1)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["complete"] and summary["run"]["decided"] == RESUMED.count - earlier["decided"]
    assert {k: v for k, v in summary.items() if k != "run"} == json.loads(
        jsonfile.dumps(campaign.summarize(RESUMED.validated(), campaign.records(tmp_path))))
    assert audit.audit(tmp_path, sample=0, workers=1).ok


def test_an_interrupted_run_leaves_the_page_of_its_summary_not_an_earlier_runs(tmp_path, monkeypatch, capsys):
    """Ctrl-C rewrites summary.json; index.html, read beside it, must not keep an earlier run's counts."""
    argv = ["sample", "--bound", RESUMED.bound, "--distribution", RESUMED.distribution, "--n", str(RESUMED.n),
            "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed), "--workers", "1",
            "--out", str(tmp_path), "-q"]
    assert main(argv + ["--stop-after", "5"]) in (1, 3)  # a violation found, or only undecided: incomplete
    decided = f"{RESUMED.count} of {RESUMED.count} configurations checked"
    assert decided not in (tmp_path / "index.html").read_text()
    finish = campaign.jobs.run

    def interrupted_after(*args, **kwargs):
        finish(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign.jobs, "run", interrupted_after)
    assert main(argv) == 130
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["decided"] == RESUMED.count
    assert decided in (tmp_path / "index.html").read_text()


def test_an_interruption_while_summarising_says_what_is_kept(tmp_path, monkeypatch, capsys):
    """Ctrl-C once every chunk is committed, while the summary, histograms and page are written (seconds for
    100,000 records, after the bar reached 100%): the line says what is done and where, as during the run, and
    the summary and page are of every record, not a bare "certify: interrupted" that leaves them unsaid."""
    from certify.figures import sample as sample_figure

    argv = ["sample", "--bound", RESUMED.bound, "--distribution", RESUMED.distribution, "--n", str(RESUMED.n),
            "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed), "--workers", "1",
            "--out", str(tmp_path), "-q"]
    draw, calls = sample_figure.write, []

    def interrupted_once(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return draw(*args, **kwargs)

    monkeypatch.setattr(sample_figure, "write", interrupted_once)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err == (f"certify: interrupted; {RESUMED.count} of {RESUMED.count} done, kept in {tmp_path}: "
                   "nothing asked for is left to do\n"), err
    assert json.loads((tmp_path / "summary.json").read_text())["decided"] == RESUMED.count
    assert f"{RESUMED.count} of {RESUMED.count} configurations checked" in (tmp_path / "index.html").read_text()


def test_an_interruption_while_the_records_are_read_says_what_is_kept(tmp_path, monkeypatch, capsys):
    """A resumed run reads every record before its first chunk (4 s for 100,000): a Ctrl-C then printed a bare
    "certify: interrupted", not what the folder keeps and that the same command continues it."""
    earlier = campaign.run(RESUMED, tmp_path, workers=1, stop_after=5)["decided"]
    read = campaign.records

    def interrupted(folder):
        raise KeyboardInterrupt

    monkeypatch.setattr(campaign, "records", interrupted)
    argv = ["sample", "--bound", RESUMED.bound, "--distribution", RESUMED.distribution, "--n", str(RESUMED.n),
            "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed), "--workers", "1",
            "--out", str(tmp_path), "-q"]
    assert main(argv) == 130
    assert capsys.readouterr().err == (f"certify: interrupted; {earlier} of {RESUMED.count} done, kept in {tmp_path}: "
                                       "run the same command again to continue\n")
    monkeypatch.setattr(campaign, "records", read)
    assert len(campaign.records(tmp_path)) == earlier


def test_a_restart_interrupted_with_records_kept_does_not_invite_the_restart_again(tmp_path, monkeypatch, capsys):
    """Ctrl-C in a run started with --restart, once it had committed some chunks, said "run the same command again to
    continue": the same command, --restart included, discards what was kept and starts over.  It now says to run it
    without --restart."""
    from certify import jobs

    campaign.run(RESUMED, tmp_path, workers=1, stop_after=5)
    run = jobs.run

    def interrupted(store, executor, task, spec, chunks, **options):  # some chunks committed, then Ctrl-C
        run(store, executor, task, spec, chunks, **dict(options, stop_after=5))
        raise jobs.interrupted(store)

    monkeypatch.setattr(jobs, "run", interrupted)
    argv = ["sample", "--bound", RESUMED.bound, "--distribution", RESUMED.distribution, "--n", str(RESUMED.n),
            "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed), "--workers", "1",
            "--out", str(tmp_path), "-q"]
    assert main([*argv, "--restart"]) == 130
    kept = len(campaign.records(tmp_path))
    assert 5 <= kept < RESUMED.count
    assert capsys.readouterr().err == (f"certify: interrupted; {kept} of {RESUMED.count} done, kept in {tmp_path}: "
                                       "run the same command again without --restart to continue\n")
    monkeypatch.setattr(jobs, "run", run)
    assert main(argv) in (0, 1, 3) and len(campaign.records(tmp_path)) == RESUMED.count  # it continues


def test_a_restart_stopped_after_some_does_not_invite_the_restart_again(tmp_path, capsys):
    """--restart --stop-after K printed "incomplete: run the same command again to continue", which restarts the
    campaign and decides the same K again, for ever."""
    argv = ["sample", "--bound", RESUMED.bound, "--distribution", RESUMED.distribution, "--n", str(RESUMED.n),
            "--d", str(RESUMED.d), "--count", str(RESUMED.count), "--seed", str(RESUMED.seed), "--workers", "1",
            "--out", str(tmp_path), "--stop-after", "5"]
    assert main([*argv, "--restart"]) in (1, 3)  # violated, or undecided (incomplete)
    assert "  incomplete: run the same command again without --restart to continue\n" in capsys.readouterr().out
    # the page stays in the folder, whatever command the next reader has: it says so of the restart too
    assert "Incomplete: run the same command again (without --restart, which starts over)" in (
        (tmp_path / "index.html").read_text())
    assert main(argv) in (1, 3)
    assert "  incomplete: run the same command again to continue\n" in capsys.readouterr().out


def test_the_bar_says_the_records_are_summarised_once_every_chunk_is_done(tmp_path, capsys):
    """Once its last chunk is committed the bar stood at 100% without a word while every record was read again
    for the summary, histograms and page: 5 s for 100,000 records."""
    assert main(["sample", "--n", "3", "--d", "2", "--count", "12", "--workers", "1", "--out", str(tmp_path),
                 "--progress"]) == 0
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "12/12" in last and "summarising 12 records" in last, last


def test_a_huge_count_is_not_held_in_memory(tmp_path):
    """--count takes up to 1e9, but the indices left were made into a list before the first chunk: 36 GB for
    `--count 1e9 --stop-after 10` (out of memory under a 3 GB cap).  Here 2e6 indices, 70 MB as a list."""
    import tracemalloc

    def peak(count: int) -> int:  # beside that of a campaign of 2 (reading a JSON file takes its bytes limit at once)
        tracemalloc.start()
        try:
            campaign.run(campaign.Campaign("gaussian", 2, 1, count, 0), tmp_path / str(count), workers=1, stop_after=1)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, huge = peak(2), peak(2_000_000)
    assert len(campaign.records(tmp_path / "2000000")) == 1 and huge < small + 20e6, (small, huge)


def test_stop_after_decides_at_most_a_chunk_more_and_the_rest_resumes_exactly(tmp_path):
    """--stop-after 100 on 2 workers decided 320 configurations: every chunk in flight once 100 were committed
    finished, up to twice the workers' chunks of 64."""
    from certify.search import campaign as campaigns

    spec = campaigns.Campaign("gaussian", 2, 1, 400, 5)
    stopped = campaigns.run(spec, tmp_path / "s", workers=2, stop_after=100)
    _, batches = campaigns.read_with_batches(tmp_path / "s")
    assert 100 <= stopped["decided"] < 100 + max(map(len, batches)), stopped["decided"]
    assert max(map(len, batches)) <= math.ceil(100 / (campaigns.CHUNKS_PER_WORKER * 2))
    campaigns.run(spec, tmp_path / "s", workers=2)
    whole = campaigns.run(spec, tmp_path / "w", workers=2)
    resumed, alone = campaigns.records(tmp_path / "s"), campaigns.records(tmp_path / "w")
    assert [r["i"] for r in resumed] == list(range(400)) == [r["i"] for r in alone]
    assert [r["verdict"] for r in resumed] == [r["verdict"] for r in alone] and whole["decided"] == 400


def test_relative_margins_print_their_exponent_without_e_notation(tmp_path, capsys):
    """A bound far above its lhs has relative margins of nearly 1: their log10, about -2e-7 here, printed as
    10^-2.34e-07, which reads as a tiny margin; the exponent is printed to three decimals, 10^-0.000."""
    argv = ["sample", "--bound", "1e6*D", "--n", "3", "--d", "2", "--count", "3", "--seed", "1", "--workers", "1",
            "--no-progress", "--out", str(tmp_path / "s")]
    assert main(argv) == 0
    margins = [line for line in capsys.readouterr().out.splitlines() if "relative margin" in line]
    assert len(margins) == 2 and all("10^-0.000" in line for line in margins)
    assert not any(re.search(r"10\^-?[0-9.]+e", line) for line in margins)
    power = numbers.power_of_ten
    assert (power(-0.1274), power(-4321.4), power(0.0), power(None)) == ("10^-0.127", "10^-4321", "10^0", "-")
    page = (tmp_path / "s" / "index.html").read_text()
    assert "10^-0.000" in page and not re.search(r"10\^-?[0-9.]+e", page)
