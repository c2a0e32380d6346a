"""Plain-text tables and paragraphs that fit a terminal: fixed column widths, long cells wrapped onto
continuation lines inside their own column, so a long cell never pushes the next one out of line."""

from __future__ import annotations

import re
import textwrap

WIDTH = 100  # every table and paragraph of the command line fits this many columns
# The label of what the checker did not confirm stays on one line: split, "certified" would stand alone.
_LABEL = re.compile(r"\b(not) (certified)\b", re.IGNORECASE)
_JOINED = "\x00"  # no whitespace, so textwrap keeps the label's two words together
_MARGIN = "  "  # a table's rows start with it, and it separates their columns


def _wrapped(text: str, **options) -> list[str]:
    """textwrap.wrap with the not-certified label kept whole."""
    lines = textwrap.wrap(_LABEL.sub(rf"\1{_JOINED}\2", text), **options)
    return [line.replace(_JOINED, " ") for line in lines]


def wrap(text: str, width: int = WIDTH, indent: str = "", first: str | None = None) -> list[str]:
    """A paragraph as lines of at most `width` columns (`first` prefixes the first line, `indent` the rest)."""
    first = indent if first is None else first
    return _wrapped(text, width=width, initial_indent=first, subsequent_indent=indent,
                    break_long_words=True, break_on_hyphens=False) or [first.rstrip()]


def rows(table: list[list[str]], widths: list[int]) -> list[str]:
    """Each row's cells padded to `widths`; a longer cell wraps inside its column, on as many lines
    as its row needs (the last column's width may be larger than what remains: it wraps too)."""
    lines = []
    for row in table:
        columns = [_wrapped(str(cell), width=width, break_long_words=True, break_on_hyphens=False) or [""]
                   for cell, width in zip(row, widths)]
        for k in range(max(len(column) for column in columns)):
            cells = [(column[k] if k < len(column) else "").ljust(width) for column, width in zip(columns, widths)]
            lines.append((_MARGIN + _MARGIN.join(cells)).rstrip())
    return lines
