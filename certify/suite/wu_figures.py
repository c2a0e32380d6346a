"""`certify run`'s section for the figures of Wu et al. (2024): Figures 1-3 at CI size (or the
paper's size with --long) into the report's wu-figures folder, one row per figure.

A row's verdict is "ok" when the figure was produced; its detail is the certified spot check
(mu at the final depth: float64 against the ball-arithmetic enclosure); ok is False when a
qualitative finding of the paper does not show in the float64 numbers (listed in the detail and
in the figure's JSON), unless it is a recorded known disagreement (Finding.expected).
"""

from __future__ import annotations

from certify.suite import Row, SuiteRun
from certify.studies.wu import figures
from certify.studies.wu import reproduce
from certify.studies.wu import studies

TITLE = "wu-figures"
SEED = 0


def section(run: SuiteRun):
    folder = run.folder(TITLE)
    size = reproduce.LONG if run.long else reproduce.CI
    for name, build in studies.STUDIES.items():
        study = build(size, SEED)
        paths = figures.write(study, folder)
        spot = study.spot_checks[0]
        missing = [f.statement + ("" if f.expected else " (a known disagreement)")
                   for f in study.findings if not f.reproduced]
        detail = f"{spot.configuration}: {spot.summary()}"
        if missing:
            detail += "; not reproduced: " + "; ".join(missing)
        detail += "".join(f"; {note}" for note in study.notes)
        as_expected = all(f.reproduced == f.expected for f in study.findings)
        yield Row(section=TITLE, case=f"{name} ({len(study.findings)} findings)", verdict="ok", detail=detail,
                  ok=as_expected, certificate=str(paths["json"].relative_to(run.out_dir)))
