"""certify.jobs: a job's folder commits each chunk once and atomically, resumes to exactly the
committed chunks, rejects tampering and stray artefact paths; chunks are grid-aligned and keyed."""

from __future__ import annotations

import json
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from certify import jobs
from certify.cli import main
from certify.core import files, jsonfile
from certify.errors import BadInput, Interrupted
from certify.jobs import store as stores

PARAMS = {"format": "test-job/1", "count": 30, "base": 3}


def square(spec: dict, indices: list[int]) -> jobs.ChunkResult:
    """A task: one record per index, an artefact for every multiple of 4."""
    return jobs.ChunkResult([{"i": i, "value": spec["base"] * i * i} for i in indices],
                            {f"out/{i}.txt": f"{i}\n" for i in indices if i % 4 == 0})


def _run(folder, workers=1, stop_after=None):
    """One run of the job: the store (closed, still readable) and its report."""
    with jobs.Store.open(folder, PARAMS, outputs=("out",), noun="test job") as store:
        todo = [i for i in range(PARAMS["count"]) if i not in store.decided()]
        with jobs.executor("pool", workers=workers) as executor:
            return store, jobs.run(store, executor, square, PARAMS, jobs.grid_chunks(todo, 3), stop_after=stop_after)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stopped_job_resumes_to_every_index_once(tmp_path, workers):
    store, report = _run(tmp_path, workers, stop_after=4)
    assert 4 <= report.decided < PARAMS["count"] and not report.failed
    first = store.decided()
    store, report = _run(tmp_path, workers)
    records = sorted(store.records(), key=lambda r: r["i"])
    assert [r["i"] for r in records] == list(range(30)) and report.decided == 30 - len(first)
    assert [r["value"] for r in records] == [3 * i * i for i in range(30)]
    assert sorted(int(p.stem) for p in (tmp_path / "out").iterdir()) == list(range(0, 30, 4))
    assert _run(tmp_path, workers)[1].decided == 0


class InterruptedAfterItsChunks:
    """An executor that runs every chunk and commits it, then meets Ctrl-C: as the pool does when the
    interruption comes while it waits for the chunks in flight, which may be the last ones."""

    def execute(self, task, spec, chunks, on_done, on_failed, name=""):
        for chunk in chunks:
            on_done(chunk, task(spec, chunk))
        raise KeyboardInterrupt


def _interrupted_run(folder, todo, asked=None) -> str:
    with jobs.Store.open(folder, PARAMS, outputs=("out",), noun="test job") as store:
        with pytest.raises(Interrupted) as raised:
            jobs.run(store, InterruptedAfterItsChunks(), square, PARAMS, jobs.grid_chunks(todo, 3), asked=asked)
    return str(raised.value)


def test_an_interruption_counts_what_was_asked_for_and_invites_a_rerun_only_when_some_is_left(tmp_path):
    message = _interrupted_run(tmp_path / "part", range(6))
    assert message == f"6 of 30 done, kept in {tmp_path / 'part'}: run the same command again to continue"
    message = _interrupted_run(tmp_path / "limited", range(3), asked=6)
    assert message.startswith("3 of the 6 asked for done (3 of 30 in all), kept in") and "again to continue" in message
    message = _interrupted_run(tmp_path / "limited", range(3, 6), asked=6)
    assert message == f"6 of the 6 asked for done (6 of 30 in all), kept in {tmp_path / 'limited'}: nothing asked for is left to do"
    message = _interrupted_run(tmp_path / "limited", range(6, 30))
    assert message == f"30 of 30 done, kept in {tmp_path / 'limited'}: nothing asked for is left to do"
    # records beyond the limit, from the run without one, are not counted as asked for
    assert _interrupted_run(tmp_path / "limited", [], asked=4).startswith("4 of the 4 asked for done (30 of 30 in all)")


def test_a_chunk_whose_file_a_killed_run_never_wrote_is_not_decided(tmp_path):
    store, _ = _run(tmp_path)
    last = store.manifest["chunks"][-1]["first"]
    (tmp_path / "chunks" / stores.chunk_name(last)).unlink()  # killed between the entry and the file
    assert last not in jobs.Store.read(tmp_path, PARAMS["format"], outputs=("out",)).decided()
    store, report = _run(tmp_path)
    assert report.decided == 3 and store.decided() == set(range(30))


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_a_listed_chunk_that_is_no_file_is_named_so(tmp_path, kind):
    """A chunk the manifest lists before its last, deleted (or a folder in its place), was said not to match its
    digest in manifest.json: the user looked for an edit in a file that is not there."""
    store, _ = _run(tmp_path)
    path = tmp_path / "chunks" / stores.chunk_name(store.manifest["chunks"][0]["first"])
    path.unlink()
    if kind == "folder":
        path.mkdir()
    with pytest.raises(BadInput) as refused:
        jobs.Store.read(tmp_path, PARAMS["format"], outputs=("out",)).decided()
    said = "missing" if kind == "missing" else "not a file"
    assert f"chunks/{path.name}, which manifest.json lists, is {said};" in str(refused.value), refused.value
    assert "digest" not in str(refused.value) and "corrupt or was edited" in str(refused.value), refused.value


@pytest.mark.parametrize("edit", ["record", "reorder", "parameter"])
def test_tampering_is_evident(tmp_path, edit):
    store, _ = _run(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    if edit == "record":
        path = tmp_path / "chunks" / stores.chunk_name(0)
        path.write_text(path.read_text().replace('"value": 3', '"value": 4'))
    elif edit == "reorder":
        manifest["chunks"].reverse()
    else:
        manifest["base"] = 4
    if edit != "record":
        (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BadInput, match="corrupt or was edited") as refused:
        jobs.Store.read(tmp_path, PARAMS["format"], outputs=("out",)).decided()
    assert "--restart" not in str(refused.value)  # a reader (verify) has no --restart to advise


def test_a_manifest_beyond_a_json_limit_names_no_option_to_raise_it(tmp_path):
    """No command raises the JSON limits of a job's folder (--limit digits=N is check's and verify's)."""
    _run(tmp_path)
    path = tmp_path / "manifest.json"
    path.write_text(path.read_text().replace("3", "3" * 4001, 1))
    with pytest.raises(BadInput, match="above the limit of 4000") as raised:
        jobs.Store.read(tmp_path, PARAMS["format"], outputs=("out",)).decided()
    assert "--limit" not in str(raised.value)


def test_another_job_in_the_folder_is_refused(tmp_path):
    _run(tmp_path)
    with pytest.raises(BadInput, match="holds another test job .different base"):
        jobs.Store.open(tmp_path, {**PARAMS, "base": 5}, noun="test job")


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("restart", [False, True])
def test_another_kind_of_job_in_the_folder_is_refused_and_never_discarded(tmp_path, capsys, restart):
    """A folder of another kind of job (a `model --corpus` run where `sample --out` goes) is neither corrupt nor
    this job's: the refusal invited --restart, which removed its manifest, chunks and outputs and then refused
    the folder anyway (what was left is "not a campaign folder"), so its work was lost on bad input."""
    _run(tmp_path)
    before = folder_bytes(tmp_path)
    with pytest.raises(BadInput, match="holds another kind of job, not a other job .manifest.json of format "
                       "'test-job/1'.; nothing was changed") as refused:
        jobs.Store.open(tmp_path, {**PARAMS, "format": "other-job/1"}, outputs=("out",), noun="other job",
                        restart=restart)
    assert "--restart" not in str(refused.value) and folder_bytes(tmp_path) == before
    # the command line alike: `certify sample --restart` on another job's folder changes nothing
    argv = ["sample", "--n", "3", "--d", "2", "--count", "5", "--out", str(tmp_path), "-q"]
    assert main(argv + (["--restart"] if restart else [])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds another kind of job, not a campaign" in err, err
    assert folder_bytes(tmp_path) == before
    # an earlier version of the same job is still the job's own to discard with --restart (its refusal says so)
    with pytest.raises(BadInput, match="pass --restart"):
        jobs.Store.open(tmp_path, {**PARAMS, "format": "test-job/2"}, outputs=("out",), noun="test job")
    jobs.Store.open(tmp_path, {**PARAMS, "format": "test-job/2"}, outputs=("out",), noun="test job",
                    restart=True).close()
    assert jobs.Store.read(tmp_path, "test-job/2").manifest["chunks"] == []


@pytest.mark.parametrize("name", ["../escape.txt", "/tmp/x.txt", "elsewhere/x.txt", "out/../../x.txt", "out"])
def test_an_artefact_outside_the_outputs_is_refused(tmp_path, name):
    store = jobs.Store.open(tmp_path, PARAMS, outputs=("out",))
    with pytest.raises(ValueError, match="not a path inside out"):
        store.commit(0, jobs.ChunkResult([{"i": 0}], {name: "x"}))
    assert store.decided() == set()


@pytest.mark.parametrize("name", ["out/.x.txt", "out/.lock", "out/.inner/x.txt"])
def test_an_artefact_of_a_hidden_name_is_refused(tmp_path, name):
    """The folder's checks pass over hidden entries (.DS_Store): a job writes none, or it would go unchecked."""
    store = jobs.Store.open(tmp_path, PARAMS, outputs=("out",))
    with pytest.raises(ValueError, match="a hidden name"):
        store.commit(0, jobs.ChunkResult([{"i": 0}], {name: "x"}))
    assert store.decided() == set() and not (tmp_path / "out").exists()


def test_records_for_other_indices_than_the_chunk_are_refused(tmp_path):
    store = jobs.Store.open(tmp_path, PARAMS)
    with pytest.raises(ValueError, match="other indices"):
        jobs.run(store, jobs.ProcessPool(1), _shifted, PARAMS, [[0, 1]])
    assert store.decided() == set()


def _shifted(spec, indices):
    return jobs.ChunkResult([{"i": i + 1} for i in indices])


def _dies_at_6(spec, indices):
    if indices[0] == 6:
        os._exit(1)
    return square(spec, indices)


def test_a_pool_whose_worker_dies_reports_its_chunks_undone_and_the_next_run_does_them(tmp_path, capsys):
    with jobs.Store.open(tmp_path, PARAMS, outputs=("out",)) as store:
        report = jobs.run(store, jobs.ProcessPool(2), _dies_at_6, PARAMS, jobs.grid_chunks(range(30), 3))
    assert 6 in report.failed and 6 not in store.decided()
    err = capsys.readouterr().err
    assert f"{tmp_path}: indices 6..8 were not done (a worker process of the pool died); they are left for the next run" \
        in err, err
    store, report = _run(tmp_path, workers=2)
    assert not report.failed and store.decided() == set(range(30))


def test_a_restarted_job_whose_worker_dies_leaves_nothing_for_the_next_run(tmp_path, capsys):
    """A run that restarts its job (certify run restarts its campaigns) said its undone chunks were "left for the next
    run", which restarts the job again and discards them with the rest; nor did it say which job's they were."""
    with jobs.Store.open(tmp_path, PARAMS, outputs=("out",), restart=True) as store:
        report = jobs.run(store, jobs.ProcessPool(2), _dies_at_6, PARAMS, jobs.grid_chunks(range(30), 3))
    assert 6 in report.failed
    err = capsys.readouterr().err
    assert f"{tmp_path}: indices 6..8 were not done (a worker process of the pool died)\n" in err, err
    assert "next run" not in err, err


def _weights(spec, items):
    return [item["w"] * spec for item in items]


@pytest.mark.parametrize("workers", [1, 2])
def test_map_returns_each_chunks_result_in_order_whatever_its_items(workers):
    """map's results follow the chunks' order, chunks of records too (it keyed them by a chunk's first item, so
    the items had to be hashable, and two chunks with the same first item would have shared one result)."""
    chunks = [[{"w": 1}, {"w": 2}], [{"w": 1}], [{"w": 5}, {"w": 6}, {"w": 7}]]
    assert jobs.ProcessPool(workers).map(_weights, 10, chunks) == [[10, 20], [10], [50, 60, 70]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the workers are forked on Linux")
def test_the_pool_works_whatever_start_method_the_program_chose():
    """Python 3.14 starts a pool's workers from a fork server on Linux, as a program using the API may choose to:
    worker_init took that server for a parent that had died, and every worker left at once, no chunk ever done."""
    import multiprocessing

    chosen = multiprocessing.get_start_method()
    multiprocessing.set_start_method("forkserver", force=True)
    try:
        assert jobs.ProcessPool(2).map(_weights, 10, [[{"w": 1}], [{"w": 2}], [{"w": 3}]]) == [[10], [20], [30]]
    finally:
        multiprocessing.set_start_method(chosen, force=True)


def test_chunks_follow_the_grid_and_keys_name_their_indices():
    assert list(jobs.grid_chunks([0, 1, 2, 4, 5, 9, 10, 11], 3)) == [[0, 1, 2], [4, 5], [9, 10, 11]]
    assert jobs.task_key("ab" * 32, [3, 4]) != jobs.task_key("ab" * 32, [3, 5])
    assert jobs.task_key("ab" * 32, [3, 4]) == jobs.task_key("ab" * 32, [3, 4])
    assert jobs.task_key("ab" * 32, [3, 4]) != jobs.task_key("cd" * 32, [3, 4])


SAMPLE = ["sample", "--n", "4", "--d", "3", "--count", "5", "--no-progress"]


def test_dask_missing_exits_2_with_the_install_hint(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    monkeypatch.delitem(sys.modules, "certify.jobs.on_dask", raising=False)
    assert main([*SAMPLE, "--out", str(tmp_path / "o"), "--executor", "dask"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'certify[dask]'" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("extra", [["--scheduler", "tcp://127.0.0.1:1"],
                                   ["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"]])
def test_scheduler_options_out_of_place_exit_2(tmp_path, capsys, extra):
    assert main([*SAMPLE, "--out", str(tmp_path / "o"), *extra]) == 2
    assert capsys.readouterr().err.startswith("certify: error: ")


# --- one run at a time -------------------------------------------------------------------------

SMALL = ["sample", "--n", "3", "--d", "2", "--count", "4", "--seed", "3", "--workers", "1", "-q"]


def test_a_folder_held_by_a_run_is_refused_to_a_second_run_and_to_verify(tmp_path, capsys):
    """Two runs on one folder each keep their own manifest and overwrite the other's entries (a chunk
    file left unlisted, the folder refused as corrupt ever after): the second is refused instead, and a
    verify, which would read chunks and a manifest changing under it, too."""
    out = tmp_path / "c"
    assert main([*SMALL, "--stop-after", "1", "--out", str(out)]) == 3
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    from certify.search import campaign  # the manifest of the same campaign: only the lock can tell them apart

    held = jobs.Store.open(out, jobs.Store.read(out, campaign.FORMAT).parameters, noun="campaign")
    for argv in ([*SMALL, "--out", str(out)], [*SMALL, "--out", str(out), "--restart"], ["verify", str(out), "-q"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("certify process" in err or "being written" in err), err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before  # nothing written
    held.close()
    assert main([*SMALL, "--out", str(out)]) == 0  # released: the run goes on


def test_a_killed_run_leaves_no_lock_behind(tmp_path):
    """The system releases the lock with the process: a run killed with SIGKILL does not block the next."""
    code = ("import sys, time; from certify import jobs; "
            f"store = jobs.Store.open(sys.argv[1], {PARAMS!r}); print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(BadInput, match="in use by another certify process"):
            jobs.Store.open(tmp_path, PARAMS)
    finally:
        holder.kill()
        holder.wait()
    with jobs.Store.open(tmp_path, PARAMS) as store:
        assert store.decided() == set()


def test_a_new_folder_is_locked_before_anything_is_written_in_it(tmp_path):
    """A second run that sees the lock file of a run that has only begun is told "in use", never "not a
    job folder"; a folder of other files is still refused before a lock file is left in it."""
    with jobs.Store.open(tmp_path / "new", PARAMS):
        (tmp_path / "new" / "manifest.json").unlink()  # as a run that has made the lock file and nothing else
        with pytest.raises(BadInput, match="in use"):
            jobs.Store.open(tmp_path / "new", PARAMS)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(BadInput, match="not empty"):
        jobs.Store.open(tmp_path / "other", PARAMS)
    assert sorted(p.name for p in (tmp_path / "other").iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("fraction", [0.0, 0.3, 0.7, 0.99])
@pytest.mark.parametrize("name", ["manifest.json", "chunks/000000000.jsonl", "chunks/000000027.jsonl"])
def test_a_file_cut_short_is_refused_as_corrupt_with_the_way_out(tmp_path, name, fraction):
    """A manifest or chunk cut at any byte (written in place by something else, a disk filling up) is never
    read as fewer records: one line naming the folder as corrupt and --restart as the way out."""
    _run(tmp_path)
    path = tmp_path / name
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * fraction)])
    with pytest.raises(BadInput, match=r"corrupt or was edited, nothing was changed \(move it away, or pass --restart"):
        with jobs.Store.open(tmp_path, PARAMS, outputs=("out",)) as store:
            store.decided()  # what a resumed run reads first
    assert path.read_bytes() == data[:int(len(data) * fraction)]
    with jobs.Store.open(tmp_path, PARAMS, outputs=("out",), restart=True) as store:
        assert store.decided() == set()  # --restart discards it


def test_a_file_system_without_locks_runs_unlocked(tmp_path, monkeypatch):
    """flock refused by the file system (ENOLCK on some network mounts) is no reason to refuse the run."""
    import errno

    def no_locks(handle, operation):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(stores.fcntl, "flock", no_locks)
    store, report = _run(tmp_path)
    assert report.decided == PARAMS["count"] and store.decided() == set(range(PARAMS["count"]))


def test_a_file_written_by_certify_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    """`prove --resume P --out P` rewrites the proof it continues: a Ctrl-C during the write left P truncated.
    Every file certify writes (certificates, job records, the page) is written beside and renamed."""

    proof = tmp_path / "proof.json"
    jsonfile.write({"old": list(range(1000))}, proof)
    before = proof.read_text()

    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        jsonfile.write({"new": list(range(10))}, proof)
    assert proof.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["proof.json"]
    monkeypatch.undo()
    assert jsonfile.read(jsonfile.write({"new": 1}, proof), "proof") == {"new": 1}
    assert files.replace(os.devnull, "special files are written in place") == Path(os.devnull)
    (tmp_path / "link.json").symlink_to(proof)  # a link stays a link: the file it names is replaced
    jsonfile.write({"through": "the link"}, tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink() and jsonfile.read(proof, "proof") == {"through": "the link"}


@pytest.mark.parametrize("workers", [1, 2])
def test_stop_after_starts_no_chunk_beyond_the_one_that_reaches_it(tmp_path, workers):
    """The chunks in flight when enough were committed all finished: up to twice the workers' chunks beyond it."""
    store, report = _run(tmp_path, workers, stop_after=4)
    assert report.decided == 6 and store.decided() == set(range(6))  # chunks of 3: the second reaches 4


# --- a run killed before its first manifest ------------------------------------------------------

def _killed_first_write(out: Path) -> dict[str, bytes]:
    """Plant what a run killed (SIGKILL) while writing its first manifest.json leaves: the lock file, the hidden
    temporary file of that write (cut short), an empty chunks/ and an empty folder of the job's certificates."""
    out.mkdir()
    (out / stores.LOCK).touch()
    temporary = out / ".manifest.json.4242-0badcafe.tmp"
    assert files.temporary(temporary.name)
    temporary.write_text('{"format": "campaign/')
    (out / "chunks").mkdir()
    (out / "certificates").mkdir()
    return {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}


@pytest.mark.parametrize("restart", [False, True])
def test_a_folder_a_run_was_killed_in_before_its_first_manifest_is_started_afresh(tmp_path, capsys, restart):
    """Nothing was committed: the next run starts the campaign there (not "not a campaign folder"), removing the
    leftovers, and verify of the folder says in one line that no run committed anything."""
    out = tmp_path / "c"
    _killed_first_write(out)
    assert main(["verify", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no run has committed anything" in err, err
    assert main([*SMALL, "--out", str(out), *(["--restart"] if restart else [])]) == 0
    assert not [p for p in out.rglob("*") if files.temporary(p.name)]
    assert main(["verify", str(out), "-q"]) == 0
    from certify.search import campaign

    assert campaign.stored_parameters(out)["count"] == 4
    assert jobs.Store.read(out, campaign.FORMAT, outputs=campaign.OUTPUTS).decided() == set(range(4))


@pytest.mark.parametrize("restart", [False, True])
@pytest.mark.parametrize("mine", ["notes.txt", "certificates/mine.json", "chunks/000000000.jsonl", "figures/"])
def test_a_users_file_beside_a_killed_first_runs_leftovers_is_refused_and_kept(tmp_path, capsys, mine, restart):
    """Anything but those leftovers keeps the folder refused, with --restart too, and nothing in it changes."""
    out = tmp_path / "c"
    _killed_first_write(out)
    user = out / mine
    user.mkdir() if mine.endswith("/") else user.write_text("the user's")
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    kinds = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert main([*SMALL, "--out", str(out), *(["--restart"] if restart else [])]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not empty and is not a campaign folder" in err, err
    assert main(["verify", str(out), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "neither a certificate nor a campaign or corpus run folder" in err, err
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == kinds


def test_a_folder_holding_hidden_files_only_is_new_and_keeps_them(tmp_path, capsys):
    """A folder made in macOS Finder holds its .DS_Store: it was "not empty and not a campaign folder"."""
    out = tmp_path / "c"
    _killed_first_write(out)
    for place in (out, out / "chunks"):
        (place / ".DS_Store").write_bytes(b"Bud1")
    assert main([*SMALL, "--out", str(out)]) == 0, capsys.readouterr()
    assert (out / ".DS_Store").read_bytes() == b"Bud1" and main(["verify", str(out), "-q"]) == 0


def test_a_run_killed_while_writing_its_first_manifest_does_not_block_the_next(tmp_path):
    """The same with a real SIGKILL in the write of the first manifest.json (its rename never comes)."""
    out = tmp_path / "c"
    code = ("import os, sys, time; from certify.cli import main\n"
            "real = os.replace\n"
            "def held(source, target):\n"
            "    if str(target).endswith('manifest.json'):\n"
            "        print('writing', flush=True); time.sleep(60)\n"
            "    real(source, target)\n"
            "os.replace = held\n"
            f"main({[*SMALL, '--out', str(out)]!r})\n")
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        assert writer.stdout.readline().strip() == "writing"
    finally:
        writer.kill()
        writer.wait()
    left = sorted(p.name for p in out.iterdir())
    assert stores.LOCK in left and "manifest.json" not in left and any(files.temporary(name) for name in left), left
    assert main([*SMALL, "--out", str(out)]) == 0
    assert main(["verify", str(out), "-q"]) == 0


# --- a --restart killed while it discards the previous job -----------------------------------------

class Killed(BaseException):
    """A run killed outright (SIGKILL) at some removal: those before it made, none after."""


def _killed_at_removal(monkeypatch, removals: int) -> None:
    """Kill the run (Killed) as it begins its (removals + 1)-th removal of a file or a folder."""
    made = []

    def counted(remove):
        def removing(path, *args, **kwargs):
            if len(made) == removals:
                raise Killed
            made.append(path)
            return remove(path, *args, **kwargs)
        return removing

    monkeypatch.setattr(Path, "unlink", counted(Path.unlink))
    monkeypatch.setattr(shutil, "rmtree", counted(shutil.rmtree))


def test_a_restart_killed_while_it_discards_the_folder_leaves_one_the_next_run_resumes(tmp_path, monkeypatch, capsys):
    """--restart removed chunks/, then the outputs, then the manifest: killed in between, it left a manifest listing
    chunks that were gone, which the same command without --restart refused as corrupt or edited.  Killed at any
    removal now, the command without --restart resumes what is left (or, of other parameters, names --restart) and
    the folder verifies."""
    from certify.search import campaign

    whole = tmp_path / "whole"
    assert main([*SMALL, "--out", str(whole)]) == 0
    records = sorted(campaign.records(whole), key=lambda record: record["i"])
    assert len(jobs.Store.read(whole, campaign.FORMAT).manifest["chunks"]) > 1  # some kills fall between chunks
    for removals in itertools.count():
        out = tmp_path / f"killed-{removals}"
        shutil.copytree(whole, out)
        with monkeypatch.context() as patched:
            _killed_at_removal(patched, removals)
            try:
                main([*SMALL, "--out", str(out), "--restart"])
                break  # the restart made all its removals
            except Killed:
                pass
        capsys.readouterr()
        other = [*SMALL[:SMALL.index("--seed") + 1], "4", *SMALL[SMALL.index("--seed") + 2:], "--out", str(out)]
        assert main(other) in (0, 2)  # another campaign: refused, or started in a folder now new
        err = capsys.readouterr().err
        assert not err or err.count("\n") == 1 and "different --seed); choose another --out or pass --restart" in err, err
        if not err:
            continue
        assert main([*SMALL, "--out", str(out)]) == 0, capsys.readouterr().err
        assert main(["verify", str(out), "-q"]) == 0, capsys.readouterr().out
        assert sorted(campaign.records(out), key=lambda record: record["i"]) == records
    assert removals > 4
