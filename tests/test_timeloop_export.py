"""Timeloop out (issue 20, item 2): ``magnet export-timeloop`` writes a design, a layer and a
mapping as Timeloop v0.4 input, and magnet's Timeloop reader on that file gives back magnet's
own result: the same cycles, the same reads, fills and updates at every level, the same
energy in total and per level (the ERT carries magnet's prices, ``leak`` and ``compute`` the
energies Timeloop has no action for: ``magnet.interop.timeloop_writer``).

Energies are compared to 1e-12 relative: the file stores each price as Python's shortest
round-tripping decimal, but ``leak`` and ``compute`` are this run's sums divided by cycles x
instances or by MACs, and multiplied back on reading, which may move the last bit.
"""

from __future__ import annotations

import json

import pytest
import yaml
from click.testing import CliRunner
from click.testing import Result as CliResult
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_timeloop_reference import CASES, TL

import magnet as mg
from magnet.api import evaluate, map_layer
from magnet.cli import main
from magnet.design import build_design
from magnet.errors import DesignInfeasible, MagnetError
from magnet.interop import load_timeloop, write_timeloop
from magnet.interop.timeloop_writer import TIMELOOP_FILE, timeloop_input
from magnet.model.evaluate import Result
from magnet.workload.layer import Layer
from tests.conftest import DATA
from tests.test_dataflow_coverage import SMALL_SIMBA

REL = 1e-12
SMALL_FAST = {"samples": 200, "rounds": 2, "population": 8, "children": 8, "exact_below": 0}
ARCHS = {
    # small members of each template; the simba one has both collectors, so that every
    # named dataflow runs, and its own operating point with gating (static and clock
    # energy folded into the written leak)
    "simba": mg.templates.simba(
        **{**SMALL_SIMBA, "vector_units": 2},
        weight_collector=2,
        accum_collector=4,
        power_gating=True,
        clock_gating=True,
    ),
    "eyeriss": mg.templates.eyeriss(pe_rows=3, pe_cols=4, global_buffer="8KiB"),
    "systolic": mg.templates.systolic(rows=8, cols=4, ifmap_sram="4KiB", ofmap_sram="2KiB"),
}
PAIRS = [
    (template, flow)
    for template, arch in ARCHS.items()
    for flow in mg.templates.get_template(arch.template).dataflows
]


def run_cli(*args: str) -> CliResult:
    return CliRunner().invoke(main, list(args))


def read_back(result: Result, folder) -> Result:
    """``result`` written as Timeloop input and evaluated from that file."""
    tl = load_timeloop(write_timeloop(result, folder))
    return evaluate(tl.layer, tl.design(), tl.mapping)


def assert_same(ours: Result, back: Result) -> None:
    """Cycles and every count exactly; energy in total and per level to ``REL``."""
    assert back.latency_cycles == ours.latency_cycles
    assert back.compute_cycles == ours.compute_cycles
    # a level the writer adds (the Y half of a fan-out split) keeps nothing and costs nothing
    added = {name for name in back.accesses if name not in ours.accesses}
    assert all(not back.accesses[name] for name in added)
    assert {k: v for k, v in back.accesses.items() if k not in added} == ours.accesses
    assert back.energy_pj == pytest.approx(ours.energy_pj, rel=REL)
    by_level = back.energy_pj_by_level
    assert all(by_level[name] == 0 for name in added)
    for name, pj in ours.energy_pj_by_level.items():
        assert by_level[name] == pytest.approx(pj, rel=REL, abs=1e-9), name
    assert back.area_mm2 == pytest.approx(ours.area_mm2, rel=REL)


@st.composite
def layers(draw) -> Layer:
    """Convolutions and GEMMs: 1x1 or 3x3 windows, strides 1 or 2, a few channel counts."""
    r = draw(st.sampled_from([1, 3]))
    return Layer(
        name="drawn",
        N=draw(st.sampled_from([1, 2])),
        K=draw(st.sampled_from([3, 8, 16, 24])),
        C=draw(st.sampled_from([1, 4, 16])),
        P=draw(st.sampled_from([1, 5, 7])),
        Q=draw(st.sampled_from([1, 3, 7])),
        R=r,
        S=r,
        wstride=draw(st.sampled_from([1, 2])),
        hstride=draw(st.sampled_from([1, 2])),
    )


@pytest.mark.parametrize(("template", "flow"), PAIRS)
@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(layer=layers())
def test_round_trip_every_template_and_dataflow(template, flow, layer, tmp_path) -> None:
    try:
        design = build_design(ARCHS[template], flow)
    except DesignInfeasible:
        pytest.fail(f"{template} {flow}: the test's design should run every dataflow")
    outcome = map_layer(layer, design, seed=1, **SMALL_FAST)
    if outcome.result is None:
        return  # this dataflow cannot map this shape here: nothing to write
    assert_same(outcome.result, read_back(outcome.result, tmp_path / "tl"))


def test_the_presets_round_trip_at_their_operating_points(tmp_path) -> None:
    """The full presets, priced with wires at their own clock and supply (simba-chip 1.96 GHz
    at 1.0 V, 16 nm): the writer folds wires, clock and leakage into the file exactly."""
    layer = Layer(name="conv", K=64, C=32, P=14, Q=14, R=3, S=3)
    for preset in ("simba-chip", "eyeriss-chip", "systolic-128", "simba-package-4"):
        result = map_layer(layer, mg.load_arch(preset), seed=0, **SMALL_FAST).result
        assert result.energy_pj_by_category["noc"] > 0  # something to fold
        assert result.energy_pj_by_category["static"] > 0
        assert_same(result, read_back(result, tmp_path / preset))


def test_a_package_split_over_pixels_round_trips_with_its_halo(tmp_path) -> None:
    """Chiplets that split the output pixels exchange their window's overlap (the halo) over
    the links: the magnet block keeps the link, so the read-back counts the same DRAM reads
    (the union of the windows, not each chiplet's), link bits and energy."""
    share = Layer(name="c", K=64, C=32, P=4, Q=4, R=3, S=3)  # one chiplet's
    chip = map_layer(share, mg.load_arch("simba-chip"), "ws", seed=0).result
    split = {"spatial_x": {"P": 2}, "spatial_y": {"Q": 2}}
    levels = [
        lvl.model_copy(update=split) if lvl.target == "DRAM" else lvl for lvl in chip.mapping.levels
    ]
    layer = Layer(name="c", K=64, C=32, P=8, Q=8, R=3, S=3)
    result = evaluate(layer, mg.load_arch("simba-package-4"), mg.Mapping(levels=tuple(levels)))
    # 2 x 2 chiplets of 4 x 4 outputs each: DRAM reads the 10 x 10 x 32 input once
    assert result.accesses["DRAM"]["inputs"]["reads"] == pytest.approx(10 * 10 * 32)
    back = read_back(result, tmp_path / "tl")
    assert_same(result, back)
    assert back.nop_bytes == result.nop_bytes > 0


def test_a_dimension_on_both_axes_gets_a_dummy_level(tmp_path) -> None:
    """One spatial directive cannot put a dimension on X and on Y: the writer adds a dummy
    level below the fan-out for its Y half (Timeloop's own inter-PE dummies do the same)."""
    arch = ARCHS["systolic"]
    layer = Layer(name="gemm", K=4, C=72, P=6)
    mapping = mg.Mapping.from_data(
        [
            {
                "target": "OfmapSRAM",
                "temporal": {"K": 2, "C": 9, "P": 6},
                "spatial_x": {"K": 2, "C": 2},
                "spatial_y": {"C": 4},
            },
        ]
    )
    result = evaluate(layer, arch, mapping)
    data = timeloop_input(result)
    names = [c["name"] for c in data["architecture"]["subtree"][0]["local"]]
    assert "OfmapSRAM_y[1..4]" in names  # X fan-out of 4 above it, the Y fan-out of 8 below
    spatial = [d for d in data["mapping"] if d["type"] == "spatial"]
    assert [(d["target"], d["factors"].split()[:3], d["split"]) for d in spatial] == [
        ("OfmapSRAM", ["N1", "M2", "C2"], 2),
        ("OfmapSRAM_y", ["N1", "M1", "C4"], 0),
    ]
    assert_same(result, read_back(result, tmp_path / "tl"))


# ---- the Timeloop reference cases, written back ------------------------------------------
def leaf(path: str) -> str:
    """``system.PE.spad[1..168]`` -> ``spad``."""
    return path.split("[")[0].split(".")[-1]


@pytest.mark.parametrize("case", CASES)
def test_reference_cases_written_back_and_re_read_exactly(case, tmp_path) -> None:
    source = TL / CASES[case][0] / "timeloop-input.yaml"
    tl = load_timeloop(source)
    ours = evaluate(tl.layer, tl.design(), tl.mapping)
    back = read_back(ours, tmp_path / "tl")
    assert_same(ours, back)
    # and so still Timeloop's published result (tests/test_timeloop_reference.py)
    ref = json.loads((TL / CASES[case][0] / "result.json").read_text())
    assert back.latency_cycles == ref["summary"]["cycles"]
    # the ERT written back is the ERT read: magnet adds no control, clock or wires to it
    original = yaml.safe_load(source.read_text())["ERT"]["tables"]
    written = yaml.safe_load((tmp_path / "tl" / TIMELOOP_FILE).read_text())["ERT"]["tables"]
    prices = {leaf(t["name"]): {a["name"]: a["energy"] for a in t["actions"]} for t in written}
    for table in original:
        name = leaf(table["name"])
        for action in table["actions"]:
            if action["name"] in ("read", "write", "update") and name in prices:
                assert prices[name][action["name"]] == pytest.approx(action["energy"], rel=REL)


# ---- the file is Timeloop's --------------------------------------------------------------
def _reference_shapes() -> dict[str, set]:
    """Directive types, storage attributes and ERT actions Timeloop's own dumps use."""
    types, attrs, actions = set(), set(), set()
    for replay, _ in CASES.values():
        data = yaml.safe_load((TL / replay / "timeloop-input.yaml").read_text())
        types |= {d["type"] for d in data["mapping"]}
        for comp in data["architecture"]["subtree"][0]["local"]:
            attrs |= set(comp.get("attributes") or {})
        for table in data["ERT"]["tables"]:
            actions |= {a["name"] for a in table["actions"]}
    return {"types": types, "attrs": attrs, "actions": actions}


def test_the_written_file_speaks_timeloop_v04(tmp_path) -> None:
    """Timeloop is not installable here (not on PyPI or Debian), so the file is held to the
    shape of Timeloop's own dumps in tests/data/reference: every directive type, component
    attribute and ERT action is one those use; factors multiply to the problem per
    dimension; instance names and meshes agree."""
    known = _reference_shapes()
    result = map_layer(
        Layer(name="conv", K=16, C=8, P=7, Q=7, R=3, S=3), ARCHS["simba"], seed=0, **SMALL_FAST
    ).result
    data = timeloop_input(result)
    assert {d["type"] for d in data["mapping"]} <= known["types"]
    local = data["architecture"]["subtree"][0]["local"]
    for comp in local:
        # n_words: Timeloop's block size (src/model/buffer.cpp reads block-size or n_words)
        assert set(comp["attributes"]) <= known["attrs"] | {"n_words"}
        count = int(comp["name"].split("..")[1].rstrip("]"))
        assert comp["attributes"]["meshX"] * comp["attributes"]["meshY"] == count
    assert {a["name"] for t in data["ERT"]["tables"] for a in t["actions"]} <= known["actions"]
    product = {d: 1 for d in data["problem"]["shape"]["dimensions"]}
    for directive in data["mapping"]:
        for factor in directive.get("factors", "").split():
            product[factor[0]] *= int(factor[1:])
    instance = data["problem"]["instance"]
    assert product == {d: instance[d] for d in product}


# ---- the command ---------------------------------------------------------------------------
def test_cli_writes_what_evaluate_reads(tmp_path) -> None:
    mapping, out = tmp_path / "m.yaml", tmp_path / "tl"
    given = ["--arch", "simba-chip", "--layer", "K=16,C=8,P=7,Q=7,R=3,S=3"]
    found = run_cli("map", *given, *f"--dataflow ws --samples 300 --output {mapping}".split())
    assert found.exit_code == 0, found.stderr
    direct = run_cli("evaluate", *given, "--mapping", str(mapping), "--json")
    written = run_cli("export-timeloop", *given, "--mapping", str(mapping), "--output", str(out))
    assert written.exit_code == 0, written.stderr
    again = run_cli("evaluate", "--timeloop", str(out / TIMELOOP_FILE), "--json")
    assert again.exit_code == 0, again.stderr
    a, b = json.loads(direct.stdout), json.loads(again.stdout)
    assert b["latency_cycles"] == a["latency_cycles"]
    assert b["energy_pj"] == pytest.approx(a["energy_pj"], rel=REL)
    # written again over its own file: fine; the best mapping when none is given
    best = run_cli("export-timeloop", *given, *f"--dataflow ws --output {out}".split())
    assert best.exit_code == 0, best.stderr


def test_cli_refuses_bad_output_before_any_work(tmp_path) -> None:
    layer = "K=16,C=8,P=7,Q=7"
    foreign = tmp_path / "mine" / TIMELOOP_FILE
    foreign.parent.mkdir()
    foreign.write_text("architecture: {}  # the user's own\n")
    cases = {
        str(tmp_path / "mine"): "was not written by magnet",
        str(tmp_path / "no" / "such"): "does not exist",
        str(foreign): "is a file, not a folder",
    }
    for output, message in cases.items():
        r = run_cli("export-timeloop", "--arch", "simba-chip", "--layer", layer, "--output", output)
        assert r.exit_code == 2, output
        assert message in r.stderr and "Traceback" not in r.stderr
    assert foreign.read_text() == "architecture: {}  # the user's own\n"
    both = run_cli(
        "export-timeloop",
        "--arch",
        "simba-chip",
        "--layer",
        layer,
        "--dataflow",
        "ws",
        "--mapping",
        "m.yaml",
        "--output",
        str(tmp_path / "x"),
    )
    assert both.exit_code == 2 and "not both" in both.stderr


def test_a_bad_magnet_block_names_its_field(tmp_path) -> None:
    result = evaluate(
        Layer(name="fc", K=8, C=8),
        mg.load_arch("eyeriss-chip"),
        dataflow="ws",
        **SMALL_FAST,
    )
    path = write_timeloop(result, tmp_path / "tl")
    data = yaml.safe_load(path.read_text())
    for block, field in (
        ({"operand_bits": {"Nowhere": {"outputs": 24}}}, "magnet.operand_bits"),
        ({"pipeline": {"rows": 0}}, "magnet"),
        ({"colour": "blue"}, "magnet"),
    ):
        bad = tmp_path / f"bad-{field}.yaml"
        bad.write_text(yaml.safe_dump({**data, "magnet": {**data["magnet"], **block}}))
        with pytest.raises(MagnetError) as err:
            load_timeloop(bad)
        assert str(bad) in str(err.value) and field in str(err.value)


def test_a_file_written_by_magnet_0_2_reads_as_one_written_now(tmp_path) -> None:
    # tests/data/timeloop/magnet-0.2-simba-chip.yaml: `magnet export-timeloop --arch
    # simba-chip --layer K=64,C=64,P=56,Q=56,R=3,S=3 --output DIR` at ac36173 (its magnet
    # block of version 1 names the global buffer's fan-out `network: mesh`); written again
    # now (version 2: `topology: mesh`), both evaluate alike (area, with its mesh routers,
    # included)
    old = DATA / "timeloop" / "magnet-0.2-simba-chip.yaml"
    assert "GlobalBuffer: {network: mesh}" in old.read_text()
    given = ["--arch", "simba-chip", "--layer", "K=64,C=64,P=56,Q=56,R=3,S=3"]
    written = run_cli("export-timeloop", *given, "--output", str(tmp_path / "tl"))
    assert written.exit_code == 0, written.stderr
    new = tmp_path / "tl" / TIMELOOP_FILE
    assert "GlobalBuffer: {topology: mesh}" in new.read_text()
    runs = [run_cli("evaluate", "--timeloop", str(path), "--json") for path in (old, new)]
    assert [r.exit_code for r in runs] == [0, 0], [r.stderr for r in runs]
    a, b = (json.loads(r.stdout) for r in runs)
    assert a == b and "noc" in a["energy_pj_by_category"]
