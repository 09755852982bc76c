"""The mapspace of one layer on one architecture under one dataflow.

Slots: every dimension is split into factors over the temporal loops of each level and the
spatial loops of each fan-out (X and Y). Factors are divisors of what is left of the
dimension; a spatial factor may also be the whole remaining fan-out (an imperfect factor: the
last iteration is padded, which costs cycles, not data). Loop orders are kept only up to the
reuse they produce (``order_classes``).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from magnet.arch.spec import Arch
from magnet.dataflow import Dataflow
from magnet.errors import DesignInfeasible
from magnet.mapping import MappingBatch, default_keep
from magnet.model.counts import tile_capacity_bits
from magnet.model.sparse_counts import stored_bits
from magnet.workload.dims import (
    DIMS,
    NUM_DIMS,
    OPERANDS,
    RELEVANT,
    Dim,
    Operand,
    divisors,
    parse_operand,
)
from magnet.workload.layer import Layer, operand_words

if TYPE_CHECKING:
    from magnet.design import Design

_REL = np.zeros((3, NUM_DIMS), dtype=bool)
for _op, _dims in RELEVANT.items():
    _REL[_op, [int(d) for d in _dims]] = True


def spatial_dims(arch: Arch, flow: Dataflow) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
    """bool[level, dim]: the dims each level's fan-out may unroll along x, and along y, under
    ``flow`` (a rule's ``spatial_x`` and ``spatial_y``; every dim where none is given)."""
    allow_x = np.ones((len(arch.levels), NUM_DIMS), dtype=bool)
    allow_y = np.ones_like(allow_x)
    for rule in flow.rules:
        li = arch.level_index(rule.level)
        for mask, dims in ((allow_x, rule.spatial_x), (allow_y, rule.spatial_y)):
            if dims is not None:
                mask[li] = False
                mask[li, [int(Dim[d]) for d in dims]] = True
    return allow_x, allow_y


@dataclass(frozen=True)
class _Rules:
    """What a mapspace takes from its architecture and dataflow alone (``Space``'s arrays of
    the same names, read-only: shared by the spaces of every layer on one design)."""

    keep: npt.NDArray[np.bool_]
    allow_t: npt.NDArray[np.bool_]
    fixed_t: npt.NDArray[np.int64]
    allow_sx: npt.NDArray[np.bool_]
    allow_sy: npt.NDArray[np.bool_]
    fixed_s: npt.NDArray[np.int64]
    order_prefix: list[list[int]]
    stationary: list[tuple[int, Operand]]
    reuse: list[tuple[int, Operand]]
    fan_x: npt.NDArray[np.float32]
    fan_y: npt.NDArray[np.float32]
    cap_bits: npt.NDArray[np.float64]
    #: [level, dim]: each level's fixed factors, temporal times spatial (1: none)
    fixed: npt.NDArray[np.int64]
    #: [dim]: their products (``Space.fixed_product``, asked for every dim of every search)
    fixed_products: list[int]
    #: [dim]: the product of the fan-outs that may unroll each dim
    spatial_room: list[int]


def _rules(arch: Arch, flow: Dataflow) -> _Rules:
    """``_Rules`` of ``arch`` under ``flow``, made once per pair (every layer shape of a
    design is searched on the same objects; an identity reused by others is not taken)."""
    key = (id(arch), id(flow))
    found = _RULES.get(key)
    if found is not None and found[0] is arch and found[1] is flow:
        return found[2]
    flow.check(arch)
    nl = len(arch.levels)
    keep = default_keep(arch)
    allow_t = np.ones((nl, NUM_DIMS), dtype=bool)
    fixed_t = np.zeros((nl, NUM_DIMS), dtype=np.int64)
    allow_sx, allow_sy = spatial_dims(arch, flow)
    fixed_s = np.zeros((nl, NUM_DIMS), dtype=np.int64)
    order_prefix: list[list[int]] = [[] for _ in range(nl)]
    stationary: list[tuple[int, Operand]] = []
    reuse: list[tuple[int, Operand]] = []
    for rule in flow.rules:
        li = arch.level_index(rule.level)
        if rule.temporal is not None:
            allow_t[li] = False
            allow_t[li, [int(Dim[d]) for d in rule.temporal]] = True
        for d, f in rule.factors.items():
            fixed_t[li, Dim[d]] = f
        for d, f in rule.spatial_factors.items():
            fixed_s[li, Dim[d]] = f
        if rule.order is not None:
            order_prefix[li] = [int(Dim[d]) for d in rule.order]
        if rule.keep is not None:
            keep[li] = False
            for op in rule.keep:
                keep[li, parse_operand(op)] = True
        for op in rule.stationary:
            stationary.append((li, parse_operand(op)))
        for op in rule.reuse:
            reuse.append((li, parse_operand(op)))
    # float32[level, 1]: each fan-out's x and y (``structure_ok``'s limits)
    fan_x, fan_y = np.array(arch.fanouts, dtype=np.float32).T[:, :, None]
    fixed = np.where(fixed_t > 0, fixed_t, 1) * np.where(fixed_s > 0, fixed_s, 1)
    spatial_room = [
        math.prod(
            (fx if allow_sx[li, d] else 1) * (fy if allow_sy[li, d] else 1)
            for li, (fx, fy) in enumerate(arch.fanouts)
        )
        for d in range(NUM_DIMS)
    ]
    rules = _Rules(
        keep=keep,
        allow_t=allow_t,
        fixed_t=fixed_t,
        allow_sx=allow_sx,
        allow_sy=allow_sy,
        fixed_s=fixed_s,
        order_prefix=order_prefix,
        stationary=stationary,
        reuse=reuse,
        fan_x=fan_x,
        fan_y=fan_y,
        cap_bits=tile_capacity_bits(arch),
        fixed=fixed,
        fixed_products=fixed.prod(axis=0).tolist(),
        spatial_room=spatial_room,
    )
    for value in vars(rules).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    if len(_RULES) > 64:
        _RULES.clear()
    _RULES[key] = (arch, flow, rules)
    return rules


#: ``_rules``'s answers by the ids of (architecture, dataflow), with the objects.
_RULES: dict[tuple[int, int], tuple[Arch, Dataflow, _Rules]] = {}


@dataclass
class Space:
    """Constraints of the mapspace as arrays (level 0 = innermost storage level)."""

    layer: Layer
    arch: Arch
    dataflow: Dataflow

    def __post_init__(self) -> None:
        arch = self.arch
        rules = _rules(arch, self.dataflow)
        self.nl = len(arch.levels)
        self.extent = np.array(self.layer.dims, dtype=np.int64)
        self.keep = rules.keep
        self.allow_t, self.fixed_t = rules.allow_t, rules.fixed_t
        self.allow_sx, self.allow_sy = rules.allow_sx, rules.allow_sy
        self.fixed_s = rules.fixed_s
        self.order_prefix = rules.order_prefix
        self.stationary = rules.stationary
        self.reuse = rules.reuse
        self.fanouts = arch.fanouts
        self.fan_x, self.fan_y = rules.fan_x, rules.fan_y
        self.cap_bits = rules.cap_bits
        self._rules = rules
        self.bits = stored_bits(self.layer, arch, capacity=True)  # compressed tiles as they fit
        self._check_feasible()

    # ---- feasibility ------------------------------------------------------------------
    def _check_feasible(self) -> None:
        """Refuse, with the reason, a layer no mapping of this space can run."""
        name = self.dataflow.name
        for d in range(NUM_DIMS):
            need = self.extent[d]
            fixed = self.fixed_product(d)
            if fixed >= 2 * need:  # as a given mapping's (mapping.check_coverage)
                raise DesignInfeasible(
                    f"dataflow {name!r} fixes factors of {DIMS[d]} that multiply to {fixed}, "
                    f"twice the layer's {DIMS[d]}={need} or more: at least half the iterations "
                    "would pad",
                    field="--dataflow",
                )
            if need == 1:
                continue
            room = self.allow_t[:, d] & (self.fixed_t[:, d] == 0)
            if not room.any() and fixed < need and self._rules.spatial_room[d] <= 1:
                raise DesignInfeasible(
                    f"dataflow {name!r} allows no loop over {DIMS[d]} (extent {need}) at any "
                    "level or fan-out",
                    field="--dataflow",
                )
        smallest = self.min_extents()
        misfits = np.flatnonzero(~self.fits_each(smallest))
        if misfits.size:
            li = int(misfits[0])
            lvl = self.arch.inner_first[li]
            words = tile_words(self.layer, smallest[:, li])
            parts = [f"{OPERANDS[o]} {int(words[o])} words" for o in range(3) if self.keep[li, o]]
            cap_words = self.cap_bits[li] / self.bits[li][self.keep[li]].max()
            raise DesignInfeasible(
                f"the smallest tiles at {lvl.name!r} ({', '.join(parts)}) do not fit its "
                f"{lvl.describe_capacity()} (~{int(cap_words)} words) under dataflow {name!r}",
                field=lvl.name,
            )

    def fixed_product(self, d: int) -> int:
        """Product of the fixed temporal and spatial factors of dim ``d``."""
        return self._rules.fixed_products[d]

    def need_bits(self, li: int, words: np.ndarray) -> np.ndarray:
        """Bits level ``li`` needs for operand tiles ``words[operand, ...]`` (kept ones only)."""
        per_operand = (self.keep[li] * self.bits[li]).reshape(3, *([1] * (words.ndim - 1)))
        bits: np.ndarray = (words * per_operand).sum(axis=0)
        return bits

    def fits(self, li: int, extent: np.ndarray) -> np.ndarray:
        """bool[...]: tiles of per-dim extents ``[dim, ...]`` fit level ``li``."""
        if np.isinf(self.cap_bits[li]):
            return np.ones(extent.shape[1:], dtype=bool)
        fit: np.ndarray = self.need_bits(li, tile_words(self.layer, extent)) <= self.cap_bits[li]
        return fit

    def fits_each(self, extents: np.ndarray) -> np.ndarray:
        """bool[level]: each level's tile of per-dim extents ``extents[dim, level]`` fits it
        (``fits`` of every level at once)."""
        need = (tile_words(self.layer, extents).T * self.keep * self.bits).sum(axis=1)
        fit: np.ndarray = need <= self.cap_bits
        return fit

    @cached_property
    def _room(self) -> list[tuple[float, float, float, float]]:
        """Per level below the top: the bits a word of weights, inputs and outputs takes
        there (0 for what it does not keep), and its capacity (``first_misfit``)."""
        kept = self.keep * self.bits
        return [
            (float(kept[li, 0]), float(kept[li, 1]), float(kept[li, 2]), float(self.cap_bits[li]))
            for li in range(self.nl - 1)
        ]

    def first_misfit(self, level_factors: list[list[float]]) -> int | None:
        """The innermost level below the top whose tile does not fit it, for one mapping's
        loops ``level_factors[dim][level]``; None: every one fits. ``fits_each`` for a
        single mapping in plain floats, the same sums in the same order (numpy's cost per
        call is most of a small array's)."""
        extent = [1.0] * NUM_DIMS
        for li, (kw, ki, ko, cap) in enumerate(self._room):
            for d in range(NUM_DIMS):
                extent[d] *= level_factors[d][li]
            if cap == math.inf:
                continue
            weights, inputs, outputs = operand_words(self.layer, extent)
            if not weights * kw + inputs * ki + outputs * ko <= cap:
                return li
        return None

    def min_extents(self) -> np.ndarray:
        """float[dim, level]: the smallest tile's extents at each level: the fixed factors
        at and below it, or the whole dimension where no level above may loop over it."""
        below = np.cumprod(self._rules.fixed.astype(np.float64), axis=0)  # [level, dim]
        room = self.allow_t | (self.fixed_t > 0) | self.allow_sx | self.allow_sy
        # room at some level above: the OR of the levels above each, outermost down
        above = np.zeros_like(room)
        above[:-1] = np.logical_or.accumulate(room[::-1], axis=0)[::-1][1:]
        extents: np.ndarray = np.where(above, below, np.maximum(below, self.extent)).T
        return extents

    # ---- structure checks ---------------------------------------------------------------
    def structure_ok(self, batch: MappingBatch) -> np.ndarray:
        """bool[batch]: rules, fan-outs, coverage and stationarity hold (capacity is the
        evaluator's)."""
        t, sx, sy = batch.factors_t, batch.spatial_x, batch.spatial_y
        ok = np.ones(batch.size, dtype=bool)
        for arr, allow in ((t, self.allow_t), (sx, self.allow_sx), (sy, self.allow_sy)):
            if not allow.all():
                ok &= ~(arr[~allow] > 1).any(axis=0)
        fixed = self.fixed_t > 0
        ok &= (t[fixed] == self.fixed_t[fixed][:, None]).all(axis=0) if fixed.any() else True
        fixed_s = self.fixed_s > 0
        if fixed_s.any():
            ok &= ((sx * sy)[fixed_s] == self.fixed_s[fixed_s][:, None]).all(axis=0)
        # products in float32: exact up to 2**24, beyond it far above any fan-out or extent,
        # and they cannot wrap around
        t, sx, sy = (a.astype(np.float32) for a in (t, sx, sy))
        fits = (sx.prod(axis=1) <= self.fan_x) & (sy.prod(axis=1) <= self.fan_y)  # [level, b]
        ok &= fits.all(axis=0)
        total = (t * sx * sy).prod(axis=0)  # [dim, batch]
        ok &= (total >= self.extent[:, None]).all(axis=0)
        for li, prefix in enumerate(self.order_prefix):
            if prefix:
                ok &= prefix_ok(batch, li, prefix)
        for li, op in self.stationary:
            ok &= stationary_ok(batch, li, op)
        for li, op in self.reuse:
            ok &= reuse_ok(batch, li, op)
        return ok

    # ---- sizes ---------------------------------------------------------------------------
    @cached_property
    def _tiling_cache(self) -> dict[int, tuple[np.ndarray, list[tuple[str, int]]]]:
        return {}

    @cached_property
    def slots(self) -> list[list[tuple[str, int]]]:
        """Per dim: the slots that may take a factor > 1, as (kind, level)."""
        out = []
        for d in range(NUM_DIMS):
            slots = []
            for li, (fx, fy) in enumerate(self.fanouts):
                if fx > 1 and self.allow_sx[li, d]:
                    slots.append(("x", li))
                if fy > 1 and self.allow_sy[li, d]:
                    slots.append(("y", li))
            slots += [("t", li) for li in range(self.nl) if self.allow_t[li, d]]
            out.append(slots)
        return out

    def size(self) -> float:
        """Number of mappings in the pruned mapspace (tilings x loop-order classes), an
        estimate when the orders depend on the tiling (each level counted with all its dims)."""
        return self._size

    @cached_property
    def _size(self) -> float:
        tilings = 1.0
        for d in range(NUM_DIMS):
            tilings *= _factorizations(int(self.extent[d]), max(1, len(self.slots[d])))
        orders = 1.0
        for li in range(self.nl):
            dims = [d for d in range(NUM_DIMS) if self.extent[d] > 1 and self.allow_t[li, d]]
            orders *= len(self.order_classes(tuple(dims), li))
        return tilings * orders

    def tilings(self) -> int:
        """How many tilings the exhaustive enumeration walks (before the capacity check;
        each tiling that fits then takes every loop-order class)."""
        return math.prod(len(self.dim_tilings(d)[0]) for d in range(NUM_DIMS))

    # ---- enumeration pieces -------------------------------------------------------------
    def dim_tilings(self, d: int) -> tuple[np.ndarray, list[tuple[str, int]]]:
        """int[n, slots] and the slots: every split of dim ``d`` (fixed factors excluded).

        Factors are divisors of what is left; a spatial slot may also take the whole remaining
        fan-out when that does not divide (imperfect). The last temporal slot takes the rest.
        """
        if d in self._tiling_cache:
            return self._tiling_cache[d]
        slots = self.slots[d]
        rest = -(-int(self.extent[d]) // self.fixed_product(d))
        free = [s for s in slots if not (s[0] == "t" and self.fixed_t[s[1], d] > 0)]
        rows: list[tuple[int, ...]] = []

        def walk(i: int, left: int, acc: tuple[int, ...]) -> None:
            if i == len(free):
                if left == 1:
                    rows.append(acc)
                return
            kind, li = free[i]
            is_last_t = kind == "t" and all(k != "t" for k, _ in free[i + 1 :])
            if is_last_t:
                walk(i + 1, 1, (*acc, left))
                return
            options = set(divisors(left))
            if kind in "xy":
                limit = self.fanouts[li][0 if kind == "x" else 1]
                options = {o for o in options if o <= limit}
                if left > limit and left % limit:
                    options.add(limit)  # imperfect: the whole fan-out, last step padded
            for f in sorted(options):
                walk(i + 1, -(-left // f), (*acc, f))

        if rest == 1 or not free:
            rows = [tuple(1 for _ in free)] if rest == 1 else []
        else:
            walk(0, rest, ())
        table = np.array(rows, dtype=np.int64).reshape(len(rows), len(free))
        self._tiling_cache[d] = (table, free)
        return self._tiling_cache[d]

    @cached_property
    def _rank_cache(self) -> dict[tuple[int, tuple[int, ...]], np.ndarray]:
        return {}

    def order_ranks(self, dims: tuple[int, ...], li: int) -> np.ndarray:
        """int8[class, dim]: ``order_classes`` as rank rows (0 = innermost)."""
        key = (li, dims)
        if key not in self._rank_cache:
            classes = self.order_classes(dims, li)
            ranks = np.empty((len(classes), NUM_DIMS), dtype=np.int8)
            for c, order in enumerate(classes):
                rest = [d for d in range(NUM_DIMS) if d not in order]
                ranks[c, [*order, *rest]] = np.arange(NUM_DIMS)
            self._rank_cache[key] = ranks
        return self._rank_cache[key]

    def order_classes(self, dims: tuple[int, ...], li: int) -> list[tuple[int, ...]]:
        """Loop orders (innermost first) of ``dims`` at level ``li`` that differ in reuse.

        Two orders are alike when, for every operand, the same loops sit inside its innermost
        relevant loop, and the window dims (P, Q, R, S) and the first N/G/C loop come in the
        same order (what the sliding-window analysis looks at).
        """
        prefix = tuple(d for d in self.order_prefix[li] if d in dims)
        return _order_classes(tuple(dims), prefix)


@functools.lru_cache(maxsize=4096)
def _order_classes(dims: tuple[int, ...], prefix: tuple[int, ...]) -> list[tuple[int, ...]]:
    """One loop order (innermost first) of ``dims`` per class of orders the analysis tells
    apart (``_order_signature``), each starting with ``prefix``."""
    rest = [d for d in dims if d not in prefix]
    seen: dict[_Signature, tuple[int, ...]] = {}
    for perm in itertools.permutations(rest):
        order = (*prefix, *perm)
        seen.setdefault(_order_signature(order), order)
    return list(seen.values()) or [prefix]


def _factorizations(n: int, slots: int) -> float:
    """Ordered ways to write n as a product of ``slots`` factors."""
    count, p = 1.0, 2
    while p * p <= n:
        e = 0
        while n % p == 0:
            n //= p
            e += 1
        count *= math.comb(e + slots - 1, slots - 1)
        p += 1
    if n > 1:
        count *= slots
    return count


#: What the analysis sees of a loop order: per operand the dims inside its innermost relevant
#: loop, then the order of the window and batch dims.
_Signature = tuple[frozenset[int] | tuple[int, ...], ...]


def _order_signature(order: tuple[int, ...]) -> _Signature:
    """The class of a loop order (innermost first): orders with one signature price alike."""
    sig: list[frozenset[int] | tuple[int, ...]] = []
    for op in range(3):
        inside = []
        for d in order:
            if _REL[op, d]:
                break
            inside.append(d)
        sig.append(frozenset(inside))
    window = tuple(
        d
        for d in order
        if d in (int(Dim.P), int(Dim.Q), int(Dim.R), int(Dim.S), int(Dim.N), int(Dim.G), int(Dim.C))
    )
    sig.append(window)
    return tuple(sig)


def tile_words(layer: Layer, extent: np.ndarray) -> np.ndarray:
    """Words of each operand for per-dim extents ``[dim, ...]`` -> ``[operand, ...]``."""
    e = extent.astype(np.float64)
    return np.stack(operand_words(layer, dict(enumerate(e))))


def stationary_ok(batch: MappingBatch, li: int, op: Operand) -> np.ndarray:
    """bool[batch]: no loop above level ``li`` refetches operand ``op`` into it.

    Walking the temporal loops above the level innermost first, every loop that does not index
    the operand must come before every loop that does.
    """
    t, rank = batch.factors_t, batch.rank
    rel = _REL[op][:, None]
    big = NUM_DIMS + 1
    ok = np.ones(batch.size, dtype=bool)
    seen_relevant = np.zeros(batch.size, dtype=bool)
    for m in range(li + 1, t.shape[0]):
        active = t[m] > 1
        rel_min = np.where(active & rel, rank[m], big).min(axis=0)
        irr_max = np.where(active & ~rel, rank[m], -1).max(axis=0)
        ok &= np.where(seen_relevant, irr_max < 0, irr_max < rel_min)
        seen_relevant |= rel_min < big
    return ok


def reuse_ok(batch: MappingBatch, li: int, op: Operand) -> np.ndarray:
    """bool[batch]: the innermost temporal loop above level ``li`` does not index ``op``."""
    t, rank = batch.factors_t, batch.rank
    rel = _REL[op][:, None]
    big = NUM_DIMS + 1
    decided = np.zeros(batch.size, dtype=bool)
    ok = np.zeros(batch.size, dtype=bool)
    for m in range(li + 1, t.shape[0]):
        active = t[m] > 1
        first = np.where(active, rank[m], big).min(axis=0)
        has = first < big
        innermost_relevant = ((rank[m] == first) & active & rel).any(axis=0)
        ok = np.where(~decided & has, ~innermost_relevant, ok)
        decided |= has
    return ok


def prefix_ok(batch: MappingBatch, li: int, prefix: list[int]) -> np.ndarray:
    """bool[batch]: the active loops of level ``li`` start with ``prefix``'s (in its order).

    Loops of factor 1 do not exist, so only active loops are compared.
    """
    t, rank = batch.factors_t[li], batch.rank[li].astype(np.int16)
    active = t > 1
    big = NUM_DIMS + 1
    ok = np.ones(batch.size, dtype=bool)
    for i, a in enumerate(prefix):
        for b in prefix[i + 1 :]:
            ok &= ~(active[a] & active[b]) | (rank[a] < rank[b])
    others = [d for d in range(NUM_DIMS) if d not in prefix]
    prefix_max = np.where(active[prefix], rank[prefix], -1).max(axis=0)
    others_min = np.where(active[others], rank[others], big).min(axis=0) if others else big
    valid: np.ndarray = ok & (prefix_max < others_min)
    return valid


def lift(batch: MappingBatch, reduced: Arch, arch: Arch) -> MappingBatch:
    """Mappings of ``reduced`` (``arch`` without some levels, ``without_levels``) as mappings
    of ``arch`` that leave those levels unused: no loops, nothing kept, and each fan-out's
    factors on the level of ``arch`` whose fan-out spreads data as the reduced one does."""
    nl, n = len(arch.levels), batch.size
    t = np.ones((nl, NUM_DIMS, n), dtype=batch.factors_t.dtype)
    sx, sy = np.ones_like(t), np.ones_like(t)
    rank = np.repeat(np.arange(NUM_DIMS, dtype=batch.rank.dtype)[None, :, None], nl, 0)
    rank = np.repeat(rank, n, axis=2)
    keep = np.zeros((nl, 3), dtype=bool)
    below = -1
    for i, lvl in enumerate(reduced.inner_first):
        li = arch.level_index(lvl.name)
        t[li], rank[li], keep[li] = batch.factors_t[i], batch.rank[i], batch.keep[i]
        spreading = [j for j in range(below + 1, li + 1) if arch.fanouts[j] != (1, 1)]
        fan = spreading[0] if spreading else li
        sx[fan], sy[fan] = batch.spatial_x[i], batch.spatial_y[i]
        below = li
    return MappingBatch(t, sx, sy, rank, keep)


def alternative_name(searched: Design, design: Design) -> str | None:
    """How an alternative of ``design`` differs from it (None: not at all, but for the levels
    its dataflow leaves unused), e.g. ``os-local-ws without AccumulationCollector``."""
    names = {lvl.name for lvl in searched.arch.levels}
    unused = (
        set(design.dataflow.unused_levels)
        if searched.dataflow.name == design.dataflow.name
        else set()
    )
    missing = [
        lvl.name for lvl in design.arch.levels if lvl.name not in names and lvl.name not in unused
    ]
    if searched.dataflow.name == design.dataflow.name and not missing:
        return None
    return searched.dataflow.name + (f" without {', '.join(missing)}" if missing else "")
