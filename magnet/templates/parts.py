"""Pieces several templates share: the DRAM level, the width of a bus, the MAC array."""

from __future__ import annotations

from typing import Any

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.templates.base import TemplateParams
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
    """The architecture from its storage levels (outermost first) and the MAC array."""
    return Arch(
        name=name,
        levels=tuple(levels),
        compute=ComputeLevel(name="MAC", mesh_x=mesh[0], mesh_y=mesh[1], **compute),
        clock_ghz=p.clock_ghz,
        technology_nm=p.technology_nm,
        voltage_v=p.voltage_v,
        power_gating=p.power_gating,
        clock_gating=p.clock_gating,
        controller=p.controller,
        **arch,
    )
