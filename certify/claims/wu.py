"""Wu et al. (2024)'s collapse theorems on concrete stacks: mask.collapse and ln.collapse.

Both are checked window by window (scope "window", names in certify.core.windows) on a stack whose
layers share one mask G; the radius r of G fixes the window length.  Their hypotheses are exact:
graphs by exact shortest-path search (certify.core.graphs), W_V^T W_V = I, ranks and inner products in
integers (FLINT).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from flint import fmpz_mat, nmod_mat

from certify.claims import Claim, Inequality, layers_only, register
from certify.core.config import COMPONENTS, Case
from certify.core import graphs
from certify.core.numbers import Binary64Matrix

WU = "Wu, Ajorlou, Wang, Jegelka, Jadbabaie, NeurIPS 2024"


def shared_graph(case: Case) -> tuple[graphs.GraphReport | None, str | None]:
    """The graph of the one mask every layer uses (no mask: the complete graph), or the reason there is none."""
    masks = {layer.mask for layer in case.layers}
    if len(masks) > 1:
        return None, "the layers use different masks; the theorem is about one graph G"
    (mask,) = masks
    rows = [[1] * case.n for _ in range(case.n)] if mask is None else [[int(v) for v in row] for row in mask]
    return graphs.analyse(rows), None


def _radius_windows(case: Case, report: graphs.GraphReport, k: int, first: int) -> str | None:
    if len(case.layers) < first + k:
        return (f"the stack has {len(case.layers)} layers, and a window of {k} layers (radius r = {report.radius})"
                + (f" after layer {first - 1}" if first else "") + " does not fit")
    return None


def masked_pure_attention(case: Case) -> str | None:
    """Theorem 1: X' = P X with one quasi-strongly connected mask, and at least r layers."""
    reason = layers_only(case, "masked pure attention X' = P X (Theorem 1)", allowed=("mask",))
    if reason:
        return reason
    report, reason = shared_graph(case)
    if reason:
        return reason
    if not report.quasi_strongly_connected:
        return "the mask's graph is not quasi-strongly connected (no token reaches every token)"
    return _radius_windows(case, report, report.radius, 0)


# A word-sized prime for ranks modulo p (nmod_mat): a rank modulo a prime never exceeds the rank.
_PRIME = (1 << 62) - 57


def _integer_rows(rows) -> list[list[int]]:
    """Each row times the least common multiple of its denominators: integer rows with the same rank
    and, as each is scaled by a positive number, inner products of the same signs."""
    rows = rows.array.tolist() if isinstance(rows, Binary64Matrix) else rows  # binary64: no Fractions made
    out = []
    for row in rows:
        pairs = [v.as_integer_ratio() for v in row]
        scale = math.lcm(*(q for _, q in pairs))
        out.append([p * (scale // q) for p, q in pairs])
    return out


def exact_rank(rows) -> int:
    """The rank over the rationals.  Modulo a prime p the rank can only drop (an r x r minor nonzero mod
    p is nonzero), so a full rank modulo p is the rank; below it, exact elimination in FLINT decides.
    (Gaussian elimination in Python fractions took minutes at 32 x 64, FLINT's exact one 25 s at 128 x 384
    binary64 tokens, the rank modulo p 0.04 s.)"""
    ints = _integer_rows(rows)
    full = min(len(ints), len(ints[0]))
    if nmod_mat(ints, _PRIME).rank() == full:
        return full
    return fmpz_mat(ints).rank()


def orthogonal(V) -> bool:
    """V^T V = I exactly: with c the common denominator of V's entries and Z = c V (integers),
    Z^T Z = c^2 I, a product in FLINT.  (In Python fractions, each entry read making its row,
    a 64 x 64 V took a minute and grew as d^4.)"""
    if isinstance(V, Binary64Matrix) and not _maybe_orthogonal(V.array):
        return False
    pairs = [[v.as_integer_ratio() for v in row] for row in (V.array.tolist() if isinstance(V, Binary64Matrix) else V)]
    c = math.lcm(*(q for row in pairs for _, q in row))
    Z = fmpz_mat([[p * (c // q) for p, q in row] for row in pairs])
    d = len(pairs)
    return Z.transpose() * Z == fmpz_mat(d, d, [c * c if i == j else 0 for i in range(d) for j in range(d)])


def _maybe_orthogonal(V: np.ndarray) -> bool:
    """False only when V^T V is certainly not I: computed in float64, each entry of V^T V for an
    orthogonal V (columns of norm 1) errs by at most d u ||v_i|| ||v_j|| = d u <= 2^-20 (Higham's
    gamma_d for d <= 2^32, any order of summation), far below 2^-10."""
    with np.errstate(all="ignore"):
        G = V.T @ V
    G[np.diag_indices_from(G)] -= 1.0
    return not np.isfinite(G).all() or float(np.abs(G).max()) <= 2.0 ** -10


def post_ln_orthogonal(case: Case) -> str | None:
    """Theorem 2 / Corollary 1: post-LN sphere layers X' = LN(P X W_V), W_V orthogonal, and a
    graph with one of the two sets of hypotheses on X_0."""
    for t, layer in enumerate(case.layers):
        ln = layer.layernorm
        if ln is None or ln.position != "post" or ln.kind != "sphere":
            return f"layer {t} is not post-LN with LN(x) = x / ||x||_2; the theorem is about X' = LN(P X V^T)"
        extra = [c for c in layer.components() if c not in ("mask", "V", "layernorm")]
        if extra:
            return f"layer {t} has {', '.join(COMPONENTS[c] for c in extra)}; the theorem is about X' = LN(P X V^T)"
        if layer.V is not None and not orthogonal(layer.V):
            return f"layer {t}: V^T V is not exactly the identity; the theorem needs an orthogonal W_V"
    report, reason = shared_graph(case)
    if reason:
        return reason
    if not report.quasi_strongly_connected:
        return "the mask's graph is not quasi-strongly connected (no token reaches every token)"
    rank = functools.cache(lambda: exact_rank(case.X))  # once, and only where a hypothesis or the reason reads it
    if not (report.strongly_connected and case.n <= case.d and rank() == case.n) and not nonnegative_cosines(case.X):
        return ("neither hypothesis holds: (strongly connected G, N <= d and full-rank X_0) or "
                "(all initial cosines >= 0): " + ("G is " + ("" if report.strongly_connected else "not ")
                                                  + "strongly connected, X_0 has rank "
                                                  + f"{rank()} with N = {case.n}, d = {case.d}, "
                                                  "and some cosine is negative or undefined (a zero token)"))
    return _radius_windows(case, report, 2 * report.radius, 1)


def nonnegative_cosines(X) -> bool:
    """Every cosine cos(x_i, x_k) is defined and >= 0: no token is zero (LN(0) and its cosines are
    undefined) and x_i . x_k >= 0 for every pair, exactly (the Gram matrix of integer rows, each
    token scaled by a positive number, in FLINT)."""
    Z = fmpz_mat(_integer_rows(X))
    G = Z * Z.transpose()
    n = len(X)
    return all(G[i, i] > 0 for i in range(n)) and all(G[i, k] >= 0 for i in range(n) for k in range(i + 1, n))


def theorem1_window(case: Case) -> tuple[int, int, int]:
    """(first layer, length, radius): windows of r layers from layer 0."""
    r = shared_graph(case)[0].radius
    return 0, r, r


def theorem2_window(case: Case) -> tuple[int, int, int]:
    """Windows of 2r layers from layer 1, where every token is on the unit sphere."""
    r = shared_graph(case)[0].radius
    return 1, 2 * r, r


register(Claim(
    id="mask.collapse",
    statement=("Theorem 1, per window of r layers (r the radius of G, eps a certified lower bound on the edge "
               "weights of the window): Wu et al.'s eps_theory = exp(-2 a B^2)/max_i |N(i)| <= the smallest edge "
               "weight w_min; the product P_{t+r-1}...P_t has a column >= eps^r; D_{t+r} <= (1 - eps^r) D_t; and the "
               "mu form mu(X_s) <= C (1 - eps^r)^{s/r} with C = sqrt(n/2) D_0 / (1 - eps^r), eps the stack's bound, "
               "at every window end s = t + r"),
    inequalities=(Inequality("eps_theory", "w_min", "lemma: edge weights"),
                  Inequality("eps**r", "col", "product column"),
                  Inequality("D_end", "(1 - eps**r)*D", "r-step contraction"),
                  Inequality("mu_end", "sqrt(n/2)*D_0*(1 - eps_all**r)**(t/r)", "Theorem 1, mu form")),
    source=f"{WU}, Theorem 1",
    hypotheses=("masked pure attention X' = P X, every layer with the same mask, its graph quasi-strongly "
                "connected, at least r layers"),
    applies=masked_pure_attention, scope="window",
    window=theorem1_window,
))

register(Claim(
    id="ln.collapse",
    statement=("Theorem 2 / Corollary 1 (post-LN x/||x||, orthogonal W_V; strongly connected G, N <= d and "
               "full-rank X_0, or quasi-strongly connected G and all initial cosines >= 0), per window of 2r "
               "layers from layer 1 (tokens on the sphere): eps_theory <= w_min; the window's product "
               "M = P L P ... L P (L the LayerNorm rescalings, >= 1) has a column >= eps^{2r}; and "
               "X_{t+2r} = LN(Q X_t) W (Q = M row-normalised, W orthogonal) gives "
               "D_{t+2r} m_t <= (1 - delta_t) D_t, delta_t = sum_c min_i Q_ic (>= N eps^{2r} once every entry "
               "is positive), m_t = min_i ||(Q X_t)_i||: the window contracts D by (1 - delta_t)/m_t, which tends "
               "to 1 - delta_t as the tokens gather. The theorem's constant C is not stated, so its rate is not "
               "checked on a finite stack"),
    inequalities=(Inequality("eps_theory", "w_min", "lemma: edge weights"),
                  Inequality("eps**k", "col", "product column"),
                  Inequality("D_end*m", "(1 - delta)*D", "window contraction")),
    source=f"{WU}, Theorem 2 and Corollary 1",
    hypotheses=("post-LN sphere layers X' = LN(P X V^T), V^T V = I exactly, one mask; strongly connected G "
                "with N <= d and rank X_0 = N, or quasi-strongly connected G with nonzero tokens and x_i . x_k >= 0; "
                "at least 1 + 2r layers"),
    applies=post_ln_orthogonal, scope="window",
    window=theorem2_window,
))
