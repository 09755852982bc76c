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
    as_json: bool,
) -> None:
    """Price a mapping of a layer, or per-layer mappings of a whole network."""
    from magnet.arch.load import load_arch

    if workload:
        _evaluate_network(
            workload,
            batch,
            arch_spec,
            layer_mappings,
            as_json,
            conflicting=bool(layer_text or mapping_file or timeloop_file),
        )
        return
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
        result = run(tl.layer, tl.arch, tl.mapping, tl.cost_model, source=timeloop_file)
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
        result = run(layer, arch, mapping, source=mapping_file)
    click.echo(result.to_json() if as_json else result_table(result))


def _evaluate_network(
    workload: str,
    batch: int | None,
    arch_spec: str | None,
    layer_mappings: str | None,
    as_json: bool,
    conflicting: bool,
) -> None:
    from magnet.arch.load import load_arch
    from magnet.mapping.network import LayerMappings, evaluate_network
    from magnet.report.text import network_table
    from magnet.workload.load import load_workload

    if conflicting:
        raise MagnetError(
            "--workload evaluates a network: give its per-layer mappings with --mapping-file, "
            "not --layer/--mapping/--timeloop"
        )
    if not arch_spec or not layer_mappings:
        raise MagnetError("--workload needs --arch and --mapping-file")
    arch = load_arch(arch_spec)
    network = load_workload(workload, batch)
    result = evaluate_network(network, arch, LayerMappings.from_yaml(layer_mappings))
    click.echo(json.dumps(result.to_dict(), indent=1) if as_json else network_table(result))


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
