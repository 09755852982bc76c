"""Distinct designs per trial, and the time answering repeats from the study saves.

Runs ``magnet search`` on the built-in space ``magnet`` (ResNet-50) for ``--trials`` designs with
each sampler, and reads the study: trials asked, distinct designs evaluated, repeats
answered from the study (PRUNED ``repeat`` trials), wall and CPU seconds, and the mean
seconds of one design's evaluation. With ``--before REF`` it also runs the same command
on the code of git revision REF, which evaluated every trial it asked, and counts the
distinct designs among its trials and the seconds its repeated trials took. Both sides run
from git worktrees of committed revisions (this one: HEAD), so editing the working tree
during the run changes nothing.

    python benchmarks/bench_repeats.py                      # 1,000 designs, NSGA-II and TPE
    python benchmarks/bench_repeats.py --trials 200 --before e8583ec

Writes ``benchmarks/results/repeats.json``. Uses every core it is given (``--workers``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import common

REPO = Path(__file__).resolve().parents[1]


def _run(code: Path, storage: Path, sampler: str, trials: int, workers: int) -> dict[str, float]:
    # search_spaces/ at the top level, except from 2026-11-25 until the layout of issue 34
    # (item 5), when the spaces lived in the package (magnet/spaces)
    space = next(p for p in (code / "search_spaces", code / "magnet" / "spaces") if p.is_dir())
    space = space / "magnet.yaml"
    cmd = [sys.executable, "-m", "magnet.cli", "search", str(space), "--storage", str(storage)]
    cmd += ["--study", sampler, "--sampler", sampler, "--trials", str(trials)]
    cmd += ["--workers", str(workers), "--no-report"]
    env = {**os.environ, "PYTHONPATH": str(code)}
    start = time.perf_counter()
    _, user_s, system_s = common.run_timed(cmd, cwd=code, env=env, capture_output=True)
    return {"wall_s": time.perf_counter() - start, "cpu_s": user_s + system_s}


def _read(storage: Path, sampler: str) -> dict[str, Any]:
    """Counts from the journal with Optuna alone (the old code's studies read the same)."""
    import optuna

    from magnet.search.storage import open_storage

    study = optuna.load_study(study_name=sampler, storage=open_storage(str(storage), create=False))
    trials = study.get_trials(deepcopy=False)
    attrs = [t.user_attrs.get("magnet") or {} for t in trials]
    evaluated = [
        (t, a)
        for t, a in zip(trials, attrs, strict=True)
        if a.get("status") in ("ok", "infeasible")
    ]
    keys = [json.dumps(t.params, sort_keys=True) for t, _ in evaluated]
    seconds = [a.get("seconds") or 0.0 for _, a in evaluated]
    first: dict[str, int] = {}
    repeat_s = 0.0
    for key, s in zip(keys, seconds, strict=True):
        if key in first:
            repeat_s += s  # the old code evaluated a repeat again (its layers from the cache)
        first.setdefault(key, 1)
    return {
        "trials": len(trials),
        "evaluated": len(evaluated),
        "distinct_designs": len(first),
        "repeats_answered": sum(a.get("status") == "repeat" for a in attrs),
        "evaluation_s": sum(seconds),
        "mean_design_s": sum(seconds) / max(1, len(evaluated)),
        "repeated_evaluations_s": repeat_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=common.count, default=1000)
    parser.add_argument("--workers", type=common.count, default=2)
    parser.add_argument("--samplers", default="nsga2,tpe")
    parser.add_argument("--before", default=None, help="git revision of the code to compare")
    args = parser.parse_args()
    results: dict[str, Any] = {"trials": args.trials, "workers": args.workers, "runs": []}
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    revisions = {f"this ({head})": head}
    if args.before:
        revisions[f"before ({args.before})"] = args.before
    with tempfile.TemporaryDirectory(prefix="bench-repeats-") as scratch:
        codes = {}
        for label, revision in revisions.items():
            codes[label] = Path(scratch) / revision
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(codes[label]), revision],
                cwd=REPO,
                check=True,
                capture_output=True,
            )
        try:
            for sampler in args.samplers.split(","):
                for label, code in codes.items():
                    storage = Path(scratch) / f"{sampler}-{len(results['runs'])}.journal"
                    timing = _run(code, storage, sampler, args.trials, args.workers)
                    row = {"code": label, "sampler": sampler, **timing, **_read(storage, sampler)}
                    row["designs_per_trial"] = row["distinct_designs"] / max(1, row["trials"])
                    results["runs"].append(row)
                    print(json.dumps(row), flush=True)
        finally:
            for code in codes.values():
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(code)], cwd=REPO, check=False
                )
    common.write_record(REPO / "benchmarks" / "results" / "repeats.json", results)


if __name__ == "__main__":
    common.interruptible(main)
