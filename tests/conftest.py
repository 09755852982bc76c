"""Shared test fixtures: where the reference data lives, the services tests start (a Ray
head, a PostgreSQL server, the browser the dashboard and report tests drive: Debian's
Chromium through Playwright, its own download cannot work here), and the markers of what a
test starts."""

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


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """The URL of a PostgreSQL server of this test module's own (127.0.0.1, a free port);
    missing, it fails the tests on CI."""
    from tests.services import postgres, postgres_bin

    if postgres_bin() is None and not os.environ.get("CI"):  # .ci/run installs it
        pytest.skip("PostgreSQL's server is missing: apt-get install -y postgresql")
    with postgres() as url:
        yield url


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


#: What a test starts, one marker each (pyproject.toml says what each means). A fixture of this
#: file gives its marker to every test that asks for it, directly or through another fixture
#: (``FIXTURE_STARTS``); a test that starts one itself carries the marker in its file.
STARTS = ("ray", "chromium", "postgres", "subprocess")
FIXTURE_STARTS = {"browser": "chromium", "ray_cluster": "ray", "postgres_url": "postgres"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts something is also ``e2e`` (as are a few that take seconds of
    CPU alone, marked in their files): ``python -m pytest -q -n 2 -m "not e2e"`` leaves them
    out, the edit loop's tier (README: under a minute here); CI runs every test."""
    for item in items:
        for fixture, marker in FIXTURE_STARTS.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if any(item.get_closest_marker(name) for name in STARTS):
            item.add_marker(pytest.mark.e2e)
