"""The Simba chiplet (simba-chip preset) on ResNet-50 against the silicon.

ResNet-50 at batch 1 under the chip's own dataflow (os-local-ws), mapped for energy, at
clocks across the chiplet's published range (0.161 to 1.96 GHz). Each design gives only its
clock and runs at the lowest supply magnet's 16 nm voltage-frequency model allows for it:
throughput, utilisation, on-chip energy per op (energy without DRAM / 2 MACs), TOPS/W and
TOPS/mm^2 beside the published 4.01 TOPS peak, the 161 MHz / 0.42 V low point (9.1 TOPS/W),
0.11 pJ/op at the most efficient point and 1.29 TOPS/mm^2.

    python experiments/simba-chip/run.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.templates import presets  # noqa: E402


def chip(name: str, clock_ghz: float) -> mg.Arch:
    """The preset ``name`` at ``clock_ghz`` (its supply: the lowest that meets it)."""
    template, params = presets()[name]
    return template.build({**params, "clock_ghz": clock_ghz}, name=name)


def run(cfg: dict[str, Any], net: mg.Network, clock_ghz: float) -> dict[str, Any]:
    arch = chip(cfg["arch"], clock_ghz)
    record = mg.evaluate(net, arch, dataflow=cfg["dataflow"], objective=cfg["objective"]).record()
    dram = record.energy_pj_by_category["dram"]
    on_chip = record.energy_pj - dram
    ops = 2 * record.macs
    peak = 2 * arch.mac_count * arch.clock_ghz / 1e3
    return {
        "voltage_v": arch.voltage_v,
        "clock_ghz": arch.clock_ghz,
        "peak_tops": peak,
        "tops": record.tops,
        "utilization": record.utilization,
        "latency_ms": record.latency_s * 1e3,
        "images_per_s": 1 / record.latency_s * net.layers[0].layer.N,
        "pj_per_op_on_chip": on_chip / ops,
        "pj_per_op_with_dram": record.energy_pj / ops,
        "tops_per_w_on_chip": ops / on_chip,
        "power_w_on_chip": on_chip * 1e-12 / record.latency_s,
        "area_mm2": record.area_mm2,
        "peak_tops_per_mm2": peak / record.area_mm2,
        "tops_per_mm2": record.tops_per_mm2,
        "by_category_pj_per_op": {k: v / ops for k, v in record.energy_pj_by_category.items()},
        "by_level_pj_per_op": {k: v / ops for k, v in record.energy_pj_by_level.items()},
        "area_mm2_by_component": record.area_mm2_by_component,
    }


def figure(rows: list[dict[str, Any]], pub: dict[str, Any]) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(
            "On-chip energy per op on ResNet-50 (bars) vs the silicon's 0.11 pJ/op",
            "Peak TOPS/mm^2 vs the silicon's 1.29 at 1.96 GHz",
        ),
    )
    labels = [f"{r['clock_ghz']:.3g} GHz, {r['voltage_v']:.3f} V" for r in rows]
    colors = {
        "math": "#4c78a8",
        "memory": "#f58518",
        "noc": "#54a24b",
        "clock": "#72b7b2",
        "control": "#eeca3b",
        "static": "#9d755d",
    }
    for cat, color in colors.items():
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[r["by_category_pj_per_op"].get(cat, 0.0) for r in rows],
                name=cat,
                marker_color=color,
            ),
            row=1,
            col=1,
        )
    common.published_line(fig, pub["pj_per_op"], "Simba silicon 0.11 pJ/op", 1, 1)
    # the right panel's two bars side by side
    for key, name, color, group in (
        ("peak_tops_per_mm2", "magnet peak TOPS/mm^2", "#72b7b2", "a"),
        ("tops_per_mm2", "magnet TOPS/mm^2 on ResNet-50", "#b279a2", "b"),
    ):
        fig.add_trace(
            go.Bar(
                x=labels,
                y=[r[key] for r in rows],
                name=name,
                marker_color=color,
                offsetgroup=group,
            ),
            row=1,
            col=2,
        )
    common.published_line(fig, pub["tops_per_mm2"], "Simba silicon 1.29", 1, 2)
    fig.update_yaxes(title_text="pJ per op (on chip)", row=1, col=1)
    fig.update_yaxes(title_text="TOPS/mm^2", row=1, col=2)
    fig.update_layout(width=1300, height=600, template="plotly_white", barmode="stack")
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    net = mg.load_workload(cfg["workload"], batch=cfg["batch"])
    rows = [run(cfg, net, f) for f in cfg["clocks_ghz"]]
    pub = cfg["published"]
    headers = [
        "clock (GHz)",
        "supply (V)",
        "peak TOPS",
        "TOPS on ResNet-50",
        "utilization",
        "on-chip pJ/op",
        "pJ/op with DRAM",
        "on-chip TOPS/W",
        "area (mm^2)",
        "peak TOPS/mm^2",
        "TOPS/mm^2 on ResNet-50",
        "images/s",
    ]
    table = [
        [
            r["clock_ghz"],
            r["voltage_v"],
            r["peak_tops"],
            r["tops"],
            r["utilization"],
            r["pj_per_op_on_chip"],
            r["pj_per_op_with_dram"],
            r["tops_per_w_on_chip"],
            r["area_mm2"],
            r["peak_tops_per_mm2"],
            r["tops_per_mm2"],
            r["images_per_s"],
        ]
        for r in rows
    ]
    low = pub["low_point"]
    table.append(
        [
            f"silicon, {low['clock_ghz']}",
            low["voltage_v"],
            pub["low_tops"],
            None,
            None,
            1 / low["tops_per_w"],
            None,
            low["tops_per_w"],
            None,
            None,
            None,
            None,
        ]
    )
    table.append(
        [
            "silicon, 1.96",
            None,
            pub["peak_tops"],
            None,
            None,
            None,  # its 0.11 pJ/op (9.5 TOPS/W) is at its most efficient point, not here
            None,
            None,
            f"{pub['peak_tops'] / pub['tops_per_mm2']:.1f} ({pub['die_mm2']} die)",
            pub["tops_per_mm2"],
            None,
            None,
        ]
    )
    notes = [
        "Each row gives only the clock; magnet runs it at the lowest supply its 16 nm "
        "voltage-frequency model allows (fitted through Simba's 161 MHz at 0.42 V and "
        "1.96 GHz at an assumed 1.0 V; scaling.yaml). The silicon's 0.11 pJ/op (9.5 TOPS/W) "
        "is its most efficient point; its 161 MHz / 0.42 V point is 9.1 TOPS/W (a survey's "
        "table); 1.29 TOPS/mm^2 is the peak 4.01 TOPS over 3.1 mm^2.",
    ]
    common.write_table(
        out,
        headers,
        table,
        title="simba-chip on ResNet-50 (batch 1, os-local-ws) against the Simba silicon",
        notes=notes,
    )
    first = rows[0]
    common.write_table(
        out,
        ["component", "area (mm^2)", "share"],
        [
            [k, v, v / first["area_mm2"]]
            for k, v in sorted(first["area_mm2_by_component"].items(), key=lambda kv: -kv[1])
        ],
        title="simba-chip area by component (built-in 16 nm table)",
        stem="area",
    )
    common.write_figure(figure(rows, pub), out, png=not args.no_png)
    summary = {
        "experiment": "simba-chip",
        "quick": args.quick,
        "published": pub,
        "peak": max(rows, key=lambda r: r["clock_ghz"]),
        "low": min(rows, key=lambda r: r["clock_ghz"]),
        "rows": rows,
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for r in rows:
        print(
            f"{r['clock_ghz']:.3g} GHz, {r['voltage_v']:.3f} V: "
            f"{r['pj_per_op_on_chip']:.4f} pJ/op, {r['tops']:.2f} TOPS, "
            f"util {r['utilization']:.3f}, area {r['area_mm2']:.2f}, "
            f"peak TOPS/mm2 {r['peak_tops_per_mm2']:.3f}"
        )


if __name__ == "__main__":
    main()
