"""Bounds before mapping (issue 33): a design whose best possible objectives are already
dominated by the study's front is recorded as ``dominated`` without being mapped. The driver
sends each job the front (``front_for``); the evaluation, where the design's template and
cost-model plug-ins run (never the driver), builds the design, bounds it and stops there
when the front beats the bounds (``dominated``).

A design's objectives are bounded from what needs no mapping, each bound proven for every
mapping, pipeline and fusion magnet prices:

* ``latency_cycles`` >= the sum over the network's MAC layers of their MACs over the most a
  cycle can do: the design's MAC units, fewer where the dataflow's fan-outs unroll dims
  smaller than they are wide (a vector of 32 lanes over C does 3 useful MACs a cycle on a
  first layer of 3 channels; MACs the design skips as zeros are the effectual ones), and
  >= its DRAM floor (below) over DRAM's bandwidth;
* ``energy_pj`` >= its MACs' math, MACs x the design's energy of one MAC (a design gating or
  skipping zeros: the effectual MACs), plus its DRAM floor: every batch reads the network's
  input and writes its output, and reads again the weights no on-chip capacity could hold
  (all its levels' instances together), at DRAM's price per bit (every other category is
  >= 0; a design with a compressed format has no DRAM floor here). A network run layer
  after layer (not pipelined or fused) also moves through DRAM every activation no plan
  can keep on chip (``may_keep``: larger than the levels activations stay in, or made or
  read by an entry that repeats): its producer writes it, each word at least once, and
  each MAC layer reading it reads at least the input words its windows touch;
* ``edp`` >= the product of the two; ``area_mm2`` is the design's (priced without a
  mapping); ``tops`` <= 2 x MACs over the latency bound, ``tops_per_w`` <= 2 x MACs over
  the energy bound, ``tops_per_mm2`` <= the first over the area, ``images_per_s`` <= the
  batch over the latency bound (in seconds at the design's clock).

Other metrics have no bound here: a study with such an objective maps every design (its
summary says so once). Each bound is a weighted mean over the workloads, as the metrics are.
A design is dominated when a point of the front is at least as good in every objective as the
design's bound and better in one: then it is strictly better than anything the design can
reach, so the design never enters the front.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from magnet.design import Design
from magnet.mapper.mapspace import spatial_dims
from magnet.model.evaluate import layer_view
from magnet.model.network_result import chain_tail, fused_heads, may_keep
from magnet.model.sparse_counts import effectual_share
from magnet.search import pareto
from magnet.search.design_space import SearchSpace
from magnet.search.job import DesignJob, spec_network
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer
from magnet.workload.network import Network, NetworkLayer

#: The objectives a bound exists for, and whether it bounds from below (minimised) or above.
BOUNDED = {
    "energy_pj": "min",
    "latency_cycles": "min",
    "edp": "min",
    "area_mm2": "min",
    "tops": "max",
    "tops_per_w": "max",
    "tops_per_mm2": "max",
    "images_per_s": "max",
}


def _effectual(design: Design, network: Network) -> list[tuple[Layer, float]]:
    """Each MAC layer of ``network`` with the MACs the design does of it (its repeats
    included): all, or the share its MACs' zeros leave (``effectual_share``)."""
    return [
        (e.layer, e.layer.macs * effectual_share(e.layer, design.arch) * e.repeat)
        for e in network.layers
        if not e.layer.is_postprocess
    ]


def _math_cycles(design: Design, done: list[tuple[Layer, float]]) -> float:
    """Cycles the MACs ``done`` (``_effectual``) take at least on ``design``: each MAC
    layer's over the most of them one cycle can do (``_most_parallel``), summed (layers run
    one after another, and a layer's latency is at least its temporal iterations)."""
    allowed = spatial_dims(design.arch, design.dataflow)  # the design's: once for all layers
    return sum(macs / _most_parallel(design, layer, allowed) for layer, macs in done)


def _most_parallel(
    design: Design, layer: Layer, allowed: tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]
) -> float:
    """The most useful MACs of ``layer`` one cycle can do on ``design``: its MAC units, and
    at most, on each fan-out axis, the smaller of its width and the product of the extents
    of the dims the dataflow unrolls there (``allowed``: ``spatial_dims``; of the loop nest
    the design maps, ``layer_view``; a padded lane does no useful MAC, and a dim unrolled on
    several axes is counted whole on each: an upper bound)."""
    allow_x, allow_y = allowed
    extent = np.array(layer_view(layer, design.arch).dims, dtype=float)
    lanes = 1.0
    for li, (fx, fy) in enumerate(design.arch.fanouts):
        lanes *= min(fx, float(extent[allow_x[li]].prod()))
        lanes *= min(fy, float(extent[allow_y[li]].prod()))
    unrolled = float(extent[(allow_x | allow_y).any(axis=0)].prod())
    return max(1.0, min(lanes, unrolled, float(design.arch.mac_count)))


def _dram_floor(design: Design, network: Network, layered: bool) -> tuple[float, float]:
    """(pJ, cycles) every batch of ``network`` spends at least on DRAM: the network's input
    read and its output written, and the weights no on-chip capacity can hold (all its
    levels' instances together) read again; ``layered`` (the network runs layer after
    layer), the activations no plan keeps on chip too (``_activations_moved``); (0, 0) for
    a design with no DRAM, or one with a format (compressed words, which this does not
    bound)."""
    arch = design.arch
    levels = arch.inner_first
    dram = next((li for li in range(len(levels) - 1, -1, -1) if levels[li].is_dram), None)
    if dram is None or any(lvl.sparse for lvl in arch.levels):
        return 0.0, 0.0
    level = levels[dram]
    mac = [e for e in network.layers if not e.layer.is_postprocess]
    if not mac:
        return 0.0, 0.0
    weight_words = network.weight_words
    room = 0.0  # weight words the chip's levels could hold at once, every instance
    for lvl in levels:
        if lvl.is_dram or "weights" not in lvl.keeps:
            continue
        if lvl.capacity_bits is None:
            room = math.inf
            break
        room += lvl.capacity_bits / lvl.bits(Operand.W) * lvl.instances
    weights_read = max(0.0, weight_words - room)
    inputs_read = float(mac[0].layer.operand_size(Operand.I))
    written = float(network.layers[-1].layer.operand_size(Operand.O))
    if layered:
        moved = _activations_moved(design, network)
        inputs_read = max(inputs_read, sum(r * e.repeat for e, r, _ in moved))
        written = max(written, sum(w * e.repeat for e, _, w in moved))
    read_bits = weights_read * level.bits(Operand.W) + inputs_read * level.bits(Operand.I)
    written_bits = written * level.bits(Operand.O)
    access = level.access_bits
    costs = design.costs
    energy = (
        read_bits / access * costs.read_pj[dram] + written_bits / access * costs.update_pj[dram]
    )
    # cycles as the evaluator counts a level's (``_level_cycles``): words of each operand
    # over words per cycle, shared by the level's instances
    reads, writes = (weights_read + inputs_read) / level.instances, written / level.instances
    cycles = 0.0
    for words, bandwidth in (
        (reads, level.read_bandwidth),
        (writes, level.write_bandwidth),
        (reads + writes, level.shared_bandwidth),
    ):
        if bandwidth is not None:
            cycles = max(cycles, words / bandwidth)
    return float(energy), cycles


def _activations_moved(design: Design, network: Network) -> list[tuple[NetworkLayer, int, int]]:
    """Each MAC entry of ``network`` with the input words it reads and the output words it
    writes in DRAM at least, once, in every plan of it run layer after layer on ``design``
    (``magnet.model.network_result.price_plan``): an entry whose input no plan keeps on chip
    (none or several producers, or its producer's output kept by no plan: ``may_keep``,
    both entries run once) reads at least the words its windows touch
    (``_touched_inputs``); one whose chain's output some reader reads from DRAM (or nothing
    reads: the network's output) writes each of its own output words at least once."""
    arch = design.arch
    entries = network.layers
    producers, consumers = network.edges()
    head = fused_heads(network, [arch] * len(entries), producers, consumers)

    def stays(p: int, c: int) -> bool:  # whether any plan lets c read p's output on chip
        once = entries[p].repeat == 1 and entries[c].repeat == 1
        return once and may_keep(arch, entries[p].layer)

    moved = []
    for i, e in enumerate(entries):
        if e.layer.is_postprocess:
            continue
        made = producers[i]
        read = 0 if len(made) == 1 and stays(made[0], i) else _touched_inputs(e.layer)
        tail = chain_tail(head, i)  # its post-processing layers fused into it
        readers = consumers[tail]
        kept = readers and all(stays(tail, c) for c in readers)
        moved.append((e, read, 0 if kept else e.layer.operand_size(Operand.O)))
    return moved


def _touched_inputs(layer: Layer) -> int:
    """Input words ``layer``'s windows touch: at most its input box (``operand_size``, gaps
    included), fewer when strides skip columns or rows (a 1x1 convolution of stride 2 reads
    a quarter of it). No mapping reads fewer words from the level holding its inputs."""

    def along(outputs: int, kernel: int, stride: int, dilation: int) -> int:
        if dilation == 1 and stride <= kernel:
            return stride * (outputs - 1) + kernel  # contiguous: the box
        return len({o * stride + k * dilation for o in range(outputs) for k in range(kernel)})

    width = along(layer.P, layer.R, layer.wstride, layer.wdilation)
    height = along(layer.Q, layer.S, layer.hstride, layer.hdilation)
    return layer.N * layer.G * layer.C * width * height


def bound_metrics(
    design: Design,
    networks: Sequence[Network],
    weights: Sequence[float],
    staged: Sequence[bool] | None = None,
) -> dict[str, float]:
    """Each ``BOUNDED`` metric's bound for ``design`` on ``networks`` (weighted means over
    them, as the metrics are); a metric the cost model gives no value for is left out.
    ``staged``: whether each network is pipelined or fused across the design's chiplets
    (None: none is; each runs layer after layer, as ``magnet.evaluate`` runs it)."""
    shares = [w / max(weights) for w in weights]
    per: list[dict[str, float]] = []
    for network, pipelined in zip(networks, staged or [False] * len(networks), strict=True):
        macs = sum(e.layer.macs * e.repeat for e in network.layers if not e.layer.is_postprocess)
        done = _effectual(design, network)
        dram_pj, dram_cycles = _dram_floor(design, network, layered=not pipelined)
        cycles = max(_math_cycles(design, done), dram_cycles)
        energy = sum(macs for _, macs in done) * design.costs.mac_pj + dram_pj
        seconds = cycles / (design.arch.clock_ghz * 1e9)
        out = {"latency_cycles": cycles, "energy_pj": energy, "edp": energy * cycles}
        out["tops"] = 2 * macs / seconds / 1e12 if seconds > 0 else math.inf
        out["tops_per_w"] = 2 * macs / (energy * 1e-12) / 1e12 if energy > 0 else math.inf
        out["images_per_s"] = network.batch / seconds if seconds > 0 else math.inf
        area = design.costs.area_mm2
        if area is not None:
            out["area_mm2"] = area
            out["tops_per_mm2"] = out["tops"] / area if area > 0 else math.inf
        per.append(out)
    keys = set.intersection(*(set(p) for p in per)) if per else set()
    return {k: sum(s * p[k] for s, p in zip(shares, per, strict=True)) / sum(shares) for k in keys}


def dominating(
    bounds: dict[str, float],
    objectives: Sequence[str],
    directions: Sequence[str],
    front: Sequence[Sequence[float]],
) -> int | None:
    """The index of a point of ``front`` (minimised log10 objectives, ``Front.points``)
    that dominates everything a design with ``bounds`` can reach; None: none does, or an
    objective has no bound."""
    if not len(front) or any(o not in bounds for o in objectives):
        return None
    values = [bounds[o] for o in objectives]
    if not all(math.isfinite(v) and v > 0 for v in values):
        return None
    best = pareto.to_minimised_log([values], list(directions))[0]
    points = np.asarray(front, dtype=float)
    better = (points <= best).all(axis=1) & (points < best).any(axis=1)
    hits = np.flatnonzero(better)
    return int(hits[0]) if hits.size else None


def unbounded(objectives: Sequence[str]) -> list[str]:
    """The objectives no bound exists for (empty: every design can be bounded)."""
    return [o for o in objectives if o not in BOUNDED]


def describe(bounds: dict[str, float], objectives: Sequence[str]) -> str:
    """``energy_pj >= 1.2e+09, latency_cycles >= 3.4e+05``: a dominated design's bounds."""
    signs = {"min": ">=", "max": "<="}
    return ", ".join(f"{o} {signs[BOUNDED[o]]} {bounds[o]:.3g}" for o in objectives)


def dominated(job: DesignJob, design: Design) -> str | None:
    """Why ``job``'s design (built: ``design``) is dominated before it is mapped, by the
    front the job carries (None: it is not). Run where the design is evaluated: a plug-in
    that builds or prices it runs there, never in the driver."""
    networks = [spec_network(spec) for spec in job.workloads]
    weights = [float(spec.get("weight", 1.0)) for spec in job.workloads]
    # as the job maps them (``magnet.search.job``): staged on a package of chiplets
    staged = [
        bool(spec.get("pipeline") or spec.get("fuse")) and design.arch.chiplets > 1
        for spec in job.workloads
    ]
    bounds = bound_metrics(design, networks, weights, staged)
    if dominating(bounds, job.objectives, job.directions, job.front) is None:
        return None
    return (
        f"dominated before mapping: at best {describe(bounds, job.objectives)}, which a "
        "design of the front beats"
    )


def front_for(space: SearchSpace, front: pareto.Points) -> dict[str, Any]:
    """What a job carries for its bounds (``DesignJob.front``, ``objectives``,
    ``directions``): ``front``, the study's front (minimised log10 objectives of its
    feasible designs, ``magnet.search.driver.Front``); nothing when the space has no bounds
    (``unbounded``) or no point yet."""
    objectives = [o.metric for o in space.objectives]
    if not space.bounds or unbounded(objectives) or not len(front):
        return {}
    return {
        "front": tuple(map(tuple, front.tolist())),
        "objectives": tuple(objectives),
        "directions": tuple(space.directions()),
    }
