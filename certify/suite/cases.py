"""Built-in example configurations from the settings of both papers.

Each builder returns a configuration dict (the public JSON schema), with short dyadic
numbers (float64 values rounded to a 2^-10 grid) so that certificates stay readable.  They
are deterministic: the same name always gives the same configuration.
"""

from __future__ import annotations

import numpy as np

GRID = 2.0**-10


def dyadic(values) -> list:
    """`values` (any array-like of floats) rounded to the nearest multiple of GRID = 2^-10, as nested lists:
    short exact dyadic numbers for the example configurations."""
    return (np.round(np.asarray(values, dtype=float) / GRID) * GRID).tolist()


def gaussian(n=8, d=4, seed=1, scale=0.5):
    """Gaussian tokens and a Gaussian query-key matrix: the generic case."""
    rng = np.random.default_rng(seed)
    return {"name": f"gaussian-n{n}-d{d}", "X": dyadic(rng.normal(size=(n, d))),
            "A": dyadic(scale * rng.normal(size=(d, d)))}


def antipodal(strength=500.0):
    """Two tokens +-1 on a line, A = strength: a D^2 = 4 strength, D(PX) = D tanh(a D^2 / 4).

    At strength 500 (a D^2 = 2000) float64 computes the bound as exactly D and exp(-a D^2) as 0.
    """
    return {"name": f"antipodal-aD2-{4 * strength:g}", "X": [[1.0], [-1.0]], "A": [[strength]]}


def standard_init(n=8, d=64, d_k=64, seed=0):
    """LayerNorm-scale tokens (norm about sqrt(d)) and W_Q, W_K ~ N(0, 1/d): a D^2 >> 37."""
    rng = np.random.default_rng(seed)
    return {"name": f"lecun-init-n{n}-d{d}", "X": dyadic(rng.normal(size=(n, d))),
            "W_Q": dyadic(rng.normal(scale=d**-0.5, size=(d, d_k))),
            "W_K": dyadic(rng.normal(scale=d**-0.5, size=(d, d_k)))}


def near_consensus(n=6, d=3, spread=2.0**-20, seed=2):
    """Tokens within `spread` of a common point: the cubic (doubly exponential) regime."""
    rng = np.random.default_rng(seed)
    centre = dyadic(rng.normal(size=d))
    offsets = np.round(rng.normal(size=(n, d)) * 8) / 8 * spread
    return {"name": f"near-consensus-n{n}-d{d}", "X": (np.array(centre) + offsets).tolist(),
            "A": dyadic(rng.normal(size=(d, d)))}


def near_permutation(n=5, d=2, strength=60.0, seed=3):
    """A = strength I on spread-out tokens: P is almost the identity and D(PX) is almost D."""
    rng = np.random.default_rng(seed)
    angles = np.sort(rng.uniform(0, 2 * np.pi, size=n))
    X = np.stack([np.cos(angles), np.sin(angles)], axis=1) * 2
    return {"name": f"near-permutation-n{n}", "X": dyadic(X), "A": (strength * np.eye(d)).tolist()}


def biased_heads(n=6, d=4, d_k=2, seed=4):
    """W_Q, W_K with biases and an inverse temperature: the biases cancel in every bound."""
    rng = np.random.default_rng(seed)
    return {"name": f"biased-n{n}-d{d}", "X": dyadic(rng.normal(size=(n, d))),
            "W_Q": dyadic(rng.normal(size=(d, d_k))), "W_K": dyadic(rng.normal(size=(d, d_k))),
            "b_Q": dyadic(rng.normal(size=d_k)), "b_K": dyadic(rng.normal(size=d_k)), "beta": "0.75"}


def causal(n=6, d=3, seed=5):
    """A causal mask (Wu et al.): one step alone may have tau = 1."""
    config = gaussian(n, d, seed)
    config.update(name=f"causal-n{n}-d{d}", mask="causal")
    return config


def stack(n=6, d=3, depth=4, seed=6):
    """A stack of pure attention layers: the trajectory bound."""
    rng = np.random.default_rng(seed)
    return {"name": f"stack-{depth}-n{n}-d{d}", "X": dyadic(rng.normal(size=(n, d))),
            "layers": [{"A": dyadic(0.4 * rng.normal(size=(d, d)))} for _ in range(depth)]}


def two_tokens(seed=7):
    """n = 2: D(PX) = tau(P) D(X) exactly, which ball arithmetic cannot decide."""
    config = gaussian(2, 2, seed)
    config["name"] = "two-tokens"
    return config
