"""One HTML page, `index.html`, for a report folder: a generic writer.

A page is a title, a few lead paragraphs and sections; a section is a title and blocks in order,
each one of
    str          a paragraph
    Table        columns and rows of cells (a cell is a str, a Link, a Code or None); rows may be
                 flagged (an unexpected outcome), which its first cell says in words and its colour shows
    Figure       an image file of the folder, embedded in the page (PNG, SVG, JPEG as data: URIs)
                 or linked when a browser cannot show it inline (PDF)
    Links        a list of links to files of the folder
A Link points to a file or folder of the report folder by its relative path: never to the network.

    from certify.report import page, environment
    report = page.Page("certify run", lead=["100 results, 0 unexpected"], sections=[
        page.Section("claims", [page.Table(["case", "verdict"], [["collapse.global", "holds"]])]),
        page.Section("figures", [page.Figure(Path("dynamics/trajectory.png"), "D_t and the bound")]),
        environment.section(["run"]),
    ])
    page.write(report, folder)          # folder/index.html, written atomically

The page is self-contained and offline by construction: figures are inside it, links are relative,
no script, font or style sheet is fetched, and its Content-Security-Policy (CONTENT_SECURITY_POLICY)
makes a browser refuse any fetch but a data: image, so a stray URL cannot reach the network.
Every string is HTML-escaped: configuration names, bounds and error messages are untrusted text.
It reads without JavaScript (there is none) and prints as it shows.
"""

from __future__ import annotations

import base64
import html
import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Sequence, Union
from urllib.parse import quote

from certify.core import files
from certify.core.report_files import PAGE as NAME

# No default source: only data: images and the page's own <style> are allowed.
CONTENT_SECURITY_POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

# Formats a browser shows in an <img>; others (PDF) are linked.
IMAGE_TYPES = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1b1b1b; max-width: 80rem; margin: 1.5rem auto; padding: 0 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ccc; }
div.table { overflow-x: auto; margin: 0.6rem 0; }  /* a table wider than the page scrolls in its own box */
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid #d4d4d4; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f0f0f0; } caption { text-align: left; font-style: italic; padding: 0.2rem 0; }
tr.flagged td { background: #fde2e2; }
code { font: 13px ui-monospace, monospace; background: #f4f4f4; padding: 0 0.2rem; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; border: 1px solid #e0e0e0; }
figcaption { font-size: 0.9rem; color: #444; }
nav ul { padding: 0; } nav li { display: inline; margin-right: 1rem; white-space: nowrap; }
"""


@dataclass(frozen=True)
class Link:
    """A link to a file or folder of the report folder, by its path relative to the folder."""

    text: str
    path: str | Path


@dataclass(frozen=True)
class Code:
    """Text shown as code (a command to copy)."""

    text: str


Cell = Union[str, Link, Code, None]


@dataclass
class Table:
    """A table block: column titles, rows of cells (str, Link, Code or None), an optional caption, and the
    indices of flagged rows (an outcome that is not the predicted one, marked "unexpected")."""
    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    caption: str = ""
    flagged: Sequence[int] = ()  # indices of rows to mark (e.g. an outcome that is not the predicted one)


@dataclass
class Figure:
    """A figure block: an image file by its path relative to the report folder, embedded in the page (PNG,
    SVG, JPEG) or linked (PDF), with its caption."""
    path: str | Path  # relative to the report folder
    caption: str = ""


@dataclass
class Links:
    """A list of links to files of the report folder."""
    items: Sequence[Link]


Block = Union[str, Table, Figure, Links]


@dataclass
class Section:
    """A titled part of the page: its blocks (paragraph str, Table, Figure, Links) in order."""
    title: str
    blocks: Sequence[Block] = ()


@dataclass
class Page:
    """The whole page: its title, lead paragraphs and sections."""
    title: str
    lead: Sequence[str] = ()
    sections: Sequence[Section] = field(default_factory=list)


# Unicode's bidirectional controls (embeddings, overrides, isolates, marks): one in a name (a file, a folder)
# reorders the rest of its paragraph, "3 of 10" shown as "01 fo 3"; shown escaped (\u202e), as below
BIDI_CONTROLS = {c: f"\\u{c:04x}" for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))}


def _text(value) -> str:
    # a file name of bytes that are not UTF-8 reaches Python as lone surrogates, which UTF-8 cannot write:
    # they are shown escaped (\udcff)
    text = str(value).encode("utf-8", "backslashreplace").decode("utf-8").translate(BIDI_CONTROLS)
    return html.escape(text, quote=True)


def _href(path) -> str:
    """A relative URL for a path inside the report folder (an absolute path or one leaving the
    folder is a bug of the caller: the page must move with its folder)."""
    posix = PurePosixPath(Path(path).as_posix())
    if posix.is_absolute() or ".." in posix.parts:
        raise ValueError(f"a report link must stay inside the report folder: {path}")
    # quote() escapes ':' too, so no path can turn into a URL with a scheme (javascript:, http:); a name's
    # bytes that are not UTF-8 (surrogate escapes) are linked as those bytes, as the file system names them
    return quote(str(posix) + ("/" if str(path).endswith(("/", os.sep)) else ""), errors="surrogateescape")


def _cell(cell: Cell) -> str:
    if cell is None:
        return ""
    if isinstance(cell, Link):
        return f'<a href="{_text(_href(cell.path))}">{_text(cell.text)}</a>'
    if isinstance(cell, Code):
        return f"<code>{_text(cell.text)}</code>"
    return _text(cell)


def _row(row: list, flagged: bool) -> str:
    """A table row; a flagged one says "unexpected:" in its first cell as text (a text browser, a screen
    reader or a copy shows no colour) and is coloured."""
    cells = [_cell(c) for c in row]
    if flagged:
        cells[0] = f"<strong>unexpected:</strong> {cells[0]}"
    mark = ' class="flagged"' if flagged else ""
    return f"<tr{mark}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _table(table: Table) -> list[str]:
    flagged = set(table.flagged)
    out = ['<div class="table"><table>']
    if table.caption:
        out.append(f"<caption>{_text(table.caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{_text(c)}</th>" for c in table.columns) + "</tr></thead><tbody>")
    out.extend(_row(row, k in flagged) for k, row in enumerate(table.rows))
    out.append("</tbody></table></div>")
    return out


def _figure(figure: Figure, folder: Path) -> list[str]:
    path = folder / figure.path
    caption = figure.caption or Path(figure.path).name
    kind = IMAGE_TYPES.get(path.suffix.lower())
    if kind is None:
        return [f'<p>{_text(caption)}: <a href="{_text(_href(figure.path))}">{_text(Path(figure.path).name)}</a></p>']
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return ["<figure>", f'<img src="data:{kind};base64,{data}" alt="{_text(caption)}">',
            f'<figcaption>{_text(caption)} (<a href="{_text(_href(figure.path))}">{_text(Path(figure.path).name)}</a>)'
            "</figcaption>", "</figure>"]


def _block(block: Block, folder: Path) -> list[str]:
    if isinstance(block, str):
        return [f"<p>{_text(block)}</p>"]
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Figure):
        return _figure(block, folder)
    if isinstance(block, Links):
        return ["<ul>"] + [f"<li>{_cell(link)}</li>" for link in block.items] + ["</ul>"]
    raise TypeError(f"not a block of a report page: {type(block).__name__}")


def render(page: Page, folder) -> str:
    """The page's HTML; `folder` is the report folder (figures are read from it, links point into it)."""
    folder = Path(folder)
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_text(CONTENT_SECURITY_POLICY)}">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{_text(page.title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
           f"<h1>{_text(page.title)}</h1>"]
    out += [f"<p>{_text(line)}</p>" for line in page.lead]
    if len(page.sections) > 1:
        out.append("<nav><ul>" + "".join(f'<li><a href="#s{k}">{_text(s.title)}</a></li>'
                                         for k, s in enumerate(page.sections)) + "</ul></nav>")
    for k, section in enumerate(page.sections):
        out.append(f'<section id="s{k}">')
        out.append(f"<h2>{_text(section.title)}</h2>")
        for block in section.blocks:
            out += _block(block, folder)
        out.append("</section>")
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def write(page: Page, folder) -> Path:
    """Write `page` as folder/index.html (write, then rename: a reader sees the old page or the new one)."""
    folder = Path(folder)
    return files.replace(folder / NAME, render(page, folder))
