"""The README's examples work as written: its Python block runs, its search space, network
and dataflow YAML are accepted, and the commands of its tour exist."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.search import load_space
from tests.conftest import REPO

README = (REPO / "README.md").read_text()


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def block_with(language: str, marker: str) -> str:
    (found,) = [b for b in blocks(language) if marker in b]
    return found


# e2e though it starts nothing: the README's example as a user runs it (a layer mapped for up
# to 10 s, ResNet-18 evaluated, a search of 8 designs), about 4 CPU-s here
@pytest.mark.e2e
def test_the_python_example_runs(tmp_path, monkeypatch, capsys) -> None:
    code = block_with("python", "import magnet as mg")
    # the example's search writes to a scratch journal; here, into the test's folder
    code = code.replace('"/tmp/api.journal"', repr(str(tmp_path / "api.journal")))
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.startswith("mapped ")  # the layer's outcome status comes first
    study = mg.load_study("quickstart", str(tmp_path / "api.journal"))
    assert study.counts()["designs"] == 8 and study.pareto_front()


def test_the_search_space_example_is_accepted(tmp_path) -> None:
    path = tmp_path / "my-space.yaml"
    path.write_text(block_with("yaml", "name: my-space"))
    space = load_space(path)
    assert space.template == "simba" and [o.metric for o in space.objectives] == [
        "energy_pj",
        "latency_cycles",
        "tops_per_mm2",
    ]


def test_the_network_example_is_accepted(tmp_path) -> None:
    path = tmp_path / "my-net.yaml"
    path.write_text(block_with("yaml", "name: my-net"))
    net = mg.load_workload(str(path))
    # stem + 4 blocks + pool + head + its activation
    assert sum(entry.repeat for entry in net.layers) == 8


@pytest.mark.parametrize(
    "command",
    sorted({line.split()[1] for line in block_with("bash", "magnet archs").splitlines()}),
)
def test_every_tour_command_exists(command: str) -> None:
    out = CliRunner().invoke(main, [command, "--help"])
    assert out.exit_code == 0, out.output


def test_every_study_the_tour_reads_is_searched_before_it() -> None:
    lines = [
        shlex.split(line.split("#")[0]) for line in block_with("bash", "magnet archs").splitlines()
    ]
    searched: set[str] = set()
    for args in lines:
        if args[1] == "search":
            searched.add(args[2])
        if "--study" in args:
            assert args[args.index("--study") + 1] in searched, args


def test_the_timeloop_export_example_reads_back(tmp_path, monkeypatch) -> None:
    """The two commands of "Writing Timeloop input", as written, give one result twice."""
    monkeypatch.chdir(tmp_path)
    lines = block_with("bash", "--output simba-ws/").replace("\\\n", " ").splitlines()
    results = []
    for line in lines:
        args = shlex.split(line.split("#")[0])[1:]
        out = CliRunner().invoke(main, [*args, "--json"])
        assert out.exit_code == 0, out.output
        results.append(json.loads(out.stdout))
    exported, read = results
    assert read["latency_cycles"] == exported["latency_cycles"]
    assert read["energy_pj"] == pytest.approx(exported["energy_pj"], rel=1e-12)


def test_ci_installs_and_tests_exactly_as_the_readme_says() -> None:
    """CI sees what a newcomer sees: the README's second command (a virtual environment, the
    dev extras installed into it, the test command), each step a line of ``.ci/run``, in
    order; the first command makes the same virtual environment."""
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    install, test = (b.strip().split(" && ") for b in blocks("bash")[:2])
    venv = ["python3 -m venv .venv", ". .venv/bin/activate"]
    assert install == [*venv, "pip install -e .", "magnet search quickstart"]
    assert test == [*venv, 'pip install -e ".[dev]"', "python -m pytest -q -n 2"]
    at = [ci.index(step) for step in test]  # each a line of its own
    assert at == sorted(at)


def test_the_sparse_architecture_example_skips_half_the_weights(tmp_path) -> None:
    # its 16 lanes fed the weights' non-zeros packed: a 2:4 tile of 16 x k words takes k / 2
    # steps, so cycles fall to half where the MACs set the pace (the weights-only layer
    # below: K = 16 lanes, C = 256 -> 256 steps dense, 128 sparse)
    path = tmp_path / "my-sparse-core.yaml"
    path.write_text(block_with("yaml", "name: my-sparse-core"))
    arch = mg.load_arch(str(path))
    layer = mg.Layer(kind="fc", K=16, C=256)
    mapping = mg.Mapping.model_validate(
        {
            "levels": [
                {"target": "DRAM"},
                {"target": "Buffer", "temporal": {"C": 256}, "spatial_x": {"K": 16}},
            ]
        }
    )
    dense = mg.evaluate(layer, arch, mapping)
    sparse = mg.evaluate(
        layer.model_copy(update={"densities": mg.Layer(densities={"weights": "2:4"}).densities}),
        arch,
        mapping,
    )
    assert dense.compute_cycles == 256 and sparse.latency_cycles == 128


def _slug(heading: str) -> str:
    """A Markdown heading's anchor as GitHub makes it: lower case, punctuation dropped but
    for hyphens, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_of_the_readme_to_a_file_of_the_repository_reaches_it() -> None:
    """Each relative link of the README (``[text](path)`` or ``(path#anchor)``) names a file
    of the repository, and an anchor into a Markdown file names one of its headings: the
    benchmark table sends readers to ``benchmarks/HISTORY.md``'s sections."""
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert any(link.startswith("benchmarks/HISTORY.md#") for link in local)
    for link in local:
        path, _, anchor = link.partition("#")
        target = REPO / path if path else REPO / "README.md"
        assert target.exists(), link
        if anchor and target.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", target.read_text(), flags=re.M)
            assert anchor in {_slug(h) for h in headings}, link
