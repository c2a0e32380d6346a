"""The centred form X = 1 c^T + E (certify.core.centred) against an independent mpmath evaluation in
absolute coordinates at enough digits, on random stacks, down to depths where absolute coordinates
at the same working precision resolve nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import oracle
import pytest
from flint import arb, ctx
from mpmath import mp

import certify_checker as checker
from certify import engine
from certify.cli import main
from certify.core import centred, config, expr, quantities
from certify.core.arith import BALL, FLOAT64
from certify.core.layers import apply_layer, layer_arrays
from certify.engine import decide
from certify_checker import formula

ROOT = Path(__file__).resolve().parents[1]

PRECISION = 128
DPS = 2000  # mpmath digits: D_t down to about 1e-1900 keeps 100 digits


def random_stack(seed: int, kind: str) -> dict:
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 5)), int(rng.integers(1, 4))

    def layer():
        spec = {"A": (rng.normal(size=(d, d)) * 0.7).tolist()}
        if kind == "biased":  # W_Q, W_K with both biases and a temperature: the query bias moves the column term
            k = 2
            spec = {"W_Q": (rng.normal(size=(d, k))).tolist(), "W_K": (rng.normal(size=(d, k))).tolist(),
                    "b_Q": rng.normal(size=k).tolist(), "b_K": rng.normal(size=k).tolist(), "d_k": k, "beta": 0.5}
        if kind in ("value", "residual"):
            Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
            spec["V"] = (Q * (0.5 if kind == "residual" else 1.0)).tolist()
        if kind == "residual":
            spec["residual"] = True
        if kind == "causal":
            spec["mask"] = "causal"
        return spec
    return {"X": (rng.normal(size=(n, d)) * 0.6 + 3.0).tolist(), "layers": [layer() for _ in range(3)]}


def centred_run(cfg: dict, T: int):
    case = config.load(cfg)
    out = []
    with ctx.workprec(PRECISION):
        arrays = [layer_arrays(BALL, layer, case.n) for layer in case.layers]
        X = centred.centre(BALL, BALL.array(case.X))
        for t in range(T):
            step = centred.apply_layer(BALL, case.layers[t % 3], arrays[t % 3], X)
            out.append((quantities.diameter(BALL, X.E), quantities.consensus_distance(BALL, X.E),
                        centred.dobrushin(BALL, step.attention)))
            X = step.out
        out.append((quantities.diameter(BALL, X.E), quantities.consensus_distance(BALL, X.E), None))
    return out


def absolute_diameter(cfg: dict, T: int):
    case = config.load(cfg)
    with ctx.workprec(PRECISION):
        X = BALL.array(case.X)
        for t in range(T):
            X = apply_layer(BALL, case.layers[t % 3], X).out
        return quantities.diameter(BALL, X)


def mp_run(cfg: dict, T: int):
    specs = config.to_json(config.load(cfg))["layers"]
    with mp.workdps(DPS):
        X = oracle.mat(cfg["X"])
        out = []
        for t in range(T + 1):
            P = None
            if t < T:
                step = oracle.layer(specs[t % 3], X)
                P = step["P"]
            out.append((oracle.diameter(X), oracle.consensus_distance(X), None if P is None else oracle.dobrushin(P)))
            if t < T:
                X = step["out"]
        return out


def contains(ball, value) -> bool:
    low, high = (mp.mpf(str(v)) for v in (ball.lower().str(DPS // 2, radius=False, more=True),
                                          ball.upper().str(DPS // 2, radius=False, more=True)))
    return low <= value <= high


@pytest.mark.parametrize("kind", ["pure", "biased", "value", "causal", "residual"])
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow)])
def test_centred_enclosures_contain_an_absolute_mpmath_trajectory(kind, seed, monkeypatch):
    cfg = random_stack(seed, kind)
    monkeypatch.setattr(oracle, "DPS", DPS)
    T = 6
    mine, reference = centred_run(cfg, T), mp_run(cfg, T)
    with mp.workdps(DPS):
        for t, ((D, mu, tau), (D_ref, mu_ref, tau_ref)) in enumerate(zip(mine, reference)):
            assert contains(D, D_ref), f"D_{t}"
            assert contains(mu, mu_ref), f"mu_{t}"
            if tau is not None:
                assert contains(tau, tau_ref), f"tau_{t}"
            if D_ref > mp.mpf(10) ** (-DPS + 100):
                assert D.rel_accuracy_bits() >= PRECISION - 12 * (t + 1), f"D_{t} lost its relative accuracy"


def test_centred_form_resolves_where_absolute_coordinates_do_not(monkeypatch):
    monkeypatch.setattr(oracle, "DPS", DPS)
    cfg = random_stack(0, "pure")
    T = 6
    D_ref = mp_run(cfg, T)[-1][0]
    with mp.workdps(DPS):
        assert 0 < D_ref < mp.mpf(2) ** -(2 * PRECISION)  # far below what 128 absolute bits can see
        assert absolute_diameter(cfg, T).rel_accuracy_bits() < 0  # absolute coordinates: nothing left
        D = centred_run(cfg, T)[-1][0]
        assert D.rel_accuracy_bits() >= 64 and contains(D, D_ref)


@pytest.mark.parametrize("kind", ["pure", "biased", "value", "causal", "residual"])
def test_the_checker_makes_a_centred_step_as_the_engine_does(kind):
    """The checker's centred step, written again, forms the engine's balls: a stated value is confirmed at its own
    precision, with no finer recomputation (Z = 1 + ubar in the rows near consensus, the products by arb_mat, no
    product by the mask's ones, in both)."""
    from certify_checker import centred as checker_centred, forward
    cfg = random_stack(0, kind)
    case = config.load(cfg)
    layers = config.to_json(case)["layers"]
    with ctx.workprec(PRECISION):
        X, (c, E) = centred.centre(BALL, BALL.array(case.X)), checker_centred.centre(forward.matrix(cfg["X"]))
        for t in range(6):
            step = centred.apply_layer(BALL, case.layers[t % 3], layer_arrays(BALL, case.layers[t % 3], case.n), X)
            mine = checker_centred.centred_step(layers[t % 3], c, E)
            X, c, E = step.out, mine["c"], mine["E"]
            engines = [*step.attention.Delta.ravel(), *X.E.ravel(), *X.c]
            assert all(a.mid() == b.mid() and a.rad().mid() == b.rad().mid()
                       for a, b in zip(engines, [*sum(mine["Delta"], []), *sum(E, []), *c], strict=True)), t


HEAD = {"W_Q": [[1, 0.5, -1], [0.25, 1, 0.5]], "W_K": [[0.75, -0.5, 1], [1, 0.25, -0.5]], "b_Q": [0.5, -1, 2],
        "b_K": [1, 0, -0.5], "d_k": 2, "beta": 2}


@pytest.mark.parametrize("spec", [{"A": [[2, 0.5], [-0.25, 1.5]], "beta": 1.5},
                                  {"A": [[2, 0.5], [-0.25, 1.5]], "mask": "causal", "V": [[0, 1], [-1, 0.5]]},
                                  {**HEAD, "residual": True, "mask": [[1, 0, 1, 0, 0, 1], [0, 1, 0, 0, 1, 0],
                                                                      [1, 1, 1, 0, 0, 0], [0, 0, 1, 1, 0, 1],
                                                                      [1, 0, 0, 0, 1, 0], [0, 1, 1, 1, 0, 1]]}],
                         ids=["complete", "causal-value", "head-random-mask-residual"])
def test_a_step_with_rows_near_and_far_from_consensus_contains_mpmath_in_the_engine_and_the_checker(spec, monkeypatch):
    """Two tokens far from c, two 2^-4 from it and two 2^-200: one softmax with rows of P - Pi and rows in the expm1
    form (every |u| <= 1/2), some where Z = 1 + ubar is not 1 at 53 bits.  Each side, the engine's and the checker's
    own, is held to mpmath in absolute coordinates (Delta = P - Pi with Pi from the column term k, tau, and the output
    c' + e'_i), not only to the other side."""
    from certify_checker import centred as checker_centred
    monkeypatch.setattr(oracle, "DPS", DPS)
    c = [1.5, -0.5]
    E = [[0.875, -0.625], [-1.125, 0.75], [0.0625, -0.03125], [-0.046875, 0.0625], [2.0**-200, 3 * 2.0**-201],
         [-(2.0**-199), 2.0**-202]]
    n = len(E)
    case = config.load({"X": [[0, 0]] * n, "layers": [spec, spec]})
    layer, stated = case.layers[0], config.to_json(case)["layers"][0]
    with ctx.workprec(53):
        balls = centred.Centred(BALL.array(c), BALL.array(E))
        step = centred.apply_layer(BALL, layer, layer_arrays(BALL, layer, n), balls)
        engines = step.attention.Delta, centred.dobrushin(BALL, step.attention), step.out
        mine = checker_centred.centred_step(stated, list(balls.c), balls.E.tolist())
        checkers = (np.array(mine["Delta"], dtype=object),
                    checker_centred.centred_tau(mine["Pi"], mine["Delta"], mine["complete"]),
                    centred.Centred(np.array(mine["c"], dtype=object), np.array(mine["E"], dtype=object)))
    with mp.workdps(DPS):
        cm, Em = oracle.mat([c]), oracle.mat(E)
        reference = oracle.layer(stated, oracle.mat([c] * n) + Em)  # X = 1 c^T + E exactly
        A = reference["A"]
        if "A" in spec:
            k = A.T * cm.T
        else:  # x_i^T W_Q + b_Q against W_K^T e_j: the query bias joins the column term
            k = oracle.mat(spec["W_K"]) * (oracle.mat(spec["W_Q"]).T * cm.T + oracle.mat([spec["b_Q"]]).T)
            k *= mp.mpf(spec["beta"]) / mp.sqrt(spec["d_k"])
        q, w = Em * A * Em.T, [mp.exp((Em * k)[j]) for j in range(n)]
        mask = stated.get("mask") or [[1] * n for _ in range(n)]
        allowed = [[q[i, j] for j in range(n) if mask[i][j]] for i in range(n)]
        far = [max(abs(mp.expm1(x - max(row))) for x in row) > 0.5 for row in allowed]
        assert True in far and False in far  # both forms of Delta in one layer
        P = reference["P"]
        Delta = [[P[i, j] - (w[j] / mp.fsum(w[l] for l in range(n) if mask[i][l]) if mask[i][j] else 0)
                  for j in range(n)] for i in range(n)]
        tau = max(mp.fsum(abs(P[i, j] - P[l, j]) for j in range(n)) for i in range(n) for l in range(n)) / 2
        for side, (D, t, out) in (("engine", engines), ("checker", checkers)):
            assert all(contains(D[i, j], Delta[i][j]) for i in range(n) for j in range(n)), side
            assert contains(t, tau), side
            assert all(contains(out.c[m] + out.E[i, m], reference["out"][i, m])
                       for i in range(n) for m in range(2)), side


@pytest.mark.parametrize("exponent", [-3, -80, -300, -(2**62), -(2**70)])
def test_expm1_and_log1p_keep_relative_accuracy_down_to_huge_exponents(exponent):
    # arb's own expm1 keeps only about 28 bits once the exponent passes 2^62; the backend's does not
    from flint import arb, fmpz
    with ctx.workprec(PRECISION):
        x = arb((3, fmpz(exponent)))  # 3 * 2^exponent, exact
        for sign in (1, -1):
            values = np.array([sign * x], dtype=object)
            e, l = BALL.expm1(values)[0], BALL.log1p(values)[0]
            assert e.rel_accuracy_bits() >= PRECISION - 8 and l.rel_accuracy_bits() >= PRECISION - 8
            if exponent > -400:
                with mp.workdps(200):
                    point = sign * 3 * mp.mpf(2) ** exponent
                    assert contains(e, mp.expm1(point)) and contains(l, mp.log1p(point))
            else:  # beyond mpmath's comfortable range: expm1(x) and log1p(x) agree with x to 2^-PRECISION
                assert e.overlaps(values[0]) and l.overlaps(values[0])


def _ends(x) -> tuple[mp.mpf, mp.mpf]:
    """A ball's ends mid -+ rad, exactly at mpmath's working precision (enough bits for both)."""
    (m, e), (r, f) = x.mid().mid().man_exp(), x.rad().mid().man_exp()
    mid, rad = mp.ldexp(mp.mpf(int(m)), int(e)), mp.ldexp(mp.mpf(int(r)), int(f))
    return mid - rad, mid + rad


def _ball(value: mp.mpf) -> arb:
    """The exact ball of an mpf (mpmath keeps its sign apart from its mantissa)."""
    sign, man, exp, _ = value._mpf_
    return arb((-int(man) if sign else int(man), int(exp)))


@pytest.mark.parametrize("precision", [53, 128, 300])
def test_expm1_holds_mpmath_at_both_ends_of_every_ball_around_2_to_minus_the_precision(precision):
    """Below |x| <= 2^-prec expm1(x) is x times [1 +/- 2^-prec]; at x = 2^-prec itself expm1(x) / x - 1 is
    2^-(prec+1) and more, so a factor [1 +/- 2^-(prec+2)], or the product's branch taken a little above 2^-prec
    (the factor then falls short by more), misses mpmath's value at an end of some ball here.  Exact points, balls a
    few ulps wide and balls straddling 2^-prec, of both signs, in the engine (a ball and an array) and the checker,
    which agree exactly."""
    from flint import fmpz

    from certify_checker import centred as checker_centred
    with ctx.workprec(precision):
        balls = []
        for exponent in range(-precision - 3, -precision + 4):
            for mantissa in (1, 3, 7):
                point = arb((mantissa, fmpz(exponent - 2)))  # mantissa 2^(exponent - 2), exact
                for radius in (0, arb((1, fmpz(exponent - precision))), arb((1, fmpz(exponent - 3)))):
                    balls += [arb(point, radius), arb(-point, radius)]
        engine_array = BALL.expm1(np.array(balls, dtype=object))
        for ball, from_array in zip(balls, engine_array):
            engine_ball, checker_ball = BALL.expm1(ball), checker_centred.expm1(ball)
            assert all((y.mid(), y.rad()) == (engine_ball.mid(), engine_ball.rad()) for y in (from_array, checker_ball))
            if ball.rad() == 0:
                assert engine_ball.rel_accuracy_bits() >= precision - 2
            with mp.workprec(4 * precision + 64):
                for end in _ends(ball):
                    assert engine_ball.contains(_ball(mp.expm1(end))), (ball, end)



@pytest.mark.parametrize("precision", [2, 3, 5, 8, 13])
def test_expm1_holds_mpmath_over_balls_about_zero_and_at_low_precisions(precision):
    """Where 2^-prec is large (1/4 at 2 bits) expm1(t) / t - 1 reaches ~2^-(prec+1) on the product's branch, the
    least room below its factor's 2^-prec; and balls about 0 (or whose one end crosses it) reach the branch with an
    end of either sign.  Radii from 2^-(prec+9) of 2^-prec to just past it (python-flint rounds a radius up, so an
    end at exactly 2^-prec takes arb's own branch), in the engine and the checker, which agree exactly."""
    from flint import fmpz

    from certify_checker import centred as checker_centred
    with ctx.workprec(precision):
        tiny = arb((1, fmpz(-precision)))
        balls = []
        for shift in range(10):
            radius = arb((1, fmpz(-precision - shift)))
            balls += [arb(0, radius), arb(radius / 2, radius / 2), arb(-radius / 2, radius / 2),
                      arb(tiny - radius / 2, radius / 4), arb(radius / 4 - tiny, radius / 4)]
        assert sum(abs(ball) <= tiny for ball in balls) >= len(balls) // 2  # the product's branch, mostly
        for ball in balls:
            engine_ball, checker_ball = BALL.expm1(ball), checker_centred.expm1(ball)
            assert (checker_ball.mid(), checker_ball.rad()) == (engine_ball.mid(), engine_ball.rad())
            with mp.workprec(4 * precision + 64):
                for end in _ends(ball):
                    assert engine_ball.contains(_ball(mp.expm1(end))), (ball, end)

def test_float64_expm1_and_log1p_are_numpys():
    from certify.core.arith import FLOAT64
    x = np.array([1e-300, -1e-12, 0.5])
    assert np.array_equal(FLOAT64.expm1(x), np.expm1(x)) and np.array_equal(FLOAT64.log1p(x), np.log1p(x))


@pytest.mark.parametrize("kind", ["pure", "causal"])
def test_centred_tau_in_blocks_of_pairs_is_tau_in_one_sweep_and_contains_mpmath(kind, monkeypatch):
    """centred.dobrushin formed all n^3 / 2 differences at once (1.5 GB at n = 256, beyond the limits' memory at
    512): in blocks of two pairs it gives the ball one sweep gives, and that ball contains mpmath's tau."""
    cfg = random_stack(3, kind)
    case = config.load(cfg)
    with ctx.workprec(PRECISION):
        attention = centred.apply_layer(BALL, case.layers[0], layer_arrays(BALL, case.layers[0], case.n),
                                        centred.centre(BALL, BALL.array(case.X))).attention
        whole = centred.dobrushin(BALL, attention)
        monkeypatch.setattr(quantities, "PAIR_BLOCK", 2 * case.n)  # blocks of 2 pairs
        sizes, absolute = [], BALL.abs
        monkeypatch.setattr(type(BALL), "abs", lambda self, x: sizes.append(np.size(x)) or absolute(x))
        blocked = centred.dobrushin(BALL, attention)
    assert case.n * (case.n - 1) // 2 > 2 and max(sizes) <= 2 * case.n < sum(sizes)  # no more than a block at once
    assert (blocked.mid(), blocked.rad()) == (whole.mid(), whole.rad())
    monkeypatch.setattr(oracle, "DPS", 60)
    assert contains(blocked, mp_run(cfg, 1)[0][2])


# --- `certify check` of a stack in centred form (certify.engine.decide.carries_centred) -----------------------------

def deep_stack(T: int) -> dict:
    """examples/pure-stack.json's three layers cycled to T: D_t about D_{t-1}^3, D_8 ~ 10^-1807."""
    example = json.loads((ROOT / "examples" / "pure-stack.json").read_text())
    return {"X": example["X"], "layers": [example["layers"][t % 3] for t in range(T)]}


def near_consensus(cfg: dict) -> dict:
    """The stack's tokens moved to 1 + 2^-40 X: a spread absolute coordinates at 53 bits cannot follow through a layer."""
    return {**cfg, "X": [[1 + x * 2.0**-40 for x in row] for row in cfg["X"]]}


@pytest.mark.parametrize("cfg, claim", [(deep_stack(8), "collapse.global"),
                                        (near_consensus(random_stack(0, "biased")), "collapse.global"),
                                        (near_consensus(random_stack(1, "residual")), "residual.two_sided")],
                         ids=["deep-pure", "biased-heads", "residual"])
def test_a_stack_left_undecided_at_the_first_rung_is_checked_in_centred_form_as_mpmath_has_it(cfg, claim, monkeypatch):
    """The first rung in absolute coordinates cannot resolve these; the next, in centred form, decides them, and every
    enclosure the certificate states, layer by layer, contains an absolute mpmath evaluation at 2300 digits.  At 20
    layers of pure-stack the composed bound itself is down to 10^-20847 (layer 16): decided at 106 bits, where
    absolute coordinates at up to 4096 bits decide nothing."""
    result = engine.check(cfg, claim=claim)
    cert = result.certificate
    assert result.verdict == engine.HOLDS and result.precision > 53 and cert["representation"] == "centred"
    assert checker.verify(cert).ok
    monkeypatch.setattr(oracle, "DPS", DPS + 300)
    reference = oracle.quantities(cfg)
    with mp.workdps(DPS + 300):
        for t, (stated, exact) in enumerate(zip(cert["values"]["layers"], reference)):
            assert {"D", "D_out"} <= set(stated)
            for name in set(stated) & set(exact):
                assert contains(arb(stated[name]), exact[name]), (t, name)
    if cfg == deep_stack(8):
        deeper = engine.check(deep_stack(20), claim="collapse.trajectory")
        assert deeper.precision == 106 and deeper.verdict == engine.HOLDS
        monkeypatch.setattr(decide, "carries_centred", lambda case, claim: False)
        assert engine.check(deep_stack(20), claim="collapse.trajectory", max_prec=4096).verdict == engine.UNDECIDED


def test_a_violation_deep_in_a_stack_is_found_confirmed_and_mpmath_sees_it(tmp_path, capsys, monkeypatch):
    """A bound that fails only once D < 10^-100 (layer 6 of pure-stack, D_6 ~ 10^-201): violated from the CLI at the
    second rung, in centred form, the certificate confirmed by `certify verify`, and mpmath finds layer 6 the first
    that violates it."""
    path, out = tmp_path / "deep.json", tmp_path / "violated.json"
    path.write_text(json.dumps(deep_stack(8)))
    bound = "a*D**3*max(1e-9, min(1, (D*1e100)**2))"
    assert main(["check", str(path), "--bound", bound, "--out", str(out)]) == 1
    assert capsys.readouterr().out.startswith("VIOLATED: bound: a*D**3")
    cert = json.loads(out.read_text())
    assert cert["representation"] == "centred" and [c["holds"] for c in cert["values"]["comparisons"]] == [True] * 6 + [False] * 2
    assert main(["verify", str(out)]) == 0
    monkeypatch.setattr(oracle, "DPS", DPS + 300)
    with mp.workdps(DPS + 300):
        sides = [(q["D_out"], q["a"] * q["D"] ** 3 * max(mp.mpf("1e-9"), min(1, (q["D"] * mp.mpf("1e100")) ** 2)))
                 for q in oracle.quantities(deep_stack(8))]
        assert [lhs <= rhs for lhs, rhs in sides] == [True] * 6 + [False] * 2


def test_a_stated_representation_is_followed_only_where_it_applies():
    """The checker recomputes in the stated form; "centred" stated of layers with an FFN, or any other word, is
    rejected, and a centred certificate stripped of it is recomputed in absolute coordinates, which cannot confirm
    8 layers of pure-stack at the precision they were decided at (outside the digest, the field can only make the
    checker's balls wider)."""
    deep = engine.check(deep_stack(8), claim="collapse.global").certificate
    for stated in ("absolute", "Centred", True, None):
        verdict = checker.verify({**deep, "representation": stated})
        assert not verdict.ok and "representation" in verdict.message
    stripped = {key: value for key, value in deep.items() if key != "representation"}
    assert not checker.verify(stripped).ok
    layer = {"A": [[0.5, 0], [0, 0.5]], "ffn": {"W1": [[1, 0], [0, 1]], "b1": [0, 0], "W2": [[1, 0], [0, 1]],
                                                  "b2": [0, 0], "activation": "relu"}}
    ffn = engine.check({"X": [[1, 0], [0, 1], [-1, 0.5]], "layers": [layer, layer]}, claim="ffn.lipschitz").certificate
    assert ffn is not None and "representation" not in ffn and checker.verify(ffn).ok
    verdict = checker.verify({**ffn, "representation": "centred"})
    assert not verdict.ok and "feed-forward" in verdict.message


@pytest.mark.parametrize("D", ["1e-5000", "1e-30", "0.5", "3"])
def test_one_minus_exp_keeps_its_relative_accuracy_in_the_engine_and_the_checker(D):
    """(1 - exp(-a D^2)) D is evaluated with 1 - exp(u) as -expm1(u) by both: at D = 10^-5000 and 53 bits, a
    subtraction would leave [+/- 1e-5000]; both balls contain mpmath's value with 50 bits or more."""
    text, a = "(1 - exp(-a*D**2))*D", arb(2)
    with ctx.workprec(53):
        engine_ball = expr.parse(text).evaluate(BALL, {"a": a, "D": arb(D)})
        checker_ball = formula.evaluate(text, lambda name: a if name == "a" else arb(D))
    with mp.workdps(11000):
        exact = -mp.expm1(-2 * mp.mpf(D) ** 2) * mp.mpf(D)
        for ball in (engine_ball, checker_ball):
            assert ball.rel_accuracy_bits() >= 50 and contains(ball, exact)
    assert expr.parse(text).evaluate(FLOAT64, {"a": 2.0, "D": float(D)}) == -np.expm1(-2 * float(D) ** 2) * float(D)


@pytest.mark.parametrize("one", ["1.0000000000000000001", "0.99999999999999999999"])
def test_a_literal_near_1_minus_exp_is_that_literal_not_1_in_the_checker(one):
    """Only a literal that is exactly 1 makes 1 - exp(u) the -expm1(u) form: 1.0000000000000000001 reads as 1.0 in
    binary64, and the checker confirmed "holds" of D_out <= -(1.0000000000000000001 - exp(0*D)) (a bound of -1e-19)
    on two equal tokens, D_out = 0."""
    text = f"-({one} - exp(0*D))"
    with ctx.workprec(128):
        value = formula.evaluate(text, lambda name: arb(0))
        assert value.contains(1 - arb(one)) and not value.contains(0)
    cfg = {"X": [[1, 2], [1, 2]], "layers": [{"A": [[1, 0], [0, 1]]}] * 2}
    cert = engine.check(cfg, bound="-(1 - exp(0*D))").certificate
    forged = {**cert, "bound": text, "values": {**cert["values"], "comparisons": [
        {**entry, "rhs_expr": entry["rhs_expr"].replace("(1 - exp", f"({one} - exp")}
        for entry in cert["values"]["comparisons"]]}}
    forged["inputs_sha256"] = checker.inequality.digest(forged)
    assert not checker.verify(forged).ok


@pytest.mark.parametrize("claim", ["collapse.global", "collapse.tau"])
def test_a_certificate_stating_1_minus_exp_subtracted_as_written_is_confirmed(claim, monkeypatch):
    """Certificates written before 1 - exp(u) was evaluated as -expm1(u) state the subtraction's ball: honest but,
    with a D^2 ~ 1e-13, some 40 bits less accurate than the checker's own, and they were rejected as "not as accurate
    as the precision gives".  They are confirmed, as accurate as the formula written gives; one looser again is not."""
    from certify.engine import certificate
    from certify_checker import exact
    cfg = {"X": [[1 + k * 1e-7, 1 - k * 2e-7] for k in range(5)], "A": [[1, 0.5], [-0.25, 2]]}
    with monkeypatch.context() as earlier:  # as certify wrote them: subtracted, and confirmed by no checker
        earlier.setattr(type(BALL), "one_minus_exp", staticmethod(lambda x: 1 - BALL.exp(x)))
        earlier.setattr(certificate, "confirm", lambda *args, **kwargs: checker.Confirmation(True, "confirmed"))
        written = engine.check(cfg, claim=claim).certificate
    assert engine.check(cfg, claim=claim).certificate["values"] != written["values"]
    assert checker.verify(written).ok
    entry = written["values"]["comparisons"][0]
    with ctx.workprec(written["precision"]):
        looser = arb(entry["rhs"])
        entry["rhs"] = (looser + arb(0, looser.rad() * 2**exact.slack(written["precision"]) * 4)).str(20, radius=True)
    written["values"]["bound"] = entry["rhs"]
    verdict = checker.verify(written)
    assert not verdict.ok and "not as accurate" in verdict.message


def test_a_certificate_decided_by_1_minus_exp_subtracted_as_written_is_confirmed(monkeypatch):
    """-expm1(u) at 53 bits can be a wider ball than 1 - exp(u) (u = -1.513671875: 4 times), so a certificate written
    before 1 - exp(u) was evaluated as -expm1(u), decided by the subtraction's ball at its precision, was rejected
    as "the checker finds undecided".  Either ball encloses the true value, so either decides the comparison."""
    from certify.engine import certificate
    cfg = {"X": [[0.0], [1.25]], "A": [[0.96875]]}
    bound = "(1 - exp(-a*D**2))*D - 0.57536868415439778"
    with monkeypatch.context() as earlier:  # as certify wrote them: subtracted, and confirmed by no checker
        earlier.setattr(type(BALL), "one_minus_exp", staticmethod(lambda x: 1 - BALL.exp(x)))
        earlier.setattr(certificate, "confirm", lambda *args, **kwargs: checker.Confirmation(True, "confirmed"))
        written = engine.check(cfg, bound=bound, max_prec=53).certificate
    assert (written["verdict"], written["precision"]) == ("holds", 53)
    assert engine.check(cfg, bound=bound, max_prec=53).verdict == "undecided"  # -expm1's ball does not decide it
    verdict = checker.verify(written)
    assert verdict.ok, verdict.message
