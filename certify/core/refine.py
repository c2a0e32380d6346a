"""A norm witness refined past binary64, so that ||M||_2's enclosure narrows with the precision.

A binary64 witness (certify.core.spectral) leaves the upper end of the enclosure about d 2^-53 relative
above the norm at every precision (Gershgorin's rows and the drift ||W^T W - I||_F are linear in the
basis's error), so a bound needing the norm closer than that stays undecided whatever the precision.
From REFINE_FROM bits the engine refines the basis (refining(bits)): the Ogita-Aishima iteration for
the symmetric eigenproblem of B = M^T M (quadratically convergent), on the midpoints at the given bits,
with R = I - X^T X, S = X^T B X, lambda_i = s_ii / (1 - r_ii),
    E_ij = (s_ij + lambda_j r_ij) / (lambda_j - lambda_i)   where |lambda_j - lambda_i| > delta,
    E_ij = r_ij / 2                                          elsewhere (the diagonal, and a cluster),
    delta = 2 (||S - diag(lambda)||_F + ||B||_F ||R||_F),  X <- X + X E,
with delta raised to sqrt(delta ||B||_F) (_apart: a pair split barely past delta took a correction that cost more
orthogonality than it gained).
The cluster rule keeps every correction below 1/2 (repeated or rank-deficient singular values only
orthogonalise their block), and the top cluster, whose Gershgorin rows bound the norm, is rotated onto the
eigenvectors of its block (_rotate_top_cluster); the iterate whose enclosure would be narrowest is kept, and none where none
improves on the start.  The refined entries are fixed-point binary numbers of `bits` bits, exact in arb
and stated exactly in the certificate, whose checker encloses the norm by the same rules: a witness
needs no rigour, a bad one only loosens the enclosure.

REFINE_FROM is 2 x 53 bits: at 53 bits the binary64 witness is as accurate as the arithmetic, so the
common path costs nothing more; from twice that, the witness's 2^-50 would be the widest part.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses

import numpy as np
from flint import arb, arb_mat

from certify.core import spectral
from certify.core.precision import (REFINE_FROM, SPLIT_BITS,  # there, for certify.core.limits to price without numpy
                                    working)

MAX_ITERATIONS = 16  # from binary64 to 65536 bits takes some 11 doublings; a stalled iteration stops sooner
STALLS = 2

_BITS: contextvars.ContextVar[int] = contextvars.ContextVar("refine_bits", default=0)


@contextlib.contextmanager
def refining(bits: int):
    """Refine the witnesses of the norms enclosed inside to `bits` bits (none below REFINE_FROM)."""
    token = _BITS.set(bits)
    try:
        yield
    finally:
        _BITS.reset(token)


def refined(M: arb_mat, w: spectral.NormWitness) -> spectral.NormWitness:
    """The witness of M (an arb_mat; of M^T for w.transposed) refined to the bits of `refining`, or w itself where
    no refinement is asked, w is refined that far already, or the iteration improves nothing."""
    bits = _BITS.get()
    if bits < REFINE_FROM or bits <= w.bits:
        return w
    with working(bits + SPLIT_BITS):
        A = (M.transpose() if w.transposed else M).mid()
        start = w.refined.basis if w.refined else spectral.exact_mat(w.basis)
        found = _iterate(A.transpose() * A, start, bits)
    if found is None:
        return w
    return dataclasses.replace(w, refined=spectral.Refined.of(found[0], found[1], bits))


def _excess(R: arb_mat, S: list) -> arb:
    """The relative excess of the enclosure's upper end the basis gives, squared: Gershgorin's largest row of S over
    its largest diagonal entry, less 1, plus the drift ||R||_F (midpoints: an estimate, not a bound)."""
    d = len(S)
    largest = max((S[i][i] for i in range(d)), key=arb.mid)
    if not largest > 0:
        return arb("inf")
    rows = max((sum(map(abs, S[i]), arb(0)) for i in range(d)), key=arb.mid)
    return (rows / largest - 1).mid() + spectral.frobenius(R).mid()


def _iterate(B: arb_mat, X: arb_mat, bits: int) -> tuple[arb_mat, int] | None:
    """(the refined basis, the column of its top vector) from the start basis X, or None when no iterate improves
    on it: Ogita-Aishima steps until the predicted excess (_excess) reaches the rounding floor or stalls, at most
    MAX_ITERATIONS; the iterate of the least excess is kept."""
    d = B.nrows()
    goal = arb(2) ** (2 * d.bit_length() - bits)  # the rounding floor of the excess: no step goes below it
    norm_B = spectral.frobenius(B).mid()
    start = best = previous = None
    stalled = 0
    for _ in range(MAX_ITERATIONS + 1):
        R = (spectral.identity(d) - X.transpose() * X).mid()
        S = (X.transpose() * (B * X)).mid().tolist()
        excess = _excess(R, S)
        # a large correction (a pair split late) first costs orthogonality, which the next steps restore quadratically;
        # two steps in a row that do not halve the excess are a stall (a cluster not split, or the rounding floor)
        stalled = 0 if previous is None or excess < previous / 2 else stalled + 1
        if stalled == STALLS:
            break
        previous = excess
        if best is None or excess < best[0]:
            best = (excess, X, max(range(d), key=lambda i: S[i][i].mid()))
        start = excess if start is None else start
        if excess < goal:
            break
        lam, delta = _spectrum(R, S, norm_B)
        apart = _apart(delta, norm_B)
        X = _rotate_top_cluster((X + X * _correction(R, S, lam, apart)).mid(), S, lam, apart, bits)
    return (best[1], best[2]) if best[0] < start else None


def _spectrum(R: arb_mat, S: list, norm_B: arb) -> tuple[list, arb]:
    """Ogita-Aishima's lambda and delta (module docstring)."""
    d = len(S)
    lam = [S[i][i] / (1 - R[i, i]) for i in range(d)]
    off = spectral.frobenius(arb_mat([[S[i][j] - (lam[i] if i == j else 0) for j in range(d)] for i in range(d)]))
    return lam, 2 * (off + norm_B * spectral.frobenius(R))


def _apart(delta: arb, norm_B: arb) -> arb:
    """The gap beyond which two lambdas are split: Ogita-Aishima's delta, raised to sqrt(delta ||B||_F) (the larger
    while delta <= ||B||_F).  A pair split at a gap g takes a correction of about delta / g, past delta only
    but below sqrt(delta ||B||_F) one above sqrt(delta / ||B||_F) relative, which costs orthogonality: binary64's
    rank-2 4 x 4 matrix of the tests (singular values 3e-16 and 9e-17 beside 2.7 and 1.5: lambdas 7e-34 and 5e-34)
    split at delta 1e-36 went from an excess of 1e-61 to 0.08, twice, and ended 1e-64 wide at 256 bits.  Held
    together a pair is only orthogonalised, all the norm asks of a pair below the top, and a pair at the top is
    rotated onto its block's eigenvectors (_rotate_top_cluster)."""
    return delta.max((delta * norm_B).sqrt())


def _correction(R: arb_mat, S: list, lam: list, delta: arb) -> arb_mat:
    """Ogita-Aishima's E (module docstring), a pair within delta of each other held together (_apart)."""
    d, R = len(S), R.tolist()
    entries = []
    for i in range(d):
        for j in range(d):
            gap = lam[j] - lam[i]
            entries.append((S[i][j] + lam[j] * R[i][j]) / gap if abs(gap) > delta else R[i][j] / 2)
    return arb_mat(d, d, entries)


# The largest cluster at the top that is rotated: a cluster's block costs k^3 per Newton-Schulz step, and a larger one
# (a multiple of an orthogonal matrix) is an eigenspace whatever its basis.
MAX_CLUSTER = 32


def _rotate_top_cluster(X: arb_mat, S: list, lam: list, delta: arb, bits: int) -> arb_mat:
    """X with the columns of the top cluster (lambda within delta of the largest) rotated by the eigenvectors of
    their block of S: the iteration only orthogonalises a cluster, and one whose singular values differ by binary64's
    rounding kept its Gershgorin row some 1e-16 above its largest (the eigenvectors of the block, shifted and scaled,
    from binary64, then orthonormalised at `bits` by Newton-Schulz steps; a repeated value takes any basis)."""
    top = max(lam, key=arb.mid)
    cluster = [i for i, x in enumerate(lam) if not abs(x - top) > delta]
    if not 2 <= len(cluster) <= MAX_CLUSTER:
        return X
    k = len(cluster)
    block = [[S[i][j] - (top if i == j else 0) for j in cluster] for i in cluster]
    scale = max((abs(x) for row in block for x in row), key=arb.mid)
    if not scale > 0:
        return X
    Q = np.linalg.eigh(np.array([[float(x / scale) for x in row] for row in block]))[1]
    J = arb_mat(Q.tolist())
    for _ in range(max(1, bits // 53).bit_length() + 1):  # each step squares the drift from orthogonality
        J = (J * (3 * spectral.identity(k) - J.transpose() * J) / 2).mid()
    columns = X.transpose().tolist()
    block_columns = (arb_mat([columns[i] for i in cluster]).transpose() * J).transpose().tolist()
    for i, column in zip(cluster, block_columns):
        columns[i] = column
    return arb_mat(columns).transpose()
