"""The engine: ball arithmetic with escalating precision -> verdict -> certificate, each decided
verdict confirmed by the independent checker (certify_checker); the float64 screen on request.

The deciding machinery (certify.engine.decide, with numpy and the arithmetic) is imported on
first use of one of its names, so that reading a certificate (`certify verify`) does not load it.
"""

from certify.core.precision import DEFAULT_MAX_PRECISION, PRECISION_LIMIT, START_PRECISION
from certify.core.verdicts import EXIT_CODES, HOLDS, UNDECIDED, VIOLATED

_DECIDE = ("Comparison", "Result", "Target", "admit", "bound_claim", "check", "checked", "evaluate", "preflight", "resolve_target",
           "short", "target")

__all__ = ["DEFAULT_MAX_PRECISION", "EXIT_CODES", "HOLDS", "PRECISION_LIMIT", "START_PRECISION", "UNDECIDED",
           "VIOLATED", *_DECIDE]


def __getattr__(name):
    if name in _DECIDE:
        from certify.engine import decide

        # kept here, so that later reads find it without this call (a campaign's engine.check, 2.5 us a check)
        value = globals()[name] = getattr(decide, name)
        return value
    raise AttributeError(f"module 'certify.engine' has no attribute {name!r}")
