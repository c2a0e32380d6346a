"""Hostile input costs what its size allows, linearly: the work on each part of it is counted (Python calls, walks,
parses), not timed, so that a regression fails on any machine."""

from __future__ import annotations

import sys

from hypothesis import given
from hypothesis import strategies as st

from certify_checker import schema
from certify_checker.exact import binary64


def _python_calls(function, *args) -> int:
    """How many Python functions (not C ones) the call of function(*args) entered, itself included."""
    count = [0]

    def profile(_frame, event, _arg):
        count[0] += event == "call"

    sys.setprofile(profile)
    try:
        function(*args)
    finally:
        sys.setprofile(None)
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
    few = _python_calls(schema.reading, {"X": [["xy", "1e5", "7p-3"] * 10]})
    many = _python_calls(schema.reading, {"X": [["xy", "1e5", "7p-3"] * 10_000], "layers": [{"b_Q": ["ee"] * 10_000}]})
    assert many <= few + 10, (few, many)
    hexes = [(0.1 * k).hex() for k in range(1, 1001)]  # binary64's texts, read as entries: each asked of binary64
    assert _python_calls(schema.reading, {"X": [hexes]}) <= 3 * len(hexes)


_TEXT = st.text(st.sampled_from("0123456789eEpPx+-./ \t\u3000\x1c\u0663abc"), max_size=12)


@given(st.lists(st.one_of(_TEXT, st.sampled_from(["0x1.8000000000000p+1", "-0x0.0p+0", "0x1.8p-1", "0x1.8p-4000",
                                                    "1e0000012345678", "1e+-+7", " 3e19\t", "2p99999"])),
                max_size=20))
def test_a_row_of_texts_is_priced_as_its_texts_one_by_one(texts):
    """The price of a row of texts is the sum of its texts' own, as each was priced a text at a time."""
    units, count = (sum(part) for part in zip((0, 0), *map(_priced_one_by_one, texts)))
    assert schema.reading({"X": [texts]}) == (units, count)
    assert schema.reading({"b_Q": texts, "name": texts}) == (units, count)
