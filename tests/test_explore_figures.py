"""The study figures of ``magnet.report.explore`` (history, slices, contour, ECDF, timeline) and
the worker a trial records, on studies made by real small searches. Every expected number is
recomputed here from the study's own trials, never copied from a run."""

from __future__ import annotations

import json
import math
import os
import pickle
import socket
from datetime import datetime, timedelta

import optuna
import pytest
import yaml

from magnet.errors import PluginError
from magnet.report import explore as E
from magnet.report.theme import esc, figure_json, fmt
from magnet.search import SearchFailed, load_study, search
from magnet.search.design_space import space_from_data
from magnet.search.job import DesignJob, evaluate_design
from magnet.search.storage import open_storage
from magnet.search.study import Study
from tests.conftest import DATA

SPACE = DATA / "search" / "small_space.yaml"
NET = DATA / "search" / "small_net.yaml"
RAISES = DATA / "search" / "raise_on_wide.py"
XSS = "<script>alert(1)</script>"
#: This process: the searches here run in-process, so every evaluation is ours.
HERE = f"{socket.gethostname()}:{os.getpid()}"


def make(root, name: str, trials: int, max_failures: int = 5, **changes) -> Study:
    """A search of the small space with ``changes`` (``params`` merged), its study loaded."""
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(NET)]
    data["params"] = {**data["params"], **changes.pop("params", {})}
    data.update(changes)
    path = root / f"{len(list(root.iterdir()))}.yaml"
    path.write_text(yaml.safe_dump(data))
    storage = str(root / "studies.journal")
    search(path, n_trials=trials, storage=storage, study=name, max_failures=max_failures)
    return load_study(name, storage)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("explore")


@pytest.fixture(scope="module")
def study(root):
    """Two dataflows, a string parameter, one spanning 16x, four objectives (tops_per_w
    maximised) and an area limit that makes some designs infeasible with values; named
    with HTML."""
    return make(
        root,
        f"explore {XSS}",
        24,
        params={
            "weight_collector": {"choices": [1, 4, 16]},
            "global_buffer": {"choices": ["16KiB", "64KiB"]},
            "number_format": {"choices": ["int", "bf16"]},
            "weight_bits": 16,
            "activation_bits": 16,
        },
        objectives=["energy_pj", "latency_cycles", "area_mm2", "tops_per_w"],
        # the space's designs are 0.36-1.0 mm^2 (quartiles 0.46, 0.52, 0.64; post-processing
        # units and a controller included): some are over the limit
        limits=[{"metric": "area_mm2", "max": 0.6}],
    )


@pytest.fixture(scope="module")
def floats(root):
    """One dataflow and a float parameter (log range): every design distinct."""
    return make(
        root,
        "floats",
        16,
        params={"technology_nm": {"float": [7, 45], "log": True}, "vector_units": 8},
        dataflow="os-local-ws",
        sampler="random",
    )


@pytest.fixture(scope="module")
def nothing_feasible(root):
    """Every design over its area limit (infeasible with values), then a trial asked and
    never told (running)."""
    study = make(root, "nothing", 3, limits=[{"metric": "area_mm2", "max": 0.01}])
    store = open_storage(study.storage, create=True)  # a writer's (a reader cannot ask)
    optuna.load_study(study_name="nothing", storage=store).ask()
    return load_study("nothing", study.storage)


@pytest.fixture(scope="module")
def failing(root):
    """A cost-model plug-in that raises on 8-lane designs: failed trials, repeats, one ok."""
    params = {"vector_units": 4, "weight_collector": 1, "accum_collector": 4}
    with pytest.raises(SearchFailed):
        make(
            root,
            "failing",
            6,
            params=params,
            dataflow="os-local-ws",
            cost_model=f"{RAISES}:RaiseOnWide",
            sampler="random",
            max_failures=3,
        )
    return load_study("failing", str(root / "studies.journal"))


def data(fig) -> list[dict]:
    return figure_json(fig)["data"]


def role(fig, meta: str) -> list[dict]:
    return [t for t in data(fig) if t.get("meta") == meta]


def points(traces: list[dict]) -> list[tuple[int, float, float]]:
    return sorted(
        (n, x, y) for t in traces for n, x, y in zip(t["customdata"], t["x"], t["y"], strict=True)
    )


def message(fig) -> str:
    return figure_json(fig)["layout"]["annotations"][0]["text"]


# ---- the worker a trial records --------------------------------------------------------------
def test_every_evaluated_trial_records_its_worker(study, failing) -> None:
    evaluated = study.trials("ok") + study.trials("infeasible")
    assert len(evaluated) == study.counts()["designs"] > 0
    # no derived constraint can break in this space (weight_buffer 32 KiB >= 1024 x 8), so
    # every ok or infeasible trial was evaluated, in this process
    assert {t.worker for t in evaluated} == {HERE}
    repeats = study.trials("repeat")
    assert repeats and {t.worker for t in repeats} == {"driver"}
    failed = failing.trials("failed")
    assert failed and {t.worker for t in failed} == {HERE}  # where the plug-in raised
    assert {t.worker for t in failing.trials("ok")} == {HERE}
    assert study.trials()[0].to_dict()["worker"] == study.trials()[0].worker


def test_a_worker_travels_with_the_exception_it_raised() -> None:
    # what a Ray worker sends back, pickled: the result, or the exception with its worker
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(NET)]
    params = {"vector_width": 8, "vector_units": 4, "weight_collector": 1, "accum_collector": 4}
    raising = space_from_data({**data, "cost_model": f"{RAISES}:RaiseOnWide"})
    with pytest.raises(PluginError) as caught:
        evaluate_design(DesignJob.of(raising, params, "os-local-ws"))
    again = pickle.loads(pickle.dumps(caught.value))
    assert again.magnet_worker == HERE and "KeyError: 64" in str(again)
    result = evaluate_design(DesignJob.of(space_from_data(data), params, "os-local-ws"))
    assert result.status == "ok" and pickle.loads(pickle.dumps(result)).worker == HERE


# ---- history ------------------------------------------------------------------------------------
@pytest.mark.parametrize("objective", ["energy_pj", "tops_per_w"])
def test_history_has_every_feasible_value_and_the_best_so_far(study, objective) -> None:
    fig = E.history(study, objective)
    feasible = sorted(study.feasible(), key=lambda t: t.number)
    assert len(feasible) >= 5
    shown = points(role(fig, "feasible"))
    assert shown == sorted((t.number, t.number, t.values[objective]) for t in feasible)
    # one trace per dataflow, in its colour
    assert sorted(t["name"] for t in role(fig, "feasible")) == sorted(
        {t.dataflow for t in feasible}
    )
    (best,) = role(fig, "best")
    pick = min if study.directions[study.objectives.index(objective)] == "minimize" else max
    running = [pick(t.values[objective] for t in feasible[: i + 1]) for i in range(len(feasible))]
    assert best["x"] == [t.number for t in feasible]
    assert best["y"] == running
    holders = {t.number: t.values[objective] for t in feasible}
    assert [holders[n] for n in best["customdata"]] == running  # the trial holding the best
    assert best["line"]["shape"] == "hv"
    # infeasible designs that have values, faded, with their reason
    over = [t for t in study.trials("infeasible") if t.values]
    assert over, "the area limit should leave designs infeasible with values"
    (faded,) = role(fig, "infeasible")
    assert points([faded]) == sorted((t.number, t.number, t.values[objective]) for t in over)
    assert all("outside the limit area_mm2" in h for h in faded["hovertext"])
    layout = figure_json(fig)["layout"]
    assert layout["yaxis"]["type"] == "log"
    assert layout["uirevision"] == f"history:{objective}"
    assert "energy per inference (pJ)" in E.history(study, "energy_pj").layout.yaxis.title.text


def test_the_direction_changes_the_best_so_far_here(study) -> None:
    # guards the test above: on this study a running min of tops_per_w (maximised) is not
    # its running max, so a line that ignored the direction would fail it
    feasible = sorted(study.feasible(), key=lambda t: t.number)
    values = [t.values["tops_per_w"] for t in feasible]
    running_min = [min(values[: i + 1]) for i in range(len(values))]
    assert role(E.history(study, "tops_per_w"), "best")[0]["y"] != running_min


# ---- slices -------------------------------------------------------------------------------------
def test_slices_have_one_panel_per_varied_parameter_with_every_feasible_trial(study) -> None:
    varied = [k for k, v in study.space.params.items() if isinstance(v, dict)] + ["dataflow"]
    assert sorted(E.varied_params(study)) == sorted(varied)  # two dataflows: a panel too
    objective = "latency_cycles"
    fig = E.slices(study, objective)
    layout = figure_json(fig)["layout"]
    params = E.varied_params(study)
    assert [a["text"] for a in layout["annotations"]] == params  # one subplot title each
    feasible = study.feasible()
    types = {}
    for i, param in enumerate(params):
        axis = "x" if i == 0 else f"x{i + 1}"
        traces = [t for t in role(fig, "feasible") if t["xaxis"] == axis]
        values = [t.params[param] for t in feasible]
        numeric = all(isinstance(v, int | float) for v in values)
        expect = sorted(
            (t.number, t.params[param] if numeric else esc(t.params[param]), t.values[objective])
            for t in feasible
        )
        assert points(traces) == expect, param
        kind = layout["xaxis" if i == 0 else f"xaxis{i + 1}"]["type"]
        if not numeric:
            assert kind == "category"
        else:
            log = min(values) > 0 and max(values) / min(values) > 10
            assert kind == ("log" if log else "linear"), param
        types[param] = kind
    assert types["weight_collector"] == "log"  # 1 to 16
    assert types["vector_units"] == "linear"
    assert types["dataflow"] == types["number_format"] == "category"
    assert layout["uirevision"] == f"slices:{objective}"


def test_slices_say_when_nothing_is_varied_or_feasible(floats, nothing_feasible) -> None:
    assert "dataflow" not in E.varied_params(floats)  # one dataflow: no panel for it
    assert len(figure_json(E.slices(floats))["layout"]["annotations"]) == len(floats.space.ranges())
    assert message(E.slices(nothing_feasible)) == "no feasible design yet"
    assert "not an objective" in message(E.slices(floats, "utilization"))


# ---- contour ------------------------------------------------------------------------------------
def best_cells(study, objective, key):
    """(cell key) -> (best value, its trial number, trials in the cell), recomputed."""
    sign = 1 if study.directions[study.objectives.index(objective)] == "minimize" else -1
    cells: dict = {}
    for t in sorted(study.feasible(), key=lambda t: t.number):
        cells.setdefault(key(t), []).append(t)
    out = {}
    for k, group in cells.items():
        best = min(group, key=lambda t: (sign * t.values[objective], t.number))
        out[k] = (best.values[objective], best.number, group)
    return out


@pytest.mark.parametrize(
    "objective, x, y",
    [
        ("energy_pj", "vector_units", "dataflow"),
        ("area_mm2", "weight_collector", "global_buffer"),
        ("tops_per_w", "number_format", "accum_collector"),
    ],
)
def test_contour_cells_hold_the_best_value_of_their_trials(study, objective, x, y) -> None:
    fig = figure_json(E.contour(study, objective, x, y))
    layout = fig["layout"]
    xs, ys = layout["xaxis"]["ticktext"], layout["yaxis"]["ticktext"]
    expected = best_cells(study, objective, lambda t: (fmt(t.params[x]), fmt(t.params[y])))
    (cells,) = [t for t in fig["data"] if t["meta"] == "cells"]
    filled = {
        (xs[i], ys[j]): (cells["z"][j][i], cells["customdata"][j][i])
        for j in range(len(ys))
        for i in range(len(xs))
        if cells["customdata"][j][i] is not None
    }
    assert set(filled) == set(expected)
    for k, (value, number, _) in expected.items():
        assert filled[k][1] == number
        assert filled[k][0] == pytest.approx(math.log10(value))  # log colour scale
    # every feasible trial once, inside its cell
    (markers,) = [t for t in fig["data"] if t["meta"] == "feasible"]
    assert sorted(markers["customdata"]) == sorted(t.number for t in study.feasible())
    for n, px, py in zip(markers["customdata"], markers["x"], markers["y"], strict=True):
        t = study.trial(n)
        assert (xs[round(px)], ys[round(py)]) == (fmt(t.params[x]), fmt(t.params[y]))
        assert abs(px - round(px)) < 0.5
    assert layout["uirevision"] == f"contour:{objective}:{x}:{y}"
    # the best of each cell is brightest: Viridis reversed when lower is better
    assert cells["reversescale"] == (objective != "tops_per_w")


def test_contour_bins_a_float_parameter(floats) -> None:
    x, y = "technology_nm", "vector_width"
    fig = figure_json(E.contour(floats, "energy_pj", x, y))
    xs = fig["layout"]["xaxis"]["ticktext"]
    assert len(xs) == E.FLOAT_BINS < len(floats.feasible())
    values = [t.params[x] for t in floats.feasible()]
    lo, hi = math.log10(min(values)), math.log10(max(values))  # a log range: log-spaced bins

    def bin_of(v: float) -> int:
        return min(int((math.log10(v) - lo) / (hi - lo) * E.FLOAT_BINS), E.FLOAT_BINS - 1)

    expected = best_cells(floats, "energy_pj", lambda t: (bin_of(t.params[x]), t.params[y]))
    (cells,) = [t for t in fig["data"] if t["meta"] == "cells"]
    ys = [int(v) for v in fig["layout"]["yaxis"]["ticktext"]]
    for (i, yv), (_, number, _) in expected.items():
        assert cells["customdata"][ys.index(yv)][i] == number
    (markers,) = [t for t in fig["data"] if t["meta"] == "feasible"]
    for n, px in zip(markers["customdata"], markers["x"], strict=True):
        assert round(px) == bin_of(floats.trial(n).params[x])


def test_contour_refuses_what_it_cannot_draw(study, floats, nothing_feasible) -> None:
    same = E.contour(study, "energy_pj", "dataflow", "dataflow")
    assert message(same) == "choose two different parameters (both are dataflow)"
    assert not same.data
    unvaried = message(E.contour(floats, "energy_pj", "dataflow", "vector_width"))
    assert unvaried.startswith("dataflow is not a varied parameter of this study")
    assert message(E.contour(nothing_feasible)) == "no feasible design yet"
    # defaults: the first objective, the first two varied parameters
    default = figure_json(E.contour(study))["layout"]
    first, second = E.varied_params(study)[:2]
    assert default["uirevision"] == f"contour:energy_pj:{first}:{second}"


# ---- ECDF ---------------------------------------------------------------------------------------
def test_ecdf_steps_by_one_design_at_each_sorted_value(study, nothing_feasible) -> None:
    fig = E.ecdf(study)
    feasible = study.feasible()
    n = len(feasible)
    lines = role(fig, "ecdf")
    fronts = role(fig, "front")
    assert [t["name"] for t in lines] == study.objectives  # one panel each
    front = {t.number for t in study.pareto_front()}
    assert 0 < len(front) < n
    for objective, line, marked in zip(study.objectives, lines, fronts, strict=True):
        ordered = sorted(feasible, key=lambda t: (t.values[objective], t.number))
        assert line["x"] == [t.values[objective] for t in ordered]
        assert line["y"] == [i / n for i in range(1, n + 1)]
        assert line["customdata"] == [t.number for t in ordered]
        assert line["line"]["shape"] == "hv"
        # the front's designs, at their own point of the step line
        assert sorted(marked["customdata"]) == sorted(front)
        at = dict(zip(line["customdata"], zip(line["x"], line["y"], strict=True), strict=True))
        for num, x, y in zip(marked["customdata"], marked["x"], marked["y"], strict=True):
            assert at[num] == (x, y)
    layout = figure_json(fig)["layout"]
    assert layout["xaxis"]["type"] == "log"
    assert layout["xaxis4"]["title"]["text"].startswith("tops_per_w: TOPS per watt")
    assert layout["uirevision"] == "ecdf"
    assert message(E.ecdf(nothing_feasible)) == "no feasible design yet"


# ---- timeline -----------------------------------------------------------------------------------
def bars(fig) -> dict[int, tuple[str, datetime, float, str]]:
    """trial number -> (lane, start, length in ms, trace meta)."""
    out = {}
    for t in data(fig):
        for n, lane, base, ms in zip(t["customdata"], t["y"], t["base"], t["x"], strict=True):
            assert n not in out
            out[n] = (lane, datetime.fromisoformat(base), ms, t["meta"])
    return out


def test_timeline_has_one_bar_per_trial_from_its_start_to_its_end(study, failing) -> None:
    for s in (study, failing):
        fig = E.timeline(s)
        shown = bars(fig)
        # a repeat, answered from the study in no time, is counted in the title, not drawn
        trials = [t for t in s.trials() if t.status != "repeat"]
        repeats = len(s.trials()) - len(trials)
        assert sorted(shown) == [t.number for t in trials]
        assert (f"({repeats} repeats answered" in fig.layout.title.text) == (repeats > 0)
        for t in trials:
            lane, start, ms, status = shown[t.number]
            assert (lane, start, status) == (esc(t.worker), t.started, t.status)
            # the bar's length is the trial's duration, to a microsecond
            assert abs(start + timedelta(milliseconds=ms) - t.finished) <= timedelta(microseconds=1)
    assert len(failing.trials("repeat")) > 0
    statuses = {m for _, _, _, m in bars(E.timeline(failing)).values()}
    assert statuses == {"ok", "failed"}
    layout = figure_json(E.timeline(study))["layout"]
    lanes = {t.worker for t in study.trials() if t.status != "repeat"}
    assert layout["yaxis"]["categoryarray"] == sorted(lanes, key=lambda w: (w != "driver", w))
    assert layout["xaxis"]["type"] == "date" and layout["uirevision"] == "timeline"


def test_timeline_runs_a_running_trial_to_now_and_puts_unknown_workers_on_one_lane(
    nothing_feasible,
) -> None:
    (running,) = nothing_feasible.trials("running")
    now = running.started + timedelta(seconds=90)
    shown = bars(E.timeline(nothing_feasible, now=now))
    assert shown[running.number][1:] == (running.started, 90_000.0, "running")
    assert shown[running.number][0] == E.UNKNOWN_WORKER  # asked, never evaluated
    # a study from before magnet recorded workers
    old = load_study("nothing", nothing_feasible.storage)
    for t in old.trials():
        t.worker = None
    assert {lane for lane, *_ in bars(E.timeline(old)).values()} == {E.UNKNOWN_WORKER}


# ---- escaping ----------------------------------------------------------------------------------
def test_study_strings_with_html_are_escaped_everywhere(study) -> None:
    fresh = load_study(study.name, study.storage)  # its own views, changed below
    feasible = fresh.feasible()
    feasible[0].params["number_format"] = XSS  # a string parameter's value, as a study holds it
    feasible[0].worker = XSS
    figures = [
        E.history(fresh, "energy_pj"),
        E.slices(fresh, "energy_pj"),
        E.contour(fresh, "energy_pj", "number_format", "dataflow"),
        E.ecdf(fresh),
        E.timeline(fresh),
    ]
    for fig in figures:
        text = json.dumps(figure_json(fig))
        assert "<script>" not in text
        assert f"explore {esc(XSS)}" in fig.layout.title.text
        assert esc(XSS) in text  # the value itself is shown, escaped
    contour = figure_json(figures[2])["layout"]["xaxis"]["ticktext"]
    assert esc(XSS) in contour
    slices = figure_json(figures[1])["layout"]
    panel = 1 + E.varied_params(fresh).index("number_format")
    assert esc(XSS) in slices[f"xaxis{panel}"]["categoryarray"]
