"""Workloads: layers as loop nests (and, later, networks, the zoo and ONNX import)."""

from magnet.workload.dims import DIMS, RELEVANT, Dim, Operand
from magnet.workload.layer import (
    Layer,
    conv2d,
    depthwise_conv2d,
    fully_connected,
    gemm,
    matmul,
    parse_layer,
)

__all__ = [
    "DIMS",
    "RELEVANT",
    "Dim",
    "Layer",
    "Operand",
    "conv2d",
    "depthwise_conv2d",
    "fully_connected",
    "gemm",
    "matmul",
    "parse_layer",
]
