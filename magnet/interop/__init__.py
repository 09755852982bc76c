"""Other tools' formats: Timeloop's input read into magnet's objects, and written from them."""

from magnet.interop.timeloop import ErtCostModel, TimeloopInput, load_timeloop
from magnet.interop.timeloop_writer import timeloop_input, write_timeloop

__all__ = ["ErtCostModel", "TimeloopInput", "load_timeloop", "timeloop_input", "write_timeloop"]
