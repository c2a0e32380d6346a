"""`certify run`'s section for the adversarial search: attack the collapse bound, and a planted false one.

Expected outcomes: no violation of collapse.global is found (it is a theorem), with the tightest
exponent c = -ln(1 - D'/D)/(a D^2) close to that of two antipodal tokens; the planted bound
D' <= (1 - exp(-0.49 a D^2)) D, false only where a D^2 > 69 (where float64 sees D' = D), is found
violated, shrunk and certified.
"""

from __future__ import annotations


from certify import engine
from certify.engine import certificate
from certify.core import jsonfile
from certify.search import attack
from certify.suite import Row, SuiteRun

TITLE = "attack"
COST = 2
FOLDER = "attack"

# (claim, bound, n, d, evaluations, violated as expected); budgets x LONG_FACTOR with --long
DEFAULT_ATTACKS = [
    ("collapse.global", None, 2, 1, 600, False),
    ("collapse.global", None, 3, 2, 2400, False),
    (None, "(1-exp(-a*D**2*0.49))*D", 2, 1, 600, True),
]
LONG_FACTOR = 10


def section(run: SuiteRun):
    """The rows of the "attack" section of `certify run`: the adversarial search on collapse.global (no
    violation expected, the tightest exponent reported) and on a planted false bound (found violated,
    shrunk and certified)."""
    folder = run.folder(FOLDER)
    for claim, bound, n, d, evaluations, expected in DEFAULT_ATTACKS:
        budget = evaluations * (LONG_FACTOR if run.long else 1)
        report = attack.attack(claim, bound, n=n, d=d, seed=0, budget=budget)
        stem = f"{claim or 'bound'}-n{n}-d{d}".replace(".", "_")
        jsonfile.write(report.to_json(), folder / f"{stem}-summary.json")
        path = None
        if report.counterexample is not None:
            written = certificate.write(report.counterexample.result.certificate, folder / f"{stem}-certificate.json")
            path = str(written.relative_to(run.out_dir))
        tight = report.best_exponent
        detail = f"{report.evaluations} evaluations"
        if tight is not None:
            detail += (f"; tightest exponent c = {tight.exponent:.5f} at L = {tight.L:.4g}"
                       f" (two antipodal tokens: {attack.antipodal_exponent(tight.L):.5f})")
        if report.counterexample is not None:
            detail += f"; shrunk to {report.counterexample.case.n} tokens, margin {report.counterexample.result.margin_text}"
        yield Row(section=TITLE, case=f"attack {claim or 'bound ' + bound} (n = {n}, d = {d})",
                  verdict=engine.VIOLATED if report.violated else "not found", detail=detail,
                  ok=report.violated == expected, certificate=path,
                  expected=engine.VIOLATED if expected else "not found")
