"""`certify sample --executor dask` on a LocalCluster on loopback (2 single-threaded worker processes):
the folder equals a plain single-process run's, record for record and certificate for certificate,
when a worker dies mid-run, when the client is killed and the run repeated, and when a chunk
keeps killing its workers (then the run says incomplete and the next run finishes it)."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import threading
import time

import dask
import pytest
from distributed import Client, LocalCluster
from threadpoolctl import threadpool_info

from certify.cli import main
from certify.search import campaign

import signalled

PLANTED = "(1-exp(-a*D**2/8))*D"  # false on part of the range: violations and holds both certified
SPEC = campaign.Campaign("log-L", 4, 3, 96, 1, bound=PLANTED, L_range=(40.0, 2000.0))
VICTIM = 24  # the first index of a chunk (chunks of 96 / (8 x workers) = 12 or 6 indices, by the workers up)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("single-process")
    summary = campaign.run(SPEC, out, workers=1)
    assert summary["counts"]["violated"] and summary["counts"]["holds"]
    return out, summary


@pytest.fixture(scope="module")
def scheduler():
    # a worker may die once under a task (and the task run again); the second death gives it up
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address=None, scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
            yield cluster.scheduler_address


def _files(out):
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.json"))
            if p.parent.name in ("certificates", "undecided")}


def _assert_equal_folders(out, reference):
    folder, summary = reference
    assert campaign.records(out) == campaign.records(folder)
    assert _files(out) == _files(folder)
    assert campaign.summarize(SPEC.validated(), campaign.records(out)) == {k: v for k, v in summary.items()
                                                                           if k != "run"}


def _dies(marker, spec, indices):
    """The campaign's task, except that the chunk VICTIM kills its worker process: the first time
    only when given a marker file (it is created then), else every time."""
    if indices[0] == VICTIM and (marker is None or not os.path.exists(marker)):
        if marker is not None:
            open(marker, "w").close()
        os._exit(1)
    return campaign.decide_chunk(spec, indices)


def test_a_dask_run_equals_a_single_process_run(tmp_path, reference, scheduler):
    summary = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    assert summary["complete"] and summary["run"]["executor"] == "dask" and summary["run"]["workers"] == 2
    _assert_equal_folders(tmp_path, reference)
    with Client(scheduler, set_as_default=False) as client:  # one BLAS thread in every worker
        libraries = [lib for libs in client.run(threadpool_info).values() for lib in libs]
    assert libraries and all(lib["num_threads"] == 1 for lib in libraries if lib["user_api"] == "blas")


def test_a_worker_killed_mid_run_changes_nothing(tmp_path, reference, scheduler, monkeypatch, capsys):
    marker = tmp_path / "died"
    monkeypatch.setattr(campaign, "decide_chunk", functools.partial(_dies, str(marker)))
    summary = campaign.run(SPEC, tmp_path / "out", executor="dask", scheduler=scheduler)
    assert marker.exists()  # the worker did die under the chunk, which ran again elsewhere
    # and the run said so (it said nothing)
    assert re.search(r"warning: the Dask worker \S+ was lost while it held \d+ chunk", capsys.readouterr().err)
    assert summary["complete"] and not summary["run"]["failed_chunks"]
    _assert_equal_folders(tmp_path / "out", reference)


@pytest.mark.slow  # the variant from outside: SIGKILL to a worker process while the campaign runs
def test_a_worker_process_killed_from_outside_changes_nothing(tmp_path, reference, scheduler):
    with Client(scheduler, set_as_default=False) as client:
        victim = next(iter(client.run(os.getpid).values()))

    def kill_after_the_first_chunk():
        while not list((tmp_path / "chunks").glob("*.jsonl")):
            time.sleep(0.005)
        os.kill(victim, signal.SIGKILL)

    killer = threading.Thread(target=kill_after_the_first_chunk, daemon=True)
    killer.start()
    summary = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    killer.join(timeout=10)
    assert not killer.is_alive() and summary["complete"]
    _assert_equal_folders(tmp_path, reference)


def test_a_chunk_that_keeps_killing_workers_is_left_for_the_next_run(tmp_path, reference, scheduler, monkeypatch,
                                                                      capsys):
    with monkeypatch.context() as patch:
        patch.setattr(campaign, "decide_chunk", functools.partial(_dies, None))
        summary = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    assert VICTIM in summary["run"]["failed_chunks"] and not summary["complete"]
    assert VICTIM not in {r["i"] for r in campaign.records(tmp_path)}
    assert re.search(rf"indices {VICTIM}\.\.\d+ were not done .*KilledWorker", capsys.readouterr().err)
    from certify.cli import sample

    assert sample.exit_code(summary) in (1, 3)  # never "holds" for configurations not decided
    assert sample.exit_code({**summary, "counts": {**summary["counts"], "violated": 0}}) == 3
    left = SPEC.count - len(campaign.records(tmp_path))  # the victim's chunk at least (its size follows the workers up)
    again = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    assert again["complete"] and again["run"]["decided"] == left >= 6
    _assert_equal_folders(tmp_path, reference)


def _start(out):
    code = "import sys; from certify.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "sample", "--distribution", SPEC.distribution, "--bound", SPEC.bound,
            "--L-range", *map(str, SPEC.L_range), "--n", str(SPEC.n), "--d", str(SPEC.d), "--count", str(SPEC.count),
            "--seed", str(SPEC.seed), "--out", str(out), "--executor", "dask", "--workers", "2", "--no-progress"]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def test_a_killed_client_reruns_to_the_single_process_result(tmp_path, reference, scheduler):
    process = _start(tmp_path)
    deadline = time.time() + 90
    while not list((tmp_path / "chunks").glob("*.jsonl")) and time.time() < deadline and process.poll() is None:
        time.sleep(0.01)
    os.kill(process.pid, signal.SIGKILL)  # the client, with its embedded cluster's scheduler
    os.killpg(process.pid, signal.SIGKILL)  # and its worker processes, which would follow it within seconds
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    committed = len(campaign.records(tmp_path))
    assert 0 < committed < SPEC.count  # killed mid-run
    summary = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    assert summary["complete"] and summary["run"]["decided"] == SPEC.count - committed
    _assert_equal_folders(tmp_path, reference)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_the_embedded_cluster_quietly_and_the_run_resumes(tmp_path, reference, scheduler, signum):
    """Ctrl-C reaches the whole foreground group (SIGTERM too, from `timeout` or a cluster's scheduler): the
    cluster's nannies and workers, started blocking it, leave it to the client, which prints one line (no
    worker's traceback) and exits with the signal's status, 130 or 143."""
    process = _start(tmp_path)
    deadline = time.time() + 90
    while not list((tmp_path / "chunks").glob("*.jsonl")) and time.time() < deadline and process.poll() is None:
        time.sleep(0.01)
    os.killpg(process.pid, signum)  # what a terminal (or `timeout`) sends
    _, err = process.communicate(timeout=90)
    if process.returncode in (0, 1):
        pytest.skip("the campaign ended before it could be interrupted")
    line = signalled.interruption_line(err.decode(), signum)
    assert process.returncode == 128 + signum and line.endswith("run the same command again to continue"), err
    assert signalled.group_ended(process)  # the cluster's processes closed with it
    summary = campaign.run(SPEC, tmp_path, executor="dask", scheduler=scheduler)
    assert summary["complete"]
    _assert_equal_folders(tmp_path, reference)


def _children(pid: int) -> list[str]:
    """The child processes of `pid` (of any of its threads: the cluster's IO loop thread spawns the workers)."""
    tasks = f"/proc/{pid}/task"
    try:
        return [c for t in os.listdir(tasks) for c in open(f"{tasks}/{t}/children").read().split()]
    except OSError:  # the process has ended
        return []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_while_the_embedded_cluster_starts_stops_the_command(tmp_path, signum):
    """The cluster's start (a second or two: its worker processes spawned, not yet serving) ignored SIGINT so
    that the workers inherit that, and a Ctrl-C then was lost: the campaign ran to its end.  It now stops the
    command once the start is over, as a Ctrl-C during the run does: one line, exit 130, the resume hint (and
    so does SIGTERM, with 143)."""
    process = _start(tmp_path)
    deadline = time.time() + 60
    while not _children(process.pid) and time.time() < deadline and process.poll() is None:
        time.sleep(0.005)
    os.killpg(process.pid, signum)  # what a terminal (or `timeout`) sends, while the workers start
    sent = time.time()
    _, err = process.communicate(timeout=60)
    line = signalled.interruption_line(err.decode(), signum)
    assert process.returncode == 128 + signum, err
    assert f"0 of {SPEC.count} done" in line and line.endswith("run the same command again to continue"), err
    assert time.time() - sent < 30


def test_a_ctrl_c_during_the_start_is_seen_while_what_starts_blocks_it():
    """The processes the start spawns inherit a blocked SIGINT, SIGTERM and SIGHUP (a worker taking Ctrl-C would
    die with its traceback), yet the Ctrl-C is seen here and raised once the start is over; the handler is
    restored."""
    from certify.jobs import on_dask

    seen = []
    probe = ("import signal; blocked = signal.pthread_sigmask(signal.SIG_BLOCK, []); "
             "print(all(s in blocked for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)))")

    def start():
        seen.append(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip())
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)
        seen.append("started")

    handler = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        on_dask._watching_sigint(start)
    assert seen == ["True", "started"] and signal.getsignal(signal.SIGINT) is handler
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    on_dask._watching_sigint(lambda: seen.append("again"))  # no Ctrl-C: nothing raised
    assert seen[-1] == "again"


@pytest.mark.slow  # an embedded cluster of its own; the killed-client test above runs one too, through the CLI
def test_the_cli_runs_an_embedded_cluster(tmp_path, reference, capsys):
    small = ["sample", "--n", "4", "--d", "3", "--count", "12", "--seed", "1", "--no-progress", "--workers", "2"]
    assert main([*small, "--out", str(tmp_path / "dask"), "--executor", "dask"]) == 0
    assert "(2 workers on Dask" in capsys.readouterr().out
    assert main([*small, "--out", str(tmp_path / "pool"), "--workers", "1"]) == 0
    assert campaign.records(tmp_path / "dask") == campaign.records(tmp_path / "pool")


def test_an_unreachable_scheduler_exits_2(tmp_path, capsys, monkeypatch):
    from certify.jobs import on_dask

    monkeypatch.setattr(on_dask, "CONNECT_TIMEOUT", "1s")
    assert main(["sample", "--n", "4", "--d", "3", "--count", "5", "--no-progress", "--out", str(tmp_path / "o"),
                 "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error: cannot reach the Dask scheduler") and err.count("\n") == 1


def test_a_scheduler_that_never_answers_times_out_in_one_line(tmp_path, capsys, monkeypatch):
    """A port that accepts and never answers: distributed's Client bounds the connection, not the handshake after it,
    and the command hung for ever."""
    import socket

    from certify.jobs import on_dask

    monkeypatch.setattr(on_dask, "CONNECT_TIMEOUT", "1s")
    with socket.create_server(("127.0.0.1", 0)) as mute:
        started = time.time()
        assert main(["sample", "--n", "3", "--d", "2", "--count", "4", "--no-progress", "--out", str(tmp_path / "o"),
                     "--executor", "dask", "--scheduler", f"tcp://127.0.0.1:{mute.getsockname()[1]}"]) == 2
    assert time.time() - started < 30
    err = capsys.readouterr().err
    assert err.startswith("certify: error: cannot reach the Dask scheduler") and "no answer" in err
    assert err.count("\n") == 1


def test_a_workers_address_is_refused_in_one_line(tmp_path, scheduler):
    """A worker's address for the scheduler's: refused, and then the client distributed had half built closed itself
    at exit, 40 s later, with a traceback on stderr."""
    with Client(scheduler, set_as_default=False) as client:
        worker = next(iter(client.scheduler_info()["workers"]))
    done = subprocess.run([sys.executable, "-m", "certify", "sample", "--n", "3", "--d", "2", "--count", "4", "--out",
                           str(tmp_path / "out"), "--executor", "dask", "--scheduler", worker, "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "is a Dask Worker, not a scheduler" in done.stderr


def test_a_thin_head_campaign_on_dask_equals_a_single_process_run(tmp_path, scheduler):
    """--d-k: the campaign's d_k reaches the workers (the configurations they decide are the thin heads)."""
    spec = campaign.Campaign("gaussian", 8, 12, 24, 2, d_k=3)
    summary = campaign.run(spec, tmp_path / "dask", executor="dask", scheduler=scheduler)
    assert summary["run"]["executor"] == "dask" and summary["campaign"]["d_k"] == 3
    campaign.run(spec, tmp_path / "pool", workers=1)
    assert campaign.records(tmp_path / "dask") == campaign.records(tmp_path / "pool")
    assert _files(tmp_path / "dask") == _files(tmp_path / "pool") != {}


@pytest.mark.parametrize("address", ["notaurl", "tcp://host", "zzz://host:8786"])
def test_a_scheduler_address_that_is_none_is_one_line(tmp_path, address):
    """--scheduler notaurl was refused in one line, and then the client distributed had half built closed itself at
    exit: 40 s later, "Exception ignored in Client.__del__" and a traceback on stderr."""
    done = subprocess.run([sys.executable, "-m", "certify", "sample", "--n", "2", "--d", "1", "--count", "4", "--out",
                           str(tmp_path / "out"), "--executor", "dask", "--scheduler", address, "-q"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"certify: error: --scheduler {address!r} is not the address of a Dask scheduler")


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:70000", "127.0.0.1:0", "tcp://[::1]:65536", "tcp://host:-1",
                                     "tcp://host:+80", "tcp://host:1_000", "tcp://host: 8786", "tcp://host:٨٧٨٦"])
def test_a_port_no_scheduler_can_have_is_refused_at_once(tmp_path, capsys, address):
    """A port beyond 65535, 0, or a number int() reads but no address writes so: the command waited 20 s for a
    connection that could never be made, and then said it had timed out."""
    started = time.time()
    assert main(["sample", "--n", "3", "--d", "2", "--count", "4", "--no-progress", "--out", str(tmp_path / "o"),
                 "--executor", "dask", "--scheduler", address]) == 2
    assert time.time() - started < 10
    err = capsys.readouterr().err
    assert err.startswith(f"certify: error: --scheduler {address!r} is not the address of a Dask scheduler"), err
    assert "a port from 1 to 65535" in err and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()
