"""The example configurations answer as examples/README.md says (exit codes through the CLI)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from certify.cli import main

ROOT = Path(__file__).resolve().parents[1]
TABLE = (ROOT / "examples" / "README.md").read_text()
ROWS = re.findall(r"^\| `certify (.+?)` \| (\d) \|", TABLE, re.M)


def test_the_table_lists_every_example():
    listed = {word for command, _ in ROWS for word in command.split() if word.startswith("examples/")}
    assert listed == {f"examples/{p.name}" for p in (ROOT / "examples").glob("*.json")}


@pytest.mark.parametrize("command, code", ROWS)
def test_example_commands(command, code, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = [a.strip('"') for a in re.findall(r'"[^"]*"|\S+', command)]
    args = [str(tmp_path / a) if a in ("cert.json", "traj/") else a for a in args]
    assert main(args) == int(code)
