"""A malformed certificate (a field missing, of another type, nested once more) is rejected in one line that names the
field and says what is wrong, on `certify verify` and `python -m certify_checker` (exit 1, as a tampered one), where
it was rejected in Python's words ("malformed certificate: KeyError: 'A0'", "TypeError: object of type 'int' has no
len()")."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import certify_checker
from certify import engine
from certify.cli import main
from certify_checker import counterexample, fields, inequality

ROOT = Path(__file__).resolve().parents[1]
LAYER = {"X": [["1", "0"], ["0", "1"], ["-1", "1"]], "A": [["1", "0"], ["0", "1"]]}
PYTHONS = re.compile(r"\b\w*(Error|Exception)\b|NoneType|'(int|str|list|dict|float|bool)'|object is not|has no len|"
                     r"has no attribute|unhashable|indices must be")


@pytest.fixture(scope="module")
def honest() -> dict:
    return json.loads(json.dumps(engine.check(LAYER).certificate))


def sealed(cert: dict, kind: str = "inequality") -> dict:
    """cert with its digest made anew where its fields allow, so that the checker reads what was edited."""
    try:
        cert["inputs_sha256"] = (inequality.digest(cert) if kind == "inequality" else
                                 counterexample.digest(kind, cert["inputs"], cert["witness"], cert["precision"]))
    except (KeyError, TypeError):  # a field of the digest removed: the checker refuses it by the digest
        pass
    return cert


EDITS = [  # (the edit, the message after "malformed certificate: ")
    (lambda c: c["witness"].pop("A0"), "a field 'A0' is missing"),  # read from a table of the checker's own
    (lambda c: c["witness"]["A0"].update(basis=2.5), "witness.A0.basis: a number where an array is expected"),
    (lambda c: c["witness"]["A0"]["basis"].__setitem__(0, None), "witness.A0.basis[0]: null where an array is expected"),
    (lambda c: c["inputs"]["X"][0].__setitem__(0, "x"), "inputs.X[0][0]: 'x' is not a decimal"),
    (lambda c: c["values"].update(D_in=1.5), "values.D_in: a number where a string is expected"),
    (lambda c: c.update(claim=["collapse.global"]), "claim: an array where a string is expected"),
]


@pytest.mark.parametrize("edit, said", EDITS, ids=[said.split(":")[0] for _, said in EDITS])
def test_a_malformed_field_is_named(honest, edit, said):
    cert = copy.deepcopy(honest)
    edit(cert)
    confirmation = certify_checker.verify(sealed(cert))
    assert not confirmation.ok and not confirmation.refused, confirmation
    assert confirmation.message.startswith(f"malformed certificate: {said}"), confirmation.message
    assert not PYTHONS.search(confirmation.message), confirmation.message


def _edits(value, path=()):
    """Every field of value removed, or given another JSON type or one more level of nesting."""
    if path:
        yield path, "removed"
        for other in (None, 7, "x", [], {}, "nest"):
            yield path, other
    items = value.items() if isinstance(value, dict) else enumerate(value[:2]) if isinstance(value, list) else ()
    for key, item in items:
        yield from _edits(item, (*path, key))


def _edited(cert: dict, path: tuple, edit) -> dict:
    cert = copy.deepcopy(cert)
    parent = cert
    for key in path[:-1]:
        parent = parent[key]
    if edit == "removed":
        parent.pop(path[-1])
    else:
        parent[path[-1]] = [parent[path[-1]]] if edit == "nest" else edit
    return cert


def test_no_malformed_certificate_is_refused_in_pythons_words(honest, tmp_path, capsys):
    """Every field of an inequality's and a counterexample's certificate removed, of another type or nested once more:
    never a Python exception's name or type in the message."""
    assert main(["counterexample", "residual-far", "--out", str(tmp_path / "far.json"), "-q"]) == 0
    capsys.readouterr()
    for cert in (honest, json.loads((tmp_path / "far.json").read_text())):
        for path, edit in _edits(cert):
            if path == ("inputs_sha256",):
                continue
            message = certify_checker.verify(sealed(_edited(cert, path, edit), cert["kind"])).message
            assert not PYTHONS.search(message), (cert["kind"], path, edit, message)


@pytest.mark.parametrize("command", [["certify", "verify"], ["certify_checker"]])
def test_a_malformed_certificate_is_one_line_without_a_traceback(honest, tmp_path, command):
    cert = copy.deepcopy(honest)
    cert["witness"].pop("A0")
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(sealed(cert)))
    done = subprocess.run([sys.executable, "-m", *command, str(path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, check=False)
    assert done.returncode == 1 and done.stderr == "" and done.stdout.count("\n") == 1, done
    assert done.stdout.startswith("REJECTED: ") and "malformed certificate: a field 'A0' is missing" in done.stdout, done


def test_a_large_malformed_certificate_is_described_without_walking_all_of_it(honest, monkeypatch):
    """Naming the field walks the certificate: 64 MiB of one array took 50 s and 3 GB, for a message.  Past
    fields.WALKED parts no field is named, and no more than that many parts are walked."""
    cert = copy.deepcopy(honest)
    cert["witness"]["A0"]["basis"] = [2.5] * (3 * fields.WALKED)
    walked = []
    monkeypatch.setattr(fields, "_entries", lambda value, entries=fields._entries: walked.append(1) or entries(value))
    confirmation = certify_checker.verify(sealed(cert))
    assert not confirmation.ok and confirmation.message.startswith("malformed certificate: "), confirmation
    assert 0 < len(walked) <= fields.WALKED, len(walked)


def test_naming_a_malformed_field_writes_out_no_integer_longer_than_the_quotes(honest):
    """Naming the field compared every integer of the certificate, written out in decimal, with the texts its message
    quotes (15,000 of 4000 digits: 3.8 s, three times reading them: int to str takes time growing with the square of
    the digits); one longer than every quote is now passed over unwritten.  Under Python's least limit on the digits
    it writes out (640), writing one out raises, and the field is still named."""
    cert = copy.deepcopy(honest)
    cert["witness"]["A0"]["top"] = [7 ** 4700 + k for k in range(100)]  # 3972 digits each
    least = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        confirmation = certify_checker.verify(sealed(cert))
    finally:
        sys.set_int_max_str_digits(least)
    assert confirmation.message == "malformed certificate: witness of the wrong size", confirmation


@pytest.mark.parametrize("q", ["0x1p16000", "0x1p-16000", "1" * 4100 + "e300"])
def test_a_number_too_long_to_write_is_described_in_json_terms(q, tmp_path, capsys):
    """A q whose exact value has more than 4300 digits (2^16000 written 0x1p16000) is read, but Python refuses to write
    its integers in decimal: the message was Python's ("Exceeds the limit (4300 digits) for integer string
    conversion; use sys.set_int_max_str_digits() to increase the limit"), advice for a programmer."""
    assert main(["counterexample", "residual-far", "--out", str(tmp_path / "far.json"), "-q"]) == 0
    capsys.readouterr()
    cert = json.loads((tmp_path / "far.json").read_text())
    cert["inputs"]["q"] = q
    confirmation = certify_checker.verify(sealed(cert, "residual-far"))
    assert not confirmation.ok and confirmation.message.startswith("malformed certificate: "), confirmation
    assert "sys." not in confirmation.message and "more than 4300 digits" in confirmation.message, confirmation


def test_verify_exits_1_on_a_malformed_certificate_and_2_on_what_is_no_certificate_as_the_readme_says(
        honest, tmp_path, capsys):
    """The exit code of a certificate that is valid JSON but malformed was documented only through "What `verify`
    checks" (its fields among them): a field missing, unknown or of another type is a rejection (1), as an edited
    certificate's, on `certify verify` and the checker alike; JSON certify does not read, or JSON that states no
    certificate format, is unreadable (2).  The README's exit codes now say which is which."""
    missing, unknown, retyped = (copy.deepcopy(honest) for _ in range(3))
    missing.pop("values")
    unknown["note"] = "mine"
    retyped["witness"] = 5
    texts = {**{name: json.dumps(sealed(cert)) for name, cert in
                (("missing", missing), ("unknown", unknown), ("retyped", retyped))},
             "not JSON": json.dumps(honest)[:-1], "a key twice": '{"format": 1, ' + json.dumps(honest)[1:],
             "no format": json.dumps({k: v for k, v in honest.items() if k != "format"}), "a list": "[]"}
    expected = {"missing": 1, "unknown": 1, "retyped": 1, "not JSON": 2, "a key twice": 2, "no format": 2, "a list": 2}
    for name, text in texts.items():
        path = tmp_path / "cert.json"
        path.write_text(text)
        assert main(["verify", str(path), "-q"]) == expected[name], name
        said = capsys.readouterr()
        assert (said.out.startswith("REJECTED") if expected[name] == 1 else said.err.startswith("certify: error: ")), said
        checker = subprocess.run([sys.executable, "-m", "certify_checker", str(path)], capture_output=True, text=True,
                                 cwd=ROOT, timeout=120, check=False)
        assert checker.returncode == expected[name], (name, checker)
    readme = " ".join((ROOT / "README.md").read_text().split())
    exit_codes = readme[readme.index("### Exit codes"):readme.index("### Limits")]
    assert ("a certificate that is valid JSON but has a field missing, unknown or of another type is rejected "
            "as an edited one: exit 1") in exit_codes
    assert ("a file that is not JSON certify reads (malformed, a key twice, NaN) or not a certificate (no "
            '`"format": "certify-certificate/1"`: a configuration, a campaign\'s `summary.json`) is unreadable: '
            "exit 2") in exit_codes
