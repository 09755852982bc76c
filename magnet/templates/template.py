"""What a template is, and the registry that finds templates by name.

A template is one object that owns everything magnet knows about a family of accelerators:

* ``Params``: a pydantic model of its parameters (types, ranges, units, defaults);
* ``build(params) -> Arch``: the level tree, with whatever the evaluator must know (fan-out
  networks, a systolic pipeline) carried by the ``Arch`` itself;
* its named dataflows (``dataflows``, ``dataflow(arch, name)``);
* its presets (published configurations).

Lifecycle: magnet creates each template once (no arguments) when it is registered. ``build``
is called for every design a search proposes, so it must be cheap and pure; ``dataflow`` is
called once per (design, dataflow) pair. A user template subclasses ``Template`` and is
registered with ``register_template`` or offered by an installed distribution under the
entry-point group ``magnet.templates``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import (
    BeforeValidator,
    Field,
    ValidationError,
    field_validator,
)

from magnet.arch.sparse import Format, ZeroAction
from magnet.arch.spec import Arch, ClockGating, Controller, PowerGating
from magnet.arguments import checked_call
from magnet.cost.operating_point import ClockReference, OperatingPoint, resolve
from magnet.cost.tables import load_dram_table
from magnet.dataflow import Dataflow
from magnet.errors import (
    DesignInfeasible,
    MagnetError,
    validation_message,
)
from magnet.registry import REGISTERED, Registry, plugin_errors
from magnet.strict import Strict
from magnet.units import Real, Whole, parse_bytes, real_number

ENTRY_POINT_GROUP = "magnet.templates"
#: Largest buffer a template accepts (bytes): 1 GiB of on-chip storage is already far past
#: any accelerator; a bigger number is a typo.
MAX_BUFFER_BYTES = 2**30
#: Largest DRAM bandwidth a template accepts (GB/s): 100 TB/s, far past any memory system.
MAX_DRAM_GB_PER_S = 100_000
#: The DRAM technologies (``magnet/cost/tables/dram.yaml``).
_DRAM = load_dram_table()


#: Simba's chiplet at its top point: 4.01 TOPS / (1024 MACs x 2 ops) = 1.96 GHz (Simba,
#: VLSI 2019 / JSSC 2020), at 16 nm's highest supply (1.0 V, an assumption: the voltage of
#: that point is not published; ``tables/scaling.yaml``).
SIMBA_CLOCK = ClockReference(
    technology_nm=16.0,
    voltage_v=1.0,
    clock_ghz=1.96,
    source="Simba chiplet: 4.01 TOPS / 2048 ops per cycle = 1.96 GHz; 1.0 V assumed",
)


def _size(value: Any) -> int:
    """A buffer size in bytes (a number, or a string such as ``32KiB``) in (0, 1 GiB]."""
    size = parse_bytes(value)
    if size <= 0:
        raise ValueError(f"a buffer size must be > 0, got {value!r}")
    if size > MAX_BUFFER_BYTES:
        raise ValueError(f"{value!r} is above the 1 GiB limit for on-chip storage")
    return size


#: Sizes in bytes, written as numbers or strings such as ``"32KiB"``.
Bytes = Annotated[int, BeforeValidator(_size, json_schema_input_type=int | str)]
#: Whole numbers only (``true`` or ``8.0`` are refused, not read as 1 or 8): ``units.Whole``.
Int = Whole


def _gb_per_s(value: Any) -> float | str | None:
    """A DRAM bandwidth as written: GB/s in (0, ``MAX_DRAM_GB_PER_S``], ``stall-free`` or None."""
    if value is None or value == "stall-free":
        return None if value is None else "stall-free"
    try:
        number = real_number(value)
    except ValueError:
        number = None
    if number is None or not 0 < number <= MAX_DRAM_GB_PER_S:
        raise ValueError(
            f"expected GB/s > 0 and <= {MAX_DRAM_GB_PER_S}, 'stall-free' or null, got {value!r}"
        )
    return number


#: A DRAM bandwidth in GB/s, ``"stall-free"`` (unlimited) or None (from the technology).
DramBandwidth = Annotated[
    float | Literal["stall-free"] | None,
    BeforeValidator(_gb_per_s, json_schema_input_type=float | Literal["stall-free"] | None),
]


class TemplateParams(Strict):
    """Parameters every template has: the clock, the node, the supply, gating and the DRAM."""

    clock_ghz: Real = Field(
        1.0,
        gt=0,
        le=100,
        description="clock [GHz]; alone: runs at the lowest supply that meets it",
    )
    technology_nm: Real = Field(45.0, ge=5, le=65, description="technology node [nm]")
    voltage_v: Real | None = Field(
        None,
        gt=0,
        le=2,
        description="supply [V]; alone: the clock is fmax at it; with clock_ghz: checked",
    )
    power_gating: PowerGating = Field(
        "none",
        description="none: every instance leaks for the whole run; idle-units: only the "
        "instances a layer uses leak, each woken once per layer",
    )
    clock_gating: ClockGating = Field(
        "fine",
        description="none: every register clocked every cycle; idle-units: those of the "
        "instances in use; fine: a register only on the cycles it loads (synthesis-inserted "
        "gating cells, which with the clock tree's trunk run every cycle)",
    )
    controller: Controller = Field(
        "none",
        description="a control processor per chip: none, or risc-v (area of a Rocket core "
        "at the node, cost/tables/area.yaml)",
    )
    # the memory system (magnet/cost/tables/dram.yaml): one bandwidth, channels x technology
    # unless dram_bandwidth overrides it
    dram_technology: str = Field(
        _DRAM.default,
        description=f"DRAM technology ({', '.join(_DRAM.technologies)}): energy per bit and "
        f"bandwidth per channel from cost/tables/dram.yaml; default {_DRAM.default} (its "
        "energy is a quoted figure [PQ])",
    )
    dram_channels: Int | None = Field(
        None,
        ge=1,
        le=64,
        description="DRAM channels (HBM: stacks); bandwidth = channels x the technology's "
        "channel bandwidth (None: the technology's default, a 64-bit interface or one stack)",
    )
    dram_bandwidth: DramBandwidth = Field(
        None,
        description="DRAM bandwidth [GB/s] overriding channels x technology; 'stall-free': "
        "unlimited (SCALE-Sim's stall-free interface); None: from the technology",
    )
    # zeros (magnet.arch.sparse): what the design does with zero weights and activations
    zeros: ZeroAction = Field(
        "none",
        description="the MACs on a zero operand (zeros_on): none; gating (the multiply, the "
        "weight read feeding it and the partial-sum update are not done: energy saved, "
        "cycles kept); skipping (their cycles saved too, the lanes of a vector unit or "
        "systolic array stepping together)",
    )
    zeros_on: Literal["weights", "inputs", "both"] = Field(
        "both", description="whose zeros the MACs gate or skip on"
    )
    dram_format: Format = Field(
        "uncompressed",
        description="format of activations (inputs, outputs) in DRAM: uncompressed, bitmask, "
        "rle (run-length), cp (coordinates) or csr; compressed DRAM traffic",
    )
    weight_format: Format = Field(
        "uncompressed",
        description="format of weights in DRAM and in every on-chip level keeping them "
        "(compressed storage: more weights fit, fewer words move)",
    )
    metadata_bits: Int | None = Field(
        None,
        ge=0,
        le=64,
        description="metadata bits of a compressed format (a run, a coordinate; None: the "
        "format's default, magnet.arch.sparse)",
    )

    @field_validator("dram_technology")
    @classmethod
    def _known_dram(cls, value: str) -> str:
        if value not in _DRAM.technologies:
            raise ValueError(f"unknown DRAM technology; allowed: {', '.join(_DRAM.technologies)}")
        return value

    @property
    def dram_gb_per_s(self) -> float | None:
        """The DRAM bandwidth in GB/s (None: stall-free): ``dram_bandwidth`` when given, else
        ``dram_channels`` (default: the technology's) x the technology's channel bandwidth."""
        if self.dram_bandwidth == "stall-free":
            return None
        if self.dram_bandwidth is not None:
            return float(self.dram_bandwidth)
        tech = _DRAM.technologies[self.dram_technology]
        channels = self.dram_channels or tech.default_channels.value
        return channels * tech.channel_bandwidth_gb_per_s.value


#: A template's own parameter model (``Template.Params``).
ParamsT = TypeVar("ParamsT", bound=TemplateParams)


class Template(ABC, Generic[ParamsT]):
    """Base class of every template (see the module docstring for when magnet calls what).

    Generic in its parameter model: ``class Simba(Template[SimbaParams])`` types the ``p``
    that ``assemble`` receives (``build`` validates it with ``Params`` first)."""

    #: Name used in YAML (``template: NAME``) and on the command line.
    name: ClassVar[str]
    #: One line for listings.
    description: ClassVar[str] = ""
    #: The parameter model.
    Params: type[ParamsT]
    #: Named dataflows: name -> one-line description (``dataflow`` builds them).
    dataflows: ClassVar[dict[str, str]] = {}
    #: Published configurations: preset name -> parameters.
    presets: ClassVar[dict[str, dict[str, Any]]] = {}
    #: Parameters on which every named dataflow can run (``magnet dataflows`` shows them).
    showcase: ClassVar[dict[str, Any]] = {}
    #: The critical path: a published (node, supply, clock) of the chip the template
    #: follows (``magnet.cost.operating_point``). Templates without silicon of their own
    #: take Simba's MAC pipeline (an assumption they state in their docstring).
    clock_reference: ClassVar[ClockReference] = SIMBA_CLOCK

    @checked_call
    def params(
        self, values: Mapping[str, Any] | TemplateParams | None = None, *, source: str | None = None
    ) -> ParamsT:
        """Validated parameters; errors name the source, the field and what is allowed."""
        if isinstance(values, self.Params):
            return values
        try:
            checking = "checking its parameters"
            with plugin_errors("template", self, checking, passthrough=(ValueError, TypeError)):
                return self.Params(**dict(values or {}))
        except ValidationError as exc:
            raise MagnetError(
                validation_message(exc, self.Params), source=source or f"template {self.name}"
            ) from None
        except TypeError as exc:
            raise MagnetError(str(exc), source=source or f"template {self.name}") from None

    @checked_call
    def build(
        self,
        values: Mapping[str, Any] | TemplateParams | None = None,
        *,
        name: str | None = None,
        source: str | None = None,
    ) -> Arch:
        """The architecture for these parameters (defaults for the ones not given), at the
        operating point they give (``operating_point``); ``DesignInfeasible`` when the
        node cannot run it."""
        p = self.params(values, source=source)
        try:
            with plugin_errors("template", self, "finding the operating point of a design"):
                point = self.operating_point(p)
        except DesignInfeasible as exc:  # name where the design came from
            where = source or f"template {self.name}"
            raise DesignInfeasible(exc.message, source=where, field=exc.field) from None
        at_point = p.model_copy(update={"clock_ghz": point.clock_ghz, "voltage_v": point.voltage_v})
        with plugin_errors("template", self, f"assembling design {name or self.name!r}"):
            arch = self.assemble(at_point, name or self.name)
        return arch.model_copy(update={"template": self.name, "params": p.model_dump(mode="json")})

    def operating_point(self, p: TemplateParams) -> OperatingPoint:
        """The supply and clock of a design: a clock given alone (or the default clock
        when no supply is given) runs at the lowest supply that meets it; a supply alone
        runs at fmax of that supply; both given are checked against each other."""
        clock_given = "clock_ghz" in p.model_fields_set or p.voltage_v is None
        return resolve(
            p.technology_nm,
            self.clock_reference,
            clock_ghz=p.clock_ghz if clock_given else None,
            voltage_v=p.voltage_v,
        )

    @abstractmethod
    def assemble(self, p: ParamsT, name: str) -> Arch:
        """The level tree for validated parameters ``p`` (``build`` records the rest)."""

    @abstractmethod
    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        """The named dataflow ``name`` on ``arch`` (an architecture this template built).

        Raise ``MagnetError`` for a name the template does not define and
        ``DesignInfeasible`` when this design cannot run it (a missing collector).
        """

    def refuse(self, name: str, reason: str | None = None) -> MagnetError:
        """The error for a dataflow this template does not define."""
        homes = [t.name for t in templates().values() if name in t.dataflows and t is not self]
        if reason is None and homes:
            reason = f"it is defined for the {' and '.join(homes)} template"
        why = f": {reason}" if reason else ""
        return MagnetError(
            f"the {self.name} template cannot express dataflow {name!r}{why}; "
            f"allowed: {', '.join(self.dataflows)}",
            field="--dataflow",
        )

    def parameter_table(self) -> list[dict[str, Any]]:
        """name, type, default, range and description of every parameter (for listings)."""
        rows = []
        for key, info in self.Params.model_fields.items():
            bounds = []
            for meta in info.metadata:
                for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                    if getattr(meta, attr, None) is not None:
                        bounds.append(f"{sign} {getattr(meta, attr)}")
            annotation = getattr(info.annotation, "__name__", str(info.annotation))
            rows.append(
                {
                    "name": key,
                    "type": annotation.replace("typing.", ""),
                    "default": info.default,
                    "range": ", ".join(bounds),
                    "description": info.description or "",
                }
            )
        return rows


@checked_call
def template_dataflow(template: Template[Any], arch: Arch, name: str) -> Dataflow:
    """``template.dataflow(arch, name)``, as magnet asks it: an exception in a plug-in
    template's code is a ``PluginError`` (``plugin_errors``)."""
    with plugin_errors("template", template, f"building dataflow {name!r} on {arch.name!r}"):
        return template.dataflow(arch, name)


# ---- the registry --------------------------------------------------------------------------
def _adopt(name: str, template: Any, origin: str) -> str:
    """A built-in template or an installed one (``magnet.registry.Adopt``), registered by its
    own ``name``."""
    return _register(template, origin=origin).name


#: Templates by name (``magnet.registry``): the built-ins (``magnet.templates.BUILTIN``), then
#: those installed distributions offer, and names registered from Python; each entry's object
#: is the template instance.
TEMPLATES = Registry("template", "magnet.templates", _adopt, entry_points=ENTRY_POINT_GROUP)


@checked_call
def register_template(template: Template[Any] | type[Template[Any]]) -> Template[Any]:
    """Make a template available by its ``name`` (YAML ``template:``, ``--arch NAME``); a
    name registered before from Python is replaced (a notebook cell run again)."""
    return _register(template, origin=REGISTERED)


def _register(template: Template[Any] | type[Template[Any]], *, origin: str) -> Template[Any]:
    missing = sorted(getattr(template, "__abstractmethods__", ()))
    if isinstance(template, type) and missing:
        raise MagnetError(
            f"template class {template.__qualname__} does not implement {', '.join(missing)}; "
            "a template defines assemble(p, name) and dataflow(arch, name)"
        )
    if isinstance(template, type) and issubclass(template, Template):
        with plugin_errors("template", template, "being built"):
            template = template()
    if not isinstance(template, Template):
        raise MagnetError(f"{template!r} is not a magnet.templates.Template")
    obj = template
    if not isinstance(getattr(obj, "name", None), str) or not obj.name:
        raise MagnetError(f"template {type(obj).__name__}: its 'name' must be a non-empty string")
    for other in TEMPLATES.entries().values():
        clash = sorted(set(other.obj.presets) & set(obj.presets))
        if other.name != obj.name and clash:
            raise MagnetError(
                f"template {obj.name!r}: preset name(s) {', '.join(clash)} already taken by "
                f"the {other.origin} template {other.name!r}; choose other names"
            )
    TEMPLATES.add(obj.name, obj, origin=origin, description=obj.description)
    return obj


@checked_call
def unregister_template(name: str) -> None:
    """Remove a template registered from Python (the built-ins stay)."""
    TEMPLATES.remove(name)


def templates() -> dict[str, Template[Any]]:
    """Every registered template by name."""
    return {name: entry.obj for name, entry in TEMPLATES.entries().items()}


@checked_call
def get_template(name: str, source: str | None = None) -> Template[Any]:
    """The template called ``name``; an unknown name lists the known ones."""
    found = templates().get(name)
    if found is None:
        raise MagnetError(
            f"unknown template {name!r}; allowed: {', '.join(templates())}",
            source=source,
            field="template",
        )
    return found


def presets() -> dict[str, tuple[Template[Any], dict[str, Any]]]:
    """Every preset: name -> (template, parameters)."""
    return {p: (t, params) for t in templates().values() for p, params in t.presets.items()}
