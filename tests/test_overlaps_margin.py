"""Worst cases against the margin of the checker's binary64 screens (certify_checker.overlaps).  A screen may drop
a pair only where it cannot hold the extreme end of the pairs' balls: the least lower end of the overlaps' balls
(candidate_pairs), the greatest upper end of the differences' (difference_pairs); those ends bound the extreme over
every matrix the balls allow, and the checker's tau must hold them.  Each case has a pair whose binary64 value lies
beyond a narrower margin than the screen's and that holds that end, by arb's rounding of its sums at the working
precision (what W holds beyond E) or by binary64's reading of subnormal midpoints (what E's ulps hold).  A randomised
property test runs both screens against every pair, summed in arb, on near-ties at every scale."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from flint import arb, ctx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from certify_checker import centred, forward, overlaps

N = overlaps.SCREEN_FROM + 8
PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ends(x: arb) -> tuple[Fraction, Fraction]:
    """A ball's lower and upper ends, exactly: taken at more bits than any ball here holds (at the working precision
    arb rounds them outward, which would widen the ends of every pair that a screened tau must hold)."""
    with ctx.workprec(2**14):
        lower, upper = x.lower(), x.upper()
        assert lower.is_exact() and upper.is_exact()
        return tuple(Fraction(int(m)) * Fraction(2) ** int(e) for m, e in (lower.man_exp(), upper.man_exp()))


def overlap_balls(P: list) -> dict:
    """Every pair's sum_j min(P_ij, P_kj), summed in arb as forward.dobrushin sums the pairs it is given."""
    return {(i, k): sum((p.min(q) for p, q in zip(P[i], P[k])), arb(0))
            for i, k in itertools.combinations(range(len(P)), 2)}


def difference_balls(Delta: list, Pi: list, complete: bool) -> dict:
    """Every pair's sum_j |P_ij - P_kj|, P = Pi + Delta, summed in arb as centred.centred_tau sums them."""
    def total(i, k):
        if complete:
            return sum((abs(p - q) for p, q in zip(Delta[i], Delta[k])), arb(0))
        return sum((abs((p - q) + (r - s)) for p, q, r, s in zip(Delta[i], Delta[k], Pi[i], Pi[k])), arb(0))
    return {(i, k): total(i, k) for i, k in itertools.combinations(range(len(Delta)), 2)}


def least_ends(balls: dict) -> tuple[Fraction, Fraction]:
    lows, highs = zip(*map(ends, balls.values()))
    return min(lows), min(highs)


def greatest_ends(balls: dict) -> tuple[Fraction, Fraction]:
    lows, highs = zip(*map(ends, balls.values()))
    return max(lows), max(highs)


def assert_tau_holds_every_pairs_ends(P: list) -> dict:
    """The checker's tau = 1 - min over the pairs its screen keeps holds 1 - [L, U], L and U the least lower and
    least upper ends of every pair's overlap ball (which hold min_ik o_ik for every matrix the balls allow)."""
    balls = overlap_balls(P)
    low, high = least_ends(balls)
    lower, upper = ends(forward.dobrushin(P))
    assert lower <= 1 - high and upper >= 1 - low, (float(lower), float(upper), float(low), float(high))
    return balls


def assert_centred_tau_holds_every_pairs_ends(Delta: list, Pi: list, complete: bool) -> dict:
    """The checker's centred tau = max / 2 over the pairs its screen keeps holds [L, U] / 2, L and U the greatest
    lower and upper ends of every pair's ball."""
    balls = difference_balls(Delta, Pi, complete)
    low, high = greatest_ends(balls)
    lower, upper = ends(centred.centred_tau(Pi, Delta, complete))
    assert lower <= low / 2 and upper >= high / 2, (float(lower), float(upper), float(low), float(high))
    return balls


def alternating(first: list, second: list) -> list:
    """first's entries in the even columns, second's in the odd ones."""
    return [a if j % 2 == 0 else b for j, (a, b) in enumerate(zip(first, second))]


def binary64_overlaps(P: list) -> dict:
    """Every pair's sum_j min(m_ij, m_kj) at the binary64 midpoints, exactly: what the screen ranks the pairs by."""
    mids = [[Fraction(float(x.mid())) for x in row] for row in P]
    return {(i, k): sum(map(min, mids[i], mids[k])) for i, k in itertools.combinations(range(len(P)), 2)}


def overlaps_sunk_by_rounding(seed: int) -> list:
    """Rows 0 and 1 overlap in 1/2 + 39 a exactly, a = 2^-8 (a in the columns where one row has it, b = 2^-7 in the
    others); rows 2 and 3 likewise with a_j = a + k_j 2^-60, k_j summing to 3 2^10: their binary64 overlap is
    3 2^-50 (2^-48.4) more, beyond f_min + 2E (2E is 2^-48.7 here), and each of their 39 sums in arb rounds at 53 bits
    or fewer (the partial sums lie in [1/2, 1)), which sinks the ball's lower end by an ulp and the rounding,
    2^-47.2 in all at 53 bits (2^-14.7 at 20), below rows 0 and 1's: only W's rounding term (2^-44.7 at 53 bits)
    keeps the pair.  Every other row is b off column 0: far."""
    rng = random.Random(seed)
    a, b = 2.0 ** -8, 2.0 ** -7
    tails = [rng.randrange(1, 2 * 3 * 2**10 // (N - 1)) for _ in range(N - 2)]
    tails.append(3 * 2**10 - sum(tails))
    assert tails[-1] > 0
    many = [a + k * 2.0 ** -60 for k in tails]
    rows = [[0.5] + alternating([a] * (N - 1), [b] * (N - 1)), [0.5] + alternating([b] * (N - 1), [a] * (N - 1)),
            [0.5] + alternating(many, [b] * (N - 1)), [0.5] + alternating([b] * (N - 1), many)]
    rows += [[0.5] + [b] * (N - 1)] * (N - 4)
    return [[arb(x) for x in row] for row in rows]


@pytest.mark.parametrize("precision", [20, 53])
@pytest.mark.parametrize("seed", [1, 2])
def test_a_pair_whose_overlap_ball_arb_rounding_sinks_below_the_least_is_kept(precision, seed):
    with ctx.workprec(precision):
        P = overlaps_sunk_by_rounding(seed)
        balls = assert_tau_holds_every_pairs_ends(P)
        sunk = min(balls, key=lambda pair: ends(balls[pair])[0])
    binary64 = binary64_overlaps(P)
    least = min(binary64, key=binary64.get)
    assert least == (0, 1) and sunk != least and binary64[sunk] > binary64[least]  # the case is the one described
    assert ends(balls[sunk])[0] < ends(balls[least])[0]


def heavy_overlaps_sunk_by_rounding(precision: int, seed: int) -> list:
    """As overlaps_sunk_by_rounding where W's rounding term is tightest, S large and every partial sum just above a
    power of two: rows 0 and 1 hold 2 in 8 columns and overlap in 16 + 32 a exactly; rows 2 and 3 likewise with
    a_j = a + c_j ulp - 2^-60, ulp = 2^(5-p) that of their partial sums in [16, 32), the c_j summing to 52.  Their
    binary64 overlap is 52 ulps more (2^-9.3 at 20 bits), beyond f_min + 2E + 2W were W's rounding term a quarter of
    4 (n + 2) 2^-p (1 + S + E) (2^-9.5), and each of their 32 sums in arb rounds down by nearly an ulp and adds an ulp
    to the radius: the ball's lower end sinks by 64 ulps (2^-9), below rows 0 and 1's; W (2^-8.5) keeps the pair."""
    rng = random.Random(seed)
    a, b, ulp = 2.0 ** -8, 2.0 ** -7, 2.0 ** (5 - precision)
    c = [0] * (N - 8)
    for _ in range(52):
        c[rng.randrange(N - 8)] += 1
    many, A, B = [a + k * ulp - 2.0 ** -60 for k in c], [a] * (N - 8), [b] * (N - 8)
    rows = [alternating(A, B), alternating(B, A), alternating(many, B), alternating(B, many)] + [B] * (N - 4)
    return [[arb(x) for x in [2.0] * 8 + row] for row in rows]


@pytest.mark.parametrize("precision", [20, 30])
def test_a_heavy_pair_whose_overlap_ball_arb_rounding_sinks_below_the_least_is_kept(precision):
    with ctx.workprec(precision):
        P = heavy_overlaps_sunk_by_rounding(precision, 1)
        balls = assert_tau_holds_every_pairs_ends(P)
    binary64 = binary64_overlaps(P)
    assert min(balls, key=lambda pair: ends(balls[pair])[0]) == (2, 3) and binary64[2, 3] > binary64[0, 1]


def subnormal_overlaps(precision: int) -> tuple[list, Fraction]:
    """Rows 0 and 1 overlap in 30 u exactly (u = 2^-1074, binary64's least subnormal); rows 2 and 3 in 40 entries
    (1/2 + 2^-20) u, which binary64 reads as u: 40 u, beyond f_min + 2E + 2W once E drops the ulps (E's 2^-51 S
    and W's 2^-p terms are then far below u at 1100 bits), though the exact overlap, 20 u and a little, is the least.
    The ulps of the midpoints and radii (u each) keep the pair.  Every other row is 2^14 u: far.  Returns the
    matrix and the exact least overlap."""
    u = arb(2) ** -1074
    off_grid, big = (arb(1) / 2 + arb(2) ** -20) * u, 2**14 * u
    exact = [u if j < 30 else arb(0) for j in range(N)]
    block = [j < N // 2 for j in range(N)]
    rows = [alternating(exact, [big] * N), alternating([big] * N, exact),
            [off_grid if inside else big for inside in block], [big if inside else off_grid for inside in block]]
    rows += [[big] * N] * (N - 4)
    return rows, N * (Fraction(1, 2) + Fraction(1, 2**20)) * Fraction(2) ** -1074


def test_a_pair_of_subnormal_midpoints_binary64_reads_above_the_least_is_kept():
    """Not the balls' ends alone: the exact least overlap of these exact matrices is lost with the pair."""
    with ctx.workprec(1100):
        P, least = subnormal_overlaps(1100)
        assert [float(x.mid()) for x in P[2][:2]] == [2.0 ** -1074] * 2  # binary64 reads 40 u
        assert_tau_holds_every_pairs_ends(P)
        lower, upper = ends(forward.dobrushin(P))
        assert lower <= 1 - least <= upper
        assert (2, 3) in overlaps.candidate_pairs(P)


def differences_raised_by_rounding(seed: int) -> list:
    """Delta's rows 0 and 1 are +-(1/4, 2^-8 s_j) (signs s_j alternating): their distance 1/2 + 39 2^-7 exactly.
    Rows 2 and 3 are +-(1/4, y_j t_j) (signs t_j by halves, so that a cross pair is far), 2 y_j = 2^-7 - m_j 2^-53
    + 2^-59 with the m_j summing to 26: their distance is 1625 2^-59 (2^-48.35) less, below f_max - 2E (2E is 2^-49
    in Delta's units), and every one of their 39 sums in arb at 53 bits (partial sums in [1/2, 1)) is exact but for
    2^-59, which raises the ball's upper end by nearly an ulp, 2^-47.8 in all, above rows 0 and 1's: only W's rounding
    term (2^-45.7 in Delta's units) keeps the pair.  Every other row is 0."""
    rng = random.Random(seed)
    m = [0] * (N - 1)
    for _ in range(26):
        m[rng.randrange(N - 1)] += 1
    y = [(2.0 ** -7 - k * 2.0 ** -53 + 2.0 ** -59) / 2 for k in m]
    s = [(-1) ** j for j in range(N - 1)]
    t = [1 if j < N // 2 else -1 for j in range(N - 1)]
    rows = [[0.25] + [2.0 ** -8 * sign for sign in s], [0.25] + [y_j * sign for y_j, sign in zip(y, t)]]
    rows = [rows[0], [-x for x in rows[0]], rows[1], [-x for x in rows[1]]] + [[0.0] * N] * (N - 4)
    return [[arb(x) for x in row] for row in rows]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_pair_whose_difference_ball_arb_rounding_raises_above_the_greatest_is_kept(seed):
    with ctx.workprec(53):
        Delta = differences_raised_by_rounding(seed)
        Pi = [[arb(1) / N] * N] * N
        balls = assert_centred_tau_holds_every_pairs_ends(Delta, Pi, True)
        raised = max(balls, key=lambda pair: ends(balls[pair])[1])
        mids = [[Fraction(float(x.mid())) for x in row] for row in Delta]
    binary64 = {(i, k): sum(abs(p - q) for p, q in zip(mids[i], mids[k])) for i, k in balls}
    greatest = max(binary64, key=binary64.get)
    assert greatest == (0, 1) and raised != greatest and binary64[raised] < binary64[greatest]


SCALES = [0, -40, -1064, -3000]  # entries near 1/n, far below, at binary64's subnormals, below binary64's range
RADII = ["none", "uniform", "crossed", "per entry", "entry at an end", "wide"]
PRECISIONS = [20, 30, 53, 64, 200, 1100]


def ties(n: int, gaps: list, off_grid: bool, signed: bool, rng: random.Random) -> list:
    """n rows of exact dyadics near 1/n: rows 2i and 2i + 1 copies of two rows apart, A (its mass tilted to the even
    columns) and B (to the odd ones; signed, -A), each entry moved by up to 2^-gaps[i] of itself with many bits, and
    off binary64's grid by less than half an ulp where off_grid; the rest far from the ties, (A + B) / 2.  The pairs
    of an A and a B are near-ties, apart by about 2^-gap: at, within or beyond the screen's margin."""
    w = [1 + rng.random() for _ in range(n)]
    A = [x * (2 if j % 2 == 0 else 1) / n for j, x in enumerate(w)]
    B = [-x for x in A] if signed else [x * (1 if j % 2 == 0 else 2) / n for j, x in enumerate(w)]

    def moved(row, gap):
        out = []
        for x in row:
            y = x * (1 + rng.randrange(-2**40, 2**40) * 2.0 ** (-40 - gap))
            out.append(Fraction(y) + (Fraction(rng.randrange(-2**40, 2**40), 2**41) * Fraction(math.ulp(y))
                                      if off_grid else 0))
        return out
    rows = [moved((A, B)[i % 2], gaps[i // 2]) for i in range(2 * len(gaps))]
    middle = [(Fraction(a) + Fraction(b)) / 2 for a, b in zip(A, B)]
    return rows + [middle] * (n - len(rows))


def balls_of(rows: list, scale: int, radius: str, size: int, rng: random.Random) -> list:
    """Balls around 2^scale times the dyadic rows, exact at any working precision (made at more bits than they
    hold), of radius 2^-size of the entry's size in the manner named (RADII)."""
    out = []
    with ctx.workprec(4000):
        for i, row in enumerate(rows):
            out.append([])
            for j, x in enumerate(row):
                r = (abs(x) or Fraction(1, len(row))) / 2**size
                if radius == "none" or radius == "crossed" and i % 2 != j % 2:
                    r = Fraction(0)
                elif radius == "per entry":
                    r /= 2 ** rng.randrange(40)
                elif radius == "wide":
                    r = abs(x) / 4 + r
                elif radius == "entry at an end":
                    x += rng.choice([-1, 1]) * r
                out[-1].append((arb(x.numerator) / x.denominator + arb(0, arb(r.numerator) / r.denominator))
                               * arb(2) ** scale)
    return out


@st.composite
def screened_matrices(draw, signed: bool):
    """(precision, balls, a random source for the rest of the case): ties() at a scale, with radii, as drawn; the
    ties' gaps from far apart to below binary64's ulp."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    n = draw(st.sampled_from([overlaps.SCREEN_FROM, overlaps.SCREEN_FROM + 5]))
    gaps = draw(st.lists(st.integers(1, 64), min_size=1, max_size=3))
    rows = ties(n, gaps, draw(st.booleans()), signed, rng)
    return draw(st.sampled_from(PRECISIONS)), balls_of(rows, draw(st.sampled_from(SCALES)), draw(
        st.sampled_from(RADII)), draw(st.integers(2, 80)), rng), rng


@PROPERTY
@given(case=screened_matrices(signed=False))
def test_the_least_overlap_screen_keeps_the_ends_of_every_pair(case):
    precision, P, _ = case
    with ctx.workprec(precision):
        assert_tau_holds_every_pairs_ends(P)


@PROPERTY
@given(case=screened_matrices(signed=True), mask=st.sampled_from(["none", "equal rows", "causal"]))
def test_the_greatest_difference_screen_keeps_the_ends_of_every_pair(case, mask):
    """Pi's rows equal without a mask (complete) or with one; or a causal Pi, row i spread over tokens 0..i."""
    precision, Delta, rng = case
    n = len(Delta)
    weights = [Fraction(1 + rng.random()) for _ in range(n)]
    if mask == "causal":
        rows = [[w / sum(weights[:i + 1]) if j <= i else Fraction(0) for j, w in enumerate(weights)] for i in range(n)]
    else:
        rows = [[w / sum(weights) for w in weights]] * n
    Pi = [[arb(x.numerator) / x.denominator for x in row] for row in rows]
    with ctx.workprec(precision):
        assert_centred_tau_holds_every_pairs_ends(Delta, Pi, mask == "none")


def overlaps_read_low_by_the_integers() -> tuple[list, Fraction]:
    """Rows 0 and 1 overlap in x + 35 a (x = 2^-6 in column 0, a = 2^-8 the lesser of a and b = 2^-7 in the 35 fine
    columns 5..39, alternating; their big columns 1..4 apart); rows 2 and 3 in y + 35 (a + c), c = 2^-F - 2^-(F+7) and
    y = x - 35 c + 2^-58: 2^-58 more, the least overlap is rows 0 and 1's.  Read as floor(2^F m) (overlaps._integers)
    every a + c loses 1 - 2^-7 of a unit and y only 35 - 0.29 units, so rows 2 and 3 read 35 units (2^-F) below rows 0
    and 1: only the integers' share of E, n 2^-(F+1) a row, keeps the pair; the balls' own share is about a unit.  Every
    other row puts a quarter in each big column: far."""
    F = overlaps._integers([[[0.0] * N] * N], N)[0]
    a, b, x = 2.0 ** -8, 2.0 ** -7, 2.0 ** -6
    c = 2.0 ** -F - 2.0 ** -(F + 7)
    y = x - 35 * c + 2.0 ** -58
    assert y == Fraction(x) - 35 * Fraction(c) + Fraction(2) ** -58 and a + c == Fraction(a) + Fraction(c)  # exact

    def row(first, big, low, high, odd):
        return [first] + big + [low if j % 2 == odd else high for j in range(N - 5)]
    rows = [row(x, [0.5, 0, 0.5, 0], a, b, 0), row(x, [0, 0.5, 0, 0.5], a, b, 1),
            row(y, [0.5, 0, 0, 0.5], a + c, b, 0), row(y, [0, 0.5, 0.5, 0], a + c, b, 1)]
    rows += [row(0.0, [0.25] * 4, b, b, 0)] * (N - 4)
    return [[arb(v) for v in r] for r in rows], Fraction(x) + 35 * Fraction(a)


def test_a_pair_the_screens_integers_read_below_the_least_is_kept():
    with ctx.workprec(200):
        P, least = overlaps_read_low_by_the_integers()
        assert_tau_holds_every_pairs_ends(P)
        lower, upper = ends(forward.dobrushin(P))
        assert lower <= 1 - least <= upper
        assert (0, 1) in overlaps.candidate_pairs(P)


def differences_read_apart_by_the_integers() -> tuple[list, list]:
    """Delta's rows 0 and 1 are +-1/2 in column 0 and g s_j, -g s_j (g = 2^-8, s_j alternating) in the 39 others,
    the positive one of each column raised by c = 7 2^-(F+3): their distance 1 + 39 (2 g + c).  Rows 2 and 3 are
    1/2 + z and -1/2 (z = 29 2^-F), and g t_j, -g t_j (t_j by halves, so that a cross pair is far) with the negative
    one lowered by e = 2^-(F+3): their distance 1 + z + 39 (2 g + e), 2^-(F+2) less.  Read as floor(2^F m) every
    column of rows 0 and 1 loses 7/8 of a unit (2^-F) and every one of rows 2 and 3 gains it: rows 2 and 3 read
    68 units above, and only the integers' share of E, n 2^-(F+1) a row, keeps rows 0 and 1.  Every other row is 0."""
    F = overlaps._integers([[[0.0] * N] * N], N)[0]
    g, c, e, z = 2.0 ** -8, 7 * 2.0 ** -(F + 3), 2.0 ** -(F + 3), 29 * 2.0 ** -F
    s = [(-1) ** j for j in range(N - 1)]
    t = [1 if j < N // 2 else -1 for j in range(N - 1)]
    raised = [[0.5] + [sign * g + (c if sign > 0 else 0) for sign in s], [-0.5] + [-sign * g + (c if sign < 0 else 0)
                                                                                 for sign in s]]
    lowered = [[0.5 + z] + [sign * g - (e if sign < 0 else 0) for sign in t],
               [-0.5] + [-sign * g - (e if sign > 0 else 0) for sign in t]]
    rows = raised + lowered
    rows += [[0.0] * N] * (N - 4)
    exact = [[Fraction(x) for x in row] for row in rows]
    distance_01, distance_23 = (sum(abs(a - b) for a, b in zip(exact[i], exact[i + 1])) for i in (0, 2))
    assert distance_01 - distance_23 == Fraction(2) ** -(F + 2)
    assert [float(v) for v in (g + c, g + e, 0.5 + z)] == [Fraction(g) + Fraction(c), Fraction(g) + Fraction(e),
                                                           Fraction(1, 2) + Fraction(z)]  # exact in binary64
    return [[arb(x) for x in row] for row in rows], [[arb(1) / N] * N] * N


def test_a_pair_the_screens_integers_read_below_the_greatest_is_kept():
    with ctx.workprec(200):
        Delta, Pi = differences_read_apart_by_the_integers()
        assert_centred_tau_holds_every_pairs_ends(Delta, Pi, True)
        assert (0, 1) in overlaps.difference_pairs(Delta, None)
