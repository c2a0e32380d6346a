"""The page of `certify sample`: index.html in the campaign folder, from the campaign's summary.

The page is derived output, outside the campaign's integrity checks (certify.search.campaign):
the manifest and chunks decide what a resumed run or `certify verify FOLDER` trusts, and the page
is rewritten at the end of every run.
"""

from __future__ import annotations

from pathlib import Path

from certify.core import numbers
from certify.core.verdicts import labelled
from certify.errors import counted
from certify.report import environment, files, page
from certify.search import campaign


def _verdicts(summary: dict) -> page.Section:
    unconfirmed = campaign.uncertified_holds(summary)
    blocks: list = [page.Table(["verdict", "configurations"],
                               [[f"{v} ({unconfirmed})" if v == "holds" and unconfirmed else v, str(k)]
                                for v, k in summary["counts"].items()])]
    if summary["tiers"]:
        off = summary.get("tier3_off")
        blocks.append(campaign.tiers_line(summary) + (f" ({off}; arb decided in its place in this run)" if off else ""))
    if summary["undecided_reasons"]:
        blocks.append(page.Table(["why undecided", "configurations"],
                                 [[reason, str(k)] for reason, k in summary["undecided_reasons"].items()]))
    largest = summary["largest_ratio"]
    if largest:
        verdict = labelled(largest["verdict"], largest.get("tier") != "tier3")  # tier 3 decides without the checker
        blocks.append(f"largest lhs/rhs {largest['ratio']:.6g} (configuration {largest['i']}, {verdict}, "
                      f"relative margin {numbers.power_of_ten(largest['margin_log10'])})")
    return page.Section("verdicts", blocks)


def _margins(summary: dict) -> page.Section:
    blocks: list = []
    for verdict, spread in summary["margins"].items():
        if spread["log10"]:
            s = spread["log10"]
            blocks.append(page.Table(["relative margin |rhs - lhs| / rhs", "configurations"],
                                     [[label, str(k)] for label, k in spread["decades"].items()],
                                     caption=f"{verdict}: min {numbers.power_of_ten(s['min'])}, "
                                             f"median {numbers.power_of_ten(s['median'])}, "
                                             f"max {numbers.power_of_ten(s['max'])}"))
    L = summary["L"]
    if "min" in L:
        blocks.append(page.Table(["L = a D^2", "configurations"], [[label, str(k)] for label, k in L["regimes"].items()],
                                 caption=f"L: min {L['min']:.3g}, median {L['median']:.3g}, max {L['max']:.3g}"))
    f64 = summary["float64"]
    blocks.append(page.Table(["float64 alone", "configurations"], [
        ["wrong verdict", str(f64["wrong"])],
        ["a verdict where arb is undecided", str(f64["says_decided_but_undecided"])],
        ["both sides exactly equal", str(f64["equal_sides"])],
        ["the bound computed as exactly D", str(f64["bound_is_D"])],
        ["exp(-a D^2) computed as 0", str(f64["gap_is_zero"])]]))
    return page.Section("margins, L and float64", blocks)


def _certificates(summary: dict) -> page.Section:
    # the certificates the records name (checked against their digests), violations first: not whatever
    # certificates/ holds, which may have a file no record names
    certificates = summary["certificates"]
    paths = certificates["paths"]
    rows = [[page.Link(path, path), files.verify_command(path, campaign.recheck_options(summary))] for path in paths]
    blocks: list = ["The whole folder, its records re-derived in arb and its certificates checked. " + files.VERIFY_HERE,
                    page.Table(["folder", "verify"], [[page.Link("manifest.json", "manifest.json"),
                                                       files.verify_command("")]]),
                    f"{certificates['violated']} violations and {certificates['holds']} sampled holds have a "
                    "certificate:",
                    page.Table(["certificate", "verify"], rows)]
    unlisted = certificates["violated"] + certificates["holds"] - len(paths)  # the summary lists the first ones
    if unlisted:
        blocks.append(f"... and {unlisted} more in certificates/")
    if summary["counts"]["undecided"]:
        blocks.append(page.Links([page.Link("undecided configurations (certify check --max-prec ...)", "undecided/")]))
    return page.Section("certificates", blocks)


def build(summary: dict, out_dir, argv: list[str] | None) -> page.Page:
    """The page of the campaign whose summary is `summary`, in its folder `out_dir`."""
    out_dir = Path(out_dir)
    m = summary["campaign"]
    target = campaign.summary_target(summary)
    # holds resting on tier 3's holds (no certificate) is labelled as the counts are and the terminal labels them
    verdict = labelled(campaign.summary_verdict(summary), campaign.summary_certified(summary))
    lead = [f"{target} on {m['distribution']} (n = {m['n']}, d = {m['d']}, seed {m['seed']}): "
            f"{summary['decided']} of {m['count']} configurations checked; overall verdict {verdict}."]
    if not summary["complete"]:
        lead.append("Incomplete: run the same command again (without --restart, which starts over) to continue.")
    run = summary.get("run")
    if run:
        workers = counted(run["workers"], "worker")
        lead.append(f"This run: {run['decided']} checked in {run['seconds']} s ({workers}).")
    parameters = page.Table(["parameter", "value"], [[key, "-" if value is None else str(value)] for key, value in m.items()])
    figures = files.job_figures(out_dir)
    sections = [page.Section("campaign", [parameters]), _verdicts(summary), _margins(summary),
                _certificates(summary)]
    sections += files.figure_sections(out_dir, figures) + [environment.section(argv)]
    return page.Page(f"certify sample: {target} on {m['distribution']}", lead, sections)


def write(summary: dict, out_dir, argv: list[str] | None) -> Path:
    """Write out_dir/index.html for a campaign (see build)."""
    return page.write(build(summary, out_dir, argv), out_dir)
