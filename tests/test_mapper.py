"""Mappers and dataflows: quality against the exhaustive optimum, rules, budgets, outcomes,
the registry, the simba dataflows, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import magnet as mg
from magnet.api import evaluate, map_layer
from magnet.cli import main
from magnet.dataflow import Dataflow, Rule
from magnet.design import build_design
from magnet.errors import DesignInfeasible, MagnetError
from magnet.mapper import Budget, Mapper, Objective, get_mapper, register_mapper
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import sample
from magnet.mapping import to_batch
from magnet.templates import dataflow_for, load_arch, simba
from magnet.workload.layer import Layer
from tests.conftest import DATA, REFERENCE

MEDIUM = DATA / "mapper" / "medium_arch.yaml"
SMALL_LAYERS = [
    Layer(name="conv", K=8, C=8, P=8, R=3),
    Layer(name="pointwise", K=16, C=8, P=8),
    Layer(name="depthwise", kind="depthwise", G=4, P=14, Q=2, R=3),
    Layer(name="gemm", kind="fc", K=32, C=16, P=4),
]


@pytest.mark.parametrize("layer", SMALL_LAYERS, ids=lambda layer: layer.name)
def test_fast_reaches_the_exhaustive_optimum_within_2_percent(layer: Layer) -> None:
    arch = load_arch(str(MEDIUM))
    exact = map_layer(layer, arch, mapper="exhaustive")
    assert exact.status == "mapped"
    # exact_below=0: the heuristic search, not its exhaustive shortcut for small spaces
    fast = map_layer(layer, arch, mapper="fast", exact_below=0)
    assert fast.result.edp <= 1.02 * exact.result.edp
    # the exhaustive optimum is a lower bound for any mapping the random mapper finds
    rand = map_layer(layer, arch, mapper="random", samples=3000, seed=3)
    assert rand.result.edp >= exact.result.edp * (1 - 1e-12)


def test_mapper_respects_the_dataflow_and_is_deterministic() -> None:
    arch = simba("t", weight_collector=2, accum_collector=4)
    layer = Layer(K=32, C=32, P=14, Q=14, R=3, S=3)
    for name in ("ws", "os", "is", "ws-local-os", "os-local-ws"):
        found = map_layer(layer, arch, name, seed=1)
        batch = to_batch(found.mapping, arch)
        space = Space(layer, arch, dataflow_for(arch, name))
        assert space.structure_ok(batch).all(), name
        again = map_layer(layer, arch, name, seed=1)
        assert again.mapping == found.mapping
        assert again.result.edp == found.result.edp
        assert found.valid_mappings <= found.mappings_evaluated


def test_named_dataflows_a_template_cannot_express_are_refused() -> None:
    chip = load_arch("simba-chip")  # weight_collector 1, no accumulation collector
    with pytest.raises(MagnetError, match=r"cannot express dataflow 'rs'.*eyeriss template"):
        dataflow_for(chip, "rs")
    # a dataflow the design could run with a collector is an infeasible design, not bad input
    with pytest.raises(DesignInfeasible, match=r"AccumulationCollector.*accum_collector: 0"):
        dataflow_for(chip, "ws-local-os")
    with pytest.raises(MagnetError, match=r"allowed: rs, ws, os, free"):
        dataflow_for(load_arch("eyeriss-chip"), "nlr")


def test_an_impossible_layer_is_an_outcome_naming_the_constraint() -> None:
    chip = load_arch("simba-chip")
    # R=3 and S=3 forced into the weight collector: 9 weights for its 1-word register
    flow = Dataflow(name="bad", rules=(Rule(level="WeightCollector", factors={"R": 3, "S": 3}),))
    outcome = map_layer(Layer(K=8, C=8, P=4, R=3, S=3), chip, flow)
    assert outcome.status == "infeasible" and outcome.result is None
    assert "smallest tiles at 'WeightCollector' (weights 9 words)" in outcome.reason
    with pytest.raises(DesignInfeasible, match="weights 9 words"):
        evaluate(Layer(K=8, C=8, P=4, R=3, S=3), chip, dataflow=flow)


def test_objectives() -> None:
    assert Objective.parse("edp") == Objective(1.0, 1.0, "edp")
    assert Objective.parse("energy=1,latency=2").latency == 2.0
    with pytest.raises(MagnetError, match="cannot read objective"):
        Objective.parse("speed")
    arch = load_arch(str(MEDIUM))
    layer = SMALL_LAYERS[0]
    by_energy = map_layer(layer, arch, objective="energy", mapper="exhaustive")
    by_latency = map_layer(layer, arch, objective="latency", mapper="exhaustive")
    assert by_energy.result.energy_pj <= by_latency.result.energy_pj
    assert by_latency.result.latency_cycles <= by_energy.result.latency_cycles


def test_eyeriss_like_mapper_beats_the_reference_mapping() -> None:
    from magnet.interop.timeloop import load_constraints, load_timeloop

    case = REFERENCE / "timeloop" / "eyeriss_like"
    tl = load_timeloop(case / "replay_timeloop_2025-03" / "timeloop-input.yaml")
    flow = load_constraints(case / "ref_output" / "parsed-processed-input.yaml", tl.arch)
    design = tl.design(dataflow=flow)
    reference = evaluate(tl.layer, design, tl.mapping)
    # the reference mapping obeys the constraints, so it is in the searched space
    assert Space(tl.layer, tl.arch, flow).structure_ok(to_batch(tl.mapping, tl.arch)).all()
    found = map_layer(tl.layer, design, objective="energy")
    assert found.result.energy_pj <= reference.energy_pj  # 5.92e7 pJ in Timeloop's replay


def test_cli_map_json_and_network_mapping(tmp_path) -> None:
    out = CliRunner().invoke(
        main,
        [
            "map",
            "--arch",
            "simba-chip",
            "--layer",
            "K=16,C=16,P=8,Q=8,R=3,S=3",
            "--dataflow",
            "ws",
            "--json",
            "--output",
            str(tmp_path / "best.yaml"),
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["schema_version"] == mg.SCHEMA_VERSION and data["record"] == "layer"
    for key in ("energy_pj", "latency_cycles", "edp_pj_cycles", "mapping", "energy_pj_by_category"):
        assert key in data
    for key in ("mappings_evaluated", "valid_mappings", "seconds", "mapspace_size", "status"):
        assert key in data["mapper"]
    assert isinstance(data["latency_cycles"], int)
    assert data["edp_pj_cycles"] == pytest.approx(data["energy_pj"] * data["latency_cycles"])
    assert sum(data["energy_pj_by_category"].values()) == pytest.approx(data["energy_pj"])
    again = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            "simba-chip",
            "--layer",
            "K=16,C=16,P=8,Q=8,R=3,S=3",
            "--mapping",
            str(tmp_path / "best.yaml"),
            "--json",
        ],
    )
    assert json.loads(again.output)["energy_pj"] == pytest.approx(data["energy_pj"])
    net = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(DATA / "network" / "tiny_arch.yaml"),
            "--workload",
            str(DATA / "network" / "tiny_net.yaml"),
            "--dataflow",
            "free",
            "--json",
        ],
    )
    assert net.exit_code == 0, net.output
    rows = json.loads(net.output)["layers"]
    assert [r["name"] for r in rows] == ["conv", "fc1", "fc2"]
    assert np.isclose(rows[1]["energy_pj"], rows[2]["energy_pj"])  # same shape, one search


def test_row_stationary_is_the_most_energy_efficient_on_alexnet_conv_layers() -> None:
    # Eyeriss (Chen, Emer, Sze, ISCA 2016, tests/data/reference/costs.md): at equal storage and
    # parallelism, row-stationary is 1.4x to 2.5x more energy-efficient than weight- and
    # output-stationary on AlexNet's CONV layers. Same eyeriss template (168 PEs, same spads
    # and buffer), each dataflow mapped for energy by the fast mapper, built-in 65 nm costs.
    # Measured here: ws / rs 1.70 .. 3.04, os / rs 2.65 .. 3.89.
    from magnet.workload.zoo import load_zoo

    arch = load_arch("eyeriss-chip")
    convs = [e.layer for e in load_zoo("alexnet").layers if e.layer.kind == "conv"]
    assert len(convs) == 5
    for layer in convs:
        energy = {
            name: map_layer(layer, arch, name, objective="energy").result.energy_pj
            for name in ("rs", "ws", "os")
        }
        assert energy["rs"] < min(energy["ws"], energy["os"]), layer.name
        assert min(energy["ws"], energy["os"]) / energy["rs"] >= 1.4, layer.name


def test_user_defined_dataflow_from_yaml() -> None:
    arch = load_arch(str(MEDIUM))
    layer = Layer(K=8, C=8, P=8, R=3)
    found = map_layer(layer, arch, str(DATA / "dataflow" / "pe_ws.yaml"))
    m = found.mapping.level("GLB")
    assert set(m.spatial_x) <= {"K"} and set(m.spatial_y) <= {"C"}
    space = Space(layer, arch, dataflow_for(arch, str(DATA / "dataflow" / "pe_ws.yaml")))
    assert space.structure_ok(to_batch(found.mapping, arch)).all()
    # the weights never return to the register file: 8 x 8 x 3 = 192 weights over the 4 PEs
    # (each its K/C slice) are filled exactly once in total
    counts = found.result.accesses["RF"]["weights"]
    assert counts["fills"] * 4 == pytest.approx(layer.K * layer.C * layer.R)
    with pytest.raises(MagnetError, match=r"typo.yaml: rules.0.stationnary: unknown field"):
        dataflow_for(arch, str(DATA / "dataflow" / "typo.yaml"))


def test_cli_maps_a_timeloop_mapper_input_with_its_constraints() -> None:
    path = (
        REFERENCE
        / "timeloop"
        / "alexnet"
        / "eyeriss_like_alexnet_conv3"
        / "mapper"
        / "timeloop-input.yaml"
    )
    out = CliRunner().invoke(
        main,
        [
            "map",
            "--timeloop",
            str(path),
            "--mapper",
            "random",
            "--samples",
            "2000",
            "--seed",
            "7",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["dataflow"] == "timeloop-constraints"
    assert data["mapper"]["mappings_evaluated"] == 2000
    assert 0 < data["mapper"]["valid_mappings"] <= 2000
    # the constraints hold: ifmap_spad takes no temporal loops, psum_spad only K (Timeloop's M)
    levels = {lvl["target"]: lvl for lvl in data["mapping"]}
    assert "temporal" not in levels.get("ifmap_spad", {})
    assert set(levels.get("psum_spad", {}).get("temporal", {})) <= {"K"}


def test_evaluate_maps_each_distinct_shape_once() -> None:
    # 72 MAC entries (96 layers with repeats), 5 shapes; and 72 post-processing layers
    net = mg.load_workload("bert-base")
    arch = mg.templates.simba(vector_width=8, vector_units=8, pe_rows=4, pe_cols=4)
    record = mg.evaluate(net, arch, dataflow="ws").record()
    assert record.unique_shapes == 5 and len(record.layers) == len(net.layers) == 144
    assert record.macs == net.macs == 11_173_625_856
    assert len(record.mappings) == 5  # one mapping per distinct shape
    assert 0 < record.utilization <= 1


@pytest.mark.parametrize("seed", range(6))
def test_mapper_never_returns_an_invalid_mapping(seed: int) -> None:
    rng = np.random.default_rng(seed)
    arch = load_arch(str(MEDIUM))
    dims = dict(zip("KCPQRS", (int(x) for x in rng.choice([1, 2, 3, 4, 6, 8], 6)), strict=True))
    layer = Layer(**dims, wstride=int(rng.integers(1, 3)))
    found = map_layer(layer, arch, mapper="fast", exact_below=0, seed=seed)
    batch = to_batch(found.mapping, arch)
    assert Space(layer, arch, dataflow_for(arch, None)).structure_ok(batch).all()
    again = evaluate(layer, arch, found.mapping)  # raises if the mapping overflowed anything
    assert again.energy_pj == pytest.approx(found.result.energy_pj)
    assert again.macs == layer.macs


# ---- budgets, outcomes, the registry ---------------------------------------------------------
LAYER = Layer(name="res3", K=128, C=128, P=28, Q=28, R=3, S=3)


def test_an_evaluation_budget_ends_the_search_with_the_best_so_far() -> None:
    chip = load_arch("simba-chip")
    free = map_layer(LAYER, chip, "free", mapper="random", samples=20_000)
    cut = map_layer(
        LAYER, chip, "free", mapper="random", samples=20_000, budget=Budget(evaluations=3000)
    )
    assert free.status == "mapped" and cut.status == "budget_exhausted"
    # the budget is checked after every batch: at most one batch (20,000) over
    assert 3000 <= cut.mappings_evaluated < 3000 + 20_000
    assert cut.result is not None and "budget" in cut.reason
    assert cut.result.energy_pj > 0


def test_a_seconds_budget_stops_a_long_search() -> None:
    chip = load_arch("simba-chip")
    cut = map_layer(
        LAYER, chip, "free", mapper="random", samples=10_000_000, budget=Budget(seconds=0.2)
    )
    assert cut.status == "budget_exhausted"
    assert cut.mappings_evaluated < 10_000_000


def test_exhaustive_states_the_size_and_needs_a_budget_for_a_huge_space() -> None:
    chip = load_arch("simba-chip")
    with pytest.raises(MagnetError, match=r"mapspace of 'res3' has .* mappings.*give one"):
        map_layer(LAYER, chip, "free", mapper="exhaustive")
    outcome = map_layer(
        LAYER, chip, "os-local-ws", mapper="exhaustive", budget=Budget(evaluations=40_000)
    )
    assert outcome.mapspace_size > 1e9 and outcome.status == "budget_exhausted"


def test_bad_mapper_options_are_input_errors() -> None:
    with pytest.raises(MagnetError, match="samples"):
        get_mapper("random", samples=0)
    with pytest.raises(MagnetError, match="unknown mapper 'genetic'; allowed: fast"):
        get_mapper("genetic")
    with pytest.raises(MagnetError, match="seed"):
        get_mapper("fast", seed=-1)
    with pytest.raises(MagnetError, match="finite weights"):
        Objective.parse("energy=nan")


def test_a_user_mapper_registers_and_runs() -> None:
    from pydantic import BaseModel

    class FirstValid(Mapper):
        """Prices one batch of the shared sampler and keeps the best."""

        name = "first-valid-test"

        class Options(BaseModel):
            pass

        def search(self, space, tracker, rng):
            tracker.price(sample(space, 100, rng))

    register_mapper(FirstValid)
    outcome = map_layer(Layer(K=8, C=8, P=8, R=3), load_arch(str(MEDIUM)), mapper=FirstValid.name)
    assert outcome.status == "mapped" and outcome.mappings_evaluated == 100
    assert outcome.mapper == "first-valid-test"


# ---- the simba dataflows (MAGNet's loop nests) ----------------------------------------------
MAGNET_LIKE = dict(weight_collector=4, accum_collector=8)


def test_each_simba_dataflow_constrains_a_different_mapspace() -> None:
    arch = simba(**MAGNET_LIKE)
    sizes = {
        name: Space(LAYER, arch, dataflow_for(arch, name)).size()
        for name in ("free", "os-local-ws", "ws", "os", "is", "ws-local-os")
    }
    assert len(set(sizes.values())) == len(sizes), sizes
    assert all(size < sizes["free"] for name, size in sizes.items() if name != "free")


def test_simba_chip_native_dataflow_is_nvidias_nest() -> None:
    # tests/data/reference/simba.md, section 1 (simba-chip.cfg): weight register P,Q only;
    # accumulation buffer K only; weight buffer R,S,C only; input buffer no loops; global
    # buffer P,Q; lanes C (8) and vector units K (8); PEs over K and C
    chip = load_arch("simba-chip")
    found = map_layer(LAYER, chip, "os-local-ws", objective="energy")
    m = found.mapping
    assert set(m.level("WeightCollector").temporal) <= {"N", "P", "Q"}
    assert set(m.level("AccumulationBuffer").temporal) <= {"K"}
    assert set(m.level("WeightBuffer").temporal) <= {"C", "R", "S"}
    assert not m.level("InputBuffer").temporal
    assert set(m.level("GlobalBuffer").temporal) <= {"N", "P", "Q"}
    assert set(m.level("AccumulationBuffer").spatial_x) <= {"C"}
    assert set(m.level("InputBuffer").spatial_x) <= {"K"}
    assert set(m.level("GlobalBuffer").spatial_x) | set(m.level("GlobalBuffer").spatial_y) <= {
        "K",
        "C",
    }


def test_dataflows_order_as_their_local_reuse_says() -> None:
    # On a design with collectors, the hybrids (local reuse in both collectors) beat plain
    # ws (partial sums read and updated in the accumulation buffer every cycle), which
    # beats os and is (a weight read from the weight buffer for every vector MAC operation).
    arch = simba(**MAGNET_LIKE)
    energy = {
        name: map_layer(LAYER, arch, name, objective="energy").result.energy_pj
        for name in ("os-local-ws", "ws-local-os", "ws", "os", "is")
    }
    best_hybrid = min(energy["os-local-ws"], energy["ws-local-os"])
    assert best_hybrid < energy["ws"] < min(energy["os"], energy["is"])


def test_collectors_pay() -> None:
    # The same Simba-like chip with and without collectors, each under its best dataflow:
    # the collectors (a 4-weight weight collector per lane, an 8-sum accumulation collector
    # per vector unit) cut on-chip energy, as MAGNet reports.
    def on_chip(arch, flow):
        r = map_layer(LAYER, arch, flow, objective="energy").result
        return r.energy_pj - r.energy_pj_by_category["dram"]

    plain = on_chip(load_arch("simba-chip"), "os-local-ws")
    collected = on_chip(simba(**MAGNET_LIKE, clock_ghz=1.96), "ws-local-os")
    assert collected < 0.95 * plain


def test_energy_optimal_mappings_use_the_array() -> None:
    # Static energy (leakage and clock of every powered instance) makes an idle array cost:
    # the energy-optimal mapping of an ordinary conv layer keeps the array at least half busy.
    for name in ("os-local-ws", "ws"):
        found = map_layer(LAYER, load_arch("simba-chip"), name, objective="energy")
        assert found.result.utilization >= 0.5, name


def test_design_is_built_once() -> None:
    design = build_design(load_arch("simba-chip"), "ws")
    outcome = map_layer(LAYER, design)
    assert outcome.design is design and outcome.result.costs is design.costs
