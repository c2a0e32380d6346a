"""Tier 3's verdicts at near-ties of every claim it covers, against the claims' definitions evaluated in mpmath at
300 digits (independently of certify's formulas; test_tier3.py compares tier 3 with arb, which shares them).

Each claim lhs <= rhs is scaled to lhs <= c rhs, c in (0, 1) or slightly above 1, so that it can fail; the tokens of
every configuration are scaled by the factor where the two sides meet (a bisection in mpmath down to the binary64 tokens
themselves), leaving the configurations where they do meet within a few ulps of a tie, on either side of it.
Tier 3 must say "holds" nowhere mpmath finds the scaled claim violated, and must still decide some (the comparison
would be vacuous otherwise); enclosures read two ulps narrower must be caught.

The mpmath quantities are oracle_batch's (tau through each pair of rows' heaviest column, P X from the tokens less
one of them).
"""

from __future__ import annotations

import functools

import numpy as np
import oracle_batch
import pytest
from mpmath import mp, mpf

from certify import claims
from certify.claims import Claim, Inequality
from certify.core.arith.midrad64 import MidRad
from certify.search import tier3

DPS = 300
FORMS = {"collapse.global": {}, "collapse.tanh": {}, "collapse.cubic": {}, "collapse.tau": {}, "init.scaling": {},
         "collapse.dobrushin": {"mask": True}, "value.expansive": {"V": True},
         "residual.two_sided": {"V": True, "residual": True, "mask": True},
         "residual.two_sided.global": {"V": True, "residual": True}, "ffn.lipschitz": {"ffn": True}}
# the sides of each claim's inequalities from the quantities (omg = 1 - exp(-a D^2) through expm1)
SIDES = {
    "collapse.global": [("D_out", lambda q: q["omg"] * q["D"])],
    "collapse.tanh": [("D_out", lambda q: mp.tanh(q["a"] * q["D"] ** 2 / 4) * q["D"])],
    "collapse.cubic": [("D_out", lambda q: q["a"] * q["D"] ** 3)],
    "collapse.tau": [("tau", lambda q: q["omg"])],
    "init.scaling": [("D_out", lambda q: q["omg"] * q["D"])],
    "collapse.dobrushin": [("D_PX", lambda q: q["tau"] * q["D"])],
    "value.expansive": [("D_out", lambda q: q["v"] * q["omg"] * q["D"]), ("D_out", lambda q: q["v"] * q["a"] * q["D"] ** 3)],
    "residual.two_sided": [(lambda q: (1 - q["v"] * q["tau"]) * q["D"], lambda q: q["D_out"]),
                           ("D_out", lambda q: (1 + q["v"] * q["tau"]) * q["D"])],
    "residual.two_sided.global": [(lambda q: (1 - q["v"] * q["omg"]) * q["D"], lambda q: q["D_out"]),
                                  ("D_out", lambda q: (1 + q["v"] * q["omg"]) * q["D"])],
    "ffn.lipschitz": [("D_out", lambda q: q["L"] * q["omg"] * q["D"]), ("D_out", lambda q: q["L"] * q["a"] * q["D"] ** 3)],
}


def _side(side, q):
    return q[side] if isinstance(side, str) else side(q)


def margin(claim_id: str, c_text: str, q: dict) -> mpf:
    """The smallest c rhs - lhs over the claim's inequalities."""
    return min(mpf(c_text) * _side(rhs, q) - _side(lhs, q) for lhs, rhs in SIDES[claim_id])


def scaled_claim(claim_id: str, c_text: str) -> Claim:
    """The claim with every right side multiplied by c."""
    claim = claims.get(claim_id)
    return Claim(id="", statement="", source="", hypotheses="", applies=lambda case: None,
                 inequalities=tuple(Inequality(q.lhs, f"{c_text}*({q.rhs})") for q in claim.inequalities))


def form_batch(claim_id: str, count: int, seed: int) -> tier3.Batch:
    """count random configurations of the claim's form: 3 tokens in 2 dimensions, A or a thin head with biases and
    a temperature, a causal mask where the claim allows one."""
    rng = np.random.default_rng(seed)
    form, n, d = FORMS[claim_id], 3, 2
    parts = {"X": rng.standard_normal((count, n, d)), "beta": 10.0 ** rng.uniform(-1, 1, count)}
    if seed % 2:
        parts.update(W_Q=rng.standard_normal((count, d, 1)), W_K=rng.standard_normal((count, d, 1)), d_k=1,
                     b_Q=rng.standard_normal((count, 1)), b_K=rng.standard_normal((count, 1)))
    else:
        parts["A"] = rng.standard_normal((count, d, d))
    if form.get("V"):
        parts["V"] = rng.standard_normal((count, d, d))
    if form.get("mask"):
        parts["mask"] = np.tril(np.ones((n, n), dtype=bool))
    if form.get("ffn"):
        parts["ffn"] = tier3.FeedForwardBatch(W1=rng.standard_normal((count, 4, d)), b1=rng.standard_normal((count, 4)),
                                              W2=rng.standard_normal((count, d, 4)), b2=rng.standard_normal((count, d)),
                                              residual=bool(seed % 4 == 1))
    return tier3.Batch(residual=bool(form.get("residual")), **parts)


def tied(batch: tier3.Batch, claim_id: str, c_text: str) -> tier3.Batch:
    """The batch with each configuration's tokens scaled to where margin() changes sign between scales 10^-3 and
    10^3, located to the binary64 tokens themselves by bisection in mpmath at 30 digits (configurations with no
    change keep their tokens)."""
    X = batch.X.copy()
    with mp.workdps(30):
        for c in range(len(batch)):
            def sign(exponent, c=c):
                return margin(claim_id, c_text, oracle_batch.quantities(batch, c, batch.X[c] * 10.0 ** exponent)) > 0
            grid = np.linspace(-3, 3, 13)
            signs = [sign(e) for e in grid]
            change = [k for k in range(len(grid) - 1) if signs[k] != signs[k + 1]]
            if not change:
                continue
            lo, hi = grid[change[0]], grid[change[0] + 1]
            for _ in range(60):
                middle = (lo + hi) / 2
                if middle in (lo, hi) or np.array_equal(batch.X[c] * 10.0 ** lo, batch.X[c] * 10.0 ** hi):
                    break
                lo, hi = (middle, hi) if sign(middle) == signs[change[0]] else (lo, middle)
            X[c] = batch.X[c] * 10.0 ** (lo if c % 2 else hi)  # either side of the tie
    batch.X = X
    return batch


# c below the largest lhs / rhs the claim's form reaches (a theorem's ratio is at most 1; cubic's and the FFN's
# stay far below it), so that the scaled claim fails at some scale of the tokens
CASES = [("collapse.global", "0.9"), ("collapse.tanh", "0.9"), ("collapse.cubic", "0.1"), ("collapse.tau", "0.5"),
         ("init.scaling", "0.9"), ("collapse.dobrushin", "0.9"), ("value.expansive", "0.5"),
         ("residual.two_sided", "0.9"), ("residual.two_sided.global", "0.9"), ("ffn.lipschitz", "0.3")]


@functools.cache
def ties(claim_id: str, c_text: str, count: int = 8) -> tuple[tier3.Batch, list]:
    """The tied batch of the case and mpmath's margin (and D) of each configuration at DPS digits."""
    batch = tied(form_batch(claim_id, count, CASES.index((claim_id, c_text))), claim_id, c_text)
    with mp.workdps(DPS):
        quantities = (oracle_batch.quantities(batch, c) for c in range(count))
        return batch, [(margin(claim_id, c_text, q), q["D"]) for q in quantities]


def contradictions(claim_id: str, c_text: str) -> tuple[list[str], int, int]:
    """(the configurations where tier 3 holds and mpmath finds the scaled claim violated, how many tier 3 decided,
    how many lie within 10^-13 of a tie)."""
    batch, margins = ties(claim_id, c_text)
    verdicts = tier3.decide(scaled_claim(claim_id, c_text), batch)
    bad, close = [], 0
    with mp.workdps(DPS):
        for c, (gap, D) in enumerate(margins):
            close += abs(gap) <= mpf(10) ** -13 * D
            if verdicts[c] == tier3.HOLDS and gap < 0:
                bad.append(f"{claim_id} c={c_text} configuration {c}: holds, mpmath margin {mp.nstr(gap, 5)}")
    return bad, int(np.sum(verdicts == tier3.HOLDS)), close


@pytest.mark.parametrize("claim_id, c_text", CASES)
def test_tier_3_holds_only_where_mpmath_finds_the_scaled_claim_true(claim_id, c_text):
    bad, _, close = contradictions(claim_id, c_text)
    assert bad == []
    assert close >= 1  # the bisection reached a tie


def test_tier_3_decides_near_ties_on_the_true_side():
    """Not vacuous: tier 3 decides a share of the configurations (those away from the ties where the scaled claim
    holds; the ties themselves, a few ulps off, are mostly left to arb)."""
    decided = sum(contradictions(claim_id, c_text)[1] for claim_id, c_text in CASES)
    assert decided >= len(CASES)


def test_planted_fault_verdicts_read_from_the_midpoints_are_caught(monkeypatch):
    """Enclosures read as their midpoints (a verdict without the radii) say "holds" at some tie mpmath finds violated."""
    monkeypatch.setattr(MidRad, "lo", property(lambda self: self.mid))
    monkeypatch.setattr(MidRad, "hi", property(lambda self: self.mid))
    caught = [case for case in CASES if contradictions(*case)[0]]
    assert len(caught) >= len(CASES) // 2, caught
