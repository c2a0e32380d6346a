"""certify claims [--json]: the registry, with statements, hypotheses, sources and derivations."""

from __future__ import annotations

import json
from pathlib import Path

from certify import claims

ROOT = Path(__file__).resolve().parents[2]


def add_parser(subparsers):
    p = subparsers.add_parser("claims", help="list the registered claims",
                              description="List every registered claim with its statement, hypotheses, source "
                              "and symbolic derivation in proofs/.")
    p.add_argument("--json", action="store_true", help="print the registry as JSON")
    p.set_defaults(run=run)


def registry() -> list[dict]:
    rows = []
    for claim in claims.all_claims():
        rows.append({
            "id": claim.id,
            "statement": claim.statement,
            "inequalities": [f"{i.lhs} <= {i.rhs}" for i in claim.inequalities],
            "scope": claim.scope,
            "hypotheses": claim.hypotheses,
            "source": claim.source,
            "proof": claim.proof if claim.proof and (ROOT / claim.proof).is_file() else None,
        })
    return rows


def run(args) -> int:
    rows = registry()
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    for row in rows:
        print(f"{row['id']}")
        print(f"  {row['statement']}")
        print(f"  checks:     {'; '.join(row['inequalities'])}" + ("  (through the stack)" if row["scope"] == "stack" else ""))
        print(f"  hypotheses: {row['hypotheses']}")
        print(f"  source:     {row['source']}")
        print(f"  proof:      {row['proof'] or 'none yet'}")
    return 0
