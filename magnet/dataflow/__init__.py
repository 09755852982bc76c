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

Named dataflows (``dataflow_for``) are defined per template; ``free`` is the template's
hardware rules alone. A dataflow the template cannot express is refused with the reason.
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

    @field_validator("temporal", "order", "spatial_x", "spatial_y", mode="before")
    @classmethod
    def _dim_list(cls, value: Any) -> tuple[str, ...] | None:
        return _dims(value)

    @field_validator("factors", "spatial_factors", mode="before")
    @classmethod
    def _factor_map(cls, value: Any) -> dict[str, int]:
        return parse_factors(value)

    @field_validator("keep", mode="before")
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


# ---- named dataflows per template ---------------------------------------------------------

_PIXELS = ("N", "P", "Q")
_WINDOW = ("C", "R", "S")


def _simba(arch: Arch, name: str) -> Dataflow:
    levels = {lvl.name for lvl in arch.levels}
    innermost = arch.inner_first[0].name
    hardware = [
        # a vector MAC is a dot product over C; vector units split K; PEs split K, C or pixels
        Rule(level=innermost, spatial_x=("C",), spatial_y=()),
        Rule(level="AccumulationBuffer", spatial_x=("K",), spatial_y=()),
        Rule(
            level="GlobalBuffer",
            spatial_x=("K", "C", "P", "Q", "N"),
            spatial_y=("K", "C", "P", "Q", "N"),
        ),
    ]
    wanted = {
        "free": ([], "MAGNet/Simba hardware rules only"),
        "ws": ([("WeightBuffer", "weights")], "weight-stationary in the PE weight buffer"),
        "os": (
            [("AccumulationBuffer", "outputs")],
            "output-stationary in the PE accumulation buffer",
        ),
        "is": ([("InputBuffer", "inputs")], "input-stationary in the PE input buffer"),
        "ws-local-os": (
            [("WeightBuffer", "weights"), ("AccumulationCollector", "outputs:reuse")],
            "weight-stationary at the PE buffers, output-stationary in the "
            "accumulation collector (MAGNet WS-LocalOS)",
        ),
        "os-local-ws": (
            [("AccumulationBuffer", "outputs"), ("WeightCollector", "weights:reuse")],
            "output-stationary at the accumulation buffer, weight-stationary in "
            "the weight collector (MAGNet OS-LocalWS)",
        ),
    }
    if name not in wanted:
        _refuse(
            arch,
            name,
            wanted,
            "rs needs per-PE filter/ifmap/psum scratchpads feeding one "
            "MAC each (the eyeriss template)"
            if name == "rs"
            else None,
        )
    stationary, description = wanted[name]
    for level, _spec in stationary:
        if level not in levels:
            knob = {
                "AccumulationCollector": "accum_collector",
                "WeightCollector": "weight_collector",
            }[level]
            raise MagnetError(
                f"dataflow {name!r} keeps data stationary in the {level}, which this design "
                f"does not have ({knob}: 0); give it a depth > 0",
                field="--dataflow",
            )
    rules = _with_stationary(hardware, stationary)
    return Dataflow(name=name, description=description, rules=tuple(rules))


def _eyeriss(arch: Arch, name: str) -> Dataflow:
    pe_array = "GlobalBuffer"
    definitions = {
        # Row-stationary (Eyeriss ISCA 2016; Timeloop's eyeriss_like constraints): a PE runs a
        # 1-D row convolution: psum spad loops over K only, weight spad over C and R, ifmap spad
        # none; PE rows take filter rows S (and C, K), PE columns output rows Q (and K).
        "rs": (
            "row-stationary (Eyeriss)",
            [
                Rule(level="PsumSpad", temporal=("K",)),
                Rule(level="WeightSpad", temporal=("C", "R")),
                Rule(level="IfmapSpad", temporal=()),
                Rule(level=pe_array, spatial_x=("Q", "K"), spatial_y=("S", "C", "K")),
            ],
        ),
        # Weight-stationary (Eyeriss's WS baseline, ISCA 2016 Sec. V): weights stay in the
        # PE; input pixels are broadcast to the PEs and partial sums accumulate across the
        # array, so neither is stored in the PE (ifmap and psum spads bypassed); PEs split K, C.
        "ws": (
            "weight-stationary: weights stay in the PE weight spad",
            [
                Rule(level="PsumSpad", keep=(), temporal=()),
                Rule(level="IfmapSpad", keep=(), temporal=()),
                Rule(level="WeightSpad", stationary=("weights",)),
                Rule(level=pe_array, spatial_x=("K",), spatial_y=("C", "K")),
            ],
        ),
        # Output-stationary (Eyeriss's OS baseline): each PE accumulates its outputs in the psum
        # spad; weights and input pixels stream through the array (weight and ifmap spads
        # bypassed); PEs split the output pixels (and K).
        "os": (
            "output-stationary: outputs accumulate in the PE psum spad",
            [
                Rule(level="PsumSpad", stationary=("outputs",)),
                Rule(level="WeightSpad", keep=(), temporal=()),
                Rule(level="IfmapSpad", keep=(), temporal=()),
                Rule(level=pe_array, spatial_x=("Q", "P", "N"), spatial_y=("P", "Q", "K")),
            ],
        ),
        "free": ("no rules", []),
    }
    if name not in definitions:
        _refuse(arch, name, definitions, None)
    description, rules = definitions[name]
    return Dataflow(name=name, description=description, rules=tuple(rules))


def _systolic(arch: Arch, name: str) -> Dataflow:
    # SCALE-Sim's GEMM view (../shared/reference/README.md): pixels N/P/Q, filters K, window
    # C/R/S. Each PE keeps one word of the stationary operand in its register; the others pass.
    regs = {"os": "OutputReg", "ws": "WeightReg", "is": "InputReg"}
    operand = {"os": "outputs", "ws": "weights", "is": "inputs"}
    rows, cols, streamed = {
        "os": (_PIXELS, ("K",), _WINDOW),
        "ws": (_WINDOW, ("K",), _PIXELS),
        "is": (_WINDOW, _PIXELS, ("K",)),
    }.get(name, (None, None, None))
    if rows is None:
        _refuse(arch, name, regs, None)
    rules = [Rule(level="OfmapSRAM", spatial_x=cols, spatial_y=rows)]
    for kind, reg in regs.items():
        if kind == name:
            rules.append(
                Rule(
                    level=reg, keep=(operand[kind],), temporal=streamed, stationary=(operand[kind],)
                )
            )
        else:
            rules.append(Rule(level=reg, keep=(), temporal=()))
    description = {
        "os": "output-stationary (SCALE-Sim os)",
        "ws": "weight-stationary (SCALE-Sim ws)",
        "is": "input-stationary (SCALE-Sim is)",
    }[name]
    return Dataflow(name=name, description=description, rules=tuple(rules))


_TEMPLATES = {"simba": _simba, "eyeriss": _eyeriss, "systolic": _systolic}
NAMED = {
    "simba": ("free", "ws", "os", "is", "ws-local-os", "os-local-ws"),
    "eyeriss": ("free", "rs", "ws", "os"),
    "systolic": ("os", "ws", "is"),
}


def _refuse(arch: Arch, name: str, known: Any, reason: str | None) -> None:
    if reason is None:
        homes = [t for t, names in NAMED.items() if name in names and t != arch.template]
        if homes:
            reason = f"it is defined for the {' and '.join(homes)} template"
        if name in ("ws-local-os", "os-local-ws"):
            reason = "a MAGNet hybrid needs weight / accumulation collectors (simba template)"
    why = f": {reason}" if reason else ""
    raise MagnetError(
        f"the {arch.template} template cannot express dataflow {name!r}{why}; "
        f"allowed: {', '.join(known)}",
        field="--dataflow",
    )


def _with_stationary(rules: list[Rule], stationary: list[tuple[str, str]]) -> list[Rule]:
    out = {r.level: r.model_dump(exclude_unset=True) for r in rules}
    for level, spec in stationary:
        operand, _, kind = spec.partition(":")
        key = "reuse" if kind == "reuse" else "stationary"
        entry = out.setdefault(level, {"level": level})
        entry[key] = (*entry.get(key, ()), operand)
    return [Rule(**data) for data in out.values()]


def dataflow_for(arch: Arch, spec: str | Dataflow | None) -> Dataflow:
    """A named dataflow of ``arch``'s template, a YAML file, or ``free`` when None."""
    if isinstance(spec, Dataflow):
        spec.check(arch)
        return spec
    name = "free" if spec is None else str(spec)
    if name.endswith((".yaml", ".yml")) or Path(name).is_file():
        flow = load_dataflow(name)
        flow.check(arch, name)
        return flow
    if arch.template in _TEMPLATES:
        return _TEMPLATES[arch.template](arch, name)
    if name == "free":
        return Dataflow(name="free", description="no rules")
    raise MagnetError(
        f"named dataflows need a template architecture; {arch.name!r} is an explicit tree: "
        "use 'free' or a dataflow YAML file",
        field="--dataflow",
    )


__all__ = ["DIMS", "NAMED", "Dataflow", "Rule", "dataflow_for", "load_dataflow"]
