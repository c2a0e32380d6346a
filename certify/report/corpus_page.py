"""The page of `certify model --corpus`: index.html in the run's folder, from the run's summary.json.

Both steps of collapse.global are theorems, so the outcome expected of every (sentence, head) pair
is "holds": a step with a violated or undecided pair is flagged.  The regimes are observations (which
side of float64's thresholds a D^2 falls), listed without an expectation.  The page is derived
output, outside the job's integrity checks (certify.studies.models.corpus_job), and is rewritten by
every run, an interrupted one included.
"""

from __future__ import annotations

from pathlib import Path

from certify.engine import HOLDS, UNDECIDED, VIOLATED
from certify.report import environment, files, page
from certify.studies.models.certified import REGIMES
from certify.studies.models.corpus_job import CERTIFICATES, SUMMARY_JSON, SUMMARY_TEXT
from certify.studies.models.corpus_summary import COUNTED, RANGES_LABEL, STEPS, bin_midpoint, log_bin_value

STEP_STATEMENTS = {"step1": "D(P_h X) <= tau(P_h) D", "step2": "tau(P_h) <= 1 - exp(-a D^2)"}
EXPECTED = "holds on every pair"
HEAD_COLUMNS = ["head", "sentences", *REGIMES,
                "a D^2: min", "median", "max", "tau: min", "median", "max",
                "steps"]


def _number(value) -> str:
    return "-" if value is None else f"{value:.4g}"


def _fraction(value) -> str:
    """tau in [0, 1]: four decimals, or 1-<distance> when rounding would show 1 (a nearly hard head)."""
    if value is None:
        return "-"
    return f"1-{1 - value:.1e}" if 0 < 1 - value < 5e-5 else f"{value:.4f}"


def _run(summary: dict) -> page.Section:
    config, totals, bits = summary["config"], summary["totals"], summary["precision_bits"]
    rows = [["model", f"{summary['model_name']} ({summary['model']})"],
            ["layers x heads, d", f"{config['n_layers']} x {config['n_heads']}, d = {config['d']}"],
            ["corpus", f"{summary['corpus']}: {summary['corpus_sentences']} sentences"],
            ["sentences run", str(totals["sentences"])],
            ["tokens per sentence", f"{_number(totals['tokens']['min'])} to {_number(totals['tokens']['max'])}"],
            ["precision", f"{bits['start']} bits, doubled per head up to {bits['max']} while undecided"]]
    return page.Section("run", [page.Table(["parameter", "value"], rows)])


def _verdicts(summary: dict) -> page.Section:
    totals = summary["totals"]
    steps = totals["steps"]
    rows = [[step, STEP_STATEMENTS[step], str(steps[step][HOLDS]), str(steps[step][VIOLATED]),
             str(steps[step][UNDECIDED]), EXPECTED] for step in STEPS]
    flagged = [k for k, step in enumerate(STEPS) if steps[step][VIOLATED] or steps[step][UNDECIDED]]
    regimes = [[name, str(count), summary["regimes"][name]] for name, count in totals["regimes"].items()]
    informative = totals["heads_ever_informative"]
    n_heads = summary["config"]["n_layers"] * summary["config"]["n_heads"]
    return page.Section("verdicts", [
        f"collapse.global on the real attention of every head, over {totals['head_sentences']} (sentence, head) "
        f"pairs; {COUNTED}.",
        page.Table(["step", "statement", HOLDS, VIOLATED, UNDECIDED, "expected"], rows, flagged=flagged),
        page.Table(["regime of 1 - exp(-a D^2) in float64", "(sentence, head) pairs", "meaning"], regimes),
        f"Heads certified informative for at least one sentence ({len(informative)} of {n_heads}): "
        + (", ".join(informative) or "none") + f"; {totals['layer_sentences_full_rank']} (sentence, layer) pairs "
        "certified full rank."])


def _steps(sentences: int, not_held: dict) -> str:
    """A head's steps: "both hold" over its sentences, else the count of each step not held; "-" for a head of no
    sentence yet (a run interrupted before its first), on which nothing holds."""
    if not sentences:
        return "-"
    if not any(not_held.values()):
        return "both hold"
    return ", ".join(f"{step}: {count} not held" for step, count in not_held.items() if count)


def _heads(summary: dict) -> page.Section:
    rows, flagged = [], []
    for k, h in enumerate(summary["heads"]):
        a_D2, tau, steps = h["a_D2"], h["tau"], h["steps"]
        not_held = {step: steps[step][VIOLATED] + steps[step][UNDECIDED] for step in STEPS}
        rows.append([f"L{h['layer']}H{h['head']}", str(h["sentences"]), *(str(h["regimes"][name]) for name in REGIMES),
                     _number(a_D2["min"]), _number(log_bin_value(a_D2["log10_quantiles"]["0.5"])), _number(a_D2["max"]),
                     _fraction(tau["min"]), _fraction(bin_midpoint(tau["quantiles"]["0.5"])), _fraction(tau["max"]),
                     _steps(h["sentences"], not_held)])
        if any(not_held.values()):
            flagged.append(k)
    return page.Section("heads", [page.Table(HEAD_COLUMNS, rows, flagged=flagged, caption=(
        "L<layer>H<head>, both from 0; regime counts over the sentences; the medians are the midpoints of the "
        "bins (a D^2: 0.02 in log10; tau: 0.005) holding them; the extremes are those of the ball enclosures, "
        f"{RANGES_LABEL}."))])


def _certificates(summary: dict) -> page.Section:
    # the certificates the records name (checked against their digests), not whatever certificates/ holds
    paths = [f"{CERTIFICATES}/{name}" for name in summary["certificates"]]
    blocks: list = [page.Links([page.Link(f"{SUMMARY_JSON} (the summary, as on this page)", SUMMARY_JSON),
                                page.Link(f"{SUMMARY_TEXT} (the summary as text)", SUMMARY_TEXT),
                                page.Link("manifest.json (the run's parameters and committed sentences)",
                                          "manifest.json")])]
    if paths:
        blocks += [f"The attention-head certificate of every head with a violated step ({len(paths)}). "
                   + files.VERIFY_HERE,
                   page.Table(["certificate", "verify"],
                              [[page.Link(path, path), files.verify_command(path)] for path in paths])]
    else:
        blocks.append("No step is violated, so no certificate is kept: the certificates of the steps that hold "
                      "are checked by the independent checker and dropped (each holds the head's weights); "
                      "certify model --text SENTENCE --out DIR writes them again.")
    return page.Section("files and certificates", blocks)


def _outcome(pairs: int, not_held: int) -> str:
    """The lead's line on the steps over `pairs` (sentence, head) pairs, `not_held` of the step outcomes not holds;
    none holds over no pair (a run interrupted before its first sentence)."""
    if not_held:
        are = "step outcome is" if not_held == 1 else "step outcomes are"
        return f"{not_held} {are} NOT the predicted 'holds' (flagged below)."
    if not pairs:
        return "No (sentence, head) pair is certified yet: nothing holds so far."
    return "Both steps of collapse.global hold on every pair, as the mathematics predicts."


def build(summary: dict, out_dir, argv: list[str] | None) -> page.Page:
    """The page of the corpus run whose summary.json data is `summary`, in its folder `out_dir`."""
    out_dir = Path(out_dir)
    totals = summary["totals"]
    steps = totals["steps"]
    not_held = sum(steps[step][VIOLATED] + steps[step][UNDECIDED] for step in STEPS)
    lead = [f"{summary['model_name']} over the corpus {summary['corpus']}: {totals['sentences']} of "
            f"{summary['corpus_sentences']} sentences run, {totals['head_sentences']} (sentence, head) pairs.",
            _outcome(totals["head_sentences"], not_held)]
    if totals["sentences"] < summary["corpus_sentences"]:
        lead.append("Not every sentence is run yet: the same command (without --sentences, or with a larger one) "
                    "continues the run.")
    figures = files.job_figures(out_dir)
    sections = [_run(summary), _verdicts(summary), _heads(summary), _certificates(summary)]
    sections += files.figure_sections(out_dir, figures) + [environment.section(argv)]
    return page.Page(f"certify model --corpus: {summary['model_name']}", lead, sections)


def write(summary: dict, out_dir, argv: list[str] | None) -> Path:
    """Write out_dir/index.html for a corpus run (see build)."""
    return page.write(build(summary, out_dir, argv), out_dir)
