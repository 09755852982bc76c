"""Access counts of a batch of mappings: the analytical model of DESIGN.md, vectorised.

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
* MACs read their operands every cycle (no reuse inside the MAC).

Imperfect factors (products larger than the layer) are evaluated on the padded loop nest:
cycles count the padded iterations; access counts are scaled by real/padded size of the
operand, and MAC operand reads by real/padded MACs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from magnet.arch.spec import Arch
from magnet.mapping.mapping import MappingBatch
from magnet.workload.dims import NUM_DIMS, RELEVANT, Dim, Operand
from magnet.workload.layer import Layer

W_, I_, O_ = Operand.W, Operand.I, Operand.O
N_, G_, K_, C_, P_, Q_, R_, S_ = (int(d) for d in Dim)
# Dimensions that index an operand along one axis only (no sliding window).
_SINGLE_AXIS = {
    W_: sorted(int(d) for d in RELEVANT[W_]),
    I_: [N_, G_, C_],
    O_: sorted(int(d) for d in RELEVANT[O_]),
}
_RELEVANT_MASK = np.zeros((3, NUM_DIMS), dtype=bool)
for _op, _dims in RELEVANT.items():
    for _d in _dims:
        _RELEVANT_MASK[_op, int(_d)] = True


@dataclass
class Counts:
    """Access counts of a batch (arrays over ``batch``; level 0 = innermost storage level)."""

    valid: np.ndarray  # bool[batch]
    overflow_bits: np.ndarray  # float[batch, level]: data kept minus capacity (> 0: overflow)
    tile_words: np.ndarray  # float[batch, level, operand]: tile per instance (clipped to layer)
    reads: np.ndarray  # float[batch, level, operand], per instance
    fills: np.ndarray  # float[batch, level, operand], per instance
    updates: np.ndarray  # float[batch, level, operand], per instance
    instances: np.ndarray  # float[batch, level]: instances holding data
    mac_instances: np.ndarray  # float[batch]: MAC units doing work
    compute_cycles: np.ndarray  # float[batch]: temporal iterations (padded)
    network_words: np.ndarray  # float[batch, level]: words crossing the fan-out below a level
    network_hops: np.ndarray  # float[batch, level]: mean hops of a word in that fan-out
    macs: int  # real MACs of the layer
    padded_macs: np.ndarray  # float[batch]


def _tiles(extent: np.ndarray, layer: Layer) -> np.ndarray:
    """Operand tile sizes (words) from per-dim extents ``[..., dim]`` -> ``[..., operand]``."""
    e = extent.astype(np.float64)
    width = layer.wstride * (e[..., P_] - 1) + layer.wdilation * (e[..., R_] - 1) + 1
    height = layer.hstride * (e[..., Q_] - 1) + layer.hdilation * (e[..., S_] - 1) + 1
    out = np.empty((*e.shape[:-1], 3))
    out[..., W_] = e[..., G_] * e[..., K_] * e[..., C_] * e[..., R_] * e[..., S_]
    out[..., I_] = e[..., N_] * e[..., G_] * e[..., C_] * width * height
    out[..., O_] = e[..., N_] * e[..., G_] * e[..., K_] * e[..., P_] * e[..., Q_]
    return out


def _distinct_starts(n: np.ndarray, m: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many distinct values ``a*i + b*j`` take for ``i < n``, ``j < m`` (a, b > 0).

    With g = gcd(a, b), pairs (i, j) and (i + b/g, j - a/g) coincide; counting the first
    pair of every such chain gives n*m - max(0, n - b/g) * max(0, m - a/g).
    """
    g = np.gcd(a, b)
    a1, b1 = a // g, b // g
    return n * m - np.maximum(0, n - b1) * np.maximum(0, m - a1)


def analyze(layer: Layer, arch: Arch, batch: MappingBatch) -> Counts:
    """Access counts for every mapping of ``batch`` (see the module docstring)."""
    t = batch.factors_t
    s = batch.spatial_x * batch.spatial_y
    nb, nl, nd = t.shape
    keep = batch.keep
    ts = t * s
    extent = np.cumprod(ts, axis=1)  # [b, l, d] extent of each dim in the tile at level l
    below_t = extent // t  # extent inside level l's temporal loops (spatial of l included)
    below_s = below_t // s  # extent inside level l's spatial loops (= tile of level l-1)
    padded = extent[:, -1, :]  # [b, d]
    real = np.array(layer.dims, dtype=np.int64)

    tiles = _tiles(extent, layer)  # padded
    tiles_clipped = _tiles(np.minimum(extent, real), layer)

    # ---- capacity ---------------------------------------------------------------------
    levels = arch.inner_first
    bits = np.array([[lvl.bits(Operand(o)) for o in range(3)] for lvl in levels], dtype=float)
    need_bits = (tiles_clipped * keep * bits).sum(axis=2)  # [b, l]
    cap = np.array(
        [np.inf if lvl.capacity_bits is None else lvl.capacity_bits for lvl in levels]
    )
    overflow = need_bits - cap
    valid = (overflow <= 0).all(axis=1)

    # ---- the temporal loop list, innermost loop first --------------------------------------
    order = batch.order
    nj = nl * nd
    f_loop = np.take_along_axis(t, order, axis=2).reshape(nb, nj)
    dim_loop = order.reshape(nb, nj)
    step_loop = np.take_along_axis(below_t, order, axis=2).reshape(nb, nj)
    suffix = np.ones((nb, nj + 1))
    suffix[:, :nj] = np.cumprod(f_loop[:, ::-1].astype(np.float64), axis=1)[:, ::-1]
    iterations = suffix[:, 0]
    active = f_loop > 1

    # size ratios for imperfect factorisation (1.0 when every factor divides)
    real_sizes = np.array([layer.operand_size(op) for op in Operand], dtype=float)
    padded_sizes = _tiles(padded[:, None, :], layer)[:, 0, :]  # [b, operand]
    ratio = real_sizes / padded_sizes  # [b, operand]
    padded_macs = padded.prod(axis=1).astype(np.float64)
    mac_ratio = layer.macs / padded_macs

    # outputs each instance ever touches (partition), per level and for one MAC unit
    spatial_above = np.ones((nb, nl, nd), dtype=np.int64)  # product of spatial factors above l
    spatial_above[:, :-1] = np.cumprod(s[:, ::-1], axis=1)[:, ::-1][:, 1:]
    out_dims = _SINGLE_AXIS[O_]
    partition_out = (padded[:, None, out_dims] / spatial_above[..., out_dims]).prod(axis=2)
    partition_out_mac = (padded[:, out_dims] / s.prod(axis=1)[:, out_dims]).prod(axis=1)
    instances = spatial_above.prod(axis=2).astype(np.float64)  # [b, l]
    mac_instances = s.prod(axis=(1, 2)).astype(np.float64)

    # ---- deltas (fills, incl. the first) of each kept tile ---------------------------------
    def next_relevant(op: Operand) -> np.ndarray:
        relevant = _RELEVANT_MASK[op][dim_loop] & active
        idx = np.where(relevant, np.arange(nj), nj)
        nxt = np.full((nb, nj + 1), nj)
        nxt[:, :nj] = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
        return nxt

    sliding = (layer.R > 1 or layer.S > 1) and keep[:, I_].any()

    def deltas(op: Operand, li: int, nxt: np.ndarray) -> np.ndarray:
        start = (li + 1) * nd
        tile = tiles[:, li, op]
        if start >= nj:
            return tile.copy()
        if op is I_ and sliding:
            return _input_deltas(layer, li, start, tile, extent, f_loop, dim_loop, step_loop,
                                 active, suffix)
        return tile * suffix[np.arange(nb), nxt[:, start]]

    def distinct(m: int, op: Operand) -> np.ndarray:
        out = s[:, m, _SINGLE_AXIS[op]].prod(axis=1)
        if op is I_:
            for pos, win, stride, dil in ((P_, R_, layer.wstride, layer.wdilation),
                                          (Q_, S_, layer.hstride, layer.hdilation)):
                out = out * _distinct_starts(
                    s[:, m, pos], s[:, m, win],
                    stride * below_s[:, m, pos], dil * below_s[:, m, win],
                )
        return out.astype(np.float64)

    reads = np.zeros((nb, nl, 3))
    fills = np.zeros((nb, nl, 3))
    updates = np.zeros((nb, nl, 3))
    net_words = np.zeros((nb, nl))
    for op in Operand:
        keepers = [li for li in range(nl) if keep[li, op]]
        if not keepers:
            continue
        nxt = next_relevant(op)
        child = -1
        child_delta = iterations * mac_ratio
        child_part = partition_out_mac * ratio[:, O_]
        child_inst = mac_instances
        for li in keepers:
            served = np.ones(nb)
            for m in range(child + 1, li + 1):
                served = served * distinct(m, op)
            if op is O_:
                updates[:, li, op] = child_delta * served
                reads[:, li, op] = (child_delta - child_part) * served
                moved = 2 * child_delta - child_part
            else:
                reads[:, li, op] = child_delta * served
                moved = child_delta
            net_words[:, child + 1 : li + 1] += (moved * child_inst)[:, None]
            delta = deltas(op, li, nxt) * ratio[:, op]
            if li != keepers[-1]:
                fills[:, li, op] = (
                    delta - partition_out[:, li] * ratio[:, O_] if op is O_ else delta
                )
            child, child_delta, child_inst = li, delta, instances[:, li]
            child_part = partition_out[:, li] * ratio[:, O_]

    ux = batch.spatial_x.prod(axis=2)
    uy = batch.spatial_y.prod(axis=2)
    hops = np.where(ux * uy > 1, (ux + uy) / 2.0, 0.0)

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
        network_words=net_words,
        network_hops=hops,
        macs=layer.macs,
        padded_macs=padded_macs,
    )


def _input_deltas(
    layer: Layer,
    li: int,
    start: int,
    tile: np.ndarray,
    extent: np.ndarray,
    f_loop: np.ndarray,
    dim_loop: np.ndarray,
    step_loop: np.ndarray,
    active: np.ndarray,
    suffix: np.ndarray,
) -> np.ndarray:
    """Fills of an input tile at level ``li`` with sliding-window reuse (see module docstring).

    Each loop above the level is a kind of transition (it advances while the loops inside it
    wrap back). For loop j the tile moves by ``adv_j - sum(inner wraps)`` along each axis; the
    transition is free if the tile does not move, partial if it moves along one window axis by
    less than the tile, and a full refill otherwise. As in Timeloop, the first loop that moves
    sets a direction, and a later partial move in another direction refills fully. The number
    of transitions of loop j is (f_j - 1) * prod(f of loops outside j).
    """
    f = f_loop[:, start:]
    dims = dim_loop[:, start:]
    step = step_loop[:, start:].astype(np.float64)
    act = active[:, start:]

    def move(dim: int) -> np.ndarray:
        is_dim = dims == dim
        wrap = np.where(is_dim, (f - 1) * step, 0.0)
        return np.where(is_dim, step, 0.0) - (np.cumsum(wrap, axis=1) - wrap)

    d_w = layer.wstride * move(P_) + layer.wdilation * move(R_)
    d_h = layer.hstride * move(Q_) + layer.hdilation * move(S_)
    hard = np.cumsum(act & ((dims == N_) | (dims == G_) | (dims == C_)), axis=1) > 0
    moved_w, moved_h = d_w != 0, d_h != 0
    n_moved = moved_w.astype(int) + moved_h + hard
    e = extent[:, li].astype(np.float64)
    ext_w = layer.wstride * (e[:, P_] - 1) + layer.wdilation * (e[:, R_] - 1) + 1
    ext_h = layer.hstride * (e[:, Q_] - 1) + layer.hdilation * (e[:, S_] - 1) + 1
    part_w = (n_moved == 1) & moved_w & (np.abs(d_w) < ext_w[:, None])
    part_h = (n_moved == 1) & moved_h & (np.abs(d_h) < ext_h[:, None])
    grad = np.where(part_w, 1 + (d_w < 0), np.where(part_h, 3 + (d_h < 0), 0))
    first = np.argmax(act, axis=1)
    g0 = np.where(act.any(axis=1), grad[np.arange(len(first)), first], 0)
    rejected = (g0[:, None] != 0) & (grad != 0) & (grad != g0[:, None])
    partial = (part_w | part_h) & ~rejected
    new_words = np.where(
        part_w,
        np.abs(d_w) * (tile / ext_w)[:, None],
        np.abs(d_h) * (tile / ext_h)[:, None],
    )
    full = (n_moved > 0) & ~partial
    per_move = np.where(full, tile[:, None], np.where(partial, new_words, 0.0))
    weight = (f - 1) * suffix[:, start + 1 :]
    return tile + (weight * per_move).sum(axis=1)
