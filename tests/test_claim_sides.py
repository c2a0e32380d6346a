"""Every registered layer and stack claim compares the sides docs/claims.md states: each side of
each comparison of `certify check` encloses the side written here from the contract in 60-digit
mpmath (tests/oracle.py for a layer), so a wrong constant, factor or D in a claim's formula fails.
The window claims (Wu et al.) have their own oracle in test_mask_ln_collapse.py."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

from certify import claims, engine

import oracle

def g(a, D):
    return (1 - mp.exp(-a * D**2)) * D


def lipschitz(f):
    """||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), docs/claims.md ffn.lipschitz."""
    L = oracle.spectral_norm(oracle.mat(f["W2"])) * oracle.spectral_norm(oracle.mat(f["W1"]))
    L *= (1 + mp.erf(1)) / 2 + 1 / (mp.e * mp.sqrt(mp.pi)) if f["activation"] == "gelu" else 1
    return L + 1 if f["residual"] else L


def ffn_out_diameter(cfg):
    """D(f(P X)) with f(y) = W2 s(W1 y + b1) + b2 (+ y when residual)."""
    f, Y = cfg["ffn"], oracle.layer(cfg, oracle.mat(cfg["X"]))["out"]
    W1, W2, b1, b2 = oracle.mat(f["W1"]), oracle.mat(f["W2"]), oracle.mat([f["b1"]]), oracle.mat([f["b2"]])
    act = (lambda x: max(x, 0)) if f["activation"] == "relu" else (lambda x: x * (1 + mp.erf(x / mp.sqrt(2))) / 2)
    rows = [(Y[i, :] * W1.T + b1).apply(act) * W2.T + b2 + (Y[i, :] if f["residual"] else 0 * Y[i, :])
            for i in range(Y.rows)]
    return oracle.diameter(mp.matrix([[row[0, j] for j in range(Y.cols)] for row in rows]))


def powers_bound(V, T):
    """M = max_{0 <= k <= T} ||V^k||_2."""
    return max([mp.mpf(1)] + [oracle.spectral_norm(V**k) for k in range(1, T + 1)])


# claim -> (configuration builder, the sides (lhs, rhs) of each comparison in the engine's order)
def layer_sides(*formulas):
    return lambda cfg, qs: [formula(q) for formula in formulas for q in qs]


SIDES = {
    "collapse.global": layer_sides(lambda q: (q["D_out"], g(q["a"], q["D"]))),
    "collapse.tanh": layer_sides(lambda q: (q["D_out"], mp.tanh(q["a"] * q["D"] ** 2 / 4) * q["D"])),
    "collapse.dobrushin": layer_sides(lambda q: (q["D_PX"], q["tau"] * q["D"])),
    "collapse.tau": layer_sides(lambda q: (q["tau"], 1 - mp.exp(-q["a"] * q["D"] ** 2))),
    "collapse.cubic": layer_sides(lambda q: (q["D_out"], q["a"] * q["D"] ** 3)),
    "init.scaling": layer_sides(lambda q: (q["D_out"], (1 - mp.exp(-q["a"] * q["D"] ** 2)) * q["D"])),
    "value.expansive": layer_sides(lambda q: (q["D_out"], q["v"] * g(q["a"], q["D"])),
                                   lambda q: (q["D_out"], q["v"] * q["a"] * q["D"] ** 3)),
    "residual.two_sided": layer_sides(lambda q: ((1 - q["v"] * q["tau"]) * q["D"], q["D_out"]),
                                      lambda q: (q["D_out"], (1 + q["v"] * q["tau"]) * q["D"])),
    "residual.two_sided.global": layer_sides(
        lambda q: ((1 - q["v"] * (1 - mp.exp(-q["a"] * q["D"] ** 2))) * q["D"], q["D_out"]),
        lambda q: (q["D_out"], (1 + q["v"] * (1 - mp.exp(-q["a"] * q["D"] ** 2))) * q["D"])),
}


def trajectory_sides(cfg, qs):
    """For every t <= T, D_t against g_{a_t}(... g_{a_1}(D_0)): each layer's own a, the running bound as D."""
    bound, sides = qs[0]["D"], []
    for q in qs:
        bound = g(q["a"], bound)
        sides.append((q["D_out"], bound))
    return sides


def value_bounded_sides(cfg, qs):
    """For every t <= T, D_t <= M prod_{s<t} (1 - exp(-a_s M^2 D_0^2)) D_0, M over the powers k <= T of the
    one V (the whole stack's M at every t)."""
    M, D0 = powers_bound(oracle.mat(cfg["layers"][0]["V"]), len(qs)), qs[0]["D"]
    bound, sides = D0, []
    for q in qs:
        bound *= 1 - mp.exp(-q["a"] * M**2 * D0**2)
        sides.append((q["D_out"] / M, bound))
    return sides


def ffn_sides(cfg, qs):
    (q,), D_out, L = qs, ffn_out_diameter(cfg), lipschitz(cfg["ffn"])
    return [(D_out, L * g(q["a"], q["D"])), (D_out, L * q["a"] * q["D"] ** 3)]


SIDES.update({"collapse.trajectory": trajectory_sides, "value.bounded": value_bounded_sides,
              "ffn.lipschitz": ffn_sides})
WINDOW_CLAIMS = {"mask.collapse", "ln.collapse"}


def head(rng, d, biased):
    """An attention head: A (beta scales it) or W_Q, W_K with d_k, biases and a temperature."""
    if not biased:
        return {"A": rng.normal(0, 0.7, (d, d)).tolist(), "beta": "-3/2"}
    k = d + 1
    return {"W_Q": rng.normal(0, 1, (d, k)).tolist(), "W_K": rng.normal(0, 1, (d, k)).tolist(), "d_k": 3,
            "b_Q": rng.normal(0, 1, k).tolist(), "b_K": rng.normal(0, 1, k).tolist(), "beta": "0.7"}


def configuration(claim_id, seed):
    rng = np.random.default_rng(seed)
    n, d, biased = 3 + seed % 2, 2 + seed % 2, bool(seed % 2)
    X = rng.normal(0, 0.8, (n, d)).tolist()
    V = (rng.normal(0, 0.9, (d, d))).tolist()
    layer = head(rng, d, biased)
    if claim_id in ("collapse.trajectory", "value.bounded"):
        layers = [head(rng, d, biased) for _ in range(3)]
        return {"X": X, "layers": [{**spec, "V": V} for spec in layers] if claim_id == "value.bounded" else layers}
    if claim_id == "collapse.dobrushin":
        return {"X": X, **layer, "mask": "causal"}
    if claim_id == "value.expansive":
        return {"X": X, **layer, "V": V}
    if claim_id.startswith("residual."):  # the tau form holds masked too
        masked = {"mask": "uni"} if claim_id == "residual.two_sided" else {}
        return {"X": X, **layer, "V": V, "residual": True, **masked}
    if claim_id == "ffn.lipschitz":
        h = 2 * d
        return {"X": X, **layer, "ffn": {"W1": rng.normal(0, 1, (h, d)).tolist(), "b1": rng.normal(0, 1, h).tolist(),
                                        "W2": rng.normal(0, 1, (d, h)).tolist(), "b2": rng.normal(0, 1, d).tolist(),
                                        "activation": ["relu", "gelu"][seed % 2], "residual": seed == 2}}
    return {"X": X, **layer}


def oracle_quantities(cfg):
    """oracle.quantities on the configuration with named masks written out."""
    n = len(cfg["X"])
    named = {"causal": lambda i, j: j <= i, "uni": lambda i, j: i - 1 <= j <= i}

    def expand(spec):
        mask = spec.get("mask")
        return {**spec, "mask": [[int(named[mask](i, j)) for j in range(n)] for i in range(n)]} if mask else spec
    if "layers" in cfg:
        return oracle.quantities({"X": cfg["X"], "layers": [expand(spec) for spec in cfg["layers"]]})
    return oracle.quantities(expand(cfg))


def contains(ball, value) -> bool:
    """The ball meets the 60-digit value, widened by 1e-45 relative for the oracle's own rounding."""
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        exact = arb(mp.nstr(value, oracle.DPS, strip_zeros=False))
        return arb(ball).overlaps(arb(exact.mid(), abs(exact.mid()) * arb(10) ** -45 + arb(10) ** -300))


def test_every_layer_and_stack_claim_has_its_sides_here():
    assert set(SIDES) | WINDOW_CLAIMS == {claim.id for claim in claims.all_claims()}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("claim_id", sorted(SIDES))
def test_the_comparisons_are_the_contract_sides(claim_id, seed):
    cfg = configuration(claim_id, seed)
    result = engine.check(cfg, claim=claim_id, max_prec=424)
    with mp.workdps(oracle.DPS):
        sides = SIDES[claim_id](cfg, oracle_quantities(cfg))
    assert len(result.comparisons) == len(sides)
    if claims.get(claim_id).scope == "stack":  # one comparison after every layer, in order
        assert [c.layer for c in result.comparisons] == list(range(len(cfg["layers"])))
    for comparison, (lhs, rhs) in zip(result.comparisons, sides):
        assert contains(comparison.lhs, lhs), (comparison.lhs_expr, comparison.lhs, lhs)
        assert contains(comparison.rhs, rhs), (comparison.rhs_expr, comparison.rhs, rhs)
    # each is a theorem: the contract's sides hold, and so does the verdict wherever they are apart
    margins = [(rhs - lhs) / abs(rhs) for lhs, rhs in sides]
    assert min(margins) > 0
    if min(margins) > 1e-9:
        assert result.verdict == engine.HOLDS, result.reason
