"""Writing a study's trials to CSV (one row per trial) or JSON (every trial with its record)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from magnet.errors import MagnetError
from magnet.search.study import Study


def write_export(study: Study, path: Path) -> int:
    """Write ``study``'s trials to ``path`` (.csv or .json); returns how many."""
    trials = study.trials()
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = [t.to_dict(with_records=True) for t in trials]
        path.write_text(json.dumps(data, indent=1, default=str))
    elif suffix == ".csv":
        rows = study.rows()
        with path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["number"])
            writer.writeheader()
            writer.writerows(rows)
    else:
        raise MagnetError("give a .csv or .json file", source=str(path), field="--output")
    return len(trials)
