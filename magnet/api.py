"""The Python front door: evaluate and map layers and networks on designs.

These functions are the edge: they take what a user has (an ``Arch`` or a ``Design``, a
dataflow name, a cost-model spec) and build the ``Design`` once; everything they call works
on that design. Mapping failures come out as ``DesignInfeasible`` (a ``MagnetError``) with the
layer and the constraint that prevents it; ``map_layer`` returns the ``MapOutcome`` instead.
"""

from __future__ import annotations

import warnings
from typing import Any

from magnet.arch.spec import Arch
from magnet.cost import NocModel
from magnet.dataflow import Dataflow
from magnet.design import CostSpec, Design, build_design, with_dataflow
from magnet.errors import DesignInfeasible, MagnetError
from magnet.mapper import Budget, MapOutcome, get_mapper, map_network
from magnet.mapping.evaluate import Result, evaluate_mapping
from magnet.mapping.mapping import Mapping
from magnet.mapping.network import LayerMappings, NetworkResult, evaluate_network
from magnet.templates import dataflow_for
from magnet.workload.layer import Layer
from magnet.workload.network import Network


def design(
    arch: Arch | Design,
    dataflow: str | Dataflow | None = None,
    cost_model: CostSpec = None,
    *,
    noc: NocModel | None = None,
    network: NocModel | None = None,
) -> Design:
    """``arch`` priced under ``cost_model`` and constrained by ``dataflow`` (a ``Design`` is
    returned as it is, when no other dataflow, cost model or NoC model is asked for, and
    keeps its prices when only the dataflow changes).
    ``noc``: the on-chip network, ``wires`` (default) or ``none`` (Timeloop parity);
    ``network`` is its 0.2 name (deprecated, goes in 0.4)."""
    if network is not None:
        warnings.warn(
            "design(network=...) is now design(noc=...); the old name goes in magnet 0.4",
            DeprecationWarning,
            stacklevel=2,
        )
        noc = noc or network
    if isinstance(arch, Design):
        if cost_model is None and noc in (None, arch.costs.noc):
            if dataflow is None:
                return arch
            # only the dataflow changes: keep the design's prices (and its cost model)
            return with_dataflow(arch, dataflow_for(arch.arch, dataflow))
        noc = noc or arch.costs.noc
        arch = arch.arch
    if not isinstance(arch, Arch):
        raise MagnetError(
            f"expected an Arch or a Design, got {type(arch).__name__}; build one with "
            "magnet.load_arch or magnet.templates"
        )
    return build_design(arch, dataflow, cost_model, noc=noc or "wires")


def _budget(budget: Budget | dict[str, Any] | None) -> Budget | None:
    if budget is None or isinstance(budget, Budget):
        return budget
    return Budget(**budget)


def map_layer(
    layer: Layer,
    arch: Arch | Design,
    dataflow: str | Dataflow | None = None,
    *,
    cost_model: CostSpec = None,
    mapper: str = "fast",
    objective: str = "edp",
    seed: int = 0,
    budget: Budget | dict[str, Any] | None = None,
    **options: Any,
) -> MapOutcome:
    """Search the mapspace of ``layer`` on a design; never raises for infeasibility."""
    d = design(arch, dataflow, cost_model)
    m = get_mapper(mapper, objective=objective, seed=seed, budget=_budget(budget), **options)
    return m.map(layer, d)


def evaluate(
    workload: Layer | Network,
    arch: Arch | Design,
    mapping: Mapping | LayerMappings | None = None,
    *,
    dataflow: str | Dataflow | None = None,
    cost_model: CostSpec = None,
    mapper: str = "fast",
    objective: str = "edp",
    seed: int = 0,
    budget: Budget | dict[str, Any] | None = None,
    **options: Any,
) -> Result | NetworkResult:
    """Evaluate a layer or a network on a design.

    With ``mapping`` (a ``Mapping`` for a layer, ``LayerMappings`` for a network) that
    mapping is priced; without, the mapper finds one per distinct layer shape under
    ``dataflow``. Returns a ``Result`` (a layer) or a ``NetworkResult``; both have
    ``energy_pj``, ``latency_cycles``, ``energy_pj_by_category`` and ``record()``.
    """
    d = design(arch, dataflow, cost_model)
    if isinstance(workload, Layer):
        if mapping is not None:
            if not isinstance(mapping, Mapping):
                raise MagnetError("a layer takes one Mapping", field="mapping")
            return evaluate_mapping(workload, d.arch, d.costs, mapping)
        outcome = map_layer(
            workload, d, mapper=mapper, objective=objective, seed=seed, budget=budget, **options
        )
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
    out = map_network(
        workload, d, mapper, objective=objective, seed=seed, budget=_budget(budget), **options
    )
    if out.result is None:
        raise DesignInfeasible(f"{out.status}: {out.reason}", field=workload.name)
    return out.result
