"""The figure of a sampled campaign (certify.search.campaign), drawn from its records:

    margins   a histogram of the relative margin |rhs - lhs| / rhs of every decided configuration, one
              bar per decade (log10 of the margin), holds and violated stacked; float64's resolution
              2^-52 is marked: a margin to its left is invisible to float64
    L         a histogram of log10 L, L = a D^2 (float64, as in the records), by verdict, with the
              float64 thresholds 54 ln 2 (1 - exp(-L) is 1.0) and 1075 ln 2 (exp(-L) is 0.0)

Records decided by the float64 tier carry a lower bound of their margin (certify.search.campaign).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from certify.core.float64_limits import GAP_UNDERFLOWS, ONE_MINUS_GAP_IS_ONE
from certify.figures import style
from certify.search import campaign

STEM = campaign.HISTOGRAMS
VERDICT_COLOURS = {"holds": style.BLUE, "violated": style.VERMILLION, "undecided": style.GREY}
FLOAT64_RESOLUTION = math.log10(2.0**-52)
MAX_BARS = 60  # more decades than this: a bar spans several


def _bins(values: list[float], resolution: float) -> np.ndarray:
    """Integer-aligned edges of width at least `resolution`, covering values, at most MAX_BARS bars."""
    low, high = float(math.floor(min(values))), float(math.ceil(max(values)))
    width = float(resolution * max(1, math.ceil((high - low) / (MAX_BARS * resolution))))
    # a bound near 10^(-10^30) has a margin of 10^(10^30): its log10 is a float past every C long (edges as Python
    # ints overflowed numpy), and edges closer than the floats there are apart would coincide
    width = max(width, 2 * math.ulp(max(abs(low), abs(high))))
    bars = max(1, math.ceil((high - low) / width))
    return low + width * np.arange(bars + 1)


def _stacked(ax, by_verdict: dict[str, list[float]], resolution: float, log: bool = False) -> bool:
    """A histogram of each verdict's values, stacked (counts on a log scale with `log`); False when there are none."""
    kept = {verdict: values for verdict, values in by_verdict.items() if values}
    if not kept:
        ax.text(0.5, 0.5, "nothing to show", transform=ax.transAxes, ha="center", va="center", color=style.GREY)
        return False
    edges = _bins([v for values in kept.values() for v in values], resolution)
    ax.hist(list(kept.values()), bins=edges, stacked=True, color=[VERDICT_COLOURS[v] for v in kept],
            label=[f"{verdict} ({len(values)})" for verdict, values in kept.items()], log=log)
    if not log:
        style.integer_ticks(ax.yaxis)
    return True


def figure(summary: dict, records: list[dict]) -> Figure:
    """The two histograms of the module docstring, for a campaign's summary and records."""
    m = summary["campaign"]
    target = campaign.summary_target(summary)
    with style.context():
        fig = style.new_figure(12, 4.6)
        margins_ax, L_ax = fig.subplots(1, 2)
        margins = {v: [r["margin_log10"] for r in records if r["verdict"] == v and r["margin_log10"] is not None]
                   for v in ("holds", "violated")}
        if _stacked(margins_ax, margins, 1, log=True):  # the far tail is what float64 cannot see
            margins_ax.axvline(FLOAT64_RESOLUTION, color=style.BLACK, linestyle="--", linewidth=1,
                               label="$2^{-52}$: float64's resolution")
            margins_ax.legend()
        tier3 = " (float64 tier: lower bounds)" if summary["tiers"].get("tier3") else ""
        margins_ax.set(title=f"relative margin by decade{tier3}", ylabel="configurations (log scale)",
                       xlabel=r"$\log_{10}(|\mathrm{rhs} - \mathrm{lhs}|\, /\, \mathrm{rhs})$")
        Ls = {v: [math.log10(r["L"]) for r in records if r["verdict"] == v and r["L"] is not None and r["L"] > 0]
              for v in VERDICT_COLOURS}
        if _stacked(L_ax, Ls, 0.25):
            for value, text, style_ in ((ONE_MINUS_GAP_IS_ONE, "54 ln 2: $1 - e^{-L}$ = 1.0 in float64", "--"),
                                        (GAP_UNDERFLOWS, "1075 ln 2: $e^{-L}$ = 0.0 in float64", ":")):
                L_ax.axvline(math.log10(value), color=style.BLACK, linestyle=style_, linewidth=1, label=text)
            L_ax.legend()
        beyond = sum(r["L"] is None for r in records)
        L_ax.set(title="$L = a D^2$" + (f" ({beyond} beyond float64's range, not shown)" if beyond else ""),
                 ylabel="configurations", xlabel=r"$\log_{10} L$, $L = \|A\|_2\, D^2$")
        fig.suptitle(f"{target} on {m['distribution']} (n = {m['n']}, d = {m['d']}, seed {m['seed']}): "
                     f"{summary['decided']} of {m['count']} configurations checked")
    return fig


def write(out_dir, summary: dict, records: list[dict], *, fmt: str = style.DEFAULT_FORMAT,
          dpi: int = style.DEFAULT_DPI) -> Path:
    """Draw the campaign in out_dir (the summary and its records, as campaign.run read them with their integrity
    checks) into out_dir/histograms.<fmt> (the histograms in other formats, of an earlier summary, removed)."""
    out_dir = Path(out_dir)
    return style.save_as_the_only_format(figure(summary, records), out_dir, STEM, fmt=fmt, dpi=dpi)
