"""The dashboard given what a user or a script may send it: study names that are not plain
words (``runs/trials/3/pareto``, ``?``, ``#``, ``%``, spaces, unicode, ``..``), bad paths and
query values on every route, a busy machine that answers requests in any order, and bad
input to ``magnet dashboard`` itself. Each answer names its cause (404 for what is missing,
400 for a bad query value), never a 500 or a traceback; the command refuses with one line
and exit 2 before it prints any address."""

from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import stat
import threading
from pathlib import Path
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from magnet.cli import main
from magnet.dashboard import create_app
from magnet.dashboard.app import segment_text, study_segment, study_url
from magnet.search import search
from magnet.search.storage import open_storage
from tests.drawn import drawn
from tests.helpers import SPACE
from tests.services import free_port, postgres, postgres_bin
from tests.test_dashboard import Watched, dashboard, wait_until

#: Study names a URL path cannot hold as they are. ``x/trials/1`` beside ``x``: the study's
#: page, not design 1 of ``x``; ``~..``: not mistaken for ``..`` (written ``~..``).
NAMES = [
    "runs/trials/3/pareto",
    "a/b",
    "q?x=1&y=2#frag",
    "100% done %2F",
    "with space",
    "ünïcødé ✓ 研究",
    "..",
    ".",
    "a/../b",
    "~..",
    "x/trials/1",
    "x",
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def names_storage(tmp_path_factory) -> str:
    """A journal with a study (3 trials) of each of ``NAMES``."""
    journal = tmp_path_factory.mktemp("names") / "names.journal"
    for name in NAMES:
        search(SPACE, n_trials=3, storage=str(journal), study=name)
    return str(journal)


@pytest.fixture(scope="module")
def client(names_storage):
    from starlette.testclient import TestClient

    with TestClient(
        create_app(names_storage), base_url="http://127.0.0.1", raise_server_exceptions=False
    ) as c:
        yield c


def error(response) -> str:
    """The message of an error answer: the API's JSON, or the error page's text."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()["error"]
    found = re.search(r'id="error-message">\s*<p><b>\d+</b>: (.*?)</p>', response.text, re.S)
    assert found, response.text[:500]
    import html

    return html.unescape(found.group(1))


# ---- study names as URL segments ---------------------------------------------------------------
@pytest.mark.parametrize("name", [*NAMES, "%7E..", "~", "~.x", "a%2Fb", "/", "%"])
def test_a_study_name_is_one_segment_and_reads_back(name) -> None:
    segment = study_segment(name)
    assert "/" not in segment and segment not in (".", "..")
    assert not re.fullmatch(r"(\.|%2[eE])+", segment)  # never a dot segment, however written
    assert segment_text(segment) == name


def test_every_route_of_a_study_named_with_slashes_finds_it(client, names_storage) -> None:
    for name in NAMES:
        base = study_url(name)
        assert client.get("/api" + base).json()["name"] == name
        assert client.get("/api" + base + "/pareto").status_code == 200
        rows = client.get("/api" + base + "/trials").json()
        assert [r["number"] for r in rows] == [0, 1, 2]
        page = client.get("/api" + base + "/rows?set=all").json()
        assert page["total"] == 3 and [r["number"] for r in page["rows"]] == [0, 1, 2]
        trial = client.get("/api" + base + "/trials/1").json()
        assert trial["number"] == 1 and trial["url"] == base + "/trials/1"
        for kind in ("front", "parallel", "timeline"):
            assert client.get(f"/api{base}/figures/{kind}").status_code == 200, (name, kind)
        page = client.get(base)
        assert page.status_code == 200 and 'id="study-name"' in page.text
        for what in ("trials.csv", "trials.json", "front.csv", "front.json"):
            r = client.get(f"{base}/{what}")
            assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
        design = client.get(base + "/trials/1")
        assert design.status_code == 200 and "Design #1" in design.text
        # every link the pages hold to this study is one of its pages
        for html_text in (page.text, design.text):
            for href in set(re.findall(r'href="(/(?:api/)?studies/[^"]+)"', html_text)):
                assert client.get(href.replace("&amp;", "&")).status_code == 200, (name, href)
    # /studies/x/trials/1 is design 1 of x; /studies/x%2Ftrials%2F1 is the study x/trials/1
    assert "Design #1" in client.get("/studies/x/trials/1").text
    assert client.get("/api/studies/x%2Ftrials%2F1").json()["name"] == "x/trials/1"
    assert client.get("/api/studies/~..").json()["name"] == ".."
    assert client.get("/api/studies/%7E..").json()["name"] == "~.."


# ---- bad requests --------------------------------------------------------------------------------
HUGE = "9" * 5000
NO_TRIAL = r"no trial {} in study 'x' \(its trials are numbered 0 to 2\)"
#: (path, status, what the message must say)
BAD = [
    ("/api/studies/nope", 404, r"no study 'nope'"),
    ("/api/studies/nope/trials/0", 404, r"no study 'nope'"),
    ("/api/studies/nope/figures/front", 404, r"no study 'nope'"),
    ("/api/studies/x/trials/-1", 404, NO_TRIAL.format("-1")),
    ("/api/studies/x/trials/abc", 404, NO_TRIAL.format("abc")),
    ("/api/studies/x/trials/3", 404, NO_TRIAL.format("3")),
    ("/api/studies/x/trials/1e3", 404, NO_TRIAL.format("1e3")),
    ("/api/studies/x/trials/%C2%B2", 404, NO_TRIAL.format("²")),  # a digit to str.isdigit
    ("/api/studies/x/trials/" + HUGE, 404, NO_TRIAL.format("9{40}\\.\\.\\.")),
    ("/studies/x/trials/-1", 404, NO_TRIAL.format("-1")),
    ("/studies/x/trials/abc/arch.yaml", 404, NO_TRIAL.format("abc")),
    ("/studies/x/trials/0/mappings/abc.yaml", 404, r"no workload abc in trial 0 of study 'x' "),
    ("/studies/x/trials/0/mappings/1.yaml", 404, r"workloads are numbered 0 to 0"),
    ("/studies/x/trials/0/mappings/-1.yaml", 404, r"no workload -1 in trial 0"),
    ("/api/studies/x/figures/nonsense", 404, r"no figure 'nonsense'; allowed: front, front3d"),
    ("/api/studies/x/figures/front?x=bogus", 400, r"unknown objective 'bogus' for x; allowed: "),
    ("/api/studies/x/figures/front?x=energy_pj&y=energy_pj", 400, r"x, y must all differ"),
    ("/api/studies/x/figures/parallel?color=%3Cb%3E", 400, r"unknown objective '<b>' for color"),
    ("/api/studies/x/figures/contour?x=pe_rows", 400, r"unknown param 'pe_rows' for x; allowed"),
    ("/api/studies/x/figures/contour?x=vector_width&y=vector_width", 400, r"must all differ"),
    ("/api/studies/x/figures/front?objective=area_mm2", 400, r"'objective' for .*takes: x, y"),
    ("/api/studies/x/figures/hypervolume?x=1", 400, r"unknown query parameter 'x'.*takes none"),
    ("/api/studies/x/figures/front?x=energy_pj&x=area_mm2", 400, r"'x' is given 2 times"),
    ("/api/studies/x/rows?offset=abc", 400, r"offset must be a whole number, not 'abc'"),
    ("/api/studies/x/rows?offset=-1", 400, r"offset must be a whole number, not '-1'"),
    ("/api/studies/x/rows?limit=0", 400, r"limit must be 1 to 1000, not 0"),
    ("/api/studies/x/rows?limit=1.5", 400, r"limit must be a whole number, not '1.5'"),
    ("/api/studies/x/rows?set=best", 400, r"unknown set 'best'; allowed: front, feasible, all"),
    ("/api/studies/x/rows?sort=%3Cb%3E", 400, r"unknown sort '<b>'; allowed: number, status, en"),
    ("/api/studies/x/rows?order=up", 400, r"unknown order 'up'; allowed: asc, desc"),
    ("/api/studies/x/rows?since=3", 400, r"unknown query parameter 'since'.*takes: set, sort"),
    ("/api/studies?page=2", 400, r"unknown query parameter 'page' for /api/studies"),
    ("/studies/x?rows=0", 400, r"rows \(per page of the table\) must be 1 to 1000, not 0"),
    ("/studies/x?rows=ten", 400, r"rows must be a whole number, not 'ten'"),
    ("/studies/x?every=0", 400, r"every .* must be a number of seconds above 0 .* not '0'"),
    ("/studies/x?every=nan", 400, r"every .* not 'nan'"),
    ("/studies/x?every=1e9", 400, r"at most 86400, not '1e9'"),
    ("/compare?design=abc:x", 400, r"design='abc:x' is not a design: give NUMBER:STUDY"),
    ("/compare?design=0", 400, r"design='0' is not a design"),
    ("/compare?design=-1:x", 400, r"is not a design"),
    ("/compare?design=7:x", 404, NO_TRIAL.format("7")),
    ("/compare?design=0:nope", 404, r"no study 'nope'"),
    ("/compare?study=nope", 404, r"no study 'nope'"),
    ("/compare?study=x&x=bogus", 400, r"unknown objective 'bogus'; allowed: energy_pj"),
    ("/compare?study=x&x=energy_pj&y=energy_pj", 400, r"x and y are both 'energy_pj'"),
    ("/static/nope.js", 404, r"no file 'nope.js'"),
    ("/api/nope", 404, r"no page /api/nope"),
    # a study name with '/' typed raw: the page says how the name is written
    ("/studies/runs/trials/3/pareto", 404, r"no page /studies/runs/trials/3/pareto \(.*%2F\)"),
]


@pytest.mark.parametrize(("path", "status", "pattern"), BAD, ids=[b[0][:60] for b in BAD])
def test_a_bad_request_names_its_cause(client, caplog, path, status, pattern) -> None:
    with caplog.at_level(logging.WARNING):
        r = client.get(path)
    assert r.status_code == status, (r.status_code, r.text[:300])
    assert re.search(pattern, error(r)), error(r)
    assert "Traceback" not in r.text and len(r.text) < 20000
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def test_the_table_is_sorted_filtered_and_paged_by_the_server(client) -> None:
    """The study page's table is a page the server sorts, filters and cuts (a study of 100,000
    trials is never sent whole): study x has 3 trials."""
    every = client.get("/api/studies/x/rows?set=all&sort=number&order=desc").json()
    assert [r["number"] for r in every["rows"]] == [2, 1, 0] and every["total"] == 3
    page = client.get("/api/studies/x/rows?set=all&offset=1&limit=1").json()
    assert [r["number"] for r in page["rows"]] == [1] and (page["offset"], page["limit"]) == (1, 1)
    assert client.get("/api/studies/x/rows?set=all&offset=9").json()["rows"] == []
    rows = every["rows"]
    energy = client.get("/api/studies/x/rows?set=all&sort=energy_pj").json()["rows"]
    # ascending by value, a trial without a value (infeasible before pricing) last
    ordered = sorted(
        rows,
        key=lambda r: (r["values"].get("energy_pj") is None, r["values"].get("energy_pj") or 0),
    )
    assert [r["number"] for r in energy] == [r["number"] for r in ordered]
    flow = rows[0]["dataflow"]
    hits = client.get("/api/studies/x/rows", params={"set": "all", "q": flow.upper()}).json()
    assert {r["number"] for r in hits["rows"]} == {
        r["number"] for r in rows if r["dataflow"] == flow
    }
    # the words the cells show, not the row's JSON: no cell says "seconds" or "metrics",
    # the front's badge says "front"
    for hidden in ("seconds", "metrics"):
        assert (
            client.get("/api/studies/x/rows", params={"set": "all", "q": hidden}).json()["total"]
            == 0
        )
    badged = client.get("/api/studies/x/rows", params={"set": "all", "q": "front"}).json()
    assert {r["number"] for r in badged["rows"]} == {r["number"] for r in rows if r["front"]}
    front = client.get("/api/studies/x/rows").json()  # the front, by default
    assert all(r["front"] for r in front["rows"]) and front["total"] == len(
        client.get("/api/studies/x/pareto").json()
    )


def test_odd_studies_answer_every_route(tmp_path) -> None:
    """One objective, no trial, a running trial: every page and figure answers (compare on a
    study of one objective was a 500)."""
    import optuna
    import yaml
    from starlette.testclient import TestClient

    space = yaml.safe_load(SPACE.read_text())
    space["objectives"] = ["energy_pj"]
    space["workloads"] = [str(SPACE.parent / "small_net.yaml")]
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(space))
    url = f"sqlite:///{tmp_path / 'odd.db'}"
    search(tmp_path / "one.yaml", n_trials=2, storage=url, study="one")
    storage = optuna.storages.RDBStorage(url)
    attrs = optuna.load_study(study_name="one", storage=storage).user_attrs
    for name in ("empty", "running"):
        made = optuna.create_study(study_name=name, storage=storage, directions=["minimize"])
        for key, value in attrs.items():
            made.set_user_attr(key, value)
    made.ask()  # a running trial
    with TestClient(create_app(url), base_url="http://127.0.0.1") as c:
        for name in ("one", "empty", "running"):
            for path in (f"/studies/{name}", f"/compare?study={name}", f"/api/studies/{name}"):
                assert c.get(path).status_code == 200, path
            for kind in ("front", "front3d", "parallel", "contour", "importance", "timeline"):
                assert c.get(f"/api/studies/{name}/figures/{kind}").status_code == 200, kind
        r = c.get("/studies/empty/trials/0")
        assert r.status_code == 404 and "no trial 0 in study 'empty' (it has no trials yet)" in (
            error(r)
        )
        r = c.get("/studies/running/trials/0/mappings/0.yaml")
        assert r.status_code == 404 and "it has no mappings: it is running" in error(r)


def test_a_sqlite_storage_read_by_many_threads_logs_nothing(tmp_path, caplog) -> None:
    """The dashboard reads from a pool of threads: its read-only SQLite connections were
    kept one per thread and closed from other threads, a traceback in the server's log each
    time ("SQLite objects created in a thread can only be used in that same thread")."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    search(SPACE, n_trials=2, storage=url, study="s")
    storage = open_storage(url, create=False)
    study_id = storage.get_study_id_from_name("s")

    def read() -> None:
        for _ in range(10):
            assert len(storage.get_all_trials(study_id)) == 2

    with caplog.at_level(logging.WARNING):
        threads = [threading.Thread(target=read) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.postgres
def test_a_database_that_went_away_is_named_on_the_page() -> None:
    """The PostgreSQL server stops while the dashboard serves it: the pages say the
    connection was refused (it was Optuna's "StorageInternalError: An exception is raised
    during the commit", the driver's error hidden behind it)."""
    from starlette.testclient import TestClient

    if postgres_bin() is None and not os.environ.get("CI"):  # .ci/run installs it
        pytest.skip("PostgreSQL's server is missing: apt-get install -y postgresql")
    with postgres() as url:
        search(SPACE, n_trials=2, storage=url, study="pg")
        client = TestClient(create_app(url), base_url="http://127.0.0.1")
        with client:
            assert client.get("/studies/pg").status_code == 200
            stopped = url
    with client:
        for path in ("/api/studies/pg", "/studies/pg", "/api/studies/pg/figures/front"):
            r = client.get(path)
            assert r.status_code == 500, path
            assert re.search(
                rf"^{re.escape(stopped)}: cannot read (the storage|study 'pg'): "
                r"OperationalError: .*Connection refused$",
                error(r),
            ), error(r)


# ---- magnet dashboard's own bad input -----------------------------------------------------------
def refused(args: list[str], pattern: str) -> None:
    """``magnet dashboard ARGS`` exits 2 with one line matching ``pattern`` on stderr, no
    address and nothing on stdout."""
    done = CliRunner().invoke(main, ["dashboard", *args])
    assert done.exit_code == 2, (done.exit_code, done.output)
    lines = done.stderr.strip().splitlines()
    assert re.search(pattern, lines[-1]), lines
    assert "Traceback" not in done.output and "magnet dashboard: http" not in done.output
    assert done.stdout == ""


def char_device() -> str:
    """A character device (``/dev/null``, unless it was replaced by a plain file)."""
    devices = ("/dev/null", "/dev/full", "/dev/zero")
    return next(p for p in devices if stat.S_ISCHR(os.stat(p).st_mode))


@pytest.mark.parametrize(
    ("storage", "pattern"),
    [
        (
            "postgresql://u@127.0.0.1:1/db",
            r"^error: postgresql://u@127\.0\.0\.1:1/db: --storage: cannot open the storage: "
            r"OperationalError: .*Connection refused",
        ),
        (
            "postgresql://u:s3cret@127.0.0.1:1/db",
            r"postgresql://u:\*\*\*@127\.0\.0\.1:1/db: --storage: .*Connection refused",
        ),
        ("sqlite:///{tmp}/none.db", r"--storage: no such SQLite database"),
        ("sqlite:///{tmp}/notes.txt", r"notes\.txt: --storage: is not a study storage \(not an"),
        ("sqlite:///{tmp}", r"--storage: is a directory, not an SQLite database"),
        ("sqlite:///:memory:", r"an in-memory SQLite database holds no study a reader could"),
        ("sqlite://", r"an in-memory SQLite database"),
        ("{tmp}", r"--storage: is a directory; give a journal file or a storage URL"),
        ("{device}", r"--storage: is a character device, not a journal file"),
        ("{tmp}/fifo", r"--storage: is a named pipe \(fifo\), not a journal file"),
        ("{tmp}/notes.txt", r"notes\.txt: --storage: cannot read the journal: .*not a magnet"),
        ("", r"^error: --storage: an empty value; give one, or leave the flag out$"),
        ("{tmp}/typo/s.journal", r"typo/s\.journal: --storage: no such study storage \(run a"),
        ("{tmp}/later.journal", r"later\.journal: --storage: no such study storage \(run a"),
    ],
)
def test_a_storage_that_is_none_is_refused_before_any_address(tmp_path, storage, pattern) -> None:
    os.mkfifo(tmp_path / "fifo")
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    before = sha(notes)
    spec = storage.format(tmp=tmp_path, device=char_device())
    refused(["--storage", spec, "--port", str(free_port())], pattern)
    assert sha(notes) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "notes.txt"]


@pytest.mark.parametrize(
    ("host", "pattern"),
    [
        ("bad..host", r"^error: --host: cannot listen on 'bad\.\.host': not a host name \(each"),
        ("a" * 300, r"cannot listen on 'a{80}\.\.\.': not a host name"),
        ("999.1.1.1", r"--host: cannot listen on '999\.1\.1\.1': not a host name or address"),
        ("", r"^error: --host: an empty value; give one, or leave the flag out$"),
        ("http://127.0.0.1", r"--host: cannot listen on 'http://127\.0\.0\.1'"),
        ("127.0.0.1:8050", r"--host: cannot listen on '127\.0\.0\.1:8050'"),
        ("192.0.2.1", r"--host: cannot listen on '192\.0\.2\.1': not an address of this machine"),
    ],
)
def test_a_bad_host_is_refused(tmp_path, host, pattern) -> None:
    refused(["--host", host, "--port", str(free_port()), "--storage", str(tmp_path / "j")], pattern)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("port", "pattern"),
    [
        ("0", r"Invalid value for '--port': 0 is not in the range 1<=x<=65535"),
        ("-1", r"Invalid value for '--port': -1 is not in the range"),
        ("70000", r"Invalid value for '--port': 70000 is not in the range"),
        ("http", r"Invalid value for '--port': 'http' is not a valid integer"),
        ("in use", r"^error: --port: port \d+ on 127\.0\.0\.1 is in use"),
    ],
)
def test_a_bad_port_is_refused(tmp_path, port, pattern) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        given = str(taken.getsockname()[1]) if port == "in use" else port
        refused(["--port", given, "--storage", str(tmp_path / "j")], pattern)


# ---- in the browser -----------------------------------------------------------------------------
class Recorded(Watched):
    """A page whose failed requests (an answer of 400 or more, or none) are recorded too;
    not a request the page itself gave up as it navigated away (Chromium's
    ``net::ERR_ABORTED``: a study page's poll in flight when a link is clicked, which a busy
    machine makes likely), which the server never failed."""

    def __init__(self, browser, **options):
        super().__init__(browser, **options)
        self.failed: list[str] = []
        self.page.on("response", self._response)
        self.page.on("requestfailed", self._failed)

    def _failed(self, request) -> None:
        if request.failure != "net::ERR_ABORTED":
            self.failed.append(f"{request.failure} {request.url}")

    def _response(self, response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.status} {response.url}")


@pytest.fixture(scope="module")
def server(names_storage):
    with dashboard(names_storage) as url:
        yield url


def fetched(page, url: str) -> bool:
    """Whether ``url`` answers 200, asked on a connection of its own: a connection the test
    left idle is one the server may close (uvicorn, after 5 s) as it is reused (the test once
    got ECONNRESET so on a loaded machine), as a browser would retry and Playwright does not."""
    return bool(page.request.get(url, headers={"Connection": "close"}).ok)


@pytest.mark.subprocess
def test_studies_named_with_slashes_open_from_the_index_and_draw(browser, server) -> None:
    """From the index, each study's page, every figure, a design's page, every download and
    the compare page's click: no request fails, no console error."""
    w = Recorded(browser)
    page = w.page
    every = "[...document.querySelectorAll('{}')].map(a => a.href)"
    try:
        for name in NAMES:
            w.ready(server + "/")
            page.locator(f"#studies-table tr[data-study={quote_css(name)}] td.name a").click()
            page.wait_for_selector("body[data-ready='1']", timeout=20000)
            assert page.locator("#study-name").text_content() == name
            for plot in page.locator(".plot[data-kind]").all():
                assert drawn(page, "#" + plot.get_attribute("id"))["plotted"]
            page.select_option("#trial-set", "all")
            page.locator("#trials-table tbody a").first.click()
            page.wait_for_selector("body[data-ready='1']", timeout=20000)
            assert page.locator("#design-title").text_content().endswith(name)
            links = page.evaluate(every.format('a[download], a[href^="/api/"]'))
            assert len(links) >= 3 and all(fetched(page, h) for h in links), links
            page.locator("#study-link").click()
            page.wait_for_selector("body[data-ready='1']", timeout=20000)
            links = page.evaluate(every.format("#downloads a"))
            assert len(links) == 4 and all(fetched(page, h) for h in links), links
        # a front on the compare page opens the design of its study
        w.ready(f"{server}/compare?study={quote(NAMES[0], safe='')}")
        point = page.evaluate(
            """() => {
              const gd = document.querySelector('[data-figure="fronts"]');
              const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
              const box = gd.getBoundingClientRect();
              const t = gd._fullData.filter(t => t.meta && t.customdata)[0];
              return {n: t.customdata[0],
                      px: box.left + xa._offset + xa.l2p(xa.d2l(t.x[0])),
                      py: box.top + ya._offset + ya.l2p(ya.d2l(t.y[0]))};
            }"""
        )
        page.mouse.move(point["px"], point["py"])
        page.mouse.click(point["px"], point["py"])
        page.wait_for_url(re.compile(r".*/trials/\d+$"), timeout=10000)
        assert page.url == f"{server}{study_url(NAMES[0])}/trials/{point['n']}"
        page.wait_for_selector("body[data-ready='1']", timeout=20000)
        assert w.failed == [] and w.errors == []
    finally:
        w.close()


def quote_css(text: str) -> str:
    """``text`` as a quoted CSS attribute value."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# ---- requests answered in any order (a busy machine) ---------------------------------------------
PARALLEL = "(document.getElementById('parallel').data || []).length > 0"
COLOUR = "document.getElementById('parallel').data[0].line.colorbar.title.text"


@pytest.mark.subprocess
def test_a_figure_shows_the_answer_to_its_last_request(browser, server) -> None:
    """The parallel coordinates asked for in one colour, then in another: the first answer,
    arriving last, is dropped (it was drawn over the second: the figure and its select
    disagreed)."""
    w = Recorded(browser)
    page = w.page
    held: list = []
    try:
        stale = re.compile(r"/figures/parallel\?color=energy_pj$")
        page.route(stale, lambda route: held.append(route))
        w.ready(server + "/studies/x")
        page.locator("#parallel").scroll_into_view_if_needed()
        while not held:
            page.wait_for_timeout(50)
        page.select_option("#parallel-color", "latency_cycles")
        wait_until(page, PARALLEL)
        assert "latency_cycles" in page.evaluate(COLOUR)
        with page.expect_event("requestfinished", lambda r: "color=energy_pj" in r.url):
            held[0].continue_()
        page.wait_for_timeout(500)  # the stale answer read and (before) drawn
        assert "latency_cycles" in page.evaluate(COLOUR)
        assert w.failed == [] and w.errors == []
    finally:
        w.close()


@pytest.mark.subprocess
def test_a_slow_first_load_is_not_asked_for_again(browser, server) -> None:
    """While the page's first load waits (a slow server), the polls do not load every figure
    again: each figure is asked for once."""
    w = Recorded(browser)
    page = w.page
    held: list = []
    asked: list[str] = []
    try:
        page.route(re.compile(r"/rows\?"), lambda route: held.append(route))
        page.on("request", lambda r: asked.append(r.url) if "/api/studies/x/" in r.url else None)
        page.goto(server + "/studies/x?every=0.5")
        page.wait_for_timeout(2500)  # five polls' time
        for route in held:
            route.continue_()
        page.wait_for_selector("body[data-ready='1']", timeout=20000)
        page.wait_for_timeout(1500)
        figures = [u.split("/api/studies/x/")[1].split("?")[0] for u in asked]
        assert len(held) == 1
        assert sorted(figures) == sorted(set(figures)), figures
        assert w.failed == [] and w.errors == []
    finally:
        w.close()


@pytest.mark.subprocess
def test_a_figure_that_failed_to_load_is_drawn_at_the_next_poll(browser, server) -> None:
    """A figure whose answer failed (the server busy, a journal being written) is asked for
    again: it was left blank until the study changed, for good when the search had ended."""
    w = Recorded(browser)
    page = w.page
    failed: list[str] = []

    def fail_once(route) -> None:
        if failed:
            route.continue_()
            return
        failed.append(route.request.url)
        route.fulfill(status=500, content_type="application/json", body='{"error": "busy"}')

    try:
        page.route(re.compile(r"/figures/parallel\?"), fail_once)
        w.ready(server + "/studies/x?every=0.5")
        page.locator("#parallel").scroll_into_view_if_needed()
        wait_until(page, PARALLEL)
        assert len(failed) == 1 and drawn(page, "#parallel")["dimensions"] > 0
    finally:
        w.close()
