"""The files of a study of certify.studies.wu.studies besides its figure (certify.figures.wu draws
that): a CSV of the plotted numbers and a JSON of everything else, the figure's caption included.

For F in wu-fig1, wu-fig2, wu-fig3, write(study, folder) writes
    F.csv   the numbers plotted, one row per point, columns CSV_COLUMNS[F]:
              wu-fig1  panel, run, t, token, x, y, mu      (panel: no-LN | post-LN token 1 | post-LN token 2;
                                                           mu of the pair at step t, on both token rows)
              wu-fig2  init, variant, mask, dropout, depth, layer_used, inputs, mean, geomean, median,
                       min, max   (dropout 0: eval mode; layer_used: which layer made X_t, for the
                       pretrained row "layer k of 6, pass m" as the real layers are repeated)
              wu-fig3  variant, mask, d_qk, depth, inputs, mean, geomean, median, min, max
            (statistics of mu(X_t) over the inputs at each depth t = 0..T; geomean is 0 when some
            input has mu exactly 0)
    F.json  settings, the spot check (ball arithmetic, not certified), the findings (float64, not
            certified), notes (Figure 1: the certified values) and "caption": the lines a caption of the figure needs (settings,
            the spot check, every finding), which the figure itself leaves out
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from certify.core import jsonfile
from certify.core.arith import FLOAT64
from certify.core.quantities import consensus_distance
from certify.core.verdicts import NOT_CERTIFIED
from certify.studies.wu import reproduce as sim
from certify.studies.wu.studies import Study, depth_statistics, trapping_arc

STATISTICS = ("mean", "geomean", "median", "min", "max")
CSV_COLUMNS = {
    "wu-fig1": ("panel", "run", "t", "token", "x", "y", "mu"),
    "wu-fig2": ("init", "variant", "mask", "dropout", "depth", "layer_used", "inputs", *STATISTICS),
    "wu-fig3": ("variant", "mask", "d_qk", "depth", "inputs", *STATISTICS),
}


def write(study: Study, folder: Path) -> dict[str, Path]:
    """Write F.csv and F.json into folder; return {"csv": path, "json": path}."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / f"{study.figure}.{kind}" for kind in ("csv", "json")}
    _write_csv(paths["csv"], CSV_COLUMNS[study.figure], _csv_rows(study))
    jsonfile.write(_summary(study), paths["json"])
    return paths


def _summary(study: Study) -> dict:
    return {"figure": study.figure, "settings": study.settings,
            "spot_checks": [s.to_json() for s in study.spot_checks],
            "findings": [{"statement": f.statement, "verdict": f.verdict, "checker": NOT_CERTIFIED,
                          "reproduced": f.reproduced, "detail": f.detail, "cause": f.cause,
                          "cause_measured": f.explained, "measured": f.measured} for f in study.findings],
            "certified": study.certified, "notes": study.notes, "csv_columns": list(CSV_COLUMNS[study.figure]),
            "caption": caption(study)}


# ------------------------------------------------------------------ caption


def caption(study: Study) -> list[str]:
    """What a caption of the figure says beyond its title and legend, one statement a line."""
    lines = []
    if "random" in study.settings:
        lines.append(_random_line(study.settings["random"]))
    if "pretrained" in study.settings:
        pre = study.settings["pretrained"]
        lines.append(f"pretrained: {pre['model']}, N = {pre['tokens']}, {pre['inputs']} inputs; {pre['layers']}")
    if study.certified:
        lines += _certified_lines(study.certified)
    lines += study.notes
    lines += [f"spot check: {s.configuration}: {s.summary()}" for s in study.spot_checks]
    lines += [f"{f.shown_verdict}: {f.statement}" + (f" -- cause: {f.cause}" if f.cause else "") for f in study.findings]
    return lines


def _random_line(random: dict) -> str:
    return (f"random init ({random['setting']} setting): N = {random['tokens']}, d = {random['d']}, "
            f"{random['heads']} head(s), {random['inputs']} inputs, seed {random['seed']}; {random['initialisation']}")


def _certified_lines(certified: dict) -> list[str]:
    """Figure 1's equilibria and trapping arc, said certified only when the checker confirmed them."""
    lo, hi = map(math.degrees, trapping_arc(certified))
    said = ("certified by certify.studies.wu.fig1, confirmed by the checker" if certified["confirmed_by_checker"]
            else f"{NOT_CERTIFIED}: the checker did not confirm the Figure-1 certificate")
    return [f"{said}: A = ({certified['A_x']}, {certified['A_y']}), f'(A) = {certified['fprime_A']} (repelling)",
            f"B = ({certified['B_x']}, {certified['B_y']}), f'(B) = {certified['fprime_B']} (attracting); "
            f"trapping arc [{lo:.4f}, {hi:.4f}] degrees",
            f"mu of the rank-2 equilibrium [(0, 1), B] = {certified['equilibrium_mu']}"]


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


