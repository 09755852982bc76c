"""A package's chip-to-chip link as a priced component (issue 31, item 3, links of one's own):
a named kind (``link``, priced from ``magnet/cost/tables/links.yaml``) or a number of one's own
(``link_pj_per_bit`` >= 0), priced through the cost-model chain so a plug-in may price it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.cost import LinkComponent, arch_components, price_arch
from magnet.cost.lookup import load_cost_model
from magnet.cost.tables import load_link_table
from magnet.errors import PluginError
from magnet.search.design_space import builtin_spaces
from tests.test_package import _on_package

# K=64,C=32,P=Q=7 split over K on 2 x 2 chiplets (tests/test_package.py, by hand): 8 x 2,048
# weight bits x 1.5 hops + 8 x 1,568 input bits x 4 hops + 24 x 3,136 output bits x 1.5
# hops (DRAM's ports on the edge row: test_package's K split)
K_SPLIT_BITS = 8 * 2048 * 1.5 + 8 * 1568 * 4 + 24 * 3136 * 1.5
SPLIT = {"spatial_x": {"K": 2}, "spatial_y": {"K": 2}}
PACKAGE = mg.templates.get_template("package")
PRESET = PACKAGE.presets["simba-package-4"]


def _k_split(arch: mg.Arch) -> float:
    """The NoP energy of the K split on ``arch`` (pJ)."""
    r = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", SPLIT, arch)
    assert r.nop_bytes == K_SPLIT_BITS / 8 == 23_456  # the bits do not depend on the price
    return float(r.energy_pj_by_category["nop"])


def test_each_named_kind_is_a_cited_row_of_the_link_table() -> None:
    table = load_link_table().technologies
    assert {k: v.energy_pj_per_bit.value for k, v in table.items()} == {
        "grs": 1.17,
        "ucie-standard": 0.5,
        "ucie-advanced": 0.25,
    }
    assert all(v.energy_pj_per_bit.source for v in table.values())
    # the architecture names its link; the chain prices it (1.17 / 3 mm per bit-mm)
    arch = mg.load_arch("simba-package-4")
    assert arch.levels[0].fanout.link == "grs" and arch.levels[0].fanout.link_pj_per_bit is None
    costs = price_arch(arch)
    assert costs.link_pj_per_bit[-1] == 1.17 and costs.wire_pj_per_bit_mm[-1] == 1.17 / 3.0
    assert costs.sources["DRAM.link"].startswith("horowitz45")
    link = arch_components(arch).interconnects[-1]
    assert isinstance(link, LinkComponent) and link.technology == "grs" and link.hop_mm == 3.0


def test_a_word_crosses_one_hop_at_the_users_own_pj_per_bit() -> None:
    # the K split's 187,648 bits x hops at 0.8 pJ/bit: 150,118.4 pJ (at GRS's 1.17:
    # 219,548.16)
    own = PACKAGE.build({**PRESET, "link_pj_per_bit": 0.8})
    assert own.levels[0].fanout.link is None and own.levels[0].fanout.link_pj_per_bit == 0.8
    assert _k_split(own) == pytest.approx(0.8 * K_SPLIT_BITS, rel=1e-12)
    assert _k_split(own) == pytest.approx(150_118.4, rel=1e-12)
    assert _k_split(mg.load_arch("simba-package-4")) == pytest.approx(219_548.16, rel=1e-12)


def test_a_free_link_costs_nothing_and_still_carries_the_words() -> None:
    free = PACKAGE.build({**PRESET, "link_pj_per_bit": 0})
    assert free.levels[0].fanout.chip_to_chip  # still a package: halos, link bandwidth
    assert _k_split(free) == 0.0


def test_an_explicit_architectures_own_link_is_the_templates() -> None:
    arch = mg.load_arch("simba-package-4")
    fanout = arch.levels[0].fanout.model_copy(update={"link": None, "link_pj_per_bit": 0.8})
    levels = (arch.levels[0].model_copy(update={"fanout": fanout}), *arch.levels[1:])
    explicit = arch.model_copy(update={"levels": levels})
    own = PACKAGE.build({**PRESET, "link_pj_per_bit": 0.8})
    assert _k_split(explicit) == _k_split(own)


PLUGIN = '''
from magnet import CostModel


class HalfPjLink(CostModel):
    """Prices only chip-to-chip links: 0.5 pJ per bit per hop, whatever their kind."""

    name = "half-pj-link"

    def supports(self, component):
        return component.cls == "link"

    def energy_pj(self, component, action):
        return 0.5

    def leakage_mw(self, component):
        return 0.0

    def area_um2(self, component):
        return None


class NegativeLink(HalfPjLink):
    name = "negative-link"

    def energy_pj(self, component, action):
        return -1.0
'''


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "links_plugin.py"
    path.write_text(PLUGIN)
    return path


def test_a_plugin_prices_the_link(plugin: Path) -> None:
    # the K split's 187,648 bits at the plug-in's 0.5 pJ/bit: 93,824 pJ; everything else is
    # the built-in table's
    model = load_cost_model(f"{plugin}:HalfPjLink")
    arch = mg.load_arch("simba-package-4")
    costs = price_arch(arch, [model])
    assert costs.link_pj_per_bit[-1] == 0.5 and costs.sources["DRAM.link"] == "half-pj-link"
    assert costs.read_pj.tolist() == price_arch(arch).read_pj.tolist()
    r = _on_package("K=64,C=32,P=7,Q=7", "K=16,C=32,P=7,Q=7", SPLIT, arch)
    plugged = mg.api.evaluate(r.layer, arch, r.mapping, cost_model=[model])
    assert plugged.energy_pj_by_category["nop"] == pytest.approx(93_824, rel=1e-12)
    # magnet costs lists the link with the model that priced it
    out = CliRunner().invoke(
        main,
        ["costs", "--arch", "simba-package-4", "--cost-model", f"{plugin}:HalfPjLink", "--json"],
    )
    assert out.exit_code == 0, out.output
    rows = {row["component"]: row for row in json.loads(out.stdout)}
    assert rows["DRAM.link"]["class"] == "link" and rows["DRAM.link"]["model"] == "half-pj-link"
    assert rows["DRAM.link"]["energy_pj"] == {"transfer": 0.5}


def test_a_plugins_bad_link_price_is_the_plugins_failure(plugin: Path) -> None:
    model = load_cost_model(f"{plugin}:NegativeLink")
    pattern = r"returned -1.0 for the 'transfer' energy of component 'DRAM.link' \(link\)"
    with pytest.raises(PluginError, match=pattern):
        price_arch(mg.load_arch("simba-package-4"), [model])


# ---- bad input: one line naming the field and the range, exit 2, nothing written ---------
RANGE = r"link_pj_per_bit: expected a number from 0 to 1000 \(pJ per bit per hop"


def _hashes(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _refused(folder: Path, args: list[str], pattern: str) -> None:
    before = _hashes(folder)
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 2, out.output
    assert out.stdout == "" and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    assert re.search(pattern, lines[0]), lines[0]
    assert _hashes(folder) == before  # nothing written, nothing changed


BAD = ["-1", ".nan", ".inf", "-.inf", '"0.8"', "true", "2000", "[0.8]", "null_not"]


@pytest.mark.parametrize("value", BAD)
def test_a_bad_template_parameter_is_refused(tmp_path: Path, value: str) -> None:
    value = "{a: 1}" if value == "null_not" else value
    path = tmp_path / "package.yaml"
    path.write_text(f"template: package\nname: p\nlink_pj_per_bit: {value}\n")
    _refused(tmp_path, ["costs", "--arch", str(path)], rf"package\.yaml: {RANGE}")


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf"), "0.8", True])
def test_a_bad_fanout_in_an_architecture_yaml_is_refused(tmp_path: Path, value: object) -> None:
    data = mg.load_arch("simba-package-4").model_dump(mode="json", exclude_defaults=True)
    data.pop("template"), data.pop("params")
    data["levels"][0]["fanout"] = {"pitch_mm": 3.0, "link_pj_per_bit": value}
    path = tmp_path / "arch.yaml"
    path.write_text(yaml.safe_dump(data))
    pattern = rf"arch\.yaml: levels\.0\.fanout\.{RANGE}"
    _refused(tmp_path, ["costs", "--arch", str(path)], pattern)


def test_a_named_kind_and_a_number_both_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text("template: package\nname: p\nlink: ucie-advanced\nlink_pj_per_bit: 0.8\n")
    pattern = r"both\.yaml: give link .* or link_pj_per_bit .*, not both"
    _refused(tmp_path, ["costs", "--arch", str(path)], pattern)
    with pytest.raises(ValueError, match="not both"):
        mg.Fanout(pitch_mm=3.0, link="grs", link_pj_per_bit=0.8)


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("[[2, 0]]", r"dram_at \[2, 0\] is outside the 2 x 2 mesh: x in 0\.\.1, y in 0\.\.1"),
        ("[[0, -1]]", r"dram_at \[0, -1\] is outside the 2 x 2 mesh"),
        ("5", r"dram_at: 5 is not a place; allowed: edge, corner, centre, or a list"),
        ("[[0.5, 0]]", r"dram_at: chiplet \[0.5, 0\] is not \[x, y\] \(two whole numbers\)"),
        ("middle", r"'middle' is not a place; allowed: edge, corner, centre"),
        ("[]", r"dram_at: give at least one chiplet"),
    ],
)
def test_dram_outside_the_mesh_is_refused(tmp_path: Path, value: str, pattern: str) -> None:
    path = tmp_path / "package.yaml"
    path.write_text(f"template: package\nname: p\ndram_at: {value}\n")
    _refused(tmp_path, ["costs", "--arch", str(path)], rf"package\.yaml: .*{pattern}")


def test_a_port_outside_an_explicit_architectures_mesh_is_refused(tmp_path: Path) -> None:
    data = mg.load_arch("simba-package-4").model_dump(mode="json", exclude_defaults=True)
    data.pop("template"), data.pop("params")
    data["levels"][0]["fanout"]["ports"] = [[0, 0], [1, 2]]
    path = tmp_path / "arch.yaml"
    path.write_text(yaml.safe_dump(data))
    pattern = r"fanout\.ports \[1, 2\] is outside its 2 x 2 mesh of children \(x in 0\.\.1"
    _refused(tmp_path, ["costs", "--arch", str(path)], pattern)


def test_an_unknown_kind_on_an_explicit_architecture_names_the_kinds(tmp_path: Path) -> None:
    data = mg.load_arch("simba-package-4").model_dump(mode="json", exclude_defaults=True)
    data.pop("template"), data.pop("params")
    data["levels"][0]["fanout"] = {"pitch_mm": 3.0, "link": "serdes"}
    path = tmp_path / "arch.yaml"
    path.write_text(yaml.safe_dump(data))
    pattern = r"unknown link technology 'serdes'; allowed: grs, ucie-standard, ucie-advanced"
    _refused(tmp_path, ["costs", "--arch", str(path)], pattern)


@pytest.mark.parametrize(
    "value", ["-1", ".nan", "{choices: [0.5, -2]}", "{float: [-1, 2]}", "{float: [0, 2000]}"]
)
def test_a_bad_search_space_parameter_is_refused(
    tmp_path: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    space = builtin_spaces()["package"].read_text()
    link = "  link: {choices: [grs, ucie-standard, ucie-advanced]}"
    assert link in space
    (tmp_path / "space.yaml").write_text(space.replace(link, f"  link_pj_per_bit: {value}"))
    monkeypatch.chdir(tmp_path)
    _refused(tmp_path, ["search", "space.yaml", "--trials", "1", "--workers", "1"], RANGE)
