"""Mapping a whole network: every distinct layer shape once, on one design."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from magnet.arguments import checked_call
from magnet.dataflow import Dataflow, Rule
from magnet.design import Design, with_dataflow
from magnet.mapper.base import MapOutcome, Mapper, get_mapper, guarded_map
from magnet.mapping.evaluate import Result, layer_view
from magnet.mapping.network import NetworkResult
from magnet.mapping.postprocess import require_unit
from magnet.workload.dims import DIMS, RELEVANT, Dim, Operand
from magnet.workload.layer import Layer, ShapeKey
from magnet.workload.network import Network

#: What ``Layer.shape_key()`` returns: the identity of a loop nest.


@dataclass
class NetworkOutcome:
    """The mapper's outcome for every distinct layer shape, and the network result built
    from them (None when a layer could not be mapped)."""

    network: Network
    design: Design
    outcomes: dict[ShapeKey, MapOutcome]  # Layer.shape_key() -> outcome
    cached: int = 0  # shapes whose outcome came from the cache

    @property
    def status(self) -> Literal["mapped", "infeasible", "budget_exhausted"]:
        """``infeasible`` when a layer cannot be mapped (``budget_exhausted`` when a budget
        ended its search first), else ``budget_exhausted`` when a budget cut one, else
        ``mapped``."""
        states = {o.status for o in self.outcomes.values()}
        if any(not o.ok for o in self.outcomes.values()):
            return "infeasible" if "infeasible" in states else "budget_exhausted"
        return "budget_exhausted" if "budget_exhausted" in states else "mapped"

    @property
    def reason(self) -> str | None:
        """Why the network cannot run (the first layer that failed), or what a budget cut."""
        failed = [o for o in self.outcomes.values() if not o.ok]
        if failed:
            return f"layer {failed[0].layer.name!r}: {failed[0].reason}"
        cut = [o for o in self.outcomes.values() if o.status == "budget_exhausted"]
        if cut:
            return f"{len(cut)} layer(s) ended on their budget"
        return None

    @property
    def result(self) -> NetworkResult | None:
        """The network on the design under the mappings found (None: a layer has none);
        built on each access."""
        by_shape: dict[ShapeKey, Result] = {}
        for key, o in self.outcomes.items():
            if o.result is None:
                return None
            by_shape[key] = o.result
        return NetworkResult(
            self.network,
            self.design.arch,
            self.design.costs,
            by_shape,
            dataflow=self.design.dataflow.name,
            holding={k: o.holding for k, o in self.outcomes.items() if o.holding is not None},
        )

    @property
    def mappings_evaluated(self) -> int:
        """Mappings priced for all the layer shapes (a cached shape: none)."""
        return sum(o.mappings_evaluated for o in self.outcomes.values())


@checked_call
def map_network(
    network: Network,
    design: Design,
    mapper: str | Mapper[Any] = "fast",
    *,
    progress: Callable[[MapOutcome, int, int], None] | None = None,
    stop_on_failure: bool = True,
    cache: MutableMapping[tuple[Any, ...], MapOutcome] | None = None,
    **options: Any,
) -> NetworkOutcome:
    """Map every distinct MAC layer shape of ``network`` on ``design`` once (its
    post-processing layers are not mapped: they run on the design's post-processing unit;
    a design without one is bad input).

    ``options`` go to the mapper (objective, seed, budget per layer, its own options).
    ``progress(outcome, done, total)`` is called after each shape. With ``stop_on_failure``,
    the first layer that cannot be mapped ends the work (the design cannot run the network).
    ``cache`` keeps outcomes across calls, keyed by the design, the mapper and the loop nest
    the design maps (``layer_view``): a loop nest seen before on the same design with the
    same mapper is not mapped again (its outcome is reported under the layer's own name).
    """
    require_unit(design.arch, [e.layer for e in network.layers])
    m = get_mapper(mapper, **options)
    shapes = network.unique_layers(mapped=True)  # post-processing layers run on the unit
    outcomes: dict[ShapeKey, MapOutcome] = {}
    # outcomes by the loop nest the design maps (``layer_view``: layers of different shapes
    # can share one, e.g. strided and unstrided convolutions as a GEMM), across calls in the
    # cache, else within this call
    known: MutableMapping[tuple[Any, ...], MapOutcome] = {} if cache is None else cache
    key = None if cache is None else (design_identity(design), mapper_identity(m))
    cached = 0
    held = holding_design(design)
    for i, (layer, _count, _names) in enumerate(shapes):
        nest = (key, layer_view(layer, design.arch).shape_key())
        if nest in known:
            outcome = known[nest].for_layer(layer)
            if cache is not None:
                cached += 1
        else:
            outcome = known[nest] = _with_holding(m, layer, design, held)
        outcomes[layer.shape_key()] = outcome
        if progress is not None:
            progress(outcome, i + 1, len(shapes))
        if stop_on_failure and not outcome.ok:
            break
    return NetworkOutcome(network, design, outcomes, cached)


def holding_design(design: Design) -> Design | None:
    """``design`` with its weights held (None: no on-chip level can keep weights): no level
    above the outermost on-chip level keeping weights (their home) loops in time over a
    dimension of the weights, so that each instance of the home keeps one tile of them for
    the whole layer (``Result.holds_weights``), as NVIDIA's Timeloop model of the Simba
    chiplet maps every layer (DRAM and the global buffer loop over P and Q only:
    tests/data/reference/simba.md section 1)."""
    levels = design.arch.levels  # outermost first
    home = next(
        (
            i
            for i, lvl in enumerate(levels)
            if not lvl.is_dram and not lvl.streaming and Operand.W in lvl.kept
        ),
        None,
    )
    if home is None:
        return None
    free = tuple(d for d in DIMS if Dim[d] not in RELEVANT[Operand.W])
    given = {r.level: r.temporal for r in design.dataflow.rules}
    rules = []
    for lvl in levels[:home]:
        allowed = given.get(lvl.name)
        rules.append(
            Rule(
                level=lvl.name,
                temporal=free if allowed is None else tuple(d for d in allowed if d in free),
            )
        )
    name = f"{design.dataflow.name}, weights held"
    flow = design.dataflow.merged(Dataflow(name=name, rules=tuple(rules)), name=name)
    return with_dataflow(design, flow)


def _with_holding(
    mapper: Mapper[Any], layer: Layer, design: Design, held: Design | None
) -> MapOutcome:
    """The mapper's outcome for ``layer`` on ``design``, with its ``holding`` mapping: the
    best mapping when it holds its weights, else the best of a search on ``held``
    (``holding_design``) when the home's instances together could hold them, priced on
    ``design``."""
    outcome = guarded_map(mapper, layer, design)
    best = outcome.result
    if best is None or held is None:
        return outcome
    if best.holds_weights:
        outcome.holding = best
        return outcome
    home = best.weight_home
    level = None if home is None else design.arch.inner_first[home]
    view = layer_view(layer, design.arch)
    if level is None or level.capacity_bits is None:
        return outcome
    if view.operand_size(Operand.W) * level.bits(Operand.W) > level.capacity_bits * level.instances:
        return outcome
    found = guarded_map(mapper, layer, held)
    outcome.mappings_evaluated += found.mappings_evaluated
    if found.result is not None and found.result.holds_weights:
        outcome.holding = found.result  # same arch and prices: only the dataflow differs
    return outcome


def design_identity(design: Design) -> str:
    """What identifies a design's prices and mapspace: the arch, its dataflow, its costs."""
    return "|".join(
        (
            design.arch.model_dump_json(),
            design.dataflow.model_dump_json(),
            design.costs.model_identity,
            design.costs.noc,
        )
    )


def mapper_identity(mapper: Mapper[Any]) -> str:
    """What identifies a mapper's answers: its class (``magnet.registry``: a user mapper
    changed or re-registered is another mapper), objective, seed, budget and options."""
    from magnet.registry import identity_of

    return "|".join(
        (
            identity_of(mapper),
            mapper.objective.name,
            str(mapper.seed),
            mapper.budget.model_dump_json(),
            mapper.options.model_dump_json(),
        )
    )
