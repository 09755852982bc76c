"""Pricing access counts into energy, cycles, utilisation and area.

``evaluate_batch`` is the one evaluator: the mapper calls it on thousands of mappings at a
time, and ``evaluate`` calls it on a batch of one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts, CostModel, price_arch
from magnet.errors import InvalidMappingError
from magnet.mapping.analysis import Counts, analyze
from magnet.mapping.mapping import Mapping, MappingBatch, check_coverage, to_batch
from magnet.workload.dims import OPERANDS, Operand
from magnet.workload.layer import Layer

ACTIONS = ("reads", "fills", "updates")


@dataclass
class BatchResult:
    """Energy and time of a batch of mappings. Arrays put the batch last."""

    counts: Counts
    energy_pj: np.ndarray  # [batch]
    access_energy_pj: np.ndarray  # [level, operand, action, batch]
    leakage_pj: np.ndarray  # [level, batch]
    network_pj: np.ndarray  # [level, batch]
    mac_pj: np.ndarray  # [batch]
    mac_leakage_pj: np.ndarray  # [batch]
    latency_cycles: np.ndarray  # [batch]
    level_cycles: np.ndarray  # [level, batch]: cycles each level's bandwidth needs
    bottleneck: np.ndarray  # int[batch]: -1 compute, else level index (innermost first)
    utilization: np.ndarray  # [batch]

    @property
    def valid(self) -> np.ndarray:
        return self.counts.valid

    @property
    def edp(self) -> np.ndarray:
        return self.energy_pj * self.latency_cycles

    @property
    def level_energy_pj(self) -> np.ndarray:
        """[level, batch]: accesses + leakage + the network below the level."""
        return self.access_energy_pj.sum(axis=(1, 2)) + self.leakage_pj + self.network_pj


def evaluate_batch(layer: Layer, arch: Arch, batch: MappingBatch, costs: ArchCosts) -> BatchResult:
    """Price every mapping of ``batch``; invalid ones (overflow) are priced but flagged."""
    counts = analyze(layer, arch, batch)
    levels = arch.inner_first
    bits = np.array([[lvl.bits(Operand(o)) for o in range(3)] for lvl in levels], dtype=float)
    access_bits = np.array([lvl.access_bits for lvl in levels], dtype=float)
    block = np.maximum(1.0, np.floor(access_bits[:, None] / bits))  # [level, operand]

    action_pj = np.stack([costs.read_pj, costs.write_pj, costs.update_pj], axis=1)  # [l, a]
    access_energy = np.empty((len(levels), 3, 3, batch.size))
    for a, count in enumerate((counts.reads, counts.fills, counts.updates)):
        accesses = np.ceil(count / block[:, :, None] - 1e-9)
        access_energy[:, :, a] = accesses * (
            action_pj[:, a, None, None] * counts.instances[:, None]
        )

    # cycles: compute vs. the bandwidth of each level (words per cycle per instance)
    read_words = counts.reads.sum(axis=1)
    write_words = (counts.fills + counts.updates).sum(axis=1)
    level_cycles = np.zeros_like(read_words)
    for li, lvl in enumerate(levels):
        for words, bw in (
            (read_words[li], lvl.read_bandwidth),
            (write_words[li], lvl.write_bandwidth),
            (read_words[li] + write_words[li], lvl.shared_bandwidth),
        ):
            if bw is not None:
                level_cycles[li] = np.maximum(level_cycles[li], words / bw)
    slowest = level_cycles.max(axis=0)
    compute = counts.compute_cycles + _pipeline_cycles(arch, batch, counts)
    latency = np.maximum(compute, np.ceil(slowest - 1e-9))
    bottleneck = np.where(slowest > compute, np.argmax(level_cycles, axis=0), -1)

    leakage = costs.leak_pj_per_cycle[:, None] * latency * counts.instances
    network = counts.network_words * counts.network_hops * costs.hop_pj[:, None]
    mac = np.full(batch.size, counts.macs * costs.mac_pj)
    mac_leak = costs.mac_leak_pj_per_cycle * latency * counts.mac_instances
    energy = _sum_rows(access_energy) + _sum_rows(leakage) + _sum_rows(network)
    return BatchResult(
        counts=counts,
        energy_pj=energy + mac + mac_leak,
        access_energy_pj=access_energy,
        leakage_pj=leakage,
        network_pj=network,
        mac_pj=mac,
        mac_leakage_pj=mac_leak,
        latency_cycles=latency,
        level_cycles=level_cycles,
        bottleneck=bottleneck,
        utilization=counts.macs / (latency * arch.mac_count),
    )


_SYSTOLIC_REGISTERS = {"OutputReg": Operand.O, "WeightReg": Operand.W, "InputReg": Operand.I}


def _pipeline_cycles(arch: Arch, batch: MappingBatch, counts: Counts) -> np.ndarray | float:
    """Fill and drain of a systolic array (SCALE-Sim's cycle model), 0 for other templates.

    Each fold (a new stationary word in every PE register) costs rows + cols - 2 extra
    cycles when outputs are stationary (skewed inputs in, results out), and 2 rows + cols - 2
    when weights or inputs are (they are first shifted in); the last fold's drain overlaps
    nothing, less one cycle (SCALE-Sim's count). The stationary operand is the one a PE
    register keeps (the systolic dataflows bypass the other two registers).
    """
    if arch.template != "systolic":
        return 0.0
    rows, cols = arch.compute.mesh_y, arch.compute.mesh_x
    for li, lvl in enumerate(arch.inner_first):
        op = _SYSTOLIC_REGISTERS.get(lvl.name)
        if op is not None and batch.keep[li, op]:
            folds = counts.tile_changes[li, op]
            overhead = rows + cols - 2 if op is Operand.O else 2 * rows + cols - 2
            return folds * overhead - 1
    return 0.0


def _sum_rows(x: np.ndarray) -> np.ndarray:
    """Sum over every axis but the last (the batch), adding rows in a fixed order.

    ``np.sum`` picks its summation order from the array's shape, so the same mapping would
    get a total differing in the last bits alone and inside a batch.
    """
    rows = x.reshape(-1, x.shape[-1])
    total = rows[0].copy()
    for row in rows[1:]:
        total += row
    return total


@dataclass
class Result:
    """One evaluated mapping, with breakdowns keyed by the names used in the input."""

    layer: Layer
    arch: Arch
    mapping: Mapping
    costs: ArchCosts
    batch: BatchResult
    keep: np.ndarray  # bool[level, operand], level 0 innermost

    @property
    def energy_pj(self) -> float:
        return float(self.batch.energy_pj[0])

    @property
    def latency_cycles(self) -> float:
        return float(self.batch.latency_cycles[0])

    @property
    def utilization(self) -> float:
        return float(self.batch.utilization[0])

    @property
    def edp(self) -> float:
        return self.energy_pj * self.latency_cycles

    @property
    def macs(self) -> int:
        return self.layer.macs

    @property
    def area_mm2(self) -> float | None:
        return self.costs.area_mm2

    @property
    def bottleneck(self) -> str:
        b = int(self.batch.bottleneck[0])
        return "compute" if b < 0 else self.arch.inner_first[b].name

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Per level (outermost first) plus the MACs, named as in the input."""
        per_level = self.batch.level_energy_pj[:, 0]
        out = {
            lvl.name: float(per_level[len(self.arch.levels) - 1 - i])
            for i, lvl in enumerate(self.arch.levels)
        }
        out[self.arch.compute.name] = float(self.batch.mac_pj[0] + self.batch.mac_leakage_pj[0])
        return out

    @property
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        e = self.batch.access_energy_pj[..., 0].sum(axis=2)  # [level, operand]
        return {
            lvl.name: {OPERANDS[o]: float(e[li, o]) for o in range(3) if self.keep[li, o]}
            for li, lvl in enumerate(self.arch.inner_first)
        }

    @property
    def accesses(self) -> dict[str, dict[str, dict[str, float]]]:
        c = self.batch.counts
        out = {}
        for li, lvl in enumerate(self.arch.inner_first):
            out[lvl.name] = {
                OPERANDS[o]: {a: float(getattr(c, a)[li, o, 0]) for a in ACTIONS}
                for o in range(3)
                if self.keep[li, o]
            }
        return dict(reversed(list(out.items())))

    def to_dict(self) -> dict[str, Any]:
        c = self.batch.counts
        return {
            "layer": self.layer.name,
            "shape": self.layer.shape_str(),
            "macs": self.macs,
            "latency_cycles": self.latency_cycles,
            "compute_cycles": float(c.compute_cycles[0]),
            "bottleneck": self.bottleneck,
            "utilization": self.utilization,
            "energy_pj": self.energy_pj,
            "energy_pj_per_mac": self.energy_pj / self.macs,
            "edp_pj_cycles": self.edp,
            "energy_pj_by_level": self.energy_pj_by_level,
            "energy_pj_by_operand": self.energy_pj_by_operand,
            "leakage_pj": float(self.batch.leakage_pj[:, 0].sum() + self.batch.mac_leakage_pj[0]),
            "network_pj": float(self.batch.network_pj[:, 0].sum()),
            "accesses": self.accesses,
            "area_mm2": self.area_mm2,
            "cost_model": self.costs.model_name,
            "mapping": self.mapping.to_data()["mapping"],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)


def evaluate(
    layer: Layer,
    arch: Arch,
    mapping: Mapping,
    cost_model: CostModel | list[CostModel] | ArchCosts | None = None,
    *,
    source: str = "mapping",
) -> Result:
    """Evaluate one mapping; raises ``InvalidMappingError`` if it does not fit the hardware."""
    batch = to_batch(mapping, arch, source)
    check_coverage(batch, layer, source)
    costs = price_arch(arch, cost_model)
    result = evaluate_batch(layer, arch, batch, costs)
    if not result.valid[0]:
        raise InvalidMappingError(
            overflow_message(layer, arch, batch, result.counts, 0), source=source
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
