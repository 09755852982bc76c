"""The ``magnet`` command."""

from __future__ import annotations

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
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object instead of tables.")
@_friendly
def evaluate(
    timeloop_file: str | None,
    arch_spec: str | None,
    layer_text: str | None,
    mapping_file: str | None,
    as_json: bool,
) -> None:
    """Price one mapping of one layer on one architecture."""
    from magnet.arch.load import load_arch
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
            raise MagnetError(f"missing {', '.join(missing)} (or give --timeloop FILE)")
        arch = load_arch(arch_spec)
        layer = parse_layer(layer_text)
        mapping = Mapping.from_yaml(mapping_file)
        result = run(layer, arch, mapping, source=mapping_file)
    click.echo(result.to_json() if as_json else result_table(result))


if __name__ == "__main__":
    main()
