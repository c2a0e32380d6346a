"""The claim registry: every claim of docs/claims.md that certify can decide.

A claim is one or more inequalities lhs <= rhs between expressions (certify.core.expr grammar) over
named primitives of a layer step (see certify.core.primitives): D, D_out, D_PX, a, tau, n, d, v, ...
A "layer" claim is checked at every layer of a stack; a "stack" claim through the stack: its rhs
is a map of D applied layer after layer from D_0 (with that layer's a, ...), and after every layer
t its lhs is compared with the map composed through layers 0..t (the claim is about D_t for every
t <= T, not only the last).  Families live in their own modules and register themselves here on import.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Callable

from certify.core.config import COMPONENTS, Case
from certify.errors import BadInput, did_you_mean, shown

FAMILIES = [
    "certify.claims.collapse",
    "certify.claims.value",
    "certify.claims.residual",
    "certify.claims.ffn",
    "certify.claims.init",
    "certify.claims.wu",
]

DEFAULT = "collapse.global"  # decided when no claim (and no bound) is given


@dataclass(frozen=True)
class Inequality:
    """One inequality lhs <= rhs of a claim, both sides expressions of certify.core.expr over the primitives
    of a layer step (certify.core.primitives), with an optional label naming it."""
    lhs: str
    rhs: str
    label: str = ""


@dataclass(frozen=True)
class Claim:
    """A registered claim: its id (as in docs/claims.md), statement, inequalities, source, hypotheses in
    words, the test `applies(case)` (None, or why the claim does not apply), and its scope: checked at
    every layer, after every layer through the stack from D_0, or over windows of layers (`window`)."""
    id: str
    statement: str
    inequalities: tuple[Inequality, ...]
    source: str
    hypotheses: str
    # None when the claim applies to the case, else the reason it does not (the user's error).
    applies: Callable[[Case], str | None] = field(repr=False)
    scope: str = "layer"  # "layer": every layer; "stack": every prefix of the trajectory; "window": see below
    # scope "window" (certify.core.windows): case -> (first layer, window length, radius of the mask's graph)
    window: Callable[[Case], tuple[int, int, int]] | None = field(default=None, repr=False)

    def __reduce_ex__(self, protocol):
        """A registered claim pickles as its id, unpickled as the registry's own (its tests are often lambdas,
        which pickle cannot name); any other claim (a user's bound) by value."""
        if self.id and _REGISTRY.get(self.id) is self:
            return get, (self.id,)
        return super().__reduce_ex__(protocol)

    def check_applies(self, case: Case) -> None:
        """Return if the claim applies to the case; else raise BadInput with the reason and the claims that do
        apply to it."""
        reason = self.applies(case)
        if reason:
            others = [claim_id for claim_id in applicable(case) if claim_id != self.id]
            fits = f"; claims that apply to this configuration: {', '.join(others)}" if others else ""
            raise BadInput(f"claim {self.id} does not apply: {reason}{fits}")


def applies_always(case: Case) -> None:
    """The test of a claim with no hypotheses: it applies to every configuration."""
    return None


def layers_only(case: Case, about: str, allowed=(), required=()) -> str | None:
    """None when every layer has the `required` components and nothing beyond `allowed` ones
    (keys of certify.core.config.COMPONENTS), else the reason, naming the layer and what the claim is about."""
    for t, layer in enumerate(case.layers):
        where = f"layer {t}" if len(case.layers) > 1 else "the layer"
        present = layer.components()
        missing = [key for key in required if key not in present]
        if missing:
            return f"{where} has no {COMPONENTS[missing[0]]}; the claim is about {about}"
        extra = [COMPONENTS[key] for key in present if key not in allowed and key not in required]
        if extra:
            return f"{where} has {', '.join(extra)}; the claim is about {about}"
    return None


_REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add a claim to the registry and return it; ValueError when its id is already registered."""
    if claim.id in _REGISTRY:
        raise ValueError(f"claim {claim.id} registered twice")
    _REGISTRY[claim.id] = claim
    return claim


@functools.cache  # the families register themselves once; import_module of a loaded one still costs a microsecond
def _load_families() -> None:
    for name in FAMILIES:
        importlib.import_module(name)


def all_claims() -> list[Claim]:
    """Every registered claim, all families loaded, in registration order."""
    _load_families()
    return list(_REGISTRY.values())


def get(claim_id: str) -> Claim:
    """The claim with this id; BadInput for an unknown id, with the closest id as a hint."""
    _load_families()
    if not isinstance(claim_id, str) or claim_id not in _REGISTRY:  # from Python, a list was unhashable
        raise BadInput(f"unknown claim {shown(claim_id)}; {did_you_mean(claim_id, _REGISTRY)}`certify claims` lists them: "
                       f"{', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[claim_id]


def chosen(claim_id) -> str:
    """The id of the claim asked for: DEFAULT for None only.  Any other value is the id given, which get() refuses
    when it names no claim: claim="" (an unset variable) or claim=0 is refused, not read as no claim."""
    return DEFAULT if claim_id is None else claim_id


def applicable(case: Case) -> list[str]:
    """The ids of the claims whose hypotheses on the layers' components hold for the case."""
    return [claim.id for claim in all_claims() if not claim.applies(case)]
