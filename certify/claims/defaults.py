"""`certify run`'s section for the claims: every registered claim on its default cases.

The expected outcome is part of each case: theorems hold, the planted stronger bound is
violated (a certified counterexample), and the n = 2 equality of step 1 is undecided.
"""

from __future__ import annotations

from certify import cases, certificate, engine
from certify.suite import Row, SuiteRun

TITLE = "claims"

PURE = [cases.gaussian, cases.antipodal, cases.standard_init, cases.near_consensus, cases.near_permutation,
        cases.biased_heads]

# (claim or None, bound or None, case builder, expected verdict)
DEFAULT_CHECKS = (
    [("collapse.global", None, build, engine.HOLDS) for build in PURE]
    + [("collapse.dobrushin", None, build, engine.HOLDS) for build in (cases.gaussian, cases.causal)]
    + [("collapse.dobrushin", None, cases.two_tokens, engine.UNDECIDED)]
    + [("collapse.tau", None, build, engine.HOLDS) for build in (cases.gaussian, cases.antipodal)]
    + [("collapse.cubic", None, build, engine.HOLDS) for build in (cases.near_consensus, cases.gaussian)]
    + [("collapse.trajectory", None, cases.stack, engine.HOLDS)]
    # A conjectured stronger bound, false in the saturated regime where float64 sees nothing.
    + [(None, "(1-exp(-a*D**2/8))*D", cases.antipodal, engine.VIOLATED)]
)

# The n = 2 equality can only end at the precision cap; a low cap keeps `certify run` quick.
EQUALITY_CAP = 1 << 10


def section(run: SuiteRun):
    folder = run.folder("claims")
    for claim_id, bound, build, expected in DEFAULT_CHECKS:
        config = build()
        cap = EQUALITY_CAP if expected == engine.UNDECIDED else engine.DEFAULT_MAX_PRECISION
        result = engine.check(config, claim=claim_id, bound=bound, max_prec=cap)
        label = claim_id or f"bound {bound}"
        path = None
        if result.certificate is not None:
            stem = f"{claim_id or 'bound'}--{config['name']}".replace(".", "_")
            path = str(certificate.write(result.certificate, folder / f"{stem}.json").relative_to(run.out_dir))
        detail = f"margin {result.margin}" + (f", {result.precision} bits" if result.precision else "")
        yield Row(section=TITLE, case=f"{label} on {config['name']}", verdict=result.verdict, detail=detail,
                  ok=result.verdict == expected, certificate=path)

