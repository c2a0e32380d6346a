"""The public functions whose work spans the packages below the commands: `verify` of a certificate, a campaign
folder (certify.search.audit) or a `certify model --corpus` folder (certify.studies.models.corpus_audit), by what
it is (certify.search and certify.studies do not reach each other), and `check`, the engine's in the API's words.
`certify verify` is `verification` with its own options' names and a progress bar: the dispatch and every refusal
are written here once."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, ContextManager

from certify.core import arguments, files, jsonfile
from certify.core.arguments import Spelling
from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits, given as given_limits
from certify.core.precision import DEFAULT_MAX_PRECISION, START_PRECISION
from certify.core.numbers import json_type
from certify.core.verdicts import short_repr
from certify.engine import certificate
from certify.search import audit_options
from certify.studies import corpus_options
from certify.errors import BadInput, counted

KIND = "corpus run"  # a corpus run's Verification.kind
CAMPAIGN = "campaign"  # a campaign's
# the options as a caller of certify.verify writes them, named so in its refusals
KEYWORDS = Spelling({"everything": "everything=True", "sample": "sample=", "workers": "workers=", "model": "model=",
                     "corpus": "corpus=", "limits": "limits="}, assign="")
# as `certify verify` writes them
OPTIONS = Spelling({"everything": "--all", "sample": "--sample", "workers": "--workers", "model": "--model",
                    "corpus": "--corpus", "limits": "--limit"}, assign=" ")
Progress = Callable[[int, int], None]
# a check's options as `certify check` names them in a reason or a refusal, and as a caller of certify.check does
CHECK_OPTIONS = Spelling.command(("claim", "bound", "max_prec", "start_prec", "limits"), limits="--limit")
CHECK_KEYWORDS = Spelling.keywords(CHECK_OPTIONS.names)


def check(source, claim: str | None = None, bound: str | None = None, *, max_prec: int = DEFAULT_MAX_PRECISION,
          start_prec: int = START_PRECISION, limits: Limits = DEFAULT_LIMITS, goal=None):
    """certify.engine.check (see there), its undecided reason and its refusals naming the keywords (max_prec=,
    limits=Limits(work=N)) where the engine's, which a campaign's records keep, name `certify check`'s options."""
    from certify import engine

    with CHECK_KEYWORDS.respelling(CHECK_OPTIONS):
        result = engine.check(source, claim, bound, max_prec=max_prec, start_prec=start_prec, limits=limits,
                              goal=goal)
    return dataclasses.replace(result, reason=CHECK_KEYWORDS.respelled(result.reason, CHECK_OPTIONS))


@dataclass(frozen=True)
class Verification:
    """What `certify verify` says of a certificate, a campaign folder or a corpus run's: ok (confirmed), refused
    (unreadable or beyond the limits: nothing was checked), the checker's or the audit's message, and for a
    folder the problems found; `certificate` the certificate read, `report` a folder's audit
    (certify.search.audit.Audit, certify.studies.models.corpus_audit.CorpusAudit), None for the other."""

    source: str
    kind: str  # the certificate's kind ("inequality", "trajectory", ...), "campaign" or "corpus run"
    verdict: str | None  # the verdict the certificate states (None for a folder)
    ok: bool
    message: str
    refused: bool = False
    problems: tuple = ()
    certificate: dict | None = field(default=None, repr=False, compare=False)
    report: object = field(default=None, repr=False, compare=False)

    @property
    def exit_code(self) -> int:
        """0 confirmed, 1 rejected, 2 refused: the exit code of `certify verify`."""
        return 2 if self.refused else 0 if self.ok else 1

    def __repr__(self) -> str:
        outcome = "refused" if self.refused else "confirmed" if self.ok else "REJECTED"
        stated = f" ({self.verdict})" if self.verdict else ""
        return short_repr(f"verify {outcome}", f"{self.kind}{stated} {self.source}: {self.message}")


def verify(source, *, limits: Limits | None = None, everything: bool = False, sample: int | None = None,
           workers: int | None = None, model: str | None = None, corpus: str | None = None,
           progress: Progress | None = None) -> Verification:
    """Re-check a certificate (a path or a certificate dict) with the independent checker, re-derive a campaign
    folder (or its manifest.json) in arb, or re-check a `certify model --corpus` folder, as `certify verify` does:
    every configuration or recorded sentence when `everything`, else those the audit must and `sample` others at
    random (certify.search.audit_options.SAMPLE holds, corpus_options.SAMPLE sentences when None; 0 loads no
    model), with `workers` processes; a corpus run's model from `model` and its corpus from `corpus` where given
    (each checked against the manifest's sha256; None: the manifest's).  `limits` (certify.core.limits, None for
    the documented ones) go with a certificate, a folder keeps its own.  `progress(done, total)` is called as a
    folder's configurations, or a corpus run's certificates and sentences, are checked (a function, not the
    true or false of certify.sample, which shows a bar).  BadInput for options
    that do nothing to the source, named as keywords (`sample=`), as are the options of the message and of a
    refusal (limits=Limits(dim=N), where the command's say --limit dim=N)."""
    progress = arguments.callback(progress, "progress")
    with KEYWORDS.respelling(OPTIONS):
        verified = verification(source, KEYWORDS, lambda unit: contextlib.nullcontext(progress),
                                limits=None if limits is None else functools.partial(given_limits, limits),
                                everything=everything, sample=sample, workers=workers, model=model, corpus=corpus)
    return dataclasses.replace(verified, message=KEYWORDS.respelled(verified.message, OPTIONS))


def verification(source, names: Spelling, progress: Callable[[str], ContextManager[Progress | None]], *,
                 limits: Callable[[], Limits] | None, everything, sample, workers, model, corpus) -> Verification:
    """verify, its refusals naming the options as `names` spells them (the command's --all, the API's
    everything=True); `limits` gives those given (None: none), called only where they apply (a folder refuses
    them, whatever they are); `progress(unit)` opens the progress(done, total) of a folder's work, counted in
    `unit`s ("config", "check"), once every option is found to fit."""
    # read by its truth beside a certificate, everything="no" was refused as everything=True, and 0 passed
    everything = arguments.flag(everything, names.option("everything"))
    # a sample beside everything did nothing, silently (the command's --sample and --all exclude each other)
    if sample is not None and everything:
        raise BadInput(f"{names('sample')} is not allowed with {names('everything')}: every one is re-checked")
    options = {"names": names, "everything": everything, "sample": sample, "workers": workers, "model": model,
               "corpus": corpus}
    if isinstance(source, dict):
        cert = _certificate_of_dict(source, _limits(limits))
        return _certificate(cert, "certificate", "a certificate dict", "a certificate dict", limits, **options)
    if not isinstance(source, (str, Path)):
        raise BadInput("a certificate is a file path, a campaign folder or a certificate dict, "
                       f"not {json_type(source)}")
    path = files.given_path(source)
    if files.is_folder(path) or path.name == "manifest.json":  # a job folder's (certify.jobs, loaded for one only)
        return _folder(path, limits, progress, **options)
    files.input_file(path, "certificate")  # a missing path is named as such, not as a file the options do not fit
    return _certificate(None, str(path), f"a certificate file ({path})", str(path), limits, **options)


def _certificate(cert: dict | None, name: str, what: str, shown: str, limits, *, names, everything, sample, workers,
                 model, corpus) -> Verification:
    """The certificate `cert` (None: read from the file `name`), `what` it is and how a refusal `shown` it."""
    # a campaign's options did nothing to a certificate, which the user then believed re-derived in full
    arguments.refuse_unused(audit_options.campaign_options(everything, sample, workers, names),
                            f"a campaign folder, not {what}")
    corpus_options.refuse_corpus_options(model, corpus, shown, names)
    limits = _limits(limits)
    cert = certificate.read(name, limits) if cert is None else cert
    confirmation = certificate.confirm(cert, limits, written=False)  # read (a dict: as text) under the limits above
    return Verification(name, str(cert.get("kind", "inequality")), cert.get("verdict"), confirmation.ok,
                        confirmation.message, refused=confirmation.refused, certificate=cert)


def _limits(limits: Callable[[], Limits] | None) -> Limits:
    return given_limits(None) if limits is None else limits()


def _certificate_of_dict(source: dict, limits: Limits) -> dict:
    """A certificate given as a dict, read as the text it stands for under the rules of a certificate file (JSON
    values only, within the limits): NaN, numpy numbers or a dict holding itself are refused in one line, as their
    file would be, before the checker sees them."""
    try:
        text = json.dumps(source, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise BadInput(f"a certificate dict holds JSON values only (no cycle, NaN, inf or other objects): "
                       f"{err}") from None
    # a dict of no certificate's format was checked and rejected (exit 1, "wrong") where its file is refused
    return certificate.of_format(jsonfile.loads(text, "the certificate dict", limits), "a certificate dict")


def _folder(path: Path, limits, progress, *, names, everything, sample, workers, model, corpus) -> Verification:
    """A campaign folder or a corpus run's (or its manifest.json), every option refused before any work."""
    from certify import jobs
    from certify.studies.models import corpus_audit  # the models' code, loaded for a folder only

    manifest = corpus_audit.folder_manifest(path)  # read once: a campaign's audit reads its parameters from it
    run = corpus_audit.is_corpus_run(manifest)
    # limits were never read here (an unknown NAME passed too), silently: a folder keeps its own
    arguments.refuse_unused([names("limits")] if limits is not None else [],
                            corpus_options.LIMITS_APPLY if run else audit_options.LIMITS_APPLY)
    # --sample and --workers each refused on its own, with its value (one message named both whichever was
    # wrong); --workers in `certify sample`'s words, by the pool that takes them
    sample = audit_options.sample_size(sample, names, corpus_options.SAMPLE if run else audit_options.SAMPLE)
    workers = None if workers is None else arguments.integer(workers, names.option("workers"))
    jobs.ProcessPool(workers, arguments.workers_option(names))
    if run:
        model, corpus = _path(model, names.option("model")), _path(corpus, names.option("corpus"))
        corpus_options.refuse_unused_model(model, everything, sample, names)
        with progress("check") as moved:  # kept certificates, then sentences
            report = corpus_audit.audit(path, everything=everything, sample=sample, workers=workers,
                                        progress=moved, model=model, corpus=corpus, names=names)
        # a corpus has a sentence at least: a count of 0 is a folder not read as a run, whose counts are unknown
        counts = [f"{report.sentences} of {report.count} sentences recorded, {report.rederived} decided again, "
                  f"{report.certificates} certificates kept"] if report.count else []
        return _audited(path, KIND, counts, report)
    from certify.search import audit

    if model is not None or corpus is not None:
        _read_as_campaign(path, manifest)
    corpus_options.refuse_corpus_options(model, corpus, str(path), names)
    with progress("config") as moved:
        report = audit.audit(path, everything=everything, sample=sample, workers=workers, progress=moved,
                             manifest=manifest)
    # no record: a folder not read (a stray file, an edited chunk), whose records are unknown, not none
    counts = [f"{report.rederived} of {report.records} configurations re-derived in arb"] if report.records else []
    return _audited(path, CAMPAIGN, counts, report)


def _audited(path: Path, kind: str, counts: list[str], report) -> Verification:
    """The Verification of a folder's audit (a campaign's Audit or a corpus run's CorpusAudit): its counts, how many
    problems it found, and its notes, as one message."""
    found = [] if report.ok else [counted(len(report.problems), "problem")]
    message = "; ".join([*counts, *found, *report.notes])
    return Verification(str(path), kind, None, report.ok, message, problems=tuple(report.problems), report=report)


def _read_as_campaign(folder: Path, manifest) -> None:
    """BadInput saying what is wrong with a folder not read as a corpus run (an unreadable manifest, none), as its
    verify without a model or a corpus says it: their refusal called a corpus run whose manifest is unreadable no
    corpus run's folder.  A campaign edited (its verify rejects it) is still a campaign, where they do nothing."""
    from certify import jobs
    from certify.search import audit

    try:
        audit.load(folder, manifest)
    except jobs.Edited:
        pass


def _path(value, option: str) -> str | None:
    """A path given (a str or a Path) as text, None as None, else BadInput naming the `option`."""
    if value is None or isinstance(value, (str, Path)) and str(value).strip():
        return None if value is None else str(value)
    raise BadInput(f"{option} is a path (a str or a Path), not {json_type(value)}")
