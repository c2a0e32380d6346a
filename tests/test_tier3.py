"""The rigorous float64 tier (certify/search/tier3.py on the midpoint-radius backend
certify/core/arith/midrad64.py) against arb.

Every tier-3 enclosure (the attention matrix P and every primitive a claim reads: D, D_out, D_PX,
tau, a, v, L, gap) must contain the exact value that arb encloses at 128 bits, and every tier-3
"holds" must be arb's verdict too, on random, near-tie, saturated, far-from-the-origin, tiny and
coincident configurations of every covered form (masks, V, residual, FFN, biases, temperature):
zero contradictions.  A planted fault (enclosures read one or two ulps narrower) must be caught.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from flint import arb, arb_mat, ctx

from certify import claims, engine
from certify.core import config, expr
from certify.core.arith import BALL, FLOAT64, midrad64
from certify.core.arith.midrad64 import MidRad, MidRad64
from certify.core.primitives import PRIMITIVES
from certify.engine import decide as engine_decide
from certify.errors import BadInput
from certify.search import tier3

PREC = 128
FORMS = {  # claim (/ variant) -> the form of layer it is about
    "collapse.global": {}, "collapse.tanh": {}, "collapse.cubic": {}, "collapse.tau": {}, "init.scaling": {},
    "collapse.dobrushin": {"mask": True}, "value.expansive": {"value": True},
    "residual.two_sided": {"value": True, "residual": True, "mask": True},
    "residual.two_sided.global": {"value": True, "residual": True}, "ffn.lipschitz": {"ffn": "relu"},
    "ffn.lipschitz/gelu": {"ffn": "gelu"},
}


def adversarial_batch(count: int, n: int, d: int, seed: int, thin: bool = False, value: bool = False,
                      residual: bool = False, mask: bool = False, ffn: str | None = None) -> tier3.Batch:
    """Gaussian configurations mixed with near-ties (tokens equal up to a few ulps), saturated
    attention (a D^2 up to about 700, exp underflows), tokens far from the origin, tiny scales
    and coincident tokens; with thin W_Q, W_K: biases and a temperature beta; ffn: the activation of an
    FFN after attention (its pre-activations reach |x| ~ 10, past erf's saturation at 6)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((count, n, d))
    kind = np.arange(count) % 6
    near = kind == 1
    X[near, 1] = X[near, 0] * (1 + rng.integers(-4, 5, (near.sum(), 1)) * 2.0**-52)
    X[kind == 3] += 1e3 * rng.standard_normal((int((kind == 3).sum()), 1, d))
    X[kind == 5, 1:] = X[kind == 5, :1]
    scale = 10.0 ** rng.uniform(-2, 0.5, count)
    scale[kind == 2] = 10.0 ** rng.uniform(1, 2.5, int((kind == 2).sum()))  # saturated
    scale[kind == 4] = 10.0 ** rng.uniform(-12, -6, int((kind == 4).sum()))  # almost uniform
    parts = dict(V=rng.standard_normal((count, d, d)) * 10.0 ** rng.uniform(-1, 1, (count, 1, 1)) if value else None,
                 residual=residual, mask=np.tril(np.ones((n, n), dtype=bool)) if mask else None)
    if ffn:
        hidden = d + 2
        parts["ffn"] = tier3.FeedForwardBatch(
            W1=rng.standard_normal((count, hidden, d)), b1=rng.standard_normal((count, hidden)),
            W2=rng.standard_normal((count, d, hidden)) / hidden, b2=rng.standard_normal((count, d)), activation=ffn)
    if thin:
        d_k = max(1, d // 2)
        W_Q, W_K = rng.standard_normal((count, d, d_k)), rng.standard_normal((count, d, d_k))
        b_Q, b_K = rng.standard_normal((count, d_k)), rng.standard_normal((count, d_k))
        return tier3.Batch(X=X, W_Q=W_Q, W_K=W_K, b_Q=b_Q, b_K=b_K, beta=scale, d_k=d_k, **parts)
    A = rng.standard_normal((count, d, d))
    return tier3.Batch(X=X, A=A, beta=scale, **parts)


def config_of(batch: tier3.Batch, c: int) -> dict:
    """Configuration c of the batch in certify's JSON form (the same binary64 numbers)."""
    out = {"X": batch.X[c].tolist(), "beta": float(np.broadcast_to(batch.beta, batch.X.shape[:1])[c])}
    for key in ("A", "W_Q", "W_K", "b_Q", "b_K", "V"):
        if getattr(batch, key) is not None:
            out[key] = getattr(batch, key)[c].tolist()
    if batch.d_k is not None:
        out["d_k"] = batch.d_k
    if batch.mask is not None:
        out["mask"] = batch.mask.astype(int).tolist()
    if batch.residual:
        out["residual"] = True
    if batch.ffn is not None:
        f = batch.ffn
        out["ffn"] = {"W1": f.W1[c].tolist(), "b1": f.b1[c].tolist(), "W2": f.W2[c].tolist(), "b2": f.b2[c].tolist(),
                      "activation": f.activation, "residual": f.residual}
    return out


def arb_view(config_dict: dict, claim: claims.Claim):
    """The layer step of the configuration in arb at PREC bits (the engine's formulas and witnesses)
    and the claim's comparisons there."""
    case = config.load(config_dict)
    witnesses: dict = {}
    engine_decide.evaluate(FLOAT64, case, claim, witnesses)
    with ctx.workprec(PREC):
        views, comparisons = engine_decide.evaluate(BALL, case, claim, witnesses)
    return views[0], comparisons


def _outside(ball: arb, lo: float, hi: float) -> bool:
    """arb's ball lies certainly outside [lo, hi] (nan bounds claim nothing)."""
    return bool(np.isfinite(lo) and ball < arb(lo)) or bool(np.isfinite(hi) and ball > arb(hi))


def contradictions(claim_id: str, batch: tier3.Batch) -> list[str]:
    """Every way tier 3 disagrees with arb on the batch (empty when sound)."""
    claim = claims.get(claim_id)
    names = set().union(*(expr.parse(side, set(PRIMITIVES)).names
                          for q in claim.inequalities for side in (q.lhs, q.rhs)))
    view = tier3.layer_view(batch)
    with np.errstate(all="ignore"):
        values = {name: view.get(name) for name in names}
        P = view.step.P
        P_lo, P_hi = P.lo, P.hi
        bounds = {name: (np.broadcast_to(value.lo, batch.X.shape[:1]), np.broadcast_to(value.hi, batch.X.shape[:1]))
                  for name, value in values.items()}
    verdicts = tier3.decide(claim_id, batch)
    bad = []
    for c in range(batch.X.shape[0]):
        reference, comparisons = arb_view(config_of(batch, c), claim)
        with ctx.workprec(PREC):
            for (i, j), p in np.ndenumerate(reference.step.P):
                if _outside(p, P_lo[c, i, j], P_hi[c, i, j]):
                    bad.append(f"{c}: P[{i},{j}] = {p} outside [{P_lo[c, i, j]}, {P_hi[c, i, j]}]")
            for name, (lo, hi) in bounds.items():
                if _outside(reference.get(name), lo[c], hi[c]):
                    bad.append(f"{c}: {name} = {reference.get(name)} outside [{lo[c]}, {hi[c]}]")
        if verdicts[c] == tier3.HOLDS:
            outcomes = {q.outcome for q in comparisons}
            goal = engine.target(claim_id, None)
            if False in outcomes or None in outcomes and engine.check(config_of(batch, c), goal=goal).verdict != engine.HOLDS:
                bad.append(f"{c}: {claim_id} holds in tier 3 but not in arb")
    return bad


def _batch_for(form: str, count: int, n: int, d: int, seed: int, thin: bool) -> tier3.Batch:
    return adversarial_batch(count, n, d, seed, thin=thin, **FORMS[form])


def _claim_of(form: str) -> str:
    return form.split("/")[0]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_enclosures_and_verdicts_against_arb(form):
    for thin, (n, d) in ((False, (3, 2)), (True, (4, 3))):
        batch = _batch_for(form, 150, n, d, seed=sorted(FORMS).index(form) * 10 + n, thin=thin)
        assert contradictions(_claim_of(form), batch) == []


@pytest.mark.slow
def test_enclosures_and_verdicts_against_arb_on_100000_configurations():
    shapes = [(3, 2, False), (4, 3, True), (5, 4, False), (6, 4, True)]
    per_batch = 100_000 // (len(FORMS) * len(shapes) * 2) + 1
    for form in sorted(FORMS):
        for k, (n, d, thin) in enumerate(shapes):
            for seed in range(2):
                batch = _batch_for(form, per_batch, n, d, 5000 + 7 * k + seed, thin)
                assert contradictions(_claim_of(form), batch) == []


def test_decides_most_gaussian_configurations_of_every_form():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((500, 8, 4))
    A = rng.standard_normal((500, 4, 4)) * 0.2
    V = rng.standard_normal((500, 4, 4))
    causal = np.tril(np.ones((8, 8), dtype=bool))
    expected = {"collapse.global": {}, "collapse.tanh": {}, "collapse.dobrushin": {"mask": causal},
                "value.expansive": {"V": V}, "residual.two_sided": {"V": V * 0.3, "residual": True}}
    for claim, parts in expected.items():
        assert np.mean(tier3.decide(claim, tier3.Batch(X=X, A=A, **parts)) == tier3.HOLDS) > 0.99, claim
    ffn = tier3.FeedForwardBatch(W1=rng.standard_normal((500, 6, 4)) / 3, b1=rng.standard_normal((500, 6)),
                                 W2=rng.standard_normal((500, 4, 6)) / 3, b2=rng.standard_normal((500, 4)))
    assert np.mean(tier3.decide("ffn.lipschitz", tier3.Batch(X=X, A=A, ffn=ffn)) == tier3.HOLDS) > 0.99
    ffn.activation = "gelu"  # erf by its series in the backend
    assert np.mean(tier3.decide("ffn.lipschitz", tier3.Batch(X=X, A=A, ffn=ffn)) == tier3.HOLDS) > 0.99
    # two antipodal tokens attain collapse.tanh exactly: an equality tier 3 must not decide
    antipodal = np.array([[[1.0, 0.0], [-1.0, 0.0]]])
    A = np.array([[[0.3, 0.0], [0.0, 0.0]]])
    assert tier3.decide("collapse.tanh", tier3.Batch(X=antipodal, A=A))[0] == tier3.UNDECIDED


def _exact(values: np.ndarray) -> list[arb]:
    return [arb(float(v)) for v in np.ravel(values)]


def backend_contradictions(seed: int = 0, count: int = 2000) -> list[str]:
    """The elementwise operations, sums and products of the backend on exact binary64 inputs of
    every magnitude (their enclosures are a few ulps wide) against arb."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(count) * 10.0 ** rng.integers(-30, 30, count)
    y = rng.standard_normal(count) * 10.0 ** rng.integers(-30, 30, count)
    small = rng.uniform(-30, 30, count)
    ar, bad = MidRad64(), []
    results = {"x+y": (MidRad(x) + y, lambda a, b, s: a + b), "x*y": (MidRad(x) * y, lambda a, b, s: a * b),
               "x/y": (MidRad(x) / y, lambda a, b, s: a / b), "exp": (ar.exp(MidRad(small)), lambda a, b, s: s.exp()),
               "tanh": (ar.tanh(MidRad(small)), lambda a, b, s: s.tanh()),
               "sqrt": (ar.sqrt_nonneg(MidRad(np.abs(x))), lambda a, b, s: abs(a).sqrt())}
    with ctx.workprec(PREC), np.errstate(all="ignore"):
        for name, (value, exact) in results.items():
            lo, hi = value.lo, value.hi
            for k, (a, b, s) in enumerate(zip(_exact(x), _exact(y), _exact(small))):
                if _outside(exact(a, b, s), lo[k], hi[k]):
                    bad.append(f"{name} at {k}")
        M, N = rng.standard_normal((40, 30)), rng.standard_normal((30, 20)) * 1e-3
        product, total = ar.matmul(MidRad(M), MidRad(N)), MidRad(M).sum(axis=-1)
        exact_product = arb_mat(M.tolist()) * arb_mat(N.tolist())
        for (i, j), _ in np.ndenumerate(product.mid):
            if _outside(exact_product[i, j], product.lo[i, j], product.hi[i, j]):
                bad.append(f"matmul at {i},{j}")
        for i in range(M.shape[0]):
            if _outside(sum(_exact(M[i]), arb(0)), total.lo[i], total.hi[i]):
                bad.append(f"sum at {i}")
    return bad


def test_backend_operations_against_arb():
    assert backend_contradictions() == []


def _corners(mid: np.ndarray, rad: np.ndarray) -> tuple[list[arb], list[arb]]:
    """The exact ends mid -+ rad of each enclosure, as arb numbers (exact at PREC bits)."""
    return ([arb(float(m)) - arb(float(r)) for m, r in zip(mid.ravel(), rad.ravel())],
            [arb(float(m)) + arb(float(r)) for m, r in zip(mid.ravel(), rad.ravel())])


def radius_contradictions(seed: int = 5, count: int = 600) -> list[str]:
    """The operations on enclosures with radii (x +- x_r, y +- y_r, the divisor's away from 0) against
    arb at every corner of the boxes (+, -, *, / and exp are monotone in each argument there, so their
    ranges are reached at corners), the maximum and minimum along an axis at the lower ends, the upper
    ends and the midpoints, and products of matrices with radii at sign patterns of their ends."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(count) * 10.0 ** rng.integers(-8, 8, count)
    y = rng.standard_normal(count) * 10.0 ** rng.integers(-8, 8, count)
    rx = np.abs(x) * 10.0 ** rng.uniform(-15, -1, count) * (rng.random(count) < 0.9)
    ry = np.abs(y) * 10.0 ** rng.uniform(-15, -1, count)
    s, rs = rng.uniform(-30, 30, count), 10.0 ** rng.uniform(-16, 0.5, count)  # some rs > 1: exp's wide path
    X, Y, S, ar, bad = MidRad(x, rx), MidRad(y, ry), MidRad(s, rs), MidRad64(), []
    operations = {"x+y": (X + Y, lambda a, b, c: a + b), "x-y": (X - Y, lambda a, b, c: a - b),
                  "x*y": (X * Y, lambda a, b, c: a * b), "x/y": (X / Y, lambda a, b, c: a / b),
                  "exp": (ar.exp(S), lambda a, b, c: c.exp())}
    with ctx.workprec(PREC), np.errstate(all="ignore"):
        ends = [_corners(x, rx), _corners(y, ry), _corners(s, rs)]
        for name, (value, exact) in operations.items():
            lo, hi = value.lo, value.hi
            for k in range(count):
                for a in (ends[0][0][k], ends[0][1][k]):
                    for b in (ends[1][0][k], ends[1][1][k]):
                        c = ends[2][0][k] if rng.random() < 0.5 else ends[2][1][k]
                        if _outside(exact(a, b, c), lo[k], hi[k]):
                            bad.append(f"{name} at {k}")
        M = MidRad(rng.standard_normal((count // 6, 6)), 10.0 ** rng.uniform(-14, -1, (count // 6, 6)))
        for name, reduce, pick in (("maximum", ar.maximum, max), ("minimum", ar.minimum, min)):
            value = reduce(M)
            low, high = _corners(M.mid, M.rad)
            middle = _exact(M.mid)
            for i in range(M.shape[0]):
                row = slice(6 * i, 6 * i + 6)
                for points in (low[row], high[row], middle[row]):
                    if _outside(pick(points, key=lambda v: float(v.mid())), value.lo[i], value.hi[i]):
                        bad.append(f"{name} at {i}")
        A = MidRad(rng.standard_normal((12, 7)), 10.0 ** rng.uniform(-14, -2, (12, 7)))
        B = MidRad(rng.standard_normal((7, 5)) * 1e3, 10.0 ** rng.uniform(-12, 0, (7, 5)))
        for product, transposed in ((ar.matmul(A, B), False), (ar.matmul(A, np.swapaxes(A, -1, -2)), True)):
            for _ in range(4):
                signs_a, signs_b = rng.choice([-1.0, 1.0], A.shape), rng.choice([-1.0, 1.0], B.shape)
                a = arb_mat([[arb(float(A.mid[i, j])) + signs_a[i, j] * arb(float(A.rad[i, j]))
                              for j in range(A.shape[1])] for i in range(A.shape[0])])
                b = a.transpose() if transposed else arb_mat(
                    [[arb(float(B.mid[i, j])) + signs_b[i, j] * arb(float(B.rad[i, j])) for j in range(B.shape[1])]
                     for i in range(B.shape[0])])
                exact = a * b
                for (i, j), _ in np.ndenumerate(product.mid):
                    if _outside(exact[i, j], product.lo[i, j], product.hi[i, j]):
                        bad.append(f"matmul{' (Gram)' if transposed else ''} at {i},{j}")
    return bad


def test_operations_on_enclosures_with_radii_against_arb():
    assert radius_contradictions() == []


def test_planted_fault_matmul_without_the_second_operands_radius_is_caught(monkeypatch):
    """outer_upper given only the first pair (A's rounding and radius against ||b_j||): the products'
    enclosures then miss the share of B's radius, and the corners must show it."""
    original = midrad64.outer_upper
    monkeypatch.setattr(midrad64, "outer_upper", lambda lefts, rights, count: original(lefts[:1], rights[:1], count))
    assert any(problem.startswith("matmul") for problem in radius_contradictions(count=60))


def erf_contradictions(seed: int = 11) -> list[str]:
    """erf (GELU's) at binary64 points of every kind against mpmath at 160 bits: each point where the
    enclosure misses erf, or is loose (over 1e-12 relative where erf is neither tiny nor saturated);
    with radii, where it misses erf at an end."""
    rng = np.random.default_rng(seed)
    edges = [0.0, 5e-324, 2.2250738585072014e-308, 1e-300, 1e-8, 0.5, 1.0, 5.999999999999999, 6.0,
             6.000000000000001, 27.0, 1e300, math.inf]
    t = np.concatenate([edges, rng.uniform(-8, 8, 6000), rng.standard_normal(2000) * 10.0 ** rng.uniform(-20, 0, 2000),
                        6.0 + rng.integers(-50, 50, 500) * 2.0**-50])
    t = np.concatenate([t, -t])
    enclosure = MidRad64.erf(MidRad(t))
    mid, rad = rng.uniform(-7, 7, 300), 10.0 ** rng.uniform(-16, 0, 300)
    wide = MidRad64.erf(MidRad(mid, rad))
    bad = []
    with mpmath.workprec(160):
        for point, lo, hi in zip(t, enclosure.lo, enclosure.hi):
            exact = mpmath.erf(mpmath.mpf(float(point)))
            if not mpmath.mpf(float(lo)) <= exact <= mpmath.mpf(float(hi)):
                bad.append(f"erf({point!r}) = {exact} outside [{lo!r}, {hi!r}]")
            elif 1e-300 < abs(point) < 6 and hi - lo > 1e-12 * abs(float(exact)):
                bad.append(f"erf({point!r}): [{lo!r}, {hi!r}] is loose")
        for m, r, lo, hi in zip(mid, rad, wide.lo, wide.hi):
            for end in (mpmath.mpf(float(m)) - float(r), mpmath.mpf(float(m)) + float(r)):
                if not mpmath.mpf(float(lo)) <= mpmath.erf(end) <= mpmath.mpf(float(hi)):
                    bad.append(f"erf over {m!r} +- {r!r} misses erf({end})")
    return bad


def test_erf_against_mpmath_at_every_edge():
    assert erf_contradictions() == []
    assert np.isnan(MidRad64.erf(MidRad(np.array([np.nan]))).lo).all()


def test_planted_fault_erf_saturating_too_early_is_caught(monkeypatch):
    """erf(s) read as [1 - 2^-53, 1] from s = 5 on (erfc(5) is 1.5e-12): the cross-check must see it."""
    monkeypatch.setattr(midrad64, "_ERF_SATURATES", 5.0)
    assert any("outside" in problem for problem in erf_contradictions())


def _narrowed(bound, ulps: int, towards: float):
    """The read-out of an enclosure's end moved `ulps` ulps inwards."""
    def moved(self):
        value = bound(self)
        for _ in range(ulps):
            value = np.nextafter(value, towards)
        return value
    return property(moved)


@pytest.mark.parametrize("ulps", [1, 2])
def test_planted_fault_narrowed_enclosures_are_caught(monkeypatch, ulps):
    """Every enclosure read `ulps` ulps narrower: the operations' enclosures are tight to an ulp, so
    one is caught there; the claims' primitives carry a few roundings, so two are caught there."""
    monkeypatch.setattr(MidRad, "lo", _narrowed(MidRad.lo.fget, ulps, np.inf))
    monkeypatch.setattr(MidRad, "hi", _narrowed(MidRad.hi.fget, ulps, -np.inf))
    if ulps == 1:
        assert len(backend_contradictions(count=300)) > 0
    else:
        assert len(contradictions("collapse.dobrushin", _batch_for("collapse.dobrushin", 120, 3, 2, 77, False))) > 0


def test_bad_batches_are_bad_input():
    X = np.zeros((2, 3, 2))
    with pytest.raises(BadInput):
        tier3.decide("collapse.global", tier3.Batch(X=X))
    with pytest.raises(BadInput):
        tier3.decide("collapse.global", tier3.Batch(X=X + np.nan, A=np.zeros((2, 2, 2))))
    with pytest.raises(BadInput):
        tier3.decide("value.bounded", tier3.Batch(X=X, A=np.zeros((2, 2, 2))))
    with pytest.raises(BadInput):  # value.expansive needs V, the collapse claims have none
        tier3.decide("value.expansive", tier3.Batch(X=X, A=np.zeros((2, 2, 2))))
    with pytest.raises(BadInput):
        tier3.decide("collapse.global", tier3.Batch(X=X, A=np.zeros((2, 2, 2)), V=np.ones((2, 2, 2))))


def test_a_batch_of_numbers_that_are_not_binary64_is_bad_input():
    """Integers past 2^53 (or wider floats) in a batch's arrays were read as their nearest binary64 numbers, so tier 3
    decided another configuration than the one given: tokens 2^53 + 1 and 2^53 (D = 1) were read as one point, and the
    bound 0.5 - D, which arb finds violated, held.  Such arrays, booleans and objects are bad input; integers and
    narrower floats that are binary64 numbers are read as they are."""
    X = np.array([[[2**53 + 1], [2**53]]], dtype=np.int64)
    goal = engine.target(bound="0.5 - D")
    assert engine.check({"X": X[0].tolist(), "A": [[0]]}, goal=goal).verdict == engine.VIOLATED
    with pytest.raises(BadInput):
        tier3.decide(goal.claim, tier3.Batch(X=X, A=np.zeros((1, 1, 1))))
    ones = np.ones((1, 2, 1))
    for parts in (dict(X=ones, A=np.ones((1, 1, 1), dtype=np.uint64) * (2**64 - 1)),
                  dict(X=ones, A=np.ones((1, 1, 1)), beta=2**60 + 1),
                  dict(X=ones.astype(np.longdouble) + np.longdouble(2) ** -60, A=np.ones((1, 1, 1))),
                  dict(X=ones.astype(bool), A=np.ones((1, 1, 1))), dict(X=ones.astype(object), A=np.ones((1, 1, 1)))):
        with pytest.raises(BadInput):
            tier3.decide(goal.claim, tier3.Batch(**parts))
    exact = tier3.Batch(X=np.array([[[2**53], [1]]], dtype=np.int64), A=np.zeros((1, 1, 1), dtype=np.float32), beta=2**60)
    assert list(tier3.decide(engine.target(bound="D").claim, exact)) == [tier3.HOLDS]


def test_a_batch_changed_after_a_decision_is_checked_again():
    """A batch was checked once and then remembered as checked, on the caller's own object: tokens 2^53 + 1 and 2^53
    put into it afterwards (batch.X = ..., dataclasses.replace, an integer array changed in place) went unchecked,
    were read as one point, and tier 3 held the bound 0.5 - D that arb finds violated."""
    goal = engine.target(bound="0.5 - D")
    X = np.array([[[2**53 + 1], [2**53]]], dtype=np.int64)
    assigned = tier3.batch_of_configs([{"X": [[0.0], [0.25]], "A": [[0.0]]}])
    tokens = np.zeros((1, 2, 1), dtype=np.int64)
    in_place = tier3.Batch(X=tokens, A=np.zeros((1, 1, 1)))
    for batch in (assigned, in_place):
        assert list(tier3.decide(goal.claim, batch)) == [tier3.HOLDS]
    replaced = dataclasses.replace(assigned, X=X)
    assigned.X = X
    tokens[...] = X
    for batch in (assigned, replaced, in_place):
        with pytest.raises(BadInput):
            tier3.decide(goal.claim, batch)


def test_a_batch_with_parts_of_the_wrong_kind_is_bad_input():
    """A residual flag "no" was read by its truth (a residual connection), a mask entry 0.5 as an edge, and a part
    that is no numpy array (a list, an FFN given as a dict), or a batch that is no Batch, failed with AttributeError."""
    X, A, V = np.array([[[0.1], [0.3]]]), np.ones((1, 1, 1)), np.full((1, 1, 1), 0.5)
    ffn = dict(W1=np.ones((1, 1, 1)), b1=np.zeros((1, 1)), W2=np.ones((1, 1, 1)), b2=np.zeros((1, 1)))
    for parts in (dict(X=X, A=A, V=V, residual="no"), dict(X=X, A=A, V=V, residual=None),
                  dict(X=X, A=A, mask=np.array([[1, 0], [0.5, 1]])), dict(X=X, A=A, mask=np.array([[1, 0], [2, 1]])),
                  dict(X=X.tolist(), A=A), dict(X=None, A=A), dict(X=X, A=A.tolist()), dict(X=X, A=A, ffn=ffn),
                  dict(X=X, A=A, ffn=tier3.FeedForwardBatch(**ffn, residual="no"))):
        with pytest.raises(BadInput):
            tier3.decide(engine.target(bound="D").claim, tier3.Batch(**parts))
    with pytest.raises(BadInput):  # configurations, not the Batch that batch_of_configs makes of them
        tier3.evaluate("collapse.global", [{"X": X[0].tolist(), "A": A[0].tolist()}])
    causal = tier3.Batch(X=X, A=A, mask=np.array([[1, 0], [1, 1]]))  # 0/1 numbers are a mask, as booleans are
    assert list(tier3.decide("collapse.dobrushin", causal)) == list(
        tier3.decide("collapse.dobrushin", dataclasses.replace(causal, mask=causal.mask == 1)))


def test_numpy_integers_past_two_to_the_53_in_configurations_are_bad_input():
    """numpy integer scalars in a configuration's lists (np.int64(2^53 + 1)) passed as binary64 numbers, as numpy
    compares them with their float in binary64: tier 3 read the tokens 2^53 + 1 and 2^53 as one point and held the
    bound 0.5 - D, which arb (reading the integers exactly) finds violated; so did np.uint64(2^64 - 1) and a beta of
    np.int64(2^60 + 1).  They are bad input now; numpy integers that are binary64 numbers are read as they are."""
    goal = engine.target(bound="0.5 - D")
    for X in ([[np.int64(2**53 + 1)], [np.int64(2**53)]], [[np.uint64(2**64 - 1)], [np.uint64(2**64 - 2)]],
              [[np.int64(2**53 + 1)], [0.5]]):
        config_dict = {"X": X, "A": [[0.0]]}
        assert engine.check(config_dict, goal=goal).verdict == engine.VIOLATED
        with pytest.raises(BadInput):
            tier3.batch_of_configs([config_dict])
    with pytest.raises(BadInput):
        tier3.batch_of_configs([{"X": [[0.0], [1.0]], "A": [[1.0]], "beta": np.int64(2**60 + 1)}])
    exact = tier3.batch_of_configs([{"X": [[np.int64(2**60)], [np.int64(3)]], "A": [[0.0]], "beta": np.uint64(2**63)}])
    assert exact.X[0, 0, 0] == 2.0**60 and exact.beta[0] == 2.0**63


def test_a_matrix_whose_gram_overflows_leaves_its_configuration_undecided_and_the_batch_decided():
    """Finite binary64 matrices with entries near 1e200 (A, V, or beta A): A^T A overflows, and numpy's
    eigvalsh on it raised LinAlgError out of tier3.evaluate for the whole batch.  Their norms' witness
    needs only a direction, so such a configuration is "cannot decide" (arb decides it: holds), and
    the ordinary configuration batched with it is still decided."""
    rng = np.random.default_rng(3)
    X, A, V = rng.standard_normal((3, 4, 3)), rng.standard_normal((3, 3, 3)), rng.standard_normal((3, 3, 3))
    big = [dict(X=X * 1e-200, A=A * 1e200, beta=1.0, V=V),  # A itself
           dict(X=X, A=A, beta=1e300, V=V),  # beta A
           dict(X=X, A=A / 8, beta=1.0, V=V * 1e200)]  # V
    for parts in big:
        batch = tier3.Batch(X=X[:2].copy(), A=A[:2].copy(), V=V[:2].copy(), beta=np.ones(2))
        batch.X[1], batch.A[1], batch.V[1], batch.beta[1] = parts["X"][2], parts["A"][2], parts["V"][2], parts["beta"]
        verdicts = tier3.decide("value.expansive", batch)
        assert verdicts[0] == tier3.HOLDS
        assert verdicts[1] == tier3.UNDECIDED
        assert engine.check(config_of(batch, 1), "value.expansive").verdict == engine.HOLDS


def _relu_layer(**ffn) -> dict:
    """Two tokens that attend to themselves (A = 100 I), then a ReLU FFN with W1 = W2 = I."""
    return {"X": [[-1.0, -3.0], [-3.0, -1.0]], "A": [[100.0, 0.0], [0.0, 100.0]],
            "ffn": {"W1": [[1.0, 0.0], [0.0, 1.0]], "W2": [[1.0, 0.0], [0.0, 1.0]], "b2": [0.0, 0.0],
                    "activation": "relu", **ffn}}


def test_batch_of_configs_reads_each_configuration_as_the_engine_does():
    """A bias b1 in some configurations only was read as zero for all of them: with b1 = 10 the ReLU passes the
    tokens (D_out = D, so D_out <= D/2 is violated), with b1 = 0 it gives D_out = 0, and tier 3 said holds."""
    goal = engine.target(None, "D/2")
    without, with_bias = _relu_layer(), _relu_layer(b1=[10.0, 10.0])
    assert engine.check(with_bias, goal=goal).verdict == engine.VIOLATED
    assert engine.check(without, goal=goal).verdict == engine.HOLDS
    with pytest.raises(BadInput):
        tier3.batch_of_configs([without, with_bias])
    assert list(tier3.decide(goal.claim, tier3.batch_of_configs([with_bias, with_bias]))) == [tier3.UNDECIDED] * 2
    assert list(tier3.decide(goal.claim, tier3.batch_of_configs([without]))) == [tier3.HOLDS]
    # numbers the engine reads otherwise than binary64 would (a decimal string exactly, an integer whole)
    for X in ([["0.1", 0.0], [1.0, 2.0]], [[2**53 + 1, 0.0], [1.0, 2.0]], [[True, False], [False, True]]):
        with pytest.raises(BadInput):
            tier3.batch_of_configs([{"X": X, "A": [[1.0, 0.0], [0.0, 1.0]]}])
    # a boolean among floats: numpy reads it as 1.0 or 0.0 without a trace, config.load refuses it
    for X in ([[1.0, True], [0.0, 2.0]], [[1.0, 0.5], [False, 2.0]], [[1.0, 0.5], [np.True_, 2.0]]):
        with pytest.raises(BadInput):
            engine.check({"X": X, "A": [[1.0, 0.0], [0.0, 1.0]]})
        with pytest.raises(BadInput):
            tier3.batch_of_configs([{"X": X, "A": [[1.0, 0.0], [0.0, 1.0]]}])
    with pytest.raises(BadInput):  # in another part, and in one configuration of several
        tier3.batch_of_configs([{"X": [[1.0, 0.0], [0.0, 1.0]], "A": [[1.0, 0.0], [0.0, 1.0]]},
                                {"X": [[1.0, 0.0], [0.0, 1.0]], "A": [[1.0, 0.0], [0.0, True]]}])
    for big in (2**60, 2**70):  # integers that are binary64 numbers
        exact = tier3.batch_of_configs([{"X": [[big, 0], [1.0, 2.0]], "A": [[1.0, 0.0], [0.0, 1.0]]}])
        assert exact.X[0, 0, 0] == float(big) and exact.X.dtype == np.float64
    with pytest.raises(BadInput):  # ragged rows
        tier3.batch_of_configs([{"X": [[1.0, 0.0], [1.0]], "A": [[1.0, 0.0], [0.0, 1.0]]}])
    for bad in ({"activation": "tanh"}, {"residual": 1}, {"b3": [0.0, 0.0]}):
        with pytest.raises(BadInput):
            tier3.batch_of_configs([_relu_layer(**bad)])
    for bad in ({"residual": "yes"}, {"beta": True}, {"beta": "0.5"}):
        with pytest.raises(BadInput):
            tier3.batch_of_configs([{"X": [[1.0, 0.0], [0.0, 1.0]], "A": [[1.0, 0.0], [0.0, 1.0]], **bad}])


def test_a_head_the_engine_refuses_is_bad_input_not_decided():
    """A with a stray W_Q, or with d_k, was decided as A alone ("holds") where config.load refuses the configuration:
    tier 3 takes exactly one head, A or both W_Q and W_K, and d_k, b_Q, b_K with W_Q and W_K only."""
    base = {"X": [[0.0, 0.0], [1.0, 0.0]], "A": [[1.0, 0.0], [0.0, 1.0]]}
    for extra in ({"W_Q": [[1.0], [0.0]]}, {"W_K": [[1.0], [0.0]]}, {"d_k": 1}, {"b_Q": [1.0]}, {"b_K": [1.0]}):
        config_dict = {**base, **extra}
        with pytest.raises(BadInput):
            engine.check(config_dict, "collapse.global")
        with pytest.raises(BadInput):
            tier3.decide("collapse.global", tier3.batch_of_configs([config_dict]))
    X, head = np.ones((1, 2, 2)), np.ones((1, 2, 1))
    for parts in (dict(A=np.eye(2)[None], W_Q=head), dict(A=np.eye(2)[None], d_k=1), dict(W_Q=head, d_k=1)):
        with pytest.raises(BadInput):
            tier3.decide("collapse.global", tier3.Batch(X=X, **parts))
    assert list(tier3.decide("collapse.global", tier3.batch_of_configs([base]))) == [tier3.HOLDS]


def test_an_empty_batch_decides_nothing_without_failing():
    """A batch of no configuration made tier3.evaluate fail with numpy's ValueError (a reshape of an empty array)."""
    ffn = tier3.FeedForwardBatch(W1=np.zeros((0, 3, 2)), b1=np.zeros((0, 3)), W2=np.zeros((0, 2, 3)), b2=np.zeros((0, 2)))
    for claim, parts in (("collapse.global", {}), ("ffn.lipschitz", {"ffn": ffn})):
        verdicts, lhs, rhs = tier3.evaluate(claim, tier3.Batch(X=np.zeros((0, 3, 2)), A=np.zeros((0, 2, 2)), **parts))
        assert verdicts.shape == lhs.shape == rhs.shape == (0,)


def test_batch_of_configs_reads_numpy_masks_as_the_engine_does():
    """A mask given as a numpy array (which config.load reads) made batch_of_configs fail with numpy's "truth value of
    an array is ambiguous" instead of reading it: 0/1 and boolean arrays and a name are read as the engine reads them,
    entries other than 0 and 1 are bad input in both."""
    base = {"X": [[0.3, 0.0], [1.0, 2.0], [0.5, -1.0]], "A": [[0.1, 0.0], [0.0, 0.1]]}
    causal = np.tril(np.ones((3, 3)))
    expected = tier3.batch_of_configs([{**base, "mask": causal.astype(int).tolist()}] * 2).mask
    for mask in (causal, causal.astype(np.int64), causal.astype(bool), np.array("causal")):
        config_dict = {**base, "mask": mask}
        assert np.array_equal(tier3.batch_of_configs([config_dict] * 2).mask, expected)
        assert engine.check(config_dict, "collapse.dobrushin").verdict in (engine.HOLDS, engine.UNDECIDED)
    for reader in (lambda c: engine.check(c, "collapse.dobrushin"), lambda c: tier3.batch_of_configs([c])):
        with pytest.raises(BadInput):
            reader({**base, "mask": 2 * causal})


def test_batch_of_configs_reads_numpy_scalars_as_the_engine_does():
    """A numpy scalar d_k (np.int64(1)) or residual flag (np.True_), which config.load reads as its value, was bad
    input to batch_of_configs."""
    base = {"X": [[1.0, 0.0], [-1.0, 0.5], [0.25, 1.0]]}
    for config_dict, claim in (({**base, "W_Q": np.ones((2, 1)), "W_K": np.ones((2, 1)), "d_k": np.int64(1)},
                                "collapse.global"),
                               ({**base, "A": np.eye(2) / 4, "V": np.eye(2) / 2, "residual": np.True_},
                                "residual.two_sided")):
        assert engine.check(config_dict, claim).verdict == engine.HOLDS
        assert list(tier3.decide(claim, tier3.batch_of_configs([config_dict]))) == [tier3.HOLDS]


@pytest.mark.parametrize("configs", [None, [None], [1, 2], "abc", ({"X": [[0.0], [1.0]], "A": [[1.0]]} for _ in range(2))],
                         ids=["none", "list-of-none", "ints", "string", "generator"])
def test_batch_of_configs_of_what_is_no_list_of_configurations_is_bad_input(configs):
    """None or [1, 2] raised TypeError, a string was read as configurations with keys "a", "b", "c", and a generator,
    used up by the first look at it, as configurations without tokens."""
    with pytest.raises(BadInput, match="a list of configuration dicts"):
        tier3.batch_of_configs(configs)


def test_batches_of_mismatched_shapes_are_bad_input():
    """Parts that do not fit X were a numpy error (or broadcast over other configurations), not bad input."""
    X, A = np.ones((2, 3, 2)), np.ones((2, 2, 2))
    bad = [dict(A=np.ones((2, 3, 3))), dict(A=np.ones((3, 2, 2))), dict(A=A, beta=np.ones(5)),
           dict(A=A, mask=np.ones((2, 2), dtype=bool)), dict(A=A, mask=np.zeros((3, 3), dtype=bool)),
           dict(W_Q=np.ones((2, 2, 2)), W_K=np.ones((2, 2, 3)), d_k=2), dict(W_Q=np.ones((2, 2, 1)), W_K=np.ones((2, 2, 1))),
           dict(A=A, V=np.ones((2, 3, 3))),
           dict(A=A, ffn=tier3.FeedForwardBatch(W1=np.ones((2, 4, 2)), b1=np.ones((2, 3)), W2=np.ones((2, 2, 4)),
                                                b2=np.ones((2, 2))))]
    for parts in bad:
        with pytest.raises(BadInput):
            tier3.decide("collapse.global", tier3.Batch(X=X, **parts))
    with pytest.raises(BadInput):
        tier3.decide("collapse.global", tier3.Batch(X=np.ones((2, 1, 2)), A=A))


def test_batch_of_configs_reads_every_covered_form():
    batch = adversarial_batch(4, 4, 3, seed=3, thin=True, value=True, residual=True, mask=True, ffn="relu")
    again = tier3.batch_of_configs([config_of(batch, c) for c in range(4)])
    for key in ("X", "W_Q", "W_K", "b_Q", "b_K", "V", "mask"):
        assert np.array_equal(getattr(again, key), getattr(batch, key)), key
    assert again.residual and again.d_k == batch.d_k and np.array_equal(again.ffn.W2, batch.ffn.W2)
    assert np.array_equal(again.beta, batch.beta)


@pytest.mark.parametrize("claim", ["collapse.tanh", "collapse.dobrushin", "init.scaling"])
def test_campaign_tier3_first_then_arb(tmp_path, claim):
    from certify.search import campaign
    spec = dict(distribution="gaussian", n=4, d=2, count=60, seed=3, claim=claim)
    fast = campaign.run(campaign.Campaign(**spec, tier="tier3"), tmp_path / "tier3", workers=1)
    slow = campaign.run(campaign.Campaign(**spec), tmp_path / "arb", workers=1)
    assert fast["counts"] == slow["counts"]
    # every third configuration (the sampled holds, with certificates) goes to arb anyway
    assert fast["tiers"].get("tier3", 0) >= 35 and fast["tiers"]["arb"] >= 20 and slow["tiers"] == {"arb": 60}
    assert fast["certificates"]["holds"] == slow["certificates"]["holds"] > 0
    records = {r["i"]: r for r in campaign.records(tmp_path / "tier3")}
    assert {r["tier"] for r in records.values()} <= {"tier3", "arb"}
    for r in campaign.records(tmp_path / "arb"):  # every tier-3 verdict is arb's
        assert records[r["i"]]["verdict"] == r["verdict"]
    assert campaign.Campaign(**spec).validated().manifest()["tier"] == "arb"  # part of what a resume must match


def test_tier3_figures_are_labelled_as_bounds(tmp_path):
    """A tier-3 record's lhs/rhs and margin come from its enclosures' ends: the printed summary says so."""
    from certify.cli import sample
    from certify.search import campaign
    summary = campaign.run(campaign.Campaign("gaussian", 4, 2, 40, 3, tier="tier3"), tmp_path, workers=1)
    assert summary["tiers"].get("tier3")
    line = next(line for line in sample.render(summary, str(tmp_path)) if "decided by" in line)
    assert "tier-3 records: lhs/rhs from above, relative margins from below" in line
    assert "tier-3" not in campaign.tiers_line({**summary, "tiers": {"arb": 40}})


def test_tier3_campaigns_take_larger_chunks(tmp_path):
    """Tier 3 pays a fixed cost per batch: its chunks hold up to TIER3_CHUNK_ENTRIES n x max(n, d) entries
    (an arb campaign keeps MAX_CHUNK), and a resumed run continues from whatever chunks were written."""
    import json
    from certify.search import campaign
    spec = dict(distribution="gaussian", n=8, d=4, count=3000, seed=1)
    assert campaign.Campaign(**spec).chunk_limit == campaign.MAX_CHUNK == 64
    assert campaign.Campaign(**spec, tier="tier3").chunk_limit == 1024
    assert campaign.Campaign(**{**spec, "n": 64, "d": 64}, tier="tier3").chunk_limit == campaign.MAX_CHUNK
    campaign.run(campaign.Campaign(**spec, tier="tier3"), tmp_path, workers=1, stop_after=1)
    sizes = [c["records"] for c in json.loads((tmp_path / "manifest.json").read_text())["chunks"]]
    assert sizes == [1]  # a run stopped after K sizes its chunks from K, not from what is left
    summary = campaign.run(campaign.Campaign(**spec, tier="tier3"), tmp_path, workers=1)
    sizes = [c["records"] for c in json.loads((tmp_path / "manifest.json").read_text())["chunks"]]
    # the rest in CHUNKS_PER_WORKER chunks for one worker, each larger than an arb campaign's
    assert sizes[0] == 1 and len(sizes) == 1 + campaign.CHUNKS_PER_WORKER and min(sizes[1:]) > campaign.MAX_CHUNK
    assert sum(summary["counts"].values()) == 3000 and summary["tiers"]["tier3"] > 2900


def test_campaign_tier3_refuses_what_it_cannot_decide(tmp_path):
    from certify.search import campaign
    with pytest.raises(BadInput):
        campaign.Campaign("gaussian", 4, 2, 5, 0, claim="collapse.trajectory", tier="tier3").validated()
    with pytest.raises(BadInput):
        campaign.Campaign("gaussian", 4, 2, 5, 0, tier="float").validated()
    with pytest.raises(BadInput):
        campaign.Campaign("gaussian", 4, 2, 5, 0, claim="value.expansive", tier="tier3").validated()


def test_campaign_says_when_the_float64_tier_is_off(tmp_path, monkeypatch):
    from certify.search import campaign
    from certify.core.arith import fpmodel
    monkeypatch.setattr(fpmodel, "tier3_usable", lambda: (False, "the rigorous float64 tier is off: a probe"))
    summary = campaign.run(campaign.Campaign("gaussian", 3, 2, 6, 0, tier="tier3"), tmp_path, workers=1)
    assert summary["tiers"] == {"arb": 6} and summary["tier3_off"].startswith("the rigorous float64 tier is off")


def test_campaign_says_where_its_chunks_found_the_float64_tier_off(tmp_path, monkeypatch):
    """The summary's tier3_off was the summarising process's probe, not the chunks': chunks decided where the tier
    was off (a worker of other flags, another machine) fell back to arb without a word, and a run resumed where it
    is off said that arb decided every configuration, tier 3's holds among them."""
    from certify.cli import sample
    from certify.search import campaign
    from certify.core.arith import fpmodel
    off = (False, "the rigorous float64 tier is off: a probe")
    deciding = campaign.decide_chunk

    def off_where_decided(spec, indices):
        with monkeypatch.context() as here:
            here.setattr(fpmodel, "tier3_usable", lambda: off)
            return deciding(spec, indices)

    spec = campaign.Campaign("gaussian", 3, 2, 40, 0, tier="tier3")
    summary = campaign.run(spec, tmp_path, workers=1, stop_after=20)  # tier 3 on
    assert summary["tiers"].get("tier3") and summary["tier3_off"] is None
    monkeypatch.setattr(campaign, "decide_chunk", off_where_decided)
    summary = campaign.run(spec, tmp_path, workers=1)
    assert summary["tier3_off"] == off[1] and summary["tiers"].get("tier3")
    assert f"  {off[1]}; arb decided in its place in this run" in sample.render(summary, str(tmp_path))


def test_a_bound_with_a_constant_past_binary64_leaves_the_tier_undecided_not_crashed():
    """A bound's constant beyond binary64 (1e400) has no binary64 enclosure: tier 3 decides nothing on it (arb
    then does), instead of failing on the constant; 1e-400 * D, whose constant rounds to 0, is still held."""
    rng = np.random.default_rng(12)
    batch = tier3.Batch(X=rng.standard_normal((3, 3, 2)), A=rng.standard_normal((3, 2, 2)) * 0.1)
    for bound in ("1e400 * D", "D - 1e400 * D"):  # the first holds, the second is violated: both undecided here
        verdicts, _, rhs = tier3.evaluate(engine.target(bound=bound).claim, batch)
        assert list(verdicts) == [tier3.UNDECIDED] * 3 and not np.isfinite(rhs).any(), bound
    assert list(tier3.decide(engine.target(bound="D + 1e-400 * D").claim, batch)) == [tier3.HOLDS] * 3


def test_a_power_zero_of_an_undefined_part_is_undefined_not_one():
    """x**0 is x * 0 + 1 (expr.integer_power): 1 only where x is defined, as in arb.  Tier 3's product by an exact 0
    was an exact 0 even of nan, so (1/(D - D))**0*D held in tier 3 (a tier3 campaign reported such holds) where
    arb finds the bound not finite, and (1/(n - n))**0*D, which certify refuses as undefined, held too."""
    rng = np.random.default_rng(14)
    batch = tier3.Batch(X=rng.standard_normal((4, 3, 2)), A=rng.standard_normal((4, 2, 2)) * 0.1)
    for bound in ("(1/(D - D))**0*D", "(D/(a - a))**0*D", "min(1/(D - D), D)**0*D"):
        goal = engine.target(bound=bound)
        assert list(tier3.decide(goal.claim, batch)) == [tier3.UNDECIDED] * 4, bound
        assert engine.check(config_of(batch, 0), goal=goal).verdict != engine.HOLDS, bound
    goal = engine.target(bound="(1/(n - n))**0*D")
    assert list(tier3.decide(goal.claim, batch)) == [tier3.UNDECIDED] * 4
    with pytest.raises(BadInput):
        engine.check(config_of(batch, 0), goal=goal)
    # where the part is defined, its power 0 is 1 and the bound is D, which every layer of pure attention satisfies
    assert list(tier3.decide(engine.target(bound="(1/(D + D))**0*D").claim, batch)) == [tier3.HOLDS] * 4
    with np.errstate(all="ignore"):
        product = MidRad(np.array([np.nan, np.inf, 1.0, 1.0]), np.array([0.0, np.inf, np.nan, 0.5])) * 0
    assert np.isnan(product.lo[:3]).all() and np.isnan(product.hi[:3]).all()
    assert product.lo[3] == product.hi[3] == 0.0


def test_a_square_root_outside_its_domain_leaves_only_its_configuration_undecided():
    """sqrt of an enclosure reaching below 0 has no bound there; it made the whole batch "cannot decide"
    (NotSupported): one configuration of coincident tokens (D's enclosure [-tiny, tiny]) sent every configuration
    of its batch to arb.  It is that configuration's alone now, and the others are decided as without it."""
    rng = np.random.default_rng(15)
    X, A = rng.standard_normal((4, 3, 2)), rng.standard_normal((4, 2, 2)) * 0.1
    goal = engine.target(bound="sqrt(D)*sqrt(D)")
    assert list(tier3.decide(goal.claim, tier3.Batch(X=X, A=A))) == [tier3.HOLDS] * 4
    X[3, 1:] = X[3, :1]
    assert list(tier3.decide(goal.claim, tier3.Batch(X=X, A=A))) == [tier3.HOLDS] * 3 + [tier3.UNDECIDED]
    with np.errstate(all="ignore"):
        root = MidRad64().apply("sqrt", MidRad(np.array([4.0, -1.0, 0.0, np.nan]), np.array([0.0, 0.5, 1e-300, 0.0])))
    assert root.lo[0] <= 2.0 <= root.hi[0] and np.isnan(root.lo[1:]).all() and np.isnan(root.hi[1:]).all()


def _random_bound(rng, depth: int) -> str:
    """A random bound over D, a, n, d, v: sums, products, quotients, whole powers (0 among them), exp, tanh,
    sqrt, min and max of one another and of constants from 1e-300 to 1e300."""
    leaves = ["D", "a", "n", "d", "v", "0", "1", "2", "0.5", "3", "0.1", "1e-20", "1e-300", "1e300"]
    kind = rng.random()
    if depth == 0 or kind < 0.25:
        return str(rng.choice(leaves))
    if kind < 0.45:
        return f"({_random_bound(rng, depth - 1)} {rng.choice(['+', '-', '*', '/'])} {_random_bound(rng, depth - 1)})"
    if kind < 0.6:
        return f"({_random_bound(rng, depth - 1)})**{rng.integers(4)}"
    if kind < 0.7:
        return f"-({_random_bound(rng, depth - 1)})"
    if kind < 0.85:
        return f"{rng.choice(['exp', 'tanh', 'sqrt'])}({_random_bound(rng, depth - 1)})"
    return f"{rng.choice(['min', 'max'])}({_random_bound(rng, depth - 1)}, {_random_bound(rng, depth - 1)})"


def bound_contradictions(seed: int, count: int) -> list[str]:
    """Random bounds on batches with coincident tokens (D = 0) and a zero A (a = 0): every tier-3 enclosure of the
    bound must contain arb's value at 200 bits, and be no number where arb finds the bound undefined (bad input:
    a division by an exact zero) or not finite because it divides by an enclosure of zero."""
    rng, bad = np.random.default_rng(seed), []
    for _ in range(count):
        try:
            goal = engine.target(bound=_random_bound(rng, 4))
        except BadInput:  # certainly undefined as written (1/0)
            continue
        X = rng.standard_normal((4, 3, 2)) * 10.0 ** rng.uniform(-3, 3, (4, 1, 1))
        X[3, 1:] = X[3, :1]
        A = rng.standard_normal((4, 2, 2)) * 10.0 ** rng.uniform(-3, 1, (4, 1, 1))
        A[2] = 0.0
        batch = tier3.Batch(X=X, A=A, V=rng.standard_normal((4, 2, 2)))
        try:
            with np.errstate(all="ignore"):
                rhs = tier3.enclosures(goal.claim, batch)[0][1]
                ends = np.broadcast_to(rhs.lo, (4,)), np.broadcast_to(rhs.hi, (4,))
        except midrad64.NotSupported:
            continue
        for c in range(4):
            lo, hi = float(ends[0][c]), float(ends[1][c])
            case = config.load(config_of(batch, c))
            try:
                with ctx.workprec(200):
                    (comparison,) = engine_decide.evaluate(BALL, case, goal.claim, {})[1]
            except BadInput:
                if np.isfinite(lo) or np.isfinite(hi):
                    bad.append(f"{goal.bound.text} at {c}: undefined, tier 3 [{lo}, {hi}]")
                continue
            with ctx.workprec(200):
                if comparison.rhs.is_finite() and _outside(comparison.rhs, lo, hi):
                    bad.append(f"{goal.bound.text} at {c}: {comparison.rhs} outside [{lo}, {hi}]")
                elif "divides" in comparison.undefined and np.isfinite(lo) and np.isfinite(hi):
                    bad.append(f"{goal.bound.text} at {c}: {comparison.undefined}, tier 3 [{lo}, {hi}]")
    return bad


def test_random_bounds_against_arb():
    assert bound_contradictions(seed=1, count=600) == []


def test_the_key_side_holds_beta_times_w_k_over_the_square_root_of_d_k():
    """arrays() folds beta / sqrt(d_k) into W_K and b_K: their enclosures must hold the exact products (arb at 256
    bits), for d_k whose square root is irrational and betas that are not powers of two."""
    rng = np.random.default_rng(13)
    for d_k, beta in ((3, 1.0), (5, 0.1), (7, 3.0), (2, np.array([0.3, 1.0, -2.5]))):
        W_Q, W_K = rng.standard_normal((3, 4, d_k)), rng.standard_normal((3, 4, d_k)) * 10.0 ** rng.integers(-5, 5, (3, 4, d_k))
        b_K = rng.standard_normal((3, d_k))
        batch = tier3.Batch(X=rng.standard_normal((3, 3, 4)), W_Q=W_Q, W_K=W_K, b_K=b_K, b_Q=b_K, beta=beta, d_k=d_k)
        arrays = batch.arrays()
        betas = np.broadcast_to(beta, (3,))
        with ctx.workprec(256):
            for got, exact in ((arrays.W_K, W_K), (arrays.b_K, b_K[:, None, :])):
                lo, hi = np.broadcast_arrays(got.lo, got.hi)
                for index in np.ndindex(exact.shape):
                    value = arb(float(betas[index[0]])) * arb(float(exact[index])) / arb(d_k).sqrt()
                    assert arb(float(lo[index])) <= value <= arb(float(hi[index])), (d_k, beta, index)


def test_a_sample_result_resting_on_tier3_holds_reads_not_certified(tmp_path):
    """Tier 3 decides its holds without a certificate: certify.sample's result shows holds resting on them as the
    printed summary and the report page do, "holds (not certified)"; a campaign arb decided alone stays "holds"."""
    import certify
    fast = certify.sample(n=4, d=2, count=40, seed=3, out=tmp_path / "tier3", tier="tier3", workers=1)
    assert fast.summary["tiers"].get("tier3") and fast.verdict == "holds"
    assert repr(fast).startswith("<certify sample holds (not certified):"), repr(fast)
    assert not fast.certified
    slow = certify.sample(n=4, d=2, count=10, seed=3, out=tmp_path / "arb", workers=1)
    assert slow.verdict == "holds" and slow.certified
    assert repr(slow).startswith("<certify sample holds:"), repr(slow)
