"""An explicit level tree from YAML (templates and presets: ``magnet.templates.load_arch``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from magnet.arch.spec import (
    Arch,
    ClockGating,
    ComputeLevel,
    Controller,
    PostProcessor,
    PowerGating,
    StorageLevel,
)
from magnet.errors import MagnetError, validation_message
from magnet.strict import Strict
from magnet.units import parse_bytes


class _LevelFile(StorageLevel):
    """A storage level as written in YAML: ``capacity`` may be given in bytes ("64KiB")."""

    capacity: int | None = Field(None, exclude=True)

    @field_validator("capacity", mode="before", json_schema_input_type=int | str | None)
    @classmethod
    def _size(cls, value: Any) -> int | None:
        if value is None:
            return None
        size = parse_bytes(value)
        if size <= 0:
            raise ValueError(f"a capacity must be > 0, got {value!r}")
        return size

    @model_validator(mode="after")
    def _one_capacity(self) -> _LevelFile:
        if self.capacity is not None and self.capacity_bits is not None:
            raise ValueError("give capacity (bytes) or capacity_bits, not both")
        return self

    def level(self) -> StorageLevel:
        """The level as magnet holds it (``capacity`` in bytes becomes ``capacity_bits``)."""
        data = self.model_dump(exclude={"capacity"})
        if self.capacity is not None:
            data["capacity_bits"] = self.capacity * 8
        return StorageLevel(**data)


class ArchFile(Strict):
    """An explicit architecture file: its levels (outermost first), compute level and
    operating point (``Arch`` holds the same, built from it)."""

    name: str = "arch"
    levels: list[_LevelFile]
    compute: ComputeLevel
    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(45.0, gt=0)
    voltage_v: float | None = Field(None, gt=0)
    power_gating: PowerGating = "none"
    clock_gating: ClockGating = "fine"
    controller: Controller = "none"
    postprocess: PostProcessor | None = None


def arch_from_tree(data: dict[str, Any], source: str) -> Arch:
    """An explicit level tree (``levels:``, ``compute:``) from parsed YAML."""
    try:
        spec = ArchFile(**data)
        return Arch(
            **spec.model_dump(exclude={"levels", "compute"}),
            levels=tuple(lvl.level() for lvl in spec.levels),
            compute=spec.compute,
        )
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, ArchFile), source=source) from None
