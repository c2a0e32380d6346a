"""region.two_tokens: two tokens in any dimension reduce to F(w, L) = sigma(w + L/2) - sigma(w - L/2).

The reduction behind `certify prove --n 2` (certify.prove.reductions, certify_checker.region_proof).
"""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def _sigma(x):
    return 1 / (1 + sp.exp(-x))


def build(dimension: int = 2) -> Derivation:
    D = Derivation(
        claim="region.two_tokens",
        statement="For n = 2 and any d: D(PX)/D = F(w, |u - v|) with F(w, l) = sigma(w + l/2) - sigma(w - l/2), "
                  "u = x_1^T A delta, v = x_2^T A delta, w = (u + v)/2, |u - v| <= a D^2 = L; F grows in l, is even "
                  "in w and decreases in w >= 0; over the region |w| <= norm r^2 and L <= 4 norm r^2; query and key "
                  "biases only move w, so the box covers them too.",
        source="this project's region proofs (certify prove)",
    )
    d = dimension
    A = sp.Matrix(d, d, lambda r, c: sp.Symbol(f"a{r}{c}", real=True))
    x1 = sp.Matrix(d, 1, lambda r, _: sp.Symbol(f"x1{r}", real=True))
    x2 = sp.Matrix(d, 1, lambda r, _: sp.Symbol(f"x2{r}", real=True))
    delta = x1 - x2
    w, l, L = sp.symbols("w l L", real=True)
    F = _sigma(w + L / 2) - _sigma(w - L / 2)

    @D.symbolic("Rows of P: p_i1 = sigma(x_i^T A delta), and y_1 - y_2 = (p_11 - p_21)(x_1 - x_2)",
                "p_i1 = exp(s_i1) / (exp(s_i1) + exp(s_i2)) with s_ij = x_i^T A x_j, and s_i1 - s_i2 = x_i^T A delta; "
                "y_i = p_i1 x_1 + (1 - p_i1) x_2.")
    def _():
        for xi in (x1, x2):
            s1, s2 = (xi.T * A * x1)[0], (xi.T * A * x2)[0]
            require_zero(sp.exp(s1) / (sp.exp(s1) + sp.exp(s2)) - _sigma((xi.T * A * delta)[0]), "p_i1")
        p11, p21 = sp.symbols("p11 p21", real=True)
        y1, y2 = p11 * x1 + (1 - p11) * x2, p21 * x1 + (1 - p21) * x2
        require_zero(y1 - y2 - (p11 - p21) * delta, "y_1 - y_2")

    @D.symbolic("u - v = delta^T A delta, so |u - v| <= ||A||_2 D^2 = L (Cauchy-Schwarz)",
                "and D(PX)/D = |sigma(u) - sigma(v)| = F(w, |u - v|) with w = (u + v)/2.")
    def _():
        u, v = (x1.T * A * delta)[0], (x2.T * A * delta)[0]
        require_zero(u - v - (delta.T * A * delta)[0], "u - v")
        Fl = _sigma(w + l / 2) - _sigma(w - l / 2)
        require_zero(Fl.subs(l, -l) + Fl, "F is odd in l, so |F(w, l)| = F(w, |l|)")

    @D.symbolic("F grows with l >= 0: dF/dl = (sigma'(w + l/2) + sigma'(w - l/2)) / 2 > 0",
                "so F(w, |u - v|) <= F(w, L): proving F(w, L) <= g(L) proves the bound D g(a D^2).")
    def _():
        Fl = _sigma(w + l / 2) - _sigma(w - l / 2)
        dsigma = lambda x: _sigma(x) * (1 - _sigma(x))  # noqa: E731
        require_zero(sp.diff(Fl, l) - (dsigma(w + l / 2) + dsigma(w - l / 2)) / 2, "dF/dl")

    @D.symbolic("F is even in w", "F(-w, L) = F(w, L), since sigma(-x) = 1 - sigma(x): the box takes w >= 0.")
    def _():
        require_zero(F.subs(w, -w) - F, "F(-w) - F(w)")

    @D.symbolic("dF/dw = -sinh(w) sinh(L/2) / (4 cosh^2((w + L/2)/2) cosh^2((w - L/2)/2)) <= 0 for w, L >= 0",
                "The factored form of the derivative the monotone-face test uses: every factor has a known sign, "
                "so on a box with w_lo >= 0 the claim is weakest on the face w = w_lo.")
    def _():
        factored = -sp.sinh(w) * sp.sinh(L / 2) / (4 * sp.cosh((w + L / 2) / 2) ** 2 * sp.cosh((w - L / 2) / 2) ** 2)
        require_zero((sp.diff(F, w) - factored).rewrite(sp.exp), "dF/dw")

    @D.symbolic("The domain: |w| <= norm r^2 and L <= 4 norm r^2",
                "w = m^T A delta with m = (x_1 + x_2)/2, so |w| <= a ||m|| D; ||m||^2 + D^2/4 = (||x_1||^2 + "
                "||x_2||^2)/2 <= r^2, and D^2 (r^2 - D^2/4) is at most r^4 (at D^2 = 2 r^2).")
    def _():
        half = (x1 + x2) / 2
        require_zero((half.T * half)[0] + (delta.T * delta)[0] / 4 - ((x1.T * x1)[0] + (x2.T * x2)[0]) / 2,
                     "parallelogram law")
        r, s = sp.symbols("r s", positive=True)  # s = D^2
        product = s * (r**2 - s / 4)
        critical = sp.solve(sp.diff(product, s), s)
        require(critical == [2 * r**2], f"critical point {critical}")
        require_zero(product.subs(s, 2 * r**2) - r**4, "maximum r^4")
        require(sp.diff(product, s, 2).is_negative is True, "a maximum")

    @D.symbolic("Query and key biases are covered: they shift w and leave u - v",
                "With biases the score of row i on token j gains u_b^T x_j (u_b = W_K b_Q / sqrt(d_k), beta in it) and "
                "terms in i alone, so u and v both gain u_b^T delta: u - v, hence L, is unchanged and w moves to any "
                "real w'.  F is even in w and decreases in |w|, so F(w', L) <= F(min(|w'|, norm r^2), L): a point "
                "of the box bounds it.")
    def _():
        ub = sp.Matrix(d, 1, lambda r, _: sp.Symbol(f"ub{r}", real=True))
        biased = lambda xi, xj: (xi.T * A * xj)[0] + (ub.T * xj)[0]  # noqa: E731  (terms in i alone cancel in p_i1)
        for xi in (x1, x2):
            require_zero(biased(xi, x1) - biased(xi, x2) - ((xi.T * A * delta)[0] + (ub.T * delta)[0]), "shifted score")
        shifted_u, shifted_v = [biased(xi, x1) - biased(xi, x2) for xi in (x1, x2)]
        require_zero(shifted_u - shifted_v - (delta.T * A * delta)[0], "u - v unchanged")

    return D
