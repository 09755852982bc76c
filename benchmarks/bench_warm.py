"""Mapping reuse across designs (issue 33): mapper evaluations saved and EDP lost per layer.

Setup: designs of the built-in space ``magnet`` as a search visits them: the first drawn at
random, each next one a copy of an earlier one with one or two parameters changed (as
NSGA-II's offspring are; the dataflow is one of them); ResNet-50 at batch 1, the space's mapper
(fast, 1,000 samples, 20 rounds). Each design's layer shapes are mapped twice: afresh
(``map_network`` without a store) and with a ``WarmStore`` of the designs before it
(exact answers and warm starts). Per layer shape: the evaluations of each, and the warm
mapping's EDP over the fresh one's. Goal: >= 5x fewer evaluations for <= 1 % EDP (mean).
Results go to ``benchmarks/results/warm.json``.

    python benchmarks/bench_warm.py [--designs 24]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path
from typing import Any

import common

import magnet as mg
from magnet.mapper.warm import WarmStore
from magnet.mapper.whole_network import map_network
from magnet.perf import tune_allocator
from magnet.search import load_space
from magnet.search.job import DesignJob, design_of

RESULTS = Path(__file__).resolve().parent / "results" / "warm.json"


def designs(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` parameter sets of ``magnet``: one at random, then each a copy of an
    earlier one with one or two parameters redrawn."""
    space = load_space("magnet")
    ranges = space.ranges()
    rng = random.Random(seed)
    flows = [str(f) for f in space.dataflows()]
    values = {name: list(r.values() or ()) for name, r in ranges.items()}
    values["dataflow"] = flows
    chosen = [{name: rng.choice(v) for name, v in values.items()}]
    while len(chosen) < count:
        child = dict(rng.choice(chosen))
        for name in rng.sample(sorted(values), rng.choice((1, 2))):
            child[name] = rng.choice(values[name])
        chosen.append(child)
    return chosen


def main() -> None:
    """Map every design afresh and warm; write per-layer evaluations and EDP ratios."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--designs", type=common.count, default=24)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()
    tune_allocator()
    common.one_core()
    space = load_space("magnet")
    net = mg.load_workload("resnet50", batch=1)
    options = space.mapper.options
    store = WarmStore()
    rows: list[dict[str, Any]] = []
    seconds = {"fresh": 0.0, "warm": 0.0}
    mapped = 0
    for number, chosen in enumerate(designs(args.designs, args.seed)):
        dataflow = chosen.pop("dataflow")
        job = DesignJob.of(space, space.design(chosen), dataflow, number=number)
        design = design_of(job)
        if not isinstance(design, mg.Design):
            continue
        start = time.process_time()
        fresh = map_network(net, design, "fast", stop_on_failure=False, **options)
        seconds["fresh"] += time.process_time() - start
        start = time.process_time()
        warm = map_network(net, design, "fast", stop_on_failure=False, warm=store, **options)
        seconds["warm"] += time.process_time() - start
        mapped += 1
        for key, cold in fresh.outcomes.items():
            hot = warm.outcomes[key]
            if cold.result is None or hot.result is None:
                continue
            rows.append(
                {
                    "design": number,
                    "layer": cold.layer.name,
                    "start": hot.result.start,
                    "fresh_evaluations": cold.mappings_evaluated,
                    "warm_evaluations": hot.mappings_evaluated,
                    "edp_ratio": hot.result.edp / cold.result.edp,
                }
            )
    by_start: dict[str, Any] = {}
    for start in ("searched", "warm", "exact"):
        part = [r for r in rows if r["start"] == start]
        if part:
            by_start[start] = {
                "layers": len(part),
                "fresh_evaluations": sum(r["fresh_evaluations"] for r in part),
                "warm_evaluations": sum(r["warm_evaluations"] for r in part),
                "edp_ratio_mean": statistics.mean(r["edp_ratio"] for r in part),
                "edp_ratio_worst": max(r["edp_ratio"] for r in part),
            }
    reused = [r for r in rows if r["start"] != "searched"]
    fresh_evals = sum(r["fresh_evaluations"] for r in reused)
    warm_evals = sum(r["warm_evaluations"] for r in reused)
    record = {
        "benchmark": "mapping reuse across designs of the space magnet, ResNet-50 batch 1",
        "designs": args.designs,
        "designs_mapped": mapped,
        "seed": args.seed,
        "layers": len(rows),
        "by_start": by_start,
        "reused_evaluations_saved": fresh_evals / max(1, warm_evals),
        "reused_edp_ratio_mean": (
            statistics.mean(r["edp_ratio"] for r in reused) if reused else None
        ),
        "all_edp_ratio_mean": statistics.mean(r["edp_ratio"] for r in rows),
        "cpu_s": seconds,
        "goal": ">= 5x fewer evaluations for <= 1 % EDP (mean) on the layers reused",
        "rows": rows,
    }
    common.write_record(args.out, record)
    for start, part in by_start.items():
        print(
            f"{start:<9} {part['layers']:>4} layer shapes: {part['fresh_evaluations']:,} -> "
            f"{part['warm_evaluations']:,} evaluations, EDP x{part['edp_ratio_mean']:.4f} "
            f"(worst x{part['edp_ratio_worst']:.4f})"
        )
    print(
        f"reused: {record['reused_evaluations_saved']:.1f}x fewer evaluations; CPU-s fresh "
        f"{seconds['fresh']:.1f}, with reuse {seconds['warm']:.1f}; written to {args.out}"
    )


if __name__ == "__main__":
    common.interruptible(main)
