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
  (MAGNet's "local" stationarity in the collectors),
* ``optional``: the mapping may leave the level unused (a collector the mapper bypasses): the
  mapspace then also holds every mapping of the design without the level (``without_levels``).

A dataflow's ``includes`` are dataflows whose mapspaces its own contains (``free`` includes
every named dataflow of its template): the mapper searches each of them as well, so the best
mapping of a dataflow is never worse than the best of one it includes. A random search over a
large mapspace covers the small, structured regions the named dataflows describe poorly (a
K=512, C=256, 28x28, 3x3 layer of a MAGNet-like design, magnet.yaml's mapper options: ``free``
8 % above ``os-local-ws`` before ``includes``), and ``free`` could not bypass a collector as
``os`` and ``ws`` do. A level a dataflow leaves unused (``unused_levels``) is searched as
absent, so that the design with it searches as the design without it.

Templates define their named dataflows with these rules (``magnet.templates``); a user writes
the same rules in YAML (``load_dataflow``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator

from magnet.arch.spec import Arch, StorageLevel
from magnet.arguments import Name, checked_call
from magnet.errors import MagnetError, validation_message
from magnet.files import read_yaml
from magnet.strict import Strict
from magnet.workload.dims import DIMS, OPERANDS, parse_dim, parse_factors, parse_operand


def _dims(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [c for c in value if c.strip() and c not in ",;"]
    return tuple(parse_dim(str(v)).name for v in value)


class Rule(Strict):
    """Constraints on one storage level (see the module docstring)."""

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
    optional: bool = False

    def merged(self, other: Rule) -> Rule:
        """This rule with the fields ``other`` sets (a template's hardware rule with a
        dataflow's rule for the same level)."""
        return self.model_copy(update=other.model_dump(exclude_unset=True, exclude={"level"}))

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
        if self.optional:
            parts.append("may be left unused")
        return " | ".join(parts)

    @property
    def spatial(self) -> dict[str, Any]:
        """The fields that constrain the fan-out below the level (set ones only)."""
        return {
            k: v
            for k, v in self.model_dump(exclude_unset=True).items()
            if k in ("spatial_x", "spatial_y", "spatial_factors")
        }


class Dataflow(Strict):
    """A named set of rules."""

    name: str
    description: str = ""
    rules: tuple[Rule, ...] = ()
    includes: tuple[Dataflow, ...] = ()

    @field_validator("rules")
    @classmethod
    def _one_rule_per_level(cls, rules: tuple[Rule, ...]) -> tuple[Rule, ...]:
        first: dict[str, int] = {}  # level -> number of its first rule
        for number, rule in enumerate(rules, 1):
            if rule.level in first:
                raise ValueError(
                    f"rules {first[rule.level]} and {number} are both for level {rule.level!r}; "
                    "give one rule per level (with all its constraints)"
                )
            first[rule.level] = number
        return rules

    def rule(self, level: str) -> Rule | None:
        """The rule of the level called ``level``, None when the dataflow has none."""
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
        for flow in self.includes:
            flow.check(arch, source)

    @property
    def optional_levels(self) -> tuple[str, ...]:
        """Levels the mapping may leave unused (``Rule.optional``)."""
        return tuple(r.level for r in self.rules if r.optional)

    @property
    def unused_levels(self) -> tuple[str, ...]:
        """Levels the dataflow leaves unused: they keep nothing and run no loops (``os``'s
        weight collector)."""
        return tuple(r.level for r in self.rules if r.keep == () and r.temporal == ())

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
        if self.includes:
            names = ", ".join(f.name for f in self.includes)
            lines.append(f"  (also searched: the mapspaces of {names})")
        return "\n".join(lines)


def without_levels(arch: Arch, flow: Dataflow, names: tuple[str, ...]) -> tuple[Arch, Dataflow]:
    """``arch`` without the storage levels ``names``, and ``flow``'s rules on it.

    A level removed passes data straight through: its parent then feeds its children, over the
    one fan-out of the two that spreads data (the other must be one to one), with that fan-out's
    topology and dataflow rules. The result is the design without the level (a MAGNet collector
    of depth 0), so that a mapping of it is a mapping of ``arch`` that leaves the level unused.
    ``flow``'s ``includes`` are dropped (they are searched on ``arch`` itself).
    """
    inner = list(arch.inner_first)
    fanouts = list(arch.fanouts)
    rules = {r.level: r for r in flow.rules}
    keep = [i for i, lvl in enumerate(inner) if lvl.name not in names]
    pipeline = set(arch.pipeline.registers.values()) if arch.pipeline is not None else set()
    for name in names:
        li = arch.level_index(name)
        if li == len(inner) - 1 or name in pipeline:
            raise MagnetError(
                f"level {name!r} cannot be left unused (the outermost level and a systolic "
                "pipeline's registers always hold their data)",
                field="optional",
            )
    levels: list[StorageLevel] = []
    new_rules: dict[str, Rule] = {}
    below = -1  # the kept level below the current one (-1: the MACs)
    for i in keep:
        lvl, rule = inner[i], rules.get(inner[i].name)
        spreading = [j for j in range(below + 1, i + 1) if fanouts[j] != (1, 1)]
        if len(spreading) > 1:
            raise MagnetError(
                f"cannot leave {', '.join(inner[j].name for j in range(below + 1, i))} unused: "
                f"the fan-outs of {', '.join(inner[j].name for j in spreading)} both spread data",
                field="optional",
            )
        source = spreading[0] if spreading else i
        if source != i:  # the fan-out of a removed level below moves up to this one
            lvl = lvl.model_copy(update={"fanout": inner[source].fanout})
            moved = rules.get(inner[source].name)
            fields = rule.model_dump(exclude_unset=True) if rule is not None else {}
            for k in ("spatial_x", "spatial_y", "spatial_factors"):
                fields.pop(k, None)
            fields.update(moved.spatial if moved is not None else {})
            fields["level"] = lvl.name
            rule = Rule(**fields) if len(fields) > 1 else None
        levels.append(lvl)
        if rule is not None:
            new_rules[lvl.name] = rule
        below = i
    reduced = arch.model_copy(update={"levels": tuple(reversed(levels))})
    reduced = Arch.model_validate(reduced.model_dump())  # fresh derived views
    # the design without the levels is one variant: what is left of it is not optional there
    kept = [new_rules[r.level] for r in flow.rules if r.level in new_rules]
    kept += [r for name, r in new_rules.items() if name not in rules]
    rules_out = tuple(r.model_copy(update={"optional": False}) if r.optional else r for r in kept)
    return reduced, flow.model_copy(update={"rules": rules_out, "includes": ()})


@checked_call
def load_dataflow(path: Name | Path) -> Dataflow:
    """A user-defined dataflow from YAML (``name``, ``description``, ``rules``)."""
    data = read_yaml(path)
    try:
        return Dataflow(**data) if isinstance(data, dict) else Dataflow(name="", rules=data)
    except (ValidationError, TypeError) as exc:
        message = (
            validation_message(exc, Dataflow) if isinstance(exc, ValidationError) else str(exc)
        )
        raise MagnetError(message, source=str(path)) from None


__all__ = ["DIMS", "Dataflow", "Rule", "load_dataflow", "without_levels"]
