"""The frame shared by certificates of named results: counterexamples (kinds "wu-fig1",
"ln-equilibria", ...) and the steps of one attention head ("attention-head").

Such a certificate states exact inputs, a witness (boxes, intervals, vectors: exact rationals that
only steer the computation), the claims it makes, a verdict ("certified", "refuted" or "undecided") and
enclosures of the quantities that decide it:

    {"format": "certify-certificate/1", "kind": ..., "verdict": ..., "claims": [...],
     "inputs": {...}, "witness": {...}, "values": {name: "[mid +/- rad]"}, "precision": bits,
     "inputs_sha256": sha256 of {kind, inputs, witness, precision}}

Nothing else may be stated: the certificate's fields and its inputs' keys are exactly these and
keys the kind reads (its INPUT_KEYS; a missing one is malformed), so no field is shown that the checker does not check.
A configuration's name (inputs.config.name), read by no check, states parameters in the kinds that have one
(certify writes residual-far-q1_10): it must be the name the kind rebuilds from the inputs it checks, or absent.

A kind's module supplies evaluate(inputs, witness) -> Evaluation, run at the working precision.
confirm() re-runs it at the stated precision and accepts only when the verdict, the claims (word
for word) and every value agree with what it recomputes: each stated enclosure must contain the
recomputed one (so the true value) and be about as accurate.  What disagrees there (a certified verdict, the
claims, an enclosure) may agree on one evaluation at twice the precision: its checks are as rigorous, its
enclosures as true.  The verdict is "certified" exactly when every check of the evaluation passed, "refuted"
when every check that did not pass is proven false (a kind whose checks can be: the inputs are then certainly not
the counterexample), and "undecided" otherwise.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from flint import arb, ctx

from certify_checker import precision_problem, schema
from certify_checker.exact import agrees, finer
from certify_checker.limits import text_work

FORMAT = "certify-certificate/1"
VERDICTS = ("certified", "refuted", "undecided")
CERT_KEYS = {"format", "kind", "verdict", "claims", "inputs", "witness", "values", "precision", "inputs_sha256"}
FINER = (2,)  # one finer evaluation (exact.finer), priced by each kind's work (retried) or as its ESCALATION
VERDICT, VALUES = 0, 1  # labels of what an evaluation settles beside the stated values (names: strings)


@dataclass
class Evaluation:
    claims: list[str] = field(default_factory=list)
    values: dict[str, arb] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # checks that did not pass
    refuted: list[str] = field(default_factory=list)  # of those, the ones proven false

    @property
    def verdict(self) -> str:
        if not self.failures:
            return "certified"
        # refuted only when nothing else is open: the hypotheses checked beside it passed
        return "refuted" if len(self.refuted) == len(self.failures) else "undecided"

    def require(self, passed: bool, what: str, refuted: bool = False) -> bool:
        """Record a check; passed, and refuted (the check proven false), must come from decided arb comparisons:
        False means not proven."""
        if not passed:
            self.failures.append(what)
            if refuted:
                self.refuted.append(what)
        return passed


def digest(kind: str, inputs: dict, witness: dict, precision) -> str:
    canonical = json.dumps({"kind": kind, "inputs": inputs, "witness": witness, "precision": precision},
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def confirm(cert: dict, kind: str, evaluate, input_keys: set[str], name=None) -> tuple[bool, str]:
    """Re-derive a certificate of this kind; (ok, reason).  What cannot be read raises one of MALFORMED, which
    certify_checker.verify words (naming the field) and refuses.  name: inputs -> the name certify gives
    inputs.config, rebuilt from what the checker checks (None where they give it none), for a kind whose
    configuration certify names by its parameters."""
    ok, message = _confirm(cert, kind, evaluate, input_keys)
    if ok and name is not None and (misnamed := _misnamed(cert["inputs"]["config"], name(cert["inputs"]))):
        return False, misnamed
    return ok, message


def _misnamed(config: dict, rebuilt: str | None) -> str | None:
    """Why the configuration's stated name is not the rebuilt one, or None (the same, or no name stated): a forged
    name (residual-far-q1_1000 on q = 1/10), digest redone, was confirmed beside the parameters it misstates."""
    if "name" in config and config["name"] != rebuilt:
        return f"the configuration's name {config['name']!r:.80} is not the one its checked inputs give ({rebuilt or 'none'})"
    return None


def tag(x) -> str:
    """An exact number as certify writes it in a configuration's name: 1/10 -> 1_10."""
    return str(x).replace("/", "_")


def _confirm(cert: dict, kind: str, evaluate, input_keys: set[str]) -> tuple[bool, str]:
    if cert.get("format") != FORMAT or cert.get("kind") != kind:
        return False, f"not a {kind!r} certificate of format {FORMAT}"
    if set(cert) == CERT_KEYS - {"inputs_sha256"}:  # the fields an earlier version wrote, before the digest
        return False, "written by an earlier version of certify (no digest): not checked; write a current one anew"
    if set(cert) != CERT_KEYS or not isinstance(cert["inputs"], dict) or not set(cert["inputs"]) <= input_keys:
        return False, f"the certificate's fields are not {sorted(CERT_KEYS)} with inputs among {sorted(input_keys)}"
    if not isinstance(cert["witness"], dict):
        return False, "the certificate's witness is not a table"
    if digest(kind, cert["inputs"], cert["witness"], cert["precision"]) != cert["inputs_sha256"]:
        return False, "the inputs, witness or precision do not match the certificate's digest (edited?)"
    precision = cert["precision"]
    if refused := precision_problem(precision):
        return False, refused
    if cert["verdict"] not in VERDICTS:
        return False, f"verdict {cert['verdict']!r} is not one of {VERDICTS}"
    if not isinstance(cert["values"], dict):
        return False, "the certificate's values are not a table"
    with ctx.workprec(precision):
        reasons = _unsettled(cert, evaluate(cert["inputs"], cert["witness"]), [VERDICT, VALUES, *cert["values"]], precision)
    # A proof (of the claims, or against them) is looked for finer, not its absence.
    if VERDICT in reasons and cert["verdict"] == "undecided":
        return False, reasons[VERDICT]

    def still_unsettled(factor: int, labels: set) -> dict:
        with ctx.workprec(factor * precision):
            return _unsettled(cert, evaluate(cert["inputs"], cert["witness"]), labels, precision)

    # A check undecided only by the rounding of the stated precision, or an honest enclosure that misses the checker's
    # own by it (the engine computes with other formulas), is settled by one finer evaluation: each check there is as
    # rigorous, each enclosure as true (exact.finer).
    if unsettled := finer(set(reasons), still_unsettled, FINER):
        return False, next(reason for label, reason in reasons.items() if label in unsettled)  # the first checked
    return True, f"confirmed: {cert['verdict']} at {precision} bits"


def _unsettled(cert: dict, found: Evaluation, labels, precision: int) -> dict:
    """Of the labels (VERDICT: the verdict and claims; VALUES: their names; a stated value's name), those the
    evaluation `found` does not settle, with the reasons; a stated enclosure is judged as accurate as the stated
    precision gives, at whatever precision found was computed."""
    stated, reasons = cert["values"], {}
    if VERDICT in labels and found.verdict != cert["verdict"]:
        why = f" ({found.failures[0]})" if found.failures else ""
        reasons[VERDICT] = f"the checker finds {found.verdict}{why} at {precision} bits, the certificate says {cert['verdict']}"
    elif VERDICT in labels and found.claims != cert["claims"]:
        reasons[VERDICT] = "the stated claims differ from those the inputs and witness support"
    if VALUES in labels and set(stated) != set(found.values):
        reasons[VALUES] = "the certificate states a different set of values"
    for name in (label for label in labels if isinstance(label, str)):
        if not (name in found.values and agrees(found.values[name], stated[name], precision)):
            mine = found.values[name].str(8, radius=True) if name in found.values else "nothing"
            reasons[name] = f"stated {name} = {str(stated[name])[:40]} does not match the recomputed {mine}"
    return reasons


def retried(price, bits: int) -> int:
    """The work of an evaluation that costs price(bits) at the stated precision, and of the finer one (FINER)."""
    return price(bits) + sum(price(factor * bits) for factor in FINER)


def text_price(cert: dict, reads: int) -> int:
    """The work of reading the numbers its inputs and witness state as text (schema.reading), `reads` times an
    evaluation, at the stated precision and the finer one (limits.text_work); 0 when the precision is malformed."""
    bits = cert.get("precision")
    return text_work(schema.reading([cert.get("inputs"), cert.get("witness")]), bits, reads, FINER) if type(bits) is int else 0
