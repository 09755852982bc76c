"""Post-processing layers (``Layer.is_postprocess``) on a design's post-processing unit.

A post-processing layer is not mapped: it runs on the unit (``Arch.postprocess``), which
streams it through its lanes. What it costs:

* **operations** (the ``postprocess`` energy category): the unit operations of its op
  (``UNIT_OPS``: adds, compares, multiply-adds, table lookups per output element and per
  row), each at its price (``magnet.cost.PostCosts``). A function (exp, reciprocal, rsqrt,
  erf, tanh, sigmoid) is one lookup and one multiply-add (a table with linear interpolation,
  NVDLA's method; range reduction is not counted, an assumption);
* **cycles**: for each kind of operation, its count over the lanes of every instance at the
  unit's rate (``PostProcessor.ops_per_cycle``), the kinds in parallel (the stages of a
  pipeline): ``max_t ceil(ops_t / (instances x lanes x rate_t))``, or longer when the traffic
  takes longer at a level's bandwidth (as for any layer);
* **traffic**: activations are read from the global buffer (the outermost on-chip level
  keeping outputs: where the producers left them) when the network keeps them on chip
  (``magnet.model.network_result``), else from DRAM through it; the output is written to the
  global buffer, and on to DRAM unless every consumer reads it on chip. Constants (a bias,
  a batchnorm's or layernorm's scale and shift) come from DRAM. Words cross the fan-outs
  between the global buffer and the unit (Simba's: one per PE, over the PE mesh) and between
  DRAM and the global buffer (a package's links), priced as the fan-outs price a word
  (``magnet.model.evaluate._fanouts``);
* **the unit's buffer**: a softmax (three passes: max, exp and sum, normalise) or a
  layernorm (two: statistics, normalise) keeps its row there when the row fits, else reads
  the input again for each pass (a softmax then computes its exponentials twice); a pool keeps
  the rows its window spans (``S`` rows of the input, one channel at a time) when they fit,
  else reads each output's whole window;
* **fusion**: when the unit sits on the MAC array's output path (``PostProcessor.fused``),
  an elementwise layer right after a MAC layer (``FUSABLE``: an activation, a bias or scale,
  a batchnorm, a residual add) runs on the outputs as they leave: no traffic for that input
  nor for its output (the producer's output traffic stands for the chain's), only its
  operations, a second operand's traffic, and the cycles by which it outruns the producer;
* **upkeep**: the unit's clock and leakage for the cycles it works (it is taken as gated
  while idle, as NVDLA gates each of its processors: an assumption), and the rest of the
  chip's clock and leakage, as any run charges them (``_upkeep``), for the cycles the layer
  adds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from magnet.arch.spec import Arch, StorageLevel
from magnet.cost import ArchCosts
from magnet.cost.pricing import PostCosts
from magnet.errors import MagnetError
from magnet.model.counts import Counts, FloatArray
from magnet.model.evaluate import (
    BatchResult,
    OneRun,
    _accesses,
    _fanouts,
    _level_cycles,
    _link_cycles,
    _routes,
    _sum_rows,
    _upkeep,
)
from magnet.model.records import LayerRecord
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer

#: Where an activation input of a post-processing layer comes from: the producer's output
#: path (fused), the global buffer, or DRAM.
Source = Literal["fused", "chip", "dram"]

#: Unit operations per output element of each op (a function: ``lookup`` + ``mac``). ReLU:
#: a compare with 0; ReLU6 and clip: two; sigmoid, tanh: a function; SiLU x sigmoid(x) and
#: GELU x Phi(x): a function and a multiply; add, bias: an add; mul, scale, batchnorm (a
#: per-channel scale and shift, x a + b): a multiply-add. Layernorm: a sum and a sum of
#: squares, then (x - mean) x rstd x gamma + beta: two adds, three multiply-adds. Softmax
#: (stable): the max (a compare), x - max (an add), exp (a function), the sum (an add), x
#: 1/sum (a multiply-add).
UNIT_OPS: dict[str, dict[str, float]] = {
    "relu": {"compare": 1},
    "relu6": {"compare": 2},
    "clip": {"compare": 2},
    "sigmoid": {"lookup": 1, "mac": 1},
    "tanh": {"lookup": 1, "mac": 1},
    "silu": {"lookup": 1, "mac": 2},
    "gelu": {"lookup": 1, "mac": 2},
    "add": {"add": 1},
    "mul": {"mac": 1},
    "bias": {"add": 1},
    "scale": {"mac": 1},
    "batchnorm": {"mac": 1},
    "layernorm": {"add": 2, "mac": 3},
    "softmax": {"compare": 1, "add": 2, "lookup": 1, "mac": 2},
}
#: Unit operations per row (of ``K`` elements). Layernorm: mean = sum / n, var = sumsq / n -
#: mean^2 (three multiply-adds), + eps (an add), rstd (a function). Softmax: 1 / sum (a
#: function).
ROW_OPS: dict[str, dict[str, float]] = {
    "layernorm": {"add": 1, "mac": 4, "lookup": 1},
    "softmax": {"lookup": 1, "mac": 1},
}
#: Passes over a row, and the unit's buffer words written and read per element when the row
#: fits it: a softmax writes the row and its exponentials, reads both back; a layernorm
#: writes the row, reads it back to normalise.
ROW_PASSES: dict[str, tuple[int, int, int]] = {"softmax": (3, 2, 2), "layernorm": (2, 1, 1)}
#: Layers the unit runs on a MAC layer's outputs as they leave (``PostProcessor.fused``):
#: elementwise ones. Pools, softmaxes and layernorms need neighbours or whole rows.
FUSABLE: dict[str, tuple[str, ...]] = {
    "activation": ("relu", "relu6", "clip", "sigmoid", "tanh", "silu", "gelu"),
    "eltwise": ("add", "mul", "bias", "scale"),
    "norm": ("batchnorm",),
}


def fusable(layer: Layer) -> bool:
    """Whether a unit on the output path can run ``layer`` on its producer's outputs."""
    return layer.op in FUSABLE.get(layer.kind, ())


def unit_ops(layer: Layer, fits: bool) -> dict[str, float]:
    """Unit operations of ``layer`` by kind (``add``, ``compare``, ``mac``, ``lookup``);
    ``fits``: its row (a softmax's) fits the unit's buffer (else its exponentials are
    computed twice)."""
    out = {"add": 0.0, "compare": 0.0, "mac": 0.0, "lookup": 0.0}
    elements = layer.operand_size(Operand.O)
    op = str(layer.op)
    if layer.kind == "pool":
        window = layer.R * layer.S
        if op == "max":
            out["compare"] = (window - 1) * elements
        else:
            out["add"] = (window - 1) * elements
            out["mac"] = elements  # x 1 / window
        return out
    for kind, n in UNIT_OPS[op].items():
        out[kind] += n * elements
    rows = elements / layer.K
    for kind, n in ROW_OPS.get(op, {}).items():
        out[kind] += n * rows
    if op == "softmax" and not fits:  # the normalising pass computes exp again
        out["lookup"] += elements
        out["mac"] += elements
    return out


def require_unit(arch: Arch, layers: Sequence[Layer]) -> None:
    """Bad input when ``layers`` hold a post-processing layer and ``arch`` has no unit."""
    post = [layer for layer in layers if layer.is_postprocess]
    if post and arch.postprocess is None:
        first = post[0]
        home = _home(arch)
        level = "GlobalBuffer" if home is None else home.name
        raise MagnetError(
            f"{len(post)} post-processing layer(s) ({first.name!r}: {first.kind} {first.op}, "
            "...) need a post-processing unit, which this architecture does not have; give it "
            f"one (postprocess: {{level: {level}, lanes: 16}} in its YAML) or leave them "
            "out (Network.without_postprocess())",
            source=f"architecture {arch.name!r}",
            field="postprocess",
        )


def _home(arch: Arch) -> StorageLevel | None:
    """The level the unit reads and writes: the outermost on-chip level keeping outputs."""
    return next(
        (
            lvl
            for lvl in arch.levels
            if not lvl.is_dram and Operand.O in lvl.kept and lvl.capacity_bits is not None
        ),
        None,
    )


def _as_kept(level: StorageLevel, preferred: Operand) -> Operand:
    """The operand an activation is counted as at ``level``: ``preferred`` if it keeps it,
    else the other activation operand (inputs, outputs)."""
    if preferred in level.kept:
        return preferred
    return Operand.O if preferred is Operand.I else Operand.I


@dataclass
class _Traffic:
    """Words a post-processing layer moves, per instance where a level has several (the
    arrays of ``Counts``, batch 1), and the words crossing each fan-out."""

    reads: FloatArray  # [level, operand, 1]
    fills: FloatArray
    updates: FloatArray
    crossing: FloatArray  # [level, operand, 1]: words crossing the fan-out below a level
    in_use: FloatArray  # [level, 1]

    @classmethod
    def empty(cls, levels: int) -> _Traffic:
        def zeros() -> FloatArray:
            return np.zeros((levels, 3, 1))

        return cls(zeros(), zeros(), zeros(), zeros(), np.zeros((levels, 1)))

    def cross(self, levels: range, operand: Operand, words: float) -> None:
        """``words`` cross the fan-outs below each of ``levels`` (indices, innermost first)."""
        for li in levels:
            self.crossing[li, operand, 0] += words


class _Path:
    """The levels a post-processing layer's words pass: DRAM, the global buffer (``home``)
    and the fan-outs down to the unit's level, as indices innermost first."""

    def __init__(self, arch: Arch) -> None:
        unit = arch.postprocess
        assert unit is not None
        self.arch = arch
        self.dram = next(li for li, lvl in enumerate(arch.inner_first) if lvl.is_dram)
        home = _home(arch)
        self.home = self.dram if home is None else arch.level_index(home.name)
        self.unit = arch.level_index(unit.level)
        top = max(self.home, self.unit)
        self.to_unit = range(self.unit + 1, top + 1)  # fan-outs from home down to the unit
        self.to_home = range(self.home + 1, self.dram + 1)  # from DRAM down to home
        self.dram_to_unit = range(self.unit + 1, self.dram + 1)

    def level(self, li: int) -> StorageLevel:
        """The level at index ``li`` (innermost first)."""
        return self.arch.inner_first[li]


def _traffic(
    layer: Layer, path: _Path, sources: Sequence[Source], output_on_chip: bool | None, fits: bool
) -> _Traffic:
    """The words ``layer`` moves (see the module docstring); ``output_on_chip`` None: the
    output leaves through the producer's path (fused)."""
    arch = path.arch
    t = _Traffic.empty(len(arch.levels))
    home, dram = path.home, path.dram
    home_level = path.level(home)
    instances = home_level.instances
    as_input = _as_kept(home_level, Operand.I)
    as_output = _as_kept(home_level, Operand.O)
    elements_in = layer.operand_size(Operand.I)
    elements = layer.operand_size(Operand.O)
    passes = ROW_PASSES.get(str(layer.op), (1, 0, 0))[0]
    reads_per_input = elements_in * (1 if fits else passes)
    if layer.kind == "pool" and not fits:  # each output reads its window again
        reads_per_input = elements * layer.R * layer.S
    for source in sources:
        if source == "fused":
            continue
        if source == "dram" and home != dram:
            t.reads[dram, Operand.I, 0] += elements_in
            t.fills[home, as_input, 0] += elements_in / instances
            t.cross(path.to_home, Operand.I, elements_in)
        t.reads[home, as_input, 0] += reads_per_input / instances
        t.cross(path.to_unit, Operand.I, reads_per_input)
    constants = layer.operand_size(Operand.W)
    if constants:
        t.reads[dram, Operand.W, 0] += constants
        t.cross(path.dram_to_unit, Operand.W, constants)
    if output_on_chip is not None:
        t.cross(path.to_unit, Operand.I, elements)  # back from the unit, activation words
        if home != dram:
            t.fills[home, as_output, 0] += elements / instances
        if not output_on_chip:
            if home != dram:
                t.reads[home, as_output, 0] += elements / instances
                t.cross(path.to_home, Operand.I, elements)
            t.updates[dram, Operand.O, 0] += elements
    moved = (t.reads + t.fills + t.updates).sum(axis=1)[:, 0] > 0
    for li in np.flatnonzero(moved):
        t.in_use[li, 0] = path.level(int(li)).instances
    return t


@dataclass(frozen=True)
class Chain:
    """A MAC layer and the post-processing layers fused into its output path so far: their
    cycles, and the cycles their traffic takes at each level's bandwidth (innermost first)
    and on a package's links, which the next fused layer's traffic shares."""

    cycles: int
    level_cycles: FloatArray
    link_cycles: float

    @classmethod
    def of(cls, run: BatchResult) -> Chain:
        """The chain of a MAC layer's run (batch of one) alone."""
        return cls(
            round(float(run.latency_cycles[0])),
            run.level_cycles[:, 0].copy(),
            float(run.link_cycles[0]),
        )


@dataclass
class PostResult(OneRun):
    """One post-processing layer as it runs: the chip's traffic and upkeep over the cycles
    it adds (``batch``, a ``BatchResult`` of one), and the unit's own energy by category
    (``unit_pj``). ``fused_into``: the MAC layer on whose output path it ran (None: a pass
    of its own). Read like a ``Result`` (energy, cycles, breakdowns, DRAM bytes, record)."""

    layer: Layer
    arch: Arch
    costs: ArchCosts
    batch: BatchResult
    unit_pj: dict[str, float]
    ops: dict[str, float]
    unit_cycles: int
    sources: tuple[Source, ...]
    output_on_chip: bool | None
    fused_into: str | None = None
    chain: Chain | None = None  # the chain up to and with this layer (``price_postprocess``)

    mapping = None  # not mapped: the unit streams it

    @property
    def on_chip(self) -> tuple[str, ...]:
        """The operands whose DRAM traffic the network saved (as ``Result.on_chip``)."""
        names = []
        if all(s != "dram" for s in self.sources):
            names.append("inputs")
        if self.output_on_chip is not False:
            names.append("outputs")
        return tuple(names)

    @property
    def macs(self) -> int:
        """None: the unit's operations are not MACs (``ops``)."""
        return 0

    @property
    def kept(self) -> np.ndarray:
        """bool[level, operand]: the operands each level holds."""
        levels = self.arch.inner_first
        return np.array([[Operand(o) in lvl.kept for o in range(3)] for lvl in levels])

    @property
    def energy_pj(self) -> float:
        """Energy of the layer, pJ (every category): the chip's and the unit's own."""
        return float(self.batch.energy_pj[0]) + sum(self.unit_pj.values())

    @property
    def compute_cycles(self) -> int:
        """Cycles the unit's operations take (its lanes at their rates)."""
        return self.unit_cycles

    @property
    def utilization(self) -> float:
        """0: the MACs do nothing while the unit works."""
        return 0.0

    @property
    def bottleneck(self) -> str:
        """The unit (its name) when its operations set the pace, the level (or ``NoP``)
        whose bandwidth does, or ``overlapped``: fused, it adds no time to its chain."""
        b = int(self.batch.bottleneck[0])
        names = {-1: self._unit_name, -2: "NoP", -3: "overlapped"}
        return names.get(b) or self.arch.inner_first[b].name

    @property
    def bound(self) -> Literal["compute", "memory"]:
        """``memory`` when a level's bandwidth (or the links') sets the pace, else
        ``compute`` (the unit's operations, or hidden under its chain)."""
        return "compute" if int(self.batch.bottleneck[0]) in (-1, -3) else "memory"

    @property
    def partition(self) -> dict[str, int]:
        """Empty: the unit's layers are not partitioned by a mapping."""
        return {}

    @property
    def _unit_name(self) -> str:
        unit = self.arch.postprocess
        assert unit is not None
        return unit.name

    @property
    def energy_pj_by_category(self) -> dict[str, float]:
        """Energy (pJ) by category; adds up to ``energy_pj``."""
        out = {k: float(v[0]) for k, v in self.batch.category_pj().items()}
        for category, pj in self.unit_pj.items():
            out[category] += pj
        return out

    @property
    def energy_pj_by_level(self) -> dict[str, float]:
        """Per level (outermost first), the unit (all of its own energy), the MACs."""
        unit = {self._unit_name: sum(self.unit_pj.values())}
        return {**self._level_pj(), **unit, self.arch.compute.name: self._mac_pj()}

    @property
    def energy_pj_by_operand(self) -> dict[str, dict[str, float]]:
        """Access energy (pJ) by level (outermost first) and kept operand, and the unit's
        buffer (its inputs); adds up to the ``memory`` and ``dram`` categories."""
        return {**self._access_pj_by_operand(), self._unit_name: {"inputs": self.unit_pj["memory"]}}

    def record(self, dataflow: str | None = None) -> LayerRecord:
        """This layer as a ``LayerRecord`` (no mapping, no MACs)."""
        return self._record(
            dataflow,
            op=self.layer.op,
            macs=0,
            utilization=0.0,
            energy_pj_per_mac=None,
            partition={},
            mapping=[],
            unit_ops=self.ops,
        )


def _row_fits(layer: Layer, arch: Arch) -> bool:
    """Whether the unit's buffer holds what ``layer`` keeps there: a softmax's or a
    layernorm's row, a pool's ``S`` input rows of one channel; other layers keep nothing."""
    unit = arch.postprocess
    assert unit is not None
    words = unit.buffer_bits // arch.compute.activation_bits
    if layer.kind == "pool":
        return layer.S * layer.input_width <= words
    if str(layer.op) in ROW_PASSES:
        return words >= layer.K
    return True


def price_postprocess(
    layer: Layer,
    arch: Arch,
    costs: ArchCosts,
    sources: Sequence[Source] | None = None,
    output_on_chip: bool = False,
    *,
    fused_into: str | None = None,
    chain: Chain | None = None,
) -> PostResult:
    """``layer`` on ``arch``'s post-processing unit. ``sources``: where each of its
    activation inputs comes from (default: DRAM); ``output_on_chip``: every consumer reads
    its output on chip (no DRAM write). ``fused_into``: the MAC layer on whose output path
    it runs (its first input ``fused``; its output leaves with the producer's); ``chain``:
    the time that layer and the layers fused into it so far take, which this one overlaps:
    its traffic shares the levels' bandwidth with theirs."""
    require_unit(arch, [layer])
    unit, post = arch.postprocess, costs.postprocess
    assert unit is not None and post is not None
    dram: tuple[Source, ...] = ("dram",)
    inputs = dram * layer.activation_inputs if sources is None else tuple(sources)
    fits = _row_fits(layer, arch)
    path = _Path(arch)
    traffic = _traffic(layer, path, inputs, None if fused_into else output_on_chip, fits)
    ops = unit_ops(layer, fits)
    instances = arch.postprocess_instances
    lanes = instances * unit.lanes
    compute = max(math.ceil(n / (lanes * unit.ops_per_cycle[k]) - 1e-9) for k, n in ops.items())
    counts = Counts(
        valid=np.array([True]),
        overflow_bits=np.zeros((len(arch.levels), 1)),
        tile_words=np.zeros((len(arch.levels), 3, 1)),
        reads=traffic.reads,
        fills=traffic.fills,
        updates=traffic.updates,
        instances=traffic.in_use,
        mac_instances=np.zeros(1),
        compute_cycles=np.array([float(compute)]),
        fanout_words=traffic.crossing,
        fanout_degree=np.ones((len(arch.levels), 3, 1)),
        readback_words=np.zeros((len(arch.levels), 1)),
        halo_words=np.zeros((len(arch.levels), 1)),
        macs=0,
        padded_macs=np.zeros(1),
    )
    level_cycles = _level_cycles(arch, counts)
    routes = _routes(arch, None)
    links = _link_cycles(arch, counts, routes)
    before = Chain(0, np.zeros(len(arch.levels)), 0.0) if chain is None else chain
    shared = level_cycles[:, 0] + before.level_cycles  # the chain's traffic and this one's
    shared_links = float(links[0]) + before.link_cycles
    slowest = float(shared.max())
    cycles = max(compute, before.cycles, math.ceil(slowest - 1e-9), math.ceil(shared_links - 1e-9))
    added = cycles - before.cycles
    if fused_into and added == 0:
        bottleneck = -3  # hidden under the chain it is fused into
    elif shared_links > max(compute, slowest):
        bottleneck = -2
    elif slowest > compute:
        bottleneck = int(np.argmax(shared))
    else:
        bottleneck = -1
    latency = np.array([float(added)])
    accesses = _accesses(arch, counts, costs)
    access_energy, control = accesses.energy_pj, accesses.control_pj
    upkeep = _upkeep(arch, counts, costs, latency, accesses.writes)
    fanouts = _fanouts(arch, counts, costs, routes)
    batch = BatchResult(
        counts=counts,
        energy_pj=(
            _sum_rows(access_energy)
            + _sum_rows(upkeep.clock_pj)
            + _sum_rows(control)
            + _sum_rows(upkeep.static_pj)
            + _sum_rows(fanouts.interconnect_pj)
            + upkeep.mac_clock_pj
            + upkeep.mac_static_pj
        ),
        access_energy_pj=access_energy,
        clock_pj=upkeep.clock_pj,
        control_pj=control,
        static_pj=upkeep.static_pj,
        interconnect_pj=fanouts.interconnect_pj,
        math_pj=np.zeros(1),
        mac_clock_pj=upkeep.mac_clock_pj,
        mac_static_pj=upkeep.mac_static_pj,
        dram=np.array([lvl.is_dram for lvl in arch.inner_first]),
        nop=fanouts.nop,
        nop_bits=fanouts.link_bits,
        latency_cycles=latency,
        level_cycles=level_cycles,
        link_cycles=links,
        bottleneck=np.array([bottleneck]),
        utilization=np.zeros(1),
    )
    # the unit is clocked and powered while it works: a pass of its own, its whole run;
    # fused, the cycles of its operations (it waits gated while the MACs make its inputs)
    unit_pj = _unit_energy(layer, arch, post, ops, fits, compute if fused_into else cycles)
    return PostResult(
        layer,
        arch,
        costs,
        batch,
        unit_pj,
        ops,
        compute,
        inputs,
        output_on_chip,
        fused_into,
        Chain(cycles, shared, shared_links),
    )


def _unit_energy(
    layer: Layer, arch: Arch, post: PostCosts, ops: dict[str, float], fits: bool, cycles: int
) -> dict[str, float]:
    """The unit's own energy by category: its operations (``postprocess``), its buffer
    (``memory``) and the buffer's address adds (``control``), its clock and its leakage
    over the ``cycles`` it works."""
    elements = layer.operand_size(Operand.O)
    writes = reads = 0.0
    if fits and layer.kind == "pool":
        writes = float(layer.operand_size(Operand.I))
        reads = float(elements * layer.R * layer.S)
    elif fits and str(layer.op) in ROW_PASSES:
        _, per_write, per_read = ROW_PASSES[str(layer.op)]
        writes, reads = per_write * elements, per_read * elements
    instances = arch.postprocess_instances
    return {
        "postprocess": sum(n * post.op_pj[k] for k, n in ops.items()),
        "memory": writes * post.buffer_write_pj + reads * post.buffer_read_pj,
        "control": (writes + reads) * post.buffer_control_pj,
        "clock": post.clock_pj_per_cycle * instances * cycles,
        "static": post.leak_mw * instances * cycles / arch.clock_ghz,
    }
