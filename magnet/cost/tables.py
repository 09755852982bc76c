"""The built-in technology cost tables: Horowitz's 45 nm numbers, scaled to 65, 32, 16, 7 and
5 nm.

``tables/horowitz45.yaml`` prices every component class of ``ACTIONS`` at 45 nm;
``tables/scaling.yaml`` holds per-node factors for dynamic energy, wire energy, leakage and
area; ``tables/area.yaml`` holds area at 16, 7 and 5 nm from published silicon (SRAM macros
by capacity, arithmetic and flip-flop area over the 45 nm table's, a control core), which
replaces the scaled 45 nm areas there. ``tables/README.md`` gives the sources, the SRAM fit
and its error.

How a component is priced (45 nm; other nodes multiply by the node's factors):

- ``mac``: multiply at ``bits`` + add at ``accum_bits`` for ``datatype`` "int" or "float"
  (defaults: int, 8 bits, 32-bit accumulator). Widths between table rows are interpolated
  as a power law between the neighbouring rows; widths outside the rows are refused.
- ``sram``: one access reads or writes ``width_bits`` (else ``word_bits``) of one bank of
  ``capacity_bits / banks``: ``e0 * (bank_bytes / 8192) ** alpha * (width_bits / 64) ** beta``.
- ``regfile`` (at most 1 KiB): a constant energy per bit accessed.
- ``dram``: a constant energy per bit accessed that does not scale with the node; no area.
  The component's ``dram_technology`` attribute (every template sets one) picks the row of
  ``tables/dram.yaml``; a DRAM without it is ``horowitz45.yaml``'s generic DRAM.
- ``noc``: ``word_bits`` x energy per bit per mm x ``hop_mm`` (table default if absent).
- ``link`` (a package's chip-to-chip link): one bit over one hop at the component's own
  ``pj_per_bit``, else its ``technology``'s row of ``tables/links.yaml``; like DRAM, it does
  not scale with the node (the link's own supply); no area, leakage or clock.
- ``dummy``: zero.

Leakage is a power (mW per instance) at the node's nominal supply. Nodes between the table's
(5..65 nm) get factors interpolated log-linearly (ln factor linear in ln node) between the
two nearest; other nodes raise ``MagnetError``. ``scaling.yaml`` also gives each node's
supply range and speed (``magnet.cost.operating_point``).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from magnet.cost.contract import (
    ACTIONS,
    OVERHEAD_KINDS,
    AdderComponent,
    ClockGateComponent,
    Component,
    CostModel,
    DramComponent,
    DummyComponent,
    LinkComponent,
    MacComponent,
    NocLinkComponent,
    OverheadComponent,
    PowerGateComponent,
    RegfileComponent,
    RouterComponent,
    SramComponent,
    typed_component,
)
from magnet.errors import MagnetError
from magnet.files import read_yaml
from magnet.strict import Strict

#: Folder of the built-in tables (shipped inside the package).
TABLE_DIR: Path = Path(__file__).resolve().parent / "tables"
TECHNOLOGY_TABLE = TABLE_DIR / "horowitz45.yaml"
SCALING_TABLE = TABLE_DIR / "scaling.yaml"
DRAM_TABLE = TABLE_DIR / "dram.yaml"
LINK_TABLE = TABLE_DIR / "links.yaml"
AREA_TABLE = TABLE_DIR / "area.yaml"

_BITS_PER_BYTE = 8
DATATYPES = ("int", "float")


# ---- table schema ------------------------------------------------------------------------


class _Provenance(Strict):
    """Where a number comes from: exactly one of source, derived, assumption (+ reason)."""

    source: str | None = Field(None, min_length=1)
    derived: str | None = Field(None, min_length=1)
    assumption: bool = False
    reason: str | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_provenance(self) -> _Provenance:
        given = [self.source is not None, self.derived is not None, self.assumption]
        if sum(given) != 1:
            raise ValueError(
                "give exactly one of 'source: <publication>', 'derived: <how>' or "
                "'assumption: true' with 'reason: <one line>'"
            )
        if self.assumption != (self.reason is not None):
            raise ValueError("'assumption: true' needs a 'reason:' (and 'reason:' needs it)")
        return self


class Number(_Provenance):
    """A non-negative number with its provenance."""

    value: float = Field(ge=0)


class OperationRow(_Provenance):
    """One arithmetic operation at one width (Horowitz's table rows)."""

    bits: int = Field(ge=1)
    energy_pj: float = Field(gt=0)
    area_um2: float = Field(gt=0)


def _rows_by_bits(rows: list[OperationRow]) -> list[OperationRow]:
    """Rows sorted by width; each width once, at least one row."""
    widths = [row.bits for row in rows]
    if not rows:
        raise ValueError("needs at least one row")
    if len(set(widths)) != len(widths):
        raise ValueError(f"a width is listed twice: {widths}")
    return sorted(rows, key=lambda row: row.bits)


class MacTable(Strict):
    """Arithmetic at the table's node: multiply and add rows (int and float), the bf16
    ratios and the leakage of logic per um^2."""

    int_multiply: list[OperationRow]
    int_add: list[OperationRow]
    float_multiply: list[OperationRow]
    float_add: list[OperationRow]
    bf16_over_fp16_multiply: Number
    bf16_over_fp16_add: Number
    leakage_mw_per_um2: Number

    _sorted = field_validator("int_multiply", "int_add", "float_multiply", "float_add")(
        _rows_by_bits
    )


class PublishedRead(_Provenance):
    """A published SRAM read energy the fit is checked against."""

    capacity_bytes: int = Field(gt=0)
    width_bits: int = Field(gt=0)
    energy_pj: float = Field(gt=0)


class FitCheck(Strict):
    """How far the SRAM fit lands from one published read."""

    capacity_bytes: int = Field(gt=0)
    published_pj: float = Field(gt=0)
    fitted_pj: float = Field(gt=0)
    error_percent: float


class SramFit(Strict):
    """The SRAM energy fit: ``e0 * (bank / reference) ** alpha * (width / reference) ** beta``."""

    reference_capacity_bytes: int = Field(gt=0)
    reference_width_bits: int = Field(gt=0)
    e0_pj: Number
    alpha: Number
    beta: Number
    check: list[FitCheck]


class SramTable(Strict):
    """SRAM macros: the published reads, the fit, write / read, leakage, cell area and
    array efficiency."""

    published_reads: list[PublishedRead] = Field(min_length=2)
    fit: SramFit
    write_over_read: Number
    leakage_mw_per_bit: Number
    bitcell_area_um2: Number
    array_efficiency: Number

    @model_validator(mode="after")
    def _efficiency(self) -> SramTable:
        if not 0 < self.array_efficiency.value <= 1:
            raise ValueError("array_efficiency.value must be in (0, 1]")
        return self


class RegfileTable(Strict):
    """Register files (up to ``max_capacity_bits``): energy per bit, decoder, area, leakage."""

    max_capacity_bits: Number
    energy_pj_per_bit: Number
    decoder_pj: Number
    write_over_read: Number
    area_um2_per_bit: Number
    leakage_mw_per_bit: Number


class ClockTable(Strict):
    """Clock energy per clocked bit per cycle and the share the clock tree adds; a clock-
    gating cell's clock energy per cycle and area; the energy that wakes a power-gated
    domain, per um^2 of it."""

    energy_pj_per_bit_per_cycle: Number
    distribution_over_leaves: Number
    gate_energy_pj_per_cycle: Number
    gate_area_um2: Number
    wake_pj_per_um2: Number


class DramTable(Strict):
    """The generic DRAM (an explicit level tree without ``dram_technology``)."""

    energy_pj_per_bit: Number
    write_over_read: Number


class DramTechnology(Strict):
    """One DRAM technology of ``dram.yaml``: energy per bit moved, bandwidth per channel."""

    description: str = Field(min_length=1)
    energy_pj_per_bit: Number
    channel_bandwidth_gb_per_s: Number
    default_channels: Number

    @model_validator(mode="after")
    def _whole_channels(self) -> DramTechnology:
        channels = self.default_channels.value
        if channels < 1 or channels != int(channels):
            raise ValueError(f"default_channels must be a whole number >= 1, got {channels:g}")
        return self


class DramTechnologyTable(Strict):
    """``dram.yaml``: the DRAM technologies a template's ``dram_technology`` names."""

    default: str
    write_over_read: Number
    technologies: dict[str, DramTechnology] = Field(min_length=1)

    @model_validator(mode="after")
    def _default_is_listed(self) -> DramTechnologyTable:
        if self.default not in self.technologies:
            raise ValueError(
                f"default {self.default!r} is not a technology; allowed: "
                f"{', '.join(self.technologies)}"
            )
        return self


class LinkTechnology(Strict):
    """One chip-to-chip link technology of ``links.yaml``: its energy per bit per hop."""

    description: str = Field(min_length=1)
    energy_pj_per_bit: Number


class LinkTechnologyTable(Strict):
    """``links.yaml``: the link technologies a package's ``link`` names."""

    technologies: dict[str, LinkTechnology] = Field(min_length=1)


class NocTable(Strict):
    """On-chip wires (energy per bit-mm, default hop) and a mesh router's area."""

    energy_pj_per_bit_per_mm: Number
    default_hop_mm: Number
    router_area_um2: Number


class OverheadTable(Strict):
    """The chip's parts beyond its components (``OVERHEAD_KINDS``), as shares."""

    clock_tree_per_logic: Number
    logic_utilization: Number
    macro_halo: Number
    control_share: Number
    io_area_um2: Number
    pll_area_um2: Number
    die_to_die_area_um2: Number

    @model_validator(mode="after")
    def _fractions(self) -> OverheadTable:
        if not 0 < self.logic_utilization.value <= 1:
            raise ValueError("logic_utilization must be in (0, 1]")
        if not self.control_share.value < 1:
            raise ValueError("control_share must be below 1")
        return self


class DummyTable(Strict):
    """A dummy level: its (zero) energy, leakage and area."""

    energy_pj: Number
    leakage_mw: Number
    area_um2: Number


class TechnologyTable(Strict):
    """``horowitz45.yaml``: every component class priced at one node."""

    renamed: ClassVar[Mapping[str, str]] = {"network": "noc"}

    name: str = Field(min_length=1)
    technology_nm: float = Field(gt=0)
    vdd_v: Number
    mac: MacTable
    sram: SramTable
    regfile: RegfileTable
    clock: ClockTable
    dram: DramTable
    noc: NocTable
    overhead: OverheadTable
    dummy: DummyTable


class MacroPoint(_Provenance):
    """One published SRAM macro: its capacity and its area (with its periphery)."""

    capacity_bytes: float = Field(gt=0)
    area_um2: float = Field(gt=0)


class MacroTable(_Provenance):
    """A node's SRAM macros (its provenance: why these macros stand for the node), by
    capacity; at least one, each capacity once."""

    points: list[MacroPoint] = Field(min_length=1)

    @field_validator("points")
    @classmethod
    def _by_capacity(cls, points: list[MacroPoint]) -> list[MacroPoint]:
        capacities = [p.capacity_bytes for p in points]
        if len(set(capacities)) != len(capacities):
            raise ValueError(f"a capacity is listed twice: {capacities}")
        return sorted(points, key=lambda p: p.capacity_bytes)


class NodeArea(Strict):
    """Area at one node from published silicon: SRAM macros, and factors on the 45 nm
    table's arithmetic and flip-flop areas."""

    sram_macros: MacroTable
    logic_over_45nm: Number
    register_over_45nm: Number

    @model_validator(mode="after")
    def _positive(self) -> NodeArea:
        for key in ("logic_over_45nm", "register_over_45nm"):
            if getattr(self, key).value <= 0:
                raise ValueError(f"{key}.value must be > 0 (an area factor)")
        return self


class ControllerTable(Strict):
    """A control processor core: its published area and the node it was published at."""

    area_um2: Number
    technology_nm: Number


class AreaTable(Strict):
    """``area.yaml``: area at the nodes where published silicon figures exist."""

    nodes: dict[float, NodeArea]
    controller: ControllerTable


class EnergyPolynomial(_Provenance):
    """Stillmaker & Baas energy fit ``a V^2 + b V + c`` (kept to reproduce the factors)."""

    a_per_v2: float
    b_per_v: float
    c: float


class NodeScaling(Strict):
    """One node of ``scaling.yaml``: supply range, speed and the factors from the
    reference node."""

    vdd_v: Number
    vmin_v: Number
    vmax_v: Number
    vt_v: Number
    delay: Number
    energy_polynomial: EnergyPolynomial | None = None
    dynamic_energy: Number
    wire_energy: Number
    leakage: Number
    area: Number


class ScalingTable(Strict):
    """``scaling.yaml``: factors from the reference node to each table node."""

    reference_node_nm: float = Field(gt=0)
    alpha: Number
    dram_energy: Number
    nodes: dict[float, NodeScaling]

    @model_validator(mode="after")
    def _reference_is_identity(self) -> ScalingTable:
        reference = self.nodes.get(self.reference_node_nm)
        if reference is None:
            raise ValueError(f"nodes must include the reference node {self.reference_node_nm:g}")
        for key in (*_FACTOR_KEYS, "delay"):
            if getattr(reference, key).value != 1.0:
                raise ValueError(f"{key} at the reference node must be 1.0")
        for node, scaling in self.nodes.items():
            if node <= 0 or any(getattr(scaling, key).value <= 0 for key in _POSITIVE_KEYS):
                raise ValueError(f"node {node:g}: nodes, factors and voltages must be > 0")
            vt, vmin, vdd, vmax = (
                getattr(scaling, key).value for key in ("vt_v", "vmin_v", "vdd_v", "vmax_v")
            )
            if not vt < vmin <= vdd <= vmax:
                raise ValueError(
                    f"node {node:g}: needs vt_v < vmin_v <= vdd_v <= vmax_v, got "
                    f"{vt:g} < {vmin:g} <= {vdd:g} <= {vmax:g}"
                )
        return self


_FACTOR_KEYS = ("dynamic_energy", "wire_energy", "leakage", "area")
_POSITIVE_KEYS = (*_FACTOR_KEYS, "delay", "vdd_v", "vmin_v", "vmax_v", "vt_v")


_Table = TypeVar("_Table", bound=BaseModel)


def _load(path: Path, schema: type[_Table]) -> _Table:
    """Read the YAML table at ``path`` and validate it against ``schema``; every problem
    is named in one ``MagnetError`` (the first as its field)."""
    data = read_yaml(path)
    try:
        return schema.model_validate(data)
    except ValidationError as err:
        problems = [
            (".".join(str(part) for part in e["loc"]) or "(top level)", e["msg"])
            for e in err.errors()
        ]
        (field, message), *others = problems
        if others:
            message += "; also " + "; ".join(f"{where}: {msg}" for where, msg in others)
        raise MagnetError(message, source=str(path), field=field) from None


@functools.cache
def load_technology_table(path: Path = TECHNOLOGY_TABLE) -> TechnologyTable:
    """Read and validate a technology table (cached per path)."""
    return _load(path, TechnologyTable)


@functools.cache
def load_scaling_table(path: Path = SCALING_TABLE) -> ScalingTable:
    """Read and validate a scaling table (cached per path)."""
    return _load(path, ScalingTable)


@functools.cache
def load_dram_table(path: Path = DRAM_TABLE) -> DramTechnologyTable:
    """Read and validate the DRAM technology table (cached per path)."""
    return _load(path, DramTechnologyTable)


@functools.cache
def load_link_table(path: Path = LINK_TABLE) -> LinkTechnologyTable:
    """Read and validate the chip-to-chip link table (cached per path)."""
    return _load(path, LinkTechnologyTable)


@functools.cache
def load_area_table(path: Path = AREA_TABLE) -> AreaTable:
    """Read and validate the area table (cached per path)."""
    return _load(path, AreaTable)


# ---- scaling -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ScalingFactors:
    """Multipliers from the reference-node table to one node, and the node's nominal supply."""

    technology_nm: float
    dynamic_energy: float
    wire_energy: float
    leakage: float
    area: float
    dram_energy: float
    vdd_v: float
    vmin_v: float
    vmax_v: float
    vt_v: float
    delay: float
    alpha: float


def scaling_factors(technology_nm: float, scaling: ScalingTable) -> ScalingFactors:
    """Factors at ``technology_nm``: a table row, or log-linear between the two nearest."""
    nodes = sorted(scaling.nodes)
    try:
        node = float(technology_nm)
    except (TypeError, ValueError):
        node = math.nan
    if not (math.isfinite(node) and nodes[0] <= node <= nodes[-1]):
        raise MagnetError(
            f"technology {technology_nm!r} nm is outside the tables; allowed: "
            f"{', '.join(f'{n:g}' for n in reversed(nodes))} nm, or any node between "
            f"{nodes[0]:g} and {nodes[-1]:g} nm (factors interpolated)",
            field="technology_nm",
        )
    i, t = _log_position(nodes, node)

    def factor(key: str) -> float:
        return _power_law([getattr(scaling.nodes[n], key).value for n in nodes], i, t)

    return ScalingFactors(
        technology_nm=node,
        dynamic_energy=factor("dynamic_energy"),
        wire_energy=factor("wire_energy"),
        leakage=factor("leakage"),
        area=factor("area"),
        dram_energy=scaling.dram_energy.value,
        vdd_v=factor("vdd_v"),
        vmin_v=factor("vmin_v"),
        vmax_v=factor("vmax_v"),
        vt_v=factor("vt_v"),
        delay=factor("delay"),
        alpha=scaling.alpha.value,
    )


def _log_position(xs: list[float], x: float) -> tuple[int, float]:
    """Where ``x`` lies on the ascending ``xs``, in logs: (i, t) with
    t = ln(x / xs[i]) / ln(xs[i + 1] / xs[i]) for the two points around it (the two nearest
    beyond the ends, t outside [0, 1]); (0, 0.0) when ``xs`` has one point."""
    if len(xs) == 1:
        return 0, 0.0
    i = min(max(bisect.bisect_right(xs, x) - 1, 0), len(xs) - 2)
    return i, math.log(x / xs[i]) / math.log(xs[i + 1] / xs[i])


def _power_law(ys: list[float], i: int, t: float) -> float:
    """The value at ``(i, t)`` of ``_log_position`` on the power law through points i and
    i + 1 of ``ys`` (a point's own value at t = 0 or 1)."""
    if t == 0:
        return ys[i]
    if t == 1:
        return ys[i + 1]
    value: float = ys[i] * (ys[i + 1] / ys[i]) ** t
    return value


def _interpolate(
    rows: list[OperationRow], bits: float, what: str, extend: bool = False
) -> tuple[float, float]:
    """(energy_pj, area_um2) at ``bits``: a row, or the power law through its neighbours.

    Outside the rows, ``extend`` continues the law of the two nearest rows; otherwise the
    width is refused.
    """
    for row in rows:
        if row.bits == bits:
            return row.energy_pj, row.area_um2
    inside = rows[0].bits < bits < rows[-1].bits
    if not inside and not (extend and len(rows) > 1):
        widths = ", ".join(str(row.bits) for row in rows)
        raise MagnetError(
            f"{what} is priced for {rows[0].bits} to {rows[-1].bits} bits "
            f"(table rows: {widths}); got {bits:g}",
        )
    i, t = _log_position([float(row.bits) for row in rows], bits)
    energy_pj = _power_law([row.energy_pj for row in rows], i, t)
    return energy_pj, _power_law([row.area_um2 for row in rows], i, t)


# ---- the cost model ----------------------------------------------------------------------
def _storage_energy(read_pj: float, write_over_read: Number, action: str, factor: float) -> float:
    """One storage action at the table's node times ``factor``: a read, or a write (an
    update, the read-modify-write of a partial sum, is priced as a write)."""
    energy_pj = read_pj if action == "read" else read_pj * write_over_read.value
    return energy_pj * factor


class TableCostModel(CostModel):
    """Prices every class of ``ACTIONS`` from the built-in tables at one technology node.

    ``TableCostModel()`` is 45 nm (name "horowitz45"); ``TableCostModel(16)`` scales it with
    ``scaling.yaml`` (name "horowitz45-scaled-16nm"). ``table_path`` and ``scaling_path``
    swap in other YAML files of the same schema.
    """

    def __init__(
        self,
        technology_nm: float = 45.0,
        *,
        table_path: Path | None = None,
        scaling_path: Path | None = None,
        area_path: Path | None = None,
    ) -> None:
        self.table = load_technology_table(Path(table_path or TECHNOLOGY_TABLE))
        scaling = load_scaling_table(Path(scaling_path or SCALING_TABLE))
        self.area_table = load_area_table(Path(area_path or AREA_TABLE))
        if scaling.reference_node_nm != self.table.technology_nm:
            raise MagnetError(
                f"scaling starts at {scaling.reference_node_nm:g} nm but the table is "
                f"{self.table.technology_nm:g} nm",
                source=str(scaling_path or SCALING_TABLE),
                field="reference_node_nm",
            )
        self.factors = scaling_factors(technology_nm, scaling)
        self.technology_nm = self.factors.technology_nm
        self._scaling = scaling
        self._check_area_nodes(str(area_path or AREA_TABLE))
        #: arithmetic and flip-flop area at this node over the 45 nm table's
        self.logic_factor = self._logic_factor(self.technology_nm)
        self.register_factor = self._across_nodes(
            self.technology_nm, lambda node: self._factor_at(node, "register_over_45nm")
        )
        if type(self).name == CostModel.name:  # a subclass naming itself keeps its name
            scaled = self.technology_nm != self.table.technology_nm
            suffix = f"-scaled-{self.technology_nm:g}nm" if scaled else ""
            self.name = f"{self.table.name}{suffix}"

    def _check_area_nodes(self, source: str) -> None:
        """The area table's nodes are the scaling table's, its controller's node within
        their range (``MagnetError`` naming ``source`` and the field otherwise)."""
        nodes = sorted(self._scaling.nodes)
        allowed = ", ".join(f"{n:g}" for n in nodes)
        unknown = sorted(set(self.area_table.nodes) - set(nodes))
        if unknown:
            raise MagnetError(
                f"nodes {', '.join(f'{n:g}' for n in unknown)} nm are not nodes of the scaling "
                f"table; allowed: {allowed}",
                source=source,
                field="nodes",
            )
        node = self.area_table.controller.technology_nm.value
        if not nodes[0] <= node <= nodes[-1]:
            raise MagnetError(
                f"{node:g} nm is outside the scaling table's nodes ({nodes[0]:g} to "
                f"{nodes[-1]:g} nm)",
                source=source,
                field="controller.technology_nm",
            )

    # -- the contract ----------------------------------------------------------------------
    def supports(self, component: Component) -> bool:
        """Every class of ``ACTIONS``; nothing else."""
        return component.cls in ACTIONS

    def energy_pj(self, component: Component, action: str) -> float:
        """Energy of one ``action`` of one instance (pJ) at this model's node."""
        typed = self._check_component(component)
        allowed = ACTIONS[typed.cls]
        if action not in allowed:
            raise self._error(
                typed,
                f"unknown action {action!r} for a {typed.cls}; allowed: {', '.join(allowed)}",
                field="action",
            )
        return self._energy(typed, action)

    def leakage_mw(self, component: Component) -> float:
        """Leakage power of one instance (mW); 0 for what the tables do not model (DRAM,
        wires, adders inside a MAC, routers, overheads)."""
        return self._leakage(self._check_component(component))

    def clock_pj_per_cycle(self, component: Component) -> float:
        """Clock energy per cycle (pJ) of a register file's port register or a MAC's input
        register; SRAM macros clock inside their access energy, the rest has none."""
        return self._clock(self._check_component(component))

    def area_um2(self, component: Component) -> float | None:
        """Area of one instance (um^2); None for DRAM (off chip) and wires (over the logic).
        An adder's is its row's (magnet asks it only of a post-processing unit's adders: the
        adds of trees and address generators sit inside the MACs and the control)."""
        return self._area(self._check_component(component))

    # -- dispatch by component class ---------------------------------------------------------
    @functools.singledispatchmethod
    def _energy(self, component: Component, action: str) -> float:
        """Energy of ``action`` on a component the tables price (routers and overheads have
        no actions: ``energy_pj`` refuses them before this)."""
        raise self._error(component, f"a {component.cls} has no actions", field="action")

    @_energy.register
    def _(self, component: MacComponent, action: str) -> float:
        return self._mac_energy_pj(component) * self.factors.dynamic_energy

    @_energy.register
    def _(self, component: AdderComponent, action: str) -> float:
        return self._add_row(component)[0] * self.factors.dynamic_energy

    @_energy.register
    def _(self, component: NocLinkComponent, action: str) -> float:
        return self._noc_energy_pj(component) * self.factors.wire_energy

    @_energy.register
    def _(self, component: LinkComponent, action: str) -> float:
        return self._link_pj_per_bit(component)

    @_energy.register
    def _(self, component: DummyComponent, action: str) -> float:
        return self.table.dummy.energy_pj.value

    @_energy.register
    def _(self, component: PowerGateComponent, action: str) -> float:
        area = self._number(component, "domain_area_um2", minimum=0)
        return area * self.table.clock.wake_pj_per_um2.value * self.factors.dynamic_energy

    @_energy.register
    def _(self, component: SramComponent, action: str) -> float:
        read_pj = self._sram_read_pj(component)
        return _storage_energy(
            read_pj, self.table.sram.write_over_read, action, self.factors.dynamic_energy
        )

    @_energy.register
    def _(self, component: RegfileComponent, action: str) -> float:
        read_pj = self._regfile_read_pj(component)
        return _storage_energy(
            read_pj, self.table.regfile.write_over_read, action, self.factors.dynamic_energy
        )

    @_energy.register
    def _(self, component: DramComponent, action: str) -> float:
        read_pj, write_over_read = self._dram_read_pj(component)
        return _storage_energy(read_pj, write_over_read, action, self.factors.dram_energy)

    @functools.singledispatchmethod
    def _leakage(self, component: Component) -> float:
        """DRAM, NoC, adder (part of a MAC), router and overhead: not modelled."""
        return 0.0

    @_leakage.register
    def _(self, component: MacComponent) -> float:
        density = self.table.mac.leakage_mw_per_um2.value
        return self._mac_area_um2(component) * density * self.factors.leakage

    @_leakage.register
    def _(self, component: SramComponent) -> float:
        bits = self._capacity_bits(component)
        return bits * self.table.sram.leakage_mw_per_bit.value * self.factors.leakage

    @_leakage.register
    def _(self, component: RegfileComponent) -> float:
        bits = self._regfile_capacity_bits(component)
        return bits * self.table.regfile.leakage_mw_per_bit.value * self.factors.leakage

    @_leakage.register
    def _(self, component: DummyComponent) -> float:
        return self.table.dummy.leakage_mw.value

    @_leakage.register
    def _(self, component: ClockGateComponent) -> float:
        density = self.table.mac.leakage_mw_per_um2.value  # standard cells, like the MACs
        return self.table.clock.gate_area_um2.value * density * self.factors.leakage

    @functools.singledispatchmethod
    def _clock(self, component: Component) -> float:
        """SRAM macros clock inside their access energy; DRAM, wires: none."""
        return 0.0

    @_clock.register
    def _(self, component: RegfileComponent) -> float:
        self._regfile_capacity_bits(component)
        return self._clock_pj(self._width_bits(component))  # entries clock-gated; one port

    @_clock.register
    def _(self, component: MacComponent) -> float:
        # its input register; weights and sums sit in levels
        return self._clock_pj(self._number(component, "activation_bits", default=8, minimum=1))

    @_clock.register
    def _(self, component: ClockGateComponent) -> float:
        # the cell's latch and gate switch every cycle, with the trunk's share that drives them
        tree = 1 + self.table.clock.distribution_over_leaves.value
        each = self.table.clock.gate_energy_pj_per_cycle.value * tree
        return each * self.factors.dynamic_energy

    def _clock_pj(self, bits: float) -> float:
        """Clock energy per cycle of ``bits`` flip-flops and their share of the clock tree."""
        clock = self.table.clock
        tree = 1 + clock.distribution_over_leaves.value
        per_bit = clock.energy_pj_per_bit_per_cycle.value * tree
        return bits * per_bit * self.factors.dynamic_energy

    @functools.singledispatchmethod
    def _area(self, component: Component) -> float | None:
        """DRAM (off chip), NoC (wires over logic): no area."""
        return None

    @_area.register
    def _(self, component: AdderComponent) -> float | None:
        return self._add_row(component)[1] * self.factors.area

    @_area.register
    def _(self, component: MacComponent) -> float | None:
        return self._mac_area_um2(component) * self.logic_factor

    @_area.register
    def _(self, component: SramComponent) -> float | None:
        banks = self._number(component, "banks", default=1, minimum=1, integer=True)
        bank_bits = self._capacity_bits(component) / banks
        return banks * bank_bits * self.sram_um2_per_bit(bank_bits)

    @_area.register
    def _(self, component: RegfileComponent) -> float | None:
        area = self._regfile_capacity_bits(component) * self.table.regfile.area_um2_per_bit.value
        return area * self.register_factor

    @_area.register
    def _(self, component: DummyComponent) -> float | None:
        return self.table.dummy.area_um2.value

    @_area.register
    def _(self, component: ClockGateComponent) -> float | None:
        return self.table.clock.gate_area_um2.value * self.register_factor

    @_area.register
    def _(self, component: RouterComponent) -> float | None:
        return self.table.noc.router_area_um2.value * self.factors.area

    @_area.register
    def _(self, component: OverheadComponent) -> float | None:
        return self._overhead_um2(component)

    def _overhead_um2(self, component: OverheadComponent) -> float:
        """Area of one overhead ``kind`` (``OVERHEAD_KINDS``) from what it is based on: the
        areas priced before it (``logic_area_um2``, ``macro_area_um2``, ``chip_area_um2``)
        or its counts (``controllers``, ``chiplets``)."""
        kind, table = component.get("kind"), self.table.overhead
        if kind not in OVERHEAD_KINDS:
            raise self._error(
                component,
                f"unknown overhead kind {kind!r}; allowed: {', '.join(OVERHEAD_KINDS)}",
                field="kind",
            )
        if kind == "controller":
            cores = self._number(component, "controllers", default=0, minimum=0, integer=True)
            return cores * self.controller_um2
        per_chip = {
            "pll": table.pll_area_um2,
            "die_to_die": table.die_to_die_area_um2,
            "io": table.io_area_um2,
        }
        if kind in per_chip:
            chips = self._number(component, "chiplets", default=1, minimum=1, integer=True)
            if kind == "die_to_die" and chips == 1:
                return 0.0  # a chip alone has no die-to-die links
            return chips * per_chip[kind].value * self.factors.area
        if kind == "clock_tree":
            return self._number(component, "logic_area_um2", minimum=0) * (
                table.clock_tree_per_logic.value
            )
        if kind == "white_space":
            logic = self._number(component, "logic_area_um2", minimum=0)
            macros = self._number(component, "macro_area_um2", minimum=0)
            spare = 1.0 / table.logic_utilization.value - 1.0
            return logic * spare + macros * table.macro_halo.value
        share = table.control_share.value  # control: a share of the finished die
        return self._number(component, "chip_area_um2", minimum=0) * share / (1.0 - share)

    def describe(self, component: Component) -> str | None:
        """For ``magnet costs``: an SRAM bank outside the published macros of the node
        (priced at the nearest one's density), else nothing."""
        typed = self._check_component(component)
        if not isinstance(typed, SramComponent):
            return None
        banks = self._number(typed, "banks", default=1, minimum=1, integer=True)
        return self.macro_clamped(self._capacity_bits(typed) / banks)

    # -- area at the node ----------------------------------------------------------------------
    def sram_um2_per_bit(self, bank_bits: float) -> float:
        """Area per bit (um^2) of one SRAM macro of ``bank_bits`` at this model's node: from
        ``area.yaml``'s published macros where the node has them (``_macro_um2_per_bit``),
        else the 45 nm cell over the array efficiency times the node's area factor."""
        return self._across_nodes(
            self.technology_nm, lambda node: self._macro_um2_per_bit(node, bank_bits)
        )

    def _macro_um2_per_bit(self, node: float, bank_bits: float) -> float:
        """Area per bit of a macro of ``bank_bits`` at a table node: the power law in capacity
        through ``area.yaml``'s two nearest macros, clamped to the smallest and largest."""
        macros = self.area_table.nodes.get(node)
        if macros is None:
            sram = self.table.sram
            per_bit = sram.bitcell_area_um2.value / sram.array_efficiency.value
            return per_bit * self._scaling.nodes[node].area.value
        points = macros.sram_macros.points
        bits = [p.capacity_bytes * _BITS_PER_BYTE for p in points]
        i, t = _log_position(bits, min(max(bank_bits, bits[0]), bits[-1]))
        return _power_law([p.area_um2 / b for p, b in zip(points, bits, strict=True)], i, t)

    def macro_clamped(self, bank_bits: float) -> str | None:
        """Whether a macro of ``bank_bits`` lies outside the published macros of the table
        nodes this model's area comes from (then priced at the nearest macro's density: a
        line saying so), None when inside or where no macros are tabled."""
        for node in self._anchor_nodes(self.technology_nm):
            macros = self.area_table.nodes.get(node)
            if macros is None:
                continue
            points = macros.sram_macros.points
            low, high = (points[0].capacity_bytes, points[-1].capacity_bytes)
            bank_bytes = bank_bits / _BITS_PER_BYTE
            if not low <= bank_bytes <= high:
                where = "below" if bank_bytes < low else "above"
                return (
                    f"bank {bank_bytes:g} B {where} the {node:g} nm macros ({low:g}-{high:g} B): "
                    "at the nearest's density"
                )
        return None

    def _factor_at(self, node: float, key: str) -> float:
        """``area.yaml``'s ``key`` (``logic_over_45nm``, ``register_over_45nm``) at a table
        node, else the node's area factor (``scaling.yaml``)."""
        found = self.area_table.nodes.get(node)
        factor: float = (
            self._scaling.nodes[node].area.value if found is None else getattr(found, key).value
        )
        return factor

    def _across_nodes(self, node: float, at: Callable[[float], float]) -> float:
        """``at`` at ``node``: its value at a table node, log-linear in the node between the
        two table nodes around it (``_anchor_nodes``)."""
        nodes = sorted(self._scaling.nodes)
        i, t = _log_position(nodes, node)
        return _power_law([at(nodes[i]), at(nodes[i + 1])], 0, t)

    def _anchor_nodes(self, node: float) -> tuple[float, ...]:
        """The scaling table's nodes a value at ``node`` is made of: the node itself, or the
        two around it."""
        nodes = sorted(self._scaling.nodes)
        i, t = _log_position(nodes, node)
        return (nodes[i],) if t == 0 else (nodes[i + 1],) if t == 1 else (nodes[i], nodes[i + 1])

    @property
    def controller_um2(self) -> float:
        """One control core (``area.yaml``'s ``controller``) at this node: its area at its
        published node over the logic factor there, times this node's."""
        core = self.area_table.controller
        at_source = self._logic_factor(core.technology_nm.value)
        return core.area_um2.value / at_source * self.logic_factor

    def _logic_factor(self, node: float) -> float:
        """Arithmetic area at ``node`` over the 45 nm table's."""
        return self._across_nodes(node, lambda n: self._factor_at(n, "logic_over_45nm"))

    # -- per class, at the table's node ------------------------------------------------------
    def _mac_rows(self, component: Component) -> tuple[tuple[float, float], tuple[float, float]]:
        """((multiply pJ, um^2), (add pJ, um^2)) of one MAC at the table's node."""
        datatype = component.get("datatype", "int")
        if datatype not in DATATYPES:
            raise self._error(
                component,
                f"unknown datatype {datatype!r}; allowed: {', '.join(DATATYPES)}",
                field="datatype",
            )
        bits = self._number(component, "bits", default=8, minimum=1)
        weight_bits = self._number(component, "weight_bits", default=bits, minimum=1)
        activation_bits = self._number(component, "activation_bits", default=bits, minimum=1)
        mac = self.table.mac
        try:
            if datatype == "int":
                width = math.sqrt(weight_bits * activation_bits)
                multiply = _interpolate(mac.int_multiply, width, "an int multiply", extend=True)
            else:
                multiply = _interpolate(mac.float_multiply, bits, "a float multiply")
                if component.get("format") == "bf16":
                    ratio = mac.bf16_over_fp16_multiply.value
                    multiply = (multiply[0] * ratio, multiply[1] * ratio)
        except MagnetError as err:
            raise self._error(component, str(err), field="bits") from None
        return multiply, self._add_row(component, "accum_bits")

    def _add_row(self, component: Component, key: str = "bits") -> tuple[float, float]:
        """(pJ, um^2) of one add of ``component[key]`` bits (int or float)."""
        datatype = component.get("datatype", "int")
        bits = self._number(component, key, default=32, minimum=1)
        mac = self.table.mac
        try:
            if datatype == "int":
                return _interpolate(mac.int_add, bits, "an int add", extend=True)
            add = _interpolate(mac.float_add, bits, "a float add")
        except MagnetError as err:
            raise self._error(component, str(err), field=key) from None
        if component.get("format") == "bf16" and bits == 16:
            ratio = mac.bf16_over_fp16_add.value
            add = (add[0] * ratio, add[1] * ratio)
        return add

    def _mac_energy_pj(self, component: Component) -> float:
        (multiply_pj, _), (add_pj, _) = self._mac_rows(component)
        return multiply_pj + add_pj

    def _mac_area_um2(self, component: Component) -> float:
        (_, multiply_um2), (_, add_um2) = self._mac_rows(component)
        return multiply_um2 + add_um2

    def _sram_read_pj(self, component: Component) -> float:
        fit = self.table.sram.fit
        banks = self._number(component, "banks", default=1, minimum=1, integer=True)
        bank_bytes = self._capacity_bits(component) / banks / _BITS_PER_BYTE
        width_bits = self._width_bits(component)
        read_pj: float = (
            fit.e0_pj.value
            * (bank_bytes / fit.reference_capacity_bytes) ** fit.alpha.value
            * (width_bits / fit.reference_width_bits) ** fit.beta.value
        )
        return read_pj

    def _regfile_read_pj(self, component: Component) -> float:
        capacity = self._regfile_capacity_bits(component)
        width = self._width_bits(component)
        table = self.table.regfile
        depth = max(1.0, capacity / width)
        decode = depth * table.decoder_pj.value * math.ceil(math.log2(depth)) / 32
        return width * table.energy_pj_per_bit.value + decode

    def _dram_read_pj(self, component: Component) -> tuple[float, Number]:
        """(pJ per read access, write / read): the component's ``dram_technology`` from
        ``dram.yaml``; a DRAM without one (an explicit level tree) is the technology table's
        generic DRAM (Horowitz's 45 nm-era figure)."""
        if component.get("capacity_bits") is not None:
            self._capacity_bits(component)  # validates the value; it does not change the price
        name = component.get("dram_technology")
        if name is None:
            per_bit, write_over_read = (
                self.table.dram.energy_pj_per_bit,
                self.table.dram.write_over_read,
            )
        else:
            dram = load_dram_table()
            if name not in dram.technologies:
                raise self._error(
                    component,
                    f"unknown DRAM technology {name!r}; allowed: {', '.join(dram.technologies)}",
                    field="dram_technology",
                )
            per_bit = dram.technologies[name].energy_pj_per_bit
            write_over_read = dram.write_over_read
        return self._width_bits(component) * per_bit.value, write_over_read

    def _link_pj_per_bit(self, component: LinkComponent) -> float:
        """One bit over one hop (pJ): the component's own ``pj_per_bit`` (>= 0), else its
        ``technology`` from ``links.yaml``."""
        if component.get("pj_per_bit") is not None:
            return self._number(component, "pj_per_bit", minimum=0)
        name = component.technology
        links = load_link_table()
        if name not in links.technologies:
            raise self._error(
                component,
                f"unknown link technology {name!r}; allowed: {', '.join(links.technologies)}, "
                "or a pj_per_bit of its own",
                field="technology",
            )
        return links.technologies[name].energy_pj_per_bit.value

    def _noc_energy_pj(self, component: Component) -> float:
        word_bits = self._number(component, "word_bits", minimum=1)
        hop_mm = self._number(
            component, "hop_mm", default=self.table.noc.default_hop_mm.value, minimum=0
        )
        return word_bits * hop_mm * self.table.noc.energy_pj_per_bit_per_mm.value

    # -- attribute checks ------------------------------------------------------------------
    def _check_component(self, component: Component) -> Component:
        """``component`` as its typed class, once its class and node are checked: a class
        outside ``ACTIONS``, or a node other than this model's, raises ``MagnetError``."""
        if component.cls not in ACTIONS:
            raise self._error(
                component,
                f"unknown component class {component.cls!r}; allowed: {', '.join(ACTIONS)}",
                field="class",
            )
        node = component.get("technology_nm")
        if node is not None and not (
            isinstance(node, int | float)
            and not isinstance(node, bool)
            and math.isclose(node, self.technology_nm)
        ):
            raise self._error(
                component,
                f"component is at {node!r} nm but this cost model prices "
                f"{self.technology_nm:g} nm; use the model for {node!r} nm or drop the attribute",
                field="technology_nm",
            )
        return typed_component(component)

    def _capacity_bits(self, component: Component) -> float:
        return self._number(component, "capacity_bits", minimum=1)

    def _regfile_capacity_bits(self, component: Component) -> float:
        bits = self._capacity_bits(component)
        limit = self.table.regfile.max_capacity_bits.value
        if bits > limit:
            raise self._error(
                component,
                f"{bits:g} bits is above the {limit:g}-bit range of the register-file table; "
                "use component class 'sram' for larger storage",
                field="capacity_bits",
            )
        return bits

    def _width_bits(self, component: Component) -> float:
        key = "width_bits" if component.get("width_bits") is not None else "word_bits"
        return self._number(component, key, minimum=1)

    def _number(
        self,
        component: Component,
        key: str,
        *,
        default: float | None = None,
        minimum: float,
        integer: bool = False,
    ) -> float:
        value = component.get(key, default)
        if value is None:
            raise self._error(component, f"needs {key!r} to be priced", field=key)
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < minimum or (integer and value != int(value)):
            kind = "a whole number" if integer else "a number"
            message = f"{key} = {value!r}; expected {kind} >= {minimum:g}"
            raise self._error(component, message, field=key)
        return float(value)

    def _error(self, component: Component, message: str, *, field: str) -> MagnetError:
        return MagnetError(
            message,
            source=f"cost model {self.name!r}, component {component.name!r} ({component.cls})",
            field=field,
        )


def node_factors(technology_nm: float) -> ScalingFactors:
    """The built-in ``scaling.yaml`` factors, supply range and speed of a node."""
    return scaling_factors(technology_nm, load_scaling_table())


def nominal_voltage(technology_nm: float) -> float:
    """The nominal supply of a node (``scaling.yaml``), log-linear between table nodes."""
    return node_factors(technology_nm).vdd_v


def builtin_cost_model(technology_nm: float) -> TableCostModel:
    """The built-in table model at ``technology_nm`` (65, 45, 32, 16, 7, 5 or in between)."""
    return TableCostModel(technology_nm)
