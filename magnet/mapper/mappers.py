"""The built-in mappers.

* ``exhaustive``: every mapping of the pruned mapspace (``Space``), priced in batches; the
  exact optimum. It refuses a space of more than ``EXHAUSTIVE_LIMIT`` tilings (stating the
  mapspace size) unless given a budget (then it prices until the budget ends).
* ``random``: ``samples`` capacity-aware random mappings; the best one.
* ``fast`` (default): exhaustive when the space has at most ``exact_below`` mappings;
  otherwise a population search: ``samples`` capacity-aware
  random mappings, then rounds of local moves (one prime factor from one slot to another,
  or one loop swap) from the ``population`` best, keeping improvements, until ``patience``
  rounds bring nothing or ``rounds`` have run. Given seeds (a warm start,
  ``magnet.mapper.warm``): the seeds and ``warm_samples`` random mappings, then at most
  ``warm_rounds`` rounds from the ``warm_population`` best, until ``warm_patience`` bring
  nothing.

Every mapper is deterministic for a seed and never returns an invalid mapping.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import Field

from magnet.errors import MagnetError
from magnet.mapper.mapper import Mapper, Tracker
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import neighbours, sample
from magnet.mapping import MappingBatch
from magnet.strict import Strict
from magnet.workload.dims import NUM_DIMS

#: The most tilings the exhaustive mapper walks without a budget (each is checked against the
#: capacities, about a microsecond; those that fit take every loop-order class).
EXHAUSTIVE_LIMIT = 2_000_000
#: Mappings priced per call of the evaluator.
CHUNK = 20_000


class _Options(Strict):
    """A mapper's options, checked (unknown names refused)."""


#: Whole numbers per mapping: ``int64[batch]`` (indices) or ``[level, dim, batch]`` (factors).
Ints = npt.NDArray[np.int64]
#: A batch's tiling columns and the loop-order ranks of each (``_with_orders``).
Expansion = tuple[Ints, npt.NDArray[np.int8]]


class ExhaustiveMapper(Mapper[_Options]):
    """Every mapping of the pruned mapspace: tilings that fit x loop-order classes."""

    name = "exhaustive"
    Options = _Options

    def prepare(self, space: Space) -> None:
        """Refuse a mapspace too large to walk without a budget (bad input naming it)."""
        tilings = space.tilings()
        if tilings > EXHAUSTIVE_LIMIT and self.budget.unlimited:
            raise MagnetError(
                f"the mapspace of {space.layer.name!r} has {space.size():.3g} mappings "
                f"({tilings:.3g} tilings); the exhaustive mapper walks at most "
                f"{EXHAUSTIVE_LIMIT:,} tilings without a budget: give one "
                "(--budget-evaluations N or --budget-seconds S) or use --mapper fast",
                field="--mapper",
            )

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        """Price the whole pruned mapspace, batch by batch."""
        for batch in enumerate_space(space, CHUNK):
            tracker.price(batch)


class RandomOptions(_Options):
    """The random mapper's options."""

    samples: int = Field(20_000, ge=1, le=100_000_000, description="random mappings to price")


class RandomMapper(Mapper[RandomOptions]):
    """``samples`` capacity-aware random mappings."""

    name = "random"
    Options = RandomOptions

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        """Price ``samples`` capacity-aware random mappings (within the budget's room)."""
        left = self.options.samples
        while left > 0:
            n = tracker.room(min(CHUNK, left))
            tracker.price(sample(space, n, rng))
            left -= n


class FastOptions(_Options):
    """The fast mapper's options (its population search)."""

    samples: int = Field(6000, ge=1, le=10_000_000, description="random mappings to start from")
    exact_below: float = Field(
        20_000, ge=0, description="enumerate the whole mapspace when it is at most this large"
    )
    rounds: int = Field(40, ge=0, le=10_000, description="at most this many rounds of moves")
    population: int = Field(32, ge=1, le=10_000, description="mappings kept between rounds")
    children: int = Field(48, ge=1, le=10_000, description="moves tried per kept mapping")
    patience: int = Field(4, ge=1, le=1000, description="rounds without gain before stopping")
    warm_samples: int = Field(
        600,
        ge=0,
        le=10_000_000,
        description="random mappings beside the seeds of a warm start (magnet.mapper.warm)",
    )
    warm_patience: int = Field(
        1, ge=1, le=1000, description="rounds without gain before a warm start stops"
    )
    warm_rounds: int = Field(4, ge=0, le=10_000, description="at most this many rounds warm")
    warm_population: int = Field(8, ge=1, le=10_000, description="mappings kept warm")


class FastMapper(Mapper[FastOptions]):
    """Exhaustive on small spaces, else a population search of local moves."""

    name = "fast"
    Options = FastOptions

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        """The whole mapspace when it is small, else random mappings and rounds of moves
        from the best of them (see the module docstring)."""
        o = self.options
        small = space.size() <= o.exact_below
        if tracker.seeds is not None and not small and self._warm(space, tracker, rng):
            return
        if small:
            for batch in enumerate_space(space, CHUNK):
                tracker.price(batch)
            return
        # the first population in 8 blocks, each filling the dims in its own random order: one
        # order for all could miss the best region (benchmarks/bench_mapper.py, 22 layers x 10
        # seeds: worst fast / exhaustive EDP 1.33 in one block, 1.003 in 8)
        for samples in (o.samples, o.samples * 4):  # nothing valid: once more, larger
            batch = sample(space, tracker.room(samples), rng, blocks=8)
            scores = tracker.price(batch)
            pick = _dedupe(batch, scores, o.population)
            if pick.size:
                break
        else:
            return
        rounds = (o.patience, o.rounds, o.population)
        parents, parent_scores = batch.take(pick), scores[pick]
        del batch, scores  # not held while refining: searches in lock step wait together
        self._refine(space, tracker, rng, parents, parent_scores, *rounds)

    def _warm(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> bool:
        """A warm start: the seeds (re-validated by pricing) and ``warm_samples`` random
        mappings, refined until ``warm_patience`` rounds bring nothing; False when no seed
        is valid (the search then starts afresh)."""
        o = self.options
        assert tracker.seeds is not None
        seeds = tracker.seeds
        if o.warm_samples:  # half the population from fresh samples: a seed may mislead
            # in one block (one order of the dims): the seeds place the search, and blocks of
            # their own orders gave the same EDP for 5 % more CPU (benchmarks/bench_warm.py);
            # priced with the seeds, in one call
            wanted = tracker.room(seeds.size + o.warm_samples) - seeds.size
            fresh = sample(space, max(1, wanted), rng)
            both = tracker.price(MappingBatch.concat([seeds, fresh]))
            scores, fresh_scores = both[: seeds.size], both[seeds.size :]
        else:
            scores = tracker.price(seeds)
        if not np.isfinite(scores).any():
            return False
        pick = _dedupe(seeds, scores, o.warm_population)
        parents, parent_scores = seeds.take(pick), scores[pick]
        if o.warm_samples:
            keep = max(1, o.warm_population - o.warm_population // 2)
            pick = pick[:keep]
            extra = _dedupe(fresh, fresh_scores, o.warm_population - pick.size)
            parents = MappingBatch.concat([seeds.take(pick), fresh.take(extra)])
            parent_scores = np.concatenate([scores[pick], fresh_scores[extra]])
        rounds = (o.warm_patience, o.warm_rounds, o.warm_population)
        self._refine(space, tracker, rng, parents, parent_scores, *rounds)
        return True

    def _refine(
        self,
        space: Space,
        tracker: Tracker,
        rng: np.random.Generator,
        parents: MappingBatch,
        parent_scores: npt.NDArray[np.float64],
        patience: int,
        rounds: int,
        population: int,
    ) -> None:
        """Rounds of local moves from ``parents``, keeping the ``population`` best, until
        ``patience`` rounds bring nothing or ``rounds`` have run."""
        o = self.options
        stale = 0
        for _ in range(rounds):
            children = neighbours(space, parents, o.children, rng)
            merged = MappingBatch.concat([parents, children])
            merged_scores = np.concatenate([parent_scores, tracker.price(children)])
            pick = _dedupe(merged, merged_scores, population)
            improved = merged_scores[pick].min() < parent_scores.min() - 1e-12
            parents, parent_scores = merged.take(pick), merged_scores[pick]
            stale = 0 if improved else stale + 1
            if stale >= patience:
                break


#: The built-in mappers by name (``magnet.mapper.mapper.MAPPERS`` registers them when it is
#: first used).
BUILTIN: dict[str, type[Mapper[Any]]] = {
    cls.name: cls for cls in (FastMapper, ExhaustiveMapper, RandomMapper)
}

_HASH = np.random.default_rng(12345).random((4, 32, NUM_DIMS))


def _dedupe(batch: MappingBatch, scores: npt.NDArray[np.float64], keep: int) -> Ints:
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
    picked: Ints = order[np.sort(first)][:keep]
    return picked


def enumerate_space(space: Space, chunk: int = CHUNK) -> Iterator[MappingBatch]:
    """Yield the whole pruned mapspace as batches: every tiling that fits, every order class."""
    nl = space.nl
    per_dim = [space.dim_tilings(d) for d in range(NUM_DIMS)]
    counts = [len(table) for table, _ in per_dim]
    total_tilings = math.prod(counts)
    fixed = space.fixed_t > 0
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
        t[fixed] = space.fixed_t[fixed][:, None]
        ok = _fits(space, t, sx * sy)
        for li, (fx, fy) in enumerate(space.fanouts):
            ok &= (sx[li].prod(axis=0) <= fx) & (sy[li].prod(axis=0) <= fy)
        rows = np.flatnonzero(ok)
        if rows.size:
            yield from _with_orders(space, t[..., rows], sx[..., rows], sy[..., rows], chunk)


def _fits(space: Space, t: Ints, s: Ints) -> npt.NDArray[np.bool_]:
    """bool[n]: every level's kept tiles fit (orders do not change tile sizes)."""
    extent = np.ones(t.shape[1:])
    ok: npt.NDArray[np.bool_] = np.ones(t.shape[2], dtype=bool)
    for li in range(space.nl):
        extent = extent * t[li] * s[li]
        ok &= space.fits(li, extent)
    return ok


def _with_orders(space: Space, t: Ints, sx: Ints, sy: Ints, chunk: int) -> Iterator[MappingBatch]:
    """Expand tilings by the loop-order classes of each level's active dims.

    Tilings with the same active dims at every level share their order combinations, so each
    group expands by broadcasting.
    """
    nl, nd, n = t.shape
    active = (t > 1).transpose(2, 0, 1).reshape(n, nl * nd)
    groups, inverse = np.unique(active, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    buffer: list[Expansion] = []  # (tiling columns, ranks per column)
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


def _flush(space: Space, t: Ints, sx: Ints, sy: Ints, buffer: list[Expansion]) -> MappingBatch:
    """The tilings and orders gathered in ``buffer`` as one batch."""
    pick = np.concatenate([p for p, _ in buffer])
    return MappingBatch(
        t[..., pick].astype(np.int32),
        sx[..., pick].astype(np.int32),
        sy[..., pick].astype(np.int32),
        np.concatenate([r for _, r in buffer], axis=2),
        space.keep.copy(),
    )
