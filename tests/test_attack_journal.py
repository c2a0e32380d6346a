"""The journal of `certify attack --out DIR` as untrusted input: read no further than the search of its budget
could have written, and only lines of values the objective returns, each spelled as the journal writes it."""

from __future__ import annotations

import itertools
import os
import time

import pytest

from certify.cli import main
from certify.search import attack, attack_folder

LARGE_L = "(1-exp(-a*D**2/3))*D"  # false for L > 2.887...: the attack finds and certifies a violation
ARGV = ["attack", "--bound", LARGE_L, "--n", "2", "--d", "1", "--seed", "3"]


def attacked(tmp_path, budget: str, code: int = 1) -> list[str]:
    """The argv of a small attack of LARGE_L with `budget` into tmp_path, run once (exit `code`)."""
    argv = ARGV + ["--budget", budget, "--out", str(tmp_path)]
    assert main(argv) == code
    return argv


def files(folder) -> dict:
    """The folder's files: their bytes, or for a large one its size and first MiB."""
    def held(path):
        with open(path, "rb") as handle:
            return path.stat().st_size, handle.read(1 << 20)
    return {path.name: held(path) for path in folder.iterdir()}


def refused(argv, tmp_path, capsys) -> str:
    """The one line of stderr of a run refused (exit 2) that changed nothing in the folder."""
    before = files(tmp_path)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: ") and err.count("\n") == 1, err
    assert files(tmp_path) == before
    return err


@pytest.fixture
def slow_clock(monkeypatch):
    """A clock that advances 0.1 ms a reading: a time budget of 1 s is some thousands of evaluations, whatever
    the machine."""
    ticks = itertools.count()
    monkeypatch.setattr(time, "monotonic", lambda: next(ticks) * 1e-4)


def test_a_time_budget_ends_at_the_most_evaluations_a_search_makes(monkeypatch, slow_clock):
    """A time budget made no journal bounded: the search evaluated as long as the clock allowed (24 h at some
    4000 evaluations a second, 3 x 10^8 evaluations, 40 GB).  It ends at MAX_EVALUATIONS too, as an evaluation
    budget can ask no more."""
    assert attack.attack(bound=LARGE_L, n=2, d=1, budget="1s").evaluations > 1000
    monkeypatch.setattr(attack, "MAX_EVALUATIONS", 300)
    assert attack.attack(bound=LARGE_L, n=2, d=1, budget="1s").evaluations == 300


def test_a_time_budget_whose_clock_stands_still_ends(monkeypatch):
    """A clock that does not advance (a journal's readings can be anything) made the sweep's estimate of the
    evaluations left 10^9 a point: its grid of L asked for terabytes.  The search ends at MAX_EVALUATIONS."""
    monkeypatch.setattr(time, "monotonic", lambda: 0.0)
    monkeypatch.setattr(attack, "MAX_EVALUATIONS", 300)
    assert attack.attack(bound=LARGE_L, n=2, d=1, budget="1s").evaluations == 300


def test_clock_readings_in_the_journal_of_an_evaluation_budget_are_refused_unreplayed(tmp_path, capsys):
    """An evaluation budget never reads the clock: readings after its evaluations were scanned however many,
    then never replayed, and the journal was accepted."""
    argv = attacked(tmp_path, "100")
    journal = tmp_path / attack_folder.JOURNAL
    lines = len(journal.read_bytes().splitlines())
    with open(journal, "a") as handle:
        handle.write("t 1.0\n" * 50)
    err = refused(argv, tmp_path, capsys)
    assert f"line {lines + 1} is not an evaluation" in err, err


def test_a_time_budgets_journal_beyond_what_its_search_makes_is_refused(tmp_path, capsys, monkeypatch, slow_clock):
    monkeypatch.setattr(attack, "MAX_EVALUATIONS", 300)
    argv = attacked(tmp_path, "1s")
    journal = tmp_path / attack_folder.JOURNAL
    events = journal.read_text().splitlines(keepends=True)
    readings = sum(line.startswith("t ") for line in events)
    assert sum(line.startswith("e ") for line in events) == 300 and readings <= 600
    last = [line for line in events if line.startswith("t ")][-1]
    journal.write_text("".join(events) + last * (601 - readings))  # readings a resumed search never replays
    assert "holds more clock readings than a search of its budget (1 s) takes (600)" in refused(argv, tmp_path, capsys)
    first = next(line for line in events if line.startswith("e "))
    journal.write_text("".join(events) + first)  # one evaluation more than a search makes
    assert "holds more evaluations than a search of its budget (1 s) makes (300)" in refused(argv, tmp_path, capsys)


def test_a_journal_larger_than_its_budget_can_write_is_refused_unread(tmp_path, capsys, monkeypatch):
    argv = attacked(tmp_path, "100")
    journal = tmp_path / attack_folder.JOURNAL
    os.truncate(journal, 1 << 40)  # a terabyte (sparse): read line by line it took hours to refuse

    def unread(*args, **kwargs):
        raise AssertionError("the journal was read")

    monkeypatch.setattr(attack_folder.Journal, "_scan", unread)
    err = refused(argv, tmp_path, capsys)
    assert f"{attack_folder.JOURNAL} is {1 << 40} bytes, more than a search of its budget (100 evaluations) " \
           "writes" in err, err


def edited(line: str, field: int, text: str) -> str:
    """An evaluation line with its field `field` (1: the score ... 4: L) written as `text`."""
    words = line.split()
    words[field + 1] = text
    return " ".join(words)


@pytest.mark.parametrize("field, text", [
    (1, "nan"),  # a score the objective never returns (an unscored point is -inf)
    (3, "nan"),  # an exponent: a finite number or "-"
    (4, "nan"),  # L
    (2, "nan"),  # log(lhs/rhs) is NaN only where the bound is undefined, a point of score -inf without exponent
    (4, "1e999"),  # inf, not as repr writes it ("inf")
    (3, "1e+999"),
    (1, "1" * 100),  # 1e99, which repr writes "1e+99"
    (4, "1e+3000"),  # repr writes 3 digits of an exponent at most
])
def test_an_evaluation_the_objective_never_returns_or_that_is_not_written_as_the_journal_writes_is_refused(
        tmp_path, capsys, field, text):
    argv = attacked(tmp_path, "100")
    journal = tmp_path / attack_folder.JOURNAL
    lines = journal.read_text().splitlines()
    lines[4] = edited(lines[4], field, text)
    journal.write_text("\n".join(lines) + "\n")
    assert "line 5 is not an event" in refused(argv, tmp_path, capsys)


def test_an_undefined_point_as_the_objective_returns_it_is_replayed(tmp_path, capsys):
    """log(lhs/rhs) = NaN with a score of -inf and no exponent: the point where the bound is undefined."""
    argv = attacked(tmp_path, "100")
    journal = tmp_path / attack_folder.JOURNAL
    lines = journal.read_text().splitlines()
    # the first point near the extremal structure, at L = 0.116: kept only were it violating, so the search goes on
    lines[0] = edited(edited(edited(lines[0], 1, "-inf"), 2, "nan"), 3, "-")
    journal.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(argv + ["--json"]) == 1
    assert '"undefined": 1' in capsys.readouterr().out
