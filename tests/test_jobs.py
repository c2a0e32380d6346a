"""certify.jobs: a job's folder commits each chunk once and atomically, resumes to exactly the
committed chunks, rejects tampering and stray artefact paths; chunks are grid-aligned and keyed."""

from __future__ import annotations

import json
import sys

import pytest

from certify import jobs
from certify.cli import main
from certify.errors import BadInput
from certify.jobs import store as stores

PARAMS = {"format": "test-job/1", "count": 30, "base": 3}


def square(spec: dict, indices: list[int]) -> jobs.ChunkResult:
    """A task: one record per index, an artefact for every multiple of 4."""
    return jobs.ChunkResult([{"i": i, "value": spec["base"] * i * i} for i in indices],
                            {f"out/{i}.txt": f"{i}\n" for i in indices if i % 4 == 0})


def _run(folder, workers=1, stop_after=None):
    store = jobs.Store.open(folder, PARAMS, outputs=("out",), noun="test job")
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


def test_a_chunk_whose_file_a_killed_run_never_wrote_is_not_decided(tmp_path):
    store, _ = _run(tmp_path)
    last = store.manifest["chunks"][-1]["first"]
    (tmp_path / "chunks" / stores.chunk_name(last)).unlink()  # killed between the entry and the file
    assert last not in jobs.Store.read(tmp_path, PARAMS["format"]).decided()
    store, report = _run(tmp_path)
    assert report.decided == 3 and store.decided() == set(range(30))


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
    with pytest.raises(BadInput, match="corrupt or was edited"):
        jobs.Store.read(tmp_path, PARAMS["format"]).decided()


def test_another_job_in_the_folder_is_refused(tmp_path):
    _run(tmp_path)
    with pytest.raises(BadInput, match="holds another test job .different base"):
        jobs.Store.open(tmp_path, {**PARAMS, "base": 5}, noun="test job")


@pytest.mark.parametrize("name", ["../escape.txt", "/tmp/x.txt", "elsewhere/x.txt", "out/../../x.txt", "out"])
def test_an_artefact_outside_the_outputs_is_refused(tmp_path, name):
    store = jobs.Store.open(tmp_path, PARAMS, outputs=("out",))
    with pytest.raises(ValueError, match="not a path inside out"):
        store.commit(0, jobs.ChunkResult([{"i": 0}], {name: "x"}))
    assert store.decided() == set()


def test_records_for_other_indices_than_the_chunk_are_refused(tmp_path):
    store = jobs.Store.open(tmp_path, PARAMS)
    with pytest.raises(ValueError, match="other indices"):
        jobs.run(store, jobs.ProcessPool(1), _shifted, PARAMS, [[0, 1]])
    assert store.decided() == set()


def _shifted(spec, indices):
    return jobs.ChunkResult([{"i": i + 1} for i in indices])


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
