"""Issue 29, item 8: a wrong argument to the Python API is one ``MagnetError`` naming the
function, the argument and what is allowed, never an AttributeError, TypeError, KeyError or a
pydantic ValidationError from inside; and every template under ``magnet.templates`` builds a
design the same way (``mg.templates.package(...)`` like ``mg.templates.simba(...)``)."""

from __future__ import annotations

import inspect
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import magnet as mg
from magnet.arguments import _parameter_hints
from magnet.errors import MagnetError
from tests.conftest import DATA

NAN, INF = math.nan, math.inf
ARCH = mg.templates.simba(pe_rows=2, pe_cols=2)
DESIGN = mg.design(ARCH, "ws")
LAYER = mg.parse_layer("K=16,C=16,P=4,Q=4")
NET = mg.Network.of("two", [LAYER, (mg.parse_layer("K=8,C=16,P=4", name="fc"), 2)])
FEW = {"evaluations": 64}  # a small budget: a mapper's search ends quickly


def refused(call: Callable[[], Any], *patterns: str) -> str:
    """``call`` raises a MagnetError whose one-line message matches every regex pattern."""
    with pytest.raises(MagnetError) as info:
        call()
    message = str(info.value)
    assert "\n" not in message, message
    for pattern in patterns:
        assert re.search(pattern, message), (pattern, message)
    return message


# ---- the examples and their neighbours ---------------------------------------------
BAD_CALLS: list[tuple[str, Callable[[], Any], tuple[str, ...]]] = [
    # the arguments swapped, or a layer given as its text
    (
        "map_layer('K=64,C=64', chip)",
        lambda: mg.map_layer("K=64,C=64", DESIGN),
        (r"^map_layer\(\): layer: expected a Layer", "parse_layer", "got str 'K=64,C=64'"),
    ),
    (
        "map_layer(design, layer)",
        lambda: mg.map_layer(DESIGN, LAYER),
        (r"map_layer\(\): layer: expected a Layer", "got a Design"),
    ),
    (
        "map_layer(layer, 'simba-chip')",
        lambda: mg.map_layer(LAYER, "simba-chip"),
        (r"map_layer\(\): arch: expected an Arch .* or a Design", "load_arch"),
    ),
    (
        "parse_layer(None)",
        lambda: mg.parse_layer(None),
        (r"parse_layer\(\): text: .*string", "None"),
    ),
    ("parse_layer(['K=1'])", lambda: mg.parse_layer(["K=1"]), (r"text: expected a string",)),
    ("parse_layer(name='')", lambda: mg.parse_layer("K=4", name=""), (r"name: .*not empty",)),
    # design: the cost model, the dataflow, the NoC model, an unknown keyword
    (
        "design(chip, 'ws', cost_model=5)",
        lambda: mg.design(ARCH, "ws", cost_model=5),
        (r"^design\(\): cost_model: expected a string, a CostModel, a list", "got 5$"),
    ),
    (
        "design(chip, ['ws'])",
        lambda: mg.design(ARCH, ["ws"]),
        (r"design\(\): dataflow: expected a string, a path, a Dataflow or None",),
    ),
    (
        "design(chip, noc=5)",
        lambda: mg.design(ARCH, noc=5),
        (r"noc: expected one of 'wires', 'none'",),
    ),
    (
        "design(chip, nocc='none')",
        lambda: mg.design(ARCH, nocc="none"),
        (r"design\(\): .*unexpected keyword argument 'nocc'", "its arguments: arch, dataflow"),
    ),
    ("design(None)", lambda: mg.design(None), (r"design\(\): arch: expected an Arch",)),
    # the mapper's arguments
    (
        "map_layer(objective=5)",
        lambda: mg.map_layer(LAYER, DESIGN, objective=5),
        (r"objective: expected 'edp', 'energy', 'latency', weights", "got 5"),
    ),
    (
        "map_layer(objective='')",
        lambda: mg.map_layer(LAYER, DESIGN, objective=""),
        (r"--objective: cannot read objective ''; allowed: edp, energy, latency",),
    ),
    (
        "map_layer(seed=-1)",
        lambda: mg.map_layer(LAYER, DESIGN, seed=-1),
        (r"seed: expected a whole number >= 0 and <= 4,294,967,295, got -1",),
    ),
    (
        "map_layer(seed=2**100)",
        lambda: mg.map_layer(LAYER, DESIGN, seed=2**100),
        (r"seed: .*<= 4,294",),
    ),
    (
        "map_layer(seed=True)",
        lambda: mg.map_layer(LAYER, DESIGN, seed=True),
        (r"seed: .*got True",),
    ),
    (
        "map_layer(progress=5)",
        lambda: mg.map_layer(LAYER, DESIGN, progress=5),
        (r"progress: expected a function",),
    ),
    # budgets: NaN, negative, zero, unknown keys, a dict where one is accepted
    (
        "Budget(seconds=nan)",
        lambda: mg.Budget(seconds=NAN),
        (r"^Budget: seconds: expected a finite number, got nan",),
    ),
    ("Budget(seconds=inf)", lambda: mg.Budget(seconds=INF), (r"Budget: seconds: .*finite",)),
    ("Budget(seconds=-1)", lambda: mg.Budget(seconds=-1), (r"Budget: seconds: .*greater than 0",)),
    ("Budget(seconds=0)", lambda: mg.Budget(seconds=0), (r"Budget: seconds: .*greater than 0",)),
    (
        "Budget(seconds='5')",
        lambda: mg.Budget(seconds="5"),
        (r"Budget: seconds: expected a number",),
    ),
    (
        "Budget(evaluations=0)",
        lambda: mg.Budget(evaluations=0),
        (r"Budget: evaluations: .*greater than or equal to 1",),
    ),
    (
        "Budget(evaluations=True)",
        lambda: mg.Budget(evaluations=True),
        (r"evaluations: expected a whole number",),
    ),
    (
        "Budget(minutes=3)",
        lambda: mg.Budget(minutes=3),
        (r"Budget: minutes: unknown field; allowed: evaluations, seconds",),
    ),
    (
        "Budget(5)",
        lambda: mg.Budget(5),
        (r"Budget: give the fields by name \(evaluations, seconds\)",),
    ),
    (
        "map_layer(budget={'minutes': 3})",
        lambda: mg.map_layer(LAYER, DESIGN, budget={"minutes": 3}),
        (r"^map_layer\(\): budget: minutes: unknown field; allowed: evaluations, seconds",),
    ),
    (
        "evaluate(net, budget={'minutes': 3})",
        lambda: mg.evaluate(NET, DESIGN, budget={"minutes": 3}),
        (r"^evaluate\(\): budget: minutes: unknown field",),
    ),
    (
        "map_layer(budget={'seconds': nan})",
        lambda: mg.map_layer(LAYER, DESIGN, budget={"seconds": NAN}),
        (r"map_layer\(\): budget: seconds: expected a finite number",),
    ),
    (
        "map_layer(budget=5)",
        lambda: mg.map_layer(LAYER, DESIGN, budget=5),
        (r"budget: expected a Budget .*, a dict with strings as keys or None, got 5",),
    ),
    (
        "search(space dict with mapper.budget.minutes)",
        lambda: mg.search({"name": "x", "template": "simba", "mapper": {"budget": {"minutes": 3}}}),
        (r"mapper\.budget\.minutes: unknown field; allowed: evaluations, seconds",),
    ),
    (
        "get_mapper('fast', budget={'seconds': 1})",
        lambda: mg.mapper.get_mapper("fast", budget={"seconds": 1}),
        (r"budget: expected a Budget",),
    ),
    (
        "get_mapper('fast', objective=5)",
        lambda: mg.mapper.get_mapper("fast", objective=5),
        (r"--objective: expected a string, an Objective or None, got 5",),
    ),
    (
        "get_mapper(['fast'])",
        lambda: mg.mapper.get_mapper(["fast"]),
        (r"get_mapper\(\): name: expected a string or a Mapper",),
    ),
    # evaluate
    (
        "evaluate('resnet18', design)",
        lambda: mg.evaluate("resnet18", DESIGN),
        (
            r"evaluate\(\): workload: expected a Layer .* or a Network .*load_workload",
            "got str 'resnet18'",
        ),
    ),
    (
        "evaluate(pipeline='yes')",
        lambda: mg.evaluate(LAYER, DESIGN, pipeline="yes"),
        (r"pipeline: expected True or False",),
    ),
    (
        "evaluate(layer, design, 'ws')",
        lambda: mg.evaluate(LAYER, DESIGN, "ws"),
        (r"mapping: expected a Mapping, a LayerMappings or None",),
    ),
    # search: every argument is checked before a study is made
    (
        "search(42)",
        lambda: mg.search(42),
        (
            r"^search\(\): space: expected a string, a path, a SearchSpace "
            r"or a dict with strings as keys, got 42$",
        ),
    ),
    ("search(None)", lambda: mg.search(None), (r"search\(\): space: .*got None",)),
    (
        "search(n_trials=0)",
        lambda: mg.search("quickstart", n_trials=0),
        (r"n_trials: expected a whole number >= 1 or None, got 0",),
    ),
    (
        "search(n_trials=True)",
        lambda: mg.search("quickstart", n_trials=True),
        (r"n_trials: .*got True",),
    ),
    (
        "search(workers=nan)",
        lambda: mg.search("quickstart", workers=NAN),
        (r"workers: expected a whole number >= 1, got nan",),
    ),
    (
        "search(timeout=-1)",
        lambda: mg.search("quickstart", timeout=-1),
        (r"timeout: expected a finite number > 0 or None",),
    ),
    ("search(seed=-1)", lambda: mg.search("quickstart", seed=-1), (r"search\(\): seed: .*>= 0",)),
    (
        "search(seed=2**40)",
        lambda: mg.search("quickstart", seed=2**40),
        (r"seed: .*<= 4,294,967,295",),
    ),
    (
        "search(storage=5)",
        lambda: mg.search("quickstart", storage=5),
        (r"storage: expected a string, a path or None, got 5",),
    ),
    (
        "search(workload=5)",
        lambda: mg.search("quickstart", workload=5),
        (r"workload: expected a string, a list of strings or None",),
    ),
    (
        "search(log=5)",
        lambda: mg.search("quickstart", log=5),
        (r"log: expected a function or None",),
    ),
    (
        "search(trials=8)",
        lambda: mg.search("quickstart", trials=8),
        (r"unexpected keyword argument 'trials'", "n_trials"),
    ),
    (
        "load_study(None)",
        lambda: mg.load_study(None),
        (r"load_study\(\): name: expected a string, got None",),
    ),
    (
        "load_study('x', storage=5)",
        lambda: mg.load_study("x", storage=5),
        (r"storage: expected a string, a path or None, got 5",),
    ),
    # layers
    (
        "conv2d(in_channels=None)",
        lambda: mg.conv2d(in_channels=None, out_channels=8, out_height=4, out_width=4),
        (r"conv2d\(\): in_channels: expected a whole number in 1\.\.2,147,483,647, got None",),
    ),
    (
        "conv2d(in_channels='8')",
        lambda: mg.conv2d(in_channels="8", out_channels=8, out_height=4, out_width=4),
        (r"in_channels: .*got str '8'",),
    ),
    (
        "conv2d(groups=0)",
        lambda: mg.conv2d(in_channels=8, out_channels=8, out_height=4, out_width=4, groups=0),
        (r"groups: expected a whole number in 1\.\.2,147,483,647, got 0",),
    ),
    (
        "conv2d(kernel=(3,))",
        lambda: mg.conv2d(in_channels=8, out_channels=8, out_height=4, out_width=4, kernel=(3,)),
        (r"kernel: expected a whole number in 1\.\.2,147,483,647 or a pair \(height, width\)",),
    ),
    (
        "conv2d(out_channels only)",
        lambda: mg.conv2d(in_channels=8),
        (r"conv2d\(\): missing a required argument: 'out_channels'",),
    ),
    ("gemm(m=True)", lambda: mg.gemm(m=True, k=1, n=1), (r"gemm\(\): m: .*got True",)),
    ("matmul(heads='2')", lambda: mg.matmul(m=1, k=1, n=1, heads="2"), (r"matmul\(\): heads: ",)),
    (
        "fully_connected(in_features=nan)",
        lambda: mg.fully_connected(in_features=NAN, out_features=2),
        (r"in_features: .*got nan",),
    ),
    (
        "Layer(K=0)",
        lambda: mg.Layer(K=0),
        (r"^Layer: K: Input should be greater than or equal to 1",),
    ),
    (
        "Network.of('n', [layer, layer])",
        lambda: mg.Network.of("n", [LAYER, LAYER]),
        (r"^network 'n': layer names must be unique; repeated: layer$",),
    ),
    (
        "Network(name='x', layers=5)",
        lambda: mg.Network(name="x", layers=5),
        (r"^Network: layers: Input should be a valid tuple",),
    ),
    (
        "Network.of('n', [(layer, 0)])",
        lambda: mg.Network.of("n", [(LAYER, 0)]),
        (r"^Network\.of\(\): layers: expected a list of Layers or \(Layer, repeat >= 1\) pairs",),
    ),
    (
        "Mapping.from_yaml(None)",
        lambda: mg.Mapping.from_yaml(None),
        (r"^Mapping\.from_yaml\(\): path: expected a string or a path, got None",),
    ),
    (
        "LayerMappings.from_yaml(5)",
        lambda: mg.LayerMappings.from_yaml(5),
        (r"^LayerMappings\.from_yaml\(\): path: ",),
    ),
    (
        "register_template(Template)",
        lambda: mg.register_template(mg.Template),
        (r"template class Template does not implement assemble, dataflow",),
    ),
    (
        "map_layer(budget={1: 2})",
        lambda: mg.map_layer(LAYER, DESIGN, budget={1: 2}),
        (r"budget: expected a Budget .*, a dict with strings as keys or None, got dict \{1: 2\}",),
    ),
    ("Network.of('n', 5)", lambda: mg.Network.of("n", 5), (r"of\(\): layers: expected a list of",)),
    # loaders
    (
        "load_workload(None)",
        lambda: mg.load_workload(None),
        (r"load_workload\(\): spec: expected a string or a path, got None",),
    ),
    (
        "load_workload(batch=0)",
        lambda: mg.load_workload("resnet18", batch=0),
        (r"batch: expected a whole number >= 1 or None, got 0",),
    ),
    (
        "load_arch(5)",
        lambda: mg.load_arch(5),
        (r"load_arch\(\): spec: expected a string or a path, got 5",),
    ),
    (
        "load_arch('')",
        lambda: mg.load_arch(""),
        (r"empty architecture name; give a preset \(simba-chip", "a template \\(simba"),
    ),
    (
        "load_dataflow('')",
        lambda: mg.load_dataflow(""),
        (r"load_dataflow\(\): path: expected a string that is not empty or a path",),
    ),
    ("load_timeloop(None)", lambda: mg.load_timeloop(None), (r"load_timeloop\(\): path: ",)),
    (
        "load_cost_model(None)",
        lambda: mg.load_cost_model(None),
        (r"load_cost_model\(\): spec: expected a string or a CostModel, got None",),
    ),
    (
        "load_cost_model(technology_nm=nan)",
        lambda: mg.load_cost_model("horowitz45", technology_nm=NAN),
        (r"technology_nm: expected a finite number or None",),
    ),
    ("load_chain(5)", lambda: mg.load_chain(5), (r"load_chain\(\): specs: ",)),
    (
        "price_arch('simba-chip')",
        lambda: mg.price_arch("simba-chip"),
        (r"price_arch\(\): arch: expected an Arch",),
    ),
    (
        "price_arch(chip, 5)",
        lambda: mg.price_arch(ARCH, 5),
        (r"models: expected a CostModel, a list of CostModels or None",),
    ),
    (
        "dataflow_for('simba-chip', 'ws')",
        lambda: mg.dataflow_for("simba-chip", "ws"),
        (r"dataflow_for\(\): arch: expected an Arch",),
    ),
    (
        "map_network(net, chip)",
        lambda: mg.map_network(NET, ARCH),
        (r"map_network\(\): design: expected a Design .*mg|magnet\.design",),
    ),
    (
        "map_network(net, design, cache=5)",
        lambda: mg.map_network(NET, DESIGN, cache=5),
        (r"cache: expected a dict of MapOutcomes or None",),
    ),
    # plug-in registration
    (
        "register_cost_model('x', None)",
        lambda: mg.register_cost_model("x", None),
        (r"register_cost_model\(\): cls: expected a subclass of CostModel, got None",),
    ),
    (
        "register_mapper('fast')",
        lambda: mg.register_mapper("fast"),
        (r"register_mapper\(\): cls: expected a subclass of Mapper",),
    ),
    (
        "register_template(object)",
        lambda: mg.register_template(object),
        (r"register_template\(\): template: .*got class object",),
    ),
    (
        "get_template(None)",
        lambda: mg.templates.get_template(None),
        (r"get_template\(\): name: expected a string, got None",),
    ),
    (
        "Template.build(5)",
        lambda: mg.templates.get_template("simba").build(5),
        (r"build\(\): values: expected a dict",),
    ),
    ("arch_to_data(None)", lambda: mg.templates.arch_to_data(None), (r"arch_to_data\(\): arch: ",)),
    # the dataclasses people build
    (
        "Objective(energy=nan)",
        lambda: mg.Objective(energy=NAN),
        (r"^Objective: energy: expected a finite number >= 0, got nan",),
    ),
    (
        "Objective(energy=0, latency=0)",
        lambda: mg.Objective(energy=0, latency=0),
        (r"positive weight",),
    ),
    (
        "LayerMappings(by_name=5)",
        lambda: mg.LayerMappings(by_name=5),
        (r"^LayerMappings: by_name: expected a dict of Mappings, got 5",),
    ),
]


@pytest.mark.parametrize(
    ("call", "patterns"), [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_a_bad_argument_is_one_line_naming_the_function_the_argument_and_what_is_allowed(
    call: Callable[[], Any], patterns: tuple[str, ...], tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a search refused here leaves nothing behind
    refused(call, *patterns)
    assert list(tmp_path.iterdir()) == []


def test_a_refused_search_writes_nothing_to_its_storage(tmp_path: Path, monkeypatch) -> None:
    """Before this, ``seed=-1`` made the study (with seed -1 in its configuration) and then
    failed inside Optuna's sampler with a ValueError."""
    monkeypatch.chdir(tmp_path)
    journal = tmp_path / "runs.journal"
    for bad in ({"seed": -1}, {"seed": 2**32}, {"n_trials": 0}, {"timeout": NAN}):
        refused(lambda bad=bad: mg.search("quickstart", storage=str(journal), **bad), "search")
    assert list(tmp_path.iterdir()) == []


# ---- every public function, every argument ---------------------------------------------
def public_functions() -> dict[str, Callable[..., Any]]:
    """The functions of ``magnet`` and ``magnet.templates``' public names (not classes)."""
    found = {}
    for module, prefix in ((mg, ""), (mg.templates, "templates.")):
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                found[prefix + name] = obj
    return found


NO_ARGUMENTS = {"templates.templates", "templates.presets"}


def test_every_public_function_checks_its_arguments() -> None:
    """A function added to the public API without ``@checked_call`` fails here; the hints of
    each resolve (a hint naming a type imported only for mypy would fail at its first call)."""
    functions = public_functions()
    assert {"map_layer", "parse_layer", "design", "search", "templates.package"} <= set(functions)
    for name, func in functions.items():
        if name in NO_ARGUMENTS:
            continue
        assert hasattr(func, "__wrapped__"), f"{name} is not wrapped with checked_call"
        _parameter_hints(func.__wrapped__)


#: A call of each function that works; the fuzz below spoils one argument at a time.
GOOD: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "design": (mg.design, {"arch": ARCH, "dataflow": "ws", "cost_model": None, "noc": "wires"}),
    "map_layer": (
        mg.map_layer,
        {
            "layer": LAYER,
            "arch": DESIGN,
            "mapper": "fast",
            "objective": "edp",
            "seed": 0,
            "budget": FEW,
        },
    ),
    "evaluate": (
        mg.evaluate,
        {
            "workload": LAYER,
            "arch": DESIGN,
            "mapping": None,
            "source": None,
            "budget": FEW,
            "pipeline": False,
        },
    ),
    "map_network": (
        mg.map_network,
        {"network": NET, "design": DESIGN, "mapper": "fast", "budget": mg.Budget(**FEW)},
    ),
    "parse_layer": (mg.parse_layer, {"text": "K=4,C=4", "name": "l"}),
    "conv2d": (
        mg.conv2d,
        {
            "name": "c",
            "in_channels": 4,
            "out_channels": 4,
            "out_height": 2,
            "out_width": 2,
            "kernel": 3,
            "stride": 1,
            "dilation": 1,
            "groups": 1,
            "batch": 1,
        },
    ),
    "depthwise_conv2d": (
        mg.depthwise_conv2d,
        {"channels": 4, "out_height": 2, "out_width": 2, "kernel": (3, 3)},
    ),
    "gemm": (mg.gemm, {"m": 2, "k": 2, "n": 2, "batch": 1}),
    "fully_connected": (mg.fully_connected, {"in_features": 2, "out_features": 2}),
    "matmul": (mg.matmul, {"m": 2, "k": 2, "n": 2, "heads": 2}),
    "load_workload": (mg.load_workload, {"spec": "resnet18", "batch": 1}),
    "load_arch": (mg.load_arch, {"spec": "simba-chip"}),
    "load_dataflow": (mg.load_dataflow, {"path": str(DATA / "dataflow" / "pe_ws.yaml")}),
    "load_timeloop": (mg.load_timeloop, {"path": str(DATA / "timeloop_conv1d.yaml")}),
    "load_cost_model": (mg.load_cost_model, {"spec": "horowitz45", "technology_nm": 45.0}),
    "load_chain": (mg.load_chain, {"specs": ["horowitz45"], "technology_nm": None}),
    "price_arch": (mg.price_arch, {"arch": ARCH, "models": None, "noc": "wires"}),
    "dataflow_for": (mg.dataflow_for, {"arch": ARCH, "spec": "ws"}),
    "templates.simba": (mg.templates.simba, {"name": "s"}),
    "templates.package": (mg.templates.package, {"name": "p"}),
    "templates.arch_to_data": (mg.templates.arch_to_data, {"arch": ARCH}),
    "templates.arch_from_data": (
        mg.templates.arch_from_data,
        {"data": {"template": "simba"}, "source": "s"},
    ),
    "templates.get_template": (mg.templates.get_template, {"name": "simba", "source": None}),
    "read_record": (
        mg.read_record,
        {"data": json.loads((DATA / "records" / "v3.json").read_text())},
    ),
}
#: What an adversarial caller tries for any argument.
SPOILERS = [None, 0, -1, 1.5, NAN, INF, True, "", "x", [], {}, [None], 2**100, object()]


@pytest.mark.parametrize("name", sorted(GOOD))
def test_no_argument_of_any_public_function_escapes_as_another_exception(name: str) -> None:
    """Each argument in turn given each spoiler: the call works or raises a MagnetError,
    never an AttributeError / TypeError / KeyError / ValidationError from inside."""
    func, good = GOOD[name]
    func(**good)  # the good call works
    for arg in good:
        for spoiler in SPOILERS:
            try:
                func(**{**good, arg: spoiler})
            except MagnetError:
                pass
            except Exception as exc:
                pytest.fail(f"{name}({arg}={spoiler!r}) raised {type(exc).__name__}: {exc}")
    if name not in TAKE_ANY_KEYWORD:
        refused(lambda: func(**good, no_such_argument=1), r"'no_such_argument'; its arguments: ")


#: Functions whose other keywords go on (a mapper's options, a zoo network's or a template's
#: parameters): the receiver refuses an unknown one (tested above and in test_api.py).
TAKE_ANY_KEYWORD = {
    "map_layer",
    "evaluate",
    "map_network",
    "load_workload",
    "templates.simba",
    "templates.package",
}


# ---- templates: every one callable the same way ------------------------------------------
@pytest.mark.parametrize("name", sorted(mg.templates.BUILTIN))
def test_every_template_under_magnet_templates_builds_a_design_the_same_way(name: str) -> None:
    build = getattr(mg.templates, name)
    assert callable(build), f"mg.templates.{name} is not callable"
    template = mg.templates.get_template(name)
    params = dict(template.showcase)
    arch = build(**params)
    assert arch.template == name and arch.name == name
    assert arch == template.build(params, name=name)
    assert build(name="mine", **params).name == "mine"
    # a wrong parameter name: the template's message, with the parameters it has
    refused(
        lambda: build(chiplets=4),
        rf"^template {name}: chiplets: unknown field; allowed: clock_ghz, ",
    )
    # a wrong value: the template's message, naming the parameter and the range
    refused(lambda: build(clock_ghz=-1), rf"^template {name}: clock_ghz: .*greater than 0")
    refused(lambda: build(clock_ghz=NAN), rf"^template {name}: clock_ghz: .*finite")
    refused(
        lambda: build(5),
        rf"^templates\.{name}\(\): name: expected a string that is not empty or None, got 5",
    )


def test_a_package_builds_like_a_chip_and_refuses_its_own_bad_values() -> None:
    arch = mg.templates.package(chiplets_x=6, chiplets_y=6)
    assert arch == mg.templates.get_template("package").build({"chiplets_x": 6, "chiplets_y": 6})
    assert arch.mac_count == 36 * mg.templates.simba().mac_count
    assert (
        mg.templates.package(chiplets_x=1, chiplets_y=1).mac_count == mg.templates.simba().mac_count
    )
    refused(
        lambda: mg.templates.package(link="optical"),
        r"template package: link: .*'grs', 'ucie-standard' or 'ucie-advanced'",
    )
    refused(
        lambda: mg.templates.package(chiplets_x=17),
        r"template package: chiplets_x: .*less than or equal to 16",
    )
    refused(
        lambda: mg.templates.package(chiplets_x=True),
        r"template package: chiplets_x: expected a whole number, got True",
    )


def test_a_place_to_write_in_is_checked_for_its_kind_not_for_each_item() -> None:
    """A cache a function fills (``MutableMapping[K, V]``) may hold 20,000 mappings: it is
    checked for what it is, not item by item on every call (15 ms a call at 10,000); the
    items of a mapping the function reads still are."""
    from collections.abc import Mapping, MutableMapping

    from magnet.arguments import fits
    from magnet.mapper import MapOutcome

    odd = {"not a key tuple": "not an outcome"}
    assert fits(odd, MutableMapping[tuple[Any, ...], MapOutcome])
    assert not fits(odd, Mapping[tuple[Any, ...], MapOutcome])
    assert not fits(odd, dict[tuple[Any, ...], MapOutcome])
    assert not fits([odd], MutableMapping[tuple[Any, ...], MapOutcome])


def test_paths_are_taken_wherever_a_file_is() -> None:
    """Checking the types must not refuse what worked: a ``Path`` for a dataflow file, a
    workload, a storage (a missing journal is named as such, not a TypeError)."""
    flow = DATA / "dataflow" / "pe_ws.yaml"
    tiny = mg.load_arch(str(DATA / "mapper" / "medium_arch.yaml"))
    assert mg.dataflow_for(tiny, flow) == mg.dataflow_for(tiny, str(flow))
    assert mg.load_workload(Path("resnet18")) == mg.load_workload("resnet18")
    refused(lambda: mg.load_study("x", storage=DATA / "none.journal"), "none.journal")


def test_the_template_functions_pickle_as_module_functions() -> None:
    import pickle

    for name in mg.templates.BUILTIN:
        build = getattr(mg.templates, name)
        assert pickle.loads(pickle.dumps(build)) is build
