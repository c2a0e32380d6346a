"""value.expansive: rho = ||V||_2 > 1; collapse near consensus only."""

from __future__ import annotations

import sympy as sp
from flint import arb

from proofs._framework import Derivation, require, require_zero


def _two_antipodal_tokens(rho, lam, r):
    """X = (r e1, -r e1) in R^1 under A = lam, V = rho: the updated tokens."""
    X = sp.Matrix([r, -r])
    S = lam * X * X.T
    P = sp.Matrix(2, 2, lambda i, j: sp.exp(S[i, j]) / (sp.exp(S[i, 0]) + sp.exp(S[i, 1])))
    return rho * P * X


def build() -> Derivation:
    D = Derivation(
        claim="value.expansive",
        statement="With rho = ||V||_2 > 1: D' <= rho (1 - exp(-a D^2)) D <= rho a D^3, so collapse "
                  "(doubly exponential) holds when rho a D_0^2 < 1; far from consensus some "
                  "configurations do not collapse (V = rho I, A = lambda I, two antipodal tokens).",
        source="the thesis on iterated self-attention",
    )
    rho, a, D0, lam, r = sp.symbols("rho a D_0 lambda r", positive=True)
    t = sp.Symbol("t", integer=True, nonnegative=True)

    D.prose("One layer", "Rows of P X V^T are V applied to rows of PX, so D' <= rho D(PX) "
            "<= rho (1 - exp(-a D^2)) D <= rho a D^3 (collapse.global, collapse.cubic).")

    @D.symbolic("Closed form: D_t <= (rho a)^{-1/2} (sqrt(rho a) D_0)^{3^t}",
                "b_0 = D_0 and b_{t+1} = rho a b_t^3, so by induction (x -> rho a x^3 increasing) "
                "D_t <= b_t -> 0 doubly exponentially when sqrt(rho a) D_0 < 1.")
    def _():
        b = lambda k: (rho * a)**sp.Rational(-1, 2) * (sp.sqrt(rho * a) * D0)**(3**k)  # noqa: E731
        require_zero(b(0) - D0, "b_0")
        require_zero(sp.expand_log(sp.log(b(t + 1)) - sp.log(rho * a * b(t)**3), force=True), "recursion")

    @D.symbolic("Counterexample: two antipodal tokens, V = rho I, A = lambda I",
                "X = (r e1, -r e1): P has rows (e^{lambda r^2}, e^{-lambda r^2}) / Z and its mirror, "
                "and the new tokens are +-rho tanh(lambda r^2) r e1: D' = rho tanh(lambda D^2 / 4) D.")
    def _():
        Y = _two_antipodal_tokens(rho, lam, r)
        require_zero((Y[0] - Y[1]) / (2 * r) - rho * sp.tanh(lam * r**2), "D' / D")
        require_zero(Y[0] + Y[1], "the tokens stay antipodal")

    @D.symbolic("No collapse once rho tanh(lambda D^2 / 4) >= 1",
                "tanh increases, so D' >= D keeps the condition for ever: D_t never decreases.  The "
                "threshold is D* = 2 sqrt(atanh(1 / rho) / lambda), finite because rho > 1.")
    def _():
        Dstar = 2 * sp.sqrt(sp.atanh(1 / rho) / lam)
        require_zero(rho * sp.tanh(lam * Dstar**2 / 4) - 1, "threshold")
        slope = 2 * lam * r / sp.cosh(lam * r**2)**2
        require_zero(sp.diff(sp.tanh(lam * r**2), r) - slope, "derivative of tanh(lambda r^2)")
        require(bool(slope.is_positive), "tanh(lambda D^2/4) increases with D")

    @D.ball("Instance rho = 2, lambda = 1, D_0 = 2: D_1 / D_0 = 2 tanh(1) > 1",
                 "arb enclosure of 2 tanh(1) (= 1.523...), certainly above 1.",
                 formal="value.v:value_instance_expands")
    def _():
        ratio = 2 * arb(1).tanh()
        require(bool(ratio > 1), f"2 tanh(1) = {ratio}")

    @D.symbolic("Consistent with the global bound: tanh(y) <= 1 - exp(-4y) for y >= 0",
                "Here a = lambda, D^2 = 4 r^2 and y = lambda r^2 = a D^2 / 4.  With u = exp(-2y) in (0, 1]: "
                "1 - exp(-4y) - tanh(y) = u (1 - u) (2 + u) / (1 + u) >= 0, a product of nonnegative factors.",
                formal="value.v:value_tanh_le_global")
    def _():
        u, y = sp.Symbol("u", positive=True), sp.Symbol("y", positive=True)
        gap = (1 - sp.exp(-4 * y) - sp.tanh(y)).rewrite(sp.exp)
        require_zero(gap.subs(y, -sp.log(u) / 2) - u * (1 - u) * (2 + u) / (1 + u), "factorisation")

    @D.symbolic("Consistent with the local guarantee",
                "If rho lambda D^2 < 1 then rho tanh(lambda D^2/4) <= rho lambda D^2/4 < 1/4: the "
                "counterexample lives outside the region where collapse is guaranteed.  Checked: "
                "tanh(x) <= x since d/dx (x - tanh x) = tanh(x)^2 >= 0 and equality at 0.",
                formal="value.v:value_tanh_le_x")
    def _():
        x = sp.Symbol("x", nonnegative=True)
        require_zero(sp.diff(x - sp.tanh(x), x) - sp.tanh(x)**2, "derivative of x - tanh x")
        require((x - sp.tanh(x)).subs(x, 0) == 0, "value at 0")
    return D
