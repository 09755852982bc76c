"""The ``magnet`` group and what its commands share.

``main`` (the group, ``_Magnet``: a usage error is one line and exit 2), ``_friendly``
around every command (bad input exits 2 with one line, a plug-in's bug exits 1 with its
traceback, Ctrl-C exits 130), the flags' types (``_Finite``, ``_Whole``) and shared options
(``SEARCH_OPTIONS``, ``COMMON_OPTIONS``), progress on stderr (``_Progress``,
``_layer_lines``) and the checks of where a command writes (``_file_path``,
``_refuse_inputs``). The commands are in ``price_commands``, ``catalog_commands`` and
``study_commands``.
"""

from __future__ import annotations

import gc
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial, wraps
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import click

from magnet.errors import MagnetError, PluginError, clip_digits
from magnet.perf import tune_allocator
from magnet.units import MAX_SEED

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar

    from magnet.api import LayerProgress
    from magnet.cost import NocModel
    from magnet.mapper import MapOutcome

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


#: Flags 0.3 renamed (old -> new): given, the error names the new one (click's own guess,
#: by spelling, named ``--workload`` for ``--network``).
RENAMED_FLAGS = {"--network": "--noc"}


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
            message = exc.format_message()
            if isinstance(exc, click.NoSuchOption) and exc.option_name in RENAMED_FLAGS:
                new = RENAMED_FLAGS[exc.option_name]
                message = f"no such option {exc.option_name!r}: it is {new!r} since magnet 0.3"
            click.echo(f"error: {clip_digits(message)}{hint}", err=True)
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


# ---- progress on stderr ---------------------------------------------------------------------
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


# ---- where a command writes -----------------------------------------------------------------
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
