"""Reports: text tables for the terminal (``text``), plotly figures (``figures``; the
figures for exploring one study, history to timeline, in ``explore``) and self-contained
HTML reports of studies (``html``: ``write_report``).

``write_report`` is imported on first use, so the terminal commands do not load plotly.
"""

from __future__ import annotations

from typing import Any

__all__ = ["write_report"]


def __getattr__(name: str) -> Any:
    if name == "write_report":
        from magnet.report.html import write_report

        return write_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
