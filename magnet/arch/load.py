"""Load an architecture from a preset name or a YAML file (template or explicit tree)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.arch.templates import PRESETS, TEMPLATES
from magnet.errors import MagnetError, validation_message
from magnet.files import read_yaml
from magnet.units import parse_bytes


class _LevelFile(StorageLevel):
    """A storage level as written in YAML: ``capacity`` may be given in bytes ("64KiB")."""

    capacity: int | None = Field(None, exclude=True)

    @field_validator("capacity", mode="before")
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
        data = self.model_dump(exclude={"capacity"})
        if self.capacity is not None:
            data["capacity_bits"] = self.capacity * 8
        return StorageLevel(**data)


class _ArchFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "arch"
    levels: list[_LevelFile]
    compute: ComputeLevel
    clock_ghz: float = Field(1.0, gt=0)
    technology_nm: float = Field(45.0, gt=0)


def build_template(
    template: str, params: dict[str, Any], source: str, name: str | None = None
) -> Arch:
    if template not in TEMPLATES:
        raise MagnetError(
            f"unknown template {template!r}; allowed: {', '.join(TEMPLATES)}",
            source=source,
            field="template",
        )
    factory, model = TEMPLATES[template]
    try:
        return factory(name or template, **params)
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, model), source=source) from None


def load_arch(spec: str | Path) -> Arch:
    """``spec`` is a preset name (``simba-chip``), a template name, or a YAML file."""
    text = str(spec)
    if text in PRESETS:
        template, params = PRESETS[text]
        return build_template(template, params, f"preset {text}", name=text)
    path = Path(text)
    if not path.exists():
        if text in TEMPLATES:
            return build_template(text, {}, f"template {text}")
        raise MagnetError(
            f"no such file, preset or template; presets: {', '.join(PRESETS)}; "
            f"templates: {', '.join(TEMPLATES)}",
            source=text,
        )
    return arch_from_data(read_yaml(path), text)


def arch_from_data(data: Any, source: str) -> Arch:
    if not isinstance(data, dict):
        raise MagnetError(
            "expected a mapping: 'template: NAME' plus parameters, or 'levels:'", source=source
        )
    if "template" in data:
        params = {k: v for k, v in data.items() if k not in ("template", "name")}
        return build_template(str(data["template"]), params, source, data.get("name"))
    if "levels" not in data:
        raise MagnetError(
            "give 'template: NAME' (simba, eyeriss, systolic) or a 'levels:' list", source=source
        )
    try:
        spec = _ArchFile(**data)
        levels = tuple(lvl.level() for lvl in spec.levels)
        return Arch(
            name=spec.name,
            levels=levels,
            compute=spec.compute,
            clock_ghz=spec.clock_ghz,
            technology_nm=spec.technology_nm,
        )
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, _ArchFile), source=source) from None
