"""Example configurations for value.*, residual.* and ffn.* (the public JSON schema).

Deterministic, with short dyadic numbers (certify.suite.cases.dyadic), like certify.suite.cases.
"""

from __future__ import annotations

import numpy as np

from certify.suite.cases import dyadic
from certify.studies.thesis import counterexample_configs as configs

ROTATION = [[0, -1], [1, 0]]  # rotation by pi/2: ||V^k||_2 = 1, V^4 = I, powers do not converge
JORDAN = [[1, 1], [0, 1]]  # V^k = [[1, k], [0, 1]]: ||V^k||_2 = (k + sqrt(k^2 + 4)) / 2 grows


def value_stack(V, depth=4, n=5, seed=11, name="value-stack"):
    """One repeated layer X_{t+1} = P X_t V^T (value.bounded iterates one V and one A)."""
    rng = np.random.default_rng(seed)
    d = len(V)
    return {"name": f"{name}-{depth}", "X": dyadic(rng.normal(size=(n, d))),
            "layers": [{"A": dyadic(0.5 * rng.normal(size=(d, d))), "V": V}] * depth}


def rotation_stack(depth=4):
    """`depth` layers with V the rotation by pi/2 (||V^k||_2 = 1, no limit of V^k)."""
    return value_stack(ROTATION, depth, name="rotation-stack")


def jordan_stack(depth=4):
    """`depth` layers with the Jordan block V = [[1, 1], [0, 1]] (||V^k||_2 grows with k)."""
    return value_stack(JORDAN, depth, name="jordan-stack")


def expansive(n=6, d=3, rho=2.0, spread=0.25, seed=12):
    """V = rho times an orthogonal matrix (||V||_2 = rho up to the dyadic grid), tokens near consensus."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return {"name": f"expansive-rho{rho:g}-n{n}", "X": dyadic(spread * rng.normal(size=(n, d))),
            "A": dyadic(rng.normal(size=(d, d))), "V": dyadic(rho * Q)}


def residual(n=6, d=3, seed=13, mask=None):
    """X' = X + P X V^T with Gaussian A and V."""
    rng = np.random.default_rng(seed)
    config = {"name": f"residual-n{n}-d{d}" + (f"-{mask}" if mask else ""), "X": dyadic(rng.normal(size=(n, d))),
              "A": dyadic(0.5 * rng.normal(size=(d, d))), "V": dyadic(0.5 * rng.normal(size=(d, d))),
              "residual": True}
    if mask:
        config["mask"] = mask
    return config


def ffn(activation="gelu", residual=False, n=6, d=4, hidden=8, seed=14):
    """Pure attention, then the MLP W2 s(W1 x + b1) + b2 token-wise."""
    rng = np.random.default_rng(seed)
    return {"name": f"ffn-{activation}" + ("-residual" if residual else "") + f"-n{n}-d{d}",
            "X": dyadic(rng.normal(size=(n, d))), "A": dyadic(0.5 * rng.normal(size=(d, d))),
            "ffn": {"W1": dyadic(rng.normal(size=(hidden, d)) / np.sqrt(d)), "b1": dyadic(rng.normal(size=hidden)),
                    "W2": dyadic(rng.normal(size=(d, hidden)) / np.sqrt(hidden)), "b2": dyadic(rng.normal(size=d)),
                    "activation": activation, "residual": residual}}


def residual_far(q="0.1"):
    """The residual.far configuration (V = -I, A = lambda I, X = (e1, -e1)) at the default lambda for q."""
    ratio = configs.exact(q, "q")
    return configs.residual_far(ratio, configs.residual_far_lambda(ratio))


def expansive_growth(rho="2", layers=8):
    """The expansive-v stack (V = rho I, A = lambda I, X = (e1, -e1)) at the default lambda for rho."""
    value = configs.exact(rho, "rho")
    return configs.expansive_v(value, layers, configs.expansive_lambda(value))
