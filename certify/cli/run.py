"""certify run: the main job, every registered section on its default cases, as a verdict table."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import asdict
from pathlib import Path

from certify.cli import options, table
from certify.core import files, jsonfile
from certify.core import progress
from certify.core.report_files import PAGE, RUN_RESULTS
from certify import suite
from certify.jobs import executors
from certify.suite import parallel
from certify.report import suite_page
from certify.errors import BadInput, did_you_mean
from certify.jobs.store import LOCK, MANIFEST, locked
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
    p.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                   help="sections run at once, each in a worker process, the longest first; the table and the "
                        "report are the same (default: the cores this process may use, here "
                        f"{executors.usable_cores()}; 1: one after another in this process)")
    options.add_figure_options(p, raster=True)  # the models' heat maps
    p.set_defaults(run=run)


def _jobs(text: str) -> int:
    """-j N: a positive integer."""
    value = options.integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {text!r}")
    return value


def cells(row: suite.Row) -> list[str]:
    """The table cells of one row of `certify run`: case, verdict, expected verdict, whether they agree
    (yes/NO) and the detail (prefixed by why the outcome is intended)."""
    mark = "yes" if row.ok else "NO"
    expected = row.expected or "-"
    detail = (f"({row.intended}) " if row.intended else "") + row.detail
    return [row.case, row.verdict, expected, mark, detail]


def _not_a_runs(out_dir: Path) -> str | None:
    """The file of out_dir that the run would write over and no `certify run` wrote (its results.json is an object
    with rows, counts and unexpected; its index.html is written after results.json), or None."""
    results, page = out_dir / RUN_RESULTS, out_dir / PAGE
    for path in (results, page):
        if path.exists() and not path.is_file():  # a folder, a named pipe: never a run's
            return path.name
    if results.is_file():
        try:  # the strict reader's limits: 64 MiB of [{},{},...] took 1.8 GB to be found no run's
            written = jsonfile.read(results, raise_with=None)
        except (OSError, BadInput):  # not JSON, not UTF-8, past a limit
            written = None
        return None if isinstance(written, dict) and {"rows", "counts", "unexpected"} <= written.keys() else RUN_RESULTS
    return PAGE if page.is_file() else None


def _link_written_through(out_dir: Path, sections: list) -> Path | None:
    """The first symbolic link where the run writes in out_dir (results.json, index.html, each section's folder and
    what it holds), or None: its files are replaced through a link, which would overwrite the file it names."""
    written = (RUN_RESULTS, PAGE, *(module.FOLDER for module in sections if hasattr(module, "FOLDER")))
    return next(filter(None, (files.first_link(out_dir / name) for name in written)), None)


def _withdraw_page(out_dir: Path) -> None:
    """Remove an earlier run's page and results, before the sections write: they rewrite the files those describe
    (a campaign restarts, its records discarded), and a run stopped before its end left a page saying holds of 2000
    configurations beside the 85 its campaign then kept.  The page first: a results.json alone is a run's
    (_not_a_runs), a page alone is not."""
    for name in (PAGE, RUN_RESULTS):
        (out_dir / name).unlink(missing_ok=True)


def _lock(out_dir: Path):
    """The report folder's lock file, held exclusive (certify.jobs.store.locked), or BadInput when another process
    holds it: a run writing the folder, or a campaign's or attack's run or reader where one is."""
    return locked(out_dir, shared=False, busy=f"{out_dir} is in use by another certify process (one run writes a "
                  "report folder at a time); wait for it to stop, or choose another --out")


@contextmanager
def _held(out_dir: Path, sections: list) -> Iterator[float]:
    """The report folder checked and locked for this run until the block ends (BadInput, the folder untouched, when
    it is refused or another run holds it); yields when the run began by the clock of the folder's file system.
    Two runs at once interleaved, one withdrawing the other's page and writing its own between the other's
    sections.  The lock (.lock) goes with the process, even killed, and with the workers forked from it, which die
    with it (certify.jobs.executors.worker_init): no killed run leaves one that blocks the next."""
    # The lock file is the first thing a run makes in a new folder: found, it decides before anything else is
    # looked at (a run that has just begun there is "in use", not a folder of something else), as for a job's
    # folder (certify.jobs.Store.open); missing, the folder is checked before a lock file is left in it
    lock = _lock(out_dir) if (out_dir / LOCK).is_file() else None
    try:
        for name, kind in ((MANIFEST, "a campaign or corpus run"), (attack_folder.PARAMETERS, "an attack")):
            if (out_dir / name).is_file():  # its report page index.html was written over by the suite's
                raise BadInput(f"{out_dir} holds {kind} (its {name}), not a report of certify run; choose another "
                               "--out")
        if link := _link_written_through(out_dir, sections):
            raise BadInput(f"{link} is a link, which no certify run writes: the run would write through it to what "
                           "it names elsewhere (remove it)")
        if foreign := _not_a_runs(out_dir):  # a web site's index.html was written over
            raise BadInput(f"{out_dir} holds {foreign} not written by certify run; choose another --out")
        out_dir.mkdir(parents=True, exist_ok=True)
        try:  # a folder that exists but takes no file (/proc, a read-only mount) failed after every section had run
            if lock is None:
                lock = _lock(out_dir)
            with tempfile.TemporaryFile(dir=out_dir) as probe:
                # when the run began by the clock of the folder's file system (a network one's may differ from this
                # machine's): the page shows the figures written since (suite_page)
                began = os.fstat(probe.fileno()).st_mtime
        except OSError as err:
            raise BadInput(f"cannot write into {out_dir}: {err.strerror or err}") from None
        yield began
    finally:
        if lock is not None:
            lock.close()


def run(args) -> int:
    """Run `certify run`; return its exit code."""
    titles = [module.TITLE for module in suite.load_sections()]
    # every name must be a section's: one misspelt among known ones was dropped, and the others' run said exit 0
    if unknown := [name for name in args.only or [] if name not in titles]:
        hint = did_you_mean(unknown[0], titles) if len(unknown) == 1 else ""
        raise BadInput(f"no section matches {', '.join(map(repr, unknown))}; {hint}sections: "  # not a list's repr
                       f"{', '.join(titles)}")
    sections = suite.load_sections(args.only)
    out_dir = Path(args.out)
    with _held(out_dir, sections) as began:
        return _run(args, sections, out_dir, began)


def _run(args, sections: list, out_dir: Path, began: float) -> int:
    """run() in the report folder out_dir, checked and locked, begun at `began` (_held)."""
    _withdraw_page(out_dir)
    state = suite.SuiteRun(out_dir=out_dir, long=args.long, figure_format=args.figure_format, dpi=args.dpi)
    jobs = min(executors.usable_cores() if args.jobs is None else args.jobs, len(sections))
    started = time.time()
    print("\n".join(table.rows([COLUMNS], WIDTHS)), flush=True)
    if jobs == 1:
        _one_after_another(sections, state)
    else:
        _at_once(sections, state, jobs)
    unexpected = [row for row in state.rows if not row.ok]
    counts: dict[str, int] = {}
    for row in state.rows:
        counts[row.verdict] = counts.get(row.verdict, 0) + 1
    intended = sum(1 for row in state.rows if row.ok and row.intended)
    summary = {"rows": [asdict(row) | {"intended": row.intended} for row in state.rows], "counts": counts,
               "unexpected": len(unexpected), "seconds": round(time.time() - started, 1), "long": args.long}
    jsonfile.write(summary, out_dir / RUN_RESULTS)
    page = suite_page.write(summary, out_dir, args.argv, began)
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


def _one_after_another(sections: list, state: suite.SuiteRun) -> None:
    """The sections in this process, in order, each row printed as it comes."""
    for index, module in enumerate(sections):
        progress.line(f"{_place(index, sections)} ...")
        _print_title(module)
        section_start, count = time.time(), 0
        for row in module.section(state):
            state.rows.append(row)
            count += 1
            _print_row(row)
        seconds = time.time() - section_start
        _print_seconds(seconds)
        progress.line(f"{_place(index, sections)}: {count} rows in {seconds:.1f} s")


def _at_once(sections: list, state: suite.SuiteRun, jobs: int) -> None:
    """The sections on `jobs` worker processes (certify.suite.parallel): each section's block is printed once it
    and every section before it have ended, so that the table reads as when they run one after another; a
    section's error is raised in its place, after the blocks before it, as there."""
    ended: dict[int, parallel.Event] = {}
    printed = 0
    with closing(parallel.run(sections, state, jobs)) as events:
        for event in events:
            running = ", ".join(sections[index].TITLE for index in event.running) or "none"
            if event.rows is None:
                progress.line(f"{_place(event.index, sections)} ... (running: {running})")
                continue
            outcome = "failed after " if event.error is not None else ""
            progress.line(f"{_place(event.index, sections)}: {outcome}{len(event.rows)} rows in "
                          f"{event.seconds:.1f} s (running: {running})")
            ended[event.index] = event
            while printed in ended:
                block = ended.pop(printed)
                _print_title(sections[printed])
                for row in block.rows:
                    state.rows.append(row)
                    _print_row(row)
                if block.error is not None:
                    raise block.error
                _print_seconds(block.seconds)
                printed += 1


def _place(index: int, sections: list) -> str:
    """The start of a progress line: `certify run [3/10] wu-figures`."""
    return f"certify run [{index + 1}/{len(sections)}] {sections[index].TITLE}"


def _print_title(module) -> None:
    print(f"\n== {module.TITLE} ==", flush=True)


def _print_row(row: suite.Row) -> None:
    print("\n".join(table.rows([cells(row)], WIDTHS)), flush=True)


def _print_seconds(seconds: float) -> None:
    print(f"  ({seconds:.1f} s)", flush=True)
