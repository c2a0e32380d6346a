"""The public functions whose work spans the packages below the commands: `verify` of a certificate, a campaign
folder (certify.search.audit) or a `certify model --corpus` folder (certify.studies.models.corpus_audit), by what
it is, as `certify verify` dispatches (certify.search and certify.studies do not reach each other)."""

from __future__ import annotations

from pathlib import Path

from certify.core import arguments, files
from certify.core.limits import Limits
from certify.core.numbers import json_type
from certify.jobs.store import MANIFEST
from certify.search import audit
from certify.search.audit import Verification
from certify.search.audit_options import sample_size
from certify.studies import corpus_options
from certify.errors import BadInput, counted

KIND = "corpus run"  # a corpus run's Verification.kind


def verify(source, *, limits: Limits | None = None, everything: bool = False, sample: int | None = None,
           workers: int | None = None, model: str | None = None, corpus: str | None = None) -> Verification:
    """Re-check a certificate (a path or a certificate dict) with the independent checker, re-derive a campaign
    folder in arb (certify.search.audit.verify: its options), or re-check a `certify model --corpus` folder as
    `certify verify` does: every recorded sentence decided again when `everything`, else those with an undecided
    step and `sample` others at random (corpus_options.SAMPLE when None; 0 loads no model), with `workers`
    processes, the run's model from `model` and its corpus from `corpus` where given (each checked against the
    manifest's sha256; None: the manifest's).  BadInput for options that do nothing to the source."""
    # a sample beside everything did nothing, silently: the command refuses --sample beside --all
    if sample is not None and everything is not False and arguments.flag(everything, "--all"):
        raise BadInput("--sample is not allowed with --all (everything=True): every one is re-checked")
    if isinstance(source, (str, Path)) and _is_corpus_folder(source):
        return _corpus(source, limits, everything, sample, workers, model, corpus)
    arguments.refuse_unused([name for name, value in (("model", model), ("corpus", corpus)) if value is not None],
                            "the folder of a `certify model --corpus` run")
    return audit.verify(source, limits=limits, everything=everything, sample=sample, workers=workers)


def _is_corpus_folder(path) -> bool:
    from certify.studies.models import corpus_audit  # the models' code, loaded for a folder only

    path = Path(path)
    return (files.is_folder(path) or path.name == MANIFEST and files.is_folder(path.parent)) and \
        corpus_audit.is_corpus_folder(path)


def _corpus(source, limits, everything, sample, workers, model, corpus) -> Verification:
    from certify.studies.models import corpus_audit

    arguments.refuse_unused(["limits"] if limits is not None else [], corpus_options.LIMITS_APPLY)
    everything = arguments.flag(everything, "--all")
    sample = corpus_options.SAMPLE if sample is None else sample_size(sample)
    workers = None if workers is None else arguments.integer(workers, "--workers")
    model, corpus = _path(model, "model"), _path(corpus, "corpus")
    corpus_options.refuse_unused_model(model, everything, sample)
    report = corpus_audit.audit(source, everything=everything, sample=sample, workers=workers, model=model,
                                corpus=corpus)
    # a corpus has a sentence at least: a count of 0 is a folder not read as a run, whose counts are unknown
    counts = [f"{report.sentences} of {report.count} sentences recorded, {report.rederived} decided again, "
              f"{report.certificates} certificates kept"] if report.count else []
    found = [] if report.ok else [counted(len(report.problems), "problem")]
    message = "; ".join([*counts, *found, *report.notes])
    return Verification(str(source), KIND, None, report.ok, message, problems=tuple(report.problems))


def _path(value, name: str) -> str | None:
    """A path given (a str or a Path) as text, None as None, else BadInput."""
    if value is None or isinstance(value, (str, Path)) and str(value).strip():
        return None if value is None else str(value)
    raise BadInput(f"{name} is a path (a str or a Path), not {json_type(value)}")
