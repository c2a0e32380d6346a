"""Ball enclosures contain an independent 60-digit mpmath evaluation, and are tight."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, arb_mat, ctx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpmath import mp

from certify import engine
from certify.core import config, masks, spectral
from certify.core.arith import BALL, FLOAT64
from certify.claims import Claim, Inequality

import certify_checker.forward as checker_forward
import oracle

NAMES = ("D", "D_out", "D_PX", "tau", "a", "gap", "mu", "mu_out")
EVERYTHING = Claim(id="all", statement="", source="", hypotheses="", applies=lambda case: None,
                   inequalities=(Inequality("D_out", "D_PX + tau + a + gap + D + mu + mu_out"),))


def contains(ball: arb, value) -> bool:
    """The ball contains the oracle's value (read at 250 bits, far finer than the ball)."""
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, oracle.DPS, strip_zeros=False)))


def enclosures(cfg: dict, precision: int):
    witnesses: dict = {}
    case = config.load(cfg)
    engine.evaluate(FLOAT64, case, EVERYTHING, witnesses)
    with ctx.workprec(precision):
        views, _ = engine.evaluate(BALL, case, EVERYTHING, witnesses)
    return views


def dyadic_floats(scale):
    return st.integers(-64, 64).map(lambda k: k * scale / 16)


@st.composite
def layers(draw):
    n = draw(st.integers(2, 5))
    d = draw(st.integers(1, 4))
    scale = draw(st.sampled_from([2.0**-12, 0.25, 1.0, 4.0]))
    X = [[draw(dyadic_floats(scale)) for _ in range(d)] for _ in range(n)]
    if draw(st.booleans()):
        spec = {"A": [[draw(dyadic_floats(1.0)) for _ in range(d)] for _ in range(d)]}
    else:
        d_k = draw(st.integers(1, 3))
        spec = {"W_Q": [[draw(dyadic_floats(1.0)) for _ in range(d_k)] for _ in range(d)],
                "W_K": [[draw(dyadic_floats(1.0)) for _ in range(d_k)] for _ in range(d)],
                "b_Q": [draw(dyadic_floats(1.0)) for _ in range(d_k)],
                "b_K": [draw(dyadic_floats(1.0)) for _ in range(d_k)],
                "beta": draw(st.sampled_from(["1", "0.3", "1/7", "2"]))}
    if draw(st.booleans()):
        spec["mask"] = draw(st.sampled_from(["causal", "sliding", "uni", "complete"]))
    return {"X": X, **spec}


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layers())
def test_enclosures_contain_the_mpmath_values(cfg):
    cfg = dict(cfg)
    if isinstance(cfg.get("mask"), str):
        cfg["mask"] = masks.named_mask(cfg["mask"], len(cfg["X"]))  # the oracle reads matrices
    expected = oracle.quantities(cfg)[0]
    view = enclosures(cfg, 53)[0]
    for name in NAMES:
        ball = view.get(name)
        assert contains(ball, expected[name]), (name, ball, expected[name])


@settings(max_examples=60, deadline=None)
@given(layers())
def test_enclosures_are_tight(cfg):
    """At 200 bits every quantity but a (limited by its float64 witness) is accurate to 150 bits."""
    view = enclosures(cfg, 200)[0]
    for name in ("D", "D_out", "tau"):
        ball = view.get(name)
        assert ball.rad() <= abs(ball.mid()) * 2.0**-150 + 2.0**-150 * (1 + abs(view.get("D").mid())), (name, ball)
    a = view.get("a")
    assert a.rad() <= a.mid() * 1e-12 + 1e-30


def test_spectral_norm_is_far_tighter_than_frobenius():
    rng = np.random.default_rng(0)
    A = np.round(rng.normal(size=(16, 16)) * 64) / 64
    cfg = {"X": rng.normal(size=(3, 16)).tolist(), "A": A.tolist()}
    a = enclosures(cfg, 53)[0].get("a")
    true = np.linalg.svd(A, compute_uv=False)[0]
    assert a.contains(arb(float(true))) or abs(float(a.mid()) - true) < 1e-12 * true
    assert float(a.rad()) < 1e-12 * true
    assert np.linalg.norm(A) > 1.5 * true  # Frobenius is loose: a sits in an exponent


def test_stack_enclosures_follow_the_trajectory():
    rng = np.random.default_rng(5)
    cfg = {"X": (np.round(rng.normal(size=(4, 2)) * 32) / 32).tolist(),
           "layers": [{"A": (np.round(rng.normal(size=(2, 2)) * 32) / 32).tolist()} for _ in range(3)]}
    expected = oracle.quantities(cfg)
    views = enclosures(cfg, 106)
    for view, values in zip(views, expected):
        for name in ("D", "D_out", "tau", "a"):
            assert contains(view.get(name), values[name]), (view.t, name)


def test_spectral_norm_enclosures_of_engine_and_checker_contain_mpmath():
    """||A||_2 from a witness (Gershgorin row sums of |E|, drift ||W^T W - I||_F) in the
    engine and in the checker: both contain the 60-digit singular value, also with a perturbed
    witness basis (the drift term then matters) and a zero column (E has zero rows), and a
    basis far from orthogonal gives no upper bound (engine) or is rejected (checker)."""
    rng = np.random.default_rng(11)
    for A in (rng.normal(size=(7, 7)), np.hstack([rng.normal(size=(5, 4)), np.zeros((5, 1))])):
        w = spectral.witness(A)
        tilted = spectral.NormWitness(basis=w.basis + 1e-9 * rng.normal(size=w.basis.shape), top=w.top)
        with mp.workdps(oracle.DPS):
            true = oracle.spectral_norm(oracle.mat(A.tolist()))
        for witness in (w, tilted):
            engine_ball = spectral.enclose(arb_mat([[arb(v) for v in row] for row in A.tolist()]), witness)
            checker_ball = checker_forward.spectral_norm([[arb(v) for v in row] for row in A.tolist()],
                                                         {"basis": witness.basis.tolist(), "top": witness.top.tolist()})
            for ball in (engine_ball, checker_ball):
                assert contains(ball, true), ball
                assert float(ball.rad()) < 1e-6 * float(true)
    far = spectral.NormWitness(basis=2 * np.eye(3), top=np.ones(3))
    assert not spectral.enclose(arb_mat([[arb(1), arb(0), arb(0)]] * 3), far).is_finite()
    with pytest.raises(ValueError, match="not nearly orthogonal"):
        checker_forward.spectral_norm([[arb(1), arb(0), arb(0)]] * 3, {"basis": far.basis.tolist(), "top": [1.0] * 3})


def test_the_witness_drift_in_engine_and_checker_contains_the_mpmath_frobenius_norm():
    """||G||_F, the drift of a witness basis, as one dot product of G's entries (engine and checker):
    it contains the 60-digit norm, on square and rectangular matrices, balls of entries of every size,
    tiny entries (a drift of about 1e-16) and a zero matrix, at 53 and 200 bits."""
    rng = np.random.default_rng(12)
    cases = [rng.normal(size=(6, 6)), rng.normal(size=(3, 8)) * 1e-16, rng.normal(size=(9, 2)) * 1e100,
             np.zeros((4, 4)), np.linalg.qr(rng.normal(size=(5, 5)))[0]]
    for M in cases:
        for precision in (53, 200):
            with ctx.workprec(precision):
                balls = arb_mat([[arb(v, abs(v) * 1e-10) for v in row] for row in M.tolist()])
                with mp.workdps(oracle.DPS):
                    true = mp.sqrt(mp.fsum(mp.mpf(v) ** 2 for v in M.ravel().tolist()))
                for drift in (spectral.frobenius(balls), checker_forward.frobenius(balls)):
                    assert contains(drift, true), (M.shape, precision, drift)
                    assert float(drift.rad()) <= 1e-9 * float(true) + 1e-300


def test_tau_in_blocks_of_pairs_is_tau_in_one_sweep_and_contains_mpmath(monkeypatch):
    """dobrushin forms the pairwise minima in blocks of pairs (all n^3/2 at once were 1 GB at n = 256): with
    blocks of two pairs, balls and float64 (a batch) give what one sweep gives, tier 3 the same midpoint, and
    both enclosures contain mpmath's tau."""
    from certify.core import quantities
    from certify.search.tier3 import TIER3
    rng = np.random.default_rng(13)
    n = 9
    S = rng.normal(scale=3, size=(2, n, n))
    P = np.exp(S - S.max(axis=-1, keepdims=True))
    P /= P.sum(axis=-1, keepdims=True)
    balls = np.array([[arb(v) for v in row] for row in P[0].tolist()], dtype=object)
    whole = {"ball": quantities.dobrushin(BALL, balls), "float64": quantities.dobrushin(FLOAT64, P),
             "tier3": quantities.dobrushin(TIER3, TIER3.array(P[0].tolist()))}
    monkeypatch.setattr(quantities, "PAIR_BLOCK", 2 * n)  # blocks of 2 pairs: 18 blocks of the 36 pairs
    blocked = {"ball": quantities.dobrushin(BALL, balls), "float64": quantities.dobrushin(FLOAT64, P),
               "tier3": quantities.dobrushin(TIER3, TIER3.array(P[0].tolist()))}
    assert (blocked["ball"].mid(), blocked["ball"].rad()) == (whole["ball"].mid(), whole["ball"].rad())
    assert blocked["ball"].rad() < 1e-14
    assert np.array_equal(blocked["float64"], whole["float64"]) and blocked["float64"].shape == (2,)
    # tier 3's hull of the blocks' minima rounds its radius once more: a few units in the last place wider
    assert blocked["tier3"].mid == whole["tier3"].mid and whole["tier3"].rad <= blocked["tier3"].rad < 1e-15
    with mp.workdps(oracle.DPS):
        true = oracle.dobrushin(mp.matrix(P[0].tolist()))
        assert contains(blocked["ball"], true)
        assert abs(true - float(blocked["tier3"].mid)) <= float(blocked["tier3"].rad)


def test_ball_products_of_remembered_matrices_contain_mpmath():
    """Ball.matmul keeps the arb_mat of a matrix it made or read (and of its transposed view): chained
    products through remembered matrices, their transposes and a fresh array all enclose mpmath's."""
    rng = np.random.default_rng(11)
    X_f = rng.standard_normal((5, 3)) / 3
    W_f = rng.standard_normal((3, 2))
    with ctx.workprec(30):  # coarse, so that radii are visible and a lost one would show
        X = BALL.array(config.parse({"X": X_f.tolist(), "A": np.eye(3).tolist()}).X)
        Q = BALL.matmul(X, BALL.array(W_f.tolist()))  # X remembered from reading
        G = BALL.matmul(Q, np.swapaxes(Q, -1, -2))  # Q and its transposed view
        Y = Q - BALL.exact_centre(Q[:1, :])  # a fresh array, then its transpose
        H = BALL.matmul(Y, Y.T)
        again = BALL.matmul(Y, Y.T)  # the remembered form gives the same enclosure
        centred = BALL.centred_gram(Q)  # the same Gram matrix of Q centred at its token 0, in arb_mat
    assert not X.flags.writeable and not Q.flags.writeable  # their arb_mat stays their entries
    with mp.workdps(oracle.DPS):
        Xm, Wm = mp.matrix(X_f.tolist()), mp.matrix(W_f.tolist())
        Qm = Xm * Wm
        Gm = Qm * Qm.T
        for i in range(5):
            for k in range(5):
                assert contains(G[i, k], Gm[i, k])
        centre = [mp.mpf(float(Q[0, j].mid())) for j in range(2)]
        Ym = mp.matrix([[Qm[i, j] - centre[j] for j in range(2)] for i in range(5)])
        Hm = Ym * Ym.T
        for i in range(5):
            for k in range(5):
                assert contains(H[i, k], Hm[i, k]) and contains(centred[i, k], Hm[i, k])
                assert again[i, k].mid() == H[i, k].mid() and again[i, k].rad() == H[i, k].rad()
    assert max(float(G[i, k].rad()) for i in range(5) for k in range(5)) > 0  # radii were kept, not dropped


def test_a_shrunken_witness_basis_is_corrected_by_its_drift_in_engine_and_checker():
    """A basis of the exact right singular vectors scaled by 1 - 1e-6: Gershgorin's discs of E = (M W)^T (M W)
    alone give (1 - 1e-6) ||M||_2, below the norm; only the division by 1 - ||W^T W - I||_F lifts the upper end
    back above it.  Both enclosures must contain the 60-digit singular value."""
    M = [[3, 0, 0], [0, 2, 0], [0, 0, 1]]  # ||M||_2 = 3 exactly, right singular vectors the unit vectors
    shrink = 1 - 1e-6
    # the lower end from a vector off the top singular one (sqrt(6.5)), so that only the upper end reaches 3
    witness = spectral.NormWitness(basis=shrink * np.eye(3), top=np.array([1.0, 1.0, 0.0]))
    balls = [[arb(v) for v in row] for row in M]
    engine_ball = spectral.enclose(arb_mat(balls), witness)
    checker_ball = checker_forward.spectral_norm(balls, {"basis": witness.basis.tolist(), "top": witness.top.tolist()})
    for ball in (engine_ball, checker_ball):
        assert contains(ball, 3), ball
        assert float(ball.upper()) < 3 * (1 + 1e-5)  # the correction is of the size of the drift, not more


@pytest.mark.parametrize("side", ["below", "above"])
def test_a_point_a_rounding_outside_a_stated_end_is_not_contained(side):
    """[0.2 +/- 0.1] is [1/10, 3/10] exactly; a point some 2^-160 below 1/10 (or above 3/10) lies outside it, though
    within the rounding of the stated text's reading (some 2^-117 at 53 bits): the stated ends are taken on their
    inner side, never the outer one."""
    from fractions import Fraction

    from certify_checker import exact
    with ctx.workprec(160):
        point = ((arb(1) / 10).lower() if side == "below" else (arb(3) / 10).upper()).mid()
    mantissa, exponent = point.man_exp()
    value = Fraction(int(mantissa)) * Fraction(2) ** int(exponent)
    assert value < Fraction(1, 10) if side == "below" else value > Fraction(3, 10)
    assert not exact.contains(point, "[0.2 +/- 0.1]")


@pytest.mark.parametrize("text", ["[1 +/- inf]", "[inf +/- 1]", "[nan +/- 1]", "inf"])
def test_a_stated_enclosure_that_is_not_finite_contains_nothing(text):
    """An infinite end would contain every ball: such a text is malformed, whatever the accuracy test says first."""
    from certify_checker import exact
    with pytest.raises(ValueError, match="not a finite enclosure"):
        exact.contains(arb(1), text)


def test_a_witness_basis_off_the_singular_vectors_is_bounded_by_the_absolute_row_sums():
    """M = [[1, -1], [0, 0]], ||M||_2 = sqrt(2), with the unit vectors for basis and top (1, 0): E = M^T M =
    [[1, -1], [-1, 1]] has row sums 0, its absolute ones 2.  Gershgorin's discs need the absolute values: the
    enclosure must reach sqrt(2) from the witness's lower end 1."""
    ball = checker_forward.spectral_norm([[arb(1), arb(-1)], [arb(0), arb(0)]], {"basis": [[1.0, 0.0], [0.0, 1.0]],
                                                                               "top": [1.0, 0.0]})
    assert ball.upper() >= arb(2).sqrt() and ball.lower() <= 1, ball
