"""Deprecated home of ``Design`` (moved to ``magnet.design`` in 0.3; this module goes in 0.4)."""

import warnings

from magnet.design import CostSpec, Design, build_design, searched_designs, with_dataflow

warnings.warn(
    "magnet.templates.design moved to magnet.design; import from there "
    "(the old module goes in magnet 0.4)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["CostSpec", "Design", "build_design", "searched_designs", "with_dataflow"]
