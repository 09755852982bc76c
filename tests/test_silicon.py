"""magnet against published silicon (the README's "magnet vs silicon" table).

Published numbers (tests/data/reference/costs.md and simba.md; labels as there):
* Simba chiplet, 16 nm: 0.11 pJ/op (its most efficient point, voltage not published),
  4.01 TOPS peak, 1.29 TOPS/mm^2 (-> 3.1 mm^2 behind it [D]); a 6 mm^2 die [S].
* MAGNet, 16 nm, ResNet-50: 40 fJ/op; a tuned collector PE spends ~47 % on math (Dally),
  "almost two thirds" with the hybrid dataflows.
* Eyeriss, 65 nm (JSSC 2017): AlexNet CONV layers at 34.7 fps and 278 mW, batch 4.
magnet's numbers are at the node's nominal supply (16 nm: 0.85 V; 65 nm: 1.0 V).
"""

from __future__ import annotations

import pytest

import magnet as mg

# A MAGNet-style design of 1024 MACs (our choice, not a published configuration): 16-wide
# vector MACs, 32 per PE, 2 PEs, a 4-weight weight collector per lane and a 16-sum
# accumulation collector per vector unit.
MAGNET_LIKE = dict(
    vector_width=16,
    vector_units=32,
    weight_collector=4,
    accum_collector=16,
    weight_buffer="128KiB",
    input_buffer="16KiB",
    accum_buffer="24KiB",
    pe_rows=1,
    pe_cols=2,
    global_buffer="128KiB",
    clock_ghz=1.96,
)


@pytest.fixture(scope="module")
def resnet50():
    return mg.load_workload("resnet50")


def on_chip_pj_per_op(record: mg.NetworkRecord) -> float:
    return (record.energy_pj - record.energy_pj_by_category["dram"]) / (2 * record.macs)


def test_simba_chip_on_resnet50_is_within_2x_of_the_silicon(resnet50) -> None:
    chip = mg.load_arch("simba-chip")
    record = mg.evaluate(resnet50, chip, dataflow="os-local-ws", objective="energy").record()
    pj_per_op = on_chip_pj_per_op(record)
    assert 0.11 / 2 <= pj_per_op <= 0.11 * 2  # measured here: 0.157 at 0.85 V
    # peak 1024 MACs x 2 x 1.96 GHz = 4.01 TOPS; area within 2x of the die and of the
    # 3.1 mm^2 behind 1.29 TOPS/mm^2
    assert 2 * chip.mac_count * chip.clock_ghz / 1e3 == pytest.approx(4.01, rel=0.01)
    assert 6 / 2 <= record.area_mm2 <= 6 * 2
    assert 3.1 / 2 <= record.area_mm2 <= 3.1 * 2
    # energy-optimal mappings keep the array busy (static energy makes idling cost)
    assert record.utilization >= 0.5


def test_a_magnet_like_design_spends_like_nvidias_pe(resnet50) -> None:
    arch = mg.templates.simba(**MAGNET_LIKE)
    shares = {}
    for flow in ("ws-local-os", "os-local-ws"):
        record = mg.evaluate(resnet50, arch, dataflow=flow, objective="energy").record()
        on_chip = record.energy_pj - record.energy_pj_by_category["dram"]
        shares[flow] = {k: v / on_chip for k, v in record.energy_pj_by_category.items()}
        assert record.utilization >= 0.5
    best = max(shares.values(), key=lambda s: s["math"])
    # the target, after Dally's pie (math ~47 %, data movement ~6 %)
    assert best["math"] >= 0.40
    assert best["network"] <= 0.15


def test_eyeriss_chip_on_alexnet_conv_is_within_2x_of_jssc_2017() -> None:
    net = mg.load_workload("alexnet", batch=4)
    convs = mg.Network(
        name="alexnet-conv", layers=tuple(e for e in net.layers if e.layer.name.startswith("conv"))
    )
    record = mg.evaluate(
        convs, mg.load_arch("eyeriss-chip"), dataflow="rs", objective="energy"
    ).record()
    fps = 4 / record.latency_s  # 4 images per batch
    assert 34.7 / 2 <= fps <= 34.7 * 2  # measured here: 44 fps
    # the chip's 278 mW is its core's power, without DRAM; magnet's on-chip power is about
    # half of it (no energy for the clock tree and control logic beyond the registers'
    # clocks: README, "magnet vs published silicon"), and cannot exceed it
    on_chip_w = (record.energy_pj - record.energy_pj_by_category["dram"]) * 1e-12 / record.latency_s
    assert 0.4 <= on_chip_w / 0.278 <= 1.0  # measured here: 0.139 W
