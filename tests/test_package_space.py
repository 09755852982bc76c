"""Issue 22's package search spaces: ``package`` (mesh size, link and the chiplet's own
parameters together) and ``package-fixed-macs`` (chiplet count against chiplet size at
36,864 MACs), and the ``groups`` range that expresses the fixed total without a trial
spent on a design that breaks it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.report.design_page import build_arch, param_rows
from magnet.search import driver, load_space, search
from magnet.search.design_space import constraint_violations
from magnet.templates import get_template
from tests.conftest import DATA

SMALL_NET = DATA / "search" / "small_net.yaml"
#: Simba's package: 36 chiplets of 4 x 4 PEs, each PE 8 vector units of 8 lanes (Shao et
#: al., MICRO 2019): 36 * 16 * 8 * 8 = 36 * 1024 = 36,864 MACs.
SIMBA_PACKAGE_MACS = 36 * 4 * 4 * 8 * 8


def total_macs(params: dict[str, int]) -> int:
    """A package design's MACs, from its parameters."""
    chiplet = params["pe_rows"] * params["pe_cols"] * params["vector_units"]
    return params["chiplets_x"] * params["chiplets_y"] * chiplet * params["vector_width"]


def test_the_package_space_searches_the_mesh_the_link_and_the_chiplet_together() -> None:
    space = load_space("package")
    assert space.template == "package"
    varied = set(space.ranges())
    assert {"chiplets_x", "chiplets_y", "link"} <= varied
    assert {"vector_units", "pe_rows", "pe_cols", "weight_buffer", "global_buffer"} <= varied
    assert space.ranges()["link"].listed() == ["grs", "ucie-standard", "ucie-advanced"]
    # chiplets_x, chiplets_y in pow2 [1, 4]: 1, 2, 4 each (3 x 3 meshes, 1 to 16 chiplets);
    # link 3; vector_units 3; weight, input, global buffer 3 each; pe_rows, pe_cols 2 each:
    # 3 * 3 * 3 * 3 * 3 * 3 * 3 * 2 * 2 = 8,748 designs
    assert space.size() == 3**7 * 2 * 2 == 8748


def test_a_search_of_the_package_space_runs(tmp_path) -> None:
    study = search("package", str(SMALL_NET), n_trials=2, storage=str(tmp_path / "s.journal"))
    assert len(study.trials("ok")) == 2
    for trial in study.trials("ok"):
        assert {"chiplets_x", "chiplets_y", "link", "pe_rows"} <= set(trial.params)


def test_every_design_of_the_fixed_mac_space_has_36864_macs() -> None:
    space = load_space("package-fixed-macs")
    grid = driver.grid(space)
    # 7 splits (1, 4, 9, 16, 36, 64, 144 chiplets) x 3 links x 2 weight x 2 input buffers
    assert space.size() == 7 * 3 * 2 * 2 == 84
    template = get_template("package")
    chiplets = set()
    for combo in itertools.product(*grid.values()):
        params = space.design(dict(zip(grid, combo, strict=True)))
        assert total_macs(params) == SIMBA_PACKAGE_MACS == 36_864
        # the built package agrees: its lanes are the MACs (each group checked once, below)
        chiplets.add(params["chiplets_x"] * params["chiplets_y"])
    for label in grid["split"]:
        params = space.design({"split": label})
        arch = template.build(template.params(params), name=label)
        assert arch.compute.mesh_x * arch.compute.mesh_y == 36_864, label
        # the global buffer is Simba's 64 KiB per 16 PEs = 4 KiB per PE in every group:
        # 576 PEs * 4 KiB = 2,304 KiB of global buffer on every package
        count = params["chiplets_x"] * params["chiplets_y"]
        assert count * params["global_buffer"] == 2304 * 1024, label
        # the names say it: chiplets x MACs per chiplet
        assert label == f"{count} x {36_864 // count}"
    assert chiplets == {1, 4, 9, 16, 36, 64, 144}


def test_a_search_of_the_fixed_mac_space_runs_and_its_trials_name_their_group(tmp_path) -> None:
    storage = str(tmp_path / "s.journal")
    study = search("package-fixed-macs", str(SMALL_NET), n_trials=3, storage=storage)
    assert study.counts()["designs"] == 3
    assert len(study.trials("ok")) == 3  # a group's name alone is no design: none refused
    for trial in study.trials("ok"):
        label = trial.params["split"]
        arch = build_arch(study, trial)  # the design page rebuilds it from the group
        assert arch.compute.mesh_x * arch.compute.mesh_y == 36_864
        shown = {row["name"]: row["text"] for row in param_rows(study, trial)}
        assert shown["split"] == label
        assert int(shown["chiplets_x"]) * int(shown["chiplets_y"]) == int(label.split()[0])


def test_a_constraint_on_grouped_parameters_is_read_from_the_group(tmp_path) -> None:
    data = yaml.safe_load(Path(load_space("package-fixed-macs").source).read_text())
    data["constraints"] = ["chiplets_x * chiplets_y <= 16"]
    path = tmp_path / "space.yaml"
    path.write_text(yaml.safe_dump(data))
    space = load_space(path)
    assert constraint_violations(space, space.design({"split": "16 x 2304"})) == []
    broken = constraint_violations(space, space.design({"split": "36 x 1024"}))  # 36 > 16
    assert broken == ["chiplets_x * chiplets_y <= 16"]


GROUPS = {"a": {"chiplets_x": 1, "pe_rows": 4}, "b": {"chiplets_x": 2, "pe_rows": 2}}


@pytest.mark.parametrize(
    ("params", "constraints", "message"),
    [
        (
            {"pe_rows": {"groups": GROUPS}},
            [],
            "params.pe_rows: a groups range takes a name of its own, not the package "
            "template's parameter or dataflow 'pe_rows'",
        ),
        (
            {"split": {"groups": {"a": {"pe_rowz": 4}}}},
            [],
            "params.split.groups.a: unknown parameter 'pe_rowz' of the package template; allowed: ",
        ),
        (
            {"split": {"groups": {"a": {"pe_rows": 4}, "b": {"pe_rows": 2, "pe_cols": 2}}}},
            [],
            "params.split: every group sets the same parameters; group 'b' differs from the "
            "first in: pe_cols",
        ),
        (
            {"split": {"groups": GROUPS}, "pe_rows": {"choices": [2, 4]}},
            [],
            "params.split.groups.a: 'pe_rows' is set by this group and by params.pe_rows",
        ),
        (
            {"split": {"groups": {"a": {"pe_rows": {"choices": [2, 4]}}}}},
            [],
            "params.split: group 'a': pe_rows must be single values",
        ),
        ({"split": {"groups": {1: {"pe_rows": 4}}}}, [], "params.split: a group's name must be"),
        ({"split": {"groups": {"a": 4}}}, [], "params.split: group 'a': give its template"),
        ({"split": {"groups": {}}}, [], "params.split: groups: Dictionary should have at least"),
        ({"split": {"groups": GROUPS, "choices": [1]}}, [], "give exactly one of"),
        (
            {"split": {"groups": {"a": {"pe_rows": 4}, "b": {"pe_rows": 0}}}},
            [],
            "params.split: the group 'b': pe_rows: Input should be greater than or equal to 1",
        ),
        (
            {"split": {"groups": GROUPS}},
            ["1 / (pe_rows - 2) > 0"],
            "constraints.0: '1 / (pe_rows - 2) > 0' cannot be evaluated at split='b'",
        ),
        (
            {"splitt": {"choices": [1, 2]}},
            [],
            "params.splitt: unknown parameter of the package template; allowed: ",
        ),
    ],
)
def test_bad_groups_exit_2_naming_the_file_and_the_field(
    tmp_path, params, constraints, message
) -> None:
    data = {
        "name": "bad",
        "template": "package",
        "params": params,
        "constraints": constraints,
        "objectives": ["energy_pj"],
        "workloads": [str(SMALL_NET)],
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MagnetError) as info:
        load_space(path)
    assert message in str(info.value) and str(path) in str(info.value)
    out = CliRunner().invoke(main, ["search", str(path), "--storage", str(tmp_path / "s.j")])
    assert out.exit_code == 2 and message in out.output and "Traceback" not in out.output
    assert not (tmp_path / "s.j").exists()  # refused before any work


def test_magnet_spaces_lists_the_package_spaces_in_aligned_columns() -> None:
    out = CliRunner().invoke(main, ["spaces"])
    assert out.exit_code == 0, out.output
    lines = [line for line in out.output.splitlines() if line.startswith(("package", "magnet "))]
    assert [line.split()[:2] for line in lines] == [
        ["magnet", "simba"],
        ["package-fixed-macs", "package"],
        ["package", "package"],
    ]
    # the template column starts after the longest name ("package-fixed-macs", 18 characters)
    assert {line.index(line.split()[1], 18) for line in lines} == {19}


def test_the_readme_example_sets_a_group_s_parameters_together(tmp_path) -> None:
    from tests.test_readme import block_with

    path = tmp_path / "my-space.yaml"
    path.write_text(block_with("yaml", "name: my-space"))
    space = load_space(path)
    # the README's groups: wide = pe_cols 8, 128 KiB = 131,072 bytes; narrow = 2, 32 KiB
    assert space.design({"shape": "wide"})["pe_cols"] == 8
    assert space.design({"shape": "wide"})["global_buffer"] == 128 * 1024 == 131_072
    assert space.design({"shape": "narrow"})["global_buffer"] == 32 * 1024
    assert "shape" not in space.design({"shape": "narrow"})


def test_the_driver_draws_unseen_designs_by_group_name() -> None:
    import numpy as np

    space = load_space("package-fixed-macs")
    rng = np.random.default_rng(0)
    seen: set[str] = set()
    for _ in range(84):  # the space's 84 designs (7 x 3 x 2 x 2), each drawn once
        params = driver.unseen_design(space, seen, rng)
        assert params is not None and params["split"] in driver.grid(space)["split"]
        assert total_macs(space.design(params)) == 36_864
        seen.add(driver.design_key(params))
    assert len(seen) == 84
    assert driver.unseen_design(space, seen, rng) is None  # none left
