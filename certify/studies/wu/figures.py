"""Render a study of certify.studies.wu.studies: a PNG (matplotlib, Agg), a CSV of the plotted numbers
and a JSON of everything else.

For F in wu-fig1, wu-fig2, wu-fig3, write(study, folder) writes
    F.png   the figure; its title says float64 simulation, its caption the certified numbers
    F.csv   the numbers plotted, one row per point, columns CSV_COLUMNS[F]:
              wu-fig1  panel, run, t, token, x, y, mu      (panel: no-LN | post-LN token 1 | post-LN token 2;
                                                           mu of the pair at step t, on both token rows)
              wu-fig2  init, variant, mask, dropout, depth, layer_used, inputs, mean, geomean, median,
                       min, max   (dropout 0: eval mode; layer_used: which layer made X_t, for the
                       pretrained row "layer k of 6, pass m" as the real layers are repeated)
              wu-fig3  variant, mask, d_qk, depth, inputs, mean, geomean, median, min, max
            (statistics of mu(X_t) over the inputs at each depth t = 0..T; geomean is 0 when some
            input has mu exactly 0)
    F.json  settings, the spot check (ball arithmetic, not certified), the findings, notes (Figure 1: the certified values)
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)
import numpy as np  # noqa: E402

from certify.core import jsonfile
from certify.core.arith import FLOAT64  # noqa: E402
from certify.core.quantities import consensus_distance  # noqa: E402
from certify.studies.wu import reproduce as sim  # noqa: E402
from certify.studies.wu.studies import Study, certified_point, depth_statistics  # noqa: E402

STATISTICS = ("mean", "geomean", "median", "min", "max")
CSV_COLUMNS = {
    "wu-fig1": ("panel", "run", "t", "token", "x", "y", "mu"),
    "wu-fig2": ("init", "variant", "mask", "dropout", "depth", "layer_used", "inputs", *STATISTICS),
    "wu-fig3": ("variant", "mask", "d_qk", "depth", "inputs", *STATISTICS),
}
MASK_COLOURS = {"complete": "tab:blue", "causal": "tab:orange", "sliding": "tab:green", "uni": "tab:red"}
SIMULATION = "float64 simulation, not certified"
CAPTION_LINE = 0.135  # inches per caption line (7.5 pt monospace)


def write(study: Study, folder: Path) -> dict[str, Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / f"{study.figure}.{kind}" for kind in ("png", "csv", "json")}
    _write_csv(paths["csv"], CSV_COLUMNS[study.figure], _csv_rows(study))
    DRAW[study.figure](study, paths["png"])
    jsonfile.write(_summary(study), paths["json"])
    return paths


def _summary(study: Study) -> dict:
    return {"figure": study.figure, "settings": study.settings,
            "spot_checks": [s.to_json() for s in study.spot_checks],
            "findings": [{"statement": f.statement, "verdict": f.verdict, "reproduced": f.reproduced,
                          "detail": f.detail, "cause": f.cause, "cause_measured": f.explained,
                          "measured": f.measured} for f in study.findings],
            "certified": study.certified, "notes": study.notes, "csv_columns": list(CSV_COLUMNS[study.figure])}


# ------------------------------------------------------------------ CSV


def _write_csv(path: Path, columns, rows) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


def _statistic_rows(prefix: tuple, mu: np.ndarray, layer_used=None):
    stats = depth_statistics(mu)
    for t in range(mu.shape[0]):
        used = () if layer_used is None else (layer_used(t),)
        yield (*prefix, t, *used, mu.shape[1], *(repr(float(stats[name][t])) for name in STATISTICS))


def _layer_used(study: Study, init: str):
    if init == "pretrained":
        layers = study.settings["pretrained"]["model_layers"]
        return lambda t: sim.pretrained_layer_used(t, layers)
    return lambda t: "input" if t == 0 else f"random layer {t}"


def _csv_rows(study: Study):
    if study.figure == "wu-fig1":
        for (panel, run), path in study.curves.items():
            mus = consensus_distance(FLOAT64, path)
            for t, X in enumerate(path):
                for token in (0, 1):
                    x, y = (repr(float(v)) for v in X[token])
                    yield panel, run, t, token + 1, x, y, repr(float(mus[t]))
    elif study.figure == "wu-fig2":
        for (init, variant, mask, p), mu in study.curves.items():
            yield from _statistic_rows((init, variant, mask, repr(p)), mu, _layer_used(study, init))
    else:
        for (d_qk, mask), mu in study.curves.items():
            yield from _statistic_rows(("SAN", mask, d_qk), mu)


# ------------------------------------------------------------------ drawing


def _save(fig, path: Path, caption: list[str], bottom: float, line_height: float, top: float) -> None:
    """Write the figure with the caption lines under the plots: the plots keep the band from
    bottom + line_height per caption line up to top (figure fractions)."""
    fig.text(0.01, 0.01, "\n".join(caption), fontsize=7.5, va="bottom", ha="left", family="monospace")
    fig.tight_layout(rect=(0, bottom + line_height * len(caption), 1, top))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _spot_lines(study: Study) -> list[str]:
    return [f"spot check: {s.configuration}: {s.summary()}" for s in study.spot_checks]


def _random_line(random: dict) -> str:
    return (f"random init ({random['setting']} setting): N = {random['tokens']}, d = {random['d']}, "
            f"{random['heads']} head(s), {random['inputs']} inputs, seed {random['seed']}; {random['initialisation']}")


def _band(ax, mu: np.ndarray, colour: str, label: str) -> None:
    stats = depth_statistics(mu)
    t = np.arange(1, mu.shape[0])
    ax.fill_between(t, stats["min"][1:], stats["max"][1:], color=colour, alpha=0.15, linewidth=0)
    ax.plot(t, stats["geomean"][1:], color=colour, label=label, linewidth=1.4)


def _verdict_lines(study: Study) -> list[str]:
    """One line per finding: agrees / DISAGREES (with its cause) / caption silent."""
    return [f"{f.verdict}: {f.statement}" + (f" -- cause: {f.cause}" if f.cause else "") for f in study.findings]


def _draw_fig2(study: Study, path: Path) -> None:
    rows = sorted({(key[0], key[3]) for key in study.curves}, key=lambda r: (r[0] != "random", r[1]))
    variants = list(dict.fromkeys(key[1] for key in study.curves))
    lines = [_random_line(study.settings["random"])]
    if "pretrained" in study.settings:
        pre = study.settings["pretrained"]
        lines.append(f"pretrained: {pre['model']}, N = {pre['tokens']}, {pre['inputs']} inputs; {pre['layers']}")
    lines += study.notes + _spot_lines(study) + _verdict_lines(study)
    height = 3.0 * len(rows) + 1.2 + CAPTION_LINE * len(lines)
    fig, axes = plt.subplots(len(rows), len(variants), figsize=(3.6 * len(variants), height), squeeze=False)
    for row, (init, p) in enumerate(rows):
        for col, variant in enumerate(variants):
            ax = axes[row, col]
            for mask in sim.MASKS:
                if (init, variant, mask, p) in study.curves:
                    _band(ax, study.curves[(init, variant, mask, p)], MASK_COLOURS[mask], mask)
            mode = "eval" if p == 0 else f"dropout {p:g}"
            ax.set(xscale="log", yscale="log", title=f"{init}, {mode}: {variant}", xlabel="layer t")
            ax.title.set_fontsize(9)
            if col == 0:
                ax.set_ylabel("mu(X_t)")
    axes[0, 0].legend(fontsize=8)
    depth_note = ""
    if "pretrained" in study.settings:
        pre = study.settings["pretrained"]
        depth_note = f"; pretrained rows: the model's {pre['model_layers']} layers repeated to depth {pre['depth']}"
    fig.suptitle("Wu et al. (2024) Figure 2: mu(X_t) against depth (" + SIMULATION + ")\n"
                 "line: geometric mean over inputs, band: min to max" + depth_note, fontsize=11)
    _save(fig, path, lines, 0.01, CAPTION_LINE / height, 1 - 0.6 / height)


def _draw_fig3(study: Study, path: Path) -> None:
    fig, axes = plt.subplots(1, len(sim.MASKS), figsize=(4.6 * len(sim.MASKS), 5.2), squeeze=False)
    colours = dict(zip((str(t) for t in sim.D_QK_SWEEP), ("tab:purple", "tab:gray", "tab:olive")))
    for col, mask in enumerate(sim.MASKS):
        ax = axes[0, col]
        for d_qk, colour in colours.items():
            _band(ax, study.curves[(d_qk, mask)], colour, f"d_QK = {d_qk}")
        ax.set(xscale="log", yscale="log", title=f"SAN, {mask} mask", xlabel="layer t")
    axes[0, 0].set_ylabel("mu(X_t)")
    axes[0, 0].legend(fontsize=8)
    random = study.settings["random"]
    fig.suptitle("Wu et al. (2024) Figure 3: temperature sweep (" + SIMULATION + ")\n"
                 "scores S = (X W_Q)(X W_K)^T / sqrt(d_QK): smaller d_QK, lower temperature; "
                 f"d_QK = d_k = {random['d'] // random['heads']} is the standard scaling", fontsize=11)
    lines = [_random_line(random) + "; eval mode; line: geometric mean, band: min to max"]
    lines += _spot_lines(study) + _verdict_lines(study)
    _save(fig, path, lines, 0.02, 0.028, 0.9)


def _draw_fig1(study: Study, path: Path) -> None:
    certified = study.certified
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.6))
    no_ln, circle, mus = axes
    for (panel, run), X in study.curves.items():
        if panel == "no-LN":
            for token, colour in ((0, "tab:blue"), (1, "tab:orange")):
                no_ln.plot(X[:, token, 0], X[:, token, 1], ".-", color=colour, markersize=3, linewidth=0.8,
                           label=f"token {token + 1}" if run == 0 else None)
            mus.plot(np.arange(X.shape[0]), consensus_distance(FLOAT64, X), color="tab:gray", linewidth=1,
                     label="no LN" if run == 0 else None)
    no_ln.set(title="without LayerNorm: X' = P X W_V", xlabel="x", ylabel="y")
    no_ln.legend(fontsize=8)

    angles = np.linspace(0, 2 * math.pi, 400)
    circle.plot(np.cos(angles), np.sin(angles), color="lightgray", linewidth=1)
    lo, hi = (float(Fraction(c)) for c in certified["trapping_arc"])
    arc = np.linspace(lo, hi, 100)
    circle.plot(np.cos(arc), np.sin(arc), color="red", linewidth=4, alpha=0.5, label="certified trapping arc")
    B = np.array(certified_point(certified, "B"))
    for (panel, run), X in study.curves.items():
        if panel == "post-LN token 1":
            circle.plot(X[:, 0, 0], X[:, 0, 1], ".", color="tab:blue", markersize=4,
                        label="token 1" if run == 0 else None)
        elif panel == "post-LN token 2":
            to_B = np.linalg.norm(X[-1, 1] - B) < 1e-3
            colour = "tab:red" if to_B else "tab:orange"
            circle.plot(X[:, 1, 0], X[:, 1, 1], ".", color=colour, markersize=4)  # points: a step may jump
            circle.plot(X[0, 1, 0], X[0, 1, 1], "o", color=colour, markersize=5, fillstyle="none")
            mus.plot(np.arange(X.shape[0]), consensus_distance(FLOAT64, X), color=colour, linewidth=1)
    for name, marker in (("A", "s"), ("B", "D")):
        x, y = certified_point(certified, name)
        circle.plot([x], [y], marker, color="black", markersize=8)
        circle.annotate(name, (x, y), textcoords="offset points", xytext=(8, -4))
    circle.plot([0, 0], [1, -1], "k^", markersize=7)
    circle.set(title="post-LN: token 1 -> (0, +-1); token 2 (token 1 at (0, 1))", aspect="equal",
               xlim=(-1.3, 1.3), ylim=(-1.3, 1.3))
    circle.plot([], [], color="tab:red", label="token 2 -> B")
    circle.plot([], [], color="tab:orange", label="token 2 -> (0, 1)")
    circle.legend(fontsize=7, loc="lower right")
    mus.set(yscale="log", title="mu(X_t): no LN (gray) vs post-LN (token-2 runs)", xlabel="layer t")
    fig.suptitle(f"Wu et al. (2024) Figure 1: N = 2, d = 2, w = {study.settings['w']} ({SIMULATION}; "
                 "A, B and the arc certified)", fontsize=11)
    deg = (math.degrees(lo), math.degrees(hi))
    lines = [f"certified by certify.studies.wu.fig1 (checker-confirmed: {certified['confirmed_by_checker']}): "
             f"A = ({certified['A_x']}, {certified['A_y']}), f'(A) = {certified['fprime_A']} (repelling)",
             f"B = ({certified['B_x']}, {certified['B_y']}), f'(B) = {certified['fprime_B']} (attracting); "
             f"trapping arc [{deg[0]:.4f}, {deg[1]:.4f}] degrees",
             f"mu of the rank-2 equilibrium [(0, 1), B] = {certified['equilibrium_mu']}"] + _spot_lines(study)
    _save(fig, path, lines, 0.05, 0.03, 0.94)


DRAW = {"wu-fig1": _draw_fig1, "wu-fig2": _draw_fig2, "wu-fig3": _draw_fig3}
