"""Tier 3's arithmetic: midpoint-radius binary64 arrays, vectorised with numpy, behind the one
protocol (protocol.Arithmetic), so that the formulas of certify/core/layers.py and quantities.py run
on them unchanged, batched over configurations (a leading axis).

A MidRad holds two binary64 arrays: every exact value z it stands for satisfies |z - mid| <= rad.
Every operation returns such an enclosure under the floating-point model that fpmodel.py checks at
start-up (round to nearest, gradual underflow, BLAS products as correctly rounded operations):

- the rounding of one operation, c = fl(z): |z - c| <= u (1 + 2u) |c| + ETA; a radius is a sum of
  such nonnegative terms, bounded above in one pass (_bounded_sum), or rounded upward by the
  successor of rounding.py (up, down); the ends mid -+ rad are read out exactly rounded outward
  (TwoSum);
- sums of k terms: |fl(sum) - sum| <= gamma_{k-1} sum |m_l| in any order;
- products A B through row norms (Cauchy-Schwarz), one BLAS call for the midpoints, O(n k) more work
  and one BLAS call with one or two terms per entry for the radius (outer_upper):
  |fl(A B) - A B|_ij <= gamma_k ||a_i|| ||b_j|| + k ETA, and the radii of A and B enter as
  ||a_i|| ||(B_rad)_j|| + ||(A_rad)_i|| (||b_j|| + ||(B_rad)_j||);
- exp through the proven exp of exp64.py (its midpoint-radius form); tanh from it; erf (so GELU) by
  its series of positive terms with a bounded tail, in the backend's own operations; spectral norms
  from below by a binary64 witness vector, from above by Frobenius norms (the loose side: no claim
  the tier decides needs it).

What cannot be enclosed here raises NotSupported (log, powers of matrices ...): the tier then
hands the configurations to arb, never an unproven enclosure.  nan and inf in a result mean
"no bound"; comparisons with them decide nothing.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from certify.core.arith import exp64
from certify.core.arith import pairs
from certify.core.numbers import Binary64Matrix, is_matrix
from certify.core.arith.rounding import (ETA, PHI, UNIT_ROUNDOFF, abs_sum_upper, down, float_at_least, float_at_most,
                                        gamma, nonneg_sum_upper, reduce_axis, rounding_radius, sqrt_down, sqrt_up, up)


class NotSupported(Exception):
    """An operation tier 3 cannot enclose rigorously; the caller hands the case to arb."""


@functools.lru_cache(maxsize=None)
def _factors(k: int) -> tuple[float, float, float]:
    """gamma_k, 1 / (1 - gamma_k) and 1 / (1 + gamma_k) rounded outwards (exact Fractions, once per k)."""
    return float_at_least(gamma(k)), float_at_least(1 / (1 - gamma(k))), float_at_most(1 / (1 + gamma(k)))


def _squares(M):
    """fl(sum_l fl(M_l^2)) over the last axis, in some order (einsum: numpy's reduction over a short
    last axis is slow)."""
    return np.einsum("...l,...l->...", M, M)


@functools.lru_cache(maxsize=None)
def _norm_factor(k: int) -> float:
    """1 / ((1 - gamma_k)(1 - u)^2) rounded up (exact Fractions, once per k): row_norms_upper's scaling."""
    return float_at_least(1 / ((1 - gamma(k)) * (1 - Fraction(2) ** -53) ** 2))


def row_norms_upper(M):
    """Upper bounds of the Euclidean norms of the rows of M (over the last axis, k entries, k u <= 1/4).

    s = fl(sum_l fl(m_l^2)) (_squares) has s >= (1 - gamma_k) sum m^2 - k ETA (a dot product's bound),
    so sum m^2 <= (s + k ETA) / (1 - gamma_k).  With F >= 1 / ((1 - gamma_k)(1 - u)^2): t = fl(s F) >=
    s F (1 - u) - ETA/2 (a product, s >= 0) and v = fl(t + (2k + 2) ETA) >= (1 - u)(t + (2k + 2) ETA)
    (a sum of nonnegatives) >= s / (1 - gamma_k) + (1 - u)(2k + 3/2) ETA >= (s + k ETA) / (1 - gamma_k);
    the norm is at most sqrt(v) <= sqrt_up(v).  Three operations before the square root, one up()."""
    k = M.shape[-1]
    v = _squares(M)
    v *= _norm_factor(k)
    v += (2 * k + 2) * ETA
    return sqrt_up(v)


def sum_squares_lower(M):
    """Lower bounds of sum_l M_l^2 over the last axis: fl(sum fl(m^2)) <= (1 + gamma_k) sum + k ETA."""
    k = M.shape[-1]
    factor = _factors(k)[2]
    return np.maximum(down(down(_squares(M) - k * ETA) * factor), 0.0)


@functools.lru_cache(maxsize=None)
def _outer_factor(p: int) -> float:
    """1 / ((1 - u)(1 - gamma_p)) rounded up (exact Fractions, once per p): outer_upper's scaling."""
    return float_at_least(1 / ((1 - Fraction(2) ** -53) * (1 - gamma(p))))


def outer_upper(lefts: list, rights: list, count: int):
    """R with R_ij >= sum_t a_ti b_tj + count ETA for p pairs of vectors a_t (..., n), b_t (..., m) >= 0
    (lefts and rights).

    With a'_t = up(fl(a_t F)) >= a_t F, F >= 1 / ((1 - u)(1 - gamma_p)): S = fl(sum_t a'_ti b_tj), one
    rounded product when p = 1 (einsum: faster than broadcasting), else one BLAS product with p terms per
    entry (numpy's batched product of a short inner axis: faster than p outer products and their sum),
    has S >= (1 - gamma_p) sum_t a'_t b_t - p ETA (the product's bound, module docstring; S >= 0), and
    R = fl(S + (count + p + 1) ETA) >= (1 - u)(S + (count + p + 1) ETA) >= sum_t a_t b_t + count ETA
    (count <= 2^52).  The constant is added after the product, not as one more term of it: a subnormal
    product in every entry would slow the product down several times."""
    factor = _outer_factor(len(lefts))
    scaled = [up(a * factor) for a in lefts]
    if len(lefts) == 1:
        R = np.einsum("...i,...j->...ij", scaled[0], rights[0])
    else:
        R = np.stack(scaled, axis=-1) @ np.stack(rights, axis=-2)
    R += (count + len(lefts) + 1) * ETA
    return R


def _has_radius(rad) -> bool:
    return rad.ndim > 0 or rad != 0 if isinstance(rad, np.ndarray) else np.ndim(rad) > 0 or rad != 0


def _full(rad, shape):
    """rad broadcast to shape (rad itself when it has that shape: numpy's broadcast_to costs microseconds)."""
    return rad if rad.shape == shape else np.broadcast_to(rad, shape)


_SLACK = 1 + math.ldexp(1.0, -48)  # (1 + 2^-48)(1 - u)^22 >= 1; ldexp, not 2.0**-48 (rounding.UNIT_ROUNDOFF)


def _bounded_sum(*terms, scratch: bool = False):
    """An upper bound of T_1 + ... + T_k (k <= 20) for nonnegative reals T_i, each given as a binary64
    t_i that is T_i itself or the round-to-nearest result of one operation whose exact result is T_i
    (so t_i >= T_i (1 - u) - ETA/2).  s = fl(t_1 + ... + t_k) >= (1 - u)^(k-1) sum t_i (nonnegative
    sums), and fl(fl(s (1 + 2^-48)) + (k + 1) ETA) >= (1 + 2^-48)(1 - u)^(k+2) sum T_i
    + ETA ((k + 1)(1 - u) - (k/2)(1 + 2^-48) - 1/2) >= sum T_i.  Three passes and k - 1 additions.
    scratch: terms[0] is a fresh array of the result's shape that the sum may be accumulated in (the same
    operations, one array fewer)."""
    first = terms[0]
    if scratch and isinstance(first, np.ndarray):
        total = first
        for term in terms[1:]:
            total += term  # numpy refuses a term that does not broadcast to the first one's shape
    else:
        total = np.add(first, terms[1]) if len(terms) > 1 else np.array(first, dtype=np.float64)
        for term in terms[2:]:
            if np.shape(term) == np.shape(total):
                total += term
            else:
                total = total + term
    total *= _SLACK
    total += (len(terms) + 1) * ETA
    return total


_EXACT_MULTIPLES = math.ldexp(1.0, 52)  # k ETA for integers k <= 2^52 is the binary64 number of bit pattern k


def _eta_times(c):
    """A binary64 number >= ETA c for each c >= 0 (inf where ceil(c) > 2^52 or c is not finite), without a
    floating-point multiplication by the subnormal ETA (microcode-slow, several times slower than the
    rest of a division): ETA ceil(c), exactly, as the number whose bit pattern is the integer ceil(c)."""
    whole = np.ceil(c)
    fits = whole <= _EXACT_MULTIPLES  # False for nan
    bound = np.where(fits, whole, 0.0).astype(np.int64).view(np.float64)
    return np.where(fits, bound, np.inf)


def _rounding_terms(c) -> list:
    """Terms whose sum bounds |z - c| for c = fl(z), one operation: (u |c| + ETA/2) / (1 - u) <=
    u (1 + 2u) |c| + ETA = |c| PHI + ETA."""
    magnitude = np.abs(c)
    magnitude *= PHI
    return [magnitude, ETA]


def _directed_sum(a, b, towards: float):
    """The binary64 number next to the exact a + b in the direction `towards` (-inf: the largest
    one <= a + b; inf: the smallest one >= a + b).  Knuth's TwoSum gives the exact error of
    s = fl(a + b) in round to nearest (additions are exact in the subnormals): a + b = s + error.
    An overflow (s infinite, the error not finite) is a bound only towards its own side; else nan."""
    s = a + b
    b_part = s - a
    error = (a - (s - b_part)) + (b - b_part)
    wrong_side = error < 0 if towards < 0 else error > 0
    stepped = np.where(wrong_side, np.nextafter(s, towards), s)
    return np.where(np.isfinite(error), stepped, np.where(s == towards, s, np.nan))


def _midpoint(lo, hi):
    """A binary64 midpoint m of [lo, hi] and the larger of fl(hi - m), fl(m - lo): one rounded
    operation whose exact result is the larger distance to an end."""
    mid = lo * 0.5
    mid += hi * 0.5  # no overflow
    distance, other = hi - mid, mid - lo
    in_place = isinstance(distance, np.ndarray) and distance.shape == np.shape(other)
    return mid, np.maximum(distance, other, out=distance if in_place else None)


def _frobenius_upper(M: MidRad):
    """||M||_F from above for every matrix of M (the last two axes)."""
    return row_norms_upper(row_norms_upper(up(np.abs(M.mid) + M.rad)))


class MidRad:
    """Binary64 arrays mid, rad with |z - mid| <= rad for every exact value z they stand for.

    rad may be a 0-d zero (exact values); it broadcasts against mid.  numpy functions that the
    generic formulas use (where, swapaxes, diagonal) are dispatched here; any other raises
    NotSupported."""

    __slots__ = ("mid", "rad")
    __array_ufunc__ = None  # ndarray (op) MidRad: numpy defers to MidRad's reflected operators

    def __init__(self, mid, rad=0.0):
        self.mid = np.asarray(mid, dtype=np.float64)
        self.rad = np.asarray(rad, dtype=np.float64)

    @classmethod
    def hull(cls, lo, hi) -> MidRad:
        """The enclosure of [lo, hi] (binary64 bounds)."""
        mid, distance = _midpoint(lo, hi)
        return cls(mid, _bounded_sum(distance, scratch=True))

    # the ends of the enclosure: the binary64 numbers next to the exact mid -+ rad
    @property
    def lo(self):
        """The largest binary64 numbers <= mid - rad (exactly rounded down): the lower ends, for output."""
        return _directed_sum(self.mid, -self.rad, -np.inf)

    @property
    def hi(self):
        """The smallest binary64 numbers >= mid + rad (exactly rounded up): the upper ends, for output."""
        return _directed_sum(self.mid, self.rad, np.inf)

    # the same ends within about an ulp, in four passes each (rounding.up, down: the successor of
    # Rump et al.), for the operations' internal use
    @property
    def lower(self):
        """Lower ends within about an ulp of mid - rad (rounding.down; cheaper than lo)."""
        return down(self.mid - self.rad)

    @property
    def upper(self):
        """Upper ends within about an ulp of mid + rad (rounding.up; cheaper than hi)."""
        return up(self.mid + self.rad)

    @property
    def shape(self):
        """The shape of the array of enclosures (that of mid)."""
        return self.mid.shape

    @property
    def ndim(self):
        """The number of axes of the array of enclosures (that of mid)."""
        return self.mid.ndim

    def __len__(self):
        return len(self.mid)

    def __getitem__(self, key) -> MidRad:
        rad = _index(_full(self.rad, self.mid.shape), key) if self.rad.ndim else self.rad
        return MidRad(_index(self.mid, key), rad)

    def __neg__(self) -> MidRad:
        return MidRad(-self.mid, self.rad)

    def __add__(self, other) -> MidRad:
        other = lift(other)
        return _rounded(self.mid + other.mid, self, other)

    __radd__ = __add__

    def __sub__(self, other) -> MidRad:
        """As __add__: fl(x_m - y_m) is one rounded operation too (no negated copy of y)."""
        return _difference(self, lift(other))

    def __rsub__(self, other) -> MidRad:
        return _difference(lift(other), self)

    def __mul__(self, other) -> MidRad:
        """|xy - x_m y_m| <= x_r |y_m| + |x_m| y_r + x_r y_r, plus the rounding of x_m y_m.  Times a
        boolean mask, an exact 0 or an exact 2^k (k >= 0) the product is exact (or overflows to inf).
        Times an exact 0 it is 0 only where x has a bound: an enclosure that is not finite may stand for an
        undefined value (a division by an enclosure of zero), and x**0 is x * 0 + 1 (expr.integer_power),
        undefined there as in arb."""
        if isinstance(other, np.ndarray) and other.dtype == bool:
            mid = np.where(other, self.mid, 0.0)
            return MidRad(mid, np.where(other, self.rad, 0.0) if _has_radius(self.rad) else self.rad)
        if isinstance(other, (int, float)) and not isinstance(other, bool):
            if other == 0:
                bounded = np.isfinite(self.mid) & np.isfinite(self.rad)
                return MidRad(np.where(bounded, 0.0, np.nan))
            # an exact 2^k; an integer past 2^53 may only round to one (2^60 + 1), which lift keeps as a radius
            if abs(other) >= 1 and math.frexp(other)[0] in (0.5, -0.5) and float(other) == other:
                return MidRad(self.mid * other, self.rad * abs(other))
        other = lift(other)
        mid = self.mid * other.mid
        terms = _rounding_terms(mid)
        if _has_radius(self.rad):
            terms.append(self.rad * np.abs(other.mid))
        if _has_radius(other.rad):
            terms.append(np.abs(self.mid) * other.rad)
            if _has_radius(self.rad):
                terms.append(self.rad * other.rad)
        return MidRad(mid, _bounded_sum(*terms, scratch=True))

    __rmul__ = __mul__

    def __truediv__(self, other) -> MidRad:
        """q = fl(x_m / y_m): |x/y - q| <= |x_m/y_m - q| + (x_r + |x_m/y_m| y_r) / |y|, with |y| >= l =
        |y_m| - y_r > 0 (else no bound: nan) and |x_m/y_m| <= |q| (1 + 2^-52) + ETA:
        the terms x_r f1 and |q| f2 + ETA f2' with f1 >= 1/l, f2 >= y_r f1 (1 + 2^-52), f2' >= y_r f1.
        With a radius of y, the rounding |q| PHI + ETA joins them: |q| (PHI + f2) + ETA (1 + f2') in two
        terms, |q| w with w >= PHI + f2 and ETA c with c >= 1 + f2' (_eta_times)."""
        other = lift(other)
        q = self.mid / other.mid
        smallest = down(np.abs(other.mid) - other.rad)
        # nan where l <= 0: every radius term below carries it into the result (0 * nan is nan), on
        # the divisor's shape, which is often smaller than the result's
        inverse = np.where(smallest > 0, up(1.0 / smallest), np.nan)
        if _has_radius(other.rad):
            spread = up(other.rad * inverse)  # f2'
            magnitude = np.abs(q)
            magnitude *= up(up(spread * (1 + 2 * UNIT_ROUNDOFF)) + PHI)  # w, on the divisor's shape
            terms = [magnitude, _eta_times(up(1.0 + spread))]
        else:
            terms = _rounding_terms(q)
        if _has_radius(self.rad):
            terms.append(self.rad * inverse)
        rad = _bounded_sum(*terms, scratch=True)
        if len(terms) == 2 and not _has_radius(other.rad):  # exact operands: the nan here
            rad = np.where(smallest > 0, rad, np.nan)
        return MidRad(q, rad)

    def __rtruediv__(self, other) -> MidRad:
        return lift(other) / self

    def sum(self, axis=-1, keepdims: bool = False) -> MidRad:
        """|fl(sum m_l) - sum m_l| <= gamma_{k-1} sum |m_l| (any order), plus the sum of the radii."""
        axes = axis if isinstance(axis, tuple) else (axis,)
        k = math.prod(self.mid.shape[a] for a in axes)
        if len(axes) > 1:
            mid = self.mid.sum(axis=axis, keepdims=keepdims)
        else:
            mid = reduce_axis(np.add, self.mid, axis, keepdims)
        magnitude = _abs_total(self.mid, axes, keepdims)
        rad = up(_factors(max(k - 1, 1))[0] * magnitude)
        if _has_radius(self.rad):
            rad = up(rad + _nonneg_total(_full(self.rad, self.mid.shape), axes, keepdims))
        return MidRad(mid, rad)

    def __array_function__(self, func, types, args, kwargs):
        if func is np.where:
            condition, x, y = args
            x, y = lift(x), lift(y)
            return MidRad(np.where(condition, x.mid, y.mid), np.where(condition, x.rad, y.rad))
        if func in (np.swapaxes, np.diagonal):
            M = args[0]
            # a 0-d radius (0 for exact values) is every entry's: kept so, the products still see
            # exact operands (_has_radius) and skip the bound of a radius
            rad = M.rad if M.rad.ndim == 0 else func(_full(M.rad, M.mid.shape), *args[1:], **kwargs)
            return MidRad(func(M.mid, *args[1:], **kwargs), rad)
        raise NotSupported(f"numpy's {func.__name__} on midpoint-radius arrays")


def _rounded(mid, x: MidRad, y: MidRad) -> MidRad:
    """The enclosure of x + y or x - y from mid, its one rounded operation on the midpoints: the
    rounding (_rounding_terms) and both radii."""
    radii = [r for r in (x.rad, y.rad) if _has_radius(r)]
    if not radii and isinstance(mid, np.ndarray):
        return MidRad(mid, _rounding_bound(mid))
    return MidRad(mid, _bounded_sum(*_rounding_terms(mid), *radii, scratch=True))


_ROUNDING_FACTOR = float_at_least(Fraction(PHI) / (1 - Fraction(2) ** -53) ** 2)


def _rounding_bound(c):
    """An upper bound of |c| PHI + ETA (_rounding_terms' sum) in three passes, for an operation on exact
    operands: t = fl(|c| F) >= |c| F (1 - u) - ETA/2 with F (1 - u)^2 >= PHI, and fl(t + 2 ETA) >=
    (1 - u)(t + 2 ETA) >= |c| PHI + (3/2)(1 - u) ETA (a sum of nonnegatives)."""
    bound = np.abs(c)
    bound *= _ROUNDING_FACTOR
    bound += 2 * ETA
    return bound


def _difference(x: MidRad, y: MidRad) -> MidRad:
    return _rounded(x.mid - y.mid, x, y)


def _abs_total(M, axes: tuple, keepdims: bool):
    """_nonneg_total of |M| (over the last axis rounding.abs_sum_upper: no array of |M| the size of M)."""
    if len(axes) == 1 and axes[0] % M.ndim == M.ndim - 1:
        return abs_sum_upper(M, keepdims)
    return _nonneg_total(np.abs(M), axes, keepdims)


def _nonneg_total(M, axes: tuple, keepdims: bool):
    """An upper bound of the sum of M >= 0 over the given axes."""
    for a in sorted((a % M.ndim for a in axes), reverse=True):
        M = nonneg_sum_upper(M, axis=a, keepdims=keepdims)
    return M


def _index(M: np.ndarray, key):
    """M[key]; the pair gathers of certify.core.quantities (M[..., i], M[..., i, k] with index arrays)
    as one take over a flat last axis, several times faster than numpy's fancy indexing."""
    if isinstance(key, tuple) and len(key) in (2, 3) and key[0] is Ellipsis and all(
            isinstance(index, np.ndarray) and index.dtype.kind == "i" for index in key[1:]):
        if len(key) == 2:
            return np.take(M, key[1], axis=-1)
        flat = M.reshape(M.shape[:-2] + (-1,))
        return np.take(flat, key[1] * M.shape[-1] + key[2], axis=-1)
    return M[key]


def _transposes(A: np.ndarray, B: np.ndarray) -> bool:
    """B is the view swapaxes(A, -1, -2) (a Gram matrix A A^T): the same numbers."""
    Bt = np.swapaxes(B, -1, -2)
    return (Bt.shape == A.shape and Bt.strides == A.strides
            and Bt.__array_interface__["data"][0] == A.__array_interface__["data"][0])


def lift(value) -> MidRad:
    """A MidRad of a MidRad, or of exact binary64 values (numbers, float or bool arrays)."""
    if isinstance(value, MidRad):
        return value
    if isinstance(value, (Fraction, int)) and not isinstance(value, bool) and Fraction(float(value)) != value:
        return MidRad64.number(value)
    return MidRad(value)


def _extreme(ufunc, x: MidRad) -> MidRad:
    """The enclosure of the maximum (ufunc np.maximum) or minimum (np.minimum) of x's entries along the
    last axis, the ends rounded outward once after the reduction instead of once per entry.

    With z_p = mid_p - rad_p (exact) and c_p = fl(z_p): pred(c_p) <= z_p <= succ(c_p), and fl, pred
    and succ are nondecreasing, so for m = ufunc over p of c_p: the maximum of the z_p is at least
    z_p* >= pred(m) (p* where c_p* = m), the minimum at least pred(m) (every z_p >= pred(c_p) >=
    pred(m)), and down(m) <= pred(m) (rounding.down).  Likewise the upper ends from fl(mid_p + rad_p),
    at most succ(M) <= up(M) for M their maximum (or minimum): every z_p > succ(M) would have
    c_p >= succ(M) > M (or, for the minimum, the entry p* with c_p* = M)."""
    lower = down(reduce_axis(ufunc, x.mid - x.rad))
    upper = up(reduce_axis(ufunc, x.mid + x.rad))
    return MidRad.hull(lower, upper)


_DOUBLED = 2 + math.ldexp(1.0, -49)  # 2 (1 + 2^-50)
_WIDENED = 1 + math.ldexp(1.0, -49)


def _exp_radius(mid, e, r):
    """R >= e + 2 (mid + e) r for binary64 arrays mid, e, r >= 0, in one array of mid's shape besides e.

    s = fl(mid + e) >= (1 - u)(mid + e) (a sum of nonnegatives); p = fl(s r) >= (1 - u) s r - ETA/2 (a
    product); q = fl(p C), C = 2 (1 + 2^-50): q >= (1 - u)^3 C (mid + e) r - (1 - u)(C/2) ETA - ETA/2 >=
    2 (mid + e) r - 1.51 ETA as (1 - u)^3 (1 + 2^-50) >= 1, and q >= 0; then fl(q + e) >= (1 - u)(q + e),
    times S = 1 + 2^-49 rounded: >= (1 - u)^2 S (q + e) - ETA/2, plus 4 ETA rounded: R >= (1 - u)^3 S
    (q + e) + 3.49 ETA >= e + 2 (mid + e) r + (3.49 - 1.52) ETA, as 1 <= (1 - u)^3 S <= 1.0000001."""
    R = np.add(mid, e)
    R *= r
    R *= _DOUBLED
    R += e
    R *= _WIDENED
    R += 4 * ETA
    return R


def _odd(t, low, high):
    """(lower, upper) of f(t) for an odd f, from the bounds [low, high] of f(|t|): f(-s) = -f(s)."""
    positive = t >= 0
    return np.where(positive, low, -high), np.where(positive, high, -low)


def _tanh_bounds(t):
    """(lower, upper) of tanh(t) for binary64 t: tanh(t) = (1 - e) / (1 + e) with e = exp(-2|t|)
    (exact doubling), decreasing in e, and tanh(-t) = -tanh(t)."""
    e_lo, e_hi = exp64.exp_bounds(-2.0 * np.abs(t))
    low = np.maximum(down(down(1.0 - e_hi) / up(1.0 + e_hi)), 0.0)  # tanh(|t|) from below
    high = np.minimum(up(up(1.0 - e_lo) / down(1.0 + e_lo)), 1.0)
    return _odd(t, low, high)


# erfc(s) <= e^(-s^2) / (s sqrt(pi)) < 2^-53 for s >= 6 (Abramowitz & Stegun 7.1.13): erf(s) lies in
# [1 - 2^-53, 1], the binary64 numbers next to it
_ERF_SATURATES = 6.0


def _erf_at(t) -> MidRad:
    """erf(t) for binary64 t (exact values), an enclosure.  For s = |t| < 6, Abramowitz & Stegun 7.1.6:
    erf(s) = (2 / sqrt(pi)) e^(-s^2) sum_{n>=0} term_n, term_0 = s, term_n = term_{n-1} 2 s^2 / (2n + 1),
    positive terms (no cancellation) whose ratio q_n = 2 s^2 / (2n + 3) decreases in n: once q_n <= 1/2
    the tail after term_n is at most term_n (sum_k q_n^k <= 1), and the sum stops when that is below
    2^-60 of it (or 2^-1000, for tiny s).  Every operation of the sum is the backend's own, so its
    rounding is enclosed.  For s >= 6 (and infinite s) see _ERF_SATURATES; erf(-t) = -erf(t); nan
    stays nan."""
    s = np.abs(t)
    near = s < _ERF_SATURATES
    x = MidRad(np.where(near, s, 0.0))
    square = x * x
    twice_square = square * 2  # exact doubling
    term = total = x
    for n in range(1, 400):  # s < 6: q_n <= 1/2 from n = 35 on, and then each term at most halves
        term = term * twice_square / (2 * n + 1)
        total = total + term
        ratio_at_most_half = np.all(twice_square.upper <= (2 * n + 3) / 2)
        if ratio_at_most_half and np.all(term.upper <= np.maximum(total.lower * 2.0**-60, 2.0**-1000)):
            break
    else:
        raise NotSupported("erf's series did not converge")
    series = MidRad.hull(total.lower, up(total.upper + term.upper))  # the tail is in [0, term_n]
    at_s = (2 / MidRad64.sqrt_nonneg(MidRad64.pi())) * MidRad64.exp(-square) * series
    low = np.where(near, np.maximum(at_s.lower, 0.0), 1.0 - UNIT_ROUNDOFF)
    high = np.where(near, np.minimum(at_s.upper, 1.0), 1.0)
    low, high = _odd(t, low, high)
    unknown = np.isnan(t)
    return MidRad.hull(np.where(unknown, np.nan, low), np.where(unknown, np.nan, high))


def _unit_scaled(M):
    """M times a power of two per matrix (the last two axes) that brings its largest entry into [1/2, 1),
    entries that are not finite as 0: the same singular vectors, and products (A^T A, R_Q R_K^T) that
    neither overflow (numpy's eigvalsh and svd then raise LinAlgError, for the whole batch) nor underflow."""
    M = np.where(np.isfinite(M), M, 0.0)
    largest = np.max(np.abs(M), axis=(-2, -1), keepdims=True)
    return np.ldexp(M, -np.frexp(largest)[1])


def top_right_singular_vector(A=None, W_Q=None, W_K=None):
    """A binary64 approximation of the top right singular vector of A or of W_Q W_K^T, batched.

    For A: one step of inverse iteration on A^T A shifted just past its top eigenvalue (a full SVD
    costs ten times more); for the thin W_Q, W_K: W_Q W_K^T = Q_Q (R_Q R_K^T) Q_K^T by QR, the SVD
    of the d_k x d_k core, and Q_K = W_K R_K^-1 (a zero vector where that is not finite: a useless
    but harmless witness).  Only the quality of the witness, never the bound, depends on this."""
    if A is not None:
        A = _unit_scaled(A)
        gram = np.swapaxes(A, -1, -2) @ A
        top = np.linalg.eigvalsh(gram)[..., -1]  # the top singular value squared
        shift = (np.abs(top) * (1 + 1e-9) + 1e-300)[..., None, None] * np.eye(A.shape[-1])
        try:
            v = np.linalg.solve(gram - shift, np.ones(A.shape[:-2] + A.shape[-1:])[..., None])[..., 0]
        except np.linalg.LinAlgError:  # an exactly singular shift: the SVD's vector instead
            v = np.linalg.svd(A)[2][..., 0, :]
        return v / np.sqrt((v * v).sum(axis=-1))[..., None]  # any scale: only the direction matters
    W_Q, W_K = _unit_scaled(W_Q), _unit_scaled(W_K)
    R_Q, R_K = np.linalg.qr(W_Q, mode="r"), np.linalg.qr(W_K, mode="r")  # Q itself costs as much again
    core = np.linalg.svd(R_Q @ np.swapaxes(R_K, -1, -2))[2][..., 0, :]
    with np.errstate(all="ignore"):
        try:  # Q_K core = W_K R_K^-1 core
            v = (W_K @ np.linalg.solve(R_K, core[..., None]))[..., 0]
        except np.linalg.LinAlgError:  # W_K of lower rank: Q_K itself
            v = (np.linalg.qr(W_K)[0] @ core[..., None])[..., 0]
    return np.where(np.isfinite(v), v, 0.0)


def _image_norm_lower(w: MidRad, v):
    """||M v|| / ||v|| from below, given w enclosing M v: ||M v|| >= ||w_mid|| - ||w_rad||."""
    error = row_norms_upper(_full(w.rad, w.shape))
    image = np.maximum(down(sqrt_down(sum_squares_lower(w.mid)) - error), 0.0)
    return np.maximum(down(image / row_norms_upper(v)), 0.0)


def _unsupported(name: str):
    def refuse(*args, **kwargs):
        raise NotSupported(f"{name} in tier 3 (no proven binary64 enclosure here)")

    refuse.__doc__ = f"Raises NotSupported: tier 3 has no proven binary64 enclosure of {name} (arb decides)."
    return staticmethod(refuse)


class MidRad64:
    """The arithmetic protocol on MidRad arrays (protocol.Arithmetic).  Batches: the leading axes."""

    name = "tier3"

    @staticmethod
    def number(value) -> MidRad:
        """The nearest binary64 and its rounding error (0 when value is a binary64 number)."""
        try:
            mid = float(value)
        except OverflowError:  # (copysign would try float(value) again)
            return MidRad(math.inf if value > 0 else -math.inf, math.inf)
        exact = isinstance(value, float) or Fraction(mid) == Fraction(value)
        return MidRad(mid, 0.0 if exact else rounding_radius(np.float64(mid)))

    def array(self, exact) -> MidRad:
        """The enclosures of an exact vector or matrix: nearest binary64 midpoints, each with its rounding
        error as radius (a Binary64Matrix is exact: radius 0)."""
        if isinstance(exact, Binary64Matrix):
            return MidRad(exact.array)  # binary64 numbers: exact
        rows = exact if is_matrix(exact) else [exact]
        values = [[self.number(v) for v in row] for row in rows]
        mid = np.array([[v.mid for v in row] for row in values])
        rad = np.array([[v.rad for v in row] for row in values])
        return MidRad(mid, rad) if is_matrix(exact) else MidRad(mid[0], rad[0])

    def stack(self, values) -> MidRad:
        """The enclosures `values`, broadcast to one shape, on a new last axis."""
        values = [lift(v) for v in values]
        mids = np.broadcast_arrays(*(v.mid for v in values))
        rads = [np.broadcast_to(v.rad, mids[0].shape) for v in values]
        return MidRad(np.stack(mids, axis=-1), np.stack(rads, axis=-1))

    # constants: the nearest binary64 numbers, within u of the exact value
    @staticmethod
    def pi() -> MidRad:
        """pi as the nearest binary64 with its rounding error as radius."""
        return MidRad(math.pi, rounding_radius(np.float64(math.pi)))

    @staticmethod
    def ln2() -> MidRad:
        """log 2 as math.log's binary64 (correctly rounded) with a rounding radius."""
        return MidRad(math.log(2), rounding_radius(np.float64(math.log(2))))

    @staticmethod
    def e() -> MidRad:
        """Euler's number e as the nearest binary64 with its rounding error as radius."""
        return MidRad(math.e, rounding_radius(np.float64(math.e)))

    @staticmethod
    def exp(x) -> MidRad:
        """exp of an enclosure.  Narrow (rad <= 1 everywhere): exp(m + t) = exp(m) e^t with
        |e^t - 1| <= 2r for |t| <= r <= 1 (e^r - 1 <= (e - 1) r by convexity, 1 - e^-r <= r), one
        exp per entry; else exp of both ends (exp increases)."""
        x = lift(x)
        if x.rad.size == 0 or x.rad.max() <= 1.0:  # every radius (nan: False); a reduction, no booleans
            mid, e = exp64.exp_midrad(x.mid)  # |exp(m) - mid| <= e (exp64.exp_midrad's bound)
            if not _has_radius(x.rad):
                return MidRad(mid, e)
            # |exp(x) - mid| <= e + exp(m) |e^t - 1| <= e + (mid + e) 2r, bounded above by _exp_radius
            return MidRad(mid, _exp_radius(mid, e, x.rad))
        return MidRad.hull(exp64.exp_bounds(x.lower)[0], exp64.exp_bounds(x.upper)[1])

    @staticmethod
    def tanh(x) -> MidRad:
        """tanh of an enclosure: the hull of the proven bounds of tanh at both ends (tanh increases)."""
        x = lift(x)
        return MidRad.hull(_tanh_bounds(x.lower)[0], _tanh_bounds(x.upper)[1])  # tanh increases

    def apply(self, name: str, x) -> MidRad:
        """exp, tanh or sqrt, by name; any other function raises NotSupported.  sqrt has no bound (nan) where x
        is not certainly >= 0: that configuration is undecided, not its whole batch."""
        if name == "exp":
            return self.exp(x)
        if name == "tanh":
            return self.tanh(x)
        if name == "sqrt":
            x = lift(x)
            root, inside = self.sqrt_nonneg(x), x.lower >= 0  # nan: False
            if np.all(inside):
                return root
            return MidRad(np.where(inside, root.mid, np.nan), np.where(inside, root.rad, np.nan))
        raise NotSupported(f"{name} in tier 3")

    def one_minus_exp(self, x) -> MidRad:
        """1 - exp(x) from the proven exp (tier 3 has no expm1: its cancellation near 0 only widens the ball)."""
        return 1 - self.exp(x)

    log = _unsupported("log")
    expm1 = _unsupported("expm1")
    log1p = _unsupported("log1p")
    scale_exponent = _unsupported("powers of a matrix")
    ldexp = _unsupported("powers of a matrix")

    @staticmethod
    def erf(x) -> MidRad:
        """erf increases: from erf at the lower ends of x (_erf_at) to erf at the upper ends."""
        x = lift(x)
        if not _has_radius(x.rad):
            return _erf_at(x.mid)
        ends = _erf_at(np.stack([x.lower, x.upper]))
        return MidRad.hull(ends[0].lower, ends[1].upper)

    @staticmethod
    def sqrt_nonneg(x) -> MidRad:
        """sqrt of an enclosure of a value known to be >= 0: [sqrt_down(lower), sqrt_up(upper)], ends
        below 0 taken as 0."""
        x = lift(x)
        return MidRad.hull(sqrt_down(np.maximum(x.lower, 0.0)), sqrt_up(np.maximum(x.upper, 0.0)))

    @staticmethod
    def exact_centre(x) -> MidRad:
        """The midpoints with radius 0: exact binary64 numbers, a shift that adds no radius."""
        return MidRad(lift(x).mid)

    def centred_gram(self, X) -> MidRad:
        """Y Y^T for Y = X - 1 c^T, c the midpoint of the first token (exact), with matmul's bound."""
        Y = X - self.exact_centre(X[..., :1, :])
        return self.matmul(Y, np.swapaxes(Y, -1, -2))  # a product with its own transpose: matmul's Gram bound

    def pairwise_sq_distances(self, X) -> MidRad:
        """||x_i - x_k||^2 for i < k from centred_gram(X) (pairs.squared_distances)."""
        return pairs.squared_distances(self.centred_gram(X))

    @staticmethod
    def relu(x) -> MidRad:
        """max(x, 0) of an enclosure: the hull of max(lower, 0) and max(upper, 0)."""
        x = lift(x)
        return MidRad.hull(np.maximum(x.lower, 0.0), np.maximum(x.upper, 0.0))

    @staticmethod
    def abs(x) -> MidRad:
        """|x| of an enclosure: from the smaller end's distance to 0 (0 when it straddles 0) to the larger."""
        x = lift(x)
        lo, hi = x.lower, x.upper
        return MidRad.hull(np.where(lo > 0, lo, np.where(hi < 0, -hi, 0.0)), np.maximum(np.abs(lo), np.abs(hi)))

    @staticmethod
    def pairwise_min(x, y) -> MidRad:
        """The entrywise minimum of two enclosures: the hull of the minima of their ends."""
        x, y = lift(x), lift(y)
        return MidRad.hull(np.minimum(x.lower, y.lower), np.minimum(x.upper, y.upper))

    overlap_pairs = staticmethod(pairs.all_pairs)
    difference_pairs = staticmethod(pairs.all_pairs)

    @staticmethod
    def maximum(x) -> MidRad:
        """An enclosure of the largest entry along the last axis: the maxima of the ends (_extreme)."""
        return _extreme(np.maximum, lift(x))

    @staticmethod
    def minimum(x) -> MidRad:
        """An enclosure of the smallest entry along the last axis: the minima of the ends (_extreme)."""
        return _extreme(np.minimum, lift(x))

    @staticmethod
    def row_shift(scores, mask):
        """Per row the largest allowed midpoint: an exact binary64 number (softmax does not see it)."""
        mid = lift(scores).mid
        return reduce_axis(np.maximum, mid if np.all(mask) else np.where(mask, mid, -np.inf))

    def product(self, *factors) -> MidRad:
        """((a @ b) @ c) @ ..., left to right, each product with matmul's bound."""
        return functools.reduce(self.matmul, factors)

    @staticmethod
    def matmul(a, b) -> MidRad:
        """A B for A (..., n, k) and B (..., k, m), the error bound of the module docstring."""
        a, b = lift(a), lift(b)
        A, B = a.mid, b.mid
        k = A.shape[-1]
        mid = A @ B
        gram = _transposes(A, B) and (not (_has_radius(a.rad) or _has_radius(b.rad)) or _transposes(
            _full(a.rad, A.shape), _full(b.rad, B.shape)))
        a_norms = row_norms_upper(A)
        b_norms = a_norms if gram else row_norms_upper(np.swapaxes(B, -1, -2))
        left = up(_factors(k)[0] * a_norms)
        if _has_radius(a.rad):
            a_rad_norms = row_norms_upper(_full(a.rad, A.shape))
            left = up(left + a_rad_norms)
        lefts, rights = [left], [b_norms]  # rad >= left_i ||b_j|| + k ETA ...
        if _has_radius(b.rad):  # ... + (||a_i|| + ||(A_rad)_i||) ||(B_rad)_j||
            b_rad_norms = a_rad_norms if gram else row_norms_upper(np.swapaxes(_full(b.rad, B.shape), -1, -2))
            lefts.append(a_norms if not _has_radius(a.rad) else up(a_norms + a_rad_norms))
            rights.append(b_rad_norms)
        return MidRad(mid, outer_upper(lefts, rights, k))

    def spectral_norm(self, matrix, witnesses: dict, key: str) -> MidRad:
        """||M||_2 in [||M v|| / ||v||, ||M||_F] per matrix, v a binary64 witness (recorded)."""
        matrix = lift(matrix)
        v = witnesses[key] = top_right_singular_vector(A=matrix.mid)
        lower = _image_norm_lower(self.matmul(matrix, v[..., None])[..., 0], v)
        return MidRad.hull(lower, _frobenius_upper(matrix))

    def thin_product_norm(self, L, R, witnesses: dict, key: str) -> MidRad | None:
        """||L R^T||_2 in [||L (R^T v)|| / ||v||, ||L||_F ||R||_F] with the thin witness v; None when
        R has as many columns as rows (the d x d route is as cheap)."""
        L, R = lift(L), lift(R)
        if R.shape[-1] >= R.shape[-2]:
            return None
        v = witnesses[key] = top_right_singular_vector(W_Q=L.mid, W_K=R.mid)
        image = self.matmul(L, self.matmul(np.swapaxes(R, -1, -2), v[..., None]))[..., 0]
        return MidRad.hull(_image_norm_lower(image, v), up(_frobenius_upper(L) * _frobenius_upper(R)))

    @staticmethod
    def certainly_zero(x) -> bool:
        """Always False: a divisor near 0 gives nan (no bound, undecided), never an error."""
        return False

    @staticmethod
    def first_zero(x) -> None:
        """None, as certainly_zero is False: a LayerNorm dividing by 0 gives nan (undecided), never an error."""
        return None

    @staticmethod
    def outside_domain(name: str, x) -> bool:
        """Always False: apply() refuses what it cannot enclose, so no domain error is reported here."""
        return False

    @staticmethod
    def certainly_le(x, y):
        """Per entry: True where x <= y certainly; False where not certain (tier 3 never says violated)."""
        return lift(x).hi <= lift(y).lo
