"""Shared test helpers: where the reference data lives, and the browser the dashboard and
report tests drive (Debian's Chromium through Playwright; its own download cannot work
here)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
#: Timeloop and SCALE-Sim reference runs, shipped with the tests (data/reference/README.md)
REFERENCE = DATA / "reference"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def storage(tmp_path_factory) -> str:
    """The studies the dashboard and report tests share (``small``, and one named with
    HTML: ``shared_storage`` in tests/helpers.py), made once per test session."""
    from tests.helpers import shared_storage

    return shared_storage(tmp_path_factory)


@pytest.fixture(scope="module")
def small(storage):
    """Study ``small`` of the shared studies."""
    from magnet.search import load_study

    return load_study("small", storage)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[str]:
    """The address of a Ray head (2 CPUs, 127.0.0.1) that the tests which search on Ray in
    this process share, one per test process (each pytest-xdist worker has its own): a
    cluster costs seconds to start and stop. The tests of a search starting and stopping a
    cluster of its own run ``magnet search`` without an address."""
    from tests.services import ray_head

    with ray_head(cpus=2) as address:
        yield address


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (one per test process: contexts keep the tests apart); missing,
    it fails the tests on CI."""
    if not Path(CHROMIUM).exists():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


#: The test files that take most of the suite's time (browsers, Ray clusters, searches, a
#: subprocess per case): ``python -m pytest -q -n 2 -m "not slow"`` leaves them out, the edit
#: loop's tier (README: under a minute here); CI runs every test.
SLOW_FILES = frozenset(
    {
        "test_trial_runtime.py",
        "test_dashboard_bad_requests.py",
        "test_search.py",
        "test_dashboard_live.py",
        "test_dashboard_drawn.py",
        "test_ray_interrupt.py",
        "test_dashboard.py",
        "test_storage_integrity.py",
        "test_search_trust.py",
        "test_trial_inputs.py",
        "test_experiments.py",
        "test_design_page.py",
        "test_packaging.py",
        "test_properties.py",
        "test_bad_spaces.py",
        "test_explore_figures.py",
        "test_plugin_values.py",
    }
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
