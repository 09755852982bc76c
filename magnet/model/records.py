"""Result records: what ``--json`` prints, what a design search stores with every trial and
what the dashboard and reports read. Plain data with a fixed shape and a schema version
(``SCHEMA_VERSION``); a reader refuses records of another version.

Units are in the names: energies in pJ, cycles as whole numbers, areas in mm^2, ``utilization``
0..1. Energy categories are ``math``, ``memory`` (on-chip buffers and collectors), ``noc`` (the
chip's wires and the reductions in its interconnect), ``clock`` (clocked registers and their share
of the clock tree), ``control`` (address generation), ``dram`` and ``static`` (leakage power x
time); they add up to ``energy_pj``. ``clock_ghz`` and ``voltage_v`` are
the operating point the design ran at (``voltage_v`` None: the node's nominal supply, for
an architecture that gives none). ``dram_bytes``: bytes moved to and from DRAM; ``bound``:
the layer's roofline side (``compute``, or ``memory`` when a level's bandwidth, named by
``bottleneck``, sets the latency).

Version 2: the operating point, and the ``clock`` and ``control`` categories (version 1
counted the clock in ``math``, ``memory`` and ``static``). Version 3: ``dram_bytes``,
``dram_bytes_by_operand``, ``bound`` and ``off_chip``. Version 4: a network record keeps
its access energy by level and operand (``energy_pj_by_operand``, as a layer record does)
and its roofs (``peak_macs_per_cycle``, ``dram_bytes_per_cycle``), so that a viewer never
prices a design again; a layer record is unchanged. Version 5 (packages of chiplets): the ``nop``
category (the chip-to-chip links of a package's network-on-package and their reductions; version 4
counted them in ``noc``, then called ``network``), ``partition`` (the dimensions a layer is split
over across chiplets, with their factors) and ``nop_bytes`` (bytes the links carry, summed over the
links each crosses) of a layer; ``chiplets``, ``images_per_s`` and
``nop_bytes`` of a network, and ``pipeline``: the stages of a network pipelined across
chiplet groups (None: layer after layer on the whole design). ``latency_s`` is the time of
one batch through the network; ``images_per_s`` the batches per second (the batch over
``latency_s`` when layers run one after another, over the slowest stage's time when
pipelined), as ``tops``, ``power_w`` and ``utilization`` are rates of that throughput.
Version 6 (the post-processing unit): the ``postprocess`` category (the unit's operations;
its buffer, clock and leakage are in ``memory``, ``clock`` and ``static``), a layer's
``kind`` and ``op`` (a post-processing layer: ``eltwise``, ``activation``, ``pool``,
``softmax``, ``norm``; no MACs, so a layer record's ``energy_pj_per_mac`` is None and its
``unit_ops`` count the unit's operations), a row's ``fused_into`` (the MAC layer whose output
path ran it) and a network's ``skipped_ops`` (ONNX operators left out on request). Readers
take records of earlier versions, which lack these (``kind`` None: a MAC layer).
Version 7 (weights that stay on chip across a stream of batches, ``magnet.model.network_result``):
a row's ``weights_at`` (the level a layer's weights stay in, loaded once for the stream, or
``DRAM``: read again for every batch; None: a post-processing layer, or an earlier record),
and a network's ``first_latency_s`` and ``first_energy_pj`` (the first batch of a stream,
which loads the weights that stay; ``latency_s`` and ``energy_pj`` are a batch's in the steady
state, with them on chip) and ``weights_on_chip_bytes`` (the weights that stay, every copy);
``mappings`` holds the mapping each shape runs under (the one holding its weights, when
some of its layers keep them).
Version 8 (fused pipelines): a pipeline stage's ``tiles`` and ``group``.
Version 9 (zeros, ``magnet.model.sparse_counts``; mapping reuse, ``magnet.mapper.warm``: a
layer's ``mapper.start`` and a row's ``mapping_start``, how its mapping was found:
``searched`` afresh, ``warm`` from a neighbouring design's, ``exact`` from a design that
prices it alike): a layer's ``densities`` (each tensor's that is
not dense: ``0.5``, ``2:4``), ``effectual_macs`` (the MACs done when the MACs gate or skip
zeros; None: every MAC) and ``zeros_saved`` (what each way the design handles zeros saves on
the layer: ``compute``, ``accesses``, ``formats``, each the energy and cycles of the same
mapping without it less those with it; None when nothing is sparse); a row's and a
network's the same (a network's summed over its layers and their repeats).
Version 10 (one meaning per word: the network is the DNN): the category of the chip's wires
and interconnect reductions is ``noc``, called ``network`` before.

Reading a stored record (``read_record``): a record of any version from 1 on is upgraded,
one version at a time (``magnet.model.record_upgrades``), to the current one, then
validated. What a version adds is filled in where an older record determines it (a version-1
network's clock, from its cycles and seconds; a layer's ``bound``, from its bottleneck; a
network's ``images_per_s``, from its batch and latency; the post-processing unit's category,
0 before there was one; every layer dense before version 9) and otherwise is None, which
the field's docstring says is "not in a record older than version N": the reader shows
``OLD_RECORD`` there. The energy categories of an older record are as it wrote them: no
``clock`` and ``control`` before version 2 (they are in ``math``, ``memory`` and
``static``), no ``nop`` before version 5 (a version-4 package's links are in ``noc``).
A record of a later version than ``SCHEMA_VERSION``, or of none, is refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Literal

from pydantic import ConfigDict, ValidationError

from magnet.arguments import checked_call
from magnet.errors import MagnetError, validation_message
from magnet.strict import Strict

#: The version of every record's shape (see the module docstring).
SCHEMA_VERSION: Final = 10
#: What a reader shows where a record says a field is unknown: a record written by an older
#: magnet, upgraded (``read_record``), that lacks it (a field whose None means "not in a
#: record older than version N").
OLD_RECORD: Final = "not in this record (written by an older magnet)"
#: Energy categories only some designs or workloads spend in, shown only when spent: a
#: package's links (a chip's records have them at 0) and a post-processing unit's operations
#: (0 for a network of MAC layers only).
PACKAGE_CATEGORIES: Final = ("postprocess", "nop")
#: Every energy category, in the order records list them (they add up to ``energy_pj``).
CATEGORIES: Final = (
    "math",
    "postprocess",
    "memory",
    "noc",
    "nop",
    "clock",
    "control",
    "dram",
    "static",
)


def shown_categories(breakdowns: Iterable[dict[str, float]]) -> list[str]:
    """The categories of ``breakdowns`` (records' ``energy_pj_by_category``) a reader
    shows: every one, but those of ``PACKAGE_CATEGORIES`` only when one of the breakdowns
    spends in them."""
    parts = list(breakdowns)
    names: list[str] = []
    for part in parts:
        names += [n for n in part if n not in names]
    return [n for n in names if n not in PACKAGE_CATEGORIES or any(p.get(n) for p in parts)]


class _Record(Strict):
    """Every record: frozen, unknown fields refused; a rate may be infinite (an unlimited
    roof), so records, which magnet writes, allow infinity where inputs do not."""

    model_config = ConfigDict(allow_inf_nan=True)


class MapperStats(_Record):
    """How a mapping was found (absent when the mapping was given)."""

    mapper: str
    objective: str
    status: Literal["mapped", "budget_exhausted"]
    mappings_evaluated: int
    valid_mappings: int
    seconds: float
    mapspace_size: float
    start: Literal["searched", "warm", "exact"] = "searched"


class ZeroSaving(_Record):
    """What one way of handling zeros saves (``zeros_saved``): energy and cycles of the same
    mapping without it, less those with it."""

    energy_pj: float
    cycles: int


def add_savings(
    parts: Iterable[tuple[dict[str, ZeroSaving] | None, int]],
) -> dict[str, ZeroSaving] | None:
    """The savings of ``parts`` (a layer's and its repeats) summed by feature; None when
    none has any."""
    total: dict[str, tuple[float, int]] = {}
    for saved, count in parts:
        for name, s in (saved or {}).items():
            e, c = total.get(name, (0.0, 0))
            total[name] = (e + s.energy_pj * count, c + s.cycles * count)
    if not total:
        return None
    return {name: ZeroSaving(energy_pj=e, cycles=c) for name, (e, c) in total.items()}


class LayerRecord(_Record):
    """One layer under one mapping on one design (a post-processing layer: on the design's
    post-processing unit, without a mapping; ``unit_ops``: its operations by kind).

    None, in a record older than the version that added it (``read_record``): ``clock_ghz``
    (version 2: a layer record has no time in seconds to derive it from), ``dram_bytes`` and
    ``dram_bytes_by_operand`` (version 3), ``partition`` and ``nop_bytes`` (version 5: a
    version-4 record does not say whether its design was a package) and ``kind`` (version 6:
    a MAC layer, which kind not kept)."""

    schema_version: Literal[10] = SCHEMA_VERSION
    record: Literal["layer"] = "layer"
    layer: str
    kind: str | None
    op: str | None = None
    shape: str
    macs: int
    arch: str
    dataflow: str | None
    cost_model: str
    clock_ghz: float | None
    voltage_v: float | None
    latency_cycles: int
    compute_cycles: int
    bottleneck: str
    bound: Literal["compute", "memory"]
    utilization: float
    energy_pj: float
    energy_pj_per_mac: float | None
    dram_bytes: float | None
    dram_bytes_by_operand: dict[str, float] | None
    edp_pj_cycles: float
    energy_pj_by_level: dict[str, float]
    energy_pj_by_operand: dict[str, dict[str, float]]
    energy_pj_by_category: dict[str, float]
    partition: dict[str, int] | None
    nop_bytes: float | None
    accesses: dict[str, dict[str, dict[str, float]]]
    area_mm2: float | None
    area_mm2_by_component: dict[str, float]
    mapping: list[dict[str, Any]]
    mapper: MapperStats | None = None
    unit_ops: dict[str, float] | None = None
    densities: dict[str, str] | None = None
    effectual_macs: float | None = None
    zeros_saved: dict[str, ZeroSaving] | None = None


class LayerRow(_Record):
    """One layer of a network (its repeats run back to back); energy, cycles and DRAM bytes
    are of one repeat. ``off_chip``: the operands that moved to or from DRAM; an activation
    the global buffer kept between this layer and its neighbour is not among them
    (``magnet.model.network_result``). ``kind`` and ``op``: what the layer is (``op`` for a
    post-processing layer); ``fused_into``: the MAC layer on whose output path the
    post-processing unit ran it (its ``latency_cycles`` are those by which it outran that
    layer; None: a pass of its own, or a MAC layer). ``weights_at``: None for a
    post-processing layer, or in a record older than version 7; ``mapping_start``: None for
    a post-processing layer, or in a record older than mapping reuse (each mapping searched).

    None, in a record older than the version that added it (``read_record``): ``dram_bytes``
    and ``off_chip`` (version 3), ``partition`` and ``nop_bytes`` (version 5) and ``kind``
    (version 6: a MAC layer, which kind not kept)."""

    name: str
    kind: str | None
    op: str | None = None
    fused_into: str | None = None
    shape: str
    count: int
    macs: int
    energy_pj: float
    latency_cycles: int
    utilization: float
    bottleneck: str
    bound: Literal["compute", "memory"]
    dram_bytes: float | None
    off_chip: list[str] | None
    energy_pj_by_category: dict[str, float]
    partition: dict[str, int] | None
    nop_bytes: float | None
    weights_at: str | None = None
    mapping_start: Literal["searched", "warm", "exact"] | None = None
    densities: dict[str, str] | None = None
    effectual_macs: float | None = None
    zeros_saved: dict[str, ZeroSaving] | None = None


class PipelineStage(_Record):
    """One stage of a network pipelined across a package's chiplets: its layers (``first``
    to ``last``, in network order), the chiplets they run on, its time per batch, and the
    tiles it passes a batch on in (1: whole; more when the stages are fused depth-first, a
    tile being one output row of its smallest entry), and its fused group (groups run one
    after another on the whole package)."""

    first: str
    last: str
    layers: int
    chiplets: int
    latency_cycles: int
    tiles: int = 1
    group: int = 0


class NetworkRecord(_Record):
    """A whole network on one design: totals, rates, breakdowns, a row per layer and the
    mapping of every distinct layer shape (``mappings``, keyed by shape).

    ``energy_pj_by_operand``: access energy (reads, fills, updates) by level, outermost
    first, and operand, of every layer as it ran, times its repeats; it adds up to the
    ``memory`` and ``dram`` categories (the rest of a level's energy, its clock, control,
    leakage and the interconnect below it, is in ``energy_pj_by_level`` only). The roofs of the
    design: ``peak_macs_per_cycle`` (its MACs) and ``dram_bytes_per_cycle`` (the DRAM's
    bandwidth at its word width; None when unlimited: ``Arch.dram_bytes_per_cycle``).

    None, in a record older than the version that added it (``read_record``): ``dram_bytes``
    (version 3), ``energy_pj_by_operand`` and ``peak_macs_per_cycle`` (version 4: the roofs
    were not kept, so ``dram_bytes_per_cycle`` None then says nothing of the DRAM either),
    ``chiplets`` and ``nop_bytes`` (version 5: a version-4 record does not say whether its
    design was a package).
    """

    schema_version: Literal[10] = SCHEMA_VERSION
    record: Literal["network"] = "network"
    network: str
    arch: str
    dataflow: str | None
    cost_model: str
    clock_ghz: float
    voltage_v: float | None
    notes: list[str]
    skipped_ops: dict[str, int]
    layers_total: int
    unique_shapes: int
    macs: int
    latency_cycles: int
    latency_s: float
    images_per_s: float
    chiplets: int | None
    utilization: float
    energy_pj: float
    energy_pj_per_mac: float
    edp_pj_cycles: float
    power_w: float
    tops: float
    tops_per_w: float
    tops_per_mm2: float | None
    dram_bytes: float | None
    nop_bytes: float | None
    peak_macs_per_cycle: int | None
    dram_bytes_per_cycle: float | None
    energy_pj_by_level: dict[str, float]
    energy_pj_by_operand: dict[str, dict[str, float]] | None
    energy_pj_by_category: dict[str, float]
    area_mm2: float | None
    area_mm2_by_component: dict[str, float]
    layers: list[LayerRow]
    mappings: dict[str, list[dict[str, Any]]]
    pipeline: list[PipelineStage] | None = None
    first_latency_s: float | None = None
    first_energy_pj: float | None = None
    weights_on_chip_bytes: float = 0.0
    zeros_saved: dict[str, ZeroSaving] | None = None


#: The upgrade of a record of each older version to the next (``record_upgrades``).


@checked_call
def read_record(data: Mapping[str, Any]) -> NetworkRecord | LayerRecord:
    """A stored record (JSON data: what ``--json`` printed or a search stored) of any version
    from 1 to ``SCHEMA_VERSION``, upgraded one version at a time to the current one
    (``magnet.model.record_upgrades``) and validated; what an older version lacks is derived
    or None (the module docstring). A record of a later version, of none, or that is not
    one, is a ``MagnetError``."""
    version = data.get("schema_version")
    known = f"this magnet reads records of versions 1 to {SCHEMA_VERSION}"
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise MagnetError(f"not a record of a known version: schema_version {version!r} ({known})")
    if version > SCHEMA_VERSION:
        raise MagnetError(
            f"a record of version {version}, written by a newer magnet ({known}): upgrade magnet"
        )
    kind = data.get("record")
    model: type[NetworkRecord | LayerRecord]
    if kind == "network":
        model = NetworkRecord
    elif kind == "layer":
        model = LayerRecord
    else:
        raise MagnetError(f"not a record: 'record' is {kind!r}, not 'network' or 'layer'")
    from magnet.model.record_upgrades import UPGRADES  # it reads this module's categories

    where = f"a {kind} record of version {version}"
    upgraded = dict(data)
    try:
        for step in range(version, SCHEMA_VERSION):
            upgraded = UPGRADES[step](upgraded)
        return model.model_validate(upgraded)
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, model), source=where) from None
    except (TypeError, AttributeError, ValueError) as exc:  # a step met a malformed record
        raise MagnetError(f"not a record of this shape ({exc})", source=where) from None


def read_network_record(data: Mapping[str, Any]) -> NetworkRecord:
    """``read_record`` of a network record (what a design search stores with a trial); a
    layer record is a ``MagnetError``."""
    record = read_record(data)
    if not isinstance(record, NetworkRecord):
        raise MagnetError("a layer record where a network record was expected")
    return record
