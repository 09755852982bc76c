"""CPU seconds to evaluate ResNet-50 on a 36-chiplet package against one chip (issue 22).

Setup: ResNet-50 at batch 1 under ``os-local-ws`` with the fast mapper's own budget, on the
``simba-chip`` preset and on ``simba-package-36`` (36 simba-chip chiplets, 6 x 6), layer
after layer and pipelined across chiplet groups (every layer mapped on each of the six band
heights), and fused depth-first (the same plans, each also passed a tile at a time). Each
is run ``--repeats`` times, alternating, pinned to one core, in this process
(the glibc allocator tuned, as the CLI does); the median CPU seconds are reported. Target:
the package under 3x the chip. Results go to ``benchmarks/results/package.json``.

    python benchmarks/bench_package.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

import common

import magnet as mg
from magnet.perf import tune_allocator

RESULTS = Path(__file__).resolve().parent / "results" / "package.json"
#: name: (preset, how the network runs: layer after layer, pipelined or fused)
RUNS = {
    "simba-chip": ("simba-chip", {}),
    "simba-package-36": ("simba-package-36", {}),
    "simba-package-36, pipelined": ("simba-package-36", {"pipeline": True}),
    "simba-package-36, fused": ("simba-package-36", {"fuse": True}),
}


def main() -> None:
    """Time every run ``--repeats`` times, alternating; write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()
    tune_allocator()
    common.one_core()
    net = mg.load_workload("resnet50", batch=1)
    seconds: dict[str, list[float]] = {name: [] for name in RUNS}
    images: dict[str, float] = {}
    latency_ms: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, (preset, how) in RUNS.items():
            arch = mg.load_arch(preset)
            start = time.process_time()
            result = mg.evaluate(net, arch, dataflow="os-local-ws", **how)
            seconds[name].append(time.process_time() - start)
            images[name] = result.record().images_per_s
            latency_ms[name] = result.record().latency_s * 1e3
    median = {name: statistics.median(s) for name, s in seconds.items()}
    record: dict[str, Any] = {
        "workload": "resnet50, batch 1, os-local-ws, fast mapper",
        "cpu_s": seconds,
        "median_cpu_s": median,
        "ratio_to_chip": {name: m / median["simba-chip"] for name, m in median.items()},
        "images_per_s": images,
        "latency_ms": latency_ms,
        "target": "the package under 2x the chip, pipelined under 3x, fused under 4x (issue 31)",
    }
    common.write_record(args.out, record)
    for name in RUNS:
        print(
            f"{name:<30} {median[name]:.2f} CPU-s ({record['ratio_to_chip'][name]:.2f}x), "
            f"{images[name]:,.0f} images/s, {latency_ms[name]:.3f} ms a batch"
        )


if __name__ == "__main__":
    main()
