"""Figures of certify's studies, in one shared style (certify.figures.style):

    trajectory   a certified trajectory: values, tightness of each bound, log10(-log10 D_t)
    wu           Wu et al. (2024), Figures 1-3 (with the CSV and JSON next to them)
    models       a real model's heads: a D^2 and tau(P_h) per layer and head, the configuration per layer
    sample       a sampled campaign: its margins by decade and L = a D^2
    corpus       a model over a corpus: a D^2 and the informative fraction per head, a D^2 and tau pooled

Each module has figure functions that return a matplotlib Figure (a notebook shows it) and a
`write` that saves them as PNG, PDF or SVG.  Importing this package does not import matplotlib;
its modules do.
"""

from certify.core.report_files import FIGURE_FORMATS as FORMATS  # noqa: F401  (jobs name their figure files too)

DEFAULT_FORMAT = "png"
DEFAULT_DPI = 150
DPI_RANGE = (30, 1200)
