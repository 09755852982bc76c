"""Cost-model plug-ins that misbehave (tests/test_plugin_values.py): each is loaded by path
(``misbehaving.py:CLASS``), as a user's would be, and must give one clear error naming it.

Every class prices SRAM only (the built-in table prices the rest) unless it says otherwise,
and returns ``value`` for the method named by ``method`` (the others answer sensibly).
"""

from __future__ import annotations

import fractions
import math
import sys
import time
from typing import Any

import numpy as np

from magnet.cost.contract import MAX_COST, Component, CostModel


class _Returns(CostModel):
    """Returns ``value`` from ``method``; 1 pJ, 0 mW and no area otherwise."""

    method = "energy_pj"
    value: Any = 1.0

    def supports(self, component: Component) -> bool:
        return self._answer("supports", component.cls == "sram")

    def energy_pj(self, component: Component, action: str) -> float:
        return self._answer("energy_pj", 1.0)

    def leakage_mw(self, component: Component) -> float:
        return self._answer("leakage_mw", 0.0)

    def area_um2(self, component: Component) -> float | None:
        return self._answer("area_um2", None)

    def clock_pj_per_cycle(self, component: Component) -> float:
        return self._answer("clock_pj_per_cycle", 0.0)

    def _answer(self, method: str, otherwise: Any) -> Any:
        return self.value if method == self.method else otherwise


# ---- values that are not a cost ------------------------------------------------------------
class InfEnergy(_Returns):
    name = "inf-energy"
    value = math.inf


class NanEnergy(_Returns):
    name = "nan-energy"
    value = math.nan


class NegativeEnergy(_Returns):
    name = "negative-energy"
    value = -0.5


class HugeEnergy(_Returns):
    """1e308 pJ per read: finite, but times any count it overflows to inf."""

    name = "huge-energy"
    value = 1e308


class FractionBeyondAFloat(_Returns):
    name = "fraction-energy"
    value = fractions.Fraction(10**400, 3)


class NoneEnergy(_Returns):
    name = "none-energy"
    value = None


class TextEnergy(_Returns):
    name = "text-energy"
    value = "1.0"


class ArrayEnergy(_Returns):
    name = "array-energy"
    value = np.array([1.0, 2.0])


class TrueEnergy(_Returns):
    name = "true-energy"
    value = True


class NegativeArea(_Returns):
    name = "negative-area"
    method = "area_um2"
    value = -5.0


class TextArea(_Returns):
    name = "text-area"
    method = "area_um2"
    value = "100 um2"


class HugeArea(_Returns):
    name = "huge-area"
    method = "area_um2"
    value = 1e308


class NegativeLeakage(_Returns):
    name = "negative-leakage"
    method = "leakage_mw"
    value = -1.0


class HugeLeakage(_Returns):
    name = "huge-leakage"
    method = "leakage_mw"
    value = 1e308


class NanClock(_Returns):
    name = "nan-clock"
    method = "clock_pj_per_cycle"
    value = math.nan


class SupportsText(_Returns):
    """'no' is a true string: read as True it would price every component."""

    name = "supports-text"
    method = "supports"
    value = "no"


class SupportsNone(_Returns):
    name = "supports-none"
    method = "supports"
    value = None


class DescribesWithADict(_Returns):
    name = "describes-with-a-dict"

    def describe(self, component: Component) -> Any:
        return {"note": component.name}


class NumpyNumbers(_Returns):
    """numpy scalars are numbers: accepted."""

    name = "numpy-numbers"
    value = np.float32(0.25)


# ---- prices at the edges of a float --------------------------------------------------------
class AtTheBound(CostModel):
    """Every price of every component at ``MAX_COST``, the largest a plug-in may give: every
    total stays finite."""

    name = "at-the-bound"

    def energy_pj(self, component: Component, action: str) -> float:
        return MAX_COST

    def leakage_mw(self, component: Component) -> float:
        return MAX_COST

    def area_um2(self, component: Component) -> float | None:
        return MAX_COST

    def clock_pj_per_cycle(self, component: Component) -> float:
        return MAX_COST


class AllZero(CostModel):
    """Every price 0 (each allowed): a network's energy is 0 pJ, its TOPS/W infinite."""

    name = "all-zero"

    def energy_pj(self, component: Component, action: str) -> float:
        return 0.0

    def leakage_mw(self, component: Component) -> float:
        return 0.0

    def area_um2(self, component: Component) -> float | None:
        return 0.0


# ---- code that leaves by a BaseException ---------------------------------------------------
class _Leaves(_Returns):
    """Leaves its ``energy_pj`` by ``how``."""

    how = "exit 3"

    def energy_pj(self, component: Component, action: str) -> float:
        leave(self.how)
        return 1.0


def leave(how: str) -> None:
    """Leave the way ``how`` says (a plug-in's bug, or its idea of stopping)."""
    if how == "exit 3":
        sys.exit(3)
    if how == "exit 0":
        sys.exit(0)
    if how == "exit":
        sys.exit()
    if how == "KeyboardInterrupt":
        raise KeyboardInterrupt
    if how == "GeneratorExit":
        raise GeneratorExit
    if how == "BaseException":
        raise GivingUp("the datasheet ran out")


class GivingUp(BaseException):
    """A BaseException of the plug-in's own."""


class Exits3(_Leaves):
    name = "exits-3"
    how = "exit 3"


class Exits0(_Leaves):
    name = "exits-0"
    how = "exit 0"


class ExitsBare(_Leaves):
    name = "exits-bare"
    how = "exit"


class RaisesKeyboardInterrupt(_Leaves):
    name = "raises-keyboard-interrupt"
    how = "KeyboardInterrupt"


class RaisesGeneratorExit(_Leaves):
    name = "raises-generator-exit"
    how = "GeneratorExit"


class RaisesBaseException(_Leaves):
    name = "raises-base-exception"
    how = "BaseException"


class ExitsWhenBuilt(_Returns):
    name = "exits-when-built"

    def __init__(self) -> None:
        sys.exit("no license")


class InterruptsWhenBuilt(_Returns):
    name = "interrupts-when-built"

    def __init__(self) -> None:
        raise KeyboardInterrupt


def a_minute() -> None:
    """Wait a minute, a tenth of a second at a time: a Ctrl-C that lands between a print and
    one long ``time.sleep`` (its signal handled before the sleep starts) would otherwise
    wait the whole minute; each short sleep lets Python raise it."""
    for _ in range(600):
        time.sleep(0.1)


class Slow(_Returns):
    """Says on stderr that it prices, then takes a minute (a Ctrl-C test interrupts it)."""

    name = "slow"

    def energy_pj(self, component: Component, action: str) -> float:
        print("the slow plug-in prices", file=sys.stderr, flush=True)
        a_minute()
        return 1.0


class SlowThenExits(Slow):
    """Slow, and turns the Ctrl-C it gets into ``sys.exit(1)``: still the user's interrupt."""

    name = "slow-then-exits"

    def energy_pj(self, component: Component, action: str) -> float:
        try:
            return super().energy_pj(component, action)
        except KeyboardInterrupt:
            sys.exit(1)


class SlowThenSwallows(Slow):
    """Slow, and swallows the Ctrl-C it gets (``except BaseException``): the user's interrupt
    still stands once it returns."""

    name = "slow-then-swallows"

    def energy_pj(self, component: Component, action: str) -> float:
        try:
            return super().energy_pj(component, action)
        except BaseException:
            return 1.0


# ---- wide designs only (a search: the first design of the space prices) ---------------------
class _OnWide(_Returns):
    """Prices the InputBuffer; on a design whose input reads are wider than 32 bits (8-lane
    vector units) it leaves by ``how``; 4-lane designs price."""

    how = "KeyboardInterrupt"

    def supports(self, component: Component) -> bool:
        return component.name == "InputBuffer"

    def energy_pj(self, component: Component, action: str) -> float:
        if component.get("width_bits") != 32:
            leave(self.how)
        return 1.0


class InterruptsOnWide(_OnWide):
    name = "interrupts-on-wide"
    how = "KeyboardInterrupt"


class ExitsOnWide(_OnWide):
    name = "exits-on-wide"
    how = "exit 0"


class SlowOnWide(_OnWide):
    """Slow on wide designs, turning the Ctrl-C into ``sys.exit(1)``."""

    name = "slow-on-wide"

    def energy_pj(self, component: Component, action: str) -> float:
        if component.get("width_bits") != 32:
            print("the slow plug-in prices", file=sys.stderr, flush=True)
            try:
                a_minute()
            except KeyboardInterrupt:
                sys.exit(1)
        return 1.0


# ---- other mistakes --------------------------------------------------------------------------
class NeedsADatasheet(_Returns):
    name = "needs-a-datasheet"

    def __init__(self, datasheet: str) -> None:
        self.datasheet = datasheet


class WrongSignature(_Returns):
    name = "wrong-signature"

    def energy_pj(self, component: Component) -> float:  # type: ignore[override]
        return 1.0


class Prints(_Returns):
    """Prints on stdout each time it is asked (its author's debugging)."""

    name = "prints"

    def energy_pj(self, component: Component, action: str) -> float:
        print(f"pricing {component.name} {action}")
        return 1.0


class ChangesTheComponent(_Returns):
    """Shrinks every SRAM it is shown to one bit, then declines it: the built-in table must
    still price the SRAM as it is."""

    name = "changes-the-component"

    def supports(self, component: Component) -> bool:
        if component.cls == "sram":
            component.attributes["capacity_bits"] = 1  # type: ignore[index]
        return False


class NamedLikeTheTable(_Returns):
    name = "horowitz45"


class NamedLikeTheScaledTable(_Returns):
    name = "horowitz45-scaled-16nm"


class NamedLikeEyeriss(_Returns):
    name = "eyeriss-normalized"


class NamedOnTwoLines(_Returns):
    name = "my\nmodel"
