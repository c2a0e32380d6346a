"""The floating-point model the rigorous float64 tier relies on, and probes that would expose a
violation of it on this machine.

The model: numpy float64 is IEEE 754 binary64; every operation (+ - * / sqrt, ldexp, rint) is
correctly rounded to nearest, ties to even, with gradual underflow (no flush-to-zero of results,
no denormals-are-zero of inputs); BLAS matrix products compute each entry as some sequence of
correctly rounded binary64 operations, in any order, with or without FMA (so extended or float32
accumulation is outside the model, though the first would only be more accurate).  The probes run
the vectorised paths the tier uses (arrays long enough for SIMD loops, BLAS products) and compare
with exact rational arithmetic.  `tier3_usable()` says whether the tier may run, and if not, why:
arb decides everything then.
"""

from __future__ import annotations

import functools
from fractions import Fraction

import numpy as np

from certify.core.arith.rounding import ETA, gamma

_SIMD = 1024  # long enough for numpy's vectorised loops


def _rounded(value: Fraction) -> float:
    """The binary64 number nearest to value, ties to even (Python's int/Fraction -> float is)."""
    return float(value)


def _same(computed: np.ndarray, expected: list[float]) -> bool:
    expected = np.array(expected, dtype=np.float64)
    return bool(np.array_equal(computed, expected) and np.array_equal(np.signbit(computed), np.signbit(expected)))


def _tile(values: list[float]) -> np.ndarray:
    return np.tile(np.array(values, dtype=np.float64), _SIMD // len(values) + 1)


def probe_format() -> str | None:
    """float64 is IEEE binary64 (52-bit mantissa, exponents -1022..1024): None, else what differs."""
    info = np.finfo(np.float64)
    if (info.nmant, info.minexp, info.maxexp) != (52, -1022, 1024):
        return f"float64 is not IEEE binary64 (mantissa {info.nmant}, exponents {info.minexp}..{info.maxexp})"
    return None


def probe_subnormals() -> str | None:
    """Gradual underflow in results and inputs (flush-to-zero or denormals-are-zero would fail)."""
    tiny = _tile([2.0**-1022])
    smallest = _tile([ETA])
    if not _same(tiny / 2**52, list(smallest)):
        return "a result below 2^-1022 is flushed to zero (flush-to-zero mode)"
    if not _same(smallest * 3.0, list(_tile([3 * ETA]))) or not _same(smallest + smallest, list(_tile([2 * ETA]))):
        return "subnormal inputs are treated as zero (denormals-are-zero mode)"
    if not _same(np.ldexp(_tile([1.5, 0.5, 2.5]), -1074), list(_tile([2 * ETA, 0.0, 2 * ETA]))):
        return "ldexp does not round to nearest, ties to even, into the subnormals"
    return None


def probe_rounding() -> str | None:
    """Round to nearest, ties to even, on + - * / sqrt and rint (a directed mode fails one)."""
    u = 2.0**-53
    checks = [
        ("1 + u", _tile([1.0]) + u, [1.0]),                          # a tie, to the even 1
        ("1 + 3u", _tile([1.0]) + 3 * u, [1.0 + 4 * u]),               # a tie, to the even 1 + 4u
        ("1 - u/2", _tile([1.0]) - u / 2, [1.0]),                    # a tie below 1, to 1
        ("-1 - u", _tile([-1.0]) - u, [-1.0]),
        ("(1 + 2u)^2", _tile([1.0 + 2 * u]) * (1.0 + 2 * u), [1.0 + 4 * u]),  # 1 + 4u + 4u^2: nearest
        ("1 / 3", _tile([1.0]) / 3.0, [_rounded(Fraction(1, 3))]),
        ("-2 / 3", _tile([-2.0]) / 3.0, [_rounded(Fraction(-2, 3))]),
        ("rint", np.rint(_tile([0.5, 1.5, 2.5, -0.5, -2.5])), [0.0, 2.0, 2.0, -0.0, -2.0]),
    ]
    for name, computed, expected in checks:
        if not _same(computed, list(np.resize(np.array(expected), computed.shape))):
            return f"{name} is not rounded to nearest, ties to even"
    for value in (2.0, 3.0, 0.1, 1e-300, 5e-324):
        root = float(np.sqrt(_tile([value]))[0])
        below, above = np.nextafter(root, 0.0), np.nextafter(root, np.inf)
        exact = Fraction(value)
        # nearest: the midpoints to the neighbours bracket sqrt(value)
        if not ((Fraction(below) + Fraction(root)) ** 2 / 4 <= exact <= (Fraction(root) + Fraction(above)) ** 2 / 4):
            return f"sqrt({value}) is not correctly rounded"
    return None


def _dot_probes() -> list[tuple[list[float], list[float]]]:
    """Pairs (a, b) whose dot product depends on the summation (cancellation, a sum that
    extended accumulation keeps and binary64 loses, subnormal products, float32-sized gaps)."""
    big = 2.0**53
    return [
        ([big, 1.0, -big, 1.0], [1.0, 1.0, 1.0, 1.0]),
        ([1.0, 2.0**-53, 2.0**-53, 2.0**-53], [1.0, 1.0, 1.0, 1.0]),
        ([1.0, 1e-10, -1.0, 1e-10], [1.0, 1.0, 1.0, 1.0]),
        ([2.0**-540, 3 * 2.0**-540, 1.0, -1.0], [2.0**-540, 2.0**-540, 1.0, 1.0]),
        ([0.1, 0.2, 0.3, -0.6], [3.0, 7.0, 11.0, 2.0]),
        ([1e300, 1e-300, -1e300, 1.0], [1e8, 1e300, 1e8, 1.0]),
    ]


def probe_blas(product=np.matmul) -> str | None:
    """Every BLAS entry within the a-priori bound gamma_k |a|^T |b| + k ETA of the exact value,
    through a plain product, a batched product and a transposed layout (`product` is the
    matrix product under test)."""
    probes = _dot_probes()
    k = len(probes[0][0])
    A = np.array([a for a, _ in probes], dtype=np.float64)
    B = np.array([b for _, b in probes], dtype=np.float64)
    tall = np.tile(A, (8, 1))  # a product big enough to go through BLAS
    products = {
        "matmul": product(tall, np.tile(B, (8, 1)).T)[: len(probes), : len(probes)],
        "batched matmul": product(np.stack([A] * 3), np.stack([B.T] * 3))[1],
        "transposed": product(np.asfortranarray(A), np.ascontiguousarray(B.T)),
    }
    g = gamma(k)
    for name, C in products.items():
        for i, a in enumerate(A):
            for j, b in enumerate(B):
                if not np.isfinite(C[i, j]):
                    return f"a BLAS dot product ({name}) overflows where binary64 does not"
                terms = [Fraction(float(x)) * Fraction(float(y)) for x, y in zip(a, b)]
                exact, magnitude = sum(terms), sum(abs(t) for t in terms)
                if abs(Fraction(float(C[i, j])) - exact) > g * magnitude + k * Fraction(ETA):
                    return f"a BLAS dot product ({name}) is outside the binary64 error bound"
    return None


PROBES = (probe_format, probe_subnormals, probe_rounding, probe_blas)


@functools.cache
def tier3_usable() -> tuple[bool, str]:
    """(True, "") when every probe passes, else (False, the first violation found)."""
    with np.errstate(all="ignore"):
        for probe in PROBES:
            failure = probe()
            if failure is not None:
                return False, f"the rigorous float64 tier is off: {failure}"
    return True, ""
