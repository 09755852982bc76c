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
* **Warm.** A design of the same structure (the same levels, kept operands and layer
  view; another dataflow, other capacities, fan-outs, widths or prices) starts the layer's
  search from the best mappings of its ``neighbours`` nearest designs (by the log2 distance
  of their capacities, fan-outs and word widths), each re-validated on the new design
  (``repaired``: loops and fan-outs the dataflow does not allow there run in time where it
  does, a fan-out too small for a seed's spatial factors gets the excess as time, a level
  too small for its tiles has loops moved out to the level above, loops that break a
  level's stationarity move out; a seed that still does not fit, or breaks another of the
  dataflow's rules, is priced invalid, never trusted), then refined with a smaller budget
  (``FastMapper``:
  ``warm_samples`` random mappings beside the seeds, ``warm_patience`` rounds without gain).
  The design's alternatives without some levels (``magnet.design.searched_designs``: a
  dataflow's optional collectors) start from the same mappings, those levels' loops folded
  into the nearest level each keeps (``_projected``).
* **Searched.** Anything else is searched afresh.

A layer's record says which (``MapperStats.start``).

The Ray workers of a search each keep a store, and trade the outcomes of the searches
they run afresh (``Exchange``: a directory of the pool's, a file per worker, each such
outcome appended as it is found and read by the others before their next search): without
it, each worker searched every structure afresh itself, and two workers starting at once
searched the same shapes afresh side by side. Two workers that search afresh at once start
at different shapes (``Exchange.turn``), so that each reaches last the shapes the other
searched first. Warm outcomes stay with their worker: trading them too gave the same
``quickstart`` phase and kept a third more memory on each worker over 1,000 ``magnet``
designs (540 MB against 400 MB).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import pickle
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import numpy as np

from magnet.arch.spec import Arch
from magnet.design import Design, design_identity
from magnet.mapper.mapspace import Space
from magnet.mapping import (
    LevelLoops,
    Mapping,
    MappingBatch,
    check_structure,
    loops_batch,
)
from magnet.workload.dims import DIMS, RELEVANT, Operand, parse_dim

if TYPE_CHECKING:
    from magnet.mapper.mapper import MapOutcome

Start = Literal["searched", "warm", "exact"]
#: The searches of a layer shape a network maps (``magnet.mapper.whole_network``): its best
#: mapping, its best holding its weights, its best lean one.
Kind = Literal["best", "holding", "lean"]
#: What only an architecture's area sees (``Arch.controller``: area only), and its names.
AREA_ONLY = ("name", "template", "params", "controller")


def evaluation_identity(design: Design) -> str:
    """What prices a layer's mappings on ``design`` (``design_identity`` without what only
    the area sees, ``AREA_ONLY``), as its SHA-256 (the text is kilobytes long, and a store
    trades it with every outcome, ``Exchange``)."""
    return hashlib.sha256(design_identity(design, exclude=AREA_ONLY).encode()).hexdigest()


def structure_identity(design: Design) -> tuple[object, ...]:
    """What a seed's mapping needs to mean the same on another design: the levels' names
    and kept operands, the MACs' name and the layer view (not the dataflow: a seed is
    repaired to the design's, ``repaired``)."""
    arch = design.arch
    return (
        tuple((lvl.name, lvl.keeps) for lvl in arch.levels),
        arch.compute.name,
        arch.layer_view,
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


@dataclass(frozen=True)
class _Keys:
    """A design's identities (``evaluation_identity``, ``structure_identity``) and place
    (``arch_vector``)."""

    evaluation: str
    structure: tuple[object, ...]
    where: np.ndarray


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


#: Where a store keeps a kind of best mapping of a loop nest: (nest, structure, kind).
SeenKey = tuple[tuple[object, ...], tuple[object, ...], Kind]


@dataclass
class WarmStore:
    """The best mappings of each layer shape on the designs mapped so far (see the module
    docstring), by kind of search; ``neighbours``: how many seed a search; ``limit``: the
    designs kept per shape (the oldest dropped first)."""

    neighbours: int = 4
    limit: int = 64
    _seen: dict[SeenKey, list[_Seen]] = field(default_factory=dict)
    _known: dict[tuple[object, ...], Known] = field(default_factory=dict)
    #: the structures of the designs whose mappings are kept (``structure_identity``)
    _structures: set[tuple[object, ...]] = field(default_factory=set)
    #: each design's identities and place (``_keys``), by the design's id, with the design
    #: (an id reused by another object is not taken for it)
    _keys: dict[int, tuple[Design, _Keys]] = field(default_factory=dict)
    #: where this store trades what it learns with the stores of a search's other workers
    #: (``share``); None: it keeps its own
    exchange: Exchange | None = None

    def share(self, directory: str, workers: int) -> None:
        """Trade the outcomes of this store's searches afresh with the other stores sharing
        ``directory`` (a search's ``workers`` workers on this machine), from now on; a
        directory this process cannot write (another machine's) leaves the store alone."""
        if self.exchange is None or self.exchange.directory != directory:
            if self.exchange is not None:
                self.exchange.close()
            self.exchange = Exchange.join(directory, workers)

    def knows(self, design: Design) -> bool:
        """Whether mappings of designs of ``design``'s structure are kept (else its every
        search starts afresh)."""
        self._receive()
        return self._of(design).structure in self._structures

    def _receive(self) -> None:
        """Take what the other stores of the exchange published since the last call."""
        if self.exchange is not None and self.exchange.trading:
            for record in self.exchange.receive():
                self._take(*record)

    def _of(self, design: Design) -> _Keys:
        """``design``'s identities and place, made once per design (a network asks them for
        every layer shape)."""
        found = self._keys.get(id(design))
        if found is None or found[0] is not design:
            if len(self._keys) > 64:
                self._keys.clear()
            keys = _Keys(
                evaluation_identity(design), structure_identity(design), arch_vector(design.arch)
            )
            self._keys[id(design)] = found = (design, keys)
        return found[1]

    def exact(self, nest: tuple[object, ...], design: Design, mapper: str) -> Known | None:
        """The outcome of loop nest ``nest`` by ``mapper`` (its identity) on a design that
        prices it as ``design`` does (``evaluation_identity``), None: none yet."""
        self._receive()
        return self._known.get((nest, self._of(design).evaluation, mapper))

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
        kinds: tuple[Kind, ...] = ("best", "holding", "lean")
        seen: list[tuple[SeenKey, _Seen]] = [
            ((nest, self._of(on).structure, kind), _Seen(self._of(on).where, mapping))
            for kind, on, mapping in zip(kinds, (design, held, lean), maps, strict=True)
            if mapping is not None and on is not None
        ]
        record: Record = (
            (nest, self._of(design).evaluation, mapper),
            Known(outcome.status, outcome.reason, *maps),
            seen,
        )
        self._take(*record)
        afresh = outcome.result is None or outcome.result.start == "searched"
        if afresh and self.exchange is not None and self.exchange.trading:
            self.exchange.publish(record)

    def _take(
        self,
        key: tuple[object, ...],
        known: Known,
        seen: list[tuple[SeenKey, _Seen]],
    ) -> None:
        """Keep an outcome (``remember``'s, or another store's: ``Record``)."""
        self._known[key] = known
        for seen_key, one in seen:
            self._structures.add(seen_key[1])
            kept = self._seen.setdefault(seen_key, [])
            kept.append(one)
            if len(kept) > self.limit:
                del kept[0]

    def seeds(self, nest: tuple[object, ...], design: Design, kind: Kind) -> list[Mapping]:
        """The best mappings of the loop nest ``nest`` (``Layer.shape_key`` of its view) on
        the ``neighbours`` designs of ``design``'s structure nearest it (none: search
        afresh)."""
        keys = self._of(design)
        seen = self._seen.get((nest, keys.structure, kind), [])
        if not seen:
            return []
        distance = np.abs(np.stack([s.where for s in seen]) - keys.where).sum(axis=1)
        order = np.argsort(distance, kind="stable")[: self.neighbours]
        return [seen[int(i)].mapping for i in order]


#: How often an exchange that has found every other worker's file looks for new ones (a
#: worker Ray started again), in seconds.
RELIST_SECONDS = 0.5

#: What a store trades for an outcome (``WarmStore.remember``): its key for ``exact``, the
#: outcome, and its mappings as seeds, each with its key for ``seeds``.
Record = tuple[tuple[object, ...], Known, list[tuple[SeenKey, _Seen]]]


@dataclass
class Exchange:
    """A directory where the warm stores of a search's workers on one machine trade what
    they learn (``WarmStore.share``): each appends the outcomes of its searches afresh to a
    file of its own (``store-RANK``, its rank the order it joined in), one write a record,
    its length first, and reads the others' files as they grow, a record once it is whole.
    A directory gone (the search ended) or a file that cannot be read ends the trade, never
    a design."""

    directory: str
    rank: int
    workers: int
    fd: int
    #: each other store's file: its descriptor, the bytes read, and those of a record not
    #: yet whole
    peers: dict[str, tuple[int, int, bytes]] = field(default_factory=dict)
    listed: float = -math.inf
    #: False once a write or a read failed: the store then keeps its own
    trading: bool = True

    @classmethod
    def join(cls, directory: str, workers: int) -> Exchange | None:
        """Join the exchange at ``directory`` with a file of its own; None: the directory
        cannot be written (another machine's)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
        rank = 0
        while True:
            try:
                fd = os.open(os.path.join(directory, f"store-{rank}"), flags, 0o600)
            except FileExistsError:
                rank += 1
                continue
            except OSError:
                return None
            return cls(directory, rank, workers, fd)

    @property
    def turn(self) -> int:
        """This store's place among the search's workers (0 to ``workers`` - 1)."""
        return self.rank % self.workers

    def close(self) -> None:
        """Close the files this store writes and reads (another search's exchange next)."""
        for fd in [self.fd, *(peer[0] for peer in self.peers.values())]:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.peers.clear()
        self.trading = False

    def publish(self, record: Record) -> None:
        """Append ``record`` to this store's file."""
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            os.write(self.fd, struct.pack("<I", len(data)) + data)
        except OSError:  # a full disk: the store keeps its own from now on
            self.trading = False

    def receive(self) -> list[Record]:
        """The records the other stores published since the last call."""
        try:
            self._list()
            return [record for name in list(self.peers) for record in self._read(name)]
        except Exception:  # a file not as written (or gone): the store keeps its own
            self.trading = False
            return []

    def _list(self) -> None:
        """Open the files of stores that joined since the last look."""
        now = time.monotonic()
        if len(self.peers) >= self.workers - 1 and now - self.listed < RELIST_SECONDS:
            return
        self.listed = now
        own = f"store-{self.rank}"
        for name in os.listdir(self.directory):
            if name.startswith("store-") and name != own and name not in self.peers:
                self.peers[name] = (
                    os.open(os.path.join(self.directory, name), os.O_RDONLY),
                    0,
                    b"",
                )

    def _read(self, name: str) -> list[Record]:
        """The whole records of ``name``'s file not read yet."""
        fd, done, rest = self.peers[name]
        size = os.fstat(fd).st_size
        if size <= done:
            return []
        data = rest + os.pread(fd, size - done, done)
        out, at = [], 0
        while at + 4 <= len(data):
            (n,) = struct.unpack_from("<I", data, at)
            if at + 4 + n > len(data):
                break
            out.append(pickle.loads(data[at + 4 : at + 4 + n]))
            at += 4 + n
        self.peers[name] = (fd, size, data[at:])
        return out


def repaired(mapping: Mapping, space: Space, moves: int = 32) -> list[LevelLoops]:
    """The loops of every level of ``space`` (innermost first; each keeping what the level
    keeps), from ``mapping`` (a neighbouring design's) made a mapping of ``space`` where it
    can be: the loops of levels ``space`` lacks folded into the levels it has (``_projected``),
    spatial factors beyond a fan-out, or where the dataflow allows none, and temporal loops
    where it allows none run in time at the nearest level (that one or above) that allows
    them, the largest first; then the tiles of a level that does not fit its capacity shrink,
    a prime factor of its largest loop at a time (when it has none, of the largest loop over
    what it keeps at the nearest level below it) moving out to the nearest level above it
    that allows it (at most ``moves``, innermost first); last, the loops that break a level's
    stationarity move out (``_keep_stationary``). The result may still not be one (it then
    prices invalid)."""
    arch = space.arch
    order = [lvl.name for lvl in arch.inner_first]  # innermost first
    temporal, spatial = _projected(mapping, order)
    top = len(order) - 1
    allow_t = space.allow_t.tolist()  # [level][dim]

    def place(dim: str, factor: int, li: int) -> int:
        d = parse_dim(dim)
        at = next((lj for lj in range(li, top + 1) if allow_t[lj][d]), top)
        temporal[at][dim] = temporal[at].get(dim, 1) * factor
        return at

    for li, (fx, fy) in enumerate(arch.fanouts):
        for factors, limit, allow in (
            (spatial[li][0], fx, space.allow_sx),
            (spatial[li][1], fy, space.allow_sy),
        ):
            for dim in [d for d in factors if not allow[li, parse_dim(d)]]:
                place(dim, factors.pop(dim), li)
            while math.prod(factors.values()) > limit:
                dim = max(factors, key=lambda d: factors[d])
                place(dim, factors.pop(dim), li)
        for dim in [d for d in temporal[li] if not allow_t[li][parse_dim(d)]]:
            place(dim, temporal[li].pop(dim), li + 1 if li < top else li)
    level_factors = [[1.0] * len(order) for _ in DIMS]  # [dim][level]: each level's loops
    for li in range(len(order)):
        for factors in (temporal[li], *spatial[li]):
            for dim, f in factors.items():
                level_factors[parse_dim(dim)][li] *= f
    for _ in range(moves):
        bad = space.first_misfit(level_factors)  # each level's tile, innermost first
        if bad is None:
            break
        # its own loops, else those of the nearest level below over what it keeps
        kept = {d.name for op in Operand if space.keep[bad, op] for d in RELEVANT[op]}
        shrinkable = {}
        for lj in range(bad, -1, -1):
            shrinkable = {
                d: f for d, f in temporal[lj].items() if f > 1 and (lj == bad or d in kept)
            }
            if shrinkable:
                break
        if not shrinkable:
            break
        dim = max(shrinkable, key=lambda d: shrinkable[d])
        prime = _smallest_prime(shrinkable[dim])
        temporal[lj][dim] = shrinkable[dim] // prime
        level_factors[parse_dim(dim)][lj] /= prime
        level_factors[parse_dim(dim)][place(dim, prime, bad + 1)] *= prime
    for ls, op in space.stationary:
        _keep_stationary(temporal, ls, op, space)
    return [
        (li, {d: f for d, f in temporal[li].items() if f > 1}, *spatial[li], None)
        for li in range(len(order))
    ]


def _keep_stationary(temporal: list[dict[str, int]], ls: int, op: Operand, space: Space) -> None:
    """Make level ``ls`` keep ``op`` stationary (``stationary_ok``) in ``temporal`` (each
    level's loops, innermost level first, each outermost loop first): a loop over ``op``
    above it that some loop not over ``op`` runs around moves out to the outermost level, as
    its outermost loop (where that level allows it). Loops only move out, so no tile grows."""
    top = len(temporal) - 1
    relevant = {d.name for d in RELEVANT[op]}
    walk = [(m, d) for m in range(ls + 1, top + 1) for d in reversed(temporal[m])]  # inner first
    others = [i for i, (m, d) in enumerate(walk) if d not in relevant and temporal[m][d] > 1]
    if not others:
        return
    moved: dict[str, int] = {}
    for m, d in walk[: others[-1]]:
        if d in relevant and space.allow_t[top, parse_dim(d)]:
            moved[d] = moved.get(d, 1) * temporal[m].pop(d)
    for d in moved:
        moved[d] *= temporal[top].pop(d, 1)
    temporal[top] = {**moved, **temporal[top]}


def _projected(
    mapping: Mapping, order: list[str]
) -> tuple[list[dict[str, int]], list[tuple[dict[str, int], dict[str, int]]]]:
    """Each level of ``order`` (names, innermost first)'s temporal loops and fan-out x and y
    factors in ``mapping``, a mapping of an architecture with these levels and maybe more
    (the design an alternative without some levels leaves them out of, ``searched_designs``):
    the loops and factors of a level ``order`` lacks go to the nearest level outward it has,
    inside that level's own (a mapping lists every level of its design, outermost first,
    ``MappingBatch.mapping``)."""
    index = {name: i for i, name in enumerate(order)}
    temporal: list[dict[str, int]] = [{} for _ in order]
    spatial: list[tuple[dict[str, int], dict[str, int]]] = [({}, {}) for _ in order]
    folded: tuple[dict[str, int], ...] = ({}, {}, {})  # temporal, x, y of levels left out
    for lvl in reversed(mapping.levels):  # innermost first
        own = (lvl.temporal, lvl.spatial_x, lvl.spatial_y)
        if lvl.target not in index:
            folded = tuple(_nested(o, f) for o, f in zip(own, folded, strict=True))
            continue
        li = index[lvl.target]
        temporal[li] = _nested(lvl.temporal, folded[0])
        spatial[li] = (_nested(lvl.spatial_x, folded[1]), _nested(lvl.spatial_y, folded[2]))
        folded = ({}, {}, {})
    if any(folded):  # loops above every level the space has: the outermost runs them
        top = len(order) - 1
        temporal[top] = _nested(folded[0], temporal[top])
        spatial[top] = (_nested(folded[1], spatial[top][0]), _nested(folded[2], spatial[top][1]))
    return temporal, spatial


def _nested(outer: dict[str, int], inner: dict[str, int]) -> dict[str, int]:
    """The loops of ``outer`` around those of ``inner`` as one level's (outermost first; a
    dimension in both runs its product, where ``outer`` has it)."""
    merged = dict(outer)
    for dim, factor in inner.items():
        merged[dim] = merged.get(dim, 1) * factor
    return merged


def _smallest_prime(n: int) -> int:
    return next((p for p in range(2, math.isqrt(n) + 1) if n % p == 0), n)


def seed_batch(seeds: Sequence[Mapping], space: Space) -> MappingBatch | None:
    """``seeds`` as one batch of ``space``'s mappings: those that name only its levels, or
    every one of them and more (a mapping of the design that an alternative without some
    levels is searched for: ``_projected`` folds those levels' loops into the levels left),
    ``repaired`` to it, kept as the space keeps (a seed is a tiling and its loop orders;
    what it keeps is the space's); None: none. The tracker prices them like any mapping:
    one that no longer fits scores invalid."""
    names = {lvl.name for lvl in space.arch.levels}
    batches = []
    for seed in seeds:
        named = {lvl.target for lvl in seed.levels}
        if named <= names or names <= named:  # else a seed of another structure
            batches.append(loops_batch(space.arch, repaired(seed, space)))
    if not batches:
        return None
    batch = replace(MappingBatch.concat(batches), keep=space.keep.copy())
    check_structure(batch, space.arch, "warm start")  # never raises: repaired fan-outs fit
    return batch
