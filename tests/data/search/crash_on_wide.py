"""Test plug-in: prices like the built-in table, but its process dies (``os._exit``) when it
prices a design whose input buffer reads 8 words at a time (vector units 8 lanes wide): a
worker that crashes, not an error it reports."""

from __future__ import annotations

import os

from magnet.cost.contract import Component, CostModel
from magnet.cost.tables import builtin_cost_model


class CrashOnWide(CostModel):
    name = "crash-on-wide"

    def supports(self, component: Component) -> bool:
        return component.name == "InputBuffer"

    def _table(self, component: Component) -> CostModel:
        if component.get("width_bits") == 64:
            os._exit(1)
        return builtin_cost_model(component.get("technology_nm"))

    def energy_pj(self, component: Component, action: str) -> float:
        return self._table(component).energy_pj(component, action)

    def leakage_mw(self, component: Component) -> float:
        return self._table(component).leakage_mw(component)

    def area_um2(self, component: Component) -> float | None:
        return self._table(component).area_um2(component)
