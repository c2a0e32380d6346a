"""Tier 3's midpoint-radius operations at the edges of binary64, against exact oracles.

Every enclosure is checked at the corners and at random interior points of its input boxes: the exact
value (Fractions for + - * / and the products, arb at 256 bits for exp) must be within rad of mid (the
invariant the next operation reads: the outward ends lo, hi alone would hide a radius short by less
than an ulp) and between the outward ends (nan there means no bound on that side, deciding nothing).  Operands mix
subnormals, values next to 2^1023, ties, zeros of both signs and ordinary numbers; radii are a 0-d zero,
a 0-d number, or arrays (full or broadcast) with zeros among them.  The scratch arrays of the
operations must never be an operand's: every input is compared with a copy afterwards.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction as Q

import numpy as np
import pytest
from flint import arb, ctx
from hypothesis import given, settings, strategies as st

from certify.core.arith import exp64
from certify.core.arith.midrad64 import (MidRad, MidRad64, _bounded_sum, _eta_times, _exp_radius, _rounding_bound,
                                         outer_upper, row_norms_upper, sum_squares_lower)
from certify.core.arith.rounding import ETA, PHI, abs_sum_upper, down, nonneg_sum_upper, up

# the edges overflow and meet nan on purpose: numpy's warnings about it are expected, not findings
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

TIER3 = MidRad64()
BIG = 2.0**1023
EDGES = [0.0, -0.0, ETA, 2 * ETA, 3 * ETA, 2.0**-1022, 2.0**-1022 - ETA, 2.0**-1022 + ETA, 2.0**-1000, 2.0**-537,
         0.5, 1.0, 1.5, 2.5, 1 + 2.0**-52, 1 - 2.0**-53, 3.0, 0.1, 2.0**511, 2.0**-511, 1e-300, 1e300, BIG,
         np.nextafter(BIG, np.inf), np.finfo(np.float64).max]


def _numbers(rng, shape, allow_huge=True):
    """binary64 numbers of every kind: edges with either sign, ordinary ones, any exponent, near-ties."""
    kind = rng.integers(0, 4, shape)
    edges = np.array(EDGES if allow_huge else EDGES[:-5])
    out = np.where(kind == 0, rng.choice(edges, shape), rng.standard_normal(shape))
    anywhere = np.ldexp(rng.random(shape) + 0.5, rng.integers(-1074, 1024 if allow_huge else 500, shape))
    out = np.where(kind == 2, anywhere, out)
    out = np.where(kind == 3, (rng.integers(-4, 5, shape) + 0.5) * 2.0**-52 + 1.0, out)
    return out * np.where(rng.random(shape) < 0.5, -1.0, 1.0)


def _radius(rng, shape, kind):
    """A radius: 0-d zero, 0-d number, a full array with zeros, or one broadcast along the first axis."""
    if kind == 0:
        return np.float64(0.0)
    if kind == 1:
        return np.abs(_numbers(rng, ()))
    full = np.abs(_numbers(rng, shape)) * (rng.random(shape) < 0.7)
    return full if kind == 2 or len(shape) < 2 else full[:1]


def _box(rng, shape, kind=None, allow_huge=True):
    kind = rng.integers(0, 4) if kind is None else kind
    return MidRad(_numbers(rng, shape, allow_huge), _radius(rng, shape, kind))


def _points(rng, x: MidRad, count: int = 4):
    """Exact points of the box x (object arrays of Fractions, None where the box is not finite): its two
    corners everywhere, then mixtures of corners and random interior points."""
    mid, rad = np.broadcast_arrays(x.mid, x.rad)
    finite = np.isfinite(mid) & np.isfinite(rad)
    points = []
    for p in range(count):
        t = np.full(mid.shape, -1.0 if p == 0 else 1.0) if p < 2 else rng.choice([-1.0, 1.0, 0.0, 0.5, -0.25], mid.shape)
        pts = np.empty(mid.shape, dtype=object)
        for index in np.ndindex(mid.shape):
            pts[index] = Q(mid[index]) + Q(t[index]) * Q(rad[index]) if finite[index] else None
        points.append(pts)
    return points


def _inside(value, lo, hi) -> bool:
    """value (Fraction or arb) lies in [lo, hi]; a nan end bounds nothing, an infinite one trivially."""
    if isinstance(value, arb):
        return (math.isnan(lo) or lo == -math.inf or value >= arb(lo)) and (
            math.isnan(hi) or hi == math.inf or value <= arb(hi))
    return (math.isnan(lo) or lo == -math.inf or (lo != math.inf and Q(lo) <= value)) and (
        math.isnan(hi) or hi == math.inf or (hi != -math.inf and value <= Q(hi)))


def _check(result: MidRad, values, what: str):
    """Every exact value v has |v - mid| <= rad where both are finite (the invariant every later
    operation reads), lies within the outward ends lo, hi, and a finite radius is >= 0."""
    lo, hi = np.broadcast_arrays(result.lo, result.hi)
    mid, rad = np.broadcast_arrays(result.mid, result.rad)
    values = np.broadcast_to(np.asarray(values, dtype=object), lo.shape)
    for index in np.ndindex(lo.shape):
        v = values[index]
        if v is None:
            continue
        assert not (rad[index] < 0), f"{what}: negative radius {rad[index]!r} at {index}"
        m, r = float(mid[index]), float(rad[index])
        if math.isfinite(m) and math.isfinite(r):  # the invariant itself, which the next operation reads
            assert _inside(v, m, m) if r == 0 else (
                (v >= arb(m) - arb(r) and v <= arb(m) + arb(r)) if isinstance(v, arb) else abs(v - Q(m)) <= Q(r)), (
                f"{what}: {v} not within {r!r} of {m!r} at {index}")
        assert _inside(v, float(lo[index]), float(hi[index])), (
            f"{what}: {v} outside [{lo[index]!r}, {hi[index]!r}] (mid {mid[index]!r}, rad {rad[index]!r}) at {index}")


def _unchanged(*boxes):
    copies = [(b.mid.copy(), b.rad.copy()) for b in boxes]

    def verify():
        for b, (m, r) in zip(boxes, copies):
            assert np.array_equal(b.mid, m, equal_nan=True) and np.array_equal(b.rad, r, equal_nan=True), \
                "an operation wrote into its operand"
    return verify


def _elementwise(op, xs, ys):
    out = np.empty(np.broadcast_shapes(xs.shape, ys.shape), dtype=object)
    xs, ys = np.broadcast_to(xs, out.shape), np.broadcast_to(ys, out.shape)
    for index in np.ndindex(out.shape):
        x, y = xs[index], ys[index]
        out[index] = None if x is None or y is None or (op == "div" and y == 0) else {
            "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y}[op]()
    return out


SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((2, 3), (2, 3)), ((1, 3), (2, 1)), ((), (4,)), ((2, 3), ())]


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), op=st.sampled_from(["add", "sub", "mul", "div"]),
       shapes=st.sampled_from(SHAPES), kinds=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_arithmetic_encloses_at_corners_and_inside(seed, op, shapes, kinds):
    rng = np.random.default_rng(seed)
    x, y = _box(rng, shapes[0], kinds[0]), _box(rng, shapes[1], kinds[1])
    verify = _unchanged(x, y)
    with np.errstate(all="ignore"):
        result = {"add": x.__add__, "sub": x.__sub__, "mul": x.__mul__, "div": x.__truediv__}[op](y)
        reflected = {"add": y.__radd__, "sub": y.__rsub__, "mul": y.__rmul__, "div": y.__rtruediv__}[op](x)
    verify()
    for px, py in zip(_points(rng, x), _points(rng, y)):
        values = _elementwise(op, px, py)
        _check(result, values, op)
        _check(reflected, values, "reflected " + op)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_division_by_a_box_that_reaches_zero_gives_no_bound(seed, kinds):
    """|y_m| <= y_r: x / y is unbounded (or undefined), so no entry may have two finite ends."""
    rng = np.random.default_rng(seed)
    x = _box(rng, (2, 3), kinds[0])
    mid = _numbers(rng, (2, 3))
    rad = np.abs(mid) * rng.choice([1.0, 1.5, 2.0**40], (2, 3)) + (kinds[1] == 0) * 0.0
    rad = np.where(rng.random((2, 3)) < 0.2, np.abs(mid), rad)
    y = MidRad(np.where(rng.random((2, 3)) < 0.2, 0.0, mid), rad)
    with np.errstate(all="ignore"):
        q = x / y
    both = np.isfinite(q.lo) & np.isfinite(q.hi)
    assert not both.any(), (q.mid[both], q.rad[both])


def test_division_of_exact_operands_by_zero_and_tiny_divisors():
    with np.errstate(all="ignore"):
        for y in (0.0, -0.0, ETA, -ETA):
            q = MidRad(np.array([1.0, 0.0, -ETA, BIG])) / MidRad(np.array([y] * 4))
            assert not (np.isfinite(q.lo) & np.isfinite(q.hi)).any() or y != 0
            _check(q, [None if y == 0 else Q(a) / Q(y) for a in (1.0, 0.0, -ETA, BIG)], f"/ {y}")


def test_division_of_subnormal_quotients_by_wide_divisors():
    """ETA / [0.1, 4.9]: the midpoint quotient 0.4 ETA rounds to 0, yet the quotient reaches 10 ETA.  Its radius
    must carry the ETA (1 + y_r / l) of |x_m / y_m| <= |q| (1 + 2^-52) + ETA (the division's proof): with ETA
    alone the enclosure stopped at 4 ETA, and no other test saw it."""
    numerators = np.array([ETA, -ETA, 3 * ETA, 2.0**-1060, 0.0])
    for y_mid, y_rad in ((2.5, 2.4), (-2.5, 2.4), (1.0, 1 - 2.0**-20), (2.0**60, 2.0**60 - 2.0**56)):
        for x_rad in (0.0, ETA):
            x, y = MidRad(numerators, x_rad), MidRad(y_mid, y_rad)
            q = x / y
            for px, py in zip(_points(np.random.default_rng(0), x, 3), _points(np.random.default_rng(1), y, 3)):
                _check(q, _elementwise("div", px, py), f"/ [{y_mid} +- {y_rad}]")


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.integers(0, 3), keepdims=st.booleans(),
       axis=st.sampled_from([-1, -2, (-2, -1)]), width=st.sampled_from([1, 2, 5, 40]))
def test_sum_encloses(seed, kind, keepdims, axis, width):
    rng = np.random.default_rng(seed)
    x = _box(rng, (3, width), kind)
    verify = _unchanged(x)
    with np.errstate(all="ignore"):
        result = x.sum(axis=axis, keepdims=keepdims)
    verify()
    for pts in _points(rng, x, 3):
        if any(p is None for p in pts.flat):
            continue
        exact = np.empty(result.shape, dtype=object)
        total = np.sum(pts, axis=axis, keepdims=keepdims)  # object arrays: exact Fraction sums
        exact[...] = total
        _check(result, exact, f"sum over {axis}")


def _exact_matmul(A, B):
    n, k = A.shape[-2:]
    m = B.shape[-1]
    out = np.empty(A.shape[:-2] + (n, m), dtype=object)
    for index in np.ndindex(A.shape[:-2]):
        for i in range(n):
            for j in range(m):
                terms = [A[index + (i, l)] for l in range(k)] + [B[index + (l, j)] for l in range(k)]
                out[index + (i, j)] = None if any(t is None for t in terms) else sum(
                    (A[index + (i, l)] * B[index + (l, j)] for l in range(k)), Q(0))
    return out


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.integers(0, 3), st.integers(0, 3)),
       dims=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 3)), gram=st.booleans())
def test_matmul_encloses_with_every_radius_form(seed, kinds, dims, gram):
    rng = np.random.default_rng(seed)
    n, k, m = dims
    a = _box(rng, (2, n, k), kinds[0])
    b = np.swapaxes(a, -1, -2) if gram else _box(rng, (2, k, m), kinds[1])
    verify = _unchanged(a, b)
    with np.errstate(all="ignore"):
        result = TIER3.matmul(a, b)
    verify()
    for pa in _points(rng, a, 3):
        pb = np.swapaxes(pa, -1, -2) if gram else _points(rng, b, 1)[0]
        _check(result, _exact_matmul(pa, pb), "matmul" + (" (Gram)" if gram else ""))


def test_swapaxes_diagonal_and_indexing_keep_each_entrys_radius():
    rng = np.random.default_rng(1)
    for kind in range(4):
        x = _box(rng, (2, 3, 3), kind)
        full = np.broadcast_to(x.rad, x.shape)
        for got, want in [(np.swapaxes(x, -1, -2), np.swapaxes(full, -1, -2)),
                          (np.diagonal(x, axis1=-2, axis2=-1), np.diagonal(full, axis1=-2, axis2=-1)),
                          (x[..., 1, :], full[..., 1, :]), (x[..., np.array([0, 2]), np.array([1, 1])], full[..., [0, 2], [1, 1]])]:
            assert np.array_equal(np.broadcast_to(got.rad, got.shape), want)
            assert got.rad.ndim == 0 or kind >= 2  # a 0-d radius stays 0-d (exact operands stay exact)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.integers(0, 3), width=st.sampled_from([1, 2, 3, 7, 40]))
def test_maximum_and_minimum_enclose(seed, kind, width):
    rng = np.random.default_rng(seed)
    x = _box(rng, (3, width), kind)
    verify = _unchanged(x)
    with np.errstate(all="ignore"):
        results = {max: TIER3.maximum(x), min: TIER3.minimum(x)}
    verify()
    for pts in _points(rng, x, 4):
        for f, result in results.items():
            values = [None if any(p is None for p in row) else f(row) for row in pts]
            _check(result, values, f.__name__)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_hull_encloses_its_ends(seed):
    rng = np.random.default_rng(seed)
    a, b = _numbers(rng, (6,)), _numbers(rng, (6,))
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    h = MidRad.hull(lo, hi)
    for end in (lo, hi):
        _check(h, [Q(v) for v in end], "hull")


def _arb_exp(v: Q):
    return arb(v.numerator).exp() if v.denominator == 1 else (arb(v.numerator) / arb(v.denominator)).exp()


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.integers(0, 3), narrow=st.booleans())
def test_exp_encloses_narrow_and_wide_boxes(seed, kind, narrow):
    rng = np.random.default_rng(seed)
    mid = np.where(rng.random((2, 3)) < 0.5, rng.uniform(-760, 720, (2, 3)), _numbers(rng, (2, 3), allow_huge=False))
    mid = np.where(rng.random((2, 3)) < 0.2, rng.choice([exp64.X_MIN, exp64.X_MAX, -745.0, -744.4, 709.78], (2, 3)), mid)
    rad = _radius(rng, (2, 3), kind)
    rad = np.minimum(rad, 1.0) if narrow else rad
    x = MidRad(mid, rad)
    verify = _unchanged(x)
    with np.errstate(all="ignore"):
        result = TIER3.exp(x)
    verify()
    with ctx.workprec(256):
        for pts in _points(rng, x, 3):
            values = np.empty(pts.shape, dtype=object)
            for index in np.ndindex(pts.shape):
                p = pts[index]
                values[index] = None if p is None or abs(p) > 10**6 else _arb_exp(p)
            _check(result, values, "exp")


def test_exp_midrad_at_and_beyond_its_limits_and_through_the_subnormals():
    edges = [exp64.X_MIN, np.nextafter(exp64.X_MIN, -np.inf), np.nextafter(exp64.X_MIN, np.inf), -746.0, -1e300,
             exp64.X_MAX, np.nextafter(exp64.X_MAX, -np.inf), -708.4, -708.3964185322641, 0.0, -0.0, 2.0**-1074]
    xs = np.concatenate([edges, np.linspace(-745.5, -700.0, 3000), np.random.default_rng(0).uniform(-745.5, 709, 3000)])
    mid, rad = exp64.exp_midrad(xs)
    with ctx.workprec(256):
        for x, m, r in zip(xs, mid, rad):
            assert 0 <= r < math.inf
            value = arb(x).exp() if x != 0 else arb(1)
            assert value >= arb(m) - arb(r) and value <= arb(m) + arb(r), (x, m, r)
    mid, rad = exp64.exp_midrad(np.array([np.nextafter(exp64.X_MAX, np.inf), np.inf, np.nan, -np.inf]))
    assert np.isinf(mid[:2]).all() and np.isinf(rad[:2]).all() and np.isnan(mid[2]) and np.isnan(rad[2])
    assert mid[3] in (0.0, ETA) and rad[3] >= ETA


def test_exp_radius_bound_exactly():
    rng = np.random.default_rng(2)
    mids = np.abs(_numbers(rng, 3000, allow_huge=False))
    es = np.abs(_numbers(rng, 3000, allow_huge=False))
    rs = np.minimum(np.abs(_numbers(rng, 3000)), 1.0)
    with np.errstate(all="ignore"):
        R = _exp_radius(mids, es, rs)
    for m, e, r, got in zip(mids, es, rs, R):
        if math.isfinite(got):
            assert Q(got) >= Q(e) + 2 * (Q(m) + Q(e)) * Q(r), (m, e, r, got)


def test_eta_times_is_exact_up_to_its_limit_and_infinite_beyond():
    cs = np.array([0.0, -0.0, 0.25, 1.0, 1.5, 3.0, 2.0**52 - 1, 2.0**52 - 0.5, 2.0**52, 2.0**52 + 2, 2.0**60,
                   np.finfo(np.float64).max, np.inf, np.nan])
    got = _eta_times(cs)
    for c, g in zip(cs, got):
        if math.isfinite(c) and c <= 2.0**52:
            assert Q(g) == Q(math.ceil(c)) * Q(ETA), (c, g)
        else:
            assert g == math.inf, (c, g)


def test_rounding_bound_and_bounded_sum_exactly():
    rng = np.random.default_rng(3)
    a, b = _numbers(rng, 4000), _numbers(rng, 4000)
    with np.errstate(all="ignore"):
        for op, exact in ((np.add, lambda x, y: Q(x) + Q(y)), (np.multiply, lambda x, y: Q(x) * Q(y)),
                          (np.divide, lambda x, y: Q(x) / Q(y))):
            c = op(a, b)
            bound = _rounding_bound(c)
            for x, y, cc, r in zip(a, b, c, bound):
                if math.isfinite(cc) and y != 0:
                    assert abs(exact(x, y) - Q(cc)) <= Q(r), (op, x, y, cc, r)
    # _bounded_sum of rounded products T_i = x_i y_i >= 0, each given as fl(T_i)
    xs, ys = np.abs(_numbers(rng, (5, 2000))), np.abs(_numbers(rng, (5, 2000)))
    with np.errstate(all="ignore"):
        terms = [xs[i] * ys[i] for i in range(5)]
        for scratch in (False, True):
            total = _bounded_sum(*[t.copy() for t in terms], ETA, scratch=scratch)
            for j in range(2000):
                if math.isfinite(total[j]):
                    assert Q(total[j]) >= sum(Q(xs[i, j]) * Q(ys[i, j]) for i in range(5)) + Q(ETA)


def test_up_and_down_bound_what_they_round():
    rng = np.random.default_rng(4)
    a, b = _numbers(rng, 4000), _numbers(rng, 4000)
    with np.errstate(all="ignore"):
        c = a * b
        hi, lo = up(c), down(c)
        scalar_hi, scalar_lo = up(float(c[0])), down(float(c[0]))
    assert scalar_hi == hi[0] and scalar_lo == lo[0]
    for x, y, cc, h, l in zip(a, b, c, hi, lo):
        z = Q(x) * Q(y)
        if math.isfinite(cc):
            assert (math.isnan(l) or Q(l) <= z if l != -math.inf else True) and (h == math.inf or z <= Q(h)), (x, y)
    original = c.copy()
    up(c), down(c)
    assert np.array_equal(c, original, equal_nan=True)


def test_row_norms_and_abs_sums_bound_exactly():
    rng = np.random.default_rng(5)
    for k in (1, 2, 7, 33, 300):
        M = _numbers(rng, (40, k))
        M[:10] = np.ldexp(rng.standard_normal((10, k)), -1060)  # subnormal squares
        M[10:15] = rng.choice([2.0**511, 2.0**511.5, 1.3e154], (5, k))  # squares near overflow
        with np.errstate(all="ignore"):
            norms = row_norms_upper(M)
            sums = abs_sum_upper(M, keepdims=True)
        for row, norm, total in zip(M, norms, sums[:, 0]):
            if math.isfinite(norm):
                assert Q(norm) ** 2 >= sum(Q(v) ** 2 for v in row), (row, norm)
            if math.isfinite(total):
                assert Q(total) >= sum(abs(Q(v)) for v in row)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 3), count=st.sampled_from([0, 1, 5, 2**40]))
def test_outer_upper_bounds_every_entry(seed, p, count):
    rng = np.random.default_rng(seed)
    lefts = [np.abs(_numbers(rng, (2, 3))) for _ in range(p)]
    rights = [np.abs(_numbers(rng, (2, 4))) for _ in range(p)]
    with np.errstate(all="ignore"):
        R = outer_upper(lefts, rights, count)
    for index in np.ndindex(R.shape):
        b, i, j = index
        if math.isfinite(R[index]):
            exact = sum(Q(lefts[t][b, i]) * Q(rights[t][b, j]) for t in range(p)) + count * Q(ETA)
            assert Q(R[index]) >= exact


def test_overflowed_and_nan_enclosures_decide_nothing():
    """An infinite midpoint or radius, or nan, never gives two finite ends nor a certain comparison."""
    with np.errstate(all="ignore"):
        huge = MidRad(np.array([BIG, -BIG, 1.0]), 0.0)
        for x in (huge * 2, huge + huge, huge * huge, MidRad(np.array([np.inf, -np.inf, np.nan]), 0.0),
                  MidRad(np.array([1.0, 0.0, -1.0]), np.inf), MidRad(1.0, np.nan)):
            finite = np.isfinite(x.mid) & np.isfinite(x.rad)
            lo, hi = np.broadcast_arrays(x.lo, x.hi)
            assert not (np.isfinite(lo) & np.isfinite(hi) & ~finite).any()
            assert not np.any(TIER3.certainly_le(x, MidRad(np.inf)) & ~finite)
            assert not np.any(TIER3.certainly_le(MidRad(-np.inf), x) & ~finite)


def test_each_constant_meets_the_inequality_its_proof_uses():
    """The scaling constants, against their stated inequalities in exact rationals (u = 2^-53)."""
    from certify.core.arith import midrad64 as m, rounding
    from certify.core.arith.rounding import gamma
    u = Q(1, 2**53)
    assert Q(PHI) == u * (1 + 2 * u) and Q(ETA) == Q(1, 2**1074)
    for k in (0, 1, 2, 3, 8, 64, 1000, 10**6, 2**40):
        assert Q(m._norm_factor(k)) * (1 - gamma(k)) * (1 - u) ** 2 >= 1
    for p in (1, 2, 3):
        assert Q(m._outer_factor(p)) * (1 - u) * (1 - gamma(p)) >= 1
    for k in (1, 2, 3, 8, 64, 1000, 10**6, 2**40):
        assert Q(rounding._sum_factor(k)) * (1 - gamma(k)) >= 1
    assert Q(m._ROUNDING_FACTOR) * (1 - u) ** 2 >= Q(PHI)
    e = Q(exp64.REL_ERROR)
    assert Q(exp64.MID_FACTOR) * (1 - u) ** 2 >= e / (1 - e)
    assert Q(m._DOUBLED) / 2 * (1 - u) ** 3 >= 1 and Q(m._WIDENED) * (1 - u) ** 3 >= 1
    assert Q(m._SLACK) * (1 - u) ** 22 >= 1


@pytest.mark.parametrize("k", [2, 7, 40])  # 40: past the short axes summed slice by slice
def test_each_bound_takes_gamma_of_the_length_its_proof_counts(monkeypatch, k):
    """A sum of k terms is bounded with gamma_(k-1), a dot product of length k (a square norm, a matrix product)
    with gamma_k, and outer_upper's p-term products with gamma_p (the module docstrings).  One less, and the
    roundings around the factor (rounded up, then the product rounded up) absorb the shortfall in every enclosure
    tested: only here is the length seen."""
    from certify.core.arith import midrad64, rounding
    calls = set()
    for module, name in ((rounding, "_sum_factor"), (midrad64, "_factors"), (midrad64, "_norm_factor"),
                         (midrad64, "_outer_factor")):
        monkeypatch.setattr(module, name, lambda length, real=getattr(module, name), name=name:
                            calls.add((name, length)) or real(length))

    def used(operation) -> set:
        calls.clear()
        operation()
        return set(calls)

    ones = np.ones((3, k))
    assert used(lambda: nonneg_sum_upper(ones)) == {("_sum_factor", k - 1)}
    assert used(lambda: abs_sum_upper(ones)) == {("_sum_factor", k - 1)}
    assert used(lambda: row_norms_upper(ones)) == {("_norm_factor", k)}
    assert used(lambda: sum_squares_lower(ones)) == {("_factors", k)}
    assert used(lambda: MidRad(ones).sum(axis=-1)) == {("_sum_factor", k - 1), ("_factors", k - 1)}
    assert used(lambda: MidRad(ones).sum(axis=(-2, -1))) == {("_sum_factor", k - 1), ("_sum_factor", 2),
                                                            ("_factors", 3 * k - 1)}
    assert used(lambda: TIER3.matmul(MidRad(ones), MidRad(ones.T.copy()))) == {
        ("_factors", k), ("_norm_factor", k), ("_outer_factor", 1)}
    assert used(lambda: TIER3.matmul(MidRad(ones, 0.5), MidRad(ones.T.copy(), 0.5))) == {
        ("_factors", k), ("_norm_factor", k), ("_outer_factor", 2)}


def test_extremes_round_their_ends_outward():
    """Ends mid -+ rad that round towards the inside (the maximum or minimum is read from rounded ends)."""
    mid, rad = 1 + 2.0**-41, 2.0**-41 + 2.0**-60  # mid - rad = 1 - 2^-60 rounds up to 1
    x = MidRad(np.array([[mid, -8.0], [mid, mid]]), np.array([[rad, 0.0], [rad, rad]]))
    for f, result in ((max, TIER3.maximum(x)), (min, TIER3.minimum(x))):
        for pts in _points(np.random.default_rng(0), x, 2):
            _check(result, [f(row) for row in pts], f.__name__)
    y = -x  # the upper ends -mid + rad = -(1 - 2^-60) round down to -1
    for f, result in ((max, TIER3.maximum(y)), (min, TIER3.minimum(y))):
        for pts in _points(np.random.default_rng(0), y, 2):
            _check(result, [f(row) for row in pts], f.__name__)


@pytest.mark.parametrize("divisor", [3.0, -3.0, 7.0, 1.1, 2.0**-1000 * 3, 3 * ETA])
def test_division_by_a_divisor_of_a_radius_far_below_its_ulp(divisor):
    """A divisor's radius far below the rounding of the quotient: the rounding term (PHI) dominates."""
    numerators = np.array([1.0, -1.0, 5.0, 2.0**-1070, 2.0**1000, 1 / 3])
    for y_rad in (abs(divisor) * 2.0**-80, np.array([abs(divisor) * 2.0**-80, 0.0, ETA, 0.0, 0.0, 0.0])):
        for x_rad in (0.0, 2.0**-90):
            x, y = MidRad(numerators, x_rad), MidRad(divisor, y_rad)
            with np.errstate(all="ignore"):
                q = x / y
            for px, py in zip(_points(np.random.default_rng(0), x, 3), _points(np.random.default_rng(1), y, 3)):
                _check(q, _elementwise("div", px, py), f"/ {divisor}")


def test_long_rows_sums_and_products():
    """k in the thousands: gamma_k and k ETA at their size."""
    rng = np.random.default_rng(6)
    M = _numbers(rng, (2, 5000), allow_huge=False)
    M[1] = np.ldexp(rng.standard_normal(5000), -1050)  # subnormal products and squares
    with np.errstate(all="ignore"):
        x = MidRad(M, 2.0**-1070)
        s = x.sum(axis=-1)
        norms = row_norms_upper(M)
        p = TIER3.matmul(MidRad(M[:, :2000]), MidRad(M[:, 2000:4000].T.copy(), ETA))
    exact = [sum(Q(v) for v in row) for row in M]
    _check(s, [e + (1 if i else -1) * 5000 * Q(2.0**-1070) for i, e in enumerate(exact)], "long sum")
    for row, norm in zip(M, norms):
        assert not math.isfinite(norm) or Q(norm) ** 2 >= sum(Q(v) ** 2 for v in row)
    A, B = M[:, :2000], M[:, 2000:4000].T
    _check(p, [[sum(Q(A[i, l]) * Q(B[l, j]) for l in range(2000)) for j in range(2)] for i in range(2)], "long matmul")


@pytest.mark.slow
@settings(max_examples=4000, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), op=st.sampled_from(["add", "sub", "mul", "div"]),
       shapes=st.sampled_from(SHAPES), kinds=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_arithmetic_encloses_long_fuzz(seed, op, shapes, kinds):
    test_arithmetic_encloses_at_corners_and_inside.hypothesis.inner_test(seed, op, shapes, kinds)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kinds=st.tuples(st.integers(0, 3), st.integers(0, 3)),
       dims=st.tuples(st.integers(1, 4), st.integers(1, 6), st.integers(1, 4)), gram=st.booleans())
def test_matmul_encloses_long_fuzz(seed, kinds, dims, gram):
    test_matmul_encloses_with_every_radius_form.hypothesis.inner_test(seed, kinds, dims, gram)


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.integers(0, 3), narrow=st.booleans())
def test_exp_encloses_long_fuzz(seed, kind, narrow):
    test_exp_encloses_narrow_and_wide_boxes.hypothesis.inner_test(seed, kind, narrow)


def _far_consensus_beta_one(form: str, count: int, n: int, d: int, seed: int, thin: bool):
    """test_tier3's adversarial batch with beta = 1 (the exact path: A and W_K keep no radius) and a
    quarter of the configurations near consensus far from the origin (the centring on the float64 mean)."""
    import dataclasses

    from test_tier3 import FORMS, adversarial_batch
    batch = adversarial_batch(count, n, d, seed, thin=thin, **FORMS[form])
    rng = np.random.default_rng(seed)
    X = batch.X.copy()
    far = X[::4]
    X[::4] = (10.0 ** rng.uniform(0, 12, (len(far), 1, 1)) * rng.standard_normal((len(far), 1, d))
              + far * 10.0 ** rng.uniform(-12, 0, (len(far), 1, 1)))
    return dataclasses.replace(batch, X=X, beta=1.0)


@pytest.mark.parametrize("form", ["collapse.global", "collapse.tau", "value.expansive", "residual.two_sided"])
def test_tier3_with_beta_one_and_far_consensus_against_arb(form):
    from test_tier3 import _claim_of, contradictions
    for thin, (n, d) in ((False, (3, 2)), (True, (4, 3))):
        batch = _far_consensus_beta_one(form, 48, n, d, seed=11, thin=thin)
        if not thin:
            A = batch.arrays().A
            assert A.rad.ndim == 0 and A.rad == 0  # the path under test: A kept exact
        assert contradictions(_claim_of(form), batch) == []


@pytest.mark.slow
def test_tier3_with_beta_one_and_far_consensus_against_arb_every_form():
    from test_tier3 import FORMS, _claim_of, contradictions
    for form in sorted(FORMS):
        for thin, (n, d) in ((False, (3, 2)), (True, (4, 3)), (False, (6, 4)), (True, (5, 4))):
            for seed in range(2):
                assert contradictions(_claim_of(form), _far_consensus_beta_one(form, 300, n, d, 100 + seed, thin)) == []


def test_the_ends_are_mid_minus_and_plus_rad_rounded_outward_exactly():
    """lo and hi, the ends every tier 3 verdict compares, are the nearest binary64 numbers outside mid -+ rad,
    exactly (Fractions): never inside by half an ulp (a rounding to nearest would be, half of the time), nor
    an ulp farther out than needed; and certainly_le compares the upper end of x with the lower end of y."""
    rng = np.random.default_rng(3)
    mid = np.concatenate([_numbers(rng, (400,), allow_huge=False), [1.0, 1 + 2.0**-52, -1.0, 0.0, ETA]])
    rad = np.concatenate([np.abs(_numbers(rng, (400,), allow_huge=False)) * 2.0 ** rng.integers(-60, 0, 400),
                          [2.0**-60, 2.0**-60 + 2.0**-80, 2.0**-54, ETA, ETA]])
    x = MidRad(mid, rad)
    lo, hi = x.lo, x.hi
    for m, r, low, high in zip(mid, rad, lo, hi):
        exact_low, exact_high = Q(m) - Q(r), Q(m) + Q(r)
        assert Q(low) <= exact_low < Q(np.nextafter(low, np.inf)), (m, r, low)
        assert Q(np.nextafter(high, -np.inf)) < exact_high <= Q(high), (m, r, high)
    wide, narrow = MidRad(1.0, 0.5), MidRad(1.2)  # wide's midpoint is below 1.2, its upper end above
    assert not TIER3.certainly_le(wide, narrow) and TIER3.certainly_le(narrow, MidRad(2.0, 0.5))
    assert not TIER3.certainly_le(narrow, MidRad(1.3, 0.2)) and TIER3.certainly_le(MidRad(1.0, 0.1), MidRad(1.25, 0.1))


def test_sums_that_lose_at_every_addition_are_enclosed():
    """1 and then k - 1 terms u = 2^-53: each addition to 1 is a tie that rounds to the even 1, so the
    binary64 sum is 1 and misses (k - 1) u, close to the gamma_(k-1) sum |m| that a sum of k terms may lose.
    The exact sum must be within the enclosure, and below the upper bounds of sums of magnitudes, for every
    width of the short axes summed slice by slice and past them."""
    u = 2.0**-53
    for k in list(range(2, 41)) + [64, 100]:
        row = np.array([1.0] + [u] * (k - 1))
        M = np.stack([row, -row, row[::-1]])
        exact = 1 + (k - 1) * Q(u)
        for total in (abs_sum_upper(M), nonneg_sum_upper(np.abs(M))):
            assert all(Q(t) >= exact for t in total), (k, total)
        _check(MidRad(M).sum(axis=-1), [exact, -exact, exact], f"sum of 1 and {k - 1} ties")
        _check(MidRad(M, 0.0).sum(axis=(-2, -1)), exact, f"sum over two axes, width {k}")


@functools.cache
def _subnormal_square_fractions() -> tuple[np.ndarray, np.ndarray]:
    """Entries near 2^-537 and where their exact squares fall between two multiples of 2^-1074 (made once)."""
    candidates = np.ldexp(1 + np.random.default_rng(7).random(20000), -537)
    return candidates, np.array([float((Q(m) ** 2 / Q(ETA)) % 1) for m in candidates])


def _subnormal_squares(k: int, below_tie: bool) -> np.ndarray:
    """3 x k entries near 2^-537 (rows of signs +, -, +) whose squares lie just below (or above) the half-way point
    between two multiples of 2^-1074: each rounds down (or up) by almost 2^-1075."""
    candidates, fractions = _subnormal_square_fractions()
    low, high = (0.3, 0.5) if below_tie else (0.5, 0.7)
    near_ties = candidates[(fractions > low) & (fractions < high)]
    return near_ties[: 3 * k].reshape(3, k) * np.array([[1.0], [-1.0], [1.0]])


def test_row_norms_with_every_square_rounded_down_in_the_subnormals():
    """Entries near 2^-537 whose squares lie just below the half-way point between two multiples of 2^-1074:
    each square rounds down by almost 2^-1075, k of them by almost k 2^-1075 in all, which only the k ETA term
    of the bound covers."""
    for k in (4, 8, 33, 200):
        M = _subnormal_squares(k, below_tie=True)
        norms = row_norms_upper(M)
        product = TIER3.matmul(MidRad(M), MidRad(M.T.copy()))
        for i, (row, norm) in enumerate(zip(M, norms)):
            exact = sum(Q(v) ** 2 for v in row)
            assert Q(norm) ** 2 >= exact, (k, norm)
            _check(product[..., i, i], exact, f"squared norm of {k} subnormal squares")


def test_sums_of_squares_from_below_with_every_square_rounded_up_in_the_subnormals():
    """The mirror image for the lower bound of the spectral norms (sum_squares_lower, through ||M v||): squares just
    above the half-way point round up by almost 2^-1075 each, so the binary64 sum exceeds the exact one by almost
    k 2^-1075, which only the k ETA term of fl(sum) <= (1 + gamma_k) sum + k ETA covers (without it, every lower
    bound here lay above the exact sum, and no test saw it)."""
    for k in (4, 8, 33, 200):
        M = _subnormal_squares(k, below_tie=False)
        for row, lower in zip(M, sum_squares_lower(M)):
            assert Q(lower) <= sum(Q(v) ** 2 for v in row), (k, lower)


@pytest.mark.parametrize("factor", [0.5, 0.25, -0.5, 2.0**-60])
def test_products_by_powers_of_two_below_one_round_in_the_subnormals(factor):
    """x 2^-j is exact for normal results only: 3 ETA / 2 is a tie that rounds to 2 ETA, so a product by a
    power of two below one needs its rounding bound (only those of at least one are exact)."""
    mid = np.array([3 * ETA, 5 * ETA, -7 * ETA, 2.0**-1022 + ETA, 1.0, 3.0])
    for rad in (0.0, np.array([0.0, ETA, 0.0, 2 * ETA, 0.0, 0.0])):
        x = MidRad(mid, rad)
        result = x * factor
        for pts in _points(np.random.default_rng(0), x, 3):
            _check(result, _elementwise("mul", pts, np.full(pts.shape, Q(factor), dtype=object)), f"* {factor}")



@pytest.mark.parametrize("factor", [2**60 + 1, -(2**53 + 1), 2**100 + 1])
def test_products_by_integers_that_round_to_a_power_of_two_keep_their_rounding(factor):
    """An integer past 2^53 whose nearest binary64 is a power of two (2^60 + 1 reads as 2^60) is no exact 2^k:
    the product takes the integer's rounding into its radius, it does not take the power of two as exact."""
    x = MidRad(np.array([1.0, 3.0, -0.75]))
    result = x * factor
    exact = np.array([Q(v) for v in x.mid], dtype=object)
    _check(result, _elementwise("mul", exact, np.full(3, Q(factor), dtype=object)), f"* {factor}")

def test_extremes_round_a_lower_end_that_rounds_up_by_nearly_its_ulp():
    """mid - rad = -2 - 2^-52 + 2^-70 rounds up to -2, by nearly half its ulp; mid + rad lies just above -2, where
    the ulp is half as large, and the ends are close: the outward step of the upper end does not cover the lower
    end's rounding, nor does the hull's slack (the negated box: the upper end of the mirrored case)."""
    mid, rad = -2 + 2.0**-52, 2.0**-51 - 2.0**-70
    for x in (MidRad(np.array([[mid]]), np.array([[rad]])), MidRad(np.array([[mid, -3.0]]), np.array([[rad, 0.0]])),
              -MidRad(np.array([[mid, 3.0]]), np.array([[rad, 0.0]]))):
        for f, result in ((max, TIER3.maximum(x)), (min, TIER3.minimum(x))):
            for pts in _points(np.random.default_rng(0), x, 2):
                _check(result, [f(row) for row in pts], f.__name__)


def test_exp_midrad_radius_covers_the_proven_error_exactly():
    """exp_midrad's proof: |exp(x) - mid| <= e' mid + ETA with e' = e / (1 - e), e = REL_ERROR (the relative error of
    the polynomial, the rounding of ldexp into the subnormals), so rad must be at least that, in exact rationals;
    where mid is subnormal or near 2^-1022 the ETA part is all of it."""
    rng = np.random.default_rng(8)
    xs = np.concatenate([np.linspace(-745.5, -700.0, 4000), rng.uniform(-745.5, 709, 4000),
                         np.log(2.0) * np.arange(-1075, -1015), [exp64.X_MIN, exp64.X_MAX, 0.0]])
    mid, rad = exp64.exp_midrad(xs)
    e = Q(exp64.REL_ERROR)
    for x, m, r in zip(xs, mid, rad):
        assert Q(r) >= e / (1 - e) * Q(m) + Q(ETA), (x, m, r)


def _short(rng, size: int, bits: int = 12):
    """Binary64 numbers in [1/2, 2] of `bits` significant bits: their products and sums of a few stay exact."""
    return np.ldexp(np.round(np.ldexp(rng.uniform(0.5, 2.0, size), bits - 1)), 1 - bits)


def _norm(*vectors) -> arb:
    """The product of the Euclidean norms of the vectors, in arb: ||x y^T||_2 = ||x|| ||y|| for a rank-one matrix."""
    with ctx.workprec(256):
        result = arb(1)
        for v in vectors:
            result *= sum((arb(float(t)) ** 2 for t in v), arb(0)).sqrt()
        return result


def test_spectral_norms_of_a_box_hold_the_norms_of_its_scaled_corners():
    """A box M +- c |M| holds (1 - c) M and (1 + c) M, whose 2-norms are (1 -+ c) ||M||_2: the enclosure of the
    norm must hold both (the lower end needs the radius of M v, the upper end that of M).  M = x y^T with 12-bit
    x and y: every entry is exact, and ||M||_2 = ||x|| ||y||."""
    rng = np.random.default_rng(9)
    for n, m, c in ((3, 3, 0.5), (4, 2, 0.25), (2, 5, 2.0**-10)):
        x, y = _short(rng, n), _short(rng, m)
        M = np.outer(x, y)
        norm = TIER3.spectral_norm(MidRad(M[None], (c * np.abs(M))[None]), {}, "a")
        for scale in (1 - c, 1 + c):
            value = scale * _norm(x, y)
            assert arb(float(norm.lo[0])) <= value <= arb(float(norm.hi[0])), (n, m, c, norm.lo, norm.hi)


def test_thin_product_norms_of_a_box_hold_the_norms_of_its_scaled_corners():
    """||L R^T||_2 for L in the box L0 +- c |L0| (rank one, L0 = x e^T, R = y e^T, fewer columns than rows): the
    corners (1 -+ c) L0 give (1 -+ c) ||L0 R^T||_2 = (1 -+ c) ||x|| ||y|| ||e||^2."""
    rng = np.random.default_rng(10)
    for n, k, c in ((4, 2, 0.5), (5, 3, 0.125)):
        x, y, e = _short(rng, n), _short(rng, n), _short(rng, k)
        L0, R = np.outer(x, e), np.outer(y, e)
        box = MidRad(L0[None], (c * np.abs(L0))[None])
        norm = TIER3.thin_product_norm(box, MidRad(R[None]), {}, "a")
        for scale in (1 - c, 1 + c):
            value = scale * _norm(x, y, e, e)
            assert arb(float(norm.lo[0])) <= value <= arb(float(norm.hi[0])), (n, k, c, norm.lo, norm.hi)


def test_numbers_that_are_not_binary64_keep_their_rounding_as_radius():
    """A claim's or a bound's constant (1/3, 0.1 read exactly, an integer past 2^53, a subnormal fraction) is
    held by the enclosure of its nearest binary64, not only by that binary64; beyond the range, no bound."""
    values = [Q(1, 3), Q(-2, 3), Q(1, 10), Q(2**60 + 1), Q(-(2**53) - 1), Q(7, 3) * Q(ETA), Q(10) ** 400 / 3]
    for value in values:
        x = TIER3.number(value)
        _check(MidRad(np.array([float(x.mid)]), np.array([float(x.rad)])), [value], f"number {value}")
    vector = TIER3.array(values[:6])
    _check(vector, values[:6], "array of numbers")
    assert not np.isfinite(TIER3.number(values[-1]).hi)


def test_constants_enclose_their_exact_values():
    """pi, ln 2 and e are binary64 numbers near, not at, their values: each enclosure must hold the exact constant
    (pi with radius 0 passed every other test; erf's 2 / sqrt(pi) rests on it)."""
    with ctx.workprec(256):
        for name, value in (("pi", arb.pi()), ("ln2", arb(2).log()), ("e", arb(1).exp())):
            _check(getattr(TIER3, name)(), value, name)


@pytest.mark.parametrize("name", ["tanh", "erf", "sqrt_nonneg"])
def test_saturating_functions_and_square_roots_enclose_arb(name):
    """tanh and erf where they round to +-1 (tanh(20) = 1 - 8e-18, erf(6) = 1 - 2e-17: the binary64 next to 1 is
    1 - 1.1e-16) and square roots whose correctly rounded value lies above the exact one (sqrt(2)): arb at 256
    bits within rad of mid, the invariant the next operation reads (a radius of 2 ETA around 1 would make
    1 + erf(-6) an exact 0), and between the outward ends."""
    t = np.array([0.0, ETA, 1e-300, 1e-8, 0.5, 2.0, 3.0, 5.0, 5.999999999999999, 6.0, 7.0, 18.0, 19.06, 20.0, 40.0,
                  1e300, 0.1, 1e6])
    t = t if name == "sqrt_nonneg" else np.concatenate([t, -t])
    with ctx.workprec(256):
        values = [getattr(arb(float(v)), "sqrt" if name == "sqrt_nonneg" else name)() for v in t]
        for x in (MidRad(t), MidRad(t[None, :], 0.0)):
            _check(getattr(MidRad64, name)(x), np.array(values, dtype=object).reshape(x.shape), name)
        if name == "erf":  # 1 + erf(-s) = erfc(s) > 0, from erf's enclosure
            _check(1 + MidRad64.erf(MidRad(-t)), [1 - v for v in values], "1 + erf(-t)")
