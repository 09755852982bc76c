"""A study as one self-contained HTML file: figures, tables and the designs of the front.

plotly.js is embedded once, its strict build vendored in ``assets/vendor`` (never a CDN);
the figures travel as one JSON blob rendered by a small script, so the file opens offline.
Every string from the study is escaped: Jinja2 autoescapes the markup and ``json_script``
escapes ``<``, ``>`` and ``&`` in embedded JSON, so no study, parameter or layer name can
close a tag.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from markupsafe import Markup

from magnet.files import make_folder, refuse_foreign, write_atomic
from magnet.report.design_page import mappings_yaml
from magnet.search.design_space import METRICS
from magnet.search.storage import check_output
from magnet.search.study import Study, TrialView

if TYPE_CHECKING:
    import jinja2

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
ASSETS = HERE / "assets"
#: plotly.js's strict build (npm plotly.js-strict-dist-min, assets/vendor/README.md): no
#: eval or ``new Function``, so WebGL traces (parallel coordinates) draw under a
#: Content-Security-Policy without 'unsafe-eval', where the regular build's do not.
PLOTLY_JS = ASSETS / "vendor" / "plotly-strict.min.js"
#: Front designs the report details (the front table lists them all).
MAX_DESIGNS = 50

_JSON_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def dumps(data: Any) -> str:
    """JSON (numpy arrays as lists, NaN and infinities as null)."""
    from plotly.utils import PlotlyJSONEncoder

    return json.dumps(data, cls=PlotlyJSONEncoder)


def plain_dumps(data: Any) -> str:
    """``dumps`` of plain JSON data (dicts, lists, text, Python numbers), made by Python's C
    encoder when every number is finite (plotly's encoder encodes twice: at 100,000 table rows,
    1.9 s against 0.4), else by ``dumps``."""
    try:
        return json.dumps(data, allow_nan=False)
    except (TypeError, ValueError):  # a NaN, an infinity, a numpy value
        return dumps(data)


def json_script(data: Any) -> Markup:
    """JSON safe inside ``<script>`` and HTML: ``<``, ``>``, ``&`` as ``\\u`` escapes."""
    return Markup(dumps(data).translate(_JSON_ESCAPES))


def cell_text(value: Any) -> str:
    """A value as a table cell prints it: blank for None, else as ``figures.fmt`` does."""
    from magnet.report.theme import fmt as number

    return "" if value is None else number(value)


@cache
def plotly_js() -> str:
    """plotly.js, the vendored strict build (``PLOTLY_JS``)."""
    return PLOTLY_JS.read_text(encoding="utf-8")


def plotly_js_version(bundle: str) -> str:
    """The version of a plotly.js bundle, from its header comment (``plotly.js ... v4.1.1``)."""
    found = re.search(r"\* plotly\.js .*?v(\d+\.\d+\.\d+)", bundle[:500])
    if found is None:
        raise ValueError("not a plotly.js bundle: no version in its header")
    return found.group(1)


def data_uri(text: str) -> str:
    """A YAML text as a ``data:`` URL (downloads from a report need no server)."""
    return "data:text/yaml;charset=utf-8," + quote(text)


def asset(name: str) -> str:
    """One of the report's own assets (CSS, JavaScript) as text."""
    return (ASSETS / name).read_text(encoding="utf-8")


def environment(*folders: Path) -> jinja2.Environment:
    """Jinja2 with autoescape on, ``folders`` first, then the report's templates."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([*map(str, folders), str(TEMPLATES)]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["json_script"] = json_script
    env.filters["fmt"] = cell_text
    env.filters["data_uri"] = data_uri
    env.filters["mappings_uri"] = lambda record: data_uri(mappings_yaml(record))
    env.globals["METRICS"] = METRICS
    env.globals["param_text"] = param_text
    return env


def param_text(study: Study, name: str, value: Any) -> str:
    """A parameter's value as the tables print it: a size in binary units (``32 KiB``), any
    other value as ``cell_text`` does."""
    return param_cells(study.space.template, name, value)[0]


@lru_cache(maxsize=4096, typed=True)  # a study's parameters take few values: made once each
def param_cells(template: str, name: str, value: Any) -> tuple[str, str]:
    """A parameter's value of a design of ``template`` as the tables print it
    (``param_text``), and as a plain cell prints it (``cell_text``)."""
    from magnet.report.design_page import size_params
    from magnet.units import human_bytes

    plain = cell_text(value)
    sized = name in size_params(template)
    if sized and isinstance(value, int | float) and not isinstance(value, bool):
        return human_bytes(value), plain
    return plain, plain


def trial_row(trial: TrialView, study: Study) -> dict[str, Any]:
    """A trial of ``study`` as the tables show it (and ``/api/studies/NAME/trials`` returns
    it); ``shown``: the parameters printed otherwise than as numbers (sizes)."""
    params = {k: v for k, v in trial.params.items() if k != "dataflow"}
    cells = {k: param_cells(study.space.template, k, v) for k, v in params.items()}
    return {
        "number": trial.number,
        "status": trial.status,
        "feasible": trial.feasible,
        "front": trial.number in study.front_numbers,
        "dataflow": trial.dataflow,
        "params": params,
        "shown": {k: text for k, (text, plain) in cells.items() if text != plain},
        "values": trial.values,
        "metrics": trial.metrics,
        "reason": trial.reason,
        "seconds": trial.seconds,
    }


def param_names(study: Study, trials: list[TrialView] | None = None) -> list[str]:
    """The varied parameters, in the space's order (without the dataflow)."""
    seen = study.params_run if trials is None else {k for t in trials for k in t.params}
    ordered = [k for k in study.space.params if k in seen]
    return ordered + sorted(k for k in seen if k not in ordered and k != "dataflow")


def reasons(study: Study) -> list[tuple[str, int, int]]:
    """(reason, how many infeasible or failed trials give it, the first of them)."""
    out: dict[str, list[int]] = {}
    for t in study.trials():
        if t.status in ("infeasible", "failed"):
            out.setdefault(f"{t.status}: {t.reason or 'no reason recorded'}", []).append(t.number)
    return sorted(((r, len(n), n[0]) for r, n in out.items()), key=lambda x: -x[1])


def study_figures(study: Study) -> dict[str, Any]:
    """The study's figures as JSON, each instance of each figure a report draws
    (``catalog.FIGURES``), and, for one objective, a note where the front would be."""
    from magnet.report import theme
    from magnet.report.catalog import FIGURES

    out: dict[str, Any] = {}
    for name, kind in FIGURES.items():
        for key, query in kind.in_report(study):
            out[key] = kind.make(study, query)
        if name == "front" and len(study.objectives) == 1:
            out["single"] = theme.empty("one objective: see the best design below", "Pareto front")
    return {k: theme.figure_json(v) for k, v in out.items()}


#: Report figures drawn when they come into view (the others when the report opens).
LAZY = ("history:", "ecdf", "slices", "contour", "timeline", "parallel")
#: Report figures as wide as the page.
WIDE = ("slices", "contour", "timeline", "parallel")


def render_report(study: Study, max_designs: int = MAX_DESIGNS) -> str:
    """The report of ``study`` as one HTML document."""
    from magnet.report.design_page import design_figures, design_view

    front = study.pareto_front()
    figures = study_figures(study)
    figure_keys = list(figures)
    designs = [design_view(study, t) for t in front[:max_designs]]
    for view in designs:
        for key, fig in design_figures(view).items():
            figures[f"design-{view.trial.number}-{key}"] = fig
    detailed = {view.trial.number for view in designs}
    best = [(o, b[1], study.trial(b[0])) for o, b in study.best().items() if b is not None]
    return (
        environment()
        .get_template("report.html")
        .render(
            study=study,
            summary=study.summary(),
            front=front,
            rows=[trial_row(t, study) for t in front],
            params=param_names(study, front),
            best=best,
            designs=designs,
            more_designs=max(0, len(front) - max_designs),
            reasons=reasons(study),
            figures=figures,
            figure_keys=figure_keys,
            lazy=lambda key: key.startswith(LAZY),
            wide=lambda key: key.startswith(WIDE),
            generated=_dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            plotly_js=Markup(plotly_js()),
            script=Markup(asset("magnet.js")),
            report_script=Markup(asset("report.js")),
            style=Markup(asset("magnet.css")),
            design_link=lambda number: (
                f"#design-{number}" if number in detailed else "#front-table"
            ),
        )
    )


def write_report(study: Study, path: str | Path) -> Path:
    """Write the self-contained HTML report of ``study`` to ``path``, whole or not at all and
    never over the study's own storage (nor over a file magnet did not write: ``refuse_foreign``;
    the last folder of ``path`` is made when missing); returns the path."""
    path = Path(path)
    check_output(path, study.storage, "--output")
    refuse_foreign(path, "--output", new_folder=True)  # before the work of rendering
    text = render_report(study)
    make_folder(path.parent, "--output")
    return write_atomic(path, text)
