"""`certify run -j N`: the sections on worker processes give the table, the report's files and the failures of a
run one after another; an interrupted run ends with the signal's status, no traceback and no process left."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

import pytest

from certify import suite
from certify.cli import main

import signalled

# Quick sections (seconds together), at least two so that -j 2 runs them on workers, from both ends of the order
QUICK = ["claims", "wu-masks-layernorm", "thesis", "proofs over regions"]
# A section that raises after its first row, then the command line (certify.cli.main)
_FAILING = """
import sys
from certify.cli import main
from certify.suite import thesis_counterexamples as section
real = section.section
def failing(run):
    rows = real(run)
    yield next(rows)
    raise ZeroDivisionError("a planted failure")
section.section = failing
sys.exit(main(sys.argv[1:]))
"""


def _certify(argv: list[str], script: str = "from certify.cli import entry; entry()") -> tuple[int, str, str]:
    process = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True,
                             timeout=signalled.WAIT_SECONDS)
    return process.returncode, process.stdout, process.stderr


def _only(titles: list[str]) -> list[str]:
    return [word for title in titles for word in ("--only", title)]


def _timeless(text: str, out) -> str:
    """The output with the report folder and every time in seconds (a row's, a section's, the run's) left out."""
    return re.sub(r"\d+(\.\d+)? s\b", "_ s", text.replace(str(out), "OUT"))


def test_two_jobs_give_the_table_rows_and_files_of_one(tmp_path):
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / jobs / "report"
        code, text, err = _certify(["run", "-j", jobs, *_only(QUICK), "--out", str(out)])
        rows = json.loads(_timeless((out / "results.json").read_text(), out))["rows"]  # a region proof's seconds
        files = sorted(str(path.relative_to(out)) for path in out.rglob("*"))
        outputs[jobs] = code, _timeless(text, out), rows, files, err
    assert outputs["1"][:4] == outputs["2"][:4]
    code, text, rows, files, err = outputs["2"]
    assert code == 0 and list(dict.fromkeys(row["section"] for row in rows)) == QUICK
    assert [line[3:-3] for line in text.splitlines() if line.startswith("== ")] == QUICK
    # the sections start by their cost, the largest first, and each says so with the sections running then
    costs = {module.TITLE: module.COST for module in suite.load_sections(QUICK)}
    started = re.findall(r"certify run \[\d+/4\] (.+?) \.\.\. \(running: (.+)\)", err)
    assert [title for title, _ in started] == sorted(QUICK, key=lambda title: -costs[title])
    assert all(title in running.split(", ") for title, running in started)
    assert "Traceback" not in err


@pytest.mark.parametrize("signum, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_an_interrupted_parallel_run_ends_with_its_status_and_leaves_no_process(tmp_path, signum, to_group):
    """Ctrl-C reaches every process of the terminal's group; `kill PID` only the command, which must end its
    workers itself.  Two sections of seconds each, interrupted once both workers are there."""
    out = tmp_path / "report"
    process = signalled.start(["run", "-j", "2", "--only", "attack", "--only", "thesis-dynamics", "--out", str(out),
                               "-q"])
    signalled.wait_for(lambda: signalled.group_size(process) >= 3, process)  # the command and its two workers
    if to_group:
        signalled.send_to_group(process, signum)
    else:
        process.send_signal(signum)
    code, text, err = signalled.finish(process)
    if code in (0, 1):
        pytest.skip("the run ended before it could be interrupted")
    assert code == 128 + signum
    signalled.interruption_line(err, signum)  # one line, no traceback of the command or of a worker
    assert signalled.group_ended(process)
    assert not (out / "results.json").exists()


def test_a_failing_section_on_a_worker_is_reported_as_in_one_process(tmp_path):
    """The rows before the failure, then an internal error (exit 4, never a verdict's code), in the section's
    place: the sections before it are printed whole, none after it."""
    outputs = {}
    for jobs in ("1", "2"):
        out = tmp_path / jobs / "report"
        code, text, err = _certify(["run", "-q", "-j", jobs, *_only(QUICK), "--out", str(out)], _FAILING)
        outputs[jobs] = code, _timeless(text, out), err
    assert outputs["1"] == outputs["2"]
    code, text, err = outputs["2"]
    assert code == 4 and err.startswith("certify: internal error in `certify run` (ZeroDivisionError: a planted "
                                        "failure)") and err.count("\n") == 1
    assert [line[3:-3] for line in text.splitlines() if line.startswith("== ")] == QUICK[:3]
    last = text[text.index("== thesis =="):]  # its first row (residual-far), not its second (expansive-v)
    assert "residual.far: residual-far" in last and "expansive" not in last


# The worker of the later section dies (DEATH: an exit, a kill) while the earlier one runs: the pool breaks under both
_DYING = """
import os, signal, sys, time
from certify.cli import main
from certify.suite import defaults, thesis_counterexamples
real = defaults.section
def slow(run):
    time.sleep(3)
    yield from real(run)
def dying(run):
    time.sleep(0.5)
    DEATH
    yield
defaults.section, thesis_counterexamples.section = slow, dying
sys.exit(main(sys.argv[1:]))
"""


def _worker_dies(tmp_path, death: str) -> tuple[int, str, str]:
    return _certify(["run", "-q", "-j", "2", "--only", "claims", "--only", "thesis", "--out",
                     str(tmp_path / "report")], _DYING.replace("DEATH", death))


def test_a_worker_that_died_is_not_blamed_on_another_section(tmp_path):
    """The pool breaks under every section running when one worker dies, and which one died is not known: the run
    blamed the first of them by its place (the worker that ran 'claims' died, of the worker running 'thesis').  A
    worker that exits is a bug (certify's workers return what their sections raise): an internal error, saying how
    the worker ended."""
    code, _, err = _worker_dies(tmp_path, "os._exit(1)")
    assert code == 4 and err.count("\n") == 1, err
    assert "'claims' died" not in err and "sections then running: claims, thesis" in err, err
    assert err.startswith("certify: internal error in `certify run` (RuntimeError: a worker process exited with "
                          "status 1,"), err


def test_a_worker_killed_from_outside_is_said_so_not_called_a_bug(tmp_path):
    """A worker killed by SIGKILL (the system's out-of-memory killer, kill -9: certify sends it to no worker it
    waits for) was reported as an internal error, "a bug in certify, please report it": one line says that a worker
    was killed, by which signal, and what was stopped, with the exit code of an internal error (no verdict)."""
    code, _, err = _worker_dies(tmp_path, "os.kill(os.getpid(), signal.SIGKILL)")
    assert code == 4 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("certify: a worker process was killed by SIGKILL from outside certify"), err
    assert "sections then running: claims, thesis" in err and "bug" not in err and "-j" in err, err


@pytest.mark.parametrize("jobs", ["0", "-2", "two"])
def test_jobs_must_be_a_positive_integer(capsys, jobs):
    assert main(["run", "--only", "claims", "-j", jobs]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("certify: error: argument -j/--jobs:")
