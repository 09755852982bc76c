"""A design: an architecture priced under a cost model, with the dataflow its layers follow.

Built once at the edge (the CLI, ``magnet.evaluate``, a search worker) and passed inward as
it is: mappers and evaluators never price an architecture or resolve a dataflow again. That
includes the designs it can act as (``alternatives``): the mapper searches them too and prices
their mappings on the design itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from magnet.arch.spec import Arch
from magnet.arguments import checked_methods
from magnet.cost import ArchCosts, CostModel, NocModel, price_arch
from magnet.cost.lookup import load_chain
from magnet.dataflow import Dataflow, without_levels
from magnet.errors import MagnetError
from magnet.templates import DataflowSpec, dataflow_for


@checked_methods(init=True)
@dataclass(frozen=True)
class Design:
    """``arch`` priced (``costs``) and constrained (``dataflow``).

    ``alternatives``: designs whose mappings are mappings of this one, searched as well so that
    its best mapping is never worse than theirs: the same arch under each dataflow the dataflow
    ``includes`` (``free``: the template's named dataflows), and the arch without each set of
    levels the dataflow may leave unused (``Rule.optional``: a design with a collector can act
    as the design without it, paying only the collector's own clock, static energy and area).
    """

    arch: Arch
    costs: ArchCosts
    dataflow: Dataflow
    alternatives: tuple[Design, ...] = ()
    #: False when the design's own mapspace is searched as one of its alternatives (the
    #: design without the levels its dataflow leaves unused)
    searched: bool = True

    @property
    def name(self) -> str:
        """The architecture's name."""
        return self.arch.name


CostSpec = str | CostModel | Sequence[str | CostModel] | None


def design_identity(design: Design, exclude: Collection[str] = ()) -> str:
    """What identifies a design's prices and mapspace: the arch (but for its fields in
    ``exclude``), its dataflow, its costs."""
    return "|".join(
        (
            design.arch.model_dump_json(exclude=set(exclude)),
            design.dataflow.model_dump_json(),
            design.costs.model_identity,
            design.costs.noc,
        )
    )


def build_design(
    arch: Arch,
    dataflow: DataflowSpec = None,
    cost_model: CostSpec = None,
    *,
    noc: NocModel = "wires",
) -> Design:
    """Resolve ``dataflow`` (a name of the arch's template, a YAML file or a ``Dataflow``;
    None = ``free``), load ``cost_model`` (a spec string, a comma-separated chain, a model or
    a list; the built-in table last) and price ``arch`` once."""
    flow = dataflow_for(arch, dataflow)
    models = load_chain(cost_model, arch.technology_nm)
    priced: dict[str, ArchCosts] = {}

    def price(a: Arch) -> ArchCosts:
        key = a.model_dump_json()
        if key not in priced:
            priced[key] = price_arch(a, models, noc=noc)
        return priced[key]

    return with_alternatives(arch, price(arch), flow, price)


def with_alternatives(
    arch: Arch,
    costs: ArchCosts,
    flow: Dataflow,
    price: Callable[[Arch], ArchCosts | None],
) -> Design:
    """The design of ``arch`` under ``flow`` with its ``alternatives``; ``price`` prices an
    arch without some levels (None: unknown, that alternative is left out).

    Levels the dataflow leaves unused (``Dataflow.unused_levels``) are searched as absent: the
    design's own mapspace is then the design without them, and the search of a design with a
    collector it bypasses is the search of the design without the collector.
    """
    alternatives = [with_alternatives(arch, costs, f, price) for f in flow.includes]
    unused = _removable(arch, flow, flow.unused_levels)
    optional = flow.optional_levels
    searched = True
    for k in range(len(optional) + 1):
        for names in itertools.combinations(optional, k):
            if not unused and not names:
                continue  # the design itself
            reduced, reduced_flow = without_levels(arch, flow, unused + names)
            reduced_costs = price(reduced)
            if reduced_costs is not None:
                alternatives.append(Design(reduced, reduced_costs, reduced_flow))
                searched &= bool(names)  # the design without its unused levels stands for it
    return Design(arch, costs, flow, tuple(alternatives), searched)


def _removable(arch: Arch, flow: Dataflow, names: tuple[str, ...]) -> tuple[str, ...]:
    """``names``, when the design can do without them (``without_levels``), else none."""
    if not names:
        return ()
    try:
        without_levels(arch, flow, names)
    except MagnetError:
        return ()  # e.g. a systolic pipeline's register: it stays, unused
    return names


def with_dataflow(design: Design, flow: Dataflow) -> Design:
    """``design`` under another dataflow, with the prices it has (an arch without some levels
    that ``design`` has no price for is left out of the alternatives)."""
    known = {d.arch.model_dump_json(): d.costs for d in _every_design(design)}
    return with_alternatives(
        design.arch, design.costs, flow, lambda a: known.get(a.model_dump_json())
    )


def on_arch(design: Design, arch: Arch) -> Design:
    """``design`` on ``arch``, an arch of the same levels and components per instance (a
    group of a package's chiplets: ``Arch.with_chiplets``), under the same dataflow and at
    the same prices: per instance they are the design's, and an alternative without some
    levels is priced as the design's alternative without them. The area stays the design's
    (the whole package)."""
    known = {_level_names(d.arch): d.costs for d in _every_design(design)}
    return with_alternatives(
        arch, design.costs, design.dataflow, lambda a: known.get(_level_names(a))
    )


def _level_names(arch: Arch) -> tuple[str, ...]:
    return tuple(lvl.name for lvl in arch.levels)


def searched_designs(design: Design) -> list[Design]:
    """The designs whose mapspaces make up ``design``'s (``Design.alternatives``), each once."""
    return [d for d in _every_design(design) if d.searched]


def _every_design(design: Design) -> list[Design]:
    out: list[Design] = []
    seen: set[int] = set()
    todo = [design]
    while todo:
        d = todo.pop(0)
        if id(d) not in seen:
            seen.add(id(d))
            out.append(d)
            todo.extend(d.alternatives)
    return out


__all__ = [
    "ArchCosts",
    "CostSpec",
    "Design",
    "build_design",
    "on_arch",
    "searched_designs",
    "with_alternatives",
    "with_dataflow",
]
