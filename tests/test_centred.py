"""The centred form X = 1 c^T + E (certify.core.centred) against an independent mpmath evaluation in
absolute coordinates at enough digits, on random stacks, down to depths where absolute coordinates
at the same working precision resolve nothing."""

from __future__ import annotations

import numpy as np
import oracle
import pytest
from flint import ctx
from mpmath import mp

from certify.core import centred, config, quantities
from certify.core.arith import BALL
from certify.core.layers import apply_layer, layer_arrays

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
