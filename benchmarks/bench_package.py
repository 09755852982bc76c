"""CPU seconds to evaluate ResNet-50 on a 36-chiplet package against one chip (issue 22).

Setup: ResNet-50 at batch 1 under ``os-local-ws`` with the fast mapper's own budget, on the
``simba-chip`` preset and on ``simba-package-36`` (36 simba-chip chiplets, 6 x 6), layer
after layer and pipelined across chiplet groups (every layer mapped on each of the six band
heights), and fused depth-first (the same plans, each also passed a tile at a time). Each
is run ``--repeats`` times, alternating, pinned to one core, in this process
(the glibc allocator tuned, as the CLI does); the median CPU seconds are reported. Targets:
the package under 2x the chip, pipelined under 3x, fused under 4x (issue 31).

Then what the pipeline's bands mapped widest first, each narrower one warm-started from the
wider ones' best mappings (``magnet.mapper.planner``), cost against every band searched
afresh (the code before, here by giving each band no store): ResNet-50 and ResNet-18
pipelined on simba-package-36, ResNet-50 pipelined on simba-package-16 and fused on
simba-package-36 under the latency objective (``BAND_RUNS``), each under mapper seeds 0 to
``--seeds`` - 1: the CPU seconds, images/s and cycles a batch of each, and their means.
Results go to ``benchmarks/results/package.json``.

    python benchmarks/bench_package.py [--repeats 3] [--seeds 4]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any
from unittest import mock

import common

import magnet as mg
from magnet.mapper import planner
from magnet.mapper.whole_network import map_network as shipped
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
    parser.add_argument("--repeats", type=common.count, default=3)
    parser.add_argument("--seeds", type=common.count, default=4)
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
    for name in RUNS:
        print(
            f"{name:<30} {median[name]:.2f} CPU-s ({record['ratio_to_chip'][name]:.2f}x), "
            f"{images[name]:,.0f} images/s, {latency_ms[name]:.3f} ms a batch",
            flush=True,
        )
    record["bands"] = bands(args.seeds)
    common.write_record(args.out, record)


#: The band comparison's runs: name -> (workload, preset, how it runs).
BAND_RUNS = {
    "resnet50 pipelined on 36": ("resnet50", "simba-package-36", {"pipeline": True}),
    "resnet18 pipelined on 36": ("resnet18", "simba-package-36", {"pipeline": True}),
    "resnet50 pipelined on 16": ("resnet50", "simba-package-16", {"pipeline": True}),
    "resnet50 fused on 36, latency": (
        "resnet50",
        "simba-package-36",
        {"fuse": True, "objective": "latency"},
    ),
}


def bands(seeds: int) -> dict[str, Any]:
    """Each of ``BAND_RUNS`` under mapper seeds 0 to ``seeds`` - 1, its bands warm-started
    (as shipped) and each searched afresh: CPU seconds, images/s and cycles a batch of each
    run, and the means."""

    def afresh(*args: Any, warm: Any, **kwargs: Any) -> Any:  # no band starts another
        return shipped(*args, **kwargs)

    runs: dict[str, Any] = {}
    for name, (workload, preset, how) in BAND_RUNS.items():
        net, arch = mg.load_workload(workload, batch=1), mg.load_arch(preset)
        for start_from, mapping in (("warm", shipped), ("afresh", afresh)):
            cpu, rate, cycles = [], [], []
            with mock.patch.object(planner, "map_network", mapping):
                for seed in range(seeds):
                    start = time.process_time()
                    result = mg.evaluate(net, arch, dataflow="os-local-ws", seed=seed, **how)
                    cpu.append(time.process_time() - start)
                    rate.append(result.record().images_per_s)
                    cycles.append(result.latency_cycles)
            runs.setdefault(name, {})[start_from] = {
                "cpu_s": cpu,
                "images_per_s": rate,
                "latency_cycles": cycles,
                "mean_cpu_s": statistics.mean(cpu),
                "mean_images_per_s": statistics.mean(rate),
                "mean_latency_cycles": statistics.mean(cycles),
            }
            print(
                f"{name}, bands {start_from:<6}: {statistics.mean(cpu):.2f} CPU-s, "
                f"{statistics.mean(rate):,.0f} images/s, {statistics.mean(cycles):,.0f} cycles "
                f"a batch (the mean of seeds 0-{seeds - 1}: "
                + ", ".join(f"{v:,.0f}" for v in rate)
                + " images/s; "
                + ", ".join(f"{v:,}" for v in cycles)
                + " cycles)",
                flush=True,
            )
    return {"seeds": seeds, "runs": runs}


if __name__ == "__main__":
    common.interruptible(main)
