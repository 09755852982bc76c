"""Multi-chiplet packages (issue 22, first part): the ``package`` template tiles simba-chip
chiplets on a mesh network-on-package; the mapper partitions a layer across chiplets with its
spatial loops at DRAM, and the NoP's words are priced per hop at the link's pJ/bit."""

from __future__ import annotations

import math

import pytest

import magnet as mg
from magnet.api import evaluate, map_layer
from magnet.cost.tables import load_link_table
from magnet.mapping.evaluate import Result
from magnet.mapping.mapping import Mapping
from magnet.report.text import network_table
from tests.conftest import DATA

GRS_PJ_PER_BIT = 1.17  # Poulton et al., JSSC 2019, as quoted in memory-and-links.md [PQ]
FAST = {"samples": 400, "rounds": 3, "population": 8, "children": 8}


def test_the_grs_link_is_the_cited_figure() -> None:
    assert load_link_table().technologies["grs"].energy_pj_per_bit.value == GRS_PJ_PER_BIT


def test_a_package_of_one_chiplet_is_the_chip() -> None:
    layer = mg.parse_layer("K=64,C=64,P=14,Q=14,R=3,S=3")
    chip, one = mg.load_arch("simba-chip"), mg.load_arch("simba-package-1")
    found = map_layer(layer, chip, "ws", seed=0, **FAST).result
    again = evaluate(layer, one, found.mapping)
    assert again.energy_pj == found.energy_pj
    assert again.latency_cycles == found.latency_cycles
    assert again.area_mm2 == found.area_mm2
    assert map_layer(layer, one, "ws", seed=0, **FAST).result.energy_pj == found.energy_pj


def _on_four_chiplets(split: dict[str, dict[str, int]], share: str) -> Result:
    """``K=64,C=32,P=Q=7`` on simba-package-4 (``_on_package``)."""
    return _on_package("K=64,C=32,P=7,Q=7", share, split)


def test_output_channels_across_2x2_chiplets_multicast_the_inputs() -> None:
    r = _on_four_chiplets({"spatial_x": {"K": 2}, "spatial_y": {"K": 2}}, "K=16,C=32,P=7,Q=7")
    # K split 4 ways: each chiplet's weights (2,048 in all, 8 bits) and outputs (3,136, sent
    # at the 24-bit accumulation width) cross the NoP once, to or from their own chiplet; every
    # input (32 x 7 x 7 = 1,568 words of 8 bits) goes to all four. magnet's tree fan-out
    # (magnet.mapping.evaluate): the DRAM's port is sqrt(4) / 2 = 1 hop from the first
    # chiplet, then one hop per further chiplet: 1 hop for a unicast, 1 + 3 for a multicast.
    hops = {"weights": 1, "inputs": 4, "outputs": 1}
    bits = 8 * 2048 * hops["weights"] + 8 * 1568 * hops["inputs"] + 24 * 3136 * hops["outputs"]
    assert r.batch.network_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert bits * GRS_PJ_PER_BIT == pytest.approx(165_934.08)
    # the NoP is its own category, not the chip's network; its bytes are the bits above / 8
    assert r.energy_pj_by_category["nop"] == pytest.approx(165_934.08, rel=1e-12)
    # 8 x 2,048 + 8 x 1,568 x 4 + 24 x 3,136 = 141,824 bits = 17,728 bytes over the links
    assert r.nop_bytes == bits / 8 == 17_728
    assert r.partition == {"K": 4}
    record = r.record()
    assert record.partition == {"K": 4} and record.nop_bytes == 17_728


def test_input_channels_across_2x2_chiplets_reduce_the_partial_sums() -> None:
    r = _on_four_chiplets({"spatial_x": {"C": 2}, "spatial_y": {"C": 2}}, "K=64,C=8,P=7,Q=7")
    # C split 4 ways: weights and inputs are each chiplet's own (1 hop each), and every
    # output's four partial sums come up the tree (1 + 3 hops at 24 bits) merged by one add
    # per pair, 3 adds per output at the accumulation width
    bits = 8 * 2048 * 1 + 8 * 1568 * 1 + 24 * 3136 * 4
    adds = 3136 * 3 * r.costs.accum_add_pj
    assert r.batch.network_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits + adds, rel=1e-12)
    # the reductions' adds are the NoP's too; only the links' bits are NoP bytes
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits + adds)
    assert r.nop_bytes == bits / 8 and r.partition == {"C": 4}


def test_more_chiplets_run_a_big_layer_sooner_and_spend_more_on_the_nop() -> None:
    # ResNet-50's res4 3x3 layer with the package's DRAM wide enough not to set the pace
    layer = mg.parse_layer("K=256,C=256,P=14,Q=14,R=3,S=3")
    latency, nop_share = [], []
    for n in (1, 2, 4):
        arch = mg.templates.get_template("package").build(
            {
                **mg.templates.get_template("package").presets["simba-package-1"],
                "chiplets_x": n,
                "chiplets_y": n,
                "dram_bandwidth": 1000,
            },
        )
        r = map_layer(layer, arch, "ws", objective="latency", seed=0, **FAST).result
        assert r.macs == layer.macs  # every MAC done, once
        latency.append(r.latency_cycles)
        nop_share.append(r.energy_pj_by_category["nop"] / r.energy_pj)
    assert latency[0] > latency[1] > latency[2]
    assert nop_share[0] == 0 < nop_share[1] < nop_share[2]


def test_a_network_on_a_package_reports_chiplets_rates_and_each_layers_split() -> None:
    net = mg.load_workload(str(DATA / "network" / "tiny_net.yaml"))
    on_chip = evaluate(net, mg.load_arch("simba-chip"), dataflow="ws", **FAST).record()
    packaged = evaluate(net, mg.load_arch("simba-package-4"), dataflow="ws", **FAST).record()
    assert (on_chip.chiplets, packaged.chiplets) == (1, 4)  # 2 x 2
    assert on_chip.nop_bytes == on_chip.energy_pj_by_category["nop"] == 0
    # the network's NoP bytes are its layers' (each repeat counted)
    rows = packaged.layers
    assert packaged.nop_bytes == pytest.approx(sum(r.nop_bytes * r.count for r in rows))
    assert packaged.energy_pj_by_category["nop"] > 0
    for row in rows:  # DRAM reaches even one chiplet over a link (1 hop: sqrt(4) / 2)
        assert all(f > 1 for f in row.partition.values())
        assert row.nop_bytes > 0
        assert math.prod(row.partition.values()) <= 4
    assert packaged.images_per_s == pytest.approx(net.batch / packaged.latency_s, rel=1e-12)
    text = network_table(packaged)
    assert "chiplets     4; NoP" in text and "nop" in text
    assert "chiplets" not in network_table(on_chip) and "nop" not in network_table(on_chip)


# ---- halo exchange (issue 22, part 2) ------------------------------------------------------
# A 3x3 layer's output pixels split across chiplets: DRAM reads every input word once, and
# the overlap of neighbouring chiplets' windows (the halo) crosses one link from the
# neighbour holding it (magnet.mapping.analysis._parent_share). Layers: K=64, C=32, so the
# weights are 64 x 32 x 3 x 3 = 18,432 words, multicast to all four chiplets when K is not
# split (1 + 3 hops, as in the K test above). Inputs 8 bits, outputs sent at 24 bits.
WEIGHT_BITS_TO_ALL_4 = 18_432 * 8 * 4


def _on_package(
    full: str, share: str, split: dict, arch: mg.Arch | str = "simba-package-4"
) -> Result:
    """``full`` on ``arch``: each chiplet maps its ``share`` as simba-chip does (no DRAM
    loops: every word fits on chip), and DRAM spreads the shares by ``split``."""
    chip = map_layer(mg.parse_layer(share), mg.load_arch("simba-chip"), "ws", seed=0).result
    assert chip.mapping.level("DRAM") is None or not chip.mapping.level("DRAM").temporal
    levels = [
        lvl.model_copy(update=split) if lvl.target == "DRAM" else lvl for lvl in chip.mapping.levels
    ]
    target = mg.load_arch(arch) if isinstance(arch, str) else arch
    return evaluate(mg.parse_layer(full), target, Mapping(levels=tuple(levels)))


def _inputs(r: Result) -> tuple[float, float, float]:
    """(DRAM input reads, input fills of one chiplet's global buffer, halo words)."""
    c = r.batch.counts
    return float(c.reads[-1, 1, 0]), float(c.fills[-2, 1, 0]), float(c.halo_words[-1, 0])


P2_Q2 = {"spatial_x": {"P": 2}, "spatial_y": {"Q": 2}}


@pytest.mark.parametrize(
    ("stride", "dilation", "p", "window", "union"),
    [
        # stride 1: a chiplet's 4 output columns need 1 x (4 - 1) + 1 x (3 - 1) + 1 = 6
        # input columns; both together 1 x (8 - 1) + 2 + 1 = 10; 2 columns overlap
        (1, 1, 4, 6, 10),
        # stride 2: 2 x (2 - 1) + 2 + 1 = 5 columns each, 2 x (4 - 1) + 3 = 9 together
        (2, 1, 4 // 2, 5, 9),
        # dilation 2: 1 x 3 + 2 x 2 + 1 = 8 columns each, 7 + 4 + 1 = 12 together
        (1, 2, 4, 8, 12),
        # stride 3 = the 3-tap window: 3 x 1 + 2 + 1 = 6 each, 3 x 3 + 3 = 12 = 2 x 6: no overlap
        (3, 1, 4 // 2, 6, 12),
    ],
)
def test_output_pixels_across_2x2_chiplets_exchange_the_halo(
    stride: int, dilation: int, p: int, window: int, union: int
) -> None:
    geometry = (
        f",R=3,S=3,wstride={stride},hstride={stride},wdilation={dilation},hdilation={dilation}"
    )
    full = f"K=64,C=32,P={2 * p},Q={2 * p}" + geometry
    r = _on_package(full, f"K=64,C=32,P={p},Q={p}" + geometry, P2_Q2)
    dram_reads, chiplet_fills, halo = _inputs(r)
    # every chiplet fills its window box (window x window x 32 channels) ...
    assert chiplet_fills == window * window * 32
    # ... DRAM reads each input word once (union x union x 32) and the rest, four windows
    # less the union, crosses one link from a neighbour
    assert dram_reads == pytest.approx(union * union * 32, rel=1e-12)
    assert halo == pytest.approx(4 * window * window * 32 - union * union * 32, abs=1e-9)
    # the NoP: weights to all 4; each DRAM input word to its one chiplet (1 hop: DRAM's port
    # is sqrt(4) / 2 = 1 hop from the first chiplet); outputs 64 x (2p)^2 to their chiplet
    # (1 hop); halo words 1 hop from the neighbour
    bits = WEIGHT_BITS_TO_ALL_4 + union**2 * 32 * 8 + 64 * (2 * p) ** 2 * 24 + halo * 8
    assert r.batch.network_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    # the halo's bits are the NoP's: in its category and its bytes
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert r.nop_bytes == pytest.approx(bits / 8, rel=1e-12)
    assert r.partition == {"P": 2, "Q": 2}


def test_the_halo_of_a_3x3_layer_on_2x2_chiplets_by_hand() -> None:
    r = _on_package("K=64,C=32,P=8,Q=8,R=3,S=3", "K=64,C=32,P=4,Q=4,R=3,S=3", P2_Q2)
    # chiplet (x, y) holds input columns 4x..4x+5 and rows 4y..4y+5 (6 x 6). Per channel,
    # say DRAM sends (0, 0) its 36 words and each other chiplet what nobody before it has:
    # (1, 0) gets columns 4-5 of rows 0-5 from (0, 0): 12 words; (0, 1) rows 4-5 of
    # columns 0-5 from (0, 0): 12; (1, 1) rows 4-5 of columns 4-9 (12) and columns 4-5 of
    # rows 6-9 (8): 20. 44 halo words per channel, 1,408 for 32; DRAM reads 10 x 10 x 32 =
    # 3,200 input words instead of 4 x 6 x 6 x 32 = 4,608 (before the exchange).
    dram_reads, _, halo = _inputs(r)
    assert (dram_reads, halo) == (pytest.approx(3_200), pytest.approx(1_408))
    # NoP: 589,824 (weights) + 3,200 x 8 + 4,096 x 24 + 1,408 x 8 = 724,992 bits x 1.17
    # (on 2 x 2 the same as each chiplet's whole window from DRAM, 1 hop away: the halo's
    # 1,408 x 8 x 1.17 = 13,178.88 pJ is what its DRAM reads would have cost on the links)
    assert r.energy_pj_by_category["nop"] == pytest.approx(848_240.64, rel=1e-12)
    assert r.nop_bytes == pytest.approx(724_992 / 8, rel=1e-12)
    # DRAM's cycles fall with its reads: 18,432 + 3,200 input + 4,096 output words at its
    # bandwidth (words per cycle; 25,728 words instead of 27,136 without the exchange)
    dram = mg.load_arch("simba-package-4").levels[0]
    assert dram.shared_bandwidth is not None
    words = 18_432 + 3_200 + 4_096
    assert r.batch.level_cycles[-1, 0] == pytest.approx(words / dram.shared_bandwidth)


def test_output_channels_across_chiplets_have_no_halo() -> None:
    r = _on_package(
        "K=64,C=32,P=8,Q=8,R=3,S=3",
        "K=16,C=32,P=8,Q=8,R=3,S=3",
        {"spatial_x": {"K": 2}, "spatial_y": {"K": 2}},
    )
    # every chiplet needs the whole input (10 x 10 x 32 = 3,200 words): DRAM multicasts it
    assert _inputs(r) == (3_200, 3_200, 0)


def test_each_chiplet_needing_a_halo_word_gets_its_own_copy() -> None:
    r = _on_package(
        "K=64,C=32,P=8,Q=8,R=3,S=3",
        "K=32,C=32,P=4,Q=8,R=3,S=3",
        {"spatial_x": {"P": 2}, "spatial_y": {"K": 2}},
    )
    # P split along x, K along y: a column of two chiplets holds 6 x 10 x 32 = 1,920 input
    # words (multicast to both); DRAM reads 10 x 10 x 32 = 3,200; the 2 x 10 x 32 = 640
    # overlap words reach both chiplets of the other column, each from its x neighbour: 1,280
    assert _inputs(r) == (pytest.approx(3_200), 1_920, pytest.approx(1_280))
    # NoP: weights 18,432 to two chiplets each (1 + 1 hops), DRAM's inputs to two (2 hops),
    # 4,096 outputs (1 hop), 1,280 halo words (1 hop): 454,656 bits
    bits = 18_432 * 8 * 2 + 3_200 * 8 * 2 + 4_096 * 24 + 1_280 * 8
    assert bits == 454_656
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert r.nop_bytes == pytest.approx(454_656 / 8, rel=1e-12)


def test_a_halo_wider_than_a_tile_passes_along_the_row() -> None:
    # simba-package-16 (4 x 4): P split 4 along x, one output column per chiplet, so a
    # chiplet's 3 input columns overlap its neighbour's by 2 and the next one's by 1: column 2
    # is needed by chiplets 0, 1 and 2 and passes 0 -> 1 -> 2 (one hop each)
    r = _on_package(
        "K=64,C=32,P=4,Q=8,R=3,S=3",
        "K=16,C=32,P=1,Q=8,R=3,S=3",
        {"spatial_x": {"P": 4}, "spatial_y": {"K": 4}},
        "simba-package-16",
    )
    # a chiplet holds 3 x 10 x 32 = 960 input words; a row of 4 holds 4 x 960 = 3,840, of
    # which 6 x 10 x 32 = 1,920 are distinct (read by DRAM); the other 1,920 cross a link to
    # each of the 4 chiplets (K) of a column: 7,680 halo words
    assert _inputs(r) == (pytest.approx(1_920), 960, pytest.approx(7_680))
    # NoP: DRAM's port sqrt(16) / 2 = 2 hops from the first chiplet; weights and inputs go to
    # 4 chiplets each (2 + 3 hops), 64 x 4 x 8 = 2,048 outputs to one (2 hops), halo 1 hop
    bits = 18_432 * 8 * 5 + 1_920 * 8 * 5 + 2_048 * 24 * 2 + 7_680 * 8
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert r.nop_bytes == pytest.approx(bits / 8, rel=1e-12)
    assert GRS_PJ_PER_BIT * bits == pytest.approx(1_139_374.08)


def test_chiplets_exchange_the_halo_of_one_step_of_drams_loops() -> None:
    # DRAM loops over P twice; in each step the four chiplets hold 6 x 6 windows of the
    # 16 x 8 output: step 0 input columns 0-9, step 1 columns 8-17
    r = _on_package(
        "K=64,C=32,P=16,Q=8,R=3,S=3",
        "K=64,C=32,P=4,Q=4,R=3,S=3",
        {**P2_Q2, "temporal": {"P": 2}},
    )
    # each step: 4 x 1,152 words filled, 3,200 read by DRAM, 1,408 exchanged. Columns 8-9
    # (2 x 10 x 32 = 640 words) are read again in step 1: the chiplet holding them in step 0
    # is not the neighbour of the one needing them. DRAM: 6,400 = 18 x 10 x 32 + 640
    assert _inputs(r) == (pytest.approx(6_400), 2 * 1_152, pytest.approx(2 * 1_408))


def test_a_window_sliding_across_the_split_exchanges_its_new_rows() -> None:
    # P split 2 along x, K 2 along y; DRAM loops Q twice: each chiplet's 6 x 6 window (4 x 4
    # outputs) slides 4 rows down, keeping 2 and fetching 4 new rows of its 6 columns
    r = _on_package(
        "K=64,C=32,P=8,Q=8,R=3,S=3",
        "K=32,C=32,P=4,Q=4,R=3,S=3",
        {"spatial_x": {"P": 2}, "spatial_y": {"K": 2}, "temporal": {"Q": 2}},
    )
    # a chiplet fills (6 + 4) x 6 x 32 = 1,920 words; DRAM reads the columns' union, 10 wide:
    # (6 + 4) x 10 x 32 = 3,200, every input word once; the two columns of chiplets overlap
    # in 2 of their 12 columns: 2 x 1,920 - 3,200 = 640 words, to both chiplets (K) of a
    # column: 1,280 halo words
    assert _inputs(r) == (pytest.approx(3_200), 1_920, pytest.approx(1_280))


def test_a_window_sliding_along_the_split_is_not_exchanged() -> None:
    # one output column per chiplet and step (P split 2, DRAM loops P twice): a chiplet's
    # 3 columns move by 2 per step, less than its window, so it keeps one column and
    # fetches 2 (its own sliding reuse). Along P nothing is exchanged; along Q (split 2,
    # rows 0-5 and 4-9) the halo is
    r = _on_package(
        "K=64,C=32,P=4,Q=8,R=3,S=3",
        "K=64,C=32,P=1,Q=4,R=3,S=3",
        {**P2_Q2, "temporal": {"P": 2}},
    )
    # a chiplet fills (3 + 2) x 6 x 32 = 960; the four 3,840, a Q pair of which overlaps
    # in 2 of 12 rows: DRAM reads 3,840 x 10 / 12 = 3,200; 640 halo words
    assert _inputs(r) == (pytest.approx(3_200), 960, pytest.approx(640))


def test_on_chip_fanouts_keep_reading_every_window() -> None:
    # the same DRAM fan-out without chip-to-chip links: each child reads its own window
    # from DRAM (as Timeloop counts an on-chip fan-out): 4 x 6 x 6 x 32 = 4,608, no halo
    arch = mg.load_arch("simba-package-4")
    dram = arch.levels[0]
    on_chip = dram.fanout.model_copy(update={"link": None, "link_gb_per_s": None})
    levels = (dram.model_copy(update={"fanout": on_chip}), *arch.levels[1:])
    r = _on_package(
        "K=64,C=32,P=8,Q=8,R=3,S=3",
        "K=64,C=32,P=4,Q=4,R=3,S=3",
        P2_Q2,
        arch.model_copy(update={"levels": levels}),
    )
    assert _inputs(r) == (4_608, 1_152, 0)


def test_the_links_bandwidth_bounds_every_operand() -> None:
    # K=64,C=32,P=Q=7 split over K on 2 x 2 chiplets, DRAM wide enough not to set the pace,
    # links of 20 GB/s (a fifth of the default)
    package = mg.templates.get_template("package")
    preset = {**package.presets["simba-package-4"], "dram_bandwidth": 10_000}
    split = {"spatial_x": {"K": 2}, "spatial_y": {"K": 2}}
    slow = package.build({**preset, "link_gb_per_s": 20})
    r = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", split, slow)
    # into each chiplet: its 512 weights and all 1,568 inputs at 8 bits (2,048 x 8 + 1,568 x
    # 4 x 8 over 4 chiplets = 16,640 bits); out of it: its 784 outputs at 24 bits = 18,816
    # bits, the busier way. 20 GB/s at 1.96 GHz is 160 / 1.96 = 81.63 bits a cycle:
    # 18,816 x 1.96 / 160 = 230.5 cycles, more than the chiplet's compute
    assert r.batch.link_cycles[0] == pytest.approx(18_816 * 1.96 / 160, rel=1e-12)
    assert r.compute_cycles < 230
    assert r.bottleneck == "NoP" and r.bound == "memory"
    assert r.latency_cycles == 231  # ceil(230.496)
    # at the default 100 GB/s the links need 46.1 cycles: they no longer set the pace
    again = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", split, package.build(preset))
    assert again.batch.link_cycles[0] == pytest.approx(18_816 * 1.96 / 800, rel=1e-12)
    assert again.bottleneck != "NoP" and again.latency_cycles < r.latency_cycles


def test_the_command_line_reports_a_package() -> None:
    from click.testing import CliRunner

    from magnet.cli import main

    args = ["evaluate", "--arch", "simba-package-4", "--workload", "resnet18:batch=1"]
    out = CliRunner().invoke(main, [*args, "--dataflow", "ws", "--samples", "200", "--json"])
    assert out.exit_code == 0, out.output
    record = mg.NetworkRecord.model_validate_json(out.stdout)
    assert record.chiplets == 4 and record.nop_bytes > 0
    assert record.images_per_s == pytest.approx(1 / record.latency_s)  # batch 1
    assert record.energy_pj_by_category["nop"] > 0 and record.tops_per_w > 0
    # DRAM reaches a chiplet over a link (a ReLU fused on a conv's output moves nothing)
    assert all(r.nop_bytes > 0 for r in record.layers if r.dram_bytes > 0)
    assert any(r.partition for r in record.layers)


@pytest.mark.parametrize(("partitioning", "wait_cycles"), [("uniform", 79), ("non-uniform", 66)])
def test_a_hop_latency_waits_for_the_farthest_chiplet_or_the_mean(
    partitioning, wait_cycles
) -> None:
    # K=48 split over 3 chiplets in a row (3 x 1), hops of 10 ns (an assumption) at 1.96 GHz.
    # The port sits mid-row, one hop from the middle chiplet, two from the outer ones: the
    # first words go out and the last partial sums come back. Uniform shares wait for the
    # farthest, 2 x 2 hops x 10 ns x 1.96 GHz = 78.4 -> 79 cycles; non-uniform shares for the
    # mean, 1 + (1 + 0 + 1) / 3 = 5/3 hops: 2 x 5/3 x 10 x 1.96 = 65.3 -> 66 cycles
    package = mg.templates.get_template("package")
    row = {**package.presets["simba-package-1"], "chiplets_x": 3, "dram_bandwidth": 10_000}
    split = {"spatial_x": {"K": 3}}
    runs = [
        _on_package(
            "K=48,C=32,P=7,Q=7",
            "K=16,C=32,P=7,Q=7",
            split,
            package.build({**row, "link_hop_ns": hop_ns, "partitioning": partitioning}),
        )
        for hop_ns in (0, 10)
    ]
    assert runs[1].latency_cycles - runs[0].latency_cycles == wait_cycles
    assert runs[1].energy_pj > runs[0].energy_pj  # the chiplets leak while they wait


def test_hop_latency_is_a_links() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="give link or link_pj_per_bit too"):
        mg.Fanout(link_hop_ns=5)
    package = mg.templates.get_template("package")
    with pytest.raises(mg.MagnetError, match="link_hop_ns"):
        package.params({"link_hop_ns": -1})
