"""ln.collapse (Wu et al., Theorem 2 and Corollary 1): collapse with LayerNorm for orthogonal W_V."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_expands_to_zero, require_zero


def _ln(row: sp.Matrix) -> sp.Matrix:
    """LN(x) = x / ||x||_2 as analysed by Wu et al. (no centring, no gain)."""
    return row / sp.sqrt((row * row.T)[0])


def build() -> Derivation:
    D = Derivation(
        claim="ln.collapse",
        statement="Strongly connected G, orthogonal W_V, N <= d and full-rank X_0 => "
                  "mu <= C (1 - N eps^{2r})^{t/(2r)}; quasi-strongly connected G with all initial cosines "
                  ">= 0 => mu <= C (1 - eps^{2r})^{t/(2r)}.",
        source="Wu et al., NeurIPS 2024, Theorem 2 and Corollary 1",
        note="Only the reductions are checked here; the contraction rates themselves are argued in "
             "prose after the paper, not re-derived.",
    )
    theta = sp.Symbol("theta", real=True)
    Q = sp.Matrix([[sp.cos(theta), -sp.sin(theta)], [sp.sin(theta), sp.cos(theta)]])
    y = sp.Matrix([sp.symbols("y1 y2", real=True)]).reshape(1, 2)

    @D.symbolic("LN commutes with an orthogonal value matrix", "LN(y Q) = LN(y) Q for a rotation Q (d = 2).")
    def _():
        require_zero(_ln(y * Q) - _ln(y) * Q, "LN(yQ) = LN(y)Q")
        require_expands_to_zero(sp.simplify(Q * Q.T) - sp.eye(2), "Q orthogonal")

    @D.symbolic("So W_V can be moved into the query-key matrix",
                "Post-LN with orthogonal W_V: X_t = Z_t W_V^t where Z follows the V = I dynamics with "
                "A_t = W_V^t A (W_V^t)^T, which has the same spectral norm; mu(Z W_V^t) = mu(Z).  Checked "
                "for n = d = 2: (X Q) A (X Q)^T = X (Q A Q^T) X^T and ||X Q||_F = ||X||_F.")
    def _():
        X = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"x{i}{j}", real=True))
        A = sp.Matrix(2, 2, lambda i, j: sp.Symbol(f"a{i}{j}", real=True))
        require_expands_to_zero((X * Q) * A * (X * Q).T - X * (Q * A * Q.T) * X.T, "scores")
        require_zero(((X * Q) * (X * Q).T).trace() - (X * X.T).trace(), "Frobenius norm")

    @D.symbolic("Nonnegative cosines are preserved by attention",
                "<sum_j p_j x_j, sum_l q_l x_l> = sum_{j,l} p_j q_l <x_j, x_l> is a polynomial with "
                "nonnegative coefficients in the weights and the Gram entries (n = 3); LN keeps the sign.")
    def _():
        n = 3
        p = sp.symbols(f"p1:{n + 1}", nonnegative=True)
        q = sp.symbols(f"q1:{n + 1}", nonnegative=True)
        G = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"g{min(i, j)}{max(i, j)}", nonnegative=True))
        inner = sp.expand((sp.Matrix([p]) * G * sp.Matrix([q]).T)[0])
        poly = sp.Poly(inner, *inner.free_symbols)
        require(all(c > 0 for c in poly.coeffs()), "a negative coefficient")

    @D.symbolic("The paper's LN and a real LayerNorm differ by a scale on centred tokens",
                "g (x - mean) / sqrt(var) with g = 1, b = 0, eps = 0 equals sqrt(d) x / ||x|| when mean(x) = 0 "
                "(d = 3); in general real LN also centres, so the two are kept apart.")
    def _():
        x1, x2 = sp.symbols("x1 x2", real=True)
        x = sp.Matrix([[x1, x2, -x1 - x2]])  # mean 0
        var = (x * x.T)[0] / 3
        require_zero(x / sp.sqrt(var) - sp.sqrt(3) * _ln(x), "real LN on a centred token")

    D.prose("Contraction rates (after the paper)",
            "With tokens on the sphere and all cosines >= 0 (preserved, above), a product of 2r layers has "
            "a column >= eps^{2r} as in mask.collapse, giving (1 - eps^{2r})^{t/(2r)} for quasi-strongly "
            "connected G; strong connectivity, N <= d and full rank (so the tokens enter a common "
            "hemisphere) give the factor (1 - N eps^{2r}).  These rates are taken from Wu et al. "
            "and not re-derived here.")
    return D
