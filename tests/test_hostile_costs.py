"""Hostile input costs what its size allows, linearly: the work on each part of it is counted (Python calls, walks,
parses), not timed, so that a regression fails on any machine."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

import certify
from certify.errors import BadInput, did_you_mean, one_line
from certify_checker import schema
from certify_checker.exact import binary64


def _python_steps(function, *args) -> int:
    """How many lines of Python (not C) the call of function(*args) ran, and functions it entered: a loop in C over
    a million characters is no step, one in Python a million."""
    count = [0]

    def trace(_frame, _event, _arg):
        count[0] += 1
        return trace

    sys.settrace(trace)
    try:
        function(*args)
    except BadInput:
        pass
    finally:
        sys.settrace(None)
    return count[0]


def _priced_one_by_one(text: str) -> tuple[int, int]:
    """The price of one text as schema.reading stated it before it priced a list of texts at once (the oracle)."""
    if binary64(text) is not None:
        return 0, 0
    text_ = text.rstrip().lower()
    at = max(text_.rfind("e"), text_.rfind("p"))
    digits = text_[at + 1:].lstrip("+-").lstrip("0") if at >= 0 else ""
    power = (min(int(digits[:6]), 16000) // (4 if text_[at] == "e" else 16)
             if digits.isascii() and digits.isdigit() else 0)
    return schema.TEXT + 2 * len(text) + power, 1


def test_pricing_texts_under_a_number_key_enters_no_python_function_per_text():
    """A certificate of 64 MiB of "xy" strings in a row of X was priced at a microsecond a text, 13 s against 1 s
    to read its JSON; a row of texts is now priced in C, a text at a time only where it may be a binary64."""
    steps = [_python_steps(schema.reading, {"X": [["xy", "1e5", "7p-3"] * k], "layers": [{"b_Q": ["ee"] * k}]})
             for k in (10, 10, 10_000)]  # the first one warms up
    assert steps[2] == steps[1] < 1000, steps
    hexes = [(0.1 * k).hex() for k in range(1, 1001)]  # binary64's texts, read as entries: each asked of binary64
    assert _python_steps(schema.reading, {"X": [hexes]}) <= 20 * len(hexes)


_TEXT = st.text(st.sampled_from("0123456789eEpPx+-./ \t\u3000\x1c\u0663abc"), max_size=12)


@given(st.lists(st.one_of(_TEXT, st.sampled_from(["0x1.8000000000000p+1", "-0x0.0p+0", "0x1.8p-1", "0x1.8p-4000",
                                                    "1e0000012345678", "1e+-+7", " 3e19\t", "2p99999"])),
                max_size=20))
def test_a_row_of_texts_is_priced_as_its_texts_one_by_one(texts):
    """The price of a row of texts is the sum of its texts' own, as each was priced a text at a time."""
    units, count = (sum(part) for part in zip((0, 0), *map(_priced_one_by_one, texts)))
    assert schema.reading({"X": [texts]}) == (units, count)
    assert schema.reading({"b_Q": texts, "name": texts}) == (units, count)


def test_a_long_message_is_made_one_line_in_c():
    """one_line escaped a message a character at a time in Python (a claim of 20 MB given to certify.check: 2 s, a
    newline in every other character); now the characters that do not print are escaped by str.translate, each as
    repr escapes it."""
    assert one_line("a\nb\x1b[2J\u2028c\udc80\t'") == "a\\nb\\x1b[2J\\u2028c\\udc80\\t'"
    for message in ("x" * 100_000, "x\n" * 50_000, "".join(map(chr, range(0x2000, 0x2000 + 50_000))) * 2):
        unprintable = sum(not c.isprintable() for c in set(message))  # each made its escape once, in Python
        assert _python_steps(one_line, message) < 100 + 2 * unprintable < len(message) / 2
        assert one_line(message) == "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def test_a_hint_for_a_long_word_reads_no_more_of_it_than_the_choices_allow():
    """did_you_mean compared a word of 20 MB with every choice in difflib, which indexes the word a character at a
    time in Python (a 20 MB --claim: some 5 s); a word too long to be close to any choice is now none's."""
    choices = ["collapse.global", "collapse.rate"]
    assert did_you_mean("colapse.global", choices) == "did you mean collapse.global? "
    assert did_you_mean("x" * 100_000, choices) == ""
    assert _python_steps(did_you_mean, "x" * 100_000, choices) < 100
    # the longest word difflib may still find close (a ratio of 0.6 or more), and one a character longer
    longest = "collapse.global" + "x" * 20
    assert did_you_mean(longest, choices) == "did you mean collapse.global? " and did_you_mean(longest + "x", choices) == ""


def test_an_unknown_claim_of_20_mb_is_refused_in_a_short_line():
    """certify.check(claim=<20 MB>) quoted the claim whole (a message of 20 MB, escaped and respelled for the API
    whole: some 5 s); the claim is now quoted as shown() cuts it, as the command line printed it already."""
    try:
        certify.check({"X": [[0.0], [1.0]], "A": [[1.0]]}, claim="x\n" * 500_000)
    except BadInput as err:
        message = str(err)
    assert message.startswith("unknown claim 'x\\nx\\n") and "(1500002 characters)" in message
    assert len(message) < 1000


def test_the_checker_cuts_a_path_it_cannot_read_as_certify_verify_does(capsys):
    """`python -m certify_checker <a path of 100 kB>` named the path whole in its refusal (a line of 100 kB); a path
    longer than any file name is now cut short as `certify verify` cuts it; one that can be a file's stays whole."""
    from certify_checker.__main__ import main

    assert main(["a" * 100_000]) == 2
    line = capsys.readouterr().err
    assert line == ("certify_checker: error: cannot read 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... (100002 characters): "
                    "File name too long\n")
    assert main(["b" * 200]) == 2
    assert capsys.readouterr().err == f"certify_checker: error: cannot read {'b' * 200}: No such file or directory\n"



def test_a_campaign_manifest_is_parsed_once_by_a_run_resumed_and_twice_by_verify(tmp_path, monkeypatch, capsys):
    """A manifest of 600,000 chunks (63 MB) was parsed three times by a run resumed (its format, its job's checks, the
    histograms' records) and four times by `certify verify` (a corpus run's?, a campaign's?, its parameters, its
    records): now once by the run, and by verify once before the folder is locked (what it is, its parameters) and once
    locked for reading, where its records are read with the chunks it lists then."""
    from certify.cli import main
    from certify.core import jsonfile

    read, parsed = jsonfile.read, []

    def counted(path, *args, **kwargs):
        parsed.append(str(path).endswith("manifest.json"))
        return read(path, *args, **kwargs)

    monkeypatch.setattr(jsonfile, "read", counted)
    argv = ["sample", "--n", "3", "--d", "2", "--count", "4", "--out", str(tmp_path), "--workers", "1", "-q"]
    assert main([*argv, "--stop-after", "1"]) == 3 and sum(parsed) == 0  # a new folder: no manifest to read
    assert main(argv) == 0 and sum(parsed) == 1, parsed  # resumed, and finished
    parsed.clear()
    assert main(["verify", str(tmp_path)]) == 0 and sum(parsed) == 2, parsed
    capsys.readouterr()
