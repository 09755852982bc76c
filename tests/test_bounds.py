"""Bounds before mapping (issue 33, ``magnet.search.bounds``): a design whose best possible
objectives the front already beats is recorded ``dominated``, not mapped; the bound is
proven on an exhaustively evaluated space."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from magnet.search import load_study, search
from magnet.search.design_space import load_space
from magnet.search.job import DesignJob, evaluate_design
from tests.conftest import DATA


def space_file(tmp_path: Path, **changes: object) -> Path:
    """The small test space as a grid of 96 designs (3 PE row counts) for latency and
    area, with ``changes``."""
    data = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    data["params"]["pe_rows"] = {"choices": [1, 2, 4]}
    data.update(sampler="grid", trials=96, objectives=["latency_cycles", "area_mm2"])
    data.update(changes)
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


#: Activations no design of the small space keeps on chip (its global buffer holds 32 KiB):
#: the conv's output is 64 x 28 x 28 words of 8 bits (49 KiB), read by a 1x1 convolution of
#: stride 2 (whose windows touch a quarter of its input box), then a layer that keeps none.
WIDE = {
    "name": "wide-net",
    "layers": [
        {"name": "conv", "K": 64, "C": 16, "P": 28, "Q": 28, "R": 3, "S": 3},
        {"name": "down", "K": 32, "C": 64, "P": 14, "Q": 14, "stride": 2},
        {"name": "fc", "kind": "fc", "K": 64, "C": 128},
    ],
}


# e2e though it starts nothing: a search of 200 trials, then every skipped design mapped, about
# 4 CPU-s here for each case (the other tests of the bounds stay in the edit loop's tier).
# The second case bounds energy too, on a network whose activations pass through DRAM.
@pytest.mark.e2e
@pytest.mark.parametrize("energy", [False, True])
def test_no_design_skipped_by_its_bounds_would_have_entered_the_front(
    tmp_path: Path, energy: bool
) -> None:
    changes: dict[str, object] = {}
    if energy:
        (tmp_path / "wide.yaml").write_text(yaml.safe_dump(WIDE))
        changes = {
            "objectives": ["energy_pj", "area_mm2"],
            "workloads": [str(tmp_path / "wide.yaml")],
        }
    path = space_file(tmp_path, **changes)
    if energy:  # global buffers that keep the conv's output, or not; 64 designs
        data = yaml.safe_load(path.read_text())
        data["params"].update(pe_rows=2, global_buffer={"choices": ["16KiB", "64KiB"]})
        path.write_text(yaml.safe_dump(data))
    search(path, n_trials=200, storage=str(tmp_path / "s.journal"), seed=0)
    study = load_study("small", str(tmp_path / "s.journal"))
    dominated = study.trials("dominated")
    # the bound bites: this is not a test that cannot fail (with energy: 6 here, none before
    # the bound counted the activations that pass through DRAM)
    assert len(dominated) >= (3 if energy else 10)
    assert study.counts()["designs"] == (64 if energy else 96)
    # map every skipped design after all: each is strictly beaten by a mapped design
    space = load_space(path)
    mapped = np.array([[t.values[o] for o in study.objectives] for t in study.feasible()])
    for t in dominated:
        params = {k: v for k, v in t.params.items() if k != "dataflow"}
        job = DesignJob.of(space, space.design(params), t.params["dataflow"], number=t.number)
        outcome = evaluate_design(job)
        assert outcome.status in ("ok", "infeasible"), outcome.reason
        if outcome.status != "ok":
            continue
        actual = np.array([outcome.metrics[o] for o in study.objectives])
        beaten = (mapped <= actual).all(axis=1) & (mapped < actual).any(axis=1)
        assert beaten.any(), (t.number, actual)
    # and none is on the front the study reports
    assert not {t.number for t in dominated} & {t.number for t in study.pareto_front()}
    # the dashboard serves the count its "dominated" card shows (``showCounts``: s.trials)
    from starlette.testclient import TestClient

    from magnet.dashboard import create_app

    with TestClient(create_app(str(tmp_path / "s.journal")), base_url="http://127.0.0.1") as c:
        assert c.get("/api/studies/small").json()["trials"]["dominated"] == len(dominated)
        assert 'data-count="dominated"' in c.get("/studies/small").text


@pytest.mark.parametrize(
    ("changes", "said"),
    [({"bounds": False}, False), ({"objectives": ["latency_cycles", "dram_bytes"]}, True)],
)
def test_a_space_without_bounds_maps_every_design(
    tmp_path: Path, changes: dict, said: bool
) -> None:
    # turned off, or an objective with no bound (said once when the search starts)
    path = space_file(tmp_path, trials=20, **changes)
    lines: list[str] = []
    search(path, n_trials=20, storage=str(tmp_path / "s.journal"), seed=0, log=lines.append)
    study = load_study("small", str(tmp_path / "s.journal"))
    assert study.counts()["dominated"] == 0
    assert any("no bound for dram_bytes" in line for line in lines) is said


@pytest.mark.parametrize("preset", ["simba-chip", "simba-package-4", "systolic-128"])
def test_the_bounds_are_below_what_a_mapped_design_spends(preset: str) -> None:
    # a network whose weights (3.2 M words) no chip here holds: every batch reads most of
    # them again from DRAM, the DRAM floor's biggest term; the bound stays under the record
    import magnet as mg
    from magnet.design import build_design
    from magnet.search.bounds import bound_metrics
    from magnet.workload.network import Network, NetworkLayer

    layers = (
        NetworkLayer(layer=mg.Layer(name="conv", K=64, C=32, P=14, Q=14, R=3, S=3)),
        NetworkLayer(layer=mg.Layer(name="fc", kind="fc", K=1024, C=3136)),
    )
    net = Network(name="big", layers=layers)
    design = build_design(mg.load_arch(preset), None)
    bounds = bound_metrics(design, [net], [1.0])
    record = mg.evaluate(net, design.arch, samples=300, rounds=3).record()
    assert bounds["energy_pj"] <= record.energy_pj
    assert bounds["latency_cycles"] <= record.latency_cycles
    assert bounds["images_per_s"] >= record.images_per_s
    assert bounds["area_mm2"] == pytest.approx(record.area_mm2)
    # the DRAM floor makes the energy bound more than the math alone
    assert bounds["energy_pj"] > 2 * 1024 * 3136 * design.costs.mac_pj


def test_the_activations_no_plan_keeps_are_in_the_energy_bound(tmp_path: Path) -> None:
    # WIDE on a design of the small space (a 32 KiB global buffer, 262,144 bits)
    import magnet as mg
    from magnet.design import Design
    from magnet.search.bounds import _activations_moved, bound_metrics
    from magnet.search.job import design_of, spec_network
    from magnet.workload.dims import Operand

    (tmp_path / "wide.yaml").write_text(yaml.safe_dump(WIDE))
    space = load_space(space_file(tmp_path, workloads=[str(tmp_path / "wide.yaml")]))
    params = {"vector_width": 8, "vector_units": 8, "weight_collector": 4, "accum_collector": 4}
    job = DesignJob.of(space, space.design(params), "os-local-ws")
    design = design_of(job)
    assert isinstance(design, Design)
    net = spec_network(job.workloads[0])
    moved = [(e.layer.name, read, written) for e, read, written in _activations_moved(design, net)]
    # conv: reads the network's input, 16 x 30 x 30 = 14,400 words; its output, 64 x 28 x 28
    # = 50,176 words of 8 bits (401,408 bits > 262,144), no plan keeps: written, 50,176.
    # down: reads it with 1x1 windows of stride 2, touching 14 of 27 columns and rows:
    # 64 x 14 x 14 = 12,544 words (its box: 64 x 27 x 27 = 46,656); nothing reads its output
    # (fc's 128 input channels are not its 32): written, 32 x 14 x 14 = 6,272.
    # fc: reads its 128 inputs from DRAM, writes its 64 outputs.
    assert moved == [("conv", 14400, 50176), ("down", 12544, 6272), ("fc", 128, 64)]
    # the energy bound grows by those words at DRAM's prices, beyond the network's input
    # (14,400 words) and output (64) it counted before
    levels = design.arch.inner_first
    dram = len(levels) - 1
    assert levels[dram].is_dram
    bits, access = levels[dram].bits(Operand.I), levels[dram].access_bits
    reads = (14400 + 12544 + 128 - 14400) * bits / access * design.costs.read_pj[dram]
    writes = (50176 + 6272 + 64 - 64) * levels[dram].bits(Operand.O) / access
    writes *= design.costs.update_pj[dram]
    layered = bound_metrics(design, [net], [1.0])["energy_pj"]
    staged = bound_metrics(design, [net], [1.0], staged=[True])["energy_pj"]
    assert layered - staged == pytest.approx(reads + writes)
    # and stays under what the mapped design spends
    record = mg.evaluate(net, design.arch, dataflow="os-local-ws", samples=300, rounds=3)
    assert layered <= record.record().energy_pj


def test_the_latency_bound_counts_the_lanes_a_layer_can_fill(tmp_path: Path) -> None:
    # a first layer of 3 channels on a design of the small space under os-local-ws: 256 MAC
    # units, fan-outs of 8 over C (the vector's lanes), 8 over K (the vector units) and
    # 2 x 2 over K or C (the PEs); a cycle does at most 3 x 8 x 2 x 2 = 96 useful MACs
    import magnet as mg
    from magnet.design import Design
    from magnet.search.bounds import _effectual, _math_cycles, bound_metrics
    from magnet.search.job import design_of
    from magnet.workload.network import Network, NetworkLayer

    space = load_space(space_file(tmp_path))
    params = {"vector_width": 8, "vector_units": 8, "weight_collector": 4, "accum_collector": 4}
    design = design_of(DesignJob.of(space, space.design({**params, "pe_rows": 2}), "os-local-ws"))
    assert isinstance(design, Design) and design.arch.mac_count == 256
    layer = mg.Layer(name="first", K=32, C=3, P=14, Q=14, R=3, S=3)
    net = Network(name="first", layers=(NetworkLayer(layer=layer),))
    # 32 x 3 x 14 x 14 x 9 = 169,344 MACs over 96: 1,764 cycles (over all 256 units: 661.5)
    assert _math_cycles(design, _effectual(design, net)) == pytest.approx(169_344 / 96)
    bound = bound_metrics(design, [net], [1.0])["latency_cycles"]
    record = mg.evaluate(net, design.arch, dataflow="os-local-ws", samples=300, rounds=3).record()
    assert 169_344 / 96 <= bound <= record.latency_cycles


def test_the_lanes_are_those_of_the_loop_nest_the_design_maps() -> None:
    # systolic-128 under ws unrolls K over its 128 columns and C over its 128 rows, of the
    # GEMM it maps (SCALE-Sim's view: C = 32 x 3 x 3 = 288 window columns): min(128, 64) x
    # min(128, 288) = 8,192 useful lanes, where the convolution's own 32 channels would give
    # 2,048 (a bound 4x too high: above what the design spends)
    import magnet as mg
    from magnet.api import design as build
    from magnet.mapper.mapspace import spatial_dims
    from magnet.search.bounds import _most_parallel, bound_metrics
    from magnet.workload.network import Network, NetworkLayer

    design = build(mg.load_arch("systolic-128"), "ws")
    layer = mg.Layer(name="c", K=64, C=32, P=14, Q=14, R=3, S=3)
    assert _most_parallel(design, layer, spatial_dims(design.arch, design.dataflow)) == 8192
    net = Network(name="c", layers=(NetworkLayer(layer=layer),))
    bound = bound_metrics(design, [net], [1.0])["latency_cycles"]
    record = mg.evaluate(net, design.arch, dataflow="ws", samples=300, rounds=3).record()
    assert 64 * 32 * 14 * 14 * 9 / 8192 <= bound <= record.latency_cycles
