"""certify verify CERT | CAMPAIGN | CORPUS_RUN [--all] [--sample K] [--workers W] [--model PATH] [--corpus FILE]
[--json]: the independent checker re-derives a certificate's verdict; a campaign folder is re-derived in arb
(certify.search.audit), a `certify model --corpus` folder re-checked (certify.studies.models.corpus_audit), by its
manifest's format: certify.verify's dispatch and refusals (certify.api.verification), named in the command's
options, with a progress bar; the outcome printed here."""

from __future__ import annotations

from contextlib import contextmanager

from certify import api
from certify.core import jsonfile
from certify.cli import options
from certify.core import progress
from certify.core.verdicts import labelled
from certify.search.audit_options import SAMPLE
from certify.studies import corpus_options
from certify.errors import BadInput, counted


def add_parser(subparsers):
    """Register `certify verify` and its options."""
    p = subparsers.add_parser("verify", help="re-check a certificate, or re-derive a campaign or corpus run",
                              description="Re-evaluate a certificate from its exact inputs with the small trusted "
                              "checker. Given a campaign folder (or its manifest.json), compute every configuration's float64 "
                              "figures (and a tier-3 hold's bounds) again, decide again in arb every violated, "
                              "undecided or certified configuration, those tier 3 does not vouch for here or bounds otherwise, the holds "
                              "float64 finds violated or cannot tell from a tie, and a "
                              "random sample of the others (--all: every one), on every core, and check the stored "
                              "certificates. Given the folder of a `certify model --corpus` run, check its integrity "
                              "(chunks, digests, no stray file; hidden ones such as .DS_Store are passed over), that every kept certificate states its record's steps "
                              "and is confirmed by the checker, decide again every recorded sentence with an undecided "
                              "step and a random sample of them all (--all: every one) with the run's model and "
                              "code, each as recorded (its enclosures to a relative 1e-9, another machine's "
                              "rounding), and "
                              "check that the summary says what the records say; a run of fewer sentences than its "
                              "corpus is confirmed for those it records. "
                              "Exit 0 confirmed, 1 rejected (tampered, wrong, an unfinished campaign, or a corpus "
                              "run that records no sentence), 2 unreadable, beyond the limits, or a corpus run's "
                              "model missing or changed, or --model or --corpus not the run's (refused before "
                              "any work).")
    p.add_argument("certificate", metavar="CERT",
                   help="certificate file (JSON), or a campaign or `certify model --corpus` folder")
    rederive = p.add_mutually_exclusive_group()  # --sample K beside --all did nothing, silently
    rederive.add_argument("--all", dest="everything", action="store_true",
                          help="campaign: re-derive every configuration (default: a random sample of the holds); "
                          "corpus run: decide every recorded sentence again (default: a random sample)")
    rederive.add_argument("--sample", type=options.integer, default=None, metavar="K",
                          help=f"campaign: holds re-derived at random beyond the violated, undecided and certified "
                          f"ones (default {SAMPLE}); corpus run: recorded sentences decided again at random beside those with an undecided "
                          f"step (default {corpus_options.SAMPLE}; 0: none, and the model is not needed)")
    p.add_argument("--workers", type=options.integer, default=None,
                   help="campaign or corpus run: processes (default: every core)")
    p.add_argument("--model", type=options.path, metavar="PATH",
                   help="corpus run: the run's model as found here (a folder, or 'minilm'), in place of the "
                   "manifest's, which names it as the run did (a relative path there is from the directory the run "
                   "was started in); its weights, config and tokenizer must be the run's (the manifest's "
                   "model_sha256, model_config); not with --sample 0")
    p.add_argument("--corpus", type=options.path, metavar="FILE",
                   help="corpus run: the run's corpus file as found here, in place of the manifest's; its sentences "
                   "must be the run's (the manifest's corpus_sha256), against which the texts of a run that records "
                   "fewer sentences than its corpus are checked")
    options.add_limits(p)
    p.add_argument("--json", action="store_true", help="print the outcome as JSON (for a certificate ok, kind, "
                   "message; for a campaign the records, the re-derived count, the problems and notes; for a corpus run the "
                   "sentences recorded and decided again, the certificates kept, the problems and notes)")
    p.set_defaults(run=run)


# the options as the command writes them, named so in its refusals (certify.api.verification)
OPTIONS = api.OPTIONS


def run(args) -> int:
    """Run `certify verify`; return its exit code."""
    result = api.verification(args.certificate, OPTIONS, _progress,
                              limits=(lambda: options.limits_of(args)) if args.limit else None,
                              everything=args.everything, sample=args.sample, workers=args.workers, model=args.model,
                              corpus=args.corpus)
    if result.certificate is not None:
        return _certificate(args, result)
    return _corpus(args, result.report) if result.kind == api.KIND else _campaign(args, result.report)


def _certificate(args, result: api.Verification) -> int:
    """The outcome of a certificate's check, the certificate read (nothing was checked when refused)."""
    if result.refused:
        raise BadInput(f"{args.certificate}: refused: {result.message}")
    cert = result.certificate
    undecided = result.ok and cert.get("verdict") == "undecided"
    partial = ("only the stated fraction of the region's reduced domain is proved" if cert.get("kind") == "region-proof"
               else "an undecided result: nothing is certified")
    stated = cert.get("verdict")  # what the certificate says: "(not certified)" when the checker rejects it
    target = _target(cert) if result.ok else None
    if args.json:
        jsonfile.echo({"ok": result.ok, "certificate": args.certificate, "kind": cert.get("kind"),
                       "verdict": labelled(stated, result.ok) if isinstance(stated, str) else stated,
                       "target": target,
                       "message": result.message,
                       "note": partial if undecided else None})
    elif result.ok:
        print(f"OK: {result.message}" + (f" ({target})" if target else "")
              + (f"  (undecided: {partial})" if undecided else ""))
    else:
        print(f"REJECTED: {result.message}")
    return 0 if result.ok else 1


TARGET_SHOWN = 200  # characters of a bound named on the OK line


def _target(cert: dict) -> str | None:
    """What a confirmed certificate is about, "bound: EXPR" or "claim ID", where it states one: a certificate
    put in place of another (an attack folder's, for another bound) was confirmed in the same words."""
    bound, claim = cert.get("bound"), cert.get("claim")
    text = f"bound: {bound}" if isinstance(bound, str) else f"claim {claim}" if isinstance(claim, str) else None
    if text is None or not text.isprintable():
        return None
    return text if len(text) <= TARGET_SHOWN else text[:TARGET_SHOWN - 3] + "..."


def _campaign(args, report) -> int:
    """The outcome of a campaign folder's audit (certify.search.audit.Audit)."""
    if args.json:
        jsonfile.echo({"ok": report.ok, "campaign": args.certificate, "records": report.records,
                       "rederived": report.rederived, "problems": report.problems, "notes": report.notes})
        return 0 if report.ok else 1
    if report.ok:
        # the others are holds (every other verdict is re-derived), not drawn: "K of N" alone read as the whole
        # campaign re-derived
        rest = report.records - report.rederived
        unsampled = f" (the other {rest} holds were not; --all re-derives every one)" if rest else ""
        print(f"OK: campaign {args.certificate}: {report.rederived} of {report.records} configurations re-derived "
              f"in arb, every one as recorded{unsampled}; the certificates confirmed by the checker")
        _notes(report.notes)
        return 0
    # no record: a folder not read (a stray file, an edited chunk), whose records are unknown, not none
    counts = f" in {report.rederived} re-derived of {report.records}" if report.records else ""
    _rejected(f"campaign {args.certificate}: {counted(len(report.problems), 'problem')}{counts}", report.problems)
    return 1


def _corpus(args, report) -> int:
    """The outcome of a `certify model --corpus` folder's audit (certify.studies.models.corpus_audit.CorpusAudit)."""
    if args.json:
        jsonfile.echo({"ok": report.ok, "corpus_run": args.certificate, "sentences": report.sentences,
                       "corpus_sentences": report.count, "rederived": report.rederived,
                       "certificates": report.certificates, "problems": report.problems, "notes": report.notes})
        return 0 if report.ok else 1
    if report.ok:
        print(f"OK: corpus run {args.certificate}: {report.sentences} of {report.count} sentences, "
              f"{report.rederived} of them decided again as recorded; {report.certificates} certificates kept, each "
              "confirmed by the checker and stating its record; the summary as the records say")
        _notes(report.notes)
        return 0
    # a corpus has a sentence at least: a count of 0 is a folder not read as a run, whose counts are unknown
    counts = (f" ({report.sentences} of {report.count} sentences recorded, {report.rederived} decided again, "
              f"{report.certificates} certificates kept)" if report.count else "")
    _rejected(f"corpus run {args.certificate}: {counted(len(report.problems), 'problem')}{counts}", report.problems)
    return 1


@contextmanager
def _progress(unit: str):
    """A progress bar on stderr, and the progress(done, total) that moves it."""
    with progress.bar(desc="certify verify", unit=unit) as bar:
        def moved(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        yield moved


def _notes(notes: list[str]) -> None:
    for note in notes:
        print(f"  note: {note}")


def _rejected(heading: str, problems: list[str]) -> None:
    from certify.search.audit import LISTED

    print(f"REJECTED: {heading}")
    for problem in problems[:LISTED]:
        print(f"  {problem}")
