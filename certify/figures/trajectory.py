"""The figure of a certified trajectory (certify.studies.trajectory.trace), three panels against
the layer t:

    values   log10 D_t, log10 mu_t (and the approach to V^t c) with the bound curves: the overview
    ratio    log10(D_t / bound) per bound curve, on a symmetric log scale: at most 0 where the bound
             holds, and how tight it is at every layer (the values panel flattens the first layers
             once D_t falls fast)
    doubly   log10(-log10 D_t) where D_t < 1, with the curves alike: D_t ~ 10^(-C 3^t) is the
             straight line log10 C + t log10 3, the signature of doubly exponential collapse

Every axis is log10 itself, not matplotlib's log scale: D_t leaves float64's range after a few
layers, and the logarithms come from the balls (the midpoints of certified enclosures).
"""

from __future__ import annotations

import math
from pathlib import Path

from matplotlib.figure import Figure
from matplotlib.ticker import ScalarFormatter

from certify.figures import style
from certify.studies import trajectory

STEM = "trajectory"
# How each bound curve of certify.studies.trajectory.CURVES is written in a legend
CURVE_LABELS = {
    "global.step": r"$(1 - e^{-a D_{t-1}^2})\, D_{t-1}$ (global, one step)",
    "global.composed": r"$g_{a_{t-1}} \circ \cdots \circ g_{a_0}(D_0)$ (global, composed)",
    "cubic": r"$a^{-1/2} (\sqrt{a}\, D_0)^{3^t}$ (cubic)",
    "value.bounded": r"$M (1 - e^{-a M^2 D_0^2})^t D_0$ (value, bounded)",
    "value.approach": r"$M\, \tau(P_0) \cdots \tau(P_{t-1})\, D_0$ (value, approach)",
    "value.expansive": r"$(\rho a)^{-1/2} (\sqrt{\rho a}\, D_0)^{3^t}$ (value, expansive)",
}
APPROACH = r"$\max_i \|x_i^{(t)} - V^t c\|$ (upper end)"


def title(tr: trajectory.Trajectory, source=None) -> str:
    """The configuration's "name" and file, the depth and the verdict."""
    file = Path(source).name if isinstance(source, (str, Path)) else None
    name = tr.name if not file or Path(file).stem != tr.name else None  # "rotation-20" in rotation-20.json: once
    label = " / ".join(n for n in (name, file) if n) or "trajectory"
    certified = "" if tr.certified else f" ({trajectory.NOT_CERTIFIED})"
    return f"{label}: {tr.T} layers, verdict {tr.verdict}{certified}"


# The largest |log10| drawn: a doubly exponential collapse reaches log10 D_t = -3^t (beyond float64
# from t = 646); the axes' limits (2 x a value, differences of two) must stay finite.
PLOTTABLE = 1e300


def _plottable(y: float | None) -> bool:
    return y is not None and math.isfinite(y) and abs(y) <= PLOTTABLE


def _log10_points(tr, values) -> tuple[list[int], list[float]]:
    pairs = [(p.t, y) for p, v in zip(tr.points, values) if _plottable(y := trajectory.log10(v))]
    return [t for t, _ in pairs], [y for _, y in pairs]


def _log10_curve(tr, name: str) -> dict[int, float]:
    """t -> log10 of a bound curve, from its logarithm (a curve known only through its log is drawn too)."""
    out = {}
    for p in tr.points:
        if name in p.log_curves and _plottable(y := float(trajectory.log10_from_log(p.log_curves[name]).mid())):
            out[p.t] = y
    return out


def _measured(tr, name: str) -> dict[int, float]:
    """t -> log10 of what the curve bounds: D_t, or the approach's upper end for value.approach."""
    quantity = trajectory.CURVES[name][0]
    values = [(p.approach.upper() if p.approach is not None else None) if quantity == "approach"
              else (p.D if p.resolved else None) for p in tr.points]
    return dict(zip(*_log10_points(tr, values)))


def figure(tr: trajectory.Trajectory, source=None) -> Figure:
    """The three panels of the module docstring; `source` (the configuration's file) names it in the title."""
    with style.context():
        fig = style.new_figure(14, 4.6)
        values_ax, ratio_ax, doubly_ax = fig.subplots(1, 3)
        colours = dict(zip(tr.drawn, style.PALETTE[1:]))
        _values(values_ax, tr, colours)
        _ratios(ratio_ax, tr, colours)
        _doubly(doubly_ax, tr, colours)
        unresolved = [p.t for p in tr.points if not p.resolved]
        for ax in (values_ax, ratio_ax, doubly_ax):
            if unresolved:
                ax.axvspan(unresolved[0] - 0.5, tr.T + 0.5, color=style.VERMILLION, alpha=0.08,
                           label="unresolved at the precision cap")
            ax.set_xlabel(style.LAYER)
            ax.set_xlim(-0.3, tr.T + 0.3)
            style.integer_ticks(ax.xaxis)
            if ax.has_data():
                ax.legend(loc="best")
        fig.suptitle(title(tr, source))
    return fig


def _values(ax, tr, colours) -> None:
    seen = []
    for label, values, marker, colour in (
            (r"$D_t$", [p.D if p.resolved else None for p in tr.points], "o-", style.BLACK),
            (r"$\mu_t$", [p.mu if p.resolved else None for p in tr.points], "s--", style.GREY)):
        ts, ys = _log10_points(tr, values)
        ax.plot(ts, ys, marker, color=colour, label=label)
        seen += ys
    if "value.approach" in tr.drawn:
        ts, ys = _log10_points(tr, [None if p.approach is None else p.approach.upper() for p in tr.points])
        ax.plot(ts, ys, "^-", color=style.PURPLE, label=APPROACH)
        seen += ys
    for name in tr.drawn:
        curve = _log10_curve(tr, name)
        ax.plot(list(curve), list(curve.values()), ":", linewidth=1.8, color=colours[name],
                label=CURVE_LABELS.get(name, name))
    if seen:  # clipped to the certified data: curves that fall faster run off the bottom
        low, high = min(seen), max(seen)
        margin = max(1.0, 0.08 * (high - low))
        ax.set_ylim(low - margin, high + margin)
    ax.set_ylabel(r"$\log_{10}$ of $D_t$, $\mu_t$ and the bounds")
    ax.yaxis.set_major_formatter(ScalarFormatter(useMathText=True))  # "x 10^8", not a bare "1e8"
    ax.set_title("values")


def _ratios(ax, tr, colours) -> None:
    highest, lowest = 0.0, 0.0
    for name in tr.drawn:
        curve, measured = _log10_curve(tr, name), _measured(tr, name)
        ts = [t for t in measured if t in curve]
        ratios = [measured[t] - curve[t] for t in ts]
        ax.plot(ts, ratios, "o-", color=colours[name], label=CURVE_LABELS.get(name, name))
        highest, lowest = max([highest, *ratios]), min([lowest, *ratios])
    if tr.drawn:
        ax.axhline(0, color=style.BLACK, linewidth=1, label="bound attained (holds below)")
    else:
        ax.text(0.5, 0.5, "no bound curve applies\nto these layers", transform=ax.transAxes, ha="center", va="center")
    # symmetric log: a bound within a decade of D_t and one a thousand decades above it both show
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(min(-1, 2 * lowest - 1), 1 if highest <= 0 else 2 * highest + 1)  # above 0 only for a violation
    ax.set_ylabel(r"$\log_{10}(D_t\, /\, \mathrm{bound})$ (symmetric log scale)")
    ax.set_title("tightness of each bound")


def _doubly(ax, tr, colours) -> None:
    def transform(log10_values: dict[int, float]) -> dict[int, float]:
        return {t: math.log10(-y) for t, y in log10_values.items() if y < 0}

    doubly = transform(dict(zip(*_log10_points(tr, [p.D if p.resolved else None for p in tr.points]))))
    if doubly:
        ts, ys = list(doubly), list(doubly.values())
        ax.plot(ts, ys, "o-", color=style.BLACK, label=r"$D_t$")
        ax.plot(ts, [ys[-1] + (t - ts[-1]) * math.log10(3) for t in ts], "--", color=style.GREY, linewidth=1,
                label=r"slope $\log_{10} 3$: $D_t \sim 10^{-C\, 3^t}$")
        for name in tr.drawn:
            if trajectory.CURVES[name][0] == "D":
                curve = transform(_log10_curve(tr, name))
                ax.plot(list(curve), list(curve.values()), ":", linewidth=1.8, color=colours[name],
                        label=CURVE_LABELS.get(name, name))
    else:
        ax.text(0.5, 0.5, r"$D_t \geq 1$ at every layer", transform=ax.transAxes, ha="center", va="center")
    ax.set_ylabel(r"$\log_{10}(-\log_{10} D_t)$")
    ax.set_title("doubly exponential collapse is a straight line")


def write(tr: trajectory.Trajectory, folder, *, stem: str = STEM, source=None, fmt: str = style.DEFAULT_FORMAT,
          dpi: int = style.DEFAULT_DPI) -> Path:
    """Draw and write folder/<stem>.<fmt>; return its path."""
    return style.save(figure(tr, source), Path(folder) / f"{stem}.{fmt}", fmt=fmt, dpi=dpi)
