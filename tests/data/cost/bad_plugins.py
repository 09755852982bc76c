"""Broken plug-ins: each one must give a clear MagnetError, never a traceback."""

from __future__ import annotations

import math
from typing import ClassVar

from magnet.cost.contract import Component, CostModel


class MissingMethods(CostModel):
    """Implements energy_pj only."""

    name = "missing-methods"

    def energy_pj(self, component: Component, action: str) -> float:
        return 1.0


class _Constant(CostModel):
    value = 1.0

    def supports(self, component: Component) -> bool:
        return component.cls == "sram"

    def energy_pj(self, component: Component, action: str) -> float:
        return self.value

    def leakage_mw(self, component: Component) -> float:
        return 0.0

    def area_um2(self, component: Component) -> float | None:
        return None


class NegativeEnergy(_Constant):
    name = "negative-energy"
    value = -1.0


class NanEnergy(_Constant):
    name = "nan-energy"
    value = math.nan


class StringEnergy(_Constant):
    name = "string-energy"
    value = "1.0"  # a number written as text: refused, not read as 1 pJ


class ClaimsButRaises(_Constant):
    """Claims every SRAM, but its lookup fails on the ones it has no macro for."""

    name = "claims-but-raises"
    macros: ClassVar[dict[str, float]] = {"GlobalBuffer": 4.0}

    def energy_pj(self, component: Component, action: str) -> float:
        return self.macros[component.name]


class BrokenConstructor(_Constant):
    name = "broken-constructor"

    def __init__(self) -> None:
        raise RuntimeError("license server unreachable")


class NotACostModel:
    """Has the methods but does not subclass CostModel."""

    name = "duck"

    def energy_pj(self, component, action):
        return 1.0
