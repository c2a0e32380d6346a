"""||L R^T||_2 through the k x k reduction (certify.core.thin_norm, and the Ball backend's route to it) holds the
norm mpmath computes at 60 digits, by every entry point, whatever the witness: each ball's radius is part of the
enclosure (the reduced matrix's, large for a nearly singular R^T R, and the one the square root carries)."""

from __future__ import annotations

import numpy as np
from flint import arb, ctx
from mpmath import mp

from certify.core import refine, spectral, thin_norm
from certify.core.arith import BALL


def _truth(L: np.ndarray, R: np.ndarray):
    with mp.workdps(100):
        return max(mp.svd_r(mp.matrix(L.tolist()) * mp.matrix(R.tolist()).T, compute_uv=False))


def _contains(ball: arb, value) -> bool:
    with mp.workdps(100), ctx.workprec(400):
        return ball.contains(arb(mp.nstr(value, 100, strip_zeros=False)))


def test_every_route_of_the_thin_norm_holds_the_mpmath_norm():
    rng = np.random.default_rng(11)
    # the last two: R's first columns 1e-5 and 1e-7 apart, so that C (and the reduced matrix's radius) is large
    for d, k, scale, apart in ((12, 3, 1.0, None), (20, 5, 1e-3, None), (9, 4, 3e5, None), (12, 3, 1.0, 1e-5),
                               (12, 3, 1.0, 1e-7)):
        L, R = scale * rng.standard_normal((d, k)), rng.standard_normal((d, k))
        if apart is not None:
            R[:, 1] = R[:, 0] + apart * rng.standard_normal(d)
        truth = _truth(L, R)
        with ctx.workprec(53):
            Lm, Rm = thin_norm.ball_matrix(L), thin_norm.ball_matrix(R)
            reduced = thin_norm.reduced_matrix(Lm, Rm)
            balls = {"product_norm": thin_norm.product_norm(Lm, Rm),
                     "reduced matrix, float64 witness": spectral.enclose(reduced, thin_norm.reduced_witness(L, R)),
                     "reduced matrix, own witness": thin_norm.enclose_from_midpoints(reduced)[0],
                     "Ball.thin_product_norm": BALL.thin_product_norm(thin_norm.ball_array(L), thin_norm.ball_array(R),
                                                                      {}, "A0")}
            for name in ("reduced matrix, float64 witness", "reduced matrix, own witness"):
                balls[name] = balls[name].nonnegative_part().sqrt()
        with ctx.workprec(256), refine.refining(256):  # the k x k witness refined past binary64
            balls["Ball.thin_product_norm, refined"] = BALL.thin_product_norm(
                thin_norm.ball_array(L), thin_norm.ball_array(R), {}, "A0")
        for route, ball in balls.items():
            assert ball.rad() > 0 and _contains(ball, truth), (route, d, k, ball, truth)


def test_a_callers_numpy_error_setting_stops_no_thin_head():
    """With np.seterr(all="raise") in the caller, a thin head whose W_K spans more than binary64 squares (1e200 and 1)
    raised FloatingPointError: its float64 look at W_K^T W_K underflows, as it may."""
    from certify import engine

    config_dict = {"X": [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]], "W_Q": [[1e200], [0.0]], "W_K": [[1e200], [1.0]]}
    expected = engine.check(config_dict, bound="2*D")
    with np.errstate(all="raise"):
        assert engine.check(config_dict, bound="2*D").verdict == expected.verdict == engine.HOLDS
