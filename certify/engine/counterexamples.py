"""Certified named counterexamples: evaluation at rising precision, then confirmation by the
trusted checker (the registry of names is certify.studies.counterexamples)."""

from __future__ import annotations

from dataclasses import dataclass, field

from certify.core.precision import escalate

from certify_checker import counterexample

# Precision range (bits) of the ball evaluation; a counterexample still undecided at the top stays so.
START_BITS, MAX_BITS = 64, 512


@dataclass(frozen=True)
class Outcome:
    certificate: dict
    confirmed: bool  # the trusted checker re-derived the certificate
    message: str  # the checker's word
    summary: list[str] = field(default_factory=list)  # lines for the terminal

    @property
    def verdict(self) -> str:
        return self.certificate["verdict"]


def value_lines(found, names, extra=()) -> list[str]:
    """The terminal summary: the verdict, the named enclosures present, extra lines, and every
    check that was not proven."""
    lines = [f"verdict: {found.verdict}"]
    lines += [f"  {name:24s} {found.values[name].str(12, radius=True)}" for name in names if name in found.values]
    return lines + list(extra) + [f"  not proven: {f}" for f in found.failures]


def certify_by_checker(kind: str, checker, inputs: dict, make_witness, summarize,
                       start: int = START_BITS, cap: int = MAX_BITS) -> Outcome:
    """Evaluate with checker.evaluate at rising precision until certified, then confirm.

    make_witness(precision) -> witness dict (untrusted search); summarize(found, witness) -> lines.
    The evaluation is the checker's own, so engine and checker cannot drift apart; the
    certificate is then re-read from scratch by checker.verify, as `certify verify` would.
    """
    def attempt(precision: int):
        witness = make_witness(precision)
        return witness, checker.evaluate(inputs, witness)

    (witness, found), precision = escalate(attempt, lambda result: result[1].verdict == "certified", start, cap)
    cert = counterexample.certificate(kind, inputs, witness, found, precision)
    confirmed, message = checker.verify(cert)
    return Outcome(cert, confirmed, message, summarize(found, witness))
