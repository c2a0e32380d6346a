"""region.tilt: the lemmas every region proof's closing tests use (certify.prove.closing).

The reduced ratio is F = m(w + L/2) - m(w - L/2), m the mean of positions 0 = tau_1, tau_2, ...,
tau_n = 1 under the tilt p_j = exp(theta tau_j) / sum_k exp(theta tau_k).
"""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def _tilt(theta, taus):
    weights = [sp.exp(theta * t) for t in taus]
    total = sum(weights)
    return [w / total for w in weights]


def build(identity_quarter=sp.Rational(1, 4)) -> Derivation:
    D = Derivation(
        claim="region.tilt",
        statement="The tilted mean m(theta) of positions in [0, 1]: its weights in endpoint form, m' = Var, "
                  "Var <= m (1 - m) <= 1/4, and the tight set of two positions: sigma(L/2) - sigma(-L/2) = tanh(L/4).",
        source="this project's region proofs (certify prove)",
    )
    theta, L, w = sp.symbols("theta L w", real=True)
    t2, t3 = sp.symbols("t2 t3", real=True)
    taus = [sp.Integer(0), t2, t3, sp.Integer(1)]

    @D.symbolic("Weights in endpoint form",
                "p_j = 1 / (1 + sum_{k != j} exp(theta (tau_k - tau_j))): each term is an exp of a product of "
                "exact intervals, so p_j lies between its values at the extreme exponents.")
    def _():
        p = _tilt(theta, taus)
        for j in range(len(taus)):
            other = sum(sp.exp(theta * (taus[k] - taus[j])) for k in range(len(taus)) if k != j)
            require_zero(p[j] - 1 / (1 + other), f"p_{j + 1}")

    @D.symbolic("m increases: m'(theta) = Var_theta(tau) >= 0",
                "Differentiating the tilted mean gives the variance of the positions under the tilt; so "
                "m(w + L/2) <= m(w_hi + L_hi/2) and m(w - L/2) >= m(w_lo - L_hi/2) on a box.")
    def _():
        p = _tilt(theta, taus)
        mean = sum(pj * t for pj, t in zip(p, taus))
        variance = sum(pj * (t - mean) ** 2 for pj, t in zip(p, taus))
        require_zero(sp.diff(mean, theta) - variance, "m' = Var")

    @D.symbolic("1 - F is a sum of nonnegative terms",
                "1 - F = (1 - m(theta+)) + m(theta-), with 1 - m = sum_j (1 - tau_j) p_j and m = sum_j tau_j p_j.")
    def _():
        p = _tilt(theta, taus)
        require_zero(1 - sum(pj * t for pj, t in zip(p, taus)) - sum(pj * (1 - t) for pj, t in zip(p, taus)),
                     "1 - m = sum (1 - tau_j) p_j")

    @D.symbolic("Bhatia-Davis and Popoviciu: Var <= m (1 - m) <= 1/4 on [0, 1]",
                "m (1 - m) - Var = sum_j p_j tau_j (1 - tau_j) >= 0, and 1/4 - m (1 - m) = (m - 1/2)^2.")
    def _():
        p = _tilt(theta, taus)
        mean = sum(pj * t for pj, t in zip(p, taus))
        variance = sum(pj * (t - mean) ** 2 for pj, t in zip(p, taus))
        require_zero(mean * (1 - mean) - variance - sum(pj * t * (1 - t) for pj, t in zip(p, taus)),
                     "m(1 - m) - Var")
        m = sp.Symbol("m", real=True)
        require_zero(sp.Rational(1, 4) - m * (1 - m) - (m - sp.Rational(1, 2)) ** 2, "Popoviciu")

    @D.symbolic("Two positions: m = sigma, and the tight set sigma(L/2) - sigma(-L/2) = tanh(L/4)",
                "With positions {0, 1} the tilted mean is sigma(theta) = 1 / (1 + exp(-theta)); at w = 0 the ratio "
                "is exactly tanh(L/4), the right-hand side of collapse.tanh (the identity closing test).")
    def _():
        sigma = lambda x: 1 / (1 + sp.exp(-x))  # noqa: E731
        p = _tilt(theta, [sp.Integer(0), sp.Integer(1)])
        require_zero(p[1] - sigma(theta), "m = sigma")
        require_zero((sigma(L / 2) - sigma(-L / 2) - sp.tanh(identity_quarter * L)).rewrite(sp.exp), "identity")

    @D.symbolic("The claims' gaps without cancellation",
                "1 - (1 - exp(-L)) = exp(-L) and 1 - tanh(L/4) = 2 / (1 + exp(L/2)), both decreasing; their "
                "slopes exp(-L) and (1 - tanh^2(L/4))/4 decrease on L >= 0.")
    def _():
        Lp = sp.Symbol("L", nonnegative=True)
        require_zero(1 - sp.tanh(Lp / 4) - 2 / (1 + sp.exp(Lp / 2)), "1 - tanh(L/4)")
        slope = (1 - sp.tanh(Lp / 4) ** 2) / 4
        require_zero(sp.diff(sp.tanh(Lp / 4), Lp) - slope, "(tanh(L/4))'")
        second = sp.simplify(sp.diff(slope, Lp) * 8 / sp.tanh(Lp / 4) + (1 - sp.tanh(Lp / 4) ** 2))
        require_zero(second, "(tanh(L/4))'' = -tanh(L/4) (1 - tanh^2(L/4)) / 8 <= 0")

    Lq = sp.Symbol("L", positive=True)

    @D.symbolic("The ratio's slope in L: dF/dL = (m'(w + L/2) + m'(w - L/2)) / 2, and F(w, 0) = 0",
                "So F(w, L) = integral of m' = Var over [w - L/2, w + L/2]: F/L is the mean of Var over that "
                "window, at most its maximum over [w_lo - L_hi/2, w_hi + L_hi/2] (the chord test), and h' = g' - "
                "(Var(w + L/2) + Var(w - L/2))/2 (the divided and rise tests).")
    def _():
        p = _tilt(theta, taus)
        mean = sp.Lambda(theta, sum(pj * t for pj, t in zip(p, taus)))
        F = mean(w + L / 2) - mean(w - L / 2)
        m1 = sp.Lambda(theta, sp.diff(mean(theta), theta))
        require_zero(sp.diff(F, L) - (m1(w + L / 2) + m1(w - L / 2)) / 2, "dF/dL")
        require_zero(F.subs(L, 0), "F(w, 0)")

    @D.symbolic("Chords and secants: for both claims (g concave, g(0) = 0) the secant slope (g(x) - g(a))/(x - a) "
                "decreases in x > a >= 0; a = 0 is g(x)/x",
                "Its derivative is q/(x - a)^2 with q = (x - a) g'(x) - (g(x) - g(a)); q(a) = 0 and q' = (x - a) g'' <= 0, "
                "so q <= 0 (tanh(L/4) and 1 - exp(-L): g'' = -tanh(L/4)/(8 cosh^2(L/4)) and -exp(-L), negative for "
                "L > 0).  So g(L)/L >= g(L_hi)/L_hi on [L_lo, L_hi] (the chord test) and g rises from L_lo at least "
                "at the secant slope to L_hi (the rise test), written without cancellation: tanh(b/4) - tanh(a/4) = "
                "sinh((b - a)/4) / (cosh(a/4) cosh(b/4)) and exp(-a) - exp(-b) = -exp(-a) expm1(a - b).  For another g, "
                "g(L)/L = g'(xi) when g(0) = 0 and a secant slope is g'(xi) (mean value theorem), at least g'_lo on "
                "[0, L_hi]; away from 0, g(L)/L >= g_lo / L at the end of L that makes it smallest.")
    def _():
        x, a0 = sp.symbols("x a", positive=True)
        for g, second, closed in ((sp.tanh(Lq / 4), -sp.tanh(Lq / 4) * (1 - sp.tanh(Lq / 4) ** 2) / 8,
                                   -sp.tanh(Lq / 4) / (8 * sp.cosh(Lq / 4) ** 2)),
                                  (1 - sp.exp(-Lq), -sp.exp(-Lq), -sp.exp(-Lq))):
            require_zero(sp.diff(g, Lq, 2) - second, f"g'' of {g}")
            require_zero((second - closed).rewrite(sp.exp), f"g'' in closed form for {g}")
            require(bool(closed.is_negative), f"g'' = {closed} < 0 for L > 0")
            gx, ga = g.subs(Lq, x), g.subs(Lq, a0)
            secant = (gx - ga) / (x - a0)
            q = (x - a0) * sp.diff(gx, x) - (gx - ga)
            require_zero(q.subs(x, a0), f"q(a) for {g}")
            require_zero(sp.diff(q, x) - (x - a0) * second.subs(Lq, x), f"q' = (x - a) g'' for {g}")
            require_zero(sp.diff(secant, x) - q / (x - a0) ** 2, f"the secant's slope in x for {g}")
            require_zero(sp.limit(Lq * sp.diff(g, Lq) - g, Lq, 0), f"q(0) with a = 0 for {g}")
        a1, b1 = sp.symbols("a b", positive=True)
        require_zero((sp.tanh(b1 / 4) - sp.tanh(a1 / 4)
                      - sp.sinh((b1 - a1) / 4) / (sp.cosh(a1 / 4) * sp.cosh(b1 / 4))).rewrite(sp.exp),
                     "tanh(b/4) - tanh(a/4)")
        require_zero(sp.exp(-a1) - sp.exp(-b1) + sp.exp(-a1) * (sp.exp(a1 - b1) - 1), "exp(-a) - exp(-b)")

    D.prose("The rise: h(L) >= h(L_lo) + (L_hi - L_lo) min(0, s - (Var+ + Var-)/2) on [L_lo, L_hi]",
            "g(L) - g(L_lo) >= (L - L_lo) s with s the least secant slope from L_lo (above), and F(w, L) - F(w, L_lo) is "
            "the integral of dF/dL = (m'(w + x/2) + m'(w - x/2))/2 over [L_lo, L] (fundamental theorem), at most "
            "(L - L_lo)(Var+ + Var-)/2 with Var+ the maximum of m' over [w_lo + L_lo/2, w_hi + L_hi/2] and Var- over "
            "[w_lo - L_hi/2, w_hi - L_lo/2]; so h(L) - h(L_lo) >= (L - L_lo)(s - (Var+ + Var-)/2) >= (L_hi - L_lo) "
            "min(0, s - (Var+ + Var-)/2), and h(L_lo) >= direct's margin on the face L = L_lo.")

    D.prose("Divided form", "Where g(0) = 0 and F(w, 0) = 0, h = g - F vanishes at L = 0 and "
            "h(L) = L * integral_0^1 h_L(s L) ds (mean value form), so h >= 0 on a box with L_lo = 0 once "
            "g'(xi) - F_L(xi) >= 0 for xi in [0, L_hi], with F_L = (m'(w + L/2) + m'(w - L/2)) / 2 <= max Var.")
    return D
