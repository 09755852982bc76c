"""What plotly drew on a page, counted in the DOM and in the pixels of its WebGL canvases, so
that a test asserts a figure was drawn, not only that plotly was handed its data.

    counts = drawn(page, "#front2d")
    counts["markers"]    # scatter markers drawn (SVG path.point)
    counts["gl_pixels"]  # pixels the figure's WebGL canvases coloured (a screenshot)

``watch_csp(page)`` before the page loads, then ``csp_violations(page)``: what the page's
Content-Security-Policy refused. A refused eval reaches Playwright only this way: no console
message, and the error is thrown into the script, which may catch it (plotly's regl does).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tests.png import read_png

#: The SVG and canvases plotly leaves in a figure's element ``gd``: the shapes with an area
#: (markers, bars) or a length (lines), without those plotly leaves empty (``d="M0,0Z"``, or
#: a bar of value 0).
COUNT = """(gd) => {
  const all = (s) => [...gd.querySelectorAll(s)];
  const area = (s) => all(s).filter(p => p.getBBox().width * p.getBBox().height > 0).length;
  const long = (s) => all(s).filter(p => p.getTotalLength() > 0).length;
  const message = gd.querySelector('.no-webgl');
  return {
    plotted: gd.classList.contains('js-plotly-plot') && !!gd._fullLayout,
    traces: all('.cartesianlayer g.trace').length,
    markers: area('.cartesianlayer path.point'),
    lines: long('.cartesianlayer path.js-line'),
    bars: area('.cartesianlayer g.point path'),
    contours: long('.cartesianlayer .contourlevel path'),
    images: all('.heatmaplayer image, .imagelayer image').length,
    dimensions: all('.parcoords g.y-axis').length,
    canvases: all('canvas').length,
    no_webgl: !!message && getComputedStyle(message).display !== 'none',
  };
}"""

#: Two animation frames: what plotly put off to the next frame is drawn.
FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"

#: Hide a figure but its canvases (or show it all again): a screenshot then holds what
#: WebGL drew, without axes, labels or legends.
ONLY_CANVASES = """(gd, only) => {
  gd.style.visibility = only ? 'hidden' : '';
  gd.querySelectorAll('canvas').forEach(c => { c.style.visibility = only ? 'visible' : ''; });
}"""

CSP_LISTENER = """window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(
  e.violatedDirective + ' refused ' + (e.blockedURI || '?') + ' at ' + e.sourceFile + ':' +
  e.lineNumber));"""


def drawn(page: Any, selector: str, colors: tuple[str, ...] = (), timeout: float = 20.0) -> dict:
    """What plotly drew in the element ``selector`` (scrolled into view: figures drawn when
    seen are drawn; its button pressed if it shows one: the 3-D front waits for it in a
    browser that draws WebGL in software), once it has plotted there and the counts stopped
    changing: the COUNT keys, ``gl_pixels`` (pixels of its WebGL canvases that differ from
    the page behind them) and, for each of ``colors`` (``#rrggbb``), the pixels of that
    colour its canvases drew (``gl_colors``)."""
    gd = page.locator(selector)
    gd.scroll_into_view_if_needed()
    ask = gd.locator(":scope > button.draw")
    if ask.count():
        ask.click()
    deadline = time.monotonic() + timeout
    last = None
    while True:
        page.evaluate(FRAMES)
        counts = gd.evaluate(COUNT)
        if counts["plotted"] and counts == last:
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"{selector} still drawing after {timeout}s: {counts}")
        last = counts
    rgb = canvas_pixels(page, selector) if counts["canvases"] else np.zeros((0, 3), np.int16)
    # WebGL figures draw over several frames after their DOM is done (parallel coordinates
    # draw their lines in blocks of 5,000, in later animation frames: slow without a GPU):
    # read the pixels until two reads agree, and something is drawn, or the time is up
    while counts["canvases"] and time.monotonic() < deadline:
        again = canvas_pixels(page, selector)
        if len(again) == len(rgb) and len(rgb) > 0:
            break
        rgb = again
    counts["gl_pixels"] = len(rgb)
    counts["gl_colors"] = {c: color_pixels(rgb, c) for c in colors}
    return counts


def canvas_pixels(page: Any, selector: str) -> np.ndarray:
    """int16[pixel, rgb]: the pixels the element's canvases coloured on the screen, those
    that differ from the page behind them (the screenshot's commonest colour)."""
    gd = page.locator(selector)
    gd.scroll_into_view_if_needed()
    box = gd.bounding_box()
    gd.evaluate(ONLY_CANVASES, True)
    try:
        page.evaluate(FRAMES)
        rgb = read_png(page.screenshot(clip=box))[..., :3].astype(np.int16)
    finally:
        gd.evaluate(ONLY_CANVASES, False)
    flat = rgb.reshape(-1, 3)
    packed = flat.astype(np.int64) @ np.array([1 << 16, 1 << 8, 1])
    colors, counts = np.unique(packed, return_counts=True)
    behind = flat[packed == colors[counts.argmax()]][0]
    return flat[np.abs(flat - behind).max(axis=-1) > 8]  # not the faint edges of antialiasing


def color_pixels(pixels: np.ndarray, color: str, tolerance: int = 12) -> int:
    """Pixels (``int16[pixel, rgb]``) within ``tolerance`` per channel of ``#rrggbb``."""
    rgb = np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
    return int((np.abs(pixels - rgb).max(axis=-1) <= tolerance).sum())


def watch_csp(page: Any) -> None:
    """Record the page's Content-Security-Policy violations (call before it loads)."""
    page.add_init_script(CSP_LISTENER)


def csp_violations(page: Any) -> list[str]:
    return page.evaluate("window.__csp || []")
