"""Working precision of the ball arithmetic, in bits, and the one adaptive-precision loop.

Every certified computation runs at rising precision until it is decided: start low (most cases
decide at 53 bits), multiply by a factor (2 unless a caller's steps are costly enough to skip
some), clip the last step to the cap, and report what the last precision tried found when even
the cap does not decide.
"""

from __future__ import annotations

from typing import Callable, Iterator, TypeVar

import flint

START_PRECISION = 53
DEFAULT_MAX_PRECISION = 1 << 16
PRECISION_LIMIT = 1 << 20  # beyond this a request is absurd, not ambitious

T = TypeVar("T")


def ladder(start: int, cap: int, factor: int = 2) -> Iterator[int]:
    """start, factor start, factor^2 start, ... and at last cap itself (the last step clipped to it)."""
    precision = start
    while True:
        yield precision
        if precision >= cap:
            return
        precision = min(factor * precision, cap)


def escalate(attempt: Callable[[int], T], done: Callable[[T], bool], start: int, cap: int,
             factor: int = 2) -> tuple[T, int]:
    """Run attempt(precision) inside flint.ctx.workprec(precision) for each precision of the ladder
    until done(result); return (result, precision) of the deciding attempt, or of the last one."""
    for precision in ladder(start, cap, factor):
        with flint.ctx.workprec(precision):
            result = attempt(precision)
            if done(result):
                break
    return result, precision


def highest_allowed(start: int, cap: int, refusal: Callable[[int], str | None], factor: int = 2) -> tuple[int, str | None]:
    """The highest precision of the ladder that refusal(precision) lets through, and the reason the
    next one was refused (None when the cap itself is allowed).  The start must be allowed."""
    allowed = start
    for precision in ladder(start, cap, factor):
        if reason := refusal(precision):
            return allowed, reason
        allowed = precision
    return allowed, None
