"""Ball arithmetic (python-flint arb): every number is an enclosure of the exact value.

Arrays are numpy object arrays of arb; products go through arb_mat (C speed, same enclosure
guarantees).  The working precision is flint's context precision: callers set it with
`certify.core.precision.working(bits)`, never here.
"""

from __future__ import annotations

import collections
import functools
import operator
import weakref
from fractions import Fraction

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from certify.core import arb_pickle  # noqa: F401  (registers arb's pickling: results that hold balls pickle)
from certify.core import refine
from certify.core import spectral
from certify.core import thin_norm
from certify.core.arith import differences
from certify.core.arith import overlaps
from certify.core.arith import pairs
from certify.core.numbers import Binary64Matrix, is_matrix


def _elementwise(function, what: str):
    """function on every ball of an object array (as a numpy ufunc), or on one ball directly (a ufunc
    would wrap it in an array and out again, several times the work of the function itself)."""
    ufunc = np.frompyfunc(function, 1, 1)

    def apply(x):
        return function(x) if type(x) is arb else ufunc(x)
    apply.__doc__ = f"{what} of a ball, or of every ball of an object array."
    return apply


_exp = _elementwise(arb.exp, "exp(x)")
_log = _elementwise(arb.log, "log(x)")


@functools.lru_cache(maxsize=None)
def _tiny(precision: int) -> arb:
    """2^-precision: below it, |x|^3 is a relative error under 2^-2 precision of x (see _log1p_ball)."""
    return arb(2) ** -precision


@functools.cache
def _near_one(precision: int) -> arb:
    """[1 +/- 2^-precision] (its radius rounded up): expm1(t) / t for every |t| <= 2^-precision (_expm1_ball)."""
    return arb(1, arb((1, -precision)))


def _expm1_ball(x: arb, tiny: arb, near_one: arb) -> arb:
    """exp(x) - 1 with relative accuracy for tiny x (tiny, near_one: _tiny and _near_one of the working precision).

    arb's expm1 returns only about 28 correct bits once the exponent of x passes 2^62 (doubly exponential collapse
    gets there).  For |t| <= T = 2^-prec <= 1/2, Taylor's theorem with the Lagrange remainder gives
    |expm1(t) - t| <= t^2 e^|t| / 2 <= |t| T e^(1/2) / 2 < |t| T, so expm1(t) = t (1 + eta) with |eta| < T: x times
    [1 +/- T] holds expm1 of every point of x, as accurate as the precision (and one product, where the Taylor
    form x + x^2/2 +- |x|^3 took five operations, 0.6 to 2 us a ball: the centred softmax takes one an entry of P).
    """
    if abs(x) <= tiny:
        return x * near_one
    return x.expm1()


def _expm1(x):
    """exp(x) - 1, with relative accuracy for tiny x, of a ball or of every ball of an object array (the constants
    found once)."""
    tiny, near_one = _tiny(ctx.prec), _near_one(ctx.prec)
    if type(x) is arb:
        return _expm1_ball(x, tiny, near_one)
    x = np.asarray(x, dtype=object)
    balls = x.ravel().tolist()
    values = [_expm1_ball(ball, tiny, near_one) for ball in balls]
    return np.fromiter(values, dtype=object, count=len(balls)).reshape(x.shape)


def _log1p_ball(x: arb) -> arb:
    """log(1 + x), likewise: log1p(x) = x - x^2/2 + r, |r| <= |x|^3 / (3 (1 - |x|)^3) <= |x|^3 for |x| <= 2^-prec."""
    if x.abs_upper() <= _tiny(ctx.prec):
        return x - x * x / 2 + arb(0, x.abs_upper() ** 3)
    return x.log1p()


_log1p = _elementwise(_log1p_ball, "log(1 + x), with relative accuracy for tiny x,")
_erf = _elementwise(arb.erf, "erf(x)")
_abs = _elementwise(abs, "|x|")
# The true value is known to be >= 0 (a sum of squares): clip the ball before the square root
# so that rounding below 0 does not turn into nan.
_sqrt_nonneg = _elementwise(lambda x: x.nonnegative_part().sqrt(), "sqrt(x), for x known to be >= 0,")
_relu = _elementwise(lambda x: x.max(arb(0)), "max(x, 0)")
_min2 = np.frompyfunc(lambda x, y: x.min(y), 2, 1)
# arb's max and min of two balls as ufuncs, so that a reduction over an axis loops in C
_max_of = np.frompyfunc(arb.max, 2, 1)
_min_of = np.frompyfunc(arb.min, 2, 1)
_midpoint = np.frompyfunc(lambda x: arb(x.mid()), 1, 1)
_of_float = np.frompyfunc(arb, 1, 1)  # a binary64 value is exact in arb


def to_arb(value) -> arb:
    """The ball of an exact Fraction (exact when it is a dyadic that fits the precision)."""
    if type(value) is int:  # the common case, without making a Fraction of it
        return arb(value)
    if not isinstance(value, Fraction):
        value = Fraction(value)
    if value.denominator == 1:
        return arb(value.numerator)
    return arb(fmpq(value.numerator, value.denominator))


def hull(lo, hi) -> arb:
    """A ball containing the closed interval [lo, hi] of exact numbers."""
    return to_arb(lo).union(to_arb(hi))


class Ball:
    """The rigorous backend (certify.core.arith.protocol): numbers are arb balls that enclose the exact
    value at flint's working precision; the only backend whose comparisons give a verdict."""

    name = "arb"

    def number(self, value) -> arb:
        """The ball of an exact value (Fraction or int), exact when it is a dyadic that fits the precision."""
        return to_arb(value)

    def array(self, exact) -> np.ndarray:
        """An object array of balls of an exact vector or matrix (rows of Fractions, or a Binary64Matrix, whose
        2-d form goes through arb_mat and is remembered for products)."""
        if isinstance(exact, Binary64Matrix):
            balls = _of_float(exact.array)  # binary64 values are exact in arb
            if balls.ndim == 2:  # kept with its arb_mat for products (made from the balls: fewer conversions), and
                # with the binary64 values, the midpoints a norm's witness is found from (_binary64)
                _remember(balls, _mat_of_entries(balls.shape, balls.ravel().tolist()), exact.array)
            return balls
        out = np.empty((len(exact), len(exact[0])) if is_matrix(exact) else (len(exact),), dtype=object)
        for index, value in np.ndenumerate(np.array(exact, dtype=object)):
            out[index] = to_arb(value)
        return out

    @staticmethod
    def pi() -> arb:
        """An enclosure of pi at the working precision of the moment."""
        return arb.pi()

    @staticmethod
    def ln2() -> arb:
        """An enclosure of log 2 at the working precision of the moment."""
        return arb.const_log2()

    @staticmethod
    def e() -> arb:
        """An enclosure of Euler's number e at the working precision of the moment."""
        return arb.const_e()

    exp = staticmethod(_exp)
    log = staticmethod(_log)
    expm1 = staticmethod(_expm1)
    log1p = staticmethod(_log1p)
    abs = staticmethod(_abs)

    @staticmethod
    def one_minus_exp(x):
        """1 - exp(x) as -expm1(x): no cancellation when x is tiny."""
        return -_expm1(x)

    erf = staticmethod(_erf)
    sqrt_nonneg = staticmethod(_sqrt_nonneg)
    relu = staticmethod(_relu)
    pairwise_min = staticmethod(_min2)
    overlap_pairs = staticmethod(overlaps.screened_pairs)
    difference_pairs = staticmethod(differences.screened_pairs)
    # An exact number at (the midpoint of) each entry: a shift that adds no radius.
    exact_centre = staticmethod(_midpoint)

    @staticmethod
    def apply(name: str, x):
        """An elementary function by its arb name (exp, log, sqrt, tan, atan, tanh, ...), on a ball or an array."""
        if isinstance(x, np.ndarray):
            return np.frompyfunc(lambda t: getattr(t, name)(), 1, 1)(x)
        return getattr(x, name)()

    @staticmethod
    def stack(values):
        """The balls or arrays `values` on a new last axis, as one object array (np.array puts them on the first)."""
        return np.moveaxis(np.array(values, dtype=object), 0, -1)

    @staticmethod
    def matmul(a, b):
        """The product a @ b of ball vectors or matrices by arb_mat (one ball per entry, rigorously rounded);
        vector x vector gives a ball, a matrix product keeps its arb_mat for later products."""
        vector_out = b.ndim == 1
        left = a.reshape(1, -1) if a.ndim == 1 else a
        right = b.reshape(-1, 1) if vector_out else b
        product = _mat_of(left) * _mat_of(right)
        if a.ndim == 2 and not vector_out:
            return _array_of_mat(product)
        out = np.array(product.tolist(), dtype=object)
        if a.ndim == 1 and vector_out:
            return out[0, 0]
        if a.ndim == 1:
            return out[0]
        return out[:, 0] if vector_out else out

    @staticmethod
    def product(*factors):
        """((a @ b) @ c) @ ... of ball matrices, left to right, by arb_mat: the same products as matmul's,
        but only the last is made an array of balls (and kept with its arb_mat for later products)."""
        return _array_of_mat(functools.reduce(operator.mul, map(_mat_of, factors)))

    @staticmethod
    def centred_gram(X):
        """Y Y^T for Y = X - 1 c^T, c the midpoint of token 0 (exact), all in arb_mat: the n x d
        differences are not made one by one as balls of an object array."""
        return _array_of_mat(_centred_gram_mat(X))

    @staticmethod
    def pairwise_sq_distances(X):
        """||x_i - x_k||^2 for i < k (pairs.squared_distance) pair by pair, reading G = centred_gram(X) from its
        arb_mat: neither the n x n array of balls nor arrays of the pairs' diagonal entries are made (the
        same balls as those arrays' arithmetic, in a fraction of the numpy calls)."""
        G = _centred_gram_mat(X)
        n = G.nrows()
        g = list(map(G.__getitem__, pairs.diagonal_positions(n)))
        above = pairs.above_diagonal_positions(n)
        return np.fromiter([pairs.squared_distance(g[i], g[k], G[i, k]) for i, k in above], dtype=object,
                           count=len(above))

    @staticmethod
    def maximum(x):
        """An enclosure of the largest entry along the last axis (arb's max of balls)."""
        return _reduce_last_axis(arb.max, _max_of, x)

    @staticmethod
    def minimum(x):
        """An enclosure of the smallest entry along the last axis (arb's min of balls)."""
        return _reduce_last_axis(arb.min, _min_of, x)

    @staticmethod
    def row_shift(scores, mask):
        """An exact number near each row's largest allowed score.

        Softmax is invariant under any shift; an exact one (the midpoint of the ball) adds no
        radius, and keeps exp() of moderate size.
        """
        if mask.all():  # every score allowed: Ball.maximum's fold, row by row over lists (an object ufunc's
            # reduce and a ufunc of midpoints cost more in a check); mid() is a new exact ball
            return np.fromiter([functools.reduce(arb.max, row).mid() for row in scores.tolist()], dtype=object,
                               count=scores.shape[0])
        shifts = np.empty(scores.shape[0], dtype=object)
        for i in range(scores.shape[0]):
            allowed = [s for s, keep in zip(scores[i], mask[i]) if keep]
            shifts[i] = arb(Ball.maximum(np.array(allowed, dtype=object)).mid())
        return shifts

    @staticmethod
    def spectral_norm(matrix, witnesses: dict, key: str) -> arb:
        """||M||_2 enclosed (certify.core.spectral) from the witness recorded under witnesses[key] (float64's,
        which certify.core.primitives.LayerView finds first), or where there is none (float64 left its
        range) from the SVD of the matrix's midpoints scaled into binary64 (spectral.witness_of_ball),
        recorded there for the next precision and the certificate; refined first where refine.refining asks."""
        if key not in witnesses:
            witnesses[key] = spectral.witness_of_ball(matrix, _binary64(matrix))
        M = _mat_of(matrix)  # A, V: the arb_mat their products use
        witnesses[key] = refine.refined(M, witnesses[key])
        return spectral.enclose(M, witnesses[key])

    @staticmethod
    def thin_product_norm(L, R, witnesses: dict, key: str) -> arb | None:
        """||L R^T||_2 through the k x k reduction of certify.core.thin_norm, from the k x k witness recorded
        under witnesses[key] (float64's), or where there is none from one of the midpoints of L and R scaled
        into binary64 (thin_norm.reduced_witness_of_balls), recorded there.  None, the d x d route, when
        float64 finds R rank-deficient or a d x d witness is recorded.  Where W_K^T W_K is not certainly
        positive definite at this precision, the d x d product with a witness of its own midpoints (the
        certificate then records that one).  Either witness is refined first where refine.refining asks."""
        if key not in witnesses:
            witness = thin_norm.reduced_witness_of_balls(L, R)
            if witness is None:
                return None  # rank-deficient in float64: the d x d route
            witnesses[key] = witness
        elif witnesses[key].basis.shape[0] != L.shape[1]:
            return None  # a d x d witness: the d x d route
        L, R = _mat_of(L), _mat_of(R)
        reduced = thin_norm.reduced_matrix(L, R)
        if reduced is not None:
            witnesses[key] = refine.refined(reduced, witnesses[key])
            return spectral.enclose(reduced, witnesses[key]).nonnegative_part().sqrt()
        product = L * R.transpose()
        witnesses[key] = refine.refined(product, thin_norm.midpoint_witness(product))
        return spectral.enclose(product, witnesses[key])

    @staticmethod
    def scale_exponent(matrix) -> int:
        """Always 0: arb's exponents do not overflow, so no matrix needs scaling by a power of 2."""
        return 0

    @staticmethod
    def ldexp(x, k: int):
        """x 2^k, exactly (a power of two scales a ball without widening it)."""
        return x * arb(2) ** k

    @staticmethod
    def certainly_zero(x) -> bool:
        """x is the exact number 0 (a ball of radius 0 around 0)."""
        return isinstance(x, arb) and x == 0

    @staticmethod
    def first_zero(x) -> int | None:
        """The index of the first entry of the vector x that is the exact number 0 (certainly_zero), else None."""
        return next((i for i, value in enumerate(x) if Ball.certainly_zero(value)), None)

    @staticmethod
    def outside_domain(name: str, x) -> bool:
        """x certainly lies outside the domain of log (x <= 0) or sqrt (x < 0)."""
        if not isinstance(x, arb):
            return False
        return bool(x <= 0) if name == "log" else bool(x < 0) if name == "sqrt" else False

    @staticmethod
    def certainly_le(x: arb, y: arb):
        """Three-valued x <= y: True, False (certainly x > y) or None (undecided)."""
        if x <= y:
            return True
        if x > y:
            return False
        return None


def _centred_gram_mat(X: np.ndarray) -> arb_mat:
    """Y Y^T as an arb_mat, Y = X - 1 c^T with c the midpoint of token 0 (Ball.centred_gram)."""
    M = _mat_of(X)
    n, d = M.nrows(), M.ncols()
    centre = arb_mat(1, d, [x.mid() for x in X[0]])  # mid(): an exact ball, made from the array's own
    Y = M - _ones_column(n) * centre  # 1 c^T: products by 1 are exact
    return Y * Y.transpose()


@functools.lru_cache(maxsize=64)
def _ones_column(n: int) -> arb_mat:
    """The n x 1 matrix of ones (exact at every precision; shared, never written to)."""
    return arb_mat(n, 1, [1] * n)


# The arb_mat form of the matrices products use, by id of their object array: a matrix taking part
# in several products (tokens in the scores, P Z and the Gram matrix; Y and Y^T) is converted once;
# with the binary64 array whose values its balls are, for a matrix of the inputs (Ball.array).
# An array enters only read-only (so its entries stay those of its arb_mat).  Entries of arrays that
# have died are dropped by _remember once the table has doubled, not by a weakref callback: Python
# swallows an exception raised inside such a callback ("Exception ignored in ..."), and Ctrl-C
# landing in one was lost, the command running on to its verdict with a traceback on stderr.
_MATS: dict[int, tuple[weakref.ref, arb_mat, np.ndarray | None]] = {}
_PRUNED_AT = [8]  # the table's size that sets off the next pruning (twice the live entries, at least 8)


def _remember(array: np.ndarray, mat: arb_mat, floats: np.ndarray | None = None) -> None:
    array.setflags(write=False)  # (cheaper than through array.flags)
    if len(_MATS) >= _PRUNED_AT[0]:
        # over a copy, and a key dropped already passed over: checks run in threads share the table, and one deleting
        # an entry another had dropped raised KeyError (or the table changed size under the look)
        for key, (ref, _, _) in list(_MATS.items()):
            if ref() is None:
                _MATS.pop(key, None)
        _PRUNED_AT[0] = max(8, 2 * len(_MATS))
    _MATS[id(array)] = (weakref.ref(array), mat, floats)  # a dead array's entry under a reused id is replaced


def _remembered(array: np.ndarray) -> arb_mat | None:
    entry = _MATS.get(id(array))
    return entry[1] if entry is not None and entry[0]() is array else None


def _binary64(array: np.ndarray) -> np.ndarray | None:
    """The binary64 array whose values array's balls are exactly, for a matrix of the inputs (Ball.array), else None:
    its witness's SVD takes them as they are, not converted back from the balls (a 16 x 16 A: 21 of 23 us)."""
    entry = _MATS.get(id(array))
    return entry[2] if entry is not None and entry[0]() is array else None


def _mat_of(x: np.ndarray) -> arb_mat:
    """x (2-d, object array of arb) as an arb_mat: the remembered one, the transpose of a remembered
    one when x is its transposed view, or converted (and remembered while x lives)."""
    if (mat := _remembered(x)) is not None:
        return mat
    base = x.base
    if isinstance(base, np.ndarray) and (mat := _remembered(base)) is not None and _is_transpose(x, base):
        return mat.transpose()  # x = base^T: the same entries
    mat = _mat_of_entries(x.shape, x.ravel().tolist())
    if x.base is None and x.flags.writeable:  # an array of its own (not a view of another's entries)
        _remember(x, mat)
    return mat


def _mat_of_entries(shape: tuple[int, int], balls: list) -> arb_mat:
    """The arb_mat of `shape` with these balls, row by row, each copied in (the constructor would first
    make a copy of each as a ball of its own)."""
    mat = arb_mat(*shape)
    collections.deque(map(mat.__setitem__, _positions(*shape), balls), maxlen=0)  # consumed in C
    return mat


@functools.lru_cache(maxsize=16)
def _positions(rows: int, cols: int) -> list[tuple[int, int]]:
    """(i, j) of a rows x cols matrix, row by row."""
    return [(i, j) for i in range(rows) for j in range(cols)]


def _is_transpose(x: np.ndarray, base: np.ndarray) -> bool:
    """x is the view base^T: reversed shape and strides, starting at base's first entry.  A view of a
    C-contiguous base with its reversed strides, all positive, spans the whole of base's memory, so it
    can start nowhere else; only otherwise are the data pointers compared (a slower look-up)."""
    if x.shape != base.shape[::-1] or x.strides != base.strides[::-1]:
        return False
    if base.flags.c_contiguous and min(x.strides) > 0:
        return True
    return _data(x) == _data(base)


def _data(x: np.ndarray) -> int:
    return x.__array_interface__["data"][0]


def _array_of_mat(mat: arb_mat) -> np.ndarray:
    """The object array of mat's entries (an array of its own), remembered with it."""
    rows, cols = mat.nrows(), mat.ncols()
    # fromiter takes the balls as they are (np.array would probe each for the array protocols)
    out = np.fromiter(mat.entries(), dtype=object, count=rows * cols)
    out.shape = (rows, cols)  # in place: still the owner of its entries, not a view
    _remember(out, mat)
    return out


def _reduce_last_axis(fold, ufunc, x):
    """fold (arb.max, arb.min; `ufunc` the same as a ufunc) applied left to right over the last axis; one
    number for a vector (or a scalar)."""
    x = np.asarray(x, dtype=object)
    if x.shape[-1:] == (0,):
        raise ValueError("a reduction of no values")  # a ufunc without identity would say the same less plainly
    if x.ndim <= 1:  # the same fold over a list: a ufunc's reduce costs more than a short vector's work
        return functools.reduce(fold, x.reshape(-1).tolist())
    return ufunc.reduce(x, axis=-1)
