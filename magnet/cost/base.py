"""The cost contract: what a cost model prices, and when magnet asks.

magnet prices an architecture once per (architecture, cost model) pair, before any mapping is
evaluated: for every component it asks the energy of each action, the leakage power and the
area. The evaluator then multiplies those numbers by the access counts of each mapping,
so a cost model is never called inside the inner loop of a search.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from magnet.errors import MagnetError

# Component classes and the actions magnet asks of each.
ACTIONS: dict[str, tuple[str, ...]] = {
    "sram": ("read", "write", "update"),
    "regfile": ("read", "write", "update"),
    "dram": ("read", "write", "update"),
    "dummy": ("read", "write", "update"),
    "mac": ("compute",),
    "adder": ("add",),
    "network": ("transfer",),
    "router": (),
    "overhead": (),
}


#: The parts of a chip beyond its components, in the order magnet prices them.
OverheadKind = Literal["clock_tree", "white_space", "control", "io"]
OVERHEAD_KINDS: tuple[str, ...] = get_args(OverheadKind)
#: What each overhead is, in one line (pages that show an area breakdown print these).
OVERHEAD_NOTES = {
    "clock_tree": "clock distribution: buffers and wires, a share of the standard-cell logic",
    "white_space": "placement slack: logic below full density, halos around the SRAM macros",
    "control": "sequencers, address generators and configuration: a share of the die",
    "io": "pads and PHYs of the chip's off-chip interfaces",
}


@dataclass(frozen=True)
class Component:
    """A priced hardware component: its class and the attributes a model needs.

    Storage (sram, regfile, dram): ``capacity_bits`` (per instance; None for DRAM),
    ``width_bits`` (bits moved per access), ``word_bits``, ``banks``, ``technology_nm``.
    MAC: ``weight_bits`` x ``activation_bits`` multiply (``bits`` is the wider of the two),
    ``accum_bits`` accumulation, ``datatype`` ("int" or "float"), ``format`` (``int8``,
    ``fp16``, ``bf16``...), ``technology_nm``. Adder: ``bits``, ``datatype``. Network:
    ``word_bits``, ``hop_mm``, ``network`` (tree, mesh or systolic). Router: one router of a
    mesh network (area only). Overhead: one ``kind`` of ``OVERHEAD_KINDS`` (area only),
    priced in that order from the areas before it: ``logic_area_um2`` (MACs, register
    files, routers and, after it, the clock tree), ``macro_area_um2`` (SRAM macros) and
    ``chip_area_um2`` (everything priced so far): ``clock_tree``, ``white_space`` (placement
    density and macro halos), ``control`` (sequencers, address generators, configuration)
    and ``io`` (pads and PHYs).

    A storage action moves ``width_bits``; a MAC action is one multiply-accumulate; an add
    is one addition; a network action moves one word over one hop (magnet asks for a word of
    one bit over 1 mm, the energy per bit-mm).
    """

    name: str
    cls: str
    attributes: Mapping[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)


class CostModel(ABC):
    """Base class of every cost model (built-in tables and user plug-ins).

    Lifecycle: magnet builds the model once (no arguments), then, for each architecture it
    evaluates, calls ``supports`` on every component; for the components it supports it calls
    ``energy_pj`` once per action of that class (see ``ACTIONS``), ``leakage_mw``,
    ``clock_pj_per_cycle`` and ``area_um2``. Numbers are at the node's nominal supply:
    magnet scales dynamic energy with the square of the architecture's operating voltage and
    leakage power linearly with it, and charges leakage power for the run's duration in
    seconds (a slower clock leaks longer).

    Contract v2 (magnet 0.3): ``leakage_pj_per_cycle`` became ``leakage_mw``, a power. A
    model that returned pJ per cycle at 1 GHz returns the same number as milliwatts.
    Components a model declines go to the next model in the chain, finally to the built-in
    tables. Results are cached per architecture, so methods may be slow.
    """

    #: Name used on the command line (``--cost-model NAME``) and in reports.
    name: str = "custom"

    def supports(self, component: Component) -> bool:
        """Return False to let the next model price ``component``. Called once per component."""
        return True

    @abstractmethod
    def energy_pj(self, component: Component, action: str) -> float:
        """Energy of one ``action`` on one instance of ``component``, in picojoules."""

    @abstractmethod
    def leakage_mw(self, component: Component) -> float:
        """Leakage power of one powered instance at the node's nominal supply, in milliwatts
        (static energy = this x the run's duration: 1 mW for 1 ns is 1 pJ)."""

    @abstractmethod
    def area_um2(self, component: Component) -> float | None:
        """Area of one instance in square micrometres; None when the model has no area."""

    def clock_pj_per_cycle(self, component: Component) -> float:
        """Clock energy of one instance per cycle (its share of the clock tree and the clock
        pins of its flip-flops), in picojoules. Models without one return 0."""
        return 0.0


def checked(value: Any, model: CostModel, component: Component, what: str) -> float:
    """Validate a number a cost model returned: a real number (not a string or a boolean),
    finite and not negative."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise MagnetError(
            f"returned {value!r} for {what} of {component.name} ({component.cls}); "
            "expected a number in pJ / um^2",
            source=f"cost model {model.name!r}",
        )
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise MagnetError(
            f"returned {number} for {what} of {component.name} ({component.cls}); "
            "costs must be finite and >= 0",
            source=f"cost model {model.name!r}",
        )
    return number
