"""Mapping a whole network: every distinct layer shape once, on one design."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from magnet.arch.spec import Arch
from magnet.arguments import checked_call
from magnet.dataflow import Dataflow, Rule
from magnet.design import Design, design_identity, on_arch, with_dataflow
from magnet.mapper.lockstep import MAX_JOBS, run_together
from magnet.mapper.mapper import MapOutcome, Mapper, get_mapper, guarded_map
from magnet.mapper.warm import Kind, Known, WarmStore
from magnet.mapping import Mapping
from magnet.model.evaluate import Result, evaluate_mapping, layer_view, weight_home
from magnet.model.network_result import NetworkResult
from magnet.model.postprocess import require_unit
from magnet.registry import is_builtin
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
    #: the mapper's objective, as (energy, latency) weights: what the network's choice of
    #: the weights that stay minimises (``NetworkResult.objective``)
    objective: tuple[float, float] = (1.0, 1.0)

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
            lean={k: o.lean for k, o in self.outcomes.items() if o.lean is not None},
            objective=self.objective,
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
    warm: WarmStore | None = None,
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
    ``warm``: the best mappings of the designs mapped before (``magnet.mapper.warm``): a
    shape is answered from a design that prices it alike, or searched from its nearest
    designs' best; each outcome is remembered there.
    """
    require_unit(design.arch, [e.layer for e in network.layers])
    m = get_mapper(mapper, **options)
    shapes = network.unique_layers(mapped=True)  # post-processing layers run on the unit
    outcomes: dict[ShapeKey, MapOutcome] = {}
    # outcomes by the loop nest the design maps (``layer_view``: layers of different shapes
    # can share one, e.g. strided and unstrided convolutions as a GEMM), across calls in the
    # cache, else within this call
    known: MutableMapping[tuple[Any, ...], MapOutcome] = {} if cache is None else cache
    held, lean = holding_design(design), lean_design(design, network)
    # an outcome answers another call only with the same searches: whether lean mappings
    # are searched depends on the network's weights (``lean_design``)
    who = f"{mapper_identity(m)}|lean {lean is not None}"
    key = None if cache is None else (design_identity(design), who)
    nests = [(key, layer_view(layer, design.arch).shape_key()) for layer, _, _ in shapes]
    # each loop nest not known yet mapped once, by its first shape. With a store of earlier
    # designs' mappings of the design's structure (``warm``), the searches run in lock step
    # (``magnet.mapper.lockstep``): warm searches price batches of a few hundred mappings,
    # which one call prices together. Without (a pipeline's widest band, a search's first
    # design, or its first of a structure), each shape is searched afresh, in batches of a
    # thousand and more that gain nothing together: one after another, each reported as it
    # ends. So are a plug-in mapper's: its code runs inside ``plugin_code``, which redirects
    # stdout and wraps the signal handlers for the call, and two calls taking turns would
    # restore them out of order.
    first: dict[tuple[Any, ...], int] = {}  # each loop nest's first shape
    for i, n in enumerate(nests):
        first.setdefault(n, i)
    order = [i for n, i in first.items() if n not in known]
    width = MAX_JOBS if warm is not None and warm.knows(design) and is_builtin(m) else 1
    # searched afresh while a search's other workers may be searching the same shapes
    # (``WarmStore.share``): each worker starts at its own place in the shapes (from its
    # ``turn``), so that the shapes it reaches last are those the others searched first,
    # and it starts them from their outcomes. A shape that cannot be mapped then ends none
    # of the others: the outcome named is the first such shape in the network's order, as
    # it would be from the first shape.
    offset = 0
    if width == 1 and warm is not None and warm.exchange is not None:
        offset = warm.exchange.turn * len(order) // warm.exchange.workers
        order = order[offset:] + order[:offset]
    reported = 0

    def mapped(j: int, outcome: MapOutcome) -> bool:  # a shape's outcome, as it comes
        nonlocal reported
        if progress is not None:
            reported += 1
            progress(outcome, reported, len(shapes))
        return stop_on_failure and not outcome.ok and offset == 0  # the shapes after it unneeded

    fresh = run_together(
        [
            functools.partial(_map_shape, m, shapes[i][0], design, held, lean, warm, who)
            for i in order
        ],
        mapped,
        width=width,
    )
    found = {nests[i]: o for i, o in zip(order, fresh, strict=True) if o is not None}
    cached = 0
    for i, (layer, _count, _names) in enumerate(shapes):
        nest = nests[i]
        if nest in known:  # answered: no mapping priced, no time spent for this layer
            answered = known[nest].for_layer(layer)
            outcome = replace(answered, mappings_evaluated=0, valid_mappings=0, seconds=0.0)
            if cache is not None:
                cached += 1
            if progress is not None:
                reported += 1
                progress(outcome, reported, len(shapes))
        else:
            outcome = known[nest] = found[nest]
        outcomes[layer.shape_key()] = outcome
        if stop_on_failure and not outcome.ok:
            break
    weights = (m.objective.energy, m.objective.latency)
    return NetworkOutcome(network, design, outcomes, cached, weights)


#: The share of its weight home a lean mapping may use (``lean_design``): an algorithm's
#: setting, not a physical figure; the rest is left for the weights that stay.
LEAN_SHARE = 1 / 8


#: Lean mappings are searched only where the weight home (all its instances) holds at least
#: this share of the network's weights (``lean_design``): an algorithm's setting, from a
#: measurement (benchmarks/HISTORY.md, "The second worker, and a pipeline's plans"): in 60
#: designs of ``magnet`` on ResNet-50, the plan started from the lean mappings never won where
#: the home held 1 % of the weights or less (35 designs), won in 5 of 17 at 2-4 % (by 0.3-1.4 %)
#: and in all 9 at 8 % or more (by 2-25 %); its searches were a fifth of a design's CPU.
LEAN_MIN = 1 / 64


def holding_design(design: Design) -> Design | None:
    """``design`` with its weights held (None: no on-chip level can keep weights): no level
    above the outermost on-chip level keeping weights (their home) loops in time over a
    dimension of the weights, so that each instance of the home keeps one tile of them for
    the whole layer (``Result.holds_weights``), as NVIDIA's Timeloop model of the Simba
    chiplet maps every layer (DRAM and the global buffer loop over P and Q only:
    tests/data/reference/simba.md section 1)."""
    home = weight_home(design.arch)
    if home is None:
        return None
    free = tuple(d for d in DIMS if Dim[d] not in RELEVANT[Operand.W])
    given = {r.level: r.temporal for r in design.dataflow.rules}
    rules = []
    for lvl in design.arch.inner_first[home + 1 :]:
        allowed = given.get(lvl.name)
        kept = free if allowed is None else tuple(d for d in allowed if d in free)
        rules.append(Rule(level=lvl.name, temporal=kept))
    name = f"{design.dataflow.name}, weights held"
    flow = design.dataflow.merged(Dataflow(name=name, rules=tuple(rules)), name=name)
    return with_dataflow(design, flow)


def lean_design(design: Design, network: Network) -> Design | None:
    """``design`` with its weight home cut to ``LEAN_SHARE`` of its capacity, at the
    design's prices: its mappings leave the rest of every instance of the home to the
    weights that stay (``magnet.model.network_result``). None: no bounded home, or one that
    holds, all its instances, less than ``LEAN_MIN`` of ``network``'s weights (too few of
    them could stay for the lean mappings' plan to win)."""
    home = weight_home(design.arch)
    if home is None:
        return None
    level = design.arch.inner_first[home]
    capacity = level.capacity_bits
    weight_bits = network.weight_words * level.bits(Operand.W)
    if capacity is None or capacity * level.instances < LEAN_MIN * weight_bits:
        return None
    levels = list(design.arch.inner_first)
    levels[home] = levels[home].model_copy(
        update={"capacity_bits": max(1, int(capacity * LEAN_SHARE))}
    )
    small = design.arch.model_copy(update={"levels": tuple(reversed(levels))})
    return on_arch(design, Arch.model_validate(small.model_dump()))


def _map_shape(
    mapper: Mapper[Any],
    layer: Layer,
    design: Design,
    held: Design | None,
    lean: Design | None,
    warm: WarmStore | None = None,
    who: str = "",
) -> MapOutcome:
    """The mapper's outcome for ``layer`` on ``design``, with its ``holding`` mapping (the
    best mapping when it holds its weights, else the best of a search on ``held``,
    ``holding_design``, when the home's instances together could hold them) and its
    ``lean`` one (the best of a search on ``lean``, ``lean_design``, when the best mapping
    keeps more than that share of the home), both priced on ``design``. ``warm``: the
    store of neighbouring designs' mappings (``magnet.mapper.warm``): the outcome answered
    from it (a design that prices the layer alike), or each search started from its
    neighbours' best; the outcome is remembered there, under the mapper's identity ``who``
    (``mapper_identity``)."""
    if warm is None:
        return _searched(mapper, layer, design, held, lean, None)
    nest = layer_view(layer, design.arch).shape_key()
    known = warm.exact(nest, design, who)
    if known is not None:
        return _repriced(mapper, layer, design, known)
    outcome = _searched(mapper, layer, design, held, lean, warm)
    warm.remember(nest, design, who, outcome, held, lean)
    return outcome


def _repriced(mapper: Mapper[Any], layer: Layer, design: Design, known: Known) -> MapOutcome:
    """An outcome answered from a design that prices ``layer`` alike (``WarmStore.exact``):
    its mappings re-priced on ``design``, its status and reason as they were."""
    outcome = MapOutcome(known.status, layer, design, mapper.name, mapper.objective)
    outcome.reason = known.reason

    def priced(mapping: Mapping | None) -> Result | None:
        if mapping is None:
            return None
        outcome.mappings_evaluated += 1
        found = evaluate_mapping(layer, design.arch, design.costs, mapping, source="reused")
        return replace(found, start="exact")

    outcome.result, outcome.holding, outcome.lean = (
        priced(known.best),
        priced(known.holding),
        priced(known.lean),
    )
    outcome.valid_mappings = outcome.mappings_evaluated
    return outcome


def _searched(
    mapper: Mapper[Any],
    layer: Layer,
    design: Design,
    held: Design | None,
    lean: Design | None,
    warm: WarmStore | None,
) -> MapOutcome:
    """``_map_shape``'s searches, each from ``warm``'s seeds for it (None: afresh)."""
    nest = layer_view(layer, design.arch).shape_key()

    def seeds(on: Design | None, kind: Kind) -> list[Mapping]:
        return [] if warm is None or on is None else warm.seeds(nest, on, kind)

    start = seeds(design, "best")
    outcome = guarded_map(mapper, layer, design, seeds=start)
    if start and outcome.result is not None:
        outcome.result = replace(outcome.result, start="warm")
    best = outcome.result
    if best is None or best.weight_home is None:
        return outcome
    mapper = _lighter(mapper, outcome.mappings_evaluated)
    level = design.arch.inner_first[best.weight_home]
    if level.capacity_bits is None:
        return outcome
    if held is not None and best.holds_weights:
        outcome.holding = best
    elif held is not None and (
        layer_view(layer, design.arch).operand_size(Operand.W) * level.bits(Operand.W)
        <= level.capacity_bits * level.instances
    ):
        why = " (its search for a mapping that holds its weights)"
        found = guarded_map(
            mapper, layer, held, staying=True, why=why, seeds=seeds(held, "holding")
        )
        outcome.mappings_evaluated += found.mappings_evaluated
        if found.result is not None and found.result.holds_weights:
            outcome.holding = found.result  # same arch and prices: only the dataflow differs
    if lean is not None and best.tile_bits(best.weight_home) > level.capacity_bits * LEAN_SHARE:
        why = f" (its search for a lean mapping: {LEAN_SHARE:.3g} of {level.name})"
        found = guarded_map(mapper, layer, lean, why=why, seeds=seeds(lean, "lean"))
        outcome.mappings_evaluated += found.mappings_evaluated
        if found.result is not None:
            outcome.lean = evaluate_mapping(
                layer, design.arch, design.costs, found.result.mapping, source="lean mapping"
            )
    return outcome


#: The share of a layer's own search a search for its holding or lean mapping may spend.
SECONDARY_SHARE = 1 / 4


def _lighter(mapper: Mapper[Any], spent: int) -> Mapper[Any]:
    """``mapper`` with at most ``SECONDARY_SHARE`` of the ``spent`` evaluations of a layer's
    own search for each further search of it (its own budget, if smaller, still holds)."""
    cap = max(1, int(spent * SECONDARY_SHARE))
    own = mapper.budget.evaluations
    lighter = copy.copy(mapper)
    lighter.budget = mapper.budget.model_copy(
        update={"evaluations": cap if own is None else min(own, cap)}
    )
    return lighter


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
