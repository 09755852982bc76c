"""``table:FILE.yaml``: measured numbers from a YAML datasheet (an SRAM compiler's rows of
capacity x width, optional MAC rows), interpolated bilinearly in log-log space
(``DatasheetCostModel``); the datasheet's schema (``Datasheet``)."""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from magnet.cost.contract import (
    MAX_COST,
    STORAGE_TYPES,
    Component,
    CostModel,
    Price,
    typed_component,
)
from magnet.cost.models.model_helpers import (
    BITS_PER_BYTE,
    access_width_bits,
    check_action,
    component_error,
    is_mac,
    node_factors,
    positive_number,
)
from magnet.errors import MagnetError, validation_message
from magnet.files import path_kind, read_yaml
from magnet.strict import Strict
from magnet.units import Real, Whole


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
                node_factors(sheet.technology_nm)
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
        capacity = positive_number(self, component, "capacity_bits")
        banks = positive_number(self, component, "banks", 1)
        return capacity / banks / BITS_PER_BYTE, access_width_bits(self, component), banks

    def _lookup(self, component: Component, key: str) -> float:
        bank_bytes, width, _ = self._bank(component)
        extrapolate = self.sheet.outside_range == "extrapolate"
        found = loglog_interpolate(
            self._caps, self._widths, self._grid[key], bank_bytes, width, extrapolate=extrapolate
        )
        if found is None:
            raise component_error(
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
            raise component_error(
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
            raise component_error(
                self,
                component,
                f"the datasheet is {sheet.technology_nm:g} nm but the component is at "
                f"{node:g} nm; use an architecture at {sheet.technology_nm:g} nm, or set "
                f"other_nodes: scale in {self.path} to apply magnet's node factors",
                "technology_nm",
            )
        there, here = node_factors(float(node)), node_factors(sheet.technology_nm)
        ratio: float = getattr(there, kind) / getattr(here, kind)
        return ratio

    def _within(self, component: Component, value: float, field: str) -> float:
        """``value``, a price of the datasheet's ``field`` for ``component`` (interpolated,
        scaled to its node, times its banks), unless it is more than ``MAX_COST``: bad input
        naming the file (its rows are within the bound, what they come to is not)."""
        if value > MAX_COST:
            raise component_error(
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
        if is_mac(component) and self._macs:
            return self._mac_format(component) in self._macs if decline else True
        return False

    def energy_pj(self, component: Component, action: str) -> float:
        """The MAC row's energy, or the action's energy interpolated over the SRAM rows."""
        check_action(self, component, action)
        scale = self._scale(component, "dynamic_energy")
        if is_mac(component):
            return self._within(component, self._mac(component).energy_pj * scale, "energy_pj")
        if not self._is_storage(component):
            raise component_error(
                self, component, "the datasheet does not price this class", "class"
            )
        return self._within(component, self._lookup(component, action) * scale, f"{action}_pj")

    def leakage_mw(self, component: Component) -> float:
        """The MAC row's leakage, or a bank's interpolated leakage times ``banks``."""
        scale = self._scale(component, "leakage")
        if is_mac(component):
            leakage = self._mac(component).leakage_uw / 1000.0 * scale  # uW -> mW
        else:
            _, _, banks = self._bank(component)
            leakage = self._lookup(component, "leakage") * banks * scale
        return self._within(component, leakage, "leakage_uw")

    def area_um2(self, component: Component) -> float | None:
        """The MAC row's area, or a bank's interpolated area times ``banks``; None when the
        rows give no area."""
        if is_mac(component):
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
        if is_mac(component):
            return f"MAC row {self._mac_format(component)}"
        bank_bytes, width, _ = self._bank(component)
        found = loglog_interpolate(self._caps, self._widths, self._grid["read"], bank_bytes, width)
        if found is None:
            return None
        how = "datasheet row" if found[1] == "exact" else found[1]
        return f"{how}: bank {bank_bytes:g} B x {width:g} bits"
