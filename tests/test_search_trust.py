"""A search you can trust (issue 17), through the command line as a user runs it: bad input
is refused before any work, a plug-in's bug fails trials (and stops the search), a plug-in
has one identity in every cache and process, the budget goes to new designs, Optuna's own
tools read the study, and a design that cannot run never ranks above one that runs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import optuna
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import magnet as mg
from magnet.cli import main
from magnet.cost.contract import CostModel
from magnet.cost.lookup import unregister_cost_model
from magnet.cost.tables import nominal_voltage
from magnet.search import METRICS, SAMPLERS, SearchSpace, load_study, search
from magnet.search.storage import open_storage
from tests.conftest import DATA

SPACE = DATA / "search" / "small_space.yaml"
NET = DATA / "search" / "small_net.yaml"
RAISES = DATA / "search" / "raise_on_wide.py"


def space_data(**changes) -> dict:
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(NET)]
    data.update(changes)
    return data


def write_space(tmp_path: Path, data: dict | str, name: str = "space.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def run_search(tmp_path: Path, space: Path, *extra: str):
    storage = tmp_path / "studies.journal"
    return cli("search", space, "--storage", storage, "--no-report", *extra), storage


# ---- 2. a configuration error is an error, before any work -----------------------------------
SMALL_PARAMS = yaml.safe_load(SPACE.read_text())["params"]
BAD_SPACES = {
    "cost model path missing": (
        {"cost_model": "/nonexistent/plugin.py:X"},
        "cost_model: ",
        "plug-in file not found",
    ),
    "cost model class missing": (
        {"cost_model": f"{RAISES}:Nope"},
        "cost_model: ",
        "has no class 'Nope'",
    ),
    "unknown mapper option": (
        {"mapper": {"name": "fast", "options": {"samplez": 3}}},
        "mapper: ",
        "samplez: unknown field",
    ),
    "workload that does not load": ({"workloads": ["nope.yaml"]}, "workloads.0", "not found"),
    "empty choices": (
        {"params": {**SMALL_PARAMS, "vector_width": {"choices": []}}},
        "params.vector_width",
        "at least 1 item",
    ),
    "no dataflow": ({"dataflow": {"choices": []}}, "dataflow: ", "at least one dataflow"),
    "constraint dividing by zero": (
        {"constraints": ["weight_buffer / accum_collector > 1"]},
        "constraints.0: ",
        "at accum_collector=0: ZeroDivisionError",
    ),
    "constraint overflowing the evaluator": (
        {"constraints": ["2.0 ** vector_width ** 30 > 1"]},
        "constraints.0: ",
        "cannot be evaluated at vector_width=4",
    ),
    "limit of NaN": (
        {"limits": [{"metric": "area_mm2", "max": math.nan}]},
        "limits.0.max",
        "finite",
    ),
    "limit of infinity": (
        {"limits": [{"metric": "area_mm2", "max": math.inf}]},
        "limits.0.max",
        "finite",
    ),
    "trials: true": ({"trials": True}, "trials: ", "expected a whole number, got True"),
    "batch: true": (
        {"workloads": [{"workload": str(NET), "batch": True}]},
        "workloads.0.batch",
        "whole number",
    ),
    "a bad second value": (
        {"params": {**SMALL_PARAMS, "vector_width": {"choices": [4, -3]}}},
        "params.vector_width: ",
        "the value -3",
    ),
    "a name with a newline": ({"name": "a\nb"}, "name: ", "printable"),
    "a 5,000-character name": ({"name": "x" * 5000}, "name: ", "at most 256 characters"),
    "an infinite buffer": (
        {"params": {**SMALL_PARAMS, "weight_buffer": math.inf}},
        "params",
        "finite",
    ),
}


@pytest.mark.parametrize("case", list(BAD_SPACES))
def test_a_bad_space_exits_2_before_any_trial(tmp_path, case) -> None:
    change, field, message = BAD_SPACES[case]
    path = write_space(tmp_path, space_data(**change))
    out, storage = run_search(tmp_path, path)
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith(f"error: {path}: ") and "Traceback" not in out.output
    assert field in out.stderr and message in out.stderr
    assert not storage.exists()  # no study, no trial written


def test_duplicate_keys_are_refused_naming_the_line(tmp_path) -> None:
    text = yaml.safe_dump(space_data()) + "trials: 4\n"  # 'trials: 10' is in the space already
    path = write_space(tmp_path, text)
    out, storage = run_search(tmp_path, path)
    assert out.exit_code == 2 and "the key 'trials' is given twice (first on line" in out.stderr
    assert not storage.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--study", "a\nb"], "--study: a study name must be printable"),
        (["--study", "x" * 5000], "--study: a study name has at most 256 characters"),
        (["--timeout", "nan"], "Invalid value for '--timeout': give a finite number > 0"),
        (["--workload", "nope.onnx"], "nope.onnx"),
    ],
)
def test_bad_command_line_values_exit_2(tmp_path, args, message) -> None:
    out, storage = run_search(tmp_path, write_space(tmp_path, space_data()), *args)
    assert out.exit_code == 2 and message in out.stderr and "Traceback" not in out.output
    assert not storage.exists()


def test_map_refuses_a_budget_of_nan() -> None:
    out = cli(
        "map", "--arch", "simba-chip", "--layer", "K=8,C=8,P=4,Q=4", "--budget-seconds", "nan"
    )
    assert out.exit_code == 2 and "give a finite number > 0, got 'nan'" in out.stderr


# Mutations that each make a space invalid; a generated bad space applies one to three.
IDENT = st.from_regex(r"[a-z][a-z_]{2,10}", fullmatch=True)
NOT_A_COUNT = st.sampled_from([0, -1, True, 2.5, "ten", math.nan, math.inf, None])


@st.composite
def mutation(draw):
    kind = draw(st.integers(0, 11))
    if kind == 0:
        key = draw(IDENT.filter(lambda k: k not in SearchSpace.model_fields))
        return lambda d: d.update({key: 1})
    if kind == 1:
        name = draw(
            IDENT.filter(lambda k: k not in mg.templates.get_template("simba").Params.model_fields)
        )
        return lambda d: d["params"].update({name: {"choices": [1, 2]}})
    if kind == 2:
        bad = draw(st.sampled_from([0, -4, True, "wide", math.nan, math.inf, 4.5, 1000]))
        where = draw(st.sampled_from(["fixed", "choices", "int"]))
        value = {"fixed": bad, "choices": {"choices": [4, bad]}, "int": {"int": [4, bad]}}[where]
        return lambda d: d["params"].update({"vector_width": value})
    if kind == 3:
        metric = draw(IDENT.filter(lambda m: m not in METRICS))
        return lambda d: d.update(objectives=[*d["objectives"], metric])
    if kind == 4:
        bad = draw(NOT_A_COUNT)
        return lambda d: d.update(trials=bad)
    if kind == 5:
        name = draw(IDENT.filter(lambda s: s not in SAMPLERS))
        return lambda d: d.update(sampler=name)
    if kind == 6:
        bound = draw(st.sampled_from([math.nan, math.inf, -math.inf, "big", True]))
        metric = draw(st.sampled_from(["area_mm2", "wattage"]))
        return lambda d: d.update(limits=[{"metric": metric, "max": bound}])
    if kind == 7:
        flow = draw(IDENT.filter(lambda f: f not in mg.templates.get_template("simba").dataflows))
        return lambda d: d.update(dataflow={"choices": ["ws", flow]})
    if kind == 8:
        stem = draw(IDENT)
        return lambda d: d.update(workloads=[f"{stem}-missing.yaml"])
    if kind == 9:
        text = draw(
            st.sampled_from(["vector_width >", "banks > 2", "vector_width / (accum_collector * 0)"])
        )
        return lambda d: d.update(constraints=[text])
    if kind == 10:
        option = draw(IDENT.filter(lambda o: o not in ("samples", "rounds", "population")))
        return lambda d: d.update(mapper={"name": "fast", "options": {option: 1}})
    name = draw(IDENT.filter(lambda n: n not in mg.mapper.available_mappers()))
    return lambda d: d.update(mapper={"name": name})


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mutations=st.lists(mutation(), min_size=1, max_size=3))
def test_every_generated_bad_space_exits_2_with_a_message_and_no_trial(tmp_path, mutations) -> None:
    data = space_data()
    for apply in mutations:
        apply(data)
    path = write_space(tmp_path, data, "bad.yaml")
    storage = tmp_path / "bad.journal"
    out = cli("search", path, "--storage", storage, "--no-report")
    assert out.exit_code == 2, (data, out.output)
    assert out.stderr.startswith(f"error: {path}: ") and "Traceback" not in out.output
    assert not storage.exists()


# ---- 3. an exception in user code is a failure, not an infeasible design ----------------------
def test_a_plugin_that_raises_fails_its_trials_and_stops_the_search(tmp_path) -> None:
    # the space holds two designs: 4 lanes (priced) and 8 lanes (the plug-in raises KeyError:
    # 64); the first is checked before the search, the second fails every time it is tried
    params = {**SMALL_PARAMS, "vector_units": 4, "weight_collector": 1, "accum_collector": 4}
    data = space_data(
        params=params, dataflow="os-local-ws", cost_model=f"{RAISES}:RaiseOnWide", sampler="random"
    )
    out, storage = run_search(tmp_path, write_space(tmp_path, data), "--max-failures", "3")
    assert out.exit_code == 1, out.output
    assert "stopped: 3 evaluations in a row failed" in out.stderr
    assert "raise-on-wide" in out.stderr and "KeyError: 64" in out.stderr
    assert out.stderr.count("Traceback (most recent call last)") == 1  # shown once
    study = load_study("small", str(storage))
    failed = study.trials("failed")
    # 3 in a row; one more before them when the 4-lane design came between
    assert len(failed) in (3, 4) and all(t.params["vector_width"] == 8 for t in failed)
    raw = optuna.load_study(study_name="small", storage=open_storage(str(storage), create=False))
    for t in raw.get_trials(states=(optuna.trial.TrialState.FAIL,)):
        record = t.user_attrs["magnet"]
        assert "KeyError: 64" in record["reason"]
        assert f'File "{RAISES}", line' in record["traceback"]  # the plug-in's own frame
    assert not study.trials("infeasible")  # never recorded as an infeasible design
    assert [t.params["vector_width"] for t in study.trials("ok")] == [4]


# ---- 4. a plug-in has one identity everywhere -------------------------------------------------
def _mac_model(mac_pj: float, class_name: str = "Custom") -> type[CostModel]:
    """A cost model named "custom" (the default name users leave) pricing only the MAC."""

    def energy_pj(self, component, action):
        return mac_pj

    return type(
        class_name,
        (CostModel,),
        {
            "name": "custom",
            "supports": lambda self, c: c.cls == "mac",
            "energy_pj": energy_pj,
            "leakage_mw": lambda self, c: 0.0,
            "area_um2": lambda self, c: 100.0,
        },
    )


def _math_pj_and_macs(study) -> dict[str, tuple[float, float]]:
    """Per design: math energy, and MACs x the dynamic-energy scale of its supply (the
    designs give a clock and run at the lowest supply that meets it, not 16 nm's 0.85 V)."""
    out = {}
    for t in study.trials("ok"):
        record = t.records[0]
        out[json.dumps(t.params, sort_keys=True)] = (
            record.energy_pj_by_category["math"],
            record.macs * (record.voltage_v / nominal_voltage(16)) ** 2,
        )
    return out


def _plugin_file(tmp_path: Path, name: str, mac_pj: float) -> Path:
    path = tmp_path / name
    path.write_text(
        "from magnet.cost.contract import CostModel\n\n\n"
        "class Custom(CostModel):\n"
        '    name = "custom"\n\n'
        "    def supports(self, component):\n"
        '        return component.cls == "mac"\n\n'
        "    def energy_pj(self, component, action):\n"
        f"        return {mac_pj}\n\n"
        "    def leakage_mw(self, component):\n"
        "        return 0.0\n\n"
        "    def area_um2(self, component):\n"
        "        return 100.0\n"
    )
    return path


def _same_designs_delta(a, b, mac_pj_delta: float) -> None:
    """The same designs, priced by two models whose MAC energies differ by ``mac_pj_delta``
    (at the nominal supply): math energy differs by MACs x that x the supply's scale (the
    adder trees come from the built-in table)."""
    ma, mb = _math_pj_and_macs(a), _math_pj_and_macs(b)
    assert ma and set(ma) == set(mb)
    for key, (math_a, macs) in ma.items():
        assert mb[key][0] - math_a == pytest.approx(macs * mac_pj_delta, rel=1e-9)


def test_two_plugins_of_one_name_never_share_cached_mappings(tmp_path) -> None:
    # one process (a notebook), two plug-in files whose models are both called "custom"
    runs = []
    for i, mac_pj in enumerate((0.1, 10.0)):
        plugin = _plugin_file(tmp_path, f"p{i}.py", mac_pj)
        space = space_data(cost_model=f"{plugin}:Custom", sampler="random")
        runs.append(search(space, n_trials=3, storage=str(tmp_path / f"{i}.journal"), seed=5))
    _same_designs_delta(runs[0], runs[1], 10.0 - 0.1)


def test_re_registering_a_plugin_in_a_notebook_takes_effect(tmp_path) -> None:
    runs = []
    try:
        for i, mac_pj in enumerate((1.0, 2.0)):
            mg.register_cost_model("test-notebook-model", _mac_model(mac_pj, f"Cell{i}"))
            space = space_data(cost_model="test-notebook-model", sampler="random")
            runs.append(search(space, n_trials=3, storage=str(tmp_path / f"{i}.journal"), seed=5))
    finally:
        unregister_cost_model("test-notebook-model")
    _same_designs_delta(runs[0], runs[1], 1.0)


def test_registrations_in_the_driver_reach_ray_workers(tmp_path, ray_cluster) -> None:
    # a cost model, a mapper and a template defined here (not importable by a worker) and
    # registered in this process only; the workers get them with each job
    from magnet.mapper import unregister_mapper
    from magnet.mapper.mappers import FastMapper
    from magnet.templates import unregister_template
    from magnet.templates.simba import Simba

    mapper = type("DriverMapper", (FastMapper,), {"name": "test-driver-mapper"})
    template = type("DriverTemplate", (Simba,), {"name": "test-driver-template", "presets": {}})
    mg.register_cost_model("test-driver-only", _mac_model(3.0, "DriverOnly"))
    mg.register_mapper(mapper)
    mg.register_template(template)
    try:
        space = space_data(
            template="test-driver-template",
            cost_model="test-driver-only",
            mapper={"name": "test-driver-mapper", "options": {"samples": 300, "rounds": 5}},
            sampler="random",
        )
        a = search(space, n_trials=4, storage=str(tmp_path / "a.journal"), seed=2)
        b = search(
            space,
            n_trials=4,
            storage=str(tmp_path / "b.journal"),
            seed=2,
            workers=2,
            ray_address=ray_cluster,
        )
    finally:
        unregister_cost_model("test-driver-only")
        unregister_mapper("test-driver-mapper")
        unregister_template("test-driver-template")
    assert not b.trials("failed") and b.counts()["designs"] == 4
    _same_designs_delta(a, b, 0.0)  # the workers priced and mapped with the driver's classes


# ---- 5. the budget goes to new designs -------------------------------------------------------
def _designs(study) -> list[str]:
    return [
        json.dumps(t.params, sort_keys=True)
        for t in study.trials()
        if t.status in ("ok", "infeasible")
    ]


@pytest.mark.parametrize("sampler", ["nsga2", "tpe"])
def test_trials_count_distinct_designs_and_repeats_are_answered_from_the_study(
    tmp_path, sampler
) -> None:
    # the small space holds 2 x 2 x 2 x 2 designs x 2 dataflows = 32
    space = write_space(tmp_path, space_data())
    out, storage = run_search(tmp_path, space, "--sampler", sampler, "--trials", "24")
    assert out.exit_code == 0, out.output
    study = load_study("small", str(storage))
    designs = _designs(study)
    assert len(designs) == 24 == len(set(designs)) == study.counts()["designs"]
    assert f"{study.counts()['repeat']} repeats answered from the study" in out.stderr
    by_number = {t.number: t for t in study.trials()}
    for t in study.trials("repeat"):
        held = by_number[t.number]
        assert t.state == "PRUNED" and not t.records and t.seconds is None
        original = by_number[int(t.reason.split("#")[1])]
        assert original.params == held.params and original.status in ("ok", "infeasible")


def test_a_budget_larger_than_the_space_evaluates_each_design_once(tmp_path) -> None:
    out, storage = run_search(tmp_path, write_space(tmp_path, space_data()), "--trials", "40")
    assert out.exit_code == 0, out.output
    assert "the space holds 32 designs" in out.stderr
    designs = _designs(load_study("small", str(storage)))
    assert len(designs) == 32 == len(set(designs))


def test_resume_does_not_replay_the_samplers_designs(tmp_path) -> None:
    storage = str(tmp_path / "s.journal")
    first = _designs(search(space_data(sampler="random"), n_trials=8, storage=storage, seed=1))
    both = _designs(search(space_data(sampler="random"), n_trials=16, storage=storage, seed=1))
    assert both[:8] == first and len(set(both)) == 16  # 8 new designs, none evaluated twice


# ---- 8. Optuna's own tools read a magnet study ------------------------------------------------
def _study_with_every_outcome(tmp_path: Path, max_area_mm2: float = 0.38) -> tuple[str, object]:
    # ws-local-os needs an accumulation collector: the 8 designs with accum_collector 0 cannot
    # run it; the other 8 are 0.337-0.403 mm^2, so a 0.38 mm^2 limit is missed by 2; the
    # random sampler proposes designs again, answered from the study
    limits = [{"metric": "area_mm2", "max": max_area_mm2}]
    space = space_data(limits=limits, sampler="random", dataflow={"choices": ["ws-local-os"]})
    storage = str(tmp_path / "s.journal")
    study = search(space, n_trials=16, storage=storage, seed=3)
    assert study.trials("infeasible") and study.trials("repeat")
    return storage, study


def test_optunas_tools_read_a_magnet_study(tmp_path) -> None:
    storage, study = _study_with_every_outcome(tmp_path)
    assert study.trials("ok")
    raw = optuna.load_study(study_name="small", storage=open_storage(storage, create=False))
    assert raw.metric_names == ["energy_pj", "latency_cycles", "area_mm2"]
    complete = raw.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert complete
    for t in complete:  # real values only: those of the design's metrics, no stand-ins
        metrics = t.user_attrs["magnet"]["metrics"]
        assert t.values == [metrics[m] for m in raw.metric_names]
    cannot_run = [t for t in study.trials("infeasible") if not t.metrics]
    assert cannot_run and all(t.state == "PRUNED" for t in cannot_run)
    figure = optuna.visualization.plot_pareto_front(raw)
    assert figure.layout.scene.xaxis.title.text == "energy_pj"
    points = sum(len(trace.x) for trace in figure.data if trace.x is not None)
    assert points == len(complete)


def test_optuna_dashboard_reads_a_magnet_study(tmp_path) -> None:
    optuna_dashboard = pytest.importorskip("optuna_dashboard")
    import io
    from wsgiref.util import setup_testing_defaults

    storage, study = _study_with_every_outcome(tmp_path)
    app = optuna_dashboard.wsgi(open_storage(storage, create=False))

    def get(path: str) -> dict:
        environ: dict = {"PATH_INFO": path, "QUERY_STRING": "after=0", "wsgi.input": io.BytesIO()}
        setup_testing_defaults(environ)
        status = []
        body = b"".join(app(environ, lambda s, h, *a: status.append(s)))
        assert status[0].startswith("200"), (path, status, body[:300])
        return json.loads(body)

    listed = get("/api/studies")["study_summaries"]
    assert [s["study_name"] for s in listed] == ["small"]
    detail = get(f"/api/studies/{listed[0]['study_id']}")
    assert detail["objective_names"] == ["energy_pj", "latency_cycles", "area_mm2"]
    states = {t["state"] for t in detail["trials"]}
    assert {"Complete", "Pruned"} <= states
    values = [v for t in detail["trials"] for v in (t.get("values") or [])]
    assert values and max(values) < 1e29
    front = {t["number"] for t in detail["best_trials"]}
    assert {t.number for t in study.pareto_front()} <= front


# ---- 9. limits rank as a user expects --------------------------------------------------------
def test_a_design_that_cannot_run_ranks_below_every_limit_miss(tmp_path) -> None:
    # Optuna ranks infeasible trials by their total constraint violation (smaller first); a
    # 0.02 mm^2 limit is missed by every design that runs, by 15.9-19.2x
    _, study = _study_with_every_outcome(tmp_path, max_area_mm2=0.02)

    def violation(t) -> float:
        return sum(max(0.0, v) for v in t.constraints.values())

    misses = [t for t in study.trials("infeasible") if t.metrics]
    cannot_run = [t for t in study.trials("infeasible") if not t.metrics]
    assert misses and cannot_run
    assert max(violation(t) for t in misses) < min(violation(t) for t in cannot_run)
    # the worst miss, about (0.4033 - 0.02) / 0.02 = 19.2, squashed to 19.2 / 20.2 = 0.95
    worst = max(misses, key=lambda t: t.metrics["area_mm2"])
    miss = (worst.metrics["area_mm2"] - 0.02) / 0.02
    assert worst.constraints["area_mm2<=0.02"] == pytest.approx(miss / (1 + miss), rel=1e-12)
    assert violation(worst) < 1.0 < 2.0 == violation(cannot_run[0])  # feasible 1 + limit 1
