"""What a report folder holds, for its page: certificates, campaign folders and figures."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from certify.core import jsonfile
from certify.core.files import hidden
from certify.engine import certificate
from certify.errors import BadInput
from certify.report import page
from certify.search import campaign

FIGURE_SUFFIXES = (*page.IMAGE_TYPES, ".pdf")


# A page's commands name files by their paths in its folder: it shows no path of the machine, and its
# commands hold wherever the folder is moved
VERIFY_HERE = "The verify commands run in this page's folder."


def verify_command(relative, options: str = "") -> page.Code:
    """`certify verify PATH` with PATH relative to the report folder (VERIFY_HERE); "" is the folder itself; options:
    what follows PATH (a campaign's --limit options, campaign.recheck_options)."""
    return page.Code(f"certify verify {shlex.quote(str(Path(relative)))}{options}")


def _json(path: Path):
    """The JSON in `path`, or None when it is not readable JSON (a report lists, it does not judge)."""
    try:
        return jsonfile.read(path, str(path))
    except (BadInput, OSError, UnicodeDecodeError, ValueError):
        return None


def is_campaign(folder: Path) -> bool:
    """Whether `folder` is a sampling campaign's folder: its manifest.json has the campaign format."""
    manifest = folder / "manifest.json"
    data = _json(manifest) if manifest.is_file() else None
    return isinstance(data, dict) and data.get("format") == campaign.FORMAT


def describe_certificate(data) -> str | None:
    """What a certificate is about ("inequality collapse.global holds"), None when `data` is not one."""
    if not (isinstance(data, dict) and data.get("format") == certificate.FORMAT):
        return None
    about = data.get("claim") or data.get("bound")
    parts = [data.get("kind"), about if isinstance(about, str) else None, data.get("verdict")]
    return " ".join(str(p) for p in parts if p is not None)


def scan(folder, under: list[str]) -> tuple[list[tuple[Path, str]], list[Path], list[Path]]:
    """(certificates with what each is about, campaign folders, figures) in the sub-folders `under`
    of `folder`, as paths relative to it in sorted order.  A campaign folder's own certificates are
    not listed one by one: `certify verify` on the folder checks them all.  Hidden files and folders
    are passed over, as on a job's page (job_figures): macOS's ._NAME beside a figure is no image."""
    folder = Path(folder)
    certificates, campaigns, figures = [], [], []
    for sub in sorted(under):
        for root, dirs, names in os.walk(folder / sub):
            here = Path(root)
            dirs[:] = sorted(name for name in dirs if not hidden(name))
            if is_campaign(here):
                campaigns.append(here.relative_to(folder))
                dirs.clear()
                continue
            for name in sorted(name for name in names if not hidden(name)):
                path = here / name
                if path.suffix.lower() in FIGURE_SUFFIXES:
                    figures.append(path.relative_to(folder))
                elif path.suffix == ".json" and (about := describe_certificate(_json(path))) is not None:
                    certificates.append((path.relative_to(folder), about))
    return certificates, campaigns, figures


def job_figures(folder: Path) -> list[Path]:
    """The figures at the top of a job's folder (a campaign's, a corpus run's), by their names there: not a hidden
    one, which the folder's checks pass over (certify.jobs.store) and the page would show as the job's."""
    return sorted(Path(path.name) for path in folder.iterdir()
                  if path.suffix.lower() in FIGURE_SUFFIXES and not hidden(path.name))


def figure_sections(folder, figures: list[Path]) -> list[page.Section]:
    """One page section per sub-folder holding figures, each figure embedded (PDF linked)."""
    by_folder: dict[Path, list[Path]] = {}
    for path in figures:
        by_folder.setdefault(path.parent, []).append(path)
    return [page.Section(f"figures: {where}" if str(where) != "." else "figures",
                         [page.Figure(path, path.name) for path in paths])
            for where, paths in by_folder.items()]
