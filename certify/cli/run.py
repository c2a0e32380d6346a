"""certify run: the main job, every registered section on its default cases, as a verdict table."""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from certify.cli import options, table
from certify.core import jsonfile
from certify.core import progress
from certify.core.report_files import RUN_RESULTS
from certify import suite
from certify.report import suite_page
from certify.errors import BadInput, did_you_mean
from certify.jobs.store import MANIFEST
from certify.search import attack_folder

# case, verdict, expected, as expected?, detail: 100 columns with the indent and gaps; longer cells
# wrap inside their column (the whole text is in results.json).
COLUMNS = ["case", "verdict", "expected", "ok?", "detail"]
WIDTHS = [34, 9, 9, 3, 35]


def add_parser(subparsers):
    """Register `certify run` and its options."""
    p = subparsers.add_parser("run", help="the main job: every registered claim on its default cases",
                              description="Run every section of the default suite (claims, proofs, campaigns, "
                              "figures, ...), print a table of verdicts next to the outcome the mathematics predicts "
                              "for each case, and write certificates, figures, results.json and the report page "
                              "index.html into the report folder. A "
                              "violated or undecided row can be the expected outcome (a planted false bound, an exact "
                              "equality): the expected column says so. Exit 0 when every outcome is the expected one.")
    p.add_argument("--out", type=options.out_folder, default="certify-report", metavar="DIR",
                   help="folder: the report (results.json, index.html, certificates, figures; default "
                        "certify-report)")
    p.add_argument("--long", action="store_true", help="the full-size studies instead of the quick ones")
    p.add_argument("--only", action="append", metavar="SECTION",
                   help="run only the section with this title (repeatable), e.g. claims, proofs, model")
    options.add_figure_options(p, raster=True)  # the models' heat maps
    p.set_defaults(run=run)


def cells(row: suite.Row) -> list[str]:
    """The table cells of one row of `certify run`: case, verdict, expected verdict, whether they agree
    (yes/NO) and the detail (prefixed by why the outcome is intended)."""
    mark = "yes" if row.ok else "NO"
    expected = row.expected or "-"
    detail = (f"({row.intended}) " if row.intended else "") + row.detail
    return [row.case, row.verdict, expected, mark, detail]


def run(args) -> int:
    """Run `certify run`; return its exit code."""
    sections = suite.load_sections(args.only)
    if not sections:
        titles = [module.TITLE for module in suite.load_sections()]
        hint = did_you_mean(args.only[0], titles) if len(args.only) == 1 else ""
        raise BadInput(f"no section matches {', '.join(map(repr, args.only))}; {hint}sections: "  # not a list's repr
                       f"{', '.join(titles)}")
    out_dir = Path(args.out)
    for name, kind in ((MANIFEST, "a campaign or corpus run"), (attack_folder.PARAMETERS, "an attack")):
        if (out_dir / name).is_file():  # its report page index.html was written over by the suite's
            raise BadInput(f"{out_dir} holds {kind} (its {name}), not a report of certify run; choose another --out")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:  # a folder that exists but takes no file (/proc, a read-only mount) failed after every section had run
        tempfile.TemporaryFile(dir=out_dir).close()
    except OSError as err:
        raise BadInput(f"cannot write into {out_dir}: {err.strerror or err}") from None
    state = suite.SuiteRun(out_dir=out_dir, long=args.long, figure_format=args.figure_format, dpi=args.dpi)
    started = time.time()
    print("\n".join(table.rows([COLUMNS], WIDTHS, indent="  ")), flush=True)
    for index, module in enumerate(sections, 1):
        progress.line(f"certify run [{index}/{len(sections)}] {module.TITLE} ...")
        print(f"\n== {module.TITLE} ==", flush=True)
        section_start, count = time.time(), 0
        for row in module.section(state):
            state.rows.append(row)
            count += 1
            print("\n".join(table.rows([cells(row)], WIDTHS, indent="  ")), flush=True)
        seconds = time.time() - section_start
        print(f"  ({seconds:.1f} s)", flush=True)
        progress.line(f"certify run [{index}/{len(sections)}] {module.TITLE}: {count} rows in {seconds:.1f} s")
    unexpected = [row for row in state.rows if not row.ok]
    counts: dict[str, int] = {}
    for row in state.rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    intended = sum(1 for row in state.rows if row.ok and row.intended)
    summary = {"rows": [asdict(row) | {"intended": row.intended} for row in state.rows], "counts": counts,
               "unexpected": len(unexpected), "seconds": round(time.time() - started, 1), "long": args.long}
    jsonfile.write(summary, out_dir / RUN_RESULTS)
    page = suite_page.write(summary, out_dir, args.argv)
    print()
    print("\n".join(table.wrap(
        f"{len(state.rows)} results: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; {len(unexpected)} unexpected ({intended} violated or undecided as expected); "
        f"report in {out_dir}/ ({summary['seconds']} s)", indent="  ", first="")))
    print(f"report page: {page}")
    if unexpected:
        print("unexpected outcomes:", file=sys.stderr)
        for row in unexpected:
            print(f"  {row.section}: {row.case}: {row.verdict} (expected {row.expected or '-'}) {row.detail}",
                  file=sys.stderr)
    return 1 if unexpected else 0
