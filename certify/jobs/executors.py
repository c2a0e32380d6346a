"""Where a job's chunks run: in this process, on a process pool (the default), or on Dask.

An executor is a context manager with `kind`, `workers` (the chunks it runs at once, known once it
is entered) and
    execute(task, spec, chunks, on_done, on_failed, name)
which applies task(spec, chunk) to each chunk (a list of indices) of the iterable `chunks`, taken
lazily, at most 2 * workers in flight, and calls on_done(chunk, result) in this process as each
ends; on_failed(chunk, reason) for a chunk the executor gave up on, which stays undone (Dask: its
task kept killing its workers; the pool: a worker died, and the pool stops with the chunks in flight
failed).  On Ctrl-C (or SIGTERM, SIGHUP: certify.signals) no new chunk starts (a caller that wants
fewer chunks gives fewer: jobs.run's stop_after); the running ones are finished and passed to
on_done where the executor can (the pool), then KeyboardInterrupt propagates.  `name` (the job's digest) names the chunks' tasks where an executor
keys them (Dask).  The task and spec must be picklable: a top-level function and plain data.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import chain as concatenated, islice
from multiprocessing import connection

from threadpoolctl import threadpool_limits

from certify import signals
from certify.errors import BadInput

KINDS = ("pool", "dask")
MAX_WORKERS_PER_CORE = 4  # more processes than this only wait for a core, each with its own memory


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system has one (`taskset`, a container's
    or a scheduler's cpuset gives fewer than the machine has), else every core of the machine."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """A process pool whose workers start with worker_init, told this process as their parent.  On Linux they are
    forked from this process, whatever start method Python or the program chose: from a fork server (Python 3.14's
    default there), worker_init took the server for a dead parent and every worker left before its first chunk."""
    forked = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
    return ProcessPoolExecutor(max_workers=workers, mp_context=forked, initializer=worker_init, initargs=(os.getpid(),))


def worker_init(parent: int) -> None:
    """Workers leave Ctrl-C, SIGTERM and SIGHUP to the parent (which finishes the running chunks and
    stops), and die with it if it is killed (Linux), instead of waiting forever for work: by SIGKILL,
    the signal they do not ignore."""
    signals.ignore_in_worker()
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died between the fork and the line above: no signal will come
        os._exit(1)
    # One BLAS thread per worker: the workers already fill the cores, and a threaded BLAS on the
    # small matrices of a configuration only waits for its own threads (or another worker's).
    threadpool_limits(1)


def task_key(name: str, chunk: list[int]) -> str:
    """A chunk's task key: the job's digest, the chunk's first index, and a digest of its indices
    (so that a key never stands for two different chunks, whatever the chunking)."""
    indices = hashlib.sha256(",".join(map(str, chunk)).encode()).hexdigest()[:12]
    return f"certify-{name[:16]}-{chunk[0]:09d}-{indices}"


class ProcessPool:
    """Chunks on a pool of `workers` processes of this machine; one worker runs them in this process."""

    kind = "pool"

    def __init__(self, workers: int | None = None, option: str = "workers"):
        cores = usable_cores()
        self.workers = cores if workers is None else workers
        # each worker process holds its own interpreter, numpy and flint: --workers 2^64 crashed in islice, and
        # 100000 would start a process per chunk, far beyond what the cores can run
        if not 1 <= self.workers <= MAX_WORKERS_PER_CORE * cores:
            raise BadInput(f"{option} must be from 1 to {MAX_WORKERS_PER_CORE * cores} ({MAX_WORKERS_PER_CORE} per core "
                           f"of the {cores} here), got {self.workers}")

    def __enter__(self) -> "ProcessPool":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def execute(self, task, spec, chunks, on_done, on_failed, name: str = "") -> None:
        """The executor contract (module docstring): chunks on the process pool, at most 2 * workers in
        flight, or in this process when only one chunk or worker; a dead worker fails the chunks in flight
        and stops the pool."""
        chunks = iter(chunks)
        first = list(islice(chunks, self.workers))  # no more processes than chunks
        workers, chunks = max(1, len(first)), concatenated(first, chunks)
        if workers == 1:
            with threadpool_limits(1):  # as in the pool's workers (worker_init): one BLAS thread
                for chunk in chunks:
                    on_done(chunk, task(spec, chunk))
            return
        with worker_pool(workers) as pool:
            running: dict = {}
            interrupted = False
            try:
                while True:
                    while len(running) < 2 * workers:
                        chunk = next(chunks, None)
                        if chunk is None:
                            break
                        try:
                            # the first submit forks the workers, which take this process's handlers until
                            # worker_init: a signal then is noted (in them, harmlessly) and acted on here after it
                            with signals.deferred():
                                running[pool.submit(task, spec, chunk)] = chunk
                        except BrokenProcessPool:
                            return _drain(pool, running, on_done, on_failed)
                    if not running:
                        return
                    done, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in done:
                        if isinstance(future.exception(), BrokenProcessPool):
                            return _drain(pool, running, on_done, on_failed)
                        on_done(running.pop(future), future.result())
            except KeyboardInterrupt:
                interrupted = True
                for future in running:
                    future.cancel()
                finished = [future for future in wait(running).done if not future.cancelled()]
                # a chunk whose worker died meanwhile (killed) stays undone, for the next run
                lost = [future for future in finished if isinstance(future.exception(), BrokenProcessPool)]
                for future in finished:
                    if future not in lost:
                        on_done(running[future], future.result())
                if lost:
                    kill_workers(pool)
            if interrupted:
                raise KeyboardInterrupt

    def map(self, task, spec, chunks: list[list], on_each=None) -> list:
        """task(spec, chunk) for each of these disjoint chunks, in order (nothing committed);
        `on_each(result)` is called as each chunk finishes, in any order (progress)."""
        # by the chunk's place in `chunks` (execute hands on_done the chunk objects it was given): a chunk's items
        # need not be hashable indices
        place = {id(chunk): k for k, chunk in enumerate(chunks)}
        results: dict[int, object] = {}

        def keep(chunk: list, result) -> None:
            results[place[id(chunk)]] = result
            if on_each is not None:
                on_each(result)

        self.execute(task, spec, chunks, keep, _raise)
        return [results[k] for k in range(len(chunks))]


def split(items: list, workers: int | None, most: int | None = None) -> list[list]:
    """`items` in about four consecutive tasks per worker of ProcessPool(workers), of at most `most` items each:
    tasks small enough that Ctrl-C waits little for those in flight and progress moves often."""
    size = max(1, min(most or len(items), -(-len(items) // (4 * ProcessPool(workers).workers))))
    return [items[k:k + size] for k in range(0, len(items), size)]


def pool_map(task, spec, chunks: list[list], workers: int | None, progress, total: int, before: int = 0) -> list:
    """task(spec, chunk) for each chunk on ProcessPool(workers), the rows of every chunk in order; progress(before
    + rows done, total) as chunks finish (progress None: nothing is reported)."""
    done = 0

    def count(rows) -> None:
        nonlocal done
        done += len(rows)
        if progress is not None:
            progress(before + done, total)

    return [row for rows in ProcessPool(workers).map(task, spec, chunks, on_each=count) for row in rows]


def _drain(pool: ProcessPoolExecutor, running: dict, on_done, on_failed) -> None:
    """A worker of the pool died (killed, out of memory), and the pool with it: each chunk in flight
    is either done (on_done) or lost (on_failed)."""
    for future in wait(running).done:
        if isinstance(future.exception(), BrokenProcessPool):
            on_failed(running[future], "a worker process of the pool died")
        else:
            on_done(running[future], future.result())
    kill_workers(pool)


def kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL the workers of a pool whose results nobody takes any more (broken, or its command interrupted): it
    stops them with SIGTERM, which they ignore (worker_init), and would wait for their tasks before it can shut
    down."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, ValueError):  # ended already, or closed
            pass


def ended_worker(pool: ProcessPoolExecutor) -> int | None:
    """The exit code of a worker process of `pool` that has ended (what broke the pool), as multiprocessing gives it
    (-N: killed by signal N), or None when none is known to have ended."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    ended = set(connection.wait([process.sentinel for process in processes], timeout=0))
    for process in processes:
        if process.sentinel in ended:
            # Its status is there moments after its sentinel, from whichever thread reaps it: the pool's manager
            # thread polls its workers too after a break, and the poll that loses that race reads no status (the
            # status is set by the winner a moment later), so it is read until it is there, a second at most.
            deadline = time.monotonic() + 1
            while process.exitcode is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if process.exitcode is not None:
                return process.exitcode
    return None


def _raise(chunk: list[int], reason: str) -> None:
    raise RuntimeError(f"indices {chunk[0]}..{chunk[-1]} were not done: {reason}")


def executor(kind: str = "pool", *, workers: int | None = None, scheduler: str | None = None,
             option: str = "workers"):
    """The executor `kind` (not started: enter it), or BadInput (`workers` refused named as `option`).

    pool: `workers` processes (default every core).  dask: an embedded LocalCluster of `workers`
    single-threaded worker processes on this machine, or the cluster of the Dask scheduler at
    `scheduler` (e.g. tcp://host:8786), whose workers must be able to import certify.
    """
    if kind not in KINDS:
        raise BadInput(f"unknown executor {kind!r}; known executors: {', '.join(KINDS)}")
    if scheduler is not None and kind != "dask":
        raise BadInput("--scheduler is the address of a Dask scheduler: give it with --executor dask")
    if kind == "pool":
        return ProcessPool(workers, option)
    if scheduler is not None and workers is not None:
        raise BadInput("with --scheduler the cluster's workers run the chunks: leave out --workers")
    try:
        from certify.jobs.on_dask import Dask
    except ImportError as err:
        raise BadInput(f"--executor dask needs Dask distributed, which is not installed ({err}); "
                       "install it with: pip install 'certify[dask]'") from None
    return Dask(workers=ProcessPool(workers, option).workers if scheduler is None else None, scheduler=scheduler)


def grid_chunks(indices, size: int):
    """The indices (ascending) grouped by the grid of `size`: chunk k holds those in [k size, (k+1) size).
    A generator: the chunks are made as the executor takes them."""
    indices = iter(indices)
    chunk: list[int] = []
    for i in indices:
        if chunk and i // size != chunk[0] // size:
            yield chunk
            chunk = []
        chunk.append(i)
    if chunk:
        yield chunk

