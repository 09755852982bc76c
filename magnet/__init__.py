"""magnet: design-space exploration for DNN accelerators.

The public API, in the order data flows through it::

    import magnet as mg
    arch = mg.templates.simba(vector_width=8, vector_units=8, pe_rows=4, pe_cols=4)
    layer = mg.conv2d("res2a", in_channels=64, out_channels=64, out_height=56, out_width=56,
                      kernel=3)
    mapping = mg.Mapping.from_yaml("experiments/mappings/simba-chip_resnet50_res2a_branch2b.yaml")
    result = mg.evaluate(layer, arch, mapping)
    result.energy_pj, result.latency_cycles, result.area_mm2, result.energy_pj_by_level
    best = mg.map_layer(layer, arch, dataflow="ws")            # the mapper
    net = mg.load_workload("resnet50", batch=1)                # zoo name, .onnx or .yaml
    total = mg.evaluate_workload(net, arch, dataflow="ws")     # maps every distinct layer
    total.energy_pj, total.latency_cycles, total.to_dict()["layers"]
"""

from magnet.arch import templates
from magnet.arch.load import load_arch
from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.cost import ArchCosts, price_arch
from magnet.cost.base import Component, CostModel
from magnet.cost.registry import load_chain, load_cost_model, register_cost_model
from magnet.errors import InvalidMappingError, MagnetError
from magnet.interop.timeloop import load_timeloop
from magnet.mapper.search import evaluate_workload, map_layer, map_network
from magnet.mapping import Mapping, MappingBatch, evaluate, evaluate_batch
from magnet.mapping.network import LayerMappings, evaluate_network
from magnet.workload.layer import (
    Layer,
    conv2d,
    depthwise_conv2d,
    fully_connected,
    gemm,
    matmul,
    parse_layer,
)
from magnet.workload.load import load_workload
from magnet.workload.network import Network

__version__ = "0.1.0"

__all__ = [
    "Arch",
    "ArchCosts",
    "Component",
    "ComputeLevel",
    "CostModel",
    "InvalidMappingError",
    "Layer",
    "LayerMappings",
    "MagnetError",
    "Mapping",
    "MappingBatch",
    "Network",
    "StorageLevel",
    "conv2d",
    "depthwise_conv2d",
    "evaluate",
    "evaluate_batch",
    "evaluate_network",
    "evaluate_workload",
    "fully_connected",
    "gemm",
    "load_arch",
    "load_chain",
    "load_cost_model",
    "load_timeloop",
    "load_workload",
    "map_layer",
    "map_network",
    "matmul",
    "parse_layer",
    "price_arch",
    "register_cost_model",
    "templates",
]
