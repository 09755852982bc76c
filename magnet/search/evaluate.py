"""Evaluating one design of a search: a pure function of a ``DesignJob``, run in the driver
or in a worker process.

A job carries everything by value (template, parameters, dataflow, workload specs, mapper
options and budget, cost-model spec string), so any process can run it. The process keeps
a cache of layer mappings across jobs (``MAPPING_CACHE``): a layer shape seen before on the
same design under the same mapper is not mapped again.
"""

from __future__ import annotations

import base64
import json
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from magnet.errors import DesignInfeasible, MagnetError

#: Layer mappings kept per process (least recently used first out).
CACHE_SIZE = 20_000


class _LRU(OrderedDict):
    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        self.move_to_end(key)
        return value

    def __setitem__(self, key: Any, value: Any) -> None:
        super().__setitem__(key, value)
        if len(self) > CACHE_SIZE:
            self.popitem(last=False)


MAPPING_CACHE: _LRU = _LRU()
_WORKLOADS: dict[tuple, Any] = {}


@dataclass(frozen=True)
class DesignJob:
    """One design to evaluate, by value."""

    number: int
    template: str
    params: dict[str, Any]
    dataflow: str
    workloads: tuple[dict[str, Any], ...]  # {workload, batch, weight}
    mapper: dict[str, Any]  # {name, objective, budget, options}
    cost_model: str | None
    network: str
    seed: int


@dataclass
class DesignResult:
    """What a design achieved: metrics over the workloads (weighted means), the records, or
    why it cannot run."""

    status: Literal["ok", "infeasible"]
    reason: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    mappings_evaluated: int = 0
    cache_hits: int = 0

    def packed_records(self) -> str:
        """The records, compressed (what a trial stores)."""
        return pack(self.records)


def pack(data: Any) -> str:
    return base64.b64encode(zlib.compress(json.dumps(data).encode(), 6)).decode()


def unpack(text: str) -> Any:
    return json.loads(zlib.decompress(base64.b64decode(text)))


def metrics_of(record: dict[str, Any]) -> dict[str, float]:
    """The searchable metrics of a ``NetworkRecord`` (``magnet.search.space.METRICS``)."""
    return {
        "energy_pj": record["energy_pj"],
        "latency_cycles": float(record["latency_cycles"]),
        "latency_s": record["latency_s"],
        "area_mm2": record["area_mm2"] if record["area_mm2"] is not None else float("nan"),
        "edp": record["edp_pj_cycles"],
        "tops_per_w": record["tops_per_w"],
        "tops_per_mm2": (
            record["tops_per_mm2"] if record["tops_per_mm2"] is not None else float("nan")
        ),
        "tops": record["tops"],
        "power_w": record["power_w"],
        "utilization": record["utilization"],
        "energy_pj_per_mac": record["energy_pj_per_mac"],
    }


def evaluate_design(job: DesignJob) -> DesignResult:
    """Build, price and map the design of ``job`` on every workload.

    A design the template refuses, a dataflow it cannot run, or a layer no mapping fits is
    an ``infeasible`` result with the reason; anything else that goes wrong raises.
    """
    from magnet.mapper import Budget, map_network
    from magnet.templates import get_template
    from magnet.templates.design import build_design

    start = time.perf_counter()
    result = DesignResult(status="infeasible")
    try:
        arch = get_template(job.template).build(job.params, name=f"trial-{job.number}")
        design = build_design(arch, job.dataflow, job.cost_model, network=job.network)
    except (DesignInfeasible, MagnetError) as exc:
        result.reason = str(exc)
        result.seconds = time.perf_counter() - start
        return result
    mapper = job.mapper
    options = dict(
        objective=mapper.get("objective", "edp"),
        seed=job.seed,
        budget=Budget(**(mapper.get("budget") or {})),
        **(mapper.get("options") or {}),
    )
    weights, per_workload = [], []
    for spec in job.workloads:
        network = _workload(spec["workload"], spec.get("batch"))
        out = map_network(
            network, design, mapper.get("name", "fast"), cache=MAPPING_CACHE, **options
        )
        result.mappings_evaluated += out.mappings_evaluated
        result.cache_hits += out.cached
        if out.result is None:
            result.reason = f"{network.name}: {out.reason}"
            result.seconds = time.perf_counter() - start
            return result
        record = out.result.record().model_dump(mode="json")
        result.records.append(record)
        per_workload.append(metrics_of(record))
        weights.append(float(spec.get("weight", 1.0)))
    total = sum(weights)
    result.metrics = {
        key: sum(w * m[key] for w, m in zip(weights, per_workload, strict=True)) / total
        for key in per_workload[0]
    }
    result.status = "ok"
    result.seconds = time.perf_counter() - start
    return result


def _workload(spec: str, batch: int | None) -> Any:
    from magnet.workload.load import load_workload

    key = (spec, batch)
    if key not in _WORKLOADS:
        _WORKLOADS[key] = load_workload(spec, batch)
    return _WORKLOADS[key]
