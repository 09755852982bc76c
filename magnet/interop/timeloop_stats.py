"""Readers of Timeloop's statistics files (``timeloop-model.stats.txt``,
``timeloop-mapper.stats.txt``), to set magnet beside a Timeloop run of the same case."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

_LEVEL = re.compile(r"^=== (\S+) ===$")
_SPACE = re.compile(r"^\s{4}(Weights|Inputs|Outputs):$")
_STAT = re.compile(r"^\s+Scalar (reads|fills|updates) \(per-instance\)\s+: (\d+)$")
_SUMMARY = re.compile(r"^(Utilization|Cycles|Energy|Computes)\s*[:=]\s*([\d.e+]+)")
_PER_COMPUTE = re.compile(r"^\s{4}(\S+)\s+= ([\d.]+)$")


def access_counts(path: Path) -> dict[str, dict[str, dict[str, int]]]:
    """{level: {operand: {reads, fills, updates}}} per instance, from a stats file."""
    levels: dict[str, dict[str, dict[str, int]]] = {}
    level = space = None
    for line in Path(path).read_text().splitlines():
        if line.startswith("Networks"):
            level = None
        if m := _LEVEL.match(line):
            level, space = m.group(1), None
        elif level and (m := _SPACE.match(line)):
            space = m.group(1).lower()
            levels.setdefault(level, {})[space] = {}
        elif level and space and (m := _STAT.match(line)):
            levels[level][space][m.group(1)] = int(m.group(2))
    return levels


def summary_stats(path: Path) -> dict[str, Any]:
    """The ``Summary Stats`` block of a Timeloop stats file: cycles, energy (pJ),
    utilisation (0..1), computes and energy per level (pJ)."""
    lines = Path(path).read_text().splitlines()
    start = lines.index("Summary Stats")
    out: dict[str, Any] = {"energy_pj_by_level": {}}
    in_fj = False
    for line in lines[start:]:
        if m := _SUMMARY.match(line):
            key, value = m.group(1), float(m.group(2))
            if key == "Energy":
                out["energy_pj"] = value * 1e6  # uJ
            elif key == "Utilization":
                out["utilization"] = value / 100
            else:
                out[key.lower()] = value
        elif line.startswith("fJ/Compute"):
            in_fj = True
        elif in_fj and (m := _PER_COMPUTE.match(line)):
            out["energy_pj_by_level"][m.group(1)] = float(m.group(2))
    for level, fj in out["energy_pj_by_level"].items():
        out["energy_pj_by_level"][level] = fj * out["computes"] / 1000
    # the total to 5 digits (fJ per compute x computes) rather than "Energy: 59.28 uJ"
    out["energy_pj"] = out["energy_pj_by_level"].pop("Total")
    return out
