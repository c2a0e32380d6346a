"""`certify run -j N`: the sections on N worker processes at once, the costliest first.

A section runs whole in one worker, and its rows come back together when it ends.  At most N run at
once, started by their COST, the largest first, so that the runs that end last are short ones and the
workers end close together.  The workers are certify.jobs' (worker_init): one BLAS thread each, the
stopping signals left to this process, killed with it.  A section that starts a pool of its own (the
campaigns, the derivations) gets one process there (SuiteRun.workers = 1): the workers already fill the
cores.  Once the run stops (Ctrl-C, SIGTERM, SIGHUP, an error, or the caller stops reading) the
running sections are killed: a section keeps nothing that finishing it would save (the suite restarts
its campaigns).
"""

from __future__ import annotations

import importlib
import signal
import time
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace

from certify import signals
from certify.errors import KilledFromOutside
from certify.jobs.executors import ended_worker, kill_workers, worker_pool
from certify.suite import Row, SuiteRun


@dataclass
class Event:
    """A section started (rows None) or ended: its rows, its seconds and the exception it raised after them,
    if it failed.  Sections by their place in the list given."""
    index: int
    running: list[int]  # the sections running once this event has happened, in the list's order
    rows: list[Row] | None = None
    seconds: float = 0.0
    error: Exception | None = None


def run(sections: list, state: SuiteRun, jobs: int) -> Iterator[Event]:
    """Run the section modules on `jobs` worker processes; an Event as each starts and as each ends, as they
    happen.  Once a section has failed, no section after it in the list starts (run one after another, they
    would not have run); those before it still run, for the caller to report them before the failure."""
    waiting = sorted(range(len(sections)), key=lambda index: -sections[index].COST)  # stable: ties in list order
    given = replace(state, workers=1, rows=[])
    first_failed = len(sections)
    pool = worker_pool(jobs)
    running: dict = {}
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                index = waiting.pop(0)
                if index > first_failed:
                    continue
                # the first submit forks the workers, which keep this process's handlers until worker_init: a
                # signal then is only noted (in them, harmlessly), and acted on here after it
                with signals.deferred():
                    running[pool.submit(_section, sections[index].__name__, given)] = index
                yield Event(index, sorted(running.values()))
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.get):
                index = running.pop(future)
                if isinstance(future.exception(), BrokenProcessPool):  # killed, out of memory: the pool is gone
                    # with every section running on it, whichever worker died (the pool does not say which)
                    lost = ", ".join(sections[k].TITLE for k in sorted([index, *running.values()]))
                    raise _died(ended_worker(pool), lost) from None
                rows, seconds, error = future.result()
                if error is not None:
                    first_failed = min(first_failed, index)
                yield Event(index, sorted(running.values()), rows, seconds, error)
    finally:
        with signals.deferred():  # a second Ctrl-C does not leave the workers behind
            if running:
                kill_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


# The signals a process's own fault raises in it (a crash: a bug, of certify or of a library it calls); any other
# signal that ends a worker came from outside certify, which sends none to a worker whose sections it waits for
CRASHES = frozenset(getattr(signal, name) for name in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGSYS",
                                                       "SIGTRAP") if hasattr(signal, name))


def _died(code: int | None, lost: str) -> Exception:
    """The error of a worker process that ended with the exit code `code` (ended_worker; None: not known), which
    stopped the sections `lost`: killed by a signal from outside certify (SIGKILL: the system's out-of-memory killer,
    a memory limit, kill -9), KilledFromOutside, no bug; else an internal error saying how it ended (a crash, or an
    exit: a worker returns what its section raises)."""
    stopped = f"which stopped the sections then running: {lost}"
    if code is None:
        return RuntimeError(f"a worker process died (killed, or out of memory), {stopped}")
    if code >= 0:
        return RuntimeError(f"a worker process exited with status {code}, {stopped}")
    try:
        name = signal.Signals(-code).name
    except ValueError:  # a real-time signal, which Signals does not name
        name = f"signal {-code}"
    if -code in CRASHES:
        return RuntimeError(f"a worker process was killed by {name}, {stopped}")
    if -code == signal.SIGKILL:
        return KilledFromOutside(f"a worker process was killed by {name} from outside certify (the system's "
                                 f"out-of-memory killer, a memory limit or kill -9), {stopped}; no report was written: "
                                 "run the command again (a smaller -j uses less memory)")
    return KilledFromOutside(f"a worker process was killed by {name} from outside certify, {stopped}; no report was "
                             "written: run the command again")


def _section(name: str, state: SuiteRun) -> tuple[list[Row], float, Exception | None]:
    """A worker's task: the section module `name` on `state`; its rows, its seconds, and the exception that
    stopped it (with the rows it gave before, which a run one after another prints before the error)."""
    started, rows = time.time(), []
    try:
        for row in importlib.import_module(name).section(state):
            rows.append(row)
    except Exception as error:  # noqa: BLE001 - reported by the caller, in the section's place
        return rows, time.time() - started, error
    return rows, time.time() - started, None
