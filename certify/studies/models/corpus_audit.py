"""Re-checking a `certify model --corpus` folder: `certify verify FOLDER` (certify.cli.verify, by its manifest's
format).

A corpus run's records (certify.studies.models.corpus) state per sentence, layer and head the enclosures, the
float64 regime and the steps of collapse.global that the checker confirmed; the attention-head certificate of a head
with a violated step is kept in certificates/ (corpus_job for the folder).  The audit:
    - reads the folder as a resumed run does (certify.jobs.store: the manifest's chain of digests, every chunk
      against its digest, no file the run does not write at its top, in chunks/ or in certificates/) and checks
      each record as the run does (corpus_job.record_check: its shape, the sha256 of the certificate it names);
    - requires every sentence of the corpus to be recorded (an unfinished run is not yet the run its manifest
      describes: the problem names the command that finishes it), their texts those whose sha256 the manifest keeps;
    - reads every stored certificate: an attention-head certificate, certified, stating the steps and regime its
      record states (undecided where it states none) at the record's precision; and has the independent checker
      re-derive `sample` of them drawn at random from fresh randomness (so that a folder cannot be prepared for the
      sample it will meet), or every one with everything=True (`--all`), on a process pool;
    - derives the summary from the records again (corpus_job.summarise): summary.json must say it, summary.txt
      render it.
Not re-derived here: the enclosures and steps of the heads whose certificate the run confirmed and dropped (every
head whose steps hold; `certify model --text SENTENCE` re-derives them), the model's width d the summary states, and
the figures and page drawn from the summary.
"""

from __future__ import annotations

import hashlib
import json
import random
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from certify import jobs
from certify.core import jsonfile
from certify.core.float64_limits import UNDECIDED as REGIME_UNDECIDED
from certify.core.verdicts import UNDECIDED
from certify.engine import certificate
from certify.errors import BadInput
from certify.jobs.store import MANIFEST
from certify.studies.heads import KIND
from certify.studies.models import corpus_job
from certify.studies.models.certified import DEFAULT_BITS, MAX_BITS
from certify.studies.models.corpus import SHIPPED_NAME
from certify.studies.models.corpus_job import CERTIFICATES, FORMAT, OUTPUTS, SUMMARY_JSON, SUMMARY_TEXT

NOUN = "corpus run"
# a run's parameters as its manifest keeps them (corpus_job.parameters), by their JSON types
PARAMETERS = {"format": str, "count": int, "model": str, "model_sha256": str, "corpus": str, "corpus_sha256": str,
              "bits": int, "max_bits": int}
# what a record states of a head, by what an attention-head certificate names it (its inputs' "steps")
STATED = {"step1": "dobrushin", "step2": "tau", "regime": "regime"}


@dataclass
class CorpusAudit:
    """What `certify verify FOLDER` found in a corpus run's folder: the sentences recorded of the corpus's, the
    certificates kept and how many the checker re-derived, and every problem (none: the folder is confirmed)."""

    sentences: int  # sentences recorded
    count: int  # sentences in the corpus
    certificates: int  # certificates kept
    rederived: int  # certificates the checker re-derived
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def is_corpus_folder(path) -> bool:
    """Whether the folder `path` (or its manifest.json) is a corpus run's, by its manifest's format."""
    return jobs.stated_format(_folder(path) / MANIFEST) == FORMAT


def _folder(path) -> Path:
    path = Path(path)
    return path.parent if path.name == MANIFEST else path


def audit(path, *, everything: bool, sample: int, workers: int | None = None,
          progress: Callable[[int, int], None] | None = None) -> CorpusAudit:
    """Re-check the corpus run's folder `path` (or its manifest.json) (module docstring); CorpusAudit.ok when
    nothing differs.  `progress(done, total)` is called as certificates are checked.  BadInput for a folder that
    cannot be read as one (unreadable manifest, an earlier version's) or that a run is writing."""
    folder = _folder(path)
    with jobs.reading(folder, noun=NOUN):  # no run starts on the folder while it is audited
        try:
            store = jobs.Store.read(folder, FORMAT, noun=NOUN, outputs=OUTPUTS)
        except jobs.Edited as err:  # tampered, not unreadable: rejected (exit 1), as an edited chunk is
            return CorpusAudit(0, 0, 0, 0, [str(err)])
        try:
            return _audit(store, everything, sample, workers, progress)
        except BadInput as err:  # a chunk, a record, a stray file: the folder was edited
            return CorpusAudit(0, 0, 0, 0, [str(err)])


def _audit(store: jobs.Store, everything: bool, sample: int, workers: int | None, progress) -> CorpusAudit:
    params = store.parameters
    if set(params) != set(PARAMETERS) or any(type(params[key]) is not kind for key, kind in PARAMETERS.items()):
        raise store.corrupt(f"{MANIFEST} does not hold a {NOUN}'s parameters")
    count = store.count
    first = next(store.records(), None)
    if first is None:  # a run stopped before its first sentence: nothing to re-check but that
        return CorpusAudit(0, count, 0, 0, [_unfinished(store, 0)])
    try:  # every record is checked to have the first's shape
        shape = len(first["layers"]), len(first["layers"][0]["heads"])
    except (KeyError, IndexError, TypeError):
        raise store.corrupt("the first record is not a sentence record") from None
    check = corpus_job.record_check(store, None, *shape)
    done = corpus_job.decided(store, check)  # and certificates/ holds no certificate no record names
    texts, kept = {}, []

    def seen(records):
        for record in records:
            texts[record["i"]] = record["text"]
            kept.extend((head["certificate"], {key: head[key] for key in (*STATED, "bits")})
                        for layer in record["layers"] for head in layer["heads"] if head["certificate"])
            yield record

    stored, problems = _stored_summary(store.folder)
    config = {"n_layers": shape[0], "n_heads": shape[1], "d": _width(stored)}
    derived = corpus_job.summarise(seen(store.records(check)), params, config)
    if len(done) < count:
        problems.insert(0, _unfinished(store, len(done)))
    elif hashlib.sha256("\n".join(texts[i] for i in range(count)).encode()).hexdigest() != params["corpus_sha256"]:
        problems.append(f"the records' sentences are not the corpus's (their sha256 is not {MANIFEST}'s "
                        "corpus_sha256)")
    if stored is not None:
        problems += _summary_problems(store, stored, derived)
    chosen = set(range(len(kept)) if everything
                 else random.SystemRandom().sample(range(len(kept)), min(sample, len(kept))))
    items = [(name, stated, k in chosen) for k, (name, stated) in enumerate(kept)]
    found = jobs.pool_map(certificate_problems, str(store.folder), jobs.split(items, workers), workers, progress,
                          len(items))
    problems += [problem for problem in found if problem]
    notes = [] if len(chosen) == len(kept) else [
        f"{len(chosen)} of the {len(kept)} certificates re-derived by the checker, at random (--all: every one); "
        "each one read"]
    return CorpusAudit(len(done), count, len(kept), len(chosen), problems, notes)


def _unfinished(store: jobs.Store, recorded: int) -> str:
    """The problem of a folder that records fewer sentences than its corpus has, with the command that finishes it."""
    params = store.parameters
    corpus = [] if params["corpus"] == SHIPPED_NAME else [params["corpus"]]
    precision = [*(["--start-prec", str(params["bits"])] if params["bits"] != DEFAULT_BITS else []),
                 *(["--max-prec", str(params["max_bits"])] if params["max_bits"] != MAX_BITS else [])]
    command = shlex.join(["certify", "model", params["model"], "--corpus", *corpus, "--out", str(store.folder),
                          *precision])
    return (f"unfinished: the folder records {recorded} of the corpus's {store.count} sentences (a run stopped early, "
            f"or one asked for fewer with --sentences); finish it with: {command}")


def _stored_summary(folder: Path) -> tuple[dict | None, list[str]]:
    """summary.json as read, or None with the problem of a missing or unreadable one."""
    path = folder / SUMMARY_JSON
    if not path.is_file():
        return None, [f"there is no {SUMMARY_JSON} (the run was stopped before writing it); running its command again "
                      "writes it"]
    try:
        stored = jsonfile.read(path, raise_with=None)
    except BadInput as err:
        return None, [f"{SUMMARY_JSON} is unreadable: {err}"]
    return (stored, []) if isinstance(stored, dict) else (None, [f"{SUMMARY_JSON} is not a summary (no JSON object)"])


def _width(stored: dict | None):
    """The model's width d the summary states (the records do not: only a certificate's tokens would)."""
    config = stored.get("config") if stored is not None else None
    return config.get("d") if isinstance(config, dict) else None


def _summary_problems(store: jobs.Store, stored: dict, derived: dict) -> list[str]:
    """Why summary.json and summary.txt do not say what the records say."""
    if stored != json.loads(jsonfile.dumps(derived)):  # as the file holds it
        return [f"{SUMMARY_JSON} does not describe the records (edited, or an earlier run's); running the run's "
                "command again rewrites it"]
    text = store.folder / SUMMARY_TEXT
    if not (text.is_file() and text.read_bytes() == corpus_job.summary_text(derived).encode("utf-8")):
        return [f"{SUMMARY_TEXT} does not render {SUMMARY_JSON} (edited or missing); running the run's command again "
                "rewrites it"]
    return []


def certificate_problems(folder: str, items: list[tuple[str, dict, bool]]) -> list[str | None]:
    """The problem of each (certificate name, what its record states of the head, whether the checker re-derives
    it) of the folder's certificates/, or None (runs in a worker)."""
    return [_certificate_problem(Path(folder), *item) for item in items]


def _certificate_problem(folder: Path, name: str, recorded: dict, rederive: bool) -> str | None:
    where = f"{CERTIFICATES}/{name}"
    try:
        cert = certificate.read(folder / CERTIFICATES / name)
    except BadInput as err:
        return f"{where} is unreadable: {err}"
    inputs = cert.get("inputs")
    steps = inputs.get("steps") if isinstance(inputs, dict) else None
    if cert.get("kind") != KIND or not isinstance(steps, dict):
        return f"{where} is not an {KIND} certificate"
    if cert.get("verdict") != "certified":  # what a run keeps (heads.confirm_steps); an undecided one proves nothing
        return f"{where} states the verdict {cert.get('verdict')!r}: it certifies none of the steps it names"
    stated = {key: steps.get(step, REGIME_UNDECIDED if key == "regime" else UNDECIDED) for key, step in STATED.items()}
    stated["bits"] = cert.get("precision")
    if stated != recorded:
        return f"{where} states {stated}, its record {recorded}"
    if rederive:
        confirmation = certificate.confirm(cert, written=False)  # read from its file, measured there
        if not confirmation.ok:
            return f"{where} is rejected by the checker: {confirmation.message}"
    return None
