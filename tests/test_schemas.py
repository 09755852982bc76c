"""`magnet schema`: the JSON schemas describe what magnet reads and writes. Every shipped
input file validates against its schema, a file magnet refuses is refused by the schema too,
and the records `--json` prints validate against theirs."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.schemas import json_schema, schema_names
from tests.conftest import REPO

DATA = REPO / "tests" / "data"
SHIPPED = {
    "search-space": sorted((REPO / "search_spaces").glob("*.yaml")),
    "datasheet": sorted((REPO / "cost_models").glob("*.yaml")),
    "dataflow": [DATA / "dataflow" / "pe_ws.yaml", REPO / "experiments/eyeriss-dataflows/nlr.yaml"],
    "mapping": sorted((REPO / "experiments" / "mappings").glob("*.yaml")),
    "mappings": [DATA / "network" / "tiny_mappings.yaml"],
    "network": [DATA / "network" / "tiny_net.yaml", DATA / "search" / "small_net.yaml"],
    "arch": [DATA / "network" / "tiny_arch.yaml", DATA / "mapper" / "small_arch.yaml"],
}


def errors(schema_name: str, data: object) -> list[str]:
    validator = jsonschema.Draft202012Validator(json_schema(schema_name))
    return [e.message for e in validator.iter_errors(data)]


@pytest.mark.parametrize(
    ("schema_name", "path"),
    [(name, path) for name, paths in SHIPPED.items() for path in paths],
    ids=lambda x: getattr(x, "name", x),
)
def test_shipped_files_validate(schema_name: str, path) -> None:
    assert errors(schema_name, yaml.safe_load(path.read_text())) == []


def test_refused_files_are_refused_by_the_schema_too() -> None:
    # a misspelt rule field (magnet: "stationnary: unknown field")
    assert errors("dataflow", yaml.safe_load((DATA / "dataflow" / "typo.yaml").read_text()))
    # a datasheet magnet refuses
    bad = yaml.safe_load((DATA / "cost" / "bad_datasheet.yaml").read_text())
    assert errors("datasheet", bad)
    # an unknown search-space field, and an objective given as a number
    space = yaml.safe_load((REPO / "search_spaces" / "quickstart.yaml").read_text())
    assert errors("search-space", {**space, "trails": 10})
    assert errors("search-space", {**space, "objectives": [3]})


def test_template_schemas_list_the_parameters_and_ranges() -> None:
    schema = json_schema("arch:simba")
    assert schema["properties"]["template"] == {"const": "simba"}
    assert {"vector_width", "accum_collector", "weight_buffer"} <= set(schema["properties"])
    assert errors("arch:simba", {"template": "simba", "vector_width": 16}) == []
    # sizes as magnet reads them: bytes, or a string with a unit
    assert errors("arch:simba", {"template": "simba", "weight_buffer": "32KiB"}) == []
    assert errors("arch:simba", {"template": "simba", "vector_widht": 16})  # a typo


def test_records_printed_by_json_validate() -> None:
    layer = CliRunner().invoke(
        main,
        [
            "map",
            "--arch",
            "simba-chip",
            "--layer",
            "K=64,C=64,P=14,Q=14,R=3,S=3",
            "--dataflow",
            "os-local-ws",
            "--json",
        ],
    )
    assert layer.exit_code == 0, layer.output
    assert errors("layer-record", json.loads(layer.output)) == []
    network = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(DATA / "network" / "tiny_arch.yaml"),
            "--workload",
            str(DATA / "network" / "tiny_net.yaml"),
            "--mapping-file",
            str(DATA / "network" / "tiny_mappings.yaml"),
            "--json",
        ],
    )
    assert network.exit_code == 0, network.output
    assert errors("network-record", json.loads(network.output)) == []


def test_the_command_lists_prints_and_refuses() -> None:
    listing = CliRunner().invoke(main, ["schema"])
    assert listing.exit_code == 0 and all(name in listing.output for name in schema_names())
    out = CliRunner().invoke(main, ["schema", "search-space"])
    assert json.loads(out.output)["title"] == "SearchSpace"
    bad = CliRunner().invoke(main, ["schema", "nope"])
    assert bad.exit_code == 2 and "allowed: search-space" in bad.output


def test_every_shipped_kind_has_files() -> None:
    # a folder moved or renamed would otherwise leave its kind checked on no file at all
    assert all(SHIPPED[kind] for kind in SHIPPED), {k: len(v) for k, v in SHIPPED.items()}
    assert all(p.is_file() for files in SHIPPED.values() for p in files)
