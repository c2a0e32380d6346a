"""`certify run`'s section for the claims: every registered claim on its default cases.

The expected outcome is part of each case: theorems hold, planted stronger bounds are violated
(certified counterexamples), and exact equalities (step 1 at n = 2, collapse.tanh on antipodal
tokens, residual-far's lower bound) are undecided, since ball arithmetic cannot decide lhs = rhs.
"""

from __future__ import annotations

from certify import engine
from certify.suite import cases
from certify.engine import certificate
from certify.suite import Row, SuiteRun
from certify.suite import thesis_cases as thesis
from certify.suite import wu_cases as wu

TITLE = "claims"
COST = 0.3
FOLDER = "claims"

PURE = [cases.gaussian, cases.antipodal, cases.standard_init, cases.near_consensus, cases.near_permutation,
        cases.biased_heads]

# (claim or None, bound or None, case builder, expected verdict)
DEFAULT_CHECKS = (
    [("collapse.global", None, build, engine.HOLDS) for build in PURE]
    + [("collapse.tanh", None, build, engine.HOLDS) for build in (cases.gaussian, cases.near_permutation)]
    # two antipodal tokens attain the sharp bound: an exact equality, honestly undecided
    + [("collapse.tanh", None, cases.antipodal, engine.UNDECIDED)]
    + [("collapse.dobrushin", None, build, engine.HOLDS) for build in (cases.gaussian, cases.causal)]
    + [("collapse.dobrushin", None, cases.two_tokens, engine.UNDECIDED)]
    + [("collapse.tau", None, build, engine.HOLDS) for build in (cases.gaussian, cases.antipodal)]
    + [("collapse.cubic", None, build, engine.HOLDS) for build in (cases.near_consensus, cases.gaussian)]
    + [("collapse.trajectory", None, cases.stack, engine.HOLDS)]
    # A conjectured stronger bound, false in the saturated regime where float64 sees nothing.
    + [(None, "(1-exp(-a*D**2/8))*D", cases.antipodal, engine.VIOLATED)]
    # Value matrices, residuals and FFNs (certify/claims/value.py, residual.py, ffn.py, init.py).
    + [("value.bounded", None, build, engine.HOLDS) for build in (thesis.rotation_stack, thesis.jordan_stack)]
    + [("value.expansive", None, build, engine.HOLDS) for build in (thesis.expansive, thesis.expansive_growth)]
    # The expansive-v stack is a user's counterexample to "D' <= D": the diameter grows.
    + [(None, "D", thesis.expansive_growth, engine.VIOLATED)]
    + [("residual.two_sided", None, build, engine.HOLDS)
       for build in (thesis.residual, lambda: thesis.residual(mask="causal"))]
    + [("residual.two_sided.global", None, thesis.residual, engine.HOLDS)]
    # n = 2, V = -I: D' = (1 - ||V|| tau) D exactly, the lower bound is attained (an equality).
    + [("residual.two_sided", None, thesis.residual_far, engine.UNDECIDED)]
    + [("ffn.lipschitz", None, lambda a=a, r=r: thesis.ffn(a, r), engine.HOLDS)
       for a, r in (("relu", False), ("gelu", False), ("gelu", True))]
    # Wu et al.'s Theorems 1 and 2, window by window (certify/claims/wu.py).
    + [("mask.collapse", None, lambda m=m: wu.masked_stack(m), engine.HOLDS) for m in ("causal", "sliding", "uni")]
    + [("ln.collapse", None, wu.layernorm_stack, engine.HOLDS)]
    + [("ln.collapse", None, lambda: wu.layernorm_stack("causal", n=5, positive=True), engine.HOLDS)]
)

# An exact equality can only end at the precision cap; a low cap keeps `certify run` quick.
EQUALITY_CAP = 1 << 10


def section(run: SuiteRun):
    """The rows of the "claims" section of `certify run`: every registered claim on each of its default cases,
    with the expected verdict (holds, violated for a planted bound, undecided for an exact equality)."""
    folder = run.folder(FOLDER)
    for claim_id, bound, build, expected in DEFAULT_CHECKS:
        config = build()
        cap = EQUALITY_CAP if expected == engine.UNDECIDED else engine.DEFAULT_MAX_PRECISION
        result = engine.check(config, claim=claim_id, bound=bound, max_prec=cap)
        label = claim_id or f"bound {bound}"
        path = None
        if result.certificate is not None:
            stem = f"{claim_id or 'bound'}--{config['name']}".replace(".", "_")
            path = str(certificate.write(result.certificate, folder / f"{stem}.json").relative_to(run.out_dir))
        detail = f"margin {result.margin_text}" + (f", {result.precision} bits" if result.precision else "")
        yield Row(section=TITLE, case=f"{label} on {config['name']}", verdict=result.verdict, detail=detail,
                  ok=result.verdict == expected, certificate=path, expected=expected)

