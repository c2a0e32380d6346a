"""The checker's own norm bounds: powers of V, MLP Lipschitz constants, thin products L R^T.

M = max_{0 <= k <= T} ||V^k||_2: V^k by exact-input arb products, each norm confirmed from its
witness (forward.spectral_norm); k = 0 is the identity, norm 1.
L = ||W2||_2 Lip(s) ||W1||_2 (+ 1 for a residual FFN), Lip(ReLU) = 1 and Lip(GELU) = GELU'(sqrt 2):
GELU'' = phi (2 - x^2) vanishes only at +-sqrt(2), GELU' runs 0 -> 1 - G -> G -> 1, so
sup |GELU'| = G = Phi(sqrt 2) + sqrt(2) phi(sqrt 2).
||L R^T||_2 for L, R of shape d x k (k < d): with R^T R = C^T C (Cholesky, C upper triangular and
invertible when every pivot is certainly > 0), Q = R C^{-1} has orthonormal columns and
L R^T = (L C^T) Q^T, so ||L R^T||_2^2 = ||(L C^T)^T (L C^T)||_2 = ||C (L^T L) C^T||_2, a k x k norm;
a = |beta| ||W_Q W_K^T||_2 / sqrt(d_k) takes it with a k x k witness.
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
            raise ValueError("R^T R (W_K^T W_K) is not certainly positive definite: a k x k witness does not apply")
        C[j, j] = pivot.sqrt()
        for col in range(j + 1, G.nrows()):
            C[j, col] = (G[j, col] - sum((C[i, j] * C[i, col] for i in range(j)), arb(0))) / C[j, j]
    return C


def certainly_positive_definite(G) -> bool:
    """Every symmetric matrix in the ball G (rows or an arb_mat) is positive definite: its interval
    Cholesky factorisation succeeds."""
    try:
        cholesky_upper(G if isinstance(G, arb_mat) else arb_mat(G))
    except ValueError:
        return False
    return True


def query_key_norm(layer: dict, witness: dict, A=None) -> arb:
    """a = ||A||_2: by the k x k reduction (above) for a k x k witness, k < d; else of A (an arb_mat,
    or forward.query_key_matrix)."""
    if "A" in layer or len(witness["basis"]) == len(layer["W_Q"]):
        return forward.spectral_norm(A if A is not None else forward.query_key_matrix(layer), witness)
    thin = thin_product_norm(forward.matrix_mat(layer["W_Q"]), forward.matrix_mat(layer["W_K"]), witness)
    return thin * abs(ball(layer.get("beta", "1"))) / arb(int(layer["d_k"])).sqrt()


def power_norms(V, horizon: int, witness: dict, key: str) -> list[arb]:
    """||V^k||_2 for k = 1..horizon, each from its witness {key}^k."""
    norms, power = [], V
    for k in range(1, horizon + 1):
        norms.append(forward.spectral_norm(power, witness[f"{key}^{k}"]))
        power = forward.product(power, V)
    return norms


def power_bound(norms: list[arb]) -> arb:
    """M = max_{0 <= k <= T} ||V^k||_2 from power_norms (k = 0 is the identity, of norm 1)."""
    bound = arb(1)
    for norm in norms:
        bound = bound.max(norm)
    return bound


def thin_product_norm(L, R, witness: dict) -> arb:
    """||L R^T||_2 (L, R rows or arb_mats) through the k x k matrix C (L^T L) C^T (module docstring);
    the witness is that of the k x k matrix.  A singular R^T R is malformed for this route
    (ValueError): the d x d one must be used."""
    Lm, Rm = (M if isinstance(M, arb_mat) else arb_mat(M) for M in (L, R))
    C = cholesky_upper(Rm.transpose() * Rm)
    square = forward.spectral_norm(C * (Lm.transpose() * Lm) * C.transpose(), witness)
    return square.nonnegative_part().sqrt()


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
