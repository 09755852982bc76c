"""Reading the YAML files users write, with errors that name the file.

One loader for every YAML input (search spaces, architectures, mappings, networks, cost
tables, datasheets): ``yaml.safe_load`` semantics, plus a duplicate key in a mapping is an
error naming the key and its line (YAML's own rule; PyYAML would keep the last one silently).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from magnet.errors import MagnetError


class _DuplicateKey(yaml.YAMLError):
    pass


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *anchor' may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node.start_mark.line + 1)
            except TypeError:  # an unhashable key: the base class says so
                break
            if first != key_node.start_mark.line + 1:
                raise _DuplicateKey(
                    f"line {key_node.start_mark.line + 1}: the key {key!r} is given twice "
                    f"(first on line {first}); a key may appear once in a mapping"
                )
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML ``text`` (from ``source``, named in errors), refusing duplicate keys."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except _DuplicateKey as exc:
        raise MagnetError(str(exc), source=source) from None
    except yaml.YAMLError as exc:
        raise MagnetError(f"not valid YAML: {exc}", source=source) from None


def read_yaml(path: str | Path) -> Any:
    """``parse_yaml`` of a file; a missing or unreadable file raises ``MagnetError``."""
    path = Path(path)
    if not path.is_file():
        raise MagnetError("file not found", source=str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise MagnetError("not a text (YAML) file", source=str(path)) from None
    except OSError as exc:
        raise MagnetError(
            f"cannot read the file: {exc.strerror or exc}", source=str(path)
        ) from None
    return parse_yaml(text, str(path))
