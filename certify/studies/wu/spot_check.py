"""The spot check of a float64 figure: mu(X_T) of one input, enclosed in ball arithmetic.

The float64 figures are screening numerics.  For one input and one configuration per figure we
re-run the same layers (certify.core.config.Layer objects holding the float64 weights as exact
rationals) through the generic formulas of certify.core.layers with the BALL backend and enclose
mu(X_T) = ||X_T - 1 xbar^T||_F.  Precision rises until mu_T is known to TARGET_BITS relative bits
or the ladder ends; in deep collapse the enclosure may then be [0, r]: an upper bound that shows
how far float64 (stuck near its rounding floor, about 1e-16 of the token size) has drifted from the
true value.

The enclosure is ball arithmetic in this process; no certificate of it goes to the independent
checker, so everything a spot check says is labelled "not certified" (NOT_CERTIFIED).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
from flint import arb

from certify.core.arith import BALL
from certify.core.config import Layer, exact_matrix
from certify.core.layers import apply_layer
from certify.core.numbers import ball_text
from certify.core.precision import escalate, working
from certify.core.quantities import consensus_distance

START_BITS, MAX_BITS, FACTOR = 128, 2048, 4  # 128, 512, 2048 bits: a deep stack is costly at each step
TARGET_BITS = 20
NOT_CERTIFIED = "ball arithmetic, not certified"  # no checker re-derives a spot check


@dataclass(frozen=True)
class SpotCheck:
    """One certified number of a figure: a ball enclosing the exact mu(X_T) = ||X_T - 1 xbar^T||_F of one
    input at depth T (ball arithmetic, not checker-confirmed), with the float64 value the simulation drew
    and the precision used."""
    configuration: str  # what was enclosed, in words
    depth: int
    float64: float  # the simulation's value of mu(X_T) for this input
    enclosure: arb  # the exact mu(X_T) lies in this ball (ball arithmetic, not checker-confirmed)
    precision: int  # bits used for the enclosure
    curve: tuple | None = None  # the study's curve whose input 0 this is (its key), None for a separate model

    @property
    def float64_inside(self) -> bool:
        """Whether the float64 value lies in the enclosure (when not, it is wrong)."""
        # arb's nan ball "contains" nan: a float64 nan or inf is never a value of mu
        return math.isfinite(self.float64) and bool(self.enclosure.contains(arb(self.float64)))

    def interval(self) -> str:
        """[lower, upper] in 4 decimal digits, rounded outwards (mu >= 0 clips the lower end)."""
        if not self.enclosure.is_finite():  # nan or infinite endpoints have no exact value to print
            return "[0, inf]"
        lower = max(exact_value(self.enclosure.lower()), Fraction(0))
        return f"[{decimal(lower, down=True)}, {decimal(exact_value(self.enclosure.upper()), down=False)}]"

    def assessment(self) -> str:
        """What the enclosure says about the float64 value."""
        if not math.isfinite(self.float64):  # the exact mu is a real number; nan/inf balls compare False both ways
            return "float64 is not a finite number: certainly wrong"
        f = arb(self.float64)
        if not self.enclosure.is_finite():
            # A nan ball compares False both ways: the branches below would read that as
            # "float64 lies below the certified upper bound", which nothing certifies.
            return "no finite enclosure at the precisions tried: nothing is known about float64"
        with working(self.precision):
            if self.enclosure > 0:
                error = abs(f - self.enclosure) / self.enclosure
                lower = max(exact_value(error.lower()), Fraction(0))  # abs() of a ball around 0 dips below 0
                return (f"float64 relative error in [{decimal(lower, down=True)}, "
                        f"{decimal(exact_value(error.upper()), down=False)}]")
            upper = self.enclosure.upper()
            if f > upper and upper == 0:  # mu is exactly 0: the ratio below would divide by 0
                return "the exact value is 0 and float64 is positive"
            if f > upper:
                factor = decimal(exact_value((f / upper).lower()), down=True)
                return f"float64 is too large by a factor of at least {factor}"
        return "float64 lies below the enclosure's upper bound"

    def summary(self) -> str:
        """One line: float64's value, the enclosure and what it says, labelled not certified."""
        return f"float64 {self.float64:.3g}, enclosed {self.interval()} ({NOT_CERTIFIED}): {self.assessment()}"

    def to_json(self) -> dict:
        """The spot check as JSON, with "checker": "not certified"."""
        return {
            "checker": "not certified",
            "configuration": self.configuration,
            "depth": self.depth,
            "float64": self.float64,
            "enclosure": ball_text(self.enclosure),
            "interval": self.interval(),
            "precision_bits": self.precision,
            "float64_inside_enclosure": self.float64_inside,
            "float64_assessment": self.assessment(),
        }


def exact_value(x: arb) -> Fraction:
    """The midpoint of a ball as an exact rational (an endpoint from lower()/upper() is exact)."""
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def decimal(q: Fraction, down: bool, digits: int = 4) -> str:
    """q in scientific notation with `digits` digits, rounded down or up (so intervals stay enclosures)."""
    if q == 0:
        return "0"
    size = abs(q)
    exponent = len(str(size.numerator)) - len(str(size.denominator))
    while Fraction(10) ** exponent > size:
        exponent -= 1
    while Fraction(10) ** (exponent + 1) <= size:
        exponent += 1
    scaled = q / Fraction(10) ** (exponent - digits + 1)
    mantissa = math.floor(scaled) if down else math.ceil(scaled)
    if abs(mantissa) == 10**digits:  # rounding up carried into the next power of ten
        mantissa //= 10
        exponent += 1
    text = str(abs(mantissa))
    sign = "-" if mantissa < 0 else ""
    return f"{sign}{text[0]}.{text[1:]}e{exponent}"


def certify_mu(layers: list[Layer | Callable], X0: np.ndarray, configuration: str, float64_value: float) -> SpotCheck:
    """Enclose mu(X_T), X_T = layers[-1](...layers[0](X0)), at rising precision.  A layer is a
    configuration Layer or a step(ar, X) -> X' written with the generic formulas."""
    tokens = exact_matrix(X0)

    def attempt(precision: int) -> arb:
        X = BALL.array(tokens)
        for layer in layers:
            X = apply_layer(BALL, layer, X).out if isinstance(layer, Layer) else layer(BALL, X)
        return consensus_distance(BALL, X)

    mu, precision = escalate(attempt, lambda mu: mu.is_finite() and mu.rel_accuracy_bits() >= TARGET_BITS,
                             START_BITS, MAX_BITS, FACTOR)
    return SpotCheck(configuration, len(layers), float(float64_value), mu, precision)
