"""The commands on studies: ``magnet search`` (runs or resumes one), ``studies`` (a
storage's studies), ``pareto`` (a study's front), ``export`` (its trials as CSV or JSON),
``report`` (its HTML report) and ``dashboard`` (a live web view of a storage)."""

from __future__ import annotations

import gc
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from magnet.cli.shared import (
    CONTEXT,
    _file_path,
    _Finite,
    _friendly,
    _options,
    _Whole,
    main,
)
from magnet.errors import MagnetError
from magnet.units import MAX_SEED

if TYPE_CHECKING:
    from magnet.search.study import Study


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
    from magnet.search.values_index import indexed_front

    # a journal's index answers without reading the trials' records (None: read them all)
    found = indexed_front(study_name, storage)
    if found is None:
        study = _read_study(study_name, storage)
        front = pareto_json(study)
    else:
        study, front = found
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


def _report_path(
    text: str | None, flag: str, study: str, reads: Sequence[tuple[str, str]] = ()
) -> Path:
    """Where a study's report goes: ``text`` (its folder must exist) or, by default,
    magnet-results/STUDY.html (the folder is made when missing); checked before any work."""
    if text is not None:
        return _file_path(text, flag, reads=reads)
    return _file_path(str(_default_report(study)), flag, new_folder=True, reads=reads)
