"""`certify run`'s section for the figures of Wu et al. (2024): Figures 1-3 at CI size (or the
paper's size with --long) into the report's wu-figures folder, one row per figure.

A row's verdict is "ok" when the figure was produced; its detail is the certified spot check
(mu at the final depth: float64 against the ball-arithmetic enclosure) and the disagreements with
the paper's captions; ok is False when a finding disagrees and no control run of the study
measured its cause (studies.all_accounted).  The random layers use the bert setting (BERT's
initialisation, train-mode dropout next to eval mode).
"""

from __future__ import annotations

from certify.suite import Row, SuiteRun
from certify.studies.wu import figures
from certify.studies.wu import studies

TITLE = "wu-figures"
SEED = 0
SETTING = "bert"


def section(run: SuiteRun):
    folder = run.folder(TITLE)
    opts = studies.options(SETTING, run.long, SEED)
    for name, build in studies.STUDIES.items():
        study = build(opts)
        paths = figures.write(study, folder)
        spot = study.spot_checks[0]
        missing = [f"{f.statement} (cause: {f.cause})" for f in study.findings if f.reproduced is False]
        detail = f"{spot.configuration}: {spot.summary()}"
        if missing:
            detail += "; disagrees: " + "; ".join(missing)
        detail += "".join(f"; {note}" for note in study.notes)
        yield Row(section=TITLE, case=f"{name} ({len(study.findings)} findings)", verdict="ok", detail=detail,
                  ok=studies.all_accounted(study), certificate=str(paths["json"].relative_to(run.out_dir)))
