"""Wu et al. (2024)'s collapse theorems on concrete stacks: mask.collapse and ln.collapse.

Both are checked window by window (scope "window", names in certify.core.windows) on a stack whose
layers share one mask G; the radius r of G fixes the window length.  Their hypotheses are exact:
graphs by exact shortest-path search (certify.core.graphs), W_V^T W_V = I in integers (FLINT), a full rank
modulo primes, the inner products' signs in balls and exactly where a ball holds 0.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from flint import arb, arb_mat, fmpq, fmpz, fmpz_mat, nmod_mat

from certify.claims import Claim, Inequality, layers_only, register
from certify.core.config import COMPONENTS, Case
from certify.core import graphs
from certify.core.numbers import Binary64Matrix
from certify.core.precision import working
from certify.errors import counted

WU = "Wu, Ajorlou, Wang, Jegelka, Jadbabaie, NeurIPS 2024"


def shared_graph(case: Case) -> tuple[graphs.GraphReport | None, str | None]:
    """The graph of the one mask every layer uses (no mask: the complete graph), or the reason there is none."""
    masks = {layer.mask for layer in case.layers}
    if len(masks) > 1:
        return None, "the layers use different masks; the theorem is about one graph G"
    (mask,) = masks
    rows = [[1] * case.n for _ in range(case.n)] if mask is None else [[int(v) for v in row] for row in mask]
    return graphs.analyse(rows), None


def _connected_graph(case: Case) -> tuple[graphs.GraphReport | None, str | None]:
    """shared_graph, or the reason both theorems do not apply: no one mask, or a graph with no centre (not
    quasi-strongly connected)."""
    report, reason = shared_graph(case)
    if reason is None and not report.quasi_strongly_connected:
        reason = "the mask's graph is not quasi-strongly connected (no token reaches every token)"
    return report, reason


def _radius_windows(case: Case, report: graphs.GraphReport, k: int, first: int) -> str | None:
    if len(case.layers) < first + k:
        return (f"the stack has {counted(len(case.layers), 'layer')}, and a window of {counted(k, 'layer')} "
                f"(radius r = {report.radius})"
                + (f" after layer {first - 1}" if first else "") + " does not fit")
    return None


def masked_pure_attention(case: Case) -> str | None:
    """Theorem 1: X' = P X with one quasi-strongly connected mask, and at least r layers."""
    reason = layers_only(case, "masked pure attention X' = P X (Theorem 1)", allowed=("mask",))
    if reason:
        return reason
    report, reason = _connected_graph(case)
    if reason:
        return reason
    return _radius_windows(case, report, report.radius, 0)


# Word-sized primes for ranks modulo p (nmod_mat), tried in turn; a prime dividing a denominator is skipped.
PRIMES = tuple((1 << 62) - c for c in (57, 87, 117, 143, 153, 167))
TRIES = 3


def _ratios(rows) -> list[list[tuple[int, int]]]:
    """Each entry as (numerator, denominator); binary64 rows without making Fractions."""
    rows = rows.array.tolist() if isinstance(rows, Binary64Matrix) else rows
    return [[v.as_integer_ratio() for v in row] for row in rows]


def full_rank(rows) -> bool:
    """rank X = N (the N rows, N <= d), shown modulo a prime p: X with each entry a/q replaced by
    a q^-1 mod p is D X mod p for D the diagonal of the rows' denominators' lcms (each a unit mod p, p
    dividing no q), and an N x N minor nonzero mod p is nonzero.  False when TRIES primes all give a lower
    rank: the hypothesis is then not established (never a wrong full rank; the claim only does not apply).
    (FLINT's exact rank and Gram matrix on integer rows, one common denominator a row, took 3 s at 16 x 16
    tokens a/q of 4000 digits and 12 s at 24 x 24; its exact elimination 25 s at 128 x 384 binary64 tokens.)"""
    ratios = _ratios(rows)
    denominators = {q for row in ratios for _, q in row}  # binary64 tokens have few: one inverse each
    usable = [p for p in PRIMES if all(q % p for q in denominators)][:TRIES]
    for p in usable:
        inverse = {q: pow(q, -1, p) for q in denominators}
        if nmod_mat([[a * inverse[q] % p for a, q in row] for row in ratios], p).rank() == len(ratios):
            return True
    return False


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
    report, reason = _connected_graph(case)
    if reason:
        return reason
    full = functools.cache(lambda: case.n <= case.d and full_rank(case.X))  # once, where a hypothesis or reason asks
    if not (report.strongly_connected and full()) and not nonnegative_cosines(case.X):
        return ("neither hypothesis holds: (strongly connected G, N <= d and full-rank X_0) or "
                "(all initial cosines >= 0): " + ("G is " + ("" if report.strongly_connected else "not ")
                                                  + "strongly connected, X_0 "
                                                  + ("has full rank" if full() else "is not shown to have full rank")
                                                  + f" with N = {case.n}, d = {case.d}, "
                                                  "and some cosine is negative or undefined (a zero token)"))
    return _radius_windows(case, report, 2 * report.radius, 1)


def nonnegative_cosines(X) -> bool:
    """Every cosine cos(x_i, x_k) is defined and >= 0: no token is zero (LN(0) and its cosines are
    undefined) and x_i . x_k >= 0 for every pair.  Each sign from the Gram matrix in balls of 128 bits
    (arb_mat: the entries rounded, every product enclosed), and exactly only where the ball holds 0
    (an exact zero, as orthogonal tokens give, always does), on the tokens times their denominators' lcm
    (positive) where it stays small, else in fractions summed pairwise.  (In fractions, a gcd at every step,
    the exact zeros of 32 orthogonal tokens of 3500-digit fractions sharing factors took 4.5 s, 0.14 s cleared;
    cleared, 2 tokens of d = 256 fractions of distinct 4000-digit q took 9 s, pairwise 0.07 s.)"""
    ratios = functools.cache(lambda: _ratios(X))  # only where a ball holds 0, or for rational tokens
    with working(128):  # binary64 entries are balls of radius 0 as they are
        B = arb_mat(X.array.tolist() if isinstance(X, Binary64Matrix)
                    else [[arb(fmpq(a, q)) for a, q in row] for row in ratios()])
        G = B * B.transpose()

    @functools.cache
    def integers(i: int) -> list | None:
        """Token i times the lcm of its denominators (products of the same signs), or None past 4 times the
        largest denominator's bits: distinct denominators, whose lcm grows with d."""
        lcm, most = fmpz(1), 4 * max(q.bit_length() for _, q in ratios()[i])
        for _, q in ratios()[i]:
            if (lcm := lcm.lcm(q)).bit_length() > most:
                return None
        return [a * (lcm // q) for a, q in ratios()[i]]

    def sign(i: int, k: int) -> int:
        if G[i, k] > 0 or G[i, k] < 0:
            return 1 if G[i, k] > 0 else -1
        if integers(i) is not None and integers(k) is not None:
            value = sum((a * b for a, b in zip(integers(i), integers(k))), fmpz(0))
        else:  # the products' fractions summed pairwise, in log d rounds of balanced sizes
            terms = [fmpq(a * b, q * r) for (a, q), (b, r) in zip(ratios()[i], ratios()[k])]
            while len(terms) > 1:
                terms = [x + y for x, y in zip(terms[::2], terms[1::2])] + terms[len(terms) & ~1:]
            value = sum(terms, fmpq(0))
        return (value > 0) - (value < 0)

    n = len(X.array) if isinstance(X, Binary64Matrix) else len(X)
    return all(sign(i, i) > 0 for i in range(n)) and all(sign(i, k) >= 0 for i in range(n) for k in range(i + 1, n))


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
