"""Shared test configuration: `--slow` runs the long studies that CI skips."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run the long studies marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="long study: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
