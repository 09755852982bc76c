"""Chiplet count against chiplet size at a fixed total MAC count (issue 22).

Runs the built-in space ``package-fixed-macs`` (Simba's 36,864 MACs cut into 1 to 144
chiplets, the link and the PE buffers searched too, ResNet-50) for ``--trials`` designs with
its sampler (NSGA-II) on one worker, and, with ``--exhaustive``, every one of its 84
designs (the grid sampler) for the true front to compare with. Records per run the wall and
CPU seconds, and the Pareto front (energy, latency, area) with each design's chiplet count
and MACs per chiplet, utilization, DRAM and chip-to-chip traffic; and per chiplet count,
the best energy, latency and area any feasible design of that count reached. Writes
``benchmarks/results/package_trade.json`` and ``package_trade.html``: energy and latency
against the chiplet count, every design the search evaluated faded and its front coloured
by link (``--png``: and a PNG of it, drawn by Debian's chromium through Playwright, with
magnet's vendored plotly.js).

    python benchmarks/package_trade.py                       # 40 trials, seed 0
    python benchmarks/package_trade.py --trials 40 --exhaustive --png
    python benchmarks/package_trade.py --trials 4 --out /tmp/trade.json   # elsewhere
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import common
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from magnet.report.theme import metric_title
from magnet.search import search
from magnet.search.study import Study, TrialView

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
SPACE = "package-fixed-macs"
PLOTLY_JS = REPO / "magnet" / "report" / "assets" / "vendor" / "plotly-strict.min.js"
CHROMIUM = "/usr/bin/chromium"
LINK_COLORS = {"grs": "#d62728", "ucie-standard": "#1f77b4", "ucie-advanced": "#2ca02c"}
#: Front markers are drawn this factor off their chiplet count, by link, so that designs
#: equal but for the link (one chiplet: no link is used) are all seen.
LINK_OFFSET = {"grs": 0.92, "ucie-standard": 1.0, "ucie-advanced": 1.08}


def design_row(study: Study, trial: TrialView) -> dict[str, Any]:
    """A trial as the record lists it: its group, chiplets, MACs and objectives."""
    p = study.space.design(trial.params)
    chiplet_macs = p["pe_rows"] * p["pe_cols"] * p["vector_units"] * p["vector_width"]
    return {
        "trial": trial.number,
        "split": trial.params["split"],
        "chiplets": p["chiplets_x"] * p["chiplets_y"],
        "chiplet_macs": chiplet_macs,
        "total_macs": p["chiplets_x"] * p["chiplets_y"] * chiplet_macs,
        "link": p["link"],
        "weight_buffer_bytes": p["weight_buffer"],
        "input_buffer_bytes": p["input_buffer"],
        "global_buffer_bytes": p["global_buffer"],
        **{m: trial.values[m] for m in study.objectives},
        "utilization": trial.metrics["utilization"],
        "dram_bytes": trial.metrics["dram_bytes"],
        "nop_bytes": trial.metrics["nop_bytes"],
        "dram_bytes_per_cycle": trial.records[0].dram_bytes_per_cycle,
    }


def best_by_chiplets(study: Study) -> list[dict[str, Any]]:
    """Per chiplet count: the feasible designs, the lowest energy, latency and area."""
    rows = [design_row(study, t) for t in study.feasible()]
    out = []
    for count in sorted({r["chiplets"] for r in rows}):
        same = [r for r in rows if r["chiplets"] == count]
        out.append(
            {
                "chiplets": count,
                "designs": len(same),
                "best_energy_pj": min(r["energy_pj"] for r in same),
                "best_latency_cycles": min(r["latency_cycles"] for r in same),
                "best_area_mm2": min(r["area_mm2"] for r in same),
            }
        )
    return out


def run(trials: int, sampler: str | None, seed: int, storage: str) -> tuple[Study, dict[str, Any]]:
    """One search of the space in this process, timed."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    study = search(SPACE, n_trials=trials, sampler=sampler, seed=seed, storage=storage)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu_s = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    front = sorted((design_row(study, t) for t in study.pareto_front()), key=_by_count)
    return study, {
        "sampler": sampler or study.space.sampler,
        "trials": trials,
        "seed": seed,
        "counts": study.counts(),
        "wall_s": round(wall_s, 1),
        "cpu_s": round(cpu_s, 1),
        "front": front,
        "best_by_chiplets": best_by_chiplets(study),
    }


def figure(study: Study, front: list[dict[str, Any]]) -> go.Figure:
    """Energy and latency against the chiplet count (log axis, 1 to 144): every design the
    search evaluated in grey, the front's designs coloured by link (a little off their count,
    by link: ``LINK_OFFSET``)."""
    rows = [design_row(study, t) for t in study.feasible()]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1)
    for col, metric in enumerate(("energy_pj", "latency_cycles"), start=1):
        fig.add_trace(_points(rows, metric, "evaluated", "#bbbbbb", col == 1), row=1, col=col)
        for link, color in LINK_COLORS.items():
            on = [r for r in front if r["link"] == link]
            trace = _points(on, metric, f"front, {link}", color, col == 1, LINK_OFFSET[link])
            fig.add_trace(trace, row=1, col=col)
        counts = sorted({r["chiplets"] for r in rows})
        fig.update_xaxes(title="chiplets (36,864 MACs in all)", type="log", row=1, col=col)
        fig.update_xaxes(tickvals=counts, ticktext=[str(c) for c in counts], row=1, col=col)
        fig.update_yaxes(title=metric_title(metric), row=1, col=col)
    title = f"{SPACE} on ResNet-50: {len(rows)} designs, {len(front)} on the front"
    fig.update_layout(title=title, width=1100, height=450, template="plotly_white")
    return fig


def _points(
    rows: list[dict[str, Any]], metric: str, name: str, color: str, legend: bool, at: float = 1.0
) -> Any:
    return go.Scatter(
        x=[r["chiplets"] * at for r in rows],
        y=[r[metric] for r in rows],
        text=[f"#{r['trial']} {r['split']} {r['link']}" for r in rows],
        mode="markers",
        name=name,
        legendgroup=name,
        showlegend=legend,
        marker={"color": color, "size": 9 if name != "evaluated" else 7},
    )


def write_png(fig: go.Figure, path: Path) -> None:
    """``fig`` as a PNG, drawn by chromium (plotly.js from magnet's own copy, offline)."""
    from playwright.sync_api import sync_playwright

    html = fig.to_html(include_plotlyjs=False, full_html=False)
    page_html = f"<html><body><script>{PLOTLY_JS.read_text()}</script>{html}</body></html>"
    with tempfile.TemporaryDirectory() as tmp:
        page_file = Path(tmp) / "figure.html"
        page_file.write_text(page_html)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1120, "height": 470})
            page.goto(page_file.as_uri())
            page.wait_for_selector(".main-svg")
            page.screenshot(path=str(path))
            browser.close()


def _design(row: dict[str, Any]) -> tuple[Any, ...]:
    """What tells designs of the space apart (the searched parameters)."""
    return row["split"], row["link"], row["weight_buffer_bytes"], row["input_buffer_bytes"]


def _by_count(row: dict[str, Any]) -> tuple[int, float]:
    return row["chiplets"], row["energy_pj"]


def main() -> None:
    """Run the search (and the exhaustive one if asked); write the record and the figure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=common.count, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exhaustive", action="store_true", help="and all 84 designs")
    parser.add_argument("--png", action="store_true", help="and package_trade.png")
    parser.add_argument(
        "--out", type=common.out_file, default=RESULTS / "package_trade.json", help="the record"
    )
    args = parser.parse_args()
    figures = [args.out.with_suffix(".html"), *([args.out.with_suffix(".png")] if args.png else [])]
    if not args.out.exists():  # a new record: its figures' names must be free too
        for taken in (f for f in figures if f.exists()):
            parser.error(f"argument --out: {taken} exists and is not this benchmark's figure")
    with tempfile.TemporaryDirectory() as tmp:
        storage = str(Path(tmp) / "trade.journal")
        study, searched = run(args.trials, None, args.seed, storage)
        record: dict[str, Any] = {"space": SPACE, "workload": "resnet50", "search": searched}
        fig = figure(study, searched["front"])
        if args.exhaustive:
            grid_storage = str(Path(tmp) / "grid.journal")
            _, record["exhaustive"] = run(84, "grid", args.seed, grid_storage)
            true_front = {_design(r) for r in record["exhaustive"]["front"]}
            found = [r for r in searched["front"] if _design(r) in true_front]
            record["search_front_on_the_true_front"] = f"{len(found)} of {len(true_front)}"
    # the record, and its figures beside it under its name
    common.write_record(args.out, record)
    fig.write_html(figures[0], include_plotlyjs=True)  # offline; not committed
    if args.png:
        write_png(fig, figures[1])


if __name__ == "__main__":
    common.interruptible(main)
