"""`certify run`'s section for Wu et al. (2024): mask radii and the LayerNorm counterexamples.

Expected outcomes: the radii at N = 128 are complete 1, causal 1, sliding window 64,
uni-directional window 127; the Figure-1 counterexample (w = 2) and the equilibria of every
rank (N = 4, w = 4) are certified and confirmed by the trusted checker.
"""

from __future__ import annotations

import argparse

from certify.suite import named_counterexamples
from certify.core import masks
from certify.suite import Row, SuiteRun
from certify.core import graphs

TITLE = "wu-masks-layernorm"
COST = 0.1
FOLDER = "wu"

RADII_AT_128 = {"complete": 1, "causal": 1, "sliding": 64, "uni": 127}
# (claim id, counterexample name, its arguments); a certified counterexample makes the claim hold.
COUNTEREXAMPLES = [
    ("ln.counterexample", "wu-fig1", argparse.Namespace(w="2")),
    ("ln.equilibria", "ln-equilibria", argparse.Namespace(n=4, w="4", one_per_rank=False)),
]


def section(run: SuiteRun):
    """The rows of the "wu-masks-layernorm" section of `certify run`: the mask radii at N = 128, the Figure-1
    counterexample (w = 2) and the equilibria of every rank (N = 4, w = 4), checker-confirmed."""
    for name, expected in RADII_AT_128.items():
        report = graphs.analyse(masks.named_mask(name, 128))
        yield Row(section=TITLE, case=f"radius of the {name} mask at N = 128", verdict="ok"
                  if report.radius == expected else "failed", detail=f"radius {report.radius}, expected {expected} ({graphs.EXACT_SEARCH})",
                  ok=report.radius == expected, expected="ok")
    yield from named_counterexamples.suite_rows(TITLE, run.folder(FOLDER), run.out_dir, COUNTEREXAMPLES)
