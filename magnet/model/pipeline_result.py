"""A network pipelined across groups of a package's chiplets: the result and its prices.

Layer after layer (``NetworkResult``), every layer runs on all the chiplets and a batch
leaves before the next one enters. Pipelined, consecutive layers run on disjoint groups of
chiplets (stages), a batch passes from stage to stage, and the next batch enters the first
stage as soon as that stage is free. Then one batch is done every *interval* and each batch
takes the sum of the stages' times (``latency_cycles``). The interval is the slowest stage's
time, or longer: the stages run at once and share the package's DRAM and its links into the
package (``port_cycles``), which must move a whole batch's traffic (every stage's) each
interval. One stage on every chiplet is the
network run layer after layer, and prices exactly as ``NetworkResult`` does (same
images/s, latency and energy).

A stage is a band of whole rows of the package's mesh (of columns, when the mesh is wider
than tall), run as a package of those chiplets (``Arch.with_chiplets``): each of its
layers is mapped on the band, partitioned across its chiplets as on any package. Between
the layers of a stage, activations stay on chip by the rule of ``NetworkResult.runs``; the
same rule decides at a stage boundary, where the activation then leaves the producing band
and enters the next one over the network-on-package instead of through DRAM. Priced on top
of the layers as they run:

* the hand-over between stages: the activation's bits (at the activation width) x the
  link's pJ/bit x the hops between the two bands' centres (half of each band's rows). Its
  time is the receiving layer's fills, which the package caps at the link bandwidth;
* the approach: a band is mapped as if DRAM's ports entered it where they are nearest
  (``Arch.with_chiplets``); its DRAM traffic also crosses the rows (or columns) between the
  package's ports and the band, its bits x those hops priced like a hand-over (their time
  is taken as hidden, and their share of those rows' links is not charged to the stages
  there);
* waiting: every chiplet leaks for the whole interval, so a stage faster than the slowest
  one leaks, at the power of its own layers' leakage, while it waits.

Fused depth-first (``depth_first``, Stream's layer fusion): the stages pass a batch on a
tile at a time (``stage_tiles``: one output row of a stage's entry with the fewest, where
its weights stay on chip), so that they work on one batch at once; a batch's latency is
then ``flow_cycles`` of the stages' times, and each activation is held on chip a tile at a
time (``RunPlan.shares``). Batches still leave one per interval. Several fused groups
(``groups``) run one after another, each on bands of the whole package: a batch's latency is
the sum of theirs, the next batch enters when it leaves, and every batch loads each group's
weights (``grouped``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

from magnet.arch.spec import Arch, StorageLevel
from magnet.errors import MagnetError
from magnet.model.evaluate import Result
from magnet.model.mesh import Mesh, mesh_below
from magnet.model.network_result import (
    NetworkResult,
    PostPrices,
    Run,
    RunPlan,
    keep_activations,
    plan_weights,
    price_plan,
)
from magnet.model.records import NetworkRecord, PipelineStage
from magnet.workload.dims import Operand
from magnet.workload.layer import ShapeKey


@dataclass(frozen=True)
class Stage:
    """Entries ``start`` to ``end`` (exclusive) of the network on a band of ``rows`` rows of
    the package's mesh (``arch``: that band as a package)."""

    start: int
    end: int
    rows: int
    arch: Arch = field(repr=False)


def flow_cycles(tile_cycles: list[float], tiles: list[int]) -> float:
    """Cycles of one batch through stages working on successive tiles at once: stage ``s``
    takes ``tile_cycles[s]`` a tile and starts its tile ``k`` once it has finished tile
    ``k - 1`` and the stage before has made the part of its output that tile needs, the
    first ``(k + 1) / tiles[s]`` of it (the window's overlap left out). With one tile each it
    is the stages' sum; with ``t`` tiles of ``c / t`` everywhere, the sum over ``t`` plus
    ``t - 1`` times the slowest stage's tile."""
    done: list[float] = []  # when the stage before finished each of its tiles
    for each, count in zip(tile_cycles, tiles, strict=True):
        now, mine = 0.0, []
        for k in range(count):
            ready = done[math.ceil((k + 1) * len(done) / count) - 1] if done else 0.0
            now = max(now, ready) + each
            mine.append(now)
        done = mine
    return done[-1] if done else 0.0


def rows_at_once(run: Run) -> int:
    """How many output rows (P) a MAC layer's mapping computes at once: its spatial factors
    over P at every level (1 for a post-processing layer, which streams)."""
    if not isinstance(run, Result):
        return 1
    rows = 1
    for level in run.mapping.levels:
        rows *= level.spatial_x.get("P", 1) * level.spatial_y.get("P", 1)
    return rows


def package_level(arch: Arch) -> StorageLevel:
    """The level whose fan-out is the package's chip-to-chip links; bad input for a chip."""
    if arch.package_level is None:
        raise MagnetError(
            f"{arch.name!r} is a chip: pipelining needs a package of chiplets", field="pipeline"
        )
    return arch.package_level


@dataclass
class PlansShared:
    """What the plans a planner prices for one design share (``PipelineResult.shared``):
    each stage's design, by its band's design and its place among that band's stages (a
    stage is a design of its own: stages of one height in a plan are apart), and the
    post-processing entries priced on them (``price_plan``'s ``posts``)."""

    stage_archs: dict[tuple[int, int], tuple[Arch, Arch]] = field(default_factory=dict)
    posts: PostPrices = field(default_factory=dict)

    def stage_arch(self, band: Arch, k: int) -> Arch:
        """The design of the ``k``-th stage on ``band`` of a plan: a copy of ``band``, the
        same object in every plan (``band`` kept with it, so its id is not reused)."""
        key = (id(band), k)
        if key not in self.stage_archs:
            self.stage_archs[key] = (band, band.model_copy())
        return self.stage_archs[key][1]


@dataclass
class PipelineResult(NetworkResult):
    """A network pipelined across chiplet groups (see the module docstring): ``stages`` in
    order, and ``bands``: each band height's results, by layer shape. ``by_shape`` (the
    record's ``mappings``) holds each shape's mapping where it first runs."""

    stages: tuple[Stage, ...] = ()
    bands: dict[int, dict[ShapeKey, Result]] = field(default_factory=dict)
    #: each band height's mappings that hold their weights, by layer shape
    #: (``MapOutcome.holding``)
    band_holding: dict[int, dict[ShapeKey, Result]] = field(default_factory=dict)
    #: and their lean mappings (``MapOutcome.lean``)
    band_lean: dict[int, dict[ShapeKey, Result]] = field(default_factory=dict)
    #: fused depth-first: each stage passes a batch on a tile at a time (``stage_tiles``)
    depth_first: bool = False
    #: each stage's fused group (empty: one group): groups run one after another, each on
    #: bands of the whole package, a batch's weights loaded for each (``grouped``)
    groups: tuple[int, ...] = ()
    #: what it shares with the other plans of its design (``PlansShared``)
    shared: PlansShared = field(default_factory=PlansShared, repr=False, compare=False)
    _plans: dict[tuple[float, ...] | None, RunPlan] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @cached_property
    def stage_tiles(self) -> list[int]:
        """The tiles each stage passes a batch on in: 1 each, or, fused depth-first, one step
        of the stage's entry with the fewest: a step being the output rows its mapping
        computes at once (``rows_at_once``; Stream tiles its ``simba`` example a row at a
        time, which leaves a mapping computing several rows at once idle in part), where
        every weight of the stage's MAC entries stays on chip (else 1: a tile at a time would
        read them again for every tile); every weight that fits stays (``plan_weights(eager=
        True)``). Which weights stay, and under which mappings, does not depend on how much
        of each activation is held at once."""
        if not self.depth_first:
            return [1] * len(self.stages)
        plan = self._plan_for(None)
        entries, out = self.network.layers, []
        for s in self.stages:
            mac = [i for i in range(s.start, s.end) if not entries[i].layer.is_postprocess]
            if not all(i in plan.resident for i in mac):
                out.append(1)
                continue
            steps = []
            for i in range(s.start, s.end):
                run = plan.base[i]
                steps.append(
                    math.ceil(entries[i].layer.P / (1 if run is None else rows_at_once(run)))
                )
            out.append(min(steps))
        return out

    def _shares(self) -> list[float] | None:
        """The part of each entry's output held on chip at once (``RunPlan.shares``): fused
        depth-first, its rows for one tile of its stage and the window's overlap the next
        entry needs; None: whole activations."""
        if not self.depth_first:
            return None
        entries, out = self.network.layers, []
        _, consumers = self.network.edges()
        for s, tiles in zip(self.stages, self.stage_tiles, strict=True):
            for i in range(s.start, s.end):
                rows = entries[i].layer.P
                halo = max((entries[c].layer.R - 1 for c in consumers[i]), default=0)
                out.append(min(1.0, (math.ceil(rows / tiles) + halo) / rows))
        return out

    @cached_property
    def plan(self) -> RunPlan:
        """Each entry as it runs on its stage's band, activations kept on chip between
        neighbours, across stage boundaries too (over the NoP), weights staying where the
        stage's band holds them (each stage a design of its own: ``NetworkResult.runs``); a
        post-processing entry on its band's units. Fused depth-first, an activation is held
        a tile at a time (``stage_tiles``)."""
        return self._plan_for(self._shares())

    def _plan_for(self, shares: list[float] | None) -> RunPlan:
        """The plan with ``shares`` of the activations held at once (``RunPlan.shares``),
        each made once, from the plan's weights (``_weights``)."""
        key = None if shares is None else tuple(shares)
        if key not in self._plans:
            self._plans[key] = keep_activations(self._weights, shares)
        return self._plans[key]

    @cached_property
    def _weights(self) -> RunPlan:
        """Each entry's mapping on its stage's band and the weights that stay
        (``plan_weights``): the same whatever share of the activations the plan holds."""
        entries = self.network.layers
        base: list[Result | None] = []
        holding: list[Result | None] = []
        lean: list[Result | None] = []
        archs: list[Arch] = []
        seen: dict[int, int] = {}  # stages on each band so far
        for s in self.stages:
            k = seen[id(s.arch)] = seen.get(id(s.arch), -1) + 1
            band = self.shared.stage_arch(s.arch, k)  # a design of its own (``PlansShared``)
            for i in range(s.start, s.end):
                shape = entries[i].layer.shape_key()
                post = entries[i].layer.is_postprocess
                base.append(None if post else self.bands[s.rows][shape])
                holding.append(None if post else self.band_holding.get(s.rows, {}).get(shape))
                lean.append(None if post else self.band_lean.get(s.rows, {}).get(shape))
                archs.append(band)
        return plan_weights(
            self.network, base, archs, holding, lean, self.objective, eager=self.depth_first
        )

    @property
    def grouped(self) -> bool:
        """Several fused groups one after another: their stages share the package's
        chiplets, so no weight stays on chip across batches (each group loads its stages'
        weights once a batch and holds them across its tiles), and a batch leaves before the
        next one enters."""
        return len(set(self.groups)) > 1

    def _group(self, s: int) -> int:
        return self.groups[s] if self.groups else 0

    @cached_property
    def offsets(self) -> list[int]:
        """Each stage's first row (or column) of the package: its group's bands in order."""
        out, first = [], 0
        for s in range(len(self.stages)):
            if s and self._group(s) != self._group(s - 1):
                first = 0
            out.append(first)
            first += self.stages[s].rows
        return out

    @cached_property
    def runs(self) -> list[Run]:
        """Each entry as it runs (``NetworkResult.runs``); in fused groups one after another,
        every batch loading its weights (``grouped``)."""
        return price_plan(self.plan, self.costs, first=self.grouped, posts=self.shared.posts)

    @property
    def weights_stay(self) -> bool:
        """Whether held weights stay across batches: not in fused groups one after another,
        whose stages share the chiplets (``grouped``)."""
        return not self.grouped

    @cached_property
    def tile_cycles(self) -> list[float]:
        """Each stage's cycles for one of its tiles (``stage_tiles``): each entry's steps
        over its output rows for the tile's rows, a step being the rows its mapping computes
        at once (``rows_at_once``): a tile of fewer rows than a step still takes the step,
        its chiplets idle in part. One tile: the stage's cycles."""
        out = []
        for s, tiles in zip(self.stages, self.stage_tiles, strict=True):
            total = 0.0
            for i in range(s.start, s.end):
                rows, step = self.network.layers[i].layer.P, rows_at_once(self.runs[i])
                steps = math.ceil(rows / (tiles * step)) / math.ceil(rows / step)
                total += self._entry_cycles(i) * steps
            out.append(total)
        return out

    def _entry_cycles(self, i: int) -> int:
        """Cycles of entry ``i`` as it runs, its repeats included."""
        return self.runs[i].latency_cycles * self.network.layers[i].repeat

    @cached_property
    def group_cycles(self) -> list[float]:
        """Each stage's group's cycles for a batch (``flow_cycles`` of its stages' tiles)."""
        spans: dict[int, float] = {}
        for g in dict.fromkeys(self._group(s) for s in range(len(self.stages))):
            mine = [s for s in range(len(self.stages)) if self._group(s) == g]
            spans[g] = flow_cycles(
                [self.tile_cycles[s] for s in mine], [self.stage_tiles[s] for s in mine]
            )
        return [spans[self._group(s)] for s in range(len(self.stages))]

    @cached_property
    def stage_cycles(self) -> list[int]:
        """Cycles of each stage per batch: its entries as they run, times their repeats."""
        return [sum(self._entry_cycles(i) for i in range(s.start, s.end)) for s in self.stages]

    @property
    def latency_cycles(self) -> int:
        """Cycles of one batch through every stage: their sum, or, fused depth-first, the
        stages of each group working on successive tiles at once (``flow_cycles``), the
        groups one after another."""
        if not self.depth_first:
            return super().latency_cycles
        by_group = {self._group(s): span for s, span in enumerate(self.group_cycles)}
        return math.ceil(sum(by_group.values()) - 1e-9)

    @property
    def dram_cycles(self) -> float:
        """Cycles the shared DRAM needs for one batch's traffic, all stages' (0: unlimited)."""
        per_cycle = self.arch.dram_bytes_per_cycle
        if per_cycle is None:
            return 0.0
        return self.dram_bytes / per_cycle

    @property
    def port_cycles(self) -> float:
        """Cycles the links from DRAM into the package (its ports, ``Fanout.ports``) need for
        one batch's DRAM traffic, all stages', the ports sharing it evenly (0: links without
        a bandwidth): every stage's DRAM words enter the mesh through them."""
        gb_per_s = package_level(self.arch).fanout.link_gb_per_s
        if gb_per_s is None:
            return 0.0
        ports = len(self._mesh.ports)
        return self.dram_bytes * 8 / (ports * gb_per_s * 8 / self.arch.clock_ghz)

    @property
    def _mesh(self) -> Mesh:
        """The package's mesh of chiplets and DRAM's ports into it (``mesh_below``)."""
        return mesh_below(self.arch, self.arch.inner_first.index(package_level(self.arch)))

    @cached_property
    def interval_cycles(self) -> int:
        """Cycles between two batches leaving the pipeline: the slowest stage's, or, when
        longer, the shared DRAM's for a batch, or the DRAM ports' links' (``port_cycles``).
        One stage is the network run layer after layer, each layer's time already waiting
        for its own DRAM traffic: its cycles (the same images/s and energy as
        ``NetworkResult``'s, not a cycle more for the rounding of the layers' DRAM times)."""
        # a stage is busy for its tiles' steps (more than its cycles where a tile has fewer
        # rows than its mappings compute at once)
        slowest = max(t * c for t, c in zip(self.stage_tiles, self.tile_cycles, strict=True))
        if len(self.stages) == 1:
            return round(slowest)
        if self.grouped:  # the package is one batch's until its last group is done
            slowest = self.latency_cycles
        shared = max(self.dram_cycles, self.port_cycles)
        return max(math.ceil(slowest - 1e-9), math.ceil(shared - 1e-9))

    @property
    def utilization(self) -> float:
        """Useful MACs / (interval x MAC units of the package)."""
        return self.macs / (self.interval_cycles * self.arch.mac_count)

    @cached_property
    def handover_bits(self) -> list[float]:
        """Bits x hops each stage boundary sends over the links (0: through DRAM): the
        activation's bits x the rows between the two bands' centres."""
        runs, out = self.runs, []
        centres = [first + s.rows / 2 for s, first in zip(self.stages, self.offsets, strict=True)]
        for k, (s, then) in enumerate(zip(self.stages, self.stages[1:], strict=False)):
            producer, consumer = runs[s.end - 1], runs[then.start]
            if "inputs" not in consumer.on_chip:
                out.append(0.0)
                continue
            bits = producer.layer.operand_size(Operand.O) * self.arch.compute.activation_bits
            out.append(bits * abs(centres[k + 1] - centres[k]))
        return out

    @cached_property
    def approach_bits(self) -> list[float]:
        """Bits x hops each stage's DRAM traffic crosses between DRAM's ports and its band
        (0 for a band they enter): a band is mapped as if its ports were its own
        (``Arch.with_chiplets``), this is the rest of the trip, along the axis the bands
        are cut on."""
        fx, fy = self.arch.chiplet_grid
        ports = self._mesh.ports
        along = [p[1] for p in ports] if fy >= fx else [p[0] for p in ports]
        out = []
        for s, first in zip(self.stages, self.offsets, strict=True):
            last = first + s.rows - 1
            hops = min(max(first - at, at - last, 0) for at in along)
            dram_bits = sum(
                self.runs[i].dram_bytes * 8 * self.network.layers[i].repeat
                for i in range(s.start, s.end)
            )
            out.append(dram_bits * hops)
        return out

    @property
    def handover_pj(self) -> float:
        """Energy of the stages' own trips over the links: the hand-overs' and the DRAM
        traffic's between the ports and the bands, bits x hops at the links' pJ/bit (as the
        cost-model chain priced the package's link)."""
        li = self.arch.inner_first.index(package_level(self.arch))
        bits = sum(self.handover_bits) + sum(self.approach_bits)
        return bits * float(self.costs.link_pj_per_bit[li])

    @cached_property
    def wait_pj_by_level(self) -> dict[str, float]:
        """Leakage of the stages faster than the interval while they wait, by level (the
        MACs' under the compute level's name)."""
        extra = {lvl.name: 0.0 for lvl in self.arch.levels}
        extra[self.arch.compute.name] = 0.0
        spans = self.group_cycles if self.grouped else [self.interval_cycles] * len(self.stages)
        for s, cycles, span in zip(self.stages, self.stage_cycles, spans, strict=True):
            wait = (span - cycles) / cycles
            for i in range(s.start, s.end):
                r, repeat = self.runs[i], self.network.layers[i].repeat
                for li, lvl in enumerate(r.arch.inner_first):
                    extra[lvl.name] += float(r.batch.static_pj[li, 0]) * repeat * wait
                extra[self.arch.compute.name] += float(r.batch.mac_static_pj[0]) * repeat * wait
        return extra

    @property
    def energy_pj(self) -> float:
        """Energy of one batch: its layers as they run, the hand-overs and the waits."""
        return super().energy_pj + self.handover_pj + sum(self.wait_pj_by_level.values())

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Energy (pJ) by level: the hand-overs at the links' level, the waits at each (the
        post-processing unit waits gated: ``magnet.model.postprocess``)."""
        waits = self.wait_pj_by_level
        out = {k: v + waits.get(k, 0.0) for k, v in super().energy_pj_by_level.items()}
        out[package_level(self.arch).name] += self.handover_pj
        return out

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category: the hand-overs are ``nop``, the waits ``static``."""
        out = dict(super().energy_pj_by_category)
        out["nop"] += self.handover_pj
        out["static"] += sum(self.wait_pj_by_level.values())
        return out

    def record(self) -> NetworkRecord:
        """The ``NetworkRecord``: rates at the pipeline's interval, its ``pipeline``."""
        rec = super().record()
        interval_s = self.interval_cycles / (self.arch.clock_ghz * 1e9)
        tops = 2 * self.macs / interval_s / 1e12
        entries = self.network.layers
        stages = [
            PipelineStage(
                first=entries[s.start].layer.name,
                last=entries[s.end - 1].layer.name,
                layers=sum(e.repeat for e in entries[s.start : s.end]),
                chiplets=s.arch.chiplets,
                latency_cycles=cycles,
                tiles=tiles,
                group=self._group(k),
            )
            for k, (s, cycles, tiles) in enumerate(
                zip(self.stages, self.stage_cycles, self.stage_tiles, strict=True)
            )
        ]
        area = rec.area_mm2
        return rec.model_copy(
            update={
                "images_per_s": self.network.batch / interval_s,
                "tops": tops,
                "tops_per_mm2": None if area is None else tops / area,
                "power_w": rec.energy_pj * 1e-12 / interval_s,
                "nop_bytes": (rec.nop_bytes or 0.0)
                + (sum(self.handover_bits) + sum(self.approach_bits)) / 8,
                "pipeline": stages,
            }
        )
