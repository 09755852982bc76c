"""Sparseloop's published validation sets and Eyeriss's published zeros, in magnet.

Cases (config.yaml; reference data in tests/data/reference/sparseloop/, copied from the
Sparseloop MICRO 2022 artifact with every source path):

* Fig. 12, the Eyeriss v2 PE on the MobileNet-0.5 layers the artifact has workloads for:
  cycles against the artifact's ground truth, magnet with the workloads' uniform densities
  (as Sparseloop's uniform model) and with each layer's real masks (its measured channel
  densities), beside Sparseloop's own figures.
* The sparse tutorial's dot product (gating and skipping) and sparse matrix product: cycles,
  computes and accesses, derived by hand and in Sparseloop's reference stats.
* Table 7, Eyeriss's DRAM compression on AlexNet conv1-5 (batch 4) on magnet's eyeriss-chip:
  dense over compressed DRAM traffic of the same mapping, beside Sparseloop's ratio and the
  chip's published feature-map savings; and the PE energy its data gating saves (published:
  45 %).

    python experiments/sparseloop-validation/run.py [--quick]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.mapping import to_batch  # noqa: E402
from magnet.model.evaluate import Result, evaluate_batch, layer_view  # noqa: E402
from magnet.model.sparse_counts import fiber_bits, without_each  # noqa: E402
from magnet.workload.dims import Operand  # noqa: E402

ROOT = HERE.parent.parent


def channel_densities(npz: Path) -> tuple[list[float], list[float]]:
    """Each input channel's density of a layer's weights (M, C) and inputs (pixels, C)."""
    masks = np.load(npz)
    out = []
    for name in ("weights", "iacts"):
        bits = np.unpackbits(masks[name])[: int(masks[f"{name}_count"])]
        shape = tuple(int(x) for x in masks[f"{name}_shape"])
        values = bits.reshape(-1, shape[-1])  # C fastest: (everything else, C)
        out.append([float(x) for x in values.mean(axis=0)])
    return out[0], out[1]


def eyeriss_v2(cfg: dict[str, Any], ref: Path) -> list[dict[str, Any]]:
    """Fig. 12: each layer's cycles, uniform and measured, against the ground truth."""
    arch = mg.Arch.model_validate(cfg["eyeriss_v2_pe"])
    data = json.loads((ref / "eyeriss_v2_pe.json").read_text())
    rows = []
    for name, layer in data["layers"].items():
        s = layer["shape"]
        dims = {"K": s["M"], "C": s["C"], "P": s["P"], "Q": s["Q"], "R": s["R"], "S": s["S"]}
        uniform = layer["densities_uniform_yaml"]
        w, i = channel_densities(ref / layer["masks"]["file"])
        runs = {
            "uniform": {"weights": uniform["Weights"], "inputs": uniform["Inputs"]},
            "measured": {"weights": {"channels": w}, "inputs": {"channels": i}},
        }
        row: dict[str, Any] = {"layer": name, "gt_cycles": layer["gt_cycles"]}
        for run, densities in runs.items():
            result = mg.evaluate(
                mg.Layer(name=name, densities=densities, **dims), arch, seed=cfg["seed"]
            )
            row[f"magnet_{run}"] = result.latency_cycles
            row[f"magnet_{run}_error"] = result.latency_cycles / layer["gt_cycles"] - 1
        row["sparseloop_uniform"] = layer["sl_uniform"]["cycles"]
        row["sparseloop_uniform_error"] = layer["sl_uniform"]["cycles"] / layer["gt_cycles"] - 1
        actual = layer.get("sl_actual_data")
        row["sparseloop_measured"] = actual["cycles"] if actual else None
        rows.append(row)
    return rows


def dstc(cfg: dict[str, Any], ref: Path) -> list[dict[str, Any]]:
    """Fig. 13: the dual-side sparse tensor core's cycles, normalised to dense, per point."""
    spec = cfg["dstc"]
    arch = mg.Arch.model_validate(spec["arch"])
    mapping = mg.Mapping.model_validate(spec["mapping"])

    def cycles(a: float, b: float) -> int:
        layer = mg.Layer(**spec["layer"], densities={"inputs": a, "weights": b})
        return mg.evaluate(layer, arch, mapping).latency_cycles

    dense = cycles(1.0, 1.0)
    rows = []
    for point in json.loads((ref / "dstc.json").read_text())["points"]:
        a, b = point["A_density"], point["B_density"]
        magnet = cycles(a, b) / dense
        reference = point["reference_normalised_exact"]
        sparseloop = point["sparseloop_normalised"]
        rows.append(
            {
                "a_density": a,
                "b_density": b,
                "magnet": magnet,
                "reference": reference,
                "sparseloop": sparseloop,
                "magnet_error": magnet / reference - 1,
                "sparseloop_error": None if sparseloop is None else sparseloop / reference - 1,
                "plotted": point["plotted"],
            }
        )
    return rows


def dot_product(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The tutorial's dot product: B (weights) and Z (outputs) gated or skipped on A's
    (inputs') zeros, A compressed when skipping; one Buffer, one MAC."""
    spec = cfg["dot_product"]
    layer = mg.Layer(kind="fc", K=1, C=spec["K"], densities={"inputs": spec["density"]})
    rows = []
    for action, ref in spec["reference"].items():
        own = {"action": action, "condition_on": ["inputs"]}
        inputs = {"format": "cp"} if action == "skipping" else {}
        arch = mg.Arch.model_validate(
            {
                "name": f"dot-{action}",
                "levels": [
                    {"name": "DRAM", "component": "dram"},
                    {
                        "name": "Buffer",
                        "capacity_bits": 512,
                        "sparse": {"weights": own, "outputs": own, **{"inputs": inputs}},
                    },
                ],
                "compute": {"name": "MAC", "zeros": action, "accum_bits": 8},
            }
        )
        mapping = mg.Mapping.model_validate(
            {"levels": [{"target": "DRAM"}, {"target": "Buffer", "temporal": {"C": spec["K"]}}]}
        )
        result = mg.evaluate(layer, arch, mapping)
        buffer = result.accesses["Buffer"]
        made = result.batch.counts.made
        b_reads = buffer["weights"]["reads"] * (1.0 if made is None else float(made[0, 0, 0, 0]))
        z = 1.0 if made is None else float(made[0, 2, 0, 0])
        rows.append(
            {
                "case": action,
                "cycles": result.latency_cycles,
                "computes": result.effectual_macs,
                "b_reads": b_reads,
                "b_not_made": spec["K"] - b_reads,
                "z_reads": buffer["outputs"]["reads"] * z,
                "z_updates": buffer["outputs"]["updates"] * z,
                "reference": ref,
            }
        )
    return rows


def spmspm(cfg: dict[str, Any]) -> dict[str, Any]:
    """The tutorial's 8x8x8 sparse product: computes and cycles with compute skipping."""
    spec = cfg["spmspm"]
    layer = mg.Layer(kind="fc", K=spec["N"], C=spec["K"], P=spec["M"], densities=spec["densities"])
    arch = mg.Arch.model_validate(
        {
            "name": "spmspm",
            "levels": [
                {"name": "DRAM", "component": "dram"},
                {"name": "Buffer", "capacity_bits": 8 * 1024},
            ],
            "compute": {"name": "MAC", "zeros": "skipping", "accum_bits": 8},
        }
    )
    result = mg.evaluate(layer, arch, seed=cfg["seed"])
    return {
        "computes": result.effectual_macs,
        "cycles": result.latency_cycles,
        "reference": spec["reference"],
    }


def eyeriss_alexnet(cfg: dict[str, Any], ref: Path) -> list[dict[str, Any]]:
    """Table 7: dense / compressed DRAM traffic of one mapping per AlexNet conv layer on
    eyeriss-chip; the feature maps' saving; the PE energy the data gating saves."""
    spec = cfg["eyeriss_alexnet"]
    data = json.loads((ref / "eyeriss_alexnet_dram.json").read_text())
    arch = mg.load_arch(spec["preset"])
    dense_arch = without_each(arch)["formats"]
    ungated = without_each(arch)["compute"]
    ungated = without_each(ungated)["accesses"]
    pe = ("IfmapSpad", "WeightSpad", "PsumSpad", "MAC")
    rows = []
    for name, layer in data["layers"].items():
        s, d = layer["shape"], layer["densities"]
        densities = {"inputs": d["Inputs"], "weights": d["Weights"], "outputs": d["Outputs"]}
        conv = mg.Layer(
            name=name,
            N=spec["batch"],
            K=s["M"],
            C=s["C"],
            P=s["P"],
            Q=s["Q"],
            R=s["R"],
            S=s["S"],
            wstride=s["Wstride"],
            hstride=s["Hstride"],
            densities=densities,
        )
        result = mg.evaluate(
            conv, arch, dataflow=spec["dataflow"], seed=cfg["seed"], **cfg["mapper"]
        )
        view, batch = layer_view(conv, arch), to_batch(result.mapping, arch)
        dense = evaluate_batch(view, dense_arch, batch, result.costs)
        gated = result.energy_pj_by_level
        plain = evaluate_batch(view, ungated, batch, result.costs)
        plain_levels = Result(
            conv, ungated, result.mapping, result.costs, plain, batch.keep
        ).energy_pj_by_level
        dense_by_op = dense.dram_bytes(dense_arch)[:, 0]
        sparse_by_op = result.dram_bytes_by_operand
        fmap_dense = float(dense_by_op[1] + dense_by_op[2])
        fmap_sparse = sparse_by_op["inputs"] + sparse_by_op["outputs"]
        pe_plain = sum(plain_levels[k] for k in pe)
        # magnet's format on Sparseloop's own DRAM traffic (its mapping's dense words)
        words = {
            op: layer["dense"][op.capitalize()]["total"] for op in ("weights", "inputs", "outputs")
        }
        rle = arch.levels[0].sparse
        coded = 0.0
        for op, n in words.items():
            if op not in rle:
                coded += n
                continue
            density = conv.densities.of(Operand[op[0].upper()])
            share = density.expected(conv.operand_size(Operand[op[0].upper()]))
            ranks = rle[op].fiber_ranks(op)
            coded += n * float(fiber_bits(ranks, [np.ones(1)], 16, density, share)[0]) / 16
        rows.append(
            {
                "layer": name,
                "densities": densities,
                "magnet_ratio_on_sparseloop_traffic": sum(words.values()) / coded,
                "magnet_ratio": float(dense_by_op.sum()) / result.dram_bytes,
                "sparseloop_ratio": layer["sparseloop_ratio"],
                "magnet_fmap_saving": 1 - fmap_sparse / fmap_dense,
                "pe_gating_saving": 1 - sum(gated[k] for k in pe) / pe_plain,
            }
        )
    return rows


def summarise(v2: list[dict[str, Any]]) -> dict[str, float]:
    """Mean and worst |error| of each model against the ground truth on Fig. 12's layers."""
    out = {}
    for key in ("magnet_uniform", "magnet_measured", "sparseloop_uniform"):
        errors = [abs(r[f"{key}_error"]) for r in v2]
        out[f"{key}_mean_abs_error"] = statistics.mean(errors)
        out[f"{key}_worst_abs_error"] = max(errors)
    return out


def summarise_dstc(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Mean and worst |error| on the 8 points Sparseloop plotted (its figure's set)."""
    plotted = [r for r in rows if r["plotted"]]
    out = {}
    for key in ("magnet", "sparseloop"):
        errors = [abs(r[f"{key}_error"]) for r in plotted]
        out[f"{key}_mean_abs_error"] = statistics.mean(errors)
        out[f"{key}_worst_abs_error"] = max(errors)
    return out


def cases(
    v2: list[dict[str, Any]],
    tensor_core: list[dict[str, Any]],
    dots: list[dict[str, Any]],
    product: dict[str, Any],
    alexnet: list[dict[str, Any]],
) -> list[list[Any]]:
    """Every case: set, case, quantity, magnet, reference, magnet's error, Sparseloop's."""
    rows: list[list[Any]] = []
    for r in v2:
        rows.append(
            [
                "Fig. 12 (uniform)",
                r["layer"],
                "cycles",
                r["magnet_uniform"],
                r["gt_cycles"],
                r["magnet_uniform_error"],
                r["sparseloop_uniform_error"],
            ]
        )
        rows.append(
            [
                "Fig. 12 (measured)",
                r["layer"],
                "cycles",
                r["magnet_measured"],
                r["gt_cycles"],
                r["magnet_measured_error"],
                None
                if r["sparseloop_measured"] is None
                else r["sparseloop_measured"] / r["gt_cycles"] - 1,
            ]
        )
    for r in tensor_core:
        rows.append(
            [
                "Fig. 13 (DSTC)",
                f"A {r['a_density']:g}, B {r['b_density']:g}",
                "cycles / dense",
                r["magnet"],
                r["reference"],
                r["magnet_error"],
                r["sparseloop_error"],
            ]
        )
    for d in dots:
        for key in ("cycles", "computes", "b_reads", "b_not_made", "z_reads", "z_updates"):
            ref = d["reference"][key]
            rows.append(["dot product", d["case"], key, d[key], ref, d[key] / ref - 1, 0.0])
    for key in ("computes", "cycles"):
        ref = product["reference"][key]
        rows.append(
            ["spMspM 8x8x8", "skipping", key, product[key], ref, product[key] / ref - 1, 0.0]
        )
    for r in alexnet:
        for how, key in (
            ("Sparseloop's", "magnet_ratio_on_sparseloop_traffic"),
            ("magnet's", "magnet_ratio"),
        ):
            rows.append(
                [
                    "Table 7",
                    r["layer"],
                    f"dense / compressed DRAM, {how} mapping",
                    r[key],
                    r["sparseloop_ratio"],
                    r[key] / r["sparseloop_ratio"] - 1,
                    None,
                ]
            )
    return rows


def figure(v2: list[dict[str, Any]]) -> go.Figure:
    """Fig. 12's cycle errors against the ground truth, per layer and model."""
    fig = go.Figure()
    for key, label in (
        ("magnet_uniform", "magnet, uniform densities"),
        ("sparseloop_uniform", "Sparseloop, uniform (its artifact)"),
        ("magnet_measured", "magnet, measured channel densities"),
    ):
        fig.add_bar(x=[r["layer"] for r in v2], y=[100 * r[f"{key}_error"] for r in v2], name=label)
    fig.update_layout(
        title="Eyeriss v2 PE on MobileNet-0.5: cycle error against the ground truth",
        yaxis_title="error, %",
        template="plotly_white",
        width=900,
        height=500,
    )
    return fig


def main() -> None:
    """The full run (or ``--quick``): the case table, Fig. 12's figure and the summary."""
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    ref = ROOT / cfg["reference"]
    v2 = eyeriss_v2(cfg, ref)
    tensor_core = dstc(cfg, ref)
    dots = dot_product(cfg)
    product = spmspm(cfg)
    alexnet = eyeriss_alexnet(cfg, ref)
    common.write_table(
        out,
        ["set", "case", "quantity", "magnet", "reference", "magnet error", "Sparseloop error"],
        cases(v2, tensor_core, dots, product, alexnet),
        title="Sparseloop's validation sets in magnet (errors against each set's reference)",
        notes=[
            "Fig. 12 reference: the artifact's ground-truth cycles; Fig. 13: the DSTC paper's "
            "cycles as the artifact has them (Sparseloop's: its figure's bars); dot product "
            "and spMspM: Sparseloop's reference stats (timeloop-accelergy-exercises); Table 7: "
            "Sparseloop's own ratio on its mapping (the chip's per-layer ratios are published "
            "only as a bar chart, not found as numbers)."
        ],
        digits=4,
    )
    common.write_table(
        out,
        [
            "layer",
            "densities (W / I / O)",
            "magnet dense / sparse DRAM (its mapping)",
            "on Sparseloop's traffic",
            "Sparseloop",
            "feature-map DRAM saved",
            "PE energy saved by gating",
        ],
        [
            [
                r["layer"],
                " / ".join(f"{r['densities'][k]:.3g}" for k in ("weights", "inputs", "outputs")),
                r["magnet_ratio"],
                r["magnet_ratio_on_sparseloop_traffic"],
                r["sparseloop_ratio"],
                f"{100 * r['magnet_fmap_saving']:.1f} %",
                f"{100 * r['pe_gating_saving']:.1f} %",
            ]
            for r in alexnet
        ],
        title="Eyeriss (eyeriss-chip) on AlexNet, batch 4 (Sparseloop Table 7)",
        stem="eyeriss_alexnet",
        notes=[
            "Published (Eyeriss JSSC 2017): feature-map DRAM traffic cut by nearly 30 % in "
            "CONV1, nearly 75 % in CONV5; PE data gating saves 45 % of the PE power."
        ],
    )
    common.write_figure(figure(v2), out, png=not args.no_png)
    spec = cfg["eyeriss_alexnet"]
    gated = [r["pe_gating_saving"] for r in alexnet]
    summary = {
        "experiment": "sparseloop-validation",
        "quick": args.quick,
        "eyeriss_v2_pe": {"layers": v2, **summarise(v2)},
        "dstc": {"points": tensor_core, **summarise_dstc(tensor_core)},
        "dot_product": dots,
        "spmspm": product,
        "eyeriss_alexnet": {
            "layers": alexnet,
            "published_fmap_saving": spec["published_fmap_saving"],
            "published_pe_gating_saving": spec["published_pe_gating_saving"],
            "mean_pe_gating_saving": statistics.mean(gated),
        },
        "cases": [
            dict(
                zip(
                    [
                        "set",
                        "case",
                        "quantity",
                        "magnet",
                        "reference",
                        "magnet_error",
                        "sparseloop_error",
                    ],
                    row,
                    strict=True,
                )
            )
            for row in cases(v2, tensor_core, dots, product, alexnet)
        ],
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    print(json.dumps({**summarise(v2), **summarise_dstc(tensor_core)}, indent=1))
    for r in alexnet:
        print(
            f"{r['layer']}: dense/sparse DRAM {r['magnet_ratio']:.3f} (Sparseloop "
            f"{r['sparseloop_ratio']:.3f}), feature maps {100 * r['magnet_fmap_saving']:.1f} % "
            f"saved, PE gating {100 * r['pe_gating_saving']:.1f} %"
        )


if __name__ == "__main__":
    main()
