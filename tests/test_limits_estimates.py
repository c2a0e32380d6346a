"""The work and memory estimates follow the code: thin heads through their d_k x d_k reduction, diameters through
a Gram matrix; the engine's and the checker's are the same formula, and README's sizes are admitted as stated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import certify_checker
from certify.core import config, limits
from certify.engine import check
from certify_checker import limits as checker_limits

SHAPES = [(n, d, layers, hidden, bits, thin) for n, d, layers, hidden, bits, thin in itertools.product(
    (2, 64, 256), (3, 384, 1024), (1, 4), (0, 512), (53, 106, 4096), (0, 32)) if thin < d]


def _checker_work(n, d, layers, hidden, bits, thin) -> int:
    """The checker's work estimate, read back as the least work limit that admits it."""
    wide = checker_limits.Limits(tokens=1 << 20, dim=1 << 20, memory=1 << 62, precision=1 << 20)
    low, high = 0, 1 << 62
    while high - low > 1:
        middle = (low + high) // 2
        admitted = checker_limits.problem(n, d, layers, hidden, bits, wide.__class__(**{**vars(wide), "work": middle}),
                                          thin=thin) is None
        low, high = (low, middle) if admitted else (middle, high)
    return high


@pytest.mark.parametrize("shape", SHAPES[::7])
def test_the_engine_and_the_checker_estimate_the_same_work(shape):
    assert limits.work(*shape) == _checker_work(*shape)


def test_the_estimates_grow_with_every_size_and_a_thin_head_costs_no_more_than_a_dense_one():
    for n, d, layers, hidden, bits, thin in SHAPES:
        here = limits.work(n, d, layers, hidden, bits, thin)
        for grown in ((2 * n, d, layers, hidden, bits, thin), (n, 2 * d, layers, hidden, bits, thin),
                      (n, d, layers + 1, hidden, bits, thin), (n, d, layers, hidden + 1, bits, thin),
                      (n, d, layers, hidden, 2 * bits, thin), (n, d, layers, hidden, bits, 0)):
            assert limits.work(*grown) >= here, ((n, d, layers, hidden, bits, thin), grown)
        count = limits.ball_count(n, d, layers, hidden)
        assert limits.ball_count(2 * n, d, layers, hidden) >= count and limits.ball_count(n, 2 * d, layers, hidden) >= count
        assert limits.ball_count(n, d, layers, hidden, uses_tau=True) >= count
    thin = [limits.norm_count(384, k) for k in (16, 32, 64, 383)]
    assert thin == sorted(thin) and thin[0] < thin[-1] <= limits.norm_count(384, 0) == 4 * 384 ** 3


def _heads(n: int, d: int, layers: int, d_k: int) -> dict:
    rng = np.random.default_rng(0)
    return {"X": rng.normal(size=(n, d)).tolist(),
            "layers": [{"W_Q": rng.normal(size=(d, d_k)).tolist(), "W_K": rng.normal(size=(d, d_k)).tolist()}
                       for _ in range(layers)]}


def _least_memory(admits) -> int:
    low, high = 0, 1 << 62
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if admits(middle) else (middle, high)
    return high


@pytest.mark.parametrize("shape", SHAPES[::7])
def test_the_checker_never_estimates_more_memory_than_the_engine(shape):
    """What the engine admits, the checker admits (its own arrays, without the engine's Gram matrix and tau's
    minima); both hold one norm's NORM_BALLS w^2 balls."""
    n, d, layers, hidden, bits, thin = shape
    engine = limits.ball_count(n, d, layers, hidden, thin=thin) * limits.ball_bytes(bits)
    checker = _least_memory(lambda m: checker_limits.problem(n, d, layers, hidden, bits, checker_limits.Limits(
        tokens=1 << 20, dim=1 << 20, work=1 << 62, precision=1 << 20, memory=m), thin=thin) is None)
    width = thin or d
    assert limits.NORM_BALLS * width * width * limits.ball_bytes(bits) <= checker <= engine


def test_readme_sizes_are_admitted_and_refused_as_stated():
    """README, Limits: a stack of 4 thin heads of 128 x 384 (d_k = 32) is admitted at 53 and 106 bits (it was
    refused: every layer was priced 4 d^3); one layer of 256 x 768 fits the memory limit (its diameters were
    priced 2 n^2 d balls, 10 GiB), not the work limit; one dense layer of 1024 tokens in 1024 dimensions is refused (memory, and work)."""
    stack = config.load(_heads(128, 384, 4, 32))
    assert stack.thin == 32
    for bits in (53, 106):
        assert limits.resource_problem(*stack.sizes(), bits, limits.DEFAULT, thin=stack.thin) is None
    assert "work" in limits.resource_problem(*stack.sizes(), 53, limits.DEFAULT)  # priced as dense heads
    assert "work" in limits.resource_problem(256, 768, 1, 0, 53, limits.DEFAULT)  # not memory: its d^3 norm
    assert limits.resource_problem(256, 768, 1, 0, 53, limits.Limits(work=10**10)) is None
    assert checker_limits.problem(256, 768, 1, 0, 53, checker_limits.Limits(work=10**10)) is None
    assert "memory" in limits.resource_problem(1024, 1024, 1, 0, 53, limits.DEFAULT)
    assert "memory" in checker_limits.problem(1024, 1024, 1, 0, 53, checker_limits.LIMITS)
    assert "work" in limits.resource_problem(1024, 1024, 1, 0, 53, limits.Limits(memory=1 << 40))


def test_the_checker_prices_a_thin_head_by_the_route_its_witness_takes():
    """Written by the engine, a stack of thin heads is priced thin by the checker too, at the engine's own estimate;
    given a d x d witness instead (the d x d route, d^3), it is priced dense."""
    data = _heads(24, 96, 2, 8)
    result = check(data, "collapse.global")
    cert = result.certificate
    assert cert is not None and certify_checker.verify(cert).ok
    case = config.load(data)
    estimate = limits.work(*case.sizes(), cert["precision"], case.thin)
    assert case.thin == 8 and estimate < limits.work(*case.sizes(), cert["precision"])
    assert certify_checker.over_limits(cert, certify_checker.Limits(work=estimate)) is None
    assert certify_checker.over_limits(cert, certify_checker.Limits(work=estimate - 1)) is not None
    dense = {**cert, "witness": {**cert["witness"], "A1": {"basis": np.eye(96).tolist(), "top": [1.0] * 96}}}
    assert certify_checker.over_limits(dense, certify_checker.Limits(work=estimate))
    assert certify_checker.over_limits(dense, certify_checker.Limits(work=limits.work(*case.sizes(), cert["precision"]))) is None
