"""magnet: design-space exploration for DNN accelerators.

The public API, in the order data flows through it::

    import magnet as mg
    arch = mg.templates.simba(vector_width=16, vector_units=16, accum_collector=8)
    arch = mg.templates.package(chiplets_x=6, chiplets_y=6)  # every template the same way
    arch = mg.load_arch("simba-chip")                       # preset, template or YAML
    net = mg.load_workload("resnet50")                      # zoo (NAME:key=value), ONNX, YAML
    result = mg.evaluate(net, arch, dataflow="os-local-ws") # maps every distinct layer
    result.energy_pj, result.latency_cycles, result.energy_pj_by_category
    result.record()                                         # a NetworkRecord (--json)
    mg.read_record(json.loads(text))                        # a record of any version, upgraded

    design = mg.design(arch, "ws", cost_model="horowitz45") # priced once, passed inward
    outcome = mg.map_layer(mg.parse_layer("K=64,C=64,P=56,Q=56,R=3,S=3"), design,
                           budget=mg.Budget(seconds=5))
    outcome.status, outcome.reason, outcome.result

    study = mg.search("quickstart", n_trials=48)  # runs or resumes
    study.pareto_front(), mg.load_study("quickstart").trials()

Extension points: ``CostModel`` (``register_cost_model``), ``Template``
(``register_template``), ``Mapper`` (``register_mapper``).

Every function here checks its arguments before any work (``magnet.arguments``): a wrong
one is a ``MagnetError`` naming the function, the argument and what is allowed, e.g.
``map_layer(): layer: expected a Layer (...), got str 'K=64,C=64'``; so is a bad field of a
``Budget``, ``Layer``, ``Network``, ``Objective`` or ``LayerMappings`` built from Python.

Each name is imported on first use (``__getattr__``): ``import magnet.workload.layer``, or the
``magnet`` command's ``--help``, does not load the API, the mappers or the search.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from magnet import templates
    from magnet.api import design, evaluate, map_layer
    from magnet.arch.spec import Arch, ComputeLevel, Fanout, StorageLevel
    from magnet.cost import ArchCosts, price_arch
    from magnet.cost.contract import Component, CostModel
    from magnet.cost.lookup import load_chain, load_cost_model, register_cost_model
    from magnet.dataflow import Dataflow, Rule, load_dataflow
    from magnet.design import Design
    from magnet.errors import DesignInfeasible, InvalidMappingError, MagnetError, PluginError
    from magnet.interop.timeloop import load_timeloop
    from magnet.mapper import (
        Budget,
        MapOutcome,
        Mapper,
        NetworkOutcome,
        Objective,
        map_network,
        register_mapper,
    )
    from magnet.mapping import Mapping
    from magnet.model.network_result import LayerMappings, NetworkResult
    from magnet.model.records import SCHEMA_VERSION, LayerRecord, NetworkRecord, read_record
    from magnet.search import load_study, search
    from magnet.templates import Template, dataflow_for, load_arch, register_template
    from magnet.workload.layer import (
        Layer,
        conv2d,
        depthwise_conv2d,
        fully_connected,
        gemm,
        matmul,
        parse_layer,
    )
    from magnet.workload.loader import load_workload
    from magnet.workload.network import Network

__version__ = "0.3.0"

__all__ = [
    "SCHEMA_VERSION",
    "Arch",
    "ArchCosts",
    "Budget",
    "Component",
    "ComputeLevel",
    "CostModel",
    "Dataflow",
    "Design",
    "DesignInfeasible",
    "Fanout",
    "InvalidMappingError",
    "Layer",
    "LayerMappings",
    "LayerRecord",
    "MagnetError",
    "MapOutcome",
    "Mapper",
    "Mapping",
    "Network",
    "NetworkOutcome",
    "NetworkRecord",
    "NetworkResult",
    "Objective",
    "PluginError",
    "Rule",
    "StorageLevel",
    "Template",
    "conv2d",
    "dataflow_for",
    "depthwise_conv2d",
    "design",
    "evaluate",
    "fully_connected",
    "gemm",
    "load_arch",
    "load_chain",
    "load_cost_model",
    "load_dataflow",
    "load_study",
    "load_timeloop",
    "load_workload",
    "map_layer",
    "map_network",
    "matmul",
    "parse_layer",
    "price_arch",
    "read_record",
    "register_cost_model",
    "register_mapper",
    "register_template",
    "search",
    "templates",
]

#: Where each public name but ``templates`` (a submodule) lives, imported on first use.
_HOMES: dict[str, str] = {
    name: module
    for module, names in (
        ("magnet.api", "design evaluate map_layer"),
        ("magnet.arch.spec", "Arch ComputeLevel Fanout StorageLevel"),
        ("magnet.cost", "ArchCosts price_arch"),
        ("magnet.cost.contract", "Component CostModel"),
        ("magnet.cost.lookup", "load_chain load_cost_model register_cost_model"),
        ("magnet.dataflow", "Dataflow Rule load_dataflow"),
        ("magnet.design", "Design"),
        ("magnet.errors", "DesignInfeasible InvalidMappingError MagnetError PluginError"),
        ("magnet.interop.timeloop", "load_timeloop"),
        (
            "magnet.mapper",
            "Budget MapOutcome Mapper NetworkOutcome Objective map_network register_mapper",
        ),
        ("magnet.mapping", "Mapping"),
        ("magnet.model.network_result", "LayerMappings NetworkResult"),
        ("magnet.model.records", "SCHEMA_VERSION LayerRecord NetworkRecord read_record"),
        ("magnet.search", "load_study search"),
        ("magnet.templates", "Template dataflow_for load_arch register_template"),
        (
            "magnet.workload.layer",
            "Layer conv2d depthwise_conv2d fully_connected gemm matmul parse_layer",
        ),
        ("magnet.workload.loader", "load_workload"),
        ("magnet.workload.network", "Network"),
    )
    for name in names.split()
}


def __getattr__(name: str) -> Any:
    """A public name (``_HOMES``), or a submodule (``templates``, ``interop``), imported on
    first use."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names and what is loaded already."""
    return sorted({*globals(), *__all__})


class _Package(ModuleType):
    """``magnet`` itself. ``magnet.design`` and ``magnet.search`` are functions of the API,
    whose names two submodules share: importing a submodule binds it on its package, which
    here keeps the function (as when this package imported the whole API up front)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if not (name in _HOMES and isinstance(value, ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
