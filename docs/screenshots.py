"""The README's screenshots of the dashboard: ``python docs/screenshots.py``.

Runs 40 trials of the built-in space quickstart (half a minute here) into the default storage
of a temporary folder, serves ``magnet dashboard`` there on a free port, and writes
docs/dashboard-study.png (the study page down to its parallel coordinates, every figure
drawn) and
docs/dashboard-design.png (the first design of the front) with Debian's chromium, driven
by Playwright.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
CHROMIUM = "/usr/bin/chromium"
WIDTH, HEIGHT = 1400, 1500
TRIALS = 40


def magnet(*args: str, cwd: Path, **options) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "magnet.cli", *args], cwd=cwd, env=env, **options
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(page, expression: str, timeout: float = 60.0) -> None:
    """Poll ``expression`` (the dashboard's policy refuses Playwright's wait_for_function)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"still false after {timeout}s: {expression}")
        time.sleep(0.2)


def shoot(url: str) -> None:
    from playwright.sync_api import sync_playwright

    front = json.load(urllib.request.urlopen(url + "/api/studies/quickstart/pareto"))
    number = front[0]["number"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(url + "/studies/quickstart")
        page.wait_for_selector("body[data-ready='1']", timeout=60000)
        for button in page.locator(".plot > button.draw").all():  # WebGL without a GPU here
            button.click()
        page.mouse.move(0, 0)  # no hover label left where the button was
        for plot in page.locator(".plot[data-lazy]").all():  # drawn when seen: each in turn
            plot.scroll_into_view_if_needed()
            wait_until(page, f"!!document.getElementById('{plot.get_attribute('id')}').data")
        wait_until(page, "document.querySelectorAll('#parallel .parcoords g.y-axis').length > 0")
        time.sleep(1)  # its lines, and the 3-D scene
        page.evaluate("window.scrollTo(0, 0)")
        box = page.locator("#parallel").bounding_box()
        bottom = box["y"] + box["height"] + 20
        page.screenshot(
            path=DOCS / "dashboard-study.png",
            clip={"x": 0, "y": 0, "width": WIDTH, "height": bottom},
            full_page=True,
        )
        page.goto(f"{url}/studies/quickstart/trials/{number}")
        page.wait_for_selector("body[data-ready='1']", timeout=60000)
        time.sleep(0.5)
        page.screenshot(path=DOCS / "dashboard-design.png")
        browser.close()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        space = "quickstart"
        search = magnet(
            "search",
            space,
            "--trials",
            str(TRIALS),
            "--no-report",
            cwd=root,
            stdout=subprocess.DEVNULL,
        )
        if search.wait() != 0:
            sys.exit("the search failed")
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = magnet("dashboard", "--port", str(port), cwd=root, stderr=subprocess.DEVNULL)
        try:
            for _ in range(150):
                try:
                    urllib.request.urlopen(url + "/api/studies", timeout=2).close()
                    break
                except OSError:
                    time.sleep(0.2)
            shoot(url)
        finally:
            server.terminate()
            server.wait(timeout=10)
    for name in ("dashboard-study.png", "dashboard-design.png"):
        print(f"wrote docs/{name}")


if __name__ == "__main__":
    main()
