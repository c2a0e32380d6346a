"""The engine: screen -> ball arithmetic with escalating precision -> verdict -> certificate,
each decided verdict confirmed by the independent checker (certify_checker)."""

from certify.core.precision import DEFAULT_MAX_PRECISION, PRECISION_LIMIT, START_PRECISION
from certify.core.verdicts import EXIT_CODES, HOLDS, UNDECIDED, VIOLATED
from certify.engine.decide import Comparison, Result, bound_claim, check, evaluate, resolve_target, short

__all__ = ["Comparison", "DEFAULT_MAX_PRECISION", "EXIT_CODES", "HOLDS", "PRECISION_LIMIT", "Result",
           "START_PRECISION", "UNDECIDED", "VIOLATED", "bound_claim", "check", "evaluate", "resolve_target", "short"]
