"""A plug-in's exception is reported as that (``magnet.errors.PluginError``): a template or a
mapper registered from Python whose code raises gives exit 1 with "a plug-in failed" and the
plug-in's own traceback on the command line (never exit 2, never a bare traceback), a
``PluginError`` in Python, and a failed trial with that reason in a search (never a result).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner, Result

import magnet as mg
from magnet.arch.spec import Arch
from magnet.cli import main
from magnet.errors import PluginError
from magnet.mapper import MapOutcome, Tracker, unregister_mapper
from magnet.mapper.mappers import FastMapper
from magnet.mapper.mapspace import Space
from magnet.search import SearchFailed, search
from magnet.templates import unregister_template
from magnet.templates.simba import Simba
from magnet.templates.template import TemplateParams
from magnet.workload.layer import Layer
from tests.conftest import DATA

HERE = str(Path(__file__).resolve())
LAYER = "K=16,C=16,P=8,Q=8"
SPACE = DATA / "search" / "small_space.yaml"


class ZeroTemplate(Simba):
    """Simba, but assembling a design with 8-wide vectors divides by zero."""

    name = "test-zero-template"
    presets = {}  # noqa: RUF012 (the presets' names belong to Simba)

    def assemble(self, p: TemplateParams, name: str) -> Arch:
        lanes_per_spare = 8 // (getattr(p, "vector_width", 0) - 8)  # the bug: 8 wide
        assert lanes_per_spare != 0
        return super().assemble(p, name)


class SearchRaises(FastMapper):
    """A mapper whose ``search`` (the method a mapper implements) raises."""

    name = "test-search-raises"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        raise RuntimeError("the search broke")


class MapRaises(FastMapper):
    """A mapper that overrides ``map`` itself, which raises."""

    name = "test-map-raises"

    def map(self, layer: Layer, design: mg.Design) -> MapOutcome:
        raise KeyError("no such tile")


@pytest.fixture
def plugins() -> Iterator[None]:
    mg.register_template(ZeroTemplate)
    mg.register_mapper(SearchRaises)
    mg.register_mapper(MapRaises)
    try:
        yield
    finally:
        unregister_template("test-zero-template")
        unregister_mapper("test-search-raises")
        unregister_mapper("test-map-raises")


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def a_plugin_raised(out: Result, *parts: str) -> None:
    """Exit 1, the plug-in named, its traceback (this file's frame), no crash of magnet."""
    assert out.exit_code == 1, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "error: a plug-in failed: " in out.output
    assert f'File "{HERE}"' in out.output
    for part in parts:
        assert part in out.output, (part, out.output)


def test_a_template_whose_assemble_raises(plugins: None, tmp_path: Path) -> None:
    with pytest.raises(PluginError) as caught:
        mg.templates.get_template("test-zero-template").build({"vector_width": 8})
    text = str(caught.value)
    where = f"{ZeroTemplate.__module__}:ZeroTemplate"
    assert text.startswith(f"template 'test-zero-template' ({where}) raised ZeroDivisionError")
    assert "raised ZeroDivisionError: integer division or modulo by zero while assembling" in text
    assert "ZeroDivisionError" in caught.value.traceback and HERE in caught.value.traceback
    arch = tmp_path / "arch.yaml"
    arch.write_text("template: test-zero-template\nvector_width: 8\n")
    network = ("--workload", "resnet18", "--dataflow", "ws")
    for extra in (("map", "--layer", LAYER), ("evaluate", *network)):
        out = cli(extra[0], "--arch", str(arch), *extra[1:])
        a_plugin_raised(out, "test-zero-template", "ZeroDivisionError")


@pytest.mark.parametrize(
    ("mapper", "error"),
    [("test-search-raises", "RuntimeError: the search broke"), ("test-map-raises", "KeyError")],
)
def test_a_mapper_that_raises(plugins: None, tmp_path: Path, mapper: str, error: str) -> None:
    layer = mg.parse_layer(LAYER)
    with pytest.raises(PluginError, match=f"mapper '{mapper}' .* raised {error}"):
        mg.map_layer(layer, mg.load_arch("simba-chip"), "ws", mapper=mapper)
    base = ("--arch", "simba-chip", "--mapper", mapper)
    a_plugin_raised(cli("map", *base, "--layer", LAYER), mapper, error)
    a_plugin_raised(
        cli("evaluate", *base, "--workload", "resnet18", "--dataflow", "ws"),
        mapper,
        error,
    )
    out = cli("export-timeloop", *base, "--layer", LAYER, "--output", str(tmp_path / "tl"))
    a_plugin_raised(out, mapper, error)


def _space(**changes: object) -> dict[str, object]:
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    return {**data, **changes}


def test_a_search_fails_the_trials_a_plugin_template_raises_on(
    plugins: None, tmp_path: Path
) -> None:
    # the first design of the space (vector_width 4) builds; every 8-wide one raises
    space = _space(template="test-zero-template", sampler="grid", trials=16)
    study = search(space, storage=str(tmp_path / "s.journal"), max_failures=100)
    failed = study.trials("failed")
    assert failed and all(t.params["vector_width"] == 8 for t in failed)
    for t in failed:
        assert t.reason is not None and t.reason.startswith("PluginError: template ")
        assert "raised ZeroDivisionError" in t.reason and not t.records and not t.values
    evaluated = study.trials("ok") + study.trials("infeasible")
    assert evaluated and all(t.params["vector_width"] == 4 for t in evaluated)
    raw = study.frozen[failed[0].number].user_attrs["magnet"]
    assert "ZeroDivisionError" in raw["traceback"] and HERE in raw["traceback"]


def test_a_search_fails_the_trials_a_plugin_mapper_raises_on(plugins: None, tmp_path: Path) -> None:
    space = _space(mapper={"name": "test-search-raises"}, sampler="random")
    storage = str(tmp_path / "s.journal")
    with pytest.raises(SearchFailed, match="PluginError: mapper 'test-search-raises'"):
        search(space, n_trials=4, storage=storage, max_failures=2)
    study = mg.load_study("small", storage)
    assert study.trials("failed") and not study.trials("ok") and not study.trials("infeasible")
    assert all("the search broke" in (t.reason or "") for t in study.trials("failed"))
