"""The engine decides where float64 cannot, never calls a false bound true, and is honest
about what it cannot decide."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mpmath import mp

from certify import engine
from certify.suite import cases
import certify_checker as checker
from certify.errors import BadInput, CertainlyUndefined

import oracle


def test_saturated_global_bound_holds_where_float64_sees_equality():
    cfg = cases.antipodal(500.0)  # a D^2 = 2000
    result = engine.check(cfg)
    assert result.verdict == engine.HOLDS
    screen = result.screen[0]
    assert float(screen.rhs) == float(screen.lhs) == 2.0  # float64: the bound is exactly D, and so is D(PX)
    layer = result.certificate["values"]["layers"][0]
    assert "e-869" in layer["gap"]  # exp(-2000) is kept itself, far below float64's range
    assert result.precision > 1000
    assert checker.verify(result.certificate).ok


@pytest.mark.parametrize("divisor, expected", [(8, engine.VIOLATED), (2, engine.HOLDS), (1, engine.HOLDS)])
def test_saturated_user_bounds_match_the_closed_form(divisor, expected):
    """Two antipodal tokens: D(PX) / D = tanh(a D^2 / 4) exactly; compare with mpmath at 2000 digits."""
    cfg = cases.antipodal(500.0)
    result = engine.check(cfg, bound=f"(1-exp(-a*D**2/{divisor}))*D")
    with mp.workdps(2000):
        ratio = mp.tanh(mp.mpf(2000) / 4)
        truth = engine.HOLDS if ratio < 1 - mp.exp(-mp.mpf(2000) / divisor) else engine.VIOLATED
    assert result.verdict == truth == expected
    assert checker.verify(result.certificate).ok


def test_near_permutation_is_certified_correctly():
    cfg = cases.near_permutation(strength=60.0)
    result = engine.check(cfg)
    assert result.verdict == engine.HOLDS
    expected = oracle.quantities(cfg)[0]
    c = result.comparisons[0]
    with mp.workdps(60):
        assert c.lhs.contains(c.lhs.mid()) and abs(float(c.lhs.mid()) - float(expected["D_out"])) < 1e-12


def test_float64_underflow_case_decided_both_ways():
    """exp(-a D^2) underflows to 0 in float64 for a D^2 > 745; ball arithmetic still separates
    D(PX) from the bound, and a bound tighter than the truth by a hair is caught."""
    cfg = cases.antipodal(250.0)  # a D^2 = 1000: D(PX)/D = tanh(250) = 1 - 2e^{-500} + ...
    assert np.exp(-1000.0) == 0.0
    assert engine.check(cfg, bound="(1 - 2*exp(-a*D**2/2))*D").verdict == engine.VIOLATED  # tanh > 1 - 2e^{-2y}
    assert engine.check(cfg, bound="(1 - 2*exp(-a*D**2/2) + 3*exp(-a*D**2))*D").verdict == engine.HOLDS


def test_planted_false_bound_is_violated_and_its_certificate_verifies(tmp_path):
    cfg = cases.gaussian(6, 3, seed=11)
    result = engine.check(cfg, bound="0.5*a*D**3*exp(-a*D**2)")
    assert result.verdict == engine.VIOLATED
    assert checker.verify(result.certificate).ok
    assert result.exit_code == 1


def test_exact_equality_is_undecided_and_says_so():
    result = engine.check(cases.two_tokens(), claim="collapse.dobrushin", max_prec=512)
    assert result.verdict == engine.UNDECIDED
    assert result.precision == 512
    assert "equality" in result.reason
    assert result.certificate is None and result.exit_code == 3


def test_precision_escalates_until_decided():
    """A margin of about e^{-500}: undecided at 53 bits, decided at a higher precision."""
    cfg = cases.antipodal(250.0)
    low = engine.check(cfg, bound="(1 - exp(-a*D**2))*D", max_prec=53)
    high = engine.check(cfg, bound="(1 - exp(-a*D**2))*D")
    assert low.verdict == engine.UNDECIDED and low.precision == 53
    assert high.verdict == engine.HOLDS and high.precision > 53


def test_escalation_follows_a_guess_raised_to_progress_and_clipped_to_the_cap():
    """A caller may name the next precision from what the last attempt found (certify trajectory predicts
    it from the bits lost per layer); a guess too low is raised so the cap is still reached."""
    from certify.core.precision import escalate
    tried = []

    def attempt(precision):
        tried.append(precision)
        return precision
    assert escalate(attempt, lambda p: p >= 1000, 53, 4096, guess=lambda p, _: 1000) == (1000, 1000)
    assert tried == [53, 1000]
    tried.clear()
    assert escalate(attempt, lambda p: False, 53, 1000, guess=lambda p, _: p) == (1000, 1000)
    assert tried == [53, 75, 107, 152, 215, 305, 432, 611, 865, 1000]  # at least sqrt(2) times the last, then the cap
    tried.clear()
    escalate(attempt, lambda p: False, 53, 500, guess=lambda p, _: None if p < 106 else 10**6)
    assert tried == [53, 106, 500]  # None: the ladder's doubling; beyond the cap: the cap


def test_biases_cancel_in_the_global_bound():
    cfg = cases.biased_heads()
    assert engine.check(cfg).verdict == engine.HOLDS
    assert engine.check(cfg, claim="collapse.tau").verdict == engine.HOLDS


def test_trajectory_and_stack_layer_claims():
    cfg = cases.stack(depth=3)
    assert engine.check(cfg, claim="collapse.trajectory").verdict == engine.HOLDS
    per_layer = engine.check(cfg)
    assert per_layer.verdict == engine.HOLDS and len(per_layer.comparisons) == 3


def test_claim_hypotheses_are_enforced():
    cfg = cases.gaussian(4, 2)
    cfg["V"] = [[2, 0], [0, 2]]
    with pytest.raises(BadInput, match="does not apply"):
        engine.check(cfg)
    masked = cases.causal()
    with pytest.raises(BadInput, match="does not apply"):
        engine.check(masked, claim="collapse.global")
    assert engine.check(masked, claim="collapse.dobrushin").verdict == engine.HOLDS


def test_bound_on_v_needs_a_value_matrix():
    with pytest.raises(BadInput, match="no value matrix"):
        engine.check(cases.gaussian(3, 2), bound="v*D")
    cfg = cases.gaussian(3, 2)
    cfg["V"] = [[0.5, 0], [0, 0.5]]
    assert engine.check(cfg, bound="v*D").verdict == engine.HOLDS


@st.composite
def pure_layers(draw):
    n, d = draw(st.integers(2, 6)), draw(st.integers(1, 3))
    log_scale = draw(st.floats(-6, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = np.round(rng.normal(size=(n, d)) * 2**8) / 2**8
    A = np.round(rng.normal(size=(d, d)) * 2**8) / 2**8 * 2.0**log_scale
    assume(np.any(A != 0))  # A = 0 makes collapse.global the exact equality 0 <= 0: undecided, rightly
    return {"X": X.tolist(), "A": A.tolist()}


@settings(max_examples=120, deadline=None)
@given(pure_layers())
def test_theorems_are_never_reported_violated(cfg):
    """collapse.global and its steps are theorems: a 'violated' here would be a soundness bug."""
    for claim in ("collapse.global", "collapse.tau", "collapse.cubic"):
        result = engine.check(cfg, claim=claim, max_prec=4096)
        assert result.verdict != engine.VIOLATED, (claim, result)
    # A = 0 (an entry rounded to 0 when d = 1): P is uniform, D_out = 0 = the bound, an exact equality
    expected = engine.HOLDS if np.any(np.array(cfg["A"])) else engine.UNDECIDED
    assert engine.check(cfg, max_prec=4096).verdict == expected


def test_the_sharp_tanh_bound_is_attained_by_antipodal_tokens():
    """D(PX) = tanh(a D^2 / 4) D exactly for x = +-1, A = lambda: the equality is undecided, and any
    slightly stronger bound is violated, any slightly weaker one holds, at every L tried."""
    for strength in (0.1, 2.0, 500.0):
        cfg = cases.antipodal(strength)
        assert engine.check(cfg, claim="collapse.tanh", max_prec=512).verdict == engine.UNDECIDED
        assert engine.check(cfg, bound="tanh(a*D**2/4.001)*D").verdict == engine.VIOLATED
        assert engine.check(cfg, bound="tanh(a*D**2/3.999)*D").verdict == engine.HOLDS
    assert engine.check(cases.gaussian(), claim="collapse.tanh").verdict == engine.HOLDS


@settings(max_examples=60, deadline=None)
@given(pure_layers())
def test_the_tanh_bound_is_never_reported_violated(cfg):
    assert engine.check(cfg, claim="collapse.tanh", max_prec=2048).verdict != engine.VIOLATED


def _evaluations(source, **options) -> tuple[list[str], BaseException | None]:
    """The evaluations engine.checked began (one a rung of the precision ladder) and what it raised, if anything."""
    begun: list[str] = []
    try:
        engine.checked(source, "max_prec=", stage=lambda text: begun.append(text) if "evaluation" in text else None,
                       **options)
    except BadInput as refused:
        return begun, refused
    return begun, None


_STANDARD_EPS_0 = {"position": "pre", "kind": "standard", "eps": 0}


@pytest.mark.parametrize("cfg, message", [
    ({"X": [[0, 0], [1, 0.5], [0.5, 1]], "A": [[1, 0], [0, 1]], "layernorm": "pre"},
     "layer: the pre LayerNorm of token 0 is undefined: its norm is exactly 0"),
    ({"X": [[1, 0, 0], [0, 2, 1], [3, 3, 3]], "A": np.eye(3).tolist(), "layernorm": _STANDARD_EPS_0},
     "layer: the pre LayerNorm of token 2 is undefined: its variance is exactly 0 and eps is 0"),
    # the tokens' mean, [2, 2, 2] exactly (A = 0: P = 1/2 exactly), enters the second layer
    ({"X": [[1, 3, 2], [3, 1, 2]], "layers": [{"A": np.zeros((3, 3)).tolist()},
                                              {"A": np.eye(3).tolist(), "layernorm": _STANDARD_EPS_0}]},
     "layers[1]: the pre LayerNorm of token 0 is undefined: its variance is exactly 0 and eps is 0"),
])
def test_a_layernorm_certainly_undefined_is_refused_at_the_first_precision(cfg, message):
    """LayerNorm of a token whose norm (sphere), or variance with eps = 0 (standard), is exactly 0 divides by an exact
    0, which no precision changes: it climbed every rung to 65536 bits, then was undecided as "a quantity undefined
    on these inputs, or inputs of extreme size that need more precision".  It is bad input, as a bound certainly
    undefined is (certify.core.expr), found on the first rung."""
    begun, refused = _evaluations(cfg, bound="10*D")
    assert isinstance(refused, CertainlyUndefined) and str(refused) == message, refused
    assert begun == ["its evaluation at 53 bits"]


@pytest.mark.parametrize("token", [[1, 1, 1 + 2**-52], ["1/3", "1/3", "1/3"]])
def test_a_layernorm_not_certainly_undefined_is_not_refused(token):
    """A token of variance not exactly 0 (a defined LayerNorm), or of a variance whose ball merely holds 0 (1/3 is
    no binary64: its ball has a radius), is never called undefined: the check goes on."""
    cfg = {"X": [[1, 0, 0], [0, 2, 1], token], "A": np.eye(3).tolist(), "layernorm": _STANDARD_EPS_0}
    begun, refused = _evaluations(cfg, bound="10*D", max_prec=212)
    assert refused is None and begun


@pytest.mark.parametrize("bound, part", [("D/(a - a)", "D/(a - a) divides by a - a, whose enclosure contains zero"),
                                         ("D + log(a - a)", "log(a - a) of a number not certainly inside its domain")])
def test_an_undefined_bound_is_named_as_the_reason_not_layernorm(bound, part):
    """A bound with no finite value (its a - a a ball around zero, never exactly zero) was undecided "at 65536 bits:
    a quantity undefined on these inputs (LayerNorm of a zero token ...)": the reason names the bound and the part
    of it that is undefined."""
    result = engine.check(cases.gaussian(), bound=bound, max_prec=212)
    assert result.verdict == engine.UNDECIDED and result.certificate is None
    assert f"the value of {bound} is not finite at 212 bits ({part})" in result.reason, result.reason
    assert "LayerNorm" not in result.reason
