"""Checker for "centred-rank" certificates: a token configuration X (n x d, n >= 2) is far from
rank collapse, its centred rows X_c = X - 1 xbar^T having the largest rank r = min(n - 1, d).

The rows of X_c sum to 0, so rank X_c <= r.  For n - 1 <= d, K = X_c X_c^T has K 1 = 0 and on
1^perp the eigenvalues sigma_i(X_c)^2; K + c 1 1^T (any exact c > 0: one of K's scale, trace(K) / n,
keeps the Cholesky's pivots alike where c = 1 took 500 bits for tokens of size 10^74 or 10^-74) then
has the eigenvalue n c on 1 and the same ones on 1^perp, so it is positive definite exactly when
rank X_c = n - 1.  For n - 1 > d, X_c^T X_c (d x d) is positive definite exactly when rank X_c = d.
Certified means: an interval Cholesky of that matrix passes with every pivot certainly positive.  No
witness is needed.
"""

from __future__ import annotations

from flint import arb

from certify_checker import forward
from certify_checker.counterexample import Evaluation, confirm, retried, text_price
from certify_checker.head import operations, products
from certify_checker.limits import stated_shape
from certify_checker.norms import certainly_positive_definite
from certify_checker.schema import expanded, rectangular

KIND = "centred-rank"


def evaluate(inputs: dict, witness: dict) -> Evaluation:
    if witness:  # a witness nothing reads is a field nobody checks
        raise ValueError("this kind of certificate states no witness")
    inputs = expanded(inputs)  # tokens of more than 64 numbers as a binary64 block
    if not (isinstance(inputs, dict) and set(inputs) == {"X"} and rectangular(inputs["X"], None, None)
            and len(inputs["X"]) >= 2):
        raise ValueError("the inputs must be tokens X, n x d with n >= 2")
    X = forward.matrix(inputs["X"])
    n, d = len(X), len(X[0])
    mean = [sum(column, arb(0)) / n for column in zip(*X)]
    X_c = [[x - m for x, m in zip(row, mean)] for row in X]
    r = min(n - 1, d)
    if n - 1 <= d:
        K = forward.product(X_c, forward.transpose(X_c))
        c = (sum((K[i][i] for i in range(n)), arb(0)) / n).mid()  # exact, a ball of radius 0
        M = [[k + (c if c > 0 else 1) for k in row] for row in K]
    else:
        M = forward.product(forward.transpose(X_c), X_c)
    found = Evaluation(claims=[f"the centred tokens X - 1 xbar^T of inputs.X have rank {r} = min(n - 1, d)"])
    found.require(certainly_positive_definite(M), "the interval Cholesky of the centred Gram matrix fails")
    return found


def work(cert: dict) -> int:
    """The work of the centring and the Gram matrix (arb_mat products) and of the interval Cholesky (r^3 / 6
    ball operations from Python, 0.31 us each at 53 bits), at the stated precision and the finer one
    (counterexample.retried), in the units of certify_checker.head's estimate (measured, one evaluation: n = d =
    400 at 53 bits 3.5 s, estimate 3.8 s; n = d = 64 at 4096 bits 0.47 s, estimate 0.61 s; n = 142, d = 384 at
    64 bits, a long text in `certify model`, 0.23 s, estimate 0.25 s); and reading X's texts once an evaluation
    (counterexample.text_price).  0 when malformed."""
    try:
        (n, d), bits = stated_shape(cert["inputs"]["X"]), cert["precision"]
        if type(bits) is not int or not n:
            return 0
        small, large = sorted((n, d))
        return retried(lambda bits: products(small * small * large, bits)
                       + operations(3 * n * d + 2 * small * small + small ** 3 // 6, bits), bits) + text_price(cert, 1)
    except (TypeError, KeyError, IndexError, AttributeError):
        return 0


def verify(cert: dict) -> tuple[bool, str]:
    return confirm(cert, KIND, evaluate, {"X"})
