"""The trust boundary: the checker imports only the standard library, python-flint and itself."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import certify.checker

CHECKER_DIR = Path(certify.checker.__file__).parent
ALLOWED_THIRD_PARTY = {"flint"}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path.name}: relative imports hide what is imported")
            names.add(node.module)
    return names


def test_checker_modules_import_only_stdlib_flint_and_the_checker():
    files = sorted(CHECKER_DIR.glob("*.py"))
    assert len(files) >= 3
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            allowed = (top in sys.stdlib_module_names or top in ALLOWED_THIRD_PARTY
                       or module == "certify.checker" or module.startswith("certify.checker."))
            assert allowed, f"{path.name} imports {module}"


def test_the_rule_catches_a_forbidden_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import numpy\nfrom certify import engine\n")
    found = imported_modules(planted)
    assert "numpy" in found and "certify" in found


def test_checker_kinds_point_inside_the_checker():
    assert all(module.startswith("certify.checker.") for module in certify.checker.KINDS.values())


def test_checker_stays_small():
    lines = sum(len(path.read_text().splitlines()) for path in CHECKER_DIR.glob("*.py"))
    assert lines < 1500, lines
