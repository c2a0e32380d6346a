"""Example stacks for Wu et al.'s collapse theorems (claims mask.collapse and ln.collapse).

Deterministic, with short dyadic numbers like certify.suite.cases; masks by name (certify.core.masks).
"""

from __future__ import annotations

import numpy as np

from certify.suite.cases import dyadic
from certify.core.masks import named_mask
from certify.core.graphs import analyse

# An orthogonal matrix with exact rational entries: rotations by the Pythagorean angles (3, 4, 5) and (5, 12, 13).
ORTHOGONAL_4 = [["3/5", "-4/5", "0", "0"], ["4/5", "3/5", "0", "0"],
                ["0", "0", "5/13", "12/13"], ["0", "0", "-12/13", "5/13"]]


def radius(mask: str, n: int) -> int:
    """Wu et al.'s radius r of the named mask on n tokens (certify.core.graphs.analyse); None when the mask's
    graph has no centre."""
    return analyse(named_mask(mask, n)).radius


def masked_stack(mask="causal", n=6, d=3, depth=None, seed=8, scale=0.4):
    """Masked pure attention sharing one mask (Theorem 1); by default r + 2 layers: three windows of r."""
    depth = depth or radius(mask, n) + 2
    rng = np.random.default_rng(seed)
    return {"name": f"{mask}-stack-{depth}-n{n}-d{d}", "X": dyadic(rng.normal(size=(n, d))),
            "layers": [{"A": dyadic(scale * rng.normal(size=(d, d))), "mask": mask} for _ in range(depth)]}


def layernorm_stack(mask="sliding", n=4, depth=None, seed=9, positive=False, scale=0.5):
    """Post-LN (x / ||x||) layers with an orthogonal W_V and one mask (Theorem 2), d = 4; by default
    2r + 2 layers (two windows of 2r from layer 1).  Gaussian tokens are full rank when n <= 4;
    positive=True gives tokens with positive entries, so every initial cosine is positive."""
    d = 4
    depth = depth or 2 * radius(mask, n) + 2
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return {"name": f"ln-{mask}-{depth}-n{n}" + ("-positive" if positive else ""),
            "X": dyadic(np.abs(X) if positive else X),
            "layers": [{"A": dyadic(scale * rng.normal(size=(d, d))), "V": [row[:] for row in ORTHOGONAL_4], "mask": mask,
                        "layernorm": "post"} for _ in range(depth)]}
