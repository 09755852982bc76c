"""Eyeriss: row-stationary against WS, OS and no-local-reuse (ISCA 2016), and the chip
(JSSC 2017).

Part 1 (ISCA 2016's framework): AlexNet's CONV layers (batch 16) and FC layers (batch 16,
64, 256) on a 256-PE ``eyeriss`` template at equal storage area: every dataflow starts from
the same storage area (0.5 KB of scratchpads per PE plus a 128 KiB global buffer) and a
scratchpad it bypasses gives its area to the global buffer. Each layer is mapped for energy
under each dataflow and priced with Eyeriss's relative costs (``eyeriss-normalized``).

Part 2 (JSSC 2017, Table V): the ``eyeriss-chip`` preset under ``rs`` with the built-in
65 nm costs at 200 MHz on AlexNet CONV1-5 at batch 4: per-layer latency and power, frames
per second.

    python experiments/eyeriss-dataflows/run.py [--quick]
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
from magnet.arch.spec import Arch  # noqa: E402
from magnet.cost.contract import Component  # noqa: E402
from magnet.cost.models import EyerissNormalized  # noqa: E402
from magnet.units import parse_bytes  # noqa: E402

SPADS = {"ifmap_spad": "IfmapSpad", "weight_spad": "WeightSpad", "psum_spad": "PsumSpad"}
STORAGE = ("GlobalBuffer", *SPADS.values())
LABEL = {"rs": "RS", "ws": "WS", "os": "OS", "nlr.yaml": "NLR"}


def flow_name(spec: str) -> str:
    return LABEL.get(spec, spec).lower()


def load_flow(arch: Arch, spec: str, glb_weights: bool) -> mg.Dataflow:
    """The template's named dataflow (or a YAML file of this folder); with ``glb_weights``
    the global buffer keeps weights too (ISCA 2016's buffer holds every data type)."""
    path = HERE / spec
    flow = mg.templates.dataflow_for(arch, str(path) if path.suffix == ".yaml" else spec)
    if glb_weights and spec != "nlr.yaml":
        extra = mg.Dataflow(
            name="glb-keeps-weights",
            rules=(mg.Rule(level="GlobalBuffer", keep=("weights", "inputs", "outputs")),),
        )
        flow = flow.merged(extra, name=flow.name)
    return flow


def bypassed(flow: mg.Dataflow) -> list[str]:
    """The scratchpads (template parameter names) a dataflow keeps nothing in."""
    out = []
    for param, level in SPADS.items():
        rule = flow.rule(level)
        if rule is not None and rule.keep is not None and not rule.keep:
            out.append(param)
    return out


def storage_area(params: dict[str, Any]) -> float:
    """Global buffer + scratchpads (mm^2, all instances) under the built-in 65 nm table."""
    areas = mg.design(mg.templates.eyeriss(**params)).costs.area_mm2_by_component
    return sum(areas[name] for name in STORAGE)


def equal_area_params(base: dict[str, Any], drop: list[str], words: int) -> dict[str, Any]:
    """``base`` with the bypassed scratchpads cut to ``words`` and the global buffer grown
    to the largest size (64-byte steps) whose storage area does not exceed the baseline's."""
    target = storage_area(base)
    params = {**base, **dict.fromkeys(drop, words)}
    if not drop:
        return params
    step = 64
    lo = parse_bytes(base["global_buffer"]) // step
    hi = lo * 4
    while storage_area({**params, "global_buffer": hi * step}) <= target:
        hi *= 2
    while hi - lo > 1:  # area grows with the size: bisect on 64-byte steps
        mid = (lo + hi) // 2
        if storage_area({**params, "global_buffer": mid * step}) <= target:
            lo = mid
        else:
            hi = mid
    return {**params, "global_buffer": lo * step}


def with_noc(arch: Arch, topology: str, pitch_mm: float) -> Arch:
    """``arch`` with the PE array's NoC (the global buffer's fan-out) of ``topology``
    at ``pitch_mm`` between neighbouring PEs."""
    data = arch.model_dump()
    for level in data["levels"]:
        if level["name"] == "GlobalBuffer":
            level["fanout"].update(topology=topology, pitch_mm=pitch_mm)
    return Arch.model_validate(data)


def floorplan_pitch(arch: Arch) -> float:
    """The PE pitch (mm) magnet's built-in 65 nm floorplan gives ``arch``."""
    costs = mg.design(arch).costs
    return float(costs.pitch_mm[arch.level_index("GlobalBuffer")])


def comparison(cfg: dict[str, Any], quick: bool) -> dict[str, Any]:
    c = cfg["comparison"]
    base = {
        "pe_rows": c["pe_rows"],
        "pe_cols": c["pe_cols"],
        **c["spads"],
        "global_buffer": parse_bytes(c["global_buffer"]),
    }
    base_arch = mg.templates.eyeriss(**base)
    nocs = dict(c["noc"])
    fc_batches = c["fc_batches"]
    if quick:
        nocs = {k: v for k, v in nocs.items() if k in c["quick"]["nocs"]}
        fc_batches = c["quick"]["fc_batches"]
    pitches = {
        name: floorplan_pitch(base_arch) if spec["pitch_mm"] == "floorplan" else spec["pitch_mm"]
        for name, spec in nocs.items()
    }
    unit_pj = EyerissNormalized(technology_nm=base_arch.technology_nm).unit_pj(
        Component("unit", "mac", {})
    )
    # one architecture per dataflow, at equal storage area
    archs: dict[str, dict[str, Any]] = {}
    for spec in c["dataflows"]:
        drop = bypassed(load_flow(base_arch, spec, c["glb_keeps_weights"]))
        params = equal_area_params(base, drop, c["bypassed_spad_words"])
        archs[spec] = {
            "params": params,
            "bypassed": drop,
            "storage_mm2": storage_area(params),
            "global_buffer_kib": params["global_buffer"] / 1024,
        }
    alexnet = {b: mg.load_workload("alexnet", batch=b) for b in {c["conv_batch"], *fc_batches}}
    cases = [
        (e.layer, c["conv_batch"])
        for e in alexnet[c["conv_batch"]].layers
        if e.layer.kind == "conv"
    ]
    cases += [(e.layer, b) for b in fc_batches for e in alexnet[b].layers if e.layer.kind == "fc"]
    rows = []
    for noc_name, pitch in pitches.items():
        designs = {}
        for spec, info in archs.items():
            kind = nocs[noc_name]["kind"]
            arch = with_noc(mg.templates.eyeriss(**info["params"]), kind, pitch)
            flow = load_flow(arch, spec, c["glb_keeps_weights"])
            designs[spec] = mg.design(arch, flow, c["cost_model"])
        for layer, batch in cases:
            found = {}
            for spec, design in designs.items():
                outcome = mg.map_layer(layer, design, objective=c["objective"])
                if outcome.result is None:
                    found[spec] = None
                    continue
                r = outcome.result
                found[spec] = {
                    "energy_pj": r.energy_pj,
                    "units_per_mac": r.energy_pj / layer.macs / unit_pj,
                    "by_category": {
                        k: v / layer.macs / unit_pj for k, v in r.energy_pj_by_category.items()
                    },
                    "by_level": {
                        k: v / layer.macs / unit_pj for k, v in r.energy_pj_by_level.items()
                    },
                    "utilization": r.utilization,
                }
            rs = found["rs"]
            for spec, got in found.items():
                rows.append(
                    {
                        "noc": noc_name,
                        "pitch_mm": pitch,
                        "layer": layer.name,
                        "kind": "CONV" if layer.name.startswith("conv") else "FC",
                        "batch": batch,
                        "dataflow": flow_name(spec),
                        "status": "mapped" if got else "infeasible",
                        **(got or {}),
                        "over_rs": None if not (got and rs) else got["energy_pj"] / rs["energy_pj"],
                    }
                )
    return {
        "archs": {flow_name(k): v for k, v in archs.items()},
        "pitches_mm": pitches,
        "unit_pj": unit_pj,
        "rows": rows,
    }


def chip(cfg: dict[str, Any]) -> dict[str, Any]:
    c = cfg["chip"]
    arch = mg.load_arch(c["arch"])
    net = mg.load_workload("alexnet", batch=c["batch"], densities=c.get("densities"))
    convs = mg.Network(
        name="alexnet-conv", layers=tuple(e for e in net.layers if e.layer.kind == "conv")
    )
    result = mg.evaluate(convs, arch, dataflow=c["dataflow"], objective=c["objective"])
    record = result.record()
    # DRAM words moved (reads, fills and updates of every operand) per MAC
    dram_words = sum(
        sum(sum(a.values()) for a in result.result(e.layer).accesses["DRAM"].values()) * e.repeat
        for e in convs.layers
    )
    seconds_per_cycle = 1e-9 / arch.clock_ghz
    pub = c["published"]
    layers = []
    for row in record.layers:
        ms = row.latency_cycles * seconds_per_cycle * 1e3
        chip_pj = row.energy_pj - row.energy_pj_by_category["dram"]
        layers.append(
            {
                "layer": row.name,
                "latency_ms": ms,
                "published_latency_ms": pub["latency_ms"][row.name],
                "power_mw": chip_pj / (ms * 1e-3) * 1e-9,
                "power_with_dram_mw": row.energy_pj / (ms * 1e-3) * 1e-9,
                "published_power_mw": pub["power_mw"][row.name],
                "utilization": row.utilization,
                "bottleneck": row.bottleneck,
            }
        )
    total_ms = sum(r["latency_ms"] for r in layers)
    on_chip = record.energy_pj - record.energy_pj_by_category["dram"]
    return {
        "fps": c["batch"] / (total_ms * 1e-3),
        "published_fps": pub["fps"],
        "power_mw": on_chip / (total_ms * 1e-3) * 1e-9,
        "power_with_dram_mw": record.energy_pj / (total_ms * 1e-3) * 1e-9,
        "published_power_mw": pub["power_total_mw"],
        "published_latency_ms": sum(pub["latency_ms"].values()),
        "latency_ms": total_ms,
        "area_mm2": record.area_mm2,
        "clock_mhz": arch.clock_ghz * 1e3,
        "dram_accesses_per_mac": dram_words / record.macs,
        "published_dram_accesses_per_mac": pub["dram_accesses_per_mac"],
        "layers": layers,
    }


def chip_row(name: str, r: dict[str, Any]) -> list[Any]:
    """A row of the chip table: a layer of ``chip``'s result, or the whole of it (which has
    no utilisation or bottleneck)."""
    return [
        name,
        r["latency_ms"],
        r["published_latency_ms"],
        r["latency_ms"] / r["published_latency_ms"],
        r["power_mw"],
        r["published_power_mw"],
        r["power_mw"] / r["published_power_mw"],
        r["power_with_dram_mw"],
        r.get("utilization"),
        r.get("bottleneck"),
    ]


def ranges(rows: list[dict[str, Any]], noc: str) -> dict[str, Any]:
    """Per kind (and FC batch): the smallest and largest ratio of each other dataflow to RS,
    and RS's margin over the best other dataflow per layer."""
    out: dict[str, Any] = {}
    keys = sorted({(r["kind"], r["batch"]) for r in rows if r["noc"] == noc})
    for kind, batch in keys:
        sel = [r for r in rows if r["noc"] == noc and (r["kind"], r["batch"]) == (kind, batch)]
        others = sorted({r["dataflow"] for r in sel} - {"rs"})
        per_flow = {}
        for f in others:
            vals = [r["over_rs"] for r in sel if r["dataflow"] == f and r["over_rs"] is not None]
            per_flow[f] = [min(vals), max(vals)] if vals else None
        margins = []
        for layer in sorted({r["layer"] for r in sel}):
            vals = [r["over_rs"] for r in sel if r["layer"] == layer and r["dataflow"] != "rs"]
            vals = [v for v in vals if v is not None]
            if vals:
                margins.append(min(vals))
        out[f"{kind} batch {batch}"] = {
            "other_over_rs": per_flow,
            "rs_margin_over_best_other": [min(margins), max(margins)] if margins else None,
            "rs_best_on_every_layer": all(m > 1 for m in margins),
        }
    return out


def figure(result: dict[str, Any], chip_result: dict[str, Any], primary: str) -> go.Figure:
    mapped = [r for r in result["rows"] if r["status"] == "mapped"]
    rows = [r for r in mapped if r["noc"] == primary]
    flows = ["rs", "ws", "os", "nlr"]
    colors = {
        "math": "#4c78a8",
        "memory": "#f58518",
        "noc": "#54a24b",
        "dram": "#b279a2",
        "static": "#9d755d",
    }
    flow_colors = {"rs": "#4c78a8", "ws": "#f58518", "os": "#54a24b", "nlr": "#e45756"}
    fig = make_subplots(
        rows=3,
        cols=2,
        specs=[[{"colspan": 2}, None], [{"colspan": 2}, None], [{}, {}]],
        subplot_titles=(
            "ISCA 2016 framework, equal storage area: energy per MAC in units of a 16-bit MAC "
            f"(NoC: {primary})",
            "Energy over row-stationary's, per layer (band: published 1.4x-2.5x on CONV)",
            "JSSC 2017 chip, AlexNet CONV at batch 4: latency per layer",
            "JSSC 2017 chip: on-chip power per layer",
        ),
        vertical_spacing=0.09,
        row_heights=[0.4, 0.3, 0.3],
    )
    cases: list[str] = []
    for r in rows:
        key = f"{r['layer']} b{r['batch']}"
        if key not in cases:
            cases.append(key)
    for cat, color in colors.items():
        xs: list[list[str]] = [[], []]
        ys, texts = [], []
        for case in cases:
            for f in flows:
                hit = [
                    r for r in rows if f"{r['layer']} b{r['batch']}" == case and r["dataflow"] == f
                ]
                if not hit:
                    continue
                xs[0].append(case)
                xs[1].append(f.upper())
                ys.append(hit[0]["by_category"].get(cat, 0.0))
                texts.append(
                    f"{case} {f.upper()}: {hit[0]['units_per_mac']:.2f} units/MAC, "
                    f"{hit[0]['over_rs']:.2f}x RS"
                )
        fig.add_trace(
            go.Bar(x=xs, y=ys, name=cat, marker_color=color, hovertext=texts), row=1, col=1
        )
    symbols = {"eyeriss": "circle", "floorplan": "circle-open"}
    for noc in result["pitches_mm"]:
        for f in flows[1:]:
            sel = [r for r in mapped if r["noc"] == noc and r["dataflow"] == f]
            fig.add_trace(
                go.Scatter(
                    x=[f"{r['layer']} b{r['batch']}" for r in sel],
                    y=[r["over_rs"] for r in sel],
                    mode="markers",
                    name=f"{f.upper()} / RS ({noc})",
                    marker={"color": flow_colors[f], "symbol": symbols.get(noc, "x"), "size": 9},
                ),
                row=2,
                col=1,
            )
    fig.add_hrect(
        y0=1.4,
        y1=2.5,
        fillcolor="#dddddd",
        opacity=0.5,
        line_width=0,
        layer="below",
        row=2,
        col=1,
    )
    fig.add_hline(y=1.0, line_dash="dot", line_color="#333333", row=2, col=1)
    names = [r["layer"] for r in chip_result["layers"]]
    for key, label, color, col, dash in (
        ("latency_ms", "chip: magnet latency (ms)", "#4c78a8", 1, "solid"),
        ("published_latency_ms", "chip: JSSC 2017 latency (ms)", "#333333", 1, "dot"),
        ("power_mw", "chip: magnet on-chip power (mW)", "#f58518", 2, "solid"),
        ("published_power_mw", "chip: JSSC 2017 power (mW)", "#333333", 2, "dot"),
    ):
        fig.add_trace(
            go.Scatter(
                x=names,
                y=[r[key] for r in chip_result["layers"]],
                name=label,
                mode="lines+markers",
                line={"color": color, "dash": dash},
            ),
            row=3,
            col=col,
        )
    fig.update_yaxes(title_text="16-bit MACs per MAC", row=1, col=1)
    fig.update_yaxes(title_text="x RS", type="log", row=2, col=1)
    fig.update_yaxes(title_text="ms", rangemode="tozero", row=3, col=1)
    fig.update_yaxes(title_text="mW", rangemode="tozero", row=3, col=2)
    fig.update_layout(width=1400, height=1200, template="plotly_white", barmode="stack")
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    primary = cfg["comparison"]["primary_noc"]
    result = comparison(cfg, args.quick)
    chip_result = chip(cfg)
    summary_ranges = {noc: ranges(result["rows"], noc) for noc in result["pitches_mm"]}

    headers = [
        "accounting",
        "layer",
        "batch",
        "dataflow",
        "global buffer (KiB)",
        "units/MAC",
        "x RS",
        "math",
        "memory",
        "NoC",
        "DRAM",
        "utilization",
    ]
    table = []
    for r in result["rows"]:
        arch = result["archs"][r["dataflow"]]
        cat = r.get("by_category", {})
        table.append(
            [
                r["noc"],
                r["layer"],
                r["batch"],
                r["dataflow"].upper(),
                arch["global_buffer_kib"],
                r.get("units_per_mac"),
                r.get("over_rs"),
                cat.get("math"),
                cat.get("memory"),
                cat.get("noc"),
                cat.get("dram"),
                r.get("utilization"),
            ]
        )
    notes = [
        "Energy per MAC in units of Eyeriss's 16-bit MAC (eyeriss-normalized: RF 1x, array "
        "NoC 2x per 16-bit word-mm, global buffer 6x, DRAM 200x); `x RS` is the dataflow's "
        "energy over row-stationary's on the same layer. Accounting `eyeriss`: Eyeriss's "
        "accounting, 2x per 16-bit word per PE it reaches and per partial sum passed between "
        "PEs; `floorplan`: magnet's multicast / reduction tree at the PE pitch of its 65 nm "
        "floorplan"
        + (
            f" ({result['pitches_mm']['floorplan']:.3f} mm)."
            if "floorplan" in result["pitches_mm"]
            else "."
        ),
        "Published (ISCA 2016): RS 1.4x to 2.5x more energy-efficient than the other "
        "dataflows on the CONV layers, at least 1.3x on the FC layers at batch >= 16.",
    ]
    common.write_table(
        out, headers, table, title="Eyeriss dataflows at equal storage area", notes=notes
    )
    chip_rows = [chip_row(r["layer"], r) for r in chip_result["layers"]]
    chip_rows.append(chip_row("CONV1-5", chip_result))
    common.write_table(
        out,
        [
            "layer",
            "latency (ms)",
            "JSSC 2017 (ms)",
            "ratio",
            "on-chip power (mW)",
            "JSSC 2017 (mW)",
            "ratio",
            "power with DRAM (mW)",
            "utilization",
            "bottleneck",
        ],
        chip_rows,
        title="Eyeriss chip (eyeriss-chip, rs, built-in 65 nm costs, 200 MHz) on AlexNet CONV, "
        "batch 4, against JSSC 2017 Table V",
        notes=[
            f"Frames per second: magnet {chip_result['fps']:.1f}, published "
            f"{chip_result['published_fps']}. DRAM accesses (16-bit words) per MAC: magnet "
            f"{chip_result['dram_accesses_per_mac']:.4f}, published "
            f"{chip_result['published_dram_accesses_per_mac']} (both with the chip's run-length "
            "coded feature maps; magnet's with AlexNet's densities of Sparseloop's Eyeriss "
            "set and the chip's input gating)."
        ],
        stem="chip",
    )
    fig = figure(result, chip_result, primary)
    common.write_figure(fig, out, png=not args.no_png)
    summary = {
        "experiment": "eyeriss-dataflows",
        "quick": args.quick,
        "published": {
            "conv_rs_advantage": [1.4, 2.5],
            "fc_rs_advantage_min": 1.3,
            "source": "Chen, Emer, Sze, ISCA 2016 (tests/data/reference/costs.md)",
        },
        "setup": {
            "pe_array": [cfg["comparison"]["pe_rows"], cfg["comparison"]["pe_cols"]],
            "cost_model": cfg["comparison"]["cost_model"],
            "unit_pj": result["unit_pj"],
            "pitches_mm": result["pitches_mm"],
            "glb_keeps_weights": cfg["comparison"]["glb_keeps_weights"],
            "archs": result["archs"],
        },
        "primary_noc": primary,
        "ranges": summary_ranges,
        "chip": chip_result,
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for noc, r in summary_ranges.items():
        for key, v in r.items():
            print(noc, key, v)
    print(
        f"chip: {chip_result['fps']:.1f} fps (published 34.7), "
        f"{chip_result['power_mw']:.0f} mW on chip (published 278)"
    )


if __name__ == "__main__":
    main()
