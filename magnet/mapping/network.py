"""Evaluate a whole network: one mapping per distinct layer shape, every layer reported.

A per-layer mapping file names the mapping of each layer; a layer without one takes the
mapping of another layer of the same shape, then ``default``::

    layers:
      conv1:
        - target: DRAM
          temporal: {K: 4}
      layer1.0.conv2: [...]
    default: [...]          # optional
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from magnet.arch.spec import Arch, StorageLevel
from magnet.arguments import check_fields, checked_call, checked_methods
from magnet.cost import ArchCosts
from magnet.errors import MagnetError
from magnet.files import read_yaml
from magnet.mapping.evaluate import Result, evaluate_mapping, not_a_result
from magnet.mapping.mapping import Mapping
from magnet.mapping.records import LayerRow, NetworkRecord
from magnet.workload.dims import OPERANDS, Operand
from magnet.workload.layer import Layer, ShapeKey
from magnet.workload.network import Network, NetworkLayer


@checked_methods(init=True)
@dataclass
class LayerMappings:
    """Mappings by layer name, plus an optional default."""

    by_name: dict[str, Mapping]
    default: Mapping | None = None
    source: str = "mappings"

    def __post_init__(self) -> None:
        check_fields(self)

    @classmethod
    @checked_call
    def from_yaml(cls, path: str | Path) -> LayerMappings:
        """Read a per-layer mapping file (see the module docstring)."""
        data, src = read_yaml(path), str(path)
        return cls.from_data(data, src)

    @classmethod
    def from_data(cls, data: Any, source: str) -> LayerMappings:
        """From parsed YAML: ``layers`` (name -> mapping) and optionally ``default``."""
        if not isinstance(data, dict) or not set(data) <= {"layers", "default"}:
            raise MagnetError(
                "expected 'layers' (layer name -> mapping) and optionally 'default'",
                source=source,
            )
        layers = data.get("layers") or {}
        if not isinstance(layers, dict):
            raise MagnetError(
                "'layers' must map layer names to mappings", source=source, field="layers"
            )
        by_name = {
            str(name): Mapping.from_data(levels, source=f"{source}: layers.{name}")
            for name, levels in layers.items()
        }
        default = data.get("default")
        return cls(
            by_name=by_name,
            default=None if default is None else Mapping.from_data(default, f"{source}: default"),
            source=source,
        )

    def to_data(self) -> dict[str, Any]:
        """As YAML data, the inverse of ``from_data``."""
        out: dict[str, Any] = {
            "layers": {n: m.to_data()["mapping"] for n, m in self.by_name.items()}
        }
        if self.default is not None:
            out["default"] = self.default.to_data()["mapping"]
        return out


def _home(arch: Arch, operand: Operand) -> StorageLevel | None:
    """The outermost on-chip level that keeps ``operand`` (the global buffer), if any."""
    return next(
        (
            lvl
            for lvl in arch.levels
            if not lvl.is_dram and operand in lvl.kept and lvl.capacity_bits is not None
        ),
        None,
    )


def _fits(producer: Result, consumer: Result) -> bool:
    """Whether the global buffer holds ``producer``'s output for ``consumer`` (see
    ``NetworkResult.runs``)."""
    arch = producer.arch
    out_home, in_home = _home(arch, Operand.O), _home(arch, Operand.I)
    if out_home is None or in_home is None:
        return False
    li_out, li_in = arch.level_index(out_home.name), arch.level_index(in_home.name)
    if not (producer.keep[li_out, Operand.O] and consumer.keep[li_in, Operand.I]):
        return False  # a mapping that bypasses the global buffer does not pass through it
    # the activation is the producer's finished output, at the input width (the consumer's
    # zero padding, part of its input window box, is made on the fly, not stored)
    bits = producer.layer.operand_size(Operand.O) * in_home.bits(Operand.I)
    for lvl in {out_home.name: out_home, in_home.name: in_home}.values():
        li = arch.level_index(lvl.name)
        others = 0.0
        if not lvl.streaming:  # a streaming level's tiles pass through it
            for run, skip in ((producer, Operand.O), (consumer, Operand.I)):
                tiles = run.batch.counts.tile_words[li, :, 0]
                own = sum(
                    tiles[o] * lvl.bits(o) for o in Operand if o is not skip and run.keep[li, o]
                )
                others = max(others, own)
        capacity_bits = lvl.capacity_bits
        # the fewer instances of either side's arch (a pipeline's neighbours run on groups
        # of a package's chiplets: ``magnet.mapper.pipeline``)
        instances = min(r.arch.inner_first[li].instances for r in (producer, consumer))
        if capacity_bits is None or bits + others > capacity_bits * instances:
            return False  # (a home level is bounded: ``_home``)
    return True


def on_chip_runs(network: Network, base: list[Result]) -> list[Result]:
    """``base`` (a result per entry of ``network``, each mapped alone) priced with the
    activations kept on chip between neighbours (the rule: ``NetworkResult.runs``)."""
    keep_in = [False] * len(base)
    keep_out = [False] * len(base)
    for i, (fed, alone) in enumerate(network.handoffs()):
        if fed and _fits(base[i], base[i + 1]):
            keep_in[i + 1] = True
            keep_out[i] = alone
    return [
        r.with_on_chip(
            [name for name, kept in (("inputs", keep_in[i]), ("outputs", keep_out[i])) if kept]
        )
        for i, r in enumerate(base)
    ]


@checked_methods()
@dataclass
class NetworkResult:
    """A network on one design: one ``Result`` per distinct layer shape, a row per layer.

    Layers run one after another; ``runs`` prices each layer of the network with the
    activations its neighbours keep on chip.
    """

    network: Network
    arch: Arch
    costs: ArchCosts
    by_shape: dict[ShapeKey, Result]  # Layer.shape_key() -> result
    dataflow: str | None = None

    def result(self, layer: Layer) -> Result:
        """The mapping of ``layer``'s shape as mapped alone (its activations in DRAM)."""
        return self.by_shape[layer.shape_key()]

    @cached_property
    def runs(self) -> list[Result]:
        """Each entry of the network as it runs there: its shape's mapping, priced with the
        activations that stay on chip.

        The rule. Each layer's mapping is found alone, reading its inputs from DRAM and
        writing its outputs there. Then, between consecutive layers i and i + 1 where i's
        output is i + 1's input (``Network.handoffs``: the ONNX graph or the zoo's, else the
        list order), the activation stays in the global buffer (the outermost on-chip level
        keeping outputs, and the one keeping inputs) when that level holds the whole
        activation (i's output at the input width; i + 1's zero padding is not stored)
        together with the larger of what either layer's mapping keeps there besides it
        (i's inputs and weights, i + 1's outputs and weights; a streaming level's tiles pass
        through and take no room), and both mappings pass the activation through that level
        (neither bypasses it). Then i + 1 reads no input from DRAM, and, when no other layer
        needs the activation, i writes no output to DRAM (nor reads partial sums back: the
        region that holds the whole activation holds them). The on-chip traffic is charged
        as the mappings count it: i's output leaves the global buffer and i + 1's input
        enters it, as a copy between its regions would. Weights are not
        carried between layers (each layer has its own); a batch is the N of each layer's
        loop nest, so weights resident across a batch are the mapping's own reuse. Energy
        and latency (DRAM cycles, and static energy over the shorter run) are priced again
        with the DRAM traffic that is left.
        """
        return on_chip_runs(self.network, [self.result(e.layer) for e in self.network.layers])

    @property
    def macs(self) -> int:
        """MACs of the whole network, repeats included."""
        return self.network.macs

    def _total(self, key: str) -> float:
        """``key`` of every entry as it runs (``runs``), times its repeat count, summed."""
        total: float = sum(getattr(r, key) * e.repeat for r, e in self._entries())
        return total

    def _entries(self) -> Iterator[tuple[Result, NetworkLayer]]:
        """(run, network entry) pairs: each entry of the network as it runs there."""
        return zip(self.runs, self.network.layers, strict=True)

    @property
    def energy_pj(self) -> float:
        """Energy of the whole network, pJ."""
        return self._total("energy_pj")

    @property
    def latency_cycles(self) -> int:
        """Cycles of the whole network: layers run one after another."""
        return sum(r.latency_cycles * e.repeat for r, e in self._entries())

    @property
    def dram_bytes(self) -> float:
        """Bytes moved to and from DRAM by the whole network."""
        return self._total("dram_bytes")

    @property
    def utilization(self) -> float:
        """Useful MACs / (cycles x MAC units) of the whole network."""
        return self.macs / (self.latency_cycles * self.arch.mac_count)

    def _sum(self, key: str) -> dict[str, float]:
        """The breakdown ``key`` of every entry as it runs, times its repeat count, summed."""
        out: dict[str, float] = {}
        for r, e in self._entries():
            for name, pj in getattr(r, key).items():
                out[name] = out.get(name, 0.0) + pj * e.repeat
        return out

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Energy (pJ) by level, outermost first, plus the MACs."""
        return self._sum("energy_pj_by_level")

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category; the values add up to ``energy_pj``."""
        return self._sum("energy_pj_by_category")

    @property
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy by level (outermost first) and operand, of every entry as it runs
        (``runs``) times its repeat count; adds up to the ``memory`` and ``dram`` categories."""
        out: dict[str, dict[str, float]] = {lvl.name: {} for lvl in self.arch.levels}
        for r, e in self._entries():
            for level, ops in r.energy_pj_by_operand.items():
                slot = out[level]
                for op, pj in ops.items():
                    slot[op] = slot.get(op, 0.0) + pj * e.repeat
        return {level: {op: ops[op] for op in OPERANDS if op in ops} for level, ops in out.items()}

    def rows(self) -> list[LayerRow]:
        """A ``LayerRow`` per entry of the network, as it runs (one repeat's numbers)."""
        return [
            LayerRow(
                name=e.layer.name,
                shape=e.layer.shape_str(),
                count=e.repeat,
                macs=e.layer.macs,
                energy_pj=r.energy_pj,
                latency_cycles=r.latency_cycles,
                utilization=r.utilization,
                bottleneck=r.bottleneck,
                bound=r.bound,
                dram_bytes=r.dram_bytes,
                off_chip=[op for op, b in r.dram_bytes_by_operand.items() if b > 0],
                energy_pj_by_category=r.energy_pj_by_category,
                partition=r.partition,
                nop_bytes=r.nop_bytes,
            )
            for r, e in self._entries()
        ]

    def record(self) -> NetworkRecord:
        """The network as a ``NetworkRecord`` (what ``--json`` prints and a search stores)."""
        energy, latency = self.energy_pj, self.latency_cycles  # sums over every layer
        latency_s = latency / (self.arch.clock_ghz * 1e9)
        energy_j = energy * 1e-12
        ops = 2 * self.macs
        area = self.costs.area_mm2
        tops = ops / latency_s / 1e12
        tops_per_w = ops / energy_j / 1e12 if energy_j > 0 else math.inf
        tops_per_mm2 = None if area is None else tops / area if area > 0 else math.inf
        for metric, value in (("tops_per_w", tops_per_w), ("tops_per_mm2", tops_per_mm2)):
            if value is not None and not math.isfinite(value):
                what = f"the {metric} of {self.network.name!r} on {self.arch.name!r}"
                priced = f"(energy {energy:g} pJ, area {area} mm^2)"
                raise not_a_result(f"{what} {priced}", value, self.costs)
        return NetworkRecord(
            network=self.network.name,
            arch=self.arch.name,
            dataflow=self.dataflow,
            cost_model=self.costs.model_name,
            clock_ghz=self.arch.clock_ghz,
            voltage_v=self.arch.voltage_v,
            notes=list(self.network.notes),
            layers_total=self.network.layer_count,
            unique_shapes=len(self.by_shape),
            macs=self.macs,
            latency_cycles=latency,
            latency_s=latency_s,
            images_per_s=self.network.batch / latency_s,
            chiplets=self.arch.chiplets,
            utilization=self.utilization,
            energy_pj=energy,
            energy_pj_per_mac=energy / self.macs,
            edp_pj_cycles=energy * latency,
            dram_bytes=self.dram_bytes,
            nop_bytes=self._total("nop_bytes"),
            power_w=energy_j / latency_s,
            tops=tops,
            tops_per_w=tops_per_w,
            tops_per_mm2=tops_per_mm2,
            peak_macs_per_cycle=self.arch.mac_count,
            dram_bytes_per_cycle=self.arch.dram_bytes_per_cycle,
            energy_pj_by_level=self.energy_pj_by_level,
            energy_pj_by_operand=self.energy_pj_by_operand,
            energy_pj_by_category=self.energy_pj_by_category,
            area_mm2=area,
            area_mm2_by_component=self.costs.area_mm2_by_component,
            layers=self.rows(),
            mappings={
                r.layer.shape_str(): r.mapping.to_data()["mapping"] for r in self.by_shape.values()
            },
        )


def evaluate_network(
    network: Network, arch: Arch, costs: ArchCosts, mappings: LayerMappings
) -> NetworkResult:
    """Evaluate each distinct layer shape once under its given mapping."""
    by_shape: dict[ShapeKey, Result] = {}
    missing: list[str] = []
    for layer, _count, names in network.unique_layers():
        named = next((n for n in names if n in mappings.by_name), None)
        mapping = mappings.default if named is None else mappings.by_name[named]
        if mapping is None:
            missing.extend(names)
            continue
        src = f"{mappings.source}: " + ("default" if named is None else f"layers.{named}")
        by_shape[layer.shape_key()] = evaluate_mapping(layer, arch, costs, mapping, source=src)
    if missing:
        raise MagnetError(
            f"no mapping for {len(missing)} layer(s): {', '.join(missing[:8])}"
            f"{' ...' if len(missing) > 8 else ''}; add them under 'layers' or give 'default'",
            source=mappings.source,
        )
    unknown = sorted(set(mappings.by_name) - {e.layer.name for e in network.layers})
    if unknown:
        raise MagnetError(
            f"mappings for layers the network does not have: {', '.join(unknown[:8])}",
            source=mappings.source,
            field="layers",
        )
    return NetworkResult(network, arch, costs, by_shape)
