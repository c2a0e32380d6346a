"""The quantities of one configuration of a tier-3 batch from their definitions in mpmath, at mp's current precision.

It reads the batch's arrays (binary64, exact in mpmath) and computes nothing with certify; the scores, the softmax and
the norms are oracle.py's.
"""

from __future__ import annotations

import numpy as np
from mpmath import mp, mpf
from oracle import diameter, dobrushin, mat, num, rows_plus, scores, softmax_rows, spectral_norm


def _mat(array):
    return mat(np.asarray(array).tolist())


def _vec(array):
    return [num(x) for x in np.asarray(array).tolist()]


def quantities(batch, c: int, X=None) -> dict:
    """P, D, D_out, D_PX, tau, a, gap = exp(-a D^2), omg = 1 - gap (through expm1), v with V and L with an FFN of
    configuration c (tokens X if given).  P X is taken as P (X - 1 x_m^T) + 1 x_m^T (m the token that row 0 weighs
    most) so that rows agreeing up to exp(-700) keep their difference; the translation changes no distance, but an
    FFN's biases and ReLU see the tokens themselves."""
    X = _mat(batch.X[c] if X is None else X)
    n, d = X.rows, X.cols
    beta = mpf(float(np.broadcast_to(batch.beta, (len(batch),))[c]))
    if batch.A is not None:
        S, A = scores(X, beta, A=_mat(batch.A[c]))
    else:
        biases = {name: _vec(getattr(batch, name)[c]) for name in ("b_Q", "b_K") if getattr(batch, name) is not None}
        S, A = scores(X, beta, W_Q=_mat(batch.W_Q[c]), W_K=_mat(batch.W_K[c]), d_k=batch.d_k, **biases)
    P = softmax_rows(S, batch.mask)
    m = max(range(n), key=lambda j: P[0, j])
    E = X if batch.ffn is not None else X - mp.matrix([[X[m, k] for k in range(d)] for _ in range(n)])
    PX = P * E
    Y = PX if batch.V is None else PX * _mat(batch.V[c]).T
    if batch.residual:
        Y = Y + E
    D, a = diameter(X), spectral_norm(A)
    q = {"P": P, "D": D, "D_PX": diameter(PX), "a": a, "gap": mp.exp(-a * D**2), "omg": -mp.expm1(-a * D**2),
         "tau": dobrushin(P)}
    if batch.V is not None:
        q["v"] = spectral_norm(_mat(batch.V[c]))
    if batch.ffn is not None:
        f = batch.ffn
        W1, W2 = _mat(f.W1[c]), _mat(f.W2[c])
        hidden = rows_plus(Y * W1.T, _vec(f.b1[c])).apply(lambda x: max(x, 0))
        out = rows_plus(hidden * W2.T, _vec(f.b2[c]))
        Y = Y + out if f.residual else out
        q["L"] = spectral_norm(W2) * spectral_norm(W1) + (1 if f.residual else 0)
    q["D_out"] = diameter(Y)
    return q
