"""The dashboard's read-only view of a storage: studies cached while the storage is unchanged.

A Journal file is unchanged while its size and modification time are; a database storage
(a URL) is read again at most every ``ttl`` seconds. Whatever is derived from a study
(figures, design views) is kept with it and dropped when the storage changes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from magnet.errors import MagnetError
from magnet.search.storage import DEFAULT_JOURNAL, describe, is_url
from magnet.search.study import Study, TrialView, list_studies, load_study

#: Derived results kept per storage state (least recently used first out).
MEMO_SIZE = 256


class NotFound(Exception):
    """An unknown study or trial (a 404)."""


class Store:
    """Studies of one storage, read on demand (see the module docstring)."""

    def __init__(self, storage: str | None, ttl: float = 2.0):
        self.storage = storage
        self.ttl = ttl
        self.label = describe(storage)
        self._lock = threading.Lock()
        self._state: Any = object()
        self._studies: dict[str, Study] = {}
        self._names: list[str] | None = None
        self._memo: OrderedDict[Any, Any] = OrderedDict()

    @property
    def path(self) -> Path | None:
        if self.storage is not None and is_url(self.storage):
            return None
        return DEFAULT_JOURNAL if self.storage is None else Path(self.storage)

    def state(self) -> Any:
        """What changes when the storage does."""
        path = self.path
        if path is None:
            return int(time.monotonic() / self.ttl)
        try:
            st = path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def _fresh(self) -> Any:
        state = self.state()
        with self._lock:
            if state != self._state:
                self._state = state
                self._studies.clear()
                self._names = None
                self._memo.clear()
        return state

    def exists(self) -> bool:
        path = self.path
        return path is None or path.exists()

    def names(self) -> list[str]:
        """The studies of the storage (none while a Journal file does not exist yet)."""
        state = self._fresh()
        names = self._names
        if names is None:
            names = list_studies(self.storage) if self.exists() else []
            with self._lock:
                if self._state == state:
                    self._names = names
        return list(names)

    def study(self, name: str) -> Study:
        """The magnet study ``name`` (``NotFound`` if there is none)."""
        state = self._fresh()
        found = self._studies.get(name)
        if found is not None:
            return found
        if name not in self.names():
            raise NotFound(f"no study {name!r} in {self.label}")
        try:
            study = load_study(name, self.storage)
        except MagnetError as exc:
            if "not made by magnet" in str(exc):
                raise NotFound(f"study {name!r} was not made by magnet") from None
            raise
        with self._lock:
            if self._state == state:
                self._studies[name] = study
        return study

    def trial(self, name: str, number: int) -> tuple[Study, TrialView]:
        """The study ``name`` and its trial ``number`` (``NotFound`` if either is missing)."""
        study = self.study(name)
        try:
            return study, study.trial(number)
        except MagnetError:
            raise NotFound(f"study {name!r} has no trial {number}") from None

    def studies(self) -> list[Study]:
        """Every magnet study of the storage (others are skipped)."""
        out = []
        for name in self.names():
            try:
                out.append(self.study(name))
            except NotFound:
                continue
        return out

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per storage state."""
        state = self._fresh()
        with self._lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                return self._memo[key]
        value = make()
        with self._lock:
            if self._state != state:
                return value
            self._memo[key] = value
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return value
