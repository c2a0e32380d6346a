"""What check() and the checker remember between checks (the plan of limits and precisions, a bound's
canonical form, a case's sizes) changes no verdict and no refusal, however often it is asked."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

import certify_checker
from certify import engine
from certify.core import config
from certify.core.limits import DEFAULT, work
from certify.engine import decide
from certify.errors import BadInput
from certify_checker import bound as checker_bound

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "examples/layer.json"


def test_bad_targets_are_refused_every_time():
    assert engine.check(LAYER, claim="collapse.global").verdict == "holds"
    for _ in range(2):
        with pytest.raises(BadInput, match="unknown claim 'collapse.globl'"):
            engine.check(LAYER, claim="collapse.globl")
    with pytest.raises(BadInput, match="either --claim or --bound"):
        engine.check(LAYER, claim="collapse.global", bound="D")
    with pytest.raises(BadInput):
        engine.check(LAYER, bound=["D"])


def test_a_bound_checked_again_gives_the_same_verdict():
    for text, verdict in (("0.5*D", "holds"), ("0.01*D", "violated"), ("0.5*D", "holds"), ("0.01*D", "violated")):
        result = engine.check(LAYER, bound=text)
        assert result.verdict == verdict and result.target == f"bound: {text}" and result.certificate["bound"] == text


def test_the_plan_refuses_at_the_start_and_stops_at_the_cap():
    tight = DEFAULT.__class__(**{**vars(DEFAULT), "work": 10})
    with pytest.raises(BadInput, match="refused before starting"):
        engine.check(LAYER, limits=tight)
    case = config.load(LAYER)
    plan = decide._plan(case.sizes(), False, 53, 1 << 15, DEFAULT)
    assert plan.refused is None and plan.cap == 1 << 15 and plan.stopped is None  # --max-prec alone goes higher
    # at the defaults --max-prec and the precision limit are both 65536: --max-prec alone would go no higher
    plan = decide._plan(case.sizes(), False, 53, 1 << 16, DEFAULT)
    assert plan.refused is None and plan.cap == 1 << 16 and "raise --max-prec with --limit precision" in plan.stopped
    # the precision limit caps the ladder as memory and work do: its last rung is the limit itself
    below = decide._plan(case.sizes(), False, 53, 1 << 16, DEFAULT.__class__(**{**vars(DEFAULT), "precision": 1000}))
    assert below.refused is None and below.cap == 1000 and "precision limit is 1000 bits" in below.stopped
    # a work limit that lets 53 bits through but not 106: undecided cases stop there, with the reason
    limit = DEFAULT.__class__(**{**vars(DEFAULT), "work": work(*case.sizes(), 53)})
    capped = decide._plan(case.sizes(), False, 53, 1 << 16, limit)
    assert capped.refused is None and capped.cap == 53 and "work" in capped.stopped


def test_an_equality_at_the_default_caps_asks_for_both_to_be_raised():
    """At the defaults (--max-prec 65536, --limit precision 65536) an equality said "raise --max-prec", which alone
    stops at the same 65536 bits, saying then that the precision limit does."""
    result = engine.check(ROOT / "examples/saturated.json", claim="collapse.tanh")
    assert result.verdict == "undecided" and result.precision == 1 << 16
    assert "not raised beyond 65536 bits" in result.reason and "--limit precision=N" in result.reason
    assert not result.reason.endswith("(raise --max-prec)")


def test_check_states_no_precision_its_limits_refuse_and_says_so(tmp_path):
    """--limit precision=1000 was raised to --max-prec: check decided at 1696 bits and wrote a certificate that
    verify at the same limits refused.  Now the ladder stops at the limit, and the undecided reason names it."""
    saturated = ROOT / "examples/saturated.json"  # decided at 1696 bits
    at_limit = DEFAULT.__class__(**{**vars(DEFAULT), "precision": 1000})
    result = engine.check(saturated, limits=at_limit)
    assert result.verdict == "undecided" and result.precision == 1000
    assert "not raised beyond 1000 bits: the precision limit is 1000 bits" in result.reason
    assert "raise --max-prec" not in result.reason
    raised = engine.check(saturated, limits=DEFAULT.__class__(**{**vars(DEFAULT), "precision": 2000}))
    assert raised.verdict == "holds" and raised.precision == 1696
    assert certify_checker.verify(raised.certificate, certify_checker.Limits(**{**vars(DEFAULT), "precision": 2000})).ok
    with pytest.raises(BadInput, match="precision limit is 40 bits"):
        engine.check(saturated, limits=DEFAULT.__class__(**{**vars(DEFAULT), "precision": 40}))


def test_a_case_counts_its_sizes_once_and_stays_equal_and_picklable():
    case = config.load(LAYER)
    assert case.sizes() is case.sizes() and case.sizes() == (6, 3, 1, 0)
    assert pickle.loads(pickle.dumps(case)) == case == config.load(LAYER)


def test_a_bound_read_once_is_refused_each_time_it_is_not_canonical():
    cert = engine.check(LAYER, bound="0.5*D").certificate
    assert certify_checker.verify(cert).ok
    for edited, reason in (("0.5 * D", "canonical form"), (["0.5*D"], "not a text of 1 to 2000"),
                           ("0.5*D # x", "comment")):
        forged = copy.deepcopy(cert)
        forged["bound"] = edited
        forged["inputs_sha256"] = certify_checker.inequality.digest(forged)
        for _ in range(2):  # the second reading comes from what was remembered
            confirmation = certify_checker.verify(forged)
            assert not confirmation.ok and reason in confirmation.message
    assert checker_bound.canonical("(D)*(2)") == "D*2"
    with pytest.raises(ValueError):
        checker_bound.canonical("")
