"""The dashboard: a read-only Starlette app over one study storage.

Pages (Jinja2, autoescaped; data for scripts as escaped JSON, never inline code):

    /                                     the studies, live
    /studies/NAME                         a study: fronts, hypervolume, parameters, trials
    /studies/NAME/trials/N                a design: breakdowns, layers, mappings, commands
    /studies/NAME/trials/N/arch.yaml      its architecture (for magnet evaluate --arch)
    /studies/NAME/trials/N/mappings/I.yaml  its mappings on workload I (--mapping-file)
    /compare?study=A&study=B              fronts of studies overlaid
    /compare?design=N:STUDY&design=...    designs side by side

    /studies/NAME/trials.csv (.json), /studies/NAME/front.csv (.json)
                                          as ``magnet export [--front]`` writes them

JSON: /api/studies, /api/studies/NAME, /api/studies/NAME/pareto (as ``magnet pareto
--json``), /api/studies/NAME/trials, /api/studies/NAME/trials/N,
/api/studies/NAME/rows?set=&sort=&order=&offset=&limit=&q= (a page of the study page's
table, sorted, filtered and paged here: ``Dashboard.api_table``),
/api/studies/NAME/figures/KIND (see ``FIGURES``; its query names objectives or parameters,
checked against the study).

NAME is one path segment (``study_segment``: ``runs/3`` is ``runs%2F3``), routed as sent
(``RawPath``). What is missing (a study, a trial, a workload, a figure, a page) is a 404
naming it; a bad query value, or a query key the address does not take, a 400 naming it and
what is allowed (``check_query``).

Only GET; files only from a fixed list made at start (the package's own assets and its
vendored plotly.js strict build, which needs no eval, its factory in parentheses:
``eager_plotly``); every response carries a
Content-Security-Policy that allows nothing but this server (no eval, no inline script).
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import math
import threading
import typing
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
from starlette.applications import Starlette
from starlette.convertors import Convertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from magnet.dashboard.store import NotFound, Refused, Store, clip, whole_number
from magnet.errors import MagnetError
from magnet.perf import paused_gc
from magnet.report import breakdowns, explore, study_figures, theme
from magnet.report.catalog import FIGURES, FigureKind
from magnet.report.design_page import (
    DesignView,
    design_figures,
    design_view,
    mappings_yaml,
    safe_file_name,
)
from magnet.report.html import (
    ASSETS,
    cell_text,
    dumps,
    environment,
    param_cells,
    param_names,
    plain_dumps,
    plotly_js,
    plotly_js_version,
    trial_row,
)
from magnet.search import pareto
from magnet.search.export import PIECE_TRIALS, export_chunks
from magnet.search.study import Study, TrialView, pareto_json

HERE = Path(__file__).resolve().parent
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
    "worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
#: The longest a page may wait between looks for changes (``?every=SECONDS``).
EVERY_MAX_SECONDS = 86400
#: What closes a trial's row (``Dashboard._rows``: its JSON without its closing brace) and
#: separates it from the next, by whether the trial is on the front.
_IN_FRONT, _NOT_IN_FRONT = ', "front": true}, ', ', "front": false}, '
#: A route's function.
Endpoint = Callable[[Request], Any]  # a Response, or a coroutine of one


#: Study names a browser takes for "here" and "up" in a URL path, however they are encoded.
DOT_SEGMENTS = (".", "..")
#: What a path as sent keeps unencoded when it is routed (``RawPath``): RFC 3986's path
#: characters and the percent sign of the escapes already there.
PATH_SAFE = "/%!$&'()*+,;=:@"
#: The vendored plotly.js calls its factory, an arrow function given as an argument, as it
#: loads; V8 compiles such a function when it is called, on the page's main thread (the whole
#: bundle parsed again: 0.2 s of a new browser's 1 s in plotly.js). In parentheses it is the same
#: function, which V8 compiles at once, on the thread that parses the script as it downloads.
#: (Its opening and its end, as vendored and as served.)
PLOTLY_FACTORY = (', () => {\n"use strict";var Plotly=', ', (() => {\n"use strict";var Plotly=')
PLOTLY_END = ("return Plotly;\n}));", "return Plotly;\n})));")
#: Files are asked for with their version in the URL (?v=...): kept by the browser.
CACHED = {"Cache-Control": "public, max-age=31536000, immutable"}
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def study_segment(name: str) -> str:
    """A study name as one segment of a URL path: percent-encoded, its ``/`` and ``~``
    included; ``.`` and ``..``, which a browser resolves as "here" and "up" however they are
    encoded, as ``~.`` and ``~..`` (a name's own ``~`` is ``%7E``, so they are never a
    name's). dashboard.js's ``studyPath`` does the same."""
    if name in DOT_SEGMENTS:
        return "~" + name
    return quote(name, safe="").replace("~", "%7E")


def segment_text(segment: str) -> str:
    """The text a path segment as sent stands for (``study_segment`` read back)."""
    if segment[:1] == "~" and segment[1:] in DOT_SEGMENTS:
        return segment[1:]
    return unquote(segment)


def study_url(name: str) -> str:
    """The URL of a study's page."""
    return "/studies/" + study_segment(name)


def design_url(name: str, number: int) -> str:
    """The URL of a design's page (a trial of a study)."""
    return f"{study_url(name)}/trials/{number}"


def eager_plotly(bundle: str) -> str:
    """plotly.js as the dashboard serves it: ``bundle`` with its factory in parentheses
    (``PLOTLY_FACTORY``), the same code compiled sooner; a bundle without the vendored one's
    wrapper as it is."""
    (start, eager_start), (end, eager_end) = PLOTLY_FACTORY, PLOTLY_END
    if bundle.count(start) != 1 or not bundle.endswith(end):
        return bundle
    return bundle.replace(start, eager_start).removesuffix(end) + eager_end


def _assets() -> dict[str, Path]:
    """The files /static serves: a fixed list, made once (no path from a request is read)."""
    files = {p.name: p for p in (HERE / "static").iterdir() if p.suffix in TYPES}
    for name in ("magnet.js", "magnet.css"):
        files[name] = ASSETS / name
    return files


class Dashboard:
    """The routes over one ``Store``."""

    def __init__(self, storage: str | None, poll_seconds: float = 3.0):
        self.store = Store(storage)
        #: set while the storage is read at the server's start (``read_all``): a page asked
        #: meanwhile says so (``WhileReading``)
        self.reading = threading.Event()
        self.read_error: MagnetError | None = None
        self.poll = poll_seconds
        self.files = {name: path.read_bytes() for name, path in _assets().items()}
        self.versions = {
            name: hashlib.sha256(body).hexdigest()[:12] for name, body in self.files.items()
        }
        bundle = plotly_js()
        #: the vendored plotly.js strict build as served (``eager_plotly``; made once: 5 MB)
        self.plotly_body = eager_plotly(bundle).encode()
        self.env = environment(HERE / "templates")
        self.env.globals.update(
            study_url=study_url,
            design_url=design_url,
            storage=self.store.label,
            poll=poll_seconds,
            static=lambda name: f"/static/{name}?v={self.versions[name]}",
            plotly_url=f"/assets/plotly.min.js?v={plotly_js_version(bundle)}-strict",
        )

    # ---- helpers -----------------------------------------------------------------------
    def page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        """A page rendered from its template (autoescaped) with ``context``."""
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status)

    @staticmethod
    def json(data: Any, status: int = 200) -> Response:
        """``data`` as a JSON response (escaped for HTML, ``dumps``)."""
        return Response(dumps(data), status_code=status, media_type="application/json")

    def study(self, request: Request) -> Study:
        """The study the request's path names (404 if none)."""
        return self.store.study(request.path_params["name"])

    def trial(self, request: Request) -> tuple[Study, TrialView]:
        """The study and the trial the request's path names (404 if none)."""
        return self.store.trial(request.path_params["name"], request.path_params["n"])

    def summary(self, study: Study) -> dict[str, Any]:
        """A study's summary as the index lists it (kept until the study changes)."""

        def make() -> dict[str, Any]:
            out = study.summary()
            out.update(
                url=study_url(study.name),
                version=self.store.version_of(study),
                dataflows=study.space.dataflows(),
                params=param_names(study),
                description=study.space.description,
            )
            return out

        return self.store.memo((study.name, "summary"), make, study)

    def design(self, study: Study, trial: TrialView) -> tuple[DesignView, dict[str, Any]]:
        """A design's view and figures (kept while the storage is the same: a finished trial does
        not change)."""

        def make() -> tuple[DesignView, dict[str, Any]]:
            view = design_view(study, trial)
            return view, design_figures(view)

        # a design does not change once its trial finished: kept while the study grows
        key = (study.name, "design", trial.number, trial.state)
        return self.store.memo(key, make)

    def read_all(self) -> None:
        """``warm``, with ``reading`` set meanwhile; its ``MagnetError`` (a damaged journal)
        kept in ``read_error`` (a page asked later shows it, as the storage is read again)."""
        self.reading.set()
        try:
            self.warm()
        except MagnetError as exc:
            self.read_error = exc
        finally:
            self.reading.clear()
            # what was read stays for the server's life: the collector need not walk it
            # again and again (a full collection over a 17,000-trial study took 295 ms)
            gc.freeze()

    def warm(self) -> int:
        """Read every study and make its rows now (before serving: a big journal takes
        seconds to read once, and no request should wait for that), and what every figure
        is drawn from (the objectives' value columns, the dataflows run: 0.12 s of 100,000
        trials, which the first figure asked for took to make, the front then 300 ms); how
        many studies."""
        studies = self.store.studies()
        for study in studies:
            self.summary(study)
            self._rows(study, study.trials())
            study.value_columns(study.objectives)
            study.dataflows_run  # noqa: B018 (made now)
        return len(studies)

    # ---- pages -------------------------------------------------------------------------
    def index(self, request: Request) -> Response:
        """``/``: the studies, live."""
        return self.page("index.html", studies=self.api_rows(), exists=self.store.exists())

    def study_page(self, request: Request) -> Response:
        """``/studies/NAME``: a study's fronts, hypervolume, parameters and trials."""
        study = self.study(request)
        varied = explore.varied_params(study)
        rows = page_size(request.query_params, "rows", "rows (per page of the table)")
        return self.page(
            "study.html", study=study, summary=self.summary(study), varied=varied, rows=rows
        )

    def design_page(self, request: Request) -> Response:
        """``/studies/NAME/trials/N``: a design's breakdowns, layers, mappings and commands."""
        study, trial = self.trial(request)
        view, figures = self.design(study, trial)
        url = design_url(study.name, trial.number)
        downloads = {
            "arch": f"{url}/arch.yaml" if view.arch_yaml is not None else None,
            "mappings": [f"{url}/mappings/{w.index}.yaml" for w in view.workloads],
        }
        return self.page(
            "design.html", study=study, view=view, figures=figures, downloads=downloads
        )

    def arch_yaml(self, request: Request) -> Response:
        """``.../arch.yaml``: the design's architecture, as ``magnet evaluate --arch`` reads it."""
        study, trial = self.trial(request)
        view, _ = self.design(study, trial)
        if view.arch_yaml is None:
            raise NotFound(f"the architecture of trial {trial.number} cannot be built here")
        return self.download(view.arch_yaml, view.arch_file)

    def mappings_yaml(self, request: Request) -> Response:
        """``.../mappings/I.yaml``: the design's mappings on workload I (``--mapping-file``)."""
        study, trial = self.trial(request)
        view, _ = self.design(study, trial)
        given = request.path_params["i"]
        index = whole_number(given)
        count = len(view.workloads)
        if index is None or index >= count:
            has = (
                f"its workloads are numbered 0 to {count - 1}"
                if count
                else f"it has no mappings: it is {trial.status}"
            )
            raise NotFound(
                f"no workload {clip(given)} in trial {trial.number} of study {study.name!r} ({has})"
            )
        w = view.workloads[index]
        return self.download(mappings_yaml(w.record), w.mappings_file)

    @staticmethod
    def download(text: str, name: str) -> Response:
        """``text`` as a YAML file to save as ``name``."""
        return Response(
            text,
            media_type="application/yaml; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def compare(self, request: Request) -> Response:
        """``/compare``: designs side by side, or the fronts of studies overlaid."""
        designs = [d for d in request.query_params.getlist("design") if d]
        if designs:
            return self.compare_designs(designs)
        return self.compare_studies(request)

    def compare_designs(self, specs: list[str]) -> Response:
        """Designs given as ``NUMBER:STUDY``, side by side."""
        chosen = []
        for spec in specs:
            number, colon, name = spec.partition(":")
            if whole_number(number) is None or not colon:
                raise Refused(f"design={clip(spec)!r} is not a design: give NUMBER:STUDY")
            chosen.append(self.store.trial(name, number))
        metrics: list[str] = []
        for study, _ in chosen:
            metrics += [o for o in study.objectives if o not in metrics]
        metrics += [m for m in ("edp", "tops_per_w", "utilization") if m not in metrics]
        labelled = [(f"#{t.number} {s.name}", t) for s, t in chosen]
        bars, by_cat = breakdowns.compare_designs(labelled, metrics)
        figures = {"metrics": theme.figure_json(bars), "category": theme.figure_json(by_cat)}
        return self.page(
            "compare.html", mode="designs", chosen=chosen, metrics=metrics, figures=figures
        )

    def compare_studies(self, request: Request) -> Response:
        """The fronts of the chosen studies overlaid on two of their objectives, and their
        hypervolumes against one reference point."""
        names = [n for n in request.query_params.getlist("study") if n]
        studies = [self.store.study(n) for n in names]
        kinds = {tuple(zip(s.objectives, s.directions, strict=True)) for s in studies}
        if len(kinds) > 1:
            listed = "; ".join(
                f"{s.name}: {', '.join(s.objectives)}" for s in studies[: len(kinds) + 1]
            )
            raise Refused(
                "these studies have different objectives (or directions), so their fronts and "
                f"hypervolumes cannot be compared ({listed}); compare studies of one kind"
            )
        axes = studies[0].objectives if studies else []
        x = request.query_params.get("x") or (axes[0] if axes else "")
        y = request.query_params.get("y") or (axes[1] if len(axes) > 1 else "")
        if studies:
            for value in filter(None, (x, y)):  # y is "" for studies of one objective
                if value not in axes:
                    raise Refused(f"unknown objective {clip(value)!r}; allowed: {', '.join(axes)}")
            if len(axes) > 1 and x == y:
                raise Refused(f"x and y are both {x!r}: choose two different objectives")
        figures, reference, rows = {}, None, []
        if studies:
            if len(axes) > 1:
                figures["fronts"] = theme.figure_json(study_figures.compare_fronts(studies, x, y))
            reference, volumes = common_hypervolumes(studies)
            rows = [
                {**self.summary(s), "common_hypervolume": v}
                for s, v in zip(studies, volumes, strict=True)
            ]
        return self.page(
            "compare.html",
            mode="studies",
            every=self.store.names(),
            names=names,
            studies=rows,
            axes=axes,
            x=x,
            y=y,
            reference=reference,
            figures=figures,
        )

    # ---- downloads ---------------------------------------------------------------------
    def export(self, request: Request) -> Response:
        """``trials.csv``, ``trials.json``, ``front.csv``, ``front.json``: what ``magnet export
        [--front] -o FILE`` writes."""
        study = self.study(request)
        what, kind = request.path_params["what"], request.path_params["kind"]
        chunks = export_chunks(study, kind, what == "front", self.store.feed(study.name).exports)
        name = f"{safe_file_name(study.name)}-{what}.{kind}"
        media = "text/csv" if kind == "csv" else "application/json"
        return StreamingResponse(  # a trial at a time: a big study's download is never held
            chunks,
            media_type=f"{media}; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # ---- JSON --------------------------------------------------------------------------
    def api_rows(self) -> list[dict[str, Any]]:
        """Every study's summary (``/api/studies``)."""
        return [self.summary(s) for s in self.store.studies()]

    def api_studies(self, request: Request) -> Response:
        """``/api/studies``: every study's summary."""
        return self.json(self.api_rows())

    def api_study(self, request: Request) -> Response:
        """``/api/studies/NAME``: a study's summary."""
        return self.json(self.summary(self.study(request)))

    def api_pareto(self, request: Request) -> Response:
        """``/api/studies/NAME/pareto``: the front as ``magnet pareto --json`` prints it."""
        return self.json(pareto_json(self.study(request)))

    def api_trials(self, request: Request) -> Response:
        """``/api/studies/NAME/trials``: every trial's row (the page's table asks ``rows``),
        streamed ``PIECE_TRIALS`` at a time (100,000 trials are 74 MB of JSON: never held
        whole, nor twice)."""
        study = self.study(request)
        trials = study.trials()

        def pieces() -> Iterator[bytes]:
            yield b"["
            for i in range(0, len(trials), PIECE_TRIALS):
                text = self.rows_text(study, trials[i : i + PIECE_TRIALS])
                yield ((", " if i else "") + text).encode()  # one piece: each is a thread hop
            yield b"]"

        return StreamingResponse(pieces(), media_type="application/json")

    def _rows(self, study: Study, trials: list[TrialView]) -> list[tuple[TrialView, str, str]]:
        """Each trial with its row: its ``trial_row`` as JSON without its ``front`` flag and
        its closing brace, and the words its cells show (lower case, for the table's filter);
        made once per read of the trial (a finished trial's, once: only that flag can
        change)."""
        cache = self.store.feed(study.name).rows
        out = []
        with paused_gc():  # texts of every trial, kept: the collector would walk them all
            for t in trials:
                known = cache.get(t.number)
                if known is None or known[0] is not t:
                    row = trial_row(t, study)
                    del row["front"]
                    known = (t, plain_dumps(row)[:-1], shown_words(row, study.space.template))
                    cache[t.number] = known
                out.append(known)
        return out

    def rows_text(self, study: Study, trials: list[TrialView]) -> str:
        """The ``trial_row`` of each of ``trials`` as JSON (``_rows``), their ``front`` flags
        included, separated by commas: a JSON list's items (100,000 trials' rows, 74 MB, in
        one join of their parts: 18 % faster than a string made for each)."""
        front = study.front_numbers
        parts: list[str] = []
        for t, text, _ in self._rows(study, trials):
            parts += (text, _IN_FRONT if t.number in front else _NOT_IN_FRONT)
        return "".join(parts)[:-2]

    @staticmethod
    def json_text(text: str, status: int = 200) -> Response:
        """JSON text already made, as a response."""
        return Response(text, status_code=status, media_type="application/json")

    def api_table(self, request: Request) -> Response:
        """``/api/studies/NAME/rows``: a page of the study page's table, sorted and filtered
        here (a study of 100,000 trials is never sent whole): of the trials of ``set``
        (``TABLE_SETS``) whose row holds every word of ``q``, sorted by column ``sort``
        (``order`` ``asc`` or ``desc``; a trial without a value last either way), ``limit``
        (at most ``MAX_PAGE``) from ``offset``; with how many there are and the study's
        version."""
        study, version = self.store.snapshot(request.path_params["name"])
        q = request.query_params
        which, sort, order = q.get("set", "front"), q.get("sort", "number"), q.get("order", "asc")
        columns = table_columns(study)
        for key, value, allowed in (
            ("set", which, TABLE_SETS),
            ("sort", sort, columns),
            ("order", order, ("asc", "desc")),
        ):
            if value not in allowed:
                raise Refused(f"unknown {key} {clip(value)!r}; allowed: {', '.join(allowed)}")
        offset, limit = page_number(q, "offset", 0), page_size(q, "limit", "limit")
        words = tuple(q.get("q", "").lower().split())
        numbers = self.store.memo(
            (study.name, "table", which, sort, order, words),
            lambda: self.table_order(study, which, sort, order == "desc", words),
            study,
        )
        page = [study.trial(int(n)) for n in numbers[offset : offset + limit]]
        head = dumps({"version": version, "total": len(numbers), "offset": offset, "limit": limit})
        return self.json_text(f'{head[:-1]}, "rows": [{self.rows_text(study, page)}]}}')

    def table_order(
        self, study: Study, which: str, sort: str, descending: bool, words: tuple[str, ...]
    ) -> np.ndarray:
        """The numbers of the trials of set ``which`` whose row holds every one of ``words``,
        sorted by column ``sort`` (see ``api_table``)."""
        trials = {"all": study.trials, "feasible": study.feasible, "front": study.pareto_front}[
            which
        ]()
        if words:  # the words of its cells, and "front" on a front design's (its badge)
            shown = [
                f"{said} front" if t.number in study.front_numbers else said
                for t, _, said in self._rows(study, trials)
            ]
            trials = [
                t for t, said in zip(trials, shown, strict=True) if all(w in said for w in words)
            ]
        return sorted_numbers(trials, column_value(study, sort), descending)

    def api_trial(self, request: Request) -> Response:
        """``/api/studies/NAME/trials/N``: a trial with its records."""
        study, trial = self.trial(request)
        data = trial.to_dict(with_records=True)
        data.update(
            feasible=trial.feasible,
            front=study.on_front(trial.number),
            started=None if trial.started is None else trial.started.isoformat(),
            finished=None if trial.finished is None else trial.finished.isoformat(),
            url=design_url(study.name, trial.number),
        )
        return self.json(data)

    def api_figure(self, request: Request) -> Response:
        """``/api/studies/NAME/figures/KIND``: a figure as JSON (``FIGURES``), its query checked."""
        study = self.study(request)
        name = request.path_params["kind"]
        kind = FIGURES.get(name)
        if kind is None:
            raise NotFound(f"no figure {clip(name)!r}; allowed: {', '.join(FIGURES)}")
        query = self.figure_query(study, kind, request)

        def make() -> dict[str, Any]:
            fig = theme.figure_json(kind.make(study, query))
            # the user's zoom, camera and legend choices survive live updates of one view
            fig["layout"]["uirevision"] = f"{name}?" + "&".join(
                f"{k}={v}" for k, v in sorted(query.items())
            )
            # a trace keeps its identity (and the user's legend choice) across updates
            seen: set[str] = set()
            for i, trace in enumerate(fig["data"]):
                label = f"{trace.get('meta', '')}\n{trace.get('name', i)}"
                uid = "t" + hashlib.sha256(label.encode()).hexdigest()[:12]
                trace["uid"] = uid if uid not in seen else f"{uid}{i}"
                seen.add(trace["uid"])
            return fig

        key: tuple[Any, ...] = (study.name, "figure", name, tuple(sorted(query.items())))
        if kind.basis is not None:
            key += (kind.basis(study),)
        # kept as JSON text: a figure asked again is sent, not serialised again (~1 MB)
        text = self.store.memo(key, lambda: dumps(make()), study if kind.basis is None else None)
        return self.json_text(text)

    @staticmethod
    def figure_query(study: Study, kind: FigureKind, request: Request) -> dict[str, str]:
        """The query of a figure, each value checked against the study (400 if unknown)."""
        check_query(request, [key for key, _ in kind.query])
        allowed = {"objective": study.objectives, "param": explore.varied_params(study)}
        query = {}
        for key, what in kind.query:
            value = request.query_params.get(key)
            if not value:
                continue
            if value not in allowed[what]:
                raise Refused(
                    f"unknown {what} {clip(value)!r} for {key}; allowed: "
                    + (", ".join(allowed[what]) or "none (no parameter varies in this study)")
                )
            query[key] = value
        given = {k: query[k] for k in kind.distinct if k in query}
        if len(set(given.values())) < len(given):
            raise Refused(
                f"{', '.join(given)} must all differ: "
                + ", ".join(f"{k}={v}" for k, v in given.items())
            )
        return query

    # ---- files -------------------------------------------------------------------------
    async def static(self, request: Request) -> Response:
        """``/static/NAME``: one of the dashboard's own files (a fixed list, in memory: served
        on the event loop, at once even while the storage is read)."""
        name = request.path_params["file"]
        body = self.files.get(name)
        if body is None:
            raise NotFound(f"no file {name!r}")
        return Response(body, media_type=TYPES[Path(name).suffix], headers=CACHED)

    async def plotly(self, request: Request) -> Response:
        """``/assets/plotly.min.js``: the vendored plotly.js strict build (``eager_plotly``; in
        memory, served on the event loop: not read and encoded again for each new browser)."""
        return Response(self.plotly_body, media_type=TYPES[".js"], headers=CACHED)

    # ---- errors ------------------------------------------------------------------------
    def error(self, request: Request, status: int, title: str, message: str) -> Response:
        """The error page (or JSON, for the API) with ``status``."""
        if request.url.path.startswith("/api/"):
            return self.json({"error": message}, status)
        return self.page("error.html", status, title=title, message=message, code=status)

    def not_found(self, request: Request, exc: Exception) -> Response:
        """404: an unknown study, trial or figure."""
        return self.error(request, 404, "Not found", str(exc))

    def refused(self, request: Request, exc: Exception) -> Response:
        """400: a request that cannot be answered as asked, with why."""
        return self.error(request, 400, "Cannot show this", str(exc))

    def http_error(self, request: Request, exc: Exception) -> Response:
        """Starlette's own HTTP errors, on the error page."""
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            path = request.url.path
            hint = ""
            if path.startswith(("/studies/", "/api/studies/")):
                hint = " (a study name is one part of the path: its '/' is written %2F)"
            return self.error(request, 404, "Not found", f"no page {path}{hint}")
        return self.error(request, exc.status_code, "Not allowed", str(exc.detail))

    def storage_error(self, request: Request, exc: Exception) -> Response:
        """500: the storage cannot be read (a ``MagnetError`` naming it)."""
        return self.error(request, 500, "Cannot read the study storage", str(exc))

    def crash(self, request: Request, exc: Exception) -> Response:
        """500: anything else, on the error page (the server logs the traceback)."""
        # the server logs the traceback (Starlette raises the error on after this page)
        return self.error(
            request,
            500,
            "Something went wrong",
            f"{type(exc).__name__}: {exc} (the storage may be damaged or still being written; "
            "see the dashboard's terminal)",
        )


#: The trials the study page's table shows (``Dashboard.api_table``), and rows per page.
TABLE_SETS = ("front", "feasible", "all")
PAGE = 100
MAX_PAGE = 1000


def table_columns(study: Study) -> list[str]:
    """The columns of a study's table a page can be sorted by, in the table's order: the
    number, the status, each objective, the dataflow, each varied parameter, the reason."""
    return ["number", "status", *study.objectives, "dataflow", *param_names(study), "reason"]


def column_value(study: Study, column: str) -> Callable[[TrialView], Any]:
    """A trial's value in ``column`` of its study's table (None: it has none)."""
    if column in ("number", "status", "dataflow", "reason"):
        return lambda t: getattr(t, column)
    if column in study.objectives:
        return lambda t: t.values.get(column)
    return lambda t: t.params.get(column)


def shown_words(row: dict[str, Any], template: str) -> str:
    """What a ``trial_row``'s cells show in the study page's table, lower case: its number,
    status, objective values, dataflow, parameters (sizes as printed: the design's
    ``template`` says which are sizes) and reason."""
    cells = [
        str(row["number"]),
        row["status"],
        *(cell_text(v) for v in row["values"].values()),
        row["dataflow"] or "",
        *(param_cells(template, k, v)[0] for k, v in row["params"].items()),
        row["reason"] or "",
    ]
    return " ".join(cells).lower()


def sorted_numbers(
    trials: list[TrialView], value: Callable[[TrialView], Any], descending: bool
) -> np.ndarray:
    """The numbers of ``trials`` sorted by ``value`` (``sort_key``; ties by number, the
    whole order reversed when ``descending``), those without a value (None) last in their
    order. Finite numbers alone are sorted by numpy (100,000 trials: 60 ms, not 300)."""
    keyed = [(value(t), t.number) for t in trials]
    missing = [n for v, n in keyed if v is None]
    if all(v is None or type(v) in (int, float) for v, _ in keyed):
        shown = [(v, n) for v, n in keyed if v is not None]
        keys = np.array([v for v, _ in shown], dtype=float)
        if np.isfinite(keys).all():
            numbers = np.array([n for _, n in shown], dtype=np.int64)
            order = numbers[np.lexsort((numbers, keys))]
            ordered = order[::-1] if descending else order
            return np.concatenate([ordered, np.array(missing, dtype=np.int64)])
    ranked = sorted(((sort_key(v), n) for v, n in keyed if v is not None), reverse=descending)
    return np.array([n for _, n in ranked] + missing, dtype=np.int64)


def sort_key(value: Any) -> tuple[int, float | str]:
    """A table value's place in a sort: numbers first, by value, then text, alphabetically."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value))
    return (1, str(value).lower())


def page_number(query: Any, key: str, default: int) -> int:
    """The whole number ``query`` gives for ``key`` (``default`` when it gives none)."""
    given = query.get(key)
    if given is None:
        return default
    number = whole_number(given)
    if number is None:
        raise Refused(f"{key} must be a whole number, not {clip(given)!r}")
    return number


def page_size(query: Any, key: str, said: str) -> int:
    """The rows per page of the table ``query`` gives for ``key`` (``said``, in a refusal):
    1 to ``MAX_PAGE`` (``PAGE`` when it gives none)."""
    size = page_number(query, key, PAGE)
    if not 1 <= size <= MAX_PAGE:
        raise Refused(f"{said} must be 1 to {MAX_PAGE}, not {size}")
    return size


def check_query(request: Request, keys: Sequence[str], many: Sequence[str] = ()) -> None:
    """Refuse (400) a query key ``request``'s address does not take (``keys``; ``many``: those
    it takes more than once), a key given twice that it takes once, and ``every`` (how often
    a page looks for changes) that is not a number of seconds in (0, 1 day]."""
    items = request.query_params.multi_items()
    takes = [*keys, *many]
    for key, _ in items:
        if key not in takes:
            raise Refused(
                f"unknown query parameter {clip(key)!r} for {clip(request.url.path, 120)}; "
                + (f"it takes: {', '.join(takes)}" if takes else "it takes none")
            )
    for key, count in Counter(k for k, _ in items).items():
        if count > 1 and key not in many:
            raise Refused(f"query parameter {key!r} is given {count} times; give it once")
    every = request.query_params.get("every")
    if every is not None:
        try:
            seconds = float(every)
        except ValueError:
            seconds = math.nan
        if not 0 < seconds <= EVERY_MAX_SECONDS:  # nan and inf are refused too
            raise Refused(
                "every (how often the page looks for changes) must be a number of seconds "
                f"above 0 and at most {EVERY_MAX_SECONDS}, not {clip(every)!r}"
            )


def _query(endpoint: Endpoint, keys: Sequence[str] = (), many: Sequence[str] = ()) -> Endpoint:
    """``endpoint`` with its query checked first (``check_query``); a coroutine stays one
    (Starlette runs it on the event loop, not on a thread of its pool)."""
    if inspect.iscoroutinefunction(endpoint):

        async def checked_async(request: Request) -> Response:
            check_query(request, keys, many)
            return typing.cast(Response, await endpoint(request))

        return checked_async

    def checked(request: Request) -> Response:
        check_query(request, keys, many)
        return typing.cast(Response, endpoint(request))

    return checked


class _Choice(Convertor[str]):
    """A path segment that is one of a few words (``regex``: them, joined by ``|``)."""

    regex = ""

    def convert(self, value: str) -> str:
        """The segment as it is."""
        return value

    def to_string(self, value: str) -> str:
        """The segment as it is."""
        return value


class _Export(_Choice):
    """``{what:export}``: all the trials or the front."""

    regex = "trials|front"


class _Format(_Choice):
    """``{kind:format}``: a download's format."""

    regex = "csv|json"


class _Segment(Convertor[str]):
    """``{name:segment}``: one segment of the path as sent, read as ``segment_text`` (a study
    name's ``/`` arrives as ``%2F``, inside its segment: ``RawPath``)."""

    regex = "[^/]+"

    def convert(self, value: str) -> str:
        """The text the segment stands for."""
        return segment_text(value)

    def to_string(self, value: str) -> str:
        """The text as a segment."""
        return study_segment(value)


def _convertors() -> None:
    """``{name:segment}`` (a study name, a trial number, a file: one segment, decoded),
    ``{what:export}`` and ``{kind:format}`` (the downloads)."""
    register_url_convertor("segment", _Segment())
    register_url_convertor("export", _Export())
    register_url_convertor("format", _Format())


class RawPath:
    """Routes a request on its path as sent (``raw_path``), still percent-encoded: Starlette
    routes on the decoded path, where the study ``a/b`` (``/studies/a%2Fb``) would be two
    segments and ``/api/studies/runs%2F3%2Fpareto`` the front of study ``runs/3``. Each
    segment is then decoded once, by its convertor (``_Segment``)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI call: the wrapped app's, with the path as sent."""
        if scope["type"] == "http":
            raw = scope.get("raw_path") or scope["path"].encode()
            scope = dict(scope, path=quote(raw, safe=PATH_SAFE))
        await self.app(scope, receive, send)


def common_hypervolumes(studies: list[Study]) -> tuple[list[float] | None, list[float]]:
    """One reference point for studies with the same objectives (one decade beyond the worst
    feasible design of all of them in each objective, in minimised log10 values) and each
    study's hypervolume against it (decades^objectives)."""
    points = [s.points(s.feasible()) for s in studies]
    every = [p for p in points if len(p)]
    if not every:
        return None, [0.0 for _ in studies]
    import numpy as np

    reference = pareto.reference_point(np.vstack(every))
    return reference, [pareto.hypervolume(p, reference) for p in points]


class WhileReading:
    """While the dashboard reads its storage at start (``Dashboard.reading``), every page and
    API request but the static files is answered at once, 503: a page saying so that comes
    back every second, JSON with ``reading`` true and ``Retry-After``."""

    def __init__(self, app: ASGIApp, dashboard: Dashboard):
        self.app = app
        self.dashboard = dashboard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI call: the wrapped app's, unless the storage is being read."""
        path = scope.get("path", "")
        if scope["type"] != "http" or not self.dashboard.reading.is_set():
            await self.app(scope, receive, send)
            return
        if path.startswith(("/static/", "/assets/")):
            await self.app(scope, receive, send)
            return
        label = self.dashboard.store.label
        message = f"reading {label}: the studies appear when it is read"
        response: Response
        if path.startswith("/api/"):
            response = Dashboard.json({"error": message, "reading": True}, 503)
        else:
            response = self.dashboard.page(
                "error.html", 503, title="Reading the study storage", message=message, code=503
            )
            response.headers["Refresh"] = "1"
        response.headers["Retry-After"] = "1"
        await response(scope, receive, send)


class SecurityHeaders:
    """Adds ``HEADERS`` to every response."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI call: the wrapped app's, with ``HEADERS`` added to an HTTP response."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for key, value in HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(
    storage: str | None = None, host: str = "127.0.0.1", poll_seconds: float = 3.0
) -> Starlette:
    """The dashboard app of ``storage`` (None: the default Journal file).

    Bound to a loopback ``host``, it answers only requests addressed to a loopback name
    (no DNS rebinding); bound elsewhere, to any.
    """
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    _convertors()

    d = Dashboard(storage, poll_seconds)
    name = "{name:segment}"
    trial = f"/studies/{name}/trials/{{n:segment}}"
    page = ("every",)  # how often a page looks for changes (dashboard.js)
    routes = [
        Route("/", _query(d.index, page)),
        Route("/compare", _query(d.compare, (*page, "x", "y"), ("study", "design"))),
        Route(f"/studies/{name}/{{what:export}}.{{kind:format}}", _query(d.export)),
        Route(f"{trial}/arch.yaml", _query(d.arch_yaml)),
        Route(f"{trial}/mappings/{{i:segment}}.yaml", _query(d.mappings_yaml)),
        Route(trial, _query(d.design_page, page)),
        Route(f"/studies/{name}", _query(d.study_page, (*page, "rows"))),
        Route("/api/studies", _query(d.api_studies)),
        Route(f"/api/studies/{name}/pareto", _query(d.api_pareto)),
        Route(f"/api/studies/{name}/trials/{{n:segment}}", _query(d.api_trial)),
        Route(f"/api/studies/{name}/trials", _query(d.api_trials)),
        Route(
            f"/api/studies/{name}/rows",
            _query(d.api_table, ("set", "sort", "order", "offset", "limit", "q")),
        ),
        Route(f"/api/studies/{name}/figures/{{kind:segment}}", d.api_figure),  # its own query
        Route(f"/api/studies/{name}", _query(d.api_study)),
        Route("/assets/plotly.min.js", _query(d.plotly, ("v",))),
        Route("/static/{file:segment}", _query(d.static, ("v",))),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(RawPath)]
    if host in LOOPBACK:
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    middleware.append(Middleware(WhileReading, dashboard=d))  # after the host is checked
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            NotFound: d.not_found,
            Refused: d.refused,
            HTTPException: d.http_error,
            MagnetError: d.storage_error,
            Exception: d.crash,
        },
    )
    app.state.dashboard = d
    return app
