"""certify trajectory on thin heads (W_Q, W_K of d x d_k, d_k < d): a is enclosed as `certify check` encloses it,
through the d_k x d_k reduction where W_K^T W_K is positive definite (its witness d_k x d_k, stated and priced
so), through the d x d A where it is not; the checker follows the witness stated and rejects one of the wrong
shape or a reduction of a singular W_K^T W_K."""

from __future__ import annotations

import copy

import certify_checker
import mpmath
import numpy as np
import oracle
import pytest
from flint import ctx
from mpmath import mp
from test_limits_estimates import _least_work

from certify.core import config, spectral
from certify.core.arith import BALL
from certify.core.layers import layer_arrays, query_key_matrix
from certify.core.limits import DEFAULT
from certify.studies import trajectory, trajectory_budget

D, D_K = 12, 3


def thin_head(zero_column: bool = False, n: int = 4, d: int = D, d_k: int = D_K, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    W_K = rng.standard_normal((d, d_k)) / d_k
    if zero_column:
        W_K[:, -1] = 0.0  # W_K^T W_K singular: no d_k x d_k reduction applies
    return {"X": (rng.standard_normal((n, d)) / 4).tolist(), "W_Q": (rng.standard_normal((d, d_k)) / d_k).tolist(),
            "W_K": W_K.tolist(), "d_k": d_k, "beta": "3/2"}


def basis_size(cert: dict, name: str = "A0") -> int:
    basis = cert["witness"][name]["basis"]
    assert all(len(row) == len(basis) for row in basis)  # square
    return len(basis)


def test_a_thin_head_states_its_d_k_x_d_k_witness_and_is_confirmed():
    tr = trajectory.trace(thin_head(), 3)
    assert basis_size(tr.certificate) == D_K
    assert tr.certified and tr.verdict == trajectory.HOLDS
    assert certify_checker.verify(tr.certificate).ok


def test_a_through_the_reduction_agrees_with_the_d_x_d_route_and_mpmath():
    """The a stated agrees with the enclosure through the d x d A (the route before) and contains the norm of
    beta W_Q W_K^T / sqrt(d_k) computed by mpmath at 40 digits."""
    head = thin_head()
    tr = trajectory.trace(head, 2)
    (a,) = tr.a
    case = config.load(head)
    with ctx.workprec(tr.curve_precision):
        A = query_key_matrix(BALL, layer_arrays(BALL, case.layers[0], case.n))
        direct = spectral.enclose(A, spectral.witness_of_ball(A))
    assert a.overlaps(direct) and a.rad() < 1e-12 * a.mid() and direct.rad() < 1e-12 * direct.mid()
    with mp.workdps(40):
        product = oracle.mat(head["W_Q"]) * oracle.mat(head["W_K"]).T * mp.mpf(3) / 2 / mp.sqrt(D_K)
        exact = max(mpmath.svd_r(product, compute_uv=False))
        mid, rad, exponent = (int(v) for v in a.mid_rad_10exp())  # the decimal interval arb prints, outwards
        assert (mid - rad) * mp.mpf(10) ** exponent <= exact <= (mid + rad) * mp.mpf(10) ** exponent, (a, exact)


def test_a_rank_deficient_w_k_takes_the_d_x_d_route():
    tr = trajectory.trace(thin_head(zero_column=True), 2)
    assert basis_size(tr.certificate) == D
    assert tr.certified and certify_checker.verify(tr.certificate).ok


def test_a_certificate_stating_the_d_x_d_witness_of_a_thin_head_is_still_confirmed(monkeypatch):
    """Certificates written before stated the d x d witness of A for every head, thin ones too."""
    monkeypatch.setattr(BALL, "thin_product_norm", staticmethod(lambda *_: None))  # the d x d route alone
    tr = trajectory.trace(thin_head(), 2)
    assert basis_size(tr.certificate) == D and tr.certified
    assert certify_checker.verify(tr.certificate).ok


def _square(size: int, seed: int = 1) -> dict:
    """A nearly orthogonal size x size witness (the Q of a QR), in the certificate's hex floats."""
    q = np.linalg.qr(np.random.default_rng(seed).standard_normal((size, size)))[0]
    return {"basis": [[float(v).hex() for v in row] for row in q], "top": [float(v).hex() for v in q[:, 0]]}


@pytest.mark.parametrize("size", [D_K - 1, D_K + 1, D - 1])
def test_a_witness_of_another_shape_is_rejected(size):
    cert = copy.deepcopy(trajectory.trace(thin_head(), 2).certificate)
    cert["witness"]["A0"] = _square(size)
    confirmation = certify_checker.verify(cert)
    assert not confirmation.ok and not confirmation.refused
    assert "witness of the wrong size" in confirmation.message


def test_a_d_k_x_d_k_witness_for_a_singular_w_k_is_rejected():
    """A rank-deficient W_K's certificate (d x d witness) with a d_k x d_k witness put in: the reduction does not
    apply (W_K^T W_K is singular), and the checker says so rather than enclose anything."""
    reduced = trajectory.trace(thin_head(), 2).certificate["witness"]["A0"]
    cert = copy.deepcopy(trajectory.trace(thin_head(zero_column=True), 2).certificate)
    cert["witness"]["A0"] = reduced
    confirmation = certify_checker.verify(cert)
    assert not confirmation.ok and not confirmation.refused
    assert "not certainly positive definite" in confirmation.message


def _budget(head: dict, layers: int) -> trajectory_budget.Budget:
    case = config.load(head)
    return trajectory_budget.Budget(config.to_json(case), layers, ["global.step", "global.composed", "cubic"], DEFAULT,
                                    trajectory._curve_precision, 53, centred=True, routes=trajectory._routes(case))


def test_a_bert_base_sized_head_is_priced_through_its_reduction():
    """256 tokens of 768 dimensions, d_k = 64: a certificate of every D_t through 6 layers at 53 bits fits the
    default limits (its a through the 64 x 64 reduction; through 3 while every step was priced as a layer with
    its norm, which a step never computes, and its Python by cost()); priced through the 768 x 768 A, as a
    rank-deficient W_K is, it costs the configured layer's d x d norm and X A X^T's scores more, its steps the
    same (each forms W_Q W_K^T whatever the route), at the curves' precision (the checker's estimate alone: no
    run)."""
    from certify_checker import limits as checker_limits

    head, T = thin_head(n=256, d=768, d_k=64), 6
    assert trajectory._routes(config.load(head)) == {"A0": {"basis": {"shape": [64, 64]}}}
    assert _budget(head, T).cap(53) == (53, None)
    rank_deficient = thin_head(zero_column=True, n=256, d=768, d_k=64)
    assert trajectory._routes(config.load(rank_deficient)) == {"A0": {"basis": {"shape": [768, 768]}}}
    thin, dense = (_budget(case, T)._skeleton(53, [53] * (T + 1)) for case in (head, rank_deficient))
    assert _budget(head, T).price(53) == _budget(rank_deficient, T).price(53)
    bits = thin["curve_precision"]  # the d x d norm's arithmetic at it, less the reduction's (and its Cholesky's Python)
    norm = checker_limits.layer_cost(256, 768, 0, 0, bits) - checker_limits.layer_cost(256, 768, 0, 64, bits)
    assert _least_work(dense) - _least_work(thin) == norm > 0
