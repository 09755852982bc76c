"""Zeros: a batch's dense access counts turned into the accesses a sparse design makes.

Sparseloop's formulation (Wu et al., MICRO 2022): the dense analysis (``analyze``) first,
then, per level and tensor, the level's format and its gating or skipping
(``magnet.arch.sparse``) applied to the counts as expected values under the layer's
densities (``magnet.workload.sparsity``); density 1 and no format or action leave the counts
as they are.

* Formats. A compressed tensor's words at a level are stored and moved as its kept
  coordinates plus metadata (``fiber_bits``, per rank): its reads, fills and updates there and its
  words on the fan-out below are scaled by (bits per dense word) / (bits of a word), so DRAM
  bytes, bandwidth, interconnect words and energy all see the compressed size. Capacity is
  checked on the compressed tiles: their expected size, or their worst
  (``Arch.sparse_capacity``).
* Gating and skipping. The level's reads of the target (and, of outputs, its updates) are
  made only when a tile of each ``condition_on`` tensor holds a non-zero: the tile that tensor
  has at the nearest level inside this one keeping it (one word when none does: the MAC's
  operand), non-empty with ``Density.occupied``. Skipping removes the others from the counts;
  gating keeps them for the bandwidth (their slots) and prices only those made (a gated access
  costs nothing: an assumption, Accelergy's gated actions are near zero).
* Compute. The MACs' ``zeros`` gate (energy) or skip (energy and cycles) a multiply whose
  ``operands`` are zero: effectual MACs = MACs x the product of those densities. Skipping
  pays for load imbalance: the MACs below the innermost fan-out (a vector unit's lanes, a
  systolic array) step together, so a step is skipped only when every lane's operands are
  zero (1 - (1 - p)^lanes of the steps remain), but for an operand the innermost level
  keeping it holds compressed: its non-zeros alone reach the lanes, packed (a sparse tensor
  core's), so a tile of n of its words over the lanes its loops spread on takes
  ceil(non-zeros / lanes) steps, not n / lanes (binomial non-zeros for a uniform tensor,
  exact for N:M); instances of the fan-outs above it run their
  own loops between the iterations of the outermost fan-out's level, each its own count of
  effectual steps, and wait for the slowest: the expected maximum of ``instances``
  binomial(steps, p) counts, by the normal approximation (mean + Blom's expected maximum of
  that many standard normals x the deviation).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache
from statistics import NormalDist

import numpy as np

from magnet.arch.sparse import COORDINATES, ComputeZeros, Rank
from magnet.arch.spec import Arch
from magnet.mapping import MappingBatch
from magnet.model.counts import Counts, FloatArray, operand_bits, tile_capacity_bits
from magnet.workload.dims import OPERANDS, RELEVANT, Dim, Operand, parse_operand
from magnet.workload.layer import Layer, ShapeKey
from magnet.workload.sparsity import Density


def is_sparse(layer: Layer, arch: Arch) -> bool:
    """Whether zeros change anything: a density below 1, or a format or an action."""
    return arch.sparse or not layer.densities.dense


def stored_bits(layer: Layer, arch: Arch, *, capacity: bool = False) -> FloatArray:
    """float[level, operand]: bits each level stores and moves per word of each dense
    operand, metadata included, for any tile (``tile_bits`` for a batch's own tiles): exact
    for a format of one rank, whose bits per word do not depend on the tile's shape; for a
    tree of ranks a lower bound, its non-zeros alone (what the mapper's capacity check may
    prune by). ``capacity``: as the capacity check counts them (``Arch.sparse_capacity``)."""
    key = (id(arch), layer.shape_key(), capacity)
    if key not in _STORED or _STORED[key][0] is not arch:
        bits = operand_bits(arch)
        shares = {op: _share(layer, arch, op, capacity) for op in Operand}
        for li, lvl in enumerate(arch.inner_first):
            for name, spec in lvl.sparse.items():
                op = parse_operand(name)
                density, share = shares[op]
                ranks = spec.fiber_ranks(name)
                if len(ranks) == 1:
                    one = fiber_bits(ranks, [np.ones(1)], bits[li, op], density, share)
                    bits[li, op] = float(one[0])
                else:
                    bits[li, op] *= share
        if len(_STORED) > 256:
            _STORED.clear()
        bits.setflags(write=False)  # shared by every caller
        _STORED[key] = (arch, bits)
    return _STORED[key][1]


#: ``stored_bits``'s answers by (architecture, layer shape, capacity), each with its
#: architecture (an identity reused by another object is not taken for it).
_STORED: dict[tuple[int, ShapeKey, bool], tuple[Arch, FloatArray]] = {}


def _share(layer: Layer, arch: Arch, op: Operand, capacity: bool) -> tuple[Density, float]:
    """The operand's density and the share of its words that are not zero (``capacity``:
    as the capacity check counts it)."""
    density = layer.densities.of(op)
    if capacity and arch.sparse_capacity == "worst":
        return density, density.worst()
    return density, density.expected(layer.operand_size(op))


def fiber_bits(
    ranks: tuple[Rank, ...],
    shapes: list[FloatArray],
    word_bits: float,
    density: Density,
    share: float,
) -> FloatArray:
    """Bits per dense word of a tile stored as the fiber tree ``ranks`` (outer to inner),
    each rank ``shapes[r]`` coordinates a fiber (arrays, one per tile), Sparseloop's format
    models: a rank's fibers are the coordinates the rank above kept; ``uncompressed`` and
    ``uop`` keep all their coordinates (``uop`` with an offset per coordinate and one more per
    fiber), ``bitmask`` keeps those whose subtree holds a non-zero with a bit per coordinate,
    ``rle`` and ``cp`` with their metadata per kept coordinate; the leaves kept are words."""
    words = np.prod(np.stack(shapes), axis=0)
    fibers: FloatArray = np.ones_like(words)
    meta: FloatArray = np.zeros_like(words)
    below, positions = words, np.ones_like(words)
    for rank, shape in zip(ranks, shapes, strict=True):
        below, positions = below / shape, positions * shape
        coords = fibers * shape
        # a coordinate's subtree holds a non-zero (and so do its ancestors): of all the
        # rank's positions, this share is kept
        held = np.where(below <= 1, share, density.occupied(below))
        kept = positions * held if rank.compressed else coords
        if rank.format == "bitmask":
            meta = meta + coords * rank.bits
        elif rank.format in ("rle", "cp"):
            meta = meta + kept * rank.bits
        elif rank.format == "uop":
            meta = meta + fibers * (shape + 1) * rank.bits
        fibers = kept
    out: FloatArray = (fibers * word_bits + meta) / words
    return out


def _coordinate_extents(layer: Layer, batch: MappingBatch) -> dict[str, list[FloatArray]]:
    """Each tensor's coordinates' extents in each level's tiles (``COORDINATES``),
    ``[level, batch]`` each."""
    f = (batch.factors_t * batch.spatial_x * batch.spatial_y).astype(float)
    ext = np.minimum(np.cumprod(f, axis=0), np.array(layer.dims, dtype=float)[None, :, None])
    e = {d.name: ext[:, int(d)] for d in Dim}
    height = layer.hstride * (e["Q"] - 1) + layer.hdilation * (e["S"] - 1) + 1
    width = layer.wstride * (e["P"] - 1) + layer.wdilation * (e["R"] - 1) + 1
    return {
        "weights": [e["G"], e["K"], e["C"], e["S"], e["R"]],
        "inputs": [e["N"], e["G"], e["C"], height, width],
        "outputs": [e["N"], e["G"], e["K"], e["Q"], e["P"]],
    }


def _trees(arch: Arch) -> bool:
    """Some level keeps a tensor as a tree of several ranks (its bits per word depend on
    each tile's shape)."""
    return any(
        len(spec.fiber_ranks(n)) > 1 for lvl in arch.levels for n, spec in lvl.sparse.items()
    )


def tile_bits(
    layer: Layer, arch: Arch, extents: dict[str, list[FloatArray]], *, capacity: bool = False
) -> FloatArray:
    """float[level, operand, batch]: bits each level stores and moves per word of each dense
    operand in each mapping's tiles (``fiber_bits`` over the ranks' shapes there, the
    tiles' coordinates' ``extents``: ``_coordinate_extents``)."""
    word_bits = operand_bits(arch)
    stored = stored_bits(layer, arch, capacity=capacity)
    bits = np.repeat(stored[:, :, None], extents["weights"][0].shape[1], axis=2)
    for li, lvl in enumerate(arch.inner_first):
        for name, spec in lvl.sparse.items():
            ranks = spec.fiber_ranks(name)
            if len(ranks) == 1:
                continue
            op = parse_operand(name)
            density, share = _share(layer, arch, op, capacity)
            ranks = _whole(ranks)
            shapes = _rank_shapes(ranks, name, [x[li] for x in extents[name]])
            bits[li, op] = fiber_bits(ranks, shapes, word_bits[li, op], density, share)
    return bits


def _rank_shapes(
    ranks: tuple[Rank, ...], tensor: str, coords: list[FloatArray]
) -> list[FloatArray]:
    """Each rank's coordinates a fiber: the product of the extents of the tensor's
    coordinates it names (the rank that names none: the rest)."""
    owner: dict[int, int] = {}
    for r, rank in enumerate(ranks):
        for dim in rank.dims:
            owner[next(i for i, c in enumerate(COORDINATES[tensor]) if dim in c)] = r
    rest = next((r for r, rank in enumerate(ranks) if not rank.dims), 0)
    shapes = [np.ones_like(coords[0]) for _ in ranks]
    for i, extent in enumerate(coords):
        r = owner.get(i, rest)
        shapes[r] = shapes[r] * extent
    return shapes


def _whole(ranks: tuple[Rank, ...]) -> tuple[Rank, ...]:
    """``ranks`` with an uncompressed outermost rank for the coordinates none names, when
    every rank names its own (Sparseloop's implicit outer ranks)."""
    if all(rank.dims for rank in ranks):
        return (Rank(format="uncompressed"), *ranks)
    return ranks


def with_zeros(layer: Layer, arch: Arch, batch: MappingBatch, counts: Counts) -> Counts:
    """``counts`` (the dense analysis of ``batch``) as the sparse design makes them (see the
    module docstring); the same object when nothing is sparse."""
    if not is_sparse(layer, arch):
        return counts
    if _trees(arch):
        extents = _coordinate_extents(layer, batch)
        bits = tile_bits(layer, arch, extents)
        cap = tile_bits(layer, arch, extents, capacity=True)
    else:  # every format of one rank: the same bits per word in every tile
        bits = stored_bits(layer, arch)[:, :, None]
        cap = stored_bits(layer, arch, capacity=True)[:, :, None]
    moved = bits / operand_bits(arch)[:, :, None]
    reads, fills, updates = counts.reads * moved, counts.fills * moved, counts.updates * moved
    kept_bits = (counts.tile_words * batch.keep[:, :, None] * cap).sum(axis=1)
    overflow = kept_bits - tile_capacity_bits(arch)[:, None]
    made = None
    for li, lvl in enumerate(arch.inner_first):
        for name, spec in lvl.sparse.items():
            if spec.action == "none":
                continue
            target = parse_operand(name)
            share = _occupied(layer, batch, counts, li, spec.condition_on)
            actions = (0, 2) if target is Operand.O else (0,)  # reads (and updates) made
            if spec.action == "skipping":
                reads[li, target] *= share
                if target is Operand.O:
                    updates[li, target] *= share
            else:
                if made is None:
                    made = np.ones((*counts.reads.shape[:2], 3, counts.reads.shape[2]))
                for a in actions:
                    made[li, target, a] *= share
    effectual, cycles = _compute(layer, arch, batch, counts)
    return replace(
        counts,
        valid=np.asarray((overflow <= 0).all(axis=0)),
        overflow_bits=overflow,
        reads=reads,
        fills=fills,
        updates=updates,
        fanout_words=counts.fanout_words * moved,
        made=made,
        effectual_macs=effectual,
        compute_cycles=cycles,
    )


def _occupied(
    layer: Layer,
    batch: MappingBatch,
    counts: Counts,
    li: int,
    tensors: tuple[str, ...],
) -> FloatArray:
    """float[batch]: the share of level ``li``'s accesses whose ``tensors`` each hold a
    non-zero in the tile that meets them: the tile at the nearest level inside ``li``
    keeping the tensor (one word when none does)."""
    share = np.ones(counts.reads.shape[2])
    for name in tensors:
        op = parse_operand(name)
        inside = [lj for lj in range(li - 1, -1, -1) if batch.keep[lj, op]]
        words = counts.tile_words[inside[0], op] if inside else np.ones_like(share)
        share = share * layer.densities.of(op).occupied(words)
    return share


def effectual_share(layer: Layer, arch: Arch) -> float:
    """The share of ``layer``'s MACs the design's MACs do: 1, or, when they gate or skip
    zeros, the share whose ``operands`` are all non-zero (``Densities.effectual``)."""
    zeros = arch.compute.zeros
    if zeros.action == "none":
        return 1.0
    on = tuple(parse_operand(name) for name in zeros.operands)
    return layer.densities.effectual(on, {op: layer.operand_size(op) for op in on})


def _compute(
    layer: Layer, arch: Arch, batch: MappingBatch, counts: Counts
) -> tuple[FloatArray | None, FloatArray]:
    """The effectual MACs (None: every MAC is done) and the compute cycles under the MACs'
    ``zeros`` (see the module docstring)."""
    zeros = arch.compute.zeros
    if zeros.action == "none":
        return None, counts.compute_cycles
    on = tuple(parse_operand(name) for name in zeros.operands)
    p = effectual_share(layer, arch)
    effectual = np.full(counts.compute_cycles.shape, counts.macs * p)
    if zeros.action == "gating" or p >= 1.0:
        return effectual, counts.compute_cycles
    # operands the innermost level keeping them holds compressed reach the MACs as their
    # non-zeros alone, packed onto the lanes (a sparse tensor core's): their zeros take no
    # step, but a tile's non-zeros fill whole steps of the lanes they spread over
    fed, packed = 1.0, np.ones(counts.compute_cycles.shape)
    looped = (batch.factors_t[0] * batch.spatial_x[0] * batch.spatial_y[0]) > 1  # [dim, batch]
    used = np.zeros_like(looped)
    for op in on:
        inner = next((lvl for lvl in arch.inner_first if OPERANDS[op] in lvl.keeps), None)
        spec = None if inner is None else inner.sparse.get(OPERANDS[op])
        if spec is None or not spec.compressed:
            continue
        density = layer.densities.of(op)
        share = density.expected(layer.operand_size(op))
        fed *= share
        dims = sorted(int(d) for d in RELEVANT[op])
        mine = np.zeros_like(looped)
        mine[dims] = looped[dims]
        # where another packed operand's loops are its own too: its density alone
        shared = (mine & used).any(axis=0)
        packed = packed * np.where(shared, share, _packed_steps(batch, dims, density, share))
        used |= mine
    rest = p / fed  # a lane's chance that its other operands are non-zero
    spatial = (batch.spatial_x * batch.spatial_y).prod(axis=1).astype(float)  # [level, batch]
    temporal = batch.factors_t.prod(axis=1).astype(float)  # [level, batch]
    step = 1.0 - (1.0 - rest) ** spatial[0]  # the lanes below the innermost fan-out, together
    cycles = counts.compute_cycles * packed * step
    spread = spatial[1:] > 1  # [level above 0, batch]: fan-outs of independent instances
    if spread.any():
        nl = spatial.shape[0]
        top = np.where(spread.any(axis=0), nl - 1 - np.argmax(spread[::-1], axis=0), 0)
        below = np.arange(nl)[:, None] < top[None, :]  # levels whose loops each instance runs
        steps = np.where(below, temporal, 1.0).prod(axis=0) * packed  # each one's, between syncs
        level = np.arange(nl)[:, None]
        instances = np.where((level >= 1) & (level <= top), spatial, 1.0).prod(axis=0)
        syncs = counts.compute_cycles * packed / steps
        mean = steps * step
        slowest = mean + _expected_max(instances) * np.sqrt(mean * (1.0 - step))
        cycles = np.where(top > 0, syncs * np.minimum(steps, slowest), cycles)
    # whole cycles, the sums' rounding (a part in 1e12) not taken for a cycle more
    return effectual, np.maximum(np.ceil(cycles * (1 - 1e-9)), 1.0)


def _packed_steps(
    batch: MappingBatch, dims: list[int], density: Density, share: float
) -> FloatArray:
    """float[batch]: the share of the innermost level's steps over ``dims`` (an operand's
    loops) left when the operand's non-zeros are packed onto the lanes those dims spread
    over: a tile of ``n`` words (its extent along ``dims`` at the innermost level, lanes
    included) on ``lanes`` lanes takes ceil(non-zeros / lanes) steps, not n / lanes; its
    non-zeros binomial(n, density) for a uniform or measured tensor, exactly n x density
    for a structured one."""
    lanes = (batch.spatial_x[0, dims] * batch.spatial_y[0, dims]).prod(axis=0).astype(int)
    steps = batch.factors_t[0, dims].prod(axis=0).astype(int)
    keys, where = np.unique(steps.astype(np.int64) << 32 | lanes, return_inverse=True)
    structured = density.distribution == "structured"
    table = np.empty(keys.size)
    for i, key in enumerate(keys.tolist()):
        n, m = key >> 32, key & 0xFFFFFFFF
        table[i] = _ceil_steps(n * m, m, structured, share) / n  # of its n steps dense
    out: FloatArray = table[where.ravel()]
    return out


@cache
def _ceil_steps(words: int, lanes: int, structured: bool, share: float) -> float:
    """E[ceil(non-zeros / lanes)] over a tile of ``words`` words (see ``_packed_steps``)."""
    if structured:
        return float(math.ceil(math.ceil(words * share - 1e-9) / lanes))
    if lanes == 1:  # E[X] itself
        return words * share
    k = np.arange(words + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, words + 1)))])
    p = min(max(share, 1e-12), 1.0 - 1e-12)
    log_pmf = log_fact[-1] - log_fact - log_fact[::-1] + k * math.log(p)
    log_pmf += (words - k) * math.log1p(-p)
    return float((np.exp(log_pmf) * np.ceil(k / lanes)).sum())


def _expected_max(instances: FloatArray) -> FloatArray:
    """Blom's approximation of the expected maximum of ``instances`` standard normals."""
    values, where = np.unique(instances, return_inverse=True)
    table = np.array([_blom(int(n)) for n in values])
    return table[where].reshape(instances.shape)


@cache
def _blom(n: int) -> float:
    if n <= 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def without_each(arch: Arch) -> dict[str, Arch]:
    """``arch`` without each way it handles zeros it has, by name: ``compute`` (the MACs'
    gating or skipping), ``accesses`` (the levels' gating and skipping), ``formats`` (the
    levels' compressed formats); what a record says each saves."""
    out: dict[str, Arch] = {}
    if arch.compute.zeros.action != "none":
        data = arch.model_dump()
        data["compute"]["zeros"] = ComputeZeros().model_dump()
        out["compute"] = Arch.model_validate(data)
    drops: dict[str, dict[str, object]] = {
        "accesses": {"action": "none", "condition_on": ()},
        "formats": {"format": "uncompressed", "metadata_bits": None, "ranks": ()},
    }
    for feature, drop in drops.items():
        data = arch.model_dump()
        changed = False
        for lvl in data["levels"]:
            for spec in lvl["sparse"].values():
                changed |= any(spec[k] != v for k, v in drop.items())
                spec.update(drop)
        if changed:
            out[feature] = Arch.model_validate(data)
    return out
