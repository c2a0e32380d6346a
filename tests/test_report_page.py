"""The report pages (index.html of `certify run` and `certify sample`): escaped, offline, and
rendered in a real headless browser (Debian's chromium) with every image loaded and no console
message."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from certify.cli import main
from certify.core.verdicts import NOT_CERTIFIED
from certify.report import page, suite_page

HOSTILE = '<script>alert("x")</script>"><img src=x onerror=alert(1)>'
PLANTED = "(1-exp(-a*D**2/8))*D"
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


class _Attributes(HTMLParser):
    """Every src and href of a page, and its tags."""

    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.urls += [(tag, name, value or "") for name, value in attrs if name in ("src", "href")]


def _assert_offline(text: str) -> None:
    """No script, no stylesheet or font link; images are data: URIs; links are relative paths or anchors."""
    parsed = _Attributes()
    parsed.feed(text)
    assert "script" not in parsed.tags and "link" not in parsed.tags and "iframe" not in parsed.tags
    assert f'content="{html.escape(page.CONTENT_SECURITY_POLICY)}"' in text
    for tag, name, value in parsed.urls:
        if name == "src":
            assert tag == "img" and value.startswith("data:image/"), value[:60]
        else:
            parts = urlsplit(value)
            assert not parts.scheme and not parts.netloc and not value.startswith("/"), value


def _hostile_folder(parent: Path) -> Path:
    """A folder whose path holds HOSTILE (its '/' splits it into two folder names)."""
    head, tail = HOSTILE.split("/", 1)
    return parent / head / tail


def _assert_links_resolve(index: Path) -> None:
    """Every link and every verify command of the page names a file or folder that exists in the page's
    folder: called on a moved folder, one that names the folder's old place (an absolute path) fails."""
    text = index.read_text(encoding="utf-8")
    parsed = _Attributes()
    parsed.feed(text)
    links = [unquote(value) for tag, name, value in parsed.urls if name == "href" and not value.startswith("#")]
    commands = [shlex.split(html.unescape(c))[0] for c in re.findall(r"<code>certify verify (.*?)</code>", text)]
    assert links
    for path in links + commands:
        assert (index.parent / path).exists(), path


# --- the writer ------------------------------------------------------------------------------------


def _figures(folder: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [1, 0.5, 0.1])
    for suffix in ("png", "svg", "pdf"):
        (folder / "dynamics").mkdir(exist_ok=True)
        fig.savefig(folder / "dynamics" / f"curve.{suffix}")
    plt.close(fig)


def _synthetic_run(folder: Path) -> dict:
    """results.json data of a run with a certificate, an unexpected row, hostile text, figures next
    to a row's data file, and a figure of another run in a folder no row names."""
    _figures(folder)
    (folder / "dynamics" / "table.json").write_text('{"rows": []}')
    (folder / "elsewhere").mkdir()
    shutil.copy(folder / "dynamics" / "curve.png", folder / "elsewhere" / "old.png")
    (folder / "claims").mkdir()
    certificate = {"format": "certify-certificate/1", "kind": "inequality", "claim": None, "bound": HOSTILE,
                   "verdict": "violated"}
    (folder / "claims" / "planted.json").write_text(json.dumps(certificate))
    rows = [
        {"section": "claims", "case": f"bound {HOSTILE} on antipodal", "verdict": "violated", "detail": "margin -5e-109",
         "ok": True, "certificate": "claims/planted.json"},
        {"section": "claims", "case": "collapse.tanh on antipodal", "verdict": "holds", "detail": HOSTILE,
         "ok": False, "certificate": None},
        {"section": "proofs", "case": "collapse.global", "verdict": "ok", "detail": "6 steps", "ok": True,
         "certificate": None},
        {"section": "dynamics", "case": "trajectory", "verdict": "holds", "detail": "", "ok": True,
         "certificate": "dynamics/table.json"},
    ]
    return {"rows": rows, "counts": {"violated": 1, "holds": 2, "ok": 1}, "unexpected": 1, "seconds": 1.5,
            "long": False}


def test_every_string_is_escaped(tmp_path):
    text = page.render(page.Page(HOSTILE, [HOSTILE], [page.Section(HOSTILE, [
        HOSTILE, page.Table([HOSTILE], [[HOSTILE], [page.Link(HOSTILE, "a b.json")], [page.Code(HOSTILE)]],
                            caption=HOSTILE),
        page.Links([page.Link("x", "javascript:alert(1)")])])]), tmp_path)
    assert "<script" not in text.lower() and "<img" not in text.lower() and "onerror=alert" in text
    # the title twice (<title>, <h1>), the lead, the section's title, a paragraph, a column, a cell,
    # a link's text, code and a caption
    assert text.count(html.escape(HOSTILE)) == 10
    assert 'href="a%20b.json"' in text and 'href="javascript%3Aalert%281%29"' in text
    _assert_offline(text)


@pytest.mark.parametrize("path", ["../outside.json", "/etc/hosts"])
def test_a_link_must_stay_inside_the_report_folder(tmp_path, path):
    with pytest.raises(ValueError, match="inside the report folder"):
        page.render(page.Page("t", sections=[page.Section("s", [page.Links([page.Link("x", path)])])]), tmp_path)


def test_text_and_links_with_a_non_utf8_file_name(tmp_path):
    """A folder or file name of bytes that are not UTF-8 (Python's surrogate escapes) is shown with the byte
    escaped and linked by that byte: the page is UTF-8 and writing it must not fail."""
    name = "bad\udcff"
    index = page.write(page.Page(f"certify verify {tmp_path / name}", sections=[page.Section("s", [
        page.Links([page.Link(name, f"{name}/c.json")])])]), tmp_path)
    text = index.read_text(encoding="utf-8")
    assert "bad\\udcff" in text and 'href="bad%FF/c.json"' in text


def test_bidirectional_controls_are_shown_escaped(tmp_path):
    """A name holding a bidirectional control (a corpus file "x\\u202e.txt": right-to-left override) reordered the
    rest of its paragraph on the page, "3 of 10 sentences" shown as "01 fo 3": it is shown escaped (\\u202e)."""
    controls = "\u202e\u202a\u2067\u200f\u061c"
    text = page.render(page.Page(f"t{controls}", [f"corpus x{controls}.txt: 3 of 10 sentences run"]), tmp_path)
    assert not any(c in text for c in controls)
    assert "corpus x\\u202e\\u202a\\u2067\\u200f\\u061c.txt: 3 of 10" in text


def test_certify_sample_into_a_non_utf8_folder_writes_its_page(tmp_path, capfdbinary):
    out = tmp_path / "bad\udcff"
    assert main(["sample", "--n", "3", "--d", "2", "--count", "3", "--seed", "1", "--workers", "1", "--no-progress",
                 "--out", str(out)]) == 0
    assert "certify verify " in (out / "index.html").read_text(encoding="utf-8")
    # read here, not left to the report: a test report holding the name's lone surrogate cannot be sent between
    # pytest-xdist's processes; the summary names the folder by its own bytes, for a shell to take back
    printed = capfdbinary.readouterr().out
    assert b"certify verify " + os.fsencode(out) in printed


def test_expected_outcome_of_a_row():
    assert suite_page.expected_outcome({"verdict": "violated", "ok": True}) == "violated"
    assert suite_page.expected_outcome({"verdict": "holds", "ok": False}) == "not holds"
    assert suite_page.expected_outcome({"verdict": "holds", "ok": False, "expected": "undecided"}) == "undecided"


def test_the_run_page_lists_verdicts_certificates_figures_and_the_environment(tmp_path):
    started = time.time()
    results = _synthetic_run(tmp_path)
    text = page.render(suite_page.build(results, tmp_path, ["run", "--out", str(tmp_path)], started), tmp_path)
    _assert_offline(text)
    assert text.count('<tr class="flagged">') == 1 and "<td>not holds</td>" in text
    assert "<code>certify verify claims/planted.json</code>" in text and str(tmp_path) not in text.split("<h2>environment</h2>")[0]
    assert text.count("data:image/png;base64,") == 1 and text.count("data:image/svg+xml;base64,") == 1
    assert 'href="dynamics/curve.pdf"' in text and "old.png" not in text
    assert 'href="dynamics/table.json"' in text
    assert text.count("certify verify") == 1  # table.json is data, not a certificate
    for name in ("python-flint", "numpy", "python", "platform", "date", "command line"):
        assert f"<td>{name}</td>" in text
    assert f"certify run --out {tmp_path}" in text


def test_the_figures_of_a_section_whose_rows_name_no_certificate_are_shown(tmp_path):
    """A row names a certificate only (wu-figures' and the init table's named their data, which `certify verify`
    refuses), and the page found the folders this run wrote into from those names alone: a section's own folder is
    shown as well, where no row names a file."""
    started = time.time()
    results = _synthetic_run(tmp_path)
    shutil.copytree(tmp_path / "dynamics", tmp_path / "wu-figures")
    results["rows"].append({"section": "wu-figures", "case": "wu-fig1 (3 findings)", "verdict": "ok", "detail": "",
                            "ok": True, "certificate": None})
    text = page.render(suite_page.build(results, tmp_path, None, started), tmp_path)
    assert "figures: wu-figures" in text and 'href="wu-figures/curve.pdf"' in text


def test_a_certificate_no_row_names_is_labelled_not_certified(tmp_path):
    """A certificate file in a folder this run wrote into that no row names (an earlier run's, or one put
    there) is listed, but what it states is not this run's verdict: it is labelled, not shown as one."""
    started = time.time()
    results = _synthetic_run(tmp_path)
    forged = {"format": "certify-certificate/1", "kind": "inequality", "claim": "collapse.global", "verdict": "holds"}
    (tmp_path / "claims" / "forged.json").write_text(json.dumps(forged))
    text = page.render(suite_page.build(results, tmp_path, None, started), tmp_path)
    row = re.search(r'<tr><td><a href="claims/forged.json">.*?</tr>', text).group(0)
    assert f"inequality collapse.global holds ({NOT_CERTIFIED}" in row
    planted = re.search(r'<tr><td><a href="claims/planted.json">.*?</tr>', text).group(0)
    assert NOT_CERTIFIED not in planted  # the row that wrote it had the checker confirm it


def test_a_figure_an_earlier_run_left_is_not_shown_as_this_runs(tmp_path):
    """A figure in a folder this run wrote into but older than the run (an earlier run's in another --format, or
    of a text only --long certifies) was embedded in the page as this run's: it is not shown."""
    started = time.time()
    results = _synthetic_run(tmp_path)
    earlier = started - 3600
    os.utime(tmp_path / "dynamics" / "curve.svg", (earlier, earlier))
    text = page.render(suite_page.build(results, tmp_path, None, started), tmp_path)
    assert "curve.svg" not in text and "data:image/svg+xml" not in text
    assert text.count("data:image/png;base64,") == 1 and 'href="dynamics/curve.pdf"' in text


def test_a_campaign_folder_this_run_did_not_write_is_labelled_not_its_result(tmp_path):
    """A campaign folder in a folder this run wrote into that no section of it ran (`certify sample --out
    REPORT/sampling/mine`, or a campaign an earlier version's suite ran there) was listed as this run's campaigns
    are: it is labelled, as a certificate no row names is; one this run wrote (its manifest written since the run
    began: the suite restarts its campaigns) is not."""
    from certify.search import campaign

    started = time.time()
    results = _synthetic_run(tmp_path)
    for name in ("mine", "ours"):
        (tmp_path / "claims" / name).mkdir()
        (tmp_path / "claims" / name / "manifest.json").write_text(json.dumps({"format": campaign.FORMAT}))
    earlier = started - 3600
    os.utime(tmp_path / "claims" / "mine" / "manifest.json", (earlier, earlier))
    text = page.render(suite_page.build(results, tmp_path, None, started), tmp_path)
    mine = re.search(r'<tr><td><a href="claims/mine/">.*?</tr>', text).group(0)
    assert f"campaign folder: its records re-derived, its certificates checked ({NOT_CERTIFIED}: no result of this " \
           "run wrote it)" in mine and "<code>certify verify claims/mine</code>" in mine
    ours = re.search(r'<tr><td><a href="claims/ours/">.*?</tr>', text).group(0)
    assert NOT_CERTIFIED not in ours


def test_a_hidden_file_is_not_shown_on_the_run_page(tmp_path):
    """macOS leaves ._NAME beside a file written to another disk (AppleDouble, not an image): the run page embedded
    ._curve.png as a figure, a broken image; hidden names are passed over, as on a campaign's page."""
    started = time.time()
    results = _synthetic_run(tmp_path)
    (tmp_path / "dynamics" / "._curve.png").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X")
    (tmp_path / "claims" / ".hidden").mkdir()
    shutil.copy(tmp_path / "dynamics" / "curve.png", tmp_path / "claims" / ".hidden" / "shown.png")
    text = page.render(suite_page.build(results, tmp_path, None, started), tmp_path)
    assert "._curve" not in text and ".hidden" not in text
    assert text.count("data:image/png;base64,") == 1


# --- a real browser ---------------------------------------------------------------------------------

# Sets data-images on <html> once the page has loaded: "ok N" when every one of its N images decoded
# (naturalWidth > 0), else the broken ones; and data-page-width, how much wider than the window the page
# is (0 when nothing overflows it).  It logs nothing, so any console line is the page's.
CHECK = """<script nonce="check">
window.addEventListener("load", function () {
  var images = Array.from(document.images);
  var broken = images.filter(function (i) { return !(i.complete && i.naturalWidth > 0); });
  document.documentElement.setAttribute("data-images", broken.length
    ? "broken: " + broken.map(function (i) { return i.alt; }).join(", ") : "ok " + images.length);
  var page = document.documentElement;
  page.setAttribute("data-page-width", String(page.scrollWidth - page.clientWidth));
});
</script>
"""


def _browse(index: Path, tmp_path: Path, width: int = 1280) -> tuple[str, list[str]]:
    """The DOM after load and the console lines of `index` in headless chromium, in a window `width` pixels
    wide.  A copy next to it (so that its relative links resolve the same) gets CHECK and a CSP allowing only
    that script."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed (apt-get install chromium): the browser test cannot run")
    text = index.read_text(encoding="utf-8")
    policy = html.escape(page.CONTENT_SECURITY_POLICY)
    assert text.count(policy) == 1 and text.count("</body>") == 1
    text = text.replace(policy, html.escape(page.CONTENT_SECURITY_POLICY + "; script-src 'nonce-check'"))
    probe = index.with_name(".browser-check.html")
    probe.write_text(text.replace("</body>", CHECK + "</body>"), encoding="utf-8")
    try:
        done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               f"--window-size={width},800", f"--user-data-dir={tmp_path / 'chromium-profile'}", "--enable-logging=stderr", "--v=0",
                               "--dump-dom", probe.resolve().as_uri()],
                              capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if re.search(r"\bCONSOLE\b", line)]
    return done.stdout, console


def _assert_no_markup_injected(dom: str) -> None:
    """The DOM holds no element an untrusted text could have made: one script (CHECK's), data: images only."""
    parsed = _Attributes()
    parsed.feed(dom)
    assert parsed.tags.count("script") == 1 and "iframe" not in parsed.tags
    assert all(value.startswith("data:image/") for tag, name, value in parsed.urls if name == "src")


def _images_loaded(dom: str) -> int:
    found = re.search(r'<html[^>]* data-images="([^"]*)"', dom)
    assert found, "the check script did not run"
    status = found.group(1)
    assert status.startswith("ok "), status
    return int(status.split()[1])


def test_the_run_page_renders_in_a_browser(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    started = time.time()
    index = suite_page.write(_synthetic_run(folder), folder, ["run"], started)
    dom, console = _browse(index, tmp_path)
    assert console == []
    assert _images_loaded(dom) == 2  # PNG and SVG embedded; the PDF is a link
    assert dom.count("<table>") == 5  # claims, proofs, dynamics, certificates, environment
    assert html.escape(f"bound {HOSTILE} on antipodal", quote=False) in dom  # shown as text, not markup
    _assert_no_markup_injected(dom)


def test_the_run_page_works_where_its_folder_is_moved(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    started = time.time()
    suite_page.write(_synthetic_run(folder), folder, ["run"], started)
    (tmp_path / "elsewhere").mkdir()
    moved = Path(shutil.move(folder, tmp_path / "elsewhere" / "moved"))
    _assert_links_resolve(moved / "index.html")
    dom, console = _browse(moved / "index.html", tmp_path)
    assert console == [] and _images_loaded(dom) == 2


def test_a_wide_table_scrolls_in_its_box_and_a_flagged_row_says_so_in_words(tmp_path):
    """A table of many columns of long numbers (a corpus page's heads) made the whole page wider than a
    1000-pixel window; and "unexpected" on a flagged row came from the style sheet only (lost in a text
    browser or a copy)."""
    folder = tmp_path / "report"
    folder.mkdir()
    columns = [f"column {k}" for k in range(24)]
    rows = [["L0H0"] + ["[3.186402221695874282 +/- 1.65e-13]"] * 23, ["L0H1"] + ["1"] * 23]
    index = page.write(page.Page("wide", sections=[page.Section("s", [page.Table(columns, rows, flagged=[1])])]),
                       folder)
    dom, console = _browse(index, tmp_path, width=1000)
    assert console == [] and re.search(r'data-page-width="0"', dom), re.search(r'data-page-width="[^"]*"', dom)
    assert '<tr class="flagged"><td><strong>unexpected:</strong> L0H1</td>' in dom


def test_an_svg_figure_with_a_script_runs_nothing(tmp_path):
    """An SVG figure is embedded as a data: image, where a browser runs none of its scripts or handlers."""
    folder = tmp_path / "report"
    folder.mkdir()
    (folder / "evil.svg").write_text('<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" '
                                     'onload="top.document.title=\'ran\'"><script>top.document.title="ran"</script>'
                                     '<rect width="20" height="20"/></svg>')
    index = page.write(page.Page("svg", sections=[page.Section("s", [page.Figure("evil.svg", HOSTILE)])]), folder)
    dom, console = _browse(index, tmp_path)
    assert console == [] and _images_loaded(dom) == 1 and "<title>svg</title>" in dom
    _assert_no_markup_injected(dom)


def test_certify_run_writes_a_page_that_renders(tmp_path, capsys):
    folder = tmp_path / "report"
    assert main(["run", "--only", "thesis", "--out", str(folder)]) == 0  # the quickest section with certificates
    assert f"report page: {folder / 'index.html'}" in capsys.readouterr().out
    results = json.loads((folder / "results.json").read_text())
    _assert_offline((folder / "index.html").read_text())
    dom, console = _browse(folder / "index.html", tmp_path)
    assert console == [] and _images_loaded(dom) == 0
    for row in results["rows"]:
        assert f"<td>{html.escape(row['case'], quote=False)}</td><td>holds</td><td>holds</td>" in dom
        assert f"certify verify {row['certificate']}</code>" in dom
    assert main(["verify", str(folder / results["rows"][0]["certificate"])]) == 0


def test_the_browser_check_sees_a_broken_image_and_a_blocked_fetch(tmp_path):
    """The harness itself: an undecodable image is reported, and so is the console line of a fetch
    the page's Content-Security-Policy refuses; a script of the page is refused and seen as markup."""
    index = tmp_path / "index.html"
    index.write_text(f'''<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{html.escape(page.CONTENT_SECURITY_POLICY)}"></head><body>
<img alt="undecodable" src="data:image/png;base64,AAAA"><img alt="remote" src="http://192.0.2.1/x.png">
<script>document.title = "ran"</script></body></html>''')
    dom, console = _browse(index, tmp_path)
    assert 'data-images="broken: undecodable, remote"' in dom
    assert "<title>ran</title>" not in dom  # the policy stops a script that is not CHECK ...
    with pytest.raises(AssertionError, match="script"):  # ... and the markup check sees it
        _assert_no_markup_injected(dom)
    assert any("Content Security Policy" in line and "192.0.2.1" in line for line in console)


def test_certify_sample_writes_a_page_and_the_folder_stays_a_campaign(tmp_path, capsys):
    out = _hostile_folder(tmp_path) / "s1"  # the folder's name is shown as text, never as markup
    argv = ["sample", "--bound", PLANTED, "--distribution", "log-L", "--L-range", "40", "2000", "--n", "4", "--d", "3",
            "--count", "40", "--seed", "1", "--out", str(out), "--workers", "1", "--no-progress"]
    assert main(argv) == 1  # a violation of the planted bound
    index = out / "index.html"
    text = index.read_text()
    _assert_offline(text)
    summary = json.loads((out / "summary.json").read_text())
    for path in summary["certificates"]["paths"]:
        assert f'href="{path}"' in text and f"<code>certify verify {path}</code>" in text
    assert "<code>certify verify .</code>" in text
    dom, console = _browse(index, tmp_path)
    assert console == [] and "overall verdict violated" in dom and "<table>" in dom
    _assert_no_markup_injected(dom)
    assert html.escape(str(out), quote=False) in dom  # the folder's name, literally
    assert "s (1 worker)." in text  # one worker, not "1 workers"
    capsys.readouterr()
    # The page is outside the tamper-evident files: the folder verifies, resumes and restarts.
    assert main(["verify", str(out), "--workers", "1"]) == 0
    # summary.json edited to say every configuration holds: the page is drawn from the records again; a
    # certificate no record names put in certificates/ (of a configuration the campaign does not have) is refused
    forged = dict(summary, counts={"holds": 40, "violated": 0, "undecided": 0})
    (out / "summary.json").write_text(json.dumps(forged))
    (out / "certificates" / "violated-000000099.json").write_text(json.dumps({"verdict": "violated"}))
    assert main(argv) == 2
    assert "certificates/violated-000000099.json is a file no record names" in capsys.readouterr().err
    (out / "certificates" / "violated-000000099.json").unlink()
    assert main(argv) == 1
    assert "40 of 40 configurations checked" in capsys.readouterr().out
    text = index.read_text()
    assert "overall verdict violated" in text and "<td>holds</td><td>40</td>" not in text
    assert main(argv + ["--restart"]) == 1
    assert index.is_file() and json.loads((out / "summary.json").read_text())["run"]["decided"] == 40
    moved = shutil.move(out, tmp_path / "moved")
    _assert_links_resolve(Path(moved) / "index.html")


# --- the page of `certify model --corpus` ------------------------------------------------------------


def _corpus_summary(sentences: int = 3) -> dict:
    """The summary of a 2-layer, 2-head model over `sentences` sentences: head L0H0 informative on the
    first, every other pair indistinguishable; step 1 of L1H1 violated on the last sentence."""
    from certify.core.float64_limits import REGIME_WORDS
    from certify.studies.models.corpus_summary import CorpusSummary

    aggregate = CorpusSummary(2, 2)
    for i in range(sentences):
        layers = []
        for layer in range(2):
            heads = []
            for head in range(2):
                informative = (layer, head, i) == (0, 0, 0)
                a_D2 = 20.0 + i if informative else 100.0 * (1 + layer + head) + i
                violated = (layer, head, i) == (1, 1, sentences - 1)
                heads.append({"head": head, "regime": "informative" if informative else "indistinguishable",
                              "step1": "violated" if violated else "holds",
                              "certificate": f"violated-{i}-L{layer}-H{head}.json" if violated else None,
                              "step2": "holds", "a": [0.5, 0.5000001], "a_D2": [a_D2, a_D2 * (1 + 1e-12)],
                              "tau": [0.25 + 0.1 * head, 0.25 + 0.1 * head + 1e-12]})
            layers.append({"layer": layer, "rank_certified": True, "heads": heads})
        aggregate.add({"i": i, "n_tokens": 5 + i, "layers": layers})
    return aggregate.to_json({"model": "tiny", "model_name": HOSTILE, "config": {"n_layers": 2, "n_heads": 2, "d": 8},
                              "corpus": "corpus.txt", "corpus_sentences": 10,
                              "precision_bits": {"start": 64, "max": 512}, "regimes": REGIME_WORDS})


def test_the_corpus_page_lists_what_the_summary_holds(tmp_path):
    from certify.report import corpus_page

    summary = _corpus_summary()
    _figures(tmp_path)
    shutil.copy(tmp_path / "dynamics" / "curve.png", tmp_path / "corpus_heatmap.png")
    (tmp_path / "certificates").mkdir()
    (tmp_path / "certificates" / "violated-2-L1-H1.json").write_text("{}")
    (tmp_path / "certificates" / "violated-0-L0-H0.json").write_text("{}")  # a file no record names
    text = page.render(corpus_page.build(summary, tmp_path, ["model", "--corpus", "--out", str(tmp_path)]), tmp_path)
    _assert_offline(text)
    assert html.escape(HOSTILE) in text and "<script>alert" not in text  # the model's name is untrusted text
    assert "3 of 10 sentences run, 12 (sentence, head) pairs" in text
    # the steps with their expected outcome: step 1 (one violation) flagged, step 2 not
    assert '<tr class="flagged"><td><strong>unexpected:</strong> step1</td><td>D(P_h X) &lt;= tau(P_h) D</td><td>11</td><td>1</td><td>0</td>' in text
    assert "<tr><td>step2</td><td>tau(P_h) &lt;= 1 - exp(-a D^2)</td><td>12</td><td>0</td><td>0</td>" in text
    assert text.count("<td>holds on every pair</td>") == 2
    assert "<td>informative</td><td>1</td>" in text and "<td>indistinguishable</td><td>11</td>" in text
    assert "(1 of 4): L0H0;" in text
    # a row per head, with its regime counts and certified extremes; the violated head flagged
    for head in summary["heads"]:
        name = f"L{head['layer']}H{head['head']}"
        regimes = "".join(f"<td>{head['regimes'][r]}</td>" for r in ("informative", "indistinguishable",
                                                                       "underflowed", "undecided"))
        assert f"{name}</td><td>3</td>{regimes}<td>{head['a_D2']['min']:.4g}</td>" in text
    assert '<tr class="flagged"><td><strong>unexpected:</strong> L1H1</td>' in text and "step1: 1 not held" in text
    assert text.count('<tr class="flagged">') == 2
    assert 'href="certificates/violated-2-L1-H1.json"' in text and "violated-0-L0-H0" not in text
    assert "<code>certify verify certificates/violated-2-L1-H1.json</code>" in text
    assert 'href="summary.json"' in text and 'href="manifest.json"' in text
    assert text.count("data:image/png;base64,") == 1 and "Not every sentence is run yet" in text
    assert f"certify model --corpus --out {tmp_path}" in text


def test_the_corpus_page_of_no_sentence_shows_no_step_holding(tmp_path):
    """A run interrupted before its first sentence writes the page of an empty summary: no step holds on a pair
    when there is none (the page said "Both steps of collapse.global hold on every pair" and "both hold")."""
    from certify.report import corpus_page

    text = page.render(corpus_page.build(_corpus_summary(0), tmp_path, None), tmp_path)
    assert "0 of 10 sentences run" in text and "No (sentence, head) pair is certified yet" in text
    assert "hold on every pair" not in text and "both hold" not in text


def test_certify_model_corpus_writes_a_page_that_renders_and_is_rewritten_on_resume(tmp_path, capsys):
    pytest.importorskip("safetensors")
    pytest.importorskip("tokenizers")
    from tiny_bert import write_model

    # the model's folder, the corpus file and the run's folder have names that are markup: shown as text
    model = write_model(_hostile_folder(tmp_path / "model"))
    corpus = _hostile_folder(tmp_path / "corpus") / "corpus.txt"
    corpus.parent.mkdir(parents=True)
    corpus.write_text("the cat sat on the mat\na man is eating food.\n", encoding="utf-8")
    out = _hostile_folder(tmp_path / "out") / "run"
    argv = ["model", str(model), "--corpus", str(corpus), "--out", str(out), "--workers", "1", "-q"]
    assert main(argv + ["--limit", "1"]) == 0
    index = out / "index.html"
    assert f"report page: {index}" in capsys.readouterr().out
    assert "1 of 2 sentences run" in index.read_text()
    assert main(argv + ["--format", "svg"]) == 0  # resumed: the page follows the summary
    text = index.read_text()
    _assert_offline(text)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["totals"]["sentences"] == 2 and "2 of 2 sentences run" in text
    assert "Not every sentence" not in text and "--format svg" in text
    dom, console = _browse(index, tmp_path)
    assert console == []
    assert _images_loaded(dom) == 2  # both figures, in SVG: the first run's PNG of an earlier summary is gone
    assert sorted(p.name for p in out.glob("corpus_*")) == ["corpus_heatmap.svg", "corpus_histograms.svg"]
    assert dom.count("<table>") == 5  # run, steps, regimes, heads, environment
    for head in summary["heads"]:
        assert f"<td>L{head['layer']}H{head['head']}</td><td>2</td>" in dom
    _assert_no_markup_injected(dom)
    assert all(html.escape(name, quote=False) in dom for name in (model.name, str(corpus), str(out)))
    # a truncated summary.json: the next run draws the summary and the page from the records again
    (out / "summary.json").write_text('{"totals": {"steps"')
    assert main(argv) == 0
    assert "2 of 2 sentences run" in index.read_text() and json.loads((out / "summary.json").read_text()) == summary
    capsys.readouterr()
    assert main(argv + ["--restart", "--limit", "1", "--format", "pdf"]) == 0  # the old figures and page go
    assert sorted(p.name for p in out.glob("corpus_*")) == ["corpus_heatmap.pdf", "corpus_histograms.pdf"]
    assert "1 of 2 sentences run" in index.read_text()
    _assert_links_resolve(Path(shutil.move(out, tmp_path / "moved")) / "index.html")
