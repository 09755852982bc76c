"""The 0.2 names that 0.3 renamed are gone, each refused in one line naming the new one or
the allowed ones (``network``, the on-chip network, now ``noc``, as a keyword, a search
space field, a flag and a technology table's section; a fan-out's ``network``, now its
``topology``, and its ``reduction: network``, now ``interconnect``;
``magnet.templates.design``, now ``magnet.design``; ``magnet.mapping.evaluate``, now
``magnet.model.evaluate`` and its ``evaluate_mapping``), while a study stored by 0.2 still
resumes. "network" means the DNN, and only it."""

from __future__ import annotations

import importlib
import json
import re

import pytest
import yaml
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.errors import MagnetError
from magnet.search.design_space import load_space
from tests.conftest import DATA

LAYER = "K=8,C=8,P=4"


def test_the_design_keyword_network_is_refused_naming_noc() -> None:
    arch = mg.load_arch("simba-chip")
    with pytest.raises(
        MagnetError,
        match=r"design\(\): got an unexpected keyword argument 'network'; its arguments: .*\bnoc$",
    ):
        mg.design(arch, network="none")
    assert mg.design(arch, noc="none").costs.noc == "none"


@pytest.mark.parametrize("module", ["magnet.templates.design", "magnet.mapping.evaluate"])
def test_the_old_modules_are_gone(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_a_space_with_the_field_network_is_refused_naming_noc(tmp_path) -> None:
    data = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    data.pop("noc", None)
    data["network"] = "none"
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(MagnetError, match=r"old.yaml: the field 'network' is 'noc' since"):
        load_space(path)


ARCH = """name: two-rf
levels:
  - {name: DRAM, component: dram, keeps: [weights, inputs, outputs], fanout: {FANOUT}}
  - {name: RF, component: regfile, capacity: 8, keeps: [weights, inputs, outputs], mesh_x: 2}
compute: {name: MAC, mesh_x: 2}
technology_nm: 45
"""


@pytest.mark.parametrize(
    ("fanout", "message"),
    [
        (
            "network: mesh",
            r"levels\.0\.fanout: the field 'network' is 'topology' since magnet 0\.3",
        ),
        (
            "reduction: network",
            r"levels\.0\.fanout\.reduction: Input should be 'interconnect' or 'adder_tree' "
            r"\(got 'network'\)",
        ),
    ],
)
def test_an_arch_with_a_fanouts_old_names_is_refused_naming_the_new(
    tmp_path, fanout: str, message: str
) -> None:
    path = tmp_path / "old.yaml"
    path.write_text(ARCH.replace("FANOUT", fanout))
    out = CliRunner().invoke(main, ["map", "--arch", str(path), "--layer", LAYER])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert re.search(rf"old\.yaml: {message}", out.output), out.output
    path.write_text(ARCH.replace("FANOUT", fanout.replace("network", "topology", 1)))
    if "reduction" not in fanout:  # the new name reads
        assert mg.load_arch(str(path)).levels[0].fanout.topology == "mesh"


def test_a_technology_table_with_a_network_section_is_refused_naming_noc(tmp_path) -> None:
    from magnet.cost.tables import TECHNOLOGY_TABLE, load_technology_table

    text = TECHNOLOGY_TABLE.read_text()
    assert "\nnoc:\n" in text
    path = tmp_path / "old45.yaml"
    path.write_text(text.replace("\nnoc:\n", "\nnetwork:\n"))
    with pytest.raises(MagnetError, match=r"old45.yaml.*the field 'network' is 'noc' since"):
        load_technology_table(path)


def test_the_flag_network_is_refused_and_noc_prices_no_wires(tmp_path) -> None:
    mapping = tmp_path / "m.yaml"
    mapping.write_text("mapping:\n  - target: DRAM\n    temporal: {K: 8, C: 8, P: 4}\n")
    given = ["evaluate", "--arch", "simba-chip", "--layer", LAYER, "--mapping", str(mapping)]
    out = CliRunner().invoke(main, [*given, "--network", "none", "--json"])
    assert out.exit_code == 2
    assert "--network" in out.output and "Traceback" not in out.output
    assert "no such option '--network': it is '--noc' since magnet 0.3" in out.output
    out = CliRunner().invoke(main, [*given, "--noc", "none", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["energy_pj_by_category"]["noc"] == 0  # no wires priced


def test_a_study_stored_by_0_2_resumes(tmp_path) -> None:
    """A study made by 0.2 stored its space with ``network`` (now ``noc``) and workloads
    without ``pipeline``: the same command resumes it."""
    import optuna

    from magnet.search import load_study, search
    from magnet.search.storage import open_storage
    from magnet.search.study import CONFIG_ATTR

    data = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump(data))
    journal = str(tmp_path / "s.journal")
    search(space, n_trials=2, storage=journal)
    study = optuna.load_study(study_name="small", storage=open_storage(journal, create=True))
    config = json.loads(json.dumps(study.user_attrs[CONFIG_ATTR]))
    stored = config["space"]
    stored["network"] = stored.pop("noc")
    stored["workloads"] = [
        {k: v for k, v in w.items() if k != "pipeline"} for w in stored["workloads"]
    ]
    study.set_user_attr(CONFIG_ATTR, config)  # as 0.2 wrote it
    search(space, n_trials=3, storage=journal)
    assert load_study("small", journal).counts()["designs"] == 3
