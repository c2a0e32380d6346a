"""Figures of a model report (certify.studies.models.report), drawn from the report alone.

    model_regimes      a D^2 = ||A_h||_2 D^2 per layer and head (a heat map), the float64 thresholds
                       54 ln 2 and 1075 ln 2 on its colour bar, each head's regime outlined
    model_attention    tau(P_h) and D(P_h X) / D per layer and head on one colour scale [0, 1]
                       (the certified bound 1 - exp(-a D^2) is 1.0 in float64)
    model_configuration  per layer: centred rank, smallest singular value, stable rank, mean |cos|
                       (Wu et al., Figure 4)

Heads are cells of a layer x head grid, so every head can be named ("L4H2": layer 4, head 2, from 0,
as in the report and the printed table).  Values are midpoints of certified enclosures, every one
far narrower than the digits shown.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.colors import LogNorm, Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from certify.figures import style
from certify.studies.models import MODEL_PACKAGES
from certify.studies.models.report import midpoint

STEMS = ("model_regimes", "model_attention", "model_configuration")
REGIME_COLOURS = {"informative": style.GREEN, "indistinguishable": None, "underflowed": style.VERMILLION,
                  "undecided": style.GREY}  # outline of a cell; indistinguishable (the common case) has none
LAYER_AXIS = "layer (configuration entering it)"
MAX_TITLE_TEXT = 60


def model_name(report: dict, name: str | None = None) -> str:
    """`name` when given; else the short name of a packaged model ("minilm"); else the model's folder name."""
    if name:
        return Path(name).name if name not in MODEL_PACKAGES else name
    parts = Path(report["model"]).parts
    short = [short for short, (package, _) in MODEL_PACKAGES.items() if package in parts]
    return short[0] if short else Path(report["model"]).name


def _title(report: dict, name: str | None) -> str:
    text = report["text"] if len(report["text"]) <= MAX_TITLE_TEXT else report["text"][:MAX_TITLE_TEXT - 1] + "..."
    return f"{model_name(report, name)} on \u201c{text}\u201d ({len(report['tokens'])} tokens)"


def head_name(layer: int, head: int) -> str:
    """A head's short name, "L{layer}H{head}" (both counted from 0, as in the report and the table)."""
    return f"L{layer}H{head}"


def _grid(report: dict, value) -> np.ndarray:
    """layers x heads array of value(head) (nan where a layer has fewer heads)."""
    heads = max(len(layer["heads"]) for layer in report["layers"])
    grid = np.full((len(report["layers"]), heads), np.nan)
    for row, layer in enumerate(report["layers"]):
        for head in layer["heads"]:
            grid[row, head["head"]] = value(head)
    return grid


def _heat_map(ax, report: dict, grid: np.ndarray, norm, text) -> object:
    """style.heat_map with the report's layers as rows."""
    return style.heat_map(ax, grid, norm, text, [layer["layer"] for layer in report["layers"]])


def _outline(ax, row: int, col: int, colour: str, linestyle: str = "-") -> None:
    ax.add_patch(Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor=colour, linewidth=2.2,
                           linestyle=linestyle))


def _cells(report: dict):
    for row, layer in enumerate(report["layers"]):
        for head in layer["heads"]:
            yield row, head["head"], layer["layer"], head


def regimes(report: dict, name: str | None = None) -> Figure:
    """The heat map of a D^2 = ||A_h||_2 D^2 per layer and head of a model report, log colour scale with
    float64's thresholds 54 ln 2 and 1075 ln 2 on the colour bar and each head's regime outlined; titled
    with the model's `name` (default from the report)."""
    grid = _grid(report, lambda head: midpoint(head["a_D2"]))
    thresholds = report["thresholds"]
    low_line, high_line = thresholds["saturation"]["value"], thresholds["underflow"]["value"]
    finite = grid[np.isfinite(grid) & (grid > 0)]
    vmin = min([low_line / 1.5, *finite])  # both thresholds always on the colour bar
    vmax = max([high_line * 1.5, *finite])
    with style.context():
        fig = style.new_figure(max(6.5, 0.62 * grid.shape[1] + 2.8), 0.5 * grid.shape[0] + 2.6)
        ax = fig.subplots()
        image = _heat_map(ax, report, grid, LogNorm(vmin, vmax), lambda v: f"{v:.3g}")
        seen = {}
        for row, col, layer, head in _cells(report):
            colour = REGIME_COLOURS[head["regime"]]
            if colour:
                _outline(ax, row, col, colour, "--" if head["regime"] == "undecided" else "-")
                seen.setdefault(head["regime"], []).append(head_name(layer, head["head"]))
        bar = fig.colorbar(image, ax=ax, label=style.A_D2 + " (certified)")
        for value, text in ((low_line, f"{thresholds['saturation']['ln2_multiple']} ln 2"),
                            (high_line, f"{thresholds['underflow']['ln2_multiple']} ln 2")):
            bar.ax.axhline(value, color=style.BLACK, linewidth=1.5)
            bar.ax.text(-0.15, value, text, transform=bar.ax.get_yaxis_transform(), ha="right", va="center",
                        fontsize=7)
        handles = [Patch(facecolor="none", edgecolor=REGIME_COLOURS[regime], linewidth=2,
                         label=f"{regime}: {', '.join(heads)}" if len(heads) <= 6 else f"{regime}: {len(heads)} heads")
                   for regime, heads in seen.items()]
        if handles:
            ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(0, -0.14), ncols=2, frameon=False)
        ax.set_title("the regime of $1 - e^{-a D^2}$ in float64: indistinguishable from 1 above 54 ln 2, "
                     "$e^{-a D^2}$ = 0 above 1075 ln 2 (unmarked cells: indistinguishable)", fontsize=8.5)
        fig.suptitle(_title(report, name))
    return fig


def _fraction(value: float) -> str:
    """Two decimals, or 1-<distance> within 0.005 of 1 (tau of a nearly hard head)."""
    return f"1-{1 - value:.0e}" if 0 < 1 - value < 0.005 else f"{value:.2f}"


def attention(report: dict, name: str | None = None) -> Figure:
    """Two heat maps on one colour scale [0, 1]: tau(P_h) and D(P_h X) / D per layer and head, heads where a
    step of collapse.global is not certified outlined."""
    with style.context():
        heads = max(len(layer["heads"]) for layer in report["layers"])
        fig = style.new_figure(max(9, 2 * (0.55 * heads + 1.2) + 1.2), 0.5 * len(report["layers"]) + 2.4)
        axes = fig.subplots(1, 2)
        norm = Normalize(0, 1)  # one scale for both: they are compared with each other and with the bound 1
        for ax, key, label in ((axes[0], "tau", r"$\tau(P_h)$"), (axes[1], "D_PX_over_D", r"$D(P_h X) / D$")):
            image = _heat_map(ax, report, _grid(report, lambda head: midpoint(head[key])), norm, _fraction)
            ax.set_title(f"{label} (certified)")
            for row, col, _, head in _cells(report):
                if head["step1"] != "holds" or head["step2"] != "holds":
                    _outline(ax, row, col, style.VERMILLION if "violated" in (head["step1"], head["step2"])
                             else style.GREY, "--")
        fig.colorbar(image, ax=axes, label=r"value; the bound $1 - e^{-a D^2}$ is 1.0 in float64")
        fig.suptitle(_title(report, name) + "\ncollapse.global, step 1: $D(P_h X) \\leq \\tau D$; step 2: "
                     "$\\tau \\leq 1 - e^{-a D^2}$ (a dashed cell: a step not certified to hold)")
    return fig


def configuration(report: dict, name: str | None = None) -> Figure:
    """Four panels per layer of the report: the centred rank (filled where certified), sigma_min(X - 1
    xbar^T), the stable rank ||X||_F^2 / ||X||_2^2 and the mean |cos| between tokens (Wu et al., Figure 4)."""
    layers = report["layers"]
    x = [layer["layer"] for layer in layers]
    config = [layer["configuration"] for layer in layers]
    with style.context():
        fig = style.new_figure(9, 6.4)
        (rank, sigma), (stable, cos) = fig.subplots(2, 2)
        certified = [c["rank_certified"] for c in config]
        rank.plot(x, [c["rank"] for c in config], "-", color=style.BLUE)
        rank.plot([t for t, ok in zip(x, certified) if ok], [c["rank"] for c, ok in zip(config, certified) if ok],
                  "o", color=style.BLUE, label="rank (certified)")
        if not all(certified):
            rank.plot([t for t, ok in zip(x, certified) if not ok],
                      [c["rank"] for c, ok in zip(config, certified) if not ok],
                      "o", color=style.BLUE, fillstyle="none", label="rank (float64, NOT certified)")
        rank.plot(x, [c["rank_max"] for c in config], "--", color=style.BLACK, linewidth=1, label="$n - 1$ (full rank)")
        rank.set_ylim(0, max(c["rank_max"] for c in config) + 1)
        rank.set(title="rank of the centred configuration", ylabel="rank")
        rank.legend(loc="lower right")
        style.integer_ticks(rank.yaxis)
        for ax, key, title, label in (
                (sigma, "sigma_min", "smallest singular value", r"$\sigma_{\min}(X - \mathbf{1}\bar{x}^T)$"),
                (stable, "stable_rank", "stable rank", r"$\|X\|_F^2 / \|X\|_2^2$"),
                (cos, "mean_abs_cos", "mean |cosine| between tokens", r"mean $|\cos(x_i, x_k)|$")):
            ax.plot(x, [midpoint(c[key]) for c in config], "o-", color=style.BLUE)
            ax.set(title=title, ylabel=label)
        for ax in (rank, sigma, stable, cos):
            ax.set_xlabel(LAYER_AXIS)
            style.integer_ticks(ax.xaxis)
        fig.suptitle(_title(report, name))
    return fig


FIGURES = dict(zip(STEMS, (regimes, attention, configuration)))


def write(report: dict, folder, *, name: str | None = None, fmt: str = style.DEFAULT_FORMAT,
          dpi: int = style.DEFAULT_DPI) -> list[Path]:
    """Write the three figures into folder as <stem>.<fmt>; `name` names the model in the titles."""
    return [style.save(draw(report, name), Path(folder) / f"{stem}.{fmt}", fmt=fmt, dpi=dpi)
            for stem, draw in FIGURES.items()]
