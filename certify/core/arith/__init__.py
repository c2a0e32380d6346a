"""Arithmetic backends behind one small interface, so every formula is written once.

A formula takes the backend first, f(ar, ...), like mpmath's f(ctx, ...), and works on numpy
arrays whose entries are the backend's numbers:

- Float64 (float64.py): plain numpy float64.  Screening and search only; never a verdict.
- Ball (ball.py): python-flint arb balls in numpy object arrays, products through arb_mat.  Every
  result encloses the exact value; precision is the flint context's, set by the caller with
  `flint.ctx.workprec`.

Both provide: array, number, exp, log, expm1, log1p, sqrt_nonneg, erf, relu, abs, matmul, maximum, minimum,
pairwise_min, row_shift, certainly_le.
"""

from certify.core.arith.ball import Ball
from certify.core.arith.float64 import Float64

FLOAT64 = Float64()
BALL = Ball()

__all__ = ["Ball", "Float64", "FLOAT64", "BALL"]
