"""Where studies live: an Optuna Journal file by default, any Optuna storage URL otherwise.

``--storage`` takes a path (a Journal file; default ``magnet-results/magnet.journal``) or a URL
with a scheme (``sqlite:///studies.db``, ``postgresql://user@host/db``). One driver writes a
study at a time: ``DriverLock`` holds an OS lock beside a Journal file and records the driver
(host, process, heartbeat) in the study, so a second driver is refused while the first lives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import time
from pathlib import Path
from typing import Any

from magnet.errors import MagnetError

DEFAULT_DIR = Path("magnet-results")
DEFAULT_JOURNAL = DEFAULT_DIR / "magnet.journal"
#: A driver whose heartbeat is older than this is taken for dead (another host's driver).
STALE_SECONDS = 120.0


def is_url(spec: str) -> bool:
    return "://" in spec


def describe(spec: str | None) -> str:
    return str(DEFAULT_JOURNAL) if spec is None else spec


def open_storage(spec: str | None, *, create: bool) -> Any:
    """The Optuna storage ``spec`` names; ``create=False`` refuses a missing Journal file
    (a reader must not create an empty study file by mistake)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if spec is not None and is_url(spec):
        try:
            return optuna.storages.RDBStorage(spec)
        except Exception as exc:  # driver missing, server down, bad URL: one clear line
            raise MagnetError(
                f"cannot open the storage: {type(exc).__name__}: {str(exc).splitlines()[0]}",
                source=spec,
                field="--storage",
            ) from None
    path = DEFAULT_JOURNAL if spec is None else Path(spec)
    if path.is_dir():
        raise MagnetError(
            "is a directory; give a journal file or a storage URL",
            source=str(path),
            field="--storage",
        )
    if not path.exists():
        if not create:
            raise MagnetError(
                "no such study storage (run a search first, or give --storage)",
                source=str(path),
                field="--storage",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
    elif create:
        _repair_journal(path)
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    try:
        return JournalStorage(
            JournalFileBackend(str(path), lock_obj=JournalFileOpenLock(str(path)))
        )
    except Exception as exc:
        raise MagnetError(
            f"cannot read the journal: {type(exc).__name__}: {exc}",
            source=str(path),
            field="--storage",
        ) from None


def _repair_journal(path: Path) -> None:
    """Drop lines a crash left undecodable (a torn last line would poison the next append)."""
    raw = path.read_bytes()
    if not raw:
        return
    lines = raw.split(b"\n")
    good = []
    for line in lines:
        if not line:
            continue
        try:
            json.loads(line)
        except ValueError:
            continue
        good.append(line)
    fixed = b"\n".join(good) + b"\n"
    if fixed != raw:
        tmp = path.with_suffix(path.suffix + ".repair")
        tmp.write_bytes(fixed)
        os.replace(tmp, path)


class DriverLock:
    """The one-driver-per-study rule (see the module docstring)."""

    ATTR = "magnet_driver"

    def __init__(self, storage_spec: str | None, study: Any):
        self.study = study
        self.spec = storage_spec
        self.file = None
        self.last_beat = 0.0

    def acquire(self) -> None:
        if self.spec is None or not is_url(self.spec):
            import fcntl

            path = Path(describe(self.spec))
            name = self.study.study_name
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            if safe != name:  # a name with '/' or other characters: keep lock files distinct
                safe += "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
            lock = path.with_name(f"{path.name}.{safe}.driver.lock")
            self.file = open(lock, "w")  # noqa: SIM115 (held open for the whole search)
            try:
                fcntl.flock(self.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                self.file.close()
                self.file = None
                raise MagnetError(
                    f"another magnet search is running study {name!r} on "
                    "this storage; wait for it to finish or stop it first",
                    source=str(path),
                ) from None
            # Optuna's own lock, left by a kill
            path.with_name(f"{path.name}.lock").unlink(missing_ok=True)
        else:
            other = self.study.user_attrs.get(self.ATTR)
            if other and _alive(other):
                raise MagnetError(
                    f"another magnet search (pid {other['pid']} on {other['host']}) is running "
                    f"study {self.study.study_name!r}; wait for it or stop it first",
                    source=self.spec,
                )
        self.beat(force=True)

    def beat(self, force: bool = False) -> None:
        now = time.time()
        if force or now - self.last_beat > 30:
            self.study.set_user_attr(
                self.ATTR, {"host": socket.gethostname(), "pid": os.getpid(), "time": now}
            )
            self.last_beat = now

    def release(self) -> None:
        try:
            self.study.set_user_attr(self.ATTR, None)
        finally:
            if self.file is not None:
                self.file.close()
                self.file = None


def _alive(driver: dict[str, Any]) -> bool:
    if driver.get("host") == socket.gethostname():
        try:
            os.kill(int(driver["pid"]), 0)
        except (OSError, ValueError, KeyError):
            return False
        return int(driver["pid"]) != os.getpid()
    return time.time() - float(driver.get("time", 0)) < STALE_SECONDS
