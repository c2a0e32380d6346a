"""`python -m certify_checker`: its command line (the certificates, --limit, --help), run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"X": [["1", "0"], ["0", "1"], ["-1", "1"]], "A": [["1", "0"], ["0", "1"]]}


def checker(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "certify_checker", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=120, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})


@pytest.fixture(scope="module")
def cert(tmp_path_factory) -> Path:
    from certify import engine
    from certify.engine import certificate

    folder = tmp_path_factory.mktemp("checker-command")
    return certificate.write(engine.check(LAYER).certificate, folder / "cert.json")


def test_limit_raises_or_lowers_a_cap_as_on_certify_verify(cert):
    """A certificate written under raised limits (`certify check --limit ...`) could not be verified by the checker
    alone at all: it read every argument as a file ("cannot read --limit")."""
    low = checker("--limit", "work=5", cert.name, cwd=cert.parent)
    assert low.returncode == 2 and "above the checker's limit of 5" in low.stderr and not low.stdout, low
    after = checker(cert.name, "--limit=work=1e3", cwd=cert.parent)  # after the file too; an exponent as certify's
    assert after.returncode == 2 and "limit of 1e+03" in after.stderr, after
    raised = checker("--limit", "work=1e9", "--limit", "dim=2000", cert.name, cwd=cert.parent)
    assert raised.returncode == 0 and raised.stdout.startswith(f"OK: {cert.name}: confirmed"), raised


def test_a_refusal_names_the_command_that_raises_the_limit(cert):
    """The checker alone said "`certify verify --limit dim=N` raises it", a command the user had not run."""
    alone = checker("--limit", "dim=1", cert.name, cwd=cert.parent)
    assert alone.returncode == 2 and "(`python -m certify_checker --limit dim=N` raises it)" in alone.stderr, alone
    assert "certify verify" not in alone.stderr, alone
    under = subprocess.run([sys.executable, "-m", "certify", "verify", "--limit", "dim=1", cert.name],
                           capture_output=True, text=True, cwd=cert.parent, timeout=120,
                           env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert under.returncode == 2 and "(`certify verify --limit dim=N` raises it)" in under.stderr, under


@pytest.mark.parametrize("argv, says", [
    (["--limit", "work=0"], "positive integer"), (["--limit", "work=1.5"], "positive integer"),
    (["--limit", "work=1e30"], "30 digits"), (["--limit", "work"], "NAME=VALUE"),
    (["--limit", "nope=3"], "unknown limit"),
    (["--limit", "digits=5000"], "4300 digits"), (["--limit"], "needs NAME=VALUE"), (["-x"], "unknown option '-x'"),
    (["--"], "no certificate"), ([], "no certificate"),
    (["--limit", "work=10", "--limit=work=1e9"], "--limit work given more than once"),  # the last was kept
])
def test_a_wrong_command_line_is_one_line_and_exit_2(cert, argv, says):
    done = checker(*argv, *([cert.name] if argv[:1] == ["--limit"] and len(argv) > 1 else []), cwd=cert.parent)
    assert done.returncode == 2 and not done.stdout, done
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("certify_checker: error: ") and says in done.stderr


def test_help_is_usage_and_exit_0_and_a_dash_file_goes_after_double_dash(cert):
    """--help was read as a file ("cannot read --help", exit 2)."""
    done = checker("--help", cwd=cert.parent)
    assert done.returncode == 0 and "--limit NAME=VALUE" in done.stdout and "Exit codes" in done.stdout, done
    (cert.parent / "-c.json").write_bytes(cert.read_bytes())
    dashed = checker("--", "-c.json", cwd=cert.parent)
    assert dashed.returncode == 0 and dashed.stdout.startswith("OK: -c.json: confirmed"), dashed


@pytest.mark.parametrize("value, limit", [("2.5e4", 25000), ("1e+3", 1000), ("+5", 5), ("50e-1", 5), ("1.0", 1),
                                          ("1e29", 10 ** 29)])
def test_a_limit_is_written_as_certify_writes_its_integer_options(cert, value, limit):
    """certify verify --limit work=2.5e4 is 25000; the checker alone refused it, and took 50e-1 for 5.0."""
    done = checker("--limit", f"work={value}", cert.name, cwd=cert.parent)
    estimate = float(done.stderr.split("estimated work of ")[1].split()[0]) if done.returncode == 2 else 0
    assert (done.returncode == 0) == (estimate <= limit) and (done.returncode in (0, 2)), done
    if done.returncode == 2:
        assert f"limit of {limit:.3g}" in done.stderr and "error: --limit" not in done.stderr, done


def test_a_pipe_or_a_device_is_refused_in_one_line_not_waited_on(cert):
    """`python -m certify_checker FIFO` waited for ever for a writer (certify verify refuses what is not a regular
    file), and /dev/zero was read to the bytes limit first."""
    import os
    fifo = cert.parent / "fifo"
    os.mkfifo(fifo)
    for path in (str(fifo), "/dev/zero"):
        done = checker(path, cwd=cert.parent)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a certificate" in done.stderr, done


def test_a_folder_is_refused_as_a_folder(cert):
    """A campaign's folder given to the checker was called "a device, a pipe or a socket"."""
    done = checker(".", cwd=cert.parent)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "a folder, not a certificate" in done.stderr, done
    assert "certify verify FOLDER" in done.stderr and "device" not in done.stderr, done


def test_json_deeper_than_the_reader_goes_is_not_blamed_on_a_raised_nesting_limit(tmp_path):
    """Under --limit nesting=1000000 a certificate nested 5000 deep was refused as "nested deeper than the limit of
    1000000": Python's JSON reader stops some hundreds of levels down, whatever the limit says."""
    import certify_checker
    from certify.core import jsonfile, limits
    from certify.errors import BadInput

    text = '{"format": "certify-certificate/1", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    with pytest.raises(certify_checker.Unreadable) as refused:
        certify_checker.load(text, certify_checker.Limits(nesting=10 ** 6))
    assert "JSON reader goes" in str(refused.value) and "1000000" not in str(refused.value)
    with pytest.raises(BadInput) as bad:
        jsonfile.loads(text, "c.json", limits.Limits(nesting=10 ** 6))
    assert "JSON reader goes" in str(bad.value) and "limit of 1000000" not in str(bad.value)
    for small in (32, 100):  # below what the reader goes to, the limit is the cause
        with pytest.raises(certify_checker.Unreadable, match=f"limit of {small}$"):
            certify_checker.load(text, certify_checker.Limits(nesting=small))
        with pytest.raises(BadInput, match=f"limit of {small}"):
            jsonfile.loads(text, "c.json", limits.Limits(nesting=small))


def test_a_file_name_with_a_newline_or_a_terminal_escape_is_named_on_one_line(cert):
    """The checker named its file as given: a certificate named "cert<newline>two..." was confirmed on two lines of
    stdout (the second one the checker never wrote), refused on two lines of stderr, its terminal escape raw."""
    hostile = cert.parent / "cert\ntwo\x1b[31m.json"
    hostile.write_text(cert.read_text())
    (cert.parent / "nan\n.json").write_text("[1, NaN]")
    for name, code, stream in ((hostile.name, 0, "stdout"), ("nan\n.json", 2, "stderr")):
        done = checker(name, cwd=cert.parent)
        said = getattr(done, stream)
        assert done.returncode == code and said.count("\n") == 1 and "\x1b" not in said, done
        assert repr(name)[1:-1] in said, done


@pytest.mark.parametrize("bytes_limit", ["1e12", "1e29"])
def test_a_raised_bytes_limit_reads_a_small_certificate_as_it_is(cert, bytes_limit):
    """--limit bytes=1e12 was "out of memory" and bytes=1e29 an internal error: the reader asked for a buffer of
    the limit's size at once, whatever the file's."""
    done = checker("--limit", f"bytes={bytes_limit}", cert.name, cwd=cert.parent)
    assert done.returncode == 0 and done.stdout.startswith(f"OK: {cert.name}: confirmed") and not done.stderr, done


class _Argv(list):
    """A command line that counts the words a list.pop(0) moves: each moves every word after it."""
    moved = 0

    def pop(self, index=-1):
        _Argv.moved += len(self) - 1 if index == 0 else 0
        return super().pop(index)


def test_a_long_command_line_is_read_once_and_quoted_short():
    """The checker read its command line by list.pop(0), moving every word left at each (200,000 paths: 3 s before
    the first was opened), and quoted a --limit item whole (a line of 120 kB)."""
    from certify_checker.__main__ import arguments

    words = _Argv(["a.json"] * 10_000)
    assert arguments(words) == (["a.json"] * 10_000, arguments(["a.json"])[1])
    assert _Argv.moved <= len(words), _Argv.moved
    for argv in (["--limit", "x" * 100_000 + "=1"], ["--limit", " " * 100_000 + "bytes=5", "--limit", "bytes=6"],
                 ["--limit", "bytes=" + "1" * 100_000]):
        with pytest.raises(ValueError) as refused:
            arguments([*argv, "a.json"])
        assert len(str(refused.value)) < 300, len(str(refused.value))
