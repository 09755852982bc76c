"""The MAGNet / Simba PE array (NVIDIA: MAGNet, ICCAD 2019; Simba, MICRO 2019).

Levels, outermost first, after NVIDIA's Timeloop model of the Simba chiplet
(``configs/mapper/simba-chip.cfg`` in NVlabs/timeloop) with MAGNet's collectors:

=====================  ==================  =========  ======================================
level                  instances           keeps      fan-out below it
=====================  ==================  =========  ======================================
DRAM                   1                   all        -
GlobalBuffer           1                   I, O       PEs over a mesh NoC (K, C)
InputBuffer            one per PE          I          vector units, broadcast (K)
WeightBuffer           one per vector unit W          -
AccumulationBuffer     one per vector unit O          lanes, adder tree (C) [no collector]
AccumulationCollector  one per vector unit O          lanes, adder tree (C)
WeightCollector        one per lane        W          -
MAC                    vector_width lanes per vector unit
=====================  ==================  =========  ======================================

A vector unit is a ``vector_width``-wide dot product over input channels (its lanes are
reduced in an adder tree); a PE has ``vector_units`` of them over output channels. The
weight collector holds ``weight_collector`` weights per lane (a vector of them per vector
unit; Simba's weight register is a collector of depth 1); the accumulation collector holds
``accum_collector`` partial sums per vector unit. Buffer sizes are per PE, as published, and
split evenly over the vector units (as NVIDIA's model splits them).

Each PE also has a post-processing unit (``PPU``, Simba's: activation, pooling, scaling on
the accumulation output), beside its input buffer, reading and writing the global buffer
over the PE mesh (``magnet.templates.parts.post_processor``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypedDict

from pydantic import Field, model_validator

from magnet.arch.spec import Arch, Controller, Fanout, StorageLevel
from magnet.dataflow import Dataflow, Rule
from magnet.errors import DesignInfeasible
from magnet.templates.parts import (
    PIXELS,
    WINDOW,
    PostProcessParams,
    assemble,
    dram,
    post_processor,
)
from magnet.templates.template import Bytes, Int, Template
from magnet.units import Real


class SimbaParams(PostProcessParams):
    """MAGNet / Simba parameters (buffer sizes per PE). Each PE has a post-processing unit on
    its accumulation buffers' output (Simba, MICRO 2019: the PE's PPU); ``ppu_lanes: null``
    gives it one lane per vector unit, the outputs the accumulation buffers deliver per cycle
    (an assumption: the PPU's width is not published [NF])."""

    vector_width: Int = Field(8, ge=1, le=256, description="lanes of a vector MAC (over C)")
    vector_units: Int = Field(8, ge=1, le=256, description="vector MACs per PE (over K)")
    weight_collector: Int = Field(
        1, ge=0, le=256, description="weights held per lane [words] (0 = none)"
    )
    accum_collector: Int = Field(
        0, ge=0, le=256, description="partial sums held per vector unit [words] (0 = none)"
    )
    weight_buffer: Bytes = Field(32 * 1024, description="weight buffer per PE [bytes]")
    input_buffer: Bytes = Field(8 * 1024, description="input buffer per PE [bytes]")
    accum_buffer: Bytes = Field(3 * 1024, description="accumulation buffer per PE [bytes]")
    pe_rows: Int = Field(4, ge=1, le=256, description="PE array rows")
    pe_cols: Int = Field(4, ge=1, le=256, description="PE array columns")
    global_buffer: Bytes = Field(64 * 1024, description="global buffer [bytes]")
    number_format: Literal["int", "fp16", "bf16"] = Field(
        "int", description="MAC number format (fp16 / bf16 take 16-bit operands)"
    )
    weight_bits: Int = Field(8, ge=2, le=32, description="weight width [bits]")
    activation_bits: Int = Field(8, ge=2, le=32, description="activation width [bits]")
    accum_bits: Int = Field(24, ge=8, le=64, description="partial-sum width [bits]")
    technology_nm: Real = Field(16.0, ge=5, le=65, description="technology node [nm]")
    # Simba's chiplet sequences its PEs from a RISC-V core (Simba, MICRO 2019; MAGNet's
    # generated accelerators share the template, taken to have one too: an assumption)
    controller: Controller = Field(
        "risc-v",
        description="a control processor per chip: risc-v (Simba's chiplet has one; area of "
        "a Rocket core at the node, cost/tables/area.yaml), or none",
    )

    @model_validator(mode="after")
    def _formats(self) -> SimbaParams:
        if self.number_format != "int" and (self.weight_bits, self.activation_bits) != (16, 16):
            raise ValueError(
                f"number_format {self.number_format} has 16-bit weights and activations; "
                f"set weight_bits: 16 and activation_bits: 16 (got {self.weight_bits}, "
                f"{self.activation_bits})"
            )
        for key in ("weight_buffer", "accum_buffer"):
            if getattr(self, key) < self.vector_units:
                raise ValueError(
                    f"{key} ({getattr(self, key)} bytes) must give each of the "
                    f"{self.vector_units} vector units at least one byte"
                )
        return self


# Dataflows: which loops each level may run (None: any) and what it keeps stationary. The
# hardware rules of every simba dataflow: lanes over C (the dot product), vector units over
# K (the input vector is broadcast), PEs over K and C (NVIDIA's constraints; ``free`` also
# lets PEs split pixels).
_NEEDS = {  # dataflow -> collectors it cannot run without
    "os-local-ws": ("WeightCollector",),
    "ws": ("WeightCollector",),
    "ws-local-os": ("WeightCollector", "AccumulationCollector"),
}
_DEPTH = {"WeightCollector": "weight_collector", "AccumulationCollector": "accum_collector"}
_RULES: dict[str, tuple[Rule, ...]] = {
    "free": (),
    # Simba's own nest (NVIDIA simba-chip.cfg): a weight sits in the lane's register while
    # output pixels stream; partial sums of a K x pixels tile stay in the accumulation buffer
    # across the whole R,S,C reduction (run by the weight buffer); the input buffer only
    # multicasts. MAGNet's OS-LocalWS adds the accumulation collector: it keeps the streamed
    # pixels' partial sums across the innermost reduction steps. DRAM may also loop over K and
    # C, so that layers whose weights do not fit one chiplet still run (NVIDIA's cfg has
    # P, Q only: Simba splits such layers over 36 chiplets); groups and attention heads (G),
    # which the chip's convolutions do not have, are outer loops too.
    "os-local-ws": (
        Rule(level="WeightCollector", temporal=PIXELS),
        Rule(level="AccumulationCollector", temporal=WINDOW),
        Rule(level="AccumulationBuffer", temporal=("K",)),
        Rule(level="WeightBuffer", temporal=WINDOW),
        Rule(level="InputBuffer", temporal=()),
        Rule(level="GlobalBuffer", temporal=("G", *PIXELS)),
        Rule(level="DRAM", temporal=("G", *PIXELS, "K", "C")),
    ),
    # Weight-stationary: the lane's register holds a weight while the pixels of a tile stream
    # past; their partial sums are read and updated in the accumulation buffer every cycle
    # (no accumulation collector); the weight buffer steps through weights (K, C, R, S), each
    # entering it once (weights stationary there).
    "ws": (
        Rule(level="WeightCollector", temporal=PIXELS),
        Rule(level="AccumulationCollector", keep=(), temporal=()),
        Rule(level="AccumulationBuffer", temporal=PIXELS),
        Rule(level="WeightBuffer", temporal=("K", *WINDOW), stationary=("weights",)),
    ),
    # Output-stationary: each vector unit accumulates one output in place (the accumulation
    # collector, else the accumulation buffer) across the whole reduction; weights and inputs
    # stream, a new weight vector from the weight buffer every cycle (no weight collector).
    "os": (
        Rule(level="WeightCollector", keep=(), temporal=()),
        Rule(level="AccumulationCollector", temporal=WINDOW),
        Rule(level="AccumulationBuffer", temporal=WINDOW, stationary=("outputs",)),
    ),
    # Input-stationary: an input vector serves several output channels in a row (their
    # partial sums in the accumulation collector, else the accumulation buffer) before the
    # reduction moves on; every input enters the PE's input buffer once; weights stream from
    # the weight buffer (no weight collector).
    "is": (
        Rule(level="WeightCollector", keep=(), temporal=()),
        Rule(level="AccumulationCollector", temporal=("K",)),
        Rule(level="AccumulationBuffer", temporal=("K", *WINDOW)),
        Rule(level="WeightBuffer", temporal=("K", *WINDOW)),
        Rule(level="InputBuffer", stationary=("inputs",)),
    ),
    # MAGNet's WS-LocalOS: each lane cycles through the weights of its collector (a
    # reduction) while the vector unit's partial sum stays in the accumulation collector; the
    # collector's weights are reused for the next pixels (held there across the collector's
    # pixel loop); weights are stationary in the weight buffer.
    "ws-local-os": (
        Rule(level="WeightCollector", temporal=WINDOW),
        Rule(level="AccumulationCollector", temporal=PIXELS),
        Rule(level="AccumulationBuffer", temporal=(*PIXELS, "K")),
        Rule(level="WeightBuffer", stationary=("weights",)),
    ),
}


class _Mesh(TypedDict):
    """Where a level's instances sit: one per vector unit (``_vector_units``)."""

    mesh_x: int
    mesh_y: int


def _vector_units(p: SimbaParams) -> _Mesh:
    """One instance per vector unit: the PE columns' vector units by the PE rows."""
    return {"mesh_x": p.pe_cols * p.vector_units, "mesh_y": p.pe_rows}


def _lanes() -> Fanout:
    """The lanes of a vector unit: dense, their products reduced in an adder tree."""
    return Fanout(reduction="adder_tree", dense=True)


def _buffers(p: SimbaParams) -> list[StorageLevel]:
    """The global buffer and each PE's input, weight and accumulation buffers (a PE's weight
    and accumulation buffers split over its vector units), outermost first."""
    per_vu = _vector_units(p)
    return [
        StorageLevel(
            name="GlobalBuffer",
            capacity_bits=p.global_buffer * 8,
            word_bits=p.activation_bits,
            operand_bits={"outputs": p.accum_bits},
            block_words=32,  # NVIDIA simba-chip.cfg: block_size 32, 4 banks
            keeps=("inputs", "outputs"),
            fanout=Fanout(topology="mesh"),
            attributes={"banks": 4},
        ),
        StorageLevel(
            name="InputBuffer",
            capacity_bits=p.input_buffer * 8,
            word_bits=p.activation_bits,
            block_words=p.vector_width,
            keeps=("inputs",),
            mesh_x=p.pe_cols,
            mesh_y=p.pe_rows,
            fanout=Fanout(dense=True),  # the PE's vector units, input vector broadcast
        ),
        StorageLevel(
            name="WeightBuffer",
            capacity_bits=p.weight_buffer * 8 // p.vector_units,
            word_bits=p.weight_bits,
            block_words=p.vector_width,
            keeps=("weights",),
            **per_vu,
        ),
        StorageLevel(
            name="AccumulationBuffer",
            capacity_bits=p.accum_buffer * 8 // p.vector_units,
            word_bits=p.accum_bits,
            keeps=("outputs",),
            fanout=_lanes() if not p.accum_collector else Fanout(dense=True),
            **per_vu,
        ),
    ]


def _collectors(p: SimbaParams) -> list[StorageLevel]:
    """The collectors the design has (a depth of 0 is none): the accumulation collector of
    each vector unit (the lanes below it), the weight collector of each lane."""
    levels = []
    if p.accum_collector:
        levels.append(
            StorageLevel(
                name="AccumulationCollector",
                component="regfile",
                capacity_bits=p.accum_collector * p.accum_bits,
                word_bits=p.accum_bits,
                keeps=("outputs",),
                fanout=_lanes(),
                **_vector_units(p),
            )
        )
    if p.weight_collector:
        levels.append(
            StorageLevel(
                name="WeightCollector",
                component="regfile",
                capacity_bits=p.weight_collector * p.weight_bits,
                word_bits=p.weight_bits,
                keeps=("weights",),
                mesh_x=p.pe_cols * p.vector_units * p.vector_width,
                mesh_y=p.pe_rows,
            )
        )
    return levels


class Simba(Template[SimbaParams]):
    """MAGNet / Simba (see the module docstring)."""

    name = "simba"
    description = "MAGNet / Simba: PEs of vector MACs with weight and accumulation collectors"
    Params = SimbaParams
    dataflows: ClassVar[dict[str, str]] = {
        "free": "hardware rules only (lanes over C, vector units over K, PEs over K, C, pixels)",
        "os-local-ws": "Simba's own nest / MAGNet OS-LocalWS: weight held in the lane register "
        "while pixels stream, partial sums stay in the accumulation buffer",
        "ws": "weight-stationary: the lane register holds a weight while pixels stream; "
        "partial sums updated in the accumulation buffer every cycle",
        "os": "output-stationary: each vector unit accumulates one output in place across the "
        "reduction; weights stream from the weight buffer",
        "is": "input-stationary: an input vector serves several output channels in a row; "
        "weights stream from the weight buffer",
        "ws-local-os": "MAGNet WS-LocalOS: lanes cycle their collector's weights while the "
        "partial sum stays in the accumulation collector",
    }
    showcase: ClassVar[dict[str, Any]] = {"weight_collector": 4, "accum_collector": 8}
    # simba-chip: Simba (MICRO 2019) chiplet, tests/data/reference/costs.md: 16 PEs x 8 vector
    # units x 8 lanes, 32 / 8 / 3 KiB buffers with 24-bit partial sums, 64 KiB global buffer,
    # 16 nm; clock 1.96 GHz = 4.01 TOPS / (1024 MACs x 2 ops). NVIDIA's Timeloop model keeps
    # one weight per lane in a register (weight_collector 1) and has no accumulation collector.
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "simba-chip": dict(
            vector_width=8,
            vector_units=8,
            weight_collector=1,
            accum_collector=0,
            weight_buffer="32KiB",
            input_buffer="8KiB",
            accum_buffer="3KiB",
            pe_rows=4,
            pe_cols=4,
            global_buffer="64KiB",
            accum_bits=24,
            clock_ghz=1.96,
            technology_nm=16,
        ),
    }

    def assemble(self, p: SimbaParams, name: str) -> Arch:
        """DRAM, the global buffer, each PE's buffers, the collectors it has, the lanes."""
        levels = [dram(p, p.activation_bits), *_buffers(p), *_collectors(p)]
        lane_mesh = (p.pe_cols * p.vector_units * p.vector_width, p.pe_rows)
        compute: dict[str, Any] = {
            "datatype": "int" if p.number_format == "int" else "float",
            "format": f"int{p.weight_bits}" if p.number_format == "int" else p.number_format,
            "weight_bits": p.weight_bits,
            "activation_bits": p.activation_bits,
            "accum_bits": p.accum_bits,
            # the input buffer multicasts each word to the PE's vector units (simba.md: the
            # inputs get "only multicast across the 8 vector units"): one register per lane
            "macs_per_input_register": p.vector_units,
        }
        ppu = post_processor(p, "InputBuffer", p.vector_units)
        return assemble(name, levels, p, lane_mesh, compute, postprocess=ppu)

    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        """The named dataflow on ``arch``: the hardware's rules merged with the dataflow's, the
        collectors it neither needs nor bypasses left optional."""
        if name not in _RULES:
            reason = (
                "rs needs per-PE filter / ifmap / psum scratchpads feeding one MAC each "
                "(the eyeriss template)"
                if name == "rs"
                else None
            )
            raise self.refuse(name, reason)
        present = {lvl.name for lvl in arch.levels}
        for level in _NEEDS.get(name, ()):
            if level not in present:
                raise DesignInfeasible(
                    f"dataflow {name!r} holds data in the {level}, which this design does not "
                    f"have ({_DEPTH[level]}: 0); give it a depth > 0",
                    field="--dataflow",
                )
        # the lanes hang below the accumulation collector, else the accumulation buffer
        lane_parent = (
            "AccumulationCollector" if "AccumulationCollector" in present else "AccumulationBuffer"
        )
        pe_dims = ("K", "C", *PIXELS) if name == "free" else ("K", "C")
        hardware = (
            Rule(level=lane_parent, spatial_x=("C",), spatial_y=()),
            Rule(level="InputBuffer", spatial_x=("K",), spatial_y=()),
            Rule(level="GlobalBuffer", spatial_x=pe_dims, spatial_y=pe_dims),
        )
        rules: dict[str, Rule] = {}
        for rule in (*hardware, *_RULES[name]):
            if rule.level in present:
                earlier = rules.get(rule.level)
                rules[rule.level] = rule if earlier is None else earlier.merged(rule)
        # a collector the dataflow neither needs nor bypasses may be left unused: a design
        # with it can do all the design without it does (MAGNet's collectors are optional)
        bypassed = {r.level for r in _RULES[name] if r.keep is not None}
        for level in _DEPTH:
            needed = level in _NEEDS.get(name, ()) or level in bypassed
            if level in present and not needed:
                rules[level] = rules.get(level, Rule(level=level)).merged(
                    Rule(level=level, optional=True)
                )
        return Dataflow(
            name=name,
            description=self.dataflows[name],
            rules=tuple(rules.values()),
        )
