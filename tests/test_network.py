"""Networks: YAML input, identical layers evaluated once, per-layer mappings, CLI totals."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from magnet.api import evaluate
from magnet.cli import main
from magnet.errors import MagnetError
from magnet.model.network_result import LayerMappings
from magnet.templates import load_arch
from magnet.workload.loader import load_workload, network_from_yaml, with_batch
from tests.conftest import DATA

NET = DATA / "network"


def test_yaml_network_and_identical_layers() -> None:
    net = network_from_yaml(NET / "tiny_net.yaml")
    # conv: 2 * 4 * 4 = 32 MACs; fc1: 4 * 8 = 32; fc2: 32 x 2 repeats -> 96 MACs in all
    assert net.macs == 32 + 32 + 2 * 32
    assert net.layer_count == 4
    groups = net.unique_layers()
    # fc1 and fc2 share a loop nest: 2 distinct shapes, fc shape counted 3 times
    assert [(layer.name, count, names) for layer, count, names in groups] == [
        ("conv", 1, ["conv"]),
        ("fc1", 3, ["fc1", "fc2"]),
    ]
    assert with_batch(net, 4).macs == 4 * net.macs


def test_network_evaluation_sums_each_layer_times_its_count() -> None:
    arch = load_arch(str(NET / "tiny_arch.yaml"))
    net = load_workload(str(NET / "tiny_net.yaml"))
    maps = LayerMappings.from_yaml(NET / "tiny_mappings.yaml")
    result = evaluate(net, arch, maps)
    record = result.record()
    assert record.unique_shapes == 2  # fc2 reuses fc1's mapping and its evaluation
    single = {
        name: evaluate(entry.layer, arch, maps.by_name[name])
        for name, entry in (("conv", net.layers[0]), ("fc1", net.layers[1]))
    }
    # one MAC unit, every loop temporal: cycles = MACs; conv 32 + fc1 32 + fc2 2 x 32 = 128
    assert result.latency_cycles == 128
    assert result.utilization == 1.0
    expected = single["conv"].energy_pj + 3 * single["fc1"].energy_pj
    assert result.energy_pj == pytest.approx(expected)
    rows = record.model_dump()["layers"]
    assert [(r["name"], r["count"], r["macs"]) for r in rows] == [
        ("conv", 1, 32),
        ("fc1", 1, 32),
        ("fc2", 2, 32),
    ]


def test_missing_and_unknown_layer_mappings_are_named() -> None:
    arch = load_arch(str(NET / "tiny_arch.yaml"))
    net = load_workload(str(NET / "tiny_net.yaml"))
    only_conv = LayerMappings.from_data(
        {"layers": {"conv": [{"target": "DRAM", "temporal": {"K": 2, "P": 4, "C": 4}}]}}, "m.yaml"
    )
    with pytest.raises(MagnetError, match=r"m.yaml: no mapping for 2 layer\(s\): fc1, fc2"):
        evaluate(net, arch, only_conv)
    # every layer has a mapping (conv and the fc shape by name), plus one for a layer
    # the network does not have
    extra = LayerMappings.from_data(
        {
            "layers": {
                "conv": [{"target": "DRAM", "temporal": "K2 P4 C4"}],
                "fc2": [{"target": "DRAM", "temporal": "K4 C8"}],
                "nope": [{"target": "DRAM"}],
            }
        },
        "m.yaml",
    )
    with pytest.raises(MagnetError, match="does not have: nope"):
        evaluate(net, arch, extra)


def test_bad_network_yaml(tmp_path) -> None:
    bad = tmp_path / "net.yaml"
    bad.write_text("name: x\nlayers:\n  - {name: a, K: 4, kernal: 3}\n")
    with pytest.raises(MagnetError, match=r"net.yaml: layers.0.kernal: unknown field; allowed"):
        network_from_yaml(bad)
    bad.write_text("name: x\nlayers:\n  - {name: a, K: 0}\n")
    with pytest.raises(MagnetError, match=r"K"):
        network_from_yaml(bad)
    bad.write_text("name: x\nlayers:\n  - {name: a, K: 2}\n  - {name: a, K: 3}\n")
    with pytest.raises(MagnetError, match="repeated: a"):
        network_from_yaml(bad)


def test_cli_network_json() -> None:
    out = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(NET / "tiny_arch.yaml"),
            "--workload",
            str(NET / "tiny_net.yaml"),
            "--mapping-file",
            str(NET / "tiny_mappings.yaml"),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["macs"] == 128 and data["latency_cycles"] == 128
    assert [r["name"] for r in data["layers"]] == ["conv", "fc1", "fc2"]
    assert set(data["layers"][0]) >= {
        "name",
        "shape",
        "count",
        "macs",
        "energy_pj",
        "latency_cycles",
        "utilization",
    }


def test_cli_evaluates_an_onnx_model_and_lists_what_it_did_not_price(tmp_path) -> None:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    # x[1,4,6,6] -> Conv 3x3 (8 filters, no padding) -> Relu -> y[1,8,4,4]
    w = numpy_helper.from_array(np.zeros((8, 4, 3, 3), dtype=np.float32), "w")
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
            helper.make_node("Relu", ["c"], ["y"], name="relu"),
        ],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4, 4])],
        [w],
    )
    model_path = tmp_path / "tiny.onnx"
    onnx.save(helper.make_model(graph), model_path)
    maps = tmp_path / "maps.yaml"
    # conv: K=8, C=4, P=Q=4, R=S=3 -> 8 * 4 * 16 * 9 = 4608 MACs, all temporal at DRAM
    maps.write_text("layers:\n  conv:\n    - {target: DRAM, temporal: 'K8 C4 P4 Q4 R3 S3'}\n")
    # the Relu runs on a post-processing unit of one lane beside the RF, fused on the conv's
    # output path: its 128 compares take 128 cycles, hidden under the conv's 4,608
    arch = tmp_path / "arch.yaml"
    arch.write_text((NET / "tiny_arch.yaml").read_text() + "postprocess: {level: RF, lanes: 1}\n")
    out = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(arch),
            "--workload",
            str(model_path),
            "--mapping-file",
            str(maps),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["macs"] == 4608 and data["latency_cycles"] == 4608
    assert data["notes"] == [
        "priced: 2 layers: Conv x 1, Relu x 1; free (layout, constants): 0 nodes"
    ]
    relu = data["layers"][1]
    assert (relu["kind"], relu["op"], relu["fused_into"]) == ("activation", "relu", "conv")
    assert relu["latency_cycles"] == 0 and relu["dram_bytes"] == 0


def test_layers_that_are_one_loop_nest_on_the_design_are_mapped_once() -> None:
    # on a systolic array both layers are the same GEMM: 64 output pixels (4 x 16 and 8 x 8)
    # x 16 filters x a window of 16; the mapper runs once, each layer keeps its own name
    from magnet.design import build_design
    from magnet.mapper import get_mapper, map_network
    from magnet.workload.layer import Layer
    from magnet.workload.network import Network, NetworkLayer

    calls = []

    class Counting(type(get_mapper("fast"))):
        def map(self, layer, design):
            calls.append(layer.name)
            return super().map(layer, design)

    a = Layer(name="wide", K=16, C=16, P=4, Q=16)
    b = Layer(name="square", K=16, C=16, P=8, Q=8)
    net = Network(name="two", layers=(NetworkLayer(layer=a), NetworkLayer(layer=b)))
    design = build_design(load_arch("systolic-128"), "os")
    out = map_network(net, design, Counting(objective="latency"))
    assert calls == ["wide"]
    rows = out.result.record().layers
    assert [row.name for row in rows] == ["wide", "square"]
    assert rows[0].latency_cycles == rows[1].latency_cycles
