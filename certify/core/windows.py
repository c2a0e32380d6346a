"""Windows of layers (Wu et al., Theorems 1 and 2): quantities of layers t, ..., t+k-1 of a stack.

A claim of scope "window" is checked on every window of k consecutive layers that fits in the
stack, starting at its first layer and moving one layer at a time; its claim gives (first, k).
Every layer of the stack uses one mask G (certify.claims.wu checks it).  Names in the window
at t, generic over the arithmetic backend:

    t, k, r, n   the window's first layer, its length, the radius of G, the number of tokens
    D, mu        D(X_t), mu(X_t)                  D_end, mu_end   D(X_{t+k}), mu(X_{t+k})
    D_0          D(X_0)
    w_min        the smallest attention weight on an edge of G in the window's layers
    eps          (1 - SLACK) w_min: a lower bound strictly below every edge weight (why: below)
    eps_all      the same over every layer of the stack
    eps_theory   min over the window's layers of exp(-2 (a B^2 + |u| B)) / max_i |N(i)|: Wu et al.'s
                 lower bound on the edge weights, B the largest token norm entering the layer,
                 u = beta W_K b_Q / sqrt(d_k) the key-side term of a query bias (0 without b_Q):
                 every score difference S_ij - S_il is at most 2 a B^2 + 2 |u| B
    col          max_c min_i M_ic, M = P_{t+k-1} L_{t+k-2} P_{t+k-2} ... L_t P_t the window's
                 product; L_s = diag(1 / ||(P_s X_s V_s^T)_i||) is the row rescaling of post-LN
                 (L_s = I without LayerNorm), so X_{t+k} = LN_rows(M X_t) V_t^T ... V_{t+k-1}^T
    delta        sum_c min_i Q_ic, Q = M with rows rescaled to sum 1: the overlap of all rows of Q
    m            min_i ||(Q X_t)_i||

Why eps sits a relative 2^-20 below w_min: when r = 1 the product is one P and its best column
may hold the smallest weight itself, so "eps^r <= col" would be an exact equality, which ball
arithmetic cannot decide.  Any positive lower bound serves the theorem; the slack costs nothing.
"""

from __future__ import annotations

from fractions import Fraction

from certify.core import quantities
from certify.core.config import Case
from certify.core.primitives import LayerView

SLACK = Fraction(1, 2**20)
NAMES = ("t", "k", "r", "n", "D", "mu", "D_end", "mu_end", "D_0", "w_min", "eps", "eps_all", "eps_theory",
         "col", "delta", "m")


def edge_weight_minimum(ar, view: LayerView):
    """The smallest P_ij over the edges of the mask (self-loops included)."""
    return ar.minimum(view.step.P[view.arrays.mask])


def _row_norms(ar, Y):
    return ar.sqrt_nonneg((Y * Y).sum(axis=1))


def theory_bound(ar, view: LayerView):
    """exp(-2 (a B^2 + |u| B)) / max_i |N(i)|: every edge weight of this layer is at least this."""
    B = ar.sqrt_nonneg(ar.maximum((view.X * view.X).sum(axis=1)))
    spread = view.get("a") * B * B
    arrays = view.arrays
    if arrays.b_Q is not None:
        u = ar.matmul(arrays.W_K, arrays.b_Q) * arrays.score_scale
        spread = spread + ar.sqrt_nonneg((u * u).sum()) * B
    degree = int(arrays.mask.sum(axis=1).max())
    return ar.apply("exp", -2 * spread) / degree


def layernorm_rescaling(ar, view: LayerView):
    """1 / ||(P X V^T)_i|| per row for a post-LN layer, None without LayerNorm."""
    if view.layer.layernorm is None:
        return None
    Y = view.step.PX if view.arrays.V is None else ar.matmul(view.step.PX, view.arrays.V.T)
    return 1 / _row_norms(ar, Y)


class Window:
    """The names of one window, computed when first asked for (a mapping for certify.core.expr)."""

    def __init__(self, ar, views: list[LayerView], t: int, k: int, r: int, eps_all):
        self.ar, self.views, self.t, self.k = ar, views, t, k
        self.values = {"t": ar.number(t), "k": ar.number(k), "r": ar.number(r), "eps_all": eps_all,
                       "n": ar.number(views[0].X.shape[0])}

    def tokens(self, s: int):
        """X_s, s = 0..T."""
        return self.views[s].X if s < len(self.views) else self.views[-1].step.out

    def __getitem__(self, name: str):
        if name not in self.values:
            self.values[name] = self._compute(name)
        return self.values[name]

    def _layers(self):
        return self.views[self.t:self.t + self.k]

    def _compute(self, name: str):
        ar, end = self.ar, self.t + self.k
        if name in ("D", "D_end", "D_0"):
            return quantities.diameter(ar, self.tokens({"D": self.t, "D_end": end, "D_0": 0}[name]))
        if name in ("mu", "mu_end"):
            return quantities.consensus_distance(ar, self.tokens(self.t if name == "mu" else end))
        if name == "w_min":
            return ar.minimum(ar.stack([edge_weight_minimum(ar, view) for view in self._layers()]))
        if name == "eps":
            return self["w_min"] * ar.number(1 - SLACK)
        if name == "eps_theory":
            return ar.minimum(ar.stack([theory_bound(ar, view) for view in self._layers()]))
        if name == "col":
            M = self.product()
            return ar.maximum(ar.stack([ar.minimum(M[:, c]) for c in range(M.shape[1])]))
        Q = self.product()
        Q = Q / Q.sum(axis=1, keepdims=True)
        if name == "delta":
            return sum(ar.minimum(Q[:, c]) for c in range(Q.shape[1]))
        if name == "m":
            return ar.minimum(_row_norms(ar, ar.matmul(Q, self.tokens(self.t))))
        raise KeyError(name)

    def product(self):
        """M = P_{t+k-1} L_{t+k-2} ... L_t P_t (see the module docstring)."""
        if "M" not in self.values:
            layers = self._layers()
            M = layers[0].step.P
            for before, view in zip(layers, layers[1:]):
                scale = layernorm_rescaling(self.ar, before)
                M = self.ar.matmul(view.step.P, M if scale is None else M * scale[:, None])
            self.values["M"] = M
        return self.values["M"]


def frames(ar, case: Case, claim, views: list[LayerView]) -> list[Window]:
    """Every window of the claim's length that fits in the stack, from the claim's first layer."""
    first, k, r = claim.window(case)
    eps_all = ar.minimum(ar.stack([edge_weight_minimum(ar, view) for view in views])) * ar.number(1 - SLACK)
    return [Window(ar, views, t, k, r, eps_all) for t in range(first, len(views) - k + 1)]
