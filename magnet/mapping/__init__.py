"""Mappings and their evaluation (access counts, energy, cycles)."""

from magnet.mapping.analysis import Counts, analyze
from magnet.mapping.evaluate import BatchResult, Result, evaluate, evaluate_batch
from magnet.mapping.mapping import LevelMapping, Mapping, MappingBatch, to_batch

__all__ = [
    "BatchResult",
    "Counts",
    "LevelMapping",
    "Mapping",
    "MappingBatch",
    "Result",
    "analyze",
    "evaluate",
    "evaluate_batch",
    "to_batch",
]
