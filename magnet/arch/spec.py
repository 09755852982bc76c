"""The hardware as a tree of levels: storage levels with fan-outs, and the compute level.

Levels are listed outermost first (DRAM first), as architects draw them and as Timeloop
writes them. Each level has ``mesh_x * mesh_y`` instances; the fan-out between a level and
the next inner one is the ratio of their meshes, and spatial loops of a mapping spread over it.
How words cross a fan-out (a multicast tree, a mesh NoC, neighbour-to-neighbour forwarding
in a systolic array) and how partial sums are reduced across it (in the network, or in the
adder tree of a vector MAC) is the ``Fanout`` of the level above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from itertools import pairwise
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BeforeValidator, Field, field_validator, model_validator

from magnet.arch.sparse import ComputeZeros, TensorSparsity
from magnet.strict import Strict
from magnet.units import Real, Whole, format_bytes, real_number
from magnet.workload.dims import OPERANDS, Operand, parse_operand

STORAGE_CLASSES = ("dram", "sram", "regfile", "dummy")


def _gating_style(value: Any) -> Any:
    """A gating style; ``true`` / ``false`` (magnet 0.2's booleans, in stored studies and old
    files) are ``idle-units`` / ``none``."""
    if isinstance(value, bool):
        return "idle-units" if value else "none"
    return value


#: How a design gates its registers' clocks: ``none`` (every register of every instance,
#: every cycle), ``idle-units`` (every register of the instances a layer uses, every cycle)
#: or ``fine`` (a register only on the cycles it loads, as synthesis-inserted gating cells
#: do; the cells and the clock tree's trunk to them run every cycle of the instances in use).
ClockGating = Annotated[
    Literal["none", "idle-units", "fine"],
    BeforeValidator(_gating_style, json_schema_input_type=str | bool),
]
#: How a design gates its supplies: ``none`` (every instance leaks for the whole run) or
#: ``idle-units`` (only the instances a layer uses leak, and each is woken once per layer).
PowerGating = Annotated[
    Literal["none", "idle-units"],
    BeforeValidator(_gating_style, json_schema_input_type=str | bool),
]
CLOCK_GATING_STYLES: tuple[str, ...] = get_args(get_args(ClockGating)[0])
POWER_GATING_STYLES: tuple[str, ...] = get_args(get_args(PowerGating)[0])
#: Largest energy per bit per hop a chip-to-chip link may have (pJ): board-level SerDes are
#: 5-20 pJ/bit (tests/data/reference/memory-and-links.md); more is a typo, not a link.
MAX_LINK_PJ_PER_BIT = 1_000.0


def link_pj_per_bit(value: object) -> float:
    """A link's own energy per bit per hop: a number from 0 (a free link) to
    ``MAX_LINK_PJ_PER_BIT`` (``ValueError`` naming the range otherwise)."""
    allowed = f"a number from 0 to {MAX_LINK_PJ_PER_BIT:g} (pJ per bit per hop; 0: a free link)"
    try:
        number = real_number(value)
    except ValueError:
        raise ValueError(f"expected {allowed}, got {value!r}") from None
    if not 0 <= number <= MAX_LINK_PJ_PER_BIT:
        raise ValueError(f"expected {allowed}, got {number:g}")
    return number


#: ``link_pj_per_bit`` of a fan-out or a package template (``link_pj_per_bit``).
LinkPjPerBit = Annotated[float, BeforeValidator(link_pj_per_bit)]
#: A control processor per chip: ``none`` or ``risc-v`` (priced as a Rocket core, area only).
Controller = Literal["none", "risc-v"]
CONTROLLERS: tuple[str, ...] = get_args(Controller)
#: Largest storage a level may declare (bits): 1 TiB. Larger is a typo, not a design.
MAX_CAPACITY_BITS = 8 * 2**40
#: Most instances of a level on a side of its mesh, and in all: a wafer of the smallest MACs
#: holds a few million, and array indices are 32-bit. More is a typo, not a design.
MAX_MESH_SIDE = 65_536
#: A child's position along one side of a fan-out's mesh (``Fanout.ports``).
Position = Annotated[Whole, Field(ge=0, le=MAX_MESH_SIDE)]
MAX_INSTANCES = 2**31 - 1


def _check_mesh(level: StorageLevel | ComputeLevel) -> None:
    """A level's ``mesh_x * mesh_y`` instances are at most ``MAX_INSTANCES``."""
    if level.instances > MAX_INSTANCES:
        raise ValueError(
            f"mesh_x x mesh_y = {level.mesh_x:,} x {level.mesh_y:,} = {level.instances:,} "
            f"instances, more than {MAX_INSTANCES:,} (2**31 - 1) a level may have"
        )


class Fanout(Strict):
    """How data crosses the fan-out below a level to its children.

    ``topology`` of the interconnect (the NoC on a chip, the NoP on a package): ``tree`` (buses
    and multicast / reduction trees: a word reaches a group of children through one tree),
    ``mesh`` (routed, with a router per child, as Simba's global buffer to PEs), ``systolic``
    (words hop from neighbour to neighbour). ``reduction``: partial sums of children that share
    outputs are added in the ``interconnect`` (on the way up, one add per merged word) or in an
    ``adder_tree`` (a vector MAC's lanes: combinational adds, no words on the interconnect).
    (Before magnet 0.3: ``network`` and ``reduction: network``.) ``pitch_mm``: distance between
    neighbouring children; None derives it from the floorplan (the square root of a child's
    area). A ``dense`` fan-out is a datapath (a vector MAC's lanes, the vector units of a PE, a
    systolic array): its children are packed at their component area; other fan-outs (an array
    of PEs) also spread the chip's overheads (control, clock tree, white space) between their
    children. ``link`` or ``link_pj_per_bit`` (one of them): the children are chips (chiplets of
    a package) joined by chip-to-chip links, each hop of ``pitch_mm`` costing the energy per bit
    of the named link technology (``link``: a row of the cost model's link table,
    ``magnet/cost/tables/links.yaml`` for the built-in one) or of the user's own
    (``link_pj_per_bit`` >= 0). The cost-model chain prices the link (a ``LinkComponent``: a
    plug-in may price it); it is the link's own energy, at its own supply: not scaled with the
    chip's voltage, and priced whatever the NoC model, as the network-on-package is not the
    chip's NoC. ``link_gb_per_s``: each child's links carry at most this much into it and as
    much out of it (GB/s; None: unlimited), every operand alike. ``ports``: the children (x, y)
    the parent's links attach to (a chip-to-chip fan-out; empty: each child of the row y = 0,
    the package's edge); the parent's words cross the links from there (``magnet.model.mesh``).
    ``link_hop_ns``: the latency of one hop; a layer waits for its first words to reach each
    chiplet from its port and for its last partial sums to come back (0: hidden by the
    transfers' overlap with compute). ``partitioning``: ``uniform`` gives every chiplet an equal
    share, so the farthest one sets the pace; ``non-uniform`` (Simba's) sizes the shares so that
    all finish together, which leaves the mean trip instead of the longest (in the limit of fine
    shares)."""

    renamed: ClassVar[Mapping[str, str]] = {"network": "topology"}

    topology: Literal["tree", "mesh", "systolic"] = "tree"
    reduction: Literal["interconnect", "adder_tree"] = "interconnect"
    pitch_mm: float | None = Field(None, gt=0)
    dense: bool = False
    link: str | None = Field(None, min_length=1)
    link_pj_per_bit: LinkPjPerBit | None = None
    link_gb_per_s: Real | None = Field(None, gt=0)
    ports: tuple[tuple[Position, Position], ...] = ()
    link_hop_ns: float = Field(0.0, ge=0)
    partitioning: Literal["uniform", "non-uniform"] = "uniform"

    @property
    def chip_to_chip(self) -> bool:
        """Whether the children are chips joined by chip-to-chip links (a package's)."""
        return self.link is not None or self.link_pj_per_bit is not None

    @model_validator(mode="after")
    def _link_has_a_pitch(self) -> Fanout:
        if self.link is not None and self.link_pj_per_bit is not None:
            raise ValueError(
                "give link (a named link technology) or link_pj_per_bit (a number of one's "
                "own, >= 0), not both"
            )
        if self.chip_to_chip and self.pitch_mm is None:
            raise ValueError(
                "a fan-out over chip-to-chip links (link or link_pj_per_bit) needs pitch_mm"
            )
        chip_to_chip = (self.link_gb_per_s is not None, self.link_hop_ns > 0, bool(self.ports))
        if any(chip_to_chip) and not self.chip_to_chip:
            raise ValueError(
                "link_gb_per_s, link_hop_ns and ports are a chip-to-chip link's: give link "
                "or link_pj_per_bit too"
            )
        return self


@cache
def _kept(keeps: tuple[str, ...]) -> frozenset[Operand]:
    """The operands a level's ``keeps`` names (``StorageLevel.kept``), found once for each
    spelling: every mapping of a level asks, and a copy of a level with other ``keeps``
    finds its own."""
    return frozenset(parse_operand(k) for k in keeps)


class StorageLevel(Strict):
    """One storage level (all its instances).

    ``capacity_bits`` is per instance (None: unbounded, as DRAM). Bandwidths are words per
    cycle per instance (None: unlimited). ``block_words`` words move per access (Timeloop's
    ``width / datawidth``); energy is charged per access. ``fanout`` describes the fan-out
    below this level (to the next inner level, or to the MACs). A ``streaming`` level is a
    double-buffered staging buffer (SCALE-Sim's SRAMs): it fetches while it serves, so its
    capacity prices its accesses but does not limit the tiles a mapping keeps there.
    """

    name: str = Field(min_length=1)
    component: str = "sram"
    capacity_bits: int | None = Field(None, ge=0, le=MAX_CAPACITY_BITS)
    word_bits: int = Field(8, ge=1, le=1024)
    operand_bits: dict[str, int] = Field(default_factory=dict)
    block_words: int = Field(1, ge=1, le=1 << 20)
    read_bandwidth: float | None = Field(None, gt=0)
    write_bandwidth: float | None = Field(None, gt=0)
    shared_bandwidth: float | None = Field(None, gt=0)
    keeps: tuple[str, ...] = OPERANDS
    mesh_x: Whole = Field(1, ge=1, le=MAX_MESH_SIDE)
    mesh_y: Whole = Field(1, ge=1, le=MAX_MESH_SIDE)
    fanout: Fanout = Fanout()
    streaming: bool = False
    sparse: dict[str, TensorSparsity] = Field(default_factory=dict)
    attributes: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _bounded(self) -> StorageLevel:
        _check_mesh(self)
        for name, spec in self.sparse.items():
            if name not in self.keeps:
                raise ValueError(
                    f"sparse.{name}: the level does not keep {name} (it keeps "
                    f"{', '.join(self.keeps) or 'nothing'}): a format or an action is for a "
                    "tensor the level keeps"
                )
            try:
                spec.check_dims(name)
            except ValueError as exc:
                raise ValueError(f"sparse.{name}.{exc}") from None
            if spec.condition_on and name in spec.condition_on:
                raise ValueError(
                    f"sparse.{name}.condition_on: a tensor's accesses are conditioned on other "
                    f"tensors' zeros (its own are left out by its format), got {name}"
                )
        return self

    @field_validator("sparse", mode="before")
    @classmethod
    def _sparse_operands(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {OPERANDS[parse_operand(str(k))]: v for k, v in value.items()}

    @field_validator("component")
    @classmethod
    def _known_class(cls, value: str) -> str:
        if value not in STORAGE_CLASSES:
            raise ValueError(f"unknown component {value!r}; allowed: {', '.join(STORAGE_CLASSES)}")
        return value

    @field_validator("keeps")
    @classmethod
    def _known_operands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        ops = [parse_operand(v) for v in value]
        if len(set(ops)) != len(ops):
            raise ValueError(f"an operand is listed twice in {list(value)}")
        return tuple(OPERANDS[op] for op in sorted(ops))

    @field_validator("operand_bits")
    @classmethod
    def _operand_bits(cls, value: dict[str, int]) -> dict[str, int]:
        out = {}
        for key, bits in value.items():
            op = parse_operand(key)
            if int(bits) < 1:
                raise ValueError(f"operand_bits[{key}] must be >= 1, got {bits}")
            out[OPERANDS[op]] = int(bits)
        return out

    @property
    def instances(self) -> int:
        """How many instances of the level the chip has (``mesh_x * mesh_y``)."""
        return self.mesh_x * self.mesh_y

    @property
    def is_dram(self) -> bool:
        """An off-chip DRAM level (``component: dram``)."""
        return self.component == "dram"

    @property
    def is_sram(self) -> bool:
        """An SRAM macro (``component: sram``)."""
        return self.component == "sram"

    @property
    def is_dummy(self) -> bool:
        """A level that only splits a fan-out and keeps nothing (``component: dummy``)."""
        return self.component == "dummy"

    @property
    def kept(self) -> frozenset[Operand]:
        """The operands the level keeps (the others bypass it)."""
        return _kept(self.keeps)

    def bits(self, operand: Operand) -> int:
        """Bits of one word of ``operand`` at this level (``operand_bits``, else
        ``word_bits``)."""
        return self.operand_bits.get(OPERANDS[operand], self.word_bits)

    @property
    def access_bits(self) -> int:
        """Bits one access moves: a block of ``block_words`` words of ``word_bits``."""
        return self.block_words * self.word_bits

    def describe_capacity(self) -> str:
        """The capacity per instance for people: ``64 KiB``, ``24 bits`` or ``unbounded``."""
        if self.capacity_bits is None:
            return "unbounded"
        if self.capacity_bits % 8 == 0:
            return format_bytes(self.capacity_bits // 8)
        return f"{self.capacity_bits} bits"


class ComputeLevel(Strict):
    """The MAC units: ``mesh_x * mesh_y`` of them, each one multiply-accumulate per cycle.

    A MAC multiplies a ``weight_bits`` weight by an ``activation_bits`` input and adds the
    product to an ``accum_bits`` partial sum, in ``datatype`` int or float; ``format`` names
    the number format for cost models that know formats (``int8``, ``fp16``, ``bf16``...).
    ``macs_per_input_register``: how many MACs take their input from one clocked register
    (1: each its own, as a systolic array's or Eyeriss's PEs; a vector MAC unit's lanes share
    theirs with the same lane of the PE's other vector units, to which the input buffer
    multicasts each word: Simba).
    """

    name: str = "MAC"
    component: str = "mac"
    mesh_x: Whole = Field(1, ge=1, le=MAX_MESH_SIDE)
    mesh_y: Whole = Field(1, ge=1, le=MAX_MESH_SIDE)
    datatype: Literal["int", "float"] = "int"
    weight_bits: int = Field(8, ge=1, le=64)
    activation_bits: int = Field(8, ge=1, le=64)
    accum_bits: int = Field(24, ge=1, le=128)
    format: str | None = None
    macs_per_input_register: Whole = Field(1, ge=1, le=MAX_MESH_SIDE)
    zeros: ComputeZeros = ComputeZeros()
    attributes: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _bounded(self) -> ComputeLevel:
        _check_mesh(self)
        if self.instances % self.macs_per_input_register:
            raise ValueError(
                f"macs_per_input_register {self.macs_per_input_register} does not divide the "
                f"{self.instances} MACs"
            )
        return self

    @property
    def instances(self) -> int:
        """How many MAC units (``mesh_x * mesh_y``)."""
        return self.mesh_x * self.mesh_y

    @property
    def widths(self) -> tuple[int, int, int]:
        """Bits of a weight, an input and a partial sum, in ``Operand`` order: the widths
        words cross the fan-outs at."""
        return (self.weight_bits, self.activation_bits, self.accum_bits)

    @property
    def operand_bits(self) -> int:
        """Width of the wider multiplier operand."""
        return max(self.weight_bits, self.activation_bits)


class SystolicPipeline(Strict):
    """A systolic array's fill and drain (SCALE-Sim 3.0's cycle model), for the evaluator.

    ``rows`` x ``cols`` PEs; ``registers`` names, per operand, the level that holds it inside
    each PE; the one a mapping keeps holds the stationary word. A fold is one pass of the
    loops at that register (``stream`` cycles); every fold, the last partial one included,
    also pays the array's skew: ``rows + cols - 2`` when outputs are stationary, ``2 rows +
    cols - 2`` when weights or inputs are (they are shifted in first). SCALE-Sim counts the
    last cycle from 0: cycles = folds x (stream + skew) - 1.
    """

    rows: int = Field(ge=1)
    cols: int = Field(ge=1)
    registers: dict[str, str]

    @field_validator("registers")
    @classmethod
    def _operands(cls, value: dict[str, str]) -> dict[str, str]:
        return {OPERANDS[parse_operand(k)]: v for k, v in value.items()}


#: The operations a post-processing unit's lanes do (``PostProcessor.ops_per_cycle``): an add
#: (or subtract, or accumulate), a compare (max, min, a clamp), a multiply-add (a scale and a
#: shift, a step of a polynomial, a table's linear interpolation), a lookup in its table.
POSTPROCESS_UNIT_OPS: tuple[str, ...] = ("add", "compare", "mac", "lookup")


class PostProcessor(Strict):
    """The post-processing (vector) unit: where elementwise, activation, pooling, softmax and
    normalisation layers run (``magnet.model.postprocess``).

    One instance sits beside each instance of storage level ``level`` (Simba's PPU: one per
    PE, beside its input buffer; a chip-wide unit: beside the global buffer). It reads
    activations from the outermost on-chip level keeping outputs and writes them to the one
    keeping inputs (the global buffer), across the fan-outs between that level and ``level``.
    Each instance has ``lanes`` lanes; ``ops_per_cycle`` is what one lane does per cycle of
    each operation (``POSTPROCESS_UNIT_OPS``; the kinds run in parallel, as the stages of a
    pipeline), ``buffer_bits`` its buffer (rows of a softmax or a layer norm, the rows of a
    pooling window), a table of ``lut_entries`` words of ``lut_bits`` for its functions (exp,
    reciprocal, rsqrt, erf, tanh, sigmoid: a lookup and a linear interpolation, as NVDLA's
    single-point data processor evaluates them; its default, 65 entries of 16 bits, is
    NVDLA's LE table). ``fused``:
    the unit sits on the MAC array's output path, so an elementwise layer (activation,
    batchnorm, bias, scale, a residual add) right after a MAC layer runs on its outputs as
    they leave (no round trip through the buffers), overlapped with it.
    """

    name: str = Field("PPU", min_length=1)
    level: str = Field(min_length=1)
    lanes: int = Field(ge=1, le=1 << 20)
    ops_per_cycle: dict[str, float] = Field(
        default_factory=lambda: {"add": 1.0, "compare": 1.0, "mac": 1.0, "lookup": 0.25}
    )
    buffer_bits: int = Field(0, ge=0, le=MAX_CAPACITY_BITS)
    lut_entries: int = Field(65, ge=2, le=1 << 16)
    lut_bits: int = Field(16, ge=1, le=64)
    fused: bool = True

    @field_validator("ops_per_cycle")
    @classmethod
    def _known_ops(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(value) - set(POSTPROCESS_UNIT_OPS))
        missing = [op for op in POSTPROCESS_UNIT_OPS if op not in value]
        if unknown or missing:
            what = f"unknown {', '.join(unknown)}" if unknown else f"missing {', '.join(missing)}"
            raise ValueError(
                f"{what}; give one rate per operation: {', '.join(POSTPROCESS_UNIT_OPS)}"
            )
        bad = {k: v for k, v in value.items() if not 0 < v <= 1024}
        if bad:
            raise ValueError(f"rates are operations per lane per cycle in (0, 1024]; got {bad}")
        return {op: float(value[op]) for op in POSTPROCESS_UNIT_OPS}


class Arch(Strict):
    """An accelerator: storage levels (outermost first) and the compute level.

    ``voltage_v``: supply; dynamic energy scales with its square from the node's nominal
    (None = nominal). ``clock_gating`` and ``power_gating``: how the design gates its
    clocks and supplies (``ClockGating``, ``PowerGating``). ``controller``: the control
    processor of each chip (``Controller``; area only). ``layer_view``: ``gemm`` maps
    every layer as SCALE-Sim's GEMM (output pixels N*P*Q as one dimension, the window C*R*S
    as another, inputs as the im2col matrix),
    so that a spatial fan-out spreads a flattened product of dimensions. Zeros
    (``magnet.arch.sparse``): each level's ``sparse`` formats and actions, the MACs'
    ``zeros``; ``sparse_capacity``: compressed tiles must fit by their ``expected`` size
    (Sparseloop's default) or their ``worst`` (a uniform tensor's non-zeros may gather in one
    tile: its dense size). ``template`` and
    ``params`` record what built the architecture, so that it can be rebuilt (and its named
    dataflows found). ``postprocess``: the unit that runs a network's post-processing
    layers (None: the design has none, and a network with such layers is refused).
    """

    name: str = "arch"
    levels: tuple[StorageLevel, ...]
    compute: ComputeLevel
    clock_ghz: float = Field(1.0, gt=0, le=100)
    technology_nm: float = Field(45.0, gt=0)
    voltage_v: float | None = Field(None, gt=0, le=5)
    power_gating: PowerGating = "none"
    clock_gating: ClockGating = "fine"
    controller: Controller = "none"
    pipeline: SystolicPipeline | None = None
    postprocess: PostProcessor | None = None
    layer_view: Literal["loop_nest", "gemm"] = "loop_nest"
    sparse_capacity: Literal["expected", "worst"] = "expected"
    template: str | None = None
    params: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _zeros_seen(self) -> Arch:
        """A level's gating or skipping is conditioned on tensors an on-chip level keeps
        (their zeros known on chip); a dummy level keeps nothing to compress."""
        on_chip = {op for lvl in self.levels if not lvl.is_dram for op in lvl.keeps}
        for lvl in self.levels:
            for name, spec in lvl.sparse.items():
                unseen = [t for t in spec.condition_on if t not in on_chip]
                if unseen:
                    raise ValueError(
                        f"level {lvl.name!r}: sparse.{name}.condition_on: no on-chip level "
                        f"keeps {', '.join(unseen)}, so its zeros are not seen; allowed: "
                        f"{', '.join(sorted(on_chip - {name})) or 'none'}"
                    )
        return self

    @property
    def sparse(self) -> bool:
        """Some level has a format or an action for zeros, or the MACs have one."""
        return self.compute.zeros.action != "none" or any(lvl.sparse for lvl in self.levels)

    @model_validator(mode="after")
    def _tree_is_consistent(self) -> Arch:
        if not self.levels:
            raise ValueError("an architecture needs at least one storage level")
        names = [lvl.name for lvl in self.levels] + [self.compute.name]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"level names must be unique; repeated: {', '.join(dupes)}")
        chain: list[StorageLevel | ComputeLevel] = [*self.levels, self.compute]
        for outer, inner in pairwise(chain):
            if inner.mesh_x % outer.mesh_x or inner.mesh_y % outer.mesh_y:
                raise ValueError(
                    f"level {inner.name!r} ({inner.mesh_x}x{inner.mesh_y} instances) must be a "
                    f"whole multiple of its parent {outer.name!r} ({outer.mesh_x}x{outer.mesh_y})"
                )
        if self.pipeline is not None:
            unknown = sorted(set(self.pipeline.registers.values()) - set(names))
            if unknown:
                raise ValueError(f"pipeline registers name unknown levels: {', '.join(unknown)}")
        unit = self.postprocess
        if unit is not None:
            on_chip = [lvl.name for lvl in self.levels if not lvl.is_dram]
            if unit.level not in on_chip:
                raise ValueError(
                    f"postprocess.level {unit.level!r} is not an on-chip storage level; "
                    f"allowed: {', '.join(on_chip)}"
                )
            if unit.name in names:
                raise ValueError(f"postprocess.name {unit.name!r} is also a level's name")
        for lvl, inner in zip(self.levels, chain[1:], strict=True):  # not the cached views:
            fx, fy = inner.mesh_x // lvl.mesh_x, inner.mesh_y // lvl.mesh_y  # model_copy keeps them
            outside = [p for p in lvl.fanout.ports if p[0] >= fx or p[1] >= fy]
            if outside:
                raise ValueError(
                    f"level {lvl.name!r}: fanout.ports {list(outside[0])} is outside its "
                    f"{fx} x {fy} mesh of children (x in 0..{fx - 1}, y in 0..{fy - 1})"
                )
        return self

    # ---- derived views (index 0 = innermost storage level) ------------------------------
    @cached_property
    def inner_first(self) -> tuple[StorageLevel, ...]:
        """The storage levels, innermost first (index 0 fans out to the MACs): the order of
        every per-level array."""
        return tuple(reversed(self.levels))

    @cached_property
    def level_operand_bits(self) -> tuple[tuple[int, ...], ...]:
        """Bits of a word of each operand (``Operand`` order) at each level, innermost first
        (``StorageLevel.bits``): the table every pricing of a mapping reads."""
        return tuple(tuple(lvl.bits(op) for op in Operand) for lvl in self.inner_first)

    @cached_property
    def fanouts(self) -> tuple[tuple[int, int], ...]:
        """(x, y) fan-out below each level, innermost first: level 0 fans out to the MACs."""
        chain: list[StorageLevel | ComputeLevel] = [self.compute, *self.inner_first]
        return tuple(
            (chain[i].mesh_x // chain[i + 1].mesh_x, chain[i].mesh_y // chain[i + 1].mesh_y)
            for i in range(len(self.levels))
        )

    @property
    def controllers(self) -> int:
        """How many control processor cores the design has: one per chip, or none."""
        return 0 if self.controller == "none" else self.chiplets

    @property
    def chiplets(self) -> int:
        """How many chips the design is: the chiplets of a package, 1 for a chip."""
        x, y = self.chiplet_grid
        return x * y

    @cached_property
    def package_level(self) -> StorageLevel | None:
        """The level whose fan-out is a package's chip-to-chip links (None: a chip)."""
        return next((lvl for lvl in self.inner_first if lvl.fanout.chip_to_chip), None)

    @property
    def chiplet_grid(self) -> tuple[int, int]:
        """(x, y) chiplets below ``package_level``; (1, 1) for a chip (``chiplets``)."""
        level = self.package_level
        return (1, 1) if level is None else self.fanouts[self.level_index(level.name)]

    def with_chiplets(self, x: int, y: int) -> Arch:
        """The same package with ``x`` by ``y`` chiplets (a group of its chiplets, as a
        stage of a pipeline runs on): every level below the chip-to-chip fan-out keeps its
        instances per chiplet. The group is the package's corner (0, 0): a port of the
        package's links outside it enters it at its nearest chiplet (the trip there is the
        caller's to price). Per-instance prices are those of the whole package; the
        template parameters are dropped (they describe the whole package)."""
        fx, fy = self.chiplet_grid
        if (fx, fy) == (1, 1) or not (1 <= x <= fx and 1 <= y <= fy):
            raise ValueError(f"a {fx}x{fy} package has no {x}x{y} group of chiplets")
        links = self.levels.index(self.package_level)

        def scaled(level: Any) -> Any:
            mesh = {"mesh_x": level.mesh_x // fx * x, "mesh_y": level.mesh_y // fy * y}
            return level.model_copy(update=mesh)

        package = self.levels[links]
        ports = dict.fromkeys((min(px, x - 1), min(py, y - 1)) for px, py in package.fanout.ports)
        fanout = package.fanout.model_copy(update={"ports": tuple(ports)})
        top = package.model_copy(update={"fanout": fanout})
        levels = (
            *self.levels[:links],
            top,
            *(scaled(lvl) for lvl in self.levels[links + 1 :]),
        )
        return Arch.model_validate(
            {
                **self.model_dump(),
                "name": f"{self.name}[{x}x{y}]",
                "levels": [lvl.model_dump() for lvl in levels],
                "compute": scaled(self.compute).model_dump(),
                "params": None,
            }
        )

    @property
    def postprocess_instances(self) -> int:
        """How many post-processing units the chip has (one per instance of their level)."""
        unit = self.postprocess
        if unit is None:
            return 0
        return next(lvl.instances for lvl in self.levels if lvl.name == unit.level)

    @property
    def mac_count(self) -> int:
        """How many MAC units the chip has."""
        return self.compute.instances

    @property
    def dram_bytes_per_cycle(self) -> float | None:
        """The DRAM's bandwidth in bytes per cycle, the roof of a roofline: the outermost
        DRAM level's ``shared_bandwidth`` (else read + write, when both are limited) in words
        of its ``word_bits``, times its instances. None: unlimited, or no DRAM level."""
        dram = next((lvl for lvl in self.levels if lvl.is_dram), None)
        if dram is None:
            return None
        words = dram.shared_bandwidth
        read, write = dram.read_bandwidth, dram.write_bandwidth
        if words is None and read is not None and write is not None:
            words = read + write
        return None if words is None else words * dram.word_bits / 8 * dram.instances

    def level_index(self, name: str) -> int:
        """Index (innermost first) of the storage level called ``name``."""
        for i, lvl in enumerate(self.inner_first):
            if lvl.name == name:
                return i
        raise KeyError(name)

    def summary(self) -> str:
        """The architecture in a few lines: MACs, clock, node, and a line per level."""
        lines = [
            f"{self.name}: {self.mac_count} MACs @ {self.clock_ghz:g} GHz, "
            f"{self.technology_nm:g} nm"
        ]
        for lvl in self.levels:
            keeps = ",".join(k[0].upper() for k in lvl.keeps) or "-"
            lines.append(
                f"  {lvl.name:<22} {lvl.component:<7} x{lvl.instances:<5} "
                f"{lvl.describe_capacity():>10}  keeps {keeps}"
            )
        lines.append(f"  {self.compute.name:<22} mac     x{self.compute.instances}")
        return "\n".join(lines)
