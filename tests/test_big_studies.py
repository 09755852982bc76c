"""Studies too big to draw whole (issue 33): a figure draws every design of the Pareto front
and a uniform sample of the others, and says so; downloads are streamed."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from magnet.dashboard.app import create_app
from magnet.report import study_figures, theme
from magnet.report.catalog import FIGURES
from magnet.search import export
from magnet.search.export import export_chunks


def _numbers(trials) -> list[int]:
    return [t.number for t in trials]


def test_a_sample_is_uniform_over_the_study_ordered_and_stable_as_it_grows() -> None:
    trials = [SimpleNamespace(number=n) for n in range(100_000)]
    picked = _numbers(study_figures.sample(trials, 2000))
    assert len(picked) == len(set(picked)) == 2000 and picked == sorted(picked)
    # uniform over the trials (so over a search's course): 200 expected per tenth
    counts = np.histogram(picked, bins=10, range=(0, 100_000))[0]
    assert counts.min() >= 180 and counts.max() <= 220, counts
    # 1,000 trials more: about 2,000 x 1,000 / 101,000 = 20 of the drawn ones give way
    grown = _numbers(
        study_figures.sample(
            [*trials, *(SimpleNamespace(number=n) for n in range(100_000, 101_000))], 2000
        )
    )
    assert len(set(picked) & set(grown)) >= 1950
    # at most the limit: every trial, as it was
    assert study_figures.sample(trials[:10], 2000) == trials[:10]


def test_steps_keep_the_line_of_a_long_history_and_nothing_else(monkeypatch) -> None:
    monkeypatch.setattr(study_figures, "MAX_POINTS", 5)
    points = [(0, 3.0), (1, 3.0), (2, 2.0), (3, 2.0), (4, 2.0), (5, 1.0), (6, 1.0)]
    assert study_figures.steps(points) == [(0, 3.0), (2, 2.0), (5, 1.0), (6, 1.0)]
    assert study_figures.steps(points[:5]) == points[:5]  # within the limit: every point


def _drawn(fig: dict, meta: str) -> list[int]:
    return [n for trace in fig["data"] if trace.get("meta") == meta for n in trace["customdata"]]


def _notes(fig: dict) -> str:
    return " ".join(a["text"] for a in fig["layout"].get("annotations", []))


@pytest.mark.parametrize("kind", ["front", "front3d", "history", "slices", "contour"])
def test_a_figure_over_the_limit_draws_the_front_and_a_sample_and_says_so(
    small, monkeypatch, kind
) -> None:
    monkeypatch.setattr(study_figures, "MAX_POINTS", 2)
    front = {t.number for t in small.pareto_front()}
    others = {t.number for t in small.feasible()} - front
    assert len(others) > 2  # the shared study has more feasible designs off its front
    fig = theme.figure_json(FIGURES[kind].make(small, {}))
    drawn = set(_drawn(fig, "front") + _drawn(fig, "feasible"))
    assert front <= drawn  # every front design
    assert len(drawn - front) == 2  # and MAX_POINTS of the others
    assert f"2 of {len(others)} " in _notes(fig) and "uniform sample" in _notes(fig)


def test_parallel_and_timeline_over_the_limit_say_what_they_draw(small, monkeypatch) -> None:
    monkeypatch.setattr(study_figures, "MAX_POINTS", 2)
    front = {t.number for t in small.pareto_front()}
    fig = theme.figure_json(study_figures.parallel(small))
    lines = len(fig["data"][0]["dimensions"][0]["values"])
    assert lines == len(front) + 2
    timeline = theme.figure_json(FIGURES["timeline"].make(small, {}))
    bars = sum(len(trace["customdata"]) for trace in timeline["data"])
    assert bars == 2 and "2 of " in _notes(timeline)


def test_an_ecdf_over_the_limit_runs_through_evenly_spaced_ranks(small, monkeypatch) -> None:
    monkeypatch.setattr(study_figures, "MAX_POINTS", 3)
    fig = theme.figure_json(FIGURES["ecdf"].make(small, {}))
    line = next(t for t in fig["data"] if t.get("meta") == "ecdf")
    n = len([t for t in small.feasible() if t.values])
    # ranks 0, (n - 1) / 2 and n - 1: the first, the middle and the last design
    assert line["y"][0] == pytest.approx(1 / n) and line["y"][-1] == pytest.approx(1.0)
    assert len(line["y"]) == 3
    # a line alone through the sampled ranks (no marker each: a browser's drawing time);
    # within the limit, a marker per design
    assert line["mode"] == "lines"
    monkeypatch.setattr(study_figures, "MAX_POINTS", n)
    fig = theme.figure_json(FIGURES["ecdf"].make(small, {}))
    assert next(t for t in fig["data"] if t.get("meta") == "ecdf")["mode"] == "lines+markers"


def test_within_the_limit_a_figure_draws_every_design(small) -> None:
    fig = theme.figure_json(FIGURES["front"].make(small, {}))
    feasible = {t.number for t in small.feasible()}
    assert feasible <= set(_drawn(fig, "front") + _drawn(fig, "feasible"))
    assert "sample" not in _notes(fig)


def test_downloads_are_streamed_a_piece_at_a_time(small, storage, monkeypatch) -> None:
    from starlette.testclient import TestClient

    monkeypatch.setattr(export, "PIECE_TRIALS", 5)
    n = len(small.trials())
    chunks = list(export_chunks(small, "csv"))
    assert len(chunks) == 1 + -(-n // 5)  # the header, then 5 rows a piece
    assert all(c.count("\n") <= 5 for c in chunks[1:]) and "".join(chunks).count("\n") == n + 1
    parts = list(export_chunks(small, "json"))
    assert len(parts) == -(-n // 5) + 1  # 5 trials a piece, then the closing bracket
    assert [t["number"] for t in json.loads("".join(parts))] == _numbers(small.trials())
    with TestClient(create_app(storage), base_url="http://127.0.0.1") as client:
        r = client.get("/studies/small/trials.csv")
    assert r.status_code == 200 and "content-length" not in r.headers  # streamed
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [int(row["number"]) for row in rows] == _numbers(small.trials())


def _done(t) -> bool:
    return t.status in ("ok", "infeasible")


def _snapshots(small, cuts, running=(), altered=()):
    """The study ``small`` read as a dashboard follows it: its first ``cut`` trials for each
    of ``cuts``, each study made from the one before (``before``) with shared views, the
    trials of ``running`` still running in every snapshot but the last, those of
    ``altered`` finished with other values in every snapshot but the last (Optuna never
    changes a finished trial; a reader must not trust that); and each made afresh."""
    import copy

    from optuna.trial import TrialState

    from magnet.search.study import Study

    views: dict = {}
    grown, fresh, before = [], [], None
    for k, cut in enumerate(cuts):
        trials = []
        for t in small.frozen[:cut]:
            if t.number in running and k < len(cuts) - 1:
                t = copy.copy(t)
                t.state, t.values, t.datetime_complete = TrialState.RUNNING, None, None
            if t.number in altered and k < len(cuts) - 1:
                t = copy.copy(t)
                t.values = [v * 0.5 for v in t.values]  # a better design, then not
            trials.append(t)
        before = Study(small.name, small.user_attrs, trials, small.storage, views, before)
        grown.append(before)
        fresh.append(Study(small.name, small.user_attrs, trials, small.storage))
        # what the dashboard asks of each snapshot (the next grows from it)
        before.pareto_front(), before.hypervolume_history(), before.counts(), before.params_run
        before.selected(("done",), _done), before.feasible_with(before.objectives[:2])
        before.trial(0), before.value_columns(before.objectives)
    return grown, fresh


@pytest.mark.parametrize("running, altered", [((), ()), ((3,), ()), ((1, 9), ()), ((), (2,))])
def test_a_study_grown_from_the_one_before_is_the_study_made_afresh(
    small, running, altered
) -> None:
    # the front, hypervolume and its history of a study grown trial by trial (a trial that
    # was running finishing late among them) are exactly those made from every trial
    count = len(small.frozen)
    assert count >= 12
    grown, fresh = _snapshots(small, [4, 5, 8, 9, count - 1, count], set(running), set(altered))
    for g, f in zip(grown, fresh, strict=True):
        assert _numbers(g.pareto_front()) == _numbers(f.pareto_front())
        assert g.hypervolume() == f.hypervolume()
        assert g.hypervolume_history() == f.hypervolume_history()
        assert g.counts() == f.counts() and list(g.counts()) == list(f.counts())
        assert (g.params_run, g.dataflows_run) == (f.params_run, f.dataflows_run)
        assert g.trials() == f.trials()
        assert [g.trial(t.number) for t in f.trials()] == f.trials()
        assert g.selected(("done",), _done) == [t for t in f.trials() if _done(t)]
        assert g.feasible_with(g.objectives[:2]) == f.feasible_with(f.objectives[:2])
        # the figures' arrays: the numbers and values of the feasible trials, in their order
        (gn, gv), (fn, fv) = g.value_columns(g.objectives), f.value_columns(f.objectives)
        assert gn.tolist() == _numbers(f.feasible_with(f.objectives)) == fn.tolist()
        assert (
            gv.tolist()
            == fv.tolist()
            == [[t.values[o] for o in f.objectives] for t in f.feasible_with(f.objectives)]
        )
    assert len({len(f.pareto_front()) for f in fresh}) > 1  # the front changed as it grew


@pytest.mark.parametrize("lacking", [False, True])
def test_the_columns_of_some_objectives_are_those_of_the_trials_with_their_values(
    small, lacking
) -> None:
    # by definition: the feasible trials with a finite value of each of the axes, in order;
    # taken from the objectives' own columns only when every feasible trial has them all
    # (``lacking``: one feasible trial without a value of the last objective)
    import copy

    from magnet.search.study import Study

    trials = list(small.frozen)
    feasible = [t.number for t in small.feasible()]
    if lacking:
        i = next(i for i, t in enumerate(trials) if t.number == feasible[0])
        trials[i] = copy.copy(trials[i])
        trials[i].values = [*trials[i].values[:-1], math.inf]
    study = Study(small.name, small.user_attrs, trials, small.storage)
    assert len(study.feasible()) == len(feasible)
    objectives = study.objectives
    assert len(objectives) == 3
    for axes in (objectives[:1], objectives[:2], objectives[::-1][:2], objectives):
        want = [t for t in study.feasible() if all(math.isfinite(t.values[m]) for m in axes)]
        assert len(want) == len(feasible) - (lacking and objectives[-1] in axes)
        numbers, values = study.value_columns(axes)
        assert numbers.tolist() == _numbers(want) == _numbers(study.feasible_with(axes))
        assert values.tolist() == [[t.values[m] for m in axes] for t in want]


def test_while_the_storage_is_read_every_page_says_so_at_once(storage) -> None:
    from starlette.testclient import TestClient

    app = create_app(storage)
    dashboard = app.state.dashboard
    with TestClient(app, base_url="http://127.0.0.1") as client:
        dashboard.reading.set()  # as ``read_all`` does at the server's start
        page = client.get("/studies/small")
        assert page.status_code == 503 and "Reading the study storage" in page.text
        assert page.headers["refresh"] == "1" and page.headers["retry-after"] == "1"
        assert "content-security-policy" in page.headers  # the security headers as ever
        api = client.get("/api/studies")
        assert api.status_code == 503 and api.json()["reading"] is True
        assert client.get("/static/magnet.css").status_code == 200  # what needs no study
        assert client.get("/", headers={"host": "evil.example"}).status_code == 400
        dashboard.reading.clear()
        assert client.get("/api/studies").status_code == 200


@pytest.fixture(scope="module")
def small_journal(storage, tmp_path_factory) -> str:
    """Study ``small`` copied to a journal (Optuna's ``copy_study``)."""
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    path = str(tmp_path_factory.mktemp("journal") / "small.journal")
    target = JournalStorage(JournalFileBackend(path))
    optuna.copy_study(from_study_name="small", from_storage=storage, to_storage=target)
    return path


def test_read_all_keeps_a_damaged_journals_error(tmp_path, small_journal) -> None:
    from magnet.search.storage import check_journal

    lines = Path(small_journal).read_bytes().splitlines(keepends=True)
    assert len(lines) > 6
    damaged = tmp_path / "damaged.journal"  # line 4 begins as Optuna's lines do, then breaks
    damaged.write_bytes(b"".join([*lines[:3], b'{"op_code":4,"study_id":0,}\n', *lines[4:]]))
    check_journal(str(damaged))  # its lines' starts are all right: the reading finds it
    app = create_app(str(damaged))
    app.state.dashboard.read_all()
    error = app.state.dashboard.read_error
    assert error is not None and "line 4 is corrupt" in str(error)
    assert not app.state.dashboard.reading.is_set()


def test_check_journal_refuses_a_line_no_optuna_journal_has(tmp_path, small_journal) -> None:
    from magnet.errors import MagnetError
    from magnet.search.storage import check_journal

    lines = Path(small_journal).read_bytes().splitlines(keepends=True)
    check_journal(small_journal)
    noted = tmp_path / "noted.journal"
    noted.write_bytes(b"".join([*lines, b"a note at the end\n"]))  # the reader's note says
    check_journal(str(noted))
    bad = tmp_path / "bad.journal"
    bad.write_bytes(b"".join([*lines[:5], b"a note in the middle\n", *lines[5:]]))
    with pytest.raises(MagnetError, match="line 6 is corrupt"):
        check_journal(str(bad))


def test_every_trials_row_is_streamed_a_piece_at_a_time(storage, small, monkeypatch) -> None:
    from starlette.testclient import TestClient

    from magnet.dashboard import app as dashboard_app

    with TestClient(create_app(storage), base_url="http://127.0.0.1") as client:
        whole = client.get("/api/studies/small/trials")
        monkeypatch.setattr(dashboard_app, "PIECE_TRIALS", 5)
        pieces = client.get("/api/studies/small/trials")
    assert len(small.trials()) > 10  # pieces of 5: three or more
    assert pieces.text == whole.text and "content-length" not in pieces.headers
    rows = pieces.json()
    assert [r["number"] for r in rows] == _numbers(small.trials())
    assert {r["number"] for r in rows if r["front"]} == set(_numbers(small.pareto_front()))


@pytest.mark.parametrize("seed", range(30))
def test_the_table_is_sorted_as_sort_key_sorts_it(seed) -> None:
    # numpy's order of finite numbers (ties by number, reversed whole when descending) is the
    # one ``sort_key`` gives; text, booleans, NaN and infinities take the slow road, missing
    # values go last
    import random

    from magnet.dashboard.app import sort_key, sorted_numbers

    rng = random.Random(seed)
    kinds = [
        lambda: rng.choice([1.5, 2.0, 3.25]),
        lambda: rng.randint(0, 3),
        lambda: None,
        lambda: rng.choice(["ws", "OS", "rs"]),
        lambda: rng.choice([True, False]),
        lambda: rng.choice([math.inf, -math.inf]),
    ]
    mix = rng.sample(kinds, rng.randint(1, 3)) if seed % 3 else kinds[:3]
    numbers = rng.sample(range(100), rng.randint(0, 25))
    trials = [SimpleNamespace(number=n, v=rng.choice(mix)()) for n in numbers]
    for descending in (False, True):
        present = sorted(
            ((sort_key(t.v), t.number) for t in trials if t.v is not None), reverse=descending
        )
        expected = [n for _, n in present] + [t.number for t in trials if t.v is None]
        got = sorted_numbers(trials, lambda t: t.v, descending)
        assert got.dtype == np.int64 and got.tolist() == expected
