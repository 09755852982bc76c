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
from magnet.cost import ArchCosts, CostModel, price_arch
from magnet.errors import MagnetError
from magnet.files import read_yaml
from magnet.mapping.evaluate import Result, evaluate
from magnet.mapping.mapping import Mapping
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
class LayerRow:
    name: str
    shape: str
    count: int  # how many times this layer runs (its repeat)
    macs: int  # per instance
    result: Result

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "shape": self.shape,
            "count": self.count,
            "macs": self.macs,
            "energy_pj": self.result.energy_pj,
            "latency_cycles": self.result.latency_cycles,
            "utilization": self.result.utilization,
            "bottleneck": self.result.bottleneck,
        }


@dataclass
class NetworkResult:
    network: Network
    arch: Arch
    rows: list[LayerRow]
    unique_shapes: int
    costs: ArchCosts

    @property
    def macs(self) -> int:
        return sum(r.macs * r.count for r in self.rows)

    @property
    def energy_pj(self) -> float:
        return sum(r.result.energy_pj * r.count for r in self.rows)

    @property
    def latency_cycles(self) -> float:
        """Layers run one after another."""
        return sum(r.result.latency_cycles * r.count for r in self.rows)

    @property
    def utilization(self) -> float:
        return self.macs / (self.latency_cycles * self.arch.mac_count)

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for r in self.rows:
            for level, pj in r.result.energy_pj_by_level.items():
                out[level] = out.get(level, 0.0) + pj * r.count
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "network": self.network.name,
            "arch": self.arch.name,
            "layers_total": self.network.layer_count,
            "notes": list(self.network.notes),
            "unique_shapes": self.unique_shapes,
            "macs": self.macs,
            "energy_pj": self.energy_pj,
            "energy_pj_per_mac": self.energy_pj / self.macs,
            "latency_cycles": self.latency_cycles,
            "latency_s": self.latency_cycles / (self.arch.clock_ghz * 1e9),
            "utilization": self.utilization,
            "energy_pj_by_level": self.energy_pj_by_level,
            "area_mm2": self.costs.area_mm2,
            "cost_model": self.costs.model_name,
            "layers": [r.to_dict() for r in self.rows],
        }


def evaluate_network(
    network: Network,
    arch: Arch,
    mappings: LayerMappings,
    cost_model: CostModel | list[CostModel] | ArchCosts | None = None,
) -> NetworkResult:
    """Evaluate each distinct layer shape once, then list every layer with its count."""
    costs = price_arch(arch, cost_model)
    by_shape: dict[tuple, Result] = {}
    missing: list[str] = []
    for layer, _count, names in network.unique_layers():
        named = next((n for n in names if n in mappings.by_name), None)
        mapping = mappings.default if named is None else mappings.by_name[named]
        if mapping is None:
            missing.extend(names)
            continue
        src = f"{mappings.source}: " + ("default" if named is None else f"layers.{named}")
        by_shape[layer.shape_key()] = evaluate(layer, arch, mapping, costs, source=src)
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
    rows = [
        LayerRow(
            name=e.layer.name,
            shape=e.layer.shape_str(),
            count=e.repeat,
            macs=e.layer.macs,
            result=by_shape[e.layer.shape_key()],
        )
        for e in network.layers
    ]
    return NetworkResult(network, arch, rows, len(by_shape), costs)
