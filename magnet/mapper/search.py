"""Mappers: the best mapping of one layer on one architecture under a dataflow.

* ``exhaustive``: every mapping of the pruned mapspace (``Space``), priced in batches; the
  exact optimum, for small spaces.
* ``random``: ``samples`` capacity-aware random mappings; the best one.
* ``fast`` (default): exhaustive when the space is small (``exact_below``); otherwise a
  population search: a few thousand capacity-aware samples, then rounds of local moves (one
  prime factor from one slot to another, or one loop swap) from the best mappings, keeping
  improvements, until a few rounds bring nothing. Every candidate is priced by the batch
  evaluator, so a round of thousands of mappings costs milliseconds.

Objectives: ``energy``, ``latency``, ``edp`` (default) or a weighted product such as
``energy=1,latency=2`` (minimises energy x latency^2). Deterministic for a seed. A mapper never
returns an invalid mapping; when none exists, it says which constraint makes the layer
impossible.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts, CostModel, price_arch
from magnet.dataflow import Dataflow, dataflow_for
from magnet.errors import MagnetError
from magnet.mapper.sampler import neighbours, sample
from magnet.mapper.space import Space
from magnet.mapping.evaluate import BatchResult, Result, evaluate, evaluate_batch, overflow_message
from magnet.mapping.mapping import Mapping, MappingBatch
from magnet.workload.dims import NUM_DIMS
from magnet.workload.layer import Layer

MAPPERS = ("fast", "exhaustive", "random")


@dataclass(frozen=True)
class Objective:
    """Minimise energy^w_energy x latency^w_latency."""

    energy: float = 1.0
    latency: float = 1.0
    name: str = "edp"

    @classmethod
    def parse(cls, text: str | None) -> Objective:
        text = (text or "edp").strip().lower()
        named = {
            "edp": (1.0, 1.0),
            "energy": (1.0, 0.0),
            "latency": (0.0, 1.0),
            "delay": (0.0, 1.0),
        }
        if text in named:
            return cls(*named[text], name=text)
        weights = {"energy": 0.0, "latency": 0.0}
        for part in text.split(","):
            key, _, value = part.partition("=")
            key = {"delay": "latency"}.get(key.strip(), key.strip())
            try:
                weight = float(value)
            except ValueError:
                weight = -1.0
            if key not in weights or weight < 0:
                raise MagnetError(
                    f"cannot read objective {text!r}; allowed: edp, energy, latency, or "
                    "weights like 'energy=1,latency=2'",
                    field="--objective",
                )
            weights[key] = weight
        if weights["energy"] == weights["latency"] == 0:
            raise MagnetError("an objective needs a positive weight", field="--objective")
        return cls(weights["energy"], weights["latency"], name=text)

    def score(self, result: BatchResult) -> np.ndarray:
        """log of the objective (lower is better); invalid mappings score +inf."""
        s = self.energy * np.log(result.energy_pj) + self.latency * np.log(result.latency_cycles)
        return np.where(result.valid, s, np.inf)


@dataclass
class MapResult:
    """The best mapping found and how the search went."""

    layer: Layer
    arch: Arch
    dataflow: Dataflow
    mapper: str
    objective: Objective
    result: Result
    mappings_evaluated: int
    valid_mappings: int
    seconds: float
    mapspace_size: float
    history: list[float] = field(default_factory=list)

    @property
    def mapping(self) -> Mapping:
        return self.result.mapping

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "layer": self.layer.name,
            "shape": self.layer.shape_str(),
            "arch": self.arch.name,
            "dataflow": self.dataflow.name,
            "mapper": self.mapper,
            "objective": self.objective.name,
            "energy_pj": r.energy_pj,
            "latency_cycles": r.latency_cycles,
            "edp": r.edp,
            "utilization": r.utilization,
            "macs": r.macs,
            "mappings_evaluated": self.mappings_evaluated,
            "valid_mappings": self.valid_mappings,
            "seconds": self.seconds,
            "mapspace_size": self.mapspace_size,
            "mapping": r.mapping.to_data()["mapping"],
            "evaluation": r.to_dict(),
        }


class _Tracker:
    """Prices batches, filters invalid mappings and keeps the best ones."""

    def __init__(self, space: Space, costs: ArchCosts, objective: Objective):
        self.space, self.costs, self.objective = space, costs, objective
        self.evaluated = 0
        self.valid = 0
        self.best_score = np.inf
        self.best: MappingBatch | None = None
        self.history: list[float] = []
        self.last_invalid: tuple[MappingBatch, BatchResult] | None = None

    def price(self, batch: MappingBatch) -> np.ndarray:
        """Scores of ``batch`` (inf where a rule or the capacity is violated)."""
        if batch.size == 0:
            return np.zeros(0)
        space = self.space
        result = evaluate_batch(space.layer, space.arch, batch, self.costs)
        ok = space.structure_ok(batch) & result.valid
        scores = np.where(ok, self.objective.score(result), np.inf)
        self.evaluated += batch.size
        self.valid += int(ok.sum())
        if not ok.all():
            self.last_invalid = (batch, result)
        i = int(np.argmin(scores))
        if scores[i] < self.best_score:
            self.best_score = float(scores[i])
            self.best = batch.take([i])
        self.history.append(self.best_score)
        return scores


_HASH = np.random.default_rng(12345).random((4, 32, NUM_DIMS))


def _dedupe(batch: MappingBatch, scores: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` best distinct mappings (distinct by a hash of their arrays)."""
    order = np.argsort(scores, kind="stable")
    order = order[np.isfinite(scores[order])][: keep * 8]
    if order.size == 0:
        return order
    nl = batch.factors_t.shape[0]
    key = np.zeros(order.size)
    for i, arr in enumerate((batch.factors_t, batch.spatial_x, batch.spatial_y, batch.rank)):
        key += np.einsum("ldb,ld->b", np.log1p(arr[..., order].astype(np.float64)), _HASH[i, :nl])
    _, first = np.unique(np.round(key, 9), return_index=True)
    return order[np.sort(first)][:keep]


def map_layer(
    layer: Layer,
    arch: Arch,
    dataflow: str | Dataflow | None = None,
    *,
    mapper: str = "fast",
    objective: str | Objective | None = None,
    seed: int = 0,
    samples: int = 20_000,
    cost_model: CostModel | list[CostModel] | ArchCosts | None = None,
    exact_below: float = 20_000,
    rounds: int = 40,
    population: int = 32,
) -> MapResult:
    """Search the mapspace of ``layer`` on ``arch`` under ``dataflow`` (see the module)."""
    if mapper not in MAPPERS:
        raise MagnetError(
            f"unknown mapper {mapper!r}; allowed: {', '.join(MAPPERS)}", field="--mapper"
        )
    start = time.perf_counter()
    flow = dataflow_for(arch, dataflow)
    obj = objective if isinstance(objective, Objective) else Objective.parse(objective)
    costs = price_arch(arch, cost_model)
    space = Space(layer, arch, flow)
    size = space.size()
    tracker = _Tracker(space, costs, obj)
    rng = np.random.default_rng(seed)
    if mapper == "exhaustive" or (mapper == "fast" and size <= exact_below):
        _exhaustive(space, tracker)
    elif mapper == "random":
        for start_i in range(0, samples, 5000):
            tracker.price(sample(space, min(5000, samples - start_i), rng))
    else:
        _population_search(
            space, tracker, rng, samples=min(samples, 6000), rounds=rounds, population=population
        )
    if tracker.best is None:
        raise MagnetError(_why_no_mapping(space, tracker), field=layer.name)
    best = tracker.best.mapping(0, arch)
    result = evaluate(layer, arch, best, costs, source=f"mapper {mapper}")
    return MapResult(
        layer=layer,
        arch=arch,
        dataflow=flow,
        mapper=mapper,
        objective=obj,
        result=result,
        mappings_evaluated=tracker.evaluated,
        valid_mappings=tracker.valid,
        seconds=time.perf_counter() - start,
        mapspace_size=size,
        history=tracker.history,
    )


def _population_search(
    space: Space,
    tracker: _Tracker,
    rng: np.random.Generator,
    *,
    samples: int,
    rounds: int,
    population: int,
) -> None:
    batch = sample(space, samples, rng)
    scores = tracker.price(batch)
    pick = _dedupe(batch, scores, population)
    if pick.size == 0:  # the sampler found nothing valid: try once more, larger
        batch = sample(space, samples * 4, rng)
        scores = tracker.price(batch)
        pick = _dedupe(batch, scores, population)
        if pick.size == 0:
            return
    parents, parent_scores = batch.take(pick), scores[pick]
    stale = 0
    for _ in range(rounds):
        children = neighbours(space, parents, 48, rng)
        merged = MappingBatch.concat([parents, children])
        merged_scores = np.concatenate([parent_scores, tracker.price(children)])
        pick = _dedupe(merged, merged_scores, population)
        improved = merged_scores[pick].min() < parent_scores.min() - 1e-12
        parents, parent_scores = merged.take(pick), merged_scores[pick]
        stale = 0 if improved else stale + 1
        if stale >= 4:
            break


def _exhaustive(space: Space, tracker: _Tracker, chunk: int = 50_000) -> None:
    """Price every mapping of the pruned space in chunks."""
    for batch in enumerate_space(space, chunk):
        tracker.price(batch)


def enumerate_space(space: Space, chunk: int = 50_000):
    """Yield the whole pruned mapspace as batches: every tiling that fits, every order class."""
    nl = space.nl
    per_dim = [space.dim_tilings(d) for d in range(NUM_DIMS)]
    counts = [len(table) for table, _ in per_dim]
    total_tilings = math.prod(counts)
    for start in range(0, total_tilings, chunk):
        idx = np.arange(start, min(start + chunk, total_tilings))
        t = np.ones((nl, NUM_DIMS, idx.size), dtype=np.int64)
        sx = np.ones_like(t)
        sy = np.ones_like(t)
        rest = idx
        for d in range(NUM_DIMS - 1, -1, -1):
            table, slots = per_dim[d]
            row = rest % counts[d]
            rest = rest // counts[d]
            for j, (kind, li) in enumerate(slots):
                {"t": t, "x": sx, "y": sy}[kind][li, d] = table[row, j]
        fixed = space.fixed_t > 0
        t[fixed] = space.fixed_t[fixed][:, None]
        ok = _fits(space, t, sx * sy)
        for li, (fx, fy) in enumerate(space.fanouts):
            ok &= (sx[li].prod(axis=0) <= fx) & (sy[li].prod(axis=0) <= fy)
        rows = np.flatnonzero(ok)
        if rows.size:
            yield from _with_orders(space, t[..., rows], sx[..., rows], sy[..., rows], chunk)


def _fits(space: Space, t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """bool[n]: every level's kept tiles fit (orders do not change tile sizes)."""
    extent = np.ones(t.shape[1:])
    ok = np.ones(t.shape[2], dtype=bool)
    for li in range(space.nl):
        extent = extent * t[li] * s[li]
        ok &= space.fits(li, extent)
    return ok


def _with_orders(space: Space, t: np.ndarray, sx: np.ndarray, sy: np.ndarray, chunk: int):
    """Expand tilings by the loop-order classes of each level's active dims.

    Tilings with the same active dims at every level share their order combinations, so each
    group expands by broadcasting.
    """
    nl, nd, n = t.shape
    active = (t > 1).transpose(2, 0, 1).reshape(n, nl * nd)
    groups, inverse = np.unique(active, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    buffer: list[tuple[np.ndarray, np.ndarray]] = []  # (tiling columns, ranks per column)
    pending = 0
    for g, pattern in enumerate(groups):
        members = np.flatnonzero(inverse == g)
        per_level = [
            space.order_ranks(
                tuple(int(d) for d in np.flatnonzero(pattern[li * nd : (li + 1) * nd])), li
            )
            for li in range(nl)
        ]
        grid = np.indices([len(r) for r in per_level]).reshape(nl, -1)  # [level, combo]
        ranks = np.stack([per_level[li][grid[li]] for li in range(nl)])  # [level, combo, dim]
        ranks = ranks.transpose(0, 2, 1)  # [level, dim, combo]
        combos = range(ranks.shape[2])
        buffer.append((np.repeat(members, len(combos)), np.tile(ranks, (1, 1, members.size))))
        pending += members.size * len(combos)
        if pending >= chunk:
            yield _flush(space, t, sx, sy, buffer)
            buffer, pending = [], 0
    if buffer:
        yield _flush(space, t, sx, sy, buffer)


def _flush(space: Space, t, sx, sy, buffer) -> MappingBatch:
    pick = np.concatenate([p for p, _ in buffer])
    return MappingBatch(
        t[..., pick].astype(np.int32),
        sx[..., pick].astype(np.int32),
        sy[..., pick].astype(np.int32),
        np.concatenate([r for _, r in buffer], axis=2),
        space.keep.copy(),
    )


def _why_no_mapping(space: Space, tracker: _Tracker) -> str:
    name = space.dataflow.name
    if tracker.last_invalid is not None:
        batch, result = tracker.last_invalid
        structure = space.structure_ok(batch)
        if not structure.any():
            return (
                f"no mapping satisfies dataflow {name!r} here (its stationarity and loop "
                "rules conflict with the level capacities)"
            )
        i = int(np.flatnonzero(~result.valid)[0]) if (~result.valid).any() else 0
        return f"no valid mapping found under dataflow {name!r}; for example " + overflow_message(
            space.layer, space.arch, batch, result.counts, i
        )
    return f"no valid mapping found under dataflow {name!r}"


def map_network(
    network: Any,
    arch: Arch,
    dataflow: str | Dataflow | None = None,
    *,
    cost_model: CostModel | ArchCosts | list[CostModel] | None = None,
    progress: Any = None,
    **search: Any,
) -> dict[str, MapResult]:
    """Map every distinct layer shape of ``network`` once; results by layer name.

    ``search`` holds ``map_layer``'s options (mapper, objective, seed, ...).
    """
    costs = price_arch(arch, cost_model)
    flow = dataflow_for(arch, dataflow)
    out: dict[str, MapResult] = {}
    for layer, _count, names in network.unique_layers():
        result = map_layer(layer, arch, flow, cost_model=costs, **search)
        for name in names:
            out[name] = result
        if progress is not None:
            progress(layer, result)
    return out


def evaluate_workload(
    network: Any,
    arch: Arch,
    dataflow: str | Dataflow | None = None,
    *,
    cost_model: CostModel | ArchCosts | list[CostModel] | None = None,
    progress: Any = None,
    **search: Any,
) -> Any:
    """Map every distinct layer of ``network`` and evaluate the whole network.

    ``search`` holds ``map_layer``'s options. Returns a ``magnet.mapping.network.NetworkResult``
    (totals and a row per layer).
    """
    from magnet.mapping.network import LayerMappings, evaluate_network

    costs = price_arch(arch, cost_model)
    found = map_network(network, arch, dataflow, cost_model=costs, progress=progress, **search)
    source = f"mapper {search.get('mapper', 'fast')}"
    mappings = LayerMappings({name: r.mapping for name, r in found.items()}, source=source)
    return evaluate_network(network, arch, mappings, costs)
