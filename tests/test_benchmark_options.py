"""Every benchmark answers --help with its usage and options, as the commands do, before any work."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import benchmarks

NAMES = sorted(module.name for module in pkgutil.iter_modules(benchmarks.__path__))


def test_every_benchmark_is_listed():
    assert {"throughput", "tier3", "trajectory", "depth"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_a_benchmark_answers_help_before_any_work(name, capsys):
    """`python -m benchmarks.trajectory --help` ended in int('--help')'s ValueError, `benchmarks.depth --help` ran
    the benchmark: each now prints its usage, under its own name, and exits 0."""
    module = importlib.import_module(f"benchmarks.{name}")
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m benchmarks.{name}"), out[:200]
