"""The figures of a study, by name: the one list the dashboard serves
(``/api/studies/NAME/figures/KIND``) and a report draws.

A ``FigureKind`` says how the figure is made from a study and a query, what the query may
hold (``objective`` or ``param`` values, by name), which of its values must differ (the x and
y of a front or a contour), what it depends on when that is less than the whole study, and
which instances of it a report draws (``in_report``: a front per pair of objectives, a
history per objective; none of a 3-D front for fewer than three objectives, of a contour
for fewer than two varied parameters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from magnet.report import explore, study_figures
from magnet.search.study import Study

#: A figure's query: its values by name (``x``, ``y``, ``objective``, ...).
Query = dict[str, str]


def _once(name: str) -> Callable[[Study], list[tuple[str, Query]]]:
    """A report's instances of a figure drawn once, with its defaults."""
    return lambda study: [(name, {})]


@dataclass(frozen=True)
class FigureKind:
    """A figure of a study (see the module docstring)."""

    make: Callable[[Study, Query], Any]
    in_report: Callable[[Study], list[tuple[str, Query]]]
    query: tuple[tuple[str, str], ...] = ()
    distinct: tuple[str, ...] = ()
    #: What the figure depends on, if not every change of the study (kept while it is equal)
    basis: Callable[[Study], Any] | None = None


OBJECTIVE = (("objective", "objective"),)
#: Every study figure, in the order a report draws them.
FIGURES: dict[str, FigureKind] = {
    "front": FigureKind(
        lambda s, q: study_figures.front_2d(s, q.get("x"), q.get("y")),
        lambda s: [(f"front:{x}:{y}", {"x": x, "y": y}) for x, y in combinations(s.objectives, 2)],
        (("x", "objective"), ("y", "objective")),
        ("x", "y"),
    ),
    "front3d": FigureKind(
        lambda s, q: study_figures.front_3d(s, [q.get("x"), q.get("y"), q.get("z")]),
        lambda s: [("front3d", {})] if len(s.objectives) >= 3 else [],
        (("x", "objective"), ("y", "objective"), ("z", "objective")),
        ("x", "y", "z"),
    ),
    "hypervolume": FigureKind(lambda s, q: study_figures.hypervolume(s), _once("hypervolume")),
    "importance": FigureKind(
        lambda s, q: study_figures.importance(s),
        _once("importance"),
        basis=lambda s: tuple(t.number for t in study_figures.importance_basis(s)),
    ),
    "history": FigureKind(
        lambda s, q: explore.history(s, q.get("objective")),
        lambda s: [(f"history:{o}", {"objective": o}) for o in s.objectives],
        OBJECTIVE,
    ),
    "ecdf": FigureKind(lambda s, q: explore.ecdf(s), _once("ecdf")),
    "slices": FigureKind(
        lambda s, q: explore.slices(s, q.get("objective")), _once("slices"), OBJECTIVE
    ),
    "contour": FigureKind(
        lambda s, q: explore.contour(s, q.get("objective"), q.get("x"), q.get("y")),
        lambda s: [("contour", {})] if len(explore.varied_params(s)) >= 2 else [],
        (*OBJECTIVE, ("x", "param"), ("y", "param")),
        ("x", "y"),
    ),
    "timeline": FigureKind(lambda s, q: explore.timeline(s), _once("timeline")),
    "parallel": FigureKind(
        lambda s, q: study_figures.parallel(s, q.get("color")),
        _once("parallel"),
        (("color", "objective"),),
    ),
}
