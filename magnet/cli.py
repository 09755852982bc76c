"""The ``magnet`` command: a thin layer over ``magnet.api`` and ``magnet.search``.

Each command reads and checks its flags and files, calls the Python API and prints what it
returns (a record as text, or as JSON with ``--json``); progress goes to stderr. Bad input
exits 2 with one line, a plug-in's bug exits 1 with its traceback (``_friendly``). Modules
are imported inside the commands, so that ``magnet --help`` starts fast.
"""

from __future__ import annotations

import gc
import json
import os
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial, wraps
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import click

from magnet.errors import DesignInfeasible, MagnetError, PluginError, clip_digits
from magnet.perf import tune_allocator
from magnet.units import MAX_SEED

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar
    from pydantic import BaseModel

    from magnet.api import LayerProgress
    from magnet.cost import NocModel
    from magnet.cost.tables import Number
    from magnet.design import Design
    from magnet.mapper import MapOutcome
    from magnet.mapping import Mapping
    from magnet.model.evaluate import Result
    from magnet.model.network_result import NetworkResult
    from magnet.search.study import Study
    from magnet.workload.layer import Layer

CONTEXT = {"help_option_names": ["-h", "--help"], "show_default": True}
#: The values of ``--noc``, as the api takes them.
NOC_CHOICES: dict[str, NocModel] = {"wires": "wires", "none": "none"}


def _friendly(func: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input prints one clear line and exits 2, never a traceback; a plug-in's bug
    prints its message and the plug-in's own traceback and exits 1; Ctrl-C prints one line
    and exits 130 (magnet writes every file whole or not at all: nothing is half-written); a
    ``MagnetNote`` is one ``note:`` line."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            _refuse_empty_values()
            with warnings.catch_warnings():
                warnings.showwarning = partial(_show_note, warnings.showwarning)
                return func(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("interrupted: nothing was left half-written", err=True)
            sys.exit(130)
        except MagnetError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except PluginError as exc:
            click.echo(f"error: a plug-in failed: {exc}", err=True)
            if exc.traceback:
                click.echo(exc.traceback.rstrip(), err=True)
            sys.exit(1)

    return wrapper


def _show_note(
    show: Callable[..., None],
    message: Warning | str,
    category: type[Warning],
    *args: Any,
    **kwargs: Any,
) -> None:
    """``warnings.showwarning`` for a command: a ``MagnetNote`` as one ``note:`` line on
    stderr, any other warning as ``show`` shows it."""
    from magnet.errors import MagnetNote

    if issubclass(category, MagnetNote):
        click.echo(f"note: {message}", err=True)
    else:
        show(message, category, *args, **kwargs)


def _refuse_empty_values() -> None:
    """An empty value (``--output ''``) is refused, naming its flag or argument: no flag of
    magnet takes one (a path, a name, a spec), and read as "not given" or as the working
    folder it would be a silent default."""
    context = click.get_current_context(silent=True)
    if context is None:
        return
    for param in context.command.params:
        value = context.params.get(param.name or "")
        if "" not in (value if isinstance(value, tuple) else (value,)):
            continue
        if isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            raise MagnetError("an empty value; give one, or leave the flag out", field=flag)
        raise MagnetError("an empty value; give one", field=param.human_readable_name)


class _Finite(click.ParamType[float]):
    """A finite number above ``low`` (``nan`` and ``inf`` are refused, as every number a
    user gives is)."""

    name = "number"

    def __init__(self, low: float = 0.0):
        self.low = low

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        import math

        try:
            if not str(value).isascii() or "_" in str(value):  # float() takes '１' and '1_0'
                raise ValueError(value)
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number (write it in digits 0-9: 2.5, 1e3)", param, ctx)
        if not math.isfinite(number) or number <= self.low:
            self.fail(f"give a finite number > {self.low:g}, got {value!r}", param, ctx)
        return number


class _Whole(click.IntRange):
    """A whole number in a range, written as YAML files may write it: ``1000`` or ``1e3``
    (``units.number_text``: ASCII digits, at most ``MAX_DIGITS`` of them; ``1_000``, ``１２``,
    ``1.5e0`` and ``true`` are refused, as in a file)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from magnet.units import number_text

        if isinstance(value, str):
            try:
                number = number_text(value.strip())
            except ValueError as exc:  # thousands of digits
                self.fail(str(exc), param, ctx)
            if not isinstance(number, int):
                self.fail(
                    f"{value!r} is not a valid integer (write it in digits 0-9: 1000, 1e3)",
                    param,
                    ctx,
                )
            value = number
        return super().convert(value, param, ctx)


def _options(*decorators: Callable[..., Any]) -> Callable[..., Any]:
    def apply(func: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            func = decorator(func)
        return func

    return apply


COST_HELP = (
    "Cost model: a name (horowitz45, eyeriss-normalized, sram-analytical, ...), "
    "table:FILE.yaml or FILE.py:CLASS; a comma-separated list is a chain (the built-in "
    "table last). Default: the built-in table at the architecture's node."
)
ARCH_HELP = "A preset (simba-chip, eyeriss-chip, systolic-128), a template name or a YAML file."
SEARCH_OPTIONS = _options(
    click.option(
        "--dataflow",
        type=str,
        default=None,
        help="A dataflow of the architecture's template (see 'magnet dataflows') or "
        "a dataflow YAML file. Default: free (hardware rules only).",
    ),
    click.option(
        "--mapper",
        type=str,
        default="fast",
        help="fast, exhaustive, random, or a registered mapper.",
    ),
    click.option(
        "--objective",
        type=str,
        default="edp",
        help="edp, energy, latency, or weights like 'energy=1,latency=2'.",
    ),
    click.option("--seed", type=_Whole(0, MAX_SEED), default=0, help="Seed of the mapper."),
    click.option(
        "--samples",
        type=_Whole(min=1),
        default=None,
        help="Random mappings (random: to price, default 20000; fast: to start "
        "from, default 6000).",
    ),
    click.option(
        "--budget-evaluations",
        type=_Whole(min=1),
        default=None,
        help="Stop mapping a layer after this many mappings (per layer).",
    ),
    click.option(
        "--budget-seconds",
        type=_Finite(),
        default=None,
        help="Stop mapping a layer after this many seconds (per layer).",
    ),
)
COMMON_OPTIONS = _options(
    click.option("--cost-model", "cost_model", type=str, default=None, help=COST_HELP),
    click.option(
        "--noc",
        "noc",
        type=click.Choice(list(NOC_CHOICES)),
        default=None,
        help="The on-chip network (NoC): price its wires from the floorplan, or not at all "
        "(Timeloop parity). Default: wires, none with --timeloop.",
    ),
    click.option("--json", "as_json", is_flag=True, help="Print the result record as JSON."),
)


class _Magnet(click.Group):
    """The ``magnet`` group: a usage error (an unknown command or flag, a flag's value click
    refuses: ``--seed -1``, ``--trials x``) is one line and exit 2 like every other bad input,
    instead of click's usage block."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the command line; with ``standalone_mode`` (the ``magnet`` command), exit."""
        run = partial(super().main, args, prog_name, complete_var, standalone_mode=False, **extra)
        if not standalone_mode:
            return run()
        try:
            code: Any = run()
        except click.exceptions.NoArgsIsHelpError as exc:  # 'magnet' alone: its help
            click.echo(exc.format_message())
            sys.exit(0)
        except click.ClickException as exc:
            command = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx else ""
            hint = f" ('{command} -h' for help)" if command else ""
            click.echo(f"error: {clip_digits(exc.format_message())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:  # Ctrl-C outside a command (at a prompt, while parsing)
            click.echo("interrupted: nothing was left half-written", err=True)
            sys.exit(130)
        # the process ends: no last walk of the collector over what the command read (a
        # study of 100,000 trials: 2.1 s of the 6 s of 'magnet pareto')
        gc.freeze()
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=_Magnet, context_settings=CONTEXT)
@click.version_option(package_name="magnet")
def main() -> None:
    """magnet: design-space exploration for DNN accelerators."""
    # the command line may set process-wide things: keep freed evaluator buffers for reuse
    # (``magnet.perf``; a library call never does this to its caller's process)
    tune_allocator()


# ---- evaluate / map -------------------------------------------------------------------------
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


def _layer_lines() -> LayerProgress:
    """One progress line on stderr per distinct layer a network's mapper maps."""
    start = time.perf_counter()

    def report(outcome: MapOutcome, done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done)
        r = outcome.result
        shown = f"EDP {r.edp:.3e}" if r is not None else outcome.status
        click.echo(
            f"[{done}/{total}] {outcome.layer.name:<28} {shown}  {outcome.seconds:.2f}s  "
            f"(eta {eta:.1f}s)",
            err=True,
        )

    return report


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


class _Progress:
    """A progress bar on stderr for long mapper runs (shown after two seconds)."""

    def __init__(self, quiet: bool):
        self.quiet, self.done = quiet, 0
        self.bar: ProgressBar[int] | None = None

    def __call__(self, evaluated: int, total: float, elapsed: float) -> None:
        if self.quiet or elapsed < 2.0:
            return
        if self.bar is None:
            self.bar = click.progressbar(
                length=max(int(total), evaluated), label="mapping", file=sys.stderr, show_pos=True
            )
            self.bar.__enter__()
        self.bar.update(evaluated - self.done)
        self.done = evaluated

    def __enter__(self) -> _Progress:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(kind, error, traceback)


def _file_path(
    text: str, flag: str, new_folder: bool = False, reads: Sequence[tuple[str, str]] = ()
) -> Path:
    """Where ``flag`` writes a file, checked before any work: a path a file can be written to
    (``check_writable``: its folder exists, or with ``new_folder`` can be made), not a file of
    the user's (``refuse_foreign``), not a file the command reads (``_refuse_inputs``, with
    ``reads``) and, in a command with ``--storage``, not the study storage it names."""
    from magnet.files import refuse_foreign
    from magnet.search.storage import check_output

    context = click.get_current_context(silent=True)
    if context is not None and "storage" in context.params and text:
        check_output(text, context.params["storage"], flag)
    _refuse_inputs(text, flag, reads)
    refuse_foreign(text, flag, new_folder=new_folder)
    return Path(text)


#: The parameters whose values a command reads as files (or as names): never its output.
_INPUTS = frozenset(
    {"arch_spec", "timeloop_file", "mapping_file", "layer_mappings", "dataflow", "cost_model"}
    | {"space_file", "workloads"}
)


def _refuse_inputs(path: str | Path, flag: str, reads: Sequence[tuple[str, str]] = ()) -> None:
    """Refuse an output ``path`` that is a file the running command reads (``refuse_input``):
    the value of any of its ``_INPUTS`` flags (each piece of a cost-model chain, with and
    without ``table:`` and ``:CLASS``), or one of ``reads`` (what a file it reads names)."""
    from magnet.files import refuse_input

    given = list(reads)
    context = click.get_current_context(silent=True)
    values = context.params if context is not None else {}
    for param in context.command.params if context is not None else []:
        value = values.get(param.name or "")
        if param.name not in _INPUTS or not value:
            continue
        what = param.human_readable_name  # an argument's: SPACE
        if isinstance(param, click.Option):
            what = max(param.opts, key=len)
        for text in value if isinstance(value, tuple) else (value,):
            pieces = [p.strip().removeprefix("table:") for p in str(text).split(",")]
            for candidate in {str(text), *pieces, *(p.rpartition(":")[0] for p in pieces)}:
                given.append((what, candidate))
    refuse_input(path, flag, [(f, p) for f, p in given if p])


def _report_path(
    text: str | None, flag: str, study: str, reads: Sequence[tuple[str, str]] = ()
) -> Path:
    """Where a study's report goes: ``text`` (its folder must exist) or, by default,
    magnet-results/STUDY.html (the folder is made when missing); checked before any work."""
    if text is not None:
        return _file_path(text, flag, reads=reads)
    return _file_path(str(_default_report(study)), flag, new_folder=True, reads=reads)


# ---- listings ------------------------------------------------------------------------------
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


# ---- the design search ------------------------------------------------------------------------
STORAGE_OPTION = click.option(
    "--storage",
    type=str,
    default=None,
    help="Study storage: a journal file (default magnet-results/magnet.journal) or an Optuna "
    "storage URL (sqlite:///file.db, postgresql://user@host/db).",
)
STUDY_OPTIONS = _options(
    click.option("--study", "study_name", type=str, required=True, help="The study."),
    STORAGE_OPTION,
)


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


@main.command(context_settings=CONTEXT)
@click.argument("space_file", metavar="SPACE")
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    help="Replace the space's workloads (zoo name with NAME:key=value, .onnx, .yaml); "
    "repeat for several. Default: the space's.",
)
@click.option(
    "--trials",
    type=_Whole(min=1),
    default=None,
    help="Complete trials wanted, earlier runs included. Default: the space's.",
)
@click.option(
    "--workers",
    type=_Whole(min=1),
    default=1,
    help="Designs evaluated at once: 1 runs in this process (no Ray); more start a "
    "local Ray cluster of that size, or use --ray-address.",
)
@click.option(
    "--sampler",
    type=click.Choice(["nsga2", "nsga3", "tpe", "random", "grid"]),
    default=None,
    help="Optuna sampler. Default: the space's (nsga2).",
)
@STORAGE_OPTION
@click.option(
    "--study", "study_name", type=str, default=None, help="Study name. Default: the space's name."
)
@click.option(
    "--seed",
    type=_Whole(0, MAX_SEED),
    default=0,
    help="Seed of the sampler and the mapper.",
)
@click.option(
    "--ray-address",
    type=str,
    default=None,
    help="HOST:PORT of a running Ray cluster to evaluate on (not started or stopped by magnet).",
)
@click.option(
    "--timeout",
    type=_Finite(),
    default=None,
    help="Stop asking for designs after this many seconds (finished trials are kept).",
)
@click.option(
    "--report",
    "report_path",
    type=str,
    default=None,
    metavar="PATH",
    help="Write the HTML report of the study here at the end. Default: magnet-results/STUDY.html.",
)
@click.option(
    "--no-report", "no_report", is_flag=True, help="Do not write an HTML report at the end."
)
@click.option(
    "--max-failures",
    type=_Whole(min=1),
    default=5,
    help="Stop (exit 1) after this many failed evaluations in a row (an exception in a "
    "plug-in, a worker that died twice).",
)
@_friendly
def search(
    space_file: str,
    workloads: tuple[str, ...],
    trials: int | None,
    workers: int,
    sampler: str | None,
    storage: str | None,
    study_name: str | None,
    seed: int,
    ray_address: str | None,
    timeout: float | None,
    report_path: str | None,
    no_report: bool,
    max_failures: int,
) -> None:
    """Search a design space for Pareto-optimal designs (resumable). SPACE is a YAML file
    or the name of a built-in space (magnet spaces lists them).

    Exit 0: done; 2: bad input (nothing written); 1: evaluations kept failing (the
    finished trials are kept); 130: interrupted (resume with the same command)."""
    from magnet.report.text import front_table
    from magnet.search import SearchFailed, load_space, pareto_json
    from magnet.search import search as search_designs

    if report_path is not None and no_report:
        raise MagnetError("give --report PATH or --no-report, not both", field="--report")
    space = load_space(space_file)
    reads = [("a workload of the space", w.workload) for w in space.workloads]
    name = study_name or space.name
    target = None if no_report else _report_path(report_path, "--report", name, reads)
    try:
        study = search_designs(
            space,
            list(workloads),
            n_trials=trials,
            workers=workers,
            sampler=sampler,
            storage=storage,
            study=study_name,
            seed=seed,
            ray_address=ray_address,
            timeout=timeout,
            max_failures=max_failures,
            log=lambda line: click.echo(line, err=True),
        )
    except KeyboardInterrupt:
        sys.exit(130)
    except SearchFailed as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if no_report:
        from magnet.search.storage import describe

        where = "" if storage is None else f" --storage {shlex.quote(describe(storage))}"
        click.echo(f"  report     magnet report --study {shlex.quote(study.name)}{where}", err=True)
    elif target is not None:
        _search_report(study.name, storage, target)
    # the result on stdout (progress and the summary went to stderr): the Pareto front
    click.echo(f"\nPareto front of study {study.name!r}, best first by {study.objectives[0]}:")
    click.echo(front_table(study.objectives, pareto_json(study)))


def _default_report(study: str) -> Path:
    from magnet.report.design_page import safe_file_name
    from magnet.search.storage import DEFAULT_DIR

    return DEFAULT_DIR / f"{safe_file_name(study)}.html"


def _search_report(name: str, storage: str | None, path: Path) -> None:
    """The report at the end of a search (its path checked before the search); a report that
    cannot be written is a warning (the search's results are stored whatever happens here)."""
    from magnet.report import write_report
    from magnet.search import load_study

    try:
        write_report(load_study(name, storage), path)
    except (MagnetError, OSError) as exc:
        click.echo(f"warning: the report was not written: {exc}", err=True)
        return
    click.echo(f"report written to {path}", err=True)


@main.command(context_settings=CONTEXT)
@STORAGE_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@_friendly
def studies(storage: str | None, as_json: bool) -> None:
    """List the studies of a storage with their trial counts and fronts."""
    from magnet.search import load_studies

    rows = [study.summary() for study in load_studies(storage)]
    if as_json:
        click.echo(json.dumps(rows, indent=1, default=str))
        return
    click.echo(
        f"{'study':<24}{'template':<10}{'ok':>6}{'infeas':>8}{'failed':>8}{'front':>7}"
        f"{'HV':>9}  workloads"
    )
    for r in rows:
        t = r["trials"]
        click.echo(
            f"{r['name']:<24}{r['template']:<10}{t['ok']:>6}{t['infeasible']:>8}"
            f"{t['failed']:>8}{r['front_size']:>7}{r['hypervolume']:>9.3g}  "
            f"{', '.join(r['workloads'])}"
        )


def _read_study(name: str, storage: str | None) -> Study:
    """The study a reading command works on, its trials' views made and then left out of
    the collector's walks (``gc.freeze``: the command ends with them; at 100,000 trials each
    walk over them cost seconds in all)."""
    from magnet.search import load_study

    study = load_study(name, storage)
    study.trials()
    gc.freeze()
    return study


@main.command(context_settings=CONTEXT)
@STUDY_OPTIONS
@click.option(
    "--json", "as_json", is_flag=True, help="Print a JSON list of {number, params, values}."
)
@_friendly
def pareto(study_name: str, storage: str | None, as_json: bool) -> None:
    """Print the Pareto front of a study: each design's parameters and objectives."""
    from magnet.report.text import front_table
    from magnet.search import pareto_json

    study = _read_study(study_name, storage)
    front = pareto_json(study)
    if as_json:
        click.echo(json.dumps(front, indent=1))
        return
    click.echo(front_table(study.objectives, front))


@main.command(context_settings=CONTEXT)
@STUDY_OPTIONS
@click.option(
    "-o",
    "--output",
    type=str,
    required=True,
    help="FILE.csv (one row per trial) or FILE.json (every trial with its record).",
)
@click.option("--front", is_flag=True, help="Only the designs of the Pareto front.")
@_friendly
def export(study_name: str, storage: str | None, output: str, front: bool) -> None:
    """Write every trial of a study (or its front) to CSV or JSON."""
    from magnet.search.export import export_format, write_export

    path = _file_path(output, "--output")
    export_format(path)
    study = _read_study(study_name, storage)
    count = write_export(study, path, front)
    what = "designs of the front" if front else "trials"
    click.echo(f"{count} {what} written to {path}", err=True)


@main.command(context_settings=CONTEXT)
@STUDY_OPTIONS
@click.option(
    "-o",
    "--output",
    type=str,
    default=None,
    help="The HTML file to write. Default: magnet-results/STUDY.html.",
)
@_friendly
def report(study_name: str, storage: str | None, output: str | None) -> None:
    """Write a study's report: one self-contained HTML file (fronts, designs, breakdowns)."""
    from magnet.report import write_report

    path = _report_path(output, "--output", study_name)
    study = _read_study(study_name, storage)
    written = write_report(study, path)
    click.echo(f"report of study {study.name!r} written to {written}", err=True)


@main.command(context_settings=CONTEXT)
@STORAGE_OPTION
@click.option(
    "--host",
    type=str,
    default="127.0.0.1",
    help="Address to listen on; anything but a loopback address shows the studies to the network.",
)
@click.option("--port", type=_Whole(min=1, max=65535), default=8050, help="Port.")
@_friendly
def dashboard(storage: str | None, host: str, port: int) -> None:
    """Serve a read-only web dashboard of a storage's studies, live while searches run."""
    from magnet.dashboard import serve

    # serve() takes the port and opens the storage (a bad host or port, a storage that is
    # none or cannot be reached: exit 2) before it prints anything
    serve(storage, host=host, port=port, log=lambda line: click.echo(line, err=True))


if __name__ == "__main__":
    main()
