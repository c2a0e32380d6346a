"""`certify run`'s section for the thesis beyond the claims table: the named counterexamples
(residual.far, value.expansive) and init.scaling with its float64 regime reported.

Expected outcomes: residual-far (q = 1/10) certifies D' <= q D for a residual layer; expansive-v
(rho = 2, 8 layers) certifies that the diameter grows at every layer; both are confirmed by the
trusted checker.  init.scaling holds on every case, and each row says where the certified a D^2
lies against float64's thresholds 54 ln 2 and 1075 ln 2.
"""

from __future__ import annotations

import argparse

from flint import arb

from certify import engine
from certify.suite import cases
from certify.engine import certificate
from certify.suite import named_counterexamples
from certify.core.float64_limits import describe
from certify.suite import Row, SuiteRun

TITLE = "thesis"
COST = 0.1
FOLDER = "thesis"

# (claim id, counterexample name, its arguments)
COUNTEREXAMPLES = [
    ("residual.far", "residual-far", argparse.Namespace(q="0.1", lam=None)),
    ("value.expansive", "expansive-v", argparse.Namespace(rho="2", layers="8", lam=None)),
]
# From a resolved gap to an underflowing one.
INIT_CASES = [lambda: cases.gaussian(6, 3, seed=3, scale=0.1), cases.standard_init, cases.antipodal]


def _counterexample_rows(run: SuiteRun):
    return named_counterexamples.suite_rows(TITLE, run.folder(FOLDER), run.out_dir, COUNTEREXAMPLES)


def _init_rows(run: SuiteRun):
    folder = run.folder(FOLDER)
    for build in INIT_CASES:
        config = build()
        result = engine.check(config, claim="init.scaling")
        path, detail = None, result.reason
        if result.certificate is not None:
            path = certificate.write(result.certificate, folder / f"init_scaling--{config['name']}.json")
            layer = result.certificate["values"]["layers"][0]
            a, D = arb(layer["a"]), arb(layer["D"])
            detail = f"{describe(a * D * D)}; certified gap {engine.short(arb(layer['gap']))}"
        yield Row(section=TITLE, case=f"init.scaling on {config['name']}", verdict=result.verdict, detail=detail,
                  ok=result.verdict == engine.HOLDS, certificate=path and str(path.relative_to(run.out_dir)),
                  expected=engine.HOLDS)


def section(run: SuiteRun):
    """The rows of the "thesis" section of `certify run`: the named counterexamples residual-far (q = 1/10)
    and expansive-v (rho = 2, 8 layers), checker-confirmed, and init.scaling with the float64 regime of a
    D^2."""
    yield from _counterexample_rows(run)
    yield from _init_rows(run)
