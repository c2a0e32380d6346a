"""Re-checking a `certify model --corpus` folder: `certify verify FOLDER` (certify.cli.verify, by its manifest's
format).

A corpus run's records (certify.studies.models.corpus) state per sentence, layer and head the enclosures, the
float64 regime and the steps of collapse.global that the checker confirmed; the attention-head certificate of a head
with a violated step is kept in certificates/ (corpus_job for the folder).  The audit:
    - reads the folder as a resumed run does (certify.jobs.store: the manifest's chain of digests, every chunk
      against its digest, no file the run does not write at its top, in chunks/ or in certificates/) and checks
      each record as the run does (corpus_job.record_check: its shape, the sha256 of the certificate it names);
    - checks the recorded sentences' texts: those of a finished run against the sha256 of the corpus the manifest
      keeps; those of a run that records fewer (asked for fewer with --sentences, or stopped early) against the
      corpus file, the one given (`corpus`, --corpus FILE, refused (BadInput) unless its sentences have that
      sha256) or else the manifest's "corpus" read here as the run read it, when its sentences have that sha256
      (else a note says they are not checked).  Such a folder states its K sentences only: it is confirmed as K of
      N, with a note naming the command that continues it (the manifest's model and corpus, as resuming compares
      them);
    - reads every stored certificate (the violations): an attention-head certificate, certified, stating the steps
      and regime its record states (undecided where it states none) at the record's precision, and has the
      independent checker re-derive every one;
    - decides again every recorded sentence with an undecided step (where a forger would restate a violation) and
      `sample` others drawn at random from fresh randomness (so that a folder cannot be prepared for the sample it
      will meet; _Draw, as the folder is read), or every one with everything=True (`--all`), none with sample 0
      (--sample 0), with the run's own code
      (corpus.certify_texts: the forward pass, certified.iter_layers, corpus.sentence_record) and the model loaded
      as the run loads it, from the manifest's "model" (a relative path names it from the directory the run was
      started in) or the one given (`model`, --model PATH), refused (BadInput) when it cannot be loaded or the
      sha256 of its weights is not the manifest's "model_sha256".  The record decided again is compared with the
      stored one field by field (_rederived), "checker" aside, the checker's words on a head's certificate, which its
      version may word otherwise (what it confirmed, the steps and regime, is compared):
        exactly, everything discrete: the text, tokens and their number, the layers' and heads' numbers, per layer
        the rank statistics (rank, rank_max, rank_certified: an uncertified rank is float64's numerical rank,
        which another rounding moves only for a singular value at its threshold, and is then named), per head the
        regime, both steps and the kept certificate's name (whether one is kept);
        to a relative TOLERANCE (1e-9, justified there), the float fields: every enclosure's endpoints (per layer D,
        per head a, a_D2, log10_gap, tau, D_PX_over_D; null, beyond binary64, only with null).  The forward pass
        is float64 with one BLAS thread, as in the run: the same numpy and BLAS on the same kind of machine give the
        same bits, another BLAS, CPU or numpy rounds it otherwise in the last bits, and every enclosure moves with it;
        the precision a head was decided at and a kept certificate's sha256 (ROUNDED) exactly where every enclosure
        of the sentence is bit-identical (the same rounding); elsewhere a margin within the rounding's move may be
        decided at another rung of the ladder, with the same verdicts, and the certificate decided again states this
        machine's tokens, not the run's.  A kept certificate is vouched for whatever the rounding, by the checker
        re-deriving it exactly on its own stated inputs (above).
      A sentence whose enclosures differ within the tolerance only is confirmed, with a note counting such sentences
      and naming the largest relative difference; beyond it, or in any exact field, it is a problem naming the
      field.  What a record certifies, its steps and regime, is never tolerated.  A forger may move an enclosure's
      endpoint by the tolerance at most and then (the enclosures no longer bit-identical) state another precision
      for a head, or keep another certificate for one (the certificate the checker confirms, stating the record's
      steps, regime and precision).  That is harmless: a record's enclosures and precision are reported figures
      about the run's float64 tokens, which the folder does not keep and another machine does not reproduce (an
      honest enclosure decided again here can lie off the recorded one: neither containment nor overlap can be
      asked of it), the verdicts they go with are compared exactly, and a kept certificate proves its violation on
      its own stated inputs;
    - derives the summary from the records again (corpus_job.summarise): summary.json must say it, summary.txt
      render it.
The certificates and the sentences are re-derived on a process pool (certify.jobs.pool_map).  Not re-derived here:
the records of the sentences outside the sample (`--all`, or `certify model --text SENTENCE`, derives them again),
the model's width d the summary states, and the figures and page drawn from the summary.
"""

from __future__ import annotations

import math
import random
import shlex
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

from certify import jobs
from certify.core import files, jsonfile
from certify.core.arguments import Spelling
from certify.core.float64_limits import UNDECIDED as REGIME_UNDECIDED
from certify.core.verdicts import UNDECIDED
from certify.engine import certificate
from certify.errors import BadInput
from certify.jobs.store import MANIFEST
from certify.studies.heads import KIND
from certify.studies.models import corpus_job
from certify.studies.models.certified import DEFAULT_BITS, MAX_BITS
from certify.studies.models.corpus import SHIPPED_NAME, CorpusRun, certify_texts, read_corpus, sha256_text
from certify.studies.models.corpus_job import CERTIFICATES, FORMAT, OUTPUTS, SUMMARY_JSON, SUMMARY_TEXT
from certify.studies.models.loading import CONFIG_FILE, MODEL_PACKAGES
from certify.studies.models.pipeline import load_text_model

NOUN = "corpus run"
# a run's parameters as its manifest keeps them (corpus_job.parameters), by their JSON types
PARAMETERS = {"format": str, "count": int, "model": str, "model_sha256": str, "model_config": dict, "corpus": str,
              "corpus_sha256": str, "bits": int, "max_bits": int}
# those a run written before they were kept lacks (its model then checked by its weights alone)
OPTIONAL = {"model_config"}
# what a record states of a head, by what an attention-head certificate names it (its inputs' "steps")
STATED = {"step1": "dobrushin", "step2": "tau", "regime": "regime"}
# a head's field a re-derived record need not repeat: the checker's words (what it confirmed, the steps and regime,
# is compared), which another version of the checker may word otherwise
UNCOMPARED = {"checker"}
# a record's enclosures [lower, upper] (binary64 endpoints, null beyond): computed from the float64 forward pass's
# tokens, they move with its rounding, and are compared to TOLERANCE
ENCLOSURES = {"D", "a", "a_D2", "log10_gap", "tau", "D_PX_over_D"}
# How far apart, relatively, an enclosure's endpoint recorded and decided again may be and be another rounding of the
# forward pass (another BLAS's summation order or FMA, another CPU, numpy's own loops).  The forward pass is a few
# layers of sums of at most d_ff products (MiniLM: 6 layers, d_ff = 1536), each rounded otherwise by at most
# d_ff * 2^-53 = 1.7e-13 of the sum of the products' magnitudes, carried through LayerNorm and softmax with a gain
# of order one a layer.  The enclosures are 1 to 30 ulps wide at 64 bits (2e-16 to 4e-15 relatively): the rounding
# moves them off each other, so neither containment nor overlap can be asked of an honest run.  Measured: MiniLM's
# records of 20 sentences decided with numpy's own loops in place of BLAS differ by 5e-15 at most (tau and
# D(P X) / D; D by 2e-16).  1e-9, the campaign audit's SLACK, leaves five orders above that for the figures that
# lose relative digits (a D small against the tokens' norms, a small tau), and is far below the 3 digits a summary
# shows.
TOLERANCE = 1e-9
# a head's fields that follow the forward pass's rounding without being figures: the rung of the precision ladder
# that decided it (a margin within the rounding's move straddles a threshold at one rung on one machine only, the
# verdicts equal) and a kept certificate's sha256 (the certificate states the tokens); compared where every
# enclosure of the sentence is bit-identical (the same rounding), the verdicts always
ROUNDED = {"bits", "certificate_sha256"}
DIFFERENCES_NAMED = 3  # differences named per sentence


@dataclass
class CorpusAudit:
    """What `certify verify FOLDER` found in a corpus run's folder: the sentences recorded of the corpus's and how
    many were decided again, the certificates kept (each re-derived by the checker), and every problem (none: the
    folder is confirmed)."""

    sentences: int  # sentences recorded
    count: int  # sentences in the corpus
    rederived: int  # recorded sentences decided again
    certificates: int  # certificates kept, each re-derived by the checker
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def folder_manifest(path):
    """The manifest of the job folder `path` (or its manifest.json) as jobs.read_manifest reads it: read once, and asked
    whether it is a corpus run's (is_corpus_run) or else handed to a campaign's audit."""
    return jobs.read_manifest(_folder(path) / MANIFEST)


def is_corpus_run(manifest) -> bool:
    """Whether a job folder's manifest (as folder_manifest read it) is a corpus run's, by its format."""
    return jobs.stated_format(manifest) == FORMAT


def _folder(path) -> Path:
    path = Path(path)
    return path.parent if path.name == MANIFEST else path


def audit(path, *, everything: bool, sample: int, workers: int | None = None,
          progress: Callable[[int, int], None] | None = None, model: str | None = None,
          corpus: str | None = None, names: Spelling) -> CorpusAudit:
    """Re-check the corpus run's folder `path` (or its manifest.json) (module docstring); CorpusAudit.ok when
    nothing differs.  `model` and `corpus` (None: the manifest's) name the run's model and corpus file here, and
    the refusals and notes name them (and --sample) as `names` spells them (certify.api).
    `progress(done, total)` is called as certificates and sentences are checked.  BadInput for a folder that cannot
    be read as one (unreadable manifest, an earlier version's) or that a run is writing, for a `corpus` whose
    sentences are not the run's, when a sentence is to be decided again for a model that cannot be loaded or
    whose weights are not the run's, and for `workers` the pool does not take."""
    jobs.ProcessPool(workers)  # refused here: a BadInput from _audit below is the folder's, rejected as edited
    folder = _folder(path)
    with jobs.reading(folder, noun=NOUN):  # no run starts on the folder while it is audited
        try:
            store = jobs.Store.read(folder, FORMAT, noun=NOUN, outputs=OUTPUTS)
        except jobs.Edited as err:  # tampered, not unreadable: rejected (exit 1), as an edited chunk is
            return CorpusAudit(0, 0, 0, 0, [str(err)])
        if not _has_parameters(store):
            return CorpusAudit(0, 0, 0, 0, [str(store.corrupt(f"{MANIFEST} does not hold a {NOUN}'s parameters"))])
        sentences = None if corpus is None else _given_corpus(store, corpus, names)  # refused before any work
        given, model = model is not None, store.parameters["model"] if model is None else model
        if everything or sample:
            _check_model(store, model, given, names)
        try:
            return _audit(store, everything, sample, workers, progress, model, sentences, names)
        except BadInput as err:  # a chunk, a record, a stray file: the folder was edited
            return CorpusAudit(0, 0, 0, 0, [str(err)])


def _has_parameters(store: jobs.Store) -> bool:
    params = store.parameters
    return (set(PARAMETERS) - OPTIONAL <= set(params) <= set(PARAMETERS)
            and all(_of_kind(params[key], kind) for key, kind in PARAMETERS.items() if key in params))


def _of_kind(value, kind: type) -> bool:
    # a string no UTF-8 text holds (JSON's lone surrogates) is no run's, and broke the note or summary naming it
    return type(value) is kind and (kind is not str or corpus_job.utf8_text(value))


def _check_model(store: jobs.Store, model: str, given: bool, names: Spelling) -> None:
    """BadInput unless `model` (the manifest's, or --model's when `given`) loads as the run loads it, its weights
    those the run used."""
    ways = f"{names.given('sample', 0)} re-checks the rest"
    if not given:  # the manifest's is not found here: the way to name where it is
        ways = f"{names.given('model', 'PATH')} names the run's model here; {ways}"
    try:
        loaded = load_text_model(model)
    except BadInput as err:
        what = names.given("model", model) if given else f"{store.folder}: the run's model"
        raise BadInput(f"{what} cannot be loaded here, so no sentence can be decided again ({ways}): {err}") from None
    folder = loaded.folder
    if corpus_job.weights_sha256(folder) != store.parameters["model_sha256"]:
        what = (f"{names.given('model', model)}: the weights" if given
                else f"{store.folder}: the weights of the model {model!r} here")
        raise BadInput(f"{what} ({folder}) are not the run's (their sha256 is not {MANIFEST}'s model_sha256), so no "
                       f"sentence can be decided again ({ways})")
    here, stated = corpus_job.model_config(loaded), store.parameters.get("model_config", None)
    if stated is not None and "tokenizer" not in stated:  # a run written before the manifest kept its tokenizer's
        del here["tokenizer"]  # files: the tokens of each sentence decided again are compared with its record
    if stated is not None and here != stated:
        differ = ", ".join(f"{key} {here.get(key)!r}, not {stated.get(key)!r}"
                           for key in sorted(set(here) | set(stated)) if here.get(key) != stated.get(key))
        what = names.given("model", model) if given else f"{store.folder}: the model {model!r} here"
        raise BadInput(f"{what}: {folder} holds another model than {MANIFEST}'s model_config ({differ}: its "
                       f"{CONFIG_FILE}, tokenizer or cut of long texts), so no sentence can be decided again ({ways})")


def _given_corpus(store: jobs.Store, corpus: str, names: Spelling) -> list[str]:
    """The sentences of the corpus file given (--corpus FILE), BadInput unless they are the run's."""
    sentences = read_corpus(Path(corpus))
    if not _is_run_corpus(store.parameters, sentences):
        raise BadInput(f"{names.given('corpus', corpus)}: its sentences are not the run's (their sha256 is not "
                       f"{MANIFEST}'s corpus_sha256)")
    return sentences


def _is_run_corpus(params: dict, sentences: list[str]) -> bool:
    return sha256_text("\n".join(sentences)) == params["corpus_sha256"]


def _audit(store: jobs.Store, everything: bool, sample: int, workers: int | None, progress, model: str,
           sentences: list[str] | None, names: Spelling) -> CorpusAudit:
    params = store.parameters
    count = store.count
    first = next(store.records(), None)
    if first is None:  # a run stopped before its first sentence: it states nothing to confirm
        return CorpusAudit(0, count, 0, 0, [f"the folder records none of the corpus's {count} sentences: it states "
                                            f"nothing to verify; {_continue(store)}"])
    try:  # every record is checked to have the first's shape
        shape = len(first["layers"]), len(first["layers"][0]["heads"])
    except (KeyError, IndexError, TypeError):
        raise store.corrupt("the first record is not a sentence record") from None
    check = corpus_job.record_check(store, None, *shape)
    decided, draw = corpus_job.Decided(), _Draw(0 if everything else sample)
    texts, kept, again = {}, [], []

    def seen(records):  # the folder read once: its sentences, kept certificates, the sample and the summary
        for record in records:
            decided.add(record)
            texts[record["i"]] = record["text"]
            kept.extend((head["certificate"], {key: head[key] for key in (*STATED, "bits")})
                        for layer in record["layers"] for head in layer["heads"] if head["certificate"])
            if everything or sample and _undecided(record):
                again.append(record)
            else:
                draw.offer(record)
            yield record

    stored, problems = _stored_summary(store.folder)
    config = {"n_layers": shape[0], "n_heads": shape[1], "d": _width(stored)}
    derived = corpus_job.summarise(seen(store.records(check)), params, config)
    done = decided.complete(store)  # certificates/ holds no certificate no record names
    always, again = len(again), sorted([*again, *draw.held], key=lambda record: record["i"])
    notes = []
    if len(done) == count:
        if not _is_run_corpus(params, [texts[i] for i in range(count)]):
            problems.append(f"the records' sentences are not the corpus's (their sha256 is not {MANIFEST}'s "
                            "corpus_sha256)")
    else:
        problems += _partial_texts(params, texts, notes, sentences)
        notes.insert(0, f"the folder records {len(done)} of the corpus's {count} sentences (a run asked for fewer with "
                        f"--sentences, or stopped early) and states these only; {_continue(store)}")
    if stored is not None:
        problems += _summary_problems(store, stored, derived)
    checks = len(kept) + len(again)
    found = jobs.pool_map(certificate_problems, str(store.folder), jobs.split(kept, workers), workers, progress, checks)
    problems += [problem for problem in found if problem]
    run = CorpusRun(model, (), params["bits"], params["max_bits"])
    rederived = jobs.pool_map(sentence_problems, run, jobs.split(again, workers), workers, progress, checks, len(kept))
    problems += [outcome.problem for outcome in rederived if outcome.problem]
    if len(again) < len(done):
        notes.append(f"{len(again)} of the {len(done)} recorded sentences decided again ({len(draw.held)} at random"
                     + (f", {always} more for an undecided step" if always else "")
                     + f"; {names.given('sample', 'K')}, {names('everything')}: every one)")
    notes += _rounding_note([outcome for outcome in rederived if not outcome.problem and outcome.largest], len(again))
    return CorpusAudit(len(done), count, len(again), len(kept), problems, notes)


class _Draw:
    """`size` of a stream of records drawn at random from fresh randomness, every `size` of them equally likely
    (reservoir sampling: the stream is read once, `size` records held however long it is)."""

    def __init__(self, size: int) -> None:
        self.size, self.met, self.held = size, 0, []
        self._random = random.SystemRandom()

    def offer(self, record: dict) -> None:
        """The next record of the stream: held, or in place of one held with probability size / (records met)."""
        self.met += 1
        if len(self.held) < self.size:
            self.held.append(record)
        elif self.size and (slot := self._random.randrange(self.met)) < self.size:
            self.held[slot] = record


def _rounding_note(rounded: list[Rederived], rederived: int) -> list[str]:
    """The note on the sentences decided again whose float fields differ from their records within TOLERANCE only."""
    if not rounded:
        return []
    tolerated = sum((outcome.tolerated for outcome in rounded), Counter())
    heads, kept = tolerated["bits"], tolerated["certificate_sha256"]
    return [f"{len(rounded)} of the {rederived} sentences decided again {_verb(len(rounded), 'differ')} from their "
            f"records in float fields within the relative tolerance {TOLERANCE:g}, by "
            f"{max(outcome.largest for outcome in rounded):.2g} at most: the float64 forward pass rounds otherwise here "
            "(another BLAS, CPU or numpy)"
            + (f"; {heads} of their heads {_verb(heads, 'are')} decided at another precision" if heads else "")
            + (f"; {kept} of their kept certificates {_verb(kept, 'are')} decided again of other tokens (their sha256 "
               "not compared; the checker re-derived each)" if kept else "")]


def _verb(count: int, plural: str) -> str:
    """The verb agreeing with "COUNT of them" (the note said "1 of the 3 sentences ... differ")."""
    return plural if count != 1 else {"are": "is"}.get(plural, plural + "s")


def _undecided(record: dict) -> bool:
    """Whether a (checked) record states an undecided step: where a violation whose certificate was dropped would be
    restated, so it is decided again whenever any sentence is, as a campaign's undecided records are."""
    return any(head[step] == UNDECIDED for layer in record["layers"] for head in layer["heads"]
               for step in ("step1", "step2"))


def _continue(store: jobs.Store) -> str:
    """The command that continues the folder's run, in the words of a note or problem."""
    params = store.parameters
    corpus = [] if params["corpus"] == SHIPPED_NAME else [params["corpus"]]
    precision = [*(["--start-prec", str(params["bits"])] if params["bits"] != DEFAULT_BITS else []),
                 *(["--max-prec", str(params["max_bits"])] if params["max_bits"] != MAX_BITS else [])]
    # resuming compares the manifest's model and corpus as the run named them: a relative path is the run's
    # directory's, where the command is then run, its --out made absolute to name the folder from there
    paths = [*corpus, *([] if params["model"] in MODEL_PACKAGES else [params["model"]])]  # not the names
    relative = not all(Path(path).is_absolute() for path in paths)
    out = store.folder.resolve() if relative else store.folder
    command = shlex.join(["certify", "model", params["model"], "--corpus", *corpus, "--out", str(out), *precision])
    where = ", from the directory the run was started in (its relative paths are from there)," if relative else ""
    return f"continue it{where} with: {command}"


def _partial_texts(params: dict, texts: dict[int, str], notes: list[str], sentences: list[str] | None) -> list[str]:
    """The problems of the texts of a run that records fewer sentences than its corpus has: checked against the
    corpus's `sentences` (--corpus FILE's, checked), else the manifest's corpus file read here when its sentences
    are those of the manifest's sha256 (else a note says they are not)."""
    if sentences is None:
        try:
            sentences = read_corpus(None if params["corpus"] == SHIPPED_NAME else Path(params["corpus"]))
        except BadInput:  # not found here (or not a corpus): noted below
            pass
    if sentences is None or not _is_run_corpus(params, sentences):
        notes.append(f"the recorded sentences' texts are not checked against the corpus: {params['corpus']} cannot be "
                     f"read here as the run read it (sentences whose sha256 is {MANIFEST}'s corpus_sha256); "
                     "--corpus FILE names it here")
        return []
    return [f"sentence {i}'s text is not the corpus's: {texts[i]!r:.80}" for i in sorted(texts)
            if texts[i] != sentences[i]]


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
    if stored != jsonfile.as_read(derived):  # as the file holds it
        return [f"{SUMMARY_JSON} does not describe the records (edited, or an earlier run's); running the run's "
                "command again rewrites it"]
    text = store.folder / SUMMARY_TEXT
    if not (text.is_file() and files.holds(text, corpus_job.summary_text(derived).encode("utf-8"))):
        return [f"{SUMMARY_TEXT} does not render {SUMMARY_JSON} (edited or missing); running the run's command again "
                "rewrites it"]
    return []


def certificate_problems(folder: str, items: list[tuple[str, dict]]) -> list[str | None]:
    """The problem of each (certificate name, what its record states of the head) of the folder's certificates/,
    re-derived by the checker, or None (runs in a worker)."""
    return [_certificate_problem(Path(folder), *item) for item in items]


def _certificate_problem(folder: Path, name: str, recorded: dict) -> str | None:
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
    confirmation = certificate.confirm(cert, written=False)  # read from its file, measured there
    if not confirmation.ok:
        return f"{where} is rejected by the checker: {confirmation.message}"
    return None


def sentence_problems(run: CorpusRun, records: list[dict]) -> list[Rederived]:
    """Each stored record decided again by the run's own code with the run's model and precision ladder (`run`, its
    sentences unused: each record's text is), compared with it (runs in a worker)."""
    derived = certify_texts(run, [(record["i"], record["text"]) for record in records])
    # each decided again as the store writes it and reads it back (lists, binary64 floats)
    return [_rederived(record, jsonfile.as_read(again)) for record, (again, _) in zip(records, derived)]


class Rederived(NamedTuple):
    """A stored record decided again: its problem (None: none), the largest relative difference of its enclosures'
    endpoints (0.0: bit-identical), and how many heads differ in each ROUNDED field (tolerated: the endpoints
    differ)."""

    problem: str | None
    largest: float
    tolerated: Counter


def _rederived(stored: dict, derived: dict) -> Rederived:
    """The record decided again compared with the stored one: enclosures to TOLERANCE, the ROUNDED fields where
    every enclosure is bit-identical, every other field (UNCOMPARED aside) exactly."""
    fields = _compared(stored, derived)
    largest = max((_relative(recorded, again) for _, key, recorded, again in fields if key in ENCLOSURES), default=0.0)
    differences, tolerated = [], Counter()
    for where, key, recorded, again in fields:
        if key in ENCLOSURES:
            if (relative := _relative(recorded, again)) > TOLERANCE:
                differences.append(f"{where}{key}: recorded {recorded!r}, decided again {again!r} (relatively "
                                   f"{relative:.2g} apart, beyond the tolerance {TOLERANCE:g})")
        elif recorded != again and largest and key in ROUNDED:  # another rounding of the forward pass here
            tolerated[key] += 1
        elif recorded != again:
            differences.append(f"{where}{key}: recorded {recorded!r}, decided again {again!r}")
    if not differences:
        return Rederived(None, largest, tolerated)
    more = len(differences) - DIFFERENCES_NAMED
    return Rederived(f"sentence {stored['i']} ({stored['text']!r:.60}) decided again differs from its record: "
                     + "; ".join(differences[:DIFFERENCES_NAMED]) + (f"; and {more} more" if more > 0 else ""),
                     largest, tolerated)


def _compared(stored: dict, derived: dict) -> list[tuple[str, str, object, object]]:
    """(WHERE, field, recorded, decided again) for every field of a record (UNCOMPARED aside), and the numbers of its
    layers and of their heads."""
    found = [*_fields(stored, derived, "", {"layers"}), ("", "layers", len(stored["layers"]), len(derived["layers"]))]
    for layer, again in zip(stored["layers"], derived["layers"]):
        where = f"layer {layer['layer']} "
        found += [*_fields(layer, again, where, {"heads"}), (where, "heads", len(layer["heads"]), len(again["heads"]))]
        for head, head_again in zip(layer["heads"], again["heads"]):
            found += _fields(head, head_again, f"{where}head {head['head']} ", UNCOMPARED)
    return found


def _fields(stored: dict, derived: dict, where: str, skip: set[str]) -> list[tuple[str, str, object, object]]:
    keys = [*stored, *(key for key in derived if key not in stored)]
    return [(where, key, stored.get(key), derived.get(key)) for key in keys if key not in skip]


def _relative(recorded: list, again: list) -> float:
    """How far apart two enclosures' endpoints are, relatively, at most (inf where one is null, beyond binary64, and
    the other not)."""
    return max(0.0 if x == y else math.inf if None in (x, y) else abs(x - y) / max(abs(x), abs(y))
               for x, y in zip(recorded, again))
