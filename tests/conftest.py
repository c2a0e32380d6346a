"""Shared test configuration: `--slow` runs the long studies that CI skips; under CI, hypothesis
runs derandomized (the same examples every run) and without per-example deadlines (a loaded
2-core machine must not turn a slow example into a failure); mpmath's precision is restored after
every test."""

import os

import pytest
from hypothesis import settings
from mpmath import mp

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run the long studies marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="long study: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _restore_mpmath_precision():
    """A test that raises mp.dps for its oracle leaves the default to the tests after it, in its process."""
    saved = mp.dps
    yield
    mp.dps = saved
