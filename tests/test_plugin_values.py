"""Plug-ins that misbehave (issue 29, item 6): what a cost model returns, how plug-in code
leaves, the names plug-ins take, and the neighbours an adversarial user would try.

* A cost a plug-in returns that is not a number, not finite, negative, or above
  ``MAX_COST`` (1e308 pJ per read, whose products would overflow) is the plug-in's bug: a
  ``PluginError`` naming the plug-in, the component, the action and the value, when the
  design is priced (exit 1 on the command line, a failed trial in a search), never a result
  of ``inf pJ`` or ``nan``, never "no valid mapping found".
* ``sys.exit``, ``KeyboardInterrupt``, ``GeneratorExit`` or another ``BaseException`` raised
  by a plug-in is reported as the plug-in's doing; a real Ctrl-C (SIGINT) while a plug-in
  runs is still the user's interrupt: one line and exit 130.
* A plug-in cannot take a built-in's name.

The plug-ins are in tests/data/cost/misbehaving.py, loaded by path as a user's would be.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner, Result

import magnet as mg
from magnet.cli import main
from magnet.cost.contract import MAX_COST
from magnet.cost.lookup import (
    ENTRY_POINT_GROUP,
    available_cost_models,
    describe_costs,
    load_cost_model,
    register_cost_model,
    unregister_cost_model,
)
from magnet.cost.tables import TableCostModel, nominal_voltage
from magnet.errors import MagnetError, PluginError
from magnet.mapper import unregister_mapper
from magnet.mapper.mapper import BudgetExhausted, Tracker
from magnet.mapper.mappers import FastMapper, RandomMapper
from magnet.mapper.mapspace import Space
from magnet.mapping import Mapping
from magnet.model.evaluate import evaluate_mapping
from magnet.search import SearchFailed, search
from magnet.templates import unregister_template
from magnet.templates.simba import Simba
from magnet.templates.template import TemplateParams
from tests.conftest import DATA, REPO
from tests.services import magnet_command, magnet_process

PLUGINS = DATA / "cost" / "misbehaving.py"
LAYER = "K=16,C=16,P=8,Q=8"
SMALL_NET = DATA / "search" / "small_net.yaml"
SPACE = DATA / "search" / "small_space.yaml"
MAPPING_FILE = REPO / "experiments" / "mappings" / "simba-chip_resnet50_res2a_branch2b.yaml"


def spec(cls: str) -> str:
    return f"{PLUGINS}:{cls}"


def hashes(*paths: Path) -> dict[Path, str]:
    """SHA-256 of every user file a test hands magnet (they must come back unchanged)."""
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def cli(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def chip() -> mg.Arch:
    return mg.load_arch("simba-chip")


# ---- 1. a cost that is not a cost ------------------------------------------------------------
# (class, what it priced, the value as the message shows it, why it is refused); the first
# SRAM priced is the innermost one, the AccumulationBuffer
NOT_A_NUMBER = "a cost is a number, not"
OUT_OF_RANGE = f"a cost is a finite number >= 0 and at most {MAX_COST:g}"
BAD_VALUES = [
    ("InfEnergy", "'read' energy", "inf", OUT_OF_RANGE),
    ("NanEnergy", "'read' energy", "nan", OUT_OF_RANGE),
    ("NegativeEnergy", "'read' energy", "-0.5", OUT_OF_RANGE),
    ("HugeEnergy", "'read' energy", "1e+308", OUT_OF_RANGE),  # products would overflow
    ("FractionBeyondAFloat", "'read' energy", "Fraction(", OUT_OF_RANGE),
    ("NoneEnergy", "'read' energy", "None", f"{NOT_A_NUMBER} None"),
    ("TextEnergy", "'read' energy", "'1.0'", f"{NOT_A_NUMBER} str"),
    ("ArrayEnergy", "'read' energy", "array([1., 2.])", f"{NOT_A_NUMBER} ndarray"),
    ("TrueEnergy", "'read' energy", "True", f"{NOT_A_NUMBER} bool"),
    ("NegativeArea", "area", "-5.0", f"{OUT_OF_RANGE} (or None: no area)"),
    ("TextArea", "area", "'100 um2'", f"{NOT_A_NUMBER} str (or None: no area)"),
    ("HugeArea", "area", "1e+308", OUT_OF_RANGE),
    ("NegativeLeakage", "leakage", "-1.0", OUT_OF_RANGE),
    ("HugeLeakage", "leakage", "1e+308", OUT_OF_RANGE),
    ("NanClock", "clock energy", "nan", OUT_OF_RANGE),
]


@pytest.mark.parametrize(("cls", "what", "shown", "why"), BAD_VALUES)
def test_a_cost_that_is_not_a_cost_is_the_plugins_bug(
    chip: mg.Arch, cls: str, what: str, shown: str, why: str
) -> None:
    model = load_cost_model(spec(cls))
    with pytest.raises(PluginError) as caught:
        mg.design(chip, "ws", cost_model=spec(cls))  # priced once, where the prices enter
    text = str(caught.value)
    assert text.startswith(f"cost model '{model.name}' ({spec(cls)}) returned {shown}"), text
    assert f"for the {what} of component 'AccumulationBuffer' (sram): {why}" in text
    assert "\n" not in text
    # no traceback of its own: where the method that returned it is
    assert f'File "{PLUGINS}", line' in caught.value.traceback


@pytest.mark.parametrize(
    ("cls", "what", "why"),
    [
        ("SupportsText", "supports() answer", "supports() answers True or False"),
        ("SupportsNone", "supports() answer", "supports() answers True or False"),
        ("DescribesWithADict", "description", "describe() returns a string or None"),
    ],
)
def test_an_answer_of_the_wrong_type_is_the_plugins_bug(
    chip: mg.Arch, cls: str, what: str, why: str
) -> None:
    # 'no' would read as True; None as False: neither is guessed
    with pytest.raises(PluginError, match=re.escape(f"for the {what} of component ")) as caught:
        describe_costs(chip, [load_cost_model(spec(cls))])
    assert why in str(caught.value) and f"({spec(cls)})" in str(caught.value)


@pytest.mark.parametrize(
    ("cls", "name"),
    [
        ("InfEnergy", "inf-energy"),
        ("NanEnergy", "nan-energy"),
        ("NegativeEnergy", "negative-energy"),
        ("HugeEnergy", "huge-energy"),
    ],
)
def test_on_the_command_line_a_bad_cost_is_exit_1_and_no_result(cls: str, name: str) -> None:
    before = hashes(PLUGINS, MAPPING_FILE)
    for args in (
        ("map", "--arch", "simba-chip", "--layer", LAYER, "--json"),
        ("evaluate", "--arch", "simba-chip", "--workload", SMALL_NET, "--dataflow", "ws"),
        ("costs", "--arch", "simba-chip", "--json"),
    ):
        out = cli(*args, "--cost-model", spec(cls))
        assert out.exit_code == 1, out.output
        assert out.stdout == ""  # no result, no "inf pJ", no "nan %"
        assert out.stderr.startswith(f"error: a plug-in failed: cost model '{name}' (")
        assert "for the 'read' energy of component 'AccumulationBuffer'" in out.stderr
        assert "Traceback" not in out.stderr
    assert hashes(PLUGINS, MAPPING_FILE) == before


def test_numpy_scalars_are_numbers(chip: mg.Arch) -> None:
    design = mg.design(chip, "ws", cost_model=spec("NumpyNumbers"))
    volts = chip.voltage_v / nominal_voltage(chip.technology_nm)  # dynamic energy ~ V^2
    assert design.costs.sources["AccumulationBuffer"] == "numpy-numbers"
    level = [lvl.name for lvl in chip.inner_first].index("AccumulationBuffer")
    assert design.costs.read_pj[level] == pytest.approx(0.25 * volts**2)


# ---- 2. totals: never reported unless finite -------------------------------------------------
def finite_numbers(data: Any) -> Iterator[float]:
    """Every number in a JSON document."""
    if isinstance(data, dict):
        for value in data.values():
            yield from finite_numbers(value)
    elif isinstance(data, list):
        for value in data:
            yield from finite_numbers(value)
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield float(data)


def test_prices_at_the_bound_give_finite_totals(chip: mg.Arch) -> None:
    # MAX_COST for every price of every component, leakage and area included: the largest
    # products of a network stay finite (the bound leaves room for them)
    design = mg.design(chip, "ws", cost_model=spec("AtTheBound"))
    record = mg.evaluate(mg.load_workload(str(SMALL_NET)), design).record()
    numbers = list(finite_numbers(record.model_dump(mode="json")))
    assert numbers and all(math.isfinite(n) for n in numbers)
    assert record.energy_pj > MAX_COST and record.tops_per_w > 0


def test_a_network_priced_at_zero_is_not_a_result(chip: mg.Arch) -> None:
    # every price 0 is allowed one by one, but TOPS/W would be infinite: refused, naming the
    # model, never "inf" in a record (nor a ZeroDivisionError)
    design = mg.design(chip, "ws", cost_model=spec("AllZero"))
    with pytest.raises(PluginError) as caught:
        mg.evaluate(mg.load_workload(str(SMALL_NET)), design).record()
    text = str(caught.value)
    assert "the tops_per_w of 'small-net' on 'simba-chip' (energy 0 pJ" in text
    assert "is inf, not a finite number" in text and "cost model(s) 'all-zero'" in text
    out = cli("evaluate", "--arch", "simba-chip", "--workload", SMALL_NET, "--dataflow", "ws",
              "--cost-model", spec("AllZero"), "--json")  # fmt: skip
    assert out.exit_code == 1 and out.stdout == "" and "tops_per_w" in out.stderr


def test_a_zero_energy_still_maps_for_latency(chip: mg.Arch) -> None:
    # log(0) x a weight of 0 was NaN for every mapping: "no valid mapping found"
    layer = mg.parse_layer(LAYER)
    design = mg.design(chip, "ws", cost_model=spec("AllZero"))
    outcome = mg.map_layer(layer, design, objective="latency", budget=mg.Budget(evaluations=300))
    assert outcome.result is not None and outcome.result.energy_pj == 0.0
    assert outcome.status in ("mapped", "budget_exhausted")


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_the_evaluator_never_returns_a_total_that_is_not_finite(chip: mg.Arch) -> None:
    # prices past the bound (that no loaded model can give) overflow the evaluator's
    # products: its guard refuses the total, naming the models
    levels = yaml.safe_load(MAPPING_FILE.read_text())["mapping"]
    layer = mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3")
    costs = mg.design(chip).costs
    broken = dataclasses.replace(costs, read_pj=np.full_like(costs.read_pj, 1e308))
    with pytest.raises(PluginError, match=r"the energy of layer 'layer' is inf, not a finite"):
        evaluate_mapping(layer, chip, broken, Mapping.from_data(levels))


# ---- 3. BaseExceptions a plug-in raises -----------------------------------------------------
LEAVES = [
    ("Exits3", "raised SystemExit: it called sys.exit(3)"),
    ("Exits0", "raised SystemExit: it called sys.exit(0)"),
    ("ExitsBare", "raised SystemExit: it called sys.exit()"),
    ("RaisesKeyboardInterrupt", "raised KeyboardInterrupt itself (no Ctrl-C came)"),
    ("RaisesGeneratorExit", "raised GeneratorExit"),
    ("RaisesBaseException", "raised GivingUp: the datasheet ran out"),
]


@pytest.mark.parametrize(("cls", "raised"), LEAVES)
def test_a_plugin_that_exits_or_interrupts_itself_is_its_bug(
    chip: mg.Arch, cls: str, raised: str
) -> None:
    with pytest.raises(PluginError) as caught:
        mg.design(chip, "ws", cost_model=spec(cls))
    text = str(caught.value)
    assert text.startswith(f"cost model '{load_cost_model(spec(cls)).name}' ({spec(cls)}) ")
    assert f"{raised} while pricing the 'read' energy of component 'AccumulationBuffer'" in text
    assert f'File "{PLUGINS}", line' in caught.value.traceback


@pytest.mark.parametrize(
    ("cls", "raised"),
    [
        ("ExitsWhenBuilt", "raised SystemExit: it called sys.exit('no license')"),
        ("InterruptsWhenBuilt", "raised KeyboardInterrupt itself (no Ctrl-C came)"),
    ],
)
def test_a_constructor_that_exits_is_the_plugins_bug(cls: str, raised: str) -> None:
    with pytest.raises(PluginError, match=re.escape(f"{spec(cls)} {raised} while being built")):
        load_cost_model(spec(cls))


@pytest.mark.parametrize(
    ("code", "raised"),
    [
        ("import sys\nsys.exit(4)\n", "raised SystemExit: it called sys.exit(4)"),
        ("raise KeyboardInterrupt\n", "raised KeyboardInterrupt itself (no Ctrl-C came)"),
        ("raise RuntimeError('no licence')\n", "raised RuntimeError: no licence"),
    ],
)
def test_a_plugin_file_that_exits_or_raises_when_imported(
    tmp_path: Path, code: str, raised: str
) -> None:
    path = tmp_path / "plugin.py"
    path.write_text(code)
    before = hashes(path)
    with pytest.raises(PluginError) as caught:
        load_cost_model(f"{path}:Model")
    assert str(caught.value) == f"plug-in file {path} {raised} while being imported"
    assert f'File "{path}", line' in caught.value.traceback
    out = cli("map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", f"{path}:Model")
    assert out.exit_code == 1 and out.stdout == "" and raised in out.stderr
    assert hashes(path) == before


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("def f(:\n", r"importing the plug-in file failed \(line 1\): SyntaxError"),
        ("x = 1\0\n", "importing the plug-in file failed: SyntaxError: .*null bytes"),
        (None, "plug-in file is a folder"),
    ],
)
def test_a_plugin_file_that_is_not_python_is_bad_input(
    tmp_path: Path, content: str | None, why: str
) -> None:
    path = tmp_path / "plugin.py"
    if content is None:
        path.mkdir()
    else:
        path.write_text(content)
    with pytest.raises(MagnetError, match=why):
        load_cost_model(f"{path}:Model")
    out = cli("map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", f"{path}:Model")
    assert out.exit_code == 2 and re.search(why, out.stderr) and "Traceback" not in out.stderr


class ExitingTemplate(Simba):
    """Simba, whose assembly calls sys.exit (a plug-in's idea of refusing a design)."""

    name = "test-exiting-template"
    presets = {}  # noqa: RUF012 (the presets' names belong to Simba)

    def assemble(self, p: TemplateParams, name: str) -> mg.Arch:
        sys.exit("too wide")


class InterruptingMapper(FastMapper):
    name = "test-interrupting-mapper"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        raise KeyboardInterrupt


class ExitingMapper(FastMapper):
    name = "test-exiting-mapper"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        sys.exit(0)


class WritingMapper(FastMapper):
    """Writes into the design's prices (shared by every layer mapped on the design)."""

    name = "test-writing-mapper"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        tracker.design.costs.read_pj[:] = 0.0


class StubbornMapper(RandomMapper):
    """Catches the end of its budget and searches again, 20 times."""

    name = "test-stubborn-mapper"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        for _ in range(20):
            try:
                super().search(space, tracker, rng)
            except BudgetExhausted:
                continue


class PrintingMapper(FastMapper):
    name = "test-printing-mapper"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        print("the mapper maps")
        super().search(space, tracker, rng)


MAPPERS = (InterruptingMapper, ExitingMapper, WritingMapper, StubbornMapper, PrintingMapper)


@pytest.fixture
def plugins() -> Iterator[None]:
    mg.register_template(ExitingTemplate)
    for cls in MAPPERS:
        mg.register_mapper(cls)
    try:
        yield
    finally:
        unregister_template("test-exiting-template")
        for cls in MAPPERS:
            unregister_mapper(cls.name)


def test_a_template_that_exits_is_its_bug(plugins: None) -> None:
    with pytest.raises(PluginError) as caught:
        mg.templates.get_template("test-exiting-template").build()
    assert str(caught.value).startswith("template 'test-exiting-template' (")
    assert "raised SystemExit: it called sys.exit('too wide') while assembling" in str(caught.value)
    out = cli("map", "--arch", "test-exiting-template", "--layer", LAYER)
    assert out.exit_code == 1 and "sys.exit('too wide')" in out.stderr and out.stdout == ""


@pytest.mark.parametrize(
    ("mapper", "raised"),
    [
        ("test-interrupting-mapper", "raised KeyboardInterrupt itself (no Ctrl-C came)"),
        ("test-exiting-mapper", "raised SystemExit: it called sys.exit(0)"),
        ("test-writing-mapper", "raised ValueError: assignment destination is read-only"),
    ],
)
def test_a_mapper_that_exits_interrupts_or_writes_into_the_prices(
    plugins: None, chip: mg.Arch, mapper: str, raised: str
) -> None:
    layer = mg.parse_layer(LAYER)
    with pytest.raises(PluginError, match=re.escape(f"mapper '{mapper}' (")) as caught:
        mg.map_layer(layer, mg.design(chip, "ws"), mapper=mapper)
    assert f"{raised} while mapping layer" in str(caught.value)
    out = cli("map", "--arch", "simba-chip", "--layer", LAYER, "--mapper", mapper)
    assert out.exit_code == 1 and raised in out.stderr and out.stdout == ""  # not 0, not 130


def test_a_mapper_that_catches_the_end_of_its_budget_is_still_bounded(
    plugins: None, chip: mg.Arch
) -> None:
    # every price() after the budget raises again: at most one mapping more per try
    layer = mg.parse_layer(LAYER)
    budget = mg.Budget(evaluations=200)
    out = mg.map_layer(layer, mg.design(chip, "ws"), mapper="test-stubborn-mapper", budget=budget)
    assert out.status == "budget_exhausted" and out.mappings_evaluated <= 200 + 19


def test_what_plugins_print_does_not_corrupt_json(plugins: None) -> None:
    for args in (
        ("map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", spec("Prints")),
        ("map", "--arch", "simba-chip", "--layer", LAYER, "--mapper", "test-printing-mapper"),
        ("costs", "--arch", "simba-chip", "--cost-model", spec("Prints")),
    ):
        out = cli(*args, "--json")
        assert out.exit_code == 0, out.output
        json.loads(out.stdout)  # stdout holds the JSON only
        assert "pricing AccumulationBuffer read" in out.stderr or "the mapper maps" in out.stderr


def test_a_plugin_that_changes_the_component_changes_nothing_of_magnets(chip: mg.Arch) -> None:
    # it shrinks every SRAM to one bit and declines it: the table prices the SRAM as it is
    plain = mg.design(chip, "ws").costs
    touched = mg.design(chip, "ws", cost_model=spec("ChangesTheComponent")).costs
    np.testing.assert_array_equal(touched.read_pj, plain.read_pj)
    assert touched.area_um2_by_component == plain.area_um2_by_component


def test_a_constructor_or_method_of_the_wrong_shape(chip: mg.Arch) -> None:
    with pytest.raises(
        MagnetError, match=r"its constructor NeedsADatasheet\(datasheet\) cannot be called"
    ):
        load_cost_model(spec("NeedsADatasheet"))
    with pytest.raises(PluginError, match=r"raised TypeError: .*energy_pj.* positional argument"):
        mg.design(chip, "ws", cost_model=spec("WrongSignature"))


# ---- 4. real processes: the plug-in's KeyboardInterrupt or the user's Ctrl-C ----------------
def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    command = magnet_command(*map(str, args))
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("cls", "name", "raised"),
    [
        (
            "RaisesKeyboardInterrupt",
            "raises-keyboard-interrupt",
            "raised KeyboardInterrupt itself (no Ctrl-C came)",
        ),
        ("Exits0", "exits-0", "raised SystemExit: it called sys.exit(0)"),  # not a silent 0
    ],
)
def test_in_a_process_the_plugins_interrupt_is_exit_1_naming_it(
    cls: str, name: str, raised: str
) -> None:
    before = hashes(PLUGINS)
    out = run("map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", spec(cls))
    assert out.returncode == 1, out.stderr
    assert out.stderr.startswith(f"error: a plug-in failed: cost model '{name}' (")
    assert raised in out.stderr and "interrupted" not in out.stderr and out.stdout == ""
    assert hashes(PLUGINS) == before


@pytest.mark.subprocess
@pytest.mark.parametrize("cls", ["Slow", "SlowThenExits", "SlowThenSwallows"])
def test_a_ctrl_c_while_a_plugin_runs_is_the_users_interrupt(cls: str) -> None:
    # SlowThenExits turns the KeyboardInterrupt into sys.exit(1), SlowThenSwallows catches it
    # and returns: the Ctrl-C still stands
    proc = magnet_process(
        "map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", spec(cls)
    )
    first = proc.stderr.readline()  # the plug-in runs
    assert first == "the slow plug-in prices\n", first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.rstrip().splitlines() == ["interrupted: nothing was left half-written"]
    assert out == ""


# ---- 5. in a search ---------------------------------------------------------------------------
def wide_space(tmp_path: Path, cls: str) -> Path:
    """The small space cut to two designs: 4 lanes (prices; the first design, checked before
    the search) and 8 lanes (the plug-in leaves on it every time)."""
    data = yaml.safe_load(SPACE.read_text())
    data["params"].update({"vector_units": 4, "weight_collector": 1, "accum_collector": 4})
    data.update(
        workloads=[str(SMALL_NET)], dataflow="os-local-ws", sampler="random", cost_model=spec(cls)
    )
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.subprocess
def test_a_search_fails_the_trials_a_plugin_interrupts_and_stops(tmp_path: Path) -> None:
    space = wide_space(tmp_path, "InterruptsOnWide")
    before = hashes(space, PLUGINS)
    storage = tmp_path / "s.journal"
    out = run("search", space, "--storage", storage, "--no-report", "--max-failures", "3")
    assert out.returncode == 1, out.stderr  # not 130: nobody pressed Ctrl-C
    assert "stopped: 3 evaluations in a row failed" in out.stderr
    assert "raised KeyboardInterrupt itself (no Ctrl-C came)" in out.stderr
    assert "interrupted" not in out.stderr
    study = mg.load_study("small", str(storage))
    failed = study.trials("failed")
    assert len(failed) >= 3 and all(t.params["vector_width"] == 8 for t in failed)
    for t in failed:
        assert (t.reason or "").startswith("PluginError: cost model 'interrupts-on-wide' (")
    assert [t.params["vector_width"] for t in study.trials("ok")] == [4]  # the search went on
    assert hashes(space, PLUGINS) == before


def test_a_search_fails_the_trials_a_plugin_exits_on(tmp_path: Path) -> None:
    space = wide_space(tmp_path, "ExitsOnWide")
    storage = str(tmp_path / "s.journal")
    with pytest.raises(SearchFailed, match=r"raised SystemExit: it called sys.exit\(0\)"):
        search(str(space), n_trials=10, storage=storage, max_failures=2)
    study = mg.load_study("small", storage)
    assert study.trials("failed") and not study.trials("infeasible")


@pytest.mark.subprocess
def test_a_ctrl_c_while_a_plugin_runs_in_a_search_interrupts_it(tmp_path: Path) -> None:
    space = wide_space(tmp_path, "SlowOnWide")
    storage = tmp_path / "s.journal"
    proc = magnet_process("search", str(space), "--storage", str(storage), "--no-report")
    seen = []
    while not seen or seen[-1] not in ("", "the slow plug-in prices\n"):
        seen.append(proc.stderr.readline())
    assert seen[-1] == "the slow plug-in prices\n", seen
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert out == ""
    assert "interrupted: finished trials are kept" in err and "PluginError" not in err
    study = mg.load_study("small", str(storage))
    assert [t.reason for t in study.trials("failed")] == ["interrupted"]  # queued again


# ---- 6. names ---------------------------------------------------------------------------------
class Renamed(Simba):
    name = "simba"
    presets = {}  # noqa: RUF012


class RenamedMapper(FastMapper):
    name = "fast"


def test_a_plugin_cannot_take_a_builtin_name() -> None:
    cls = type(load_cost_model(spec("InfEnergy")).inner)
    for register, builtin in (
        (lambda: register_cost_model("horowitz45", cls), "magnet.cost.models:Horowitz45"),
        (lambda: register_cost_model("table", cls), "magnet.cost.models:DatasheetCostModel"),
        (lambda: mg.register_mapper(RenamedMapper), "magnet.mapper.mappers:FastMapper"),
        (lambda: mg.register_template(Renamed), "magnet.templates.simba:Simba"),
    ):
        with pytest.raises(MagnetError, match="already taken by ") as caught:
            register()
        assert f"{builtin} (built-in)" in str(caught.value)
        assert "choose another" in str(caught.value)


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        ("NamedLikeTheTable", "'horowitz45' (magnet.cost.models:Horowitz45)"),
        ("NamedLikeTheScaledTable", "'horowitz45' (magnet.cost.models:Horowitz45)"),
        ("NamedLikeEyeriss", "'eyeriss-normalized' (magnet.cost.models:EyerissNormalized)"),
    ],
)
def test_a_plugins_own_name_cannot_be_a_builtins(cls: str, builtin: str) -> None:
    # reports name each component's model: a plug-in shown as the built-in table would lie
    message = f"is the name of the built-in cost model {builtin}; choose another name"
    with pytest.raises(MagnetError, match=re.escape(message)):
        load_cost_model(spec(cls))
    out = cli("costs", "--arch", "simba-chip", "--cost-model", spec(cls))
    assert out.exit_code == 2 and message in out.stderr and "Traceback" not in out.stderr


def test_a_registered_model_named_like_a_builtin_and_a_datasheet_so_named(tmp_path: Path) -> None:
    base = type(load_cost_model(spec("InfEnergy")).inner)
    register_cost_model("test-sram", type("Sram", (base,), {"name": "sram-analytical"}))
    try:
        with pytest.raises(MagnetError, match="name 'sram-analytical' is the name of the built-in"):
            load_cost_model("test-sram")
    finally:
        unregister_cost_model("test-sram")
    sheet = yaml.safe_load((DATA / "cost" / "grid.yaml").read_text())
    sheet["name"] = "horowitz45"
    path = tmp_path / "sheet.yaml"
    path.write_text(yaml.safe_dump(sheet))
    with pytest.raises(MagnetError, match="name 'horowitz45' is the name of the built-in"):
        load_cost_model(f"table:{path}")


def test_a_name_on_two_lines_is_refused() -> None:
    with pytest.raises(MagnetError, match="its 'name' must be a non-empty string of printable"):
        load_cost_model(spec("NamedOnTwoLines"))


def test_a_variant_of_the_table_keeps_its_own_name_and_one_without_is_refused() -> None:
    # the table used to overwrite a subclass's name with its own: a user's variant showed in
    # reports as the built-in table (and would now be refused though it named itself)
    class Leaky(TableCostModel):
        name = "leaky"

    assert load_cost_model(Leaky(16)).name == "leaky"

    class Unnamed(TableCostModel):
        pass

    with pytest.raises(MagnetError, match="name 'horowitz45-scaled-16nm' is the name of the bu"):
        load_cost_model(Unnamed(16))


def test_an_entry_point_that_exits_when_imported(tmp_path: Path, monkeypatch) -> None:
    # an installed distribution (a .dist-info folder on sys.path) whose module exits
    (tmp_path / "exiting_costs.py").write_text("import sys\nsys.exit('no licence server')\n")
    info = tmp_path / "exiting_costs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: exiting-costs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nexiting = exiting_costs:Model\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        available_cost_models(refresh=True)
        with pytest.raises(PluginError) as caught:
            load_cost_model("exiting")
        assert str(caught.value) == (
            "entry point 'exiting' (exiting_costs:Model) raised SystemExit: it called "
            "sys.exit('no licence server') while being imported"
        )
    finally:
        monkeypatch.undo()
        available_cost_models(refresh=True)
        sys.modules.pop("exiting_costs", None)


class TakesSimbasPresets(Simba):
    name = "test-takes-presets"  # Simba's presets (simba-chip, ...) come with the class


class Nameless(FastMapper):
    name = ""


class BrokenTemplate(Simba):
    name = "test-broken-template"
    presets = {}  # noqa: RUF012

    def __init__(self) -> None:
        raise RuntimeError("no process design kit")


def test_registering_templates_and_mappers_that_cannot_be() -> None:
    with pytest.raises(MagnetError) as caught:
        mg.register_template(TakesSimbasPresets)
    assert "preset name(s) simba-chip" in str(caught.value)
    assert "already taken by the built-in template 'simba'; choose other names" in str(caught.value)
    with pytest.raises(MagnetError, match="mapper Nameless: its 'name' must be a non-empty"):
        mg.register_mapper(Nameless)
    with pytest.raises(PluginError, match="raised RuntimeError: no process design kit while bei"):
        mg.register_template(BrokenTemplate)
    assert "test-takes-presets" not in mg.templates.templates()
