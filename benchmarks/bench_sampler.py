"""The capacity-aware sampler and the random mapper (issue: ready for the design search, item 5).

Cases, each pinned to one core, CPU seconds (``time.process_time``, imports excluded):

* ``eyeriss_like``: the Timeloop input
  ``tests/data/reference/timeloop/eyeriss_like/replay_timeloop_2025-03/timeloop-input.yaml``
  (its architecture, layer, ERT and mapspace constraints), 1,010,000 random mappings;
* ``simba-chip`` with the ResNet-50 3x3 layer K=128, C=128, P=Q=28, R=S=3 under the dataflows
  ``free`` and ``os-local-ws``, 500,000 random mappings each.

Measured: (a) sampler only, mappings per CPU second (batches of 20,000 as the random mapper
draws them; best and median of the batches); (b) the random mapper end to end
(``get_mapper("random", samples=N).map(layer, design)``: sampling, pricing, structure checks),
valid mappings per CPU second (best of ``--repeats`` runs, and their median); and the same
through the command line, ``magnet map ... --mapper random --samples N --json`` (the mapper's
own wall-clock seconds, and the CPU seconds of the whole process). Target: >= 300,000 valid
mappings per second end to end. The machine may be shared: the best of several runs is the
figure least disturbed by other work.

Results: ``benchmarks/results/sampler.json``.

    python benchmarks/bench_sampler.py
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import time
from pathlib import Path

import common
import numpy as np

from magnet.design import build_design
from magnet.interop.timeloop import load_timeloop
from magnet.mapper import get_mapper
from magnet.mapper.mappers import CHUNK
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import sample
from magnet.model.evaluate import layer_view
from magnet.perf import tune_allocator
from magnet.templates import load_arch
from magnet.workload.layer import parse_layer

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "sampler.json"
TIMELOOP = "tests/data/reference/timeloop/eyeriss_like/replay_timeloop_2025-03/timeloop-input.yaml"
LAYER = "K=128,C=128,P=28,Q=28,R=3,S=3"
TARGET = 300_000
#: The sampler of commit 7dc99d8 (a loop over candidates per dimension), same machine: its
#: mappings per CPU second (median of batches of 20,000) and the random mapper's valid
#: mappings per second through the command line (the mapper's own seconds). For reference.
BEFORE = {
    "eyeriss_like": {"sampler_mappings_per_second": 25_600, "valid_per_second": 25_500},
    "simba-chip/free": {"sampler_mappings_per_second": 45_800, "valid_per_second": 36_700},
    "simba-chip/os-local-ws": {"sampler_mappings_per_second": 114_300, "valid_per_second": 98_200},
}


def cases() -> list[dict]:
    tl = load_timeloop(ROOT / TIMELOOP)
    simba = load_arch("simba-chip")
    layer = parse_layer(LAYER)
    out = [
        {
            "name": "eyeriss_like",
            "layer": tl.layer,
            "design": tl.design(None, None, noc="none"),
            "samples": 1_010_000,
            "cli": ["map", "--timeloop", str(ROOT / TIMELOOP)],
        }
    ]
    for dataflow in ("free", "os-local-ws"):
        out.append(
            {
                "name": f"simba-chip/{dataflow}",
                "layer": layer,
                "design": build_design(simba, dataflow),
                "samples": 500_000,
                "cli": ["map", "--arch", "simba-chip", "--layer", LAYER, "--dataflow", dataflow],
            }
        )
    return out


def sampler_only(case: dict, batches: int) -> dict:
    design = case["design"]
    space = Space(layer_view(case["layer"], design.arch), design.arch, design.dataflow)
    rng = np.random.default_rng(0)
    start = time.process_time()
    sample(space, CHUNK, rng)  # builds the space's tables
    first = time.process_time() - start
    times = []
    for _ in range(batches):
        start = time.process_time()
        sample(space, CHUNK, rng)
        times.append(time.process_time() - start)
    return {
        "batch": CHUNK,
        "batches": batches,
        "first_batch_cpu_seconds": first,
        "mappings_per_second_best": CHUNK / min(times),
        "mappings_per_second_median": CHUNK / statistics.median(times),
    }


def random_mapper(case: dict, repeats: int) -> dict:
    mapper = get_mapper("random", samples=case["samples"])
    times = []
    for _ in range(repeats):
        start = time.process_time()
        outcome = mapper.map(case["layer"], case["design"])
        times.append(time.process_time() - start)
    return {
        "samples": case["samples"],
        "mappings_evaluated": outcome.mappings_evaluated,
        "valid_mappings": outcome.valid_mappings,
        "runs": repeats,
        "cpu_seconds_best": min(times),
        "cpu_seconds_median": statistics.median(times),
        "valid_per_second": outcome.valid_mappings / min(times),
        "valid_per_second_median": outcome.valid_mappings / statistics.median(times),
        "best_edp": outcome.result.edp,
    }


def command_line(case: dict) -> dict:
    exe = shutil.which("magnet") or "magnet"
    args = [*case["cli"], "--mapper", "random", "--samples", str(case["samples"]), "--json"]
    done, user, system = common.run_timed([exe, *args], capture_output=True, text=True)
    stats = json.loads(done.stdout)["mapper"]  # the LayerRecord's MapperStats
    return {
        "command": "magnet " + " ".join(args).replace(str(ROOT) + "/", ""),
        "mapper_seconds": stats["seconds"],
        "valid_mappings": stats["valid_mappings"],
        "valid_per_second": stats["valid_mappings"] / stats["seconds"],
        "process_cpu_seconds": user + system,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=common.count, default=25, help="sampler batches timed")
    parser.add_argument(
        "--repeats", type=common.count, default=3, help="random mapper runs per case"
    )
    parser.add_argument("--out", type=common.out_file, default=RESULTS)
    args = parser.parse_args()

    tune_allocator()
    common.one_core()
    rows = []
    for case in cases():
        row = {
            "case": case["name"],
            "layer": case["layer"].shape_str(),
            "dataflow": case["design"].dataflow.name,
            "sampler": sampler_only(case, args.batches),
            "random_mapper": random_mapper(case, args.repeats),
            "command_line": command_line(case),
            "before": BEFORE[case["name"]],
        }
        rows.append(row)
        s, r, c = row["sampler"], row["random_mapper"], row["command_line"]
        print(
            f"{row['case']:<24} sampler {s['mappings_per_second_median']:>10,.0f}/s (best "
            f"{s['mappings_per_second_best']:,.0f}); random mapper {r['valid_per_second']:>9,.0f} "
            f"valid/CPU-s; CLI {c['valid_per_second']:>9,.0f} valid/s "
            f"({c['process_cpu_seconds']:.2f} CPU-s in all)",
            flush=True,
        )
    record = {
        "benchmark": "capacity-aware sampler and random mapper, one core",
        "rows": rows,
        "target_valid_per_second": TARGET,
        "met": all(r["random_mapper"]["valid_per_second"] >= TARGET for r in rows),
    }
    common.write_record(args.out, record)
    print(f"written to {args.out}")


if __name__ == "__main__":
    common.interruptible(main)
