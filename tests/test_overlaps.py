"""The binary64 screen of the Dobrushin coefficient's pairs (certify.core.arith.overlaps): the ball of tau(P) over
the pairs it keeps holds the exact value and has the ends of the one over every pair (up to arb's rounding of
ends), on matrices built to defeat a screen
(near-ties below binary64's resolution, equal rows, wide balls, entries beyond binary64's range)."""

from __future__ import annotations

import functools
import itertools
import operator
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from certify.core import quantities
from certify.core.arith import BALL, differences, overlaps, pairs, screen

N = screen.SCREEN_FROM + 8


def exact_tau(rows: list[list[Fraction]]) -> Fraction:
    n = len(rows)
    return 1 - min(sum(map(min, rows[i], rows[k])) for i in range(n) for k in range(i + 1, n))


def stochastic(rng, n: int, scale: float) -> list[list[Fraction]]:
    """Rows of exact rationals summing to 1: a softmax's shape, with scores of spread `scale`."""
    weights = np.exp(rng.normal(size=(n, n)) * scale)
    rows = [[Fraction(w) for w in row] for row in weights]
    return [[w / sum(row) for w in row] for row in rows]


def ends(ball: arb) -> tuple[Fraction, Fraction]:
    """A ball's lower and upper ends, exactly."""
    return tuple(Fraction(int(m)) * Fraction(2) ** int(e) for m, e in (ball.lower().man_exp(), ball.upper().man_exp()))


def ball_matrix(rows, radius=0):
    """Balls holding the exact rationals (rounded at the working precision), widened by `radius`."""
    return np.array([[arb(fmpq(x.numerator, x.denominator)) + arb(0, radius) for x in row] for row in rows], dtype=object)


def near_ties(rng, n: int) -> list[list[Fraction]]:
    """Two pairs whose overlaps differ by 2^-70, far below binary64's resolution at 1, and are the two least: rows 0
    and 1 apart, rows 2 and 3 a copy of them moved by 2^-70 of mass, every other row the mean of rows 0 and 1."""
    base = stochastic(rng, 2, 2.0)
    shift = [Fraction(0)] * n
    shift[0], shift[1] = Fraction(1, 2**70), -Fraction(1, 2**70)
    moved = [[x + s for x, s in zip(base[0], shift)], base[1]]
    middle = [(a + b) / 2 for a, b in zip(*base)]
    return base + moved + [middle] * (n - 4)


def two_far_rows(rng, n: int) -> list[list[Fraction]]:
    """One pair far apart, every other row equal: the screen keeps about one pair."""
    rows = stochastic(rng, 2, 4.0)
    return rows + [[(a + b) / 2 for a, b in zip(*rows)]] * (n - 2)


CASES = {
    "softmax rows": lambda rng: stochastic(rng, N, 1.0),
    "sharp softmax rows": lambda rng: stochastic(rng, N, 6.0),
    "near ties below binary64": lambda rng: near_ties(rng, N),
    "one far pair": lambda rng: two_far_rows(rng, N),
    "equal rows": lambda rng: [stochastic(rng, 1, 1.0)[0]] * N,
}


def edge_balls(rows, seed: int) -> np.ndarray:
    """ball_matrix(rows) with half the rows widened in alternate columns by their parity (two rows' radii rarely
    meet in one column) by radii from 2^-40 to 2^-8, each entry at one end of its ball: the ball of min(P_ij, P_kj)
    then has a midpoint away from the minimum of the midpoints by up to its radius, which the screen's bound must
    absorb (a uniform radius never moves it)."""
    rng = np.random.default_rng(seed)
    P = ball_matrix(rows)
    for i, row in enumerate(P):
        if i % 4 < 2:
            continue
        for j in range(i % 2, len(row), 2):
            radius = 2.0 ** -float(rng.integers(8, 41))
            row[j] = row[j] + arb(float(rng.choice([-1, 1])) * radius) + arb(0, radius)
    return P


def crossed_radii(n: int) -> tuple[np.ndarray, Fraction, Fraction]:
    """Rows widened in alternate columns by their parity, each ball below the other row's exact entry in its column,
    so that two rows' overlap ball has the radii of both rows: the n x n ball matrix, the largest sum of two rows'
    radii and the largest sum of a row's |midpoints|, exactly (what the screen's E and size are at least)."""
    P = np.array([[arb(1) / 64 + arb(0, 2.0 ** -9 * (1 + 3 * 2.0 ** -20)) if i % 2 == j % 2 else
                   arb(3) / 64 * (1 + arb(1) / (1000 + i)) for j in range(n)] for i in range(n)], dtype=object)
    radii = [sum(map(exact, (x.rad() for x in row))) for row in P]
    size = max(sum(abs(exact(x.mid())) for x in row) for row in P)
    return P, max(a + b for a, b in itertools.combinations(radii, 2)), size


def exact(x: arb) -> Fraction:
    """An exact ball's value (a midpoint, a radius)."""
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


@functools.cache
def case_rows(case: str) -> tuple[list[list[Fraction]], Fraction]:
    rows = CASES[case](np.random.default_rng(len(case)))
    return rows, exact_tau(rows)


def screen_agrees(tau_of, every_pair, P, tau: Fraction) -> None:
    """tau_of(P) over the pairs a screen keeps holds the exact tau, and has the ends of tau_of(P) once every_pair()
    has switched the screen off, up to arb's rounding: it holds them (the tau of every matrix the balls allow, what
    soundness needs; a screen that drops a pair holding an extreme end fails here) and lies within them (the screen
    costs no width).  The engine's and the checker's alike, at the working precision of the moment.
    Not equal by construction: arb's min and max round the ends they return outward, to the working precision and
    to 30-bit radii, by amounts that depend on the balls given; over at most 2^10 pairs (N rows), each end moves by
    less than 2^10 (2^(1-p) |end| + 2^-29 radius) in all."""
    screened = tau_of(P)
    every_pair()
    everywhere = tau_of(P)
    low, high = ends(screened)
    assert low <= tau <= high, (screened, tau)
    every_low, every_high = ends(everywhere)
    assert N * (N - 1) // 2 <= 2**10
    slack = 2**10 * (Fraction(2) ** (1 - ctx.prec) * max(abs(every_low), abs(every_high))
                     + Fraction(2) ** -29 * (every_high - every_low))
    assert low <= every_low + slack and high >= every_high - slack, (screened, everywhere)  # holds every pair's
    assert low >= every_low - slack and high <= every_high + slack, (screened, everywhere)  # and no wider


def screened_agrees(P: np.ndarray, tau: Fraction, monkeypatch) -> None:
    """screen_agrees for the engine's tau (quantities.dobrushin over balls), its screen switched off as before it."""
    screen_agrees(lambda P: quantities.dobrushin(BALL, P), lambda: monkeypatch.setattr(
        type(BALL), "overlap_pairs", staticmethod(pairs.all_pairs)), P, tau)


@pytest.mark.parametrize("precision", [53, 64, 200])
@pytest.mark.parametrize("radius", [0, 2.0 ** -60, 2.0 ** -20])
@pytest.mark.parametrize("case", CASES)
def test_the_screened_ball_has_the_ends_over_every_pair_and_holds_the_exact_tau(case, radius, precision, monkeypatch):
    rows, tau = case_rows(case)
    with ctx.workprec(precision):
        screened_agrees(ball_matrix(rows, radius), tau, monkeypatch)


def test_the_screen_rules_out_what_binary64_separates_and_keeps_what_it_cannot():
    rng = np.random.default_rng(3)
    with ctx.workprec(64):
        far = overlaps.screened_pairs(ball_matrix(two_far_rows(rng, N)))
        ties = overlaps.screened_pairs(ball_matrix(near_ties(rng, N)))
        wide = overlaps.screened_pairs(ball_matrix(two_far_rows(rng, N), 0.5))
    assert list(zip(*far)) == [(0, 1)]  # the one far pair, and every other pair ruled out
    assert {(0, 1), (2, 3), (0, 3), (1, 2)} <= set(zip(*ties))  # apart by 2^-70: none ruled out
    assert len(wide[0]) == N * (N - 1) // 2  # radius 1/2: nothing can be ruled out


def test_each_screen_bounds_its_sums_with_gamma_of_their_length(monkeypatch):
    """The overlap screen sums n minima (gamma_(n-1)), the centred one n differences (gamma_n: the rounded
    differences and their sum, Lemma 3.3 of its docstring).  One less passed every test of the pairs kept, the
    actual rounding being far below the bound."""
    lengths = []
    real = screen.row_errors
    monkeypatch.setattr(screen, "row_errors", lambda errors, size, k: lengths.append(k) or real(errors, size, k))
    P = ball_matrix(stochastic(np.random.default_rng(3), N, 1.0))  # rows of N entries
    with ctx.workprec(64):
        overlaps.screened_pairs(P)
        differences.screened_pairs(P)
    assert lengths == [N - 1, N]


@pytest.mark.parametrize("entry", [arb("inf"), arb("nan"), arb(0, float("inf")), arb(10) ** 400])
def test_a_matrix_the_screen_cannot_bound_keeps_every_pair(entry):
    rows = stochastic(np.random.default_rng(5), N, 1.0)
    P = ball_matrix(rows)
    P[3, 4] = entry
    i, k = overlaps.screened_pairs(P)
    assert len(i) == N * (N - 1) // 2


def test_a_small_or_batched_matrix_keeps_every_pair():
    rows = stochastic(np.random.default_rng(7), screen.SCREEN_FROM - 1, 1.0)
    assert len(overlaps.screened_pairs(ball_matrix(rows))[0]) == len(rows) * (len(rows) - 1) // 2
    batch = np.stack([ball_matrix(stochastic(np.random.default_rng(s), N, 1.0)) for s in range(2)])
    assert len(overlaps.screened_pairs(batch)[0]) == N * (N - 1) // 2


def test_without_the_floating_point_model_every_pair_is_kept(monkeypatch):
    monkeypatch.setattr(screen.fpmodel, "tier3_usable", lambda: (False, "flush-to-zero"))
    rows = two_far_rows(np.random.default_rng(1), N)
    assert len(overlaps.screened_pairs(ball_matrix(rows))[0]) == N * (N - 1) // 2


def test_the_benchmark_times_every_way_on_one_matrix():
    """benchmarks.tau runs: each way of computing tau is timed, and the screen's count of kept pairs is sensible."""
    from benchmarks import tau as bench
    found = bench.row(N, 64, True, np.random.default_rng(0))
    assert {"float64", "engine", "engine all", "checker", "checker all"} <= set(found)
    assert 1 <= found["kept"] < N * (N - 1) // 2 and all(found[c] > 0 for c in ("engine", "checker all"))


@pytest.mark.parametrize("precision", [20, 53, 1100])
def test_balls_with_the_exact_entry_at_an_end_screen_to_the_ball_over_every_pair(precision, monkeypatch):
    """Below 53 bits arb rounds more coarsely than binary64, above 1000 its balls are far finer than binary64."""
    rows, tau = case_rows("sharp softmax rows")
    with ctx.workprec(precision):
        P = edge_balls(rows, precision)
        kept = len(overlaps.screened_pairs(P)[0])
        screened_agrees(P, tau, monkeypatch)
    assert precision < 53 or kept < N * (N - 1) // 2  # the screen ruled some pair out: the case tests it


@pytest.mark.parametrize("precision", [53, 1000])
def test_an_overlap_balls_radius_is_within_the_screens_bound(precision):
    """arb keeps radii to 30 bits, rounded up at every operation: over 40 columns two rows' radii came out 2.6e-8 of
    themselves above a bound that did not count that rounding (E and the midpoints' rounding)."""
    with ctx.workprec(precision):
        P, E, size = crossed_radii(N)
        W = screen.radius_bound(E, size, N, precision)
        for i, k in [(0, 1), (2, 7), (N - 2, N - 1)]:
            overlap = functools.reduce(operator.add, map(arb.min, P[i], P[k]))
            assert exact(overlap.rad()) <= W, (i, k, overlap, float(W))
