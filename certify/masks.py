"""Attention masks as 0/1 matrices: mask[i][j] = 1 when token i attends to token j.

In the graph language of Wu et al. that is the edge (j, i); every token keeps its self-loop.
"""

from __future__ import annotations

from certify.errors import BadInput
from certify.numbers import json_type

MASK_NAMES = {
    "full": lambda i, j, n: True,
    "causal": lambda i, j, n: j <= i,
    "sliding": lambda i, j, n: abs(i - j) <= 1,  # previous, self, next
    "window": lambda i, j, n: i - 1 <= j <= i,  # uni-directional: previous, self
}


def named_mask(name: str, n: int) -> tuple[tuple[bool, ...], ...]:
    if name not in MASK_NAMES:
        raise BadInput(f"unknown mask {name!r}; known: {', '.join(MASK_NAMES)} (or give an n x n 0/1 matrix)")
    allowed = MASK_NAMES[name]
    return tuple(tuple(allowed(i, j, n) for j in range(n)) for i in range(n))


def validate_mask(value, n: int, where: str = "mask") -> tuple[tuple[bool, ...], ...]:
    if not isinstance(value, list) or len(value) != n:
        raise BadInput(f"{where}: expected an {n} x {n} matrix of 0/1 (one row per token)")
    rows = []
    for i, row in enumerate(value):
        if not isinstance(row, list) or len(row) != n:
            raise BadInput(f"{where}: row {i} is not a list of {n} entries 0/1")
        if any(isinstance(v, bool) or v not in (0, 1) for v in row):
            raise BadInput(f"{where}: row {i} has an entry other than 0 or 1 ({json_type(row)})")
        if row[i] != 1:
            raise BadInput(f"{where}: token {i} has no self-loop (mask[{i}][{i}] must be 1)")
        rows.append(tuple(v == 1 for v in row))
    return tuple(rows)
