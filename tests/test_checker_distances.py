"""The checker's exact pairwise l1 distances in 64-bit lanes of Python integers (certify_checker.distances), against
plain sums: every lane at the ends of its range (a borrow or a carry between lanes, the xor's off-by-one for negative
differences, a row or column left out would each change some distance), and entries outside the range refused."""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

import pytest
from flint import arb

from certify_checker import distances, overlaps


def plain(rows: list) -> dict:
    pairs = itertools.combinations(range(len(rows)), 2)
    return {(i, k): sum(abs(a - b) for a, b in zip(rows[i], rows[k])) for i, k in pairs}


@pytest.mark.parametrize("n, columns", [(2, 1), (3, 2), (2, 9), (5, 64), (33, 33), (40, 40), (64, 3), (70, 130)])
def test_every_pairs_distance_is_the_plain_sum_with_entries_at_the_ends_of_their_range(n, columns):
    rng = random.Random(n * 1000 + columns)
    top = (1 << distances.entry_bits(columns)) - 1
    rows = [[rng.choice([0, top, rng.randrange(top + 1), 1, top - 1]) for _ in range(columns)] for _ in range(n)]
    extremes = [[0] * columns, [top] * columns, [top * (j % 2) for j in range(columns)]]
    rows[:len(extremes)] = extremes[:n]
    assert distances.pairwise(rows) == plain(rows)


def test_the_largest_distance_the_range_allows_fills_no_more_than_its_lane():
    columns = 1000
    top = (1 << distances.entry_bits(columns)) - 1
    rows = [[0] * columns, [top] * columns, [0] * columns]
    assert distances.pairwise(rows) == {(0, 1): columns * top, (0, 2): 0, (1, 2): columns * top}
    assert columns * top < 2**62


@pytest.mark.parametrize("entry", [-1, 1 << distances.entry_bits(4)])
def test_an_entry_outside_the_lanes_range_is_refused(entry):
    rows = [[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 1, 1]]
    rows[1][2] = entry
    with pytest.raises(ValueError):
        distances.pairwise(rows)


def test_the_screens_integer_bounds_are_floors_of_the_exact_values():
    """_units(x, F) = floor(2^F x): at integers of 2^-F (where floor - 1 or a ceiling would keep or drop a pair at
    the bound), between them, negative and tiny."""
    rng = random.Random(7)
    values = [Fraction(k, 2**52) for k in (0, 1, -1, 3 * 2**50, -(3 * 2**50))]
    values += [Fraction(rng.randrange(-2**70, 2**70), 2**rng.randrange(40, 80)) for _ in range(200)]
    for value in values:
        x = arb((value.numerator, 1 - value.denominator.bit_length()))  # the denominator a power of two: exact
        assert overlaps._units(x, 52) == value.numerator * 2**52 // value.denominator, value


@pytest.mark.parametrize("n", [32, 63, 64, 127, 128, 255, 256])
@pytest.mark.parametrize("matrices", [1, 2])
def test_the_screens_integers_at_the_ends_of_the_midpoints_range_fit_the_lanes_and_sum_exactly(n, matrices):
    """overlaps._integers reads midpoints in [-2, 2] (one matrix, or Delta and Pi with a mask) as lanes in
    [0, k 2^(F+2)]: at midpoints +-2 in every pattern, on both sides of the row counts where F steps down, every lane
    entry stays below 2^entry_bits(n) (the lanes' range the F of each n is derived to keep) and every pair's distance,
    at 2^-F, is sum_j |m_ij - m_kj| exactly (+-2 lie on the grid: no rounding)."""
    rng = random.Random(n * 10 + matrices)
    ends = [-2.0, 2.0]
    mids = [[[rng.choice(ends) for _ in range(n)] for _ in range(n)] for _ in range(matrices)]
    for m in mids:  # both ends of the lanes' range in every column: all -2 (lane 0) and all 2 (the top)
        m[0], m[-1] = [-2.0] * n, [2.0] * n
    F, _, lanes = overlaps._integers(mids, n)
    assert max(map(max, lanes)) == matrices << (F + 2) < 1 << distances.entry_bits(n)
    assert min(map(min, lanes)) == 0
    sums = [[sum(column) for column in zip(*rows)] for rows in zip(*mids)]
    exact = {pair: Fraction(value) * 2**F for pair, value in plain(sums).items()}
    assert distances.pairwise(lanes) == exact
