"""Mapper quality and speed (issues: mapper and dataflows; ready for the design search, item 5).

1. Quality: 22 layers shaped like AlexNet, ResNet-50, MobileNetV2 (depthwise and pointwise)
   and BERT GEMM / attention layers, shrunk so the exhaustive mapper finishes (channels
   divided by 16-64, outputs cropped to 2-8 per side; kernels, strides and groups kept), on a
   small three-level template (DRAM, 2 KiB global buffer, 2 x 2 PEs with 32 B register
   files). Ratio of the ``fast`` mapper's EDP (heuristic forced: exact_below=0) to the
   exhaustive optimum. Target: worst <= 1.02, mean ~1.001.
2. Speed: CPU seconds (``time.process_time``, one core, imports and the design excluded) to
   map every distinct layer of ResNet-50 on ``simba-chip`` with the fast mapper, under the
   dataflows ``ws`` and ``os-local-ws``. Target: <= 2 CPU-s each (ZigZag needs ~54 CPU-s for
   ResNet-18 on a 32x32 array on this kind of machine). Also ``free``, which searches its own
   mapspace and every named dataflow's (issue 18): about the sum of theirs. Also the whole
   command line, ``magnet evaluate --arch simba-chip --workload resnet50 --dataflow ws``
   (user + system CPU seconds of the child, as ``/usr/bin/time -f %U+%S`` reports them).

Results: ``benchmarks/results/mapper.json``.

    python benchmarks/bench_mapper.py            # everything (~5 minutes, the exhaustive runs)
    python benchmarks/bench_mapper.py --speed    # ResNet-50 only
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import common

from magnet.api import map_layer
from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.design import build_design
from magnet.mapper import map_network
from magnet.perf import tune_allocator
from magnet.templates import load_arch
from magnet.workload.layer import Layer
from magnet.workload.zoo import load_zoo

RESULTS = Path(__file__).resolve().parent / "results" / "mapper.json"
ALL = ("weights", "inputs", "outputs")
SMALL = Arch(
    name="small-3-level",
    levels=(
        StorageLevel(name="DRAM", component="dram", block_words=8, keeps=ALL),
        StorageLevel(
            name="GLB", component="sram", capacity_bits=2048 * 8, block_words=8, keeps=ALL
        ),
        StorageLevel(
            name="RF", component="regfile", capacity_bits=32 * 8, keeps=ALL, mesh_x=2, mesh_y=2
        ),
    ),
    compute=ComputeLevel(name="MAC", mesh_x=2, mesh_y=2),
)
L = Layer
LAYERS = {
    # AlexNet (11x11/4, 5x5 grouped, 3x3)
    "alexnet_conv1": L(K=6, C=3, P=3, Q=2, R=11, S=11, wstride=4, hstride=4),
    "alexnet_conv2": L(G=2, K=4, C=3, P=3, Q=3, R=5, S=5),
    "alexnet_conv3": L(K=8, C=8, P=4, Q=2, R=3, S=3),
    "alexnet_conv4": L(G=2, K=6, C=6, P=3, Q=3, R=3, S=3),
    "alexnet_fc6": L(kind="fc", K=32, C=36),
    # ResNet-50 (7x7/2 stem, bottleneck 1x1 / 3x3 / 1x1, projection, fc)
    "resnet50_conv1": L(K=4, C=3, P=4, Q=2, R=7, S=7, wstride=2, hstride=2),
    "resnet50_res2a_2a": L(K=4, C=4, P=8, Q=4),
    "resnet50_res2a_2b": L(K=4, C=4, P=7, Q=2, R=3, S=3),
    "resnet50_res2a_2c": L(K=16, C=4, P=7, Q=2),
    "resnet50_res3a_2b_s2": L(K=8, C=8, P=4, Q=2, R=3, S=3, wstride=2, hstride=2),
    "resnet50_res3a_proj": L(K=16, C=8, P=4, Q=4, wstride=2, hstride=2),
    "resnet50_res5b_2b": L(K=8, C=8, P=7, R=3, S=3),
    "resnet50_fc1000": L(kind="fc", K=64, C=32),
    # MobileNetV2 (depthwise 3x3 stride 1 and 2, pointwise expand / project)
    "mobilenetv2_dw_s1": L(kind="depthwise", G=16, P=8, Q=4, R=3, S=3),
    "mobilenetv2_dw_s2": L(kind="depthwise", G=24, P=4, Q=4, R=3, S=3, wstride=2, hstride=2),
    "mobilenetv2_expand": L(K=24, C=4, P=8, Q=2),
    "mobilenetv2_project": L(K=4, C=24, P=8, Q=2),
    # BERT-base (projections, attention, MLP), tokens cropped
    "bert_qkv": L(kind="fc", K=24, C=24, P=8),
    "bert_qk": L(kind="matmul", G=4, K=8, C=4, P=8),
    "bert_av": L(kind="matmul", G=4, K=4, C=8, P=8),
    "bert_ffn_up": L(kind="fc", K=48, C=12, P=4),
    "bert_ffn_down": L(kind="fc", K=12, C=48, P=4),
}
DATAFLOWS = ("ws", "os-local-ws", "free")
#: A budget that never ends: the exhaustive mapper walks spaces above its default limit whole.
WHOLE = {"evaluations": 10**15}


def quality() -> list[dict]:
    design = build_design(SMALL)  # dataflow "free"
    rows = []
    for name, layer in LAYERS.items():
        layer = layer.model_copy(update={"name": name})
        start = time.process_time()
        exact = map_layer(layer, design, mapper="exhaustive", budget=WHOLE)
        assert exact.status == "mapped", exact.reason
        exact_s = time.process_time() - start
        start = time.process_time()
        fast = map_layer(layer, design, mapper="fast", exact_below=0)
        fast_s = time.process_time() - start
        ratio = fast.result.edp / exact.result.edp
        rows.append(
            {
                "layer": name,
                "shape": layer.shape_str(),
                "exhaustive_edp": exact.result.edp,
                "fast_edp": fast.result.edp,
                "ratio": ratio,
                "exhaustive_mappings": exact.mappings_evaluated,
                "exhaustive_cpu_seconds": exact_s,
                "fast_mappings": fast.mappings_evaluated,
                "fast_valid_mappings": fast.valid_mappings,
                "fast_cpu_seconds": fast_s,
            }
        )
        print(
            f"{name:<24}{ratio:>8.4f}  exhaustive {exact.mappings_evaluated:>10,} in "
            f"{exact_s:6.1f} CPU-s   fast {fast.mappings_evaluated:>7,} in {fast_s:5.2f} CPU-s",
            flush=True,
        )
    return rows


def resnet50_speed(dataflow: str) -> dict:
    arch = load_arch("simba-chip")
    network = load_zoo("resnet50")
    design = build_design(arch, dataflow)
    start = time.process_time()
    found = map_network(network, design, "fast", objective="edp")
    seconds = time.process_time() - start
    outcomes = list(found.outcomes.values())
    result = found.result
    valid = sum(o.valid_mappings for o in outcomes)
    priced = sum(o.mappings_evaluated for o in outcomes)
    return {
        "network": "resnet50",
        "arch": "simba-chip",
        "dataflow": dataflow,
        "mapper": "fast",
        "distinct_layers": len(outcomes),
        "cpu_seconds": seconds,
        "mappings_priced": priced,
        "valid_mappings": valid,
        "valid_mappings_per_cpu_second": valid / seconds,
        "edp_pj_cycles": result.energy_pj * result.latency_cycles,
        "target_cpu_seconds": None if dataflow == "free" else 2.0,
    }


def cli_seconds(args: list[str]) -> dict:
    """User + system CPU seconds of the command line (like ``/usr/bin/time -f %U+%S``), on
    the same core as this process."""
    exe = shutil.which("magnet") or "magnet"
    _, user, system = common.run_timed(
        [exe, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return {
        "command": "magnet " + " ".join(args),
        "user_seconds": user,
        "system_seconds": system,
        "cpu_seconds": user + system,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", action="store_true", help="ResNet-50 only (no quality)")
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()

    tune_allocator()
    common.one_core()
    record: dict = {}
    if args.out.exists():
        record = json.loads(args.out.read_text())
    if not args.speed:
        rows = quality()
        ratios = [r["ratio"] for r in rows]
        record["quality"] = {
            "layers": len(rows),
            "worst_ratio": max(ratios),
            "mean_ratio": statistics.mean(ratios),
            "target_worst": 1.02,
            "template": SMALL.name,
            "rows": rows,
        }
        print(
            f"\nfast / exhaustive EDP over {len(rows)} layers: worst {max(ratios):.4f}, mean "
            f"{statistics.mean(ratios):.4f}"
        )
    speeds = [resnet50_speed(dataflow) for dataflow in DATAFLOWS]
    cli = cli_seconds(
        ["evaluate", "--arch", "simba-chip", "--workload", "resnet50", "--dataflow", "ws"]
    )
    record.pop("resnet50", None)
    record["resnet50"] = {
        "runs": speeds,
        "cli": cli,
        "peer": "ZigZag ~54 CPU-s for ResNet-18 on a 32x32 array",
    }
    common.write_record(args.out, record)
    for s in speeds:
        print(
            f"ResNet-50 on simba-chip ({s['dataflow']}): {s['distinct_layers']} distinct layers "
            f"mapped in {s['cpu_seconds']:.2f} CPU-s (target {s['target_cpu_seconds']}), "
            f"{s['valid_mappings_per_cpu_second']:,.0f} valid mappings/s, EDP "
            f"{s['edp_pj_cycles']:.4e}"
        )
    print(f"{cli['command']}: {cli['cpu_seconds']:.2f} CPU-s (user + system)")
    print(f"written to {args.out}")


if __name__ == "__main__":
    common.interruptible(main)
