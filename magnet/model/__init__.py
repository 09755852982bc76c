"""The analytical model: a mapping's access counts (``counts``), their prices in energy,
cycles and area (``evaluate``), and the results of a whole network, layer after layer
(``network_result``) or pipelined (``pipeline_result``), with their records (``records``)."""

from magnet.model.counts import Counts, analyze
from magnet.model.evaluate import BatchResult, Result, evaluate_batch, evaluate_mapping

__all__ = [
    "BatchResult",
    "Counts",
    "Result",
    "analyze",
    "evaluate_batch",
    "evaluate_mapping",
]
