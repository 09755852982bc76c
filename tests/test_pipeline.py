"""A network pipelined across groups of a package's chiplets (issue 22): consecutive layers on
disjoint bands of chiplets, a batch's latency the sum of the stages, the throughput the
slowest stage's; hand-overs over the NoP and the leakage of waiting stages priced on top."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

import magnet as mg
from magnet.api import evaluate
from magnet.cli import main
from magnet.errors import MagnetError
from magnet.mapper.planner import entry_cycles, frontier, split
from magnet.workload.network import Network

GRS_PJ_PER_BIT = 1.17  # Poulton et al., JSSC 2019, as quoted in memory-and-links.md [PQ]
FAST = {"samples": 400, "rounds": 3, "population": 8, "children": 8}
CONV = "K=32,C=32,P=14,Q=14,R=3,S=3"


def _chain(n: int) -> Network:
    """``n`` copies of one 3x3 layer, each feeding the next (32 channels in and out)."""
    layer = mg.parse_layer(CONV)
    return Network.of("chain", [layer.model_copy(update={"name": f"c{i}"}) for i in range(n)])


def _bands(net: Network, cycles: dict[int, list[float | None]]) -> dict:
    """Results standing in for each layer's on each band height, by its shape: only
    ``latency_cycles`` (what the split reads); None: the layer does not fit that band."""
    return {
        h: {
            e.layer.shape_key(): SimpleNamespace(latency_cycles=c)
            for i, (e, c) in enumerate(zip(net.layers, times, strict=True))
            if c is not None
        }
        for h, times in cycles.items()
    }


def _distinct(n: int) -> Network:
    """``n`` layers of distinct shapes (K = 1 .. n)."""
    layers = [
        mg.parse_layer(f"K={i + 1},C=8,P=4").model_copy(update={"name": f"l{i}"}) for i in range(n)
    ]
    return Network.of("distinct", layers)


def test_the_split_takes_the_shortest_interval_then_the_shortest_latency() -> None:
    net = _distinct(4)
    # 4 cycles a layer on one row, 3 on both: the whole package takes 12 per batch; two
    # one-row stages of two layers take 8 each, a batch every 8 cycles (16 to go through)
    assert split(net, _bands(net, {1: [4, 4, 4, 4], 2: [3, 3, 3, 3]}), 2) == [(0, 2, 1), (2, 4, 1)]
    # 2 cycles on both rows: 8 a batch either way (interval 8); one stage is the faster batch
    assert split(net, _bands(net, {1: [4, 4, 4, 4], 2: [2, 2, 2, 2]}), 2) == [(0, 4, 2)]
    # the last layer fits only on both rows: its stage has both, so there is one stage
    assert split(net, _bands(net, {1: [4, 4, 4, None], 2: [3, 3, 3, 3]}), 2) == [(0, 4, 2)]
    # no band fits the first layer: no split
    assert split(net, _bands(net, {1: [None, 4, 4, 4], 2: [None, 3, 3, 3]}), 2) is None


def test_a_split_no_faster_than_the_shared_dram_takes_the_shortest_latency() -> None:
    net = _distinct(4)
    bands = _bands(net, {1: [4, 4, 4, 4], 2: [3, 3, 3, 3]})
    # the stages share the DRAM: if it needs 12 cycles a batch, two stages (8 each, 16 to go
    # through) are no faster than one (12), which gets a batch through sooner
    assert split(net, bands, 2, floor=12) == [(0, 4, 2)]
    assert split(net, bands, 2, floor=7) == [(0, 2, 1), (2, 4, 1)]


def test_the_split_balances_three_rows() -> None:
    net = _distinct(3)
    # cycles of the three layers on one row: 6, 2, 2; on two: 3, 1, 1; on three: 2, 1, 1.
    # (interval, latency) of each way to use the three rows, by hand:
    #   one stage on 3 rows: 2 + 1 + 1 = 4 -> (4, 4)
    #   2 rows then 1: [6-layer, small] 3 + 1 = 4 and 2 -> (4, 6); [6-layer] 3, [2 small] 4
    #   -> (4, 7); 1 row then 2, or three 1-row stages: the big layer alone takes 6
    bands = _bands(net, {1: [6, 2, 2], 2: [3, 1, 1], 3: [2, 1, 1]})
    assert split(net, bands, 3) == [(0, 3, 3)]
    # three rows slower (3, 2, 2: one stage 7): 2 rows then 1, first two layers first, (4, 6)
    bands = _bands(net, {1: [6, 2, 2], 2: [3, 1, 1], 3: [3, 2, 2]})
    assert split(net, bands, 3) == [(0, 2, 2), (2, 3, 1)]


def test_the_split_asks_once_whether_each_stage_may_run() -> None:
    net = _distinct(4)
    cycles = entry_cycles(net, _bands(net, {1: [4, 4, 4, 4], 2: [3, 3, 3, 3], 3: [2, 2, 2, 2]}))
    asked: Counter[tuple[int, int, int]] = Counter()

    def allowed(j: int, i: int, h: int) -> bool:  # at most two layers a stage
        asked[j, i, h] += 1
        return i - j <= 2

    # by hand, (interval, latency) on the 3 rows: two layers on 1 row (8) then two on 2 (6):
    # (8, 14); the best way to end on 1 row follows the best two layers on 2 rows, one a
    # row (4 + 4: interval 4 beats 6 on both rows): (8, 16)
    plans = frontier(cycles, 3, 0.0, 2, allowed)
    assert plans == [[(0, 2, 1), (2, 4, 2)], [(0, 1, 1), (1, 2, 1), (2, 4, 1)]]
    # the answer is the stage's alone: asked once, not again for each way to use the rows
    # before it (the fused planner's rules are asked thousands of times on ResNet-50)
    assert set(asked.values()) == {1}


def _package_4(**params: object) -> mg.Arch:
    package = mg.templates.get_template("package")
    return package.build({**package.presets["simba-package-4"], **params})


def test_two_stages_on_a_2x2_package_hand_over_over_the_nop(monkeypatch) -> None:
    import magnet.mapper.planner as P

    net = _chain(4)
    # two stages of two layers, one row (2 chiplets) each (the split is tested above; here,
    # what a split costs), DRAM without a bandwidth limit so that the stages set the pace
    monkeypatch.setattr(P, "candidates", lambda *args, **kwargs: [[(0, 2, 1), (2, 4, 1)]])
    arch = _package_4(dram_bandwidth="stall-free")
    result = evaluate(net, arch, dataflow="ws", pipeline=True, **FAST)
    record = result.record()
    stages = record.pipeline
    assert stages is not None
    assert [s.chiplets for s in stages] == [2, 2]  # a band of one row each, 2 chiplets
    assert [(s.first, s.last, s.layers) for s in stages] == [("c0", "c1", 2), ("c2", "c3", 2)]
    assert all(run.arch.chiplets == 2 for run in result.runs)
    # the record's mapping of the shape is the one that ran (on a 2-chiplet band)
    assert record.mappings[CONV] == result.runs[0].mapping.to_data()["mapping"]
    # a batch goes through both stages; one leaves every slowest stage's time
    assert record.latency_cycles == sum(s.latency_cycles for s in stages)
    interval = max(s.latency_cycles for s in stages)
    assert result.interval_cycles == interval
    assert record.images_per_s == pytest.approx(1.96e9 / interval, rel=1e-12)
    # c1's output (32 x 14 x 14 words of 8 bits) goes to c2's band over the links: the
    # bands' centres are (1 + 1) / 2 = 1 hop apart: 50,176 bits, at 1.17 pJ/bit 58,705.92 pJ
    assert result.handover_bits == [32 * 14 * 14 * 8 * 1] == [50_176]
    assert "inputs" in result.runs[2].on_chip and "outputs" in result.runs[1].on_chip
    # DRAM's ports are on the edge row, the first band's: the second band is mapped as if
    # they were its own, and its DRAM traffic (c3's 14 x 14 x 32 = 6,272 output bytes; the
    # weights stay) crosses one more row of links: 50,176 bits x 1 hop, 58,705.92 pJ again
    assert result.approach_bits == [0, 50_176]
    runs_nop = sum(r.energy_pj_by_category["nop"] for r in result.runs)
    assert record.energy_pj_by_category["nop"] == pytest.approx(runs_nop + 2 * 58_705.92)
    assert record.nop_bytes == pytest.approx(sum(r.nop_bytes for r in result.runs) + 2 * 6_272)
    # everything adds up
    assert sum(record.energy_pj_by_category.values()) == pytest.approx(record.energy_pj)
    assert sum(record.energy_pj_by_level.values()) == pytest.approx(record.energy_pj)


def test_the_stages_share_the_dram() -> None:
    # the same chain with 1 GB/s of DRAM: every stage reads DRAM at once, and a batch's
    # traffic is compulsory: c0's 16 x 16 x 32 = 8,192 input bytes and c3's 14 x 14 x 32 =
    # 6,272 output bytes (the activations between stay on chip, and the 4 x 9,216 weight
    # bytes, 32 x 32 x 3 x 3 each, stay in the weight buffers across batches) = 14,464 bytes;
    # 1 GB/s at 1.96 GHz is 0.5102 bytes a cycle: 28,349.4 -> 28,350 cycles, more than
    # either stage alone. The first batch also reads the weights: 14,464 + 36,864 bytes.
    net = _chain(4)
    result = evaluate(net, _package_4(dram_bandwidth=1), dataflow="ws", pipeline=True, **FAST)
    record = result.record()
    assert record.dram_bytes == pytest.approx(8_192 + 6_272)
    assert sum(r.dram_bytes for r in result.first_runs) == pytest.approx(4 * 9_216 + 14_464)
    assert record.weights_on_chip_bytes >= 4 * 9_216  # every copy counted
    assert len(result.stages) == 2
    assert result.interval_cycles == 28_350 > max(result.stage_cycles)
    assert record.images_per_s == pytest.approx(1.96e9 / 28_350, rel=1e-12)


def test_a_faster_stage_leaks_while_it_waits() -> None:
    net = _chain(3)
    result = evaluate(net, mg.load_arch("simba-package-4"), dataflow="ws", pipeline=True, **FAST)
    cycles = result.stage_cycles
    assert len(cycles) == 2 and cycles[0] != cycles[1]  # two layers on one band, one on the other
    short = min(range(2), key=lambda s: cycles[s])
    stage = result.stages[short]
    waits = (result.interval_cycles - cycles[short]) / cycles[short]
    # its leakage power (its layers' static energy over its time) during the wait
    leak = sum(
        result.runs[i].energy_pj_by_category["static"] for i in range(stage.start, stage.end)
    )
    runs_static = sum(r.energy_pj_by_category["static"] for r in result.runs)
    static = result.energy_pj_by_category["static"]
    assert static == pytest.approx(runs_static + leak * waits, rel=1e-9)


@pytest.mark.parametrize("flag", ["pipeline", "fuse"])
def test_pipelining_needs_a_package_and_a_network(flag: str) -> None:
    # a pipeline and a fused one (tests/test_fusion.py) alike
    net = _chain(2)
    with pytest.raises(MagnetError, match="is a chip: pipelining needs a package"):
        evaluate(net, mg.load_arch("simba-chip"), dataflow="ws", **{flag: True})
    with pytest.raises(MagnetError, match=f"{flag}: a network"):
        evaluate(mg.parse_layer(CONV), mg.load_arch("simba-package-4"), **{flag: True})
    runner = CliRunner()
    chip = ["evaluate", "--arch", "simba-chip", "--workload", "resnet18", "--dataflow", "ws"]
    out = runner.invoke(main, [*chip, f"--{flag}"])
    assert out.exit_code == 2 and "pipelining needs a package" in out.output
    one = ["evaluate", "--arch", "simba-package-4", "--layer", CONV, f"--{flag}"]
    out = runner.invoke(main, one)
    assert out.exit_code == 2 and f"--{flag} applies to --workload" in out.output


def test_a_search_can_pipeline_its_package_designs(tmp_path) -> None:
    import yaml

    from magnet.search import search
    from tests.conftest import DATA

    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space.update(
        name="piped",
        template="package",
        params={**space["params"], "chiplets_x": {"choices": [1, 2]}, "chiplets_y": 1},
        workloads=[{"workload": str(DATA / "search" / "small_net.yaml"), "pipeline": True}],
    )
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    study = search(tmp_path / "space.yaml", n_trials=4, storage=str(tmp_path / "s.journal"))
    records = {t.params["chiplets_x"]: t.records[0] for t in study.feasible()}
    assert set(records) == {1, 2}  # both kinds of design were drawn
    # two chiplets: stages of the layers in order (conv, fc) on all of them, a batch every
    # slowest stage's time
    two = records[2]
    stages = two.pipeline
    assert stages is not None
    assert stages[0].first == "conv" and stages[-1].last == "fc"
    assert sum(s.chiplets for s in stages) == 2 and sum(s.layers for s in stages) == 2
    # the interval: the slowest stage, or the shared DRAM's time for the batch's traffic
    assert two.dram_bytes is not None and two.dram_bytes_per_cycle is not None
    dram_cycles = math.ceil(two.dram_bytes / two.dram_bytes_per_cycle - 1e-9)
    interval = max(max(s.latency_cycles for s in stages), dram_cycles)
    assert two.images_per_s == pytest.approx(two.clock_ghz * 1e9 / interval, rel=1e-9)
    assert records[1].pipeline is None  # one chip: layer after layer
    # the design page lists the stages
    from magnet.report.design_page import design_view
    from tests.test_design_page import body

    trial = next(t for t in study.feasible() if t.params["chiplets_x"] == 2)
    page = body(design_view(study, trial))
    assert "<th>pipeline stage</th>" in page
    for s in stages:
        assert f"<td>{s.first} .. {s.last}</td>" in page


def test_the_stages_share_the_links_from_dram(monkeypatch) -> None:
    import magnet.mapper.planner as P

    # the chain's two stages of two layers, one row each, DRAM unlimited, its two edge links
    # at 0.1 GB/s each: every batch's DRAM traffic, c0's 8,192 input bytes and c3's 6,272
    # output bytes (the weights stay, the activations between stay on chip), enters or
    # leaves the package through those two links whichever stage moves it: 115,712 bits at
    # 2 x 0.1 x 8 / 1.96 = 0.8163 bits a cycle, 141,747.2 cycles
    monkeypatch.setattr(P, "candidates", lambda *args, **kwargs: [[(0, 2, 1), (2, 4, 1)]])
    arch = _package_4(dram_bandwidth="stall-free", link_gb_per_s=0.1)
    result = evaluate(_chain(4), arch, dataflow="ws", pipeline=True, **FAST)
    assert result.dram_bytes == pytest.approx(8_192 + 6_272)
    assert result.port_cycles == pytest.approx(115_712 / (2 * 0.1 * 8 / 1.96))
    # here each stage's own link traffic (its layers' fills cross the links too) is longer
    assert result.interval_cycles == max(result.stage_cycles) > result.port_cycles
    # stages faster than the ports would wait for them: a batch every 141,748 cycles
    result.__dict__.pop("interval_cycles")
    result.__dict__["tile_cycles"] = [1.0, 1.0]
    assert result.interval_cycles == 141_748
