"""The post-processing unit and its layers (issue 30, item 2): elementwise, activation,
pooling, softmax and normalisation layers in the layer model, network YAML, the zoo and the
ONNX importer; priced on each template's post-processing unit (operations, cycles, traffic,
fusion on the MAC array's output path); per layer in every record; bad input."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
import yaml
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import magnet as mg
from magnet.cli import main
from magnet.errors import MagnetError
from magnet.model.evaluate import tile_bits
from magnet.model.postprocess import unit_ops
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer, pool, postprocess
from magnet.workload.network import Network
from magnet.workload.onnx_import import load_onnx
from magnet.workload.zoo import load_zoo
from tests.conftest import DATA, REPO

#: Simba at 45 nm and its nominal 0.9 V (a dynamic-energy factor of 1), so that every unit
#: operation is Horowitz's own number (ISSCC 2014, tests/data/reference/costs.md): a compare
#: priced as an 8-bit add, 0.03 pJ; a multiply-add of two 8-bit activations into 16 bits,
#: 0.2 + 0.05 = 0.25 pJ; a lookup, a read of the 65 x 16-bit table (Aladdin's register file,
#: horowitz45.yaml): 16 x 0.00106 + 65 x 0.02947 x ceil(log2 65) / 32 = 0.43599 pJ. DRAM is
#: unlimited, so cycles are the unit's: 16 PEs x 8 lanes = 128 lanes.
BASE = {"technology_nm": 45, "voltage_v": 0.9, "clock_ghz": 0.5, "dram_bandwidth": "stall-free"}
COMPARE_PJ, MAC_PJ = 0.03, 0.25
LOOKUP_PJ = 16 * 0.00106 + 65 * 0.02947 * 7 / 32
LANES = 128
FLOAT = TensorProto.FLOAT


def simba(**params: object) -> mg.Arch:
    return mg.templates.simba(**{**BASE, **params})


def relu(name: str = "relu", channels: int = 64, size: int = 56) -> Layer:
    return postprocess(
        name, kind="activation", op="relu", channels=channels, height=size, width=size
    )


# ---- the unit's prices ---------------------------------------------------------------------
def test_the_unit_prices_its_operations_from_the_tables() -> None:
    post = mg.design(simba()).costs.postprocess
    assert post is not None
    assert post.op_pj == pytest.approx(
        {"add": 0.03, "compare": COMPARE_PJ, "mac": MAC_PJ, "lookup": LOOKUP_PJ}, rel=1e-12
    )


def test_every_template_has_a_unit_and_its_area() -> None:
    # simba: one per PE (16) of 8 lanes; eyeriss: one of 4 lanes (its 64-bit bus of 16-bit
    # words); systolic: one as wide as the array (128 columns); a package: one per PE per
    # chiplet (2 x 2 x 16)
    widths = {
        "simba-chip": (16, 8),
        "eyeriss-chip": (1, 4),
        "systolic-128": (1, 128),
        "simba-package-4": (64, 8),
    }
    for preset, (instances, lanes) in widths.items():
        arch = mg.load_arch(preset)
        assert arch.postprocess is not None
        assert (arch.postprocess_instances, arch.postprocess.lanes) == (instances, lanes)
        area = mg.design(arch).costs.area_mm2_by_component
        assert area[arch.postprocess.name] > 0


# ---- operations and cycles --------------------------------------------------------------
def test_a_relu_is_one_compare_per_element_over_the_lanes() -> None:
    # 64 x 56 x 56 = 200,704 elements: 200,704 compares x 0.03 pJ = 6,021.12 pJ; cycles
    # 200,704 / 128 lanes = 1,568; a pass of its own reads its input from DRAM and writes its
    # output there: 2 x 200,704 bytes
    result = mg.evaluate(relu(), simba())
    assert result.ops == {"add": 0, "compare": 200_704, "mac": 0, "lookup": 0}
    assert result.energy_pj_by_category["postprocess"] == pytest.approx(200_704 * COMPARE_PJ)
    assert (result.latency_cycles, result.bottleneck) == (1568, "PPU")
    assert result.dram_bytes == 2 * 200_704
    assert result.energy_pj_by_category["math"] == 0
    assert sum(result.energy_pj_by_category.values()) == pytest.approx(result.energy_pj)
    record = result.record()
    assert (record.kind, record.op, record.macs, record.energy_pj_per_mac) == (
        "activation",
        "relu",
        0,
        None,
    )


def test_softmax_operations_per_element_and_per_row() -> None:
    # 12 heads x 128 rows of 128: E = 196,608 elements, 1,536 rows. Per element: the max (a
    # compare), x - max and the sum (2 adds), exp (a lookup and its interpolation, a
    # multiply-add), x / sum (a multiply-add); per row: 1 / sum (a lookup and a multiply-add)
    layer = Layer(name="softmax", kind="softmax", K=128, P=128, G=12)
    ops = unit_ops(layer, fits=True)
    assert ops == {"compare": 196_608, "add": 393_216, "lookup": 198_144, "mac": 394_752}
    result = mg.evaluate(layer, simba())
    # energy: 196,608 x 0.03 + 393,216 x 0.03 + 394,752 x 0.25 + 198,144 x 0.43599 pJ
    energy = (196_608 + 393_216) * 0.03 + 394_752 * MAC_PJ + 198_144 * LOOKUP_PJ
    assert result.energy_pj_by_category["postprocess"] == pytest.approx(energy, rel=1e-12)
    # the lookups pace it: 198,144 / (128 lanes x 0.25 a cycle, NVDLA's LUT rate) = 6,192
    assert result.latency_cycles == 6192
    # a row of 128 words fits the 1 KiB buffer: it is read once from the global buffer,
    # written to the buffer with its exponentials (2E) and read back twice (2E)
    gb = result.accesses["GlobalBuffer"]["inputs"]
    assert gb["reads"] == 196_608 and gb["fills"] == 196_608


def test_a_row_the_buffer_cannot_hold_is_read_again_for_each_pass() -> None:
    # a 64-byte buffer holds 64 words, less than the row of 128: the three passes (max, exp
    # and sum, normalise) read the input three times, and exp is computed again
    layer = Layer(name="softmax", kind="softmax", K=128, P=128, G=12)
    result = mg.evaluate(layer, simba(ppu_buffer=64))
    assert result.accesses["GlobalBuffer"]["inputs"]["reads"] == 3 * 196_608
    assert result.ops["lookup"] == 198_144 + 196_608
    assert result.unit_pj["memory"] == 0  # the buffer is not used


@pytest.mark.parametrize(
    ("layer", "expected"),
    [
        # a 3x3 max pool over 64 channels of 56 x 56 outputs: 8 compares per output
        (
            pool("mp", op="max", channels=64, out_height=56, out_width=56, kernel=3, stride=2),
            {"compare": 8 * 200_704},
        ),
        # a global average pool of 2,048 channels of 7 x 7: 48 adds and a multiply by 1/49
        (
            pool("gap", op="avg", channels=2048, out_height=1, out_width=1, kernel=7),
            {"add": 48 * 2048, "mac": 2048},
        ),
        # a layer norm of 128 rows of 768 (E = 98,304): per element 2 adds, 3 multiply-adds;
        # per row an add, 4 multiply-adds and an rsqrt (a lookup)
        (
            postprocess("ln", kind="norm", op="layernorm", channels=768, width=128),
            {"add": 2 * 98_304 + 128, "mac": 3 * 98_304 + 4 * 128, "lookup": 128},
        ),
        # a batchnorm not folded: a per-channel scale and shift, one multiply-add each
        (postprocess("bn", kind="norm", op="batchnorm", channels=8, width=10), {"mac": 80}),
        # GELU, x Phi(x): a lookup with its interpolation and a multiply, per element
        (postprocess("g", kind="activation", op="gelu", channels=8), {"lookup": 8, "mac": 16}),
        (postprocess("s", kind="activation", op="relu6", channels=8), {"compare": 16}),
        (postprocess("a", kind="eltwise", op="add", channels=8), {"add": 8}),
        (postprocess("m", kind="eltwise", op="mul", channels=8), {"mac": 8}),
    ],
)
def test_unit_operations_of_each_op(layer: Layer, expected: dict[str, int]) -> None:
    ops = unit_ops(layer, fits=True)
    assert {k: v for k, v in ops.items() if v} == expected


# ---- fusion and traffic -------------------------------------------------------------------
CONV = Layer(name="conv", K=16, C=16, P=14, Q=14)


def _rows(net: Network, arch: mg.Arch) -> dict[str, mg.LayerRow]:
    result = mg.evaluate(net, arch, dataflow="os-local-ws", objective="energy")
    return {row.name: row for row in result.record().layers}


def test_a_relu_after_a_conv_runs_on_its_output_path() -> None:
    # 16 x 14 x 14 = 3,136 outputs: 3,136 compares x 0.03 = 94.08 pJ, in ceil(3,136 / 128)
    # = 25 cycles, hidden under the conv's 196; no traffic; the unit's clock (0.88 pJ per
    # instance-cycle: 8 lanes x 8 input-register bits x 5.5 fJ x 2 for the tree, and the
    # table's 16-bit port) and leakage for those 25 cycles, all 16 units
    rows = _rows(Network.of("n", [CONV, relu(channels=16, size=14)]), simba())
    row = rows["relu"]
    assert (row.kind, row.op, row.fused_into, row.latency_cycles) == (
        "activation",
        "relu",
        "conv",
        0,
    )
    assert row.dram_bytes == 0 and row.off_chip == []
    parts = {k: v for k, v in row.energy_pj_by_category.items() if v}
    assert parts["postprocess"] == pytest.approx(3136 * COMPARE_PJ)
    assert parts["clock"] == pytest.approx(0.88 * 16 * 25)
    assert set(parts) == {"postprocess", "clock", "static"}
    # the conv's output is the chain's: written to DRAM as the network's output (its
    # weights stay on chip across batches)
    assert rows["conv"].off_chip == ["inputs", "outputs"]


def test_without_fusion_a_relu_is_a_pass_of_its_own() -> None:
    # the unit off the output path: the ReLU reads the conv's output from the global buffer
    # (3,136 bytes fit its 64 KiB), so the conv writes nothing to DRAM, and writes the
    # network's output there: 3,136 bytes; 25 cycles of its own
    rows = _rows(Network.of("n", [CONV, relu(channels=16, size=14)]), simba(ppu_fused=False))
    assert rows["relu"].fused_into is None and rows["relu"].latency_cycles == 25
    assert rows["relu"].dram_bytes == 3136 and rows["relu"].off_chip == ["outputs"]
    assert rows["conv"].off_chip == ["inputs"]


def _residual() -> Network:
    # a -> b -> add(b, a) -> c: 1x1 convs of 16 channels, 14 x 14 (3,136 words each)
    a, b, c = (Layer(name=n, K=16, C=16, P=14, Q=14) for n in "abc")
    add = postprocess("add", kind="eltwise", op="add", channels=16, height=14, width=14)
    graph = {"a": (), "b": ("a",), "add": ("b", "a"), "c": ("add",)}
    return Network.of("res", [a, b, add, c]).model_copy(update={"producers": graph})


@pytest.mark.parametrize(
    ("global_buffer", "fused", "add_bytes", "total"),
    [
        # 64 KiB holds a's 3,136 bytes from a through the add (with b's tiles and b's own
        # input and output): the add reads both inputs on chip, a writes nothing, c reads
        # the add's output on chip; every conv's 256 weight bytes stay in the weight
        # buffers across batches. DRAM: a's input 3,136 and c's output 3,136 = 6,272
        ("64KiB", True, 0, 6272),
        ("64KiB", False, 0, 6272),
        # 2 KiB holds neither: fused into b, the add reads a's output (the shortcut) from
        # DRAM, 3,136 bytes; every conv moves inputs and outputs (6,272 each)
        ("2KiB", True, 3136, 3 * 6272 + 3136),
        # a pass of its own, it also reads b's output and writes its own: 3 x 3,136
        ("2KiB", False, 3 * 3136, 3 * 6272 + 3 * 3136),
    ],
)
def test_a_residual_add_reads_its_inputs_where_they_live(
    global_buffer: str, fused: bool, add_bytes: int, total: int
) -> None:
    arch = simba(global_buffer=global_buffer, ppu_fused=fused)
    result = mg.evaluate(_residual(), arch, dataflow="os-local-ws", objective="energy")
    record = result.record()
    rows = {row.name: row for row in record.layers}
    assert rows["add"].dram_bytes == add_bytes
    assert rows["add"].fused_into == ("b" if fused else None)
    assert record.dram_bytes == total
    if global_buffer == "64KiB":
        assert rows["a"].off_chip == ["inputs"]  # the shortcut stayed on chip


@pytest.mark.parametrize(
    ("global_buffer", "kept", "total"),
    [
        # At b (the add fused into it) the global buffer holds the shortcut, a's output,
        # 3,136 bytes (b also reads it there: the same tensor, counted once), b's tiles
        # there, 3,136 bytes (asserted below), and the add's output, which c reads on
        # chip, 3,136: 9,408 bytes <= 10 KiB (10,240). DRAM: a's input and c's output,
        # 2 x 3,136 = 6,272. (Counting the shortcut twice would need 12,544 bytes, 13 KiB.)
        ("10KiB", True, 6272),
        # 9,408 > 8 KiB (8,192): a writes its output to DRAM and the add reads it there,
        # 2 x 3,136 more: 12,544
        ("8KiB", False, 12544),
    ],
)
def test_a_shortcut_also_read_by_the_next_layer_is_held_once(
    global_buffer: str, kept: bool, total: int
) -> None:
    arch = simba(global_buffer=global_buffer)
    result = mg.evaluate(_residual(), arch, dataflow="os-local-ws", objective="energy")
    glb = [level.name for level in arch.inner_first].index("GlobalBuffer")
    b = next(e.layer for e in result.network if e.layer.name == "b")
    assert tile_bits(result.result(b), glb, tuple(Operand)) / 8 == 3136
    rows = {row.name: row for row in result.record().layers}
    assert rows["a"].off_chip == (["inputs"] if kept else ["inputs", "outputs"])
    assert rows["add"].dram_bytes == (0 if kept else 3136)
    assert result.record().dram_bytes == total


def test_a_fused_layer_shares_the_dram_bandwidth_of_its_chain() -> None:
    # 1 byte per cycle of DRAM: b moves 3,136 inputs + 3,136 outputs (its output is the
    # chain's, off chip with a 2 KiB buffer; its weights stay on chip) = 6,272 cycles; the
    # fused add's shortcut, 3,136 more bytes, shares that DRAM: the chain takes 9,408, the
    # add adds 3,136
    arch = simba(global_buffer="2KiB", dram_bandwidth=0.5)  # 0.5 GB/s at 0.5 GHz: 1 B/cycle
    rows = _rows(_residual(), arch)
    assert rows["b"].latency_cycles == 6272
    assert rows["add"].latency_cycles == 3136 and rows["add"].bound == "memory"


# ---- the zoo -------------------------------------------------------------------------------
def _kinds(name: str, **params: object) -> dict[str, int]:
    net = load_zoo(name, **params)
    counts: dict[str, int] = {}
    for e in net.layers:
        if e.layer.is_postprocess:
            counts[e.layer.op or ""] = counts.get(e.layer.op or "", 0) + e.repeat
    return counts


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # ResNet-50 (He et al. 2016; torchvision): a ReLU after the stem and after conv1 and
        # conv2 of each of the 16 bottlenecks, and after each block's residual add: 1 + 3 x 16
        # = 49; 16 adds; the stem's 3x3 max pool and the global average pool
        ("resnet50", {"relu": 49, "add": 16, "max": 1, "avg": 1}),
        # ResNet-18: 1 + 2 x 8 basic blocks = 17 ReLUs, 8 adds
        ("resnet18", {"relu": 17, "add": 8, "max": 1, "avg": 1}),
        # MobileNetV2 (Sandler et al. 2018): ReLU6 after the stem, 16 expansions, 17
        # depthwise convs and the last 1x1 (35); the projections are linear; 10 blocks add
        # their input (stride 1, same width); a global average pool
        ("mobilenetv2", {"relu6": 35, "add": 10, "avg": 1}),
        # VGG-16: 13 convs and fc6, fc7 with a ReLU; 5 max pools
        ("vgg16", {"relu": 15, "max": 5}),
        # AlexNet: 5 convs and fc6, fc7 with a ReLU; 3 max pools (its LRN not modelled)
        ("alexnet", {"relu": 7, "max": 3}),
        # BERT-base: per block a softmax, a GELU, 2 residual adds, 2 layer norms (post-norm)
        ("bert-base", {"softmax": 12, "gelu": 12, "add": 24, "layernorm": 24}),
        # GPT-2 small and ViT-B/16: pre-norm blocks, and a final layer norm
        ("gpt2-small", {"softmax": 12, "gelu": 12, "add": 24, "layernorm": 25}),
        ("vit-b16", {"softmax": 12, "gelu": 12, "add": 24, "layernorm": 25}),
    ],
)
def test_the_zoo_lists_its_post_processing_layers(name: str, expected: dict[str, int]) -> None:
    assert _kinds(name) == expected


def test_the_zoo_softmax_and_layer_norm_shapes() -> None:
    net = load_zoo("bert-base", seq_len=128)
    layers = {e.layer.name: e.layer for e in net.layers}
    softmax = layers["encoder.3.attn.softmax"]
    assert (softmax.G, softmax.P, softmax.K) == (12, 128, 128)  # 12 heads x 128 rows of 128
    norm = layers["encoder.3.ln_2"]
    assert (norm.P, norm.K, norm.operand_size(Operand.W)) == (128, 768, 2 * 768)
    # the residual add reads the attention's output projection and the block's input
    assert net.producers is not None
    assert net.producers["encoder.3.attn.add"] == ("encoder.3.attn.out", "encoder.2.ln_2")


# ---- network YAML -----------------------------------------------------------------------
def test_a_network_yaml_lists_post_processing_layers(tmp_path: Path) -> None:
    path = tmp_path / "net.yaml"
    path.write_text(
        "name: n\n"
        "layers:\n"
        "  - {name: c, K: 16, C: 16, P: 14, Q: 14}\n"
        "  - {name: r, kind: activation, op: relu, K: 16, P: 14, Q: 14}\n"
        "  - {name: p, kind: pool, op: max, K: 16, P: 7, Q: 7, R: 2, S: 2, stride: 2}\n"
        "  - {name: s, kind: softmax, K: 784}\n"
    )
    net = mg.load_workload(str(path))
    kinds = [(e.layer.kind, e.layer.op) for e in net.layers]
    assert kinds == [
        ("conv", None),
        ("activation", "relu"),
        ("pool", "max"),
        ("softmax", "softmax"),
    ]
    rows = _rows(net, simba())
    assert rows["r"].fused_into == "c"  # the list order: c's 16 channels feed r
    assert rows["p"].fused_into is None  # a pool needs its window: a pass of its own


# ---- ONNX ---------------------------------------------------------------------------------
def _model(tmp_path: Path, nodes, inputs, output, inits=(), opset: int = 17) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, [output], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return path


def _const(name: str, value: object) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


X = helper.make_tensor_value_info("x", FLOAT, [1, 4, 6, 6])
X2 = helper.make_tensor_value_info("x2", FLOAT, [1, 4, 6, 6])
Y = helper.make_tensor_value_info("y", FLOAT, None)
EACH = (1, 4, 6, 6)  # N, K, Q, P of a 4-D tensor's layer: channels in K (dim 1)


@pytest.mark.parametrize(
    ("node", "inits", "kind", "op", "dims"),
    [
        (helper.make_node("Relu", ["x"], ["y"], name="n"), [], "activation", "relu", EACH),
        (
            helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="n"),
            [_const("lo", 0.0), _const("hi", 6.0)],
            "activation",
            "relu6",
            EACH,
        ),
        (
            helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="n"),
            [_const("lo", -1.0), _const("hi", 1.0)],
            "activation",
            "clip",
            EACH,
        ),
        (helper.make_node("Sigmoid", ["x"], ["y"], name="n"), [], "activation", "sigmoid", EACH),
        (helper.make_node("Tanh", ["x"], ["y"], name="n"), [], "activation", "tanh", EACH),
        (helper.make_node("Add", ["x", "x2"], ["y"], name="n"), [], "eltwise", "add", EACH),
        (helper.make_node("Sub", ["x", "x2"], ["y"], name="n"), [], "eltwise", "add", EACH),
        (helper.make_node("Mul", ["x", "x2"], ["y"], name="n"), [], "eltwise", "mul", EACH),
        # a per-channel constant [4, 1, 1]: a bias (scale) of 4 channels over 36 elements each
        (
            helper.make_node("Add", ["x", "b"], ["y"], name="n"),
            [_const("b", np.zeros((4, 1, 1)))],
            "eltwise",
            "bias",
            (1, 4, 1, 36),
        ),
        (
            helper.make_node("Div", ["x", "d"], ["y"], name="n"),
            [_const("d", 2.0)],
            "eltwise",
            "scale",
            (1, 1, 1, 144),  # a scalar: one channel's constant over 144 elements
        ),
        (
            helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], name="n"),
            [_const(k, np.ones(4)) for k in "gbmv"],
            "norm",
            "batchnorm",
            (1, 4, 1, 36),
        ),
        # the softmax over the last axis (opset 13+): 24 rows of 6
        (
            helper.make_node("Softmax", ["x"], ["y"], name="n"),
            [],
            "softmax",
            "softmax",
            (1, 6, 1, 24),
        ),
        # a layer norm over the last two axes: 4 rows of 36
        (
            helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="n", axis=-2),
            [_const("g", np.ones((6, 6)))],
            "norm",
            "layernorm",
            (1, 36, 1, 4),
        ),
    ],
)
def test_each_onnx_operator_is_a_layer(tmp_path: Path, node, inits, kind, op, dims) -> None:
    inputs = [X, X2] if "x2" in node.input else [X]
    net, summary = load_onnx(_model(tmp_path, [node], inputs, Y, inits))
    (entry,) = net.layers
    layer = entry.layer
    assert (layer.name, layer.kind, layer.op) == ("n", kind, op)
    assert dims == (layer.N, layer.K, layer.Q, layer.P)
    assert layer.operand_size(Operand.O) == 144  # every element of [1, 4, 6, 6]
    assert summary.priced == {node.op_type: 1}


def test_onnx_gelu_opset_20(tmp_path: Path) -> None:
    node = helper.make_node("Gelu", ["x"], ["y"], name="n")
    net, _ = load_onnx(_model(tmp_path, [node], [X], Y, opset=20))
    assert (net.layers[0].layer.kind, net.layers[0].layer.op) == ("activation", "gelu")


@pytest.mark.parametrize(
    ("node", "window", "out"),
    [
        # 2x2 windows, stride 2, on 6x6: 3x3 outputs; the window in R, S
        (
            helper.make_node(
                "MaxPool", ["x"], ["y"], name="n", kernel_shape=[2, 2], strides=[2, 2]
            ),
            ("max", 2, 2, 2),
            (3, 3),
        ),
        (
            helper.make_node("AveragePool", ["x"], ["y"], name="n", kernel_shape=[3, 3]),
            ("avg", 3, 3, 1),
            (4, 4),
        ),
        # a global pool: the whole 6x6 input, one output per channel
        (helper.make_node("GlobalAveragePool", ["x"], ["y"], name="n"), ("avg", 6, 6, 1), (1, 1)),
        (helper.make_node("GlobalMaxPool", ["x"], ["y"], name="n"), ("max", 6, 6, 1), (1, 1)),
    ],
)
def test_onnx_pools(tmp_path: Path, node, window, out) -> None:
    net, _ = load_onnx(_model(tmp_path, [node], [X], Y))
    layer = net.layers[0].layer
    assert (layer.kind, layer.op, layer.R, layer.S, layer.wstride) == ("pool", *window)
    assert (*out, 4) == (layer.Q, layer.P, layer.K)


def test_onnx_patterns_are_one_layer_each(tmp_path: Path) -> None:
    # GELU as PyTorch exports it, x * 0.5 * (1 + erf(x / sqrt 2)); SiLU as x * sigmoid(x);
    # a layer norm decomposed over the last axis, with its scale and shift
    consts = [_const(n, v) for n, v in (("r2", 1.4142), ("one", 1.0), ("half", 0.5))]
    consts += [_const("two", 2.0), _const("eps", 1e-5), _const("g", np.ones(6))]
    consts += [_const("b", np.zeros(6))]
    nodes = [
        helper.make_node("Div", ["x", "r2"], ["a"]),
        helper.make_node("Erf", ["a"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["p"]),
        helper.make_node("Mul", ["x", "p"], ["q"]),
        helper.make_node("Mul", ["q", "half"], ["gelu"], name="gelu"),
        helper.make_node("Sigmoid", ["gelu"], ["s"]),
        helper.make_node("Mul", ["gelu", "s"], ["silu"], name="silu"),
        helper.make_node("ReduceMean", ["silu"], ["mean"], axes=[-1]),
        helper.make_node("Sub", ["silu", "mean"], ["d"]),
        helper.make_node("Pow", ["d", "two"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["d", "sd"], ["n"]),
        helper.make_node("Mul", ["n", "g"], ["ng"]),
        helper.make_node("Add", ["ng", "b"], ["y"], name="ln"),
    ]
    net, summary = load_onnx(_model(tmp_path, nodes, [X], Y, consts))
    layers = [(e.layer.name, e.layer.kind, e.layer.op) for e in net.layers]
    assert layers == [
        ("gelu", "activation", "gelu"),
        ("silu", "activation", "silu"),
        ("ln", "norm", "layernorm"),
    ]
    assert net.layers[2].layer.K == 6  # rows of the last axis
    assert net.producers == {"gelu": (), "silu": ("gelu",), "ln": ("silu",)}
    assert summary.priced == {"gelu": 1, "silu": 1, "layernorm": 1}


def test_onnx_shape_only_operators_are_free(tmp_path: Path) -> None:
    # Reshape, Transpose, Flatten and Concat move or relabel data: no layer, no cost; the
    # Relu behind them reads the Relu before them
    shape = _const("shape", [1, 4, 36])
    shape = numpy_helper.from_array(np.array([1, 4, 36], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="first"),
        helper.make_node("Reshape", ["r", "shape"], ["f"]),
        helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
        helper.make_node("Flatten", ["t"], ["fl"]),
        helper.make_node("Concat", ["fl", "fl"], ["c"], axis=1),
        helper.make_node("Relu", ["c"], ["y"], name="second"),
    ]
    net, summary = load_onnx(_model(tmp_path, nodes, [X], Y, [shape]))
    assert [e.layer.name for e in net.layers] == ["first", "second"]
    assert net.producers == {"first": (), "second": ("first",)}
    assert summary.not_priced == {"Reshape": 1, "Transpose": 1, "Flatten": 1, "Concat": 1}


# ---- bad input ---------------------------------------------------------------------------
def _conv_then(tmp_path: Path, op: str) -> Path:
    """A 3x3 conv of 4 channels on 6x6 (pad 1), then node ``op`` (x, 2)."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node(op, ["c", "two"], ["y"], name="odd"),
    ]
    inits = [_const("w", np.zeros((4, 4, 3, 3))), _const("two", 2.0)]
    return _model(tmp_path, nodes, [X], Y, inits)


def _hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_unpriced_operator_is_refused_naming_it_and_its_node(tmp_path: Path) -> None:
    path = _conv_then(tmp_path, "Pow")
    before = _hash(path)
    args = ["evaluate", "--arch", "simba-chip", "--workload", str(path), "--dataflow", "os"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 2
    assert out.stdout == ""
    assert "Traceback" not in out.stderr
    line = out.stderr.strip()
    assert "\n" not in line
    assert line.startswith(f"error: {path}: odd: Pow is an operator magnet does not price")
    assert "--skip-unpriced-ops" in line
    assert _hash(path) == before
    with pytest.raises(MagnetError, match=r"odd: Pow is an operator magnet does not price"):
        load_onnx(path)


def test_skipping_unpriced_operators_records_what_was_skipped(tmp_path: Path) -> None:
    path = _conv_then(tmp_path, "Pow")
    before = _hash(path)
    args = ["evaluate", "--arch", "simba-chip", "--workload", str(path), "--dataflow", "os"]
    out = CliRunner().invoke(main, [*args, "--skip-unpriced-ops", "--json"])
    assert out.exit_code == 0, out.output
    record = json.loads(out.stdout)
    assert record["skipped_ops"] == {"Pow": 1}
    assert "SKIPPED (not priced, left out on request): Pow x 1" in record["notes"][0]
    assert [row["name"] for row in record["layers"]] == ["conv"]
    text = CliRunner().invoke(main, [*args, "--skip-unpriced-ops"])
    assert "skipped      Pow x 1 (ONNX, not priced)" in text.stdout
    assert _hash(path) == before


def test_a_division_of_two_activations_is_not_priced(tmp_path: Path) -> None:
    node = helper.make_node("Div", ["x", "x2"], ["y"], name="ratio")
    path = _model(tmp_path, [node], [X, X2], Y)
    with pytest.raises(MagnetError, match=r"ratio: Div is an operator .*two activations"):
        load_onnx(path)


def test_an_embedding_lookup_is_not_priced(tmp_path: Path) -> None:
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 8])
    node = helper.make_node("Gather", ["table", "ids"], ["y"], name="embed")
    path = _model(tmp_path, [node], [ids], Y, [_const("table", np.zeros((100, 16)))])
    with pytest.raises(MagnetError, match=r"embed: Gather is .*embedding look-up"):
        load_onnx(path)


@pytest.mark.parametrize(
    ("args", "cause"),
    [
        # the flag applies to an ONNX workload only
        (
            ["--workload", "resnet18", "--skip-unpriced-ops"],
            r"resnet18: --skip-unpriced-ops: skipping unpriced operators applies to an \.onnx",
        ),
        (
            ["--layer", "K=8,C=8", "--skip-unpriced-ops"],
            r"--skip-unpriced-ops applies to an \.onnx",
        ),
    ],
)
def test_the_skip_flag_where_it_does_not_apply(args: list[str], cause: str) -> None:
    out = CliRunner().invoke(main, ["evaluate", "--arch", "simba-chip", *args])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert re.search(cause, out.stderr), out.stderr


@pytest.mark.parametrize(
    ("line", "cause"),
    [
        (
            "{name: r, kind: activation, op: rleu, K: 8}",
            r"layers\.0.*op 'rleu'; allowed: relu, relu6",
        ),
        ("{name: r, kind: activation, K: 8}", r"layers\.0.*has no op; allowed: relu"),
        ("{name: r, kind: activaton, op: relu, K: 8}", r"layers\.0\.kind.*'eltwise'"),
        ("{name: r, kind: conv, op: relu, K: 8}", r"op is for post-processing layers"),
        ("{name: r, kind: softmax, K: 8, R: 3}", r"a softmax layer has no window: .*R=3"),
        ("{name: r, kind: norm, op: layernorm, K: 8, C: 4}", r"C = 1; got C=4"),
        # a global pool is an avg or max pool over the whole input, not an op of its own
        (
            "{name: p, kind: pool, op: global, K: 8, R: 7, S: 7}",
            r"op 'global'; allowed: max, avg \(a global pool: max or avg, its window R x S",
        ),
    ],
)
def test_a_network_yaml_with_a_bad_post_processing_layer(tmp_path: Path, line, cause) -> None:
    path = tmp_path / "net.yaml"
    path.write_text(f"name: n\nlayers:\n  - {line}\n")
    before = _hash(path)
    args = ["evaluate", "--arch", "simba-chip", "--workload", str(path), "--dataflow", "os"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1
    assert str(path) in out.stderr
    assert re.search(cause, out.stderr), out.stderr
    assert _hash(path) == before


def test_a_design_without_a_unit_refuses_post_processing_layers(tmp_path: Path) -> None:
    arch = tmp_path / "arch.yaml"
    arch.write_text(
        "name: bare\nlevels:\n"
        "  - {name: DRAM, component: dram, keeps: [weights, inputs, outputs]}\n"
        "  - {name: RF, component: regfile, capacity: 64, keeps: [weights, inputs, outputs]}\n"
        "compute: {name: MAC}\n"
    )
    out = CliRunner().invoke(main, ["evaluate", "--arch", str(arch), "--workload", "resnet18"])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.stderr and out.stdout == ""
    # ResNet-18: 17 ReLUs, 8 adds, 2 pools
    assert out.stderr.startswith(
        "error: architecture 'bare': postprocess: 27 post-processing layer(s) ('conv1.relu': "
        "activation relu, ...) need a post-processing unit"
    )
    # the line names the way in: the unit on the outermost on-chip level, RF here; given
    # it, the architecture runs a conv and its ReLU
    suggested = re.search(r"\((postprocess: \{level: RF, lanes: 16\}) in its YAML\)", out.stderr)
    assert suggested is not None, out.stderr
    with_unit = tmp_path / "with-unit.yaml"
    with_unit.write_text(arch.read_text() + suggested.group(1) + "\n")
    net_path = tmp_path / "net.yaml"
    net_path.write_text(
        "name: n\nlayers:\n  - {name: c, K: 2, C: 2, P: 2}\n"
        "  - {name: r, kind: activation, op: relu, K: 2, P: 2}\n"
    )
    args = ["evaluate", "--arch", str(with_unit), "--workload", str(net_path)]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    # from Python, and the way out: the network's MAC layers alone
    net = mg.load_workload("resnet18")
    with pytest.raises(MagnetError, match="need a post-processing unit"):
        mg.evaluate(net, mg.load_arch(str(arch)), dataflow="free")
    assert all(not e.layer.is_postprocess for e in net.without_postprocess().layers)


def test_a_post_processing_layer_has_no_mapping() -> None:
    with pytest.raises(MagnetError, match=r"layer 'relu' is a post-processing layer .* no mapping"):
        mg.map_layer(relu(), mg.load_arch("simba-chip"))
    mapping = mg.Mapping.from_data([{"target": "DRAM", "temporal": {"K": 64}}])
    with pytest.raises(MagnetError, match="it takes no mapping"):
        mg.evaluate(relu(), mg.load_arch("simba-chip"), mapping)
    # a network's result has its run on the unit, not a mapping of its shape
    net = Network.of("n", [CONV, relu(channels=16, size=14)])
    result = mg.evaluate(net, simba(), dataflow="os-local-ws")
    with pytest.raises(MagnetError, match=r"'relu' is a post-processing layer: it is not mapped"):
        result.result(net.layers[1].layer)
    assert result.runs[1].layer.name == "relu"


@pytest.mark.parametrize(
    ("params", "cause"),
    [
        ({"ppu_lanes": 0}, r"ppu_lanes.*greater than or equal to 1"),
        ({"ppu_lookups_per_cycle": -1}, r"ppu_lookups_per_cycle.*greater than 0"),
        ({"ppu_buffer": "0KiB"}, r"ppu_buffer.*must be > 0"),
        ({"ppu_fused": "maybe"}, r"ppu_fused"),
    ],
)
def test_bad_unit_parameters_name_the_parameter(params, cause) -> None:
    with pytest.raises(MagnetError, match=cause):
        mg.templates.simba(**params)


def test_an_explicit_unit_names_its_bad_fields(tmp_path: Path) -> None:
    levels = (
        "levels:\n"
        "  - {name: DRAM, component: dram, keeps: [weights, inputs, outputs]}\n"
        "  - {name: RF, component: regfile, capacity: 64, keeps: [weights, inputs, outputs]}\n"
        "compute: {name: MAC}\n"
    )
    cases = {
        "postprocess: {level: SRAM, lanes: 4}": "postprocess.level 'SRAM' is not an on-chip",
        "postprocess: {level: DRAM, lanes: 4}": "allowed: RF",
        "postprocess: {level: RF, lanes: 4, ops_per_cycle: {add: 1}}": "missing compare, mac",
        "postprocess: {level: RF, lanes: 4, ops_per_cycle: {add: 1, compare: 1, mac: 1, "
        "lookup: 1, exp: 1}}": "unknown exp",
    }
    for line, cause in cases.items():
        path = tmp_path / "arch.yaml"
        path.write_text(levels + line + "\n")
        out = CliRunner().invoke(main, ["costs", "--arch", str(path)])
        assert out.exit_code == 2, out.output
        assert cause in out.stderr and "Traceback" not in out.stderr, out.stderr


# ---- records and readers -----------------------------------------------------------------
def test_records_carry_each_layers_kind_and_the_network_table_shows_it() -> None:
    from magnet.report.text import network_table

    result = mg.evaluate(
        Network.of("n", [CONV, relu(channels=16, size=14)]), simba(), dataflow="os-local-ws"
    )
    record = result.record()
    assert record.schema_version == mg.SCHEMA_VERSION == 10
    assert [(r.kind, r.op, r.fused_into) for r in record.layers] == [
        ("conv", None, None),
        ("activation", "relu", "conv"),
    ]
    back = mg.NetworkRecord.model_validate_json(record.model_dump_json())
    assert back == record
    text = network_table(record)
    assert "relu+" in text and "kind+: run by the post-processing unit" in text
    assert "postprocess" in text  # its category, spent


def test_an_older_record_without_kinds_still_renders(small) -> None:
    # a version-5 record (before the unit): its rows have no kind, op nor fused_into, and
    # its network no skipped_ops; the design page still lists its layers
    from magnet.report.design_page import design_view
    from magnet.search.job import pack
    from tests.test_design_page import body

    trial = small.pareto_front()[0]
    new = ("kind", "op", "fused_into")
    records = [
        {
            **{k: v for k, v in r.items() if k != "skipped_ops"},
            "schema_version": 5,
            "layers": [{k: v for k, v in row.items() if k not in new} for row in r["layers"]],
        }
        for r in trial.stored_records()
    ]
    old = dataclasses.replace(trial, _records=pack(records))
    page = body(design_view(small, old))
    assert '<th title="what the layer is' in page
    for row in records[0]["layers"]:
        assert f"<td>{row['name']}</td>" in page
    now = body(design_view(small, trial))
    assert "<td>conv</td>" in now or "<td>fc</td>" in now


# ---- the unit's parts in `magnet costs` ----------------------------------------------------
def test_costs_lists_the_parts_of_the_unit(tmp_path: Path) -> None:
    # simba at 45 nm and its nominal 0.9 V (BASE), so that each part is priced at Horowitz's
    # own numbers (the module's header): a lane's multiply-add 0.25 pJ, its adder (and a
    # comparator priced as one) 0.03 pJ, a read of the 65 x 16-bit table 0.43599 pJ. 16 PEs
    # with a unit of 8 lanes each: 128 multiply-add units, 256 adders, 16 tables and buffers
    arch = tmp_path / "arch.yaml"
    arch.write_text("template: simba\n" + "".join(f"{k}: {v}\n" for k, v in BASE.items()))
    out = CliRunner().invoke(main, ["costs", "--arch", str(arch), "--json"])
    assert out.exit_code == 0, out.output
    rows = {r["component"]: r for r in json.loads(out.stdout) if r["role"] == "postprocess"}
    assert list(rows) == ["PPU.mac", "PPU.add8", "PPU.table", "PPU.buffer"]
    assert [rows[n]["instances"] for n in rows] == [128, 256, 16, 16]
    assert rows["PPU.mac"]["energy_pj"]["compute"] == pytest.approx(MAC_PJ, rel=1e-12)
    assert rows["PPU.add8"]["energy_pj"]["add"] == pytest.approx(COMPARE_PJ, rel=1e-12)
    assert rows["PPU.table"]["energy_pj"]["read"] == pytest.approx(LOOKUP_PJ, rel=1e-12)
    assert rows["PPU.buffer"]["attributes"]["capacity_bits"] == 8 * 1024  # 1 KiB
    # the design's unit area is its parts': per unit 8 x (a multiply-add unit + 2 adders),
    # the table and the buffer, times 16 units
    post = mg.design(simba()).costs.postprocess
    assert post is not None
    area = {n: rows[n]["area_um2"] for n in rows}
    each = 8 * (area["PPU.mac"] + 2 * area["PPU.add8"]) + area["PPU.table"] + area["PPU.buffer"]
    assert post.area_um2 == pytest.approx(16 * each, rel=1e-12)


# ---- a pipeline of a package ---------------------------------------------------------------
def test_a_pipeline_runs_post_processing_layers_on_its_bands(monkeypatch) -> None:
    import magnet.mapper.planner as P

    # conv, relu, conv, relu on a 2 x 2 package, in two stages of one row each: each ReLU
    # runs on its conv's output path on its stage's band (2 chiplets x 16 PEs: 32 units)
    conv = Layer(name="c0", K=16, C=16, P=14, Q=14)
    layers = [conv, relu("r0", 16, 14), conv.model_copy(update={"name": "c1"})]
    layers.append(relu("r1", 16, 14))
    monkeypatch.setattr(P, "candidates", lambda *args, **kwargs: [[(0, 2, 1), (2, 4, 1)]])
    package = mg.templates.get_template("package")
    arch = package.build({**package.presets["simba-package-4"], "dram_bandwidth": "stall-free"})
    result = mg.evaluate(
        Network.of("n", layers), arch, dataflow="os-local-ws", pipeline=True, samples=300
    )
    record = result.record()
    rows = {row.name: row for row in record.layers}
    assert (rows["r0"].fused_into, rows["r1"].fused_into) == ("c0", "c1")
    assert (rows["r0"].latency_cycles, rows["r1"].latency_cycles) == (0, 0)
    # 3,136 compares at 0.03 pJ (45 nm, 0.9 V) x 0.32 (16 nm, Dally's factor in the tables)
    # x (1.0 V / 0.85 V)^2 (the preset's supply over 16 nm's nominal, scaling.yaml)
    compare_pj = 0.03 * 0.32 * (1.0 / 0.85) ** 2
    assert rows["r0"].energy_pj_by_category["postprocess"] == pytest.approx(3136 * compare_pj)
    assert [run.arch.postprocess_instances for run in result.runs] == [32, 32, 32, 32]
    # everything adds up; the unit's energy is its runs' own (gated while its stage waits)
    assert sum(record.energy_pj_by_category.values()) == pytest.approx(record.energy_pj)
    assert sum(record.energy_pj_by_level.values()) == pytest.approx(record.energy_pj)
    unit = sum(sum(run.unit_pj.values()) for run in result.runs if run.layer.is_postprocess)
    assert record.energy_pj_by_level["PPU"] == pytest.approx(unit, rel=1e-12)


# ---- a search, its report and the dashboard ------------------------------------------------
POST_NET = (
    "name: post-net\n"
    "layers:\n"
    "  - {name: conv, K: 32, C: 16, P: 14, Q: 14, R: 3, S: 3}\n"
    "  - {name: relu, kind: activation, op: relu, K: 32, P: 14, Q: 14}\n"
    "  - {name: pool, kind: pool, op: max, K: 32, P: 7, Q: 7, R: 2, S: 2, stride: 2}\n"
    "  - {name: fc, kind: fc, K: 64, C: 1568}\n"
)


@pytest.fixture(scope="module")
def post_study(tmp_path_factory) -> tuple[mg.Study, Path]:
    """Two designs of the small space searched on a network with post-processing layers."""
    from magnet.search import search

    root = tmp_path_factory.mktemp("post-study")
    (root / "net.yaml").write_text(POST_NET)
    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space["workloads"] = [str(root / "net.yaml")]
    study = search(space, n_trials=2, storage=str(root / "j.journal"), study="post")
    return study, root


def test_the_report_and_the_dashboard_show_post_processing_rows(post_study, tmp_path) -> None:
    from starlette.testclient import TestClient

    from magnet.dashboard import create_app
    from magnet.report.breakdowns import roofline
    from magnet.report.html import render_report

    study, root = post_study
    trial = study.pareto_front()[0]
    (record,) = trial.records
    fused = '<td>relu <span class="muted" title="run on the output path of conv">fused</span>'
    assert fused in render_report(study)
    app = create_app(str(root / "j.journal"))
    base = f"/studies/post/trials/{trial.number}"
    with TestClient(app, base_url="http://127.0.0.1") as client:
        page = client.get(base).text
        assert fused in page and "<td>max</td>" in page
        # the mapping file has the MAC layers' mappings (the unit runs the others) and
        # prices the design again to the trial's energy
        maps = client.get(base + "/mappings/0.yaml").text
        (tmp_path / "arch.yaml").write_text(client.get(base + "/arch.yaml").text)
    assert set(yaml.safe_load(maps)["layers"]) == {"conv", "fc"}
    (tmp_path / "maps.yaml").write_text(maps)
    args = ["evaluate", "--arch", str(tmp_path / "arch.yaml"), "--workload"]
    args += [str(root / "net.yaml"), "--mapping-file", str(tmp_path / "maps.yaml"), "--json"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["energy_pj"] == pytest.approx(record.energy_pj, rel=1e-9)
    # the roofline draws the MAC layers (a post-processing layer has no MACs) and says so
    fig = roofline(record)
    drawn = sum(len(trace.x) for trace in fig.data if trace.name.endswith("-bound layers"))
    assert drawn == 2
    assert "2 post-processing layer(s) (no MACs) not drawn" in fig.layout.title.text


# ---- a search space's workloads ------------------------------------------------------------
def test_a_search_space_skips_unpriced_operators_only_when_asked(tmp_path: Path) -> None:
    onnx_path = _conv_then(tmp_path, "Pow")
    space = (DATA / "search" / "small_space.yaml").read_text()

    def with_workload(entry: str) -> str:
        text = space.replace("  - tests/data/search/small_net.yaml", f"  - {entry}")
        assert text != space
        return text.replace("trials: 10", "trials: 1")

    cases = {
        "refused.yaml": (
            with_workload(f"{{workload: {onnx_path}}}"),
            2,
            r"workloads\.0: .*odd: Pow is an operator magnet does not price",
        ),
        "zoo.yaml": (
            with_workload("{workload: resnet18, skip_unpriced_ops: true}"),
            2,
            r"workloads\.0: resnet18: skip_unpriced_ops: skipping unpriced operators applies "
            r"to an \.onnx workload",
        ),
        "skipped.yaml": (
            with_workload(f"{{workload: {onnx_path}, skip_unpriced_ops: true}}"),
            0,
            None,
        ),
    }
    journal = tmp_path / "j.journal"
    for name, (text, code, cause) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        before = {p: _hash(p) for p in (path, onnx_path)}
        args = ["search", str(path), "--storage", str(journal), "--workers", "1", "--no-report"]
        out = CliRunner().invoke(main, args)
        assert out.exit_code == code, out.output
        assert "Traceback" not in out.stderr
        assert {p: _hash(p) for p in (path, onnx_path)} == before
        if cause is not None:
            assert out.stdout == "" and len(out.stderr.strip().splitlines()) == 1
            assert re.search(cause, out.stderr), out.stderr
    (trial,) = mg.load_study("small", str(journal)).pareto_front()
    (record,) = trial.records
    assert record.skipped_ops == {"Pow": 1}
    assert [row.name for row in record.layers] == ["conv"]


# ---- what the README says the layers change --------------------------------------------------
def _change(before: float, after: float, scale: float, unit: str, digits: int) -> str:
    return (
        f"{before / scale:.{digits}f} -> {after / scale:.{digits}f} {unit} "
        f"({(after / before - 1) * 100:+.1f} %)"
    )


@pytest.mark.parametrize(
    ("workload", "label"),
    [
        ("resnet50", "ResNet-50 (49 ReLUs, 16 residual adds, 2 pools)"),
        ("bert-base", "BERT-base (12 softmaxes, 24 layer norms, 24 adds, 12 GELUs)"),
    ],
)
def test_the_readme_says_what_the_layers_change(workload: str, label: str) -> None:
    # the README's table, measured as it says: simba-chip, os-local-ws, the fast mapper's
    # defaults; before = the network's MAC layers alone (all magnet priced before issue 30),
    # after = with its post-processing layers
    arch = mg.load_arch("simba-chip")
    net = mg.load_workload(workload)
    before = mg.evaluate(net.without_postprocess(), arch, dataflow="os-local-ws").record()
    after = mg.evaluate(net, arch, dataflow="os-local-ws").record()
    post = [row for row in after.layers if row.op is not None]
    energy = sum(row.energy_pj * row.count for row in post) / after.energy_pj
    cycles = sum(row.latency_cycles * row.count for row in post) / after.latency_cycles
    row = " | ".join(
        [
            f"| {label}",
            _change(before.energy_pj, after.energy_pj, 1e9, "mJ", 2),
            _change(before.latency_cycles, after.latency_cycles, 1e6, "M cycles", 2),
            _change(before.dram_bytes, after.dram_bytes, 1e6, "MB", 1),
            f"{energy * 100:.1f} %, {cycles * 100:.1f} % |",
        ]
    )
    assert row in (REPO / "README.md").read_text()
