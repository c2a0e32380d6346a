"""Suite section: every derivation in proofs/, one row each (ok when every checked step holds)."""

from __future__ import annotations

from typing import Iterable

from certify.prove import derivations as proofs_index
from certify.suite import Row, SuiteRun

TITLE = "proofs"


def section(run: SuiteRun) -> Iterable[Row]:
    for name in proofs_index.names():
        result = proofs_index.run_derivation(name)
        yield Row(section=TITLE, case=result.claim, verdict="ok" if result.ok else "failed",
                  detail=result.summary(), ok=result.ok, expected="ok")
