"""ln.equilibria (Wu et al., Theorem 3, Appendix F): post-LN equilibria of every rank."""

from __future__ import annotations

import itertools
from collections import Counter

import sympy as sp

from proofs._framework import Derivation, require, require_zero

SIZES = (2, 3, 4)  # N = d


def _weights(N):
    """w = N, the smallest value the theorem allows, and two larger ones (a bound checked at w = N alone may be
    another formula equal to it there)."""
    return sp.Integer(N), sp.Integer(N + 1), sp.Rational(5 * N, 2)


def _value_matrix(N, w):
    """Ones on the diagonal, w on the superdiagonal; tokens are rows: x -> x W_V."""
    return sp.eye(N) + w * sp.Matrix(N, N, lambda i, j: 1 if j == i + 1 else 0)


def _family(N, k, w, signs):
    """A rank-k equilibrium: N - k + 1 copies of s e_N, then k - 1 Jordan-chain steps.

    A chain step solves (u + x) W_V = x (c = 1) for the new token x given the sum u of the previous
    ones: w (x J) = -u W_V fixes x_1..x_{N-1}, and ||x|| = 1 leaves two signs for x_N.
    """
    e_N = sp.Matrix([[0] * (N - 1) + [1]])
    tokens = [signs[0] * e_N] * (N - k + 1)
    W = _value_matrix(N, w)
    for sign in signs[1:]:
        b = sum(tokens, sp.zeros(1, N)) * W
        head = [-b[j + 1] / w for j in range(N - 1)]
        tokens.append(sp.Matrix([head + [sign * sp.sqrt(1 - sum(v**2 for v in head))]]))
    return tokens


def _is_equilibrium(tokens, N, w) -> bool:
    """Token i is fixed by x_i -> LN(sum_{j<=i} x_j W_V) (the 1/i of causal attention cancels in LN)."""
    W, u = _value_matrix(N, w), sp.zeros(1, N)
    for x in tokens:
        u = u + x
        image = u * W
        c = sp.simplify((image * x.T)[0])
        if not (c.is_positive and all(sp.simplify(e) == 0 for e in image - c * x)
                and sp.simplify((x * x.T)[0] - 1) == 0):
            return False
    return True


def build(stable_rank_bound=lambda N, w: N / (N - sp.Rational(N - 1) / w**2)) -> Derivation:
    D = Derivation(
        claim="ln.equilibria",
        statement="Causal mask, W_Q = W_K = 0, W_V with ones on the diagonal and w on the superdiagonal, "
                  "post-LN: equilibria of every rank k = 1..N (w >= N), 2^k of rank k, built from Jordan "
                  "chains; stable rank <= N / (N - (N-1)/w^2): full rank yet anisotropic.",
        source="Wu et al., NeurIPS 2024, Theorem 3 and Appendix F",
        note="Re-derived for N = 2, 3, 4 with w = N, N + 1 and 5N/2.  The stable-rank bound holds with equality of "
             "sum_i x_iN^2 = N - (N-1)/w^2 for the full-rank equilibria; it is NOT a bound for the "
             "lower-rank ones built the same way (N = 3, k = 2: stable rank 9/8 > 27/25), so it is "
             "asserted for full rank only.  Only for N = 2 are all equilibria enumerated (2 of rank 1, "
             "4 of rank 2); for N >= 3 other branches (c != 1, a quartic per token) are not excluded.",
    )

    @D.symbolic("Token 1's equilibria are exactly +-e_N",
                "x W_V = c x with ||x|| = 1 and c > 0 (N = 3, symbolic w > 0): only the left eigenvector "
                "e_N of the Jordan block, with c = 1.")
    def _():
        N, w = 3, sp.Symbol("w", positive=True)
        x = sp.symbols(f"x1:{N + 1}", real=True)
        c = sp.Symbol("c", positive=True)
        eqs = list(sp.Matrix([x]) * _value_matrix(N, w) - c * sp.Matrix([x])) + [sum(v**2 for v in x) - 1]
        sols = sp.solve(eqs, [*x, c], dict=True)
        found = {tuple(s[v] for v in x) for s in sols}
        require(found == {(0, 0, 1), (0, 0, -1)}, f"solutions {found}")

    @D.symbolic("The Jordan-chain family: 2^k equilibria of rank k for every k = 1..N",
                f"N in {SIZES}, w in (N, N + 1, 5N/2): every member is an equilibrium of the post-LN layer, has "
                "rank k, and the 2^k sign choices give distinct configurations.")
    def _():
        for N, w in ((N, w) for N in SIZES for w in _weights(N)):
            for k in range(1, N + 1):
                members = [_family(N, k, w, s) for s in itertools.product((1, -1), repeat=k)]
                require(all(_is_equilibrium(m, N, w) for m in members), f"N = {N}, w = {w}, k = {k}: not fixed")
                ranks = {sp.Matrix.vstack(*m).rank(simplify=True) for m in members}
                require(ranks == {k}, f"N = {N}, w = {w}, k = {k}: ranks {ranks}")
                require(len({tuple(sp.Matrix.vstack(*m)) for m in members}) == 2**k, f"N = {N}, w = {w}, k = {k}")

    @D.symbolic("N = 2: these are all the equilibria",
                "Solving token by token (w = 2): 2 of rank 1 and 4 of rank 2, as in ln.counterexample.")
    def _():
        N, w = 2, sp.Integer(2)
        y = sp.symbols("y1 y2", real=True)
        c = sp.Symbol("c", positive=True)
        configurations = [[]]
        for _ in range(N):
            extended = []
            for prefix in configurations:
                u = sum(prefix, sp.zeros(1, N))
                eqs = list((u + sp.Matrix([y])) * _value_matrix(N, w) - c * sp.Matrix([y])) + [y[0]**2 + y[1]**2 - 1]
                for s in sp.solve(eqs, [*y, c], dict=True):
                    extended.append(prefix + [sp.Matrix([[s[y[0]], s[y[1]]]])])
            configurations = extended
        ranks = Counter(sp.Matrix.vstack(*m).rank(simplify=True) for m in configurations)
        require(ranks == Counter({1: 2, 2: 4}), f"ranks {dict(ranks)}")

    @D.symbolic("Stable rank of the full-rank equilibria",
                "sum_i x_iN^2 = N - (N-1)/w^2 exactly, so ||X||_2^2 >= N - (N-1)/w^2 (Rayleigh quotient at "
                "e_N) and stable rank = N / ||X||_2^2 <= N / (N - (N-1)/w^2): full rank yet close to 1.")
    def _():
        for N, w in ((N, w) for N in SIZES for w in _weights(N)):
            for signs in itertools.product((1, -1), repeat=N):
                X = sp.Matrix.vstack(*_family(N, N, w, signs))
                mass = sum(X[i, N - 1]**2 for i in range(N))
                require_zero(N / mass - stable_rank_bound(N, w), f"N = {N}, w = {w}, signs {signs}")

    @D.symbolic("The bound does not extend to lower rank",
                "N = 3, k = 2, w = 3: ||X||_2^2 = 8/3 (largest eigenvalue of X X^T), stable rank 9/8 > 27/25.")
    def _():
        X = sp.Matrix.vstack(*_family(3, 2, sp.Integer(3), (1, 1)))
        lam = sp.Symbol("lam")
        top = max(sp.roots(sp.Poly((X * X.T).charpoly(lam).as_expr(), lam)).keys())
        require_zero(top - sp.Rational(8, 3), "largest eigenvalue")
        require(bool(3 / top > stable_rank_bound(3, sp.Integer(3))), "stable rank above the bound")

    D.prose("Why rank-1 collapse fails here",
            "Each chain step uses the Jordan structure of W_V: (u + x) W_V = x reads w x J = -u W_V, so "
            "every new token adds one generalised eigenvector direction; the square "
            "root needs sum of the forced coordinates^2 <= 1, which w >= N guarantees in the cases checked.")
    return D
