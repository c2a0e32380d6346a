"""The main job, `certify run`: every registered section on its default cases.

A section is a module with
    TITLE = "..."
    COST = 5  # its rough seconds on one core (the quick suite): `certify run -j N` starts the costliest first
    FOLDER = "..."  # where it writes in the report folder (run.folder(FOLDER)); none for a section writing nothing
    def section(run: SuiteRun) -> Iterable[Row]
listed in SECTIONS below (imported lazily, so a section's heavy dependencies load only when it
runs).  Each Row is one line of the verdict table; `ok` says whether the outcome is the one the
mathematics predicts (a theorem holds, a counterexample is violated, an exact equality is
undecided).  Sections write their certificates and figures under run.out_dir / FOLDER, each
into its own folder and independent of the others: certify.suite.parallel runs several at once.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from certify import figures
from certify.core.verdicts import NOT_CERTIFIED, UNDECIDED
from pathlib import Path

SECTIONS = [
    "certify.suite.defaults",
    "certify.suite.wu_claims",
    "certify.suite.wu_figures",
    "certify.suite.thesis_counterexamples",
    "certify.suite.campaigns",
    "certify.suite.models",
    "certify.suite.attacks",
    "certify.suite.derivations",
    "certify.suite.region_proofs",
    "certify.suite.thesis_dynamics",
]


@dataclass
class Row:
    """One line of `certify run`'s verdict table: section, case, verdict (holds, violated, undecided, ok,
    failed or skipped), a short detail, whether the outcome is the one the mathematics predicts, the
    certificate's path relative to the report folder and the expected verdict."""
    section: str
    case: str
    verdict: str  # holds | violated | undecided | ok | failed | skipped
    detail: str = ""  # margin, ratio or a short reason
    ok: bool = True  # the outcome the mathematics predicts
    certificate: str | None = None  # path relative to the report folder
    expected: str = ""  # the verdict the mathematics predicts for this case (see INTENDED)

    @property
    def intended(self) -> str:
        """Why an expected outcome other than holds/ok is the right one, once the row has it, else "": a row
        that missed its planted violation must not read "refuted by a certified counterexample"."""
        return INTENDED.get(self.expected, "") if self.ok else ""


def checked(verdict: str, confirmed: bool, message: str, detail: str = "") -> tuple[str, str]:
    """A row's verdict and detail: as found once the checker confirmed the certificate; else undecided, the
    detail saying "not certified", what the engine found and the checker's word (as `certify check` reports
    a certificate the checker rejects), so that no row shows an unconfirmed verdict."""
    if confirmed:
        return verdict, detail
    said = f"{NOT_CERTIFIED}: {verdict} by the engine, but the checker did not confirm it ({message})"
    return UNDECIDED, said + (f"; {detail}" if detail else "")


# In the default suite an expected violation is always a planted false bound, and an expected
# undecided always an exact equality: saying so on the row tells a reader these are intended.
INTENDED = {
    "violated": "intended: a planted false bound, refuted by a certified counterexample",
    "undecided": "intended: an exact equality, which ball arithmetic cannot decide",
}


@dataclass
class SuiteRun:
    """One `certify run`: the report folder, whether the long (full-size) studies run, the processes a section
    may start for a pool of its own, and the rows collected so far."""
    out_dir: Path
    long: bool = False  # the slow, full-size studies instead of the CI-sized ones
    workers: int | None = None  # a section's own pool (campaigns, derivations); None: one process per core
    figure_format: str = figures.DEFAULT_FORMAT  # how sections write their figures (--format, --dpi)
    dpi: int = figures.DEFAULT_DPI
    rows: list[Row] = field(default_factory=list)

    def figure_options(self) -> dict:
        """The keyword arguments of every certify.figures writer: the run's --format and --dpi."""
        return {"fmt": self.figure_format, "dpi": self.dpi}

    def folder(self, name: str) -> Path:
        """The section's folder `out_dir / name`, created if needed."""
        path = self.out_dir / name
        path.mkdir(parents=True, exist_ok=True)
        return path


def folders(titles) -> set[str]:
    """The folders the sections titled `titles` write into (their FOLDER)."""
    return {m.FOLDER for m in load_sections(sorted(titles)) if hasattr(m, "FOLDER")} if titles else set()


def load_sections(only: list[str] | None = None):
    """The section modules, all or those whose TITLE is in `only`."""
    modules = [importlib.import_module(name) for name in SECTIONS]
    if only:
        modules = [m for m in modules if m.TITLE in only]
    return modules
