"""Certified named results: the engine's own evaluation at rising precision, then confirmation by the
trusted checker (the registry of names is certify.studies.counterexamples).

A named result (kinds "residual-far", "expansive-v", "wu-fig1", "ln-equilibria") is evaluated by its
study with the engine's formulas (certify.core), never the checker's: its evaluate(inputs, witness)
returns a Found, a list of claims, the enclosures that decide them and the checks that did not pass.
The certificate (certify.engine.certificate.named) is then re-derived from scratch by the checker's
own code for that kind; a precision at which the checker cannot follow is escalated too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from flint import arb

from certify.core.limits import DEFAULT as DEFAULT_LIMITS, Limits
from certify.core.precision import escalate
from certify.core.verdicts import labelled
from certify.engine import certificate
from certify.errors import BadInput

# Precision range (bits) of the ball evaluation; a result still undecided at the top stays so.
START_BITS, MAX_BITS = 64, 512


@dataclass
class Found:
    """What an evaluation found: the claims it makes, the enclosures, the checks not proven and, of those,
    the ones proven false."""

    claims: list[str] = field(default_factory=list)
    values: dict[str, arb] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    refuted: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """certified when every check passed; refuted when every check that did not pass is proven false (the
        others, such as the inputs' hypotheses, passed: these inputs are certainly not the counterexample);
        else undecided."""
        if not self.failures:
            return "certified"
        return "refuted" if len(self.refuted) == len(self.failures) else "undecided"

    def require(self, passed: bool, what: str, refuted: bool = False) -> bool:
        """Record a check; passed, and refuted (the check proven false), must come from decided arb
        comparisons: False means not proven."""
        if not passed:
            self.failures.append(what)
            if refuted:
                self.refuted.append(what)
        return bool(passed)


@dataclass(frozen=True)
class Outcome:
    """A named counterexample's certificate and what the checker said of it."""
    certificate: dict
    confirmed: bool  # the trusted checker re-derived the certificate
    message: str  # the checker's word
    summary: list[str] = field(default_factory=list)  # lines for the terminal, after the verdict's
    refused: bool = False  # past the checker's limits: `certify verify` under them would refuse it unread

    @property
    def verdict(self) -> str:
        """The certificate's verdict (certified, refuted or undecided)."""
        return self.certificate["verdict"]

    @property
    def shown_verdict(self) -> str:
        """The verdict as printed: the certificate's once the checker confirmed it, else "undecided (not
        certified)", as `check` says undecided where the checker does not confirm (the exit code is 3 either
        way): "certified (not certified)" read as a contradiction."""
        return self.verdict if self.confirmed else labelled("undecided", False)

    @property
    def lines(self) -> list[str]:
        """The terminal summary: the verdict as shown, then the summary lines."""
        return [f"verdict: {self.shown_verdict}", *self.summary]


def value_lines(found: Found, names, extra=()) -> list[str]:
    """The terminal summary after the verdict's line (Outcome.lines, labelled by what the checker said): the
    named enclosures present, extra lines, and every check that was not proven (or was proven false)."""
    lines = [f"  {name:24s} {found.values[name].str(12, radius=True)}" for name in names if name in found.values]
    return lines + list(extra) + [f"  {'proven false' if f in found.refuted else 'not proven'}: {f}"
                                  for f in found.failures]


def checker_limits(args) -> Limits:
    """The limits under which the checker confirms a named counterexample: those `certify counterexample
    NAME --limit NAME=VALUE` sets on args.limits, else the defaults (a build called from the API or a study)."""
    return getattr(args, "limits", DEFAULT_LIMITS)


def stage_of(args) -> Callable[[str], None] | None:
    """Where a named counterexample's build reports its stages: the progress display `certify counterexample`
    sets on args.stage, else nowhere (a build called from the API or a study)."""
    return getattr(args, "stage", None)


def certify_named(kind: str, evaluate, inputs: dict, make_witness, summarize, start: int = START_BITS,
                  cap: int = MAX_BITS, limits: Limits = DEFAULT_LIMITS,
                  stage: Callable[[str], None] | None = None, least: dict | None = None) -> Outcome:  # fmt: skip
    """Evaluate at rising precision until certified, or refuted, and confirmed by the checker (under `limits`).

    evaluate(inputs, witness) -> Found (the study's own evaluation); make_witness(precision) ->
    witness dict (untrusted search); summarize(found, witness) -> the lines after the verdict's.
    stage(text), when given, is told as each stage (the witness, the evaluation, the checker) of an attempt begins.
    least: what the checker's estimate reads of the smallest witness the search can make (placeholders: its
    parts' count), {} when the witness adds nothing to it; refused before any work when even that certificate
    passes the checker's limits (_admit).
    """
    _admit(kind, inputs, least or {}, start, limits)
    show = stage or (lambda _: None)

    def attempt(precision: int):
        show(f"the witness at {precision} bits")
        witness = make_witness(precision)
        show(f"its evaluation at {precision} bits")
        found = evaluate(inputs, witness)
        cert = certificate.named(kind, found.claims, found.verdict, inputs, witness, found.values, precision)
        decided = found.verdict != "undecided"  # no finer precision changes a proof, of the claims or against them
        if decided:
            show(f"the checker, at {precision} bits")
        confirmation = certificate.confirm(cert, limits) if decided else None
        return witness, found, cert, confirmation

    def done(result) -> bool:  # confirmed, or refused: past a limit, which more digits only lengthen and price higher
        return bool(result[3] and (result[3].ok or result[3].refused))

    (witness, found, cert, confirmation), _ = escalate(attempt, done, start, cap)
    if confirmation is None:  # undecided at the cap: the checker still reads what was found
        show("the checker")
        confirmation = certificate.confirm(cert, limits)
    return Outcome(cert, confirmation.ok, certificate.said(confirmation, cert, limits), summarize(found, witness),
                   confirmation.refused)


def _admit(kind: str, inputs: dict, least: dict, start: int, limits: Limits) -> None:
    """BadInput when even the least certificate of these inputs (the witness `least`, at `start` bits, the
    lowest precision tried) passes the checker's limits, priced by the checker itself
    (certificate.checker_limit): the run would end "not confirmed" whatever it found, so it is refused before
    it starts, as `check` and `verify` refuse what passes a limit."""
    skeleton = certificate.named(kind, [], "undecided", inputs, least, {}, start)
    if refusal := certificate.checker_limit(skeleton, limits, quote=False):  # the least price is not the run's
        raise BadInput(f"refused before starting: even its least certificate passes {refusal}")
