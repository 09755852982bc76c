"""The 0.2 names renamed by issue 21 keep working for one release, each with a warning that
names the new one: ``network`` (the on-chip network, now ``noc``) as a keyword, a search
space field and a flag; ``magnet.templates.design`` (now ``magnet.design``);
``magnet.model.evaluate.evaluate`` (now ``evaluate_mapping``)."""

from __future__ import annotations

import importlib
import json
import sys

import pytest
import yaml
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.search.design_space import load_space
from tests.conftest import DATA

LAYER = "K=8,C=8,P=4"


def test_design_network_keyword_warns_and_sets_the_noc() -> None:
    arch = mg.load_arch("simba-chip")
    with pytest.warns(DeprecationWarning, match=r"design\(noc=\.\.\.\)"):
        old = mg.design(arch, network="none")
    assert old.costs.noc == "none"
    assert old.costs.wire_pj_per_bit_mm.sum() == 0  # no wires priced: the same as noc="none"
    assert mg.design(arch, noc="none").costs.noc == "none"


def test_the_old_module_of_design_warns_and_gives_the_same_objects() -> None:
    sys.modules.pop("magnet.templates.design", None)
    with pytest.warns(DeprecationWarning, match="magnet.design"):
        old = importlib.import_module("magnet.templates.design")
    assert old.Design is mg.Design
    assert old.build_design is importlib.import_module("magnet.design").build_design


def test_evaluate_of_magnet_mapping_evaluate_is_evaluate_mapping() -> None:
    module = importlib.import_module("magnet.model.evaluate")
    with pytest.warns(DeprecationWarning, match="evaluate_mapping"):
        old = module.evaluate
    assert old is module.evaluate_mapping


def test_a_space_with_the_field_network_reads_as_noc(tmp_path) -> None:
    data = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    data.pop("noc", None)
    data["network"] = "none"
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.warns(FutureWarning, match="'network' is now 'noc'"):
        space = load_space(path)
    assert space.noc == "none"


def test_the_flag_network_is_the_flag_noc(tmp_path) -> None:
    mapping = tmp_path / "m.yaml"
    mapping.write_text("mapping:\n  - target: DRAM\n    temporal: {K: 8, C: 8, P: 4}\n")
    given = ["evaluate", "--arch", "simba-chip", "--layer", LAYER, "--mapping", str(mapping)]
    records = {}
    for flag in ("--noc", "--network"):
        out = CliRunner().invoke(main, [*given, flag, "none", "--json"])
        assert out.exit_code == 0, out.output
        records[flag] = json.loads(out.stdout)
    assert records["--noc"]["energy_pj"] == records["--network"]["energy_pj"]
    assert records["--noc"]["energy_pj_by_category"]["network"] == 0  # no wires priced


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
