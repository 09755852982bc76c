"""The look every figure of the dashboard and the reports shares: colours, the plotly
template, number and label formatting (every string from a study HTML-escaped: plotly renders
a subset of HTML in labels and hover text), notes, empty figures, the linear/log scale menu,
and figures as plain JSON.

Only ``plotly.graph_objects`` (and ``plotly.subplots``): no plotly.express, no pandas.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from magnet.search.design_space import METRICS
from magnet.search.study import Study

if TYPE_CHECKING:
    pass


#: Colours of dataflows, studies and designs (plotly's default qualitative palette).
PALETTE = (
    "#636efa",
    "#ef553b",
    "#00cc96",
    "#ab63fa",
    "#ffa15a",
    "#19d3f3",
    "#ff6692",
    "#b6e880",
    "#ff97ff",
    "#fecb52",
)


CATEGORY_COLORS = {
    "math": "#636efa",
    "postprocess": "#b6e880",
    "memory": "#00cc96",
    "noc": "#ffa15a",
    "nop": "#ff6692",
    "clock": "#19d3f3",
    "control": "#fecb52",
    "dram": "#ef553b",
    "static": "#ab63fa",
}


OPERAND_COLORS = {"weights": "#636efa", "inputs": "#00cc96", "outputs": "#ef553b"}


INFEASIBLE_COLOR = "#7f7f7f"


#: A legend under the plot (the plot keeps its width).
LEGEND_BELOW = {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0, "xanchor": "left"}


def esc(text: Any) -> str:
    """``text`` as plotly shows it literally (plotly reads <, > and & as markup)."""
    return html.escape(str(text), quote=False)


def fmt(value: Any) -> str:
    """A value as figures and tables print it: whole numbers with separators, others to 4
    significant digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def metric_title(metric: str) -> str:
    """A metric's axis title: its name and what it is (``METRICS``), escaped."""
    described = METRICS.get(metric)
    return esc(metric if described is None else f"{metric}: {described}")


_AXIS = {
    "gridcolor": "#e8e8e8",
    "zerolinecolor": "#cccccc",
    "linecolor": "#999999",
    "automargin": True,
}


#: The look of every figure (a plotly template: it reaches every axis of subplots too).
TEMPLATE = {
    "layout": {
        "font": {"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12},
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "hoverlabel": {"align": "left"},
        "legend": {"bgcolor": "rgba(255,255,255,0.7)"},
        "colorway": list(PALETTE),
        "xaxis": _AXIS,
        "yaxis": _AXIS,
    }
}


@cache
def _template() -> go.layout.Template:
    return go.layout.Template(TEMPLATE)  # validated once, not per figure


def _layout(fig: go.Figure, title: str | None = None, **extra: Any) -> go.Figure:
    fig.update_layout(
        template=_template(),
        title=None if title is None else {"text": title, "x": 0.01, "xanchor": "left"},
        margin={"l": 70, "r": 20, "t": 50 if title else 20, "b": 60},
        **extra,
    )
    return fig


def _grey_text(fig: go.Figure, text: str, size: int, **place: Any) -> None:
    """``text`` on ``fig`` in grey at ``place`` (paper coordinates)."""
    fig.add_annotation(
        text=text,
        showarrow=False,
        xref="paper",
        yref="paper",
        font={"size": size, "color": "#666666"},
        **place,
    )


def _message(fig: go.Figure, text: str) -> go.Figure:
    _grey_text(fig, text, 14, x=0.5, y=0.5)
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def empty(text: str, title: str | None = None) -> go.Figure:
    """A figure that only says ``text`` (escaped)."""
    return _message(_layout(go.Figure(), title), esc(text))


# ---- studies -----------------------------------------------------------------------------------
#: The built-in dataflows' colours: the same in every study, page and report.
DATAFLOW_COLORS = {
    flow: PALETTE[i]
    for i, flow in enumerate(("free", "ws", "os", "is", "rs", "os-local-ws", "ws-local-os"))
}


def dataflow_color(flow: str) -> str:
    """The colour of dataflow ``flow``: fixed for the built-in ones, from the name's hash
    for others (so a dataflow keeps its colour whatever else a study holds)."""
    known = DATAFLOW_COLORS.get(flow)
    if known is not None:
        return known
    digest = hashlib.sha256(flow.encode()).digest()
    return PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)]


def dataflow_colors(study: Study) -> dict[str, str]:
    """The colour of every dataflow of ``study`` (see ``dataflow_color``)."""
    flows = set(study.space.dataflows()) | study.dataflows_run
    return {f: dataflow_color(f) for f in sorted(flows)}


def note(fig: go.Figure, lines: Iterable[str | None]) -> None:
    """The figure's notes (those not None) at its top right, small and grey."""
    text = "; ".join(line for line in lines if line)
    if text:
        _grey_text(fig, text, 11, x=1, y=1.02, xanchor="right", yanchor="bottom")


def _axis_type(values: Iterable[float] | np.ndarray) -> str:
    """``log`` when there are values and all are positive, else ``linear``."""
    given = values if isinstance(values, np.ndarray) else np.fromiter(values, float)
    return "log" if given.size and bool((given > 0).all()) else "linear"


# ---- designs -----------------------------------------------------------------------------------
#: The subtitles of an energy breakdown on each axis of its linear / log buttons.
STACKED_NOTE = "stacked, linear axis; log: parts side by side"


LOG_NOTE = "log: parts side by side (stacks misdraw on a log axis)"


#: The same of a breakdown already drawn side by side.
GROUPED_NOTES = ("side by side, linear axis", "side by side, log axis")


def subtitled(title: str, note: str) -> str:
    """A figure title with a smaller second line (escape both first)."""
    return f"{title}<br><sup>{note}</sup>"


def scale_menu(
    title: str, axes: Sequence[str] = ("yaxis",), stacked: bool = True
) -> dict[str, Any]:
    """A linear / log button pair for ``axes`` (a plotly ``updatemenus`` entry: plotly.js
    draws and runs it, in the dashboard and in an offline report alike).

    Plotly stacks bars in data space, so a stack on a log axis keeps its total but draws its
    parts out of proportion (the bottom one swallows the rest). A ``stacked`` figure therefore
    turns into grouped bars on the log axis, one per part, and its subtitle says so; the hover
    of each part keeps its share of the whole.
    """
    notes = scale_notes(stacked)

    def args(kind: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for axis in axes:
            out[f"{axis}.type"] = kind
            out[f"{axis}.autorange"] = True  # the range of the other scale would not fit
        if stacked:
            out["barmode"] = "stack" if kind == "linear" else "group"
        out["title.text"] = subtitled(title, notes[kind == "log"])
        return out

    return {
        "type": "buttons",
        "direction": "right",
        "active": 0,
        "showactive": True,
        "x": 1.0,
        "xanchor": "right",
        "y": 1.02,
        "yanchor": "bottom",
        "pad": {"t": 0, "r": 0, "b": 0, "l": 0},
        "font": {"size": 11},
        "name": "scale",
        "buttons": [
            {"label": "linear", "method": "relayout", "args": [args("linear")]},
            {"label": "log", "method": "relayout", "args": [args("log")]},
        ],
    }


def scale_notes(stacked: bool) -> tuple[str, str]:
    """The subtitles of a breakdown on the linear and on the log axis."""
    return (STACKED_NOTE, LOG_NOTE) if stacked else GROUPED_NOTES


def _with_scale(fig: go.Figure, title: str, stacked: bool = True) -> go.Figure:
    """``fig`` titled ``title`` with its linear / log buttons (linear first)."""
    fig.update_layout(
        title={"text": subtitled(title, scale_notes(stacked)[0]), "x": 0.01, "xanchor": "left"},
        updatemenus=[scale_menu(title, stacked=stacked)],
        margin={"t": 80},
    )
    return fig


def figure_json(fig: go.Figure) -> dict[str, Any]:
    """The figure as plain JSON data: arrays as lists (plotly writes numpy arrays as base64
    typed arrays; pages, tests and the API read lists), NaN as null."""
    import json

    from plotly.utils import PlotlyJSONEncoder

    data: dict[str, Any] = json.loads(
        json.dumps(_plain(fig.to_plotly_json()), cls=PlotlyJSONEncoder)
    )
    return data


def _plain(data: Any) -> Any:
    """``data`` with plotly's typed arrays (``{"dtype", "bdata"[, "shape"]}``) as lists."""
    if isinstance(data, dict):
        if "bdata" in data and "dtype" in data:
            import base64

            array = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
            if "shape" in data:
                array = array.reshape([int(n) for n in str(data["shape"]).split(",")])
            return array.tolist()
        return {k: _plain(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_plain(v) for v in data]
    return data
