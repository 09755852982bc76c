"""Stages fused depth-first (issue 31, item 4): a batch passed from stage to stage a tile at a
time, as Stream schedules a fused group of layers; the plan, fused or not, chosen by the
objective, layer after layer among the plans."""

from __future__ import annotations

import math

import numpy as np
import pytest

import magnet as mg
from magnet.api import evaluate
from magnet.model.pipeline_result import flow_cycles, rows_at_once
from magnet.report.text import network_table
from tests.test_pipeline import FAST, _chain, _package_4
from tests.test_pipeline_never_slower import _arch, _mini_resnet, bands_afresh


@pytest.mark.parametrize(
    ("tile_cycles", "tiles", "expected"),
    [
        # one tile each: a batch goes through the stages one after another
        ([100, 200, 100], [1, 1, 1], 400),
        # 4 tiles each of stages of 100, 200 and 100 cycles: the sum over 4 and 3 more
        # tiles of the slowest stage: (400 + 3 x 200) / 4 = 250
        ([25, 50, 25], [4, 4, 4], 250),
        # a stage of one tile waits for all of the one before: 4 x 25 + 200
        ([25, 200], [4, 1], 300),
        # a stage of one tile, then 4 of 25 cycles: 200 + 4 x 25
        ([200, 25], [1, 4], 300),
        # 2 tiles of 50, then 4 of 25: tiles 0 and 1 of the second need the first's tile 0
        # (done at 50): 75, 100; tiles 2 and 3 its tile 1 (done at 100): 125, 150
        ([50, 25], [2, 4], 150),
    ],
)
def test_stages_on_successive_tiles_by_hand(tile_cycles, tiles, expected) -> None:
    assert flow_cycles(tile_cycles, tiles) == pytest.approx(expected)


def _two_stages(monkeypatch, arch: mg.Arch, objective: str = "latency", **flags):
    """The 4-layer chain on ``arch`` split into two stages of two layers, one row each."""
    import magnet.mapper.planner as P

    monkeypatch.setattr(P, "candidates", lambda *args, **kwargs: [[(0, 2, 1), (2, 4, 1)]])
    return evaluate(_chain(4), arch, dataflow="ws", objective=objective, **FAST, **flags)


def test_two_fused_stages_pass_a_batch_a_step_at_a_time(monkeypatch) -> None:
    arch = _package_4(dram_bandwidth="stall-free")
    piped = _two_stages(monkeypatch, arch, pipeline=True)
    fused = _two_stages(monkeypatch, arch, fuse=True)
    assert not piped.depth_first and fused.depth_first
    # each layer's 32 x 32 x 3 x 3 = 9,216 weight bytes stay in its band's weight buffers,
    # so each stage passes a batch on a step at a time: the rows its layers' mappings
    # compute at once (their spatial factors over P), 14 rows in 14 / step tiles
    assert fused.plan.resident == {0, 1, 2, 3}
    steps = [rows_at_once(r) for r in fused.runs]
    assert len(set(steps)) == 1 and 14 % steps[0] == 0
    tiles = 14 // steps[0]
    assert fused.stage_tiles == [tiles, tiles]
    # the stages' times are the pipeline's (the same mappings, the same traffic: every
    # activation, 6,272 bytes, fits the 64 KiB global buffers whole or a tile at a time)
    assert fused.stage_cycles == piped.stage_cycles
    a, b = fused.stage_cycles
    assert fused.tile_cycles == pytest.approx([a / tiles, b / tiles])
    # the second stage starts on a batch once the first has made its first tile: the sum
    # over the tiles and the slower stage's tile for each further one
    assert fused.latency_cycles == math.ceil((a + b + (tiles - 1) * max(a, b)) / tiles - 1e-9)
    assert fused.latency_cycles < piped.latency_cycles == a + b
    # batches still leave one per slowest stage, at the pipeline's energy
    assert fused.interval_cycles == piped.interval_cycles == max(a, b)
    assert fused.energy_pj == pytest.approx(piped.energy_pj, rel=1e-12)
    # an activation is held a tile at a time: its rows and the 2 rows of overlap the next
    # 3 x 3 layer needs; the last, read by nobody, its rows alone
    rows = 14 // tiles
    share = [(rows + 2) / 14] * 3 + [rows / 14]
    assert fused.plan.shares == pytest.approx(share)
    record = fused.record()
    assert record.pipeline is not None
    assert [s.tiles for s in record.pipeline] == [tiles, tiles]
    assert record.latency_s == pytest.approx(fused.latency_cycles / 1.96e9)
    assert record.images_per_s == pytest.approx(1.96e9 / fused.interval_cycles)
    assert "fused stage (depth-first)" in network_table(record)


def test_a_tile_smaller_than_a_step_leaves_chiplets_idle(monkeypatch) -> None:
    # a stage's tile takes, for each entry, the steps (rows computed at once) its rows
    # need: cut into one-row tiles (Stream's tiling), a mapping computing 2 rows at once
    # still takes a step of c / 7 for each of the 14 tiles: 2c, half its chiplets idle.
    # Every band searched afresh: warm-started from the whole package's mapping, the band
    # of one row computes a row at a time, as fast (1,044 cycles either way), and no
    # step is then larger than a tile
    bands_afresh(monkeypatch)
    fused = _two_stages(monkeypatch, _package_4(dram_bandwidth="stall-free"), fuse=True)
    step = rows_at_once(fused.runs[0])
    assert step == 2  # the mapper splits the 14 output rows over the band's 2 chiplets
    a, b = fused.stage_cycles
    for cached in ("tile_cycles", "interval_cycles", "group_cycles"):
        fused.__dict__.pop(cached, None)
    fused.__dict__["stage_tiles"] = [14, 14]  # a row at a time
    assert fused.tile_cycles == pytest.approx([a / 7, b / 7])
    assert fused.interval_cycles == round(2 * max(a, b))  # each stage busy for 14 steps


def test_a_stage_whose_weights_do_not_stay_is_not_tiled(monkeypatch) -> None:
    # 640-byte weight buffers: a 3 x 3 x 32 layer's 576-bit tile leaves 64 bits, no weight
    # stays (tests/test_weights_stay.py), so a row at a time would read every weight again
    # for every row: the stages pass whole batches, as a pipeline's
    arch = _package_4(dram_bandwidth="stall-free", weight_buffer="640B")
    fused = _two_stages(monkeypatch, arch, fuse=True)
    assert fused.plan.resident == set()
    assert fused.stage_tiles == [1, 1]
    piped = _two_stages(monkeypatch, arch, pipeline=True)
    assert fused.latency_cycles == piped.latency_cycles


@pytest.mark.parametrize(
    ("arch", "seed"),
    [("simba-package-4", 4), ("simba-package-16", 16), ("random-4", 104), ("random-23", 123)],
)
def test_fused_is_never_slower_than_layer_by_layer(arch: str, seed: int) -> None:
    # under the latency objective the planner takes the fastest batch of its plans, fused or
    # not, the one stage on every chiplet (layer after layer) among them
    net, design = _mini_resnet(seed), _arch(arch)
    layered = evaluate(net, design, dataflow="os-local-ws", objective="latency", **FAST)
    fused = evaluate(net, design, dataflow="os-local-ws", objective="latency", fuse=True, **FAST)
    assert fused.latency_cycles <= layered.latency_cycles


def test_a_search_can_fuse_its_package_designs(tmp_path) -> None:
    import yaml

    from magnet.search import search
    from tests.conftest import DATA

    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space.update(
        name="fused",
        template="package",
        params={**space["params"], "chiplets_x": 2, "chiplets_y": 1},
        workloads=[{"workload": str(DATA / "search" / "small_net.yaml"), "fuse": True}],
    )
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    study = search(tmp_path / "space.yaml", n_trials=2, storage=str(tmp_path / "s.journal"))
    records = [t.records[0] for t in study.feasible()]
    assert records
    for record in records:  # the plan taken, its stages and their tiles, on all 2 chiplets
        stages = record.pipeline
        assert stages is not None
        assert sum(s.chiplets for s in stages) == 2 and all(s.tiles >= 1 for s in stages)
    # the design page lists the stages, with their groups and tiles when fused
    from magnet.report.design_page import design_view
    from tests.test_design_page import body

    trial = study.feasible()[0]
    page = body(design_view(study, trial))
    stages = trial.records[0].pipeline
    assert stages is not None
    fused = any(s.tiles > 1 for s in stages)
    head = "fused stage (depth-first)" if fused else "pipeline stage"
    assert f"<th>{head}</th>" in page
    assert ('<th class="num">tiles</th>' in page) == fused
    for s in stages:
        assert f"<td>{s.first} .. {s.last}</td>" in page


def test_fused_groups_run_one_after_another(monkeypatch) -> None:
    import magnet.mapper.planner as P

    # the 4-layer chain in two fused groups of two one-row stages each (a row per layer):
    # each group has the package to itself, its stages passing a batch a row at a time
    monkeypatch.setattr(P, "candidates", lambda *args, **kwargs: [[(0, 4, 2)]])
    plan = [(0, 1, 1), (1, 2, 1), (2, 3, 1), (3, 4, 1)]
    monkeypatch.setattr(P, "fused_groups", lambda *args: (plan, (0, 0, 1, 1)))
    arch = _package_4(dram_bandwidth="stall-free")
    result = evaluate(_chain(4), arch, dataflow="ws", objective="latency", fuse=True, **FAST)
    assert result.groups == (0, 0, 1, 1) and result.grouped
    t = result.stage_tiles[0]
    assert result.stage_tiles == [t] * 4 and t > 1
    c = result.stage_cycles
    # each group a pipeline over its tiles, the groups one after the other; a batch
    # leaves before the next enters
    groups = [(c[0] + c[1] + (t - 1) * max(c[0], c[1])) / t]
    groups.append((c[2] + c[3] + (t - 1) * max(c[2], c[3])) / t)
    assert result.latency_cycles == math.ceil(sum(groups) - 1e-9)
    assert result.interval_cycles == result.latency_cycles
    # the groups share the chiplets, so no weight stays across batches: every batch reads
    # the 4 x 9,216 weight bytes, with the chain's 16 x 16 x 32 input and 14 x 14 x 32
    # output (the activations between stay on chip)
    assert result.weights_on_chip_bytes == 0 and not result.weights_stay
    assert {row.weights_at for row in result.record().layers} == {"DRAM"}
    assert "keep theirs on chip" not in network_table(result.record())
    assert result.record().dram_bytes == pytest.approx(4 * 9_216 + 8_192 + 6_272)
    # each hand-over crosses one row: rows 0 -> 1, then back to row 0 for the second group,
    # then 0 -> 1 again: 14 x 14 x 32 x 8 = 50,176 bits x 1 hop each
    assert result.offsets == [0, 1, 0, 1]
    assert result.handover_bits == [50_176, 50_176, 50_176]
    assert [s.group for s in result.record().pipeline] == [0, 0, 1, 1]


def test_the_network_is_cut_where_the_weights_stop_fitting() -> None:
    from magnet.mapper.planner import _range_max, fused_groups

    cycles = {1: [10.0, 10.0, 10.0, 10.0], 2: [5.0, 5.0, 5.0, 5.0]}
    # at most two entries' weights fit the package: groups of entries 0-1 and 2-3, each one
    # stage on both rows (an interval of 10 and a batch of 10, against 10 and 20 on a row
    # each)
    two = fused_groups(cycles, 2, lambda j, i, h: i - j <= 2)
    assert two == ([(0, 2, 2), (2, 4, 2)], (0, 1))
    # everything fits: one group, the planner's own plans; an entry fitting nowhere: none
    assert fused_groups(cycles, 2, lambda j, i, h: True) is None
    assert fused_groups(cycles, 2, lambda j, i, h: not (j <= 2 < i)) is None
    widest = _range_max([3.0, 1.0, 4.0, 1.0, 5.0])
    assert [widest(0, 2), widest(1, 4), widest(3, 5), widest(2, 2)] == [3.0, 4.0, 5.0, 0.0]


def test_a_rule_of_weights_that_fit_answers_a_band_at_once_as_stage_by_stage() -> None:
    # ``StageFits.table`` (what ``frontier`` asks) against the rule asked for each stage, on
    # random bands: entries that fit nowhere (inf), a capacity without bound, ties
    from magnet.mapper.planner import StageFits

    rng = np.random.default_rng(3)
    for case in range(200):
        n = int(rng.integers(1, 12))
        held = {h: [float(v) for v in rng.integers(0, 6, n)] for h in (1, 2)}
        if case % 3 == 0:
            held[1][int(rng.integers(0, n))] = math.inf
        stream = {h: [float(v) for v in rng.integers(0, 4, n)] for h in (1, 2)}
        capacity = {1: float(rng.integers(0, 20)), 2: math.inf if case % 5 == 0 else 12.0}
        rule = StageFits(held, stream, capacity)
        for h in (1, 2):
            table = rule.table(h)
            for i in range(1, n + 1):
                for j in range(i):
                    assert bool(table[i, j]) == rule(j, i, h), (case, h, j, i)
