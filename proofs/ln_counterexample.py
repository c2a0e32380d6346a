"""ln.counterexample (Wu et al., Figure 1): LayerNorm can stop rank collapse (N = 2, d = 2)."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero

w = sp.Symbol("w", positive=True)  # w > 1 throughout
theta = sp.Symbol("theta", real=True)
W_V = sp.Matrix([[1, w], [0, 1]])


def _stated_equilibria():
    """docs/claims.md: A = (-1/w, sqrt(1 - 1/w^2)) repelling, B = (-1/w, -sqrt(1 - 1/w^2)) attracting."""
    return (sp.Matrix([[-1 / w, sp.sqrt(1 - 1 / w**2)]]), sp.Matrix([[-1 / w, -sp.sqrt(1 - 1 / w**2)]]))


def _unnormalised_token2(y):
    """Token 2 before LN when token 1 sits at (0, 1): (x1 + x2) W_V (the 1/2 cancels in LN)."""
    return (sp.Matrix([[0, 1]]) + y) * W_V


def build(equilibria=_stated_equilibria) -> Derivation:
    D = Derivation(
        claim="ln.counterexample",
        statement="N = 2, d = 2, causal mask, W_Q = W_K = 0, W_V = [[1, w], [0, 1]] (w > 1), post-LN "
                  "x -> x/||x||: token 1 tends to (0, +-1) by the sign of its first coordinate; with token 1 "
                  "at (0, 1), token 2 has the equilibria A (repelling) and B (attracting from an arc); "
                  "[(0, 1), B] is a rank-2 equilibrium.",
        source="Wu et al., NeurIPS 2024, Figure 1",
        note="Also re-derived: the consensus (0, 1) is a third equilibrium of token 2 and attracts too "
             "(derivative 1/2); A separates the basins.  Token 1 reaches (0, 1) only algebraically "
             "(its angle map has derivative 1 there).",
    )
    A_eq, B_eq = equilibria()

    @D.symbolic("Attention with W_Q = W_K = 0 under the causal mask is [[1, 0], [1/2, 1/2]]",
                "Zero scores give uniform weights over N(1) = {1}, N(2) = {1, 2}.")
    def _():
        attends = [[0], [0, 1]]
        P = sp.Matrix(2, 2, lambda i, j: sp.exp(0) / len(attends[i]) if j in attends[i] else 0)
        require(P == sp.Matrix([[1, 0], [sp.Rational(1, 2), sp.Rational(1, 2)]]), f"P = {P}")

    @D.symbolic("Token 1: the slope s = x_2 / x_1 moves by w each layer",
                "(p, q) W_V = (p, w p + q): s -> s + w, so s_t = s_0 + t w -> +-oo and the token tends to "
                "(0, sign p) (the first coordinate keeps its sign through LN).  p = 0 is fixed.")
    def _():
        p, q = sp.symbols("p q", real=True)
        image = sp.Matrix([[p, q]]) * W_V
        require_zero(image[1] / image[0] - (q / p + w), "slope recursion")
        require_zero(image[0] - p, "first coordinate unchanged before LN")

    @D.symbolic("Token 2's equilibria with token 1 at (0, 1)",
                "(y + e2) W_V = c y with c > 0 and ||y|| = 1: y_1 != 0 forces c = 1 and y_1 = -1/w, so "
                "y = A or B; y_1 = 0 gives y = (0, 1) (c = 2), and y = (0, -1) makes the sum vanish.")
    def _():
        for y in (A_eq, B_eq):
            require_zero((y * y.T)[0] - 1, "unit norm")
            require_zero(_unnormalised_token2(y) - y, "fixed with c = 1")
        y1, y2, c = sp.symbols("y1 y2 c", real=True)
        eqs = list(_unnormalised_token2(sp.Matrix([[y1, y2]])) - c * sp.Matrix([[y1, y2]])) + [y1**2 + y2**2 - 1]
        sols = [s for s in sp.solve(eqs, [y1, y2, c], dict=True)]
        found = {(sp.simplify(s[y1]), sp.simplify(s[y2])) for s in sols if (s[c].subs(w, 3) > 0) is sp.true}
        expected = {(sp.simplify(A_eq[0]), sp.simplify(A_eq[1])), (sp.simplify(B_eq[0]), sp.simplify(B_eq[1])),
                    (0, 1)}
        require(found == expected, f"solutions {found}")

    X, Y = sp.cos(theta), w * sp.cos(theta) + 1 + sp.sin(theta)  # image of y = (cos, sin)

    @D.symbolic("Angle map F: F' = (1 + sin theta) / (X^2 + Y^2) >= 0",
                "F(theta) = atan2(Y, X) with (X, Y) = (y + e2) W_V: X Y' - Y X' = 1 + sin theta, so F is "
                "non-decreasing wherever it is defined (theta != -pi/2).")
    def _():
        require_zero(X * sp.diff(Y, theta) - Y * sp.diff(X, theta) - (1 + sp.sin(theta)), "X Y' - Y X'")

    @D.symbolic("Stability: F'(A) = 1 + sqrt(1 - 1/w^2) > 1, F'(B) = 1 - sqrt(1 - 1/w^2) in (0, 1), "
                "F'((0, 1)) = 1/2",
                "At A and B the image has norm 1 (c = 1), at (0, 1) norm 2.")
    def _():
        def slope(y):
            values = {sp.cos(theta): y[0], sp.sin(theta): y[1]}
            return sp.simplify((1 + sp.sin(theta)).subs(values) / (X**2 + Y**2).subs(values))
        require_zero(slope(A_eq) - (1 + sp.sqrt(1 - 1 / w**2)), "F'(A)")
        require_zero(slope(B_eq) - (1 - sp.sqrt(1 - 1 / w**2)), "F'(B)")
        require_zero(slope(sp.Matrix([[0, 1]])) - sp.Rational(1, 2), "F'(consensus)")
        radicand = sp.factor((1 - 1 / w**2).subs(w, sp.Symbol("u", positive=True) + 1))
        require(bool(radicand.is_positive), "1 - 1/w^2 > 0 for w = 1 + u > 1")

    @D.symbolic("Direction of motion: y x F(y) = cos theta (w cos theta + 1)",
                "The cross product of y and its image.  On the arc from A through B to (0, -1) "
                "(cos theta < 0) it is > 0 between A and B (cos theta < -1/w) and < 0 between B and "
                "(0, -1): with F non-decreasing and A, B fixed, every start on that open arc converges to B.")
    def _():
        require_zero(sp.cos(theta) * Y - sp.sin(theta) * X - sp.cos(theta) * (w * sp.cos(theta) + 1), "cross")

    @D.symbolic("[(0, 1), B] is a rank-2 equilibrium of the whole layer",
                "Token 1 at (0, 1) is fixed ((0, 1) W_V = (0, 1)), token 2 at B is fixed, det = 1/w != 0.")
    def _():
        require((sp.Matrix([[0, 1]]) * W_V) == sp.Matrix([[0, 1]]), "token 1 fixed")
        det = sp.Matrix.vstack(sp.Matrix([[0, 1]]), B_eq).det()
        require_zero(det - 1 / w, "determinant")
    return D
