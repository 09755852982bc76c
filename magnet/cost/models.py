"""Built-in cost models, registered by name (``--cost-model NAME``; see ``lookup.py``).

``horowitz45``
    The built-in table (``TableCostModel``) at 45 nm; given ``technology_nm`` (the CLI
    passes the architecture's node) it prices that node, like the built-in fallback.
``horowitz45-65nm``, ``horowitz45-32nm``, ``horowitz45-16nm``, ``horowitz45-7nm``
    The same table scaled to that node, whatever node the architecture states: ask "what
    would this architecture cost at 7 nm" without editing it.
``eyeriss-normalized``
    Eyeriss (Chen, Emer, Sze, ISCA 2016) relative energy per 16-bit access: MAC 1x,
    register file 1x, inter-PE network 2x, global buffer 6x, DRAM 200x, in units of one
    16-bit integer MAC of the built-in table at the component's node (0.8374 pJ at 45 nm).
``table:FILE.yaml``
    Measured numbers from a YAML datasheet (an SRAM compiler's rows of capacity x width,
    optional MAC rows), interpolated bilinearly in log-log space (``DatasheetCostModel``).
``sram-analytical``
    A CACTI-like analytical SRAM (bitlines ~ rows, wordlines ~ columns, data I/O, H-tree,
    bank select), calibrated to the Horowitz fit at 32 KiB x 64 bits, 45 nm. SRAM only:
    other classes go to the next model of the chain.

Numbers, forms and calibrations are worked out in ``magnet/cost/tables/README.md``
(section "Other built-in cost models").
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from magnet.cost.contract import (
    ACTIONS,
    COMPONENT_TYPES,
    MAX_COST,
    STORAGE_TYPES,
    Component,
    CostModel,
    DummyComponent,
    MacComponent,
    NocLinkComponent,
    Price,
    SramComponent,
    typed_component,
)
from magnet.cost.lookup import _register
from magnet.cost.tables import (
    ScalingFactors,
    TableCostModel,
    load_scaling_table,
    scaling_factors,
)
from magnet.errors import MagnetError, validation_message
from magnet.files import path_kind, read_yaml
from magnet.registry import BUILT_IN
from magnet.strict import Strict
from magnet.units import Real, Whole

__all__ = [
    "DatasheetCostModel",
    "EyerissNormalized",
    "Horowitz45",
    "SramAnalytical",
    "loglog_interpolate",
]

_BITS_PER_BYTE = 8
KIB_BITS = 8 * 1024


def _error(model: CostModel, component: Component, message: str, field: str) -> MagnetError:
    return MagnetError(
        message,
        source=f"cost model {model.name!r}, component {component.name!r} ({component.cls})",
        field=field,
    )


def _number(model: CostModel, component: Component, key: str, default: Any = None) -> float:
    value = component.get(key, default)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value <= 0:
        raise _error(model, component, f"{key} = {value!r}; expected a number > 0", key)
    return float(value)


def _width_bits(model: CostModel, component: Component) -> float:
    key = "width_bits" if component.get("width_bits") is not None else "word_bits"
    return _number(model, component, key)


def _check_action(model: CostModel, component: Component, action: str) -> None:
    allowed = ACTIONS.get(component.cls)
    if allowed is None:
        raise _error(
            model,
            component,
            f"unknown component class {component.cls!r}; allowed: {', '.join(ACTIONS)}",
            "class",
        )
    if action not in allowed:
        raise _error(
            model,
            component,
            f"unknown action {action!r} for a {component.cls}; allowed: {', '.join(allowed)}",
            "action",
        )


def _is_mac(component: Component) -> bool:
    """A MAC unit (of its typed class, or a plain ``Component`` of class ``mac``)."""
    return isinstance(typed_component(component), MacComponent)


@functools.cache
def _factors(technology_nm: float) -> ScalingFactors:
    """The built-in node factors (``scaling.yaml``) from 45 nm to ``technology_nm``."""
    return scaling_factors(technology_nm, load_scaling_table())


def _node(component: Component, default: float | None) -> float:
    node = component.get("technology_nm")
    return float(node if node is not None else (45.0 if default is None else default))


# ---- horowitz45 and its nodes ------------------------------------------------------------
class Horowitz45(TableCostModel):
    """The built-in Horowitz table at 45 nm, or at ``technology_nm`` when given."""

    def __init__(self, technology_nm: float | None = None) -> None:
        super().__init__(45.0 if technology_nm is None else technology_nm)


class _HorowitzAtNode(TableCostModel):
    """The built-in table at a fixed node, whatever node the component states."""

    node: float = 45.0

    def __init__(self) -> None:
        super().__init__(self.node)
        self.name = f"horowitz45-{self.node:g}nm"

    @staticmethod
    def _here(component: Component) -> Component:
        """``component`` without its node (of the same class), so the table's node prices it."""
        attributes = {k: v for k, v in component.attributes.items() if k != "technology_nm"}
        return replace(component, attributes=attributes)

    def energy_pj(self, component: Component, action: str) -> float:
        """The table's energy at this model's node."""
        return super().energy_pj(self._here(component), action)

    def leakage_mw(self, component: Component) -> float:
        """The table's leakage at this model's node."""
        return super().leakage_mw(self._here(component))

    def area_um2(self, component: Component) -> float | None:
        """The table's area at this model's node."""
        return super().area_um2(self._here(component))

    def clock_pj_per_cycle(self, component: Component) -> float:
        """The table's clock energy at this model's node."""
        return super().clock_pj_per_cycle(self._here(component))


def _at_node(node: float) -> type[_HorowitzAtNode]:
    cls = type(
        f"Horowitz45At{node:g}nm",
        (_HorowitzAtNode,),
        {
            "node": float(node),
            "__doc__": f"The built-in Horowitz table scaled to {node:g} nm (the arch's node "
            "is overridden).",
            "__module__": __name__,
        },
    )
    globals()[cls.__name__] = cls
    return cls


# ---- eyeriss-normalized ------------------------------------------------------------------
#: Eyeriss ISCA 2016, energy per 16-bit access relative to one 16-bit MAC.
EYERISS_RELATIVE = {"mac": 1.0, "regfile": 1.0, "network": 2.0, "sram": 6.0, "dram": 200.0}
#: SRAM up to this size is priced as a register file (Eyeriss's RF is 0.5 KB).
EYERISS_RF_MAX_BITS = KIB_BITS
#: The distance Eyeriss's "inter-PE network 2x" covers (low end of its 1-2 mm; the built-in
#: table's default hop). A hop of ``hop_mm`` costs 2x * hop_mm / 1 mm per 16-bit word.
EYERISS_NETWORK_MM = 1.0
#: The unit: a 16-bit integer MAC with a 16-bit accumulator (Eyeriss keeps 16-bit psums).
EYERISS_UNIT_MAC = {"bits": 16, "accum_bits": 16, "datatype": "int"}
#: ``EYERISS_RELATIVE`` by typed component class.
_EYERISS_RELATIVE_BY_TYPE = {COMPONENT_TYPES[cls]: x for cls, x in EYERISS_RELATIVE.items()}


class EyerissNormalized(CostModel):
    """Eyeriss normalised costs per 16-bit word, in units of the table's 16-bit MAC.

    energy = relative cost x (bits moved / 16) x unit, with

    - relative cost: MAC 1, regfile (and SRAM <= 1 KiB) 1, SRAM 6, DRAM 200, network 2;
    - bits moved: ``width_bits`` (else ``word_bits``) for storage, ``bits`` for a MAC,
      ``word_bits`` for a network word; a network hop is additionally scaled by
      ``hop_mm / 1 mm`` (Eyeriss's 2x is one word over its 1-2 mm array network; the
      evaluator charges per word per hop, so a word crossing 1 mm in total pays 2x);
    - unit: the built-in table's 16-bit int MAC (16-bit multiply + 16-bit add) at the
      component's ``technology_nm`` (else the constructor's, else 45 nm): 0.7874 + 0.05 =
      0.8374 pJ at 45 nm; or ``mac_pj`` if given.

    Reads, writes and updates cost the same; leakage is 0 and there is no area (None).
    """

    name = "eyeriss-normalized"

    def __init__(self, technology_nm: float | None = None, mac_pj: float | None = None) -> None:
        self.technology_nm = technology_nm
        self.mac_pj = mac_pj
        if mac_pj is not None and not (math.isfinite(mac_pj) and mac_pj > 0):
            raise MagnetError(f"mac_pj = {mac_pj!r}; expected a number > 0", source=self.name)

    def supports(self, component: Component) -> bool:
        """Eyeriss's table has MACs, storage and the array network; adders, routers and
        overheads go to the next model."""
        return isinstance(typed_component(component), _EYERISS_CLASSES)

    def unit_pj(self, component: Component) -> float:
        """The energy of Eyeriss's unit, one 16-bit MAC (pJ), at the component's node."""
        if self.mac_pj is not None:
            return self.mac_pj
        return _table_mac16_pj(_node(component, self.technology_nm))

    def relative(self, component: Component) -> float:
        """The Eyeriss multiple of one 16-bit MAC for one 16-bit word of ``component``."""
        typed = typed_component(component)
        if isinstance(typed, SramComponent):
            capacity = typed.get("capacity_bits")
            if capacity is not None and capacity <= EYERISS_RF_MAX_BITS:
                return EYERISS_RELATIVE["regfile"]
        return _EYERISS_RELATIVE_BY_TYPE.get(type(typed), 0.0)

    def _sixteenths(self, component: Component) -> float:
        """Bits moved by one action / 16 (and hop length / 1 mm for a network)."""
        if isinstance(component, MacComponent):
            return _number(self, component, "bits", 8) / 16
        if isinstance(component, NocLinkComponent):
            hop_mm = component.get("hop_mm", EYERISS_NETWORK_MM)
            if not (isinstance(hop_mm, int | float) and math.isfinite(hop_mm) and hop_mm >= 0):
                raise _error(self, component, f"hop_mm = {hop_mm!r}; expected >= 0", "hop_mm")
            return _number(self, component, "word_bits") / 16 * hop_mm / EYERISS_NETWORK_MM
        return _width_bits(self, component) / 16

    def energy_pj(self, component: Component, action: str) -> float:
        """relative cost x (bits moved / 16) x the unit (see the class docstring)."""
        _check_action(self, component, action)
        typed = typed_component(component)
        if isinstance(typed, DummyComponent):
            return 0.0
        return self.relative(typed) * self._sixteenths(typed) * self.unit_pj(typed)

    def leakage_mw(self, component: Component) -> float:
        """Eyeriss's table has no leakage: 0."""
        return 0.0

    def area_um2(self, component: Component) -> float | None:
        """Eyeriss's table has no area: None."""
        return None

    def describe(self, component: Component) -> str:
        """How the energy is made up, for ``magnet costs``."""
        typed = typed_component(component)
        if isinstance(typed, DummyComponent):
            return "0"
        what = "16-bit word-mm" if isinstance(typed, NocLinkComponent) else "16-bit words"
        return (
            f"{self.relative(typed):g}x MAC x {self._sixteenths(typed):g} {what} x "
            f"{self.unit_pj(typed):.4g} pJ"
        )


#: What ``EyerissNormalized`` prices: the classes of ``EYERISS_RELATIVE`` and dummies.
_EYERISS_CLASSES = (*_EYERISS_RELATIVE_BY_TYPE, DummyComponent)


@functools.cache
def _table_mac16_pj(technology_nm: float) -> float:
    """Eyeriss's unit, the built-in table's 16-bit int MAC, at ``technology_nm`` (pJ)."""
    component = MacComponent("eyeriss-unit", attributes=dict(EYERISS_UNIT_MAC))
    return TableCostModel(technology_nm).energy_pj(component, "compute")


# ---- table: a YAML datasheet -------------------------------------------------------------


class SramRow(Strict):
    """One macro of an SRAM compiler's datasheet."""

    capacity_bytes: Whole = Field(gt=0)
    width_bits: Whole = Field(gt=0)
    read_pj: Price = Field(gt=0)
    write_pj: Price = Field(gt=0)
    update_pj: Price | None = Field(None, gt=0)  # read-modify-write; default: write_pj
    leakage_uw: Price = Field(0.0, ge=0)
    area_um2: Price | None = Field(None, gt=0)


#: The storage classes a datasheet's SRAM rows may price.
SheetStorageClass = Literal["sram", "regfile"]


def _sram_only() -> list[SheetStorageClass]:
    """The default ``sram.classes``: SRAM alone."""
    return ["sram"]


class SramSection(Strict):
    """Rows on a full grid: every capacity at every width, each pair once."""

    classes: list[SheetStorageClass] = Field(default_factory=_sram_only)
    rows: list[SramRow] = Field(min_length=1)

    @model_validator(mode="after")
    def _grid(self) -> SramSection:
        pairs = [(r.capacity_bytes, r.width_bits) for r in self.rows]
        twice = sorted({p for p in pairs if pairs.count(p) > 1})
        if twice:
            raise ValueError(f"rows listed twice (capacity_bytes, width_bits): {twice}")
        capacities = sorted({c for c, _ in pairs})
        widths = sorted({w for _, w in pairs})
        missing = [p for p in itertools.product(capacities, widths) if p not in set(pairs)]
        if missing:
            raise ValueError(
                "rows must cover every capacity at every width (for bilinear interpolation); "
                f"missing (capacity_bytes, width_bits): {missing[:6]}"
                + (" ..." if len(missing) > 6 else "")
            )
        areas = {r.area_um2 is None for r in self.rows}
        if len(areas) > 1:
            raise ValueError("give area_um2 on every row or on none")
        return self


class MacRow(Strict):
    """One MAC of a library, looked up by ``format`` (int8, fp16, bf16, ...)."""

    format: str = Field(min_length=1)
    datatype: Literal["int", "float"]
    bits: Whole = Field(ge=1)
    accum_bits: Whole | None = Field(None, ge=1)  # documentation: the row includes its adder
    energy_pj: Price = Field(gt=0)
    leakage_uw: Price = Field(0.0, ge=0)
    area_um2: Price | None = Field(None, gt=0)


class Datasheet(Strict):
    """A ``table:FILE.yaml`` datasheet (see ``cost_models/sram_compiler_28nm.yaml``)."""

    name: str = Field(min_length=1)
    source: str = Field(min_length=1)  # where the numbers come from (say if illustrative)
    technology_nm: Real = Field(gt=0)
    other_nodes: Literal["refuse", "scale"] = "refuse"
    outside_range: Literal["error", "decline", "extrapolate"] = "error"
    notes: str | None = None
    sram: SramSection | None = None
    mac: list[MacRow] = Field(default_factory=list)

    @model_validator(mode="after")
    def _something(self) -> Datasheet:
        if self.sram is None and not self.mac:
            raise ValueError("give 'sram:' rows, 'mac:' rows, or both")
        formats = [row.format for row in self.mac]
        twice = sorted({f for f in formats if formats.count(f) > 1})
        if twice:
            raise ValueError(f"mac formats listed twice: {', '.join(twice)}")
        return self


def load_datasheet(path: str | Path) -> Datasheet:
    """Read and validate a datasheet; errors name the file and the field."""
    path = Path(path)
    data = read_yaml(path)
    try:
        return Datasheet.model_validate(data)
    except ValidationError as err:
        raise MagnetError(validation_message(err, Datasheet), source=str(path)) from None


def _bracket(axis: list[float], x: float, extrapolate: bool) -> tuple[int, int, str] | None:
    """Indices of the grid lines around ``x`` and how: exact, interpolated, extrapolated."""
    if x in axis:
        i = axis.index(x)
        return i, i, "exact"
    if axis[0] < x < axis[-1]:
        hi = next(i for i, v in enumerate(axis) if v > x)
        return hi - 1, hi, "interpolated"
    if not extrapolate or len(axis) < 2:
        return None
    return (0, 1, "extrapolated") if x < axis[0] else (len(axis) - 2, len(axis) - 1, "extrapolated")


def loglog_interpolate(
    xs: list[float],
    ys: list[float],
    values: dict[tuple[float, float], float],
    x: float,
    y: float,
    *,
    extrapolate: bool = False,
) -> tuple[float, str] | None:
    """Bilinear interpolation in log-log space on a full grid; None when outside.

    With ``t = ln(x / x0) / ln(x1 / x0)`` and ``u`` likewise in ``y``::

        ln v = (1-t)(1-u) ln v00 + t(1-u) ln v10 + (1-t)u ln v01 + tu ln v11

    i.e. a power law between neighbouring rows. On a grid line the other axis alone is
    interpolated; on a grid point the row is returned as is. If a corner value is 0 the
    same weights are applied to the values themselves. Returns (value, how) with how one of
    "exact", "interpolated", "extrapolated" (only with ``extrapolate=True``: the power law
    through the two outermost rows, continued).
    """
    bx, by = _bracket(xs, x, extrapolate), _bracket(ys, y, extrapolate)
    if bx is None or by is None:
        return None
    (i0, i1, how_x), (j0, j1, how_y) = bx, by
    t = 0.0 if i0 == i1 else math.log(x / xs[i0]) / math.log(xs[i1] / xs[i0])
    u = 0.0 if j0 == j1 else math.log(y / ys[j0]) / math.log(ys[j1] / ys[j0])
    corners = [
        ((1 - t) * (1 - u), values[xs[i0], ys[j0]]),
        (t * (1 - u), values[xs[i1], ys[j0]]),
        ((1 - t) * u, values[xs[i0], ys[j1]]),
        (t * u, values[xs[i1], ys[j1]]),
    ]
    corners = [(w, v) for w, v in corners if w != 0]
    if len(corners) == 1 and corners[0][0] == 1:
        value = corners[0][1]  # a datasheet row: as written
    elif all(v > 0 for _, v in corners):
        value = math.exp(sum(w * math.log(v) for w, v in corners))
    else:
        value = max(0.0, sum(w * v for w, v in corners))
    order = ("exact", "interpolated", "extrapolated")
    return value, max(how_x, how_y, key=order.index)


#: What the grids of a datasheet interpolate, from each SRAM row (None: not given).
_SHEET_VALUES: dict[str, Callable[[SramRow], float | None]] = {
    "read": lambda r: r.read_pj,
    "write": lambda r: r.write_pj,
    "update": lambda r: r.update_pj if r.update_pj is not None else r.write_pj,
    "leakage": lambda r: r.leakage_uw / 1000.0,  # uW -> mW
    "area": lambda r: r.area_um2,
}


class DatasheetCostModel(CostModel):
    """Measured SRAM macros (and MACs) from a YAML datasheet: ``table:FILE.yaml``.

    SRAM (the classes in ``sram.classes``, default only ``sram``): one access touches one
    bank of ``capacity_bits / banks`` bits, ``width_bits`` wide (else ``word_bits``); its
    read / write / update energy, and the bank's leakage and area, are interpolated over
    the rows (``loglog_interpolate``); leakage and area are multiplied by ``banks``.
    MAC: the row whose ``format`` is the component's ``format`` attribute, else
    ``int<bits>`` / ``fp<bits>`` from ``datatype`` and ``bits``. Other classes are declined.

    Outside the rows, ``outside_range`` decides: ``error`` (default) refuses, ``decline``
    lets the next model price the component, ``extrapolate`` continues the power law of
    the two outermost rows and warns (``describe`` says "EXTRAPOLATED").
    Other nodes: ``other_nodes: refuse`` (default) refuses a component whose
    ``technology_nm`` differs from the datasheet's; ``scale`` multiplies by the built-in
    node factors (``scaling.yaml``: dynamic energy, leakage, area) from the datasheet's node
    to the component's.
    """

    spec_argument = "FILE.yaml"
    spec_argument_is_path = True

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        if path_kind(self.path) is None:  # a folder, a device, a name too long: read_yaml
            raise MagnetError(
                "datasheet not found; write table:PATH/TO/DATASHEET.yaml", source=str(path)
            )
        self.sheet = load_datasheet(self.path)
        self.name = self.sheet.name
        self.extrapolated: dict[str, str] = {}
        sheet = self.sheet
        if sheet.other_nodes == "scale":
            try:
                _factors(sheet.technology_nm)
            except MagnetError as err:
                raise MagnetError(
                    f"other_nodes: scale needs a node the built-in factors cover: {err}",
                    source=str(self.path),
                    field="technology_nm",
                ) from None
        #: per quantity (read, write, update, leakage, area): (bytes, bits) -> value; area
        #: only when the rows give it (on every row or none: ``SramSection``)
        self._grid: dict[str, dict[tuple[float, float], float]] = {}
        if sheet.sram is not None:
            rows = sheet.sram.rows
            self._caps = sorted({float(r.capacity_bytes) for r in rows})
            self._widths = sorted({float(r.width_bits) for r in rows})
            for key, get in _SHEET_VALUES.items():
                found = {(float(r.capacity_bytes), float(r.width_bits)): get(r) for r in rows}
                if None not in found.values():
                    self._grid[key] = {
                        at: value for at, value in found.items() if value is not None
                    }
        self._macs = {row.format: row for row in sheet.mac}
        #: The storage classes the SRAM rows price (``sram.classes``).
        self._storage_types = tuple(
            STORAGE_TYPES[cls] for cls in (sheet.sram.classes if sheet.sram is not None else ())
        )

    # -- lookups ----------------------------------------------------------------------------
    def _is_storage(self, component: Component) -> bool:
        return isinstance(typed_component(component), self._storage_types)

    def _bank(self, component: Component) -> tuple[float, float, float]:
        capacity = _number(self, component, "capacity_bits")
        banks = _number(self, component, "banks", 1)
        return capacity / banks / _BITS_PER_BYTE, _width_bits(self, component), banks

    def _lookup(self, component: Component, key: str) -> float:
        bank_bytes, width, _ = self._bank(component)
        extrapolate = self.sheet.outside_range == "extrapolate"
        found = loglog_interpolate(
            self._caps, self._widths, self._grid[key], bank_bytes, width, extrapolate=extrapolate
        )
        if found is None:
            raise _error(
                self,
                component,
                f"a bank of {bank_bytes:g} bytes x {width:g} bits is outside the datasheet "
                f"(capacity_bytes {self._caps[0]:g}..{self._caps[-1]:g}, width_bits "
                f"{self._widths[0]:g}..{self._widths[-1]:g}; widths "
                f"{', '.join(f'{w:g}' for w in self._widths)}); extrapolation is refused: "
                f"add rows, or set outside_range: decline / extrapolate in {self.path}",
                "capacity_bits / width_bits",
            )
        value, how = found
        if how == "extrapolated" and component.name not in self.extrapolated:
            note = (
                f"EXTRAPOLATED beyond the datasheet to {bank_bytes:g} B x {width:g} bits "
                f"(rows {self._caps[0]:g}..{self._caps[-1]:g} B, "
                f"{self._widths[0]:g}..{self._widths[-1]:g} bits)"
            )
            self.extrapolated[component.name] = note
            warnings.warn(f"cost model {self.name!r}: {component.name}: {note}", stacklevel=2)
        return value

    def _in_range(self, component: Component) -> bool:
        bank_bytes, width, _ = self._bank(component)
        return (
            loglog_interpolate(self._caps, self._widths, self._grid["read"], bank_bytes, width)
            is not None
        )

    def _mac_format(self, component: Component) -> str:
        given = component.get("format")
        if given is not None:
            return str(given)
        datatype = component.get("datatype", "int")
        bits = component.get("bits", 8)
        return f"{'int' if datatype == 'int' else 'fp'}{bits:g}"

    def _mac(self, component: Component) -> MacRow:
        fmt = self._mac_format(component)
        row = self._macs.get(fmt)
        if row is None:
            raise _error(
                self,
                component,
                f"no MAC row for format {fmt!r}; the datasheet has "
                f"{', '.join(self._macs) or 'none'} (set the compute attribute 'format', "
                f"add a row, or set outside_range: decline in {self.path})",
                "format",
            )
        return row

    def _scale(self, component: Component, kind: str) -> float:
        node = component.get("technology_nm")
        sheet = self.sheet
        if node is None or math.isclose(float(node), sheet.technology_nm):
            return 1.0
        if sheet.other_nodes == "refuse":
            raise _error(
                self,
                component,
                f"the datasheet is {sheet.technology_nm:g} nm but the component is at "
                f"{node:g} nm; use an architecture at {sheet.technology_nm:g} nm, or set "
                f"other_nodes: scale in {self.path} to apply magnet's node factors",
                "technology_nm",
            )
        there, here = _factors(float(node)), _factors(sheet.technology_nm)
        ratio: float = getattr(there, kind) / getattr(here, kind)
        return ratio

    def _within(self, component: Component, value: float, field: str) -> float:
        """``value``, a price of the datasheet's ``field`` for ``component`` (interpolated,
        scaled to its node, times its banks), unless it is more than ``MAX_COST``: bad input
        naming the file (its rows are within the bound, what they come to is not)."""
        if value > MAX_COST:
            raise _error(
                self,
                component,
                f"the datasheet {self.path} comes to {value:.3g} for this component "
                f"(interpolated, scaled to its node, times its banks), more than {MAX_COST:g}; "
                "check its units and rows",
                field,
            )
        return value

    # -- the contract -----------------------------------------------------------------------
    def supports(self, component: Component) -> bool:
        """The storage classes of the SRAM rows and, if the sheet has MAC rows, MACs; with
        ``outside_range: decline``, only the ones the rows cover."""
        decline = self.sheet.outside_range == "decline"
        if self._is_storage(component):
            return self._in_range(component) if decline else True
        if _is_mac(component) and self._macs:
            return self._mac_format(component) in self._macs if decline else True
        return False

    def energy_pj(self, component: Component, action: str) -> float:
        """The MAC row's energy, or the action's energy interpolated over the SRAM rows."""
        _check_action(self, component, action)
        scale = self._scale(component, "dynamic_energy")
        if _is_mac(component):
            return self._within(component, self._mac(component).energy_pj * scale, "energy_pj")
        if not self._is_storage(component):
            raise _error(self, component, "the datasheet does not price this class", "class")
        return self._within(component, self._lookup(component, action) * scale, f"{action}_pj")

    def leakage_mw(self, component: Component) -> float:
        """The MAC row's leakage, or a bank's interpolated leakage times ``banks``."""
        scale = self._scale(component, "leakage")
        if _is_mac(component):
            leakage = self._mac(component).leakage_uw / 1000.0 * scale  # uW -> mW
        else:
            _, _, banks = self._bank(component)
            leakage = self._lookup(component, "leakage") * banks * scale
        return self._within(component, leakage, "leakage_uw")

    def area_um2(self, component: Component) -> float | None:
        """The MAC row's area, or a bank's interpolated area times ``banks``; None when the
        rows give no area."""
        if _is_mac(component):
            row = self._mac(component).area_um2
            if row is None:
                return None
            area = row * self._scale(component, "area")
        elif "area" in self._grid:
            _, _, banks = self._bank(component)
            area = self._lookup(component, "area") * banks * self._scale(component, "area")
        else:
            return None
        return self._within(component, area, "area_um2")

    def describe(self, component: Component) -> str | None:
        """Which row priced the component, or how it was interpolated or extrapolated."""
        if component.name in self.extrapolated:
            return self.extrapolated[component.name]
        if _is_mac(component):
            return f"MAC row {self._mac_format(component)}"
        bank_bytes, width, _ = self._bank(component)
        found = loglog_interpolate(self._caps, self._widths, self._grid["read"], bank_bytes, width)
        if found is None:
            return None
        how = "datasheet row" if found[1] == "exact" else found[1]
        return f"{how}: bank {bank_bytes:g} B x {width:g} bits"


# ---- sram-analytical ---------------------------------------------------------------------
#: Calibration point: Horowitz 45 nm fit (horowitz45.yaml) at 32 KiB, 64-bit access.
SRAM_CAL_BYTES = 32768
SRAM_CAL_WIDTH_BITS = 64
#: Share of the read energy at the calibration point (CACTI-like breakdown; assumption).
SRAM_ENERGY_SHARES = {"bitline": 0.45, "wordline": 0.15, "io": 0.15, "htree": 0.25}
#: Extra read energy per doubling of the bank count (bank decode and data mux; assumption),
#: as a share of the calibration read energy at 64 bits.
SRAM_BANK_SELECT_SHARE = 0.02
#: Share of the periphery area (30 % of a macro at the table's 0.7 array efficiency) that
#: scales with columns (sense amps, precharge, column mux), rows (decoders, wordline
#: drivers) and data bits (I/O latches and drivers); assumption.
SRAM_PERIPHERY_SHARES = {"columns": 0.6, "rows": 0.3, "io": 0.1}


def _organisation(bank_bits: float, width_bits: float) -> tuple[float, float]:
    """(rows, columns) of a bank: as square as the width allows (columns >= width)."""
    columns = max(width_bits, math.sqrt(bank_bits))
    return max(1.0, bank_bits / columns), columns


class SramAnalytical(CostModel):
    """A CACTI-like SRAM: energy and area from capacity, access width and banks.

    A bank of ``B = capacity / banks`` bits read ``W`` bits at a time is an array of
    ``C = max(W, sqrt B)`` columns by ``R = B / C`` rows (column mux ``C / W``). Per read::

        E = E0 * [ 0.45 (W/W0)(R/R0)             bitlines: W sensed columns, length ~ rows
                 + 0.15 (C/C0)                   wordline: runs across every column
                 + 0.15 (W/W0)                   data I/O: sense amps out, drivers
                 + 0.25 (W/W0) sqrt(Ctot/Ctot0)  H-tree: W bits across the whole macro
                 + 0.02 (W/W0) log2(banks) ]     bank select

    with ``E0`` the Horowitz 45 nm fit at the calibration point (32 KiB, W0 = 64 bits, one
    bank: R0 = C0 = 512): e0 * 4 ** alpha = 10.1595 * 4 ** 0.4726 = 19.5617 pJ. Writes and
    updates cost a read (the table's write_over_read = 1). Energy rises with capacity and
    width; more banks at equal capacity shorten bitlines and wordlines (less energy) but add
    bank select and periphery (more area)::

        area = bits * 0.346 um^2 + banks * (a_col * C + a_row * R + a_io * W)

    with the periphery coefficients set so that at the calibration point the periphery is
    the table's 30 % (array efficiency 0.7), split 60 / 30 / 10 between columns, rows and
    data bits. Leakage = area x the table's leakage per um^2 of an SRAM macro at that
    point. Other nodes multiply by the built-in node factors (component's ``technology_nm``,
    else the constructor's, else 45 nm). Only ``sram`` components: others are declined.
    """

    name = "sram-analytical"

    def __init__(self, technology_nm: float | None = None) -> None:
        self.technology_nm = technology_nm
        table = TableCostModel(45.0)
        cal = self.calibration_component()
        self.e0_pj = table.energy_pj(cal, "read")
        self.write_over_read = table.table.sram.write_over_read.value
        area = table.area_um2(cal)
        assert area is not None
        bits = SRAM_CAL_BYTES * _BITS_PER_BYTE
        self.cell_um2 = table.table.sram.bitcell_area_um2.value
        periphery = area - bits * self.cell_um2
        self.r0, self.c0 = _organisation(bits, SRAM_CAL_WIDTH_BITS)
        self.a_col = SRAM_PERIPHERY_SHARES["columns"] * periphery / self.c0
        self.a_row = SRAM_PERIPHERY_SHARES["rows"] * periphery / self.r0
        self.a_io = SRAM_PERIPHERY_SHARES["io"] * periphery / SRAM_CAL_WIDTH_BITS
        self.leak_per_um2 = table.leakage_mw(cal) / area

    @staticmethod
    def calibration_component(technology_nm: float = 45.0) -> SramComponent:
        """The SRAM the model is calibrated at: 32 KiB, 64-bit access, one bank."""
        return SramComponent(
            "sram-calibration",
            attributes={
                "capacity_bits": SRAM_CAL_BYTES * _BITS_PER_BYTE,
                "width_bits": SRAM_CAL_WIDTH_BITS,
                "banks": 1,
                "technology_nm": technology_nm,
            },
        )

    def supports(self, component: Component) -> bool:
        """SRAM only; the rest goes to the next model."""
        return isinstance(typed_component(component), SramComponent)

    def _shape(self, component: Component) -> tuple[float, float, float, float, float]:
        """(capacity bits, banks, width bits, rows, columns) of one bank of an SRAM."""
        if not isinstance(typed_component(component), SramComponent):
            raise _error(self, component, "sram-analytical prices only sram", "class")
        capacity = _number(self, component, "capacity_bits")
        banks = _number(self, component, "banks", 1)
        width = _width_bits(self, component)
        rows, columns = _organisation(capacity / banks, width)
        return capacity, banks, width, rows, columns

    def read_pj_45nm(self, component: Component) -> float:
        """Energy of one read at 45 nm (pJ): the sum of the class docstring."""
        capacity, banks, width, rows, columns = self._shape(component)
        w = width / SRAM_CAL_WIDTH_BITS
        shares = SRAM_ENERGY_SHARES
        total = math.sqrt(capacity / (SRAM_CAL_BYTES * _BITS_PER_BYTE))
        return self.e0_pj * (
            shares["bitline"] * w * rows / self.r0
            + shares["wordline"] * columns / self.c0
            + shares["io"] * w
            + shares["htree"] * w * total
            + SRAM_BANK_SELECT_SHARE * w * math.log2(banks)
        )

    def area_um2_45nm(self, component: Component) -> float:
        """Area of one instance at 45 nm (um^2): bit cells plus each bank's periphery."""
        capacity, banks, width, rows, columns = self._shape(component)
        periphery = self.a_col * columns + self.a_row * rows + self.a_io * width
        return capacity * self.cell_um2 + banks * periphery

    def energy_pj(self, component: Component, action: str) -> float:
        """A read, or a write / update (``write_over_read`` reads), at the node."""
        _check_action(self, component, action)
        read = self.read_pj_45nm(component)
        energy = read if action == "read" else read * self.write_over_read
        return energy * _factors(_node(component, self.technology_nm)).dynamic_energy

    def leakage_mw(self, component: Component) -> float:
        """Area times the table's leakage per um^2 of an SRAM macro, at the node."""
        leak = self.area_um2_45nm(component) * self.leak_per_um2
        return leak * _factors(_node(component, self.technology_nm)).leakage

    def area_um2(self, component: Component) -> float | None:
        """Area at the node (um^2)."""
        return self.area_um2_45nm(component) * _factors(_node(component, self.technology_nm)).area

    def describe(self, component: Component) -> str:
        """The organisation of a bank: rows, columns, column mux, banks."""
        _, banks, width, rows, columns = self._shape(component)
        return f"{rows:.0f} rows x {columns:.0f} cols, mux {columns / width:.3g}, {banks:g} bank(s)"


# ---- registration ------------------------------------------------------------------------
_register("horowitz45", Horowitz45, None, origin=BUILT_IN)
for _node_nm in (65, 32, 16, 7, 5):
    _register(f"horowitz45-{_node_nm}nm", _at_node(_node_nm), None, origin=BUILT_IN)
_register("eyeriss-normalized", EyerissNormalized, None, origin=BUILT_IN)
_register("table", DatasheetCostModel, None, origin=BUILT_IN)
_register("sram-analytical", SramAnalytical, None, origin=BUILT_IN)
