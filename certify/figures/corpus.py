"""Figures of a model over a corpus (certify.studies.models.corpus_job), drawn from its summary.json alone.

    corpus_heatmap     layer x head: the median of a D^2 = ||A_h||_2 D^2 over the sentences (log10, the
                       float64 thresholds 54 ln 2 and 1075 ln 2 on the colour bar), and the fraction of
                       sentences on which the head is certified informative (a D^2 < 54 ln 2)
    corpus_histograms  every (sentence, head) pair: log10 a D^2 with the float64 thresholds, and tau(P_h)

Values come from the summary's fixed histograms (the median is its bin's midpoint, to a factor
10^0.01), as the summary's quantiles do; the certified extremes are in summary.json.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.colors import Normalize
from matplotlib.figure import Figure

from certify.core.float64_limits import INFORMATIVE
from certify.figures import style
from certify.studies.models.corpus_job import HEATMAP, HISTOGRAMS
from certify.studies.models.corpus_summary import Histogram, bin_midpoint

STEMS = (HEATMAP, HISTOGRAMS)
LOG10_A_D2 = r"$\log_{10}(\|A_h\|_2\, D^2)$"
THRESHOLD_LINES = (("saturation", "--", "54 ln 2: $1 - e^{-a D^2}$ = 1.0 in float64"),
                   ("underflow", ":", "1075 ln 2: $e^{-a D^2}$ = 0.0 in float64"))


def _title(summary: dict) -> str:
    return (f"{summary['model_name']} on {summary['totals']['sentences']} of the {summary['corpus_sentences']} "
            f"sentences of the corpus {summary['corpus']}")


def _grid(summary: dict, value) -> np.ndarray:
    """layers x heads array of value(head summary), nan where the value is None."""
    grid = np.full((summary["config"]["n_layers"], summary["config"]["n_heads"]), np.nan)
    for head in summary["heads"]:
        found = value(head)
        grid[head["layer"], head["head"]] = np.nan if found is None else found
    return grid


def median_log10_a_D2(head: dict) -> float | None:
    """The midpoint of the bin holding the median of log10 a D^2 of a head summary (None: no value in range)."""
    return bin_midpoint(head["a_D2"]["log10_quantiles"]["0.5"])


def informative_fraction(head: dict) -> float | None:
    """The fraction of a head's sentences on which it is certified informative (None: no sentence)."""
    return head["regimes"][INFORMATIVE] / head["sentences"] if head["sentences"] else None


def heatmap(summary: dict) -> Figure:
    """Two layer x head maps of a corpus summary: the median log10 a D^2 (both float64 thresholds marked on
    its colour bar) and the fraction of sentences on which each head is certified informative."""
    thresholds = {key: math.log10(summary["thresholds"][key]) for key, _, _ in THRESHOLD_LINES}
    medians = _grid(summary, median_log10_a_D2)
    finite = medians[np.isfinite(medians)]
    # both thresholds always on the colour bar, with a little room
    low = min([thresholds["saturation"] - 0.2, *finite])
    high = max([thresholds["underflow"] + 0.2, *finite])
    layers = list(range(summary["config"]["n_layers"]))
    with style.context():
        fig = style.new_figure(max(10, 2 * (0.42 * medians.shape[1] + 1.6)), 0.45 * len(layers) + 2.4)
        median_ax, fraction_ax = fig.subplots(1, 2)
        image = style.heat_map(median_ax, medians, Normalize(low, high), lambda v: f"{v:.2f}", layers)
        bar = fig.colorbar(image, ax=median_ax, label="median " + LOG10_A_D2)
        for key, linestyle, _ in THRESHOLD_LINES:
            bar.ax.axhline(thresholds[key], color=style.BLACK, linewidth=1.5, linestyle=linestyle)
            bar.ax.text(-0.15, thresholds[key], f"{round(summary['thresholds'][key] / math.log(2))} ln 2",
                        transform=bar.ax.get_yaxis_transform(), ha="right", va="center", fontsize=7)
        median_ax.set_title("median of " + LOG10_A_D2 + " over the sentences")
        fractions = _grid(summary, informative_fraction)
        image = style.heat_map(fraction_ax, fractions, Normalize(0, 1), lambda v: f"{v:.2f}", layers)
        fig.colorbar(image, ax=fraction_ax, label="fraction of sentences")
        fraction_ax.set_title("certified informative: $\\|A_h\\|_2\\, D^2 < 54 \\ln 2$ "
                              "($1 - e^{-a D^2} < 1$ in float64)")
        fig.suptitle(_title(summary))
    return fig


def pooled(summary: dict, key: str, histogram: str) -> Histogram:
    """The histogram `histogram` of quantity `key` ("a_D2" or "tau") summed over every head of the summary."""
    total = None
    for head in summary["heads"]:
        h = Histogram(**head[key][histogram])
        total = h if total is None else total.merged(h)
    return total


def _edges(hist: Histogram) -> np.ndarray:
    return hist.lo + hist.width * np.arange(hist.bins + 1)


def _occupied(hist: Histogram, must_show: tuple[float, ...] = ()) -> tuple[float, float]:
    """The x-range of the occupied bins (and of the values must_show), with a margin, inside the histogram's range."""
    edges = _edges(hist)
    filled = [i for i, count in enumerate(hist.counts) if count]
    low = min([edges[filled[0]], *must_show]) if filled else hist.lo
    high = max([edges[filled[-1] + 1], *must_show]) if filled else hist.hi
    margin = 0.1 * (high - low)
    return max(hist.lo, low - margin), min(hist.hi, high + margin)


def histograms(summary: dict) -> Figure:
    """Two histograms over every (sentence, head) pair of a corpus summary: log10 a D^2 with the float64
    thresholds marked, and tau(P_h); values outside a histogram's fixed range are counted in the title."""
    a_D2, tau = pooled(summary, "a_D2", "log10_histogram"), pooled(summary, "tau", "histogram")
    with style.context():
        fig = style.new_figure(11, 4.2)
        a_ax, tau_ax = fig.subplots(1, 2)
        for ax, hist, label in ((a_ax, a_D2, LOG10_A_D2), (tau_ax, tau, r"$\tau(P_h)$")):
            ax.stairs(hist.counts, _edges(hist), fill=True, color=style.BLUE)
            outside = f" ({hist.below} below, {hist.above} above the range)" if hist.below or hist.above else ""
            ax.set(xlabel=label, ylabel="(sentence, head) pairs",
                   title=f"{label} over every sentence and head{outside}")
            style.integer_ticks(ax.yaxis)
        lines = []
        for key, linestyle, text in THRESHOLD_LINES:
            value = math.log10(summary["thresholds"][key])
            a_ax.axvline(value, color=style.BLACK, linestyle=linestyle, linewidth=1, label=text)
            lines.append(value)
        a_ax.set_xlim(*_occupied(a_D2, tuple(lines)))
        tau_ax.set_xlim(*_occupied(tau))
        a_ax.legend(loc="upper left")
        fig.suptitle(_title(summary))
    return fig


FIGURES = dict(zip(STEMS, (heatmap, histograms)))


def write(summary: dict, folder, *, fmt: str = style.DEFAULT_FORMAT, dpi: int = style.DEFAULT_DPI) -> list[Path]:
    """Write both figures of a corpus summary into folder as <stem>.<fmt> (the same figures in other formats,
    of an earlier summary, removed); return their paths."""
    return [style.save_as_the_only_format(draw(summary), folder, stem, fmt=fmt, dpi=dpi)
            for stem, draw in FIGURES.items()]
