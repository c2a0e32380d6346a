"""`certify proofs`: run the derivations in proofs/ and print every step with its status.

    certify proofs [NAME ...] [--json]

NAME is a claim id (collapse.cubic) or a module name (collapse_cubic); without one, every
derivation runs.  Exit 0 when every checked step holds, 1 when one fails, 2 for an unknown NAME.
"""

from __future__ import annotations

import json

from certify.prove import derivations as proofs_index

_MARK = {"holds": "holds ", "failed": "FAILED", "argued": "argued"}


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("proofs", help="run the symbolic and certified derivations of the claims")
    p.add_argument("names", nargs="*", metavar="NAME", help="claim id or module name (default: all)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(run=run)


def run(args) -> int:
    chosen = args.names or proofs_index.names()
    derivations = [proofs_index.build(name) for name in chosen]  # BadInput before anything runs
    results = [d.run() for d in derivations]
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    else:
        for result in results:
            _render(result)
        failed = [r.claim for r in results if not r.ok]
        print(f"{len(results) - len(failed)} of {len(results)} derivations hold"
              + (f"; failed: {', '.join(failed)}" if failed else ""))
    return 0 if all(r.ok for r in results) else 1


def _render(result) -> None:
    verdict = "ok" if result.ok else "FAILED"
    print(f"{result.claim}  (proofs/{result.name}.py)  {verdict}: {result.summary()}")
    print(f"  claim: {result.statement}")
    print(f"  source: {result.source}")
    if result.verdict_note:
        print(f"  note: {result.verdict_note}")
    for step in result.steps:
        print(f"  [{_MARK[step.outcome]}] {step.status:<9} {step.title}")
        if step.message:
            print(f"           {step.message}")
    print()
