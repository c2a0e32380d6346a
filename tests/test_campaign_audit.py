"""`certify verify FOLDER`: a campaign's records are re-derived in arb; a planted wrong record, a
tampered certificate or a corrupt folder is rejected."""

from __future__ import annotations

import hashlib
import json
import shlex
import shutil

import pytest

from certify.cli import build_parser, main
from certify import engine
from certify.engine import certificate
from certify.search import audit, campaign

PLANTED = "(1-exp(-a*D**2/8))*D"  # false for two nearly antipodal tokens: some records are violated
SPEC = campaign.Campaign("log-L", 4, 3, 40, 1, bound=PLANTED, L_range=(40.0, 2000.0))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    campaign.run(SPEC, out, workers=1)
    return out


@pytest.fixture
def copy(folder, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def _rewrite(out, change):
    """Apply change(record) to every record of the folder (it returns the record, or None to drop it),
    then redo the manifest's chunk digests and chain as a forger would: the edit is then invisible to
    the tamper-evidence, and only re-deriving the records in arb can find it.  The summary is redone too."""
    manifest, kept = json.loads((out / "manifest.json").read_text()), []
    for entry in manifest["chunks"]:
        path = out / "chunks" / f"{entry['first']:09d}.jsonl"
        records = [change(json.loads(line)) for line in path.read_text().splitlines()]
        kept += [r for r in records if r is not None]
        text = "".join(json.dumps(r) + "\n" for r in records if r is not None)
        path.write_text(text)
        entry["records"], entry["sha256"] = text.count("\n"), hashlib.sha256(text.encode()).hexdigest()
    manifest["chain"] = campaign._chain(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))
    spec, _ = audit.load(out)
    (out / "summary.json").write_text(json.dumps(campaign.summarize(spec, sorted(kept, key=lambda r: r["i"]))))


def _redigest(out, edited):
    """A forger's follow-up to editing the certificate of record `edited`: its digest redone in the record."""
    digest = hashlib.sha256((out / edited["certificate"]).read_bytes()).hexdigest()
    _rewrite(out, lambda r: {**r, "certificate_sha256": digest} if r["i"] == edited["i"] else r)


def test_records_name_their_configuration_and_tier(folder):
    records = campaign.records(folder)
    assert [r["name"] for r in records] == [SPEC.sample(r["i"]).config["name"] for r in records]
    assert {r["tier"] for r in records} == {"arb"}
    assert {r["verdict"] for r in records} >= {"holds", "violated"}  # the planted bound is false somewhere


def test_an_honest_campaign_is_confirmed(folder, capsys):
    report = audit.audit(folder, workers=1, sample=2)
    assert report.ok and report.records == SPEC.count and report.rederived < SPEC.count
    assert audit.audit(folder, everything=True, workers=1).rederived == SPEC.count
    assert main(["verify", str(folder / "manifest.json"), "--sample", "0", "--workers", "1"]) == 0
    assert capsys.readouterr().out.startswith("OK: campaign")


def test_a_planted_wrong_verdict_is_found(copy, capsys):
    """A violated configuration recorded as holds (its certificate removed): --all finds it."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "violated")

    def lie(record):
        if record["i"] == victim["i"]:
            record.update(verdict="holds", certificate=None, certificate_sha256=None)
        return record

    (copy / victim["certificate"]).unlink()
    _rewrite(copy, lie)
    report = audit.audit(copy, everything=True, workers=1)
    assert not report.ok
    assert report.problems == [f"configuration {victim['i']}: the record says holds, arb decides violated"]
    assert main(["verify", str(copy), "--all", "--workers", "1"]) == 1
    assert f"configuration {victim['i']}" in capsys.readouterr().out


def test_a_record_claiming_undecided_is_always_rederived(copy):
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"])
    _rewrite(copy, lambda r: {**r, "verdict": "undecided"} if r["i"] == victim["i"] else r)
    report = audit.audit(copy, sample=0, workers=1)
    assert report.problems == [f"configuration {victim['i']}: the record says undecided, arb decides holds"]


def test_a_tampered_certificate_is_rejected(copy):
    record = next(r for r in campaign.records(copy) if r["verdict"] == "violated")
    path = copy / record["certificate"]
    cert = json.loads(path.read_text())
    cert["verdict"] = "holds"
    path.write_text(json.dumps(cert))
    _redigest(copy, record)
    assert any("rejected by the checker" in p for p in audit.audit(copy, sample=0, workers=1).problems)


def test_a_certificate_of_another_configuration_is_rejected(copy):
    first, second = [r for r in campaign.records(copy) if r["certificate"]][:2]
    shutil.copy(copy / second["certificate"], copy / first["certificate"])
    _redigest(copy, first)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert any(f"configuration {first['i']}" in p and ("another configuration" in p or " says " in p)
               for p in problems)


def test_a_folder_missing_configurations_is_rejected(copy, capsys):
    """A chunk's records taken away with the manifest redone (a deleted chunk of violations looks clean
    otherwise), or a campaign not yet finished: the folder is not the campaign of its manifest."""
    dropped = {r["i"] for r in campaign.records(copy) if r["verdict"] == "violated"}
    _rewrite(copy, lambda r: None if r["i"] in dropped else r)
    report = audit.audit(copy, sample=0, workers=1)
    assert report.records == SPEC.count - len(dropped) and len(report.problems) == 1
    assert f"records {SPEC.count - len(dropped)} of the campaign's {SPEC.count} configurations" in report.problems[0]
    assert str(min(dropped)) in report.problems[0]
    assert report.problems[0].endswith(f"finish it with: {SPEC.validated().command(copy)})")
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert capsys.readouterr().out.startswith("REJECTED: campaign")


@pytest.mark.parametrize("corruption", ["repeated", "out of range", "unknown tier", "violated without certificate",
                                        "certificate not a path"])
def test_corrupt_records_are_rejected(copy, corruption):
    path = sorted((copy / "chunks").glob("*.jsonl"))[0]
    lines = path.read_text().splitlines()
    record = json.loads(lines[0])
    if corruption == "repeated":
        lines.append(lines[0])
    else:
        record.update({"out of range": {"i": SPEC.count}, "unknown tier": {"tier": "float64"},
                       "violated without certificate": {"verdict": "violated", "certificate": None},
                       "certificate not a path": {"certificate": 5}}[corruption])
        lines[0] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    assert not audit.audit(copy, sample=0, workers=1).ok


def test_not_a_campaign_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("certify: error:")
    (tmp_path / "manifest.json").write_text('{"format": "certify-campaign/1", "n": "four"}')
    assert main(["verify", str(tmp_path)]) == 2


def test_a_tier_label_the_campaign_cannot_have_written_is_rejected(copy, tmp_path):
    """The tier a record names is part of its claim: an arb campaign has no tier-3 record, and tier 3 never
    decides a configuration whose certificate the campaign keeps (every hold_stride-th goes to arb)."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"])
    _rewrite(copy, lambda r: {**r, "tier": "tier3", "precision": None} if r["i"] == victim["i"] else r)
    report = audit.audit(copy, everything=True, workers=1)
    assert not report.ok and "tier3" in report.problems[0]

    fast = tmp_path / "tier3"
    campaign.run(campaign.Campaign("gaussian", 4, 2, 40, 0, tier="tier3"), fast, workers=1)
    kept = next(r for r in campaign.records(fast) if r["certificate"])
    _rewrite(fast, lambda r: {**r, "tier": "tier3", "precision": None} if r["i"] == kept["i"] else r)
    report = audit.audit(fast, everything=True, workers=1)
    assert not report.ok and "tier3" in report.problems[0]


def test_a_summary_that_does_not_describe_the_records_is_rejected(copy):
    """summary.json is what a reader of the folder looks at first: a verified folder's summary must say
    what its records say (here, the violations erased from the counts)."""
    assert audit.audit(copy, sample=0, workers=1).ok
    summary = json.loads((copy / "summary.json").read_text())
    assert summary["counts"]["violated"] > 0
    summary["counts"] = {**summary["counts"], "holds": summary["decided"], "violated": 0}
    (copy / "summary.json").write_text(json.dumps(summary))
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and "summary.json" in problems[0]


def _redo_manifest(out, **changes):
    """The manifest's parameters changed as a forger would (its chain redone), then the records and summary."""
    manifest = json.loads((out / "manifest.json").read_text())
    manifest.update(changes)
    manifest["chain"] = campaign._chain(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))


def _parsed(command):
    """The campaign `certify sample` builds from a command line (its own parser, as a user's shell hands it)."""
    args = build_parser(only="sample").parse_args(shlex.split(command)[1:])
    return campaign.Campaign(
        distribution=args.distribution, n=args.n, d=args.d, count=args.count, seed=args.seed, claim=args.claim,
        bound=args.bound, L_range=None if args.l_range is None else tuple(args.l_range), max_prec=args.max_prec,
        tier=args.tier, mask=args.mask, value=args.value, value_norm=args.value_norm, residual=args.residual,
        ffn=args.ffn, hidden=args.hidden, ffn_residual=args.ffn_residual).validated(), args.out


@pytest.mark.parametrize("spec", [
    SPEC,
    campaign.Campaign("gaussian", 4, 2, 40, 3, claim="residual.two_sided", max_prec=4096, tier="tier3",
                      mask="causal", value="orthogonal", value_norm=0.1 + 0.2, residual=True),
    campaign.Campaign("gaussian", 3, 2, 10, 5, claim="ffn.lipschitz", ffn="gelu", ffn_residual=True),
    campaign.Campaign("gaussian", 3, 2, 10, 0, bound="-D + 2*D"),  # a bound that begins with "-"
])
def test_the_command_a_campaign_names_is_that_campaign(spec):
    """The command verify names to finish a campaign or rewrite its summary resumes that very campaign."""
    spec = spec.validated()
    assert _parsed(spec.command("a folder/with space")) == (spec, "a folder/with space")


def test_a_stale_summary_is_named_with_the_command_that_rewrites_it(copy, capsys):
    """A run killed after its last chunk and before its summary leaves an earlier run's summary.json (here
    the one a run stopped after the first chunk wrote): the records are judged as ever, the summary is named
    stale, not confirmed, and the command verify names rewrites it without deciding anything again."""
    spec = SPEC.validated()
    manifest = json.loads((copy / "manifest.json").read_text())
    first = manifest["chunks"][0]
    assert len(manifest["chunks"]) > 1
    earlier = [json.loads(line) for line in (copy / "chunks" / f"{first['first']:09d}.jsonl").read_text().splitlines()]
    (copy / "summary.json").write_text(json.dumps(campaign.summarize(spec, sorted(earlier, key=lambda r: r["i"]))))
    report = audit.audit(copy, sample=0, workers=1)
    assert len(report.problems) == 1 and f"stale: it describes the first {first['records']} of the 40" in report.problems[0]
    command = spec.command(copy)
    assert report.problems[0].endswith(command)
    chunks = {p.name: p.read_bytes() for p in (copy / "chunks").iterdir()}
    assert main(shlex.split(command)[1:] + ["--workers", "1", "--json"]) == 1  # the planted bound: violated
    assert json.loads(capsys.readouterr().out)["run"]["decided"] == 0
    assert {p.name: p.read_bytes() for p in (copy / "chunks").iterdir()} == chunks  # nothing decided again
    assert audit.audit(copy, sample=0, workers=1).ok


def test_a_missing_summary_is_noted_with_the_command_that_writes_it(copy, capsys):
    """No summary.json states nothing to confirm or reject: the records are confirmed, and the note says how
    to write the summary."""
    (copy / "summary.json").unlink()
    report = audit.audit(copy, sample=0, workers=1)
    assert report.ok and len(report.notes) == 1 and report.notes[0].endswith(SPEC.validated().command(copy))
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OK: campaign") and "note: there is no summary.json" in out


def test_a_precision_the_cap_does_not_allow_is_rejected(copy):
    """A record decided above the manifest's cap (or at a precision the engine never stops at) is not a
    record of the campaign; nor is a certificate decided at another precision than its record says."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"])
    _rewrite(copy, lambda r: {**r, "precision": 2 * SPEC.max_prec} if r["i"] == victim["i"] else r)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and f"precision {2 * SPEC.max_prec}" in problems[0]

    _rewrite(copy, lambda r: {**r, "precision": 60} if r["i"] == victim["i"] else r)  # below the cap, off the ladder
    assert "precision 60" in audit.audit(copy, sample=0, workers=1).problems[0]


def test_a_lowered_cap_cannot_turn_violations_into_undecided_cases(copy):
    """A forger lowers the manifest's cap below the precision that decided the violations, records them as
    undecided (re-derived at that cap, they are) and drops their certificates: the holds decided above the
    new cap give it away, sampled or not."""
    found = campaign.records(copy)
    lowered = campaign.engine.START_PRECISION + 1
    above = [r for r in found if r["verdict"] == "holds" and r["precision"] > lowered]
    assert above and all(r["precision"] > lowered for r in found if r["verdict"] == "violated")
    for r in found:
        if r["verdict"] == "violated":
            (copy / r["certificate"]).unlink()
    _redo_manifest(copy, max_prec=lowered)
    _rewrite(copy, lambda r: {**r, "verdict": "undecided", "precision": lowered, "certificate": None,
                              "certificate_sha256": None, "reason": "undecided at the precision cap"}
             if r["verdict"] == "violated" else r)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and f"precision {above[0]['precision']}" in problems[0]


def test_a_certificate_at_another_precision_than_its_record_is_rejected(copy):
    record = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and r["certificate"])
    # the configuration decided again from a higher precision: a certificate the checker confirms
    cert = engine.check(SPEC.sample(record["i"]).config, bound=SPEC.bound, start_prec=2 * record["precision"]).certificate
    assert certificate.confirm(cert).ok and cert["precision"] == 2 * record["precision"]
    (copy / record["certificate"]).write_text(json.dumps(cert))
    _redigest(copy, record)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and f"decided at {2 * record['precision']} bits" in problems[0]
