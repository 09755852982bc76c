"""Evaluating one design of a search: a pure function of a ``DesignJob``, run in the driver
or in a worker process.

A job carries everything by value (template, parameters, dataflow, workload specs, mapper
options and budget, cost-model spec string), so any process can run it. The process keeps
a cache of layer mappings across jobs (``MAPPING_CACHE``): a layer shape seen before on the
same design under the same mapper is not mapped again.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal

from magnet.errors import DesignInfeasible, MagnetError
from magnet.search.space import METRICS, SearchSpace

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
#: The ``NetworkRecord`` field of a metric whose name is not the field's.
_RECORD_FIELD = {"edp": "edp_pj_cycles"}


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

    @classmethod
    def of(
        cls,
        space: SearchSpace,
        params: dict[str, Any],
        dataflow: str,
        *,
        number: int = 0,
        seed: int = 0,
    ) -> DesignJob:
        """The job of one design of ``space``: its template, workloads, mapper, cost model
        and network model."""
        return cls(
            number=number,
            template=space.template,
            params=dict(params),
            dataflow=dataflow,
            workloads=tuple(w.model_dump() for w in space.workloads),
            mapper=space.mapper.model_dump(mode="json"),
            cost_model=space.cost_model,
            network=space.network,
            seed=seed,
        )


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
    """The searchable metrics (``magnet.search.space.METRICS``) of a ``NetworkRecord``; one
    the cost model does not give (an area of None) is NaN."""
    values = {m: record[_RECORD_FIELD.get(m, m)] for m in METRICS}
    return {m: math.nan if v is None else float(v) for m, v in values.items()}


def evaluate_design(job: DesignJob) -> DesignResult:
    """Build, price and map the design of ``job`` on every workload.

    A design the template refuses, a dataflow it cannot run, or a layer no mapping fits is
    an ``infeasible`` result with the reason; anything else that goes wrong raises.
    """
    start = time.perf_counter()
    result = _evaluate(job)
    result.seconds = time.perf_counter() - start
    return result


def _evaluate(job: DesignJob) -> DesignResult:
    from magnet.mapper import Budget, map_network
    from magnet.templates import get_template
    from magnet.templates.design import build_design

    result = DesignResult(status="infeasible")
    try:
        arch = get_template(job.template).build(job.params, name=f"trial-{job.number}")
        design = build_design(arch, job.dataflow, job.cost_model, network=job.network)
    except (DesignInfeasible, MagnetError) as exc:
        result.reason = str(exc)
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
        mapped = out.result  # built on each access
        if mapped is None:
            result.reason = f"{network.name}: {out.reason}"
            return result
        record = mapped.record().model_dump(mode="json")
        result.records.append(record)
        per_workload.append(metrics_of(record))
        weights.append(float(spec.get("weight", 1.0)))
    total = sum(weights)
    result.metrics = {
        key: sum(w * m[key] for w, m in zip(weights, per_workload, strict=True)) / total
        for key in per_workload[0]
    }
    result.status = "ok"
    return result


@functools.cache
def _workload(spec: str, batch: int | None) -> Any:
    """The network ``spec`` names, loaded once per process."""
    from magnet.workload.load import load_workload

    return load_workload(spec, batch)
