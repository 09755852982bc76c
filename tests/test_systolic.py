"""The systolic template against SCALE-Sim 3.0 (data/reference/scalesim).

SCALE-Sim's cycles (closed form, checked against every run below): with M = output pixels,
N = filters, Kg = C*R*S on an Ar x Ac array,
    os: ceil(M/Ar) ceil(N/Ac) (Kg + Ar + Ac - 2) - 1
    ws: ceil(Kg/Ar) ceil(N/Ac) (M + 2 Ar + Ac - 2) - 1
    is: ceil(Kg/Ar) ceil(M/Ac) (N + 2 Ar + Ac - 2) - 1
magnet maps the GEMM view (P = M, C = Kg, K = N) with spatial fan-outs over the flattened
dimensions, padding the last fold, and adds the skew per fold (``SystolicPipeline``).
"""

from __future__ import annotations

import csv

import pytest

from magnet.api import evaluate, map_layer
from magnet.mapping import LevelMapping, Mapping
from magnet.templates import systolic
from magnet.workload.layer import Layer
from tests.conftest import REFERENCE

SCALESIM = REFERENCE / "scalesim"
# the layers of scalesim_128x128.csv: K, C, P (= Q), R (= S), stride
LAYERS = {
    "alexnet_conv1": (96, 3, 55, 11, 4),
    "alexnet_conv2": (256, 48, 27, 5, 1),
    "alexnet_conv3": (384, 256, 13, 3, 1),
    "alexnet_conv4": (384, 192, 13, 3, 1),
    "alexnet_conv5": (256, 192, 13, 3, 1),
    "resnet50_conv1": (64, 3, 112, 7, 2),
    "resnet50_res2a_branch2a": (64, 64, 56, 1, 1),
    "resnet50_res2a_branch2b": (64, 64, 56, 3, 1),
    "resnet50_res2a_branch2c": (256, 64, 56, 1, 1),
    "resnet50_res3b_branch2b": (128, 128, 28, 3, 1),
    "resnet50_res4b_branch2b": (256, 256, 14, 3, 1),
    "resnet50_res5b_branch2b": (512, 512, 7, 3, 1),
    "resnet50_fc1000": (1000, 2048, 1, 1, 1),
}
# SCALE-Sim's configuration: 128 x 128, 256/256/128 KiB, a stall-free DRAM interface
ARCH = systolic("systolic-128", dram_bandwidth="stall-free")


def _layer(name: str) -> Layer:
    k, c, p, r, s = LAYERS[name]
    return Layer(name=name, K=k, C=c, P=p, Q=p, R=r, S=r, wstride=s, hstride=s)


def _reference() -> list[tuple[str, str, int]]:
    with open(SCALESIM / "scalesim_128x128.csv") as f:
        return [
            (r["layer"], r["dataflow"], int(float(r["Total Cycles"]))) for r in csv.DictReader(f)
        ]


def _extra() -> list[dict[str, str]]:
    with open(SCALESIM / "scalesim_extra_runs.csv") as f:
        return list(csv.DictReader(f))


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def scalesim_mapping(layer: Layer, dataflow: str, rows: int, cols: int) -> Mapping:
    """SCALE-Sim's own mapping in the GEMM view: whole folds of the array (the last one
    padded), the streamed dimension inside the stationary register."""
    g = layer.gemm_view()
    m, n, kg = g.P, g.K, g.C
    plan = {  # (rows dim, extent), (cols dim, extent), streamed (dim, extent), register
        "os": (("P", m), ("K", n), ("C", kg), "OutputReg"),
        "ws": (("C", kg), ("K", n), ("P", m), "WeightReg"),
        "is": (("C", kg), ("P", m), ("K", n), "InputReg"),
    }[dataflow]
    (rd, re), (cd, ce), (sd, se), reg = plan
    ry, cx = min(re, rows), min(ce, cols)
    outer = {rd: _ceil(re, ry), cd: _ceil(ce, cx)}
    levels = [
        LevelMapping(target="DRAM", temporal={d: f for d, f in outer.items() if f > 1}),
        LevelMapping(target="OfmapSRAM", spatial_x={cd: cx}, spatial_y={rd: ry}),
    ]
    operand = {"OutputReg": "outputs", "WeightReg": "weights", "InputReg": "inputs"}
    for name in ("WeightReg", "InputReg", "OutputReg"):
        mine = name == reg
        levels.append(
            LevelMapping(
                target=name, temporal={sd: se} if mine else {}, keep=[operand[name]] if mine else []
            )
        )
    return Mapping(levels=tuple(levels))


@pytest.mark.parametrize(("name", "dataflow", "cycles"), _reference())
def test_scalesims_own_mapping_gives_its_total_cycles(name: str, dataflow: str, cycles: int):
    layer = _layer(name)
    result = evaluate(layer, ARCH, scalesim_mapping(layer, dataflow, 128, 128))
    assert result.latency_cycles == cycles


@pytest.mark.parametrize(("name", "dataflow", "cycles"), _reference())
def test_the_mapper_finds_scalesims_cycles(name: str, dataflow: str, cycles: int):
    # at objective latency, with SCALE-Sim's SRAM sizes: SCALE-Sim's mapping is the fastest
    # one the dataflow allows (any other split adds folds, each paying the skew)
    outcome = map_layer(_layer(name), ARCH, dataflow, objective="latency")
    assert outcome.status == "mapped"
    assert outcome.result.latency_cycles == cycles


@pytest.mark.parametrize("run", _extra(), ids=lambda r: f"{r['case']}-{r['dataflow']}")
def test_other_arrays_and_layers(run: dict[str, str]) -> None:
    rows, cols = (int(x) for x in run["array"].split("x"))
    arch = systolic(rows=rows, cols=cols, dram_bandwidth="stall-free")  # as SCALE-Sim ran
    s = int(run["stride"])
    layer = Layer(
        K=int(run["K"]),
        C=int(run["C"]),
        P=int(run["P_scalesim"]),
        Q=int(run["Q_scalesim"]),
        R=int(run["R"]),
        S=int(run["S"]),
        wstride=s,
        hstride=s,
    )
    outcome = map_layer(layer, arch, run["dataflow"], objective="latency")
    assert outcome.result.latency_cycles == int(float(run["Total Cycles"]))


def test_fold_formula_by_hand() -> None:
    # fc1000 on 128 x 128, os: M = 1 pixel (one row fold, padded), N = 1000 filters in
    # ceil(1000/128) = 8 column folds, Kg = 2048 streamed: 8 x (2048 + 128 + 128 - 2) - 1
    layer = _layer("resnet50_fc1000")
    result = evaluate(layer, ARCH, scalesim_mapping(layer, "os", 128, 128))
    assert result.latency_cycles == 8 * (2048 + 128 + 128 - 2) - 1 == 18415
    # ws: Kg = 2048 in 16 row folds x 8 column folds, M = 1 streamed, weights shifted in
    # first: 128 x (1 + 2 x 128 + 128 - 2) - 1
    result = evaluate(layer, ARCH, scalesim_mapping(layer, "ws", 128, 128))
    assert result.latency_cycles == 128 * (1 + 2 * 128 + 128 - 2) - 1 == 49023


def test_the_sram_streams_so_scalesims_mapping_fits() -> None:
    # res5b os: one column fold streams the weights of 128 filters over the whole window,
    # Kg x 128 = 4608 x 128 = 589,824 words, more than the 256 KiB filter SRAM; SCALE-Sim
    # double-buffers and streams them, and so does the template (its SRAMs are streaming)
    layer = _layer("resnet50_res5b_branch2b")
    assert layer.gemm_view().C * 128 > 256 * 1024
    assert evaluate(layer, ARCH, scalesim_mapping(layer, "os", 128, 128)).latency_cycles == 19447
