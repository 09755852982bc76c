"""The commands that list and explain what magnet ships: ``magnet archs`` (presets,
templates, DRAM technologies), ``workloads`` (the model zoo), ``dataflows``, ``costs`` (what
a cost model gives each component), ``schema`` (the JSON schemas of its files and records),
``spaces`` (the built-in search spaces) and ``examples`` (the example cost-model plug-in)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import click

from magnet.cli.shared import ARCH_HELP, CONTEXT, COST_HELP, _friendly, main
from magnet.errors import DesignInfeasible, MagnetError

if TYPE_CHECKING:
    from magnet.cost.tables import Number


@main.command(context_settings=CONTEXT)
@click.option("--arch", "arch_spec", type=str, default=None, help=ARCH_HELP)
@click.option("--cost-model", "cost_model", type=str, default=None, help=COST_HELP)
@click.option("--list", "list_models", is_flag=True, help="List the available cost models.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly
def costs(arch_spec: str | None, cost_model: str | None, list_models: bool, as_json: bool) -> None:
    """What a cost model gives each component of a design (energy, leakage, area)."""
    from magnet.cost.lookup import available_cost_models, costs_table, describe_costs, load_chain
    from magnet.templates import load_arch

    if list_models:
        names = available_cost_models()
        if as_json:
            click.echo(json.dumps(names, indent=1))
        else:
            for name, description in names.items():
                click.echo(f"{name:<22} {description}")
        return
    if not arch_spec:
        raise MagnetError("missing --arch (or use --list)")
    arch = load_arch(arch_spec)
    rows = describe_costs(arch, load_chain(cost_model, arch.technology_nm))
    click.echo(json.dumps(rows, indent=1, default=str) if as_json else costs_table(rows))


@main.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@_friendly
def workloads(as_json: bool) -> None:
    """List the model zoo: name, layers (of which post-processing), MACs at batch 1 with
    default parameters."""
    from magnet.workload.zoo import ZOO, load_zoo

    rows: list[dict[str, Any]] = []
    for name, entry in ZOO.items():
        net = load_zoo(name)
        rows.append(
            {
                "name": name,
                "layers": net.layer_count,
                "postprocess_layers": sum(e.repeat for e in net if e.layer.is_postprocess),
                "unique_shapes": len(net.unique_layers(mapped=True)),
                "macs": net.macs,
                "parameters": list(entry.parameters),
                "description": entry.description,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    click.echo(f"{'name':<14}{'layers':>8}{'post':>6}{'shapes':>8}{'GMACs':>10}  parameters")
    for r in rows:
        click.echo(
            f"{r['name']:<14}{r['layers']:>8}{r['postprocess_layers']:>6}{r['unique_shapes']:>8}"
            f"{r['macs'] / 1e9:>10.3f}  {', '.join(r['parameters'])}"
        )


@main.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly
def archs(as_json: bool) -> None:
    """List the presets, the templates with their parameters and defaults, and the DRAM
    technologies."""
    data = _archs_data()
    if as_json:
        click.echo(json.dumps(data, indent=1, default=str))
        return
    _print_presets(data["presets"])
    _print_templates(data["templates"])
    _print_dram(data["dram_technologies"])


def _archs_data() -> dict[str, Any]:
    """What ``magnet archs --json`` prints: presets, templates, DRAM technologies."""
    from magnet.cost.tables import load_dram_table
    from magnet.templates import presets, templates

    dram = load_dram_table()
    return {
        "presets": {
            name: {"template": t.name, "params": params} for name, (t, params) in presets().items()
        },
        "templates": {
            name: {
                "description": t.description,
                "critical_path": t.clock_reference.source,
                "parameters": t.parameter_table(),
            }
            for name, t in templates().items()
        },
        "dram_technologies": {
            name: {
                "default": name == dram.default,
                "description": tech.description,
                **{
                    key: {"value": number.value, "basis": _basis(number)}
                    for key, number in (
                        ("energy_pj_per_bit", tech.energy_pj_per_bit),
                        ("channel_bandwidth_gb_per_s", tech.channel_bandwidth_gb_per_s),
                        ("default_channels", tech.default_channels),
                    )
                },
            }
            for name, tech in dram.technologies.items()
        },
    }


def _print_presets(presets: dict[str, Any]) -> None:
    """The presets, one line each: template and parameters."""
    click.echo("presets:")
    for name, p in presets.items():
        shown = ", ".join(f"{k}={v}" for k, v in p["params"].items()) or "the defaults"
        click.echo(f"  {name:<14} {p['template']}: {shown}")


def _print_templates(templates: dict[str, Any]) -> None:
    """Each template: its description, critical path and parameter table."""
    for name, t in templates.items():
        click.echo(f"\ntemplate {name}: {t['description']}")
        click.echo(f"  critical path (clock vs supply): {t['critical_path']}")
        for row in t["parameters"]:
            click.echo(
                f"  {row['name']:<18} {row['default']!s:>10}  {row['range']:<18} "
                f"{row['description']}"
            )


def _print_dram(technologies: dict[str, Any]) -> None:
    """The DRAM technologies: energy, bandwidth, channels, and where each number comes from."""
    default = next((name for name, t in technologies.items() if t["default"]), "")
    click.echo(
        f"\nDRAM technologies (magnet/cost/tables/dram.yaml; default {default}, whose "
        "energy is a quoted figure [PQ]; [P] primary, [PQ] quoted, [S] secondary, "
        "[D] derived):"
    )
    click.echo(f"  {'name':<8} {'pJ/bit':>7} {'GB/s/ch':>8} {'channels':>8}  channel")
    for name, t in technologies.items():
        energy, bandwidth = t["energy_pj_per_bit"], t["channel_bandwidth_gb_per_s"]
        channels = t["default_channels"]
        click.echo(
            f"  {name:<8} {energy['value']:>7g} {bandwidth['value']:>8g} "
            f"{channels['value']:>8g}  {t['description']}"
            f"{' (default)' if t['default'] else ''}\n"
            f"           energy: {energy['basis']}\n           bandwidth: {bandwidth['basis']}\n"
            f"           channels (default): {channels['basis']}"
        )


def _basis(number: Number) -> str:
    """Where a table number comes from (its source, derivation or assumption)."""
    if number.assumption:
        return f"assumption: {number.reason}"
    return number.source or number.derived or ""


@main.command(context_settings=CONTEXT)
@click.argument("template", required=False)
@click.option(
    "--arch",
    "arch_spec",
    type=str,
    default=None,
    help="Show the loop nests on this architecture. Default: each template's "
    "defaults (with collectors, for simba).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly
def dataflows(template: str | None, arch_spec: str | None, as_json: bool) -> None:
    """List the named dataflows of the templates, each as its loop nest."""
    from magnet.templates import get_template, load_arch, template_dataflow, templates

    given = load_arch(arch_spec) if arch_spec else None
    template = template or (given.template if given is not None else None)
    chosen = [get_template(template)] if template else list(templates().values())
    out: dict[str, dict[str, Any]] = {}
    for t in chosen:
        if given is not None and given.template != t.name:
            raise MagnetError(
                f"is a {given.template} architecture, not {t.name}",
                source=arch_spec,
                field="--arch",
            )
        arch = given if given is not None else t.build(t.showcase)
        out[t.name] = {}
        for name, description in t.dataflows.items():
            try:
                flow = template_dataflow(t, arch, name)
                nest = flow.loop_nest(arch)
            except DesignInfeasible as exc:
                nest = f"{name}: not on this design ({exc})"
            out[t.name][name] = {"description": description, "loop_nest": nest}
    if as_json:
        click.echo(json.dumps(out, indent=1))
        return
    for tname, flows in out.items():
        click.echo(f"template {tname}")
        for info in flows.values():
            click.echo(info["loop_nest"])
            click.echo("")


@main.command(context_settings=CONTEXT)
@click.argument("name", required=False)
@_friendly
def schema(name: str | None) -> None:
    """Print the JSON schema of an input file or a result record (without NAME: list them)."""
    from magnet.schemas import json_schema, schema_names

    if name is None:
        for key, what in schema_names().items():
            click.echo(f"{key:<22} {what}")
        return
    click.echo(json.dumps(json_schema(name), indent=1))


@main.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly
def spaces(as_json: bool) -> None:
    """List the search spaces that ship with magnet (magnet search NAME runs one)."""
    from magnet.search.design_space import builtin_spaces, load_space

    rows = []
    for name, path in builtin_spaces().items():
        space = load_space(path)
        rows.append(
            {
                "name": name,
                "template": space.template,
                "workloads": [w.workload for w in space.workloads],
                "description": space.description,
                "file": str(path),
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    width = max(11, *(len(r["name"]) for r in rows))  # the names' column fits the longest
    for r in rows:
        click.echo(
            f"{r['name']:<{width}} {r['template']:<9} {', '.join(r['workloads']):<10} "
            f"{r['description']}"
        )
    click.echo("\nrun one: magnet search NAME; copy one to edit it: its file is in --json")


@main.command(context_settings=CONTEXT)
@click.option(
    "--copy",
    "target",
    type=str,
    default=None,
    help="Copy the examples into this folder (an existing file is never overwritten).",
)
@_friendly
def examples(target: str | None) -> None:
    """Show (or copy) the example files that ship with magnet: a cost-model plug-in and its
    datasheet."""
    from magnet.files import check_writable, make_folder, shipped, write_atomic

    folder = shipped("cost_models")
    files = sorted(p for p in folder.iterdir() if p.suffix in (".py", ".yaml", ".md"))
    if target is None:
        for p in files:
            click.echo(str(p))
        plugin = folder / "sram_compiler.py"
        click.echo(f"\nuse it as: --cost-model {plugin}:SramCompiler")
        return
    out = check_writable(target, "--copy", folder=True)
    clashes = [str(out / p.name) for p in files if os.path.lexists(out / p.name)]
    if clashes:
        raise MagnetError(
            f"would overwrite {', '.join(clashes)}; give an empty folder", field="--copy"
        )
    make_folder(out, "--copy")
    for p in files:
        write_atomic(out / p.name, p.read_text(encoding="utf-8"))
        click.echo(f"wrote {out / p.name}", err=True)
