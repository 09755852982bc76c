"""ONNX import: small graphs built in-process, every imported dimension worked out by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from magnet.errors import MagnetError
from magnet.workload.layer import Layer
from magnet.workload.onnx_import import ImportSummary, load_onnx

FLOAT = TensorProto.FLOAT


def _weight(name: str, *shape: int) -> onnx.TensorProto:
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def _value(name: str, shape: list[int | str | None]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, FLOAT, shape)


def _save(
    tmp_path: Path,
    nodes: list[onnx.NodeProto],
    inputs: list[onnx.ValueInfoProto],
    outputs: list[onnx.ValueInfoProto],
    initializers: list[onnx.TensorProto] | None = None,
    *,
    value_info: list[onnx.ValueInfoProto] | None = None,
    name: str = "model",
    opsets: list[onnx.OperatorSetIdProto] | None = None,
) -> Path:
    graph = helper.make_graph(
        nodes, "graph", inputs, outputs, initializers or [], value_info=value_info or []
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), *(opsets or [])])
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def _only(path: Path, batch: int | None = None) -> tuple[Layer, ImportSummary]:
    network, summary = load_onnx(path, batch=batch)
    assert len(network) == 1
    return network.layers[0].layer, summary


def _first(path: Path, batch: int | None = None) -> Layer:
    return load_onnx(path, batch=batch)[0].layers[0].layer


def _fields(layer: Layer) -> dict:
    return layer.model_dump(exclude={"densities"})


def _expect(name: str, kind: str, op: str | None = None, **dims: int) -> dict:
    """Every Layer field: the given ones, 1 for the rest."""
    keys = ("N", "G", "K", "C", "P", "Q", "R", "S")
    keys += ("wstride", "hstride", "wdilation", "hdilation")
    return {"name": name, "kind": kind, "op": op, **{k: dims.get(k, 1) for k in keys}}


# ---- Conv ----------------------------------------------------------------------------------


def test_grouped_conv(tmp_path: Path) -> None:
    # 32 -> 64 channels in 4 groups, 3x3, pad 1 on 56x56: per group C = 32/4 = 8 and
    # K = 64/4 = 16; the weight is [64, 32/4 = 8, 3, 3]; out = (56 + 2 - 2 - 1)/1 + 1 = 56
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="g4", group=4, pads=[1, 1, 1, 1])
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 32, 56, 56])],
        [_value("y", [1, 64, 56, 56])],
        [_weight("w", 64, 8, 3, 3)],
    )
    layer, summary = _only(path)
    assert _fields(layer) == _expect("g4", "conv", G=4, K=16, C=8, P=56, Q=56, R=3, S=3)
    # MACs = 4 groups * 16 * 8 * 56 * 56 * 9 = 512 * 3,136 * 9 = 14,450,688
    assert layer.macs == 14_450_688
    assert summary.priced == {"Conv": 1} and summary.not_priced == {}


def test_strided_conv_with_padding(tmp_path: Path) -> None:
    # ResNet conv1: 224x224, 7x7, stride 2, pad 3: (224 + 3 + 3 - 1*(7 - 1) - 1)//2 + 1
    # = 223//2 + 1 = 112; the output is declared only as [1, 64, ?, ?] so 112 is inferred
    node = helper.make_node(
        "Conv", ["x", "w", "b"], ["y"], name="conv1", strides=[2, 2], pads=[3, 3, 3, 3]
    )
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 3, 224, 224])],
        [_value("y", [1, 64, None, None])],
        [_weight("w", 64, 3, 7, 7), _weight("b", 64)],
    )
    layer, _ = _only(path)
    expected = _expect("conv1", "conv", K=64, C=3, P=112, Q=112, R=7, S=7, wstride=2, hstride=2)
    assert _fields(layer) == expected
    assert layer.macs == 118_013_952  # 64 * 3 * 112 * 112 * 49, as in test_workload


def test_depthwise_conv(tmp_path: Path) -> None:
    # MobileNet depthwise: 32 channels, group 32, 3x3, stride 2, pad 1 on 112x112:
    # (112 + 2 - 2 - 1)//2 + 1 = 111//2 + 1 = 56; per group K = C = 1
    node = helper.make_node(
        "Conv", ["x", "w"], ["y"], name="dw", group=32, strides=[2, 2], pads=[1, 1, 1, 1]
    )
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 32, 112, 112])],
        [_value("y", [1, 32, 56, 56])],
        [_weight("w", 32, 1, 3, 3)],
    )
    layer, _ = _only(path)
    expected = _expect("dw", "depthwise", G=32, P=56, Q=56, R=3, S=3, wstride=2, hstride=2)
    assert _fields(layer) == expected


def test_conv_axes_height_and_width_are_not_swapped(tmp_path: Path) -> None:
    # H = 20, W = 30; kernel kH = 3, kW = 5; strides (h, w) = (1, 2); dilations (h, w) = (2, 1)
    # out H = (20 - 2*(3 - 1) - 1)//1 + 1 = 16 -> Q; out W = (30 - 1*(5 - 1) - 1)//2 + 1 = 13 -> P
    node = helper.make_node("Conv", ["x", "w"], ["y"], strides=[1, 2], dilations=[2, 1])
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 4, 20, 30])],
        [_value("y", [1, 8, 16, 13])],
        [_weight("w", 8, 4, 3, 5)],
    )
    layer, _ = _only(path)
    # an unnamed node is named <op>_<index>
    assert _fields(layer) == _expect(
        "Conv_0", "conv", K=8, C=4, P=13, Q=16, R=5, S=3, wstride=2, hdilation=2
    )


def test_conv_1d_and_same_padding(tmp_path: Path) -> None:
    # 1-D: length 100, k = 5, stride 2, pad 2+2: (100 + 4 - 4 - 1)//2 + 1 = 50 along the width
    conv1d = helper.make_node("Conv", ["x", "w"], ["t"], name="c1d", strides=[2], pads=[2, 2])
    # then a 2-D SAME_UPPER conv on [1, 8, 15, 15], stride 2: ceil(15 / 2) = 8 each way
    same = helper.make_node(
        "Conv", ["z", "v"], ["u"], name="same", strides=[2, 2], auto_pad="SAME_UPPER"
    )
    path = _save(
        tmp_path,
        [conv1d, same],
        [_value("x", [1, 16, 100]), _value("z", [1, 8, 15, 15])],
        [_value("t", [1, 32, 50]), _value("u", [1, 8, 8, 8])],
        [_weight("w", 32, 16, 5), _weight("v", 8, 8, 3, 3)],
    )
    network, _ = load_onnx(path)
    first, second = (entry.layer for entry in network)
    assert _fields(first) == _expect("c1d", "conv", K=32, C=16, P=50, R=5, wstride=2)
    assert _fields(second) == _expect(
        "same", "conv", K=8, C=8, P=8, Q=8, R=3, S=3, wstride=2, hstride=2
    )


def test_conv_output_disagreeing_with_the_formula_raises(tmp_path: Path) -> None:
    # (10 + 2 - 2 - 1)//1 + 1 = 10, but the graph declares 7x7 (inference keeps it)
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="bad", pads=[1, 1, 1, 1])
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 3, 10, 10])],
        [_value("y", [1, 8, 7, 7])],
        [_weight("w", 8, 3, 3, 3)],
    )
    with pytest.raises(MagnetError, match="disagrees with the Conv formula") as info:
        load_onnx(path)
    assert info.value.field == "bad" and info.value.source == str(path)


# ---- Gemm and MatMul -----------------------------------------------------------------------


def test_gemm_classifier_trans_b(tmp_path: Path) -> None:
    # ResNet fc: [1, 2048] x W^T with W = [1000, 2048] (transB=1): M = 1, K = 2048, N = 1000
    node = helper.make_node("Gemm", ["x", "w", "b"], ["y"], name="fc", transB=1)
    path = _save(
        tmp_path,
        [node],
        [_value("x", [1, 2048])],
        [_value("y", [1, 1000])],
        [_weight("w", 1000, 2048), _weight("b", 1000)],
    )
    layer, summary = _only(path)
    assert _fields(layer) == _expect("fc", "fc", K=1000, C=2048, P=1)
    assert layer.macs == 2_048_000
    assert summary.priced == {"Gemm": 1}


def test_gemm_weight_on_the_left_and_without_weights(tmp_path: Path) -> None:
    # W [64, 32] (transA=1 -> A' = W^T is 32 x 64) times activations X [64, 10]:
    # Y = A'X is 32 x 10 with K = 64; priced transposed, Y^T = X^T W: m = 10, k = 64, n = 32
    left = helper.make_node("Gemm", ["w", "x"], ["y"], name="left", transA=1)
    # two activations [16, 8] x [8, 4] -> a matmul, M = 16, K = 8, N = 4
    acts = helper.make_node("Gemm", ["a", "b"], ["c"], name="acts")
    path = _save(
        tmp_path,
        [left, acts],
        [_value("x", [64, 10]), _value("a", [16, 8]), _value("b", [8, 4])],
        [_value("y", [32, 10]), _value("c", [16, 4])],
        [_weight("w", 64, 32)],
    )
    network, _ = load_onnx(path)
    first, second = (entry.layer for entry in network)
    # (no batch given: the fixed dims 0 of the inputs, 64, 16 and 8, are kept)
    assert _fields(first) == _expect("left", "fc", K=32, C=64, P=10)
    assert _fields(second) == _expect("acts", "matmul", K=4, C=8, P=16)


def test_matmul_2d_with_weight(tmp_path: Path) -> None:
    # BERT FFN up-projection: [128, 768] @ [768, 3072]: M = 128 -> P, K = 768 -> C, N = 3072 -> K
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="ffn1")
    path = _save(
        tmp_path,
        [node],
        [_value("x", [128, 768])],
        [_value("y", [128, 3072])],
        [_weight("w", 768, 3072)],
    )
    layer, _ = _only(path)
    assert _fields(layer) == _expect("ffn1", "fc", K=3072, C=768, P=128)


def test_matmul_3d_activation_with_weight_puts_the_batch_in_n(tmp_path: Path) -> None:
    # [B = 2, 128, 768] @ W [768, 768]: the weight has no leading dims, so B -> N, M = 128 -> P
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="q_proj")
    path = _save(
        tmp_path,
        [node],
        [_value("x", [2, 128, 768])],
        [_value("y", [2, 128, 768])],
        [_weight("w", 768, 768)],
    )
    layer, _ = _only(path)
    assert _fields(layer) == _expect("q_proj", "fc", N=2, K=768, C=768, P=128)


def test_weight_behind_a_transpose_is_still_a_weight(tmp_path: Path) -> None:
    # W stored [3072, 768] -> Transpose -> [768, 3072]: constant, so the MatMul is an fc layer
    nodes = [
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["x", "wt"], ["y"], name="ffn1"),
    ]
    path = _save(
        tmp_path,
        nodes,
        [_value("x", [128, 768])],
        [_value("y", [128, 3072])],
        [_weight("w", 3072, 768)],
    )
    layer, summary = _only(path)
    assert _fields(layer) == _expect("ffn1", "fc", K=3072, C=768, P=128)
    assert summary.not_priced == {"Transpose": 1}


def test_batched_matmul_of_two_activations(tmp_path: Path) -> None:
    # attention scores: [1, 12, 128, 64] @ [1, 12, 64, 128]: batch 1 -> N, 12 heads -> G,
    # M = 128 -> P, K = 64 -> C, N = 128 -> K; MACs = 12 * 128 * 64 * 128 = 12,582,912
    node = helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk")
    path = _save(
        tmp_path,
        [node],
        [_value("q", [1, 12, 128, 64]), _value("kt", [1, 12, 64, 128])],
        [_value("s", [1, 12, 128, 128])],
    )
    layer, _ = _only(path)
    assert _fields(layer) == _expect("qk", "matmul", G=12, K=128, C=64, P=128)
    assert layer.macs == 12_582_912
    # with batch=2 both inputs get dim 0 = 2: N = 2, the heads stay in G
    layer, _ = _only(path, batch=2)
    assert _fields(layer) == _expect("qk", "matmul", N=2, G=12, K=128, C=64, P=128)


# ---- what is not priced, names, batch --------------------------------------------------------


def test_unpriced_nodes_are_refused_or_skipped(tmp_path: Path) -> None:
    # conv -> Relu -> MaxPool -> Add(pool, pool) -> Relu (all priced) -> a custom op -> a 3-D
    # Conv: the custom op is refused, naming it and its node (unnamed: op and index); asked
    # to skip, both are left out and listed, the 3-D conv with why
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Add", ["p", "p"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
        helper.make_node("Foo", ["y"], ["f"], domain="com.example"),
        helper.make_node("Conv", ["v", "w3"], ["v3"], name="c3d"),
    ]
    path = _save(
        tmp_path,
        nodes,
        [_value("x", [1, 3, 8, 8]), _value("v", [1, 2, 4, 4, 4])],
        [_value("f", None), _value("v3", None)],
        [_weight("w", 4, 3, 3, 3), _weight("w3", 2, 2, 1, 1, 1)],
        opsets=[helper.make_opsetid("com.example", 1)],
    )
    with pytest.raises(MagnetError, match=r"com\.example\.Foo_5: com\.example\.Foo is an op"):
        load_onnx(path)
    network, summary = load_onnx(path, skip_ops=True)
    names = ["conv", "Relu_1", "MaxPool_2", "Add_3", "Relu_4"]
    assert [entry.layer.name for entry in network] == names
    assert summary.layers == tuple(e.layer for e in network.layers)
    assert summary.skipped == network.skipped == {"com.example.Foo": 1, "Conv": 1}
    assert summary.not_priced == {} and summary.priced_count == 5
    assert str(summary) == (
        "priced: 5 layers: Conv x 1, Relu x 2, MaxPool x 1, Add x 1; free (layout, constants): "
        "0 nodes; SKIPPED (not priced, left out on request): com.example.Foo x 1, Conv x 1; "
        "Conv skipped (a Conv with 3 or more spatial dims)"
    )


def test_layer_names_are_made_unique(tmp_path: Path) -> None:
    # two nodes named "fc" and one unnamed: fc, fc_2, MatMul_2 (index 2 in the graph)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["a"], name="fc"),
        helper.make_node("MatMul", ["a", "w"], ["b"], name="fc"),
        helper.make_node("MatMul", ["b", "w"], ["y"]),
    ]
    path = _save(
        tmp_path, nodes, [_value("x", [4, 8])], [_value("y", [4, 8])], [_weight("w", 8, 8)]
    )
    network, _ = load_onnx(path)
    assert [entry.layer.name for entry in network] == ["fc", "fc_2", "MatMul_2"]
    assert network.name == "model"  # the file stem


def test_batch_override_changes_n(tmp_path: Path) -> None:
    # 3 -> 8 channels, 3x3, pad 1 on 16x16, then a Relu; the input's batch is symbolic "batch"
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    common = {"initializers": [_weight("w", 8, 3, 3, 3)]}
    symbolic = _save(
        tmp_path,
        nodes,
        [_value("x", ["batch", 3, 16, 16])],
        [_value("y", ["batch", 8, 16, 16])],
        name="symbolic",
        **common,
    )
    assert _first(symbolic).N == 1  # symbolic and no batch given: 1
    layer = _first(symbolic, batch=8)
    assert _fields(layer) == _expect("conv", "conv", N=8, K=8, C=3, P=16, Q=16, R=3, S=3)
    # a fixed batch of 1 with stale intermediate value_info [1, 8, 16, 16]: batch=4 wins
    # (the stale shapes are dropped, so the cross-check sees [4, 8, 16, 16])
    fixed = _save(
        tmp_path,
        nodes,
        [_value("x", [1, 3, 16, 16])],
        [_value("y", [1, 8, 16, 16])],
        value_info=[_value("c", [1, 8, 16, 16])],
        name="fixed",
        **common,
    )
    assert _first(fixed).N == 1
    assert _first(fixed, batch=4).N == 4
    with pytest.raises(MagnetError, match="batch must be an integer >= 1"):
        load_onnx(fixed, batch=0)


# ---- errors --------------------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.onnx"
    with pytest.raises(MagnetError, match="file not found") as info:
        load_onnx(path)
    assert info.value.source == str(path)


@pytest.mark.parametrize("content", [b"hello, this is not a model\n", b""])
def test_not_an_onnx_file(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fake.onnx"
    path.write_bytes(content)
    with pytest.raises(MagnetError, match="not an ONNX model") as info:
        load_onnx(path)
    assert info.value.source == str(path)


def test_symbolic_dimension_a_layer_needs(tmp_path: Path) -> None:
    # the sequence length stays symbolic (only dim 0 is fixed): the MatMul cannot be sized
    node = helper.make_node("MatMul", ["x", "w"], ["y"], name="proj")
    path = _save(
        tmp_path,
        [node],
        [_value("x", ["batch", "seq", 768])],
        [_value("y", ["batch", "seq", 768])],
        [_weight("w", 768, 768)],
    )
    with pytest.raises(MagnetError, match=r"dimension 1 of MatMul input A 'x'.*symbolic") as info:
        load_onnx(path)
    assert info.value.field == "proj" and info.value.source == str(path)


def test_nothing_to_price(tmp_path: Path) -> None:
    path = _save(tmp_path, [helper.make_node("Identity", ["x"], ["y"])], [_value("x", [1, 4])],
                 [_value("y", [1, 4])])  # fmt: skip
    with pytest.raises(MagnetError, match=r"no layer to price.*free.*Identity x 1"):
        load_onnx(path)


def test_a_pruned_weight_gives_its_measured_density_per_input_channel(tmp_path: Path) -> None:
    # 4 -> 2 channels, 1x1, in 2 groups: weight [2, 2, 1, 1]; group 0's filter keeps its
    # first input channel (1, 0), group 1's both (1, 1): input channels 0..3 are non-zero in
    # 1, 0, 1, 1 of their filters' words -> densities [1, 0, 1, 1], mean 0.75
    w = numpy_helper.from_array(
        np.array([1.0, 0.0, 2.0, 3.0], dtype=np.float32).reshape(2, 2, 1, 1), "w"
    )
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="g2", group=2)
    path = _save(tmp_path, [node], [_value("x", [1, 4, 8, 8])], [_value("y", [1, 2, 8, 8])], [w])
    layer, _ = _only(path)
    weights = layer.densities.weights
    assert weights.distribution == "measured" and weights.channels == (1.0, 0.0, 1.0, 1.0)
    assert weights.density == 0.75
    # a Gemm's B [K=3, N=2] with one zero: per input channel (row) 1, 0.5, 1
    b = numpy_helper.from_array(np.array([[1, 2], [0, 3], [4, 5]], dtype=np.float32), "b")
    gemm = helper.make_node("Gemm", ["a", "b"], ["c"], name="fc")
    path = _save(tmp_path, [gemm], [_value("a", [1, 3])], [_value("c", [1, 2])], [b])
    layer, _ = _only(path)
    assert layer.densities.weights.channels == (1.0, 0.5, 1.0)
