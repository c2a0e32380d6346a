"""SIGTERM (what `timeout`, a cluster's scheduler, systemd and `docker stop` send before SIGKILL) and SIGHUP stop
a command as Ctrl-C does: the same clean stop, the same one line, the shell's status for the signal (143, 129),
never a verdict's code nor a traceback (certify.signals).  The resumable commands' resumption is tested next to
their Ctrl-C: test_sample, test_dask_executor, test_attack_resume, test_region_proofs, test_models_corpus."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import weakref

import pytest

from certify import signals
from certify.search import campaign

import signalled


@pytest.fixture
def own_handlers():
    """The test process's handlers, put back after a test that installs certify's."""
    handlers = {signum: signal.getsignal(signum) for signum in signals.STOPPING}
    yield
    for signum, handler in handlers.items():
        signal.signal(signum, handler)


# --- the module -------------------------------------------------------------------------------


def test_a_signal_during_a_deferred_block_interrupts_at_its_end_with_its_status(own_handlers):
    done = []
    with signals.handled():
        with pytest.raises(KeyboardInterrupt):
            with signals.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                done.append("the block went on")
        assert done and signals.exit_code() == 143 and signals.interrupted_line("x") == \
            "certify: interrupted (SIGTERM); x"
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGHUP)
        assert signals.exit_code() == 129
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handlers before it, back
    with signals.handled():
        assert signals.exit_code() == 130 and signals.interrupted_line() == "certify: interrupted"


def test_a_signal_inside_a_weakref_callback_still_interrupts(own_handlers):
    """A stopping signal whose handler runs inside a weakref callback (the import system's module locks use
    them) raises its KeyboardInterrupt where Python only reports it: `certify run -j 2` given SIGTERM in an
    import printed "Exception ignored in ... KeyboardInterrupt", went on and exited 0.  It is sent again."""
    class Thing:
        pass

    with signals.handled():
        with pytest.raises(KeyboardInterrupt):
            thing = Thing()
            ref = weakref.ref(thing, lambda _: os.kill(os.getpid(), signal.SIGTERM))
            del thing
            for _ in range(500):  # the code that runs next (at most 5 s)
                time.sleep(0.01)
        assert ref() is None and signals.exit_code() == 143


def test_python_m_exits_with_the_signals_status_after_a_signal_in_an_exec(tmp_path):
    """dataclasses and scipy exec strings as they load: a SIGTERM there left CPython's note of an unhandled Ctrl-C,
    and `python -m certify` exited by SIGINT (130) after its line said SIGTERM."""
    (tmp_path / "interrupted_exec.py").write_text(
        "import os, signal, sys\nfrom certify import signals\nwith signals.handled():\n    try:\n"
        "        exec('os.kill(os.getpid(), signal.SIGTERM)')\n    except KeyboardInterrupt:\n"
        "        sys.exit(signals.exit_code())\n")
    path = os.pathsep.join([str(tmp_path), *sys.path])
    done = subprocess.run([sys.executable, "-m", "interrupted_exec"], env=dict(os.environ, PYTHONPATH=path),
                          capture_output=True, timeout=60)
    assert done.returncode == 143, done.stderr


def test_a_signal_that_a_loading_module_wrapped_is_an_interruption(monkeypatch, own_handlers, capsys):
    """A KeyboardInterrupt raised while a class is made comes back as a RuntimeError (numpy's initialisation: an
    ImportError): `certify run` given SIGTERM then said "internal error" and exited 4."""
    from certify.cli import claims, main

    def loading(args):
        signals._last[0] = signal.SIGTERM  # as the handler notes it
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as err:
            raise RuntimeError("Error calling __set_name__") from err

    monkeypatch.setattr(claims, "run", loading)
    assert main(["claims"]) == 143
    assert capsys.readouterr().err == "certify: interrupted (SIGTERM)\n"


def test_a_signal_that_a_loading_extension_dropped_is_an_interruption(monkeypatch, own_handlers, capsys):
    """numpy is loaded by the commands that need it, when they run: a SIGTERM inside its initialisation failed the
    import with numpy's own ImportError, which holds no KeyboardInterrupt ("internal error", exit 4)."""
    from certify.cli import claims, main

    def loading(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)  # certify's handler raises KeyboardInterrupt here
            time.sleep(1)
        except KeyboardInterrupt:  # dropped, as C code does
            pass
        raise ImportError("IMPORTANT: PLEASE READ THIS FOR ADVICE ON HOW TO SOLVE THIS ISSUE!")

    monkeypatch.setattr(claims, "run", loading)
    assert main(["claims"]) == 143
    assert capsys.readouterr().err == "certify: interrupted (SIGTERM)\n"
    monkeypatch.setattr(claims, "run", lambda args: __import__("certify.no_such_module"))
    assert main(["claims"]) == 4  # without a signal, an ImportError is certify's bug


def test_an_ignored_signal_stays_ignored_and_one_left_to_the_system_stays_so(own_handlers):
    """`nohup` ignores SIGHUP: a command started under it must not stop when the terminal closes.  A program that
    uses the API and leaves SIGTERM to the system is not changed by a chunk's commit either."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    with signals.handled():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        with signals.deferred():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    with signals.deferred():
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


# --- the commands -----------------------------------------------------------------------------

LOADING = """
import builtins, os, signal, sys
real = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "certify.cli":  # the signal arrives while the command line loads
        os.kill(os.getpid(), signal.SIGTERM)
    return real(name, *args, **kwargs)
builtins.__import__ = importing
sys.argv = ["certify", "check", "nothing.json"]
from certify.__main__ import entry
entry()
"""


def test_sigterm_while_the_command_line_loads_is_one_line_and_exit_143():
    """Before, SIGTERM then ended the process silently (killed by the signal); now as Ctrl-C then does."""
    run = subprocess.run([sys.executable, "-c", LOADING], capture_output=True, text=True, timeout=120)
    assert run.returncode == 143 and run.stderr == "certify: interrupted (SIGTERM)\n" and not run.stdout


def test_sigterm_stops_a_trajectory_with_one_line_and_writes_nothing_half(tmp_path):
    out = tmp_path / "t"
    argv = ["trajectory", "examples/stack.json", "--layers", "6", "--out", str(out), "-q"]
    process = signalled.start(argv, at=("certify.studies.trajectory", "_trace_at", 1, signal.SIGTERM))
    code, stdout, err = signalled.finish(process)
    assert code == 143 and signalled.interruption_line(err, signal.SIGTERM) == "certify: interrupted (SIGTERM)"
    assert not stdout and not out.exists()


@pytest.fixture(scope="module")
def campaign_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    campaign.run(campaign.Campaign("gaussian", 4, 3, 1000, 1), out, workers=2)
    return out


def test_sigterm_to_the_group_stops_verify_all_and_its_workers_quietly(campaign_folder):
    """`timeout` and a scheduler signal every process of the command: the pool's workers leave it to the command,
    which stops within the running chunks, says so in one line and exits 143, leaving no worker behind."""
    process = signalled.start(["verify", str(campaign_folder), "--all", "--workers", "2", "--progress"])
    seen = []

    def counting() -> bool:  # the progress bar has counted a configuration
        seen.append(os.read(process.stderr.fileno(), 4096))
        return re.search(rb"\| *[1-9][0-9]*/", b"".join(seen)) is not None

    signalled.wait_for(counting, process)
    signalled.send_to_group(process, signal.SIGTERM)
    code, _, err = signalled.finish(process)
    if code == 0:
        pytest.skip("the verification ended before it could be interrupted")
    lines = [line for line in (b"".join(seen).decode() + err).replace("\r", "\n").splitlines()
             if line.strip() and not line.startswith("certify verify:")]  # the progress bar's lines
    assert code == 143 and "Traceback" not in err and lines == ["certify: interrupted (SIGTERM)"], err
    assert signalled.group_ended(process)


def test_sigterm_stops_certify_proofs_and_its_workers():
    """The derivations run on a process per core: SIGTERM to the command's group, once the workers are up, stops
    the command with 143 and one line, and leaves no worker behind (they leave the signal to it)."""
    process = signalled.start(["proofs", "collapse_global", "ln_collapse", "collapse_cubic", "value_bounded", "-q"])
    signalled.wait_for(lambda: signalled.group_size(process) > 2, process)  # the command and two workers
    signalled.send_to_group(process, signal.SIGTERM)
    code, out, err = signalled.finish(process)
    if code in (0, 1):
        pytest.skip("the derivations ended before they could be interrupted")
    assert code == 143 and signalled.interruption_line(err, signal.SIGTERM) == "certify: interrupted (SIGTERM)"
    assert signalled.group_ended(process) and "derivations hold" not in out


def test_sigterm_to_certify_proofs_formal_alone_stops_its_coqc(tmp_path, monkeypatch):
    """SIGTERM to the command alone (`kill PID`, not its group): the coqc it ran went on, and the command waited
    for it (up to 15 minutes a file) before it said it was interrupted."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "coqc").write_text("#!/bin/sh\nexec sleep 40\n")  # a proof that takes long
    (tools / "coqc").chmod(0o755)
    proofs = tmp_path / "formal"
    proofs.mkdir()
    (proofs / "toy.v").write_text("Lemma toy : True.\nProof. exact I. Qed.\n")
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    process = signalled.start(["proofs", "--formal", "--formal-dir", str(proofs), "-q"])
    signalled.wait_for(lambda: signalled.group_size(process) > 1, process)  # the command and its coqc
    sent = time.monotonic()
    os.kill(process.pid, signal.SIGTERM)
    code, out, err = signalled.finish(process)
    assert code == 143 and signalled.interruption_line(err, signal.SIGTERM) == "certify: interrupted (SIGTERM)"
    assert time.monotonic() - sent < 20 and signalled.group_ended(process)


def test_sigterm_stops_certify_run_as_ctrl_c_does(tmp_path):
    """`certify run` restarts its campaigns: the line offers no continuation, as after Ctrl-C."""
    out = tmp_path / "report"
    process = signalled.start(["run", "--only", "sampling", "--out", str(out), "-q"])
    signalled.wait_for(signalled.files_in(out, "sampling/*/chunks/*.jsonl"), process)
    signalled.send_to_group(process, signal.SIGTERM)
    code, _, err = signalled.finish(process)
    if code in (0, 1):
        pytest.skip("the run ended before it could be interrupted")
    assert code == 143 and signalled.interruption_line(err, signal.SIGTERM) == "certify: interrupted (SIGTERM)"
    assert signalled.group_ended(process)
    assert not (out / "results.json").exists()  # no report of a run that did not run
    folders = [path.parent for path in out.glob("sampling/*/manifest.json")]
    assert folders and campaign.records(folders[-1])
    for folder in folders:  # each campaign's summary is of what its folder holds
        assert json.loads((folder / "summary.json").read_text())["decided"] == len(campaign.records(folder))


ORPHANED_WORKER = """
import os, sys, time
from certify.jobs.executors import worker_init
parent = os.getpid()
child = os.fork()
if child == 0:  # the worker, started before its parent dies and initialised after
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1), os.dup2(devnull, 2)  # the test reads the parent's output to its end
    while os.getppid() == parent:
        time.sleep(0.01)
    worker_init(parent)
    time.sleep(60)  # waiting for work that will never come
    os._exit(0)
print(child, flush=True)
os._exit(0)  # the parent killed before its worker's worker_init
"""


def test_a_worker_whose_parent_died_before_its_initialiser_ends_itself():
    """A worker forked just before its parent is killed sets its parent-death signal too late for it:
    worker_init sees the parent gone and exits, instead of waiting forever for work (and holding the
    command's pipes open, so that whoever waits for the command's output waits too)."""
    started = subprocess.run([sys.executable, "-c", ORPHANED_WORKER], capture_output=True, text=True, timeout=60)
    worker = int(started.stdout)
    for _ in range(1000):  # the worker is reaped by whoever adopted it once it exits
        if not _running(worker):
            break
        time.sleep(0.02)
    else:
        os.kill(worker, signal.SIGKILL)
        pytest.fail("the orphaned worker still runs 20 s after its parent died")


def _running(pid: int) -> bool:
    """pid is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
