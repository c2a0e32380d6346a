"""Resumable jobs: a task applied to chunks of indices, on an executor, each chunk's result committed
once by the client into a tamper-evident folder (certify.jobs.store), so that a job killed at any
point resumes where it stopped and "decided" is exactly the committed chunks.

This layer knows nothing of configurations or claims: a job is a JSON object of parameters (with
"format" and "count"), and a picklable top-level task(spec, indices) -> ChunkResult (one JSON-able
record per index, whose "i" is the index, and named artefact texts).
"""

from certify.jobs.driver import Report, interrupted, run, started
from certify.jobs.executors import (KINDS, ProcessPool, executor, grid_chunks, pool_map, split, task_key,
                                     worker_init)
from certify.jobs.store import (COMMAND, ChunkResult, Edited, Store, another_kind, earlier, read_manifest, reading,
                                 stated_format, uncommitted)

__all__ = ["COMMAND", "KINDS", "ChunkResult", "Edited", "ProcessPool", "Report", "Store", "another_kind", "earlier",
           "executor", "grid_chunks", "interrupted", "pool_map", "read_manifest", "reading", "run",
           "split", "started", "stated_format", "task_key", "uncommitted", "worker_init"]
