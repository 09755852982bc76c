"""The memory system: DRAM technologies, DRAM bytes, activations kept on chip, im2col served
from SRAM, and the DRAM roofline. Numbers derived by hand (arithmetic in the comments); the
DRAM figures come from magnet/cost/tables/dram.yaml, whose sources are cited there
(O'Connor et al. MICRO 2017 for HBM2, Jouppi et al. ISCA 2021 Table 2 for DDR4, ...).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import magnet as mg
from magnet.cost.tables import DRAM_TABLE, load_dram_table
from magnet.design import build_design
from magnet.errors import MagnetError
from magnet.model.network_result import LayerMappings, evaluate_network
from magnet.templates import BUILTIN, get_template, load_arch
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer
from magnet.workload.network import Network
from magnet.workload.onnx_import import load_onnx

TECHNOLOGIES = ("ddr4", "lpddr4", "lpddr5", "hbm2", "hbm3")


# ---- the table -----------------------------------------------------------------------------------
def test_the_table_has_every_technology_with_its_provenance() -> None:
    table = load_dram_table()
    assert set(TECHNOLOGIES) <= set(table.technologies)
    assert table.default == "lpddr4"
    for tech in table.technologies.values():
        for number in (
            tech.energy_pj_per_bit,
            tech.channel_bandwidth_gb_per_s,
            tech.default_channels,
        ):
            assert number.value > 0
            assert number.source or number.derived or (number.assumption and number.reason)
    # LPDDR5's energy was not found [NF]: an assumption, labelled so
    assert table.technologies["lpddr5"].energy_pj_per_bit.assumption
    # cited figures: HBM2 3.97 pJ/bit (O'Connor et al. MICRO 2017, Sec. 1, 2.1), 16 x 16 GB/s
    assert table.technologies["hbm2"].energy_pj_per_bit.value == 3.97
    assert table.technologies["hbm2"].channel_bandwidth_gb_per_s.value == 16 * 16
    # DDR4: 1300 pJ per 64-bit access (Jouppi et al. ISCA 2021 Table 2) = 20.3125 pJ/bit
    assert table.technologies["ddr4"].energy_pj_per_bit.value == 1300 / 64


def test_a_broken_dram_table_names_the_file_and_the_field(tmp_path: Path) -> None:
    text = DRAM_TABLE.read_text()
    path = tmp_path / "dram.yaml"
    # the LPDDR5 energy without its assumption label
    path.write_text(
        text.replace('      assumption: true\n      reason: "[NF]', '      note: "[NF]', 1)
    )
    with pytest.raises(MagnetError, match=r"dram.yaml.*lpddr5\.energy_pj_per_bit"):
        load_dram_table(path)
    path.write_text(text.replace("default: lpddr4", "default: ddr9"))
    with pytest.raises(MagnetError, match=r"default 'ddr9' is not a technology; allowed: ddr4"):
        load_dram_table(path)


@pytest.mark.parametrize("template", sorted(BUILTIN))
def test_every_template_names_its_dram_technology(template: str) -> None:
    arch = get_template(template).build({"dram_technology": "hbm3"})
    assert arch.levels[0].attributes["dram_technology"] == "hbm3"
    with pytest.raises(MagnetError, match=r"dram_technology.*allowed: ddr4, lpddr4"):
        get_template(template).build({"dram_technology": "ddr3"})


def test_bandwidth_is_channels_times_the_technology_unless_overridden() -> None:
    # simba at 1 GHz, 8-bit words at DRAM: GB/s = bytes per cycle = words per cycle.
    # default: 4 LPDDR4 x16 channels x 6.4 GB/s (3200 MT/s x 2 bytes) = 25.6 GB/s
    assert mg.templates.simba().levels[0].shared_bandwidth == pytest.approx(25.6)
    # the channels default to the technology's interface: one HBM2 stack, 256 GB/s; one
    # x64 DDR4-3200 channel, 25.6 GB/s; 2 HBM2 stacks x 256 GB/s
    one = mg.templates.simba(dram_technology="hbm2")
    assert one.levels[0].shared_bandwidth == pytest.approx(256.0)
    # eyeriss at its 0.2 GHz, 16-bit words: 25.6 GB/s / 0.2 GHz = 128 bytes = 64 words a cycle
    eyeriss = mg.templates.eyeriss(dram_technology="ddr4")
    assert eyeriss.levels[0].shared_bandwidth == pytest.approx(64.0)
    two = mg.templates.simba(dram_technology="hbm2", dram_channels=2)
    assert two.levels[0].shared_bandwidth == pytest.approx(512.0)
    # an explicit bandwidth overrides; 'stall-free' is unlimited (SCALE-Sim)
    assert mg.templates.simba(dram_bandwidth=10).levels[0].shared_bandwidth == 10.0
    assert mg.templates.simba(dram_bandwidth="stall-free").levels[0].shared_bandwidth is None
    with pytest.raises(MagnetError, match=r"dram_bandwidth.*'stall-free'"):
        mg.templates.simba(dram_bandwidth="fast")


# ---- compulsory traffic --------------------------------------------------------------------------
# K=16, C=16, 14x14 outputs, 3x3: weights 16*16*9 = 2304, inputs 16*16*16 = 4096 (the 16x16
# window box), outputs 16*14*14 = 3136 words; every default design's buffers hold them.
SMALL = Layer(name="small", K=16, C=16, P=14, Q=14, R=3, S=3)
FLOWS = {
    "simba": ("free", "os-local-ws"),
    "eyeriss": ("free", "rs"),
    "systolic": ("os", "ws", "is"),
    # 2 x 2 chiplets; os and ws split the output pixels across them: the halo crosses the
    # links from chiplet to chiplet, DRAM reads each input once
    "package": ("free", "os", "ws"),
}


@pytest.mark.parametrize(
    ("template", "dataflow"), [(t, f) for t in sorted(BUILTIN) for f in FLOWS[t]]
)
def test_a_layer_the_buffers_hold_reads_only_its_compulsory_traffic(
    template: str, dataflow: str
) -> None:
    arch = get_template(template).build({})
    result = mg.evaluate(SMALL, arch, dataflow=dataflow, objective="energy")
    word_bytes = arch.levels[0].word_bits / 8  # 1 byte (simba, systolic), 2 (eyeriss)
    assert result.dram_bytes_by_operand == {
        "weights": 2304 * word_bytes,
        "inputs": 4096 * word_bytes,
        "outputs": 3136 * word_bytes,
    }
    assert result.record().dram_bytes == (2304 + 4096 + 3136) * word_bytes


def test_every_registered_template_is_covered() -> None:
    assert set(FLOWS) == set(BUILTIN)


# ---- im2col from SRAM ----------------------------------------------------------------------------
def test_systolic_serves_im2col_from_sram_not_dram() -> None:
    # ResNet-50 res2a_branch2b on SCALE-Sim's 128 x 128 (its SRAMs hold the layer): the input
    # tensor is 64 channels x 58 x 58 (the 3x3 window box over 56 x 56) = 215,296 words; the
    # im2col matrix is 56*56 pixels x 64*9 = 3,136 x 576 = 1,806,336 words (8.39x).
    layer = Layer(name="res2a_branch2b", K=64, C=64, P=56, Q=56, R=3, S=3)
    arch = load_arch("systolic-128")
    for flow in ("os", "ws", "is"):
        result = mg.evaluate(layer, arch, dataflow=flow, objective="energy")
        dram = result.accesses["DRAM"]["inputs"]
        assert dram["reads"] == 215_296
        # SCALE-Sim's SRAM IFMAP reads are the im2col matrix: 1,806,336 (scalesim_128x128.csv)
        assert result.accesses["IfmapSRAM"]["inputs"]["reads"] == 1_806_336
        assert result.accesses["IfmapSRAM"]["inputs"]["fills"] == 215_296


# ---- per-technology DRAM energy ------------------------------------------------------------------
@pytest.mark.parametrize("technology", TECHNOLOGIES)
def test_dram_energy_of_a_small_layer_by_hand(technology: str) -> None:
    # A 1x1 layer K=8, C=8, 8x8 on simba: weights 64, inputs 512, outputs 512 words of 8
    # bits, each moved once. DRAM accesses are 64 bits (8 words): 64/8 + 512/8 + 512/8 = 136
    # accesses x 64 bits = 8,704 bits x the technology's pJ/bit (writes as reads).
    layer = Layer(name="tiny", K=8, C=8, P=8, Q=8)
    arch = mg.templates.simba(dram_technology=technology)
    result = mg.evaluate(layer, arch, dataflow="os-local-ws", objective="energy")
    per_bit = {"ddr4": 20.3125, "lpddr4": 13.0, "lpddr5": 10.4, "hbm2": 3.97, "hbm3": 3.4}
    assert result.dram_bytes == 64 + 512 + 512
    assert result.energy_pj_by_category["dram"] == pytest.approx(136 * 64 * per_bit[technology])


def test_a_plug_in_sees_the_technology() -> None:
    class PerTechnology(mg.CostModel):
        name = "per-technology"

        def supports(self, component):
            return component.cls == "dram"

        def energy_pj(self, component, action):
            return {"hbm2": 1.0}.get(component.get("dram_technology"), 100.0)

        def leakage_mw(self, component):
            return 0.0

        def area_um2(self, component):
            return None

    design = build_design(mg.templates.simba(dram_technology="hbm2"), cost_model=PerTechnology())
    assert design.costs.read_pj[-1] == 1.0


# ---- activations kept on chip --------------------------------------------------------------------
# Two 1x1 layers K=16, C=16, 14x14: each has weights 256, inputs 3136, outputs 3136 words.
FIRST = Layer(name="first", K=16, C=16, P=14, Q=14)
SECOND = Layer(name="second", K=16, C=16, P=14, Q=14)


def _pair(global_buffer: str) -> mg.NetworkResult:
    net = Network.of("pair", [FIRST, SECOND])
    arch = mg.templates.simba(global_buffer=global_buffer)
    return mg.evaluate(net, arch, dataflow="os-local-ws", objective="energy")


def test_two_chained_layers_that_fit_keep_the_activation_on_chip() -> None:
    # 64 KiB global buffer: the 3,136-byte activation plus either layer's other tiles fit.
    # Each layer's 256 weight bytes stay in the weight buffers (512 KiB) across batches.
    # DRAM: first reads 3136 and writes nothing; second reads nothing and writes 3136; the
    # first batch of a stream also reads the 2 x 256 weight bytes.
    result = _pair("64KiB")
    rows = {row.name: row for row in result.record().layers}
    assert rows["first"].off_chip == ["inputs"]
    assert rows["second"].off_chip == ["outputs"]
    assert rows["first"].weights_at == rows["second"].weights_at == "WeightBuffer"
    assert rows["first"].dram_bytes == rows["second"].dram_bytes == 3136
    assert result.record().dram_bytes == 2 * 3136
    first = sum(r.dram_bytes for r in result.first_runs)
    assert first == 2 * 256 + 2 * 3136
    # each saved DRAM access is the only difference from the layers priced alone: 3,136
    # bytes = 392 accesses of 64 bits at 13 pJ/bit (lpddr4) written and as many read, and
    # 256 weight bytes = 32 accesses read per layer
    alone = sum(result.result(e.layer).energy_pj_by_category["dram"] for e in result.network)
    saved = (2 * 392 + 2 * 32) * 64 * 13.0
    assert alone - result.energy_pj_by_category["dram"] == pytest.approx(saved)


def test_an_activation_the_global_buffer_cannot_hold_goes_off_chip() -> None:
    # 2 KiB global buffer: the 3,136-byte activation does not fit; both layers move their
    # inputs and outputs, 2 x (3136 + 3136) bytes (their weights stay on chip)
    result = _pair("2KiB")
    rows = result.record().layers
    assert [row.off_chip for row in rows] == [["inputs", "outputs"]] * 2
    assert result.record().dram_bytes == 2 * (3136 + 3136)


def test_an_activation_kept_on_chip_shortens_a_memory_bound_run() -> None:
    # The pair at 1 GB/s and 1 GHz (1 byte per cycle): each layer moves 3136 bytes (above,
    # its weights on chip) -> 3,136 cycles, far above its 3,136 x 16 MACs / 1,024 MACs = 49
    # compute cycles; the first batch also reads 256 weight bytes a layer -> 3,392 cycles;
    # alone each would move 256 + 3136 + 3136 = 6,528 bytes -> 6,528 cycles.
    net = Network.of("pair", [FIRST, SECOND])
    arch = mg.templates.simba(dram_bandwidth=1)
    result = mg.evaluate(net, arch, dataflow="os-local-ws", objective="energy")
    assert [row.latency_cycles for row in result.record().layers] == [3136, 3136]
    assert [result.result(e.layer).latency_cycles for e in net] == [6528, 6528]
    assert result.latency_cycles == 2 * 3136
    assert result.first_latency_cycles == 2 * 3392
    assert result.record().first_latency_s == pytest.approx(2 * 3392 / 1e9)
    # static energy is paid over the shorter run too: it is smaller than the layers' alone
    alone = sum(result.result(e.layer).energy_pj_by_category["static"] for e in net)
    assert result.energy_pj_by_category["static"] < alone


def test_given_mappings_keep_the_same_rule() -> None:
    result = _pair("64KiB")
    mappings = LayerMappings(
        by_name={e.layer.name: result.result(e.layer).mapping for e in result.network}
    )
    again = evaluate_network(result.network, result.arch, result.costs, mappings)
    assert again.record().dram_bytes == result.record().dram_bytes


def test_the_list_order_chains_matching_channels_only() -> None:
    other = Layer(name="side", K=16, C=32, P=14, Q=14)  # 32 input channels: not FIRST's 16
    net = Network.of("n", [FIRST, other, (SECOND.model_copy(update={"name": "r"}), 2)])
    # first -> side: 16 channels out, 32 in: no; side -> r: r repeats (two layers): no
    assert net.handoffs() == [(False, False), (False, False)]


def test_resnet_graph_keeps_the_block_input_for_the_shortcut() -> None:
    net = mg.load_workload("resnet50")
    pairs = dict(zip([e.layer.name for e in net.layers[1:]], net.handoffs(), strict=True))
    # the stem's output (its max pool's) feeds layer1.0.conv1 and the projection shortcut:
    # conv1 follows it, but the shortcut reads it too
    assert net.producers["layer1.0.conv1"] == ("maxpool",)
    assert pairs["layer1.0.conv1"] == (True, False)
    assert pairs["layer1.0.conv2"] == (True, True)  # after conv1's ReLU, its only reader
    # the residual add reads conv3 and the shortcut; the block's ReLU makes the next input,
    # which the next block's conv1 and its add both read
    assert net.producers["layer1.0.add"] == ("layer1.0.conv3", "layer1.0.downsample.0")
    assert net.producers["layer1.1.conv1"] == ("layer1.0.relu",)
    assert pairs["layer1.1.conv1"] == (True, False)


def test_onnx_graph_gives_the_producers(tmp_path: Path) -> None:
    # conv a -> relu -> conv b -> add(b, relu(a)) -> conv c: every node a layer; the Relu's
    # output is read by b and by the add, which reads b's too; c reads the add's.
    f32 = TensorProto.FLOAT
    w = [numpy_helper.from_array(np.zeros((8, 8, 1, 1), np.float32), n) for n in "wvu"]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["ya"], name="a"),
        helper.make_node("Relu", ["ya"], ["ra"]),
        helper.make_node("Conv", ["ra", "v"], ["yb"], name="b"),
        helper.make_node("Add", ["yb", "ra"], ["s"]),
        helper.make_node("Conv", ["s", "u"], ["yc"], name="c"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", f32, [1, 8, 4, 4])],
        [helper.make_tensor_value_info("yc", f32, [1, 8, 4, 4])],
        w,
    )
    path = tmp_path / "chain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    net, _ = load_onnx(path)
    assert net.producers == {
        "a": (),
        "Relu_1": ("a",),
        "b": ("Relu_1",),
        "Add_3": ("b", "Relu_1"),
        "c": ("Add_3",),
    }
    assert net.handoffs() == [(True, True), (True, False), (False, False), (True, True)]


# ---- the roofline --------------------------------------------------------------------------------
def test_a_memory_bound_layer_takes_bytes_over_bandwidth() -> None:
    # A fully connected layer K=64, C=64 at batch 1 on simba at 1 GHz with 1 GB/s of DRAM
    # (1 byte per cycle): weights 4,096 + inputs 64 + outputs 64 = 4,224 bytes -> 4,224
    # cycles; its 4,096 MACs take 4 cycles on 1,024 MACs (at most a few more for padding).
    layer = Layer(name="fc", K=64, C=64)
    arch = mg.templates.simba(dram_bandwidth=1)
    result = mg.evaluate(layer, arch, dataflow="free", objective="latency")
    assert result.dram_bytes == 4224
    assert result.latency_cycles == 4224
    record = result.record()
    assert (record.bound, record.bottleneck) == ("memory", "DRAM")
    assert record.compute_cycles < 100
    # the network's latency is the sum of its layers'; the first batch's too, its weights
    # read from DRAM as each layer's alone
    net = mg.evaluate(Network.of("two", [layer, layer.model_copy(update={"name": "fc2"})]), arch)
    assert net.latency_cycles == sum(row.latency_cycles for row in net.record().layers)
    assert net.first_latency_cycles == sum(r.latency_cycles for r in net.first_runs)
    assert [row.bound for row in net.first_runs] == ["memory", "memory"]


def test_a_compute_bound_layer_reports_compute() -> None:
    # ResNet's res2a_branch2b on simba with 2 HBM2 stacks: 115.6 M MACs over 1,024 MACs take
    # >= 112,896 cycles; its ~0.5 MB of DRAM traffic at 512 bytes per cycle takes ~1,000
    layer = Layer(name="res2a_branch2b", K=64, C=64, P=56, Q=56, R=3, S=3)
    arch = mg.templates.simba(dram_technology="hbm2", dram_channels=2)
    record = mg.evaluate(layer, arch, dataflow="os-local-ws", objective="energy").record()
    assert (record.bound, record.bottleneck) == ("compute", "compute")


def test_dram_input_reads_are_counted_as_scalesim_counts_them() -> None:
    # SCALE-Sim 3.0's DRAM IFMAP reads (scalesim_128x128.csv, 39 runs) count words of the input
    # tensor, not of the im2col matrix: never below the tensor, and for every layer with a
    # window (R > 1) far below the im2col matrix (res2a_branch2b ws: 1,042,237 against
    # 1,806,336), its double-buffered SRAMs refetching some rows. magnet, on SCALE-Sim's own
    # mappings with SRAMs that stream (no refetch), reads exactly the tensor: the floor of
    # SCALE-Sim's count, reached on 28 of the 39 runs.
    from tests.test_systolic import ARCH, SCALESIM, _layer, scalesim_mapping

    with open(SCALESIM / "scalesim_128x128.csv") as f:
        runs = list(csv.DictReader(f))
    equal = 0
    for run in runs:
        layer = _layer(run["layer"])
        scalesim = float(run["DRAM IFMAP Reads"])
        tensor = layer.operand_size(Operand.I)
        im2col = layer.gemm_view().operand_size(Operand.I)
        result = mg.evaluate(layer, ARCH, scalesim_mapping(layer, run["dataflow"], 128, 128))
        assert result.accesses["DRAM"]["inputs"]["reads"] == tensor <= scalesim
        if layer.R > 1:
            assert scalesim < im2col
        equal += scalesim == tensor
    assert (len(runs), equal) == (39, 28)
