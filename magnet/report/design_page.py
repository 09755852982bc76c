"""One design of a study, as the dashboard's design page and the report show it.

A viewer shows what the search stored and prices nothing: every number comes from the
trial's ``NetworkRecord`` (energy by category, level and operand, area, per-layer rows, the
roofs), read through ``read_record`` whichever version wrote it; where a record written by an
older magnet lacks one (the field is None: "not in a record older than version N"), the page
says so where it would be shown (``OLD_RECORD``). The architecture is rebuilt from the
space's fixed parameters and the trial's (no cost model: its YAML is what ``magnet evaluate
--arch`` reads, its levels give the capacities), and each distinct layer shape's mapping is
shown as a loop nest. No workload file is read.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypedDict, get_args

import yaml

from magnet.arch.spec import Arch
from magnet.cost.contract import OVERHEAD_NOTES, UNPRICED_OVERHEADS
from magnet.errors import MagnetError
from magnet.model.records import OLD_RECORD, NetworkRecord, ZeroSaving
from magnet.search.study import Study, TrialView
from magnet.units import exact_bytes, human_bytes
from magnet.workload.layer import POSTPROCESS_OPS

#: What each class of storage level is, in the area table.
STORAGE_NOTES = {
    "dram": "DRAM, off chip (no area on the die)",
    "sram": "SRAM macros",
    "regfile": "register file",
    "dummy": "a placeholder level (no cost)",
}
#: The area components that are neither a storage level nor the MACs, in one line each.
AREA_NOTES = {
    "routers": "mesh NoC routers, one per child of a mesh fan-out",
    "clock_gates": "clock-gating cells, one per register gated on its load enable",
    **OVERHEAD_NOTES,
}


def safe_file_name(name: str, fallback: str = "study") -> str:
    """``name`` with only letters, digits, ``.``, ``_`` and ``-`` (for file names), at most 100
    characters; a name that needed changing ends in a hash of it, so that two names never
    share a file (the reports of studies ``a/b`` and ``a?b`` were both ``a_b.html``, of ``.``
    and ``..`` both ``study.html``: the second overwrote the first)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    if text and text == name and len(text) <= 100:
        return text
    return f"{(text or fallback)[:91]}-{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def template_params(study: Study, trial: TrialView) -> dict[str, Any]:
    """The template's parameters of ``trial``: the space's fixed ones, then the trial's (a
    group's name replaced by the group's parameters)."""
    return study.space.design(trial.params)


@cache
def size_params(template: str) -> frozenset[str]:
    """The parameters of ``template`` that are sizes in bytes (typed ``Bytes``)."""
    from magnet.templates import get_template
    from magnet.templates.template import Bytes

    try:
        fields = get_template(template).Params.model_fields
    except MagnetError:  # a template not installed here: no sizes known
        return frozenset()
    marks = get_args(Bytes)[1:]  # its validators (``Annotated``'s metadata)
    return frozenset(k for k, f in fields.items() if any(m in marks for m in f.metadata))


class SizeText(TypedDict):
    """A size as a page prints it: the text, and the exact count as a title (None: none)."""

    text: str
    title: str | None


class ParamRow(SizeText):
    """A parameter as the design page lists it: its name, value, and whether it is fixed."""

    name: str
    fixed: bool


def size(value: float) -> SizeText:
    """A size in bytes as a page prints it: ``text`` in binary units, ``title`` exact."""
    return {"text": human_bytes(value), "title": exact_bytes(value)}


def area_note(record: NetworkRecord | None, component: str) -> str:
    """What an area component of ``record`` is, in one line."""
    if component in AREA_NOTES:
        return AREA_NOTES[component]
    levels = [] if record is None else list(record.energy_pj_by_level)
    if levels and component == levels[-1]:
        return "the MACs (the compute level, all of them)"
    if component in levels:
        return "a storage level, all its instances"
    return "a component the cost model priced"


def build_arch(study: Study, trial: TrialView) -> Arch:
    """The trial's architecture (named ``trial-N`` as the search named it), from the space's
    fixed parameters and the trial's: built, never priced (no cost model is loaded).

    The one thing a viewer makes rather than reads, because the record lacks it: a
    ``NetworkRecord`` keeps each level's energy and each component's area, not the level tree
    (capacity, instances and operands of each level: ``area_rows``; the level names a loop
    nest prints: ``loop_nests``; the YAML ``--arch`` reads: ``arch_yaml``)."""
    from magnet.templates import get_template

    return get_template(study.space.template).build(
        template_params(study, trial), name=f"trial-{trial.number}"
    )


def arch_yaml(arch: Arch) -> str:
    """The YAML of an architecture ``build_arch`` made (what ``--arch`` reads)."""
    from magnet.templates import arch_to_data

    return yaml.safe_dump(arch_to_data(arch), sort_keys=False)


def mappings_data(record: NetworkRecord) -> dict[str, Any]:
    """The per-layer mappings of a record, as ``magnet evaluate --mapping-file`` reads them:
    its MAC layers' (a post-processing layer has no mapping: the unit runs it)."""
    return {
        "layers": {
            r.name: record.mappings[r.shape] for r in record.layers if r.kind not in POSTPROCESS_OPS
        }
    }


def mappings_yaml(record: NetworkRecord) -> str:
    """``mappings_data`` as YAML."""
    return yaml.safe_dump(mappings_data(record), sort_keys=False, default_flow_style=None)


def arch_file(trial: TrialView) -> str:
    """The file name a design's architecture is saved as."""
    return f"trial-{trial.number}.yaml"


def mappings_file(trial: TrialView, record: NetworkRecord) -> str:
    """The file name a design's mappings on one workload are saved as."""
    network = safe_file_name(record.network, "workload")
    return f"trial-{trial.number}-{network}.mappings.yaml"


@dataclass
class WorkloadView:
    """One workload of a design: its record, loop nests and commands."""

    index: int
    spec: dict[str, Any]
    record: NetworkRecord
    loop_nests: list[dict[str, Any]]  # {shape, layers: [names], loop_nest}
    command: str
    exact_command: str
    mappings_file: str

    @property
    def operands(self) -> dict[str, dict[str, float]] | None:
        """Access energy by level and operand, as stored (None: an older record)."""
        return self.record.energy_pj_by_operand

    @property
    def operands_note(self) -> str | None:
        """What the page says instead of the operand energies of an older record."""
        return None if self.operands is not None else OLD_RECORD

    @property
    def package(self) -> bool:
        """Whether the design is a package of several chiplets (a record older than version
        5 does not say: shown as one chip)."""
        return self.record.chiplets is not None and self.record.chiplets > 1

    @property
    def unknown_notes(self) -> list[str]:
        """What the page says of the figures an older record lacks (the access energy by
        operand has its own note, ``operands_note``)."""
        r = self.record
        lacks = []
        if any(row.dram_bytes is None for row in r.layers):
            lacks.append("DRAM bytes and off-chip operands per layer (the roofline)")
        elif r.peak_macs_per_cycle is None:
            lacks.append("The design's roofs (the roofline shows the layers alone)")
        if any(row.kind is None for row in r.layers):
            lacks.append("Each layer's kind (all are MAC layers)")
        if r.chiplets is None:
            lacks.append("The design's chiplets, its NoP bytes and each layer's split")
        return [f"{what}: {OLD_RECORD}" for what in lacks]

    @property
    def zeros(self) -> ZerosView:
        """The layers with densities or savings on zeros, and the network's total (none in
        a dense record, or one older than version 9)."""
        total = self.record.zeros_saved or {}
        features = list(total)
        rows = []
        for row in self.record.layers:
            dens, saved = row.densities, row.zeros_saved
            if not dens and not saved:
                continue
            features += [f for f in saved or {} if f not in features]
            rows.append((row, dens, saved or {}))
        out = ZerosView(features)
        for row, dens, saved in rows:
            out.rows.append(
                ZerosRow(
                    row.name,
                    ", ".join(f"{k} {v}" for k, v in (dens or {}).items()) or "dense",
                    row.effectual_macs,
                    [_pair(saved.get(f)) for f in features],
                )
            )
        if total:
            out.rows.append(
                ZerosRow(
                    "all layers, their repeats", "", None, [_pair(total.get(f)) for f in features]
                )
            )
        return out


@dataclass
class ZerosRow:
    """A layer's row of the zeros table: its densities, MACs done, and per feature (energy
    pJ, cycles) saved (None: not saved on it)."""

    name: str
    densities: str
    macs_done: float | None
    saved: list[tuple[float, int] | None]


@dataclass
class ZerosView:
    """The zeros table: the features a record's layers save by, and its rows."""

    features: list[str]
    rows: list[ZerosRow] = field(default_factory=list)


def _pair(saved: ZeroSaving | None) -> tuple[float, int] | None:
    return None if saved is None else (saved.energy_pj, saved.cycles)


@dataclass
class DesignView:
    """Everything a design's page shows: the trial, its parameters (sizes in human units),
    the rebuilt architecture's YAML and levels, the area, and a ``WorkloadView`` per
    workload."""

    study: Study
    trial: TrialView
    arch_file: str
    arch_yaml: str | None
    arch_error: str | None
    on_front: bool
    workloads: list[WorkloadView] = field(default_factory=list)
    params: list[ParamRow] = field(default_factory=list)
    area: list[dict[str, Any]] = field(default_factory=list)  # components, ``area_rows``

    #: A size in bytes as the page prints it (``size``), for the templates.
    size = staticmethod(size)


def param_rows(study: Study, trial: TrialView) -> list[ParamRow]:
    """The parameters of ``trial`` (the trial's, then the space's fixed ones) as the page
    prints them: sizes in bytes in binary units, the exact count in ``title``."""
    from magnet.report.theme import fmt

    sizes = size_params(study.space.template)
    fixed = study.space.fixed()
    rows: list[ParamRow] = []
    design = study.space.design(trial.params)  # a group's parameters after its name
    items = [(k, v, False) for k, v in trial.params.items() if k != "dataflow"]
    items += [(k, v, False) for k, v in design.items() if k not in trial.params | fixed]
    items += [(k, v, True) for k, v in fixed.items() if k not in trial.params]
    for name, value, is_fixed in items:
        row: ParamRow = {"name": name, "text": fmt(value), "title": None, "fixed": is_fixed}
        if name in sizes and isinstance(value, int | float) and not isinstance(value, bool):
            shown = size(value)
            row["text"], row["title"] = shown["text"], shown["title"]
        rows.append(row)
    return rows


def area_rows(record: NetworkRecord | None, arch: Arch | None) -> list[dict[str, Any]]:
    """The design's components, outermost first: each storage level of the rebuilt ``arch``
    (class, instances, capacity per instance and in all, operands kept: what the record
    lacks, ``build_arch``), the MACs, then the record's other area components (routers, the
    overheads), each with its area in mm² and share from ``record`` (never priced again)
    and a line saying what it is; last the parts a chip has that the built-in tables leave
    out (``UNPRICED_OVERHEADS``, a package's die-to-die PHYs only for a package), no area."""
    parts = {} if record is None else dict(record.area_mm2_by_component)
    total = sum(parts.values())
    rows: list[dict[str, Any]] = []

    def add(name: str, note: str, **extra: Any) -> None:
        mm2 = parts.pop(name, None)
        share = None if mm2 is None or not total else mm2 / total * 100
        row = {"instances": None, "capacity": None, "capacity_all": None, "keeps": None}
        rows.append({**row, "name": name, "note": note, "area_mm2": mm2, "share": share, **extra})

    if arch is not None:
        for lvl in arch.levels:
            bits = lvl.capacity_bits
            each: SizeText | None = None
            all_: SizeText | None = None
            if bits is None:
                each = {"text": "unbounded", "title": None}
            elif bits % 8 == 0:
                each, all_ = size(bits // 8), size(bits // 8 * lvl.instances)
            else:
                each = {"text": f"{bits:,} bits", "title": None}
            note = STORAGE_NOTES.get(lvl.component, lvl.component)
            add(
                lvl.name,
                note,
                instances=lvl.instances,
                capacity=each,
                capacity_all=all_,
                keeps=", ".join(lvl.keeps),
            )
        c = arch.compute
        add(
            c.name,
            f"MACs: {c.weight_bits}-bit weights x {c.activation_bits}-bit inputs, "
            f"{c.accum_bits}-bit sums ({c.format or c.datatype})",
            instances=c.instances,
        )
        unit = arch.postprocess
        if unit is not None:
            add(
                unit.name,
                f"post-processing units: {unit.lanes} lanes each, beside each {unit.level}",
                instances=arch.postprocess_instances,
                capacity=size(unit.buffer_bits // 8),
            )
    for name in list(parts):
        add(name, area_note(record, name))
    # what silicon has that the built-in tables leave out: named, without an area
    shown = {row["name"] for row in rows}
    package = arch is not None and arch.chiplets > 1
    for kind in UNPRICED_OVERHEADS:
        if kind not in shown and (kind != "die_to_die" or package):
            add(kind, f"{OVERHEAD_NOTES[kind]}: not modelled, no published area found [NF]")
    return rows


def _flag(name: str, value: Any) -> str:
    return f" {name} {shlex.quote(str(value))}"


def commands(
    study: Study, trial: TrialView, spec: dict[str, Any], files: tuple[str, str]
) -> tuple[str, str]:
    """``magnet evaluate`` lines that price the design again: the search's mapper on its
    dataflow, and exactly its mappings (``--mapping-file``)."""
    arch, maps = files
    space = study.space
    base = "magnet evaluate" + _flag("--arch", arch) + _flag("--workload", spec["workload"])
    if spec.get("batch") is not None:
        base += _flag("--batch", spec["batch"])
    if space.cost_model:
        base += _flag("--cost-model", space.cost_model)
    if space.noc != "wires":
        base += _flag("--noc", space.noc)
    mapped = base + _flag("--dataflow", trial.dataflow or "free")
    m = space.mapper
    if m.name != "fast":
        mapped += _flag("--mapper", m.name)
    if m.objective != "edp":
        mapped += _flag("--objective", m.objective)
    if "samples" in m.options:
        mapped += _flag("--samples", m.options["samples"])
    seed = study.config.get("seed", 0)
    if seed:
        mapped += _flag("--seed", seed)
    if m.budget.evaluations is not None:
        mapped += _flag("--budget-evaluations", m.budget.evaluations)
    if m.budget.seconds is not None:
        mapped += _flag("--budget-seconds", m.budget.seconds)
    return mapped, base + _flag("--mapping-file", maps)


def loop_nests(record: NetworkRecord, arch: Arch | None) -> list[dict[str, Any]]:
    """Each distinct layer shape's mapping of ``record`` as a loop nest on ``arch`` (the record
    keeps the mappings but not the level tree a loop nest names: ``build_arch`` rebuilds it; None
    without one), with the layers that share it."""
    from magnet.mapping import Mapping

    out = []
    for shape, levels in record.mappings.items():
        names = [r.name for r in record.layers if r.shape == shape]
        try:
            nest = Mapping.from_data(levels).loop_nest(arch) if arch is not None else None
        except Exception as exc:  # an old record the model no longer reads
            nest = f"(cannot show: {type(exc).__name__}: {exc})"
        out.append({"shape": shape, "layers": names, "loop_nest": nest, "levels": levels})
    return out


def design_view(study: Study, trial: TrialView) -> DesignView:
    """Everything the design page and the report show of ``trial``, from its stored records
    and the architecture rebuilt from its parameters (``build_arch``: the level tree the
    record lacks; nothing is priced, no cost model loaded, no workload read)."""
    arch = None
    text = error = None
    try:
        arch = build_arch(study, trial)
        text = arch_yaml(arch)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    view = DesignView(study, trial, arch_file(trial), text, error, study.on_front(trial.number))
    view.params = param_rows(study, trial)
    view.area = area_rows(trial.records[0] if trial.records else None, arch)
    specs = [w.model_dump() for w in study.space.workloads]
    names = [mappings_file(trial, r) for r in trial.records]
    for i, record in enumerate(trial.records):
        spec = specs[i] if i < len(specs) else {"workload": record.network}
        maps = names[i] if names.count(names[i]) == 1 else f"trial-{trial.number}-{i}.mappings.yaml"
        command, exact = commands(study, trial, spec, (view.arch_file, maps))
        view.workloads.append(
            WorkloadView(i, spec, record, loop_nests(record, arch), command, exact, maps)
        )
    return view


def design_figures(view: DesignView) -> dict[str, Any]:
    """The design's figures as JSON data: category, level, operand, area, and per workload
    its layers (``layers-0``, ...) and roofline (``roofline-0``, ...)."""
    from magnet.report import breakdowns, theme

    records = [w.record for w in view.workloads]
    if not records:
        return {}
    out = {
        "category": breakdowns.energy_by_category(records),
        "level": breakdowns.energy_by_level(records),
        "operand": breakdowns.energy_by_operand(
            [(w.record.network, w.operands) for w in view.workloads]
        ),
        "area": breakdowns.area(records[0]),
    }
    for w in view.workloads:
        out[f"layers-{w.index}"] = breakdowns.layers(w.record)
        out[f"roofline-{w.index}"] = breakdowns.roofline(w.record)
    return {k: theme.figure_json(v) for k, v in out.items()}
