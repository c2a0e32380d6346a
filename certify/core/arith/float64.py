"""Plain float64 numpy: fast, batched, and wrong often enough that it never decides a verdict."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from scipy.special import erf as _erf


class Float64:
    name = "float64"

    def number(self, value: Fraction | int) -> float:
        return float(value)

    def array(self, exact) -> np.ndarray:
        return np.array([[float(v) for v in row] for row in exact]) if _is_matrix(exact) else np.array(
            [float(v) for v in exact]
        )

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    expm1 = staticmethod(np.expm1)  # exp(x) - 1, relative accuracy for tiny x
    log1p = staticmethod(np.log1p)  # log(1 + x), likewise
    abs = staticmethod(np.abs)
    erf = staticmethod(_erf)

    @staticmethod
    def sqrt_nonneg(x):
        return np.sqrt(np.maximum(x, 0.0))

    @staticmethod
    def relu(x):
        return np.maximum(x, 0.0)

    @staticmethod
    def apply(name: str, x):
        """An elementary function by name (exp, log, sqrt, tanh, sinh, cosh)."""
        return getattr(np, name)(x)

    @staticmethod
    def stack(values):
        return np.stack(np.broadcast_arrays(*values), axis=-1)

    @staticmethod
    def matmul(a, b):
        return a @ b

    # Reductions run over the last axis, so that a leading batch axis (many configurations
    # screened at once) is kept.
    @staticmethod
    def maximum(x):
        return np.max(x, axis=-1)

    @staticmethod
    def minimum(x):
        return np.min(x, axis=-1)

    @staticmethod
    def pairwise_min(x, y):
        return np.minimum(x, y)

    @staticmethod
    def row_shift(scores, mask):
        """Per-row maximum over the allowed entries (softmax is invariant under the shift)."""
        return np.max(np.where(mask, scores, -np.inf), axis=-1)

    @staticmethod
    def certainly_le(x, y):
        """float64 cannot certify: this is the screen's best guess, never a verdict."""
        return bool(x <= y)


def _is_matrix(exact) -> bool:
    return len(exact) > 0 and isinstance(exact[0], (tuple, list))
