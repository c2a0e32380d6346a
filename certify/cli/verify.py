"""certify verify CERT: the independent checker re-derives a certificate's verdict."""

from __future__ import annotations

from certify.cli import options
from certify.engine import certificate
from certify.errors import BadInput


def add_parser(subparsers):
    p = subparsers.add_parser("verify", help="re-check a certificate with the independent checker",
                              description="Re-evaluate a certificate from its exact inputs with the small trusted "
                              "checker. Exit 0 confirmed, 1 rejected (tampered or wrong), 2 unreadable or beyond "
                              "the limits (refused before any work).")
    p.add_argument("certificate", help="certificate file (JSON)")
    options.add_limits(p)
    p.set_defaults(run=run)


def run(args) -> int:
    limits = options.limits_of(args)
    cert = certificate.read(args.certificate, limits)
    confirmation = certificate.confirm(cert, limits)
    if confirmation.refused:
        raise BadInput(f"{args.certificate}: refused: {confirmation.message}")
    if confirmation.ok:
        undecided = cert.get("verdict") == "undecided"
        print(f"OK: {confirmation.message}" + ("  (an undecided result: nothing is certified)" if undecided else ""))
        return 0
    print(f"REJECTED: {confirmation.message}")
    return 1
