"""The journal's append lock (see ``JournalLock``); a module of its own because it subclasses
Optuna's lock class, and ``magnet.search.storage`` imports Optuna only when it opens a
storage."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
import uuid

from optuna.storages.journal import JournalFileOpenLock

from magnet.search.storage import HOST


class JournalLock(JournalFileOpenLock):
    """The lock a journal append holds: Optuna's ``JOURNAL.lock`` file, taken by creating it
    exclusively as Optuna's ``JournalFileOpenLock`` does (so a plain Optuna process sharing
    the journal is still excluded), with one difference. Optuna breaks a lock only after
    waiting out a 30 s grace period, so a search resumed after its driver was killed while
    appending waited 30 s. magnet's lock file is born holding an ``flock`` of its holder
    (made and locked under a temporary name, then linked into place) and names the holder;
    the kernel drops the ``flock`` when the holder dies, so a waiter breaks a dead holder's
    lock at once. A lock file that is not magnet's (empty: plain Optuna's) keeps Optuna's
    grace period. Breaking happens under the dead file's own ``flock``, after checking the
    lock's path still names that file, so two waiters never break a live lock."""

    #: What a magnet lock file starts with (then the holder's pid and host).
    MARK = b"magnet "

    def __init__(self, journal: str):
        super().__init__(journal)  # Optuna's grace period (30 s) for locks not magnet's
        self.path = journal + ".lock"  # the file Optuna's lock takes
        self.fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock, waiting while a live holder has it (Optuna's lock protocol)."""
        sleep_s, seen_mtime, since = 0.001, None, time.monotonic()
        while not self._create():
            mtime = self._break_or_mtime()
            if mtime is None:  # broken (or released meanwhile): try again at once
                continue
            if mtime != seen_mtime:
                seen_mtime, since = mtime, time.monotonic()
            elif time.monotonic() - since > (self.grace_period or float("inf")):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
                continue
            time.sleep(sleep_s)
            sleep_s = min(sleep_s * 2, 0.1)
        return True

    def release(self) -> None:
        """Free the lock: the path first, then the ``flock`` (never a window to break it)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _create(self) -> bool:
        temporary = f"{self.path}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, self.MARK + f"{os.getpid()} {HOST}\n".encode())
            os.link(temporary, self.path)
        except FileExistsError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        finally:
            os.unlink(temporary)
        self.fd = fd
        return True

    def _break_or_mtime(self) -> float | None:
        """Break the lock if its holder is a dead magnet process and give None; None also
        when it was released meanwhile; else its modification time (for the grace period)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            if os.read(fd, len(self.MARK)) != self.MARK:  # plain Optuna's
                return os.fstat(fd).st_mtime
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its holder is alive
                return os.fstat(fd).st_mtime
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == os.fstat(fd).st_ino:
                    os.unlink(self.path)  # its holder died holding it
            return None
        finally:
            os.close(fd)
