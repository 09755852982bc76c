"""Capacity-aware random mappings of a mapspace, and local moves between mappings.

The sampler fills levels from the innermost outwards: spatial factors first (favouring a full
fan-out), then each level's temporal factors, choosing for every dimension a divisor of what is
left whose tile still fits the level; the outermost level takes the rest. Every sample is
valid by construction except when a dataflow's stationarity forces factors together.
"""

from __future__ import annotations

import numpy as np

from magnet.mapper.space import Space
from magnet.mapping.mapping import MappingBatch
from magnet.workload.dims import NUM_DIMS, divisors

_ALPHAS = np.array([0.0, 1.0, 3.0])  # preference for large factors: none, some, strong


def _choose(feasible: np.ndarray, weight: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Pick one feasible row per column of ``feasible[k, n]``, with probability ~ weight."""
    w = feasible * weight
    cum = np.cumsum(w, axis=0)
    total = cum[-1]
    u = rng.random(feasible.shape[1]) * total
    idx = (cum < u[None, :]).sum(axis=0)
    return np.minimum(idx, feasible.shape[0] - 1)


def sample(space: Space, n: int, rng: np.random.Generator) -> MappingBatch:
    """``n`` mappings of ``space`` (deterministic for the generator's state)."""
    nl = space.nl
    ext = space.extent
    t = np.ones((nl, NUM_DIMS, n), dtype=np.int64)
    sx = np.ones_like(t)
    sy = np.ones_like(t)
    rem = np.repeat(ext[:, None], n, axis=1)
    alpha = _ALPHAS[rng.integers(0, len(_ALPHAS), n)]
    for li in range(nl):
        for d in range(NUM_DIMS):
            if space.fixed_t[li, d]:
                t[li, d] = space.fixed_t[li, d]
                rem[d] = -(-rem[d] // space.fixed_t[li, d])
            if space.fixed_s[li, d]:
                target = sx if space.allow_sx[li, d] or not space.allow_sy[li, d] else sy
                target[li, d] = space.fixed_s[li, d]
                rem[d] = -(-rem[d] // space.fixed_s[li, d])

    # spatial factors, favouring a full fan-out
    for li, (fx, fy) in enumerate(space.fanouts):
        for arr, limit0, allow in ((sx, fx, space.allow_sx[li]), (sy, fy, space.allow_sy[li])):
            if limit0 <= 1:
                continue
            limit = np.full(n, limit0, dtype=np.int64) // arr[li].prod(axis=0)
            dims = [
                d for d in range(NUM_DIMS) if allow[d] and ext[d] > 1 and not space.fixed_s[li, d]
            ]
            for d in rng.permutation(dims):
                cands = np.arange(1, min(limit0, int(ext[d])) + 1)
                c = cands[:, None]
                fits = c <= limit
                exact = rem[d] % c == 0
                padded = c == np.minimum(limit, rem[d])  # whole fan-out, last step padded
                feasible = fits & (exact | padded)
                weight = cands[:, None].astype(float) ** (1.0 + alpha)[None, :]
                f = cands[_choose(feasible, weight, rng)]
                arr[li, d] = f
                rem[d] = -(-rem[d] // f)
                limit //= f

    # temporal factors, innermost level first, each tile within its level's capacity
    s = sx * sy
    extent = np.ones((NUM_DIMS, n))
    for li in range(nl - 1):
        extent = extent * s[li] * t[li]
        dims = [
            d
            for d in range(NUM_DIMS)
            if space.allow_t[li, d] and not space.fixed_t[li, d] and ext[d] > 1
        ]
        for d in rng.permutation(dims):
            cands = np.array(sorted({c for v in np.unique(rem[d]) for c in divisors(int(v))}))
            c = cands[:, None]
            feasible = rem[d] % c == 0
            trial = np.repeat(extent[:, None, :], len(cands), axis=1)
            trial[d] *= c
            # the tile must fit this level and every level above (their tiles contain it)
            for m in range(li, nl):
                if m > li:
                    trial = trial * s[m][:, None, :]
                feasible &= space.fits(m, trial)
            weight = c.astype(float) ** alpha[None, :]
            f = cands[_choose(feasible, weight, rng)]
            t[li, d] = f
            rem[d] //= f
            extent[d] *= f
    top = nl - 1
    for d in range(NUM_DIMS):
        levels = [li for li in range(nl) if space.allow_t[li, d] and not space.fixed_t[li, d]]
        home = top if top in levels or not levels else levels[-1]
        t[home, d] *= rem[d]

    rank = orders(space, t, rng)
    batch = MappingBatch(
        t.astype(np.int32), sx.astype(np.int32), sy.astype(np.int32), rank, space.keep.copy()
    )
    for li, op in space.stationary:
        make_stationary(space, batch, li, op)
    for li, op in space.reuse:
        make_reuse(batch, li, op)
    return batch


def orders(space: Space, t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random loop orders (ranks, 0 = innermost) honouring each level's fixed prefix."""
    nl, _, n = t.shape
    rank = np.empty((nl, NUM_DIMS, n), dtype=np.int8)
    base = np.tile(np.arange(NUM_DIMS, dtype=np.int8), (n, 1))
    for li in range(nl):
        perm = rng.permuted(base, axis=1)  # [n, position] -> dim
        prefix = space.order_prefix[li]
        if prefix:
            rest = [d for d in range(NUM_DIMS) if d not in prefix]
            perm = np.concatenate(
                [
                    np.tile(np.array(prefix, dtype=np.int8), (n, 1)),
                    rng.permuted(np.tile(np.array(rest, dtype=np.int8), (n, 1)), axis=1),
                ],
                axis=1,
            )
        np.put_along_axis(
            rank[li].T, perm.astype(np.int64), np.arange(NUM_DIMS, dtype=np.int8)[None, :], axis=1
        )
    return rank


def make_stationary(space: Space, batch: MappingBatch, li: int, op) -> None:
    """Move loops so that ``op`` is never refetched into level ``li`` (in place).

    Above the level, the loops that do not index the operand go innermost in each level, and
    such loops above the first level that has a relevant loop move down into that level.
    """
    from magnet.mapper.space import _REL

    t, rank = batch.factors_t, batch.rank
    rel = _REL[op]
    n = batch.size
    first = np.full(n, -1)
    for m in range(li + 1, t.shape[0]):
        has = ((t[m] > 1) & rel[:, None]).any(axis=0)
        first = np.where((first < 0) & has, m, first)
    for m in range(li + 1, t.shape[0]):
        above = (first >= 0) & (m > first)
        for d in np.flatnonzero(~rel):
            move = above & (t[m, d] > 1)
            if move.any():
                rows = np.flatnonzero(move)
                t[first[rows], d, rows] *= t[m, d, rows]
                t[m, d, rows] = 1
        # irrelevant dims innermost: rank them before the relevant ones, keeping relative order
        key = rank[m].astype(np.int16) + np.where(rel[:, None], NUM_DIMS, 0)
        rank[m] = np.argsort(np.argsort(key, axis=0, kind="stable"), axis=0).astype(np.int8)


def make_reuse(batch: MappingBatch, li: int, op) -> None:
    """Put a loop that does not index ``op`` innermost in the first active level above ``li``
    (in place), when that level has one."""
    from magnet.mapper.space import _REL

    t, rank = batch.factors_t, batch.rank
    rel = _REL[op]
    done = np.zeros(batch.size, dtype=bool)
    for m in range(li + 1, t.shape[0]):
        active = t[m] > 1
        has = active.any(axis=0) & ~done
        key = rank[m].astype(np.int16) + np.where((rel[:, None] | ~active), NUM_DIMS, 0)
        new = np.argsort(np.argsort(key, axis=0, kind="stable"), axis=0).astype(np.int8)
        rank[m] = np.where(has[None, :], new, rank[m])
        done |= has


def neighbours(
    space: Space, parents: MappingBatch, per_parent: int, rng: np.random.Generator
) -> MappingBatch:
    """``per_parent`` random neighbours of each mapping.

    A move takes one prime factor of one dimension from one slot (a level's temporal loop or a
    fan-out) to another, or swaps two loops of one level.
    """
    n = parents.size * per_parent
    parent = np.repeat(np.arange(parents.size), per_parent)
    child = parents.take(parent)
    child = type(child)(
        child.factors_t.copy(),
        child.spatial_x.copy(),
        child.spatial_y.copy(),
        child.rank.copy(),
        child.keep,
    )
    nl = space.nl
    slots = np.concatenate([child.factors_t, child.spatial_x, child.spatial_y]).astype(np.int64)
    allowed = np.concatenate([space.allow_t, space.allow_sx, space.allow_sy])  # [3L, dim]
    for li, (fx, fy) in enumerate(space.fanouts):
        if fx <= 1:
            allowed[nl + li] = False
        if fy <= 1:
            allowed[2 * nl + li] = False
    fixed = np.concatenate([space.fixed_t, space.fixed_s, space.fixed_s]) > 0
    allowed &= ~fixed
    dims = np.flatnonzero(space.extent > 1)
    is_move = rng.random(n) < 0.7
    d = dims[rng.integers(0, len(dims), n)]
    cols = np.arange(n)
    # source: a slot of dim d with a factor > 1; destination: an allowed slot of dim d
    src_ok = (slots[:, d, cols] > 1) & allowed[:, d]
    dst_ok = allowed[:, d]
    src = np.argmax(src_ok * rng.random(src_ok.shape), axis=0)
    dst = np.argmax(dst_ok * rng.random(dst_ok.shape), axis=0)
    valid = is_move & src_ok[src, cols] & dst_ok[dst, cols] & (src != dst)
    f = slots[src, d, cols]
    p = _smallest_prime(f)
    rows = np.flatnonzero(valid)
    slots[src[rows], d[rows], rows] //= p[rows]
    slots[dst[rows], d[rows], rows] *= p[rows]
    child.factors_t[:] = slots[:nl]
    child.spatial_x[:] = slots[nl : 2 * nl]
    child.spatial_y[:] = slots[2 * nl :]
    # loop swaps for the others
    swap = np.flatnonzero(~is_move)
    if swap.size:
        level = rng.integers(0, nl, swap.size)
        a = rng.integers(0, NUM_DIMS, swap.size)
        b = rng.integers(0, NUM_DIMS, swap.size)
        ra = child.rank[level, a, swap].copy()
        child.rank[level, a, swap] = child.rank[level, b, swap]
        child.rank[level, b, swap] = ra
    return child


_SPF_LIMIT = 1 << 16
_SPF = np.arange(_SPF_LIMIT + 1)
for _p in range(2, int(_SPF_LIMIT**0.5) + 1):
    if _SPF[_p] == _p:
        _SPF[_p * _p :: _p] = np.minimum(_SPF[_p * _p :: _p], _p)


def _smallest_prime(values: np.ndarray) -> np.ndarray:
    out = np.ones_like(values)
    small = values <= _SPF_LIMIT
    out[small] = _SPF[values[small]]
    for i in np.flatnonzero(~small):  # rare: factors above 65536
        v = int(values[i])
        out[i] = next((q for q in range(2, int(v**0.5) + 1) if v % q == 0), v)
    return out
