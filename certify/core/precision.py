"""Working precision of the ball arithmetic, in bits, and the one adaptive-precision loop.

Every certified computation runs at rising precision until it is decided: start low (most cases
decide at 53 bits), multiply by a factor (2 unless a caller's steps are costly enough to skip
some), clip the last step to the cap, and report what the last precision tried found when even
the cap does not decide.
"""

from __future__ import annotations

import contextlib
import math
import os
import threading
from typing import Callable, Iterator, TypeVar

import flint

from certify.errors import BadInput

START_PRECISION = 53
DEFAULT_MAX_PRECISION = 1 << 16
PRECISION_LIMIT = 1 << 20  # beyond this a request is absurd, not ambitious
RESOLVED_BITS = 20  # relative accuracy (about 6 digits) below which a ball counts as unresolved
# certify.core.refine's (defined here, where certify.core.limits prices the refinement without loading numpy):
# the precision from which it refines a norm's witness, and its iteration's extra bits: splitting two singular values
# 2^-g apart (relative) loses g bits of the correction (E's divisor), so a pair binary64's rounding of A split (some
# 2^-50 apart) is still resolved to `bits` after the iterate is rounded to them.
REFINE_FROM = 2 * 53
SPLIT_BITS = 64

T = TypeVar("T")

# python-flint's precision (flint.ctx.prec, which ctx.workprec sets and restores) is one for the whole process, not one
# per thread: checks run in threads (a ThreadPoolExecutor, a Dask worker of several threads) computed at each other's
# precisions, the checker rejected the certificates the engine made (undecided where one thread alone decides), and
# ctx.prec was left at another's.  Arb work takes turns on this lock, one thread at a time (re-entrant: work inside
# work).
_ARB_LOCK = threading.RLock()


def _free_in_child() -> None:
    """A process forked while another thread held the lock (a campaign's pool started beside a check) would wait
    for it forever: the child starts with a lock of its own."""
    global _ARB_LOCK
    _ARB_LOCK = threading.RLock()


os.register_at_fork(after_in_child=_free_in_child)


@contextlib.contextmanager
def arb_turn():
    """This thread's turn at ball arithmetic: no other thread of the process changes the precision meanwhile."""
    with _ARB_LOCK:
        yield


@contextlib.contextmanager
def working(bits: int):
    """flint.ctx.workprec(bits) in this thread's turn (arb_turn): how certify sets the precision of its balls."""
    with arb_turn(), flint.ctx.workprec(bits):
        yield


def ladder(start: int, cap: int) -> Iterator[int]:
    """start, 2 start, 4 start, ... and at last cap itself (the last step clipped to it)."""
    precision = start
    while True:
        yield precision
        if precision >= cap:
            return
        precision = min(2 * precision, cap)


def escalate(attempt: Callable[[int], T], done: Callable[[T], bool], start: int, cap: int,
             factor: int = 2, guess: Callable[[int, T], int | None] | None = None) -> tuple[T, int]:
    """Run attempt(precision) inside flint.ctx.workprec(precision) for each precision of the ladder
    until done(result); return (result, precision) of the deciding attempt, or of the last one.

    guess(precision, result), when given, may name the next precision from what an undecided attempt
    found (None: the ladder's factor).  It is raised to at least factor^(1/2) times the current one (a
    guess that keeps falling short still reaches the cap within about twice the ladder's steps) and
    clipped to the cap."""
    precision = start
    while True:
        with working(precision):
            result = attempt(precision)
            if done(result) or precision >= cap:
                return result, precision
        named = None if guess is None else guess(precision, result)
        following = factor * precision if named is None else max(named, math.ceil(precision * factor ** 0.5))
        precision = min(following, cap)


def highest_allowed(start: int, cap: int, refusal: Callable[[int], str | None]) -> tuple[int, str | None]:
    """The highest precision of the ladder that refusal(precision) lets through, and the reason the
    next one was refused (None when the cap itself is allowed).  The start must be allowed."""
    allowed = start
    for precision in ladder(start, cap):
        if reason := refusal(precision):
            return allowed, reason
        allowed = precision
    return allowed, None


def check_precision_cap(bits: int, option: str = "--max-prec", high: int = PRECISION_LIMIT, why: str = "") -> None:
    """BadInput unless bits is an integer number of bits from START_PRECISION to high (PRECISION_LIMIT unless a
    command's results cannot use more, `why` saying so): the rule and the words of every precision option."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not START_PRECISION <= bits <= high:
        raise BadInput(f"{option} must be an integer from {START_PRECISION} to {high} bits{why}, got {bits!r}")


def is_resolved(x: flint.arb) -> bool:
    """An exact zero, or a ball with at least RESOLVED_BITS bits of relative accuracy: more precision
    would sharpen it, but it already says what it is."""
    return (x.is_zero() and x.is_exact()) or x.rel_accuracy_bits() >= RESOLVED_BITS


def is_wide(x: flint.arb, precision: int) -> bool:
    """Not an exact zero, and fewer bits of relative accuracy than RESOLVED_BITS or half the precision: far wider
    than the arithmetic at this precision leaves a ball, so something magnified an input's width (a ball of 50 bits
    at 1024 does not say that its value agrees with another's to 1024 bits)."""
    return not (x.is_zero() and x.is_exact()) and x.rel_accuracy_bits() < max(RESOLVED_BITS, precision // 2)
