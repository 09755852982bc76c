"""Pricing an architecture: ``price_arch`` asks a chain of cost models (the built-in table
last) for every component of an architecture once, and returns ``ArchCosts``: per-action
energies, static energy, the adder-tree and wire energies, and the floorplan (areas, and the
pitch of every fan-out's children, which sets how far a word travels).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple, get_args

import numpy as np
import numpy.typing as npt

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.arguments import checked_call
from magnet.cost.contract import (
    OVERHEAD_KINDS,
    STORAGE_TYPES,
    AdderComponent,
    ClockGateComponent,
    Component,
    CostModel,
    DramComponent,
    LinkComponent,
    MacComponent,
    NocLinkComponent,
    OverheadComponent,
    PowerGateComponent,
    RegfileComponent,
    RouterComponent,
    SramComponent,
    StorageComponent,
    checked,
)
from magnet.errors import MagnetError

#: An array of floats; its axes are said where it is made.
FloatArray = npt.NDArray[np.float64]

#: How the on-chip network (NoC) is priced: ``wires`` (bits x distance x energy per bit-mm,
#: plus the adds of reductions in the NoC) or ``none`` (free, as Timeloop's legacy network).
NocModel = Literal["wires", "none"]
NOC_MODELS: tuple[str, ...] = get_args(NocModel)
#: Pitch of a fan-out's children when the cost model gives no area (assumption: a
#: neighbouring PE or vector unit 0.1 mm away, the order of Simba's vector units).
DEFAULT_PITCH_MM = 0.1


@dataclass(frozen=True)
class PostCosts:
    """What the post-processing unit costs (``Arch.postprocess``), at the architecture's
    supply: one operation of each kind of ``POSTPROCESS_UNIT_OPS`` (``op_pj``), one word
    read from or written to its buffer and that access's address add, the clock energy and
    leakage power of one instance per cycle, and the area of all of them (um^2)."""

    op_pj: dict[str, float]
    buffer_read_pj: float
    buffer_write_pj: float
    buffer_control_pj: float
    clock_pj_per_cycle: float
    leak_mw: float
    area_um2: float | None = None
    #: the area of one of each of its parts, by component name (a lane's multiply-add unit
    #: and adder, the table, the buffer), as the cost models gave them
    part_area_um2: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ArchCosts:
    """What one architecture costs under one cost model. Arrays are per storage level,
    index 0 innermost; storage energies are per access (one block of ``access_bits``).

    Per instance: leakage power ``leak_mw`` and clock energy per cycle ``clock_pj_per_cycle``
    (and the ``mac_`` ones), at the architecture's supply; ``wake_pj`` (and ``mac_wake_pj``)
    wakes one power-gated instance; ``gate_clock_pj_per_cycle`` and ``gate_area_um2`` are
    one clock-gating cell's clock per cycle and area (``clock_gating: fine``: one per
    register that loads, ``gated``; no area otherwise).
    ``control_pj_per_access``: the address generation of one access of each level (one add
    at its address width).

    Math: ``mac_pj`` is one multiply-accumulate; a fan-out whose children are reduced in an
    adder tree has ``tree_pj[level][r]``, the adds that merge ``r`` products, and
    ``accum_add_pj`` is the accumulation inside ``mac_pj`` that such a tree replaces for all
    but one of its inputs. ``reduce_add_pj`` prices one merge of two
    partial sums in an interconnect reduction. Wires: ``wire_pj_per_bit_mm`` per fan-out and the
    pitch of its children (``pitch_mm``); zero when ``noc == "none"``. A package's fan-out
    over chip-to-chip links has ``link_pj_per_bit``, one bit over one hop as the cost-model
    chain priced its ``LinkComponent`` (0 elsewhere), and its wire energy is that over the
    pitch, whatever ``noc``.
    """

    read_pj: np.ndarray
    write_pj: np.ndarray
    update_pj: np.ndarray
    leak_mw: np.ndarray
    clock_pj_per_cycle: np.ndarray
    control_pj_per_access: np.ndarray
    mac_pj: float
    mac_leak_mw: float
    mac_clock_pj_per_cycle: float
    wake_pj: np.ndarray
    mac_wake_pj: float
    gate_clock_pj_per_cycle: float
    gate_area_um2: float
    accum_add_pj: float
    tree_pj: tuple[np.ndarray | None, ...]
    reduce_add_pj: np.ndarray
    wire_pj_per_bit_mm: np.ndarray
    link_pj_per_bit: np.ndarray
    pitch_mm: np.ndarray
    noc: NocModel
    area_um2_by_component: dict[str, float]
    area_known: bool
    model_name: str
    model_identity: str  # the chain's plug-ins by identity (magnet.registry): cache keys
    sources: dict[str, str] = field(default_factory=dict)  # component -> model that priced it
    postprocess: PostCosts | None = None  # the post-processing unit (None: the arch has none)

    def __post_init__(self) -> None:
        """The arrays are read-only: every layer mapped on a design shares its prices (a
        plug-in mapper that wrote into them would change every later result)."""
        for value in vars(self).values():
            for array in value if isinstance(value, tuple) else (value,):
                if isinstance(array, np.ndarray):
                    array.flags.writeable = False

    @property
    def gated(self) -> np.ndarray:
        """bool[level]: the levels whose instances have a clocked register (a clock-gating
        cell each, under ``clock_gating: fine``); every MAC has one (its input register)."""
        gated: np.ndarray = self.clock_pj_per_cycle > 0
        return gated

    @property
    def area_mm2(self) -> float | None:
        """Total area with the overheads, None when the cost model gives no area."""
        if not self.area_known:
            return None
        return sum(self.area_um2_by_component.values()) / 1e6

    @property
    def area_mm2_by_component(self) -> dict[str, float]:
        """Area (mm^2, all instances) by component, overheads included."""
        return {k: v / 1e6 for k, v in self.area_um2_by_component.items()}


def _tree_widths(inputs: int, product_bits: int) -> list[int]:
    """Output widths of the adds of a binary adder tree over ``inputs`` products.

    Level k (1, 2, ...) merges pairs of (product_bits + k - 1)-bit sums into
    (product_bits + k)-bit ones; an odd sum passes to the next level.
    """
    widths, n, k = [], inputs, 1
    while n > 1:
        widths += [product_bits + k] * (n // 2)
        n = n - n // 2
        k += 1
    return widths


class ArchComponents(NamedTuple):
    """The priced components of an architecture, each of its typed class."""

    storage: list[StorageComponent]  # one per storage level, innermost first
    mac: MacComponent
    # the fan-out below each level (None: no fan-out; a package's: its chip-to-chip link)
    interconnects: list[NocLinkComponent | LinkComponent | None]


def arch_components(arch: Arch) -> ArchComponents:
    """The priced components of an architecture: storage (innermost first), MAC, the interconnect
    below each level (a ``NocLinkComponent`` per fan-out of more than one child: one bit over 1 mm;
    a ``LinkComponent`` for a fan-out over chip-to-chip links: one bit over one hop)."""
    node = arch.technology_nm
    return ArchComponents(
        storage=[_storage_component(lvl, node) for lvl in arch.inner_first],
        mac=_mac_component(arch.compute, node),
        interconnects=[
            None
            if fx * fy == 1
            else (_chip_link(lvl) if lvl.fanout.chip_to_chip else _noc_link(lvl, node))
            for lvl, (fx, fy) in zip(arch.inner_first, arch.fanouts, strict=True)
        ],
    )


def _storage_component(level: StorageLevel, technology_nm: float) -> StorageComponent:
    """One instance of ``level`` as its typed component (``STORAGE_TYPES``)."""
    return STORAGE_TYPES[level.component](
        name=level.name,
        cls=level.component,
        attributes={
            "capacity_bits": level.capacity_bits,
            "width_bits": level.access_bits,
            "word_bits": level.word_bits,
            "banks": int(level.attributes.get("banks", 1)),
            "technology_nm": technology_nm,
            **{k: v for k, v in level.attributes.items() if k != "banks"},
        },
    )


def _mac_component(compute: ComputeLevel, technology_nm: float) -> MacComponent:
    """One MAC unit of the compute level."""
    return MacComponent(
        name=compute.name,
        attributes={
            **compute.attributes,
            "bits": compute.operand_bits,
            "weight_bits": compute.weight_bits,
            "activation_bits": compute.activation_bits,
            "accum_bits": compute.accum_bits,
            "datatype": compute.datatype,
            "format": compute.format,
            "technology_nm": technology_nm,
        },
    )


def _noc_link(level: StorageLevel, technology_nm: float) -> NocLinkComponent:
    """The NoC of the fan-out below ``level``, priced per bit and millimetre."""
    return NocLinkComponent(
        name=f"{level.name}.noc",
        attributes={
            "word_bits": 1,
            "hop_mm": 1.0,
            "topology": level.fanout.topology,
            "technology_nm": technology_nm,
        },
    )


def _chip_link(level: StorageLevel) -> LinkComponent:
    """The chip-to-chip link of the fan-out below ``level`` (a package's), priced per bit
    per hop: its named technology or the user's own energy per bit (``Fanout``)."""
    fanout = level.fanout
    given = {"technology": fanout.link, "pj_per_bit": fanout.link_pj_per_bit}
    return LinkComponent(
        name=f"{level.name}.link",
        attributes={
            **{k: v for k, v in given.items() if v is not None},
            "hop_mm": fanout.pitch_mm,
        },
    )


class CostChain:
    """The models that price one architecture, first first: the first model whose
    ``supports`` is True prices a component; the built-in table of the architecture's node
    comes last and prices every class. Numbers are checked (``checked``) and at the node's
    nominal supply; ``sources`` records which model priced each component, by name."""

    def __init__(self, arch: Arch, models: CostModel | list[CostModel] | None) -> None:
        self.chain: list[CostModel] = (
            []
            if models is None
            else (list(models) if isinstance(models, list | tuple) else [models])
        )
        self.node = arch.technology_nm
        self.sources: dict[str, str] = {}

    def pick(self, comp: Component) -> CostModel:
        """The model that prices ``comp`` (appending the built-in table when none does)."""
        for model in self.chain:
            if model.supports(comp):
                self.sources[comp.name] = model.name
                return model
        from magnet.cost.tables import builtin_cost_model  # the table supports every class

        self.chain.append(builtin_cost_model(self.node))
        return self.pick(comp)

    def energy(self, comp: Component, action: str) -> float:
        """Energy of one ``action`` of one instance of ``comp`` (pJ)."""
        model = self.pick(comp)
        return checked(model.energy_pj(comp, action), model, comp, f"{action} energy")

    def leak(self, comp: Component) -> float:
        """Leakage power of one instance of ``comp`` (mW)."""
        model = self.pick(comp)
        return checked(model.leakage_mw(comp), model, comp, "leakage")

    def clock(self, comp: Component) -> float:
        """Clock energy per cycle of one instance of ``comp`` (pJ)."""
        model = self.pick(comp)
        return checked(model.clock_pj_per_cycle(comp), model, comp, "clock energy")

    def area(self, comp: Component) -> float | None:
        """Area of one instance of ``comp`` (um^2), None when its model has no area."""
        model = self.pick(comp)
        value = model.area_um2(comp)
        return None if value is None else checked(value, model, comp, "area")

    @property
    def name(self) -> str:
        """The names of the models that priced something, in chain order, joined by +."""
        order = [m.name for m in self.chain]
        return "+".join(sorted(set(self.sources.values()), key=order.index))

    @property
    def identity(self) -> str:
        """Every model of the chain by identity (``magnet.registry``), the built-in table
        by its class and node: what cached results priced by this chain belong to."""
        from magnet.registry import identity_of

        return "+".join(
            getattr(m, "identity", None) or f"{identity_of(m)}@{self.node:g}nm" for m in self.chain
        )


@checked_call
def price_arch(
    arch: Arch,
    models: CostModel | list[CostModel] | None = None,
    *,
    noc: NocModel = "wires",
) -> ArchCosts:
    """Ask the chain of models (then the built-in table) for every component's costs.

    ``noc="none"`` charges no wire energy and no interconnect reduction adds (Timeloop
    parity: its legacy network is free unless given an energy). Each component is asked in
    a fixed order (storage, MAC, adds, interconnects, areas), so a model that keeps notes
    (``describe``) sees the same sequence on every call.
    """
    if noc not in NOC_MODELS:
        raise MagnetError(
            f"unknown NoC model {noc!r}; allowed: {', '.join(NOC_MODELS)}",
            field="--noc",
        )
    chain = CostChain(arch, models)
    volts = _voltage_factor(arch)
    dynamic = volts**2  # C V^2
    parts = arch_components(arch)
    storage = _price_storage(chain, parts.storage, volts, dynamic)
    mac_pj = chain.energy(parts.mac, "compute") * dynamic
    adds = _Adds(chain, arch.technology_nm, dynamic, arch.compute)
    accum_add = adds(arch.compute.accum_bits)
    control = _control_pj(arch, adds)
    tree, reduce_add = _reductions(arch, adds, accum_add, noc)
    links = np.array(
        [
            chain.energy(n, "transfer") if isinstance(n, LinkComponent) else 0.0
            for n in parts.interconnects
        ]
    )
    wire = np.array(
        [
            _wire_pj_per_bit_mm(chain, lvl, n, link, noc, dynamic)
            for lvl, n, link in zip(arch.inner_first, parts.interconnects, links, strict=True)
        ]
    )
    gate = ClockGateComponent("clock_gate", attributes={"technology_nm": arch.technology_nm})
    gate_clock = chain.clock(gate) * dynamic
    gates = _gates(arch, storage.clock_pj_per_cycle, chain.clock(parts.mac))
    post = None if arch.postprocess is None else _price_postprocess(chain, arch, adds, volts)
    unit_parts: dict[str, float] = {}
    areas, known, pitch = _floorplan(arch, chain, parts.storage, parts.mac, gate, gates, unit_parts)
    if post is not None and arch.postprocess is not None:
        total = areas.get(arch.postprocess.name)
        post = replace(post, area_um2=total, part_area_um2=unit_parts)
    wake, mac_wake = _wakes(arch, chain, areas, dynamic)
    return ArchCosts(
        read_pj=storage.read_pj,
        write_pj=storage.write_pj,
        update_pj=storage.update_pj,
        leak_mw=storage.leak_mw,
        clock_pj_per_cycle=storage.clock_pj_per_cycle,
        control_pj_per_access=control,
        mac_pj=mac_pj,
        mac_leak_mw=chain.leak(parts.mac) * volts,
        mac_clock_pj_per_cycle=chain.clock(parts.mac) * dynamic,
        wake_pj=wake,
        mac_wake_pj=mac_wake,
        gate_clock_pj_per_cycle=gate_clock,
        gate_area_um2=areas.get("clock_gates", 0.0) / gates if gates else 0.0,
        accum_add_pj=accum_add,
        tree_pj=tree,
        reduce_add_pj=reduce_add,
        wire_pj_per_bit_mm=wire,
        link_pj_per_bit=links,
        pitch_mm=pitch,
        noc=noc,
        area_um2_by_component=areas,
        area_known=known,
        model_name=chain.name,
        model_identity=chain.identity,
        sources=dict(chain.sources),
        postprocess=post,
    )


class _StoragePrices(NamedTuple):
    """Per storage level (innermost first), at the architecture's supply."""

    read_pj: FloatArray
    write_pj: FloatArray
    update_pj: FloatArray
    leak_mw: FloatArray
    clock_pj_per_cycle: FloatArray


def _price_storage(
    chain: CostChain, storage: list[StorageComponent], volts: float, dynamic: float
) -> _StoragePrices:
    """Energy per access, leakage and clock of every storage level's instance. DRAM energy
    is set by the DRAM, not by the chip's supply: it is not scaled."""
    scale = np.where([isinstance(c, DramComponent) for c in storage], 1.0, dynamic)
    read = np.array([chain.energy(c, "read") for c in storage]) * scale
    write = np.array([chain.energy(c, "write") for c in storage]) * scale
    update = np.array([chain.energy(c, "update") for c in storage]) * scale
    # leakage ~ V (assumption: off-current held, power = I_off x V); clock ~ C V^2
    leaks = np.array([chain.leak(c) for c in storage]) * volts
    clocks = np.array([chain.clock(c) for c in storage]) * dynamic
    return _StoragePrices(read, write, update, leaks, clocks)


@dataclass(frozen=True)
class _Adds:
    """Prices one add (an ``AdderComponent``) at the architecture's supply: by default in
    the MAC's datatype, named after the compute level."""

    chain: CostChain
    technology_nm: float
    dynamic: float
    compute: ComputeLevel

    def __call__(self, bits: int, datatype: str | None = None, owner: str | None = None) -> float:
        """Energy of one ``bits``-wide add (pJ) in ``datatype`` for the component ``owner``."""
        adder = AdderComponent(
            name=f"{owner or self.compute.name}.add{bits}",
            attributes={
                "bits": bits,
                "datatype": datatype or self.compute.datatype,
                "technology_nm": self.technology_nm,
            },
        )
        return self.chain.energy(adder, "add") * self.dynamic


def _control_pj(arch: Arch, adds: _Adds) -> FloatArray:
    """Address generation per access of each level: an integer add at the address width
    (Horowitz's adder); a dummy level has no addresses."""
    return np.array(
        [
            0.0 if lvl.is_dummy else adds(address_bits(lvl), "int", lvl.name)
            for lvl in arch.inner_first
        ]
    )


def _reductions(
    arch: Arch, adds: _Adds, accum_add: float, noc: NocModel
) -> tuple[tuple[FloatArray | None, ...], FloatArray]:
    """Per fan-out (innermost first): the adder tree's energies ``[r]`` when its children
    are reduced in one (else None), and the add of one interconnect reduction (0 when the
    fan-out has one child, reduces in a tree, or ``noc == "none"``)."""
    c = arch.compute
    product_bits = c.weight_bits + c.activation_bits if c.datatype == "int" else c.accum_bits
    tree: list[FloatArray | None] = []
    reduce_add = np.zeros(len(arch.levels))
    for li, (lvl, (fx, fy)) in enumerate(zip(arch.inner_first, arch.fanouts, strict=True)):
        if lvl.fanout.reduction == "adder_tree" and fx * fy > 1:
            tree.append(_adder_tree_pj(fx * fy, product_bits, lambda w: adds(min(w, c.accum_bits))))
        else:
            tree.append(None)
            if fx * fy > 1 and noc == "wires":
                reduce_add[li] = accum_add
    return tuple(tree), reduce_add


def _price_postprocess(chain: CostChain, arch: Arch, adds: _Adds, volts: float) -> PostCosts:
    """The post-processing unit's prices (its area: ``_postprocess_area``). A lane has an
    adder and a comparator at the activation width (a compare is priced as an add: a
    magnitude comparator is a subtractor, an assumption), a multiply-add unit (priced as a
    MAC of two activation-width operands into a sum of twice their width, or of their own
    width in floating point) and shares the unit's table (a register file of
    ``lut_entries`` x ``lut_bits``, read once per lookup); its buffer is an SRAM macro,
    accessed a lane vector at a time. Clock: each lane's input register (the MAC's clocked
    register) and the table's port; leakage: the lanes' multiply-add units, the table and
    the buffer."""
    unit = arch.postprocess
    assert unit is not None
    dynamic = volts**2
    bits = arch.compute.activation_bits
    mac, _, table, buffer = postprocess_parts(arch)
    add_pj = adds(bits, owner=unit.name)
    op_pj = {
        "add": add_pj,
        "compare": add_pj,
        "mac": chain.energy(mac, "compute") * dynamic,
        "lookup": chain.energy(table, "read") * dynamic,
    }
    read_pj = write_pj = control_pj = 0.0
    leak = chain.leak(mac) * unit.lanes + chain.leak(table)
    if buffer is not None:
        read_pj = chain.energy(buffer, "read") * dynamic / unit.lanes
        write_pj = chain.energy(buffer, "write") * dynamic / unit.lanes
        blocks = max(1, unit.buffer_bits // (unit.lanes * bits))
        address = max(1, math.ceil(math.log2(blocks)))
        control_pj = adds(address, "int", buffer.name) / unit.lanes
        leak += chain.leak(buffer)
    return PostCosts(
        op_pj=op_pj,
        buffer_read_pj=read_pj,
        buffer_write_pj=write_pj,
        buffer_control_pj=control_pj,
        clock_pj_per_cycle=(chain.clock(mac) * unit.lanes + chain.clock(table)) * dynamic,
        leak_mw=leak * volts,
    )


class PostprocessParts(NamedTuple):
    """The components of one post-processing unit: a lane's multiply-add unit and adder
    (its comparator is one more), the table, the buffer (None: it has none)."""

    mac: MacComponent
    adder: AdderComponent
    table: RegfileComponent
    buffer: SramComponent | None


def postprocess_parts(arch: Arch) -> PostprocessParts:
    """The components of ``arch``'s post-processing unit (``_price_postprocess``)."""
    unit = arch.postprocess
    assert unit is not None
    c, node, name = arch.compute, arch.technology_nm, unit.name
    bits = c.activation_bits
    mac = MacComponent(
        name=f"{name}.mac",
        attributes={
            "bits": bits,
            "weight_bits": bits,
            "activation_bits": bits,
            "accum_bits": 2 * bits if c.datatype == "int" else bits,
            "datatype": c.datatype,
            "format": c.format,
            "technology_nm": node,
        },
    )
    adder = AdderComponent(
        name=f"{name}.add{bits}",
        attributes={"bits": bits, "datatype": c.datatype, "technology_nm": node},
    )
    table = RegfileComponent(
        name=f"{name}.table",
        attributes={
            "capacity_bits": unit.lut_entries * unit.lut_bits,
            "width_bits": unit.lut_bits,
            "word_bits": unit.lut_bits,
            "technology_nm": node,
        },
    )
    buffer = None
    if unit.buffer_bits:
        buffer = SramComponent(
            name=f"{name}.buffer",
            attributes={
                "capacity_bits": unit.buffer_bits,
                "width_bits": unit.lanes * bits,
                "word_bits": bits,
                "banks": 1,
                "technology_nm": node,
            },
        )
    return PostprocessParts(mac, adder, table, buffer)


def _postprocess_area(chain: CostChain, arch: Arch, parts: dict[str, float]) -> float | None:
    """Area (um^2) of all the post-processing units: per unit, ``lanes`` x (a multiply-add
    unit, an adder and a comparator priced as one more adder), the table and the buffer;
    None when the models give none. ``parts`` receives the area of one of each."""
    unit = arch.postprocess
    assert unit is not None
    mac, adder, table, buffer = postprocess_parts(arch)
    for comp in (mac, adder, table, buffer):
        if comp is not None and (area := chain.area(comp)) is not None:
            parts[comp.name] = area
    if not parts:
        return None
    lane = parts.get(mac.name, 0.0) + 2 * parts.get(adder.name, 0.0)
    each = lane * unit.lanes + parts.get(table.name, 0.0)
    each += 0.0 if buffer is None else parts.get(buffer.name, 0.0)
    return each * arch.postprocess_instances


#: Address width of a DRAM access (assumption: a 32-bit byte address, 4 GiB, generated on
#: chip by the DMA engine that issues it).
DRAM_ADDRESS_BITS = 32


def address_bits(level: StorageLevel) -> int:
    """Bits of the address one access of ``level`` needs: log2 of its blocks per bank
    (at least 1); DRAM: ``DRAM_ADDRESS_BITS``."""
    if level.capacity_bits is None:
        return DRAM_ADDRESS_BITS
    banks = max(1, int(level.attributes.get("banks", 1)))
    blocks = level.capacity_bits / (banks * level.access_bits)
    return max(1, math.ceil(math.log2(max(blocks, 1.0))))


def _adder_tree_pj(children: int, product_bits: int, add_pj: Callable[[int], float]) -> np.ndarray:
    """``[r]``: energy of the adds that merge ``r`` products (0 <= r <= ``children``) in a
    binary adder tree, each add priced at its output width by ``add_pj``."""
    top = product_bits + math.ceil(math.log2(children))
    by_width = {w: add_pj(w) for w in range(product_bits, top + 1)}
    return np.array(
        [sum(by_width[w] for w in _tree_widths(r, product_bits)) for r in range(children + 1)]
    )


def _voltage_factor(arch: Arch) -> float:
    """The supply relative to the node's nominal (1 when the architecture gives none)."""
    if arch.voltage_v is None:
        return 1.0
    from magnet.cost.tables import nominal_voltage

    return arch.voltage_v / nominal_voltage(arch.technology_nm)


def _wire_pj_per_bit_mm(
    chain: CostChain,
    level: StorageLevel,
    interconnect: NocLinkComponent | LinkComponent | None,
    link_pj_per_bit: float,
    noc: NocModel,
    dynamic: float,
) -> float:
    """Energy per bit-mm of the fan-out below ``level``: chip-to-chip links at their own
    energy per bit per hop (``link_pj_per_bit``, as the chain priced the link, over the
    fan-out's ``pitch_mm``), else the cost model's on-chip wire at the chip's supply
    (``dynamic``: V^2), nothing when ``noc`` is ``none`` or there is no fan-out."""
    if interconnect is None:
        return 0.0
    if isinstance(interconnect, LinkComponent) and level.fanout.pitch_mm is not None:
        return link_pj_per_bit / level.fanout.pitch_mm
    return 0.0 if noc == "none" else chain.energy(interconnect, "transfer") * dynamic


def _gates(arch: Arch, clock_pj_per_cycle: FloatArray, mac_clock_pj: float) -> float:
    """How many clock-gating cells a design has: none unless ``clock_gating: fine``, then one
    per clocked register (each instance of a level with a clock, each MAC's input register)."""
    if arch.clock_gating != "fine":
        return 0.0
    levels = arch.inner_first
    count = sum(lvl.instances for lvl, c in zip(levels, clock_pj_per_cycle, strict=True) if c)
    registers = arch.mac_count // arch.compute.macs_per_input_register
    return float(count + (registers if mac_clock_pj else 0))


def _wakes(
    arch: Arch, chain: CostChain, areas: dict[str, float], dynamic: float
) -> tuple[FloatArray, float]:
    """The energy that wakes one power-gated instance of each level (innermost first) and
    one MAC (``PowerGateComponent``: a domain of the instance's area); zero for a design
    without power gating, and for what has no area."""
    if arch.power_gating == "none":
        return np.zeros(len(arch.levels)), 0.0
    node = arch.technology_nm

    def wake(name: str, area_um2: float) -> float:
        if not area_um2:
            return 0.0
        switch = PowerGateComponent(
            f"{name}.power_gate", attributes={"domain_area_um2": area_um2, "technology_nm": node}
        )
        return chain.energy(switch, "wake") * dynamic

    levels = np.array(
        [wake(lvl.name, areas.get(lvl.name, 0.0) / lvl.instances) for lvl in arch.inner_first]
    )
    mac = arch.compute
    return levels, wake(mac.name, areas.get(mac.name, 0.0) / mac.instances)


def _floorplan(
    arch: Arch,
    chain: CostChain,
    storage: list[StorageComponent],
    mac: MacComponent,
    gate: ClockGateComponent,
    gates: float,
    unit_parts: dict[str, float],
) -> tuple[dict[str, float], bool, FloatArray]:
    """Area by component (all instances, overheads included; ``gates`` clock-gating cells),
    whether the models gave any area, and the children's pitch of every fan-out (innermost
    first, mm; the post-processing units are not in it). ``unit_parts`` receives the area of
    one of each part of the post-processing unit (``_postprocess_area``)."""
    mac_area = chain.area(mac)
    per_instance = [chain.area(comp) for comp in storage]
    known = mac_area is not None and any(a is not None for a in per_instance)
    areas = _component_areas(arch, chain, mac_area, per_instance)
    if gates:
        areas["clock_gates"] = (chain.area(gate) or 0.0) * gates
    unit = arch.postprocess
    if unit is not None:
        total = _postprocess_area(chain, arch, unit_parts)
        if total is not None:
            areas[unit.name] = total
    components = sum(areas.values())
    total = _add_overheads(arch, chain, areas)
    # the overheads spread between the children of non-dense fan-outs, in proportion to area
    spread = total / max(components, 1e-30)
    pitch = _pitches(arch, areas, mac_area, per_instance, known, spread)
    return areas, known, pitch


def _component_areas(
    arch: Arch, chain: CostChain, mac_area: float | None, per_instance: list[float | None]
) -> dict[str, float]:
    """Area (um^2, all instances) of every storage level the models priced (outermost
    first), the MACs and, when a fan-out is a mesh, its routers (one per child)."""
    areas: dict[str, float] = {}
    for lvl, a in zip(arch.levels, reversed(per_instance), strict=True):
        if a is not None:
            areas[lvl.name] = a * lvl.instances
    areas[arch.compute.name] = (mac_area or 0.0) * arch.compute.instances
    router_um2 = 0.0
    for lvl, (fx, fy) in zip(arch.inner_first, arch.fanouts, strict=True):
        if lvl.fanout.topology == "mesh" and fx * fy > 1:
            attributes = {"technology_nm": arch.technology_nm}
            each = chain.area(RouterComponent(f"{lvl.name}.router", attributes=attributes))
            router_um2 += (each or 0.0) * lvl.instances * fx * fy
    if router_um2:
        areas["routers"] = router_um2
    return areas


def _add_overheads(arch: Arch, chain: CostChain, areas: dict[str, float]) -> float:
    """Price the overheads (``OVERHEAD_KINDS``, in order, each from the areas priced before
    it and the design's counts) into ``areas``; returns the chip's total area (um^2)."""
    components = sum(areas.values())
    macros = sum(areas.get(lvl.name, 0.0) for lvl in arch.levels if lvl.is_sram)
    logic = components - macros  # MACs, register files, routers, gating cells: standard cells
    total = components
    for kind in OVERHEAD_KINDS:
        attributes = {
            "kind": kind,
            "logic_area_um2": logic,
            "macro_area_um2": macros,
            "chip_area_um2": total,
            "controllers": arch.controllers,
            "chiplets": arch.chiplets,
            "technology_nm": arch.technology_nm,
        }
        extra = chain.area(OverheadComponent(kind, attributes=attributes))
        if extra:
            areas[kind] = extra
            total += extra
            if kind == "clock_tree":
                logic += extra
            elif kind == "controller":  # a placed core, with a halo like the macros
                macros += extra
    return total


def _pitches(
    arch: Arch,
    areas: dict[str, float],
    mac_area: float | None,
    per_instance: list[float | None],
    known: bool,
    spread: float,
) -> FloatArray:
    """float[level]: the pitch (mm) of the children of every fan-out, innermost first: a
    fan-out's own ``pitch_mm``, else the square root of a child's area (the child instance
    and everything below it; outside dense fan-outs, ``spread`` times that, its share of the
    overheads), else ``DEFAULT_PITCH_MM``."""
    levels = arch.inner_first
    pitch = np.full(len(levels), DEFAULT_PITCH_MM)
    below = mac_area or 0.0  # component area of one child of fan-out 0 (a MAC)
    for li, lvl in enumerate(levels):
        fx, fy = arch.fanouts[li]
        child = below if lvl.fanout.dense else below * spread
        if lvl.fanout.pitch_mm is not None:
            pitch[li] = lvl.fanout.pitch_mm
        elif known and child > 0:
            pitch[li] = math.sqrt(child) / 1000.0  # um -> mm
        if lvl.fanout.topology == "mesh" and fx * fy > 1 and "routers" in areas:
            below += areas["routers"] / (lvl.instances * fx * fy)
        below = (per_instance[li] or 0.0) + fx * fy * below
    return pitch
