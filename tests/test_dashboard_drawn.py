"""Every figure of the dashboard and of the report is drawn under the dashboard's
Content-Security-Policy (no eval, no inline script): counted in what plotly put in the page
(tests/drawn.py), with no console error and no refused script.

plotly.js's regular build compiles WebGL code with ``new Function``, which the policy
refuses: its parallel coordinates then drew nothing, silently (plotly shows "WebGL is not
supported"). magnet serves plotly.js's strict build instead (magnet/report/html.py)."""

from __future__ import annotations

import math
from pathlib import Path

import plotly
import plotly.graph_objects as go
import pytest

from magnet.dashboard.app import CSP
from magnet.report import explore as E
from magnet.report import study_figures, theme, write_report
from magnet.report.design_page import design_figures, design_view
from magnet.report.html import ASSETS, json_script, plotly_js, plotly_js_version
from magnet.search import load_study
from tests import test_dashboard
from tests.drawn import csp_violations, drawn, watch_csp
from tests.test_dashboard import Watched

#: test_dashboard.py's dashboard over the shared studies (conftest's ``storage``)
server = test_dashboard.server

ORIGIN = "http://magnet.test"


@pytest.fixture
def watched(browser):
    w = Watched(browser)
    watch_csp(w.page)
    yield w
    w.close()


def assert_quiet(w: Watched) -> None:
    """Nothing refused by the page's policy, no console error."""
    assert csp_violations(w.page) == []
    assert w.errors == []


def test_the_vendored_plotly_js_is_the_one_plotly_py_writes_figures_for() -> None:
    """Figures are made by the installed plotly (Python) for the plotly.js it ships; the
    vendored strict build must have its major.minor version (pyproject.toml pins plotly)."""
    shipped = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    ours = plotly_js_version(plotly_js())
    theirs = plotly_js_version(shipped.read_text(encoding="utf-8")[:500])
    assert ours.split(".")[:2] == theirs.split(".")[:2], (ours, theirs)
    assert "plotly.js (strict" in plotly_js()[:100]


# ---- the pages ---------------------------------------------------------------------------
def markers(study, x: str, y: str) -> int:
    """The designs the 2-D front plots: feasible or infeasible, with values on x and y."""
    plotted = study.feasible() + [t for t in study.trials() if t.status == "infeasible"]
    return sum(1 for t in plotted if all(math.isfinite(t.values.get(m, math.nan)) for m in (x, y)))


def bars(figure: dict) -> int:
    """The bars of a figure's JSON that plotly shows (not those of value zero)."""
    values = [
        v
        for t in figure["data"]
        if t.get("type") == "bar"
        for v in t["x" if t.get("orientation") == "h" else "y"]
    ]
    return sum(1 for v in values if v)


def hairline(figure: dict) -> int:
    """The bars of a figure's JSON under 1/1000 of its largest: less than a pixel wide."""
    values = [
        abs(v)
        for t in figure["data"]
        if t.get("type") == "bar"
        for v in t["x" if t.get("orientation") == "h" else "y"]
        if v
    ]
    return sum(1 for v in values if v < max(values) / 1000) if values else 0


def scatter_markers(figure: dict) -> int:
    """The markers of a figure's JSON (scatter traces drawn with markers)."""
    return sum(
        len(t["x"])
        for t in figure["data"]
        if t.get("type") == "scatter" and "markers" in t.get("mode", "")
    )


@pytest.mark.subprocess
def test_study_page_draws_every_figure(server, watched, storage) -> None:
    study = load_study("small", storage)
    x, y = study.objectives[:2]
    page = watched.page
    watched.ready(server + "/studies/small")
    front2d = drawn(page, "#front2d")
    assert front2d["markers"] == markers(study, x, y), front2d
    front = {theme.dataflow_colors(study)[t.dataflow] for t in study.pareto_front()}
    front3d = drawn(page, "#front3d", colors=tuple(front))
    assert all(front3d["gl_colors"][c] > 0 for c in front), front3d  # each dataflow's markers
    hypervolume = drawn(page, "#hypervolume")
    assert (hypervolume["markers"], hypervolume["lines"]) == (len(study.hypervolume_history()), 1)
    scores = study_figures.importances(study)
    assert drawn(page, "#importance")["bars"] == sum(
        1 for s in scores.values() for v in s.values() if v
    )
    parallel = drawn(page, "#parallel")
    params = {k for t in study.feasible() for k in t.params}
    assert parallel["dimensions"] == len(params) + len(study.objectives), parallel
    assert parallel["gl_pixels"] > 1000 and not parallel["no_webgl"], parallel  # its lines
    # the exploration figures: every marker, bar, step line and contour cell image drawn
    feasible = len(study.feasible())
    varied = E.varied_params(study)
    history = drawn(page, "#history")
    assert history["markers"] >= feasible and history["lines"] >= 1, history
    ecdf = drawn(page, "#ecdf")
    assert ecdf["markers"] >= feasible * len(study.objectives), ecdf
    assert ecdf["lines"] == len(study.objectives), ecdf
    assert drawn(page, "#slices")["markers"] == feasible * len(varied)
    contour = drawn(page, "#contour")
    assert contour["images"] == 1 and contour["markers"] == feasible, contour
    timeline = [t for t in study.trials() if t.status != "repeat"]
    assert drawn(page, "#timeline")["bars"] == len(timeline)
    assert_quiet(watched)


@pytest.mark.subprocess
def test_design_page_draws_its_figures(server, watched, storage) -> None:
    study = load_study("small", storage)
    trial = study.pareto_front()[0]
    watched.ready(f"{server}/studies/small/trials/{trial.number}")
    figures = design_figures(design_view(study, trial))
    assert len(figures) >= 5
    for key, figure in figures.items():
        shown = drawn(watched.page, f"[data-figure='{key}']")
        # a bar under a pixel (a layer's leakage beside its DRAM energy) may draw as nothing
        assert bars(figure) - hairline(figure) <= shown["bars"] <= bars(figure), key
        assert shown["markers"] == scatter_markers(figure), key
    assert_quiet(watched)


def test_report_draws_its_parallel_coordinates_offline(browser, storage, tmp_path) -> None:
    study = load_study("small", storage)
    path = write_report(study, tmp_path / "report.html")
    w = Watched(browser, offline=True)
    try:
        watch_csp(w.page)
        w.ready(path.as_uri())
        parallel = drawn(w.page, "#plot-parallel")
        params = {k for t in study.feasible() for k in t.params}
        assert parallel["dimensions"] == len(params) + len(study.objectives), parallel
        assert parallel["gl_pixels"] > 1000, parallel
        front = drawn(w.page, f"#plot-front-{'-'.join(study.objectives[:2])}")
        assert front["markers"] == markers(study, *study.objectives[:2]), front
        assert all(u.startswith(("file:", "data:")) for u in w.requests), w.requests
        assert_quiet(w)
    finally:
        w.close()


# ---- kinds of trace the pages do not draw yet ----------------------------------------------
#: A figure of each kind, and what it must draw (counts of tests/drawn.py).
KINDS = {
    "histogram": (go.Histogram(x=[1, 2, 2, 3, 3, 3], xbins={"size": 1}), {"bars": 3}),
    "heatmap": (go.Heatmap(z=[[1, 2], [3, 4]]), {"images": 1}),
    "histogram2d": (go.Histogram2d(x=[1, 2, 2, 3], y=[1, 1, 2, 2]), {"images": 1}),
    "contour": (
        go.Contour(z=[[1, 2, 3], [2, 3, 4], [3, 4, 5]], contours={"start": 2, "end": 4, "size": 1}),
        {"contours": 3},
    ),
}


def page_of(figures: dict) -> str:
    """A page that draws ``figures`` with the report's scripts, all from files."""
    plots = "".join(f'<div data-figure="{k}" id="{k}" style="height:300px"></div>' for k in figures)
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><script src="/plotly.js"></script>'
        f'</head><body><div id="study-plots">{plots}</div><script type="application/json" '
        f'id="magnet-figures">{json_script(figures)}</script><script src="/magnet.js"></script>'
        '<script src="/report.js"></script></body></html>'
    )


def test_other_kinds_of_trace_draw_under_the_policy(watched) -> None:
    figures = {k: theme.figure_json(go.Figure(trace)) for k, (trace, _) in KINDS.items()}
    _serve_figures(watched, figures)
    for kind, (_, expected) in KINDS.items():
        got = drawn(watched.page, "#" + kind)
        assert {k: got[k] for k in expected} == expected, (kind, got)
    assert_quiet(watched)


def _serve_figures(watched, figures: dict) -> None:
    """``watched`` opens a page that draws ``figures`` (``page_of``) under the policy."""
    files = {
        "/": ("text/html", page_of(figures)),
        "/plotly.js": ("text/javascript", plotly_js()),
        "/magnet.js": ("text/javascript", (ASSETS / "magnet.js").read_text()),
        "/report.js": ("text/javascript", (ASSETS / "report.js").read_text()),
    }

    def serve(route) -> None:
        kind, body = files[route.request.url.removeprefix(ORIGIN)]
        route.fulfill(body=body, content_type=kind, headers={"Content-Security-Policy": CSP})

    watched.context.route(ORIGIN + "/**", serve)
    watched.ready(ORIGIN + "/")


def test_a_big_studys_ecdf_draws_its_steps_without_a_marker_each(
    watched, storage, monkeypatch
) -> None:
    # over the sampling limit, the ECDF's step lines are drawn through the sampled ranks with
    # no marker on each (thousands of SVG markers took a browser a third of a second): one
    # line a panel, and the only markers are the front's diamonds
    study = load_study("small", storage)
    monkeypatch.setattr(study_figures, "MAX_POINTS", 3)
    front = {t.number for t in study.pareto_front()} & {
        t.number for t in study.feasible_with(study.objectives)
    }
    assert len(study.feasible_with(study.objectives)) > 3 and front
    _serve_figures(watched, {"ecdf": theme.figure_json(E.ecdf(study))})
    got = drawn(watched.page, "#ecdf")
    assert got["lines"] == len(study.objectives), got
    assert got["markers"] == len(front) * len(study.objectives), got
    assert_quiet(watched)


#: Bars of a figure drawn with an area in the colour ``fill`` (an ``rgb(r, g, b)`` string).
BARS_OF_COLOR = """(gd, fill) => [...gd.querySelectorAll('.cartesianlayer g.point path')]
  .filter(p => p.getBBox().width * p.getBBox().height > 0 && getComputedStyle(p).fill === fill)
  .length"""


def _rgb(hex_color: str) -> str:
    return "rgb({}, {}, {})".format(*(int(hex_color[i : i + 2], 16) for i in (1, 3, 5)))


@pytest.mark.subprocess
def test_a_package_design_page_draws_its_nop_and_splits(browser, tmp_path) -> None:
    import yaml

    from magnet.search import search
    from tests.conftest import DATA

    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space.update(
        name="pkg",
        template="package",
        params={**space["params"], "chiplets_x": 2, "chiplets_y": 2},
        workloads=[str(DATA / "search" / "small_net.yaml")],
    )
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    journal = str(tmp_path / "s.journal")
    trial = search(tmp_path / "space.yaml", n_trials=1, storage=journal).feasible()[0]
    nop = _rgb(theme.CATEGORY_COLORS["nop"])
    with test_dashboard.dashboard(journal) as url:
        w = Watched(browser)
        try:
            w.ready(f"{url}/studies/pkg/trials/{trial.number}")
            shown = drawn(w.page, "[data-figure='category']")
            assert shown["bars"] > 0
            gd = w.page.locator("[data-figure='category']")
            assert gd.evaluate(BARS_OF_COLOR, nop) == 1  # one workload
            w.page.locator("summary", has_text="Layers").click()
            assert w.page.locator("th", has_text="split").is_visible()
            for row in trial.records[0].layers:
                split = "x".join(f"{d}{f}" for d, f in (row.partition or {}).items()) or "-"
                assert w.page.locator("td.mono", has_text=split).first.is_visible()
        finally:
            w.close()


@pytest.mark.subprocess
def test_a_chip_design_page_draws_no_nop(server, watched, storage) -> None:
    study = load_study("small", storage)
    trial = study.pareto_front()[0]
    watched.ready(f"{server}/studies/small/trials/{trial.number}")
    assert drawn(watched.page, "[data-figure='category']")["bars"] > 0
    gd = watched.page.locator("[data-figure='category']")
    nop = _rgb(theme.CATEGORY_COLORS["nop"])
    assert gd.evaluate(BARS_OF_COLOR, nop) == 0


@pytest.mark.subprocess
def test_a_design_page_with_post_processing_layers_draws_them(browser, tmp_path) -> None:
    """A network with ReLUs, a pool and an add: the design page draws every figure as plotly
    has it (the per-layer bars include the post-processing layers, the roofline its two MAC
    layers) and its layer table shows the fused ReLU, as the user sees the page."""
    import yaml

    from magnet.search import search
    from tests.conftest import DATA
    from tests.test_postprocess import POST_NET

    (tmp_path / "net.yaml").write_text(POST_NET)
    space = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    space.update(name="post", workloads=[str(tmp_path / "net.yaml")])
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    journal = str(tmp_path / "s.journal")
    study = search(tmp_path / "space.yaml", n_trials=1, storage=journal)
    trial = study.feasible()[0]
    figures = design_figures(design_view(study, trial))
    assert any(
        "post-processing layer(s) (no MACs) not drawn" in str(f["layout"]) for f in figures.values()
    )
    with test_dashboard.dashboard(journal) as url:
        w = Watched(browser)
        watch_csp(w.page)
        try:
            w.ready(f"{url}/studies/post/trials/{trial.number}")
            for key, figure in figures.items():
                shown = drawn(w.page, f"[data-figure='{key}']")
                assert shown["markers"] == scatter_markers(figure), key
                # a bar under a pixel is not drawn: the unit's own operations are ~1e-5 of
                # the energy, so the category bars show every category but postprocess
                assert bars(figure) - hairline(figure) <= shown["bars"] <= bars(figure), key
            w.page.locator("summary", has_text="Layers").click()
            assert w.page.locator("td", has_text="fused").first.is_visible()
            assert_quiet(w)
        finally:
            w.close()
