"""Step 2 of collapse.global: softmax spread, tau(P) <= 1 - exp(-a D^2), with the bias cancellation."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require_zero

N_TOKENS, DIM, DIM_K = 3, 2, 2


def _stated_u(WQ, WK, bQ, bK, dk):
    """docs/claims.md: the column term of the score is u^T x_j with u = W_K b_Q / sqrt(d_k)."""
    return WK * bQ / sp.sqrt(dk)


def _setup():
    beta = sp.Symbol("beta", positive=True)
    dk = sp.Integer(DIM_K)
    WQ = sp.Matrix(DIM, DIM_K, lambda r, c: sp.Symbol(f"q{r}{c}", real=True))
    WK = sp.Matrix(DIM, DIM_K, lambda r, c: sp.Symbol(f"k{r}{c}", real=True))
    bQ = sp.Matrix(DIM_K, 1, lambda r, c: sp.Symbol(f"bq{r}", real=True))
    bK = sp.Matrix(DIM_K, 1, lambda r, c: sp.Symbol(f"bk{r}", real=True))
    X = [sp.Matrix(DIM, 1, lambda r, c, j=j: sp.Symbol(f"x{j}_{r}", real=True)) for j in range(N_TOKENS)]
    return beta, dk, WQ, WK, bQ, bK, X


def _scores(beta, dk, WQ, WK, bQ, bK, X):
    """S_ij = beta q_i^T k_j / sqrt(d_k) with q_i = W_Q^T x_i + b_Q, k_j = W_K^T x_j + b_K."""
    q = [WQ.T * x + bQ for x in X]
    k = [WK.T * x + bK for x in X]
    return [[beta * (q[i].T * k[j])[0] / sp.sqrt(dk) for j in range(N_TOKENS)] for i in range(N_TOKENS)]


def build(u_formula=_stated_u) -> Derivation:
    D = Derivation(
        claim="collapse.tau",
        statement="log(P_ij / P_kj) = (x_i - x_k)^T A x_j + c_ik, its spread over j is at most a D^2, "
                  "so min_j P_ij / P_kj >= exp(-a D^2) and tau(P) <= 1 - exp(-a D^2); query and key "
                  "biases change nothing.",
        source="the thesis on iterated self-attention, collapse.global step 2; docs/claims.md conventions (biases)",
    )

    @D.symbolic("Scores with biases: S_ij = x_i^T A x_j + c_i + u^T x_j",
                f"With A = beta W_Q W_K^T / sqrt(d_k), c_i = beta (x_i^T W_Q b_K + b_Q^T b_K) / sqrt(d_k) "
                f"(row term) and u = beta W_K b_Q / sqrt(d_k) (the same for every row); checked with "
                f"symbolic W_Q, W_K in R^{DIM}x{DIM_K}, biases and {N_TOKENS} tokens.")
    def _():
        beta, dk, WQ, WK, bQ, bK, X = _setup()
        S = _scores(beta, dk, WQ, WK, bQ, bK, X)
        A = beta * WQ * WK.T / sp.sqrt(dk)
        u = beta * u_formula(WQ, WK, bQ, bK, dk)
        for i in range(N_TOKENS):
            c_i = beta * ((X[i].T * WQ * bK)[0] + (bQ.T * bK)[0]) / sp.sqrt(dk)
            for j in range(N_TOKENS):
                require_zero(sp.expand(S[i][j] - (X[i].T * A * X[j])[0] - c_i - (u.T * X[j])[0]),
                             f"score ({i}, {j})")

    @D.symbolic("Softmax ignores a row term",
                "exp(s_ij + c_i) / sum_l exp(s_il + c_i) = exp(s_ij) / sum_l exp(s_il).")
    def _():
        s = sp.symbols(f"s1:{N_TOKENS + 1}", real=True)
        c = sp.Symbol("c", real=True)
        for j in range(N_TOKENS):
            shifted = sp.exp(s[j] + c) / sum(sp.exp(v + c) for v in s)
            require_zero(shifted - sp.exp(s[j]) / sum(sp.exp(v) for v in s), f"entry {j}")

    @D.symbolic("Log-ratio: the column term u^T x_j cancels",
                "log(P_ij / P_kj) = S_ij - S_kj + log(Z_k / Z_i) = (x_i - x_k)^T A x_j + c_ik with "
                "c_ik = c_i - c_k + log(Z_k / Z_i) independent of j.")
    def _():
        beta, dk, WQ, WK, bQ, bK, X = _setup()
        S = _scores(beta, dk, WQ, WK, bQ, bK, X)
        A = beta * WQ * WK.T / sp.sqrt(dk)
        i, k = 0, 1
        for j in range(N_TOKENS):
            diff = S[i][j] - S[k][j] - ((X[i] - X[k]).T * A * X[j])[0]
            # what is left must not depend on the column j: compare with column 0
            rest0 = S[i][0] - S[k][0] - ((X[i] - X[k]).T * A * X[0])[0]
            require_zero(sp.expand(diff - rest0), f"column {j}: leftover depends on j")

    @D.symbolic("Spread over j: log(P_ij/P_kj) - log(P_ij'/P_kj') = (x_i - x_k)^T A (x_j - x_j')",
                "Computed from the softmax of the biased scores themselves (normalisers included).")
    def _():
        beta, dk, WQ, WK, bQ, bK, X = _setup()
        S = _scores(beta, dk, WQ, WK, bQ, bK, X)
        A = beta * WQ * WK.T / sp.sqrt(dk)
        Z = [sum(sp.exp(v) for v in row) for row in S]
        P = [[sp.exp(S[r][j]) / Z[r] for j in range(N_TOKENS)] for r in range(N_TOKENS)]
        i, k, j, jp = 0, 1, 1, 2
        log_ratio = sp.expand_log(sp.log(P[i][j] / P[k][j]) - sp.log(P[i][jp] / P[k][jp]), force=True)
        require_zero(sp.expand(log_ratio - ((X[i] - X[k]).T * A * (X[j] - X[jp]))[0]), "spread")

    D.prose("Spread at most a D^2",
            "|(x_i - x_k)^T A (x_j - x_j')| <= ||x_i - x_k|| ||A||_2 ||x_j - x_j'|| <= a D^2 "
            "(Cauchy-Schwarz and the definition of the operator norm).  It involves only "
            "differences of tokens, so the bound is translation invariant and blind to token size.")

    @D.symbolic("The ratios r_j = P_ij / P_kj have P_k-weighted mean 1",
                "sum_j P_kj r_j = sum_j P_ij = 1, so min_j r_j <= 1 <= max_j r_j.")
    def _():
        p = sp.symbols(f"p1:{N_TOKENS + 1}", positive=True)
        r = sp.symbols(f"r1:{N_TOKENS + 1}", positive=True)
        rows = {r[j]: p[j] / sp.Symbol(f"pk{j}", positive=True) for j in range(N_TOKENS)}
        weighted = sum(sp.Symbol(f"pk{j}", positive=True) * r[j] for j in range(N_TOKENS)).subs(rows)
        require_zero(weighted - sum(p), "weighted mean of the ratios")

    @D.symbolic("Overlap as a weighted minimum: min(P_ij, P_kj) = P_kj min(r_j, 1)",
                "Checked in both cases r_j >= 1 and r_j < 1.")
    def _():
        pk = sp.Symbol("pk", positive=True)
        for r in (1 + sp.Symbol("t", nonnegative=True), 1 - sp.Symbol("t", positive=True)):
            require_zero(sp.Min(pk * r, pk) - pk * sp.Min(r, 1), f"case r = {r}")

    D.prose("Conclusion",
            "max_j r_j / min_j r_j = exp(spread) <= exp(a D^2) and max_j r_j >= 1, so every "
            "r_j >= exp(-a D^2); then sum_j min(P_ij, P_kj) = sum_j P_kj min(r_j, 1) >= exp(-a D^2) "
            "and tau(P) = 1 - min_{i,k} sum_j min(P_ij, P_kj) <= 1 - exp(-a D^2).  With biases the "
            "same holds: only differences (x_i - x_k) and (x_j - x_j') entered.")
    return D
