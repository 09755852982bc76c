"""Mappings priced per second by the batch evaluator (issue: core analytical model).

Setup: the ``simba-chip`` preset, ResNet-50 res2a_branch2b (3x3, K=C=64, 56x56), batches of
10,000 mappings from the mappers' capacity-aware sampler (``magnet.mapper.sampler.sample``
over the ``free`` dataflow's mapspace: factors that fit every level, full fan-outs favoured,
random loop orders), pinned to one core. The glibc allocator is tuned explicitly, as an
entry point opts in (``magnet.perf.tune_allocator``; the evaluator never does it). Each
batch is priced ``--repeats`` times (CPU seconds, ``time.process_time``); the median and
best times are reported. Results go to ``benchmarks/results/evaluator.json``.

Peers on this kind of machine: ZigZag 3.9.1 and Timeloop's mapper price roughly 250 to 300
mappings per second. Target: at least 1,000,000 per second. The same layer sparse (weights
2:4, inputs half zero) on simba-chip skipping zeros with compressed weights and feature maps
(issue 32): within 1.5x the dense time.

    python benchmarks/bench_evaluator.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import common
import numpy as np

from magnet.arch.spec import Arch
from magnet.cost import price_arch
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import sample
from magnet.model.evaluate import evaluate_batch, layer_view
from magnet.perf import tune_allocator
from magnet.templates import dataflow_for, get_template, load_arch
from magnet.workload.layer import Layer
from magnet.workload.sparsity import Densities

RESULTS = Path(__file__).resolve().parent / "results" / "evaluator.json"


#: The sparse case: weights 2:4, inputs half zero, on simba-chip skipping zeros, weights in
#: a bitmask, feature maps run-length coded in DRAM (issue 32: within 1.5x of dense).
SPARSE = {"weights": "2:4", "inputs": 0.5}
SPARSE_PARAMS = {"zeros": "skipping", "weight_format": "bitmask", "dram_format": "rle"}


def timings(layer: Layer, arch: Arch, args: argparse.Namespace) -> tuple[list[float], int]:
    """CPU seconds of each pricing of each batch, and the valid mappings priced."""
    layer = layer_view(layer, arch)
    costs = price_arch(arch)
    space = Space(layer, arch, dataflow_for(arch, "free"))
    times: list[float] = []
    valid = 0
    for seed in range(args.batches):
        batch = sample(space, args.batch, np.random.default_rng(seed))
        result = evaluate_batch(layer, arch, batch, costs)  # warm-up
        valid += int((result.valid & space.structure_ok(batch)).sum())
        for _ in range(args.repeats):
            start = time.process_time()
            evaluate_batch(layer, arch, batch, costs)
            times.append(time.process_time() - start)
    return times, valid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=common.count, default=10_000)
    parser.add_argument("--batches", type=common.count, default=3, help="distinct random batches")
    parser.add_argument("--repeats", type=common.count, default=20, help="timings per batch")
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()

    allocator_tuned = tune_allocator()
    common.one_core()
    layer = Layer(name="resnet50_res2a_branch2b", K=64, C=64, P=56, Q=56, R=3, S=3)
    times, valid = timings(layer, load_arch("simba-chip"), args)
    sparse_arch = get_template("simba").build(SPARSE_PARAMS, name="simba-chip-sparse")
    sparse_layer = layer.model_copy(update={"densities": Densities.model_validate(SPARSE)})
    sparse_times, _ = timings(sparse_layer, sparse_arch, args)
    median = statistics.median(times)
    best = min(times)
    sparse_median = statistics.median(sparse_times)
    record = {
        "benchmark": "batch evaluator, simba-chip, ResNet-50 3x3 layer, sampled mappings",
        "sampler": "magnet.mapper.sampler.sample, dataflow free",
        "batch": args.batch,
        "timings": len(times),
        "median_seconds_per_batch": median,
        "best_seconds_per_batch": best,
        "mappings_per_second_median": args.batch / median,
        "mappings_per_second_best": args.batch / best,
        "valid_fraction": valid / (args.batch * args.batches),
        "allocator_tuned": allocator_tuned,
        "target_mappings_per_second": 1_000_000,
        "peers_mappings_per_second": "ZigZag 3.9.1 / Timeloop mapper: ~250-300",
        "sparse": {
            "densities": SPARSE,
            "template_params": SPARSE_PARAMS,
            "median_seconds_per_batch": sparse_median,
            "mappings_per_second_median": args.batch / sparse_median,
            "time_over_dense": sparse_median / median,
            "target_time_over_dense": 1.5,
        },
    }
    common.write_record(args.out, record)
    print(
        f"{record['mappings_per_second_median']:,.0f} mappings/s median "
        f"({record['mappings_per_second_best']:,.0f} best) on one core; "
        f"{median * 1e3:.1f} ms per batch of {args.batch:,}; sparse "
        f"{args.batch / sparse_median:,.0f} mappings/s ({sparse_median / median:.2f}x the dense "
        f"time); written to {args.out}"
    )


if __name__ == "__main__":
    common.interruptible(main)
