"""``magnet evaluate``: JSON and table output, against Timeloop and against hand arithmetic."""

from __future__ import annotations

import json
import math
import re

import pytest
from click.testing import CliRunner

from magnet.cli import main
from tests.conftest import DATA, REFERENCE

CONV1D_WS = REFERENCE / "timeloop/conv1d_2level_ws_os/replay_timeloop_2025-03/ws"
KEYS = {
    "macs",
    "latency_cycles",
    "utilization",
    "energy_pj",
    "energy_pj_by_level",
    "accesses",
    "area_mm2",
}
ACTIONS = {"reads", "fills", "updates"}


def run(*args: str) -> str:
    result = CliRunner().invoke(main, ["evaluate", *args])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    return result.stdout


def run_json(*args: str) -> dict:
    data = json.loads(run(*args, "--json"))
    assert data.keys() >= KEYS
    assert 0 < data["utilization"] <= 1
    for level, ops in data["accesses"].items():
        for op, acts in ops.items():
            assert op in ("weights", "inputs", "outputs"), (level, op)
            assert acts.keys() == ACTIONS, (level, op)
    return data


def accesses(data: dict, level: str, operand: str) -> tuple[float, float, float]:
    a = data["accesses"][level][operand]
    return a["reads"], a["fills"], a["updates"]


# ---- Timeloop input: Timeloop's replay of the conv1d tutorial -------------------------------
def test_timeloop_conv1d_ws_matches_timeloop() -> None:
    # Reference: tests/data/reference/timeloop/conv1d_2level_ws_os/replay_timeloop_2025-03/ws/
    # result.json: 48 cycles, 100 % utilisation; energy by level MACC 40.56, Buffer 83.89,
    # MainMemory 235.55 pJ.
    data = run_json("--timeloop", str(CONV1D_WS / "timeloop-input.yaml"))
    ref = json.loads((CONV1D_WS / "result.json").read_text())
    assert data["macs"] == 48 == ref["summary"]["computes"]
    assert data["latency_cycles"] == 48 == ref["summary"]["cycles"]
    assert data["utilization"] == 1.0
    assert list(data["energy_pj_by_level"]) == ["MainMemory", "Buffer", "MACC"]
    assert data["energy_pj_by_level"]["MainMemory"] == pytest.approx(235.55, rel=0.01)
    for level, ref_pj in ref["energy_pJ_by_level"].items():
        assert data["energy_pj_by_level"][level] == pytest.approx(ref_pj, rel=0.01), level
    assert list(data["accesses"]) == ["MainMemory", "Buffer"]
    # MainMemory: 64-bit accesses of 8-bit words (8 words each). Reads W 3 -> 1 access, I 18
    # -> 3; O updates 16 -> 2. (1 + 3) x 43.353054 + 2 x 30.878292 + leak 0.007972 x 48
    # = 173.412216 + 61.756584 + 0.382656 = 235.551456 pJ.
    assert data["energy_pj_by_level"]["MainMemory"] == pytest.approx(235.551456, rel=1e-9)
    # ART of the input: MainMemory 707084.0 + Buffer 887.84 + MACC 332.25 um^2.
    assert data["area_mm2"] == pytest.approx((707084.0 + 887.84 + 332.25) / 1e6, rel=1e-9)


def test_timeloop_input_of_the_tests_by_hand() -> None:
    # tests/data/timeloop_conv1d.yaml: P=16, R=3 (48 MACs); MainMemory loops R3, Buffer P16.
    data = run_json("--timeloop", str(DATA / "timeloop_conv1d.yaml"))
    assert data["macs"] == 48
    assert data["latency_cycles"] == 48  # one MAC, 3 x 16 iterations
    assert data["utilization"] == 1.0
    # Buffer tiles: W 1, I 16, O 16. Above it R3: W changes each step -> 3 fills; I slides by
    # one word per step -> 16 + 1 + 1 = 18 fills; O is not indexed by R -> filled once (16,
    # no read-back). MAC reads 48 of W and I; O: 48 updates, 48 - 16 first touches = 32 reads.
    assert accesses(data, "Buffer", "weights") == (48, 3, 0)
    assert accesses(data, "Buffer", "inputs") == (48, 18, 0)
    assert accesses(data, "Buffer", "outputs") == (32, 0, 48)
    assert accesses(data, "MainMemory", "weights") == (3, 0, 0)
    assert accesses(data, "MainMemory", "inputs") == (18, 0, 0)
    assert accesses(data, "MainMemory", "outputs") == (0, 0, 16)
    # MainMemory (64-bit blocks = 8 words): reads ceil(3/8) + ceil(18/8) = 1 + 3 = 4 x 40 pJ
    # = 160; updates ceil(16/8) = 2 x 25 pJ = 50 -> 210 pJ.
    # Buffer (1 word per access): reads (48 + 48 + 32) x 0.5 = 64; fills (3 + 18) x 0.75 =
    # 15.75; updates 48 x 0.25 = 12; leak 0.001 x 48 cycles = 0.048 -> 91.798 pJ.
    # MACC: 48 x 1.0 = 48 pJ (Timeloop charges no arithmetic leakage).
    assert data["energy_pj_by_level"] == pytest.approx(
        {"MainMemory": 210.0, "Buffer": 91.798, "MACC": 48.0}, rel=1e-12
    )
    assert data["energy_pj"] == pytest.approx(210.0 + 91.798 + 48.0, rel=1e-12)
    # ART: Buffer 900 + MACC 300 um^2 (MainMemory has no area entry) = 0.0012 mm^2.
    assert data["area_mm2"] == pytest.approx(0.0012, rel=1e-12)


# ---- explicit architecture + layer + mapping, built-in 45 nm tables -------------------------
TINY = (
    "--noc",
    "none",
    "--arch",
    str(DATA / "tiny_arch.yaml"),
    "--layer",
    "K=4,C=2,P=4",
    "--mapping",
    str(DATA / "tiny_mapping.yaml"),
)


def test_explicit_arch_json_by_hand() -> None:
    # Layer K=4, C=2, P=4: 32 MACs; 8 weights (K x C), 8 inputs (C x P), 16 outputs (K x P).
    # Mapping: DRAM loops K4; RF loops P4 then C2 (C innermost). 2 MACs, one used.
    data = run_json(*TINY)
    assert data["macs"] == 32
    assert data["latency_cycles"] == 32  # 4 x 4 x 2 temporal iterations, no bandwidth limit
    assert data["utilization"] == 0.5  # 32 MACs / (32 cycles x 2 MAC units)
    assert data["bottleneck"] == "compute"
    # RF tiles: W C2 = 2, I C2 x P4 = 8, O P4 = 4. Above the RF only K4:
    #   W: K indexes W -> 2 x 4 = 8 fills;  I: K does not -> filled once, 8;
    #   O: K indexes O -> 4 x 4 = 16 = every output once -> no read-back (fills 0).
    # MAC side: 32 reads of W and of I; 32 updates of O, 32 - 16 first touches = 16 reads.
    assert accesses(data, "RF", "weights") == (32, 8, 0)
    assert accesses(data, "RF", "inputs") == (32, 8, 0)
    assert accesses(data, "RF", "outputs") == (16, 0, 32)
    assert accesses(data, "DRAM", "weights") == (8, 0, 0)
    assert accesses(data, "DRAM", "inputs") == (8, 0, 0)
    assert accesses(data, "DRAM", "outputs") == (0, 0, 16)
    # Energies (magnet/cost/tables/horowitz45.yaml, 45 nm, no scaling, wires not priced; the
    # architecture gives no supply: the node's nominal; clock 1 GHz):
    # DRAM: 20.3125 pJ/bit x 8 bits = 162.5 pJ per 1-word access; (8 + 8 + 16) x 162.5 = 5200;
    #   control: each of the 32 accesses generates a 32-bit address, 32 x add(32) 0.1 = 3.2.
    # RF (regfile, 64 entries x 8 bits): 8 x 0.00106 + 64 x 0.02947 x 6 / 32 = 0.36212 pJ per
    #   access; 32+32+16 reads, 8+8 fills, 32 updates = 128 x 0.36212 = 46.35136; control:
    #   a 6-bit address (64 entries) per access, add(6) = 0.03 x (0.05 / 0.03) ** log2(6 / 8)
    #   (Horowitz's 8- and 16-bit adds, power law) = 0.024274, x 128 = 3.10703; leakage
    #   512 bits x 1.2e-5 mW x 32 ns = 0.196608; clock, fine-gated (the default): one 8-bit
    #   port register (5.5 fJ a bit at the flop + as much in the tree) loads on 32 of the 32
    #   cycles (48 writes, at most one a cycle) = 2.816, and its gating cell ticks every cycle
    #   (5.7 fJ + as much in the tree's trunk: 0.0114 pJ) x 32 = 0.3648.
    # MAC: 8-bit multiply 0.2 + 32-bit add 0.1 = 0.3 pJ x 32 = 9.6; its 8-bit input register
    #   loads once a MAC, 32 x 8 x 0.011 pJ = 2.816, and the gating cell of the one MAC in use
    #   ticks 32 cycles = 0.3648; leakage (282 + 137 um^2) x 2e-6 mW/um^2 x 32 ns x 2 MACs
    #   (both powered) = 0.053632.
    add6 = 0.03 * (0.05 / 0.03) ** math.log2(6 / 8)
    rf = 46.35136 + 128 * add6 + 0.196608 + 2.816 + 0.3648
    mac = 9.6 + 2.816 + 0.3648 + 0.053632
    assert data["energy_pj_by_level"] == pytest.approx(
        {"DRAM": 5203.2, "RF": rf, "MAC": mac}, rel=1e-9
    )
    assert data["energy_pj"] == pytest.approx(5203.2 + rf + mac, rel=1e-9)
    cat = data["energy_pj_by_category"]
    assert cat["dram"] == pytest.approx(5200.0)
    assert cat["math"] == pytest.approx(9.6)
    assert cat["memory"] == pytest.approx(46.35136)
    assert cat["clock"] == pytest.approx(2 * (2.816 + 0.3648))
    assert cat["control"] == pytest.approx(3.2 + 128 * add6)
    assert cat["static"] == pytest.approx(0.196608 + 0.053632)
    assert cat["noc"] == 0
    # Area: RF 512 bits x 6 um^2 = 3072, MACs 2 x 419 = 838 and 3 clock-gating cells (the RF's
    # port register, the 2 MACs' input registers) x 3.99 = 11.97 are logic (3921.97 um^2); the
    # clock tree 5 % of it, white space for 70 % placement density, control 2 % of the die
    # (TPU v1): 3921.97 x 1.05 / 0.7 / 0.98 um^2; DRAM none.
    logic = 3072 + 838 + 3 * 3.99
    assert data["area_mm2"] == pytest.approx(logic * 1.05 / 0.7 / 0.98 / 1e6, rel=1e-9)


def test_explicit_arch_table() -> None:
    text = run(*TINY)
    assert re.search(r"bottleneck:?\s*compute", text)
    assert "50.00 %" in text  # utilisation
    assert "5,268.87" in text  # total energy, pJ (see the JSON test)
    for level in ("DRAM", "RF", "MAC"):  # level names as in the input file
        assert re.search(rf"^{level}\s", text, re.M), level
    # access rows: level, operand, reads, fills, updates, energy (DRAM outputs 16 x 162.5 pJ)
    assert re.search(r"^DRAM\s+outputs\s+0\s+0\s+16\.00\s+2,600\.00\s*$", text, re.M)
    assert re.search(r"^RF\s+weights\s+32\.00\s+8\.00\s+0\s", text, re.M)
    # energy by level: DRAM 5,203.20 pJ = 98.75 % of 5,268.87 pJ
    assert re.search(r"^DRAM\s+5,203\.20\s+98\.8%", text, re.M)
