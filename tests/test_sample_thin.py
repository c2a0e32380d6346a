"""`certify sample --d-k K`: campaigns of thin heads W_Q, W_K (d x K) instead of a d x d A.

A small campaign on each tier is confirmed by `certify verify FOLDER --all`; its configurations are the
ones the sampler regenerates from (seed, index); the norm goes through the K x K reduction (the
certificate's witness for A0 is K x K); a record edited to another verdict is rejected; a resume with
another d_k is refused, and a campaign without one keeps the manifest (and so the folders) it had.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import certify
from certify.cli import main
from certify.core import config
from certify.engine import certificate
from certify.search import audit, campaign, samplers

N, D, K = 16, 32, 4
# false on some thin-head configurations (D_out / D spreads around 1/2 there), true on others
HALF = "(1-exp(-a*D**2))*D/2"


def _spec(tier: str, **more) -> campaign.Campaign:
    return campaign.Campaign("gaussian", N, D, 60, 5, tier=tier, d_k=K, **more)


@pytest.fixture(scope="module", params=campaign.TIERS)
def folder(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"thin-{request.param}")
    assert main(["sample", "--n", str(N), "--d", str(D), "--d-k", str(K), "--count", "60", "--seed", "5",
                 "--tier", request.param, "--out", str(out), "--workers", "2", "-q"]) == 0
    return request.param, out


def test_a_thin_campaign_is_confirmed_by_verify_all(folder, capsys):
    tier, out = folder
    capsys.readouterr()
    assert main(["verify", str(out), "--all", "--workers", "2"]) == 0
    assert "60 of 60 configurations re-derived" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["d_k"] == K and manifest["tier"] == tier
    tiers = {r["tier"] for r in campaign.records(out)}
    assert tiers == ({"arb", "tier3"} if tier == "tier3" else {"arb"})  # tier 3 decided some itself


def test_configurations_are_those_regenerated_from_seed_and_index(folder):
    _, out = folder
    kept = [r for r in campaign.records(out) if r["certificate"]]
    assert kept
    for record in kept:
        regenerated = samplers.sample("gaussian", N, D, 5, record["i"], None, None, K).config
        assert "A" not in regenerated and regenerated["d_k"] == K
        assert np.shape(regenerated["W_Q"]) == np.shape(regenerated["W_K"]) == (D, K)
        cert = certificate.read(out / record["certificate"])
        assert cert["inputs"] == config.to_json(config.load(regenerated))
        assert record["name"] == regenerated["name"]


def test_the_norm_goes_through_the_K_by_K_reduction(folder):
    """The certificate's witness for a is the K x K one of the reduction, not a d x d SVD's."""
    _, out = folder
    for record in (r for r in campaign.records(out) if r["certificate"]):
        witness = certificate.read(out / record["certificate"])["witness"]["A0"]
        assert np.shape(witness["basis"]) == (K, K)


def test_the_tokens_are_those_of_the_full_head_and_a_stays_in_its_range():
    """--d-k changes the head only (drawn where A was); ||A||_2 stays near the full A's 2, so a D^2 too."""
    full, thin = campaign.Campaign("gaussian", N, D, 40, 5), _spec("arb")
    a_full, a_thin = [], []
    for i in range(40):
        f, t = full.sample(i), thin.sample(i)
        assert f.config["X"] == t.config["X"]
        a_full.append(np.linalg.norm(f.A, 2))
        a_thin.append(np.linalg.norm(t.A, 2))
        assert t.a == pytest.approx(a_thin[-1], rel=1e-12)  # the screen's a: the reduction's
    assert 0.5 < np.median(a_thin) / np.median(a_full) < 1.5


@pytest.mark.parametrize("name", sorted(samplers.DISTRIBUTIONS))
def test_every_distribution_draws_a_thin_head(name):
    L_range = samplers.validate(name, 5, 6, None, 2, campaign.OPTIONS.option)
    first, again = (samplers.sample(name, 5, 6, 3, 7, L_range, None, 2) for _ in range(2))
    assert first.config == again.config
    layer = config.load(first.config).layers[0]
    assert layer.A is None and layer.d_k == 2 and np.shape(first.config["W_Q"]) == (6, 2)
    assert samplers.sample(name, 5, 6, 3, 7, L_range).config["X"] == first.config["X"]


def test_an_L_range_sets_the_thin_heads_a_D2():
    L_range = (0.01, 300.0)
    for i in range(30):
        s = samplers.sample("gaussian", N, D, 2, i, L_range, None, K)
        assert s.L_target == pytest.approx(samplers.float64_L(s.X, s.A), rel=1e-9)
        assert L_range[0] * (1 - 1e-9) <= s.L_target <= L_range[1] * (1 + 1e-9)


def test_a_record_edited_to_another_verdict_is_rejected(tmp_path):
    from test_campaign_audit import _rewrite

    out = tmp_path / "c"
    spec = _spec("arb", bound=HALF)
    summary = campaign.run(spec, out, workers=1)
    assert summary["counts"]["violated"] and summary["counts"]["holds"]
    assert audit.audit(out, everything=True, workers=1).ok
    # a violation recorded as a hold, at an index whose hold certificate is not kept: only arb can tell
    victim = next(r for r in campaign.records(out) if r["verdict"] == "violated" and r["i"] % spec.hold_stride)
    (out / victim["certificate"]).unlink()
    _rewrite(out, lambda r: {**r, "verdict": "holds", "certificate": None,
                             "certificate_sha256": None} if r["i"] == victim["i"] else r)
    assert main(["verify", str(out), "--all", "--workers", "1"]) == 1


def test_a_resume_with_another_d_k_is_refused_in_one_line(tmp_path, capsys):
    out = str(tmp_path / "c")

    def sample(*d_k):
        return main(["sample", "--n", "4", "--d", "6", *d_k, "--count", "3", "--out", out, "--workers", "1", "-q"])

    assert sample("--d-k", "2") == 0
    for other in (("--d-k", "3"), ()):
        capsys.readouterr()
        assert sample(*other) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "another campaign (different --d-k)" in err
    assert sample("--d-k", "2") == 0  # the same campaign: resumed


def test_a_campaign_without_d_k_keeps_its_manifest_and_resumes(tmp_path):
    """No d_k key in the manifest of a full-head campaign (as before --d-k): such a folder resumes and verifies."""
    out = tmp_path / "c"
    spec = campaign.Campaign("gaussian", 4, 3, 6, 1)
    campaign.run(spec, out, workers=1, stop_after=1)
    assert "d_k" not in json.loads((out / "manifest.json").read_text())
    assert campaign.run(spec, out, workers=1)["complete"]
    assert audit.audit(out, everything=True, workers=1).ok


def test_the_python_api_takes_d_k(tmp_path):
    result = certify.sample(n=4, d=6, d_k=2, count=3, out=tmp_path / "c", workers=1)
    assert result.verdict == "holds" and result.summary["campaign"]["d_k"] == 2
    with pytest.raises(certify.BadInput, match="^d_k= must be between 1 and d - 1"):
        certify.sample(n=4, d=6, d_k=6, count=3, out=tmp_path / "d", workers=1)
    assert not (tmp_path / "d").exists()
