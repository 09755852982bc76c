"""Mappings and their evaluation (access counts, energy, cycles)."""

from magnet.mapping.analysis import Counts, analyze
from magnet.mapping.evaluate import BatchResult, Result, evaluate_batch, evaluate_mapping
from magnet.mapping.mapping import LevelMapping, Mapping, MappingBatch, to_batch

__all__ = [
    "BatchResult",
    "Counts",
    "LevelMapping",
    "Mapping",
    "MappingBatch",
    "Result",
    "analyze",
    "evaluate_batch",
    "evaluate_mapping",
    "to_batch",
]


def __getattr__(name: str) -> object:
    """``evaluate``: the 0.2 name of ``evaluate_mapping`` (goes in 0.4)."""
    if name == "evaluate":
        from magnet.mapping import evaluate as module

        return module.__getattr__("evaluate")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
