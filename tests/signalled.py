"""A certify command run as a process that a signal stops, for the tests of SIGTERM, SIGHUP and Ctrl-C.

The signal is sent from outside, to the command's whole process group as `timeout`, a cluster's scheduler and a
terminal send it (its workers receive it too), once the work shows (a file, a progress line); or by the command
to itself at the k-th call of a function of certify, a point in the work that does not depend on how loaded the
machine is.  Either way it is a real signal, taken by the handlers the command line installs.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

# The command line, and the hook that signals at a call: argv is [module, function, call, signal, *command]
_COMMAND = "import sys; from certify.cli import main; sys.exit(main(sys.argv[1:]))"
_HOOKED = """
import importlib, os, sys
from certify.cli import main
module, name, at, signum = sys.argv[1:5]
owner, calls = importlib.import_module(module), [0]
real = getattr(owner, name)
def hooked(*args, **kwargs):
    calls[0] += 1
    if calls[0] == int(at):
        os.kill(os.getpid(), int(signum))  # taken by the handler before the call runs
    return real(*args, **kwargs)
setattr(owner, name, hooked)
sys.exit(main(sys.argv[5:]))
"""

WAIT_SECONDS = 120  # for a condition, on a loaded machine; the tests take seconds when it holds


def start(argv: list[str], *, at: tuple[str, str, int, int] | None = None) -> subprocess.Popen:
    """`certify argv` in a session of its own (its process group is its pid), or, with at = (module, function,
    k, signal), one that sends itself the signal at the k-th call of module.function."""
    prefix = ["-c", _COMMAND] if at is None else ["-c", _HOOKED, *map(str, at)]
    return subprocess.Popen([sys.executable, *prefix, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def wait_for(condition, process: subprocess.Popen) -> None:
    """Poll until condition() holds or the process has ended (or, a safeguard, WAIT_SECONDS have passed)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def files_in(folder: Path, pattern: str):
    """A condition: a file matching `pattern` exists under folder."""
    return lambda: any(Path(folder).glob(pattern))


def send_to_group(process: subprocess.Popen, signum: int) -> None:
    """The signal to every process of the command's group, as `timeout` or a scheduler sends it."""
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:  # ended already
        pass


def finish(process: subprocess.Popen) -> tuple[int, str, str]:
    """Wait for the process; its exit code, stdout and stderr (text)."""
    out, err = process.communicate(timeout=WAIT_SECONDS)
    return process.returncode, out.decode(), err.decode()


def interruption_line(err: str, signum: int) -> str:
    """The one line of stderr an interruption leaves (a progress bar's lines aside, which -q or --no-progress
    leave out), checked to name the signal other than Ctrl-C; no traceback, of the command or of a worker."""
    assert "Traceback" not in err, err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert len(lines) == 1, err
    named = "" if signum == signal.SIGINT else rf" \({signal.Signals(signum).name}\)"  # Ctrl-C's is the usual one
    assert re.match(rf"certify: interrupted{named}(; |$)", lines[0]), lines[0]
    return lines[0]


def group_size(process: subprocess.Popen) -> int:
    """The live processes of the command's group: the command and the workers it has started."""
    return len(_members(process.pid))


def group_ended(process: subprocess.Popen) -> bool:
    """Whether every process of the command's group has ended (its workers are not left behind), within a few
    seconds of the command's exit."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not _members(process.pid):
            return True
        time.sleep(0.05)
    return False


def _members(group: int) -> list[int]:
    """The live processes of a process group (Linux /proc; zombies, which are ended and awaiting their
    parent, do not count)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (name) ": state, ppid, pgrp
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry))
    return members
