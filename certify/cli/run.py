"""certify run: the main job, every registered section on its default cases, as a verdict table."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict
from pathlib import Path

from certify.core import jsonfile
from certify import suite
from certify.report import suite_page
from certify.errors import BadInput


def add_parser(subparsers):
    p = subparsers.add_parser("run", help="the main job: every registered claim on its default cases",
                              description="Run every section of the default suite (claims, proofs, campaigns, "
                              "figures, ...), print a table of verdicts and write certificates and a results.json "
                              "into the report folder. Exit 0 when every outcome is the one the mathematics predicts.")
    p.add_argument("--out", default="certify-report", metavar="DIR", help="report folder (default certify-report)")
    p.add_argument("--long", action="store_true", help="the full-size studies instead of the quick ones")
    p.add_argument("--only", action="append", metavar="SECTION",
                   help="run only the section with this title (repeatable), e.g. claims, proofs, model")
    p.set_defaults(run=run)


def _print_row(row: suite.Row, widths=(46, 10)) -> None:
    mark = "" if row.ok else "   <-- unexpected"
    print(f"  {row.case:<{widths[0]}} {row.verdict:<{widths[1]}} {row.detail}{mark}", flush=True)


def run(args) -> int:
    sections = suite.load_sections(args.only)
    if not sections:
        known = ", ".join(module.TITLE for module in suite.load_sections())
        raise BadInput(f"no section matches {args.only}; sections: {known}")
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    state = suite.SuiteRun(out_dir=out_dir, long=args.long)
    started = time.time()
    for module in sections:
        print(f"\n== {module.TITLE} ==", flush=True)
        section_start = time.time()
        for row in module.section(state):
            state.rows.append(row)
            _print_row(row)
        print(f"  ({time.time() - section_start:.1f} s)", flush=True)
    unexpected = [row for row in state.rows if not row.ok]
    counts: dict[str, int] = {}
    for row in state.rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    summary = {"rows": [asdict(row) for row in state.rows], "counts": counts, "unexpected": len(unexpected),
               "seconds": round(time.time() - started, 1), "long": args.long}
    jsonfile.write(summary, out_dir / "results.json")
    page = suite_page.write(summary, out_dir, args.argv)
    print(f"\n{len(state.rows)} results: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
          + f"; {len(unexpected)} unexpected; report in {out_dir}/ ({summary['seconds']} s)")
    print(f"report page: {page}")
    if unexpected:
        print("unexpected outcomes:", file=sys.stderr)
        for row in unexpected:
            print(f"  {row.section}: {row.case}: {row.verdict} {row.detail}", file=sys.stderr)
    return 1 if unexpected else 0
