"""What every experiment shares: arguments, timing, tables, summaries and figures.

Each ``experiments/NAME/run.py`` puts this folder on ``sys.path`` and imports this module.
Outputs go to ``experiments/NAME/results/`` (``--quick`` runs to ``results/quick/``, so a
reduced run never overwrites the committed tables; ``--out`` picks another folder):

* ``figure.html``: a self-contained interactive plotly figure (plotly.js embedded, no CDN;
  gitignored, ~4.8 MB), and ``figure.png``, a screenshot of it (committed);
* ``table.md`` / ``table.csv``: the per-row numbers beside the published ones;
* ``summary.json``: the key numbers, the published ones, the run's CPU and wall time.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import resource
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from magnet.files import read_yaml

EXPERIMENTS = Path(__file__).resolve().parent
REPO = EXPERIMENTS.parent
#: The reference data shipped with the tests (tests/data/reference/README.md).
REFERENCE = REPO / "tests" / "data" / "reference"
CHROMIUM = "/usr/bin/chromium"


def arguments(doc: str) -> argparse.ArgumentParser:
    """The options every experiment takes (``--quick``, ``--out``, ``--no-png``); the
    description is the first line of the script's docstring ``doc``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="a reduced run (writes to results/quick/)"
    )
    parser.add_argument("--out", type=Path, default=None, help="output folder")
    parser.add_argument(
        "--no-png", action="store_true", help="skip the PNG screenshot of the figure"
    )
    return parser


def results_dir(script: str, args: argparse.Namespace) -> Path:
    """Where this run writes: ``--out``, else ``results/`` (``results/quick/`` if quick).
    An ``--out`` that is a file, or a folder holding files and no summary of this
    experiment's, is refused (one line, exit 2): a run never writes over what it did not
    write."""
    if args.out is not None:
        out = Path(args.out)
        name = Path(script).resolve().parent.name
        if out.exists() and not out.is_dir():
            _refuse(f"--out {out}: a file is there; give a folder (new or empty)")
        blocked = next((p for p in out.parents if p.exists() and not p.is_dir()), None)
        if blocked is not None:
            _refuse(f"--out {out}: {blocked} is a file, not a folder")
        if out.is_dir() and any(out.iterdir()) and _experiment_of(out) != name:
            _refuse(
                f"--out {out}: the folder holds files {name} did not write; give a new or "
                "empty folder"
            )
    else:
        out = Path(script).resolve().parent / "results"
        if args.quick:
            out = out / "quick"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _refuse(message: str) -> None:
    """Bad input: one line on stderr, exit 2, nothing written."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def _experiment_of(folder: Path) -> str | None:
    """The experiment whose summary ``folder`` holds (None: none, or not one of ours)."""
    try:
        return str(json.loads((folder / "summary.json").read_text())["experiment"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


class Clock:
    """CPU seconds (this process and its finished children) and wall seconds."""

    def __init__(self) -> None:
        self.wall0 = time.perf_counter()
        self.cpu0 = self._cpu()

    @staticmethod
    def _cpu() -> float:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

    def cpu_s(self) -> float:
        return self._cpu() - self.cpu0

    def wall_s(self) -> float:
        return time.perf_counter() - self.wall0

    def report(self) -> dict[str, Any]:
        return {
            "cpu_s": round(self.cpu_s(), 1),
            "wall_s": round(self.wall_s(), 1),
            "cores": os.cpu_count(),
            "python": platform.python_version(),
        }


def start(
    script: str, parser: argparse.ArgumentParser
) -> tuple[argparse.Namespace, Path, Clock, dict[str, Any]]:
    """What every ``main`` begins with: the parsed options, the output folder (made), a
    started clock and the experiment's ``config.yaml`` (beside ``script``)."""
    args = parser.parse_args()
    out = results_dir(script, args)
    clock = Clock()
    return args, out, clock, read_yaml(Path(script).resolve().parent / "config.yaml")


def fmt(value: Any, digits: int = 3) -> str:
    """A number for a table: ``digits`` significant digits, thousands kept whole."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value == 0:
        return "0"
    if isinstance(value, int) or abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.0f}"
    return f"{value:.{digits}g}"


def write_table(
    out: Path,
    headers: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    title: str | None = None,
    notes: Sequence[str] = (),
    stem: str = "table",
    digits: int = 3,
) -> None:
    """``stem.md`` (formatted) and ``stem.csv`` (raw values) with the same rows."""
    rows = [list(r) for r in rows]
    with open(out / f"{stem}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(headers)
        for r in rows:
            writer.writerow(["" if v is None else v for v in r])
    lines = [f"# {title}", ""] if title else []
    lines.append("| " + " | ".join(headers) + " |")
    lines.append("| " + " | ".join("---" for _ in headers) + " |")
    for r in rows:
        lines.append("| " + " | ".join(fmt(v, digits) for v in r) + " |")
    if notes:
        lines.append("")
        lines.extend(notes)
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    (out / "summary.json").write_text(json.dumps(_clean(summary), indent=1) + "\n")


def write_figure(fig: Any, out: Path, *, png: bool = True, stem: str = "figure") -> Path | None:
    """``stem.html`` (self-contained) and, unless ``png`` is False, ``stem.png``: a
    screenshot of the HTML in headless Chromium (Playwright; plotly's own static export
    needs kaleido). Returns the PNG's path, or None when no browser was found."""
    html = out / f"{stem}.html"
    fig.write_html(html, include_plotlyjs=True, full_html=True)
    if not png:
        return None
    browser = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if browser is None:
        print(f"no chromium: {stem}.png not written", file=sys.stderr)
        return None
    from playwright.sync_api import sync_playwright

    width = int(fig.layout.width or 1000)
    height = int(fig.layout.height or 600)
    target = out / f"{stem}.png"
    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=browser, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = b.new_page(viewport={"width": width + 40, "height": height + 40})
            page.goto(html.resolve().as_uri())
            page.wait_for_selector(".main-svg", timeout=60_000)
            page.wait_for_timeout(300)
            page.locator(".plotly-graph-div").first.screenshot(path=str(target))
        finally:
            b.close()
    return target


#: The colour of a published number in every experiment's figure.
PUBLISHED_COLOR = "#e45756"


def published_line(fig: Any, y: float, label: str, row: int, col: int) -> None:
    """A published number as a dashed line across a panel of ``fig``."""
    fig.add_hline(
        y=y, line_dash="dash", line_color=PUBLISHED_COLOR, annotation_text=label, row=row, col=col
    )


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b
