"""Options several commands share, defined once so that they read and behave alike."""

from __future__ import annotations

import argparse
import os

from certify import engine, figures
from certify.core import files, limits
from certify.core.arguments import refuse_unused  # the API's rule too
from certify.core.numbers import option_integer as integer, option_real as real  # type= of every option
from certify.errors import BadInput


def add_target(parser, example: str = "(1-exp(-a*D**2/8))*D") -> None:
    """--claim ID | --bound EXPR: what to decide (default collapse.global)."""
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--claim", type=claim_id, help="claim id (see `certify claims`); default collapse.global")
    target.add_argument("--bound", metavar="EXPR", help=f'a right-hand side in D, a, n, d, v, e.g. "{example}"')


def add_max_prec(parser, default: int = engine.DEFAULT_MAX_PRECISION, what: str = "") -> None:
    """--max-prec BITS: the precision cap, under one name on every command that escalates precision."""
    parser.add_argument("--max-prec", type=integer, default=default, metavar="BITS",
                        help=f"precision cap in bits{' ' + what if what else ''} (default {default})")


def add_l_range(parser, help: str, default=None) -> None:
    """--l-range LO HI: a range of L = a D^2 (the old spelling --L-range still works)."""
    parser.add_argument("--l-range", dest="l_range", nargs=2, type=real, default=default, metavar=("LO", "HI"),
                        help=help)
    alias(parser, "--L-range", dest="l_range", nargs=2, type=real, metavar=("LO", "HI"))


def add_limits(parser) -> None:
    """--limit NAME=VALUE (repeatable): change one of the documented caps of certify.core.limits."""
    defaults = ", ".join(f"{name}={value}" for name, value in vars(limits.DEFAULT).items())
    parser.add_argument("--limit", action="append", metavar="NAME=VALUE", default=[],
                        help=f"change a limit on the input's size and work (repeatable); defaults: {defaults}")


def limits_of(args) -> limits.Limits:
    """The certify.core.limits.Limits of a command: the defaults changed by its --limit NAME=VALUE options
    (BadInput for an unknown name or a bad value)."""
    return limits.DEFAULT.changed(args.limit)


def add_output(parser) -> None:
    """-q/--quiet and --progress, on every command: progress goes to stderr (certify.core.progress),
    drawn as bars when stderr is a terminal; --progress draws them anyway, -q silences all progress."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-q", "--quiet", dest="progress", action="store_false", default=None,
                       help="no progress on stderr (results and errors are still printed)")
    group.add_argument("--progress", dest="progress", action="store_true", default=None,
                       help="progress bars on stderr even when it is not a terminal (default: only on a terminal)")


def alias(parser, old: str, **kwargs) -> None:
    """An old spelling of an option that keeps working, hidden from --help (old scripts stay valid)."""
    parser.add_argument(old, help=argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)


def add_figure_options(parser, *, raster: bool = False, written=None) -> None:
    """--format png|pdf|svg and --dpi N: how a command writes its figures.  `raster`: some of its figures hold
    images (the heat maps and colour bars of certify.figures.models and .corpus), which a PDF or an SVG embeds
    at --dpi; without them a PDF or SVG is all vector drawing, which --dpi does not change.  `written`: for a
    command that writes figures only on some runs, (when, where): when(args) says whether this run writes them,
    `where` says when in words.  check_figures judges both once the command line is parsed."""
    parser.add_argument("--format", dest="figure_format", choices=figures.FORMATS, default=figures.DEFAULT_FORMAT,
                        help=f"file format of the figures (default {figures.DEFAULT_FORMAT})")
    where = ("of PNG figures and of the heat maps that PDF and SVG figures hold as images" if raster else
             "of PNG figures (PDF and SVG ones are vector drawings, without one)")
    parser.add_argument("--dpi", type=_dpi, default=figures.DEFAULT_DPI, metavar="N",
                        help=f"resolution {where}, in dots per inch, {figures.DPI_RANGE[0]} to "
                             f"{figures.DPI_RANGE[1]} (default {figures.DEFAULT_DPI})")
    parser.set_defaults(figure_raster=raster, figures_written=written)


def check_figures(args) -> None:
    """Figure options that would do nothing, silently, are refused (given as the default, they change nothing):
    --format and --dpi on a run that writes no figure, and --dpi with --format pdf or svg where every figure is
    a vector drawing (it changed no byte of them).  Called once for every command that has them."""
    given = [name for name, value, default in (("--format", args.figure_format, figures.DEFAULT_FORMAT),
                                               ("--dpi", args.dpi, figures.DEFAULT_DPI)) if value != default]
    if args.figures_written is not None:
        when, where = args.figures_written
        refuse_unused([] if when(args) else given, f"the figures, written only {where}")
    if args.figure_format != "png" and not args.figure_raster and "--dpi" in given:
        refuse_unused(["--dpi"], f"--format png: the {args.figure_format.upper()} figures of this command are "
                                 "vector drawings, which have no resolution")


def _dpi(text: str) -> int:
    low, high = figures.DPI_RANGE
    try:
        value = integer(text)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}, got {text!r}")
    return value


def claim_id(text: str) -> str:
    """A claim id (--claim, prove's CLAIM): an empty one (an unset shell variable) is refused, not read as
    the default claim."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty claim id (an unset variable?); leave it out for collapse.global")
    return text


def out_file(text: str) -> str:
    """An output file (--out CERT and the like): path(), and refused at once when it names a folder or lies
    under a file (found only at the writing, after the work)."""
    return _output(text, folder=False)


def out_folder(text: str) -> str:
    """An output folder (--out DIR): path(), and refused at once when it names a file or lies under one."""
    return _output(text, folder=True)


def _output(text: str, folder: bool) -> str:
    if problem := files.output_problem(path(text), folder):
        raise argparse.ArgumentTypeError(problem)
    return text


def not_overwriting(option: str, written, read: dict) -> None:
    """BadInput when the file `written` (given as `option`) is one of the files `read` ({option: path}) the
    command reads: it would be replaced by what the command writes (a configuration by its certificate)."""
    if written is None:
        return
    target = os.path.realpath(written)  # not Path.resolve(), which raises on a link in a loop (it names no file)
    for name, path in read.items():
        if path is not None and os.path.realpath(path) == target:
            raise BadInput(f"{option} {written} is the file of {name}, which would be written over; give another path")


def path(text: str) -> str:
    """A path (--out and the like, verify's --model and --corpus): refused when empty, as from an unset shell
    variable (`--out "$CERT"`), which would otherwise mean "write nothing" to one command and "." to another."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path (an unset variable?)")
    return text
