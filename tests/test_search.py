"""The design search: spaces, fronts, infeasibility, resume, Ray (local and by address),
PostgreSQL, and the commands around it."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.errors import MagnetError
from magnet.model.records import CATEGORIES
from magnet.search import driver, load_space, load_study, search, workers
from magnet.search.job import DesignJob, DesignResult
from magnet.search.pareto import nondominated
from tests.conftest import DATA, REPO
from tests.services import (
    DriverCluster,
    magnet_process,
    ray_head,
)

SPACE = DATA / "search" / "small_space.yaml"


@pytest.fixture
def storage(tmp_path: Path) -> str:
    return str(tmp_path / "studies.journal")


def space_with(tmp_path: Path, **changes) -> Path:
    data = yaml.safe_load(SPACE.read_text())
    data.update(changes)
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def assert_mutually_non_dominated(study) -> None:
    front = study.pareto_front()
    assert front
    points = study.points(front)
    assert nondominated(points).all()
    # and nothing feasible dominates a front member
    others = study.points(study.feasible())
    for p in points:
        assert not ((others <= p).all(axis=1) & (others < p).any(axis=1)).any()


# ---- spaces -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"params": {"vector_widht": {"choices": [4]}}},
            "params.vector_widht: unknown parameter of the simba template; allowed: clock_ghz",
        ),
        ({"params": {"vector_units": {"int": [8, 4]}}}, "params.vector_units: the range is empty"),
        (
            {"params": {"vector_units": {"pow2": [5, 7]}}},
            "5 is not a power of two (the nearest are 4 and 8)",
        ),
        (
            {"objectives": ["energy", "area_mm2"]},
            "objectives.0: unknown metric 'energy'; allowed: energy_pj",
        ),
        (
            {"limits": [{"metric": "watts", "max": 2}]},
            "limits.0: a limit on unknown metric 'watts'",
        ),
        ({"dataflow": {"choices": ["rs"]}}, "dataflow: unknown dataflow 'rs' of the simba"),
        ({"constraints": ["weight_buffer >= banks"]}, "unknown name(s) banks"),
        ({"workloads": ["resnet5"]}, "workloads.0"),
        ({"params": {"vector_width": {"choices": [4], "int": [1, 2]}}}, "give exactly one of"),
    ],
)
def test_bad_spaces_fail_fast_naming_the_field(tmp_path, change, message) -> None:
    path = space_with(tmp_path, **change)
    with pytest.raises(MagnetError, match=None) as info:
        load_space(path)
    assert message in str(info.value) and str(path) in str(info.value)
    out = CliRunner().invoke(main, ["search", str(path), "--storage", str(tmp_path / "s.j")])
    assert out.exit_code == 2 and message in out.output and "Traceback" not in out.output


def test_the_shipped_spaces_load() -> None:
    names = sorted(p.stem for p in (REPO / "search_spaces").glob("*.yaml"))
    assert {"quickstart", "magnet", "simba", "eyeriss", "systolic"} <= set(names)
    for name in names:
        space = load_space(REPO / "search_spaces" / f"{name}.yaml")
        assert space.objectives


# ---- a small search ----------------------------------------------------------------------------
def test_a_small_search_ends_with_a_mutually_non_dominated_front(storage) -> None:
    study = search(SPACE, n_trials=10, storage=storage)
    assert study.counts()["designs"] == 10
    assert_mutually_non_dominated(study)
    # every trial stores its full record: the dashboard needs no re-evaluation
    t = study.pareto_front()[0]
    record = mg.NetworkRecord(**t.stored_records()[0])  # stored at the current version
    assert t.records == [record]
    assert record.energy_pj == pytest.approx(t.values["energy_pj"])
    assert set(record.energy_pj_by_category) == set(CATEGORIES)
    assert record.mappings  # a mapping per distinct layer shape
    # the same objects through `magnet pareto --json`
    out = CliRunner().invoke(main, ["pareto", "--study", "small", "--storage", storage, "--json"])
    front = json.loads(out.output)
    assert {p["number"] for p in front} == {t.number for t in study.pareto_front()}
    assert set(front[0]["values"]) == {"energy_pj", "latency_cycles", "area_mm2"}


def test_same_seed_same_space_one_worker_gives_the_same_trials(tmp_path) -> None:
    a = search(SPACE, n_trials=6, storage=str(tmp_path / "a.journal"), seed=3)
    b = search(SPACE, n_trials=6, storage=str(tmp_path / "b.journal"), seed=3)
    assert [t.params for t in a.trials()] == [t.params for t in b.trials()]
    assert [t.values for t in a.trials()] == [t.values for t in b.trials()]


def test_infeasible_designs_are_recorded_not_fatal(tmp_path, storage) -> None:
    # accum_collector 0 cannot run ws-local-os; the derived constraint refuses some designs
    space = space_with(
        tmp_path,
        dataflow="ws-local-os",
        sampler="random",
        constraints=["vector_width * vector_units >= 32"],
    )
    study = search(space, n_trials=12, storage=storage, seed=1)
    infeasible = study.trials("infeasible")
    reasons = " | ".join(t.reason for t in infeasible)
    assert infeasible, "the space has infeasible designs"
    assert "accum_collector: 0" in reasons or "constraint broken" in reasons
    assert study.counts()["designs"] == 12  # the search went on
    for t in infeasible:
        assert not t.feasible
    assert all(t.params["accum_collector"] > 0 for t in study.trials("ok"))


def test_a_limit_marks_designs_infeasible_with_their_metrics(tmp_path, storage) -> None:
    # the space's designs are 0.334-0.403 mm^2 (16 nm, with a RISC-V controller each)
    space = space_with(tmp_path, limits=[{"metric": "area_mm2", "max": 0.36}])
    study = search(space, n_trials=6, storage=storage)
    over = [t for t in study.trials("infeasible") if "outside the limit" in (t.reason or "")]
    assert over and all(t.metrics["area_mm2"] > 0.36 for t in over)
    assert all(t.metrics["area_mm2"] <= 0.36 for t in study.pareto_front())


def test_resume_counts_complete_trials_and_refuses_another_space(tmp_path, storage) -> None:
    search(SPACE, n_trials=4, storage=storage)
    study = search(SPACE, n_trials=7, storage=storage)
    assert study.counts()["designs"] == 7
    changed = space_with(tmp_path, objectives=["energy_pj", "area_mm2"])
    with pytest.raises(MagnetError, match=r"another configuration \(space.objectives"):
        search(changed, n_trials=8, storage=storage, study="small")


def test_export_writes_every_trial(tmp_path, storage) -> None:
    search(SPACE, n_trials=5, storage=storage)
    out = CliRunner().invoke(
        main, ["export", "--study", "small", "--storage", storage, "-o", str(tmp_path / "t.json")]
    )
    assert out.exit_code == 0, out.output
    rows = json.loads((tmp_path / "t.json").read_text())
    assert len(rows) == 5
    assert {"number", "state", "params", "values", "records"} <= set(rows[0])
    out = CliRunner().invoke(
        main, ["export", "--study", "small", "--storage", storage, "-o", str(tmp_path / "t.csv")]
    )
    assert out.exit_code == 0
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert len(lines) == 6 and lines[0].startswith("number,state,status")
    # the same rows from Python, a value per objective and metric
    study = load_study("small", storage)
    rows = study.rows()
    assert len(rows) == 5 and lines[0].split(",") == list(rows[0])
    ok = [r for r in rows if r["status"] == "ok"]
    assert ok and all(r["value:energy_pj"] == r["energy_pj"] > 0 for r in ok)


def test_unknown_study_and_storage_are_clear_errors(tmp_path, storage) -> None:
    search(SPACE, n_trials=2, storage=storage)
    out = CliRunner().invoke(main, ["pareto", "--study", "nope", "--storage", storage])
    assert out.exit_code == 2 and "no study 'nope'; studies here: small" in out.output
    out = CliRunner().invoke(
        main, ["pareto", "--study", "x", "--storage", str(tmp_path / "missing.journal")]
    )
    assert out.exit_code == 2 and "no such study storage" in out.output


def test_an_integer_range_with_sizes_and_a_step_is_searched(tmp_path, storage) -> None:
    # 8KiB..32KiB by 8KiB: 8192, 16384, 24576, 32768 bytes (the step is a size like the
    # bounds; it used to pass the loader and then stop the search)
    params = yaml.safe_load(SPACE.read_text())["params"]
    params["weight_buffer"] = {"int": ["8KiB", "32KiB"], "step": "8KiB"}
    space = space_with(tmp_path, params=params, sampler="random")
    study = search(space, n_trials=6, storage=storage, seed=2)
    assert study.counts()["designs"] == 6
    assert {t.params["weight_buffer"] for t in study.trials()} <= {8192, 16384, 24576, 32768}


def test_studies_lists_magnet_studies_and_skips_others(storage) -> None:
    import optuna

    from magnet.search.storage import open_storage

    search(SPACE, n_trials=2, storage=storage)
    optuna.create_study(study_name="plain", storage=open_storage(storage, create=True))
    out = CliRunner().invoke(main, ["studies", "--storage", storage, "--json"])
    assert out.exit_code == 0, out.output
    assert [r["name"] for r in json.loads(out.output)] == ["small"]
    out = CliRunner().invoke(main, ["pareto", "--study", "plain", "--storage", storage])
    assert out.exit_code == 2 and "was not made by magnet" in out.output


# ---- crashes, Ray, PostgreSQL ----------------------------------------------------------------
def _search_process(storage: str, *extra: str) -> subprocess.Popen:
    return magnet_process("search", str(SPACE), "--storage", storage, "--no-report", *extra)


def _wait_for_trials(
    storage: str, count: int, seconds: float, until: Callable[[], bool] = lambda: True
) -> None:
    """Wait for ``count`` designs in the study (and for ``until()``, asked at each look)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if until() and load_study("small", storage).counts()["designs"] >= count:
                return
        except MagnetError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} trials after {seconds} s")


@pytest.mark.ray
@pytest.mark.subprocess
def test_a_sigkilled_driver_on_ray_resumes_and_leaves_no_ray_process(tmp_path, storage) -> None:
    proc = _search_process(storage, "--workers", "2", "--trials", "40")
    cluster = DriverCluster(proc.pid)  # its Ray processes, not a neighbour's
    try:
        _wait_for_trials(storage, 3, 240, until=cluster.watch)
    finally:
        cluster.watch()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    designs = ("ok", "infeasible")
    kept = {t.number for t in load_study("small", storage).trials() if t.status in designs}
    # the cluster the driver started dies with it (its head gets SIGTERM from the kernel)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and cluster.left():
        time.sleep(0.5)
    assert not cluster.left(), f"left behind: {cluster.left()}"
    study = search(SPACE, n_trials=len(kept) + 2, storage=storage)
    after = study.trials()
    assert kept <= {t.number for t in after if t.status in designs}  # nothing lost
    assert not [t for t in after if t.state == "RUNNING"]  # no orphan left running
    assert study.counts()["designs"] == len(kept) + 2


@pytest.mark.subprocess
def test_sigint_stops_cleanly_and_resumes(tmp_path, storage) -> None:
    # ResNet-18 (~0.5 s a design) so that the search is still running when interrupted
    proc = _search_process(storage, "--trials", "60", "--workload", "resnet18")
    try:
        _wait_for_trials(storage, 2, 120)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    study = load_study("small", storage)
    assert not [t for t in study.trials() if t.state == "RUNNING"]


def test_an_interrupt_between_ask_and_suggest_leaves_no_running_trial(monkeypatch, storage) -> None:
    # Ctrl-C can land after the sampler made a trial and before its parameters exist: the
    # trial is failed with the others (and has no design to queue again)
    real, calls = driver.suggest, []

    def interrupted_on_the_third(trial, space):
        calls.append(trial.number)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(trial, space)

    monkeypatch.setattr(driver, "suggest", interrupted_on_the_third)
    with pytest.raises(KeyboardInterrupt):
        search(SPACE, n_trials=6, storage=storage)
    trials = load_study("small", storage).trials()
    assert [t.state for t in trials] == ["COMPLETE", "COMPLETE", "FAIL"]
    assert trials[2].reason == "interrupted"


def test_an_interrupt_just_after_a_tell_keeps_that_trial(monkeypatch, storage) -> None:
    # Ctrl-C while the second trial's progress line is printed: it is told already, it stays
    real, lines = driver.Progress.trial, []

    def interrupted_on_the_second(self, number, status, text):
        lines.append(number)
        real(self, number, status, text)
        if len(lines) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver.Progress, "trial", interrupted_on_the_second)
    with pytest.raises(KeyboardInterrupt):
        search(SPACE, n_trials=6, storage=storage)
    assert [t.state for t in load_study("small", storage).trials()] == ["COMPLETE", "COMPLETE"]


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT with Python's default handler, as in a terminal: pytest started as a background
    job (``cmd &`` in a script) inherits SIGINT ignored, and the driver leaves an ignored
    SIGINT ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_signal_while_a_trial_is_written_stops_the_search_after_the_write(
    monkeypatch, storage, ctrl_c
) -> None:
    # a signal raised as KeyboardInterrupt inside Optuna's journal storage left a trial
    # RUNNING that the storage's replay never applied, or became an OSError of its file
    # lock (a traceback, exit 1): the driver holds a signal that comes while it writes the
    # study, and stops between trials
    real = driver._tell

    def signalled_while_the_third_is_told(study, trial, *args):
        if trial.number == 2:
            signal.raise_signal(signal.SIGINT)
        return real(study, trial, *args)

    monkeypatch.setattr(driver, "_tell", signalled_while_the_third_is_told)
    lines: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        search(SPACE, n_trials=6, storage=storage, log=lines.append)
    assert lines[-1] == driver.INTERRUPTED
    trials = load_study("small", storage).trials()
    assert [t.number for t in trials] == [0, 1, 2]  # stopped before asking for a fourth
    assert [t.state for t in trials] == ["COMPLETE"] * 3  # the third told in full


def test_a_signal_inside_a_finalizer_is_raised_after_it_and_stops_the_search(
    monkeypatch, storage
) -> None:
    # Formerly a bug (a fresh CI run's Ctrl-C test printed a traceback): a signal handled
    # while a __del__ runs (simpleeval's SimpleEval has one, run by the garbage collector
    # wherever it runs, the pool's wait included) raised KeyboardInterrupt inside it, which
    # Python prints ("Exception ignored in ... Traceback") and drops. The driver now only
    # notes it there and raises it at its next check: nothing printed, the search stopped
    # all the same. SIGTERM, which the driver handles like Ctrl-C.
    real = workers.evaluate_design

    class SignalOnDelete:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGTERM)

    def evaluate_dropping_one(job):
        if job.number == 2:
            SignalOnDelete()  # made and dropped: its __del__ runs, during the evaluation
        return real(job)

    monkeypatch.setattr(workers, "evaluate_design", evaluate_dropping_one)
    dropped: list[BaseException | None] = []
    monkeypatch.setattr("sys.unraisablehook", lambda u: dropped.append(u.exc_value))
    with pytest.raises(KeyboardInterrupt):
        search(SPACE, n_trials=6, storage=storage)
    assert dropped == []  # nothing raised inside the finalizer, so nothing printed
    trials = load_study("small", storage).trials()
    assert [t.number for t in trials] == [0, 1, 2]
    assert [t.state for t in trials] == ["COMPLETE"] * 3


def test_search_on_an_existing_ray_cluster_by_address(storage, ray_cluster) -> None:
    out = CliRunner().invoke(
        main,
        [
            "search",
            str(SPACE),
            "--storage",
            storage,
            "--trials",
            "6",
            "--workers",
            "2",
            "--ray-address",
            ray_cluster,
            "--no-report",
        ],
    )
    assert out.exit_code == 0, out.output
    study = load_study("small", storage)
    assert study.counts()["designs"] == 6
    assert_mutually_non_dominated(study)
    # the search ends with the front on stdout: a header, then one row per design
    table = out.stdout.split("Pareto front of study 'small'")[1].strip().splitlines()
    assert table[1].split()[:4] == ["#", "energy_pj", "latency_cycles", "area_mm2"]
    assert [int(row.split()[0]) for row in table[2:]] == [t.number for t in study.pareto_front()]


@pytest.mark.ray
def test_a_study_runs_on_a_ray_cluster_of_two_nodes(tmp_path) -> None:
    # two `ray start` on this machine (the head at 127.0.0.2, a node at 127.0.0.3), one CPU
    # each: the search's designs are evaluated on both (a Ray worker names its node)
    storage = str(tmp_path / "two.journal")
    args = ["search", str(SPACE), "--storage", storage, "--trials", "8", "--workers", "2"]
    with ray_head(cpus=1, nodes=2) as address:
        out = CliRunner().invoke(main, [*args, "--ray-address", address, "--no-report"])
    assert out.exit_code == 0, out.output
    study = load_study("small", storage)
    assert study.counts()["designs"] == 8 and not study.trials("failed")
    nodes = {t.worker.rsplit(":", 1)[0] for t in study.trials() if t.worker != "driver"}
    assert nodes == {"127.0.0.2", "127.0.0.3"}
    assert_mutually_non_dominated(study)


def test_the_front_is_ordered_and_lists_a_design_once(tmp_path) -> None:
    # the random sampler on a 32-design space proposes designs again
    space = space_with(tmp_path, sampler="random")
    study = search(space, n_trials=24, storage=str(tmp_path / "s.journal"), seed=1)
    proposed = [json.dumps(t.params, sort_keys=True) for t in study.trials()]
    assert len(set(proposed)) < len(proposed)  # some design was proposed again
    front = study.pareto_front()
    keys = [json.dumps(t.params, sort_keys=True) for t in front]
    assert len(keys) == len(set(keys))
    energies = [t.values["energy_pj"] for t in front]
    assert energies == sorted(energies)
    # every feasible design is on the front or dominated by, or equal to, a front design
    points, ours = study.points(front), study.points(study.feasible())
    for p in ours:
        assert ((points <= p).all(axis=1)).any()


def test_a_dead_worker_fails_its_trial_and_the_search_goes_on(
    tmp_path, storage, ray_cluster
) -> None:
    # the plug-in's process dies on 8-lane designs; Ray retries once, then the trial fails
    plugin = DATA / "search" / "crash_on_wide.py"
    space = space_with(tmp_path, cost_model=f"{plugin}:CrashOnWide", sampler="random")
    study = search(space, n_trials=6, storage=storage, workers=2, seed=4, ray_address=ray_cluster)
    failed = study.trials("failed")
    assert failed and all(t.params["vector_width"] == 8 for t in failed)
    # one line that says what happened, not Ray's pointer to logs the search removes
    assert all(t.reason == f"WorkerDied: {workers.WORKER_DIED}" for t in failed)
    assert study.counts()["designs"] == 6


def _pool_jobs(space_path: Path, widths: list[int], flow: str, accum: int) -> list:
    space = load_space(space_path)
    base = {**space.fixed(), "vector_units": 4, "weight_collector": 1}
    return [
        DesignJob.of(space, {**base, "vector_width": w, "accum_collector": accum}, flow, number=i)
        for i, w in enumerate(widths)
    ]


def _collect(pool: workers.RayPool, count: int) -> dict[int, object]:
    got: dict[int, object] = {}
    deadline = time.monotonic() + 120
    while len(got) < count and time.monotonic() < deadline:
        for job, outcome in pool.results(timeout=1.0):
            assert job.number not in got  # each design handed back once
            got[job.number] = outcome
    return got


def test_a_pool_batches_designs_of_a_few_ms_and_hands_each_back_once(ray_cluster) -> None:
    # ws-local-os on a design without an accumulation collector is refused in about 1 ms:
    # once the last RECENT designs said so (a worker's first design pays its imports), the
    # pool sends such designs MAX_BATCH to a task
    jobs = _pool_jobs(SPACE, [4] * 60, "ws-local-os", accum=0)
    pool = workers.RayPool(2, ray_cluster)
    try:
        assert pool.startup_seconds > 0 and pool.slots == 2 * workers.TASKS_PER_WORKER
        first: dict[int, object] = {}
        for job in jobs[:12]:
            pool.submit(job)
            first |= _collect(pool, 1)  # one at a time: every one a task of its own
        assert len(first) == 12
        assert pool.batch == workers.MAX_BATCH  # 0.2 s / ~1 ms, at most 16
        assert pool.slots == 2 * workers.TASKS_PER_WORKER * workers.MAX_BATCH
        sent = pool.tasks_sent
        for job in jobs[12:]:
            pool.submit(job)
        got = {**first, **_collect(pool, len(jobs) - 12)}
        # 48 designs in tasks of 16: 3 tasks (a smaller one only if a worker would idle)
        assert pool.tasks_sent - sent == 3
    finally:
        pool.close()
    assert sorted(got) == list(range(len(jobs)))
    assert all(isinstance(o, DesignResult) and o.status == "infeasible" for o in got.values())


def test_a_pools_workers_trade_their_stores_in_a_directory_it_removes(ray_cluster) -> None:
    # each worker that maps a design joins the pool's exchange directory with a file of its
    # own, where it appends the outcomes of its searches afresh (``WarmStore.share``); the
    # pool removes the directory when it closes
    jobs = _pool_jobs(SPACE, [4, 8, 4, 8], "os-local-ws", accum=4)
    pool = workers.RayPool(2, ray_cluster)
    try:
        assert pool.exchange is not None
        directory, count = pool.exchange
        assert count == 2
        for job in jobs:
            pool.submit(job)
        got = _collect(pool, len(jobs))
        sizes = {f.name: f.stat().st_size for f in Path(directory).iterdir()}
    finally:
        pool.close()
    assert all(isinstance(o, DesignResult) and o.status == "ok" for o in got.values())
    ran = {o.worker for o in got.values() if isinstance(o, DesignResult)}
    assert len(sizes) == len(ran) and all(name.startswith("store-") for name in sizes)
    assert sum(sizes.values()) > 0  # the first searches afresh, traded
    assert not Path(directory).exists()


@pytest.mark.parametrize("crashing", [0, 1])
def test_a_worker_dying_mid_batch_fails_that_design_and_resends_the_rest(
    tmp_path, ray_cluster, crashing
) -> None:
    # four designs in one task, one of them ends its process (its plug-in): that design fails
    # (Ray retries the task once, it dies again; then it is sent alone, and dies twice more),
    # the three others are evaluated. A dying process can lose the reply it was sending, so
    # the task may die "on" the design before the crashing one: that one is sent again alone
    # and passes (CI once saw design 0 blamed for design 1's crash).
    plugin = DATA / "search" / "crash_on_wide.py"
    space = space_with(tmp_path, cost_model=f"{plugin}:CrashOnWide")
    widths = [4, 4, 4, 4]
    widths[crashing] = 8
    jobs = _pool_jobs(space, widths, "os-local-ws", accum=4)
    pool = workers.RayPool(2, ray_cluster)
    try:
        pool.batch = 4  # as if the designs were quick: one task carries all four
        for job in jobs:
            pool.submit(job)
        early = list(pool.results(timeout=0.01))  # sends them: one task (each takes 0.3 s)
        assert not early and [len(batch) for batch in pool.tasks.values()] == [4]
        got = _collect(pool, 4)
    finally:
        pool.close()
    assert sorted(got) == [0, 1, 2, 3]
    assert isinstance(got[crashing], BaseException)
    assert isinstance(got[crashing], workers.WorkerDied)
    others = {n: got[n] for n in range(4) if n != crashing}
    shown = {
        n: (o.status, o.reason) if isinstance(o, DesignResult) else repr(o)[:300]
        for n, o in others.items()
    }
    assert all(isinstance(o, DesignResult) and o.status == "ok" for o in others.values()), shown


def test_a_bad_ray_address_is_a_clear_error(storage) -> None:
    out = CliRunner().invoke(
        main,
        [
            "search",
            str(SPACE),
            "--storage",
            storage,
            "--workers",
            "2",
            "--ray-address",
            "127.0.0.1:1",
        ],
    )
    assert out.exit_code == 2 and "no Ray cluster answers" in out.output


def test_postgresql_storage(postgres_url) -> None:
    study = search(SPACE, n_trials=4, storage=postgres_url)
    assert study.counts()["designs"] == 4
    again = load_study("small", postgres_url)
    assert [t.values for t in again.trials()] == [t.values for t in study.trials()]
    out = CliRunner().invoke(main, ["studies", "--storage", postgres_url, "--json"])
    assert json.loads(out.output)[0]["name"] == "small"


@pytest.mark.parametrize(
    "directions", [["minimize", "minimize"], ["minimize", "maximize", "minimize"]]
)
def test_the_drivers_front_kept_as_designs_are_told_is_the_front_of_every_point(
    directions: list[str],
) -> None:
    # the driver keeps the front, not every point: after each design told, its size (distinct
    # points) and hypervolume are those of every point told so far, and so is the front a
    # job carries for its bounds; coarse values give copies and ties
    import numpy as np

    from magnet.search import pareto

    stored: dict = {}
    study = SimpleNamespace(set_user_attr=lambda key, value: stored.update({key: value}))
    empty = np.zeros((0, len(directions)))
    before = SimpleNamespace(
        directions=directions, points=lambda trials: empty, feasible=lambda: [], reference=None
    )
    front = driver.Front(study, before)  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    told: list[list[float]] = []
    for _ in range(300):
        values = (10.0 ** rng.integers(0, 6, len(directions))).tolist()
        front.add(values)
        told.append(values)
        points = pareto.to_minimised_log(told, directions)
        every = np.unique(points[pareto.nondominated(points)], axis=0)
        size, hv = front.size_and_hypervolume()
        assert size == len(every)
        assert sorted(map(tuple, front.points.tolist())) == sorted(map(tuple, every.tolist()))
        if len(told) < driver.REFERENCE_TRIALS:
            assert hv is None
        else:
            reference = pareto.reference_point(points[: driver.REFERENCE_TRIALS])
            assert stored[driver.REFERENCE_ATTR] == reference
            assert hv == pareto.hypervolume(points, reference)


def test_a_warmed_worker_imports_nothing_for_its_first_design() -> None:
    # warm_worker, at a Ray pool's start, imports what an evaluation imports on first use:
    # a worker's first design then imports no module (a fresh process, as a worker is)
    code = """
import sys
from magnet.search import load_space
from magnet.search.job import DesignJob
from magnet.search.workers import outcome_of, warm_worker
space = load_space("quickstart")
job = DesignJob.of(space, space.design({n: r.first() for n, r in space.ranges().items()}),
                   space.dataflows()[0])
warm_worker()
before = set(sys.modules)
assert outcome_of(job).status == "ok"
print(sorted(set(sys.modules) - before))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == "[]"
