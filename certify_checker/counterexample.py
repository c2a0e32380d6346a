"""The frame shared by certificates of named results: counterexamples (kinds "wu-fig1",
"ln-equilibria", ...) and the steps of one attention head ("attention-head").

Such a certificate states exact inputs, a witness (boxes, intervals, vectors: exact rationals that
only steer the computation), the claims it makes, a verdict ("certified" or "undecided") and
enclosures of the quantities that decide it:

    {"format": "certify-certificate/1", "kind": ..., "verdict": ..., "claims": [...],
     "inputs": {...}, "witness": {...}, "values": {name: "[mid +/- rad]"}, "precision": bits}

A kind's module supplies evaluate(inputs, witness) -> Evaluation, run at the working precision.
confirm() re-runs it at the stated precision and accepts only when the verdict, the claims (word
for word) and every value agree with what it recomputes.  The verdict is "certified" exactly when
every check of the evaluation passed; a check that cannot be decided leaves it "undecided".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flint import arb, ctx

from certify_checker import MALFORMED, precision_problem
from certify_checker.exact import agrees

FORMAT = "certify-certificate/1"
VERDICTS = ("certified", "undecided")


@dataclass
class Evaluation:
    claims: list[str] = field(default_factory=list)
    values: dict[str, arb] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # checks that did not pass

    @property
    def verdict(self) -> str:
        return "undecided" if self.failures else "certified"

    def require(self, passed: bool, what: str) -> bool:
        """Record a check; passed must come from a decided arb comparison (False = not proven)."""
        if not passed:
            self.failures.append(what)
        return passed


def confirm(cert: dict, kind: str, evaluate) -> tuple[bool, str]:
    """Re-derive a certificate of this kind; (ok, reason).  Malformed is rejected."""
    try:
        return _confirm(cert, kind, evaluate)
    except MALFORMED as err:
        return False, f"malformed certificate: {type(err).__name__}: {err}"


def _confirm(cert: dict, kind: str, evaluate) -> tuple[bool, str]:
    if cert.get("format") != FORMAT or cert.get("kind") != kind:
        return False, f"not a {kind!r} certificate of format {FORMAT}"
    precision = cert["precision"]
    if refused := precision_problem(precision):
        return False, refused
    if cert["verdict"] not in VERDICTS:
        return False, f"verdict {cert['verdict']!r} is not one of {VERDICTS}"
    with ctx.workprec(precision):
        found = evaluate(cert["inputs"], cert["witness"])
        if found.verdict != cert["verdict"]:
            reason = f" ({found.failures[0]})" if found.failures else ""
            return False, f"the checker finds {found.verdict}{reason} at {precision} bits, the certificate says {cert['verdict']}"
        if found.claims != cert["claims"]:
            return False, "the stated claims differ from those the inputs and witness support"
        stated = cert["values"]
        if set(stated) != set(found.values):
            return False, "the certificate states a different set of values"
        for name, mine in found.values.items():
            if not agrees(mine, stated[name], precision):
                return False, f"stated {name} = {stated[name][:40]} does not match the recomputed {mine.str(8, radius=True)}"
    return True, f"confirmed: {found.verdict} at {precision} bits"
