"""The shared look of every figure, and the one way figures are written to disk.

Figures are built on matplotlib.figure.Figure directly (no pyplot: no global state, no backend to
choose, nothing to close), inside `context()`, which sets the fonts, the Okabe-Ito palette (safe
for the common colour-vision deficiencies) and the grid.  Each figure function returns its Figure,
so a notebook shows it; `save` writes it as PNG, PDF or SVG.  Labels are matplotlib mathtext.
Balls and long numbers never go inside a figure: they belong in the JSON next to it.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from certify.core import files
from certify.core.arguments import integer
from certify.errors import BadInput
from certify.figures import DEFAULT_DPI, DEFAULT_FORMAT, DPI_RANGE, FORMATS  # noqa: F401  (re-exported: one definition)


# Okabe & Ito (2008), "Color Universal Design"
BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7")
GREY = "#999999"
PALETTE = (BLUE, ORANGE, GREEN, VERMILLION, PURPLE, SKY_BLUE, YELLOW, BLACK)
SEQUENTIAL = "cividis"  # perceptually uniform and readable with a colour-vision deficiency

RC = {
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "figure.titlesize": 11,
    "axes.prop_cycle": matplotlib.cycler(color=PALETTE),
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "legend.framealpha": 0.85,
    "lines.markersize": 4,
}
# Applied while writing: PDF text as TrueType (editable, no Type 3 fonts); no creation date, so the
# same figure gives the same bytes.
SAVE_RC = {"pdf.fonttype": 42, "svg.hashsalt": "certify"}
NO_DATE = {"pdf": {"CreationDate": None}, "svg": {"Date": None}, "png": {}}
# fontTools warns on stderr about the fixed timestamps of the font subsets embedded in a PDF
FONT_SUBSET_LOG = logging.getLogger("fontTools.ttLib.tables._h_e_a_d")

# Words used by several figures, as mathtext
LAYER = r"layer $t$"
MU = r"$\mu(X_t)$"
A_D2 = r"$\|A_h\|_2\, D^2$"


@contextmanager
def context():
    """Build a figure inside this: the shared fonts, palette and grid."""
    with matplotlib.rc_context(RC):
        yield


def new_figure(width: float, height: float) -> Figure:
    """A figure with constrained layout (titles, legends and colour bars find their room)."""
    return Figure(figsize=(width, height), layout="constrained")


def integer_ticks(axis) -> None:
    """Ticks only at integers (layers, heads): never 0.5 or 1.5."""
    axis.set_major_locator(MaxNLocator(integer=True))


def heat_map(ax, grid, norm, cell_text, layers) -> object:
    """Cells of a layers x heads `grid` (nan: no head there) coloured under `norm`, each labelled
    cell_text(value); rows named by `layers`, heads counted from 0, ticks at integers.  Returns the image
    (for its colour bar)."""
    image = ax.imshow(grid, cmap=SEQUENTIAL, norm=norm, aspect="auto", origin="upper")
    ax.set_yticks(range(len(layers)), [str(layer) for layer in layers])
    ax.set_xticks(range(grid.shape[1]))
    ax.set_xlabel("head $h$")
    ax.set_ylabel("layer")
    ax.grid(False)
    for (row, col), value in np.ndenumerate(grid):
        if np.isfinite(value):
            dark = norm(value) < 0.55  # cividis is dark at the low end: white text there
            ax.text(col, row, cell_text(value), ha="center", va="center", fontsize=6.5,
                    color="white" if dark else BLACK)
    return image


def save(fig: Figure, path, *, dpi: int = DEFAULT_DPI, fmt: str | None = None) -> Path:
    """Write `fig` to `path` (format `fmt`, else the path's suffix); return the path.  BadInput, before any drawing,
    for a path that cannot be a file, a format not in FORMATS or a dpi outside DPI_RANGE (--dpi's): dpi=True
    reached FreeType (RuntimeError), a folder as the path raised IsADirectoryError."""
    if not isinstance(path, (str, os.PathLike)):
        raise BadInput(f"a figure's path is a string or a pathlib.Path, not {type(path).__name__}")
    path = files.given_path(path)
    fmt = fmt or path.suffix.lstrip(".").lower()
    if fmt not in FORMATS:
        raise BadInput(f"figure format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    low, high = DPI_RANGE
    if not low <= integer(dpi, "dpi=") <= high:
        raise BadInput(f"dpi= must be an integer from {low} to {high}, got {dpi!r}")
    if problem := files.output_problem(path, folder=False):
        raise BadInput(problem)
    path.parent.mkdir(parents=True, exist_ok=True)
    level = FONT_SUBSET_LOG.level
    FONT_SUBSET_LOG.setLevel(logging.ERROR)
    try:
        with matplotlib.rc_context(SAVE_RC):  # whole or not at all: a job's figure is drawn again by each run
            files.replace_with(path, lambda handle: fig.savefig(handle, format=fmt, dpi=dpi, metadata=NO_DATE[fmt]))
    finally:
        FONT_SUBSET_LOG.setLevel(level)
    return path


def save_as_the_only_format(fig: Figure, folder, stem: str, *, fmt: str, dpi: int = DEFAULT_DPI) -> Path:
    """save() to folder/<stem>.<fmt>, then remove <stem> in the other formats.  For a job's folder (a
    campaign's, a corpus run's), drawn again from each summary: a run resumed with another --format
    would otherwise leave the figure of an earlier summary beside the new one, and the folder's page
    shows every figure it finds."""
    path = save(fig, Path(folder) / f"{stem}.{fmt}", fmt=fmt, dpi=dpi)
    for other in FORMATS:
        if other != fmt:
            path.with_suffix(f".{other}").unlink(missing_ok=True)
    return path
