"""certify verify CERT: the independent checker re-derives a certificate's verdict."""

from __future__ import annotations

from certify.engine import certificate
import certify_checker as checker


def add_parser(subparsers):
    p = subparsers.add_parser("verify", help="re-check a certificate with the independent checker",
                              description="Re-evaluate a certificate from its exact inputs with the small trusted "
                              "checker. Exit 0 confirmed, 1 rejected (tampered or wrong), 2 unreadable.")
    p.add_argument("certificate", help="certificate file (JSON)")
    p.set_defaults(run=run)


def run(args) -> int:
    cert = certificate.read(args.certificate)
    confirmation = checker.verify(cert)
    if confirmation.ok:
        undecided = cert.get("verdict") == "undecided"
        partial = ("  (undecided: only the stated fraction of the region's reduced domain is proved)"
                   if cert.get("kind") == "region-proof" else "  (an undecided result: nothing is certified)")
        print(f"OK: {confirmation.message}" + (partial if undecided else ""))
        return 0
    print(f"REJECTED: {confirmation.message}")
    return 1
