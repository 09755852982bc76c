"""Evaluating one design of a search: a pure function of a ``DesignJob``, run in the driver
or in a worker process.

A job carries everything by value (template, parameters, dataflow, workload specs, mapper
options and budget, cost-model spec string), so any process can run it. A job keeps a
cache of its layer mappings (``map_network``'s ``cache``): a layer shape its design maps
for one workload is not mapped again for another. Across jobs the cache would never answer:
its key holds the design's name, ``trial-N``, and the driver answers a design asked again
from the study; kept per process, it grew a worker by 116 MB over 243 designs of
``magnet`` (357 MB against 241 MB), none of it asked for again. Unless the space's mapper
says ``reuse: false``, the process keeps the best mappings of the designs it evaluated
before (``WARM_STORE``, ``magnet.mapper.warm``): a layer shape is answered from a design
that prices it alike, or its searches start from the nearest designs' best. On a Ray pool's
workers the stores trade the outcomes of their searches afresh (``DesignJob.exchange``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import math
import os
import socket
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from magnet.cost import NocModel
from magnet.errors import DesignInfeasible, MagnetError
from magnet.mapper.warm import WarmStore
from magnet.registry import REGISTERED, Plugin
from magnet.search.design_space import METRICS, SearchSpace

if TYPE_CHECKING:
    from magnet.design import Design
    from magnet.mapper import MapOutcome
    from magnet.workload.network import Network

#: The best mappings of the designs this process evaluated (``magnet.mapper.warm``).
WARM_STORE = WarmStore()
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
    noc: NocModel
    seed: int
    #: The user-registered plug-ins the job names (template, mapper, cost models), by value:
    #: a worker process installs them before evaluating (``magnet.registry``).
    plugins: tuple[Plugin, ...] = ()
    #: The study's front when the job was sent (minimised log10 objective vectors) and its
    #: objectives and their directions: a design its bounds show beaten is ``dominated``,
    #: not mapped (``magnet.search.bounds``); empty: map it
    front: tuple[tuple[float, ...], ...] = ()
    objectives: tuple[str, ...] = ()
    directions: tuple[str, ...] = ()
    #: Where the workers of a search trade their warm stores' outcomes, and how many there
    #: are (``WarmStore.share``); None: the process keeps its own
    exchange: tuple[str, int] | None = None

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
        and NoC model."""
        return cls(
            number=number,
            template=space.template,
            params=dict(params),
            dataflow=dataflow,
            workloads=tuple(w.model_dump() for w in space.workloads),
            mapper=space.mapper.model_dump(mode="json"),
            cost_model=space.cost_model,
            noc=space.noc,
            seed=seed,
            plugins=registered_plugins(space),
        )


def registered_plugins(space: SearchSpace) -> tuple[Plugin, ...]:
    """The plug-ins registered from Python that ``space`` names (built-ins, entry points and
    file plug-ins load by themselves in any process)."""
    from magnet.cost.lookup import COST_MODELS
    from magnet.mapper.mapper import MAPPERS
    from magnet.templates.template import TEMPLATES

    wanted = [(TEMPLATES, space.template), (MAPPERS, space.mapper.name)]
    for spec in (space.cost_model or "").split(","):
        wanted.append((COST_MODELS, spec.strip().partition(":")[0]))
    found = [registry.get(name) for registry, name in wanted if name]
    return tuple(p for p in found if p is not None and p.origin == REGISTERED)


def install_plugins(plugins: tuple[Plugin, ...]) -> None:
    """Make the driver's registrations known in this process (see ``DesignJob.plugins``)."""
    from magnet.cost.lookup import COST_MODELS
    from magnet.mapper.mapper import MAPPERS
    from magnet.templates.template import TEMPLATES

    registries = {r.kind: r for r in (COST_MODELS, MAPPERS, TEMPLATES)}
    for plugin in plugins:
        registries[plugin.kind].install(plugin)


@dataclass
class DesignResult:
    """What a design achieved: metrics over the workloads (weighted means), the records, or
    why it cannot run."""

    status: Literal["ok", "infeasible", "dominated"]
    reason: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    #: The records (``NetworkRecord`` JSON data, one per workload) as a trial stores them
    #: (``pack``), packed where the design ran: a Ray worker hands the driver 10 KB of text
    #: instead of 50 KB of pickled dicts, and the driver, which tells every design in turn,
    #: does not pack them (1.4 ms a ``magnet`` design, 0.3 ms more to unpickle them). None:
    #: the design did not run.
    packed_records: str | None = None
    seconds: float = 0.0
    mappings_evaluated: int = 0
    cache_hits: int = 0
    #: The process that evaluated the design (``worker_id()``); None for an outcome the
    #: driver decided without evaluating (a derived constraint broken).
    worker: str | None = None

    @property
    def records(self) -> list[dict[str, Any]]:
        """The records (JSON data), unpacked."""
        return [] if self.packed_records is None else unpack(self.packed_records)


def pack(data: Any) -> str:
    """JSON data compressed into text (zlib, base64): how a trial stores its records."""
    return base64.b64encode(zlib.compress(json.dumps(data).encode(), 6)).decode()


def unpack(text: str) -> Any:
    """The JSON data ``pack`` made."""
    return json.loads(unpack_json(text))


def unpack_json(text: str) -> str:
    """The JSON text ``pack`` compressed (as ``json.dumps`` wrote it)."""
    return zlib.decompress(base64.b64decode(text)).decode()


def metrics_of(record: dict[str, Any]) -> dict[str, float]:
    """The searchable metrics (``magnet.search.design_space.METRICS``) of a ``NetworkRecord``; one
    the cost model does not give (an area of None) is NaN."""
    values = {m: record[_RECORD_FIELD.get(m, m)] for m in METRICS}
    return {m: math.nan if v is None else float(v) for m, v in values.items()}


def worker_id() -> str:
    """This process, as a trial records where it was evaluated: ``HOST:PID``, where a Ray
    worker's host is its Ray node's address (what ``ray status`` names a node by: two nodes
    on one machine are told apart, and a container's random hostname says nothing)."""
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        return f"{ray.util.get_node_ip_address()}:{os.getpid()}"
    return f"{socket.gethostname()}:{os.getpid()}"


def evaluate_design(job: DesignJob) -> DesignResult:
    """Build, price and map the design of ``job`` on every workload.

    A design the template refuses, a dataflow it cannot run, a component a cost model
    declines, or a layer no mapping fits is an ``infeasible`` result with the reason;
    anything else raises (the driver fails the trial): an exception in a plug-in is a bug
    to show, never an infeasible design. The result's ``worker``, or the exception's
    ``magnet_worker`` attribute (which pickles with it), names the process that ran the job.
    """
    start = time.perf_counter()
    try:
        install_plugins(job.plugins)
        result = _evaluate(job)
    except Exception as exc:
        with contextlib.suppress(AttributeError):  # an exception that takes no attributes
            exc.magnet_worker = worker_id()  # type: ignore[attr-defined]  # any exception: it pickles with it
        raise
    result.seconds = time.perf_counter() - start
    result.worker = worker_id()
    return result


def _evaluate(job: DesignJob) -> DesignResult:
    """``evaluate_design`` without the bookkeeping: the design mapped on every workload."""
    from magnet.mapper import map_network
    from magnet.mapper.planner import PipelineOutcome, map_pipeline
    from magnet.mapper.whole_network import NetworkOutcome

    design = design_of(job)
    if isinstance(design, DesignResult):
        return design
    if job.front:
        from magnet.search.bounds import dominated

        beaten = dominated(job, design)
        if beaten is not None:
            return DesignResult(status="dominated", reason=beaten)
    result = DesignResult(status="infeasible")
    mapper, options = job.mapper, mapper_options(job)
    cache: dict[tuple[Any, ...], MapOutcome] = {}  # the design's, over its workloads
    weights: list[float] = []
    records: list[dict[str, Any]] = []
    per_workload: list[dict[str, float]] = []
    for spec in job.workloads:
        network = spec_network(spec)
        name = mapper.get("name", "fast")
        staged = spec.get("pipeline") or spec.get("fuse")
        warm = WARM_STORE if mapper.get("reuse", True) else None
        if warm is not None and job.exchange is not None:
            warm.share(*job.exchange)
        out: PipelineOutcome | NetworkOutcome
        if staged and design.arch.chiplets > 1:
            fuse = bool(spec.get("fuse"))
            out = map_pipeline(network, design, name, cache=cache, fuse=fuse, warm=warm, **options)
        else:
            out = map_network(network, design, name, cache=cache, warm=warm, **options)
        result.mappings_evaluated += out.mappings_evaluated
        result.cache_hits += out.cached
        mapped = out.result  # built on each access
        if mapped is None:
            result.reason = f"{network.name}: {out.reason}"
            return result
        record = mapped.record().model_dump(mode="json")
        records.append(record)
        per_workload.append(metrics_of(record))
        weights.append(float(spec.get("weight", 1.0)))
    shares = [w / max(weights) for w in weights]  # relative: weights of 1e308 do not overflow
    result.metrics = {
        key: sum(w * m[key] for w, m in zip(shares, per_workload, strict=True)) / sum(shares)
        for key in per_workload[0]
    }
    result.packed_records = pack(records)
    result.status = "ok"
    return result


def design_of(job: DesignJob) -> Design | DesignResult:
    """The priced ``Design`` of ``job``, or an infeasible ``DesignResult`` when the design
    cannot be built: a combination of parameter values the template refuses (each value
    alone was checked before the search), a dataflow it cannot run, a component a cost
    model declines. Anything else raises: bad input (``MagnetError``) or a bug in a plug-in
    (``PluginError``), never an infeasible design."""
    from magnet.design import build_design
    from magnet.templates import get_template

    template = get_template(job.template)
    try:
        params = template.params(job.params, source=f"trial {job.number}")
    except MagnetError as exc:
        return DesignResult(status="infeasible", reason=f"the template refuses this design: {exc}")
    try:
        arch = template.build(params, name=f"trial-{job.number}")
        return build_design(arch, job.dataflow, job.cost_model, noc=job.noc)
    except DesignInfeasible as exc:
        return DesignResult(status="infeasible", reason=str(exc))


def mapper_options(job: DesignJob) -> dict[str, Any]:
    """The keyword arguments of ``get_mapper`` for ``job``'s mapper (its name aside)."""
    from magnet.mapper import Budget

    return dict(
        objective=job.mapper.get("objective", "edp"),
        seed=job.seed,
        budget=Budget(**(job.mapper.get("budget") or {})),
        **(job.mapper.get("options") or {}),
    )


def preflight(space: SearchSpace, source: str) -> None:
    """What must hold before the first trial (a configuration error is bad input, never a
    study of failed or infeasible trials): every workload loads, the cost model loads, the
    mapper takes its options, and one design of the space (each range at its first value)
    builds and prices, or is refused as infeasible, which stays a per-trial outcome. A
    ``MagnetError`` names the file and the field; a plug-in's bug raises ``PluginError``."""
    from magnet.cost.lookup import load_chain
    from magnet.mapper import get_mapper

    networks = []
    for i, spec in enumerate(space.workloads):
        try:
            networks.append(
                load_network(spec.workload, spec.batch, spec.skip_unpriced_ops, spec.densities_json)
            )
        except MagnetError as exc:
            raise MagnetError(str(exc), source=source, field=f"workloads.{i}") from None
    params = space.design({n: r.first() for n, r in space.ranges().items()})
    job = DesignJob.of(space, params, space.dataflows()[0])
    try:
        load_chain(space.cost_model)
    except MagnetError as exc:
        raise MagnetError(str(exc), source=source, field="cost_model") from None
    try:
        get_mapper(space.mapper.name, **mapper_options(job))
    except (MagnetError, TypeError) as exc:
        raise MagnetError(str(exc), source=source, field="mapper") from None
    try:
        design = design_of(job)
    except MagnetError as exc:
        field = "cost_model" if space.cost_model else "params"
        raise MagnetError(
            f"the first design of the space ({params}) cannot be priced: {exc}",
            source=source,
            field=field,
        ) from None
    if not isinstance(design, DesignResult):  # a unit for the post-processing layers
        from magnet.model.postprocess import require_unit

        for i, network in enumerate(networks):
            try:
                require_unit(design.arch, [e.layer for e in network.layers])
            except MagnetError as exc:
                raise MagnetError(str(exc), source=source, field=f"workloads.{i}") from None


def spec_network(spec: dict[str, Any]) -> Network:
    """The network of a job's workload spec (``WorkloadSpec`` as a dict), loaded once per
    process (``load_network``)."""
    densities = spec.get("densities")
    return load_network(
        spec["workload"],
        spec.get("batch"),
        spec.get("skip_unpriced_ops", False),
        None if densities is None else json.dumps(densities, sort_keys=True),
    )


@functools.cache
def load_network(
    spec: str, batch: int | None, skip_ops: bool = False, densities: str | None = None
) -> Network:
    """The network ``spec`` names, loaded once per process (``skip_ops``: an ONNX model's
    operators magnet does not price left out; ``densities``: its layers' densities as the
    JSON of a ``DensityTable``)."""
    from magnet.workload.loader import load_workload

    table = None if densities is None else json.loads(densities)
    return load_workload(spec, batch, skip_ops=skip_ops, densities=table)
