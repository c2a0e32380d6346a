"""certify trajectory: enclosures of D_t against closed forms and an independent mpmath trajectory."""

from __future__ import annotations

import json
import re

import oracle
import pytest
from flint import arb
from mpmath import mp

from certify.suite import cases
from certify.studies import trajectory
from certify.cli import main
from certify.errors import BadInput

DPS = 1500  # enough for D_t down to about 1e-1000


def mp_interval(x: arb):
    """The decimal interval arb prints for x (rounded outwards), as mpmath endpoints."""
    mid, rad, exponent = (int(v) for v in x.mid_rad_10exp())
    scale = mp.mpf(10) ** exponent
    return (mp.mpf(mid) - rad) * scale, (mp.mpf(mid) + rad) * scale


def assert_contains(x: arb, value, what=""):
    low, high = mp_interval(x)
    assert low <= value <= high, f"{what}: {x} misses {mp.nstr(value, 20)}"


def antipodal(lam="1", half="3/8"):
    """Tokens +h and -h on a line, A = lambda: D_{t+1} = D_t tanh(lambda D_t^2 / 4)."""
    return {"name": "antipodal", "X": [[half], ["-" + half]], "A": [[lam]]}


def closed_form(T, lam, D0):
    # P_11 = (1 + tanh(lam h^2)) / 2 with h = D/2, so x_1' = h tanh(lam h^2): D' = D tanh(lam D^2 / 4).
    with mp.workdps(DPS):
        out = [D0]
        for _ in range(T):
            D = out[-1]
            out.append(D * mp.tanh(lam * D * D / 4))
        return out


def test_antipodal_closed_form_through_doubly_exponential_collapse():
    T = 7
    tr = trajectory.trace(antipodal(), T)
    with mp.workdps(DPS):
        exact = closed_form(T, mp.mpf(1), mp.mpf(3) / 4)
        assert exact[T] < mp.mpf("1e-900")  # the regime the adaptive precision is for
        for p in tr.points:
            assert p.resolved
            assert_contains(p.D, exact[p.t], f"D_{p.t}")
            assert p.D.rel_accuracy_bits() >= trajectory.RESOLVED_BITS
            if p.t:
                previous = exact[p.t - 1]
                assert_contains(p.curves["global.step"], (1 - mp.exp(-previous**2)) * previous, "g(D_{t-1})")
                cubic = (mp.mpf(3) / 4) ** (3**p.t)  # a = 1
                assert_contains(p.curves["cubic"], cubic, "cubic curve")
    assert tr.verdict == trajectory.HOLDS and tr.exit_code == 0
    assert tr.precision == 53  # centred form: D_7 ~ 1e-928 keeps its relative accuracy at 53 bits


def identity_ffn(config):
    """The same dynamics through a residual feed-forward network f(x) = x + 0: not translation-equivariant
    as a layer kind, so the trajectory falls back to absolute coordinates."""
    return {**config, "ffn": {"W1": [[1]], "b1": [0], "W2": [[0]], "b2": [0], "activation": "relu", "residual": True}}


def test_low_cap_reports_unresolved_instead_of_wrong_digits():
    tr = trajectory.trace(identity_ffn(antipodal()), 7, max_prec=256)
    assert tr.representation.startswith("absolute: layer 0: a feed-forward network")
    resolved = [p.t for p in tr.points if p.resolved]
    assert resolved == list(range(len(resolved))) and len(resolved) < 8
    with mp.workdps(DPS):
        exact = closed_form(7, mp.mpf(1), mp.mpf(3) / 4)
        first_unresolved = tr.points[len(resolved)]
        assert_contains(first_unresolved.D, exact[first_unresolved.t], "wide but still an enclosure")
    assert all(p.D is None for p in tr.points[len(resolved) + 1:])
    assert tr.verdict == trajectory.UNDECIDED and tr.exit_code == 3
    assert tr.certified  # the checker confirms the enclosures and that they stay unresolved


def mp_trajectory(config, T, dps):
    """Independent mpmath iteration with tests/oracle.py (layer t = layers[t mod L])."""
    specs = config.get("layers") or [{k: v for k, v in config.items() if k not in ("X", "name")}]
    with mp.workdps(dps):
        X = oracle.mat(config["X"])
        steps = []
        for t in range(T + 1):
            centred = X - mp.matrix([[sum(X[i, j] for i in range(X.rows)) / X.rows for j in range(X.cols)]
                                     for _ in range(X.rows)])
            mu = mp.sqrt(sum(centred[i, j] ** 2 for i in range(X.rows) for j in range(X.cols)))
            steps.append({"X": X, "D": oracle.diameter(X), "mu": mu})
            if t < T:
                out = oracle.layer(specs[t % len(specs)], X)
                steps[-1]["P"] = out["P"]
                X = out["out"]
        return steps


@pytest.mark.parametrize("build,T", [(cases.near_consensus, 4), (cases.stack, 6), (cases.gaussian, 3)])
def test_enclosures_contain_an_independent_mpmath_trajectory(monkeypatch, build, T):
    config = build()
    monkeypatch.setattr(oracle, "DPS", 700)
    steps = mp_trajectory(config, T, 700)
    tr = trajectory.trace(config, T)
    with mp.workdps(700):
        for p, ref in zip(tr.points, steps):
            assert p.resolved
            assert_contains(p.D, ref["D"], f"D_{p.t}")
            assert_contains(p.mu, ref["mu"], f"mu_{p.t}")
            if p.t < T:
                assert_contains(p.tau, oracle.dobrushin(ref["P"]), f"tau_{p.t}")
    assert tr.verdict == trajectory.HOLDS


def test_stack_is_applied_cyclically():
    config = cases.stack(depth=2)
    tr = trajectory.trace(config, 5)
    assert tr.cycle == 2 and len(tr.a) == 2
    with mp.workdps(200):
        steps = mp_trajectory(config, 5, 200)
        for p, ref in zip(tr.points, steps):
            assert_contains(p.D, ref["D"], f"D_{p.t}")
        swapped = dict(config, layers=config["layers"][::-1])
        other = mp_trajectory(swapped, 5, 200)
        assert abs(other[3]["D"] - steps[3]["D"]) > 1e-6  # the order of the cycle matters, and was followed


ROTATION = {"name": "rotation", "X": [[1, 0], [0, 1], [-1, 0.5], [0.25, -1]], "A": [[0.5, 0], [0, 0.5]],
            "V": [["3/5", "-4/5"], ["4/5", "3/5"]]}


def test_rotation_value_matrix_M_is_one_and_tokens_approach_V_t_c(monkeypatch):
    T = 5
    tr = trajectory.trace(ROTATION, T)
    assert set(tr.drawn) == {"value.bounded", "value.approach"}
    assert {"global.step", "global.composed", "cubic"} <= set(tr.skipped)
    assert tr.M.contains(1) and tr.M.rad() < 1e-30  # ||V^k||_2 = 1 for a rotation
    monkeypatch.setattr(oracle, "DPS", 400)
    with mp.workdps(400):
        steps = mp_trajectory(ROTATION, 12, 400)
        # c: the common limit of the rows of Q_t X_0; by t = 12 their spread is far below 1e-300
        Y = oracle.mat(ROTATION["X"])
        for step in steps[:12]:
            Y = step["P"] * Y
        c = mp.matrix([sum(Y[i, j] for i in range(Y.rows)) / Y.rows for j in range(Y.cols)])
        V = oracle.mat(ROTATION["V"])
        image = c
        for p, ref in zip(tr.points, steps):
            assert_contains(p.D, ref["D"], f"D_{p.t}")
            X = ref["X"]
            r = max(mp.norm(X[i, :].T - image) for i in range(X.rows))
            assert_contains(p.approach, r, f"max_i ||x_i - V^t c|| at t = {p.t}")
            image = V * image
            if p.t:
                D0 = steps[0]["D"]
                curve = (1 - mp.exp(-mp.mpf("0.5") * D0**2)) ** p.t * D0  # M = 1, a = 1/2
                assert_contains(p.curves["value.bounded"], curve, "value.bounded with M = 1")
    assert tr.verdict == trajectory.HOLDS


def test_a_wrong_curve_in_the_engine_is_never_certified(monkeypatch):
    # 1 - exp(-a D^2 / 8) in place of 1 - exp(-a D^2): the engine would call the bound violated (by
    # 1e-109, where the attention saturates); the checker recomputes the curve and refuses.
    monkeypatch.setattr(trajectory, "one_minus_gap", lambda a, D: -((-(a * D * D / 8)).expm1()))
    tr = trajectory.trace(cases.antipodal(500.0), 1)
    assert tr.points[1].checks["global.step"] == trajectory.VIOLATED
    assert not tr.certified and "global.step" in tr.confirmation
    assert tr.exit_code == 3  # not certified: undecided, never "violated"


def test_masked_layers_draw_no_curves_but_still_trace():
    tr = trajectory.trace(cases.causal(), 3)
    assert tr.drawn == {} and "mask" in tr.skipped["global.step"]
    assert all(p.resolved for p in tr.points) and tr.verdict == trajectory.ENCLOSED and tr.exit_code == 0


def test_cubic_curve_needs_sqrt_a_D0_below_one():
    tr = trajectory.trace(antipodal(lam="1", half="1"), 2)  # sqrt(a) D_0 = 2
    assert "cubic" not in tr.drawn and "sqrt(a) D_0" in tr.skipped["cubic"]
    assert "global.composed" in tr.drawn


# X' = P X V^T with an expansive shear V (||V||_2 about 1.66) near consensus: sqrt(rho a) D_0 about 0.25
EXPANSIVE = {"name": "expansive near consensus", "X": [["1/10", "0"], ["0", "1/10"], ["-1/20", "1/50"]],
             "A": [[1, "1/2"], [0, 1]], "V": [["3/2", "1/2"], [0, 1]]}


def test_value_expansive_collapses_near_consensus_under_its_cubic_curve():
    """value.expansive: D' <= rho (1 - exp(-a D^2)) D <= rho a D^3, so with c = rho a and sqrt(c) D_0 < 1,
    D_t <= c^{-1/2} (sqrt(c) D_0)^(3^t): the curve against mpmath's rho, a and D_0, and the D_t of an independent
    mpmath trajectory under it; the checker confirms the certificate."""
    from certify_checker import verify
    T = 4
    tr = trajectory.trace(EXPANSIVE, T)
    assert "value.expansive" in tr.drawn and tr.verdict == trajectory.HOLDS and tr.certified
    with mp.workdps(200):
        steps = mp_trajectory(EXPANSIVE, T, 200)
        c = oracle.spectral_norm(oracle.mat(EXPANSIVE["V"])) * oracle.spectral_norm(oracle.mat(EXPANSIVE["A"]))
        assert c > 1 and mp.sqrt(c) * steps[0]["D"] < 1  # expansive, and near consensus
        for p in tr.points[1:]:
            curve = (mp.sqrt(c) * steps[0]["D"]) ** (3 ** p.t) / mp.sqrt(c)
            assert_contains(p.curves["value.expansive"], curve, f"value.expansive at t = {p.t}")
            assert steps[p.t]["D"] <= curve and p.checks["value.expansive"] == "holds"
    assert verify(tr.certificate).ok


def test_value_expansive_states_its_rho_in_the_text_and_json(tmp_path, capsys):
    """rho = ||V||_2 (c = rho a) was shown nowhere: only M and a, so sqrt(rho a) D_0 could not be read off."""
    path = tmp_path / "expansive.json"
    path.write_text(json.dumps(EXPANSIVE))
    rho = oracle.spectral_norm(oracle.mat(EXPANSIVE["V"]))
    assert main(["trajectory", str(path), "--layers", "2", "--json", "-q"]) == 0
    assert_contains(arb(json.loads(capsys.readouterr().out)["rho"]), rho, "rho")
    assert main(["trajectory", str(path), "--layers", "2", "-q"]) == 0
    assert f"; rho = ||V||_2 = {mp.nstr(rho, 6)}" in capsys.readouterr().out.splitlines()[0]
    assert trajectory.trace(antipodal(), 2).rho is None  # no V, no rho


def test_value_expansive_far_from_consensus_is_not_drawn_and_a_certificate_stating_it_is_rejected():
    """Far from consensus (sqrt(rho a) D_0 > 1) the curve's hypothesis fails: not drawn, with the reason; a
    certificate that states it anyway, with its values, is rejected by the checker."""
    import copy
    from certify_checker import verify
    far = dict(EXPANSIVE, X=[["1", "0"], ["0", "1"], ["-1/2", "1/5"]])
    tr = trajectory.trace(far, 3)
    assert "value.expansive" not in tr.drawn and "sqrt(rho a) D_0 < 1" in tr.skipped["value.expansive"]
    assert verify(tr.certificate).ok
    forged = copy.deepcopy(tr.certificate)
    forged["curves"].append("value.expansive")
    for point in forged["points"][1:]:
        point["log_curves"]["value.expansive"] = point["log_curves"]["value.bounded"]
        point["checks"]["value.expansive"] = "holds"
    confirmation = verify(forged)
    assert not confirmation.ok and "value.expansive curve is stated but its sqrt(c) D_0 < 1" in confirmation.message, \
        confirmation.message


def test_cubic_curves_with_c_zero_say_the_curve_needs_c_positive_not_that_near_consensus_failed():
    """With V = 0 (rho a = 0) or A = 0 (a = 0) sqrt(c) D_0 < 1 holds; the curve is not drawn because it divides by
    sqrt(c), and the reason says that (it read "needs sqrt(rho a) D_0 < 1 ...; here, with c = rho a, c = 0")."""
    zero_v = trajectory.trace(dict(EXPANSIVE, V=[[0, 0], [0, 0]]), 2)
    reason = zero_v.skipped["value.expansive"]
    assert "rho a = 0" in reason and "rho a > 0" in reason and "D_0 < 1" not in reason, reason
    zero_a = trajectory.trace(antipodal(lam="0"), 2)
    reason = zero_a.skipped["cubic"]
    assert "a = 0" in reason and "a > 0" in reason and "D_0 < 1" not in reason, reason
    far = trajectory.trace(antipodal(lam="1", half="1"), 2)  # sqrt(a) D_0 = 2: the value named as the hypothesis
    assert "here sqrt(a) D_0 = 2.0000 is not proven < 1" in far.skipped["cubic"], far.skipped["cubic"]


def test_a_value_expansive_curve_stated_below_the_true_one_is_rejected():
    import copy
    from certify_checker import verify
    cert = trajectory.trace(EXPANSIVE, 3).certificate
    forged = copy.deepcopy(cert)
    forged["points"][2]["log_curves"]["value.expansive"] = forged["points"][2]["log_curves"]["value.approach"]
    assert not verify(forged).ok


@pytest.mark.parametrize("layers", [0, -3, trajectory.MAX_LAYERS + 1])
def test_bad_layer_counts(layers):
    with pytest.raises(BadInput):
        trajectory.trace(antipodal(), layers)


def test_coinciding_tokens_are_bad_input():
    with pytest.raises(BadInput, match="coincide"):
        trajectory.trace({"X": [[1, 2], [1, 2]], "A": [[1, 0], [0, 1]]}, 3)


def write(tmp_path, config):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return str(path)


def test_cli_table_json_and_plot(tmp_path, capsys):
    path = write(tmp_path, cases.near_consensus())
    out = tmp_path / "report"
    assert main(["trajectory", path, "--layers", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "global.composed" in text and "HOLDS" in text
    assert (out / "trajectory.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "trajectory.json").read_text())
    assert saved["verdict"] == "holds" and len(saved["points"]) == 4
    assert main(["trajectory", path, "--layers", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["points"][3]["checks"] == {"global.step": "holds", "global.composed": "holds", "cubic": "holds"}
    assert printed["points"][3]["log10_D"] < -150


def test_cli_exit_codes_for_unresolved_and_bad_input(tmp_path, capsys):
    path = write(tmp_path, identity_ffn(antipodal()))
    assert main(["trajectory", path, "--layers", "7", "--max-prec", "128"]) == 3
    capsys.readouterr()
    for argv in (["--layers", "0"], ["--layers", "1000000"], ["--layers", "2", "--max-prec", "10"], []):
        assert main(["trajectory", path, *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("certify: error:") and err.count("\n") == 1
    assert main(["trajectory", str(tmp_path / "missing.json"), "--layers", "2"]) == 2


@pytest.mark.parametrize("example, T", [("rotation-20.json", 20), ("pure-stack.json", 100)])
def test_deep_examples_are_decided_at_every_layer_within_256_bits(example, T):
    from pathlib import Path
    from certify_checker import verify
    tr = trajectory.trace(str(Path(__file__).resolve().parents[1] / "examples" / example), T, max_prec=256)
    assert tr.representation == trajectory.CENTRED and tr.precision <= 256
    assert all(p.resolved for p in tr.points) and tr.points[-1].D < arb(10) ** -10**8
    assert tr.certified and verify(tr.certificate).ok and tr.exit_code == 0
    assert tr.drawn and all(set(p.checks.values()) == {trajectory.HOLDS} and set(p.checks) == set(tr.drawn)
                            for p in tr.points[1:])


def test_a_tampered_trajectory_certificate_is_rejected():
    from certify_checker import verify
    tr = trajectory.trace(cases.antipodal(1.0), 5)
    assert verify(tr.certificate).ok
    import copy
    for tamper in ("value", "check", "verdict", "input"):
        cert = copy.deepcopy(tr.certificate)
        if tamper == "value":
            cert["points"][3]["D"][0] = str(int(cert["points"][3]["D"][0]) + 2**40)
        elif tamper == "check":
            cert["points"][2]["checks"]["global.step"] = "violated"
        elif tamper == "verdict":
            cert["verdict"] = "violated"
        else:
            cert["inputs"]["X"][0][0] = "0.5"
        confirmation = verify(cert)
        assert not confirmation.ok and "malformed" not in confirmation.message, (tamper, confirmation.message)


def test_tokens_stated_as_a_binary64_block_are_read_by_the_checker():
    """More than 64 binary64 numbers in X are stated as one block (as in every certificate); the checker read
    the trajectory's inputs as rows only, so no trajectory of 9 x 8 tokens or more was ever confirmed.  Its
    tampered twin is still rejected."""
    import copy
    import numpy as np
    from certify_checker import verify
    rng = np.random.default_rng(5)
    cfg = {"X": rng.normal(size=(9, 8)).tolist(), "A": (rng.normal(size=(8, 8)) / 8).tolist()}
    tr = trajectory.trace(cfg, 3)
    assert set(tr.certificate["inputs"]["X"]) == {"binary64", "shape"}
    assert verify(tr.certificate).ok and tr.verdict == "holds"
    cert = copy.deepcopy(tr.certificate)
    cert["points"][2]["D"][0] = str(int(cert["points"][2]["D"][0]) + 2**40)
    assert not verify(cert).ok


def test_tokens_as_a_block_are_priced_as_rows():
    """The work of tau (n^3 / 2 a step) is counted for tokens stated as a binary64 block as for rows of numbers:
    it was 0 for a block, so a hostile certificate of many tokens passed the work limit unpriced."""
    import copy
    import numpy as np
    from certify_checker import trajectory as checker_trajectory
    rng = np.random.default_rng(5)
    cfg = {"X": rng.normal(size=(9, 8)).tolist(), "A": (rng.normal(size=(8, 8)) / 8).tolist()}
    cert = trajectory.trace(cfg, 3).certificate
    as_rows = copy.deepcopy(cert)
    as_rows["inputs"]["X"] = cfg["X"]
    assert set(cert["inputs"]["X"]) == {"binary64", "shape"}
    assert checker_trajectory.work(cert) == checker_trajectory.work(as_rows) > 9**3 // 2


def _stated_but_never_checked(cert):
    """Edits that put numbers in a trajectory certificate where the checker computes none."""
    fake = cert["points"][1]["D"]
    return {
        "an extra field": lambda c: c.update(note="certified by hand"),
        "an extra point field": lambda c: c["points"][2].update(D_true=fake),
        "a point's t": lambda c: c["points"][2].update(t=5),
        "an approach without value.approach": lambda c: c["points"][2].update(approach=fake),
        "a curve not drawn": lambda c: c["points"][2]["log_curves"].update(cubic=fake),
        "a curve dropped": lambda c: c["points"][2]["log_curves"].pop("global.step"),
        "M without a value curve": lambda c: c.update(M=fake),
        "a curve listed twice": lambda c: c.update(curves=c["curves"] + c["curves"][:1]),
    }


def test_a_trajectory_certificate_states_nothing_the_checker_does_not_check():
    from certify_checker import verify
    tr = trajectory.trace(cases.antipodal(1.0), 5)
    assert verify(tr.certificate).ok and tr.certificate["curves"] and tr.certificate["M"] is None
    import copy
    for what, edit in _stated_but_never_checked(tr.certificate).items():
        cert = copy.deepcopy(tr.certificate)
        edit(cert)
        assert not verify(cert).ok, what


@pytest.mark.parametrize("field, value", [
    (("points", 2, "t"), "x"), (("points", 2, "t"), 7), (("points", 1, "approach"), ["0", "0", "0", "0"]),
    (("points", 0, "log_curves"), {"global.step": ["0", "0", "0", "0"]}), (("points", 0, "checks"), []),
    (("points", 3, "log_curves"), {"value.bounded": ["1", "0", "0", "0"]}), (("M",), ["1", "0", "0", "0"]),
])
def test_a_trajectory_certificate_states_nothing_the_checker_leaves_unchecked(field, value):
    """A pure-attention trajectory has no approach, no M and no curve at t = 0: a certificate stating
    one (a zero approach, a curve value) is rejected, as is a point numbered out of place."""
    from certify_checker import verify
    import copy
    tr = trajectory.trace(cases.antipodal(1.0), 5)
    cert = copy.deepcopy(tr.certificate)
    node = cert
    for key in field[:-1]:
        node = node[key]
    node[field[-1]] = value
    confirmation = verify(cert)
    assert not confirmation.ok and "malformed" not in confirmation.message, confirmation.message


@pytest.mark.parametrize("form", ["object", "text"])
def test_a_stated_ball_is_a_list_of_its_four_integers_and_nothing_else(form):
    """A stated ball was read by iterating it: an object keyed by its four integers, whatever text its values
    show ("D_1 = 1000"), was confirmed, as was a text of four digits ("1100" for 1 2^1 +- 0 2^0)."""
    import copy
    from certify_checker import verify
    tr = trajectory.trace(cases.antipodal(1.0), 5)
    cert = copy.deepcopy(tr.certificate)
    if form == "object":
        ends = cert["points"][1]["D"]
        assert len(set(ends)) == 4
        cert["points"][1]["D"] = dict(zip(ends, ["D_1 = 1000", "shown", "never", "read"]))
    else:
        cert["points"][0]["D"] = "1100"  # D_0 = 2 exactly, read as 1 2^1 +- 0 2^0
    confirmation = verify(cert)
    assert not confirmation.ok and "a ball is not a list" in confirmation.message, confirmation.message


def test_a_norm_witness_states_its_basis_and_top_vector_and_nothing_beside():
    """A field beside a witness's basis and top ("||A_0||_2 = 0.1 exactly") was confirmed, shown and never read."""
    import copy
    from certify_checker import verify
    tr = trajectory.trace(cases.antipodal(1.0), 5)
    cert = copy.deepcopy(tr.certificate)
    cert["witness"]["A0"]["note"] = "||A_0||_2 = 0.1 exactly"
    confirmation = verify(cert)
    assert not confirmation.ok and "each a basis and a top vector" in confirmation.message, confirmation.message


def test_a_stated_enclosure_that_misses_the_true_value_is_rejected_however_its_radius_rounds():
    """For the rotation by 3/5, 4/5, M = max ||V^k||_2 = 1 exactly.  A certificate stating M in
    [1 + 2^-300, 1 + 2^-300 + 2 r] excludes it.  The checker read a stated ball as arb(mid, rad), whose
    radius arb rounds up (by about 2^-29 of it): with r about 2^31 times the recomputed radius (still
    within the accuracy slack at 128 bits) the widened ball held the recomputed M, and the false
    enclosure was confirmed.  The ends are now formed exactly."""
    import copy
    from certify_checker import verify
    from flint import ctx
    tr = trajectory.trace(ROTATION, 5)
    cert = tr.certificate
    assert verify(cert).ok and tr.M.contains(1)
    forgeries = []
    for exponent in range(-110, -60):
        rad, shift = 2**29, exponent - 29  # r = 2^29 2^shift
        mid = (1 << 300) + 1 + (rad << (300 + shift))  # times 2^-300: the lower end is 1 + 2^-300
        forged = copy.deepcopy(cert)
        forged["M"] = [str(mid), "-300", str(rad), str(shift)]
        forgeries.append(forged["M"])
        assert not verify(forged).ok, exponent
    from certify_checker.trajectory import agrees, read_ball
    with ctx.workprec(cert["norm_precision"]):
        assert not any(agrees(tr.M, read_ball(stated), cert["norm_precision"]) for stated in forgeries)
        # what the checker used to decide on: some forgeries' rounded-up reading holds the recomputed M
        assert any(arb(*read_ball(stated)).contains(tr.M) for stated in forgeries)


def test_a_certificate_at_more_than_14000_bits_is_read_by_the_checker():
    """At 16384 bits a stated midpoint has about 4930 digits, past Python's 4300-digit limit on
    int(text): the checker read it with int() and rejected every genuine certificate whose
    escalation went that far (examples/ffn-gelu.json over 12 layers reaches the 65536-bit cap)."""
    from pathlib import Path
    from certify_checker import verify
    example = Path(__file__).resolve().parents[1] / "examples" / "ffn-gelu.json"
    tr = trajectory.trace(str(example), 12, max_prec=16384)
    cert = tr.certificate
    assert cert["precision"] == 16384 and max(len(p["D"][0]) for p in cert["points"] if p["D"]) > 4300
    confirmation = verify(cert)
    assert confirmation.ok and tr.certified, confirmation.message


def test_M_is_enclosed_tightly_however_many_powers_of_V_it_takes():
    """The balls of V^k widen by about 1.38 per power for a rotation by 1 rad: at a fixed 128 bits
    M = max ||V^k|| was nan from T = 280, every value curve undecided, and the run escalated to the
    65536-bit cap (67 s for T = 500).  M's precision now grows until M is resolved."""
    from pathlib import Path
    from certify_checker import verify
    example = Path(__file__).resolve().parents[1] / "examples" / "rotation-20.json"
    tr = trajectory.trace(str(example), 300)
    assert tr.M.is_finite() and tr.M.rel_accuracy_bits() >= trajectory.RESOLVED_BITS and abs(float(tr.M.mid()) - 1) < 1e-9
    assert tr.verdict == "holds" and tr.certificate["norm_precision"] > trajectory.NORM_PRECISION
    assert verify(tr.certificate).ok and tr.certified


def test_a_value_matrix_beyond_binary64_skips_the_value_curves_instead_of_crashing():
    """V with an entry of 1e400: its float64 array holds inf, where the witnesses of M = max ||V^k||
    are found (np.linalg.norm gave nan, which passed the range test, and the SVD failed: exit 4)."""
    tr = trajectory.trace({"X": [[1, 0], [0, 1], [-1, 0.5]], "A": [[0.5, 0], [0, 0.5]],
                           "V": [["1e400", "0"], ["0", "1"]]}, 3)
    assert "value.bounded" in tr.skipped and "value.approach" in tr.skipped and tr.M is None
    assert tr.certified


def test_query_weights_beyond_binary64_are_traced_without_numpy_warnings():
    """W_Q with an entry of 1e3000: the float64 product holds inf and nan (its ball's midpoints give
    the witness), which printed a RuntimeWarning on stderr beside the table."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        tr = trajectory.trace({"X": [[1, 0], [0, 1], [-1, 0.5]], "W_Q": [["1e3000", 1e300], [3, 1]],
                               "W_K": [[1, 2], [0, 1]]}, 2)
    assert tr.points[0].D is not None and tr.certified


def test_the_composed_curve_in_log_form_contains_an_mpmath_iteration():
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "examples" / "pure-stack.json"
    config = json.loads(path.read_text())
    tr = trajectory.trace(str(path), 100, max_prec=256)
    with mp.workdps(60):
        norms = [oracle.spectral_norm(oracle.mat(layer["A"])) for layer in config["layers"]]
        log_b = mp.log(oracle.diameter(oracle.mat(config["X"])))
        for t in range(1, 101):
            a = norms[(t - 1) % 3]
            x = a * mp.exp(2 * log_b)  # mpmath's exponents are unbounded: no log form needed here
            log_b = mp.log(-mp.expm1(-x)) + log_b
            assert_contains(tr.points[t].log_curves["global.composed"], log_b, f"log g at t = {t}")


def test_cli_prints_logarithms_beyond_float64_and_writes_a_certificate_verify_confirms(tmp_path, capsys):
    from pathlib import Path
    example = str(Path(__file__).resolve().parents[1] / "examples" / "rotation-20.json")
    assert main(["trajectory", example, "--layers", "20", "--max-prec", "256", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "10^[-816367421.0" in out and "coordinates: centred" in out and "certified: the checker" in out
    assert "not certified" not in out.lower()
    assert (tmp_path / "trajectory.png").stat().st_size > 10_000
    data = json.loads((tmp_path / "trajectory.json").read_text())
    assert data["certified"] and data["points"][20]["log10_D_ball"].startswith("[-816367421.0")
    assert main(["verify", str(tmp_path / "trajectory-certificate.json")]) == 0


def test_logarithms_beyond_float64_are_printed_drawn_and_written_as_strict_json(tmp_path, capsys):
    """A doubly exponential collapse reaches log10 D_t = -C 3^t, beyond float64 from t = 646: the
    table prints the exponent's digits, the figure leaves those points out, and the JSON says null
    where a float would be -Infinity (not JSON)."""
    from pathlib import Path
    example = str(Path(__file__).resolve().parents[1] / "examples" / "layer.json")
    assert main(["trajectory", example, "--layers", "660", "--out", str(tmp_path), "--json", "-q"]) == 0
    printed = capsys.readouterr().out
    strict = json.loads(printed, parse_constant=lambda constant: pytest.fail(f"{constant} in the JSON"))
    last = strict["points"][-1]
    assert last["log10_D"] is None and last["log10_D_ball"].startswith("[-") and "e+" in last["log10_D_ball"]
    assert json.loads((tmp_path / "trajectory.json").read_text(), parse_constant=pytest.fail) == strict
    assert (tmp_path / "trajectory.png").stat().st_size > 10_000
    assert main(["trajectory", example, "--layers", "660", "-q"]) == 0
    assert "\n660  10^[-" in capsys.readouterr().out


def test_exponents_of_hundreds_of_digits_are_printed_in_scientific_notation(capsys):
    """At t = 1000 of a doubly exponential collapse log10 D_t has 477 digits, printed in full: lines of 1500
    characters. Exponents past a dozen digits are printed as 10^[-3.59304e+476 +/- ...] (the certificate keeps the balls)."""
    from pathlib import Path
    example = str(Path(__file__).resolve().parents[1] / "examples" / "layer.json")
    assert main(["trajectory", example, "--layers", "1000", "-q"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\n1000  10\^\[?-\d\.\d{5}e\+476", out), out[-2000:]
    assert max(len(line) for line in out.splitlines()) < 200
    assert main(["trajectory", example, "--layers", "20", "-q"]) == 0  # a short exponent keeps its digits
    assert re.search(r"\n20  +10\^\[-\d{4,}\.\d{4}", capsys.readouterr().out)


def test_uniform_attention_reaches_exact_consensus_and_is_still_printed_and_certified(tmp_path, capsys):
    # A = 0: every row of P is uniform, D_1 = 0 exactly; the curves are 0 (their logarithms -inf)
    path = write(tmp_path, {"X": [[1, 0], [0, 1], [-1, 0.5]], "A": [[0, 0], [0, 0]]})
    assert main(["trajectory", path, "--layers", "3", "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "certified: the checker" in out and "log not finite ok" in out
    tr = trajectory.trace(path, 3)
    assert all(p.D.is_zero() and p.D.is_exact() for p in tr.points[1:]) and tr.certified


def test_an_expanding_residual_stack_far_from_consensus_stays_resolved_in_centred_form(monkeypatch):
    # D grows to about 45 and the attention saturates: the rows far from consensus use P - Pi directly
    from pathlib import Path
    config = json.loads((Path(__file__).resolve().parents[1] / "examples" / "residual.json").read_text())
    tr = trajectory.trace(config, 6, max_prec=256)
    assert tr.representation == trajectory.CENTRED and all(p.resolved for p in tr.points) and tr.certified
    monkeypatch.setattr(oracle, "DPS", 200)
    steps = mp_trajectory(config, 6, 200)
    with mp.workdps(200):
        for p, ref in zip(tr.points, steps):
            assert_contains(p.D, ref["D"], f"D_{p.t}")
            if p.t < 6:
                assert_contains(p.tau, oracle.dobrushin(ref["P"]), f"tau_{p.t}")


def _example(name):
    from pathlib import Path
    return str(Path(__file__).resolve().parents[1] / "examples" / name)


def test_later_steps_run_at_the_accuracy_left_and_still_enclose_the_closed_form():
    """Near consensus D_t loses about log2(3) bits a layer: the first step needs the most precision
    and later ones ever less.  Each step runs above the accuracy of the D_t it starts from, states its
    precision in the certificate, and the checker recomputes it there; the enclosures still contain
    the antipodal closed form down to D_60 ~ 10^(-1.8e28)."""
    from certify_checker import verify
    T = 60
    tr = trajectory.trace(antipodal(), T)
    steps = tr.certificate["step_precisions"]
    assert steps == tr.step_precisions == [p.precision for p in tr.points] and steps[0] == tr.precision
    assert steps[-1] < tr.precision * 3 // 4  # later steps cheaper than the first
    for before, p in zip(tr.points, tr.points[1:]):
        assert p.precision >= min(tr.precision, before.D.rel_accuracy_bits() + trajectory.STEP_GUARD_BITS)
    assert tr.verdict == trajectory.HOLDS and tr.certified and verify(tr.certificate).ok
    exact = closed_form(T, mp.mpf(1), mp.mpf(3) / 4)
    with mp.workdps(DPS):
        for p in tr.points:
            assert_contains(p.D, exact[p.t], f"D_{p.t} at {p.precision} bits")
            if p.t < T:  # tau = P_11 - P_21 = tanh(lambda D^2 / 4)
                assert_contains(p.tau, mp.tanh(exact[p.t] ** 2 / 4), f"tau_{p.t} at {p.precision} bits")


def _restamped(cert, steps):
    """The certificate with other step precisions (None: the field removed) and a digest that matches them."""
    from certify.studies import trajectory_certificate
    out = {key: value for key, value in cert.items() if key != "step_precisions"}
    precisions = [cert["precision"], cert["curve_precision"], cert["norm_precision"]]
    if steps is not None:
        out["step_precisions"] = steps
        precisions.append(steps)
    out["inputs_sha256"] = trajectory_certificate.digest(cert["layers"], cert["inputs"], precisions)
    return out


def test_the_checker_recomputes_at_the_stated_step_precisions_and_refuses_others():
    from certify_checker import verify
    tr = trajectory.trace(_example("layer.json"), 60)
    cert, steps = tr.certificate, tr.certificate["step_precisions"]
    assert verify(cert).ok
    refused = {
        "every step at 53 bits (wider than stated)": _restamped(cert, [53] * len(steps)),
        "a step above the run's precision": _restamped(cert, [steps[0] + 64] + steps[1:]),
        "the list ends before the trajectory": _restamped(cert, steps[:30]),
        "one point too many": _restamped(cert, steps + [steps[-1]]),
        "not a list": _restamped(cert, steps[0]),
        "edited without the digest": {**cert, "step_precisions": [steps[0]] * len(steps)},
    }
    for what, edited in refused.items():
        confirmation = verify(edited)
        assert not confirmation.ok and "malformed" not in confirmation.message, what


def test_a_precision_above_the_first_step_s_is_rejected():
    """The precision is the run's first step's: a run computed at 53 bits, restamped "precision": 65536 with its
    digest redone, kept every enclosure true and was confirmed "at 65536 bits", a precision nothing ran at."""
    from certify.studies import trajectory_certificate
    from certify_checker import verify
    cert = trajectory.trace(_example("layer.json"), 5).certificate
    steps = cert["step_precisions"]
    assert steps[0] == cert["precision"] and verify(cert).ok
    for precision in (steps[0] + 1, 4096, 1 << 16):
        forged = {**cert, "precision": precision}
        forged["inputs_sha256"] = trajectory_certificate.digest(
            cert["layers"], cert["inputs"], [precision, cert["curve_precision"], cert["norm_precision"], steps])
        confirmation = verify(forged)
        assert not confirmation.ok and "first step" in confirmation.message, (precision, confirmation.message)


def test_a_certificate_without_step_precisions_is_read_as_every_step_at_its_precision(monkeypatch):
    """Certificates written before step precisions ran every step at `precision`: still confirmed."""
    from certify_checker import verify
    monkeypatch.setattr(trajectory, "_step_precision", lambda top, D: top)
    uniform = trajectory.trace(_example("layer.json"), 60).certificate
    assert set(uniform["step_precisions"]) == {uniform["precision"]} and verify(uniform).ok
    assert verify(_restamped(uniform, None)).ok


LAYER = __import__("pathlib").Path(__file__).resolve().parent.parent / "examples" / "layer.json"


def test_a_long_trajectory_is_priced_at_its_step_precisions(tmp_path):
    """The checker's work estimate priced every one of T steps at the top precision, while a centred run's
    steps run at less (step_precisions): 300 layers of examples/layer.json reach 729 bits at the first
    step, far less later.  At a work limit between the two estimates the engine writes and certifies the
    trajectory, and `certify verify` at that limit confirms it; a malformed list is priced at the top."""
    import certify_checker
    from certify.core.limits import Limits
    from certify_checker.trajectory import STEPS_KEY

    work = 7_000_000
    tr = trajectory.trace(LAYER, 300, limits=Limits(work=work))
    cert = tr.certificate
    top = {key: value for key, value in cert.items() if key != STEPS_KEY}
    assert certify_checker.over_limits(top, certify_checker.Limits(work=work))  # the premise: at the top, over
    assert tr.certified and min(cert[STEPS_KEY]) < cert["precision"], tr.confirmation
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(cert))
    assert main(["verify", str(path), "--limit", f"work={work}"]) == 0
    malformed = {**cert, STEPS_KEY: [53] * 10 + ["53"]}
    assert certify_checker.over_limits(malformed, certify_checker.Limits(work=work))


def test_a_trajectory_the_checker_would_refuse_is_refused_before_starting():
    """Minutes of work and then "not certified": the least certificate any run can write (one step at 53
    bits, its curves through every layer) is put to the checker's limits first, and refused as bad input,
    naming the limit and how to raise it."""
    from certify.core.limits import Limits

    with pytest.raises(BadInput, match=r"refused before starting.*work.*limits=Limits\(work=N\)"):
        trajectory.trace(LAYER, 300, limits=Limits(work=100_000))


def test_progress_counts_the_layers_of_each_attempt_then_the_checker():
    """The bar showed only the precision ("53 bits"): a user waits for layers."""
    seen = []
    tr = trajectory.trace(identity_ffn(antipodal()), 7, max_prec=128, progress=lambda *shown: seen.append(shown))
    assert {total for _, total, _ in seen} == {7} and seen[-1] == (7, 7, "the checker")
    attempts = [stage for _, _, stage in seen[:-1]]
    assert len(set(attempts)) > 1 and all(stage.startswith("at ") and stage.endswith(" bits") for stage in attempts)
    for stage in set(attempts):  # each attempt counts its layers from X_0 up, one at a time
        done = [d for d, _, s in seen[:-1] if s == stage]
        assert done == list(range(len(done))), (stage, done)
    assert f"at {tr.precision} bits" in attempts


def test_cli_progress_bar_shows_layers(tmp_path, capsys):
    path = write(tmp_path, cases.near_consensus())
    assert main(["trajectory", path, "--layers", "3", "--progress"]) == 0
    err = capsys.readouterr().err
    assert "/3 layers" in err, err


def test_every_curve_has_a_legend_label_that_renders(tmp_path):
    """A curve without a label was drawn under its bare name in the figure's legend."""
    from certify.figures import trajectory as figure
    assert set(figure.CURVE_LABELS) == set(trajectory.CURVES)
    config = tmp_path / "expansive.json"
    config.write_text(json.dumps(EXPANSIVE))
    assert main(["trajectory", str(config), "--layers", "3", "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "trajectory.png").stat().st_size > 0


def test_cli_progress_bar_shows_the_checker_as_it_begins(tmp_path, capsys, monkeypatch):
    """The bar redraws at most every half second: the checker's stage, entered right after the last layer, was
    drawn only once that much had passed, so through 3000 layers the bar stood at "2933/3000 layers, at 6825
    bits" for the 8 s the checker took, as if the run were still at its layers."""
    confirm, drawn = trajectory.certificate.confirm, []

    def watched(*args, **kwargs):
        drawn.append(capsys.readouterr().err)
        return confirm(*args, **kwargs)

    monkeypatch.setattr(trajectory.certificate, "confirm", watched)
    path = write(tmp_path, cases.near_consensus())
    assert main(["trajectory", path, "--layers", "3", "--progress"]) == 0
    assert len(drawn) == 1 and drawn[0].replace("\r", "\n").strip().splitlines()[-1].startswith(
        "certify trajectory: 3/3 layers"), drawn
    assert "the checker" in drawn[0].replace("\r", "\n").strip().splitlines()[-1], drawn


def test_the_benchmark_times_a_trajectory():
    """benchmarks.trajectory (README: it traces examples/layer.json through 500 to 3000 layers) failed at its first
    layer: its progress callback took the stage's name alone, where trace calls it with (done, layers, stage)."""
    from benchmarks import trajectory as bench
    line = bench.timed(3)
    assert line.startswith("T =     3: holds, certified True, ") and "(checker " in line, line


@pytest.mark.parametrize("name", ["trajectory.json", "trajectory-certificate.json"])
def test_a_configuration_among_the_files_out_writes_is_refused_before_any_work(tmp_path, capsys, name):
    """`certify trajectory DIR/trajectory.json --out DIR` wrote its results over the configuration it read, as
    `certify check CONFIG --out CONFIG` is refused for."""
    config = tmp_path / name
    config.write_text(LAYER.read_text())
    assert main(["trajectory", str(config), "--layers", "3", "--out", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: --out ") and "written over" in err and err.count("\n") == 1, err
    assert config.read_text() == LAYER.read_text() and sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_trajectory_through_a_standard_layernorm_with_a_large_eps_is_confirmed():
    """A pre-LN layer of the standard kind whose eps (1/2) is of the tokens' own spread: the checker's D_t must
    take eps into the LayerNorm's scale as certify does, or it rejects an honest certificate."""
    import certify

    ln = {"position": "pre", "kind": "standard", "gain": ["1", "2"], "bias": ["0", "1/4"], "eps": "1/2"}
    config = {"X": [[1, 0], [0, 1], [0.5, 0.2]], "layers": [{"A": [[1, 0], [0, 1]], "layernorm": ln}]}
    traced = certify.trajectory(config, layers=2, max_prec=128)
    assert traced.certificate["representation"] == "absolute"
    assert traced.certified, traced.confirmation


def test_a_trajectory_through_a_post_ln_layer_with_a_feed_forward_network_is_confirmed():
    """Post-LN with an FFN normalises twice, after the attention and after the FFN (certify's layer): the checker's
    D_t must do both, or it rejects an honest certificate (the tokens leave the FFN off the unit sphere)."""
    import certify

    ffn = {"W1": [["1", "0"], ["0", "2"], ["1", "1"]], "b1": ["0", "1/2", "-1/4"], "W2": [["1", "0", "1"], ["0", "3", "1"]],
           "b2": ["1/3", "0"], "activation": "relu"}
    config = {"X": [[1, 0], [0, 1], [0.5, 0.2]],
              "layers": [{"A": [[1, 0], [0, 1]], "ffn": ffn, "layernorm": {"position": "post", "kind": "sphere"}}]}
    traced = certify.trajectory(config, layers=2, max_prec=128)
    assert traced.certificate["representation"] == "absolute"
    assert traced.certified, traced.confirmation
