"""The engine's refinement of its norm witnesses (certify.core.refine) is priced in its work estimate and not in the
checker's: the evaluations it prices are at least those the iteration takes, its price is not far below the CPU it
was measured to take, the bits it prices are at least those a check refines to, and under a work limit the ladder
stops a rung sooner for it."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, arb_mat, ctx

from certify import engine
from certify.core import config, expr, limits, refine, spectral
from certify.core.arith import BALL
from certify.engine import decide

WIDE = limits.Limits(work=1 << 62, memory=1 << 62)


def _evaluations(w: int, start: int, bits: int, monkeypatch) -> int:
    """The evaluations (_excess) the iteration takes refining a w x w witness from `start` bits (53: binary64's) to
    `bits`."""
    A = np.random.default_rng(w).standard_normal((w, w))
    with ctx.workprec(bits):
        M = arb_mat(A.tolist())
    witness = spectral.witness(A)
    if start > 53:
        with refine.refining(start), ctx.workprec(start):
            witness = refine.refined(M, witness)
    count = []
    excess = refine._excess
    monkeypatch.setattr(refine, "_excess", lambda *args: count.append(1) or excess(*args))
    with refine.refining(bits), ctx.workprec(bits):
        assert refine.refined(M, witness).bits == bits
    return len(count)


@pytest.mark.parametrize("w, start, bits", [(4, 53, 106), (16, 53, 424), (16, 53, 1696), (16, 848, 1696),
                                            (8, 2048, 4096), (16, 4096, 8192), (32, 212, 424)])
def test_the_priced_evaluations_are_at_least_those_the_iteration_takes(w, start, bits, monkeypatch):
    """From binary64, 1 + log2(bits / 53) evaluations (3 to 106 bits, 7 to 1696); from half the bits, the next rung
    of the ladder, 3: each 3 w^3 multiply-adds and a step of w^3 but the last."""
    taken = _evaluations(w, start, bits, monkeypatch)
    priced = 1 + (bits // max(start, 53)).bit_length()
    assert 2 <= taken <= priced, (taken, priced)
    arithmetic = limits.REFINE_FULL * (w * w * w + (4 * priced - 1) * w ** 3) // limits.PRODUCTS
    assert limits.refine_norm(w, w, bits, start) >= arithmetic * limits.cost(bits + refine.SPLIT_BITS)


# (w, h, from bits, to bits, CPU seconds of one refinement), measured on one core (python-flint 0.9)
MEASURED = [(64, 64, 53, 106, 0.115), (64, 64, 848, 1696, 1.12), (64, 64, 53, 1696, 2.54), (64, 64, 2048, 4096, 3.58),
            (128, 128, 424, 848, 1.73), (32, 32, 4000, 8000, 1.30), (32, 384, 848, 1696, 0.149),
            (64, 256, 2048, 4096, 3.93), (16, 16, 8000, 16000, 0.657), (4, 4, 8000, 16000, 0.0089)]


@pytest.mark.parametrize("w, h, start, bits, seconds", MEASURED)
def test_a_refinement_is_priced_near_the_cpu_it_took(w, h, start, bits, seconds):
    """At the estimate's 10^7 units a second (README, Limits), not below half its measured CPU (0.6 to 4.7 times it,
    1.5 the median, over w = 4 to 128 and 106 to 16000 bits): unpriced, the engine's evaluation of a bound on a
    64 x 64 layer at 1696 bits, 0.82 s of its 1.26 s the refinement, was priced 0.43 * 10^7 units a second."""
    assert limits.refine_norm(w, h, bits, start) >= seconds * 1e7 / 2


def test_a_layers_refinement_is_the_engines_alone_and_every_witness_of_it():
    """work() adds every layer's refinement (its head's, V's and an FFN's two weights') to the evaluation and the
    checker's estimate, which certify_checker.limits prices without it: the checker does not refine."""
    for n, d, layers, hidden, thin, value in [(64, 64, 1, 0, 0, False), (64, 64, 3, 256, 0, True),
                                              (128, 384, 2, 0, 32, False), (8, 4, 1, 2, 0, False)]:
        plain = limits.work(n, d, layers, hidden, 1696, thin, value=value)
        refined = limits.work(n, d, layers, hidden, 1696, thin, value=value, refining=(1696, 848))
        one = limits.refine_work(d, hidden, thin, value, 1696, 848)
        assert refined == plain + layers * one
        norms = [(thin, thin) if thin else (d, d)] + [(d, d)] * value + [(min(d, hidden), max(d, hidden))] * 2 * bool(
            hidden)
        assert one == sum(limits.refine_norm(w, h, 1696, 848) for w, h in norms) > 0
    # a rung that refines nothing: below REFINE_FROM, or no further than the witnesses are already
    for bits, start in ((0, 0), (53, 0), (1696, 1696), (848, 1696)):
        assert limits.refine_work(64, 256, 0, True, bits, start) == 0


def test_a_norm_dominated_layer_at_1696_bits_is_priced_its_refinement_more():
    """One 64 x 64 layer at 1696 bits, refined from 848: the refinement adds 1.12 s measured, about a quarter of the
    estimate of everything else (the evaluation and the checker's confirmation with its recomputations)."""
    plain = limits.work(64, 64, 1, 0, 1696)
    refining = decide.refinement(64, 1, 0, 0, 1696, 53, limits.DEFAULT)
    assert refining == (1696, 848)
    assert limits.work(64, 64, 1, 0, 1696, refining=refining) >= plain + 1.12e7 and 1.12e7 > plain / 6


def test_the_plan_prices_the_bits_the_share_allows_from_the_rung_below():
    """None on the first rung (no witness yet), from binary64 on the second, from the rung below's after; the bits
    of the share of one witness a layer (certificate.witness_bits): a 384 x 384 witness is refined to none at the
    default limits, a 64 x 64 one to at most 1696 bits, and 64 layers' of 64 x 64 to none."""
    assert decide.refinement(64, 1, 0, 0, 53, 53, limits.DEFAULT) == (0, 0)
    assert decide.refinement(64, 1, 0, 0, 106, 53, limits.DEFAULT) == (106, 0)
    assert decide.refinement(64, 1, 0, 0, 4000, 4000, limits.DEFAULT) == (0, 0)
    assert decide.refinement(64, 1, 0, 0, 8000, 4000, limits.DEFAULT)[1] == 0  # from binary64: none at 4000
    assert decide.refinement(64, 1, 0, 0, 3392, 53, limits.DEFAULT) == (1696, 1696)
    assert decide.refinement(384, 1, 0, 0, 212, 53, limits.DEFAULT)[0] < refine.REFINE_FROM
    assert decide.refinement(384, 1, 0, 32, 212, 53, limits.DEFAULT) == (212, 106)  # a thin head's 32 x 32
    assert decide.refinement(64, 64, 0, 0, 424, 53, limits.DEFAULT)[0] < refine.REFINE_FROM


def _tight(data: dict, norm: str, r: str = "1e-300") -> str:
    """C * norm with C = D_out / norm (1 + r) from the engine at 2048 bits, its witness refined to them."""
    with ctx.workprec(2048), refine.refining(2048):
        comparison = decide.evaluate(BALL, config.load(data, WIDE), decide.bound_claim(expr.parse(norm)), {})[1][0]
        return f"{(comparison.lhs / comparison.rhs * (1 + arb(r))).mid().str(400, radius=False)}*{norm}"


def test_a_check_refines_to_no_more_bits_than_its_plan_priced(monkeypatch):
    """A bound on an 8 x 4 layer 10^-300 from its truth climbs to 1696 bits, its witness refined on each rung from
    106 bits: to bits no higher, and from bits no lower, than the plan priced on each rung."""
    rng = np.random.default_rng([1, 8, 4])
    data = {"X": rng.standard_normal((8, 4)).tolist(), "A": (rng.standard_normal((4, 4)) / 2).tolist()}
    real = {}
    bits_of = decide._refine_bits
    monkeypatch.setattr(decide, "_refine_bits", lambda p, w, l: real.setdefault(p, bits_of(p, w, l)))
    result = engine.check(data, bound=_tight(data, "a"))
    assert result.verdict == engine.HOLDS and result.precision == 1696, result
    assert sorted(real) == [53, 106, 212, 424, 848, 1696] and real[53] == 0
    previous = 53
    for precision, bits in sorted(real.items())[1:]:
        priced, start = decide.refinement(4, 1, 0, 0, precision, 53, limits.DEFAULT)
        assert bits == priced and start <= max(previous, 53) and bits > previous
        previous = bits


def test_under_a_tight_work_limit_the_ladder_stops_a_rung_sooner_for_the_refinement(monkeypatch):
    """A 16 x 64 layer with an FFN of 256 under a work limit that admits 3392 bits without the refinement: with it
    (its three witnesses refined from 1696 bits), 1696 bits and the reason; without the term the ladder would climb a
    rung higher.  (A layer without an FFN at such a limit refines nothing: the witnesses' texts may take 1/16 of it,
    which leaves a 64 x 64 one no more bits than the rung below's.)"""
    sizes = (16, 64, 1, 256)
    tight = limits.Limits(work=limits.work(*sizes, 3392))
    assert decide.refinement(*sizes[1:], 0, 3392, 53, tight) == (3392, 1696)
    decide._plan.cache_clear()
    plan = decide._plan(sizes, False, 53, 1 << 16, tight)
    assert plan.cap == 1696 and "work" in plan.stopped and "at 3392 bits" in plan.stopped
    decide._plan.cache_clear()
    monkeypatch.setattr(decide, "refinement", lambda *args: (0, 0))
    try:
        assert decide._plan(sizes, False, 53, 1 << 16, tight).cap == 3392
    finally:
        decide._plan.cache_clear()
