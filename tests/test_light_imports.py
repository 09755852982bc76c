"""A light module loads no heavy one: a layer, a mapping, an architecture, ``import magnet``
and the ``magnet`` command's ``--help`` import neither optuna, ray, plotly nor uvicorn, nor
the search driver, the dashboard or the API. ``magnet``'s public names are imported on first
use, and are the API's whichever module was imported first."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: each test imports in a fresh interpreter (a child process)
pytestmark = pytest.mark.subprocess

#: Packages and modules a light import must not load (a prefix, whole names only).
HEAVY = (
    "optuna",
    "ray",
    "plotly",
    "uvicorn",
    "starlette",
    "magnet.search.driver",
    "magnet.dashboard",
    "magnet.api",
)

LOADED = f"""
import json, sys
heavy = {HEAVY!r}
found = [m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy)]
print(json.dumps(sorted(found)))
"""


def loaded_by(code: str) -> list[str]:
    """The heavy modules loaded in a fresh interpreter after ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", code + LOADED], capture_output=True, text=True, check=True
    ).stdout
    found: list[str] = json.loads(out.splitlines()[-1])
    return found


@pytest.mark.parametrize(
    "module", ["magnet", "magnet.workload.layer", "magnet.mapping", "magnet.arch.spec"]
)
def test_a_light_module_loads_no_heavy_one(module: str) -> None:
    assert loaded_by(f"import {module}") == []


def test_the_commands_help_loads_no_heavy_module() -> None:
    code = "from magnet.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    assert loaded_by(code) == []


def test_the_public_names_are_the_apis_whichever_module_was_imported_first() -> None:
    # magnet.design and magnet.search are modules too: importing them first binds them on
    # the package, where the functions of the API must stay
    code = """
import magnet.design, magnet.search.driver, magnet.workload.layer
import magnet as mg
from magnet.api import design
from magnet.search import search
assert mg.design is design and mg.search is search, (mg.design, mg.search)
from magnet import design as d, search as s
assert d is design and s is search
assert all(getattr(mg, name) is not None for name in mg.__all__)
assert set(mg.__all__) <= set(dir(mg))
assert mg.templates.simba is mg.templates.simba and mg.interop.load_timeloop
"""
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_name_is_an_attribute_error() -> None:
    import magnet as mg

    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = mg.no_such_name
    assert not hasattr(mg, "_private")
