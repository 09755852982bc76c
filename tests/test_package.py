"""Multi-chiplet packages (issue 22, first part): the ``package`` template tiles simba-chip
chiplets on a mesh network-on-package; the mapper partitions a layer across chiplets with its
spatial loops at DRAM, and the NoP's words are priced per hop at the link's pJ/bit."""

from __future__ import annotations

import json
import math

import pytest

import magnet as mg
from magnet.api import evaluate, map_layer
from magnet.cost.tables import load_link_table
from magnet.mapping import Mapping
from magnet.model.evaluate import Result
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
    # input (32 x 7 x 7 = 1,568 words of 8 bits) goes to all four. DRAM's links enter at the
    # edge (row y = 0, a port per column: magnet.model.mesh): a chiplet of row 0 is 1 hop
    # away, of row 1 2 hops; a unicast crosses (1 + 1 + 2 + 2) / 4 = 1.5 links on average; an
    # input goes up both columns from their ports, (1 + 1) + (1 + 1) = 4 links
    hops = {"weights": 1.5, "inputs": 4, "outputs": 1.5}
    bits = 8 * 2048 * hops["weights"] + 8 * 1568 * hops["inputs"] + 24 * 3136 * hops["outputs"]
    assert r.batch.interconnect_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert bits * GRS_PJ_PER_BIT == pytest.approx(219_548.16)
    # the NoP is its own category, not the chip's network; its bytes are the bits above / 8
    assert r.energy_pj_by_category["nop"] == pytest.approx(219_548.16, rel=1e-12)
    # 24,576 + 50,176 + 112,896 = 187,648 bits = 23,456 bytes x hops over the links
    assert r.nop_bytes == bits / 8 == 23_456
    assert r.partition == {"K": 4}
    record = r.record()
    assert record.partition == {"K": 4} and record.nop_bytes == 23_456


def test_input_channels_across_2x2_chiplets_reduce_the_partial_sums() -> None:
    r = _on_four_chiplets({"spatial_x": {"C": 2}, "spatial_y": {"C": 2}}, "K=64,C=8,P=7,Q=7")
    # C split 4 ways: weights and inputs are each chiplet's own (1.5 hops on average, as
    # above), and every output's four partial sums come down both columns to their ports
    # (the input tree of the test above, 4 links at 24 bits) merged by one add per pair, 3
    # adds per output at the accumulation width
    bits = 8 * 2048 * 1.5 + 8 * 1568 * 1.5 + 24 * 3136 * 4
    adds = 3136 * 3 * r.costs.accum_add_pj
    assert r.batch.interconnect_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits + adds, rel=1e-12)
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
# neighbour holding it (magnet.model.counts._parent_share). Layers: K=64, C=32, so the
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
    # the NoP: weights to all 4 (4 links); each DRAM input word to its one chiplet and each
    # of the 64 x (2p)^2 outputs from it (1.5 hops on average: rows 0 and 1 are 1 and 2 hops
    # from the edge); halo words 1 hop from the neighbour
    bits = WEIGHT_BITS_TO_ALL_4 + union**2 * 32 * 8 * 1.5 + 64 * (2 * p) ** 2 * 24 * 1.5
    bits += halo * 8
    assert r.batch.interconnect_pj[-1, 0] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
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
    # NoP: 589,824 (weights) + (3,200 x 8 + 4,096 x 24) x 1.5 + 1,408 x 8 = 786,944 bits
    # x 1.17 pJ (the halo's 1,408 words cross 1 link; from DRAM they would cross 1.5)
    assert r.energy_pj_by_category["nop"] == pytest.approx(920_724.48, rel=1e-12)
    assert r.nop_bytes == pytest.approx(786_944 / 8, rel=1e-12)
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
    # NoP from the edge ports (row 0 at 1 hop, row 1 at 2): the 18,432 weights go to the
    # two chiplets of a row (P along x): row 0 from both ports, 1 + 1 links; row 1 from one
    # port, 2 + 1 (shorter than 2 + 2 from both): 2.5 on average. DRAM's inputs go up a
    # column (K along y): 1 + 1 = 2 links; 4,096 outputs 1.5 hops; 1,280 halo words 1 hop
    bits = 18_432 * 8 * 2.5 + 3_200 * 8 * 2 + 4_096 * 24 * 1.5 + 1_280 * 8
    assert bits == 577_536
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert r.nop_bytes == pytest.approx(577_536 / 8, rel=1e-12)


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
    # NoP from the edge ports (row y at y + 1 hops). Weights go to the 4 chiplets of a row
    # (P along x): row 0 from its 4 ports, 4 links; row y > 0 from one port, y + 1 + 3 (less
    # than 4 (y + 1) from all four): (4 + 5 + 6 + 7) / 4 = 5.5 on average. Inputs go up a
    # column (K along y) from its port, 1 + 3 = 4 links; 64 x 4 x 8 = 2,048 outputs from one
    # chiplet each, (1 + 2 + 3 + 4) / 4 = 2.5 hops on average; halo 1 hop
    bits = 18_432 * 8 * 5.5 + 1_920 * 8 * 4 + 2_048 * 24 * 2.5 + 7_680 * 8
    assert r.energy_pj_by_category["nop"] == pytest.approx(GRS_PJ_PER_BIT * bits, rel=1e-12)
    assert r.nop_bytes == pytest.approx(bits / 8, rel=1e-12)
    assert GRS_PJ_PER_BIT * bits == pytest.approx(1_236_418.56)


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
    on_chip = dram.fanout.model_copy(update={"link": None, "link_gb_per_s": None, "ports": ()})
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
    # links of 20 GB/s each way (a fifth of 100)
    package = mg.templates.get_template("package")
    preset = {**package.presets["simba-package-4"], "dram_bandwidth": 10_000}
    split = {"spatial_x": {"K": 2}, "spatial_y": {"K": 2}}
    slow = package.build({**preset, "link_gb_per_s": 20})
    r = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", split, slow)
    # the busiest links are the ports' (magnet.model.mesh): each of the two edge ports
    # serves its column of two chiplets. Down it: their 2 x 512 weights and all 1,568 inputs
    # (every chiplet needs them) at 8 bits = 20,736 bits; up it: their 2 x 784 outputs at 24
    # bits = 37,632 bits, the busier way. 20 GB/s at 1.96 GHz is 160 / 1.96 = 81.63 bits a
    # cycle: 37,632 x 1.96 / 160 = 461.0 cycles, more than the chiplet's compute
    assert r.batch.link_cycles[0] == pytest.approx(37_632 * 1.96 / 160, rel=1e-12)
    assert r.compute_cycles < 461
    assert r.bottleneck == "NoP" and r.bound == "memory"
    assert r.latency_cycles == 461  # ceil(460.992)
    # links ten times as wide need 46.1 cycles: they no longer set the pace
    wide = package.build({**preset, "link_gb_per_s": 200})
    again = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", split, wide)
    assert again.batch.link_cycles[0] == pytest.approx(37_632 * 1.96 / 1600, rel=1e-12)
    assert again.bottleneck != "NoP" and again.latency_cycles < r.latency_cycles
    # the ports' links share what crosses them: DRAM at one corner serves all four chiplets
    # through one link, twice the words up it (75,264 bits) and twice the cycles
    corner = package.build({**preset, "link_gb_per_s": 20, "dram_at": "corner"})
    one = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", split, corner)
    assert one.batch.link_cycles[0] == pytest.approx(75_264 * 1.96 / 160, rel=1e-12)


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


@pytest.mark.parametrize(
    ("dram_at", "partitioning", "wait_cycles"),
    [("corner", "uniform", 118), ("corner", "non-uniform", 79), ("edge", "uniform", 40)],
)
def test_a_hop_latency_waits_for_the_farthest_chiplet_or_the_mean(
    dram_at, partitioning, wait_cycles
) -> None:
    # K=48 split over 3 chiplets in a row (3 x 1), hops of 10 ns (an assumption) at 1.96 GHz:
    # the first words go out and the last partial sums come back. DRAM at the corner is 1, 2
    # and 3 hops from the chiplets: uniform shares wait for the farthest, 2 x 3 hops x 10 ns
    # x 1.96 GHz = 117.6 -> 118 cycles; non-uniform shares for the mean, 2 hops: 78.4 -> 79.
    # At the edge (a port under every chiplet of the row) each is 1 hop away: 39.2 -> 40
    package = mg.templates.get_template("package")
    row = {**package.presets["simba-package-1"], "chiplets_x": 3, "dram_bandwidth": 10_000}
    split = {"spatial_x": {"K": 3}}
    runs = [
        _on_package(
            "K=48,C=32,P=7,Q=7",
            "K=16,C=32,P=7,Q=7",
            split,
            package.build(
                {**row, "link_hop_ns": hop_ns, "partitioning": partitioning, "dram_at": dram_at}
            ),
        )
        for hop_ns in (0, 10)
    ]
    assert runs[1].latency_cycles - runs[0].latency_cycles == wait_cycles
    assert runs[1].energy_pj > runs[0].energy_pj  # the chiplets leak while they wait


def test_dram_enters_where_the_package_says() -> None:
    # one output-channel share per chiplet of a 3 x 3 package: each weight and output word
    # goes to or from one chiplet. From the edge (a port under each column, row y at y + 1
    # hops) the mean trip is (1 + 2 + 3) / 3 = 2 hops; from the centre chiplet's port,
    # 1 + (0 + 1 + 1 + 1 + 1 + 2 + 2 + 2 + 2) / 9 = 2.33; from a corner 1 + 2 = 3 hops
    package = mg.templates.get_template("package")
    base = {**package.presets["simba-package-1"], "chiplets_x": 3, "chiplets_y": 3}
    split = {"spatial_x": {"K": 3}, "spatial_y": {"K": 3}}
    ports = {"edge": 2.0, "centre": 1 + 12 / 9, "corner": 3.0, "[[2, 2]]": 3.0}
    unicast = 8 * 64 * 32 + 24 * 64 * 49  # weights and outputs, bits
    # an input word goes to all nine: up each column from its port, 3 x (1 + 2) links; from
    # one port, to the nearest chiplet and one link per further one, 1 + 8: 9 either way
    inputs = 8 * 32 * 49 * 9
    for place, hops in ports.items():
        where = json.loads(place) if place.startswith("[") else place
        r = _on_package(
            "K=64,C=32,P=7,Q=7",
            "K=8,C=32,P=7,Q=7",
            split,
            package.build({**base, "dram_at": where}),
        )
        assert r.nop_bytes * 8 - inputs == pytest.approx(unicast * hops)
    with pytest.raises(mg.MagnetError, match=r"dram_at \[3, 0\] is outside the 3 x 3 mesh"):
        package.build({**base, "dram_at": [[3, 0]]})
    with pytest.raises(mg.MagnetError, match="'middle' is not a place; allowed: edge"):
        package.build({**base, "dram_at": "middle"})


def test_hop_latency_is_a_links() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="give link or link_pj_per_bit too"):
        mg.Fanout(link_hop_ns=5)
    package = mg.templates.get_template("package")
    with pytest.raises(mg.MagnetError, match="link_hop_ns"):
        package.params({"link_hop_ns": -1})
