"""Named quantities of one layer step, computed on demand with any arithmetic backend.

A claim's inequalities are expressions over these names.  For layer t of a stack:
    D      D(X_t), the diameter entering the layer        D_out  D(X_{t+1})
    D_PX   D(P Z), before V, residual, FFN and LayerNorm   tau    Dobrushin coefficient of P_t
    a      ||A_t||_2 (certified from a float64 witness)    v      ||V_t||_2 (needs a V)
    gap    exp(-a D^2), kept itself, never as 1 minus it    n, d   tokens and dimension
    D_0    D(X_0), the diameter entering the stack
    M      max_{0 <= k <= T} ||V^k||_2, T the number of layers (needs a V; M >= 1 from k = 0)
    L      ||W2||_2 Lip(s) ||W1||_2 (+ 1 when residual): a Lipschitz constant of the layer's FFN
    mu     mu(X_t) = ||X_t - 1 xbar^T||_F                  mu_out mu(X_{t+1})
Float64 values come from float64 numpy (the screen); ball values enclose the exact ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from certify.core import centred
from certify.core import lipschitz
from certify.core import quantities
from certify.core.config import Layer
from certify.errors import BadInput
from certify.core.layers import LayerArrays, Step, ffn_weights, query_key_matrix


@dataclass
class LayerView:
    """One layer of a run in one backend: its inputs and step, and the named quantities (PRIMITIVES) computed on
    demand."""
    ar: object
    t: int
    layer: Layer
    arrays: LayerArrays
    X: object  # tokens entering the layer (in centred form their disagreement E: attention is then set)
    step: Step
    X0: object
    witnesses: dict  # name -> spectral.NormWitness, found on first use, kept across precisions
    depth: int = 1  # layers in the stack: the horizon T of M
    cache: dict = field(default_factory=dict)
    shared: dict = field(default_factory=dict)  # what the layers of one evaluation share (M of one V, _power_bound)
    # In centred form (certify.core.centred) the layer's P = Pi + Delta, from which tau keeps its relative accuracy;
    # X, step.PX and step.out are then the disagreements E, whose diameters and mu are those of the tokens
    attention: centred.Attention | None = None

    def get(self, name: str):
        """The quantity `name` of PRIMITIVES for this layer, computed once and cached."""
        if name not in self.cache:
            if name not in PRIMITIVES:
                raise KeyError(name)
            self.cache[name] = PRIMITIVES[name](self)
        return self.cache[name]


def _norm(view: LayerView, key: str, matrix):
    """||M||_2: numpy in float64 (which records the witness), enclosed in arb from the witness recorded, or
    from one of the SVD of its binary64 midpoints (certify.core.spectral.witness_of_ball)."""
    return view.ar.spectral_norm(matrix, view.witnesses, key)


def _a(view: LayerView):
    """a of the layer's head; a layer whose head (A, or W_Q, W_K, d_k and beta) is exactly an earlier layer's
    takes that layer's a and its witness (a stack of one repeated head stated T equal witnesses)."""
    layer = view.layer
    head = (layer.A, layer.W_Q, layer.W_K, layer.d_k, layer.beta)
    for seen, t, norm in view.shared.setdefault("a", []):
        if seen == head:
            view.witnesses[f"A{view.t}"] = view.witnesses[f"A{t}"]
            return norm
    norm = _head_norm(view)
    view.shared["a"].append((head, view.t, norm))
    return norm


def _head_norm(view: LayerView):
    """a = |beta| / sqrt(d_k) ||W_Q W_K^T||_2 through the d_k x d_k reduction of certify.core.thin_norm
    when d_k < d (its witness is d_k x d_k), else ||A||_2 of the d x d matrix."""
    arrays, key = view.arrays, f"A{view.t}"
    if arrays.A is None and arrays.W_Q.shape[-1] < arrays.W_Q.shape[-2]:
        norm = view.ar.thin_product_norm(arrays.W_Q, arrays.W_K, view.witnesses, key)
        if norm is not None:
            return norm * view.ar.abs(arrays.score_scale)
    return _norm(view, key, query_key_matrix(view.ar, arrays))


def _v(view: LayerView):
    if view.arrays.V is None:
        raise BadInput("the bound uses v = ||V||_2 but the layer has no value matrix V")
    return _norm(view, f"V{view.t}", view.arrays.V)


def _power_bound(view: LayerView):
    """M = max_{0 <= k <= T} ||V^k||_2 (k = 0 is the identity), each power certified from its own witness.
    A layer whose V is exactly an earlier layer's takes that layer's M and the witnesses of its powers
    (value.bounded has one V throughout: T layers took T^2 norms, 3 x 3 of 384 x 384 most of 18 s)."""
    if view.arrays.V is None:
        raise BadInput("M = max_k ||V^k||_2 needs a value matrix V")
    for V, t, bound in view.shared.setdefault("M", []):
        if V == view.layer.V:
            for k in range(1, view.depth + 1):
                view.witnesses[f"V{view.t}^{k}"] = view.witnesses[f"V{t}^{k}"]
            return bound
    bound = _powers(view)
    view.shared["M"].append((view.layer.V, view.t, bound))
    return bound


def _powers(view: LayerView):
    ar, V = view.ar, view.arrays.V
    bound, power, log2_scale = ar.number(1), V, 0
    for k in range(1, view.depth + 1):
        # float64 powers of an expansive V overflow; the witness is scale-free, so rescale by 2^shift
        shift = ar.scale_exponent(power)
        power, log2_scale = power * ar.number(Fraction(2) ** -shift), log2_scale + shift
        norm = ar.ldexp(_norm(view, f"V{view.t}^{k}", power), log2_scale)
        bound = ar.maximum(ar.stack([bound, norm]))
        power = ar.matmul(power, V)
    return bound


def _ffn_lipschitz(view: LayerView):
    ffn = view.layer.ffn
    if ffn is None:
        raise BadInput("L is the Lipschitz constant of a feed-forward network, and the layer has none")
    W1, _, W2, _ = view.arrays.ffn or ffn_weights(view.ar, ffn)
    W1 = _norm(view, f"W1_{view.t}", W1)
    W2 = _norm(view, f"W2_{view.t}", W2)
    return lipschitz.mlp_bound(view.ar, W1, W2, ffn.activation, ffn.residual)


def _tau(view: LayerView):
    """tau(P_t): in centred form from Delta (||P_i - P_k||_1 = ||Delta_i - Delta_k||_1 without a mask, where P's
    own enclosure has radii of Pi's size)."""
    if view.attention is not None:
        return centred.dobrushin(view.ar, view.attention)
    return quantities.dobrushin(view.ar, view.step.P)


def _gap(view: LayerView):
    D = view.get("D")
    return view.ar.apply("exp", -view.get("a") * D * D)


PRIMITIVES = {
    "D": lambda v: quantities.diameter(v.ar, v.X),
    "D_out": lambda v: quantities.diameter(v.ar, v.step.out),
    "D_PX": lambda v: quantities.diameter(v.ar, v.step.PX),
    "D_0": lambda v: quantities.diameter(v.ar, v.X0),
    "mu": lambda v: quantities.consensus_distance(v.ar, v.X),
    "mu_out": lambda v: quantities.consensus_distance(v.ar, v.step.out),
    "tau": _tau,
    "a": _a,
    "v": _v,
    "gap": _gap,
    "M": _power_bound,
    "L": _ffn_lipschitz,
    "n": lambda v: v.ar.number(v.X.shape[-2]),  # tokens are the last two axes (a batch leads)
    "d": lambda v: v.ar.number(v.X.shape[-1]),
}
