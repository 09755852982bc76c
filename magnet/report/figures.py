"""Plotly figures of studies and designs, shared by the dashboard and the HTML reports.

Only ``plotly.graph_objects`` (and ``plotly.subplots``): no plotly.express, no pandas. Every
string that comes from a study (names, parameters, layers, reasons) is HTML-escaped before it
reaches a figure, since plotly renders a subset of HTML in labels and hover text.

Points of a study carry their trial number as ``customdata`` (clicks open the design) and
every trace a ``meta`` role: ``front`` (the study's Pareto front, one trace per dataflow),
``feasible`` (the other feasible trials, faded), ``infeasible`` (with their reason),
``staircase`` (the front of the two plotted objectives alone).
"""

from __future__ import annotations

import hashlib
import html
import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from magnet.cost.contract import OVERHEAD_NOTES
from magnet.model.records import shown_categories
from magnet.report.design_page import OLD_RECORD, area_note
from magnet.search import pareto
from magnet.search.design_space import METRICS
from magnet.search.storage import quiet_optuna
from magnet.search.study import Study, TrialView, has_values, with_values
from magnet.units import human_bytes

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

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
    "network": "#ffa15a",
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
#: Fewest feasible trials parameter importance is computed from.
MIN_IMPORTANCE_TRIALS = 10
#: Most feasible trials importance is computed from (PED-ANOVA takes ~0.3 ms per trial and
#: objective here: the figure stays well under the dashboard's 300 ms).
MAX_IMPORTANCE_TRIALS = 400


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


def hover(study: Study, trial: TrialView, extra: Iterable[str] = ()) -> str:
    """A trial's hover text: number, objectives, parameters (escaped; made once per trial,
    and the ``extra`` lines added)."""
    if trial.hover_text is None:
        lines = [f"<b>trial #{trial.number}</b> ({esc(trial.status)})"]
        lines += [
            f"{esc(o)}: {fmt(trial.values[o])}" for o in study.objectives if o in trial.values
        ]
        lines += [f"{esc(k)} = {esc(fmt(v))}" for k, v in trial.params.items()]
        trial.hover_text = "<br>".join(lines)
    return "<br>".join([trial.hover_text, *extra])


#: Trials a study figure draws besides its Pareto front (each of its point sets): beyond this,
#: a sample (``sample``), so that a figure of a study of 100,000 trials stays a few MB and
#: draws at once; the figure says how many it draws of how many (``sample_note``).
MAX_POINTS = 2000
#: A step line's y.
S = TypeVar("S", bound=float)
#: Fibonacci hashing's multiplier (2^64 / golden ratio): a trial number's place in a sample.
_SCRAMBLE = np.uint64(0x9E3779B97F4A7C15)


def sample(trials: list[TrialView], limit: int | None = None) -> list[TrialView]:
    """``trials`` when there are at most ``limit`` (``MAX_POINTS``), else ``limit`` of them in
    their order: a uniform sample (it keeps the points' density), chosen by a fixed scramble
    of the trial numbers, so that a trial drawn stays drawn as the study grows but for the
    few a newer trial displaces."""
    limit = MAX_POINTS if limit is None else limit
    if len(trials) <= limit:
        return trials
    numbers = np.fromiter((t.number for t in trials), dtype=np.uint64, count=len(trials))
    score = (numbers * _SCRAMBLE) >> np.uint64(32)  # the product wraps: a hash of the number
    keep = np.sort(np.argpartition(score, limit - 1)[:limit])
    return [trials[int(i)] for i in keep]


def sample_infeasible(trials: list[TrialView]) -> list[TrialView]:
    """The infeasible designs a figure draws: a ``sample`` of a quarter of ``MAX_POINTS``."""
    return sample(trials, MAX_POINTS // 4)


def ranks(count: int) -> Sequence[int]:
    """The ranks a curve through ``count`` sorted points is drawn through: all of them, or
    ``MAX_POINTS`` evenly spaced ones, the first and the last among them (a cumulative
    distribution drawn so is within 1 / ``MAX_POINTS`` of the full one everywhere)."""
    if count <= MAX_POINTS:
        return range(count)
    return [int(k) for k in np.unique(np.linspace(0, count - 1, MAX_POINTS).round())]


def sample_off_front(study: Study, trials: list[TrialView]) -> tuple[list[TrialView], str | None]:
    """``trials`` in their order, but of those off the study's Pareto front only a ``sample``
    (every front design kept), and the figure's ``sample_note`` (None: all drawn)."""
    front = study.front_numbers
    others = [t for t in trials if t.number not in front]
    drawn = sample(others)
    if len(drawn) == len(others):
        return trials, None
    kept = front | {t.number for t in drawn}
    said = sample_note(len(drawn), len(others), "designs off the front (every front design)")
    return [t for t in trials if t.number in kept], said


def steps(points: list[tuple[int, S]]) -> list[tuple[int, S]]:
    """A step line's (x, y) points; where there are more than ``MAX_POINTS``, the points
    where y changes and the last one (``step_at``)."""
    ys = np.array([y for _, y in points], dtype=float)
    return [points[int(i)] for i in step_at(ys)]


def step_at(ys: np.ndarray) -> np.ndarray:
    """The positions of a step line through ``ys`` that are drawn: all of them, or, where
    there are more than ``MAX_POINTS``, those where y changes and the last one (the line
    drawn is the same; only hovers between its steps are lost)."""
    count = len(ys)
    if count <= MAX_POINTS:
        return np.arange(count)
    at = np.flatnonzero(np.concatenate([[True], ys[1:] != ys[:-1]]))
    return at if at[-1] == count - 1 else np.append(at, count - 1)


def sample_note(shown: int, total: int, what: str) -> str | None:
    """What a figure says when it draws ``shown`` of ``total`` ``what`` (None: all of them)."""
    if shown >= total:
        return None
    return f"{shown:,} of {total:,} {what} drawn (a uniform sample)"


def note(fig: go.Figure, lines: Iterable[str | None]) -> None:
    """The figure's notes (those not None) at its top right, small and grey."""
    text = "; ".join(line for line in lines if line)
    if text:
        _grey_text(fig, text, 11, x=1, y=1.02, xanchor="right", yanchor="bottom")


def _points(
    study: Study,
    trials: list[TrialView],
    axes: Sequence[str],
    notes: Callable[[TrialView], list[str]] | None = None,
) -> dict[str, Any]:
    """A trace's points: ``trials`` on ``axes`` (x, y[, z]), their numbers as ``customdata``,
    their hover text (with ``notes(trial)`` lines if given)."""
    return {  # numbers as arrays: plotly checks a list element by element, an array at once
        **{
            axis: np.array([t.values[m] for t in trials], dtype=float)
            for axis, m in zip("xyz", axes, strict=False)
        },
        "customdata": np.array([t.number for t in trials], dtype=int),
        "hovertext": [hover(study, t, notes(t) if notes else ()) for t in trials],
        "hovertemplate": "%{hovertext}<extra></extra>",
    }


def _axis_type(values: Iterable[float]) -> str:
    values = list(values)
    return "log" if values and all(v > 0 for v in values) else "linear"


def _groups(trials: list[TrialView]) -> dict[str, list[TrialView]]:
    out: dict[str, list[TrialView]] = {}
    for t in trials:
        out.setdefault(t.dataflow or "as mapped", []).append(t)
    return out


def pick_axes(study: Study, wanted: Sequence[str | None], count: int) -> list[str]:
    """``count`` distinct objectives: the wanted ones that exist, then the study's order."""
    chosen: list[str] = []
    for w in wanted:
        if w in study.objectives and w not in chosen:
            chosen.append(w)
    for o in study.objectives:
        if len(chosen) >= count:
            break
        if o not in chosen:
            chosen.append(o)
    return chosen[:count]


def _split(
    study: Study, axes: Sequence[str]
) -> tuple[list[TrialView], list[TrialView], list[TrialView], dict[int, list[int]]]:
    """The front, the other feasible trials and the infeasible ones that have values on
    ``axes``; and per front trial, the other trials drawn at exactly its place (a design
    proposed again, or one equal on these objectives). Those are left out of the others'
    trace (and of the front's, for a second front design at one place) and named in the
    front point's hover, so a click on a front marker can only open the trial it shows."""
    at: dict[tuple[float, ...], int] = {}  # a place -> the front trial drawn there
    front: list[TrialView] = []
    same: dict[int, list[int]] = {}
    for t in with_values(study.pareto_front(), axes):
        place = tuple(t.values[m] for m in axes)
        if place in at:  # two front designs equal on these objectives: one marker
            same[at[place]].append(t.number)
            continue
        at[place] = t.number
        front.append(t)
        same[t.number] = []
    numbers = study.front_numbers
    others = []
    for t in study.feasible_with(axes):
        if t.number in numbers:
            continue
        where = at.get(tuple(t.values[m] for m in axes))
        if where is None:
            others.append(t)
        else:
            same[where].append(t.number)
    return front, others, infeasible_with(study, axes), same


def infeasible_with(study: Study, axes: Sequence[str]) -> list[TrialView]:
    """The infeasible trials with values on ``axes`` (made once per study as read)."""

    def keep(t: TrialView) -> bool:
        return t.status == "infeasible" and has_values(t, axes)

    return study.selected(("infeasible with", tuple(axes)), keep)


def _same_place(same: dict[int, list[int]]) -> Callable[[TrialView], list[str]]:
    def notes(t: TrialView) -> list[str]:
        twins = same.get(t.number) or []
        return [f"<i>also here: {', '.join(f'#{n}' for n in twins)}</i>"] if twins else []

    return notes


def _without_values(study: Study, axes: Sequence[str]) -> int:
    """How many evaluated designs have no value on ``axes`` (refused before pricing)."""

    def lacks(t: TrialView) -> bool:
        done = t.status in ("ok", "infeasible")
        return done and not has_values(t, axes)

    return len(study.selected(("without values", tuple(axes)), lacks))


def front_2d(study: Study, x: str | None = None, y: str | None = None) -> go.Figure:
    """The Pareto front on two objectives: the front by dataflow, the other feasible trials
    faded, the infeasible ones (that have values) as crosses with their reason."""
    axes = pick_axes(study, [x, y], 2)
    title = f"Pareto front: {esc(study.name)}"
    if len(axes) < 2:
        return empty("a 2-D front needs two objectives", title)
    x, y = axes
    fig = _layout(go.Figure(), title)
    front, others, infeasible, same = _split(study, axes)
    drawn, crosses = sample(others), sample_infeasible(infeasible)
    for trace in _by_dataflow(study, drawn, axes, "others"):
        fig.add_trace(trace)
    if infeasible:
        fig.add_trace(_infeasible_points(study, crosses, axes))
    feasible = front + others
    if feasible:
        fig.add_trace(_staircase(study, feasible, axes))
    for trace in _by_dataflow(study, front, axes, "front", _same_place(same)):
        fig.add_trace(trace)
    missing = _without_values(study, axes)
    note(
        fig,
        [
            f"{missing} design(s) without values not drawn (refused before pricing: see the "
            "trials table)"
            if missing
            else None,
            sample_note(len(drawn), len(others), "feasible designs off the front"),
            sample_note(len(crosses), len(infeasible), "infeasible designs"),
        ],
    )
    if not feasible and not infeasible:
        return _message(fig, "no design with values yet")
    values = feasible + infeasible
    fig.update_xaxes(title=metric_title(x), type=_axis_type(t.values[x] for t in values))
    fig.update_yaxes(title=metric_title(y), type=_axis_type(t.values[y] for t in values))
    fig.update_layout(hovermode="closest", clickmode="event", legend=LEGEND_BELOW)
    return fig


def _by_dataflow(
    study: Study,
    trials: list[TrialView],
    axes: Sequence[str],
    role: str,
    notes: Callable[[TrialView], list[str]] | None = None,
) -> list[go.Scatter]:
    """A 2-D front's markers of ``trials``, one trace per dataflow: the front's (``role``
    ``front``: large, outlined) or the other feasible trials' (``others``: faded)."""
    colors = dataflow_colors(study)
    traces = []
    for flow, group in _groups(trials).items():
        if role == "front":
            marker: dict[str, Any] = {
                "color": colors.get(flow, "#333333"),
                "size": 11,
                "line": {"color": "#222222", "width": 1},
            }
        else:
            marker = {"color": colors.get(flow, "#999999"), "size": 7, "opacity": 0.3}
        traces.append(
            go.Scatter(
                **_points(study, group, axes, notes),
                mode="markers",
                name=f"{esc(flow)}, {role}",
                legendgroup=f"{'front' if role == 'front' else 'other'} {flow}",
                marker=marker,
                meta="front" if role == "front" else "feasible",
            )
        )
    return traces


def _infeasible_points(study: Study, trials: list[TrialView], axes: Sequence[str]) -> go.Scatter:
    """The infeasible trials that have values, as crosses that say why."""
    return go.Scatter(
        **_points(
            study,
            trials,
            axes,
            lambda t: [f"<i>infeasible: {esc(t.reason or 'unknown')}</i>"],
        ),
        mode="markers",
        name="infeasible",
        marker={"color": INFEASIBLE_COLOR, "symbol": "x", "size": 7, "opacity": 0.6},
        meta="infeasible",
    )


def _staircase(study: Study, feasible: list[TrialView], axes: Sequence[str]) -> go.Scatter:
    """The front of the feasible trials on these two objectives alone, as a dotted
    staircase (the study's front is over all its objectives)."""
    x, y = axes
    directions = [study.directions[study.objectives.index(m)] for m in axes]
    # arrays straight from the values: no list per trial (a big study's would be 100,000)
    xy = np.column_stack(
        [np.fromiter((t.values[m] for t in feasible), float, len(feasible)) for m in axes]
    )
    points = pareto.to_minimised_log(xy, directions)
    stairs = sorted(
        (t for t, keep in zip(feasible, pareto.nondominated(points), strict=True) if keep),
        key=lambda t: (t.values[x], t.values[y]),
    )
    return go.Scatter(
        x=[t.values[x] for t in stairs],
        y=[t.values[y] for t in stairs],
        mode="lines",
        name="front of these two",
        line={"color": "#444444", "width": 1, "dash": "dot", "shape": _shape(directions)},
        hoverinfo="skip",
        meta="staircase",
    )


def _shape(directions: Sequence[str]) -> str:
    """A staircase's step shape: it steps where the first objective's better side is."""
    return "hv" if directions[0] == "minimize" else "vh"


def front_3d(study: Study, axes: Sequence[str | None] = ()) -> go.Figure:
    """The Pareto front on three objectives (log axes where the values are positive)."""
    chosen = pick_axes(study, list(axes), 3)
    title = f"Pareto front in 3-D: {esc(study.name)}"
    if len(chosen) < 3:
        return empty("a 3-D front needs three objectives", title)
    fig = _layout(go.Figure(), title)
    colors = dataflow_colors(study)
    front, others, _, same = _split(study, chosen)
    if not front:
        return _message(fig, "no feasible design yet")
    drawn = sample(others)
    note(fig, [sample_note(len(drawn), len(others), "feasible designs off the front")])
    for role, trials, size, opacity in (("feasible", drawn, 3, 0.3), ("front", front, 6, 1.0)):
        for flow, group in _groups(trials).items():
            fig.add_trace(
                go.Scatter3d(
                    **_points(study, group, chosen, _same_place(same)),
                    mode="markers",
                    name=f"{esc(flow)}, {'front' if role == 'front' else 'others'}",
                    marker={"color": colors.get(flow, "#333333"), "size": size},
                    opacity=opacity,
                    meta=role,
                )
            )
    every = front + drawn
    scene = {
        f"{axis}axis": {
            "title": {"text": esc(m)},
            "type": _axis_type(t.values[m] for t in every),
            "backgroundcolor": "white",
            "gridcolor": "#dddddd",
        }
        for axis, m in zip("xyz", chosen, strict=True)
    }
    fig.update_layout(scene=scene, margin={"l": 0, "r": 0, "t": 50, "b": 10}, legend=LEGEND_BELOW)
    return fig


def hypervolume(study: Study) -> go.Figure:
    """The hypervolume of the feasible trials so far, after each feasible trial."""
    title = f"Hypervolume (decades^{len(study.objectives)})"
    history = steps(study.hypervolume_history())
    if not history:
        text = (
            "no feasible design yet"
            if not study.feasible()
            else "no reference point yet (set after the first feasible designs)"
        )
        return empty(text, title)
    fig = _layout(go.Figure(), title)
    fig.add_trace(
        go.Scatter(
            x=[n for n, _ in history],
            y=[hv for _, hv in history],
            mode="lines+markers",
            line={"shape": "hv", "color": PALETTE[0]},
            marker={"size": 4},
            name="hypervolume",
            hovertemplate="after trial #%{x}: %{y:.4g}<extra></extra>",
            customdata=[n for n, _ in history],
        )
    )
    fig.update_xaxes(title="trial")
    fig.update_yaxes(title="hypervolume", rangemode="tozero")
    return fig


def parallel(study: Study, color: str | None = None) -> go.Figure:
    """Parallel coordinates of the feasible trials: parameters, then log10 objectives,
    coloured by one objective."""
    title = "Parameters of the feasible designs"
    trials, sampled = sample_off_front(study, study.feasible_with(study.objectives))
    if not trials:
        return empty("no feasible design yet", title)
    color = pick_axes(study, [color], 1)[0]
    names = sorted({k for t in trials for k in t.params}, key=_param_order(study))
    dims = []
    for name in names:
        values = [t.params.get(name) for t in trials]
        numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
        if numeric:
            dims.append({"label": esc(name), "values": values})
        else:
            labels = sorted({str(v) for v in values})
            dims.append(
                {
                    "label": esc(name),
                    "values": [labels.index(str(v)) for v in values],
                    "tickvals": list(range(len(labels))),
                    "ticktext": [esc(v) for v in labels],
                }
            )
    for o in study.objectives:
        dims.append(
            {
                "label": esc(f"log10 {o}"),
                "values": [math.log10(t.values[o]) if t.values[o] > 0 else 0 for t in trials],
            }
        )
    colour = [t.values[color] for t in trials]
    log = all(v > 0 for v in colour)
    direction = study.directions[study.objectives.index(color)]
    fig = _layout(go.Figure(), title)
    fig.add_trace(
        go.Parcoords(
            dimensions=dims,
            line={
                "color": [math.log10(v) for v in colour] if log else colour,
                "colorscale": "Viridis",
                "reversescale": direction == "minimize",
                "showscale": True,
                "colorbar": {"title": {"text": esc(f"log10 {color}" if log else color)}},
            },
            meta="parallel",
        )
    )
    fig.update_layout(margin={"l": 60, "r": 100, "t": 90, "b": 30})
    note(fig, [sampled])
    return fig


def _param_order(study: Study) -> Callable[[str], tuple[int, str]]:
    """A sort key of parameter names: the space's order, then ``dataflow``, then by name."""
    order = [*study.space.params, "dataflow"]
    return lambda name: (order.index(name) if name in order else len(order), name)


def importance_basis(study: Study) -> list[TrialView]:
    """The feasible trials importance is computed from: of the first ``k`` by number (``k``
    the largest of 10, 11, 12, 13, ..., each step 10 % more, not above their count), every
    one, or evenly spaced ones when there are more than ``MAX_IMPORTANCE_TRIALS``. As a
    search runs, importance is thus computed again after every 10 % more feasible designs,
    not after each one, and in bounded time; the figure says from how many."""
    feasible = study.feasible()
    return feasible[importance_slice(len(feasible))]


def importance_slice(count: int) -> slice:
    """Which of ``count`` feasible trials ``importance_basis`` takes (see there)."""
    if count < MIN_IMPORTANCE_TRIALS:
        return slice(0, 0)
    k = MIN_IMPORTANCE_TRIALS
    while k < round(k * 1.1) <= count:
        k = round(k * 1.1)
    return slice(0, k, math.ceil(k / MAX_IMPORTANCE_TRIALS))


def importances(study: Study) -> dict[str, dict[str, float]] | None:
    """PED-ANOVA importance of each parameter for each objective (None with too few trials),
    from the trials of ``importance_basis``.

    Computed in an in-memory study of copies that hold only parameters and values, one
    objective at a time (maximised ones negated: the evaluator takes lower as better).
    """
    import optuna

    basis = {t.number for t in importance_basis(study)}
    if not basis:
        return None
    with quiet_optuna():  # no "a new study created in memory" line
        copy = optuna.create_study(directions=study.directions)
    copy.add_trials(
        [
            optuna.trial.create_trial(
                params=t.params, distributions=t.distributions, values=t.values
            )
            for t in study.frozen
            if t.number in basis
        ]
    )
    out: dict[str, dict[str, float]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (o, d) in enumerate(zip(study.objectives, study.directions, strict=True)):
            sign = 1.0 if d == "minimize" else -1.0

            def target(t: FrozenTrial, i: int = i, sign: float = sign) -> float:
                return sign * float(t.values[i])

            out[o] = dict(optuna.importance.get_param_importances(copy, target=target))
    return out


def importance(study: Study) -> go.Figure:
    """Which parameters matter for which objective (PED-ANOVA, normalised per objective)."""
    chosen = importance_slice(len(study.feasible()))
    spread = f", evenly spaced in the first {chosen.stop}" if (chosen.step or 1) > 1 else ""
    used = len(importance_basis(study))
    title = f"Parameter importance (PED-ANOVA on {used} feasible designs{spread})"
    scores = importances(study)
    if scores is None:
        return empty(
            f"importance needs at least {MIN_IMPORTANCE_TRIALS} feasible designs "
            f"({len(study.feasible())} so far)",
            title,
        )
    params = sorted({p for s in scores.values() for p in s}, key=_param_order(study))
    fig = _layout(go.Figure(), title, barmode="group")
    for i, (o, s) in enumerate(scores.items()):
        fig.add_trace(
            go.Bar(
                y=[esc(p) for p in params],
                x=[s.get(p, 0.0) for p in params],
                orientation="h",
                name=esc(o),
                marker={"color": PALETTE[i % len(PALETTE)]},
                hovertemplate=f"{esc(o)}<br>%{{y}}: %{{x:.3f}}<extra></extra>",
            )
        )
    fig.update_xaxes(title="importance (share per objective)", rangemode="tozero")
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=max(300, 60 + 28 * len(params) * max(1, len(scores)) // 2))
    return fig


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


def _share(part: float, whole: float) -> float:
    return part / whole * 100 if whole else 0.0


def _energy_stack(
    title: str, records: list[dict[str, Any]], key: str, colors: dict[str, str] | None = None
) -> go.Figure:
    """Stacked bars: one bar per workload, one trace per name of the records' ``key``, with
    linear / log buttons (``scale_menu``)."""
    fig = _layout(go.Figure(), title, barmode="stack")
    workloads = [esc(r["network"]) for r in records]
    parts = [r[key] for r in records]
    totals = [math.fsum(p.values()) for p in parts]
    names: list[str] = []
    for p in parts:
        names += [n for n in p if n not in names]
    for i, name in enumerate(names):
        color = (colors or {}).get(name, PALETTE[i % len(PALETTE)])
        ys = [p.get(name, 0.0) for p in parts]
        fig.add_trace(
            go.Bar(
                x=workloads,
                y=ys,
                name=esc(name),
                marker={"color": color},
                customdata=[_share(y, t) for y, t in zip(ys, totals, strict=True)],
                hovertemplate=f"{esc(name)}: %{{y:.4g}} pJ "
                "(%{customdata:.1f} % of the total)<extra>%{x}</extra>",
            )
        )
    fig.update_yaxes(title="energy (pJ)")
    return _with_scale(fig, title)


def energy_by_category(records: list[dict[str, Any]]) -> go.Figure:
    """Energy of each workload by category (math, postprocess, memory, network, nop, clock,
    control, dram, static), linear or log; ``nop`` (a package's links) only for a package,
    ``postprocess`` (the post-processing unit's operations) only when spent."""
    key = "energy_pj_by_category"
    shown = shown_categories(r[key] for r in records)
    records = [{**r, key: {c: r[key].get(c, 0.0) for c in shown}} for r in records]
    return _energy_stack("Energy by category", records, key, CATEGORY_COLORS)


def energy_by_level(records: list[dict[str, Any]]) -> go.Figure:
    """Energy of each workload by level (all costs of a level, the MACs last), linear or log."""
    return _energy_stack("Energy by level", records, "energy_pj_by_level")


def energy_by_operand(operands: list[tuple[str, dict[str, dict[str, float]] | None]]) -> go.Figure:
    """Access energy of each level by operand, as the records keep it (``(workload, level ->
    operand -> pJ)``, None for a record written before it was kept), linear or log."""
    title = "Access energy by level and operand"
    known = [(w, o) for w, o in operands if o]
    if not known:
        return empty(OLD_RECORD, title)
    fig = _layout(go.Figure(), title, barmode="stack")
    several = len(known) > 1
    operand_names: list[str] = []
    for _, o in known:
        for ops in o.values():
            operand_names += [n for n in ops if n not in operand_names]
    for name in operand_names:
        xs: list[Any] = [[], []] if several else []
        ys, shares = [], []
        for workload, o in known:
            for level, ops in o.items():
                if several:
                    xs[0].append(esc(workload))
                    xs[1].append(esc(level))
                else:
                    xs.append(esc(level))
                ys.append(ops.get(name, 0.0))
                shares.append(_share(ops.get(name, 0.0), math.fsum(ops.values())))
        fig.add_trace(
            go.Bar(
                x=xs,
                y=ys,
                name=esc(name),
                marker={"color": OPERAND_COLORS.get(name, "#999999")},
                customdata=shares,
                hovertemplate=f"{esc(name)}: %{{y:.4g}} pJ "
                "(%{customdata:.1f} % of the level's accesses)<extra></extra>",
            )
        )
    fig.update_yaxes(title="access energy (pJ)")
    return _with_scale(fig, title)


def area(record: dict[str, Any]) -> go.Figure:
    """Area by component (the same design on every workload); the hover says what each
    overhead is (``AREA_NOTES``)."""
    parts = record.get("area_mm2_by_component") or {}
    title = "Area by component"
    if not parts:
        return empty("the cost model gives no area", title)
    total = sum(parts.values())
    fig = _layout(
        go.Figure(),
        subtitled(
            f"{title} (total {fmt(total)} mm²)",
            "storage levels, MACs, routers, then the overheads: " + ", ".join(OVERHEAD_NOTES),
        ),
    )
    items = sorted(parts.items(), key=lambda kv: -kv[1])
    fig.add_trace(
        go.Bar(
            x=[esc(k) for k, _ in items],
            y=[v for _, v in items],
            marker={"color": PALETTE[2]},
            customdata=[
                [v / total * 100 if total else 0, esc(area_note(record, k))] for k, v in items
            ],
            hovertemplate="%{x}: %{y:.4g} mm² (%{customdata[0]:.1f} %)"
            "<br>%{customdata[1]}<extra></extra>",
            name="area",
        )
    )
    fig.update_yaxes(title="area (mm²)")
    fig.update_layout(margin={"t": 80})
    return fig


def layers(record: dict[str, Any]) -> go.Figure:
    """Per layer: energy (by category, the layer's repeats included), latency, utilisation;
    energy linear or log (``scale_menu``: on the log axis, the categories of a layer side by
    side; the hover gives each its share of the layer)."""
    rows = record.get("layers") or []
    title = f"Layers of {esc(record.get('network', ''))}"
    if not rows:
        return empty("no layers", title)
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.04,
        row_heights=[0.45, 0.3, 0.25],
    )
    for trace in _energy_by_layer(rows):
        fig.add_trace(trace, row=1, col=1)
    latency, utilisation = _latency_and_utilisation(rows)
    fig.add_trace(latency, row=2, col=1)
    fig.add_trace(utilisation, row=3, col=1)
    _layout(fig, title, barmode="stack")
    fig.update_yaxes(title="energy (pJ)", row=1, col=1)
    fig.update_yaxes(title="cycles", row=2, col=1)
    fig.update_yaxes(title="util. %", range=[0, 100], row=3, col=1)
    fig.update_xaxes(tickangle=-45, row=3, col=1)
    fig.update_layout(height=620, margin={"b": 120})
    return _with_scale(fig, title)


def _energy_by_layer(rows: list[dict[str, Any]]) -> list[go.Bar]:
    """Energy per layer (pJ, its repeats included), one stacked trace per category (in the
    order the layers first name them), each bar's share of its layer in the hover."""
    names = [esc(r["name"]) for r in rows]
    cats = shown_categories(r["energy_pj_by_category"] for r in rows)
    totals = [r["energy_pj"] * r["count"] for r in rows]
    bars = []
    for c in cats:
        ys = [r["energy_pj_by_category"].get(c, 0.0) * r["count"] for r in rows]
        bars.append(
            go.Bar(
                x=names,
                y=ys,
                name=esc(c),
                legendgroup=c,
                marker={"color": CATEGORY_COLORS.get(c, "#999999")},
                customdata=[[_share(y, t), t] for y, t in zip(ys, totals, strict=True)],
                hovertemplate=f"%{{x}}<br>{esc(c)}: %{{y:.4g}} pJ (%{{customdata[0]:.1f}} % "
                "of the layer's %{customdata[1]:.4g} pJ)<extra></extra>",
            )
        )
    return bars


def _latency_and_utilisation(rows: list[dict[str, Any]]) -> tuple[go.Bar, go.Bar]:
    """Cycles per layer (its repeats included, with its bottleneck) and MAC utilisation (%)."""
    names = [esc(r["name"]) for r in rows]
    bottleneck = [esc(r["bottleneck"]) for r in rows]
    latency = go.Bar(
        x=names,
        y=[r["latency_cycles"] * r["count"] for r in rows],
        name="latency",
        marker={"color": "#444444"},
        customdata=list(zip([r["count"] for r in rows], bottleneck, strict=True)),
        hovertemplate="%{x}<br>%{y:,} cycles (x%{customdata[0]}), "
        "bottleneck %{customdata[1]}<extra></extra>",
        showlegend=False,
    )
    utilisation = go.Bar(
        x=names,
        y=[r["utilization"] * 100 for r in rows],
        name="utilisation",
        marker={"color": PALETTE[5]},
        hovertemplate="%{x}<br>utilisation %{y:.1f} %<extra></extra>",
        showlegend=False,
    )
    return latency, utilisation


#: Colours of a roofline's layers by their ``bound``.
BOUND_COLORS = {"compute": PALETTE[0], "memory": PALETTE[1]}


def roofline_points(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The layers a roofline draws: ``{row, intensity, macs_per_cycle}`` per layer row that
    has MACs (a post-processing layer has none) and moved DRAM bytes, with intensity = MACs /
    DRAM bytes and macs_per_cycle = MACs / cycles (one repeat each: both ratios are the same
    for all of a layer's repeats)."""
    return [
        {
            "row": r,
            "intensity": r["macs"] / r["dram_bytes"],
            "macs_per_cycle": r["macs"] / r["latency_cycles"],
        }
        for r in record.get("layers") or []
        if r["macs"] > 0 and r.get("dram_bytes") and r["latency_cycles"] > 0
    ]


def roofline(record: dict[str, Any]) -> go.Figure:
    """The layers of a network on the design's roofline, from the record alone.

    x: arithmetic intensity, MACs per byte moved to and from DRAM (a MAC is two ops);
    y: MACs per cycle achieved (the hover adds TOPS at the record's ``clock_ghz``); both
    of one repeat of the layer, log axes (``roofline_points``). Points are coloured by the
    layer's ``bound``: ``memory`` when a level's bandwidth set its latency (the hover names
    it; it may be an on-chip level, below the DRAM roof). Roofs: the design's MACs
    (``peak_macs_per_cycle``) and the DRAM's bytes per cycle times the intensity
    (``dram_bytes_per_cycle``; a stall-free DRAM has none). A record written before it kept
    its roofs shows the layers alone, and a layer that moved no DRAM byte (its activations
    stayed on chip and it has no weights) or has no MACs (a post-processing layer, on the
    post-processing unit) is counted in the subtitle, not drawn.
    """
    title = f"Roofline of {esc(record.get('network', ''))}"
    rows = record.get("layers") or []
    if rows and "dram_bytes" not in rows[0]:
        return empty(f"DRAM bytes per layer: {OLD_RECORD}", title)
    points = roofline_points(record)
    if not points:
        return empty("no MAC layer moved DRAM bytes: no intensity to draw", title)
    notes = ["x: MACs per DRAM byte; y: MACs per cycle (one repeat)"]
    unmapped = sum(1 for r in rows if r["macs"] == 0)
    if unmapped:
        notes.append(f"{unmapped} post-processing layer(s) (no MACs) not drawn")
    if len(points) < len(rows) - unmapped:
        notes.append(
            f"{len(rows) - unmapped - len(points)} layer(s) moved no DRAM byte (not drawn)"
        )
    peak = record.get("peak_macs_per_cycle")
    bandwidth = record.get("dram_bytes_per_cycle")
    if "peak_macs_per_cycle" not in record:
        notes.append(f"roofs: {OLD_RECORD}")
    elif bandwidth is None:
        notes.append("DRAM stall-free: no memory roof")
    fig = _layout(go.Figure(), subtitled(title, esc("; ".join(notes))))
    for trace in _roofline_layers(points, record.get("clock_ghz")):
        fig.add_trace(trace)
    xs = [p["intensity"] for p in points]
    for trace in _roofs(peak, bandwidth, min(xs) / 2, max(xs) * 2):
        fig.add_trace(trace)
    fig.update_xaxes(title="arithmetic intensity (MACs per DRAM byte)", type="log")
    fig.update_yaxes(title="MACs per cycle", type="log")
    fig.update_layout(hovermode="closest", legend=LEGEND_BELOW, margin={"t": 80})
    return fig


def _roofline_layers(points: list[dict[str, Any]], clock: float | None) -> list[go.Scatter]:
    """The layers of a roofline, one trace per ``bound`` (``BOUND_COLORS``)."""
    traces = []
    for bound, color in BOUND_COLORS.items():
        group = [p for p in points if p["row"].get("bound") == bound]
        if not group:
            continue
        traces.append(
            go.Scatter(
                x=[p["intensity"] for p in group],
                y=[p["macs_per_cycle"] for p in group],
                mode="markers",
                name=f"{bound}-bound layers",
                marker={"color": color, "size": 9, "line": {"color": "#222222", "width": 1}},
                hovertext=[_roofline_hover(p, bound, clock) for p in group],
                hovertemplate="%{hovertext}<extra></extra>",
                meta=f"layers:{bound}",
            )
        )
    return traces


def _roofs(peak: float | None, bandwidth: float | None, lo: float, hi: float) -> list[go.Scatter]:
    """The roofs over intensities ``lo`` to ``hi`` (widened to show the ridge): the memory
    roof (``bandwidth`` DRAM bytes per cycle x intensity) up to the ridge, then the compute
    roof (``peak`` MACs per cycle); none that the record lacks."""
    roof = {"color": "#444444", "width": 1.5, "dash": "dash"}
    if peak and bandwidth:
        ridge = peak / bandwidth  # the intensity where the two roofs meet
        lo, hi = min(lo, ridge / 2), max(hi, ridge * 2)
        memory = go.Scatter(
            x=[lo, ridge],
            y=[bandwidth * lo, peak],
            mode="lines",
            line=roof,
            name=f"memory roof: {fmt(bandwidth)} DRAM bytes/cycle",
            hovertemplate=f"memory roof: {fmt(bandwidth)} bytes/cycle x intensity<extra></extra>",
            meta="roof:memory",
        )
        return [memory, _compute_roof(peak, ridge, hi, roof)]
    if peak:
        return [_compute_roof(peak, lo, hi, roof)]
    return []


def _compute_roof(peak: float, lo: float, hi: float, line: dict[str, Any]) -> go.Scatter:
    return go.Scatter(
        x=[lo, hi],
        y=[peak, peak],
        mode="lines",
        line=line,
        name=f"compute roof: {fmt(peak)} MACs/cycle",
        hovertemplate=f"compute roof: {fmt(peak)} MACs/cycle<extra></extra>",
        meta="roof:compute",
    )


def _roofline_hover(point: dict[str, Any], bound: str, clock: float | None) -> str:
    r = point["row"]
    lines = [
        f"<b>{esc(r['name'])}</b> (x{r['count']})",
        esc(r["shape"]),
        f"{fmt(point['intensity'])} MACs per DRAM byte",
        f"{fmt(point['macs_per_cycle'])} MACs per cycle"
        + (f" ({fmt(2 * point['macs_per_cycle'] * clock / 1e3)} TOPS)" if clock else ""),
        f"{esc(bound)}-bound" + (f": {esc(r['bottleneck'])}" if bound == "memory" else ""),
        f"DRAM: {human_bytes(r['dram_bytes'])} per repeat"
        + (f" ({esc(', '.join(r['off_chip']))})" if r.get("off_chip") else ""),
    ]
    return "<br>".join(lines)


# ---- comparisons ---------------------------------------------------------------------------
def compare_fronts(studies: list[Study], x: str, y: str) -> go.Figure:
    """The fronts of several studies (with the same objectives) on two of their objectives:
    per study, the designs no other design of it beats on these two, as a step line. A
    point carries its trial number (``customdata``) and the trace its study (``meta``)."""
    fig = _layout(go.Figure(), f"Pareto fronts: {esc(x)} and {esc(y)}")
    directions = [studies[0].directions[studies[0].objectives.index(m)] for m in (x, y)]
    shown: list[TrialView] = []
    for i, study in enumerate(studies):
        feasible = study.feasible_with((x, y))
        values = [[t.values[x], t.values[y]] for t in feasible]
        keep = (
            pareto.nondominated(pareto.to_minimised_log(values, directions))
            if values
            else np.zeros(0, dtype=bool)
        )
        front = sorted(
            (t for t, k in zip(feasible, keep, strict=True) if k),
            key=lambda t: (t.values[x], t.values[y]),
        )
        shown += front
        fig.add_trace(
            go.Scatter(
                x=[t.values[x] for t in front],
                y=[t.values[y] for t in front],
                mode="markers+lines",
                line={"width": 1.5, "shape": _shape(directions)},
                name=esc(study.name),
                marker={"size": 9, "color": PALETTE[i % len(PALETTE)]},
                customdata=[t.number for t in front],
                hovertext=[f"<b>{esc(study.name)}</b><br>" + hover(study, t) for t in front],
                hovertemplate="%{hovertext}<extra></extra>",
                meta={"study": study.name},
            )
        )
    if not shown:
        return _message(fig, "no feasible design in these studies yet")
    fig.update_xaxes(title=metric_title(x), type=_axis_type(t.values[x] for t in shown))
    fig.update_yaxes(title=metric_title(y), type=_axis_type(t.values[y] for t in shown))
    fig.update_layout(hovermode="closest", clickmode="event", legend=LEGEND_BELOW)
    return fig


def compare_designs(
    designs: list[tuple[str, TrialView]], metrics: Sequence[str]
) -> tuple[go.Figure, go.Figure]:
    """Grouped bars of designs, from their stored records only: their metrics (one panel per
    metric) and their energy by category (all workloads added; linear or log)."""
    labels = [esc(label) for label, _ in designs]
    metrics = [m for m in metrics if any(m in t.metrics for _, t in designs)]
    cols = max(1, len(metrics))
    fig = make_subplots(rows=1, cols=cols, subplot_titles=[esc(m) for m in metrics] or None)
    for j, (label, (_, t)) in enumerate(zip(labels, designs, strict=True)):
        for i, m in enumerate(metrics):
            fig.add_trace(
                go.Bar(
                    x=[label],
                    y=[t.metrics.get(m)],
                    name=label,
                    legendgroup=label,
                    showlegend=i == 0,
                    marker={"color": PALETTE[j % len(PALETTE)]},
                    hovertemplate=f"%{{x}}<br>{esc(m)}: %{{y:.4g}}<extra></extra>",
                ),
                row=1,
                col=i + 1,
            )
    _layout(fig, "Metrics", legend=LEGEND_BELOW, bargap=0.15)
    fig.update_xaxes(showticklabels=False)
    by_cat = _layout(go.Figure(), "Energy by category (all workloads)", barmode="group")
    sums = []
    for _, t in designs:
        total: dict[str, float] = {}
        for r in t.records:
            for c, v in r["energy_pj_by_category"].items():
                total[c] = total.get(c, 0.0) + v
        sums.append(total)
    cats = shown_categories(sums)
    for j, total in enumerate(sums):
        by_cat.add_trace(
            go.Bar(
                x=[esc(c) for c in cats],
                y=[total.get(c, 0.0) for c in cats],
                name=labels[j],
                marker={"color": PALETTE[j % len(PALETTE)]},
                hovertemplate="%{x}: %{y:.4g} pJ<extra>%{fullData.name}</extra>",
            )
        )
    by_cat.update_yaxes(title="energy (pJ)")
    return fig, _with_scale(by_cat, "Energy by category (all workloads)", stacked=False)


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
