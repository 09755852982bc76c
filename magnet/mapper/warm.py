"""Mapping reuse across designs: a design's layers start from the best mappings found for
the nearest designs already mapped (issue 33).

No published design-space tool warm-starts one design's mapper from a neighbour's best
mapping; in a design search, neighbouring designs share most of their hierarchy, and a
layer's best mapping on one is a good start on the next.

* **Exact.** Two designs that price a layer's mappings alike (the same architecture, but
  for what only its area sees: its name, the template's record of its parameters, the
  control processor; the same dataflow, costs and mapper) have the same best mapping: the
  layer's outcome is answered from the store outright, each mapping re-priced on the new
  design (one evaluation each) for its own numbers.
* **Warm.** A design of the same structure (the same levels, kept operands, dataflow and
  layer view; other capacities, fan-outs, widths or prices) starts the layer's search from
  the best mappings of its ``neighbours`` nearest designs (by the log2 distance of their
  capacities, fan-outs and word widths), each re-validated on the new design (a fan-out too
  small for a seed's spatial factors gets the excess as time, a level too small for its
  tiles has loops moved out to the level above; a seed that still does not fit is priced
  invalid, never trusted), then refined with a smaller budget (``FastMapper``:
  ``warm_samples`` random mappings beside the seeds, ``warm_patience`` rounds without gain).
* **Searched.** Anything else is searched afresh.

A layer's record says which (``MapperStats.start``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from magnet.arch.spec import Arch
from magnet.design import Design
from magnet.errors import MagnetError
from magnet.mapper.space import Space
from magnet.mapping.mapping import LevelMapping, Mapping, MappingBatch, to_batch
from magnet.workload.dims import DIMS, Dim

if TYPE_CHECKING:
    from magnet.mapper.base import MapOutcome

Start = Literal["searched", "warm", "exact"]
#: The searches of a layer shape a network maps (``magnet.mapper.network``): its best
#: mapping, its best holding its weights, its best lean one.
Kind = Literal["best", "holding", "lean"]
#: What only an architecture's area sees (``Arch.controller``: area only), and its names.
AREA_ONLY = ("name", "template", "params", "controller")


def evaluation_identity(design: Design) -> str:
    """What prices a layer's mappings on ``design`` (``design_identity`` without what only
    the area sees, ``AREA_ONLY``)."""
    arch = design.arch.model_dump_json(exclude=set(AREA_ONLY))
    return "|".join(
        (
            arch,
            design.dataflow.model_dump_json(),
            design.costs.model_identity,
            design.costs.noc,
        )
    )


def structure_identity(design: Design) -> tuple[object, ...]:
    """What a seed's mapping needs to mean the same on another design: the levels' names
    and kept operands, the MACs' name, the dataflow and the layer view."""
    arch = design.arch
    return (
        tuple((lvl.name, lvl.keeps) for lvl in arch.levels),
        arch.compute.name,
        arch.layer_view,
        design.dataflow.model_dump_json(),
    )


def arch_vector(arch: Arch) -> np.ndarray:
    """The log2 of each level's capacity, fan-out and word width and of the MACs: where a
    design sits among its neighbours."""
    values: list[float] = []
    for lvl, (fx, fy) in zip(arch.inner_first, arch.fanouts, strict=True):
        values += [math.log2(lvl.capacity_bits or 1), math.log2(fx), math.log2(fy)]
        values.append(math.log2(lvl.word_bits))
    values += [math.log2(arch.compute.mesh_x), math.log2(arch.compute.mesh_y)]
    values.append(math.log2(arch.clock_ghz))
    return np.array(values)


@dataclass
class _Seen:
    """A design a layer shape was mapped on: where it sits and its best mapping of a kind."""

    where: np.ndarray
    mapping: Mapping


@dataclass(frozen=True)
class Known:
    """A layer shape's outcome on a design, as ``WarmStore.exact`` answers it: its status,
    reason and mappings (the best, the one holding its weights, the lean one)."""

    status: Literal["mapped", "infeasible", "budget_exhausted"]
    reason: str | None
    best: Mapping | None
    holding: Mapping | None
    lean: Mapping | None


@dataclass
class WarmStore:
    """The best mappings of each layer shape on the designs mapped so far (see the module
    docstring), by kind of search; ``neighbours``: how many seed a search; ``limit``: the
    designs kept per shape (the oldest dropped first)."""

    neighbours: int = 4
    limit: int = 64
    _seen: dict[tuple[object, ...], list[_Seen]] = field(default_factory=dict)
    _known: dict[tuple[object, ...], Known] = field(default_factory=dict)

    def exact(self, nest: tuple[object, ...], design: Design, mapper: str) -> Known | None:
        """The outcome of loop nest ``nest`` by ``mapper`` (its identity) on a design that
        prices it as ``design`` does (``evaluation_identity``), None: none yet."""
        return self._known.get((nest, evaluation_identity(design), mapper))

    def remember(
        self,
        nest: tuple[object, ...],
        design: Design,
        mapper: str,
        outcome: MapOutcome,
        held: Design | None,
        lean: Design | None,
    ) -> None:
        """Keep ``outcome`` (of ``nest`` on ``design``) for ``exact``, and its mappings as
        the best of their kinds (on ``design``, the holding design ``held``, the lean
        design ``lean``) for ``seeds``."""
        maps = [
            None if r is None else r.mapping
            for r in (outcome.result, outcome.holding, outcome.lean)
        ]
        self._known[(nest, evaluation_identity(design), mapper)] = Known(
            outcome.status, outcome.reason, *maps
        )
        kinds: tuple[Kind, ...] = ("best", "holding", "lean")
        for kind, on, mapping in zip(kinds, (design, held, lean), maps, strict=True):
            if mapping is not None and on is not None:
                self.add(nest, on, kind, mapping)

    def seeds(self, nest: tuple[object, ...], design: Design, kind: Kind) -> list[Mapping]:
        """The best mappings of the loop nest ``nest`` (``Layer.shape_key`` of its view) on
        the ``neighbours`` designs of ``design``'s structure nearest it (none: search
        afresh)."""
        seen = self._seen.get((nest, structure_identity(design), kind), [])
        if not seen:
            return []
        here = arch_vector(design.arch)
        distance = [float(np.abs(s.where - here).sum()) for s in seen]
        order = np.argsort(distance, kind="stable")[: self.neighbours]
        return [seen[int(i)].mapping for i in order]

    def add(self, nest: tuple[object, ...], design: Design, kind: Kind, mapping: Mapping) -> None:
        """Remember ``mapping`` as the best of its ``kind`` for ``nest`` on ``design``."""
        key = (nest, structure_identity(design), kind)
        seen = self._seen.setdefault(key, [])
        seen.append(_Seen(arch_vector(design.arch), mapping))
        if len(seen) > self.limit:
            del seen[0]


def fit_fanouts(mapping: Mapping, arch: Arch) -> Mapping:
    """``mapping`` with each level's spatial factors within its fan-out on ``arch``: a
    factor that no longer fits runs in time at that level instead (the largest first)."""
    fanouts = {lvl.name: arch.fanouts[i] for i, lvl in enumerate(arch.inner_first)}
    levels = []
    for lvl in mapping.levels:
        fx, fy = fanouts.get(lvl.target, (1, 1))
        temporal = dict(lvl.temporal)
        spatial = []
        for factors, limit in ((dict(lvl.spatial_x), fx), (dict(lvl.spatial_y), fy)):
            while math.prod(factors.values()) > limit:
                dim = max(factors, key=lambda d: factors[d])
                temporal[dim] = temporal.get(dim, 1) * factors.pop(dim)
            spatial.append(factors)
        levels.append(
            lvl.model_copy(
                update={"temporal": temporal, "spatial_x": spatial[0], "spatial_y": spatial[1]}
            )
        )
    return mapping.model_copy(update={"levels": tuple(levels)})


def fit_capacity(mapping: Mapping, space: Space, moves: int = 32) -> Mapping:
    """``mapping`` with the tiles of each level that no longer fits ``space``'s capacities
    made smaller: a prime factor of its largest temporal loop moved out to the level above
    (innermost first), at most ``moves`` times; the result may still not fit (then it
    prices invalid)."""
    arch = space.arch
    order = [lvl.name for lvl in arch.inner_first]  # innermost first
    by_name = {lvl.target: lvl for lvl in mapping.levels}
    temporal = {name: dict(by_name[name].temporal) if name in by_name else {} for name in order}
    spatial = {
        name: (
            {**by_name[name].spatial_x} if name in by_name else {},
            {**by_name[name].spatial_y} if name in by_name else {},
        )
        for name in order
    }
    for _ in range(moves):
        extent = np.ones(len(DIMS))
        bad = None
        for li, name in enumerate(order):
            for factors in (temporal[name], *spatial[name]):
                for dim, f in factors.items():
                    extent[Dim[dim]] *= f
            if li + 1 < len(order) and not bool(space.fits(li, extent[:, None])[0]):
                bad = li
                break
        if bad is None:
            break
        loops = {d: f for d, f in temporal[order[bad]].items() if f > 1}
        if not loops:
            break
        dim = max(loops, key=lambda d: loops[d])
        prime = _smallest_prime(loops[dim])
        temporal[order[bad]][dim] = loops[dim] // prime
        above = temporal[order[bad + 1]]
        above[dim] = above.get(dim, 1) * prime
    levels = []
    for lvl in mapping.levels:
        name = lvl.target
        kept = {d: f for d, f in temporal[name].items() if f > 1}
        levels.append(lvl.model_copy(update={"temporal": kept}))
    return mapping.model_copy(update={"levels": tuple(levels)})


def _every_level(mapping: Mapping, arch: Arch) -> Mapping:
    """``mapping`` with a level of no loops for each of ``arch``'s levels it does not name."""
    named = {lvl.target for lvl in mapping.levels}
    levels = list(mapping.levels)
    for lvl in arch.levels:
        if lvl.name not in named:
            levels.append(LevelMapping(target=lvl.name))
    return mapping.model_copy(update={"levels": tuple(levels)})


def _smallest_prime(n: int) -> int:
    return next((p for p in range(2, math.isqrt(n) + 1) if n % p == 0), n)


def seed_batch(seeds: Sequence[Mapping], space: Space) -> MappingBatch | None:
    """``seeds`` as one batch of ``space``'s mappings: those that name only its levels, their
    spatial factors fitted to its fan-outs (``fit_fanouts``), kept as the space keeps (a
    seed is a tiling and its loop orders; what it keeps is the space's); None: none.
    The tracker prices them like any mapping: one that no longer fits scores invalid."""
    names = {lvl.name for lvl in space.arch.levels}
    batches = []
    if len(seeds) and set(names) - {lvl.target for lvl in seeds[0].levels}:
        seeds = [_every_level(seed, space.arch) for seed in seeds]
    for seed in seeds:
        if not all(lvl.target in names for lvl in seed.levels):
            continue
        try:
            fitted = fit_capacity(fit_fanouts(seed, space.arch), space)
            batch = to_batch(fitted, space.arch, "warm start")
        except MagnetError:
            continue
        batches.append(replace(batch, keep=space.keep.copy()))
    return MappingBatch.concat(batches) if batches else None
