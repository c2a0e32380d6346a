"""collapse.global: D(PX) <= (1 - exp(-a D^2)) D for every X and every A (pure self-attention)."""

from __future__ import annotations

import sympy as sp

from proofs import collapse_dobrushin, collapse_tau
from proofs._framework import Derivation, require, require_zero


def build() -> Derivation:
    D = Derivation(
        claim="collapse.global",
        statement="For every X and every A: D(PX) <= (1 - exp(-a D^2)) D with D = D(X), a = ||A||_2.",
        source="the thesis on iterated self-attention, main theorem for pure self-attention",
    )

    @D.symbolic("Step 1, D(PX) <= tau(P) D(X): the checked steps of collapse.dobrushin hold (its triangle "
                "inequality is prose)", "The derivation proofs/collapse_dobrushin.py.")
    def _():
        result = collapse_dobrushin.build().run()
        require(result.ok, f"collapse.dobrushin: {result.summary()}")

    @D.symbolic("Step 2, tau(P) <= 1 - exp(-a D^2): the checked steps of collapse.tau hold (its spread at most "
                "a D^2, Cauchy-Schwarz, is prose)", "The derivation proofs/collapse_tau.py.")
    def _():
        result = collapse_tau.build().run()
        require(result.ok, f"collapse.tau: {result.summary()}")

    @D.symbolic("Translation invariance",
                "Shifting every token by c adds to S_ij a row term, a column term (c^T A x_j, the "
                "form u^T x_j of the bias cancellation) and a constant, so P is unchanged and "
                "P(X + 1 c^T) = PX + 1 c^T: D(PX) and D(X) depend only on differences of tokens.")
    def _():
        n, d = 2, 2
        A = sp.Matrix(d, d, lambda r, c: sp.Symbol(f"a{r}{c}", real=True))
        X = sp.Matrix(n, d, lambda r, c: sp.Symbol(f"x{r}{c}", real=True))
        c = sp.Matrix(d, 1, lambda r, _: sp.Symbol(f"c{r}", real=True))
        shifted = X + sp.ones(n, 1) * c.T
        delta = sp.expand(shifted * A * shifted.T - X * A * X.T)
        for i in range(n):
            for j in range(n):
                row_term = (X.row(i) * A * c)[0]
                column_term = (c.T * A * X.row(j).T)[0]
                require_zero(delta[i, j] - row_term - column_term - (c.T * A * c)[0], f"entry {i}{j}")
        p = sp.Symbol("p", nonnegative=True)
        P = sp.Matrix([[p, 1 - p], [1 - p, p]])
        require_zero(P * shifted - (P * X + sp.ones(n, 1) * c.T), "P(X + 1c^T) = PX + 1c^T")

    @D.symbolic("The factor 1 - exp(-a D^2) lies in [0, 1) and increases with D",
                "d/dD (1 - exp(-a D^2)) = 2 a D exp(-a D^2) >= 0.  So D_t never increases and every "
                "later factor is at most the first: D_t <= (1 - exp(-a D_0^2))^t D_0, exponential "
                "decay from every start (prose induction on this monotonicity).",
                formal="collapse.v:global_factor_range")
    def _():
        a, Dv = sp.symbols("a D", positive=True)
        factor = 1 - sp.exp(-a * Dv**2)
        require_zero(sp.diff(factor, Dv) - 2 * a * Dv * sp.exp(-a * Dv**2), "derivative")
        require(sp.limit(factor, Dv, sp.oo) == 1 and factor.subs(Dv, 0) == 0, "range of the factor")

    @D.symbolic("Near consensus the bound is cubic",
                "(1 - exp(-a D^2)) D = a D^3 - a^2 D^5 / 2 + O(D^7): the series coefficients.")
    def _():
        a, Dv = sp.symbols("a D", positive=True)
        series = sp.series((1 - sp.exp(-a * Dv**2)) * Dv, Dv, 0, 7).removeO()
        require_zero(series - (a * Dv**3 - a**2 * Dv**5 / 2), "series")

    D.prose("Combination", "D(PX) <= tau(P) D <= (1 - exp(-a D^2)) D by steps 1 and 2.")
    return D
