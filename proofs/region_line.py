"""region.line: n tokens in d = 1 reduce to F = m(w + L/2) - m(w - L/2), m an exponential tilt.

The reduction behind `certify prove --d 1` (certify.prove.reductions, certify_checker.region_proof).
"""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def _tilted_mean(theta, taus):
    weights = [sp.exp(theta * t) for t in taus]
    return sum(wt * t for wt, t in zip(weights, taus)) / sum(weights)


def build(tokens: int = 3) -> Derivation:
    D = Derivation(
        claim="region.line",
        statement="For d = 1 and n tokens t_1 <= ... <= t_n, D = t_n - t_1, tau_j = (t_j - t_1)/D: row i of P is the "
                  "tilt of the positions tau by theta_i = alpha D t_i, D(PX)/D = m(w + L/2) - m(w - L/2) with "
                  "w = alpha D (t_1 + t_n)/2 and L = |alpha| D^2; reflection maps w to -w; |w| <= norm r^2 / 2.",
        source="this project's region proofs (certify prove)",
    )
    alpha, Dm = sp.symbols("alpha D", positive=True)
    t1 = sp.Symbol("t1", real=True)
    inner = [sp.Symbol(f"tau{j}", real=True) for j in range(2, tokens)]
    taus = [sp.Integer(0), *inner, sp.Integer(1)]
    ts = [t1 + Dm * tau for tau in taus]
    theta, w, L = sp.symbols("theta w L", real=True)

    @D.symbolic("Row i of P is the exponential tilt of tau by theta_i = alpha D t_i",
                "exp(alpha t_i t_j) / exp(theta_i tau_j) = exp(alpha t_i t_1) does not depend on j, so it cancels "
                "in the row's normalisation; y_i = t_1 + D m(theta_i).")
    def _():
        for ti in ts:
            ratios = [sp.simplify(sp.exp(alpha * ti * tj) / sp.exp(alpha * Dm * ti * tau)) for tj, tau in zip(ts, taus)]
            require(all(sp.simplify(r - ratios[0]) == 0 for r in ratios), "the ratio is the same for every j")
            weights = [sp.exp(alpha * ti * tj) for tj in ts]
            y = sum(wt * tj for wt, tj in zip(weights, ts)) / sum(weights)
            require_zero(y - (t1 + Dm * _tilted_mean(alpha * Dm * ti, taus)), "y_i")

    @D.symbolic("The extreme tilts are w +- L/2",
                "m increases (region.tilt), so D(PX) = D (m(max theta) - m(min theta)); the thetas range over "
                "alpha D [t_1, t_n], of centre w = alpha D (t_1 + t_n)/2 and width alpha D^2 = L.")
    def _():
        lo, hi = alpha * Dm * ts[0], alpha * Dm * ts[-1]
        centre = alpha * Dm * (ts[0] + ts[-1]) / 2
        require_zero((lo + hi) / 2 - centre, "centre")
        require_zero(hi - lo - alpha * Dm**2, "width")

    @D.symbolic("Reflection: positions 1 - tau give m_ref(theta) = 1 - m(-theta), so F_ref(w) = F(-w)",
                "t -> -t maps a configuration of the region to one, so the box takes w >= 0 (and A -> -A "
                "covers alpha < 0: the ratio depends on |alpha| through L and on w).")
    def _():
        reflected = [1 - t for t in taus]
        require_zero(_tilted_mean(theta, reflected) - (1 - _tilted_mean(-theta, taus)), "m_ref")
        F = lambda c, positions: _tilted_mean(c + L / 2, positions) - _tilted_mean(c - L / 2, positions)  # noqa: E731
        require_zero(F(w, reflected) - F(-w, taus), "F_ref(w) = F(-w)")

    @D.symbolic("The face t = 0 is the two-token ratio shifted by ln 2",
                "Positions 0, 0, 1: m(theta) = exp(theta) / (2 + exp(theta)) = sigma(theta - ln 2), so "
                "F(w, L, 0) = F_2(w - ln 2, L) <= tanh(L/4) (region.two_tokens: F_2 is even and decreasing in "
                "|w|, and F_2(0, L) = tanh(L/4)); on it collapse.tanh holds, with equality at w = ln 2.")
    def _():
        sigma = lambda x: 1 / (1 + sp.exp(-x))  # noqa: E731
        require_zero(_tilted_mean(theta, [sp.Integer(0), sp.Integer(0), sp.Integer(1)]) - sigma(theta - sp.log(2)),
                     "m on positions 0, 0, 1")
        face = _tilted_mean(w + L / 2, [0, 0, 1]) - _tilted_mean(w - L / 2, [0, 0, 1])
        require_zero((face.subs(w, sp.log(2)) - sp.tanh(L / 4)).rewrite(sp.exp), "equality at w = ln 2")

    t, u, v = sp.symbols("t u v", real=True)

    @D.symbolic("Every n: dm/dtau_k = p_k (1 + theta (tau_k - m)), d2m/dtheta dtau_k = p_k ((tau_k - m)(2 + theta "
                "(tau_k - m)) - theta Var), Var over all n positions",
                "The sign tests of the monotone faces for any number of inner positions (checked here on three and "
                "four tokens, for each inner position): dF/dtau_k is the difference of dm/dtau_k at theta+ and "
                "theta-, and the integral of d2m/dtheta dtau_k between them; a sign proved on a box lets each "
                "position move to an end of its interval, one after the other, without leaving the box.")
    def _():
        for inner in ((t,), (u, v)):
            positions = [sp.Integer(0), *inner, sp.Integer(1)]
            weights = [sp.exp(theta * x) for x in positions]
            p = [wt / sum(weights) for wt in weights]
            mean = sum(pj * x for pj, x in zip(p, positions))
            variance = sum(pj * (x - mean) ** 2 for pj, x in zip(p, positions))
            for k, tau in enumerate(inner, start=1):
                require_zero(sp.diff(mean, tau) - p[k] * (1 + theta * (tau - mean)), f"dm/dtau_{k} of {len(positions)}")
                mixed = p[k] * ((tau - mean) * (2 + theta * (tau - mean)) - theta * variance)
                require_zero(sp.diff(mean, tau, theta) - mixed, f"d2m/dtheta dtau_{k} of {len(positions)}")

    @D.symbolic("A corner of the positions is two tokens: k positions at 0 and n - k at 1 give m = sigma(theta - "
                "ln(k/(n - k)))",
                "So F = F_2(w - ln(k/(n - k)), L) <= tanh(L/4) (region.two_tokens); collapse.tanh is tight on the "
                "corner k = n/2 at w = 0 (positions 0, 0, 1, 1 of four tokens), for every L.")
    def _():
        sigma = lambda x: 1 / (1 + sp.exp(-x))  # noqa: E731
        for n in range(3, 6):
            for k in range(1, n):
                corner = [sp.Integer(0)] * k + [sp.Integer(1)] * (n - k)
                shifted = sigma(theta - sp.log(sp.Rational(k, n - k)))
                require_zero((_tilted_mean(theta, corner) - shifted).rewrite(sp.exp), f"m on {k} zeros and {n - k} ones")

    @D.symbolic("F is symmetric in the inner positions",
                "m is the tilted mean of the multiset of positions, so exchanging two inner positions leaves m and F "
                "unchanged; the tokens are sorted (t_1 <= ... <= t_n), so the sorted part tau_2 <= ... <= tau_{n-1} "
                "of [0, 1]^(n-2) holds every configuration, and a box inside tau_k >= tau_{k+1} is decided by the "
                "others (the closing test ordered): they cover every strictly sorted point, and h = g(L) - F is "
                "continuous.")
    def _():
        for inner in ((u, v), (t, u, v)):
            positions = [sp.Integer(0), *inner, sp.Integer(1)]
            for k in range(len(inner) - 1):
                swapped = list(inner)
                swapped[k], swapped[k + 1] = swapped[k + 1], swapped[k]
                exchanged = [sp.Integer(0), *swapped, sp.Integer(1)]
                require_zero(_tilted_mean(theta, positions) - _tilted_mean(theta, exchanged),
                             f"m with tau_{k + 2} and tau_{k + 3} exchanged")

    @D.symbolic("The domain: |w| <= norm r^2 / 2, L <= 4 norm r^2",
                "|t_1 + t_n| / 2 <= r - D/2, so |w| <= norm D (r - D/2), at most norm r^2 / 2 (at D = r).")
    def _():
        r, s = sp.symbols("r s", positive=True)  # s = D
        bound = s * (r - s / 2)
        require(sp.solve(sp.diff(bound, s), s) == [r], "critical point D = r")
        require_zero(bound.subs(s, r) - r**2 / 2, "maximum r^2 / 2")

    D.prose("Not with query or key biases",
            "A query bias adds u_b x_j to every row's scores (d = 1), so every theta_i moves by u_b D: w becomes any "
            "real number, outside the box |w| <= norm r^2 / 2, and F is not monotone in w (positions 0, 0, 1 peak at "
            "w = ln 2).  The region of a line proof is layers with scores x_i A x_j, no biases.")
    return D
