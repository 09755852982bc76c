"""Parametric templates that build the level tree from a few numbers.

* ``simba``: the MAGNet / Simba PE (vector MAC units with weight and accumulation collectors,
  weight / input / accumulation buffers) in a PE array with a global buffer and DRAM.
* ``eyeriss``: a PE array with ifmap / weight / psum scratchpads, a global buffer and DRAM.
* ``systolic``: SCALE-Sim's machine, a rows x cols array fed by ifmap / filter / ofmap SRAMs.

Sizes are bytes or strings such as ``"32KiB"``; scratchpads and collectors are in words.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.units import parse_bytes


def _size(value: Any) -> int:
    size = parse_bytes(value)
    if size <= 0:
        raise ValueError(f"a buffer size must be > 0, got {value!r}")
    return size


Bytes = Annotated[int, BeforeValidator(_size)]
_ALL = ("weights", "inputs", "outputs")


def _dram(bandwidth_gbps: float | None, clock_ghz: float, word_bits: int) -> StorageLevel:
    """DRAM with a 64-bit access; bandwidth given in GB/s becomes words per cycle."""
    words = None
    if bandwidth_gbps is not None:
        words = bandwidth_gbps / clock_ghz * 8 / word_bits
    return StorageLevel(
        name="DRAM",
        component="dram",
        word_bits=word_bits,
        block_words=max(1, 64 // word_bits),
        shared_bandwidth=words,
        keeps=_ALL,
    )


class _Params(BaseModel):
    """What every template has besides its own parameters: the clock and the node."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(45.0, gt=0)


def _assemble(
    template: str,
    name: str,
    levels: Any,
    p: _Params,
    mesh: tuple[int, int],
    bits: int,
    accum_bits: int,
) -> Arch:
    """The architecture from its storage levels (outermost first) and an integer MAC array."""
    compute = ComputeLevel(
        name="MAC",
        mesh_x=mesh[0],
        mesh_y=mesh[1],
        attributes={"bits": bits, "accum_bits": accum_bits, "datatype": "int"},
    )
    return Arch(
        name=name,
        levels=tuple(levels),
        compute=compute,
        clock_ghz=p.clock_ghz,
        technology_nm=p.technology_nm,
        template=template,
    )


class SimbaParams(_Params):
    """MAGNet / Simba PE array. Collectors are per vector unit: ``weight_collector`` weight
    vectors (``vector_width`` weights each), ``accum_collector`` partial sums; 0 = none."""

    vector_width: int = Field(8, ge=1, description="lanes of the dot product (over C)")
    vector_units: int = Field(8, ge=1, description="vector MAC units per PE (over K)")
    weight_collector: int = Field(1, ge=0, description="weight vectors per vector unit")
    accum_collector: int = Field(0, ge=0, description="partial sums per vector unit")
    weight_buffer: Bytes = Field(32 * 1024)
    input_buffer: Bytes = Field(8 * 1024)
    accum_buffer: Bytes = Field(3 * 1024)
    pe_rows: int = Field(4, ge=1)
    pe_cols: int = Field(4, ge=1)
    global_buffer: Bytes = Field(64 * 1024)
    dram_bandwidth: float = Field(32.0, gt=0, description="GB/s")
    weight_bits: int = Field(8, ge=1)
    activation_bits: int = Field(8, ge=1)
    accum_bits: int = Field(24, ge=1)
    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(16.0, gt=0)


def simba(name: str = "simba", **params: Any) -> Arch:
    p = SimbaParams(**params)
    pes_x, pes_y = p.pe_cols, p.pe_rows
    vu_x = pes_x * p.vector_units
    levels = [
        _dram(p.dram_bandwidth, p.clock_ghz, p.activation_bits),
        StorageLevel(
            name="GlobalBuffer",
            component="sram",
            capacity_bits=p.global_buffer * 8,
            word_bits=p.activation_bits,
            operand_bits={"outputs": p.accum_bits},
            block_words=max(1, 64 // p.activation_bits),
            keeps=("inputs", "outputs"),
            # PE pitch: Simba's 6 mm^2 chiplet holds 16 PEs -> sqrt(6 / 16) = 0.61 mm (derived)
            attributes={"hop_mm": 0.6},
        ),
        StorageLevel(
            name="InputBuffer",
            component="sram",
            capacity_bits=p.input_buffer * 8,
            word_bits=p.activation_bits,
            block_words=p.vector_width,
            keeps=("inputs",),
            mesh_x=pes_x,
            mesh_y=pes_y,
        ),
        StorageLevel(
            name="WeightBuffer",
            component="sram",
            capacity_bits=p.weight_buffer * 8,
            word_bits=p.weight_bits,
            block_words=p.vector_width * p.vector_units,
            keeps=("weights",),
            mesh_x=pes_x,
            mesh_y=pes_y,
        ),
        StorageLevel(
            name="AccumulationBuffer",
            component="sram",
            capacity_bits=p.accum_buffer * 8,
            word_bits=p.accum_bits,
            block_words=p.vector_units,
            keeps=("outputs",),
            mesh_x=pes_x,
            mesh_y=pes_y,
            attributes={"hop_mm": 0.05},  # assumption: vector units ~50 um apart inside a PE
        ),
    ]
    if p.weight_collector:
        levels.append(
            StorageLevel(
                name="WeightCollector",
                component="regfile",
                capacity_bits=p.weight_collector * p.vector_width * p.weight_bits,
                word_bits=p.weight_bits,
                block_words=p.vector_width,
                keeps=("weights",),
                mesh_x=vu_x,
                mesh_y=pes_y,
                attributes={"hop_mm": 0.01},  # assumption: lanes of a vector unit ~10 um apart
            )
        )
    if p.accum_collector:
        levels.append(
            StorageLevel(
                name="AccumulationCollector",
                component="regfile",
                capacity_bits=p.accum_collector * p.accum_bits,
                word_bits=p.accum_bits,
                keeps=("outputs",),
                mesh_x=vu_x,
                mesh_y=pes_y,
                attributes={"hop_mm": 0.01},
            )
        )
    mesh = (vu_x * p.vector_width, pes_y)
    return _assemble("simba", name, levels, p, mesh, p.weight_bits, p.accum_bits)


class EyerissParams(_Params):
    """Eyeriss-like PE array; scratchpads in words of ``word_bits``."""

    pe_rows: int = Field(12, ge=1)
    pe_cols: int = Field(14, ge=1)
    ifmap_spad: int = Field(12, ge=1, description="words per PE")
    weight_spad: int = Field(224, ge=1, description="words per PE")
    psum_spad: int = Field(24, ge=1, description="words per PE")
    global_buffer: Bytes = Field(108 * 1024)
    word_bits: int = Field(16, ge=1)
    dram_bandwidth: float = Field(8.0, gt=0, description="GB/s")
    clock_ghz: float = Field(0.2, gt=0)
    technology_nm: float = Field(65.0, gt=0)


def eyeriss(name: str = "eyeriss", **params: Any) -> Arch:
    p = EyerissParams(**params)
    pe = {"mesh_x": p.pe_cols, "mesh_y": p.pe_rows, "word_bits": p.word_bits}
    levels = (
        _dram(p.dram_bandwidth, p.clock_ghz, p.word_bits),
        StorageLevel(
            name="GlobalBuffer",
            component="sram",
            capacity_bits=p.global_buffer * 8,
            word_bits=p.word_bits,
            block_words=max(1, 64 // p.word_bits),
            keeps=("inputs", "outputs"),
        ),
        StorageLevel(
            name="IfmapSpad",
            component="regfile",
            capacity_bits=p.ifmap_spad * p.word_bits,
            keeps=("inputs",),
            **pe,
        ),
        StorageLevel(
            name="WeightSpad",
            component="sram",
            capacity_bits=p.weight_spad * p.word_bits,
            keeps=("weights",),
            **pe,
        ),
        StorageLevel(
            name="PsumSpad",
            component="regfile",
            capacity_bits=p.psum_spad * p.word_bits,
            keeps=("outputs",),
            **pe,
        ),
    )
    return _assemble("eyeriss", name, levels, p, (p.pe_cols, p.pe_rows), p.word_bits, p.word_bits)


class SystolicParams(_Params):
    """SCALE-Sim's systolic array: rows x cols MACs fed by three SRAMs (sizes in bytes)."""

    rows: int = Field(128, ge=1)
    cols: int = Field(128, ge=1)
    ifmap_sram: Bytes = Field(256 * 1024)
    filter_sram: Bytes = Field(256 * 1024)
    ofmap_sram: Bytes = Field(128 * 1024)
    word_bits: int = Field(8, ge=1)
    dram_bandwidth: float | None = Field(None, gt=0, description="GB/s; None = stall-free")
    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(45.0, gt=0)


def systolic(name: str = "systolic", **params: Any) -> Arch:
    p = SystolicParams(**params)
    sram = {"component": "sram", "word_bits": p.word_bits, "block_words": max(1, 64 // p.word_bits)}
    reg = {
        "component": "regfile",
        "word_bits": p.word_bits,
        "capacity_bits": p.word_bits,
        "mesh_x": p.cols,
        "mesh_y": p.rows,
    }
    levels = (
        _dram(p.dram_bandwidth, p.clock_ghz, p.word_bits),
        StorageLevel(name="IfmapSRAM", capacity_bits=p.ifmap_sram * 8, keeps=("inputs",), **sram),
        StorageLevel(
            name="FilterSRAM", capacity_bits=p.filter_sram * 8, keeps=("weights",), **sram
        ),
        StorageLevel(
            name="OfmapSRAM",
            capacity_bits=p.ofmap_sram * 8,
            keeps=("outputs",),
            attributes={"hop_mm": 0.03},
            **sram,
        ),  # assumption: 30 um PE pitch
        StorageLevel(name="WeightReg", keeps=("weights",), **reg),
        StorageLevel(name="InputReg", keeps=("inputs",), **reg),
        StorageLevel(name="OutputReg", keeps=("outputs",), **reg),
    )
    return _assemble("systolic", name, levels, p, (p.cols, p.rows), p.word_bits, 32)


TEMPLATES = {
    "simba": (simba, SimbaParams),
    "eyeriss": (eyeriss, EyerissParams),
    "systolic": (systolic, SystolicParams),
}

# Published configurations. simba-chip: Simba (MICRO 2019) chiplet, ../shared/reference/costs.md:
# 16 PEs x 8 vector units x 8 lanes, 32 / 8 / 3 KiB buffers with 24-bit partial sums, 64 KiB
# global buffer, 16 nm; clock 1.96 GHz = 4.01 TOPS / (1024 MACs x 2 ops). Timeloop's model of
# the chip keeps weights in per-vector-unit registers: one weight vector (weight_collector=1).
PRESETS: dict[str, tuple[str, dict[str, Any]]] = {
    "simba-chip": (
        "simba",
        dict(
            vector_width=8,
            vector_units=8,
            weight_collector=1,
            accum_collector=0,
            weight_buffer="32KiB",
            input_buffer="8KiB",
            accum_buffer="3KiB",
            pe_rows=4,
            pe_cols=4,
            global_buffer="64KiB",
            accum_bits=24,
            clock_ghz=1.96,
            technology_nm=16,
        ),
    ),
    # Eyeriss (ISCA 2016): 12 x 14 PEs, 12 / 224 / 24-word spads, 108 KiB GLB, 16-bit, 65 nm.
    "eyeriss-chip": ("eyeriss", {}),
    # SCALE-Sim configuration of ../shared/reference/scalesim: 128 x 128, 256/256/128 KiB.
    "systolic-128": ("systolic", {}),
}
