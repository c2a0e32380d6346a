"""Named quantities of one layer step, computed on demand with any arithmetic backend.

A claim's inequalities are expressions over these names.  For layer t of a stack:
    D      D(X_t), the diameter entering the layer        D_out  D(X_{t+1})
    D_PX   D(P Z), before V, residual, FFN and LayerNorm   tau    Dobrushin coefficient of P_t
    a      ||A_t||_2 (certified from a float64 witness)    v      ||V_t||_2 (needs a V)
    gap    exp(-a D^2), kept itself, never as 1 minus it    n, d   tokens and dimension
    D_0    D(X_0), the diameter entering the stack
    mu     mu(X_t) = ||X_t - 1 xbar^T||_F                  mu_out mu(X_{t+1})
Float64 values come from float64 numpy (the screen); ball values enclose the exact ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from certify import quantities, spectral
from certify.arith import Float64
from certify.config import Layer
from certify.errors import BadInput
from certify.layers import LayerArrays, Step, query_key_matrix


@dataclass
class LayerView:
    ar: object
    t: int
    layer: Layer
    arrays: LayerArrays
    X: object  # tokens entering the layer
    step: Step
    X0: object
    witnesses: dict  # name -> spectral.NormWitness, shared between the screen and the ball pass
    cache: dict = field(default_factory=dict)

    def get(self, name: str):
        if name not in self.cache:
            if name not in PRIMITIVES:
                raise KeyError(name)
            self.cache[name] = PRIMITIVES[name](self)
        return self.cache[name]


def _norm(view: LayerView, key: str, matrix):
    """||M||_2: numpy in the screen (which also records the witness), certified in arb."""
    if isinstance(view.ar, Float64):
        view.witnesses[key] = spectral.witness(matrix)
        return float(np.linalg.norm(matrix, 2))
    return spectral.enclose(matrix, view.witnesses[key])


def _a(view: LayerView):
    return _norm(view, f"A{view.t}", query_key_matrix(view.ar, view.arrays))


def _v(view: LayerView):
    if view.arrays.V is None:
        raise BadInput("the bound uses v = ||V||_2 but the layer has no value matrix V")
    return _norm(view, f"V{view.t}", view.arrays.V)


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
    "tau": lambda v: quantities.dobrushin(v.ar, v.step.P),
    "a": _a,
    "v": _v,
    "gap": _gap,
    "n": lambda v: v.ar.number(v.X.shape[0]),
    "d": lambda v: v.ar.number(v.X.shape[1]),
}
