"""A design search with and without mapping reuse and bounds (issue 33): wall time and the front.

Setup: ``--trials`` designs (default 1,000) of the built-in space ``magnet`` on ResNet-50,
``--workers`` (default 2), one seed, run twice through the command line: as shipped
(``mapper.reuse`` true: each worker answers and warm-starts layers from the designs it
evaluated before, ``magnet.mapper.warm``; ``bounds`` true: a design whose bounds the front
beats is not mapped, ``magnet.search.bounds``) and with ``reuse: false`` and ``bounds:
false``. Reported: each run's wall seconds, the designs skipped by their bounds, the share
of layer rows searched afresh, warm-started and answered exactly, and the hypervolume of
each front (log10 objectives, reference one decade beyond the worst feasible design of
both), the shipped search's as a share of the search without. Targets: 1,000 designs in
<= 120 s on 2 workers; the front's hypervolume >= 99 % of the search without reuse or
bounds.
Results go to ``benchmarks/results/reuse_search.json``.

    python benchmarks/bench_reuse_search.py [--trials 1000] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import common
import numpy as np

from magnet.search import load_study
from magnet.search import pareto as pf

RESULTS = Path(__file__).resolve().parent / "results" / "reuse_search.json"


def main() -> None:
    """Both searches, their times, starts and fronts."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=common.count, default=1000)
    parser.add_argument("--workers", type=common.count, default=2)
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as folder:
        points = {}
        for name, reuse in (("reuse", True), ("fresh", False)):
            space = common.space_file("magnet", Path(folder) / f"magnet-{name}.yaml", reuse)
            storage = Path(folder) / f"{name}.journal"
            seconds, _ = common.search(space, storage, args.trials, args.workers, "--seed", "0")
            print(f"{name}: {seconds:.0f} s", flush=True)
            study = load_study("magnet", str(storage))
            trials = study.feasible()
            starts: dict[str, int] = {}
            for t in trials:
                for row in t.records[0].layers if t.records else ():
                    if row.mapping_start is not None:
                        starts[row.mapping_start] = starts.get(row.mapping_start, 0) + 1
            points[name] = pf.to_minimised_log(
                [[t.values[k] for k in study.objectives] for t in trials],
                study.directions,
            )
            runs[name] = {
                "wall_s": seconds,
                "feasible": len(trials),
                "dominated": study.counts()["dominated"],
                "mapping_starts": starts,
            }
        reference = pf.reference_point(np.vstack(list(points.values())))
        for name, p in points.items():
            runs[name]["hypervolume"] = pf.hypervolume(p, reference)
    record = {
        "benchmark": f"{args.trials} designs of magnet on ResNet-50, {args.workers} workers",
        "runs": runs,
        "hypervolume_share": runs["reuse"]["hypervolume"] / runs["fresh"]["hypervolume"],
        "speedup": runs["fresh"]["wall_s"] / runs["reuse"]["wall_s"],
        "targets": "1,000 designs in <= 120 s on 2 workers; hypervolume >= 99 % of without "
        "reuse or bounds",
    }
    common.write_record(args.out, record)
    print(json.dumps({k: v for k, v in record.items() if k != "runs"}, indent=1))
    for name, r in runs.items():
        print(
            name,
            f"{r['wall_s']:.0f} s",
            r["mapping_starts"],
            f"{r['feasible']} feasible, {r['dominated']} dominated",
        )


if __name__ == "__main__":
    common.interruptible(main)
