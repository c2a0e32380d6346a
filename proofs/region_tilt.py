"""region.tilt: the lemmas every region proof's closing tests use (certify.prove.closing).

The reduced ratio is F = m(w + L/2) - m(w - L/2), m the mean of positions 0 = tau_1, tau_2, ...,
tau_n = 1 under the tilt p_j = exp(theta tau_j) / sum_k exp(theta tau_k).
"""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require_zero


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

    D.prose("Divided form", "Where g(0) = 0 and F(w, 0) = 0, h = g - F vanishes at L = 0 and "
            "h(L) = L * integral_0^1 h_L(s L) ds (mean value form), so h >= 0 on a box with L_lo = 0 once "
            "g'(xi) - F_L(xi) >= 0 for xi in [0, L_hi], with F_L = (m'(w + L/2) + m'(w - L/2)) / 2 <= max Var.")
    return D
