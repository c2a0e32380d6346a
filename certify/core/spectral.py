"""A rigorous, tight enclosure of the spectral norm ||A||_2.

float64 finds, ball arithmetic confirms (the witness pattern of the trust boundary):
- witness: the float64 SVD A ~ U S W^T gives an (almost) orthogonal W and the top right
  singular vector w.
- lower bound: ||A w|| / ||w|| <= ||A||_2 for any nonzero vector w (evaluated in arb).
- upper bound: with E = (A W)^T (A W) and G = W^T W - I, every unit x = W y has
  ||y||^2 <= 1 / (1 - ||G||_2), so ||A x||^2 = y^T E y <= lambda_max(E) / (1 - ||G||_F), and
  lambda_max(E) <= max_i sum_j |E_ij| (Gershgorin; E is symmetric, E_ii >= 0).  E is nearly
  diagonal, so the bound is tight to about d * 1e-16 relative, unlike the Frobenius norm.
- the smaller side: ||A||_2 = ||A^T||_2, and the basis is square on A's columns; for a wide A (fewer rows
  than columns: an FFN's W2, d x hidden) the witness is of A^T (`transposed`), its basis rows x rows, so
  the norm costs 2 cols rows^2 + rows^3, not 2 rows cols^2 + cols^3 (and the certificate states rows^2
  numbers, not cols^2).  A square or tall A keeps the witness of A itself.
- past binary64: the basis may be refined at a higher precision (certify.core.refine), its entries then exact
  fixed-point binary numbers (Refined), which the same rules use: the enclosure narrows with the precision.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from flint import arb, arb_mat

from certify.core.precision import working


GUARD_BITS = 4  # integer bits of a refined entry's fixed point (|x| <= 1 + tiny)


@dataclass(frozen=True)
class Refined:
    """A basis refined past binary64 at `bits` bits (certify.core.refine): entries mantissas[i][j] / 2^fraction_bits,
    exact; the top vector is its column `top`."""
    bits: int
    mantissas: tuple  # rows of integers
    fraction_bits: int
    top: int
    basis: arb_mat = field(compare=False, repr=False)  # the exact entries, made once
    top_vector: arb_mat = field(compare=False, repr=False)  # column `top` of basis

    @classmethod
    def of(cls, X: arb_mat, top: int, bits: int) -> "Refined":
        """X's midpoints rounded to multiples of 2^-fraction_bits, bits - GUARD_BITS of them (fixed point: the basis's
        error that matters is absolute; its entries lie in [-1, 1], so each mantissa fits in `bits`)."""
        fraction_bits = bits - GUARD_BITS
        mantissas = tuple(tuple(_fixed(x, fraction_bits) for x in row) for row in X.tolist())
        with working(fraction_bits + 64):  # every mantissa exact, and so its scaling by a power of 2
            scale = arb(2) ** -fraction_bits
            basis = arb_mat([[arb(m) * scale for m in row] for row in mantissas])
        return cls(bits, mantissas, fraction_bits, top, basis, arb_mat([[row[top]] for row in basis.tolist()]))


def _fixed(x: arb, fraction_bits: int) -> int:
    """The midpoint of x times 2^fraction_bits, rounded to an integer."""
    mantissa, exponent = (int(v) for v in x.mid().man_exp())
    shift = exponent + fraction_bits
    return mantissa << shift if shift >= 0 else (mantissa + (1 << (-shift - 1))) >> -shift


@dataclass(frozen=True)
class NormWitness:
    """A float64 SVD's singular basis and top singular vector, from which ||A||_2 is enclosed rigorously."""
    basis: np.ndarray  # W: float64, nearly orthogonal, columns the right singular vectors
    top: np.ndarray  # w: float64 top right singular vector
    estimate: float = float("nan")  # float64 ||A||_2 from the same SVD (screening only)
    transposed: bool = False  # the witness of A^T (basis and top on A's rows): stated for a wide A only
    refined: Refined | None = None  # the basis refined past binary64, which enclose and the certificate then use

    @property
    def bits(self) -> int:
        """The bits of the basis's entries: 53, or the refined fixed point's."""
        return self.refined.bits if self.refined else 53


def witness(A_float: np.ndarray) -> NormWitness:
    """The singular basis of one float64 SVD, and the largest singular value as the screen's estimate;
    LinAlgError (a ValueError: the screen then stands aside) for a matrix with an entry that is not
    finite, which LAPACK's SVD may never return from (an inf beside 1e300 loops forever)."""
    if not np.isfinite(A_float).all():
        raise np.linalg.LinAlgError("a float64 matrix with an infinite or nan entry has no SVD witness")
    # the thin SVD: of a tall or square A its right singular basis is square, of a wide A its left one, the right
    # singular basis of A^T (a 384 x 1024 FFN weight's full 1024 x 1024 right basis was most of its SVD and norm)
    u, singular, wt = np.linalg.svd(A_float, full_matrices=False)
    if A_float.shape[0] < A_float.shape[1]:
        return NormWitness(basis=np.ascontiguousarray(u), top=u[:, 0].copy(), estimate=float(singular[0]),
                           transposed=True)
    return NormWitness(basis=np.ascontiguousarray(wt.T), top=wt[0].copy(), estimate=float(singular[0]))


def midpoints(A_ball: np.ndarray, within: int = 1000, floats: np.ndarray | None = None) -> np.ndarray:
    """The midpoints of a ball matrix (object array of arb) in binary64, rounded to nearest, so that a
    binary64 entry gives itself back: the matrix a float64 evaluation of the inputs holds (floats: that matrix,
    where the caller has it, the balls being exactly its values; not converted again).  Where they
    are not finite in binary64 or the largest lies outside [2^-within, 2^within] (an exact 1e400,
    all entries underflowing), they are scaled exactly by one power of two that brings the largest
    into [1/2, 1).  Singular vectors do not change with scale; entries far below the largest may
    round to 0, which only loosens the bound a witness gives."""
    floats = np.asarray(A_ball, dtype=object).astype(np.float64) if floats is None else floats
    largest = float(np.abs(floats).max(initial=0.0))  # nan or inf where a midpoint is beyond binary64
    if math.isfinite(largest) and 2.0 ** -within <= largest <= 2.0 ** within:
        return floats
    if largest == 0 and all(x.mid() == 0 for x in np.ravel(A_ball)):
        return floats  # the zero matrix: nothing to scale
    mids = [[arb(x.mid()) for x in row] for row in A_ball]
    tops = [int(exponent) + int(mantissa).bit_length() for row in mids for x in row if x != 0
            for mantissa, exponent in [x.man_exp()]]  # |x| < 2^top
    scale = arb(2) ** (-max(tops, default=0))
    return np.array([[float(x * scale) for x in row] for row in mids])


def witness_of_ball(A_ball: np.ndarray, floats: np.ndarray | None = None) -> NormWitness:
    """The witness of a ball matrix from the SVD of its binary64 midpoints (midpoints: the float64
    matrix itself for binary64 entries, scaled into range where they lie beyond binary64's; floats, where the
    caller has them, the binary64 values the balls are exactly)."""
    return witness(midpoints(A_ball, floats=floats))


@functools.lru_cache(maxsize=64)
def identity(d: int) -> arb_mat:
    """The d x d identity (exact at every precision; shared, never written to)."""
    identity = arb_mat(d, d)
    for i in range(d):
        identity[i, i] = 1
    return identity


def exact_mat(values: np.ndarray) -> arb_mat:
    """A 2-d float64 array as an arb_mat of the same, exact, entries."""
    return arb_mat(*values.shape, values.ravel().tolist())


def _squared_norm(column: arb_mat) -> arb:
    """||v||^2 of a column as the arb_mat product v^T v."""
    return (column.transpose() * column)[0, 0]


def frobenius(M: arb_mat) -> arb:
    """||M||_F: the square root of the dot product of M's entries with themselves, one 1 x d^2 by d^2 x 1
    arb_mat product (trace(M^T M) took a d x d product, d^3 work for d^2 numbers: 5 of the 13 s of the
    norm of a 384 x 1024 FFN weight)."""
    entries = M.entries()
    return _squared_norm(arb_mat(len(entries), 1, entries)).nonnegative_part().sqrt()  # a square's ball may dip below 0


def enclose(A_ball, w: NormWitness) -> arb:
    """A ball containing ||A||_2 for every A in the ball matrix A_ball (an arb_mat or an object
    array of arb; current precision); a witness of A^T (w.transposed) encloses ||A^T||_2, the same number."""
    A = A_ball if isinstance(A_ball, arb_mat) else arb_mat(A_ball.tolist())
    if w.transposed:
        A = A.transpose()
    d = A.ncols()
    if w.refined:
        basis, top = w.refined.basis, w.refined.top_vector
    else:
        basis, top = exact_mat(w.basis), exact_mat(w.top.reshape(-1, 1))
    top_sq = _squared_norm(top)
    image_sq = _squared_norm(A * top)
    lower = arb(0) if not top_sq > 0 else (image_sq.nonnegative_part() / top_sq).sqrt()

    rotated = A * basis
    E = (rotated.transpose() * rotated).entries()  # row by row (entries() makes no nested lists)
    G = basis.transpose() * basis - identity(d)
    drift = frobenius(G)
    if not drift < 1:
        return lower.union(arb("inf"))
    # Gershgorin's disc of row i reaches E_ii + sum_{j != i} |E_ij| <= sum_j |E_ij| (|E_ii| = E_ii >= 0 exactly)
    gershgorin = functools.reduce(arb.max, [sum(map(abs, E[i * d:(i + 1) * d]), arb(0)) for i in range(d)])
    upper = (gershgorin.nonnegative_part() / (1 - drift)).sqrt()
    return lower.lower().union(upper.upper())
