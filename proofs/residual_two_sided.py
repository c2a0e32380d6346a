"""residual.two_sided: X' = X + P X V^T, two-sided bound and the expansion near consensus."""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from proofs._framework import Derivation, require, require_expands_to_zero, require_zero

N_TOKENS, DIM = 3, 2


def _stated_third_order(Ec, A, V, n):
    """The order-eps^3 disagreement derived below: (1/n) E_c A E_c^T E_c V^T, E_c = C E."""
    return Ec * A * Ec.T * Ec * V.T / n


def _series_lemma():
    """Scalar facts behind the expansion of P: for z = eps a + eps^2 b,
    exp(z) = 1 + eps a + eps^2 (b + a^2/2) + O(eps^3), and
    1 / (n + eps A1 + eps^2 A2) = 1/n - eps A1/n^2 + eps^2 (A1^2/n^3 - A2/n^2) + O(eps^3)."""
    eps, a, b, A1, A2 = sp.symbols("epsilon a b A1 A2")
    n = sp.Symbol("n", positive=True)
    exp_series = sp.series(sp.exp(eps * a + eps**2 * b), eps, 0, 3).removeO()
    inverse_series = sp.series(1 / (n + eps * A1 + eps**2 * A2), eps, 0, 3).removeO()
    return (sp.expand(exp_series - (1 + eps * a + eps**2 * (b + a**2 / 2))),
            sp.expand(inverse_series - (1 / n - eps * A1 / n**2 + eps**2 * (A1**2 / n**3 - A2 / n**2))))


@lru_cache(maxsize=None)
def _expansion(n: int = N_TOKENS):
    """Taylor coefficients in eps of P(eps) and of the disagreement C X' for X = 1 xbar^T + eps E, n tokens.

    P_ij = 1 / sum_l exp(S_il - S_ij) exactly, and S_il - S_ij = eps a_l + eps^2 b_l (the constant
    xbar^T A xbar cancels), so the series lemma gives P_0, P_1, P_2 by polynomial algebra.  The
    coefficients of P X come from the Cauchy product with X_0 = 1 xbar^T, X_1 = E (P_k X_0 = 0
    for k >= 1 is checked separately from the exact row sums).
    """
    d = DIM
    eps = sp.Symbol("epsilon")
    E = sp.Matrix(n, d, lambda i, j: sp.Symbol(f"e{i}{j}", real=True))
    A = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
    V = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"v{i}{j}", real=True))
    xbar = sp.Matrix(d, 1, lambda i, _: sp.Symbol(f"m{i}", real=True))
    ones = sp.ones(n, 1)
    X = ones * xbar.T + eps * E
    S = (X * A * X.T).expand()
    Ps = [sp.zeros(n, n) for _ in range(3)]
    for i in range(n):
        for j in range(n):
            z = [sp.expand(S[i, l] - S[i, j]) for l in range(n)]
            if any(zl.coeff(eps, 0) != 0 for zl in z):
                raise AssertionError("the constant score term did not cancel")
            a1 = sum(zl.coeff(eps, 1) for zl in z)
            a2 = sum(zl.coeff(eps, 2) + zl.coeff(eps, 1)**2 / 2 for zl in z)
            Ps[0][i, j] = sp.Rational(1, n)
            Ps[1][i, j] = sp.expand(-a1 / n**2)
            Ps[2][i, j] = sp.expand(a1**2 / n**3 - a2 / n**2)
    Xs = [ones * xbar.T, E, sp.zeros(n, d), sp.zeros(n, d)]
    C = sp.eye(n) - sp.ones(n, n) / n
    disagreement = []
    for k in range(4):
        PX_k = sum((Ps[m] * Xs[k - m] for m in range(min(k, 2) + 1)), sp.zeros(n, d))
        disagreement.append((C * (Xs[k] + PX_k * V.T)).applyfunc(sp.expand))
    return {"Ps": Ps, "C": C, "E": E, "A": A, "V": V, "S": S, "eps": eps, "disagreement": disagreement}


def build(third_order=_stated_third_order) -> Derivation:
    D = Derivation(
        claim="residual.two_sided",
        statement="X' = X + P X V^T gives (1 - ||V||_2 tau) D <= D' <= (1 + ||V||_2 tau) D with "
                  "tau <= 1 - exp(-a D^2) <= a D^2; near consensus no layer reduces D by a fixed factor. "
                  "With X = 1 xbar^T + eps E the disagreement passes unchanged at order eps, its eps^2 "
                  "term vanishes, attention acts at order eps^3.",
        source="the thesis on iterated self-attention",
        note="Re-derived: the eps^2 term of the disagreement C X' (C = I - 11^T/n) is exactly zero "
             "(the first-order attention matrix has identical rows), and the eps^3 term is "
             "(1/n) E_c A E_c^T E_c V^T with E_c = C E, nonzero in general.  The claim stands as stated, "
             "for the disagreement; the mean token does move at order eps.",
    )

    @D.symbolic("Differences of the residual update",
                "x'_i - x'_k = (x_i - x_k) + V ((PX)_i - (PX)_k), checked for n = 2, d = 2.")
    def _():
        p, q = sp.symbols("p q", nonnegative=True)
        P = sp.Matrix([[p, 1 - p], [q, 1 - q]])
        X = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"x{i}{j}", real=True))
        V = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"v{i}{j}", real=True))
        Y = X + P * X * V.T
        PX = P * X
        require_expands_to_zero((Y.row(0) - Y.row(1)).T - (X.row(0) - X.row(1)).T
                                - V * (PX.row(0) - PX.row(1)).T, "difference identity")

    D.prose("Two-sided bound",
            "||V ((PX)_i - (PX)_k)|| <= ||V||_2 tau D (collapse.dobrushin), so by the triangle "
            "inequality D' <= (1 + ||V||_2 tau) D; for the pair (i, k) with ||x_i - x_k|| = D, "
            "D' >= ||x'_i - x'_k|| >= (1 - ||V||_2 tau) D.  tau <= 1 - exp(-a D^2) <= a D^2 by "
            "collapse.tau and collapse.cubic.")

    @D.symbolic("No fixed contraction factor near consensus",
                "For any q < 1 and any parameters (a, v = ||V||_2): D^2 < (1 - q) / (v a) gives "
                "D' / D >= 1 - v a D^2 > q.  Solved for the threshold.",
                formal="residual.v:residual_no_fixed_factor")
    def _():
        v, a, q, Dv = sp.symbols("v a q D", positive=True)
        threshold = sp.solve(sp.Eq(1 - v * a * Dv**2, q), Dv)
        require(len(threshold) == 1, f"one positive threshold, got {threshold}")
        require_zero(threshold[0]**2 - (1 - q) / (v * a), "threshold D^2 = (1 - q) / (v a)")

    @D.symbolic("Series lemma for the softmax",
                "exp(eps a + eps^2 b) = 1 + eps a + eps^2 (b + a^2/2) + O(eps^3) and "
                "1/(n + eps A1 + eps^2 A2) = 1/n - eps A1/n^2 + eps^2 (A1^2/n^3 - A2/n^2) + O(eps^3): "
                "the coefficients behind P_0, P_1, P_2 below.")
    def _():
        exp_gap, inverse_gap = _series_lemma()
        require(exp_gap == 0 and inverse_gap == 0, f"series: {exp_gap}, {inverse_gap}")

    @D.symbolic("The expansion is the softmax's Taylor series to order eps^2",
                "P_k = (1/k!) d^k P / d eps^k at eps = 0 for the exact P_ij = 1 / sum_l exp(S_il - S_ij): P_1 and "
                "the part of P_2 alike in every row never reach the disagreement C X', so only this ties them to "
                "the softmax.")
    def _():
        ex = _expansion()
        S, eps, n = ex["S"], ex["eps"], N_TOKENS
        for i in range(n):
            for j in range(n):
                exact = 1 / sum(sp.exp(S[i, l] - S[i, j]) for l in range(n))
                for k in range(3):
                    coefficient = sp.diff(exact, eps, k).subs(eps, 0) / sp.factorial(k)
                    require_expands_to_zero(coefficient - ex["Ps"][k][i, j], f"P_{k} entry ({i}, {j})")

    @D.symbolic("Attention stays row-stochastic to every order",
                "P_ij = 1 / sum_l exp(S_il - S_ij); with w_l = exp(S_il) > 0 the row sum "
                "sum_j w_j / sum_l w_l is 1 for every eps, so every Taylor coefficient P_k with k >= 1 "
                "has zero row sums and P_k 1 xbar^T = 0.")
    def _():
        w = sp.symbols(f"w1:{N_TOKENS + 1}", positive=True)
        row_sum = sum(1 / sum(w[l] / w[j] for l in range(N_TOKENS)) for j in range(N_TOKENS))
        require_zero(row_sum - 1, "row sum")
        s_l, s_j = sp.symbols("s_l s_j", real=True)
        require_zero(sp.exp(s_l - s_j) - sp.exp(s_l) / sp.exp(s_j), "exp(s_l - s_j) = w_l / w_j")

    @D.symbolic("Order 0 and 1 of attention: P_0 = 11^T / n and P_1 has identical rows",
                "The order-eps scores are (xbar^T A e_j) + (e_i^T A xbar): the row term cancels and the "
                "column term is the same for every row, so C P_1 = 0; the rows of P_2 differ (through "
                "e_i^T A e_j).")
    def _():
        ex = _expansion()
        n = N_TOKENS
        require_expands_to_zero(ex["Ps"][0] - sp.ones(n, n) / n, "P_0 uniform")
        require_expands_to_zero(ex["C"] * ex["Ps"][1], "P_1 rows identical")
        require(any(sp.expand(e) != 0 for e in ex["C"] * ex["Ps"][2]), "P_2 rows differ")

    @D.symbolic("Order eps: the disagreement passes through unchanged",
                "[eps^0] C X' = 0 and [eps^1] C X' = C E, the disagreement of X itself.")
    def _():
        ex = _expansion()
        require_expands_to_zero(ex["disagreement"][0], "order 0")
        require_expands_to_zero(ex["disagreement"][1] - ex["C"] * ex["E"], "order 1")

    @D.symbolic("Order eps^2: the disagreement term vanishes", "[eps^2] C X' = C P_1 E V^T = 0.")
    def _():
        require_expands_to_zero(_expansion()["disagreement"][2], "order 2")

    @D.symbolic("Order eps^3: attention acts, (1/n) E_c A E_c^T E_c V^T",
                "[eps^3] C X' = C P_2 E V^T, and C P_2 E = (1/n) E_c A E_c^T E_c: checked for n = 2 and 3, so "
                "that the factor is 1/n and not a constant equal to it at one n.")
    def _():
        for n in (2, N_TOKENS):
            ex = _expansion(n)
            Ec = ex["C"] * ex["E"]
            require_expands_to_zero(ex["disagreement"][3] - third_order(Ec, ex["A"], ex["V"], n), f"order 3, n = {n}")

    @D.symbolic("The order-eps^3 term is not zero in general",
                "At E = ((1, 0), (0, 1), (0, 0)), A = V = I it is a nonzero matrix.")
    def _():
        ex = _expansion()
        values = {ex["E"][0, 0]: 1, ex["E"][1, 1]: 1}
        values.update({e: 0 for e in ex["E"] if e not in values})
        values.update({ex["A"][i, j]: int(i == j) for i in range(DIM) for j in range(DIM)})
        values.update({ex["V"][i, j]: int(i == j) for i in range(DIM) for j in range(DIM)})
        third = ex["disagreement"][3].subs(values)
        require(any(e != 0 for e in third), "order 3 vanishes at the instance")

    D.prose("Consequence for the diameter",
            "x'_i - x'_k = eps (e_i - e_k) + O(eps^3), so D' = D (1 + O(D^2)): the relative change is "
            "of order a D^2, matching the two-sided bound.")
    return D
