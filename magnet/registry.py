"""Plug-ins by name: one mechanism for cost models, mappers and templates.

Every kind of plug-in keeps a ``Registry``: built-ins, names registered from Python, and
(per kind) installed entry points. Each entry is a ``Plugin`` with one *identity*:
``module:qualname@digest``, the digest a hash of the class's source (a file plug-in: of the
file), so that two plug-ins that share a name, or two versions of one plug-in re-registered
in a notebook, never share cached results.

A design search sends every user-registered plug-in a job needs *with the job* (by value:
Ray pickles a class defined in a notebook with its code); the worker ``install``s it, so a
registration made in the driver reaches every worker, and a worker's caches are keyed by the
identity.

Built-ins load one way for every kind: a ``Registry`` is given the module that holds them,
whose ``BUILTIN`` maps each name to its plug-in, and imports it when the kind is first used
(so that the module may import the kind's own module, as a plug-in does, without a cycle),
handing each to the kind's ``adopt``: the checks a plug-in of the kind passes, which add it.
A kind that names an entry-point group loads the installed entry points the same way, after
the built-ins (cost models read theirs lazily, by name: ``magnet.cost.lookup``).

Re-registering a name that was registered from Python replaces it (a notebook cell run
again); a built-in or entry-point name cannot be taken.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from magnet.errors import MagnetError, PluginError, PluginExit, user_traceback, what_raised

BUILT_IN, REGISTERED, ENTRY_POINT = "built-in", "registered", "entry point"


@dataclass(frozen=True)
class Plugin:
    """One named plug-in: ``obj`` is the class (cost models, mappers) or the object
    (templates) registered under ``name``."""

    kind: str
    name: str
    obj: Any
    origin: str
    identity: str
    description: str = ""


def identity_of(obj: object) -> str:
    """See ``_class_identity`` (cached per class object)."""
    cls: type = obj if isinstance(obj, type) else type(obj)
    return _class_identity(cls)


@functools.lru_cache(maxsize=1024)
def _class_identity(cls: type) -> str:
    """``module:qualname@digest`` of a class (or of an object's class): the digest hashes
    the source of its module (its helpers too), else of the class, else (no source, e.g. a
    class typed into an interpreter) the class object itself, unique in this process."""
    name = f"{cls.__module__}:{cls.__qualname__}"
    try:
        module = inspect.getmodule(cls)
        text = inspect.getsource(module if module is not None else cls).encode()
    except (OSError, TypeError):
        try:
            text = inspect.getsource(cls).encode()
        except (OSError, TypeError):
            text = f"object {id(cls):x}".encode()
    return f"{name}@{digest(text)}"


def digest(data: bytes) -> str:
    """A short content hash (16 hex digits of SHA-256)."""
    return hashlib.sha256(data).hexdigest()[:16]


#: How a kind takes in a plug-in: ``adopt(name, obj, origin)`` checks ``obj`` as a plug-in of
#: the kind, adds it (``Registry.add``) and returns the name it was added as (a mapper and a
#: template name themselves; ``name`` is the ``BUILTIN`` key or the entry point's name).
Adopt = Callable[[str, Any, str], str]


class Registry:
    """The plug-ins of one kind by name (see the module docstring): the built-ins of the
    module ``builtins`` (its ``BUILTIN``, name -> plug-in) and, with ``entry_points``, the
    entry points of that group, each taken in by ``adopt``, when the kind is first used."""

    def __init__(
        self, kind: str, builtins: str, adopt: Adopt, *, entry_points: str | None = None
    ) -> None:
        self.kind = kind
        self.builtins = builtins
        self.entry_points = entry_points
        self._adopt = adopt
        self._entries: dict[str, Plugin] = {}
        self._loaded = False

    def _ensure_loaded(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        builtin: dict[str, Any] = importlib.import_module(self.builtins).BUILTIN
        for name, obj in builtin.items():
            added = self._adopt(name, obj, BUILT_IN)
            if added != name:
                raise RuntimeError(
                    f"{self.builtins}.BUILTIN lists the {self.kind} {added!r} as {name!r}"
                )
        if self.entry_points is None:
            return
        for ep in importlib.metadata.entry_points(group=self.entry_points):
            label = f"{self.kind} entry point {ep.name!r} ({ep.value})"
            with plugin_errors(self.kind, ep, "being imported", label=label):
                loaded = ep.load()
            self._adopt(ep.name, loaded, ENTRY_POINT)

    def add(
        self, name: str, obj: Any, *, origin: str = REGISTERED, description: str = ""
    ) -> Plugin:
        """Register ``obj`` as ``name``; a name registered from Python is replaced, a
        built-in or entry-point name is refused."""
        self._ensure_loaded()
        taken = self._entries.get(name)
        if taken is not None and taken.obj is not obj and taken.origin != REGISTERED:
            raise MagnetError(
                f"{self.kind} name {name!r} is already taken by {taken.identity.split('@')[0]} "
                f"({taken.origin}); names must be unique, choose another"
            )
        entry = Plugin(self.kind, name, obj, origin, identity_of(obj), description)
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Forget a name registered from Python (built-ins and entry points stay)."""
        self._ensure_loaded()
        entry = self._entries.get(name)
        if entry is None or entry.origin != REGISTERED:
            raise MagnetError(f"{name!r} is not a {self.kind} registered from Python")
        del self._entries[name]

    def get(self, name: str) -> Plugin | None:
        """The plug-in registered as ``name``, None if there is none."""
        self._ensure_loaded()
        return self._entries.get(name)

    def entries(self) -> dict[str, Plugin]:
        """Every plug-in by name (a copy)."""
        self._ensure_loaded()
        return dict(self._entries)

    def install(self, plugin: Plugin) -> None:
        """Make a plug-in registered in another process (the driver) known here, as it
        was there (a job carries it by value)."""
        self._ensure_loaded()
        here = self._entries.get(plugin.name)
        if here is None or here.identity != plugin.identity:
            self._entries[plugin.name] = plugin


def is_builtin(plugin: object) -> bool:
    """Whether ``plugin`` (a class or an object) is magnet's own code, not a plug-in's."""
    cls = plugin if inspect.isclass(plugin) else type(plugin)
    return cls.__module__ == "magnet" or cls.__module__.startswith("magnet.")


#: The signals that stop magnet when they come: Ctrl-C, and SIGTERM (a search's driver takes it
#: as it takes Ctrl-C). Neither is ever a plug-in's doing.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def plugin_code() -> Iterator[None]:
    """Around every call into a plug-in's code (its import, its constructor, its methods).

    What the plug-in prints goes to stderr: stdout carries magnet's results (a table,
    ``--json``). A stop the process received while it ran (Ctrl-C, or SIGTERM where a handler
    makes it a ``KeyboardInterrupt``, as a search's driver does) leaves as
    ``KeyboardInterrupt``, whatever the plug-in made of it. Any other ``BaseException`` that
    is not an ``Exception``, which the plug-in raised itself (``sys.exit``,
    ``KeyboardInterrupt`` with no signal, ``GeneratorExit``), leaves as ``PluginExit``, an
    ``Exception``: reported like the plug-in's other bugs.

    Telling the two ``KeyboardInterrupt`` apart: for the call, the handler of each of
    ``STOP_SIGNALS`` that is Python's (in the main thread) is wrapped in one that notes the
    signal before handing it on. A signal ignored or left to the system (SIGTERM's default
    ends the process), or any signal in another thread (signals reach the main thread only),
    cannot become a ``KeyboardInterrupt`` there; with a handler set outside Python magnet
    cannot tell, and takes it for the user's stop. A Ctrl-C the plug-in swallowed (``except
    BaseException``) is raised again when it returns, if Python's default handler had it.
    """
    with _stop_watch() as came, contextlib.redirect_stdout(sys.stderr):
        try:
            yield
        except BaseException as exc:
            stopped = came()
            if stopped or (stopped is None and isinstance(exc, KeyboardInterrupt)):
                if isinstance(exc, KeyboardInterrupt):
                    raise
                raise KeyboardInterrupt from exc  # the plug-in made it something else
            if isinstance(exc, Exception):
                raise
            raise PluginExit(exc) from exc
        swallowed = came()
    if swallowed and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        raise KeyboardInterrupt


@contextlib.contextmanager
def _stop_watch() -> Iterator[Callable[[], bool | None]]:
    """Yields a function: whether one of ``STOP_SIGNALS`` came during the block (None: cannot
    tell, a handler not set from Python)."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    noted: list[int] = []
    handlers = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    watched: dict[int, Callable[[int, FrameType | None], Any]] = {
        signum: h for signum, h in handlers.items() if callable(h)
    }
    unknown = any(h is None for h in handlers.values())

    def note(signum: int, frame: FrameType | None) -> Any:
        noted.append(signum)
        return watched[signum](signum, frame)

    for signum in watched:
        signal.signal(signum, note)
    try:
        yield lambda: True if noted else None if unknown else False
    finally:
        for signum, handler in watched.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def plugin_errors(
    kind: str,
    plugin: object,
    doing: str,
    *,
    passthrough: tuple[type[BaseException], ...] = (),
    label: str | None = None,
    hint: str = "",
) -> Iterator[None]:
    """Run a call into a plug-in's code (a template's, a mapper's, a cost model's) inside
    ``plugin_code``: an exception it raises (or a ``sys.exit``, ...) is a bug in the plug-in
    and leaves the block as a ``PluginError``, one line naming the plug-in (``label``, by
    default ``kind``, its name, its module and class), what it was ``doing`` and ``hint``,
    with the plug-in's own traceback.

    A ``MagnetError`` (bad input, or a design the plug-in refuses: ``DesignInfeasible``), a
    ``PluginError`` and the ``passthrough`` types leave as they are. magnet's own code
    (``is_builtin``: its cost models, mappers and templates) runs as any other of its code:
    what it raises is magnet's, never a plug-in's, and an interrupt is the user's.
    """
    if is_builtin(plugin):
        yield
        return
    left_alone: tuple[type[BaseException], ...] = (MagnetError, PluginError, *passthrough)
    try:
        with plugin_code():
            yield
    except left_alone:
        raise
    except Exception as exc:
        if label is None:
            name = getattr(plugin, "name", None) or type(plugin).__name__
            label = f"{kind} {name!r} ({identity_of(plugin).split('@')[0]})"
        raise PluginError(
            f"{label} {what_raised(exc)} while {doing}{hint}", user_traceback(exc)
        ) from exc
