"""Test plug-in with a bug: it prices input buffers from a lookup table that only has the
32-bit-wide macro, so every design with 8-lane vector units (64-bit input reads) raises a
``KeyError`` inside the plug-in: an exception in user code, not an infeasible design."""

from __future__ import annotations

from magnet.cost.contract import Component, CostModel
from magnet.cost.tables import builtin_cost_model

#: read energy per 32-bit access of the one macro this table has (an assumption of the test)
READ_PJ_BY_WIDTH_BITS = {32: 1.0}


class RaiseOnWide(CostModel):
    name = "raise-on-wide"

    def supports(self, component: Component) -> bool:
        return component.name == "InputBuffer"

    def energy_pj(self, component: Component, action: str) -> float:
        return READ_PJ_BY_WIDTH_BITS[component.get("width_bits")]

    def leakage_mw(self, component: Component) -> float:
        return builtin_cost_model(component.get("technology_nm")).leakage_mw(component)

    def area_um2(self, component: Component) -> float | None:
        return builtin_cost_model(component.get("technology_nm")).area_um2(component)
