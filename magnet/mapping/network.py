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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts
from magnet.errors import MagnetError
from magnet.files import read_yaml
from magnet.mapping.evaluate import Result, evaluate
from magnet.mapping.mapping import Mapping
from magnet.mapping.records import LayerRow, NetworkRecord
from magnet.workload.layer import Layer
from magnet.workload.network import Network


@dataclass
class LayerMappings:
    """Mappings by layer name, plus an optional default."""

    by_name: dict[str, Mapping]
    default: Mapping | None = None
    source: str = "mappings"

    @classmethod
    def from_yaml(cls, path: str | Path) -> LayerMappings:
        data, src = read_yaml(path), str(path)
        return cls.from_data(data, src)

    @classmethod
    def from_data(cls, data: Any, source: str) -> LayerMappings:
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
        out: dict[str, Any] = {
            "layers": {n: m.to_data()["mapping"] for n, m in self.by_name.items()}
        }
        if self.default is not None:
            out["default"] = self.default.to_data()["mapping"]
        return out


@dataclass
class NetworkResult:
    """A network on one design: one ``Result`` per distinct layer shape, a row per layer."""

    network: Network
    arch: Arch
    costs: ArchCosts
    by_shape: dict[tuple, Result]  # Layer.shape_key() -> result
    dataflow: str | None = None

    def result(self, layer: Layer) -> Result:
        return self.by_shape[layer.shape_key()]

    @property
    def macs(self) -> int:
        return self.network.macs

    @property
    def energy_pj(self) -> float:
        return sum(self.result(e.layer).energy_pj * e.repeat for e in self.network.layers)

    @property
    def latency_cycles(self) -> int:
        """Layers run one after another."""
        return sum(self.result(e.layer).latency_cycles * e.repeat for e in self.network.layers)

    @property
    def utilization(self) -> float:
        return self.macs / (self.latency_cycles * self.arch.mac_count)

    def _sum(self, key: str) -> dict[str, float]:
        out: dict[str, float] = {}
        for e in self.network.layers:
            for name, pj in getattr(self.result(e.layer), key).items():
                out[name] = out.get(name, 0.0) + pj * e.repeat
        return out

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        return self._sum("energy_pj_by_level")

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        return self._sum("energy_pj_by_category")

    def record(self) -> NetworkRecord:
        """The network as a ``NetworkRecord`` (what ``--json`` prints and a search stores)."""
        energy, latency = self.energy_pj, self.latency_cycles  # sums over every layer
        latency_s = latency / (self.arch.clock_ghz * 1e9)
        energy_j = energy * 1e-12
        ops = 2 * self.macs
        area = self.costs.area_mm2
        rows = []
        for e in self.network.layers:
            r = self.result(e.layer)
            rows.append(
                LayerRow(
                    name=e.layer.name,
                    shape=e.layer.shape_str(),
                    count=e.repeat,
                    macs=e.layer.macs,
                    energy_pj=r.energy_pj,
                    latency_cycles=r.latency_cycles,
                    utilization=r.utilization,
                    bottleneck=r.bottleneck,
                    energy_pj_by_category=r.energy_pj_by_category,
                )
            )
        tops = ops / latency_s / 1e12
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
            utilization=self.utilization,
            energy_pj=energy,
            energy_pj_per_mac=energy / self.macs,
            edp_pj_cycles=energy * latency,
            power_w=energy_j / latency_s,
            tops=tops,
            tops_per_w=ops / energy_j / 1e12,
            tops_per_mm2=None if area is None else tops / area,
            energy_pj_by_level=self.energy_pj_by_level,
            energy_pj_by_category=self.energy_pj_by_category,
            area_mm2=area,
            area_mm2_by_component=self.costs.area_mm2_by_component,
            layers=rows,
            mappings={
                r.layer.shape_str(): r.mapping.to_data()["mapping"] for r in self.by_shape.values()
            },
        )


def evaluate_network(
    network: Network, arch: Arch, costs: ArchCosts, mappings: LayerMappings
) -> NetworkResult:
    """Evaluate each distinct layer shape once under its given mapping."""
    by_shape: dict[tuple, Result] = {}
    missing: list[str] = []
    for layer, _count, names in network.unique_layers():
        named = next((n for n in names if n in mappings.by_name), None)
        mapping = mappings.default if named is None else mappings.by_name[named]
        if mapping is None:
            missing.extend(names)
            continue
        src = f"{mappings.source}: " + ("default" if named is None else f"layers.{named}")
        by_shape[layer.shape_key()] = evaluate(layer, arch, costs, mapping, source=src)
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
