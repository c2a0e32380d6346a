"""`certify attack --out DIR` resumes: an interrupted search continues from its journal without losing or
repeating an evaluation, ends as one uninterrupted search does, and never takes a verdict from the journal."""

from __future__ import annotations

import itertools
import json
import shlex
import signal
import time

import numpy as np
import pytest

from certify import engine, errors
from certify.cli import main
from certify.errors import BadInput
from certify.jobs.store import locked
from certify.search import attack, attack_folder, objective

import signalled

LARGE_L = "(1-exp(-a*D**2/3))*D"  # false for L > 2.887...: the attack finds and certifies a violation
SEARCH = dict(bound=LARGE_L, n=2, d=1, seed=3, budget=400)
ARGV = ["attack", "--bound", LARGE_L, "--n", "2", "--d", "1", "--seed", "3", "--budget", "400"]


class Evaluations:
    """objective.evaluate counted, and a Ctrl-C (KeyboardInterrupt) instead of the call after `stop_after`."""

    def __init__(self, monkeypatch, stop_after: int | None = None):
        self.calls, real = 0, objective.evaluate

        def evaluate(*args, **kwargs):
            if stop_after is not None and self.calls >= stop_after:
                raise KeyboardInterrupt
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(objective, "evaluate", evaluate)


def journal_lines(folder) -> list[str]:
    return (folder / attack_folder.JOURNAL).read_text().splitlines()


def same_search(first: attack.AttackReport, second: attack.AttackReport) -> None:
    """The two reports describe the same search and the same outcome (time aside)."""
    one, two = first.to_json(), second.to_json()
    for key in ("evaluations", "best", "best_exponent", "bands", "finalists", "violated", "counterexample"):
        assert one[key] == two[key], key
    assert np.array_equal(first.best.shape, second.best.shape) and first.best.L_param == second.best.L_param


@pytest.fixture(scope="module")
def uninterrupted():
    return attack.attack(**SEARCH)


@pytest.mark.parametrize("stop_after", [1, 57, 230])
def test_an_interrupted_attack_resumes_to_the_uninterrupted_search_without_recomputing(
        tmp_path, monkeypatch, uninterrupted, stop_after):
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=stop_after)
        stopped = attack.attack(**SEARCH, out=tmp_path, interruptible=True)
    assert stopped.interrupted and stopped.evaluations == stop_after and stopped.replayed == 0
    assert len(journal_lines(tmp_path)) == stop_after
    counted, announced = Evaluations(monkeypatch), []
    resumed = attack.attack(**SEARCH, out=tmp_path, on_resume=announced.append)
    assert announced == [stop_after] and resumed.replayed == stop_after
    assert counted.calls == uninterrupted.evaluations - stop_after, "a journaled evaluation was computed again"
    assert not resumed.interrupted and resumed.violated == uninterrupted.violated
    same_search(resumed, uninterrupted)
    assert len(journal_lines(tmp_path)) == uninterrupted.evaluations


def test_a_finished_attack_run_again_replays_everything_and_certifies_again(tmp_path, monkeypatch, uninterrupted):
    attack.attack(**SEARCH, out=tmp_path)
    counted, checks = Evaluations(monkeypatch), []
    real_check = engine.check
    monkeypatch.setattr(engine, "check", lambda *args, **kwargs: checks.append(1) or real_check(*args, **kwargs))
    again = attack.attack(**SEARCH, out=tmp_path)
    assert counted.calls == 0 and again.replayed == again.evaluations == uninterrupted.evaluations
    assert checks, "the finalists are certified by the engine in every run, never read from the folder"
    same_search(again, uninterrupted)


def test_a_finished_time_budget_run_again_computes_nothing(tmp_path, monkeypatch):
    first = attack.attack(bound=LARGE_L, n=2, d=1, budget="0.5s", out=tmp_path)
    clock = [float(line.split()[1]) for line in journal_lines(tmp_path) if line.startswith("t ")]
    assert clock == sorted(clock) and clock[-1] >= 0.5  # the reading that ended the search is journaled
    counted = Evaluations(monkeypatch)
    again = attack.attack(bound=LARGE_L, n=2, d=1, budget="0.5s", out=tmp_path)
    assert counted.calls == 0 and again.replayed == again.evaluations == first.evaluations
    assert again.best.score == first.best.score and np.array_equal(again.best.shape, first.best.shape)


def test_a_resumed_time_budget_spends_only_the_time_left(tmp_path, monkeypatch):
    """With a clock that advances 1 ms per reading (deterministic), an attack of 0.5 s stopped after 100
    evaluations and resumed computes about what the uninterrupted attack computes after its first 100:
    the time journaled counts (a clock started afresh would give a whole budget more)."""
    ticks = itertools.count()
    monkeypatch.setattr(time, "monotonic", lambda: next(ticks) * 1e-3)
    search = dict(bound=LARGE_L, n=2, d=1, budget="0.5s")
    whole = attack.attack(**search).evaluations
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=100)
        attack.attack(**search, out=tmp_path, interruptible=True)
    counted = Evaluations(monkeypatch)
    resumed = attack.attack(**search, out=tmp_path)
    assert resumed.replayed == 100 and resumed.evaluations == 100 + counted.calls
    assert abs(resumed.evaluations - whole) <= 0.05 * whole, (resumed.evaluations, whole)


def test_the_cli_says_how_to_resume_and_reports_what_it_replayed(tmp_path, monkeypatch, capsys, uninterrupted):
    out = tmp_path / "a1"
    argv = ARGV + ["--out", str(out)]
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=100)
        code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and len(err) == 1, err
    assert err[0].startswith("certify: interrupted; the search stopped early after 100 evaluations")
    assert err[0].endswith("; continue with: " + shlex.join(["certify", *argv]))
    assert json.loads((out / "summary.json").read_text())["interrupted"]
    code = main(argv + ["--progress"])  # the bar, and above it the evaluations it replays
    captured = capsys.readouterr()
    assert code == uninterrupted.exit_code == 1 and "VIOLATED" in captured.out
    assert f"resuming {out}: replaying the 100 evaluations of its journal" in captured.err
    assert f"{uninterrupted.evaluations} evaluations (100 replayed from the journal)" in captured.out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["replayed"] == 100 and not summary["interrupted"] and summary["files"]["journal"]
    assert main(["verify", str(out / "certificate.json")]) == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_sigterm_stops_the_attack_as_ctrl_c_does_and_it_resumes_to_the_uninterrupted_search(
        tmp_path, monkeypatch, uninterrupted, signum):
    """SIGTERM (a scheduler's, `timeout`'s) and SIGHUP (the terminal closed), received by the process in the
    middle of the search: what Ctrl-C does, with the signal's status, and the folder resumes to the search of
    one uninterrupted run without computing a journaled evaluation again."""
    out, done = tmp_path / "a1", 57
    argv = ARGV + ["--out", str(out)]
    process = signalled.start(argv, at=("certify.search.objective", "evaluate", done + 1, signum))
    code, stdout, err = signalled.finish(process)
    line = signalled.interruption_line(err, signum)
    assert code == 128 + signum and f"the search stopped early after {done} evaluations" in line
    assert line.endswith("; continue with: " + shlex.join(["certify", *argv]))
    assert "NOT CERTIFIED" in stdout and json.loads((out / "summary.json").read_text())["interrupted"]
    assert len(journal_lines(out)) == done
    counted = Evaluations(monkeypatch)
    resumed = attack.attack(**SEARCH, out=out)
    assert resumed.replayed == done and counted.calls == uninterrupted.evaluations - done
    same_search(resumed, uninterrupted)


def test_an_interrupted_attack_without_a_folder_says_how_to_make_it_resumable(monkeypatch, capsys):
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=100)
        code = main(ARGV)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130 and len(err) == 1, err
    assert err[0].endswith("; run it with --out DIR to make a search that can be continued"), err


def test_the_cli_names_every_file_it_wrote(tmp_path, capsys):
    out = tmp_path / "a1"
    assert main(small() + ["--out", str(out), "-q"]) == 1
    printed = capsys.readouterr().out
    files = sorted(path.name for path in out.iterdir() if not path.name.startswith("."))
    assert attack_folder.PARAMETERS in files and attack_folder.JOURNAL in files
    assert [name for name in files if str(out / name) not in printed] == []


def small(**changes) -> list[str]:
    """The argv of a small attack of LARGE_L, with options changed (None: left out)."""
    options = {"--bound": LARGE_L, "--n": "2", "--d": "1", "--seed": "3", "--budget": "100", **changes}
    return ["attack"] + [word for option, value in options.items() if value is not None for word in (option, value)]


@pytest.mark.parametrize("changes, differ", [
    ({"--seed": "4"}, "--seed"),
    ({"--budget": "101"}, "--budget"),
    # the number of starts follows from the budget when --starts is not given: named by the option the user gave
    ({"--budget": "10s"}, "--budget"),
    ({"--budget": "5000"}, "--budget"),
    ({"--starts": "5"}, "--starts"),
    ({"--budget": "5000", "--starts": "5"}, "--budget, --starts"),
    ({"--n": "3"}, "--n"),
    ({"--max-prec": "4096"}, "--max-prec"),  # named by its option, not as the key max_prec
    ({"--bound": None, "--claim": "collapse.global"}, "--bound, --claim"),
])
def test_another_attack_on_the_folder_is_refused_and_changes_nothing(tmp_path, capsys, changes, differ):
    out = tmp_path / "a1"
    assert main(small() + ["--out", str(out)]) == 1
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    assert main(small(**changes) + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"holds another attack (different {differ})" in err, err
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_a_number_of_starts_the_user_did_not_give_is_named_as_following_from_the_budget(tmp_path, capsys):
    """The resume of an attack begun with --starts, without it, said "different --starts" to a user who gave none:
    the starts that differ are the ones chosen from --budget."""
    out = tmp_path / "a1"
    assert main(small(**{"--starts": "2"}) + ["--out", str(out)]) == 1
    capsys.readouterr()
    assert main(small() + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds another attack (different --starts (from --budget));" in err, err


@pytest.mark.parametrize("changes, key, edited", [
    ({"--d": "2", "--d-k": "1"}, "d_k", 1.0),  # a float where the integer K is required
    ({}, "n", 2.0),
    ({}, "seed", 3.0),
    ({}, "with_v", 0),  # a number where a boolean is
    ({}, "max_prec", 16384.0),
    ({}, "budget", {"evaluations": 100.0}),
    ({}, "l_range", [0.0625, 1024]),  # an integer where a real is (the same number)
])
def test_a_parameter_of_another_json_type_is_refused_not_resumed(tmp_path, capsys, changes, key, edited):
    """Python's == takes 2.0 for 2 and 0 for false: an attack.json edited so ("d_k": 2.0) resumed as the attack
    it equals.  It is refused in one line, exit 2, and nothing in the folder changes."""
    out = tmp_path / "a"
    argv = small(**changes) + ["-q", "--out", str(out)]
    assert main(argv) in (0, 1)
    parameters = json.loads((out / attack_folder.PARAMETERS).read_text())
    assert parameters[key] == edited and parameters[key] is not edited  # equal in Python, of another JSON type
    parameters[key] = edited
    (out / attack_folder.PARAMETERS).write_text(json.dumps(parameters))
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f'attack.json states "{key}": {json.dumps(edited)}, where an attack writes' in err, err
    assert "Traceback" not in err and {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_verify_of_an_attack_folder_names_the_certificate_to_verify(tmp_path, capsys):
    """`certify verify DIR` checks campaign folders; an attack's folder gets the command that checks its result."""
    out = tmp_path / "a1"
    assert main(small() + ["--out", str(out), "-q"]) == 1
    capsys.readouterr()
    assert main(["verify", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"certify verify {out / 'certificate.json'}" in err, err
    (out / "certificate.json").unlink()  # an attack that certified nothing has no certificate to name
    assert main(["verify", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "an attack's folder" in err and "certificate.json" not in err, err


@pytest.mark.parametrize("made", [True, False])
def test_a_bound_the_search_finds_undefined_leaves_no_attack_behind(tmp_path, capsys, made):
    """log(D - D) is refused where the search first evaluates it, after attack.json and the journal were written:
    the folder stayed, and the corrected command was refused as "another attack (different --bound)".  A folder
    given that holds only hidden entries is new, and they are the user's: they were removed with the attack begun."""
    out = tmp_path / "a"
    if not made:  # a folder given, holding only hidden entries: kept, and left as it was
        (out / ".git").mkdir(parents=True)
        (out / ".DS_Store").write_bytes(b"Bud1")
    argv = ["attack", "--n", "2", "--d", "1", "--budget", "50", "--out", str(out), "-q"]
    assert main(argv + ["--bound", "log(D - D)"]) == 2
    assert "undefined" in capsys.readouterr().err
    assert (not out.exists()) if made else sorted(p.name for p in out.iterdir()) == [".DS_Store", ".git"]
    assert main(argv + ["--bound", "2*D"]) == 0
    assert main(argv + ["--bound", "log(D - D)", "--starts", "2"]) == 2  # another attack there: refused, kept
    assert (out / "attack.json").is_file() and (out / "journal.txt").stat().st_size > 0


def test_a_folder_that_is_not_an_attacks_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(small(**{"--budget": "60"}) + ["--out", str(tmp_path)]) == 2
    assert "is not empty and is not an attack folder" in capsys.readouterr().err
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]



@pytest.mark.parametrize("mine", [None, "notes.txt"])
def test_a_folder_a_run_was_killed_in_before_it_wrote_its_parameters_is_a_new_one(tmp_path, capsys, mine):
    """A run killed (SIGKILL) while writing attack.json leaves the lock file and the temporary file of that write:
    nothing was committed, and the next run attacks there as in a new folder, removing them (verify of the folder
    says so in one line); a file of the user's beside them keeps it refused and untouched."""
    out = tmp_path / "a"
    out.mkdir()
    (out / ".lock").touch()
    (out / f".{attack_folder.PARAMETERS}.4242-0badcafe.tmp").write_text('{"format": "attack')
    if mine:
        (out / mine).write_text("mine")
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    assert main(["verify", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("no run has committed anything" in err) == (mine is None), err
    if mine:
        assert main(small() + ["--out", str(out)]) == 2
        assert "is not empty and is not an attack folder" in capsys.readouterr().err
        assert {path.name: path.read_bytes() for path in out.iterdir()} == before
        return
    fresh = tmp_path / "fresh"
    assert main(small() + ["--out", str(out)]) == main(small() + ["--out", str(fresh)]) == 1
    assert sorted(path.name for path in out.iterdir()) == sorted(path.name for path in fresh.iterdir())
    assert (out / attack_folder.JOURNAL).read_bytes() == (fresh / attack_folder.JOURNAL).read_bytes()


def test_the_results_of_an_earlier_versions_attack_are_named_so_and_left_alone(tmp_path, capsys):
    """An earlier version of certify wrote only the results (no parameters, no journal): not resumed, and said so."""
    out = tmp_path / "a1"
    assert main(small() + ["--out", str(out)]) == 1
    for name in (attack_folder.PARAMETERS, attack_folder.JOURNAL):  # as an earlier version left the folder
        (out / name).unlink()
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    capsys.readouterr()
    assert main(small() + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "an attack by an earlier version of certify" in err, err
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_a_folder_in_use_is_refused(tmp_path, capsys):
    attack.attack(**SEARCH, out=tmp_path)
    handle = locked(tmp_path, shared=False, busy="")  # as a run that writes it
    try:
        assert main(ARGV + ["--out", str(tmp_path)]) == 2
    finally:
        handle.close()
    assert "in use by another certify attack" in capsys.readouterr().err


def test_a_last_line_cut_short_is_dropped(tmp_path, monkeypatch, uninterrupted):
    with monkeypatch.context() as patch:
        Evaluations(patch, stop_after=80)
        attack.attack(**SEARCH, out=tmp_path, interruptible=True)
    journal = tmp_path / attack_folder.JOURNAL
    whole = journal.read_bytes()
    nxt = whole.splitlines(keepends=True)[0]
    journal.write_bytes(whole + nxt[:len(nxt) // 2])  # a kill in the middle of a write
    counted = Evaluations(monkeypatch)
    resumed = attack.attack(**SEARCH, out=tmp_path)
    assert resumed.replayed == 80 and counted.calls == uninterrupted.evaluations - 80
    same_search(resumed, uninterrupted)
    lines = journal.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(attack_folder._event(line + b"\n") for line in lines[:-1])


@pytest.mark.parametrize("edit, message", [
    (lambda lines: lines.__setitem__(4, "e 0123 -1 -1 - 1"), "line 5 is not an event"),
    (lambda lines: lines.__setitem__(9, lines[9].replace(" ", "  ", 1)), "line 10 is not an event"),
    (lambda lines: lines.__setitem__(2, "t nan"), "line 3 is not an event"),
    (lambda lines: lines.insert(6, "t 1.5"), "line 7 is not an evaluation"),
    (lambda lines: lines.__setitem__(11, "e 0123456789abcdef" + lines[11][18:]), "line 12 is not the evaluation"),
])
def test_a_journal_that_is_corrupt_or_does_not_replay_is_one_line_and_exit_2(tmp_path, capsys, edit, message):
    argv = small() + ["--out", str(tmp_path)]
    assert main(argv) == 1
    journal = tmp_path / attack_folder.JOURNAL
    lines = journal.read_text().splitlines()
    edit(lines)
    journal.write_text("\n".join(lines) + "\n")
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: ") and err.count("\n") == 1 and message in err, err
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_a_journal_that_claims_a_violation_gets_no_verdict_from_it(tmp_path, capsys):
    """collapse.global holds: a journal edited so that its last evaluation scores 10^9 (violated beyond doubt,
    says the search data) makes that point the best and a finalist, and the engine certifies it holds."""
    argv = ["attack", "--claim", "collapse.global", "--n", "2", "--d", "1", "--budget", "100", "--json",
            "--out", str(tmp_path)]
    assert main(argv) == 0
    journal = tmp_path / attack_folder.JOURNAL
    lines = journal.read_text().splitlines()
    kind, key, _, _, exponent, L = lines[-1].split()
    lines[-1] = " ".join([kind, key, "1000000000.0", "1000000000.0", exponent, L])
    journal.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["best"]["score"] == 1e9 and summary["replayed"] == 100
    assert not summary["violated"] and summary["counterexample"] is None
    assert [f["verdict"] for f in summary["finalists"]] == [engine.HOLDS]
    assert not (tmp_path / "certificate.json").exists()


def test_ctrl_c_while_replaying_leaves_the_folder_as_it_was(tmp_path, monkeypatch, capsys):
    argv = ARGV + ["--out", str(tmp_path)]
    assert main(argv) == 1
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(attack._Search, "ladder", interrupted)  # every event before the ladder is journaled
    capsys.readouterr()
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "is as the last run left it" in err and "continue with: certify attack" in err, err
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


def test_ctrl_c_while_a_finished_attack_certifies_again_leaves_its_counterexample(tmp_path, monkeypatch, capsys):
    """A finished attack run again replays its whole journal, then certifies its finalists again: a Ctrl-C there
    removed the counterexample.json and certificate.json the run before it had certified and wrote "nothing found"
    in summary.json, a run that searched nothing beyond the journal knowing less than the folder said."""
    argv = ARGV + ["--out", str(tmp_path)]
    assert main(argv) == 1
    before = {path.name: path.read_bytes() for path in tmp_path.iterdir()}

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "check", interrupted)
    capsys.readouterr()
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "is as the last run left it" in err and "continue with: certify attack" in err, err
    assert {path.name: path.read_bytes() for path in tmp_path.iterdir()} == before


@pytest.mark.parametrize("limit, said", [
    ("tokens=1", "the configuration has 2 tokens, above the limit of 1"),
    ("layers=1", "the configuration has 2 layers, above the limit of 1"),
    ("work=100", "is above the limit of 100 (raise it with --limit work=N)"),
])
def test_limits_no_candidate_could_pass_are_refused_before_the_search(tmp_path, monkeypatch, capsys, limit, said):
    """The candidates are certified under --limit: one that no configuration of the layout passes was refused
    only when the first finalist was checked, after the whole search (minutes at a large budget)."""
    counted = Evaluations(monkeypatch)
    out = tmp_path / "a"
    argv = ["attack", "--bound", LARGE_L, "--n", "2", "--d", "1", "--layers", "2", "--budget", "300"]
    assert main(argv + ["--limit", limit, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert "no candidate of this search could be certified under the limits" in captured.err and said in captured.err
    assert counted.calls == 0 and not out.exists()
    assert main(argv + ["-q"]) == 1  # within the default limits the same search certifies its counterexample


def test_the_library_refuses_a_bad_folder_before_any_work(tmp_path, monkeypatch):
    counted = Evaluations(monkeypatch)
    (tmp_path / "file").write_text("")
    with pytest.raises(BadInput, match="is a file where a folder is needed"):
        attack.attack(**SEARCH, out=tmp_path / "file")
    attack.attack(**dict(SEARCH, budget=60), out=tmp_path / "a")
    calls = counted.calls
    with pytest.raises(BadInput, match="different seed="):
        attack.attack(**dict(SEARCH, budget=60, seed=9), out=tmp_path / "a")
    assert counted.calls == calls


@pytest.mark.parametrize("where", ["write", "_scan"])
def test_ctrl_c_outside_the_search_names_the_command_that_continues(tmp_path, monkeypatch, capsys, where):
    """A Ctrl-C while the journal is read (a long one) or the results are written ends as one in the search."""
    argv = small() + ["--out", str(tmp_path)]
    assert main(argv) == 1

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    owner = attack_folder.Folder if where == "write" else attack_folder.Journal
    monkeypatch.setattr(owner, where, interrupted)
    capsys.readouterr()
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("; continue with: " + shlex.join(["certify", *argv])), err
    monkeypatch.undo()
    assert main(argv) == 1  # and it does continue


@pytest.mark.parametrize("name", [attack_folder.JOURNAL, attack_folder.PARAMETERS, *sorted(attack_folder.RESULTS)])
def test_a_linked_journal_or_parameters_file_is_refused_and_its_target_left_alone(tmp_path, capsys, name):
    """A run truncates its journal's last partial line and appends to it: never through a link to another file.  Nor
    does it write its results through one (best.json linked to a file elsewhere had that file overwritten)."""
    out = tmp_path / "a1"
    argv = small() + ["--out", str(out)]
    assert main(argv) == 1
    target = tmp_path / "elsewhere"
    target.write_bytes(b"a line without its newline" if name == attack_folder.JOURNAL
                       else (out / name).read_bytes())
    (out / name).unlink()
    (out / name).symlink_to(target)
    before = target.read_bytes()
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{name} is not a file of the folder" in err, err
    assert target.read_bytes() == before


def test_a_last_line_longer_than_any_event_is_refused_not_dropped(tmp_path, capsys):
    argv = small() + ["--out", str(tmp_path)]
    assert main(argv) == 1
    journal = tmp_path / attack_folder.JOURNAL
    whole = journal.read_bytes()
    journal.write_bytes(whole + b"x" * (attack_folder.LONGEST + 10))  # junk, no newline: not a run's cut line
    capsys.readouterr()
    assert main(argv) == 2
    assert f"line {len(whole.splitlines()) + 1} is not an event" in capsys.readouterr().err
    assert journal.read_bytes().startswith(whole) and len(journal.read_bytes()) > len(whole)


def test_a_journal_with_more_evaluations_than_its_budget_is_refused(tmp_path, capsys):
    argv = small() + ["--out", str(tmp_path)]
    assert main(argv) == 1
    journal = tmp_path / attack_folder.JOURNAL
    evaluations = [line for line in journal.read_text().splitlines(keepends=True) if line.startswith("e ")]
    assert len(evaluations) <= 100
    journal.write_text(journal.read_text() + "".join(evaluations[:101 - len(evaluations)]))
    capsys.readouterr()
    assert main(argv) == 2
    assert "holds more evaluations than a search of its budget (100 evaluations) makes (100)" in capsys.readouterr().err


def test_a_run_that_certifies_no_counterexample_leaves_none_of_an_earlier_run_in_the_folder(tmp_path, monkeypatch,
                                                                                          capsys):
    """The results are rewritten whole: a run whose finalists are not certified (here a check that says undecided,
    as a lower --limit precision does) said NOTHING FOUND in summary.json beside the counterexample.json and
    certificate.json of the run before it (or a certificate put there for another bound)."""
    argv = ARGV + ["--out", str(tmp_path), "--json"]
    assert main(argv) == 1
    assert (tmp_path / "counterexample.json").is_file() and (tmp_path / attack_folder.CERTIFICATE).is_file()
    real_check = engine.check

    def undecided(*args, **kwargs):
        result = real_check(*args, **kwargs)
        return engine.Result(engine.UNDECIDED, result.target, result.precision, result.comparisons, reason="capped")

    monkeypatch.setattr(engine, "check", undecided)
    capsys.readouterr()
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert not summary["violated"] and "certificate" not in summary["files"]
    assert not (tmp_path / "counterexample.json").exists() and not (tmp_path / attack_folder.CERTIFICATE).exists()
    assert json.loads((tmp_path / "summary.json").read_text())["violated"] is False


@pytest.mark.parametrize("key, value, option", [
    ("bound", "(1 - exp(-a*D**2/3))*D", ["--bound", "(1-exp(-a*D**2/3))*D"]),
    ("mask", "causal", ["--mask", "causal"]),
])
def test_parameters_edited_to_another_attack_do_not_replay_its_journal(tmp_path, capsys, key, value, option):
    """A point's digest named its shape and L only: attack.json edited to another bound (or mask), with the command
    of that attack, replayed every score of the first, and a bound false for L > 2.9 that a fresh search of the
    same budget finds was reported NOTHING FOUND after 300 evaluations, none of them its own."""
    first = ["attack", "--bound", "(1-exp(-a*D**2))*D", "--n", "2", "--d", "1", "--budget", "300"]
    assert main(first + ["--out", str(tmp_path)]) == 0
    parameters = tmp_path / attack_folder.PARAMETERS
    parameters.write_text(json.dumps({**json.loads(parameters.read_text()), key: value}))
    edited = first[:1] + (option if key == "bound" else first[1:3] + option) + first[3:] + ["--out", str(tmp_path)]
    capsys.readouterr()
    assert main(edited) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "journal.txt line 1 is not the evaluation this search makes" in err, err


def test_verify_of_the_folders_certificate_names_the_bound_it_certifies(tmp_path, capsys):
    """The re-check line points at certificate.json, which `certify verify` confirmed as "violated at 53 bits" only:
    one put in its place for another bound was confirmed in the same words."""
    assert main(ARGV + ["--out", str(tmp_path / "one"), "-q"]) == 1
    other = ["attack", "--bound", "(1-exp(-a*D**2/4))*D"] + ARGV[3:] + ["--out", str(tmp_path / "two"), "-q"]
    assert main(other) == 1
    capsys.readouterr()
    for folder, bound in (("one", "(1 - exp(-a*D**2/3))*D"), ("two", "(1 - exp(-a*D**2/4))*D")):
        assert main(["verify", str(tmp_path / folder / attack_folder.CERTIFICATE)]) == 0
        out = capsys.readouterr().out
        assert out.startswith("OK: ") and f"bound: {bound}" in out, out
        assert main(["verify", str(tmp_path / folder / attack_folder.CERTIFICATE), "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["target"] == f"bound: {bound}"


def test_keys_edited_into_the_parameters_are_listed_short(tmp_path, capsys, monkeypatch):
    """Keys edited into attack.json were each named whole in the refusal: a million made a line of 8.9 MB, a key of
    15 MB one of 35 MB (escaped character by character first, 2.9 s and 0.9 GB).  Ten are listed, each cut short."""
    out = tmp_path / "a1"
    assert main(small() + ["--out", str(out)]) == 1
    stored = json.loads((out / attack_folder.PARAMETERS).read_text())
    stored.update({f"k{i:04}": 0 for i in range(2000)}, **{"k\n\x1b" * 100_000: 0})
    (out / attack_folder.PARAMETERS).write_text(json.dumps(stored))
    written = []
    monkeypatch.setattr(errors, "one_line", lambda message, line=errors.one_line: written.append(len(message)) or
                        line(message))
    capsys.readouterr()
    assert main(small() + ["--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds another attack (different " in err and "k0000, k0001, " in err, err
    assert "(2001 in all)" in err and len(err) < 500 + len(str(out)) and max(written) < 1000, (len(err), max(written))
