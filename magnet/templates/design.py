"""A design: an architecture priced under a cost model, with the dataflow its layers follow.

Built once at the edge (the CLI, ``magnet.evaluate``, a search worker) and passed inward as
it is: mappers and evaluators never price an architecture or resolve a dataflow again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts, CostModel, price_arch
from magnet.dataflow import Dataflow


@dataclass(frozen=True)
class Design:
    """``arch`` priced (``costs``) and constrained (``dataflow``)."""

    arch: Arch
    costs: ArchCosts
    dataflow: Dataflow

    @property
    def name(self) -> str:
        return self.arch.name


CostSpec = str | CostModel | Sequence[str | CostModel] | None


def build_design(
    arch: Arch,
    dataflow: str | Dataflow | None = None,
    cost_model: CostSpec = None,
    *,
    network: Literal["wires", "none"] = "wires",
) -> Design:
    """Resolve ``dataflow`` (a name of the arch's template, a YAML file or a ``Dataflow``;
    None = ``free``), load ``cost_model`` (a spec string, a comma-separated chain, a model or
    a list; the built-in table last) and price ``arch`` once."""
    from magnet.cost.registry import load_chain
    from magnet.templates import dataflow_for

    flow = dataflow_for(arch, dataflow)
    if cost_model is None or isinstance(cost_model, str | CostModel):
        items = [] if cost_model is None else [cost_model]
    else:
        items = list(cost_model)
    models = load_chain(items, arch.technology_nm)
    return Design(arch, price_arch(arch, models, network=network), flow)


__all__ = ["ArchCosts", "CostSpec", "Design", "build_design"]
