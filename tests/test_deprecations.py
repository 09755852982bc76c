"""The 0.2 names that 0.3 renamed are gone, each refused in one line naming the new one or
the allowed ones (``network``, the on-chip network, now ``noc``, as a keyword, a search
space field and a flag; ``magnet.templates.design``, now ``magnet.design``;
``magnet.mapping.evaluate``, now ``magnet.model.evaluate`` and its ``evaluate_mapping``),
while a study stored by 0.2 still resumes."""

from __future__ import annotations

import importlib
import json

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
    with pytest.raises(MagnetError, match=r"old.yaml: network: the field 'network' is 'noc' since"):
        load_space(path)


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
    assert json.loads(out.stdout)["energy_pj_by_category"]["network"] == 0  # no wires priced


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
