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
* Halos. On a fan-out over chip-to-chip links (the chiplets of a package) that splits the
  output pixels, neighbouring chiplets' input windows overlap: the parent reads every input
  word once and each further copy crosses one link from the neighbour holding it
  (``halo_words``; ``_parent_share`` says when). On-chip fan-outs read each child's window
  from the parent, as Timeloop does.
* MACs read their operands every cycle (no reuse inside the MAC).

Imperfect factors (products larger than the layer) are evaluated on the padded loop nest:
cycles count the padded iterations; access counts are scaled by the real/padded size of the
operand (for inputs, the larger of the window-box and per-dimension ratios, so that gap words
of a strided window never push a count below what the real layer reads), and MAC operand
reads by real/padded MACs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from magnet.arch.spec import Arch
from magnet.mapping import MappingBatch
from magnet.workload.dims import DIMS, NUM_DIMS, RELEVANT, Dim, Operand
from magnet.workload.layer import GemmView, Layer, operand_words

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: Arrays of counts and factors (float64, or float32 where the name says so); the axes are
#: said where each array is made.
FloatArray = npt.NDArray[np.floating[Any]]
IntArray = npt.NDArray[np.integer[Any]]
BoolArray = npt.NDArray[np.bool_]

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

    valid: BoolArray  # bool[batch]
    overflow_bits: FloatArray  # [level, batch]: data kept minus capacity (> 0: overflow)
    tile_words: FloatArray  # [level, operand, batch]: tile per instance (clipped to layer)
    reads: FloatArray  # [level, operand, batch]
    fills: FloatArray  # [level, operand, batch]
    updates: FloatArray  # [level, operand, batch]
    instances: FloatArray  # [level, batch]: instances holding data
    mac_instances: FloatArray  # [batch]: MAC units doing work
    compute_cycles: FloatArray  # [batch]: temporal iterations (padded)
    fanout_words: FloatArray  # [level, operand, batch]: distinct words crossing the fan-out
    # below a level, all its instances together (outputs: after the reduction there)
    fanout_degree: FloatArray  # [level, operand, batch]: children per word (multicast or
    # reduction degree, >= 1)
    readback_words: FloatArray  # [level, batch]: partial sums sent back down (to one child)
    halo_words: FloatArray  # [level, batch]: input words crossing one chip-to-chip link of
    # the fan-out below a level from a neighbouring child (the halo), every copy counted
    macs: int | FloatArray  # real MACs of the layer ([batch]: of a ``LayerStack``'s layers)
    padded_macs: FloatArray  # [batch]
    # zeros (``magnet.model.sparse_counts``; None: dense): the share of each access made, not
    # gated, [level, operand, action (read, fill, update), batch]; the MACs done [batch]
    made: FloatArray | None = None
    effectual_macs: FloatArray | None = None

    def take(self, index: Index) -> Counts:
        """The counts of the mappings at ``index`` (a batch of them)."""
        return take_batch(self, index, keep=("macs",))


_Batched = TypeVar("_Batched", bound="DataclassInstance")


#: Which mappings of a batch to take: their positions, or a run of them.
Index = list[int] | npt.NDArray[np.integer[Any]] | slice


def take_batch(obj: _Batched, index: Index, keep: tuple[str, ...]) -> _Batched:
    """A copy of a dataclass of batch-last arrays restricted to ``index``; fields named in
    ``keep`` are not per mapping; nested dataclasses with ``take`` are taken too."""
    changes: dict[str, Any] = {}
    for f in fields(obj):
        if f.name in keep:
            continue
        value = getattr(obj, f.name)
        if value is None:
            continue
        changes[f.name] = (
            value.take(index)
            if hasattr(value, "take") and not isinstance(value, np.ndarray)
            else value[..., index]
        )
    return replace(obj, **changes)


def operand_bits(arch: Arch) -> npt.NDArray[np.float64]:
    """float[level, operand]: bits of a word of each operand at each level (innermost first)."""
    return np.array(arch.level_operand_bits, dtype=float)


def tile_capacity_bits(arch: Arch) -> npt.NDArray[np.float64]:
    """float[level]: the bits the tiles kept at each level may take (innermost first); inf
    when unbounded, or when the level streams (its capacity does not limit the tiles)."""
    return np.array(
        [
            np.inf if lvl.capacity_bits is None or lvl.streaming else lvl.capacity_bits
            for lvl in arch.inner_first
        ]
    )


class LayerStack:
    """Several layers' mappings priced in one batch (``magnet.model.evaluate.evaluate_batches``):
    what the counts read of a layer, with one value per mapping of the batch (``sizes[i]``
    mappings of ``layers[i]``, in order). Its layers are dense loop nests (no GEMM view),
    alike in the flags the counts branch on (``magnet.model.evaluate.stack_key``), so that
    every mapping is counted as its own layer counts it: ``flags``, the stack's
    ``window_flags``, are its layers' (a ``ValueError`` where they differ).

    Strides and dilations are float32, so that they meet the float32 extents in the type a
    layer's own (Python integers) meet them in; extents, MACs and words are float64.
    Tested: every field of every result the same, to the bit, as each layer's alone."""

    N: FloatArray
    G: FloatArray
    K: FloatArray
    C: FloatArray
    P: FloatArray
    Q: FloatArray
    R: FloatArray
    S: FloatArray
    wstride: FloatArray
    hstride: FloatArray
    wdilation: FloatArray
    hdilation: FloatArray

    def __init__(self, layers: list[Layer], sizes: list[int]) -> None:
        def each(values: Iterable[float], dtype: type = np.float64) -> FloatArray:
            return np.repeat(np.array(list(values), dtype=dtype), sizes)

        for key in ("wstride", "hstride", "wdilation", "hdilation"):
            setattr(self, key, each((getattr(lay, key) for lay in layers), np.float32))
        for d in DIMS:
            setattr(self, d, each(getattr(lay, d) for lay in layers))
        self.dims: FloatArray = np.stack([getattr(self, d) for d in DIMS])  # [dim, b]
        self.macs: FloatArray = each(lay.macs for lay in layers)
        self._sizes = [each(lay.operand_size(op) for lay in layers) for op in Operand]
        real = [_real_words(lay) for lay in layers]
        #: [operand][b]: the words each mapping's layer really uses (``_real_words``)
        self.real_words = [each(words[op] for words in real) for op in Operand]
        flags = {window_flags(lay) for lay in layers}
        if len(flags) != 1:
            raise ValueError(f"layers stacked together slide and overlap alike; got {flags}")
        self.flags: tuple[bool, bool] = flags.pop()

    def operand_size(self, operand: Operand) -> FloatArray:
        """[b]: words of ``operand`` of each mapping's layer (``Layer.operand_size``)."""
        return self._sizes[operand]


#: What the counts read of a layer: a ``Layer``, or a ``LayerStack`` of several.
LayerLike = Layer | LayerStack


def window_flags(layer: Layer) -> tuple[bool, bool]:
    """Whether the layer's windows slide (R or S > 1), and whether they overlap (a window
    wider than its stride along the width or the height): the counts branch on both."""
    overlap = max(layer.wdilation * (layer.R - 1) + 1 - layer.wstride, 0) + max(
        layer.hdilation * (layer.S - 1) + 1 - layer.hstride, 0
    )
    return layer.R > 1 or layer.S > 1, overlap > 0


def _flags(layer: LayerLike) -> tuple[bool, bool]:
    """``window_flags`` of a layer, or of a stack's layers (all alike)."""
    return layer.flags if isinstance(layer, LayerStack) else window_flags(layer)


class _Dims:
    """Compact indices of the dimensions a batch uses (layer extent > 1 or a factor > 1)."""

    def __init__(self, layer: LayerLike, batch: MappingBatch) -> None:
        most = np.maximum(np.maximum(batch.factors_t, batch.spatial_x), batch.spatial_y)
        used = (_extents(layer) > 1).any(axis=1) | (most.max(axis=(0, 2)) > 1)
        self.used: BoolArray = used  # bool[dim]
        self.index: IntArray = np.full(NUM_DIMS, -1)  # [dim]: compact index, -1 unused
        self.index[used] = np.arange(int(used.sum()))
        self.count = int(used.sum())

    def of(self, dims: Iterable[int]) -> list[int]:
        """Compact indices of the listed dimensions that are in use."""
        return [int(self.index[d]) for d in dims if self.index[d] >= 0]

    def take(self, x: FloatArray, d: int) -> FloatArray | float:
        """``x[..., d, :]`` (dims on axis -2), or 1 when the dimension is unused."""
        i = self.index[d]
        return x[..., i, :] if i >= 0 else 1.0

    def take_used(self, x: FloatArray, d: int) -> FloatArray:
        """``x[..., d, :]`` of a dimension in use (``index[d] >= 0``)."""
        return x[..., self.index[d], :]


def _extents(layer: LayerLike) -> FloatArray:
    """float64[dim, 1] (a layer) or [dim, b] (a stack): the layer's extents."""
    return np.asarray(layer.dims, dtype=np.float64).reshape(NUM_DIMS, -1)


def _prod(x: FloatArray, idx: list[int]) -> FloatArray:
    """Product over the listed dims (axis -2) of ``x[..., dim, batch]``."""
    if not idx:
        return np.ones(x.shape[:-2] + x.shape[-1:])
    out = x[..., idx[0], :].astype(np.float64)
    for i in idx[1:]:
        out *= x[..., i, :]
    return out


def _window(
    dims: _Dims, e: FloatArray, pos: int, win: int, stride: Any, dil: Any
) -> FloatArray | float:
    """Extent of the sliding-window box along one axis: ``stride * (P' - 1) + dil * (R' - 1)
    + 1`` of the extents ``e`` of the axis' output (``pos``) and window (``win``) dims."""
    box: FloatArray | float = stride * (dims.take(e, pos) - 1) + dil * (dims.take(e, win) - 1) + 1
    return box


def _tiles(dims: _Dims, extent: FloatArray, layer: LayerLike) -> FloatArray:
    """Tile sizes (words): extents ``[..., dim, batch]`` -> ``[..., operand, batch]``."""
    out = np.empty((*extent.shape[:-2], 3, *extent.shape[-1:]))
    words = operand_words(layer, {d: dims.take(extent, d) for d in range(NUM_DIMS)})
    for op, w in enumerate(words):
        out[..., op, :] = w
    return out


def _distinct_starts(n: FloatArray, m: FloatArray, a: FloatArray, b: FloatArray) -> FloatArray:
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


def _above(x: FloatArray) -> FloatArray:
    """``out[l] = prod(x[m] for m > l)`` over the first axis."""
    out = np.ones_like(x)
    for li in range(len(x) - 2, -1, -1):
        out[li] = out[li + 1] * x[li + 1]
    return out


@dataclass(frozen=True)
class _Nest:
    """The loop nest of a batch, over the dimensions it uses (``dims``). Arrays put the
    batch last: ``[l, d, b]`` is level (innermost first), used dimension, mapping.

    Factors and extents are small integers: float32 holds them exactly and halves the
    memory traffic; products of many factors are taken in float64.
    """

    dims: _Dims
    t: FloatArray  # float32[l, d, b]: temporal factors
    s: FloatArray  # float32[l, d, b]: spatial factors (x times y) of the fan-out below l
    rank: IntArray  # int8[l, d, b]: position among the level's temporal loops, 0 innermost
    rank_if_active: IntArray  # int8[l, d, b]: rank, pushed past every loop when t == 1
    t_minus_1: FloatArray  # float32[l, d, b]
    ts: FloatArray  # float32[l, d, b]: t * s
    extent: FloatArray  # float32[l, d, b]: extent of each dim in the tile at level l
    real: FloatArray  # float64[d, 1]: the layer's extents ([d, b]: a stack's)
    tiles: FloatArray  # [l, operand, b]: tile words, padded
    tiles_clipped: FloatArray  # [l, operand, b]: tile words within the layer
    perfect: bool  # every factor product equals the layer's extent
    above: FloatArray  # float64[l, b]: product of the temporal loops of the levels above l
    iterations: FloatArray  # float64[b]: temporal iterations of the whole nest (padded)

    @property
    def padded(self) -> FloatArray:
        """float32[d, b]: the extents the nest covers (at least the layer's)."""
        padded: FloatArray = self.extent[-1]
        return padded


def _nest(layer: LayerLike, batch: MappingBatch) -> _Nest:
    """The loop nest of ``batch``: factors, ranks, tile extents and tile sizes."""
    dims = _Dims(layer, batch)
    used = dims.used
    t = batch.factors_t[:, used].astype(np.float32)
    s = (batch.spatial_x[:, used] * batch.spatial_y[:, used]).astype(np.float32)
    rank = batch.rank[:, used].astype(np.int8)
    ts = t * s
    extent = ts.copy()
    for li in range(1, len(t)):
        extent[li] *= extent[li - 1]
    real = _extents(layer)[used]
    tiles = _tiles(dims, extent, layer)
    perfect = bool((extent[-1] == real).all())
    level_prod = t.prod(axis=1, dtype=np.float64)  # [l, b]
    above = _above(level_prod)
    return _Nest(
        dims=dims,
        t=t,
        s=s,
        rank=rank,
        # inactive loops never stop a stationary run
        rank_if_active=rank + (~(t > 1)) * np.int8(_BIG),
        t_minus_1=t - 1,
        ts=ts,
        extent=extent,
        real=real,
        tiles=tiles,
        tiles_clipped=tiles if perfect else _tiles(dims, np.minimum(extent, real), layer),
        perfect=perfect,
        above=above,
        iterations=above[0] * level_prod[0],
    )


#: Level -> [b]: the share of a chip-to-chip fan-out's input words its parent sends
#: (``_parent_share``).
Shares = dict[int, FloatArray]

#: A rank past every loop (of an inactive loop, or of no loop at all).
_BIG = NUM_DIMS + 1


def analyze(layer: LayerLike, arch: Arch, batch: MappingBatch) -> Counts:
    """Access counts for every mapping of ``batch`` (see the module docstring); of a
    ``LayerStack``, each mapping's as its own layer's (``macs`` then per mapping)."""
    nest = _nest(layer, batch)
    keep = batch.keep
    overflow = _overflow_bits(arch, keep, nest.tiles_clipped)
    ratio, padded_macs = _padding_ratios(layer, nest)
    spread = _spread(layer, nest)
    share = _parent_share(layer, arch, keep, nest)
    moves = _count_moves(layer, keep, nest, spread, ratio, layer.macs / padded_macs, share)
    if not nest.perfect:
        _at_least_real_words(layer, keep, spread.instances, moves)
    if isinstance(layer, GemmView):
        _im2col_on_chip(layer, arch, keep, moves.reads, moves.fills)
    return Counts(
        valid=np.asarray((overflow <= 0).all(axis=0)),  # the stubs allow a scalar
        overflow_bits=overflow,
        tile_words=nest.tiles_clipped,
        reads=moves.reads,
        fills=moves.fills,
        updates=moves.updates,
        instances=spread.instances,
        mac_instances=spread.mac_instances,
        compute_cycles=nest.iterations,
        fanout_words=moves.fanout_words,
        fanout_degree=spread.degree,
        readback_words=moves.readback,
        halo_words=moves.halo,
        macs=layer.macs,
        padded_macs=padded_macs,
    )


def _overflow_bits(arch: Arch, keep: BoolArray, tiles_clipped: FloatArray) -> FloatArray:
    """[level, b]: bits of the tiles each level keeps, less the bits it may hold for them
    (``tile_capacity_bits``); above 0 the mapping overflows the level."""
    kept_bits = (tiles_clipped * (keep * operand_bits(arch))[:, :, None]).sum(axis=1)
    overflow: FloatArray = kept_bits - tile_capacity_bits(arch)[:, None]
    return overflow


def _padding_ratios(layer: LayerLike, nest: _Nest) -> tuple[FloatArray, FloatArray]:
    """([operand, b]: real / padded words of each operand, [b]: padded MACs).

    Inputs: the padded window box can hold gap words no MAC reads (stride > window), so
    take the larger of the box ratio and the per-dimension ratio: never below the real need.
    """
    padded = nest.padded
    real_sizes = np.array([layer.operand_size(op) for op in Operand], dtype=float)
    ratio = real_sizes.reshape(3, -1) / _tiles(nest.dims, padded, layer)
    ratio[I_] = np.maximum(ratio[I_], _prod(nest.real / padded, nest.dims.of(RELEVANT[I_])))
    return ratio, padded.prod(axis=0, dtype=np.float64)


@dataclass(frozen=True)
class _Spread:
    """How the batch spreads over the instances of each level (``[l, b]`` unless said)."""

    s_level: FloatArray  # children of one instance that the fan-out below l uses
    instances: FloatArray  # instances of level l holding data
    mac_instances: FloatArray  # [b]: MACs doing work
    partition_out: FloatArray  # outputs one instance of level l ever touches
    partition_out_mac: FloatArray  # [b]: outputs one MAC ever touches
    distinct: FloatArray  # [l, operand, b]: children of one instance that need distinct data
    degree: FloatArray  # [l, operand, b]: children per datum, the multicast (W, I) or
    # reduction (O) degree of the fan-out below l (>= 1)


def _spread(layer: LayerLike, nest: _Nest) -> _Spread:
    """Instances in use, output partitions and distinct children of every fan-out."""
    dims, s = nest.dims, nest.s
    s_level = s.prod(axis=1, dtype=np.float64)
    instances = _above(s_level)
    out_idx = dims.of(_SINGLE_AXIS[O_])
    s_out = _prod(s, out_idx)
    out_total = _prod(nest.padded, out_idx)
    above_out = _above(s_out)
    distinct = _distinct_children(layer, nest)
    return _Spread(
        s_level=s_level,
        instances=instances,
        mac_instances=instances[0] * s_level[0],
        partition_out=out_total / above_out,
        partition_out_mac=out_total / (above_out[0] * s_out[0]),
        distinct=distinct,
        degree=np.maximum(1.0, s_level[:, None, :] / np.maximum(distinct, 1.0)),
    )


def _distinct_children(layer: LayerLike, nest: _Nest) -> FloatArray:
    """[l, operand, b]: children of one instance of l that need distinct data; along a
    sliding axis, children whose windows start at the same place count once."""
    dims, s = nest.dims, nest.s
    nl, _, nb = s.shape
    distinct = np.empty((nl, 3, nb))
    for op in Operand:
        distinct[:, op] = _prod(s, dims.of(_SINGLE_AXIS[op]))
    below_s = nest.extent / nest.ts
    for pos, win, stride, dil in (
        (P_, R_, layer.wstride, layer.wdilation),
        (Q_, S_, layer.hstride, layer.hdilation),
    ):
        if dims.index[pos] >= 0 and dims.index[win] >= 0:
            distinct[:, I_] *= _distinct_starts(
                dims.take_used(s, pos),
                dims.take_used(s, win),
                stride * dims.take_used(below_s, pos),
                dil * dims.take_used(below_s, win),
            )
        else:
            distinct[:, I_] *= dims.take(s, pos) * dims.take(s, win)
    return distinct


def _parent_share(layer: LayerLike, arch: Arch, keep: BoolArray, nest: _Nest) -> Shares:
    """Level l -> [b]: of the input words sent down the fan-out below l, the share its
    parent sends; the rest are halo words, each crossing one link from a neighbouring child.
    Only fan-outs over chip-to-chip links (``Fanout.chip_to_chip``) into children that
    keep the inputs; empty when none exchanges halos. On-chip fan-outs are left as they are.

    Along a window axis split n ways, each child's tile spanning ``p`` outputs and ``r``
    taps (window ``w = stride (p - 1) + dil (r - 1) + 1``, starts ``a = stride p`` apart),
    the children hold ``n w`` words of the axis, their union ``(n - 1) min(a, w) + w``: the
    parent reads the union once; every further copy crosses one link from a neighbour
    holding it (windows are intervals: a word children 0, 1, 2 need passes 0 -> 1 -> 2).
    The axes multiply. Only the children of one step of the parent's loops exchange: their
    windows fill together, and a chiplet forwards a halo word as it arrives (one more hop of
    the parent's multicast, no read of its buffer). A loop above moving the tiles along the
    split refills them (the tile holding the overlap of two steps is ``n - 1`` hops back:
    the parent reads it again); one moving them across it fetches new rows, whose union the
    parent reads. Not exchanged (share 1 on the axis, as on chip): a split of the taps (R,
    S), a temporal tap loop at or above the level, a temporal output loop moving each
    child's tile by less than its window (``n a < w``: a halo wider than ``n - 1`` tiles).
    Imperfect factors: the shares of the padded nest, scaled as every count is.
    """
    links = [
        li
        for li, lvl in enumerate(arch.inner_first)
        if lvl.fanout.chip_to_chip and li > 0 and keep[li - 1, I_]
    ]
    dims, share = nest.dims, Shares()
    for li in links if _flags(layer)[1] else []:
        level = np.ones(nest.t.shape[2])
        for pos, win, stride, dil in (
            (P_, R_, layer.wstride, layer.wdilation),
            (Q_, S_, layer.hstride, layer.hdilation),
        ):
            if dims.index[pos] < 0 or not (dims.take_used(nest.s[li], pos) > 1).any():
                continue  # not split across these children in any mapping
            n = dims.take_used(nest.s[li], pos).astype(np.float64)
            p = dims.take_used(nest.extent[li - 1], pos)
            w = stride * (p - 1) + dil * (dims.take(nest.extent[li - 1], win) - 1) + 1
            a = stride * p
            moved = (dims.take_used(nest.t[li:], pos) > 1).any(axis=0) & (n * a < w)
            if dims.index[win] >= 0:
                moved |= (dims.take_used(nest.t[li:], win) > 1).any(axis=0)
                moved |= dims.take_used(nest.s[li], win) > 1
            union = (n - 1) * np.minimum(a, w) + w
            level *= 1 + ~moved * (union / (n * w) - 1)
        if (level < 1).any():
            share[li] = level
    return share


class _TileFills:
    """Words moved into each level's tile of an operand over the run (first fill
    included): ``of(op)`` is ``[l, b]``."""

    def __init__(self, layer: LayerLike, keep: BoolArray, nest: _Nest) -> None:
        self.layer, self.keep, self.nest = layer, keep, nest
        self.sliding = _flags(layer)[0] and bool(keep[:, I_].any())
        #: level -> times each of its loops advances (shared by the levels below it)
        self.weights: dict[int, FloatArray] = {}

    def of(self, op: Operand) -> FloatArray:
        """A level is refilled each time a loop above its stationary run moves the tile;
        inputs with a sliding window fetch only the new part (``_input_deltas``)."""
        nest = self.nest
        nl, _, nb = nest.t.shape
        relevant = nest.dims.of(RELEVANT[op])
        if relevant:
            first = nest.rank_if_active[:, relevant].min(axis=1)  # innermost relevant loop
        else:
            first = np.full((nl, nb), _BIG, dtype=np.int8)
        # product of the loops from the innermost relevant one outwards, and all levels above
        outer = (1 + (nest.rank >= first[:, None]) * nest.t_minus_1).prod(
            axis=1, dtype=np.float64
        ) * nest.above
        mult = np.ones((nl, nb))
        for li in range(nl - 2, -1, -1):
            mult[li] = np.where(first[li + 1] < _BIG, outer[li + 1], mult[li + 1])
        out = nest.tiles[:, op] * mult
        if op is I_ and self.sliding:
            for li in range(nl - 1):
                if self.keep[li, I_]:
                    out[li] = _input_deltas(self.layer, nest, li, self.weights)
        return out


@dataclass(frozen=True)
class _Moves:
    """What the counts move (see ``Counts``): ``[l, operand, b]``, ``readback`` ``[l, b]``."""

    reads: FloatArray
    fills: FloatArray
    updates: FloatArray
    fanout_words: FloatArray
    readback: FloatArray
    halo: FloatArray

    @staticmethod
    def zeros(nl: int, nb: int) -> _Moves:
        """No moves yet, for ``nl`` levels and ``nb`` mappings."""
        shape = (nl, 3, nb)
        return _Moves(
            reads=np.zeros(shape),
            fills=np.zeros(shape),
            updates=np.zeros(shape),
            fanout_words=np.zeros(shape),
            readback=np.zeros((nl, nb)),
            halo=np.zeros((nl, nb)),
        )


def _count_moves(
    layer: LayerLike,
    keep: BoolArray,
    nest: _Nest,
    spread: _Spread,
    ratio: FloatArray,
    mac_ratio: FloatArray,
    share: Shares,
) -> _Moves:
    """Reads, fills, updates and fan-out words of every keeper of every operand, walking
    the keepers from the MACs outwards (each level is the parent of the keeper below it);
    ``share`` (``_parent_share``) splits the inputs of chip-to-chip fan-outs into the
    parent's reads and halo words."""
    nl, _, nb = nest.t.shape
    moves = _Moves.zeros(nl, nb)
    fills_of = _TileFills(layer, keep, nest)
    for op in Operand:
        keepers = [li for li in range(nl) if keep[li, op]]
        if keepers:
            delta = fills_of.of(op) * ratio[op]
            halo = share if op is I_ else {}
            _count_operand(op, keepers, delta, nest, spread, ratio, mac_ratio, moves, halo)
    return moves


def _count_operand(
    op: Operand,
    keepers: list[int],
    delta_all: FloatArray,
    nest: _Nest,
    spread: _Spread,
    ratio: FloatArray,
    mac_ratio: FloatArray,
    moves: _Moves,
    share: Shares,
) -> None:
    """Add the moves of ``op`` to ``moves``: what each keeper sends its child (the MACs
    below the innermost) and the fan-out words between them; ``delta_all`` ``[l, b]`` is the
    words moved into each level's tile, scaled to the real layer. ``share`` (level -> [b]): of
    the words sent down the fan-out below l, the part the parent sends (the rest, the halo,
    crosses one link from a neighbouring child to each child that needs it)."""
    nb = nest.t.shape[2]
    child = -1
    child_delta = nest.iterations * mac_ratio
    child_part = spread.partition_out_mac * ratio[O_]
    for li in keepers:
        # words leaving one instance of each level between the child and this parent:
        # what each child receives, times the distinct data sets below that level
        served = np.ones(nb)
        for j in range(child + 1, li + 1):
            served = served * spread.distinct[j, op]
            if j in share:
                shared = served * share[j]
                halo = (served - shared) * spread.degree[j, op]
                moves.halo[j] += child_delta * halo * spread.instances[j]
                served = shared
            moves.fanout_words[j, op] += child_delta * served * spread.instances[j]
            if op is O_:
                moves.readback[j] += (child_delta - child_part) * served * spread.instances[j]
        if op is O_:
            moves.updates[li, op] = child_delta * served
            moves.reads[li, op] = (child_delta - child_part) * served
        else:
            moves.reads[li, op] = child_delta * served
        delta = delta_all[li]
        part = spread.partition_out[li] * ratio[O_]
        if li != keepers[-1]:
            moves.fills[li, op] = delta - part if op is O_ else delta
        child, child_delta, child_part = li, delta, part


def _real_words(layer: Layer) -> list[int]:
    """The words of each operand the layer really uses: its weights, the input words its
    windows touch (gaps between strided windows left out), its outputs."""
    return [
        layer.operand_size(W_),
        layer.N
        * layer.G
        * layer.C
        * _distinct_positions(layer.P, layer.R, layer.wstride, layer.wdilation)
        * _distinct_positions(layer.Q, layer.S, layer.hstride, layer.hdilation),
        layer.operand_size(O_),
    ]


def _at_least_real_words(
    layer: LayerLike, keep: BoolArray, instances: FloatArray, moves: _Moves
) -> None:
    """Padding can spread one real word over padded children (a multicast of a word no
    padded child needs, a reduction of padded partial sums): the scaled counts then fall
    below one move per real word. No keeper moves less than the words the layer really
    uses (``_real_words``)."""
    real_words = layer.real_words if isinstance(layer, LayerStack) else _real_words(layer)
    nl = len(keep)
    for op in Operand:
        keepers = [li for li in range(nl) if keep[li, op]]
        for li in keepers:
            floor = real_words[op] / instances[li]
            moved = moves.updates if op is O_ else moves.reads
            moved[li, op] = np.maximum(moved[li, op], floor)
            if op is not O_ and li != keepers[-1]:
                moves.fills[li, op] = np.maximum(moves.fills[li, op], floor)


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
    layer: LayerLike, nest: _Nest, li: int, weights: dict[int, FloatArray]
) -> FloatArray:
    """[b]: fills of the input tile of level ``li`` with sliding-window reuse.

    Every temporal loop above the level is a kind of transition: it advances while the loops
    inside it wrap back, so the tile moves by ``step - sum(inner wraps)`` along each window
    axis (``step`` = extent of the loop's dim inside it). No move is free; a move along one
    window axis by less than the tile fetches only the new part; any other move refills the
    tile. As in Timeloop, the first loop that moves sets a direction, and a later partial move
    in another direction refills fully. Loop j advances ``(f_j - 1) * prod(loops outside j)``
    times (``weights``, cached per level). Arrays are ``[dim, batch]`` for the loops of one
    level (masks as arithmetic: ``np.where`` is slow on these shapes).
    """
    tile = nest.tiles[li, I_]
    walk = _WindowWalk(layer, nest.dims, nest.extent[li], tile)
    per_level = []
    for m in range(li + 1, len(nest.t)):
        if m not in weights:
            weights[m] = _loop_weights(nest.t[m], nest.rank[m], nest.above[m])
        per_level.append(
            walk.level(nest.t[m], nest.rank[m], nest.rank_if_active[m], nest.extent[m], weights[m])
        )
    total: FloatArray = tile.copy()
    for level in per_level:
        partial = level.partial & ((walk.g0 == 0) | (level.grad == walk.g0))
        per_move = partial * level.new_words + (level.moved & ~partial) * tile
        total += (level.weight * per_move).sum(axis=0)
    return total


def _loop_weights(f: FloatArray, r: IntArray, above: FloatArray) -> FloatArray:
    """[dim, b]: how many times each loop of one level advances over the run: ``(f - 1)``
    times the product of the loops outside it (of this level, ranks above, and ``above``)."""
    inside = (1 + (r[None, :, :] <= r[:, None, :]) * (f - 1)[None, :, :]).prod(
        axis=1, dtype=np.float64
    )
    weights: FloatArray = (f - 1) * (f.prod(axis=0, dtype=np.float64) / inside) * above
    return weights


class _LevelMoves(NamedTuple):
    """How the loops of one level above the tile move it (arrays ``[dim, b]``)."""

    weight: FloatArray  # times each loop advances
    grad: IntArray  # int8 direction of a partial move: 1/2 along +-width, 3/4 +-height, else 0
    partial: BoolArray  # the loop moves the tile along one axis, by less than the tile
    new_words: FloatArray  # words a partial move fetches
    moved: BoolArray  # the loop moves the tile at all


class _WindowWalk:
    """The walk up the levels above an input tile, innermost first: what the loops inside
    each level left behind (their wraps along each window axis, whether an N, G or C loop
    moved) and the direction the first moving loop set (``g0``, 0 until one moves)."""

    def __init__(self, layer: LayerLike, dims: _Dims, extent: FloatArray, tile: FloatArray) -> None:
        nb = tile.shape[0]
        self.dims, self.tile = dims, tile
        #: ([(dim, coefficient)], extent of the tile along the axis) for width, height
        self.axes = (
            (
                [(P_, layer.wstride), (R_, layer.wdilation)],
                _window(dims, extent, P_, R_, layer.wstride, layer.wdilation),
            ),
            (
                [(Q_, layer.hstride), (S_, layer.hdilation)],
                _window(dims, extent, Q_, S_, layer.hstride, layer.hdilation),
            ),
        )
        self.hard_dims = dims.of((N_, G_, C_))
        self.wrapped = [np.zeros(nb, np.float32), np.zeros(nb, np.float32)]
        self.hard_below = np.zeros(nb, dtype=bool)
        self.g0 = np.zeros(nb, dtype=np.int8)
        self.found = np.zeros(nb, dtype=bool)

    def level(
        self, f: FloatArray, r: IntArray, ra: IntArray, extent: FloatArray, weight: FloatArray
    ) -> _LevelMoves:
        """The moves of the loops of one level (factors ``f``, ranks ``r``, ranks of the
        active loops ``ra``, tile extents ``extent``), after the levels below it."""
        moves = self._axis_moves(f, r, extent / f)  # step: float32, positions far below 2**24
        n_moved = np.empty(f.shape, dtype=np.int8)
        n_moved[...] = self.hard_below
        hard = np.zeros(f.shape, dtype=bool)
        for i in self.hard_dims:
            hard |= ra[i] <= r  # an active N, G or C loop at or inside this loop
            self.hard_below = self.hard_below | (f[i] > 1)
        n_moved = n_moved | hard
        moved = [mv != 0 for mv in moves]
        n_moved = n_moved + moved[0] + moved[1]
        single = n_moved == 1
        abs_w, abs_h = np.abs(moves[0]), np.abs(moves[1])
        part_w = single & moved[0] & (abs_w < self.axes[0][1])
        part_h = single & moved[1] & (abs_h < self.axes[1][1])
        grad = part_w * (1 + (moves[0] < 0)).astype(np.int8)
        grad += part_h * (3 + (moves[1] < 0)).astype(np.int8)
        innermost = ra.min(axis=0)
        now = ~self.found & (innermost <= NUM_DIMS)
        g_here = ((ra == innermost) * grad).sum(axis=0).astype(np.int8)
        self.g0 = self.g0 + now * (g_here - self.g0)
        self.found |= now
        # new words = move x (tile / extent along the axis); the quotient is a whole number
        tile = self.tile
        new_words = (part_w * abs_w) * (tile / self.axes[0][1]) + (part_h * abs_h) * (
            tile / self.axes[1][1]
        )
        return _LevelMoves(weight, grad, part_w | part_h, new_words, n_moved > 0)

    def _axis_moves(self, f: FloatArray, r: IntArray, step: FloatArray) -> list[FloatArray]:
        """[dim, b] per window axis: how far each loop moves the tile when it advances (its
        step, less the wraps of the loops inside it and of the levels below)."""
        moves = []
        for k, (terms, _extent) in enumerate(self.axes):
            d_move = np.empty(f.shape, dtype=np.float32)
            d_move[...] = -self.wrapped[k]
            for dim, coef in terms:
                i = self.dims.index[dim]
                if i < 0:
                    continue
                wrap = coef * (f[i] - 1) * step[i]
                d_move -= (r[i] < r) * wrap
                d_move[i] += coef * step[i]
                self.wrapped[k] = self.wrapped[k] + wrap
            moves.append(d_move)
        return moves
