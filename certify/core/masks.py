"""Attention masks as 0/1 matrices: mask[i][j] = 1 when token i attends to token j (given as 0/1 or as false/true).

In the graph language of Wu et al. that is the edge j -> i (certify.core.graphs); every token
keeps its self-loop.  Used by configuration files ("mask": name or matrix) and `certify graph`.
"""

from __future__ import annotations

from pathlib import Path

from certify.core import jsonfile
from certify.errors import BadInput, counted, did_you_mean, shown

Mask = list[list[int]]

# Named masks: name -> (description, predicate(i, j, window) "token i attends to token j").
NAMED_MASKS = {
    "complete": ("every token attends to every token", lambda i, j, k: True),
    "causal": ("token i attends to tokens 0..i", lambda i, j, k: j <= i),
    "sliding": ("token i attends to tokens i-k..i+k", lambda i, j, k: abs(i - j) <= k),
    "uni": ("token i attends to tokens i-k..i", lambda i, j, k: i - k <= j <= i),
}
ALIASES = {"full": "complete", "window": "sliding", "uni-window": "uni"}
NAMES = sorted(set(NAMED_MASKS) | set(ALIASES))
KNOWN = ", ".join(NAMES)  # every name, as a refusal lists them
WINDOWED = ("sliding", "uni")  # the named masks with a width k (the others ignore it)


def named_mask(name: str, n: int, window: int = 1) -> Mask:
    """The 0/1 matrix of a named mask on n tokens (window = k for the two windows)."""
    key = ALIASES.get(name, name) if isinstance(name, str) else None  # from Python, a list was unhashable
    if key not in NAMED_MASKS:
        # a name only: a configuration's "mask" and attack's --mask read no file (graph's --mask says so itself)
        raise BadInput(f"unknown mask {shown(name)}; {did_you_mean(name, NAMES)}known masks: {KNOWN}")
    if n < 1:
        raise BadInput(f"the number of tokens must be at least 1, got {n}")
    if window < 1:
        raise BadInput(f"the window width must be at least 1, got {window}")
    attends = NAMED_MASKS[key][1]
    return [[1 if attends(i, j, window) else 0 for j in range(n)] for i in range(n)]


def _hint(word: str) -> str:
    """"; did you mean sliding?" after a refusal of a misspelt mask name that reads no further, else ""."""
    close = did_you_mean(word, NAMES)
    return f"; {close.rstrip()}" if close else ""


def load_mask(path: str | Path, most_tokens: int) -> Mask:
    """A mask from a JSON file: a list of rows of 0/1 (or false/true), or an object with key "mask"; more than most_tokens rows
    are refused before any entry is validated (n^2 of them)."""
    if not Path(path).is_file():
        raise BadInput(f"{path!r} is neither a mask name ({KNOWN}) nor a JSON file{_hint(str(path))}")
    data = jsonfile.read(path, raise_with=None)  # the default limits: `graph` has no option to raise them
    if isinstance(data, dict):
        if "mask" not in data:
            raise BadInput(f"{path}: a JSON object must hold the mask under the key \"mask\"")
        data = data["mask"]
    if isinstance(data, str):  # a configuration file's way of naming a mask: here it is the option's
        raise BadInput(f"{path}: a mask file holds 0/1 rows, not a name ({shown(data)}); "
                       "a named mask goes to --mask itself, with --n")
    if isinstance(data, list) and len(data) > most_tokens:
        raise BadInput(f"the mask in {path} has {len(data)} tokens, above the limit of {most_tokens}")
    return validate_mask(data)


def validate_mask(mask, n: int | None = None) -> Mask:
    """Check that mask is a square matrix of 0/1 or false/true (of n rows when n is given) with every self-loop, and
    return it as 0/1.  A truth value is what an entry says (token i attends to token j or not), so JSON's true and
    false, and a numpy boolean array read as them, are 1 and 0; a mask in the opposite convention (true where
    attention is blocked) is refused, as its diagonal is false."""
    if not isinstance(mask, list) or not mask:
        raise BadInput("a mask must be a non-empty list of rows")
    if n is not None and len(mask) != n:
        raise BadInput(f"the mask has {counted(len(mask), 'row')} but there are {counted(n, 'token')}")
    n = len(mask)
    rows = []
    for i, row in enumerate(mask):
        if not isinstance(row, list) or len(row) != n:
            raise BadInput(f"a mask must be square: row {i} does not have {n} entries")
        if any(v not in (0, 1) for v in row):  # True == 1 and False == 0, as the entries they stand for
            raise BadInput(f"mask entries must be 0 or 1 (or false and true): row {i} has another value")
        rows.append([int(v) for v in row])
    missing = [i for i in range(n) if rows[i][i] != 1]
    if missing:
        raise BadInput(f"every token must attend to itself: mask[{missing[0]}][{missing[0]}] is 0")
    return rows
