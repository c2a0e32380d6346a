"""Plain float64 numpy: fast, batched, and wrong often enough that it never decides a verdict."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from certify.core.numbers import Binary64Matrix, is_matrix

from certify.core import spectral
from certify.core import thin_norm
from certify.core.arith import pairs


class Float64:
    """The screening backend (certify.core.arith.protocol): plain binary64 numpy arrays, batched over a
    leading axis; its numbers are approximations with no error bound, so it guesses and never decides."""

    name = "float64"

    @staticmethod
    def number(value: Fraction | int) -> np.float64:
        """The nearest float64; beyond its range +-inf, as float64 arithmetic itself would overflow
        (so the screen shows it cannot see, instead of crashing; it decides nothing anyway).  A numpy scalar,
        not a Python float, so that arithmetic on constants alone is IEEE's too: a bound's 1/0 raised
        ZeroDivisionError, an internal error, where the arrays of D/0 give inf (and the ball evaluation, which
        judges a bound's domain, then says the bound is undefined)."""
        try:
            return np.float64(float(value))
        except OverflowError:  # (copysign would try float(value) again)
            return np.float64(math.inf if value > 0 else -math.inf)

    def array(self, exact) -> np.ndarray:
        """A float64 vector or matrix of an exact one, each entry rounded to nearest (a Binary64Matrix as is)."""
        if isinstance(exact, Binary64Matrix):
            return exact.array
        return np.array([[self.number(v) for v in row] for row in exact]) if is_matrix(exact) else np.array(
            [self.number(v) for v in exact]
        )

    @staticmethod
    def pi():
        """pi rounded to the nearest float64."""
        return math.pi

    @staticmethod
    def ln2():
        """log 2 as float64 (math.log, within an ulp)."""
        return math.log(2)

    @staticmethod
    def e():
        """Euler's number e rounded to the nearest float64."""
        return math.e

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    expm1 = staticmethod(np.expm1)  # exp(x) - 1, relative accuracy for tiny x
    log1p = staticmethod(np.log1p)  # log(1 + x), likewise

    @staticmethod
    def one_minus_exp(x):
        """1 - exp(x) as -expm1(x)."""
        return -np.expm1(x)
    abs = staticmethod(np.abs)

    @staticmethod
    def erf(x):
        """scipy's float64 error function, elementwise."""
        from scipy.special import erf  # scipy only where an erf is evaluated (it costs a tenth of a second to import)

        return erf(x)

    @staticmethod
    def sqrt_nonneg(x):
        """sqrt of a value known to be >= 0: a rounding error below 0 is taken as 0, not a nan."""
        return np.sqrt(np.maximum(x, 0.0))

    @staticmethod
    def exact_centre(x):
        """x itself: a float64 is already an exact number (the shift Ball takes at a midpoint)."""
        return x

    @staticmethod
    def relu(x):
        """max(x, 0), elementwise."""
        return np.maximum(x, 0.0)

    @staticmethod
    def apply(name: str, x):
        """An elementary function by name (exp, log, sqrt, tan, atan, tanh, ...; numpy's names)."""
        return getattr(np, name)(x)

    @staticmethod
    def stack(values):
        """The arrays `values`, broadcast to one shape, on a new last axis."""
        return np.stack(np.broadcast_arrays(*values), axis=-1)

    @staticmethod
    def matmul(a, b):
        """numpy's a @ b (batched over leading axes)."""
        return a @ b

    @staticmethod
    def product(*factors):
        """((a @ b) @ c) @ ..., left to right."""
        return functools.reduce(np.matmul, factors)

    @staticmethod
    def centred_gram(X):
        """Y Y^T for Y = X - 1 x_0^T, x_0 the first token (batched over leading axes)."""
        Y = X - X[..., :1, :]
        return Y @ Y.swapaxes(-1, -2)

    def pairwise_sq_distances(self, X):
        """||x_i - x_k||^2 for i < k from centred_gram(X) (pairs.squared_distances)."""
        return pairs.squared_distances(self.centred_gram(X))

    # Reductions run over the last axis, so that a leading batch axis (many configurations
    # screened at once) is kept.
    @staticmethod
    def maximum(x):
        """The largest entry along the last axis (the ufunc's reduce: np.max's wrapper costs more than
        the work on a screen's small arrays)."""
        return np.maximum.reduce(x, axis=-1)

    @staticmethod
    def minimum(x):
        """The smallest entry along the last axis."""
        return np.minimum.reduce(x, axis=-1)

    @staticmethod
    def pairwise_min(x, y):
        """The entrywise minimum of x and y."""
        return np.minimum(x, y)

    overlap_pairs = staticmethod(pairs.all_pairs)
    difference_pairs = staticmethod(pairs.all_pairs)

    @staticmethod
    def row_shift(scores, mask):
        """Per-row maximum over the allowed entries (softmax is invariant under the shift)."""
        allowed = scores if np.all(mask) else np.where(mask, scores, -np.inf)
        return np.maximum.reduce(allowed, axis=-1)

    @staticmethod
    def spectral_norm(matrix, witnesses: dict, key: str):
        """numpy's ||M||_2, recording the witness the ball pass confirms it from."""
        witnesses[key] = spectral.witness(matrix)
        return witnesses[key].estimate  # the same SVD: one per norm

    @staticmethod
    def thin_product_norm(L, R, witnesses: dict, key: str) -> float | None:
        """||L R^T||_2 from one float64 Cholesky and one k x k SVD (certify.core.thin_norm), recording
        the k x k witness; None when float64 finds R rank-deficient."""
        witness = thin_norm.reduced_witness(L, R)
        if witness is None:
            return None
        witnesses[key] = witness
        return witness.estimate

    @staticmethod
    def scale_exponent(matrix) -> int:
        """float64 products of an expansive matrix overflow: k with max |M / 2^k| in [1/2, 1)."""
        largest = float(np.max(np.abs(matrix)))
        return math.frexp(largest)[1] if largest else 0

    @staticmethod
    def ldexp(x, k: int):
        """x 2^k, the power capped at 2^1023: past float64's range the screen just says huge (or inf)."""
        return x * 2.0 ** min(k, 1023)

    @staticmethod
    def certainly_zero(x) -> bool:
        """float64 certifies nothing: a bound's domain is judged in ball arithmetic only."""
        return False

    @staticmethod
    def first_zero(x) -> None:
        """None: float64 certifies nothing, so no entry is certainly 0 (a LayerNorm's domain is judged in balls)."""
        return None

    @staticmethod
    def outside_domain(name: str, x) -> bool:
        """Always False: whether x leaves the domain of log or sqrt is judged in ball arithmetic only."""
        return False

    @staticmethod
    def certainly_le(x, y):
        """float64 cannot certify: this is the screen's best guess, never a verdict."""
        return bool(x <= y)
