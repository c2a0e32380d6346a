"""The arithmetic interface every formula is written against (mpmath's contexts are the model).

A formula takes the backend first, f(ar, ...), and works on numpy arrays whose entries are the
backend's numbers.  Three backends implement it: Float64 (screening and search, never a verdict),
Ball (python-flint arb, every result encloses the exact value; precision is flint's context
precision, set by the caller with `flint.ctx.workprec`) and MidRad64 (midrad64.py, tier 3:
midpoint-radius binary64 enclosures, batched; what it cannot enclose raises NotSupported).

Reduction semantics, the same in both backends: `maximum`, `minimum` reduce the LAST axis (tokens
sit on the last two axes, so a leading batch axis of configurations is kept); on a vector they
give one number.  `stack` puts its arguments on a new last axis, so `maximum(stack([x, y]))` is
the entrywise maximum.  Elementwise functions (exp, log, expm1, log1p, sqrt_nonneg, erf, relu,
abs, apply) keep the shape.  Constants are methods: in Ball they are enclosures at the working
precision of the moment they are asked for.
"""

from __future__ import annotations

from typing import Any, Protocol


class Arithmetic(Protocol):
    name: str

    # numbers and arrays from exact values (Fractions, ints)
    def number(self, value) -> Any: ...
    def array(self, exact) -> Any: ...
    def stack(self, values) -> Any: ...

    # constants
    def pi(self) -> Any: ...
    def ln2(self) -> Any: ...
    def e(self) -> Any: ...

    # elementwise
    def exp(self, x) -> Any: ...
    def log(self, x) -> Any: ...
    def expm1(self, x) -> Any: ...  # exp(x) - 1 without the cancellation near 0
    def log1p(self, x) -> Any: ...  # log(1 + x) without the cancellation near 0
    def sqrt_nonneg(self, x) -> Any: ...  # the true value is known to be >= 0
    def erf(self, x) -> Any: ...
    def relu(self, x) -> Any: ...
    def abs(self, x) -> Any: ...
    def apply(self, name: str, x) -> Any: ...  # exp, log, sqrt, tan, atan, tanh, sinh, cosh by name
    def pairwise_min(self, x, y) -> Any: ...

    # linear algebra and reductions (over the last axis)
    def matmul(self, a, b) -> Any: ...
    def centred_gram(self, X) -> Any: ...  # Y Y^T, Y = X - 1 c^T, c the exact centre of token 0 (last two axes)
    def maximum(self, x) -> Any: ...
    def minimum(self, x) -> Any: ...
    def row_shift(self, scores, mask) -> Any: ...  # per row, an exact number near the largest allowed score

    # spectral norms: the screen finds the witness, the ball pass confirms from it
    def spectral_norm(self, matrix, witnesses: dict, key: str) -> Any: ...
    def thin_product_norm(self, L, R, witnesses: dict, key: str) -> Any: ...  # ||L R^T||_2 by the k x k reduction, or None
    def scale_exponent(self, matrix) -> int: ...  # k with matrix / 2^k of moderate size (0 when nothing overflows)
    def ldexp(self, x, k: int) -> Any: ...  # x 2^k

    # three-valued comparison: True, False or None (undecided); Float64 only guesses
    def certainly_le(self, x, y) -> bool | None: ...
