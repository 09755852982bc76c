"""The web dashboard: ``magnet dashboard`` serves a storage's studies, live and read-only.

    magnet dashboard --storage magnet-results/magnet.journal   # http://127.0.0.1:8050

See ``app.py`` for the pages, the JSON API and what the server refuses to do.
"""

from __future__ import annotations

from typing import Any


def create_app(
    storage: str | None = None, host: str = "127.0.0.1", poll_seconds: float = 3.0
) -> Any:
    """The Starlette app of the dashboard over ``storage`` (None: the default Journal)."""
    from magnet.dashboard.app import create_app as make

    return make(storage, host=host, poll_seconds=poll_seconds)


def serve(
    storage: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8050,
    poll_seconds: float = 3.0,
    log: Any = print,
) -> None:
    """Serve the dashboard until interrupted."""
    import uvicorn

    app = create_app(storage, host=host, poll_seconds=poll_seconds)
    shown = f"[{host}]" if ":" in host else host
    log(f"magnet dashboard: http://{shown}:{port}/ (storage {app.state.dashboard.store.label})")
    if host not in ("127.0.0.1", "localhost", "::1"):
        log(f"note: listening on {host}: whoever reaches this machine can read these studies")
    log("read-only; press Ctrl-C to stop")
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


__all__ = ["create_app", "serve"]
