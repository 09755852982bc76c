"""Example magnet cost-model plug-in: an SRAM compiler's datasheet plus a MAC library.

Use it without installing anything::

    magnet evaluate --arch simba-chip --layer "K=64,C=64,P=56,Q=56,R=3,S=3" \\
        --mapping experiments/mappings/simba-chip_resnet50_res2a_branch2b.yaml \\
        --cost-model cost_models/sram_compiler.py:SramCompiler

or from Python::

    from magnet.cost.lookup import load_cost_model
    model = load_cost_model("cost_models/sram_compiler.py:SramCompiler")

It reads ``sram_compiler_28nm.yaml`` next to this file (ILLUSTRATIVE numbers, not a
vendor's) and prices

- ``sram`` components: the read / write energy, leakage and area of one bank
  (``capacity_bits / banks``) at the access width, interpolated between datasheet rows as a
  power law in capacity and in width (bilinear in log-log space); banks outside the
  datasheet are declined (the next model prices them), never extrapolated;
- ``mac`` components: the row of the MAC library whose format is the compute level's
  ``format`` attribute (``int4``, ``int8``, ``fp16``, ``bf16``), else ``int<bits>`` /
  ``fp<bits>``;

and declines everything else (register files, DRAM, NoC links), which the next model of the
chain (finally magnet's built-in table) prices. The datasheet is 28 nm; a component at
another node is scaled with magnet's built-in node factors (``scaling.yaml``).

The same file also loads as ``--cost-model table:cost_models/sram_compiler_28nm.yaml``
(magnet's generic datasheet model); this class is the hand-written equivalent, to show the
``CostModel`` contract: ``supports``, ``energy_pj``, ``leakage_mw``, ``area_um2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypedDict

from magnet.cost.contract import Component, CostModel
from magnet.cost.tables import load_scaling_table, scaling_factors
from magnet.errors import MagnetError
from magnet.files import read_yaml

DATASHEET = Path(__file__).resolve().parent / "sram_compiler_28nm.yaml"


class SramRow(TypedDict):
    """One SRAM macro of the datasheet (``sram.rows``)."""

    capacity_bytes: int
    width_bits: int
    read_pj: float
    write_pj: float
    leakage_uw: float
    area_um2: float


class MacRow(TypedDict):
    """One MAC of the library (``mac``), by number format."""

    format: str
    energy_pj: float
    leakage_uw: float
    area_um2: float


def _power_law(x: float, x0: float, x1: float, y0: float, y1: float) -> float:
    """y at x on the straight line through (x0, y0), (x1, y1) in log-log space."""
    if x0 == x1:
        return y0
    t = math.log(x / x0) / math.log(x1 / x0)
    if y0 > 0 and y1 > 0:
        return y0 * float((y1 / y0) ** t)
    return y0 + (y1 - y0) * t  # a zero (no leakage): linear in the value


def _neighbours(axis: list[float], x: float) -> tuple[float, float] | None:
    """The grid values around x (x, x on a grid line); None outside the grid."""
    if x in axis:
        return x, x
    if not axis[0] < x < axis[-1]:
        return None
    above = next(v for v in axis if v > x)
    return axis[axis.index(above) - 1], above


class SramCompiler(CostModel):
    """28 nm SRAM-compiler datasheet and MAC library (illustrative numbers)."""

    name = "sram-compiler-28nm"

    def __init__(self, datasheet: str | Path = DATASHEET) -> None:
        self.path = Path(datasheet)
        sheet = read_yaml(self.path)  # magnet's YAML reader: a key given twice is an error
        self.node_nm = float(sheet["technology_nm"])
        rows: list[SramRow] = sheet["sram"]["rows"]
        self.rows = {(r["capacity_bytes"], r["width_bits"]): r for r in rows}
        self.capacities = sorted({float(c) for c, _ in self.rows})
        self.widths = sorted({float(w) for _, w in self.rows})
        macs: list[MacRow] = sheet.get("mac", [])
        self.macs = {row["format"]: row for row in macs}
        self.scaling = load_scaling_table()

    # -- the contract ----------------------------------------------------------------------
    def supports(self, component: Component) -> bool:
        """SRAM banks the datasheet covers and MACs of its library; the rest goes on."""
        if component.cls == "sram":
            return self._in_range(component)
        return component.cls == "mac" and self._format(component) in self.macs

    def energy_pj(self, component: Component, action: str) -> float:
        """The MAC row's energy, or the SRAM rows' read / write energy (an update is a
        write) interpolated at the bank, scaled to the component's node."""
        scale = self._node_factor(component, "dynamic_energy")
        if component.cls == "mac":
            return self.macs[self._format(component)]["energy_pj"] * scale
        # an update (the read-modify-write of a partial sum) is priced as a write
        column: Literal["read_pj", "write_pj"] = "read_pj" if action == "read" else "write_pj"
        return self._interpolate(component, lambda row: row[column]) * scale

    def leakage_mw(self, component: Component) -> float:
        """The MAC row's leakage, or a bank's interpolated leakage times its banks (mW)."""
        scale = self._node_factor(component, "leakage")
        if component.cls == "mac":
            return self.macs[self._format(component)]["leakage_uw"] / 1000.0 * scale  # uW -> mW
        bank = self._interpolate(component, lambda row: row["leakage_uw"] / 1000.0)
        banks: float = component.get("banks", 1)
        return bank * banks * scale

    def area_um2(self, component: Component) -> float | None:
        """The MAC row's area, or a bank's interpolated area times its banks (um^2)."""
        scale = self._node_factor(component, "area")
        if component.cls == "mac":
            return self.macs[self._format(component)]["area_um2"] * scale
        bank = self._interpolate(component, lambda row: row["area_um2"])
        banks: float = component.get("banks", 1)
        return bank * banks * scale

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _format(component: Component) -> str:
        if component.get("format") is not None:
            return str(component.get("format"))
        kind = "int" if component.get("datatype", "int") == "int" else "fp"
        return f"{kind}{component.get('bits', 8):g}"

    @staticmethod
    def _bank(component: Component) -> tuple[float, float]:
        """(bytes of one bank, bits of one access)."""
        bank_bytes: float = component.get("capacity_bits") / component.get("banks", 1) / 8
        width: float = component.get("width_bits") or component.get("word_bits")
        return bank_bytes, width

    def _in_range(self, component: Component) -> bool:
        bank_bytes, width = self._bank(component)
        return None not in (
            _neighbours(self.capacities, bank_bytes),
            _neighbours(self.widths, width),
        )

    def _interpolate(self, component: Component, value: Callable[[SramRow], float]) -> float:
        """``value`` of the rows at the component's bank: a power law in width on the two
        capacity lines around it, then in capacity between them; outside: refused."""
        bank_bytes, width = self._bank(component)
        caps = _neighbours(self.capacities, bank_bytes)
        widths = _neighbours(self.widths, width)
        if caps is None or widths is None:
            raise MagnetError(
                f"{component.name}: a bank of {bank_bytes:g} bytes x {width:g} bits is outside "
                f"the datasheet ({self.capacities[0]:g}..{self.capacities[-1]:g} bytes, "
                f"{self.widths[0]:g}..{self.widths[-1]:g} bits); extrapolation is refused",
                source=f"cost model {self.name!r} ({self.path})",
            )
        (c0, c1), (w0, w1) = caps, widths

        def at(c: float, w: float) -> float:
            return value(self.rows[int(c), int(w)])

        # power law in width on the two capacity lines, then in capacity between them
        low = _power_law(width, w0, w1, at(c0, w0), at(c0, w1))
        high = _power_law(width, w0, w1, at(c1, w0), at(c1, w1))
        return _power_law(bank_bytes, c0, c1, low, high)

    def _node_factor(self, component: Component, kind: str) -> float:
        """magnet's node factor ``kind`` from the datasheet's node to the component's."""
        node = component.get("technology_nm")
        if node is None or node == self.node_nm:
            return 1.0
        there = scaling_factors(node, self.scaling)
        here = scaling_factors(self.node_nm, self.scaling)
        ratio: float = getattr(there, kind) / getattr(here, kind)
        return ratio
