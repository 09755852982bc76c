"""Architecture presets against published numbers; template and explicit YAML files."""

from __future__ import annotations

import pytest

from magnet.arch.load import arch_from_data, load_arch
from magnet.arch.spec import Arch
from magnet.arch.templates import eyeriss, simba, systolic
from magnet.workload.dims import Operand
from tests.conftest import DATA

KIB_BITS = 8 * 1024


def level(arch: Arch, name: str):
    return arch.levels[[lvl.name for lvl in arch.levels].index(name)]


# ---- simba-chip: ../shared/reference/costs.md, "Simba (Shao et al., MICRO 2019; ...)" ----------
def test_simba_chip_matches_the_published_chiplet() -> None:
    a = load_arch("simba-chip")
    # "Chiplet: 16 PEs; each PE has 8 vector MAC units ..., each an 8-wide dot product over
    # input channels: 1024 int8 MACs per chiplet."
    assert a.mac_count == 16 * 8 * 8 == 1024
    for name in ("InputBuffer", "WeightBuffer", "AccumulationBuffer"):
        assert level(a, name).instances == 16, name  # one per PE
    assert level(a, "WeightCollector").instances == 16 * 8  # one per vector unit
    # "Per PE: weight buffer 32 KiB, input buffer 8 KiB, accumulation buffer 3 KiB (24-bit
    # partial sums); per chiplet: global buffer 64 KiB."
    assert level(a, "WeightBuffer").capacity_bits == 32 * KIB_BITS
    assert level(a, "InputBuffer").capacity_bits == 8 * KIB_BITS
    acc = level(a, "AccumulationBuffer")
    assert acc.capacity_bits == 3 * KIB_BITS
    assert acc.word_bits == 24
    assert acc.capacity_bits // acc.word_bits == 1024  # 3 KiB / 24 bits = 1024 partial sums
    glb = level(a, "GlobalBuffer")
    assert glb.capacity_bits == 64 * KIB_BITS and glb.instances == 1
    assert glb.bits(Operand.O) == 24  # partial sums travel at 24 bits
    assert glb.bits(Operand.I) == 8
    # Timeloop's model of the chip (costs.md): weight buffer and registers keep only weights,
    # the accumulation buffer only outputs, the input buffer only inputs, the global buffer
    # inputs and outputs.
    assert level(a, "WeightBuffer").keeps == ("weights",)
    assert level(a, "WeightCollector").keeps == ("weights",)
    assert acc.keeps == ("outputs",)
    assert level(a, "InputBuffer").keeps == ("inputs",)
    assert glb.keeps == ("inputs", "outputs")
    assert a.technology_nm == 16
    # 4.01 TOPS peak = 1024 MACs x 2 ops x f -> f = 1.958 GHz.
    assert a.clock_ghz == pytest.approx(4.01e12 / (1024 * 2) / 1e9, rel=0.002)


def test_simba_chip_fanouts_innermost_first() -> None:
    # WeightCollector -> MACs: 8 lanes; AccumulationBuffer -> WeightCollector: 8 vector units;
    # inside a PE the buffers are one per PE (1 x 1); GlobalBuffer -> PEs: 4 x 4; DRAM -> GLB 1.
    a = load_arch("simba-chip")
    assert [lvl.name for lvl in a.inner_first] == [
        "WeightCollector",
        "AccumulationBuffer",
        "WeightBuffer",
        "InputBuffer",
        "GlobalBuffer",
        "DRAM",
    ]
    assert a.fanouts == ((8, 1), (8, 1), (1, 1), (1, 1), (4, 4), (1, 1))
    total = 1
    for fx, fy in a.fanouts:
        total *= fx * fy
    assert total == a.mac_count == 1024


def test_simba_chip_preset_equals_the_template_with_the_published_numbers() -> None:
    published = simba(
        "simba-chip",
        vector_width=8,
        vector_units=8,
        weight_buffer=32 * 1024,
        input_buffer=8 * 1024,
        accum_buffer=3 * 1024,
        accum_bits=24,
        pe_rows=4,
        pe_cols=4,
        global_buffer=64 * 1024,
        weight_collector=1,
        accum_collector=0,
        clock_ghz=1.96,
        technology_nm=16,
    )
    assert load_arch("simba-chip") == published


# ---- eyeriss-chip: Eyeriss (Chen, Emer, Sze, ISCA 2016; costs.md "Chip: 168 PEs, 65 nm") -------
def test_eyeriss_chip() -> None:
    a = load_arch("eyeriss-chip")
    assert a.mac_count == 168
    assert (a.compute.mesh_y, a.compute.mesh_x) == (12, 14)  # 12 rows x 14 columns
    assert a.technology_nm == 65
    spads = {"IfmapSpad": 12, "WeightSpad": 224, "PsumSpad": 24}  # words per PE (16-bit)
    for name, words in spads.items():
        lvl = level(a, name)
        assert lvl.instances == 168, name
        assert lvl.word_bits == 16
        assert lvl.capacity_bits == words * 16, name
    assert level(a, "GlobalBuffer").capacity_bits == 108 * KIB_BITS
    # the PE array is one fan-out of 14 x 12 below the global buffer
    assert a.fanouts[[lvl.name for lvl in a.inner_first].index("GlobalBuffer")] == (14, 12)
    assert load_arch("eyeriss-chip") == eyeriss("eyeriss-chip")


# ---- systolic-128: SCALE-Sim configuration, ../shared/reference/README.md (scalesim/) -----
def test_systolic_128() -> None:
    # "a 128x128 array, SRAMs ifmap/filter/ofmap 256/256/128 KiB, 1-byte words"
    a = load_arch("systolic-128")
    assert (a.compute.mesh_x, a.compute.mesh_y) == (128, 128)
    assert a.mac_count == 16384
    assert level(a, "IfmapSRAM").capacity_bits == 256 * KIB_BITS
    assert level(a, "FilterSRAM").capacity_bits == 256 * KIB_BITS
    assert level(a, "OfmapSRAM").capacity_bits == 128 * KIB_BITS
    assert {lvl.word_bits for lvl in a.levels} == {8}
    assert level(a, "IfmapSRAM").keeps == ("inputs",)
    assert level(a, "FilterSRAM").keeps == ("weights",)
    assert level(a, "OfmapSRAM").keeps == ("outputs",)
    for name in ("WeightReg", "InputReg", "OutputReg"):
        assert level(a, name).instances == 128 * 128  # one register of each per PE
    assert load_arch("systolic-128") == systolic("systolic-128")


# ---- YAML files --------------------------------------------------------------------------------
def test_template_file_equals_the_template_call() -> None:
    from_file = load_arch(DATA / "simba_template.yaml")
    called = simba(
        "simba-small",
        vector_width=4,
        vector_units=4,
        weight_collector=2,
        accum_collector=1,
        weight_buffer=16 * 1024,
        input_buffer=4 * 1024,
        accum_buffer=1536,
        pe_rows=2,
        pe_cols=3,
        global_buffer=512 * 1024,  # 0.5MiB
        dram_bandwidth=16,
        clock_ghz=1.5,
        technology_nm=16,
    )
    assert from_file == called
    assert from_file.name == "simba-small"
    assert from_file.mac_count == 3 * 4 * 4 * 2  # pe_cols x vector_units x vector_width x rows
    assert level(from_file, "WeightBuffer").capacity_bits == 16 * KIB_BITS
    assert level(from_file, "AccumulationBuffer").capacity_bits == 1536 * 8
    assert level(from_file, "GlobalBuffer").capacity_bits == 512 * KIB_BITS
    # collectors in words: 2 weight vectors of 4 weights x 8 bits; 1 partial sum of 24 bits
    assert level(from_file, "WeightCollector").capacity_bits == 2 * 4 * 8
    assert level(from_file, "AccumulationCollector").capacity_bits == 24


def test_explicit_levels_file() -> None:
    a = load_arch(DATA / "explicit_arch.yaml")
    assert [lvl.name for lvl in a.levels] == ["DRAM", "GLB", "PE"]
    assert level(a, "GLB").capacity_bits == 524288  # 64 KiB x 8 bits
    assert level(a, "DRAM").capacity_bits is None
    assert level(a, "PE").capacity_bits == 512
    assert level(a, "PE").keeps == ("weights", "inputs")  # "Weights", "I" normalised
    assert level(a, "PE").instances == 8
    assert a.fanouts == ((2, 1), (4, 2), (1, 1))  # PE -> MAC, GLB -> PE, DRAM -> GLB
    assert a.mac_count == 16
    assert a.clock_ghz == 0.5


@pytest.mark.parametrize(
    ("capacity", "bits"),
    [("64KiB", 524288), ("64 KB", 512000), ("3072", 24576), (3072, 24576), ("1MiB", 8388608)],
)
def test_explicit_capacity_units(capacity, bits: int) -> None:
    data = {
        "levels": [{"name": "DRAM", "component": "dram"}, {"name": "L1", "capacity": capacity}],
        "compute": {"name": "MAC"},
    }
    assert level(arch_from_data(data, "test"), "L1").capacity_bits == bits
