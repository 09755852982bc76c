"""JSON schemas of magnet's YAML inputs and JSON records (``magnet schema NAME``), for editors
(a YAML language server validates and completes a file that names its schema) and for other
tools reading magnet's results.

The schemas are made from the same pydantic models that read the files, so they cannot drift
from what magnet accepts.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from magnet.errors import MagnetError


def _models() -> dict[str, tuple[str, type[BaseModel]]]:
    from magnet.arch.level_tree import ArchFile
    from magnet.cost.models import Datasheet
    from magnet.dataflow import Dataflow
    from magnet.mapping import Mapping
    from magnet.model.records import LayerRecord, NetworkRecord
    from magnet.search.design_space import SearchSpace
    from magnet.workload.loader import NetworkFile

    return {
        "search-space": ("a search space (search_spaces/*.yaml: magnet spaces)", SearchSpace),
        "arch": ("an architecture as an explicit level tree (levels:, compute:)", ArchFile),
        "network": ("a network file (layers with repeat counts)", NetworkFile),
        "mapping": ("a mapping file (per level: factors, order, spatial)", Mapping),
        "mappings": ("a per-layer mapping file (--mapping-file)", Mapping),
        "dataflow": ("a dataflow file (rules per level)", Dataflow),
        "datasheet": ("a cost datasheet (--cost-model table:FILE.yaml)", Datasheet),
        "layer-record": ("the JSON of a layer result (--json)", LayerRecord),
        "network-record": ("the JSON of a network result (--json)", NetworkRecord),
    }


def schema_names() -> dict[str, str]:
    """Every schema name with what it describes (templates as ``arch:TEMPLATE``)."""
    from magnet.templates import templates

    names = {name: what for name, (what, _) in _models().items()}
    for name in templates():
        names[f"arch:{name}"] = f"an architecture from the {name} template and its parameters"
    return names


def json_schema(name: str) -> dict[str, Any]:
    """The JSON schema called ``name`` (see ``schema_names()``)."""
    models = _models()
    if name in ("mapping", "mappings"):  # the levels' list, under ``mapping:`` or per layer
        inner = models[name][1].model_json_schema()
        levels = inner["properties"]["levels"]
        if name == "mappings":  # layers: {name: levels}, and an optional default
            properties = {
                "layers": {"type": "object", "additionalProperties": levels},
                "default": levels,
            }
        else:
            properties = {"mapping": levels}
        return {
            "$defs": inner.get("$defs", {}),
            "title": f"{name} file",
            "type": "object",
            "properties": properties,
            "required": [next(iter(properties))],
            "additionalProperties": False,
        }
    if name in models:
        return models[name][1].model_json_schema()
    if name.startswith("arch:"):
        from magnet.templates import templates

        template_name = name.removeprefix("arch:")
        template = templates().get(template_name)
        if template is not None:
            schema: dict[str, Any] = template.Params.model_json_schema()
            schema["title"] = f"{template_name} architecture"
            schema["properties"] = {
                "template": {"const": template_name},
                "name": {"type": "string"},
                **schema["properties"],
            }
            schema["required"] = ["template"]
            return schema
    raise MagnetError(
        f"unknown schema {name!r}; allowed: {', '.join(schema_names())}", field="NAME"
    )
