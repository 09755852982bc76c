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


def write_export(study: Study, path: Path) -> int:
    """Write ``study``'s trials to ``path`` (.csv or .json); returns how many."""
    path = Path(path)
    check_output(path, study.storage, "--output")
    refuse_foreign(path, "--output")
    trials = study.trials()
    suffix = path.suffix.lower()
    if suffix == ".json":
        text = json.dumps([t.to_dict(with_records=True) for t in trials], indent=1, default=str)
    elif suffix == ".csv":
        rows = study.rows()
        out = io.StringIO(newline="")
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["number"])
        writer.writeheader()
        writer.writerows(rows)
        text = out.getvalue()
    else:
        raise MagnetError("give a .csv or .json file", source=str(path), field="--output")
    write_atomic(path, text)
    return len(trials)
