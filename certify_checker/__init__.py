"""The trusted checker behind `certify verify`: small, separate, independent.

It imports only the Python standard library and python-flint, and shares no code with the
rest of certify (a test enforces this): it re-evaluates a certificate from its exact inputs in
its own plain code.  A bug in the clever parts (screening, search, the engine) can make
certification fail; it must never make this accept.

A certificate names its kind; each kind has a module here with verify(cert) -> (ok, message).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass

FORMAT = "certify-certificate/1"
# What untrusted input can raise while it is read; each means "malformed", never a crash.  Beyond
# the usual: a hex float past binary64 (OverflowError), a bound that is not Python syntax or nests
# too deep (SyntaxError, RecursionError, MemoryError from the parser).
MALFORMED = (KeyError, TypeError, ValueError, IndexError, ArithmeticError, AttributeError, SyntaxError,
             RecursionError, MemoryError)
KINDS = {
    "inequality": "certify_checker.inequality",
    "wu-fig1": "certify_checker.wu_fig1",
    "ln-equilibria": "certify_checker.ln_equilibria",
    "residual-far": "certify_checker.residual_far",
    "expansive-v": "certify_checker.expansive_v",
    "region-proof": "certify_checker.region_proof",
}


@dataclass(frozen=True)
class Confirmation:
    ok: bool
    message: str


def verify(cert) -> Confirmation:
    """Re-derive the certificate's verdict; ok only if everything it states is confirmed."""
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        return Confirmation(False, f"not a certificate of format {FORMAT}")
    kind = cert.get("kind")
    if kind not in KINDS:
        return Confirmation(False, f"unknown certificate kind {kind!r}")
    try:
        ok, message = importlib.import_module(KINDS[kind]).verify(cert)
    except MALFORMED as err:
        return Confirmation(False, f"malformed certificate: {type(err).__name__}: {err}")
    return Confirmation(ok, message)


def verify_text(text: str) -> Confirmation:
    try:
        cert = json.loads(text)
    except (ValueError, RecursionError) as err:
        return Confirmation(False, f"not JSON: {err}")
    return verify(cert)
