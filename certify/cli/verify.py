"""certify verify CERT | CAMPAIGN [--all] [--sample K] [--workers W] [--json]: the independent checker
re-derives a certificate's verdict; a campaign folder is re-derived in arb (certify.search.audit)."""

from __future__ import annotations

from pathlib import Path

from certify.core import files, jsonfile
from certify.cli import options
from certify.core import progress
from certify.core.verdicts import labelled
from certify.engine import certificate
from certify.search.audit_options import LIMITS_APPLY, campaign_options, sample_size
from certify.errors import BadInput, counted


def add_parser(subparsers):
    """Register `certify verify` and its options."""
    p = subparsers.add_parser("verify", help="re-check a certificate, or re-derive a campaign",
                              description="Re-evaluate a certificate from its exact inputs with the small trusted "
                              "checker. Given a campaign folder (or its manifest.json), compute every configuration's float64 "
                              "figures (and a tier-3 hold's bounds) again, decide again in arb every violated, "
                              "undecided or certified configuration, those tier 3 does not vouch for here or bounds otherwise, the holds "
                              "float64 finds violated and a "
                              "random sample of the others (--all: every one), on every core, and check the stored "
                              "certificates. "
                              "Exit 0 confirmed, 1 rejected (tampered or wrong), 2 unreadable or beyond the limits "
                              "(refused before any work).")
    p.add_argument("certificate", metavar="CERT", help="certificate file (JSON), or a campaign folder")
    rederive = p.add_mutually_exclusive_group()  # --sample K beside --all did nothing, silently
    rederive.add_argument("--all", dest="everything", action="store_true",
                          help="campaign: re-derive every configuration (default: a random sample of the holds)")
    rederive.add_argument("--sample", type=options.integer, default=None, metavar="K",
                          help="campaign: holds re-derived at random beyond the violated, undecided and certified "
                          "ones (default 64)")
    p.add_argument("--workers", type=options.integer, default=None, help="campaign: processes (default: every core)")
    options.add_limits(p)
    p.add_argument("--json", action="store_true", help="print the outcome as JSON (ok, kind, message; for a "
                   "campaign the records, the re-derived count, the problems and notes)")
    p.set_defaults(run=run)


def run(args) -> int:
    """Run `certify verify`; return its exit code."""
    path = Path(args.certificate)
    if path.is_dir() or path.name == "manifest.json":
        return _campaign(args)
    files.input_file(path, "certificate")  # a missing path is named as such, not as a file the options do not fit
    # a campaign's options did nothing to a certificate, which the user then believed re-derived in full
    options.refuse_unused(campaign_options(args.everything, args.sample, args.workers),
                          f"a campaign folder, not a certificate file ({args.certificate})")
    limits = options.limits_of(args)
    cert = certificate.read(args.certificate, limits)
    confirmation = certificate.confirm(cert, limits, written=False)  # the reader measured the file's own text
    if confirmation.refused:
        raise BadInput(f"{args.certificate}: refused: {confirmation.message}")
    undecided = confirmation.ok and cert.get("verdict") == "undecided"
    partial = ("only the stated fraction of the region's reduced domain is proved" if cert.get("kind") == "region-proof"
               else "an undecided result: nothing is certified")
    stated = cert.get("verdict")  # what the certificate says: "(not certified)" when the checker rejects it
    target = _target(cert) if confirmation.ok else None
    if args.json:
        jsonfile.echo({"ok": confirmation.ok, "certificate": args.certificate, "kind": cert.get("kind"),
                       "verdict": labelled(stated, confirmation.ok) if isinstance(stated, str) else stated,
                       "target": target,
                       "message": confirmation.message,
                       "note": partial if undecided else None})
    elif confirmation.ok:
        print(f"OK: {confirmation.message}" + (f" ({target})" if target else "")
              + (f"  (undecided: {partial})" if undecided else ""))
    else:
        print(f"REJECTED: {confirmation.message}")
    return 0 if confirmation.ok else 1


TARGET_SHOWN = 200  # characters of a bound named on the OK line


def _target(cert: dict) -> str | None:
    """What a confirmed certificate is about, "bound: EXPR" or "claim ID", where it states one: a certificate
    put in place of another (an attack folder's, for another bound) was confirmed in the same words."""
    bound, claim = cert.get("bound"), cert.get("claim")
    text = f"bound: {bound}" if isinstance(bound, str) else f"claim {claim}" if isinstance(claim, str) else None
    if text is None or not text.isprintable():
        return None
    return text if len(text) <= TARGET_SHOWN else text[:TARGET_SHOWN - 3] + "..."


def _campaign(args) -> int:
    from certify import jobs
    from certify.search import audit

    # --limit was never read here (an unknown NAME passed too), silently: a campaign keeps its manifest's limits
    options.refuse_unused(["--limit"] if args.limit else [], LIMITS_APPLY)
    # --sample and --workers each refused on its own, with its value, before the bar (one message named both
    # whichever was wrong); --workers in `certify sample`'s words, by the pool that takes them
    sample = sample_size(args.sample)
    jobs.ProcessPool(args.workers)
    with progress.bar(desc="certify verify", unit="config") as bar:
        def rederived(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        report = audit.audit(args.certificate, everything=args.everything, sample=sample, workers=args.workers,
                             progress=rederived)
    if args.json:
        jsonfile.echo({"ok": report.ok, "campaign": args.certificate, "records": report.records,
                       "rederived": report.rederived, "problems": report.problems, "notes": report.notes})
        return 0 if report.ok else 1
    if report.ok:
        print(f"OK: campaign {args.certificate}: {report.rederived} of {report.records} configurations re-derived "
              "in arb, every one as recorded; the certificates confirmed by the checker")
        for note in report.notes:
            print(f"  note: {note}")
        return 0
    print(f"REJECTED: campaign {args.certificate}: {counted(len(report.problems), 'problem')} in "
          f"{report.rederived} re-derived of {report.records}")
    for problem in report.problems[:audit.LISTED]:
        print(f"  {problem}")
    return 1
