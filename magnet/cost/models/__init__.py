"""Built-in cost models, registered by name (``--cost-model NAME``; see ``lookup.py``), one
module each, what they share in ``model_helpers``.

``horowitz45`` (``horowitz``)
    The built-in table (``TableCostModel``) at 45 nm; given ``technology_nm`` (the CLI
    passes the architecture's node) it prices that node, like the built-in fallback.
``horowitz45-65nm``, ``horowitz45-32nm``, ``horowitz45-16nm``, ``horowitz45-7nm`` (``horowitz``)
    The same table scaled to that node, whatever node the architecture states: ask "what
    would this architecture cost at 7 nm" without editing it.
``eyeriss-normalized`` (``eyeriss_normalized``)
    Eyeriss (Chen, Emer, Sze, ISCA 2016) relative energy per 16-bit access: MAC 1x,
    register file 1x, inter-PE network 2x, global buffer 6x, DRAM 200x, in units of one
    16-bit integer MAC of the built-in table at the component's node (0.8374 pJ at 45 nm).
``table:FILE.yaml`` (``datasheet``)
    Measured numbers from a YAML datasheet (an SRAM compiler's rows of capacity x width,
    optional MAC rows), interpolated bilinearly in log-log space (``DatasheetCostModel``).
``sram-analytical`` (``sram_analytical``)
    A CACTI-like analytical SRAM (bitlines ~ rows, wordlines ~ columns, data I/O, H-tree,
    bank select), calibrated to the Horowitz fit at 32 KiB x 64 bits, 45 nm. SRAM only:
    other classes go to the next model of the chain.

Each model class names this package as its module (``__module__``), where it is imported
from: plug-in identities (``magnet.registry``: ``magnet.cost.models:Horowitz45``), the
messages that show them and pickles are as they were when the models shared one module.

Numbers, forms and calibrations are worked out in ``magnet/cost/tables/README.md``
(section "Other built-in cost models").
"""

from __future__ import annotations

from magnet.cost.contract import CostModel
from magnet.cost.models.datasheet import Datasheet, DatasheetCostModel, loglog_interpolate
from magnet.cost.models.eyeriss_normalized import EyerissNormalized
from magnet.cost.models.horowitz import AT_NODES, Horowitz45
from magnet.cost.models.sram_analytical import SramAnalytical

#: The built-in cost models by name, in the order ``magnet costs --list`` shows them
#: (``magnet.cost.lookup.COST_MODELS`` registers them when it is first used).
BUILTIN: dict[str, type[CostModel]] = {
    "horowitz45": Horowitz45,
    **AT_NODES,
    "eyeriss-normalized": EyerissNormalized,
    "table": DatasheetCostModel,
    "sram-analytical": SramAnalytical,
}

for _cls in BUILTIN.values():
    _cls.__module__ = __name__
    globals()[_cls.__name__] = _cls  # Horowitz45At7nm, ...: found here by pickle

__all__ = [
    "BUILTIN",
    "Datasheet",
    "DatasheetCostModel",
    "EyerissNormalized",
    "Horowitz45",
    "SramAnalytical",
    "loglog_interpolate",
]
