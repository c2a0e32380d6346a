"""Soundness audit of the engine-side enclosures that are reported without the checker.

Two kinds of tests: regressions for problems found (each failed before its fix), and guards that
attack the witness arguments (spectral norm, smallest eigenvalue, thin factors) with adversarial
witnesses and inputs, against an independent mpmath computation at 60 digits.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import mpmath
import numpy as np
import oracle
import pytest
from flint import arb, arb_mat, ctx
from mpmath import mp

from certify.core import spectral
from certify.studies import trajectory
from certify.core import thin_norm
from certify.studies.models.configuration import configuration_stats, smallest_eigenvalue
from certify.studies.wu.spot_check import SpotCheck

DPS = 60


def endpoints(x: arb):
    """The exact endpoints of a ball as mpmath numbers (infinite when the ball is not finite)."""
    if not x.is_finite():
        return -mp.inf, mp.inf
    return mp.mpf(x.lower().str(DPS + 20, radius=False)), mp.mpf(x.upper().str(DPS + 20, radius=False))


def assert_encloses(x: arb, value, what: str):
    low, high = endpoints(x)
    assert low <= value <= high, f"{what}: {x} misses {mp.nstr(value, 25)}"


def mp_norm(A: np.ndarray):
    return max(mpmath.svd_r(mp.matrix(A.tolist()), compute_uv=False))


# --- regressions ---------------------------------------------------------------------------------

# Two tokens 1e-40 apart next to a size-1/3 coordinate: at 53 bits D_0 has no correct bit, so the
# first pass of the adaptive precision has no resolved layer at all.
NEAR = Fraction(1, 3)
CLOSE_PAIR = {"X": [[str(NEAR), "0"], [str(NEAR + Fraction(1, 10**40)), "0"]], "A": [[1, 0], [0, 1]],
              "V": [["3/5", "-4/5"], ["4/5", "3/5"]]}


def test_value_curves_survive_an_unresolved_first_pass(monkeypatch):
    # Before: _approach took max() over no resolved layer and raised ValueError at 53 bits.
    tr = trajectory.trace(CLOSE_PAIR, 2)
    assert tr.precision > trajectory.START_PRECISION and tr.resolved_through == 2
    monkeypatch.setattr(oracle, "DPS", 3000)
    with mp.workdps(3000):
        X = oracle.mat(CLOSE_PAIR["X"])
        spec = {k: v for k, v in CLOSE_PAIR.items() if k != "X"}
        states, Y = [X], X
        for _ in range(4):  # Y_t = Q_t X_0: two tokens collapse cubically, Y_4 spreads below 1e-3000
            step = oracle.layer(spec, states[-1])
            states.append(step["out"])
            Y = step["P"] * Y
        c = mp.matrix([(Y[0, j] + Y[1, j]) / 2 for j in range(2)])
        image, V = c, oracle.mat(CLOSE_PAIR["V"])
        for p in tr.points:
            X_t = states[p.t]
            r = max(mp.norm(X_t[i, :].T - image) for i in range(2))
            low, high = endpoints(p.approach)
            assert low <= r <= high, f"approach at t = {p.t}"
            image = V * image


def test_trajectory_with_D0_unresolved_at_the_cap_reports_instead_of_crashing():
    # Before: resolved_through (and _approach) raised ValueError on an empty max().
    tr = trajectory.trace(CLOSE_PAIR, 2, max_prec=trajectory.START_PRECISION)
    assert tr.resolved_through == -1
    assert tr.verdict == trajectory.UNDECIDED and tr.exit_code == 3
    assert all(check == trajectory.UNRESOLVED for p in tr.points for check in p.checks.values())


def test_spot_check_with_a_nan_enclosure_certifies_nothing():
    # Before: interval() raised, and assessment() read the nan comparisons as "float64 lies below
    # the certified upper bound".
    spot = SpotCheck("planted", 1, 0.5, arb("nan"), 128)
    assert spot.interval() == "[0, inf]"
    assert "nothing is known" in spot.assessment() and "below" not in spot.summary()


def test_spot_check_of_an_exact_zero_does_not_divide_by_it():
    # Before: float64 > 0 = upper led to (f / 0).lower(), a nan with no exact value (ValueError).
    spot = SpotCheck("planted", 1, 1e-300, arb(0), 128)
    assert spot.interval() == "[0, 0]" and "exact value is 0" in spot.assessment()
    assert not spot.float64_inside


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_spot_check_never_calls_a_non_finite_float64_inside_or_below(value):
    # Before: arb's nan ball "contains" nan, and nan > upper is False, read as "below the bound".
    for enclosure in (arb("0.5 +/- 1e-20"), arb("nan")):
        spot = SpotCheck("planted", 1, value, enclosure, 128)
        assert not spot.float64_inside
        assert spot.assessment() == "float64 is not a finite number: certainly wrong"


def test_spot_check_relative_error_interval_is_clipped_at_zero():
    spot = SpotCheck("planted", 1, 0.5, arb("0.5 +/- 1e-20"), 128)
    low = spot.assessment().split("[")[1].split(",")[0]
    assert float(low) >= 0


# --- guards: the witness arguments against adversarial witnesses and inputs ----------------------

def matrices(rng):
    for n, d in [(1, 1), (2, 1), (1, 3), (2, 2), (4, 3), (3, 5)]:
        A = rng.normal(size=(n, d))
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        yield "gaussian", A
        yield "repeated singular values", U @ np.diag(np.full_like(s, 3.0)) @ Vt
        yield "nearly rank-deficient", U @ np.diag(np.r_[s[:-1], 1e-14]) @ Vt
        yield "huge", A * 1e150
        yield "tiny", A * 1e-150
        yield "zero", np.zeros((n, d))
        yield "rank one", np.outer(rng.normal(size=n), rng.normal(size=d))


def witnesses(A, rng):
    good = spectral.witness(A)
    yield "svd", good
    yield "random", spectral.witness(rng.normal(size=A.shape))
    yield "scaled", dataclasses.replace(good, basis=good.basis * 1.3, top=good.top * 7)  # of A^T where A is wide
    yield "perturbed", dataclasses.replace(good, basis=good.basis + 0.2 * rng.normal(size=good.basis.shape))


def test_spectral_enclosure_holds_for_any_witness():
    rng = np.random.default_rng(11)
    with mp.workdps(DPS), ctx.workprec(53):
        for kind, A in matrices(rng):
            true = mp_norm(A)
            ball = np.array(arb_mat(A.tolist()).tolist(), dtype=object)
            for name, w in witnesses(A, rng):
                assert_encloses(spectral.enclose(ball, w), true, f"||A||_2, {kind} {A.shape}, {name} witness")


def test_smallest_eigenvalue_holds_for_any_witness():
    rng = np.random.default_rng(12)
    with mp.workdps(DPS), ctx.workprec(53):
        for trial in range(60):
            n = 1 + trial % 6
            B = rng.normal(size=(n, n))
            M = B @ B.T if trial % 2 else B + B.T  # positive semidefinite or indefinite
            _, U = np.linalg.eigh(M)
            for name, W in (("eigh", U), ("reversed", U[:, ::-1].copy()), ("random", rng.normal(size=(n, n))),
                            ("perturbed", U + 0.3 * rng.normal(size=(n, n)))):
                true = min(mp.eigsy(mp.matrix(M.tolist()))[0])
                assert_encloses(smallest_eigenvalue(arb_mat(M.tolist()), W), true, f"lambda_min, {name}")


def test_thin_factor_norm_on_adversarial_factors():
    rng = np.random.default_rng(13)
    with mp.workdps(DPS), ctx.workprec(53):
        for d, k in [(1, 1), (2, 1), (3, 2), (6, 3), (4, 4), (3, 5)]:
            for kind in ("gaussian", "equal columns", "nearly equal columns", "zero", "scaled column"):
                L, R = rng.normal(size=(d, k)), rng.normal(size=(d, k))
                if kind == "equal columns" and k > 1:
                    R[:, 1] = R[:, 0]
                if kind == "nearly equal columns" and k > 1:
                    R[:, 1] = R[:, 0] + 1e-12 * rng.normal(size=d)
                if kind == "zero":
                    R[:] = 0
                if kind == "scaled column":
                    R[:, 0] *= 1e8
                true = max(mpmath.svd_r(mp.matrix(L.tolist()) * mp.matrix(R.tolist()).T, compute_uv=False))
                enclosure = thin_norm.product_norm(thin_norm.ball_matrix(L), thin_norm.ball_matrix(R))
                assert_encloses(enclosure, true, f"||L R^T||_2, {kind}, d = {d}, k = {k}")


def test_certified_rank_is_never_claimed_for_affinely_dependent_tokens():
    rng = np.random.default_rng(14)
    with ctx.workprec(53):
        for n, d in [(2, 1), (3, 2), (4, 4), (3, 5)]:  # n - 1 <= d: full rank would be n - 1
            X = rng.normal(size=(n, d))
            X[-1] = X[0]  # a repeated token: the centred rank is below min(n - 1, d)
            stats = configuration_stats(X)
            assert not stats.rank_certified and stats.sigma_min.contains(0)
