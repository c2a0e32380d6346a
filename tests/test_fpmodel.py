"""The floating-point model of the rigorous float64 tier: its probes pass here and catch violations."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from certify.core.arith import fpmodel, rounding
from certify.core.arith.midrad64 import MidRad64
from certify.search import tier3


def test_probes_pass_on_this_machine():
    assert fpmodel.tier3_usable() == (True, "")
    for probe in fpmodel.PROBES:
        assert probe() is None, probe.__name__


def test_blas_probe_catches_float32_accumulation_and_wrong_results():
    def float32(a, b):
        with np.errstate(all="ignore"):
            return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float64)
    assert "BLAS dot product" in fpmodel.probe_blas(float32)
    off_by_one = lambda a, b: np.matmul(a, b) + 1e-9
    assert fpmodel.probe_blas(off_by_one) is not None


def test_extended_accumulation_stays_within_the_model():
    """Exact accumulation (more accurate than binary64) is within the a-priori bound."""
    exact = lambda a, b: np.array(
        [[[float(sum(Fraction(float(x)) * Fraction(float(y)) for x, y in zip(row, col))) for col in np.swapaxes(m2, -1, -2)]
          for row in m1] for m1, m2 in zip(np.atleast_3d(a).reshape(-1, *a.shape[-2:]),
                                           np.atleast_3d(b).reshape(-1, *b.shape[-2:]))]).reshape(a.shape[:-1] + b.shape[-1:])
    assert fpmodel.probe_blas(exact) is None


def test_tier3_defers_to_arb_when_the_model_fails(monkeypatch):
    monkeypatch.setattr(fpmodel, "tier3_usable", lambda: (False, "the rigorous float64 tier is off: test"))
    rng = np.random.default_rng(0)
    verdicts = tier3.decide("collapse.global", tier3.Batch(X=rng.standard_normal((4, 3, 2)),
                                                           A=rng.standard_normal((4, 2, 2)) * 0.1))
    assert list(verdicts) == [tier3.UNDECIDED] * 4


def test_successor_and_predecessor_enclose_rounded_operations():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(2000) * 10.0 ** rng.integers(-320, 300, 2000)
    b = rng.standard_normal(2000) * 10.0 ** rng.integers(-20, 20, 2000)
    with np.errstate(all="ignore"):
        for op, exact in ((np.add, lambda x, y: x + y), (np.multiply, lambda x, y: x * y),
                          (np.divide, lambda x, y: x / y)):
            c = op(a, b)
            lo, hi = rounding.down(c), rounding.up(c)
            for x, y, l, h, ci in zip(a, b, lo, hi, c):
                if np.isfinite(ci) and np.isfinite(h) and np.isfinite(l):
                    z = exact(Fraction(float(x)), Fraction(float(y)))
                    assert Fraction(float(l)) <= z <= Fraction(float(h))
                    assert l < ci < h or ci == 0 and l < 0 < h


def test_product_error_bound_on_adversarial_products():
    rng = np.random.default_rng(2)
    A = rng.standard_normal((20, 30)) * 10.0 ** rng.integers(-150, 150, (20, 30))
    B = rng.standard_normal((30, 10)) * 10.0 ** rng.integers(-150, 150, (30, 10))
    product = MidRad64.matmul(A, B)
    mid, rad = product.mid, product.rad
    for i in range(20):
        for j in range(10):
            z = sum(Fraction(float(A[i, l])) * Fraction(float(B[l, j])) for l in range(30))
            assert abs(Fraction(float(mid[i, j])) - z) <= Fraction(float(rad[i, j]))
