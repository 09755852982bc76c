"""The dashboard: a read-only Starlette app over one study storage.

Pages (Jinja2, autoescaped; data for scripts as escaped JSON, never inline code):

    /                                     the studies, live
    /studies/NAME                         a study: fronts, hypervolume, parameters, trials
    /studies/NAME/trials/N                a design: breakdowns, layers, mappings, commands
    /studies/NAME/trials/N/arch.yaml      its architecture (for magnet evaluate --arch)
    /studies/NAME/trials/N/mappings/I.yaml  its mappings on workload I (--mapping-file)
    /compare?study=A&study=B              fronts of studies overlaid
    /compare?design=N:STUDY&design=...    designs side by side

JSON: /api/studies, /api/studies/NAME, /api/studies/NAME/pareto (as ``magnet pareto
--json``), /api/studies/NAME/trials, /api/studies/NAME/trials/N,
/api/studies/NAME/figures/KIND (front, front3d, hypervolume, parallel, importance).

Only GET; files only from a fixed list made at start (the package's own assets and its
vendored plotly.js strict build, which needs no eval); every response carries a
Content-Security-Policy that allows nothing but this server (no eval, no inline script).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from magnet.dashboard.store import NotFound, Store
from magnet.errors import MagnetError
from magnet.report import figures as F
from magnet.report.design import DesignView, design_figures, design_view, mappings_yaml
from magnet.report.html import (
    ASSETS,
    dumps,
    environment,
    param_names,
    plotly_js,
    plotly_js_version,
    trial_row,
)
from magnet.search.space import METRICS
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
#: The figures of /api/studies/NAME/figures/KIND, from the query's x, y, z and color.
FIGURES: dict[str, Callable[..., Any]] = {
    "front": lambda study, x, y, z, color: F.front_2d(study, x, y),
    "front3d": lambda study, x, y, z, color: F.front_3d(study, [x, y, z]),
    "hypervolume": lambda study, *_: F.hypervolume(study),
    "parallel": lambda study, x, y, z, color: F.parallel(study, color),
    "importance": lambda study, *_: F.importance(study),
}
#: Files are asked for with their version in the URL (?v=...): kept by the browser.
CACHED = {"Cache-Control": "public, max-age=31536000, immutable"}
TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}


def study_url(name: str) -> str:
    return "/studies/" + quote(name, safe="")


def design_url(name: str, number: int) -> str:
    return f"{study_url(name)}/trials/{number}"


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
        self.poll = poll_seconds
        self.files = {name: path.read_bytes() for name, path in _assets().items()}
        self.versions = {
            name: hashlib.sha256(body).hexdigest()[:12] for name, body in self.files.items()
        }
        self.env = environment(HERE / "templates")
        self.env.globals.update(
            study_url=study_url,
            design_url=design_url,
            storage=self.store.label,
            poll=poll_seconds,
            static=lambda name: f"/static/{name}?v={self.versions[name]}",
            plotly_url=f"/assets/plotly.min.js?v={plotly_js_version(plotly_js())}-strict",
        )

    # ---- helpers -----------------------------------------------------------------------
    def page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(**context)
        return HTMLResponse(html, status_code=status)

    @staticmethod
    def json(data: Any, status: int = 200) -> Response:
        return Response(dumps(data), status_code=status, media_type="application/json")

    def study(self, request: Request) -> Study:
        return self.store.study(request.path_params["name"])

    def trial(self, request: Request) -> tuple[Study, TrialView]:
        return self.store.trial(request.path_params["name"], request.path_params["n"])

    def signature(self, study: Study) -> str:
        c = study.counts()
        return f"{len(study.trials())}:{c['designs']}:{c['running']}:{c['failed']}"

    def summary(self, study: Study) -> dict[str, Any]:
        def make() -> dict[str, Any]:
            out = study.summary()
            out.update(
                url=study_url(study.name),
                signature=self.signature(study),
                dataflows=study.space.dataflows(),
                params=param_names(study),
                description=study.space.description,
            )
            return out

        return self.store.memo(("summary", study.name), make)

    def design(self, study: Study, trial: TrialView) -> tuple[DesignView, dict[str, Any]]:
        def make() -> tuple[DesignView, dict[str, Any]]:
            view = design_view(study, trial)
            return view, design_figures(view)

        return self.store.memo(("design", study.name, trial.number), make)

    # ---- pages -------------------------------------------------------------------------
    def index(self, request: Request) -> Response:
        return self.page("index.html", studies=self.api_rows(), exists=self.store.exists())

    def study_page(self, request: Request) -> Response:
        study = self.study(request)
        return self.page("study.html", study=study, summary=self.summary(study))

    def design_page(self, request: Request) -> Response:
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
        study, trial = self.trial(request)
        view, _ = self.design(study, trial)
        if view.arch_yaml is None:
            raise NotFound(f"the architecture of trial {trial.number} cannot be built here")
        return self.download(view.arch_yaml, view.arch_file)

    def mappings_yaml(self, request: Request) -> Response:
        study, trial = self.trial(request)
        view, _ = self.design(study, trial)
        index = request.path_params["i"]
        if index >= len(view.workloads):
            raise NotFound(f"trial {trial.number} has no workload {index}")
        w = view.workloads[index]
        return self.download(mappings_yaml(w.record), w.mappings_file)

    @staticmethod
    def download(text: str, name: str) -> Response:
        return Response(
            text,
            media_type="application/yaml; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    def compare(self, request: Request) -> Response:
        designs = [d for d in request.query_params.getlist("design") if d]
        if designs:
            return self.compare_designs(designs)
        return self.compare_studies(request)

    def compare_designs(self, specs: list[str]) -> Response:
        """Designs given as ``NUMBER:STUDY``, side by side."""
        chosen = []
        for spec in specs:
            number, _, name = spec.partition(":")
            if not number.isdigit():
                raise NotFound(f"not a design: {spec!r} (give NUMBER:STUDY)")
            chosen.append(self.store.trial(name, int(number)))
        metrics: list[str] = []
        for study, _ in chosen:
            metrics += [o for o in study.objectives if o not in metrics]
        metrics += [m for m in ("edp", "tops_per_w", "utilization") if m not in metrics]
        labelled = [(f"#{t.number} {s.name}", t) for s, t in chosen]
        bars, by_cat = F.compare_designs(labelled, metrics)
        figures = {"metrics": F.figure_json(bars), "category": F.figure_json(by_cat)}
        return self.page(
            "compare.html", mode="designs", chosen=chosen, metrics=metrics, figures=figures
        )

    def compare_studies(self, request: Request) -> Response:
        """The fronts of the chosen studies overlaid on two metrics."""
        names = [n for n in request.query_params.getlist("study") if n]
        studies = [self.store.study(n) for n in names]
        axes = studies[0].objectives if studies else ["energy_pj", "latency_cycles"]
        x = request.query_params.get("x") or axes[0]
        y = request.query_params.get("y") or (axes[1] if len(axes) > 1 else "area_mm2")
        for value in (x, y):
            if value not in METRICS:
                raise NotFound(f"unknown metric {value!r}; allowed: {', '.join(METRICS)}")
        figures = {}
        if studies:
            figures["fronts"] = F.figure_json(F.compare_fronts(studies, x, y))
        return self.page(
            "compare.html",
            mode="studies",
            every=self.store.names(),
            names=names,
            studies=[self.summary(s) for s in studies],
            x=x,
            y=y,
            figures=figures,
        )

    # ---- JSON --------------------------------------------------------------------------
    def api_rows(self) -> list[dict[str, Any]]:
        return [self.summary(s) for s in self.store.studies()]

    def api_studies(self, request: Request) -> Response:
        return self.json(self.api_rows())

    def api_study(self, request: Request) -> Response:
        return self.json(self.summary(self.study(request)))

    def api_pareto(self, request: Request) -> Response:
        return self.json(pareto_json(self.study(request)))

    def api_trials(self, request: Request) -> Response:
        study = self.study(request)

        def make() -> list[dict[str, Any]]:
            return [trial_row(t, study) for t in study.trials()]

        return self.json(self.store.memo(("trials", study.name), make))

    def api_trial(self, request: Request) -> Response:
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
        study = self.study(request)
        kind = request.path_params["kind"]
        if kind not in FIGURES:
            raise NotFound(f"no figure {kind!r}; allowed: {', '.join(FIGURES)}")
        args = tuple(request.query_params.get(k) for k in ("x", "y", "z", "color"))

        def make() -> dict[str, Any]:
            return F.figure_json(FIGURES[kind](study, *args))

        return self.json(self.store.memo(("figure", study.name, kind, args), make))

    # ---- files -------------------------------------------------------------------------
    def static(self, request: Request) -> Response:
        name = request.path_params["file"]
        body = self.files.get(name)
        if body is None:
            raise NotFound(f"no file {name!r}")
        return Response(body, media_type=TYPES[Path(name).suffix], headers=CACHED)

    @staticmethod
    def plotly(request: Request) -> Response:
        return Response(plotly_js(), media_type=TYPES[".js"], headers=CACHED)

    # ---- errors ------------------------------------------------------------------------
    def error(self, request: Request, status: int, title: str, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return self.json({"error": message}, status)
        return self.page("error.html", status, title=title, message=message, code=status)

    def not_found(self, request: Request, exc: Exception) -> Response:
        return self.error(request, 404, "Not found", str(exc))

    def http_error(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        if exc.status_code == 404:
            return self.error(request, 404, "Not found", f"no page {request.url.path}")
        return self.error(request, exc.status_code, "Not allowed", str(exc.detail))

    def storage_error(self, request: Request, exc: Exception) -> Response:
        return self.error(request, 500, "Cannot read the study storage", str(exc))

    def crash(self, request: Request, exc: Exception) -> Response:
        # the server logs the traceback (Starlette raises the error on after this page)
        return self.error(
            request,
            500,
            "Something went wrong",
            f"{type(exc).__name__}: {exc} (the storage may be damaged or still being written; "
            "see the dashboard's terminal)",
        )


class SecurityHeaders:
    """Adds ``HEADERS`` to every response."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
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
) -> Any:
    """The dashboard app of ``storage`` (None: the default Journal file).

    Bound to a loopback ``host``, it answers only requests addressed to a loopback name
    (no DNS rebinding); bound elsewhere, to any.
    """
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware

    d = Dashboard(storage, poll_seconds)
    name = "{name:path}"
    trial = f"/studies/{name}/trials/{{n:int}}"
    routes = [
        Route("/", d.index),
        Route("/compare", d.compare),
        Route(f"{trial}/arch.yaml", d.arch_yaml),
        Route(f"{trial}/mappings/{{i:int}}.yaml", d.mappings_yaml),
        Route(trial, d.design_page),
        Route(f"/studies/{name}", d.study_page),
        Route("/api/studies", d.api_studies),
        Route(f"/api/studies/{name}/pareto", d.api_pareto),
        Route(f"/api/studies/{name}/trials/{{n:int}}", d.api_trial),
        Route(f"/api/studies/{name}/trials", d.api_trials),
        Route(f"/api/studies/{name}/figures/{{kind}}", d.api_figure),
        Route(f"/api/studies/{name}", d.api_study),
        Route("/assets/plotly.min.js", d.plotly),
        Route("/static/{file}", d.static),
    ]
    middleware = [Middleware(SecurityHeaders)]
    if host in LOOPBACK:
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={
            NotFound: d.not_found,
            HTTPException: d.http_error,
            MagnetError: d.storage_error,
            Exception: d.crash,
        },
    )
    app.state.dashboard = d
    return app
