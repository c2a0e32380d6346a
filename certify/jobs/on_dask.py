"""The Dask executor: a job's chunks as tasks of a Dask distributed cluster (the optional extra
`certify[dask]`), on an embedded LocalCluster of this machine or at a scheduler's address.

Exactly once in effect, at least once in execution: each chunk is one task whose key is the job's
digest, the chunk's first index and a digest of its indices (certify.jobs.executors.task_key), so a
resubmission is the same task and a chunk lost with a dead worker is computed again by the
scheduler.  Workers return records and artefact texts and write nothing; this process commits
each result (certify.jobs.driver).  A chunk whose task keeps killing its workers (the scheduler's
`distributed.scheduler.allowed-failures`, then KilledWorker) is given up on: on_failed, uncommitted,
taken again by the next run.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from multiprocessing import resource_tracker

from dask.utils import parse_timedelta
from distributed import Client, KilledWorker, LocalCluster, WorkerPlugin, as_completed
from distributed.comm import connect, get_address_host_port
from threadpoolctl import threadpool_limits

from certify import signals
from certify.errors import BadInput
from certify.jobs.executors import task_key

CONNECT_TIMEOUT = "20s"  # to reach a scheduler given by its address
POLL_SECONDS = 0.02  # between looks for finished chunks (and for a Ctrl-C)


class OneBlasThread(WorkerPlugin):
    """One BLAS thread in each worker process: its task threads already fill the cores (as the
    process pool's worker_init)."""

    def setup(self, worker) -> None:
        """Limit the worker process to one BLAS thread (threadpoolctl)."""
        threadpool_limits(1)


def _watching_sigint(start) -> None:
    """start() (the cluster's start) with the stopping signals (certify.signals: Ctrl-C's SIGINT, SIGTERM,
    SIGHUP) blocked in the processes it starts, yet one received meanwhile seen.

    Ctrl-C in a terminal reaches every process of the foreground group (SIGTERM from `timeout` or a cluster's
    scheduler, every process of the command), and a worker that took it would die with its traceback on stderr
    while this process commits what has finished (the pool's workers ignore it,
    certify.jobs.executors.worker_init).  The workers used to inherit SIG_IGN, set here for the start, and a
    Ctrl-C during the start (a second or two, more with many workers) was lost with them; and this process
    cannot ignore SIGINT and see it (any of its threads, a BLAS one too, may take a signal sent to it).  So
    start() runs in a thread that blocks the stopping signals, a mask which the threads it starts and the
    processes they spawn inherit (a blocked signal is never delivered: nothing in a worker unblocks it; the
    nannies stop their workers by message, then SIGKILL), while this thread notes a signal.  On one the start
    is waited for (distributed cannot be stopped halfway without its tracebacks) and KeyboardInterrupt raised:
    the caller closes what started.  Outside the main thread, which alone handles signals, start() is called."""
    if threading.current_thread() is not threading.main_thread():
        start()
        return
    failure: list[BaseException] = []

    def run() -> None:
        signals.block_in_this_thread()  # before anything starts
        try:
            start()
        except BaseException as err:  # noqa: BLE001 - raised again in the main thread
            failure.append(err)

    # multiprocessing's resource tracker, started by the first process spawned, unblocks SIGINT and SIGTERM in the
    # thread that starts it (CPython 3.11 restores no mask): that would be the cluster's loop, whose spawns then
    # take Ctrl-C
    resource_tracker.ensure_running()
    interrupted: list[int] = []
    with signals.noted(interrupted):
        starter = threading.Thread(target=run, name="certify-dask-start", daemon=True)
        starter.start()
        while starter.is_alive():
            starter.join(POLL_SECONDS)
    if failure:
        raise failure[0]
    if interrupted:
        raise KeyboardInterrupt


def _report_lost_worker(event: tuple) -> None:
    """Say on stderr that a worker was lost holding chunks (the scheduler's remove-worker event, in the client's
    loop): the scheduler computes them again elsewhere and this process commits each once.  A killed worker was
    otherwise silent (the embedded cluster's logs are silenced) or told only in distributed's own log lines."""
    _, message = event
    if not isinstance(message, dict) or message.get("action") != "remove-worker" or message.get("expected"):
        return
    chunks = {key for field in ("processing-tasks", "lost-computed-tasks") for key in message.get(field) or ()
              if str(key).startswith("certify-")}
    if chunks:
        print(f"certify: warning: the Dask worker {message.get('worker')} was lost while it held {len(chunks)} "
              "chunk(s); they are computed again elsewhere, each committed once", file=sys.stderr)


def _read_address(address: str) -> None:
    """Raise ValueError unless `address` is a scheduler's, host and port, whose port one can connect to: distributed
    reads the port with int(), which takes 70000, 0, "+80" or "1_000", and then waited CONNECT_TIMEOUT for a
    connection that could never be made."""
    get_address_host_port(address)
    port = address.rpartition(":")[2]
    if not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"{port!r} is not a port from 1 to 65535")


def _answering(address: str) -> None:
    """Return once the peer at `address` has said it is a Dask scheduler, else raise TimeoutError within
    CONNECT_TIMEOUT (or OSError, ValueError).  Client() bounds its connection but not the handshake that follows: a
    port that accepts and never answers (a proxy's, a stopped process's) hung the command for ever; and a worker's
    address, refused inside Client(), left a half-built client that closed itself 40 s later with a traceback."""
    seconds = parse_timedelta(CONNECT_TIMEOUT)

    async def identity() -> dict:
        comm = await connect(address, timeout=seconds)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded() -> dict:
        try:
            return await asyncio.wait_for(identity(), seconds)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no answer from {address} within {seconds:g} s") from None

    peer = asyncio.run(bounded())
    if not isinstance(peer, dict) or peer.get("type") != "Scheduler":
        kind = peer.get("type") if isinstance(peer, dict) else None
        raise ValueError(f"the peer there is {'a Dask ' + kind if kind else 'not a Dask scheduler'}, not a scheduler")


class Dask:
    """The Dask executor (module docstring): entered, it starts a loopback LocalCluster of `workers` single-
    threaded processes, or connects to the scheduler at `scheduler` (BadInput when it cannot be reached);
    `workers` is then the cluster's thread count."""
    kind = "dask"

    def __init__(self, *, workers: int | None, scheduler: str | None):
        self.scheduler, self.workers = scheduler, workers
        self.cluster = self.client = None

    def __enter__(self) -> "Dask":
        try:
            if self.scheduler is None:
                _watching_sigint(self._start_embedded)
            else:
                # an address refused inside Client() left a half-built client, which closed itself at exit 40 s
                # later with a traceback on stderr: the address is read first
                try:
                    _read_address(self.scheduler)
                except ValueError as err:
                    raise BadInput(f"--scheduler {self.scheduler!r} is not the address of a Dask scheduler (e.g. "
                                   f"tcp://host:8786): {err}") from None
                try:
                    _answering(self.scheduler)
                    self.client = Client(self.scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
                except (OSError, TimeoutError, ValueError, TypeError) as err:
                    raise BadInput(f"cannot reach the Dask scheduler at {self.scheduler}: {err}") from None
                self._register()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start_embedded(self) -> None:
        """Start the LocalCluster and its client (in _watching_sigint's thread): loopback only, no dashboard,
        the scheduler's HTTP on a free port.  Its own logs below CRITICAL are silenced: certify reports what fails
        (a chunk, a killed worker) in its words, and at an interruption a worker whose heartbeat found the
        scheduler already closed logged an ERROR with its traceback."""
        self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                    host="127.0.0.1", dashboard_address=None, silence_logs=logging.CRITICAL,
                                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
        self.client = Client(self.cluster, set_as_default=False)
        self._register()

    def _register(self) -> None:
        self.client.register_plugin(OneBlasThread(), name="certify-one-blas-thread")
        self.client.subscribe_topic("all", _report_lost_worker)
        self.workers = max(1, sum(self.client.nthreads().values()))

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            # first, on the same stream as the close: else the scheduler sends the client's own remove-client event
            # to the closed client, and the embedded one logs that with a traceback
            self.client.unsubscribe_topic("all")
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        self.client = self.cluster = None

    def execute(self, task, spec, chunks, on_done, on_failed, name: str = "") -> None:
        """The executor contract (certify.jobs.executors); on Ctrl-C the chunks already computed
        are passed to on_done and the others cancelled.  Ctrl-C is noted and acted on between Dask's
        calls, never inside one: raised in the middle of a blocking call of distributed, it escapes as
        distributed's own errors (a NameError logged with its traceback, an UnboundLocalError), which
        would read as a bug of certify (exit 4) instead of an interruption (130)."""
        chunks = iter(chunks)
        running: dict = {}  # future -> chunk

        def refill() -> list:
            """Submit chunks up to the window (2 tasks per worker thread); the new futures."""
            new = []
            while len(running) < 2 * self.workers:
                chunk = next(chunks, None)
                if chunk is None:
                    break
                new.append(self.client.submit(task, spec, chunk, key=task_key(name, chunk)))
                running[new[-1]] = chunk
            return new

        interrupted: list[int] = []  # Ctrl-C (or SIGTERM, SIGHUP), noted, acted on below
        with signals.noted(interrupted):
            try:
                flow = as_completed(refill(), loop=self.client.loop)
                while not flow.is_empty():
                    if interrupted:
                        raise KeyboardInterrupt
                    batch = flow.next_batch(block=False)  # without blocking in distributed: Ctrl-C is seen
                    if not batch:
                        time.sleep(POLL_SECONDS)
                    for future in batch:
                        chunk = running.pop(future)
                        if future.status == "error" and isinstance(future.exception(), KilledWorker):
                            on_failed(chunk, "its task killed the workers that ran it: Dask's KilledWorker")
                        else:
                            on_done(chunk, future.result())  # a task's own exception is raised here
                        future.release()
                        flow.update(refill())
            except KeyboardInterrupt:
                for future, chunk in list(running.items()):
                    if future.status == "finished":
                        on_done(chunk, future.result())
                    else:
                        future.cancel()
                raise
            finally:
                for future in running:
                    future.cancel()
