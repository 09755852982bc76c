"""The command line is a thin layer over ``magnet.api``: its records are the api's, and it asks
a mapper's class which options it takes (``Mapper.option_names``) instead of knowing names."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

import magnet as mg
from magnet.cli import main
from magnet.mapper import unregister_mapper
from magnet.mapper.mappers import RandomMapper

LAYER = "K=16,C=16,P=8,Q=8,R=3,S=3"


class SampledMapper(RandomMapper):
    """A user mapper that takes ``samples`` (its options are the random mapper's)."""

    name = "test-sampled"


@pytest.fixture
def sampled() -> Iterator[None]:
    mg.register_mapper(SampledMapper)
    try:
        yield
    finally:
        unregister_mapper("test-sampled")


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_samples_goes_to_any_mapper_that_takes_it(sampled: None) -> None:
    assert "samples" in SampledMapper.option_names()
    base = ("map", "--arch", "simba-chip", "--layer", LAYER, "--dataflow", "ws", "--json")
    out = cli(*base, "--mapper", "test-sampled", "--samples", "300")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["mapper"]["mappings_evaluated"] == 300
    refused = cli(*base, "--mapper", "exhaustive", "--samples", "300")
    assert refused.exit_code == 2
    assert "--samples applies to the mappers that take a samples option" in refused.output
    assert "test-sampled" in refused.output and "not 'exhaustive'" in refused.output


def test_the_command_line_prints_the_records_the_api_returns() -> None:
    arch = mg.load_arch("simba-chip")
    options = {"mapper": "random", "samples": 200, "seed": 3}
    layer = mg.parse_layer(LAYER)
    outcome = mg.map_layer(layer, arch, "ws", **options)
    mapped = cli(
        "map", "--arch", "simba-chip", "--layer", LAYER, "--dataflow", "ws", "--mapper", "random",
        "--samples", "200", "--seed", "3", "--json",
    )  # fmt: skip
    assert mapped.exit_code == 0, mapped.output
    printed = json.loads(mapped.output)
    printed["mapper"].pop("seconds")
    record = outcome.record().model_dump(mode="json")
    record["mapper"].pop("seconds")
    assert printed == record
    network = mg.evaluate(mg.load_workload("resnet18"), arch, dataflow="ws", **options)
    evaluated = cli(
        "evaluate", "--arch", "simba-chip", "--workload", "resnet18", "--dataflow", "ws",
        "--mapper", "random", "--samples", "200", "--seed", "3", "--json",
    )  # fmt: skip
    assert evaluated.exit_code == 0, evaluated.output
    assert json.loads(evaluated.output) == network.record().model_dump(mode="json")
