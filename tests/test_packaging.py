"""magnet installed as a package: the wheel holds the built-in search spaces, the example
plug-in and every file the reports and the dashboard need, and works from an empty folder
in a fresh virtual environment (no clone on the path, nothing downloaded: the wheel is
built with this environment's hatchling and installed without dependencies into a venv
that sees this environment's packages, whether this environment is a virtual environment,
as the README's install makes, or the system's Python)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from magnet.search.space import builtin_spaces
from tests.conftest import REPO


def run(*cmd: str | Path, cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, **kw
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the venv's bin folder) with magnet installed from the wheel."""
    root = tmp_path_factory.mktemp("wheel")
    done = run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        root / "dist",
        REPO,
        cwd=root,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = (root / "dist").glob("magnet-*.whl")
    venv = root / "venv"
    done = run(sys.executable, "-m", "venv", venv, cwd=root)
    assert done.returncode == 0, done.stderr
    # the dependencies: this environment's site-packages, after the venv's own (a path in a
    # .pth file is appended to sys.path; the .pth files in it, this clone's editable
    # install among them, are not run). ``--system-site-packages`` would see the base
    # Python's packages, not those of the venv the README installs into.
    (site,) = (venv / "lib").glob("python*/site-packages")
    paths = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    (site / "outer-environment.pth").write_text("".join(f"{p}\n" for p in paths))
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--no-deps", "--no-index"]
    done = run(*pip, wheel, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    return wheel, venv / "bin"


@pytest.mark.subprocess
def test_the_wheel_holds_the_spaces_the_example_and_the_assets(installed) -> None:
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in builtin_spaces():
        assert f"magnet/spaces/{name}.yaml" in names
    for path in (
        "magnet/examples/sram_compiler.py",
        "magnet/examples/sram_compiler_28nm.yaml",
        "magnet/report/assets/vendor/plotly-strict.min.js",
        "magnet/dashboard/static/dashboard.js",
        "magnet/dashboard/templates/study.html",
        "magnet/report/templates/report.html",
        "magnet/cost/tables/scaling.yaml",
    ):
        assert path in names, path


@pytest.mark.subprocess
def test_an_installed_magnet_searches_a_built_in_space_from_an_empty_folder(
    installed, tmp_path
) -> None:
    _, bin_ = installed
    where = run(bin_ / "python", "-c", "import magnet; print(magnet.__file__)", cwd=tmp_path)
    assert where.stdout.strip().startswith(str(bin_.parent)), where  # not the clone's
    spaces = run(bin_ / "magnet", "spaces", cwd=tmp_path)
    assert spaces.returncode == 0, spaces.stderr
    names = list(builtin_spaces())
    assert [line.split()[0] for line in spaces.stdout.splitlines()[: len(names)]] == names
    search = run(
        bin_ / "magnet",
        "search",
        "quickstart",
        "--trials",
        "2",
        "--no-report",
        cwd=tmp_path,
        timeout=300,
    )
    assert search.returncode == 0, search.stderr
    assert "Pareto front of study 'quickstart'" in search.stdout
    assert (tmp_path / "magnet-results" / "magnet.journal").is_file()
    examples = run(bin_ / "magnet", "examples", cwd=tmp_path)
    plugin = next(line for line in examples.stdout.splitlines() if line.endswith(".py"))
    assert Path(plugin).is_file() and plugin.startswith(str(bin_.parent))
    miss = run(bin_ / "magnet", "search", "quickstrat", cwd=tmp_path)
    assert miss.returncode == 2 and f"built-in spaces: {', '.join(names)} (" in miss.stderr


def test_a_file_wins_over_a_built_in_name_and_workloads_resolve_next_to_the_space(
    tmp_path, monkeypatch
) -> None:
    import yaml

    from magnet.search.space import load_space, space_path

    monkeypatch.chdir(tmp_path)
    assert space_path("quickstart") == builtin_spaces()["quickstart"]
    assert space_path("quickstart.yaml") == builtin_spaces()["quickstart"]
    data = yaml.safe_load(builtin_spaces()["quickstart"].read_text())
    data["description"] = "mine"
    (tmp_path / "quickstart.yaml").write_text(yaml.safe_dump(data))
    assert load_space("quickstart.yaml").description == "mine"  # the file, not the built-in
    # a network beside the space is found from any working folder
    spaces = tmp_path / "spaces"
    spaces.mkdir()
    net = (REPO / "tests" / "data" / "search" / "small_net.yaml").read_text()
    (spaces / "net.yaml").write_text(net)
    data["workloads"] = ["net.yaml"]
    (spaces / "mine.yaml").write_text(yaml.safe_dump(data))
    space = load_space(spaces / "mine.yaml")
    assert space.workloads[0].workload == str(spaces.resolve() / "net.yaml")


def test_examples_are_shown_and_copied_never_over_a_file(tmp_path) -> None:
    from click.testing import CliRunner

    from magnet.cli import main

    shown = CliRunner().invoke(main, ["examples"])
    assert shown.exit_code == 0 and "sram_compiler.py:SramCompiler" in shown.output
    out = CliRunner().invoke(main, ["examples", "--copy", str(tmp_path / "mine")])
    assert out.exit_code == 0, out.output
    copied = sorted(p.name for p in (tmp_path / "mine").iterdir())
    assert copied == ["README.md", "sram_compiler.py", "sram_compiler_28nm.yaml"]
    # the copy works as a plug-in from its new place (it reads the datasheet beside it)
    from magnet.cost.registry import load_cost_model

    model = load_cost_model(f"{tmp_path / 'mine' / 'sram_compiler.py'}:SramCompiler")
    assert model.path == tmp_path / "mine" / "sram_compiler_28nm.yaml"
    (tmp_path / "mine" / "sram_compiler.py").write_text("# mine\n")
    again = CliRunner().invoke(main, ["examples", "--copy", str(tmp_path / "mine")])
    assert again.exit_code == 2 and "would overwrite" in again.output
    assert (tmp_path / "mine" / "sram_compiler.py").read_text() == "# mine\n"
