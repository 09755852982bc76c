"""What the benchmarks share: one core, the machine they ran on, a command's CPU seconds, a
search from the command line and the JSON record they write.

Each ``benchmarks/bench_*.py`` is run as a script (``python benchmarks/bench_NAME.py``), so
this folder is on ``sys.path`` and ``import common`` finds this module.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def one_core() -> None:
    """Pin this process (and the processes it starts) to the first core it may use."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def machine() -> str:
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )


def run_timed(cmd: list[str], **kwargs: Any) -> tuple[subprocess.CompletedProcess, float, float]:
    """``subprocess.run(cmd, check=True, **kwargs)``, and the user and system CPU seconds
    the command took (as ``/usr/bin/time -f "%U %S"`` reports them)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(cmd, check=True, **kwargs)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def search_command(
    space: Path | str, storage: Path, trials: int, workers: int, *extra: str
) -> list[str]:
    """``magnet search SPACE`` with its storage, ``--no-report`` and ``extra`` arguments."""
    cmd = [sys.executable, "-m", "magnet.cli", "search", str(space), "--trials", str(trials)]
    return [*cmd, "--workers", str(workers), "--storage", str(storage), "--no-report", *extra]


def space_file(space: str, path: Path, reuse: bool) -> Path:
    """The built-in ``space`` written to ``path`` with its mapping reuse and bounds on or off
    (``mapper.reuse`` and ``bounds``; its name, and so its study's, kept)."""
    import yaml

    from magnet.search.design_space import builtin_spaces

    data = yaml.safe_load(builtin_spaces()[space].read_text())
    data["mapper"]["reuse"] = reuse
    data["bounds"] = reuse
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data))
    return path


def search(
    space: Path, storage: Path, trials: int, workers: int, *extra: str
) -> tuple[float, float]:
    """``search_command``, its output discarded; its wall seconds and the CPU seconds of the
    processes it ran."""
    cmd = search_command(space, storage, trials, workers, *extra)
    start = time.perf_counter()
    _, user, system = run_timed(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, user + system


def count(value: str) -> int:
    """A benchmark's count of runs, seeds, designs, trials or workers (an ``argparse`` type:
    a bad one ends the run before any work, exit 2): a whole number >= 1."""
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number >= 1")
    return number


def out_file(value: str) -> Path:
    """``--out`` of every benchmark (an ``argparse`` type, so a bad one ends the run before
    any work, exit 2): the JSON file the record goes to: a new one, or a record a benchmark
    wrote before (``write_record``'s, which it replaces), never someone else's file, a
    folder, or a path through a file."""
    path = Path(value)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a folder: give the JSON file to write")
    blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise argparse.ArgumentTypeError(f"{blocked} is a file, not a folder")
    if path.exists() and not _a_record(path):
        raise argparse.ArgumentTypeError(
            f"{value} exists and is not a benchmark's record: give a new path "
            "(the file is left as it is)"
        )
    return path


def _a_record(path: Path) -> bool:
    """Whether ``path`` holds a record ``write_record`` wrote (stamped with the machine
    and the date)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and {"machine", "date"} <= data.keys()


def write_record(path: Path, record: dict[str, Any]) -> None:
    """``record``, stamped with the machine and the date, as indented JSON at ``path`` (its
    folder made; ``write_whole``)."""
    record = {**record, "machine": machine(), "date": time.strftime("%Y-%m-%d")}
    write_whole(path, json.dumps(record, indent=1) + "\n")


def write_whole(path: Path, text: str) -> None:
    """``text`` at ``path`` (its folder made), through a temporary file and a rename: whole
    or not at all, even when the benchmark is stopped half-way."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(text)
    os.replace(temp, path)


def interruptible(main: Callable[[], None]) -> None:
    """Run a benchmark's ``main``; Ctrl-C ends it with one line and exit 130, like the
    ``magnet`` command (a benchmark writes its record whole, at the end: nothing is left
    half-written)."""
    try:
        main()
    except KeyboardInterrupt:
        print("interrupted: no record written", file=sys.stderr)
        raise SystemExit(130) from None
