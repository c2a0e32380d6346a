"""Lookup of the derivations in proofs/: one module per claim, named after the claim id with
'.' replaced by '_' (collapse.global -> proofs/collapse_global.py).

Each module exposes `build(**overrides) -> Derivation`; `overrides` replace a stated constant or
formula, which is how the tests check that a wrong one makes a step fail.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable

import proofs
from certify.errors import BadInput, did_you_mean


def names() -> list[str]:
    """Module names of every derivation, sorted (modules starting with '_' are helpers)."""
    return sorted(m.name for m in pkgutil.iter_modules(proofs.__path__) if not m.name.startswith("_"))


def module_name(name_or_claim: str) -> str:
    """The module name under proofs/ of a claim id or derivation name: dots become underscores
    (collapse.global -> collapse_global)."""
    return name_or_claim.replace(".", "_")


def derivation_path(claim_id: str) -> str | None:
    """"proofs/<module>.py" of the claim's derivation, else None.

    A refinement such as residual.two_sided.global is covered by the derivation of its parent
    claim (residual.two_sided) when it has none of its own.
    """
    known = names()
    parts = claim_id.split(".")
    while parts:
        name = module_name(".".join(parts))
        if name in known:
            return f"proofs/{name}.py"
        parts.pop()
    return None


def build(name_or_claim: str, **overrides):
    """The Derivation of a claim (or module name); BadInput when there is none.

    A registered claim without a module of its own (residual.two_sided.global) gets its parent's,
    as `certify claims` links it; any other dotted name must be a module itself, so that a
    misspelt id is refused rather than resolved to a prefix.
    """
    name = module_name(name_or_claim)
    if name not in names():
        path = derivation_path(name_or_claim) if _is_registered(name_or_claim) else None
        if path is None:
            raise BadInput(f"no derivation named {name_or_claim!r}; {did_you_mean(name, names())}known: "
                           f"{', '.join(names())}")
        name = path.removeprefix("proofs/").removesuffix(".py")
    module = importlib.import_module(f"proofs.{name}")
    return module.build(**overrides)


def _is_registered(claim_id: str) -> bool:
    from certify.claims import all_claims  # the registry only when a name is not a module

    return any(claim.id == claim_id for claim in all_claims())


def run_derivation(name_or_claim: str):
    """Run one derivation: a DerivationResult (never raises for a failing step)."""
    return build(name_or_claim).run()


def run_all(names_or_claims: list[str], on_each: Callable | None = None, workers: int | None = None) -> list:
    """run_derivation of each, in that order, on `workers` processes, by default one per core (certify.jobs' pool:
    Ctrl-C lets the running ones finish, then raises KeyboardInterrupt); `on_each(result)` as each ends, in any
    order (progress).  The derivations are sympy work in Python, independent of one another: `certify proofs`
    took 37 s on one core."""
    from certify.jobs.executors import ProcessPool  # only to run: `certify claims` reads this module too, and the
    # pool's imports (concurrent.futures, threadpoolctl) were 54 of the 58 ms its import took
    return ProcessPool(workers).map(_run_one, None, [[name] for name in names_or_claims], on_each)


def _run_one(_, chunk: list[str]):
    """The pool's task: the chunk is one derivation's name."""
    return run_derivation(chunk[0])
