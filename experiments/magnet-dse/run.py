"""The headline design search: MAGNet's design space on ResNet-50 (and BERT-base).

Runs (or resumes) the built-in space ``magnet`` with ``mg.search(..., workers=2)``: NSGA-II
over the vector MAC's width and count, collector depths, the three PE buffers, the PE array,
the global buffer, weight and activation precision and the dataflow, for energy, latency
(cycles) and area, each design's layers mapped by the fast mapper for EDP. A second study
runs the same space on BERT-base. The simba-chip preset is evaluated the same way (the
space's mapper and settings, each dataflow it can run) and placed on the same axes.

Studies live in ``results/magnet-dse.journal`` (gitignored); running again resumes them up
to ``--trials`` / ``--bert-trials`` completed designs.

    python experiments/magnet-dse/run.py [--trials 300] [--bert-trials 100] [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.search import load_space  # noqa: E402
from magnet.search.design_space import WorkloadSpec  # noqa: E402
from magnet.search.job import DesignJob, evaluate_design  # noqa: E402
from magnet.templates import presets  # noqa: E402

OBJECTIVES = ("energy_pj", "latency_cycles", "area_mm2")
PARAMS = (
    "vector_width",
    "vector_units",
    "weight_collector",
    "accum_collector",
    "weight_buffer",
    "input_buffer",
    "accum_buffer",
    "pe_rows",
    "pe_cols",
    "global_buffer",
    "weight_bits",
    "activation_bits",
)
COLORS = {
    "ws": "#4c78a8",
    "os": "#54a24b",
    "ws-local-os": "#f58518",
    "os-local-ws": "#b279a2",
}


def simba_points(space: Any, workload: str, flows: list[str]) -> list[dict[str, Any]]:
    """simba-chip evaluated as a trial of ``space`` is (its mapper, cost model, network)."""
    template, params = presets()["simba-chip"]
    if template.name != space.template:
        raise SystemExit(f"simba-chip is a {template.name} design; the space is {space.template}")
    on_workload = space.model_copy(update={"workloads": [WorkloadSpec(workload=workload)]})
    out = []
    for flow in flows:
        job = DesignJob.of(on_workload, params, flow, number=-1)
        result = evaluate_design(job)
        out.append(
            {
                "dataflow": flow,
                "status": result.status,
                "reason": result.reason,
                "metrics": result.metrics,
                "on_chip_pj": on_chip_pj(result.records[0]) if result.records else None,
                "seconds": result.seconds,
            }
        )
    return out


def on_chip_pj(record: dict[str, Any]) -> float:
    """A network record's energy without DRAM."""
    return record["energy_pj"] - record["energy_pj_by_category"]["dram"]


def dominates(a: dict[str, float], b: dict[str, float]) -> bool:
    return all(a[k] <= b[k] for k in OBJECTIVES) and any(a[k] < b[k] for k in OBJECTIVES)


def design_key(t: Any) -> tuple:
    return tuple(sorted(t.params.items()))


def front_rows(study: Any, trials: list[Any], simba: dict[str, Any]) -> list[dict[str, Any]]:
    """The Pareto-optimal designs among ``trials``, sorted by energy, beside simba-chip."""
    again: dict[tuple, list[int]] = {}
    for t in study.feasible():
        again.setdefault(design_key(t), []).append(t.number)
    ref = simba["metrics"]
    rows = []
    for t in sorted(study.pareto_front(trials), key=lambda t: t.values["energy_pj"]):
        m = t.metrics
        stored = t.stored_records()  # as written (JSON data)
        chip = on_chip_pj(stored[0]) if stored else None
        rows.append(
            {
                "trial": t.number,
                "same_design_trials": [n for n in again[design_key(t)] if n != t.number],
                "dataflow": t.dataflow,
                **{k: t.params.get(k) for k in PARAMS},
                "macs_hw": t.params["vector_width"]
                * t.params["vector_units"]
                * t.params["pe_rows"]
                * t.params["pe_cols"],
                **{k: t.values[k] for k in OBJECTIVES},
                "on_chip_pj": chip,
                "tops_per_w": m.get("tops_per_w"),
                "utilization": m.get("utilization"),
                "energy_vs_simba": t.values["energy_pj"] / ref["energy_pj"],
                "on_chip_vs_simba": None if chip is None else chip / simba["on_chip_pj"],
                "latency_vs_simba": t.values["latency_cycles"] / ref["latency_cycles"],
                "area_vs_simba": t.values["area_mm2"] / ref["area_mm2"],
                "dominates_simba": dominates(t.values, ref),
            }
        )
    return rows


def eight_bit(t: Any) -> bool:
    return t.params["weight_bits"] == 8 and t.params["activation_bits"] == 8


AXES = {
    "energy_pj": ("energy per inference (uJ)", 1e-6),
    "latency_cycles": ("latency (M cycles)", 1e-6),
    "area_mm2": ("area (mm^2)", 1.0),
}
#: the 2-D panels: (x, y, row, col)
PANELS = (
    ("latency_cycles", "energy_pj", 1, 2),
    ("area_mm2", "energy_pj", 2, 1),
    ("area_mm2", "latency_cycles", 2, 2),
)


def figure(
    study: Any,
    fronts: dict[str, list[dict[str, Any]]],
    simba: list[dict],
    title: str,
) -> go.Figure:
    """A 3-D view of the study and its three 2-D projections: every feasible design (grey),
    the Pareto front of all designs (dots) and of the 8-bit ones (open diamonds), coloured
    by dataflow, and simba-chip (red)."""
    fig = make_subplots(
        rows=2,
        cols=2,
        specs=[[{"type": "scene"}, {"type": "xy"}], [{"type": "xy"}, {"type": "xy"}]],
        subplot_titles=(
            "energy / latency / area",
            "energy vs latency",
            "energy vs area",
            "latency vs area",
        ),
        vertical_spacing=0.1,
        horizontal_spacing=0.08,
    )

    def xyz(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
        return {k: [r[k] * scale for r in rows] for k, (_, scale) in AXES.items()}

    def add(rows, name, marker, text=None, legend=True, group=None, mode="markers"):
        v = xyz(rows)
        group = group or name
        fig.add_trace(
            go.Scatter3d(
                x=v["energy_pj"],
                y=v["latency_cycles"],
                z=v["area_mm2"],
                mode=mode,
                marker={**marker, "size": marker.get("size", 6) * 0.7},
                name=name,
                legendgroup=group,
                showlegend=legend,
                hovertext=text,
                hoverinfo="text" if text else None,
            ),
            row=1,
            col=1,
        )
        for x, y, row, col in PANELS:
            fig.add_trace(
                go.Scatter(
                    x=v[x],
                    y=v[y],
                    mode=mode,
                    marker=marker,
                    name=name,
                    legendgroup=group,
                    showlegend=False,
                    hovertext=text,
                    hoverinfo="text" if text else None,
                ),
                row=row,
                col=col,
            )

    front_ids = {r["trial"] for rows in fronts.values() for r in rows}
    rest = [{**t.values, "trial": t.number} for t in study.feasible() if t.number not in front_ids]
    add(rest, "other feasible designs", {"color": "#cccccc", "size": 4})
    symbols = {"all": "circle", "8-bit": "diamond-open"}
    for which, front in fronts.items():
        for flow, color in COLORS.items():
            sel = [r for r in front if r["dataflow"] == flow]
            if not sel:
                continue
            text = [
                f"trial {r['trial']} {flow}: {r['vector_width']}x{r['vector_units']} lanes, "
                f"{r['pe_rows']}x{r['pe_cols']} PEs, W{r['weight_collector']} "
                f"A{r['accum_collector']}, {r['weight_bits']}/{r['activation_bits']}-bit; "
                f"x simba: energy {r['energy_vs_simba']:.2f}, latency "
                f"{r['latency_vs_simba']:.2f}, area {r['area_vs_simba']:.2f}"
                for r in sel
            ]
            marker = {"color": color, "symbol": symbols[which], "size": 8}
            if which == "8-bit":
                marker["line"] = {"width": 2, "color": color}
            add(sel, f"front ({which}): {flow}", marker, text)
    pts = [{**p["metrics"], "dataflow": p["dataflow"]} for p in simba if p["status"] == "ok"]
    add(
        pts,
        "simba-chip (its dataflows)",
        {"color": "#e45756", "symbol": "diamond", "size": 11},
        [f"simba-chip under {p['dataflow']}" for p in pts],
    )
    for key, (label, _) in AXES.items():
        for x, y, row, col in PANELS:
            if key == x:
                fig.update_xaxes(title_text=label, type="log", row=row, col=col)
            if key == y:
                fig.update_yaxes(title_text=label, type="log", row=row, col=col)
    fig.update_scenes(
        xaxis={"title": "energy (uJ)", "type": "log"},
        yaxis={"title": "latency (M cycles)", "type": "log"},
        zaxis={"title": "area (mm^2)", "type": "log"},
        camera={"eye": {"x": 1.5, "y": 1.5, "z": 0.8}},
    )
    fig.update_layout(
        width=1400,
        height=1150,
        template="plotly_white",
        title=f"{title}: Pareto fronts by dataflow (dots: all designs, open diamonds: "
        "8-bit designs only) and simba-chip",
        legend={"orientation": "h", "y": -0.06},
    )
    return fig


def run_study(
    space: Any,
    workload: str,
    trials: int,
    storage: Path,
    workers: int,
    name: str,
    log: Any,
) -> tuple[Any, dict[str, Any]]:
    clock = common.Clock()
    study = mg.search(
        space,
        workload,
        n_trials=trials,
        workers=workers,
        storage=str(storage),
        study=name,
        log=log,
    )
    timing = clock.report()
    # Ray's workers are not this process's children: their CPU time is the trials' own
    # evaluation seconds (one single-threaded design each)
    timing["driver_cpu_s"] = timing.pop("cpu_s")
    timing["evaluation_s_sum"] = round(
        sum(t.seconds or 0.0 for t in study.trials() if t.state == "COMPLETE"), 1
    )
    return study, timing


def write_front(
    out: Path,
    stem: str,
    rows: list[dict[str, Any]],
    simba: list[dict[str, Any]],
    own: dict[str, Any],
    cfg: dict[str, Any],
    key: str,
    counts: dict[str, int],
    what: str,
) -> None:
    headers = [
        "trial",
        "dataflow",
        "vector width x units",
        "PEs",
        "W / A collector",
        "weight / input / accum buffer",
        "global buffer",
        "bits (w/a)",
        "energy (uJ)",
        "latency (M cycles)",
        "area (mm^2)",
        "energy x simba",
        "on-chip energy x simba",
        "latency x simba",
        "area x simba",
        "dominates simba",
    ]
    table = [
        [
            r["trial"],
            r["dataflow"],
            f"{r['vector_width']} x {r['vector_units']}",
            f"{r['pe_rows']} x {r['pe_cols']}",
            f"{r['weight_collector']} / {r['accum_collector']}",
            f"{r['weight_buffer'] // 1024}K / {r['input_buffer'] // 1024}K / "
            f"{r['accum_buffer'] / 1024:g}K",
            f"{r['global_buffer'] // 1024}K",
            f"{r['weight_bits']}/{r['activation_bits']}",
            r["energy_pj"] / 1e6,
            r["latency_cycles"] / 1e6,
            r["area_mm2"],
            r["energy_vs_simba"],
            r["on_chip_vs_simba"],
            r["latency_vs_simba"],
            r["area_vs_simba"],
            "yes" if r["dominates_simba"] else "",
        ]
        for r in rows
    ]
    ref = own["metrics"]
    for p in simba:
        m = p["metrics"]
        table.append(
            [
                "simba-chip",
                p["dataflow"],
                "8 x 8",
                "4 x 4",
                "1 / 0",
                "32K / 8K / 3K",
                "64K",
                "8/8",
                m["energy_pj"] / 1e6 if m else None,
                m["latency_cycles"] / 1e6 if m else None,
                m.get("area_mm2"),
                m["energy_pj"] / ref["energy_pj"] if m else None,
                p["on_chip_pj"] / own["on_chip_pj"] if m else None,
                m["latency_cycles"] / ref["latency_cycles"] if m else None,
                m["area_mm2"] / ref["area_mm2"] if m else None,
                "" if p["status"] == "ok" else "cannot run (no accumulation collector)",
            ]
        )
    common.write_table(
        out,
        headers,
        table,
        title=f"Pareto front of {what}: {cfg['space']} on {key} ({counts['designs']} designs)",
        notes=[
            f"The Pareto-optimal designs (energy, latency, area) among {what} of the study "
            f"({len(rows)} distinct designs; {counts['ok']} feasible; a design NSGA-II "
            "proposes again is answered from the study), sorted by energy, and simba-chip "
            "evaluated the same way (the space's fast mapper for EDP, its cost model and "
            "network). Ratios are to "
            f"simba-chip under its own dataflow ({cfg['simba_own_dataflow']}). Energy per "
            "inference includes DRAM; on-chip energy excludes it. The space's designs run at "
            "1 GHz (0.637 V at 16 nm), simba-chip at its 1.96 GHz (1.0 V): its energy is that "
            "of its own operating point.",
            "4-bit weights or activations change the arithmetic (and the accuracy) and halve "
            "the DRAM traffic; the 8-bit table compares with simba-chip like for like.",
        ],
        stem=stem,
    )


def main() -> None:
    parser = common.arguments(__doc__)
    parser.add_argument("--trials", type=int, default=None, help="ResNet-50 designs")
    parser.add_argument("--bert-trials", type=int, default=None, help="BERT-base designs")
    parser.add_argument("--workers", type=int, default=None)
    args, out, clock, cfg = common.start(__file__, parser)
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    workers = args.workers or cfg["workers"]
    space = load_space(cfg["space"])  # a built-in space, by name
    storage = out / "magnet-dse.journal"
    studies = {}
    # a study's key is its workload's name in the zoo
    for key, trials in (
        ("resnet50", args.trials or cfg["trials"]),
        ("bert-base", args.bert_trials or cfg["bert_trials"]),
    ):
        if not trials:
            continue
        name = f"magnet-{key}"
        print(f"{name}: {trials} designs, {workers} workers", flush=True)
        study, timing = run_study(
            space,
            key,
            trials,
            storage,
            workers,
            name,
            log=lambda line: print(line, flush=True) if cfg["verbose"] else None,
        )
        studies[key] = (study, timing)
        print(
            f"  {study.counts()} in {timing['wall_s']} s wall, "
            f"{timing['evaluation_s_sum']} s of design evaluations",
            flush=True,
        )

    summary: dict[str, Any] = {
        "experiment": "magnet-dse",
        "quick": args.quick,
        "space": cfg["space"],
        "workers": workers,
        "studies": {},
    }
    for key, (study, timing) in studies.items():
        simba = simba_points(space, key, list(cfg["simba_dataflows"]))
        own = next(p for p in simba if p["dataflow"] == cfg["simba_own_dataflow"])
        ok = study.feasible()
        front = front_rows(study, ok, own)
        front8 = front_rows(study, [t for t in ok if eight_bit(t)], own)
        counts = study.counts()
        suffix = "" if key == "resnet50" else f"-{key}"
        for rows, stem, what in (
            (front, f"table{suffix}", "every feasible design"),
            (front8, f"table{suffix}-8bit", "the 8-bit designs (8-bit weights and activations)"),
        ):
            write_front(out, stem, rows, simba, own, cfg, key, counts, what)
        fig = figure(study, {"all": front, "8-bit": front8}, simba, f"{cfg['space']} on {key}")
        common.write_figure(fig, out, png=not args.no_png, stem=f"figure{suffix}")
        ref = own["metrics"]
        # the 8-bit design of least energy that is no slower and no larger than simba-chip
        match = min(
            (
                r
                for r in front8
                if r["latency_cycles"] <= ref["latency_cycles"] and r["area_mm2"] <= ref["area_mm2"]
            ),
            key=lambda r: r["energy_pj"],
            default=None,
        )
        summary["studies"][key] = {
            "study": study.name,
            "counts": counts,
            "time": timing,
            "distinct_designs": len({design_key(t) for t in study.trials()}),
            "front_size": len(front),
            "front_8bit_size": len(front8),
            "hypervolume": study.hypervolume(),
            "simba_chip": simba,
            "front_dominating_simba": [r["trial"] for r in front if r["dominates_simba"]],
            "front_8bit_dominating_simba": [r["trial"] for r in front8 if r["dominates_simba"]],
            "front_energy_vs_simba_range": [
                min(r["energy_vs_simba"] for r in front),
                max(r["energy_vs_simba"] for r in front),
            ]
            if front
            else None,
            "front_8bit_on_chip_vs_simba_range": [
                min(r["on_chip_vs_simba"] for r in front8),
                max(r["on_chip_vs_simba"] for r in front8),
            ]
            if front8
            else None,
            "best_8bit_no_slower_no_larger_than_simba": match,
            "front": front,
            "front_8bit": front8,
            "seconds_per_design": float(
                np.median([t.seconds for t in study.trials() if t.seconds is not None])
            ),
        }
    summary["time"] = clock.report()
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")


if __name__ == "__main__":
    main()
