"""Figures for exploring one study, the ones architects reach for in optuna-dashboard, drawn
from magnet's own records: the history of an objective, slices, a contour of two
parameters, the distribution of each objective, and the trials over time by worker.

The conventions of ``figures.py`` hold: only ``plotly.graph_objects``; every study string
escaped (``esc``); every point of a trial carries its trial number in ``customdata`` (a
click opens the design); a heatmap cell carries the number of the best trial in it. Each
figure sets ``uirevision`` (its kind and what it shows), so a live update keeps the zoom.
Trace roles (``meta``): ``feasible`` (feasible trials), ``infeasible`` (infeasible trials
that have values, faded, with their reason), ``best`` (best so far), ``cells`` (a
heatmap), ``ecdf``, ``front`` (the study's Pareto front), and in the timeline the status.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from magnet.report.study_figures import (
    _groups,
    _param_order,
    hover,
    infeasible_with,
    on_front,
    ranks,
    sample,
    sample_infeasible,
    sample_note,
    sample_off_front,
    step_at,
)
from magnet.report.theme import (
    INFEASIBLE_COLOR,
    LEGEND_BELOW,
    PALETTE,
    _axis_type,
    _layout,
    dataflow_colors,
    empty,
    esc,
    fmt,
    metric_title,
    note,
)
from magnet.search.study import Study, TrialView

#: Colours of the trial statuses in the timeline.
STATUS_COLORS = {
    "ok": PALETTE[2],
    "infeasible": INFEASIBLE_COLOR,
    "failed": PALETTE[1],
    "dominated": PALETTE[5],
    "repeat": PALETTE[3],
    "running": PALETTE[4],
}
#: The timeline's lane of trials that do not say which process ran them (older studies).
UNKNOWN_WORKER = "unknown"
#: Distinct values of a float parameter beyond which the contour bins it, and into how many.
MAX_FLOAT_CELLS = 12
FLOAT_BINS = 8
#: Subplots per row (slices, ECDF).
COLUMNS = 3


# ---- shared --------------------------------------------------------------------------------
def varied_params(study: Study) -> list[str]:
    """The parameters the study's space varies (its ranges, and ``dataflow`` when it has
    several), in the space's order: the panels of ``slices``, the axes ``contour`` takes."""
    names = list(study.space.ranges())
    if len(study.space.dataflows()) > 1:
        names.append("dataflow")
    return sorted(names, key=_param_order(study))


def _direction(study: Study, objective: str) -> str | None:
    """The direction of ``objective``, None when the study has no such objective."""
    if objective not in study.objectives:
        return None
    return study.directions[study.objectives.index(objective)]


def _not_objective(study: Study, objective: str) -> str:
    return f"{objective!r} is not an objective of this study ({', '.join(study.objectives)})"


def _empty(revision: str, text: str, title: str | None = None) -> go.Figure:
    """``empty(text, title)`` with the figure's ``uirevision``."""
    return empty(text, title).update_layout(uirevision=revision)


def _numeric(values: Sequence[Any]) -> bool:
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)


def _spans_decade(values: Sequence[float]) -> bool:
    return bool(values) and min(values) > 0 and max(values) / min(values) > 10


def _order(study: Study, param: str, values: Sequence[Any]) -> list[Any]:
    """The distinct ``values`` of ``param``: numbers ascending, others in the space's order
    (then the rest by name)."""
    distinct = list(dict.fromkeys(values))
    if _numeric(distinct):
        return sorted(distinct)
    known: Sequence[Any]
    if param == "dataflow":
        known = study.space.dataflows()
    else:
        r = study.space.ranges().get(param)
        known = (r.values() or []) if r is not None else []
    first = [v for v in known if v in distinct]
    return first + sorted((v for v in distinct if v not in first), key=str)


def _reason(t: TrialView) -> list[str]:
    return [f"<i>infeasible: {esc(t.reason or 'unknown')}</i>"]


# ---- 1. history ----------------------------------------------------------------------------
def history(study: Study, objective: str | None = None) -> go.Figure:
    """The optimisation history of ``objective`` (default: the first): each feasible trial's
    value by trial number (one colour per dataflow), the best so far as a step line (by the
    objective's direction), the infeasible trials that have values faded; log y axis when
    the values are positive."""
    objective = objective or study.objectives[0]
    revision = f"history:{objective}"
    direction = _direction(study, objective)
    if direction is None:
        return _empty(revision, _not_objective(study, objective), "History")
    title = f"History of {esc(objective)}: {esc(study.name)}"
    feasible = study.feasible_with([objective])
    if not feasible:
        return _empty(revision, "no feasible design yet", title)
    infeasible = infeasible_with(study, [objective])
    fig = _layout(go.Figure(), title, uirevision=revision)
    drawn, sampled = sample_off_front(study, feasible, study.value_columns([objective])[0])
    crosses = sample_infeasible(infeasible)
    if infeasible:
        fig.add_trace(_infeasible_by_number(study, crosses, objective))
    for trace in _feasible_by_number(study, drawn, objective):
        fig.add_trace(trace)
    fig.add_trace(_best_so_far(feasible, objective, direction))
    note(
        fig,
        [
            sampled,
            sample_note(len(crosses), len(infeasible), "infeasible designs"),
        ],
    )
    shown = [t.values[objective] for t in drawn + crosses]
    fig.update_xaxes(title="trial")
    fig.update_yaxes(title=metric_title(objective), type=_axis_type(shown))
    fig.update_layout(hovermode="closest", clickmode="event", legend=LEGEND_BELOW)
    return fig


def _infeasible_by_number(study: Study, trials: list[TrialView], objective: str) -> go.Scatter:
    """The infeasible trials that have values: faded crosses by trial number, with why."""
    return go.Scatter(
        x=[t.number for t in trials],
        y=[t.values[objective] for t in trials],
        customdata=[t.number for t in trials],
        hovertext=[hover(study, t, _reason(t)) for t in trials],
        hovertemplate="%{hovertext}<extra></extra>",
        mode="markers",
        name="infeasible",
        marker={"color": INFEASIBLE_COLOR, "symbol": "x", "size": 7, "opacity": 0.4},
        meta="infeasible",
    )


def _feasible_by_number(study: Study, trials: list[TrialView], objective: str) -> list[go.Scatter]:
    """The feasible trials by trial number, one trace (colour) per dataflow."""
    colors = dataflow_colors(study)
    return [
        go.Scatter(
            x=[t.number for t in group],
            y=[t.values[objective] for t in group],
            customdata=[t.number for t in group],
            hovertext=[hover(study, t) for t in group],
            hovertemplate="%{hovertext}<extra></extra>",
            mode="markers",
            name=esc(flow),
            marker={"color": colors.get(flow, "#333333"), "size": 8},
            meta="feasible",
        )
        for flow, group in _groups(trials).items()
    ]


def _best_so_far(trials: list[TrialView], objective: str, direction: str) -> go.Scatter:
    """The best value after each feasible trial (ties: the earlier trial holds it), as a
    step line whose points name the trial that holds the best."""
    ordered = sorted(trials, key=lambda t: t.number)
    n = len(ordered)
    sign = 1.0 if direction == "minimize" else -1.0
    values = sign * np.fromiter((t.values[objective] for t in ordered), float, n)
    # after each feasible trial, the one holding the best so far: the last that beat every
    # trial before it (a tie leaves the earlier one holding it)
    before = np.minimum.accumulate(np.concatenate([[np.inf], values[:-1]]))
    holder = np.maximum.accumulate(np.where(values < before, np.arange(n), 0))
    # a long history: the steps only (where the best changes, and the last trial)
    points = [(ordered[int(i)].number, ordered[int(holder[i])]) for i in step_at(holder)]
    return go.Scatter(
        x=[n for n, _ in points],
        y=[b.values[objective] for _, b in points],
        customdata=[b.number for _, b in points],  # the trial that holds the best
        hovertemplate=f"best {esc(objective)} after trial #%{{x}}: %{{y:.4g}} "
        "(trial #%{customdata})<extra></extra>",
        mode="lines",
        line={"shape": "hv", "color": "#444444", "width": 2},
        name=f"best so far ({'lowest' if direction == 'minimize' else 'highest'})",
        meta="best",
    )


# ---- 2. slices -----------------------------------------------------------------------------
def _panels(fig: go.Figure, rows: int, row_px: int) -> go.Figure:
    """The layout of a figure of ``rows`` rows of panels whose points open their design."""
    fig.update_layout(
        hovermode="closest",
        clickmode="event",
        legend=LEGEND_BELOW,
        height=max(350, row_px * rows + 80),
        margin={"t": 90},
    )
    return fig


def _grid(count: int) -> tuple[int, int]:
    """(rows, columns) of a grid of ``count`` panels, at most ``COLUMNS`` wide."""
    cols = min(count, COLUMNS)
    return math.ceil(count / cols), cols


def slices(study: Study, objective: str | None = None) -> go.Figure:
    """The objective against each varied parameter, one panel per parameter, the feasible
    trials as markers coloured by dataflow (the colours of every other figure; the history
    shows the order of the trials). Categorical parameters (``dataflow``, string choices)
    on category axes; numeric ones on log axes when their values are positive and span
    more than a decade."""
    objective = objective or study.objectives[0]
    revision = f"slices:{objective}"
    direction = _direction(study, objective)
    if direction is None:
        return _empty(revision, _not_objective(study, objective), "Slices")
    title = f"{esc(objective)} against each parameter: {esc(study.name)}"
    params = varied_params(study)
    if not params:
        return _empty(revision, "the space varies no parameter", title)
    numbers, _ = study.value_columns([objective])
    feasible, sampled = sample_off_front(study, study.feasible_with([objective]), numbers)
    if not feasible:
        return _empty(revision, "no feasible design yet", title)
    rows, cols = _grid(len(params))
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[esc(p) for p in params],
        shared_yaxes=True,
        horizontal_spacing=0.04,
        vertical_spacing=min(0.25, 0.6 / rows),
    )
    _layout(fig, title, uirevision=revision)
    for i, param in enumerate(params):
        row, col = i // cols + 1, i % cols + 1
        trials = [t for t in feasible if param in t.params]
        for trace in _slice(study, param, trials, objective, first=i == 0):
            fig.add_trace(trace, row=row, col=col)
        values = [t.params[param] for t in trials]
        fig.update_xaxes(row=row, col=col, **_slice_axis(study, param, values))
    shown = [t.values[objective] for t in feasible]
    fig.update_yaxes(type=_axis_type(shown))
    fig.update_yaxes(title=metric_title(objective), row=(rows + 1) // 2, col=1)
    note(fig, [sampled])
    return _panels(fig, rows, 300)


def _slice(
    study: Study, param: str, trials: list[TrialView], objective: str, first: bool
) -> list[go.Scatter]:
    """One panel of ``slices``: the trials' objective against ``param``, a trace per
    dataflow (in the legend once: ``first``)."""
    colors = dataflow_colors(study)
    numeric = _numeric([t.params[param] for t in trials])
    return [
        go.Scatter(
            # numbers as arrays: plotly checks a list element by element, an array
            # at once (a big study's slices hold tens of thousands of points)
            x=(
                np.array([t.params[param] for t in group])
                if numeric
                else [esc(t.params[param]) for t in group]
            ),
            y=np.array([t.values[objective] for t in group]),
            customdata=np.array([t.number for t in group]),
            # one template per trace, not a text per point: a big study's slices
            # stay small (the front and the history carry every parameter)
            hovertemplate=f"<b>trial #%{{customdata}}</b><br>{esc(objective)}: "
            f"%{{y:.4g}}<br>{esc(param)} = %{{x}}<br>{esc(flow)}<extra></extra>",
            mode="markers",
            name=esc(flow),
            legendgroup=flow,
            showlegend=first,
            marker={"color": colors.get(flow, "#333333"), "size": 8, "opacity": 0.75},
            meta="feasible",
        )
        for flow, group in _groups(trials).items()
    ]


def _slice_axis(study: Study, param: str, values: list[Any]) -> dict[str, Any]:
    """The x axis of a parameter's panel: a category axis in the space's order, or a number
    axis (log when the values span more than a decade; the values as ticks when a discrete
    range has at most ten)."""
    distinct = _order(study, param, values)
    if not _numeric(values):
        return {
            "type": "category",
            "categoryorder": "array",
            "categoryarray": [esc(v) for v in distinct],
        }
    axis: dict[str, Any] = {"type": "log" if _spans_decade(values) else "linear"}
    r = study.space.ranges().get(param)
    if r is not None and r.kind != "float" and len(distinct) <= 10:
        axis |= {"tickvals": distinct, "ticktext": [fmt(v) for v in distinct]}
    return axis


# ---- 3. contour ----------------------------------------------------------------------------
class _Cells:
    """The cells of one axis of the contour: a parameter's distinct values, or for a float
    parameter with many values, ``FLOAT_BINS`` bins (log-spaced when the values are
    positive and span more than a decade)."""

    def __init__(self, study: Study, param: str, values: list[Any]):
        r = study.space.ranges().get(param)
        distinct = _order(study, param, values)
        self.edges: list[float] | None = None
        if r is not None and r.kind == "float" and len(distinct) > MAX_FLOAT_CELLS:
            lo, hi = min(distinct), max(distinct)
            log = _spans_decade(distinct) or (r.log and lo > 0)
            a, b = (math.log10(lo), math.log10(hi)) if log else (lo, hi)
            steps = [a + (b - a) * k / FLOAT_BINS for k in range(FLOAT_BINS + 1)]
            self.edges = [10**s for s in steps] if log else steps
            self.edges[0], self.edges[-1] = lo, hi  # exact ends: every value in a bin
            self.labels = [
                f"{fmt(self.edges[k])} to {fmt(self.edges[k + 1])}" for k in range(FLOAT_BINS)
            ]
        else:
            self.values = distinct
            self.labels = [fmt(v) for v in distinct]
            self._at = {v: i for i, v in enumerate(distinct)}

    def index(self, value: Any) -> int:
        if self.edges is None:
            return self._at[value]
        return min(bisect.bisect_right(self.edges, value) - 1, FLOAT_BINS - 1)


def _log_colorbar(z: list[float], title: str) -> dict[str, Any]:
    """A colour bar over log10 values labelled with the values themselves."""
    lo, hi = min(z), max(z)
    ticks = [lo] if hi == lo else [lo + (hi - lo) * k / 4 for k in range(5)]
    return {
        "title": {"text": title},
        "tickvals": ticks,
        "ticktext": [fmt(10**t) for t in ticks],
    }


def contour(
    study: Study,
    objective: str | None = None,
    x_param: str | None = None,
    y_param: str | None = None,
) -> go.Figure:
    """The objective over two parameters without interpolation: a heatmap of the best value
    (by the objective's direction) of the feasible trials in each cell of distinct
    parameter values (a float parameter with many values in bins), the trials as markers
    spread inside their cell; a log colour scale when the values are positive, the best
    values brightest. A cell carries the number of its best trial (``customdata``).
    Defaults: the first objective, the first two varied parameters."""
    objective = objective or study.objectives[0]
    revision = f"contour:{objective}:{x_param}:{y_param}"
    direction = _direction(study, objective)
    if direction is None:
        return _empty(revision, _not_objective(study, objective), "Contour")
    params = varied_params(study)
    defaults = iter(p for p in params if p not in (x_param, y_param))
    x_param = x_param or next(defaults, None)
    y_param = y_param or next(defaults, None)
    revision = f"contour:{objective}:{x_param}:{y_param}"
    title = f"{esc(objective)} over {esc(x_param)} and {esc(y_param)}: {esc(study.name)}"
    if x_param is None or y_param is None:
        return _empty(
            revision, "a contour needs two varied parameters", f"{esc(objective)}: contour"
        )
    refused = _contour_refusal(x_param, y_param, params)
    if refused is not None:
        return _empty(revision, refused, title)
    trials = [
        t for t in study.feasible_with([objective]) if x_param in t.params and y_param in t.params
    ]
    if not trials:
        return _empty(revision, "no feasible design yet", title)
    xv, yv = [t.params[x_param] for t in trials], [t.params[y_param] for t in trials]
    xs, ys = _Cells(study, x_param, xv), _Cells(study, y_param, yv)
    n, rows = len(trials), len(ys.labels)
    # each trial's cell as one number (x index x rows + y index), then every cell's trials
    # as arrays: a big study has 100,000 trials
    cell = np.fromiter(map(xs.index, xv), np.int64, n) * rows
    cell += np.fromiter(map(ys.index, yv), np.int64, n)
    numbers = np.fromiter((t.number for t in trials), np.int64, n)
    values = np.fromiter((t.values[objective] for t in trials), float, n)
    signed = values if direction == "minimize" else -values
    ranked = np.lexsort((numbers, signed, cell))  # cell by cell, its best first
    starts = np.flatnonzero(np.r_[True, cell[ranked][1:] != cell[ranked][:-1]])
    key = {int(c): (int(c) // rows, int(c) % rows) for c in cell[ranked][starts]}
    best = {key[int(cell[i])]: trials[i] for i in ranked[starts]}
    sizes = dict(zip(key.values(), np.diff(np.r_[starts, n]).tolist(), strict=True))
    fig = _layout(go.Figure(), title, uirevision=revision)
    axes = (xs, ys), (x_param, y_param)
    fig.add_trace(_best_in_cells(best, sizes, *axes, objective, direction))
    marked, sampled = sample_off_front(study, trials, numbers)
    kept = np.isin(numbers, [t.number for t in marked])
    # the cells in the order their first trial comes, each one's kept trials in trial order
    by_cell = np.argsort(cell, kind="stable")
    bounds = np.flatnonzero(np.r_[True, cell[by_cell][1:] != cell[by_cell][:-1]])
    groups = np.split(by_cell, bounds[1:])
    members = {
        key[int(cell[g[0]])]: [trials[i] for i in g[kept[g]]]
        for g in sorted(groups, key=lambda g: int(g[0]))
    }
    fig.add_trace(_cell_members(study, members))
    note(fig, [sampled])
    for update, cells_, param in (
        (fig.update_xaxes, xs, x_param),
        (fig.update_yaxes, ys, y_param),
    ):
        update(
            title=esc(param),
            tickvals=list(range(len(cells_.labels))),
            ticktext=[esc(label) for label in cells_.labels],
            range=[-0.5, len(cells_.labels) - 0.5],
            showgrid=False,
            zeroline=False,
        )
    fig.update_layout(hovermode="closest", clickmode="event", showlegend=False)
    return fig


def _contour_refusal(x_param: str, y_param: str, params: list[str]) -> str | None:
    """Why the contour cannot show these two parameters (None: it can)."""
    if x_param == y_param:
        return f"choose two different parameters (both are {x_param})"
    for p in (x_param, y_param):
        if p not in params:
            return (
                f"{p} is not a varied parameter of this study "
                f"(varied: {', '.join(params) or 'none'})"
            )
    return None


def _best_in_cells(
    best: dict[tuple[int, int], TrialView],
    sizes: dict[tuple[int, int], int],
    axes: tuple[_Cells, _Cells],
    params: tuple[str, str],
    objective: str,
    direction: str,
) -> go.Heatmap:
    """The contour's heatmap: in each cell (x index, y index) the value of its best trial
    (``best``; log10 when every best value is positive), the number of that trial and a
    hover text (with the cell's number of trials, ``sizes``)."""
    (xs, ys), (x_param, y_param) = axes, params
    log = all(b.values[objective] > 0 for b in best.values())

    def level(v: float) -> float:
        return math.log10(v) if log else v

    z: list[list[float | None]] = [[None] * len(xs.labels) for _ in ys.labels]
    numbers: list[list[int | None]] = [[None] * len(xs.labels) for _ in ys.labels]
    text: list[list[str]] = [[""] * len(xs.labels) for _ in ys.labels]
    for (i, j), b in best.items():
        z[j][i] = level(b.values[objective])
        numbers[j][i] = b.number
        text[j][i] = (
            f"{esc(x_param)} = {esc(xs.labels[i])}<br>{esc(y_param)} = {esc(ys.labels[j])}<br>"
            f"best {esc(objective)}: {fmt(b.values[objective])} (trial #{b.number})<br>"
            f"{sizes[(i, j)]} design(s)"
        )
    levels = [v for row in z for v in row if v is not None]
    bar_title = f"{esc(objective)}<br>best in cell"
    return go.Heatmap(
        x=list(range(len(xs.labels))),
        y=list(range(len(ys.labels))),
        z=z,
        customdata=numbers,
        hovertext=text,
        hovertemplate="%{hovertext}<extra></extra>",
        hoverongaps=False,
        colorscale="Viridis",
        reversescale=direction == "minimize",  # the best values bright
        colorbar=_log_colorbar(levels, bar_title) if log else {"title": {"text": bar_title}},
        xgap=1,
        ygap=1,
        name=esc(objective),
        meta="cells",
    )


def _cell_members(study: Study, cells: dict[tuple[int, int], list[TrialView]]) -> go.Scatter:
    """Every trial of the contour as a marker inside its cell, a cell's trials spread across
    it in trial order."""
    px: list[float] = []
    py: list[float] = []
    members: list[TrialView] = []
    for (i, j), group in cells.items():
        ordered = sorted(group, key=lambda t: t.number)
        k = len(ordered)
        for n, t in enumerate(ordered):
            px.append(i + (0.0 if k == 1 else -0.3 + 0.6 * n / (k - 1)))
            py.append(j)
            members.append(t)
    return go.Scatter(
        x=px,
        y=py,
        customdata=[t.number for t in members],
        hovertext=[hover(study, t) for t in members],
        hovertemplate="%{hovertext}<extra></extra>",
        mode="markers",
        name="designs",
        marker={"color": "white", "size": 7, "line": {"color": "#222222", "width": 1}},
        meta="feasible",
    )


# ---- 4. ECDF -------------------------------------------------------------------------------
def ecdf(study: Study) -> go.Figure:
    """The empirical distribution of each objective over the feasible designs: one panel per
    objective, a step line through (value, fraction of designs <= value), each design a
    point on it (ties stacked up the step; a line through evenly spaced ranks of a big
    study's, ``ranks``), the designs of the Pareto front marked; x log when the values are
    positive."""
    title = f"Distribution of the objectives: {esc(study.name)}"
    revision = "ecdf"
    numbers, values = study.value_columns(study.objectives)
    if not len(numbers):
        return _empty(revision, "no feasible design yet", title)
    front = on_front(study, numbers)
    rows, cols = _grid(len(study.objectives))
    better = {"minimize": "lower", "maximize": "higher"}
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[
            f"{esc(o)} ({better[d]} is better)"
            for o, d in zip(study.objectives, study.directions, strict=True)
        ],
        shared_yaxes=True,
        horizontal_spacing=0.05,
        vertical_spacing=min(0.25, 0.6 / rows),
    )
    _layout(fig, title, uirevision=revision)
    for i, o in enumerate(study.objectives):
        row, col = i // cols + 1, i % cols + 1
        for trace in _ecdf_panel(study, (numbers, values[:, i]), o, i, front):
            fig.add_trace(trace, row=row, col=col)
        log = bool((values[:, i] > 0).all())
        fig.update_xaxes(title=metric_title(o), type="log" if log else "linear", row=row, col=col)
    fig.update_yaxes(range=[0, 1.05])
    fig.update_yaxes(title="fraction of designs ≤ x", row=(rows + 1) // 2, col=1)
    return _panels(fig, rows, 320)


def _ecdf_panel(
    study: Study,
    column: tuple[np.ndarray, np.ndarray],
    objective: str,
    i: int,
    front: np.ndarray,
) -> tuple[go.Scatter, go.Scatter]:
    """The ECDF of one objective (the ``i``-th: its colour, the legend once) as a step line
    through every design (``column``: their numbers and values), and the designs of the
    Pareto front (``front``: bool[design], ``on_front``) on it."""
    numbers, values = column
    n = len(numbers)
    order = np.lexsort((numbers, values))  # by value, then number: trial order[k] at rank k
    color = PALETTE[i % len(PALETTE)]
    drawn = np.asarray(ranks(n), dtype=np.int64)
    line = go.Scatter(
        x=values[order[drawn]].tolist(),
        y=((drawn + 1) / n).tolist(),
        customdata=numbers[order[drawn]].tolist(),
        hovertemplate=f"<b>trial #%{{customdata}}</b><br>{esc(objective)}: %{{x:.4g}}<br>"
        f"%{{y:.1%}} of {n} designs at or below it<extra></extra>",
        # a marker per design while every design is drawn; through a sample of ranks, the
        # line alone (its points still hover and click): thousands of SVG markers take a
        # browser a third of a second to draw
        mode="lines+markers" if len(drawn) == n else "lines",
        line={"shape": "hv", "color": color, "width": 2},
        marker={"size": 4},
        name=esc(objective),
        showlegend=False,
        meta="ecdf",
    )
    at = np.flatnonzero(front[order])
    on_front = [(study.trial(int(numbers[order[k]])), (int(k) + 1) / n) for k in at]
    marked = go.Scatter(
        x=[t.values[objective] for t, _ in on_front],
        y=[yk for _, yk in on_front],
        customdata=[t.number for t, _ in on_front],
        hovertext=[hover(study, t, ["<b>on the Pareto front</b>"]) for t, _ in on_front],
        hovertemplate="%{hovertext}<extra></extra>",
        mode="markers",
        marker={
            "color": color,
            "size": 10,
            "symbol": "diamond",
            "line": {"color": "#222222", "width": 1},
        },
        name="Pareto front",
        legendgroup="front",
        showlegend=i == 0,
        meta="front",
    )
    return line, marked


# ---- 5. timeline ---------------------------------------------------------------------------
def _lanes(trials: list[TrialView]) -> list[str]:
    """The workers, the driver first and ``unknown`` last."""
    names = {t.worker or UNKNOWN_WORKER for t in trials}
    return sorted(names, key=lambda w: (w != "driver", w == UNKNOWN_WORKER, w))


def timeline(study: Study, now: datetime | None = None) -> go.Figure:
    """The trials over time: one horizontal bar per started trial from its start to its end
    (a running trial to ``now``, default the present), one lane per worker that evaluated it
    (``driver`` for the trials the driver answered itself, ``unknown`` when not recorded),
    coloured by status."""
    title = f"Trials over time: {esc(study.name)}"
    revision = "timeline"
    # a repeat is answered from the study in no time: counted in the title, not drawn
    started = [t for t in study.trials() if t.started is not None]
    trials = [t for t in started if t.status != "repeat"]
    if len(trials) < len(started):
        title += f" ({len(started) - len(trials)} repeats answered from the study not drawn)"
    if not trials:
        return _empty(revision, "no trial has started yet", title)
    fig = _layout(go.Figure(), title, uirevision=revision, barmode="overlay")
    lanes = _lanes(trials)
    bars = sample(trials)
    note(fig, [sample_note(len(bars), len(trials), "trials")])
    by_status: dict[str, list[TrialView]] = {}
    for t in bars:
        by_status.setdefault(t.status, []).append(t)
    order = [*STATUS_COLORS, *sorted(set(by_status) - set(STATUS_COLORS))]
    for status in order:
        group = by_status.get(status)
        if not group:
            continue
        ends = [_end(t, now) for t in group]
        ms = [_span_ms(t, e) for t, e in zip(group, ends, strict=True)]
        color = STATUS_COLORS.get(status, "#999999")
        fig.add_trace(
            go.Bar(
                base=[t.started for t in group],
                x=ms,  # a date axis: a bar's length in milliseconds from its base
                y=[esc(t.worker or UNKNOWN_WORKER) for t in group],
                orientation="h",
                customdata=[t.number for t in group],
                hovertext=[hover(study, t, _when(t, e)) for t, e in zip(group, ends, strict=True)],
                hovertemplate="%{hovertext}<extra></extra>",
                name=esc(status),
                marker={"color": color, "line": {"color": "white", "width": 0.5}},
                meta=status,
            )
        )
    fig.update_xaxes(type="date", title="time")
    fig.update_yaxes(
        title="worker",
        type="category",
        categoryorder="array",
        categoryarray=[esc(w) for w in lanes],
        autorange="reversed",
    )
    fig.update_layout(
        hovermode="closest",
        clickmode="event",
        legend=LEGEND_BELOW,
        height=max(300, 160 + 40 * len(lanes)),
    )
    return fig


def _span_ms(t: TrialView, end: datetime) -> float:
    """Milliseconds from a started trial's start to ``end`` (its bar's length)."""
    assert t.started is not None  # the timeline draws started trials only
    return (end - t.started).total_seconds() * 1000


def _end(t: TrialView, now: datetime | None) -> datetime:
    if t.finished is not None:
        return t.finished
    return now or datetime.now(t.started.tzinfo if t.started else None)


def _when(t: TrialView, end: datetime) -> list[str]:
    seconds = (end - t.started).total_seconds() if t.started else math.nan
    lines = [
        f"worker: {esc(t.worker or UNKNOWN_WORKER)}",
        f"started {t.started:%Y-%m-%d %H:%M:%S}" if t.started else "",
        f"{fmt(seconds)} s{'' if t.finished else ' so far'}",
    ]
    if t.reason:
        lines.append(f"<i>{esc(t.reason)}</i>")
    return [line for line in lines if line]
