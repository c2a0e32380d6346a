"""The arithmetic interface every formula is written against (mpmath's contexts are the model).

A formula takes the backend first, f(ar, ...), and works on numpy arrays whose entries are the
backend's numbers.  Three backends implement it: Float64 (screening and search, never a verdict),
Ball (python-flint arb, every result encloses the exact value; precision is flint's context
precision, set by the caller with `certify.core.precision.working`) and MidRad64 (midrad64.py, tier 3:
midpoint-radius binary64 enclosures, batched; what it cannot enclose raises NotSupported).

Reduction semantics, the same in both backends: `maximum`, `minimum` reduce the LAST axis (tokens
sit on the last two axes, so a leading batch axis of configurations is kept); on a vector they
give one number.  `stack` puts its arguments on a new last axis, so `maximum(stack([x, y]))` is
the entrywise maximum.  Elementwise functions (exp, log, expm1, log1p, one_minus_exp, sqrt_nonneg,
erf, relu, abs, apply) keep the shape.  Constants are methods: in Ball they are enclosures at the working
precision of the moment they are asked for.
"""

from __future__ import annotations

from typing import Any, Protocol


class Arithmetic(Protocol):
    """What a backend provides (module docstring): exact inputs to its numbers, constants, elementwise
    functions, products and last-axis reductions, spectral norms from a witness, and a three-valued <=."""

    name: str

    # numbers and arrays from exact values (Fractions, ints)
    def number(self, value) -> Any:
        """The backend's number for an exact value (Fraction or int)."""

    def array(self, exact) -> Any:
        """The backend's array for an exact vector or matrix (rows of exact values, or a Binary64Matrix)."""

    def stack(self, values) -> Any:
        """`values` on a new last axis."""

    # constants
    def pi(self) -> Any:
        """pi (in Ball, an enclosure at the working precision of the moment)."""

    def ln2(self) -> Any:
        """log 2 (in Ball, an enclosure at the working precision of the moment)."""

    def e(self) -> Any:
        """Euler's number e (in Ball, an enclosure at the working precision of the moment)."""

    # elementwise
    def exp(self, x) -> Any:
        """exp(x), elementwise."""

    def log(self, x) -> Any:
        """The natural logarithm of x, elementwise."""

    def expm1(self, x) -> Any:
        """exp(x) - 1 without the cancellation near 0."""

    def log1p(self, x) -> Any:
        """log(1 + x) without the cancellation near 0."""

    def one_minus_exp(self, x) -> Any:
        """1 - exp(x), a bound's `1 - exp(...)` (certify.core.expr): -expm1(x) where the backend has it, keeping
        the relative accuracy of (1 - exp(-a D^2)) D when a D^2 is far below 2^-precision."""

    def sqrt_nonneg(self, x) -> Any:
        """sqrt(x) where the true value is known to be >= 0 (a rounding below 0 is not a domain error)."""

    def erf(self, x) -> Any:
        """The error function of x, elementwise (GELU)."""

    def relu(self, x) -> Any:
        """max(x, 0), elementwise."""

    def abs(self, x) -> Any:
        """|x|, elementwise."""

    def apply(self, name: str, x) -> Any:
        """An elementary function by name: exp, log, sqrt, tan, atan, tanh, sinh, cosh."""

    def pairwise_min(self, x, y) -> Any:
        """The entrywise minimum of x and y."""

    def overlap_pairs(self, P) -> Any:
        """The pairs (i, k), i < k, of rows of P whose overlap sum_j min(P_ij, P_kj) can be the least (index arrays):
        every pair, or those a screen cannot rule out (certify.core.arith.overlaps)."""

    def difference_pairs(self, Delta, Pi=None) -> Any:
        """The pairs (i, k), i < k, of rows of P = Pi + Delta whose sum_j |P_ij - P_kj| can be the largest (index
        arrays; Pi None when its rows are equal): every pair, or those a screen cannot rule out
        (certify.core.arith.differences)."""

    # linear algebra and reductions (over the last axis)
    def matmul(self, a, b) -> Any:
        """The product a @ b of vectors or matrices."""

    def product(self, *factors) -> Any:
        """The matrix product of two or more matrices, left to right: ((a @ b) @ c) @ ... (Ball keeps
        the partial products in arb_mat instead of making each an array of balls)."""

    def centred_gram(self, X) -> Any:
        """Y Y^T for Y = X - 1 c^T, c the exact centre of token 0 (tokens on the last two axes)."""

    def pairwise_sq_distances(self, X) -> Any:
        """||x_i - x_k||^2 for i < k from G = centred_gram(X) (certify.core.arith.pairs.squared_distance), as a
        last axis in the order of pairs.above_diagonal."""

    def maximum(self, x) -> Any:
        """The largest entry along the last axis."""

    def minimum(self, x) -> Any:
        """The smallest entry along the last axis."""

    def row_shift(self, scores, mask) -> Any:
        """Per row, an exact number near the largest allowed score (softmax is invariant under the shift)."""

    # spectral norms: float64 finds the witness, the ball pass confirms from it
    def spectral_norm(self, matrix, witnesses: dict, key: str) -> Any:
        """||matrix||_2; float64 records its witness under witnesses[key], the ball pass encloses from the
        one recorded there or finds its own from its midpoints."""

    def thin_product_norm(self, L, R, witnesses: dict, key: str) -> Any:
        """||L R^T||_2 by the k x k reduction (certify.core.thin_norm), or None where that route does not apply."""

    def scale_exponent(self, matrix) -> int:
        """k with matrix / 2^k of moderate size (0 when nothing overflows)."""

    def ldexp(self, x, k: int) -> Any:
        """x 2^k."""

    def first_zero(self, x) -> int | None:
        """The index of the first entry of the vector x that is certainly the exact number 0, else None (Float64 and
        MidRad64: always None)."""

    # three-valued comparison: True, False or None (undecided); Float64 only guesses
    def certainly_le(self, x, y) -> bool | None:
        """x <= y: True, False or None (undecided); in Float64 a guess, never a verdict."""
