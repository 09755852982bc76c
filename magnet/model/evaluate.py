"""Pricing access counts into energy, cycles, utilisation and area.

``evaluate_batch`` is the one evaluator: the mapper calls it on thousands of mappings at a
time, and ``evaluate`` calls it on a batch of one. Both take costs already priced
(``magnet.cost.price_arch``); nothing here prices an architecture.

Energy, by category:

* ``math``: every MAC (multiply + accumulate); a fan-out whose children are reduced in an
  adder tree (a vector MAC's lanes) replaces all but one accumulation of the ``r`` lanes it
  merges by the tree's adds, priced at their widths;
* ``postprocess``: the operations of a post-processing unit (0 here: a MAC layer has none;
  ``magnet.model.postprocess`` prices the layers it runs);
* ``memory``: reads, fills and updates of the on-chip storage levels, per access of a block;
* ``dram``: the same for DRAM;
* ``noc``: the chip's wires and the reductions in its interconnect (the NoC; ``network``
  before record version 10). A fan-out's n children are laid out in the
  squarest grid (sqrt(n) on a side) with the parent in the middle. A word sent down reaches
  the group of children that need it through one tree: to the group (on average sqrt(n) / 2
  pitches away) and then one pitch per further child; partial sums come up the same way and
  are merged with one add per pair; a systolic fan-out passes words from neighbour to
  neighbour (one pitch per child). Bits are the operand's width; the pitch is the side of a
  child's area (``magnet.cost.price_arch``);
* ``nop``: the same for a fan-out over chip-to-chip links (a package's network-on-package,
  ``ArchCosts.link_pj_per_bit``): its links, per hop, and its reductions; halo words
  (``Counts.halo_words``) cross one hop, from the neighbouring chiplet holding them;
* ``clock``: the clock of the clocked register bits and their share of the clock tree, by
  the design's clock gating (``_upkeep``): every cycle of the run, of every instance
  (``none``) or of those in use (``idle-units``), or only on the cycles a register loads,
  plus the gating cells and the trunk of the tree (``fine``);
* ``control``: address generation, one add at the address width per access of a level;
* ``static``: leakage power of every powered instance (of the instances in use only,
  each woken once, under ``power_gating: idle-units``) times the run's duration in
  seconds (cycles / clock).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, NamedTuple

import numpy as np

from magnet.arch.spec import Arch
from magnet.arguments import checked_methods
from magnet.cost import ArchCosts
from magnet.cost.contract import MAX_COST
from magnet.errors import InvalidMappingError, PluginError
from magnet.mapping import Mapping, MappingBatch, check_coverage, to_batch
from magnet.model.counts import (
    BoolArray,
    Counts,
    FloatArray,
    Index,
    IntArray,
    LayerStack,
    analyze,
    operand_bits,
    take_batch,
    window_flags,
)
from magnet.model.mesh import mesh_below
from magnet.model.records import LayerRecord, MapperStats, ZeroSaving
from magnet.model.sparse_counts import is_sparse, with_zeros, without_each
from magnet.workload.dims import NUM_DIMS, OPERANDS, RELEVANT, Operand
from magnet.workload.layer import Layer

ACTIONS = ("reads", "fills", "updates")


def layer_view(layer: Layer, arch: Arch) -> Layer:
    """The loop nest ``arch`` maps: the layer itself, or its GEMM view (``layer_view``)."""
    return layer.gemm_view() if arch.layer_view == "gemm" else layer


@dataclass
class BatchResult:
    """Energy and time of a batch of mappings. Arrays put the batch last."""

    counts: Counts
    energy_pj: FloatArray  # [batch]
    access_energy_pj: FloatArray  # [level, operand, action, batch]
    clock_pj: FloatArray  # [level, batch]: clock of the level's clocked instances
    control_pj: FloatArray  # [level, batch]: address generation of the level's accesses
    static_pj: FloatArray  # [level, batch]: leakage of the level's powered instances
    interconnect_pj: FloatArray  # [level, batch]: the fan-out below the level (NoC or NoP)
    math_pj: FloatArray  # [batch]
    mac_clock_pj: FloatArray  # [batch]
    mac_static_pj: FloatArray  # [batch]
    dram: BoolArray  # bool[level]: DRAM levels (their accesses are the "dram" category)
    nop: BoolArray  # bool[level]: fan-outs over chip-to-chip links (the "nop" category)
    nop_bits: FloatArray  # [batch]: bits the chip-to-chip links carry, summed over hops
    latency_cycles: FloatArray  # [batch], whole cycles
    level_cycles: FloatArray  # [level, batch]: cycles each level's bandwidth needs
    link_cycles: FloatArray  # [batch]: cycles the busiest chip-to-chip links need
    bottleneck: IntArray  # int[batch]: -1 compute, -2 links (NoP), else level (innermost first)
    utilization: FloatArray  # [batch]

    @property
    def valid(self) -> BoolArray:
        """bool[batch]: the mappings whose tiles fit every level."""
        return self.counts.valid

    def take(self, index: Index) -> BatchResult:
        """The results of the mappings at ``index`` (no re-evaluation)."""
        return take_batch(self, index, keep=("dram", "nop"))

    @property
    def edp(self) -> FloatArray:
        """[batch]: energy-delay product, pJ x cycles."""
        edp: FloatArray = self.energy_pj * self.latency_cycles
        return edp

    def dram_bytes(self, arch: Arch) -> FloatArray:
        """[operand, batch]: bytes moved to and from DRAM (reads, fills and updates of the
        DRAM levels, all instances, at each operand's width there)."""
        bits = operand_bits(arch)
        c = self.counts
        moved = (c.reads + c.fills + c.updates) * c.instances[:, None, :]
        dram_bytes: FloatArray = (moved[self.dram] * bits[self.dram][:, :, None]).sum(axis=0) / 8
        return dram_bytes

    @property
    def level_energy_pj(self) -> FloatArray:
        """[level, batch]: accesses, clock, control, static and the interconnect below it."""
        energy: FloatArray = (
            self.access_energy_pj.sum(axis=(1, 2))
            + self.clock_pj
            + self.control_pj
            + self.static_pj
            + self.interconnect_pj
        )
        return energy

    def category_pj(self) -> dict[str, FloatArray]:
        """Energy by category (the records' ``CATEGORIES``), each ``[batch]``; they add up
        to the total."""
        access = self.access_energy_pj.sum(axis=(1, 2))
        return {
            "math": self.math_pj,
            "postprocess": np.zeros_like(self.math_pj),  # a post-processing unit's operations
            "memory": access[~self.dram].sum(axis=0),
            "noc": self.interconnect_pj[~self.nop].sum(axis=0),
            "nop": self.interconnect_pj[self.nop].sum(axis=0),
            "clock": self.clock_pj.sum(axis=0) + self.mac_clock_pj,
            "control": self.control_pj.sum(axis=0),
            "dram": access[self.dram].sum(axis=0),
            "static": self.static_pj.sum(axis=0) + self.mac_static_pj,
        }


def evaluate_batch(
    layer: Layer,
    arch: Arch,
    batch: MappingBatch,
    costs: ArchCosts,
    *,
    on_chip: Collection[Operand] = (),
    counts: Counts | None = None,
) -> BatchResult:
    """Price every mapping of ``batch`` (of ``layer_view(layer, arch)``); invalid ones
    (overflow) are priced but flagged. ``on_chip``: operands whose DRAM traffic a network
    keeps on chip (``magnet.model.network_result``): their DRAM reads and updates are not
    charged, in energy or in DRAM cycles; the on-chip levels' counts stay as they are, but
    for weights that stay on chip across a stream of batches (``holds_weights``), which
    neither fill their home level nor cross the fan-outs above it. ``counts``: the batch's
    counts, when the caller has them (``analyze``).

    Never changes process-wide settings: a long run of batches is faster once the entry
    point has called ``magnet.perf.tune_allocator``."""
    dram = np.array([lvl.is_dram for lvl in arch.inner_first])
    if counts is None:
        counts = with_zeros(layer, arch, batch, analyze(layer, arch, batch))
    if on_chip:
        counts = _without_dram(counts, dram, on_chip, weight_home(arch, batch.keep))
    accesses = _accesses(arch, counts, costs)
    access_energy, control = accesses.energy_pj, accesses.control_pj
    routes = _routes(arch, batch)
    timing = _timing(arch, batch, counts, routes)
    latency = timing.latency_cycles
    upkeep = _upkeep(arch, counts, costs, latency, accesses.writes)
    fanouts = _fanouts(arch, counts, costs, routes)
    interconnect = fanouts.interconnect_pj
    done = counts.macs if counts.effectual_macs is None else counts.effectual_macs
    math = done * costs.mac_pj + fanouts.tree_pj
    energy = (
        _sum_rows(access_energy)
        + _sum_rows(upkeep.clock_pj)
        + _sum_rows(control)
        + _sum_rows(upkeep.static_pj)
        + _sum_rows(interconnect)
    )
    total = energy + math + upkeep.mac_clock_pj + upkeep.mac_static_pj
    bad = counts.valid & ~np.isfinite(total)
    if bad.any():
        raise not_a_result(f"the energy of layer {layer.name!r}", total[bad][0], costs)
    return BatchResult(
        counts=counts,
        energy_pj=total,
        access_energy_pj=access_energy,
        clock_pj=upkeep.clock_pj,
        control_pj=control,
        static_pj=upkeep.static_pj,
        interconnect_pj=interconnect,
        math_pj=math,
        mac_clock_pj=upkeep.mac_clock_pj,
        mac_static_pj=upkeep.mac_static_pj,
        dram=dram,
        nop=fanouts.nop,
        nop_bits=fanouts.link_bits,
        latency_cycles=latency,
        level_cycles=timing.level_cycles,
        link_cycles=timing.link_cycles,
        bottleneck=timing.bottleneck,
        utilization=done / (latency * arch.mac_count),
    )


def stack_key(layer: Layer, arch: Arch) -> tuple[bool, bool] | None:
    """What layers share to be priced together on ``arch`` (``evaluate_batches``): their
    ``window_flags``; None: the layer is priced alone (a GEMM view, or a sparse layer or
    design)."""
    if arch.layer_view == "gemm" or is_sparse(layer, arch):
        return None
    return window_flags(layer)


def evaluate_batches(
    layers: Sequence[Layer],
    arch: Arch,
    batches: Sequence[MappingBatch],
    costs: ArchCosts,
    *,
    on_chip: Collection[Operand] = (),
) -> list[BatchResult]:
    """``evaluate_batch`` of each layer's batch, priced in one pass (a ``LayerStack``): the
    layers share ``stack_key``, the batches their keep pattern. Numpy's cost per call, most
    of a small batch's time, is paid once (``magnet.mapper.lockstep``). Each result is its
    batch's as priced alone, to the bit (tested); an error names the first layer (the
    caller prices each alone to know which raised)."""
    if len(batches) == 1:
        return [evaluate_batch(layers[0], arch, batches[0], costs, on_chip=on_chip)]
    sizes = [b.size for b in batches]
    batch = MappingBatch.concat(list(batches))
    counts = analyze(LayerStack(list(layers), sizes), arch, batch)
    whole = evaluate_batch(layers[0], arch, batch, costs, on_chip=on_chip, counts=counts)
    out, start = [], 0
    for layer, size in zip(layers, sizes, strict=True):
        part = whole.take(slice(start, start + size))
        out.append(replace(part, counts=replace(part.counts, macs=layer.macs)))
        start += size
    return out


def not_a_result(what: str, value: float, costs: ArchCosts) -> PluginError:
    """The error for a total that is not a finite number, never reported nor stored as a
    result. Prices are finite and at most ``MAX_COST`` (``magnet.cost.contract.cost_problem``),
    so it comes from prices at the edges of a float: all 0, or near the bound."""
    return PluginError(
        f"{what} is {value:g}, not a finite number: the prices of cost model(s) "
        f"{costs.model_name!r} are at the edges of a float (0 for everything, or near "
        f"{MAX_COST:g}); see them with `magnet costs`, and check their units"
    )


class _Timing(NamedTuple):
    """When a batch's mappings finish, and what sets the pace (``BatchResult``'s fields)."""

    latency_cycles: FloatArray
    level_cycles: FloatArray
    link_cycles: FloatArray
    bottleneck: IntArray


def _timing(arch: Arch, batch: MappingBatch, counts: Counts, routes: dict[int, Routes]) -> _Timing:
    """Latency: the compute cycles, the slowest level's bandwidth or the chip-to-chip
    links', whichever is longest, plus the waits on hops; and which of them it was."""
    level_cycles = _level_cycles(arch, counts)
    slowest = level_cycles.max(axis=0)
    compute = _pipeline_cycles(arch, batch, counts)
    links = _link_cycles(arch, counts, routes)
    latency = np.maximum(np.maximum(compute, np.ceil(slowest - 1e-9)), np.ceil(links - 1e-9))
    bottleneck = np.where(
        links > np.maximum(compute, slowest),
        -2,
        np.where(slowest > compute, np.argmax(level_cycles, axis=0), -1),
    )
    latency = latency + np.ceil(_hop_cycles(arch, routes) - 1e-9)
    return _Timing(latency, level_cycles, links, bottleneck)


class _Accesses(NamedTuple):
    """What a batch's accesses cost, and how many there are."""

    energy_pj: FloatArray  # [level, operand, action, batch]: all instances
    control_pj: FloatArray  # [level, batch]: their address generation
    writes: FloatArray  # [level, batch]: fills and updates of one instance in use


def _accesses(arch: Arch, counts: Counts, costs: ArchCosts) -> _Accesses:
    """The reads, fills and updates of every level, priced. An access moves a block
    (``access_bits``) of whole words of the operand."""
    levels = arch.inner_first
    nl, nb = len(levels), counts.valid.shape[0]
    access_bits = np.array([lvl.access_bits for lvl in levels], dtype=float)
    block = np.maximum(1.0, np.floor(access_bits[:, None] / operand_bits(arch)))  # [l, operand]
    action_pj = np.stack([costs.read_pj, costs.write_pj, costs.update_pj], axis=1)  # [l, a]
    access_energy = np.empty((nl, 3, 3, nb))
    per_instance = np.zeros((3, nl, nb))  # [action, level, batch]
    for a, count in enumerate((counts.reads, counts.fills, counts.updates)):
        each = np.ceil(count / block[:, :, None] - 1e-9)  # [level, operand, batch]
        access_energy[:, :, a] = each * counts.instances[:, None] * action_pj[:, a, None, None]
        if counts.made is not None:  # gated accesses take their slots but cost nothing
            access_energy[:, :, a] *= counts.made[:, :, a]
        per_instance[a] = each.sum(axis=1)
    control = costs.control_pj_per_access[:, None] * per_instance.sum(axis=0) * counts.instances
    return _Accesses(access_energy, control, per_instance[1] + per_instance[2])


def _level_cycles(arch: Arch, counts: Counts) -> FloatArray:
    """[level, batch]: the cycles each level's bandwidth needs (words per cycle per
    instance: reads, writes, and both together against their limits)."""
    read_words = counts.reads.sum(axis=1)
    write_words = (counts.fills + counts.updates).sum(axis=1)
    level_cycles: FloatArray = np.zeros_like(read_words)
    for li, lvl in enumerate(arch.inner_first):
        for words, bw in (
            (read_words[li], lvl.read_bandwidth),
            (write_words[li], lvl.write_bandwidth),
            (read_words[li] + write_words[li], lvl.shared_bandwidth),
        ):
            if bw is not None:
                level_cycles[li] = np.maximum(level_cycles[li], words / bw)
    return level_cycles


class Routes(NamedTuple):
    """How a chip-to-chip fan-out's words travel its mesh, per mapping (``magnet.model.mesh``)."""

    hops: FloatArray  # [operand, batch]: links one distinct word crosses (its multicast tree)
    busiest: FloatArray  # [operand, batch]: share of the distinct words on the busiest port link
    one_hops: FloatArray  # [batch]: links a word for one chiplet crosses (a read-back)
    one_busiest: FloatArray  # [batch]: share of such words on the busiest port link
    mean_hops: FloatArray  # [batch]: the mean trip from a port to a chiplet in use
    max_hops: FloatArray  # [batch]: the longest


#: For each operand, the dimensions it does not depend on (a word multicast over them).
_MULTICAST_DIMS = {op: [d for d in range(NUM_DIMS) if d not in RELEVANT[op]] for op in Operand}


def _routes(arch: Arch, batch: MappingBatch | None) -> dict[int, Routes]:
    """{level: its fan-out's routes} for every chip-to-chip fan-out, per mapping of
    ``batch``: the block of chiplets each uses and each operand's multicast groups, from its
    spatial factors there. ``batch`` None: one pass over every chiplet, one word to one
    chiplet (a post-processing layer's)."""
    out = {}
    for li, lvl in enumerate(arch.inner_first):
        fx, fy = arch.fanouts[li]
        if not lvl.fanout.chip_to_chip or fx * fy == 1:
            continue
        if batch is None:
            keys = np.array([[fx, fy, 1, 1, 1, 1, 1, 1]])
        else:
            sx, sy = batch.spatial_x[li], batch.spatial_y[li]  # [dim, batch]
            # (an invalid mapping may ask for more than the mesh: priced on all of it)
            columns = [np.minimum(sx.prod(axis=0), fx), np.minimum(sy.prod(axis=0), fy)]
            for op in Operand:
                dims = _MULTICAST_DIMS[op]
                columns += [sx[dims].prod(axis=0), sy[dims].prod(axis=0)]
            keys = np.stack(columns, axis=1).astype(np.int64)
        out[li] = _route(arch, li, keys)
    return out


def _route(arch: Arch, li: int, keys: IntArray) -> Routes:
    """``Routes`` of the mappings whose blocks and multicast groups are ``keys``
    (int[batch, (gx, gy, dx_W, dy_W, dx_I, dy_I, dx_O, dy_O)]), each distinct one priced
    once on the level's mesh."""
    mesh = mesh_below(arch, li)
    base = max(mesh.width, mesh.height) + 1  # every key is at most the mesh's side
    if float(base) ** keys.shape[1] < 2.0**62:  # one number per key: a faster sort
        code = keys @ base ** np.arange(keys.shape[1], dtype=np.int64)
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    values = np.array([mesh.routes(*keys[i].tolist()) for i in first])
    v = values[inverse.ravel()].T
    return Routes(v[0:3], v[3:6], v[6], v[7], v[8], v[9])


def _link_cycles(arch: Arch, counts: Counts, routes: dict[int, Routes]) -> FloatArray:
    """[batch]: the cycles a package's chip-to-chip links need (0 on a chip). Each link
    carries at most ``Fanout.link_gb_per_s`` each way, its transfers sharing it (fluid
    sharing within the layer); the busiest is a port's (``magnet.model.mesh``): down it,
    the distinct weights, inputs and read-back partial sums of every group it serves, up it
    their partial sums; halo words cross a link between neighbours, each chiplet's share
    (taken on links of their own, apart from the ports' words)."""
    cycles = np.zeros(counts.valid.shape[0])
    widths = arch.compute.widths
    for li, route in routes.items():
        gb_per_s = arch.inner_first[li].fanout.link_gb_per_s
        if gb_per_s is None:
            continue
        bits_per_cycle = gb_per_s * 8 / arch.clock_ghz
        words = counts.fanout_words[li]
        down = words[Operand.W] * widths[Operand.W] * route.busiest[Operand.W]
        down = down + words[Operand.I] * widths[Operand.I] * route.busiest[Operand.I]
        down = down + counts.readback_words[li] * widths[Operand.O] * route.one_busiest
        up = words[Operand.O] * widths[Operand.O] * route.busiest[Operand.O]
        children = counts.instances[li - 1] if li else counts.mac_instances
        in_use = np.maximum(children / np.maximum(counts.instances[li], 1.0), 1.0)
        halo = counts.halo_words[li] * widths[Operand.I] / in_use
        cycles = np.maximum(cycles, np.maximum(np.maximum(down, up), halo) / bits_per_cycle)
    return cycles


def _hop_cycles(arch: Arch, routes: dict[int, Routes]) -> FloatArray | float:
    """[batch]: the cycles a layer waits on chip-to-chip hops (``Fanout.link_hop_ns``): its
    first words' trip from the port to a chiplet and its last partial sums' trip back.
    Uniform shares wait for the farthest chiplet in use, non-uniform ones (all finishing
    together) for the mean trip."""
    wait: FloatArray | float = 0.0
    for li, route in routes.items():
        fanout = arch.inner_first[li].fanout
        hops = route.max_hops if fanout.partitioning == "uniform" else route.mean_hops
        wait = wait + 2 * hops * fanout.link_hop_ns * arch.clock_ghz
    return wait


class _Upkeep(NamedTuple):
    """Energy that runs with the clock, not with the accesses (pJ)."""

    clock_pj: FloatArray  # [level, batch]
    static_pj: FloatArray  # [level, batch]
    mac_clock_pj: FloatArray  # [batch]
    mac_static_pj: FloatArray  # [batch]


def _upkeep(
    arch: Arch, counts: Counts, costs: ArchCosts, latency: FloatArray, writes: FloatArray
) -> _Upkeep:
    """Clock and leakage (pJ), by the design's gating styles (``Arch.clock_gating``,
    ``Arch.power_gating``).

    Clock: ``none``, every register of every instance every cycle; ``idle-units``, of the
    instances in use; ``fine``, a level instance's registers on the cycles they load (its
    fills and updates, ``writes`` per instance, at most one a cycle) and a MAC's input
    register on the cycles it computes (the padded MACs; one register per
    ``macs_per_input_register`` MACs, which it multicasts to), plus every cycle the gating
    cell of each register of the instances in use (the cell and the tree's trunk to it).
    Static: leakage power of every powered instance for the run's duration (mW x ns = pJ); under
    ``idle-units``, of a replicated unit (a level of several instances, a MAC) only while a
    layer uses it, and each layer wakes the units it uses (an upper bound: a unit two
    consecutive layers use stays on)."""
    every = np.array([lvl.instances for lvl in arch.inner_first], dtype=float)[:, None]
    run_ns = latency / arch.clock_ghz
    shared = arch.compute.macs_per_input_register  # MACs that load one input register
    registers = counts.mac_instances / shared  # those in use (a lower bound when a layer
    # uses fewer of the units a register feeds than there are)
    if arch.clock_gating == "none":
        clock = costs.clock_pj_per_cycle[:, None] * every * latency
        mac_clock = costs.mac_clock_pj_per_cycle * arch.mac_count / shared * latency
    elif arch.clock_gating == "idle-units":
        clock = costs.clock_pj_per_cycle[:, None] * counts.instances * latency
        mac_clock = costs.mac_clock_pj_per_cycle * registers * latency
    else:
        loads = np.minimum(writes, latency)  # [level, batch]: cycles an instance loads
        gates = costs.gated[:, None] * costs.gate_clock_pj_per_cycle * latency
        clock = (costs.clock_pj_per_cycle[:, None] * loads + gates) * counts.instances
        done = counts.padded_macs
        if counts.effectual_macs is not None:  # a gated or skipped MAC loads no register
            done = done * counts.effectual_macs / counts.macs
        mac_loads = np.minimum(done / shared, registers * latency)
        mac_gated = costs.gate_clock_pj_per_cycle if costs.mac_clock_pj_per_cycle else 0.0
        mac_clock = costs.mac_clock_pj_per_cycle * mac_loads
        mac_clock = mac_clock + mac_gated * registers * latency
    if arch.power_gating == "none":
        static = costs.leak_mw[:, None] * every * run_ns
        mac_static = costs.mac_leak_mw * arch.mac_count * run_ns
    else:  # replicated units (PEs, vector units, chiplets, MACs) in use, each woken once
        units = every > 1  # a level of one instance is always on: every layer uses it
        gated = (costs.leak_mw[:, None] * run_ns + costs.wake_pj[:, None]) * counts.instances
        static = np.where(units, gated, costs.leak_mw[:, None] * every * run_ns)
        mac_static = (costs.mac_leak_mw * run_ns + costs.mac_wake_pj) * counts.mac_instances
    return _Upkeep(
        clock_pj=clock, static_pj=static, mac_clock_pj=mac_clock, mac_static_pj=mac_static
    )


def _without_dram(
    counts: Counts, dram: BoolArray, operands: Collection[Operand], home: int | None
) -> Counts:
    """``counts`` with no reads, fills or updates of ``operands`` at the ``dram`` levels;
    weights among them stay at level ``home`` (``weight_home``): no fills there and no words
    on the fan-outs above it either, for the mappings that hold them (``holds_weights``;
    the others load them as before)."""
    rows, cols = np.flatnonzero(dram), np.array([int(op) for op in operands], dtype=np.intp)

    def cleared(moved: FloatArray) -> FloatArray:  # [level, operand, batch]
        out = moved.copy()
        out[np.ix_(rows, cols)] = 0.0
        return out

    reads, fills, fanout_words = cleared(counts.reads), cleared(counts.fills), counts.fanout_words
    if Operand.W in operands:
        # only a mapping that holds its weights can keep them: the others read them as before
        loads = ~holds_weights(counts, home)
        reads[rows, Operand.W] = np.where(loads, counts.reads[rows, Operand.W], 0.0)
        fills[rows, Operand.W] = np.where(loads, counts.fills[rows, Operand.W], 0.0)
        if home is not None:
            fills[home, Operand.W] = np.where(loads, counts.fills[home, Operand.W], 0.0)
            fanout_words = fanout_words.copy()
            fanout_words[home + 1 :, Operand.W] *= loads
    return replace(
        counts,
        reads=reads,
        fills=fills,
        updates=cleared(counts.updates),
        fanout_words=fanout_words,
    )


def tile_bits(result: Result, li: int, operands: tuple[Operand, ...]) -> float:
    """Bits of the tiles of ``operands`` each instance of level ``li`` keeps under
    ``result``'s mapping (those it bypasses: none); each asked once per result (a network's
    plan asks often, so its own code calls this, not the checked ``Result.tile_bits``)."""
    key = (li, *sorted(operands))
    known = result._tile_bits
    if key not in known:
        level, tiles = result.arch.inner_first[li], result.batch.counts.tile_words[li, :, 0]
        known[key] = float(sum(tiles[o] * level.bits(o) for o in operands if result.keep[li, o]))
    return known[key]


def on_chip(result: Result, operands: Collection[str]) -> Result:
    """``result``'s mapping priced with the DRAM traffic of ``operands`` kept on chip, each
    set priced once (a network's plan asks 8,000 times for fused ResNet-50 on
    simba-package-36, so its own code calls this, not the checked ``Result.with_on_chip``)."""
    ops = tuple(o for o in OPERANDS if o in operands)
    if ops == result.on_chip:
        return result
    if ops not in result._variants:
        view = layer_view(result.layer, result.arch)
        batch = to_batch(result.mapping, result.arch)
        codes = [Operand(OPERANDS.index(o)) for o in ops]
        counts = None if result.on_chip else result.batch.counts  # the mapping's, as counted
        variant = evaluate_batch(
            view, result.arch, batch, result.costs, on_chip=codes, counts=counts
        )
        result._variants[ops] = Result(
            result.layer,
            result.arch,
            result.mapping,
            result.costs,
            variant,
            batch.keep,
            ops,
            result.start,
        )
    return result._variants[ops]


def weight_home(arch: Arch, keep: BoolArray | None = None) -> int | None:
    """The level (index, innermost first) where a layer's weights stay across a stream of
    batches when they stay (``holds_weights``): the outermost on-chip level keeping them
    under ``keep`` (bool[level, operand]; None: the levels' own ``keeps``) that is not a
    streaming one; None: there is none."""
    homes = [
        li
        for li, lvl in enumerate(arch.inner_first)
        if (Operand.W in lvl.kept if keep is None else keep[li, Operand.W])
        and not lvl.is_dram
        and not lvl.streaming
    ]
    return max(homes) if homes else None


def holds_weights(counts: Counts, home: int | None) -> BoolArray:
    """bool[batch]: the valid mappings that fill each instance of the weight ``home`` once
    per batch (``weight_home``): each instance keeps one tile of the layer's weights for the
    whole layer, and the instances' tiles together are all of them; such weights can stay
    there across a stream of batches (``magnet.model.network_result``)."""
    if home is None:
        return np.zeros(counts.valid.shape, dtype=bool)
    fills, tile = counts.fills[home, Operand.W], counts.tile_words[home, Operand.W]
    held: BoolArray = counts.valid & (fills > 0) & (fills <= tile * (1 + 1e-9))
    return held


class Fanouts(NamedTuple):
    """What the fan-outs cost (``_fanouts``)."""

    interconnect_pj: FloatArray  # [level, batch]: wires and reductions of the fan-out below it
    tree_pj: FloatArray  # [batch]: the adder trees' correction to the MACs' accumulations
    nop: BoolArray  # bool[level]: fan-outs over chip-to-chip links
    link_bits: FloatArray  # [batch]: bits those links carry, summed over hops


def _fanouts(arch: Arch, counts: Counts, costs: ArchCosts, routes: dict[int, Routes]) -> Fanouts:
    """Wire and reduction energy of every fan-out, the adder trees' correction, and the
    bits carried by chip-to-chip links (a package's NoP: one hop is one link; the words'
    routes from the ports, ``routes``)."""
    widths = arch.compute.widths
    n = counts.valid.shape[0]
    interconnect = np.zeros((len(arch.levels), n))
    tree = np.zeros(n)
    links = np.array([li in routes for li in range(len(arch.levels))])
    link_bits = np.zeros(n)
    for li, lvl in enumerate(arch.inner_first):
        fx, fy = arch.fanouts[li]
        if fx * fy == 1:
            continue
        words, degree = counts.fanout_words[li], counts.fanout_degree[li]
        reduced = np.rint(degree[Operand.O]).astype(np.int64)
        tree_pj = costs.tree_pj[li]
        in_datapath = tree_pj is not None  # partial sums stay in the vector MAC
        if tree_pj is not None:  # lanes merged in the vector MAC's adder tree
            r = np.minimum(reduced, fx * fy)
            tree += words[Operand.O] * (tree_pj[r] - (r - 1) * costs.accum_add_pj)
        else:
            interconnect[li] += words[Operand.O] * (reduced - 1) * costs.reduce_add_pj[li]
        wire = costs.wire_pj_per_bit_mm[li] * costs.pitch_mm[li]
        if wire == 0 and not links[li]:
            continue
        unicast: FloatArray | float
        if links[li]:  # over the mesh from the ports
            reach, unicast = routes[li].hops, routes[li].one_hops
        elif lvl.fanout.topology == "systolic":
            reach, unicast = degree, 1.0
        else:  # to the group's nearest child, then one pitch per further child
            to_child = np.sqrt(fx * fy) / 2  # children laid out in the squarest grid
            reach, unicast = to_child + degree - 1, to_child
        bits = np.zeros(n)  # bits x pitches moved
        for op in Operand:
            if not (op is Operand.O and in_datapath):
                bits += words[op] * widths[op] * reach[op]
        if not in_datapath:
            bits += counts.readback_words[li] * widths[Operand.O] * unicast
        if links[li]:  # halo words: one hop, from the neighbour holding them
            bits += counts.halo_words[li] * widths[Operand.I]
        interconnect[li] += bits * wire
        if links[li]:
            link_bits += bits
    return Fanouts(interconnect, tree, links, link_bits)


def _pipeline_cycles(arch: Arch, batch: MappingBatch, counts: Counts) -> FloatArray:
    """Compute cycles: the temporal iterations, plus a systolic array's skew per fold.

    With a ``SystolicPipeline``, a fold is one pass of the loops at the register that keeps
    the stationary operand; each pays ``rows + cols - 2`` (outputs stationary) or
    ``2 rows + cols - 2`` (weights or inputs, shifted in first), and SCALE-Sim counts the
    last cycle from zero (``magnet.arch.spec.SystolicPipeline``).
    """
    cycles = counts.compute_cycles
    pipe = arch.pipeline
    if pipe is None:
        return cycles
    for name, level in pipe.registers.items():
        op = Operand(OPERANDS.index(name))
        li = arch.level_index(level)
        if batch.keep[li, op]:
            stream = batch.factors_t[li].prod(axis=0, dtype=np.float64)
            folds = cycles / stream
            skew = pipe.rows + pipe.cols - 2 if op is Operand.O else 2 * pipe.rows + pipe.cols - 2
            with_skew: FloatArray = cycles + folds * skew - 1
            return with_skew
    return cycles


def _sum_rows(x: FloatArray) -> FloatArray:
    """Sum over every axis but the last (the batch), adding rows in a fixed order.

    ``np.sum`` picks its summation order from the array's shape, so the same mapping would
    get a total differing in the last bits alone and inside a batch.
    """
    rows = x.reshape(-1, x.shape[-1])
    if rows.shape[1] == 1:  # one column: a reduction would add it pairwise
        one: FloatArray = np.add.accumulate(rows, axis=0)[-1]
        return one
    # along the outer axis numpy adds row after row, as a loop over the rows does
    # (tests/test_properties.py checks it against one): 4-40x faster than that loop
    total: FloatArray = np.add.reduce(rows, axis=0)
    return total


class OneRun(ABC):
    """What a result of one run (a ``BatchResult`` of one) reads off its ``batch`` on its
    ``arch``: the views a mapped layer's ``Result`` and a post-processing layer's
    ``PostResult`` share. ``kept`` (bool[level, operand], level 0 innermost) says which
    operands each level holds."""

    layer: Layer
    arch: Arch
    costs: ArchCosts
    batch: BatchResult

    @property
    @abstractmethod
    def kept(self) -> np.ndarray:
        """bool[level, operand]: the operands each level holds."""

    @property
    @abstractmethod
    def compute_cycles(self) -> int:
        """The run's own cycles, before the levels' bandwidth."""

    @property
    @abstractmethod
    def bottleneck(self) -> str:
        """What sets the run's latency (``compute``, ``NoP`` or a level's name)."""

    @property
    @abstractmethod
    def bound(self) -> Literal["compute", "memory"]:
        """The run's roofline side."""

    @property
    @abstractmethod
    def energy_pj_by_level(self) -> dict[str, float]:
        """Energy (pJ) by level, outermost first."""

    @property
    @abstractmethod
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy (pJ) by level and operand."""

    @property
    @abstractmethod
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category."""

    def _record(self, dataflow: str | None, **own: Any) -> LayerRecord:
        """A ``LayerRecord`` of the fields every run has, and ``own``: what its kind of run
        sets (MACs, utilisation, split, mapping; a post-processing layer's operations)."""
        return LayerRecord(
            layer=self.layer.name,
            kind=self.layer.kind,
            shape=self.layer.shape_str(),
            arch=self.arch.name,
            dataflow=dataflow,
            cost_model=self.costs.model_name,
            clock_ghz=self.arch.clock_ghz,
            voltage_v=self.arch.voltage_v,
            latency_cycles=self.latency_cycles,
            compute_cycles=self.compute_cycles,
            bottleneck=self.bottleneck,
            bound=self.bound,
            energy_pj=self.energy_pj,
            dram_bytes=self.dram_bytes,
            dram_bytes_by_operand=self.dram_bytes_by_operand,
            edp_pj_cycles=self.edp,
            energy_pj_by_level=self.energy_pj_by_level,
            energy_pj_by_operand=self.energy_pj_by_operand,
            energy_pj_by_category=self.energy_pj_by_category,
            nop_bytes=self.nop_bytes,
            accesses=self.accesses,
            area_mm2=self.area_mm2,
            area_mm2_by_component=self.costs.area_mm2_by_component,
            **own,
        )

    @property
    def dram_bytes_by_operand(self) -> dict[str, float]:
        """Bytes moved to and from DRAM, by operand."""
        moved = self.batch.dram_bytes(self.arch)[:, 0]
        return {OPERANDS[o]: float(moved[o]) for o in range(3)}

    @cached_property
    def dram_bytes(self) -> float:
        """Bytes moved to and from DRAM, all operands (found once: the plans of a network
        add it up for every entry)."""
        return sum(self.dram_bytes_by_operand.values())

    @property
    def latency_cycles(self) -> int:
        """Cycles of the run: compute, or the slowest level's bandwidth."""
        return round(float(self.batch.latency_cycles[0]))

    @property
    def energy_pj(self) -> float:
        """Energy of the run, pJ (every category)."""
        return float(self.batch.energy_pj[0])

    @property
    def edp(self) -> float:
        """Energy-delay product, pJ x cycles."""
        return self.energy_pj * self.latency_cycles

    @property
    def area_mm2(self) -> float | None:
        """Chip area, mm^2; None when the cost model gives no area."""
        return self.costs.area_mm2

    @property
    def nop_bytes(self) -> float:
        """Bytes the chip-to-chip links carry, summed over the links each crosses."""
        return float(self.batch.nop_bits[0]) / 8

    def _level_pj(self) -> dict[str, float]:
        """Energy per storage level, outermost first."""
        per_level = self.batch.level_energy_pj[:, 0]
        levels = self.arch.levels
        return {lvl.name: float(per_level[len(levels) - 1 - i]) for i, lvl in enumerate(levels)}

    def _mac_pj(self) -> float:
        """The MACs' energy: math, their clock and their leakage."""
        b = self.batch
        return float(b.math_pj[0] + b.mac_clock_pj[0] + b.mac_static_pj[0])

    def _access_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy (pJ) by level (outermost first) and kept operand."""
        e = self.batch.access_energy_pj[..., 0].sum(axis=2)  # [level, operand]
        kept = self.kept  # made on each call by some runs: once here
        return {
            lvl.name: {OPERANDS[o]: float(e[li, o]) for o in range(3) if kept[li, o]}
            for li, lvl in reversed(list(enumerate(self.arch.inner_first)))
        }

    @property
    def accesses(self) -> dict[str, dict[str, dict[str, float]]]:
        """Words per instance by level (outermost first), kept operand and action
        (reads, fills, updates)."""
        c, kept = self.batch.counts, self.kept
        return {
            lvl.name: {
                OPERANDS[o]: {a: float(getattr(c, a)[li, o, 0]) for a in ACTIONS}
                for o in range(3)
                if kept[li, o]
            }
            for li, lvl in reversed(list(enumerate(self.arch.inner_first)))
        }


@checked_methods()
@dataclass
class Result(OneRun):
    """One evaluated mapping of ``layer`` (reported by its own name and shape; counted in
    ``layer_view(layer, arch)``)."""

    layer: Layer
    arch: Arch
    mapping: Mapping
    costs: ArchCosts
    batch: BatchResult
    keep: np.ndarray  # bool[level, operand], level 0 innermost
    on_chip: tuple[str, ...] = ()  # operands a network kept on chip (no DRAM traffic)
    # how its mapping was found: searched afresh, from a neighbouring design's (warm) or a
    # design that prices it alike (exact): ``magnet.mapper.warm``
    start: Literal["searched", "warm", "exact"] = "searched"
    # ``on_chip``'s results, by operands kept on chip
    _variants: dict[tuple[str, ...], Result] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    # ``tile_bits``'s answers, by level and operands
    _tile_bits: dict[tuple[int, ...], float] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def with_on_chip(self, operands: Collection[str]) -> Result:
        """The same mapping priced with the DRAM traffic of ``operands`` kept on chip (each
        set priced once: the plans a pipeline's planner prices share their mappings):
        ``on_chip``."""
        return on_chip(self, operands)

    @cached_property
    def weight_home(self) -> int | None:
        """The level (index, innermost first) its weights would stay in across a stream of
        batches (``weight_home``), None: none could keep them (asked often by the plans of a
        network: found once)."""
        return weight_home(self.arch, self.keep)

    @property
    def holds_weights(self) -> bool:
        """Whether each instance of the weight home keeps one tile of the weights for the
        whole layer (``holds_weights``): the weights can stay there across batches."""
        return bool(holds_weights(self.batch.counts, self.weight_home)[0])

    @property
    def held_weight_bits(self) -> float:
        """Bits of weights each instance of the weight home keeps (its tile; 0: none)."""
        home = self.weight_home
        return 0.0 if home is None else tile_bits(self, home, (Operand.W,))

    def tile_bits(self, li: int, operands: Collection[Operand] = tuple(Operand)) -> float:
        """Bits of the tiles of ``operands`` each instance of level ``li`` keeps (those it
        bypasses: none): ``tile_bits``."""
        return tile_bits(self, li, tuple(operands))

    @property
    def bound(self) -> Literal["compute", "memory"]:
        """Roofline: ``compute`` when the MACs set the latency, else ``memory`` (a level's
        bandwidth; ``bottleneck`` names it)."""
        return "compute" if int(self.batch.bottleneck[0]) == -1 else "memory"

    @property
    def compute_cycles(self) -> int:
        """The temporal iterations of the loop nest (padded); a systolic array's skew and
        the levels' bandwidth are in ``latency_cycles``."""
        return round(float(self.batch.counts.compute_cycles[0]))

    @property
    def utilization(self) -> float:
        """Useful MACs / (cycles x MAC units), in [0, 1]."""
        return float(self.batch.utilization[0])

    @property
    def macs(self) -> int:
        """MACs of the layer (its own, not of the padded loop nest)."""
        return self.layer.macs

    @property
    def bottleneck(self) -> str:
        """``compute``, ``NoP`` (a package's chip-to-chip links), or the name of the level
        whose bandwidth sets the latency."""
        b = int(self.batch.bottleneck[0])
        return {-1: "compute", -2: "NoP"}.get(b) or self.arch.inner_first[b].name

    @property
    def kept(self) -> np.ndarray:
        """bool[level, operand]: the operands each level holds (``keep``)."""
        return self.keep

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Per level (outermost first) plus the MACs, named as in the input."""
        return {**self._level_pj(), self.arch.compute.name: self._mac_pj()}

    @property
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy (pJ) by level (outermost first) and kept operand."""
        return self._access_pj_by_operand()

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category (the records' ``CATEGORIES``); the values add up to
        ``energy_pj``."""
        return {k: float(v[0]) for k, v in self.batch.category_pj().items()}

    @property
    def partition(self) -> dict[str, int]:
        """How the layer is split across chiplets: the spatial factors (X times Y) of the
        fan-outs over chip-to-chip links, dimensions split more than once only; empty on
        a chip."""
        split: dict[str, int] = {}
        for lvl in self.arch.levels:
            if not lvl.fanout.chip_to_chip:
                continue
            loops = self.mapping.level(lvl.name)
            if loops is None:
                continue
            for factors in (loops.spatial_x, loops.spatial_y):
                for dim, f in factors.items():
                    split[dim] = split.get(dim, 1) * f
        return {d: f for d, f in split.items() if f > 1}

    @property
    def densities(self) -> dict[str, str] | None:
        """The densities of the layer's tensors that are not dense (None: all dense)."""
        d = self.layer.densities
        shown = {OPERANDS[op]: d.of(op).describe() for op in Operand if not d.of(op).dense}
        return shown or None

    @property
    def effectual_macs(self) -> float | None:
        """The MACs done when the MACs gate or skip zeros (None: every MAC)."""
        done = self.batch.counts.effectual_macs
        return None if done is None else float(done[0])

    @property
    def zeros_saved(self) -> dict[str, ZeroSaving] | None:
        """What each way the design handles zeros saves on this mapping (``without_each``):
        the energy and cycles without it, less those with it (None: the design handles no
        zeros)."""
        if not self.arch.sparse:
            return None
        view = layer_view(self.layer, self.arch)
        batch = to_batch(self.mapping, self.arch)
        codes = [Operand(OPERANDS.index(o)) for o in self.on_chip]
        out = {}
        for feature, arch in without_each(self.arch).items():
            other = evaluate_batch(view, arch, batch, self.costs, on_chip=codes)
            out[feature] = ZeroSaving(
                energy_pj=float(other.energy_pj[0]) - self.energy_pj,
                cycles=round(float(other.latency_cycles[0])) - self.latency_cycles,
            )
        return out

    def record(self, dataflow: str | None = None, mapper: MapperStats | None = None) -> LayerRecord:
        """This result as a ``LayerRecord`` (what ``--json`` prints)."""
        return self._record(
            dataflow,
            macs=self.macs,
            utilization=self.utilization,
            energy_pj_per_mac=self.energy_pj / self.macs,
            partition=self.partition,
            mapping=self.mapping.to_data()["mapping"],
            mapper=mapper,
            densities=self.densities,
            effectual_macs=self.effectual_macs,
            zeros_saved=self.zeros_saved,
        )


def evaluate_mapping(
    layer: Layer, arch: Arch, costs: ArchCosts, mapping: Mapping, *, source: str = "mapping"
) -> Result:
    """Evaluate one mapping; raises ``InvalidMappingError`` if it does not fit the hardware."""
    view = layer_view(layer, arch)
    batch = to_batch(mapping, arch, source)
    check_coverage(batch, view, source)
    result = evaluate_batch(view, arch, batch, costs)
    if not result.valid[0]:
        raise InvalidMappingError(
            overflow_message(view, arch, batch, result.counts, 0), source=source
        )
    return Result(layer, arch, mapping, costs, result, batch.keep)


def overflow_message(layer: Layer, arch: Arch, batch: MappingBatch, counts: Counts, i: int) -> str:
    """Which level overflows, with which operand tiles, by how much."""
    li = int(np.argmax(counts.overflow_bits[:, i]))
    lvl = arch.inner_first[li]
    parts = []
    for o in range(3):
        if batch.keep[li, o]:
            words = int(counts.tile_words[li, o, i])
            parts.append(f"{OPERANDS[o]} {words} words x {lvl.bits(Operand(o))} bits")
    over = int(counts.overflow_bits[li, i])
    return (
        f"the tiles kept at {lvl.name!r} ({'; '.join(parts)}) need "
        f"{int(over + (lvl.capacity_bits or 0))} bits but it holds {lvl.capacity_bits} bits "
        f"({lvl.describe_capacity()}): over by {over} bits ({over / 8:g} bytes)"
    )
