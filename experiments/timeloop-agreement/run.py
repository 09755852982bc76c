"""magnet beside Timeloop on every reference case with expected results.

Part 1, the model: each replay's ``timeloop-input.yaml`` (architecture, layer, mapping, ERT)
evaluated by magnet: cycles, utilisation, energy per level and in total against the
replay's ``result.json``, and every per-instance read / fill / update count against
``timeloop-model.stats.txt``.

Part 2, the mapper: for the cases whose reference outputs include Timeloop's mapper
(eyeriss_like, simple_weight_stationary, simple_output_stationary), magnet's mapper searches
the same mapspace (the case's ``architecture_constraints``, the file's ERT) for energy and
for EDP (Timeloop's own metric there); its best is set beside Timeloop's mapper's best
(``ref_output/timeloop-mapper.stats.txt``).

    python experiments/timeloop-agreement/run.py [--quick]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.interop.timeloop import load_constraints  # noqa: E402
from magnet.interop.timeloop_stats import access_counts, summary_stats  # noqa: E402

TL = common.REFERENCE / "timeloop"


def model_case(name: str, replay: str, stats: str) -> dict[str, Any]:
    tl = mg.load_timeloop(TL / replay / "timeloop-input.yaml")
    result = mg.evaluate(tl.layer, tl.design(), tl.mapping)
    ref = json.loads((TL / replay / "result.json").read_text())
    levels = {
        level: {
            "timeloop_pj": ref_pj,
            "magnet_pj": result.energy_pj_by_level.get(level),
            "ratio": common.ratio(result.energy_pj_by_level.get(level), ref_pj),
        }
        for level, ref_pj in ref["energy_pJ_by_level"].items()
    }
    # the total to the file's precision is 0.00 uJ on the small cases: add the levels
    total = sum(ref["energy_pJ_by_level"].values())
    counts = access_counts(next((TL / stats).glob("timeloop-*.stats.txt")))
    equal = checked = 0
    worst = 0.0
    for level, spaces in counts.items():
        for space, actions in spaces.items():
            for action, expected in actions.items():
                ours = result.accesses[level][space][action]
                checked += 1
                equal += ours == expected
                if expected:
                    worst = max(worst, abs(ours / expected - 1))
    return {
        "case": name,
        "timeloop_cycles": int(ref["summary"]["cycles"]),
        "magnet_cycles": int(result.latency_cycles),
        "timeloop_util": ref["summary"]["utilization_pct"] / 100,
        "magnet_util": result.utilization,
        "timeloop_energy_pj": total,
        "magnet_energy_pj": result.energy_pj,
        "energy_ratio": result.energy_pj / total,
        "levels": levels,
        "level_ratio_range": [
            min(v["ratio"] for v in levels.values() if v["ratio"] is not None),
            max(v["ratio"] for v in levels.values() if v["ratio"] is not None),
        ],
        "counts_equal": equal,
        "counts_total": checked,
        "counts_worst_rel_error": worst,
    }


def mapper_case(name: str, objectives: list[str]) -> list[dict[str, Any]]:
    case = TL / name
    tl = mg.load_timeloop(case / "replay_timeloop_2025-03" / "timeloop-input.yaml")
    flow = load_constraints(case / "ref_output" / "parsed-processed-input.yaml", tl.arch)
    design = tl.design(dataflow=flow)
    ref = summary_stats(case / "ref_output" / "timeloop-mapper.stats.txt")
    given = mg.evaluate(tl.layer, design, tl.mapping)
    rows = []
    for objective in objectives:
        outcome = mg.map_layer(tl.layer, design, objective=objective)
        r = outcome.result
        rows.append(
            {
                "case": name,
                "objective": objective,
                "status": outcome.status,
                "timeloop_energy_pj": ref["energy_pj"],
                "timeloop_cycles": int(ref["cycles"]),
                "timeloop_util": ref["utilization"],
                "timeloop_edp": ref["energy_pj"] * ref["cycles"],
                "timeloop_energy_pj_by_level": ref["energy_pj_by_level"],
                "replayed_mapping_energy_pj": given.energy_pj,
                "magnet_energy_pj": r.energy_pj,
                "magnet_cycles": int(r.latency_cycles),
                "magnet_util": r.utilization,
                "magnet_edp": r.energy_pj * r.latency_cycles,
                "magnet_energy_pj_by_level": r.energy_pj_by_level,
                "energy_ratio": r.energy_pj / ref["energy_pj"],
                "cycles_ratio": r.latency_cycles / ref["cycles"],
                "edp_ratio": r.energy_pj * r.latency_cycles / (ref["energy_pj"] * ref["cycles"]),
                "mappings_evaluated": outcome.mappings_evaluated,
                "mapspace_size": outcome.mapspace_size,
                "valid_mappings": outcome.valid_mappings,
                "mapper_seconds": outcome.seconds,
                "mapping": r.mapping.to_data()["mapping"],
            }
        )
    return rows


def figure(models: list[dict[str, Any]], mappers: list[dict[str, Any]]) -> go.Figure:
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.55, 0.45],
        subplot_titles=(
            "Model: magnet / Timeloop, energy of every level (dots) and cycles (x)",
            "Mapper: magnet's best / Timeloop mapper's best",
        ),
    )
    for m in models:
        names = list(m["levels"])
        fig.add_trace(
            go.Scatter(
                x=[m["case"]] * len(names),
                y=[m["levels"][n]["ratio"] for n in names],
                mode="markers",
                name=m["case"],
                text=names,
                hovertemplate="%{text}: %{y:.4f}<extra></extra>",
                marker={"size": 9},
                showlegend=False,
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Scatter(
            x=[m["case"] for m in models],
            y=[m["magnet_cycles"] / m["timeloop_cycles"] for m in models],
            mode="markers",
            name="cycles",
            marker={"symbol": "x", "size": 12, "color": "#333333"},
        ),
        row=1,
        col=1,
    )
    colors = {"energy": "#4c78a8", "edp": "#f58518"}
    for objective in sorted({r["objective"] for r in mappers}):
        sel = [r for r in mappers if r["objective"] == objective]
        for metric, symbol in (("energy", "circle"), ("cycles", "square"), ("edp", "diamond")):
            fig.add_trace(
                go.Scatter(
                    x=[r["case"] for r in sel],
                    y=[r[f"{metric}_ratio"] for r in sel],
                    mode="markers",
                    name=f"objective {objective}: {metric}",
                    marker={"color": colors.get(objective, "#888"), "symbol": symbol, "size": 11},
                ),
                row=1,
                col=2,
            )
    fig.add_hline(y=1.0, line_dash="dot", line_color="#333333")
    fig.update_yaxes(title_text="magnet / Timeloop", range=[0.98, 1.02], row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(width=1400, height=650, template="plotly_white")
    return fig


def main() -> None:
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    models = [model_case(name, c["replay"], c["stats"]) for name, c in cfg["cases"].items()]
    mappers = [
        row for name in cfg["mapper_cases"] for row in mapper_case(name, cfg["mapper_objectives"])
    ]

    common.write_table(
        out,
        [
            "case",
            "Timeloop cycles",
            "magnet cycles",
            "Timeloop util",
            "magnet util",
            "Timeloop energy (pJ)",
            "magnet energy (pJ)",
            "ratio",
            "per-level ratio min",
            "per-level ratio max",
            "access counts equal",
        ],
        [
            [
                m["case"],
                m["timeloop_cycles"],
                m["magnet_cycles"],
                m["timeloop_util"],
                m["magnet_util"],
                m["timeloop_energy_pj"],
                m["magnet_energy_pj"],
                m["energy_ratio"],
                m["level_ratio_range"][0],
                m["level_ratio_range"][1],
                f"{m['counts_equal']}/{m['counts_total']}",
            ]
            for m in models
        ],
        title="Timeloop's model against magnet on the reference cases",
        notes=[
            "Timeloop: the replay with NVlabs/timeloop 4cf6d4c (result.json); access counts: "
            "every per-instance scalar read / fill / update of timeloop-model.stats.txt.",
            "",
            "Per level (pJ):",
            "",
            "| case | level | Timeloop | magnet | ratio |",
            "| --- | --- | --- | --- | --- |",
            *(
                f"| {m['case']} | {lvl} | {common.fmt(v['timeloop_pj'], 6)} | "
                f"{common.fmt(v['magnet_pj'], 6)} | {common.fmt(v['ratio'], 5)} |"
                for m in models
                for lvl, v in m["levels"].items()
            ),
        ],
        digits=4,
    )
    common.write_table(
        out,
        [
            "case",
            "magnet objective",
            "Timeloop mapper energy (pJ)",
            "magnet energy (pJ)",
            "energy ratio",
            "Timeloop cycles",
            "magnet cycles",
            "cycles ratio",
            "EDP ratio",
            "magnet mappings evaluated",
            "mapspace size",
            "magnet seconds",
        ],
        [
            [
                r["case"],
                r["objective"],
                r["timeloop_energy_pj"],
                r["magnet_energy_pj"],
                r["energy_ratio"],
                r["timeloop_cycles"],
                r["magnet_cycles"],
                r["cycles_ratio"],
                r["edp_ratio"],
                r["mappings_evaluated"],
                r["mapspace_size"],
                r["mapper_seconds"],
            ]
            for r in mappers
        ],
        title="Timeloop's mapper against magnet's mapper (same constraints, the file's ERT)",
        notes=[
            "Timeloop: ref_output/timeloop-mapper.stats.txt of timeloop-accelergy-exercises "
            "(random search, optimization_metrics [edp], timeout 10000, victory_condition 100, "
            "4 threads). magnet: the fast mapper, one thread."
        ],
        stem="mapper",
        digits=4,
    )
    common.write_figure(figure(models, mappers), out, png=not args.no_png)
    summary = {
        "experiment": "timeloop-agreement",
        "quick": args.quick,
        "reference": "Timeloop + Accelergy (tests/data/reference/timeloop)",
        "model": {
            "cases": len(models),
            "cycles_equal": sum(m["magnet_cycles"] == m["timeloop_cycles"] for m in models),
            "energy_ratio_range": [
                min(m["energy_ratio"] for m in models),
                max(m["energy_ratio"] for m in models),
            ],
            "level_ratio_range": [
                min(m["level_ratio_range"][0] for m in models),
                max(m["level_ratio_range"][1] for m in models),
            ],
            "counts_equal": sum(m["counts_equal"] for m in models),
            "counts_total": sum(m["counts_total"] for m in models),
            "rows": models,
        },
        "mapper": {"rows": mappers},
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for m in models:
        print(
            m["case"],
            m["magnet_cycles"] == m["timeloop_cycles"],
            round(m["energy_ratio"], 5),
            f"{m['counts_equal']}/{m['counts_total']}",
        )
    for r in mappers:
        print(
            r["case"],
            r["objective"],
            "energy x",
            round(r["energy_ratio"], 3),
            "cycles x",
            round(r["cycles_ratio"], 3),
            "edp x",
            round(r["edp_ratio"], 3),
            f"{r['mapper_seconds']:.1f}s",
        )


if __name__ == "__main__":
    main()
