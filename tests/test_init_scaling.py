"""certify init: certified a, D^2, gap and D(PX)/D under standard initialisation, against mpmath."""

from __future__ import annotations

import json
import math
import time

import mpmath
import numpy as np
import oracle
import pytest
from mpmath import mp
from test_trajectory import assert_contains

from certify.studies import init_scaling
from certify.cli import main
from certify.errors import BadInput


def mp_reference(s: init_scaling.Sample) -> dict:
    """a, D^2 and D(PX)/D of the sample with mpmath at 50 digits (oracle.layer for the attention)."""
    spec = {"W_Q": s.W_Q.tolist(), "W_K": s.W_K.tolist(), "d_k": s.d_k}
    with mp.workdps(50):
        X = oracle.mat(s.X.tolist())
        out = oracle.layer(spec, X)
        a = oracle.spectral_norm(out["A"])
        D = oracle.diameter(X)
        return {"a": a, "D2": D * D, "aD2": a * D * D, "ratio": oracle.diameter(out["PX"]) / D,
                "log10_gap": -a * D * D / mp.log(10)}


@pytest.mark.parametrize("d,d_k,scheme,route", [(8, None, "lecun", "direct"), (12, 3, "xavier", "thin"),
                                                 (16, 4, "bert", "thin"), (10, 7, "lecun", "direct")])
def test_enclosures_contain_mpmath(d, d_k, scheme, route):
    s = init_scaling.sample(d, 5, scheme, seed=3, d_k=d_k)
    row = init_scaling.certify_row(s, max_prec=1024)
    assert row.route == route
    ref = mp_reference(s)
    with mp.workdps(50):
        assert_contains(row.a, ref["a"], "a")
        assert_contains(row.D_squared, ref["D2"], "D^2")
        assert_contains(row.aD2, ref["aD2"], "a D^2")
        assert_contains(row.ratio, ref["ratio"], "D(PX)/D")
        assert_contains(row.log10_gap, ref["log10_gap"], "log10 gap")
    for x in (row.a, row.aD2, row.ratio):
        assert x.rad() < 1e-6 * abs(x.mid())  # tight, not merely valid
    assert row.bound_certified and row.checker.startswith("confirmed")  # the checker re-derived the row


def test_thin_and_direct_routes_agree():
    s = init_scaling.sample(24, 4, "lecun", seed=1, d_k=5)
    thin, _, _, thin_float = init_scaling._thin_norm(s.W_Q, s.W_K)
    direct, _, _, direct_float = init_scaling._direct_norm(s.W_Q, s.W_K)
    assert thin.overlaps(direct) and thin.rad() < 1e-9 and direct.rad() < 1e-9
    assert math.isclose(thin_float, direct_float, rel_tol=1e-12)
    with mp.workdps(40):
        exact = max(mpmath.svd_r(oracle.mat((s.W_Q @ s.W_K.T).tolist()), compute_uv=False))
        assert_contains(thin, exact, "thin route")


def test_float64_saturation_flags_match_float64_itself():
    saturated_sample = init_scaling.sample(64, 16, "lecun", seed=0)
    modest_sample = init_scaling.sample(16, 8, "bert", seed=0)
    saturated, modest = (init_scaling.certify_row(s, max_prec=1024) for s in (saturated_sample, modest_sample))
    for s, row in ((saturated_sample, saturated), (modest_sample, modest)):
        diffs = s.X[:, None, :] - s.X[None, :, :]
        x = np.linalg.norm(s.W_Q @ s.W_K.T, 2) / math.sqrt(s.d_k) * (diffs * diffs).sum(axis=2).max()
        assert math.isclose(x, row.float64_aD2, rel_tol=1e-12)
        assert row.float64_one_minus_is_one == (1.0 - math.exp(-x) == 1.0)
        assert row.float64_gap_is_zero == (math.exp(-x) == 0.0)
    assert saturated.aD2 > 54 * math.log(2) and saturated.float64_one_minus_is_one  # lecun d = 64: a D^2 ~ 55
    assert modest.aD2 < 54 * math.log(2) and not modest.float64_one_minus_is_one  # bert d = 16: tiny A
    assert saturated.log10_gap < -20 and saturated.bound_certified  # the gap float64 lost, kept by arb


def test_samples_are_reproducible_per_dimension():
    first = init_scaling.sample(32, 6, "lecun", seed=5)
    again = init_scaling.sample(32, 6, "lecun", seed=5)
    other = init_scaling.sample(32, 6, "lecun", seed=6)
    assert np.array_equal(first.W_K, again.W_K) and not np.array_equal(first.W_K, other.W_K)
    assert init_scaling.sample(32, 6, "xavier", 0, d_k=8).variance == 2 / 40
    assert init_scaling.sample(32, 6, "bert", 0).variance == 0.02**2


def test_growth_exponent_is_a_least_squares_slope():
    rows = init_scaling.study([8, 32], n=4, seed=0)
    expected = math.log(float(rows[1].aD2.mid()) / float(rows[0].aD2.mid())) / math.log(4)
    assert math.isclose(init_scaling.growth_exponent(rows), expected, rel_tol=1e-9)
    assert init_scaling.growth_exponent(rows[:1]) is None


@pytest.mark.parametrize("argv", [["--d", "64,,256"], ["--d", "abc"], ["--d", "1"], ["--d", "100000"],
                                  ["--scheme", "he"], ["--n", "1"], ["--seed", "-1"], ["--d-k", "0"],
                                  ["--max-prec", "8"]])
def test_cli_bad_input(argv, capsys):
    assert main(["init", "--d", "8", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1


def test_cli_table_and_json(capsys):
    assert main(["init", "--d", "8,16", "--n", "4"]) == 0
    text = capsys.readouterr().out
    assert "log10 exp(-a D^2)" in text and "d^0.5" in text
    assert main(["init", "--d", "8", "--n", "4", "--scheme", "bert", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["scheme"] == "bert" and data["rows"][0]["d"] == 8 and data["rows"][0]["bound_certified"]


@pytest.mark.parametrize("argv", [["--d", "1025"], ["--d", "8", "--d-k", "1025"]])
def test_a_dimension_beyond_the_checkers_limit_is_refused_before_any_work(argv, capsys):
    """init confirms each row with the checker under its default limits and takes no --limit: --d 2048 was
    accepted (up to 4096), computed for minutes and reported undecided, the checker refusing its certificate."""
    started = time.monotonic()
    assert main(["init", *argv, "--n", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1 and "1024" in err
    assert time.monotonic() - started < 5


def test_a_row_beyond_the_checkers_work_limit_is_refused_before_any_work(monkeypatch, capsys):
    """--n 1024 (within the tokens limit) at d = 2: tau's n^3 pair terms put the row's certificate above the
    checker's default work limit, which init cannot raise; the row was computed (minutes on a busy machine)
    and then shown undecided, the checker's refusal only in the JSON.  Now refused first, naming the limit."""
    def computed(*args, **kwargs):
        raise AssertionError("a row was computed")
    monkeypatch.setattr(init_scaling, "certify_row", computed)
    assert main(["init", "--d", "2", "--n", "1024"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1 and "work" in err and "--n 1024" in err
    with pytest.raises(BadInput, match="work"):
        init_scaling.study([8, 2], n=1024)


def test_study_validates_before_computing():
    with pytest.raises(BadInput):
        init_scaling.study([8, 16], scheme="unknown")


@pytest.mark.parametrize("x", [37.0, 37.43, 37.5, 745.0, 745.2, 746.0])
def test_the_float64_view_is_what_float64_computes(x):
    """One definition of what plain float64 makes of 1 - exp(-x) and exp(-x), at the thresholds."""
    import math

    from certify.core.float64_limits import float64_view
    assert float64_view(x) == (1.0 - math.exp(-x) == 1.0, math.exp(-x) == 0.0)
    assert float64_view(x)[0] == (x > 54 * math.log(2)) and float64_view(x)[1] == (x > 1075 * math.log(2))


def test_cli_progress_names_each_part_of_a_row_as_it_begins(capsys):
    """A row of many tokens runs for minutes (--n 1024 --d 1024) under a bar that moved only when the row was done:
    the bar now names the enclosures at each precision and the checker as each begins."""
    assert main(["init", "--d", "8", "--n", "4", "--progress"]) == 0
    drawn = capsys.readouterr().err.replace("\r", "\n")
    enclosures, checker = drawn.find("d = 8: the enclosures at 53 bits"), drawn.find("d = 8: the checker")
    assert 0 <= enclosures < checker, drawn


def test_a_misspelt_scheme_is_refused_with_the_closest_one():
    with pytest.raises(BadInput, match=r"unknown scheme 'lecn'; did you mean lecun\? choose one of lecun, xavier"):
        init_scaling.sample(8, 4, "lecn", 0)


def test_the_init_rows_of_certify_run_name_no_certificate(tmp_path, capsys):
    """The thesis-dynamics rows of the initialisation table named the table's JSON as their certificate, which
    `certify verify` refuses (exit 2): a row names a certificate it has, the init rows none."""
    out = tmp_path / "report"
    assert main(["run", "--only", "thesis-dynamics", "--out", str(out), "-q"]) == 0
    rows = json.loads((out / "results.json").read_text())["rows"]
    init = [row for row in rows if row["case"].startswith("init ")]
    assert init and all(row["certificate"] is None for row in init)
    named = [row["certificate"] for row in rows if row["certificate"]]
    assert named and all(main(["verify", str(out / path), "-q"]) == 0 for path in named)
