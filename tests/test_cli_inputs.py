"""Input files on the command line: a path that is not a readable file of the kind wanted is refused with one
line on stderr and exit 2 that says what the path is, on every command that reads one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from certify.cli import main
from certify.errors import BadInput
from certify.studies.models import corpus

ROOT = Path(__file__).resolve().parents[1]


def run_cli(argv, capsys) -> tuple[int, str, str]:
    code = main([str(part) for part in argv])
    out, err = capsys.readouterr()
    return code, out, err


READERS = [
    (["check", "{}"], "configuration file"),
    (["trajectory", "{}", "--layers", "2"], "configuration file"),
    (["prove", "--n", "2", "--radius", "1", "--norm", "1", "--resume", "{}"], "certificate"),
]


@pytest.mark.parametrize("argv, what", READERS, ids=lambda x: x[0] if isinstance(x, list) else x)
def test_a_folder_given_for_a_file_is_called_a_folder(argv, what, tmp_path, capsys):
    """A folder was refused as "no such configuration file" (or certificate), which sent the user looking
    for a missing file."""
    code, out, err = run_cli([str(tmp_path) if part == "{}" else part for part in argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"{tmp_path} is a folder, not a {what}" in err and "no such" not in err, err


@pytest.mark.skipif(not os.path.exists(os.devnull), reason="needs a device file")
@pytest.mark.parametrize("argv, what", READERS + [(["verify", "{}"], "certificate")],
                         ids=lambda x: x[0] if isinstance(x, list) else x)
def test_a_device_given_for_a_file_is_called_a_device(argv, what, capsys):
    code, out, err = run_cli([os.devnull if part == "{}" else part for part in argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"not a {what}" in err and "no such" not in err, err


@pytest.mark.parametrize("argv, what", READERS + [(["verify", "{}"], "certificate")],
                         ids=lambda x: x[0] if isinstance(x, list) else x)
def test_a_missing_file_is_called_missing(argv, what, tmp_path, capsys):
    missing = tmp_path / "none.json"
    code, out, err = run_cli([missing if part == "{}" else part for part in argv], capsys)
    assert code == 2 and out == "" and f"no such {what}: {missing}" in err, err


def test_a_folder_given_as_a_corpus_is_called_a_folder(tmp_path):
    with pytest.raises(BadInput, match="is a folder, not a corpus file"):
        corpus.read_corpus(tmp_path)


def test_a_certificate_given_as_a_configuration_is_called_one(tmp_path, capsys):
    """`certify check CERT` said the configuration has no tokens "X", as if the file were a broken configuration."""
    cert = tmp_path / "cert.json"
    assert run_cli(["check", ROOT / "examples/layer.json", "--out", cert, "-q"], capsys)[0] == 0
    for command in (["check", cert], ["trajectory", cert, "--layers", "2"]):
        code, out, err = run_cli(command, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "'certify-certificate/1', not a configuration" in err and "certify verify" in err, err


def test_an_empty_matrix_is_called_empty(tmp_path, capsys):
    """An empty X or A was "expected a non-empty list of rows, got a list"."""
    for config, where in [('{"X": [], "A": [[1]]}', "X"), ('{"X": [[1], [2]], "A": []}', "layer.A")]:
        path = tmp_path / "config.json"
        path.write_text(config)
        code, out, err = run_cli(["check", path], capsys)
        assert code == 2 and f"{where}: expected a non-empty list of rows, got an empty list" in err, err


@pytest.mark.parametrize("mask, words", [
    ([[1, 0], [1, 0]], "every token must attend to itself: mask[1][1] is 0"),
    ([[1, 0]], "the mask has 1 row but there are 2 tokens"),
    ([[1, 2], [0, 1]], "mask entries must be 0 or 1 (or false and true): row 0 has another value"),
    ("diagonal", "unknown mask 'diagonal'"),
])
def test_a_bad_mask_names_its_layer(tmp_path, capsys, mask, words):
    """A bad mask in a stack said "every token must attend to itself: mask[1][1] is 0" without the layer it was in,
    where every other field of a layer is named (layers[1].V: ...)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"X": [[0], [1]], "layers": [{"A": [[1]], "mask": "causal"}, {"A": [[1]], "mask": mask}]}))
    code, out, err = run_cli(["check", path, "--bound", "D"], capsys)
    assert code == 2 and err.startswith(f"certify: error: layers[1].mask: {words}") and err.count("\n") == 1, err


@pytest.mark.parametrize("argv, wrong", [
    (["check", ROOT / "examples/layer.json", "--out", "{dir}"], "{dir} is a folder where a file is needed"),
    (["check", ROOT / "examples/layer.json", "--out", "{file}/cert.json"], "{file} is a file where a folder is needed"),
    (["sample", "--n", "2", "--d", "1", "--count", "2", "--out", "{file}"], "{file} is a file where a folder is needed"),
    (["trajectory", ROOT / "examples/layer.json", "--layers", "2", "--out", "{file}/a/b"],
     "{file} is a file where a folder is needed"),
])
def test_an_output_path_of_the_wrong_kind_says_so(argv, wrong, tmp_path, capsys):
    """--out naming a file where a folder is made said "File exists: out.json", and a folder where a file is
    written "Is a directory: DIR"."""
    places = {"dir": tmp_path / "folder", "file": tmp_path / "file.json"}
    places["dir"].mkdir()
    places["file"].write_text("{}")
    code, out, err = run_cli([str(part).format(**places) for part in argv] + ["-q"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert wrong.format(**places) in err and str(places["file" if "file" in argv[-1] else "dir"]) in err, err
    assert places["file"].read_text() == "{}"


def test_a_file_that_cannot_be_written_is_named_not_its_hidden_temporary(tmp_path):
    """Writing into a folder that takes no file said "No such file or directory: DIR/.cert.json.tmp", a name the
    user never gave."""
    from certify.core import files
    target = tmp_path / "missing" / "cert.json"
    with pytest.raises(OSError) as failed:
        files.replace(target, "{}")
    assert failed.value.filename == str(target)


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc, a folder that takes no new file")
def test_a_file_whose_folder_takes_no_new_file_is_refused_with_what_failed(capsys):
    """`certify check C --out /proc/version` said "No such file or directory: /proc/version" of a file that exists:
    what failed is the new file written beside it (then renamed over it), which /proc does not take."""
    assert main(["check", str(ROOT / "examples/layer.json"), "--out", "/proc/version"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert err.startswith("certify: error: cannot write /proc/version: no file can be created in /proc ("), err


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="a read-only folder is writable by root")
def test_a_writable_file_in_a_read_only_folder_is_refused_with_what_failed(tmp_path):
    """A writable file in a folder that is not was refused "Permission denied: FILE", though the file is writable."""
    from certify.core import files
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "x.json").write_text("{}")
    folder.chmod(0o555)
    try:
        with pytest.raises(OSError) as failed:
            files.replace(folder / "x.json", "[]")
    finally:
        folder.chmod(0o755)
    assert str(failed.value.strerror).startswith(f"cannot write {folder / 'x.json'}: no file can be created in {folder}")
    assert (folder / "x.json").read_text() == "{}"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full, a device that is always full")
def test_a_special_file_that_cannot_be_written_is_named(capsys):
    """`certify check C --out /dev/full` said "No space left on device" and not where."""
    assert main(["check", str(ROOT / "examples/layer.json"), "--out", "/dev/full"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.rstrip().endswith(": /dev/full"), err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_an_output_pipe_that_no_process_reads_is_refused_not_waited_on(tmp_path):
    """`certify check C --out PIPE` opened the named pipe to write the certificate: with no reader it waited for
    ever, after the work (so did prove's --out and --counterexample, counterexample's --out, a resumed attack)."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    done = subprocess.run([sys.executable, "-m", "certify", "check", str(ROOT / "examples/layer.json"), "--out",
                           str(pipe)], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.splitlines() == [f"certify: error: a named pipe that no process reads (start its reader "
                                        f"first): {pipe}"], done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_an_output_pipe_with_a_reader_is_written(tmp_path):
    """A pipe that a process reads (a shell's `--out >(gzip > c.gz)`) is still written, in place."""
    from certify.core import files
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        files.replace(pipe, "[1]\n")
        assert os.read(reader, 100) == b"[1]\n"
    finally:
        os.close(reader)


def test_writes_of_one_file_at_once_all_land_whole(tmp_path):
    """Two runs writing one file at once (`certify prove` twice into the default counterexample.json) shared the
    temporary `.NAME.tmp`: the one that renamed second stopped with "No such file or directory"."""
    import threading
    from certify.core import files
    target, writers, failures = tmp_path / "counterexample.json", 4, []
    start = threading.Barrier(writers)

    def write(k):
        start.wait()
        try:
            for _ in range(25):
                files.replace(target, f"writer {k}\n" * 1000)
        except OSError as err:
            failures.append(err)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    assert target.read_text() in {f"writer {k}\n" * 1000 for k in range(writers)}
    assert [path.name for path in tmp_path.iterdir()] == [target.name]  # no temporary left beside it


def test_run_names_the_sections_it_does_not_know(capsys):
    code, out, err = run_cli(["run", "--only", "nope", "--only", "x"], capsys)
    assert code == 2 and "no section matches 'nope', 'x';" in err and "[" not in err, err
    code, out, err = run_cli(["run", "--only", "clams"], capsys)
    assert code == 2 and "no section matches 'clams'; did you mean claims? sections: claims," in err, err
    # one misspelt among known ones was dropped: the others ran, exit 0 "every outcome as predicted"
    code, out, err = run_cli(["run", "--only", "thesis", "--only", "clams"], capsys)
    assert code == 2 and out == "" and "no section matches 'clams'; did you mean claims? sections: claims," in err, err


FOLDER_OUTPUTS = {"run", "sample", "attack", "trajectory", "reproduce", "model"}


def test_every_output_of_the_wrong_kind_is_refused_before_any_work(tmp_path):
    """check, prove, counterexample, trajectory, reproduce and model did their work (a proof of a minute, a
    trajectory of thousands of layers) and only then found --out naming a folder for a file or a file for a
    folder: every output option refuses it as it is read."""
    from certify.cli import build_parser
    from certify.errors import BadInput
    folder, file = tmp_path / "folder", tmp_path / "file.json"
    folder.mkdir()
    file.write_text("{}")
    parser = build_parser()
    found = []
    for action in parser._subparsers._group_actions[0].choices.items():
        name, sub = action
        subs = (sub._subparsers._group_actions[0].choices.items() if sub._subparsers else [(None, sub)])
        for word, leaf in subs:
            for option in leaf._actions:
                if option.dest in ("out", "counterexample") and option.option_strings:
                    found.append(([name] + ([word] if word else []), option.option_strings[0]))
    assert {words[0] for words, _ in found} >= FOLDER_OUTPUTS | {"check", "prove", "counterexample"}
    for words, option in found:
        wrong = file if words[0] in FOLDER_OUTPUTS else folder
        with pytest.raises(BadInput, match="where a (folder|file) is needed"):
            build_parser(only=words[0]).parse_args([*words, option, str(wrong)])
        with pytest.raises(BadInput, match=f"{file} is a file where a folder is needed"):
            build_parser(only=words[0]).parse_args([*words, option, str(file / "under" / "it")])


def test_an_output_folder_that_is_a_broken_link_is_refused_saying_so(tmp_path, capsys):
    """--out naming a link to a folder that does not exist: each command said only "File exists: DIR" (its mkdir),
    certify run after its checks, as it began to write; now refused as the command line is read, saying what it is."""
    from certify.cli import build_parser
    from certify.errors import BadInput
    link = tmp_path / "report"
    link.symlink_to(tmp_path / "gone")
    for command in sorted(FOLDER_OUTPUTS):
        with pytest.raises(BadInput, match=f"{link} is a link to {tmp_path / 'gone'}, which does not exist"):
            build_parser(only=command).parse_args([command, "--out", str(link)])
    assert main(["run", "--only", "claims", "--out", str(link), "-q"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert link.is_symlink() and not (tmp_path / "gone").exists()


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs Linux's /proc/self/mem, a file that reads fail")
@pytest.mark.parametrize("command", [["check"], ["verify"], ["trajectory", "--layers", "2"]])
def test_a_file_whose_reading_fails_is_named(command, capsys):
    """A file that opens but fails to read (/proc/self/mem: "Input/output error") was refused without its name."""
    code, out, err = run_cli([*command, "/proc/self/mem"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.rstrip().endswith(": /proc/self/mem"), err


def test_an_output_under_a_broken_link_is_refused_before_any_work(tmp_path):
    """--out LINK/cert.json (or LINK/DIR) under a link to nothing, or in a loop, passed the check of the command line:
    the command did its work (a proof, a model's heads) and then said only "File exists: LINK" or "Too many levels
    of symbolic links"; now refused as the command line is read, saying what the link is."""
    from certify.cli import build_parser
    broken, loop, other = tmp_path / "broken", tmp_path / "a", tmp_path / "b"
    broken.symlink_to(tmp_path / "gone")
    loop.symlink_to(other)
    other.symlink_to(loop)
    for link, target in ((broken, tmp_path / "gone"), (loop, other)):
        for command, out in (("check", link / "cert.json"), ("prove", link / "p.json"), ("trajectory", link / "sub"),
                             ("model", link / "sub" / "deeper")):
            with pytest.raises(BadInput, match=f"{link} is a link to {target}, which does not exist"):
                build_parser(only=command).parse_args([command, "--out", str(out)])
    assert broken.is_symlink() and not (tmp_path / "gone").exists()


def test_an_output_file_that_is_a_link_loop_is_no_internal_error(tmp_path, capsys):
    """--out naming a link in a loop (a -> b -> a) was an internal error (exit 4): the check that the output is
    not an input resolved its path, which raises on a loop.  Such a link names no file: it is replaced by the
    output, as a link to nothing is, and a path under it is refused in one line."""
    loop, other = tmp_path / "a.json", tmp_path / "b.json"
    loop.symlink_to(other)
    other.symlink_to(loop)
    config = ROOT / "examples/layer.json"
    code, out, err = run_cli(["check", config, "--out", loop / "cert.json", "-q"], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("certify: error: "), err
    assert run_cli(["check", config, "--out", loop, "-q"], capsys)[0] == 0
    assert json.loads(loop.read_text())["format"] == "certify-certificate/1"
    loop, other = tmp_path / "c.json", tmp_path / "d.json"
    loop.symlink_to(other)
    other.symlink_to(loop)
    code, out, err = run_cli(["prove", "--n", "2", "--radius", "1", "--norm", "1", "--bound", "D/2",
                              "--counterexample", loop, "-q"], capsys)
    assert code == 1 and "internal error" not in err and "X" in json.loads(loop.read_text()), err


@pytest.mark.parametrize("description, refused", [(3, "int"), ([1], "a list"), ("a layer", None)])
def test_a_description_that_is_not_text_is_refused(description, refused, tmp_path, capsys):
    """A numeric "description" passed unnoticed (the key is not read): a label is a string, as "name" is."""
    import json

    config = json.loads((ROOT / "examples/layer.json").read_text()) | {"description": description}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code = main(["check", str(path), "-q"])
    err = capsys.readouterr().err
    if refused is None:
        assert code in (0, 1, 3) and err == "", err
    else:
        assert code == 2 and err.count("\n") == 1, err
        assert f'"description" is a note in words (a string), not {refused}' in err, err


def test_a_count_of_one_is_singular(tmp_path, capsys, monkeypatch):
    """"the mask has 1 rows" (a configuration's mask), "has 1 tokens" (graph --n against a file's mask)."""
    import json

    monkeypatch.chdir(tmp_path)
    config = {"X": [[0], [1]], "A": [[1]], "mask": [[1]]}
    Path("config.json").write_text(json.dumps(config))
    Path("mask.json").write_text("[[1]]")
    assert main(["check", "config.json"]) == 2
    assert "the mask has 1 row but there are 2 tokens\n" in capsys.readouterr().err
    assert main(["graph", "--mask", "mask.json", "--n", "2"]) == 2
    assert capsys.readouterr().err == "certify: error: the mask in mask.json has 1 token, not --n 2\n"


def test_a_mask_file_naming_a_mask_points_to_the_option(tmp_path, capsys, monkeypatch):
    """A mask file {"mask": "causal"} (the configuration file's way) was refused as "a non-empty list of rows"
    without saying that `graph` takes a name on --mask itself."""
    monkeypatch.chdir(tmp_path)
    Path("mask.json").write_text('{"mask": "causal"}')
    assert main(["graph", "--mask", "mask.json"]) == 2
    assert capsys.readouterr().err == ("certify: error: mask.json: a mask file holds 0/1 rows, not a name ('causal'); "
                                       "a named mask goes to --mask itself, with --n\n")


@pytest.mark.parametrize("stray, said", [({"d_k": 1}, "d_k only goes with W_Q and W_K; with A it would be ignored"),
                                         ({"b_Q": [0], "d_k": 1},
                                          "b_Q and d_k only go with W_Q and W_K; with A they would be ignored")])
def test_keys_that_go_with_w_q_are_named_in_grammar(stray, said, tmp_path, capsys):
    """"d_k only go with W_Q and W_K; with A they would be ignored" for one key."""
    import json

    path = tmp_path / "config.json"
    path.write_text(json.dumps({"X": [[0], [1]], "A": [[1]]} | stray))
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err == f"certify: error: layer: {said}\n"


@pytest.mark.parametrize("bound, undefined", [
    ("5", None),  # a constant: its float64 screen was a number where a chunk's array of sides was wanted
    ("exp(1e10)", None),  # a constant beyond float64, likewise
    ("1/0", "1/0 divides by zero"),  # 1.0/0.0 of Python floats raised ZeroDivisionError in the float64 screen
    ("0**-1", "0**-1 with a base <= 0"),
    ("sqrt(-1)", "sqrt(-1) takes an argument outside its domain"),
])
@pytest.mark.parametrize("command", [["attack", "--n", "2", "--d", "1", "--budget", "60"],
                                     ["sample", "--n", "3", "--d", "2", "--count", "3", "--workers", "1"],
                                     ["sample", "--n", "3", "--d", "2", "--count", "3", "--workers", "1",
                                      "--tier", "tier3"]])
def test_a_constant_or_undefined_bound_is_a_verdict_or_bad_input_never_an_internal_error(
        tmp_path, capsys, bound, undefined, command):
    """`sample --bound 5`, `sample --bound 1/0` and `attack --bound 1/0` were internal errors (exit 4); a bound
    undefined where it is evaluated is bad input (one line, exit 2), as `check` says, and a constant is a bound."""
    out = ["--out", str(tmp_path / "out")] if command[0] == "sample" else []
    code = main(command + ["--bound", bound, "-q"] + out)
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err, err
    if undefined:
        assert code == 2 and err == f"certify: error: the bound is undefined: {undefined}" + err.split(undefined)[1]
        assert err.count("\n") == 1
    else:
        assert code in (0, 1) and err == "", err


def test_counts_of_boxes_leaves_and_evaluations_read_in_english(capsys):
    """prove printed "1 boxes left", attack "1 evaluations"."""
    from certify.errors import counted

    assert [counted(k, noun) for k, noun in ((1, "box"), (2, "box"), (1, "leaf"), (3, "leaf"), (2, "evaluation"))] \
        == ["1 box", "2 boxes", "1 leaf", "3 leaves", "2 evaluations"]
    assert main(["prove", "collapse.tanh", "--n", "4", "--d", "1", "--radius", "2", "--norm", "2",
                 "--time-limit", "1e-9"]) == 3
    out = capsys.readouterr().out
    assert "0 boxes, 0 leaves" in out and "1 box left" in out and "1 boxes left" not in out, out


def test_a_json_number_beyond_binary64_is_named_as_written_with_the_exact_form(tmp_path, capsys):
    """X = [[1e400], [1]] was refused as "X[0][0]: inf is not a finite number": the file says 1e400, not inf, and the
    exact number it meant is a string ("1e400", the integer 10^400), which the refusal now names."""
    path = tmp_path / "big.json"
    path.write_text('{"X": [[1e400], [1]], "A": [[1]]}')
    code, out, err = run_cli(["check", path], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("certify: error: X[0][0]: ") and "beyond binary64" in err and '"1e400"' in err, err
    path.write_text('{"X": [["1e400"], [1]], "A": [[1]]}')
    assert run_cli(["check", path], capsys)[0] == 0


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_path_given_for_an_input_is_refused_as_an_unset_variable(given, tmp_path, capsys, monkeypatch):
    """`certify verify "$CERT"` with CERT unset verified the current folder (a campaign's: "OK: campaign : 2 of 2
    configurations ..."), `certify check ""` called it ". is a folder", and a blank one was "no such certificate":
    an empty path is refused as --out "" is, by the command and the API alike."""
    import certify

    campaign = tmp_path / "s"
    certify.sample(n=2, d=1, count=2, workers=1, out=campaign)
    monkeypatch.chdir(campaign)
    for argv in (["verify", given], ["check", given], ["trajectory", given, "--layers", "2"]):
        code, out, err = run_cli(argv, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, out, err)
        assert "an empty path (an unset variable?)" in err, err
    for call in (certify.verify, certify.check, lambda source: certify.trajectory(source, layers=2)):
        with pytest.raises(certify.BadInput, match=r"an empty path \(an unset variable\?\)"):
            call(given)


@pytest.mark.parametrize("given", ["", "  "])
def test_an_empty_model_or_corpus_is_refused_as_an_unset_variable(given, tmp_path, capsys):
    """`certify model --corpus "$CORPUS" --out D` with CORPUS unset ran the shipped corpus of 200 sentences, as
    --corpus without FILE does, and `certify model "$MODEL"` looked for the model in the current folder."""
    for argv in (["model", "--corpus", given, "--out", tmp_path / "run"], ["model", given, "--screen"]):
        code, out, err = run_cli(argv, capsys)
        assert code == 2 and out == "" and err.count("\n") == 1, (argv, out, err)
        assert "an empty path (an unset variable?)" in err, err
    assert not (tmp_path / "run").exists()
    code, out, err = run_cli(["model", "--corpus"], capsys)  # without FILE: the shipped corpus, which needs --out
    assert code == 2 and "--corpus needs --out DIR" in err, err


HOSTILE_NAME = "mask\nline two\x1b[31m.json"  # a newline and a terminal escape: a file name may hold both


@pytest.mark.parametrize("content, argv", [
    ("[[1, NaN], [0, 1]]", ["graph", "--mask", "{}"]),
    ('{"X": [[1]]}', ["graph", "--mask", "{}"]),
    ("[[1, 0], [0, 1]]", ["graph", "--mask", "{}", "--n", "3"]),
    ('{"X": [[NaN], [1]], "A": [[1]]}', ["check", "{}"]),
    ("[1, NaN]", ["verify", "{}"]),
], ids=["graph-nan", "graph-no-mask", "graph-wrong-n", "check", "verify"])
def test_a_file_name_with_a_newline_or_a_terminal_escape_is_refused_on_one_line(content, argv, tmp_path, capsys):
    """Messages name the file as given: `certify graph --mask` of a file named "mask<newline>line two..." printed its
    refusal on two lines, the second one certify never wrote, and the name's terminal escape raw (red text)."""
    path = tmp_path / HOSTILE_NAME
    path.write_text(content)
    code, out, err = run_cli([str(path) if part == "{}" else part for part in argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("certify: error: "), err
    assert "\x1b" not in err and r"mask\nline two\x1b[31m.json" in err, err
