"""certify.figures: every figure command writes PNG, PDF and SVG (checked by their magic bytes),
--dpi changes a PNG's size, and the returned Figures are readable: axis labels on every axes that
plots data, a legend wherever several series are labelled, integer layer ticks, no monospace text
and no long digit strings (balls belong in the JSON), titles that name the configuration or model."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import struct
from contextlib import nullcontext

import numpy as np
import pytest
from matplotlib.text import Text

from certify.cli import main
from certify.errors import BadInput
from certify.figures import corpus as corpus_figures
from certify.figures import models as model_figures
from certify.figures import sample as sample_figure
from certify.figures import style
from certify.figures import trajectory as trajectory_figure
from certify.figures import wu as wu_figures
from certify.search import campaign
from certify.studies import trajectory
from certify.studies.wu import reproduce as sim
from certify.studies.wu import studies
from certify.suite import cases

MAGIC = {"png": lambda data: data[:8] == b"\x89PNG\r\n\x1a\n", "pdf": lambda data: data[:5] == b"%PDF-",
         "svg": lambda data: b"<svg" in data[:2000]}
HAS_MODELS = all(importlib.util.find_spec(m) is not None for m in ("safetensors", "tokenizers"))


def png_size(path) -> tuple[int, int]:
    width, height = struct.unpack(">II", path.read_bytes()[16:24])  # the IHDR chunk
    return width, height


def assert_format(path, fmt: str) -> None:
    assert path.suffix == f".{fmt}" and path.is_file(), path
    assert MAGIC[fmt](path.read_bytes()), f"{path} is not a {fmt} file"


def data_axes(fig):
    """Axes that plot data (colour bars and switched-off panels excluded)."""
    return [ax for ax in fig.axes if ax.axison and getattr(ax, "_colorbar", None) is None
            and (ax.lines or ax.collections or ax.images or ax.patches)]


def labelled_series(ax) -> set[str]:
    return {artist.get_label() for artist in ax.lines + ax.collections + ax.patches
            if not artist.get_label().startswith("_")}


def assert_readable(fig, layer_axes: int = 0) -> None:
    """Labels, legends, no monospace, no long digit strings; at least layer_axes axes with integer layer ticks."""
    axes = data_axes(fig)
    assert axes
    for ax in axes:
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip(), (ax.get_title(), ax.get_xlabel(), ax.get_ylabel())
        if len(labelled_series(ax)) >= 2:
            assert ax.get_legend() is not None or fig.legends, ax.get_title()
    for text in fig.findobj(Text):
        assert "monospace" not in text.get_fontfamily(), text.get_text()
        assert not re.search(r"\d{10,}", text.get_text()), text.get_text()  # no 18-digit balls in a figure
    layered = [ax for ax in axes if "layer" in ax.get_xlabel()]
    assert len(layered) >= layer_axes
    for ax in layered:
        low, high = ax.get_xlim()
        ticks = [t for t in ax.get_xticks() if low <= t <= high]
        assert ticks and all(float(t).is_integer() for t in ticks), (ax.get_title(), ticks)


# ------------------------------------------------------------------ trajectory


def small(fmt: str) -> list[str]:
    """--dpi 40 for a PNG (fast to draw): a PDF or SVG of these commands is all vector, where --dpi is refused."""
    return ["--dpi", "40"] if fmt == "png" else []


def write_config(tmp_path, config) -> str:
    path = tmp_path / "near.json"
    path.write_text(json.dumps(config))
    return str(path)


@pytest.fixture(scope="module")
def traced():
    return trajectory.trace(cases.near_consensus(), 4)


def test_trajectory_figure_is_readable_and_titled_by_its_configuration(traced):
    fig = trajectory_figure.figure(traced, source="runs/near.json")
    assert_readable(fig, layer_axes=3)
    title = fig._suptitle.get_text()
    assert "near.json" in title and traced.name in title and "holds" in title
    assert [ax.get_ylabel() for ax in fig.axes][1].startswith(r"$\log_{10}(D_t")  # the ratio panel
    ratio_ax = fig.axes[1]
    assert all(max(line.get_ydata()) <= 0 for line in ratio_ax.lines if not line.get_label().startswith("bound"))


@pytest.mark.parametrize("fmt", style.FORMATS)
def test_cli_trajectory_writes_each_format(tmp_path, capsys, fmt):
    path = write_config(tmp_path, cases.near_consensus())
    out = tmp_path / "out"
    assert main(["trajectory", path, "--layers", "2", "--out", str(out), "--format", fmt, *small(fmt)]) == 0
    assert_format(out / f"trajectory.{fmt}", fmt)
    assert f"trajectory.{fmt}" in capsys.readouterr().out


def test_cli_run_writes_its_sections_figures_in_the_format_asked(tmp_path):
    out = tmp_path / "report"
    assert main(["run", "--only", "thesis-dynamics", "--out", str(out), "--format", "svg", "-q"]) == 0
    drawn = sorted((out / "thesis-dynamics").glob("trajectory--*.*"))
    figures = [path for path in drawn if path.suffix in (".png", ".pdf", ".svg")]
    assert figures and all(path.suffix == ".svg" for path in figures)
    for path in figures:
        assert_format(path, "svg")


def test_dpi_scales_the_png_and_bad_figure_options_are_bad_input(traced, tmp_path, capsys):
    small = style.save(trajectory_figure.figure(traced), tmp_path / "small.png", dpi=40)
    large = style.save(trajectory_figure.figure(traced), tmp_path / "large.png", dpi=80)
    (ws, hs), (wl, hl) = png_size(small), png_size(large)
    assert abs(wl - 2 * ws) <= 2 and abs(hl - 2 * hs) <= 2
    path = write_config(tmp_path, cases.near_consensus())
    for argv in (["--dpi", "0"], ["--dpi", "x"], ["--dpi", "5000"], ["--format", "jpg"]):
        assert main(["trajectory", path, "--layers", "2", "--out", str(tmp_path / "bad"), *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("certify: error:") and err.count("\n") == 1
    assert not (tmp_path / "bad").exists()
    with pytest.raises(ValueError, match="format"):
        style.save(trajectory_figure.figure(traced), tmp_path / "figure.jpg")


def test_bad_arguments_of_save_are_bad_input_before_any_drawing(traced, tmp_path):
    """style.save, which the README shows, let dpi=True reach FreeType (RuntimeError), dpi="100" numpy (TypeError),
    and a folder or None as the path raised IsADirectoryError or TypeError: each is BadInput, and nothing is written."""
    figure = trajectory_figure.figure(traced)
    (tmp_path / "folder.png").mkdir()
    (tmp_path / "note.txt").write_text("")
    for path, keywords in ((tmp_path / "f.png", {"dpi": True}), (tmp_path / "f.png", {"dpi": "100"}),
                           (tmp_path / "f.png", {"dpi": 0}), (tmp_path / "f.png", {"dpi": 10**6}),
                           (tmp_path / "folder.png", {}), (tmp_path / "note.txt" / "f.png", {}),
                           (None, {}), (tmp_path / "f.jpg", {})):
        with pytest.raises(BadInput):
            style.save(figure, path, **keywords)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder.png", "note.txt"]
    assert style.save(figure, tmp_path / "f.png", dpi=np.int64(40)).is_file()


def test_a_figure_whose_drawing_is_interrupted_leaves_the_earlier_one_whole(traced, tmp_path, monkeypatch):
    """matplotlib wrote a figure in place: a run killed (or stopped by a second Ctrl-C) while it drew a job's
    histograms left them cut short in its folder.  A figure is now written beside and renamed, as the job's
    other files are."""
    from matplotlib.figure import Figure

    path = style.save(trajectory_figure.figure(traced), tmp_path / "figure.png")
    before = path.read_bytes()

    def cut_short(figure, target, **options):
        with nullcontext(target) if hasattr(target, "write") else open(target, "wb") as handle:
            handle.write(before[:100])
        raise KeyboardInterrupt

    monkeypatch.setattr(Figure, "savefig", cut_short)
    with pytest.raises(KeyboardInterrupt):
        style.save(trajectory_figure.figure(traced), path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["figure.png"]


# ------------------------------------------------------------------ Wu et al.


TINY_SIZE = sim.Size(6, 4, 1, 8, 3, 6, 8, 2, 10)  # tokens, d, heads, depth, inputs, pretrained ..., fig1 steps


@pytest.fixture(scope="module")
def wu_studies():
    opts = dataclasses.replace(studies.options("project", False, 0, progress=False), size=TINY_SIZE)
    return {name: build(opts) for name, build in studies.STUDIES.items()}


# every format for the small Figure 1; one each for the larger grids (the writing is shared)
@pytest.mark.parametrize("name, formats", [("wu-fig1", style.FORMATS), ("wu-fig2", ("pdf",)), ("wu-fig3", ("svg",))])
def test_wu_figures_are_readable_and_written(wu_studies, tmp_path, name, formats):
    study = wu_studies[name]
    fig = wu_figures.figure(study)
    assert_readable(fig, layer_axes=1)
    for fmt in formats:
        paths = wu_figures.write(study, tmp_path, fmt=fmt, dpi=40)
        assert_format(paths[fmt], fmt)
    assert json.loads(paths["json"].read_text())["caption"]  # the caption goes to the JSON


def test_wu_fig2_shares_y_along_a_row_and_marks_repetition_and_the_float64_floor(wu_studies):
    study = wu_studies["wu-fig2"]
    fig = wu_figures.fig2(study)
    axes = data_axes(fig)
    rows = {}
    for ax in axes:
        rows.setdefault(ax.get_title().split(":")[0], []).append(ax.get_ylim())
    assert all(len(set(limits)) == 1 for limits in rows.values())  # each variant's panels on one y-range
    assert len({ax.get_position().x0 for ax in axes}) > 1 and len({ax.get_position().y0 for ax in axes}) > 2  # a grid
    legend = " ".join(t.get_text() for t in fig.legends[0].get_texts())
    assert "2^{-52}" in legend and "complete mask" in legend
    if "pretrained" in study.settings:
        layers = study.settings["pretrained"]["model_layers"]
        assert "real layers" in legend
        pretrained = [ax for ax in axes if "pretrained" in ax.get_title()]
        assert pretrained and all(any(list(line.get_xdata()) == [layers, layers] for line in ax.lines)
                                  for ax in pretrained)
    spot = study.spot_checks[0]
    assert spot.curve is not None  # project setting: the spot check is input 0 of a plotted curve
    arrows = [t.get_text() for t in fig.findobj(Text) if t.get_text().startswith("ball arithmetic")]
    assert arrows == [f"ball arithmetic (not certified): {spot.interval()}\nfloat64: {spot.float64:.2g}"]


def test_wu_fig1_explains_its_markers(wu_studies):
    fig = wu_figures.fig1(wu_studies["wu-fig1"])
    legends = " ".join(t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts())
    for words in ("start", "A: certified, repelling", "B: certified, attracting", "limits of token 1",
                  "certified trapping arc", "without LayerNorm"):
        assert words in legends, words


@pytest.mark.parametrize("fmt", style.FORMATS)
def test_cli_reproduce_writes_each_format(tmp_path, capsys, fmt):
    assert main(["reproduce", "wu-fig1", "--out", str(tmp_path), "--format", fmt, *small(fmt)]) == 0
    assert {p.name for p in tmp_path.iterdir()} == {f"wu-fig1.{fmt}", "wu-fig1.csv", "wu-fig1.json"}
    assert_format(tmp_path / f"wu-fig1.{fmt}", fmt)


def holds_an_image(path) -> bool:
    """Whether a PDF or SVG figure embeds a raster image (drawn at the figure's dpi)."""
    return (b"<image" if path.suffix == ".svg" else b"/Subtype /Image") in path.read_bytes()


@pytest.mark.parametrize("fmt", ("pdf", "svg"))
def test_dpi_with_a_vector_format_is_refused_where_no_figure_holds_an_image(tmp_path, capsys, fmt):
    """sample, trajectory and reproduce draw only lines, bars and text: their PDF and SVG were the same bytes at any
    --dpi, which was accepted and did nothing.  It is refused, in one line, before any work."""
    path = write_config(tmp_path, cases.near_consensus())
    commands = {"trajectory": ["trajectory", path, "--layers", "2"], "reproduce": ["reproduce", "wu-fig1"],
                "sample": ["sample", "--n", "3", "--d", "1", "--count", "4", "--workers", "1", "-q"]}
    for name, argv in commands.items():
        out = tmp_path / name
        assert main([*argv, "--out", str(out), "--format", fmt]) in (0, 1, 3), name
        assert not holds_an_image(next(out.glob(f"*.{fmt}"))), name
        capsys.readouterr()
        assert main([*argv, "--out", str(tmp_path / "refused"), "--format", fmt, "--dpi", "300"]) == 2, name
        assert capsys.readouterr().err == (f"certify: error: --dpi goes with --format png: the {fmt.upper()} figures "
                                           "of this command are vector drawings, which have no resolution\n")
        assert not (tmp_path / "refused").exists()


@pytest.mark.skipif(not HAS_MODELS, reason="needs certify[models]")
def test_dpi_sets_the_resolution_of_the_heat_maps_a_models_svg_holds(tmp_path, capsys):
    """The model's heat maps and colour bars are images inside a PDF or SVG, drawn at --dpi: accepted, and said
    so in --help."""
    from tiny_bert import write_model

    folder = write_model(tmp_path / "tiny")
    sizes = []
    for dpi in ("30", "120"):
        out = tmp_path / dpi
        assert main(["model", str(folder), "--text", "the cat sat", "--out", str(out), "--format", "svg",
                     "--dpi", dpi, "-q"]) in (0, 3)
        assert holds_an_image(out / "model_regimes.svg")
        sizes.append((out / "model_regimes.svg").stat().st_size)
    assert sizes[0] < sizes[1]  # the images hold more pixels at the higher resolution
    capsys.readouterr()
    for command in ("model", "run"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "heat maps that PDF and SVG figures hold as images" in " ".join(capsys.readouterr().out.split())


# ------------------------------------------------------------------ a real model (the tiny BERT of the tests)


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    pytest.importorskip("safetensors")
    from tiny_bert import write_model

    folder = write_model(tmp_path_factory.mktemp("model") / "tiny")
    out = tmp_path_factory.mktemp("report")
    assert main(["model", str(folder), "--text", "the cat sat", "--out", str(out), "--format", "svg",
                 "--dpi", "40"]) == 0
    return folder, out


@pytest.mark.skipif(not HAS_MODELS, reason="needs certify[models]")
def test_model_figures_name_the_model_and_every_head(tiny_report, capsys):
    folder, out = tiny_report
    for stem in model_figures.STEMS:
        assert_format(out / f"{stem}.svg", "svg")
    report = json.loads((out / "model_certified.json").read_text())
    for draw in model_figures.FIGURES.values():
        fig = draw(report, "tiny")
        assert_readable(fig)
        assert fig._suptitle.get_text().startswith("tiny on") and str(folder.parent) not in fig._suptitle.get_text()
    assert model_figures.model_name(report) == "tiny"  # no name given: the folder's name, not its path
    planted = json.loads(json.dumps(report))
    planted["layers"][1]["heads"][0]["regime"] = "underflowed"
    fig = model_figures.regimes(planted, "tiny")
    legend = " ".join(t.get_text() for t in fig.axes[0].get_legend().get_texts())
    assert "underflowed: L1H0" in legend
    heat = fig.axes[0]
    assert heat.get_xlabel().startswith("head") and heat.get_ylabel() == "layer"
    assert [t.get_text() for t in heat.get_yticklabels()] == [str(layer["layer"]) for layer in report["layers"]]


@pytest.mark.skipif(not HAS_MODELS, reason="needs certify[models]")
@pytest.mark.parametrize("fmt", ("pdf",))  # svg: tiny_report; png: tests/test_models_certified.py
def test_cli_model_writes_each_format(tmp_path, fmt):
    from tiny_bert import write_model

    folder = write_model(tmp_path / "tiny")
    assert main(["model", str(folder), "--text", "the cat", "--out", str(tmp_path / "out"), "--format", fmt,
                 "--dpi", "40"]) in (0, 3)  # two tokens: step 1 is an exact equality, undecided
    for stem in model_figures.STEMS:
        assert_format(tmp_path / "out" / f"{stem}.{fmt}", fmt)


@pytest.mark.skipif(not HAS_MODELS, reason="needs certify[models]")
@pytest.mark.parametrize("fmt", ("svg", "pdf"))  # png: tests/test_models_corpus.py
def test_cli_model_corpus_writes_readable_figures_in_each_format(tmp_path, fmt):
    from tiny_bert import write_model

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("the cat sat on the mat\na man is eating food.\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["model", str(write_model(tmp_path / "tiny")), "--corpus", str(corpus), "--out", str(out),
                 "--workers", "1", "-q", "--format", fmt, "--dpi", "40"]) == 0
    for stem in corpus_figures.STEMS:
        assert_format(out / f"{stem}.{fmt}", fmt)
    assert not list(out.glob("*.png"))
    summary = json.loads((out / "summary.json").read_text())
    for draw in corpus_figures.FIGURES.values():
        fig = draw(summary)
        assert_readable(fig)
        assert fig._suptitle.get_text().startswith("tiny on 2 of the 2 sentences")
    median_ax, fraction_ax = corpus_figures.heatmap(summary).axes[:2]
    for head in summary["heads"]:  # each cell shows its head's value, at its layer and head
        edges = head["a_D2"]["log10_quantiles"]["0.5"]
        fraction = head["regimes"]["informative"] / head["sentences"]
        for ax, value in ((median_ax, sum(edges) / 2), (fraction_ax, fraction)):
            assert f"{value:.2f}" in [t.get_text() for t in ax.texts if t.get_position() == (head["head"], head["layer"])]
    a_ax, tau_ax = corpus_figures.histograms(summary).axes
    pairs = summary["totals"]["head_sentences"]
    for ax in (a_ax, tau_ax):  # every (sentence, head) pair counted once
        assert sum(ax.patches[0].get_data()[0]) == pairs
    assert sorted(line.get_xdata()[0] for line in a_ax.lines) == pytest.approx(
        [np.log10(54 * np.log(2)), np.log10(1075 * np.log(2))])


# ------------------------------------------------------------------ a sampled campaign


@pytest.mark.parametrize("fmt", style.FORMATS)
def test_cli_sample_draws_its_histograms(tmp_path, capsys, fmt):
    out = tmp_path / "s"
    argv = ["sample", "--n", "3", "--d", "1", "--count", "6", "--seed", "1", "--out", str(out), "--workers", "1",
            "--L-range", "0.1", "2000", "--no-progress"]
    assert main([*argv, "--format", fmt, *small(fmt)]) == 0
    assert_format(out / f"histograms.{fmt}", fmt)
    assert f"histograms.{fmt}" in capsys.readouterr().out
    if fmt == "png":
        summary = json.loads((out / "summary.json").read_text())
        records = campaign.records(out)
        fig = sample_figure.figure(summary, records)
        assert_readable(fig)
        margins_ax, L_ax = fig.axes
        heights = [patch.get_height() for patch in margins_ax.patches]
        assert sum(heights) == sum(r["margin_log10"] is not None for r in records)  # every margin counted once
        assert sum(patch.get_height() for patch in L_ax.patches) == sum(r["L"] is not None for r in records)
        assert np.isclose(min(line.get_xdata()[0] for line in L_ax.lines), np.log10(54 * np.log(2)))
        assert main([*argv, "--json"]) == 0  # resumed: nothing to do; --json output stays pure JSON
        json.loads(capsys.readouterr().out)
        # resumed with another format: the histograms of the new summary replace the earlier ones
        assert main([*argv, "--format", "svg"]) == 0
        assert_format(out / "histograms.svg", "svg")
        assert sorted(p.name for p in out.glob("histograms.*")) == ["histograms.svg"]


def test_a_campaign_whose_margins_pass_every_c_long_draws_its_histograms(tmp_path, capsys):
    """A bound near 10^(-10^174) has relative margins of 10^(10^174): their log10, a float past every C long, made
    the histogram's edges Python integers numpy could not take (exit 4, "internal error" after the campaign was
    decided).  Every margin is counted in its bar, and one such value alone still gets a bar of its own."""
    out = tmp_path / "s"
    argv = ["sample", "--bound", "(D*(exp((sinh(D))**(172.9716313622))**(1/2)))**(-1)", "--n", "3", "--d", "2",
            "--count", "3", "--workers", "1", "--out", str(out), "-q"]
    assert main(argv) == 1
    assert_format(out / "histograms.png", "png")
    records = campaign.records(out)
    assert max(r["margin_log10"] for r in records) > 1e100  # the case drawn is the one described
    margins_ax = sample_figure.figure(json.loads((out / "summary.json").read_text()), records).axes[0]
    assert sum(patch.get_height() for patch in margins_ax.patches) == len(records)
    edges = sample_figure._bins([1e200], 1)
    assert len(edges) == 2 and edges[0] <= 1e200 < edges[1]


def test_importing_certify_and_parsing_a_command_does_not_import_matplotlib():
    import subprocess
    import sys

    code = ("import sys, certify, certify.figures\n"
            "from certify.cli import build_parser\n"
            "build_parser(only='check'); build_parser(only='trajectory')\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_figure_written_twice_gives_the_same_bytes(traced, tmp_path):
    for fmt in ("pdf", "svg"):  # no creation date inside: reproducible files
        first = style.save(trajectory_figure.figure(traced), tmp_path / f"a.{fmt}")
        second = style.save(trajectory_figure.figure(traced), tmp_path / f"b.{fmt}")
        assert first.read_bytes() == second.read_bytes()


def test_a_job_names_every_figure_file_and_the_page_it_may_hold():
    """--restart removes what a job's OUTPUTS name: every format of its figures and its page."""
    from certify.report import page
    from certify.studies.models import corpus_job

    for outputs, stems in ((campaign.OUTPUTS, (sample_figure.STEM,)), (corpus_job.OUTPUTS, corpus_figures.STEMS)):
        assert page.NAME in outputs
        assert {f"{stem}.{fmt}" for stem in stems for fmt in style.FORMATS} <= set(outputs)
