"""The dashboard's read-only view of a storage, followed incrementally while searches write.

The storage is opened once, read-only (``open_storage(create=False)``: a journal through a
backend that cannot append, an SQLite file with ``mode=ro``, nothing created or repaired).
Each study is a ``Feed``: its finished trials are kept (Optuna never changes a finished
trial), and a refresh reads only what is new: for a journal, Optuna's backend follows the
file by byte offset (the bytes appended since), for a database the trials numbered past
the last one seen and those not finished then, one by one. A trial whose object did not
change keeps its parsed ``TrialView``.

When to refresh: a journal when its size, modification time or inode changed (a request
meanwhile is answered from what was read: asking a journal of 100,000 trials how many it
holds takes 45 ms); a database's studies at every look, its list of studies at most every
``ttl`` seconds. Whatever is derived from a study (figures, tables) is kept
under the study's version and made again only when the study changed.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from magnet.errors import MagnetError
from magnet.files import path_kind
from magnet.search.storage import (
    DEFAULT_JOURNAL,
    describe,
    is_url,
    locate,
    open_storage,
    storage_error,
)
from magnet.search.study import Study, TrialView

if TYPE_CHECKING:
    from optuna.storages import BaseStorage

#: Derived results kept (least recently used first out).
MEMO_SIZE = 256
#: What a memo keeps (``Store.memo``).
T = TypeVar("T")


class NotFound(Exception):
    """An unknown study, trial or figure (a 404)."""


class Refused(Exception):
    """A request that cannot be answered as asked (a 400), with why."""


#: A whole number in a URL with more digits than this is beyond anything a study holds.
MAX_DIGITS = 18


def whole_number(text: str) -> int | None:
    """``text`` (from a URL) as a whole number, or None if it is not one (ASCII digits only:
    ``-1``, ``1e3``, ``²`` are not); one too long to be a trial number or a version is
    ``10**MAX_DIGITS``, beyond any."""
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text) if len(text) <= MAX_DIGITS else 10**MAX_DIGITS


def clip(text: str, limit: int = 40) -> str:
    """``text`` from a request, cut for a message."""
    return text if len(text) <= limit else text[:limit] + "..."


class Feed:
    """One study of an open storage, read incrementally (see the module docstring)."""

    def __init__(self, storage: BaseStorage, name: str, spec: str):
        self.storage = storage
        self.study_id = storage.get_study_id_from_name(name)
        self.name = name
        self.spec = spec
        self.label = describe(spec)
        self.version = 0
        self.trials: dict[int, Any] = {}  # number -> FrozenTrial
        self.unfinished: set[int] = set()
        self.views: dict[int, tuple[Any, TrialView]] = {}
        #: number -> (its TrialView, its row as JSON without its closing brace, the words its
        #: cells show): the dashboard's tables (app.py, ``Dashboard._rows``)
        self.rows: dict[int, tuple[TrialView, str, str]] = {}
        #: (format, number) -> (its TrialView, its CSV row): the downloads (``export_chunks``)
        self.exports: dict[tuple[str, int], tuple[TrialView, str]] = {}
        self.attrs: dict[str, Any] | None = None
        self.study: Study | None = None
        #: whether the storage may have changed since the study was last read (``Store.check``
        #: says so): a request meanwhile is answered from what was read (asking a journal of
        #: 100,000 trials how many it has takes 45 ms)
        self.stale = True
        self.lock = threading.Lock()

    def refresh(self) -> tuple[Study, int]:
        """The study as stored now (the same object while nothing changed) and its
        version, read together."""
        with self.lock:
            if not self.stale and self.study is not None:
                return self.study, self.version
            self.stale = False
            try:
                attrs, fresh = self._read()
            except Exception as exc:  # the server went away, the file was damaged
                self.stale = True
                raise MagnetError(
                    f"cannot read study {self.name!r}: {storage_error(exc, self.spec)}",
                    source=self.label,
                ) from None
            changed = [t for t in fresh if not _same(self.trials.get(t.number), t)]
            if changed or attrs != self.attrs or self.study is None:
                self.version += 1
                for t in changed:
                    self.trials[t.number] = t
                    if t.state.is_finished():
                        self.unfinished.discard(t.number)
                    else:
                        self.unfinished.add(t.number)
                self.attrs = attrs
                self.study = Study(
                    self.name, attrs, list(self.trials.values()), self.label, self.views, self.study
                )
            return self.study, self.version

    def _read(self) -> tuple[dict[str, Any], list[Any]]:
        """The study's attributes, and its trials (every one the first time, then those new
        or unfinished when last read)."""
        s = self.storage
        attrs = s.get_study_user_attrs(self.study_id)
        if not self.trials:
            return attrs, s.get_all_trials(self.study_id, deepcopy=False)
        count = s.get_n_trials(self.study_id)
        numbers = sorted(self.unfinished | set(range(len(self.trials), count)))
        return attrs, [
            s.get_trial(s.get_trial_id_from_study_id_trial_number(self.study_id, n))
            for n in numbers
        ]


def _same(old: Any, new: Any) -> bool:
    return old is not None and (old is new or old == new)


class Store:
    """The studies of one storage, read on demand (see the module docstring)."""

    def __init__(self, storage: str | None, ttl: float = 2.0):
        self.spec = storage
        #: the storage as given (the default journal for None)
        self.given = str(DEFAULT_JOURNAL) if storage is None else storage
        self.ttl = ttl
        self.label = describe(storage)
        self._lock = threading.Lock()
        self._storage: Any = None
        self._state: Any = None
        self._checked = -1.0
        self._feeds: dict[str, Feed] = {}
        self._names: list[str] = []
        self._memo: OrderedDict[Any, Any] = OrderedDict()
        #: the version of each study object handed out (``snapshot``): what a memo of it is
        #: kept under, however far the study has grown since
        self._versions: weakref.WeakKeyDictionary[Study, int] = weakref.WeakKeyDictionary()

    @property
    def path(self) -> Path | None:
        """The journal file the storage is (None: a database URL)."""
        if self.spec is not None and is_url(self.spec):
            return None
        return DEFAULT_JOURNAL if self.spec is None else Path(self.spec)

    def exists(self) -> bool:
        """Whether the storage exists (a database: assumed; a journal: it may be removed
        while it is served)."""
        path = self.path
        return path is None or path_kind(path) is not None

    def open(self) -> None:
        """Open the storage now, as every reader does (``MagnetError`` if it cannot be one,
        or does not exist: a viewer shows the storage of a search, never one to come): a
        database is connected to; a journal file is checked to be one (it is read in full on
        the first look at its studies)."""
        if self.path is None:
            self.check()
        else:
            locate(self.spec, create=False)

    def _file_state(self) -> Any:
        path = self.path
        try:
            st = os.stat(path) if path is not None else None
        except OSError:
            return None
        return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)

    def check(self) -> None:
        """Open the storage (read-only), or follow it: what was appended is read on the next
        look at a study."""
        with self._lock:
            if self.path is None:
                # a database's studies are asked for their new trials at each look (a count
                # and the trials past it: cheap), its list of studies every ``ttl`` seconds
                self._mark_stale()
                now = time.monotonic()
                if self._storage is not None and now - self._checked < self.ttl:
                    return
                self._checked = now
                if self._storage is None:
                    self._storage = open_storage(self.spec, create=False, keep_records=False)
                self._names = self._study_names()
                return
            state = self._file_state()
            if state == self._state and self._storage is not None:
                return
            if state is None:  # no journal (yet, or any more)
                self._storage, self._state, self._feeds, self._names = None, None, {}, []
                return
            old = self._state
            replaced = old is None or state[0] != old[0] or state[1] < old[1]  # not appended to
            if self._storage is None or replaced:
                self._storage = open_storage(self.spec, create=False, keep_records=False)
                self._feeds = {}
            self._state = state
            self._names = self._study_names()
            self._mark_stale()

    def _mark_stale(self) -> None:
        """The storage may have changed: each study is read again on its next look."""
        for feed in self._feeds.values():
            feed.stale = True

    def _study_names(self) -> list[str]:
        try:
            studies = self._storage.get_all_studies()
        except Exception as exc:
            raise MagnetError(
                f"cannot read the storage: {storage_error(exc, self.given)}", source=self.label
            ) from None
        names = [s.study_name for s in studies]
        for name in names:
            if name not in self._feeds:
                self._feeds[name] = Feed(self._storage, name, self.given)
        return names

    def names(self) -> list[str]:
        """The studies of the storage (none while a journal file does not exist yet)."""
        self.check()
        return list(self._names)

    def feed(self, name: str) -> Feed:
        """The ``Feed`` of study ``name`` (made on first use; ``NotFound`` if none)."""
        self.check()
        found = self._feeds.get(name)
        if found is None or name not in self._names:
            raise NotFound(f"no study {name!r} in {self.label}")
        return found

    def study(self, name: str) -> Study:
        """The magnet study ``name`` as stored now (``NotFound`` if there is none)."""
        return self.snapshot(name)[0]

    def snapshot(self, name: str) -> tuple[Study, int]:
        """The study ``name`` as stored now and its version (it grows whenever the study
        changes), read together."""
        feed = self.feed(name)
        try:
            study, version = feed.refresh()
        except MagnetError as exc:
            if "not made by magnet" in str(exc):
                raise NotFound(f"study {name!r} was not made by magnet") from None
            raise
        with self._lock:
            self._versions[study] = version
        return study, version

    def version(self, name: str) -> int:
        """The version of study ``name`` now."""
        return self.snapshot(name)[1]

    def version_of(self, study: Study) -> int:
        """The version ``study`` was read at (a study this store handed out: ``snapshot``),
        not the one its storage is at now: what the study's figures, rows and summary are
        kept under."""
        with self._lock:
            return self._versions[study]

    def trial(self, name: str, number: str) -> tuple[Study, TrialView]:
        """The study ``name`` and its trial ``number`` (as a URL gives it): ``NotFound`` naming
        the study, or the trial and the numbers the study has."""
        study = self.study(name)
        n = whole_number(number)
        try:
            if n is not None:
                return study, study.trial(n)
        except MagnetError:
            pass
        count = len(study.trials())
        has = f"its trials are numbered 0 to {count - 1}" if count else "it has no trials yet"
        raise NotFound(f"no trial {clip(number)} in study {name!r} ({has})")

    def studies(self) -> list[Study]:
        """Every magnet study of the storage (others are skipped)."""
        out = []
        for name in self.names():
            try:
                out.append(self.study(name))
            except NotFound:
                continue
        return out

    def memo(self, key: tuple[Any, ...], make: Callable[[], T], study: Study | None = None) -> T:
        """``make()`` for ``key`` (its first item a study name), kept under the version of
        ``study``, the study ``make`` reads (made again for each version: a request that read
        a study before it grew never keeps its result under the grown study's version, where
        it would stand for it once the storage stops changing), or, without ``study``, while
        the storage is the same one (for what does not change as a study grows, such as a
        finished trial's design)."""
        version = id(self._storage) if study is None else self.version_of(study)
        full = (version, *key)
        with self._lock:
            if full in self._memo:
                self._memo.move_to_end(full)
                kept: T = self._memo[full]
                return kept
        value = make()
        with self._lock:
            self._memo[full] = value
            while len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return value
