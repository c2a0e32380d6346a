"""Centred dynamics: the identities behind certify.core.centred (X = 1 c^T + E, any depth at fixed precision)."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_expands_to_zero, require_zero

N, DIM = 3, 2  # the identities are checked entrywise on symbolic 3 x 2 configurations


def _symbols(name, rows, cols):
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}{i}{j}", real=True))


def build() -> Derivation:
    D = Derivation(
        claim="centred.dynamics",
        statement="For X = 1 c^T + E and translation-equivariant layers (attention, masks, V, residual), "
                  "P X = 1 (c + pi^T E)^T + Delta E without a mask, with Delta = P - Pi computed from "
                  "expm1 of the scores e_i^T A e_j: the disagreement E' is obtained without subtracting "
                  "quantities of the size of c.",
        source="this project (docs/claims.md, 'Beyond the papers')",
    )
    c = _symbols("c", DIM, 1)
    E = _symbols("e", N, DIM)
    A = _symbols("a", DIM, DIM)
    ones = sp.ones(N, 1)
    X = ones * c.T + E
    k = A.T * c

    @D.symbolic("Scores: x_i^T A x_j = (row constant) + k^T e_j + e_i^T A e_j, k = A^T c",
                "The row constant c^T A c + e_i^T A c is the same for every j; softmax does not see it.")
    def _():
        S = X * A * X.T
        for i in range(N):
            row_constant = (c.T * A * c)[0] + (E[i, :] * A * c)[0]
            for j in range(N):
                rest = (k.T * E[j, :].T)[0] + (E[i, :] * A * E[j, :].T)[0]
                require_expands_to_zero(S[i, j] - row_constant - rest, f"S_{i}{j}")

    @D.symbolic("Query bias: the column term gains (beta/sqrt(d_k)) (W_K b_Q)^T e_j, the key bias a row constant",
                "(W_Q^T x_i + b_Q)^T (W_K^T x_j + b_K) = x_i^T W_Q W_K^T x_j + b_Q^T W_K^T x_j + (terms in i alone).")
    def _():
        WQ, WK = _symbols("q", DIM, 1), _symbols("k", DIM, 1)
        bQ, bK = sp.Symbol("bq", real=True), sp.Symbol("bk", real=True)
        xi, xj = _symbols("xi", DIM, 1), _symbols("xj", DIM, 1)
        score = ((WQ.T * xi)[0] + bQ) * ((WK.T * xj)[0] + bK)
        in_i_alone = ((WQ.T * xi)[0] + bQ) * bK
        require_expands_to_zero(score - in_i_alone - (xi.T * WQ * WK.T * xj)[0] - bQ * (WK.T * xj)[0],
                                "biased score")

    w = sp.symbols("w0:%d" % N, positive=True)  # w_j = exp(k^T e_j)
    q = sp.Matrix(N, N, lambda i, j: sp.Symbol(f"s{i}{j}", real=True))  # q_ij = e_i^T A e_j
    mask = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]  # causal: the identities hold for any mask with self-loops

    z = sp.Matrix(N, N, lambda i, j: sp.Symbol(f"z{i}{j}", positive=True))  # z_ij = exp(q_ij): rational checks

    def softmax_row(i, allowed, exp=sp.exp):
        weights = [w[j] * exp(i, j) if allowed[j] else 0 for j in range(N)]
        return [x / sum(weights) for x in weights]

    def exp_q(i, j):
        return sp.exp(q[i, j])

    def exp_z(i, j):
        return z[i, j]

    def require_rational_zero(expr, message):
        """An identity between rational functions of the symbols: cancel() is exact and fast."""
        entries = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
        require(all(sp.cancel(sp.together(e)) == 0 for e in entries), message)

    def reference_row(i, allowed):
        total = sum(w[j] for j in range(N) if allowed[j])
        return [w[j] / total if allowed[j] else 0 for j in range(N)]

    def deviation_row(i, allowed, exp=exp_z):
        """Delta_ij = Pi_ij ((1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il) / (1 + sum_l Pi_il u_il), u = exp(q) - 1
        (certify.core.centred's form)."""
        Pi = reference_row(i, allowed)
        u = [exp(i, j) - 1 for j in range(N)]
        mean = sum(Pi[l] * u[l] for l in range(N))
        return [Pi[j] * ((1 - Pi[j]) * u[j] - sum(Pi[l] * u[l] for l in range(N) if l != j)) / (1 + mean)
                for j in range(N)]

    @D.symbolic("Softmax: P_ij = Pi_ij exp(q_ij) / sum_l Pi_il exp(q_il), Pi_ij = w_j / sum_{l in N(i)} w_l",
                "The column term factors out of the exponential as w_j; normalising it over the row's "
                "neighbourhood gives the reference Pi (uniform when k^T e_j does not depend on j).")
    def _():
        for allowed in ([1] * N, mask[1]):
            P, Pi = softmax_row(1, allowed, exp_q), reference_row(1, allowed)
            normaliser = sum(Pi[l] * sp.exp(q[1, l]) for l in range(N))
            for j in range(N):
                require_zero(P[j] - Pi[j] * sp.exp(q[1, j]) / normaliser, f"P_1{j}")

    @D.symbolic("Deviation: P - Pi = Delta, from u = expm1(q) alone",
                "u_ij - sum_l Pi_il u_il = (1 - Pi_ij) u_ij - sum_{l != j} Pi_il u_il because the row of Pi "
                "sums to 1: the term l = j enters once, so its radius is not added twice.  Every factor is "
                "small when q is.  The denominator 1 + ubar_i is Z_i = sum_l Pi_il exp(q_il), a sum of positive "
                "terms; far from consensus Delta = Pi_ij exp(q_ij) / Z_i - Pi_ij directly.")
    def _():
        for i, allowed in ((0, mask[0]), (1, mask[1]), (2, [1] * N)):
            P, Pi, Delta = softmax_row(i, allowed, exp_z), reference_row(i, allowed), deviation_row(i, allowed)
            Z = sum(Pi[l] * z[i, l] for l in range(N))
            require_rational_zero(Z - (1 + sum(Pi[l] * (z[i, l] - 1) for l in range(N))), "Z = 1 + ubar")
            for j in range(N):
                require_rational_zero(P[j] - Pi[j] - Delta[j], f"row {i}, entry {j}")
                require_rational_zero(P[j] - Pi[j] * z[i, j] / Z, f"the direct form, row {i}, entry {j}")
            require_rational_zero(sum(Delta), f"the deviations of row {i} sum to 0")

    @D.symbolic("Row shift: Delta is unchanged when q_i. is shifted by any sigma_i (u = expm1(q - sigma))",
                "P does not see a row constant, and Pi does not depend on q: so neither does Delta = P - Pi.")
    def _():
        sigma = sp.Symbol("sigma", real=True)
        shifted = [w[j] * sp.exp(q[0, j] - sigma) for j in range(N)]
        require_zero(sp.Matrix([x / sum(shifted) for x in shifted]) - sp.Matrix(softmax_row(0, [1] * N, exp_q)), "shift")

    @D.symbolic("No mask: Pi E = 1 (pi^T E)^T is a translation, so P X = 1 (c + pi^T E)^T + Delta E",
                "Every row of Pi is pi = w / sum w; P 1 = 1.  The disagreement is Delta E: cubic in E near "
                "consensus, and computed from small factors only.")
    def _():
        Pi = sp.Matrix([reference_row(i, [1] * N) for i in range(N)])
        Delta = sp.Matrix([deviation_row(i, [1] * N) for i in range(N)])
        require_rational_zero((Pi + Delta) * X - ones * (c + E.T * Pi[0, :].T).T - Delta * E, "P X")

    @D.symbolic("Masked: P X = 1 c^T + Pi E + Delta E, and recentring F = 1 m^T + (F - 1 m^T) moves m into c",
                "P 1 = 1 row by row; the recentred disagreement has zero column sums.")
    def _():
        Pi = sp.Matrix([reference_row(i, mask[i]) for i in range(N)])
        Delta = sp.Matrix([deviation_row(i, mask[i]) for i in range(N)])
        F = Pi * E + Delta * E
        m = F.T * ones / N
        require_rational_zero((Pi + Delta) * X - ones * (c + m).T - (F - ones * m.T), "masked P X")
        require_rational_zero((F - ones * m.T).T * ones, "zero column sums")

    @D.symbolic("Value matrix and residual act on c and E separately",
                "(1 c^T + E) V^T = 1 (V c)^T + E V^T, and the residual adds X = 1 c^T + E itself.")
    def _():
        V = _symbols("v", DIM, DIM)
        require_expands_to_zero(X * V.T - ones * (V * c).T - E * V.T, "value")
        require_expands_to_zero(X + X * V.T - ones * (c + V * c).T - (E + E * V.T), "residual")

    @D.symbolic("D, mu and tau need E and Delta only",
                "x_i - x_k = e_i - e_k; mu(X) = ||X - 1 xbar^T||_F = ||E - 1 ebar^T||_F; without a mask "
                "P_i - P_k = Delta_i - Delta_k (the rows of Pi agree), and tau = (1/2) max ||P_i - P_k||_1.")
    def _():
        for i in range(N):
            for kk in range(N):
                require_expands_to_zero(X[i, :] - X[kk, :] - (E[i, :] - E[kk, :]), "differences")
        mean_X, mean_E = X.T * ones / N, E.T * ones / N
        require_expands_to_zero((X - ones * mean_X.T) - (E - ones * mean_E.T), "consensus distance")
        Pi = sp.Matrix([reference_row(i, [1] * N) for i in range(N)])
        require(all(Pi[0, j] == Pi[i, j] for i in range(N) for j in range(N)), "the rows of Pi agree")

    @D.symbolic("Dobrushin: 1 - sum_j min(p_j, q_j) = (1/2) sum_j |p_j - q_j| for probability vectors",
                "min(x, y) = (x + y - |x - y|) / 2, summed with sum p = sum q = 1.")
    def _():
        x, t = sp.Symbol("x", real=True), sp.Symbol("t", nonnegative=True)
        # by symmetry take y = x + t >= x: then min = x and |x - y| = t
        require_zero(x - (x + (x + t) - t) / 2, "min(x, y) = (x + y - |x - y|) / 2")
        p, q = sp.symbols("p0:3", nonnegative=True), sp.symbols("q0:3", nonnegative=True)
        sum_min = sum((p[j] + q[j] - sp.Abs(p[j] - q[j])) / 2 for j in range(3))
        half_l1 = sum(sp.Abs(p[j] - q[j]) for j in range(3)) / 2
        total = sum_min.subs({p[2]: 1 - p[0] - p[1], q[2]: 1 - q[0] - q[1]})
        require_zero(1 - total - half_l1.subs({p[2]: 1 - p[0] - p[1], q[2]: 1 - q[0] - q[1]}), "tau")

    D.prose("Precision",
            "Every quantity above is a product or a sum of terms of the size of the result (Delta is of the "
            "size of q, Delta E of the size of E'), so a ball computed at p bits keeps about p bits of "
            "relative accuracy per step whatever the size of c: the working precision depends on one "
            "step's conditioning (near consensus E' is cubic in E, so relative errors grow about threefold "
            "per layer), not on how far the trajectory has collapsed.  LayerNorm and a feed-forward network "
            "are not translation-equivariant, so the engine falls back to absolute coordinates there.")
    return D
