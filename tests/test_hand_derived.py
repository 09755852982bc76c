"""Access counts and energies derived by hand (arithmetic in the comments).

Notation: loops listed outermost first; "tile" is words per instance; Delta = words moved
into a level over the whole run (incl. the first fill). Fills of outputs exclude the first
touch of each output (nothing to read back).
"""

from __future__ import annotations

import pytest

from magnet.api import evaluate
from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.errors import InvalidMappingError
from magnet.interop.timeloop import ErtCostModel
from magnet.mapping import LevelMapping, Mapping
from magnet.workload.layer import Layer

ALL = ("weights", "inputs", "outputs")
COSTS = ErtCostModel(
    {
        "DRAM": {"read": 10.0, "write": 10.0, "update": 10.0},
        "GLB": {"read": 2.0, "write": 2.0, "update": 2.0},
        "RF": {"read": 1.0, "write": 1.0, "update": 1.0},
        "MAC": {"compute": 0.5},
    },
    {},
)


def arch(*levels: StorageLevel, macs: tuple[int, int] = (1, 1)) -> Arch:
    return Arch(
        name="test",
        levels=levels,
        compute=ComputeLevel(name="MAC", mesh_x=macs[0], mesh_y=macs[1]),
    )


def dram(block_words: int = 1) -> StorageLevel:
    return StorageLevel(name="DRAM", component="dram", block_words=block_words, keeps=ALL)


def buf(name: str, words: int, mesh: tuple[int, int] = (1, 1), keeps=ALL) -> StorageLevel:
    return StorageLevel(
        name=name, capacity_bits=8 * words, mesh_x=mesh[0], mesh_y=mesh[1], keeps=keeps
    )


def mapping(**levels: dict) -> Mapping:
    return Mapping(levels=tuple(LevelMapping(target=k, **v) for k, v in levels.items()))


def acc(result, level: str, operand: str) -> tuple[float, float, float]:
    a = result.accesses[level][operand]
    return a["reads"], a["fills"], a["updates"]


# ---- two levels: output- vs weight-stationary loop order --------------------------------
LAYER_KCP = Layer(K=2, C=4, P=4)  # 32 MACs, 8 weights, 16 inputs, 8 outputs


def test_two_level_output_stationary_order() -> None:
    a = arch(dram(), buf("RF", 3))
    # DRAM loops K2 / P4 / C4 (C innermost). Tiles at RF: 1 word of each operand.
    m = mapping(DRAM={"temporal": {"K": 2, "P": 4, "C": 4}})
    r = evaluate(LAYER_KCP, a, m, cost_model=COSTS)
    # Outputs: C (innermost) does not index O, so O stays in RF across C: Delta = 1 x P4 x K2 = 8,
    # equal to the 8 outputs -> no read-back (fills 0, DRAM reads 0), 8 DRAM updates.
    assert acc(r, "RF", "outputs") == (32 - 8, 0, 32)  # MAC reads 32 - 8 first touches
    assert acc(r, "DRAM", "outputs") == (0, 0, 8)
    # Weights (K, C): C is the innermost loop -> every iteration refills: 1 x 4 x 4 x 2 = 32.
    assert acc(r, "RF", "weights") == (32, 32, 0)
    assert acc(r, "DRAM", "weights") == (32, 0, 0)
    assert r.latency_cycles == 32
    # Energy: RF (32+32 W, 32+32 I, 24+32 O) x 1 pJ = 184; DRAM (32 + 32 + 8) x 10 = 720;
    # MAC 32 x 0.5 = 16.
    assert r.energy_pj_by_level == {"DRAM": 720.0, "RF": 184.0, "MAC": 16.0}


def test_two_level_weight_stationary_order() -> None:
    a = arch(dram(), buf("RF", 3))
    # DRAM loops C4 / K2 / P4 (P innermost): weights stay in the RF across P.
    m = mapping(DRAM={"temporal": {"C": 4, "K": 2, "P": 4}})
    r = evaluate(LAYER_KCP, a, m, cost_model=COSTS)
    # Weights: first loop indexing W above RF is K2 -> Delta = 1 x 2 x 4 = 8 (each weight once).
    assert acc(r, "RF", "weights") == (32, 8, 0)
    # Outputs: P is innermost and indexes O: Delta = 1 x 4 x 2 x 4 = 32; 8 are first touches,
    # 24 are read back from DRAM; DRAM is updated 32 times.
    assert acc(r, "RF", "outputs") == (24, 24, 32)
    assert acc(r, "DRAM", "outputs") == (24, 0, 32)
    # Inputs (C, P): P innermost -> 32 fills.
    assert acc(r, "RF", "inputs") == (32, 32, 0)


def test_dram_block_rounds_accesses_up() -> None:
    # With 4-word DRAM blocks: weights 8 reads -> 2 accesses, inputs 32 -> 8, outputs 24
    # reads -> 6 and 32 updates -> 8: (2 + 8 + 6 + 8) x 10 pJ = 240 pJ.
    a = arch(dram(block_words=4), buf("RF", 3))
    m = mapping(DRAM={"temporal": {"C": 4, "K": 2, "P": 4}})
    r = evaluate(LAYER_KCP, a, m, cost_model=COSTS)
    assert r.energy_pj_by_level["DRAM"] == 240.0


# ---- three levels ------------------------------------------------------------------------
def test_three_level_hierarchy() -> None:
    layer = Layer(K=4, C=2, P=8)  # 64 MACs
    a = arch(dram(), buf("GLB", 64), buf("RF", 8))
    m = mapping(DRAM={"temporal": {"K": 4}}, GLB={"temporal": {"P": 8}}, RF={"temporal": {"C": 2}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    # RF tiles: W = C2 = 2, I = C2 = 2, O = 1. Loops above RF, inner first: P8, K4.
    # W: P8 does not index W; K4 does -> Delta = 2 x 4 = 8. I: P8 indexes I -> 2 x 8 x 4 = 64.
    # O: P8 indexes O -> 1 x 8 x 4 = 32 = all 32 outputs -> no read-back.
    assert acc(r, "RF", "weights") == (64, 8, 0)
    assert acc(r, "RF", "inputs") == (64, 64, 0)
    assert acc(r, "RF", "outputs") == (64 - 32, 0, 64)
    # GLB tiles: W = 2, I = C2 x P8 = 16, O = P8 = 8. Above GLB: K4.
    # W: 2 x 4 = 8 fills; I: K4 does not index I -> 16 (once); O: 8 x 4 = 32 = all -> 0.
    # GLB serves what RF was filled with: W 8, I 64, O updates 32 (reads 32 - 32 = 0).
    assert acc(r, "GLB", "weights") == (8, 8, 0)
    assert acc(r, "GLB", "inputs") == (64, 16, 0)
    assert acc(r, "GLB", "outputs") == (0, 0, 32)
    assert acc(r, "DRAM", "inputs") == (16, 0, 0)
    assert acc(r, "DRAM", "outputs") == (0, 0, 32)


# ---- spatial: multicast and reduction ----------------------------------------------------
def test_multicast_of_inputs_across_output_channels() -> None:
    layer = Layer(K=4, C=2, P=8)
    a = arch(dram(), buf("GLB", 64), buf("RF", 8, mesh=(4, 1)), macs=(4, 1))
    m = mapping(
        DRAM={},
        GLB={"temporal": {"P": 8}, "spatial_x": {"K": 4}},
        RF={"temporal": {"C": 2}},
    )
    r = evaluate(layer, a, m, cost_model=COSTS)
    # Each of the 4 RFs: tile I = C2; P8 above -> Delta = 2 x 8 = 16 per RF. K does not index
    # inputs, so the 4 RFs need the same words: one GLB read serves all four -> GLB reads 16.
    assert acc(r, "RF", "inputs") == (16, 16, 0)
    assert acc(r, "GLB", "inputs") == (16, 16, 0)
    # Weights differ per RF (K indexes W): tile C2, nothing above indexes W -> Delta 2 per RF,
    # GLB reads 2 x 4 = 8.
    assert acc(r, "GLB", "weights") == (8, 8, 0)
    # Outputs: RF tile 1, P8 above -> 8 per RF; K indexes O (no reduction) -> 8 x 4 = 32.
    assert acc(r, "GLB", "outputs") == (0, 0, 32)
    assert r.latency_cycles == 16  # 64 MACs over 4 MAC units
    assert r.utilization == 1.0


def test_spatial_reduction_of_partial_sums() -> None:
    layer = Layer(K=1, C=2, P=8)
    a = arch(dram(), buf("GLB", 64), buf("RF", 3, mesh=(2, 1)), macs=(2, 1))
    m = mapping(GLB={"temporal": {"P": 8}, "spatial_x": {"C": 2}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    # Each RF holds one partial sum per P (Delta = 8). C does not index the output, so the two
    # partial sums of each output are added in the network: GLB updates 8, not 16.
    assert acc(r, "RF", "outputs") == (0, 0, 8)
    assert acc(r, "GLB", "outputs") == (0, 0, 8)
    # Inputs differ per RF (C indexes I): 8 each, 16 GLB reads.
    assert acc(r, "GLB", "inputs") == (16, 16, 0)


# ---- sliding windows ---------------------------------------------------------------------
def test_sliding_window_temporal_reuse() -> None:
    # 1-D conv P=16, R=3 (Timeloop's conv1d tutorial). RF holds P16 x R1 -> 16 inputs; DRAM
    # loops over R3: each step shifts the window by one -> 16 + 1 + 1 = 18 fills.
    layer = Layer(P=16, R=3)
    a = arch(dram(), buf("RF", 64))
    m = mapping(DRAM={"temporal": {"R": 3}}, RF={"temporal": {"P": 16}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    assert acc(r, "RF", "inputs") == (48, 18, 0)
    # Stride 2 with the same tiles: window 31 wide, R steps shift by 1 -> 31 + 1 + 1 = 33.
    r2 = evaluate(
        layer.model_copy(update={"wstride": 2}), arch(dram(), buf("RF", 64)), m, cost_model=COSTS
    )
    assert acc(r2, "RF", "inputs") == (48, 33, 0)


def test_sliding_window_wrap_back_refetches() -> None:
    # R3 then K2 above an RF holding P4 x R1 (4 inputs). R steps shift +1 (1 new word each);
    # when K advances, R wraps back by 2 - a move against the first direction - and Timeloop
    # refetches the whole tile: 4 + 2 x 1 + (4 + 2 x 1) = 12.
    layer = Layer(K=2, P=4, R=3)
    a = arch(dram(), buf("RF", 16))
    m = mapping(DRAM={"temporal": {"K": 2, "R": 3}}, RF={"temporal": {"P": 4}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    assert acc(r, "RF", "inputs")[1] == 12


def test_diagonal_multicast_of_sliding_windows() -> None:
    # P4 x R3 PEs, stride 1: PE (p, r) needs input p + r. Starts 0..5 -> 6 distinct words for
    # 12 PEs, so the GLB reads 6, not 12 (row-stationary's diagonal reuse).
    layer = Layer(P=4, R=3)
    a = arch(dram(), buf("GLB", 64), buf("RF", 3, mesh=(4, 3)), macs=(4, 3))
    m = mapping(GLB={"spatial_x": {"P": 4}, "spatial_y": {"R": 3}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    assert acc(r, "RF", "inputs") == (1, 1, 0)
    assert acc(r, "GLB", "inputs")[0] == 6
    # Weights: R indexes W, P does not -> 3 distinct, each multicast to 4 PEs.
    assert acc(r, "GLB", "weights")[0] == 3


# ---- imperfect factors -------------------------------------------------------------------
def test_imperfect_factor_costs_cycles_not_data() -> None:
    # P = 10 mapped as 3 x 4 = 12: 12 cycles (2 padded), utilisation 10/12; data counts are
    # scaled back to the real layer: outputs 12 x 10/12 = 10 DRAM updates.
    layer = Layer(P=10)
    a = arch(dram(), buf("RF", 16))
    m = mapping(DRAM={"temporal": {"P": 3}}, RF={"temporal": {"P": 4}})
    r = evaluate(layer, a, m, cost_model=COSTS)
    assert r.latency_cycles == 12
    assert r.utilization == pytest.approx(10 / 12)
    assert acc(r, "DRAM", "outputs") == (0, 0, 10)
    assert acc(r, "RF", "inputs") == (10, 10, 0)
    assert r.macs == 10


def test_overflow_names_level_operand_and_excess() -> None:
    layer = Layer(P=16, R=3)
    a = arch(dram(), buf("RF", 8))
    m = mapping(DRAM={"temporal": {"R": 3}}, RF={"temporal": {"P": 16}})
    # RF tiles: weights 1, inputs 16, outputs 16 words = 33 x 8 bits = 264 > 64: over by 200.
    with pytest.raises(InvalidMappingError, match=r"'RF'.*inputs 16 words.*over by 200 bits"):
        evaluate(layer, a, m, cost_model=COSTS)
