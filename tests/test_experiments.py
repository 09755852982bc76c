"""The cheap experiments of experiments/ in their --quick modes: they run from the repo root,
write their outputs, and agree with the published numbers where experiments/README.md says
they do (about 10 CPU-s in all)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO
from tests.png import read_png

EXPERIMENTS = REPO / "experiments"


def run_quick(name: str, out: Path) -> dict:
    """``python experiments/NAME/run.py --quick --no-png --out OUT``; its summary."""
    done = subprocess.run(
        [
            sys.executable,
            str(EXPERIMENTS / name / "run.py"),
            "--quick",
            "--no-png",
            "--out",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    for output in ("table.md", "table.csv", "summary.json", "figure.html"):
        assert (out / output).stat().st_size > 0, output
    html = (out / "figure.html").read_text()
    # plotly.js embedded, not loaded from a CDN
    assert '<script src="https://cdn.plot.ly' not in html and "Plotly.newPlot" in html
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quick"] is True and summary["time"]["wall_s"] > 0
    return summary


def test_scalesim_cycles_are_exact(tmp_path: Path) -> None:
    summary = run_quick("scalesim-cycles", tmp_path)
    # every quick run (3 layers x os / ws / is on 128 x 128) equals SCALE-Sim's Total Cycles
    assert summary["runs"] == summary["mapped"] == summary["cycles_exact"] == 9
    rows = (tmp_path / "table.csv").read_text().splitlines()
    assert rows[0].startswith("set,layer,array,dataflow,SCALE-Sim cycles,magnet cycles,ratio")
    assert len(rows) == 1 + 9


def test_timeloop_agreement(tmp_path: Path) -> None:
    summary = run_quick("timeloop-agreement", tmp_path)
    model = summary["model"]
    # the seven reference cases: cycles equal, energy per level within 1 %, counts equal
    assert model["cases"] == model["cycles_equal"] == 7
    assert 0.99 <= model["level_ratio_range"][0] <= model["level_ratio_range"][1] <= 1.01
    assert model["counts_equal"] == model["counts_total"] > 0
    # magnet's mapper, same constraints and ERT, for energy: no worse than Timeloop's mapper
    mapper = summary["mapper"]["rows"]
    assert {r["case"] for r in mapper} == {
        "eyeriss_like",
        "simple_weight_stationary",
        "simple_output_stationary",
    }
    for row in mapper:
        assert row["status"] == "mapped"
        assert row["energy_ratio"] <= 1.0, row["case"]
    assert (tmp_path / "mapper.md").exists()


def test_eyeriss_dataflows(tmp_path: Path) -> None:
    summary = run_quick("eyeriss-dataflows", tmp_path)
    ranges = summary["ranges"]["eyeriss"]
    # ISCA 2016's accounting at equal storage area: row-stationary uses the least energy of
    # rs / ws / os / nlr on every AlexNet CONV layer and every FC layer at batch 16
    conv, fc = ranges["CONV batch 16"], ranges["FC batch 16"]
    assert conv["rs_best_on_every_layer"] and fc["rs_best_on_every_layer"]
    assert conv["rs_margin_over_best_other"][0] > 1.0
    assert set(conv["other_over_rs"]) == {"ws", "os", "nlr"}
    # equal storage area: every dataflow's global buffer + scratchpads within 0.1 %
    areas = [a["storage_mm2"] for a in summary["setup"]["archs"].values()]
    assert max(areas) / min(areas) < 1.001
    assert summary["setup"]["archs"]["nlr"]["bypassed"] == [
        "ifmap_spad",
        "weight_spad",
        "psum_spad",
    ]
    # the JSSC 2017 chip: frames per second within 2x of 34.7; magnet's on-chip power is
    # below the measured 278 mW (it has no clock tree, control or I/O; README)
    chip = summary["chip"]
    assert 34.7 / 2 <= chip["fps"] <= 34.7 * 2
    assert 0.25 <= chip["power_mw"] / 278 <= 1.0
    assert (tmp_path / "chip.md").exists()


@pytest.mark.parametrize(
    "name",
    [
        "eyeriss-dataflows",
        "magnet-collectors",
        "simba-chip",
        "scalesim-cycles",
        "timeloop-agreement",
        "magnet-dse",
        "peer-speed",
        "published-points",
    ],
)
def test_every_experiment_has_its_committed_results(name: str) -> None:
    folder = EXPERIMENTS / name
    assert (folder / "run.py").exists() and (folder / "config.yaml").exists()
    results = folder / "results"
    assert (results / "summary.json").exists(), f"run python experiments/{name}/run.py"
    assert (results / "figure.png").exists()
    assert (results / "table.md").exists()
    assert json.loads((results / "summary.json").read_text())["quick"] is False


def test_the_published_points_figure_draws_every_row_in_its_colour() -> None:
    # the committed figure.png, as a reader sees it: one 12-px marker per row (about 90 px
    # drawn in its exact colour each), blue inside the row's band and red outside it
    results = EXPERIMENTS / "published-points" / "results"
    summary = json.loads((results / "summary.json").read_text())
    rows, inside = len(summary["rows"]), summary["within_tolerance"]
    rgb = read_png(results / "figure.png")[..., :3]
    blue = int(np.all(rgb == (0x4C, 0x78, 0xA8), axis=-1).sum())
    red = int(np.all(rgb == (0xE4, 0x57, 0x56), axis=-1).sum())
    assert 50 * inside <= blue <= 150 * inside
    assert 50 * (rows - inside) <= red <= 150 * (rows - inside)
