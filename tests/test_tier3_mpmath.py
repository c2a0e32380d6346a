"""Tier 3's enclosures (certify/search/tier3.py) against the definitions of docs/claims.md evaluated
directly in mpmath, independently of certify's formulas (test_tier3.py compares with arb running those
same formulas), on the inputs where binary64 is weakest: tokens 1e8 from the origin 1e-4 apart (the
Gram identity cancels sixteen digits), score gaps at exp's underflow limit (744 to 746) and far past
it, and at every k ln 2 and half-way point of exp's reduction over its subnormal results, subnormal and
1e150-sized tokens, coincident tokens (D = 0), all tokens equal but one at mixed magnitudes, a token that
attends only to itself, large query/key biases with a negative beta, V and a residual connection.

Every enclosure of P, D, D_out, D_PX, tau, a, v and gap must contain the mpmath value, computed at
enough digits for the cancellation each family has; and the tier must be tight where it claims to be
(the diameter of the far tokens to 1e-9 relative), or the comparison would be vacuous.
"""

from __future__ import annotations

import numpy as np
import oracle_batch
import pytest
from mpmath import mp, mpf

from certify import engine
from certify.claims import Claim, Inequality
from certify.core.arith.midrad64 import MidRad
from certify.search import tier3


def misses(batch: tier3.Batch, digits: int) -> list[str]:
    """Every enclosure of tier 3 on the batch that does not contain the mpmath value."""
    bad = []
    with np.errstate(all="ignore"):  # overflow and nan: enclosures that claim nothing
        view = tier3.layer_view(batch)
        P_lo, P_hi = view.step.P.lo, view.step.P.hi
        names = ["D", "D_out", "D_PX", "tau", "a", "gap"] + (["v"] if batch.V is not None else [])
        ends = {name: (np.broadcast_to(view.get(name).lo, (len(batch),)), np.broadcast_to(view.get(name).hi, (len(batch),)))
                for name in names}
    for c in range(len(batch)):
        with mp.workdps(digits):
            truth = oracle_batch.quantities(batch, c)
        n = batch.X.shape[1]
        pairs = [(f"P[{i},{j}]", truth["P"][i, j], P_lo[c, i, j], P_hi[c, i, j]) for i in range(n) for j in range(n)]
        pairs += [(name, truth[name], lo[c], hi[c]) for name, (lo, hi) in ends.items()]
        for name, value, lo, hi in pairs:
            # nan ends claim nothing; an end is a binary64 number, exact in mpmath
            if lo == lo and value < mpf(lo) or hi == hi and value > mpf(hi):
                bad.append(f"configuration {c}: {name} = {mp.nstr(value, 20)} outside [{lo!r}, {hi!r}]")
    return bad


def _far(rng, count: int, n: int, d: int, offset: float, spread: float):
    return offset * rng.standard_normal((count, 1, d)) + spread * rng.standard_normal((count, n, d))


def test_far_tokens_with_a_tiny_spread_are_enclosed_and_their_diameter_tightly():
    rng = np.random.default_rng(1)
    count, n, d = 12, 4, 3
    X = _far(rng, count, n, d, 1e8, 1e-4)
    # score gaps between tokens are about offset * spread * beta: from 1e-4 (near uniform) to 1e4 (saturated)
    beta = 10.0 ** np.linspace(-8, 0, count)
    batch = tier3.Batch(X=X, A=rng.standard_normal((count, d, d)), beta=beta, V=rng.standard_normal((count, d, d)),
                        residual=True)
    assert misses(batch, 120) == []
    D = tier3.layer_view(batch).get("D")
    assert np.all(D.hi / D.lo - 1 < 1e-9)  # the centred Gram: no cancellation of the 1e16-sized entries


def test_score_gaps_at_and_past_exps_underflow_limit():
    # two tokens on a line, A = 1: the gap of row i is x_i (x_0 - x_1), here 744 ... 746 and 1e4
    gaps = np.array([744.0, 744.5, 745.0, 745.1332, 745.2, 746.0, 1e4])
    X = np.ones((len(gaps), 2, 1))
    X[:, 1, 0] -= gaps
    batch = tier3.Batch(X=X, A=np.ones((len(gaps), 1, 1)))
    assert misses(batch, 4500) == []  # exp(-1e4) needs 4343 digits below the leading one


def test_subnormal_huge_and_coincident_tokens():
    rng = np.random.default_rng(2)
    count, n, d = 4, 3, 2
    cases = [  # (tokens, A scale, digits: the decades by which P differs from uniform, and more)
        (rng.standard_normal((count, n, d)) * 1e-310, 1.0, 1100),
        (rng.standard_normal((count, n, d)) * 1e150, 1e-300, 200),  # scores of size 1; A's squares underflow
        (np.repeat(rng.standard_normal((count, 1, d)), n, axis=1), 1.0, 60),  # D = D_out = 0
    ]
    for X, scale, digits in cases:
        batch = tier3.Batch(X=X, A=rng.standard_normal((count, d, d)) * scale)
        assert misses(batch, digits) == []


def test_self_attending_token_biases_and_a_negative_beta():
    rng = np.random.default_rng(3)
    count, n, d, d_k = 6, 4, 3, 2
    mask = np.tril(np.ones((n, n), dtype=bool))
    mask[-1] = False
    mask[-1, -1] = True  # the last token attends only to itself
    X = _far(rng, count, n, d, 1e4, 1e-2)
    batch = tier3.Batch(X=X, W_Q=rng.standard_normal((count, d, d_k)), W_K=rng.standard_normal((count, d, d_k)),
                        b_Q=rng.standard_normal((count, d_k)) * 1e6, b_K=rng.standard_normal((count, d_k)) * 1e6,
                        beta=-10.0 ** np.linspace(-10, -2, count), d_k=d_k, V=rng.standard_normal((count, d, d)),
                        mask=mask, residual=True)
    assert misses(batch, 150) == []


def test_planted_fault_enclosures_four_ulps_narrower_are_caught(monkeypatch):
    """The comparison is not vacuous: every enclosure's ends read four ulps inwards miss the exact value
    in each family."""
    def narrowed(end, towards):
        def moved(self):
            value = end(self)
            for _ in range(4):
                value = np.nextafter(value, towards)
            return value
        return property(moved)

    monkeypatch.setattr(MidRad, "lo", narrowed(MidRad.lo.fget, np.inf))
    monkeypatch.setattr(MidRad, "hi", narrowed(MidRad.hi.fget, -np.inf))
    for test in (test_far_tokens_with_a_tiny_spread_are_enclosed_and_their_diameter_tightly,
                 test_score_gaps_at_and_past_exps_underflow_limit, test_subnormal_huge_and_coincident_tokens,
                 test_self_attending_token_biases_and_a_negative_beta,
                 test_score_gaps_at_every_power_of_two_step_of_exp_and_half_way_between,
                 test_all_tokens_equal_but_one_at_mixed_magnitudes):
        with pytest.raises(AssertionError):
            test()


def test_the_sides_a_verdict_compares_bound_the_mpmath_values():
    """tier3.evaluate decides on the upper end of each left side and the lower end of each right side: those
    ends, not the midpoints, must lie beyond the exact values (a verdict read from the midpoints would call
    a bound violated by less than the radius true); and a "holds" is only where the ends say so."""
    rng = np.random.default_rng(7)
    count, n, d = 40, 4, 3
    batch = tier3.Batch(X=rng.standard_normal((count, n, d)), A=rng.standard_normal((count, d, d)),
                        beta=10.0 ** rng.uniform(-1, 0.5, count))
    verdicts, lhs_upper, rhs_lower = tier3.evaluate(engine.target(bound="D").claim, batch)
    for c in range(count):
        with mp.workdps(40):
            truth = oracle_batch.quantities(batch, c)
        assert truth["D_out"] <= mpf(lhs_upper[c]) and mpf(rhs_lower[c]) <= truth["D"], c
        assert (verdicts[c] == tier3.HOLDS) == (lhs_upper[c] <= rhs_lower[c]), c
    assert np.all(verdicts == tier3.HOLDS)  # D(PX) <= D: a convex combination of the tokens


def test_a_claim_holds_in_tier_3_only_where_every_inequality_holds():
    """A planted claim of two inequalities, one a theorem (D(PX) <= D), one false (D <= D(PX) fails wherever
    attention contracts): never "holds", in either order, while the theorem alone holds everywhere."""
    rng = np.random.default_rng(8)
    count, n, d = 30, 4, 3
    batch = tier3.Batch(X=rng.standard_normal((count, n, d)), A=rng.standard_normal((count, d, d)), beta=0.5)
    true, false = Inequality("D_out", "D"), Inequality("D", "D_out")

    def claim(*inequalities):
        return Claim(id="", statement="", source="", hypotheses="", applies=lambda case: None, inequalities=inequalities)
    assert np.all(tier3.decide(claim(true), batch) == tier3.HOLDS)
    for order in ((true, false), (false, true)):
        assert not np.any(tier3.decide(claim(*order), batch) == tier3.HOLDS), order


def test_score_gaps_at_every_power_of_two_step_of_exp_and_half_way_between():
    """exp64 reduces by k ln 2 (k = rint(x / ln 2)): the softmax's score gaps at (k + h) ln 2 for h in {0, 1/2},
    and the binary64 numbers next to them, where the reduction's k changes, over the subnormal results (k from
    -1080 to -1060) and the normal ones near 1."""
    gaps = []
    for k in list(range(-1080, -1060)) + list(range(-3, 4)):
        for h in (0.0, 0.5):
            centre = (k + h) * 0.6931471805599453
            gaps += [centre, np.nextafter(centre, -np.inf), np.nextafter(centre, np.inf)]
    gaps = np.array([g for g in gaps if g != 0])
    X = np.ones((len(gaps), 2, 1))
    X[:, 1, 0] -= gaps  # row 0's scores differ by gap (exp sees -|gap| after the row shift), row 1's by (1 - gap) gap
    assert misses(tier3.Batch(X=X, A=np.ones((len(gaps), 1, 1))), 400) == []


def test_all_tokens_equal_but_one_at_mixed_magnitudes():
    """Every token but the last coincides (D(PX) and tau come from one token's weight alone), with tokens and
    A at subnormal, tiny, unit and huge scales mixed in one batch."""
    rng = np.random.default_rng(4)
    count, n, d = 8, 4, 2
    X = rng.standard_normal((count, n, d)) * 10.0 ** rng.choice([-320, -300, 0, 150], (count, 1, 1))
    X[:, 1:-1] = X[:, :1]
    A = rng.standard_normal((count, d, d)) * 10.0 ** rng.choice([-300, -8, 0, 8], (count, 1, 1))
    assert misses(tier3.Batch(X=X, A=A, V=rng.standard_normal((count, d, d)), residual=True), 1100) == []
