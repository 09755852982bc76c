"""How long a big study's page takes to be drawn in a browser (issue 33: < 2 s at 100,000 trials).

The study is ``bench_dashboard.py``'s (made once and cached in ``--cache``: ``--trials``
designs of ``benchmarks/dashboard_space.yaml``, cloned to ``--clone`` trials through Optuna's
public API). ``magnet dashboard`` serves it; once it has read the storage, Debian's Chromium
(headless, driven by Playwright) opens the study page, and the wall time from the request to
the page drawn is taken: every figure the page draws at once (those not drawn only when
scrolled to: ``data-lazy``) plotted by plotly and the trials table filled, then two
animation frames. A browser that draws WebGL in software (this one: SwiftShader, no GPU)
shows a button in place of the 3-D front, which it draws when pressed: the page is then
drawn with the button shown, and the time from pressing it to the 3-D front drawn is taken
apart (``front3d_when_asked_s``). ``--runs`` times in a new browser context each (nothing
cached, as a browser that never opened the dashboard: plotly.js's 5 MB parsed and compiled
each time), then ``--runs`` times reloaded in one context (plotly.js cached, as a reader
reloading the page has it). The first run asks the server for each figure the first time
(made then, then kept); the others find them made.

    python benchmarks/bench_page.py --trials 300 --clone 100000

Writes ``benchmarks/results/page.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import common
from bench_dashboard import REPO, STUDY, _dashboard, clone_study, make_study

sys.path.insert(0, str(REPO))  # the tests' Chromium: where Debian puts it, run as they run it
from tests.conftest import CHROMIUM, CHROMIUM_ARGS

#: True once every figure drawn at once is plotted (or shows the button that draws it: the
#: 3-D front in a browser without a GPU) and the table has its rows.
DRAWN = """() => {
  const plots = [...document.querySelectorAll('.plot[data-kind]:not([data-lazy])')];
  const plotted = plots.every(gd => (gd.classList.contains('js-plotly-plot') && !!gd._fullLayout)
    || !!gd.querySelector('button.draw'));
  return plots.length > 0 && plotted
    && document.querySelectorAll('#trials-table tbody tr').length > 0;
}"""
#: The browser's WebGL renderer, as the page asks it (SwiftShader: drawn in software).
RENDERER = "() => Magnet.webglRenderer()"
#: True once the 3-D front is plotted.
PLOTTED_3D = "() => !!document.getElementById('front3d')._fullLayout"
VIEWPORT = {"width": 1400, "height": 1000}
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
TARGET_S = 2.0


def _read(base: str) -> float:
    """Seconds until the dashboard has read the storage (its studies listed)."""
    started = time.perf_counter()
    while True:
        try:
            with urllib.request.urlopen(base + "/api/studies", timeout=60) as r:
                if r.status == 200:
                    return time.perf_counter() - started
        except urllib.error.HTTPError as err:  # 503 while it reads
            if err.code != 503:
                raise
        time.sleep(0.2)


def _drawn_s(page, url: str) -> float:
    """Wall seconds from asking ``page`` for ``url`` to the page drawn."""
    started = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    page.wait_for_function(DRAWN, timeout=120_000, polling=20)
    page.evaluate(FRAMES)
    return round(time.perf_counter() - started, 3)


def _asked_s(page) -> float | None:
    """Wall seconds from pressing the 3-D front's button (shown by a browser that draws WebGL
    in software) to the 3-D front drawn (None: no button, the 3-D front was drawn at once)."""
    button = page.locator("#front3d > button.draw")
    if not button.count():
        return None
    started = time.perf_counter()
    button.click()
    page.wait_for_function(PLOTTED_3D, timeout=120_000, polling=20)
    page.evaluate(FRAMES)
    return round(time.perf_counter() - started, 3)


def _runs(browser, url: str, runs: int) -> dict[str, list[float]]:
    """``runs`` times in a new browser context (nothing cached: a browser that never opened
    the dashboard), each then drawing the 3-D front if it waits for its button, then ``runs``
    times in one context (the page opened again: plotly.js and its compiled code cached, as
    a reader reloading it has them)."""
    cold, asked = [], []
    for _ in range(runs):
        context = browser.new_context(viewport=VIEWPORT)
        try:
            page = context.new_page()
            cold.append(_drawn_s(page, url))
            asked.append(_asked_s(page))
        finally:
            context.close()
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        _drawn_s(page, url)  # the cache filled
        again = [_drawn_s(page, url) for _ in range(runs)]
        renderer = page.evaluate(RENDERER)
    finally:
        context.close()
    return {
        "new_browser_s": cold,
        "front3d_when_asked_s": asked,
        "reloaded_s": again,
        "renderer": renderer,
    }


def main() -> None:
    """Make (or find) the study, serve it, open its page ``--runs`` times; write the record."""
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=common.count, default=300, help="designs searched")
    parser.add_argument("--clone", type=int, default=100_000, help="trials cloned to (0: none)")
    parser.add_argument("--runs", type=common.count, default=4)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "magnet")
    parser.add_argument(
        "--out", type=common.out_file, default=REPO / "benchmarks" / "results" / "page.json"
    )
    args = parser.parse_args()
    journal, _ = make_study(args.cache, args.trials)
    if args.clone:
        journal = clone_study(journal, args.cache, args.clone)
    with _dashboard(REPO, journal) as (base, _proc, _started_s):
        read_s = _read(base)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                runs = _runs(browser, f"{base}/studies/{STUDY}", args.runs)
            finally:
                browser.close()
    cold, again, renderer = runs["new_browser_s"], runs["reloaded_s"], runs.pop("renderer")
    record = {
        "study": {"journal": journal.name, "trials": args.clone or args.trials},
        "storage_read_s": round(read_s, 2),
        **runs,
        "first_s": cold[0],
        "new_browser_median_s": statistics.median(cold[1:] or cold),
        "reloaded_median_s": statistics.median(again),
        "webgl_renderer": renderer,
        "target_s": TARGET_S,
        "load_average": os.getloadavg(),
        "machine": common.machine(),
        "date": time.strftime("%Y-%m-%d"),
    }
    common.write_record(args.out, record)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    common.interruptible(main)
