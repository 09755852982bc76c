"""A design: an architecture priced under a cost model, with the dataflow its layers follow.

Built once at the edge (the CLI, ``magnet.evaluate``, a search worker) and passed inward as
it is: mappers and evaluators never price an architecture or resolve a dataflow again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts, CostModel, NetworkModel, price_arch
from magnet.cost.registry import load_chain
from magnet.dataflow import Dataflow
from magnet.templates import dataflow_for


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
    network: NetworkModel = "wires",
) -> Design:
    """Resolve ``dataflow`` (a name of the arch's template, a YAML file or a ``Dataflow``;
    None = ``free``), load ``cost_model`` (a spec string, a comma-separated chain, a model or
    a list; the built-in table last) and price ``arch`` once."""
    flow = dataflow_for(arch, dataflow)
    models = load_chain(cost_model, arch.technology_nm)
    return Design(arch, price_arch(arch, models, network=network), flow)


__all__ = ["ArchCosts", "CostSpec", "Design", "build_design"]
