"""Pipelining a network across groups of a package's chiplets (``magnet.model.pipeline_result``).

Every distinct layer shape is mapped once on each band height (1 to all the rows of the
package's mesh: ``map_network`` on the package cut to that band), widest first: the whole
package afresh, as the network run layer after layer maps it, and each narrower band's
searches started from the wider bands' best mappings (``magnet.mapper.warm``), which costs
a band about a fifth of a fresh search's CPU for mappings as good by the mapper's
objective. Mapping every band afresh took 2.6-2.8x the CPU for the same rates on average
(ResNet-50 and ResNet-18 pipelined on simba-package-36, seeds 0-3: 975 and 5,663 images/s
against 974 and 5,657 warm, ``benchmarks/bench_package.py``); narrowest band first,
ResNet-18 lost 19 % (4,567). Then the layers, in order, are split into stages of whole
bands by dynamic programming over (layers, rows used): the split whose slowest stage is
fastest (the shortest interval, the most batches per second), ties to the shortest latency
of a batch, using every row. The stages share the package's DRAM, so no interval is shorter
than its time for a batch's traffic (``floor``): splits faster than that are equally fast,
and the one with the shortest latency is taken.

The split estimates a stage's time as the sum of its layers' times, twice over: each layer
mapped alone (activations through DRAM), and each layer as it runs when the whole network
runs on that band (activations kept on chip where they fit, ``NetworkResult.runs``: exact
inside a stage, optimistic at its ends, where an activation crossing to another stage may
not stay). The best plans of each estimate (``FRONTIER``, the best of each way to end the
last stage) and the plan of one stage on the whole package are then priced as they run
(``PipelineResult``: activations on chip where they fit, across stages over the links),
and the best of them by the same criterion (interval, then latency) is the result. The
one-stage plan prices as the network run layer after layer does, so a pipeline is never
slower than the same design layer by layer.

Fused (``fuse``): the splits whose every stage's weights fit its band (``weights_fit``,
``weights_fit_loosely``) are added, every plan is priced both as a pipeline and fused
depth-first (``PipelineResult``'s ``depth_first``), so are Stream's fused groups one after
another (``fused_groups``), and the plan minimising the mapper's objective for a batch is
taken; one stage on every chiplet among them, so a fused result is never slower under the
latency objective.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from magnet.arch.spec import Arch, StorageLevel
from magnet.cost import ArchCosts
from magnet.design import Design, on_arch
from magnet.mapper.mapper import MapOutcome, Mapper, get_mapper
from magnet.mapper.warm import WarmStore
from magnet.mapper.whole_network import LEAN_SHARE, map_network
from magnet.model.evaluate import Result, tile_bits, weight_home
from magnet.model.network_result import NetworkResult, fused_heads
from magnet.model.pipeline_result import PipelineResult, PlansShared, Stage, package_level
from magnet.model.postprocess import price_postprocess, require_unit
from magnet.workload.dims import Operand
from magnet.workload.layer import ShapeKey
from magnet.workload.network import Network

#: A plan: (start, end, rows) of each stage, entries start to end (exclusive) on ``rows``.
Plan = list[tuple[int, int, int]]
#: Each stage's fused group (``PipelineResult.groups``).
Groups = tuple[int, ...]
#: Cycles of each entry (its repeats included) on each band height: what a split adds up.
Cycles = dict[int, list[float]]
#: Plans of each estimate priced as they run: the best way to end the last stage, and the
#: next best ways (each the best plan before its last stage). The estimates leave out what
#: the stages share (DRAM, the links into the package), which sets most pipelines' pace, so
#: their ranking is rough: with 3, ResNet-50 on simba-package-36 missed its best plan when
#: the activations' rule changed (908 images/s, one stage, against 941 with 10); pricing a
#: plan takes about 30 ms against the bands' 6 s of mapping.
FRONTIER = 10


@dataclass
class PipelineOutcome:
    """The pipelined network (None, with the ``reason``, when no split runs every layer)
    and what mapping it took."""

    result: PipelineResult | None
    reason: str | None
    mappings_evaluated: int
    cached: int


def map_pipeline(
    network: Network,
    design: Design,
    mapper: str | Mapper[Any] = "fast",
    *,
    progress: Callable[[MapOutcome, int, int], None] | None = None,
    cache: MutableMapping[tuple[Any, ...], MapOutcome] | None = None,
    fuse: bool = False,
    warm: WarmStore | None = None,
    **options: Any,
) -> PipelineOutcome:
    """``network`` pipelined across groups of ``design``'s chiplets (see the module
    docstring); ``MagnetError`` for a design of one chip. ``fuse``: each plan is also priced
    fused depth-first (``PipelineResult.depth_first``: a batch passed from stage to stage a
    tile at a time by the stages whose weights stay on chip), and the plan, fused or not,
    that minimises the mapper's objective for a batch (its energy and latency) is taken; the
    plan of one stage, layer after layer, among them. ``warm``: the best mappings of
    earlier designs, to start each band's searches from (``magnet.mapper.warm``; None: a
    store of this call's own). The bands are mapped widest first, each narrower band's
    searches started from the wider bands' best (see the module docstring)."""
    package_level(design.arch)  # a package, or bad input
    require_unit(design.arch, [e.layer for e in network.layers])
    m = get_mapper(mapper, **options)
    fx, fy = design.arch.chiplet_grid
    rows = max(fx, fy)
    shapes = len(network.unique_layers(mapped=True))
    heights = range(1, rows + 1)
    banded = {
        h: design if h == rows else on_arch(design, _band(design, h, fx, fy)) for h in heights
    }
    archs = {h: band.arch for h, band in banded.items()}
    # by height, in order (the planner's ties go to the first); filled widest first
    bands: dict[int, dict[ShapeKey, Result]] = {h: {} for h in heights}
    holding: dict[int, dict[ShapeKey, Result]] = {h: {} for h in heights}
    lean: dict[int, dict[ShapeKey, Result]] = {h: {} for h in heights}
    evaluated = cached = 0
    store = WarmStore() if warm is None else warm
    for n, h in enumerate(reversed(heights)):  # widest first: the module docstring

        def step(outcome: MapOutcome, done: int, _total: int, n: int = n) -> None:
            if progress is not None:
                progress(outcome, n * shapes + done, rows * shapes)

        out = map_network(
            network, banded[h], m, progress=step, stop_on_failure=False, cache=cache, warm=store
        )
        bands[h] = {k: o.result for k, o in out.outcomes.items() if o.result is not None}
        holding[h] = {k: o.holding for k, o in out.outcomes.items() if o.holding is not None}
        lean[h] = {k: o.lean for k, o in out.outcomes.items() if o.lean is not None}
        evaluated, cached = evaluated + out.mappings_evaluated, cached + out.cached
    weights = (m.objective.energy, m.objective.latency)
    # with fuse, also the splits whose stages' weights fit their bands: as the plan checks
    # them, and by their size alone beside a lean mapping's share (a looser test, for the
    # stages the plan can then fit with lean mappings streaming)
    fit = weights_fit(network, archs, holding) if fuse else None
    rules = (fit, weights_fit_loosely(network, archs)) if fit is not None else ()
    found = estimates(network, design.arch, design.costs, archs, bands, holding, lean, weights)
    plans = candidates(network, found, max(archs), rules)
    if not plans:
        reason = f"no split of {network.name!r} into stages runs every layer on {design.name!r}"
        return PipelineOutcome(None, reason, evaluated, cached)
    shared = PlansShared()  # the plans' stage designs and post-processing prices

    def priced_as(plan: Plan, depth_first: bool = False, groups: Groups = ()) -> PipelineResult:
        return _pipelined(
            network, design, archs, bands, holding, lean, weights, plan, depth_first, groups, shared
        )

    priced = [priced_as(p) for p in plans]
    if fit is None:
        result = min(priced, key=lambda r: (r.interval_cycles, r.latency_cycles))
        return PipelineOutcome(result, None, evaluated, cached)
    fused = [priced_as(p, depth_first=True) for p in plans]
    for cycles in (found.kept, found.alone):
        cut = fused_groups(cycles, max(archs), fit)
        if cut is not None:
            fused.append(priced_as(cut[0], True, cut[1]))
    result = min(priced + fused, key=lambda r: _score(r, weights))
    return PipelineOutcome(result, None, evaluated, cached)


def weights_fit(
    network: Network, archs: dict[int, Arch], holding: dict[int, dict[ShapeKey, Result]]
) -> StageFits:
    """Whether entries j..i may be a fused stage on h rows: each MAC entry has a mapping on
    the band that holds its weights (``holding[h]``), and all of them fit each instance of
    the band's weight home as the plan checks it (``magnet.model.network_result._weights_fit``):
    beside a region for the largest tile any of them keeps there besides its weights, their
    weights spread over the instances each uses, so that a batch can pass a tile at a time
    without reading them again."""
    held: dict[int, list[float]] = {}
    stream: dict[int, list[float]] = {}
    capacity: dict[int, float] = {}
    for h, arch in archs.items():
        home, level = _weight_level(arch)
        held[h], stream[h] = [], []
        for e in network.layers:
            run = holding.get(h, {}).get(e.layer.shape_key())
            if e.layer.is_postprocess:
                held[h].append(0.0)
                stream[h].append(0.0)
            elif run is None or home is None or level is None or run.weight_home != home:
                held[h].append(math.inf)
                stream[h].append(0.0)
            else:
                used = float(run.batch.counts.instances[home, 0]) / level.instances
                held[h].append(run.held_weight_bits * used * e.repeat)
                stream[h].append(tile_bits(run, home, tuple(Operand)) - run.held_weight_bits)
        capacity[h] = math.inf
        if level is not None and level.capacity_bits is not None:
            capacity[h] = float(level.capacity_bits)
    return StageFits(held, stream, capacity)


def weights_fit_loosely(network: Network, archs: dict[int, Arch]) -> StageFits:
    """Whether entries j..i's weights, by their size alone, fit the band's weight buffers
    (the outermost level keeping weights, all its instances) beside a lean mapping's share
    of each (``LEAN_SHARE``)."""
    bits = [
        0.0 if e.layer.is_postprocess else e.layer.operand_size(Operand.W) * e.repeat
        for e in network.layers
    ]
    room = {}
    for h, arch in archs.items():
        _, level = _weight_level(arch)
        if level is None or level.capacity_bits is None:
            room[h] = 0.0 if level is None else math.inf
            continue
        words = level.capacity_bits * (1 - LEAN_SHARE) / level.bits(Operand.W)
        room[h] = words * level.instances
    return StageFits({h: bits for h in archs}, {h: [0.0] * len(bits) for h in archs}, room)


def _weight_level(arch: Arch) -> tuple[int | None, StorageLevel | None]:
    """The level weights stay in on ``arch`` (``weight_home``): its index and itself."""
    home = weight_home(arch)
    return home, None if home is None else arch.inner_first[home]


class StageFits:
    """Which stages a rule of weights that fit allows (``weights_fit``,
    ``weights_fit_loosely``): entries j..i on h rows when their ``held[h]`` bits fit
    ``capacity[h]`` beside the widest of their ``stream[h]`` tiles. Asked for one stage (a
    call), or for every stage of a band at once (``table``, which ``frontier`` asks: 144,000
    calls on fused ResNet-50 on simba-package-36 before), the same sums either way."""

    def __init__(
        self,
        held: dict[int, list[float]],
        stream: dict[int, list[float]],
        capacity: dict[int, float],
    ) -> None:
        self.held, self.stream, self.capacity = held, stream, capacity
        self._checks = {h: _fits(held[h], stream[h], capacity[h]) for h in held}
        self._tables: dict[int, np.ndarray] = {}

    def __call__(self, j: int, i: int, h: int) -> bool:
        return self._checks[h](j, i)

    def table(self, h: int) -> np.ndarray:
        """bool[i, j]: whether entries j..i may be a stage on h rows (j < i; the rest
        unset)."""
        if h not in self._tables:
            stream = np.asarray(self.stream[h], dtype=float)
            n = len(stream)
            total = np.concatenate([[0.0], np.cumsum(np.asarray(self.held[h], dtype=float))])
            widest = np.zeros((n + 1, n + 1))  # [i, j]: the largest of stream[j:i]
            for j in range(n):
                widest[j + 1 :, j] = np.maximum.accumulate(stream[j:])
            with np.errstate(invalid="ignore"):  # inf - inf: nan, which fits nothing
                self._tables[h] = total[:, None] - total[None, :] <= self.capacity[h] - widest
        return self._tables[h]


def _fits(held: list[float], stream: list[float], capacity: float) -> Callable[[int, int], bool]:
    """Whether entries j..i's ``held`` bits fit beside the widest of their ``stream`` tiles."""
    total = [0.0, *itertools.accumulate(held)]
    widest = _range_max(stream)
    return lambda j, i: total[i] - total[j] <= capacity - widest(j, i)


def _range_max(values: list[float]) -> Callable[[int, int], float]:
    """The largest of ``values[j:i]`` (0 for none), each asked in constant time (a sparse
    table of the maxima of spans of 2^k)."""
    table = [list(values)]
    k = 1
    while 2**k <= len(values):
        prev, half = table[-1], 2 ** (k - 1)
        table.append([max(prev[x], prev[x + half]) for x in range(len(values) - 2**k + 1)])
        k += 1

    def query(j: int, i: int) -> float:
        if i <= j:
            return 0.0
        k = (i - j).bit_length() - 1
        return float(max(table[k][j], table[k][i - 2**k]))

    return query


def _score(result: PipelineResult, weights: tuple[float, float]) -> tuple[float, int]:
    """The mapper's objective for a batch (its log): energy^e x latency^l, ties to fewer
    cycles between batches."""
    per_energy, per_cycle = weights
    value = per_energy * math.log(result.energy_pj) + per_cycle * math.log(result.latency_cycles)
    return value, result.interval_cycles


@dataclass
class Estimates:
    """Each entry's cycles on each band height, two ways (``candidates``): mapped alone
    (``alone``), and as it runs when the whole network runs on that band (``kept``); the
    shared DRAM's time for a batch (``floor``); whether every layer fits the whole package
    (``whole``)."""

    alone: Cycles
    kept: Cycles
    floor: float
    whole: bool


def estimates(
    network: Network,
    arch: Arch,
    costs: ArchCosts,
    archs: dict[int, Arch],
    bands: dict[int, dict[ShapeKey, Result]],
    holding: dict[int, dict[ShapeKey, Result]],
    lean: dict[int, dict[ShapeKey, Result]],
    objective: tuple[float, float],
) -> Estimates:
    """The planner's two estimates of each entry's cycles on each band. ``archs[h]``: the
    band of ``h`` rows of ``arch``; ``bands[h]``: its results; ``holding[h]`` and
    ``lean[h]``: its mappings that hold their weights and its lean ones; ``objective``: the
    mapper's, as (energy, latency) weights."""
    rows = max(archs)
    shapes = len(network.unique_layers(mapped=True))
    # each band running the whole network layer after layer, activations on chip where
    # they fit (a band some layer does not fit has none)
    runs = {
        h: NetworkResult(
            network,
            archs[h],
            costs,
            found,
            holding=holding.get(h, {}),
            lean=lean.get(h, {}),
            objective=objective,
        )
        for h, found in bands.items()
        if len(found) == shapes
    }
    per_cycle = arch.dram_bytes_per_cycle
    floor = 0.0
    if per_cycle is not None and rows in runs:
        # the DRAM traffic of the network run layer after layer, activations kept on chip
        # where they fit: what any split moves, but for the activations between stages
        floor = runs[rows].dram_bytes / per_cycle
    post = {h: post_cycles(network, archs[h], costs) for h in bands}
    alone = entry_cycles(network, bands, post)
    kept = {h: on_chip_cycles(runs[h]) if h in runs else alone[h] for h in bands}
    return Estimates(alone, kept, floor, rows in runs)


def candidates(
    network: Network,
    est: Estimates,
    rows: int,
    allowed: Sequence[Callable[[int, int, int], bool]] = (),
) -> list[Plan]:
    """The plans the planner prices as they run, each once (see the module docstring): the
    ``FRONTIER`` best by each estimate (and, for each of ``allowed``, the best by each of the
    splits whose every stage it allows: ``frontier``), and one stage on all ``rows`` when
    every layer fits them. ``est``: each entry's cycles on each band (``estimates``)."""
    alone, kept, floor = est.alone, est.kept, est.floor
    plans = frontier(alone, rows, floor, FRONTIER) + frontier(kept, rows, floor, FRONTIER)
    for rule in allowed:
        plans += frontier(alone, rows, floor, FRONTIER, rule)
        plans += frontier(kept, rows, floor, FRONTIER, rule)
    if est.whole:
        plans.append([(0, len(network.layers), rows)])  # layer after layer on every chiplet
    return list({tuple(p): p for p in plans}.values())


def fused_groups(
    cycles: Cycles, rows: int, allowed: Callable[[int, int, int], bool]
) -> tuple[Plan, Groups] | None:
    """Stream's cut of a network into fused groups: from the first entry, each group as
    long as its weights fit the whole package's weight buffers (``allowed(j, i, rows)``),
    each group then split into stages by ``frontier`` on its entries' ``cycles``, every
    stage's weights fitting its band. The plan and each stage's group; None when the network
    is one group (a plan ``candidates`` has) or some entry fits nowhere."""
    n = len(next(iter(cycles.values()), []))
    cuts: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end = start + 1
        if not allowed(start, end, rows):
            return None
        while end < n and allowed(start, end + 1, rows):
            end += 1
        cuts.append((start, end))
        start = end
    if len(cuts) < 2:
        return None
    plan: Plan = []
    groups: list[int] = []
    for g, (a, b) in enumerate(cuts):
        part = {h: t[a:b] for h, t in cycles.items()}

        def inside(j: int, i: int, h: int, a: int = a) -> bool:
            return allowed(j + a, i + a, h)

        best = frontier(part, rows, 0.0, 1, inside)
        if not best:
            return None
        for j, i, h in best[0]:
            plan.append((j + a, i + a, h))
            groups.append(g)
    return plan, tuple(groups)


def _pipelined(
    network: Network,
    design: Design,
    archs: dict[int, Arch],
    bands: dict[int, dict[ShapeKey, Result]],
    holding: dict[int, dict[ShapeKey, Result]],
    lean: dict[int, dict[ShapeKey, Result]],
    objective: tuple[float, float],
    plan: Plan,
    depth_first: bool = False,
    groups: Groups = (),
    shared: PlansShared | None = None,
) -> PipelineResult:
    """``plan`` priced as it runs: each stage's layers on its band's mappings
    (``depth_first``: fused, a batch passed on a tile at a time; ``groups``: each stage's
    fused group; ``shared``: what it shares with the design's other plans, ``PlansShared``;
    None: nothing)."""
    by_shape: dict[ShapeKey, Result] = {}  # each shape as it first runs (its stage's band)
    for a, b, h in plan:
        for e in network.layers[a:b]:
            if e.layer.is_postprocess:
                continue
            by_shape.setdefault(e.layer.shape_key(), bands[h][e.layer.shape_key()])
    return PipelineResult(
        network,
        design.arch,
        design.costs,
        by_shape,
        dataflow=design.dataflow.name,
        stages=tuple(Stage(a, b, h, archs[h]) for a, b, h in plan),
        bands=bands,
        band_holding=holding,
        band_lean=lean,
        objective=objective,
        depth_first=depth_first,
        groups=groups,
        shared=PlansShared() if shared is None else shared,
    )


def _band(design: Design, h: int, fx: int, fy: int) -> Arch:
    """The package cut to a band of ``h`` rows (columns, when wider than tall)."""
    return design.arch.with_chiplets(fx, h) if fy >= fx else design.arch.with_chiplets(h, fy)


def post_cycles(network: Network, arch: Arch, costs: ArchCosts) -> dict[int, float]:
    """The cycles of each post-processing entry of ``network`` on ``arch`` (by index), as
    the split counts them: 0 for one fused into the MAC layer before it (it overlaps it),
    else its pass alone, its activations through DRAM."""
    producers, consumers = network.edges()
    archs = [arch] * len(network.layers)
    head = fused_heads(network, archs, producers, consumers)
    return {
        i: 0.0
        if head[i] is not None
        else float(price_postprocess(e.layer, arch, costs).latency_cycles)
        for i, e in enumerate(network.layers)
        if e.layer.is_postprocess
    }


def entry_cycles(
    network: Network,
    bands: dict[int, dict[ShapeKey, Result]],
    post: dict[int, dict[int, float]] | None = None,
) -> Cycles:
    """Each entry's cycles on each band, mapped alone (its activations through DRAM; a
    post-processing entry's: ``post[h][i]``, ``post_cycles``); inf where it does not fit."""
    out: Cycles = {}
    for h, results in bands.items():
        out[h] = []
        for i, e in enumerate(network.layers):
            found = results.get(e.layer.shape_key())
            cycles = math.inf if found is None else found.latency_cycles * e.repeat
            if e.layer.is_postprocess:
                cycles = (post or {}).get(h, {}).get(i, math.inf) * e.repeat
            out[h].append(float(cycles))
    return out


def on_chip_cycles(layer_after_layer: NetworkResult) -> list[float]:
    """Each entry's cycles as it runs in ``layer_after_layer`` (activations on chip where
    they fit), its repeats included."""
    entries = layer_after_layer.network.layers
    return [
        float(r.latency_cycles * e.repeat)
        for r, e in zip(layer_after_layer.runs, entries, strict=True)
    ]


def split(
    network: Network,
    bands: dict[int, dict[ShapeKey, Result]],
    rows: int,
    floor: float = 0.0,
    post: dict[int, dict[int, float]] | None = None,
) -> Plan | None:
    """The best split by the layers' times mapped alone (``entry_cycles``, ``frontier``);
    None when no split maps every layer."""
    plans = frontier(entry_cycles(network, bands, post), rows, floor)
    return plans[0] if plans else None


def frontier(
    cycles: Cycles,
    rows: int,
    floor: float = 0.0,
    count: int = 1,
    allowed: Callable[[int, int, int], bool] | None = None,
) -> list[Plan]:
    """The ``count`` best plans using all ``rows`` (fewer if there are fewer ways to end the
    last stage; none when no split runs every entry), best first, a stage of entries j..i
    on h rows taking the sum of their cycles there, ``cycles[h]`` (inf: does not fit).

    ``best[r][i]``: (interval, latency, h, j) of the best plan of the first ``i`` entries on
    ``r`` rows, its last stage entries j..i on h rows; intervals under ``floor`` (cycles)
    count as ``floor``; ties go to a last stage of fewer rows, then to a longer one. The plans
    returned end in distinct last stages, each after the best plan before it. ``allowed(j,
    i, h)``: whether entries j..i may be a stage on h rows (None: any), asked once for each
    stage that could end a plan. A row count's ``best`` is found for every i at once (numpy
    over every (i, j): it needs only the row counts below it)."""
    n = len(next(iter(cycles.values()), []))
    if n == 0:
        return []
    inf = math.inf  # a plan's interval and latency are finite: so is ``floor``
    # each stage j..i on each band of h rows: its cycles (those of its entries that fit)
    # and whether every entry fits ([i, j], j < i); the same for every row count
    cycles_of: dict[int, np.ndarray] = {}
    fits: dict[int, np.ndarray] = {}
    for h, t in cycles.items():
        band = np.asarray(t, dtype=float)
        total = np.concatenate([[0.0], np.cumsum(np.where(np.isinf(band), 0.0, band))])
        misfits = np.concatenate([[0], np.cumsum(np.isinf(band))])
        cycles_of[h] = total[:, None] - total[None, :]
        fits[h] = np.tri(n + 1, k=-1, dtype=bool) & (misfits[:, None] == misfits[None, :])
    # best[r][i]: the interval and latency of the best plan of entries [0, i) on r rows (inf:
    # none), and its last stage's rows and first entry
    interval = np.full((rows + 1, n + 1), inf)
    latency = np.full((rows + 1, n + 1), inf)
    last = np.zeros((2, rows + 1, n + 1), dtype=np.int64)
    interval[0, 0], latency[0, 0] = floor, 0.0
    # [i, j] per h: whether a rule asked stage by stage lets entries j..i be a stage on h
    # rows, where asked (a ``StageFits`` answers a band at once)
    by_stage = allowed is not None and not isinstance(allowed, StageFits)
    asked = {h: np.zeros_like(f) for h, f in fits.items()} if by_stage else {}
    may = {h: np.zeros_like(f) for h, f in fits.items()} if by_stage else {}

    def options(r: int) -> tuple[np.ndarray, np.ndarray]:
        """Each plan of entries [0, i) on r rows by its last stage, entries j..i on h
        rows: its interval and latency ([i, h - 1, j]; inf: none)."""
        iv = np.full((n + 1, r, n + 1), inf)
        lt = np.full((n + 1, r, n + 1), inf)
        for h in range(1, r + 1):
            t = cycles_of[h]
            ok = fits[h] & np.isfinite(interval[r - h])[None, :]
            if isinstance(allowed, StageFits):  # every stage of the band at once
                ok &= allowed.table(h)
            elif allowed is not None:  # each stage asked once, and only where it could end
                for i, j in zip(*np.nonzero(ok & ~asked[h]), strict=True):
                    may[h][i, j] = allowed(int(j), int(i), h)
                asked[h] |= ok
                ok &= may[h]
            iv[:, h - 1] = np.where(ok, np.maximum(interval[r - h][None, :], t), inf)
            lt[:, h - 1] = np.where(ok, latency[r - h][None, :] + t, inf)
        return iv, lt

    for r in range(1, rows + 1):
        every_iv, every_lt = options(r)
        shape = (max(0, n - 1), r * (n + 1))  # [i, (h, j)]
        iv, lt = every_iv[1:n].reshape(shape), every_lt[1:n].reshape(shape)
        # the least (interval, latency, h, j) of each i: ties go to fewer rows, then to j
        low = iv.min(axis=1, keepdims=True)
        pick = np.where(iv == low, lt, inf).argmin(axis=1)
        found = np.isfinite(low[:, 0])
        interval[r, 1:n] = np.where(found, low[:, 0], inf)
        latency[r, 1:n] = np.where(found, lt[np.arange(n - 1), pick], inf)
        last[:, r, 1:n] = np.divmod(pick, n + 1)
        last[0, r, 1:n] += 1
    iv, lt = every_iv[n].ravel(), every_lt[n].ravel()  # every plan of all entries on all rows
    hs, js = np.divmod(np.arange(iv.size), n + 1)
    ends = [k for k in np.lexsort((js, hs, lt, iv)) if np.isfinite(iv[k])][:count]
    plans: list[Plan] = []
    for k in ends:
        h, j = int(hs[k]) + 1, int(js[k])
        plan: Plan = [(j, n, h)]
        i, r = j, rows - h
        while (i, r) != (0, 0):
            h, j = int(last[0, r, i]), int(last[1, r, i])
            plan.append((j, i, h))
            i, r = j, r - h
        plans.append(plan[::-1])
    return plans
