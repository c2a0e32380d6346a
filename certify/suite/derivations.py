"""Suite section: every derivation in proofs/, one row each (ok when every checked step holds; checked by
sympy and our own branch and bound, not by the independent checker, so the row says "not certified")."""

from __future__ import annotations

from typing import Iterable

from certify.prove import derivations as proofs_index
from certify.suite import Row, SuiteRun

TITLE = "proofs"
COST = 25  # seconds on one process (-j 1 gives its derivations a pool of every core)


def section(run: SuiteRun) -> Iterable[Row]:
    """The rows of the "proofs" section of `certify run`: one row per derivation in proofs/, ok when every
    checked step holds (sympy and branch and bound, not the independent checker)."""
    for result in proofs_index.run_all(proofs_index.names(), workers=run.workers):
        yield Row(section=TITLE, case=result.claim, verdict="ok" if result.ok else "failed",
                  detail=f"{result.summary()} (not certified)", ok=result.ok, expected="ok")
