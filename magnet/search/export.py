"""Writing a study's trials to CSV (one row per trial) or JSON (every trial with its record)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from magnet.errors import MagnetError
from magnet.search.space import METRICS
from magnet.search.study import Study


def write_export(study: Study, path: Path) -> int:
    """Write ``study``'s trials to ``path`` (.csv or .json); returns how many."""
    trials = study.trials()
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = [t.to_dict(with_records=True) for t in trials]
        path.write_text(json.dumps(data, indent=1, default=str))
    elif suffix == ".csv":
        params = sorted({k for t in trials for k in t.params})
        columns = [
            "number",
            "state",
            "status",
            *params,
            *(f"value:{o}" for o in study.objectives),
            *METRICS,
            "reason",
        ]
        with path.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(columns)
            for t in trials:
                writer.writerow(
                    [
                        t.number,
                        t.state,
                        t.status,
                        *(t.params.get(p, "") for p in params),
                        *(t.values.get(o, "") for o in study.objectives),
                        *(t.metrics.get(m, "") for m in METRICS),
                        t.reason or "",
                    ]
                )
    else:
        raise MagnetError("give a .csv or .json file", source=str(path), field="--output")
    return len(trials)
