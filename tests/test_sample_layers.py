"""`certify sample` beyond pure attention: masks, value matrices, residual layers and FFNs.

Each layer option end to end on a small campaign with tier 3 first: the claim's hypotheses met,
every record re-derived in arb by `certify verify --all` (a tier-3 hold arb does not confirm is a
contradiction), planted false bounds found violated through arb, a forged record or manifest
rejected.  And near consensus tier 3 decides again (P X from the centred tokens).
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from flint import arb, ctx

from certify import engine
from certify.cli import main
from certify.core import config
from certify.core.arith import BALL, FLOAT64
from certify.engine import decide as engine_decide
from certify.jobs.store import chain
from certify.search import audit, campaign, samplers, tier3

# claim -> the layer options that meet its hypotheses
LAYERS = {
    "collapse.dobrushin": dict(mask="causal"),
    "value.expansive": dict(value="gaussian", value_norm=3.0),
    "residual.two_sided": dict(value="orthogonal", residual=True, mask="uni"),
    "residual.two_sided.global": dict(value="gaussian", residual=True),
    "ffn.lipschitz": dict(ffn="relu", hidden=5),
}
# planted bounds (D_out <= EXPR, in D, a, v, n, d) stronger than the truth: false on some configurations
PLANTED = {
    "collapse.dobrushin": "a*D**3/8",
    "value.expansive": "v*(1 - exp(-a*D**2))*D/8",
    "residual.two_sided": "(1 + v)*D/2",
    "residual.two_sided.global": "(1 + v*(1 - exp(-a*D**2)))*D/2",
    "ffn.lipschitz": "(1 - exp(-a*D**2))*D/8",
}


def _spec(count: int, claim=None, bound=None, **parts) -> campaign.Campaign:
    return campaign.Campaign("gaussian", 5, 3, count, 7, claim=claim, bound=bound, tier="tier3", **parts)


def _audited(spec: campaign.Campaign, out) -> tuple[dict, list[dict]]:
    summary = campaign.run(spec, out, workers=1)
    report = audit.audit(out, everything=True, workers=1)
    assert report.ok, report.problems  # every record, tier 3's holds included, as arb decides it
    assert report.rederived == spec.count
    return summary, campaign.records(out)


@pytest.mark.parametrize("claim", sorted(LAYERS))
def test_each_layer_option_end_to_end_tier3_agrees_with_arb(claim, tmp_path):
    summary, records = _audited(_spec(40, claim=claim, **LAYERS[claim]), tmp_path / "c")
    assert summary["counts"] == {"holds": 40, "violated": 0, "undecided": 0}
    assert {r["tier"] for r in records} == {"tier3", "arb"}  # tier 3 decided, arb the sampled holds
    components = {"value": "V", "mask": "mask", "residual": "residual", "ffn": "ffn"}
    case = config.load(_spec(24, claim=claim, **LAYERS[claim]).validated().sample(3).config)
    assert set(case.layers[0].components()) == {components[k] for k in LAYERS[claim] if k in components}


@pytest.mark.parametrize("claim", sorted(PLANTED))
def test_planted_false_bounds_are_violated_through_arb(claim, tmp_path):
    spec = _spec(40, bound=PLANTED[claim], **LAYERS[claim])
    summary, records = _audited(spec, tmp_path / "c")
    assert summary["counts"]["violated"] > 0
    assert all(r["tier"] == "arb" and r["certificate"] for r in records if r["verdict"] == "violated")


def test_gelu_ffn_campaign_on_tier3_agrees_with_arb(tmp_path):
    """GELU's erf is enclosed by tier 3 (its series): tier 3 decides, and arb re-derives every record alike."""
    summary, records = _audited(_spec(40, claim="ffn.lipschitz", ffn="gelu", ffn_residual=True), tmp_path / "c")
    assert summary["counts"]["holds"] == 40 and {r["tier"] for r in records} == {"tier3", "arb"}
    assert config.load(_spec(6, claim="ffn.lipschitz", ffn="gelu", ffn_residual=True).validated().sample(0).config).layers[0].ffn.residual


def test_cli_options_and_bad_input(tmp_path, capsys):
    out = tmp_path / "c"
    argv = ["sample", "--claim", "residual.two_sided", "--value", "orthogonal", "--value-norm", "2", "--residual",
            "--mask", "sliding", "--n", "4", "--d", "2", "--count", "4", "--out", str(out), "--tier", "tier3",
            "--workers", "1", "-q"]
    assert main(argv) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["mask"], manifest["value"], manifest["value_norm"], manifest["residual"]) == (
        "sliding", "orthogonal", 2.0, True)
    assert "mask=sliding" in capsys.readouterr().out
    V = np.array(campaign.Campaign(**{k: v for k, v in manifest.items() if k not in ("format", "chunks", "chain")
                                      }).sample(1).config["V"])
    assert np.linalg.norm(V, 2) == pytest.approx(2.0, rel=1e-12)
    assert np.allclose(V.T @ V, 4 * np.eye(2))
    for bad in (["--claim", "residual.two_sided", "--value", "gaussian"],  # no residual: hypotheses fail
                ["--claim", "collapse.global", "--mask", "causal"],
                ["--claim", "ffn.lipschitz", "--ffn", "relu", "--value", "gaussian"],
                ["--hidden", "3"], ["--value-norm", "2"], ["--value", "gaussian", "--value-norm", "-1"],
                ["--claim", "value.bounded", "--value", "gaussian", "--tier", "tier3"]):
        code = main(["sample", *bad, "--n", "4", "--d", "2", "--count", "2", "--out", str(tmp_path / "bad"),
                     "--workers", "1", "-q"])
        assert code == 2, bad
        assert capsys.readouterr().err.count("\n") == 1


def test_layer_parts_are_drawn_after_the_tokens_and_head():
    """The same tokens and head with or without the parts; a pure-attention manifest has no part keys."""
    pure, layered = campaign.Campaign("gaussian", 5, 3, 4, 7), _spec(4, **LAYERS["residual.two_sided"])
    for i in range(4):
        a, b = pure.sample(i).config, layered.sample(i).config
        assert a["X"] == b["X"] and a["A"] == b["A"]
        assert b == layered.sample(i).config  # reproducible
    assert not set(campaign.PARTS) & set(pure.validated().manifest())


def test_forged_records_and_manifests_are_rejected(tmp_path, capsys):
    """A violation recorded as a hold (an arb hold, as this arb campaign writes them: a tier-3 label is refused as
    one it cannot have written), and a manifest naming another mask, both with their digests redone."""
    from test_campaign_audit import _rewrite

    out = tmp_path / "c"
    spec = _spec(40, bound=PLANTED["residual.two_sided"], **LAYERS["residual.two_sided"])
    campaign.run(spec, out, workers=1)
    honest = tmp_path / "honest"
    shutil.copytree(out, honest)
    # a hold at an index whose certificate is not kept: the forgery passes the folder's own checks
    victim = next(r for r in campaign.records(out) if r["verdict"] == "violated" and r["i"] % spec.hold_stride)
    (out / victim["certificate"]).unlink()
    _rewrite(out, lambda r: {**r, "verdict": "holds", "certificate": None,
                             "certificate_sha256": None} if r["i"] == victim["i"] else r)
    report = audit.audit(out, everything=True, workers=1)
    assert not report.ok and any("arb decides violated" in p for p in report.problems)
    assert main(["verify", str(out), "--all", "--workers", "1"]) == 1

    manifest = json.loads((honest / "manifest.json").read_text())
    manifest["mask"] = "causal"
    manifest["chain"] = chain(manifest)
    (honest / "manifest.json").write_text(json.dumps(manifest))
    report = audit.audit(honest, everything=True, workers=1)
    assert not report.ok and any("another configuration" in p or "arb decides" in p for p in report.problems)


def _near_consensus_batch(count: int) -> tuple[list[dict], tier3.Batch]:
    configs = [samplers.sample("near-consensus", 8, 4, 11, i).config for i in range(count)]
    return configs, tier3.batch_of_configs(configs)


def test_near_consensus_is_decided_again():
    """collapse.global at 8 x 4 near consensus (spread down to 2^-20): >= 99% decided by tier 3."""
    _, batch = _near_consensus_batch(300)
    assert np.mean(tier3.decide("collapse.global", batch) == tier3.HOLDS) >= 0.99


def test_centred_output_enclosures_contain_arb_near_consensus():
    """D_out and D_PX of the centred step enclose arb's at 128 bits (the absolute tokens there)."""
    configs, batch = _near_consensus_batch(12)
    view = tier3.layer_view(batch)
    claim = engine.target("collapse.dobrushin").claim
    for name in ("D_out", "D_PX", "tau", "D"):
        value = view.get(name)
        for c, cfg in enumerate(configs):
            case = config.load(cfg)
            witnesses: dict = {}
            engine_decide.evaluate(FLOAT64, case, claim, witnesses)
            with ctx.workprec(128):
                exact = engine_decide.evaluate(BALL, case, claim, witnesses)[0][0].get(name)
                lo, hi = np.broadcast_to(value.lo, (len(configs),))[c], np.broadcast_to(value.hi, (len(configs),))[c]
                assert not (exact < arb(float(lo))) and not (exact > arb(float(hi))), (name, c, exact, lo, hi)
