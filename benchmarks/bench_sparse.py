"""CPU seconds to map ResNet-50 with zeros against the dense network (issue 32).

Setup: ResNet-50 at batch 1, the fast mapper's own budget, ``os-local-ws``. Dense: the
``simba-chip`` preset on the dense network. Sparse: simba-chip's parameters with the MACs
skipping zeros, weights in a bitmask and feature maps run-length coded in DRAM, on the
network at weights 2:4 and inputs half zero (every MAC layer). Each is run ``--repeats``
times, alternating, pinned to one core, in this process (the glibc allocator tuned, as the
CLI does); the median CPU seconds, and what the zeros change (latency, energy, DRAM bytes),
are reported. Target: the sparse mapping within 1.5x the dense time. Results go to
``benchmarks/results/sparse.json``.

    python benchmarks/bench_sparse.py
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

RESULTS = Path(__file__).resolve().parent / "results" / "sparse.json"
DENSITIES = "weights=2:4,inputs=0.5"
PARAMS = {"zeros": "skipping", "weight_format": "bitmask", "dram_format": "rle"}


def main() -> None:
    """Time both runs ``--repeats`` times, alternating; write the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=common.count, default=3)
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()
    tune_allocator()
    common.one_core()
    template = mg.templates.get_template("simba")
    runs = {
        "dense": (mg.load_workload("resnet50", batch=1), mg.load_arch("simba-chip")),
        "sparse": (
            mg.load_workload("resnet50", batch=1, densities=DENSITIES),
            template.build({**mg.load_arch("simba-chip").params, **PARAMS}, name="simba-sparse"),
        ),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    records: dict[str, Any] = {}
    for _ in range(args.repeats):
        for name, (net, arch) in runs.items():
            start = time.process_time()
            result = mg.evaluate(net, arch, dataflow="os-local-ws")
            seconds[name].append(time.process_time() - start)
            records[name] = result.record()
    median = {name: statistics.median(s) for name, s in seconds.items()}
    dense, sparse = records["dense"], records["sparse"]
    record: dict[str, Any] = {
        "workload": "resnet50, batch 1, os-local-ws, fast mapper",
        "densities": DENSITIES,
        "sparse_params": PARAMS,
        "cpu_s": seconds,
        "median_cpu_s": median,
        "sparse_over_dense_cpu": median["sparse"] / median["dense"],
        "target": "the sparse mapping within 1.5x the dense time (issue 32)",
        "latency_cycles": {"dense": dense.latency_cycles, "sparse": sparse.latency_cycles},
        "energy_pj": {"dense": dense.energy_pj, "sparse": sparse.energy_pj},
        "dram_bytes": {"dense": dense.dram_bytes, "sparse": sparse.dram_bytes},
        "zeros_saved": {k: v.model_dump() for k, v in (sparse.zeros_saved or {}).items()},
    }
    common.write_record(args.out, record)
    print(
        f"dense {median['dense']:.2f} CPU-s, sparse {median['sparse']:.2f} CPU-s "
        f"({record['sparse_over_dense_cpu']:.2f}x); latency {dense.latency_cycles:,} -> "
        f"{sparse.latency_cycles:,} cycles, energy {dense.energy_pj:.3e} -> "
        f"{sparse.energy_pj:.3e} pJ, DRAM {dense.dram_bytes:,.0f} -> {sparse.dram_bytes:,.0f} B"
    )


if __name__ == "__main__":
    common.interruptible(main)
