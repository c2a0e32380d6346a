"""--w, the entry w of W_V that both LayerNorm counterexamples take (wu-fig1, ln-equilibria).

Their witnesses start from float64 in w (fig1's closed forms, where w^2 overflows near 1e154;
equilibria's chains of tokens): past 2^64 these have long lost the accuracy a decision needs (fig1
at w = 1e9 and equilibria at N = 3, w = 1e10 are already undecided), and at 1e4000 their boxes
could no longer be written down.
"""

from __future__ import annotations

from fractions import Fraction

from certify.core.numbers import parse_number
from certify.errors import BadInput

MAX_W = Fraction(2**64)


def read(text: str, witness: str) -> Fraction:
    """--w as an exact Fraction (certify.core.numbers: its exponent caps keep "1e999999999" from being built);
    BadInput above MAX_W, naming what of the witness is computed in float64. Each counterexample checks its
    own lower bound."""
    w = parse_number(str(text), "--w")
    if w > MAX_W:
        raise BadInput(f"--w must be at most 2^64 (the witness's float64 {witness}), got {text}")
    return w
