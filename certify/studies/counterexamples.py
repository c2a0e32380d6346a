"""Named counterexamples, certified: `certify counterexample NAME [options] [--out CERT]`.

REGISTRY maps a name to the module that builds it.  Such a module exposes
    HELP = "one line"
    add_arguments(parser)        its options (besides --out, which the CLI adds)
    build(args) -> Outcome       search the witness, evaluate it in ball arithmetic, and have the
                                 trusted checker confirm the certificate before anything is reported
Add a counterexample by adding one line here.
"""

from __future__ import annotations

import importlib

REGISTRY = {
    "wu-fig1": "certify.studies.wu.fig1",
    "ln-equilibria": "certify.studies.wu.equilibria",
    "residual-far": "certify.studies.thesis.residual_far",
    "expansive-v": "certify.studies.thesis.expansive_v",
}


def load(name: str):
    """The module that builds the named counterexample (REGISTRY); KeyError for an unknown name."""
    return importlib.import_module(REGISTRY[name])
