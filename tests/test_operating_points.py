"""Operating points: the voltage-frequency model, refusals, and leakage paid per second.

The model (magnet/cost/operating_point.py, constants in magnet/cost/tables/scaling.yaml):
speed_n(V) = ((V - vt) ** 1.3 / V) / ((vdd - vt) ** 1.3 / vdd) / delay_n, and a template's
fmax(n, V) = f_ref x speed_n(V) / speed_ref(V_ref) for its published clock reference.
Published pairs (tests/data/reference/operating-points.md): Eyeriss 200 MHz at 1.0 V and
250 MHz at 1.17 V (65 nm, ISSCC 2016); Simba's chiplet 161 MHz at 0.42 V and 1.96 GHz
(4.01 TOPS / 2048 ops per cycle) at 16 nm, whose voltage is not published (1.0 V assumed).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import magnet as mg
from magnet.cost.operating_point import fmax_ghz
from magnet.cost.tables import TableCostModel
from magnet.errors import DesignInfeasible
from magnet.search import search
from magnet.templates import get_template

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
RES2A = "K=64,C=64,P=56,Q=56,R=3,S=3"
MAPPING = ROOT / "experiments" / "mappings" / "simba-chip_resnet50_res2a_branch2b.yaml"
SIMBA = get_template("simba")
EYERISS = get_template("eyeriss")


def simba_params() -> dict:
    """simba-chip's parameters without its clock (each test gives the operating point)."""
    return {k: v for k, v in mg.load_arch("simba-chip").params.items() if k != "clock_ghz"}


# ---- the fit passes through the published pairs ----------------------------------------------
def test_the_voltage_frequency_fit_passes_through_the_published_pairs() -> None:
    ref = EYERISS.clock_reference
    assert fmax_ghz(65, 1.0, ref) == pytest.approx(0.200, rel=1e-12)  # the reference itself
    assert fmax_ghz(65, 1.17, ref) == pytest.approx(0.250, rel=1e-3)  # the fitted pair
    ref = SIMBA.clock_reference
    assert fmax_ghz(16, 1.0, ref) == pytest.approx(1.96, rel=1e-12)
    assert fmax_ghz(16, 0.42, ref) == pytest.approx(0.161, rel=1e-3)


def test_fmax_by_hand_at_another_node_and_voltage() -> None:
    # systolic (Simba's critical path) at 45 nm, 0.9 V (45 nm's nominal): speed_45(0.9) = 1;
    # speed_16(1.0) = (0.62705 ** 1.3 / 1.0) / (0.47705 ** 1.3 / 0.85) / 0.5075 (vt 0.37295)
    #               = 0.54512 / 0.44948 / 0.5075 = 2.38970  ->  fmax = 1.96 / 2.38970 = 0.82019
    point = get_template("systolic").operating_point(
        get_template("systolic").params({"technology_nm": 45, "voltage_v": 0.9})
    )
    assert point.clock_ghz == point.fmax_ghz == pytest.approx(0.82019, rel=1e-4)
    # Eyeriss's path at 16 nm's nominal supply: only the nodes' delays differ,
    # 0.2 GHz x 1.7297 / 0.5075 = 0.68166 GHz (Stillmaker & Baas delay fits)
    point = EYERISS.operating_point(EYERISS.params({"technology_nm": 16, "voltage_v": 0.85}))
    assert point.clock_ghz == pytest.approx(0.2 * 1.7297 / 0.5075, rel=1e-9)


def test_a_clock_alone_runs_at_the_lowest_supply_that_meets_it() -> None:
    # simba at 16 nm, 1 GHz: (V - 0.37295) ** 1.3 / V = 0.62705 ** 1.3 / 1.96 -> V = 0.63713
    at_1ghz = SIMBA.build({**simba_params(), "clock_ghz": 1.0})
    assert at_1ghz.voltage_v == pytest.approx(0.63713, abs=1e-5)
    assert fmax_ghz(16, at_1ghz.voltage_v - 1e-3, SIMBA.clock_reference) < 1.0
    # Simba's low point: 161 MHz needs 16 nm's lowest supply; a slower clock never goes lower
    assert SIMBA.build({**simba_params(), "clock_ghz": 0.161}).voltage_v == pytest.approx(0.42)
    assert SIMBA.build({**simba_params(), "clock_ghz": 0.05}).voltage_v == pytest.approx(0.42)
    # a supply alone runs at fmax of it; the record states the operating point used
    arch = SIMBA.build({**simba_params(), "voltage_v": 0.85})
    assert arch.clock_ghz == pytest.approx(fmax_ghz(16, 0.85, SIMBA.clock_reference))
    record = mg.evaluate(mg.parse_layer("K=8,C=8"), arch, dataflow="free").record()
    assert (record.clock_ghz, record.voltage_v) == (arch.clock_ghz, 0.85)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"voltage_v": 0.42, "clock_ghz": 1.96}, "clock_ghz: 1.96 GHz is above fmax 0.161 GHz"),
        ({"voltage_v": 0.3}, "voltage_v: 0.3 V is outside the supply range of 16 nm; allowed"),
        ({"voltage_v": 1.2}, "allowed: 0.42 to 1 V"),
        ({"clock_ghz": 2.5}, "above fmax 1.96 GHz at the highest supply of 16 nm (1 V)"),
    ],
)
def test_an_operating_point_the_node_cannot_run_is_refused(given, message) -> None:
    with pytest.raises(DesignInfeasible, match=message.replace("(", r"\(").replace(")", r"\)")):
        SIMBA.build({**simba_params(), **given})


@pytest.mark.subprocess
def test_the_cli_refuses_an_inconsistent_operating_point_with_exit_2(tmp_path) -> None:
    arch = tmp_path / "arch.yaml"
    arch.write_text(yaml.safe_dump({"template": "simba", "voltage_v": 0.42, "clock_ghz": 1.96}))
    cmd = [sys.executable, "-m", "magnet.cli", "evaluate", "--arch", str(arch)]
    cmd += ["--workload", str(DATA / "network" / "tiny_net.yaml"), "--dataflow", "free"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {arch}: clock_ghz: 1.96 GHz is above fmax 0.161 GHz at voltage_v 0.42 V "
        "(16 nm); give a lower clock, a higher voltage, or only one of the two"
    ]


def test_a_search_over_voltage_and_clock_records_refusals_as_infeasible(tmp_path) -> None:
    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space["params"] = {
        "technology_nm": 16,
        "voltage_v": {"choices": [0.42, 0.85]},
        "clock_ghz": {"choices": [0.161, 1.5]},
        "pe_rows": 2,
        "pe_cols": 2,
    }
    space["dataflow"] = "os-local-ws"
    space["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    study = search(space, n_trials=4, storage=str(tmp_path / "s.journal"), sampler="grid")
    by_point = {(t.params["voltage_v"], t.params["clock_ghz"]): t for t in study.trials()}
    assert len(by_point) == 4
    refused = by_point[(0.42, 1.5)]  # fmax at 0.42 V is 0.161 GHz
    assert refused.status == "infeasible" and "above fmax" in refused.reason
    assert {by_point[p].status for p in by_point if p != (0.42, 1.5)} == {"ok"}


# ---- leakage is power ----------------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(
    voltage_v=st.floats(0.42, 1.0),
    slow=st.floats(0.05, 0.95),
)
def test_static_energy_rises_as_the_clock_falls_at_a_fixed_supply(voltage_v, slow) -> None:
    layer, mapping = mg.parse_layer(RES2A), mg.Mapping.from_yaml(MAPPING)
    top = fmax_ghz(16, voltage_v, SIMBA.clock_reference)
    fast = mg.evaluate(layer, SIMBA.build({**simba_params(), "voltage_v": voltage_v}), mapping)
    slower = SIMBA.build({**simba_params(), "voltage_v": voltage_v, "clock_ghz": slow * top})
    low = mg.evaluate(layer, slower, mapping)
    a, b = fast.energy_pj_by_category, low.energy_pj_by_category
    # the same cycles, each 1 / slow times longer: static energy x 1 / slow, the rest equal
    assert low.latency_cycles == fast.latency_cycles
    assert b["static"] == pytest.approx(a["static"] / slow, rel=1e-3)
    for key in ("math", "memory", "noc", "clock", "control", "dram"):
        assert b[key] == pytest.approx(a[key], rel=1e-12), key


def _leaky(multiple: float) -> TableCostModel:
    """The 16 nm table with leakage x ``multiple`` (its low-leakage cells; high-performance
    cells leak 10-100x more, horowitz45.yaml)."""

    class Leaky(TableCostModel):
        name = "leaky"

        def leakage_mw(self, component):
            return super().leakage_mw(component) * multiple

    return Leaky(16)


def _on_chip_pj_by_voltage(multiple: float, voltages: np.ndarray) -> np.ndarray:
    layer, mapping = mg.parse_layer(RES2A), mg.Mapping.from_yaml(MAPPING)
    out = []
    for v in voltages:  # each design gives only its supply: it runs at fmax(V)
        arch = SIMBA.build({**simba_params(), "voltage_v": float(v)})
        r = mg.evaluate(layer, arch, mapping, cost_model=_leaky(multiple))
        out.append(r.energy_pj - r.energy_pj_by_category["dram"])
    return np.array(out)


@settings(max_examples=6, deadline=None)
@given(multiple=st.floats(1.0, 300.0))
def test_energy_per_op_is_u_shaped_in_voltage_at_fixed_work(multiple) -> None:
    # dynamic energy ~ V^2 falls with the supply; static energy ~ V / fmax(V) rises as the
    # supply nears the threshold: the total falls, then rises (never rises, then falls)
    energy = _on_chip_pj_by_voltage(multiple, np.linspace(0.42, 1.0, 12))
    lowest = int(np.argmin(energy))
    assert (np.diff(energy[: lowest + 1]) < 0).all()
    assert (np.diff(energy[lowest:]) > 0).all()


def test_with_high_performance_leakage_the_lowest_energy_is_above_vmin() -> None:
    # 30x the table's leakage (HP cells): measured minimum at about 0.50 V, not 0.42 V
    voltages = np.linspace(0.42, 1.0, 15)
    energy = _on_chip_pj_by_voltage(30.0, voltages)
    assert 0 < int(np.argmin(energy)) < len(voltages) - 1
