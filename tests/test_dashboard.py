"""The dashboard: its JSON API and files through Starlette's TestClient, its pages in a real
headless Chromium (Debian's, driven by Playwright) against ``magnet dashboard`` run in a
subprocess, and the HTML report opened offline."""

from __future__ import annotations

import importlib.util
import json
import math
import re
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from magnet.cli import main
from magnet.dashboard import PRELOAD, create_app
from magnet.dashboard.app import PLOTLY_END, PLOTLY_FACTORY, eager_plotly
from magnet.report import write_report
from magnet.report.html import plotly_js, plotly_js_version
from magnet.search import load_study, search
from tests.conftest import REPO
from tests.drawn import drawn
from tests.helpers import SPACE, XSS, XSS_LAYER
from tests.services import free_port, magnet_command


@pytest.fixture(scope="module")
def client(storage):
    from starlette.testclient import TestClient

    app = create_app(storage)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as c:
        yield c


def api(name: str) -> str:
    return "/api/studies/" + quote(name, safe="")


# ---- the JSON API and files (no browser) -------------------------------------------------
def test_api_lists_the_studies_with_their_counts(client, storage) -> None:
    rows = {r["name"]: r for r in client.get("/api/studies").json()}
    assert set(rows) == {"small", XSS}
    small = load_study("small", storage).summary()
    for key in ("trials", "front_size", "best", "space", "workloads", "objectives", "state"):
        assert rows["small"][key] == small[key]
    assert rows["small"]["hypervolume"] == pytest.approx(small["hypervolume"])
    assert rows["small"]["trials"]["designs"] == 16
    assert client.get(api("small")).json()["front_size"] == small["front_size"]


def test_api_pareto_is_what_magnet_pareto_json_prints(client, storage) -> None:
    for name in ("small", XSS):
        out = CliRunner().invoke(main, ["pareto", "--study", name, "--storage", storage, "--json"])
        assert out.exit_code == 0, out.output
        got = client.get(api(name) + "/pareto")
        assert got.status_code == 200
        assert got.json() == json.loads(out.output)


def test_api_trial_has_its_records_and_unknowns_are_404(client, storage) -> None:
    study = load_study("small", storage)
    t = study.pareto_front()[0]
    data = client.get(f"{api('small')}/trials/{t.number}").json()
    assert data["number"] == t.number and data["params"] == t.params
    assert data["front"] and data["feasible"]
    assert data["records"][0]["energy_pj"] == pytest.approx(t.values["energy_pj"])
    rows = client.get(api("small") + "/trials").json()
    assert [r["number"] for r in rows] == [x.number for x in study.trials()]
    assert {r["number"] for r in rows if r["front"]} == {x.number for x in study.pareto_front()}
    for url in (api("nope"), api("nope") + "/pareto", f"{api('small')}/trials/999"):
        r = client.get(url)
        assert r.status_code == 404 and "error" in r.json()
    assert client.get(api("small") + "/figures/nonsense").status_code == 404


def test_api_figure_front_holds_exactly_the_front(client, storage) -> None:
    study = load_study("small", storage)
    fig = client.get(api("small") + "/figures/front?x=energy_pj&y=area_mm2").json()
    front = [n for tr in fig["data"] if tr.get("meta") == "front" for n in tr["customdata"]]
    assert sorted(front) == sorted(t.number for t in study.pareto_front())
    names = [tr["name"] for tr in fig["data"] if tr.get("meta") == "front"]
    assert len(names) == len({t.dataflow for t in study.pareto_front()})
    for kind in ("front3d", "hypervolume", "parallel", "importance"):
        assert client.get(f"{api('small')}/figures/{kind}").status_code == 200


def test_downloads_rebuild_the_design_and_its_numbers(client, storage, tmp_path) -> None:
    study = load_study("small", storage)
    t = study.pareto_front()[0]
    base = f"/studies/small/trials/{t.number}"
    arch = client.get(base + "/arch.yaml")
    assert arch.status_code == 200 and "attachment" in arch.headers["content-disposition"]
    maps = client.get(base + "/mappings/0.yaml")
    assert maps.status_code == 200
    (tmp_path / f"trial-{t.number}.yaml").write_text(arch.text)
    (tmp_path / "maps.yaml").write_text(maps.text)
    out = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(tmp_path / f"trial-{t.number}.yaml"),
            "--workload",
            str(SPACE.parent / "small_net.yaml"),
            "--mapping-file",
            str(tmp_path / "maps.yaml"),
            "--json",
        ],
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["energy_pj"] == pytest.approx(t.values["energy_pj"], rel=1e-9)
    page = client.get(base).text
    assert f"magnet evaluate --arch trial-{t.number}.yaml" in page
    assert client.get(base + "/mappings/5.yaml").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/static/../../pyproject.toml",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/%2e%2e/%2e%2e/pyproject.toml",
        "/static/....//....//pyproject.toml",
        "/static/..\\..\\pyproject.toml",
        "/static/%2Fetc%2Fpasswd",
        "/static//etc/passwd",
        "/static/app.py",
        "/static/index.html",
        "/assets/../cli.py",
        "/assets/%2e%2e%2fcli.py",
        "/../../../../etc/passwd",
        "/studies/small/trials/1/arch.yaml/../../../../../etc/passwd",
    ],
)
def test_no_file_outside_the_assets(client, path) -> None:
    r = client.get(path)
    assert r.status_code == 404
    assert "root:" not in r.text and "[project]" not in r.text and "import" not in r.text


def test_assets_security_headers_and_read_only(client) -> None:
    js = client.get("/assets/plotly.min.js")
    assert js.status_code == 200 and js.text == eager_plotly(plotly_js())
    # the vendored strict build with its factory in parentheses (compiled sooner), nothing else
    assert PLOTLY_FACTORY[1] in js.text and js.text.endswith(PLOTLY_END[1])
    undone = js.text.replace(PLOTLY_FACTORY[1], PLOTLY_FACTORY[0], 1)
    assert undone.removesuffix(PLOTLY_END[1]) + PLOTLY_END[0] == plotly_js()
    # asked for with its version: a new bundle is a new URL (the old one is cached for good)
    assert (
        f"/assets/plotly.min.js?v={plotly_js_version(plotly_js())}-strict"
        in client.get("/studies/small").text
    )
    assert client.get("/static/dashboard.js").status_code == 200
    assert client.get("/static/magnet.css").status_code == 200
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "connect-src 'self'" in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    for method in ("post", "put", "delete"):
        assert getattr(client, method)(api("small")).status_code == 405
    # a page asked for under another host name (DNS rebinding) is refused
    assert client.get("/api/studies", headers={"host": "evil.example"}).status_code == 400


def test_html_is_escaped_in_pages(client, storage) -> None:
    for url in ("/", "/studies/" + quote(XSS, safe=""), "/compare?study=" + quote(XSS)):
        r = client.get(url)
        assert r.status_code == 200
        assert XSS not in r.text and XSS_LAYER not in r.text
        assert "\\u003cscript\\u003ealert(1)" in r.text  # the name in the page's JSON
    t = load_study(XSS, storage).pareto_front()[0]
    page = client.get(f"/studies/{quote(XSS, safe='')}/trials/{t.number}").text
    assert "&lt;img src=x onerror=alert(2)&gt;" in page
    assert XSS not in page and XSS_LAYER not in page
    assert "\\u0026lt;img src=x" in page  # the layer in the figures' JSON, escaped twice


def test_corrupt_storage_is_a_clear_error(tmp_path) -> None:
    from starlette.testclient import TestClient

    bad = tmp_path / "bad.journal"
    bad.write_text('garbage\n{"op_code": \n')
    with TestClient(create_app(str(bad)), base_url="http://127.0.0.1") as c:
        page = c.get("/")
        assert page.status_code == 500
        assert (
            "Cannot read the study storage" in page.text and "cannot read the journal" in page.text
        )
        assert "Traceback" not in page.text
        r = c.get("/api/studies")
        assert r.status_code == 500 and "cannot read" in r.json()["error"]
    with TestClient(create_app(str(tmp_path / "none.journal")), base_url="http://127.0.0.1") as c:
        assert c.get("/api/studies").json() == []  # not written yet: no study
        assert "No storage here yet" in c.get("/").text


# ---- the browser ---------------------------------------------------------------------------
def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def dashboard(storage: str):
    """``magnet dashboard`` in a subprocess on a free port; its base URL."""
    port = free_port()
    command = ["dashboard", "--storage", storage, "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    # its output to a file, not a pipe: a full pipe would block the server
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(
            magnet_command(*command),
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise AssertionError(f"the dashboard stopped: {log.read()}")
                try:
                    urllib.request.urlopen(url + "/static/magnet.css", timeout=2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)
            yield url
        finally:
            stop(proc)


@pytest.fixture(scope="module")
def server(storage):
    with dashboard(storage) as url:
        yield url


class Watched:
    """A page with its console errors, page errors, dialogs and requests recorded."""

    def __init__(self, browser, **options):
        self.context = browser.new_context(viewport={"width": 1400, "height": 1000}, **options)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda r: self.requests.append(r.url))

    def _dialog(self, dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def ready(self, url: str):
        response = self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=20000)
        return response

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def watched(browser):
    w = Watched(browser)
    yield w
    w.close()


def only_local(requests: list[str], base: str) -> list[str]:
    return [u for u in requests if not u.startswith(base + "/") and not u.startswith("data:")]


def wait_until(page, expression: str, timeout: float = 20.0) -> None:
    """Poll ``expression`` in the page (Playwright's wait_for_function evaluates strings with
    eval, which the dashboard's Content-Security-Policy refuses, as it should)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout}s: {expression}")
        time.sleep(0.1)


FRONT_POINTS = """(id) => {
  const gd = document.getElementById(id);
  return gd.data.filter(t => t.meta === 'front').flatMap(t => t.customdata);
}"""

# The front point farthest from any other plotted point, with its position on the screen.
PICK_POINT = """() => {
  const gd = document.getElementById('front2d');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
  const box = gd.getBoundingClientRect();
  const pts = [];
  gd._fullData.forEach(t => {
    if (!t.customdata) return;
    t.x.forEach((x, i) => pts.push({
      n: t.customdata[i], front: t.meta === 'front',
      px: box.left + xa._offset + xa.l2p(xa.d2l(x)),
      py: box.top + ya._offset + ya.l2p(ya.d2l(t.y[i])),
    }));
  });
  let best = null;
  pts.filter(p => p.front).forEach(p => {
    const others = pts.filter(q => q !== p);
    const gap = Math.min(...others.map(q => Math.hypot(q.px - p.px, q.py - p.py)), 1e9);
    if (!best || gap > best.gap) best = Object.assign({gap: gap}, p);
  });
  return best;
}"""


@pytest.mark.subprocess
def test_study_page_shows_exactly_the_front_and_a_click_opens_the_design(
    server, watched, storage
) -> None:
    study = load_study("small", storage)
    front = sorted(t.number for t in study.pareto_front())
    page = watched.page
    assert watched.ready(server + "/studies/small").status == 200
    wait_until(page, "document.getElementById('front2d').data !== undefined")
    assert sorted(page.evaluate(FRONT_POINTS, "front2d")) == front
    page.click("#front3d > button.draw")  # WebGL without a GPU here: drawn when asked
    wait_until(page, "document.getElementById('front3d').data !== undefined")
    assert sorted(page.evaluate(FRONT_POINTS, "front3d")) == front
    assert page.locator("#trials-table tbody tr").count() == len(front)
    # another pair of objectives: the same front
    page.select_option("#front-y", "area_mm2")
    wait_until(
        page, "document.getElementById('front2d').layout.yaxis.title.text.startsWith('area_mm2')"
    )
    assert sorted(page.evaluate(FRONT_POINTS, "front2d")) == front
    for plot in ("hypervolume", "importance"):
        assert page.evaluate(f"document.getElementById('{plot}').data.length") > 0
    page.locator("#parallel").scroll_into_view_if_needed()  # drawn when seen (WebGL)
    wait_until(page, "(document.getElementById('parallel').data || []).length > 0")
    page.evaluate("window.scrollTo(0, 0)")

    point = page.evaluate(PICK_POINT)
    assert point["gap"] > 10, point
    page.mouse.move(point["px"], point["py"])
    page.mouse.click(point["px"], point["py"])
    page.wait_for_url(re.compile(r".*/studies/small/trials/\d+$"), timeout=10000)
    assert page.url.endswith(f"/trials/{point['n']}")
    page.wait_for_selector("body[data-ready='1']")
    trial = study.trial(point["n"])
    record = trial.records[0]
    for key in ("category", "level", "operand", "area", "layers-0"):
        assert page.evaluate(f"document.querySelector('[data-figure=\"{key}\"]').data.length") > 0
    ys = page.evaluate("document.querySelector('[data-figure=\"category\"]').data.map(t => t.y[0])")
    assert math.fsum(ys) == pytest.approx(record.energy_pj, rel=1e-9)
    assert "<< MAC >>" in page.locator("pre.loop-nest").first.text_content()
    assert f"magnet evaluate --arch trial-{trial.number}.yaml" in page.content()
    assert watched.errors == []
    assert only_local(watched.requests, server) == []


#: The study page's figures drawn at once (not when scrolled to), each drawn or not.
EAGER_DRAWN = """() => [...document.querySelectorAll('.plot[data-kind]:not([data-lazy])')]
  .map(gd => !!gd._fullLayout)"""
FIGURES_ASKED = """() => performance.getEntriesByType('resource')
  .filter(r => r.name.includes('/figures/')).length"""


@pytest.mark.subprocess
def test_the_study_page_does_not_wait_for_plotly_js(server, watched, storage) -> None:
    """plotly.js is deferred (5 MB: a new browser runs it for most of a second): the page is
    painted, its table filled and its figures asked for before it arrives; each figure is
    plotted once it has run."""
    held = []
    page = watched.page
    page.route("**/assets/plotly.min.js*", lambda route: held.append(route))
    page.goto(server + "/studies/small", wait_until="commit")
    rows = len(load_study("small", storage).pareto_front())
    wait_until(page, f"document.querySelectorAll('#trials-table tbody tr').length === {rows}")
    eager = len(page.evaluate(EAGER_DRAWN))
    assert eager == 6  # the 2-D and 3-D fronts, hypervolume, importance, history, ECDF
    # the 3-D front waits for its button in this browser (WebGL without a GPU): 5 asked for
    wait_until(page, f"({FIGURES_ASKED})() === {eager - 1}")
    assert held and page.evaluate("typeof window.Plotly") == "undefined"
    assert page.evaluate(EAGER_DRAWN) == [False] * eager
    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']", timeout=20000)
    assert page.evaluate(EAGER_DRAWN) == [True, False, True, True, True, True]  # document order
    # and drawn where the user sees them: the 2-D front's markers, the 3-D front's pixels
    assert drawn(page, "#front2d")["markers"] >= rows
    assert drawn(page, "#front3d")["gl_pixels"] > 0
    assert watched.errors == []


#: The WebGL renderer a browser with a GPU names (the tests' Chromium draws in software).
HARDWARE_GL = """(() => {
  const own = WebGLRenderingContext.prototype.getParameter;
  WebGLRenderingContext.prototype.getParameter = function (p) {
    const info = this.getExtension('WEBGL_debug_renderer_info');
    if (p === this.RENDERER || (info && p === info.UNMASKED_RENDERER_WEBGL)) {
      return 'ANGLE (NVIDIA, NVIDIA GeForce RTX 3060, OpenGL 4.5)';
    }
    return own.call(this, p);
  };
})();"""
FRONT3D_ASKED = """() => performance.getEntriesByType('resource')
  .filter(r => r.name.includes('/figures/front3d')).length"""


@pytest.mark.subprocess
def test_the_3d_front_waits_for_its_button_only_where_webgl_has_no_gpu(
    server, browser, storage
) -> None:
    """Without a GPU (SwiftShader: the tests' Chromium), a 3-D front holds the page for about
    a second at each drawing (issue 33): it is drawn when its button is pressed, and redrawn
    on each change after that; with a GPU it is drawn at once, as the other figures."""
    front = sorted(t.number for t in load_study("small", storage).pareto_front())
    w = Watched(browser)
    try:
        page = w.page
        w.ready(server + "/studies/small")
        assert page.evaluate("Magnet.softwareWebGL()") is True  # the premise: no GPU here
        page.select_option("#front3d-z", "energy_pj")  # a choice does not draw it either
        page.wait_for_timeout(300)
        assert page.evaluate(FRONT3D_ASKED) == 0
        assert page.evaluate("document.getElementById('front3d')._fullLayout") is None
        # what the user sees there: the button and its words, no canvas
        button = page.locator("#front3d > button.draw")
        assert button.is_visible() and "Draw in 3-D" in button.inner_text()
        assert page.locator("#front3d canvas").count() == 0
        button.click()
        wait_until(page, "document.getElementById('front3d').data !== undefined")
        assert sorted(page.evaluate(FRONT_POINTS, "front3d")) == front
        assert page.locator("#front3d button.draw").count() == 0
        assert drawn(page, "#front3d")["gl_pixels"] > 0  # drawn on the screen
        page.select_option("#front3d-z", "area_mm2")  # now a choice redraws it
        wait_until(page, f"({FRONT3D_ASKED})() === 2")
        assert w.errors == []
    finally:
        w.close()
    w = Watched(browser)
    try:
        w.page.add_init_script(HARDWARE_GL)
        w.ready(server + "/studies/small")
        assert w.page.evaluate("Magnet.softwareWebGL()") is False
        assert w.page.locator("#front3d button.draw").count() == 0
        assert sorted(w.page.evaluate(FRONT_POINTS, "front3d")) == front  # drawn at once
        assert drawn(w.page, "#front3d")["gl_pixels"] > 0
        assert w.errors == []
    finally:
        w.close()


ROWS = "[...document.querySelectorAll('#trials-table tbody tr')].map(r => Number(r.dataset.trial))"


@pytest.mark.subprocess
def test_the_table_pages_sorts_and_filters_on_the_server_and_keeps_choices(
    server, watched, storage
) -> None:
    study = load_study("small", storage)
    numbers = [t.number for t in study.trials()]
    page = watched.page
    watched.ready(server + "/studies/small?rows=5")
    page.select_option("#trial-set", "all")
    wait_until(page, f"({ROWS}).join() === '{','.join(map(str, numbers[:5]))}'")
    assert page.locator("#trial-count").text_content() == f"rows 1-5 of {len(numbers)}"
    assert page.locator("#page-prev").is_disabled()
    page.locator("#trials-table tbody input").first.check()  # chosen on page 1 ...
    page.click("#page-next")
    wait_until(page, f"({ROWS}).join() === '{','.join(map(str, numbers[5:10]))}'")
    page.locator("#trials-table tbody input").first.check()  # ... and on page 2
    assert page.locator("#compare-designs").is_enabled()
    # sorted by energy, lowest first, then highest first: the server's order
    energy = sorted(
        (t for t in study.trials() if "energy_pj" in t.values), key=lambda t: t.values["energy_pj"]
    )
    page.click("#trials-table th[data-sort='energy_pj']")
    wait_until(page, f"({ROWS}).join() === '{','.join(str(t.number) for t in energy[:5])}'")
    page.click("#trials-table th[data-sort='energy_pj']")
    top = [t.number for t in energy[::-1][:5]]
    wait_until(page, f"({ROWS}).join() === '{','.join(map(str, top))}'")
    assert (
        page.get_attribute("#trials-table th[data-sort='energy_pj']", "aria-sort") == "descending"
    )
    # a filter: the words of a dataflow, every row of it
    flow = study.trials()[0].dataflow
    page.fill("#trial-filter", flow)
    count = sum(t.dataflow == flow for t in study.trials())
    wait_until(page, f"document.getElementById('trial-count').textContent.endsWith(' of {count}')")
    with page.expect_navigation():
        page.click("#compare-designs")
    assert page.url.count("design=") == 2 and watched.errors == []


@pytest.mark.subprocess
def test_html_in_names_renders_as_text(server, watched, storage) -> None:
    page = watched.page
    watched.ready(server + "/")
    row = page.locator("#studies-table tr", has_text=XSS)
    assert row.count() == 1 and row.locator("td.name").text_content() == XSS
    row.locator("td.name a").click()
    page.wait_for_url(re.compile(r".*/studies/%3Cscript%3E.*"))
    assert page.locator("#study-name").text_content() == XSS
    assert page.title().startswith(XSS)
    number = load_study(XSS, storage).pareto_front()[0].number
    watched.ready(f"{server}/studies/{quote(XSS, safe='')}/trials/{number}")
    assert page.locator("h1").text_content().endswith(XSS)
    layers = page.locator("[data-figure='layers-0']")
    assert XSS_LAYER in layers.evaluate("el => el.data[0].x.join(' ')").replace(
        "&lt;", "<"
    ).replace("&gt;", ">")
    assert page.get_by_text(XSS_LAYER, exact=True).count() >= 1  # in the layer table
    assert page.evaluate("document.querySelectorAll('img[src=x]').length") == 0
    assert watched.dialogs == []
    assert watched.errors == []


@pytest.mark.subprocess
def test_unknown_study_or_trial_is_a_404_page(server, watched) -> None:
    page = watched.page
    r = page.goto(server + "/studies/nope")
    assert r.status == 404
    assert "no study 'nope'" in page.locator("#error-message").text_content()
    r = page.goto(server + "/studies/small/trials/9999")
    assert r.status == 404 and "no trial 9999 in study 'small'" in page.content()
    r = page.goto(server + "/static/..%2F..%2Fapp.py")
    assert r.status == 404


@pytest.mark.subprocess
def test_a_storage_that_is_not_a_journal_is_refused_before_serving(tmp_path) -> None:
    bad = tmp_path / "bad.journal"
    bad.write_bytes(b"\x00\xffnot a journal\n{{{\n")
    before = bad.read_bytes()
    port = free_port()
    done = subprocess.run(
        magnet_command("dashboard", "--storage", str(bad), "--port", str(port)),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot read the journal" in done.stderr and str(bad) in done.stderr
    assert "http://" not in done.stderr + done.stdout and "Traceback" not in done.stderr
    assert bad.read_bytes() == before


def test_the_modules_imported_before_the_reading_exist() -> None:
    # PRELOAD names other libraries' modules the server imports on its start and first
    # answers; imported while the reader holds the GIL they cost the first answer of a big
    # journal 0.4-1.6 s. A name a library renamed would be skipped silently: caught here
    for name in PRELOAD:
        assert importlib.util.find_spec(name) is not None, name


@pytest.mark.subprocess
def test_a_journal_damaged_while_served_is_an_error_page(browser, tmp_path) -> None:
    journal = tmp_path / "later.journal"
    search(SPACE, n_trials=2, storage=str(journal), study="later")
    with dashboard(str(journal)) as url:
        w = Watched(browser)
        try:
            w.ready(url + "/")
            journal.write_bytes(b"\x00\xffnot a journal any more\n{{{\n")  # replaced
            r = w.page.goto(url + "/")
            assert r.status == 500
            text = w.page.locator("#error-message").text_content()
            assert "cannot read the journal" in text
            assert "Traceback" not in w.page.content()
        finally:
            w.close()


@pytest.mark.subprocess
def test_studies_list_follows_a_running_search(browser, tmp_path) -> None:
    journal = str(tmp_path / "live.journal")
    Path(journal).touch()  # a storage that does not exist is refused; an empty one has no study
    with dashboard(journal) as url:
        w = Watched(browser)
        search_proc = None
        try:
            w.ready(url + "/?every=0.5")
            assert w.page.locator("#no-studies").is_visible()
            # ResNet-18 (~0.5 s a design): a search of the small space's own network ends in
            # about a second now that its journal syncs only at trial ends, between 2 polls
            search_proc = subprocess.Popen(
                magnet_command(
                    "search",
                    str(SPACE),
                    "--storage",
                    journal,
                    "--trials",
                    "12",
                    "--workload",
                    "resnet18",
                    "--no-report",
                ),
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            cell = w.page.locator("tr[data-study='small'] td.designs")
            seen: list[int] = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if cell.count():
                    value = int(cell.text_content())
                    if not seen or value != seen[-1]:
                        seen.append(value)
                    if value >= 12:
                        break
                time.sleep(0.1)
            assert seen and seen[-1] == 12, seen
            assert len(seen) >= 3 and seen == sorted(seen), seen
            assert search_proc.wait(timeout=30) == 0
            assert w.errors == []
        finally:
            if search_proc is not None:
                stop(search_proc)
            w.close()


def test_report_renders_offline(browser, storage, tmp_path) -> None:
    for name in (XSS,):
        path = write_report(load_study(name, storage), tmp_path / "report.html")
        w = Watched(browser, offline=True)
        try:
            w.context.route(
                "**/*",
                lambda route: (
                    route.continue_() if route.request.url.startswith("file:") else route.abort()
                ),
            )
            w.ready(path.as_uri())
            page = w.page
            eager = page.locator("#study-plots [data-figure]:not([data-lazy])")
            assert eager.count() == 6  # 3 fronts, 3-D, hypervolume, importance
            # the 3-D front waits for its button here (WebGL without a GPU), then is drawn
            assert page.locator("#study-plots .js-plotly-plot").count() == eager.count() - 1
            assert drawn(page, "#plot-front3d")["gl_pixels"] > 0
            assert page.locator("#study-plots .js-plotly-plot").count() == eager.count()
            front = sorted(t.number for t in load_study(name, storage).pareto_front())
            shown = page.evaluate(
                """() => [...document.querySelectorAll('#study-plots [data-figure^="front:"]')]
                   .map(gd => gd.data.filter(t => t.meta === 'front')
                   .flatMap(t => t.customdata).sort((a, b) => a - b))"""
            )
            assert shown and all(s == front for s in shown)
            assert page.locator("#study-name").text_content() == name
            first = page.locator("details.design").first
            first.locator(":scope > summary").click()
            first.locator(".js-plotly-plot").first.wait_for()
            assert first.locator(".js-plotly-plot").count() >= 5
            assert [u for u in w.requests if not u.startswith("file:")] == []
            assert w.errors == [] and w.dialogs == []
        finally:
            w.close()


DRAWN = """(key) => {
  const gd = document.querySelector(`#study-plots [data-figure="${key}"]`);
  const traces = [...gd.querySelectorAll('.scatterlayer .trace')];
  const count = (meta) => gd._fullData
    .map((t, i) => t.meta === meta ? traces[i].querySelectorAll('.point').length : 0)
    .reduce((a, b) => a + b, 0);
  const notes = [...gd.querySelectorAll('.annotation-text')].map(a => a.textContent);
  return {front: count('front'), others: count('feasible'), notes: notes};
}"""


def test_a_sampled_figure_draws_the_front_and_says_what_it_samples(
    browser, storage, tmp_path, monkeypatch
) -> None:
    # a report written with room for 2 designs off the front per figure, opened in Chromium:
    # the markers drawn and the note on the figure are what the user sees
    from magnet.report import study_figures

    study = load_study("small", storage)
    monkeypatch.setattr(study_figures, "MAX_POINTS", 2)
    path = write_report(study, tmp_path / "sampled.html")
    front = study.pareto_front()
    others = len(study.feasible()) - len(front)
    assert others > 2
    w = Watched(browser, offline=True)
    try:
        w.ready(path.as_uri())
        drawn = w.page.evaluate(DRAWN, f"front:{study.objectives[0]}:{study.objectives[1]}")
        x, y = study.objectives[:2]
        places = {(t.values[x], t.values[y]) for t in front}  # one marker per place
        assert drawn["others"] == 2 and drawn["front"] == len(places)
        assert f"2 of {others} feasible designs off the front drawn (a uniform sample)" in " ".join(
            drawn["notes"]
        )
        assert w.errors == []
    finally:
        w.close()
