"""Access counts of a batch of mappings: the analytical model (README, "The model"), vectorised.

Everything is per instance of a storage level unless the name says ``total``. Conventions
follow Timeloop (NVlabs/timeloop, ``src/loop-analysis``) so that results can be compared:

* Tiles. The tile of an operand at level ``l`` spans every loop at or below ``l``'s
  temporal loops, including the spatial loops that fan out below ``l``.
* Fills. Walking the temporal loops above ``l`` (innermost first), every iteration moves the
  tile; the words not already held are filled from the parent. Loops that do not index the
  operand and sit inside every loop that does leave the tile in place (stationarity). For
  inputs a move along one sliding-window axis that overlaps the previous tile fetches only the
  new part; as in Timeloop, a move against the direction of the previous move (a loop wrapping
  back) refetches the whole tile, and a move along two axes at once refetches it too.
* Outputs. Each level drains its partial sums to the parent (``updates``) every time its
  tile changes; when a tile comes back the parent first sends the partial sums back (a
  ``fill`` of the child, a ``read`` of the parent). The first touch of an output reads
  nothing (the partition of outputs an instance ever sees is never read back).
* Spatial. Children of one fan-out that need identical data are served by one parent read
  (multicast); children holding partial sums of the same outputs are reduced on the way up.
  Along a sliding axis, two children whose windows start at the same place count once.
* Fan-outs. For every fan-out and operand the analysis counts the words that cross it and
  how many children each serves: weights and inputs go down, one word to a group of
  children that need it (the multicast degree); partial sums go up and are merged across the
  children that share outputs (the reduction degree), and read-backs go down to one child.
  The evaluator prices these words by the fan-out's network and floorplan.
* MACs read their operands every cycle (no reuse inside the MAC).

Imperfect factors (products larger than the layer) are evaluated on the padded loop nest:
cycles count the padded iterations; access counts are scaled by the real/padded size of the
operand (for inputs, the larger of the window-box and per-dimension ratios, so that gap words
of a strided window never push a count below what the real layer reads), and MAC operand
reads by real/padded MACs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

import numpy as np

from magnet.arch.spec import Arch
from magnet.mapping.mapping import MappingBatch
from magnet.workload.dims import NUM_DIMS, RELEVANT, Dim, Operand
from magnet.workload.layer import GemmView, Layer, operand_words

W_, I_, O_ = Operand.W, Operand.I, Operand.O
N_, G_, K_, C_, P_, Q_, R_, S_ = (int(d) for d in Dim)
# Dimensions that index an operand along one axis only (no sliding window).
_SINGLE_AXIS = {
    W_: sorted(int(d) for d in RELEVANT[W_]),
    I_: [N_, G_, C_],
    O_: sorted(int(d) for d in RELEVANT[O_]),
}


@dataclass
class Counts:
    """Access counts of a batch. Arrays put the batch LAST: ``[level, operand, batch]``.

    Level 0 is the innermost storage level; counts are per instance of the level.
    """

    valid: np.ndarray  # bool[batch]
    overflow_bits: np.ndarray  # [level, batch]: data kept minus capacity (> 0: overflow)
    tile_words: np.ndarray  # [level, operand, batch]: tile per instance (clipped to layer)
    reads: np.ndarray  # [level, operand, batch]
    fills: np.ndarray  # [level, operand, batch]
    updates: np.ndarray  # [level, operand, batch]
    instances: np.ndarray  # [level, batch]: instances holding data
    mac_instances: np.ndarray  # [batch]: MAC units doing work
    compute_cycles: np.ndarray  # [batch]: temporal iterations (padded)
    fanout_words: np.ndarray  # [level, operand, batch]: distinct words crossing the fan-out
    # below a level, all its instances together (outputs: after the reduction there)
    fanout_degree: np.ndarray  # [level, operand, batch]: children per word (multicast or
    # reduction degree, >= 1)
    readback_words: np.ndarray  # [level, batch]: partial sums sent back down (to one child)
    macs: int  # real MACs of the layer
    padded_macs: np.ndarray  # [batch]

    def take(self, index: list[int] | np.ndarray) -> Counts:
        """The counts of the mappings at ``index`` (a batch of them)."""
        return take_batch(self, index, keep=("macs",))


def take_batch(obj, index, keep: tuple[str, ...]):
    """A copy of a dataclass of batch-last arrays restricted to ``index``; fields named in
    ``keep`` are not per mapping; nested dataclasses with ``take`` are taken too."""
    changes = {}
    for f in fields(obj):
        if f.name in keep:
            continue
        value = getattr(obj, f.name)
        changes[f.name] = (
            value.take(index)
            if hasattr(value, "take") and not isinstance(value, np.ndarray)
            else value[..., index]
        )
    return replace(obj, **changes)


def operand_bits(arch: Arch) -> np.ndarray:
    """float[level, operand]: bits of a word of each operand at each level (innermost first)."""
    return np.array(
        [[lvl.bits(Operand(o)) for o in range(3)] for lvl in arch.inner_first], dtype=float
    )


def tile_capacity_bits(arch: Arch) -> np.ndarray:
    """float[level]: the bits the tiles kept at each level may take (innermost first); inf
    when unbounded, or when the level streams (its capacity does not limit the tiles)."""
    return np.array(
        [
            np.inf if lvl.capacity_bits is None or lvl.streaming else lvl.capacity_bits
            for lvl in arch.inner_first
        ]
    )


class _Dims:
    """Compact indices of the dimensions a batch uses (layer extent > 1 or a factor > 1)."""

    def __init__(self, layer: Layer, batch: MappingBatch):
        used = np.array(layer.dims) > 1
        for arr in (batch.factors_t, batch.spatial_x, batch.spatial_y):
            used |= arr.max(axis=(0, 2)) > 1
        self.used = used
        self.index = np.full(NUM_DIMS, -1)
        self.index[used] = np.arange(int(used.sum()))
        self.count = int(used.sum())

    def of(self, dims) -> list[int]:
        return [int(self.index[d]) for d in dims if self.index[d] >= 0]

    def take(self, x: np.ndarray, d: int) -> np.ndarray | float:
        """``x[..., d, :]`` (dims on axis -2), or 1 when the dimension is unused."""
        i = self.index[d]
        return x[..., i, :] if i >= 0 else 1.0


def _prod(x: np.ndarray, idx: list[int]) -> np.ndarray:
    """Product over the listed dims (axis -2) of ``x[..., dim, batch]``."""
    if not idx:
        return np.ones(x.shape[:-2] + x.shape[-1:])
    out = x[..., idx[0], :].astype(np.float64)
    for i in idx[1:]:
        out *= x[..., i, :]
    return out


def _window(dims: _Dims, e: np.ndarray, pos: int, win: int, stride: int, dil: int):
    return stride * (dims.take(e, pos) - 1) + dil * (dims.take(e, win) - 1) + 1


def _tiles(dims: _Dims, extent: np.ndarray, layer: Layer) -> np.ndarray:
    """Tile sizes (words): extents ``[..., dim, batch]`` -> ``[..., operand, batch]``."""
    shape = extent.shape[:-2] + extent.shape[-1:]
    words = operand_words(layer, lambda d: dims.take(extent, int(d)), axis=-2, shape=shape)
    return np.asarray(words, dtype=np.float64)


def _distinct_starts(n: np.ndarray, m: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many distinct values ``a*i + b*j`` take for ``i < n``, ``j < m`` (a, b > 0).

    With g = gcd(a, b), pairs (i, j) and (i + b/g, j - a/g) coincide; counting the first
    pair of every such chain gives n*m - max(0, n - b/g) * max(0, m - a/g).
    """
    out = n * m
    both = (n > 1) & (m > 1)
    if both.any():
        n, m, a, b = (np.broadcast_to(x, both.shape)[both] for x in (n, m, a, b))
        g = np.gcd(a.astype(np.int64), b.astype(np.int64))
        out = out.copy()
        out[both] -= np.maximum(0, n - b // g) * np.maximum(0, m - a // g)
    return out


def _distinct_positions(n: int, m: int, a: int, b: int) -> int:
    """How many distinct values ``a*i + b*j`` take for ``i < n``, ``j < m`` (scalars; see
    ``_distinct_starts``): the input columns a layer's windows touch."""
    g = math.gcd(a, b)
    return n * m - max(0, n - b // g) * max(0, m - a // g)


def _above(x: np.ndarray) -> np.ndarray:
    """``out[l] = prod(x[m] for m > l)`` over the first axis."""
    out = np.ones_like(x)
    for li in range(len(x) - 2, -1, -1):
        out[li] = out[li + 1] * x[li + 1]
    return out


def analyze(layer: Layer, arch: Arch, batch: MappingBatch) -> Counts:
    """Access counts for every mapping of ``batch`` (see the module docstring)."""
    dims = _Dims(layer, batch)
    keep = batch.keep
    nl, _, nb = batch.factors_t.shape
    used = dims.used
    # Factors and extents are small integers: float32 holds them exactly and halves the memory
    # traffic; products of many factors are taken in float64.
    t = batch.factors_t[:, used].astype(np.float32)  # [l, d, b]
    s = (batch.spatial_x[:, used] * batch.spatial_y[:, used]).astype(np.float32)
    rank = batch.rank[:, used].astype(np.int8)
    ts = t * s
    extent = ts.copy()  # [l, d, b]: extent of each dim in the tile at level l
    for li in range(1, nl):
        extent[li] *= extent[li - 1]
    padded = extent[-1]  # [d, b]
    real = np.array(layer.dims, dtype=np.float64)[dims.used][:, None]
    tiles = _tiles(dims, extent, layer)  # [l, operand, b], padded
    perfect = bool((padded == real).all())
    tiles_clipped = tiles if perfect else _tiles(dims, np.minimum(extent, real), layer)

    # ---- capacity ---------------------------------------------------------------------
    bits = operand_bits(arch)
    cap = tile_capacity_bits(arch)
    overflow = (tiles_clipped * (keep * bits)[:, :, None]).sum(axis=1) - cap[:, None]
    valid = (overflow <= 0).all(axis=0)

    # ---- temporal loops ----------------------------------------------------------------
    act = t > 1
    level_prod = t.prod(axis=1, dtype=np.float64)  # [l, b]
    above = _above(level_prod)  # product of all temporal loops of levels > l
    iterations = above[0] * level_prod[0]

    real_sizes = np.array([layer.operand_size(op) for op in Operand], dtype=float)
    ratio = real_sizes[:, None] / _tiles(dims, padded, layer)  # [operand, b]
    # Inputs: the padded window box can hold gap words no MAC reads (stride > window), so take
    # the larger of the box ratio and the per-dimension ratio: never below the real need.
    ratio[I_] = np.maximum(ratio[I_], _prod(real / padded, dims.of(RELEVANT[I_])))
    padded_macs = padded.prod(axis=0, dtype=np.float64)
    mac_ratio = layer.macs / padded_macs

    # ---- instances, partitions and distinct children of each fan-out ---------------------
    s_level = s.prod(axis=1, dtype=np.float64)  # [l, b]
    instances = _above(s_level)
    mac_instances = instances[0] * s_level[0]
    out_idx = dims.of(_SINGLE_AXIS[O_])
    s_out = _prod(s, out_idx)
    out_total = _prod(padded, out_idx)
    above_out = _above(s_out)
    partition_out = out_total / above_out  # outputs an instance of level l ever touches
    partition_out_mac = out_total / (above_out[0] * s_out[0])

    distinct = np.empty((nl, 3, nb))
    for op in Operand:
        distinct[:, op] = _prod(s, dims.of(_SINGLE_AXIS[op]))
    below_s = extent / ts
    for pos, win, stride, dil in (
        (P_, R_, layer.wstride, layer.wdilation),
        (Q_, S_, layer.hstride, layer.hdilation),
    ):
        if dims.index[pos] >= 0 and dims.index[win] >= 0:
            distinct[:, I_] *= _distinct_starts(
                dims.take(s, pos),
                dims.take(s, win),
                stride * dims.take(below_s, pos),
                dil * dims.take(below_s, win),
            )
        else:
            distinct[:, I_] *= dims.take(s, pos) * dims.take(s, win)

    sliding = (layer.R > 1 or layer.S > 1) and bool(keep[:, I_].any())
    big = NUM_DIMS + 1

    t_minus_1 = t - 1
    rank_if_active = rank + (~act) * np.int8(big)  # inactive loops never stop a stationary run

    weights: dict[int, np.ndarray] = {}  # level -> times each of its loops advances

    def deltas(op: Operand) -> np.ndarray:
        """[l, b]: words moved into each level's tile over the run (first fill included)."""
        relevant = dims.of(RELEVANT[op])
        if relevant:
            first = rank_if_active[:, relevant].min(axis=1)  # innermost relevant loop per level
        else:
            first = np.full((nl, nb), big, dtype=np.int8)
        # product of the loops from the innermost relevant one outwards, and all levels above
        outer = (1 + (rank >= first[:, None]) * t_minus_1).prod(axis=1, dtype=np.float64) * above
        mult = np.ones((nl, nb))
        for li in range(nl - 2, -1, -1):
            has = first[li + 1] < big
            mult[li] = mult[li + 1] + has * (outer[li + 1] - mult[li + 1])
        out = tiles[:, op] * mult
        if op is I_ and sliding:
            for li in range(nl - 1):
                if keep[li, I_]:
                    out[li] = _input_deltas(
                        dims,
                        layer,
                        li,
                        tiles[li, I_],
                        extent,
                        t,
                        rank,
                        rank_if_active,
                        above,
                        weights,
                    )
        return out

    reads = np.zeros((nl, 3, nb))
    fills = np.zeros((nl, 3, nb))
    updates = np.zeros((nl, 3, nb))
    fan_words = np.zeros((nl, 3, nb))
    readback = np.zeros((nl, nb))
    # children of one instance per distinct datum: the multicast (W, I) or reduction (O)
    # degree of each fan-out
    degree = np.maximum(1.0, s_level[:, None, :] / np.maximum(distinct, 1.0))
    for op in Operand:
        keepers = [li for li in range(nl) if keep[li, op]]
        if not keepers:
            continue
        padded_delta = deltas(op)
        delta_all = padded_delta * ratio[op]
        child = -1
        child_delta = iterations * mac_ratio
        child_part = partition_out_mac * ratio[O_]
        for li in keepers:
            # words leaving one instance of each level between the child and this parent:
            # what each child receives, times the distinct data sets below that level
            served = np.ones(nb)
            for j in range(child + 1, li + 1):
                served = served * distinct[j, op]
                fan_words[j, op] += child_delta * served * instances[j]
                if op is O_:
                    readback[j] += (child_delta - child_part) * served * instances[j]
            if op is O_:
                updates[li, op] = child_delta * served
                reads[li, op] = (child_delta - child_part) * served
            else:
                reads[li, op] = child_delta * served
            delta = delta_all[li]
            part = partition_out[li] * ratio[O_]
            if li != keepers[-1]:
                fills[li, op] = delta - part if op is O_ else delta
            child, child_delta, child_part = li, delta, part

    # Padding can spread one real word over padded children (a multicast of a word no padded
    # child needs, a reduction of padded partial sums): the scaled counts then fall below one
    # move per real word. No keeper moves less than the words the layer really uses.
    if not perfect:
        real_words = [
            layer.operand_size(W_),
            layer.N
            * layer.G
            * layer.C
            * _distinct_positions(layer.P, layer.R, layer.wstride, layer.wdilation)
            * _distinct_positions(layer.Q, layer.S, layer.hstride, layer.hdilation),
            layer.operand_size(O_),
        ]
        for op in Operand:
            keepers = [li for li in range(nl) if keep[li, op]]
            for li in keepers:
                floor = real_words[op] / instances[li]
                moved = updates if op is O_ else reads
                moved[li, op] = np.maximum(moved[li, op], floor)
                if op is not O_ and li != keepers[-1]:
                    fills[li, op] = np.maximum(fills[li, op], floor)

    if isinstance(layer, GemmView):
        _im2col_on_chip(layer, arch, keep, reads, fills)

    return Counts(
        valid=valid,
        overflow_bits=overflow,
        tile_words=tiles_clipped,
        reads=reads,
        fills=fills,
        updates=updates,
        instances=instances,
        mac_instances=mac_instances,
        compute_cycles=iterations,
        fanout_words=fan_words,
        fanout_degree=degree,
        readback_words=readback,
        macs=layer.macs,
        padded_macs=padded_macs,
    )


def _im2col_on_chip(
    layer: GemmView, arch: Arch, keep: np.ndarray, reads: np.ndarray, fills: np.ndarray
) -> None:
    """im2col is served on chip: DRAM holds the input tensor, not the im2col matrix.

    The GEMM view counts inputs as im2col words (each input word repeated up to R*S times),
    which is right for the on-chip reads (SCALE-Sim's SRAM IFMAP reads) but not for DRAM,
    which sends the tensor's words to the SRAM it fills; that SRAM (its address generator)
    expands them (a mapping that bypasses the SRAM, DRAM feeding registers, has no such
    buffer: DRAM then sends the im2col words). So a DRAM level's input reads, and the fills
    of the SRAM below it, are the view's counts times tensor words / im2col words: a layer
    read once reads exactly its input tensor, as SCALE-Sim's DRAM IFMAP reads count it. When
    DRAM loops split the output pixels, the rows a tile's windows share with its neighbour's
    (the halo) are not counted again: an approximation of at most (S - 1) input rows per tile.
    """
    tensor, im2col = layer.input_tensor_words, max(layer.input_tensor_words, layer.operand_size(I_))
    keepers = [li for li in range(len(arch.levels)) if keep[li, I_]]
    for li in keepers:
        below = [k for k in keepers if k < li]
        if not arch.inner_first[li].is_dram or not below:
            continue
        if not arch.inner_first[below[-1]].is_sram:
            continue  # no buffer to expand it: DRAM sends the im2col words themselves
        reads[li, I_] = reads[li, I_] * tensor / im2col
        fills[below[-1], I_] = fills[below[-1], I_] * tensor / im2col


def _input_deltas(
    dims: _Dims,
    layer: Layer,
    li: int,
    tile: np.ndarray,
    extent: np.ndarray,
    t: np.ndarray,
    rank: np.ndarray,
    rank_if_active: np.ndarray,
    above: np.ndarray,
    weights: dict[int, np.ndarray],
) -> np.ndarray:
    """Fills of the input tile of level ``li`` with sliding-window reuse.

    Every temporal loop above the level is a kind of transition: it advances while the loops
    inside it wrap back, so the tile moves by ``step - sum(inner wraps)`` along each window
    axis (``step`` = extent of the loop's dim inside it). No move is free; a move along one
    window axis by less than the tile fetches only the new part; any other move refills the
    tile. As in Timeloop, the first loop that moves sets a direction, and a later partial move
    in another direction refills fully. Loop j advances ``(f_j - 1) * prod(loops outside j)``
    times. Arrays are ``[dim, batch]`` for the loops of one level (masks as arithmetic:
    ``np.where`` is slow on these shapes).
    """
    nb = tile.shape[0]
    axes = (  # ([(dim, coefficient)], extent of the tile along the axis)
        (
            [(P_, layer.wstride), (R_, layer.wdilation)],
            _window(dims, extent[li], P_, R_, layer.wstride, layer.wdilation),
        ),
        (
            [(Q_, layer.hstride), (S_, layer.hdilation)],
            _window(dims, extent[li], Q_, S_, layer.hstride, layer.hdilation),
        ),
    )
    hard_dims = dims.of((N_, G_, C_))
    wrapped = [np.zeros(nb, np.float32), np.zeros(nb, np.float32)]  # wraps of levels li < . < m
    hard_below = np.zeros(nb, dtype=bool)
    g0 = np.zeros(nb, dtype=np.int8)
    found = np.zeros(nb, dtype=bool)
    per_level = []
    for m in range(li + 1, len(t)):
        f, r, ra = t[m], rank[m], rank_if_active[m]
        step = extent[m] / f  # float32: window positions stay far below 2**24
        moves = []
        for k, (terms, _ext) in enumerate(axes):
            d_move = np.broadcast_to(-wrapped[k], f.shape).copy()
            for dim, coef in terms:
                i = dims.index[dim]
                if i < 0:
                    continue
                wrap = coef * (f[i] - 1) * step[i]
                d_move -= (r[i] < r) * wrap
                d_move[i] += coef * step[i]
                wrapped[k] = wrapped[k] + wrap
            moves.append(d_move)
        n_moved = np.broadcast_to(hard_below, f.shape).astype(np.int8)
        hard = np.zeros(f.shape, dtype=bool)
        for i in hard_dims:
            hard |= ra[i] <= r  # an active N, G or C loop at or inside this loop
            hard_below = hard_below | (f[i] > 1)
        n_moved = n_moved | hard
        moved = [mv != 0 for mv in moves]
        n_moved = n_moved + moved[0] + moved[1]
        single = n_moved == 1
        abs_w, abs_h = np.abs(moves[0]), np.abs(moves[1])
        part_w = single & moved[0] & (abs_w < axes[0][1])
        part_h = single & moved[1] & (abs_h < axes[1][1])
        grad = part_w * (1 + (moves[0] < 0)).astype(np.int8)
        grad += part_h * (3 + (moves[1] < 0)).astype(np.int8)
        innermost = ra.min(axis=0)
        now = ~found & (innermost <= NUM_DIMS)
        g_here = ((ra == innermost) * grad).sum(axis=0).astype(np.int8)
        g0 = g0 + now * (g_here - g0)
        found |= now
        if m not in weights:
            inside = (1 + (r[None, :, :] <= r[:, None, :]) * (f - 1)[None, :, :]).prod(
                axis=1, dtype=np.float64
            )
            weights[m] = (f - 1) * (f.prod(axis=0, dtype=np.float64) / inside) * above[m]
        weight = weights[m]
        # new words = move x (tile / extent along the axis); the quotient is a whole number
        new_words = (part_w * abs_w) * (tile / axes[0][1]) + (part_h * abs_h) * (tile / axes[1][1])
        per_level.append((weight, grad, part_w | part_h, new_words, n_moved > 0))
    total = tile.copy()
    for weight, grad, partial, new_words, moved_any in per_level:
        partial = partial & ((g0 == 0) | (grad == g0))
        per_move = partial * new_words + (moved_any & ~partial) * tile
        total += (weight * per_move).sum(axis=0)
    return total
