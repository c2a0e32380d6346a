"""The floating-point model the rigorous float64 tier relies on, and probes that would expose a
violation of it on this machine.

The model: numpy float64 is IEEE 754 binary64; every operation (+ - * / sqrt, ldexp, rint) is
correctly rounded to nearest, ties to even, with gradual underflow (no flush-to-zero of results,
no denormals-are-zero of inputs); BLAS matrix products compute each entry as some sequence of
correctly rounded binary64 operations, in any order, with or without FMA (so extended or float32
accumulation is outside the model, though the first would only be more accurate).  The probes run
the vectorised paths the tier uses (arrays long enough for SIMD loops, BLAS products) and compare
with exact rational arithmetic, every expected value made without a floating-point operation that
flush-to-zero could change.  `tier3_usable()` says whether the tier may run, and if not, why: arb
decides everything then.  The probes run once; the environment's flags (flush-to-zero, denormals-are-zero,
the rounding mode), which a shared library loaded later can set for the whole thread, on every call, in this
thread and in BLAS's own threads.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from certify.core.arith.rounding import ETA, gamma

_SIMD = 1024  # long enough for numpy's vectorised loops


def _rounded(value: Fraction) -> float:
    """The binary64 number nearest to value, ties to even (Python's int/Fraction -> float is)."""
    return float(value)


def _same(computed: np.ndarray, expected) -> bool:
    """computed holds exactly the binary64 numbers expected, bit for bit: a comparison of floats would take
    subnormal numbers for zero under denormals-are-zero (and -0.0 for 0.0)."""
    expected = np.array(expected, dtype=np.float64)
    return computed.shape == expected.shape and bool(np.array_equal(computed.view(np.int64), expected.view(np.int64)))


def _from_bits(patterns: list[int]) -> np.ndarray:
    """The binary64 numbers with these bit patterns, made without a floating-point operation: under
    flush-to-zero even the literal 5e-324 reads as 0, so an expected subnormal cannot be written as a number."""
    return np.array(patterns, dtype=np.uint64).view(np.float64)


def _tile(values) -> np.ndarray:
    return np.tile(np.array(values, dtype=np.float64), _SIMD // len(values) + 1)


def probe_format() -> str | None:
    """float64 is IEEE binary64 (52-bit mantissa, exponents -1022..1024): None, else what differs."""
    info = np.finfo(np.float64)
    if (info.nmant, info.minexp, info.maxexp) != (52, -1022, 1024):
        return f"float64 is not IEEE binary64 (mantissa {info.nmant}, exponents {info.minexp}..{info.maxexp})"
    return None


def probe_subnormals() -> str | None:
    """Gradual underflow in results and inputs (flush-to-zero or denormals-are-zero would fail), and the
    constant ETA = 2^-1074 read as itself (flush-to-zero on when certify was loaded reads it as 0)."""
    if not _same(np.array([ETA]), _from_bits([1])):
        return "2^-1074 was read as 0 when certify was loaded (flush-to-zero mode)"
    tiny = _tile([math.ldexp(1.0, -1022)])
    smallest = _tile(_from_bits([1]))
    if not _same(tiny / 2**52, smallest):
        return "a result below 2^-1022 is flushed to zero (flush-to-zero mode)"
    if not _same(smallest * 3.0, _tile(_from_bits([3]))) or not _same(smallest + smallest, _tile(_from_bits([2]))):
        return "subnormal inputs are treated as zero (denormals-are-zero mode)"
    if not _same(np.ldexp(_tile([1.5, 0.5, 2.5]), -1074), _tile(_from_bits([2, 0, 2]))):
        return "ldexp does not round to nearest, ties to even, into the subnormals"
    return None


def probe_rounding() -> str | None:
    """Round to nearest, ties to even, on + - * / sqrt and rint (a directed mode fails one, and so does double
    rounding through extended precision)."""
    u = math.ldexp(1.0, -53)
    checks = [
        ("1 + u", _tile([1.0]) + u, [1.0]),                          # a tie, to the even 1
        ("1 + 3u", _tile([1.0]) + 3 * u, [1.0 + 4 * u]),               # a tie, to the even 1 + 4u
        ("1 - u/2", _tile([1.0]) - u / 2, [1.0]),                    # a tie below 1, to 1
        ("-1 - u", _tile([-1.0]) - u, [-1.0]),
        # just above a tie: rounded to nearest, 1 + 2u; rounded first to x87's extended precision (64 bits), the tie
        # 1 + u, then to the even 1, an error above u |c| (the rounding bound of every enclosure)
        ("1 + (u + u/4096)", _tile([1.0]) + (u + u / 4096), [1.0 + 2 * u]),
        ("(1 + 2u)^2", _tile([1.0 + 2 * u]) * (1.0 + 2 * u), [1.0 + 4 * u]),  # 1 + 4u + 4u^2: nearest
        ("1 / 3", _tile([1.0]) / 3.0, [_rounded(Fraction(1, 3))]),
        ("-2 / 3", _tile([-2.0]) / 3.0, [_rounded(Fraction(-2, 3))]),
        ("rint", np.rint(_tile([0.5, 1.5, 2.5, -0.5, -2.5])), [0.0, 2.0, 2.0, -0.0, -2.0]),
    ]
    for name, computed, expected in checks:
        if not _same(computed, np.resize(np.array(expected), computed.shape)):
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
    big, u, small = math.ldexp(1.0, 53), math.ldexp(1.0, -53), math.ldexp(1.0, -540)  # (2.0**k: rounding.PHI)
    return [
        ([big, 1.0, -big, 1.0], [1.0, 1.0, 1.0, 1.0]),
        ([1.0, u, u, u], [1.0, 1.0, 1.0, 1.0]),
        ([1.0, 1e-10, -1.0, 1e-10], [1.0, 1.0, 1.0, 1.0]),
        ([small, 3 * small, 1.0, -1.0], [small, small, 1.0, 1.0]),
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


# A product that OpenBLAS shares out among its threads, rows x depth times depth x rows: it splits one of m n k above
# 2^18 per thread, some kernels only from larger ones (2^20 is split by every x86-64 kernel of OpenBLAS 0.3.31), and
# one of 8 columns not at all
_THREADED = (32, 1024)


@functools.cache
def _threaded_product() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B and A B (exact) for the BLAS threads' probe.  Entry (i, j) is of kind 2 (i % 2) + j % 2, the sum of the
    two products in columns of A (rows of B) of its own: a subnormal result (flush-to-zero makes it 0), a subnormal
    input (denormals-are-zero), the tie 1 + u (to 1; rounded upward, 1 + 2u) and 1 + 3u (to 1 + 4u; rounded down or
    towards zero, 1 + 2u).  Every two rows and two columns hold the four kinds, so every thread's share does."""
    rows, depth = _THREADED
    u, tiny, root = math.ldexp(1.0, -53), _from_bits([1])[0], math.ldexp(1.0, -537)  # root * root = 2^-1074
    kinds = [((root, root), (math.ldexp(1.0, -1022), 0.5)), ((tiny, 2.0), (0.0, 0.0)), ((1.0, 1.0), (u, 1.0)),
             ((1.0, 1.0), (3 * u, 1.0))]
    sums = _from_bits([(1 << 51) + 1, 2, 0x3FF0000000000000, 0x3FF0000000000002])  # 2^-1023 + 2^-1074, ...
    A, B, C = np.zeros((rows, depth)), np.zeros((depth, rows)), np.empty((rows, rows))
    for kind, terms in enumerate(kinds):
        first_row, first_column = divmod(kind, 2)
        for slot, (a, b) in enumerate(terms, start=2 * kind):
            A[first_row::2, slot], B[slot, first_column::2] = a, b
        C[first_row::2, first_column::2] = sums[kind]
    return A, B, C


def probe_environment() -> str | None:
    """The flags of the floating-point environment that the process can change after start-up, in well under
    a millisecond: flush-to-zero and denormals-are-zero (a shared library built with fast-math sets them when
    it is loaded), and the rounding mode (fesetround), in numpy's loops and in a BLAS product spread over BLAS's
    threads: each thread has its own flags, those of the thread that started it (which loaded numpy, or after a
    fork multiplied first), so a library loaded before numpy and the flags cleared in this thread since leave
    them set there alone."""
    u = math.ldexp(1.0, -53)
    products = np.array([math.ldexp(1.0, -1022), ETA]) * np.array([0.5, 2.0])
    if not _same(products, _from_bits([1 << 51, 2])):  # 2^-1023, 2^-1073
        return "subnormal numbers are flushed to zero (flush-to-zero or denormals-are-zero set since start-up)"
    if not _same(np.array([1.0, 1.0, -1.0]) + np.array([u, 3 * u, -u]), [1.0, 1.0 + 4 * u, -1.0]):
        return "the rounding mode is no longer round to nearest, ties to even"
    A, B, C = _threaded_product()
    if not _same(A @ B, C):
        return ("a BLAS product is not rounded to nearest or flushes subnormal numbers to zero (the flags of BLAS's "
                "threads, set when they started)")
    return None


PROBES = (probe_format, probe_subnormals, probe_rounding, probe_blas)


@functools.cache
def _probed_at_start() -> tuple[bool, str]:
    """(True, "") when every probe passes, else (False, the first violation found); run once."""
    with np.errstate(all="ignore"):
        for probe in PROBES:
            failure = probe()
            if failure is not None:
                return False, f"the rigorous float64 tier is off: {failure}"
    return True, ""


def tier3_usable() -> tuple[bool, str]:
    """(True, "") when every probe passes, else (False, the first violation found).  The probes run once; the
    environment's flags (probe_environment) on every call, as a library loaded later can change them for the
    whole process."""
    usable, reason = _probed_at_start()
    if not usable:
        return usable, reason
    with np.errstate(all="ignore"):
        failure = probe_environment()
    return (True, "") if failure is None else (False, f"the rigorous float64 tier is off: {failure}")
