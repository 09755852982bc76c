"""Parallel efficiency of a search on 2 workers, its start-up reported apart.

For the built-in spaces ``quickstart`` (its 48 designs on ResNet-18) and ``magnet`` (100
designs on ResNet-50), a search with ``--workers 1`` (in the driver's process) and one with
``--workers 2`` (a local Ray cluster) of the same designs: the random sampler with one seed
asks for the same designs whatever the order results come back in (checked: the two runs'
designs are compared). Each search runs as a user runs it (``magnet search``); from its
study:

- the evaluation phase: from the first trial's start (asked, after the pool is ready) to
  the last one's end;
- the start-up: what the driver says its Ray workers took to be ready (cluster started,
  every worker's imports done), apart from the evaluation;
- parallel efficiency = evaluation phase on 1 worker / (2 x evaluation phase on 2 workers);
- busy share = the designs' seconds on the workers / (workers x evaluation phase);
- with the space's own sampler (NSGA-II) too, as a user runs it (its designs then differ
  between the runs: the sampler sees results in another order).

A Ray task's round trip (a task that returns at once, one after the other) is measured on
the same cluster, for the batch size rule in ``magnet/search/workers.py``.

``--without-reuse`` runs the random sampler's pairs once more with the space's mapping reuse
and bounds off (``mapper.reuse`` and ``bounds`` false): each design then costs the same
wherever it runs, so that pair's efficiency is what Ray and the driver leave, and the gap to
the pair with reuse is what each worker's own, colder store costs.

Each search runs ``--repeats`` times (3), 1 and 2 workers in turns, the median phase
reported, and each turn's efficiency beside it.

    python benchmarks/bench_workers.py                 # about 20 minutes
    python benchmarks/bench_workers.py --skip-magnet   # quickstart only (about 4 minutes)
    python benchmarks/bench_workers.py --without-reuse # and the random pairs without reuse

Writes ``benchmarks/results/workers.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import common

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
READY = re.compile(r"Ray workers ready after ([0-9.]+) s")
#: Runs of each search (``--repeats``): the median is reported.
REPEATS = 3


def run(
    space: str, trials: int, workers: int, sampler: str | None, folder: Path, reuse: bool = True
) -> dict:
    """One ``magnet search`` and what its study says of its evaluation phase."""
    from magnet.search import load_study

    storage = folder / f"{space}-{workers}-{sampler or 'own'}-{reuse}.journal"
    storage.unlink(missing_ok=True)
    extra = ["--seed", "0"] + ([] if sampler is None else ["--sampler", sampler])
    given = space if reuse else common.space_file(space, folder / f"{space}-fresh.yaml", False)
    cmd = common.search_command(given, storage, trials, workers, *extra)
    start = time.perf_counter()
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    ready = READY.search(done.stderr)
    study = load_study(space, str(storage))
    evaluated = [t for t in study.trials() if t.seconds is not None and t.status != "repeat"]
    first = min(t.started for t in study.trials() if t.started is not None)
    last = max(t.finished for t in study.trials() if t.finished is not None)
    phase = (last - first).total_seconds()
    busy = sum(t.seconds for t in evaluated)
    return {
        "space": space,
        "reuse": reuse,
        "trials": trials,
        "workers": workers,
        "sampler": sampler or "the space's",
        "wall_seconds": round(wall, 2),
        "startup_seconds": float(ready.group(1)) if ready else 0.0,
        "evaluation_seconds": round(phase, 2),
        "designs_evaluated": len(evaluated),
        "worker_seconds": round(busy, 2),
        "busy_share": round(busy / (workers * phase), 3),
        "designs": sorted(json.dumps(t.params, sort_keys=True) for t in evaluated),
    }


def median_of(runs: list[dict]) -> dict:
    """The run of the median evaluation phase among ``runs`` (each phase listed: on this
    machine one search's phase varies by 5-10 % from run to run)."""
    ordered = sorted(runs, key=lambda r: r["evaluation_seconds"])
    return {**ordered[len(ordered) // 2], "phases": [r["evaluation_seconds"] for r in ordered]}


def pair(
    space: str, trials: int, sampler: str | None, folder: Path, repeats: int, reuse: bool = True
) -> dict:
    """The same search on 1 and on 2 workers, ``repeats`` times each, taken in turns (1, 2,
    1, 2, ...: a machine that slows down or speeds up over the minutes weighs on both), and
    the efficiency of the second: of the median phases, and of each turn's pair."""
    ones, twos = [], []
    for _ in range(repeats):
        ones.append(run(space, trials, 1, sampler, folder, reuse))
        twos.append(run(space, trials, 2, sampler, folder, reuse))
    pairs = [
        o["evaluation_seconds"] / (2 * t["evaluation_seconds"])
        for o, t in zip(ones, twos, strict=True)
    ]
    one, two = median_of(ones), median_of(twos)
    same = one.pop("designs") == two.pop("designs")
    efficiency = one["evaluation_seconds"] / (2 * two["evaluation_seconds"])
    print(
        f"{space} ({one['sampler']} sampler{'' if reuse else ', without reuse'}): "
        f"1 worker {one['evaluation_seconds']:.1f} s, "
        f"2 workers {two['evaluation_seconds']:.1f} s + {two['startup_seconds']:.1f} s start-up: "
        f"efficiency {efficiency:.3f}, by turn {', '.join(f'{e:.3f}' for e in pairs)} "
        f"(same designs: {same})"
    )
    return {
        "one_worker": one,
        "two_workers": two,
        "same_designs": same,
        "parallel_efficiency": round(efficiency, 3),
        "parallel_efficiency_by_turn": [round(e, 3) for e in pairs],
        "parallel_efficiency_with_startup": round(
            one["wall_seconds"] / (2 * two["wall_seconds"]), 3
        ),
    }


def round_trip_ms(tasks: int = 300) -> float:
    """A Ray task's round trip on a local 2-worker cluster, one task after the other."""
    from magnet.search.workers import RayPool

    pool = RayPool(2)
    try:
        echo = pool.ray.remote(lambda x: x)
        pool.ray.get([echo.remote(i) for i in range(20)])
        start = time.perf_counter()
        for i in range(tasks):
            pool.ray.get(echo.remote(i))
        return (time.perf_counter() - start) / tasks * 1000
    finally:
        pool.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-magnet", action="store_true", help="quickstart only")
    parser.add_argument("--magnet-trials", type=common.count, default=100)
    parser.add_argument(
        "--without-reuse", action="store_true", help="the random pairs again, reuse off"
    )
    parser.add_argument("--repeats", type=common.count, default=REPEATS, help="runs of each search")
    parser.add_argument("--out", type=common.out_file, default=RESULTS / "workers.json")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="magnet-bench-workers-"))
    try:
        record: dict = {"ray_task_round_trip_ms": round(round_trip_ms(), 2)}
        print(f"Ray task round trip: {record['ray_task_round_trip_ms']} ms")
        record["quickstart_random"] = pair("quickstart", 48, "random", folder, args.repeats)
        record["quickstart_nsga2"] = pair("quickstart", 48, None, folder, args.repeats)
        if not args.skip_magnet:
            record["magnet_random"] = pair(
                "magnet", args.magnet_trials, "random", folder, args.repeats
            )
            record["magnet_nsga2"] = pair("magnet", args.magnet_trials, None, folder, args.repeats)
        if args.without_reuse:
            record["quickstart_random_without_reuse"] = pair(
                "quickstart", 48, "random", folder, args.repeats, reuse=False
            )
            if not args.skip_magnet:
                record["magnet_random_without_reuse"] = pair(
                    "magnet", args.magnet_trials, "random", folder, args.repeats, reuse=False
                )
        record["target"] = "parallel efficiency >= 0.9 on 2 workers, start-up apart"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    common.write_record(args.out, record)
    print(f"written to {args.out}")


if __name__ == "__main__":
    common.interruptible(main)
