"""Reading the YAML files users write, with errors that name the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from magnet.errors import MagnetError


def read_yaml(path: str | Path) -> Any:
    """``yaml.safe_load`` of a file; a missing file or bad YAML raises ``MagnetError``."""
    path = Path(path)
    if not path.is_file():
        raise MagnetError("file not found", source=str(path))
    try:
        with path.open() as stream:  # the stream's name puts the file in YAML's messages
            return yaml.safe_load(stream)
    except yaml.YAMLError as exc:
        raise MagnetError(f"not valid YAML: {exc}", source=str(path)) from None
    except UnicodeDecodeError:
        raise MagnetError("not a text (YAML) file", source=str(path)) from None
