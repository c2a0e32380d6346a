"""Step 1 of collapse.global: D(PX) <= tau(P) D(X) for any row-stochastic P (Dobrushin)."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def build(n: int = 4, d: int = 2) -> Derivation:
    D = Derivation(
        claim="collapse.dobrushin",
        statement="For every row-stochastic P: tau(P) = 1 - min_{i,k} sum_j min(P_ij, P_kj) "
                  "= (1/2) max_{i,k} ||P_i - P_k||_1, and D(PX) <= tau(P) D(X).",
        source="the thesis on iterated self-attention, collapse.global step 1; Dobrushin's ergodicity coefficient",
    )

    @D.symbolic("Dobrushin identity, one coordinate: |p - q| = p + q - 2 min(p, q)",
                "Checked in both cases p >= q and p < q (p = q + t with t >= 0 and t < 0). "
                "Summing over j with sum_j p_j = sum_j q_j = 1 gives "
                "(1/2) ||p - q||_1 = 1 - sum_j min(p_j, q_j), hence the two forms of tau agree.")
    def _():
        q = sp.Symbol("q", real=True)
        for t in (sp.Symbol("t", nonnegative=True), sp.Symbol("t", negative=True)):
            p = q + t
            require_zero(sp.Abs(p - q) - (p + q - 2 * sp.Min(p, q)), f"case t {t.assumptions0}")

    @D.symbolic("Dobrushin identity, summed over a row",
                f"For probability vectors of length {n}: sum_j (p_j + q_j - 2 min) / 2 = 1 - sum_j min.")
    def _():
        p = sp.symbols(f"p1:{n + 1}", nonnegative=True)
        q = sp.symbols(f"q1:{n + 1}", nonnegative=True)
        mins = sp.symbols(f"m1:{n + 1}")
        half_l1 = sum(p[j] + q[j] - 2 * mins[j] for j in range(n)) / 2
        on_simplex = {p[-1]: 1 - sum(p[:-1]), q[-1]: 1 - sum(q[:-1])}
        require_zero(half_l1.subs(on_simplex) - (1 - sum(mins)), "half l1 distance")

    @D.symbolic("Split of a difference of two rows",
                "w = P_i - P_k sums to 0; write w = w+ - w- with disjoint supports, so "
                "sum w+ = sum w- = tau_ik = (1/2)||w||_1.  Then "
                "sum_j w_j x_j = (1/tau_ik) sum_{j,l} w+_j w-_l (x_j - x_l): checked with "
                f"{n} symbolic tokens in R^{d} and symbolic weights.")
    def _():
        wp = sp.symbols(f"wp1:{n + 1}", nonnegative=True)
        wm = sp.symbols(f"wm1:{n + 1}", nonnegative=True)
        tau = sp.Symbol("tau", positive=True)
        X = sp.Matrix(n, d, lambda j, c: sp.Symbol(f"x{j + 1}_{c + 1}", real=True))
        lhs = sum(((wp[j] - wm[j]) * X.row(j) for j in range(n)), sp.zeros(1, d))
        rhs = sum(((wp[j] * wm[l] / tau) * (X.row(j) - X.row(l)) for j in range(n) for l in range(n)),
                  sp.zeros(1, d))
        balance = {wp[-1]: tau - sum(wp[:-1]), wm[-1]: tau - sum(wm[:-1])}
        require_zero((lhs - rhs).subs(balance), "mass transport identity")

    D.prose("Triangle inequality",
            "||(PX)_i - (PX)_k|| <= (1/tau_ik) sum_{j,l} w+_j w-_l ||x_j - x_l|| "
            "<= (1/tau_ik) tau_ik^2 D(X) = tau_ik D(X) <= tau(P) D(X); maximise over i, k.")

    @D.symbolic("The bound is an equality for n = 2",
                "(PX)_1 - (PX)_2 = (P11 - P21)(x_1 - x_2) and tau(P) = |P11 - P21|, so "
                "D(PX) = tau(P) D(X) exactly: the constant 1 in front of tau cannot be lowered "
                "(and ball arithmetic cannot decide this equality, only enclose both sides).")
    def _():
        a, b = sp.symbols("a b", nonnegative=True)
        P = sp.Matrix([[a, 1 - a], [b, 1 - b]])
        X = sp.Matrix(2, d, lambda j, c: sp.Symbol(f"x{j + 1}_{c + 1}", real=True))
        Y = P * X
        require_zero((Y.row(0) - Y.row(1)) - (a - b) * (X.row(0) - X.row(1)), "n = 2 difference")
        tau = sp.Rational(1, 2) * (sp.Abs(a - b) + sp.Abs((1 - a) - (1 - b)))
        require(sp.simplify(tau - sp.Abs(a - b)) == 0, "tau for n = 2")

    return D
