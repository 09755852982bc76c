"""A multi-chiplet package: a chip template's design tiled on a network-on-package (NoP).

Simba (MICRO 2019) packages 36 chiplets in a 6 x 6 mesh joined by ground-referenced
signalling (GRS) links. Here a package is the chiplet's level tree with one more fan-out:
DRAM (the package's, shared) fans out to ``chiplets_x`` x ``chiplets_y`` chiplets over a mesh
of chip-to-chip links; every level below it is repeated per chiplet. A layer is partitioned
across chiplets by the mapper's spatial loops at DRAM: over output channels (K: inputs
multicast to every chiplet), input channels (C: partial sums reduced across chiplets) or
output pixels (P, Q: DRAM reads every input word once, and the overlap of neighbouring
chiplets' windows, the halo, crosses one link from the neighbour holding it; chiplets
exchange the halo of one step of DRAM's loops, the overlap of two steps is read again:
``magnet.model.counts._parent_share``), and each chiplet's share is mapped as on one
chip. DRAM's links enter the mesh at ``dram_at``: ``edge`` (the default: a link to each
chiplet of the row y = 0, one per column, as in Stream's ``simba`` example), ``corner``,
``centre``, or a list of chiplets [[x, y], ...]; a word crosses the port's link and then
one link per step to its chiplet, a multicast one tree (``magnet.model.mesh``). The
NoP's words are priced per hop at the link's energy per bit (the cost-model chain's price
of the link), halo words at one hop. Every link carries at most ``link_gb_per_s`` each
way, the words crossing it sharing it (fluid sharing within a layer): the busiest are the
ports' links, which carry every word of the chiplets they serve (a layer they hold back is
``NoP``-bound). A package of one chiplet is the chip itself.

Link technologies (``link``; the built-in cost model's ``magnet/cost/tables/links.yaml``,
from tests/data/reference/memory-and-links.md):

* ``grs``: 1.17 pJ/bit at 25 Gb/s per pin, 16 nm (Poulton et al., JSSC 2019, as quoted [PQ]),
  the GRS family Simba uses;
* ``ucie-standard``: 0.5 pJ/bit (UCIe 1.0 standard package, the spec's table as quoted [PQ]);
* ``ucie-advanced``: 0.25 pJ/bit (UCIe 1.0 advanced package, quoted [PQ]).

``link_pj_per_bit`` (>= 0, 0 a free link) is a link of one's own in place of a named one:
giving it and ``link`` both is refused. The architecture carries the link's name or number
(``Fanout.link``, ``Fanout.link_pj_per_bit``), not a price: the cost-model chain prices it
(``magnet.cost.LinkComponent``), so a plug-in may price links as it prices DRAM.

Assumptions (no published figure, [NF] in the reference notes; parameters to change): a
link's bandwidth (``link_gb_per_s``, default 25 GB/s each way: eight lanes of GRS's 25 Gb/s,
four links, 100 GB/s, into an inner chiplet; DRAM's links taken as the package's own),
where DRAM's links attach (``dram_at``, the edge), the chiplet pitch (``chiplet_pitch_mm``,
default 3 mm: Simba's 6 mm^2 chiplet, 2.45 mm on a side, and a gap), and a hop's latency
(``link_hop_ns``, default 0: hidden by the transfers' overlap with compute; UCIe 1.0 gives
<= 2 ns for its PHY [PQ], GRS's and a NoP router's are not published [NF]).

``partitioning``: with a hop latency, a layer's first words reach the chiplets far from
DRAM's ports later and its last partial sums come back later. ``uniform`` shares wait for
the farthest chiplet; ``non-uniform`` ones, Simba's non-uniform work partitioning (MICRO
2019), give far chiplets less work so that all finish together and the layer waits for the
mean trip from the ports (``magnet.model.evaluate._hop_cycles``; the shares are taken as
fine enough to balance exactly, an upper bound on the gain). Without a hop latency both are
the same.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from magnet.arch.spec import Arch, Fanout, LinkPjPerBit
from magnet.dataflow import Dataflow, Rule
from magnet.model.mesh import PLACES, named_ports
from magnet.templates.parts import PIXELS
from magnet.templates.simba import Simba, SimbaParams
from magnet.templates.template import Int, Template
from magnet.units import Real

LinkName = Literal["grs", "ucie-standard", "ucie-advanced"]
Place = Literal["edge", "corner", "centre"]
#: Dimensions a layer may be partitioned over across chiplets.
PARTITIONS = ("K", "C", *PIXELS)


class PackageParams(SimbaParams):
    """A Simba chiplet's parameters, and the package around it."""

    chiplets_x: Int = Field(2, ge=1, le=16, description="chiplets per row of the package mesh")
    chiplets_y: Int = Field(2, ge=1, le=16, description="rows of chiplets")
    link: LinkName = Field(
        "grs", description="chip-to-chip link technology (links.yaml; see link_pj_per_bit)"
    )
    link_pj_per_bit: LinkPjPerBit | None = Field(
        None,
        description="the link's own energy per bit per hop [pJ], in place of link's (0: free)",
    )
    link_gb_per_s: Real = Field(
        25.0, gt=0, le=10_000, description="a link's bandwidth each way [GB/s] (assumption)"
    )
    dram_at: Place | list[tuple[Int, Int]] = Field(
        "edge",
        description="where DRAM's links enter the mesh: edge, corner, centre or [[x, y], ...]",
    )
    chiplet_pitch_mm: Real = Field(
        3.0, gt=0, le=100, description="distance between neighbouring chiplets [mm] (assumption)"
    )
    link_hop_ns: Real = Field(
        0.0,
        ge=0,
        le=1_000,
        description="latency of one chip-to-chip hop [ns] (0: hidden by overlap, assumed)",
    )
    partitioning: Literal["uniform", "non-uniform"] = Field(
        "uniform",
        description="chiplets' shares of a layer: equal, or sized to finish together (Simba's)",
    )

    @field_validator("dram_at", mode="before")
    @classmethod
    def _a_place(cls, value: Any) -> Any:
        allowed = f"allowed: {', '.join(PLACES)}, or a list of chiplets [[x, y], ...]"
        if isinstance(value, str):
            if value not in PLACES:
                raise ValueError(f"{value!r} is not a place; {allowed}")
            return value
        if not isinstance(value, list | tuple):
            raise ValueError(f"{value!r} is not a place; {allowed}")
        for item in value:
            pair = isinstance(item, list | tuple) and len(item) == 2
            if not pair or not all(isinstance(v, int) and not isinstance(v, bool) for v in item):
                raise ValueError(f"chiplet {item!r} is not [x, y] (two whole numbers); {allowed}")
        return [list(item) for item in value]

    @model_validator(mode="after")
    def _one_link_energy(self) -> PackageParams:
        if self.link_pj_per_bit is not None and "link" in self.model_fields_set:
            raise ValueError(
                "give link (a named link technology) or link_pj_per_bit (a number >= 0 of "
                "one's own), not both"
            )
        if isinstance(self.dram_at, list):
            if not self.dram_at:
                raise ValueError("dram_at: give at least one chiplet [x, y], or a place name")
            for x, y in self.dram_at:
                if not (0 <= x < self.chiplets_x and 0 <= y < self.chiplets_y):
                    raise ValueError(
                        f"dram_at [{x}, {y}] is outside the {self.chiplets_x} x "
                        f"{self.chiplets_y} mesh: x in 0..{self.chiplets_x - 1}, y in "
                        f"0..{self.chiplets_y - 1} (or a place: {', '.join(PLACES)})"
                    )
        return self

    @property
    def dram_ports(self) -> tuple[tuple[int, int], ...]:
        """The chiplets DRAM's links attach to (``dram_at``)."""
        if isinstance(self.dram_at, list):
            return tuple(dict.fromkeys((int(x), int(y)) for x, y in self.dram_at))
        return named_ports(self.dram_at, self.chiplets_x, self.chiplets_y)


class Package(Template[PackageParams]):
    """Simba chiplets on a mesh network-on-package (see the module docstring)."""

    name = "package"
    description = "a package of Simba chiplets on a mesh network-on-package (GRS or UCIe links)"
    Params = PackageParams
    dataflows: ClassVar[dict[str, str]] = Simba.dataflows
    showcase: ClassVar[dict[str, Any]] = {"chiplets_x": 2, "chiplets_y": 2}
    # simba-package-N: simba-chip chiplets, N of them (Simba's package holds 36, 6 x 6)
    presets: ClassVar[dict[str, dict[str, Any]]] = {
        f"simba-package-{n * n}": {**Simba.presets["simba-chip"], "chiplets_x": n, "chiplets_y": n}
        for n in (1, 2, 4, 6)
    }

    def assemble(self, p: PackageParams, name: str) -> Arch:
        """The chiplet's levels, every one below DRAM repeated per chiplet; DRAM fans out
        to the chiplets over the NoP, whose links cap what enters and leaves a chiplet."""
        chip = Simba().assemble(p, name)
        cx, cy = p.chiplets_x, p.chiplets_y
        if cx * cy == 1:
            return chip
        dram, *inner = chip.levels
        nop = Fanout(
            topology="mesh",
            pitch_mm=p.chiplet_pitch_mm,
            link=None if p.link_pj_per_bit is not None else p.link,
            link_pj_per_bit=p.link_pj_per_bit,
            link_gb_per_s=p.link_gb_per_s,
            ports=p.dram_ports,
            link_hop_ns=p.link_hop_ns,
            partitioning=p.partitioning,
        )
        levels = [
            dram.model_copy(update={"fanout": nop}),
            *(
                lvl.model_copy(update={"mesh_x": lvl.mesh_x * cx, "mesh_y": lvl.mesh_y * cy})
                for lvl in inner
            ),
        ]
        compute = chip.compute.model_copy(
            update={"mesh_x": chip.compute.mesh_x * cx, "mesh_y": chip.compute.mesh_y * cy}
        )
        return chip.model_copy(update={"levels": tuple(levels), "compute": compute})

    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        """The chiplet's named dataflow, and the layer partitioned across chiplets over
        output channels, input channels or output pixels."""
        flow = Simba().dataflow(arch, name)
        if arch.fanouts[-1] == (1, 1):
            return flow
        across = Rule(level="DRAM", spatial_x=PARTITIONS, spatial_y=PARTITIONS)
        rules = [r for r in flow.rules if r.level != "DRAM"]
        dram = next((r for r in flow.rules if r.level == "DRAM"), None)
        rules.insert(0, across if dram is None else dram.merged(across))
        return flow.model_copy(update={"rules": tuple(rules)})
