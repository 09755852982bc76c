"""Test plug-in: the built-in table, with every SRAM read costing twice as much."""

from __future__ import annotations

from magnet.cost.contract import Component, CostModel
from magnet.cost.tables import builtin_cost_model


class DoubleSramRead(CostModel):
    """Built-in table at the component's node; SRAM reads x2, everything else unchanged."""

    name = "double-sram-read"

    def _table(self, component: Component) -> CostModel:
        return builtin_cost_model(component.get("technology_nm", 45.0))

    def energy_pj(self, component: Component, action: str) -> float:
        energy = self._table(component).energy_pj(component, action)
        return 2 * energy if component.cls == "sram" and action == "read" else energy

    def leakage_mw(self, component: Component) -> float:
        return self._table(component).leakage_mw(component)

    def area_um2(self, component: Component) -> float | None:
        return self._table(component).area_um2(component)

    def clock_pj_per_cycle(self, component: Component) -> float:
        return self._table(component).clock_pj_per_cycle(component)
