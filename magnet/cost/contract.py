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
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BeforeValidator

from magnet.errors import MagnetError
from magnet.units import real_number

#: The actions magnet asks the energy of, for each class of storage.
STORAGE_ACTIONS: tuple[str, ...] = ("read", "write", "update")

#: The parts of a chip beyond its components, in the order magnet prices them (the control
#: logic last: a share of the finished die).
OverheadKind = Literal[
    "controller", "clock_tree", "white_space", "pll", "die_to_die", "io", "control"
]
OVERHEAD_KINDS: tuple[str, ...] = get_args(OverheadKind)
#: What each overhead is, in one line (pages that show an area breakdown print these).
OVERHEAD_NOTES = {
    "controller": "control processor cores (a RISC-V per chip), placed as hard blocks",
    "clock_tree": "clock distribution: buffers and wires, a share of the standard-cell logic",
    "white_space": "placement slack: logic below full density, halos around the SRAM macros",
    "pll": "clock generation (a PLL per chip)",
    "die_to_die": "die-to-die link PHYs of a package's chiplets (GRS, UCIe)",
    "io": "pads and PHYs of the chip's off-chip interfaces",
    "control": "sequencers, address generators and configuration: a share of the die",
}
#: The overheads the built-in tables leave out, no published area having been found [NF]
#: (a cost-model plug-in may price them).
UNPRICED_OVERHEADS: tuple[str, ...] = ("pll", "die_to_die", "io")


@dataclass(frozen=True)
class Component:
    """A priced hardware component: its class and the attributes a model needs.

    Storage (sram, regfile, dram): ``capacity_bits`` (per instance; None for DRAM),
    ``width_bits`` (bits moved per access), ``word_bits``, ``banks``, ``technology_nm``.
    MAC: ``weight_bits`` x ``activation_bits`` multiply (``bits`` is the wider of the two),
    ``accum_bits`` accumulation, ``datatype`` ("int" or "float"), ``format`` (``int8``,
    ``fp16``, ``bf16``...), ``technology_nm``. Adder: ``bits``, ``datatype``. NoC (a link
    of the on-chip network): ``word_bits``, ``hop_mm``, ``topology`` (tree, mesh or
    systolic). Link (a package's
    chip-to-chip link): ``technology`` (a row of ``tables/links.yaml``) or ``pj_per_bit``
    (the user's own), ``hop_mm``. Router: one router of a
    mesh NoC (area only). Overhead: one ``kind`` of ``OVERHEAD_KINDS`` (area only),
    priced in that order from the areas before it: ``logic_area_um2`` (MACs, register
    files, routers, clock-gating cells and, after it, the clock tree), ``macro_area_um2``
    (SRAM macros and, after it, the controller cores), ``chip_area_um2`` (everything priced
    so far), ``controllers`` and ``chiplets`` (counts): ``controller`` (control processor
    cores), ``clock_tree``, ``white_space`` (placement density and macro halos), ``pll``
    (clock generation), ``die_to_die`` (a package's link PHYs), ``io`` (pads and PHYs) and
    ``control`` (sequencers, address generators, configuration: a share of the die).

    A storage action moves ``width_bits``; a MAC action is one multiply-accumulate; an add
    is one addition; a NoC action moves one word over one hop (magnet asks for a word of
    one bit over 1 mm, the energy per bit-mm); a link action moves one bit over one hop.

    magnet hands cost models the typed subclass of each class (``SramComponent``,
    ``MacComponent``, ... see ``COMPONENT_TYPES``), whose properties read the attributes
    with their types; ``cls``, ``get`` and ``attributes`` work on every component, and a
    plain ``Component(name, cls, attributes)`` is still accepted everywhere
    (``typed_component`` turns it into its typed class).
    """

    name: str
    cls: str
    attributes: Mapping[str, Any] = field(default_factory=dict)

    #: The values of ``cls`` a typed subclass stands for (empty: any, the plain base).
    classes: ClassVar[tuple[str, ...]] = ()
    #: The actions of this class magnet asks the energy of (``ACTIONS``).
    actions: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        """A typed subclass refuses a ``cls`` it does not stand for; the base takes any."""
        if self.classes and self.cls not in self.classes:
            raise ValueError(
                f"a {type(self).__name__} has class {' or '.join(self.classes)}, not {self.cls!r}"
            )

    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key`` as given (``default`` when absent), any type."""
        return self.attributes.get(key, default)

    @property
    def technology_nm(self) -> float | None:
        """The node the component is built in (nm), None when the component does not say."""
        return self._number("technology_nm")

    def _number(self, key: str) -> float | None:
        """The attribute ``key`` as a float, None when absent; a value of another
        type (a string, a boolean) raises ``MagnetError`` naming the component and field.
        Ranges are the cost models' to check."""
        value = self.attributes.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise self._type_error(key, value, "a number")
        return float(value)

    def _text(self, key: str) -> str | None:
        """The attribute ``key`` as a string, None when absent (``MagnetError`` otherwise)."""
        value = self.attributes.get(key)
        if value is None or isinstance(value, str):
            return value
        raise self._type_error(key, value, "a string")

    def _type_error(self, key: str, value: object, expected: str) -> MagnetError:
        return MagnetError(
            f"{key} = {value!r}; expected {expected}",
            source=f"component {self.name!r} ({self.cls})",
            field=key,
        )


@dataclass(frozen=True)
class StorageComponent(Component):
    """One instance of a storage level: ``sram``, ``regfile``, ``dram`` or ``dummy``."""

    classes: ClassVar[tuple[str, ...]] = ("sram", "regfile", "dram", "dummy")
    actions: ClassVar[tuple[str, ...]] = STORAGE_ACTIONS

    @property
    def capacity_bits(self) -> float | None:
        """Bits one instance holds; None when unbounded (DRAM) or not given."""
        return self._number("capacity_bits")

    @property
    def width_bits(self) -> float | None:
        """Bits one access moves (a block of words), None when not given."""
        return self._number("width_bits")

    @property
    def word_bits(self) -> float | None:
        """Bits of one word, None when not given."""
        return self._number("word_bits")

    @property
    def access_bits(self) -> float | None:
        """Bits one access moves: ``width_bits``, else ``word_bits`` (None if neither)."""
        width = self.width_bits
        return width if width is not None else self.word_bits

    @property
    def banks(self) -> float:
        """Banks one instance is split into (1 when not given); an access touches one."""
        banks = self._number("banks")
        return 1.0 if banks is None else banks


@dataclass(frozen=True)
class SramComponent(StorageComponent):
    """An SRAM macro (``cls == "sram"``)."""

    cls: str = "sram"
    classes: ClassVar[tuple[str, ...]] = ("sram",)


@dataclass(frozen=True)
class RegfileComponent(StorageComponent):
    """A register file (``cls == "regfile"``): flip-flops or latches, small."""

    cls: str = "regfile"
    classes: ClassVar[tuple[str, ...]] = ("regfile",)


@dataclass(frozen=True)
class DramComponent(StorageComponent):
    """Off-chip DRAM (``cls == "dram"``): priced per bit moved, no area on the chip."""

    cls: str = "dram"
    classes: ClassVar[tuple[str, ...]] = ("dram",)

    @property
    def dram_technology(self) -> str | None:
        """The DRAM technology (a row of ``magnet/cost/tables/dram.yaml``), None: generic."""
        return self._text("dram_technology")


@dataclass(frozen=True)
class DummyComponent(StorageComponent):
    """A level that keeps nothing (``cls == "dummy"``): it only splits a fan-out; free."""

    cls: str = "dummy"
    classes: ClassVar[tuple[str, ...]] = ("dummy",)


@dataclass(frozen=True)
class MacComponent(Component):
    """One multiply-accumulate unit (``cls == "mac"``); its action is ``compute``."""

    cls: str = "mac"
    classes: ClassVar[tuple[str, ...]] = ("mac",)
    actions: ClassVar[tuple[str, ...]] = ("compute",)

    @property
    def bits(self) -> float | None:
        """Width of the wider multiplier operand, None when not given."""
        return self._number("bits")

    @property
    def weight_bits(self) -> float | None:
        """Width of the weight operand, None when not given."""
        return self._number("weight_bits")

    @property
    def activation_bits(self) -> float | None:
        """Width of the activation (input) operand, None when not given."""
        return self._number("activation_bits")

    @property
    def accum_bits(self) -> float | None:
        """Width of the accumulator, None when not given."""
        return self._number("accum_bits")

    @property
    def datatype(self) -> str | None:
        """``int`` or ``float`` (cost models check the value), None when not given."""
        return self._text("datatype")

    @property
    def format(self) -> str | None:
        """The number format (``int8``, ``fp16``, ``bf16``...), None when not given."""
        return self._text("format")


@dataclass(frozen=True)
class AdderComponent(Component):
    """One adder (``cls == "adder"``): an add of an adder tree or of address generation."""

    cls: str = "adder"
    classes: ClassVar[tuple[str, ...]] = ("adder",)
    actions: ClassVar[tuple[str, ...]] = ("add",)

    @property
    def bits(self) -> float | None:
        """Width of the add, None when not given."""
        return self._number("bits")

    @property
    def datatype(self) -> str | None:
        """``int`` or ``float``, None when not given."""
        return self._text("datatype")


@dataclass(frozen=True)
class NocLinkComponent(Component):
    """One link of the on-chip network (``cls == "noc"``; ``network`` before magnet 0.3):
    its action, ``transfer``, moves one ``word_bits`` word over one hop of ``hop_mm``."""

    cls: str = "noc"
    classes: ClassVar[tuple[str, ...]] = ("noc",)
    actions: ClassVar[tuple[str, ...]] = ("transfer",)

    @property
    def word_bits(self) -> float | None:
        """Bits of one word moved, None when not given."""
        return self._number("word_bits")

    @property
    def hop_mm(self) -> float | None:
        """Length of one hop in millimetres, None when not given (a model's default)."""
        return self._number("hop_mm")

    @property
    def topology(self) -> str | None:
        """The fan-out's topology: ``tree``, ``mesh`` or ``systolic``; None when not given."""
        return self._text("topology")


@dataclass(frozen=True)
class LinkComponent(Component):
    """The chip-to-chip link of a package's fan-out (``cls == "link"``): its action,
    ``transfer``, moves one bit over one hop (neighbouring chiplets, ``hop_mm`` apart). The
    link is a named ``technology`` (a row of ``magnet/cost/tables/links.yaml``) or a user's
    own ``pj_per_bit``; it is the link's own energy at its own supply, not the chip's."""

    cls: str = "link"
    classes: ClassVar[tuple[str, ...]] = ("link",)
    actions: ClassVar[tuple[str, ...]] = ("transfer",)

    @property
    def technology(self) -> str | None:
        """The named link technology (``grs``, ``ucie-standard``...), None: not given."""
        return self._text("technology")

    @property
    def pj_per_bit(self) -> float | None:
        """The user's own energy per bit per hop (pJ), None: the technology's."""
        return self._number("pj_per_bit")

    @property
    def hop_mm(self) -> float | None:
        """Length of one hop (the chiplet pitch) in millimetres, None when not given."""
        return self._number("hop_mm")


@dataclass(frozen=True)
class RouterComponent(Component):
    """One router of a mesh NoC (``cls == "router"``): area only, no actions."""

    cls: str = "router"
    classes: ClassVar[tuple[str, ...]] = ("router",)


@dataclass(frozen=True)
class ClockGateComponent(Component):
    """One clock-gating cell (``cls == "clock_gate"``, an integrated clock gate: a latch and
    an AND) in front of a register a design gates on its load enable (``clock_gating:
    fine``): its clock energy per cycle (the cell and its share of the clock tree's trunk,
    which run every cycle), its area and leakage. No actions."""

    cls: str = "clock_gate"
    classes: ClassVar[tuple[str, ...]] = ("clock_gate",)


@dataclass(frozen=True)
class PowerGateComponent(Component):
    """The power switch of one gated domain (``cls == "power_gate"``: an instance of a
    level, or a MAC, under ``power_gating: idle-units``); its action ``wake`` charges the
    domain's supply again. ``domain_area_um2``: the area it supplies."""

    cls: str = "power_gate"
    classes: ClassVar[tuple[str, ...]] = ("power_gate",)
    actions: ClassVar[tuple[str, ...]] = ("wake",)

    @property
    def domain_area_um2(self) -> float | None:
        """Area of the gated domain (um^2), None when not known."""
        return self._number("domain_area_um2")


@dataclass(frozen=True)
class OverheadComponent(Component):
    """One part of a chip beyond its components (``cls == "overhead"``): area only, priced
    from the areas before it (see ``Component``)."""

    cls: str = "overhead"
    classes: ClassVar[tuple[str, ...]] = ("overhead",)

    @property
    def kind(self) -> str | None:
        """Which overhead: one of ``OVERHEAD_KINDS`` (cost models check), None: not given."""
        return self._text("kind")

    @property
    def logic_area_um2(self) -> float | None:
        """Area of the placed standard cells priced before this overhead (um^2)."""
        return self._number("logic_area_um2")

    @property
    def macro_area_um2(self) -> float | None:
        """Area of the SRAM macros (um^2)."""
        return self._number("macro_area_um2")

    @property
    def chip_area_um2(self) -> float | None:
        """Area of everything priced before this overhead (um^2)."""
        return self._number("chip_area_um2")

    @property
    def controllers(self) -> float | None:
        """How many control processor cores the design has (``controller``)."""
        return self._number("controllers")

    @property
    def chiplets(self) -> float | None:
        """How many chips the design is (``pll``, ``die_to_die``, ``io``: one set each)."""
        return self._number("chiplets")


#: The typed class of each storage class (``StorageLevel.component``).
STORAGE_TYPES: dict[str, type[StorageComponent]] = {
    "sram": SramComponent,
    "regfile": RegfileComponent,
    "dram": DramComponent,
    "dummy": DummyComponent,
}
#: The typed class of each component class (``Component.cls``), in the order magnet asks.
COMPONENT_TYPES: dict[str, type[Component]] = {
    **STORAGE_TYPES,
    "mac": MacComponent,
    "adder": AdderComponent,
    "noc": NocLinkComponent,
    "link": LinkComponent,
    "router": RouterComponent,
    "clock_gate": ClockGateComponent,
    "power_gate": PowerGateComponent,
    "overhead": OverheadComponent,
}
#: Component classes and the actions magnet asks of each.
ACTIONS: dict[str, tuple[str, ...]] = {name: kind.actions for name, kind in COMPONENT_TYPES.items()}


def typed_component(component: Component) -> Component:
    """``component`` as its typed class (``COMPONENT_TYPES[component.cls]``): itself when it
    is one already, else a copy with the same name and attributes. A component of a class
    magnet does not know is returned as it is."""
    kind = COMPONENT_TYPES.get(component.cls)
    if kind is None or isinstance(component, kind):
        return component
    return kind(component.name, component.cls, component.attributes)


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
    tables. Results are cached per architecture, so methods may be slow. The components
    magnet passes are of their typed class (``SramComponent``, ``MacComponent``, ...: see
    ``COMPONENT_TYPES``), so a model may test ``isinstance`` or read typed properties; a
    model that reads ``cls`` and ``get`` works as well.
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


#: The largest number a plug-in cost model may return (pJ per action, mW, um^2): 1e18 is a
#: megajoule per action, a petawatt, a square kilometre. Anything larger is a mistake of
#: units or a bug, and times the largest counts of a layer (about 1e75 MACs) could overflow.
MAX_COST = 1e18


def price(value: Any) -> float:
    """A price a user's data file gives (a datasheet's, a Timeloop ERT's or ART's): a number
    written as one (not text, not a boolean), finite and at most ``MAX_COST`` (``ValueError``
    naming the bound; its field adds the lower one)."""
    number = real_number(value)
    if number > MAX_COST:
        raise ValueError(
            f"expected at most {MAX_COST:g} (pJ, mW or um^2: a megajoule, a petawatt, a square "
            f"kilometre; check the units), got {number:g}"
        )
    return number


#: A pydantic field of a price (``price``), refused as bad input naming the file and the field
#: when the file is read, not when a design is priced.
Price = Annotated[float, BeforeValidator(price)]


def cost_problem(value: Any, limit: float = MAX_COST) -> str | None:
    """Why ``value`` is not a cost a model may return (None: it is one): a real number
    (not a string, a boolean, None or an array), finite, >= 0 and at most ``limit``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"a cost is a number, not {'None' if value is None else type(value).__name__}"
    try:
        number = float(value)
    except (OverflowError, ValueError):  # e.g. a Fraction beyond a float
        number = math.inf
    if not 0 <= number <= limit:  # NaN too
        most = "" if limit == math.inf else f" and at most {limit:g}"
        return f"a cost is a finite number >= 0{most}"
    return None


def checked(value: Any, model: CostModel, component: Component, what: str) -> float:
    """A number a cost model returned, finite and >= 0 (``cost_problem``; a plug-in's are
    checked against ``MAX_COST`` too, where they enter); else bad input."""
    problem = cost_problem(value, math.inf)
    if problem is not None:
        raise MagnetError(
            f"returned {value!r} for {what} of {component.name} ({component.cls}); {problem}",
            source=f"cost model {model.name!r}",
        )
    return float(value)
