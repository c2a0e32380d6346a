"""A vectorised exp on binary64 arrays whose error is proven: exp(x) lies in [lower, upper].

Never numpy's exp (its SIMD exp is not correctly rounded and has no published bound).  The
evaluation, in round-to-nearest binary64 (the model of certify/core/arith/fpmodel.py):

    k  = rint(x / ln 2)                       any integer works: the proof does not use how k is found
    r1 = x - k*L1,  r = r1 - (k*L2 + k*L3)        ln 2 ~ L1 + L2 + L3 (Cody-Waite, three parts)
    p  = Horner(C, r)                         C_i = 1/i! rounded to binary64, i = 0..13
    exp(x) = 2^k exp(x - k ln 2),  |p / exp(x - k ln 2) - 1| <= REL_ERROR  when |r1| <= R1_MAX

L1 and L2 have 42 significant bits, so k*L1 and k*L2 are exact for |k| <= 1077 (11 bits); r1 is
then exact too: x itself when k = 0; Sterbenz's lemma when |k| >= 2, as |x - k L1| <= 0.35 <= |k L1| / 2;
when |k| = 1, where x may lie a hair below L1 / 2, because |x| > 1/4 and L1 are multiples of 2^-54 and
|x - k L1| < 1/2 (53 bits).  The arb analysis uses this exactness; Gappa does not need it.  The
bound REL_ERROR is proven twice: by `derive_error_terms` in arb (Taylor remainder, the
rounding of the coefficients, a running error bound of the reduction and of Horner) and by Gappa
for the whole evaluation, reduction included (proofs/formal/exp64_reduction.g, then exp64.g at the
reduced argument it proves, each with a Coq certificate);
tests/test_exp64.py re-runs both and fails if either proves less than REL_ERROR.

The enclosure: upper = fl(p * UP_FACTOR) 2^k + ETA and lower = max(fl(p * DOWN_FACTOR) 2^k - ETA, 0),
where the factors absorb REL_ERROR and the rounding of the product, and ETA = 2^-1074 the
rounding of ldexp into the subnormals (ldexp is exact on normal results; on subnormal ones it
is off by less than one subnormal unit, and adding or subtracting ETA there is exact).
Outside [X_MIN, X_MAX]: exp(x) <= 2^-1074 below (lower 0), upper = +inf above (overflow:
cannot decide), lower = the lower bound at X_MAX.  nan gives nan.

The midpoint-radius form (exp_midrad, for the backend's narrow enclosures, one scaling instead of
two): mid = ldexp(p, k) and rad = fl(fl(mid * MID_FACTOR) + 2 ETA), with
|exp(x) - mid| <= rad: see exp_midrad.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from certify.core.arith.rounding import ETA, UNIT_ROUNDOFF, float_at_least, float_at_most
from certify.core.precision import working

LN2_PARTS = (
    float.fromhex("0x1.62e42fefa3800p-1"),   # 42 significant bits
    float.fromhex("0x1.ef35793c76800p-45"),  # 42 significant bits
    float.fromhex("-0x1.9ff0342542fc3p-90"),  # 53 bits; |ln 2 - L1 - L2 - L3| < 2^-144
)
LN2_REMAINDER = math.ldexp(1.0, -140)  # bound of |ln 2 - (L1 + L2 + L3)|, checked in arb by the tests
INV_LN2 = 1.4426950408889634
DEGREE = 13
COEFFICIENTS = tuple(float(Fraction(1, _factorial)) for _factorial in
                     [1, 1, 2, 6, 24, 120, 720, 5040, 40320, 362880, 3628800, 39916800,
                      479001600, 6227020800])
R1_MAX = 0.3466  # checked at run time on the computed r1 (always true for k = rint(x / ln 2))
R_MAX = 0.3467   # bound of |r| (and |x - k ln 2|) used by the polynomial's error analysis
K_MAX = 1077     # |k| over [X_MIN, X_MAX]; k*L1 and k*L2 are exact below 2^11
X_MIN = -745.5   # exp(X_MIN) < 2^-1075: the result rounds to 0 or 2^-1074
X_MAX = 709.0    # 2^k p stays finite

# The proven relative error of p against exp(x - k ln 2): proofs/formal/exp64_reduction.g and exp64.g
# prove it for the whole evaluation (Gappa), derive_error_terms in arb; both are re-run by the tests.
REL_ERROR = 2.7e-16


def enclosure_factors(rel_error: float) -> tuple[float, float]:
    """(DOWN_FACTOR, UP_FACTOR) such that fl(p * DOWN) <= exp(r) <= fl(p * UP) whenever
    |p / exp(r) - 1| <= rel_error and p is normal (p is in [0.7, 1.42] here).

    exp(r) <= p / (1 - e) and fl(y) >= y / (1 + u): UP >= (1 + u) / (1 - e) suffices;
    exp(r) >= p / (1 + e) and fl(y) <= y (1 + u): DOWN <= 1 / ((1 + u)(1 + e)) suffices.
    """
    e, u = Fraction(rel_error), Fraction(UNIT_ROUNDOFF)
    return float_at_most(1 / ((1 + u) * (1 + e))), float_at_least((1 + u) / (1 - e))


DOWN_FACTOR, UP_FACTOR = enclosure_factors(REL_ERROR)


def midpoint_factor(rel_error: float) -> float:
    """F with F (1 - u)^2 >= e / (1 - e), e = rel_error (exp_midrad's radius: e / (1 - e) bounds
    |exp(r) - p| / p, and (1 - u)^2 the rounding of its two operations)."""
    e, u = Fraction(rel_error), Fraction(UNIT_ROUNDOFF)
    return float_at_least(e / (1 - e) / (1 - u) ** 2)


MID_FACTOR = midpoint_factor(REL_ERROR)


def _reduce(x: np.ndarray):
    """k and the reduced argument r of x in [X_MIN, X_MAX], and the run-time check |r1| <= R1_MAX."""
    k = x * INV_LN2
    np.rint(k, out=k)
    l1, l2, l3 = LN2_PARTS
    r1 = x - k * l1
    tail = k * l2
    tail += k * l3
    return k, r1 - tail, np.abs(r1) <= R1_MAX


def _horner(r: np.ndarray) -> np.ndarray:
    p = r * COEFFICIENTS[DEGREE]
    p += COEFFICIENTS[DEGREE - 1]
    for c in COEFFICIENTS[DEGREE - 2::-1]:
        p *= r
        p += c
    return p


CHUNK = 1 << 13  # elements per pass: the temporaries of a chunk stay in cache


def exp_bounds(x) -> tuple[np.ndarray, np.ndarray]:
    """Arrays (lower, upper) with lower <= exp(x) <= upper elementwise for an array x (nan where
    x is nan)."""
    return _chunked(_enclose, x)


def exp_midrad(x) -> tuple[np.ndarray, np.ndarray]:
    """Arrays (mid, rad) with |exp(x) - mid| <= rad elementwise for an array x (nan where x is nan;
    mid = rad = inf where x > X_MAX).

    For x in [X_MIN, X_MAX], with P = 2^k p exactly and e = REL_ERROR: exp(x) = 2^k exp(x - k ln 2)
    and |p - exp(x - k ln 2)| <= e exp(x - k ln 2) <= e p / (1 - e), so |exp(x) - P| <= e' P with
    e' = e / (1 - e).  mid = ldexp(p, k) is P rounded once to nearest (exact when normal, within
    ETA/2 in the subnormals: fpmodel's probe of ldexp), so |exp(x) - mid| <= e' (mid + ETA/2) + ETA/2
    <= e' mid + ETA.  With F = MID_FACTOR (F (1 - u)^2 >= e'), t = fl(mid F) >= mid F (1 - u) - ETA/2
    (a product, mid >= 0) and rad = fl(t + 2 ETA) >= (1 - u)(t + 2 ETA) (a sum of nonnegatives)
    >= e' mid + (3/2)(1 - u) ETA >= e' mid + ETA.  Below X_MIN exp(x) < exp(X_MIN) < ETA and mid
    (that of X_MIN) is 0 or ETA, both within rad >= 2 ETA of exp(x)."""
    return _chunked(_midrad, x)


def _chunked(finish, x) -> tuple[np.ndarray, np.ndarray]:
    """finish(x part, first part, second part) over the chunks of x, into two arrays of x's shape."""
    shape = np.shape(x)
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    first, second = np.empty_like(x), np.empty_like(x)
    for start in range(0, x.size, CHUNK):
        part = slice(start, start + CHUNK)
        finish(x[part], first[part], second[part])
    return first.reshape(shape), second.reshape(shape)


def _scaled_parts(x: np.ndarray):
    """(p, k, unreduced, nan): the polynomial p and the exponent k (int32: |k| <= K_MAX, and numpy's
    ldexp is several times faster with int32 than with int64 exponents) of x clipped to [X_MIN, X_MAX],
    the entries where the run-time check |r1| <= R1_MAX failed (None when none did: never for
    k = rint(x / ln 2), but the proof assumes it) and the nan entries (None when none)."""
    clipped = np.clip(x, X_MIN, X_MAX)
    nan = np.isnan(clipped)
    if nan.any():
        clipped[nan] = 0.0
    else:
        nan = None
    k, r, reduced = _reduce(clipped)
    return _horner(r), k.astype(np.int32), None if reduced.all() else ~reduced, nan


def _enclose(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    p, exponent, unreduced, nan = _scaled_parts(x)
    np.ldexp(p * UP_FACTOR, exponent, out=upper)
    upper += ETA
    np.ldexp(p * DOWN_FACTOR, exponent, out=lower)
    lower -= ETA
    np.maximum(lower, 0.0, out=lower)
    if unreduced is not None:
        upper[unreduced], lower[unreduced] = np.inf, 0.0
    upper[x > X_MAX] = np.inf
    lower[x < X_MIN] = 0.0
    if nan is not None:
        upper[nan], lower[nan] = np.nan, np.nan


def _midrad(x: np.ndarray, mid: np.ndarray, rad: np.ndarray) -> None:
    p, exponent, unreduced, nan = _scaled_parts(x)
    np.ldexp(p, exponent, out=mid)
    np.multiply(mid, MID_FACTOR, out=rad)
    rad += 2 * ETA
    if unreduced is not None:
        rad[unreduced] = np.inf
    above = x > X_MAX
    mid[above], rad[above] = np.inf, np.inf
    if nan is not None:
        mid[nan], rad[nan] = np.nan, np.nan


def derive_error_terms(prec: int = 256, pieces: int = 64) -> dict:
    """arb upper bounds (arb balls of radius 0 after .upper()): "shift" = |r - R|, "shift_rel",
    "approx_rel", "horner_rel" and "total", an upper bound of |p / exp(x - k ln 2) - 1| over the evaluation above (any binary64 x
    with |k| <= K_MAX and |r1| <= R1_MAX): a running error analysis on `pieces` subintervals of r.

    Terms, relative to exp(R) with R = x - k ln 2 exact and |R|, |r| <= R_MAX (u = 2^-53):
    - reduction: r1 exact (module docstring); fl(k L3) errs by u |k L3|, the sum t = fl(k L2 + k L3)
      by u |t|, r = fl(r1 - t) by u |r|; k (ln 2 - L1 - L2 - L3) adds K_MAX LN2_REMAINDER; then
      |exp(r) / exp(R) - 1| <= exp(|r - R|) - 1.
    - approximation: |sum C_i r^i - T(r)| <= sum |C_i - 1/i!| R^i relative to exp(r) >= e^-R, and
      the Lagrange remainder of the Taylor polynomial T, e^xi r^14/14! with xi between 0 and r:
      at most R^14/14! e^R relative to exp(r).
    - Horner, on each subinterval I of r: q_13 = C_13, q_i = fl(fl(q_{i+1} r) + C_i); the error of
      q_i against the exact Q_i = Q_{i+1} r + C_i (at the same r) obeys
      e_i <= e_{i+1} |r| + u (M_{i+1} + e_{i+1}) |r| + ETA + u (M_i + that) + ETA, M_i >= |Q_i| on I
      (the ETA terms cover underflow); relative to min_I Q_0 (> 0).
    """
    from flint import arb

    with working(prec):
        u, eta, R = arb(2) ** -53, arb(2) ** -1074, arb(R_MAX)
        l2, l3 = arb(LN2_PARTS[1]), arb(LN2_PARTS[2])
        kmax = arb(K_MAX)
        k_l3 = kmax * abs(l3)
        t = kmax * abs(l2) + k_l3 * (1 + u)
        shift = u * k_l3 + u * t * (1 + u) + u * R + kmax * arb(LN2_REMAINDER)
        shift_rel = shift.exp() - 1

        coefficients = [arb(c) for c in COEFFICIENTS]
        exact = [arb(1)]
        for i in range(1, DEGREE + 2):
            exact.append(exact[-1] / i)
        rounding = sum((abs(coefficients[i] - exact[i]) * R ** i for i in range(DEGREE + 1)), arb(0))
        remainder_rel = R ** (DEGREE + 1) * exact[DEGREE + 1] * R.exp()
        approx_rel = rounding / (-R).exp() + remainder_rel

        horner_rel = arb(0)
        for piece in range(pieces):
            low = -R + 2 * R * piece / pieces
            r = arb(low + R / pieces, R / pieces)  # the ball [low, low + 2R/pieces]
            size = abs(r).upper()
            values = [None] * (DEGREE + 1)  # Q_i on the piece
            values[DEGREE] = coefficients[DEGREE]
            for i in range(DEGREE - 1, -1, -1):
                values[i] = values[i + 1] * r + coefficients[i]
            error = arb(0)
            for i in range(DEGREE - 1, -1, -1):
                product_error = error * size + u * (abs(values[i + 1]).upper() + error) * size + eta
                error = product_error + u * (abs(values[i]).upper() + product_error) + eta
            horner_rel = horner_rel.union(error / values[0].lower()).upper()

        total = (1 + horner_rel) * (1 + approx_rel) * (1 + shift_rel) - 1
        return {"shift": shift.upper(), "shift_rel": shift_rel.upper(), "approx_rel": approx_rel.upper(),
                "horner_rel": horner_rel, "total": total.upper()}
