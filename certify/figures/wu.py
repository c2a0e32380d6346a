"""Wu et al. (2024), Figures 1-3 as reproduced by certify.studies.wu.studies.

    fig1(study)   N = 2 phase portraits: without LayerNorm, with post-LN (the certified equilibria A,
                  B and the trapping arc), and mu(X_t) of both
    fig2(study)   mu(X_t) against the layer t, a grid: one row per variant (SAN, SAN+skip, ...), one
                  column per initialisation and mode; the masks as colours; y shared along a row
    fig3(study)   the temperature sweep: one panel per mask (a 2 x 2 grid, y shared), d_QK as colours

Curves are float64 simulations (the titles say so).  A dotted line marks float64's resolution at
the inputs' scale, 2^-52 mu_0: a curve that stalls near it shows rounding, not dynamics (one that
falls through it keeps going because the tokens shrink as a whole); where a spot check in ball
arithmetic (not certified: no checker re-derives it) is one of the plotted curves, an arrow gives its
enclosure (often hundreds of decades lower).  Pretrained panels mark where the model's real layers
end and their repetition begins.  The long statements (settings, every finding, the certified balls) are the
caption, written to the JSON by certify.studies.wu.export, not drawn.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from certify.core.arith import FLOAT64
from certify.core.quantities import consensus_distance
from certify.core.verdicts import NOT_CERTIFIED
from certify.figures import style
from certify.studies.wu import export
from certify.studies.wu import reproduce as sim
from certify.studies.wu.studies import SIMULATED, Study, certified_point, depth_statistics, fig1_said, trapping_arc

MASK_COLOURS = {"complete": style.BLUE, "causal": style.ORANGE, "sliding": style.GREEN, "uni": style.VERMILLION}
D_QK_COLOURS = dict(zip((str(t) for t in sim.D_QK_SWEEP), (style.PURPLE, style.BLUE, style.GREEN)))
BAND = Patch(color=style.GREY, alpha=0.3, label="band: min to max over the inputs")
FLOAT64_EPS = 2.0**-52
FLOOR = Line2D([], [], color=style.BLACK, linestyle=":", linewidth=1.1,
               label=r"$2^{-52} \mu_0$: float64's resolution (a curve that stalls here is rounding)")


def figure(study: Study) -> Figure:
    """The study's figure (Figure 1, 2 or 3 by study.figure)."""
    return DRAW[study.figure](study)


def write(study: Study, folder, *, fmt: str = style.DEFAULT_FORMAT, dpi: int = style.DEFAULT_DPI) -> dict[str, Path]:
    """Write F.<fmt> (the figure), F.csv and F.json into folder; return {fmt: path, "csv": path, "json": path}."""
    paths = export.write(study, Path(folder))
    paths[fmt] = style.save(figure(study), Path(folder) / f"{study.figure}.{fmt}", fmt=fmt, dpi=dpi)
    return paths


# ------------------------------------------------------------------ pieces


def _mode(p: float) -> str:
    return "eval mode" if p == 0 else f"dropout {p:g}"


def _band(ax, mu: np.ndarray, colour: str, label: str) -> None:
    """The geometric mean over the inputs (line) and min to max (band) at t = 0..T."""
    stats = depth_statistics(mu)
    t = np.arange(mu.shape[0])
    ax.fill_between(t, stats["min"], stats["max"], color=colour, alpha=0.15, linewidth=0)
    ax.plot(t, stats["geomean"], color=colour, label=label, linewidth=1.4)


def _mu_axes(ax, title: str, depth: int) -> None:
    ax.set_yscale("log")
    ax.yaxis.set_tick_params(which="both", labelleft=True)  # on every panel, also where the y-range is shared
    ax.set_xlim(0, depth)
    ax.set_xlabel(style.LAYER)
    ax.set_ylabel(style.MU)
    ax.set_title(title)
    style.integer_ticks(ax.xaxis)


def _floor(ax, mus: list[np.ndarray]) -> None:
    """A line at 2^-52 mu_0 (the largest median mu_0 of the panel's curves) where it is in view: float64
    resolves a token to about 2^-52 of its size, so a curve that stalls near it is rounding error.
    Called once every panel is drawn, so that it neither moves shared limits nor squeezes a panel."""
    low, high = ax.get_ylim()
    floor = FLOAT64_EPS * max(float(np.median(mu[0])) for mu in mus)
    if low <= floor <= high:
        ax.axhline(floor, color=style.BLACK, linestyle=":", linewidth=1.1)
    ax.set_ylim(low, high)


def _spot_arrow(ax, spot, depth: int) -> None:
    """Point at the float64 value of a spot check and give its enclosure in ball arithmetic (not certified)."""
    ax.annotate(f"ball arithmetic (not certified): {spot.interval()}\nfloat64: {spot.float64:.2g}",
                xy=(depth, spot.float64),
                xytext=(-8, 28), textcoords="offset points", ha="right", fontsize=7.5,
                arrowprops={"arrowstyle": "->", "color": style.BLACK, "linewidth": 0.8},
                bbox={"boxstyle": "round,pad=0.25", "facecolor": "white", "edgecolor": style.GREY, "alpha": 0.9})


def _spot_line(study: Study) -> str:
    """Spot checks on a model of their own (not a plotted curve): a line for the title, else ''."""
    return "".join(f"\nspot check in ball arithmetic (not certified), {s.configuration}: "
                   f"float64 {s.float64:.3g}, exact value in {s.interval()}"
                   for s in study.spot_checks if s.curve is None)


def _legend(fig, handles: list, columns: int) -> None:
    fig.legend(handles=handles, loc="outside lower center", ncols=columns, frameon=False)


# ------------------------------------------------------------------ Figure 2


def fig2(study: Study) -> Figure:
    """Figure 2 of a study: mu(X_t) against the layer t on a log scale, one row per variant and one column per
    initialisation and mode (y shared along a row), the masks as colours, float64's resolution 2^-52 mu_0
    dotted and, for pretrained panels, the end of the model's real layers marked."""
    groups = sorted({(key[0], key[3]) for key in study.curves}, key=lambda g: (g[0] != "random", g[1]))
    variants = list(dict.fromkeys(key[1] for key in study.curves))
    pretrained = study.settings.get("pretrained")
    with style.context():
        fig = style.new_figure(3.3 * len(groups) + 0.4, 2.35 * len(variants) + 1.6)
        axes = fig.subplots(len(variants), len(groups), squeeze=False, sharey="row")
        drawn = {}  # axes -> the curves it plots
        for row, variant in enumerate(variants):
            for col, (init, p) in enumerate(groups):
                ax = axes[row, col]
                keys = [(init, variant, mask, p) for mask in sim.MASKS if (init, variant, mask, p) in study.curves]
                if not keys:
                    ax.set_axis_off()
                    ax.text(0.5, 0.5, f"{variant}: not run at {init} init\nin the "
                            f"{study.settings['random']['setting']} setting", transform=ax.transAxes,
                            ha="center", va="center", color=style.GREY)
                    continue
                depth = study.curves[keys[0]].shape[0] - 1
                for key in keys:
                    _band(ax, study.curves[key], MASK_COLOURS[key[2]], key[2])
                drawn[ax] = [study.curves[key] for key in keys]
                _mu_axes(ax, f"{variant}: {init}, {_mode(p)}", depth)
                if init == "pretrained" and pretrained and depth > pretrained["model_layers"]:
                    _repetition(ax, pretrained["model_layers"], depth)
                for spot in study.spot_checks:
                    if spot.curve in keys:
                        _spot_arrow(ax, spot, depth)
        for ax, mus in drawn.items():
            _floor(ax, mus)
        handles = [Line2D([], [], color=MASK_COLOURS[m], label=f"{m} mask") for m in sim.MASKS] + [BAND, FLOOR]
        if pretrained and pretrained["depth"] > pretrained["model_layers"]:
            handles.append(Line2D([], [], color=style.BLACK, linestyle="--", linewidth=0.9,
                                  label=f"end of the model's {pretrained['model_layers']} real layers; "
                                        "shaded: repeated"))
        _legend(fig, handles, 4 if len(groups) > 2 else 2)
        fig.suptitle(f"Wu et al. (2024), Figure 2: $\\mu(X_t)$ against depth\n{SIMULATED}; "
                     "line: geometric mean over the inputs" + _spot_line(study), fontsize=10)
    return fig


def _repetition(ax, layers: int, depth: int) -> None:
    """Figure 2's pretrained panels: the model's real layers end at t = layers; beyond, they repeat."""
    ax.axvline(layers, color=style.BLACK, linestyle="--", linewidth=0.9)
    ax.axvspan(layers, depth, color=style.GREY, alpha=0.1, linewidth=0)


# ------------------------------------------------------------------ Figure 3


def fig3(study: Study) -> Figure:
    """Figure 3 of a study: the temperature sweep, one panel per mask (2 x 2, y shared), mu(X_t) of pure
    attention on a log scale for each d_QK as a colour, float64's resolution 2^-52 mu_0 dotted."""
    random = study.settings["random"]
    with style.context():
        fig = style.new_figure(9.5, 7.4)
        axes = fig.subplots(2, 2, sharey=True)
        for ax, mask in zip(axes.flat, sim.MASKS):
            keys = [(d_qk, mask) for d_qk in D_QK_COLOURS]
            depth = study.curves[keys[0]].shape[0] - 1
            for key in keys:
                _band(ax, study.curves[key], D_QK_COLOURS[key[0]], f"$d_{{QK}} = {key[0]}$")
            _mu_axes(ax, f"SAN, {mask} mask", depth)
            for spot in study.spot_checks:
                if spot.curve in keys:
                    _spot_arrow(ax, spot, depth)
        for ax, mask in zip(axes.flat, sim.MASKS):
            _floor(ax, [study.curves[(d_qk, mask)] for d_qk in D_QK_COLOURS])
        handles = [Line2D([], [], color=c, label=f"$d_{{QK}} = {d}$") for d, c in D_QK_COLOURS.items()] + [BAND, FLOOR]
        _legend(fig, handles, 3)
        fig.suptitle("Wu et al. (2024), Figure 3: temperature, scores $(X W_Q)(X W_K)^T / \\sqrt{d_{QK}}$ "
                     f"($d_{{QK}} = d_k = {random['d'] // random['heads']}$ is the standard scaling)\n"
                     f"{SIMULATED}, eval mode; line: geometric mean over the inputs" + _spot_line(study), fontsize=10)
    return fig


# ------------------------------------------------------------------ Figure 1


def fig1(study: Study) -> Figure:
    """Figure 1 of a study: the N = 2 phase portraits without LayerNorm and with post-LN (the certified
    equilibria A, B and the trapping arc), and mu(X_t) of both runs."""
    certified = study.certified

    def _said(what: str) -> str:  # an equilibrium called certified only when the checker confirmed it
        return f"certified, {what}" if certified["confirmed_by_checker"] else f"{what} ({NOT_CERTIFIED})"

    with style.context():
        fig = style.new_figure(14, 5.2)
        no_ln, circle, mus = fig.subplots(1, 3)
        tokens = (style.BLUE, style.ORANGE)
        for (panel, run), X in study.curves.items():
            if panel == "no-LN":
                for token, colour in enumerate(tokens):
                    no_ln.plot(X[:, token, 0], X[:, token, 1], ".-", color=colour, markersize=3, linewidth=0.8)
                    no_ln.plot(X[0, token, 0], X[0, token, 1], "o", color=colour, fillstyle="none", markersize=6)
                mus.plot(np.arange(X.shape[0]), consensus_distance(FLOAT64, X), color=style.GREY, linewidth=1)
        no_ln.legend(handles=[Line2D([], [], color=c, marker=".", label=f"token {k + 1}") for k, c in enumerate(tokens)]
                     + [_start_marker()])
        no_ln.set(title="without LayerNorm: $X' = P X W_V$", xlabel="$x_1$ (first coordinate of a token)",
                  ylabel="$x_2$ (second coordinate)")

        angles = np.linspace(0, 2 * math.pi, 400)
        circle.plot(np.cos(angles), np.sin(angles), color=style.GREY, linewidth=0.8, alpha=0.6)
        lo, hi = trapping_arc(certified)
        arc = np.linspace(lo, hi, 100)
        circle.plot(np.cos(arc), np.sin(arc), color=style.VERMILLION, linewidth=5, alpha=0.35)
        B = np.array(certified_point(certified, "B"))
        for (panel, run), X in study.curves.items():
            if panel == "post-LN token 1":
                circle.plot(X[:, 0, 0], X[:, 0, 1], ".", color=style.BLUE, markersize=4)
            elif panel == "post-LN token 2":
                colour = style.VERMILLION if np.linalg.norm(X[-1, 1] - B) < 1e-3 else style.ORANGE
                circle.plot(X[:, 1, 0], X[:, 1, 1], ".", color=colour, markersize=4)  # points: a step may jump
                circle.plot(X[0, 1, 0], X[0, 1, 1], "o", color=colour, markersize=6, fillstyle="none")
                mus.plot(np.arange(X.shape[0]), consensus_distance(FLOAT64, X), color=colour, linewidth=1)
        for name, marker in (("A", "s"), ("B", "D")):
            x, y = certified_point(certified, name)
            circle.plot([x], [y], marker, color=style.BLACK, markersize=7)
            circle.annotate(name, (x, y), textcoords="offset points", xytext=(8, -4))
        circle.plot([0, 0], [1, -1], "^", color=style.BLACK, markersize=7)
        circle.legend(loc="center", handles=[
            Line2D([], [], color=style.VERMILLION, linewidth=5, alpha=0.35, label=fig1_said(certified, "trapping arc")),
            Line2D([], [], color=style.BLUE, marker=".", linestyle="none", label="token 1 (alone)"),
            Line2D([], [], color=style.VERMILLION, marker=".", linestyle="none", label="token 2, tends to B"),
            Line2D([], [], color=style.ORANGE, marker=".", linestyle="none", label="token 2, tends to (0, 1)"),
            _start_marker(),
            Line2D([], [], color=style.BLACK, marker="^", linestyle="none", label="(0, $\\pm$1): limits of token 1"),
            Line2D([], [], color=style.BLACK, marker="s", linestyle="none", label="A: " + _said("repelling")),
            Line2D([], [], color=style.BLACK, marker="D", linestyle="none", label="B: " + _said("attracting")),
        ])
        circle.set(title="post-LN $x / \\|x\\|$: token 2 with token 1 at (0, 1)", aspect="equal",
                   xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), xlabel="$x_1$", ylabel="$x_2$")

        mus.set(yscale="log", title="distance to consensus", xlabel=style.LAYER, ylabel=style.MU)
        style.integer_ticks(mus.xaxis)
        mus.legend(handles=[Line2D([], [], color=style.GREY, label="without LayerNorm"),
                            Line2D([], [], color=style.VERMILLION, label="post-LN, token 2 tends to B"),
                            Line2D([], [], color=style.ORANGE, label="post-LN, token 2 tends to (0, 1)")])
        enclosed = ("certified in ball arithmetic" if certified["confirmed_by_checker"] else
                    "in ball arithmetic, not certified")
        fig.suptitle(f"Wu et al. (2024), Figure 1: N = 2, d = 2, w = {study.settings['w']} ({SIMULATED}; "
                     f"A, B and the trapping arc {enclosed})" + _spot_line(study), fontsize=10)
    return fig


def _start_marker() -> Line2D:
    return Line2D([], [], color=style.BLACK, marker="o", fillstyle="none", linestyle="none", label="start")


DRAW = {"wu-fig1": fig1, "wu-fig2": fig2, "wu-fig3": fig3}
