"""The work and memory estimates follow the code: thin heads through their d_k x d_k reduction, diameters through
a Gram matrix; the engine's and the checker's are the same formula, and README's sizes are admitted as stated."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import certify_checker
from certify import claims
from certify.core import config, limits
from certify.search import samplers
from certify.suite import wu_cases
from certify.engine import check
from certify.errors import BadInput
from certify.engine import certificate
from certify.engine.decide import text_reading, window_sizes
from certify_checker import inequality as checker_inequality
from certify_checker import limits as checker_limits
from certify_checker import schema as checker_schema

ROOT = Path(__file__).resolve().parents[1]

SHAPES = [(n, d, layers, hidden, bits, thin) for n, d, layers, hidden, bits, thin in itertools.product(
    (2, 64, 256), (3, 384, 1024), (1, 4), (0, 512), (53, 106, 4096, 1 << 16), (0, 32)) if thin < d]


def _checker_work(n, d, layers, hidden, bits, thin, value=False, layernorm=False) -> int:
    """The checker's work estimate of an inequality certificate of these shapes (recomputed at each ESCALATION),
    read back as the least work limit that admits it."""
    wide = checker_limits.Limits(tokens=1 << 20, dim=1 << 20, memory=1 << 62, precision=1 << 20)
    low, high = 0, 1 << 62
    while high - low > 1:
        middle = (low + high) // 2
        admitted = checker_limits.problem(n, d, layers, hidden, bits, wide.__class__(**{**vars(wide), "work": middle}),
                                          thin=thin, factors=checker_inequality.ESCALATION, valued=value,
                                          layernorm=layernorm) is None
        low, high = (low, middle) if admitted else (middle, high)
    return high


@pytest.mark.parametrize("value, layernorm", [(False, False), (True, False), (True, True)],
                         ids=["head", "value", "layernorm"])
@pytest.mark.parametrize("shape", SHAPES[::7])
def test_the_engine_prices_its_evaluation_and_the_checkers_estimate_of_the_certificate(shape, value, layernorm):
    """One formula a layer in both (its Python and its arithmetic, with a value matrix or without, with LayerNorm or
    without), the same weights of the precision, the same recomputations priced; the engine's estimate of a check
    is the checker's of its certificate plus the engine's own evaluation, so that the engine refuses or stops
    exactly where the checker would refuse."""
    n, d, layers, hidden, bits, thin = shape
    parts = (n, d, hidden, thin, value, layernorm)
    assert limits.layer_parts(*parts) == checker_limits.layer_parts(*parts)
    assert limits.ESCALATION == checker_inequality.ESCALATION
    assert [limits.cost(b) for b in (53, 64, 106, 4096, 1 << 20)] == [checker_limits.cost(b) for b in (53, 64, 106, 4096, 1 << 20)]
    python, arithmetic = limits.layer_parts(*parts)
    own = layers * (python + limits.cost(bits) * arithmetic)
    assert limits.work(*shape, value=value, layernorm=layernorm) == own + _checker_work(*shape, value, layernorm)
    assert limits.layer_work(*parts) == python + arithmetic  # the price at 53 bits is both parts
    if value:  # V's products, norm and entries (LayerNorm's operations and rows): more of both parts than without
        head = limits.layer_parts(n, d, hidden, thin, value and layernorm)
        assert python > head[0] and arithmetic > head[1]


@pytest.mark.parametrize("shape", SHAPES[::5])
def test_the_engine_and_the_checker_price_a_centred_layer_alike(shape):
    """A layer in centred form is one formula in both (certify.core.limits.centred_cost, written again from the
    checker's trajectory step), at the precision alone and with its ESCALATION; the engine's estimate of a check
    in centred form adds its own evaluation and the checker's, per layer."""
    n, d, layers, hidden, bits, thin = shape
    for factors in ((), limits.ESCALATION):
        assert limits.centred_cost(n, d, bits, factors) == checker_limits.centred_cost(n, d, bits, factors)
    own_and_checker = limits.centred_cost(n, d, bits) + limits.centred_cost(n, d, bits, limits.ESCALATION)
    assert (limits.work(*shape, centred=True) - limits.work(*shape)) == layers * own_and_checker


@pytest.mark.parametrize("k", [1, 2, 7, 64])
@pytest.mark.parametrize("shape", SHAPES[::11])
def test_the_engine_and_the_checker_price_a_claims_windows_alike(shape, k):
    """A window of k layers (its product of k attention matrices, its quantities) is one formula in both, priced
    as a layer is: its Python at each pass, its arithmetic by cost() at the precision and at each ESCALATION of it
    in the checker (certify_checker.inequality.work), once more in the engine's own evaluation."""
    n, d, layers, hidden, bits, thin = shape
    assert limits.window_parts(n, d, k) == checker_limits.window_parts(n, d, k)
    python, arithmetic = limits.window_parts(n, d, k)
    checker = (1 + len(limits.ESCALATION)) * python + arithmetic * checker_limits.passes(bits, limits.ESCALATION)
    assert limits.work(*shape, window=(3, k)) == limits.work(*shape) + 3 * (python + limits.cost(bits) * arithmetic
                                                                           + checker)
    if k > 1:  # a longer window's product costs more
        assert sum(limits.window_parts(n, d, k)) > sum(limits.window_parts(n, d, k - 1))


@pytest.mark.parametrize("shape", SHAPES[::13])
def test_every_layer_of_a_stack_is_priced_on_tokens_at_the_full_precision(shape):
    """No layer is priced as on binary64 tokens: a layer after the first has full-precision ones, and a certificate
    may state the first's as text (a forced verify of one layer of 128 x 16 so stated took 2.2 times its price at
    53 bits when the first layer was priced short): both estimates grow by the same amount with each layer, the first
    included, and a layer's parts hold the full-precision products and P's Python (the diameters' pairs)."""
    n, d, layers, hidden, bits, thin = shape
    one, checker = limits.work(n, d, 1, hidden, bits, thin), _checker_work(n, d, 1, hidden, bits, thin)
    for k in (2, 5):
        assert limits.work(n, d, k, hidden, bits, thin) == k * one and _checker_work(n, d, k, hidden, bits, thin) == k * checker
    python, arithmetic = checker_limits.layer_parts(n, d, hidden, thin)
    on_tokens = limits.score_products(n, d, thin)[0] + 2 * n * n * d  # the scores', P X and a Gram matrix
    assert arithmetic >= checker_limits.FULL_TOKENS * on_tokens // checker_limits.PRODUCTS + 2 * limits.ENTRY * n * n
    assert python >= checker_limits.PAIRS * limits.ENTRY * n * n and limits.PAIRS == checker_limits.PAIRS
    assert limits.FULL_TOKENS == checker_limits.FULL_TOKENS > 1


@pytest.mark.parametrize("n, d, d_k", [(64, 256, 16), (128, 384, 32), (256, 768, 64), (8, 9, 8)])
def test_a_thin_heads_scores_are_priced_by_the_products_they_take(n, d, d_k):
    """A thin head alone's scores are (X W_Q)(X W_K)^T, 2 n d d_k + n^2 d_k products, both on the tokens; priced as
    X A X^T (n^2 d on the tokens, n d^2 by A) its forced verify read 5.9 to 11 times its CPU at 64 x 256 to
    256 x 768 on binary64 tokens.  Both sides alike; a dense head's scores, and a head of d_k = d, as before."""
    for thin in (d_k, 0, d):
        assert limits.layer_parts(n, d, thin=thin) == checker_limits.layer_parts(n, d, thin=thin)
    assert limits.score_products(n, d, d_k) == (2 * n * d * d_k + n * n * d_k, 0)
    assert limits.score_products(n, d, 0) == limits.score_products(n, d, d) == (n * n * d, n * d * d)
    thin, dense = limits.layer_parts(n, d, thin=d_k), limits.layer_parts(n, d)
    assert thin[0] == dense[0] + limits.CHOLESKY * d_k ** 3 // 6  # the Python alike but for the reduction's Cholesky
    scores = limits.FULL_TOKENS * (n * n * d - 2 * n * d * d_k - n * n * d_k) + n * d * d
    norms = limits.norm_count(d) - limits.norm_count(d, d_k)
    assert abs(dense[1] - thin[1] - (scores + norms) / limits.PRODUCTS) <= 1


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
        assert limits.work(n, d, layers, hidden, bits, thin, uses_tau=True) > here
    thin = [limits.norm_count(384, k) for k in (16, 32, 64, 192, 383)]
    assert thin == sorted(thin) and thin[0] < thin[-2] <= limits.norm_count(384, 0) == 4 * 384 ** 3 < thin[-1]


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
    refused: every layer was priced 4 d^3); one thin head of 256 x 768 (d_k = 64, BERT-base's) up to 367 bits, not
    at 384 (up to 212 until a layer's Python was priced the same at any precision, 424 until every layer's tokens
    were priced at the full precision, as a certificate may state them, 271 until a thin head's scores were priced
    as the products they take, not as X A X^T's); one dense layer of 256 x 768
    at 53 bits, not at 106; one dense layer of 1024 tokens in 1024 dimensions is refused (memory, and work)."""
    stack = config.load(_heads(128, 384, 4, 32))
    assert stack.thin == 32
    for bits in (53, 106):
        assert limits.resource_problem(*stack.sizes(), bits, limits.DEFAULT, thin=stack.thin) is None
    assert limits.resource_problem(*stack.sizes(), 53, limits.DEFAULT) is None  # priced as dense heads too
    for bits in (53, 367):
        assert limits.resource_problem(256, 768, 1, 0, bits, limits.DEFAULT, thin=64) is None
    assert "work" in limits.resource_problem(256, 768, 1, 0, 384, limits.DEFAULT, thin=64)
    assert limits.resource_problem(256, 768, 1, 0, 53, limits.DEFAULT) is None
    assert "work" in limits.resource_problem(256, 768, 1, 0, 106, limits.DEFAULT)  # not memory: its d^3 norm
    assert checker_limits.problem(256, 768, 1, 0, 53, checker_limits.LIMITS, factors=checker_inequality.ESCALATION) is None
    assert "memory" in limits.resource_problem(1024, 1024, 1, 0, 53, limits.DEFAULT)
    assert "memory" in checker_limits.problem(1024, 1024, 1, 0, 53, checker_limits.LIMITS)
    assert "work" in limits.resource_problem(1024, 1024, 1, 0, 53, limits.Limits(memory=1 << 40))


def test_the_estimate_orders_the_benchmarks_sizes_as_their_cost_and_refuses_a_hostile_one_at_once():
    """benchmarks.limits: the checks it times cost more in this order, and so are they estimated; a stack the
    limits admit in size (64 layers of 1024 x 1024 with FFNs of 1024, days of work at 53 bits) is refused by
    the estimate alone, in far less than a second."""
    sizes = [(8, 4, 0), (32, 64, 0), (64, 128, 0), (128, 384, 32), (128, 384, 0), (256, 768, 64), (256, 768, 0)]
    estimates = [limits.work(n, d, 1, 0, 53, thin) for n, d, thin in sizes]
    assert estimates == sorted(estimates) and len(set(estimates)) == len(estimates)
    hostile = limits.Limits(memory=1 << 62)
    started = time.process_time()
    for bits in (53, 1 << 16):
        limits.resource_problem.cache_clear()
        assert "work" in limits.resource_problem(1024, 1024, 64, 1024, bits, hostile)
        assert "work" in checker_limits.problem(1024, 1024, 64, 1024, bits, checker_limits.Limits(memory=1 << 62))
    assert time.process_time() - started < 0.1


def _uses_tau(claim_id: str) -> bool:
    return any("tau" in q.lhs + q.rhs for q in claims.get(claim_id).inequalities)


def _drawn(n, d, d_k=0, **parts):
    return samplers.sample("gaussian", n, d, 0, 0, L_range=(1.0, 1.0), d_k=d_k or None,
                           parts=samplers.LayerParts(**parts).validated(d) if parts else None).config


@pytest.mark.parametrize("claim_id, data", [
    ("collapse.global", _drawn(24, 48)),
    ("collapse.global", _drawn(32, 96, 8)),
    ("collapse.dobrushin", _drawn(32, 96, 8, mask="causal")),  # no norm: the checker priced a d x d one
    ("collapse.tau", _drawn(24, 16)),
    ("ffn.lipschitz", _drawn(16, 24, ffn="gelu")),
    ("value.bounded", _drawn(16, 24, value="gaussian", value_norm=0.9)),
    ("ln.collapse", wu_cases.layernorm_stack("causal", n=8, seed=14, positive=True)),
    ("ln.collapse", wu_cases.layernorm_stack("sliding", n=8, seed=14, positive=True)),
    ("mask.collapse", wu_cases.masked_stack("uni", n=8)),
], ids=["dense", "thin", "causal-thin", "tau", "ffn", "value", "ln", "ln-sliding", "mask-uni"])
def test_what_check_admits_at_its_least_limit_the_checker_admits(claim_id, data):
    """At the least work limit under which the engine admits a check at 53 bits, the certificate it writes is
    confirmed by the checker under the same limit (check confirms it so; a refusal would leave it undecided), and
    the checker's own estimate of it is at most the engine's.  Larger sizes hold by the same formula
    (test_the_engine_prices_its_evaluation_and_the_checkers_estimate_of_the_certificate)."""
    case = config.load(data)
    tau, window = _uses_tau(claim_id), window_sizes(case, claims.get(claim_id))
    texts = certificate.text_work(text_reading(case), 53)  # what reading its texts costs the checker (LayerNorm's eps)
    least = limits.work(*case.sizes(), 53, case.thin, tau, case.value, case.normed, window) + texts
    assert limits.resource_problem(*case.sizes(), 53, limits.Limits(work=least - 1), tau, case.thin, case.value,
                                   case.normed, window, texts)
    result = check(data, claim_id, limits=limits.Limits(work=least))
    assert result.certificate is not None and result.certificate["precision"] == 53, result.reason
    assert certify_checker.over_limits(result.certificate, certify_checker.Limits(work=least)) is None


def test_a_users_bound_is_priced_by_both_as_the_checker_evaluates_it():
    """A bound is evaluated at every layer (checker_inequality.operations: a power by k is k products, a call 16);
    the checker prices its certificate so, and the engine refuses what that price puts past the limit before any
    work, and admits at its least limit a certificate the checker admits.  Unpriced, 200 terms D**1024 at 65536 bits
    took the checker 18 s a layer on a certificate of 6 tokens."""
    data, costly = str(ROOT / "examples" / "layer.json"), "max(" + ", ".join(["D**1024"] * 200) + ")"
    with pytest.raises(BadInput, match="refused before starting: an estimated work"):
        check(data, bound=costly, start_prec=1 << 16, max_prec=1 << 16)
    case = config.load(data)
    count = len(case.layers) * checker_inequality.operations(costly)
    assert count > 200 * 1024
    least = (limits.work(*case.sizes(), 53, case.thin) + certificate.text_work(text_reading(case), 53)
             + checker_inequality.bound_work(count, 53))
    result = check(data, bound=costly, limits=limits.Limits(work=least))
    assert result.certificate is not None and result.certificate["precision"] == 53, result.reason
    assert certify_checker.over_limits(result.certificate, certify_checker.Limits(work=least)) is None
    with pytest.raises(BadInput, match="refused before starting"):
        check(data, bound=costly, limits=limits.Limits(work=least - 1))


def test_a_value_matrix_is_priced_by_both_from_the_configuration_and_the_certificate():
    """A value layer's V (P X V^T, its norm or its powers' through d x d witnesses) was priced by neither side: at
    500 bits a value.bounded check took more CPU than its estimate stood for.  The engine reads V from the
    configuration (Case.value, and before parsing from its stated shapes), the checker from the certificate
    (certify_checker.sizes); both price it, and the certificate is admitted at the checker's own estimate of it."""
    data = _drawn(16, 24, value="gaussian", value_norm=0.9)
    case = config.load(data)
    assert case.value and not config.load(_drawn(16, 24)).value
    cert = check(data, "value.bounded").certificate
    assert cert is not None and certify_checker.sizes(cert)[6] is True
    estimate = _checker_work(*case.sizes(), cert["precision"], case.thin, value=True)
    assert estimate > _checker_work(*case.sizes(), cert["precision"], case.thin)
    assert _least_work(cert) == estimate
    assert limits.work(*case.sizes(), cert["precision"], case.thin, value=True) > estimate
    least = limits.work(*case.sizes(), 53, case.thin, value=True)  # refused before parsing below it
    with pytest.raises(config.BadInput, match="work"):
        config.load(data, limits.Limits(work=least - 1))


def test_layernorm_and_a_claims_windows_are_priced_by_both_from_the_configuration_and_the_certificate():
    """LayerNorm's operations on the tokens and a window claim's windows (their product of k attention matrices,
    k = 2r for ln.collapse, r the radius of the mask's graph) were priced by neither side: ln.collapse at 64 x 4,
    53 bits, had its forced verify take 4.8 times its price.  The engine reads LayerNorm from the configuration
    (Case.normed, and before parsing from its stated layers) and the windows from the claim (window_sizes), the
    checker both from the certificate (certify_checker.sizes; inequality.work, from the mask's radius)."""
    data = wu_cases.layernorm_stack("sliding", n=8, seed=14, positive=True)  # radius 4: windows of 8 of 10 layers
    case = config.load(data)
    assert case.normed and not config.load(wu_cases.masked_stack("sliding", n=8)).normed
    cert = check(data, "ln.collapse").certificate
    assert cert is not None and certify_checker.sizes(cert)[6:] == (True, True)
    count, k = window_sizes(case, claims.get("ln.collapse"))
    assert (count, k) == (2, 8)
    layers = _checker_work(*case.sizes(), cert["precision"], case.thin, value=True, layernorm=True)
    assert layers > _checker_work(*case.sizes(), cert["precision"], case.thin, value=True)
    python, arithmetic = checker_limits.window_parts(case.n, case.d, k)
    windows = count * (3 * python + arithmetic * checker_limits.passes(cert["precision"], checker_inequality.ESCALATION))
    texts = certificate.text_work(text_reading(case), cert["precision"])  # LayerNorm's eps, a text
    assert checker_inequality.work(cert) == windows + texts
    assert _least_work(cert) == layers + windows + texts
    assert limits.work(*case.sizes(), cert["precision"], case.thin, False, True, True, (count, k)) > layers + windows
    causal = {**cert, "inputs": {**cert["inputs"], "layers": [{**layer, "mask": wu_cases.named_mask("causal", 8)}
                                                              for layer in cert["inputs"]["layers"]]}}
    python, arithmetic = checker_limits.window_parts(case.n, case.d, 2)  # radius 1: 8 windows of 2 layers
    assert checker_inequality.work(causal) == 8 * (3 * python + arithmetic * checker_limits.passes(
        cert["precision"], checker_inequality.ESCALATION)) + texts
    least = limits.work(*case.sizes(), 53, case.thin, value=True, layernorm=True)  # refused before parsing below it
    with pytest.raises(config.BadInput, match="work"):
        config.load(data, limits.Limits(work=least - 1))
    # where the claim does not apply (no centre, or no one mask: refused by its hypotheses) no window is priced
    isolated = {**data, "layers": [{**layer, "mask": np.eye(8, dtype=int).tolist()} for layer in data["layers"]]}
    mixed = {**data, "layers": [data["layers"][0], {**data["layers"][1], "mask": "causal"}, *data["layers"][2:]]}
    for other in (isolated, mixed):
        assert window_sizes(config.load(other), claims.get("ln.collapse")) == (0, 0)
        assert window_sizes(config.load(other), claims.get("mask.collapse")) == (0, 0)


def test_a_window_claims_mask_is_searched_only_within_the_token_limit_and_on_its_tokens(monkeypatch):
    """The checker prices a window claim's windows from its mask's graph (n^3 / 64 steps): a mask of 2500 tokens, over
    the token limit, took 3 s to price before the limit refused it; the caps on sizes now come first, and a mask of
    other rows than the tokens is not searched (verify refuses it)."""
    from certify_checker import windowed

    data = wu_cases.layernorm_stack("sliding", n=8, seed=14, positive=True)
    cert = check(data, "ln.collapse").certificate
    searched = []
    search = windowed.graph
    monkeypatch.setattr(windowed, "graph", lambda mask: searched.append(len(mask)) or search(mask))
    assert certify_checker.over_limits(cert, certify_checker.LIMITS) is None and searched == [8]  # the honest one
    n = 2000
    huge_mask = [[1] * n for _ in range(n)]
    first, *rest = cert["inputs"]["layers"]  # the first layer's mask is the one priced
    for tokens in (n, 8):  # over the limit; within it, with a mask of n rows
        hostile = {**cert, "inputs": {**cert["inputs"], "X": [[0.0] * 4] * tokens,
                                      "layers": [{**first, "mask": huge_mask}, *rest]}}
        refusal = certify_checker.over_limits(hostile, certify_checker.LIMITS)
        assert refusal == ("tokens 2000 is above the checker's limit of 1024 (`certify verify --limit tokens=N` raises "
                           "it)" if tokens == n else None)
    assert searched == [8]
    assert not certify_checker.verify(hostile).ok


def test_the_checker_prices_a_thin_head_by_the_route_its_witness_takes():
    """Written by the engine, a stack of thin heads is priced thin by the checker too, at the engine's own estimate;
    given a d x d witness instead (the d x d route, d^3), it is priced dense."""
    data = _heads(24, 96, 2, 8)
    result = check(data, "collapse.global")
    cert = result.certificate
    assert cert is not None and certify_checker.verify(cert).ok
    case = config.load(data)
    estimate = _checker_work(*case.sizes(), cert["precision"], case.thin)
    assert case.thin == 8 and estimate < _checker_work(*case.sizes(), cert["precision"], 0)
    assert estimate < limits.work(*case.sizes(), cert["precision"], case.thin)
    assert certify_checker.over_limits(cert, certify_checker.Limits(work=estimate)) is None
    assert certify_checker.over_limits(cert, certify_checker.Limits(work=estimate - 1)) is not None
    dense = {**cert, "witness": {**cert["witness"], "A1": {"basis": np.eye(96).tolist(), "top": [1.0] * 96}}}
    assert certify_checker.over_limits(dense, certify_checker.Limits(work=estimate))
    assert certify_checker.over_limits(dense, certify_checker.Limits(work=_checker_work(*case.sizes(), cert["precision"], 0))) is None


def test_a_hostile_size_is_refused_by_check_and_verify_in_one_line_without_a_hang(tmp_path):
    """Four dense layers of 64 tokens in 700 dimensions pass every size cap and the memory limit, not the work
    (their certificate could have the checker recompute each d^3 norm at three precisions): `check` and
    `verify` refuse them from the shapes alone, one line and exit 2, in about the time Python takes to start."""
    zeros = lambda rows, columns: [[0] * columns for _ in range(rows)]
    data = {"X": zeros(64, 700), "layers": [{"A": zeros(700, 700)} for _ in range(4)]}
    assert "work" in limits.resource_problem(64, 700, 4, 0, 53, limits.DEFAULT)
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(data))
    cert = tmp_path / "cert.json"
    cert.write_text(json.dumps({"format": certify_checker.FORMAT, "kind": "inequality", "claim": "collapse.global",
                                "bound": None, "verdict": "holds", "precision": 53, "inputs": data, "witness": {},
                                "values": {}, "inputs_sha256": ""}))
    for command in (["check", str(source)], ["verify", str(cert)]):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "certify", *command], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and "work" in lines[0], done.stderr
        assert time.perf_counter() - started < 30


def _thin_head(n: int, d: int, k: int, zero_column: bool, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    W_K = rng.standard_normal((d, k)) / np.sqrt(d)
    if zero_column:
        W_K[:, -1] = 0.0  # a pruned direction: W_K^T W_K is singular, the k x k reduction does not apply
    return {"X": rng.standard_normal((n, d)), "W_Q": rng.standard_normal((d, k)) / np.sqrt(d), "W_K": W_K}


@pytest.mark.parametrize("zero_column", [False, True], ids=["full-rank", "rank-deficient"])
def test_a_thin_head_is_priced_by_the_route_its_norm_takes(zero_column):
    """A thin head whose W_K is rank-deficient has its norm enclosed through the d x d product (certify.core.thin_norm)
    and its certificate states a d x d witness, which the checker prices at 4 d^3; the engine priced it as thin,
    so `certify check` admitted a 256 x 1024 head with a zero column in W_K, ran a minute at 1.5 GB and ended
    undecided, the checker refusing its certificate."""
    data = _thin_head(6, 12, 3, zero_column)
    cert = check(data).certificate
    route = len(checker_schema.expanded(cert["witness"]["A0"]["basis"]))  # 3 through the reduction, 12 through d x d
    assert route == (12 if zero_column else 3)
    assert config.load(data).thin == (0 if zero_column else 3)


def test_what_check_admits_of_a_rank_deficient_thin_head_verify_admits(tmp_path):
    """Under a work limit between a 4 x 256 head's thin price and its dense one, the rank-deficient head is refused
    before any work (exit 2, one line), not decided and then left unconfirmed (exit 3)."""
    thin, dense = (limits.work(4, 256, 1, 0, 53, k) for k in (8, 0))
    cap = str((thin + dense) // 2)
    for zero_column, code in ((False, 0), (True, 2)):
        path = tmp_path / f"head-{zero_column}.json"
        path.write_text(json.dumps({key: value.tolist() for key, value in _thin_head(4, 256, 8, zero_column).items()}))
        done = subprocess.run([sys.executable, "-m", "certify", "check", str(path), "--limit", f"work={cap}", "-q"],
                              capture_output=True, text=True, cwd=ROOT, timeout=300)
        assert done.returncode == code, (zero_column, done.stdout, done.stderr)
        if code == 2:
            assert done.stderr.count("\n") == 1 and "refused before starting" in done.stderr and not done.stdout


def test_reduces_reads_binary64_arrays_and_exact_rows_alike():
    from fractions import Fraction

    from certify.core import thin_norm
    R = np.array([[1.0, 0.0], [0.0, 2.0 ** -20], [1.0, 1.0]])
    assert thin_norm.reduces(R) and not thin_norm.reduces(np.array([[1.0, 2.0], [2.0, 4.0], [0.5, 1.0]]))
    assert not thin_norm.reduces(np.zeros((3, 2))) and not thin_norm.reduces(np.array([[1.0, 1e-12], [0.0, 0.0]]))
    huge = 10 ** 400  # beyond binary64: scaled into range, as the engine's midpoints are
    assert thin_norm.reduces([[Fraction(huge), Fraction(0)], [Fraction(0), Fraction(huge, 3)], [Fraction(1, 3)] * 2])
    assert not thin_norm.reduces([[Fraction(huge), Fraction(2 * huge)], [Fraction(1), Fraction(2)]])


def _least_work(cert: dict) -> int:
    """The checker's estimate of a certificate: the least work limit at which over_limits admits it."""
    wide = {"tokens": 1 << 20, "dim": 1 << 20, "memory": 1 << 62}
    low, high = 0, 1 << 62
    while high - low > 1:
        middle = (low + high) // 2
        admitted = certify_checker.over_limits(cert, certify_checker.Limits(**wide, work=middle)) is None
        low, high = (low, middle) if admitted else (middle, high)
    return high


def _tokens(n: int, d: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return (rng.integers(-8, 9, size=(n, d)) / 8).tolist()


def test_a_trajectorys_steps_are_priced_by_the_cost_of_their_precision_and_of_their_finer_run():
    """24 tokens in 24 dimensions through 40 steps, every one stated at 65536 bits: priced by its limbs, three a
    step, the estimate was 3.5e9 units (350 s at 0.1 us a unit), where the checker spent 205 s of CPU at the stated
    precision and, with one stated ball moved by a few radii, 17 s a step more recomputing at twice it (about 916 s).
    A step's arithmetic is priced at cost() of its precision and of twice it, its Python (the same at any precision)
    at both runs, so the estimate stays above what the run took at 0.1 us a unit and the certificate is refused at
    the default limits; below some 220 bits (the finer run's 440) cost() is the limbs."""
    from certify_checker import trajectory as checker_trajectory

    T, bits = 40, 1 << 16
    cert = {"kind": "trajectory", "layers": T, "inputs": {"X": _tokens(24, 24, 0), "layers": [{"A": _tokens(24, 24, 1)}]},
            "precision": bits, "curve_precision": bits, "norm_precision": 128, "step_precisions": [bits] * (T + 1),
            "curves": ["global.step"], "witness": {}}
    python, arithmetic = checker_limits.step_parts(24, 24)
    steps = (T + 1) * (2 * python + arithmetic * (checker_limits.cost(bits) + checker_limits.cost(2 * bits)))
    assert _least_work(cert) >= steps > 916 * 10**7
    assert certify_checker.over_limits(cert, certify_checker.LIMITS) is not None  # refused at the default limits
    assert checker_trajectory.stated_price(cert) == steps
    price = checker_trajectory.step_prices(cert)
    for low in (53, 64, 106, 200):  # where cost() is the limbs
        assert price(low) == 2 * python + arithmetic * (checker_limits.limbs(low) + checker_limits.limbs(2 * low))


def test_a_tiny_trajectory_step_at_thousands_of_bits_is_priced_by_its_arithmetic_alone():
    """A step's Python (an entry of P, a term of tau) costs about the same at any precision: the whole price of a
    53-bit step grew by cost(), so 8 tokens in 4 dimensions at 4000 bits were priced at about 4 times their CPU time
    at 0.1 us a unit (and 4000 layers of examples/layer.json at 7 times); only the arithmetic grows with the bits
    now, and both parts with the sizes (`python -m benchmarks.limits` prints the steps' prices against their time)."""
    python, arithmetic = checker_limits.step_parts(8, 4)
    assert python > arithmetic  # a tiny step is mostly Python
    high = checker_limits.step_cost(8, 4, 0, 0, 4000, (2,))
    assert high == 2 * python + arithmetic * (checker_limits.cost(4000) + checker_limits.cost(8000))
    assert high < checker_limits.step_cost(8, 4, 0, 0, 53, (2,)) * checker_limits.cost(4000) / 2
    for grown in ((16, 4, 0, 0), (8, 8, 0, 0), (8, 4, 16, 0), (8, 8, 0, 4)):
        assert all(map(int.__gt__, checker_limits.step_parts(*grown), checker_limits.step_parts(8, 4)))


@pytest.mark.parametrize("kind", ["expansive-v", "residual-far"])
def test_a_named_results_finer_run_is_priced_by_the_cost_of_its_precision(kind):
    """A named result over a configuration is evaluated once at its precision and once at twice it (counterexample's
    FINER): at 65536 bits the finer run's layers were priced at limbs(131072) = 2049 where they cost 67649.  Its
    layers' Python is priced the same at both precisions, their arithmetic by cost() at each (limits.layer_cost)."""
    layer = {"A": _tokens(16, 16, 2), "V": _tokens(16, 16, 3), **({"residual": True} if kind == "residual-far" else {})}
    bits = 1 << 16
    cert = {"kind": kind, "inputs": {"config": {"X": _tokens(16, 16, 4), "layers": [layer]}}, "precision": bits}
    module = certify_checker._module(certify_checker.KINDS[kind])
    python, arithmetic = checker_limits.layer_parts(16, 16)
    assert module.ESCALATION == (2,)
    assert _least_work(cert) >= 2 * python + (checker_limits.cost(bits) + checker_limits.cost(2 * bits)) * arithmetic
    whole = (checker_limits.cost(bits) + checker_limits.cost(2 * bits)) * checker_limits.layer_work(16, 16)
    assert _least_work(cert) < whole  # its Python no longer weighted by the precision
