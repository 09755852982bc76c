"""The web dashboard: ``magnet dashboard`` serves a storage's studies, live and read-only.

    magnet dashboard --storage magnet-results/magnet.journal   # http://127.0.0.1:8050

See ``app.py`` for the pages, the JSON API and what the server refuses to do.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import socket
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.applications import Starlette


def create_app(
    storage: str | None = None, host: str = "127.0.0.1", poll_seconds: float = 3.0
) -> Starlette:
    """The Starlette app of the dashboard over ``storage`` (None: the default Journal)."""
    from magnet.dashboard.app import create_app as make

    return make(storage, host=host, poll_seconds=poll_seconds)


#: How long the dashboard waits for its storage to be read before it serves anyway (the
#: pages then say that it is being read).
READ_WAIT_SECONDS = 1.0


def serve(
    storage: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8050,
    poll_seconds: float = 3.0,
    log: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard until interrupted. The port is taken and the storage opened
    (read-only) before anything is printed: a port or host that cannot be had, a storage that
    is none (a folder, a device, a file that is not a journal: ``check_journal`` looks at
    each line's start) or cannot be reached (a database server that refuses the connection)
    is a ``MagnetError``. No URL is shown then, and the refusal is the one line printed. The
    studies are then read while the server answers (``Dashboard.read_all``)."""
    import threading

    import uvicorn

    from magnet.dashboard.app import LOOPBACK
    from magnet.search.storage import check_journal

    app = create_app(storage, host=host, poll_seconds=poll_seconds)
    dashboard = app.state.dashboard
    store = dashboard.store
    sock = listen(host, port)
    try:
        store.open()
    except BaseException:
        sock.close()
        raise
    # the studies are read while the server already answers (a page asked meanwhile says
    # so and comes back: ``Dashboard.reading``). The reader first looks at the journal's
    # shape (``check_journal``: a 334 MB journal in 0.2-0.4 s), which is awaited whatever
    # it takes: a file that is no journal is always refused before the URL; the wait for
    # the rest shares READ_WAIT_SECONDS with it. A storage read within READ_WAIT_SECONDS
    # is served read, or refused if it turned out damaged; one found damaged later is an
    # error page, as one damaged while served
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    # the server's imports made before the reading starts, and the GIL handed over every
    # 0.5 ms while it reads (not 5): each system call of a thread answering a request waited
    # for the reader to let go of it (the first answer 2-4.5 s after the start, now 2 s)
    config.load()
    _preload()
    checked = threading.Event()
    refused: list[BaseException] = []

    def read() -> None:
        try:  # a file that is no journal is refused before the URL (within the wait)
            check_journal(storage)
        except BaseException as exc:
            refused.append(exc)
            return
        finally:
            checked.set()
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, 0.0005))
        try:
            dashboard.read_all()
        finally:
            sys.setswitchinterval(switch)

    reader = threading.Thread(target=read, name="magnet-read", daemon=True)
    started = time.monotonic()
    reader.start()
    checked.wait()
    if refused:
        sock.close()
        raise refused[0]
    reader.join(max(0.0, READ_WAIT_SECONDS - (time.monotonic() - started)))
    if dashboard.read_error is not None:
        sock.close()
        raise dashboard.read_error
    if reader.is_alive():
        log(f"reading {store.label} ... (its pages say so until it is read)")
    bare = _address(host)
    shown = f"[{bare}]" if ":" in bare else bare
    log(f"magnet dashboard: http://{shown}:{port}/ (storage {store.label})")
    if host not in LOOPBACK:
        log(f"note: listening on {host}: whoever reaches this machine can read these studies")
    log("read-only; press Ctrl-C to stop")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        # stopped while the reader is still at work: the interpreter's last collection
        # would walk the objects read so far (not yet frozen: ``Dashboard.read_all``), 2 s of
        # a 334 MB journal's before the process ends; frozen, it skips them
        gc.freeze()


#: Modules the server imports on its start and its first answers (uvicorn's event loop,
#: anyio's asyncio backend, plotly's JSON encoder): imported before the reading starts.
#: While the reader holds the GIL, each system call of an import waits up to a switch
#: interval for it back: imported then, they delayed the first answer of a 334 MB journal's
#: dashboard by 0.4-1.6 s (2.3-4.4 s after the start; 1.7-2.1 s imported before). Other
#: libraries' module names: one that no longer exists costs time, never an error.
PRELOAD = (
    "uvicorn.loops.auto",
    "uvicorn.loops.asyncio",
    "anyio._backends._asyncio",
    "plotly.utils",
)


def _preload() -> None:
    """Import ``PRELOAD`` (a name that is missing is skipped)."""
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _address(host: str) -> str:
    """``--host`` without the brackets of an IPv6 address written as in a URL (``[::1]``)."""
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (``MagnetError`` naming ``--host`` when
    it is no address of this machine, ``--port`` when the port is in use or cannot be had)."""
    from magnet.errors import MagnetError

    address = _address(host)
    shown = repr(host if len(host) <= 80 else host[:80] + "...")
    not_here = "give an address of this machine (127.0.0.1, ::1, 0.0.0.0 for every one)"
    try:
        family = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except UnicodeError:  # from the IDNA codec
        raise MagnetError(
            f"cannot listen on {shown}: not a host name (each part between dots has 1 to 63 "
            f"characters); {not_here}",
            field="--host",
        ) from None
    except OSError as exc:
        raise MagnetError(
            f"cannot listen on {shown}: not a host name or address ({exc.strerror or exc}); "
            + not_here,
            field="--host",
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRNOTAVAIL:
            raise MagnetError(
                f"cannot listen on {shown}: not an address of this machine; {not_here}",
                field="--host",
            ) from None
        why = {
            errno.EADDRINUSE: "is in use (another dashboard or server?); give another with --port",
            errno.EACCES: "needs privileges this user does not have; give one above 1023",
        }.get(exc.errno or 0, f"cannot be used: {exc.strerror or exc}")
        raise MagnetError(f"port {port} on {host} {why}", field="--port") from None
    return sock


__all__ = ["create_app", "serve"]
