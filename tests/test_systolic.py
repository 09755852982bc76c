"""The systolic template against SCALE-Sim 3.0 (../shared/reference/scalesim).

With SCALE-Sim's own mappings (its GEMM view: os = pixels on rows, filters on columns; ws =
window on rows, filters on columns; is = window on rows, pixels on columns) magnet's cycles,
fill and drain included, equal SCALE-Sim's "Total Cycles". SRAMs are made large because
SCALE-Sim's stall-free run (InterfaceBandwidth: CALC) does not limit the mapping by them.
"""

from __future__ import annotations

import csv

import pytest

from magnet.arch.templates import systolic
from magnet.mapping import LevelMapping, Mapping, evaluate
from magnet.workload.layer import Layer
from tests.conftest import REFERENCE, needs_shared

ARCH = systolic("scalesim-128", ifmap_sram="8MiB", filter_sram="8MiB", ofmap_sram="8MiB")
LAYERS = {
    "resnet50_res5b_branch2b": Layer(K=512, C=512, P=7, Q=7, R=3, S=3),
    "resnet50_fc1000": Layer(K=1000, C=2048),
}
REGISTER = {"os": "OutputReg", "ws": "WeightReg", "is": "InputReg"}
OPERAND = {"os": "outputs", "ws": "weights", "is": "inputs"}


def scalesim_mapping(name: str, dataflow: str) -> Mapping:
    res5b = name.startswith("resnet50_res5b")
    # (spatial_x, spatial_y, streamed in the PE register, outer loops at DRAM)
    plans = {
        ("os", True): ({"K": 128}, {"P": 7, "Q": 7}, {"C": 512, "R": 3, "S": 3}, {"K": 4}),
        ("ws", True): ({"K": 128}, {"C": 128}, {"P": 7, "Q": 7}, {"K": 4, "C": 4, "R": 3, "S": 3}),
        ("is", True): ({"P": 7, "Q": 7}, {"C": 128}, {"K": 512}, {"C": 4, "R": 3, "S": 3}),
        ("os", False): ({"K": 128}, {}, {"C": 2048}, {"K": 8}),
        ("ws", False): ({"K": 128}, {"C": 128}, {}, {"K": 8, "C": 16}),
        ("is", False): ({}, {"C": 128}, {"K": 1000}, {"C": 16}),
    }
    sx, sy, streamed, outer = plans[(dataflow, res5b)]
    levels = [
        LevelMapping(target="DRAM", temporal=outer),
        LevelMapping(target="OfmapSRAM", spatial_x=sx, spatial_y=sy),
    ]
    for kind, reg in REGISTER.items():
        mine = kind == dataflow
        levels.append(
            LevelMapping(
                target=reg, temporal=streamed if mine else {}, keep=[OPERAND[kind]] if mine else []
            )
        )
    return Mapping(levels=tuple(levels))


def _reference() -> dict[tuple[str, str], float]:
    with open(REFERENCE / "scalesim" / "scalesim_128x128.csv") as f:
        return {(r["layer"], r["dataflow"]): float(r["Total Cycles"]) for r in csv.DictReader(f)}


@needs_shared
@pytest.mark.parametrize("dataflow", ["os", "ws", "is"])
@pytest.mark.parametrize("name", list(LAYERS))
def test_cycles_equal_scalesim(name: str, dataflow: str) -> None:
    result = evaluate(LAYERS[name], ARCH, scalesim_mapping(name, dataflow))
    assert result.latency_cycles == _reference()[(name, dataflow)]


def test_fill_and_drain_by_hand() -> None:
    # fc1000, os: 8 folds of the 1000 filters over 128 columns (the last padded), 2048 MACs
    # streamed per fold: 8 x 2048 + 8 x (128 + 128 - 2) - 1 = 18,415 cycles
    result = evaluate(LAYERS["resnet50_fc1000"], ARCH, scalesim_mapping("resnet50_fc1000", "os"))
    assert result.latency_cycles == 8 * 2048 + 8 * (128 + 128 - 2) - 1
    # ws: 16 x 8 = 128 folds, 1 pixel each, weights shifted in first: 128 x (1 + 382) - 1
    result = evaluate(LAYERS["resnet50_fc1000"], ARCH, scalesim_mapping("resnet50_fc1000", "ws"))
    assert result.latency_cycles == 128 * (1 + 2 * 128 + 128 - 2) - 1
