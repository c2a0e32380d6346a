"""The binary64 screens of the centred Dobrushin coefficient's pairs (certify.core.arith.differences for the engine,
certify_checker.overlaps.difference_pairs for the checker): tau = (1/2) max_{i<k} sum_j |P_ij - P_kj|, P = Pi + Delta,
over the pairs a screen keeps holds the exact value and has the ends of tau over every pair (up to arb's rounding of
ends), on matrices built to defeat a screen (near-ties below binary64's resolution, Delta far below binary64's range,
equal rows, wide balls, entries that are not finite), with and without a mask; a screen without its margin fails."""

from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq

import certify_checker.overlaps as checker_screen
from certify.core import centred
from certify.core.arith import BALL, differences, pairs, screen
from certify.studies import trajectory as study
from certify_checker import centred as checker_centred
from test_overlaps import ends, screen_agrees, stochastic

N = screen.SCREEN_FROM + 8
EVERY = N * (N - 1) // 2


def exact_tau(Delta, Pi, complete: bool) -> Fraction:
    def distance(i, k):
        if complete:
            return sum(abs(p - q) for p, q in zip(Delta[i], Delta[k]))
        return sum(abs(p - q + r - s) for p, q, r, s in zip(Delta[i], Delta[k], Pi[i], Pi[k]))
    return max(distance(i, k) for i, k in itertools.combinations(range(len(Delta)), 2)) / 2


def deviations(rng, n: int, unit: Fraction) -> list[list[Fraction]]:
    """Rows of exact rationals of size about `unit` summing to 0, as Delta's near consensus."""
    rows = [[Fraction(float(v)) * unit for v in row] for row in rng.normal(size=(n, n))]
    return [[v - sum(row) / n for v in row] for row in rows]


def causal(rng, n: int) -> list[list[Fraction]]:
    """A masked Pi: row i spreads its mass over tokens 0..i."""
    weights = [Fraction(float(w)) for w in np.exp(rng.normal(size=n))]
    return [[w / sum(weights[:i + 1]) if j <= i else Fraction(0) for j, w in enumerate(weights)] for i in range(n)]


def complete_pi(rng, n: int) -> list[list[Fraction]]:
    return [stochastic(rng, 1, 1.0)[0]] * n


def apart(Delta: list) -> list[list[Fraction]]:
    """Rows 0 and 1 of Delta kept, every other row their mean: one pair far apart."""
    middle = [(a + b) / 2 for a, b in zip(Delta[0], Delta[1])]
    return Delta[:2] + [middle] * (len(Delta) - 2)


def near_ties(Delta: list, unit: Fraction) -> list[list[Fraction]]:
    """apart(Delta) with rows 2 and 3 a copy of rows 0 and 1 moved by 2^-70 unit: the two largest distances differ
    far below binary64's resolution."""
    rows = apart(Delta)
    moved = list(rows[0])
    moved[0] += unit / 2**70
    moved[1] -= unit / 2**70
    return rows[:2] + [moved, rows[1]] + rows[4:]


def one_huge(Delta: list, unit: Fraction) -> list[list[Fraction]]:
    """One entry 2^1400 times the rest: beyond binary64's range before the screen's scaling, the rest below it
    after."""
    rows = [list(row) for row in Delta]
    rows[3][5] = unit * 2**1400
    return rows


# name: (Delta, Pi, complete, unit) from a generator; unit is the size of Delta's entries
CASES = {
    "random, no mask": lambda rng: (deviations(rng, N, Fraction(1, 64)), complete_pi(rng, N), True),
    "random, causal": lambda rng: (deviations(rng, N, Fraction(1, 64)), causal(rng, N), False),
    "one far pair": lambda rng: (apart(deviations(rng, N, Fraction(1, 8))), complete_pi(rng, N), True),
    "near ties below binary64": lambda rng: (near_ties(deviations(rng, N, Fraction(1, 8)), Fraction(1, 8)),
                                             complete_pi(rng, N), True),
    "near ties, causal": lambda rng: (near_ties(deviations(rng, N, Fraction(1, 8)), Fraction(1, 8)),
                                      [causal(rng, N)[-1]] * N, False),
    "tiny, 1e-300": lambda rng: (deviations(rng, N, Fraction(10) ** -300), complete_pi(rng, N), True),
    "subnormal": lambda rng: (deviations(rng, N, Fraction(2) ** -1060), complete_pi(rng, N), True),
    "below binary64": lambda rng: (apart(deviations(rng, N, Fraction(2) ** -60000)), complete_pi(rng, N), True),
    "tiny near ties": lambda rng: (near_ties(deviations(rng, N, Fraction(2) ** -3000), Fraction(2) ** -3000),
                                   complete_pi(rng, N), True),
    "tiny, causal": lambda rng: (deviations(rng, N, Fraction(10) ** -300), causal(rng, N), False),
    "one huge entry": lambda rng: (one_huge(deviations(rng, N, Fraction(1, 64)), Fraction(1, 64)),
                                   complete_pi(rng, N), True),
    "equal rows": lambda rng: ([deviations(rng, 1, Fraction(1, 64))[0]] * N, complete_pi(rng, N), True),
    "equal rows, causal": lambda rng: ([deviations(rng, 1, Fraction(1, 64))[0]] * N, [causal(rng, N)[-1]] * N,
                                       False),
}
UNITS = {"tiny, 1e-300": Fraction(10) ** -300, "subnormal": Fraction(2) ** -1060,
         "below binary64": Fraction(2) ** -60000, "tiny near ties": Fraction(2) ** -3000,
         "tiny, causal": Fraction(10) ** -300}


@functools.cache
def case(name: str):
    Delta, Pi, complete = CASES[name](np.random.default_rng(len(name)))
    return Delta, Pi, complete, exact_tau(Delta, Pi, complete)


def balls(rows, radius=0, seed=None) -> np.ndarray:
    """Balls holding the exact rationals (rounded at the working precision), widened by `radius` (a Fraction); with
    a seed, half the rows widened in alternate columns by their parity by 2^-40 to 2^-8 of `radius`, each entry at one
    end of its ball (a ball of a difference then has a midpoint away from the difference of the midpoints)."""
    rng = np.random.default_rng(seed)
    out = np.array([[arb(fmpq(x.numerator, x.denominator)) for x in row] for row in rows], dtype=object)
    width = arb(fmpq(radius.numerator, radius.denominator)) if radius else arb(0)
    for i, row in enumerate(out):
        for j in range(len(row)):
            if seed is None:
                row[j] = row[j] + arb(0, 1) * width
            elif i % 4 >= 2 and j % 2 == i % 2:
                r = width * arb(2) ** -int(rng.integers(8, 41))
                row[j] = row[j] + r * int(rng.choice([-1, 1])) + arb(0, 1) * r
    return out


def engine_tau(Delta, Pi, complete):
    return centred.dobrushin(BALL, centred.Attention(Pi=Pi, Delta=Delta, complete=complete))


def every_pair_in_the_engine(monkeypatch):
    monkeypatch.setattr(type(BALL), "difference_pairs", staticmethod(pairs.all_pairs))


def every_pair_in_the_checker(monkeypatch):
    monkeypatch.setattr(checker_screen, "difference_pairs",
                        lambda Delta, Pi: list(itertools.combinations(range(len(Delta)), 2)))


def agree(Delta, Pi, complete, tau, monkeypatch) -> None:
    """test_overlaps.screen_agrees for the engine's centred tau and for the checker's, each screen switched off."""
    screen_agrees(lambda P: engine_tau(*P, complete), lambda: every_pair_in_the_engine(monkeypatch), (Delta, Pi), tau)
    lists = (Delta.tolist(), Pi.tolist())
    screen_agrees(lambda P: checker_centred.centred_tau(P[1], P[0], complete),
                  lambda: every_pair_in_the_checker(monkeypatch), lists, tau)


def kept(Delta, Pi, complete) -> tuple[int, int]:
    """How many pairs the engine's screen and the checker's keep."""
    mask = None if complete else Pi
    return (len(differences.screened_pairs(Delta, mask)[0]),
            len(checker_screen.difference_pairs(Delta.tolist(), None if complete else Pi.tolist())))


@pytest.mark.parametrize("precision", [53, 200])
@pytest.mark.parametrize("radius", [0, Fraction(1, 2**60), Fraction(1, 2**20)])
@pytest.mark.parametrize("name", CASES)
def test_the_screened_centred_tau_has_the_ends_over_every_pair_and_holds_the_exact_value(name, radius, precision,
                                                                                  monkeypatch):
    Delta, Pi, complete, tau = case(name)
    unit = UNITS.get(name, 1)
    with ctx.workprec(precision):
        agree(balls(Delta, radius * unit), balls(Pi, radius * unit), complete, tau, monkeypatch)


@pytest.mark.parametrize("precision", [20, 53, 1100])
@pytest.mark.parametrize("name", ["random, no mask", "random, causal", "tiny, 1e-300", "below binary64"])
def test_balls_with_the_exact_entry_at_an_end_screen_to_the_ends_over_every_pair(name, precision, monkeypatch):
    """Below 53 bits arb rounds more coarsely than binary64, above 1000 its balls are far finer than binary64."""
    Delta, Pi, complete, tau = case(name)
    unit = UNITS.get(name, Fraction(1, 64))
    with ctx.workprec(precision):
        Delta, Pi = balls(Delta, unit, seed=precision), balls(Pi, unit, seed=precision + 1)
        counts = kept(Delta, Pi, complete)
        agree(Delta, Pi, complete, tau, monkeypatch)
    assert precision < 53 or max(counts) < EVERY  # a pair was ruled out: the case tests the screens


def test_the_screens_rule_out_what_binary64_separates_and_keep_what_it_cannot():
    with ctx.workprec(64):
        for name in ("one far pair", "below binary64"):
            Delta, Pi, complete, _ = case(name)
            assert list(zip(*differences.screened_pairs(balls(Delta)))) == [(0, 1)]
            assert checker_screen.difference_pairs(balls(Delta).tolist(), None) == [(0, 1)]
        for name in ("near ties below binary64", "tiny near ties", "near ties, causal"):
            Delta, Pi, complete, _ = case(name)
            engine, checker = differences.screened_pairs(balls(Delta), None if complete else balls(Pi)), \
                checker_screen.difference_pairs(balls(Delta).tolist(), None if complete else balls(Pi).tolist())
            ties = {(0, 1), (2, 3), (0, 3), (1, 2)}  # apart by 2^-70 of an entry: none ruled out
            assert ties <= set(zip(*(a.tolist() for a in engine))) and ties <= set(checker)
        for name in ("tiny, 1e-300", "subnormal", "random, causal"):
            assert max(kept(balls(case(name)[0]), balls(case(name)[1]), case(name)[2])) < EVERY
        Delta, Pi, complete, _ = case("one far pair")
        assert kept(balls(Delta, Fraction(1)), balls(Pi), complete) == (EVERY, EVERY)  # radius 1: nothing ruled out


@pytest.mark.parametrize("entry", [arb("inf"), arb("nan"), arb(0, float("inf")), -arb("inf")])
@pytest.mark.parametrize("where", ["Delta", "Pi"])
def test_matrices_the_screens_cannot_bound_keep_every_pair(entry, where):
    Delta, Pi, _, _ = case("random, causal")
    Delta, Pi = balls(Delta), balls(Pi)
    (Delta if where == "Delta" else Pi)[3, 4] = entry
    assert kept(Delta, Pi, False) == (EVERY, EVERY)


def test_small_or_batched_matrices_and_a_broken_floating_point_model_keep_every_pair(monkeypatch):
    Delta, Pi, complete, _ = case("one far pair")
    small = balls([row[:N - 9] for row in Delta[:N - 9]])
    assert len(differences.screened_pairs(small)[0]) == (N - 9) * (N - 10) // 2
    assert len(checker_screen.difference_pairs(small.tolist(), None)) == (N - 9) * (N - 10) // 2
    assert len(differences.screened_pairs(np.stack([balls(Delta)] * 2))[0]) == EVERY
    monkeypatch.setattr(screen.fpmodel, "tier3_usable", lambda: (False, "flush-to-zero"))
    monkeypatch.setattr(checker_screen, "binary64_rounds_to_nearest", lambda: False)
    assert kept(balls(Delta), balls(Pi), complete) == (EVERY, EVERY)


def wide_pairs_below_the_largest() -> tuple[np.ndarray, np.ndarray, Fraction]:
    """Delta of one far pair (rows 0, 1, distance X), rows 2 and 3 pulled towards their mean by 2^-30, so that every
    pair of theirs is at most (1 - 2^-31) X, widened by 2^-26 X / n an entry: their balls' upper ends pass X, and a
    screen must keep them though binary64 separates their midpoints from X (Pi without a mask)."""
    Delta, Pi, _, _ = case("one far pair")
    middle, shrink = Delta[2], 1 - Fraction(1, 2**30)
    pulled = [[c + shrink * (v - c) for v, c in zip(row, middle)] for row in Delta[:2]]
    rows = Delta[:2] + pulled + Delta[4:]
    X = sum(abs(a - b) for a, b in zip(Delta[0], Delta[1]))
    width = X / 2**26 / N
    P = balls(rows)
    for row in P[2:4]:
        for j in range(N):
            row[j] = row[j] + arb(0, 1) * arb(fmpq(width.numerator, width.denominator))
    return P, balls(Pi), exact_tau(rows, Pi, True)


def test_a_screen_without_its_margin_is_caught(monkeypatch):
    """The planted fault: with E and W taken as 0 a screen keeps only the pairs of the largest binary64 value, and
    the test above finds the maximum's upper end moved (the pairs of rows 2 and 3 hold it)."""
    Delta, Pi, tau = wide_pairs_below_the_largest()
    with ctx.workprec(64):
        agree(Delta, Pi, True, tau, monkeypatch)  # with the margin: the same ends
        monkeypatch.undo()
        monkeypatch.setattr(screen, "row_errors", lambda errors, size, k: np.zeros(len(size)))
        monkeypatch.setattr(screen, "radius_bound", lambda *bounds: Fraction(0))
        with pytest.raises(AssertionError):
            screen_agrees(lambda P: engine_tau(*P, True), lambda: every_pair_in_the_engine(monkeypatch),
                          (Delta, Pi), tau)
        monkeypatch.undo()
        monkeypatch.setattr(checker_screen, "_sum_upper", lambda values: arb(0))
        monkeypatch.setattr(checker_screen, "radius_bound", lambda *bounds: arb(0))
        with pytest.raises(AssertionError):
            screen_agrees(lambda P: checker_centred.centred_tau(P[1], P[0], True),
                          lambda: every_pair_in_the_checker(monkeypatch), (Delta.tolist(), Pi.tolist()), tau)


def crossed(n: int) -> tuple[np.ndarray, np.ndarray, Fraction, Fraction]:
    """Delta and a masked Pi whose rows are widened in alternate columns by their parity, so that two rows'
    difference has the radii of both: the balls, the largest sum of two rows' radii (Delta's and Pi's) and the
    largest sum of a row's |midpoints| (Delta's and Pi's), exactly (what the screen's E and T are at least)."""
    def entry(i, j, base):
        return arb(base) / 64 * (1 + arb(1) / (1000 + i)) + (arb(0, 2.0 ** -9 * (1 + 3 * 2.0 ** -20))
                                                              if i % 2 == j % 2 else 0)
    Delta = np.array([[entry(i, j, (-1) ** j) for j in range(n)] for i in range(n)], dtype=object)
    Pi = np.array([[entry(i, j, 3) for j in range(n)] for i in range(n)], dtype=object)
    exact = lambda x: Fraction(int(x.man_exp()[0])) * Fraction(2) ** int(x.man_exp()[1])  # noqa: E731
    radii = [sum(exact(x.rad()) for x in row) + sum(exact(x.rad()) for x in other) for row, other in zip(Delta, Pi)]
    size = max(sum(abs(exact(x.mid())) for x in row) + sum(abs(exact(x.mid())) for x in other)
               for row, other in zip(Delta, Pi))
    return Delta, Pi, max(a + b for a, b in itertools.combinations(radii, 2)), size


@pytest.mark.parametrize("precision", [53, 1000])
def test_a_difference_balls_radius_is_within_the_screens_bound(precision):
    """arb keeps radii to 30 bits, rounded up at every operation: the radius bound W must hold that growth."""
    with ctx.workprec(precision):
        Delta, Pi, E, size = crossed(N)
        W = screen.radius_bound(E, size, N, precision)
        W_checker = checker_screen.radius_bound(arb(fmpq(E.numerator, E.denominator)),
                                                arb(fmpq(size.numerator, size.denominator)), N, precision).lower()
        for i, k in [(0, 1), (2, 7), (N - 2, N - 1)]:
            total = (abs((Delta[i] - Delta[k]) + (Pi[i] - Pi[k]))).sum()  # as centred.dobrushin sums a pair
            assert ends(total.rad())[1] <= W and total.rad() <= W_checker, (i, k, total, float(W))


def rounded_at(precision: int, seed: int) -> tuple[np.ndarray, np.ndarray, Fraction]:
    """Delta and a masked Pi of exact balls of `precision` bits: Delta's entries just above powers of two with signs
    alternating, so that their differences and partial sums round by nearly an ulp; and T (their largest row's
    sum of |midpoints|, exactly)."""
    rng = np.random.default_rng(seed)

    def exact(i, j, sign, mantissa, exponent):
        return arb((sign * int(mantissa), int(exponent) - precision))
    Delta = np.array([[exact(i, j, (-1) ** (i + j), 2 ** (precision - 1) + rng.integers(1, 4), -((i * j) % 3))
                       for j in range(N)] for i in range(N)], dtype=object)
    Pi = np.array([[exact(i, j, 1, rng.integers(2 ** (precision - 1), 2 ** precision), -6) for j in range(N)]
                   for i in range(N)], dtype=object)
    T = max(sum(abs(ends(x)[0]) for x in row) + sum(abs(ends(x)[0]) for x in other) for row, other in zip(Delta, Pi))
    return Delta, Pi, T


@pytest.mark.parametrize("precision", [10, 16, 24])
def test_a_difference_balls_rounding_at_low_precision_is_within_the_screens_bound(precision):
    """From exact entries a pair's ball's radius is its midpoints' rounding alone, at most 2^(1-p) of each rounded
    value: W's midpoint term (W with E = 0) must hold it, for the engine's sum and the checker's."""
    with ctx.workprec(precision):
        Delta, Pi, T = rounded_at(precision, precision)
        W = screen.radius_bound(Fraction(0), T, N, precision)
        W_checker = checker_screen.radius_bound(arb(0), arb(fmpq(T.numerator, T.denominator)), N, precision).lower()
        for i, k in [(0, 1), (0, 3), (2, 7), (5, 6), (N - 2, N - 1)]:
            engine = (abs((Delta[i] - Delta[k]) + (Pi[i] - Pi[k]))).sum()  # as centred.dobrushin sums a pair
            checker = sum((abs((p - q) + (r - s)) for p, q, r, s in zip(Delta[i], Delta[k], Pi[i], Pi[k])), arb(0))
            assert 0 < ends(engine.rad())[1] <= W and 0 < checker.rad() <= W_checker, (i, k, engine, checker, W)


def test_a_trajectory_of_many_tokens_screens_its_tau_and_is_certified(monkeypatch):
    """Through the whole pipeline at N tokens, with and without a mask: the engine's screen rules pairs out, and
    the checker re-derives every tau (its own screen) and confirms the certificate."""
    counts = []

    def recorded(Delta, Pi=None):
        found = differences.screened_pairs(Delta, Pi)
        counts.append(len(found[0]))
        return found
    monkeypatch.setattr(type(BALL), "difference_pairs", staticmethod(recorded))
    rng = np.random.default_rng(11)
    X = (rng.normal(size=(N, 3)) / 2).round(4).tolist()
    A = [[0.5, 0.1, 0], [0, 0.5, 0.1], [0.1, 0, 0.5]]
    for layer in ({"A": A}, {"A": A, "mask": "causal"}):
        counts.clear()
        tr = study.trace({"X": X, "layers": [layer]}, 4)
        assert tr.certified, tr.confirmation
        assert all(p.tau is not None for p in tr.points[:4])
        assert counts and min(counts) < EVERY


@pytest.mark.parametrize("masked", [False, True])
def test_the_benchmark_times_every_way_of_the_centred_form(masked):
    """benchmarks.tau's centred rows run: each way is timed, and the screen's count of kept pairs is sensible."""
    from benchmarks import tau as bench
    found = bench.centred_row(N, 64, True, masked, np.random.default_rng(0))
    assert {"float64", "engine", "engine all", "checker", "checker all"} <= set(found)
    assert 1 <= found["kept"] < EVERY and all(found[c] > 0 for c in ("engine", "checker all"))
