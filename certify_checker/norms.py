"""The checker's own norm bounds: powers of V, MLP Lipschitz constants, thin products L R^T.

M = max_{0 <= k <= T} ||V^k||_2: V^k by exact-input arb products, each norm confirmed from its
witness (forward.spectral_norm); k = 0 is the identity, norm 1.
L = ||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), Lip(ReLU) = 1 and Lip(GELU) = GELU'(sqrt 2):
GELU'' = phi (2 - x^2) vanishes only at +-sqrt(2), GELU' runs 0 -> 1 - G -> G -> 1, so
sup |GELU'| = G = Phi(sqrt 2) + sqrt(2) phi(sqrt 2).
||L R^T||_2 for L, R of shape d x k: with R^T R = C^T C (Cholesky, C upper triangular and
invertible when every pivot is certainly > 0), Q = R C^{-1} has orthonormal columns and
L R^T = (L C^T) Q^T, so ||L R^T||_2^2 = ||(L C^T)^T (L C^T)||_2 = ||C (L^T L) C^T||_2, a k x k norm.
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


def cholesky_upper(G: list) -> list | None:
    """C upper triangular with G = C^T C for every symmetric matrix in the ball G, or None when a
    pivot is not certainly positive (then G may not be positive definite)."""
    k = len(G)
    C = [[arb(0)] * k for _ in range(k)]
    for j in range(k):
        pivot = G[j][j] - sum((C[i][j] * C[i][j] for i in range(j)), arb(0))
        if not pivot > 0:
            return None
        C[j][j] = pivot.sqrt()
        for col in range(j + 1, k):
            C[j][col] = (G[j][col] - sum((C[i][j] * C[i][col] for i in range(j)), arb(0))) / C[j][j]
    return C


def thin_product_norm(L: list, R: list, witness: dict) -> arb:
    """||L R^T||_2 through the k x k matrix C (L^T L) C^T (module docstring); the witness is that of
    the k x k matrix.  A singular R^T R is malformed for this route: the d x d one must be used."""
    C = cholesky_upper(forward.product(forward.transpose(R), R))
    if C is None:
        raise ValueError("R^T R is not certainly positive definite: use the direct route")
    inner = forward.product(forward.product(C, forward.product(forward.transpose(L), L)), forward.transpose(C))
    return forward.spectral_norm(inner, witness).nonnegative_part().sqrt()


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
