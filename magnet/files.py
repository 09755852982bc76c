"""Reading the YAML files users write, with errors that name the file; writing result files.

One loader for every YAML input (search spaces, architectures, mappings, networks, cost
tables, datasheets, dataflows): ``yaml.safe_load`` (no Python objects), but plain scalars
read as YAML 1.2's core schema reads them, not as YAML 1.1 (PyYAML's) does: a number written
with an exponent (``1e6``, ``2.5E3``, ``1.5e-3``) is a number, not a string (a whole one an
int, so that it fits wherever a count or a size does); ``017`` is 17, not octal 15; ``1_000``,
``0b1010``, ``1:30``, ``yes``, ``no``, ``on``, ``off`` and ``2001-12-14`` are text; a number
of more than ``units.MAX_DIGITS`` digits is an error naming its line. A key given twice in a
mapping, block or flow, is an error naming the key and its line (YAML's own rule; PyYAML
would keep the last one silently).
One check of every place an output goes, before any work (``check_writable``, with
``refuse_foreign`` for a file of the user's and ``refuse_input`` for a file the command reads)
and one writer for every result file (reports, exports, mappings): ``write_atomic``.
One way to find the folders that ship with magnet (``search_spaces``, ``cost_models``):
``shipped``.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import yaml

from magnet.errors import MagnetError
from magnet.units import EXPONENT, digits_number, exponent_number


class _Refused(yaml.YAMLError):
    """A rule of magnet's loader broken (a key given twice, a number too long): the message
    names the line."""


_TAG = "tag:yaml.org,2002:"
#: Plain scalars (not quoted, no tag) as YAML 1.2's core schema reads them: null, a boolean,
#: an integer (decimal, ``0o`` octal, ``0x`` hexadecimal), a float (``.inf``, ``.nan``); any
#: other is text. YAML 1.1 (PyYAML's) reads more: ``1_000``, ``0b1010``, ``017`` (octal 15),
#: ``1:30`` (sexagesimal 90) as numbers, ``yes``, ``no``, ``on``, ``off`` as booleans,
#: ``2001-12-14`` as a date, and ``1e6`` as text; in 1.2 ``017`` is 17, ``1e6`` a number,
#: the others text.
_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = re.compile(r"true|True|TRUE|false|False|FALSE")
_INT = re.compile(r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+")
_FLOAT = re.compile(
    r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"
)
_CORE = ((_NULL, "null"), (_BOOL, "bool"), (_INT, "int"), (_FLOAT, "float"))


class _Rules:
    """What magnet's loaders add to ``yaml.SafeLoader``'s: plain scalars read as YAML 1.2's
    core schema reads them (``_CORE``; ``<<`` merges kept), a key given twice in one mapping
    and a number of more than ``units.MAX_DIGITS`` digits refused (``_Refused``)."""

    construct_object: Callable[..., Any]  # the constructor's, beside this class in a loader

    def resolve(self, kind: type[yaml.Node], value: str, implicit: tuple[bool, bool]) -> str:
        """The tag of a node: YAML 1.2's core schema's for a plain scalar (``_CORE``)."""
        if kind is yaml.ScalarNode and implicit[0] and value != "<<":
            kind_of = (name for pattern, name in _CORE if pattern.fullmatch(value))
            return _TAG + next(kind_of, "str")
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[misc]
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
                raise _Refused(
                    f"line {here.line + 1}: the key {key!r} is given twice (first on {where}); "
                    "a key may appear once in a mapping"
                )
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)  # type: ignore[misc]
        return mapping


class _UniqueKeyLoader(_Rules, yaml.SafeLoader):
    """magnet's rules (``_Rules``) on PyYAML's own parser, whose messages say the most."""


class _FastLoader(_Rules, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """magnet's rules on libyaml's parser (when PyYAML has it): three times as fast, but its
    messages say less (``did not find expected ','``), so an error is read again by
    ``_UniqueKeyLoader``."""


def _scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode, read: Callable[[str], Any]) -> Any:
    """``read`` of ``node``'s text; the ``ValueError`` it raises names the line."""
    text = str(loader.construct_scalar(node))
    try:
        return read(text)
    except ValueError as exc:
        mark = node.start_mark
        raise _Refused(f"line {mark.line + 1}, column {mark.column + 1}: {exc}") from None


def _core_int(text: str) -> int:
    """An integer as YAML 1.2 writes one (``017`` is 17, ``0o17`` 15, ``0x1F`` 31), of at
    most ``units.MAX_DIGITS`` digits."""
    if not _INT.fullmatch(text):  # '!!int 1_000'
        raise ValueError(f"{text!r} is not an integer (YAML 1.2: 17, 0o21, 0x11)")
    base = {"0o": 8, "0x": 16}.get(text[:2], 10)
    return digits_number(text if base == 10 else text[2:], base)


def _core_float(text: str) -> int | float:
    """A float as YAML 1.2 writes one; one written with an exponent as
    ``units.exponent_number`` reads it (a whole one an int: ``1e6``, so that it fits a count)."""
    if not _FLOAT.fullmatch(text):  # '!!float 1_0'
        raise ValueError(f"{text!r} is not a number (YAML 1.2: 2.5, 1e6, .inf, .nan)")
    if text.lower().endswith((".inf", ".nan")):
        return float(text.replace(".", ""))  # float() reads inf, -inf, nan
    return exponent_number(text) if EXPONENT.fullmatch(text) else float(text)


def _core_bool(text: str) -> bool:
    """A boolean as YAML 1.2 writes one: true or false (``True``, ``TRUE``...)."""
    if not _BOOL.fullmatch(text):  # '!!bool yes'
        raise ValueError(f"{text!r} is not a boolean (YAML 1.2: true, false)")
    return text.lower() == "true"


for _loader in (_UniqueKeyLoader, _FastLoader):
    for _kind, _read in (("int", _core_int), ("float", _core_float), ("bool", _core_bool)):
        _loader.add_constructor(_TAG + _kind, functools.partial(_scalar, read=_read))


#: Largest YAML input read (bytes): magnet's largest inputs (a network of thousands of
#: layers, a search space of 100,000 choices) are a few MB; a bigger file is none of them.
MAX_YAML_BYTES = 16 * 2**20
#: Deepest nesting of YAML collections, and most values a YAML input with aliases
#: (``*anchor``) may hold once they are followed: past these a file is no configuration (a
#: "billion laughs" of nested aliases expands a few hundred bytes into billions of values).
#: A file without aliases holds fewer values than it has bytes: ``MAX_YAML_BYTES`` bounds it.
MAX_YAML_DEPTH = 100
MAX_YAML_VALUES = 1_000_000
#: What a path that is not a regular file is, as an error says it.
_FILE_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML ``text`` (from ``source``, named in errors) with magnet's rules
    (``_Rules``), refusing collections nested deeper than ``MAX_YAML_DEPTH``, aliases that
    refer to themselves or expand the document past ``MAX_YAML_VALUES`` values, and text
    that holds no data at all."""
    try:
        data = yaml.load(text, Loader=_FastLoader)
    except (yaml.YAMLError, RecursionError) as exc:
        if isinstance(exc, _Refused):
            raise MagnetError(str(exc), source=source) from None
        data = _read_slowly(text, source)  # for PyYAML's message
    if data is None:
        raise MagnetError("holds no YAML data (only comments, blank lines or null)", source=source)
    values, depth, written = _extent(data, source)
    if depth > MAX_YAML_DEPTH:
        raise MagnetError(
            f"collections nest {depth} levels deep, more than {MAX_YAML_DEPTH}: not a "
            "configuration",
            source=source,
        )
    if values > MAX_YAML_VALUES and values > written:  # else MAX_YAML_BYTES bounds it
        raise MagnetError(
            f"its aliases (*anchor) expand it to {values:,} values, more than "
            f"{MAX_YAML_VALUES:,}: not a configuration",
            source=source,
        )
    return data


def _read_slowly(text: str, source: str) -> Any:
    """``text`` read by PyYAML's own parser, for what it says of an error."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except _Refused as exc:
        raise MagnetError(str(exc), source=source) from None
    except yaml.YAMLError as exc:
        raise MagnetError(f"not valid YAML: {_one_line(exc)}", source=source) from None
    except RecursionError:  # PyYAML's composer recurses once per level
        raise MagnetError(
            f"collections nest deeper than {MAX_YAML_DEPTH} levels: not a configuration",
            source=source,
        ) from None


def _one_line(exc: yaml.YAMLError) -> str:
    """PyYAML's message on one line: where (line, column) and what, and in what context."""
    if not isinstance(exc, yaml.MarkedYAMLError) or exc.problem_mark is None:
        return " ".join(str(exc).split())
    mark = exc.problem_mark
    where = f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    if exc.context and exc.context_mark is not None:
        start = exc.context_mark
        where += f" ({exc.context} at line {start.line + 1}, column {start.column + 1})"
    return where


def _extent(data: Any, source: str) -> tuple[int, int, int]:
    """How many values ``data`` holds once its aliases are followed (a shared collection
    counted wherever it appears), how deep its collections nest, and how many values it holds
    as written (each collection once: fewer than once followed only when an alias shares a
    collection), each collection visited once and without recursing; a collection inside
    itself (``&a [*a]``) is refused."""
    known: dict[int, tuple[int, int]] = {}  # id of a collection -> (values, depth)
    written = 1
    open_: set[int] = set()  # collections whose contents are being measured
    stack: list[Any] = [data]
    while stack:
        node = stack[-1]
        inside = _contents(node)
        if inside is None or id(node) in known:
            stack.pop()
            continue
        todo = [c for c in inside if _contents(c) is not None and id(c) not in known]
        if id(node) not in open_:
            open_.add(id(node))
            if any(id(c) in open_ for c in todo):
                raise MagnetError("an alias (*anchor) refers to its own anchor", source=source)
            stack += todo
            continue
        stack.pop()
        open_.discard(id(node))
        parts = [known.get(id(c), (1, 0)) for c in inside]
        known[id(node)] = (1 + sum(v for v, _ in parts), 1 + max((d for _, d in parts), default=0))
        written += len(inside)
    return (*known.get(id(data), (1, 0)), written)


def _contents(node: Any) -> list[Any] | None:
    """The values inside a collection (a mapping's keys too); None for a scalar."""
    if isinstance(node, dict):
        return [*node.keys(), *node.values()]
    if isinstance(node, list | tuple | set | frozenset):
        return list(node)
    return None


def read_yaml(path: str | Path) -> Any:
    """``parse_yaml`` of a file. A path that is not a readable YAML file raises
    ``MagnetError`` saying what it is: missing (or a broken symlink), a folder, a device
    (``/dev/null``), a named pipe or socket (never opened: reading one may wait forever),
    empty, binary, not UTF-8, or larger than ``MAX_YAML_BYTES``."""
    if not str(path).strip():  # Path("") is the working folder
        raise MagnetError("an empty path: give the path of a YAML file", source=repr(str(path)))
    path = Path(path)
    source = str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        broken = " (a symlink to a path that does not exist)" if path.is_symlink() else ""
        raise MagnetError(f"file not found{broken}", source=source) from None
    except OSError as exc:
        raise MagnetError(f"cannot read the file: {exc.strerror or exc}", source=source) from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
        raise MagnetError(
            f"is {kind}, not a YAML file; give the path of a YAML file", source=source
        )
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_YAML_BYTES + 1)  # a file's size, as stat gives it, may be 0 (/proc)
    except OSError as exc:
        raise MagnetError(f"cannot read the file: {exc.strerror or exc}", source=source) from None
    if len(raw) > MAX_YAML_BYTES:
        raise MagnetError(
            f"is larger than {MAX_YAML_BYTES // 2**20} MiB: not a YAML input of magnet's (is "
            "it the right file?)",
            source=source,
        )
    if not raw.strip():
        raise MagnetError("the file is empty; expected YAML", source=source)
    if b"\0" in raw:
        raise MagnetError("a binary file (it holds NUL bytes), not YAML", source=source)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MagnetError("not a text (YAML) file: not UTF-8", source=source) from None
    return parse_yaml(text, source)


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


def refuse_foreign(path: str | Path, field: str, *, new_folder: bool = False) -> None:
    """Refuse, before any work, a path an output file cannot be written to (``check_writable``;
    ``new_folder``: its folder may be made), and an existing file that magnet did not write (one
    that does not begin as magnet's files of its kind do), so that a mistyped ``-o`` never
    destroys a user's file; an empty file or one magnet wrote before is written over."""
    check_writable(path, field, new_folder=new_folder)
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


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` name one file: one real path (through a symlink, ``./x``; a
    file that does not exist yet too), or one file under two names (a hard link)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (or cannot be reached)
        return False


def refuse_input(path: str | Path, field: str, inputs: Iterable[tuple[str, str | Path]]) -> None:
    """Refuse, before any work, to write ``path`` when it is a file the command reads
    (``inputs``: pairs of the flag and what it was given; a value that names no file, a preset
    or a zoo network, is none): writing there would destroy the command's own input."""
    for flag, given in inputs:
        if path_kind(given) is not None and same_file(path, given):
            raise MagnetError(
                f"is the file this command reads as {flag}; writing there would destroy it: "
                "give another file name",
                source=str(path),
                field=field,
            )


#: What ``path_kind`` calls each kind of file ``os.stat`` tells apart.
_KINDS = (
    (stat.S_ISDIR, "directory"),
    (stat.S_ISREG, "file"),
    (stat.S_ISFIFO, "named pipe (fifo)"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def no_such_name(path: str | Path) -> bool:
    """Whether no file can have this name: a part of it longer than a file name may be
    (255 bytes) or the whole longer than a path may be (4,096 bytes). A name given where a
    file or a named thing goes (``--arch``, a space) is then only a name."""
    text = os.fsencode(path)
    return len(text) >= 4096 or any(len(part) > 255 for part in text.split(b"/"))


def path_kind(path: str | Path) -> str | None:
    """What is at ``path``, a symlink followed: ``"directory"``, ``"file"`` (a regular one),
    another kind (``"character device"`` for ``/dev/null``, ``"named pipe (fifo)"``, ...),
    ``"dangling symlink (to TARGET)"``, ``"symlink loop (...)"``; None when nothing is there
    (a file in the way of a folder on the way included)."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return f"dangling symlink (to {os.readlink(path)})" if os.path.islink(path) else None
    except OSError as exc:  # a symlink loop, a folder that cannot be searched, a long name
        if exc.errno == errno.ELOOP:
            return f"symlink loop ({exc.strerror})"
        return f"path that cannot be reached ({exc.strerror or exc})"
    return next((name for test, name in _KINDS if test(mode)), "special file")


def check_writable(
    path: str | Path, field: str, *, folder: bool = False, new_folder: bool = False
) -> Path:
    """Refuse, before any work, a path where an output cannot be written: bad input naming the
    path and ``field``; nothing is created. Returns ``Path(path)``.

    ``folder``: ``path`` is a folder that files are written into, made when missing (as
    ``make_folder`` does). Otherwise ``path`` is a file written whole (``write_atomic``: a new
    file beside it renamed over it), whose folder must exist, or with ``new_folder`` may be
    made. magnet makes at most the last folder of a path, never a mistyped path's parents.

    Refused: an empty path (and a file's path ending with a slash); a missing folder that
    would not be the last one made; a file (or anything else) where a folder goes and a folder
    where a file goes; a dangling symlink; anything but a regular file (``/dev/null`` and other
    devices, a fifo, a socket); and what cannot be written (as root ``chmod`` does not stop a
    write, ``chattr +i`` and a read-only mount do)."""
    if isinstance(path, str) and not path:
        raise MagnetError(
            f"an empty path; give a {'folder' if folder else 'file'} name", field=field
        )
    target = Path(path)
    where = {"source": str(path), "field": field}
    if folder:
        _folder_to_write(target, where, may_make=True)
        return target
    if isinstance(path, str) and path.endswith(os.sep):  # Path() would drop the slash
        raise MagnetError("ends with a slash, as a folder does; give a file name", **where)
    kind = path_kind(target)
    if kind == "directory":
        raise MagnetError("is a directory; give a file name", **where)
    if kind == "file":
        real = Path(os.path.realpath(target))
        if not os.access(real, os.W_OK):
            raise MagnetError("is read-only: magnet cannot write it; give another file", **where)
        _folder_to_write(real.parent, where, may_make=False)
    elif kind is not None:
        raise MagnetError(f"is a {kind}, not a regular file; give a file name", **where)
    else:
        _folder_to_write(target.parent, where, may_make=new_folder)
    return target


def _folder_to_write(folder: Path, where: dict[str, str], *, may_make: bool) -> None:
    """Refuse ``folder`` unless it is a folder files can be made in, or (``may_make``) can be
    made in its parent, which must be such a folder."""
    kind = path_kind(folder)
    if kind == "directory":
        if not os.access(folder, os.W_OK | os.X_OK):
            raise MagnetError(
                f"the folder {folder} is read-only: magnet cannot write in it", **where
            )
        return
    if kind is not None and str(folder) == where["source"]:
        raise MagnetError(f"is a {kind}, not a folder; give a folder", **where)
    if kind is not None:
        raise MagnetError(
            f"{folder} is a {kind}, not a folder; move it or give another path", **where
        )
    if may_make:
        _folder_to_write(folder.parent, where, may_make=False)
        return
    blocking = next((p for p in folder.parents if path_kind(p) not in (None, "directory")), None)
    if blocking is not None:
        raise MagnetError(
            f"{blocking} is a {path_kind(blocking)}, not a folder; move it or give another path",
            **where,
        )
    raise MagnetError(
        f"the folder {folder} does not exist (magnet makes only the last folder of a path)",
        **where,
    )


def make_folder(folder: str | Path, field: str) -> Path:
    """Make ``folder`` for an output unless it exists; its parent must exist (magnet makes only
    the last folder of a path: ``check_writable``). Bad input naming ``field`` when it cannot
    be made."""
    folder = check_writable(folder, field, folder=True)
    try:
        folder.mkdir(exist_ok=True)
    except OSError as exc:
        raise MagnetError(
            f"cannot make the folder: {exc.strerror or exc}", source=str(folder), field=field
        ) from None
    return folder


#: The errors of a write that say the path cannot be written to (``write_atomic``).
_REFUSED = frozenset(
    {
        errno.EACCES,
        errno.EPERM,
        errno.EROFS,
        errno.EISDIR,
        errno.ENOTDIR,
        errno.ENOENT,
        errno.EEXIST,
        errno.ENXIO,
        errno.ETXTBSY,
        errno.ELOOP,
        errno.ENAMETOOLONG,
    }
)


def write_atomic(path: str | Path, data: str | bytes | Iterable[str]) -> Path:
    """Write ``data`` (text as UTF-8; an iterable of texts written as it yields them, never
    held whole) to ``path`` whole or not at all: into a new file in
    the same folder, synced, then renamed over ``path`` (``os.replace``), so an interrupted
    write leaves the old file as it was. A symlink is written through (its target is
    replaced); anything but a regular file (a device, a fifo) is refused, never replaced; an
    existing file keeps its permissions. Returns ``path``. A write the system refuses for
    the path's sake (what ``check_writable`` could not foresee: ``chattr +a``, a race) is bad
    input naming the path; a failure of the machine (a full disk) is raised as the ``OSError``
    it is. Either way nothing is left behind."""
    target = Path(os.path.realpath(path))
    kind = path_kind(target)
    if kind not in (None, "file"):  # never replace a device (/dev/null), a fifo or a folder
        raise MagnetError(f"is a {kind}, not a regular file; give a file name", source=str(path))
    tmp = target.with_name(f".{target.name[:100]}.{secrets.token_hex(4)}.tmp")
    try:
        try:
            mode: int | None = stat.S_IMODE(target.stat().st_mode)
        except FileNotFoundError:
            mode = None  # a new file: 0o666 less the umask, as for any
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            with os.fdopen(fd, "wb") as f:
                if mode is not None:
                    os.fchmod(f.fileno(), mode)
                for chunk in [data] if isinstance(data, str | bytes) else data:
                    f.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as exc:
        if exc.errno not in _REFUSED:  # the machine's trouble (a full disk), not the path's
            raise
        raise MagnetError(
            f"cannot write the file: {exc.strerror or exc}", source=str(path)
        ) from None
    return Path(path)


#: The folders that ship with magnet, at the repository's top level beside ``magnet/``: the
#: built-in search spaces and the example cost-model plug-in. The wheel carries each inside
#: the package under the same name (pyproject.toml: ``force-include``).
Shipped = Literal["search_spaces", "cost_models"]


def shipped(folder: Shipped) -> Path:
    """Where the shipped folder ``folder`` is: inside the imported ``magnet`` package when it
    is there (an installed wheel, into which pyproject.toml's ``force-include`` put it), else
    beside that package at the top of its source tree (a clone, or an editable install: that
    puts the source tree on the path, so ``magnet`` is the clone's; the copies hatchling
    also writes into site-packages for it are never read)."""
    package = Path(__file__).resolve().parent
    inside = package / folder
    if inside.is_dir():
        return inside
    root = package.parent
    if (root / "pyproject.toml").is_file() and (root / folder).is_dir():
        return root / folder
    raise MagnetError(
        f"magnet is installed without its {folder} folder: neither {inside} nor {root / folder} "
        "exists; install magnet again"
    )
