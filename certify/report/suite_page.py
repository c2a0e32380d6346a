"""The page of `certify run`: index.html in its report folder, from the data of results.json.

One table per section of the suite with each row's verdict and the outcome the mathematics
predicts (a flagged row is an unexpected outcome), every certificate with its `certify verify`
command (a campaign folder as one entry), labelled where this run did not write it, every figure
this run wrote in the sub-folders the rows' files lie in (each section writes into its own), and
the environment.
"""

from __future__ import annotations

from pathlib import Path

from certify import suite
from certify.core.verdicts import NOT_CERTIFIED
from certify.jobs.store import MANIFEST
from certify.report import environment, files, page

COLUMNS = ["case", "verdict", "expected", "detail", "file"]
# the coarsest time a file system keeps of a file's last write (FAT's, 2 s): a figure written before the run
# began by more than this is an earlier run's (_this_runs)
MTIME_RESOLUTION = 2.0


def expected_outcome(row: dict) -> str:
    """The outcome predicted for a row of results.json: its "expected" field when the row states one;
    otherwise the verdict itself when the row is ok (its outcome is the predicted one) and
    "not <verdict>" when it is not, since a row records that its outcome is the predicted one, not
    which outcome was predicted."""
    if row.get("expected"):
        return str(row["expected"])
    return str(row["verdict"]) if row["ok"] else f"not {row['verdict']}"


def _verdict_sections(rows: list[dict]) -> list[page.Section]:
    by_section: dict[str, list[dict]] = {}
    for row in rows:
        by_section.setdefault(str(row["section"]), []).append(row)
    sections = []
    for title, members in by_section.items():
        cells = [[row["case"], row["verdict"], expected_outcome(row), row["detail"],
                  page.Link(Path(row["certificate"]).name, row["certificate"]) if row.get("certificate") else None]
                 for row in members]
        flagged = [k for k, row in enumerate(members) if not row["ok"]]
        sections.append(page.Section(title, [page.Table(COLUMNS, cells, flagged=flagged)]))
    return sections


# what marks a certificate or campaign folder in the report folder that this run did not write (an earlier run's, or
# one put there): what it states is no verdict of this run
NOT_THIS_RUNS = f" ({NOT_CERTIFIED}: no result of this run wrote it)"


def _label(path: Path, named: set[str], unconfirmed: set[str]) -> str:
    """What marks a certificate's statement that is not a verdict of this run: no row of it wrote the file
    (NOT_THIS_RUNS), or its row says the checker did not confirm it."""
    if str(path) not in named:
        return NOT_THIS_RUNS
    return f" ({NOT_CERTIFIED}: the checker did not confirm it in this run)" if str(path) in unconfirmed else ""


def _certificate_section(certificates, campaigns, named: set[str], unconfirmed: set[str],
                         ours: set[Path]) -> page.Section:
    """Every certificate with what it states, labelled where it is not a confirmed verdict of this run (_label), and
    every campaign folder, labelled where it is not one of `ours`, those this run wrote."""
    rows = [[page.Link(str(path), path), about + _label(path, named, unconfirmed), files.verify_command(path)]
            for path, about in certificates]
    rows += [[page.Link(f"{path}/", f"{path}/"), "campaign folder: its records re-derived, its certificates checked"
              + ("" if path in ours else NOT_THIS_RUNS), files.verify_command(path)] for path in campaigns]
    text = ("Every certificate in the report folder; the independent checker re-verifies each one "
            f"(python -m certify_checker PATH is the same check). {files.VERIFY_HERE}")
    return page.Section("certificates", [text, page.Table(["file", "what", "verify"], rows)])


def _this_runs(out_dir: Path, paths: list[Path], began: float) -> list[Path]:
    """The files (figures) of `paths` that this run wrote, those written since it began: every section draws its
    figures again, but one of an earlier run stays beside them (drawn in another --format, or of a text only --long
    certifies)."""
    return [path for path in paths if (out_dir / path).stat().st_mtime >= began - MTIME_RESOLUTION]


def _campaigns_this_run_wrote(out_dir: Path, campaigns: list[Path], began: float) -> set[Path]:
    """The campaign folders this run wrote, those whose manifest was written since it began (the suite restarts
    its campaigns: _this_runs): a campaign another command or an earlier version's suite ran beside them
    (`certify sample --out REPORT/sampling/mine`) is none."""
    return {path.parent for path in _this_runs(out_dir, [path / MANIFEST for path in campaigns], began)}


def build(results: dict, out_dir, argv: list[str] | None, began: float) -> page.Page:
    """The page of a `certify run` whose results.json data is `results`, written into `out_dir`; `began`: when
    the run began, as out_dir's file system times a file's write (os.stat's st_mtime)."""
    out_dir = Path(out_dir)
    rows = results["rows"]
    counts = ", ".join(f"{k} {verdict}" for verdict, k in sorted(results["counts"].items()))
    unexpected = results["unexpected"]
    outcome = ("every outcome is the one the mathematics predicts" if not unexpected
               else f"{unexpected} {'outcome is' if unexpected == 1 else 'outcomes are'} NOT the predicted ones "
                    "(flagged below)")
    lead = [f"{len(rows)} results: {counts}; {outcome}.",
            "A violated or undecided verdict is expected where the row says so: planted false bounds are violated "
            "(certified counterexamples) and exact equalities are undecided (ball arithmetic cannot decide lhs = rhs).",
            f"Took {results['seconds']} s" + (", the full-size studies (--long)" if results.get("long") else "") + "."]
    # the folders this run's sections wrote into (a report folder may hold other files): a section's own, also where
    # no row names a certificate (wu-figures writes figures and data only), and any a row's certificate is in
    named = {row["certificate"] for row in rows if row.get("certificate")}
    written = {Path(path).parts[0] for path in named} | suite.folders({str(row["section"]) for row in rows})
    certificates, campaigns, figures = files.scan(out_dir, sorted(written))
    # a row labels what the checker did not confirm (certify.core.verdicts.labelled, or its detail)
    unconfirmed = {row["certificate"] for row in rows
                   if row.get("certificate") and NOT_CERTIFIED in f"{row['verdict']} {row['detail']}"}
    ours = _campaigns_this_run_wrote(out_dir, campaigns, began)
    sections = _verdict_sections(rows) + [_certificate_section(certificates, campaigns, named, unconfirmed, ours)]
    sections += files.figure_sections(out_dir, _this_runs(out_dir, figures, began)) + [environment.section(argv)]
    return page.Page("certify run", lead, sections)


def write(results: dict, out_dir, argv: list[str] | None, began: float) -> Path:
    """Write out_dir/index.html for a `certify run` (see build)."""
    return page.write(build(results, out_dir, argv, began), out_dir)
