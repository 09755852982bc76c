"""Example magnet cost-model plug-in: an SRAM compiler's datasheet plus a MAC library.

Use it without installing anything::

    magnet evaluate --arch simba-chip --layer "K=64,C=64,P=56,Q=56,R=3,S=3" \\
        --mapping experiments/mappings/simba-chip_resnet50_res2a_branch2b.yaml \\
        --cost-model magnet/examples/sram_compiler.py:SramCompiler

or from Python::

    from magnet.cost.registry import load_cost_model
    model = load_cost_model("magnet/examples/sram_compiler.py:SramCompiler")

It reads ``sram_compiler_28nm.yaml`` next to this file (ILLUSTRATIVE numbers, not a
vendor's) and prices

- ``sram`` components: the read / write energy, leakage and area of one bank
  (``capacity_bits / banks``) at the access width, interpolated between datasheet rows as a
  power law in capacity and in width (bilinear in log-log space); banks outside the
  datasheet are declined (the next model prices them), never extrapolated;
- ``mac`` components: the row of the MAC library whose format is the compute level's
  ``format`` attribute (``int4``, ``int8``, ``fp16``, ``bf16``), else ``int<bits>`` /
  ``fp<bits>``;

and declines everything else (register files, DRAM, networks), which the next model of the
chain (finally magnet's built-in table) prices. The datasheet is 28 nm; a component at
another node is scaled with magnet's built-in node factors (``scaling.yaml``).

The same file also loads as ``--cost-model table:magnet/examples/sram_compiler_28nm.yaml``
(magnet's generic datasheet model); this class is the hand-written equivalent, to show the
``CostModel`` contract: ``supports``, ``energy_pj``, ``leakage_mw``, ``area_um2``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import yaml

from magnet.cost.base import Component, CostModel
from magnet.cost.tables import load_scaling_table, scaling_factors
from magnet.errors import MagnetError

DATASHEET = Path(__file__).resolve().parent / "sram_compiler_28nm.yaml"


def _power_law(x: float, x0: float, x1: float, y0: float, y1: float) -> float:
    """y at x on the straight line through (x0, y0), (x1, y1) in log-log space."""
    if x0 == x1:
        return y0
    t = math.log(x / x0) / math.log(x1 / x0)
    if y0 > 0 and y1 > 0:
        return y0 * (y1 / y0) ** t
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
        sheet = yaml.safe_load(self.path.read_text(encoding="utf-8"))
        self.node_nm = float(sheet["technology_nm"])
        self.rows = {(r["capacity_bytes"], r["width_bits"]): r for r in sheet["sram"]["rows"]}
        self.capacities = sorted({float(c) for c, _ in self.rows})
        self.widths = sorted({float(w) for _, w in self.rows})
        self.macs = {row["format"]: row for row in sheet.get("mac", [])}
        self.scaling = load_scaling_table()

    # -- the contract ----------------------------------------------------------------------
    def supports(self, component: Component) -> bool:
        """SRAM banks the datasheet covers and MACs of its library; the rest goes on."""
        if component.cls == "sram":
            return self._in_range(component)
        return component.cls == "mac" and self._format(component) in self.macs

    def energy_pj(self, component: Component, action: str) -> float:
        scale = self._node_factor(component, "dynamic_energy")
        if component.cls == "mac":
            return self.macs[self._format(component)]["energy_pj"] * scale
        column = {"read": "read_pj", "write": "write_pj", "update": "write_pj"}[action]
        return self._interpolate(component, lambda row: row[column]) * scale

    def leakage_mw(self, component: Component) -> float:
        scale = self._node_factor(component, "leakage")
        if component.cls == "mac":
            return self.macs[self._format(component)]["leakage_uw"] / 1000.0 * scale  # uW -> mW
        bank = self._interpolate(component, lambda row: row["leakage_uw"] / 1000.0)
        return bank * component.get("banks", 1) * scale

    def area_um2(self, component: Component) -> float | None:
        scale = self._node_factor(component, "area")
        if component.cls == "mac":
            return self.macs[self._format(component)]["area_um2"] * scale
        bank = self._interpolate(component, lambda row: row["area_um2"])
        return bank * component.get("banks", 1) * scale

    # -- helpers -----------------------------------------------------------------------------
    @staticmethod
    def _format(component: Component) -> str:
        if component.get("format") is not None:
            return str(component.get("format"))
        kind = "int" if component.get("datatype", "int") == "int" else "fp"
        return f"{kind}{component.get('bits', 8):g}"

    @staticmethod
    def _bank(component: Component) -> tuple[float, float]:
        bank_bytes = component.get("capacity_bits") / component.get("banks", 1) / 8
        return bank_bytes, component.get("width_bits") or component.get("word_bits")

    def _in_range(self, component: Component) -> bool:
        bank_bytes, width = self._bank(component)
        return None not in (
            _neighbours(self.capacities, bank_bytes),
            _neighbours(self.widths, width),
        )

    def _interpolate(self, component: Component, value: Callable[[dict], float]) -> float:
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
        node = component.get("technology_nm")
        if node is None or node == self.node_nm:
            return 1.0
        there = scaling_factors(node, self.scaling)
        here = scaling_factors(self.node_nm, self.scaling)
        return getattr(there, kind) / getattr(here, kind)
