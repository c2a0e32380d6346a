"""Every pair's l1 distance G_ik = sum_j |q_ij - q_kj| between the rows of a matrix of integers in [0, 2^entry_bits),
exactly, a column an operation: column j is one Python integer holding entry (i, j) in its 64-bit lane i (the standard
library's only arithmetic on many numbers at once; a math.fsum of per-entry calls for each pair took 2.4 to 6 times as
long at 64 to 128 rows).  Shifted down s lanes it holds entry (i + s, j) in lane i; with h = 2^63 in every lane,
    D = (column + h) - (column shifted)   has lanes h + d, d = q_ij - q_{i+s,j}, |d| < 2^entry_bits < h: in (0, 2^64),
                                          so no lane borrows from the next;  g = D's top bit in each lane (d >= 0);
    D xor (h - 1 + g)                     is D - h = d where g = 1, and h - 1 - D = |d| - 1 where g = 0:
their sum over the columns, plus the columns' number, minus the sum of g, is G_{i,i+s} in lane i, below
columns 2^entry_bits <= 2^62: no lane carries into the next either.
"""
from __future__ import annotations

import sys
from array import array

AVAILABLE = array("Q").itemsize == 8  # a lane per array item (every platform CPython runs on; elsewhere: not screened)


def entry_bits(columns: int) -> int:
    return 62 - columns.bit_length()


def pairwise(rows: list) -> dict:
    """{(i, k): sum_j |rows[i][j] - rows[k][j]|} for every i < k."""
    n, width = len(rows), len(rows[0])
    top = 1 << entry_bits(width)
    if not AVAILABLE or any(len(row) != width or not all(0 <= x < top for x in row) for row in rows):
        raise ValueError("entries outside the lanes' range")
    columns = [_packed(column) for column in zip(*rows)]
    lifted = [column + _packed([1 << 63] * n) for column in columns]
    out = {}
    for s in range(1, n):
        low, ones, below_half = (1 << (64 * (n - s))) - 1, _packed([1] * (n - s)), _packed([(1 << 63) - 1] * (n - s))
        total = signs = 0
        for column, high in zip(columns, lifted):
            D = (high & low) - (column >> (64 * s))
            g = (D >> 63) & ones
            total += D ^ (below_half + g)
            signs += g
        words = array("Q", (total + ones * width - signs).to_bytes(8 * (n - s), "little"))  # lanes >= signs': no borrow
        out.update(zip(zip(range(n - s), range(s, n)), _native(words)))
    return out


def _packed(values) -> int:
    """The values as 64-bit lanes, the first in the lowest."""
    return int.from_bytes(_native(array("Q", values)).tobytes(), "little")


def _native(words: array) -> array:
    """Little-endian words in this machine's order, or the other way."""
    if sys.byteorder == "big":
        words.byteswap()
    return words
