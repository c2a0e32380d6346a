"""The checker's windows of layers for Wu et al.'s theorems (claims mask.collapse, ln.collapse).

Written again from the mathematics, sharing nothing with the engine.  Every layer uses one mask
G: mask[i][j] = 1 when token i attends to token j, the edge j -> i.  r is the radius of G (the
smallest, over the tokens that reach every token, of the largest BFS distance from it).

mask.collapse: windows of r layers from layer 0.  ln.collapse: windows of 2r layers from layer 1
(tokens are on the unit sphere there), post-LN x / ||x||, V^T V = I exactly, and either
(G strongly connected, N <= d, rank X_0 = N) or (G quasi-strongly connected, no zero token and x_i . x_k >= 0).

A window at t of length k gives (with P_s, X_s the attention and tokens of layer s):
    D, mu / D_end, mu_end   at X_t / X_{t+k}       D_0  at X_0      t, k, r, n
    w_min       min of P_s[i][j] over the edges of G and the window's layers
    eps         w_min (1 - 2^-20)                   eps_all  the same over all layers
    eps_theory  min over the window's layers of exp(-2 (a B^2 + |u| B)) / max_i |N(i)|,
                B = max_i ||x_i||, u = beta W_K b_Q / sqrt(d_k) (0 without b_Q)
    col         max_c min_i M[i][c], M = P_{t+k-1} L_{t+k-2} ... L_t P_t, L_s = diag(1/||(P_s X_s V^T)_i||)
                with post-LN (no rescaling without LayerNorm)
    delta       sum_c min_i Q[i][c], Q = M with rows divided by their sums
    m           min_i ||(Q X_t)_i||
"""

from __future__ import annotations

import functools
from fractions import Fraction

from flint import arb, arb_mat, ctx, fmpq, fmpq_mat, fmpz, nmod_mat

from certify_checker import forward
from certify_checker.exact import ball, largest, rational, smallest

SLACK = Fraction(1, 2**20)


def mask_of(layer: dict, n: int) -> list:
    return layer.get("mask") or [[1] * n for _ in range(n)]


def graph(mask: list) -> tuple[bool, bool, int | None]:
    """(strongly connected, quasi-strongly connected, radius): a search from every token along the edges j -> i, its
    sets as integers' bits (token by token over the mask's rows, n^3 steps in Python, it took 0.33 s at 256 tokens)."""
    n = len(mask)
    edges = [sum(1 << i for i in range(n) if mask[i][j]) for j in range(n)]  # bit i of edges[j]: j -> i
    searches = []  # (tokens reached, the most edges to one) from each token
    for source in range(n):
        seen = frontier = 1 << source
        depth = -1
        while frontier:
            after, depth = 0, depth + 1
            while frontier:
                low = frontier & -frontier
                after, frontier = after | edges[low.bit_length() - 1], frontier ^ low
            frontier, seen = after & ~seen, seen | after
        searches.append((seen.bit_count(), depth))
    radius = min((depth for reached, depth in searches if reached == n), default=None)
    return all(reached == n for reached, _ in searches), radius is not None, radius


def rationals(rows) -> list:
    return [[fmpq(q.numerator, q.denominator) for q in map(rational, row)] for row in rows]


_PRIMES = tuple((1 << 62) - c for c in (57, 87, 117, 143, 153, 167))  # word-sized


def full_rank(rows: list) -> bool:
    """rank = n (n rows of fmpq, n <= d) shown modulo a prime p dividing no denominator: a/q as a q^-1 mod p is the
    rows times their denominators' lcms (units mod p) mod p, and a minor nonzero mod p is nonzero.  Below n at 3
    primes: not shown (False), which only refuses.  (FLINT's exact rank and Gram matrix of 24 x 24 tokens a/q of
    4000 digits, one common denominator: 43 s, 577 MB.)"""
    denominators = {int(v.q) for row in rows for v in row}  # few for binary64 tokens: an inverse each
    for p in [p for p in _PRIMES if all(q % p for q in denominators)][:3]:
        inverse = {q: pow(q, -1, p) for q in denominators}
        if nmod_mat([[int(v.p) * inverse[int(v.q)] % p for v in row] for row in rows], p).rank() == len(rows):
            return True
    return False


def nonnegative_cosines(rows: list) -> bool:
    """x_i . x_j >= 0 and x_i . x_i > 0 (a cosine needs nonzero tokens) for rows of fmpq: each sign from the Gram
    matrix in balls of 128 bits, exactly (_dot) only where a ball holds 0, as an exact zero's always does."""
    with ctx.workprec(128):
        balls = arb_mat([[arb(v) for v in row] for row in rows])
        gram = balls * balls.transpose()
    cleared = functools.cache(lambda i: _cleared(rows[i]))
    for i, j in ((i, j) for i in range(len(rows)) for j in range(i, len(rows))):
        if not (gram[i, j] > 0 or (i != j and gram[i, j] >= 0)):  # a ball's comparison: for every point
            value = fmpz(-1) if gram[i, j] < 0 else _dot(rows, cleared, i, j)
            if value < 0 or (i == j and value == 0):
                return False
    return True


def _dot(rows: list, cleared, i: int, j: int):
    """x_i . x_j exactly, up to a positive factor: on the rows times their denominators' lcm when both have one (32
    orthogonal tokens of 3500-digit fractions sharing factors: 0.14 s, in fmpq 4.8 s), else the products in fmpq
    summed pairwise (2 tokens of d = 256 fractions of distinct 4000-digit q: 9 s on the rows cleared, 0.07 s so)."""
    if cleared(i) is not None and cleared(j) is not None:
        return sum((a * b for a, b in zip(cleared(i), cleared(j))), fmpz(0))
    terms = [a * b for a, b in zip(rows[i], rows[j])]
    while len(terms) > 1:
        terms = [a + b for a, b in zip(terms[::2], terms[1::2])] + terms[len(terms) & ~1:]
    return sum(terms, fmpq(0))


def _cleared(row: list) -> list | None:
    """The row times its denominators' lcm (positive), or None once that passes 4 times their largest one's bits."""
    most, lcm = 4 * max(v.q.bit_length() for v in row), fmpz(1)
    for v in row:
        if (lcm := lcm.lcm(v.q)).bit_length() > most:
            return None
    return [v.p * (lcm // v.q) for v in row]


def orthogonal(V: list) -> bool:
    Vq = fmpq_mat(rationals(V))
    return Vq.transpose() * Vq == fmpq_mat(len(V), len(V), [int(i == j) for i in range(len(V)) for j in range(len(V))])


def post_ln_orthogonal(layer: dict) -> bool:
    """X' = LN(P X V^T) with the sphere LN and V^T V = I (no V: the identity)."""
    ln = layer.get("layernorm")
    return (isinstance(ln, dict) and ln.get("position") == "post" and ln.get("kind", "sphere") == "sphere"
            and not layer.get("residual") and "ffn" not in layer and ("V" not in layer or orthogonal(layer["V"])))


def unmet_hypothesis(claim: str, inputs: dict) -> str | None:
    """The stack-level hypotheses of the two claims; None when they hold."""
    X, layers = inputs["X"], inputs["layers"]
    n = len(X)
    masks = [mask_of(layer, n) for layer in layers]
    if any(mask != masks[0] for mask in masks):
        return f"{claim}: the layers do not share one mask"
    strong, quasi, r = graph(masks[0])
    if not quasi:
        return f"{claim}: the mask's graph is not quasi-strongly connected"
    first, k = window_shape(claim, r)
    if len(layers) < first + k:
        return f"{claim}: no window of {k} layers fits in the stack"
    if claim == "ln.collapse":
        rows = rationals(X)
        if not (strong and n <= len(X[0]) and full_rank(rows)) and not nonnegative_cosines(rows):
            return "ln.collapse: neither (strongly connected, N <= d, full rank) nor (all cosines >= 0) holds"
    return None


def window_shape(claim: str, r: int) -> tuple[int, int]:
    """(first layer, length)."""
    return (0, r) if claim == "mask.collapse" else (1, 2 * r)


class Window:
    """The names of the window at t (a callable for formula.evaluate)."""

    def __init__(self, steps: list, final, t: int, k: int, r: int, eps_all: arb, per_step: dict):
        self.steps, self.final, self.t, self.k = steps, final, t, k
        self.values = {"t": arb(t), "k": arb(k), "r": arb(r), "n": arb(len(final)), "eps_all": eps_all}
        self.per_step = per_step  # (quantity, s): a layer's own quantity, shared by the windows that hold layer s

    def _each(self, quantity, s: int):
        """quantity(layer s), once for the up to k windows holding it (W_K and b_Q, or V, read: d^2 entries each)."""
        if (quantity, s) not in self.per_step:
            self.per_step[quantity, s] = quantity(self.steps[s])
        return self.per_step[quantity, s]

    def tokens(self, s: int):
        return self.steps[s].X if s < len(self.steps) else self.final

    def __call__(self, name: str) -> arb:
        if name not in self.values:
            self.values[name] = self._compute(name)
        return self.values[name]

    def _compute(self, name: str) -> arb:
        layers, end = range(self.t, self.t + self.k), self.t + self.k
        if name in ("D", "D_end", "D_0"):
            return forward.diameter(self.tokens({"D": self.t, "D_end": end, "D_0": 0}[name]))
        if name in ("mu", "mu_end"):
            return forward.consensus_distance(self.tokens(self.t if name == "mu" else end))
        if name == "w_min":
            return smallest(self._each(edge_minimum, s) for s in layers)
        if name == "eps":
            return self("w_min") * (1 - arb(SLACK.numerator) / SLACK.denominator)
        if name == "eps_theory":
            return smallest(self._each(theory_bound, s) for s in layers)
        M = self._product(layers)
        if name == "col":
            return largest(smallest(row[c] for row in M) for c in range(len(M)))
        if "Q" not in self.values:  # each row's sum once (once per entry, n^3 sums a window)
            self.values["Q"] = [[x / total for x in row] for row, total in zip(M, (sum(row, arb(0)) for row in M))]
        Q = self.values["Q"]
        if name == "delta":
            return sum((smallest(row[c] for row in Q) for c in range(len(Q))), arb(0))
        if name == "m":
            return smallest(forward.norm(row) for row in forward.product(Q, self.tokens(self.t)))
        raise ValueError(f"unknown window quantity {name!r}")

    def _product(self, layers: range):
        if "M" not in self.values:
            M = self.steps[layers[0]].step["P"]
            for s in layers[1:]:
                scale = self._each(rescaling, s - 1)
                M = forward.product(self.steps[s].step["P"], [[x * c for x in row] for row, c in zip(M, scale)])
            self.values["M"] = M
        return self.values["M"]


def edge_minimum(step) -> arb:
    n = len(step.X)
    mask = mask_of(step.spec, n)
    return smallest(step.step["P"][i][j] for i in range(n) for j in range(n) if mask[i][j])


def theory_bound(step) -> arb:
    """exp(-2 (a B^2 + |u| B)) / max_i |N(i)| for this layer."""
    spec, n = step.spec, len(step.X)
    B = largest(forward.norm(row) for row in step.X)
    spread = step("a") * B * B
    if "b_Q" in spec:
        scale = ball(spec.get("beta", "1")) / arb(int(spec["d_k"])).sqrt()
        b_Q = forward.vector(spec["b_Q"])
        u = [scale * sum((w * b for w, b in zip(row, b_Q)), arb(0)) for row in forward.matrix(spec["W_K"])]
        spread = spread + forward.norm(u) * B
    degree = max(sum(row) for row in mask_of(spec, n))
    return (-2 * spread).exp() / degree


def rescaling(step) -> list:
    """1 / ||(P X V^T)_i|| per row with post-LN; ones without LayerNorm."""
    if "layernorm" not in step.spec:
        return [arb(1)] * len(step.X)
    Y = step.step["PX"]
    if "V" in step.spec:
        Y = forward.product(Y, forward.transpose(forward.matrix(step.spec["V"])))
    return [1 / forward.norm(row) for row in Y]


def frames(claim: str, inputs: dict, steps: list) -> list[Window]:
    """The windows of the claim on the recomputed stack (steps are inequality.Layer objects)."""
    n = len(inputs["X"])
    _, _, r = graph(mask_of(inputs["layers"][0], n))
    first, k = window_shape(claim, r)
    final = steps[-1].step["out"]
    per_step = {(edge_minimum, s): edge_minimum(step) for s, step in enumerate(steps)}  # the windows' too
    eps_all = smallest(per_step.values()) * (1 - arb(SLACK.numerator) / SLACK.denominator)
    return [Window(steps, final, t, k, r, eps_all, per_step) for t in range(first, len(steps) - k + 1)]
