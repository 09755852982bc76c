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


@pytest.mark.subprocess
def test_scalesim_cycles_are_exact(tmp_path: Path) -> None:
    summary = run_quick("scalesim-cycles", tmp_path)
    # every quick run (3 layers x os / ws / is on 128 x 128) equals SCALE-Sim's Total Cycles
    assert summary["runs"] == summary["mapped"] == summary["cycles_exact"] == 9
    rows = (tmp_path / "table.csv").read_text().splitlines()
    assert rows[0].startswith("set,layer,array,dataflow,SCALE-Sim cycles,magnet cycles,ratio")
    assert len(rows) == 1 + 9


@pytest.mark.subprocess
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


@pytest.mark.subprocess
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
    # below the measured 278 mW (it has no configuration, test logic or I/O; README)
    chip = summary["chip"]
    assert 34.7 / 2 <= chip["fps"] <= 34.7 * 2
    assert 0.25 <= chip["power_mw"] / 278 <= 1.0
    # with the chip's run-length coded feature maps and AlexNet's densities (Sparseloop's
    # Eyeriss set), its DRAM words per MAC are the chip's 0.0029 (JSSC 2017) within 5 %
    # (uncoded and dense: 0.0047)
    assert chip["dram_accesses_per_mac"] == pytest.approx(0.0029, rel=0.05)
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
        "sparseloop-validation",
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


def test_the_headline_figure_draws_simba_and_every_dataflow_of_its_fronts() -> None:
    # the committed magnet-dse figure.png, as a reader sees it: simba-chip's red diamonds
    # (one per dataflow it runs, in 4 panels: hundreds of pixels in its exact colour), and
    # each dataflow on either front of the committed summary in its colour; none other
    results = EXPERIMENTS / "magnet-dse" / "results"
    study = json.loads((results / "summary.json").read_text())["studies"]["resnet50"]
    shown = {r["dataflow"] for r in study["front"] + study["front_8bit"]}
    colours = {
        "ws": (0x4C, 0x78, 0xA8),
        "os": (0x54, 0xA2, 0x4B),
        "ws-local-os": (0xF5, 0x85, 0x18),
        "os-local-ws": (0xB2, 0x79, 0xA2),
    }
    rgb = read_png(results / "figure.png")[..., :3]

    def pixels(colour: tuple[int, int, int]) -> int:
        return int(np.all(rgb == colour, axis=-1).sum())

    assert pixels((0xE4, 0x57, 0x56)) > 200  # simba-chip
    for flow, colour in colours.items():
        assert (pixels(colour) > 50) == (flow in shown), flow


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


def _package_row(summary: dict, series: str, chiplets: int) -> dict:
    return next(r for r in summary["rows"] if r["series"] == series and r["chiplets"] == chiplets)


@pytest.mark.subprocess
def test_simba_chip_quick(tmp_path: Path) -> None:
    # at 1.96 GHz: 1,024 MACs x 2 ops x 1.96 GHz = 4.01408 TOPS, the chiplet's published
    # 4.01 (VLSI 2019 [P]); ResNet-50 runs at the TOPS its utilization allows
    summary = run_quick("simba-chip", tmp_path)
    peak = summary["peak"]
    assert peak["peak_tops"] == pytest.approx(1024 * 2 * 1.96 / 1e3, rel=1e-12)
    assert peak["tops"] == pytest.approx(peak["peak_tops"] * peak["utilization"], rel=1e-9)


@pytest.mark.subprocess
def test_magnet_collectors_quick(tmp_path: Path) -> None:
    # each dataflow's best design: its on-chip energy split into shares that add up to one,
    # the best overall the least energy per op among them
    summary = run_quick("magnet-collectors", tmp_path)
    best = summary["best"]
    assert set(best) == {"ws", "os", "ws-local-os", "os-local-ws"}
    for row in best.values():
        assert row["status"] == "ok"
        assert sum(row["shares"].values()) == pytest.approx(1.0, abs=1e-9)
        assert row["math_share"] == row["shares"]["math"]
    least = min(row["pj_per_op_on_chip"] for row in best.values())
    assert summary["best_overall"]["pj_per_op_on_chip"] == least


@pytest.mark.subprocess
def test_published_points_quick(tmp_path: Path) -> None:
    # its first two rows: the chiplet at 161 MHz (on-chip TOPS/W, 2.2-3.2x the published
    # 9.1) and its peak at 1.96 GHz (1,024 x 2 x 1.96 GHz = 4.01408 TOPS, 1.001x of 4.01)
    summary = run_quick("published-points", tmp_path)
    rows = {row["design"]: row for row in summary["rows"]}
    assert rows["simba-1.96ghz"]["magnet"] == pytest.approx(4.01408, rel=1e-12)
    assert rows["simba-1.96ghz"]["ratio"] == pytest.approx(4.01408 / 4.01, rel=1e-12)
    assert summary["within_tolerance"] == sum(r["within_tolerance"] for r in summary["rows"])


@pytest.mark.subprocess
def test_magnet_dse(tmp_path: Path) -> None:
    # a search of 12 designs of the built-in space on 2 workers, its front read back from the
    # study: each front design's on-chip energy from its stored record (the run stopped there
    # once, when a study's records became objects)
    summary = run_quick("magnet-dse", tmp_path)
    study = summary["studies"]["resnet50"]
    assert study["counts"]["designs"] == 12 and study["counts"]["failed"] == 0
    front = study["front"]
    assert 1 <= len(front) == study["front_size"]
    # against simba-chip under its own dataflow (config.yaml: os-local-ws)
    simba = next(r for r in study["simba_chip"] if r["dataflow"] == "os-local-ws")
    for row in front:
        assert 0 < row["on_chip_pj"] < row["energy_pj"]
        assert row["on_chip_vs_simba"] == pytest.approx(row["on_chip_pj"] / simba["on_chip_pj"])


@pytest.mark.subprocess
def test_simba_package(tmp_path: Path) -> None:
    summary = run_quick("simba-package", tmp_path)
    assert (tmp_path / "published.md").exists() and (tmp_path / "partitions.md").exists()
    assert {r["chiplets"] for r in summary["rows"]} == {1, 4, 36}
    lp, free = _package_row(summary, "lpddr4", 36), _package_row(summary, "stall-free", 36)
    # peak: 36 chiplets x 1,024 MACs x 2 ops x 1.96 GHz = 144.5 TOPS, the chiplet's 4.01 TOPS
    # peak (VLSI 2019 [P]) x 36 = 144.506; 1.1307x VLSI 2019's 127.8 (which implies 1.73 GHz)
    assert lp["peak_tops"] == pytest.approx(36 * 1024 * 2 * 1.96 / 1e3, rel=1e-9)
    assert lp["peak_tops"] / 127.8 == pytest.approx(1.1307, abs=1e-4)
    # magnet's default DRAM (LPDDR4, 4 x 6.4 = 25.6 GB/s) sets the pace: the weights that do
    # not stay in the 36 chiplets' weight buffers (36 x 512 KiB = 18.9 MB, ResNet-50's are
    # 25,502,912 bytes) are read again for every image: with a share s kept, at most
    # 25.6e9 / ((1 - s) x 25.5e6) images/s. Every weight read again (the first image) would
    # cap it at 1,004 images/s; MICRO 2019's 1,988 (README: tested within 0.4-0.8)
    assert summary["weights_bytes"] == 25_502_912 and lp["dram_gb_per_s"] == pytest.approx(25.6)
    kept = lp["weights_kept_share"]
    assert 0.1 < kept < 18.9e6 / 25_502_912
    assert lp["dram_bound_share"] > 0.3  # DRAM still sets the pace of a third of the time
    # every weight that does not stay is read again for every image
    assert lp["dram_bytes_per_image"] >= (1 - kept) * 25_502_912
    assert lp["images_per_s"] <= 25.6e9 / ((1 - kept) * 25_502_912)
    assert lp["first_latency_ms"] > lp["latency_ms"]
    assert 0.4 <= lp["images_per_s"] / 1988 <= 0.8
    # 36 chiplets against 4 on LPDDR4: 4 chiplets' 2.1 MB of weight buffers keep at most 8 %
    # of the weights, 36 chiplets' 18.9 MB a larger share: more than 1.5x the images/s
    four = _package_row(summary, "lpddr4", 4)
    assert four["weights_kept_share"] < 2.1e6 / 25_502_912 < kept
    assert lp["images_per_s"] / four["images_per_s"] > 1.5
    # unlimited DRAM is not unlimited traffic: DRAM's words reach the chiplets over the
    # links at the package's edge (a 25 GB/s link per column, assumed: 150 GB/s on 6 x 6,
    # 50 GB/s on 2 x 2, against the 2 TB/s one chiplet takes from it), so the links set the
    # pace of most of the time from 4 chiplets on, and 4 chiplets are less than twice one
    # (a chiplet's weights come up its column's link, shared: none takes them in faster
    # than 25 GB/s, while a lone chiplet, with no links, takes them at 2 TB/s)
    assert all(_package_row(summary, "stall-free", n)["link_bound_share"] > 0.5 for n in (4, 36))
    assert _package_row(summary, "stall-free", 4)["speedup"] < 2
    packaged = [r for r in summary["rows"] if r["chiplets"] > 1]
    assert all(r["weight_gb_per_s_per_chiplet_max"] <= 25 * 1.001 for r in packaged)
    assert _package_row(summary, "stall-free", 1)["weight_gb_per_s_per_chiplet_max"] > 1000
    # on LPDDR4 DRAM sets the pace more than the links; the first image, with its weights
    # loaded, is slower than the stream's; with unlimited DRAM within 10 % (its weights come
    # over the same links as the rest)
    assert lp["dram_bound_share"] > lp["link_bound_share"]
    assert free["first_latency_ms"] == pytest.approx(free["latency_ms"], rel=0.1)
    # the NoP's energy: none on one chiplet; more than the MACs' from 4 chiplets in every
    # series; more than 40 % of the package's (DRAM excluded) at 36 chiplets on unlimited
    # DRAM, a larger share than at 4; more than 75 % at the chiplet's 161 MHz low point
    # (GRS's 1.17 pJ/bit does not scale with the chiplets' supply)
    for series in ("lpddr4", "hbm2", "stall-free"):
        assert _package_row(summary, series, 1)["nop_share"] == 0
        four = _package_row(summary, series, 4)["energy_pj_by_category"]
        assert four["nop"] > four["math"]
    assert free["nop_share_package"] > 0.4
    assert free["nop_share"] > _package_row(summary, "stall-free", 4)["nop_share"]
    # the nop category is the links' bits at GRS's 1.17 pJ/bit (Poulton et al., JSSC 2019,
    # memory-and-links.md [PQ]) plus the adds that reduce partial sums across chiplets (< 0.1 %)
    for r in summary["rows"] + summary["low_point"]:
        link_pj = r["nop_bytes_per_image"] * 8 * 1.17
        assert link_pj <= r["energy_pj_by_category"]["nop"] <= link_pj * 1.001
    assert all(r["nop_share_package"] > 0.75 for r in summary["low_point"])
    # TOPS/W without DRAM at 36 chiplets is below MICRO 2019's "up to 6.1" at both clocks:
    # 0.3-0.5x at 1.96 GHz, 0.45-0.7x at 161 MHz (README; fine clock gating: a waiting
    # chiplet's registers are not clocked)
    at_36 = [_package_row(summary, s, 36) for s in ("lpddr4", "hbm2", "stall-free")]
    assert all(0.3 <= r["tops_per_w_package"] / 6.1 <= 0.5 for r in at_36)
    assert all(0.45 <= r["tops_per_w_package"] / 6.1 <= 0.7 for r in summary["low_point"])
    sweep = {(r["series"], r["hop_ns"]): r for r in summary["non_uniform"]}
    # no hop latency (the template's assumption): every chiplet waits alike, the shares tie
    assert sweep["stall-free", 0]["gain"] == 0
    # 10 ns a hop (an assumption; Simba's is not published): the uniform layer waits for its
    # farthest chiplet, 2 x 6 hops on 6 x 6 from the edge, the non-uniform one for the mean,
    # 2 x 3.5: faster, by less than a per cent (the links set most layers' pace), and never
    # by more than the trips themselves
    gain = sweep["stall-free", 10]["gain"]
    assert 0.001 < gain < 0.05
    uniform = sweep["stall-free", 10]["uniform_images_per_s"]
    assert uniform < sweep["stall-free", 0]["uniform_images_per_s"]


def test_simba_package_committed_results_say_where_the_nop_dominates() -> None:
    results = EXPERIMENTS / "simba-package" / "results"
    assert (results / "figure.png").exists() and (results / "published.md").exists()
    summary = json.loads((results / "summary.json").read_text())
    assert summary["quick"] is False
    assert [r["chiplets"] for r in summary["rows"][:7]] == [1, 2, 4, 8, 16, 32, 36]
    # the full run (experiments/README.md): the NoP outspends the MACs from 2 chiplets on
    # every DRAM, and never takes more than half of the package's energy (DRAM excluded) at
    # 1.96 GHz (44 % at most, 36 chiplets on unlimited DRAM; before DRAM entered at the edge
    # and the links were shared, HBM2 and unlimited DRAM passed half from 32 chiplets:
    # since, a layer is placed against the ports and spread less)
    found = summary["nop_dominates"]
    assert found["share"] == 0.5
    assert {s: f["nop_over_math_from"] for s, f in found.items() if s != "share"} == {
        "lpddr4": 2,
        "hbm2": 2,
        "stall-free": 2,
    }
    assert all(found[s]["nop_over_share_from"] is None for s in ("lpddr4", "hbm2", "stall-free"))
    # non-uniform partitioning's gain (the same mappings priced both ways) grows with the hop
    # latency, from nothing at 0 (the template's assumption) to under 1 % at UCIe 1.0's 2 ns
    # PHY bound [PQ]; Simba's "up to 16 %" covers three tiling optimisations together [P]
    gains = {(r["series"], r["hop_ns"]): r["gain"] for r in summary["non_uniform"]}
    for series in ("lpddr4", "stall-free"):
        swept = [gains[series, h] for h in (0, 2, 10, 50)]
        assert swept[0] == 0 and swept == sorted(swept) and swept[1] < 0.01


@pytest.mark.subprocess
def test_stream_comparison(tmp_path: Path) -> None:
    summary = run_quick("stream-comparison", tmp_path)
    two = summary["two_conv"]
    # Stream's two convolutions at bf16 on its simba package read from DRAM, whose 64-bit
    # port moves 8 bytes a cycle: the 8 x 32 x 32 input (16,384 bytes), both layers' weights
    # (8 x 16 x 9 x 2 = 2,304 and 16 x 32 x 9 x 2 = 9,216) and the 32 x 32 x 32 output
    # (65,536): 93,440 bytes, 11,680 cycles, which magnet's one inference takes within 5 %
    assert 11_680 <= two["cycles"] <= 11_680 * 1.05
    assert two["output_write_cycles"] == 65_536 / 8
    assert two["stream_cycles"] == 4_316  # Stream's CI baseline (experiments/README.md)
    rows = {r["run"]: r for r in summary["resnet18"]}
    # ResNet-18's weights (11.7 MB) do not fit the package's 36 x 16 x 4 KiB weight
    # buffers: the 64-bit DRAM port sets the pace of layer after layer (86 % of its time at
    # the full budget), and whatever plan the pipeline finds, the planner keeps its own
    # guarantees: pipelined never fewer images/s, fused never a longer batch
    lbl = rows["layer after layer"]
    assert lbl["dram_cycles"] >= 0.8 * lbl["latency_cycles"]
    assert rows["pipelined"]["images_per_s"] >= lbl["images_per_s"] * (1 - 1e-12)
    assert rows["fused"]["latency_cycles"] <= lbl["latency_cycles"]


@pytest.mark.subprocess
def test_an_out_folder_in_the_way_is_refused(tmp_path: Path) -> None:
    # --out on a file, under a file, or on a folder holding files the experiment did not
    # write: one line, exit 2, the user's files as they were
    mine = tmp_path / "notes.txt"
    mine.write_text("mine")
    folder = tmp_path / "theirs"
    folder.mkdir()
    (folder / "table.md").write_text("theirs")
    script = str(EXPERIMENTS / "stream-comparison" / "run.py")
    for out, says in (
        (mine, "a file is there"),
        (mine / "sub", "notes.txt is a file, not a folder"),
        (folder, "holds files stream-comparison"),
    ):
        done = subprocess.run(
            [sys.executable, script, "--quick", "--no-png", "--out", str(out)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip().splitlines() == [done.stderr.strip()]  # one line
        assert says in done.stderr and "Traceback" not in done.stderr
    assert mine.read_text() == "mine" and (folder / "table.md").read_text() == "theirs"
    assert [p.name for p in folder.iterdir()] == ["table.md"]


def test_the_stream_comparison_figure_draws_a_bar_per_run() -> None:
    # the committed figure.png as a reader sees it: three bars in plotly's bar colour, in the
    # order of the table, their drawn heights in the ratio of the runs' cycles a batch
    results = EXPERIMENTS / "stream-comparison" / "results"
    rows = json.loads((results / "summary.json").read_text())["resnet18"]
    bar = np.all(read_png(results / "figure.png")[..., :3] == (0x63, 0x6E, 0xFA), axis=-1)
    cols = np.flatnonzero(bar.any(axis=0))
    spans = np.split(cols, np.flatnonzero(np.diff(cols) > 1) + 1)
    assert len(spans) == len(rows) == 3
    heights = [int(bar[:, s[0] : s[-1] + 1].any(axis=1).sum()) for s in spans]
    for h, r in zip(heights, rows, strict=True):
        assert h / heights[0] == pytest.approx(
            r["latency_cycles"] / rows[0]["latency_cycles"], rel=0.01
        )


def test_the_simba_package_figure_draws_every_series_and_simba() -> None:
    # the committed figure.png: each DRAM series' line in its colour (run.py SERIES_COLORS)
    # and Simba's published figures as red markers (common.PUBLISHED_COLOR), each drawn
    rgb = read_png(EXPERIMENTS / "simba-package" / "results" / "figure.png")[..., :3]
    for colour in [(0x4C, 0x78, 0xA8), (0xF5, 0x85, 0x18), (0x54, 0xA2, 0x4B), (0xE4, 0x57, 0x56)]:
        assert int(np.all(rgb == colour, axis=-1).sum()) > 500, colour


@pytest.mark.subprocess
def test_sparseloop_validation(tmp_path: Path) -> None:
    summary = run_quick("sparseloop-validation", tmp_path)
    v2 = summary["eyeriss_v2_pe"]
    # Fig. 12, the 8 layers with workloads: magnet's uniform model is Sparseloop's (its
    # errors against the ground truth: mean 3.46 %, worst 6.46 % on L07), within its error
    assert v2["magnet_uniform_mean_abs_error"] <= v2["sparseloop_uniform_mean_abs_error"] + 1e-5
    assert v2["magnet_uniform_worst_abs_error"] <= v2["sparseloop_uniform_worst_abs_error"] + 1e-5
    assert v2["sparseloop_uniform_worst_abs_error"] == pytest.approx(0.0646, abs=1e-4)
    # the measured channel densities reproduce the ground truth's effectual pairs exactly
    assert v2["magnet_measured_worst_abs_error"] == 0
    # Fig. 13, the dual-side sparse tensor core's 8 plotted points: within Sparseloop's own
    # error (its bars against the DSTC paper: mean 7.6 %, worst 20.5 %); magnet packs each
    # 32-long tile's non-zeros onto the lanes (ceil(non-zeros / lanes) steps)
    tc = summary["dstc"]
    assert tc["magnet_mean_abs_error"] <= tc["sparseloop_mean_abs_error"]
    assert tc["magnet_worst_abs_error"] <= tc["sparseloop_worst_abs_error"]
    cases = summary["cases"]
    exact = [c for c in cases if c["set"] in ("dot product", "spMspM 8x8x8")]
    off = [(c["case"], c["quantity"]) for c in exact if c["magnet"] != c["reference"]]
    # the one count off: Z's reads, 15 x 1/4 = 3.75 expected against Sparseloop's exact 3
    assert off == [("gating", "z_reads"), ("skipping", "z_reads")]
    # Table 7: magnet's run-length code on Sparseloop's own traffic gives its ratio within
    # 0.2 % for conv2-5 (conv1: Sparseloop leaves its dense input image uncoded, the chip's
    # preset codes every feature map: 1.13 against 1.24)
    on_its = [c for c in cases if c["quantity"].endswith("Sparseloop's mapping")]
    assert [abs(c["magnet_error"]) < 0.002 for c in on_its] == [False, True, True, True, True]
