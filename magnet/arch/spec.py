"""The hardware as a tree of levels: storage levels with fan-outs, and the compute level.

Levels are listed outermost first (DRAM first), as architects draw them and as Timeloop
writes them. Each level has ``mesh_x * mesh_y`` instances; the fan-out between a level and
the next inner one is the ratio of their meshes, and spatial loops of a mapping spread over it.
"""

from __future__ import annotations

from functools import cached_property
from itertools import pairwise
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from magnet.units import format_bytes
from magnet.workload.dims import Operand, parse_operand

STORAGE_CLASSES = ("dram", "sram", "regfile", "dummy")


class StorageLevel(BaseModel):
    """One storage level (all its instances).

    ``capacity_bits`` is per instance (None: unbounded, as DRAM). Bandwidths are words per
    cycle per instance (None: unlimited). ``block_words`` words move per access (Timeloop's
    ``width / datawidth``); energy is charged per access.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    component: str = "sram"
    capacity_bits: int | None = Field(None, ge=0)
    word_bits: int = Field(8, ge=1)
    operand_bits: dict[str, int] = Field(default_factory=dict)
    block_words: int = Field(1, ge=1)
    read_bandwidth: float | None = Field(None, gt=0)
    write_bandwidth: float | None = Field(None, gt=0)
    shared_bandwidth: float | None = Field(None, gt=0)
    keeps: tuple[str, ...] = ("weights", "inputs", "outputs")
    mesh_x: int = Field(1, ge=1)
    mesh_y: int = Field(1, ge=1)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @field_validator("component")
    @classmethod
    def _known_class(cls, value: str) -> str:
        if value not in STORAGE_CLASSES:
            raise ValueError(f"unknown component {value!r}; allowed: {', '.join(STORAGE_CLASSES)}")
        return value

    @field_validator("keeps")
    @classmethod
    def _known_operands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        ops = [parse_operand(v) for v in value]
        if len(set(ops)) != len(ops):
            raise ValueError(f"an operand is listed twice in {list(value)}")
        return tuple(("weights", "inputs", "outputs")[op] for op in sorted(ops))

    @field_validator("operand_bits")
    @classmethod
    def _operand_bits(cls, value: dict[str, int]) -> dict[str, int]:
        out = {}
        for key, bits in value.items():
            op = parse_operand(key)
            if int(bits) < 1:
                raise ValueError(f"operand_bits[{key}] must be >= 1, got {bits}")
            out[("weights", "inputs", "outputs")[op]] = int(bits)
        return out

    @property
    def instances(self) -> int:
        return self.mesh_x * self.mesh_y

    @property
    def kept(self) -> frozenset[Operand]:
        return frozenset(parse_operand(k) for k in self.keeps)

    def bits(self, operand: Operand) -> int:
        return self.operand_bits.get(("weights", "inputs", "outputs")[operand], self.word_bits)

    @property
    def access_bits(self) -> int:
        return self.block_words * self.word_bits

    def describe_capacity(self) -> str:
        if self.capacity_bits is None:
            return "unbounded"
        if self.capacity_bits % 8 == 0:
            return format_bytes(self.capacity_bits // 8)
        return f"{self.capacity_bits} bits"


class ComputeLevel(BaseModel):
    """The MAC units: ``mesh_x * mesh_y`` of them, each one multiply-accumulate per cycle."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "MAC"
    component: str = "mac"
    mesh_x: int = Field(1, ge=1)
    mesh_y: int = Field(1, ge=1)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @property
    def instances(self) -> int:
        return self.mesh_x * self.mesh_y


class Arch(BaseModel):
    """An accelerator: storage levels (outermost first) and the compute level."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "arch"
    levels: tuple[StorageLevel, ...]
    compute: ComputeLevel
    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(45.0, gt=0)
    template: str | None = None  # the template that built it (its named dataflows apply)

    @model_validator(mode="after")
    def _tree_is_consistent(self) -> Arch:
        if not self.levels:
            raise ValueError("an architecture needs at least one storage level")
        names = [lvl.name for lvl in self.levels] + [self.compute.name]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"level names must be unique; repeated: {', '.join(dupes)}")
        chain = [*self.levels, self.compute]
        for outer, inner in pairwise(chain):
            if inner.mesh_x % outer.mesh_x or inner.mesh_y % outer.mesh_y:
                raise ValueError(
                    f"level {inner.name!r} ({inner.mesh_x}x{inner.mesh_y} instances) must be a "
                    f"whole multiple of its parent {outer.name!r} ({outer.mesh_x}x{outer.mesh_y})"
                )
        return self

    # ---- derived views (index 0 = innermost storage level) ------------------------------
    @cached_property
    def inner_first(self) -> tuple[StorageLevel, ...]:
        return tuple(reversed(self.levels))

    @cached_property
    def fanouts(self) -> tuple[tuple[int, int], ...]:
        """(x, y) fan-out below each level, innermost first: level 0 fans out to the MACs."""
        chain = [self.compute, *self.inner_first]
        return tuple(
            (chain[i].mesh_x // chain[i + 1].mesh_x, chain[i].mesh_y // chain[i + 1].mesh_y)
            for i in range(len(self.levels))
        )

    @property
    def mac_count(self) -> int:
        return self.compute.instances

    def level_index(self, name: str) -> int:
        """Index (innermost first) of the storage level called ``name``."""
        for i, lvl in enumerate(self.inner_first):
            if lvl.name == name:
                return i
        raise KeyError(name)

    def summary(self) -> str:
        lines = [
            f"{self.name}: {self.mac_count} MACs @ {self.clock_ghz:g} GHz, "
            f"{self.technology_nm:g} nm"
        ]
        for lvl in self.levels:
            keeps = ",".join(k[0].upper() for k in lvl.keeps) or "-"
            lines.append(
                f"  {lvl.name:<22} {lvl.component:<7} x{lvl.instances:<5} "
                f"{lvl.describe_capacity():>10}  keeps {keeps}"
            )
        lines.append(f"  {self.compute.name:<22} mac     x{self.compute.instances}")
        return "\n".join(lines)
