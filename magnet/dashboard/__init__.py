"""The web dashboard: ``magnet dashboard`` serves a storage's studies, live and read-only.

    magnet dashboard --storage magnet-results/magnet.journal   # http://127.0.0.1:8050

See ``app.py`` for the pages, the JSON API and what the server refuses to do.
"""

from __future__ import annotations

import errno
import gc
import socket
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


def serve(
    storage: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8050,
    poll_seconds: float = 3.0,
    log: Callable[[str], None] = print,
) -> None:
    """Serve the dashboard until interrupted. The storage is opened (read-only) and the port
    taken before anything is printed: a storage that cannot be read or a port in use is a
    ``MagnetError`` and no URL is shown."""
    import uvicorn

    app = create_app(storage, host=host, poll_seconds=poll_seconds)
    sock = listen(host, port)
    try:
        log(f"reading {app.state.dashboard.store.label} ...")
        app.state.dashboard.warm()  # a storage that cannot be read is refused here
    except BaseException:
        sock.close()
        raise
    # what was read stays for the server's life: the collector need not walk it again and
    # again (a full collection over a 17,000-trial study took requests past 300 ms)
    gc.freeze()
    shown = f"[{host}]" if ":" in host else host
    log(f"magnet dashboard: http://{shown}:{port}/ (storage {app.state.dashboard.store.label})")
    if host not in ("127.0.0.1", "localhost", "::1"):
        log(f"note: listening on {host}: whoever reaches this machine can read these studies")
    log("read-only; press Ctrl-C to stop")
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` and listening (``MagnetError`` naming the port when it
    is in use or cannot be had)."""
    from magnet.errors import MagnetError

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
    except OSError as exc:
        raise MagnetError(
            f"cannot listen on {host}: {exc.strerror or exc}", field="--host"
        ) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        why = (
            "is in use (another dashboard or server?); give another with --port"
            if exc.errno == errno.EADDRINUSE
            else f"cannot be used: {exc.strerror or exc}"
        )
        raise MagnetError(f"port {port} on {host} {why}", field="--port") from None
    return sock


__all__ = ["create_app", "serve"]
