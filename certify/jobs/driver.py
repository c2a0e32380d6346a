"""Running a job: its chunks on an executor, each result committed by this process as it arrives."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from certify.errors import Interrupted
from certify.jobs.store import ChunkResult, Store


@dataclass
class Report:
    """What one run of a job did: how many indices it committed, the first index of each chunk the
    executor gave up on (left undone for the next run), and the notes of its chunks (each once)."""
    decided: int = 0  # indices committed by this run
    failed: list[int] = field(default_factory=list)  # the first index of each chunk the executor gave up on
    notes: list[str] = field(default_factory=list)  # ChunkResult.notes, in the order first seen


def run(store: Store, executor, task: Callable[[object, list[int]], ChunkResult], spec, chunks: Iterable[list[int]],
        *, stop_after: int | None = None, on_commit: Callable[[int], None] | None = None,
        asked: int | None = None) -> Report:
    """Apply task(spec, chunk) to the chunks on the (entered) executor and commit each result.

    `asked`: the command asks for the indices 0..asked-1 only (a limit; default all of them), which
    an interruption's message counts against.

    `stop_after`: start no chunk once the chunks started hold this many indices (each is committed: at most
    one chunk's indices beyond it; fewer if a chunk fails).  on_commit(k) after each chunk of k indices.  A chunk the executor gives up on (it
    kept killing its workers) is reported on stderr, naming the job's folder, and in Report.failed, and stays
    undone: the next run of the job takes it again (unless that run restarts the job, as this one did).
    """
    report = Report()

    def done(chunk: list[int], result: ChunkResult) -> None:
        if [record.get("i") for record in result.records] != list(chunk):
            raise ValueError(f"the task returned records for other indices than its chunk {chunk[0]}..{chunk[-1]}")
        store.commit(chunk[0], result)
        report.decided += len(chunk)
        report.notes += [note for note in dict.fromkeys(result.notes) if note not in report.notes]
        if on_commit is not None:
            on_commit(len(chunk))

    def failed(chunk: list[int], reason: str) -> None:
        report.failed.append(chunk[0])
        # a run that restarted the job (certify run restarts its campaigns) leaves nothing: the same command run again
        # discards what this one did, those indices with the rest
        left = "" if store.restarted else "; they are left for the next run"
        print(f"certify: warning: {store.folder}: indices {chunk[0]}..{chunk[-1]} were not done ({reason}){left}",
              file=sys.stderr)

    try:
        executor.execute(task, spec, chunks if stop_after is None else _holding(chunks, stop_after), done, failed,
                         name=store.digest)
    except KeyboardInterrupt:  # the executor has committed what finished: say where it is, and how to go on
        raise interrupted(store, asked) from None
    return report


def _holding(chunks: Iterable[list[int]], count: int) -> Iterator[list[int]]:
    """The chunks until those given hold `count` indices.  Stopping once that many were committed instead let the
    chunks in flight then, up to twice the workers', all finish: 320 decided for --stop-after 100 on 2 workers."""
    given = 0
    for chunk in chunks:
        if given >= count:
            return
        given += len(chunk)
        yield chunk


@contextmanager
def started(store: Store, executor, *, asked: int | None = None) -> Iterator:
    """The executor entered for a run of the store's job (`with jobs.started(store, executor) as runner:`): a
    Ctrl-C while it starts (a Dask cluster's processes take seconds) stops the command as one during the
    run does, saying what is done, where it is kept and how to go on (`asked` as for run)."""
    try:
        executor.__enter__()
    except KeyboardInterrupt:  # the executor closed what it had started
        raise interrupted(store, asked) from None
    try:
        yield executor
    finally:
        executor.__exit__(None, None, None)


def interrupted(store: Store, asked: int | None = None) -> Interrupted:
    """The Interrupted of a run stopped by Ctrl-C (also after its last chunk, while its summary is written): how
    much of what the command asked for is committed (out of the limit `asked` when there is one, and of the whole
    job too), where it is kept, and whether running the same command again has anything left to do (the executor
    may have finished every chunk asked for while it waited for the running ones)."""
    committed = sum(entry["records"] for entry in store.manifest["chunks"])
    if asked is None or asked >= store.count:
        wanted, done, tally = store.count, committed, f"{committed} of {store.count} done"
    else:  # the records beyond the limit were committed by an earlier run with a larger one
        wanted, done = asked, sum(1 for i in store.decided() if i < asked)
        tally = f"{done} of the {asked} asked for done ({committed} of {store.count} in all)"
    if done < wanted:
        # the same command with its restart would discard what is kept and start over
        again = f" without {store.names('restart')}" if store.restarted else ""
        return Interrupted(f"{tally}, kept in {store.folder}: run the same command again{again} to continue")
    return Interrupted(f"{tally}, kept in {store.folder}: nothing asked for is left to do")
