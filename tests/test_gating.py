"""Clock and power gating as design choices: every template takes the styles, a search space
ranges over them, magnet 0.2's booleans still read, and a style the model does not have is
refused naming the allowed ones. The energies are derived by hand in tests/test_physical.py."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import magnet as mg
from magnet.arch.spec import CLOCK_GATING_STYLES, POWER_GATING_STYLES
from magnet.cli import main
from magnet.search import load_space
from magnet.templates import get_template, templates


def test_the_styles() -> None:
    assert CLOCK_GATING_STYLES == ("none", "idle-units", "fine")
    assert POWER_GATING_STYLES == ("none", "idle-units")


@pytest.mark.parametrize("name", sorted(templates()))
def test_every_template_takes_every_style_and_gates_fine_by_default(name: str) -> None:
    template = get_template(name)
    assert template.build({}).clock_gating == "fine"
    assert template.build({}).power_gating == "none"
    for clock in CLOCK_GATING_STYLES:
        for power in POWER_GATING_STYLES:
            arch = template.build({"clock_gating": clock, "power_gating": power})
            assert (arch.clock_gating, arch.power_gating) == (clock, power)


def test_magnet_0_2_booleans_read_as_the_styles_they_were() -> None:
    # studies stored by magnet 0.2 hold clock_gating: true (the instances in use clocked)
    on = mg.templates.simba(clock_gating=True, power_gating=True)
    assert (on.clock_gating, on.power_gating) == ("idle-units", "idle-units")
    off = mg.templates.simba(clock_gating=False, power_gating=False)
    assert (off.clock_gating, off.power_gating) == ("none", "none")


def test_a_space_ranges_over_the_styles(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: gating\ntemplate: simba\nparams:\n"
        "  clock_gating: {choices: [none, idle-units, fine]}\n"
        "  power_gating: {choices: [none, idle-units]}\n"
        "objectives: [energy_pj]\nworkloads: [resnet18]\n"
    )
    space = load_space(path)
    assert space.size() == 6
    ranges = space.ranges()
    assert list(ranges["clock_gating"].listed()) == ["none", "idle-units", "fine"]


def test_a_style_the_model_does_not_have_is_refused(tmp_path) -> None:
    arch = tmp_path / "a.yaml"
    arch.write_text("template: simba\nclock_gating: coarse\n")
    out = CliRunner().invoke(main, ["map", "--arch", str(arch), "--layer", "K=16,C=16"])
    assert out.exit_code == 2 and out.stdout == ""
    (line,) = out.stderr.splitlines()
    assert "a.yaml" in line and "clock_gating" in line
    assert "'none', 'idle-units' or 'fine'" in line
