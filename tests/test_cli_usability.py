"""The command line as a new user meets it: help on every command and option, progress on stderr
(-q silences it, --progress forces it), tables that fit 100 columns, the run table's expected
column, check's margin enclosure, JSON output, old option spellings, hints for common mistakes,
shell completion, and a quiet exit when the reader of stdout goes away."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import mpmath as mp
import pytest
from flint import arb

from certify import signals
from certify.cli import build_parser, main
from certify.suite import cases

import signalled

ROOT = Path(__file__).resolve().parents[1]
TABLE_WIDTH = 100


def write(tmp_path, config, name="config.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


# ------------------------------------------------------------------ help text


def _missing_help(parser: argparse.ArgumentParser, path: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                if not (helps.get(name) or "").strip():
                    yield f"{path} {name}: no help line in the command list"
                if not (sub.description or "").strip():
                    yield f"{path} {name}: no description for --help"
                yield from _missing_help(sub, f"{path} {name}")
        elif action.help != argparse.SUPPRESS and not (action.help or "").strip():
            yield f"{path}: {'/'.join(action.option_strings) or action.dest} has no help"


def test_every_command_and_option_has_help():
    assert list(_missing_help(build_parser(), "certify")) == []


def test_the_walk_notices_a_missing_help():
    parser = build_parser(only="graph")
    parser._subparsers._group_actions[0].choices["graph"].add_argument("--undocumented")
    assert list(_missing_help(parser, "certify")) == ["certify graph: --undocumented has no help"]


def _help(argv, capsys) -> str:
    with pytest.raises(SystemExit):
        main(argv + ["--help"])
    return " ".join(capsys.readouterr().out.split())


def test_the_commands_that_read_a_configuration_say_they_take_npz(capsys):
    # trajectory read an .npz file as check does, while its help named JSON alone
    for command in ("check", "trajectory"):
        assert "configuration file (JSON, or numpy .npz)" in _help([command], capsys), command


def test_the_help_states_the_exit_codes(capsys):
    """The contract's codes, Ctrl-C's 130 among them, on `certify --help`; counterexample's own (never 1, the
    code of a violation: an unconfirmed counterexample is undecided) on its help and every name's; the 3 of a
    verdict the checker does not confirm on prove's, trajectory's and init's."""
    top = _help([], capsys)
    assert all(code in top for code in ("0 holds", "1 violated", "2 bad input", "3 undecided", "4 internal error",
                                        "130 interrupted", "143 SIGTERM"))
    from certify.studies import counterexamples
    for argv in [["counterexample"]] + [["counterexample", name] for name in counterexamples.REGISTRY]:
        text = _help(argv, capsys)
        assert "Exit 0 when the counterexample is certified and the independent checker confirms it, 3 otherwise" \
            in text and "Exit 1" not in text and "1 when" not in text, argv
    for command in ("prove", "trajectory", "init"):  # a verdict the checker does not confirm exits 3
        text = _help([command], capsys)
        assert re.search(r"3 (otherwise|undecided[^.]*not confirmed)", text), command


def test_a_command_whose_help_gives_sigterms_status_gives_sighups_too(capsys):
    """SIGHUP stops every command as Ctrl-C and SIGTERM do (certify.signals), with status 129: attack's, prove's and
    sample's help named 143 for SIGTERM and left SIGHUP out."""
    for command in ("attack", "prove", "sample"):
        text = _help([command], capsys)
        assert "143" in text and "129" in text and "SIGHUP" in text, command


def _output_options(parser: argparse.ArgumentParser, path: tuple = ()):
    """(command words, option) for every option that names where output goes."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _output_options(sub, path + (name,))
        elif action.dest in ("out", "counterexample") and action.option_strings:
            yield path, action.option_strings[0]


def test_an_empty_output_path_is_refused_by_every_command():
    """`--out "$CERT"` with CERT unset: check and trajectory wrote nothing and exited 0, sample and
    model took the current folder."""
    from certify.errors import BadInput
    found = list(_output_options(build_parser()))
    assert {words[0] for words, _ in found} >= {"check", "sample", "attack", "trajectory", "prove", "counterexample",
                                                "run", "reproduce", "model"}
    for words, option in found:
        with pytest.raises(BadInput, match="empty path"):
            build_parser(only=words[0]).parse_args([*words, f"{option}= "])


@pytest.mark.parametrize("argv", [["check", "config.json", "--claim="], ["sample", "--claim", " "],
                                  ["attack", "--claim="], ["prove", ""]])
def test_an_empty_claim_is_refused_not_read_as_the_default(argv):
    """`--claim "$CLAIM"` with CLAIM unset decided collapse.global and printed its verdict."""
    from certify.errors import BadInput
    with pytest.raises(BadInput, match="empty claim id"):
        build_parser(only=argv[0]).parse_args(argv)


def _strict(text: str):
    """JSON as certify's own reader takes it: no NaN, no Infinity."""
    return json.loads(text, parse_constant=lambda constant: pytest.fail(f"{constant} in the JSON output"))


@pytest.mark.parametrize("argv", [
    ["check", str(ROOT / "examples" / "layer.json"), "--bound", "exp(1e4000)*D", "--json"],  # rhs overflows float64
    ["check", str(ROOT / "examples" / "layer.json"), "--bound", "log(a - a)", "--json"],  # a ball around 0: nan
    ["attack", "--bound", "D**-1024", "--n", "2", "--d", "1", "--budget", "50", "--json"],  # ratios of inf
])
def test_json_outputs_hold_no_nan_or_infinity(argv, capsys):
    assert main(argv) in (0, 1, 3)
    data = _strict(capsys.readouterr().out)
    assert data["verdict"] in ("holds", "violated", "undecided") if argv[0] == "check" else "violated" in data


def test_json_files_hold_null_where_a_float_is_not_finite(tmp_path):
    from certify.core import jsonfile
    path = jsonfile.write({"a": float("inf"), "b": [float("nan"), 1.5, (float("-inf"),)], "c": "inf"}, tmp_path / "x.json")
    assert _strict(path.read_text()) == {"a": None, "b": [None, 1.5, [None]], "c": "inf"}


def test_every_command_takes_quiet_and_progress():
    for name in ("run", "claims", "proofs", "model", "init"):
        assert build_parser(only=name).parse_args([name, "-q"]).progress is False
        assert build_parser(only=name).parse_args([name]).progress is None  # bars only on a terminal
    args = build_parser(only="counterexample").parse_args(["counterexample", "residual-far", "--progress"])
    assert args.progress is True


# ------------------------------------------------------------------ progress


QUICK = {
    "check": ["check", str(ROOT / "examples" / "layer.json")],
    "init": ["init", "--d", "4,8", "--n", "3"],
    "proofs": ["proofs", "init_scaling"],
    "trajectory": ["trajectory", str(ROOT / "examples" / "layer.json"), "--layers", "3"],
    "attack": ["attack", "--n", "2", "--d", "1", "--budget", "60"],
    "prove": ["prove", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "20"],
}


@pytest.mark.parametrize("name", sorted(QUICK))
def test_progress_on_stderr_forced_and_silenced(name, capsys):
    code = main(QUICK[name] + ["--progress"])
    forced = capsys.readouterr()
    assert f"certify {name}" in forced.err  # the bar, named after the command
    assert f"certify {name}" not in forced.out
    assert main(QUICK[name] + ["-q"]) == code
    quiet = capsys.readouterr()
    assert quiet.err == "" and quiet.out
    assert main(QUICK[name]) == code  # stderr is not a terminal here: no bar by default
    assert f"certify {name}" not in capsys.readouterr().err


def test_check_shows_its_stages(capsys):
    """check of 1024 tokens in dimension 256 spent 12 s in silence: its evaluation and the checker are
    shown as they begin, at each precision."""
    assert main(QUICK["check"] + ["--progress"]) == 0
    err = capsys.readouterr().err
    assert "certify check, its evaluation at 53 bits" in err and "the checker, at 53 bits" in err, err


def test_sample_progress_and_its_old_switch(tmp_path, capsys):
    common = ["sample", "--n", "3", "--d", "2", "--count", "6", "--workers", "1"]
    assert main(common + ["--out", str(tmp_path / "a"), "--progress"]) == 0
    assert "config" in capsys.readouterr().err  # tqdm's unit: configurations decided
    assert main(common + ["--out", str(tmp_path / "b"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_a_bar_that_slows_down_is_still_redrawn(capsys):
    """tqdm's default skips redrawing until as many steps as passed between its last two draws have passed
    again: a region proof's bar, fast through the first 90 percent of the volume, stood at 93.1% for the last
    7 s of its search.  A bar redraws once its interval has passed, however little it moved."""
    from certify.core import progress

    bar = progress.bar(total=100, show=True, mininterval=0, desc="slowing")
    bar.update(50)
    time.sleep(0.01)
    bar.update(1)
    drawn = capsys.readouterr().err
    bar.close()
    assert "51/100" in drawn, drawn


# ------------------------------------------------------------------ certify run


def test_run_table_expected_column_and_section_lines(tmp_path, capsys):
    assert main(["run", "--only", "claims", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert max(len(line) for line in lines) <= TABLE_WIDTH
    assert "expected" in lines[0] and "verdict" in lines[0]
    results = json.loads((tmp_path / "results.json").read_text())
    rows = results["rows"]
    assert all(row["expected"] for row in rows)
    intended = [row for row in rows if row["verdict"] in ("violated", "undecided")]
    assert len(intended) >= 4
    for row in intended:  # every violated or undecided row is an intended one, and says so
        assert row["ok"] and row["expected"] == row["verdict"] and row["intended"].startswith("intended:")
    assert "intended: a planted false bound" in captured.out and "intended: an exact equality" in captured.out
    assert f"certify run [1/1] claims: {len(rows)} rows in" in captured.err
    assert main(["run", "--only", "claims", "--out", str(tmp_path), "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_run_table_wraps_long_cells_in_their_column():
    from certify.cli import run as run_command
    from certify.cli import table
    from certify.suite import Row

    row = Row(section="s", case="a case with a very long name " * 4, verdict="violated", detail="detail " * 30,
              expected="violated")
    lines = table.rows([run_command.cells(row)], run_command.WIDTHS)
    assert len(lines) > 3 and max(len(line) for line in lines) <= TABLE_WIDTH
    verdict_at = lines[0].index("violated")
    assert all(line[verdict_at - 2:verdict_at] == "  " for line in lines)  # the case never spills over


# ------------------------------------------------------------------ certify check


def test_check_shows_the_margin_enclosure_when_the_sides_agree(tmp_path, capsys):
    path = write(tmp_path, cases.antipodal(500.0))
    assert main(["check", path]) == 0
    out = capsys.readouterr().out
    margin_line = next(line for line in out.splitlines() if "margin rhs - lhs" in line)
    text = margin_line.split("= ", 1)[1].split("  [")[0]
    margin = arb(text)
    assert margin > 0 and "e-434" in text and "+/-" in text
    # independent value: two antipodal tokens with a = 500, D = 2 (a D^2 = 2000) have D(PX) = tanh(a D^2 / 4) D
    # and rhs = (1 - exp(-a D^2)) D, so the margin is 2 (1 - tanh(500) - exp(-2000))
    with mp.workdps(500):
        expected = 2 * (1 - mp.tanh(500) - mp.exp(-2000))
        assert margin.contains(arb(mp.nstr(expected, 40)))
    assert "agree in about their first 434 digits" in out


@pytest.mark.parametrize("factor, code, sign", [("1 - 3e-15", 1, -1), ("1 + 3e-15", 0, 1)])
def test_check_prints_a_decided_margin_without_a_sure_digit_with_its_sign(tmp_path, capsys, factor, code, sign):
    """A violated margin inside [-6.65e-15, -2.67e-15] printed "[+/- 6.65e-15]", its sign hidden: the line now
    gives its interval, rounded outward, and --json the same ends under "ends"; both hold the exact margin
    (two antipodal tokens, a = 1, D = 2: D(PX) = tanh(1) 2, the bound's factor times it)."""
    path = write(tmp_path, {"X": [[1], [-1]], "A": [[1]]})
    bound = f"tanh(a*D**2/4)*D*({factor})"
    assert main(["check", path, "--bound", bound]) == code
    line = next(line for line in capsys.readouterr().out.splitlines() if "margin rhs - lhs" in line)
    shown = re.fullmatch(r"  margin rhs - lhs = \[(\S+), (\S+)\]  \[53 bits\]", line)
    assert shown, line
    assert main(["check", path, "--bound", bound, "--json"]) == code
    margin = json.loads(capsys.readouterr().out)["margin"]
    assert margin["ends"] == list(shown.groups()) and margin["text"].startswith("[+/-")  # arb's text: no digit
    with mp.workdps(60):
        lo, hi = (mp.mpf(end) for end in shown.groups())
        exact = sign * 6 * mp.mpf(10) ** -15 * mp.tanh(1)
        assert lo <= exact <= hi and sign * lo > 0 and sign * hi > 0


def test_check_prints_the_sides_with_enough_digits_to_differ(tmp_path, capsys):
    path = write(tmp_path, cases.near_consensus())
    assert main(["check", path]) == 0
    out = capsys.readouterr().out.splitlines()
    lhs = next(line for line in out if line.startswith("  lhs")).split("= ", 1)[1]
    rhs = next(line for line in out if line.startswith("  rhs")).split("= ", 1)[1]
    assert lhs.split(" +/-")[0] != rhs.split(" +/-")[0]
    assert arb(lhs) < arb(rhs)


def test_check_json_gives_numbers_and_exact_text(tmp_path, capsys):
    path = write(tmp_path, cases.antipodal(500.0))
    assert main(["check", path, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    for side in ("lhs", "rhs", "margin"):
        assert isinstance(info[side]["value"], float) and isinstance(info[side]["text"], str)
    assert info["lhs"]["value"] == pytest.approx(2.0) and arb(info["lhs"]["text"]).contains(arb(info["lhs"]["value"]))
    assert info["margin"]["log10_abs"] == pytest.approx(-433.69, abs=0.01)
    lo, hi = (arb(end) for end in info["margin"]["ends"])  # outward, with digits where binary64 underflows
    assert 0 < lo <= arb(info["margin"]["text"]) <= hi and info["margin"]["interval"] == [0.0, 5e-324]
    assert arb(info["margin"]["text"]) > 0 and info["agreeing_digits"] == 434


# ------------------------------------------------------------------ certify model


def test_model_table_fits_and_out_names_its_files(tmp_path, capsys):
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    from tiny_bert import write_model

    folder = write_model(tmp_path / "tiny")
    out = tmp_path / "report"
    assert main(["model", str(folder), "--text", "the cat sat on the mat", "--out", str(out), "--progress"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert max(len(line) for line in lines if not line.startswith("  wrote ")) <= TABLE_WIDTH  # paths may be long
    assert any(line.split()[:2] == ["head", "a"] for line in lines)
    wrote = [line.split("wrote ", 1)[1] for line in lines if line.startswith("  wrote ")]
    assert sorted(Path(path).name for path in wrote) == ["model_attention.png", "model_certified.json",
                                                         "model_configuration.png", "model_regimes.png"]
    assert all(Path(path).is_file() for path in wrote) and "certify model" in captured.err
    assert main(["model", str(folder), "--text", "the cat sat on the mat", "--out", str(out), "--json", "-q"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)  # stdout stays the report; the files are named on stderr
    assert captured.err.count("wrote ") == 4


# ------------------------------------------------------------------ JSON on verify, counterexample, reproduce


def test_verify_and_counterexample_json(tmp_path, capsys):
    cert = tmp_path / "rf.json"
    assert main(["counterexample", "residual-far", "--out", str(cert), "--json"]) == 0
    outcome = json.loads(capsys.readouterr().out)
    assert outcome["verdict"] == "certified" and outcome["confirmed"] and outcome["certificate"] == str(cert)
    assert main(["verify", str(cert), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["ok"] is True and verdict["certificate"] == str(cert)
    tampered = json.loads(cert.read_text())
    tampered["verdict"] = "refuted" if tampered["verdict"] != "refuted" else "certified"
    cert.write_text(json.dumps(tampered))
    code = main(["verify", str(cert), "--json"])
    assert code in (1, 2)
    if code == 1:
        assert json.loads(capsys.readouterr().out)["ok"] is False


def test_verify_a_campaign_as_json(tmp_path, capsys):
    folder = tmp_path / "c"
    assert main(["sample", "--n", "3", "--d", "2", "--count", "6", "--workers", "1", "--out", str(folder), "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", str(folder), "--json", "--workers", "1", "--progress"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["ok"] and report["records"] == 6 and report["problems"] == []
    assert "certify verify" in captured.err


def test_verify_of_a_trajectory_or_run_folder_names_what_to_verify_in_it(tmp_path, capsys):
    """`certify verify DIR` of the folder `trajectory --out` or `run --out` wrote said only "neither a certificate
    nor a campaign folder"; it names the certificate to verify, or the page that lists them."""
    traj, report = tmp_path / "traj", tmp_path / "report"
    assert main(["trajectory", str(ROOT / "examples/layer.json"), "--layers", "2", "--out", str(traj), "-q"]) == 0
    assert main(["run", "--only", "claims", "--out", str(report), "-q"]) == 0
    capsys.readouterr()
    assert main(["verify", str(traj)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"certify verify {traj / 'trajectory-certificate.json'}" in err, err
    assert main(["verify", str(traj / "trajectory-certificate.json")]) == 0  # the command named confirms
    capsys.readouterr()
    assert main(["verify", str(report)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`certify run`" in err and str(report / "index.html") in err, err
    assert main(["verify", str(tmp_path / "traj" / "..")]) == 2  # a folder of neither kind: as before
    assert "neither a certificate nor a campaign or corpus run folder" in capsys.readouterr().err


def test_run_refuses_to_write_its_report_into_a_campaign_or_an_attack_folder(tmp_path, capsys):
    """`certify run --out` of a campaign's (or attack's) folder wrote its report page over the campaign's
    index.html and its results beside the records: refused before any work, the folder unchanged."""
    campaign, attack = tmp_path / "c", tmp_path / "a"
    assert main(["sample", "--n", "3", "--d", "2", "--count", "4", "--workers", "1", "--out", str(campaign), "-q"]) == 0
    assert main(["attack", "--n", "2", "--d", "1", "--budget", "50", "--out", str(attack), "-q"]) == 0
    for folder, kind in ((campaign, "a campaign or corpus run (its manifest.json)"), (attack, "an attack (its attack.json)")):
        before = {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        capsys.readouterr()
        assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1 and f"{folder} holds {kind}" in captured.err
        assert {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()} == before


@pytest.mark.parametrize("files", [{"index.html": "<p>my site</p>"}, {"results.json": '{"mine": 1}'},
                                   {"index.html": "<p>my site</p>", "results.json": "[1, 2]"}],
                         ids=["page", "results", "both"])
def test_run_refuses_to_write_over_a_page_or_results_it_did_not_write(tmp_path, capsys, files):
    """`certify run --out` of an ordinary folder (a web site's) wrote its index.html and results.json over the ones
    there: refused before any work, the folder unchanged; a folder of an earlier `certify run` is written again."""
    folder = tmp_path / "site"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert f"{folder} holds" in captured.err and "not written by certify run" in captured.err, captured.err
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    assert all((folder / name).read_text() == text for name, text in files.items())


def test_run_reads_the_results_it_would_write_over_under_the_readers_limits(tmp_path, capsys):
    """An --out folder's results.json was read whole by json.loads to tell whether a run wrote it: 64 MiB of
    `[{},{},...]` took 1.8 GB.  It is read under the strict reader's limits, and one past them is no run's (here 4.2
    million colons in a string, above 64 MiB's 4 Mi of arrays, objects and keys)."""
    folder = tmp_path / "report"
    folder.mkdir()
    many = {"rows": [], "counts": {}, "unexpected": [], "note": ":" * 4_200_000}
    (folder / "results.json").write_text(json.dumps(many))
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{folder} holds results.json not written by certify run" in err, err


@pytest.mark.parametrize("name", ["index.html", "results.json", "claims", "claims/collapse_global--biased-n6-d4.json"])
def test_run_refuses_a_link_where_it_writes_and_leaves_what_it_names_alone(tmp_path, capsys, name):
    """A report folder whose page, results, a section's folder or a certificate in it was a link had the file (or
    folder) it names elsewhere written over by the next `certify run`: refused before any work, in one line."""
    folder = tmp_path / "report"
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0
    elsewhere = tmp_path / "elsewhere"
    (folder / name).rename(elsewhere)
    (folder / name).symlink_to(elsewhere)
    before = {str(p): p.read_bytes() for p in sorted([elsewhere, *elsewhere.rglob("*")]) if p.is_file()}
    capsys.readouterr()
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert f"{folder / name} is a link" in captured.err, captured.err
    assert {str(p): p.read_bytes() for p in sorted([elsewhere, *elsewhere.rglob("*")]) if p.is_file()} == before


@pytest.mark.parametrize("name, make", [("results.json", Path.mkdir), ("index.html", os.mkfifo)],
                         ids=["folder", "pipe"])
def test_run_refuses_a_page_or_results_that_is_no_file(tmp_path, capsys, name, make):
    """A folder named results.json beside a run's page was refused as "holds index.html not written by certify run";
    a named pipe named index.html was removed as an earlier run's page (a run removes that as it begins)."""
    folder = tmp_path / "report"
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0
    (folder / name).unlink()
    make(folder / name)
    capsys.readouterr()
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{folder} holds {name} not written by certify run" in err, err
    assert (folder / name).exists() and not (folder / name).is_file()


def test_run_writes_again_into_the_folder_of_an_earlier_run(tmp_path, capsys):
    folder = tmp_path / "report"
    for _ in range(2):
        assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0
    assert (folder / "index.html").is_file() and (folder / "results.json").is_file()


def test_a_run_stopped_before_its_end_leaves_no_page_of_an_earlier_run(tmp_path, capsys, monkeypatch):
    """The sections rewrite what an earlier run's page describes (the campaigns restart): a run stopped midway left
    that page, saying holds of a campaign's 2000 configurations beside the 85 the folder then kept."""
    from certify.suite import defaults

    folder = tmp_path / "report"
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0
    section = defaults.section

    def stopped(run):
        yield next(iter(section(run)))
        raise KeyboardInterrupt

    monkeypatch.setattr(defaults, "section", stopped)
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 130
    assert not (folder / "index.html").exists() and not (folder / "results.json").exists()
    monkeypatch.setattr(defaults, "section", section)
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0  # the folder is still a run's
    assert (folder / "index.html").is_file() and (folder / "results.json").is_file()


def _contents(folder: Path) -> dict:
    return {str(p): p.read_bytes() if p.is_file() else None for p in sorted(folder.rglob("*"))}


def test_a_run_into_a_folder_another_run_holds_is_refused_before_it_touches_it(tmp_path, capsys):
    """Two `certify run --out F` at once interleaved: the second withdrew the first's page and results and wrote
    its own between the first's sections.  A run holds F's lock (.lock, flock) for its whole life; the second is
    refused in one line before any work, F unchanged (the earlier run's page and results still there)."""
    from certify.jobs.store import locked

    folder = tmp_path / "report"
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0
    capsys.readouterr()
    held = locked(folder, shared=False, busy="held")  # as the run that writes F holds it
    before = _contents(folder)
    try:
        assert main(["run", "--only", "thesis", "--out", str(folder), "-q"]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1, captured.err
        assert captured.err.startswith(f"certify: error: {folder} is in use by another certify process"), captured.err
        assert _contents(folder) == before
    finally:
        held.close()
    assert main(["run", "--only", "thesis", "--out", str(folder), "-q"]) == 0  # released: the next run writes F


def test_a_run_refused_while_another_runs_and_the_next_after_it_was_killed(tmp_path, capsys):
    """A second run is refused while the first writes F (its sections running); the first killed (SIGKILL, its
    workers with it), the system has released its lock and the next run writes F."""
    folder = tmp_path / "report"
    first = signalled.start(["run", "--only", "sampling", "--out", str(folder), "-q"])
    try:
        signalled.wait_for(signalled.files_in(folder, "sampling/*/chunks/*.jsonl"), first)
        if first.poll() is not None:
            pytest.skip("the first run ended before the second started")
        assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is in use by another certify process" in err, err
        assert not (folder / "claims").exists()
    finally:
        signalled.send_to_group(first, signal.SIGKILL)
        signalled.finish(first)
    assert signalled.group_ended(first)
    assert main(["run", "--only", "claims", "--out", str(folder), "-q"]) == 0


def test_check_refuses_to_write_its_certificate_over_its_configuration(tmp_path, capsys, monkeypatch):
    """`certify check C.json --out C.json` replaced the configuration by its certificate: refused, C unchanged."""
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "C.json"
    config.write_bytes((ROOT / "examples/layer.json").read_bytes())
    before = config.read_bytes()
    for out in ("C.json", "./C.json", str(config)):
        assert main(["check", "C.json", "--out", out]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        assert f"--out {out} is the file of CONFIG" in captured.err, captured.err
        assert config.read_bytes() == before
    assert main(["check", "C.json", "--out", "cert.json"]) == 0 and main(["verify", "cert.json"]) == 0


def test_verify_of_a_configuration_names_the_command_that_decides_it(tmp_path, capsys):
    """An attack's best.json or an example given to `certify verify` said only "not a certify certificate"."""
    config = ROOT / "examples/layer.json"
    assert main(["verify", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith(f"; it is a configuration, which certify check {config} decides\n")
    other = tmp_path / "summary.json"
    other.write_text('{"count": 3}')
    assert main(["verify", str(other)]) == 2  # neither: no hint
    assert capsys.readouterr().err.endswith("(format 'certify-certificate/1' expected)\n")


def test_verify_of_a_campaigns_or_a_trajectorys_summary_names_what_to_verify(tmp_path, capsys):
    """summary.json of a campaign, trajectory.json or an attack's summary said only "not a certify certificate"."""
    campaign = tmp_path / "s"
    assert main(["sample", "--n", "2", "--d", "1", "--count", "2", "--out", str(campaign), "--workers", "1", "-q"]) == 0
    trajectory = tmp_path / "t"
    assert main(["trajectory", str(ROOT / "examples/layer.json"), "--layers", "2", "--out", str(trajectory), "-q"]) == 0
    capsys.readouterr()
    for given, hint in ((campaign / "summary.json", f"certify verify {campaign}"),
                        (trajectory / "trajectory.json", f"certify verify {trajectory / 'trajectory-certificate.json'}")):
        assert main(["verify", str(given)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.endswith(f"{hint}\n"), err
        assert main(hint.split()[1:]) == 0
        capsys.readouterr()


def test_verify_of_any_file_inside_a_campaign_folder_names_the_folder(tmp_path, capsys):
    """index.html, a chunk (JSON lines), the histograms of a campaign given to `certify verify` said only "not valid
    JSON" or "not UTF-8 text", while its summary.json named the folder to verify: every file in it (also in its
    chunks/) does."""
    campaign = tmp_path / "s"
    assert main(["sample", "--n", "4", "--d", "3", "--count", "12", "--out", str(campaign), "--workers", "1", "-q"]) == 0
    capsys.readouterr()
    chunk = max((campaign / "chunks").iterdir(), key=lambda path: path.read_text().count("\n"))
    assert chunk.read_text().count("\n") >= 2  # JSON lines, not one JSON value
    for given, why in ((campaign / "index.html", "not valid JSON"), (chunk, "not valid JSON"),
                       (campaign / "histograms.png", "not UTF-8 text")):
        assert main(["verify", str(given)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and err.endswith(f"certify verify {campaign}\n"), err
    lone = tmp_path / "index.html"
    lone.write_text("<html></html>")
    assert main(["verify", str(lone)]) == 2  # in no job's folder: no hint
    assert capsys.readouterr().err.endswith("column 1)\n")


def test_verify_of_another_file_beside_a_certificate_names_no_certificate(tmp_path, capsys):
    """Any JSON that was not a certificate, in a folder holding trajectory-certificate.json (a list, a user's
    notes), was answered "the certificate beside it: certify verify .../trajectory-certificate.json", a file it
    has nothing to do with; the hint is for the files written beside that certificate."""
    trajectory = tmp_path / "t"
    assert main(["trajectory", str(ROOT / "examples/layer.json"), "--layers", "2", "--out", str(trajectory), "-q"]) == 0
    notes = trajectory / "notes.json"
    notes.write_text("[]")
    capsys.readouterr()
    assert main(["verify", str(notes)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "beside it" not in err and err.endswith("expected)\n"), err


def test_reproduce_json(tmp_path, capsys):
    assert main(["reproduce", "wu-fig1", "--out", str(tmp_path), "--json", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["figure"] == "wu-fig1" and Path(data["files"]["json"]).is_file()
    assert json.loads(Path(data["files"]["json"]).read_text())["figure"] == "wu-fig1"


# ------------------------------------------------------------------ consistent options


def test_old_spellings_still_work_and_are_hidden():
    sample = build_parser(only="sample")
    new = sample.parse_args(["sample", "--n", "2", "--d", "1", "--count", "1", "--out", "x", "--l-range", "1", "9"])
    old = sample.parse_args(["sample", "--n", "2", "--d", "1", "--count", "1", "--out", "x", "--L-range", "1", "9"])
    assert new.l_range == old.l_range == [1.0, 9.0]
    sub = sample._subparsers._group_actions[0].choices["sample"]
    assert "--l-range" in sub.format_help() and "--L-range" not in sub.format_help()
    model = build_parser(only="model")
    assert model.parse_args(["model", "--bits", "128"]).start_prec == 128
    assert model.parse_args(["model", "--start-prec", "128"]).start_prec == 128
    help_text = model._subparsers._group_actions[0].choices["model"].format_help()
    assert "--max-prec" in help_text and "--bits" not in help_text
    attack = build_parser(only="attack")
    assert attack.parse_args(["attack", "--max-prec", "300", "--L-range", "2", "3"]).max_prec == 300


def test_attack_max_prec_is_used(capsys):
    # the cap is checked before the search (a candidate found later would need it)
    assert main(["attack", "--n", "2", "--d", "1", "--budget", "50", "--max-prec", "8"]) == 2
    assert "certify: error:" in capsys.readouterr().err


# ------------------------------------------------------------------ hints


def test_hints_for_common_mistakes(tmp_path, capsys):
    path = write(tmp_path, {"X": [[1, 0], [0, 1], [-1, 0]], "A": [[1, 0.5], [0, 1]]})
    assert main(["check", path, "--bound", "(1-exp(-a*D^2))*D"]) == 2
    assert "use ** for powers" in capsys.readouterr().err
    assert main(["check", path, "--claim", "collapse.globl"]) == 2
    assert "did you mean collapse.global?" in capsys.readouterr().err
    assert main(["prove", "collapse.tnh", "--n", "2", "--radius", "1", "--norm", "1"]) == 2
    assert "did you mean collapse.tanh?" in capsys.readouterr().err
    assert main(["chek", path]) == 2
    assert "did you mean check?" in capsys.readouterr().err
    with_v = write(tmp_path, {"X": [[1, 0], [0, 1]], "A": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]}, "v.json")
    assert main(["check", with_v]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "claims that apply to this configuration: value.bounded" in err
    for claim_id in err.split("claims that apply to this configuration: ")[1].strip().split(", "):
        assert main(["check", with_v, "--claim", claim_id, "--max-prec", "256"]) in (0, 1, 3)
    capsys.readouterr()


def test_a_misspelt_choice_is_refused_with_the_closest_one(capsys):
    """argparse's choices (a counterexample's or figure's name, --format) were refused with the list alone."""
    for argv, meant in ((["counterexample", "residual_far"], "residual-far"), (["reproduce", "wu_fig2"], "wu-fig2"),
                        (["counterexample", "expansive"], "expansive-v")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"did you mean {meant}? choose from " in err and "'wu-fig1'" in err, err
    assert main(["completion", "fish"]) == 2  # nothing close: the list alone
    err = capsys.readouterr().err
    assert "did you mean" not in err and "choose from 'bash', 'zsh', 'tcsh'" in err, err


def test_usage_errors_say_certify_once(capsys):
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("certify:") == 1 and "certify check --help" in err


# ------------------------------------------------------------------ completion and pipes


@pytest.mark.parametrize("shell", ["bash", "zsh", "tcsh"])
def test_completion_scripts(shell, capsys):
    assert main(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "certify" in script and "trajectory" in script
    if shell == "bash":
        for command in ("check", "verify", "sample", "attack", "reproduce", "model", "completion"):
            assert command in script
        assert "--max-prec" in script


def test_a_closed_pipe_ends_quietly():
    process = subprocess.Popen([sys.executable, "-m", "certify", "claims"], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    process.stdout.close()  # the reader is gone before the first line is written
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and err == ""


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_json_larger_than_the_pipe_meets_a_closed_pipe(unbuffered):
    # one write larger than the pipe holds, unbuffered (PYTHONUNBUFFERED, as many containers set it): the
    # system took part of it and the rest was dropped in silence when the reader went, so the command ended 0
    # as if all of its output had been read
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": unbuffered}
    process = subprocess.Popen([sys.executable, "-m", "certify", "trajectory", "examples/layer.json", "--layers",
                                "300", "--json", "-q"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=env)
    assert os.read(process.stdout.fileno(), 10).startswith(b"{")  # the reader reads the start, then goes
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141 and err == ""


def _with_closed(stream: int, argv: list[str], tmp_path) -> subprocess.CompletedProcess:
    """`certify ARGV` started through a bash script that execs Python (as a version manager's shim does), with
    file descriptor `stream` (1 stdout, 2 stderr) closed by the shell (`>&-`, `2>&-`): bash holds the script open on
    the lowest free descriptor, so a closed stdout is None in Python, and a closed stderr is the script, read-only."""
    shim = tmp_path / "python"
    shim.write_text(f'#!/usr/bin/env bash\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    command = " ".join([str(shim), "-m", "certify", *argv, f"{stream}>&-"])
    return subprocess.run(["bash", "-c", command], cwd=ROOT, timeout=120, capture_output=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize("argv", [["check", "examples/layer.json"], ["check", "examples/layer.json", "--json"],
                                  ["claims"]])
def test_a_closed_stdout_loses_the_output_not_the_exit_code(argv, tmp_path):
    """`certify check CONFIG >&-` (Python's stdout is then None) ended with an internal error, exit 4, after the
    work: the output is lost, as Python's own print loses it, and the exit code is the verdict's."""
    done = _with_closed(1, argv, tmp_path)
    assert done.returncode == 0 and done.stderr == b"", done.stderr


@pytest.mark.parametrize("argv, code", [(["check", "no-such-configuration.json"], 2), (["check", "examples/layer.json"], 0)])
def test_a_stderr_that_cannot_be_written_leaves_the_exit_code(argv, code, tmp_path):
    """With stderr closed (`2>&-`) the line of a bad input could not be written: the OSError left main, and Python
    exited 1, which reads as "violated"."""
    assert _with_closed(2, argv, tmp_path).returncode == code


def test_json_output_is_whole_through_a_pipe():
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONUNBUFFERED": "1"}
    done = subprocess.run([sys.executable, "-m", "certify", "trajectory", "examples/layer.json", "--layers", "300",
                           "--json", "-q"], cwd=ROOT, capture_output=True, timeout=120, env=env)
    assert done.returncode == 0 and len(done.stdout) > 1 << 17  # more than a pipe holds at once
    assert json.loads(done.stdout)["layers"] == 300


# ------------------------------------------------------------------ claims wording


def test_claim_sources_read_as_prose(capsys):
    assert main(["claims"]) == 0
    out = capsys.readouterr().out
    assert "the thesis on iterated self-attention" in out and "NeurIPS 2024" in out
    assert "(seed 0" not in out  # sources are cited by their titles and venues


# --- every command whose input can pass a documented cap takes --limit ------------------------------

_THREE_TOKENS = {"X": [["1", "0"], ["0", "1"], ["-1", "1"]], "A": [["1/2", "0"], ["0", "1/2"]]}


def _limit_cases(tmp_path):
    """(name, argv, the cap that refuses it, a value that passes it, the exit codes once passed), one per
    command whose messages say "--limit NAME=N"."""
    config = write(tmp_path, _THREE_TOKENS)
    proof = tmp_path / "proof.json"
    assert main(["prove", "--n", "2", "--radius", "1", "--norm", "1", "--out", str(proof), "-q"]) == 0
    return [
        ("trajectory", ["trajectory", config, "--layers", "2"], "tokens=2", "tokens=3", (0,)),
        ("sample", ["sample", "--n", "3", "--d", "2", "--count", "2", "--workers", "1", "--out", str(tmp_path / "s")],
         "memory=1000", f"memory={1 << 30}", (0, 1, 3)),
        ("attack", ["attack", "--bound", "(1-exp(-a*D**2/8))*D", "--n", "2", "--d", "1", "--budget", "200"],
         "work=1", f"work={10 ** 8}", (1,)),
        ("prove --resume", ["prove", "--n", "2", "--radius", "1", "--norm", "1", "--resume", str(proof)],
         "bytes=10", f"bytes={1 << 20}", (2,)),  # read, then refused as a proof already complete
        ("counterexample", ["counterexample", "expansive-v", "--layers", "65"], None, "layers=65", (0,)),
    ]


def test_a_command_that_names_a_limit_takes_the_option_it_names(tmp_path, capsys):
    """Only check and verify had --limit, while trajectory, sample, attack, prove and counterexample refused (or
    their checker did not confirm) with "raise it with --limit NAME=N": each now takes the option it names,
    refuses below the cap with that hint, and gets past it when the option raises the cap."""
    for name, argv, low, high, passed in _limit_cases(tmp_path):
        capsys.readouterr()
        code = main([*argv, "-q"] + (["--limit", low] if low else []))
        out, err = capsys.readouterr()
        named = re.search(r"--limit (\w+)=", out + err)
        assert code in (2, 3) and named and named.group(1) == (low or high).split("=")[0], (name, code, out, err)
        code = main([*argv, "-q", "--limit", high])
        out, err = capsys.readouterr()
        # no hint left ("--limit NAME=N"); a re-check command printed carries the limit given (sample's)
        assert code in passed and not re.search(r"--limit \w+=N\b", out + err), (name, code, out, err)


def test_a_campaigns_limits_are_kept_in_its_manifest_and_rederived_under(tmp_path, capsys):
    """sample --limit decides every configuration under the caps it changes: they are the campaign's (its
    manifest names them; a run with other caps is another campaign), and `certify verify FOLDER` re-derives
    the records under them."""
    out = tmp_path / "s"
    argv = ["sample", "--n", "3", "--d", "2", "--count", "3", "--workers", "1", "--out", str(out), "-q"]
    assert main([*argv, "--limit", "work=1000000"]) in (0, 1, 3)
    assert json.loads((out / "manifest.json").read_text())["limits"] == {"work": 1000000}
    assert main(["verify", str(out)]) == 0
    capsys.readouterr()
    assert main(argv) == 2 and "different --limit" in capsys.readouterr().err


def test_a_ctrl_c_while_the_command_line_loads_is_one_line_and_exit_130(monkeypatch, capsys):
    """A Ctrl-C in the first tenth of a second (numpy, flint and the commands loading) printed Python's traceback
    of whatever import it landed in; now the `certify` entry point says it in one line, with the code a Ctrl-C
    during a command has."""
    import types

    import certify.__main__ as launcher

    class Loading(types.ModuleType):
        def __getattr__(self, name):  # the import of certify.cli, interrupted
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "certify.cli", Loading("certify.cli"))
    handlers = {signum: signal.getsignal(signum) for signum in signals.STOPPING}
    try:
        with pytest.raises(SystemExit) as stop:
            launcher.entry()  # installs the command's handlers (certify.signals), first of all
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    assert stop.value.code == 128 + signal.SIGINT  # the shell's status for Ctrl-C
    assert capsys.readouterr().err == "certify: interrupted\n"


def test_the_installed_command_is_the_launcher_that_catches_an_early_ctrl_c():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    assert 'certify = "certify.__main__:entry"' in text
