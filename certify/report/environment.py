"""What a report was made with: versions, platform, date and the command line, as a page section."""

from __future__ import annotations

import platform
import shlex
from datetime import datetime, timezone
from importlib import metadata

import certify
from certify.report import page

# Distributions whose versions a result depends on (arb's rounding is python-flint's).
PACKAGES = ("numpy", "python-flint", "scipy", "sympy", "matplotlib")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe(argv: list[str] | None) -> dict[str, str]:
    """certify's version, Python's, the packages', the platform, the date (UTC) and the command line
    (`argv`: the arguments after `certify`; None when not run from the command line)."""
    facts = {"certify": certify.__version__, "python": platform.python_version()}
    facts.update({name: _version(name) for name in PACKAGES})
    facts["platform"] = platform.platform()
    facts["date"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    facts["command line"] = "(not run from the command line)" if argv is None else shlex.join(["certify", *argv])
    return facts


def section(argv: list[str] | None) -> page.Section:
    """The page section of describe(argv)."""
    return page.Section("environment", [page.Table(["what", "version or value"],
                                                   [[name, page.Code(value)] for name, value in describe(argv).items()])])
