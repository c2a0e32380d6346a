"""The command line: verdicts and exit codes, and bad input as one line on stderr with exit 2."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import mpmath
import pytest

from certify.suite import cases
from certify.cli import main

GOOD = {"X": [[1, 0], [0, 1], [-1, 0]], "A": [[1, 0.5], [0, 1]]}


def write(tmp_path, content, name="config.json"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


BAD_CONFIGS = {
    "malformed JSON": '{"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]',
    "truncated JSON": '{"X": [[1, 2], [3',
    "NaN": '{"X": [[1, NaN], [3, 4]], "A": [[1, 0], [0, 1]]}',
    "Infinity": '{"X": [[1, 2], [3, 4]], "A": [[Infinity, 0], [0, 1]]}',
    "nan string": {"X": [[1, "nan"], [3, 4]], "A": [[1, 0], [0, 1]]},
    "inf string": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, "-inf"]]},
    "huge number overflowing float": '{"X": [[1, 2], [3, 1e400]], "A": [[1, 0], [0, 1]]}',
    "ragged rows": {"X": [[1, 2], [3]], "A": [[1, 0], [0, 1]]},
    "non-square A": {"X": [[1, 2], [3, 4]], "A": [[1, 0, 0], [0, 1, 0]]},
    "A of the wrong dimension": {"X": [[1, 2], [3, 4]], "A": [[1]]},
    "V of the wrong dimension": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "V": [[1, 0, 0]]},
    "W_K mismatching W_Q": {"X": [[1, 2], [3, 4]], "W_Q": [[1], [0]], "W_K": [[1, 0], [0, 1]]},
    "query bias with A": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "b_Q": [1, 0]},
    "d_k with A": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "d_k": 64},
    "key bias with A in a stack": {"X": [[1, 2], [3, 4]], "layers": [{"A": [[1, 0], [0, 1]], "b_K": [0, 1]}]},
    "empty X": {"X": [], "A": [[1]]},
    "one token": {"X": [[1, 2]], "A": [[1, 0], [0, 1]]},
    "no X": {"A": [[1, 0], [0, 1]]},
    "no attention": {"X": [[1, 2], [3, 4]]},
    "mask of the wrong shape": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "mask": [[1, 0, 0], [1, 1, 0]]},
    "mask without self-loop": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "mask": [[0, 1], [1, 1]]},
    "unknown mask name": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "mask": "diagonal"},
    "string where a matrix goes": {"X": "[[1, 2], [3, 4]]", "A": [[1, 0], [0, 1]]},
    "boolean entry": {"X": [[True, 2], [3, 4]], "A": [[1, 0], [0, 1]]},
    "unknown key": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "Vv": [[1]]},
    "not an object": [[1, 2], [3, 4]],
    "name with a terminal escape and a newline": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]],
                                                  "name": "x\x1b[2J\nHOLDS: collapse.global"},
    "name that is not a string": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "name": {"a": 1}},
    "absurd exponent": {"X": [[1, "1e999999"], [3, 4]], "A": [[1, 0], [0, 1]]},
    "collapse.global on a layer with V": {"X": [[1, 2], [3, 4]], "A": [[1, 0], [0, 1]], "V": [[2, 0], [0, 2]]},
}


@pytest.mark.parametrize("name", sorted(BAD_CONFIGS))
def test_bad_configuration_exits_2_with_one_line(name, tmp_path, capsys):
    path = write(tmp_path, BAD_CONFIGS[name])
    out_cert = tmp_path / "cert.json"
    assert main(["check", path, "--out", str(out_cert)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1 and "Traceback" not in err
    assert not out_cert.exists()


BAD_ARGUMENTS = {
    "unknown claim": ["--claim", "collapse.nonsense"],
    "unknown name in bound": ["--bound", "x*D"],
    "forbidden syntax": ["--bound", "__import__('os').system('true')"],
    "attribute access": ["--bound", "D.real"],
    "lambda": ["--bound", "(lambda: 1)()"],
    "empty bound": ["--bound", ""],
    "bound syntax error": ["--bound", "D*("],
    "claim and bound": ["--claim", "collapse.global", "--bound", "D"],
    "absurd precision": ["--max-prec", "99999999999"],
    "tiny precision": ["--max-prec", "8"],
    "precision not a number": ["--max-prec", "lots"],
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_exit_2(name, tmp_path, capsys):
    path = write(tmp_path, GOOD)
    assert main(["check", path, *BAD_ARGUMENTS[name]]) == 2
    err = capsys.readouterr().err
    assert err.startswith("certify: error:") and err.count("\n") == 1


def test_missing_file_and_unknown_command(capsys):
    assert main(["check", "no/such/file.json"]) == 2
    assert main(["frobnicate"]) == 2
    assert main([]) == 2
    err = capsys.readouterr().err
    assert err.count("certify: error:") == 3


def test_the_re_check_command_of_check_out_carries_its_limits(tmp_path, capsys):
    """check --out printed "(re-check with `certify verify CERT`)" without its --limit options: a certificate
    confirmed under a raised precision limit (here 108544 bits, the default limit 65536) was refused by the
    command as printed (exit 2)."""
    far = write(tmp_path, cases.antipodal(1750.0), "far.json")  # a D^2 = 7000: the sides agree to exp(-70000)
    cert = tmp_path / "cert.json"
    assert main(["check", far, "--bound", "tanh(a*D**2/4)*D*(1-exp(-10*a*D**2))", "--max-prec", "262144",
                 "--limit", "precision=262144", "--out", str(cert), "-q"]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines() if "re-check with" in x)
    assert main(shlex.split(line.split("`")[1])[1:]) == 0, line


def test_check_exit_codes_and_certificate(tmp_path, capsys):
    holds = write(tmp_path, cases.antipodal(500.0), "sat.json")
    cert = tmp_path / "out" / "cert.json"
    assert main(["check", holds, "--out", str(cert)]) == 0
    assert main(["verify", str(cert)]) == 0
    assert main(["check", holds, "--bound", "(1-exp(-a*D**2/8))*D", "--out", str(cert)]) == 1
    assert main(["verify", str(cert)]) == 0
    assert json.loads(cert.read_text())["verdict"] == "violated"
    two = write(tmp_path, cases.two_tokens(), "two.json")
    assert main(["check", two, "--claim", "collapse.dobrushin", "--max-prec", "256"]) == 3
    out = capsys.readouterr().out
    assert "HOLDS" in out and "VIOLATED" in out and "UNDECIDED" in out and "equality" in out


def test_check_json_output(tmp_path, capsys):
    path = write(tmp_path, cases.antipodal(500.0))
    assert main(["check", path, "--claim", "collapse.cubic", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["verdict"] == "holds" and info["target"] == "collapse.cubic" and info["precision"] >= 53


def test_claims_lists_the_registry(capsys):
    assert main(["claims", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    ids = {row["id"] for row in rows}
    assert {"collapse.global", "collapse.dobrushin", "collapse.tau", "collapse.cubic", "collapse.trajectory"} <= ids


def test_run_claims_section(tmp_path, capsys):
    assert main(["run", "--only", "claims", "--out", str(tmp_path)]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["unexpected"] == 0 and results["counts"]["violated"] >= 1
    for row in results["rows"]:
        if row["certificate"]:
            assert main(["verify", str(tmp_path / row["certificate"])]) == 0


@pytest.mark.skipif(shutil.which("certify") is None, reason="the console script is not installed")
def test_console_script_as_a_subprocess(tmp_path):
    path = write(tmp_path, GOOD)
    done = subprocess.run(["certify", "check", path], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "HOLDS" in done.stdout
    bad = write(tmp_path, BAD_CONFIGS["NaN"], "bad.json")
    done = subprocess.run(["certify", "check", bad], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("certify: error:") and "Traceback" not in done.stderr


def test_version_and_bare_usage(capsys):
    import certify
    from certify.cli import main as cli_main

    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"certify {certify.__version__}"
    assert cli_main([]) == 2  # a bare `certify` is a usage error that shows the usage
    err = capsys.readouterr().err
    assert err.startswith("usage: certify") and err.count("certify: error:") == 1


@pytest.mark.parametrize("argv", [
    ["check", "{layer}", "--max-prec=--"], ["check", "{layer}", "--out=--"], ["check", "{layer}", "--claim=--"],
    ["check", "{layer}", "--limit=--"], ["prove", "--n=--", "--radius", "1", "--norm", "1"],
    ["verify", "{layer}", "--workers=--"], ["trajectory", "{layer}", "--layers=--"],
], ids=lambda argv: argv[0] + " " + argv[-1] if "--" in argv[-1] else argv[0] + " " + argv[1])
def test_an_option_given_as_dash_dash_is_bad_input(argv, capsys):
    """Python 3.11's argparse gives "--opt=--" an empty list: --max-prec crashed (exit 4), --out=-- wrote no
    certificate and --claim=-- checked the default claim, both silently."""
    layer = str(Path(__file__).resolve().parent.parent / "examples" / "layer.json")
    assert main([word.format(layer=layer) for word in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a value, not '--'" in err


@pytest.mark.parametrize("workers", ["0", str(2**64), "100000"])
def test_workers_beyond_the_cores_are_bad_input(tmp_path, capsys, workers):
    """--workers 2^64 crashed in islice (exit 4); 100000 would have started a process per chunk."""
    from certify.jobs import executors

    assert main(["sample", "--n", "2", "--d", "2", "--count", "3", "--out", str(tmp_path / "c"),
                 "--workers", workers]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "workers must be from 1 to" in err and not (tmp_path / "c").exists()
    assert executors.ProcessPool(executors.MAX_WORKERS_PER_CORE * executors.usable_cores()).workers >= 1


@pytest.mark.parametrize("budget", ["\u00b2", "9" * 5000, "\u0663s", "-5"])
def test_an_attack_budget_that_is_no_ascii_count_is_bad_input(capsys, budget):
    """"\u00b2" passes str.isdigit() but not int(), and int() refuses 5000 digits: both were internal errors."""
    assert main(["attack", "--n", "2", "--d", "1", "--budget", budget]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budget" in err and len(err) < 300


def test_a_long_refused_value_is_quoted_short(tmp_path, capsys):
    """An error message is one readable line: a 100 kB string of a file, or a 5000-digit option, was quoted whole."""
    long_string = write(tmp_path, {"X": [[1], [0]], "A": "a" * 100_000})
    long_mask = write(tmp_path, {"X": [[1], [0]], "A": [[1]], "mask": "m" * 100_000}, "mask.json")
    for argv in (["check", long_string], ["check", long_mask], ["check", long_string, "--max-prec", "9" * 5000]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and len(err) < 400 and "characters)" in err, err[:200]



def test_an_empty_quoted_value_leaves_the_message_whole():
    """cut_quoted took the text between two empty quotes ('') for one long quoted value and cut the message short:
    "--scheduler '' is not the address of a Dask scheduler... (97 characters)'"."""
    from certify.cli import cut_quoted

    message = "--scheduler '' is not the address of a Dask scheduler (e.g. tcp://host:8786): missing port in address ''"
    assert cut_quoted(message) == message
    assert cut_quoted(f"unknown claim {'x' * 80!r}").endswith("... (82 characters)")  # a long value still is cut

def test_a_path_that_is_not_utf8_is_printed_back_not_an_internal_error(tmp_path):
    """A file name in bytes that are not UTF-8 reaches Python as lone surrogates; a strict stdout (a UTF-8
    locale, PYTHONIOENCODING=utf-8) raised UnicodeEncodeError printing it: exit 4 after the certificate
    was written, in certify and in the checker's front end."""
    import sys

    root = Path(__file__).resolve().parent.parent
    cert = os.path.join(os.fsencode(tmp_path), b"c\xff.json")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    for argv, out in ((["certify", "check", str(root / "examples" / "layer.json"), "--out"], b"certificate: "),
                      (["certify_checker"], b"OK: ")):
        done = subprocess.run([sys.executable.encode(), b"-m", *map(str.encode, argv), cert], cwd=root, env=env,
                              capture_output=True, timeout=120)
        assert done.returncode == 0 and done.stderr == b"", done.stderr
        assert out + cert in done.stdout  # the very bytes of the path


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc, a folder that takes no file")
def test_run_refuses_an_output_folder_it_cannot_write_before_any_section(capsys):
    """`certify run --out /proc` ran every section, then failed to write: two lines on stderr (a section's
    progress line and the error)."""
    assert main(["run", "--only", "claims", "--out", "/proc"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("certify: error: cannot write into /proc") and err.count("\n") == 1 and out == ""


@pytest.mark.parametrize("mid, rad", [("2.030383559019783e-434", "6.81e-450"), ("1/3", "1e-40"), ("1.4746383354465", "5e-15"),
                                      ("-7", "0")])
def test_check_json_radius_encloses_the_ball_about_its_binary64_value(mid, rad):
    """`value +/- radius` of check --json encloses the ball: examples/saturated.json's margin, 2e-434 +/- 7e-450, had
    the radius 0.0 (its radius to nearest) about the value 0.0, which excludes it."""
    from flint import arb, ctx
    from certify.cli import check
    with ctx.workprec(300):
        ball = arb(mid if "/" not in mid else arb(1) / 3, rad)
        shown = check.number(ball)
        value, radius = arb(shown["value"]), arb(shown["radius"])  # binary64 numbers: exact
        assert value - radius <= ball.lower() and ball.upper() <= value + radius
        assert radius <= max(arb(5e-324), 2 * ball.rad() + abs(value) * 2.0**-52)  # and not far wider


def test_check_prints_a_side_with_a_huge_exponent_as_a_power_of_ten_that_encloses_it(capsys):
    # rhs = exp(exp(exp(4 D))) is about 10^(2.4e3066): arb writes its exponent's 3067 digits in full, and the rhs
    # and margin lines were 6000 characters wide.  They show 10^[exponent ball] instead; --json keeps arb's text.
    args = ["check", "examples/layer.json", "--bound", "exp(exp(exp(D*4)))"]
    assert main(args + ["--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert len(info["rhs"]["text"]) > 3000  # the JSON keeps the ball as arb writes it
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) < 200, lines
    X = json.loads(Path("examples/layer.json").read_text())["X"]  # binary64 entries: exact as mpf
    with mpmath.workdps(40):
        D = max(mpmath.sqrt(sum((mpmath.mpf(a) - b) ** 2 for a, b in zip(x, y))) for x in X for y in X)
        exponent = mpmath.exp(mpmath.exp(4 * D)) / mpmath.log(10)  # log10 rhs (log10 of the margin to 3000 digits)
    for name in ("rhs", "margin"):
        line = next(line for line in lines if line.lstrip().startswith(name))
        mid, rad = (mpmath.mpf(part) for part in re.search(r"= 10\^\[(\S+) \+/- (\S+)\]", line).groups())
        assert mid - rad <= exponent <= mid + rad, line


def test_attack_prints_a_counterexample_with_a_huge_exponent_as_a_power_of_ten_that_encloses_it(capsys):
    # rhs = -exp(exp(e^8)) D is about -10^(1.8e1294): its line had arb's 1295 digits of exponent, twice
    assert main(["attack", "--bound=-exp(exp(exp(8)))*D", "--n", "2", "--d", "1", "--budget", "50"]) == 1
    line = next(line for line in capsys.readouterr().out.splitlines() if " > " in line)
    assert len(line) < 200, line
    shown = re.findall(r"-10\^\[(\S+) \+/- (\S+)\]", line)
    assert len(shown) == 2, line  # the rhs and the margin
    with mpmath.workdps(40):
        # log10 |rhs| = exp(e^8) / ln 10 + log10 D; log10 D (and the lhs in the margin) moves it far less than the
        # 40 digits of this value resolve, or than the 6 digits shown
        exponent = mpmath.exp(mpmath.exp(8)) / mpmath.log(10)
        for mid, rad in shown:
            assert mpmath.mpf(mid) - mpmath.mpf(rad) <= exponent <= mpmath.mpf(mid) + mpmath.mpf(rad), line
