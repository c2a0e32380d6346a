"""The trajectory checker's two comparisons on balls, planted so that the midpoints agree and the ends do not: a
quantity is below a curve only when its whole ball is, and a stated ball contains the recomputed one only when it
holds both of its ends (each compared with exact Fractions); and its enclosure of the approach r_t against mpmath."""

from __future__ import annotations

from fractions import Fraction

from flint import arb, ctx, fmpq
from mpmath import mp

import certify_checker
from certify_checker import schema, trajectory


def _exact(end: arb) -> Fraction:
    mantissa, exponent = (int(v) for v in end.mid().man_exp())
    return Fraction(mantissa) * Fraction(2) ** exponent


def _ball(q: Fraction) -> arb:
    return arb(fmpq(q.numerator, q.denominator))


def test_a_quantity_holds_below_a_curve_only_when_its_whole_ball_does():
    """D in [1/2, 3/2] against the curve exp(log(11/10)) = 11/10: its midpoint 1 is below, its upper end is not, so
    the outcome is undecided; [1/2, 1] is below (holds), [6/5, 8/5] above (violated)."""
    with ctx.workprec(53):
        curve = (arb(11) / 10).log()
        for mid, rad, expected in ((Fraction(1), Fraction(1, 2), "undecided"), (Fraction(3, 4), Fraction(1, 4), "holds"),
                                   (Fraction(7, 5), Fraction(1, 5), "violated"), (Fraction(6, 5), Fraction(3, 10), "undecided")):
            quantity = _ball(mid) + arb(0, _ball(rad))
            high, low = _exact(quantity.upper()), _exact(quantity.lower())
            truth = "holds" if high < Fraction(11, 10) else "violated" if low > Fraction(11, 10) else "undecided"
            assert truth == expected
            assert trajectory._compare(quantity, curve) == expected, (mid, rad)


def test_a_stated_ball_contains_the_recomputed_one_only_when_it_holds_both_its_ends():
    """The stated 1 +- 2^-20 around the recomputed 1 +- 2^-10 (the same midpoint): not inside; the stated
    1 +- 2^-5 is; so is a stated ball whose midpoint is off by less than the difference of the radii."""
    with ctx.workprec(53):
        mine = arb(1) + arb(0, arb(2) ** -10)
        assert not trajectory.inside(mine, (arb(1), arb(2) ** -20))
        assert trajectory.inside(mine, (arb(1), arb(2) ** -5))
        assert trajectory.inside(mine, (arb(1) + arb(2) ** -7, arb(2) ** -5))
        assert not trajectory.inside(mine, (arb(1) + arb(2) ** -5, arb(2) ** -5))  # misses mine's lower end


X0 = [["1", "0"], ["0", "1/2"], ["-1/3", "-1/4"]]
A = [["1", "1/5"], ["0", "2"]]


def _consensus_and_trajectory(steps: int):
    """mpmath at 60 digits: X' = P X (V = I) for `steps` layers from X0, and the point the tokens collapse to (their
    mean after 200 layers, where D is below 10^-50)."""
    q = lambda s: mp.mpf(Fraction(s).numerator) / Fraction(s).denominator  # noqa: E731
    X, Am = mp.matrix([[q(x) for x in row] for row in X0]), mp.matrix([[q(x) for x in row] for row in A])
    path = [X]
    for _ in range(200):
        S = X * Am * X.T
        P = mp.matrix(3, 3)
        for i in range(3):
            weights = [mp.exp(S[i, j] - max(S[i, k] for k in range(3))) for j in range(3)]
            for j in range(3):
                P[i, j] = weights[j] / sum(weights)
        X = P * X
        path.append(X)
    assert max(mp.norm(X[i, :] - X[k, :]) for i in range(3) for k in range(3)) < mp.mpf(10) ** -50
    return [sum(X[i, m] for i in range(3)) / 3 for m in range(2)], path[:steps + 1]


def test_the_approach_encloses_the_distance_to_the_true_consensus():
    """r_t = max_i ||x_i^(t) - V^t c*|| with V = I and c* the consensus the tokens collapse to (mpmath, 200 layers):
    the checker's approach, taken from the mean of the last of T layers (c^, not c*) widened by M D(Y_T), holds it for
    every t <= T; T = 1 leaves c^ far from c*, so the widening is what holds it."""
    inputs = schema.exact({"X": X0, "layers": [{"A": A, "V": [["1", "0"], ["0", "1"]]}]})
    with mp.workdps(60):
        consensus, path = _consensus_and_trajectory(2)
        for T in (1, 2):
            with ctx.workprec(53):
                points, Ys, drifts, _ = trajectory.run(inputs, T, True, [53] * (T + 1), [True] * (T + 1))
                balls = trajectory.approach(inputs, points, Ys, drifts, arb(1))  # M = max ||V^k|| = 1
            assert len(balls) == T + 1
            for t, ball in enumerate(balls):
                r = max(mp.sqrt(sum((path[t][i, m] - consensus[m]) ** 2 for m in range(2))) for i in range(3))
                with ctx.workprec(250):
                    assert ball.contains(arb(mp.nstr(r, 60, strip_zeros=False))), (T, t, ball, r)


def test_a_resolution_stated_as_another_truthy_value_is_rejected():
    """"resolved": 1 (not true) at every point: the run follows only true flags, so it stops at D_0 and draws no
    global.step value anywhere; were the stated flags then taken for resolutions, "holds" would be confirmed through
    3 layers with no step checked.  The certificate (its digest made anew) is rejected."""
    from certify.studies import trajectory as study

    cert = study.trace({"name": "antipodal", "X": [["3/8"], ["-3/8"]], "A": [["1"]]}, 3).certificate
    assert certify_checker.verify(cert).ok and cert["verdict"] == "holds"
    cert["curves"], cert[trajectory.STEPS_KEY] = ["global.step"], [cert["precision"]]
    for t, point in enumerate(cert["points"]):
        point.update(resolved=1, tau=None, approach=None, log_curves={}, checks={})
        if t:
            point.update(D=None, mu=None)
    cert["inputs_sha256"] = trajectory.digest(cert["layers"], cert["inputs"], [
        cert["precision"], cert["curve_precision"], cert["norm_precision"], cert[trajectory.STEPS_KEY]])
    found = certify_checker.verify(cert)
    assert not found.ok and "stated resolved = 1" in found.message, found.message


def test_the_cubic_curve_takes_the_largest_norm_of_the_layers_run():
    """Two layers, ||A_0|| = 1/2 and ||A_1|| = 2, tokens 1/4 and -1/4 (D_0 = 1/2): the cubic curve through T = 2
    layers is a^{-1/2} (sqrt(a) D_0)^(3^t) with a = 2, the larger (mpmath at 50 digits); through T = 1 only the
    first layer runs, and a = 1/2."""
    inputs = schema.exact({"X": [["1/4"], ["-1/4"]], "layers": [{"A": [["1/2"]]}, {"A": [["2"]]}]})
    with mp.workdps(50):
        for T, a in ((2, mp.mpf(2)), (1, mp.mpf(1) / 2)):
            with ctx.workprec(64):
                drawn = trajectory.curves(["cubic"], inputs, T, [], [arb(1) / 2, arb(2)], None, None)["cubic"]
            assert sorted(drawn) == list(range(1, T + 1))
            for t, log_curve in drawn.items():
                exact = 3 ** t * mp.log(mp.sqrt(a) / 2) - mp.log(mp.sqrt(a))
                with ctx.workprec(250):
                    assert log_curve.contains(arb(mp.nstr(exact, 45, strip_zeros=False))), (T, t, log_curve, exact)


def test_a_stated_ball_holds_both_ends_of_the_recomputed_one():
    """The recomputed [1 +/- 2^-33] against stated balls of its radius shifted by half of it: each holds the midpoint
    and one end only, so neither contains it ("outside": a finer recomputation decides); twice as wide and not
    shifted, it does."""
    mine, rad = arb(1, 2.0 ** -33), arb(2) ** -33
    for shift in (-rad / 2, rad / 2):
        assert not trajectory.inside(mine, (1 + shift, rad))
        assert trajectory.agreement(mine, (1 + shift, rad), 53) == "outside"
    assert trajectory.inside(mine, (arb(1), 2 * rad)) and trajectory.agrees(mine, (arb(1), 2 * rad), 53)


def test_a_stated_ball_far_wider_than_the_precision_gives_differs():
    """[1 +/- 10^10] holds the recomputed [1 +/- 2^-33], but is no enclosure of 53 bits: it differs (rejected), and a
    finer recomputation does not save it."""
    assert trajectory.agreement(arb(1, 2.0 ** -33), (arb(1), arb(10) ** 10), 53) == "differs"


def test_a_quantity_touching_its_curve_holds_or_is_undecided_never_violated():
    """D_t = 1 (log D_t = 0 exactly) against log curves in [0, 1] and [-1, 0] (one end exactly 0): below the first
    everywhere, so the check holds; the second allows log D_t = the curve, so it is undecided, not violated (> of
    balls: every value of one above every value of the other)."""
    touching = arb(0, 1).nonnegative_part()
    assert touching.lower() == 0 and trajectory._compare(arb(1), touching) == "holds"
    assert (-touching).upper() == 0 and trajectory._compare(arb(1), -touching) == "undecided"


def test_a_stated_norm_or_an_extra_witness_of_a_trajectory_is_checked():
    """A trajectory certificate's ||A_t||_2 (outside the digest) moved to 3, or a witness beside those read: each
    would be shown and never checked; rejected."""
    import copy

    import certify

    cert = certify.trajectory({"X": [[1, 0], [0, 1], [0.5, 0.2]], "layers": [{"A": [[1, 0], [0, 1]]}]}, layers=2,
                              max_prec=128).certificate
    assert certify_checker.verify(cert).ok
    moved = copy.deepcopy(cert)
    moved["a"][0] = ["3", "0", "1", "-40"]
    confirmation = certify_checker.verify(moved)
    assert not confirmation.ok and "||A_t||_2" in confirmation.message, confirmation.message
    extra = copy.deepcopy(cert)
    extra["witness"]["A1"] = extra["witness"]["A0"]
    confirmation = certify_checker.verify(extra)
    assert not confirmation.ok and "witness" in confirmation.message, confirmation.message


def test_a_stated_point_far_wider_than_its_precision_is_rejected():
    """D_1 of a trajectory certificate stated as [its midpoint +/- 2^10]: it holds the recomputed ball, but is no
    enclosure of the stated precision; rejected, not looked for at a finer one."""
    import copy

    import certify

    cert = certify.trajectory({"X": [[1, 0], [0, 1], [0.5, 0.2]], "layers": [{"A": [[1, 0], [0, 1]]}]}, layers=2,
                              max_prec=128).certificate
    widened = copy.deepcopy(cert)
    widened["points"][1]["D"][2:] = ["1", "10"]
    confirmation = certify_checker.verify(widened)
    assert not confirmation.ok and "stated D does not match" in confirmation.message, confirmation.message
