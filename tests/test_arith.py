"""The arithmetic protocol: both backends reduce the same axis, constants and expm1/log1p enclose
an independent mpmath evaluation, and nothing outside the backends asks which backend it holds."""

from __future__ import annotations

import pathlib
import re
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

from certify.core.arith import BALL, FLOAT64, Arithmetic

ROOT = pathlib.Path(__file__).resolve().parents[1] / "certify"


def contains(ball: arb, value) -> bool:
    with mp.workdps(60), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, 60, strip_zeros=False)))


def test_both_backends_implement_the_protocol():
    members = [name for name in vars(Arithmetic) if not name.startswith("_")]
    for backend in (FLOAT64, BALL):
        missing = [name for name in members if not hasattr(backend, name)]
        assert missing == [], f"{backend.name} lacks {missing}"


@pytest.mark.parametrize("reduce", ["maximum", "minimum"])
def test_reductions_run_over_the_last_axis_in_both_backends(reduce):
    exact = [[3, -1, 2], [0, 5, -4]]
    floats = getattr(FLOAT64, reduce)(FLOAT64.array(exact))
    with ctx.workprec(53):
        balls = getattr(BALL, reduce)(BALL.array(exact))
    assert floats.shape == balls.shape == (2,)
    assert [float(b.mid()) for b in balls] == list(floats) == ([3.0, 5.0] if reduce == "maximum" else [-1.0, -4.0])
    # a vector reduces to one number in both
    assert getattr(FLOAT64, reduce)(FLOAT64.array(exact[0])) == float(getattr(BALL, reduce)(BALL.array(exact[0])).mid())


def test_stack_puts_arrays_on_a_new_last_axis_in_both_backends():
    """A reduction of stacked arrays runs across them, entry by entry (Ball stacked them on the first axis, so the
    minimum of two vectors' blocks was taken along each vector instead)."""
    first, second = [3, -1, 2], [0, 5, -4]
    floats = FLOAT64.minimum(FLOAT64.stack([FLOAT64.array(first), FLOAT64.array(second)]))
    with ctx.workprec(53):
        balls = BALL.minimum(BALL.stack([BALL.array(first), BALL.array(second)]))
    assert floats.shape == balls.shape == (3,)
    assert [float(b.mid()) for b in balls] == list(floats) == [0.0, -1.0, -4.0]


def test_constants_and_cancellation_free_functions_enclose_mpmath():
    with ctx.workprec(128), mp.workdps(60):
        assert contains(BALL.pi(), mp.pi) and contains(BALL.ln2(), mp.log(2)) and contains(BALL.e(), mp.e)
        tiny = BALL.array(["1/1000000000000000000000"])  # 1e-21: exp(x) - 1 would cancel every digit at 53 bits
        x = mp.mpf(1) / 10**21
        assert contains(BALL.expm1(tiny)[0], mp.expm1(x)) and contains(BALL.log1p(tiny)[0], mp.log1p(x))
    with ctx.workprec(53):
        assert BALL.expm1(BALL.number(1) / 10**21).rel_accuracy_bits() > 45
    assert FLOAT64.expm1(1e-21) == pytest.approx(1e-21, rel=1e-15)
    assert FLOAT64.pi() == pytest.approx(float(mp.pi)) and FLOAT64.ln2() == pytest.approx(float(mp.log(2)))


def test_no_backend_branching_outside_the_backends():
    pattern = re.compile(r"isinstance\([^)]*\b(Float64|Ball)\b")
    offenders = [str(path.relative_to(ROOT.parent)) for path in ROOT.rglob("*.py")
                 if "arith" not in path.parts and pattern.search(path.read_text())]
    assert offenders == []


def test_reduce_axis_agrees_with_numpy_on_short_and_long_axes():
    """The slice-by-slice reduction of a short last axis: max and min exactly numpy's (nan
    included), a sum within the gamma bound of its terms; other axes and long ones go to numpy."""
    from certify.core.arith.rounding import SHORT_AXIS, gamma, reduce_axis
    rng = np.random.default_rng(4)
    for shape in [(50, 7, 8), (3, 1), (20, SHORT_AXIS), (5, SHORT_AXIS + 1), (4, 2)]:
        M = rng.standard_normal(shape) * 10.0 ** rng.integers(-20, 20, shape)
        if M.size > 3:
            M.flat[3] = np.nan
        for ufunc in (np.maximum, np.minimum):
            for keepdims in (False, True):
                assert np.array_equal(reduce_axis(ufunc, M, -1, keepdims), ufunc.reduce(M, axis=-1, keepdims=keepdims),
                                      equal_nan=True)
        clean = np.nan_to_num(M)
        sums = reduce_axis(np.add, clean).reshape(-1)
        for total, row in zip(sums, clean.reshape(-1, shape[-1])):
            terms = [Fraction(v) for v in row]
            assert abs(Fraction(total) - sum(terms)) <= gamma(len(terms) - 1) * sum(map(abs, terms))
        assert np.array_equal(reduce_axis(np.add, clean, 0), clean.sum(axis=0))


def test_product_of_several_matrices_encloses_mpmath_and_equals_the_chained_matmul():
    from certify.core.arith.midrad64 import MidRad64
    from certify.core.numbers import Binary64Matrix

    rng = np.random.default_rng(11)
    factors = [rng.standard_normal(shape) for shape in ((5, 3), (3, 4), (4, 6))]
    with mp.workdps(60):
        exact = mp.matrix(factors[0].tolist()) * mp.matrix(factors[1].tolist()) * mp.matrix(factors[2].tolist())
    with ctx.workprec(53):
        balls = [BALL.array(Binary64Matrix(f)) for f in factors]
        product = BALL.product(*balls)
        chained = BALL.matmul(BALL.matmul(balls[0], balls[1]), balls[2])
        # the product of a transposed view (the scores Z A Z^T take one) is that of the transpose
        gram = BALL.product(balls[0], balls[0].T)
        gram_copied = BALL.matmul(balls[0], np.array(balls[0].T.tolist(), dtype=object))
    assert product.shape == (5, 6) and gram.shape == (5, 5)
    for i in range(5):
        for j in range(6):
            assert contains(product[i, j], exact[i, j])
            # the same arb_mat products in the same order: the very same balls
            assert product[i, j].mid() == chained[i, j].mid() and product[i, j].rad() == chained[i, j].rad()
    assert all(g.mid() == h.mid() and g.rad() == h.rad() for g, h in zip(gram.ravel(), gram_copied.ravel()))
    floats = FLOAT64.product(*factors)
    assert np.allclose(floats, np.array(exact.tolist(), dtype=float), rtol=1e-13, atol=1e-13)
    tier3 = MidRad64().product(*factors)
    with mp.workdps(60):
        assert all(tier3.lower[i, j] <= exact[i, j] <= tier3.upper[i, j] for i in range(5) for j in range(6))


def test_a_reversed_view_is_not_taken_for_the_transpose():
    from certify.core.numbers import Binary64Matrix

    rng = np.random.default_rng(12)
    left, right = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with ctx.workprec(53):
        balls = BALL.array(Binary64Matrix(right))
        view = balls[::-1, ::-1].T  # the shape and (negated) strides of the transpose, other entries
        product = BALL.matmul(BALL.array(Binary64Matrix(left)), view)
    with mp.workdps(60):
        exact = mp.matrix(left.tolist()) * mp.matrix(right[::-1, ::-1].T.tolist())
    assert all(contains(product[i, j], exact[i, j]) for i in range(3) for j in range(3))


def test_pairwise_sq_distances_are_those_of_centred_gram_in_every_backend():
    """pairwise_sq_distances gives G_ii + G_kk - 2 G_ik (i < k, row by row) of centred_gram: Ball's, summed
    pair by pair from the arb_mat, are the very balls of that arithmetic on the n x n array of balls and
    enclose mpmath's squared distances; float64 and tier 3 the same numbers as their own Gram matrix's."""
    from certify.core.arith.midrad64 import MidRad64
    from certify.core.numbers import Binary64Matrix

    rng = np.random.default_rng(5)
    X_f = rng.standard_normal((6, 3)) * 3
    i, k = np.triu_indices(6, 1)
    with ctx.workprec(40):  # coarse: radii visible
        scale = BALL.array([["1/3", "0", "0"], ["0", "1", "0"], ["0", "0", "1"]])
        X = BALL.matmul(BALL.array(Binary64Matrix(X_f)), scale)
        G = BALL.centred_gram(X)
        squared = BALL.pairwise_sq_distances(X)
        expected = [G[a, a] + G[b, b] - 2 * G[a, b] for a, b in zip(i, k)]
    assert squared.shape == (15,)
    assert all((a.mid(), a.rad()) == (b.mid(), b.rad()) for a, b in zip(squared, expected))
    assert max(float(x.rad()) for x in squared) > 0
    with mp.workdps(60):
        Xm = mp.matrix(X_f.tolist()) * mp.diag([mp.mpf(1) / 3, 1, 1])
        assert all(contains(s, sum((Xm[a, j] - Xm[b, j]) ** 2 for j in range(3))) for s, a, b in zip(squared, i, k))
    for backend, Xb in ((FLOAT64, X_f), (MidRad64(), X_f[None])):  # tier 3 batched over a leading axis
        Gb, part = backend.centred_gram(Xb), backend.pairwise_sq_distances(Xb)
        g = np.diagonal(Gb, axis1=-2, axis2=-1)
        expected = g[..., i] + g[..., k] - 2 * Gb[..., i, k]
        if backend is FLOAT64:
            assert np.array_equal(part, expected)
            assert np.allclose(part, ((X_f[i] - X_f[k]) ** 2).sum(axis=-1))
        else:
            assert part.mid.shape == (1, 15)
            assert np.array_equal(part.mid, expected.mid) and np.array_equal(part.rad, expected.rad)


def test_ball_reductions_of_a_vector_and_of_rows_fold_the_same_way():
    """A vector's maximum (a fold over a list) and a matrix's row maxima (the ufunc's reduce) are the
    same balls, entry by entry, as arb.max applied left to right."""
    import functools

    rng = np.random.default_rng(6)
    with ctx.workprec(30):
        rows = BALL.array([[Fraction(int(v), 7) for v in row] for row in rng.integers(-50, 50, (4, 9))])
        for reduce, fold in ((BALL.maximum, arb.max), (BALL.minimum, arb.min)):
            by_rows = reduce(rows)
            for r in range(4):
                expected = functools.reduce(fold, list(rows[r]))
                for got in (by_rows[r], reduce(rows[r])):
                    assert (got.mid(), got.rad()) == (expected.mid(), expected.rad())
        with pytest.raises(ValueError, match="no values"):
            BALL.maximum(np.array([], dtype=object))


def test_a_remembered_matrix_leaves_no_python_callback_and_the_table_stays_bounded():
    """No Python code runs when a remembered array dies (Ctrl-C raised inside a weakref callback is
    swallowed by Python: the interruption was lost), and the entries of dead arrays do not pile up."""
    import weakref

    from certify.core.arith import ball

    A = np.array([[arb(1), arb(2)], [arb(3), arb(4)]], dtype=object)
    # Arrays of earlier tests in this process may still be alive: once pruned, the table holds at most
    # twice the live entries (the pruning rule), and this loop adds one live array to them.
    live_before = sum(ref() is not None for ref, *_ in ball._MATS.values())
    fillers = []
    for _ in range(max(500, 2 * ball._PRUNED_AT[0])):  # past the pruning size earlier tests left
        product = ball.Ball.matmul(A, A)  # remembered with its arb_mat; the previous one dies
        assert weakref.getweakrefs(product) and all(ref.__callback__ is None for ref in weakref.getweakrefs(product))
        fillers.append(np.empty(2, dtype=object))  # takes a dead array's memory: its id is not reused
    assert len(ball._MATS) <= max(8, 2 * (live_before + 1))
    assert ball._remembered(product) is not None  # the live one is still found
    cubed = ball.Ball.matmul(product, A)  # through the remembered arb_mat: still the right entries
    assert [(float(x.mid()), float(x.rad())) for x in cubed.ravel()] == [(37, 0), (54, 0), (81, 0), (118, 0)]


def test_a_pruning_of_the_matrix_table_by_another_thread_meanwhile_raises_nothing(monkeypatch):
    """certify.check run in a thread pool raised KeyError now and then: two checks pruned the shared table of
    remembered matrices (ball._MATS) at once, and one deleted an entry the other had dropped.  The other thread is
    played here by a dead entry whose look-up drops the next one."""
    from certify.core.arith import ball

    class Dead:
        def __init__(self, then=None):
            self.then = then

        def __call__(self):
            if self.then is not None:  # another thread's pruning, between this one's look and its deletion
                table.pop(self.then, None)
            return None

    table = {-1: (Dead(then=-2), None, None), -2: (Dead(), None, None)}
    monkeypatch.setattr(ball, "_MATS", table)
    monkeypatch.setattr(ball, "_PRUNED_AT", [2])
    A = np.array([[arb(1), arb(2)], [arb(3), arb(4)]], dtype=object)
    product = ball.Ball.matmul(A, A)
    assert not {-1, -2} & set(table) and ball._remembered(product) is not None


def test_ball_row_shift_is_the_midpoint_of_each_rows_maximum_with_or_without_a_mask():
    """Ball.row_shift (rows folded over lists when every score is allowed) gives the midpoint of arb's fold of
    max over each row's allowed scores, exactly, as an exact ball inside that maximum's enclosure."""
    rng = np.random.default_rng(11)
    with ctx.workprec(30):  # coarse: the maxima have radii
        scores = np.array([[arb(float(v)) / 3 for v in row] for row in rng.standard_normal((5, 5))], dtype=object)
        full = np.ones((5, 5), dtype=bool)
        causal = np.tril(full)
        for mask in (full, causal):
            shifts = BALL.row_shift(scores, mask)
            for row, allowed, shift in zip(scores, mask, shifts):
                maximum = np.frompyfunc(arb.max, 2, 1).reduce(row[allowed])
                assert shift.rad() == 0 and shift == maximum.mid() and maximum.contains(shift)
                assert maximum.rad() > 0


def _exact(end: arb) -> Fraction:
    """An exact arb (a ball's end) as a Fraction."""
    mantissa, exponent = (int(v) for v in end.mid().man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


def _ends(ball: arb) -> tuple[Fraction, Fraction]:
    return _exact(ball.lower()), _exact(ball.upper())


def test_hull_holds_the_whole_interval_of_its_exact_ends():
    """ball.hull([lo, hi]) (the wu studies' slopes over an interval) holds both ends and so every number between,
    compared exactly: an enclosure of one end alone leaves the other outside."""
    from certify.core.arith.ball import hull

    for lo, hi in ((Fraction(1, 3), Fraction(5, 7)), (Fraction(-2, 3), Fraction(1, 10**30)), (0, Fraction(7, 2))):
        for bits in (53, 200):
            with ctx.workprec(bits):
                low, high = _ends(hull(lo, hi))
            assert low <= lo and hi <= high


def test_ldexp_scales_a_balls_radius_with_its_midpoint():
    """Ball.ldexp(x, k) (a norm's scaling back by 2^k) holds 2^k times every number of x: the ends of x, scaled
    exactly, lie inside the result (a scaled midpoint alone drops the radius)."""
    with ctx.workprec(53):
        x = arb(1) / 3 + arb(0, arb(2) ** -20)  # a ball of radius about 2^-20
        for k in (-7, 0, 5, 300):
            low, high = _ends(BALL.ldexp(x, k))
            x_low, x_high = _ends(x)
            assert low <= x_low * Fraction(2) ** k and x_high * Fraction(2) ** k <= high
