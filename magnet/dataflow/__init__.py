"""Dataflows: named constraints on the mapspace.

A dataflow is a list of rules, one per storage level at most. A rule may restrict

* ``temporal``: the dims that may have a temporal factor > 1 at the level,
* ``factors``: fixed temporal factors (Timeloop's ``factors``),
* ``order``: the innermost loops of the level, in order (the rest are free, outside),
* ``spatial_x`` / ``spatial_y``: the dims that may be unrolled on the fan-out below the
  level, and ``spatial_factors``: fixed spatial factors,
* ``keep``: what the level keeps (overrides the architecture),
* ``stationary``: operands the level must never refetch: every loop above the level that does
  not index the operand sits inside every loop that does, so each word of the operand enters
  the level once (the operand is *stationary* there),
* ``reuse``: operands the level must reuse locally: the innermost loop above the level does not
  index the operand, so each word serves several consecutive steps before it is replaced
  (MAGNet's "local" stationarity in the collectors).

Templates define their named dataflows with these rules (``magnet.templates``); a user writes
the same rules in YAML (``load_dataflow``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from magnet.arch.spec import Arch
from magnet.errors import MagnetError, validation_message
from magnet.files import read_yaml
from magnet.workload.dims import DIMS, OPERANDS, parse_dim, parse_factors, parse_operand


def _dims(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [c for c in value if c.strip() and c not in ",;"]
    return tuple(parse_dim(str(v)).name for v in value)


class Rule(BaseModel):
    """Constraints on one storage level (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    level: str
    temporal: tuple[str, ...] | None = None
    factors: dict[str, int] = Field(default_factory=dict)
    order: tuple[str, ...] | None = None
    spatial_x: tuple[str, ...] | None = None
    spatial_y: tuple[str, ...] | None = None
    spatial_factors: dict[str, int] = Field(default_factory=dict)
    keep: tuple[str, ...] | None = None
    stationary: tuple[str, ...] = ()
    reuse: tuple[str, ...] = ()

    @field_validator(
        "temporal",
        "order",
        "spatial_x",
        "spatial_y",
        mode="before",
        json_schema_input_type=str | list[str] | None,
    )
    @classmethod
    def _dim_list(cls, value: Any) -> tuple[str, ...] | None:
        return _dims(value)

    @field_validator(
        "factors", "spatial_factors", mode="before", json_schema_input_type=str | dict[str, int]
    )
    @classmethod
    def _factor_map(cls, value: Any) -> dict[str, int]:
        return parse_factors(value)

    @field_validator("keep", mode="before", json_schema_input_type=str | list[str] | None)
    @classmethod
    def _keep(cls, value: Any) -> tuple[str, ...] | None:
        if value is None:
            return None
        return tuple(
            OPERANDS[parse_operand(v)] for v in ([value] if isinstance(value, str) else value)
        )

    @field_validator("stationary", "reuse", mode="before")
    @classmethod
    def _stationary(cls, value: Any) -> tuple[str, ...]:
        values = [value] if isinstance(value, str) else list(value or ())
        return tuple(OPERANDS[parse_operand(v)] for v in values)

    def describe(self) -> str:
        """The rule in one line, e.g. ``for P,Q | parallel K over X | keeps weights``."""
        parts = []
        if self.temporal is not None:
            parts.append(f"for {','.join(self.temporal)}" if self.temporal else "no loops")
        if self.factors:
            parts.append("fixed " + " ".join(f"{d}{f}" for d, f in self.factors.items()))
        if self.order:
            parts.append(f"innermost {','.join(self.order)}")
        x, y = self.spatial_x, self.spatial_y
        if x is not None and x == y:
            parts.append(f"parallel {','.join(x)} below" if x else "no parallel loops below")
        else:
            for axis, dims in (("X", x), ("Y", y)):
                if dims:
                    parts.append(f"parallel {','.join(dims)} below along {axis}")
        if self.spatial_factors:
            parts.append(
                "fixed parallel " + " ".join(f"{d}{f}" for d, f in self.spatial_factors.items())
            )
        if self.keep is not None:
            parts.append(f"keeps {', '.join(self.keep) or 'nothing (bypassed)'}")
        if self.stationary:
            parts.append(f"{', '.join(self.stationary)} stationary")
        if self.reuse:
            parts.append(f"{', '.join(self.reuse)} reused locally")
        return " | ".join(parts)


class Dataflow(BaseModel):
    """A named set of rules."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    rules: tuple[Rule, ...] = ()

    def rule(self, level: str) -> Rule | None:
        for r in self.rules:
            if r.level == level:
                return r
        return None

    def check(self, arch: Arch, source: str = "dataflow") -> None:
        """Every rule names a level of ``arch``."""
        names = [lvl.name for lvl in arch.levels]
        for r in self.rules:
            if r.level not in names:
                raise MagnetError(
                    f"rule for unknown level {r.level!r}; the architecture has: {', '.join(names)}",
                    source=source,
                    field="rules",
                )

    def merged(self, other: Dataflow, name: str | None = None) -> Dataflow:
        """This dataflow's rules refined by ``other``'s (per level, other's fields win)."""
        rules = {r.level: r.model_dump(exclude_unset=True) for r in self.rules}
        for r in other.rules:
            rules[r.level] = {
                **rules.get(r.level, {"level": r.level}),
                **r.model_dump(exclude_unset=True),
            }
        return Dataflow(
            name=name or f"{self.name}+{other.name}",
            description=other.description or self.description,
            rules=tuple(Rule(**data) for data in rules.values()),
        )

    def loop_nest(self, arch: Arch) -> str:
        """The dataflow as a loop nest over ``arch``'s levels, outermost first."""
        lines = [f"{self.name}: {self.description}" if self.description else self.name]
        for lvl in arch.levels:
            rule = self.rule(lvl.name)
            text = rule.describe() if rule is not None else ""
            lines.append(f"  {lvl.name:<22} {text or 'any loops'}")
        lines.append(f"  {arch.compute.name:<22} MAC")
        return "\n".join(lines)


def load_dataflow(path: str | Path) -> Dataflow:
    """A user-defined dataflow from YAML (``name``, ``description``, ``rules``)."""
    data = read_yaml(path)
    try:
        return Dataflow(**data) if isinstance(data, dict) else Dataflow(name="", rules=data)
    except (ValidationError, TypeError) as exc:
        message = (
            validation_message(exc, Dataflow) if isinstance(exc, ValidationError) else str(exc)
        )
        raise MagnetError(message, source=str(path)) from None


__all__ = ["DIMS", "Dataflow", "Rule", "load_dataflow"]
