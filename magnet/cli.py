"""The ``magnet`` command."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from magnet.errors import MagnetError


def _friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input prints one clear line and exits 2; never a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MagnetError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)

    return wrapper


COST_HELP = (
    "Cost model: a name (horowitz45, eyeriss-normalized, sram-analytical, ...), "
    "table:FILE.yaml or FILE.py:CLASS; a comma-separated list is a chain (built-in last)."
)


def _cost_models(spec: str | None, arch: Any) -> list[Any]:
    from magnet.cost.registry import load_chain

    return load_chain(spec, arch.technology_nm)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="magnet")
def main() -> None:
    """magnet: design-space exploration for DNN accelerators."""
    from magnet.perf import tune_allocator

    tune_allocator()


@main.command()
@click.option("--timeloop", "timeloop_file", type=str, help="A Timeloop timeloop-input.yaml.")
@click.option("--arch", "arch_spec", type=str, help="Architecture YAML or preset (simba-chip).")
@click.option("--layer", "layer_text", type=str, help='Layer, e.g. "K=64,C=64,P=56,Q=56,R=3,S=3".')
@click.option("--mapping", "mapping_file", type=str, help="Mapping YAML for the layer.")
@click.option("--workload", type=str, help="Zoo name (resnet50), .onnx or network .yaml.")
@click.option("--batch", type=int, default=None, help="Batch size of the workload.")
@click.option("--mapping-file", "layer_mappings", type=str, help="Per-layer mappings YAML.")
@click.option("--dataflow", type=str, help="Map every layer under this dataflow (or YAML).")
@click.option("--mapper", type=click.Choice(["fast", "exhaustive", "random"]), default="fast")
@click.option("--objective", type=str, default="edp", help="edp, energy, latency or weights.")
@click.option("--cost-model", "cost_model", type=str, default=None, help=COST_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of tables.")
@_friendly
def evaluate(
    timeloop_file: str | None,
    arch_spec: str | None,
    layer_text: str | None,
    mapping_file: str | None,
    workload: str | None,
    batch: int | None,
    layer_mappings: str | None,
    dataflow: str | None,
    mapper: str,
    objective: str,
    cost_model: str | None,
    as_json: bool,
) -> None:
    """Price a mapping of a layer, or a whole network (given or found mappings)."""
    from magnet.arch.load import load_arch

    if workload:
        _evaluate_network(
            workload,
            batch,
            arch_spec,
            layer_mappings,
            as_json,
            conflicting=bool(layer_text or mapping_file or timeloop_file),
            search=(dataflow, mapper, objective),
            cost_model=cost_model,
        )
        return
    if dataflow:
        raise MagnetError("--dataflow maps a --workload; for one layer use 'magnet map'")
    if batch is not None or layer_mappings:
        raise MagnetError("--batch and --mapping-file apply to --workload")
    from magnet.mapping import Mapping
    from magnet.mapping import evaluate as run
    from magnet.report.text import result_table
    from magnet.workload.layer import parse_layer

    if timeloop_file:
        if arch_spec or layer_text or mapping_file:
            raise MagnetError(
                "--timeloop brings its own arch, layer and mapping; "
                "do not combine it with --arch/--layer/--mapping"
            )
        from magnet.interop.timeloop import load_timeloop

        tl = load_timeloop(timeloop_file)
        if tl.mapping is None:
            raise MagnetError("has no 'mapping' to evaluate", source=timeloop_file)
        models = [*_cost_models(cost_model, tl.arch), tl.cost_model]
        result = run(tl.layer, tl.arch, tl.mapping, models, source=timeloop_file)
    else:
        missing = [
            flag
            for flag, value in (
                ("--arch", arch_spec),
                ("--layer", layer_text),
                ("--mapping", mapping_file),
            )
            if not value
        ]
        if missing:
            raise MagnetError(
                f"missing {', '.join(missing)} (or give --timeloop FILE, or --workload)"
            )
        arch = load_arch(arch_spec)
        layer = parse_layer(layer_text)
        mapping = Mapping.from_yaml(mapping_file)
        result = run(layer, arch, mapping, _cost_models(cost_model, arch), source=mapping_file)
    click.echo(result.to_json() if as_json else result_table(result))


def _evaluate_network(
    workload: str,
    batch: int | None,
    arch_spec: str | None,
    layer_mappings: str | None,
    as_json: bool,
    conflicting: bool,
    search: tuple[str | None, str, str],
    cost_model: str | None,
) -> None:
    from magnet.arch.load import load_arch
    from magnet.mapping.network import LayerMappings, evaluate_network
    from magnet.report.text import network_table
    from magnet.workload.load import load_workload

    dataflow, mapper, objective = search
    if conflicting:
        raise MagnetError(
            "--workload evaluates a network: give its per-layer mappings with --mapping-file "
            "or a --dataflow to find them, not --layer/--mapping/--timeloop"
        )
    if not arch_spec or bool(layer_mappings) == bool(dataflow):
        raise MagnetError("--workload needs --arch and one of --mapping-file or --dataflow")
    arch = load_arch(arch_spec)
    network = load_workload(workload, batch)
    from magnet.cost import price_arch

    costs = price_arch(arch, _cost_models(cost_model, arch))
    if dataflow:
        from magnet.mapper.search import evaluate_workload

        result = evaluate_workload(
            network,
            arch,
            dataflow,
            mapper=mapper,
            objective=objective,
            cost_model=costs,
            progress=None if as_json else _progress(network),
        )
    else:
        result = evaluate_network(network, arch, LayerMappings.from_yaml(layer_mappings), costs)
    click.echo(json.dumps(result.to_dict(), indent=1) if as_json else network_table(result))


def _progress(network: Any) -> Callable[..., None]:
    """Print one line per mapped layer shape, with an ETA, on stderr."""
    import time

    total = len(network.unique_layers())
    start = time.perf_counter()
    done = 0

    def report(layer: Any, result: Any) -> None:
        nonlocal done
        done += 1
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done)
        click.echo(
            f"[{done}/{total}] {layer.name:<28} EDP {result.result.edp:.3e}  "
            f"{result.seconds:.2f}s  (eta {eta:.1f}s)",
            err=True,
        )

    return report


@main.command(name="map")
@click.option("--timeloop", "timeloop_file", type=str, help="Search this Timeloop input's space.")
@click.option("--arch", "arch_spec", type=str, help="Architecture YAML or preset.")
@click.option("--layer", "layer_text", type=str, help='Layer, e.g. "K=64,C=64,P=56,Q=56".')
@click.option("--dataflow", type=str, default=None, help="Named dataflow or dataflow YAML.")
@click.option("--mapper", type=click.Choice(["fast", "exhaustive", "random"]), default="fast")
@click.option("--objective", type=str, default="edp", help="edp, energy, latency or weights.")
@click.option("--samples", type=int, default=20000, help="Samples of the random mapper.")
@click.option("--seed", type=int, default=0)
@click.option("--output", type=str, default=None, help="Write the best mapping to this YAML.")
@click.option("--cost-model", "cost_model", type=str, default=None, help=COST_HELP)
@click.option("--json", "as_json", is_flag=True)
@_friendly
def map_command(
    timeloop_file: str | None,
    arch_spec: str | None,
    layer_text: str | None,
    dataflow: str | None,
    mapper: str,
    objective: str,
    samples: int,
    seed: int,
    output: str | None,
    cost_model: str | None,
    as_json: bool,
) -> None:
    """Find the best mapping of one layer (given dataflow, objective and mapper)."""
    from pathlib import Path

    from magnet.mapper.search import map_layer
    from magnet.report.text import result_table

    if timeloop_file:
        if arch_spec or layer_text:
            raise MagnetError("--timeloop brings its own arch and layer")
        from magnet.interop.timeloop import load_timeloop

        tl = load_timeloop(timeloop_file)
        flow = tl.dataflow if dataflow is None else dataflow
        result = map_layer(
            tl.layer,
            tl.arch,
            flow,
            mapper=mapper,
            objective=objective,
            seed=seed,
            samples=samples,
            cost_model=[*_cost_models(cost_model, tl.arch), tl.cost_model],
        )
    else:
        from magnet.arch.load import load_arch
        from magnet.workload.layer import parse_layer

        if not arch_spec or not layer_text:
            raise MagnetError("missing --arch or --layer (or give --timeloop FILE)")
        arch = load_arch(arch_spec)
        result = map_layer(
            parse_layer(layer_text),
            arch,
            dataflow,
            mapper=mapper,
            objective=objective,
            seed=seed,
            samples=samples,
            cost_model=_cost_models(cost_model, arch),
        )
    if output:
        Path(output).write_text(result.mapping.to_yaml())
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=1))
        return
    click.echo(
        f"mapper {result.mapper}, dataflow {result.dataflow.name}, objective "
        f"{result.objective.name}: {result.mappings_evaluated:,} mappings priced "
        f"({result.valid_mappings:,} valid) in {result.seconds:.2f}s; mapspace "
        f"{result.mapspace_size:.3g}\n"
    )
    click.echo(result_table(result.result))


@main.command()
@click.option("--arch", "arch_spec", type=str, default=None, help="Architecture YAML or preset.")
@click.option("--cost-model", "cost_model", type=str, default=None, help=COST_HELP)
@click.option("--list", "list_models", is_flag=True, help="List the available cost models.")
@click.option("--json", "as_json", is_flag=True)
@_friendly
def costs(arch_spec: str | None, cost_model: str | None, list_models: bool, as_json: bool) -> None:
    """What a cost model gives for each component of a design (energy, leakage, area)."""
    from magnet.arch.load import load_arch
    from magnet.cost.registry import available_cost_models, costs_table, describe_costs

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
    rows = describe_costs(arch, _cost_models(cost_model, arch))
    click.echo(json.dumps(rows, indent=1, default=str) if as_json else costs_table(rows))


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list.")
@_friendly
def workloads(as_json: bool) -> None:
    """List the model zoo: name, layers, MACs at batch 1 with default parameters."""
    from magnet.workload.zoo import ZOO, load_zoo

    rows = []
    for name, entry in ZOO.items():
        net = load_zoo(name)
        rows.append(
            {
                "name": name,
                "layers": net.layer_count,
                "unique_shapes": len(net.unique_layers()),
                "macs": net.macs,
                "parameters": list(entry.parameters),
                "description": entry.description,
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=1))
        return
    click.echo(f"{'name':<14}{'layers':>8}{'shapes':>8}{'GMACs':>10}  parameters")
    for r in rows:
        click.echo(
            f"{r['name']:<14}{r['layers']:>8}{r['unique_shapes']:>8}"
            f"{r['macs'] / 1e9:>10.3f}  {', '.join(r['parameters'])}"
        )


if __name__ == "__main__":
    main()
