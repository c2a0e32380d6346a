"""`certify run` rows for the named counterexamples (certify.studies.counterexamples)."""

from __future__ import annotations

from certify.engine import certificate
from certify.studies import counterexamples
from certify.suite import Row, checked


def suite_rows(section: str, folder, out_dir, entries):
    """`certify run` rows for named counterexamples, entries (claim id, name, argparse arguments):
    a certified, checker-confirmed counterexample is the outcome its claim predicts ("holds")."""
    for claim, name, args in entries:
        outcome = counterexamples.load(name).build(args)
        path = certificate.write(outcome.certificate, folder / f"{name}.json")
        settings = ", ".join(f"{k} = {v}" for k, v in vars(args).items() if v is not None and not isinstance(v, bool))
        certified = outcome.confirmed and outcome.verdict == "certified"
        verdict, detail = checked(outcome.verdict, outcome.confirmed, outcome.message)
        yield Row(section=section, case=f"{claim}: {name} ({settings})", verdict="holds" if certified else verdict,
                  detail=detail or outcome.message, ok=certified, certificate=str(path.relative_to(out_dir)), expected="holds")
