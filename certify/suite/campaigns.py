"""`certify run`'s section for sampling campaigns (certify.search.campaign, the engine of `certify sample`).

Every distribution of certify.search.samplers gets a small collapse.global campaign (n = 4,
d = 3, 200 configurations; 2000 with --long): the theorem must never be found violated.  A
planted false bound, (1 - exp(-a D^2 / 8)) D on configurations with L = a D^2 in [40, 2000], must
be found violated: there float64 computes both sides as D and cannot tell, the balls can.
"""

from __future__ import annotations

from certify import engine
from certify.errors import Interrupted
from certify.search import campaign
from certify.search import samplers
from certify.suite import Row, SuiteRun

TITLE = "sampling"
COST = 4  # seconds on one process (-j 1 gives its campaigns a pool of every core)
FOLDER = "sampling"

N_TOKENS, DIMENSION, SEED = 4, 3, 1
COUNT, LONG_COUNT = 200, 2000
PLANTED_BOUND = "(1-exp(-a*D**2/8))*D"
SATURATED_L = (40.0, 2000.0)


def _campaigns(count: int):
    """(label, campaign, violations expected)"""
    for name in samplers.DISTRIBUTIONS:
        yield (f"collapse.global on {count} {name}",
               campaign.Campaign(name, N_TOKENS, DIMENSION, count, SEED, claim="collapse.global"), False)
    yield (f"bound {PLANTED_BOUND} on {count} with L in [{SATURATED_L[0]:g}, {SATURATED_L[1]:g}]",
           campaign.Campaign("log-L", N_TOKENS, DIMENSION, count, SEED, bound=PLANTED_BOUND, L_range=SATURATED_L),
           True)


def section(run: SuiteRun):
    """The rows of the "sampling" section of `certify run`: a small collapse.global campaign per sampler
    distribution (never violated) and a planted false bound with L = a D^2 in [40, 2000] (found violated)."""
    root = run.folder(FOLDER)
    for label, spec, violations_expected in _campaigns(LONG_COUNT if run.long else COUNT):
        folder = root / (spec.distribution if spec.bound is None else "planted-bound")
        try:
            summary = campaign.run(spec, folder, restart=True, workers=run.workers)
        except Interrupted:  # its "run the same command again to continue" is not so here: run restarts it
            raise KeyboardInterrupt from None
        counts, f64 = summary["counts"], summary["float64"]
        largest = summary["largest_ratio"]  # None when no record has a ratio (none decided: every chunk lost)
        ratio = "none" if largest is None else f"{largest['ratio']:.4g}"
        # chunks a dead worker left undone: no verdict for them, as `certify sample` says (summary_verdict)
        decided = "" if summary["complete"] else f"{summary['decided']} of {spec.count} decided; "
        detail = (f"{decided}{counts['holds']} holds, {counts['violated']} violated, {counts['undecided']} undecided; "
                  f"max lhs/rhs {ratio}; float64 wrong on {f64['wrong']}, "
                  f"bound = D on {f64['bound_is_D']}")
        paths = summary["certificates"]["paths"]
        verdict, expected = campaign.summary_verdict(summary), engine.VIOLATED if violations_expected else engine.HOLDS
        # undecided is not the theorem's outcome: a campaign the checker confirmed nothing of must not pass
        yield Row(section=TITLE, case=label, verdict=verdict, detail=detail, ok=verdict == expected,
                  certificate=str((folder / paths[0]).relative_to(run.out_dir)) if paths else None,
                  expected=expected)
