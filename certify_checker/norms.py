"""The checker's own norm bounds for the thesis's claims: powers of V and MLP Lipschitz constants.

M = max_{0 <= k <= T} ||V^k||_2: V^k by exact-input arb products, each norm confirmed from its
witness (forward.spectral_norm); k = 0 is the identity, norm 1.
L = ||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), Lip(ReLU) = 1 and Lip(GELU) = GELU'(sqrt 2):
GELU'' = phi (2 - x^2) vanishes only at +-sqrt(2), GELU' runs 0 -> 1 - G -> G -> 1, so
sup |GELU'| = G = Phi(sqrt 2) + sqrt(2) phi(sqrt 2).
"""

from __future__ import annotations

from flint import arb

from certify_checker import forward


def power_bound(V, horizon: int, witness: dict, key: str) -> arb:
    bound, power = arb(1), V
    for k in range(1, horizon + 1):
        bound = bound.max(forward.spectral_norm(power, witness[f"{key}^{k}"]))
        power = forward.product(power, V)
    return bound


def gelu_lipschitz() -> arb:
    s = arb(2).sqrt()
    Phi = (1 + (s / arb(2).sqrt()).erf()) / 2  # Phi(x) = (1 + erf(x / sqrt 2)) / 2 at x = sqrt 2
    phi = (-(s * s) / 2).exp() / (2 * arb.pi()).sqrt()
    return Phi + s * phi


def ffn_lipschitz(spec: dict, witness: dict, t: int) -> arb:
    W1 = forward.spectral_norm(forward.matrix(spec["W1"]), witness[f"W1_{t}"])
    W2 = forward.spectral_norm(forward.matrix(spec["W2"]), witness[f"W2_{t}"])
    if spec["activation"] not in ("relu", "gelu"):
        raise ValueError(f"unknown activation {spec['activation']!r}")
    bound = W2 * W1 * (gelu_lipschitz() if spec["activation"] == "gelu" else 1)
    return bound + 1 if spec.get("residual", False) else bound
