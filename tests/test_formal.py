"""proofs/formal/: every "formal" label of a step names a real Coq lemma, `certify proofs --formal`
checks the real files, reports a planted false or admitted lemma as failed, and a missing tool
as bad input."""

import json
import shutil

import pytest

from certify.prove import derivations as proofs_index
from certify.prove import formal as formal_proofs
from certify.cli import main

HAVE_COQ = shutil.which("coqc") is not None
HAVE_GAPPA = shutil.which("gappa") is not None
needs_coq = pytest.mark.skipif(not HAVE_COQ, reason="coqc not installed")
needs_gappa = pytest.mark.skipif(not (HAVE_COQ and HAVE_GAPPA), reason="gappa or coqc not installed")

HEADER = "From Coq Require Import Reals Lra.\nOpen Scope R_scope.\n"
TRUE_LEMMA = "Lemma exp_one_pos : 0 < exp 1.\nProof. apply exp_pos. Qed.\n"
FALSE_LEMMA = "Lemma two_lt_one : 2 < 1.\nProof. lra. Qed.\n"
LATER_LEMMA = "Lemma zero_le_one : 0 <= 1.\nProof. lra. Qed.\n"
ADMITTED_LEMMA = "Lemma two_lt_one_admitted : 2 < 1.\nAdmitted.\n(* Lemma commented_out : 1 = 1. *)\n"


def _labelled_steps():
    for name in proofs_index.names():
        for step in proofs_index.build(name).steps:
            if step.formal:
                yield name, step


def test_every_formal_label_names_a_lemma_of_the_formal_files():
    known = formal_proofs.known_labels()
    labels = [(name, step.formal) for name, step in _labelled_steps()]
    assert len(labels) >= 10
    assert [pair for pair in labels if pair[1] not in known] == []


def test_every_ball_step_has_a_formal_lemma():
    ball_steps = [(name, step) for name in proofs_index.names() for step in proofs_index.build(name).steps
                  if step.status == "ball"]
    assert len(ball_steps) >= 7
    assert [(name, step.title) for name, step in ball_steps if not step.formal] == []


def test_a_label_of_a_missing_lemma_does_not_resolve(tmp_path):
    (tmp_path / "toy.v").write_text(HEADER + TRUE_LEMMA + ADMITTED_LEMMA)
    (tmp_path / "toy.g").write_text("{ 1 in [0, 2] }\n")
    known = formal_proofs.known_labels(tmp_path)
    assert known == {"toy.v:exp_one_pos", "toy.v:two_lt_one_admitted", "toy.g:toy"}  # a comment is no lemma
    assert "toy.v:no_such_lemma" not in known and "collapse.v:no_such_lemma" not in formal_proofs.known_labels()


def test_assumptions_are_classified():
    reals = sorted(formal_proofs.CLASSICAL_REALS)
    assert formal_proofs.classify([]) == (formal_proofs.NO_AXIOMS, [])
    assert formal_proofs.classify(reals) == (formal_proofs.ONLY_REALS, [])
    assert formal_proofs.classify(reals + ["PrimFloat.add"]) == (formal_proofs.REALS_AND_PRIMITIVES, [])
    assert formal_proofs.classify(reals + ["my_axiom"]) == (formal_proofs.UNEXPECTED, ["my_axiom"])
    # an Admitted lemma rests on itself alone: it was labelled "classical reals", which it does not use
    assert formal_proofs.classify(["two_lt_one_admitted"]) == (formal_proofs.UNEXPECTED, ["two_lt_one_admitted"])


@needs_coq
def test_one_true_lemma_is_checked_on_the_classical_reals(tmp_path, capsys):
    (tmp_path / "toy.v").write_text(HEADER + TRUE_LEMMA)
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path), "--json"]) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert (row["file"], row["lemma"], row["outcome"]) == ("toy.v", "exp_one_pos", "checked")
    assert row["assumptions"] == formal_proofs.ONLY_REALS and row["seconds"] >= 0


@needs_coq
def test_planted_false_and_admitted_lemmas_fail(tmp_path, capsys):
    (tmp_path / "a_false.v").write_text(HEADER + TRUE_LEMMA + FALSE_LEMMA + LATER_LEMMA)
    (tmp_path / "b_admitted.v").write_text(HEADER + ADMITTED_LEMMA + LATER_LEMMA)
    (tmp_path / "c_trailing.v").write_text(HEADER + LATER_LEMMA + "Check no_such_constant.\n")
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path), "--json"]) == 1
    rows = {(r["file"], r["lemma"]): r for r in json.loads(capsys.readouterr().out)}
    assert rows[("a_false.v", "exp_one_pos")]["outcome"] == "checked"
    assert rows[("a_false.v", "two_lt_one")]["outcome"] == "failed"
    assert "Error" in rows[("a_false.v", "two_lt_one")]["message"]
    assert rows[("a_false.v", "zero_le_one")]["outcome"] == "failed"  # never reached
    admitted = rows[("b_admitted.v", "two_lt_one_admitted")]
    assert admitted["outcome"] == "failed" and "two_lt_one_admitted" in admitted["message"]
    assert rows[("b_admitted.v", "zero_le_one")]["outcome"] == "checked"  # not built on the admitted one
    assert rows[("c_trailing.v", "zero_le_one")]["outcome"] == "checked"
    assert rows[("c_trailing.v", "(file)")]["outcome"] == "failed"  # the file as a whole does not compile


LONG_AXIOM = ("Axiom a_rather_long_and_descriptive_name_for_a_cheat : forall x y z : R,\n"
              "  x * y * z + x * y + y * z + z * x = 2 * x * y * z + 1.\n"
              "Lemma from_a_long_axiom : 2 < 1.\n"
              "Proof. assert (H := a_rather_long_and_descriptive_name_for_a_cheat 0 0 0). lra. Qed.\n")
IN_A_MODULE = ("Module {module}.\nAxiom {axiom} : 2 < 1.\nEnd {module}.\n"
               "Lemma from_{axiom} : 2 < 1.\nProof. exact {module}.{axiom}. Qed.\n")


def test_axioms_printed_over_several_lines_are_read():
    """Print Assumptions puts a long statement on the lines after the name: such an axiom was not read at all."""
    printed = ("Axioms:\nClassical_Prop.classic : forall P : Prop, P \\/ ~ P\n"
               "a_rather_long_and_descriptive_name_for_a_cheat\n  : forall x y z : R,\n    x * y = 1\n")
    long_name = "a_rather_long_and_descriptive_name_for_a_cheat"
    assert formal_proofs._axioms(printed) == ["Classical_Prop.classic", long_name]


@needs_coq
def test_a_lemma_on_an_axiom_of_the_file_fails_whatever_its_name(tmp_path, capsys):
    """A false lemma resting on an axiom of the file was "checked": one with a long statement (printed over
    several lines, and read as no axiom), one declared in a module named as Coq's (PrimFloat.cheat,
    Classical_Prop.classic read as the primitive floats and the classical reals), or a fixpoint assumed guarded."""
    (tmp_path / "a_long.v").write_text(HEADER + LONG_AXIOM)
    (tmp_path / "b_floats.v").write_text(HEADER + IN_A_MODULE.format(module="PrimFloat", axiom="cheat"))
    (tmp_path / "c_reals.v").write_text(HEADER + IN_A_MODULE.format(module="Classical_Prop", axiom="classic")
                                        + LATER_LEMMA)
    (tmp_path / "d_guard.v").write_text(HEADER + "Unset Guard Checking.\nFixpoint loop (n : nat) : 2 < 1 := "
                                        "loop n.\nLemma from_loop : 2 < 1.\nProof. exact (loop 0). Qed.\n")
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path), "--json"]) == 1
    rows = {r["lemma"]: r for r in json.loads(capsys.readouterr().out)}
    for lemma, axiom in (("from_a_long_axiom", "a_rather_long_and_descriptive_name_for_a_cheat"),
                         ("from_cheat", "PrimFloat.cheat"), ("from_classic", "Classical_Prop.classic"),
                         ("from_loop", "loop is assumed to be guarded")):
        assert rows[lemma]["outcome"] == "failed" and axiom in rows[lemma]["message"], rows[lemma]
    assert rows["zero_le_one"]["outcome"] == "checked"


@needs_coq
def test_text_report_names_the_failure(tmp_path, capsys):
    (tmp_path / "toy.v").write_text(HEADER + FALSE_LEMMA)
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "[FAILED ] two_lt_one" in out and "0 of 1 lemmas checked" in out and "toy.v:two_lt_one" in out


def test_text_report_keeps_the_seconds_in_one_column(monkeypatch, capsys):
    """A name of 29 characters (collapse.v's trajectory_g_increases_with_a) pushed its seconds one column right."""
    names = ["exp_twice", "trajectory_g_increases_with_a", "a" * 40]
    rows = [formal_proofs.LemmaResult("toy.v", name, "checked", 0.01, formal_proofs.ONLY_REALS) for name in names]
    monkeypatch.setattr(formal_proofs, "check_all", lambda folder, names, progress: rows)
    assert main(["proofs", "--formal", "-q"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "[checked]" in line]
    assert len(lines) == 3 and len({line.index(" s  ") for line in lines}) == 1, lines


def test_text_report_says_the_proofs_seconds_are_summed_over_parallel_files(monkeypatch, capsys):
    """"822.9 s in the proofs, 809 s with the assumption reports": the second read as the total, yet was smaller,
    as the files are checked side by side; the line says which is a sum and which the wall time."""
    rows = [formal_proofs.LemmaResult(f"f{i}.v", "lemma", "checked", 5.0, formal_proofs.ONLY_REALS) for i in range(2)]
    monkeypatch.setattr(formal_proofs, "check_all", lambda folder, names, progress: rows)
    assert main(["proofs", "--formal", "-q"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert "(10.0 s in the proofs, summed over files checked in parallel; " in last and " s of wall time " in last, last

@needs_gappa
def test_gappa_script_and_its_certificate(tmp_path, capsys):
    (tmp_path / "square.g").write_text(
        "@rnd = float<ieee_64, ne>;\nx = rnd(xx);\ny rnd= x * x;\n"
        "{ x in [1, 2] -> y - x * x in [-1b-50, 1b-50] }\n")
    (tmp_path / "wrong.g").write_text(
        "@rnd = float<ieee_64, ne>;\nx = rnd(xx);\ny rnd= x * x;\n"
        "{ x in [1, 2] -> y - x * x in [-1b-60, 1b-60] }\n")
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path), "--json"]) == 1
    rows = {r["lemma"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["square"]["outcome"] == "checked" and rows["square"]["assumptions"]
    assert rows["wrong"]["outcome"] == "failed" and rows["wrong"]["message"].startswith("gappa")


@pytest.mark.parametrize("missing", ["coqc", "gappa"])
def test_missing_tool_is_bad_input(tmp_path, monkeypatch, capsys, missing):
    (tmp_path / "toy.v").write_text(HEADER + TRUE_LEMMA)
    (tmp_path / "toy.g").write_text("{ 1 in [0, 2] }\n")
    real_which = shutil.which
    monkeypatch.setattr(formal_proofs.shutil, "which", lambda name: None if name == missing else real_which(name))
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{missing} not found" in err and "apt-get install" in err


@needs_coq
def test_missing_coq_library_is_bad_input(tmp_path, capsys):
    (tmp_path / "toy.v").write_text("From NoSuchLibrary Require Import Tactic.\n" + HEADER + TRUE_LEMMA)
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NoSuchLibrary not installed" in err and "apt-get install" in err


def test_a_file_that_is_not_utf8_is_bad_input_named_as_such(tmp_path, capsys):
    """A .v file with bytes that are not UTF-8 was refused as "not valid JSON"."""
    (tmp_path / "toy.v").write_bytes((HEADER + TRUE_LEMMA).encode() + b"(* \xff *)\n")
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "toy.v is not UTF-8 text" in err and "JSON" not in err, err


def test_unknown_file_or_folder_is_bad_input(tmp_path, capsys):
    assert main(["proofs", "--formal", "no_such_file"]) == 2
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path / "absent")]) == 2
    assert main(["proofs", "--formal", "--formal-dir", str(tmp_path)]) == 2  # empty folder
    assert capsys.readouterr().err.count("\n") == 3


def test_a_file_is_named_by_its_path_too(tmp_path, monkeypatch, capsys):
    """A shell's completion gives proofs/formal/collapse.v, which was refused as "no formal proof file"; a path to
    a file elsewhere is refused with what --formal takes."""
    collapse = formal_proofs.FORMAL_DIR / "collapse.v"
    monkeypatch.chdir(formal_proofs.FORMAL_DIR.parent)
    for given in (str(collapse), "formal/collapse.v", "./formal/../formal/collapse.v", "collapse", "collapse.v"):
        assert formal_proofs.sources(names=[given]) == [collapse], given
    assert [p.name for p in formal_proofs.sources(names=["formal/ffn.v", "collapse"])] == ["collapse.v", "ffn.v"]
    (tmp_path / "collapse.v").write_text(HEADER + TRUE_LEMMA)  # the same name outside the folder
    for outside in (str(tmp_path / "collapse.v"), "formal/absent.v"):
        assert main(["proofs", "--formal", outside]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{outside} is not a .v or .g file of " in err and "--formal-dir" in err, err


def test_a_link_in_a_loop_named_for_a_file_is_bad_input(tmp_path, capsys):
    """A path given to --formal that is a link in a loop (a -> b -> a), or one among the folder's files, was an
    internal error (exit 4): comparing paths resolved it, which raises on a loop."""
    loop, other = tmp_path / "a.v", tmp_path / "b.v"
    loop.symlink_to(other)
    other.symlink_to(loop)
    (tmp_path / "c.v").write_text(HEADER + TRUE_LEMMA)
    assert main(["proofs", "--formal", str(loop)]) == 2
    assert main(["proofs", "--formal", str(tmp_path / "c.v"), "--formal-dir", str(tmp_path)]) != 4
    err = capsys.readouterr().err
    assert "internal error" not in err and err.startswith("certify: error: ") and err.count("\n") == 1, err


@pytest.mark.slow
@needs_gappa
def test_every_real_lemma_is_checked(capsys):
    assert main(["proofs", "--formal", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["outcome"] == "checked" for r in rows)
    checked = {f"{r['file']}:{r['lemma']}": r for r in rows}
    for _, step in _labelled_steps():
        assert step.formal in checked
    symbolic = [r for r in rows if r["file"] == "collapse.v"]
    assert symbolic and all(r["assumptions"] in (formal_proofs.ONLY_REALS, formal_proofs.NO_AXIOMS)
                            for r in symbolic)


@pytest.mark.slow
@needs_coq
def test_collapse_file_alone_is_checked(capsys):
    assert main(["proofs", "--formal", "collapse", "--json"]) == 0
    rows = {r["lemma"]: r for r in json.loads(capsys.readouterr().out)}
    for lemma in ("one_minus_exp_le", "tanh_quarter_le", "sigma_pair_le_tanh"):
        assert rows[lemma]["outcome"] == "checked" and rows[lemma]["assumptions"] == formal_proofs.ONLY_REALS


def test_proofs_command_shows_the_formal_label(capsys):
    assert main(["proofs", "residual.far"]) == 0
    assert "formal: residual.v:residual_far_reach" in capsys.readouterr().out
    assert main(["proofs", "residual.far", "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)[0]["steps"]
    assert {s["formal"] for s in steps} == {None, "residual.v:residual_far_ratio", "residual.v:residual_far_reach"}
