"""`certify verify FOLDER`: a campaign's records are re-derived in arb; a planted wrong record, a
tampered certificate or a corrupt folder is rejected."""

from __future__ import annotations

import collections
import hashlib
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import certify
from certify.cli import build_parser, main
from certify.cli import sample as sample_command
from certify import engine
from certify.core import files
from certify.engine import certificate
from certify.errors import BadInput
from certify.jobs.store import chain
from certify.search import audit, campaign, samplers

PLANTED = "(1-exp(-a*D**2/8))*D"  # false for two nearly antipodal tokens: some records are violated
ROOT = Path(__file__).resolve().parents[1]
SPEC = campaign.Campaign("log-L", 4, 3, 40, 1, bound=PLANTED, L_range=(40.0, 2000.0))


def _campaign_folder(tmp_path_factory, spec: campaign.Campaign, name: str):
    """The campaign `spec` run once into a fresh folder (a module's fixture: its tests edit copies)."""
    out = tmp_path_factory.mktemp(name)
    campaign.run(spec, out, workers=1)
    return out


def _copied(folder, tmp_path, name: str):
    """A copy of a campaign folder that a test may edit."""
    target = tmp_path / name
    shutil.copytree(folder, target)
    return target


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return _campaign_folder(tmp_path_factory, SPEC, "campaign")


@pytest.fixture
def copy(folder, tmp_path):
    return _copied(folder, tmp_path, "copy")


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
    manifest["chain"] = chain(manifest)
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


def test_a_confirmation_says_which_holds_were_not_rederived(folder, capsys):
    """"K of N re-derived" read as the whole campaign re-derived: the line says the others are holds that were not, and
    --all, which re-derives every one, says nothing of the kind."""
    report = audit.audit(folder, workers=1, sample=0)
    assert main(["verify", str(folder), "--sample", "0", "--workers", "1"]) == 0
    rest = SPEC.count - report.rederived
    assert f"every one as recorded (the other {rest} holds were not; --all re-derives every one);" in capsys.readouterr().out
    assert main(["verify", str(folder), "--all", "--workers", "1"]) == 0
    assert "were not" not in capsys.readouterr().out


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
    i = victim["i"]  # and the forger wrote no undecided/ file for it
    assert sorted(report.problems) == [f"configuration {i}: the record says undecided, arb decides holds",
                                       f"configuration {i}: undecided/{i:09d}.json is missing"]


def test_a_tampered_certificate_is_rejected(copy):
    record = next(r for r in campaign.records(copy) if r["verdict"] == "violated")
    path = copy / record["certificate"]
    cert = json.loads(path.read_text())
    cert["verdict"] = "holds"
    path.write_text(json.dumps(cert))
    _redigest(copy, record)
    assert any("rejected by the checker" in p for p in audit.audit(copy, sample=0, workers=1).problems)


def test_a_file_in_a_certificate_s_place_is_read_no_further_than_one_the_campaign_wrote(copy):
    """A certificate was read whole to check its digest, as were an undecided/ file and a corpus run's summary.txt
    compared with what their records give: a sparse file of 2^40 bytes in their place was out of memory.  Each is
    read as far as what it must hold (a certificate: the campaign's bytes limit) and a byte past it."""
    record = next(r for r in campaign.records(copy) if r["certificate"])
    with open(copy / record["certificate"], "r+b") as handle:
        handle.truncate(1 << 40)
    with pytest.raises(BadInput, match="does not match the digest in its record"):
        campaign.records(copy)
    assert not files.holds(copy / record["certificate"], b"{}") and files.holds(copy / "manifest.json",
                                                                              (copy / "manifest.json").read_bytes())


def test_a_certificate_of_another_configuration_is_rejected(copy):
    first, second = [r for r in campaign.records(copy) if r["certificate"]][:2]
    shutil.copy(copy / second["certificate"], copy / first["certificate"])
    _redigest(copy, first)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert any(f"configuration {first['i']}" in p and ("another configuration" in p or " says " in p)
               for p in problems)


def _chunk_names(out) -> set[int]:
    """The indices that name the folder's chunk files (a run names a chunk by an index it decides)."""
    return {entry["first"] for entry in json.loads((out / "manifest.json").read_text())["chunks"]}


def test_a_folder_missing_configurations_is_rejected(copy, capsys):
    """Records taken away with the manifest redone (deleted violations look clean otherwise), or a campaign not
    yet finished: the folder is not the campaign of its manifest, and running the campaign again finishes it."""
    names = _chunk_names(copy)
    violated = [r["i"] for r in campaign.records(copy) if r["verdict"] == "violated" and r["i"] not in names]
    dropped = set(violated) or {max(set(range(SPEC.count)) - names)}
    _rewrite(copy, lambda r: None if r["i"] in dropped else r)
    report = audit.audit(copy, sample=0, workers=1)
    assert report.records == SPEC.count - len(dropped) and len(report.problems) == 1
    assert f"records {SPEC.count - len(dropped)} of the campaign's {SPEC.count} configurations" in report.problems[0]
    assert str(min(dropped)) in report.problems[0]
    assert report.problems[0].endswith(f"finish it with: {SPEC.validated().command(copy)})")
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    # one problem is counted as one ("1 problem(s)" before), by the command and by certify.verify
    assert capsys.readouterr().out.startswith(f"REJECTED: campaign {copy}: 1 problem in ")
    assert "; 1 problem;" in certify.verify(copy, sample=0, workers=1).message + ";"


def test_a_chunk_without_the_record_that_names_it_is_corrupt(copy, capsys):
    """The record a chunk file is named by, taken away with the manifest redone: not an interrupted campaign (a run
    would decide that index again and stop on the chunk file its commit would overwrite) but an edited folder."""
    named = max(_chunk_names(copy))
    _rewrite(copy, lambda r: None if r["i"] == named else r)
    problem = f"chunks/{named:09d}.jsonl holds no record of index {named}, which names it"
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert problem in capsys.readouterr().out
    before = sorted(p.name for p in (copy / "certificates").iterdir())
    assert main(["sample", *shlex.split(SPEC.validated().command(copy))[2:], "--workers", "1", "--no-progress"]) == 2
    assert problem in capsys.readouterr().err
    assert sorted(p.name for p in (copy / "certificates").iterdir()) == before  # nothing removed before the refusal


def test_the_missing_configurations_are_named_by_their_ranges():
    spec = campaign.Campaign("gaussian", 2, 1, 12, 0)
    by_index = {i: {} for i in (1, 2, 5, 9)}
    problem = audit._missing_problem(spec, "F", by_index)
    assert problem.startswith("the folder records 4 of the campaign's 12 configurations; no record of 0, 3-4, 6-8, "
                              "10-11 (an interrupted campaign"), problem
    assert audit._missing_problem(spec, "F", {i: {} for i in range(12)}) is None


def test_an_unfinished_campaign_of_a_huge_count_is_verified_in_little_memory(tmp_path, capsys):
    """The configurations without a record were listed one by one: `certify verify` of a campaign of --count 1e9
    stopped after 20 ran out of memory under a 3 GB cap.  Here 2e6, 70 MB as a list."""
    import tracemalloc

    spec = campaign.Campaign("gaussian", 2, 1, 2_000_000, 0)
    campaign.run(spec, tmp_path, workers=1, stop_after=1)
    tracemalloc.start()
    try:
        problem = audit._missing_problem(spec, tmp_path, {0: {}})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "records 1 of the campaign's 2000000 configurations; no record of 1-1999999 (" in problem, problem
    assert peak < 1e6, peak


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


@pytest.mark.parametrize("key, text", [("margin_log10", "-1e400"), ("margin_log10", "1e400"), ("ratio", "1e400")])
def test_a_figure_that_reads_as_infinity_is_a_corrupt_record(copy, capsys, key, text):
    """A record states null for a figure past float64's range (JSON has no Infinity); a literal that overflows to
    it (1e400) is no run's.  Written in a hold's record, its digests redone, it crashed verify's summary (the
    margins' histogram: an internal error, where nothing decided again differs) and a resume's: the record is
    corrupt, rejected by verify and refused to a resume in one line."""
    holds = [r for r in campaign.records(copy) if r["verdict"] == r["float64"] == "holds" and not r["certificate"]]
    hold = min(holds, key=lambda r: r["ratio"])  # none that verify decides again with --sample 0
    _rewrite(copy, lambda r: {**r, key: 12345.5} if r["i"] == hold["i"] else r)
    manifest = json.loads((copy / "manifest.json").read_text())
    for entry in manifest["chunks"]:
        path = copy / "chunks" / f"{entry['first']:09d}.jsonl"
        if "12345.5" in (found := path.read_text()):
            path.write_text(found.replace("12345.5", text))
            entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["chain"] = chain(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REJECTED") and f"{key} = {float(text)}" in out and "beyond binary64's range" in out, out
    assert main(shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "beyond binary64's range" in err, err


def test_not_a_campaign_exits_2(tmp_path, capsys):
    assert main(["verify", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("certify: error:")
    (tmp_path / "manifest.json").write_text('{"format": "certify-campaign/1", "n": "four"}')
    assert main(["verify", str(tmp_path)]) == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_manifest_that_is_a_pipe_is_refused_not_waited_on(tmp_path):
    """verify read a folder's manifest.json to tell a corpus run's from a campaign's: a pipe there (no writer) held it
    for ever."""
    os.mkfifo(tmp_path / "manifest.json")
    done = subprocess.run([sys.executable, "-m", "certify", "verify", str(tmp_path)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines() == [f"certify: error: {tmp_path}: neither a certificate nor a campaign or corpus "
                                        "run folder (manifest.json is no file: a folder, a pipe or a broken link)"], done


def test_another_jobs_folder_is_named_for_what_it_is(tmp_path):
    """A `model --corpus` folder (another job's manifest) is no campaign: the campaign audit's verify names its format
    and the command that re-checks it (certify.studies.models.corpus_audit), not an invitation to discard it with an
    option `verify` does not have; certify.verify re-checks it as that command does (here a manifest whose chain is
    not its entries', rejected)."""
    (tmp_path / "manifest.json").write_text('{"format": "certify-model-corpus/1", "chunks": [], "chain": ""}')
    rejected = certify.verify(tmp_path)
    assert (rejected.ok, rejected.kind, rejected.exit_code) == (False, "corpus run", 1), rejected
    assert rejected.message == "1 problem" and "chain of chunk digests" in rejected.problems[0], rejected
    with pytest.raises(BadInput) as refused:
        audit.load(tmp_path)
    said = str(refused.value)
    assert "'certify-model-corpus/1'" in said and "--restart" not in said and "\n" not in said
    assert said.endswith(f"the command `certify verify {tmp_path}` re-checks a `certify model --corpus` folder, and "
                         "checks a certificate it keeps: it keeps none"), said
    # where it keeps some, one is named with the command that checks it (it said "the certificates in it")
    (tmp_path / "certificates").mkdir()
    (tmp_path / "certificates" / "L0H2.json").write_text("{}")
    with pytest.raises(BadInput) as refused:
        audit.load(tmp_path)
    assert (f"certify verify {tmp_path / 'certificates' / 'L0H2.json'} (1 in {tmp_path / 'certificates'})"
            in str(refused.value)), refused.value


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
    manifest["chain"] = chain(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))


def _parsed(command):
    """The campaign `certify sample` builds from a command line (its own parser, as a user's shell hands it)."""
    args = build_parser(only="sample").parse_args(shlex.split(command)[1:])
    return sample_command.campaign_of(args).validated(), args.out


@pytest.mark.parametrize("spec", [
    SPEC,
    campaign.Campaign("gaussian", 4, 2, 40, 3, claim="residual.two_sided", max_prec=4096, tier="tier3",
                      mask="causal", value="orthogonal", value_norm=0.1 + 0.2, residual=True),
    campaign.Campaign("gaussian", 3, 2, 10, 5, claim="ffn.lipschitz", ffn="gelu", ffn_residual=True),
    campaign.Campaign("gaussian", 3, 2, 10, 0, bound="-D + 2*D"),  # a bound that begins with "-"
    campaign.Campaign("gaussian", 3, 2, 10, 1, limits={"work": 2 * 10**9, "tokens": 512}),  # caps are the campaign's too
    campaign.Campaign("sphere", 3, 5, 10, 2, d_k=2, L_range=(0.5, 8.0)),  # a thin head
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


def test_a_summary_that_is_no_file_is_not_read_as_a_missing_one(copy, capsys):
    """A folder in place of summary.json was confirmed with the note that the run was stopped before writing it, and
    that note's command then refused the folder in the way: it is a problem of the campaign folder."""
    (copy / "summary.json").unlink()
    (copy / "summary.json").mkdir()
    report = audit.audit(copy, sample=0, workers=1)
    assert not report.ok and report.notes == [] and "summary.json" in report.problems[0]
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert capsys.readouterr().out.startswith("REJECTED")


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


FAST = campaign.Campaign("log-L", 4, 3, 80, 1, bound=PLANTED, L_range=(0.5, 50.0), tier="tier3")
FLOAT64_FIELDS = ("L", "float64", "float64_equal", "float64_bound_is_D", "float64_gap_zero")


@pytest.fixture(scope="module")
def fast_folder(tmp_path_factory):
    return _campaign_folder(tmp_path_factory, FAST, "tier3")


@pytest.fixture
def fast_copy(fast_folder, tmp_path):
    return _copied(fast_folder, tmp_path, "fast")


def _swap(out, first, second, keys):
    """The fields `keys` of records `first` and `second` exchanged (digests and summary redone)."""
    a, b = {key: first[key] for key in keys}, {key: second[key] for key in keys}
    _rewrite(out, lambda r: {**r, **b} if r["i"] == first["i"] else {**r, **a} if r["i"] == second["i"] else r)


def test_an_honest_tier3_campaign_is_confirmed_without_rederiving_its_tier3_holds(fast_folder):
    found = campaign.records(fast_folder)
    assert {r["tier"] for r in found} == {"arb", "tier3"} and any(r["verdict"] == "violated" for r in found)
    report = audit.audit(fast_folder, sample=0, workers=1)
    assert report.ok and report.rederived <= sum(r["tier"] == "arb" for r in found) + 1


def test_holds_float64_cannot_tell_from_a_tie_are_not_rederived_where_tier3_decides_them(tmp_path_factory):
    """A hold whose float64 sides are too close to tell goes to arb (all of a few, SAMPLE of many), unless tier 3
    decides it here: those SAMPLE draws are for the holds nothing else vouches for, not spent on tier 3's."""
    spec = replace(SPEC, tier="tier3")
    folder = _campaign_folder(tmp_path_factory, spec, "tier3-tied")
    found = {r["i"]: r for r in campaign.records(folder)}
    rows = audit.screen(spec.validated(), [tuple(sorted(found))])
    assert any(found[row["i"]]["tier"] == "tier3" and not audit._apart(row["pairs"]) for row in rows)
    report = audit.audit(folder, sample=0, workers=1)
    assert report.ok and report.rederived <= sum(r["tier"] == "arb" for r in found.values()) + 1


def test_float64_fields_swapped_between_records_are_found(copy):
    """The float64 fields (what float64 computes of L = a D^2, its verdict, its equalities) of every record are
    computed again, not only of those re-derived in arb."""
    holds = [r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"]]
    first, second = max(holds, key=lambda r: r["L"]), min(holds, key=lambda r: r["L"])
    _swap(copy, first, second, FLOAT64_FIELDS)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert {p.split(":")[0] for p in problems} == {f"configuration {first['i']}", f"configuration {second['i']}"}
    assert all("float64 computes" in p for p in problems)


def test_tier3_bounds_swapped_between_holds_are_found(fast_copy):
    """A tier-3 hold's lhs/rhs and margin are bounds tier 3 computes again for every one of them: those that
    differ go to arb, whose enclosures the false one contradicts (the other, looser, is still a true bound)."""
    holds = sorted((r for r in campaign.records(fast_copy) if r["tier"] == "tier3"), key=lambda r: r["ratio"])
    first, second = holds[0], holds[-1]
    _swap(fast_copy, first, second, ("ratio", "margin_log10", "margin"))
    report = audit.audit(fast_copy, sample=0, workers=1)
    assert len(report.problems) == 1 and report.problems[0].startswith(
        f"configuration {second['i']}: the tier-3 record's bounds")
    assert any("2 tier-3 hold(s) state other bounds" in note for note in report.notes)


def test_tier3_bounds_of_another_version_are_confirmed_where_arb_agrees(fast_copy):
    """A campaign of another version of tier 3 states other, valid bounds (here looser: lhs/rhs higher, the
    margins lower, consistent): they go to arb, which they respect, and the folder is confirmed."""
    def looser(r):
        if r["tier"] != "tier3":
            return r
        ratio = r["ratio"] + (1 - r["ratio"]) / 8
        return {**r, "ratio": ratio, "margin_log10": math.log10(1 - ratio), "margin": f"{float(r['margin']) * 7 / 8:.3g}"}
    _rewrite(fast_copy, looser)
    (fast_copy / campaign.SUMMARY).unlink()  # the summary of the records as they are now is written again
    report = audit.audit(fast_copy, sample=0, workers=1, everything=True)
    assert report.ok, report.problems
    assert any("tier-3 hold(s) state other bounds than tier 3 computes here" in note for note in report.notes)


def test_a_violation_labelled_a_tier3_hold_is_found_without_sampling(fast_copy):
    """Tier 3 does not decide what holds only in a forger's record: the record then goes to arb, sampled or not."""
    spec = FAST.validated()
    victim = next(r for r in campaign.records(fast_copy) if r["verdict"] == "violated" and r["i"] % spec.hold_stride)
    (fast_copy / victim["certificate"]).unlink()
    _rewrite(fast_copy, lambda r: {**r, "verdict": "holds", "tier": "tier3", "precision": None, "ratio": 0.5,
                                   "margin_log10": math.log10(0.5), "margin": "0.1", "certificate": None,
                                   "certificate_sha256": None} if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert problems == [f"configuration {victim['i']}: the record says holds, arb decides violated"]


def test_a_violation_float64_sees_recorded_as_holds_is_found_without_sampling(fast_copy):
    """A violated record turned into a hold (its figures, certificate and summary to match) keeps the float64
    fields float64 computes, which say violated: a hold float64 doubts goes to arb, sampled or not."""
    found = campaign.records(fast_copy)
    victim = next(r for r in found if r["verdict"] == "violated" and r["float64"] == "violated"
                  and r["i"] % FAST.validated().hold_stride and r["i"] != campaign.largest_ratio(found)["i"])
    (fast_copy / victim["certificate"]).unlink()
    _rewrite(fast_copy, lambda r: {**r, "verdict": "holds", "ratio": 0.5, "margin_log10": math.log10(0.5),
                                   "margin": "0.1", "certificate": None, "certificate_sha256": None}
             if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert problems == [f"configuration {victim['i']}: the record says holds, arb decides violated"]


# n = 2: D(PX) = tau(P) D(X) exactly, so every configuration is undecided, float64 saying holds or violated by rounding;
# a count of 40 keeps a hold's certificate for every second index only
TIED = campaign.Campaign("gaussian", 2, 2, 40, 0, claim="collapse.dobrushin", max_prec=256)


def test_an_undecided_case_float64_cannot_tell_recorded_as_holds_is_found_without_sampling(tmp_path_factory,
                                                                                              tmp_path):
    """An undecided record turned into a hold (its undecided/ file removed, its figures and summary to match) whose
    float64 sides are too close to tell and say holds: float64 does not doubt it, yet it is where an undecided case or
    a violation float64 misses recorded as a hold would be; such holds go to arb, sampled or not."""
    copy = _copied(_campaign_folder(tmp_path_factory, TIED, "tied"), tmp_path, "copy")
    victim = next(r for r in campaign.records(copy) if r["float64"] == "holds" and r["i"] % TIED.hold_stride)
    (copy / "undecided" / f"{victim['i']:09d}.json").unlink()
    _rewrite(copy, lambda r: {**r, "verdict": "holds", "precision": engine.START_PRECISION, "ratio": 0.5,
                              "margin_log10": math.log10(0.5), "margin": "0.1", "reason": ""}
             if r["i"] == victim["i"] else r)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert problems == [f"configuration {victim['i']}: the record says holds, arb decides undecided"]


def test_an_arb_records_figures_are_compared_when_rederived(copy):
    """A re-derived record's precision, lhs/rhs and margins must be arb's, not only its verdict."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "violated")
    _rewrite(copy, lambda r: {**r, "margin_log10": r["margin_log10"] - 1} if r["i"] == victim["i"] else r)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's")


def test_the_largest_ratio_a_summary_shows_is_always_rederived(copy):
    """The summary's "largest lhs/rhs" is arb's: a hold given the largest ratio is re-derived, sampled or not."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"])
    largest = max(r["ratio"] for r in campaign.records(copy) if r["ratio"] is not None)
    _rewrite(copy, lambda r: {**r, "ratio": 2 * largest} if r["i"] == victim["i"] else r)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's")


def test_a_tier3_hold_relabelled_arb_is_rederived_in_arb(fast_copy):
    """A hold tier 3 decides here that a tier3 campaign says arb decided goes to arb, sampled or not: its
    label then stands for what arb finds (here a precision arb does not stop at)."""
    victim = next(r for r in campaign.records(fast_copy) if r["tier"] == "tier3")
    _rewrite(fast_copy, lambda r: {**r, "tier": "arb", "precision": 106} if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's")


def test_an_arb_hold_relabelled_tier3_keeps_only_true_bounds(fast_copy):
    """A hold tier 3 does not decide, labelled tier 3 with bounds better than the truth: arb re-derives it
    and its bounds must bound arb's figures."""
    spec = FAST.validated()
    victim = next(r for r in campaign.records(fast_copy)
                  if r["tier"] == "arb" and r["verdict"] == "holds" and r["i"] % spec.hold_stride)
    _rewrite(fast_copy, lambda r: {**r, "tier": "tier3", "precision": None, "ratio": victim["ratio"] / 2}
             if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert problems and any("bounds" in p for p in problems)
    assert all(p.startswith(f"configuration {victim['i']}: the tier-3 record's") for p in problems)


def test_where_tier3_cannot_run_its_labels_are_checked_as_far_as_the_sample_goes(fast_folder, monkeypatch):
    """A failed floating-point probe here: tier-3 holds are not all sent to arb (that would be --all), and the
    confirmation says what it leaves out."""
    monkeypatch.setattr(audit.tier3, "unusable_reason", lambda: "a probe failed")
    report = audit.audit(fast_folder, sample=0, workers=1)
    assert report.ok and report.rederived <= sum(r["tier"] == "arb" for r in campaign.records(fast_folder)) + 1
    assert any("tier 3 cannot run on this machine (a probe failed)" in note for note in report.notes)


@pytest.mark.parametrize("forged", [{"margin_log10": 400.0}, {"margin": "inf"}, {"margin": "nan"}, {"ratio": 1e308}])
def test_absurd_tier3_figures_are_rejected_without_a_crash(fast_copy, forged):
    victim = next(r for r in campaign.records(fast_copy) if r["tier"] == "tier3" and r["margin_log10"] > -3)
    _rewrite(fast_copy, lambda r: {**r, **forged} if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert problems and all(p.startswith(f"configuration {victim['i']}: the tier-3 record's") for p in problems)
    assert any("are not the figures of a hold" in p for p in problems)


def test_an_honest_near_consensus_tier3_campaign_is_confirmed_in_full(tmp_path):
    """Near consensus arb decides many holds with a ball of D_out wide against its midpoint: a tier-3 hold's
    bounds are compared with arb's enclosures, not with those midpoints (which lie beyond the bounds)."""
    spec = campaign.Campaign("near-consensus", 8, 4, 100, 0, tier="tier3")
    campaign.run(spec, tmp_path, workers=1)
    assert sum(r["tier"] == "tier3" for r in campaign.records(tmp_path)) > 50
    report = audit.audit(tmp_path, everything=True, workers=1)
    assert report.ok, report.problems


def test_tier3_bounds_are_computed_again_in_the_campaigns_own_batches(tmp_path):
    """Tier 3's bounds on a configuration depend on the other configurations of its batch: a campaign run in
    uneven chunks (stopped, then resumed, on one worker) is audited on two workers in the batches it ran."""
    spec = campaign.Campaign("log-L", 4, 3, 120, 0, bound=PLANTED, L_range=(0.001, 100.0), tier="tier3")
    campaign.run(spec, tmp_path, workers=1, stop_after=7)
    campaign.run(spec, tmp_path, workers=1)
    assert len({len(batch) for batch in campaign.read_with_batches(tmp_path)[1]}) > 1
    report = audit.audit(tmp_path, sample=0, workers=2)
    assert report.ok, report.problems


def test_a_manifest_edited_without_its_chain_is_rejected_and_an_unreadable_one_is_bad_input(copy, capsys):
    """`certify verify`: 1 when tampered (a manifest's entries edited, its chain not redone), 2 when unreadable."""
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["count"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest))
    assert main(["verify", str(copy)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REJECTED") and "does not match its entries" in out and "--restart" not in out
    (copy / "manifest.json").write_text('{"format": ')
    assert main(["verify", str(copy)]) == 2
    assert capsys.readouterr().err.startswith("certify: error: ")


def test_a_folder_rejected_before_its_records_are_read_states_no_count_of_them(copy, capsys):
    """A stray file beside a complete campaign of 40 records was rejected as "1 problem in 0 re-derived of 0": the
    folder was not read, and its records are not none.  Counts are stated where the records were read."""
    (copy / "notes.txt").write_text("mine\n")
    assert main(["verify", str(copy), "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"REJECTED: campaign {copy}: 1 problem", out
    result = certify.verify(copy, workers=1)
    assert not result.ok and result.message == "1 problem" and "notes.txt" in result.problems[0], result
    (copy / "notes.txt").unlink()
    assert main(["verify", str(copy), "--workers", "1", "--sample", "0"]) == 0
    assert f"of {SPEC.count} configurations re-derived in arb" in capsys.readouterr().out


@pytest.mark.parametrize("key, value", [("count", "40"), ("count", None), ("n", "4"), ("n", 4.0), ("d", [3]),
                                        ("distribution", ["log-L"]), ("distribution", {})])
def test_a_manifest_parameter_of_the_wrong_type_is_bad_input(copy, capsys, key, value):
    """A manifest whose chain was redone after a parameter was given the wrong JSON type ("count": "40", "n": 4.0, a
    distribution that is a list) is bad input, one line: the checks compared a string with an integer (exit 4)."""
    _redo_manifest(copy, **{key: value})
    assert main(["verify", str(copy), "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: ") and err.count("\n") == 1 and "internal error" not in err, err


@pytest.mark.parametrize("edit, confirmed", [
    (lambda s: {k: v for k, v in s.items() if k != "not_certified"}, True),  # a field added since: not stated
    (lambda s: {**s, "largest_ratio": {k: v for k, v in s["largest_ratio"].items() if k != "tier"}}, True),
    (lambda s: {k: v for k, v in s.items() if k != "counts"}, False),  # the counts: stated by every version
    # a count left out (the violations) reads as none: every version states each verdict's
    (lambda s: {**s, "counts": {"holds": s["counts"]["holds"], "undecided": 0}}, False),
    (lambda s: {**s, "counted_twice": 1}, False),  # a figure the records do not give
    (lambda s: {**s, "largest_ratio": {**s["largest_ratio"], "i": s["largest_ratio"]["i"] + 1}}, False),
])
def test_a_summary_of_an_earlier_version_is_confirmed_for_what_it_states(copy, edit, confirmed):
    """summary.json written by an earlier version of certify lacks the figures added since: what it does not
    state it cannot misstate; what it states must be what the records say, and the counts it must state."""
    path = copy / campaign.SUMMARY
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert (problems == []) == confirmed, problems
    assert confirmed or "summary.json does not describe the records" in problems[0]


def test_a_campaign_of_an_earlier_format_is_named_so_by_verify_and_by_a_resume(copy, capsys):
    """An earlier version of certify wrote certify-campaign/1 (its chunks not chained by digest): neither re-derived
    nor resumed, and said so plainly, not called corrupt, edited or another job's; the folder is left as it was."""
    manifest = json.loads((copy / "manifest.json").read_text())
    earlier = {key: value for key, value in manifest.items() if key not in ("chunks", "chain")}
    (copy / "manifest.json").write_text(json.dumps({**earlier, "format": "certify-campaign/1"}))
    before = sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file())
    capsys.readouterr()
    assert main(["verify", str(copy)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "written by an earlier version of certify" in err, err
    assert "edited" not in err and "not a campaign folder" not in err
    with pytest.raises(BadInput, match="written by an earlier version of certify.*--restart") as refused:
        campaign.run(SPEC, copy, workers=1)
    assert "edited" not in str(refused.value)
    assert sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file()) == before


def test_verify_all_rederives_in_tasks_no_larger_than_a_campaigns_chunk(tmp_path_factory, monkeypatch):
    """Ctrl-C waits for the tasks in flight: --all on a large campaign made tasks of a quarter of it per worker
    (a minute or more after Ctrl-C); a campaign's own chunk bounds how long that wait is."""
    spec = campaign.Campaign("gaussian", 3, 2, 6 * campaign.MAX_CHUNK, 1)
    out = _campaign_folder(tmp_path_factory, spec, "chunks")
    sizes, rederive = [], audit.rederive_and_confirm

    def counted(spec, chunk, folder):
        sizes.append(len(chunk))
        return rederive(spec, chunk, folder)

    monkeypatch.setattr(audit, "rederive_and_confirm", counted)
    assert audit.audit(out, everything=True, workers=1).ok
    assert sum(sizes) == spec.count and max(sizes) <= campaign.MAX_CHUNK, sizes


@pytest.mark.parametrize("everything", [True, False])
def test_verify_progress_does_not_read_done_before_the_arb_pass(folder, everything):
    """The float64 pass's total was the records alone: the bar read 100% there, then its total grew by the arb pass
    (with --all, the larger part of the work)."""
    calls = []
    assert audit.audit(folder, everything=everything, workers=1,
                       progress=lambda done, total: calls.append((done, total))).ok
    assert calls[-1][0] == calls[-1][1] and all(done < total for done, total in calls[:-1]), calls
    if everything:
        assert {total for _, total in calls} == {2 * SPEC.count}, calls


def test_verify_all_draws_each_configuration_as_often_with_a_certificate_as_without(folder, monkeypatch):
    """A record naming a certificate had its configuration drawn twice in the arb pass (once to re-derive it, once
    to compare with the certificate's inputs): once now, as every other record's."""
    draws, sample = collections.Counter(), samplers.sample

    def counted(*args):
        draws[args[4]] += 1  # name, n, d, seed, index, ...
        return sample(*args)

    monkeypatch.setattr(samplers, "sample", counted)
    assert audit.audit(folder, everything=True, workers=1).ok
    del draws[0]  # drawn once more by the manifest's validation (Campaign.validated admits configuration 0)
    named = {r["i"] for r in campaign.records(folder) if r.get("certificate")} - {0}
    assert named and len(named) < len(draws)
    assert {draws[i] for i in named} == {draws[i] for i in draws if i not in named}, draws


def test_certificates_are_confirmed_on_the_pool_not_in_the_parent(copy, tmp_path, monkeypatch):
    """`verify FOLDER --all` confirmed every certificate one by one in the parent before the pool re-derived the
    records (14.6 of 49 s at 128 x 384): each is confirmed now in the worker that re-derives its record."""
    import os

    calls, confirm = tmp_path / "confirmed-in", audit._certificate_problem

    def recorded(*args):
        with open(calls, "a") as out:  # the workers are forked: a file, not a list, sees their calls
            out.write(f"{os.getpid()}\n")
        return confirm(*args)

    monkeypatch.setattr(audit, "_certificate_problem", recorded)
    result = audit.audit(copy, everything=True, workers=2)
    pids = [int(line) for line in calls.read_text().split()]
    assert result.ok, result.problems
    assert len(pids) == sum(1 for r in campaign.records(copy) if r.get("certificate"))
    assert os.getpid() not in pids and len(set(pids)) == 2


def test_a_records_certificate_is_read_and_confirmed_under_the_campaigns_limits(tmp_path, monkeypatch):
    """They were read and confirmed under the default limits, whatever the campaign's --limit (a campaign
    written under raised limits was then refused its own certificates; one under lowered ones, not held to them)."""
    spec = campaign.Campaign("gaussian", 2, 1, 6, 3, limits={"work": 10**8}).validated()
    campaign.run(spec, tmp_path / "s", workers=1)
    records = [r for r in campaign.records(tmp_path / "s") if r.get("certificate")]
    assert records
    read, confirmed = certificate.read, certificate.confirm
    seen = []

    def reading(path, *limits):
        seen.append(("read", limits))
        return read(path, *limits)

    def confirming(cert, *limits, **options):
        seen.append(("confirm", limits, options))
        return confirmed(cert, *limits, **options)

    monkeypatch.setattr(certificate, "read", reading)
    monkeypatch.setattr(certificate, "confirm", confirming)
    sampled = spec.sample(records[0]["i"]).config
    assert audit._certificate_problem(tmp_path / "s", records[0], spec, sampled) is None
    # confirmed as read: the reader measured the file's own text against the campaign's limits
    assert seen == [("read", (spec.engine_limits,)), ("confirm", (spec.engine_limits,), {"written": False})], seen


def test_the_random_sample_rederives_holds_nothing_else_sends_to_arb(copy):
    """A hold's figures edited (its margin ten times smaller; a hold float64 agrees with far from a tie, not the largest
    lhs/rhs): nothing but the random sample of the other records sends it to arb, so a sample of 0 passes it, and a
    sample as large as the campaign (not --all) must draw it and find it."""
    records = campaign.records(copy)
    largest = max(records, key=lambda r: -1 if r["ratio"] is None else r["ratio"])
    victim = next(r for r in records if r["verdict"] == "holds" and not r["certificate"] and r["i"] != largest["i"]
                  and r["float64"] == "holds" and r["margin_log10"] is not None and r["margin_log10"] > -2)
    _rewrite(copy, lambda r: {**r, "margin_log10": r["margin_log10"] - 1} if r["i"] == victim["i"] else r)
    assert audit.audit(copy, sample=0, workers=1).ok
    problems = audit.audit(copy, sample=SPEC.count, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's")


def test_a_certificate_of_another_bound_is_rejected(copy):
    """A violated record's certificate replaced by one of the same configuration, verdict and precision for another
    false bound (a weaker one, violated there too), confirmed by the checker as it stands: it does not certify the
    campaign's bound, and is rejected."""
    other = "(1 - exp(-a*D**2/9))*D"
    record, cert = next((r, c) for r in campaign.records(copy) if r["verdict"] == "violated"
                        for c in [engine.check(SPEC.sample(r["i"]).config, bound=other,
                                               start_prec=r["precision"]).certificate]
                        if c["verdict"] == "violated" and c["precision"] == r["precision"])
    assert certificate.confirm(cert).ok and cert["bound"] == other
    (copy / record["certificate"]).write_text(json.dumps(cert))
    _redigest(copy, record)
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and "about another claim or bound" in problems[0]


def test_a_tier3_holds_relative_margin_is_held_to_arbs_enclosure_without_a_ratio(fast_copy):
    """A tier-3 hold stating no lhs/rhs (as where rhs = lhs) beside a relative margin of 1 (lhs = 0): its figures are
    consistent, it goes to arb (tier 3 here states a ratio), and there the relative margin alone contradicts arb's
    enclosure of (rhs - lhs) / rhs."""
    victim = next(r for r in campaign.records(fast_copy) if r["tier"] == "tier3" and r["ratio"] > 0.01)
    _rewrite(fast_copy, lambda r: {**r, "ratio": None, "margin_log10": 0.0} if r["i"] == victim["i"] else r)
    problems = audit.audit(fast_copy, sample=0, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the tier-3 record's bounds")


def test_an_arb_records_precision_is_compared_when_rederived(copy):
    """A hold without a certificate stating twice the precision arb decides it at: found once re-derived (a sample
    as large as the campaign), its other figures being arb's."""
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "holds" and not r["certificate"])
    assert victim["tier"] == "arb"
    _rewrite(copy, lambda r: {**r, "precision": 2 * r["precision"]} if r["i"] == victim["i"] else r)
    problems = audit.audit(copy, sample=SPEC.count, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's")


def _stray(folder, kind: str) -> str:
    """Put in certificates/ a file of `kind` that no record names; its name."""
    records = campaign.records(folder)
    violated = next(r for r in records if r["verdict"] == "violated")
    stride = SPEC.validated().hold_stride
    unsampled = next(r for r in records if r["verdict"] == "holds" and r["i"] % stride)
    sampled = next(r for r in records if r["certificate"] and r["verdict"] == "holds")
    certificates = folder / "certificates"
    if kind == "violated beyond the count":  # a genuine certificate, copied under an index the campaign has not
        name = f"violated-{SPEC.count + 59:09d}.json"
        shutil.copy(folder / violated["certificate"], certificates / name)
    elif kind == "violated of a hold":  # another campaign's certificate under the name of a configuration that holds
        name = f"violated-{unsampled['i']:09d}.json"
        shutil.copy(folder / violated["certificate"], certificates / name)
    elif kind == "hold not sampled":
        name = f"holds-{unsampled['i']:09d}.json"
        shutil.copy(folder / sampled["certificate"], certificates / name)
    elif kind == "not JSON":
        name = "notes.txt"
        (certificates / name).write_text("violated\n")
    else:
        name = "more"
        (certificates / name).mkdir()
        shutil.copy(folder / violated["certificate"], certificates / name / "violated-000000000.json")
    return f"certificates/{name}"


STRAYS = ["violated beyond the count", "violated of a hold", "hold not sampled", "not JSON", "a folder"]


@pytest.mark.parametrize("kind", STRAYS)
def test_a_file_no_record_names_is_rejected_by_verify_and_refused_by_a_resume(copy, capsys, kind):
    """A browsing reader takes certificates/violated-*.json for a violation the campaign found: one it never
    found (made by hand, copied from another campaign) makes verify reject the folder and a resume refuse it,
    naming the file; the folder is left as it was."""
    stray = _stray(copy, kind)
    what = "folder" if kind == "a folder" else "file"  # a folder is named as one: `rm` of "that file" fails on it
    before = sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file())
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REJECTED") and f"{stray} is a {what} no record names" in out, out
    assert main(shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{stray} is a {what} no record names (remove that {what})" in err, err
    assert "--restart" in err
    assert sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file()) == before


def test_what_a_killed_run_leaves_in_certificates_resumes_and_verifies(folder, copy):
    """A run killed between writing a chunk's certificates and committing the chunk leaves certificates no record
    names yet, and one killed in a write its hidden temporary file: the resumed run removes them, decides those
    configurations, writing the same certificates again, and the folder verifies."""
    manifest = json.loads((copy / "manifest.json").read_text())
    last = manifest["chunks"].pop()
    (copy / "chunks" / f"{last['first']:09d}.jsonl").unlink()
    manifest["chain"] = chain(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    left = [r["certificate"] for r in campaign.records(folder) if r["certificate"]
            and r["i"] not in {r["i"] for r in campaign.records(copy)}]
    assert left and all((copy / path).is_file() for path in left)  # certificates no record names now
    temporary = copy / "certificates" / f".{left[0].split('/')[1]}.4242-0123abcd.tmp"
    temporary.write_text('{"cut sh')
    campaign.run(SPEC, copy, workers=1)
    assert not temporary.exists() and campaign.records(copy) == campaign.records(folder)
    assert all((copy / path).read_bytes() == (folder / path).read_bytes() for path in left)
    assert audit.audit(copy, sample=0, workers=1).ok


def _planted(folder, where: str) -> str:
    """Put a file (or folder) no record names at `where` (a place, and what is put there) in the campaign folder;
    its path in the folder."""
    records = campaign.records(folder)
    violated = next(r for r in records if r["verdict"] == "violated")
    holds = next(r for r in records if r["verdict"] == "holds")
    if where == "undecided: a hold's configuration":  # browsed as a configuration the engine could not decide
        path = f"undecided/{holds['i']:09d}.json"
        (folder / "undecided").mkdir(exist_ok=True)
        (folder / path).write_text(json.dumps(SPEC.sample(holds["i"]).config) + "\n")
    elif where == "undecided: beyond the count":
        path = f"undecided/{SPEC.count + 3:09d}.json"
        (folder / "undecided").mkdir(exist_ok=True)
        (folder / path).write_text(json.dumps(SPEC.sample(holds["i"]).config) + "\n")
    elif where == "undecided: a folder":
        path = "undecided/more"
        (folder / path).mkdir(parents=True)
    elif where == "top: a certificate":  # beside summary.json, browsed as one of the campaign's results
        path = f"violated-{holds['i']:09d}.json"
        shutil.copy(folder / violated["certificate"], folder / path)
    elif where == "top: a figure":  # the report page embeds every figure it finds beside it
        path = "margins.png"
        (folder / path).write_bytes(b"\x89PNG\r\n\x1a\n")
    elif where == "top: a folder":
        path = "certificates-2"
        shutil.copytree(folder / "certificates", folder / path)
    else:  # beside the records
        path = f"chunks/{SPEC.count:09d}.json"
        (folder / path).write_text(json.dumps(violated) + "\n")
    return path


PLACES = ["undecided: a hold's configuration", "undecided: beyond the count", "undecided: a folder",
          "top: a certificate", "top: a figure", "top: a folder", "chunks: a record file the manifest does not list"]


@pytest.mark.parametrize("where", PLACES)
def test_a_file_no_record_names_anywhere_in_the_folder_is_rejected_and_refused(copy, capsys, where):
    """As in certificates/: an undecided configuration, a certificate or a figure put where a reader browses the
    campaign's results, or a record file put beside its chunks, makes verify reject the folder and a resume refuse
    it in one line naming it, nothing changed.  A --restart removes what a campaign writes: at the top of the
    folder, where that is not all, it refuses too, before it removes anything."""
    stray = _planted(copy, where)
    (copy / ".summary.json.4242-0123abcd.tmp").write_text('{"cut sh')  # a killed run's, kept by a refusal too
    unlisted = "manifest.json does not list" if where.startswith("chunks") else (
        "no campaign writes" if where.startswith("top") else "no record names")
    kind = "folder" if where.endswith("a folder") else "file"  # a folder is named as one: `rm` of a file fails on it
    before = sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file())
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REJECTED") and f"{stray} is a {kind} {unlisted}" in out, out
    command = shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1"]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{stray} is a {kind} {unlisted} (remove that {kind})" in err, err
    assert sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file()) == before
    if where.startswith("top"):
        assert "(--restart discards only what a campaign writes)" in err, err
        assert main(command + ["--restart"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{stray} is a {kind} {unlisted} (remove that {kind})" in err, err
        assert sorted((path, path.read_bytes()) for path in copy.rglob("*") if path.is_file()) == before
    else:
        assert "pass --restart to discard it" in err, err


UNDECIDED = campaign.Campaign("gaussian", 2, 2, 6, 0, claim="collapse.dobrushin", max_prec=256)  # n = 2: equalities


def test_what_a_killed_run_leaves_in_undecided_and_beside_its_files_resumes_and_verifies(tmp_path_factory, tmp_path,
                                                                                       capsys):
    """A run killed between writing a chunk's undecided configurations and committing the chunk leaves files in
    undecided/ no record names yet, and one killed in a write its hidden temporary file there, beside the summary
    or among the chunks: the resumed command removes them, decides those configurations again, and the folder
    verifies; its own undecided/ files, which the records name by their index, pass."""
    folder = _campaign_folder(tmp_path_factory, UNDECIDED, "undecided")
    assert {r["verdict"] for r in campaign.records(folder)} == {"undecided"}
    copy = _copied(folder, tmp_path, "copy")
    manifest = json.loads((copy / "manifest.json").read_text())
    last = manifest["chunks"].pop()
    (copy / "chunks" / f"{last['first']:09d}.jsonl").unlink()
    manifest["chain"] = chain(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    left = [f"undecided/{i:09d}.json" for i in range(UNDECIDED.count)
            if i not in {r["i"] for r in campaign.records(copy)}]
    assert len(left) == last["records"] and all((copy / path).is_file() for path in left)
    temporaries = [copy / "undecided" / f".{left[0].split('/')[1]}.4242-0123abcd.tmp",
                   copy / ".summary.json.4242-0123abcd.tmp", copy / "chunks" / ".000000001.jsonl.4242-0123abcd.tmp"]
    for path in temporaries:
        path.write_text('{"cut sh')
    (copy / left[0]).write_text("{}\n")  # what a later run writes again
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1  # passes the checks, but incomplete
    assert "no record names" not in capsys.readouterr().out
    assert main(shlex.split(UNDECIDED.validated().command(copy))[1:] + ["--workers", "1", "-q"]) == 3
    assert not any(path.exists() for path in temporaries)
    assert campaign.records(copy) == campaign.records(folder)
    assert all((copy / path).read_bytes() == (folder / path).read_bytes() for path in left)
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 0
    assert capsys.readouterr().out.startswith("OK: campaign")


def test_a_killed_runs_undecided_file_of_a_configuration_decided_otherwise_is_removed(folder, copy, capsys):
    """The undecided/ file a killed run wrote for a configuration of the chunk it did not commit: the resumed command
    decides that configuration again (it holds or is violated this time) and the file does not outlive it."""
    manifest = json.loads((copy / "manifest.json").read_text())
    last = manifest["chunks"].pop()
    (copy / "chunks" / f"{last['first']:09d}.jsonl").unlink()
    manifest["chain"] = chain(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    left = copy / "undecided" / f"{last['first']:09d}.json"
    left.parent.mkdir()
    left.write_text(json.dumps(SPEC.sample(last["first"]).config) + "\n")
    assert main(shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1", "-q"]) == 1  # some violated
    assert not left.exists() and campaign.records(copy) == campaign.records(folder)
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 0


@pytest.mark.parametrize("edit", ["another configuration", "missing"])
def test_an_undecided_configurations_file_must_state_the_campaigns_configuration(tmp_path_factory, tmp_path, edit,
                                                                                capsys):
    """An undecided record's undecided/ file is what a user checks again at a higher cap: one that states another
    configuration (a token moved) or is gone is rejected, naming it; the file the run wrote verifies."""
    folder = _campaign_folder(tmp_path_factory, UNDECIDED, "undecided")
    copy = _copied(folder, tmp_path, "copy")
    path = copy / "undecided" / f"{0:09d}.json"
    if edit == "missing":
        path.unlink()
    else:
        config = json.loads(path.read_text())
        config["X"][0][0] += 1.0
        path.write_text(json.dumps(config) + "\n")
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("REJECTED") and "configuration 0: undecided/000000000.json is " in out, out
    assert main(["verify", str(folder), "--sample", "0", "--workers", "1"]) == 0


def test_an_undecided_records_reason_is_compared_when_rederived(tmp_path_factory, tmp_path):
    """Why a configuration is undecided is what the summary counts by kind (undecided_reasons): a reason edited to
    another kind, the summary redone, is found as every undecided record is decided again; the kind as arb states it
    here is the one the record must give."""
    copy = _copied(_campaign_folder(tmp_path_factory, UNDECIDED, "undecided"), tmp_path, "copy")
    victim = next(r for r in campaign.records(copy) if r["verdict"] == "undecided")
    assert audit.audit(copy, sample=0, workers=1).ok
    forged = "undecided at the precision cap of 256 bits (raise --max-prec)"
    _rewrite(copy, lambda r: {**r, "reason": forged} if r["i"] == victim["i"] else r)
    reasons = json.loads((copy / "summary.json").read_text())["undecided_reasons"]
    assert reasons.get("precision cap reached") == 1, reasons  # what the summary would state
    problems = audit.audit(copy, sample=0, workers=1).problems
    assert len(problems) == 1 and problems[0].startswith(f"configuration {victim['i']}: the record's ") and (
        "reason" in problems[0]), problems


def test_hidden_files_are_passed_over_and_a_visible_one_is_still_refused(copy, capsys):
    """macOS Finder leaves .DS_Store in every folder it shows: a campaign folder copied there was rejected as edited
    and refused to a resume.  Hidden entries pass, left as they are and never shown on the page (a hidden figure
    beside the campaign's would be embedded as its own); the same file without its dot is still refused."""
    places = [copy, *sorted(path for path in copy.iterdir() if path.is_dir())]
    assert {"chunks", "certificates"} <= {path.name for path in places}
    for place in places:
        (place / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (copy / ".margins.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (copy / ".git").mkdir()
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 0, capsys.readouterr()
    command = shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1", "-q"]
    assert main(command) == 1, capsys.readouterr()  # resumed, complete: the planted bound's violations found
    page = (copy / "index.html").read_text()
    assert "histograms" in page and ".margins" not in page
    assert all((place / ".DS_Store").read_bytes() == b"\x00\x00\x00\x01Bud1" for place in places)
    (copy / "certificates" / "DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    capsys.readouterr()
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert "certificates/DS_Store is a file no record names" in capsys.readouterr().out
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "certificates/DS_Store is a file no record names (remove that file)" in err, err


@pytest.mark.parametrize("output", ["certificates", "chunks"])
def test_a_link_in_place_of_a_file_a_record_names_is_refused_by_both(copy, tmp_path, capsys, output):
    """A certificate (or chunk) that is a link to a copy elsewhere passed a resumed run, whose checks named it
    and read what it points to, while verify rejected the certificate as "missing or outside the folder": both
    refuse it now, as a link in place of what the run writes at the top, and --restart discards the link only."""
    inside = sorted((copy / output).iterdir())[0]
    elsewhere = tmp_path / "elsewhere"
    shutil.move(inside, elsewhere)
    inside.symlink_to(elsewhere)
    said = f"{output}/{inside.name} is a link, which no campaign writes (remove it)"
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert said in capsys.readouterr().out
    command = shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1", "-q"]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err, err
    kept = elsewhere.read_bytes()
    assert main(command + ["--restart"]) in (0, 1) and elsewhere.read_bytes() == kept


@pytest.mark.parametrize("name", ["summary.json", "index.html", "manifest.json", "certificates"])
def test_a_link_in_place_of_what_a_run_writes_is_refused_and_its_target_kept(copy, tmp_path, capsys, name):
    """A run rewrites summary.json and its page through a link in their place, and its manifest, chunks and
    certificates through a linked folder: a folder received with summary.json linked to a file elsewhere had that
    file overwritten by the resume.  A link there is refused (verify rejects it, as an entry no campaign writes),
    nothing written through it, nor removed by --restart."""
    elsewhere = tmp_path / "elsewhere"
    if (copy / name).is_dir():
        shutil.move(copy / name, elsewhere)
    else:  # certify.sample (this folder's run) draws no page: a user's file there
        elsewhere.write_bytes((copy / name).read_bytes() if (copy / name).exists() else b"<p>mine</p>")
        (copy / name).unlink(missing_ok=True)
    (copy / name).symlink_to(elsewhere)
    kept = {str(path): path.read_bytes() for path in [elsewhere, *elsewhere.rglob("*")] if path.is_file()}
    assert main(["verify", str(copy), "--sample", "0", "--workers", "1"]) == 1
    assert f"{name} is a link, which no campaign writes (remove it)" in capsys.readouterr().out
    command = shlex.split(SPEC.validated().command(copy))[1:] + ["--workers", "1", "-q"]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{name} is a link, which no campaign writes (remove it)" in err, err
    assert main(command + ["--restart"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{name} is a link, which no campaign writes (remove it)" in err, err
    assert (copy / name).is_symlink() and (copy / "manifest.json").exists()
    assert {str(path): path.read_bytes() for path in [elsewhere, *elsewhere.rglob("*")] if path.is_file()} == kept
