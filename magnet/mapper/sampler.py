"""Capacity-aware random mappings of a mapspace, and local moves between mappings.

The sampler fills levels from the innermost outwards: spatial factors first (favouring a full
fan-out; a factor may be the whole fan-out left, the last step padded), then each level's
temporal factors, choosing for every dimension a divisor of what is left whose tile still fits
the level and every level above; the outermost level takes the rest. Every sample is valid by
construction except when a dataflow's stationarity forces factors together.

It works on the whole batch at once, with no loop over candidates (about 2 million mappings
per second on one core, benchmarks/bench_sampler.py):

* what is left of a dimension is a state of a small lattice (the divisors of its extent, and
  the remainders a padded fan-out leaves), built once per extent and fan-outs (``_Lattice``);
* every choice is one lookup in a precomputed table of that state's candidates, each repeated
  in proportion to its weight (one row per state, fan-out left or number of fitting divisors,
  and preference for large factors), indexed by a 16-bit uniform (``_Table``);
* the bits a level holds are affine in each dimension's extent, so the largest factor that
  still fits is one division per level (``_Capacity``), and the candidates that fit are the
  state's first divisors.

The dims take their turns in a random order drawn once per call (``blocks`` draws several).
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import numpy.typing as npt

from magnet.mapper.mapspace import _REL, Space
from magnet.mapping import MappingBatch
from magnet.workload.dims import NUM_DIMS, Dim, Operand, divisors

#: Factors of a batch: ``int32[level, dim, batch]`` (fixed ones: ``[level, dim]``).
Factors = npt.NDArray[np.int32]
#: One whole number per sample: ``int64[batch]`` (a state of a lattice, a packed draw).
Int64s = npt.NDArray[np.int64]
#: One real number per sample: ``float[batch]`` (bits, in ``_Plan.dtype``).
Floats = npt.NDArray[np.floating[Any]]
#: The float type capacities are tracked in (``_Plan.dtype``).
FloatType = type[np.floating[Any]]
#: A dim's extent while capacities are set up: a number, or one per sample.
Extent = float | np.ndarray

#: Preference for large factors (weight factor**alpha; a spatial factor weighs one power more):
#: none, some, strong. Each mapping draws one, so a batch mixes small and large factors.
_ALPHAS = (0.0, 1.0, 3.0)
_BITS = 16  # uniforms are 16-bit integers
_ONE = 1 << _BITS
_MASK = _ONE - 1


# ---- lookup tables ---------------------------------------------------------------------------
_LOW = (1 << 32) - 1
#: Entries per row of a lookup table (log2; more for rows of many candidates, up to 2**10):
#: the resolution of the probabilities. 64 keeps the tables in the cache.
_TABLE_LOG = 6


class _Table:
    """Many small discrete distributions as lookup tables.

    Row r owns the 2**log entries from r << log: each candidate of the row repeated in
    proportion to its weight (rounded), so a draw is one lookup,
    ``out[(r << log) + (u >> shift)]`` for a 16-bit uniform u. An entry packs the factor and
    what the sampler carries next: factor | payload << 32.
    """

    def __init__(
        self, value: np.ndarray, payload: np.ndarray, weight: np.ndarray, count: np.ndarray
    ):
        """``value``, ``payload``, ``weight``: [row, column]; row r uses its first count[r]
        columns (weights > 0)."""
        rows, cols = weight.shape
        self.log = min(10, max(_TABLE_LOG, (4 * cols - 1).bit_length()))
        while rows << self.log > _MAX_TABLE and 1 << (self.log - 1) >= cols:
            self.log -= 1  # huge tables (extents of hundreds of divisors): coarser
        self.shift = _BITS - self.log
        used = np.arange(cols) < count[:, None]
        w = np.where(used, weight, 0.0)
        cum = np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True)
        edge = np.rint(cum * (1 << self.log)).astype(np.int64)
        repeat = np.diff(edge, axis=1, prepend=0)
        out = np.where(used, value | (payload << 32), 0)
        self.out: Int64s = np.repeat(out.ravel(), repeat.ravel())

    def draw(self, row: np.ndarray, u: np.ndarray) -> Int64s:
        """The packed outcome per sample; ``row`` already shifted left by ``log``."""
        packed: Int64s = self.out[row + (u >> self.shift)]
        return packed


@functools.lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    return tuple(divisors(n))


@functools.lru_cache(maxsize=1024)
def _limits(limit: int) -> tuple[int, ...]:
    """Every fan-out that can be left of ``limit`` (limit // x), ascending."""
    return tuple(sorted({limit // x for x in range(1, limit + 1)}))


#: Largest lattice kept with padded remainders (beyond it, spatial factors divide exactly).
_MAX_STATES = 400
#: Largest (z, largest fitting factor) lookup table; beyond it, two lookups.
_MAX_DIRECT = 1 << 16
#: Entries of a lookup table beyond which its rows get coarser.
_MAX_TABLE = 1 << 22
#: Largest extent whose "states <= q" lookup is a table (beyond it, a binary search).
_MAX_POS = 1 << 20


class _Lattice:
    """What can be left of one dimension, and its tables.

    ``root`` is the extent (after fixed factors); ``slots`` the fan-out of each spatial slot
    the dimension may take, in sampling order. States are the remainders reachable (divisors,
    and ceil(r / fan-out left) after a padded spatial factor), indexed ascending. With the
    preference ``a`` of a sample, the spatial phase carries ``z = a * size + state`` and the
    temporal phase ``z * scale``.
    """

    def __init__(self, root: int, slots: tuple[int, ...]):
        reach = {root}
        for limit in slots:
            step: set[int] = set()
            for r in reach:
                step.update(r // c for c in _divisors(r) if c <= limit)
                step.update(-(-r // f) for f in _limits(limit) if f < r and r % f)
            reach |= step
        states: set[int] = set()
        for r in reach:
            states.update(_divisors(r))
        self.padded = len(states) <= _MAX_STATES
        if not self.padded:
            states = set(_divisors(root))
        self.values = np.array(sorted(states), dtype=np.int64)
        self.size = s = len(self.values)
        self.root = int(np.searchsorted(self.values, root))
        self.top = int(self.values[-1])
        self.counts = np.array([len(_divisors(int(v))) for v in self.values])
        self.divs = np.zeros((s, int(self.counts.max())), dtype=np.int64)  # ascending, 0 pad
        for i, v in enumerate(self.values):
            self.divs[i, : self.counts[i]] = _divisors(int(v))
        self._spatial: dict[int, tuple[_Table, int]] = {}
        self._build_temporal()

    def _index(self, v: np.ndarray) -> np.ndarray:
        return np.minimum(np.searchsorted(self.values, v), self.size - 1)

    def _build_temporal(self) -> None:
        """Rows (a, state, j): the first j divisors, weight c**alpha, found by ``row`` from
        (z * scale + q), q the largest factor that fits (or its position among the states)."""
        s = self.size
        nal = len(_ALPHAS)
        counts = self.counts
        direct = nal * s * (self.top + 1) <= _MAX_DIRECT
        self.scale = self.top + 1 if direct else s + 1
        a_of = np.repeat(np.arange(nal), counts.sum())
        s_of = np.tile(np.repeat(np.arange(s), counts), nal)
        j_of = np.tile(np.concatenate([np.arange(1, c + 1) for c in counts]), nal)
        value = self.divs[s_of]
        safe = np.maximum(value, 1)
        after = self._index(self.values[s_of][:, None] // safe)
        payload = (a_of[:, None] * s + after) * self.scale
        alpha = np.array(_ALPHAS)[a_of][:, None]
        self.temporal = _Table(value, payload, safe.astype(float) ** alpha, j_of)
        # j = max(1, how many divisors of the state are <= q), q = 0 .. top or a state
        qs = np.arange(self.top + 1) if direct else np.concatenate([[0], self.values])
        j = np.stack(
            [np.searchsorted(self.divs[i, : counts[i]], qs, side="right") for i in range(s)]
        )
        j = np.maximum(j, 1)
        first = np.zeros(nal * s, dtype=np.int64)
        first[1:] = np.cumsum(np.tile(counts, nal))[:-1]
        rows = first.reshape(nal, s)[:, :, None] + (j - 1)[None]
        self.row = rows.ravel() << self.temporal.log
        self.full = self.scale - 1 if direct else s  # q when nothing limits the factor
        self.rest = np.tile(self.values.astype(np.int32), nal)  # what is left, by z
        self.pos = None
        if not direct and self.top <= _MAX_POS:
            self.pos = np.searchsorted(self.values, np.arange(self.top + 1), side="right")
            self.pos = self.pos.astype(np.int32)

    def fitting(self, zz: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Temporal row of states ``zz`` when the largest factor that fits is ``q``
        (int64, 0 <= q <= top)."""
        if self.scale == self.top + 1:
            rows: np.ndarray = self.row[zz + q]
        elif self.pos is not None:
            rows = self.row[zz + self.pos[q]]
        else:
            rows = self.row[zz + np.searchsorted(self.values, q, side="right")]
        return rows

    def spatial(self, limit: int) -> tuple[_Table, int]:
        """Table of a spatial slot of fan-out ``limit``: rows (a, state, fan-out left) =
        ``z * len(_limits(limit)) + index of the fan-out left`` of the divisors <= the fan-out
        left, and the fan-out left itself when it does not divide (padded); weight
        c**(1 + alpha). Payload: next z | next fan-out index << 16."""
        if limit in self._spatial:
            return self._spatial[limit]
        lims = np.array(_limits(limit), dtype=np.int64)
        nlim = lims.size
        s, k = self.divs.shape
        nal = len(_ALPHAS)
        a_of = np.repeat(np.arange(nal), s * nlim)
        s_of = np.tile(np.repeat(np.arange(s), nlim), nal)
        left = np.tile(lims, nal * s)
        r = self.values[s_of]
        value = np.zeros((a_of.size, k + 1), dtype=np.int64)
        exact = (self.divs[s_of] <= left[:, None]) & (self.divs[s_of] > 0)
        value[:, :k] = np.where(exact, self.divs[s_of], 0)
        count = exact.sum(axis=1)
        after = -(-r // left)
        pad = (left < r) & (r % left != 0) & self.padded
        pad &= self.values[self._index(after)] == after
        rows = np.flatnonzero(pad)
        value[rows, count[rows]] = left[rows]
        count = count + pad
        safe = np.maximum(value, 1)
        nxt = a_of[:, None] * s + self._index(-(-r[:, None] // safe))
        left_after = np.searchsorted(lims, left[:, None] // safe)
        payload = nxt | (left_after << 16)  # both < 2**16
        weight = safe.astype(float) ** (1.0 + np.array(_ALPHAS)[a_of][:, None])
        table = _Table(value, payload, weight, count)
        self._spatial[limit] = (table, nlim)
        return self._spatial[limit]


@functools.lru_cache(maxsize=128)  # a lattice and its tables: ~0.5 MB, a few MB at most
def _lattice(root: int, slots: tuple[int, ...]) -> _Lattice:
    """The lattice of an extent and its fan-out slots, built once per process."""
    return _Lattice(root, slots)


# ---- capacity --------------------------------------------------------------------------------
_W, _I, _O = int(Operand.W), int(Operand.I), int(Operand.O)
_LINEAR, _P, _R, _Q, _S = range(5)  # the window terms P, R, Q, S: ``_Capacity.win[i - _P]``
_WINDOW = {int(Dim.P): _P, int(Dim.R): _R, int(Dim.Q): _Q, int(Dim.S): _S}


def _product(n: int, dtype: FloatType, *factors: float | np.ndarray) -> Floats:
    """Product of numbers and arrays, as a new array of n."""
    scalar = 1.0
    arrays: list[np.ndarray] = []
    for x in factors:
        if isinstance(x, np.ndarray):
            arrays.append(x)
        else:
            scalar *= x
    if not arrays:
        return np.full(n, scalar, dtype=dtype)
    out: Floats = arrays[0].astype(dtype)
    out *= scalar
    for x in arrays[1:]:
        out *= x
    return out


class _Capacity:
    """Bits the tiles of one level hold, for a batch, as its extents grow.

    Every operand's words are affine in each dimension's extent (inputs through the sliding
    window), so growing dim d by a factor f adds (f - 1) * slope(d) bits: the largest factor
    that fits is 1 + slack / slope(d).
    """

    def __init__(self, space: Space, level: int, extent: list[Extent], n: int, dtype: FloatType):
        layer = space.layer
        self.level = level
        kw, ki, ko = (float(x) for x in space.keep[level] * space.bits[level])
        e = extent
        need = np.zeros(n, dtype=dtype)
        self.w_w: Floats | None = None  # weight bits (None: the level keeps no weights)
        self.w_o: Floats | None = None  # output bits
        if kw:
            self.w_w = _product(n, dtype, kw, e[Dim.G], e[Dim.K], e[Dim.C], e[Dim.R], e[Dim.S])
            need += self.w_w
        if ko:
            self.w_o = _product(n, dtype, ko, e[Dim.N], e[Dim.G], e[Dim.K], e[Dim.P], e[Dim.Q])
            need += self.w_o
        if ki:
            self.base = _product(n, dtype, ki, e[Dim.N], e[Dim.G], e[Dim.C])
            # the window's terms (stride * P, dilation * R, stride * Q, dilation * S), and its
            # width and height: P and R terms + 1 - stride - dilation, likewise Q and S
            self.win = [
                _product(n, dtype, layer.wstride, e[Dim.P]),
                _product(n, dtype, layer.wdilation, e[Dim.R]),
                _product(n, dtype, layer.hstride, e[Dim.Q]),
                _product(n, dtype, layer.hdilation, e[Dim.S]),
            ]
            self.const = (
                1.0 - layer.wstride - layer.wdilation,
                1.0 - layer.hstride - layer.hdilation,
            )
            self.side = [
                self.win[0] + self.win[1] + self.const[0],
                self.win[2] + self.win[3] + self.const[1],
            ]
            need += self.base * self.side[0] * self.side[1]
        # a tile that overflows already (its fixed and spatial factors) takes factors of 1
        self.slack = np.maximum(dtype(space.cap_bits[level]) - need, 0)
        self.terms = [
            (
                bool(kw) and bool(_REL[_W, d]),
                bool(ko) and bool(_REL[_O, d]),
                _WINDOW.get(d, _LINEAR) if ki and _REL[_I, d] else None,
            )
            for d in range(NUM_DIMS)
        ]

    def binds(self, d: int) -> bool:
        """Whether dim d's extent changes what the level holds."""
        w, o, i = self.terms[d]
        return w or o or i is not None

    def slope(self, d: int) -> np.ndarray:
        """Bits added per unit of (factor - 1) on dim d."""
        w, o, i = self.terms[d]
        out: Floats | None = None
        if i == _LINEAR:
            out = self.base * self.side[0] * self.side[1]
        elif i is not None:  # a window term, times the other side
            k = i - _P
            out = self.base * self.side[1 - (k >> 1)] * self.win[k]
        if w:
            assert self.w_w is not None  # the level keeps weights (``terms``)
            out = self.w_w if out is None else np.add(out, self.w_w, out=out)
        if o:
            assert self.w_o is not None  # the level keeps outputs
            out = self.w_o if out is None else out + self.w_o
        assert out is not None  # a dim that binds (``binds``) has a term
        return out

    def grow(self, d: int, f: np.ndarray, fm1: np.ndarray, slope: np.ndarray) -> None:
        """Dim d's extent times f (float; fm1 = f - 1; slope: ``slope(d)`` before)."""
        self.slack -= fm1 * slope
        w, o, i = self.terms[d]
        if w:
            assert self.w_w is not None  # the level keeps weights (``terms``)
            self.w_w *= f
        if o:
            assert self.w_o is not None  # the level keeps outputs
            self.w_o *= f
        if i == _LINEAR:
            self.base *= f
        elif i is not None:  # a window term, and the side it belongs to
            k = i - _P
            self.win[k] *= f
            a = k >> 1
            np.add(self.win[2 * a], self.win[2 * a + 1], out=self.side[a])
            self.side[a] += self.const[a]


# ---- the plan of a space ---------------------------------------------------------------------
#: A spatial slot: (level, axis 0 = x / 1 = y, fan-out left after fixed factors, its dims).
SpatialSlot = tuple[int, int, int, list[int]]


class _Plan:
    """Everything about a space the sampler needs, computed once per space."""

    def __init__(self, space: Space):
        nl = space.nl
        ext = space.extent
        self.nl = nl
        self.fixed_t, self.fixed_x, self.fixed_y = _fixed_factors(space)
        root = [-(-int(ext[d]) // space.fixed_product(d)) for d in range(NUM_DIMS)]
        self.spatial, slots = _spatial_slots(space, root, self.fixed_x, self.fixed_y)
        #: What can be left of each dim that has something left to place (root > 1).
        self.lattices = {
            d: _lattice(root[d], tuple(slots[d])) for d in range(NUM_DIMS) if root[d] > 1
        }
        self.free = list(self.lattices)
        self.home = _homes(space)  # the level that takes what is left of a dim
        # a dim whose home is below the top takes all that is left there, first, so that the
        # other dims of that level fit around it
        self.forced = [[d for d in self.free if self.home[d] == li] for li in range(nl - 1)]
        self.temporal = [
            [
                d
                for d in self.free
                if space.allow_t[li, d] and not space.fixed_t[li, d] and self.home[d] != li
            ]
            for li in range(nl - 1)
        ]
        self.steps = sum(len(s[3]) for s in self.spatial) + sum(len(x) for x in self.temporal)
        self.finite = [
            li
            for li in range(nl)
            if np.isfinite(space.cap_bits[li]) and (space.keep[li] * space.bits[li]).any()
        ]
        #: per level, the spatial slots' dims by axis, and the fixed factors (dim, factor)
        #: that scale its tiles (``_capacities``)
        self.slot_dims = {(li, axis): dims for li, axis, _, dims in self.spatial}
        self.fixed_scales = [
            [
                (int(d), int(fixed[li, d]))
                for fixed in (self.fixed_x, self.fixed_y, self.fixed_t)
                for d in np.flatnonzero(fixed[li] > 1)
            ]
            for li in range(nl)
        ]
        self.rank_groups = _rank_groups(space)
        self.movable = _movable(space)
        self.dtype = _capacity_dtype(space, self.finite)


def _fixed_factors(space: Space) -> tuple[Factors, Factors, Factors]:
    """The fixed factors, ``int32[level, dim]``: temporal (1 where none); spatial on x when
    allowed there (or nowhere), else on y."""
    nl = space.nl
    fixed_t = np.where(space.fixed_t > 0, space.fixed_t, 1).astype(np.int32)
    fixed_x = np.ones((nl, NUM_DIMS), dtype=np.int32)
    fixed_y = np.ones((nl, NUM_DIMS), dtype=np.int32)
    for li in range(nl):
        for d in range(NUM_DIMS):
            f = space.fixed_s[li, d]
            if f:
                on_x = space.allow_sx[li, d] or not space.allow_sy[li, d]
                (fixed_x if on_x else fixed_y)[li, d] = f
    return fixed_t, fixed_x, fixed_y


def _spatial_slots(
    space: Space, root: list[int], fixed_x: Factors, fixed_y: Factors
) -> tuple[list[SpatialSlot], list[list[int]]]:
    """The spatial slots a sample fills (a fan-out with room after its fixed factors and a
    dim that may take it), and per dim the fan-outs of the slots it may take, in order."""
    ext = space.extent
    spatial: list[SpatialSlot] = []
    slots: list[list[int]] = [[] for _ in range(NUM_DIMS)]
    for li, (fx, fy) in enumerate(space.fanouts):
        for axis, (limit0, allow, fixed) in enumerate(
            (
                (fx, space.allow_sx[li], fixed_x[li]),
                (fy, space.allow_sy[li], fixed_y[li]),
            )
        ):
            limit = limit0 // int(fixed.prod())
            dims = [
                d
                for d in range(NUM_DIMS)
                if allow[d] and ext[d] > 1 and not space.fixed_s[li, d] and root[d] > 1
            ]
            if limit0 > 1 and limit > 1 and dims:
                spatial.append((li, axis, limit, dims))
                for d in dims:
                    slots[d].append(limit)
    return spatial, slots


def _homes(space: Space) -> list[int]:
    """Per dim, the level that takes what is left of it: the top, unless the dim may loop
    only below it (then the outermost level it may loop at)."""
    top = space.nl - 1
    homes = []
    for d in range(NUM_DIMS):
        levels = [li for li in range(space.nl) if space.allow_t[li, d] and not space.fixed_t[li, d]]
        homes.append(top if top in levels or not levels else levels[-1])
    return homes


def _rank_groups(space: Space) -> list[tuple[Int64s, list[int]]]:
    """The loop orders of each level (``_rank_table``: only the dims that can loop there,
    extent > 1 and allowed or fixed), the levels that share one table grouped."""
    ext = space.extent
    ranks = [
        _rank_table(
            tuple(space.order_prefix[li]),
            tuple(
                d
                for d in range(NUM_DIMS)
                if (ext[d] > 1 and space.allow_t[li, d]) or space.fixed_t[li, d] > 1
            ),
        )
        for li in range(space.nl)
    ]
    groups: dict[int, list[int]] = {}
    for li, table in enumerate(ranks):
        groups.setdefault(id(table), []).append(li)
    return [(ranks[levels[0]], levels) for levels in groups.values()]


def _movable(space: Space) -> npt.NDArray[np.bool_]:
    """``bool[3 * level, dim]``: the slots a local move may put a factor in (temporal, fan-out
    x, fan-out y, by level): allowed, a fan-out of more than one, no fixed factor."""
    nl = space.nl
    movable = np.concatenate([space.allow_t, space.allow_sx, space.allow_sy])
    for li, (fx, fy) in enumerate(space.fanouts):
        movable[nl + li] &= fx > 1
        movable[2 * nl + li] &= fy > 1
    fixed = np.concatenate([space.fixed_t, space.fixed_s, space.fixed_s]) > 0
    result: npt.NDArray[np.bool_] = movable & ~fixed
    return result


def _capacity_dtype(space: Space, finite: list[int]) -> FloatType:
    """The float type capacities are tracked in, in whole bits: float32 is exact while the
    bits stay below 2**24 (with room for a window's stride), else float64."""
    layer = space.layer
    stride = max(layer.wstride, layer.hstride, layer.wdilation, layer.hdilation)
    caps = [space.cap_bits[li] for li in finite]
    return np.float32 if max(caps, default=0) * stride * 4 < 1 << 24 else np.float64


def _plan(space: Space) -> _Plan:
    plan = space.__dict__.get("_sampler_plan")
    if plan is None:
        plan = space.__dict__["_sampler_plan"] = _Plan(space)
    return plan


@functools.lru_cache(maxsize=64)
def _rank_table(prefix: tuple[int, ...], free: tuple[int, ...]) -> np.ndarray:
    """int8[order, dim] viewed as int64[order]: the rank (0 = innermost) of every dim for
    every loop order that starts (innermost) with ``prefix``, then the ``free`` dims in any
    order, then the others (loops that cannot exist at the level: their place is moot)."""
    rest = [d for d in free if d not in prefix]
    moot = [d for d in range(NUM_DIMS) if d not in prefix and d not in rest]
    orders = list(itertools.permutations(rest))
    perms = np.array(orders, dtype=np.int64).reshape(len(orders), len(rest))
    fixed = np.array(prefix, dtype=np.int64), np.array(moot, dtype=np.int64)
    order = np.concatenate(
        [np.tile(fixed[0], (len(perms), 1)), perms, np.tile(fixed[1], (len(perms), 1))], 1
    )
    rank = np.empty((len(order), 8), dtype=np.int8)
    np.put_along_axis(rank[:, :NUM_DIMS], order, np.arange(NUM_DIMS, dtype=np.int8)[None], 1)
    return rank.view(np.int64).ravel()


# ---- sampling --------------------------------------------------------------------------------
class _Uniforms:
    """A batch's 16-bit uniforms, one row (``[batch]``) per choice, handed out in order."""

    def __init__(self, rows: npt.NDArray[np.uint16]):
        self.rows = rows
        self.used = 0

    def next(self) -> npt.NDArray[np.uint16]:
        """The next choice's row."""
        row: npt.NDArray[np.uint16] = self.rows[self.used]
        self.used += 1
        return row


def sample(space: Space, n: int, rng: np.random.Generator, blocks: int = 1) -> MappingBatch:
    """``n`` mappings of ``space`` (deterministic for the generator's state).

    The dims take their factors in a random order (which one gets a fan-out or a buffer
    first), one order per call: ``blocks`` > 1 draws the batch in that many blocks (of at least
    250 mappings), each with its own order, for a more diverse batch at some cost in speed.
    """
    blocks = max(1, min(blocks, n // 250))
    if blocks > 1:
        sizes = [len(part) for part in np.array_split(np.arange(n), blocks)]
        return MappingBatch.concat([sample(space, k, rng) for k in sizes])
    plan = _plan(space)
    nl = plan.nl
    t = np.repeat(plan.fixed_t[:, :, None], n, axis=2)  # [level, dim, batch]
    sx = np.repeat(plan.fixed_x[:, :, None], n, axis=2)
    sy = np.repeat(plan.fixed_y[:, :, None], n, axis=2)
    # uniforms: 32 bits per level (loop orders), 16 bits per choice and for the preference
    raw = rng.bit_generator.random_raw(-(-(nl * n * 4 + (plan.steps + 1) * n * 2) // 8))
    raw = raw.view(np.uint8)
    pick = raw[: nl * n * 4].view(np.uint32).reshape(nl, n)
    u = raw[nl * n * 4 :].view(np.uint16)[: (plan.steps + 1) * n].reshape(plan.steps + 1, n)
    a = (u[-1].astype(np.int64) * len(_ALPHAS)) >> _BITS  # the preference of each sample
    z = {d: a * lat.size + lat.root for d, lat in plan.lattices.items()}
    uniforms = _Uniforms(u)
    _spatial_factors(plan, (sx, sy), z, uniforms, rng)
    for d, lat in plan.lattices.items():
        z[d] = z[d] * lat.scale
    _temporal_factors(space, plan, (t, sx, sy), z, a, uniforms, rng)
    for d, lat in plan.lattices.items():
        t[plan.home[d], d] *= lat.rest[z[d] // lat.scale]
    batch = MappingBatch(t, sx, sy, _orders(plan, pick), space.keep.copy())
    for li, op in space.stationary:
        make_stationary(space, batch, li, op)
    for li, op in space.reuse:
        make_reuse(batch, li, op)
    return batch


def _spatial_factors(
    plan: _Plan,
    fanouts: tuple[Factors, Factors],
    z: dict[int, Int64s],
    uniforms: _Uniforms,
    rng: np.random.Generator,
) -> None:
    """Each spatial slot's factors (in place in ``fanouts``: x, y), favouring a full fan-out:
    the slot's dims in a random order, each taking a factor of the fan-out left."""
    for li, axis, limit, dims in plan.spatial:
        arr = fanouts[axis]
        left = None  # index of the fan-out left among _limits(limit)
        for d in rng.permutation(dims):
            d = int(d)
            table, nlim = plan.lattices[d].spatial(limit)
            row = z[d] * (nlim << table.log) + ((nlim - 1 if left is None else left) << table.log)
            out = table.draw(row, uniforms.next())
            arr[li, d] = out & _LOW
            payload = out >> 32
            z[d] = payload & 0xFFFF
            left = payload >> 16


def _temporal_factors(
    space: Space,
    plan: _Plan,
    factors: tuple[Factors, Factors, Factors],
    z: dict[int, Int64s],
    a: Int64s,
    uniforms: _Uniforms,
    rng: np.random.Generator,
) -> None:
    """The temporal factors below the top level (in place in ``factors``' first, t),
    innermost level first, each tile within its level's capacity and every capacity above
    (their tiles contain it): a level's forced dims take all that is left, then its other
    dims in a random order a divisor of what is left that still fits."""
    t, sx, sy = factors
    caps = _capacities(space, plan, sx, sy, t.shape[2])
    for li in range(plan.nl - 1):
        caps = [c for c in caps if c.level >= li]
        binds = {d: [c for c in caps if c.binds(d)] for d in plan.lattices}
        for d in plan.forced[li]:
            lat = plan.lattices[d]
            f = lat.rest[z[d] // lat.scale]
            t[li, d] = f
            z[d] = a * (lat.size * lat.scale)  # state 0: nothing left
            ff = f.astype(plan.dtype)
            fm1 = ff - 1.0
            for c in binds[d]:
                c.grow(d, ff, fm1, c.slope(d))
        if not plan.temporal[li]:
            continue
        for d in rng.permutation(plan.temporal[li]):
            d = int(d)
            binding = [(c, c.slope(d)) for c in binds[d]]
            factor, z[d] = _temporal_factor(plan.lattices[d], z[d], binding, uniforms.next())
            t[li, d] = factor
            if binding:
                ff = factor.astype(plan.dtype)
                fm1 = ff - 1.0
                for c, slope in binding:
                    c.grow(d, ff, fm1, slope)


def _temporal_factor(
    lat: _Lattice,
    z: Int64s,
    binding: list[tuple[_Capacity, Floats]],
    u: npt.NDArray[np.uint16],
) -> tuple[Int64s, Int64s]:
    """One dim's temporal factor at one level and its next state: a divisor of what is left
    (state ``z``) no larger than the room every ``binding`` capacity leaves (its slack over
    the dim's slope, plus one)."""
    if binding:
        room: Floats | None = None
        for c, slope in binding:
            r = c.slack / slope
            room = r if room is None else np.minimum(room, r, out=room)
        assert room is not None  # binding is not empty
        room += 1.0
        np.minimum(room, lat.top, out=room)
        row = lat.fitting(z, room.astype(np.int64))
    else:
        row = lat.row[z + lat.full]
    out = lat.temporal.draw(row, u)
    return out & _LOW, out >> 32


def _capacities(
    space: Space, plan: _Plan, sx: np.ndarray, sy: np.ndarray, n: int
) -> list[_Capacity]:
    """A ``_Capacity`` per level of finite capacity, from the fixed and spatial factors."""
    out = []
    extent: list[Extent] = [1.0] * NUM_DIMS  # whole numbers: exact in any order
    for li in range(plan.finite[-1] + 1 if plan.finite else 0):
        for axis, arr in ((0, sx), (1, sy)):
            for d in plan.slot_dims.get((li, axis), ()):
                extent[d] = extent[d] * arr[li, d]
        for d, f in plan.fixed_scales[li]:
            extent[d] = extent[d] * f
        if li in plan.finite:
            out.append(_Capacity(space, li, extent, n, plan.dtype))
    return out


def _orders(plan: _Plan, pick: np.ndarray) -> np.ndarray:
    """Loop orders from 32-bit uniforms ``pick[level, batch]`` (levels that share a table of
    orders in one lookup)."""
    nl, n = pick.shape
    rank = np.empty((nl, NUM_DIMS, n), dtype=np.int8)
    for table, levels in plan.rank_groups:
        if len(table) == 1:
            rank[levels] = table.view(np.int8)[None, :NUM_DIMS, None]
            continue
        rows = table[(pick[levels].astype(np.int64) * len(table)) >> 32]  # [level, batch]
        rank[levels] = (
            rows.view(np.int8).reshape(len(levels), n, 8)[:, :, :NUM_DIMS].transpose(0, 2, 1)
        )
    return rank


def make_stationary(space: Space, batch: MappingBatch, li: int, op: Operand) -> None:
    """Move loops so that ``op`` is never refetched into level ``li`` (in place).

    Above the level, the loops that do not index the operand go innermost in each level, and
    such loops above the first level that has a relevant loop move down into that level.
    """
    t, rank = batch.factors_t, batch.rank
    rel = _REL[op]
    n = batch.size
    first = np.full(n, -1)
    for m in range(li + 1, t.shape[0]):
        has = (t[m][rel] > 1).any(axis=0)
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
        rank[m] = _reranked(rank[m].astype(np.int16) + np.where(rel[:, None], NUM_DIMS, 0))


def make_reuse(batch: MappingBatch, li: int, op: Operand) -> None:
    """Put a loop that does not index ``op`` innermost in the first active level above ``li``
    (in place), when that level has one."""
    t, rank = batch.factors_t, batch.rank
    rel = _REL[op]
    done = np.zeros(batch.size, dtype=bool)
    for m in range(li + 1, t.shape[0]):
        active = t[m] > 1
        has = active.any(axis=0) & ~done
        key = rank[m].astype(np.int16) + np.where((rel[:, None] | ~active), NUM_DIMS, 0)
        rank[m] = np.where(has[None, :], _reranked(key), rank[m])
        done |= has


def _reranked(key: np.ndarray) -> np.ndarray:
    """Ranks (0 = innermost) that order the dims by ``key[dim, batch]`` (distinct keys)."""
    ranks: npt.NDArray[np.int8] = (key[None, :, :] < key[:, None, :]).sum(axis=1, dtype=np.int8)
    return ranks


def neighbours(
    space: Space, parents: MappingBatch, per_parent: int, rng: np.random.Generator
) -> MappingBatch:
    """``per_parent`` random neighbours of each mapping.

    A move takes one prime factor of one dimension from one slot (a level's temporal loop or a
    fan-out) to another, or swaps two loops of one level.
    """
    n = parents.size * per_parent
    nl = space.nl
    parent = np.repeat(np.arange(parents.size), per_parent)
    stacked = np.concatenate([parents.factors_t, parents.spatial_x, parents.spatial_y])
    slots = np.take(stacked, parent, axis=2)  # [3 * level, dim, n]: temporal, fan-out x, y
    rank = np.take(parents.rank, parent, axis=2)
    movable = _plan(space).movable  # [3 * level, dim]
    dims = np.flatnonzero(space.extent > 1)
    ns = len(slots)
    # 16-bit uniforms: a priority per slot for the source and for the destination, then
    # move or swap, the dim, and the level and two dims of a swap
    words = (2 * ns + 5) * n
    u = rng.bit_generator.random_raw(-(-words // 4)).view(np.uint16)[:words]
    u = u.reshape(2 * ns + 5, n)
    misc = u[2 * ns :].astype(np.int64)
    is_move = misc[0] < int(0.7 * _ONE) if dims.size else np.zeros(n, dtype=bool)
    rows = np.flatnonzero(is_move)
    if rows.size:
        d = dims[(misc[1, rows] * len(dims)) >> _BITS]
        here = slots[:, d, rows]  # [slot, move]
        src_ok = (here > 1) & movable[:, d]
        dst_ok = movable[:, d]
        src = (src_ok * u[:ns, rows]).argmax(axis=0)
        dst = (dst_ok * u[ns : 2 * ns, rows]).argmax(axis=0)
        i = np.arange(rows.size)
        valid = np.flatnonzero(src_ok[src, i] & dst_ok[dst, i] & (src != dst))
        src, dst, d, col = src[valid], dst[valid], d[valid], rows[valid]
        p = _smallest_prime(here[src, valid])
        slots[src, d, col] //= p
        slots[dst, d, col] *= p
    swap = np.flatnonzero(~is_move)
    if swap.size:  # loop swaps for the others
        level = (misc[2, swap] * nl) >> _BITS
        a = (misc[3, swap] * NUM_DIMS) >> _BITS
        b = (misc[4, swap] * NUM_DIMS) >> _BITS
        ra = rank[level, a, swap]
        rank[level, a, swap] = rank[level, b, swap]
        rank[level, b, swap] = ra
    return MappingBatch(slots[:nl], slots[nl : 2 * nl], slots[2 * nl :], rank, parents.keep)


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
