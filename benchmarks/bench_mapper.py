"""Mapper quality and speed (issue: mapper and dataflows).

1. Quality: 22 layers shaped like AlexNet, ResNet-50, MobileNetV2 (depthwise and pointwise)
   and BERT GEMM / attention layers, shrunk so the exhaustive mapper finishes (channels
   divided by 16-64, outputs cropped to 2-8 per side; kernels, strides and groups kept), on a
   small three-level template (DRAM, 2 KiB global buffer, 2 x 2 PEs with 32 B register
   files). Ratio of the ``fast`` mapper's EDP (heuristic forced: exact_below=0) to the
   exhaustive optimum. Target: worst <= 1.02.
2. Speed: time to map every distinct layer of ResNet-50 on ``simba-chip`` (weight-stationary,
   fast mapper, one core). Target: under 5 s (ZigZag needs ~54 CPU-seconds for ResNet-18 on
   a 32x32 array on this kind of machine). Also valid mappings priced per second.

Results: ``benchmarks/results/mapper.json``.

    python benchmarks/bench_mapper.py
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

from magnet.mapper.search import map_layer, map_network

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
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


def quality() -> list[dict]:
    rows = []
    for name, layer in LAYERS.items():
        layer = layer.model_copy(update={"name": name})
        start = time.perf_counter()
        exact = map_layer(layer, SMALL, mapper="exhaustive")
        exact_s = time.perf_counter() - start
        start = time.perf_counter()
        fast = map_layer(layer, SMALL, mapper="fast", exact_below=0)
        fast_s = time.perf_counter() - start
        ratio = fast.result.edp / exact.result.edp
        rows.append(
            {
                "layer": name,
                "shape": layer.shape_str(),
                "exhaustive_edp": exact.result.edp,
                "fast_edp": fast.result.edp,
                "ratio": ratio,
                "exhaustive_mappings": exact.mappings_evaluated,
                "exhaustive_seconds": exact_s,
                "fast_mappings": fast.mappings_evaluated,
                "fast_seconds": fast_s,
            }
        )
        print(
            f"{name:<24}{ratio:>8.4f}  exhaustive {exact.mappings_evaluated:>10,} in "
            f"{exact_s:6.1f}s   fast {fast.mappings_evaluated:>7,} in {fast_s:5.2f}s",
            flush=True,
        )
    return rows


def resnet50_speed() -> dict:
    arch = load_arch("simba-chip")
    network = load_zoo("resnet50")
    start = time.perf_counter()
    found = map_network(network, arch, "ws")
    seconds = time.perf_counter() - start
    unique = {id(r): r for r in found.values()}.values()
    valid = sum(r.valid_mappings for r in unique)
    priced = sum(r.mappings_evaluated for r in unique)
    return {
        "network": "resnet50",
        "arch": "simba-chip",
        "dataflow": "ws",
        "distinct_layers": len(unique),
        "seconds": seconds,
        "mappings_priced": priced,
        "valid_mappings": valid,
        "valid_mappings_per_second": valid / seconds,
    }


def main() -> None:
    tune_allocator()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rows = quality()
    ratios = [r["ratio"] for r in rows]
    speed = resnet50_speed()
    record = {
        "quality": {
            "layers": len(rows),
            "worst_ratio": max(ratios),
            "mean_ratio": statistics.mean(ratios),
            "target_worst": 1.02,
            "template": SMALL.name,
            "rows": rows,
        },
        "resnet50": {
            **speed,
            "target_seconds": 5.0,
            "peer": "ZigZag ~54 CPU-s for ResNet-18 on a 32x32 array",
        },
        "date": time.strftime("%Y-%m-%d"),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=1) + "\n")
    print(
        f"\nfast / exhaustive EDP over {len(rows)} layers: worst {max(ratios):.4f}, mean "
        f"{statistics.mean(ratios):.4f}"
    )
    print(
        f"ResNet-50 on simba-chip (ws): {speed['distinct_layers']} distinct layers mapped in "
        f"{speed['seconds']:.2f}s, {speed['valid_mappings_per_second']:,.0f} valid mappings/s"
    )
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
