"""How fast the dashboard answers on a big study while a search appends to it.

Makes (once, cached in ``--cache``) a 3,000-trial study of ``benchmarks/dashboard_space.yaml``
with ``magnet search``. Then, for this revision (HEAD) and with ``--before REF`` for the
code of git revision REF (both run from git worktrees of committed revisions), on a copy of
that journal: starts ``magnet dashboard``, starts a search that appends ``--append`` more
designs to the study, and asks the dashboard for every study page and API request in turn,
as one user's browser would, until the search ends. Each request's wall time is recorded;
the record gives per request its count, median, 95th percentile and maximum, and the same
over all requests, and the share above 300 ms.

With ``--clone N`` the study is first cloned to N trials through Optuna's public API
(``clone_study``: each finished trial in turn, its values scattered a little), as issue 33
measured a 100,000-trial study. Before the dashboard, ``magnet pareto``, ``export`` (CSV,
JSON) and ``report`` are timed on a copy of the study's journal, with their peak memory
(``pareto`` reading the whole journal, then its values index made, up to date, and grown by
``--append`` trials; its output checked against the whole journal's each time); the record
also has the dashboard's first answer after its start, its peak memory and the largest
answer of each request. ``--cli-only`` times the command line alone.

    python benchmarks/bench_dashboard.py                     # HEAD only
    python benchmarks/bench_dashboard.py --before 114d878    # and the code before v2
    python benchmarks/bench_dashboard.py --trials 300 --clone 100000 --append 100 \
        --out benchmarks/results/dashboard-100k.json

Writes ``benchmarks/results/dashboard.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import common
import numpy as np

REPO = Path(__file__).resolve().parents[1]
SPACE = "benchmarks/dashboard_space.yaml"
STUDY = "big"
LIMIT_MS = 300.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(code: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code)}


def _search(code: Path, journal: Path, trials: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "magnet.cli",
        "search",
        str(code / SPACE),
        "--storage",
        str(journal),
        "--study",
        STUDY,
        "--trials",
        str(trials),
        "--no-report",
    ]


def make_study(cache: Path, trials: int) -> tuple[Path, float]:
    """The cached journal with ``trials`` designs (made if missing) and the seconds it took."""
    journal = cache / f"dashboard-{trials}.journal"
    done = cache / f"dashboard-{trials}.seconds"
    if done.exists():
        return journal, float(done.read_text())
    cache.mkdir(parents=True, exist_ok=True)
    journal.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run(_search(REPO, journal, trials), cwd=REPO, check=True, capture_output=True)
    seconds = time.perf_counter() - start
    done.write_text(f"{seconds:.1f}")
    return journal, seconds


def _source(journal: Path) -> tuple[Any, list[Any], list[str]]:
    """The study of ``journal`` (Optuna's), its finished trials and its objectives."""
    import optuna

    from magnet.search import load_study
    from magnet.search.storage import open_storage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=STUDY, storage=open_storage(str(journal), create=True))
    finished = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
    return study, finished, load_study(STUDY, str(journal)).objectives


def _clones(finished: list[Any], objectives: list[str], count: int, seed: int) -> Iterator[Any]:
    """``count`` clones of ``finished`` in turn, each one's objective values (and the metrics
    that are objectives) scaled by a log-normal factor (sigma 0.1, seeded)."""
    import copy

    rng = np.random.default_rng(seed)
    for i in range(count):
        t = copy.deepcopy(finished[i % len(finished)])
        if t.values is not None:
            factors = np.exp(rng.normal(0.0, 0.1, len(t.values)))
            t.values = [v * float(f) for v, f in zip(t.values, factors, strict=True)]
            record = dict(t.user_attrs.get("magnet") or {})
            metrics = dict(record.get("metrics") or {})
            for name, value in zip(objectives, t.values, strict=False):
                if name in metrics:
                    metrics[name] = value
            record["metrics"] = metrics
            t.user_attrs["magnet"] = record
        yield t


def clone_study(base: Path, cache: Path, trials: int) -> Path:
    """A journal of ``trials`` designs cloned from the study of ``base`` through Optuna's
    public API (cached): each a finished trial of the base study in turn (``_clones``: its
    values scattered so that the clones spread as a search's designs do instead of piling on
    the base study's points), its parameters, records and times as the base trial's."""
    import optuna

    from magnet.search.storage import open_storage

    journal = cache / f"dashboard-{trials}-cloned.journal"
    done = cache / f"dashboard-{trials}-cloned.done"
    if done.exists():
        return journal
    journal.unlink(missing_ok=True)
    source, finished, objectives = _source(base)
    target = optuna.create_study(
        study_name=STUDY,
        storage=open_storage(str(journal), create=True),
        directions=source.directions,
    )
    for key, value in source.user_attrs.items():
        target.set_user_attr(key, value)
    batch: list[Any] = []
    for i, t in enumerate(_clones(finished, objectives, trials, seed=0)):
        batch.append(t)
        if len(batch) == 1000:
            target.add_trials(batch)
            batch = []
            print(f"cloned {i + 1} of {trials} trials", file=sys.stderr)
    target.add_trials(batch)
    done.write_text("1")
    return journal


def append_clones(journal: Path, count: int, batch: int = 10, pause_s: float = 0.5) -> None:
    """Append ``count`` more clones to the study of ``journal``, ``batch`` every ``pause_s``:
    a search's appends as a viewer sees them, on a cloned study (whose designs are all
    evaluated already: a search would find nothing new to add)."""
    study, finished, objectives = _source(journal)
    clones = list(_clones(finished, objectives, count, seed=1))
    for start in range(0, count, batch):
        study.add_trials(clones[start : start + batch])
        time.sleep(pause_s)


def _get(url: str) -> tuple[int, float, bytes]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=120) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as exc:
        body, status = exc.read(), exc.code
    return status, (time.perf_counter() - start) * 1000.0, body


def _requests(base: str, design: int) -> list[tuple[str, str]]:
    """(name, URL) of what a user's pages ask for."""
    api = f"{base}/api/studies/{STUDY}"
    out = [
        ("index page", f"{base}/"),
        ("study page", f"{base}/studies/{STUDY}"),
        ("api studies", f"{base}/api/studies"),
        ("api study (the page's poll)", api),
        (
            "api rows (the page's table: every trial by energy, a page)",
            f"{api}/rows?set=all&sort=energy_pj&order=desc&offset=200",
        ),
        ("api trials", f"{api}/trials"),
        ("api pareto", f"{api}/pareto"),
        ("design page", f"{base}/studies/{STUDY}/trials/{design}"),
        ("download trials.csv", f"{base}/studies/{STUDY}/trials.csv"),
    ]
    for kind in FIGURES:
        out.append((f"figure {kind}", f"{api}/figures/{kind}"))
    return out


FIGURES = (
    "front",
    "front3d",
    "hypervolume",
    "parallel",
    "importance",
    "history",
    "slices",
    "contour",
    "ecdf",
    "timeline",
)


@contextlib.contextmanager
def _dashboard(code: Path, journal: Path):
    port = _free_port()
    cmd = [sys.executable, "-m", "magnet.cli", "dashboard", "--storage", str(journal)]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port)],
        cwd=code,
        env=_env(code),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    try:
        deadline = time.monotonic() + 600
        while True:
            try:
                urllib.request.urlopen(base + "/static/magnet.css", timeout=2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the dashboard did not start") from None
                time.sleep(0.05)
        yield base, proc, time.perf_counter() - started
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _peak_mb(pid: int) -> float:
    """The peak resident memory of process ``pid`` so far (Linux: VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


#: Runs a command (its arguments) and prints its peak resident memory (KiB) and CPU seconds
#: on stderr's last line: a small process of its own starts it, so that the peak is the
#: command's, not that of this process (Linux keeps a forked child's peak across ``exec``).
_PEAK = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[1:])\n"
    "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(u.ru_maxrss, u.ru_utime + u.ru_stime, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def _run(
    cmd: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, float, bytes, float]:
    """Run ``cmd``: (wall seconds, exit status, peak resident MB, stdout, CPU seconds)."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *cmd], cwd=REPO, env=env, capture_output=True
    )
    seconds = time.perf_counter() - start
    peak_kib, cpu = done.stderr.split()[-2:]
    return seconds, done.returncode, round(int(peak_kib) / 1024, 1), done.stdout, float(cpu)


def cli_times(journal: Path, folder: Path, append: int) -> dict[str, Any]:
    """What ``magnet pareto``, ``magnet export`` (CSV and JSON, to a file) and ``magnet
    report`` take on a copy of the study's journal (in ``folder``), the sizes of what they
    write and their peak memory. ``pareto`` four times: reading the whole journal
    (``MAGNET_NO_INDEX=1``), with no index beside it (made), with the index up to date, and
    after ``append`` more trials (the index grown by them); its output each time checked
    against the whole journal's."""
    out: dict[str, Any] = {}
    copy = folder / "cli.journal"
    shutil.copy(journal, copy)
    base = [sys.executable, "-m", "magnet.cli"]
    where = ["--study", STUDY, "--storage", str(copy)]
    full_env = {**os.environ, "MAGNET_NO_INDEX": "1"}

    def timed(name: str, cmd: list[str], env: Any = None, written: Path | None = None) -> bytes:
        seconds, code, peak, stdout, cpu = _run(cmd, env)
        out[name] = {
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "exit": code,
            "peak_mb": peak,
        }
        if written is not None and written.exists():
            out[name]["mb"] = round(written.stat().st_size / 1e6, 2)
        print(f"{name}: {seconds:.1f} s ({cpu:.1f} CPU-s), {peak:.0f} MB", file=sys.stderr)
        return stdout

    full = timed("pareto (the whole journal)", [*base, "pareto", *where], full_env)
    cold = timed("pareto (no index yet)", [*base, "pareto", *where])
    warm = timed("pareto (index up to date)", [*base, "pareto", *where])
    append_clones(copy, append, pause_s=0.0)
    grown = timed(f"pareto (index, {append} trials appended)", [*base, "pareto", *where])
    full_grown = timed("pareto (the whole journal, appended)", [*base, "pareto", *where], full_env)
    out["pareto same output"] = cold == warm == full and grown == full_grown
    for name, cmd, written in (
        ("export csv", [*base, "export", *where, "-o", str(folder / "t.csv")], folder / "t.csv"),
        ("export json", [*base, "export", *where, "-o", str(folder / "t.json")], folder / "t.json"),
        ("report", [*base, "report", *where, "-o", str(folder / "r.html")], folder / "r.html"),
    ):
        timed(name, cmd, written=written)
    return out


def _stats(ms: list[float]) -> dict[str, float]:
    a = np.array(ms)
    return {
        "count": len(a),
        "median_ms": round(float(np.median(a)), 1),
        "p95_ms": round(float(np.percentile(a, 95)), 1),
        "max_ms": round(float(a.max()), 1),
        "over_300ms": int((a > LIMIT_MS).sum()),
        "total_s": round(float(a.sum()) / 1000, 2),
        "over_300ms_total_s": round(float(a[a > LIMIT_MS].sum()) / 1000, 2),
    }


def measure(
    code: Path, journal: Path, append: int, start_designs: int, cloned: bool = False
) -> dict[str, Any]:
    """The dashboard of ``code`` on ``journal`` while a search adds ``append`` designs (a
    ``cloned`` study: while ``append_clones`` adds that many clones)."""
    times: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    skipped: set[str] = set()
    with _dashboard(code, journal) as (base, server, first_answer_s):
        # the studies listed: a dashboard that answers while it reads says 503 meanwhile
        waited = time.perf_counter()
        while _get(f"{base}/api/studies")[0] == 503:
            time.sleep(0.05)
        study_answer_s = first_answer_s + time.perf_counter() - waited
        design = json.loads(_get(f"{base}/api/studies/{STUDY}/pareto")[2])[0]["number"]
        quiet = {}
        for name, url in _requests(base, design):  # the study unchanged, first asks
            status, ms, body = _get(url)
            if status == 404:
                skipped.add(name)  # this revision has no such page
                continue
            quiet[name] = round(ms, 1)
            sizes[name] = len(body)
        grow = (
            [sys.executable, __file__, "--append-clones-to", str(journal), "--append", str(append)]
            if cloned
            else _search(REPO, journal, start_designs + append)
        )
        search = subprocess.Popen(
            grow, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        rounds = 0
        try:
            while search.poll() is None:
                rounds += 1
                for name, url in _requests(base, design):
                    if name in skipped:
                        continue
                    status, ms, body = _get(url)
                    if status != 200:
                        raise RuntimeError(f"{url}: HTTP {status}: {body[:200]!r}")
                    times.setdefault(name, []).append(ms)
                    sizes[name] = max(sizes.get(name, 0), len(body))
        finally:
            if search.poll() is None:
                search.terminate()
            search.wait()
        peak_mb = _peak_mb(server.pid)
    every = [ms for v in times.values() for ms in v]
    return {
        "first_answer_s": round(first_answer_s, 2),
        "studies_listed_s": round(study_answer_s, 2),
        "server_peak_mb": peak_mb,
        "largest_bytes": sizes,
        "quiet_first_ms": quiet,
        "during_search": {name: _stats(v) for name, v in times.items()},
        "all_during_search": _stats(every),
        "rounds": rounds,
        "not_in_this_revision": sorted(skipped),
    }


def _worktree(ref: str, where: Path) -> Path:
    path = where / ref
    subprocess.run(
        ["git", "worktree", "add", "--detach", str(path), ref],
        cwd=REPO,
        check=True,
        capture_output=True,
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=common.count, default=3000, help="designs in the study")
    parser.add_argument("--append", type=int, default=300, help="designs the search adds")
    parser.add_argument("--before", help="a git revision to measure too")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "magnet")
    parser.add_argument(
        "--clone", type=int, help="clone the study to this many trials (clone_study) first"
    )
    parser.add_argument(
        "--out", type=common.out_file, default=REPO / "benchmarks" / "results" / "dashboard.json"
    )
    parser.add_argument("--append-clones-to", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--cli-only", action="store_true", help="time the command line only (no dashboard)"
    )
    args = parser.parse_args()
    if args.append_clones_to:  # the appender measure() starts on a cloned study
        append_clones(args.append_clones_to, args.append)
        return
    journal, made_s = make_study(args.cache, args.trials)
    record: dict[str, Any] = {
        # other work on the machine meanwhile shows here (1-, 5-, 15-minute averages)
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "study": {"space": SPACE, "designs": args.trials, "seconds_to_make": made_s},
        "append": args.append,
        "limit_ms": LIMIT_MS,
    }
    if args.clone:
        journal = clone_study(journal, args.cache, args.clone)
        record["study"]["cloned_to_trials"] = args.clone
        record["study"]["journal_mb"] = round(journal.stat().st_size / 1e6, 1)
    from magnet.search import load_study

    designs = load_study(STUDY, str(journal)).counts()["designs"]
    with tempfile.TemporaryDirectory() as tmp:
        record["cli"] = cli_times(journal, Path(tmp), args.append)
    if args.cli_only:
        record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        common.write_record(args.out, record)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        revisions = [("after", "HEAD")] + ([("before", args.before)] if args.before else [])
        trees: list[Path] = []
        try:
            for label, ref in revisions:
                code = _worktree(ref, tmp_path / "code")
                trees.append(code)
                copy = tmp_path / f"{label}.journal"
                shutil.copy(journal, copy)
                print(f"{label} ({ref}): measuring ...", file=sys.stderr)
                record[label] = {
                    "revision": subprocess.run(
                        ["git", "rev-parse", "--short", ref],
                        cwd=REPO,
                        capture_output=True,
                        text=True,
                        check=True,
                    ).stdout.strip(),
                    **measure(code, copy, args.append, designs, cloned=bool(args.clone)),
                }
                print(json.dumps(record[label]["all_during_search"]), file=sys.stderr)
        finally:
            for tree in trees:
                subprocess.run(
                    ["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False
                )
    record["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    common.write_record(args.out, record)


if __name__ == "__main__":
    common.interruptible(main)
