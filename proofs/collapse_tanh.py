"""collapse.tanh: D(PX) <= tanh(a D^2 / 4) D, the sharp form of collapse.global.

Found by `certify attack` (the best contraction exponent approaches 1/2, not 1) and proved here:
the ratio r_j = P_ij / P_kj of two rows has log-spread Delta <= a D^2 (collapse.tau's softmax
spread), and two probability rows whose ratios lie in [m, m e^Delta] are at total variation at
most tanh(Delta / 4) (the Birkhoff-Hopf bound for the Dobrushin coefficient).  With step 1
(collapse.dobrushin) this gives the claim; two antipodal tokens attain it exactly.
"""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def build(quarter=sp.Rational(1, 4), exponent=sp.Rational(1, 2)) -> Derivation:
    D = Derivation(
        claim="collapse.tanh",
        statement="D(PX) <= tanh(a D^2 / 4) D <= (1 - exp(-a D^2 / 2)) D for every X and A, a = ||A||_2, "
                  "attained by two antipodal tokens: no exponent below 1/2 holds, and collapse.global's 1 holds "
                  "with slack 2.",
        source="sharpening of the thesis's collapse.global (Birkhoff-Hopf), found by certify attack",
    )
    m, w, Delta, x = sp.symbols("m w Delta x", positive=True)
    M = m * sp.exp(Delta)

    D.prose("Extremal rows", "TV(p, q) = sum_j q_j (r_j - 1)^+ with r_j = p_j / q_j in [m, M], "
            "sum_j q_j r_j = 1. It is linear in the distribution of r under q, so its maximum is at a "
            "two-point distribution on {m, M} (the extreme points of that set of distributions).")

    @D.symbolic("Two-point value", "With weight w on M and 1 - w on m, sum q r = 1 gives w = (1 - m)/(M - m) "
                "and TV = w (M - 1) = (1 - m)(M - 1)/(M - m).", formal="collapse.v:tanh_two_point_value")
    def _():
        weight = sp.solve(sp.Eq(w * M + (1 - w) * m, 1), w)[0]
        require_zero(weight - (1 - m) / (M - m), "w")

    tv = (1 - m) * (M - 1) / (M - m)
    best = sp.exp(-Delta / 2)

    @D.symbolic("Maximised over m at m = exp(-Delta/2)",
                "d TV / dm vanishes there, and TV(m) -> 0 at both ends m = exp(-Delta), m = 1.",
                formal="collapse.v:tanh_two_point_le")
    def _():
        require_zero(sp.diff(tv, m).subs(m, best), "stationary point")
        require_zero(tv.subs(m, 1), "TV at m = 1")
        require_zero(tv.subs(m, sp.exp(-Delta)), "TV at m = exp(-Delta)")

    @D.symbolic("The maximum is tanh(Delta/4)", "(1 - e^{-D/2})(e^{D/2} - 1)/(e^{D/2} - e^{-D/2}) = tanh(D/4).",
                formal="collapse.v:tanh_two_point_at_best")
    def _():
        require_zero(sp.simplify((tv.subs(m, best) - sp.tanh(quarter * Delta)).rewrite(sp.exp)), "TV max")

    D.prose("Conclusion", "Delta <= a D^2 (collapse.tau), tanh increasing, so tau(P) <= tanh(a D^2/4) and "
            "D(PX) <= tau(P) D(X) (collapse.dobrushin).")

    @D.symbolic("Sharper than collapse.global: tanh(x/4) <= 1 - exp(-x)",
                "With y = exp(-x/2) in (0, 1]: (1 - exp(-x)) - tanh(x/4) = y (1 - y)(2 + y) / (1 + y) >= 0.",
                formal="collapse.v:tanh_quarter_le_global")
    def _():
        y = sp.Symbol("y", positive=True)
        gap = (1 - y**2) - (1 - y) / (1 + y)  # tanh(x/4) = (1 - y)/(1 + y) with y = exp(-x/2)
        require_zero(gap - y * (1 - y) * (2 + y) / (1 + y), "factorisation")
        require_zero(sp.tanh(x / 4).rewrite(sp.exp) - ((1 - y) / (1 + y)).subs(y, sp.exp(-x / 2)),
                     "tanh(x/4) = (1 - y)/(1 + y)")
        require(all(bool(f.is_nonnegative) for f in (y, 2 + y, 1 + y)), "y, 2 + y, 1 + y > 0; 1 - y >= 0 as y <= 1")

    @D.symbolic("The exponent is 1/2: tanh(x/4) <= 1 - exp(-x/2), and 1 - exp(-c x) < tanh(x/4) for large x "
                "when c < 1/2",
                "With u = exp(-x/2) in (0, 1]: (1 - u) - tanh(x/4) = u (1 - u) / (1 + u) >= 0.  For c = 1/2 - delta: "
                "exp(c x) ((1 - exp(-c x)) - tanh(x/4)) = 2 exp(-delta x) / (1 + exp(-x/2)) - 1 < 0 once "
                "x >= ln(2) / delta; with the antipodal tokens below, (1 - exp(-c a D^2)) D fails for every c < 1/2.",
                formal="collapse.v:tanh_quarter_le")
    def _():
        u, delta = sp.Symbol("u", positive=True), sp.Symbol("delta", positive=True)
        require_zero((1 - u) - (1 - u) / (1 + u) - u * (1 - u) / (1 + u), "factorisation")
        require_zero(sp.tanh(x / 4).rewrite(sp.exp) - ((1 - u) / (1 + u)).subs(u, sp.exp(-exponent * x)),
                     "tanh(x/4) = (1 - u)/(1 + u) with u = exp(-x/2)")
        c = exponent - delta
        require_zero(sp.exp(c * x) * ((1 - sp.exp(-c * x)) - sp.tanh(x / 4))
                     - (2 * sp.exp(-delta * x) / (1 + sp.exp(-x / 2)) - 1), "below 1/2")
        require_zero(2 * sp.exp(-delta * x).subs(x, sp.log(2) / delta) - 1, "2 exp(-delta x) = 1 at x = ln(2)/delta")

    @D.symbolic("Attained: two antipodal tokens x = +-s, A = lambda",
                "P = [[e^L, e^-L], [e^-L, e^L]] / (e^L + e^-L) with L = lambda s^2 = a D^2 / 4, so "
                "D(PX) / D = (e^L - e^-L)/(e^L + e^-L) = tanh(a D^2 / 4).",
                formal="collapse.v:tanh_antipodal_ratio")
    def _():
        lam, s = sp.symbols("lambda s", positive=True)
        L = lam * s**2
        p = sp.exp(L) / (sp.exp(L) + sp.exp(-L))
        ratio = (p * s + (1 - p) * (-s) - ((1 - p) * s + p * (-s))) / (2 * s)
        a, Dm = lam, 2 * s
        require_zero(sp.simplify((ratio - sp.tanh(quarter * a * Dm**2)).rewrite(sp.exp)), "antipodal ratio")

    return D
