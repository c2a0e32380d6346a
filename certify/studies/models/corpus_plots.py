"""Figures of a corpus summary (certify.studies.models.corpus_summary), drawn from summary.json alone (PNG, Agg).

    corpus_heatmap.png      layer x head: the median of log10 a D^2 over the corpus, and the fraction of
                            sentences on which the head is certified informative (a D^2 < 54 ln 2)
    corpus_histograms.png   every (sentence, head) pair: log10 a D^2 with the float64 thresholds, and tau(P_h)
Values are from the summary's fixed histograms (bin midpoints), as its quantiles are.
"""

from __future__ import annotations

import math
from pathlib import Path

from certify.core.float64_limits import INFORMATIVE
from certify.studies.models.corpus_summary import Histogram

HEATMAP, HISTOGRAMS = "corpus_heatmap.png", "corpus_histograms.png"


def write(summary: dict, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    title = f"{summary['model_name']} over corpus {summary['corpus']} ({summary['totals']['sentences']} sentences)"
    paths = []
    for name, draw in ((HEATMAP, _heatmap), (HISTOGRAMS, _histograms)):
        fig = draw(plt, summary)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        paths.append(folder / name)
    return paths


def _grid(summary: dict, value) -> list[list[float]]:
    n_layers, n_heads = summary["config"]["n_layers"], summary["config"]["n_heads"]
    grid = [[math.nan] * n_heads for _ in range(n_layers)]
    for head in summary["heads"]:
        grid[head["layer"]][head["head"]] = value(head)
    return grid


def _median_log10(head: dict) -> float:
    edges = head["a_D2"]["log10_quantiles"]["0.5"]
    return math.nan if edges is None else sum(edges) / 2


def _heatmap(plt, summary: dict):
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    panels = (
        (axes[0], _grid(summary, _median_log10), "viridis", None, "{:.2f}",
         "median log10 a D^2 (54 ln 2: 1.57; 1075 ln 2: 2.87)"),
        (axes[1], _grid(summary, lambda h: h["regimes"][INFORMATIVE] / max(h["sentences"], 1)), "magma", (0, 1), "{:.2f}",
         "fraction of sentences informative (a D^2 < 54 ln 2)"),
    )  # fmt: skip
    for ax, grid, cmap, limits, cell, label in panels:
        vmin, vmax = limits or (None, None)
        image = ax.imshow(grid, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax)
        for layer, row in enumerate(grid):
            for head, value in enumerate(row):
                if not math.isnan(value):
                    ax.text(head, layer, cell.format(value), ha="center", va="center", fontsize=6, color="white")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_xticks(range(len(grid[0])))
        ax.set_yticks(range(len(grid)))
        ax.set_title(label, fontsize=9)
        fig.colorbar(image, ax=ax)
    return fig


def _pooled(summary: dict, key: str, histogram: str) -> Histogram:
    pooled = None
    for head in summary["heads"]:
        h = Histogram(**head[key][histogram])
        pooled = h if pooled is None else pooled.merged(h)
    return pooled


def _histograms(plt, summary: dict):
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    pooled_a_D2 = _pooled(summary, "a_D2", "log10_histogram")
    for ax, hist, label in ((axes[0], pooled_a_D2, "log10 a D^2"),
                            (axes[1], _pooled(summary, "tau", "histogram"), "tau(P_h)")):  # fmt: skip
        edges = [hist.lo + i * hist.width for i in range(hist.bins + 1)]
        ax.stairs(hist.counts, edges, fill=True)
        filled = [i for i, count in enumerate(hist.counts) if count]
        if filled:  # the occupied bins (and, for a D^2, both thresholds) with a margin
            low, high = edges[filled[0]], edges[filled[-1] + 1]
            if hist is pooled_a_D2:
                low, high = min(low, 1.4), max(high, 3.0)
            ax.set_xlim(max(hist.lo, low - 0.1 * (high - low)), min(hist.hi, high + 0.1 * (high - low)))
        ax.set_xlabel(label)
        ax.set_ylabel("(sentence, head) pairs")
        outside = f" ({hist.below} below, {hist.above} above the range)" if hist.below or hist.above else ""
        ax.set_title(f"{label} over every sentence and head{outside}", fontsize=9)
    for key, style in (("saturation", "--"), ("underflow", ":")):
        value = summary["thresholds"][key]
        axes[0].axvline(math.log10(value), color="black", linestyle=style, linewidth=1,
                        label=f"{key}: a D^2 = {value:.2f}")  # fmt: skip
    axes[0].legend(fontsize=7)
    return fig
