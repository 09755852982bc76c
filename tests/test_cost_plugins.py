"""Cost-model plug-ins, the registry and the built-in models of magnet.cost.models.

Plug-ins under test live in tests/data/cost/*.py and are loaded by path exactly as a user's
would be (``FILE.py:CLASS``). Reference numbers are the built-in 45 nm Horowitz table
(magnet/cost/tables/horowitz45.yaml) and the Eyeriss normalised costs
(tests/data/reference/costs.md); the arithmetic is in the comments.
"""

from __future__ import annotations

import concurrent.futures
import copy
import itertools
import math
import multiprocessing
import os
import pickle
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from magnet import templates
from magnet.api import evaluate
from magnet.cost import arch_components, price_arch
from magnet.cost.contract import Component, CostModel
from magnet.cost.lookup import (
    ENTRY_POINT_GROUP,
    available_cost_models,
    costs_table,
    describe_costs,
    load_chain,
    load_cost_model,
    register_cost_model,
    unregister_cost_model,
)
from magnet.cost.models import (
    DatasheetCostModel,
    EyerissNormalized,
    SramAnalytical,
    loglog_interpolate,
)
from magnet.cost.tables import TableCostModel
from magnet.errors import MagnetError, PluginError
from magnet.mapping import Mapping
from magnet.model.network_result import LayerMappings
from magnet.templates import load_arch
from magnet.workload.layer import parse_layer
from magnet.workload.network import Network

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "cost"
MAPPING_FILE = REPO / "experiments" / "mappings" / "simba-chip_resnet50_res2a_branch2b.yaml"
RES2A = "K=64,C=64,P=56,Q=56,R=3,S=3"
DOUBLE = f"{DATA / 'double_sram_read.py'}:DoubleSramRead"
BAD = DATA / "bad_plugins.py"
KIB_BITS = 8 * 1024
MAC16_45NM = 0.7874 + 0.05  # Horowitz 16-bit int multiply (derived row) + 16-bit int add


@pytest.fixture(scope="module")
def simba():
    return nominal_simba()


def nominal_simba():
    """simba-chip at 16 nm's nominal supply (0.85 V; its clock fmax there), where the
    energies of the tables apply unscaled."""
    params = {k: v for k, v in load_arch("simba-chip").params.items() if k != "clock_ghz"}
    return templates.simba(**{**params, "voltage_v": 0.85})


def storage(cls, capacity_bytes, width_bits=64, **extra):
    bits = None if capacity_bytes is None else capacity_bytes * 8
    return Component(cls, cls, {"capacity_bits": bits, "width_bits": width_bits, **extra})


# ---- a plug-in changes exactly what it claims to change ------------------------------------
def test_doubling_sram_reads_changes_exactly_the_sram_read_entries(simba):
    layer = parse_layer(RES2A)
    mapping = Mapping.from_yaml(MAPPING_FILE)
    plugin = load_cost_model(DOUBLE)
    base = evaluate(layer, simba, mapping)
    doubled = evaluate(layer, simba, mapping, cost_model=plugin)

    before, after = base.batch.access_energy_pj, doubled.batch.access_energy_pj  # [l, o, a, b]
    sram = [i for i, lvl in enumerate(simba.inner_first) if lvl.component == "sram"]
    assert [simba.inner_first[i].name for i in sram] == [
        "AccumulationBuffer",
        "WeightBuffer",
        "InputBuffer",
        "GlobalBuffer",
    ]
    read = 0  # actions: read, fill (write), update
    changed = np.zeros(before.shape, dtype=bool)
    changed[sram, :, read] = True
    # x2 is exact in binary floating point: accesses * (2 e * n) == 2 * (accesses * (e * n))
    np.testing.assert_array_equal(after[changed], 2 * before[changed])
    np.testing.assert_array_equal(after[~changed], before[~changed])
    assert np.count_nonzero(before[changed]) >= 4  # every SRAM level is read by someone
    fields = ("static_pj", "clock_pj", "control_pj", "interconnect_pj", "math_pj", "latency_cycles")
    for field in fields:
        np.testing.assert_array_equal(getattr(doubled.batch, field), getattr(base.batch, field))

    # GlobalBuffer read at 16 nm: 4 banks of 16 KiB, 256-bit (32-word) blocks:
    # 10.1595 * (16384 / 8192) ** 0.4726 * (256 / 64) * 0.32 = 18.044 pJ; the plug-in charges
    # twice that.
    gb = simba.inner_first.index(next(lvl for lvl in simba.levels if lvl.name == "GlobalBuffer"))
    assert base.costs.read_pj[gb] == pytest.approx(10.1595 * 2**0.4726 * 4 * 0.32, rel=1e-4)
    assert doubled.costs.read_pj[gb] == 2 * base.costs.read_pj[gb]
    extra = before[sram, :, read].sum()
    assert doubled.energy_pj == pytest.approx(base.energy_pj + extra, rel=1e-12)
    assert doubled.costs.model_name == "double-sram-read"


def test_a_declined_component_falls_back_to_the_builtin_table(simba):
    # mac_only.py prices the MAC at 1 pJ and declines everything else.
    model = load_cost_model(f"{DATA / 'mac_only.py'}:MacOnly")
    builtin = price_arch(simba)
    mixed = price_arch(simba, [model])
    fields = (
        "read_pj",
        "write_pj",
        "update_pj",
        "leak_mw",
        "clock_pj_per_cycle",
        "wire_pj_per_bit_mm",
    )
    for field in fields:
        np.testing.assert_array_equal(getattr(mixed, field), getattr(builtin, field))
    assert mixed.mac_pj == 1.0
    assert builtin.mac_pj == pytest.approx((0.2 + 0.075) * 0.32)  # int8 mul + 24-bit add, 16 nm
    assert mixed.sources["MAC"] == "mac-only"
    assert mixed.sources["GlobalBuffer"] == "horowitz45-scaled-16nm"
    assert mixed.model_name == "mac-only+horowitz45-scaled-16nm"


# ---- the same spec in worker processes ---------------------------------------------------
def _shifted(levels, **dram):
    """The res2a mapping with extra DRAM loops (outer loops: every inner tile unchanged)."""
    levels = copy.deepcopy(levels)
    levels[0]["temporal"] = {**levels[0]["temporal"], **dram}
    return levels


def _worker_layers(spec, jobs):
    """Run in a spawned process: load the model from its spec and evaluate some layers."""
    arch = nominal_simba()
    model = load_cost_model(spec)
    out = {"pid": os.getpid()}
    for name, text, levels in jobs:
        result = evaluate(
            parse_layer(text, name), arch, Mapping.from_data(levels), cost_model=model
        )
        out[name] = (result.energy_pj, result.latency_cycles, result.batch.access_energy_pj)
    return out


@pytest.mark.subprocess
def test_a_plugin_spec_gives_identical_results_in_spawned_workers(simba):
    levels = yaml.safe_load(MAPPING_FILE.read_text())["mapping"]
    jobs = [
        ("res2a", RES2A, levels),
        ("wide_k", "K=128,C=64,P=56,Q=56,R=3,S=3", _shifted(levels, K=2)),
        ("wide_c", "K=64,C=128,P=56,Q=56,R=3,S=3", _shifted(levels, C=2)),
        ("tall_p", "K=64,C=64,P=112,Q=56,R=3,S=3", _shifted(levels, P=2)),
    ]
    network = Network.of("four", [parse_layer(text, name) for name, text, _ in jobs])
    mappings = LayerMappings({name: Mapping.from_data(lv) for name, _, lv in jobs})
    model = load_cost_model(DOUBLE)
    here = evaluate(network, simba, mappings, cost_model=model)
    assert here.costs.model_name == "double-sram-read"

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=context) as pool:
        # model.spec is the spec with an absolute path: what to send to workers
        halves = [pool.submit(_worker_layers, model.spec, jobs[i::2]) for i in (0, 1)]
        results = [half.result(timeout=60) for half in halves]
    assert all(result.pop("pid") != os.getpid() for result in results)  # ran elsewhere
    there = {k: v for result in results for k, v in result.items()}

    assert sorted(there) == sorted(name for name, _, _ in jobs)
    for entry in network.layers:
        row = here.result(entry.layer)
        energy, latency, access = there[entry.layer.name]
        assert energy == row.energy_pj  # exactly: same code, same numbers
        assert latency == row.latency_cycles
        np.testing.assert_array_equal(access, row.batch.access_energy_pj)


def test_a_loaded_model_pickles_as_its_spec(simba):
    model = load_cost_model(DOUBLE, simba.technology_nm)
    again = pickle.loads(pickle.dumps(model))
    assert again is not model and again.spec == model.spec and again.name == model.name
    np.testing.assert_array_equal(
        price_arch(simba, again).read_pj, price_arch(simba, model).read_pj
    )


# ---- bad plug-ins: one clear line each ---------------------------------------------------
def test_missing_methods_are_named():
    message = f"class MissingMethods in {BAD} does not implement leakage_mw, area_um2"
    with pytest.raises(MagnetError, match=re.escape(message)):
        load_cost_model(f"{BAD}:MissingMethods")


@pytest.mark.parametrize(
    ("cls", "shown", "why"),
    [
        ("NegativeEnergy", "-1.0", "a cost is a finite number >= 0 and at most 1e+18"),
        ("NanEnergy", "nan", "a cost is a finite number >= 0 and at most 1e+18"),
        ("StringEnergy", "'1.0'", "a cost is a number, not str"),  # not read as 1 pJ
    ],
)
def test_a_cost_that_is_not_a_number_is_the_plugins_bug(simba, cls, shown, why):
    # a value that is wrong is the plug-in's bug (PluginError), named with the model, the
    # component, the action and the value; the first SRAM priced is the innermost one
    model = load_cost_model(f"{BAD}:{cls}")
    message = (
        f"cost model '{model.name}' ({BAD}:{cls}) returned {shown} for the 'read' energy of "
        f"component 'AccumulationBuffer' (sram): {why}"
    )
    with pytest.raises(PluginError, match=re.escape(message)):
        price_arch(simba, [model])


def test_a_claimed_component_that_cannot_be_priced_names_plugin_component_and_action(simba):
    # an exception in the plug-in is a bug in user code: a PluginError (not bad input, not
    # an infeasible design), one line naming model, component and action, and the
    # plug-in's own traceback (its file and line; magnet's frames left out)
    model = load_cost_model(f"{BAD}:ClaimsButRaises")
    with pytest.raises(PluginError) as err:
        price_arch(simba, [model])
    text = str(err.value)
    assert text.startswith(f"cost model 'claims-but-raises' ({BAD}:ClaimsButRaises) raised ")
    assert (
        "raised KeyError: 'AccumulationBuffer' while pricing the 'read' energy of component "
        "'AccumulationBuffer' (sram)"
    ) in text
    assert "\n" not in text
    assert f'File "{BAD}"' in err.value.traceback and "KeyError" in err.value.traceback
    assert "/magnet/cost/" not in err.value.traceback


def test_plugin_file_that_does_not_exist():
    with pytest.raises(MagnetError, match=r"plug-in file not found .*no_such_plugin\.py"):
        load_cost_model("cost_models/no_such_plugin.py:Nope")


def test_class_not_in_file_lists_the_classes_that_are():
    with pytest.raises(MagnetError) as err:
        load_cost_model(f"{BAD}:SramCompiler")
    assert "has no class 'SramCompiler'; CostModel subclasses in the file: " in str(err.value)
    assert "NegativeEnergy" in str(err.value) and "MissingMethods" not in str(err.value)


def test_not_a_costmodel_subclass():
    with pytest.raises(
        MagnetError, match=r"class NotACostModel in .*bad_plugins\.py is not a CostModel subclass"
    ):
        load_cost_model(f"{BAD}:NotACostModel")


def test_constructor_failure():
    # an exception in the plug-in's own constructor is its bug, not bad input
    with pytest.raises(
        PluginError,
        match="BrokenConstructor raised RuntimeError: license server unreachable while being built",
    ):
        load_cost_model(f"{BAD}:BrokenConstructor")


def test_file_without_class_name_needs_one_when_ambiguous(tmp_path):
    with pytest.raises(MagnetError, match=r"give the class as .*bad_plugins\.py:CLASS"):
        load_cost_model(str(BAD))
    model = load_cost_model(str(DATA / "mac_only.py"))  # one class in the file: no need
    assert model.name == "mac-only"


def test_plugin_file_that_does_not_import(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("from magnet.cost.contract import CostModel\nclass X(CostModel:\n")
    with pytest.raises(MagnetError, match=r"importing the plug-in file failed \(line 2\)"):
        load_cost_model(f"{broken}:X")


def test_unknown_names_list_the_allowed_ones():
    with pytest.raises(MagnetError) as err:
        load_cost_model("horowitz-45")
    text = str(err.value)
    assert "unknown cost model 'horowitz-45'; allowed: horowitz45, horowitz45-65nm" in text
    assert "eyeriss-normalized" in text and "FILE.py:CLASS" in text
    with pytest.raises(MagnetError, match="looks like a file"):
        load_cost_model("cost_models/sram_compiler:SramCompiler")  # forgot the .py
    with pytest.raises(MagnetError, match=r"'table' needs an argument: write table:FILE\.yaml"):
        load_cost_model("table")
    with pytest.raises(MagnetError, match="'eyeriss-normalized' takes no argument"):
        load_cost_model("eyeriss-normalized:16")


# ---- the registry ------------------------------------------------------------------------
def test_builtin_names():
    names = available_cost_models()
    for name in (
        "horowitz45",
        "horowitz45-65nm",
        "horowitz45-32nm",
        "horowitz45-16nm",
        "horowitz45-7nm",
        "eyeriss-normalized",
        "table",
        "sram-analytical",
    ):
        assert name in names


def test_built_in_names_are_taken_and_a_registration_can_be_replaced():
    model = load_cost_model(f"{DATA / 'mac_only.py'}:MacOnly")
    cls = type(model.inner)
    with pytest.raises(MagnetError, match="'eyeriss-normalized' is already taken"):
        register_cost_model("eyeriss-normalized", cls)
    register_cost_model("test-mac-only", cls)
    try:
        first = load_cost_model("test-mac-only")
        assert first.name == "mac-only"

        class Again(cls):  # a notebook cell run again with another class: it replaces
            """The same model, defined again."""

        register_cost_model("test-mac-only", Again)
        second = load_cost_model("test-mac-only")
        assert type(second.inner) is Again
        assert second.name == first.name and second.identity != first.identity
    finally:
        unregister_cost_model("test-mac-only")
    with pytest.raises(MagnetError, match="unknown cost model 'test-mac-only'"):
        load_cost_model("test-mac-only")
    with pytest.raises(MagnetError, match="not allowed"):
        register_cost_model("a,b", cls)

    class Half(CostModel):
        def energy_pj(self, component, action):
            return 1.0

    with pytest.raises(MagnetError, match=r"\(Half\) does not implement leakage_mw"):
        register_cost_model("half", Half)

    class PerCycle(Half):  # written for contract v1: leakage per cycle
        def leakage_pj_per_cycle(self, component):
            return 0.0

        def area_um2(self, component):
            return None

    with pytest.raises(MagnetError, match="contract v2 replaced by leakage_mw"):
        register_cost_model("per-cycle", PerCycle)


def test_entry_points_are_discovered(tmp_path, monkeypatch):
    # A real (if minimal) installed distribution: a .dist-info folder on sys.path.
    (tmp_path / "acme_costs.py").write_text(
        "from magnet.cost.contract import CostModel\n"
        "class Acme(CostModel):\n"
        "    name = 'acme'\n"
        "    def supports(self, c): return c.cls == 'dram'\n"
        "    def energy_pj(self, c, a): return 640.0\n"
        "    def leakage_mw(self, c): return 0.0\n"
        "    def area_um2(self, c): return None\n"
    )
    info = tmp_path / "acme_costs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-costs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nacme-dram = acme_costs:Acme\nhorowitz45 = acme_costs:Acme\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "acme-dram" in available_cost_models(refresh=True)
        model = load_cost_model("acme-dram")
        assert model.name == "acme"
        assert model.energy_pj(storage("dram", None), "read") == 640.0
        with pytest.raises(MagnetError, match=r"'horowitz45' is both built-in .* entry point"):
            load_cost_model("horowitz45")
    finally:
        monkeypatch.undo()
        available_cost_models(refresh=True)
        sys.modules.pop("acme_costs", None)


def test_load_chain_splits_commas_and_refuses_duplicates(simba):
    chain = load_chain(f"{DATA / 'mac_only.py'}:MacOnly, sram-analytical", simba.technology_nm)
    assert [m.name for m in chain] == ["mac-only", "sram-analytical"]
    assert load_chain(None) == [] and load_chain("") == []
    with pytest.raises(MagnetError, match="two cost models named 'sram-analytical'"):
        load_chain(["sram-analytical", "sram-analytical"])
    with pytest.raises(MagnetError, match="empty entry"):
        load_chain("sram-analytical,,horowitz45")


def test_describe_costs_matches_price_arch(simba):
    chain = load_chain("sram-analytical", simba.technology_nm)
    rows = describe_costs(simba, chain)
    costs = price_arch(simba, chain)
    by_name = {row["component"]: row for row in rows}
    storage_comps, mac, networks = arch_components(simba)
    assert [r["component"] for r in rows] == [
        *(c.name for c in storage_comps),
        mac.name,
        *(n.name for n in networks if n is not None),
        *("PPU.mac", "PPU.add8", "PPU.table", "PPU.buffer"),  # the post-processing unit
    ]
    for i, comp in enumerate(storage_comps):
        row = by_name[comp.name]
        assert row["energy_pj"] == {
            "read": costs.read_pj[i],
            "write": costs.write_pj[i],
            "update": costs.update_pj[i],
        }
        assert row["leakage_mw"] == costs.leak_mw[i]
        assert row["model"] == costs.sources[comp.name]
    assert by_name["MAC"]["energy_pj"] == {"compute": costs.mac_pj}
    gb = [lvl.name for lvl in simba.inner_first].index("GlobalBuffer")
    assert by_name["GlobalBuffer.noc"]["energy_pj"]["transfer"] == costs.wire_pj_per_bit_mm[gb]
    assert by_name["GlobalBuffer"]["model"] == "sram-analytical"
    assert by_name["DRAM"]["model"] == "horowitz45-scaled-16nm"
    for c, lvl in zip(storage_comps, simba.inner_first, strict=True):
        if by_name[c.name]["area_um2"]:
            expected = by_name[c.name]["area_um2"] * lvl.instances
            assert costs.area_um2_by_component[c.name] == pytest.approx(expected, rel=1e-12)
    assert costs.area_um2_by_component["MAC"] == pytest.approx(
        by_name["MAC"]["area_um2"] * simba.compute.instances, rel=1e-12
    )
    assert costs.area_mm2 == pytest.approx(sum(costs.area_um2_by_component.values()) / 1e6)
    text = costs_table(rows)
    assert "GlobalBuffer" in text and "sram-analytical" in text


# ---- horowitz45 and its nodes ------------------------------------------------------------
def test_horowitz45_follows_the_given_node_and_fixed_nodes_override_it(simba):
    same = price_arch(simba, load_chain("horowitz45", simba.technology_nm))
    builtin = price_arch(simba)
    np.testing.assert_array_equal(same.read_pj, builtin.read_pj)
    assert same.model_name == "horowitz45-scaled-16nm"
    # without a node it is 45 nm, and refuses a component that says 16 nm
    with pytest.raises(
        MagnetError, match=r"component is at 16\.0 nm but this cost model prices 45"
    ):
        price_arch(simba, [load_cost_model("horowitz45")])
    # horowitz45-7nm prices 7 nm whatever the arch says: 32 KiB x 64 bits, 45 nm fit
    # 10.1595 * 4 ** 0.4726 = 19.5617 pJ, x 0.1798 (7 nm dynamic energy) = 3.5172 pJ
    seven = load_cost_model("horowitz45-7nm")
    buf = storage("sram", 32 * 1024, technology_nm=16.0)
    assert seven.name == "horowitz45-7nm"
    assert seven.energy_pj(buf, "read") == pytest.approx(19.5617 * 0.1798, rel=1e-4)
    # a whole 16 nm design, clock energy included, prices at 7 nm (it once refused the clock)
    assert price_arch(simba, [seven]).model_name == "horowitz45-7nm"


# ---- eyeriss-normalized ------------------------------------------------------------------
def test_eyeriss_normalized_ratios():
    model = load_cost_model("eyeriss-normalized")
    rf = storage("regfile", 512, width_bits=16)  # Eyeriss's 0.5 KB RF, one 16-bit word
    small_sram = storage("sram", 1024, width_bits=16)  # <= 1 KiB: priced as an RF
    glb = storage("sram", 108 * 1024, width_bits=16)  # Eyeriss's 108 KB global buffer
    dram = storage("dram", None, width_bits=16)
    e = {
        name: model.energy_pj(c, "read")
        for name, c in (("rf", rf), ("small", small_sram), ("glb", glb), ("dram", dram))
    }
    assert e["glb"] / e["rf"] == pytest.approx(6.0, rel=1e-15)
    assert e["dram"] / e["rf"] == pytest.approx(200.0, rel=1e-15)
    assert e["small"] == e["rf"]
    # the unit: a 16-bit int MAC of the 45 nm table = 0.7874 + 0.05 = 0.8374 pJ
    assert e["rf"] == pytest.approx(MAC16_45NM, rel=1e-12)
    mac16 = Component("mac", "mac", {"bits": 16, "datatype": "int"})
    assert model.energy_pj(mac16, "compute") == pytest.approx(MAC16_45NM, rel=1e-12)
    # widths: a 64-bit GLB access moves 4 words: 6 x 4 x 0.8374 = 20.0976 pJ
    assert model.energy_pj(storage("sram", 108 * 1024), "write") == pytest.approx(
        6 * 4 * MAC16_45NM, rel=1e-12
    )
    # network: 2x per 16-bit word per 1 mm; a 0.5 mm hop is half: 2 x 0.5 x 0.8374 = 0.8374
    hop = Component("net", "noc", {"word_bits": 16, "hop_mm": 0.5})
    assert model.energy_pj(hop, "transfer") == pytest.approx(MAC16_45NM, rel=1e-12)
    assert model.leakage_mw(glb) == 0.0 and model.area_um2(glb) is None
    # at 16 nm the unit scales with the table's dynamic-energy factor 0.32
    rf16 = storage("regfile", 512, width_bits=16, technology_nm=16.0)
    assert model.energy_pj(rf16, "read") == pytest.approx(MAC16_45NM * 0.32, rel=1e-12)


def test_eyeriss_on_simba_prices_every_component(simba):
    rows = describe_costs(simba, load_chain("eyeriss-normalized", simba.technology_nm))
    # every component but an adder (the post-processing unit's: Eyeriss's relative costs
    # have none, so the built-in table, last in the chain, prices it)
    models = {(row["class"] == "adder", row["model"]) for row in rows}
    assert models == {(False, "eyeriss-normalized"), (True, "horowitz45-scaled-16nm")}
    unit = MAC16_45NM * 0.32  # 16 nm
    by_name = {row["component"]: row for row in rows}
    # GlobalBuffer: 256-bit access = 16 words x 6x; DRAM 64 bits = 4 words x 200x
    assert by_name["GlobalBuffer"]["energy_pj"]["read"] == pytest.approx(96 * unit)
    assert by_name["DRAM"]["energy_pj"]["read"] == pytest.approx(800 * unit)
    assert isinstance(EyerissNormalized().describe(Component("m", "mac", {"bits": 8})), str)


# ---- table: a YAML datasheet -------------------------------------------------------------
def test_table_interpolates_between_two_rows():
    model = load_cost_model(f"table:{DATA / 'two_rows.yaml'}")
    assert model.name == "two-rows"
    mid = storage("sram", 16 * 1024)
    # 16 KiB is halfway between 8 and 32 KiB in log capacity (t = ln 2 / ln 4 = 0.5):
    # read sqrt(5 x 10) = 7.0711 pJ, write sqrt(6 x 12) = 8.4853 pJ,
    # leakage sqrt(10 x 30) = 17.3205 uW -> 0.0173205 pJ per 1 ns cycle,
    # area sqrt(40000 x 150000) = 77459.67 um^2
    assert model.energy_pj(mid, "read") == pytest.approx(math.sqrt(50), rel=1e-12)
    assert model.energy_pj(mid, "write") == pytest.approx(math.sqrt(72), rel=1e-12)
    assert model.energy_pj(mid, "update") == model.energy_pj(mid, "write")
    assert model.leakage_mw(mid) == pytest.approx(math.sqrt(300) / 1000, rel=1e-12)
    assert model.area_um2(mid) == pytest.approx(math.sqrt(40000 * 150000), rel=1e-12)
    # on a row: the row itself
    assert model.energy_pj(storage("sram", 8 * 1024), "read") == 5.0
    # two banks of 16 KiB: one bank's energy, two banks' leakage and area
    banked = storage("sram", 32 * 1024, banks=2)
    assert model.energy_pj(banked, "read") == pytest.approx(math.sqrt(50), rel=1e-12)
    assert model.area_um2(banked) == pytest.approx(2 * math.sqrt(40000 * 150000), rel=1e-12)
    # outside the rows: refused (the datasheet has only 64-bit macros, 8..32 KiB)
    with pytest.raises(MagnetError, match=r"64 bits is outside the datasheet.*refused"):
        model.energy_pj(storage("sram", 64 * 1024), "read")
    with pytest.raises(MagnetError, match="8192 bytes x 128 bits is outside the datasheet"):
        model.energy_pj(storage("sram", 8 * 1024, width_bits=128), "read")
    # other classes are declined; a component at another node is refused
    assert not model.supports(storage("regfile", 512))
    with pytest.raises(MagnetError, match="the datasheet is 45 nm but the component is at 16 nm"):
        model.energy_pj(storage("sram", 16 * 1024, technology_nm=16.0), "read")


def test_table_bilinear_in_log_log_and_flagged_extrapolation():
    model = DatasheetCostModel(DATA / "grid.yaml")
    # corners (8K, 64) = 2, (32K, 64) = 8, (8K, 256) = 6, (32K, 256) = 30; at (16K, 128)
    # t = u = 0.5, so ln E = (ln 2 + ln 8 + ln 6 + ln 30) / 4: E = 2880 ** 0.25 = 7.32568 pJ
    mid = storage("sram", 16 * 1024, width_bits=128)
    assert model.energy_pj(mid, "read") == pytest.approx(2880**0.25, rel=1e-12)
    assert model.area_um2(mid) is None  # no area column in this datasheet
    # extrapolate: 64 KiB at 64 bits, t = ln 8 / ln 4 = 1.5: 2 * (8 / 2) ** 1.5 = 16 pJ
    far = Component("FarBuffer", "sram", {"capacity_bits": 64 * KIB_BITS, "width_bits": 64})
    with pytest.warns(UserWarning, match="FarBuffer: EXTRAPOLATED beyond the datasheet"):
        assert model.energy_pj(far, "read") == pytest.approx(16.0, rel=1e-12)
    assert model.describe(far).startswith("EXTRAPOLATED")
    # MAC rows: int8 by datatype and bits; 1 uW at 1 GHz = 0.001 pJ per cycle
    int8 = Component("MAC", "mac", {"bits": 8, "datatype": "int"})
    assert model.energy_pj(int8, "compute") == 0.25
    assert model.leakage_mw(int8) == pytest.approx(0.001)
    with pytest.raises(MagnetError, match="no MAC row for format 'fp16'; the datasheet has int8"):
        model.energy_pj(Component("MAC", "mac", {"bits": 16, "datatype": "float"}), "compute")


def test_loglog_interpolate_is_a_power_law_between_rows():
    xs, ys = [1.0, 4.0], [1.0]
    values = {(1.0, 1.0): 3.0, (4.0, 1.0): 12.0}
    # E ~ x: at x = 2, 3 * 2 = 6
    assert loglog_interpolate(xs, ys, values, 2.0, 1.0) == (pytest.approx(6.0), "interpolated")
    assert loglog_interpolate(xs, ys, values, 8.0, 1.0) is None
    assert loglog_interpolate(xs, ys, values, 8.0, 1.0, extrapolate=True)[0] == pytest.approx(24)


def test_bad_datasheet_names_file_and_field():
    with pytest.raises(MagnetError) as err:
        load_cost_model(f"table:{DATA / 'bad_datasheet.yaml'}")
    text = str(err.value)
    assert text.startswith(str(DATA / "bad_datasheet.yaml"))
    assert "sram.rows.0.read_pj: Field required" in text
    assert "sram.rows.0.read_energy: unknown field; allowed: capacity_bytes, width_bits" in text
    with pytest.raises(MagnetError, match="datasheet not found"):
        load_cost_model("table:no/such/datasheet.yaml")


def test_incomplete_grid_is_refused(tmp_path):
    sheet = yaml.safe_load((DATA / "grid.yaml").read_text())
    sheet["sram"]["rows"].pop()
    path = tmp_path / "holes.yaml"
    path.write_text(yaml.safe_dump(sheet))
    with pytest.raises(
        MagnetError, match=r"missing \(capacity_bytes, width_bits\): \[\(32768, 256"
    ):
        DatasheetCostModel(path)


def test_example_plugin_agrees_with_the_table_model_on_the_same_datasheet(simba):
    plugin = load_chain("cost_models/sram_compiler.py:SramCompiler", simba.technology_nm)
    table = load_chain("table:cost_models/sram_compiler_28nm.yaml", simba.technology_nm)
    by_plugin = describe_costs(simba, plugin)
    by_table = describe_costs(simba, table)
    for a, b in zip(by_plugin, by_table, strict=True):
        assert a["model"] == b["model"]
        for action, value in a["energy_pj"].items():
            assert value == pytest.approx(b["energy_pj"][action], rel=1e-12)
        assert a["leakage_mw"] == pytest.approx(b["leakage_mw"], rel=1e-12)
        if b["area_um2"] is None:  # DRAM and networks have no area
            assert a["area_um2"] is None
        else:
            assert a["area_um2"] == pytest.approx(b["area_um2"], rel=1e-12)
    models = {row["component"]: row["model"] for row in by_plugin}
    assert models["GlobalBuffer"] == models["MAC"] == "sram-compiler-28nm"
    assert models["WeightCollector"] == "horowitz45-scaled-16nm"  # regfile: declined
    # 384-byte accumulation buffer banks are below the datasheet's 1 KiB: declined
    assert models["AccumulationBuffer"] == "horowitz45-scaled-16nm"
    # GlobalBuffer: 4 banks of 16 KiB x 256 bits, a datasheet row (11.8 pJ at 28 nm), scaled
    # to 16 nm by the ratio of dynamic-energy factors 0.32 / f(28 nm)
    gb = next(row for row in by_plugin if row["component"] == "GlobalBuffer")
    sheet = yaml.safe_load((REPO / "cost_models" / "sram_compiler_28nm.yaml").read_text())
    assert sheet["source"].startswith("ILLUSTRATIVE")
    row = next(
        r for r in sheet["sram"]["rows"] if (r["capacity_bytes"], r["width_bits"]) == (16384, 256)
    )
    f28 = TableCostModel(28).factors.dynamic_energy
    assert gb["energy_pj"]["read"] == pytest.approx(row["read_pj"] * 0.32 / f28, rel=1e-12)
    # bf16 vs fp16 MACs, chosen by the 'format' attribute
    compiler = load_cost_model("cost_models/sram_compiler.py:SramCompiler")
    bf16 = Component("MAC", "mac", {"bits": 16, "datatype": "float", "format": "bf16"})
    fp16 = Component("MAC", "mac", {"bits": 16, "datatype": "float"})
    int4 = Component("MAC", "mac", {"bits": 4, "datatype": "int"})
    assert compiler.energy_pj(bf16, "compute") == 0.48
    assert compiler.energy_pj(fp16, "compute") == 0.62
    assert compiler.energy_pj(int4, "compute") == 0.025


# ---- sram-analytical ---------------------------------------------------------------------
def test_sram_analytical_equals_the_horowitz_fit_at_its_calibration_point():
    model = load_cost_model("sram-analytical")
    table = TableCostModel(45.0)
    cal = SramAnalytical.calibration_component()
    # 32 KiB x 64 bits, one bank, 45 nm: 10.1595 * (32768 / 8192) ** 0.4726 = 19.5617 pJ
    assert model.energy_pj(cal, "read") == pytest.approx(19.5617, rel=1e-5)
    assert model.energy_pj(cal, "read") == pytest.approx(table.energy_pj(cal, "read"), rel=1e-12)
    # area 262144 bits x 0.346 / 0.7 = 129574 um^2; leakage 262144 x 1e-6 = 0.2621 pJ/cycle
    assert model.area_um2(cal) == pytest.approx(table.area_um2(cal), rel=1e-12)
    assert model.leakage_mw(cal) == pytest.approx(table.leakage_mw(cal), rel=1e-12)
    # the other Horowitz points are predicted within 15 %: 8 KiB 11.25 vs 10, 1 MiB 97.0 vs 100
    for kib, published in ((8, 10.0), (1024, 100.0)):
        energy = model.energy_pj(storage("sram", kib * 1024), "read")
        assert energy == pytest.approx(published, rel=0.15)


def test_sram_analytical_is_monotone_in_capacity_and_width():
    model = SramAnalytical()
    capacities = [2**k for k in range(9, 23)]  # 512 B .. 4 MiB
    widths = [8, 16, 32, 64, 128, 256, 512, 1024]
    for width in widths:
        energies = [model.energy_pj(storage("sram", c, width), "read") for c in capacities]
        areas = [model.area_um2(storage("sram", c, width)) for c in capacities]
        assert all(b > a for a, b in itertools.pairwise(energies))
        assert all(b > a for a, b in itertools.pairwise(areas))
    for capacity in capacities:
        energies = [model.energy_pj(storage("sram", capacity, w), "read") for w in widths]
        assert all(b > a for a, b in itertools.pairwise(energies))
    # banking: the same 256 KiB in more banks costs more area (periphery per bank)
    areas = [model.area_um2(storage("sram", 256 * 1024, banks=b)) for b in (1, 2, 4, 8)]
    assert all(b > a for a, b in itertools.pairwise(areas))
    # and it delegates everything but SRAM
    assert model.supports(storage("sram", 1024))
    assert not model.supports(storage("regfile", 512))
    assert not model.supports(Component("MAC", "mac", {}))


def test_sram_analytical_scales_with_the_node():
    model = SramAnalytical()
    at45 = model.energy_pj(SramAnalytical.calibration_component(), "read")
    at16 = model.energy_pj(SramAnalytical.calibration_component(16.0), "read")
    assert at16 == pytest.approx(at45 * 0.32, rel=1e-12)  # 16 nm dynamic-energy factor
