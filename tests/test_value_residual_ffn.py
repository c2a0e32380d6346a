"""value.*, residual.*, ffn.lipschitz and init.scaling: enclosures against closed forms and an
independent mpmath evaluation, hypotheses enforced, certificates confirmed and forgeries rejected."""

from __future__ import annotations

import copy
import hashlib
import json

import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

from certify import engine
from certify.suite import cases
import certify_checker as checker
from certify.core import config
from certify.core import lipschitz
from certify.core.arith import BALL, FLOAT64
from certify_checker import norms
from certify.core.float64_limits import describe
from certify.cli import main
from certify.errors import BadInput
from certify.suite import thesis_cases as thesis

import oracle


def contains(ball, value) -> bool:
    """The ball meets the 60-digit mpmath value, widened by 1e-50 relative for the oracle's own
    rounding (balls at 200+ bits are finer than the oracle; float64 errors are 1e-16)."""
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        exact = arb(mp.nstr(value, oracle.DPS, strip_zeros=False))
        return arb(ball).overlaps(arb(exact.mid(), abs(exact.mid()) * arb(10) ** -50 + arb(10) ** -300))


def redigest(cert):
    """What a forger would do after editing: recompute the digest, so the mathematics must catch it."""
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"],
                            "precision": cert["precision"]},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


def layer_values(result, t=0):
    return result.certificate["values"]["layers"][t]


# --- Lip(GELU) --------------------------------------------------------------------------------

def mp_gelu_prime(x):
    return (1 + mp.erf(x / mp.sqrt(2))) / 2 + x * mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def test_gelu_constant_encloses_the_numerical_maximum_of_gelu_prime():
    """mpmath finds the maximiser as a root of GELU'' by Newton from 1.5 (no closed form used)."""
    with mp.workdps(80):
        second = lambda x: mp.diff(mp_gelu_prime, x)  # noqa: E731
        root = mp.findroot(second, mp.mpf("1.5"))
        peak = mp_gelu_prime(root)
        grid_max = max(abs(mp_gelu_prime(mp.mpf(k) / 50)) for k in range(-500, 501))
        assert abs(root - mp.sqrt(2)) < mp.mpf(10) ** -30  # the maximiser is sqrt 2
        assert grid_max <= peak
    with ctx.workprec(200):
        G = lipschitz.gelu_constant(BALL)
        assert contains(G, peak) and G.rad() < arb(2) ** -150
        assert norms.gelu_lipschitz().overlaps(G)  # the checker's own formula agrees
        assert G > 1  # GELU can expand distances, unlike ReLU
    # A plausible wrong constant (GELU'(1), the slope at 1) is below the true supremum.
    with mp.workdps(50):
        assert mp_gelu_prime(1) < peak - mp.mpf("0.01")


# --- M = max_k ||V^k||_2 ---------------------------------------------------------------------

@pytest.mark.parametrize("depth", [1, 3, 6])
def test_M_of_a_jordan_block_is_its_closed_form(depth):
    """||[[1, k], [0, 1]]||_2 = (k + sqrt(k^2 + 4)) / 2, largest at k = T."""
    result = engine.check(thesis.jordan_stack(depth), claim="value.bounded")
    assert result.verdict == engine.HOLDS
    with mp.workdps(60):
        expected = (depth + mp.sqrt(depth**2 + 4)) / 2
    for t in range(depth):
        M = arb(layer_values(result, t)["M"])
        assert contains(M, expected) and M.rad() < 1e-12
    assert checker.verify(result.certificate).ok


def test_M_of_a_rotation_is_one():
    result = engine.check(thesis.rotation_stack(5), claim="value.bounded")
    M = arb(layer_values(result)["M"])
    assert result.verdict == engine.HOLDS and M.contains(1) and M.rad() < 1e-12


def test_one_V_through_the_stack_has_its_powers_normed_once_by_engine_and_checker(monkeypatch):
    """value.bounded's one V: the engine and the checker enclose max_k ||V^k|| once for the stack (T layers
    took T^2 norms), every layer still names the witnesses of its powers (layer 0's in full, the others as
    references to them), and each layer's M contains
    mpmath's; a layer whose stated witness differs from the first's is enclosed again."""
    from certify.core import primitives
    from certify_checker import inequality
    engine_calls, checker_calls = [], []
    powers, power_norms = primitives._powers, norms.power_norms
    monkeypatch.setattr(primitives, "_powers", lambda view: engine_calls.append(view.t) or powers(view))
    monkeypatch.setattr(norms, "power_norms", lambda *args: checker_calls.append(args[3]) or power_norms(*args))
    depth = 4
    result = engine.check(thesis.jordan_stack(depth), claim="value.bounded")
    assert result.verdict == engine.HOLDS and result.precision == 53
    assert engine_calls == [0] and checker_calls == ["V0"]
    cert = result.certificate
    assert set(cert["witness"]) == {f"A{t}" for t in range(depth)} | {f"V{t}^{k}" for t in range(depth)
                                                                       for k in range(1, depth + 1)}
    with mp.workdps(60):
        V = oracle.mat(thesis.jordan_stack(depth)["layers"][0]["V"])
        expected = max(oracle.spectral_norm(V**k) for k in range(1, depth + 1))
    for t in range(depth):
        assert contains(arb(layer_values(result, t)["M"]), expected)
    # each stated in full once, every later layer's a reference to layer 0's
    assert all(cert["witness"][f"V{t}^{k}"] == {"same_as": f"V0^{k}"} for t in range(1, depth) for k in range(1, depth + 1))
    checker_calls.clear()
    edited = copy.deepcopy(cert)
    edited["witness"]["V2^1"] = copy.deepcopy(cert["witness"]["V0^1"])
    edited["witness"]["V2^1"]["top"][0] *= 1 + 2**-40  # another witness, as good: layer 2 is enclosed again
    assert checker.verify(edited).ok and checker_calls == ["V0", "V2"]
    # the checker compares stated JSON values with their types: it refuses true and reads 1
    assert inequality.same([[0.5, 1]], [[0.5, 1]]) and not inequality.same([1], [True])
    assert not inequality.same([1], [1.0]) and not inequality.same({"top": [1]}, {"top": ["1"]})


def test_value_bounded_against_mpmath_closed_form_of_the_stack():
    """D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0 for every t <= T = 4, with mpmath's own D_t, a, M (one
    repeated layer; M over the powers k <= T at every t)."""
    cfg = thesis.jordan_stack(4)
    result = engine.check(cfg, claim="value.bounded")
    assert [c.layer for c in result.comparisons] == [0, 1, 2, 3]
    with mp.workdps(oracle.DPS):
        layers = oracle.quantities(cfg)
        V = oracle.mat(cfg["layers"][0]["V"])
        M = max([mp.mpf(1)] + [oracle.spectral_norm(V**k) for k in range(1, 5)])
        D0, a = layers[0]["D"], layers[0]["a"]
        for t, comparison in enumerate(result.comparisons, start=1):
            rhs = (1 - mp.exp(-a * M**2 * D0**2)) ** t * D0
            lhs = layers[t - 1]["D_out"] / M
            assert contains(comparison.lhs, lhs) and contains(comparison.rhs, rhs), t
            assert lhs <= rhs


# --- enclosures of one layer against the oracle -----------------------------------------------

@pytest.mark.parametrize("claim, build", [
    ("value.expansive", thesis.expansive),
    ("residual.two_sided", thesis.residual),
    ("residual.two_sided", lambda: {**thesis.residual(), "mask": [[int(j <= i) for j in range(6)] for i in range(6)]}),
    ("residual.two_sided.global", thesis.residual),
])
def test_enclosures_contain_the_oracle(claim, build):
    cfg = build()
    result = engine.check(cfg, claim=claim)
    assert result.verdict == engine.HOLDS
    expected = oracle.quantities(cfg)[0]
    values = layer_values(result)
    for name, ball in values.items():
        if name in expected:
            assert contains(ball, expected[name]), name
    assert {"D", "D_out", "v"} <= set(values)
    assert checker.verify(result.certificate).ok


def test_residual_two_sided_sides_match_the_oracle():
    cfg = thesis.residual()
    result = engine.check(cfg, claim="residual.two_sided")
    q = oracle.quantities(cfg)[0]
    with mp.workdps(oracle.DPS):
        lower, upper = (1 - q["v"] * q["tau"]) * q["D"], (1 + q["v"] * q["tau"]) * q["D"]
    low, up = result.comparisons
    assert contains(low.lhs, lower) and contains(low.rhs, q["D_out"])
    assert contains(up.lhs, q["D_out"]) and contains(up.rhs, upper)
    assert lower <= q["D_out"] <= upper


def mp_ffn_layer(cfg):
    """Attention then the MLP, in mpmath (oracle.layer gives P X; the FFN is written here)."""
    with mp.workdps(oracle.DPS):
        X = oracle.mat(cfg["X"])
        Y = oracle.layer(cfg, X)["out"]
        f = cfg["ffn"]
        W1, W2 = oracle.mat(f["W1"]), oracle.mat(f["W2"])
        b1, b2 = oracle.mat([f["b1"]]), oracle.mat([f["b2"]])
        act = (lambda x: max(x, 0)) if f["activation"] == "relu" else (lambda x: x * (1 + mp.erf(x / mp.sqrt(2))) / 2)
        out = mp.matrix(Y.rows, Y.cols)
        for i in range(Y.rows):
            hidden = (Y[i, :] * W1.T + b1).apply(act)
            row = hidden * W2.T + b2
            for j in range(Y.cols):
                out[i, j] = row[0, j] + (Y[i, j] if f.get("residual") else 0)
        lip = oracle.spectral_norm(W2) * oracle.spectral_norm(W1)
        if f["activation"] == "gelu":
            lip *= (1 + mp.erf(1)) / 2 + 1 / (mp.e * mp.sqrt(mp.pi))
        return oracle.diameter(out), lip + (1 if f.get("residual") else 0)


@pytest.mark.parametrize("activation, residual", [("relu", False), ("gelu", False), ("gelu", True)])
def test_ffn_lipschitz_against_mpmath(activation, residual):
    cfg = thesis.ffn(activation, residual)
    result = engine.check(cfg, claim="ffn.lipschitz")
    assert result.verdict == engine.HOLDS
    D_out, L = mp_ffn_layer(cfg)
    values = layer_values(result)
    assert contains(values["D_out"], D_out) and contains(values["L"], L)
    assert arb(values["L"]).rad() < 1e-10
    assert checker.verify(result.certificate).ok


# --- init.scaling -----------------------------------------------------------------------------

def test_init_scaling_keeps_the_gap_where_float64_loses_it():
    result = engine.check(cases.antipodal(500.0), claim="init.scaling")
    assert result.verdict == engine.HOLDS and result.precision > 1000
    assert float(result.screen[0].rhs) == 2.0  # float64: (1 - gap) D is exactly D
    gap = arb(layer_values(result)["gap"])
    assert gap > 0 and contains(gap, mp.exp(-2000))
    assert checker.verify(result.certificate).ok


@pytest.mark.parametrize("aD2, words", [("37", "resolves"), ("38", "1.0"), ("745", "1.0"), ("746", "= 0")])
def test_float64_regime_thresholds(aD2, words):
    """54 ln 2 = 37.43 and 1075 ln 2 = 745.13; checked against float64 itself."""
    import math
    x = float(aD2)
    says_one, says_zero = 1.0 - math.exp(-x) == 1.0, math.exp(-x) == 0.0
    text = describe(arb(aD2))
    assert words in text
    assert ("1.0" in text) == (says_one and not says_zero) and ("= 0" in text) == says_zero


# --- hypotheses -------------------------------------------------------------------------------

@pytest.mark.parametrize("claim, cfg, reason", [
    ("value.expansive", cases.gaussian(), "no value matrix"),
    ("value.expansive", thesis.residual(), "residual"),
    ("value.bounded", {**thesis.rotation_stack(2), "layers": [
        {"A": [[1, 0], [0, 1]], "V": [[0, -1], [1, 0]]}, {"A": [[1, 0], [0, 1]], "V": [[1, 0], [0, 1]]}]},
     "different value matrices"),
    ("residual.two_sided", thesis.expansive(), "no residual"),
    ("residual.two_sided.global", thesis.residual(mask="causal"), "mask"),
    ("residual.two_sided", {**cases.gaussian(), "residual": True}, "no value matrix"),
    ("ffn.lipschitz", cases.gaussian(), "no feed-forward"),
    ("ffn.lipschitz", {**thesis.ffn(), "V": [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]}, "value"),
    ("init.scaling", thesis.residual(), "pure self-attention"),
])
def test_claims_refuse_cases_outside_their_hypotheses(claim, cfg, reason):
    with pytest.raises(BadInput, match=reason):
        engine.check(cfg, claim=claim)


def test_cli_reports_a_hypothesis_as_bad_input(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(cases.gaussian()))
    assert main(["check", str(path), "--claim", "ffn.lipschitz"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "feed-forward" in err[0]


def test_the_lower_bound_is_attained_by_residual_far_so_it_stays_undecided():
    """n = 2, V = -I: D' = (1 - ||V|| tau) D exactly, an equality ball arithmetic cannot decide."""
    result = engine.check(thesis.residual_far(), claim="residual.two_sided", max_prec=256)
    assert result.verdict == engine.UNDECIDED
    lower = result.comparisons[0]
    assert lower.outcome is None and (lower.lhs - lower.rhs).contains(0)
    assert result.comparisons[1].outcome is True


# --- certificates: confirmed, and forgeries rejected ------------------------------------------

@pytest.fixture(scope="module")
def certificates():
    return {
        "value.bounded": engine.check(thesis.jordan_stack(3), claim="value.bounded").certificate,
        "value.expansive": engine.check(thesis.expansive(), claim="value.expansive").certificate,
        "residual.two_sided": engine.check(thesis.residual(), claim="residual.two_sided").certificate,
        "residual.two_sided.global": engine.check(thesis.residual(), claim="residual.two_sided.global").certificate,
        "ffn.lipschitz": engine.check(thesis.ffn("gelu", True), claim="ffn.lipschitz").certificate,
        "init.scaling": engine.check(cases.gaussian(), claim="init.scaling").certificate,
    }


def test_every_new_claim_certificate_is_confirmed(certificates):
    for claim, cert in certificates.items():
        assert cert["claim"] == claim and cert["verdict"] == "holds"
        assert checker.verify(cert).ok, claim


def first_layer_with(cert, key):
    return next(layer for layer in cert["inputs"]["layers"] if key in layer)


@pytest.mark.parametrize("claim, key", [("value.bounded", "V"), ("value.expansive", "V"),
                                        ("residual.two_sided", "V"), ("ffn.lipschitz", "ffn")])
def test_an_edited_matrix_with_forged_digest_is_rejected(certificates, claim, key):
    cert = copy.deepcopy(certificates[claim])
    layer = first_layer_with(cert, key)
    if key == "V":
        layer["V"][0][0] = "3"
    else:
        layer["ffn"]["W2"][0][0] = "3"
    assert not checker.verify(redigest(cert)).ok


@pytest.mark.parametrize("claim, name", [("value.bounded", "M"), ("ffn.lipschitz", "L"), ("value.expansive", "v")])
def test_an_edited_norm_enclosure_is_rejected(certificates, claim, name):
    cert = copy.deepcopy(certificates[claim])
    stated = arb(cert["values"]["layers"][0][name])
    cert["values"]["layers"][0][name] = (stated * arb("1.001")).str(30, radius=True)
    assert not checker.verify(cert).ok


def test_a_bad_witness_can_only_fail(certificates):
    cert = copy.deepcopy(certificates["ffn.lipschitz"])
    witness = cert["witness"]["W1_0"]
    witness["basis"] = [[float(2.0).hex() for _ in row] for row in witness["basis"]]  # not orthogonal
    assert not checker.verify(cert).ok


def test_value_bounded_with_different_value_matrices_is_rejected(certificates):
    """The per-layer hypotheses still hold; the stack hypothesis (one V) must catch it."""
    cert = copy.deepcopy(certificates["value.bounded"])
    cert["inputs"]["layers"][1]["V"] = [["1", "0"], ["0", "1"]]
    confirmation = checker.verify(redigest(cert))
    assert not confirmation.ok and "stack" in confirmation.message


def test_a_claim_swapped_for_one_whose_hypotheses_fail_is_rejected(certificates):
    cert = redigest(copy.deepcopy(certificates["residual.two_sided"]) | {"claim": "value.expansive"})
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "hypotheses" in confirmation.message


def test_a_checker_that_forgot_the_gelu_factor_would_reject_the_honest_certificate(certificates, monkeypatch):
    """Planted error in the checker (Lip(GELU) taken as 1): the stated L no longer matches."""
    cert = certificates["ffn.lipschitz"]
    assert checker.verify(cert).ok
    monkeypatch.setattr(norms, "gelu_lipschitz", lambda: arb(1))
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "does not contain" in confirmation.message


def test_a_collapsed_stack_is_confirmed_at_low_precision():
    """Tokens that coincide to within rounding: the checker's norms must clip a sum of squares
    that rounding pushed below 0 (it once took sqrt of it, got nan and refused at every precision)."""
    result = engine.check(thesis.jordan_stack(10), claim="value.bounded", max_prec=1024)
    assert result.verdict == engine.HOLDS and result.precision == 53
    assert arb(result.certificate["values"]["D_out"]).contains(0)  # collapsed below the ball's radius
    assert checker.verify(result.certificate).ok


def test_M_is_certified_where_float64_powers_of_V_overflow():
    """||V^k||_2 = 4^k overflows float64 past k = 512: the screen's witnesses are rescaled powers,
    and the ball pass encloses M = 4^520 exactly enough."""
    from certify.core.layers import apply_layer, layer_arrays
    from certify.core.primitives import LayerView

    case = config.load({"X": [[1, 0], [0, 1]], "A": [[0, 0], [0, 0]], "V": [[4, 0], [0, 1]]})
    witnesses: dict = {}

    def view(ar):
        X = ar.array(case.X)
        arrays = layer_arrays(ar, case.layers[0], case.n)
        return LayerView(ar=ar, t=0, layer=case.layers[0], arrays=arrays, X=X,
                         step=apply_layer(ar, case.layers[0], X, arrays), X0=X, witnesses=witnesses, depth=520)

    assert view(FLOAT64).get("M") > 1e300  # the screen only says "huge"
    assert all(np.isfinite(w.basis).all() for w in witnesses.values())
    with ctx.workprec(64):
        M = view(BALL).get("M")
        assert M.contains(arb(4) ** 520) and M.rad() < M.mid() * 1e-12


def test_M_of_a_contraction_is_one_from_the_identity_power():
    """For V = I/2 every ||V^k||_2 with k >= 1 is below 1, so M = ||V^0||_2 = 1 (k = 0 is in the max):
    engine and checker agree on it, and a checker that left k = 0 out would enclose 1/2 and reject."""
    stack = {"X": [[1, 0], [0, 1], [0.5, 0.2]], "layers": [{"A": [[1, 0], [0, 1]], "V": [["1/2", "0"], ["0", "1/2"]]}] * 2}
    result = engine.check(stack, claim="value.bounded")
    M = arb(layer_values(result)["M"])
    assert M.contains(1) and M.rad() < 1e-12
    assert checker.verify(result.certificate).ok
    assert norms.power_bound([arb(0.5), arb(0.25)]) == 1
