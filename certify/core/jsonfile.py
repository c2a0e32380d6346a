"""Every JSON file certify writes (certificates, reports, tables): one format, one place."""

from __future__ import annotations

import json
from pathlib import Path


def dumps(data) -> str:
    return json.dumps(data, indent=1) + "\n"


def write(data, path) -> Path:
    """Write `data` as indented JSON, creating the folder; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(data), encoding="utf-8")
    return path
