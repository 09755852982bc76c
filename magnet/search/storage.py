"""Where studies live: an Optuna Journal file by default, any Optuna storage URL otherwise.

``--storage`` takes a path (default ``magnet-results/magnet.journal``) or a URL with a scheme
(``sqlite:///studies.db``, ``postgresql://user@host/db``). A path is a journal (Optuna's
JournalStorage file: one JSON operation per line) when it is one, is empty or does not exist
yet; a path to an SQLite file that already is an Optuna storage is opened as ``sqlite:///``
that file. Anything else is refused and left untouched: magnet never rewrites a file it did
not write. The only repair is of a journal's torn last record (a driver killed mid-append),
made in place under the journal's append lock; anything else at its end is refused.

One driver writes a study at a time (``DriverLock``). A URL is shown without its password
(``describe``), wherever it is shown.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import sqlite3
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from magnet.errors import MagnetError, MagnetNote
from magnet.files import check_writable, make_folder, path_kind, same_file

if TYPE_CHECKING:
    import optuna
    from optuna.storages import BaseStorage, JournalStorage, RDBStorage

DEFAULT_DIR = Path("magnet-results")
DEFAULT_JOURNAL = DEFAULT_DIR / "magnet.journal"
#: A driver on another host whose heartbeat is older than this is taken for dead.
STALE_SECONDS = 120.0
#: How often a driver on a database storage refreshes its heartbeat.
BEAT_SECONDS = 30.0
#: What is read of a file to tell a journal from anything else (never the whole file).
SNIFF_BYTES = 1 << 20
SQLITE_HEADER = b"SQLite format 3\x00"
#: Tables every Optuna RDB storage has.
OPTUNA_TABLES = frozenset({"studies", "trials", "version_info"})
NOT_A_JOURNAL = (
    "cannot read the journal: the file is not a magnet journal (an Optuna journal file: one "
    "JSON operation per line) and is left untouched; give a journal, a new file name or a "
    "storage URL"
)
#: What ``--storage`` takes, as a refusal says it.
ACCEPTED = (
    "--storage takes a journal file (a path), sqlite:///FILE, postgresql://USER@HOST/DB, or "
    "another database URL of SQLAlchemy's whose driver is installed (mysql://USER@HOST/DB "
    "with mysqlclient)"
)
HOST = socket.gethostname()

_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/?#@]*:)(.*)@(?=[^@]*$)", re.S)
_QUERY_PASSWORD = re.compile(r"([?&](?:password|passwd|pwd)=)([^&#]*)", re.I)


def is_url(spec: str) -> bool:
    """Whether a storage spec is a database URL (``scheme://``), not a journal file."""
    return "://" in spec


def describe(spec: str | None) -> str:
    """``spec`` as every display shows it (stderr, reports, exports, the dashboard): the
    default journal for None, a URL with its password as ``***``."""
    if spec is None:
        return str(DEFAULT_JOURNAL)
    if not is_url(spec):
        return spec
    masked = _PASSWORD.sub(r"\1***@", spec)
    return _QUERY_PASSWORD.sub(r"\1***", masked)


def _scrub(text: str, spec: str) -> str:
    """``text`` (a driver's error message) without the password of ``spec`` in it."""
    hidden = [m.group(2) for m in (_PASSWORD.match(spec), *_QUERY_PASSWORD.finditer(spec)) if m]
    text = text.replace(spec, describe(spec))
    for secret in filter(None, hidden):
        text = text.replace(secret, "***")
    return text


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [""])[0]


def storage_error(exc: BaseException, spec: str) -> str:
    """Why the storage ``spec`` failed, in one line and without its password: the driver's
    own error (a refused connection, an unknown host), not the ``StorageInternalError`` that
    Optuna raises in its place, which only says that a commit failed."""
    from optuna.exceptions import StorageInternalError

    while isinstance(exc, StorageInternalError) and exc.__cause__ is not None:
        exc = exc.__cause__
    return f"{type(exc).__name__}: {_scrub(_first_line(exc), spec)}"


@contextlib.contextmanager
def reading(spec: str | None) -> Iterator[None]:
    """Around a reader's calls into an open storage: what fails there (a database server
    gone, a file damaged) is bad input naming the storage and the driver's own error
    (``storage_error``), never a ``StorageInternalError`` or a traceback."""
    try:
        yield
    except MagnetError:
        raise
    except Exception as exc:
        raise MagnetError(
            f"cannot read the storage: {storage_error(exc, spec or str(DEFAULT_JOURNAL))}",
            source=describe(spec),
            field="--storage",
        ) from None


def check_url(url: str) -> None:
    """Refuse, before any work, a storage URL no Optuna storage can open: one SQLAlchemy
    cannot read, a scheme that names no database it knows (``redis://``, ``http://``), a
    database whose driver is not installed, or an asyncio driver (Optuna's is synchronous)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    where = {"source": describe(url), "field": "--storage"}
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise MagnetError(f"not a URL of a database; {ACCEPTED}", **where) from None
    scheme = parsed.drivername
    try:
        dialect = parsed.get_dialect()
    except NoSuchModuleError:
        meant = {"postgres": " (PostgreSQL's is postgresql://)"}.get(scheme, "")
        raise MagnetError(
            f"the scheme {scheme!r} names no database Optuna can keep studies in{meant}; "
            + ACCEPTED,
            **where,
        ) from None
    try:
        dialect.import_dbapi()
    except ImportError as exc:
        raise MagnetError(
            f"the driver of {scheme!r} ({dialect.driver}) is not installed ({exc}); install it, "
            f"or give another storage: {ACCEPTED}",
            **where,
        ) from None
    if dialect.is_async:
        raise MagnetError(
            f"{scheme!r} is an asyncio driver, which Optuna's storage cannot use; {ACCEPTED}",
            **where,
        )


# ---- what a spec names -----------------------------------------------------------------------
def locate(spec: str | None, *, create: bool) -> str:
    """What ``spec`` names, as magnet opens it: a URL (a path to an SQLite file that is an
    Optuna storage becomes ``sqlite:///`` its real path), or the real path of a journal (so
    that a symlink or ``./x`` is the same journal, with the same locks). Nothing is created.

    A path that is neither a journal nor an Optuna SQLite file raises ``MagnetError`` and is
    not touched; so does a missing journal with ``create=False`` (a reader must not create an
    empty study file by mistake), and with ``create=True`` (a driver's) a storage where a
    search cannot write (``check_writable``: only the default folder, ``magnet-results``, is
    made when missing; a given journal's folder must exist)."""
    if spec is not None and is_url(spec):
        check_url(spec)
        if create:
            _check_database(spec)
        return spec
    if spec == "":
        raise MagnetError("an empty path; give a journal file or a storage URL", field="--storage")
    path = DEFAULT_JOURNAL if spec is None else Path(spec)
    where = {"source": str(path), "field": "--storage"}
    kind = path_kind(path)
    if kind == "directory":
        raise MagnetError("is a directory; give a journal file or a storage URL", **where)
    if create:
        check_writable(path if spec is None else spec, "--storage", new_folder=spec is None)
    elif kind not in (None, "file"):
        raise MagnetError(
            f"is a {kind}, not a journal file; give a journal file or a storage URL", **where
        )
    if kind is None:
        if not create:
            raise MagnetError(
                "no such study storage (run a search first, or give --storage)", **where
            )
        return os.path.realpath(path)
    try:
        with path.open("rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError as exc:
        raise MagnetError(f"cannot read the file: {exc.strerror or exc}", **where) from None
    if head.startswith(SQLITE_HEADER):
        if _sqlite_tables(path) >= OPTUNA_TABLES:
            return f"sqlite:///{os.path.realpath(path)}"
        raise MagnetError(
            f"is an SQLite database, not a magnet journal; give it as sqlite:///{path} to "
            "store studies in it",
            **where,
        )
    if not _journal_head(head, complete=len(head) < SNIFF_BYTES):
        raise MagnetError(NOT_A_JOURNAL, **where)
    return os.path.realpath(path)


def _check_database(url: str) -> None:
    """Refuse a database URL a search cannot keep studies in: an SQLite database in memory
    (gone when the search ends), a file where one cannot be written (``check_writable``), or a
    file that is not an SQLite database (a user's text: magnet writes no database into it)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # not a URL SQLAlchemy reads: RDBStorage says why
        return
    if parsed.get_backend_name() != "sqlite":
        return
    db = _sqlite_file(url)
    if db is None:
        raise MagnetError(
            "is an SQLite database in memory, which keeps nothing after the search; give a "
            "file (sqlite:///studies.db) or a journal",
            source=describe(url),
            field="--storage",
        )
    check_writable(db, "--storage")
    if path_kind(db) == "file":
        with open(db, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
        if head and head != SQLITE_HEADER:
            raise MagnetError(
                "is not an SQLite database (it does not begin as one) and is left as it is; "
                "give a new file name or an SQLite database",
                source=db,
                field="--storage",
            )


def check_storage(spec: str | None, study: str) -> None:
    """Refuse, before any work, a storage a search of ``study`` could not write: the storage
    itself (``locate``) and, for a journal, the lock files it needs beside it (the journal's
    append lock, the study's driver lock). Creates nothing."""
    target = locate(spec, create=True)
    if is_url(target):
        return
    journal = Path(target)
    for lock in (Path(f"{journal}.lock"), driver_lock_path(journal, study)):
        try:
            check_writable(lock, "--storage", new_folder=spec is None)
        except MagnetError as exc:
            raise MagnetError(
                f"its lock file {lock} {exc.message.split('; ')[0]}; remove it or give another "
                "journal",
                source=describe(spec),
                field="--storage",
            ) from None


def _journal_head(head: bytes, complete: bool) -> bool:
    """Whether ``head`` (the first bytes of a file; ``complete``: the whole file) starts like
    a journal: empty, or a first line that is a JSON operation (a torn only line counts)."""
    if not head:
        return True
    first, newline, _ = head.partition(b"\n")
    if not newline and not complete:  # a first line longer than a journal's ever is
        return False
    return _is_operation(first) or (not newline and first.startswith(b'{"op_code":'))


def _is_operation(line: bytes) -> bool:
    """Whether ``line`` is a journal operation: a JSON object with an ``op_code``."""
    try:
        operation = json.loads(line)
    except ValueError:  # UnicodeDecodeError included
        return False
    return isinstance(operation, dict) and "op_code" in operation


def _sqlite_tables(path: str | Path) -> set[str]:
    """The tables of the SQLite file ``path``, read-only (nothing is written, not even a
    journal file); none for a file SQLite cannot read."""
    uri = Path(os.path.abspath(path)).as_uri() + "?mode=ro"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as db:
            rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
            tables = {name for (name,) in rows}
            if "alembic_version" in tables and db.execute(
                "SELECT count(*) FROM alembic_version"
            ).fetchone() == (0,):
                tables.discard("alembic_version")  # still being created
            return tables
    except sqlite3.Error:
        return set()


def _sqlite_file(url: str) -> str | None:
    """The database file of an ``sqlite://`` URL (None for another database or memory)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # not a URL SQLAlchemy reads: RDBStorage says why
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return parsed.database


def storage_files(spec: str | None) -> list[str]:
    """The files holding the studies of ``spec`` (as given or as ``describe`` shows it): a
    journal, or an SQLite database with its rollback and WAL files; none for a server."""
    if spec is not None and is_url(spec):
        db = _sqlite_file(spec)
        return [] if db is None else [db + suffix for suffix in ("", "-journal", "-wal", "-shm")]
    return [str(DEFAULT_JOURNAL if spec is None else spec)]


def check_output(path: str | Path, spec: str | None, field: str) -> None:
    """Refuse to write a result file over the storage of ``spec`` (a symlink, a hard link or
    ``./x`` to it included): that would destroy the studies."""
    for stored in storage_files(spec):
        if same_file(path, stored):
            raise MagnetError(
                f"is the study storage ({describe(spec)}); writing there would destroy the "
                "studies: give another file name",
                source=str(path),
                field=field,
            )


# ---- opening ---------------------------------------------------------------------------------
@contextlib.contextmanager
def quiet_optuna() -> Iterator[None]:
    """Optuna logs warnings only (not a line per trial) while the block runs; its level is
    put back afterwards, so that a library call leaves the caller's logging as it was."""
    import optuna

    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        yield
    finally:
        optuna.logging.set_verbosity(level)


def open_storage(spec: str | None, *, create: bool, keep_records: bool = True) -> BaseStorage:
    """The Optuna storage ``spec`` names (see ``locate``).

    ``create=True`` is a driver's: a missing journal or SQLite database is created and a
    journal's torn last line repaired. ``create=False`` is a reader's (reports, exports, the
    dashboard) and never writes: a journal is read through a backend that cannot append, an
    SQLite file is opened read-only (``mode=ro``: no table, lock or journal file is made), a
    PostgreSQL session is read-only, no table is created on any database, and a storage that
    does not exist is an error. ``keep_records=False`` (magnet's own readers, which read a
    trial through ``magnet.search.study.TrialView``): a journal's trial records are left in
    the journal, each trial's ``records`` attribute a ``StoredText`` read when asked
    (``magnet.search.journal_replay``); Optuna's tools need the storage as Optuna keeps it
    (the default)."""
    target = locate(spec, create=create)
    if is_url(target):
        return _open_database(target, spec or target, create)
    if create:
        make_folder(Path(target).parent, "--storage")  # the default one, when missing
    shown = str(DEFAULT_JOURNAL if spec is None else spec)
    return _open_journal(target, shown, create, keep_records)


def _read_only_url(url: str) -> tuple[str, dict[str, Any]]:
    """``url`` and the engine arguments that make its sessions read-only (SQLite: the file
    opened with ``mode=ro``, an absent file refused; PostgreSQL: read-only transactions)."""
    from sqlalchemy.engine import make_url

    db = _sqlite_file(url)
    if db is not None:
        where = {"source": db, "field": "--storage"}
        kind = path_kind(db)
        if kind is None:
            raise MagnetError(
                "no such SQLite database (a reader never creates one; run a search first)",
                **where,
            )
        if kind != "file":
            raise MagnetError(f"is a {kind}, not an SQLite database", **where)
        if not _sqlite_tables(db) >= OPTUNA_TABLES:
            raise MagnetError(
                "is not a study storage (not an SQLite database with Optuna's tables: "
                f"{', '.join(sorted(OPTUNA_TABLES))}); give the storage a search wrote",
                **where,
            )
        from sqlalchemy.pool import QueuePool

        uri = Path(os.path.abspath(db)).as_uri() + "?mode=ro"
        # "sqlite://" alone would be taken for an in-memory database, whose pool keeps one
        # connection per thread and closes them from other threads (a traceback per close in
        # a server's log); a queue hands each connection to one thread at a time
        return "sqlite://", {
            "creator": lambda: sqlite3.connect(uri, uri=True, check_same_thread=False),
            "poolclass": QueuePool,
        }
    try:
        backend = make_url(url).get_backend_name()
    except Exception:  # RDBStorage says why
        return url, {}
    if backend == "sqlite":  # in memory: every connection has a database of its own
        raise MagnetError(
            "an in-memory SQLite database holds no study a reader could see; give a "
            "database file (sqlite:///FILE) or a server",
            source=describe(url),
            field="--storage",
        )
    if backend == "postgresql":
        # pre-ping: a reader that outlives a restart of the server reconnects, and one that
        # outlives the server says that the connection is refused
        return url, {
            "connect_args": {"options": "-c default_transaction_read_only=on"},
            "pool_pre_ping": True,
        }
    return url, {}


def _open_database(url: str, spec: str, create: bool) -> RDBStorage:
    import optuna

    try:
        if not create:
            target, engine = _read_only_url(url)
            return optuna.storages.RDBStorage(
                target, engine_kwargs=engine, skip_table_creation=True
            )
        with _creation_lock(_sqlite_file(url)):
            return optuna.storages.RDBStorage(url)
    except MagnetError:
        raise
    except Exception as exc:  # driver missing, server down, bad URL: one clear line
        raise MagnetError(
            f"cannot open the storage: {storage_error(exc, spec)}",
            source=describe(spec),
            field="--storage",
        ) from None


@contextlib.contextmanager
def _creation_lock(db: str | None) -> Iterator[None]:
    """Serialise the creation of an SQLite Optuna storage between processes.

    Optuna creates its tables and stamps the alembic version without a lock of its own; two
    drivers creating one database at once crash, or stamp it twice (which breaks every later
    open). A retry cannot undo a double stamp, so the creators take turns on an ``flock`` of
    the database's folder (never the database itself: closing a descriptor of it would drop
    SQLite's own locks; nor a file of its own, which a refused search would leave behind).
    A database already created needs no turn."""
    if db is None or "alembic_version" in _sqlite_tables(db):
        yield
        return
    import fcntl

    try:
        fd = os.open(os.path.dirname(os.path.abspath(db)), os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # a folder that cannot be opened: nobody creates a database in it
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class ReadOnlyJournal:
    """A journal file as a reader sees it: Optuna's file backend for reading (it follows
    the file by offset: a storage kept open reads only what was appended since), and no
    way to append or lock."""

    def __init__(self, path: str):
        from optuna.storages.journal import JournalFileBackend

        self.path = path
        #: Optuna's backend it reads with (``magnet.search.journal_replay``: where each line
        #: starts)
        self.file_backend = JournalFileBackend(path)  # the file exists: nothing is created

    def read_logs(self, log_number_from: int) -> Iterable[dict[str, Any]]:
        """The journal's operations from ``log_number_from`` on (Optuna's backend protocol)."""
        return self.file_backend.read_logs(log_number_from)

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        """Refused: a reader never writes (Optuna's backend protocol)."""
        raise MagnetError("a reader never writes to a study storage", source=self.path)


#: Optuna's journal operations that a search resumed after a crash of the machine must find
#: on the disk: the study's own (CREATE_STUDY, DELETE_STUDY, SET_STUDY_USER_ATTR,
#: SET_STUDY_SYSTEM_ATTR, DISCARD_TRIALS), and a trial's end (SET_TRIAL_STATE_VALUES to a
#: finished state); by their codes in the journal (Optuna's ``JournalOperation``, private).
_STUDY_OPS = {0, 1, 2, 3, 10}
_SET_TRIAL_STATE = 6


def _durable(log: dict[str, Any]) -> bool:
    """Whether the journal operation ``log`` must reach the disk before the search goes on."""
    from optuna.trial import TrialState

    code = log.get("op_code")
    if code == _SET_TRIAL_STATE:
        return TrialState(log.get("state", TrialState.RUNNING.value)).is_finished()
    return code in _STUDY_OPS


def _journal_backend(path: str) -> Any:
    """Optuna's journal file backend for a search (its lock ``JournalLock``), syncing to
    the disk (``fsync``) only the operations a resumed search needs there (``_durable``).

    Optuna syncs every operation: 13 for a design of ``quickstart`` (its trial, each
    parameter, its records, its end), 2 ms each while the workers keep both cores busy, in
    the driver's loop. A trial's start, parameters and records are written as Optuna writes
    them (other processes read them at once, and a killed process loses none), and reach the
    disk with the next sync: the trial's end, which syncs the whole file. A crash of the
    machine can then lose only trials that had not ended, which a resumed search fails and
    evaluates again, as it does for a search killed mid-design."""
    import json

    from optuna.storages.journal import JournalFileBackend

    from magnet.search.journal_lock import JournalLock

    class Backend(JournalFileBackend):
        held: list[dict[str, Any]] | None = None  # appends held (``holding``)

        def append_logs(self, logs: list[dict[str, Any]]) -> None:
            if self.held is not None:
                self.held.extend(logs)
                return
            # the lines as Optuna writes them (``RECORD_START``), under its lock
            text = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs)
            lock.acquire()
            try:
                with open(path, "ab") as f:
                    f.write(text.encode("utf-8"))
                    if any(_durable(log) for log in logs):
                        f.flush()
                        os.fsync(f.fileno())
            finally:
                lock.release()

        @contextlib.contextmanager
        def holding(self) -> Iterator[None]:
            """``appends_held``."""
            if self.held is not None:  # inside another: that one writes them all
                yield
                return
            self.held = []
            try:
                yield
            finally:
                held, self.held = self.held, None
                if held:
                    self.append_logs(held)

    lock = JournalLock(path)
    return Backend(path, lock_obj=lock)


def appends_held(storage: BaseStorage) -> contextlib.AbstractContextManager[None]:
    """Inside, the operations a search's journal (``open_storage(create=True)``) is told are
    written at once at the end, in their order (one lock, one write; an exception inside
    still writes them; a block inside another is written with it), not one by one; any other
    storage writes as it goes.

    For a trial's parameters, which Optuna writes one at a time (13 for a ``magnet`` design,
    each taking the journal's lock, 4 ms a design in the driver's loop): the trial's own
    parameters are read back from the trial, never from the storage, while they are
    suggested, and a trial left RUNNING without them is failed on resuming like any other.
    """
    backend = getattr(storage, "search_backend", None)
    return contextlib.nullcontext() if backend is None else backend.holding()


def _open_journal(path: str, shown: str, create: bool, keep_records: bool) -> JournalStorage:
    from optuna.storages import JournalStorage

    from magnet.search.journal_replay import ReaderJournalStorage

    try:
        backend: Any = (
            _journal_backend(path)
            if create
            else ReadOnlyJournal(path)  # Optuna's journal backend protocol, reading only
        )
        storage = JournalStorage(backend) if create else ReaderJournalStorage(backend, keep_records)
        if create:
            storage.search_backend = backend  # type: ignore[attr-defined]  # appends_held
    except Exception as exc:
        line = _corrupt_line(path)
        if line is not None:
            raise _corrupt(shown, line) from None
        raise MagnetError(
            f"cannot read the journal: {type(exc).__name__}: {exc}", source=shown, field="--storage"
        ) from None
    if create:
        _repair_journal(path, shown)
    else:
        _note_stray_end(path, shown)
    return storage


def _note_stray_end(path: str, shown: str) -> None:
    """A reader's note (``MagnetNote``) when the journal ends with a line that is not an
    Optuna record (a note a user appended): Optuna's reader skips it, a search refuses the
    journal; the file is left as it is."""
    with open(path, "rb") as f:
        start = _last_line_start(f)
        f.seek(start)
        if not _stray(f.read()):
            return
        f.seek(0)
        line = _lines_before(f, start) + 1
    warnings.warn(
        MagnetNote(
            f"{shown}: line {line} is not a journal record (a note added to the file?) and is "
            "ignored; magnet search refuses this journal until that line is removed"
        ),
        stacklevel=2,
    )


def _corrupt(shown: str, line: int) -> MagnetError:
    """Bad input: line ``line`` of the journal ``shown`` is not one of Optuna's records."""
    return MagnetError(
        f"cannot read the journal: line {line} is corrupt (not a JSON operation); the journal "
        "is left as it is: restore it from a backup, or remove that line yourself",
        source=shown,
        field="--storage",
    )


def check_journal(spec: str | None) -> None:
    """Refuse (bad input naming the line) a journal with a complete line, but its last,
    that does not begin as every line Optuna writes does (``RECORD_START``): a quick look
    at the file's shape, not a reading (a line of the right shape that is no JSON is found
    when the journal is read). A storage that is not a journal file passes."""
    path = locate(spec, create=False)
    if is_url(path):
        return
    with open(path, "rb") as f:
        last = _last_line_start(f)
        f.seek(0)
        if last == 0 or _line_starts_ok(f, last):  # the last line: torn, whole or a note
            return
        f.seek(0)
        offset = 0
        for number, line in enumerate(f, start=1):  # which line, the slow way
            if offset >= last:
                return
            if not line.startswith(RECORD_START):
                raise _corrupt(str(DEFAULT_JOURNAL if spec is None else spec), number)
            offset += len(line)


def _line_starts_ok(f: BinaryIO, last: int, block_bytes: int = 1 << 24) -> bool:
    """Whether every line of ``f`` that starts before ``last`` (the last line's start)
    starts with ``RECORD_START``: the file does, and every newline before ``last - 1`` is
    followed by it; counted a block at a time (a 334 MB journal in 0.2 s, not 0.85 s line
    by line)."""
    pattern = b"\n" + RECORD_START  # never overlaps itself: one newline, at its start
    f.seek(0)
    if not f.read(len(RECORD_START)).startswith(RECORD_START):
        return False
    f.seek(0)
    newlines = followed = 0
    carry, left = b"", last - 1
    while left > 0:
        block = f.read(min(block_bytes, left))
        left -= len(block)
        newlines += block.count(b"\n")
        joined = carry + block
        followed += joined.count(pattern)  # one across the seam starts in carry
        carry = joined[-(len(pattern) - 1) :]
    return newlines == followed


def _corrupt_line(path: str) -> int | None:
    """The number of the first complete line of the journal that is not a JSON operation
    (a torn last line is not one: Optuna reads past it)."""
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            if line.endswith(b"\n") and not _is_operation(line):
                return number
    return None


#: How every line Optuna writes to a journal begins (``JournalFileBackend.append_logs``: one
#: ``json.dumps`` of ``{"op_code": ..., "worker_id": ..., ...}`` without spaces per line).
RECORD_START = b'{"op_code":'


def _torn_record(line: bytes) -> bool:
    """Whether ``line`` (a last line without its newline) can be the start of a record Optuna
    was writing when it was stopped: a prefix of one, which begins as every record does."""
    return line.startswith(RECORD_START) or RECORD_START.startswith(line)


def _stray(last: bytes) -> bool:
    """Whether ``last``, the last line of a journal, is not Optuna's: neither a whole record
    nor (without its newline) a record being written or torn by a crash."""
    if not last:
        return False
    if last.endswith(b"\n"):
        return not _is_operation(last)
    return not (_is_operation(last) or _torn_record(last))


def _repair_journal(path: str, shown: str) -> None:
    """Make the torn last line a killed driver may leave harmless before this one appends
    (appended to, it would become a corrupt line in the middle of the journal).

    A last line without its newline that is the start of an Optuna record (``_torn_record``)
    is cut off (``os.truncate``, in place); one that is a whole record gets its newline.
    Anything else at the end of the journal (a note a user appended, with or without its
    newline) is bad input naming its line, and the journal is left as it is: magnet cuts only
    what it knows to be a torn record. Held meanwhile: the journal's append lock
    (``JournalLock``), the one every append takes, so another driver sharing the journal
    never appends in between."""
    from magnet.search.journal_lock import JournalLock

    lock = JournalLock(path)
    lock.acquire()
    try:
        with open(path, "rb+") as f:
            start = _last_line_start(f)
            f.seek(start)
            last = f.read()
            if _stray(last):
                f.seek(0)
                raise _corrupt(shown, _lines_before(f, start) + 1)
            if not last or last.endswith(b"\n"):
                return
            if _is_operation(last):
                f.write(b"\n")
            else:
                os.truncate(f.fileno(), start)
            f.flush()
            os.fsync(f.fileno())
    finally:
        lock.release()


def _lines_before(f: BinaryIO, end: int, block_bytes: int = 1 << 20) -> int:
    """How many lines of the open file ``f`` end before the offset ``end`` (read from where
    ``f`` stands)."""
    count, left = 0, end
    while left > 0:
        block = f.read(min(block_bytes, left))
        count += block.count(b"\n")
        left -= len(block)
    return count


def _last_line_start(f: BinaryIO, block_bytes: int = 1 << 16) -> int:
    """Where the last line of the open file ``f`` starts (read backwards, block by block)."""
    end = f.seek(0, os.SEEK_END)
    if end == 0:
        return 0
    pos = end - 1  # a newline ending the file ends the last line, it does not start one
    while pos > 0:
        begin = max(0, pos - block_bytes)
        f.seek(begin)
        found = f.read(pos - begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        pos = begin
    return 0


# ---- one driver per study -------------------------------------------------------------------
_PLAIN = re.compile(r"[A-Za-z0-9_.-]+")
#: Tokens of the database locks this process holds (a row with this process's id and
#: another token is a lock the process left, not one it holds).
_HELD: set[str] = set()


def _file_key(text: str, limit: int) -> str:
    """``text`` as part of a file name: itself when short and plain, otherwise a readable
    prefix and a hash (distinct texts, distinct keys; never too long a name)."""
    if len(text) <= limit and _PLAIN.fullmatch(text):
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[: limit - 17] + "-" + digest


def driver_lock_path(journal: Path, study: str) -> Path:
    """The file whose ``flock`` a driver of ``study`` holds, beside the journal's real path."""
    return journal.with_name(f"{_file_key(journal.name, 120)}.{_file_key(study, 64)}.driver.lock")


class DriverLock:
    """The one-driver-per-study rule: ``acquire`` raises ``MagnetError`` while another live
    driver holds the study, ``beat`` keeps a database lock fresh, ``release`` frees it.

    A journal: an ``flock`` of a file beside the journal's real path, one per study; the
    kernel frees it when the driver dies, however it dies. A database: a row of magnet's
    table ``magnet_driver_locks`` (study, token, host, pid, heartbeat) in the same database,
    inserted in one transaction: the primary key lets exactly one of two racing drivers in.
    A dead driver's row (its process gone on this host; its heartbeat older than
    ``STALE_SECONDS`` on another) is taken over by one compare-and-set update of its token,
    which again only one racer wins.
    """

    def __init__(self, storage_spec: str | None, study: optuna.Study):
        self.spec = storage_spec
        self.name: str = study.study_name
        self.token = uuid.uuid4().hex
        self.file: int | None = None
        self.engine: Any = None
        self.last_beat = 0.0

    def acquire(self) -> None:
        """Take the study's lock, or bad input naming the driver that holds it."""
        target = locate(self.spec, create=True)
        if is_url(target):
            self._acquire_row(target)
        else:
            self._acquire_file(Path(target))

    def _busy(self, holder: str = "") -> MagnetError:
        return MagnetError(
            f"another magnet search is running study {self.name!r}{holder} on this storage; "
            "wait for it to finish or stop it first",
            source=describe(self.spec),
        )

    def _acquire_file(self, journal: Path) -> None:
        import fcntl

        fd = os.open(driver_lock_path(journal, self.name), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise self._busy() from None
        self.file = fd

    def _acquire_row(self, url: str) -> None:
        import sqlalchemy as sa

        self.engine = sa.create_engine(url, pool_pre_ping=True)
        _HELD.add(self.token)  # before the row exists: a racing thread sees it held
        try:
            _create_lock_table(self.engine)
            self._claim_row()
        except sa.exc.SQLAlchemyError as exc:  # the server went away, no right to create
            self._drop_engine()
            raise MagnetError(
                f"cannot take the driver lock of study {self.name!r}: {storage_error(exc, url)}",
                source=describe(self.spec),
            ) from None
        except BaseException:
            self._drop_engine()
            raise
        self.last_beat = time.time()

    def _claim_row(self) -> None:
        """Insert this driver's row, or take over a dead driver's; else refuse."""
        import sqlalchemy as sa

        table = _lock_table()
        study = table.c.study_name == self.name
        for _ in range(3):  # a holder releasing meanwhile: look again
            try:
                with self.engine.begin() as db:
                    db.execute(sa.insert(table).values(study_name=self.name, **self._row()))
                return
            except sa.exc.IntegrityError:
                pass
            with self.engine.connect() as db:
                row = db.execute(sa.select(table).where(study)).mappings().first()
            if row is None:
                continue
            if _alive(row):
                raise self._busy(f" (pid {row['pid']} on {row['host']})")
            with self.engine.begin() as db:
                theirs = table.c.token == row["token"]
                taken = db.execute(sa.update(table).where(study, theirs).values(**self._row()))
            if taken.rowcount == 1:
                return
        raise self._busy()

    def _drop_engine(self) -> None:
        _HELD.discard(self.token)
        self.engine.dispose()
        self.engine = None

    def _row(self) -> dict[str, Any]:
        return {"token": self.token, "host": HOST, "pid": os.getpid(), "heartbeat": time.time()}

    def beat(self, force: bool = False) -> None:
        """Refresh a database lock's heartbeat (every ``BEAT_SECONDS``); a lock another
        driver took over (this one was silent for ``STALE_SECONDS``) stops this driver."""
        now = time.time()
        if self.engine is None or (not force and now - self.last_beat < BEAT_SECONDS):
            return
        import sqlalchemy as sa

        table = _lock_table()
        with self.engine.begin() as db:
            kept = db.execute(
                sa.update(table)
                .where(table.c.study_name == self.name, table.c.token == self.token)
                .values(heartbeat=now)
            )
        if kept.rowcount != 1:
            raise MagnetError(
                f"another driver took study {self.name!r} over (this one was silent for "
                f"more than {STALE_SECONDS:.0f} s); stopping",
                source=describe(self.spec),
            )
        self.last_beat = now

    def release(self) -> None:
        """Let go of the lock (idempotent)."""
        if self.file is not None:
            os.close(self.file)
            self.file = None
        if self.engine is None:
            return
        import sqlalchemy as sa

        table = _lock_table()
        try:
            with self.engine.begin() as db:
                db.execute(
                    sa.delete(table).where(
                        table.c.study_name == self.name, table.c.token == self.token
                    )
                )
        except sa.exc.SQLAlchemyError:
            pass  # the database is gone: the row goes stale and is taken over
        finally:
            self._drop_engine()


@cache
def _lock_table() -> Any:
    import sqlalchemy as sa

    return sa.Table(
        "magnet_driver_locks",
        sa.MetaData(),
        sa.Column("study_name", sa.String(512), primary_key=True),
        sa.Column("token", sa.String(32), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("heartbeat", sa.Float, nullable=False),
    )


def _create_lock_table(engine: Any) -> None:
    """The lock table, created if absent (two drivers creating it at once: one wins)."""
    import sqlalchemy as sa

    table = _lock_table()
    try:
        table.create(engine, checkfirst=True)
    except sa.exc.SQLAlchemyError:
        if not sa.inspect(engine).has_table(table.name):
            raise


def _alive(row: Any) -> bool:
    """Whether the driver of a lock row lives: its process, on this host; its heartbeat,
    on another."""
    if row["host"] != HOST:
        return time.time() - float(row["heartbeat"]) < STALE_SECONDS
    if row["pid"] == os.getpid():
        return row["token"] in _HELD
    try:
        os.kill(int(row["pid"]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
