"""A corpus run as a resumable job (certify.jobs): one chunk of sentences per task, committed by this process.

The folder (certify.jobs.store for manifest.json and chunks/):
    manifest.json             the run's parameters: the model (the sha256 of its weights, its config as read),
                              the corpus (its name and the sha256 of its sentences), the precision ladder, the count
    chunks/<first>.jsonl      one record per sentence (certify.studies.models.corpus)
    certificates/             the attention-head certificate of every head with a violated step
    summary.json, summary.txt per head over the committed sentences (corpus_summary), rewritten by each run
    corpus_heatmap.FORMAT, corpus_histograms.FORMAT, index.html
                              the figures (certify.figures.corpus) and the page (certify.report.corpus_page),
                              drawn from the summary by the caller of run_corpus (this layer draws nothing)
A folder is resumed only by the same run; `--sentences K` decides sentences 0..K-1 only, so a later
run with a larger K (or none) continues the same folder.  The summary covers the committed sentences,
read back one at a time (memory does not grow with the corpus); each record is checked as it is read
(its sentence, its shape, its certificate's digest), and any edit makes the folder refused (BadInput), as does
a file in certificates/ that no record names, or one elsewhere in the folder that the run does not write (at its
top, beside the files above; in chunks/, one the manifest does not list: certify.jobs.store), but for what a killed
run leaves (Store.refuse_unnamed).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import sys
from dataclasses import dataclass
from collections.abc import Iterable, Sequence
from typing import Callable
from pathlib import Path

from certify import jobs
from certify.core import jsonfile, report_files
from certify.core.arguments import Spelling
from certify.core.float64_limits import REGIME_WORDS
from certify.engine import HOLDS, UNDECIDED, VIOLATED
from certify.errors import BadInput
from certify.studies.models.corpus import (CorpusRun, certificate_name, certificate_sentence, certify_sentences,
                                          sha256_text)
from certify.studies.models.corpus_summary import CorpusSummary, render
from certify.studies.models.loading import WEIGHTS_FILE
from certify.studies.models.pipeline import TextModel, load_text_model
from certify.studies.models.tokenize import TOKEN_FILES

FORMAT = "certify-model-corpus/1"
CERTIFICATES = "certificates"
SUMMARY_JSON, SUMMARY_TEXT = "summary.json", "summary.txt"
HEATMAP, HISTOGRAMS = "corpus_heatmap", "corpus_histograms"  # the figures' stems (certify.figures.corpus)
# derived files too, so that --restart leaves no figure or page of the discarded run behind
OUTPUTS = (CERTIFICATES, SUMMARY_JSON, SUMMARY_TEXT, report_files.PAGE, *report_files.figure_files(HEATMAP, HISTOGRAMS))
CHUNK = 1  # sentences per task: one sentence of MiniLM is seconds of work, far above a task's overhead
RECORD_KEYS = {"i", "text", "n_tokens", "tokens", "layers"}  # corpus.sentence_record's, and a layer's
LAYER_KEYS = {"layer", "D", "rank", "rank_max", "rank_certified", "heads"}
HEAD_KEYS = {"head", "bits", "a", "a_D2", "log10_gap", "tau", "D_PX_over_D", "regime", "step1", "step2", "checker",
             "certificate", "certificate_sha256"}  # fmt: skip


@dataclass(frozen=True)
class Outcome:
    """What a corpus run did: the summary of every committed sentence, how many sentences this run
    certified, and the chunks it gave up on."""

    summary: dict
    decided_now: int
    failed: list[int]  # first sentence of each chunk the executor gave up on (left for the next run)


def task(run: CorpusRun, indices: list[int]) -> jobs.ChunkResult:
    """The job's task: certify_sentences, its kept certificates as artefacts under certificates/."""
    records, artefacts = [], {}
    for record, certificates in certify_sentences(run, indices):
        artefacts.update({f"{CERTIFICATES}/{name}": text for name, text in certificates.items()})
        records.append(record)
    return jobs.ChunkResult(records=records, artefacts=artefacts)


# the parameters by what `certify model --corpus` calls them, for the refusal of another run's folder (it said
# "different max_bits" for another --max-prec)
NAMED = Spelling({"bits": "--start-prec", "max_bits": "--max-prec", "model": "the model",
                  "model_sha256": "the model's weights",
                  "model_config": "the model's config.json, tokenizer or cut of long texts", "corpus": "--corpus",
                  "corpus_sha256": "the corpus's sentences", "count": "the corpus's sentences",
                  **jobs.COMMAND.names},
                 assign=" ")


def parameters(run: CorpusRun, corpus_name: str, text_model: TextModel) -> dict:
    """The run's identity as its manifest stores it: the format, the sentence count, the model, the sha256
    of its weights and its config as read (with its tokenizer's files and its cut of long texts), the corpus's name
    and the sha256 of its sentences, and the precision ladder.  A folder is resumed only with the same."""
    return {
        "format": FORMAT,
        "count": len(run.sentences),
        "model": run.model,
        "model_sha256": weights_sha256(text_model.folder),
        "model_config": model_config(text_model),
        "corpus": corpus_name,
        "corpus_sha256": sha256_text("\n".join(run.sentences)),
        "bits": run.bits,
        "max_bits": run.max_bits,
    }


def run_corpus(run: CorpusRun, corpus_name: str, out_dir: Path, *, limit: int | None = None, executor: str = "pool",
               workers: int | None = None, scheduler: str | None = None, progress: bool = True,
               restart: bool = False, on_summary: Callable[[dict], object] | None = None) -> Outcome:  # fmt: skip
    """Run (or resume) the corpus in out_dir: sentences 0..limit-1 (all without limit); then write the summary
    and call on_summary(summary) (the caller's figures and page), also when the run is interrupted."""
    if limit is not None and limit < 1:
        raise BadInput(f"--sentences must be at least 1, got {limit}")
    text_model = load_text_model(run.model)  # BadInput for a missing model before anything is written
    wanted = len(run.sentences) if limit is None else min(limit, len(run.sentences))
    run.check_sentences(text_model, wanted)
    with jobs.Store.open(out_dir, parameters(run, corpus_name, text_model), outputs=OUTPUTS,
                         noun="corpus run", restart=restart, names=NAMED) as store:  # locked for this run until the page is written
        config = text_model.model.config
        check = record_check(store, run.sentences, config.n_layers, config.n_heads)
        done = decided(store, check)
        todo = [i for i in range(wanted) if i not in done]
        from tqdm import tqdm  # only a run draws a progress bar

        bar = tqdm(total=wanted, initial=wanted - len(todo), unit="sentence", desc="corpus", file=sys.stderr,
                   disable=not progress, dynamic_ncols=True)  # fmt: skip
        try:
            runner = jobs.executor(executor, workers=workers, scheduler=scheduler)
            with jobs.started(store, runner, asked=wanted) as pool:
                report = jobs.run(store, pool, task, run, jobs.grid_chunks(todo, CHUNK), on_commit=bar.update,
                                  asked=wanted)
        except KeyboardInterrupt:  # the running sentences were committed: summarise what the folder holds
            bar.close()
            write_summary(store, text_model, check, on_summary)
            raise
        finally:
            bar.close()
        try:  # after the last sentence: a Ctrl-C while summarising says what is kept, as one during the run does
            summary = write_summary(store, text_model, check, on_summary)
        except KeyboardInterrupt:
            write_summary(store, text_model, check, on_summary)
            raise jobs.interrupted(store, wanted) from None
    return Outcome(summary=summary, decided_now=report.decided, failed=report.failed)


def decided(store, check) -> set[int]:
    """The sentences the folder has decided (every record checked by `check`), once certificates/ is known to hold
    no certificate its records do not name (Decided.complete)."""
    found = Decided()
    for record in store.records(check):
        found.add(record)
    return found.complete(store)


class Decided:
    """The sentences of a folder's records and the certificates they name, gathered as the records are read
    (decided(), or `certify verify` as it summarises them in the same reading)."""

    def __init__(self) -> None:
        self.done: set[int] = set()
        self.named: set[str] = set()

    def add(self, record: dict) -> None:
        """One record read (and checked)."""
        self.done.add(record["i"])
        self.named.update(head["certificate"] for layer in record["layers"] for head in layer["heads"]
                          if head["certificate"])

    def complete(self, store) -> set[int]:
        """The sentences decided, every record read, once certificates/ is known to hold no certificate the records
        do not name (Store.refuse_unnamed): a violated head the run never found would be browsed as one; only a
        killed run's leftovers pass, those of a sentence not decided yet."""
        def pending(name: str) -> bool:
            i = certificate_sentence(name)
            return i is not None and i not in self.done and i < store.count

        store.refuse_unnamed(CERTIFICATES, self.named, pending)
        return self.done


def write_summary(store, text_model, check, on_summary: Callable[[dict], object] | None = None) -> dict:
    """Summarise every committed record of the folder (each checked by `check` as it is read), write
    summary.json and summary.txt, call on_summary(summary) and return the summary."""
    config = text_model.model.config
    shape = {"n_layers": config.n_layers, "n_heads": config.n_heads, "d": config.d}
    summary = summarise(store.records(check), store.parameters, shape)
    store.write(SUMMARY_JSON, jsonfile.dumps(summary))
    store.write(SUMMARY_TEXT, summary_text(summary))
    if on_summary is not None:
        on_summary(summary)
    return summary


def summarise(records: Iterable[dict], params: dict, config: dict) -> dict:
    """summary.json of these records of the run of `params` (its manifest's), a model of `config` (n_layers, n_heads,
    d): what a run writes, and what `certify verify` derives again from the folder's records."""
    aggregate = CorpusSummary(config["n_layers"], config["n_heads"])
    for record in records:
        aggregate.add(record)
    model = params["model"]
    return aggregate.to_json({
        "model": model,
        "model_name": "all-MiniLM-L6-v2" if model == "minilm" else Path(model).name,
        "config": config,
        "corpus": params["corpus"],
        "corpus_sentences": params["count"],
        "precision_bits": {"start": params["bits"], "max": params["max_bits"]},
        "regimes": REGIME_WORDS,
    })


def summary_text(summary: dict) -> str:
    """summary.txt of a summary."""
    return render(summary, full=True) + "\n"


def record_check(store, sentences: Sequence[str] | None, n_layers: int, n_heads: int):
    """check(record, where) for Store.records: the record is a sentence record of this run (of sentence i of
    `sentences`; None: of some text, which the caller checks), with n_layers layers of n_heads heads, each field of the
    type corpus.sentence_record writes (an index 1.0 or a text no UTF-8 file holds broke the summary and the
    corpus's digest), and the certificate it names is on disk, a file of the folder, with its digest."""
    regimes, steps = set(REGIME_WORDS), {HOLDS, VIOLATED, UNDECIDED}

    def check(record: dict, where: str) -> None:
        i = record["i"]
        try:
            text = record["text"]
            ok = (set(record) == RECORD_KEYS and utf8_text(text) and (sentences is None or text == sentences[i])
                  and _count(record["n_tokens"]) and isinstance(record["tokens"], list)
                  and len(record["tokens"]) == record["n_tokens"] and all(map(utf8_text, record["tokens"]))
                  and isinstance(record["layers"], list) and len(record["layers"]) == n_layers)
            for number, layer in enumerate(record["layers"] if ok else []):
                # rank_certified is summed into the summary: a bool, not a string or a count
                ok = (ok and set(layer) == LAYER_KEYS and _index(layer["layer"], number) and _pair(layer["D"])
                      and _count(layer["rank"]) and _count(layer["rank_max"])
                      and type(layer["rank_certified"]) is bool and isinstance(layer["heads"], list)
                      and len(layer["heads"]) == n_heads)
                for index, head in enumerate(layer["heads"] if ok else []):
                    ok = (ok and set(head) == HEAD_KEYS and _index(head["head"], index) and _count(head["bits"])
                          and head["regime"] in regimes and head["step1"] in steps and head["step2"] in steps
                          and isinstance(head["checker"], str)
                          and all(_pair(head[k]) for k in ("a", "a_D2", "log10_gap", "tau", "D_PX_over_D")))
                    if ok and head["certificate"] is not None:  # the run's own name: no path out of the folder
                        path = store.folder / CERTIFICATES / certificate_name(i, number, index)
                        ok = (head["certificate"] == path.name and path.is_file() and not path.is_symlink()
                              and _sha256_file(path) == head["certificate_sha256"])
                    elif ok:  # a violation always keeps its certificate
                        ok = head["certificate_sha256"] is None and VIOLATED not in (head["step1"], head["step2"])
        except (AttributeError, KeyError, TypeError):
            ok = False
        if not ok:
            raise store.corrupt(f"{where} is not a record of sentence {i} of this corpus run (or its certificate differs)")

    return check


def utf8_text(value) -> bool:
    """A string a UTF-8 file can hold (JSON's escapes also give lone surrogates, which none can)."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _count(value) -> bool:
    return type(value) is int and value >= 0


def _index(value, expected: int) -> bool:
    return type(value) is int and value == expected  # True or 1.0 equal 1, and 1.0 indexes no list


def _pair(value) -> bool:
    """An enclosure [lower, upper] as sentence_record writes it: binary64 endpoints (None beyond, so that a literal
    read as infinity, 1e400, is none: verify's distance to it, inf / inf, was nan, which no tolerance exceeds), in
    order."""
    return (isinstance(value, list) and len(value) == 2
            and all(v is None or type(v) is float and math.isfinite(v) for v in value)
            and (None in value or value[0] <= value[1]))


def weights_sha256(model_folder: Path) -> str:
    """The sha256 of a model's weights file, as a run's manifest keeps it (model_sha256)."""
    return _sha256_file(model_folder / WEIGHTS_FILE)


def model_config(text_model: TextModel) -> dict:
    """The model's config as read, the sha256 of each file its tokens depend on (null for one the folder lacks) and
    where it cuts a long text, as a run's manifest keeps them (model_config): the weights do not fix them
    (layer_norm_eps; the vocabulary and lower-casing; max_seq_length), so a folder of the same weights under another
    config.json was taken for the run's model, and a run resumed after its tokenizer or its cut was edited mixed
    texts tokenised or cut two ways."""
    cut, folder = text_model.truncation, text_model.folder
    return {**dataclasses.asdict(text_model.model.config),
            "tokenizer": {name: _sha256_file(folder / name) if (folder / name).is_file() else None
                          for name in TOKEN_FILES},
            "truncation": None if cut is None else {"max_seq_length": cut.max_length, "side": cut.side}}


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def exit_verdict(summary: dict, failed: list[int], wanted: int) -> str:
    """violated if any step is violated; undecided if any step is undecided or a sentence is left undone."""
    steps = summary["totals"]["steps"]
    if any(steps[step][VIOLATED] for step in steps):
        return VIOLATED
    if any(steps[step][UNDECIDED] for step in steps) or failed or summary["totals"]["sentences"] < wanted:
        return UNDECIDED
    return HOLDS

