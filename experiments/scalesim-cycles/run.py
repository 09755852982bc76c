"""SCALE-Sim's cycles against the systolic template, layer by layer.

Every layer of ``tests/data/reference/scalesim/scalesim_128x128.csv`` (and the 21 runs of
``scalesim_extra_runs.csv``) is mapped by magnet's mapper under SCALE-Sim's dataflow (os,
ws, is) at objective latency on the same array and SRAMs; the table puts magnet's cycles,
utilisation and SRAM traffic beside SCALE-Sim's ``Total Cycles``, ``Overall Util %`` and SRAM
read / write counts.

    python experiments/scalesim-cycles/run.py [--quick]
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.workload.layer import Layer  # noqa: E402

SCALESIM = common.REFERENCE / "scalesim"
FLOWS = ("os", "ws", "is")
# magnet level and operand -> SCALE-Sim column
TRAFFIC = {
    "ifmap_reads": (("IfmapSRAM", "inputs", "reads"), "SRAM IFMAP Reads"),
    "filter_reads": (("FilterSRAM", "weights", "reads"), "SRAM Filter Reads"),
    "ofmap_writes": (("OfmapSRAM", "outputs", "updates"), "SRAM OFMAP Writes"),
}


def conv(name: str, k: int, c: int, p: int, q: int, r: int, s: int, stride: int) -> Layer:
    return Layer(name=name, K=k, C=c, P=p, Q=q, R=r, S=s, wstride=stride, hstride=stride)


def make_case(which: str, layer: Layer, row: dict[str, str]) -> dict[str, Any]:
    """One SCALE-Sim run to compare: the layer, the array, the dataflow, SCALE-Sim's row."""
    return {
        "set": which,
        "case": layer.name,
        "array": row["array"],
        "dataflow": row["dataflow"],
        "layer": layer,
        "ref": row,
    }


def cases(cfg: dict[str, Any], quick: bool) -> list[dict[str, Any]]:
    """Every SCALE-Sim run to compare."""
    layers = cfg["layers"]
    keep = set(cfg["quick"]["layers"]) if quick else set(layers)
    out = []
    with open(SCALESIM / "scalesim_128x128.csv") as f:
        for row in csv.DictReader(f):
            if row["layer"] not in keep:
                continue
            k, c, p, r, s = layers[row["layer"]]
            out.append(make_case("128x128", conv(row["layer"], k, c, p, p, r, r, s), row))
    if cfg["extra"] and (not quick or cfg["quick"]["extra"]):
        with open(SCALESIM / "scalesim_extra_runs.csv") as f:
            for row in csv.DictReader(f):
                dims = (row[k] for k in ("K", "C", "P_scalesim", "Q_scalesim", "R", "S", "stride"))
                out.append(make_case("extra", conv(row["case"], *map(int, dims)), row))
    return out


def run_case(case: dict[str, Any], arch: mg.Arch, objective: str) -> dict[str, Any]:
    outcome = mg.map_layer(case["layer"], arch, case["dataflow"], objective=objective)
    ref = case["ref"]
    got: dict[str, Any] = {
        "set": case["set"],
        "case": case["case"],
        "array": case["array"],
        "dataflow": case["dataflow"],
        "macs": case["layer"].macs,
        "status": outcome.status,
        "scalesim_cycles": int(float(ref["Total Cycles"])),
        "map_seconds": outcome.seconds,
    }
    if outcome.result is None:
        got["reason"] = outcome.reason
        return got
    r = outcome.result
    got["magnet_cycles"] = int(r.latency_cycles)
    got["cycles_ratio"] = r.latency_cycles / got["scalesim_cycles"]
    got["magnet_util"] = r.utilization
    if "Overall Util %" in ref:
        got["scalesim_util"] = float(ref["Overall Util %"]) / 100
    for key, ((level, operand, action), column) in TRAFFIC.items():
        ours = r.accesses[level][operand][action]
        theirs = float(ref[column])
        got[f"magnet_{key}"] = ours
        got[f"scalesim_{key}"] = theirs
        got[f"{key}_ratio"] = common.ratio(ours, theirs)
    return got


def figure(rows: list[dict[str, Any]]) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.62, 0.38],
        subplot_titles=(
            "Cycles: magnet against SCALE-Sim 3.0's Total Cycles",
            "SRAM traffic: magnet / SCALE-Sim",
        ),
    )
    colors = {"os": "#4c78a8", "ws": "#f58518", "is": "#54a24b"}
    mapped = [r for r in rows if "magnet_cycles" in r]
    span = [min(r["scalesim_cycles"] for r in mapped), max(r["scalesim_cycles"] for r in mapped)]
    fig.add_trace(
        go.Scatter(
            x=span,
            y=span,
            mode="lines",
            line={"color": "#333333", "dash": "dot"},
            name="equal",
        ),
        row=1,
        col=1,
    )
    for flow in FLOWS:
        sel = [r for r in mapped if r["dataflow"] == flow]
        fig.add_trace(
            go.Scatter(
                x=[r["scalesim_cycles"] for r in sel],
                y=[r["magnet_cycles"] for r in sel],
                mode="markers",
                name=f"{flow} cycles",
                marker={"color": colors[flow], "size": 9},
                hovertext=[
                    f"{r['case']} ({r['array']}): magnet {r['magnet_cycles']:,} / "
                    f"SCALE-Sim {r['scalesim_cycles']:,}"
                    for r in sel
                ],
            ),
            row=1,
            col=1,
        )
    symbols = {"ifmap_reads": "circle", "filter_reads": "square", "ofmap_writes": "diamond"}
    for key, symbol in symbols.items():
        for flow in FLOWS:
            sel = [r for r in rows if r["dataflow"] == flow and r.get(f"{key}_ratio")]
            fig.add_trace(
                go.Box(
                    y=[r[f"{key}_ratio"] for r in sel],
                    x=[key.replace("_", " ")] * len(sel),
                    name=f"{flow} {key.replace('_', ' ')}",
                    marker={"color": colors[flow], "symbol": symbol},
                    boxpoints="all",
                    jitter=0.4,
                    legendgroup=flow,
                    showlegend=False,
                    offsetgroup=flow,
                ),
                row=1,
                col=2,
            )
    fig.add_hline(y=1.0, line_dash="dot", line_color="#333333", row=1, col=2)
    fig.update_xaxes(title_text="SCALE-Sim Total Cycles", type="log", row=1, col=1)
    fig.update_yaxes(title_text="magnet cycles", type="log", row=1, col=1)
    fig.update_yaxes(title_text="magnet / SCALE-Sim", row=1, col=2)
    fig.update_layout(width=1500, height=700, template="plotly_white", boxmode="group")
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    archs: dict[str, mg.Arch] = {"128x128": mg.load_arch(cfg["arch"])}
    rows = []
    for case in cases(cfg, args.quick):
        if case["array"] not in archs:
            r, c = (int(x) for x in case["array"].split("x"))
            # SCALE-Sim's runs: a stall-free DRAM interface
            archs[case["array"]] = mg.templates.systolic(
                rows=r, cols=c, dram_bandwidth="stall-free"
            )
        rows.append(run_case(case, archs[case["array"]], cfg["objective"]))
    headers = [
        "set",
        "layer",
        "array",
        "dataflow",
        "SCALE-Sim cycles",
        "magnet cycles",
        "ratio",
        "SCALE-Sim util",
        "magnet util",
        "ifmap reads ratio",
        "filter reads ratio",
        "ofmap writes ratio",
    ]
    table = [
        [
            r["set"],
            r["case"],
            r["array"],
            r["dataflow"],
            r["scalesim_cycles"],
            r.get("magnet_cycles"),
            r.get("cycles_ratio"),
            r.get("scalesim_util"),
            r.get("magnet_util"),
            r.get("ifmap_reads_ratio"),
            r.get("filter_reads_ratio"),
            r.get("ofmap_writes_ratio"),
        ]
        for r in rows
    ]
    mapped = [r for r in rows if "magnet_cycles" in r]
    exact = sum(r["magnet_cycles"] == r["scalesim_cycles"] for r in mapped)
    traffic = {
        key: [
            min(r[f"{key}_ratio"] for r in mapped if r.get(f"{key}_ratio")),
            max(r[f"{key}_ratio"] for r in mapped if r.get(f"{key}_ratio")),
        ]
        for key in TRAFFIC
    }
    notes = [
        f"{exact} of {len(rows)} runs: magnet's cycles equal SCALE-Sim's Total Cycles exactly.",
        "Cycles: SCALE-Sim's fill and drain per fold (rows + cols - 2 for os, 2 rows + cols - 2 "
        "for ws / is, less one cycle), which the systolic template adds to the mapping's "
        "temporal iterations. Traffic ratios: magnet's SRAM reads / updates of the operand "
        "over SCALE-Sim's counts (not compared by the tests; see experiments/README.md).",
    ]
    common.write_table(
        out, headers, table, title="SCALE-Sim 3.0 against magnet's systolic template", notes=notes
    )
    common.write_figure(figure(rows), out, png=not args.no_png)
    summary = {
        "experiment": "scalesim-cycles",
        "quick": args.quick,
        "reference": "SCALE-Sim 3.0.0 (tests/data/reference/scalesim)",
        "runs": len(rows),
        "mapped": len(mapped),
        "cycles_exact": exact,
        "cycles_ratio_range": [
            min(r["cycles_ratio"] for r in mapped),
            max(r["cycles_ratio"] for r in mapped),
        ],
        "traffic_ratio_range": traffic,
        "rows": [{k: v for k, v in r.items() if k != "map_seconds"} for r in rows],
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(
        f"{exact}/{len(rows)} exact; wrote {out} in {clock.cpu_s():.1f} CPU-s, "
        f"{clock.wall_s():.1f} s"
    )


if __name__ == "__main__":
    main()
