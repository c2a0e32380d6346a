"""Pickling for python-flint's arb, exactly: results hold balls (certify.check's comparisons, a trajectory's
points), and a result that cannot be pickled cannot be returned from a worker process (multiprocessing,
concurrent.futures, Dask) or stored with pickle.  flint.arb defines no pickling of its own.

A ball is pickled as its midpoint and radius, each an exact binary number (mantissa, exponent), which arb's
constructor takes back without rounding; a non-finite part (an infinite radius, a nan or infinite midpoint)
as the binary64 value it then is.  Registered with copyreg when this module is imported (certify.core.arith.ball).
"""

from __future__ import annotations

import copyreg

from flint import arb


def _exact(part: arb) -> tuple[int, int] | float:
    """An exact part of a ball (its midpoint or radius) as (mantissa, exponent): part = mantissa 2^exponent."""
    if not part.is_finite():
        return float(part)  # inf, -inf or nan: binary64 holds it exactly
    mantissa, exponent = part.man_exp()
    return int(mantissa), int(exponent)


def _reduce(ball: arb):
    return arb, (_exact(ball.mid()), _exact(ball.rad()))


copyreg.pickle(arb, _reduce)
