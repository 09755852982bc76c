"""Pricing an architecture: ``price_arch`` asks a chain of cost models (the built-in table
last) for every component of an architecture once, and returns ``ArchCosts``: per-action
energies, static energy, the adder-tree and wire energies, and the floorplan (areas, and the
pitch of every fan-out's children, which sets how far a word travels).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from magnet.arch.spec import Arch, StorageLevel
from magnet.cost.base import OVERHEAD_KINDS, Component, CostModel, checked
from magnet.errors import MagnetError

#: How the on-chip network (NoC) is priced: ``wires`` (bits x distance x energy per bit-mm,
#: plus the adds of network reductions) or ``none`` (free, as Timeloop's legacy network).
NocModel = Literal["wires", "none"]
NOC_MODELS: tuple[str, ...] = get_args(NocModel)
#: Pitch of a fan-out's children when the cost model gives no area (assumption: a
#: neighbouring PE or vector unit 0.1 mm away, the order of Simba's vector units).
DEFAULT_PITCH_MM = 0.1


@dataclass(frozen=True)
class ArchCosts:
    """What one architecture costs under one cost model. Arrays are per storage level,
    index 0 innermost; storage energies are per access (one block of ``access_bits``).

    Per instance: leakage power ``leak_mw`` and clock energy per cycle ``clock_pj_per_cycle``
    (and the ``mac_`` ones), at the architecture's supply. ``control_pj_per_access``: the
    address generation of one access of each level (one add at its address width).

    Math: ``mac_pj`` is one multiply-accumulate; a fan-out whose children are reduced in an
    adder tree has ``tree_pj[level][r]``, the adds that merge ``r`` products, and
    ``accum_add_pj`` is the accumulation inside ``mac_pj`` that such a tree replaces for all
    but one of its inputs. ``reduce_add_pj`` prices one merge of two
    partial sums in a network reduction. Wires: ``wire_pj_per_bit_mm`` per fan-out and the
    pitch of its children (``pitch_mm``); zero when ``noc == "none"``.
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
    accum_add_pj: float
    tree_pj: tuple[np.ndarray | None, ...]
    reduce_add_pj: np.ndarray
    wire_pj_per_bit_mm: np.ndarray
    pitch_mm: np.ndarray
    noc: str
    area_um2_by_component: dict[str, float]
    area_known: bool
    model_name: str
    model_identity: str  # the chain's plug-ins by identity (magnet.registry): cache keys
    sources: dict[str, str] = field(default_factory=dict)  # component -> model that priced it

    @property
    def area_mm2(self) -> float | None:
        """Total area with the overheads, None when the cost model gives no area."""
        if not self.area_known:
            return None
        return sum(self.area_um2_by_component.values()) / 1e6

    @property
    def area_mm2_by_component(self) -> dict[str, float]:
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


def arch_components(arch: Arch) -> tuple[list[Component], Component, list[Component | None]]:
    """The priced components of an architecture: storage (innermost first), MAC, networks."""
    node = arch.technology_nm
    storage = [
        Component(
            name=lvl.name,
            cls=lvl.component,
            attributes={
                "capacity_bits": lvl.capacity_bits,
                "width_bits": lvl.access_bits,
                "word_bits": lvl.word_bits,
                "banks": int(lvl.attributes.get("banks", 1)),
                "technology_nm": node,
                **{k: v for k, v in lvl.attributes.items() if k != "banks"},
            },
        )
        for lvl in arch.inner_first
    ]
    c = arch.compute
    mac = Component(
        name=c.name,
        cls="mac",
        attributes={
            **c.attributes,
            "bits": c.operand_bits,
            "weight_bits": c.weight_bits,
            "activation_bits": c.activation_bits,
            "accum_bits": c.accum_bits,
            "datatype": c.datatype,
            "format": c.format,
            "technology_nm": node,
        },
    )
    networks: list[Component | None] = []
    for lvl, (fx, fy) in zip(arch.inner_first, arch.fanouts, strict=True):
        if fx * fy == 1:
            networks.append(None)
            continue
        networks.append(
            Component(
                name=f"{lvl.name}.network",
                cls="network",
                attributes={
                    "word_bits": 1,
                    "hop_mm": 1.0,
                    "network": lvl.fanout.network,
                    "technology_nm": node,
                },
            )
        )
    return storage, mac, networks


class _Chain:
    """The first model of a chain that supports a component prices it (built-in last)."""

    def __init__(self, arch: Arch, models: CostModel | list[CostModel] | None):
        self.chain: list[CostModel] = (
            []
            if models is None
            else (list(models) if isinstance(models, list | tuple) else [models])
        )
        self.node = arch.technology_nm
        self.sources: dict[str, str] = {}

    def pick(self, comp: Component) -> CostModel:
        for model in self.chain:
            if model.supports(comp):
                self.sources[comp.name] = model.name
                return model
        from magnet.cost.tables import builtin_cost_model  # the table supports every class

        self.chain.append(builtin_cost_model(self.node))
        return self.pick(comp)

    def energy(self, comp: Component, action: str) -> float:
        model = self.pick(comp)
        return checked(model.energy_pj(comp, action), model, comp, f"{action} energy")

    def leak(self, comp: Component) -> float:
        model = self.pick(comp)
        return checked(model.leakage_mw(comp), model, comp, "leakage")

    def clock(self, comp: Component) -> float:
        model = self.pick(comp)
        return checked(model.clock_pj_per_cycle(comp), model, comp, "clock energy")

    def area(self, comp: Component) -> float | None:
        model = self.pick(comp)
        value = model.area_um2(comp)
        return None if value is None else checked(value, model, comp, "area")

    @property
    def name(self) -> str:
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


def price_arch(
    arch: Arch,
    models: CostModel | list[CostModel] | None = None,
    *,
    noc: NocModel = "wires",
) -> ArchCosts:
    """Ask the chain of models (then the built-in table) for every component's costs.

    ``noc="none"`` charges no wire energy and no network reduction adds (Timeloop
    parity: its legacy network is free unless given an energy).
    """
    if noc not in NOC_MODELS:
        raise MagnetError(
            f"unknown NoC model {noc!r}; allowed: {', '.join(NOC_MODELS)}",
            field="--noc",
        )
    chain = _Chain(arch, models)
    volts = _voltage_factor(arch)
    dynamic = volts**2  # C V^2
    storage, mac, networks = arch_components(arch)
    nl = len(storage)
    dram = np.array([c.cls == "dram" for c in storage])
    scale = np.where(dram, 1.0, dynamic)  # DRAM energy is set by the DRAM, not our supply
    read = np.array([chain.energy(c, "read") for c in storage]) * scale
    write = np.array([chain.energy(c, "write") for c in storage]) * scale
    update = np.array([chain.energy(c, "update") for c in storage]) * scale
    # leakage ~ V (assumption: off-current held, power = I_off x V); clock ~ C V^2
    leaks = np.array([chain.leak(c) for c in storage]) * volts
    clocks = np.array([chain.clock(c) for c in storage]) * dynamic

    c = arch.compute
    mac_pj = chain.energy(mac, "compute") * dynamic

    def add_pj(bits: int, datatype: str = c.datatype, name: str = c.name) -> float:
        adder = Component(
            name=f"{name}.add{bits}",
            cls="adder",
            attributes={"bits": bits, "datatype": datatype, "technology_nm": arch.technology_nm},
        )
        return chain.energy(adder, "add") * dynamic

    accum_add = add_pj(c.accum_bits)
    # address generation: an integer add at the address width per access (Horowitz's adder)
    control = np.array(
        [
            0.0 if lvl.component == "dummy" else add_pj(address_bits(lvl), "int", lvl.name)
            for lvl in arch.inner_first
        ]
    )
    product_bits = c.weight_bits + c.activation_bits if c.datatype == "int" else c.accum_bits
    tree: list[np.ndarray | None] = []
    reduce_add = np.zeros(nl)
    for li, (lvl, (fx, fy)) in enumerate(zip(arch.inner_first, arch.fanouts, strict=True)):
        if lvl.fanout.reduction == "adder_tree" and fx * fy > 1:
            tree.append(
                _adder_tree_pj(fx * fy, product_bits, lambda w: add_pj(min(w, c.accum_bits)))
            )
        else:
            tree.append(None)
            if fx * fy > 1 and noc == "wires":
                reduce_add[li] = accum_add
    wire = np.array(
        [
            0.0 if n is None or noc == "none" else chain.energy(n, "transfer") * dynamic
            for n in networks
        ]
    )

    areas, known, pitch = _floorplan(arch, chain, storage, mac)
    return ArchCosts(
        read_pj=read,
        write_pj=write,
        update_pj=update,
        leak_mw=leaks,
        clock_pj_per_cycle=clocks,
        control_pj_per_access=control,
        mac_pj=mac_pj,
        mac_leak_mw=chain.leak(mac) * volts,
        mac_clock_pj_per_cycle=chain.clock(mac) * dynamic,
        accum_add_pj=accum_add,
        tree_pj=tuple(tree),
        reduce_add_pj=reduce_add,
        wire_pj_per_bit_mm=wire,
        pitch_mm=pitch,
        noc=noc,
        area_um2_by_component=areas,
        area_known=known,
        model_name=chain.name,
        model_identity=chain.identity,
        sources=dict(chain.sources),
    )


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


def _floorplan(
    arch: Arch, chain: _Chain, storage: list[Component], mac: Component
) -> tuple[dict[str, float], bool, np.ndarray]:
    """Area by component (all instances, overheads included) and the children's pitch of
    every fan-out: a child's side is the square root of its area (the child instance and
    everything below it, its share of the overheads included)."""
    node = arch.technology_nm
    levels = arch.inner_first
    mac_area = chain.area(mac)
    per_instance = [chain.area(comp) for comp in storage]
    known = mac_area is not None and any(a is not None for a in per_instance)
    areas: dict[str, float] = {}
    for lvl, a in zip(arch.levels, reversed(per_instance), strict=True):
        if a is not None:
            areas[lvl.name] = a * lvl.instances
    areas[arch.compute.name] = (mac_area or 0.0) * arch.compute.instances
    # routers: one per child of a mesh fan-out
    router_um2 = 0.0
    for lvl, (fx, fy) in zip(levels, arch.fanouts, strict=True):
        if lvl.fanout.network == "mesh" and fx * fy > 1:
            router = Component(f"{lvl.name}.router", "router", {"technology_nm": node})
            each = chain.area(router) or 0.0
            router_um2 += each * lvl.instances * fx * fy
    if router_um2:
        areas["routers"] = router_um2
    components = sum(areas.values())
    macros = sum(areas.get(lvl.name, 0.0) for lvl in arch.levels if lvl.component == "sram")
    logic = components - macros  # MACs, register files, routers: placed standard cells
    total = components
    for kind in OVERHEAD_KINDS:  # each priced from what is priced before it
        attributes = {
            "kind": kind,
            "logic_area_um2": logic,
            "macro_area_um2": macros,
            "chip_area_um2": total,
            "technology_nm": node,
        }
        extra = chain.area(Component(kind, "overhead", attributes))
        if extra:
            areas[kind] = extra
            total += extra
            if kind == "clock_tree":
                logic += extra
    # the overheads spread between the children of non-dense fan-outs, in proportion to area
    spread = total / max(components, 1e-30)
    pitch = np.full(len(levels), DEFAULT_PITCH_MM)
    below = mac_area or 0.0  # component area of one child of fan-out 0 (a MAC)
    for li, lvl in enumerate(levels):
        fx, fy = arch.fanouts[li]
        child = below if lvl.fanout.dense else below * spread
        if lvl.fanout.pitch_mm is not None:
            pitch[li] = lvl.fanout.pitch_mm
        elif known and child > 0:
            pitch[li] = math.sqrt(child) / 1000.0  # um -> mm
        if lvl.fanout.network == "mesh" and fx * fy > 1 and "routers" in areas:
            below += areas["routers"] / (lvl.instances * fx * fy)
        below = (per_instance[li] or 0.0) + fx * fy * below
    return areas, known, pitch
