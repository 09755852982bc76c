"""Evaluate a whole network: one mapping per distinct layer shape, every layer reported.

A per-layer mapping file names the mapping of each layer; a layer without one takes the
mapping of another layer of the same shape, then ``default``::

    layers:
      conv1:
        - target: DRAM
          temporal: {K: 4}
      layer1.0.conv2: [...]
    default: [...]          # optional
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

from magnet.arch.spec import Arch, StorageLevel
from magnet.arguments import check_fields, checked_call, checked_methods
from magnet.cost import ArchCosts
from magnet.errors import MagnetError
from magnet.files import read_yaml
from magnet.mapping import Mapping
from magnet.model.evaluate import Result, evaluate_mapping, not_a_result, on_chip, tile_bits
from magnet.model.postprocess import (
    Chain,
    PostResult,
    Source,
    fusable,
    price_postprocess,
    require_unit,
)
from magnet.model.records import LayerRow, NetworkRecord, add_savings
from magnet.workload.dims import OPERANDS, Operand
from magnet.workload.layer import Layer, ShapeKey
from magnet.workload.network import Network, NetworkLayer


@checked_methods(init=True)
@dataclass
class LayerMappings:
    """Mappings by layer name, plus an optional default."""

    by_name: dict[str, Mapping]
    default: Mapping | None = None
    source: str = "mappings"

    def __post_init__(self) -> None:
        check_fields(self)

    @classmethod
    @checked_call
    def from_yaml(cls, path: str | Path) -> LayerMappings:
        """Read a per-layer mapping file (see the module docstring)."""
        data, src = read_yaml(path), str(path)
        return cls.from_data(data, src)

    @classmethod
    def from_data(cls, data: Any, source: str) -> LayerMappings:
        """From parsed YAML: ``layers`` (name -> mapping) and optionally ``default``."""
        if not isinstance(data, dict) or not set(data) <= {"layers", "default"}:
            raise MagnetError(
                "expected 'layers' (layer name -> mapping) and optionally 'default'",
                source=source,
            )
        layers = data.get("layers") or {}
        if not isinstance(layers, dict):
            raise MagnetError(
                "'layers' must map layer names to mappings", source=source, field="layers"
            )
        by_name = {
            str(name): Mapping.from_data(levels, source=f"{source}: layers.{name}")
            for name, levels in layers.items()
        }
        default = data.get("default")
        return cls(
            by_name=by_name,
            default=None if default is None else Mapping.from_data(default, f"{source}: default"),
            source=source,
        )

    def to_data(self) -> dict[str, Any]:
        """As YAML data, the inverse of ``from_data``."""
        out: dict[str, Any] = {
            "layers": {n: m.to_data()["mapping"] for n, m in self.by_name.items()}
        }
        if self.default is not None:
            out["default"] = self.default.to_data()["mapping"]
        return out


#: What the choice of the weights that stay minimises: energy^a x latency^b, as (a, b)
#: (the mapper's ``Objective``; the energy-delay product by default).
Objective = tuple[float, float]
EDP: Objective = (1.0, 1.0)

#: A layer of a network as it runs: a MAC layer under its mapping, or a post-processing
#: layer on the post-processing unit.
Run = Result | PostResult


def _home(arch: Arch, operand: Operand) -> StorageLevel | None:
    """The outermost on-chip level that keeps ``operand`` (the global buffer), if any."""
    return next(
        (
            lvl
            for lvl in arch.levels
            if not lvl.is_dram and operand in lvl.kept and lvl.capacity_bits is not None
        ),
        None,
    )


@dataclass
class RunPlan:
    """What ``plan_weights`` and ``keep_activations`` decide, entry by entry: ``base[i]``,
    the mapping a MAC entry runs under (its shape's, or the one that holds its weights);
    ``resident``, the entries whose weights stay on chip across batches; ``head[i]``, the
    MAC layer on whose output path a fused post-processing entry runs (None: not fused);
    ``kept[(p, c)]``, whether entry ``c`` reads entry ``p``'s output on chip;
    ``shares[i]``, the part of entry ``i``'s output held on chip at once (1: all of it;
    less when a depth-first pipeline passes it on a tile at a time:
    ``magnet.model.pipeline_result``; empty: 1 for every entry)."""

    network: Network
    base: list[Result | None]
    archs: list[Arch]
    producers: list[tuple[int, ...]]
    consumers: list[tuple[int, ...]]
    head: list[int | None]
    kept: dict[tuple[int, int], bool]
    resident: set[int] = field(default_factory=set)
    shares: list[float] = field(default_factory=list)

    def reserved_bits(self, i: int, li: int, besides: Collection[int] = ()) -> float:
        """Bits of weights staying at level ``li`` of each instance of entry ``i``'s design
        (its group: a pipeline's stage), those of the entries ``besides`` left out."""
        arch = self.archs[i]
        return sum(
            _held_bits(self, r)
            for r in self.resident
            if self.archs[r] is arch and r not in besides and _home_of(self, r) == li
        )

    def unit(self, i: int) -> int:
        """The entry heading the chain ``i`` runs in (itself unless fused)."""
        h = self.head[i]
        return i if h is None else h

    def tail(self, h: int) -> int:
        """The last entry of the chain headed by ``h`` (its output is the chain's)."""
        return chain_tail(self.head, h)

    def output_kept(self, t: int) -> bool:
        """Whether every reader of entry ``t``'s output reads it on chip (no DRAM write)."""
        readers = self.consumers[t]
        return bool(readers) and all(self.kept.get((t, c), False) for c in readers)

    def source(self, p: int | None, c: int) -> Source:
        """Where entry ``c`` reads the output of ``p`` (None: the network's input)."""
        if p is not None and self.head[c] is not None and p == c - 1:
            return "fused"
        return "chip" if p is not None and self.kept.get((p, c), False) else "dram"


def chain_tail(head: Sequence[int | None], h: int) -> int:
    """The last entry of the chain headed by entry ``h`` (``fused_heads``: the entries after
    it fused into it), whose output is the chain's."""
    t = h
    while t + 1 < len(head) and head[t + 1] == h:
        t += 1
    return t


def fused_heads(
    network: Network,
    archs: list[Arch],
    producers: list[tuple[int, ...]],
    consumers: list[tuple[int, ...]],
) -> list[int | None]:
    """``head[i]`` of every entry (``RunPlan``): a post-processing entry the unit can run on
    its producer's outputs (``fusable``), right after a MAC entry or an entry fused into
    one, that reads the output of the entry before it, which nothing else reads, on the
    same design (a pipeline's stage), neither repeating."""
    entries = network.layers
    head: list[int | None] = [None] * len(entries)
    for i in range(1, len(entries)):
        prev, layer = i - 1, entries[i].layer
        unit = archs[i].postprocess
        chained = not entries[prev].layer.is_postprocess or head[prev] is not None
        if (
            unit is not None
            and unit.fused
            and fusable(layer)
            and chained
            and archs[i] is archs[prev]
            and entries[i].repeat == entries[prev].repeat == 1
            and prev in producers[i]
            and consumers[prev] == (i,)
        ):
            head[i] = prev if head[prev] is None else head[prev]
    return head


def _room(run: Result | None, li: int, level: StorageLevel, skip: Operand | None) -> float:
    """Bits ``run`` keeps at level ``li`` besides operand ``skip`` (0: a post-processing
    layer, which streams through the unit, or a streaming level, whose tiles pass)."""
    if run is None or level.streaming:
        return 0.0
    return tile_bits(run, li, _BESIDES[skip])


#: The operands besides each one (None: all of them), in their order.
_BESIDES = {skip: tuple(o for o in Operand if o is not skip) for skip in (None, *Operand)}


def _homes(arch: Arch) -> list[tuple[int, StorageLevel]] | None:
    """The levels an activation kept on chip stays in (index, level): the outermost on-chip
    levels keeping outputs and inputs (one level on most designs); None: there is none."""
    out_home, in_home = _home(arch, Operand.O), _home(arch, Operand.I)
    if out_home is None or in_home is None:
        return None
    return [
        (arch.level_index(lvl.name), lvl)
        for lvl in {out_home.name: out_home, in_home.name: in_home}.values()
    ]


def _activation_bits(plan: RunPlan, p: int) -> float:
    """Bits of entry ``p``'s output kept on chip at once: at the input width of the global
    buffer, its share held at a time (``RunPlan.shares``)."""
    arch = plan.archs[p]
    in_home = _home(arch, Operand.I)
    assert in_home is not None
    share = plan.shares[p] if plan.shares else 1.0
    size = plan.network.layers[p].layer.operand_size(Operand.O)
    return size * in_home.bits(Operand.I) * share


def _passes(plan: RunPlan, p: int, c: int) -> bool:
    """Whether the mappings pass ``p``'s output through the global buffer to ``c`` (a mapping
    that bypasses it does not; a post-processing layer reads and writes it)."""
    arch = plan.archs[p]
    out_home, in_home = _home(arch, Operand.O), _home(arch, Operand.I)
    assert out_home is not None and in_home is not None
    producer, consumer = plan.base[plan.unit(p)], plan.base[c]
    li_out, li_in = arch.level_index(out_home.name), arch.level_index(in_home.name)
    out_ok = producer is None or bool(producer.keep[li_out, Operand.O])
    in_ok = consumer is None or plan.head[c] is not None or bool(consumer.keep[li_in, Operand.I])
    return out_ok and in_ok


def _fits_next(plan: RunPlan, p: int, c: int) -> bool:
    """The rule between neighbours (``NetworkResult.runs``): ``p``'s output together with
    the larger of what either side keeps in the global buffer besides it."""
    homes = _homes(plan.archs[p])
    if homes is None or not _passes(plan, p, c):
        return False
    bits = _activation_bits(plan, p)
    producer, consumer = plan.base[plan.unit(p)], plan.base[c]
    for li, lvl in homes:
        others = max(_room(producer, li, lvl, Operand.O), _room(consumer, li, lvl, Operand.I))
        # the fewer instances of either side's arch (a pipeline's neighbours run on groups of
        # a package's chiplets: ``magnet.mapper.planner``)
        instances = min(plan.archs[i].inner_first[li].instances for i in (p, c))
        weights = plan.reserved_bits(p, li, besides=(plan.unit(p), c)) * instances
        if lvl.capacity_bits is None or bits + others + weights > lvl.capacity_bits * instances:
            return False
    return True


def may_keep(arch: Arch, layer: Layer) -> bool:
    """Whether any plan can keep ``layer``'s output (an entry run once) on chip on ``arch``:
    what ``_fits_next`` and ``_fits_span`` ask of it alone, that the levels activations stay
    in exist and its bits fit each of them, all its instances. False: every plan writes it
    to DRAM and its readers read it there (the bounds before mapping, ``magnet.search.bounds``)."""
    homes, in_home = _homes(arch), _home(arch, Operand.I)
    if homes is None or in_home is None:
        return False
    bits = layer.operand_size(Operand.O) * in_home.bits(Operand.I)
    return all(bits <= (lvl.capacity_bits or 0) * lvl.instances for _, lvl in homes)


def _fits_span(plan: RunPlan, p: int, c: int, live: dict[int, set[int]]) -> bool:
    """The rule for an activation read later than by the next layer (a residual add's
    shortcut, a projection's input): the global buffer holds it, from the layer that makes
    it to the one that reads it, together with what every layer in between (both ends
    included) keeps there: its tiles, the activations it reads and writes on chip, and the
    other activations held across it (``live``, their producers by chain head). Each
    activation counts once: a residual block's input, which its first layer also reads on
    chip, is one tensor in the buffer, not two."""
    arch = plan.archs[p]
    homes = _homes(arch)
    heads = sorted({plan.unit(i) for i in range(plan.unit(p), plan.unit(c) + 1)})
    if homes is None or any(plan.archs[h] is not arch for h in heads):
        return False  # across a pipeline's stages: not kept
    if not _passes(plan, p, c):
        return False
    bits = _activation_bits(plan, p)
    for h in heads:  # what each layer holds besides p, the same in every home
        t = plan.tail(h)
        held = {
            q
            for i in range(h, t + 1)
            for q in plan.producers[i]
            if q < h and plan.kept.get((q, i), False)
        }
        if h != plan.unit(p) and plan.output_kept(t):
            held.add(t)
        held = (held | live.get(h, set())) - {p}
        others = sum(_activation_bits(plan, q) for q in sorted(held))  # one order: one sum
        for li, lvl in homes:
            need = bits + _room(plan.base[h], li, lvl, None) + others
            need += plan.reserved_bits(h, li, besides=(h,)) * lvl.instances
            if lvl.capacity_bits is None or need > lvl.capacity_bits * lvl.instances:
                return False
    return True


def _home_of(plan: RunPlan, i: int) -> int | None:
    """The level entry ``i``'s weights stay in when they stay (``Result.weight_home``)."""
    run = plan.base[i]
    return None if run is None else run.weight_home


def _held_bits(plan: RunPlan, i: int) -> float:
    """Bits of entry ``i``'s weights (all its repeats) on each instance of their home, the
    layers spread evenly over the home's instances (``NetworkResult.runs``)."""
    run = plan.base[i]
    if run is None or run.weight_home is None:
        return 0.0
    home = run.weight_home
    used = float(run.batch.counts.instances[home, 0]) / run.arch.inner_first[home].instances
    return run.held_weight_bits * used * plan.network.layers[i].repeat


@dataclass
class _Sizes:
    """What ``_weights_fit`` asks of each result, found once per ``_stay``, which asks it for
    every candidate over every MAC entry of the design (230,000 times on fused ResNet-50 on
    simba-package-36), by result (``id``: the plan and the holding mappings keep every
    result alive meanwhile)."""

    plan: RunPlan
    rooms: dict[tuple[int, int], float] = field(default_factory=dict)
    helds: dict[int, float] = field(default_factory=dict)
    placed: dict[tuple[int, int], float] = field(default_factory=dict)
    #: the entries whose mapping, or whether their weights stay, changed, in turn
    log: list[int] = field(default_factory=list)
    #: by design and home: what each entry of the design keeps there besides its weights
    #: that stay, and how much of ``log`` that has seen
    streams: dict[tuple[int, int], tuple[dict[int, float], int]] = field(default_factory=dict)

    def changed(self, entries: Iterable[int]) -> None:
        """Note that ``entries``' mappings, or whether their weights stay, changed."""
        self.log.extend(entries)

    def streaming(self, arch: Arch, li: int, group: list[int]) -> float:
        """The most any entry of ``group`` (the MAC entries on ``arch``) keeps at its level
        ``li`` besides its weights that stay there (0 at least), each entry's found again
        only when it changed (``log``)."""
        key = (id(arch), li)
        level = arch.inner_first[li]
        found = self.streams.get(key)
        if found is None:
            values = {j: self._stream(j, li, level) for j in group}
        else:
            values, seen = found
            for j in self.log[seen:]:
                if j in values:
                    values[j] = self._stream(j, li, level)
        self.streams[key] = (values, len(self.log))
        return max(0.0, *values.values())

    def _stream(self, j: int, li: int, level: StorageLevel) -> float:
        run = _run(self.plan, j)
        own = self.held(run) if j in self.plan.resident and run.weight_home == li else 0.0
        return self.room(run, li, level) - own

    def room(self, run: Result, li: int, level: StorageLevel) -> float:
        """``_room(run, li, level, None)``: all that ``run`` keeps at level ``li``."""
        key = (id(run), li)
        if key not in self.rooms:
            self.rooms[key] = _room(run, li, level, None)
        return self.rooms[key]

    def held(self, run: Result) -> float:
        """``run.held_weight_bits``."""
        key = id(run)
        if key not in self.helds:
            self.helds[key] = run.held_weight_bits
        return self.helds[key]

    def held_bits(self, i: int) -> float:
        """``_held_bits(plan, i)`` under entry ``i``'s mapping now."""
        key = (i, id(self.plan.base[i]))
        if key not in self.placed:
            self.placed[key] = _held_bits(self.plan, i)
        return self.placed[key]


def _weights_fit(plan: RunPlan, arch: Arch, group: list[int], sizes: _Sizes) -> bool:
    """Whether the weights staying on ``arch`` fit its homes beside the tiles that stream:
    each instance of a home split into a region for the tiles of the running layer (the
    largest any layer of the ``group``, the MAC entries on that design in order, keeps there
    besides its staying weights) and one for the weights that stay, which holds each staying
    layer's tile and all of them together (a layer's tiles on the instances its mapping
    uses, the layers placed apart). ``sizes``: each result's, asked once."""
    resident = plan.resident
    homes = {_home_of(plan, r) for r in resident if plan.archs[r] is arch}
    for li in homes:
        assert li is not None
        level = arch.inner_first[li]
        if level.capacity_bits is None:
            continue
        region = level.capacity_bits - sizes.streaming(arch, li, group)
        staying = [r for r in resident if plan.archs[r] is arch and _home_of(plan, r) == li]
        if any(sizes.held(_run(plan, r)) > region for r in staying):
            return False
        # ``reserved_bits(group[0], li)``: per instance, spread over them all, summed alike
        if sum(sizes.held_bits(r) for r in staying) > region:
            return False
    return True


def _run(plan: RunPlan, i: int) -> Result:
    """The MAC result entry ``i`` runs under."""
    run = plan.base[i]
    assert run is not None
    return run


def _stay(
    plan: RunPlan, holding: list[Result | None], objective: Objective, eager: bool = False
) -> None:
    """Decide which entries' weights stay on chip across batches (``NetworkResult.runs``):
    greedily, the largest gain per bit held first, each kept where the design still has
    room (``_weights_fit``) and the objective gains (``eager``: whether it gains or not).
    The gain is the objective's to first order: its energy weight x the energy saved over
    the network's, plus its latency weight x the cycles saved over the network's.
    ``holding[i]``: the mapping of entry ``i``'s shape that holds its weights (None: none),
    which then runs every entry of that shape on that design."""
    entries = plan.network.layers
    runs = {i: r for i, r in enumerate(plan.base) if r is not None}
    energy, cycles = _totals(plan)
    per_energy, per_cycle = objective

    # the entries of each shape on each design: they run under one mapping
    alike: dict[tuple[int, ShapeKey], list[int]] = {}
    for j in runs:
        alike.setdefault((id(plan.archs[j]), entries[j].layer.shape_key()), []).append(j)
    twins_of = {j: same for same in alike.values() for j in same}
    # each design's MAC entries (``_weights_fit``'s group), in order
    groups: dict[int, list[int]] = {}
    for j in runs:
        groups.setdefault(id(plan.archs[j]), []).append(j)

    # a result's energy and cycles, as alone or with its weights staying, asked once each
    prices: dict[tuple[int, bool], tuple[float, int]] = {}

    def priced(run: Result, stays: bool) -> tuple[float, int]:
        key = (id(run), stays)  # the plan and ``holding`` keep every run alive meanwhile
        if key not in prices:
            as_run = on_chip(run, ("weights",)) if stays else run
            prices[key] = (as_run.energy_pj, as_run.latency_cycles)
        return prices[key]

    def gain(i: int, held: Result) -> float:  # the objective's, to first order
        de = dc = 0.0
        for j in twins_of[i]:
            before_pj, before_cycles = priced(_run(plan, j), j in plan.resident)
            after_pj, after_cycles = priced(held, j == i or j in plan.resident)
            de += (before_pj - after_pj) * entries[j].repeat
            dc += (before_cycles - after_cycles) * entries[j].repeat
        return per_energy * de / energy + per_cycle * dc / cycles

    def order(i: int) -> float:
        held = holding[i]
        assert held is not None and held.weight_home is not None
        used = float(held.batch.counts.instances[held.weight_home, 0])
        return -gain(i, held) / (held.held_weight_bits * used * entries[i].repeat)

    candidates = [i for i in runs if (h := holding[i]) is not None and h.held_weight_bits > 0]
    sizes = _Sizes(plan)
    for i in sorted(candidates, key=order):
        held = holding[i]
        assert held is not None
        if not eager and gain(i, held) <= 0:
            continue
        before = {j: plan.base[j] for j in twins_of[i]}  # i among them
        for j in before:
            plan.base[j] = held
        plan.resident.add(i)
        sizes.changed(before)
        if not _weights_fit(plan, plan.archs[i], groups[id(plan.archs[i])], sizes):
            plan.resident.discard(i)
            for j, run in before.items():
                plan.base[j] = run
            sizes.changed(before)


def _totals(plan: RunPlan) -> tuple[float, float]:
    """Energy (pJ, at least 1e-30) and cycles (at least 1) of the plan's MAC entries, their
    repeats included, each mapped alone but for the weights that stay."""
    energy = cycles = 0.0
    for i, run in enumerate(plan.base):
        if run is None:
            continue
        if i in plan.resident:
            run = on_chip(run, ("weights",))
        repeat = plan.network.layers[i].repeat
        energy += run.energy_pj * repeat
        cycles += run.latency_cycles * repeat
    return max(energy, 1e-30), max(cycles, 1.0)


def _steady_score(plan: RunPlan, objective: Objective) -> float:
    """The objective (its log) of the plan's MAC entries (``_totals``): what ``plan_weights``
    weighs plans by."""
    energy, cycles = _totals(plan)
    per_energy, per_cycle = objective
    return per_energy * math.log(energy) + per_cycle * math.log(cycles)


def plan_weights(
    network: Network,
    base: list[Result | None],
    archs: list[Arch],
    holding: list[Result | None] | None = None,
    lean: list[Result | None] | None = None,
    objective: Objective = EDP,
    eager: bool = False,
) -> RunPlan:
    """How every MAC entry of ``network`` runs and the weights that stay (the rule:
    ``NetworkResult.runs``), no activation kept on chip yet (``keep_activations``): ``base``
    holds each MAC entry's result mapped alone (None for a post-processing entry),
    ``archs`` the design each entry runs on (a pipeline's stage), ``holding`` and ``lean``
    each MAC entry's mapping that holds its weights and its lean one, if any
    (``MapOutcome.holding``, ``MapOutcome.lean``); ``objective``: the weights of energy and
    latency the choice of the weights that stay minimises (the mapper's); ``eager``: every
    weight that fits stays, whether the objective gains or not (a depth-first pipeline,
    which reads the others again for every tile). Which weights stay does not depend on
    the activations the plan then keeps, nor on how much of each it holds at once
    (``_stay`` and ``_steady_score`` read neither), so the plans of one split held at
    different shares share it (``magnet.model.pipeline_result``)."""
    producers, consumers = network.edges()
    fused = fused_heads(network, archs, producers, consumers)
    given = holding or [None] * len(base)
    holders = [
        h or (r if r is not None and r.holds_weights else None)
        for h, r in zip(given, base, strict=True)
    ]
    # the weights chosen twice, the layers that keep none mapped at their best or lean
    # (leaving the home to the weights), and the plan the objective prefers kept
    starts = [list(base)]
    if lean is not None and any(r is not None for r in lean):
        starts.append([m or r for m, r in zip(lean, base, strict=True)])
    plans = []
    for start in starts:
        option = RunPlan(network, start, archs, producers, consumers, fused, {}, set(), [])
        _stay(option, holders, objective, eager)
        plans.append(option)
    return min(plans, key=lambda p: _steady_score(p, objective))


def keep_activations(weights: RunPlan, shares: list[float] | None = None) -> RunPlan:
    """The plan (``RunPlan``): ``weights`` (``plan_weights``, left as it is) with the
    activations kept on chip where they fit (the rule: ``NetworkResult.runs``), ``shares``
    of each entry's output held at once (``RunPlan.shares``; None: all of it)."""
    plan = replace(
        weights,
        base=list(weights.base),
        kept={},
        resident=set(weights.resident),
        shares=shares or [],
    )
    entries, producers, consumers = plan.network.layers, plan.producers, plan.consumers
    single = [e.repeat == 1 for e in entries]
    # neighbours first: a chain's output read by the next chain as its only input
    heads = [i for i in range(len(entries)) if plan.head[i] is None]
    for h, then in pairwise(heads):
        t = plan.tail(h)
        if single[t] and single[then] and producers[then] == (t,):
            plan.kept[(t, then)] = _fits_next(plan, t, then)
    # then activations read later, in the order they are made, each holding its room
    live: dict[int, set[int]] = {}
    for t in range(len(entries)):
        for c in consumers[t]:
            if (t, c) in plan.kept or plan.source(t, c) == "fused":
                continue
            inputs = entries[c].layer.activation_inputs
            readable = single[t] and single[c] and len(producers[c]) <= inputs
            if readable and _fits_span(plan, t, c, live):
                plan.kept[(t, c)] = True
                for h in {plan.unit(i) for i in range(plan.unit(t) + 1, plan.unit(c))}:
                    live.setdefault(h, set()).add(t)
    return plan


#: Post-processing entries priced, by what prices them (``price_plan``'s key): shared by the
#: plans of one design (``costs``) whose designs are the same objects.
PostPrices = dict[tuple[object, ...], PostResult]


def price_plan(
    plan: RunPlan,
    costs: ArchCosts,
    first: bool = False,
    steady: Sequence[Run] | None = None,
    posts: PostPrices | None = None,
) -> list[Run]:
    """Every entry priced with the plan's traffic: MAC entries again with the DRAM traffic
    the network keeps on chip (``first``: the first batch of a stream, which loads the
    weights that stay), post-processing entries on the unit (fused ones overlapped with
    their chain). ``steady``: the plan's entries priced without ``first``; an entry the
    first batch runs alike (a MAC layer whose weights do not stay, a post-processing layer
    not fused into one whose weights do) is taken from it. ``posts``: post-processing
    entries priced before, on the same ``costs`` and design objects (a pipeline's plans
    share them: ``magnet.model.pipeline_result.PlansShared``); None: this plan's own."""
    entries = plan.network.layers
    runs: list[Run] = []
    chain: Chain | None = None
    alike = False  # the entry before ran as in ``steady`` (so its chain is the same)
    # post-processing entries priced so far, by what prices them (its shape, design, inputs'
    # sources, output kept, the chain it overlaps): a network repeats them many times
    posts = {} if posts is None else posts
    for i, e in enumerate(entries):
        layer, made_of = e.layer, plan.producers[i]
        h = plan.head[i]
        alike = steady is not None and (
            (h is None or alike) if layer.is_postprocess else i not in plan.resident
        )
        if alike:
            assert steady is not None
            run = steady[i]
            chain = run.chain if isinstance(run, PostResult) else Chain.of(run.batch)
            runs.append(run)
            continue
        if not layer.is_postprocess:
            r = plan.base[i]
            assert r is not None
            kept = []
            if len(made_of) == 1 and plan.source(made_of[0], i) == "chip":
                kept.append("inputs")
            if plan.output_kept(plan.tail(i)):
                kept.append("outputs")
            if i in plan.resident and not first:
                kept.append("weights")
            run = on_chip(r, kept)
            runs.append(run)
            chain = Chain.of(run.batch)
            continue
        slots = list(made_of) if len(made_of) <= layer.activation_inputs else []
        sources = [plan.source(p, i) for p in slots]
        sources += ["dram"] * (layer.activation_inputs - len(sources))
        fused_into = None if h is None else entries[h].layer.name
        over = None if h is None else chain
        output_kept = plan.output_kept(i)
        key = (
            layer.shape_key(),
            id(plan.archs[i]),
            tuple(sources),
            output_kept,
            None if over is None else (over.cycles, over.level_cycles.tobytes(), over.link_cycles),
        )
        found = posts.get(key)
        if found is None:
            arch = plan.archs[i]
            found = posts[key] = price_postprocess(
                layer, arch, costs, sources, output_kept, fused_into=fused_into, chain=over
            )
        post = replace(found, layer=layer, fused_into=fused_into)
        chain = post.chain
        runs.append(post)
    return runs


def _zeros(run: Run) -> dict[str, Any]:
    """A row's densities, effectual MACs and savings on zeros (``Result``'s; none for a
    post-processing layer)."""
    if not isinstance(run, Result):
        return {}
    return {
        "densities": run.densities,
        "effectual_macs": run.effectual_macs,
        "zeros_saved": run.zeros_saved,
    }


@checked_methods()
@dataclass
class NetworkResult:
    """A network on one design: one ``Result`` per distinct layer shape, a row per layer.

    Layers run one after another; ``runs`` prices each layer of the network with the
    activations its neighbours keep on chip.
    """

    network: Network
    arch: Arch
    costs: ArchCosts
    by_shape: dict[ShapeKey, Result]  # Layer.shape_key() -> result
    dataflow: str | None = None
    #: each shape's best mapping that holds its weights (``MapOutcome.holding``), where the
    #: mapper found one; a shape's own result holds them or not (``Result.holds_weights``)
    holding: dict[ShapeKey, Result] = field(default_factory=dict)
    #: each shape's best lean mapping (``MapOutcome.lean``), where the mapper found one
    lean: dict[ShapeKey, Result] = field(default_factory=dict)
    #: what the choice of the weights that stay minimises (the mapper's objective)
    objective: Objective = EDP

    def result(self, layer: Layer) -> Result:
        """The mapping of ``layer``'s shape as mapped alone (its activations in DRAM); a
        post-processing layer has none (it runs on the unit: ``runs``)."""
        if layer.is_postprocess:
            raise MagnetError(
                f"layer {layer.name!r} is a post-processing layer: it is not mapped; its run "
                "on the post-processing unit is in NetworkResult.runs",
                field="layer",
            )
        return self.by_shape[layer.shape_key()]

    @cached_property
    def runs(self) -> list[Run]:
        """Each entry of the network as it runs there: a MAC layer under its shape's mapping,
        priced with the activations that stay on chip; a post-processing layer on the
        post-processing unit (``magnet.model.postprocess``), fused or a pass of its own.

        The rule. Each layer's mapping is found alone, reading its inputs from DRAM and
        writing its outputs there. Then, where the design's post-processing unit sits on the
        MAC array's output path, an elementwise post-processing layer (an activation, a bias
        or scale, a batchnorm, a residual add) right after a MAC layer (or after one fused
        into it), reading its output, which nothing else reads, runs on that output as it
        leaves: its chain's output is the last layer's, written where the MAC layer's would
        go. Between consecutive chains i and i + 1, where i's output is i + 1's only input
        (``Network.edges``: the ONNX graph or the zoo's, else the list order), the
        activation stays in the global buffer (the outermost on-chip level keeping outputs,
        and the one keeping inputs) when that level holds the whole activation (i's output
        at the input width; i + 1's zero padding is not stored) together with the larger of
        what either layer's mapping keeps there besides it (i's inputs and weights, i + 1's
        outputs and weights; a streaming level's tiles pass through and take no room; a
        post-processing layer keeps nothing there), and both mappings pass the activation
        through that level (neither bypasses it). An activation read later (a residual
        add's shortcut, a projection shortcut's input, the second input of an add) stays
        there when the level holds it, from the layer that makes it to the one that reads
        it, together with everything each layer in between keeps there (its tiles, the
        activations it reads and writes on chip, and the activations held across it),
        decided in the order they are made. A reader then reads no input from DRAM, and a
        layer whose every reader reads it on chip writes no output to DRAM (nor reads
        partial sums back: the region that holds the whole activation holds them). The
        on-chip traffic is charged as the mappings count it: i's output leaves the global
        buffer and i + 1's input enters it, as a copy between its regions would. Energy and
        latency (DRAM cycles, and static energy over the shorter run) are priced again with
        the DRAM traffic that is left.

        Weights that stay. The network runs on a stream of batches; a layer's weights stay
        on chip from one batch to the next when its mapping holds them (each instance of the
        outermost on-chip level keeping weights, their home, keeps one tile of them for the
        whole layer: ``Result.holds_weights``) and they fit (``_weights_fit``): each instance
        of the home is split into a region for the running layer's tiles (the largest any
        layer of the design keeps there besides its staying weights) and one for the weights
        that stay, which holds each staying layer's tile and all of them together, spread
        over the instances (the layers placed apart: an assumption of the placement). The
        layers are taken greedily, the largest gain per bit held first, each kept where the
        objective (``objective``: the mapper's) gains to first order; twice, once with the
        other layers on their best mappings and once on their lean ones (``lean``: at most
        ``magnet.mapper.whole_network.LEAN_SHARE`` of the home), the better kept. A shape has one
        mapping: its best, its lean one, or its best that holds its weights (``holding``)
        once one of its layers keeps them. Such a layer reads no weights from DRAM, fills no
        weights into their home and sends none over the fan-outs above it (a package's links
        among them); the first batch of the stream loads them as any batch did
        (``first_runs``). Where the home also holds activations (the global buffer of some
        designs), the weights that stay take their room there.
        """
        return price_plan(self.plan, self.costs)

    @cached_property
    def plan(self) -> RunPlan:
        """How each entry runs (``runs``): its mapping, the weights that stay, the
        activations kept on chip."""
        entries = self.network.layers
        base = [None if e.layer.is_postprocess else self.result(e.layer) for e in entries]
        holding, lean = (
            [None if e.layer.is_postprocess else found.get(e.layer.shape_key()) for e in entries]
            for found in (self.holding, self.lean)
        )
        archs = [self.arch] * len(entries)
        weights = plan_weights(self.network, base, archs, holding, lean, self.objective)
        return keep_activations(weights)

    @cached_property
    def first_runs(self) -> list[Run]:
        """Each entry as it runs for the first batch of a stream: as ``runs``, but loading
        the weights that stay from DRAM."""
        return price_plan(self.plan, self.costs, first=True, steady=self.runs)

    def _loading(self, key: str) -> float:
        """What loading the weights that stay adds to ``key`` of the first batch."""
        pairs = zip(self.first_runs, self.runs, self.network.layers, strict=True)
        return float(sum((getattr(f, key) - getattr(r, key)) * e.repeat for f, r, e in pairs))

    @property
    def first_latency_cycles(self) -> int:
        """Cycles of the first batch of a stream, which loads the weights that stay."""
        return self.latency_cycles + round(self._loading("latency_cycles"))

    @property
    def first_energy_pj(self) -> float:
        """Energy of the first batch of a stream, which loads the weights that stay."""
        return self.energy_pj + self._loading("energy_pj")

    @property
    def weights_stay(self) -> bool:
        """Whether the weights the plan holds (``RunPlan.resident``) stay on chip from one
        batch to the next (a design whose chiplets other work reuses between batches loads
        them every batch)."""
        return True

    @property
    def weights_on_chip_bytes(self) -> float:
        """Bytes of weights that stay on chip across batches (every copy: a weight held by
        several instances counts once per instance)."""
        plan, entries = self.plan, self.network.layers
        total = 0.0
        for i in plan.resident if self.weights_stay else ():
            run = plan.base[i]
            assert run is not None and run.weight_home is not None
            instances = run.batch.counts.instances[run.weight_home, 0]
            total += run.held_weight_bits * instances * entries[i].repeat / 8
        return total

    @property
    def macs(self) -> int:
        """MACs of the whole network, repeats included."""
        return self.network.macs

    def _total(self, key: str) -> float:
        """``key`` of every entry as it runs (``runs``), times its repeat count, summed."""
        total: float = sum(getattr(r, key) * e.repeat for r, e in self._entries())
        return total

    def _entries(self) -> Iterator[tuple[Run, NetworkLayer]]:
        """(run, network entry) pairs: each entry of the network as it runs there."""
        return zip(self.runs, self.network.layers, strict=True)

    @property
    def energy_pj(self) -> float:
        """Energy of the whole network, pJ."""
        return self._total("energy_pj")

    @property
    def latency_cycles(self) -> int:
        """Cycles of the whole network: layers run one after another."""
        return sum(r.latency_cycles * e.repeat for r, e in self._entries())

    @property
    def dram_bytes(self) -> float:
        """Bytes moved to and from DRAM by the whole network."""
        return self._total("dram_bytes")

    @property
    def utilization(self) -> float:
        """Useful MACs / (cycles x MAC units) of the whole network."""
        return self.macs / (self.latency_cycles * self.arch.mac_count)

    def _sum(self, key: str) -> dict[str, float]:
        """The breakdown ``key`` of every entry as it runs, times its repeat count, summed."""
        out: dict[str, float] = {}
        for r, e in self._entries():
            for name, pj in getattr(r, key).items():
                out[name] = out.get(name, 0.0) + pj * e.repeat
        return out

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Energy (pJ) by level, outermost first, the post-processing unit, then the MACs."""
        out = self._sum("energy_pj_by_level")
        mac = self.arch.compute.name
        return {**{k: v for k, v in out.items() if k != mac}, mac: out[mac]}

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category; the values add up to ``energy_pj``."""
        return self._sum("energy_pj_by_category")

    @property
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy by level (outermost first) and operand, of every entry as it runs
        (``runs``) times its repeat count; adds up to the ``memory`` and ``dram`` categories."""
        out: dict[str, dict[str, float]] = {lvl.name: {} for lvl in self.arch.levels}
        for r, e in self._entries():
            for level, ops in r.energy_pj_by_operand.items():
                slot = out.setdefault(level, {})  # the post-processing unit's buffer too
                for op, pj in ops.items():
                    slot[op] = slot.get(op, 0.0) + pj * e.repeat
        return {level: {op: ops[op] for op in OPERANDS if op in ops} for level, ops in out.items()}

    def rows(self) -> list[LayerRow]:
        """A ``LayerRow`` per entry of the network, as it runs (one repeat's numbers)."""
        return [
            LayerRow(
                name=e.layer.name,
                kind=e.layer.kind,
                op=e.layer.op,
                fused_into=r.fused_into if isinstance(r, PostResult) else None,
                shape=e.layer.shape_str(),
                count=e.repeat,
                macs=e.layer.macs,
                energy_pj=r.energy_pj,
                latency_cycles=r.latency_cycles,
                utilization=r.utilization,
                bottleneck=r.bottleneck,
                bound=r.bound,
                dram_bytes=r.dram_bytes,
                off_chip=[op for op, b in r.dram_bytes_by_operand.items() if b > 0],
                energy_pj_by_category=r.energy_pj_by_category,
                partition=r.partition,
                nop_bytes=r.nop_bytes,
                weights_at=self._weights_at(i),
                mapping_start=r.start if isinstance(r, Result) else None,
                **_zeros(r),
            )
            for i, (r, e) in enumerate(self._entries())
        ]

    def _weights_at(self, i: int) -> str | None:
        """Where entry ``i``'s weights live across a stream of batches: the level they stay
        in, ``DRAM`` (read again every batch), None for a post-processing layer."""
        run = self.plan.base[i]
        if run is None:
            return None
        home = run.weight_home
        if i in self.plan.resident and home is not None and self.weights_stay:
            return self.arch.inner_first[home].name
        return self.arch.levels[0].name

    def record(self) -> NetworkRecord:
        """The network as a ``NetworkRecord`` (what ``--json`` prints and a search stores)."""
        energy, latency = self.energy_pj, self.latency_cycles  # sums over every layer
        rows = self.rows()
        latency_s = latency / (self.arch.clock_ghz * 1e9)
        energy_j = energy * 1e-12
        ops = 2 * self.macs
        area = self.costs.area_mm2
        tops = ops / latency_s / 1e12
        tops_per_w = ops / energy_j / 1e12 if energy_j > 0 else math.inf
        tops_per_mm2 = None if area is None else tops / area if area > 0 else math.inf
        for metric, value in (("tops_per_w", tops_per_w), ("tops_per_mm2", tops_per_mm2)):
            if value is not None and not math.isfinite(value):
                what = f"the {metric} of {self.network.name!r} on {self.arch.name!r}"
                priced = f"(energy {energy:g} pJ, area {area} mm^2)"
                raise not_a_result(f"{what} {priced}", value, self.costs)
        return NetworkRecord(
            network=self.network.name,
            arch=self.arch.name,
            dataflow=self.dataflow,
            cost_model=self.costs.model_name,
            clock_ghz=self.arch.clock_ghz,
            voltage_v=self.arch.voltage_v,
            notes=list(self.network.notes),
            skipped_ops=dict(self.network.skipped),
            layers_total=self.network.layer_count,
            unique_shapes=len(self.by_shape),
            macs=self.macs,
            latency_cycles=latency,
            latency_s=latency_s,
            images_per_s=self.network.batch / latency_s,
            chiplets=self.arch.chiplets,
            utilization=self.utilization,
            energy_pj=energy,
            energy_pj_per_mac=energy / self.macs,
            edp_pj_cycles=energy * latency,
            dram_bytes=self.dram_bytes,
            nop_bytes=self._total("nop_bytes"),
            power_w=energy_j / latency_s,
            tops=tops,
            tops_per_w=tops_per_w,
            tops_per_mm2=tops_per_mm2,
            peak_macs_per_cycle=self.arch.mac_count,
            dram_bytes_per_cycle=self.arch.dram_bytes_per_cycle,
            energy_pj_by_level=self.energy_pj_by_level,
            energy_pj_by_operand=self.energy_pj_by_operand,
            energy_pj_by_category=self.energy_pj_by_category,
            area_mm2=area,
            area_mm2_by_component=self.costs.area_mm2_by_component,
            layers=rows,
            zeros_saved=add_savings((row.zeros_saved, row.count) for row in rows),
            mappings={
                r.layer.shape_str(): r.mapping.to_data()["mapping"]
                for r in reversed(self.plan.base)  # each shape's mapping as it runs
                if r is not None
            },
            first_latency_s=self.first_latency_cycles / (self.arch.clock_ghz * 1e9),
            first_energy_pj=self.first_energy_pj,
            weights_on_chip_bytes=self.weights_on_chip_bytes,
        )


def evaluate_network(
    network: Network, arch: Arch, costs: ArchCosts, mappings: LayerMappings
) -> NetworkResult:
    """Evaluate each distinct MAC layer shape once under its given mapping (the
    post-processing layers run on the unit: ``NetworkResult.runs``)."""
    require_unit(arch, [e.layer for e in network.layers])
    by_shape: dict[ShapeKey, Result] = {}
    missing: list[str] = []
    for layer, _count, names in network.unique_layers(mapped=True):
        named = next((n for n in names if n in mappings.by_name), None)
        mapping = mappings.default if named is None else mappings.by_name[named]
        if mapping is None:
            missing.extend(names)
            continue
        src = f"{mappings.source}: " + ("default" if named is None else f"layers.{named}")
        by_shape[layer.shape_key()] = evaluate_mapping(layer, arch, costs, mapping, source=src)
    if missing:
        raise MagnetError(
            f"no mapping for {len(missing)} layer(s): {', '.join(missing[:8])}"
            f"{' ...' if len(missing) > 8 else ''}; add them under 'layers' or give 'default'",
            source=mappings.source,
        )
    unknown = sorted(
        set(mappings.by_name) - {e.layer.name for e in network.layers if not e.layer.is_postprocess}
    )
    if unknown:
        raise MagnetError(
            f"mappings for layers the network does not have: {', '.join(unknown[:8])}",
            source=mappings.source,
            field="layers",
        )
    return NetworkResult(network, arch, costs, by_shape)
