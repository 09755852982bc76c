"""Issue 17: interrupting a search on Ray (Ctrl-C or SIGTERM) while tasks are in flight.

It once tripped Ray's C++ check about 1 run in 4 to 7 (``Check failed: it !=
submissible_tasks_.end() Tried to complete task that was not pending``: ``ray.cancel`` of a
task racing its reply in the driver's core worker), which aborted the driver with exit 1 and
sometimes left trials RUNNING. The pool no longer cancels tasks: it disconnects, and stops
its cluster. One study is interrupted three times (each run after the first is a resume) and
then resumed to the end; each interrupt is checked on its own.
"""

from __future__ import annotations

import signal
import time

import pytest

from magnet.errors import MagnetError
from magnet.search import load_study, search
from tests.conftest import DATA
from tests.services import DriverCluster, magnet_process

pytestmark = [pytest.mark.ray, pytest.mark.subprocess]

SPACE = DATA / "search" / "small_space.yaml"
DESIGNS = ("ok", "infeasible")
INTERRUPTED = "interrupted: finished trials are kept; run the same command to resume"


def _designs(storage: str) -> set[int]:
    try:
        return {t.number for t in load_study("small", storage).trials() if t.status in DESIGNS}
    except MagnetError:  # no study yet
        return set()


def _interrupted_run(storage: str, signum: int) -> tuple[set[int], str]:
    """Start a 2-worker search, wait for a new design (so that the next two are in flight),
    send ``signum``; checks the run; returns the designs kept and stderr."""
    earlier = _designs(storage)
    proc = magnet_process(
        "search",
        str(SPACE),
        "--storage",
        storage,
        "--workers",
        "2",
        "--trials",
        "200",
        "--workload",
        "resnet18",  # ~2 s a design: tasks are in flight when the signal comes
        "--no-report",
    )
    cluster = DriverCluster(proc.pid)  # its Ray processes, not a neighbour's
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if cluster.watch() and len(_designs(storage)) > len(earlier):
                break
            time.sleep(0.2)
        assert proc.poll() is None and cluster.head, "the search ended before the interrupt"
    finally:
        cluster.watch()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    kept = _designs(storage)
    # the interrupt is clean: exit 130, the resume hint, no Ray check failure, no traceback
    assert proc.returncode == 130, err
    assert INTERRUPTED in err, err
    assert "Check failed" not in err, err
    assert "Traceback" not in err, err
    # no trial is left RUNNING: those in flight were failed and queued again
    study = load_study("small", storage)
    assert not [t for t in study.trials() if t.state == "RUNNING"]
    assert [t for t in study.trials() if t.reason == "interrupted"]
    # every finished design of this run and the earlier ones is kept
    assert earlier < kept
    # the run's Ray cluster is gone when the driver has exited (no wait needed)
    assert not cluster.left(), f"left behind: {cluster.left()}"
    return kept, err


def test_interrupted_ray_runs_stop_cleanly_and_resume(tmp_path) -> None:
    storage = str(tmp_path / "studies.journal")
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        kept, _ = _interrupted_run(storage, signum)
    # a resumed run finishes: the kept designs and two more, none left RUNNING
    study = search(SPACE, "resnet18", n_trials=len(kept) + 2, storage=storage)
    after = study.trials()
    assert kept <= {t.number for t in after if t.status in DESIGNS}
    assert not [t for t in after if t.state == "RUNNING"]
    assert study.counts()["designs"] == len(kept) + 2
