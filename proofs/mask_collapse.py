"""mask.collapse (Wu et al., Theorem 1): masked pure attention collapses at rate (1 - eps^r)^{t/r}."""

from __future__ import annotations

from collections import deque

import sympy as sp

from proofs._framework import Derivation, require, require_expands_to_zero, require_zero


def _mask(kind: str, n: int) -> list[set[int]]:
    """N(i): the tokens i attends to (0-based), self-loop included."""
    if kind == "complete":
        return [set(range(n)) for _ in range(n)]
    if kind == "causal":
        return [set(range(i + 1)) for i in range(n)]
    if kind == "sliding":  # previous, self, next
        return [{j for j in (i - 1, i, i + 1) if 0 <= j < n} for i in range(n)]
    if kind == "uni":  # previous, self
        return [{j for j in (i - 1, i) if 0 <= j < n} for i in range(n)]
    raise ValueError(kind)


def _radius(attends: list[set[int]]) -> int | None:
    """Longest distance from a centre to any node, minimised over centres (edge j -> i if i attends j)."""
    n = len(attends)
    out = [[i for i in range(n) if j in attends[i]] for j in range(n)]
    best = None
    for c in range(n):
        dist = {c: 0}
        queue = deque([c])
        while queue:
            u = queue.popleft()
            for v in out[u]:
                if v not in dist:
                    dist[v] = dist[u] + 1
                    queue.append(v)
        if len(dist) == n:
            best = max(dist.values()) if best is None else min(best, max(dist.values()))
    return best


def _symbolic_attention(attends, layer: int) -> sp.Matrix:
    """A masked attention matrix with a positive symbol per edge."""
    n = len(attends)
    return sp.Matrix(n, n, lambda i, j: sp.Symbol(f"p{layer}_{i}{j}", positive=True) if j in attends[i] else 0)


def _stated_biased_weight(a, B, u, m):
    """docs/claims.md: with a query bias, eps >= exp(-2 (||A|| B^2 + |u| B)) / max_i |N(i)|."""
    return sp.exp(-2 * (a * B**2 + u * B)) / m


def build(stated_radii=(("complete", 1), ("causal", 1), ("sliding", 64), ("uni", 127)),
          biased_weight=_stated_biased_weight, pair_weight=lambda n: sp.Rational(1, 2 * n)) -> Derivation:
    D = Derivation(
        claim="mask.collapse",
        statement="G quasi-strongly connected with radius r, attention weights >= eps on every edge (eps = "
                  "exp(-2 a B^2) / max_i |N(i)|, exp(-2 (a B^2 + |u| B)) / max_i |N(i)| with a query bias) => "
                  "a product of r masked attention matrices has a column >= eps^r, so "
                  "D_{t+r} <= (1 - eps^r) D_t and mu(X_t) <= C (1 - eps^r)^{t/r}; one step alone may have tau = 1.",
        source="Wu, Ajorlou, Wang, Jegelka, Jadbabaie, NeurIPS 2024, Theorem 1",
    )

    @D.symbolic("Radii at N = 128: complete 1, causal 1, sliding window 64, uni-directional window 127",
                "Exact breadth-first search from every candidate centre.")
    def _():
        for kind, radius in stated_radii:
            require(_radius(_mask(kind, 128)) == radius, f"{kind}: radius {_radius(_mask(kind, 128))}")

    @D.symbolic("A product of r attention matrices dominates a path product in the centre's column",
                "Uni-directional window, N = 4 (radius 3, centre 0): every entry (i, 0) of P3 P2 P1 is a "
                "polynomial with positive coefficients in the edge weights containing the monomial of a "
                "length-3 path from 0 to i (padded with self-loops), so it is >= eps^3.")
    def _():
        attends = _mask("uni", 4)
        r = _radius(attends)
        layers = [_symbolic_attention(attends, t) for t in range(r)]
        Q = layers[2] * layers[1] * layers[0]
        for i in range(4):
            poly = sp.Poly(sp.expand(Q[i, 0]), *sorted(Q[i, 0].free_symbols, key=str))
            require(all(c > 0 for c in poly.coeffs()), f"row {i}: a negative coefficient")
            # the path 0 -> ... -> i: stay at 0 for r - i steps, then walk one step per layer
            nodes = [0] * (r - i + 1) + list(range(1, i + 1))
            path = sp.Mul(*(layers[t][nodes[t + 1], nodes[t]] for t in range(r)))
            require(poly.coeff_monomial(path) != 0, f"row {i}: path monomial missing")

    D.prose("Contraction over r steps",
            "With Q = P_{t+r-1}...P_t and every (Q)_{ic} >= eps^r: sum_j min(Q_ij, Q_kj) >= eps^r, so "
            "tau(Q) <= 1 - eps^r and D_{t+r} = D(Q X_t) <= (1 - eps^r) D_t (collapse.dobrushin).")

    @D.symbolic("Weights on edges: P_ij >= exp(-2 a B^2) / |N(i)|",
                "|S_ij| <= a B^2 bounds the numerator below by exp(-a B^2) and each of the |N(i)| terms "
                "of the normaliser above by exp(a B^2); the quotient is the stated eps.")
    def _():
        a, B, m = sp.symbols("a B m", positive=True)
        require_zero(sp.exp(-a * B**2) / (m * sp.exp(a * B**2)) - sp.exp(-2 * a * B**2) / m, "quotient")

    @D.symbolic("With a query bias: P_ij >= exp(-2 (a B^2 + |u| B)) / |N(i)|",
                "The biased score is x_i^T A x_j + c_i + u^T x_j (collapse.tau); the row term c_i cancels in the "
                "softmax and |x_i^T A x_j + u^T x_j| <= a B^2 + |u| B (Cauchy-Schwarz), so the same quotient "
                "with that bound gives the eps of the windows; u = 0 is the unbiased form.")
    def _():
        a, B, u, m = sp.symbols("a B u m", positive=True)
        spread = a * B**2 + u * B
        require_zero(sp.exp(-spread) / (m * sp.exp(spread)) - biased_weight(a, B, u, m), "quotient")
        require_zero(biased_weight(a, B, 0, m) - sp.exp(-2 * a * B**2) / m, "u = 0")

    D.prose("B never increases",
            "Rows of PX are convex combinations of rows of X, so max_i ||(PX)_i|| <= max_i ||x_i|| = B: "
            "the same eps serves every layer.")

    @D.symbolic("One step alone may have tau = 1",
                "Uni-directional window, N = 3: token 0 attends only to itself and token 2 only to 1 and 2, "
                "so rows 0 and 2 have disjoint supports and sum_j min(P_0j, P_2j) = 0.")
    def _():
        P = _symbolic_attention(_mask("uni", 3), 0)
        overlap = sum(sp.Min(P[0, j], P[2, j]) for j in range(3))
        require(sp.simplify(overlap) == 0, f"overlap {overlap}")

    @D.symbolic("From D to mu: mu^2 = (1/(2n)) sum_{i,k} ||x_i - x_k||^2 <= n D^2 / 2",
                "Checked for n = 2, 3, 4 and d = 2; hence mu_t <= sqrt(n/2) D_t <= sqrt(n/2) (1 - eps^r)^{floor(t/r)} "
                "D_0 <= C (1 - eps^r)^{t/r} with C = sqrt(n/2) D_0 / (1 - eps^r).")
    def _():
        for n in (2, 3, 4):
            X = sp.Matrix(n, 2, lambda i, j: sp.Symbol(f"x{i}{j}", real=True))
            xbar = sp.ones(1, n) * X / n
            mu2 = sum(((X.row(i) - xbar) * (X.row(i) - xbar).T)[0] for i in range(n))
            pairs = sum(((X.row(i) - X.row(k)) * (X.row(i) - X.row(k)).T)[0] for i in range(n) for k in range(n))
            require_expands_to_zero(mu2 - pair_weight(n) * pairs, f"mu^2 identity, n = {n}")
    return D
