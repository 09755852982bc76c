"""magnet against Timeloop on the reference cases of tests/data/reference/timeloop.

For each case: the replay's ``timeloop-input.yaml`` is evaluated; cycles must equal
Timeloop's, energy per level must be within 1 % of ``result.json``, and every per-instance
read / fill / update count must equal ``timeloop-model.stats.txt`` (the replay's when it has
one, else the 2024 reference output of the same input).
"""

from __future__ import annotations

import json

import pytest

from magnet.api import evaluate
from magnet.interop import load_timeloop
from magnet.interop.timeloop_stats import access_counts, summary_stats
from tests.conftest import REFERENCE

TL = REFERENCE / "timeloop"
CASES = {
    # case: (replay folder, stats file)
    "conv1d_ws": (
        "conv1d_2level_ws_os/replay_timeloop_2025-03/ws",
        "conv1d_2level_ws_os/ref_output/ws",
    ),
    "conv1d_os": (
        "conv1d_2level_ws_os/replay_timeloop_2025-03/os",
        "conv1d_2level_ws_os/ref_output/os",
    ),
    "conv1d_cp": (
        "conv1d_oc_3levelspatial_cp_kp/replay_timeloop_2025-03/cp",
        "conv1d_oc_3levelspatial_cp_kp/ref_output/cp",
    ),
    "conv1d_kp": (
        "conv1d_oc_3levelspatial_cp_kp/replay_timeloop_2025-03/kp",
        "conv1d_oc_3levelspatial_cp_kp/ref_output/kp",
    ),
    "eyeriss_like": (
        "eyeriss_like/replay_timeloop_2025-03",
        "eyeriss_like/replay_timeloop_2025-03",
    ),
    "simple_ws": (
        "simple_weight_stationary/replay_timeloop_2025-03",
        "simple_weight_stationary/replay_timeloop_2025-03",
    ),
    "simple_os": (
        "simple_output_stationary/replay_timeloop_2025-03",
        "simple_output_stationary/replay_timeloop_2025-03",
    ),
}


def _run(case: str):
    replay, _ = CASES[case]
    tl = load_timeloop(TL / replay / "timeloop-input.yaml")
    return evaluate(tl.layer, tl.design(), tl.mapping)


@pytest.mark.parametrize("case", CASES)
def test_cycles_and_energy_per_level(case: str) -> None:
    result = _run(case)
    ref = json.loads((TL / CASES[case][0] / "result.json").read_text())
    assert result.latency_cycles == ref["summary"]["cycles"]
    assert result.utilization * 100 == pytest.approx(ref["summary"]["utilization_pct"], abs=0.01)
    for level, ref_pj in ref["energy_pJ_by_level"].items():
        assert result.energy_pj_by_level[level] == pytest.approx(ref_pj, rel=0.01), level
    assert result.energy_pj / 1e6 == pytest.approx(ref["summary"]["energy_uJ"], abs=0.01)


@pytest.mark.parametrize("case", CASES)
def test_access_counts_equal_timeloop_stats(case: str) -> None:
    result = _run(case)
    stats_dir = TL / CASES[case][1]
    stats_file = next(stats_dir.glob("timeloop-*.stats.txt"))
    stats = access_counts(stats_file)
    cycles = summary_stats(stats_file)["cycles"]
    ours = result.accesses
    checked = 0
    for level, spaces in stats.items():
        for space, counts in spaces.items():
            for action, expected in counts.items():
                assert ours[level][space][action] == expected, (level, space, action)
                checked += 1
    # every kept (level, operand) pair of magnet appears in Timeloop's stats as well
    assert checked == 3 * sum(len(ops) for ops in ours.values())
    assert result.latency_cycles == cycles
