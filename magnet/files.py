"""Reading the YAML files users write, with errors that name the file; writing result files.

One loader for every YAML input (search spaces, architectures, mappings, networks, cost
tables, datasheets, dataflows): ``yaml.safe_load`` semantics, plus a duplicate key in a
mapping, block or flow, is an error naming the key and its line (YAML's own rule; PyYAML
would keep the last one silently), and numbers read as YAML 1.2 reads them where YAML 1.1
(PyYAML's) reads them otherwise: a number written with an exponent (``1e6``, ``2.5E3``,
``1.5e-3``) is a number, not a string (a whole one an int, so that it fits wherever a
count or a size does); ``017`` is 17, not octal 15; ``1:30`` is text, not sexagesimal 90.
One writer for every result file (reports, exports, mappings): ``write_atomic``.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from magnet.errors import MagnetError
from magnet.units import EXPONENT, number_text


class _DuplicateKey(yaml.YAMLError):
    pass


#: The tag magnet's loader gives a plain scalar it reads as a number itself (``_YAML12``).
_NUMBER_TAG = "tag:magnet,2026:number"
#: Plain scalars YAML 1.1 reads otherwise than YAML 1.2: numbers (an exponent without a dot
#: or a sign, ``1e6``; a leading zero, ``017``, octal in 1.1) and text (sexagesimal ``1:30``).
_YAML12 = (
    (EXPONENT, _NUMBER_TAG),
    (re.compile(r"[-+]?0[0-9]+"), _NUMBER_TAG),
    (re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"), "tag:yaml.org,2002:str"),
)


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping, and reads numbers
    as YAML 1.2 does (``1e6`` is a number, ``017`` is 17, ``1:30`` is text)."""

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        """The tag of a node: YAML 1.1's (PyYAML's), but YAML 1.2's for the plain scalars
        the two read differently (``_YAML12``)."""
        if kind is yaml.ScalarNode and implicit[0]:
            for pattern, yaml12 in _YAML12:
                if pattern.fullmatch(value):
                    return yaml12
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return tag

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """The mapping of ``node``; a key given twice raises (``<<`` merges may override),
        in a block mapping as in a flow one (``{K: 16, K: 32}``, both on one line)."""
        seen: dict[Any, yaml.Mark] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # '<<: *anchor' may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class says so
                break
            here = seen[key] = key_node.start_mark
            if first is not None:
                where = f"line {first.line + 1}"
                if first.line == here.line:
                    where += f", column {first.column + 1}"
                raise _DuplicateKey(
                    f"line {here.line + 1}: the key {key!r} is given twice (first on {where}); "
                    "a key may appear once in a mapping"
                )
        return super().construct_mapping(node, deep=deep)


def _construct_number(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int | float | None:
    return number_text(str(loader.construct_scalar(node)))


_UniqueKeyLoader.add_constructor(_NUMBER_TAG, _construct_number)


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


#: The first line of the Timeloop inputs magnet writes (``magnet export-timeloop``).
TIMELOOP_HEADER = "# Timeloop v0.4 input written by magnet"
#: How the beginning of each kind of file magnet writes looks (by suffix): an HTML report, a
#: JSON or CSV export of a study, a YAML mapping (``magnet map --output``) or Timeloop input.
_OURS: dict[str, Callable[[str], bool]] = {
    ".html": lambda head: '<meta name="generator" content="magnet">' in head,
    ".json": lambda head: head.strip() == "[]" or (head.startswith("[") and '"number"' in head),
    ".csv": lambda head: head.startswith("number"),
    ".yaml": lambda head: head.startswith(("mapping:", TIMELOOP_HEADER)),
    ".yml": lambda head: head.startswith("mapping:"),
}


def refuse_foreign(path: str | Path, field: str) -> None:
    """Refuse to write over an existing file that magnet did not write (one that does not
    begin as magnet's files of its kind do), so that a mistyped ``-o`` never destroys a
    user's file; an empty file or one magnet wrote before is written over."""
    target = Path(path)
    if not target.is_file() or target.stat().st_size == 0:
        return
    with open(target, "rb") as f:
        head = f.read(4096).decode("utf-8", errors="replace").lstrip()
    ours = _OURS.get(target.suffix.lower())
    if ours is None or not ours(head):
        raise MagnetError(
            "exists and was not written by magnet: it is left as it is; give a new file name "
            "or remove the file first",
            source=str(path),
            field=field,
        )


def make_folder(folder: str | Path, field: str) -> Path:
    """Create ``folder`` and its parents for an output; bad input naming ``field`` (and the
    file in the way, when one is) when it cannot be made."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in (folder, *folder.parents) if p.is_file()), None)
        problem = (
            f"{blocking} is a file, not a folder; move it or give another path"
            if blocking is not None
            else f"cannot make the folder: {exc.strerror or exc}"
        )
        raise MagnetError(problem, source=str(folder), field=field) from None
    return folder


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` whole or not at all: into a new file in
    the same folder, synced, then renamed over ``path`` (``os.replace``), so an interrupted
    write leaves the old file as it was. A symlink is written through (its target is
    replaced); an existing file keeps its permissions. Returns ``path``."""
    target = Path(os.path.realpath(path))
    tmp = target.with_name(f".{target.name[:100]}.{secrets.token_hex(4)}.tmp")
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, as for any
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(data.encode("utf-8") if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Path(path)
