"""Test plug-in that prices only the MAC (1 pJ) and declines every other component."""

from __future__ import annotations

from magnet.cost.contract import Component, CostModel


class MacOnly(CostModel):
    name = "mac-only"

    def supports(self, component: Component) -> bool:
        return component.cls == "mac"

    def energy_pj(self, component: Component, action: str) -> float:
        return 1.0

    def leakage_mw(self, component: Component) -> float:
        return 0.0

    def area_um2(self, component: Component) -> float | None:
        return None
