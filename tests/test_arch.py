"""Architecture presets against published numbers; template and explicit YAML files."""

from __future__ import annotations

import pytest

from magnet.arch.spec import Arch
from magnet.templates import arch_from_data, eyeriss, load_arch, simba, systolic
from magnet.workload.dims import Operand
from tests.conftest import DATA

KIB_BITS = 8 * 1024


def level(arch: Arch, name: str):
    return arch.levels[[lvl.name for lvl in arch.levels].index(name)]


# ---- simba-chip: tests/data/reference/costs.md, "Simba (Shao et al., MICRO 2019; ...)" ----------
def test_simba_chip_matches_the_published_chiplet() -> None:
    a = load_arch("simba-chip")
    # "Chiplet: 16 PEs; each PE has 8 vector MAC units ..., each an 8-wide dot product over
    # input channels: 1024 int8 MACs per chiplet."
    assert a.mac_count == 16 * 8 * 8 == 1024
    # NVIDIA's Timeloop model (tests/data/reference/simba.md, section 1): InputBuffer one per PE
    # (16, 8192 x 8 b); WeightBuffer and AccumulationBuffer one per vector unit (128;
    # 4096 x 8 b and 128 x 24 b); weight registers one per MAC (1024 x 1 x 8 b).
    assert level(a, "InputBuffer").instances == 16
    assert level(a, "InputBuffer").capacity_bits == 8192 * 8
    assert level(a, "WeightBuffer").instances == 128
    assert level(a, "WeightBuffer").capacity_bits == 4096 * 8
    acc = level(a, "AccumulationBuffer")
    assert acc.instances == 128
    assert acc.capacity_bits == 128 * 24 and acc.word_bits == 24
    assert level(a, "WeightCollector").instances == 1024
    assert level(a, "WeightCollector").capacity_bits == 8
    # per PE, as published (costs.md): weight 32 KiB, input 8 KiB, accumulation 3 KiB
    assert level(a, "WeightBuffer").capacity_bits * 8 == 32 * KIB_BITS
    assert acc.capacity_bits * 8 == 3 * KIB_BITS
    glb = level(a, "GlobalBuffer")
    assert glb.capacity_bits == 64 * KIB_BITS and glb.instances == 1
    assert glb.bits(Operand.O) == 24  # partial sums travel at 24 bits
    assert glb.bits(Operand.I) == 8
    assert glb.block_words == 32  # simba-chip.cfg: block_size 32
    # keep / bypass as in simba-chip.cfg
    assert level(a, "WeightBuffer").keeps == ("weights",)
    assert level(a, "WeightCollector").keeps == ("weights",)
    assert acc.keeps == ("outputs",)
    assert level(a, "InputBuffer").keeps == ("inputs",)
    assert glb.keeps == ("inputs", "outputs")
    assert a.technology_nm == 16
    # 4.01 TOPS peak = 1024 MACs x 2 ops x f -> f = 1.958 GHz.
    assert a.clock_ghz == pytest.approx(4.01e12 / (1024 * 2) / 1e9, rel=0.002)


def test_simba_chip_fanouts_innermost_first() -> None:
    # WeightCollector -> MAC 1:1; AccumulationBuffer -> lanes 8 (adder tree, C8 in
    # simba-chip.cfg); WeightBuffer -> AccumulationBuffer 1:1 (both per vector unit);
    # InputBuffer -> vector units 8 (K8); GlobalBuffer -> PEs 4 x 4; DRAM -> GLB 1.
    a = load_arch("simba-chip")
    assert [lvl.name for lvl in a.inner_first] == [
        "WeightCollector",
        "AccumulationBuffer",
        "WeightBuffer",
        "InputBuffer",
        "GlobalBuffer",
        "DRAM",
    ]
    assert a.fanouts == ((1, 1), (8, 1), (1, 1), (8, 1), (4, 4), (1, 1))
    assert level(a, "AccumulationBuffer").fanout.reduction == "adder_tree"
    assert level(a, "GlobalBuffer").fanout.topology == "mesh"
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
    # its zeros (JSSC 2017): PE data gating on zero inputs (the weight read, the MAC and the
    # psum update), feature maps run-length coded in DRAM (5-bit run, 16-bit value)
    assert a.compute.zeros.action == "gating" and a.compute.zeros.operands == ("inputs",)
    for name in ("WeightSpad", "PsumSpad"):
        spec = next(iter(level(a, name).sparse.values()))
        assert (spec.action, spec.condition_on) == ("gating", ("inputs",)), name
    dram = level(a, "DRAM").sparse
    assert {k: (v.format, v.metadata_bits) for k, v in dram.items()} == {
        "inputs": ("rle", 5),
        "outputs": ("rle", 5),
    }
    zeros = {"zeros": "gating", "zeros_on": "inputs", "dram_format": "rle", "metadata_bits": 5}
    assert load_arch("eyeriss-chip") == eyeriss("eyeriss-chip", **zeros)


# ---- systolic-128: SCALE-Sim configuration, tests/data/reference/README.md (scalesim/) -----
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
    assert load_arch("systolic-128") == systolic("systolic-128", dram_bandwidth="stall-free")


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
    # buffers per PE, split over its 4 vector units
    assert level(from_file, "WeightBuffer").capacity_bits == 16 * KIB_BITS // 4
    assert level(from_file, "AccumulationBuffer").capacity_bits == 1536 * 8 // 4
    assert level(from_file, "GlobalBuffer").capacity_bits == 512 * KIB_BITS
    # collectors in words: 2 weights per lane x 8 bits; 1 partial sum of 24 bits per unit
    assert level(from_file, "WeightCollector").capacity_bits == 2 * 8
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
