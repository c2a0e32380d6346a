"""An option given twice is refused (exit 2, one line naming it) on every command, where argparse kept the last
value silently (`check --precision 64 --precision 128`, `--out a --out b`); the options meant to repeat (--limit
with different names, run's --only) still do."""

from __future__ import annotations

import argparse
import json

import pytest

from certify.cli import build_parser, main
from certify.core import limits
from certify.errors import BadInput

VALUES = ("1", "x.json", "0.5", "100")  # a value one of which each option takes, where it takes no choice


def _options(parser: argparse.ArgumentParser, path: tuple = ()):
    """(command words, action) for every option of every command that is not meant to repeat."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        elif action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction,
                                                                argparse._AppendAction)):
            yield path, action


def _given(action: argparse.Action) -> list[list[str]]:
    """The ways to give `action` once: its option and a value (each of VALUES, or its first choice)."""
    option = action.option_strings[-1]
    if action.nargs == 0:
        return [[option]]
    count = action.nargs if isinstance(action.nargs, int) else 1
    values = [str(next(iter(action.choices)))] if action.choices else VALUES
    return [[option, *[value] * count] for value in values]


def _refusal(parser, argv) -> str:
    try:
        parser.parse_args(argv)
    except BadInput as err:
        return str(err)
    except SystemExit:  # an option that prints and exits (none here but --help)
        return ""
    return ""


def test_every_option_given_twice_is_refused_naming_it():
    found = list(_options(build_parser()))
    assert len(found) > 100 and {words[0] for words, _ in found} >= {"check", "verify", "sample", "prove", "run"}
    for words, action in found:
        parser = build_parser(only=words[0])
        names = "/".join(action.option_strings)
        tried = []
        for once in _given(action):
            refused = _refusal(parser, [*words, *once])
            if f"argument {names}" in refused:  # this value is not one the option takes: try the next
                tried.append(refused)
                continue
            twice = _refusal(parser, [*words, *once, *once])
            assert f"argument {names}: given more than once" in twice, (words, once, twice)
            break
        else:
            pytest.fail(f"no value of {words} {names} was taken: {tried}")


@pytest.mark.parametrize("argv, option", [
    (["check", "c.json", "--max-prec", "64", "--max-prec", "128"], "--max-prec"),
    (["check", "c.json", "--out", "a.json", "--out=b.json"], "--out"),
    (["sample", "--n", "2", "--d", "1", "--n", "3"], "--n"),
    (["verify", "c.json", "--json", "--json"], "--json"),
    (["attack", "--l-range", "1", "2", "--L-range", "3", "4"], "--l-range"),  # an old spelling is the same option
])
def test_an_option_given_twice_exits_2_in_one_line(argv, option, capsys):
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and option in err and "given more than once" in err, err


def test_options_of_an_exclusive_group_keep_their_refusal(capsys):
    assert main(["check", "c.json", "-q", "--progress"]) == 2
    assert "not allowed with" in capsys.readouterr().err


def test_a_limit_repeats_with_different_names_but_not_the_same_one(tmp_path, capsys):
    args = build_parser(only="check").parse_args(["check", "c.json", "--limit", "bytes=5000", "--limit", "tokens=9"])
    assert args.limit == ["bytes=5000", "tokens=9"]
    with pytest.raises(BadInput, match=r"--limit bytes given more than once \('bytes=5000', 'bytes=6000'\)"):
        limits.DEFAULT.changed(["bytes=5000", "tokens=9", "bytes=6000"])
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"X": [[1, 0], [0, 1]], "A": [[1, 0], [0, 1]]}))
    assert main(["check", str(path), "--limit", "work=100000000", "--limit", "work=200000000"]) == 2
    assert "--limit work given more than once" in capsys.readouterr().err


def test_run_only_repeats():
    args = build_parser(only="run").parse_args(["run", "--only", "claims", "--only", "proofs"])
    assert args.only == ["claims", "proofs"]


@pytest.mark.parametrize("repeated", [["--limit", "bytes=1"], ["--out"], ["-q"]], ids=["limit", "out", "q"])
def test_thousands_of_options_are_refused_before_argparse_reads_them(repeated, monkeypatch, capsys):
    """argparse looks for the next option among all of them at each option, in time that grows with their square:
    20,000 `--limit bytes=1` (refused as given twice only after all were read) took 10 s, the 180,000 a command line
    holds some minutes.  A command line of more options than any command takes is refused before argparse reads it."""
    read = []
    parse = argparse.ArgumentParser._parse_optional
    monkeypatch.setattr(argparse.ArgumentParser, "_parse_optional", lambda self, arg: read.append(1) or parse(self, arg))
    assert main(["verify", *repeated * 5000, "c.json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "options" in err and len(err) < 300, err
    assert len(read) <= 2 * 1000, len(read)  # no more words looked at than the cap allows


def test_words_after_double_dash_are_not_counted_and_many_extras_are_listed_short(capsys):
    """After "--" a word that begins with a dash is a value, not an option; the extras argparse leaves are listed
    ten and their count (20,000 made a line of 140 kB)."""
    assert main(["verify", "--", *["-x.json"] * 2000]) == 2
    err = capsys.readouterr().err
    assert "options on one command line" not in err and "... (1999 in all)" in err and len(err) < 300, err
    assert main(["check", *["c.json"] * 20000]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments" in err and len(err) < 300, err
