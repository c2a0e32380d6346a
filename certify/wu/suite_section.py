"""`certify run`'s section for Wu et al. (2024): mask radii and the LayerNorm counterexamples.

Expected outcomes: the radii at N = 128 are complete 1, causal 1, sliding window 64,
uni-directional window 127; the Figure-1 counterexample (w = 2) and the equilibria of every
rank (N = 4, w = 4) are certified and confirmed by the trusted checker.
"""

from __future__ import annotations

import argparse

from certify import certificate, masks
from certify.suite import Row, SuiteRun
from certify.wu import equilibria, fig1, graphs

TITLE = "wu-masks-layernorm"

RADII_AT_128 = {"complete": 1, "causal": 1, "sliding": 64, "uni": 127}
# (claim id, counterexample name, engine, its arguments); a certified counterexample makes the claim hold.
COUNTEREXAMPLES = [
    ("ln.counterexample", "wu-fig1", fig1, argparse.Namespace(w="2")),
    ("ln.equilibria", "ln-equilibria", equilibria, argparse.Namespace(n=4, w="4", one_per_rank=False)),
]


def section(run: SuiteRun):
    for name, expected in RADII_AT_128.items():
        report = graphs.analyse(masks.named_mask(name, 128))
        yield Row(section=TITLE, case=f"radius of the {name} mask at N = 128", verdict="ok"
                  if report.radius == expected else "failed", detail=f"radius {report.radius}, expected {expected}",
                  ok=report.radius == expected)
    folder = run.folder("wu")
    for claim, name, module, args in COUNTEREXAMPLES:
        outcome = module.build(args)
        path = certificate.write(outcome.certificate, folder / f"{name}.json")
        settings = ", ".join(f"{k} = {v}" for k, v in vars(args).items() if k != "one_per_rank")
        certified = outcome.confirmed and outcome.verdict == "certified"
        yield Row(section=TITLE, case=f"{claim}: {name} ({settings})", verdict="holds" if certified else outcome.verdict,
                  detail=outcome.message, ok=certified,
                  certificate=str(path.relative_to(run.out_dir)))
