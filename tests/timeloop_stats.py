"""Reader of Timeloop's ``timeloop-model.stats.txt`` (per level, per data space counts)."""

from __future__ import annotations

import re
from pathlib import Path

_LEVEL = re.compile(r"^=== (\S+) ===$")
_SPACE = re.compile(r"^\s{4}(Weights|Inputs|Outputs):$")
_STAT = re.compile(r"^\s+Scalar (reads|fills|updates) \(per-instance\)\s+: (\d+)$")
_CYCLES = re.compile(r"^Cycles: (\d+)$")


def read_stats(path: Path) -> tuple[dict[str, dict[str, dict[str, int]]], int]:
    """{level: {operand: {reads, fills, updates}}} per instance, and the total cycles."""
    levels: dict[str, dict[str, dict[str, int]]] = {}
    level = space = None
    cycles = 0
    for line in path.read_text().splitlines():
        if line.startswith("Networks"):
            level = None
        if m := _LEVEL.match(line):
            level, space = m.group(1), None
        elif level and (m := _SPACE.match(line)):
            space = m.group(1).lower()
            levels.setdefault(level, {})[space] = {}
        elif level and space and (m := _STAT.match(line)):
            levels[level][space][m.group(1)] = int(m.group(2))
        elif m := _CYCLES.match(line):
            cycles = int(m.group(1))
    return levels, cycles
