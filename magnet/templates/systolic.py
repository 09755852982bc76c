"""SCALE-Sim's systolic array (Samajdar et al., ISPASS 2020; SCALE-Sim 3.0).

A ``rows`` x ``cols`` array of MACs, each with one register per operand, fed by ifmap,
filter and ofmap SRAMs. Layers are mapped in SCALE-Sim's GEMM view: ``P`` stands for the
output pixels N*P*Q, ``C`` for the window C*R*S, ``K`` for the filters, and inputs are the
im2col matrix (as SCALE-Sim's SRAM reads count them). The SRAMs are double-buffered and
stream, as in SCALE-Sim, so their size prices their accesses without limiting tiles.
Cycles add SCALE-Sim's skew per fold (``magnet.arch.spec.SystolicPipeline``).

SCALE-Sim has no silicon, so the critical path is Simba's MAC pipeline (assumption;
``Template.clock_reference``).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypedDict

from pydantic import Field

from magnet.arch.spec import Arch, Fanout, StorageLevel, SystolicPipeline
from magnet.dataflow import Dataflow, Rule
from magnet.templates.parts import PostProcessParams, assemble, bus_words, dram, post_processor
from magnet.templates.template import Bytes, Int, Template


class SystolicParams(PostProcessParams):
    """SCALE-Sim's machine: rows x cols MACs fed by three SRAMs (sizes in bytes). One
    post-processing unit beside the ofmap SRAM, on the array's output (as TPU v1's
    activation unit takes the accumulators' output); ``ppu_lanes: null`` makes it as wide as
    the array has columns, one output row per cycle (an assumption after TPU v1 [S])."""

    rows: Int = Field(128, ge=1, le=4096, description="array rows")
    cols: Int = Field(128, ge=1, le=4096, description="array columns")
    ifmap_sram: Bytes = Field(256 * 1024, description="ifmap SRAM [bytes]")
    filter_sram: Bytes = Field(256 * 1024, description="filter SRAM [bytes]")
    ofmap_sram: Bytes = Field(128 * 1024, description="ofmap SRAM [bytes]")
    word_bits: Int = Field(8, ge=2, le=32, description="word width [bits]")


# dataflow -> the operand it keeps stationary and the PE register that holds it
_STATIONARY = {
    "os": ("outputs", "OutputReg"),
    "ws": ("weights", "WeightReg"),
    "is": ("inputs", "InputReg"),
}
# SCALE-Sim's GEMM view (tests/data/reference/README.md): rows, columns and the streamed
# dimension of each dataflow; P = output pixels, K = filters, C = window.
_PLAN = {
    "os": (
        ("P",),
        ("K",),
        ("C",),
        "output-stationary (SCALE-Sim os): pixels on rows, filters on columns, the window streamed",
    ),
    "ws": (
        ("C",),
        ("K",),
        ("P",),
        "weight-stationary (SCALE-Sim ws): window on rows, filters on columns, pixels streamed",
    ),
    "is": (
        ("C",),
        ("P",),
        ("K",),
        "input-stationary (SCALE-Sim is): window on rows, pixels on columns, filters streamed",
    ),
}


class _Sram(TypedDict):
    """What the three SRAMs share: double-buffered, a 64-bit bus, the data width."""

    component: str
    word_bits: int
    block_words: int
    streaming: bool


class _Register(TypedDict):
    """What the operand registers share: one word per PE."""

    component: str
    word_bits: int
    capacity_bits: int
    mesh_x: int
    mesh_y: int


class Systolic(Template[SystolicParams]):
    """SCALE-Sim's systolic array (see the module docstring)."""

    name = "systolic"
    description = "SCALE-Sim's systolic array (os / ws / is), fill and drain per fold"
    Params = SystolicParams
    dataflows: ClassVar[dict[str, str]] = {name: plan[3] for name, plan in _PLAN.items()}
    # SCALE-Sim configuration of tests/data/reference/scalesim: 128 x 128, 256/256/128 KiB,
    # a stall-free DRAM interface.
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "systolic-128": {"dram_bandwidth": "stall-free"}
    }

    def assemble(self, p: SystolicParams, name: str) -> Arch:
        """DRAM, the ifmap, filter and ofmap SRAMs, the operand registers of each PE, the
        MACs, and the pipeline model the evaluator asks for (fill and drain per fold)."""
        sram: _Sram = {
            "component": "sram",
            "word_bits": p.word_bits,
            "block_words": bus_words(p.word_bits),
            "streaming": True,
        }
        reg: _Register = {
            "component": "regfile",
            "word_bits": p.word_bits,
            "capacity_bits": p.word_bits,
            "mesh_x": p.cols,
            "mesh_y": p.rows,
        }
        levels = [
            dram(p, p.word_bits),
            StorageLevel(
                name="IfmapSRAM", capacity_bits=p.ifmap_sram * 8, keeps=("inputs",), **sram
            ),
            StorageLevel(
                name="FilterSRAM", capacity_bits=p.filter_sram * 8, keeps=("weights",), **sram
            ),
            StorageLevel(
                name="OfmapSRAM",
                capacity_bits=p.ofmap_sram * 8,
                keeps=("outputs",),
                fanout=Fanout(topology="systolic", dense=True),
                **sram,
            ),
            StorageLevel(name="WeightReg", keeps=("weights",), **reg),
            StorageLevel(name="InputReg", keeps=("inputs",), **reg),
            StorageLevel(name="OutputReg", keeps=("outputs",), **reg),
        ]
        compute: dict[str, Any] = {
            "weight_bits": p.word_bits,
            "activation_bits": p.word_bits,
            "accum_bits": 32,
            "format": f"int{p.word_bits}",
        }
        pipeline = SystolicPipeline(rows=p.rows, cols=p.cols, registers=dict(_STATIONARY.values()))
        ppu = post_processor(p, "OfmapSRAM", p.cols)
        return assemble(
            name,
            levels,
            p,
            (p.cols, p.rows),
            compute,
            pipeline=pipeline,
            layer_view="gemm",
            postprocess=ppu,
        )

    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        """The named dataflow: its array mapping and the operand its registers hold."""
        if name not in _PLAN:
            raise self.refuse(name)
        rows, cols, streamed, description = _PLAN[name]
        rules = [Rule(level="OfmapSRAM", spatial_x=cols, spatial_y=rows)]
        for kind, (operand, reg) in _STATIONARY.items():
            if kind == name:
                keep = (operand,)
                rules.append(Rule(level=reg, keep=keep, temporal=streamed, stationary=keep))
            else:
                rules.append(Rule(level=reg, keep=(), temporal=()))
        return Dataflow(name=name, description=description, rules=tuple(rules))
