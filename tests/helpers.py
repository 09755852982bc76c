"""Helpers several test files share that are no test module (pytest collects nothing here):
the studies the dashboard and report tests read."""

from __future__ import annotations

import pytest
import yaml

from magnet.search import search
from tests.conftest import DATA

SPACE = DATA / "search" / "small_space.yaml"
#: a study, and a layer of its network, named with HTML: pages must show them as text
XSS = "<script>alert(1)</script>"
XSS_LAYER = "<img src=x onerror=alert(2)>"


def shared_storage(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A SQLite storage with ``small`` (16 designs) and a study named with HTML whose network
    has a layer named with HTML too; made once per test session (the ``storage`` fixture of
    conftest.py)."""
    root = tmp_path_factory.getbasetemp() / "dashboard-studies"
    url = f"sqlite:///{root / 'studies.db'}"
    if (root / "done").exists():
        return url
    root.mkdir(exist_ok=True)
    search(SPACE, n_trials=16, storage=url, study="small")
    net = yaml.safe_load((DATA / "search" / "small_net.yaml").read_text())
    net["layers"][0]["name"] = XSS_LAYER
    (root / "net.yaml").write_text(yaml.safe_dump(net))
    space = yaml.safe_load(SPACE.read_text())
    space["workloads"] = [str(root / "net.yaml")]
    (root / "space.yaml").write_text(yaml.safe_dump(space))
    search(root / "space.yaml", n_trials=3, storage=url, study=XSS)
    (root / "done").write_text("")
    return url
