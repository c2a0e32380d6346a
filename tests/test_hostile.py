"""Hostile inputs and forged certificates (generated cases; the audit's examples are only seeds).

Classes: numbers beyond binary64, deep nesting (bounds and JSON), undefined and disguised bounds,
huge integers and duplicate keys, stated enclosures that exclude the truth, unchecked fields, the
precision, resource caps, corrupted campaign folders, and the internal-error exit code.  Every
run goes through certify.cli.main in-process, which turns any escaping exception into exit 4, so
"never a traceback" is "never exit 4 and no Traceback on stderr".
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import random
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest
from flint import arb, ctx
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import certify_checker as checker
import certify_checker.exact
from certify import engine
from certify.cli import main
from certify.core import config, expr, jsonfile, limits, npzfile, numbers
from certify.errors import BadInput
from certify.jobs.store import chain
from certify.search import campaign
from certify.suite import cases
from certify_checker import bound as checker_bound
from certify_checker import counterexample as checker_counterexample
from certify_checker import inequality as checker_inequality
from certify_checker import limits as checker_limits
from certify_checker import schema as checker_schema
from certify_checker import trajectory as checker_trajectory

QUICK = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
ROOT = Path(__file__).resolve().parent.parent
PLANTED = "(1-exp(-a*D**2/8))*D"  # false: two antipodal tokens reach D tanh(a D^2 / 4)


def run_cli(argv, capsys) -> tuple[int, str, str, float]:
    started = time.time()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err, time.time() - started


def assert_clean(code: int, err: str, allowed=(0, 1, 2, 3)) -> None:
    """Never an internal error, never a traceback; bad input is exactly one line."""
    assert code in allowed, (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert err.startswith("certify: error: ") and err.count("\n") == 1, err


def write_json(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def redigest(cert: dict) -> dict:
    cert["inputs_sha256"] = checker.inequality.digest(cert)
    return cert


@pytest.fixture(scope="module")
def holds_cert():
    return engine.check(cases.gaussian(6, 3, seed=3)).certificate


@pytest.fixture(scope="module")
def violated_cert():
    return engine.check(cases.antipodal(500.0), bound=PLANTED).certificate


@pytest.fixture(scope="module")
def counterexample_cert():
    from types import SimpleNamespace
    from certify.studies.thesis import residual_far
    return residual_far.build(SimpleNamespace(q="0.1", lam=None)).certificate


# --- numbers beyond binary64: the screen stands aside, arb decides -----------------------------

def beyond_binary64():
    """Exact numbers outside binary64's range (above 2^1024, or below its smallest subnormal but
    not 0), in each spelling a configuration accepts: decimal, hex float, integer, rational."""
    sign = st.sampled_from(["", "-"])
    decimal = st.builds(lambda s, m, k: f"{s}{m}e{k}", sign, st.integers(1, 10**6),
                        st.one_of(st.integers(309, 3999), st.integers(-3999, -330)))
    hexfloat = st.builds(lambda s, m, k: f"{s}0x{m:x}p{k}", sign, st.integers(1, 2**60),
                         st.one_of(st.integers(1024, 12000), st.integers(-12000, -1200)))
    integer = st.builds(lambda s, k, r: f"{s}{10**k + r}", sign, st.integers(309, 1500), st.integers(0, 10**9))
    rational = st.builds(lambda k: f"1/{10**k}", st.integers(330, 1500))
    return st.one_of(decimal, hexfloat, integer, rational)


@QUICK
@given(big=beyond_binary64(), other=st.one_of(beyond_binary64(), st.integers(-3, 3).map(str)),
       a=st.sampled_from(["1", "1/1000", "0x1p-1100", "1e-700"]))
def test_numbers_beyond_binary64_are_decided_by_arb_alone(tmp_path_factory, capsys, big, other, a):
    assume(numbers.parse_number(big) != numbers.parse_number(other))  # D = 0 makes 2 D = D(PX) an equality
    folder = tmp_path_factory.mktemp("n")
    path = write_json(folder / "c.json", {"X": [[big], [other]], "A": [[a]]})
    code, out, err, _ = run_cli(["check", path, "--max-prec", "512"], capsys)
    assert_clean(code, err, allowed=(0, 3))  # collapse.global is a theorem: never violated
    uniform = write_json(folder / "u.json", {"X": [[big], [other]], "A": [["0"]]})
    code, out, err, _ = run_cli(["check", uniform, "--bound", "2*D", "--max-prec", "512"], capsys)
    # D(PX) <= D <= 2 D: never violated.  Decided unless the coordinates need more than 512 bits to
    # resolve PX = the mean of the tokens (e.g. 10^309 and 10^309 + 1): then honestly undecided.
    assert_clean(code, err, allowed=(0, 3))


@QUICK
@given(exponent=st.integers(309, 3000), sign=st.sampled_from(["", "-"]))
def test_an_exact_diameter_beyond_binary64_is_enclosed(exponent, sign):
    """D = 2 * 10^k for tokens +-10^k, beyond binary64: the certificate's D_in contains it exactly."""
    result = engine.check({"X": [[f"{sign}1e{exponent}"], [f"{'' if sign else '-'}1e{exponent}"]], "A": [["0"]]},
                          bound="2*D", max_prec=256)
    assert result.verdict == engine.HOLDS and result.screen == []  # no float64 screen
    assert checker.exact.contains(arb(2 * 10**exponent), result.certificate["values"]["D_in"])
    assert checker.verify(result.certificate).ok


@QUICK
@given(digits=st.integers(309, 1000))
def test_a_huge_d_k_and_a_huge_bound_literal_are_no_crash(capsys, tmp_path_factory, digits):
    config = {"X": [["1", "0"], ["0", "1"]], "W_Q": [["1"], ["2"]], "W_K": [["3"], ["1"]], "d_k": 10 ** digits}
    path = write_json(tmp_path_factory.mktemp("dk") / "c.json", config)
    code, _, err, _ = run_cli(["check", path, "--max-prec", "256"], capsys)
    assert_clean(code, err, allowed=(0, 3))
    code, _, err, _ = run_cli(["check", path, "--bound", f"1e{digits}*D", "--max-prec", "256"], capsys)
    assert_clean(code, err, allowed=(0,))


@pytest.mark.parametrize("command", ["check", "trajectory"])
@pytest.mark.parametrize("entry", ["0x1p-16000", "0." + "0" * 3990 + "1e-4000", "9" * 4000 + "e4000"],
                         ids=["hex", "decimal-small", "decimal-large"])
def test_numbers_too_long_for_a_certificate_are_bad_input(tmp_path, capsys, command, entry):
    """Within the exponent caps but not writable in a certificate: refused on reading, not a crash
    when the certificate is written."""
    path = write_json(tmp_path / "c.json", {"X": [[entry], ["0"]], "A": [["0"]]})
    extra = ["--bound", "2*D"] if command == "check" else ["--layers", "2"]
    code, _, err, _ = run_cli([command, path, *extra, "--max-prec", "512"], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "4300 digits" in err


def test_the_digits_limit_stops_where_numbers_can_be_read(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text('{"X": [[' + "1" * 4500 + '], [0]], "A": [[0]]}')
    code, _, err, _ = run_cli(["check", path, "--limit", "digits=5000"], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "at most 4300 digits" in err


@pytest.mark.parametrize("text", ["1e1_000_000_000", "1e-1_000_000_000", "1_000", "1/3_0", "0.5e1_0"])
def test_underscores_in_a_number_are_bad_input(text):
    """Python's Fraction reads digits with underscores: the exponent cap looked for plain digits, so
    "1e1_000_000_000" passed it and the exact 10^(10^9) never finished (check, --bound and verify)."""
    with pytest.raises(BadInput, match="underscores"):
        numbers.parse_number(text)
    with pytest.raises(BadInput, match="underscores"):
        expr.parse(f"{text}*D")


@pytest.mark.parametrize("text", ["1e1_000_000_000", "1e-1_000_000_000", "1E+4_001"])
def test_the_checker_caps_an_underscored_exponent(text):
    with pytest.raises(ValueError, match="underscores"):  # refused unread, as certify refuses it
        certify_checker.exact.rational(text)


def test_an_underscored_exponent_is_refused_by_every_front_end_without_a_hang(tmp_path, holds_cert):
    huge = "1e1_000_000_000"
    path = write_json(tmp_path / "c.json", {"X": [[huge], [0]], "A": [[1]]})
    forged = copy.deepcopy(holds_cert)
    forged["inputs"]["X"][0][0] = huge
    cert = write_json(tmp_path / "cert.json", redigest(forged))
    for argv, code in ((["certify", "check", path], 2), (["certify", "check", ROOT / "examples/layer.json", "--bound",
                                                                  f"{huge}*D"], 2),
                       (["certify", "verify", cert], 1), (["certify_checker", cert], 1)):
        done = subprocess.run([sys.executable, "-m", *map(str, argv)], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == code and "underscore" in (done.stderr if code == 2 else done.stdout), \
            (argv, done.stdout, done.stderr)


def test_no_float64_svd_of_a_matrix_that_is_not_finite():
    """LAPACK's SVD may never return on an infinite entry (the A below loops forever): the witness
    refuses it as a LinAlgError, a ValueError, and the float64 screen stands aside."""
    import numpy as np
    from certify.core import spectral
    for A in ([[np.inf, 1.0], [1.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]]):
        with pytest.raises(np.linalg.LinAlgError):
            spectral.witness(np.array(A))


def test_an_entry_beyond_binary64_beside_a_huge_one_is_decided_not_a_hang(tmp_path):
    """A = [[1e3000, 0, -3.082], [-3.027, 1e300, 2], [0.771, -40, 0.3]]: its float64 array holds inf
    beside 1e300, whose SVD did not return (the bound's a = ||A||_2 asked the screen for one)."""
    path = write_json(tmp_path / "c.json", {"X": [[1, 0, 0], [0, 1, 0], [0, 0, 2]],
                                            "A": [["1e3000", 0, -3.082], [-3.027, 1e300, 2], [0.771, -40, 0.3]]})
    done = subprocess.run([sys.executable, "-m", "certify", "check", str(path), "--bound", "a*D"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 3) and done.stderr == "", done.stderr


def test_json_integers_are_exact_and_json_fractions_binary64(tmp_path, capsys):
    """9007199254740993 stays odd: D = 1 exactly (as binary64 both tokens would coincide)."""
    config = {"X": [[9007199254740993], [9007199254740992]], "A": [[0]]}
    result = engine.check(config)
    assert result.certificate["inputs"]["X"] == [["9007199254740993"], ["9007199254740992"]]
    assert arb(result.certificate["values"]["D_in"]).contains(1)
    stated = engine.check({"X": [[0.1], [0]], "A": [[0]]}).certificate["inputs"]["X"][0][0]
    assert type(stated) is float and stated.hex() == "0x1.999999999999ap-4"  # a JSON number: its binary64 value


# --- bounds: canonical form, comments, control characters, nesting, undefined -----------------

NAMES = st.sampled_from(["D", "a", "n", "d"])
LITERALS = st.sampled_from(["0", "1", "2", "0.5", "0.125", "3", "10", "1000", "1e9", "2.5e-7", "1e400", "0.1"])


def trees():
    leaves = st.one_of(NAMES.map(lambda n: n), LITERALS)

    def extend(children):
        return st.one_of(
            st.tuples(st.sampled_from(["+", "-", "*", "/", "**"]), children, children).map(
                lambda t: f"({t[1]}){t[0]}({t[2]})"),
            children.map(lambda c: f"-({c})"),
            st.tuples(st.sampled_from(["exp", "log", "sqrt", "tanh", "sinh", "cosh"]), children).map(
                lambda t: f"{t[0]}({t[1]})"),
            st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=2, max_size=3)).map(
                lambda t: f"{t[0]}({', '.join(t[1])})"))

    return st.recursive(leaves, extend, max_leaves=12)


@settings(max_examples=150, deadline=None)
@given(text=trees())
def test_canonical_bounds_round_trip_and_the_checker_renders_them_alike(text):
    try:
        parsed = expr.parse(text)
    except BadInput:  # an exponent above MAX_POWER, say
        return
    again = expr.parse(parsed.text)
    assert again.tree == parsed.tree and again.text == parsed.text
    assert checker_bound.canonical(parsed.text) == parsed.text


@pytest.mark.parametrize("text", ["(-a)**2", "(-D)**3 + 1", "-a**2", "(-2)**2", "a - (D - n)", "(a**2)**3", "a**-2",
                                  "a/(D*n)", "-(a - D)"])
def test_the_checker_keeps_the_parentheses_that_change_a_bound_s_reading(text):
    """(-a)**2 and -a**2 are two bounds (Python reads the second as -(a**2)): the checker's canonical text of each
    is itself, and reads as the same tree, so a certificate's bound is never re-read as the other."""
    import ast
    assert expr.parse(text).text == text
    assert checker_bound.canonical(text) == text
    assert ast.dump(ast.parse(checker_bound.canonical(text), mode="eval")) == ast.dump(ast.parse(text, mode="eval"))


@settings(max_examples=60, deadline=None)
@given(text=trees(), junk=st.sampled_from(["# ", "#", "\x1b[2K\r", "\x1b[8m", "\t", "\x00", "\u200b", "\u00a0",
                                           "\r", "\n", "\\", "\U0001d403"]), where=st.floats(0, 1))
def test_comments_and_non_printing_characters_are_refused_by_engine_and_checker(text, junk, where):
    cut = int(where * len(text))
    disguised = text[:cut] + junk + text[cut:]
    with pytest.raises(BadInput):
        expr.parse(disguised)
    with pytest.raises(ValueError):
        checker_bound.canonical(disguised)


def test_a_comment_never_reaches_the_screen(tmp_path, capsys):
    code, out, err, _ = run_cli(["check", ROOT / "examples/saturated.json", "--bound", "2*D # (1-exp(-a*D**2/8))*D"],
                                capsys)
    assert code == 2 and "comment" in err and out == ""


def test_a_bound_the_tokenizer_warns_about_is_one_line_everywhere(tmp_path, violated_cert):
    """Python's tokenizer warns of a number run into a keyword ("1if", "0x1for") while parsing: the warning
    ("<unknown>:1: SyntaxWarning: invalid decimal literal") was a line on stderr before check's one line of bad
    input, and before verify's verdict on a certificate stating such a bound.  It is the syntax error it warns of."""
    cert = copy.deepcopy(violated_cert)
    cert["bound"] = cert["values"]["comparisons"][0]["rhs_expr"] = "1if D else 2"
    path = write_json(tmp_path / "cert.json", redigest(cert))
    for argv, code in ((["certify", "check", ROOT / "examples/layer.json", "--bound", "D*1or 2"], 2),
                       (["certify", "verify", path], 1), (["certify_checker", path], 1)):
        done = subprocess.run([sys.executable, "-m", *map(str, argv)], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == code and "Warning" not in done.stderr + done.stdout, (argv, done.stdout, done.stderr)
    assert done.stdout.startswith("REJECTED") and "grammar" in done.stdout, done.stdout
    with pytest.raises(BadInput, match="syntax error"):
        expr.parse("D*1or 2")


@QUICK
@given(depth=st.integers(101, 1500), shape=st.sampled_from(["minus", "sum", "parens", "calls", "power"]))
def test_deep_bounds_are_bad_input(depth, shape):
    text = {"minus": "-" * depth + "D", "sum": "D" + "+1" * depth, "parens": "D*(" * depth + "D" + ")" * depth,
            "calls": "exp(" * depth + "D" + ")" * depth, "power": "D" + "**1" * depth}[shape]
    assume(len(text) <= expr.MAX_LENGTH)
    with pytest.raises(BadInput, match="nested deeper|syntax error|too many|longer"):
        expr.parse(text)
    with pytest.raises(ValueError):
        checker_bound.canonical(text)


@pytest.mark.parametrize("text, written", [("(1/3)**(1e4000)", "'1e4000'"), ("D**(9" + "0" * 1500 + ")", "'9000")])
def test_an_absurd_exponent_is_quoted_as_written_and_short(text, written):
    """The exponent was quoted as its exact value: 1e4000 made a message of 4000 digits."""
    with pytest.raises(BadInput, match="is larger than 1024") as refused:
        expr.parse(text)
    assert f"the exponent {written}" in str(refused.value) and len(str(refused.value)) < 200


@QUICK
@given(undefined=st.sampled_from(["1/0", "D/(1-1)", "log(0)", "log(1-1)", "log(-2)", "sqrt(-1)", "(-1)**0.5",
                                  "0**-1", "D/(D*0)"]),
       wrap=st.sampled_from(["{}", "D + {}", "max(D, {})", "({})*D", "exp(-{})"]))
def test_undefined_bounds_are_bad_input(capsys, undefined, wrap):
    code, out, err, _ = run_cli(["check", ROOT / "examples/layer.json", "--bound", wrap.format(undefined)], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "undefined" in err and out == ""


# --- JSON: nesting, huge integers, duplicate keys (engine and checker) ------------------------

@QUICK
@given(depth=st.integers(33, 5000), where=st.sampled_from(["X", "A", "top"]))
def test_deep_json_is_bad_input_for_check_and_verify(tmp_path_factory, capsys, depth, where):
    deep = "[" * depth + "]" * depth
    text = {"X": '{"X": %s, "A": [[1]]}', "A": '{"X": [[1], [0]], "A": %s}', "top": "%s"}[where] % deep
    path = tmp_path_factory.mktemp("deep") / "c.json"
    path.write_text(text)
    for command in ("check", "verify"):
        code, _, err, _ = run_cli([command, path], capsys)
        assert_clean(code, err, allowed=(2,))
    with pytest.raises(checker.Unreadable):
        checker.load(text)


@pytest.mark.parametrize("row, levels", [("[1.5, 2, %s]", 3), ("[%s, 1.5]", 3), ('[1, {"k": %s}]', 4)])
def test_nesting_after_numbers_in_a_row_is_counted(row, levels):
    """The nesting check skips rows of plain numbers at C speed: a deep value among numbers still
    counts.  levels: the object, X and the row (and the inner object) above the deep value."""
    text = '{"X": [%s]}' % (row % ("[" * 3 + "]" * 3))
    jsonfile.loads(text, "c.json", limits.Limits(nesting=levels + 3))  # exactly at the limit: read
    with pytest.raises(BadInput, match="nested deeper"):
        jsonfile.loads(text, "c.json", limits.Limits(nesting=levels + 2))


def test_numpy_values_inside_rows_are_read_exactly():
    """The walk over a configuration converts numpy numbers sitting among plain numbers in a row."""
    import numpy as np

    case = config.parse({"X": [[1.0, np.float32(0.1)], [np.int64(3), 2.0]], "A": np.eye(2)})
    assert case.X[0][1] == float(np.float32(0.1)) and case.X[1][0] == 3 and type(case.X[1][0]) is not np.int64


@QUICK
@given(digits=st.integers(4001, 20000))
def test_huge_json_integers_are_bad_input(tmp_path_factory, capsys, digits):
    path = tmp_path_factory.mktemp("int") / "c.json"
    path.write_text('{"X": [[%s], [0]], "A": [[1]]}' % ("7" * digits))
    for command in ("check", "verify"):
        code, _, err, _ = run_cli([command, path], capsys)
        assert_clean(code, err, allowed=(2,))
        assert "(raise it with --limit digits=N)" in err  # the option both commands have
    with pytest.raises(checker.Unreadable):
        checker.load(path.read_text())


@QUICK
@given(key=st.sampled_from(["verdict", "bound", "claim", "inputs", "precision", "values", "format"]),
       first=st.booleans())
def test_duplicate_keys_are_refused_by_engine_and_checker(tmp_path_factory, capsys, violated_cert, key, first):
    text = json.dumps(violated_cert)
    fake = json.dumps({key: "holds" if key == "verdict" else violated_cert[key]})[1:-1]
    forged = "{" + fake + ", " + text[1:] if first else text[:-1] + ", " + fake + "}"
    path = tmp_path_factory.mktemp("dup") / "cert.json"
    path.write_text(forged)
    code, _, err, _ = run_cli(["verify", path], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "twice" in err
    with pytest.raises(checker.Unreadable, match="twice"):
        checker.load(forged)


def test_duplicate_keys_in_a_configuration_are_bad_input(tmp_path, capsys):
    path = tmp_path / "c.json"
    path.write_text('{"X": [[1], [-1]], "A": [[1]], "X": [[1], [1]]}')
    code, _, err, _ = run_cli(["check", path], capsys)
    assert code == 2 and "twice" in err


# --- forged certificates ----------------------------------------------------------------------

def _shift(text: str, amount: Fraction) -> str:
    """The ball text moved by `amount` (its radius kept)."""
    with ctx.workprec(4096):
        ball = arb(text)
        return (ball + arb(amount.numerator) / amount.denominator).str(60, radius=True, more=True)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["D_in", "D_out", "bound", "lhs", "rhs"]), radii=st.floats(1.5, 1e6),
       sign=st.sampled_from([1, -1]), which=st.sampled_from(["holds", "violated"]))
def test_an_enclosure_moved_off_the_truth_is_rejected(holds_cert, violated_cert, name, radii, sign, which):
    """Moved by more than twice its radius, a stated ball excludes the true value: rejected, even with a
    recomputed digest, although the moved ball may still overlap the checker's low-precision one."""
    cert = copy.deepcopy(holds_cert if which == "holds" else violated_cert)
    values = cert["values"]
    key, holder = (name, values) if name in ("D_in", "D_out", "bound") else (name, values["comparisons"][-1])
    with ctx.workprec(cert["precision"] + 64):
        ball = arb(holder[key])
        step = Fraction(2 * radii) * Fraction(str(float(ball.rad()))) + Fraction(1, 10**40) * abs(Fraction(str(float(ball.mid()))))
    holder[key] = _shift(holder[key], sign * step)
    assert not checker.verify(redigest(cert)).ok


def test_the_audit_examples_of_excluded_truths_are_rejected(tmp_path):
    """D_out off the truth by 1.8e-15; value-rotation-stack's D_out = [2.0e-14 +/- 1.01e-14] (truth 1.02e-24)."""
    cert = engine.check(cases.gaussian(6, 3, seed=3)).certificate
    radius = Fraction(str(float(arb(cert["values"]["D_out"]).rad())))
    cert["values"]["D_out"] = _shift(cert["values"]["D_out"], 2 * radius + Fraction(18, 10**16))  # misses by 1.8e-15
    assert not checker.verify(redigest(cert)).ok
    rotation = engine.check(str(ROOT / "examples/value-rotation-stack.json"), claim="value.bounded").certificate
    rotation["values"]["D_out"] = "[2.0e-14 +/- 1.01e-14]"
    confirmation = checker.verify(redigest(rotation))
    assert not confirmation.ok and "does not contain" in confirmation.message


@QUICK
@given(delta=st.integers(-1000, 1000).filter(lambda k: k != 0))
def test_an_altered_precision_is_rejected_without_a_new_digest(holds_cert, violated_cert, delta):
    for original in (holds_cert, violated_cert):
        cert = copy.deepcopy(original)
        cert["precision"] = max(53, original["precision"] + delta)
        assume(cert["precision"] != original["precision"])
        confirmation = checker.verify(cert)
        assert not confirmation.ok and "digest" in confirmation.message


@QUICK
@given(field=st.sampled_from(["lambda", "rho", "note", "q2"]), where=st.sampled_from(["inputs", "top"]),
       value=st.sampled_from(["1", "100", "0.5", "-3"]))
def test_counterexample_certificates_state_nothing_unchecked(field, where, value):
    """residual-far's lambda and expansive-v's rho and lambda are no longer stated beside the
    configuration; any added field is rejected, and editing the configuration breaks the digest."""
    from certify.studies.thesis import expansive_v, residual_far
    from types import SimpleNamespace
    for module, args in ((residual_far, SimpleNamespace(q="0.1", lam=None)),
                         (expansive_v, SimpleNamespace(rho="2", layers="3", lam=None))):
        honest = module.build(args).certificate
        assert checker.verify(honest).ok and set(honest["inputs"]) <= {"q", "config"}
        cert = copy.deepcopy(honest)
        (cert["inputs"] if where == "inputs" else cert)[field] = value
        assert not checker.verify(cert).ok
        edited = copy.deepcopy(honest)
        layers = edited["inputs"]["config"].get("layers") or [edited["inputs"]["config"]]
        layers[0]["A"][0][0] = value
        assert not checker.verify(edited).ok


def test_a_bound_in_a_non_canonical_form_is_rejected(violated_cert):
    for spelling in ("(1-exp(-a*D**2/8))*D", "(1 - exp(-a*D**2/8))*D ", "(1 - exp(-a*D**2/8))*D # x",
                     "(1 - exp(-a*D**2/8))*D\x1b[8m"):
        cert = copy.deepcopy(violated_cert)
        cert["bound"] = spelling
        assert not checker.verify(redigest(cert)).ok


# far from proved (a quarter of the domain open after 30 s of CPU): a search stopped at its 2000th closing test leaves boxes open
RESUMED_REGION = ["collapse.tanh", "--n", "6", "--d", "1", "--radius", "2", "--norm", "2"]


@pytest.fixture(scope="module")
def partial_proof(tmp_path_factory) -> dict:
    """An undecided region proof (a search stopped by Ctrl-C at its 2000th closing test), to forge."""
    from certify.prove import region as region_proof

    original, calls = region_proof._first_closing, []

    def closing(*args):
        calls.append(1)
        if len(calls) == 2000:
            raise KeyboardInterrupt
        return original(*args)

    region_proof._first_closing = closing
    try:
        region, profile = region_proof.prepare("collapse.tanh", None, 6, 1, 2, 2, 60.0)
        result = region_proof.prove(region, profile, interruptible=True)
    finally:
        region_proof._first_closing = original
    assert result.interrupted and result.confirmed and result.leaves and result.left
    return result.certificate


def _open_box_claimed_closed(cert):
    """An open box that the direct test does not close, passed off as a leaf closed by it."""
    from certify_checker import region_proof as checker_region

    profile = checker_region.Profile(cert["claim"], cert["bound"], cert["region"]["n"], cert["region"]["d"])
    with ctx.workprec(53):
        which = next(k for k, box in enumerate(cert["left"])
                     if not checker_region._closes("direct", checker_region._box(box, len(box)), profile))
    opens = [k for k, symbol in enumerate(cert["tree"]) if symbol == "?"]
    index = opens[which]
    cert["tree"] = cert["tree"][:index] + "." + cert["tree"][index + 1:]
    cert["leaves"].insert(cert["tree"][:index].count("."),
                          {"box": cert["left"].pop(which), "method": "direct", "precision": 53})


def _stated_proved(cert):
    cert["verdict"] = "proved"


def _wider_region(cert):
    cert["region"]["radius"] = "3"


@pytest.mark.parametrize("forge, why", [(_open_box_claimed_closed, "checker does not confirm"),
                                        (_stated_proved, "not undecided"), (_wider_region, "another claim")])
def test_a_forged_partial_proof_is_not_resumed(tmp_path, capsys, partial_proof, forge, why):
    forged = copy.deepcopy(partial_proof)
    forge(forged)
    out = tmp_path / "merged.json"
    code, _, err, _ = run_cli(["prove", *RESUMED_REGION, "--resume", write_json(tmp_path / "part.json", forged),
                               "--out", out], capsys)
    assert code == 2 and "--resume" in err and why in err and not out.exists()
    assert_clean(code, err)


# --- resources --------------------------------------------------------------------------------

def test_the_engine_and_checker_limits_are_the_same_numbers():
    assert vars(limits.DEFAULT) == vars(checker_limits.LIMITS)
    assert limits.CONTAINER_BYTES == checker_limits.CONTAINER_BYTES


MANY = {"objects": "[" + ",".join(["{}"] * 600) + "]", "rows": "[" + ",".join(["[0]"] * 600) + "]",
        "keys": "{" + ",".join(f'"{k}":0' for k in range(600)) + "}"}


@pytest.mark.parametrize("text", MANY.values(), ids=MANY.keys())
def test_many_arrays_objects_and_keys_are_refused_before_they_are_read(tmp_path, capsys, text):
    """64 MiB of `[{},{},...]` (22 million objects) took 3.4 GB and 23 s to be refused by check, verify and the checker:
    a text holds one array, object or key per limits.CONTAINER_BYTES bytes of the bytes limit, counted before it is
    read (a lowered limit here: 601 of them in 8000 bytes, above 500; within 9616 bytes' 601)."""
    path = tmp_path / "many.json"
    path.write_text(text, encoding="utf-8")
    assert len(text) <= 8000
    for command in ("check", "verify"):
        code, out, err, _ = run_cli([command, path, "--limit", "bytes=8000"], capsys)
        assert_clean(code, err, allowed=(2,))
        assert f"{path}: 601 arrays, objects and keys" in err and "(raise it with --limit bytes=N)" in err and out == ""
        _, _, err, _ = run_cli([command, path, "--limit", "bytes=9616"], capsys)
        assert "arrays, objects and keys" not in err  # read, and refused as no configuration or certificate
    with pytest.raises(checker.OverLimit, match="601 arrays, objects and keys"):
        checker.load(text, checker_limits.Limits(bytes=8000))
    checker.load(text, checker_limits.Limits(bytes=9616))
    done = subprocess.run([sys.executable, "-m", "certify_checker", "--limit", "bytes=8000", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and str(path) in done.stderr
    assert "`python -m certify_checker --limit bytes=N` raises it" in done.stderr


def test_the_files_certify_writes_hold_fewer_arrays_objects_and_keys_than_the_limit(
        holds_cert, violated_cert, counterexample_cert, partial_proof):
    """No certificate is refused by the count of its arrays, objects and keys that its length does not refuse (a
    region proof's leaves and open boxes are the densest, one per 18 bytes or more); nor one the engine confirms as a
    tree under the default limits (certify.engine.certificate._fits: its compact text at most bytes / 34)."""
    for cert in (holds_cert, violated_cert, counterexample_cert, partial_proof):
        text = jsonfile.dumps(cert)
        assert jsonfile._containers(text) * limits.CONTAINER_BYTES <= len(text)
    assert (limits.DEFAULT.bytes - 1) // (limits.DEFAULT.nesting + 2) <= limits.DEFAULT.bytes // limits.CONTAINER_BYTES


def test_too_many_tokens_and_too_much_memory_are_refused_before_any_work(tmp_path, capsys):
    rows = [[str(i % 7), str(i % 5)] for i in range(5000)]
    path = write_json(tmp_path / "big.json", {"X": rows, "A": [["1", "0"], ["0", "1"]]})
    code, _, err, seconds = run_cli(["check", path], capsys)
    assert code == 2 and "5000 tokens" in err and "--limit tokens" in err and seconds < 30
    small = write_json(tmp_path / "n400.json", {"X": rows[:400], "A": [["1", "0"], ["0", "1"]]})
    code, _, err, seconds = run_cli(["check", small, "--claim", "collapse.dobrushin"], capsys)
    assert code == 2 and "memory" in err and seconds < 30
    code, _, err, _ = run_cli(["check", ROOT / "examples/layer.json", "--limit", "tokens=4"], capsys)
    assert code == 2 and "above the limit of 4" in err
    code, _, err, _ = run_cli(["check", ROOT / "examples/layer.json", "--limit", "tokens=6"], capsys)
    assert code == 0


def _no_number_read(monkeypatch):
    """Reading a number fails the test (tokens given as JSON numbers are read as one float64 array, not here)."""
    def refuse(*args, **kwargs):
        raise AssertionError("a number was read before the sizes were checked")
    monkeypatch.setattr(numbers, "parse_number", refuse)


ROW = [str(k % 7) for k in range(1024)]  # strings: the slow reading (a Fraction each)


@pytest.mark.parametrize("data, words", [
    ({"X": [["1", "2"]] * 200_000, "A": [["1", "0"], ["0", "1"]]}, "200000 tokens"),
    ({"X": [ROW, ROW], "layers": [{"A": [ROW] * 1024}] * 12}, "memory limit"),
    ({"X": [[1, 0], [0, 1]], "A": [ROW] * 1024}, "expected shape 2 x 2, got 1024 x 1024"),
    ({"X": [[1, 0], [0, 1]], "W_Q": [[1, 0], [0, 1]], "W_K": [ROW] * 2}, "expected shape 2 x 2, got 2 x 1024"),
], ids=["tokens", "memory", "A's shape", "W_K's shape"])
def test_sizes_are_checked_before_any_number_is_read(monkeypatch, data, words):
    """A 24 MB file of two million tokens (as strings) took over a minute to read before the limit on tokens
    refused it; twelve 1024 x 1024 layers of strings (50 MB) as long before the memory estimate did."""
    _no_number_read(monkeypatch)
    with pytest.raises(BadInput, match=words):
        config.load(data)


def test_a_trajectory_beyond_the_memory_estimate_is_refused_before_starting(tmp_path, capsys):
    """512 tokens through 64 layers: trajectory ran 80 s at 11.7 GB, and then the checker refused its
    certificate (exit 3); it is refused before any work, as check refuses it."""
    rng = random.Random(0)
    data = {"X": [[rng.randint(-9, 9), rng.randint(-9, 9)] for _ in range(512)],
            "layers": [{"A": [[0.1, 0], [0, 0.1]]}] * 64}
    code, out, err, seconds = run_cli(["trajectory", write_json(tmp_path / "c.json", data), "--layers", "2"], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "refused before starting" in err and "memory" in err and seconds < 30 and out == ""


@pytest.mark.parametrize("argv", [
    ["check", ROOT / "examples/layer.json"],
    ["check", ROOT / "examples/saturated.json", "--bound", "(a*D**2)**0.5*D"],
    ["attack", "--n", "2", "--d", "1", "--budget", "50"],
    ["sample", "--n", "3", "--d", "2", "--count", "4", "--workers", "1"],
], ids=["check", "check --bound", "attack", "sample"])
def test_a_nesting_limit_the_certificate_cannot_meet_is_refused_before_starting(tmp_path, capsys, argv):
    """--limit nesting=3 reads a configuration nested 3 deep, but its certificate nests deeper: check decided it,
    the checker refused the certificate, and the precision was raised to 65536 bits for nothing (exit 3, "not
    certified"); a campaign so undecided every configuration.  The inputs a certificate states are measured as the
    checker measures a certificate's tree before any work: exit 2, one line naming the limit, nothing written."""
    out = tmp_path / "out"
    extra = ["--out", out] if argv[0] == "sample" else []
    code, printed, err, _ = run_cli([*argv, *extra, "--limit", "nesting=3", "-q"], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "refused before starting" in err and "--limit nesting=N" in err and printed == "" and not out.exists()


def test_a_check_whose_certificate_passes_the_size_limit_does_not_raise_its_precision():
    """A certificate the checker's size limit refuses at 53 bits is refused at every precision: the check stops
    there, undecided, naming the limit, instead of climbing to 65536 bits (the inputs alone fit the limit here,
    the certificate with its values and witnesses does not: 1,939 bytes of text)."""
    data = json.loads((ROOT / "examples/layer.json").read_text())
    result = engine.check(data, limits=limits.Limits(bytes=1000))
    assert result.verdict == "undecided" and result.precision == 53, (result.precision, result.reason)
    assert "--limit bytes=N" in result.reason and result.certificate is None


def test_a_check_whose_certificate_the_checker_refuses_does_not_raise_its_precision(monkeypatch):
    """A checker's refusal is final: every limit it prices grows with the precision (sizes, digits, work), so a
    certificate refused at 53 bits is refused at all higher ones.  Only a refusal of the certificate's tree stopped the
    climb: one past the checker's work limit (a checker pricing it above the engine's estimate) was checked again at
    each rung to 65536 bits.  The check stops at the first, undecided, naming the limit."""
    from certify.engine import certificate
    confirm, stated = certificate.confirm, []

    def stricter(cert, _limits=limits.DEFAULT, written=True):  # the checker's work limit below this certificate's price
        stated.append(cert["precision"])
        return confirm(cert, limits.Limits(work=1000), written)

    monkeypatch.setattr(certificate, "confirm", stricter)
    result = engine.check(json.loads((ROOT / "examples/layer.json").read_text()))
    assert result.verdict == "undecided" and result.certificate is None and stated == [53], (stated, result.reason)
    assert "above the checker's limit of 1e+03" in result.reason and "not raised further" in result.reason


def test_what_check_writes_under_a_byte_limit_verify_reads_under_it(tmp_path, capsys):
    """The engine measured a certificate's tree by its entries, shorter than its text: `check --limit bytes=1000`
    wrote a certificate of 1,939 bytes that `verify --limit bytes=1000` refused (exit 2).  A certificate is
    confirmed as the text written: at its own size it is written and verified; a byte less, check is undecided,
    naming the limit, and writes nothing."""
    config = ROOT / "examples/layer.json"
    full = tmp_path / "full.json"
    code, _, err, _ = run_cli(["check", config, "--out", full], capsys)
    assert code == 0, err
    size = full.stat().st_size
    at_size, below = tmp_path / "at-size.json", tmp_path / "below.json"
    code, _, err, _ = run_cli(["check", config, "--limit", f"bytes={size}", "--out", at_size], capsys)
    assert code == 0 and at_size.read_bytes() == full.read_bytes(), err
    code, _, err, _ = run_cli(["verify", at_size, "--limit", f"bytes={size}"], capsys)
    assert code == 0, err
    code, printed, err, _ = run_cli(["check", config, "--limit", f"bytes={size - 1}", "--out", below], capsys)
    assert_clean(code, err, allowed=(3,))
    assert "--limit bytes=N" in printed and not below.exists(), printed


def test_under_the_default_limits_a_certificate_is_confirmed_as_the_text_written_too(monkeypatch):
    """Under the default limits the engine confirmed a certificate as a tree, measured by its entries, without its text:
    `certify trajectory --layers 4000` of three tokens near 1e-300 (their D_t down to 10^(-10^1908), every ball's
    exponent 1900 digits) was confirmed and reported certified, and `certify verify` refused its 69 MB certificate
    (exit 2, past the 64 MiB limit).  A certificate whose text may pass the bytes limit is measured as written: here the
    defaults stand at 1,000 bytes, below layer.json's certificate of 1,939."""
    from certify.engine import certificate
    cert = engine.check(json.loads((ROOT / "examples/layer.json").read_text())).certificate
    small = limits.Limits(bytes=1000)
    monkeypatch.setattr(certificate, "DEFAULT", small)
    confirmation = certificate.confirm(cert, small)
    assert not confirmation.ok and confirmation.refused and "1000 bytes" in confirmation.message, confirmation


def test_an_npz_header_stating_more_than_its_data_is_bad_input(tmp_path, capsys):
    """numpy allocates the shape a .npy header states before it reads: a 4 kB file asked for 80 GB ("out of
    memory") or, at 3.2 GB, got it."""
    import io
    import zipfile

    import numpy as np
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 100000), }"
    header += " " * (117 - len(header)) + "\n"
    lying = b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + bytes(64)
    honest = io.BytesIO()
    np.save(honest, np.eye(2))
    path = tmp_path / "lying.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("X.npy", lying)
        archive.writestr("A.npy", honest.getvalue())
    code, _, err, _ = run_cli(["check", path], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "X.npy states an array larger than the data it holds" in err


def test_an_npz_of_more_arrays_than_a_configuration_has_is_refused_before_they_are_read(tmp_path, capsys):
    """Each array of an .npz file was opened, and then loaded, before its key was judged: 290,000 empty arrays (65 MB)
    took 16 s to be refused.  A configuration of L layers states at most 21 L + 3 (here L = 2: 45)."""
    import numpy as np
    layer = ("A W_Q W_K b_Q b_K d_k beta V mask residual".split()
             + [f"ffn.{k}" for k in "W1 b1 W2 b2 activation residual".split()]
             + [f"layernorm.{k}" for k in "position kind gain bias eps".split()])
    keys = ["X", "name", "description"] + [f"layers.{t}.{key}" for t in range(2) for key in layer]
    assert len(layer) == npzfile.ARRAYS_PER_LAYER and len(keys) == 45
    for extra in ([], ["layers.2.A"]):
        path = tmp_path / f"arrays-{len(keys + extra)}.npz"
        np.savez(path, **{key: np.zeros(1) for key in keys + extra})
        code, _, err, _ = run_cli(["check", path, "--limit", "layers=2"], capsys)
        assert_clean(code, err, allowed=(2,))
        assert ("46 arrays, more than the 45 of a configuration of at most 2 layers (raise it with --limit layers=N)"
                in err) == bool(extra), err


def test_a_certificate_demanding_too_much_work_is_refused(tmp_path, capsys, holds_cert):
    cert = copy.deepcopy(holds_cert)
    cert["precision"] = 1 << 20
    path = write_json(tmp_path / "cert.json", redigest(cert))
    code, _, err, seconds = run_cli(["verify", path], capsys)
    assert code == 2 and "precision" in err and seconds < 30
    big = {"X": [["1"] * 64] * 64, "layers": [{"A": [["0"] * 64] * 64}]}  # the audit's 64 x 64 at 2^20 bits
    confirmation = checker.verify({**cert, "inputs": big}, checker.Limits(precision=1 << 20))
    assert confirmation.refused and ("work" in confirmation.message or "memory" in confirmation.message)
    assert checker.verify({**cert, "inputs": big, "precision": 1 << 16}).refused


def _tokens_only(kind: str, n: int) -> dict:
    """A certificate of an attention head or of centred tokens on n tokens in R^2 (its content aside)."""
    X = [[str(i), str(i * i % 7)] for i in range(n)]
    inputs = {"X": X} if kind == "centred-rank" else {"X": X, "W_Q": [["1"], ["0"]], "W_K": [["0"], ["1"]],
                                                       "steps": {"dobrushin": "holds"}}
    witness = {} if kind == "centred-rank" else {"route": "direct", "basis": [["1", "0"], ["0", "1"]], "top": ["1", "0"]}
    cert = {"format": checker.FORMAT, "kind": kind, "verdict": "certified", "claims": [], "inputs": inputs,
            "witness": witness, "values": {}, "precision": 64}
    return {**cert, "inputs_sha256": checker_counterexample.digest(kind, inputs, witness, 64)}


@pytest.mark.parametrize("kind", ["centred-rank", "attention-head"])
def test_tokens_without_layers_are_held_to_the_caps(kind):
    """A head's or a centred-rank certificate's tokens have no list of layers: their shapes were not
    read, and 4000 x 4000 tokens (32 MB of JSON) had the checker factorise for hours."""
    small = checker.Limits(tokens=8, dim=8)
    assert not checker.verify(_tokens_only(kind, 8), small).refused
    assert checker.verify(_tokens_only(kind, 9), small).refused
    wide = _tokens_only("attention-head", 4)
    wide["inputs"]["W_Q"] = wide["inputs"]["W_K"] = [["1"] * 9, ["0"] * 9]  # d_k = 9 > dim
    assert checker.verify(wide, small).refused


def _full_precision(kind: str, n: int, d: int, bits: int) -> dict:
    """A certificate of an attention head (direct route, k = d) or of centred tokens, n x d, whose entries
    (1/3-like rationals) fill every bit of the stated precision, with a valid digest."""
    rows = lambda r, c, seed: [[f"{(seed + 7 * i + 3 * j) % 97 - 48}/{3 * ((i + j) % 5) + 1}" for j in range(c)]
                               for i in range(r)]
    inputs = {"X": rows(n, d, 1)} if kind == "centred-rank" else {"X": rows(n, d, 1), "W_Q": rows(d, d, 2),
                                                                   "W_K": rows(d, d, 3), "steps": {"dobrushin": "holds"}}
    witness = {} if kind == "centred-rank" else {"route": "direct", "basis": rows(d, d, 4), "top": rows(1, d, 5)[0]}
    cert = {"format": checker.FORMAT, "kind": kind, "verdict": "certified", "claims": [], "inputs": inputs,
            "witness": witness, "values": {}, "precision": bits}
    return {**cert, "inputs_sha256": checker_counterexample.digest(kind, inputs, witness, bits)}


@pytest.mark.parametrize("kind", ["centred-rank", "attention-head"])
def test_a_head_or_centred_tokens_at_a_huge_precision_are_refused_quickly(tmp_path, capsys, kind):
    """Within the caps on n and d, 256 x 256 full entries at 2^16 bits kept the checker for hours (a 64 x 64
    head took 160 s): their work is estimated (head.work, rank.work) and refused before any; the same
    shapes at 53 bits are not."""
    hostile = write_json(tmp_path / "hostile.json", _full_precision(kind, 256, 256, 1 << 16))
    code, _, err, seconds = run_cli(["verify", hostile], capsys)
    assert code == 2 and "refused" in err and "work" in err and seconds < 30, (code, err, seconds)
    started = time.time()
    done = subprocess.run([sys.executable, "-m", "certify_checker", str(hostile)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "work" in done.stderr and time.time() - started < 60, done.stderr
    module = importlib.import_module(checker.KINDS[kind])
    modest = _full_precision(kind, 16, 16, 53)
    assert 0 < module.work(modest) < module.work(_full_precision(kind, 16, 16, 1 << 16))
    assert not checker.verify(modest).refused
    # a 64 x 64 head took 160 s, 64 x 64 centred tokens 30 s (admitted: a minute or two), 128 x 128 eight times that
    big = 64 if kind == "attention-head" else 128
    assert checker.verify(_full_precision(kind, big, big, 1 << 16)).refused
    unrouted = _full_precision(kind, 256, 256, 1 << 16)  # the softmax and tau come before the witness is read
    assert checker.verify({**unrouted, "witness": {}}).refused and checker.verify({**unrouted, "witness": []}).refused


def test_a_trajectory_is_held_to_the_limits_over_all_its_steps(tmp_path):
    """A trajectory applies its layers cyclically through T steps, at three precisions: its work was
    estimated for one pass through the configuration's layers at the first precision only."""
    config = {"X": [["1", "0"], ["0", "1"], ["-1", "1"]], "layers": [{"A": [["0", "0"], ["0", "0"]]}]}
    def trajectory(T, precisions=(53, 74, 128)):
        cert = {"format": checker.FORMAT, "kind": "trajectory", "layers": T, "inputs": config, "points": [], "curves": [],
                "precision": precisions[0], "curve_precision": precisions[1], "norm_precision": precisions[2]}
        return {**cert, "inputs_sha256": checker_trajectory.digest(T, config, list(precisions))}
    one_step = checker_limits.problem(3, 2, 1, 0, 53, checker_limits.LIMITS) is None
    assert one_step and not checker.verify(trajectory(1)).refused
    assert checker.verify(trajectory(10_000), checker.Limits(work=100_000)).refused
    assert not checker.verify(trajectory(10), checker.Limits(work=100_000)).refused
    assert checker.verify(trajectory(1, (53, 1 << 20, 128))).refused
    assert checker.verify(trajectory(1, (53, 74, 1 << 20))).refused
    # tau_t (n^3 / 2 ball operations a step, ENTRY units each) in every step's price: 64 tokens through 10000 steps
    # passed and took minutes; without step precisions every step is priced at the highest (128 bits), and each
    # point's curves at theirs (74 bits), each at cost() there and at twice it (a stated ball that misses the
    # checker's by rounding is recomputed so), a step's Python at both
    python, arithmetic = checker_limits.step_parts(3, 2)
    assert python >= 3 ** 3 // 2 * checker_limits.ENTRY  # tau's terms
    priced = [checker_limits.cost(b) + checker_limits.cost(2 * b) for b in (128, 74)]
    steps, curves = 1001 * (2 * python + arithmetic * priced[0]), 1001 * checker_trajectory.CURVE_WORK * priced[1]
    read = checker_schema.reading(trajectory(1000)["inputs"])[0]  # its texts read once (schema.exact)
    assert read > 0 and checker_trajectory.work(trajectory(1000)) == steps + curves + read
    assert checker.verify(trajectory(1000), checker.Limits(work=steps + curves + read)).refused


def test_the_work_of_tau_counts_in_the_checkers_estimate():
    """tau takes n^3 / 2 minima a layer (20 s at 512 tokens), outside the per-layer estimate: 26 layers of
    512 tokens in one dimension passed the limits and kept the checker for about nine minutes."""
    rng = random.Random(8)
    X = [[str(rng.randint(-9, 9))] for _ in range(40)]
    cert = engine.check({"X": X, "layers": [{"A": [["1/3"]]}] * 2}, claim="collapse.dobrushin").certificate
    texts = checker_inequality.text_work(checker_schema.reading([cert["inputs"], cert["witness"]]), cert["precision"])
    tau = checker_inequality.work(cert) - texts  # beside reading its texts
    passes = sum(checker_limits.cost(f * cert["precision"]) for f in (1, *checker_inequality.ESCALATION))
    assert tau == 2 * 40 ** 3 // 2 * checker_limits.ENTRY * passes and checker.verify(cert).ok
    assert checker.verify(cert, checker.Limits(work=tau + texts)).refused  # the layers' own work comes on top
    assert checker_inequality.work({**cert, "claim": "collapse.global"}) == texts


def test_precision_escalation_stops_at_the_memory_limit(tmp_path):
    result = engine.check(cases.antipodal(500.0), limits=limits.Limits(memory=6000))  # decided only at 1696 bits
    assert result.verdict == engine.UNDECIDED and "memory limit" in result.reason


# --- the internal-error exit code -------------------------------------------------------------

@pytest.mark.parametrize("error", [RuntimeError("planted"), KeyError("x"), AssertionError(), RecursionError()])
def test_an_unexpected_exception_exits_4_with_one_line(monkeypatch, capsys, error):
    def explode(*args, **kwargs):
        raise error
    monkeypatch.setattr(engine, "checked", explode)  # what `certify check` calls
    code, out, err, _ = run_cli(["check", ROOT / "examples/layer.json"], capsys)
    assert code == 4 and err.count("\n") == 1 and "internal error in `certify check`" in err
    assert "report" in err and "Traceback" not in err


def test_memory_error_is_bad_input_not_a_traceback(monkeypatch, capsys):
    def exhaust(*args, **kwargs):
        raise MemoryError
    monkeypatch.setattr(engine, "checked", exhaust)
    code, _, err, _ = run_cli(["check", ROOT / "examples/layer.json"], capsys)
    assert code == 2 and "out of memory" in err


def test_the_checker_module_never_exits_1_from_a_crash(tmp_path, violated_cert):
    path = write_json(tmp_path / "cert.json", violated_cert)
    planted = ("import runpy, sys, certify_checker\n"
               "def boom(*a, **k): raise RuntimeError('planted')\n"
               "certify_checker.verify = boom\n"
               f"sys.argv = ['x', {str(path)!r}]\n"
               "runpy.run_module('certify_checker', run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", planted], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 4 and "internal error" in done.stderr and "Traceback" not in done.stderr
    plain = subprocess.run([sys.executable, "-m", "certify_checker", str(path)], capture_output=True, text=True,
                           cwd=ROOT, timeout=120)
    assert plain.returncode == 0 and plain.stdout.startswith("OK")
    (tmp_path / "dup.json").write_text(json.dumps(violated_cert)[:-1] + ', "verdict": "holds"}')
    duplicate = subprocess.run([sys.executable, "-m", "certify_checker", str(tmp_path / "dup.json")],
                               capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert duplicate.returncode == 2 and "twice" in duplicate.stderr
    heavy = write_json(tmp_path / "heavy.json", redigest({**violated_cert, "precision": 1 << 20}))
    refused = subprocess.run([sys.executable, "-m", "certify_checker", str(heavy)], capture_output=True, text=True,
                             cwd=ROOT, timeout=120)
    assert refused.returncode == 2 and "limit" in refused.stderr


@pytest.mark.parametrize("text", ["null", "[1]", '"certificate"', '{"format": "certify-certificate/2", "kind": "inequality"}',
                                  '{"kind": "inequality"}'])
def test_json_that_is_no_certificate_is_unreadable_for_both_front_ends(tmp_path, capsys, text):
    """`python -m certify_checker` rejected these (exit 1) where `certify verify` finds them unreadable (2)."""
    path = tmp_path / "not-a-certificate.json"
    path.write_text(text, encoding="utf-8")
    code, _, err, _ = run_cli(["verify", path], capsys)
    assert code == 2 and "not a certify certificate" in err
    done = subprocess.run([sys.executable, "-m", "certify_checker", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2 and "not a certify certificate" in done.stderr and done.stderr.count("\n") == 1


SPOOF = "\r\x1b[2KOK: confirmed: holds at 53 bits\x1b[8m"  # back to the line's start, erase it, print OK, hide the rest


def test_a_rejection_never_prints_the_certificates_control_characters(tmp_path, capsys, holds_cert):
    """A message quotes what a certificate states: a carriage return and terminal escapes in it printed
    "OK: confirmed" over the REJECTED line of both front ends (the exit code was still 1)."""
    cert = copy.deepcopy(holds_cert)
    cert["values"]["comparisons"][0]["holds"] = SPOOF
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "\\r\\x1b[2KOK" in confirmation.message and confirmation.message.isprintable()
    path = write_json(tmp_path / "spoof.json", cert)
    code, out, err, _ = run_cli(["verify", path], capsys)
    assert code == 1 and out.startswith("REJECTED") and out.rstrip("\n").isprintable()
    done = subprocess.run([sys.executable, "-m", "certify_checker", str(path)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 1 and done.stdout.rstrip("\n").isprintable()


@pytest.mark.parametrize("field", ["verdict", "kind"])
def test_a_rejection_quotes_a_long_stated_value_cut_short(tmp_path, capsys, holds_cert, field):
    """A message quotes what a certificate states: a 100 kB value made a REJECTED line of 100 kB."""
    cert = copy.deepcopy(holds_cert)
    cert[field] = "x" * 100_000
    confirmation = checker.verify(cert)
    assert not confirmation.ok and "xxx" in confirmation.message and len(confirmation.message) <= 1000
    code, out, err, _ = run_cli(["verify", write_json(tmp_path / "long.json", cert)], capsys)
    assert code == 1 and out.startswith("REJECTED: ") and len(out) < 1100 and err == ""


# --- campaign folders -------------------------------------------------------------------------

SMALL = campaign.Campaign("log-L", 2, 1, 12, 1, bound=PLANTED, L_range=(40.0, 2000.0))


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("campaign")
    summary = campaign.run(SMALL, out, workers=1)
    assert summary["counts"]["violated"] and summary["counts"]["holds"]
    return out


def _copy(src: Path, dst: Path) -> Path:
    import shutil
    shutil.copytree(src, dst)
    return dst


def _snapshot(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


RECORD_EDITS = {
    "delete the first line": lambda lines: lines[1:],
    "holds for violated": lambda lines: [l.replace('"violated"', '"holds"') for l in lines],
    "no index": lambda lines: [json.dumps({k: v for k, v in json.loads(lines[0]).items() if k != "i"})] + lines[1:],
    "index as a string": lambda lines: [json.dumps({**json.loads(lines[0]), "i": str(json.loads(lines[0])["i"])})]
    + lines[1:],
    "a list": lambda lines: ["[1, 2]"] + lines[1:],
    "index out of range": lambda lines: [json.dumps({**json.loads(lines[0]), "i": 10**6})] + lines[1:],
    "negative index": lambda lines: [json.dumps({**json.loads(lines[0]), "i": -1})] + lines[1:],
    "unknown verdict": lambda lines: [json.dumps({**json.loads(lines[0]), "verdict": "fine"})] + lines[1:],
    "duplicated line": lambda lines: lines + lines[:1],
    "a duplicate key": lambda lines: [lines[0][:-1] + ', "verdict": "holds"}'] + lines[1:],
}


def _resign(folder: Path) -> None:
    """What a careful forger does after editing chunks: recompute every digest and the chain."""
    manifest = json.loads((folder / "manifest.json").read_text())
    for entry in manifest["chunks"]:
        data = (folder / "chunks" / f"{entry['first']:09d}.jsonl").read_bytes()
        entry["sha256"], entry["records"] = hashlib.sha256(data).hexdigest(), len(data.decode().splitlines())
    manifest["chain"] = chain(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(edit=st.sampled_from(sorted(RECORD_EDITS)), chunk=st.integers(0, 10), resign=st.booleans())
def test_an_edited_campaign_folder_stops_with_exit_2_and_changes_nothing(tmp_path_factory, finished, edit, chunk,
                                                                        resign):
    folder = _copy(finished, tmp_path_factory.mktemp("edit") / "c")
    chunks = sorted((folder / "chunks").glob("*.jsonl"))
    target = chunks[chunk % len(chunks)]
    lines = target.read_text().splitlines()
    if edit == "holds for violated" and '"violated"' not in target.read_text():
        target = next(p for p in chunks if '"verdict": "violated"' in p.read_text())
        lines = target.read_text().splitlines()
    target.write_text("".join(line + "\n" for line in RECORD_EDITS[edit](lines)))
    if resign:
        _resign(folder)
    before = _snapshot(folder)
    with pytest.raises(BadInput):
        campaign.run(SMALL, folder, workers=1)
    assert _snapshot(folder) == before


@pytest.mark.parametrize("manifest", ["[1, 2]", "{}", '{"format": "certify-campaign/2"}', "[", '"x"'])
def test_a_corrupted_manifest_is_bad_input(tmp_path, capsys, finished, manifest):
    folder = _copy(finished, tmp_path / "c")
    (folder / "manifest.json").write_text(manifest)
    code, _, err, _ = run_cli(["sample", "--bound", PLANTED, "--distribution", "log-L", "--L-range", "40", "2000",
                               "--n", "2", "--d", "1", "--count", "12", "--seed", "1", "--out", folder,
                               "--workers", "1", "--no-progress"], capsys)
    assert_clean(code, err, allowed=(2,))


def test_a_certificate_contradicting_its_record_is_caught(tmp_path, finished):
    folder = _copy(finished, tmp_path / "c")
    violation = next((folder / "certificates").glob("violated-*.json"))
    violation.rename(violation.with_name(violation.name.replace("violated", "holds")))
    with pytest.raises(BadInput, match="certificate"):
        campaign.records(folder)


def test_a_chunk_past_the_bytes_limit_is_refused_unread(tmp_path, monkeypatch, finished):
    """A chunk was read whole, then split into lines: 400 MB of empty lines, its digest and count resigned, took 4.2 GB
    and 9 s to be refused (a lowered limit here: 4000 bytes, where the job's chunks are 1 kB)."""
    from certify.jobs import store

    folder = _copy(finished, tmp_path / "c")
    first = min((folder / "chunks").glob("*.jsonl"))
    first.write_bytes(b"\n" * 4001)
    _resign(folder)
    monkeypatch.setattr(store, "DEFAULT", limits.Limits(bytes=4000))
    with pytest.raises(BadInput, match=f"chunks/{first.name} is larger than the limit of 4000 bytes"):
        campaign.records(folder)


def test_a_run_killed_between_manifest_and_chunk_resumes(tmp_path, finished):
    """The manifest entry is written before its chunk: a missing last chunk is decided again."""
    folder = _copy(finished, tmp_path / "c")
    reference = campaign.records(finished)
    last = max((folder / "chunks").glob("*.jsonl"))
    last.unlink()
    assert len(campaign.records(folder)) < len(reference)
    campaign.run(SMALL, folder, workers=1)
    assert campaign.records(folder) == reference


# --- the fuzz: random mutations of valid inputs -----------------------------------------------

HOSTILE_LEAVES = [None, True, [], {}, "x", "1e400", "-0x1p3000", "1/0", 10**300, -1, 0, 1e308, "NaN", [[1]], "9" * 50,
                  {"X": 1}, "[+/- inf]", "[nan +/- 1]", "\x1b[2K"]


def _leaves(data, path=()):
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _leaves(value, path + (i,))
    yield path


def _mutate(data, rng: random.Random):
    """A structural mutation (a node replaced, deleted or duplicated) or a textual one."""
    data = copy.deepcopy(data)
    paths = [p for p in _leaves(data) if p]
    path = rng.choice(paths)
    parent = data
    for step in path[:-1]:
        parent = parent[step]
    kind = rng.randrange(4)
    if kind == 0:
        parent[path[-1]] = rng.choice(HOSTILE_LEAVES)
    elif kind == 1 and isinstance(parent, dict):
        del parent[path[-1]]
    elif kind == 1 and isinstance(parent, list) and len(parent) > 1:
        del parent[path[-1]]
    elif kind == 2 and isinstance(parent[path[-1]], str) and parent[path[-1]]:
        text = parent[path[-1]]
        cut = rng.randrange(len(text))
        parent[path[-1]] = text[:cut] + rng.choice("0123456789.-+e/x[]# ") + text[cut + 1:]
    else:
        text = json.dumps(data)
        cut = rng.randrange(len(text))
        return text[:cut] + rng.choice(['"', "{", "]", ",", "0", "", ' "verdict": "holds",']) + text[cut + 1:]
    return json.dumps(data)


def _fuzz(tmp_path, capsys, certificates: list, examples: int, seed: int) -> None:
    rng = random.Random(seed)
    configs = [json.loads((ROOT / "examples" / name).read_text()) for name in ("layer.json", "saturated.json")]
    for k in range(examples):
        config_path = tmp_path / f"c{k}.json"
        config_path.write_text(_mutate(rng.choice(configs), rng))
        out = tmp_path / f"out{k}.json"
        target = rng.choice([[], ["--bound", PLANTED]])  # a theorem, or a false bound that can be violated
        code, stdout, err, seconds = run_cli(["check", config_path, "--max-prec", "512", "--out", out, *target],
                                             capsys)
        assert_clean(code, err)
        assert seconds < 60
        if code == 1:  # violated: a certified counterexample, confirmed by the checker
            assert checker.verify(jsonfile.read(out)).ok
        cert_path = tmp_path / f"v{k}.json"
        cert_path.write_text(_mutate(rng.choice(certificates), rng))
        code, stdout, err, seconds = run_cli(["verify", cert_path], capsys)
        assert_clean(code, err)
        assert seconds < 60
        if code == 1:
            assert stdout.startswith("REJECTED: ")


def _fuzz_campaign(tmp_path, capsys, finished, examples: int, seed: int) -> None:
    rng = random.Random(seed)
    argv = ["sample", "--bound", PLANTED, "--distribution", "log-L", "--L-range", "40", "2000", "--n", "2", "--d",
            "1", "--count", "12", "--seed", "1", "--workers", "1", "--no-progress", "--out"]
    for k in range(examples):
        folder = _copy(finished, tmp_path / f"camp{k}")
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
        target = rng.choice(files)
        text = target.read_text()
        if target.suffix == ".jsonl":
            lines = text.splitlines()
            i = rng.randrange(len(lines))
            lines[i] = _mutate(json.loads(lines[i]), rng)
            target.write_text("".join(line + "\n" for line in lines))
        else:
            target.write_text(_mutate(json.loads(text), rng))
        code, stdout, err, seconds = run_cli(argv + [folder], capsys)
        assert_clean(code, err)
        assert seconds < 60
        if code == 1:  # some violated: every listed violation certificate is confirmed
            for record in campaign.records(folder):
                if record["verdict"] == "violated":
                    assert checker.verify(jsonfile.read(folder / record["certificate"])).ok


def test_fuzz_check_and_verify(tmp_path, capsys, holds_cert, violated_cert, counterexample_cert):
    _fuzz(tmp_path, capsys, [holds_cert, violated_cert, counterexample_cert], examples=12, seed=1)


def test_fuzz_campaign_resume(tmp_path, capsys, finished):
    _fuzz_campaign(tmp_path, capsys, finished, examples=8, seed=1)


@pytest.mark.slow
def test_fuzz_check_verify_and_resume_at_length(tmp_path, capsys, holds_cert, violated_cert, counterexample_cert,
                                                finished):
    _fuzz(tmp_path, capsys, [holds_cert, violated_cert, counterexample_cert], examples=300, seed=2)
    _fuzz_campaign(tmp_path, capsys, finished, examples=100, seed=2)


@pytest.mark.parametrize("argv", [
    ["graph", "--mask", "causal", "--n", "\u0663"],  # an Arabic-Indic 3: int() reads it
    ["graph", "--mask", "causal", "--n", "1_0"],
    ["attack", "--seed", "\uff11"],  # a fullwidth 1
    ["counterexample", "ln-equilibria", "--n", "\u0663"],
    ["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "inf"],
    ["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "nan"],
    ["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1", "--time-limit", "1_0"],
    ["attack", "--l-range", "1", "1e999"],
    ["attack", "--l-range", "\u0661", "4"],
])
def test_integer_and_real_options_are_ascii_decimals_and_finite(argv, capsys):
    """Options read with int() and float() took other scripts' digits, underscores, nan and inf (a time
    limit of inf ran without one); they follow the number rules of inputs now."""
    code, out, err, _ = run_cli(argv, capsys)
    assert_clean(code, err, allowed=(2,))
    assert "invalid integer value" in err or "invalid real value" in err, err
    assert out == ""


@pytest.mark.parametrize("written", ["1e1", "1E+1", "10.0", "0.1e2", "100e-1"])
def test_an_integer_option_takes_an_exact_integer_written_with_an_exponent(written, capsys):
    """--limit took work=3e7 (the README writes that limit's default 1e9) while --layers 1e3 was refused as
    "invalid integer value": every integer option takes an exact integer so written, as its integer."""
    code, out, err, _ = run_cli(["graph", "--mask", "causal", "--n", written, "--json"], capsys)
    assert code == 0 and err == "", err
    assert out == run_cli(["graph", "--mask", "causal", "--n", "10", "--json"], capsys)[1]
    code, out, err, _ = run_cli(["trajectory", ROOT / "examples/layer.json", "--layers", written, "--json", "-q"],
                                capsys)
    assert code == 0 and json.loads(out)["layers"] == 10, err


@pytest.mark.parametrize("written, reason", [("1.5", "is not an integer"), ("1e-1", "is not an integer"),
                                             ("1e400", "more than 30 digits"), ("1" * 31, "more than 30 digits"),
                                             ("1_0", "underscores"), ("\u0663", "ASCII digits")])
def test_an_integer_option_that_is_not_one_says_why(written, reason, capsys):
    code, out, err, _ = run_cli(["trajectory", ROOT / "examples/layer.json", "--layers", written], capsys)
    assert_clean(code, err, allowed=(2,))
    assert "invalid integer value" in err and reason in err and out == "", err


@pytest.mark.parametrize("value, reason", [("1e400", "more than 30 digits"), ("3.7e0", "is not an integer"),
                                           ("nan", "is not an integer"), ("1_000", "underscores"),
                                           ("\u0663", "ASCII digits")])
def test_a_limit_that_is_not_an_integer_says_why(value, reason, capsys):
    """--limit work=1e400 said "expected NAME=INTEGER" beside work=3e7 accepted; work=3.7e0 was read as 3, and
    1_000 and an Arabic-Indic 3 as integers: a limit's value follows the integer options' rules."""
    code, out, err, _ = run_cli(["check", ROOT / "examples/layer.json", "--limit", f"work={value}"], capsys)
    assert_clean(code, err, allowed=(2,))
    assert reason in err and "expected NAME=INTEGER" not in err and out == "", err
    assert limits.DEFAULT.changed(["work=2.5e7"]).work == 25_000_000
