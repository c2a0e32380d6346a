"""The checker's own norm bounds for the thesis's claims: powers of V and MLP Lipschitz constants.

M = max_{0 <= k <= T} ||V^k||_2: V^k by exact-input arb products, each norm confirmed from its
witness (forward.spectral_norm); k = 0 is the identity, norm 1.
L = ||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), Lip(ReLU) = 1 and Lip(GELU) = GELU'(sqrt 2):
GELU'' = phi (2 - x^2) vanishes only at +-sqrt(2), GELU' runs 0 -> 1 - G -> G -> 1, so
sup |GELU'| = G = Phi(sqrt 2) + sqrt(2) phi(sqrt 2).
a = |beta| ||W_Q W_K^T||_2 / sqrt(d_k), W_Q, W_K d x k (k < d), k x k witness: W_K^T W_K = C^T C (Cholesky,
pivots certainly > 0) makes W_K C^{-1} orthonormal, so ||W_Q W_K^T||_2^2 = ||W_Q C^T||_2^2 = ||C W_Q^T W_Q C^T||_2.
"""

from __future__ import annotations

from flint import arb, arb_mat

from certify_checker import forward
from certify_checker.exact import ball


def cholesky_upper(G: arb_mat) -> arb_mat:
    """C upper triangular with G = C^T C enclosed; ValueError when a pivot is not certainly > 0."""
    C = arb_mat(G.nrows(), G.nrows())
    for j in range(G.nrows()):
        pivot = G[j, j] - sum((C[i, j] * C[i, j] for i in range(j)), arb(0))
        if not pivot > 0:
            raise ValueError("W_K^T W_K is not certainly positive definite: a d_k x d_k witness does not apply")
        C[j, j] = pivot.sqrt()
        for col in range(j + 1, G.nrows()):
            C[j, col] = (G[j, col] - sum((C[i, j] * C[i, col] for i in range(j)), arb(0))) / C[j, j]
    return C


def query_key_norm(layer: dict, witness: dict, A=None) -> arb:
    """a = ||A||_2: by the k x k reduction (above) for a k x k witness, k < d; else of A (or forward.query_key)."""
    if "A" in layer or len(witness["basis"]) == len(layer["W_Q"]):
        return forward.spectral_norm(A or forward.query_key(layer), witness)
    Q, K = arb_mat(forward.matrix(layer["W_Q"])), arb_mat(forward.matrix(layer["W_K"]))
    C = cholesky_upper(K.transpose() * K)
    square = forward.spectral_norm((C * (Q.transpose() * Q) * C.transpose()).tolist(), witness)
    return square.nonnegative_part().sqrt() * abs(ball(layer.get("beta", "1"))) / arb(int(layer["d_k"])).sqrt()


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
