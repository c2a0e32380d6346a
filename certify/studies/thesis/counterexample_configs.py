"""The configurations of the thesis's two named counterexamples, exact and canonical.

Both use two antipodal tokens X = (e1, -e1) in R^2 and A = lambda I, for which the closed forms
are known (proofs/residual_far.py, proofs/value_expansive.py):
    residual, V = -I:          D'/D = 2 / (exp(2 lambda) + 1) = 1 - tanh(lambda)
    no residual, V = rho I:    D_(t+1) / D_t = rho tanh(lambda D_t^2 / 4), D_0 = 2
The defaults pick lambda on a dyadic grid, strictly past the threshold (float64 only chooses:
the certificate decides).
"""

from __future__ import annotations

import math
from fractions import Fraction

from certify.core import config
from certify.errors import BadInput
from certify.core.numbers import parse_number

ANTIPODAL = [["1", "0"], ["-1", "0"]]
GRID = 64  # lambda is a multiple of 1/GRID
MAX_LAYERS = 100  # rounding compounds like rho^(T^2): past this even 65536 bits may not decide
# The precision range of both certificates, 64 ... 65536 bits: residual-far's 1 - tanh(lambda)
# cancels about 2.9 lambda bits, expansive-v's rounding compounds with the layers.
PRECISION_RANGE = (64, 1 << 16)


def exact(text, name: str) -> Fraction:
    """The exact Fraction of an option's text (`name` names it in the BadInput message)."""
    return parse_number(str(text), name)


def _tag(x: Fraction) -> str:
    """An exact number as a file-name-safe tag: 1/10 -> 1_10."""
    return str(x).replace("/", "_")


def scaled_identity(c: Fraction) -> list:
    """The 2 x 2 matrix c I as configuration entries (exact strings)."""
    return [[str(c), "0"], ["0", str(c)]]


def _require_q(q: Fraction) -> None:
    if q <= 0:
        raise BadInput(f"--q must be positive, got {q}")


def _require_rho(rho: Fraction) -> None:
    if rho <= 1:
        raise BadInput(f"--rho must be greater than 1 (an expansive V), got {rho}")


def _require_lambda(lam: Fraction) -> None:
    if lam < 0:
        raise BadInput(f"--lam must be >= 0, got {lam}")


def _canonical(data: dict) -> dict:
    return config.to_json(config.parse(data))


def residual_far_lambda(q: Fraction) -> Fraction:
    """A lambda with 2 / (exp(2 lambda) + 1) < q: one to two grid steps past ln(2/q - 1) / 2 (any if q >= 1)."""
    _require_q(q)
    if q >= 1:
        return Fraction(1, GRID)
    threshold = (math.log(2 * q.denominator - q.numerator) - math.log(q.numerator)) / 2  # big-int safe
    return Fraction(math.ceil(threshold * GRID) + 1, GRID)


def residual_far(q: Fraction, lam: Fraction) -> dict:
    """X' = X + P X V^T with V = -I, A = lambda I on X = (e1, -e1)."""
    _require_q(q)
    _require_lambda(lam)
    return _canonical({"name": f"residual-far-q{_tag(q)}", "X": ANTIPODAL, "A": scaled_identity(lam),
                       "V": scaled_identity(Fraction(-1)), "residual": True})


def expansive_lambda(rho: Fraction) -> Fraction:
    """A lambda with rho tanh(lambda) > 1 (the first step from D_0 = 2 grows; later ones grow more)."""
    _require_rho(rho)
    inverse = float(1 / rho)
    if not inverse < 1:
        raise BadInput(f"--rho = {rho} is too close to 1 to choose lambda; give --lam")
    return Fraction(math.ceil(math.atanh(inverse) * GRID) + 1, GRID)


def expansive_v(rho: Fraction, layers: int, lam: Fraction) -> dict:
    """T layers X_(t+1) = P_t X_t V^T with V = rho I, A = lambda I, from X = (e1, -e1)."""
    _require_rho(rho)
    if not 1 <= layers <= MAX_LAYERS:
        raise BadInput(f"--layers must be between 1 and {MAX_LAYERS}, got {layers}")
    _require_lambda(lam)
    layer = {"A": scaled_identity(lam), "V": scaled_identity(rho)}
    return _canonical({"name": f"expansive-v-rho{_tag(rho)}-T{layers}", "X": ANTIPODAL, "layers": [layer] * layers})
