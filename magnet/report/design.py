"""One design of a study, as the dashboard's design page and the report show it.

The architecture is rebuilt from the space's fixed parameters and the trial's (its YAML is
what ``magnet evaluate --arch`` reads), each distinct layer shape's mapping is shown as a
loop nest, and the access energy by operand (which a ``NetworkRecord`` does not keep) is
priced again from the stored mappings; it is shown only when the total matches the record.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from magnet.search.study import Study, TrialView

#: How close a re-priced network must come to the stored record (relative energy).
REPRICE_TOLERANCE = 1e-6


def safe_file_name(name: str, fallback: str = "study") -> str:
    """``name`` with only letters, digits, ``.``, ``_`` and ``-`` (for file names)."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return text[:100] or fallback


def template_params(study: Study, trial: TrialView) -> dict[str, Any]:
    params = {k: v for k, v in trial.params.items() if k != "dataflow"}
    return {**study.space.fixed(), **params}


def build_arch(study: Study, trial: TrialView) -> Any:
    """The trial's architecture (named ``trial-N`` as the search named it)."""
    from magnet.templates import get_template

    return get_template(study.space.template).build(
        template_params(study, trial), name=f"trial-{trial.number}"
    )


def arch_yaml(arch: Any) -> str:
    """The YAML of an architecture ``build_arch`` made (what ``--arch`` reads)."""
    from magnet.templates import arch_to_data

    return yaml.safe_dump(arch_to_data(arch), sort_keys=False)


def mappings_data(record: dict[str, Any]) -> dict[str, Any]:
    """The per-layer mappings of a record, as ``magnet evaluate --mapping-file`` reads them."""
    mappings = record.get("mappings") or {}
    return {"layers": {r["name"]: mappings[r["shape"]] for r in record["layers"]}}


def mappings_yaml(record: dict[str, Any]) -> str:
    return yaml.safe_dump(mappings_data(record), sort_keys=False, default_flow_style=None)


def arch_file(trial: TrialView) -> str:
    return f"trial-{trial.number}.yaml"


def mappings_file(trial: TrialView, index: int, record: dict[str, Any]) -> str:
    network = safe_file_name(str(record.get("network", index)), "workload")
    return f"trial-{trial.number}-{network}.mappings.yaml"


@dataclass
class WorkloadView:
    """One workload of a design: its record, loop nests, commands, operand energies."""

    index: int
    spec: dict[str, Any]
    record: dict[str, Any]
    loop_nests: list[dict[str, Any]]  # {shape, layers: [names], loop_nest}
    command: str
    exact_command: str
    mappings_file: str
    operands: dict[str, dict[str, float]] | None = None
    operands_note: str | None = None


@dataclass
class DesignView:
    study: Study
    trial: TrialView
    arch_file: str
    arch_yaml: str | None
    arch_error: str | None
    on_front: bool
    workloads: list[WorkloadView] = field(default_factory=list)


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
    if space.network != "wires":
        base += _flag("--network", space.network)
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


def loop_nests(record: dict[str, Any], arch: Any | None) -> list[dict[str, Any]]:
    from magnet.mapping.mapping import Mapping

    out = []
    for shape, levels in (record.get("mappings") or {}).items():
        names = [r["name"] for r in record["layers"] if r["shape"] == shape]
        try:
            nest = Mapping.from_data(levels).loop_nest(arch) if arch is not None else None
        except Exception as exc:  # an old record the model no longer reads
            nest = f"(cannot show: {type(exc).__name__}: {exc})"
        out.append({"shape": shape, "layers": names, "loop_nest": nest, "levels": levels})
    return out


def operand_energy(
    study: Study, trial: TrialView, arch: Any, spec: dict[str, Any], record: dict[str, Any]
) -> tuple[dict[str, dict[str, float]] | None, str | None]:
    """Access energy by level and operand of the whole workload, priced again from the
    stored mappings; (None, why) when that cannot be done or does not match the record."""
    from magnet.mapping.network import LayerMappings, evaluate_network
    from magnet.templates.design import build_design
    from magnet.workload.load import load_workload

    try:
        network = load_workload(spec["workload"], spec.get("batch"))
        design = build_design(
            arch, trial.dataflow, study.space.cost_model, network=study.space.network
        )
        mappings = LayerMappings.from_data(mappings_data(record), source="record")
        result = evaluate_network(network, design.arch, design.costs, mappings)
    except Exception as exc:
        return None, f"not priced again here: {type(exc).__name__}: {exc}"
    stored = float(record["energy_pj"])
    if abs(result.energy_pj - stored) > REPRICE_TOLERANCE * max(abs(stored), 1.0):
        return None, (
            f"not shown: pricing the stored mappings again gives {result.energy_pj:.6g} pJ, "
            f"the record says {stored:.6g} pJ (the model changed since the search)"
        )
    out: dict[str, dict[str, float]] = {}
    for entry in network.layers:
        for level, ops in result.result(entry.layer).energy_pj_by_operand.items():
            slot = out.setdefault(level, {})
            for op, pj in ops.items():
                slot[op] = slot.get(op, 0.0) + pj * entry.repeat
    return out, None


def design_view(study: Study, trial: TrialView, operands: bool = True) -> DesignView:
    """Everything the design page and the report show of ``trial``."""
    arch = None
    text = error = None
    try:
        arch = build_arch(study, trial)
        text = arch_yaml(arch)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    view = DesignView(study, trial, arch_file(trial), text, error, study.on_front(trial.number))
    specs = [w.model_dump() for w in study.space.workloads]
    names = [mappings_file(trial, i, r) for i, r in enumerate(trial.records)]
    for i, record in enumerate(trial.records):
        spec = specs[i] if i < len(specs) else {"workload": record.get("network", "?")}
        maps = names[i] if names.count(names[i]) == 1 else f"trial-{trial.number}-{i}.mappings.yaml"
        command, exact = commands(study, trial, spec, (view.arch_file, maps))
        w = WorkloadView(i, spec, record, loop_nests(record, arch), command, exact, maps)
        if operands and arch is not None:
            w.operands, w.operands_note = operand_energy(study, trial, arch, spec, record)
        elif operands:
            w.operands_note = "not priced again: the architecture cannot be built here"
        view.workloads.append(w)
    return view


def design_figures(view: DesignView) -> dict[str, Any]:
    """The design's figures as JSON data: category, level, operand, area, one per workload's
    layers (``layers-0``, ...)."""
    from magnet.report import figures as F

    records = [w.record for w in view.workloads]
    if not records:
        return {}
    out = {
        "category": F.energy_by_category(records),
        "level": F.energy_by_level(records),
        "operand": F.energy_by_operand(
            [(w.record.get("network", str(w.index)), w.operands) for w in view.workloads]
        ),
        "area": F.area(records[0]),
    }
    for w in view.workloads:
        out[f"layers-{w.index}"] = F.layers(w.record)
    return {k: F.figure_json(v) for k, v in out.items()}
