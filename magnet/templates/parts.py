"""Pieces several templates share: the DRAM level, the width of a bus, the MAC array, the
post-processing unit."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from magnet.arch.sparse import ComputeZeros, TensorSparsity
from magnet.arch.spec import Arch, ComputeLevel, PostProcessor, StorageLevel
from magnet.templates.template import Bytes, Int, TemplateParams
from magnet.units import Real
from magnet.workload.dims import OPERANDS

PIXELS = ("N", "P", "Q")
WINDOW = ("C", "R", "S")


def bus_words(word_bits: int) -> int:
    """Words of one 64-bit access (at least one)."""
    return max(1, 64 // word_bits)


def dram(p: TemplateParams, word_bits: int) -> StorageLevel:
    """DRAM with a 64-bit access, of technology ``p.dram_technology`` (an attribute the cost
    model prices); its bandwidth (``p.dram_gb_per_s``, None: stall-free) in words per cycle."""
    gb_per_s = p.dram_gb_per_s
    words = None if gb_per_s is None else gb_per_s / p.clock_ghz * 8 / word_bits
    return StorageLevel(
        name="DRAM",
        component="dram",
        word_bits=word_bits,
        block_words=bus_words(word_bits),
        shared_bandwidth=words,
        keeps=OPERANDS,
        attributes={"dram_technology": p.dram_technology},
    )


def assemble(
    name: str,
    levels: list[StorageLevel],
    p: TemplateParams,
    mesh: tuple[int, int],
    compute: dict[str, Any],
    **arch: Any,
) -> Arch:
    """The architecture from its storage levels (outermost first) and the MAC array, with
    the parameters' zeros (``with_zeros``)."""
    levels, zeros = with_zeros(levels, p)
    return Arch(
        name=name,
        levels=tuple(levels),
        compute=ComputeLevel(name="MAC", mesh_x=mesh[0], mesh_y=mesh[1], zeros=zeros, **compute),
        clock_ghz=p.clock_ghz,
        technology_nm=p.technology_nm,
        voltage_v=p.voltage_v,
        power_gating=p.power_gating,
        clock_gating=p.clock_gating,
        controller=p.controller,
        **arch,
    )


def with_zeros(
    levels: list[StorageLevel], p: TemplateParams
) -> tuple[list[StorageLevel], ComputeZeros]:
    """``levels`` (outermost first) with the parameters' formats and actions, and the MACs'
    ``zeros``: activations in DRAM in ``dram_format``; weights in ``weight_format`` in DRAM
    and every on-chip level keeping them; with ``zeros`` gating or skipping on the
    ``zeros_on`` operands, the innermost level keeping weights does the same to its reads
    (conditioned on inputs), the innermost keeping inputs to its reads (on weights), the
    innermost keeping outputs to its reads and updates (on both): the operand that would
    meet a zero is not read, the partial sum it would make not updated (Eyeriss's data
    gating, JSSC 2017: the filter scratchpad read disabled, the MAC kept from switching)."""
    on = ("weights", "inputs") if p.zeros_on == "both" else (p.zeros_on,)
    specs: list[dict[str, dict[str, Any]]] = [{} for _ in levels]
    meta = {} if p.metadata_bits is None else {"metadata_bits": p.metadata_bits}
    for i, lvl in enumerate(levels):
        activations = ("inputs", "outputs") if lvl.is_dram else ()
        for name in lvl.keeps:
            if name in activations and p.dram_format != "uncompressed":
                specs[i][name] = {"format": p.dram_format, **meta}
            if name == "weights" and p.weight_format != "uncompressed":
                specs[i][name] = {"format": p.weight_format, **meta}
    if p.zeros != "none":
        for target, condition in (
            ("weights", [o for o in on if o == "inputs"]),
            ("inputs", [o for o in on if o == "weights"]),
            ("outputs", list(on)),
        ):
            inner = [i for i, lvl in enumerate(levels) if target in lvl.keeps and not lvl.is_dram]
            if inner and condition:
                spec = specs[inner[-1]].setdefault(target, {})
                spec.update(action=p.zeros, condition_on=condition)
    out = [
        lvl if not spec else lvl.model_copy(update={"sparse": _sparse(spec)})
        for lvl, spec in zip(levels, specs, strict=True)
    ]
    return out, ComputeZeros(action=p.zeros, operands=on)


def _sparse(spec: dict[str, dict[str, Any]]) -> dict[str, TensorSparsity]:
    return {name: TensorSparsity(**fields) for name, fields in spec.items()}


#: NVDLA's large configuration (nvdla/hw, ``nvdla_config_large.h``): its single-point data
#: processor does a bias, a scale and an activation on 16 elements per cycle
#: (``SDP_BS_THROUGHPUT``, ``SDP_BN_THROUGHPUT``) and table lookups (its ``EW`` stage, the LUT
#: path) on 4 (``SDP_EW_THROUGHPUT``): a lookup per lane every 4 cycles.
NVDLA_LOOKUPS_PER_LANE = 4 / 16


class PostProcessParams(TemplateParams):
    """The post-processing unit's parameters (``magnet.arch.spec.PostProcessor``); each
    template says where its units sit and what ``ppu_lanes: null`` means."""

    ppu_lanes: Int | None = Field(
        None,
        ge=1,
        le=65536,
        description="lanes of each post-processing unit (null: the template's own width)",
    )
    ppu_buffer: Bytes = Field(
        1024,
        description="buffer of each post-processing unit [bytes] (rows of a softmax or layer "
        "norm, a pooling window's rows); 1 KiB: an assumption",
    )
    ppu_lookups_per_cycle: Real = Field(
        NVDLA_LOOKUPS_PER_LANE,
        gt=0,
        le=64,
        description="table lookups (exp, erf, reciprocal, rsqrt...) per lane per cycle "
        "(0.25: NVDLA nv_large's LUT path, 4 of its 16 elements per cycle)",
    )
    ppu_fused: bool = Field(
        True,
        description="the unit sits on the MAC array's output path: an activation, batchnorm, "
        "bias or residual add right after a MAC layer runs on its outputs, overlapped",
    )


def post_processor(p: PostProcessParams, level: str, lanes: int) -> PostProcessor:
    """The unit beside each instance of ``level``: ``lanes`` wide unless ``p.ppu_lanes`` says
    otherwise; an add, a compare and a multiply-add per lane per cycle (the stages of a
    pipeline, as NVDLA's single-point data processor), table lookups at
    ``p.ppu_lookups_per_cycle``."""
    return PostProcessor(
        level=level,
        lanes=p.ppu_lanes or lanes,
        ops_per_cycle={"add": 1.0, "compare": 1.0, "mac": 1.0, "lookup": p.ppu_lookups_per_cycle},
        buffer_bits=p.ppu_buffer * 8,
        fused=p.ppu_fused,
    )
