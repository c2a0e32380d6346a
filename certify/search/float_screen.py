"""float64 screening of many pure-attention layers at once (numpy, batched over configurations).

Layers with a mask, V, a residual connection or an FFN are beyond the batched pass: layer_quantities'
D, a, L and gap (the input and the head) still hold for them, but their claims' sides come from
engine_sides, the engine's float64 evaluation one configuration at a time (chunk_sides chooses).

Untrusted and never a verdict: this is the fast pass of a campaign (the float64 value of
L = a D^2, and whether float64 already loses the gap exp(-L)), and the plain-float64 baseline
the throughput benchmark compares the certified evaluation with.  It runs the generic formulas
of certify.core.layers and certify.core.quantities on a leading batch axis (float64 reduces over the last
axis); the quantities are those of certify.core.primitives, for one layer X' = P X.
"""

from __future__ import annotations

import numpy as np

from certify import claims
from certify.core import config, expr
from certify.core import quantities
from certify.core.arith import FLOAT64
from certify.core.layers import LayerArrays, attention, full_mask
from certify.core.primitives import PRIMITIVES
from certify.engine import decide


def layer_quantities(X: np.ndarray, A: np.ndarray, a: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """D, a, gap = exp(-a D^2), L = a D^2, tau, D_out for X' = P X; X is (batch, n, d), A (batch, d, d);
    `a` (batch,): ||A||_2 where the caller has it (a thin head's, from its d_k x d_k reduction), else A's SVD."""
    batch, n, d = X.shape
    # exp(-L) underflows to 0 past L = 745 (what the screen shows), as may the weights of P: never an error, whatever
    # the caller's np.seterr (all="raise" stopped a campaign with FloatingPointError)
    with np.errstate(all="ignore"):
        P = attention(FLOAT64, LayerArrays.bilinear(A, full_mask(n)), X)
        D, D_out = quantities.diameter(FLOAT64, X), quantities.diameter(FLOAT64, P @ X)
        if a is None:
            a = np.linalg.svd(A, compute_uv=False)[:, 0]
        L = a * D * D
        return {"D": D, "D_0": D, "a": a, "L": L, "gap": np.exp(-L), "tau": quantities.dobrushin(FLOAT64, P),
                "D_out": D_out, "D_PX": D_out, "n": np.full(batch, float(n)), "d": np.full(batch, float(d))}


# The names of layer_quantities that mean what the primitives of certify.core.primitives mean (its L is
# a D^2, not the FFN's Lipschitz constant).
BATCHED_NAMES = frozenset({"D", "D_0", "a", "gap", "tau", "D_out", "D_PX", "n", "d"})


def sides(pairs: list[tuple[str, str]], values: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """float64 lhs and rhs of each inequality on `values` (layer_quantities' arrays), per
    configuration (one layer, so a stack claim's composed rhs is its rhs at D_0)."""
    names = set(PRIMITIVES)
    shape = np.shape(values["D"])  # one entry per configuration, also for a side that is a constant (--bound 5)

    def side(text: str) -> np.ndarray:
        return np.broadcast_to(expr.parse(text, names).evaluate(FLOAT64, values), shape)

    with np.errstate(all="ignore"):  # a side may overflow or leave its domain: a guess, never a warning on stderr
        return [(side(lhs), side(rhs)) for lhs, rhs in pairs]


def chunk_sides(claim: claims.Claim, pure_attention: bool, configs: list[dict],
                values: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """float64 lhs and rhs of each inequality of the claim (a registered one, or a bound's), per
    configuration of a chunk: at once from layer_quantities' `values` for pure attention when the
    claim names only quantities they hold, else engine_sides, one configuration at a time."""
    pairs = [(q.lhs, q.rhs) for q in claim.inequalities]
    if pure_attention and claim.scope != "window" and all(
            expr.parse(side, PRIMITIVES).names <= BATCHED_NAMES for pair in pairs for side in pair):
        return sides(pairs, values)
    return engine_sides(claim, configs)


def engine_sides(claim: claims.Claim, configs: list[dict]) -> list[tuple[np.ndarray, np.ndarray]]:
    """float64 lhs and rhs of each inequality of the claim, per configuration of any one-layer form,
    from the engine's float64 screen (certify.engine.decide.float64_screen); nan where it has none."""
    nowhere = [(np.nan, np.nan)] * len(claim.inequalities)
    rows = [[(float(c.lhs), float(c.rhs)) for c in decide.float64_screen(config.load(cfg), claim)] or nowhere
            for cfg in configs]
    values = np.array(rows).reshape(len(configs), len(claim.inequalities), 2)
    return [(values[:, q, 0], values[:, q, 1]) for q in range(len(claim.inequalities))]
