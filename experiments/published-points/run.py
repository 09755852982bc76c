"""magnet against published silicon, each chip at its published operating point.

Every design of ``config.yaml`` gives a clock or a supply (the other follows from the node's
voltage-frequency model), is mapped for energy on its workload, and every row compares one
metric with the published number: the operating point, magnet's number, the ratio, the
tolerance ``tests/test_silicon.py`` holds it to, and why they differ. Nothing is solved for:
a published number never sets a supply or a factor here.

    python experiments/published-points/run.py [--quick]
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.templates import get_template, presets  # noqa: E402

UNITS = {
    "on_chip_tops_per_w": "TOPS/W (on chip)",
    "on_chip_pj_per_op": "pJ/op (on chip)",
    "peak_tops": "peak TOPS",
    "peak_tops_per_mm2": "peak TOPS/mm^2",
    "fps": "frames/s",
    "on_chip_power_mw": "mW (on chip)",
    "pe_array_share": "PE array share of on-chip power",
    "area_mm2": "mm^2",
}


def build(spec: dict[str, Any]) -> mg.Arch:
    """The architecture of a design: a preset or a template, with ``params`` on top."""
    if "preset" in spec:
        template, params = presets()[spec["preset"]]
        return template.build({**params, **spec.get("params", {})}, name=spec["preset"])
    return get_template(spec["template"]).build(spec.get("params", {}))


def workload(spec: dict[str, Any]) -> mg.Network:
    net = mg.load_workload(
        spec["workload"], batch=spec.get("batch"), densities=spec.get("densities")
    )
    if spec.get("layers") == "conv":
        kept = tuple(e for e in net.layers if e.layer.kind == "conv")
        net = mg.Network(name=f"{net.name}-conv", layers=kept)
    return net


def measure_design(spec: dict[str, Any]) -> dict[str, Any]:
    """Every metric a row may ask of one design (mapped for energy)."""
    arch, net = build(spec), workload(spec)
    record = mg.evaluate(net, arch, dataflow=spec["dataflow"], objective="energy").record()
    on_chip_pj = record.energy_pj - record.energy_pj_by_category["dram"]
    ops = 2 * record.macs
    peak_tops = 2 * arch.mac_count * arch.clock_ghz / 1e3
    # the PE array: every level inside the outermost on-chip buffer (whose own energy
    # includes its network to the PEs)
    outer = next(lvl.name for lvl in arch.levels if lvl.component != "dram")
    return {
        "operating_point": f"{arch.clock_ghz:.3g} GHz, {arch.voltage_v:.3g} V",
        "clock_ghz": arch.clock_ghz,
        "voltage_v": arch.voltage_v,
        "on_chip_pj_per_op": on_chip_pj / ops,
        "on_chip_tops_per_w": ops / on_chip_pj,
        "peak_tops": peak_tops,
        "peak_tops_per_mm2": peak_tops / record.area_mm2,
        "fps": net.layers[0].layer.N / record.latency_s,
        "on_chip_power_mw": on_chip_pj * 1e-12 / record.latency_s * 1e3,
        "pe_array_share": 1 - record.energy_pj_by_level[outer] / on_chip_pj,
        "area_mm2": record.area_mm2,
        "utilization": record.utilization,
        "energy_share_on_chip": {
            k: v / on_chip_pj for k, v in record.energy_pj_by_category.items() if k != "dram"
        },
    }


def measure(cfg: dict[str, Any], rows: int | None = None) -> list[dict[str, Any]]:
    """The first ``rows`` rows of ``cfg`` (all by default), each design evaluated once."""

    @cache
    def design(name: str) -> dict[str, Any]:
        return measure_design(cfg["designs"][name])

    out = []
    for row in cfg["rows"][:rows]:
        got = design(row["design"])
        value = got[row["metric"]]
        ratio = value / row["published"]
        low, high = row["tolerance"]
        out.append(
            {
                **row,
                "operating_point": got["operating_point"],
                "magnet": value,
                "ratio": ratio,
                "within_tolerance": low <= ratio <= high,
            }
        )
    return out


def figure(rows: list[dict[str, Any]]) -> go.Figure:
    labels = [f"{r['design']}: {UNITS[r['metric']]}" for r in rows]
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            y=labels,
            x=[r["ratio"] for r in rows],
            mode="markers",
            name="magnet / published",
            marker={
                "size": 12,
                "color": ["#4c78a8" if r["within_tolerance"] else "#e45756" for r in rows],
            },
            error_x={
                "type": "data",
                "symmetric": False,
                "array": [r["tolerance"][1] - r["ratio"] for r in rows],
                "arrayminus": [r["ratio"] - r["tolerance"][0] for r in rows],
                "color": "#999999",
            },
        )
    )
    fig.add_vline(x=1.0, line_dash="dash", line_color="#333333")
    fig.update_xaxes(
        type="log",
        title_text="magnet / published (whiskers: the band tests/test_silicon.py holds)",
        tickvals=[0.1, 0.2, 0.5, 1, 2, 5, 10],
        range=[-1, 1],
    )
    fig.update_layout(
        width=1200, height=120 + 40 * len(rows), template="plotly_white", showlegend=False
    )
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    rows = measure(cfg, cfg["quick"]["rows"] if args.quick else None)
    common.write_table(
        out,
        ["design", "operating point", "metric", "published", "magnet", "ratio", "band", "why"],
        [
            [
                r["design"],
                r["operating_point"],
                UNITS[r["metric"]],
                r["published"],
                r["magnet"],
                r["ratio"],
                f"{r['tolerance'][0]:g}-{r['tolerance'][1]:g}",
                r["why"],
            ]
            for r in rows
        ],
        title="magnet at published operating points",
        notes=[f"- {r['design']}, {UNITS[r['metric']]}: {r['source']}" for r in rows],
    )
    common.write_figure(figure(rows), out, png=not args.no_png)
    common.write_summary(
        out,
        {
            "experiment": "published-points",
            "quick": args.quick,
            "rows": rows,
            "within_tolerance": sum(r["within_tolerance"] for r in rows),
            "time": clock.report(),
        },
    )
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for r in rows:
        print(
            f"{r['design']:<18} {r['metric']:<20} published {r['published']:<7g} "
            f"magnet {r['magnet']:.4g}  ratio {r['ratio']:.3g}"
        )


if __name__ == "__main__":
    main()
