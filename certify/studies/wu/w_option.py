"""--w, the entry w of W_V that both LayerNorm counterexamples take (wu-fig1, ln-equilibria).

One cap for both: equilibria's witness starts from float64 in w (its chains of tokens), which past
2^64 has long lost the accuracy a decision needs, and at 1e4000 the boxes of either could no longer be
written down (fig1's closed forms are found in ball arithmetic at the working precision).
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
