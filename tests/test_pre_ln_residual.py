"""A pre-LN residual layer is X' = X + P LN(X) V^T (docs/claims.md: residual X + P X V^T, pre-LN
P LN(X) V^T): the skip carries X itself.  Engine and checker against a 60-digit mpmath oracle."""

from __future__ import annotations

import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

from certify import engine

import oracle


def pre_ln_residual_out(cfg: dict):
    """X + P Z V^T with Z = X / ||x_i|| row by row, in mpmath (oracle.layer on Z, then the skip)."""
    with mp.workdps(oracle.DPS):
        X = oracle.mat(cfg["X"])
        Z = mp.matrix([[X[i, j] / mp.norm(X[i, :]) for j in range(X.cols)] for i in range(X.rows)])
        spec = {key: value for key, value in cfg.items() if key not in ("X", "residual", "layernorm")}
        return X + oracle.layer(spec, Z)["out"]


def contains(ball: arb, value) -> bool:
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, oracle.DPS, strip_zeros=False)))


@pytest.mark.parametrize("seed", range(6))
def test_pre_ln_residual_output_is_x_plus_attention_of_ln_x(seed):
    rng = np.random.default_rng(seed)
    n, d = 3, 2
    cfg = {"X": (rng.normal(0, 3, (n, d))).tolist(), "A": rng.normal(0, 1, (d, d)).tolist(),
           "V": rng.normal(0, 1, (d, d)).tolist(), "residual": True, "layernorm": "pre"}
    if seed % 2:
        cfg["mask"] = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]  # causal
    expected = oracle.diameter(pre_ln_residual_out(cfg))
    # a loose bound: decided at once, with a certificate the checker confirms only when its own
    # forward pass (X + P LN(X) V^T) encloses the engine's D_out
    result = engine.check(cfg, bound="100*D", max_prec=212)
    assert result.verdict == engine.HOLDS, result.reason
    assert result.certificate is not None
    (comparison,) = result.comparisons
    assert contains(comparison.lhs, expected), (comparison.lhs, expected)
