"""--cost-model on the CLI and the `magnet costs` command."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from magnet.cli import main
from tests.conftest import REPO

LAYER = "K=64,C=64,P=56,Q=56,R=3,S=3"
MAPPING = str(REPO / "experiments" / "mappings" / "simba-chip_resnet50_res2a_branch2b.yaml")
PLUGIN = str(REPO / "cost_models" / "sram_compiler.py") + ":SramCompiler"


def _evaluate(*extra: str) -> dict:
    out = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            "simba-chip",
            "--layer",
            LAYER,
            "--mapping",
            MAPPING,
            "--json",
            *extra,
        ],
    )
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_evaluate_with_a_plugin_from_a_path_and_a_registered_name() -> None:
    base = _evaluate()
    plugin = _evaluate("--cost-model", PLUGIN)
    normalized = _evaluate("--cost-model", "eyeriss-normalized")
    assert base["cost_model"] == "horowitz45-scaled-16nm"
    assert plugin["cost_model"].startswith("sram-compiler")
    assert normalized["cost_model"].startswith("eyeriss-normalized")
    # same mapping, same accesses, different prices
    assert plugin["accesses"] == base["accesses"] == normalized["accesses"]
    assert plugin["energy_pj"] != base["energy_pj"]
    # the MAC is priced by each model: eyeriss-normalized's unit is a 16-bit MAC (1x), not
    # the table's 8-bit one, so its MAC energy differs from the built-in's
    assert normalized["energy_pj_by_level"]["MAC"] != base["energy_pj_by_level"]["MAC"]


def test_costs_command_lists_every_component() -> None:
    out = CliRunner().invoke(main, ["costs", "--arch", "simba-chip", "--json"])
    assert out.exit_code == 0, out.output
    rows = json.loads(out.output)
    # 6 storage levels + the MAC + 3 fan-out networks (PE array, vector units, lanes) + the
    # post-processing unit's 4 parts (a lane's multiply-add unit and adder, table, buffer)
    assert len(rows) == 14
    dram = next(r for r in rows if r["component"] == "DRAM")
    # simba-chip's DRAM is the default technology, LPDDR4: 13.0 pJ/bit (dram.yaml: the low end
    # of 13.0-14.0, H. Ha's thesis, as quoted) x a 64-bit access = 832 pJ, not node-scaled
    assert dram["energy_pj"]["read"] == pytest.approx(13.0 * 64)
    listed = CliRunner().invoke(main, ["costs", "--list"])
    assert "eyeriss-normalized" in listed.output and "sram-analytical" in listed.output


def test_map_accepts_a_cost_model_and_bad_specs_exit_2() -> None:
    out = CliRunner().invoke(
        main,
        [
            "map",
            "--arch",
            "simba-chip",
            "--layer",
            "K=16,C=16,P=8,Q=8",
            "--dataflow",
            "ws",
            "--cost-model",
            "sram-analytical",
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert "sram-analytical" in json.loads(out.output)["cost_model"]
    bad = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            "simba-chip",
            "--layer",
            LAYER,
            "--mapping",
            MAPPING,
            "--cost-model",
            "no_such_file.py:Model",
        ],
    )
    assert bad.exit_code == 2
    assert "plug-in file not found" in bad.output and "Traceback" not in bad.output
