"""The Python front door: evaluate and map layers and networks on designs.

These functions are the edge: they take what a user has (an ``Arch`` or a ``Design``, a
dataflow name, a cost-model spec) and build the ``Design`` once; everything they call works
on that design. Mapping failures come out as ``DesignInfeasible`` (a ``MagnetError``) with the
layer and the constraint that prevents it; ``map_layer`` returns the ``MapOutcome`` instead.
The ``magnet`` command is a thin layer over these functions: it reads its flags and files,
calls them and prints what they return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, overload

from magnet.arch.spec import Arch
from magnet.arguments import Seed, checked_call
from magnet.cost import NocModel
from magnet.design import CostSpec, Design, build_design, with_dataflow
from magnet.errors import DesignInfeasible, MagnetError
from magnet.mapper import (
    Budget,
    MapOutcome,
    Mapper,
    Objective,
    get_mapper,
    guarded_map,
    map_network,
)
from magnet.mapper.planner import map_pipeline
from magnet.mapping import Mapping
from magnet.model.evaluate import Result, evaluate_mapping
from magnet.model.network_result import LayerMappings, NetworkResult, evaluate_network
from magnet.model.postprocess import PostResult, price_postprocess
from magnet.templates import DataflowSpec, dataflow_for
from magnet.workload.layer import Layer
from magnet.workload.network import Network

#: A mapper's progress while it maps one layer: (mappings priced, mapspace size, seconds).
MapperProgress = Callable[[int, float, float], None]
#: Progress over the layers of a network: (a layer's outcome, shapes done, shapes in all).
LayerProgress = Callable[[MapOutcome, int, int], None]
#: What to minimise: a name, weights, or an ``Objective``.
ObjectiveSpec = (
    Annotated[str, "'edp', 'energy', 'latency', weights such as 'energy=1,latency=2'"] | Objective
)
#: A mapper's budget per layer: a ``Budget``, its fields as a dict, or None (no limit).
BudgetSpec = Budget | dict[str, Any] | None


@checked_call
def design(
    arch: Arch | Design,
    dataflow: DataflowSpec = None,
    cost_model: CostSpec = None,
    *,
    noc: NocModel | None = None,
) -> Design:
    """``arch`` priced under ``cost_model`` and constrained by ``dataflow`` (a ``Design`` is
    returned as it is, when no other dataflow, cost model or NoC model is asked for, and
    keeps its prices when only the dataflow changes).
    ``noc``: the on-chip network, ``wires`` (default) or ``none`` (Timeloop parity)."""
    if isinstance(arch, Design):
        if cost_model is None and noc in (None, arch.costs.noc):
            if dataflow is None:
                return arch
            # only the dataflow changes: keep the design's prices (and its cost model)
            return with_dataflow(arch, dataflow_for(arch.arch, dataflow))
        noc = noc or arch.costs.noc  # its NoC model
        arch = arch.arch
    return build_design(arch, dataflow, cost_model, noc=noc or "wires")


def _budget(budget: BudgetSpec, caller: str) -> Budget | None:
    """A ``Budget`` from a ``Budget``, its fields as a dict, or None (no limit); a bad field
    names the ``caller``'s argument (``map_layer(): budget: minutes: unknown field; ...``)."""
    if budget is None or isinstance(budget, Budget):
        return budget
    try:
        return Budget(**budget)
    except MagnetError as exc:
        raise MagnetError(exc.message, source=caller, field="budget") from None


@checked_call
def map_layer(
    layer: Layer,
    arch: Arch | Design,
    dataflow: DataflowSpec = None,
    *,
    cost_model: CostSpec = None,
    mapper: str | Mapper[Any] = "fast",
    objective: ObjectiveSpec = "edp",
    seed: Seed = 0,
    budget: BudgetSpec = None,
    noc: NocModel | None = None,
    progress: MapperProgress | None = None,
    **options: Any,
) -> MapOutcome:
    """Search the mapspace of ``layer`` on a design; never raises for infeasibility.

    ``options`` are the mapper's own (``samples``, ...: its ``Options`` model names them);
    ``progress`` is called after every batch the mapper prices. An exception in a plug-in
    mapper's code is a ``PluginError``. A post-processing layer has no mapspace (it runs on
    the design's post-processing unit: ``evaluate`` prices it) and is refused."""
    if layer.is_postprocess:
        raise MagnetError(
            f"layer {layer.name!r} is a post-processing layer ({layer.kind} {layer.op}): it "
            "runs on the design's post-processing unit and has no mapping to search; price "
            "it with magnet.evaluate(layer, design)",
            field="layer",
        )
    d = design(arch, dataflow, cost_model, noc=noc)
    m = get_mapper(
        mapper,
        objective=objective,
        seed=seed,
        budget=_budget(budget, "map_layer()"),
        progress=progress,
        **options,
    )
    return guarded_map(m, layer, d)


@overload
def evaluate(
    workload: Layer,
    arch: Arch | Design,
    mapping: Mapping | LayerMappings | None = None,
    *,
    dataflow: DataflowSpec = None,
    cost_model: CostSpec = None,
    mapper: str | Mapper[Any] = "fast",
    objective: ObjectiveSpec = "edp",
    seed: Seed = 0,
    budget: BudgetSpec = None,
    noc: NocModel | None = None,
    source: str | None = None,
    on_layer: LayerProgress | None = None,
    pipeline: bool = False,
    **options: Any,
) -> Result | PostResult: ...


@overload
def evaluate(
    workload: Network,
    arch: Arch | Design,
    mapping: Mapping | LayerMappings | None = None,
    *,
    dataflow: DataflowSpec = None,
    cost_model: CostSpec = None,
    mapper: str | Mapper[Any] = "fast",
    objective: ObjectiveSpec = "edp",
    seed: Seed = 0,
    budget: BudgetSpec = None,
    noc: NocModel | None = None,
    source: str | None = None,
    on_layer: LayerProgress | None = None,
    pipeline: bool = False,
    **options: Any,
) -> NetworkResult: ...


@checked_call
def evaluate(
    workload: Layer | Network,
    arch: Arch | Design,
    mapping: Mapping | LayerMappings | None = None,
    *,
    dataflow: DataflowSpec = None,
    cost_model: CostSpec = None,
    mapper: str | Mapper[Any] = "fast",
    objective: ObjectiveSpec = "edp",
    seed: Seed = 0,
    budget: BudgetSpec = None,
    noc: NocModel | None = None,
    source: str | None = None,
    on_layer: LayerProgress | None = None,
    pipeline: bool = False,
    fuse: bool = False,
    **options: Any,
) -> Result | PostResult | NetworkResult:
    """Evaluate a layer or a network on a design.

    With ``mapping`` (a ``Mapping`` for a layer, ``LayerMappings`` for a network) that
    mapping is priced (``source``: where it was read from, named in errors); without, the
    mapper finds one per distinct layer shape under ``dataflow`` (``options``: the mapper's
    own, and ``progress``, called after every batch it prices; ``on_layer``, called after
    each layer shape is mapped). Returns a ``Result`` (a layer) or a ``NetworkResult``; both
    have ``energy_pj``, ``latency_cycles``, ``energy_pj_by_category`` and ``record()``. A
    post-processing layer is priced on the design's post-processing unit, a pass of its own
    reading from and writing to DRAM (a ``PostResult``, read the same way).
    ``pipeline``: a network on a package runs as a pipeline of stages on groups of its
    chiplets (``magnet.mapper.planner``; a ``PipelineResult``), not layer after layer.
    ``fuse``: as ``pipeline``, the stages also tried fused depth-first (a batch passed from
    stage to stage a tile at a time) and the plan minimising the objective for a batch
    taken: fused, pipelined, or layer after layer.
    """
    d = design(arch, dataflow, cost_model, noc=noc)
    limit = _budget(budget, "evaluate()")
    for flag, given in (("pipeline", pipeline), ("fuse", fuse)):
        if given and (mapping is not None or not isinstance(workload, Network)):
            raise MagnetError(
                f"{flag}: a network, mapped by magnet (the stages choose each layer's chiplets)",
                field=flag,
            )
    if isinstance(workload, Layer) and workload.is_postprocess:
        if mapping is not None:
            raise MagnetError(
                f"layer {workload.name!r} is a post-processing layer: it takes no mapping",
                field="mapping",
            )
        return price_postprocess(workload, d.arch, d.costs)
    if isinstance(workload, Layer):
        if mapping is not None:
            if not isinstance(mapping, Mapping):
                raise MagnetError("a layer takes one Mapping", field="mapping")
            return evaluate_mapping(workload, d.arch, d.costs, mapping, source=source or "mapping")
        outcome = map_layer(
            workload, d, mapper=mapper, objective=objective, seed=seed, budget=limit, **options
        )
        if on_layer is not None:
            on_layer(outcome, 1, 1)
        if outcome.result is None:
            raise DesignInfeasible(f"{outcome.status}: {outcome.reason}", field=workload.name)
        return outcome.result
    if not isinstance(workload, Network):
        raise MagnetError(
            f"expected a Layer or a Network, got {type(workload).__name__}", field="workload"
        )
    if mapping is not None:
        if not isinstance(mapping, LayerMappings):
            raise MagnetError("a network takes LayerMappings (per-layer mappings)", field="mapping")
        return evaluate_network(workload, d.arch, d.costs, mapping)
    m = get_mapper(mapper, objective=objective, seed=seed, budget=limit, **options)
    return _mapped_network(workload, d, m, on_layer, pipeline, fuse)


def _mapped_network(
    network: Network,
    d: Design,
    mapper: Mapper[Any],
    on_layer: LayerProgress | None,
    pipeline: bool,
    fuse: bool = False,
) -> NetworkResult:
    """``network`` mapped on ``d`` (layer after layer, pipelined, or fused), or
    ``DesignInfeasible`` naming the layer or split that cannot run."""
    if pipeline or fuse:
        piped = map_pipeline(network, d, mapper, progress=on_layer, fuse=fuse)
        if piped.result is None:
            raise DesignInfeasible(f"infeasible: {piped.reason}", field=network.name)
        return piped.result
    out = map_network(network, d, mapper, progress=on_layer)
    if out.result is None:
        raise DesignInfeasible(f"{out.status}: {out.reason}", field=network.name)
    return out.result
