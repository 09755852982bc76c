"""Figures of a study's trials: the Pareto fronts (2-D and 3-D), the hypervolume, parallel
coordinates, parameter importance and fronts of several studies, and how a figure samples a
large study (every front point drawn, the rest down-sampled, the count shown).

Points of a study carry their trial number as ``customdata`` (clicks open the design) and
every trace a ``meta`` role: ``front`` (the study's Pareto front, one trace per dataflow),
``feasible`` (the other feasible trials, faded), ``infeasible`` (with their reason),
``staircase`` (the front of the two plotted objectives alone).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import numpy as np
import plotly.graph_objects as go

from magnet.search import pareto
from magnet.search.storage import quiet_optuna
from magnet.search.study import Study, TrialView, has_values, with_values

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial
from magnet.report.theme import (
    INFEASIBLE_COLOR,
    LEGEND_BELOW,
    PALETTE,
    _axis_type,
    _layout,
    _message,
    dataflow_colors,
    empty,
    esc,
    fmt,
    metric_title,
    note,
)

#: Fewest feasible trials parameter importance is computed from.
MIN_IMPORTANCE_TRIALS = 10


#: Most feasible trials importance is computed from (PED-ANOVA takes ~0.3 ms per trial and
#: objective here: the figure stays well under the dashboard's 300 ms).
MAX_IMPORTANCE_TRIALS = 400


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


def sample(
    trials: list[TrialView], limit: int | None = None, numbers: np.ndarray | None = None
) -> list[TrialView]:
    """``trials`` when there are at most ``limit`` (``MAX_POINTS``), else ``limit`` of them in
    their order: a uniform sample (it keeps the points' density), chosen by a fixed scramble
    of the trial numbers (``numbers``: theirs, when the caller has them as an array), so that
    a trial drawn stays drawn as the study grows but for the few a newer trial displaces."""
    limit = MAX_POINTS if limit is None else limit
    if len(trials) <= limit:
        return trials
    if numbers is None:
        numbers = np.fromiter((t.number for t in trials), dtype=np.int64, count=len(trials))
    # the product wraps: a hash of the number
    score = (numbers.astype(np.uint64) * _SCRAMBLE) >> np.uint64(32)
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


def on_front(study: Study, numbers: np.ndarray) -> np.ndarray:
    """bool[trial]: whether each trial of ``numbers`` is on the study's Pareto front."""
    front = study.front_numbers
    return np.isin(numbers, np.fromiter(front, np.int64, len(front)))


def sample_off_front(
    study: Study, trials: list[TrialView], numbers: np.ndarray | None = None
) -> tuple[list[TrialView], str | None]:
    """``trials`` in their order, but of those off the study's Pareto front only a ``sample``
    (every front design kept), and the figure's ``sample_note`` (None: all drawn).
    ``numbers``: the trials' numbers, when the caller has them as an array."""
    if len(trials) <= MAX_POINTS:
        return trials, None
    if numbers is None:
        numbers = np.fromiter((t.number for t in trials), np.int64, len(trials))
    front = on_front(study, numbers)
    off = np.flatnonzero(~front)
    drawn = sample([trials[i] for i in off], numbers=numbers[off])
    if len(drawn) == len(off):
        return trials, None
    kept = front | np.isin(numbers, [t.number for t in drawn])
    said = sample_note(len(drawn), len(off), "designs off the front (every front design)")
    return [trials[i] for i in np.flatnonzero(kept)], said


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


class Split(NamedTuple):
    """A front figure's trials (``_split``)."""

    front: list[TrialView]
    others: list[TrialView]  # the other feasible trials, by number
    infeasible: list[TrialView]  # those with values on the axes
    same: dict[int, list[int]]  # per front trial, the others drawn at its place
    others_numbers: np.ndarray  # the numbers of ``others``
    values: np.ndarray  # [trial, axis]: the values of ``front`` then ``others``


def _split(study: Study, axes: Sequence[str]) -> Split:
    """The front, the other feasible trials and the infeasible ones that have values on
    ``axes``; and per front trial, the other trials drawn at exactly its place (a design
    proposed again, or one equal on these objectives). Those are left out of the others'
    trace (and of the front's, for a second front design at one place) and named in the
    front point's hover, so a click on a front marker can only open the trial it shows.
    The feasible trials are sorted out as arrays (``Study.value_columns``): a big study's
    are 100,000."""
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
    numbers, values = study.value_columns(axes)
    trials = study.feasible_with(axes)
    off = ~on_front(study, numbers)
    twin = off & _rows_in(values, np.array(list(at), dtype=float).reshape(-1, len(axes)))
    for i in np.flatnonzero(twin):
        t = trials[i]
        same[at[tuple(t.values[m] for m in axes)]].append(t.number)
    kept = np.flatnonzero(off & ~twin)
    front_values = np.array([[t.values[m] for m in axes] for t in front], dtype=float)
    return Split(
        front,
        [trials[i] for i in kept],
        infeasible_with(study, axes),
        same,
        numbers[kept],
        np.vstack([front_values.reshape(-1, len(axes)), values[kept]]),
    )


def _rows_in(rows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """bool[row]: whether each row of ``rows`` equals a row of ``table`` (values compared
    as numbers: -0.0 is 0.0)."""
    if not len(table) or not len(rows):
        return np.zeros(len(rows), dtype=bool)

    def keys(a: np.ndarray) -> np.ndarray:
        whole = np.ascontiguousarray(a + 0.0)  # -0.0 + 0.0 is 0.0: one key for both
        return whole.view(np.dtype((np.void, whole.itemsize * whole.shape[1]))).ravel()

    return np.isin(keys(rows), keys(table))


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
    split = _split(study, axes)
    front, others, infeasible, same = split.front, split.others, split.infeasible, split.same
    drawn, crosses = sample(others, numbers=split.others_numbers), sample_infeasible(infeasible)
    for trace in _by_dataflow(study, drawn, axes, "others"):
        fig.add_trace(trace)
    if infeasible:
        fig.add_trace(_infeasible_points(study, crosses, axes))
    if len(split.values):
        fig.add_trace(_staircase(study, split.values, axes))
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
    if not len(split.values) and not infeasible:
        return _message(fig, "no design with values yet")
    for update, k, m in ((fig.update_xaxes, 0, x), (fig.update_yaxes, 1, y)):
        bad = np.fromiter((t.values[m] for t in infeasible), float, len(infeasible))
        update(title=metric_title(m), type=_axis_type(np.concatenate([split.values[:, k], bad])))
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


def _staircase(study: Study, xy: np.ndarray, axes: Sequence[str]) -> go.Scatter:
    """The front of the feasible trials (``xy``: their values on ``axes``) on these two
    objectives alone, as a dotted staircase (the study's front is over all its
    objectives)."""
    directions = [study.directions[study.objectives.index(m)] for m in axes]
    stairs = xy[pareto.nondominated(pareto.to_minimised_log(xy, directions))]
    stairs = stairs[np.lexsort((stairs[:, 1], stairs[:, 0]))]  # by x, then y
    return go.Scatter(
        x=stairs[:, 0].tolist(),
        y=stairs[:, 1].tolist(),
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
    split = _split(study, chosen)
    front, others, same = split.front, split.others, split.same
    if not front:
        return _message(fig, "no feasible design yet")
    drawn = sample(others, numbers=split.others_numbers)
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
    numbers, _ = study.value_columns(study.objectives)
    trials, sampled = sample_off_front(study, study.feasible_with(study.objectives), numbers)
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
