"""Design-search benchmarks: sampler quality against the exact front, and throughput.

Quality: a space small enough to evaluate exhaustively (2,916 simba designs of
``benchmarks/search_quality.yaml`` on AlexNet's convolutions) is evaluated once, each design
mapped afresh (the space's ``reuse: false``: a design's values then do not depend on which
designs were evaluated before it), and cached, uncommitted, in
``benchmarks/results/search_quality_table.json`` until magnet's code changes; then
NSGA-II, TPE and random search, as magnet's driver builds them, ask for designs and are told
the tabled results as the driver tells them (a design proposed again is a repeat, not an
evaluation; an infeasible one is pruned), ``--seeds`` seeds each (3 by default). Reported:
the hypervolume (magnet's: log10 objectives, reference one decade beyond the worst feasible
design) each reaches after 1 %, 5 % and 10 % of the distinct designs, as a fraction of the
exact front's.
Target: 95 % within 10 %.

Throughput: the built-in spaces ``quickstart`` and 200 designs of ``magnet``
on ResNet-50, each with 1 and 2 workers (trials per second, parallel efficiency), and a
1,000-design ResNet-50 search of ``magnet.yaml`` on 2 workers (target: at most 10 minutes
on this 2-core machine).

    python benchmarks/bench_search.py                  # everything (about 10 minutes)
    python benchmarks/bench_search.py --skip-magnet    # without the magnet.yaml searches

Results go to ``benchmarks/results/search.json``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import itertools
import json
import shutil
import tempfile
import time
from pathlib import Path

import common
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results"
QUALITY_SPACE = HERE / "search_quality.yaml"
TABLE = RESULTS / "search_quality_table.json"


# ---- quality ---------------------------------------------------------------------------------
def _designs(space) -> list[dict]:
    from magnet.search.driver import grid

    axes = grid(space)
    names = list(axes)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*axes.values())]


def _evaluate(args: tuple) -> dict:
    space_path, point = args
    from magnet.search import load_space
    from magnet.search.design_space import constraint_violations
    from magnet.search.job import DesignJob, evaluate_design

    space = load_space(space_path)
    params = {**space.fixed(), **{k: v for k, v in point.items() if k != "dataflow"}}
    flow = point.get("dataflow", space.dataflows()[0])
    if constraint_violations(space, params):
        return {"point": point, "status": "infeasible", "metrics": {}}
    job = DesignJob.of(space, params, flow)
    r = evaluate_design(job)
    return {"point": point, "status": r.status, "metrics": r.metrics}


def exhaustive_table(workers: int) -> list[dict]:
    from magnet.search import load_space

    # the table is valid for this space, its network and this version of magnet's model (the
    # packages a design's evaluation runs through)
    digest = hashlib.sha256()
    model = ["workload", "arch", "cost", "model", "dataflow", "templates", "mapper"]
    sources = [
        QUALITY_SPACE,
        HERE / "quality_net.yaml",
        *sorted(f for pkg in model for f in (REPO / "magnet" / pkg).rglob("*.py")),
        REPO / "magnet" / "mapping.py",
        REPO / "magnet" / "search" / "job.py",
        REPO / "magnet" / "search" / "design_space.py",
    ]
    for path in sources:
        digest.update(path.read_bytes())
    key = digest.hexdigest()
    if TABLE.exists():
        cached = json.loads(TABLE.read_text())
        if cached.get("key_sha256") == key:
            return cached["designs"]
    space = load_space(QUALITY_SPACE)
    points = _designs(space)
    print(f"evaluating all {len(points)} designs of {QUALITY_SPACE.name} ({workers} processes)")
    start = time.perf_counter()
    with concurrent.futures.ProcessPoolExecutor(workers) as pool:
        rows = list(pool.map(_evaluate, [(str(QUALITY_SPACE), p) for p in points], chunksize=8))
    common.write_whole(
        TABLE,
        json.dumps({"key_sha256": key, "seconds": time.perf_counter() - start, "designs": rows}),
    )
    return rows


def quality(workers: int, seeds: int) -> dict:
    import optuna
    from optuna.trial import TrialState

    from magnet.search import load_space
    from magnet.search import pareto as pf
    from magnet.search.driver import (
        REPEATS_BEFORE_NEW,
        design_key,
        make_sampler,
        suggest,
        unseen_design,
    )

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = load_space(QUALITY_SPACE)
    rows = exhaustive_table(workers)
    objectives = [o.metric for o in space.objectives]
    directions = space.directions()
    table = {json.dumps(r["point"], sort_keys=True): r for r in rows}
    ok = [r for r in rows if r["status"] == "ok"]
    points = pf.to_minimised_log([[r["metrics"][m] for m in objectives] for r in ok], directions)
    ref = pf.reference_point(points)
    exact = pf.hypervolume(points, ref)
    n = len(rows)
    budgets = {"1%": n // 100, "5%": n // 20, "10%": n // 10}
    out: dict = {
        "designs": n,
        "feasible": len(ok),
        "exact_hypervolume": exact,
        "exact_front": int(pf.nondominated(points).sum()),
        "samplers": {},
    }
    for name in ("nsga2", "tpe", "random"):
        runs = []
        for seed in range(seeds):
            s = space.model_copy(update={"sampler": name})
            study = optuna.create_study(
                directions=directions, sampler=make_sampler(s, seed, budgets["10%"])
            )
            seen: list[list[float]] = []
            history = []
            # told as magnet's driver tells them (magnet.search.driver): a design the study
            # holds is a PRUNED repeat with its constraint, not evaluated again; after
            # REPEATS_BEFORE_NEW in a row an unseen design is queued; an infeasible design
            # is PRUNED with its constraint; the budget counts distinct designs
            told: dict[str, float] = {}  # design key -> its constraint
            rng = np.random.default_rng([seed, 0])
            in_a_row = 0
            while len(history) < budgets["10%"]:
                trial = study.ask()
                params, flow = suggest(trial, s)
                key = design_key(trial.params)
                if key in told:
                    trial.set_constraint("feasible", told[key])
                    study.tell(trial, state=TrialState.PRUNED)
                    in_a_row += 1
                    if in_a_row % REPEATS_BEFORE_NEW == 0:
                        unseen = unseen_design(s, set(told), rng)
                        assert unseen is not None  # 291 of 2,916 designs asked at most
                        study.enqueue_trial(unseen)
                    continue
                in_a_row = 0
                point = {k: params[k] for k in space.ranges()}
                if len(space.dataflows()) > 1:
                    point["dataflow"] = flow
                row = table[json.dumps(point, sort_keys=True)]
                good = row["status"] == "ok"
                told[key] = 0.0 if good else 1.0
                trial.set_constraint("feasible", told[key])
                if good:
                    values = [row["metrics"][m] for m in objectives]
                    study.tell(trial, values)
                    seen.append(pf.to_minimised_log([values], directions)[0].tolist())
                else:
                    study.tell(trial, state=TrialState.PRUNED)
                history.append(pf.hypervolume(np.array(seen), ref) / exact if seen else 0.0)
            runs.append({b: history[k - 1] for b, k in budgets.items()})
        out["samplers"][name] = {
            b: {
                "mean": float(np.mean([r[b] for r in runs])),
                "min": float(np.min([r[b] for r in runs])),
            }
            for b in budgets
        }
        print(
            f"{name:7s} "
            + "  ".join(f"{b}: {out['samplers'][name][b]['mean'] * 100:.1f}%" for b in budgets)
        )
    out["budgets"] = budgets
    out["target"] = "95 % of the exact hypervolume within 10 % of the evaluations"
    return out


# ---- throughput ------------------------------------------------------------------------------
def _run_search(space: Path, trials: int, workers: int, folder: Path) -> dict:
    storage = folder / f"{space.stem}-{trials}-{workers}.journal"
    wall, cpu = common.search(space, storage, trials, workers)
    from magnet.search import load_study

    study = load_study(space.stem, str(storage))
    counts = study.counts()
    return {
        "space": space.name,
        "trials": trials,
        "workers": workers,
        "wall_seconds": wall,
        "cpu_seconds_children": cpu,
        # the distinct designs decided: mapped (ok, infeasible) or dominated by their bounds
        "trials_per_second": counts["designs"] / wall,
        "designs": counts["designs"],
        "ok": counts["ok"],
        "infeasible": counts["infeasible"],
        "dominated": counts["dominated"],
        "failed": counts["failed"],
        "front": len(study.pareto_front()),
    }


def throughput(skip_magnet: bool) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="magnet-bench-"))
    try:
        quick = REPO / "search_spaces" / "quickstart.yaml"
        one = _run_search(quick, 48, 1, folder)
        two = _run_search(quick, 48, 2, folder)
        print(
            f"quickstart: {one['trials_per_second']:.2f} trials/s on 1 worker, "
            f"{two['trials_per_second']:.2f} on 2"
        )
        out = {
            "quickstart_1_worker": one,
            "quickstart_2_workers": two,
            "parallel_efficiency": two["trials_per_second"] / (2 * one["trials_per_second"]),
        }
        if not skip_magnet:
            magnet = REPO / "search_spaces" / "magnet.yaml"
            for workers in (1, 2):
                run = _run_search(magnet, 200, workers, folder)
                out[f"magnet_resnet50_200_designs_{workers}_worker{'s' * (workers > 1)}"] = run
                print(
                    f"magnet.yaml, ResNet-50, 200 designs: {run['trials_per_second']:.2f} "
                    f"trials/s on {workers} worker(s)"
                )
            out["magnet_parallel_efficiency"] = out["magnet_resnet50_200_designs_2_workers"][
                "trials_per_second"
            ] / (2 * out["magnet_resnet50_200_designs_1_worker"]["trials_per_second"])
            big = _run_search(magnet, 1000, 2, folder)
            big["target_wall_seconds"] = 600
            out["magnet_resnet50_1000_designs_2_workers"] = big
            print(f"magnet.yaml, ResNet-50, 1000 designs, 2 workers: {big['wall_seconds']:.0f} s")
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=common.count, default=3)
    parser.add_argument("--workers", type=common.count, default=2, help="processes for the table")
    parser.add_argument(
        "--skip-magnet",
        action="store_true",
        help="skip the magnet.yaml searches on ResNet-50 (about 5 minutes)",
    )
    parser.add_argument("--out", type=common.out_file, default=RESULTS / "search.json")
    args = parser.parse_args()
    record = {
        "quality": quality(args.workers, args.seeds),
        "throughput": throughput(args.skip_magnet),
    }
    common.write_record(args.out, record)
    print(f"written to {args.out}")


if __name__ == "__main__":
    common.interruptible(main)
