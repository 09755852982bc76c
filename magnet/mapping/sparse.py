"""Zeros: a batch's dense access counts turned into the accesses a sparse design makes.

Sparseloop's formulation (Wu et al., MICRO 2022): the dense analysis (``analyze``) first,
then, per level and tensor, the level's format and its gating or skipping
(``magnet.arch.sparse``) applied to the counts as expected values under the layer's
densities (``magnet.workload.sparsity``); density 1 and no format or action leave the counts
as they are.

* Formats. A compressed tensor's words at a level are stored and moved as its non-zeros plus
  metadata (``TensorSparsity.bits_per_word``): its reads, fills and updates there and its
  words on the fan-out below are scaled by (bits per dense word) / (bits of a word), so DRAM
  bytes, bandwidth, network words and energy all see the compressed size. Capacity is
  checked on the compressed tiles: their expected size, or their worst
  (``Arch.sparse_capacity``).
* Gating and skipping. The level's reads of the target (and, of outputs, its updates) are
  made only when a tile of each ``condition_on`` tensor holds a non-zero: the tile that tensor
  has at the nearest level inside this one keeping it (one word when none does: the MAC's
  operand), non-empty with ``Density.occupied``. Skipping removes the others from the counts;
  gating keeps them for the bandwidth (their slots) and prices only those made (a gated access
  costs nothing: an assumption, Accelergy's gated actions are near zero).
* Compute. The MACs' ``zeros`` gate (energy) or skip (energy and cycles) a multiply whose
  ``on`` operands are zero: effectual MACs = MACs x the product of those densities. Skipping
  pays for load imbalance: the MACs below the innermost fan-out (a vector unit's lanes, a
  systolic array) step together, so a step is skipped only when every lane's operands are
  zero (1 - (1 - p)^lanes of the steps remain), but for an operand the innermost level
  keeping it holds compressed: its non-zeros alone reach the lanes (a sparse tensor core's
  2:4 weights), so its density scales the steps outright (for a uniform one, an optimistic
  bound: its fibers' counts differ); instances of the fan-outs above it run their
  own loops between the iterations of the outermost fan-out's level, each its own count of
  effectual steps, and wait for the slowest: the expected maximum of ``instances``
  binomial(steps, p) counts, by the normal approximation (mean + Blom's expected maximum of
  that many standard normals x the deviation).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from statistics import NormalDist

import numpy as np

from magnet.arch.sparse import ComputeZeros
from magnet.arch.spec import Arch
from magnet.mapping.analysis import Counts, FloatArray, operand_bits, tile_capacity_bits
from magnet.mapping.mapping import MappingBatch
from magnet.workload.dims import OPERANDS, Operand, parse_operand
from magnet.workload.layer import Layer


def is_sparse(layer: Layer, arch: Arch) -> bool:
    """Whether zeros change anything: a density below 1, or a format or an action."""
    return arch.sparse or not layer.densities.dense


def stored_bits(layer: Layer, arch: Arch, *, capacity: bool = False) -> FloatArray:
    """float[level, operand]: bits each level stores and moves per word of each dense
    operand, metadata included (its word's bits when uncompressed); ``capacity``: as the
    capacity check counts them (``Arch.sparse_capacity``)."""
    bits = operand_bits(arch)
    for li, lvl in enumerate(arch.inner_first):
        for name, spec in lvl.sparse.items():
            op = parse_operand(name)
            density = layer.densities.of(op)
            share = density.expected(layer.operand_size(op))
            if capacity and arch.sparse_capacity == "worst":
                share = density.worst()
            bits[li, op] = spec.bits_per_word(int(bits[li, op]), share)
    return bits


def with_zeros(layer: Layer, arch: Arch, batch: MappingBatch, counts: Counts) -> Counts:
    """``counts`` (the dense analysis of ``batch``) as the sparse design makes them (see the
    module docstring); the same object when nothing is sparse."""
    if not is_sparse(layer, arch):
        return counts
    moved = (stored_bits(layer, arch) / operand_bits(arch))[:, :, None]
    reads, fills, updates = counts.reads * moved, counts.fills * moved, counts.updates * moved
    kept_bits = (
        counts.tile_words * (batch.keep * stored_bits(layer, arch, capacity=True))[:, :, None]
    ).sum(axis=1)
    overflow = kept_bits - tile_capacity_bits(arch)[:, None]
    made = None
    for li, lvl in enumerate(arch.inner_first):
        for name, spec in lvl.sparse.items():
            if spec.action == "none":
                continue
            target = parse_operand(name)
            share = _occupied(layer, arch, batch, counts, li, spec.condition_on)
            actions = (0, 2) if target is Operand.O else (0,)  # reads (and updates) made
            if spec.action == "skipping":
                reads[li, target] *= share
                if target is Operand.O:
                    updates[li, target] *= share
            else:
                if made is None:
                    made = np.ones((*counts.reads.shape[:2], 3, counts.reads.shape[2]))
                for a in actions:
                    made[li, target, a] *= share
    effectual, cycles = _compute(layer, arch, batch, counts)
    return replace(
        counts,
        valid=np.asarray((overflow <= 0).all(axis=0)),
        overflow_bits=overflow,
        reads=reads,
        fills=fills,
        updates=updates,
        fanout_words=counts.fanout_words * moved,
        made=made,
        effectual_macs=effectual,
        compute_cycles=cycles,
    )


def _occupied(
    layer: Layer,
    arch: Arch,
    batch: MappingBatch,
    counts: Counts,
    li: int,
    tensors: tuple[str, ...],
) -> FloatArray:
    """float[batch]: the share of level ``li``'s accesses whose ``tensors`` each hold a
    non-zero in the tile that meets them: the tile at the nearest level inside ``li``
    keeping the tensor (one word when none does)."""
    share = np.ones(counts.reads.shape[2])
    for name in tensors:
        op = parse_operand(name)
        inside = [lj for lj in range(li - 1, -1, -1) if batch.keep[lj, op]]
        words = counts.tile_words[inside[0], op] if inside else np.ones_like(share)
        share = share * layer.densities.of(op).occupied(words)
    return share


def _compute(
    layer: Layer, arch: Arch, batch: MappingBatch, counts: Counts
) -> tuple[FloatArray | None, FloatArray]:
    """The effectual MACs (None: every MAC is done) and the compute cycles under the MACs'
    ``zeros`` (see the module docstring)."""
    zeros = arch.compute.zeros
    if zeros.action == "none":
        return None, counts.compute_cycles
    on = tuple(parse_operand(name) for name in zeros.on)
    p = layer.densities.effectual(on, {op: layer.operand_size(op) for op in on})
    effectual = np.full(counts.compute_cycles.shape, counts.macs * p)
    if zeros.action == "gating" or p >= 1.0:
        return effectual, counts.compute_cycles
    # operands the innermost level keeping them holds compressed reach the MACs as their
    # non-zeros alone (a sparse tensor core's 2:4 weights): their zeros take no step
    fed = 1.0
    for op in on:
        inner = next((lvl for lvl in arch.inner_first if OPERANDS[op] in lvl.keeps), None)
        spec = None if inner is None else inner.sparse.get(OPERANDS[op])
        if spec is not None and spec.compressed:
            fed *= layer.densities.of(op).expected(layer.operand_size(op))
    rest = p / fed  # a lane's chance that its other operands are non-zero
    spatial = (batch.spatial_x * batch.spatial_y).prod(axis=1).astype(float)  # [level, batch]
    temporal = batch.factors_t.prod(axis=1).astype(float)  # [level, batch]
    step = 1.0 - (1.0 - rest) ** spatial[0]  # the lanes below the innermost fan-out, together
    cycles = counts.compute_cycles * fed * step
    spread = spatial[1:] > 1  # [level above 0, batch]: fan-outs of independent instances
    if spread.any():
        nl = spatial.shape[0]
        top = np.where(spread.any(axis=0), nl - 1 - np.argmax(spread[::-1], axis=0), 0)
        below = np.arange(nl)[:, None] < top[None, :]  # levels whose loops each instance runs
        steps = np.where(below, temporal, 1.0).prod(axis=0) * fed  # each instance's, between syncs
        level = np.arange(nl)[:, None]
        instances = np.where((level >= 1) & (level <= top), spatial, 1.0).prod(axis=0)
        syncs = counts.compute_cycles * fed / steps
        mean = steps * step
        slowest = mean + _expected_max(instances) * np.sqrt(mean * (1.0 - step))
        cycles = np.where(top > 0, syncs * np.minimum(steps, slowest), cycles)
    return effectual, np.maximum(np.ceil(cycles - 1e-9), 1.0)


def _expected_max(instances: FloatArray) -> FloatArray:
    """Blom's approximation of the expected maximum of ``instances`` standard normals."""
    values, where = np.unique(instances, return_inverse=True)
    table = np.array([_blom(int(n)) for n in values])
    return table[where].reshape(instances.shape)


@cache
def _blom(n: int) -> float:
    if n <= 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def without_each(arch: Arch) -> dict[str, Arch]:
    """``arch`` without each way it handles zeros it has, by name: ``compute`` (the MACs'
    gating or skipping), ``accesses`` (the levels' gating and skipping), ``formats`` (the
    levels' compressed formats); what a record says each saves."""
    out: dict[str, Arch] = {}
    if arch.compute.zeros.action != "none":
        data = arch.model_dump()
        data["compute"]["zeros"] = ComputeZeros().model_dump()
        out["compute"] = Arch.model_validate(data)
    drops: dict[str, dict[str, object]] = {
        "accesses": {"action": "none", "condition_on": ()},
        "formats": {"format": "uncompressed", "metadata_bits": None},
    }
    for feature, drop in drops.items():
        data = arch.model_dump()
        changed = False
        for lvl in data["levels"]:
            for spec in lvl["sparse"].values():
                changed |= any(spec[k] != v for k, v in drop.items())
                spec.update(drop)
        if changed:
            out[feature] = Arch.model_validate(data)
    return out
