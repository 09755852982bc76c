"""Readers of other tools' formats into magnet's own objects."""

from magnet.interop.timeloop import ErtCostModel, TimeloopInput, load_timeloop

__all__ = ["ErtCostModel", "TimeloopInput", "load_timeloop"]
