"""A library call leaves its caller's process as it was: ``magnet.search`` runs from any
thread and puts back SIGTERM's handler and Optuna's log level; Ray's settings reach the
environment only while Ray reads them; the allocator is tuned by the command line and by
search workers, not by a library call."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import optuna
import pytest
import yaml
from click.testing import CliRunner

import magnet.cli
import magnet.cli.shared
from magnet.search import search, space_from_data, workers
from magnet.search.job import DesignJob, DesignResult
from tests.conftest import DATA

SPACE = DATA / "search" / "small_space.yaml"


def _space() -> dict[str, Any]:
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    return {**data, "sampler": "random"}


def _process_state() -> tuple[Any, int, dict[str, str]]:
    return signal.getsignal(signal.SIGTERM), optuna.logging.get_verbosity(), dict(os.environ)


def test_a_search_runs_from_a_thread_and_changes_nothing(tmp_path: Path) -> None:
    before = _process_state()
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["study"] = search(_space(), n_trials=3, storage=str(tmp_path / "t.journal"))
        except BaseException as exc:  # the test reports it
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=600)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["study"].counts()["designs"] == 3
    assert _process_state() == before


def test_a_search_from_the_main_thread_puts_everything_back(tmp_path: Path) -> None:
    optuna.logging.set_verbosity(optuna.logging.DEBUG)  # a caller's own choice
    try:
        before = _process_state()
        search(_space(), n_trials=2, storage=str(tmp_path / "m.journal"))
        assert _process_state() == before
    finally:
        optuna.logging.set_verbosity(optuna.logging.INFO)


def test_ray_settings_are_in_the_environment_only_while_ray_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # the caller's
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED", raising=False)
    with workers.ray_environment():
        assert {k: os.environ[k] for k in workers.RAY_ENV} == workers.RAY_ENV
    assert os.environ["RAY_AUTH_MODE"] == "token"
    assert "RAY_USAGE_STATS_ENABLED" not in os.environ


def test_the_allocator_is_tuned_by_the_command_line_and_by_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    monkeypatch.setattr(magnet.cli.shared, "tune_allocator", lambda: calls.append("cli") or True)
    monkeypatch.setattr(workers, "tune_allocator", lambda: calls.append("worker") or True)
    assert CliRunner().invoke(magnet.cli.main, ["schema"]).exit_code == 0
    assert calls == ["cli"]
    space = space_from_data(_space())
    params = {"vector_width": 4, "vector_units": 4, "weight_collector": 1, "accum_collector": 4}
    job = DesignJob.of(space, params, "os-local-ws", number=7)
    ((number, result),) = list(workers.evaluate_batch([job]))
    assert number == 7 and isinstance(result, DesignResult) and result.status == "ok"
    assert calls == ["cli", "worker"]
    # in the caller's process (--workers 1) a search leaves the allocator alone
    workers.InProcess().submit(DesignJob.of(space, params, "os-local-ws"))
    assert calls == ["cli", "worker"]
