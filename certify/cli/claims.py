"""certify claims [--json]: the registry, with statements, hypotheses, sources and derivations; the claims
and their conventions are stated in docs/claims.md."""

from __future__ import annotations

from certify.core import jsonfile
from certify import claims
from certify.prove import derivations as proofs_index


def add_parser(subparsers):
    """Register `certify claims` and its options."""
    p = subparsers.add_parser("claims", help="list the registered claims",
                              description="List every registered claim with its statement, hypotheses, source "
                              f"and symbolic derivation in proofs/. The claims and their conventions: {CLAIMS_PAGE}.")
    p.add_argument("--json", action="store_true", help="print the registry as JSON")
    p.set_defaults(run=run)


CLAIMS_PAGE = "docs/claims.md"  # the claims with their conventions, in the repository


def registry() -> list[dict]:
    """Every registered claim as JSON: id, statement, inequalities checked, scope, hypotheses, source, proof."""
    rows = []
    for claim in claims.all_claims():
        rows.append({
            "id": claim.id,
            "statement": claim.statement,
            "inequalities": [f"{i.lhs} <= {i.rhs}" for i in claim.inequalities],
            "scope": claim.scope,
            "hypotheses": claim.hypotheses,
            "source": claim.source,
            "proof": proofs_index.derivation_path(claim.id),
        })
    return rows


def run(args) -> int:
    """Run `certify claims`; return its exit code."""
    rows = registry()
    if args.json:
        jsonfile.echo(rows)
        return 0
    for row in rows:
        print(f"{row['id']}")
        print(f"  {row['statement']}")
        stack = "  (composed through the stack, after every layer)" if row["scope"] == "stack" else ""
        print(f"  checks:     {'; '.join(row['inequalities'])}{stack}")
        print(f"  hypotheses: {row['hypotheses']}")
        print(f"  source:     {row['source']}")
        print(f"  proof:      {row['proof'] or 'none yet'}")
    print(f"\nThe claims and their conventions: {CLAIMS_PAGE}")
    return 0
