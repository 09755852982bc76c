/* magnet: plots and tables shared by the dashboard and the HTML reports (plain JS). */
(function () {
  "use strict";

  var Magnet = {};

  Magnet.config = {
    displaylogo: false,
    responsive: true,
    modeBarButtonsToRemove: ["sendDataToCloud", "lasso2d", "select2d"],
  };

  /** Draw (or redraw) a figure {data, layout} into an element. */
  Magnet.plot = function (el, fig) {
    return Plotly.react(el, fig.data || [], fig.layout || {}, Magnet.config);
  };

  /** True when this browser draws WebGL in software (no GPU: SwiftShader, llvmpipe, or no
   * WebGL at all): a 3-D figure then holds the page's thread for about a second at each
   * drawing (0.47 s plotting and 0.23 s painting a 2,000-point front in headless Chromium,
   * issue 33), against tens of milliseconds on a GPU. Asked once, of a context then lost. */
  var softwareGL = null;
  Magnet.softwareWebGL = function () {
    if (softwareGL === null) {
      var renderer = Magnet.webglRenderer();
      softwareGL =
        renderer === null || /swiftshader|llvmpipe|softpipe|software|basic render/i.test(renderer);
    }
    return softwareGL;
  };

  /** The name of what draws this browser's WebGL (null: no WebGL), asked of a context then
   * lost. */
  Magnet.webglRenderer = function () {
    var gl = document.createElement("canvas").getContext("webgl");
    if (!gl) return null;
    var info = gl.getExtension("WEBGL_debug_renderer_info");
    var renderer = gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER);
    var lose = gl.getExtension("WEBGL_lose_context");
    if (lose) lose.loseContext();
    return renderer;
  };

  /** A button in el that empties el and calls draw() when pressed: a 3-D figure (data-gl)
   * in a browser that draws WebGL in software. */
  Magnet.whenAsked = function (el, draw) {
    var button = document.createElement("button");
    button.type = "button";
    button.className = "draw";
    button.textContent =
      "Draw in 3-D (this browser draws WebGL without a GPU: about a second, at each drawing)";
    button.addEventListener("click", function () {
      el.textContent = "";
      draw();
    });
    el.appendChild(button);
  };

  /** Call draw() the first time el comes near the screen (WebGL figures, such as parallel
   * coordinates, take seconds to draw without a GPU: they wait until they are looked at). */
  Magnet.whenVisible = function (el, draw) {
    if (!("IntersectionObserver" in window)) return draw();
    var seen = new IntersectionObserver(
      function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) {
          seen.disconnect();
          draw();
        }
      },
      { rootMargin: "200px" }
    );
    seen.observe(el);
    return null;
  };

  /** Whether el's figure waits to be drawn: marked data-lazy (until it comes into view), or
   * data-gl (3-D) in a browser that draws WebGL in software (until its button is pressed). */
  Magnet.waits = function (el) {
    return el.hasAttribute("data-lazy") || (el.hasAttribute("data-gl") && Magnet.softwareWebGL());
  };

  /** Call draw() when el's figure, which waits (Magnet.waits), may be drawn. */
  Magnet.whenMay = function (el, draw) {
    if (el.hasAttribute("data-lazy")) Magnet.whenVisible(el, draw);
    else Magnet.whenAsked(el, draw);
  };

  /** Draw every [data-figure] element under root that has a figure in figures; those that
   * wait (Magnet.waits) when they may; drawn(el), if given, after each is drawn. Resolves
   * when the others are drawn. */
  Magnet.renderPlots = function (root, figures, drawn) {
    var done = [];
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      var fig = figures[el.getAttribute("data-figure")];
      if (!fig || el.hasAttribute("data-rendered")) return;
      el.setAttribute("data-rendered", "1");
      var draw = function () {
        return Magnet.plot(el, fig).then(function () {
          if (drawn) drawn(el);
        });
      };
      if (Magnet.waits(el)) Magnet.whenMay(el, draw);
      else done.push(draw());
    });
    return Promise.all(done);
  };

  /** Call open(trial number) when a point of a drawn figure that carries one is clicked; a
   * click inside a front marker opens that marker's trial, even where plotly picks a faded
   * point drawn under it (plotly hands the click to the nearest point, whatever is on top). */
  Magnet.onDesignClick = function (el, open) {
    el.on("plotly_click", function (ev) {
      var p = ev && ev.points && ev.points[0];
      if (!p || p.customdata === undefined || p.customdata === null) return;
      var front = frontUnder(el, p, ev.event);
      open(front === null ? p.customdata : front);
    });
  };

  /** The trial of the front marker (a trace with meta "front") under the mouse, or null. */
  function frontUnder(el, p, mouse) {
    var xa = p.xaxis, ya = p.yaxis;
    if ((p.data && p.data.meta === "front") || !xa || !ya || !xa.d2l || !ya.d2l) return null;
    var box = el.getBoundingClientRect();
    var px = mouse ? mouse.clientX - box.left - xa._offset : xa.l2p(xa.d2l(p.x));
    var py = mouse ? mouse.clientY - box.top - ya._offset : ya.l2p(ya.d2l(p.y));
    var best = null, nearest = Infinity;
    (el._fullData || []).forEach(function (t) {
      if (t.meta !== "front" || !t.x || !t.customdata) return;
      var radius = ((t.marker && t.marker.size) || 0) / 2;
      t.x.forEach(function (x, i) {
        var d = Math.hypot(xa.l2p(xa.d2l(x)) - px, ya.l2p(ya.d2l(t.y[i])) - py);
        if (d <= radius && d < nearest) {
          nearest = d;
          best = t.customdata[i];
        }
      });
    });
    return best;
  }

  /** JSON embedded in a <script type="application/json" id=...> element. */
  Magnet.readJSON = function (id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  };

  /** A number as the tables show it. */
  Magnet.fmt = function (v) {
    if (v === null || v === undefined) return "";
    if (typeof v !== "number") return String(v);
    if (!isFinite(v)) return String(v);
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString("en-US");
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e6 || a < 1e-3)) return v.toExponential(3);
    return String(Number(v.toPrecision(4)));
  };

  /** A table cell: text (never HTML), an optional sort value and class. */
  Magnet.cell = function (tag, text, value, cls) {
    var td = document.createElement(tag || "td");
    td.textContent = text === null || text === undefined ? "" : String(text);
    if (value !== undefined && value !== null) td.setAttribute("data-value", String(value));
    if (cls) td.className = cls;
    return td;
  };

  function sortKey(cell) {
    if (!cell) return "";
    var v = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent;
    var n = Number(v);
    return v !== "" && !isNaN(n) ? n : v.toLowerCase();
  }

  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === "number" ? -1 : 1;
  }

  /** Re-apply a table's sort and filter (after its rows changed). */
  Magnet.refreshTable = function (table) {
    var body = table.tBodies[0];
    if (!body) return;
    var state = table._magnetSort;
    if (state) {
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (r1, r2) {
        var c = compare(sortKey(r1.cells[state.col]), sortKey(r2.cells[state.col]));
        return state.dir === "ascending" ? c : -c;
      });
      rows.forEach(function (r) {
        body.appendChild(r);
      });
    }
    var terms = (table._magnetFilter || "").toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var text = r.textContent.toLowerCase();
      var keep = terms.every(function (t) {
        return text.indexOf(t) >= 0;
      });
      r.hidden = !keep;
      if (keep) shown += 1;
    });
    var counter = document.querySelector('[data-count-for="' + table.id + '"]');
    if (counter) counter.textContent = shown + " of " + body.rows.length + " rows";
  };

  /** Sortable headers (click) and filter boxes (<input data-filter="TABLE_ID">). */
  Magnet.tables = function (root) {
    root.querySelectorAll("table.sortable").forEach(function (table) {
      if (table._magnetReady) return;
      table._magnetReady = true;
      var head = table.tHead;
      if (!head) return;
      head.addEventListener("click", function (ev) {
        var th = ev.target.closest("th");
        if (!th || th.hasAttribute("data-nosort")) return;
        var col = Array.prototype.indexOf.call(th.parentNode.cells, th);
        var old = table._magnetSort;
        var dir = old && old.col === col && old.dir === "ascending" ? "descending" : "ascending";
        table._magnetSort = { col: col, dir: dir };
        head.querySelectorAll("th").forEach(function (h) {
          h.removeAttribute("aria-sort");
        });
        th.setAttribute("aria-sort", dir);
        Magnet.refreshTable(table);
      });
      Magnet.refreshTable(table);
    });
    root.querySelectorAll("input[data-filter]").forEach(function (input) {
      if (input._magnetReady) return;
      input._magnetReady = true;
      input.addEventListener("input", function () {
        var table = document.getElementById(input.getAttribute("data-filter"));
        if (!table) return;
        table._magnetFilter = input.value;
        Magnet.refreshTable(table);
      });
    });
  };

  window.Magnet = Magnet;
})();
