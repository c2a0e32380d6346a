"""The names of the derived files in a report folder (figures in each format, the page), defined once.

A job's folder (certify.jobs.Store) names every top-level file it writes, so that `--restart`
removes them with the discarded job; its figures and its page are drawn higher up the stack
(certify.figures, certify.report), which the job's own layer may not import.  Both sides take the
names from here.
"""

from __future__ import annotations

FIGURE_FORMATS = ("png", "pdf", "svg")
PAGE = "index.html"
# the certificate of `certify trajectory --out DIR` and the results of `certify run`: `certify verify` of such a
# folder names what to verify in it (certify.search.audit, below the commands that write them)
TRAJECTORY_CERTIFICATE = "trajectory-certificate.json"
RUN_RESULTS = "results.json"


def figure_files(*stems: str) -> tuple[str, ...]:
    """Every name a figure of each stem can be written under: "<stem>.<format>" for each FIGURE_FORMATS."""
    return tuple(f"{stem}.{fmt}" for stem in stems for fmt in FIGURE_FORMATS)
