"""value.bounded: X_{t+1} = P_t X_t V^T with ||V^k||_2 <= M for k <= T."""

from __future__ import annotations

import sympy as sp

from proofs._framework import Derivation, require, require_zero


def build() -> Derivation:
    D = Derivation(
        claim="value.bounded",
        statement="If ||V^k||_2 <= M for k <= T then D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0 for t <= T; if it "
                  "holds for every k, the rows of Q_t X_0 (Q_t = P_{t-1}...P_0) converge to a point c with "
                  "max_i ||x_i^(t) - V^t c|| <= M prod_{s<t} tau(P_s) D_0; the common representation "
                  "converges for every X_0 exactly when the powers V^t converge.",
        source="the thesis on iterated self-attention",
        note="The convergence needs ||V^k||_2 <= M for every k, not only k <= T: the uniform factor, which makes "
             "prod_s tau(P_s) tend to 0, holds for the layers whose inputs are bounded through the powers of V.",
    )

    @D.symbolic("Unrolling: X_t = Q_t X_0 (V^T)^t",
                "Checked for t = 2 with symbolic 2x2 P_0, P_1, X_0 and V: P_1 (P_0 X_0 V^T) V^T = "
                "(P_1 P_0) X_0 (V^T)^2; row i of Y W^T is W y_i, so x_i^(t) = V^t (Q_t X_0)_i.")
    def _():
        sym = lambda name: sp.Matrix(2, 2, lambda r, c: sp.Symbol(f"{name}{r}{c}", real=True))  # noqa: E731
        P0, P1, X0, V = sym("p"), sym("q"), sym("x"), sym("v")
        X2 = P1 * (P0 * X0 * V.T) * V.T
        require_zero(X2 - (P1 * P0) * X0 * (V.T)**2, "unrolled product")
        Y = P1 * P0 * X0
        require_zero(X2.row(0).T - V**2 * Y.row(0).T, "row i is V^t applied to row i of Q_t X_0")

    D.prose("Diameter of the unrolled configuration",
            "D_t = max ||V^t ((Q_t X_0)_i - (Q_t X_0)_k)|| <= ||V^t||_2 D(Q_t X_0) "
            "<= M prod_{s<t} tau(P_s) D_0, applying collapse.dobrushin once per factor of Q_t.")

    @D.symbolic("Uniform factor along the trajectory",
                "D_s <= M D_0 for s <= T (previous step with tau <= 1), and 1 - exp(-a D^2) increases "
                "with D, so tau(P_s) <= 1 - exp(-a D_s^2) <= 1 - exp(-a M^2 D_0^2) and "
                "D_t <= M (1 - exp(-a M^2 D_0^2))^t D_0.")
    def _():
        a, Dv = sp.symbols("a D", positive=True)
        require(bool(sp.diff(1 - sp.exp(-a * Dv**2), Dv).is_positive), "monotone factor")

    @D.symbolic("Consensus is invariant and moves by V",
                "X = 1 c^T gives P X V^T = 1 (V c)^T for every row-stochastic P (n = 3, d = 2).")
    def _():
        p = sp.symbols("p0:6", nonnegative=True)
        P = sp.Matrix([[p[0], p[1], 1 - p[0] - p[1]], [p[2], p[3], 1 - p[2] - p[3]],
                       [p[4], p[5], 1 - p[4] - p[5]]])
        c = sp.Matrix(sp.symbols("c0:2", real=True))
        V = sp.Matrix(2, 2, lambda r, k: sp.Symbol(f"v{r}{k}", real=True))
        require_zero(P * sp.ones(3, 1) * c.T * V.T - sp.ones(3, 1) * (V * c).T, "consensus update")

    D.prose("Rows of Q_t X_0 converge to one point c",
            "Rows of P Y are convex combinations of rows of Y, so the convex hulls H_t of the rows of "
            "Q_t X_0 are nested compact sets with diameters <= prod_{s<t} tau(P_s) D_0 -> 0 "
            "(geometrically, by the uniform factor, when ||V^k||_2 <= M for every k).  Their intersection is one point c, and every "
            "row of Q_t X_0 lies within D(Q_t X_0) of c; applying V^t gives "
            "max_i ||x_i^(t) - V^t c|| <= M prod_{s<t} tau(P_s) D_0.")

    @D.symbolic("Bounded powers need not converge: V = rotation by pi/2",
                "V^4 = I and V^2 = -I, so ||V^k|| = 1 = M: tokens collapse together (D_t -> 0) while "
                "their common point V^t c keeps rotating; V = diag(1, 1/2) has convergent powers.")
    def _():
        V = sp.Matrix([[0, -1], [1, 0]])
        require(V**4 == sp.eye(2) and V**2 == -sp.eye(2), "rotation powers")
        require(V.T * V == sp.eye(2), "orthogonal, so ||V^k||_2 = 1")
        W = sp.diag(1, sp.Rational(1, 2))
        k = sp.Symbol("k", integer=True, positive=True)
        require(sp.limit((W**k)[1, 1], k, sp.oo) == 0, "diag(1, 1/2)^k converges")

    D.prose("Exactly when V^t converges",
            "x_i^(t) - V^t c -> 0, so x_i^(t) converges iff V^t c does; every c occurs (X_0 = 1 c^T), "
            "so convergence for every X_0 is convergence of V^t c for every c, i.e. of V^t.")
    return D
