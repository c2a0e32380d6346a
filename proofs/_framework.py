"""A derivation: a claim walked through in named steps, each with how it is established.

Every step has a status saying how it is established:
    "symbolic"   an identity, series coefficient, equilibrium or sign that sympy checks exactly
                 (or an exact integer / IEEE binary64 computation);
    "ball"       a real inequality or constant decided with arb ball arithmetic over a whole
                 domain (certify.prove.bnb), or an enclosure of a constant; the ball functions it
                 decides are checked against the step's sympy formula at sample points
                 (require_encloses);
    "prose"      an argument given in words only (a textbook inequality, an induction, a limit),
                 with no check: it is reported as "argued", never as "holds".
A step may also name, as `formal="file.v:lemma"`, the Coq lemma of proofs/formal/ that states
the same fact (or, as "file.g:file", a Gappa script there); `certify proofs --formal` checks
those files (see certify.prove.formal).
A step's check is a callable that raises AssertionError (via `require`) when the stated fact is
false.  Running a derivation never raises: an assertion or any other exception marks that step
"failed" and the remaining steps still run.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import sympy
from flint import arb

STATUSES = ("symbolic", "ball", "prose")
# How a status is shown to a user: "ball" steps are closed by our own ball-arithmetic branch and bound,
# which the independent checker (certify_checker) does not re-run, so neither they nor any other step
# of a derivation is called certified (`certify proofs` prints "holds, not certified").
SHOWN = {"symbolic": "symbolic", "ball": "ball b&b", "prose": "prose"}


class StepFailed(AssertionError):
    """A stated fact of a derivation does not hold."""


def require(condition: bool, message: str) -> None:
    """Assert one fact; `condition` must be a real bool (never a sympy relational left undecided)."""
    if condition is not True:
        raise StepFailed(message)


def _simplified(expr):
    """simplify, retried with hyperbolic and trigonometric functions written as exponentials."""
    residue = sympy.simplify(expr)
    if residue != 0 and residue.has(sympy.tanh, sympy.cosh, sympy.sinh, sympy.atanh):
        residue = sympy.simplify(residue.rewrite(sympy.exp))
    return residue


def require_zero(expr, message: str) -> None:
    """Assert that a sympy expression (or matrix) simplifies to exactly zero."""
    if isinstance(expr, sympy.MatrixBase):
        bad = [e for e in expr if _simplified(e) != 0]
        require(not bad, f"{message}: nonzero entry {bad[0]}" if bad else message)
        return
    residue = _simplified(expr)
    require(residue == 0, f"{message}: residue {residue}")


def require_expands_to_zero(expr, message: str) -> None:
    """Assert that a polynomial expression (or matrix) expands to exactly zero (fast path)."""
    entries = list(expr) if isinstance(expr, sympy.MatrixBase) else [expr]
    bad = [e for e in (sympy.expand(x) for x in entries) if e != 0]
    require(not bad, f"{message}: nonzero {bad[0]}" if bad else message)


def ball_of(value) -> arb:
    """An arb ball around a real sympy constant (from its 40 digits; the ball's radius covers their rounding)."""
    return arb(str(sympy.N(value, 40)))


def require_encloses(ball_function: Callable[[arb], arb], expr, variable, points, message: str) -> None:
    """Assert that `ball_function`, the arb transcription of the sympy `expr` that a branch and bound decides,
    agrees with it at each rational point: its ball there overlaps the value of `expr`.  The branch and bound
    proves a fact about `ball_function` alone, so only this ties that fact to the step's formula (a wrong sign
    or factor in the transcription, still positive on the box, was proved just as well)."""
    for point in points:
        exact = sympy.Rational(point)
        ball, value = ball_function(arb(exact.p) / exact.q), ball_of(expr.subs(variable, exact))
        require(bool(ball.overlaps(value)), f"{message}: at {point} the ball {ball} misses {value}")


@dataclass
class Step:
    title: str
    status: str
    text: str
    check: Callable[[], None] | None = None
    formal: str | None = None  # "file.v:lemma" in proofs/formal/


@dataclass
class StepResult:
    title: str
    status: str
    outcome: str  # "holds" | "failed" | "argued"
    text: str
    message: str = ""
    seconds: float = 0.0
    formal: str | None = None

    def as_dict(self) -> dict:
        return {"title": self.title, "status": self.status, "outcome": self.outcome,
                "text": self.text, "message": self.message, "seconds": round(self.seconds, 3),
                "formal": self.formal}


@dataclass
class DerivationResult:
    name: str
    claim: str
    statement: str
    source: str
    verdict_note: str
    steps: list[StepResult]

    @property
    def ok(self) -> bool:
        return all(s.outcome != "failed" for s in self.steps)

    def counts(self) -> dict[str, int]:
        return {status: sum(1 for s in self.steps if s.status == status) for status in STATUSES}

    def summary(self) -> str:
        """E.g. "12 steps: 9 symbolic, 2 ball b&b, 1 prose" (plus failures, when any)."""
        counts = self.counts()
        parts = ", ".join(f"{counts[s]} {SHOWN[s]}" for s in STATUSES if counts[s])
        failed = sum(1 for s in self.steps if s.outcome == "failed")
        tail = f"; {failed} FAILED" if failed else ""
        return f"{len(self.steps)} steps: {parts}{tail}"

    def as_dict(self) -> dict:
        return {"name": self.name, "claim": self.claim, "statement": self.statement,
                "source": self.source, "note": self.verdict_note, "ok": self.ok,
                "summary": self.summary(), "steps": [s.as_dict() for s in self.steps]}


@dataclass
class Derivation:
    """A claim and its steps.  Build it, add steps with the decorators, then `run()`."""

    claim: str
    statement: str
    source: str
    note: str = ""  # where the derivation corrects or sharpens the stated claim
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.claim.replace(".", "_")

    def _adder(self, status: str, title: str, text: str, formal: str | None):
        def add(check: Callable[[], None]) -> Callable[[], None]:
            self.steps.append(Step(title, status, text, check, formal))
            return check
        return add

    def symbolic(self, title: str, text: str = "", formal: str | None = None):
        """Decorator: a step whose check is exact (sympy or exact arithmetic)."""
        return self._adder("symbolic", title, text, formal)

    def ball(self, title: str, text: str = "", formal: str | None = None):
        """Decorator: a step whose check is ball arithmetic (arb) over a whole domain."""
        return self._adder("ball", title, text, formal)

    def prose(self, title: str, text: str, formal: str | None = None) -> None:
        """A step argued in words only; it is reported, never checked (here: see `formal`)."""
        self.steps.append(Step(title, "prose", text, None, formal))

    def run(self) -> DerivationResult:
        results = []
        for step in self.steps:
            if step.status not in STATUSES:
                raise ValueError(f"unknown step status {step.status!r}")
            start = time.perf_counter()
            if step.check is None:
                outcome, message = "argued", ""
            else:
                try:
                    step.check()
                    outcome, message = "holds", ""
                except AssertionError as err:
                    outcome, message = "failed", str(err) or "assertion failed"
                except Exception as err:  # a crashing check is a failed step, not a crashed run
                    last = traceback.extract_tb(err.__traceback__)[-1]
                    outcome = "failed"
                    message = f"{type(err).__name__}: {err} (line {last.lineno})"
            results.append(StepResult(step.title, step.status, outcome, step.text, message,
                                      time.perf_counter() - start, step.formal))
        return DerivationResult(self.name, self.claim, self.statement, self.source, self.note,
                                results)
