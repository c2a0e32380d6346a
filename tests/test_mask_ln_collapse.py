"""mask.collapse and ln.collapse (Wu et al., Theorems 1 and 2) on concrete stacks.

Window quantities against an mpmath oracle written here, the r-step contraction on random stacks,
the product column, tau = 1 for one uni-mask step, hypotheses, certificates and tampering.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from fractions import Fraction

import numpy as np

import pytest
from flint import arb, ctx, fmpq_mat
from mpmath import mp

import oracle
from certify import engine
import certify_checker as checker
from certify.core import config
from certify.core import masks
from certify.core import quantities
from certify.core.arith import BALL, FLOAT64
from certify_checker import windowed
from certify.claims import get, wu
from certify.core.numbers import Binary64Matrix
from certify.cli import main
from certify.errors import BadInput
from certify.core.layers import apply_layer
from certify.suite import wu_cases as cases
from certify.core import graphs
from certify.core import windows

PRECISION = 200


def contains(ball: arb, value) -> bool:
    """The ball meets the 60-digit mpmath value (widened by 1e-50 relative for the oracle's rounding)."""
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        exact = arb(mp.nstr(value, oracle.DPS, strip_zeros=False))
        return arb(ball).overlaps(arb(exact.mid(), abs(exact.mid()) * arb(10) ** -50 + arb(10) ** -300))


# ---- the oracle: the stack and its windows in mpmath, from the canonical JSON -----------------

def oracle_stack(canonical: dict):
    """Per layer: tokens entering, P, the post-LN rescaling (None without LN), A; and the last output."""
    X = oracle.mat(canonical["X"])
    layers = []
    for spec in canonical["layers"]:
        step = oracle.layer(spec, X)
        out, scale = step["out"], None
        if "layernorm" in spec:
            scale = [1 / mp.norm(out[i, :]) for i in range(out.rows)]
            out = mp.matrix([[out[i, j] * scale[i] for j in range(out.cols)] for i in range(out.rows)])
        mask = spec.get("mask") or [[1] * X.rows for _ in range(X.rows)]  # none: the complete graph
        layers.append({"X": X, "P": step["P"], "scale": scale, "A": step["A"], "mask": mask})
        X = out
    return layers, X


def oracle_window(canonical: dict, t: int, k: int) -> dict:
    with mp.workdps(oracle.DPS):
        layers, final = oracle_stack(canonical)
        window = layers[t:t + k]
        tokens = lambda s: layers[s]["X"] if s < len(layers) else final  # noqa: E731
        n = final.rows
        w_min = min(L["P"][i, j] for L in window for i in range(n) for j in range(n) if L["mask"][i][j])
        theory = []
        for L in window:
            B = max(mp.norm(L["X"][i, :]) for i in range(n))
            degree = max(sum(row) for row in L["mask"])
            theory.append(mp.exp(-2 * oracle.spectral_norm(L["A"]) * B**2) / degree)
        M = window[0]["P"]
        for before, L in zip(window, window[1:]):
            scaled = M.copy()
            if before["scale"] is not None:
                for i in range(n):
                    for j in range(n):
                        scaled[i, j] *= before["scale"][i]
            M = L["P"] * scaled
        Q = mp.matrix([[M[i, j] / sum(M[i, :]) for j in range(n)] for i in range(n)])
        QX = Q * tokens(t)
        return {"w_min": w_min, "eps_theory": min(theory),
                "col": max(min(M[i, c] for i in range(n)) for c in range(n)),
                "delta": sum(min(Q[i, c] for i in range(n)) for c in range(n)),
                "m": min(mp.norm(QX[i, :]) for i in range(n)),
                "D": oracle.diameter(tokens(t)), "D_end": oracle.diameter(tokens(t + k)),
                "mu_end": oracle.consensus_distance(tokens(t + k))}


def engine_windows(cfg: dict, claim_id: str):
    case = config.load(cfg)
    claim = get(claim_id)
    witnesses: dict = {}
    engine.evaluate(FLOAT64, case, claim, witnesses)
    with ctx.workprec(PRECISION):
        views, _ = engine.evaluate(BALL, case, claim, witnesses)
        return case, windows.frames(BALL, case, claim, views)


@pytest.mark.parametrize("claim_id, cfg", [
    ("mask.collapse", cases.masked_stack("uni", n=5, seed=11)),
    ("mask.collapse", cases.masked_stack("sliding", n=5, seed=12)),
    ("ln.collapse", cases.layernorm_stack("sliding", n=4, seed=13)),
    ("ln.collapse", cases.layernorm_stack("causal", n=5, seed=14, positive=True)),
])
def test_window_enclosures_contain_the_mpmath_values(claim_id, cfg):
    case, frames = engine_windows(cfg, claim_id)
    canonical = config.to_json(case)
    assert frames
    with ctx.workprec(PRECISION):
        for frame in frames:
            for name, value in oracle_window(canonical, frame.t, frame.k).items():
                assert contains(frame[name], value), (frame.t, name)
            assert frame["eps"] < frame["w_min"]  # the certified lower bound sits strictly below


def test_a_planted_wrong_weight_is_not_contained():
    """The comparison can fail: the oracle's w_min moved by 1e-30 is outside the 200-bit ball."""
    cfg = cases.masked_stack("causal", seed=15)
    case, frames = engine_windows(cfg, "mask.collapse")
    expected = oracle_window(config.to_json(case), 0, frames[0].k)["w_min"]
    with mp.workdps(oracle.DPS):
        assert not contains(frames[0]["w_min"], expected * (1 + mp.mpf(10) ** -30))


@pytest.mark.parametrize("mask", ["causal", "sliding", "uni", "complete"])
@pytest.mark.parametrize("seed", [21, 22, 23])
def test_the_r_step_contraction_holds_on_random_stacks(mask, seed):
    result = engine.check(cases.masked_stack(mask, n=5, d=3, seed=seed, scale=0.8), claim="mask.collapse")
    assert result.verdict == engine.HOLDS
    contraction = [c for c in result.comparisons if c.rhs_expr == "(1 - eps**r)*D"]
    assert len(contraction) == 3  # depth r + 2: windows at 0, 1, 2
    assert all(c.outcome is True for c in contraction)
    assert checker.verify(result.certificate).ok


def test_the_product_column_is_certified_at_the_centre():
    """uni mask, N = 5: radius 4, centre 0; column 0 of P_{t+3}...P_t is >= eps^4 entry by entry."""
    cfg = cases.masked_stack("uni", n=5, seed=31)
    case, frames = engine_windows(cfg, "mask.collapse")
    assert graphs.analyse(masks.named_mask("uni", 5)).centres == [0]
    with ctx.workprec(PRECISION):
        for frame in frames:
            M = frame.product()
            bound = frame["eps"] ** 4
            assert all(M[i, 0] > bound for i in range(5))  # certain, not undecided
            assert any(M[0, c] == 0 for c in range(1, 5))  # row 0 only sees token 0: other columns are not positive
            assert frame["col"] > bound


def test_one_uni_step_alone_has_tau_exactly_one():
    """Rows 0 and 2 of a uni-mask P have disjoint supports: the overlap is an exact 0, tau an exact 1,
    while the product over r layers has tau < 1."""
    cfg = cases.masked_stack("uni", n=5, seed=41)
    case = config.load(cfg)
    with ctx.workprec(PRECISION):
        X = BALL.array(case.X)
        step = apply_layer(BALL, case.layers[0], X)
        tau = quantities.dobrushin(BALL, step.P)
        assert tau.rad() == 0 and tau == 1
        _, frames = engine_windows(cfg, "mask.collapse")
        assert quantities.dobrushin(BALL, frames[0].product()) < 1


# ---- hypotheses --------------------------------------------------------------------------

def _rejects(cfg, claim_id, words):
    with pytest.raises(BadInput, match=words):
        engine.check(cfg, claim=claim_id)


def test_mask_collapse_needs_a_quasi_strongly_connected_graph():
    cfg = cases.masked_stack("causal", n=4)
    for layer in cfg["layers"]:
        layer["mask"] = [[1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 1]]  # two components
    _rejects(cfg, "mask.collapse", "not quasi-strongly connected")


def test_mask_collapse_needs_one_mask_enough_layers_and_pure_attention():
    cfg = cases.masked_stack("causal")
    cfg["layers"][1]["mask"] = "uni"
    _rejects(cfg, "mask.collapse", "different masks")
    _rejects(cases.masked_stack("uni", n=6, depth=4), "mask.collapse", "does not fit")
    # one layer, one window layer: counted in the singular ("the stack has 1 layers" was said)
    _rejects(cases.masked_stack("uni", n=3, depth=1), "mask.collapse", r"has 1 layer, and a window of 2 layers ")
    cfg = cases.masked_stack("causal")
    cfg["layers"][0]["V"] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    _rejects(cfg, "mask.collapse", "value matrix")


def test_ln_collapse_needs_an_exactly_orthogonal_value_matrix():
    cfg = cases.layernorm_stack()
    cfg["layers"][2]["V"][0][0] = "0.6"  # exactly 3/5: still orthogonal
    assert engine.check(cfg, claim="ln.collapse").verdict == engine.HOLDS
    cfg["layers"][2]["V"][0][0] = "0.6000001"
    _rejects(cfg, "ln.collapse", "layer 2: V.T V is not exactly the identity")


def test_ln_collapse_needs_post_ln_and_one_of_the_two_conditions_on_X0():
    cfg = cases.layernorm_stack()
    cfg["layers"][0]["layernorm"] = "pre"
    _rejects(cfg, "ln.collapse", "not post-LN")
    # causal is not strongly connected, and Gaussian tokens have negative cosines
    _rejects(cases.layernorm_stack("causal", n=4, seed=51), "ln.collapse", "neither hypothesis")
    # strongly connected but rank-deficient X_0 (two equal tokens) with a negative cosine
    cfg = cases.layernorm_stack("sliding", n=4, seed=52)
    cfg["X"][3] = cfg["X"][0]
    cfg["X"][1] = [-v for v in cfg["X"][0]]
    _rejects(cfg, "ln.collapse", "X_0 is not shown to have full rank")
    # five tokens in d = 4: N > d, so only the cosine condition could apply
    _rejects(cases.layernorm_stack("complete", n=5, seed=53), "ln.collapse", "neither hypothesis")


def test_the_checker_decides_the_exact_hypotheses_of_ln_collapse_on_huge_entries_in_time():
    """Tokens of 4000 hex digits, 16 x 16 (1 MB): the elimination in Python fractions took 80 s for the rank
    of X_0, and grows as n^5 (24 x 24 tokens of 8000 digits, 4.4 MB: the best part of an hour); FLINT's exact
    elimination (fmpq_mat(...).rank()) is the reference here."""
    import time
    rng = random.Random(71)
    n = 16
    X = [["0x" + "".join(rng.choice("0123456789abcdef") for _ in range(4000)) for _ in range(n)] for _ in range(n)]
    causal = [[int(j <= i) for j in range(n)] for i in range(n)]
    inputs = {"X": X, "layers": [{"A": [["0"] * n] * n, "mask": causal, "layernorm": {"position": "post"}}] * 3}
    started = time.monotonic()
    assert windowed.unmet_hypothesis("ln.collapse", inputs) is None  # positive entries: every cosine > 0
    assert fmpq_mat(windowed.rationals(X)).rank() == n
    assert time.monotonic() - started < 10
    deficient = X[:-1] + [[hex(int(a, 16) - int(b, 16)) for a, b in zip(X[0], X[1])]]
    assert fmpq_mat(windowed.rationals(deficient)).rank() == n - 1
    assert not windowed.full_rank(windowed.rationals(deficient))
    rotation = [["3/5", "-4/5"], ["4/5", "3/5"]]
    assert windowed.orthogonal(rotation) and not windowed.orthogonal([["3/5", "4/5"], ["4/5", "3/5"]])
    assert windowed.rationals([["0x1p-3", "1/3", 0.5]]) == windowed.rationals([["1/8", "1/3", "1/2"]])


def _fraction_rank(rows) -> int:
    """Rank by Gaussian elimination in Python fractions: the reference the engine's FLINT routes must match."""
    rows = [list(map(Fraction, row)) for row in rows]
    rank = 0
    for c in range(len(rows[0])):
        pivot = next((i for i in range(rank, len(rows)) if rows[i][c] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for i in range(rank + 1, len(rows)):
            factor = rows[i][c] / rows[rank][c]
            rows[i] = [a - factor * b for a, b in zip(rows[i], rows[rank])]
        rank += 1
    return rank


def test_the_engines_exact_hypotheses_agree_with_python_fractions():
    """ln.collapse's rank (modulo a prime, exact elimination below full rank), V^T V = I (integers in FLINT,
    after a float64 rejection) and cosines (an integer Gram matrix) against plain fractions, on rationals,
    binary64 values from 1e-300 to 1e300, huge integers, and rank-deficient and orthogonal matrices."""
    rng = random.Random(83)

    def entry(kind):
        if kind == "small":
            return Fraction(rng.randint(-2, 2))
        if kind == "rational":
            return Fraction(rng.randint(-5, 5), rng.randint(1, 7))
        if kind == "binary64":
            return Fraction(rng.choice([0.0, rng.gauss(0, 1), 1e-300 * rng.random(), -1e300 * rng.random()]))
        return Fraction(rng.randint(-10**60, 10**60), rng.randint(1, 10**40))

    deficient = 0
    for _ in range(300):
        n, d, kind = rng.randint(2, 6), rng.randint(1, 6), rng.choice(["small", "rational", "binary64", "huge"])
        X = [[entry(kind) for _ in range(d)] for _ in range(n)]
        if n > 2 and rng.random() < 0.5:  # a combination of two tokens: rank below min(n, d) unless d is small
            X[-1] = [3 * a - b / 7 for a, b in zip(X[0], X[1])]
        rank = _fraction_rank(X)
        deficient += rank < min(n, d)
        cosines = all(any(X[i]) for i in range(n)) and all(
            sum(a * b for a, b in zip(X[i], X[k])) >= 0 for i in range(n) for k in range(i + 1, n))
        full = rank == n <= d
        assert wu.full_rank(tuple(map(tuple, X))) == full
        assert wu.nonnegative_cosines(tuple(map(tuple, X))) == cosines
        if kind == "binary64" and all(float(v) == v for row in X for v in row):
            block = Binary64Matrix(np.array(X, dtype=float))
            assert wu.full_rank(block) == full and wu.nonnegative_cosines(block) == cosines
        V = [[entry(kind) for _ in range(n)] for _ in range(n)]
        expected = all(sum(V[l][i] * V[l][j] for l in range(n)) == (i == j) for i in range(n) for j in range(n))
        assert wu.orthogonal(V) == expected
    assert deficient > 30  # ranks modulo every prime below full were exercised
    assert wu.orthogonal([[Fraction(3, 5), Fraction(-4, 5)], [Fraction(4, 5), Fraction(3, 5)]])
    hadamard = np.array([[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]) / 2
    assert wu.orthogonal(Binary64Matrix(hadamard))
    assert not wu.orthogonal(Binary64Matrix(np.array([[1, 1], [1, -1]]) * 0.5 ** 0.5))  # 1/sqrt(2) rounded
    haar = np.linalg.qr(np.random.default_rng(83).normal(size=(6, 6)))[0]  # orthogonal only up to rounding
    assert not wu.orthogonal(Binary64Matrix(haar))


def test_the_checkers_rank_agrees_with_exact_elimination():
    """windowed.full_rank (modulo primes) against Python fractions, full and deficient, N <= d."""
    rng = random.Random(85)
    seen = set()
    for _ in range(200):
        n = rng.randint(2, 6)
        d = rng.randint(n, 7)
        X = [[Fraction(rng.randint(-3, 3), rng.choice([1, 2, 3, 2**70])) for _ in range(d)] for _ in range(n)]
        if rng.random() < 0.5:
            X[-1] = [a / 5 - 2 * b for a, b in zip(X[0], X[1])]
        expected = _fraction_rank(X) == n
        seen.add(expected)
        assert windowed.full_rank(windowed.rationals([[str(v) for v in row] for row in X])) == expected
    assert seen == {True, False}


def test_both_sides_cosine_signs_agree_with_python_fractions_exact_zeros_and_near_ties():
    """Signs from balls of 128 bits, exactly where a ball holds 0: against Python fractions on small
    rationals with many zeros (exact-zero cosines, zero tokens), and a negative product below the balls'
    resolution (-2^-200) and an exact zero of 4000-digit rationals, which only the exact step decides."""
    rng = random.Random(87)
    seen = set()
    for _ in range(300):
        n, d = rng.randint(2, 5), rng.randint(1, 4)
        X = [[Fraction(rng.choice([0, 0, 1, -1, 2]), rng.choice([1, 3, 2**80])) for _ in range(d)] for _ in range(n)]
        expected = all(sum(a * a for a in x) > 0 for x in X) and all(
            sum(a * b for a, b in zip(X[i], X[k])) >= 0 for i in range(n) for k in range(i + 1, n))
        seen.add(expected)
        assert wu.nonnegative_cosines(X) == expected
        assert windowed.nonnegative_cosines(windowed.rationals([[str(v) for v in row] for row in X])) == expected
    assert seen == {True, False}
    tiny = [[1, 1], [1, Fraction(-1) - Fraction(1, 2**200)]]
    big = [Fraction(rng.randrange(10**3999, 10**4000), rng.randrange(10**3999, 10**4000)) for _ in range(2)]
    orthogonal = [big, [-big[1], big[0]], [big[0], big[1]]]
    for rows, expected in ((tiny, False), (orthogonal, True), ([orthogonal[0], [-big[0], 0]], False)):
        assert wu.nonnegative_cosines(rows) == expected
        assert windowed.nonnegative_cosines(windowed.rationals([[str(v) for v in row] for row in rows])) == expected
    import time  # an exact zero over d = 256 distinct 4000-digit denominators: 9 s on rows cleared by their lcm
    u = [Fraction(rng.randrange(10**3999, 10**4000), rng.randrange(10**3999, 10**4000)) for _ in range(256)]
    pair = [u, [w for k in range(0, 256, 2) for w in (-u[k + 1], u[k])]]  # (a, b) -> (-b, a): u . Ju = 0
    started = time.process_time()
    assert wu.nonnegative_cosines(pair) and windowed.nonnegative_cosines(windowed.rationals(pair))
    pair[1][0] = Fraction(-u[1].numerator - 1, u[1].denominator)  # u . Ju about -10^-4000: the balls hold 0
    assert not wu.nonnegative_cosines(pair) and not windowed.nonnegative_cosines(windowed.rationals(pair))
    assert time.process_time() - started < 4


def test_ln_collapse_on_16_x_16_tokens_of_4000_digit_fractions_in_seconds(tmp_path):
    """Tokens a/q with distinct 4000-digit q, causal and complete masks: FLINT's exact rank and Gram matrix built
    one common denominator per row or for the matrix (13 s to check, 10 s to verify at 16 x 16, 43 s and
    577 MB at 24 x 24).  Modulo primes and in balls, the hypotheses take well under a second; a deficient
    X_0 with a negative cosine is refused by both sides, never shown full rank."""
    import time
    rng = random.Random(88)
    n = 16
    X = [[f"{rng.randrange(10**3999, 10**4000)}/{rng.randrange(10**3999, 10**4000)}" for _ in range(n)]
         for _ in range(n)]
    layers = [{"A": [["0"] * n for _ in range(n)], "layernorm": "post"}] * 3
    started = time.process_time()
    for mask in ("causal", "complete"):
        case = config.load({"X": X, "layers": [dict(layer, mask=mask) for layer in layers]})
        assert wu.post_ln_orthogonal(case) is None
        assert windowed.unmet_hypothesis("ln.collapse", config.to_json(case)) is None
    assert wu.full_rank(case.X) and windowed.full_rank(windowed.rationals(X))
    assert time.process_time() - started < 5
    deficient = X[:-1] + [X[0]]
    deficient[1] = ["-" + v for v in X[0]]
    case = config.load({"X": deficient, "layers": [dict(layer, mask="complete") for layer in layers]})
    assert "not shown to have full rank" in wu.post_ln_orthogonal(case)
    assert "neither" in windowed.unmet_hypothesis("ln.collapse", config.to_json(case))
    assert time.process_time() - started < 10
    started = time.process_time()  # the whole claim, checked and verified (13 s and 10 s before)
    cert = engine.check({"X": X, "layers": [dict(layer, mask="causal") for layer in layers]}, claim="ln.collapse")
    assert cert.verdict == engine.HOLDS and checker.verify(cert.certificate).ok
    assert time.process_time() - started < 10
    forged = copy.deepcopy(cert.certificate)  # a negative cosine and a repeated token: neither hypothesis holds
    forged["inputs"]["X"][1] = ["-" + v for v in forged["inputs"]["X"][0]]
    forged["inputs"]["X"][2] = forged["inputs"]["X"][0]
    verdict = checker.verify(redigest(forged))
    assert not verdict.ok and "neither" in verdict.message


def test_the_checker_decides_ln_collapse_hypotheses_at_real_sizes_in_seconds():
    """128 binary64 tokens in d = 384, strongly connected: the full rank of X_0 took FLINT's exact elimination
    25 s."""
    import time
    X = np.random.default_rng(86).normal(size=(128, 384)).tolist()
    layer = {"A": [[0] * 384] * 384, "layernorm": {"position": "post"}}
    started = time.monotonic()
    assert windowed.unmet_hypothesis("ln.collapse", {"X": X, "layers": [layer] * 3}) is None
    assert time.monotonic() - started < 10


def test_the_engines_exact_hypotheses_take_seconds_at_real_sizes():
    """128 binary64 tokens in d = 384 under 3 post-LN layers with signed permutations V: in Python fractions
    V^T V took a minute at d = 64 (growing as d^4) and the rank minutes; here a fraction of a second each."""
    import time
    rng = np.random.default_rng(84)
    n, d = 128, 384
    V = np.zeros((d, d))
    V[np.arange(d), rng.permutation(d)] = rng.choice([-1.0, 1.0], d)
    X = np.abs(rng.normal(size=(n, d)))
    started = time.monotonic()
    assert wu.orthogonal(Binary64Matrix(V))
    assert wu.full_rank(Binary64Matrix(X)) and wu.nonnegative_cosines(Binary64Matrix(X))
    assert time.monotonic() - started < 10


def test_ln_collapse_cosine_condition_needs_nonzero_tokens():
    """A zero token has no cosine (and LN(0) is undefined): x_i . x_k >= 0 alone does not meet
    Corollary 1's hypothesis.  Engine and checker both refuse."""
    layer = {"A": [[1, 0], [0, 1]], "mask": "causal", "layernorm": "post"}
    cfg = {"X": [[0, 0], [1, "1/2"], ["1/2", 1]], "layers": [layer] * 3}
    _rejects(cfg, "ln.collapse", "a zero token")
    inputs = config.to_json(config.load(cfg))
    assert "neither" in windowed.unmet_hypothesis("ln.collapse", inputs)
    inputs["X"][0] = ["1/4", "1/4"]  # every token nonzero, every cosine positive: the hypothesis holds
    assert windowed.unmet_hypothesis("ln.collapse", inputs) is None
    cfg["X"][0] = ["1/4", "1/4"]
    assert engine.check(cfg, claim="ln.collapse").verdict == engine.HOLDS


def test_checker_graph_radius_agrees_with_the_engine_on_random_masks():
    rng = random.Random(61)
    for _ in range(60):
        n = rng.randint(2, 7)
        mask = [[1 if i == j or rng.random() < 0.3 else 0 for j in range(n)] for i in range(n)]
        report = graphs.analyse(mask)
        assert windowed.graph(mask) == (report.strongly_connected, report.quasi_strongly_connected, report.radius)


# ---- certificates ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def certificates():
    return {claim_id: engine.check(cfg, claim=claim_id).certificate for claim_id, cfg in [
        ("mask.collapse", cases.masked_stack("sliding", n=5, seed=71)),
        ("ln.collapse", cases.layernorm_stack("sliding", n=4, seed=72)),
    ]}


def redigest(cert):
    canonical = json.dumps({"claim": cert["claim"], "bound": cert["bound"], "inputs": cert["inputs"],
                            "precision": cert["precision"]},
                           sort_keys=True, separators=(",", ":"))
    cert["inputs_sha256"] = hashlib.sha256(canonical.encode()).hexdigest()
    return cert


@pytest.mark.parametrize("claim_id", ["mask.collapse", "ln.collapse"])
def test_certificates_verify_and_edits_are_rejected(certificates, claim_id):
    cert = certificates[claim_id]
    assert cert["kind"] == "inequality" and checker.verify(cert).ok

    edited = copy.deepcopy(cert)  # a stated window enclosure moved
    entry = edited["values"]["comparisons"][2]
    entry["lhs"] = "[0.5 +/- 1e-40]" if entry["lhs"] != "[0.5 +/- 1e-40]" else "[0.25 +/- 1e-40]"
    assert not checker.verify(edited).ok

    edited = copy.deepcopy(cert)  # a token moved, digest forged
    edited["inputs"]["X"][0][0] = "1/3"
    assert not checker.verify(redigest(edited)).ok

    edited = copy.deepcopy(cert)  # a comparison dropped
    edited["values"]["comparisons"].pop()
    assert not checker.verify(edited).ok


@pytest.mark.parametrize("claim_id", ["mask.collapse", "ln.collapse"])
def test_the_checker_computes_a_layers_own_window_quantities_once(certificates, claim_id, monkeypatch):
    """A layer is in up to k windows; its theory bound (W_K and b_Q read, d d_k products), edge minimum and
    rescaling (V read) are its own, so each is computed once a recomputation, not once a window holding it: a chain
    mask's ln.collapse at 64 layers ran each 32 times (text weights: 4 times the checker's estimate)."""
    calls = []
    for name in ("theory_bound", "edge_minimum", "rescaling"):
        original = getattr(windowed, name)
        monkeypatch.setattr(windowed, name, lambda step, f=original, name=name: calls.append((name, step)) or f(step))
    cert = certificates[claim_id]
    k, first = windowed.window_shape(claim_id, windowed.graph(cert["inputs"]["layers"][0]["mask"])[2])[::-1]
    assert len(cert["inputs"]["layers"]) - first - k + 1 >= 2 and k >= 2  # windows that share layers
    assert checker.verify(cert).ok
    assert {name for name, _ in calls} == {"theory_bound", "edge_minimum", "rescaling"}
    assert len(calls) == len({(name, id(step)) for name, step in calls})  # the steps are kept alive by calls


def test_checker_rejects_a_forged_graph_and_a_forged_value_matrix(certificates):
    cert = copy.deepcopy(certificates["mask.collapse"])
    n = len(cert["inputs"]["X"])
    for layer in cert["inputs"]["layers"]:
        layer["mask"] = [[int(i == j) for j in range(n)] for i in range(n)]  # no centre
    confirmation = checker.verify(redigest(cert))
    assert not confirmation.ok and "quasi-strongly" in confirmation.message

    cert = copy.deepcopy(certificates["ln.collapse"])
    cert["inputs"]["layers"][1]["V"][0][0] = "0.6000001"
    assert not checker.verify(redigest(cert)).ok

    cert = copy.deepcopy(certificates["ln.collapse"])
    cert["claim"] = "mask.collapse"  # LayerNorm layers are not pure attention
    assert not checker.verify(redigest(cert)).ok


def test_cli_check_and_verify(tmp_path, capsys):
    path = tmp_path / "uni.json"
    path.write_text(json.dumps(cases.masked_stack("uni", n=5)))
    cert = tmp_path / "cert.json"
    assert main(["check", str(path), "--claim", "mask.collapse", "--out", str(cert)]) == 0
    assert main(["verify", str(cert)]) == 0
    bad = cases.masked_stack("causal", n=4)
    for layer in bad["layers"]:
        layer["mask"] = [[int(i == j) for j in range(4)] for i in range(4)]
    path.write_text(json.dumps(bad))
    capsys.readouterr()
    assert main(["check", str(path), "--claim", "mask.collapse"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not quasi-strongly connected" in err[0]


# ---- an explicit complete mask is no mask (docs/claims.md: "No mask means the complete graph") ------------

COMPLETE_STATED = ("complete", "full", [[1, 1, 1], [1, 1, 1], [1, 1, 1]])


@pytest.mark.parametrize("claim_id", ["collapse.global", "collapse.tanh", "collapse.tau", "collapse.cubic"])
@pytest.mark.parametrize("stated", COMPLETE_STATED)
def test_an_explicit_complete_mask_meets_the_unmasked_hypotheses(claim_id, stated):
    """The collapse claims are about the complete graph: a layer that states it explicitly was refused as masked."""
    plain = {"X": [[0.5, 0.0], [-0.5, 0.25], [0.0, 1.0]], "A": [[1.0, 0.5], [0.0, 1.0]]}
    unmasked = engine.check(plain, claim=claim_id)
    result = engine.check({**plain, "mask": stated}, claim=claim_id)
    assert result.verdict == unmasked.verdict == engine.HOLDS
    assert result.certificate["values"] == unmasked.certificate["values"] and checker.verify(result.certificate).ok


def test_a_stack_mixing_no_mask_and_a_complete_mask_shares_one_graph():
    """mask.collapse is about one graph G: no mask and "complete" are the same G, not different masks."""
    cfg = cases.masked_stack("complete", n=4)
    cfg["layers"][0].pop("mask")
    result = engine.check(cfg, claim="mask.collapse")
    assert result.verdict == engine.HOLDS and checker.verify(result.certificate).ok
    cfg["layers"][1]["mask"] = "causal"  # a different graph is still refused
    _rejects(cfg, "mask.collapse", "different masks")


@pytest.mark.parametrize("claim_id", ["collapse.global", "collapse.trajectory", "mask.collapse"])
def test_the_checker_reads_an_explicit_complete_mask_as_no_mask(claim_id):
    """A certificate stating the complete mask in some layers is confirmed as the unmasked one is; a mask with
    one edge removed is not the complete graph, and the unmasked claims refuse it."""
    cfg = {"X": [[0.5, 0.0], [-0.5, 0.25], [0.0, 1.0]], "layers": [{"A": [[1.0, 0.5], [0.0, 1.0]]}] * 2}
    cert = engine.check(cfg, claim=claim_id).certificate
    assert checker.verify(cert).ok
    stated = copy.deepcopy(cert)
    stated["inputs"]["layers"][0]["mask"] = [[1, 1, 1], [1, 1, 1], [1, 1, 1]]
    assert checker.verify(redigest(stated)).ok
    stated["inputs"]["layers"][0]["mask"] = [[1, 1, 1], [1, 1, 0], [1, 1, 1]]
    assert not checker.verify(redigest(stated)).ok


def _stated_at(cert: dict, precision: int, verdict: str) -> dict:
    """cert at `precision` with `verdict`, every comparison and enclosure stated as the checker recomputes them there
    and the digest redone: a forger's certificate."""
    from certify_checker import inequality, schema
    forged = copy.deepcopy(cert)
    forged["precision"], forged["verdict"] = precision, verdict
    witness = inequality._Witnesses(forged["witness"])
    read = {**forged, "inputs": schema.expanded(forged["inputs"]), "witness": witness}
    scope, inequalities = inequality._target(read)
    compared, steps = inequality._recompute(read, scope, inequalities, precision)
    outcomes = [inequality._outcome(lhs, rhs) for *_, lhs, rhs in compared]
    deciding = outcomes.index(False) if False in outcomes else len(compared) - 1
    with ctx.workprec(precision):
        text = lambda x: x.str(20, radius=True)  # noqa: E731
        forged["values"] = {
            "comparisons": [{"layer": t, "lhs_expr": left, "rhs_expr": right, "lhs": text(lhs), "rhs": text(rhs),
                             "holds": outcome} for (t, left, right, lhs, rhs), outcome in zip(compared, outcomes)],
            "layers": [{name: text(step(name)) for name in stated}
                       for step, stated in zip(steps, cert["values"]["layers"])],
            "D_in": text(steps[0]("D")), "D_out": text(steps[-1]("D_out")), "bound": text(compared[deciding][-1])}
    return redigest(forged)


@pytest.mark.parametrize("X, A, mask, verdict", [
    ([["1"], ["5/3"]], "1/18014398509481984", "causal", "holds"),  # a = 2^-54
    ([["1"], ["-6/7"]], "-1/54043195528445952", "complete", "violated"),  # a = 2^-54 / 3
])
def test_eps_theory_against_w_min_is_decided_on_the_balls_of_the_edge_weights(X, A, mask, verdict):
    """Two tokens under a head of norm about 2^-54: every weight is 1/2 up to 1e-16, and eps_theory = exp(-2 a B^2) / 2
    lies below w_min by 1e-19 to 1e-16 (mpmath), within a few units of the last place (2^-54) at 53 bits.  There the
    balls of eps_theory and of w_min (a minimum of balls of softmax weights) overlap: the comparison is undecided,
    while the midpoints of the weights, or of w_min's ball, decide it (holds in the first stack, fails in the second,
    a false refutation of Theorem 1).  A forger states that verdict at 53 bits with the checker's own comparisons and
    enclosures there and the digest redone: rejected, the checker finding it undecided."""
    case = config.load({"X": X, "layers": [{"A": [[A]], "mask": mask}] * 3})
    canonical = config.to_json(case)
    for t in range(3):  # radius 1: windows of one layer
        window = oracle_window(canonical, t, 1)
        assert 0 < window["w_min"] - window["eps_theory"] < mp.mpf(2) ** -49  # 32 units of the last place, 2^-54
    cert = engine.check(canonical, claim="mask.collapse")
    assert cert.verdict == engine.HOLDS and cert.certificate["precision"] > 53  # the engine decides it finer
    confirmation = checker.verify(_stated_at(cert.certificate, 53, verdict))
    expected = f"finds undecided at 53 bits, the certificate says {verdict}"
    assert not confirmation.ok and expected in confirmation.message, confirmation.message
