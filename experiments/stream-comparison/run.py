"""Stream's own simba example package described in magnet: Stream's one figure on it, and ResNet-18.

The package (config.yaml: every figure from Stream's hardware files) runs Stream's two-layer
test network, whose latency Stream's CI records on it (4,316 cycles), and ResNet-18 at batch 1
layer after layer, pipelined across chiplet groups and fused depth-first. Stream itself cannot
run here (its releases since 2026-06 need Python >= 3.12; this machine has 3.11 and no
internet beyond the package index, whose stream-dse is the 2023 0.0.8 without this example),
and it has published no ResNet-18 figure on this package, so magnet's ResNet-18 rows stand
alone (README: what is compared and why).

    python experiments/stream-comparison/run.py [--quick]
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.workload.dims import Operand  # noqa: E402
from magnet.workload.network import Network  # noqa: E402


def package(cfg: dict[str, Any], **more: Any) -> mg.Arch:
    """Stream's simba package as a magnet ``package`` design (``more``: parameters on top)."""
    params = {k: v for k, v in cfg["package"].items() if k != "template"}
    template = mg.templates.get_template(cfg["package"]["template"])
    return template.build({**params, **more}, name="stream-simba")


def evaluate(cfg: dict[str, Any], net: Network, arch: mg.Arch, **how: Any) -> tuple[Any, float]:
    """``net`` on ``arch`` mapped under the config's dataflow and objective; its CPU-s."""
    start = time.process_time()
    result = mg.evaluate(
        net,
        arch,
        dataflow=cfg["dataflow"],
        objective=cfg["objective"],
        seed=cfg["seed"],
        **cfg["mapper"],
        **how,
    )
    return result, time.process_time() - start


def two_conv(cfg: dict[str, Any]) -> dict[str, Any]:
    """Stream's two-convolution network at bf16 on the package, beside Stream's cycles."""
    spec = cfg["two_conv"]
    layers = [
        mg.parse_layer(x["shape"]).model_copy(update={"name": x["name"]}) for x in spec["layers"]
    ]
    net = Network.of("2conv", layers)
    bits = 16 if spec["number_format"] in ("bf16", "fp16") else 8
    arch = package(cfg, number_format=spec["number_format"], weight_bits=bits, activation_bits=bits)
    result, cpu_s = evaluate(cfg, net, arch)
    record = result.record()
    per_cycle = record.dram_bytes_per_cycle
    out_bytes = layers[-1].operand_size(Operand.O) * bits / 8
    write = out_bytes / per_cycle  # the network's output written back to DRAM [D]
    ideal = net.macs / arch.mac_count
    # one inference, its weights read from DRAM (the first batch of a stream; the steady
    # state's weights stay on chip), as Stream schedules one
    cycles = round((record.first_latency_s or record.latency_s) * arch.clock_ghz * 1e9)
    return {
        "cycles": cycles,
        "steady_cycles": record.latency_cycles,
        "stream_cycles": spec["stream_cycles"],
        "ratio": cycles / spec["stream_cycles"],
        "output_write_cycles": write,
        "cycles_without_output_write": cycles - write,
        "ratio_without_output_write": (cycles - write) / spec["stream_cycles"],
        "mac_utilization": ideal / cycles,
        "stream_mac_utilization": ideal / spec["stream_cycles"],
        "ideal_cycles": ideal,
        "dram_bytes": record.dram_bytes,
        "layers": [
            {
                "layer": r.name,
                "cycles": r.latency_cycles,
                "bottleneck": r.bottleneck,
                "partition": r.partition,
                "dram_bytes": r.dram_bytes,
            }
            for r in record.layers
        ],
        "cpu_s": cpu_s,
        "source": spec["stream_source"],
    }


def resnet18(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """ResNet-18 at batch 1 on the package: layer after layer, pipelined and fused."""
    net = mg.load_workload(cfg["resnet18"]["workload"], batch=cfg["resnet18"]["batch"])
    arch = package(cfg)
    rows = []
    for name, how in (
        ("layer after layer", {}),
        ("pipelined", {"pipeline": True}),
        ("fused", {"fuse": True}),
    ):
        result, cpu_s = evaluate(cfg, net, arch, **how)
        record = result.record()
        stages = record.pipeline or []
        first = round((record.first_latency_s or record.latency_s) * arch.clock_ghz * 1e9)
        rows.append(
            {
                "run": name,
                "latency_cycles": record.latency_cycles,
                "first_latency_cycles": first,
                "dram_cycles": record.dram_bytes / (record.dram_bytes_per_cycle or math.inf),
                "images_per_s": record.images_per_s,
                "energy_uj": record.energy_pj * 1e-6,
                "dram_bytes": record.dram_bytes,
                "nop_bytes": record.nop_bytes,
                "stages": [
                    {"layers": s.layers, "chiplets": s.chiplets, "tiles": s.tiles} for s in stages
                ],
                "cpu_s": cpu_s,
            }
        )
    first = rows[0]["latency_cycles"]
    for r in rows:
        r["speedup"] = first / r["latency_cycles"]
    return rows


def figure(rows: list[dict[str, Any]]) -> go.Figure:
    """ResNet-18's latency per batch, layer after layer, pipelined and fused."""
    fig = go.Figure(
        go.Bar(
            x=[r["run"] for r in rows],
            y=[r["latency_cycles"] for r in rows],
            text=[f"{r['latency_cycles']:,} cycles" for r in rows],
        )
    )
    fig.update_layout(
        title="ResNet-18, batch 1, on Stream's simba package (magnet)",
        yaxis_title="cycles a batch",
        template="plotly_white",
        width=800,
        height=500,
    )
    return fig


def main() -> None:
    """The full run (or ``--quick``): tables, figure and summary."""
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    two = two_conv(cfg)
    rows = resnet18(cfg)
    common.write_table(
        out,
        [
            "network",
            "Stream (cycles)",
            "magnet (cycles)",
            "ratio",
            "magnet without its output write",
            "ratio",
        ],
        [
            [
                "2 convolutions, bf16, batch 1",
                two["stream_cycles"],
                two["cycles"],
                two["ratio"],
                two["cycles_without_output_write"],
                two["ratio_without_output_write"],
            ]
        ],
        title="Stream's simba package: Stream's figure beside magnet's",
        notes=[
            f"Stream: {two['source']}. magnet: one inference with its weights read from DRAM "
            "(the first batch of a stream); its output written back to DRAM takes "
            f"{two['output_write_cycles']:,.0f} cycles of it (65,536 bytes at 8 a cycle [D]); "
            "whether Stream's figure writes it is not stated [NF]."
        ],
        stem="two_conv",
        digits=4,
    )
    common.write_table(
        out,
        [
            "ResNet-18, batch 1",
            "cycles a batch",
            "first batch (weights loaded)",
            "DRAM's time for its traffic",
            "speed-up",
            "images/s",
            "energy (uJ)",
            "stages (layers / chiplets / tiles)",
            "CPU-s",
        ],
        [
            [
                r["run"],
                r["latency_cycles"],
                r["first_latency_cycles"],
                r["dram_cycles"],
                r["speedup"],
                r["images_per_s"],
                r["energy_uj"],
                ", ".join(f"{s['layers']}/{s['chiplets']}/{s['tiles']}" for s in r["stages"])
                or "-",
                r["cpu_s"],
            ]
            for r in rows
        ],
        title="ResNet-18 on Stream's simba package, magnet (Stream: no figure published)",
        digits=4,
    )
    common.write_figure(figure(rows), out, png=not args.no_png)
    summary = {
        "experiment": "stream-comparison",
        "quick": args.quick,
        "package": cfg["package"],
        "two_conv": two,
        "resnet18": rows,
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    print(
        f"2conv: magnet {two['cycles']:,} cycles, Stream {two['stream_cycles']:,} "
        f"({two['ratio']:.3f}x; {two['ratio_without_output_write']:.3f}x without the output write)"
    )
    for r in rows:
        print(
            f"resnet18 {r['run']:<18} {r['latency_cycles']:>10,} cycles  {r['speedup']:.3f}x  "
            f"{r['images_per_s']:,.0f} images/s  {r['cpu_s']:.1f} CPU-s  {r['stages']}"
        )


if __name__ == "__main__":
    main()
