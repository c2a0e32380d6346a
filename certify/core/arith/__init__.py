"""Arithmetic backends behind one interface (protocol.Arithmetic), so every formula is written once.

A formula takes the backend first, f(ar, ...), like mpmath's f(ctx, ...), and works on numpy
arrays whose entries are the backend's numbers:

- Float64 (float64.py): plain numpy float64.  Screening and search only; never a verdict.
- Ball (ball.py): python-flint arb balls in numpy object arrays, products through arb_mat.  Every
  result encloses the exact value; precision is the flint context's, set by the caller with
  `certify.core.precision.working`.

- MidRad64 (midrad64.py): midpoint-radius binary64 arrays with proven error bounds, batched over
  configurations; tier 3 (certify.search.tier3) runs the generic formulas on it.

Reductions run over the last axis in every backend (protocol.py states the semantics).  Code outside these
modules never asks which backend it holds.
"""

from certify.core.arith.ball import Ball
from certify.core.arith.float64 import Float64
from certify.core.arith.protocol import Arithmetic

FLOAT64 = Float64()
BALL = Ball()

__all__ = ["Arithmetic", "Ball", "Float64", "FLOAT64", "BALL"]
