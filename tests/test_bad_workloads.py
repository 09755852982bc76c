"""Bad workloads and mappings (issue 29, item 3) and numbers written with an exponent (item 7).

Each class of bad input: a key repeated in a flow mapping, ``true`` for a count, a layer its
kind cannot be, factors that over-cover a layer, integers too large for numpy, bad ONNX
models. From the command line each is exit 2, one ``error:`` line naming the file or flag
and the cause, nothing on stdout, no traceback, and every user file unchanged (hashed before
and after); from Python the same message as a ``MagnetError``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

import magnet as mg
from magnet.cli import main
from magnet.dataflow import load_dataflow
from magnet.errors import InvalidMappingError, MagnetError
from magnet.files import parse_yaml
from magnet.mapping import Mapping
from magnet.search import load_space
from magnet.templates import load_arch
from magnet.units import parse_bytes
from magnet.workload.loader import parse_workload_spec
from magnet.workload.onnx_import import load_onnx
from tests.conftest import DATA, REPO

TINY_ARCH = DATA / "tiny_arch.yaml"  # DRAM -> RF (64 B) -> 2 MACs along x
TINY_MAPPING = DATA / "tiny_mapping.yaml"  # K=4,C=2,P=4: DRAM {K: 4}; RF {P: 4, C: 2}
TINY_LAYER = "K=4,C=2,P=4"
QUICKSTART = REPO / "search_spaces" / "quickstart.yaml"


def digest(folder: Path) -> dict[str, str]:
    """A hash of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def refused(folder: Path, *args: str) -> str:
    """Run ``magnet ARGS`` in ``folder``: exit 2, one ``error:`` line on stderr and nothing on
    stdout, no traceback, the folder's files unchanged and nothing added. The line."""
    before = digest(folder)
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert digest(folder) == before
    return lines[0]


def expect(message: str, *patterns: str) -> None:
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"


def raises(call: Callable[[], Any], *patterns: str, error: type[Exception] = MagnetError) -> str:
    with pytest.raises(error) as info:
        call()
    expect(str(info.value), *patterns)
    return str(info.value)


# ---- a key given twice, in every kind of YAML magnet reads ----------------------------------
NETWORK = "name: n\nlayers:\n  - {name: a, K: 4, C: 2, P: 4}\n"
SPACE = QUICKSTART.read_text()
TWICE = {
    # kind: (file text, loader); each text repeats a key in a flow mapping on one line
    "network": (
        "name: n\nlayers:\n  - {name: a, K: 16, K: 32}\n",
        lambda p: mg.load_workload(str(p)),
    ),
    "mapping": (
        "mapping:\n  - target: DRAM\n    temporal: {K: 4, K: 2}\n",
        Mapping.from_yaml,
    ),
    "arch": (
        TINY_ARCH.read_text().replace(
            "keeps: [weights, inputs, outputs]\n  - name: RF",
            "keeps: [weights, inputs, outputs]\n  - {name: RF, name: RF2}\n  - name: RF",
            1,
        ),
        load_arch,
    ),
    "space": (
        SPACE.replace(
            "vector_width: {choices: [8, 16]}", "vector_width: {choices: [8], choices: [16]}"
        ),
        load_space,
    ),
    "dataflow": ("name: d\nrules:\n  - {level: RF, level: GLB}\n", load_dataflow),
}


@pytest.mark.parametrize("kind", TWICE)
def test_a_key_twice_in_a_flow_mapping_is_refused_in_every_kind_of_yaml(
    kind: str, tmp_path: Path
) -> None:
    text, load = TWICE[kind]
    path = tmp_path / f"{kind}.yaml"
    path.write_text(text)
    raises(lambda: load(path), re.escape(str(path)), r"is given twice \(first on line \d+, column")


@pytest.mark.parametrize(
    "text, key",
    [
        ("a: {K: 16, K: 32}\n", "K"),  # flow, one line
        ("a: {K: 16,\n    K: 32}\n", "K"),  # flow over two lines
        ("a:\n  K: 16\n  K: 32\n", "K"),  # block
        ("a: [{b: {c: 1, c: 2}}]\n", "c"),  # flow, nested in a list and a mapping
        ("a:\n  - b:\n      c: 1\n      c: 2\n", "c"),  # block, nested
        ("{a: 1, b: 2, a: 3}\n", "a"),  # the document itself
        ("a: &x {K: 1}\nb: {<<: *x, K: 2, K: 3}\n", "K"),  # a merge may be overridden once
    ],
)
def test_a_key_twice_is_refused_in_block_and_flow_and_nested_mappings(text: str, key: str) -> None:
    raises(
        lambda: parse_yaml(text, "f.yaml"), rf"f\.yaml: line \d+: the key '{key}' is given twice"
    )


def test_merges_and_distinct_keys_are_still_read() -> None:
    text = "a: &x {K: 1, C: 2}\nb: {<<: *x, K: 4}\nc: {K: 1, k: 2}\n"
    assert parse_yaml(text, "f.yaml") == {
        "a": {"K": 1, "C": 2},
        "b": {"K": 4, "C": 2},
        "c": {"K": 1, "k": 2},
    }


def test_a_key_twice_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "net.yaml").write_text("name: n\nlayers:\n  - {name: a, K: 16, K: 32}\n")
    (tmp_path / "m.yaml").write_text(TWICE["mapping"][0])
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        "simba-chip",
        "--workload",
        str(tmp_path / "net.yaml"),
        "--dataflow",
        "ws",
    )
    expect(line, r"net\.yaml: line 3: the key 'K' is given twice \(first on line 3, column 15\)")
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        str(TINY_ARCH),
        "--layer",
        TINY_LAYER,
        "--mapping",
        str(tmp_path / "m.yaml"),
    )
    expect(line, r"m\.yaml: line 3: the key 'K' is given twice")


# ---- true / false for a count -----------------------------------------------------------------
@pytest.mark.parametrize(
    "entry, field",
    [
        ("K: true", r"layers\.0\.K"),
        ("N: false", r"layers\.0\.N"),
        ("G: true", r"layers\.0\.G"),
        ("R: true", r"layers\.0\.R"),
        ("repeat: true", r"layers\.0\.repeat"),
        ("stride: true", r"layers\.0\.stride"),
        ("wstride: true", r"layers\.0\.wstride"),
        ("dilation: false", r"layers\.0\.dilation"),
        ("K: 16.0", r"layers\.0\.K"),
    ],
)
def test_true_for_a_count_in_a_network_file_is_refused(
    entry: str, field: str, tmp_path: Path
) -> None:
    path = tmp_path / "net.yaml"
    path.write_text(f"name: n\nlayers:\n  - {{name: a, C: 2, {entry}}}\n")
    message = raises(
        lambda: mg.load_workload(str(path)), re.escape(str(path)), field, "expected a whole number"
    )
    assert message.count("expected a whole number") == 1  # stride: once, not thrice


@pytest.mark.parametrize("text", ["K=true", "K=false", "C=4,stride=true", "K=True"])
def test_true_for_a_count_in_a_layer_string_is_refused(text: str, tmp_path: Path) -> None:
    key = text.split(",")[-1].split("=")[0]
    raises(lambda: mg.parse_layer(text), r"--layer", rf"{key}=\w+: '\w+' is not a whole number")
    net = tmp_path / "net.yaml"
    net.write_text(f"name: n\nlayers:\n  - {{name: a, shape: '{text}'}}\n")
    raises(lambda: mg.load_workload(str(net)), r"layers\.0: shape: .* is not a whole number")
    line = refused(tmp_path, "map", "--arch", "simba-chip", "--layer", text)
    expect(line, r"--layer", r"is not a whole number")


@pytest.mark.parametrize("field", ["N", "G", "K", "C", "P", "Q", "R", "S", "wstride", "hdilation"])
def test_true_for_a_count_from_python_is_refused(field: str) -> None:
    raises(lambda: mg.Layer(**{field: True}), rf"Layer: {field}: expected a whole number, got True")
    raises(lambda: mg.Layer(**{field: 2.0}), rf"{field}: expected a whole number, got 2\.0")
    layer = mg.Layer(name="a")
    raises(lambda: mg.Network.of("n", [(layer, True)]), r"layers: .*\(Layer, repeat >= 1\) pairs")


def test_true_for_a_batch_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "net.yaml"
    path.write_text(NETWORK)
    raises(lambda: mg.load_workload(str(path), batch=True), r"batch: expected a whole", r"got True")
    raises(lambda: mg.load_workload("resnet18", batch=True), r"batch", r"got True")
    raises(lambda: mg.load_workload("resnet18:batch=1e30"), r"batch: must be <= 2147483647")
    raises(lambda: mg.load_workload(str(path), batch=2**31), r"--batch: batch must be in 1\.\.")


# ---- layers their kind cannot be ------------------------------------------------------------
@pytest.mark.parametrize(
    "entry, patterns",
    [
        (
            "{name: dw1, kind: depthwise, K: 32, C: 16, P: 8}",
            [r"layer 'dw1'", r"depthwise layer has one filter per channel", r"K=32, C=16"],
        ),
        (
            "{name: dw2, kind: depthwise, K: 32, C: 32}",
            [r"layer 'dw2'", r"K = C = 1 per group, the channels in G", r"K=32, C=32"],
        ),
        (
            "{name: head, kind: fc, K: 1000, C: 512, R: 7, S: 7}",
            [r"layer 'head'", r"an fc layer has no filter window", r"R=7, S=7"],
        ),
        (
            "{name: qk, kind: matmul, K: 64, C: 64, stride: 2}",
            [r"layer 'qk'", r"a matmul layer has no filter window", r"wstride=2, hstride=2"],
        ),
        ("{name: s0, K: 4, stride: 0}", [r"layers\.0\.stride", r"greater than or equal to 1"]),
        (
            "{name: d0, K: 4, hdilation: -1}",
            [r"layers\.0\.hdilation", r"greater than or equal to 1"],
        ),
    ],
)
def test_a_layer_its_kind_cannot_be_is_refused_naming_it(
    entry: str, patterns: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "net.yaml"
    path.write_text(f"name: n\nlayers:\n  - {entry}\n")
    raises(lambda: mg.load_workload(str(path)), re.escape(str(path)), *patterns)
    line = refused(
        tmp_path, "evaluate", "--arch", "simba-chip", "--workload", str(path), "--dataflow", "ws"
    )
    expect(line, *patterns)


def test_impossible_layers_from_python() -> None:
    raises(lambda: mg.Layer(name="x", kind="depthwise", K=2, C=3), r"layer 'x': a depthwise layer")
    raises(lambda: mg.Layer(kind="fc", S=3), r"an fc layer has no filter window; got S=3|got S=3")
    raises(
        lambda: mg.conv2d(in_channels=6, out_channels=8, out_height=4, out_width=4, groups=4),
        r"channels \(6 in, 8 out\) must divide by groups=4",
    )
    # what a depthwise layer is: one filter per channel (G channels, K = C = 1)
    dw = mg.depthwise_conv2d(channels=8, out_height=4, out_width=4)
    assert (dw.kind, dw.G, dw.K, dw.C) == ("depthwise", 8, 1, 1)
    # a grouped conv with two filters per channel is a grouped conv, not a depthwise one
    two = mg.conv2d(in_channels=8, out_channels=16, out_height=4, out_width=4, groups=8)
    assert (two.kind, two.G, two.K, two.C) == ("conv", 8, 2, 1)


# ---- factors that over-cover a layer -----------------------------------------------------
def mapping_with_k(tmp_path: Path, k: int) -> Path:
    path = tmp_path / f"k{k}.yaml"
    path.write_text(TINY_MAPPING.read_text().replace("{K: 4}", f"{{K: {k}}}"))
    return path


@pytest.mark.parametrize("k", [8, 9, 1000])
def test_factors_covering_a_dimension_twice_are_refused(k: int, tmp_path: Path) -> None:
    path = mapping_with_k(tmp_path, k)
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        str(TINY_ARCH),
        "--layer",
        TINY_LAYER,
        "--mapping",
        str(path),
    )
    expect(
        line,
        re.escape(str(path)),
        rf"factors of K multiply to {k} but the layer has K=4",
        r"twice the extent or more",
        r"multiply to 4, or to less than 8",
    )
    design = mg.design(load_arch(str(TINY_ARCH)))
    layer = mg.parse_layer(TINY_LAYER)
    raises(
        lambda: mg.evaluate(layer, design, mapping=Mapping.from_yaml(path)),
        rf"multiply to {k} but the layer has K=4",
        error=InvalidMappingError,
    )


def test_factors_padding_a_dimension_are_shown_as_padding(tmp_path: Path) -> None:
    path = mapping_with_k(tmp_path, 5)
    result = CliRunner().invoke(
        main, ["evaluate", "--arch", str(TINY_ARCH), "--layer", TINY_LAYER, "--mapping", str(path)]
    )
    assert result.exit_code == 0, result.output
    # K: 5 for K=4: the padded nest runs 5 x 4 x 2 = 40 iterations on one of the two MACs:
    # 40 cycles, utilisation 32 MACs / (40 cycles x 2 MACs) = 40 %, and 8 of the nest's 40
    # MACs (20 %) compute padding
    assert "cycles       40  (compute 40" in result.stdout
    assert "utilization  40.00 %  (padded: 20.0 % of the loop nest's 40 MACs" in result.stdout
    exact = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(TINY_ARCH),
            "--layer",
            TINY_LAYER,
            "--mapping",
            str(TINY_MAPPING),
        ],
    )
    assert "utilization  50.00 %\n" in exact.stdout  # no padding, no note


def test_a_dataflow_fixing_factors_twice_the_layer_is_infeasible(tmp_path: Path) -> None:
    flow = tmp_path / "fixed.yaml"
    flow.write_text("name: fixed-k\nrules:\n  - level: DRAM\n    factors: {K: 8}\n")
    design = mg.design(load_arch(str(TINY_ARCH)), str(flow))
    outcome = mg.map_layer(mg.parse_layer(TINY_LAYER), design)
    assert outcome.status == "infeasible"
    expect(outcome.reason or "", r"fixes factors of K that multiply to 8", r"K=4")


def test_the_mappers_padding_stays_under_twice_the_layer() -> None:
    # C=144 over an array of 16: the fast mapper pads a fan-out (144 = 9 x 16); whatever it
    # finds must read back through the mapping checks (a given mapping's rules)
    design = mg.design(load_arch("simba-chip"), "os-local-ws")
    layer = mg.parse_layer("K=24,C=144,P=56,Q=56")
    outcome = mg.map_layer(layer, design, budget=mg.Budget(evaluations=3000), seed=1)
    assert outcome.mapping is not None
    again = Mapping.from_data(outcome.mapping.to_data())
    assert mg.evaluate(layer, design, mapping=again).energy_pj == pytest.approx(
        outcome.result.energy_pj
    )


# ---- integers too large for numpy ---------------------------------------------------------
@pytest.mark.parametrize("command", ["map", "search"])
@pytest.mark.parametrize("value", ["4294967296", "99999999999999999999999", "-1"])
def test_a_seed_outside_numpy_s_range_is_refused_with_its_bound(
    command: str, value: str, tmp_path: Path
) -> None:
    args = (
        ["map", "--arch", "simba-chip", "--layer", "K=16,C=16"]
        if command == "map"
        else ["search", "quickstart", "--storage", str(tmp_path / "s.journal")]
    )
    result = CliRunner().invoke(main, [*args, "--seed", value])
    assert result.exit_code == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr
    expect(result.stderr, r"--seed", r"0<=x<=4294967295")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("seed", [2**32, 10**30, -1, True])
def test_a_seed_outside_numpy_s_range_from_python(seed: int, tmp_path: Path) -> None:
    layer = mg.parse_layer("K=16,C=16")
    design = mg.design(load_arch("simba-chip"))
    bound = r"seed: .*whole number.*4,294,967,295"
    raises(lambda: mg.map_layer(layer, design, seed=seed), bound)
    journal = tmp_path / "s.journal"
    raises(lambda: mg.search("quickstart", storage=str(journal), seed=seed), bound)
    assert not journal.exists()
    assert mg.map_layer(layer, design, seed=2**32 - 1, budget=mg.Budget(evaluations=10))


def space_with(tmp_path: Path, param: str) -> Path:
    path = tmp_path / "space.yaml"
    path.write_text(SPACE.replace("vector_width: {choices: [8, 16]}", f"vector_width: {param}"))
    return path


@pytest.mark.parametrize(
    "param, patterns",
    [
        (
            "{int: [1, 1000000000000000000000000000000]}",
            [r"within -9007199254740992\.\.9007199254740992", r"2\^53"],
        ),
        ("{int: [1, 1e30]}", [r"within -9007199254740992\.\.9007199254740992"]),
        ("{int: [-1e20, 4]}", [r"within -9007199254740992"]),
        # four billion values: never listed, each end checked against the template's range
        (
            "{int: [4, 4294967296]}",
            [r"the value 4294967296: vector_width", r"less than or equal to 256"],
        ),
        ("{int: [4, 8], step: 1e30}", [r"within -9007199254740992"]),
    ],
)
def test_an_int_range_too_large_gives_a_bound(
    param: str, patterns: list[str], tmp_path: Path
) -> None:
    path = space_with(tmp_path, param)
    line = refused(tmp_path, "search", str(path), "--storage", str(tmp_path / "s.journal"))
    expect(line, re.escape(str(path)), r"params\.vector_width", *patterns)


def test_a_seed_in_a_space_is_an_unknown_field(tmp_path: Path) -> None:
    path = tmp_path / "space.yaml"
    path.write_text(SPACE + "seed: 4294967296\n")
    line = refused(tmp_path, "search", str(path), "--storage", str(tmp_path / "s.journal"))
    expect(line, r"seed: unknown field")


@pytest.mark.parametrize(
    "factor, patterns",
    [
        (
            "1e30",
            [r"factor of K must be <= 2147483647 \(2\*\*31 - 1\), got 1" + "0" * 30],
        ),
        ("2147483648", [r"factor of K must be <= 2147483647"]),
        ("true", [r"factor of K must be a whole number >= 1, got True"]),
    ],
)
def test_a_mapping_factor_too_large_gives_a_bound(
    factor: str, patterns: list[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(TINY_MAPPING.read_text().replace("{K: 4}", f"{{K: {factor}}}"))
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        str(TINY_ARCH),
        "--layer",
        TINY_LAYER,
        "--mapping",
        str(path),
    )
    expect(line, re.escape(str(path)), r"levels\.0\.temporal", *patterns)


def test_factors_whose_product_overflows_int32_are_refused_not_wrapped(tmp_path: Path) -> None:
    # 65536 x 65536 = 2**32 wraps to 0 in int32: it must read as 4294967296, far above K=4
    path = tmp_path / "m.yaml"
    path.write_text(
        "mapping:\n  - target: DRAM\n    temporal: {K: 65536}\n"
        "  - target: RF\n    temporal: {P: 4, C: 2, K: 65536}\n"
    )
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        str(TINY_ARCH),
        "--layer",
        TINY_LAYER,
        "--mapping",
        str(path),
    )
    expect(line, r"factors of K multiply to 4294967296 but the layer has K=4")


@pytest.mark.parametrize("text", ["K=10000000000000000000000000000000", "K=1e30", "wstride=1e12"])
def test_a_layer_dimension_too_large_gives_a_bound(text: str, tmp_path: Path) -> None:
    line = refused(tmp_path, "map", "--arch", "simba-chip", "--layer", text)
    expect(line, r"--layer", r"less than or equal to 2147483647")
    raises(lambda: mg.Layer(K=10**30), r"K: Input should be less than or equal to 2147483647")


# ---- ONNX -------------------------------------------------------------------------------------
def conv_model(
    path: Path,
    x_shape: tuple[int, ...] = (1, 8, 16, 16),
    w_shape: tuple[int, ...] = (16, 8, 3, 3),
    opsets: list[tuple[str, int]] | None = None,
    **attrs: Any,
) -> Path:
    """One Conv node ``conv1`` (input ``x``, weight ``w``) with ``attrs``."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    w = numpy_helper.from_array(np.zeros(w_shape, dtype=np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", **attrs)
    graph = helper.make_graph([node], "g", [x], [y], [w])
    ids = [helper.make_opsetid(d, v) for d, v in (opsets or [("", 13)])]
    model = helper.make_model(graph, opset_imports=ids)
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


NEWEST = onnx.defs.onnx_opset_version()
ONNX_CASES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "opset-too-new": (
        {"opsets": [("", NEWEST + 1)]},
        [
            r"opset_import",
            rf"opset {NEWEST + 1} of the default ONNX domain is not supported",
            rf"opsets 1 to {NEWEST}",
        ],
    ),
    "opset-zero": (
        {"opsets": [("", 0)]},
        [r"opset 0 of the default ONNX domain", rf"1 to {NEWEST}"],
    ),
    "no-default-opset": (
        {"opsets": [("com.example", 1)]},
        [r"imports no opset of the default ONNX domain", rf"1 to {NEWEST}"],
    ),
    "negative-pads": (
        {"pads": [-1, -1, -1, -1]},
        [
            r"conv1",
            r"pads=\[-1, -1, -1, -1\] holds -1: negative padding \(a crop\)",
            r"pads are >= 0",
        ],
    ),
    "zero-strides": (
        {"strides": [0, 0]},
        [r"conv1", r"strides=\[0, 0\] holds 0: a stride of 0", r"strides are >= 1"],
    ),
    "negative-stride": ({"strides": [1, -2]}, [r"holds -2: a stride of 0 or less"]),
    "zero-dilation": ({"dilations": [0, 1]}, [r"dilations=\[0, 1\] holds 0: a dilation of 0"]),
    "three-strides": ({"strides": [1, 1, 1]}, [r"strides=\[1, 1, 1\]: expected 2 values"]),
    "zero-sized-input": (
        {"x_shape": (1, 8, 0, 16)},
        [r"dimension 2 of Conv input 'x' \[1, 8, 0, 16\] is 0, zero-sized"],
    ),
    "zero-channels": (
        {"x_shape": (1, 0, 16, 16), "w_shape": (16, 0, 3, 3)},
        [r"dimension 1 of Conv input 'x' .* is 0, zero-sized"],
    ),
    "zero-sized-weight": (
        {"w_shape": (0, 8, 3, 3)},
        [r"dimension 0 of Conv weight 'w' .* is 0, zero-sized"],
    ),
    "group-zero": ({"group": 0}, [r"group=0: a group count is >= 1"]),
    "group-not-dividing": ({"group": 3}, [r"group=3 does not split the channels"]),
    "kernel-over-input": (
        {"x_shape": (1, 8, 2, 2)},
        [
            r"output size \[0, 0\] is empty: the dilated kernel \[3, 3\] is larger than the "
            r"padded input"
        ],
    ),
    "too-wide": (
        {"x_shape": (1, 8, 16, 2**40)},
        [r"conv1: out_width: expected a whole number in 1\.\.2,147,483,647, got 1099511627774"],
    ),
}


@pytest.mark.parametrize("name", ONNX_CASES)
def test_a_bad_onnx_model_is_named_for_what_it_is(name: str, tmp_path: Path) -> None:
    kwargs, patterns = ONNX_CASES[name]
    path = conv_model(tmp_path / f"{name}.onnx", **kwargs)
    raises(lambda: load_onnx(path), re.escape(str(path)), *patterns)


def test_a_bad_onnx_model_from_the_command_line(tmp_path: Path) -> None:
    path = conv_model(tmp_path / "crop.onnx", pads=[-1, -1, -1, -1])
    line = refused(
        tmp_path, "evaluate", "--arch", "simba-chip", "--workload", str(path), "--dataflow", "ws"
    )
    expect(line, r"crop\.onnx: conv1: Conv attribute pads", r"negative padding")


def test_a_good_onnx_model_of_any_known_opset_is_read(tmp_path: Path) -> None:
    for opset in (1, 13, NEWEST):
        network, _ = load_onnx(conv_model(tmp_path / f"ok{opset}.onnx", opsets=[("", opset)]))
        assert network.layers[0].layer.shape_str() == "K=16,C=8,P=14,Q=14,R=3,S=3"


# ---- numbers written with an exponent -----------------------------------------------------------
def test_yaml_numbers_with_an_exponent_are_numbers() -> None:
    text = (
        "a: 1e6\nb: 1.0e6\nc: 2.5E3\nd: 1.5e-3\ne: -1e3\nf: 1e400\ng: '1e6'\nh: 1.0e+6\ni: .5e1\n"
    )
    data = parse_yaml(text, "f.yaml")
    assert data == {
        "a": 1_000_000,
        "b": 1_000_000,
        "c": 2_500,
        "d": 0.0015,
        "e": -1000,
        "f": float("inf"),
        "g": "1e6",  # quoted: text
        "h": 1_000_000,
        "i": 5,
    }
    assert all(type(data[k]) is int for k in "abcehi")  # whole: fits a count or a size
    # where YAML 1.1 reads a number otherwise than YAML 1.2: 017 is 17 (not octal 15),
    # 1:30 is text (not sexagesimal 90, which a count would take silently)
    assert parse_yaml("a: 017\nb: 1:30\nc: 0x10\nd: 0\n", "f.yaml") == {
        "a": 17,
        "b": "1:30",
        "c": 16,
        "d": 0,
    }


def test_exponents_in_a_network_and_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "net.yaml"
    path.write_text("name: n\nlayers:\n  - {name: a, K: 1e3, C: 2.5E1, P: 1.0e1, repeat: 2e0}\n")
    entry = mg.load_workload(str(path)).layers[0]
    assert (entry.layer.K, entry.layer.C, entry.layer.P, entry.repeat) == (1000, 25, 10, 2)
    assert mg.parse_layer("K=1e3,C=2.5E1").dims == (1, 1, 1000, 25, 1, 1, 1, 1)
    assert parse_workload_spec("resnet18:batch=2e0") == ("resnet18", {"batch": 2})
    assert parse_workload_spec("x:a=true,b=2.5") == ("x", {"a": "true", "b": "2.5"})  # text
    assert Mapping.from_data([{"target": "DRAM", "temporal": "K4e0 P=1e1"}]).levels[0].temporal == {
        "K": 4,
        "P": 10,
    }
    path.write_text("name: n\nlayers:\n  - {name: a, K: 1.5e0}\n")
    raises(lambda: mg.load_workload(str(path)), r"layers\.0\.K: expected a whole number, got 1\.5")
    raises(lambda: mg.parse_layer("K=1.5e0"), r"K=1\.5e0: '1\.5e0' is not a whole number")
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(TINY_ARCH),
            "--layer",
            "K=4e0,C=2,P=4",
            "--mapping",
            str(TINY_MAPPING),
        ],
    )
    assert result.exit_code == 0 and "(K=4,C=2,P=4)" in result.stdout


def test_sizes_with_an_exponent(tmp_path: Path) -> None:
    base = (DATA / "simba_template.yaml").read_text()
    path = tmp_path / "arch.yaml"
    for written, size in [("1e4", 10_000), ("1.6e1KiB", 16_384), ("2.048E3", 2_048)]:
        path.write_text(base.replace("weight_buffer: 16KiB", f"weight_buffer: {written}"))
        same = base.replace("weight_buffer: 16KiB", f"weight_buffer: {size}")
        path2 = tmp_path / "same.yaml"
        path2.write_text(same)
        assert load_arch(str(path)) == load_arch(str(path2))
    path.write_text(base.replace("weight_buffer: 16KiB", "weight_buffer: 1.5e0"))
    line = refused(tmp_path, "map", "--arch", str(path), "--layer", "K=16,C=16")
    expect(line, r"weight_buffer: 1\.5 is not a whole number of bytes")
    path.write_text(base.replace("weight_buffer: 16KiB", "weight_buffer: 1e30"))
    expect(
        refused(tmp_path, "map", "--arch", str(path), "--layer", "K=16,C=16"),
        r"weight_buffer: .* above the 1 GiB limit",
    )
    assert parse_bytes("1.5e3") == 1500
    assert parse_bytes("1.5e3 KB") == 1_500_000
    with pytest.raises(ValueError, match="not a whole number of bytes"):
        parse_bytes("1.5e0")
    with pytest.raises(ValueError, match="not a finite size"):
        parse_bytes("1e400")


def test_a_count_with_an_exponent_in_a_space(tmp_path: Path) -> None:
    path = tmp_path / "space.yaml"
    path.write_text(
        SPACE.replace("trials: 48", "trials: 4.8e1").replace(
            "{choices: [8, 16]}", "{int: [8e0, 1.6e1], step: 8e0}"
        )
    )
    space = load_space(path)
    assert space.trials == 48
    assert list(space.ranges()["vector_width"].listed()) == [8, 16]
