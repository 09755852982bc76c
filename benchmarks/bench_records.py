"""A digest of the results magnet computes, and the CPU seconds they take: run on the code
before and after a change meant only to make magnet faster (the evaluator, the mapper, the
planner), equal digests show that it left every result as it was.

Each part, run as a user runs it:

- ``quickstart``: a search of 48 trials (``--quickstart``; random sampler, seed 0) on 1 worker
  (``magnet search --workers 1``: one after another in one process, each design's mappings
  started from the designs before it, as a worker's are);
- ``magnet``: a search of ``--designs`` trials (60) of the built-in space, likewise;
- ``pipelines`` (unless ``--no-pipelines``): ResNet-50 pipelined and fused on
  simba-package-36, ResNet-18 pipelined on simba-package-16 and fused for latency on
  simba-package-36, ResNet-50 fused for latency on simba-package-16, each under mapper
  seeds 0 and 1 (``magnet.evaluate``, in this process).

For each part: a SHA-256 of its results (a search's trials in order: status, parameters,
records and metrics; a pipeline's record; no times) and its CPU seconds (a search's, its
process's start included). Two runs of the same code give the same digests (tested).
Writes ``benchmarks/results/records.json``.

    python benchmarks/bench_records.py                              # about 2 minutes
    python benchmarks/bench_records.py --quickstart 8 --designs 8 --no-pipelines --out /tmp/r.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import common

RESULTS = Path(__file__).resolve().parent / "results" / "records.json"
#: The pipelined and fused runs: (network, preset, how it runs).
PIPELINES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("resnet50", "simba-package-36", {"pipeline": True}),
    ("resnet50", "simba-package-36", {"fuse": True}),
    ("resnet18", "simba-package-16", {"pipeline": True}),
    ("resnet18", "simba-package-36", {"fuse": True, "objective": "latency"}),
    ("resnet50", "simba-package-16", {"fuse": True, "objective": "latency"}),
)
SEEDS = (0, 1)


def searched(space: str, trials: int, folder: Path) -> dict[str, Any]:
    """A random search of ``trials`` trials of ``space`` on 1 worker: its trials' digest."""
    from magnet.search import load_study

    storage = folder / f"{space}.journal"
    extra = ("--seed", "0", "--sampler", "random")
    _, cpu = common.search(Path(space), storage, trials, 1, *extra)
    digest = hashlib.sha256()
    told = sorted(load_study(space, str(storage)).trials(), key=lambda t: t.number)
    for t in told:
        head = {"status": t.status, "params": t.params, "metrics": t.metrics}
        digest.update(json.dumps(head, sort_keys=True, default=str).encode())
        digest.update(t.records_json().encode())
    return {"trials": len(told), "cpu_seconds": round(cpu, 2), "sha256": digest.hexdigest()}


def pipelines() -> dict[str, Any]:
    """The pipelined and fused runs (``PIPELINES`` x ``SEEDS``): their records' digest."""
    import magnet as mg
    from magnet.perf import tune_allocator

    tune_allocator()  # as the command line does
    digest = hashlib.sha256()
    cpu = 0.0
    for network, preset, how in PIPELINES:
        net = mg.load_workload(network, batch=1)
        for seed in SEEDS:
            start = time.process_time()
            result = mg.evaluate(
                net, mg.load_arch(preset), dataflow="os-local-ws", seed=seed, **how
            )
            cpu += time.process_time() - start
            digest.update(result.record().model_dump_json().encode())
    runs = len(PIPELINES) * len(SEEDS)
    return {"runs": runs, "cpu_seconds": round(cpu, 2), "sha256": digest.hexdigest()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quickstart", type=common.count, default=48, help="its designs")
    parser.add_argument("--designs", type=common.count, default=60, help="of `magnet`")
    parser.add_argument("--no-pipelines", action="store_true")
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()
    record: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="magnet-records-") as folder:
        for space, trials in (("quickstart", args.quickstart), ("magnet", args.designs)):
            record[space] = searched(space, trials, Path(folder))
            print(f"{space}: {json.dumps(record[space])}", flush=True)
    if not args.no_pipelines:
        record["pipelines"] = pipelines()
        print(f"pipelines: {json.dumps(record['pipelines'])}", flush=True)
    common.write_record(args.out, record)
    print(f"written to {args.out}")


if __name__ == "__main__":
    common.interruptible(main)
