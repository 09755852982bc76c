"""An Eyeriss-like PE array (Chen, Emer, Sze, ISCA 2016; JSSC 2017).

DRAM, a global buffer (inputs and outputs), and a ``pe_rows`` x ``pe_cols`` array of PEs,
each with an ifmap, a weight and a psum scratchpad feeding one MAC. The global buffer
reaches the PEs over multicast buses (Eyeriss's global input / output networks).
"""

from __future__ import annotations

from typing import Any, ClassVar, TypedDict

from pydantic import Field

from magnet.arch.spec import Arch, StorageLevel
from magnet.cost.operating_point import ClockReference
from magnet.dataflow import Dataflow, Rule
from magnet.templates.parts import PostProcessParams, assemble, bus_words, dram, post_processor
from magnet.templates.template import Bytes, Int, Template
from magnet.units import Real


class EyerissParams(PostProcessParams):
    """Eyeriss-like PE array; scratchpads in words of ``word_bits``. One post-processing unit
    beside the global buffer (Eyeriss applies ReLU to the outputs on their way out of the
    array); ``ppu_lanes: null`` gives it ``bus_words(word_bits)`` lanes, one 64-bit word of
    the global buffer per cycle (an assumption: its width is not published [NF])."""

    pe_rows: Int = Field(12, ge=1, le=256, description="PE array rows")
    pe_cols: Int = Field(14, ge=1, le=256, description="PE array columns")
    ifmap_spad: Int = Field(12, ge=1, le=4096, description="ifmap scratchpad per PE [words]")
    weight_spad: Int = Field(224, ge=1, le=65536, description="weight scratchpad per PE [words]")
    psum_spad: Int = Field(24, ge=1, le=4096, description="psum scratchpad per PE [words]")
    global_buffer: Bytes = Field(108 * 1024, description="global buffer [bytes]")
    word_bits: Int = Field(16, ge=2, le=32, description="word width [bits]")
    clock_ghz: Real = Field(
        0.2, gt=0, le=100, description="clock [GHz]; alone: runs at the lowest supply that meets it"
    )
    technology_nm: Real = Field(65.0, ge=5, le=65, description="technology node [nm]")


_ARRAY = "GlobalBuffer"
_DATAFLOWS: dict[str, tuple[str, list[Rule]]] = {
    # Row-stationary (Eyeriss ISCA 2016; Timeloop's eyeriss_like constraints): a PE runs a
    # 1-D row convolution: psum spad loops over K only, weight spad over C and R, ifmap spad
    # none; PE rows take filter rows S (and C, K), PE columns output rows Q (and K).
    "rs": (
        "row-stationary (Eyeriss): each PE runs a 1-D row convolution",
        [
            Rule(level="PsumSpad", temporal=("K",)),
            Rule(level="WeightSpad", temporal=("C", "R")),
            Rule(level="IfmapSpad", temporal=()),
            Rule(level=_ARRAY, spatial_x=("Q", "K"), spatial_y=("S", "C", "K")),
        ],
    ),
    # Weight-stationary (Eyeriss's WS baseline, ISCA 2016 Sec. V): weights stay in the PE;
    # input pixels are broadcast to the PEs and partial sums accumulate across the array, so
    # neither is stored in the PE (ifmap and psum spads bypassed); PEs split K and C.
    "ws": (
        "weight-stationary: weights stay in the PE weight spad",
        [
            Rule(level="PsumSpad", keep=(), temporal=()),
            Rule(level="IfmapSpad", keep=(), temporal=()),
            Rule(level="WeightSpad", stationary=("weights",)),
            Rule(level=_ARRAY, spatial_x=("K",), spatial_y=("C", "K")),
        ],
    ),
    # Output-stationary (Eyeriss's OS baseline): each PE accumulates its outputs in the psum
    # spad; weights and input pixels stream through the array (weight and ifmap spads
    # bypassed); PEs split the output pixels (and K).
    "os": (
        "output-stationary: outputs accumulate in the PE psum spad",
        [
            Rule(level="PsumSpad", stationary=("outputs",)),
            Rule(level="WeightSpad", keep=(), temporal=()),
            Rule(level="IfmapSpad", keep=(), temporal=()),
            Rule(level=_ARRAY, spatial_x=("Q", "P", "N"), spatial_y=("P", "Q", "K")),
        ],
    ),
    "free": ("no rules", []),
}


class _PeLevel(TypedDict):
    """What every scratchpad of a PE shares: one per PE, the data width."""

    mesh_x: int
    mesh_y: int
    word_bits: int


class Eyeriss(Template[EyerissParams]):
    """An Eyeriss-like PE array (see the module docstring)."""

    name = "eyeriss"
    description = "Eyeriss-like PE array with ifmap / weight / psum scratchpads"
    #: Eyeriss's AlexNet point: 200 MHz at 1.0 V in 65 nm (Chen et al., ISSCC 2016, 14.5).
    clock_reference = ClockReference(
        technology_nm=65.0,
        voltage_v=1.0,
        clock_ghz=0.2,
        source="Eyeriss, Chen et al. ISSCC 2016 (14.5): 200 MHz at 1.0 V, 65 nm",
    )
    Params = EyerissParams
    dataflows: ClassVar[dict[str, str]] = {name: text for name, (text, _) in _DATAFLOWS.items()}
    # Eyeriss (ISCA 2016): 12 x 14 PEs, 12 / 224 / 24-word spads, 108 KiB GLB, 16-bit, 65 nm;
    # and its zeros (JSSC 2017): PE data gating on zero input activations ("it can save the
    # PE power consumption by 45%"), run-length compressed feature maps in DRAM (a 5-bit
    # run and a 16-bit value; weights not compressed)
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        "eyeriss-chip": {
            "zeros": "gating",
            "zeros_on": "inputs",
            "dram_format": "rle",
            "metadata_bits": 5,
        }
    }

    def assemble(self, p: EyerissParams, name: str) -> Arch:
        """DRAM, the global buffer, each PE's ifmap, weight and psum scratchpads, the MACs."""
        pe: _PeLevel = {"mesh_x": p.pe_cols, "mesh_y": p.pe_rows, "word_bits": p.word_bits}
        levels = [
            dram(p, p.word_bits),
            StorageLevel(
                name=_ARRAY,
                capacity_bits=p.global_buffer * 8,
                word_bits=p.word_bits,
                block_words=bus_words(p.word_bits),
                keeps=("inputs", "outputs"),
            ),
            StorageLevel(
                name="IfmapSpad",
                component="regfile",
                capacity_bits=p.ifmap_spad * p.word_bits,
                keeps=("inputs",),
                **pe,
            ),
            StorageLevel(
                name="WeightSpad",
                capacity_bits=p.weight_spad * p.word_bits,
                keeps=("weights",),
                **pe,
            ),
            StorageLevel(
                name="PsumSpad",
                component="regfile",
                capacity_bits=p.psum_spad * p.word_bits,
                keeps=("outputs",),
                **pe,
            ),
        ]
        compute: dict[str, Any] = {
            "weight_bits": p.word_bits,
            "activation_bits": p.word_bits,
            "accum_bits": p.word_bits,  # Eyeriss keeps 16-bit partial sums
            "format": f"int{p.word_bits}",
        }
        ppu = post_processor(p, _ARRAY, bus_words(p.word_bits))
        return assemble(name, levels, p, (p.pe_cols, p.pe_rows), compute, postprocess=ppu)

    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        """The named dataflow (its rules do not depend on the design's sizes)."""
        if name not in _DATAFLOWS:
            reason = (
                "a MAGNet hybrid needs weight / accumulation collectors (the simba template)"
                if name in ("ws-local-os", "os-local-ws")
                else None
            )
            raise self.refuse(name, reason)
        description, rules = _DATAFLOWS[name]
        return Dataflow(name=name, description=description, rules=tuple(rules))
