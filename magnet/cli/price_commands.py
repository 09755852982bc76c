"""The commands that price: ``magnet evaluate`` (a layer under a given mapping, or a whole
network), ``magnet map`` (a layer's best mapping) and ``magnet export-timeloop`` (a design,
a layer and its mapping as Timeloop input, priced by magnet)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from magnet.cli.shared import (
    ARCH_HELP,
    COMMON_OPTIONS,
    CONTEXT,
    NOC_CHOICES,
    SEARCH_OPTIONS,
    _file_path,
    _friendly,
    _layer_lines,
    _Progress,
    _refuse_inputs,
    _Whole,
    main,
)
from magnet.errors import MagnetError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from magnet.cost import NocModel
    from magnet.design import Design
    from magnet.mapper import MapOutcome
    from magnet.mapping import Mapping
    from magnet.model.evaluate import Result
    from magnet.model.network_result import NetworkResult
    from magnet.workload.layer import Layer


@dataclass(frozen=True)
class _MapperFlags:
    """The mapper's flags (``SEARCH_OPTIONS`` but ``--dataflow``), checked, as the api takes
    them."""

    mapper: str
    objective: str
    seed: int
    samples: int | None
    evaluations: int | None
    seconds: float | None

    def kwargs(self) -> dict[str, Any]:
        """``magnet.api.map_layer`` / ``evaluate`` keyword arguments: mapper, objective, seed,
        budget and the mapper's own options (``--samples``, for a mapper that takes it)."""
        from magnet.mapper import Budget

        return {
            "mapper": self.mapper,
            "objective": self.objective,
            "seed": self.seed,
            "budget": Budget(evaluations=self.evaluations, seconds=self.seconds),
            **_mapper_options(self.mapper, self.samples),
        }


def _mapper_options(mapper: str, samples: int | None) -> dict[str, int]:
    """``--samples`` as the mapper's ``samples`` option, when its class takes one (its
    ``Options`` model, ``Mapper.option_names``); an unknown mapper is left to the api."""
    from magnet.mapper import available_mappers

    if samples is None:
        return {}
    known = available_mappers()
    if mapper in known and "samples" not in known[mapper].option_names():
        takers = [name for name, cls in known.items() if "samples" in cls.option_names()]
        raise MagnetError(
            f"--samples applies to the mappers that take a samples option "
            f"({', '.join(takers)}), not {mapper!r}"
        )
    return {"samples": samples}


def _noc(value: str | None) -> NocModel | None:
    """``--noc`` as the api takes it (None: the default of what is evaluated)."""
    return None if value is None else NOC_CHOICES[value]


def _design(
    arch_spec: str | None, dataflow: str | None, cost_model: str | None, noc: str | None
) -> Design:
    """An architecture's design, built once at the edge (a Timeloop input builds its own)."""
    from magnet.api import design
    from magnet.templates import load_arch

    if not arch_spec:
        raise MagnetError("missing --arch (or give --timeloop FILE)")
    return design(load_arch(arch_spec), dataflow, cost_model, noc=_noc(noc))


def _print(record: BaseModel, as_json: bool, text: Callable[[], str]) -> None:
    """A result record: as JSON (``--json``) or as the text ``text`` makes."""
    click.echo(record.model_dump_json(indent=1) if as_json else text())


@main.command(name="evaluate", context_settings=CONTEXT)
@click.option("--arch", "arch_spec", type=str, help=ARCH_HELP)
@click.option(
    "--layer",
    "layer_text",
    type=str,
    help='One layer, e.g. "K=64,C=64,P=56,Q=56,R=3,S=3,stride=2".',
)
@click.option("--mapping", "mapping_file", type=str, help="The layer's mapping (YAML).")
@click.option(
    "--workload",
    type=str,
    help="A network: zoo name (NAME:key=value,... for its parameters), .onnx or .yaml.",
)
@click.option(
    "--batch",
    type=_Whole(min=1),
    default=None,
    help="Batch size of the workload. Default: the workload's own.",
)
@click.option(
    "--mapping-file", "layer_mappings", type=str, help="Per-layer mappings of the workload (YAML)."
)
@click.option(
    "--timeloop",
    "timeloop_file",
    type=str,
    help="A Timeloop timeloop-input.yaml (its arch, problem, mapping and ERT).",
)
@click.option(
    "--pipeline",
    is_flag=True,
    help="A --workload on a package: pipeline its layers across groups of chiplets "
    "(stages), reporting a batch's latency and the pipeline's throughput.",
)
@click.option(
    "--fuse",
    is_flag=True,
    help="A --workload on a package: as --pipeline, the stages also fused depth-first (a "
    "batch passed on a tile at a time); the plan best for the objective is taken.",
)
@click.option(
    "--skip-unpriced-ops",
    "skip_ops",
    is_flag=True,
    help="An .onnx --workload: leave out the operators magnet does not price (else refused, "
    "naming the first); the record lists what was skipped.",
)
@click.option(
    "--densities",
    type=str,
    default=None,
    help="Densities of the layers' tensors: weights=2:4,inputs=0.5 (a density in (0, 1] or "
    "N:M) for every MAC layer, a YAML file (default: and named layers:) or a table magnet "
    "ships (alexnet-eyeriss). Default: dense.",
)
@SEARCH_OPTIONS
@COMMON_OPTIONS
@_friendly
def evaluate_command(
    arch_spec: str | None,
    layer_text: str | None,
    mapping_file: str | None,
    workload: str | None,
    batch: int | None,
    layer_mappings: str | None,
    timeloop_file: str | None,
    pipeline: bool,
    fuse: bool,
    skip_ops: bool,
    densities: str | None,
    dataflow: str | None,
    mapper: str,
    objective: str,
    seed: int,
    samples: int | None,
    budget_evaluations: int | None,
    budget_seconds: float | None,
    cost_model: str | None,
    noc: str | None,
    as_json: bool,
) -> None:
    """Price a layer under a given mapping, or a whole network (given or found mappings)."""
    from magnet.api import evaluate
    from magnet.report.text import layer_table, network_table

    if workload:
        if layer_text or mapping_file or timeloop_file:
            raise MagnetError(
                "--workload evaluates a network: give its per-layer mappings with "
                "--mapping-file or a --dataflow to find them, not --layer/--mapping/--timeloop"
            )
        network = _evaluate_network(
            workload,
            batch,
            arch_spec=arch_spec,
            mappings_file=layer_mappings,
            dataflow=dataflow,
            flags=_MapperFlags(
                mapper, objective, seed, samples, budget_evaluations, budget_seconds
            ),
            cost_model=cost_model,
            noc=noc,
            quiet=as_json,
            pipeline=pipeline,
            fuse=fuse,
            skip_ops=skip_ops,
            densities=densities,
        )
        record = network.record()
        _print(record, as_json, lambda: network_table(record))
        return
    for flag, given in (("--pipeline", pipeline), ("--fuse", fuse)):
        if given:
            raise MagnetError(f"{flag} applies to --workload (a network on a package)")
    if skip_ops:
        raise MagnetError("--skip-unpriced-ops applies to an .onnx --workload")
    if dataflow:
        raise MagnetError("--dataflow maps a --workload; for one layer use 'magnet map'")
    if batch is not None or layer_mappings:
        raise MagnetError("--batch and --mapping-file apply to --workload")
    layer, design, mapping, source = _layer_and_mapping(
        arch_spec, layer_text, mapping_file, timeloop_file, cost_model, noc
    )
    if densities is not None:
        from magnet.workload.loader import density_table

        layer = layer.model_copy(update={"densities": density_table(densities).default})
    result = evaluate(layer, design, mapping, source=source)
    layer_record = result.record()
    _print(layer_record, as_json, lambda: layer_table(layer_record, mapping.loop_nest(design.arch)))


def _evaluate_network(
    workload: str,
    batch: int | None,
    *,
    arch_spec: str | None,
    mappings_file: str | None,
    dataflow: str | None,
    flags: _MapperFlags,
    cost_model: str | None,
    noc: str | None,
    quiet: bool,
    pipeline: bool = False,
    fuse: bool = False,
    skip_ops: bool = False,
    densities: str | None = None,
) -> NetworkResult:
    """``magnet evaluate --workload``: the network on ``--arch`` under its per-layer mappings
    (``--mapping-file``) or mapped under ``--dataflow`` (free, the hardware's rules only, when
    neither is given), with one progress line per layer on stderr unless ``quiet``."""
    from magnet.api import evaluate
    from magnet.model.network_result import LayerMappings
    from magnet.workload.loader import load_workload

    if not arch_spec:
        raise MagnetError("--workload needs --arch")
    if mappings_file and dataflow:
        raise MagnetError(
            "give --mapping-file (the layers' mappings) or --dataflow (the best mappings "
            "under it), not both"
        )
    for flag, given in (("--pipeline", pipeline), ("--fuse", fuse)):
        if given and mappings_file:
            raise MagnetError(
                f"{flag} maps the layers on its stages: give --dataflow, not --mapping-file"
            )
    design = _design(arch_spec, dataflow, cost_model, noc)
    network = load_workload(workload, batch, skip_ops=skip_ops, densities=densities)
    if mappings_file:
        return evaluate(network, design, LayerMappings.from_yaml(mappings_file))
    on_layer = None if quiet else _layer_lines()
    return evaluate(
        network, design, on_layer=on_layer, pipeline=pipeline, fuse=fuse, **flags.kwargs()
    )


def _layer_and_mapping(
    arch_spec: str | None,
    layer_text: str | None,
    mapping_file: str | None,
    timeloop_file: str | None,
    cost_model: str | None,
    noc: str | None,
) -> tuple[Layer, Design, Mapping, str]:
    """What ``magnet evaluate`` prices for one layer: the layer, its design, its mapping and
    where the mapping came from; from a Timeloop input, or from ``--arch``, ``--layer`` and
    ``--mapping``."""
    from magnet.mapping import Mapping
    from magnet.workload.layer import parse_layer

    if timeloop_file:
        if arch_spec or layer_text or mapping_file:
            raise MagnetError(
                "--timeloop brings its own arch, layer and mapping; do not "
                "combine it with --arch/--layer/--mapping"
            )
        from magnet.interop.timeloop import load_timeloop

        tl = load_timeloop(timeloop_file)
        design = tl.design(cost_model, noc=_noc(noc))
        if tl.mapping is None:
            raise MagnetError("has no 'mapping' to evaluate", source=timeloop_file)
        return tl.layer, design, tl.mapping, timeloop_file
    flags = (("--arch", arch_spec), ("--layer", layer_text), ("--mapping", mapping_file))
    missing = [flag for flag, value in flags if not value]
    if not (arch_spec and layer_text and mapping_file):
        raise MagnetError(f"missing {', '.join(missing)} (or give --timeloop FILE, or --workload)")
    design = _design(arch_spec, None, cost_model, noc)
    return parse_layer(layer_text), design, Mapping.from_yaml(mapping_file), mapping_file


@main.command(name="map", context_settings=CONTEXT)
@click.option("--arch", "arch_spec", type=str, help=ARCH_HELP)
@click.option("--layer", "layer_text", type=str, help='The layer, e.g. "K=64,C=64,P=56,Q=56".')
@click.option(
    "--timeloop",
    "timeloop_file",
    type=str,
    help="Search this Timeloop input's mapspace (its constraints, with its ERT).",
)
@click.option("--output", type=str, default=None, help="Write the best mapping to this YAML.")
@SEARCH_OPTIONS
@COMMON_OPTIONS
@_friendly
def map_command(
    arch_spec: str | None,
    layer_text: str | None,
    timeloop_file: str | None,
    output: str | None,
    dataflow: str | None,
    mapper: str,
    objective: str,
    seed: int,
    samples: int | None,
    budget_evaluations: int | None,
    budget_seconds: float | None,
    cost_model: str | None,
    noc: str | None,
    as_json: bool,
) -> None:
    """Find the best mapping of one layer (given dataflow, objective, mapper and budget)."""
    from magnet.report.text import layer_table
    from magnet.workload.layer import parse_layer

    target = _file_path(output, "--output") if output is not None else None
    if timeloop_file:
        if arch_spec or layer_text:
            raise MagnetError("--timeloop brings its own arch and layer")
        from magnet.interop.timeloop import load_timeloop

        tl = load_timeloop(timeloop_file)
        design, layer = tl.design(cost_model, dataflow, noc=_noc(noc)), tl.layer
    else:
        if not arch_spec or not layer_text:
            raise MagnetError("missing --arch or --layer (or give --timeloop FILE)")
        layer = parse_layer(layer_text)
        design = _design(arch_spec, dataflow, cost_model, noc)
    flags = _MapperFlags(mapper, objective, seed, samples, budget_evaluations, budget_seconds)
    outcome, best = _best_mapping(layer, design, flags, quiet=as_json)
    if target is not None:
        from magnet.files import write_atomic

        write_atomic(target, best.mapping.to_yaml())
    record = outcome.record()
    _print(record, as_json, lambda: layer_table(record, best.mapping.loop_nest(design.arch)))


@main.command(name="export-timeloop", context_settings=CONTEXT)
@click.option("--arch", "arch_spec", type=str, help=ARCH_HELP)
@click.option("--layer", "layer_text", type=str, help='The layer, e.g. "K=64,C=64,P=56,Q=56".')
@click.option(
    "--mapping",
    "mapping_file",
    type=str,
    default=None,
    help="The layer's mapping (YAML). Default: the best mapping the mapper finds.",
)
@click.option(
    "--output",
    type=str,
    required=True,
    help="Folder to write timeloop-input.yaml into (created when its parent exists).",
)
@SEARCH_OPTIONS
@COMMON_OPTIONS
@_friendly
def export_timeloop(
    arch_spec: str | None,
    layer_text: str | None,
    mapping_file: str | None,
    output: str,
    dataflow: str | None,
    mapper: str,
    objective: str,
    seed: int,
    samples: int | None,
    budget_evaluations: int | None,
    budget_seconds: float | None,
    cost_model: str | None,
    noc: str | None,
    as_json: bool,
) -> None:
    """Write a design, a layer and its mapping as Timeloop v0.4 input, priced by magnet."""
    from magnet.api import evaluate
    from magnet.interop.timeloop_writer import timeloop_target, write_timeloop
    from magnet.mapping import Mapping
    from magnet.report.text import layer_table
    from magnet.workload.layer import parse_layer

    if not arch_spec or not layer_text:
        raise MagnetError("missing --arch or --layer")
    if mapping_file and dataflow:
        raise MagnetError("give --mapping (that mapping) or --dataflow (the best one), not both")
    _refuse_inputs(timeloop_target(output), "--output")
    layer = parse_layer(layer_text)
    design = _design(arch_spec, dataflow, cost_model, noc)
    if mapping_file:
        result = evaluate(layer, design, Mapping.from_yaml(mapping_file), source=mapping_file)
    else:
        flags = _MapperFlags(mapper, objective, seed, samples, budget_evaluations, budget_seconds)
        result = _best_mapping(layer, design, flags, quiet=as_json)[1]
    from magnet.model.evaluate import Result

    assert isinstance(result, Result)  # --layer is a loop nest: never a post-processing layer
    path = write_timeloop(result, output)
    record = result.record()
    _print(record, as_json, lambda: layer_table(record, result.mapping.loop_nest(result.arch)))
    click.echo(f"wrote {path}", err=True)


def _best_mapping(
    layer: Layer, design: Design, flags: _MapperFlags, quiet: bool
) -> tuple[MapOutcome, Result]:
    """The mapper's outcome for ``layer`` and its best mapping's result, with a progress bar
    (``magnet.api.map_layer``); no mapping is bad input, a budget that ended the search a
    note."""
    from magnet.api import map_layer

    with _Progress(quiet=quiet) as progress:
        outcome = map_layer(layer, design, progress=progress, **flags.kwargs())
    if outcome.result is None:
        raise MagnetError(f"{outcome.status}: {outcome.reason}", field=layer.name)
    if outcome.status == "budget_exhausted":
        click.echo(f"note: {outcome.reason}; the best mapping found is shown", err=True)
    return outcome, outcome.result
