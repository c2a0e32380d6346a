"""The checker's own binary64 screen of the Dobrushin coefficient's pairs (certify_checker.overlaps): tau over the
pairs it keeps holds the exact value and has the ends of tau over every pair (up to arb's rounding of ends), on the
matrices of test_overlaps."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from flint import arb, ctx, fmpq

from certify_checker import forward, overlaps
from test_overlaps import (CASES, N, ball_matrix, case_rows, crossed_radii, edge_balls, near_ties,
                           screen_agrees, stochastic, two_far_rows)


def every_pair(monkeypatch):
    monkeypatch.setattr(overlaps, "candidate_pairs", lambda P: list(itertools.combinations(range(len(P)), 2)))


def screened_agrees(P: list, tau, monkeypatch) -> None:
    """test_overlaps.screen_agrees for the checker's tau (forward.dobrushin), its screen switched off."""
    screen_agrees(forward.dobrushin, lambda: every_pair(monkeypatch), P, tau)


@pytest.mark.parametrize("precision", [53, 64, 200])
@pytest.mark.parametrize("radius", [0, 2.0 ** -60, 2.0 ** -20])
@pytest.mark.parametrize("case", CASES)
def test_the_checkers_screened_tau_has_the_ends_over_every_pair_and_holds_the_exact_value(case, radius, precision,
                                                                                    monkeypatch):
    rows, tau = case_rows(case)
    with ctx.workprec(precision):
        screened_agrees(ball_matrix(rows, radius).tolist(), tau, monkeypatch)


def test_the_checkers_screen_rules_out_what_binary64_separates_and_keeps_what_it_cannot():
    rng = np.random.default_rng(3)
    every = N * (N - 1) // 2
    with ctx.workprec(64):
        far = overlaps.candidate_pairs(ball_matrix(two_far_rows(rng, N)).tolist())
        ties = overlaps.candidate_pairs(ball_matrix(near_ties(rng, N)).tolist())
        wide = overlaps.candidate_pairs(ball_matrix(two_far_rows(rng, N), 0.5).tolist())
    assert far == [(0, 1)]
    assert {(0, 1), (2, 3), (0, 3), (1, 2)} <= set(ties)
    assert len(wide) == every


@pytest.mark.parametrize("entry", [arb("inf"), arb("nan"), arb(0, float("inf")), arb(10) ** 400])
def test_a_matrix_the_checkers_screen_cannot_bound_keeps_every_pair(entry):
    P = ball_matrix(stochastic(np.random.default_rng(5), N, 1.0)).tolist()
    P[3][4] = entry
    assert len(overlaps.candidate_pairs(P)) == N * (N - 1) // 2


def test_where_binary64_does_not_round_to_nearest_the_checker_keeps_every_pair(monkeypatch):
    monkeypatch.setattr(overlaps, "binary64_rounds_to_nearest", lambda: False)
    P = ball_matrix(two_far_rows(np.random.default_rng(1), N)).tolist()
    assert len(overlaps.candidate_pairs(P)) == N * (N - 1) // 2


@pytest.mark.parametrize("precision", [20, 53, 1100])
def test_the_checkers_screen_of_balls_with_the_exact_entry_at_an_end_agrees_with_every_pair(precision, monkeypatch):
    rows, tau = case_rows("sharp softmax rows")
    with ctx.workprec(precision):
        P = edge_balls(rows, precision).tolist()
        kept = len(overlaps.candidate_pairs(P))
        screened_agrees(P, tau, monkeypatch)
    assert precision < 53 or kept < N * (N - 1) // 2


@pytest.mark.parametrize("precision", [53, 1000])
def test_an_overlap_balls_radius_is_within_the_checkers_bound(precision):
    """As test_overlaps': two rows' radii summed in arb exceed the radii's sum by arb's 30-bit rounding of radii."""
    with ctx.workprec(precision):
        P, E, size = crossed_radii(N)
        P = P.tolist()
        W = overlaps.radius_bound(arb(fmpq(E.numerator, E.denominator)), arb(fmpq(size.numerator, size.denominator)), N,
                                  precision).lower()
        for i, k in [(0, 1), (2, 7), (N - 2, N - 1)]:
            overlap = sum((p.min(q) for p, q in zip(P[i], P[k])), arb(0))  # as forward.dobrushin sums it
            assert overlap.rad() <= W, (i, k, overlap, W)


def test_this_machines_binary64_rounds_to_nearest():
    """Else the screen is off everywhere, silently: the probe itself must pass where binary64 behaves."""
    assert overlaps.binary64_rounds_to_nearest()
