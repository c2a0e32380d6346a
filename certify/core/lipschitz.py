"""Certified Lipschitz constants (2-norm) of token-wise feed-forward networks.

An MLP f(x) = W2 s(W1 x + b1) + b2 is a composition, so Lip(f) <= ||W2||_2 Lip(s) ||W1||_2, and a
residual one x + f(x) has constant 1 + Lip(f) (triangle inequality); docs/claims.md, ffn.lipschitz.

Lip(ReLU) = 1: |max(u, 0) - max(w, 0)| <= |u - w|.

Lip(GELU) = sup_x |GELU'(x)| with GELU(x) = x Phi(x), GELU' = Phi + x phi, GELU'' = phi (2 - x^2).
GELU'' vanishes exactly at x = +-sqrt(2) (phi > 0), so GELU' falls on (-oo, -sqrt 2) from its limit
0 to 1 - G, rises on (-sqrt 2, sqrt 2) to G = GELU'(sqrt 2), and falls on (sqrt 2, oo) to its limit 1
(GELU'(-x) = 1 - GELU'(x)).  As G > 1, sup |GELU'| = max(G, G - 1, 1) = G, with
    G = Phi(sqrt 2) + sqrt(2) phi(sqrt 2) = (1 + erf(1)) / 2 + 1 / (e sqrt(pi))  ~ 1.1289.
The maximiser is the exact root sqrt(2), so no root finding is needed: arb encloses G directly.
proofs/ffn_lipschitz.py checks every step (derivatives symbolically, |GELU'| <= G by branch and bound).
"""

from __future__ import annotations

from certify.errors import BadInput


def gelu_constant(ar):
    """G = sup |GELU'| = (1 + erf(1)) / 2 + 1 / (e sqrt(pi)): a float64 value in the screen, else a ball."""
    return (1 + ar.erf(ar.number(1))) / 2 + 1 / (ar.e() * ar.sqrt_nonneg(ar.pi()))


def activation_constant(ar, activation: str):
    """Lip(s) of the activation s (the 2-norm of a token-wise map is at most its scalar constant)."""
    if activation == "relu":
        return ar.number(1)
    if activation == "gelu":
        return gelu_constant(ar)
    raise BadInput(f"no Lipschitz constant known for the activation {activation!r}")


def mlp_bound(ar, norm_W1, norm_W2, activation: str, residual: bool):
    """||W2||_2 Lip(s) ||W1||_2, plus 1 for a residual x + f(x)."""
    bound = norm_W2 * activation_constant(ar, activation) * norm_W1
    return bound + 1 if residual else bound
