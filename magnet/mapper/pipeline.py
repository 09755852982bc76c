"""Pipelining a network across groups of a package's chiplets (``magnet.mapping.pipeline``).

Every distinct layer shape is mapped once on each band height (1 to all the rows of the
package's mesh: ``map_network`` on the package cut to that band). Then the layers, in order,
are split into stages of whole bands by dynamic programming over (layers, rows used): the
split whose slowest stage is fastest (the shortest interval, the most batches per second),
ties to the shortest latency of a batch, using every row. A stage's time in the split is
its layers' times each mapped alone (activations through DRAM); the result then prices
them as they run, activations kept on chip where they fit. The stages share the package's
DRAM, so no interval is shorter than its time for a batch's traffic (``floor``): splits
faster than that are equally fast, and the one with the shortest latency is taken.
"""

from __future__ import annotations

import math
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts
from magnet.design import Design, on_arch
from magnet.mapper.base import MapOutcome, Mapper, get_mapper
from magnet.mapper.network import map_network
from magnet.mapping.evaluate import Result
from magnet.mapping.network import NetworkResult, fused_heads
from magnet.mapping.pipeline import PipelineResult, Stage, package_level
from magnet.mapping.postprocess import price_postprocess, require_unit
from magnet.workload.layer import ShapeKey
from magnet.workload.network import Network

#: A plan: (start, end, rows) of each stage, entries start to end (exclusive) on ``rows``.
Plan = list[tuple[int, int, int]]


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
    **options: Any,
) -> PipelineOutcome:
    """``network`` pipelined across groups of ``design``'s chiplets (see the module
    docstring); ``MagnetError`` for a design of one chip."""
    package_level(design.arch)  # a package, or bad input
    require_unit(design.arch, [e.layer for e in network.layers])
    m = get_mapper(mapper, **options)
    fx, fy = design.arch.chiplet_grid
    rows = max(fx, fy)
    shapes = len(network.unique_layers(mapped=True))
    bands: dict[int, dict[ShapeKey, Result]] = {}
    archs, evaluated, cached = {}, 0, 0
    for h in range(1, rows + 1):
        band = design if h == rows else on_arch(design, _band(design, h, fx, fy))
        archs[h] = band.arch

        def step(outcome: MapOutcome, done: int, _total: int, h: int = h) -> None:
            if progress is not None:
                progress(outcome, (h - 1) * shapes + done, rows * shapes)

        out = map_network(network, band, m, progress=step, stop_on_failure=False, cache=cache)
        bands[h] = {k: o.result for k, o in out.outcomes.items() if o.result is not None}
        evaluated, cached = evaluated + out.mappings_evaluated, cached + out.cached
    whole = bands[rows]
    per_cycle = design.arch.dram_bytes_per_cycle
    floor = 0.0
    if per_cycle is not None and len(whole) == shapes:
        # the DRAM traffic of the network run layer after layer, activations kept on chip
        # where they fit: what any split moves, but for the activations between stages
        floor = NetworkResult(network, design.arch, design.costs, whole).dram_bytes / per_cycle
    post = {h: post_cycles(network, archs[h], design.costs) for h in bands}
    plan = split(network, bands, rows, floor=floor, post=post)
    if plan is None:
        reason = f"no split of {network.name!r} into stages runs every layer on {design.name!r}"
        return PipelineOutcome(None, reason, evaluated, cached)
    stages = tuple(Stage(a, b, h, archs[h]) for a, b, h in plan)
    by_shape: dict[ShapeKey, Result] = {}  # each shape as it first runs (its stage's band)
    for a, b, h in plan:
        for e in network.layers[a:b]:
            if e.layer.is_postprocess:
                continue
            by_shape.setdefault(e.layer.shape_key(), bands[h][e.layer.shape_key()])
    result = PipelineResult(
        network,
        design.arch,
        design.costs,
        by_shape,
        dataflow=design.dataflow.name,
        stages=stages,
        bands=bands,
    )
    return PipelineOutcome(result, None, evaluated, cached)


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


def split(
    network: Network,
    bands: dict[int, dict[ShapeKey, Result]],
    rows: int,
    floor: float = 0.0,
    post: dict[int, dict[int, float]] | None = None,
) -> Plan | None:
    """The stages (see the module docstring); None when no split maps every layer.

    ``best[i][r]``: (interval, latency, previous (j, h)) of the first ``i`` entries on ``r``
    rows; a stage of entries j..i on h rows takes the sum of their times there (a
    post-processing entry's: ``post[h][i]``, ``post_cycles``). Intervals under ``floor``
    (cycles) count as ``floor``."""
    entries = network.layers
    n = len(entries)
    prefix = {h: [0.0] * (n + 1) for h in bands}  # cycles of entries [0, i) on h rows
    for h, results in bands.items():
        for i, e in enumerate(entries):
            found = results.get(e.layer.shape_key())
            cycles = math.inf if found is None else found.latency_cycles * e.repeat
            if e.layer.is_postprocess:
                cycles = (post or {}).get(h, {}).get(i, math.inf) * e.repeat
            prefix[h][i + 1] = prefix[h][i] + cycles
    best: dict[tuple[int, int], tuple[float, float, tuple[int, int] | None]] = {
        (0, 0): (0.0, 0.0, None)
    }
    for i in range(1, n + 1):
        for r in range(1, rows + 1):
            options = [
                (max(best[j, r - h][0], t), best[j, r - h][1] + t, (j, h))
                for h in range(1, r + 1)
                for j in range(i)
                if (j, r - h) in best and (t := prefix[h][i] - prefix[h][j]) < math.inf
            ]
            if options:
                best[i, r] = min(options, key=lambda o: (max(o[0], floor), o[1]))
    if (n, rows) not in best:
        return None
    plan: Plan = []
    i, r = n, rows
    while (i, r) != (0, 0):
        _, _, previous = best[i, r]
        assert previous is not None
        j, h = previous
        plan.append((j, i, h))
        i, r = j, r - h
    return plan[::-1]
