"""magnet installed as a package: the wheel holds the built-in search spaces, the example
plug-in and every file the reports and the dashboard need, and works from an empty folder
in a fresh virtual environment (no clone on the path, nothing downloaded: the wheel is
built with this environment's hatchling and installed without dependencies into a venv
that sees this environment's packages, whether this environment is a virtual environment,
as the README's install makes, or the system's Python).

The shipped folders, ``search_spaces/`` and ``cost_models/``, live at the repository's top
level: the sdist holds them there, the wheel inside the package (pyproject.toml's
``force-include``), and an editable install reads them in the clone; ``magnet.files.shipped``
finds them in each case."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.search.design_space import builtin_spaces
from tests.conftest import REPO

SHIPPED = ("search_spaces", "cost_models")


def run(*cmd: str | Path, cwd: Path, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, **kw
    )


def shipped_files() -> list[str]:
    """Every file of the clone's shipped folders, relative to the repository."""
    return sorted(
        p.relative_to(REPO).as_posix()
        for folder in SHIPPED
        for p in (REPO / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


def fresh_venv(root: Path) -> Path:
    """A new venv in ``root`` that sees this environment's packages; its bin folder."""
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
    return venv / "bin"


def pip_install(bin_: Path, *args: str | Path, cwd: Path) -> None:
    pip = [bin_ / "python", "-m", "pip", "install", "--no-deps", "--no-index"]
    done = run(*pip, "--no-build-isolation", *args, cwd=cwd, timeout=300)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel pip builds from the clone, the sdist hatchling makes of it)."""
    root = tmp_path_factory.mktemp("dist")
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = run(*pip_wheel, "-w", root / "wheel", REPO, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    (wheel,) = (root / "wheel").glob("magnet-*.whl")
    make = "import sys; from hatchling.build import build_sdist; build_sdist(sys.argv[1])"
    done = run(sys.executable, "-c", make, root / "sdist", cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    (sdist,) = (root / "sdist").glob("magnet-*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def installed(built, tmp_path_factory) -> tuple[Path, Path]:
    """(the wheel, the venv's bin folder) with magnet installed from the wheel."""
    wheel, _ = built
    root = tmp_path_factory.mktemp("wheel")
    bin_ = fresh_venv(root)
    pip_install(bin_, wheel, cwd=root)
    return wheel, bin_


@pytest.fixture(scope="module")
def editable(tmp_path_factory) -> Path:
    """The bin folder of a venv with this clone installed editable, as the README installs
    it (``pip install -e .``; offline: hatchling builds the editable wheel here)."""
    root = tmp_path_factory.mktemp("editable")
    bin_ = fresh_venv(root)
    pip_install(bin_, "-e", REPO, cwd=root)
    return bin_


@pytest.mark.subprocess
def test_the_wheel_holds_the_spaces_the_example_and_the_assets(installed) -> None:
    wheel, _ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in builtin_spaces():
        assert f"magnet/search_spaces/{name}.yaml" in names
    for path in shipped_files():  # every file of the two folders, inside the package
        assert f"magnet/{path}" in names, path
    for path in (
        "magnet/cost_models/sram_compiler.py",
        "magnet/cost_models/sram_compiler_28nm.yaml",
        "magnet/report/assets/vendor/plotly-strict.min.js",
        "magnet/dashboard/static/dashboard.js",
        "magnet/dashboard/templates/study.html",
        "magnet/report/templates/report.html",
        "magnet/cost/tables/scaling.yaml",
    ):
        assert path in names, path
    # nowhere else: not at the wheel's top level, not under their old names
    elsewhere = ("search_spaces/", "cost_models/", "magnet/spaces/", "magnet/examples/")
    assert not [name for name in names if name.startswith(elsewhere)]


@pytest.mark.subprocess
def test_the_sdist_holds_them_at_its_top_level_and_builds_the_same_wheel(built, tmp_path) -> None:
    wheel, sdist = built
    top = sdist.name.removesuffix(".tar.gz")  # magnet-0.2.0
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
    for path in shipped_files():
        assert f"{top}/{path}" in names, path
    assert f"{top}/pyproject.toml" in names and f"{top}/magnet/__init__.py" in names
    assert not [n for n in names if n.startswith((f"{top}/magnet/spaces", f"{top}/magnet/ex"))]
    # pip install from the sdist: the wheel it builds holds what the clone's wheel holds
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    done = run(*pip_wheel, "-w", tmp_path, sdist, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    (again,) = tmp_path.glob("magnet-*.whl")
    assert set(zipfile.ZipFile(again).namelist()) == set(zipfile.ZipFile(wheel).namelist())


@pytest.mark.subprocess
def test_an_installed_magnet_searches_a_built_in_space_from_an_empty_folder(
    installed, tmp_path
) -> None:
    _, bin_ = installed
    where = run(bin_ / "python", "-c", "import magnet; print(magnet.__file__)", cwd=tmp_path)
    assert where.stdout.strip().startswith(str(bin_.parent)), where  # not the clone's
    package = Path(where.stdout.strip()).parent
    spaces = run(bin_ / "magnet", "spaces", cwd=tmp_path)
    assert spaces.returncode == 0, spaces.stderr
    names = list(builtin_spaces())
    assert [line.split()[0] for line in spaces.stdout.splitlines()[: len(names)]] == names
    assert spaces.stdout == CliRunner().invoke(main, ["spaces"]).output  # as from the clone
    listed = run(bin_ / "magnet", "spaces", "--json", cwd=tmp_path)
    files = [row["file"] for row in json.loads(listed.stdout)]
    assert files == [str(package / "search_spaces" / f"{name}.yaml") for name in names]
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
    assert Path(plugin).parent == package / "cost_models"
    # the clone's output, with the installed folder for the clone's
    clone = CliRunner().invoke(main, ["examples"]).output
    folder = package / "cost_models"
    assert examples.stdout == clone.replace(str(REPO / "cost_models"), str(folder))
    copied = run(bin_ / "magnet", "examples", "--copy", tmp_path / "mine", cwd=tmp_path)
    assert copied.returncode == 0, copied.stderr
    for p in sorted((tmp_path / "mine").iterdir()):
        assert p.read_bytes() == (REPO / "cost_models" / p.name).read_bytes()
    assert len(list((tmp_path / "mine").iterdir())) == 3
    miss = run(bin_ / "magnet", "search", "quickstrat", cwd=tmp_path)
    assert miss.returncode == 2 and f"built-in spaces: {', '.join(names)} (" in miss.stderr


@pytest.mark.subprocess
def test_an_editable_install_reads_them_at_the_repository_top_level(editable, tmp_path) -> None:
    # the clone's own magnet/ is imported (the venv's site-packages also get hatchling's
    # copies of the forced folders, beside no package: never read)
    show = "import magnet, magnet.files as f; print(magnet.__file__); " + "; ".join(
        f"print(f.shipped({folder!r}))" for folder in SHIPPED
    )
    where = run(editable / "python", "-c", show, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    expected = [REPO / "magnet" / "__init__.py", *(REPO / folder for folder in SHIPPED)]
    assert where.stdout.split() == [str(p) for p in expected]
    listed = run(editable / "magnet", "spaces", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    files = [row["file"] for row in json.loads(listed.stdout)]
    assert files == [str(REPO / "search_spaces" / f"{name}.yaml") for name in builtin_spaces()]
    examples = run(editable / "magnet", "examples", cwd=tmp_path)
    assert examples.returncode == 0, examples.stderr
    assert examples.stdout == CliRunner().invoke(main, ["examples"]).output
    plugin = REPO / "cost_models" / "sram_compiler.py"
    assert f"use it as: --cost-model {plugin}:SramCompiler" in examples.stdout


def test_the_lookup_takes_the_package_s_folder_else_the_source_tree_s(tmp_path) -> None:
    """``shipped`` decides by what is on disk next to the ``magnet/`` it belongs to: here a
    copy of ``magnet/files.py`` in a made-up tree (it imports the real magnet's modules)."""
    package = tmp_path / "tree" / "magnet"
    package.mkdir(parents=True)
    (package / "files.py").write_text((REPO / "magnet" / "files.py").read_text())
    spec = importlib.util.spec_from_file_location("made_up_files", package / "files.py")
    assert spec is not None and spec.loader is not None
    files = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(files)
    root = package.parent
    with pytest.raises(MagnetError, match="installed without its search_spaces folder") as err:
        files.shipped("search_spaces")
    assert str(package / "search_spaces") in str(err.value) and str(root) in str(err.value)
    (root / "search_spaces").mkdir()  # beside a package that is not in a source tree
    with pytest.raises(MagnetError, match="installed without"):
        files.shipped("search_spaces")
    (root / "pyproject.toml").write_text("")  # a source tree: a clone, an editable install
    assert files.shipped("search_spaces") == root / "search_spaces"
    (package / "search_spaces").mkdir()  # inside the package, as a wheel installs it: first
    assert files.shipped("search_spaces") == package / "search_spaces"
    with pytest.raises(MagnetError, match="installed without its cost_models folder"):
        files.shipped("cost_models")


def test_a_file_wins_over_a_built_in_name_and_workloads_resolve_next_to_the_space(
    tmp_path, monkeypatch
) -> None:
    import yaml

    from magnet.search.design_space import load_space, space_path

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
    shown = CliRunner().invoke(main, ["examples"])
    assert shown.exit_code == 0 and "sram_compiler.py:SramCompiler" in shown.output
    out = CliRunner().invoke(main, ["examples", "--copy", str(tmp_path / "mine")])
    assert out.exit_code == 0, out.output
    copied = sorted(p.name for p in (tmp_path / "mine").iterdir())
    assert copied == ["README.md", "sram_compiler.py", "sram_compiler_28nm.yaml"]
    # the copy works as a plug-in from its new place (it reads the datasheet beside it)
    from magnet.cost.lookup import load_cost_model

    model = load_cost_model(f"{tmp_path / 'mine' / 'sram_compiler.py'}:SramCompiler")
    assert model.path == tmp_path / "mine" / "sram_compiler_28nm.yaml"
    (tmp_path / "mine" / "sram_compiler.py").write_text("# mine\n")
    again = CliRunner().invoke(main, ["examples", "--copy", str(tmp_path / "mine")])
    assert again.exit_code == 2 and "would overwrite" in again.output
    assert (tmp_path / "mine" / "sram_compiler.py").read_text() == "# mine\n"
