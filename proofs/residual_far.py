"""residual.far: far from consensus no uniform lower bound on D'/D holds for residual attention."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero

lam = sp.Symbol("lambda", positive=True)


def _stated_ratio(lam_):
    """docs/claims.md: with V = -I, A = lambda I, X = (e1, -e1): D'/D = 2 / (exp(2 lambda) + 1)."""
    return 2 / (sp.exp(2 * lam_) + 1)


def build(ratio=_stated_ratio) -> Derivation:
    D = Derivation(
        claim="residual.far",
        statement="For every q > 0 some parameters and X give D' <= q D for X' = X + P X V^T "
                  "(V = -I, A = lambda I, X = (e1, -e1): D'/D = 2 / (exp(2 lambda) + 1)).",
        source="the thesis on iterated self-attention",
    )

    @D.symbolic("Closed form of D'/D for V = -I, A = lambda I, X = (e1, -e1)",
                "Computed from the softmax of S = lambda X X^T and X' = X - P X (in R^2).")
    def _():
        X = sp.Matrix([[1, 0], [-1, 0]])
        S = lam * X * X.T
        P = sp.Matrix(2, 2, lambda i, j: sp.exp(S[i, j]) / (sp.exp(S[i, 0]) + sp.exp(S[i, 1])))
        Y = X + P * X * (-sp.eye(2))
        require_zero(Y[:, 1], "second coordinates stay 0")
        require_zero((Y[0, 0] - Y[1, 0]) / 2 - ratio(lam), "D' / D")

    @D.symbolic("It equals 1 - tanh(lambda): the two-sided lower bound is attained",
                "tau(P) = tanh(lambda) here and ||V||_2 = 1, so D'/D = 1 - ||V|| tau exactly (n = 2).",
                formal="residual.v:residual_far_ratio")
    def _():
        require_zero(ratio(lam) - (1 - sp.tanh(lam)), "1 - tanh")

    @D.symbolic("Every q in (0, 1) is reached: lambda = ln(2/q - 1) / 2",
                "The ratio is decreasing in lambda (derivative < 0) and tends to 0; q >= 1 is met at any lambda.",
                formal="residual.v:residual_far_reach")
    def _():
        q = sp.Symbol("q", positive=True)
        solution = sp.log(2 / q - 1) / 2
        require_zero(ratio(solution) - q, "ratio at the chosen lambda")
        derivative = sp.diff(ratio(lam), lam)
        require_zero(derivative + 4 * sp.exp(2 * lam) / (sp.exp(2 * lam) + 1)**2, "derivative")
        require(bool(derivative.is_negative) or bool((-derivative).is_positive), "decreasing")
        require(sp.limit(ratio(lam), lam, sp.oo) == 0, "limit 0")

    D.prose("No uniform lower bound",
            "D'/D can be made as small as wished with D = 2 fixed: the near-consensus statement of "
            "residual.two_sided (D'/D >= 1 - v a D^2) cannot be made uniform over parameters far "
            "from consensus, where a D^2 = 4 lambda is large.")
    return D
