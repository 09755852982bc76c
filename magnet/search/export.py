"""Writing a study's trials to CSV (one row per trial) or JSON (every trial with its record).

The file is written whole or not at all (``write_atomic``), and never over the study's own
storage.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from magnet.errors import MagnetError
from magnet.files import refuse_foreign, write_atomic
from magnet.search.storage import check_output
from magnet.search.study import Study, TrialView

#: The formats of an export, by file suffix.
FORMATS = ("csv", "json")


#: Trials per piece of an export: a download's pieces each cost a hop to a thread (Starlette
#: runs a generator in its thread pool), so a piece holds many trials; memory stays bounded.
PIECE_TRIALS = 500


def export_chunks(
    study: Study,
    kind: str,
    front: bool = False,
    cache: dict[tuple[str, int], tuple[TrialView, str]] | None = None,
) -> Iterator[str]:
    """``study``'s trials (or, with ``front``, the designs of its Pareto front) as ``kind``,
    a piece at a time (``PIECE_TRIALS`` trials: a download or a file of a big study is never
    held whole): ``csv`` (one row per trial: parameters, objective values, every metric,
    reason) or ``json`` (a list of every trial with its records, a trial a line).

    ``cache`` (a reader that exports a growing study again and again, the dashboard) keeps
    each trial's CSV row: a trial is written once while it does not change. A trial's JSON
    (its records, some KB) is made each time, and let go."""
    if kind not in FORMATS:
        raise MagnetError(f"no export format {kind!r}; allowed: {', '.join(FORMATS)}")
    trials = study.pareto_front() if front else study.trials()
    pieces = [trials[i : i + PIECE_TRIALS] for i in range(0, len(trials), PIECE_TRIALS)]
    if kind == "json":
        if not trials:
            yield "[]"
            return
        for i, piece in enumerate(pieces):
            texts = (_trial_json(t) for t in piece)
            yield ("[\n" if i == 0 else ",\n") + ",\n".join(texts)
        yield "\n]"
        return
    columns = study.columns()
    cache = {} if cache is None else cache
    line = _csv_writer()
    yield line(columns)
    for piece in pieces:
        lines = []
        for t in piece:
            key = (f"{kind}:{len(columns)}", t.number)
            known = cache.get(key)
            if known is None or known[0] is not t:
                known = (t, line(list(study._row(t).values())))  # on ``columns``, in order
                cache[key] = known
            lines.append(known[1])
        yield "".join(lines)


def _trial_json(trial: TrialView) -> str:
    """A trial with its records as one line of JSON (``TrialView.to_dict``), its records'
    JSON text set in as stored, not parsed and written again; compact, as Python's encoder
    runs in C only without indentation (a study of 100,000 trials: 33 s indented, 7.5 s so)."""
    head = json.dumps(trial.to_dict(), default=str)
    return f'{head[:-1]}, "records": {trial.records_json()}}}'


def _csv_writer() -> Callable[[list[Any]], str]:
    """A function making one CSV line of a list of values (one writer for all the lines)."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)

    def line(values: list[Any]) -> str:
        out.seek(0)
        out.truncate()
        writer.writerow(values)
        return out.getvalue()

    return line


def export_format(path: str | Path) -> str:
    """The format an export to ``path`` is written in (``csv`` or ``json``, by its suffix);
    any other suffix is bad input, refused before the study is read."""
    kind = Path(path).suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise MagnetError("give a .csv or .json file", source=str(path), field="--output")
    return kind


def write_export(study: Study, path: Path, front: bool = False) -> int:
    """Write ``study``'s trials (or its front) to ``path`` (.csv or .json); returns how
    many."""
    path = Path(path)
    kind = export_format(path)
    check_output(path, study.storage, "--output")
    refuse_foreign(path, "--output")
    write_atomic(path, export_chunks(study, kind, front))
    return len(study.pareto_front() if front else study.trials())
