"""The three registries load their built-ins one way (``magnet.registry.Registry``): each
names the module holding them, whose ``BUILTIN`` lists them by name, imported on first use."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

import pytest

from magnet.cost.lookup import COST_MODELS
from magnet.mapper.mapper import MAPPERS
from magnet.mapper.mappers import FastMapper
from magnet.registry import BUILT_IN, Registry
from magnet.templates.template import TEMPLATES


@pytest.mark.parametrize(
    ("registry", "home"),
    [
        (COST_MODELS, "magnet.cost.models"),
        (MAPPERS, "magnet.mapper.mappers"),
        (TEMPLATES, "magnet.templates"),
    ],
)
def test_each_kind_registers_the_builtins_of_its_module(registry: Registry, home: str) -> None:
    assert registry.builtins == home
    builtin = importlib.import_module(home).BUILTIN
    entries = {name: e for name, e in registry.entries().items() if e.origin == BUILT_IN}
    assert list(entries) == list(builtin)  # in order: magnet costs --list shows them so
    for name, obj in builtin.items():
        registered = entries[name].obj
        assert registered is obj or type(registered) is obj  # a template: its instance


def test_a_builtin_listed_under_another_name_than_its_own_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = types.ModuleType("magnet_test_builtins")
    module.BUILTIN = {"quick": FastMapper}  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)

    def adopt(name: str, cls: Any, origin: str) -> str:
        return registry.add(cls.name, cls, origin=origin).name

    registry = Registry("mapper", module.__name__, adopt)
    with pytest.raises(RuntimeError, match="lists the mapper 'fast' as 'quick'"):
        registry.entries()
