"""Multi-chiplet packages (issue 22, first part): the ``package`` template tiles simba-chip
chiplets on a mesh network-on-package; the mapper partitions a layer across chiplets with its
spatial loops at DRAM, and the NoP's words are priced per hop at the link's pJ/bit."""

from __future__ import annotations

import math

import pytest

import magnet as mg
from magnet.api import evaluate, map_layer
from magnet.mapping.evaluate import Result
from magnet.mapping.mapping import Mapping
from magnet.report.text import network_table
from magnet.templates.package import LINKS
from tests.conftest import DATA

GRS_PJ_PER_BIT = 1.17  # Poulton et al., JSSC 2019, as quoted in memory-and-links.md [PQ]
FAST = {"samples": 400, "rounds": 3, "population": 8, "children": 8}


def test_the_grs_link_is_the_cited_figure() -> None:
    assert LINKS["grs"][0] == GRS_PJ_PER_BIT


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
    """``K=64,C=32,P=Q=7`` on simba-package-4: each chiplet maps its ``share`` as the chip
    does (every word fits on chip: no DRAM loops), and DRAM spreads the shares by ``split``."""
    chip = map_layer(mg.parse_layer(share), mg.load_arch("simba-chip"), "ws", seed=0).result
    assert chip.mapping.level("DRAM") is None or not chip.mapping.level("DRAM").temporal
    levels = [
        lvl.model_copy(update=split) if lvl.target == "DRAM" else lvl for lvl in chip.mapping.levels
    ]
    full = mg.parse_layer("K=64,C=32,P=7,Q=7")
    return evaluate(full, mg.load_arch("simba-package-4"), Mapping(levels=tuple(levels)))


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
