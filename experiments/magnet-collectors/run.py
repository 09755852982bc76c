"""MAGNet's collectors: weight / accumulation collector depths under four dataflows.

A MAGNet-like simba-template design (``MAGNET_LIKE`` of tests/test_silicon.py: 1024 MACs in
2 PEs of 32 16-wide vector MACs) on ResNet-50 (batch 1) with weight and accumulation
collectors of depth 0 to 8 under ws, os, ws-local-os and os-local-ws, each layer mapped for
energy. Per design: on-chip energy per op (energy without DRAM / 2 MACs) against MAGNet's
40 fJ/op, and where the on-chip energy goes (math, each buffer, the collectors, NoC,
static) against the published shape (math ~47 % in Dally's pie of a tuned PE, "almost two
thirds" with MAGNet's hybrid dataflows).

    python experiments/magnet-collectors/run.py [--quick]
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
from magnet.model.postprocess import PostResult  # noqa: E402

BUFFERS = ("GlobalBuffer", "InputBuffer", "WeightBuffer", "AccumulationBuffer")
COLLECTORS = ("WeightCollector", "AccumulationCollector")
SLICES = ("math", *BUFFERS, *COLLECTORS, "postprocess", "noc", "clock", "control", "static")
SLICE_COLORS = {
    "math": "#4c78a8",
    "GlobalBuffer": "#9ecae9",
    "InputBuffer": "#72b7b2",
    "WeightBuffer": "#f58518",
    "AccumulationBuffer": "#ffbf79",
    "WeightCollector": "#e45756",
    "AccumulationCollector": "#ff9d98",
    "postprocess": "#b6e880",
    "noc": "#54a24b",
    "clock": "#b279a2",
    "control": "#eeca3b",
    "static": "#9d755d",
}


def pie(result: mg.NetworkResult) -> dict[str, float]:
    """On-chip energy (pJ) by slice: math, each buffer and collector (its accesses: the
    ``memory`` category, per level), the post-processing unit's operations and buffer, the
    NoC, the clock, control, static."""
    cat = result.energy_pj_by_category
    out = dict.fromkeys(SLICES, 0.0)
    for key in ("math", "postprocess", "noc", "clock", "control", "static"):
        out[key] = cat[key]
    unit = 0.0  # the post-processing unit's buffer: in the memory category
    for r, e in zip(result.runs, result.network.layers, strict=True):
        for li, level in enumerate(r.arch.inner_first):
            if level.name in out:
                work = r.batch.access_energy_pj[li, ..., 0].sum()
                out[level.name] += float(work) * e.repeat
        if isinstance(r, PostResult):
            unit += r.unit_pj["memory"] * e.repeat
    out["postprocess"] += unit
    memory = sum(out[k] for k in (*BUFFERS, *COLLECTORS)) + unit
    if abs(memory - cat["memory"]) > 1e-6 * max(cat["memory"], 1.0):
        raise RuntimeError(f"memory slices {memory} != category memory {cat['memory']}")
    return out


def run(
    cfg: dict[str, Any], net: mg.Network, flow: str, wc: int, ac: int, volt: float | None = None
) -> dict[str, Any]:
    params = {**cfg["base"], "weight_collector": wc, "accum_collector": ac}
    if volt is not None:
        params["voltage_v"] = volt
    arch = mg.templates.simba(name="magnet-like", **params)
    row: dict[str, Any] = {
        "dataflow": flow,
        "weight_collector": wc,
        "accum_collector": ac,
        "voltage_v": arch.voltage_v,
        "clock_ghz": arch.clock_ghz,
    }
    try:
        result = mg.evaluate(net, arch, dataflow=flow, objective=cfg["objective"])
    except mg.DesignInfeasible as exc:
        return {**row, "status": "infeasible", "reason": str(exc)}
    record = result.record()
    slices = pie(result)
    on_chip = sum(slices.values())
    ops = 2 * record.macs
    return {
        **row,
        "status": "ok",
        "pj_per_op_on_chip": on_chip / ops,
        "pj_per_op_with_dram": record.energy_pj / ops,
        "utilization": record.utilization,
        "area_mm2": record.area_mm2,
        "latency_ms": record.latency_s * 1e3,
        "slices_pj": slices,
        "shares": {k: v / on_chip for k, v in slices.items()},
        "math_share": slices["math"] / on_chip,
        "memory_share": sum(slices[k] for k in (*BUFFERS, *COLLECTORS)) / on_chip,
        "collector_share": sum(slices[k] for k in COLLECTORS) / on_chip,
        "noc_share": slices["noc"] / on_chip,
        "clock_share": slices["clock"] / on_chip,
        "control_share": slices["control"] / on_chip,
        "static_share": slices["static"] / on_chip,
    }


def figure(rows: list[dict[str, Any]], cfg: dict[str, Any], best: dict[str, Any]) -> go.Figure:
    flows = cfg["dataflows"]
    wcs, acs = cfg["weight_collector"], cfg["accum_collector"]
    fig = make_subplots(
        rows=2,
        cols=len(flows),
        specs=[[{"type": "heatmap"}] * len(flows), [{"type": "domain"}] * len(flows)],
        subplot_titles=[
            *(f"{f}: on-chip fJ/op, math share" for f in flows),
            *(
                f"best {f}: W{best[f]['weight_collector']} A{best[f]['accum_collector']}, "
                f"{best[f]['pj_per_op_on_chip'] * 1e3:.0f} fJ/op"
                if f in best
                else f"{f}: no feasible design"
                for f in flows
            ),
        ],
        vertical_spacing=0.12,
    )
    nominal = [r for r in rows if r["voltage_v"] == 0.85]
    top = max(r["pj_per_op_on_chip"] for r in nominal if r["status"] == "ok") * 1e3
    low = min(r["pj_per_op_on_chip"] for r in nominal if r["status"] == "ok") * 1e3
    for i, flow in enumerate(flows, start=1):
        z, text = [], []
        for wc in wcs:
            zr, tr = [], []
            for ac in acs:
                hit = next(
                    r
                    for r in nominal
                    if (r["dataflow"], r["weight_collector"], r["accum_collector"])
                    == (flow, wc, ac)
                )
                ok = hit["status"] == "ok"
                zr.append(hit["pj_per_op_on_chip"] * 1e3 if ok else None)
                tr.append(
                    f"{hit['pj_per_op_on_chip'] * 1e3:.0f}<br>{hit['math_share']:.0%}"
                    if ok
                    else "n/a"
                )
            z.append(zr)
            text.append(tr)
        fig.add_trace(
            go.Heatmap(
                z=z,
                x=[str(a) for a in acs],
                y=[str(w) for w in wcs],
                text=text,
                texttemplate="%{text}",
                textfont={"size": 11},
                hovertemplate="weight collector %{y}, accumulation collector %{x}: "
                "%{z:.1f} fJ/op<extra></extra>",
                zmin=low,
                zmax=top,
                colorscale="Viridis",
                showscale=i == len(flows),
                colorbar={"title": "fJ/op", "len": 0.45, "y": 0.78},
            ),
            row=1,
            col=i,
        )
        fig.update_xaxes(title_text="accumulation collector", type="category", row=1, col=i)
        fig.update_yaxes(title_text="weight collector", type="category", row=1, col=i)
        if flow in best:
            shares = best[flow]["slices_pj"]
            fig.add_trace(
                go.Pie(
                    labels=list(shares),
                    values=list(shares.values()),
                    sort=False,
                    marker={"colors": [SLICE_COLORS[k] for k in shares]},
                    textinfo="percent",
                    textposition="inside",
                    insidetextorientation="horizontal",
                    showlegend=i == 1,
                    hole=0.3,
                ),
                row=2,
                col=i,
            )
    fig.update_layout(
        width=1600,
        height=950,
        template="plotly_white",
        title="MAGNet-like design (1024 MACs, 16 nm, 0.85 V) on ResNet-50: collector depths "
        "(top, on-chip fJ/op and math share) and the best design's on-chip energy (bottom)",
        legend={"orientation": "h", "y": -0.05},
    )
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    net = mg.load_workload(cfg["workload"], batch=cfg["batch"])
    rows = []
    for flow in cfg["dataflows"]:
        for wc in cfg["weight_collector"]:
            for ac in cfg["accum_collector"]:
                rows.append(run(cfg, net, flow, wc, ac))
                r = rows[-1]
                print(
                    flow,
                    wc,
                    ac,
                    r["status"],
                    f"{r['pj_per_op_on_chip'] * 1e3:.1f} fJ/op math {r['math_share']:.2f}"
                    if r["status"] == "ok"
                    else "",
                    flush=True,
                )
    ok = [r for r in rows if r["status"] == "ok"]
    best = {}
    for flow in cfg["dataflows"]:
        mine = [r for r in ok if r["dataflow"] == flow]
        if mine:
            best[flow] = min(mine, key=lambda r: r["pj_per_op_on_chip"])
    low_volt = [
        run(cfg, net, flow, b["weight_collector"], b["accum_collector"], v)
        for flow, b in best.items()
        for v in cfg["voltages"]
    ]
    pub = cfg["published"]
    headers = [
        "dataflow",
        "weight collector",
        "accum collector",
        "supply (V)",
        "status",
        "on-chip fJ/op",
        "x MAGNet 40 fJ/op",
        "math",
        "buffers",
        "collectors",
        "NoC",
        "clock",
        "control",
        "static",
        "utilization",
        "area (mm^2)",
    ]
    table = []
    for r in rows + low_volt:
        if r["status"] != "ok":
            table.append(
                [
                    r["dataflow"],
                    r["weight_collector"],
                    r["accum_collector"],
                    r["voltage_v"],
                    "cannot run: " + r["reason"].split(";")[0].split(": ", 1)[-1],
                    *([None] * 11),
                ]
            )
            continue
        table.append(
            [
                r["dataflow"],
                r["weight_collector"],
                r["accum_collector"],
                r["voltage_v"],
                "ok",
                r["pj_per_op_on_chip"] * 1e3,
                r["pj_per_op_on_chip"] / pub["magnet_pj_per_op"],
                r["math_share"],
                r["memory_share"] - r["collector_share"],
                r["collector_share"],
                r["noc_share"],
                r["clock_share"],
                r["control_share"],
                r["static_share"],
                r["utilization"],
                r["area_mm2"],
            ]
        )
    common.write_table(
        out,
        headers,
        table,
        title="Collector depths on a MAGNet-like design, ResNet-50, 16 nm",
        notes=[
            "Shares are of the on-chip energy (DRAM excluded): math (MACs, adder trees), "
            "buffers (global, input, weight, accumulation), collectors (weight, accumulation), "
            "NoC (wires, reductions), clock (registers and tree), control (address "
            "generation), static (leakage power x time). Published: MAGNet "
            "40 fJ/op (ICCAD 2019, operating point not published); Dally's pie of a tuned "
            "collector PE: math ~47 %, memories ~47 %, data movement ~6 %; 'almost two thirds' "
            "into the math with the hybrid dataflows."
        ],
    )
    common.write_figure(figure(rows, cfg, best), out, png=not args.no_png)
    strip = ("slices_pj", "shares")
    summary = {
        "experiment": "magnet-collectors",
        "quick": args.quick,
        "published": pub,
        "base": cfg["base"],
        "best": {
            f: {k: v for k, v in b.items() if k not in ("slices_pj",)} for f, b in best.items()
        },
        "best_overall": min(best.values(), key=lambda r: r["pj_per_op_on_chip"]),
        "best_math_share": max(r["math_share"] for r in ok),
        "infeasible": [
            {k: r[k] for k in ("dataflow", "weight_collector", "accum_collector", "reason")}
            for r in rows
            if r["status"] != "ok"
        ],
        "lower_supply": [{k: v for k, v in r.items() if k not in strip} for r in low_volt],
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for f, b in best.items():
        print(
            f"best {f}: W{b['weight_collector']} A{b['accum_collector']} "
            f"{b['pj_per_op_on_chip'] * 1e3:.1f} fJ/op, math {b['math_share']:.2f}, "
            f"collectors {b['collector_share']:.2f}, NoC {b['noc_share']:.2f}"
        )


if __name__ == "__main__":
    main()
