"""Writing a study's trials to CSV (one row per trial) or JSON (every trial with its record).

The file is written whole or not at all (``write_atomic``), and never over the study's own
storage.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from magnet.errors import MagnetError
from magnet.files import refuse_foreign, write_atomic
from magnet.search.storage import check_output
from magnet.search.study import Study

#: The formats of an export, by file suffix.
FORMATS = ("csv", "json")


def export_text(study: Study, kind: str, front: bool = False) -> str:
    """``study``'s trials (or, with ``front``, the designs of its Pareto front) as ``kind``:
    ``csv`` (one row per trial: parameters, objective values, every metric, reason) or
    ``json`` (every trial with its records)."""
    trials = study.pareto_front() if front else study.trials()
    if kind == "json":
        return json.dumps([t.to_dict(with_records=True) for t in trials], indent=1, default=str)
    if kind != "csv":
        raise MagnetError(f"no export format {kind!r}; allowed: {', '.join(FORMATS)}")
    rows = study.rows(trials)
    out = io.StringIO(newline="")
    writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["number"])
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_export(study: Study, path: Path, front: bool = False) -> int:
    """Write ``study``'s trials (or its front) to ``path`` (.csv or .json); returns how
    many."""
    path = Path(path)
    check_output(path, study.storage, "--output")
    refuse_foreign(path, "--output")
    kind = path.suffix.lower().lstrip(".")
    if kind not in FORMATS:
        raise MagnetError("give a .csv or .json file", source=str(path), field="--output")
    write_atomic(path, export_text(study, kind, front))
    return len(study.pareto_front() if front else study.trials())
