"""The benchmarks a user runs, each run small into a temporary folder: the scripts read a
study and the model through the public API, and two of them had stopped working when it
changed (a study's records became objects, its counts were renamed) without a test
noticing. The numbers they measure are the benchmarks' own (benchmarks/results); here each
output is checked for what it must say, by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def run(
    script: str, *args: str, cwd: Path = REPO, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python benchmarks/SCRIPT ARGS`` run in ``cwd``, its output captured."""
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def bench(script: str, out: Path, *args: str) -> dict:
    """``python benchmarks/SCRIPT ARGS --out OUT`` from the repository; its JSON record
    (at ``OUT``)."""
    done = run(script, *args, "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    record: dict = json.loads(out.read_text())
    return record


@pytest.mark.subprocess
def test_package_trade(tmp_path: Path) -> None:
    # 4 designs of package-fixed-macs (Simba's 36,864 MACs cut into chiplets): each front
    # design's MACs are its chiplets x its MACs per chiplet, 36,864 in all
    record = bench("package_trade.py", tmp_path / "trade.json", "--trials", "4")
    front = record["search"]["front"]
    assert front
    for row in front:
        assert row["total_macs"] == row["chiplets"] * row["chiplet_macs"] == 36_864
        assert row["dram_bytes_per_cycle"] > 0
    # its figure beside it, as the browser gets it: offline (plotly.js inside, no script
    # fetched), titled with the counts, each front design's point with its hover text
    page = (tmp_path / "trade.html").read_text()
    assert 'src="http' not in page and "Plotly.newPlot" in page and len(page) > 3_000_000
    feasible = record["search"]["counts"]["ok"]
    assert f"{feasible} designs, {len(front)} on the front" in page
    for row in front:
        assert f"#{row['trial']} {row['split']} {row['link']}" in page


@pytest.mark.subprocess
def test_bench_search_counts_the_designs_a_search_decided(tmp_path: Path) -> None:
    # one search of 6 designs of quickstart on one worker, as the throughput table runs it
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_search
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    space = REPO / "search_spaces" / "quickstart.yaml"
    row = bench_search._run_search(space, 6, 1, tmp_path)
    assert row["designs"] == 6 == row["ok"] + row["infeasible"] + row["dominated"]
    assert row["trials_per_second"] == pytest.approx(6 / row["wall_seconds"])
    assert 1 <= row["front"] <= row["ok"]


@pytest.mark.subprocess
def test_bench_warm(tmp_path: Path) -> None:
    # designs mapped afresh and with the reuse of the ones before: a layer with nothing to
    # start from is searched as afresh (the same evaluations, the same EDP), one warm-started
    # prices fewer mappings (600 samples and a few rounds against 6,000 and up to 40)
    record = bench("bench_warm.py", tmp_path / "warm.json", "--designs", "3")
    rows = record["rows"]
    assert {row["start"] for row in rows} == {"searched", "warm"}
    for row in rows:
        if row["start"] == "searched":
            assert row["warm_evaluations"] == row["fresh_evaluations"]
            assert row["edp_ratio"] == 1.0
        else:
            assert row["warm_evaluations"] < row["fresh_evaluations"]
    saved = sum(r["fresh_evaluations"] for r in rows if r["start"] == "warm") / sum(
        r["warm_evaluations"] for r in rows if r["start"] == "warm"
    )
    assert record["reused_evaluations_saved"] == pytest.approx(saved)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("mine.json", "mine.json exists and is not a benchmark's record"),
        ("folder", "folder is a folder: give the JSON file to write"),
        ("mine.json/record.json", "mine.json is a file, not a folder"),
        ("new.json", "new.html exists and is not this benchmark's figure"),
    ],
)
def test_a_benchmark_never_writes_over_a_file_it_did_not_write(
    tmp_path: Path, given: str, said: str
) -> None:
    # refused before any work (argparse: exit 2), the user's files as they were
    (tmp_path / "mine.json").write_text('{"mine": true}')
    (tmp_path / "new.html").write_text("my page")
    (tmp_path / "folder").mkdir()
    done = run("package_trade.py", "--out", given, cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert said in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "mine.json").read_text() == '{"mine": true}'
    assert (tmp_path / "new.html").read_text() == "my page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "mine.json", "new.html"]


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("script", "given"),
    [
        ("bench_package.py", ["--repeats", "0"]),  # was a StatisticsError traceback
        ("bench_package.py", ["--seeds", "-1"]),  # was one after the whole timing run
        ("bench_warm.py", ["--designs", "many"]),
    ],
)
def test_a_benchmarks_count_below_one_is_refused_before_any_work(
    tmp_path: Path, script: str, given: list[str]
) -> None:
    done = run(script, *given, "--out", "r.json", cwd=tmp_path, timeout=120)
    assert done.returncode == 2
    assert f"argument {given[0]}: {given[1]!r} is not a whole number >= 1" in done.stderr
    assert "Traceback" not in done.stderr and not any(tmp_path.iterdir())


def test_a_benchmark_stopped_by_ctrl_c_says_so_in_one_line(capsys) -> None:
    # every benchmark's main runs through common.interruptible: Ctrl-C half-way through its
    # work is one line and exit 130, as the magnet command's (its record, written whole at
    # the end, is then not written at all)
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import common
    finally:
        sys.path.remove(str(REPO / "benchmarks"))

    def main() -> None:
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as stopped:
        common.interruptible(main)
    assert stopped.value.code == 130
    assert capsys.readouterr() == ("", "interrupted: no record written\n")
    scripts = [p.read_text() for p in (REPO / "benchmarks").glob("*.py")]
    mains = [text for text in scripts if "def main()" in text]
    assert len(mains) == 14 and all("common.interruptible(main)" in text for text in mains)


#: ``bench_records.py``'s smallest run: 3 designs of `quickstart`, no pipelines.
SMALL = ("--quickstart", "3", "--no-pipelines")


@pytest.mark.subprocess
def test_bench_records_is_the_same_for_the_same_code_and_tells_other_results_apart(
    tmp_path: Path,
) -> None:
    # its purpose: a change that must leave every result as it was is run before and after,
    # and the digests compared; so the same designs give the same digest run after run, and
    # a different set of results (one more `magnet` design) another
    first = bench("bench_records.py", tmp_path / "a.json", *SMALL, "--designs", "2")
    again = bench("bench_records.py", tmp_path / "b.json", *SMALL, "--designs", "2")
    more = bench("bench_records.py", tmp_path / "c.json", *SMALL, "--designs", "3")
    assert first["quickstart"]["trials"] == 3 and first["magnet"]["trials"] == 2
    assert more["magnet"]["trials"] == 3
    assert (
        first["quickstart"]["sha256"]
        == again["quickstart"]["sha256"]
        == more["quickstart"]["sha256"]
    )
    assert first["magnet"]["sha256"] == again["magnet"]["sha256"] != more["magnet"]["sha256"]
    assert len(first["magnet"]["sha256"]) == 64 and first["magnet"]["cpu_seconds"] > 0
    assert "pipelines" not in first
