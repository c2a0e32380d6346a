"""The signals that stop a command as Ctrl-C does, and the one way they are handled.

SIGINT (Ctrl-C), SIGTERM (what `kill`, `timeout`, a cluster's scheduler, systemd and `docker stop` send
before SIGKILL) and SIGHUP (the terminal closed) each raise KeyboardInterrupt in the main thread, so the
one path of an interruption serves all three: a campaign commits its running chunks, rewrites its
summary and page, and says how to continue (certify.cli prints that on one line).  The exit status is the
shell's for the signal received, 128 + its number: 130, 143, 129, never a verdict's code.

A signal that was ignored when the command started stays ignored (`nohup` ignores SIGHUP, a shell ignores
SIGINT in a job it starts in the background), and one left to the system (SIGTERM for a program that uses
certify's API) is left to it.  Imports nothing heavy: certify.__main__ loads it before the command line.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# SIGHUP is POSIX only
STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

_last = [signal.SIGINT]  # the stopping signal received last: the exit status says which
_interrupted = [False]  # whether one raised KeyboardInterrupt since install()


def _interrupt(signum: int, frame) -> None:
    _last[0] = signum
    _interrupted[0] = True
    raise KeyboardInterrupt


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _unraisable(hook):
    """sys.unraisablehook that sends a stopping signal again when its KeyboardInterrupt was raised where Python
    only reports an exception (a weakref callback such as the import system's module locks, a __del__), where
    it was lost: `certify run` then went on and exited 0 after a SIGTERM.  It is sent a moment later, from a
    timer's thread: sent now, its handler would run at once, inside this hook, and be lost again.  Anything
    else goes to `hook`."""
    def unraisable(report) -> None:
        if not (isinstance(report.exc_value, KeyboardInterrupt) and _main_thread()):
            hook(report)
            return
        again = threading.Timer(0.01, os.kill, (os.getpid(), _last[0]))
        again.daemon = True  # an exit before it fires does not wait for it
        again.start()
    return unraisable


@contextmanager
def handled() -> Iterator[None]:
    """Inside the block each stopping signal not ignored raises KeyboardInterrupt, noting which it was
    (exit_code); the handlers before it are restored after it (a test calls the command line in-process)."""
    hook = sys.unraisablehook
    previous = install()
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for signum, handler in previous.items():
            if handler is not None:  # a handler installed outside Python (None) cannot be put back
                signal.signal(signum, handler)


def install() -> dict:
    """Each stopping signal not ignored raises KeyboardInterrupt from now on (the `certify` command, from its
    first line); the handlers it replaced, by signal.  Only the main thread can set them: elsewhere nothing."""
    _last[0], _interrupted[0] = signal.SIGINT, False
    if not _main_thread():
        return {}
    previous = {signum: signal.getsignal(signum) for signum in STOPPING}
    for signum, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(signum, _interrupt)
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    return previous


def exit_code() -> int:
    """The shell's status for the stopping signal received last (SIGINT when none was noted).  It also clears
    CPython's note of a Ctrl-C that left a string's exec (dataclasses and scipy exec code as they load), which
    `python -m` acts on at exit by killing itself with SIGINT, whatever the code (a SIGTERM exited 130):
    every exec of a string clears that note as it starts."""
    exec("")
    return 128 + _last[0]


def caused(error: BaseException) -> bool:
    """error was raised by a stopping signal: its KeyboardInterrupt wrapped by the code it landed in while that
    was loading (Python's class creation in a RuntimeError, numpy's initialisation in an ImportError), or an
    ImportError after one was raised: an extension module's initialisation (numpy's, loaded by the command that
    needs it) can drop the KeyboardInterrupt and fail its import with an error of its own."""
    if isinstance(error, ImportError) and _interrupted[0]:
        return True
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def name() -> str:
    """The stopping signal received last, by name: "SIGTERM"."""
    return signal.Signals(_last[0]).name


def interrupted_line(detail: str = "") -> str:
    """The one line of an interruption (certify.cli prints it): the signal when it was not Ctrl-C, and what the
    work stopped says of itself (certify.errors.Interrupted: what is kept where, and how to continue)."""
    how = "" if _last[0] == signal.SIGINT else f" ({name()})"
    return f"certify: interrupted{how}" + (f"; {detail}" if detail else "")


@contextmanager
def noted(received: list) -> Iterator[None]:
    """Inside the block a stopping signal is only appended to `received` (which signal, noted for exit_code
    too), for the caller to act on where it can (a Dask call is not interrupted halfway, a chunk's entry
    and file are written together).  Only the signals that would interrupt (KeyboardInterrupt): an ignored
    one stays ignored, one left to the system or to a program's own handler stays so.  Only the main thread receives signals: elsewhere nothing changes."""
    if not _main_thread():
        yield
        return

    def note(signum: int, frame) -> None:
        _last[0] = signum
        received.append(signum)

    previous = {signum: signal.getsignal(signum) for signum in STOPPING}
    redirected = [signum for signum, handler in previous.items()
                  if handler in (_interrupt, signal.default_int_handler)]
    for signum in redirected:
        signal.signal(signum, note)
    try:
        yield
    finally:
        for signum in redirected:
            signal.signal(signum, previous[signum])


@contextmanager
def deferred() -> Iterator[None]:
    """A stopping signal inside the block interrupts when the block ends."""
    received: list[int] = []
    with noted(received):
        yield
    if received:
        raise KeyboardInterrupt


def block_in_this_thread() -> None:
    """Block the stopping signals in the calling thread, whose threads and processes inherit the mask: a
    Dask cluster's worker processes, started from it, then never take a signal sent to the whole group (a
    blocked signal is never delivered, and nothing in them unblocks it)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, set(STOPPING))


def ignore_in_worker() -> None:
    """A worker process of the pool leaves the stopping signals to the command, which lets the running
    chunks finish and commits them: a terminal's Ctrl-C, `timeout` and a cluster's scheduler signal every
    process of the command, and a worker that died of it would lose its chunk (and break the pool)."""
    for signum in STOPPING:
        signal.signal(signum, signal.SIG_IGN)
