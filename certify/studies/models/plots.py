"""Figures of a model report (certify.studies.models.report), drawn from the report alone (PNG, matplotlib Agg).

    model_regimes.png        a D^2 per layer and head, with the float64 thresholds 54 ln 2 and 1075 ln 2
    model_attention.png      tau(P_h) and D(P_h X) / D per layer and head, under the certified bound
    model_configuration.png  per layer: centred rank, its smallest singular value, stable rank and
                             mean |cos| (Wu et al., Figure 4)
Points are the midpoints of certified enclosures; every enclosure is far narrower than a marker.
"""

from __future__ import annotations

from pathlib import Path

from certify.studies.models.report import midpoint

REGIME_COLOURS = {"informative": "tab:green", "indistinguishable": "tab:orange", "underflowed": "tab:red",
                  "undecided": "tab:gray"}  # fmt: skip


def write(report: dict, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    source = "/".join(Path(report["model"]).parts[-2:])
    title = f"{source}: {report['text']!r} ({len(report['tokens'])} tokens)"
    paths = []
    for name, draw in (("model_regimes.png", _regimes), ("model_attention.png", _attention),
                       ("model_configuration.png", _configuration)):  # fmt: skip
        fig = draw(plt, report)
        fig.suptitle(title, fontsize=9)
        fig.tight_layout()
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        paths.append(folder / name)
    return paths


def _head_positions(report: dict):
    """(x, head) pairs: layer l's heads spread over [l - 0.35, l + 0.35]."""
    for layer in report["layers"]:
        count = len(layer["heads"])
        for head in layer["heads"]:
            offset = 0.7 * (head["head"] / max(count - 1, 1) - 0.5)
            yield layer["layer"] + offset, head


def _layer_axis(ax, report: dict) -> None:
    ax.set_xticks([layer["layer"] for layer in report["layers"]])
    ax.set_xlabel("layer (configuration entering it)")


def _regimes(plt, report: dict):
    fig, ax = plt.subplots(figsize=(7, 4.2))
    seen = set()
    for x, head in _head_positions(report):
        regime = head["regime"]
        ax.scatter(x, midpoint(head["a_D2"]), color=REGIME_COLOURS[regime], s=18,
                   label=regime if regime not in seen else None)  # fmt: skip
        seen.add(regime)
    for key, style in (("saturation", "--"), ("underflow", ":")):
        threshold = report["thresholds"][key]
        ax.axhline(threshold["value"], color="black", linestyle=style, linewidth=1,
                   label=f"{threshold['ln2_multiple']} ln 2 = {threshold['value']:.2f}")  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylabel("a D^2 (certified)")
    ax.set_title("a D^2 = ||A_h||_2 D(X)^2 per head: the regime of 1 - exp(-a D^2) in float64", fontsize=9)
    _layer_axis(ax, report)
    ax.legend(fontsize=7)
    return fig


def _attention(plt, report: dict):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8), sharey=True)
    for ax, key, label in ((axes[0], "tau", "tau(P_h)"), (axes[1], "D_PX_over_D", "D(P_h X) / D")):
        points = [(x, midpoint(head[key]), REGIME_COLOURS[head["regime"]]) for x, head in _head_positions(report)]
        ax.scatter([p[0] for p in points], [p[1] for p in points], c=[p[2] for p in points], s=16)
        ax.axhline(1.0, color="black", linewidth=1, linestyle="--", label="1 - exp(-a D^2) (1.0 in float64)")
        ax.set_title(f"{label} (certified)", fontsize=9)
        ax.set_ylim(0, 1.08)
        _layer_axis(ax, report)
    axes[0].legend(fontsize=7, loc="lower left")
    return fig


def _configuration(plt, report: dict):
    layers = report["layers"]
    x = [layer["layer"] for layer in layers]
    fig, axes = plt.subplots(1, 4, figsize=(12, 3.2))
    ranks = [layer["configuration"]["rank"] for layer in layers]
    axes[0].plot(x, ranks, "o-")
    axes[0].plot(x, [layer["configuration"]["rank_max"] for layer in layers], "k--", linewidth=1, label="n - 1")
    axes[0].set_ylim(0, max(layer["configuration"]["rank_max"] for layer in layers) + 1)
    axes[0].set_title("rank of the centred X", fontsize=9)
    axes[0].legend(fontsize=7)
    for ax, key, label in ((axes[1], "sigma_min", "smallest singular value, centred X"),
                           (axes[2], "stable_rank", "stable rank ||X||_F^2 / ||X||_2^2"),
                           (axes[3], "mean_abs_cos", "mean |cos(x_i, x_k)|")):  # fmt: skip
        ax.plot(x, [midpoint(layer["configuration"][key]) for layer in layers], "o-")
        ax.set_title(label, fontsize=9)
    for ax in axes:
        _layer_axis(ax, report)
    return fig
