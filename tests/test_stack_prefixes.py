"""A stack claim is about D_t for every t <= T (docs/claims.md: collapse.trajectory, value.bounded), so
the engine and the checker compare it after every layer, each in its own code: a bound that fails at
an intermediate layer and holds again at the last is violated, and a certificate that lists only
the last layer's comparison, or a wrong layer, is rejected."""

from __future__ import annotations

import copy

import pytest
from flint import arb

import certify_checker as checker
from certify import engine
from certify.claims import Claim, Inequality
from certify.suite import thesis_cases as thesis
from certify_checker import inequality as ineq

# A claim-like composed bound D_t <= a_t ... a_1 D_0 (each layer's rhs a*D with D the running bound).
PLANTED = "planted.stack"
PLANTED_RHS = "a*D"

# Two pure-attention layers on two tokens 20 apart: layer 0 (a = 1/10, a D^2 = 40) barely moves them,
# D_1 ~ 20 > a_0 D_0 = 2; layer 1 (a = 100) lifts the composed bound to 200 >= D_2 (P X never widens).
STACK = {"X": [[-10, 0], [10, 0]],
         "layers": [{"A": [["1/10", 0], [0, "1/10"]]}, {"A": [[100, 0], [0, 100]]}]}


@pytest.fixture
def planted(monkeypatch):
    """The planted claim in the engine (as a target) and in the checker's own table, stack scope in both."""
    monkeypatch.setitem(ineq.CLAIMS, PLANTED, ("stack", ineq.CLAIMS["collapse.trajectory"][1],
                                               [("D_out", PLANTED_RHS)]))
    claim = Claim(id=PLANTED, statement="D_t <= a_t ... a_1 D_0", inequalities=(Inequality("D_out", PLANTED_RHS),),
                  source="test", hypotheses="pure attention", applies=lambda case: None, scope="stack")
    return engine.Target(claim)


def test_a_bound_failing_at_an_intermediate_layer_is_violated_though_it_holds_at_the_last(planted):
    result = engine.check(STACK, goal=planted)
    assert [c.layer for c in result.comparisons] == [0, 1]
    assert [c.outcome for c in result.comparisons] == [False, True]  # the last layer alone would say holds
    assert result.verdict == engine.VIOLATED
    cert = result.certificate
    assert [(e["layer"], e["holds"]) for e in cert["values"]["comparisons"]] == [(0, False), (1, True)]
    assert checker.verify(cert).ok


def test_a_holds_forged_from_the_last_layer_alone_is_rejected(planted):
    cert = copy.deepcopy(engine.check(STACK, goal=planted).certificate)
    last = cert["values"]["comparisons"][-1]
    cert["values"]["comparisons"] = [last]
    cert["values"]["bound"] = last["rhs"]
    cert["verdict"] = "holds"
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "finds violated" in confirmation.message


@pytest.fixture(scope="module")
def honest():
    """value.bounded and collapse.trajectory certificates (holds) of three-layer stacks."""
    return {claim: engine.check(cfg, claim=claim).certificate
            for claim, cfg in (("value.bounded", thesis.jordan_stack(3)),
                               ("collapse.trajectory", {**thesis.jordan_stack(3), "layers": [
                                   {k: v for k, v in layer.items() if k != "V"}
                                   for layer in thesis.jordan_stack(3)["layers"]]}))}


@pytest.mark.parametrize("claim", ["value.bounded", "collapse.trajectory"])
def test_an_honest_stack_certificate_lists_every_layer(honest, claim):
    cert = honest[claim]
    assert cert["verdict"] == "holds"
    assert [e["layer"] for e in cert["values"]["comparisons"]] == [0, 1, 2]
    assert all(e["rhs_expr"].startswith("composed ") for e in cert["values"]["comparisons"])
    assert checker.verify(cert).ok


def only_the_last(cert):
    cert["values"]["comparisons"] = cert["values"]["comparisons"][-1:]


def last_as_whole_stack(cert):
    """The form that compared the last layer only, with no layer."""
    only_the_last(cert)
    cert["values"]["comparisons"][0]["layer"] = None


def intermediate_dropped(cert):
    del cert["values"]["comparisons"][1]


def layers_swapped(cert):
    entries = cert["values"]["comparisons"]
    entries[0]["layer"], entries[1]["layer"] = entries[1]["layer"], entries[0]["layer"]


def layer_shifted(cert):
    for entry in cert["values"]["comparisons"]:
        entry["layer"] += 1


def layer_as_bool(cert):
    cert["values"]["comparisons"][1]["layer"] = True  # == 1 in Python, but not a layer index


def intermediate_rhs_altered(cert):
    """The composed bound after the first layer stated 0.1% larger."""
    entry = cert["values"]["comparisons"][0]
    entry["rhs"] = (arb(entry["rhs"]) * arb("1.001")).str(30, radius=True)


@pytest.mark.parametrize("claim", ["value.bounded", "collapse.trajectory"])
@pytest.mark.parametrize("edit", [only_the_last, last_as_whole_stack, intermediate_dropped, layers_swapped,
                                  layer_shifted, layer_as_bool, intermediate_rhs_altered])
def test_a_stack_certificate_without_its_intermediate_comparisons_is_rejected(honest, claim, edit):
    cert = copy.deepcopy(honest[claim])
    edit(cert)
    confirmation = checker.verify(cert)
    assert not confirmation.ok, edit.__name__
