/* magnet dashboard: live pages over the JSON API (plain JS; study data is set as text only). */
(function () {
  "use strict";

  var body = document.body;
  var page = body.getAttribute("data-page");
  var query = new URLSearchParams(location.search);
  var every = Number(query.get("every") || body.getAttribute("data-poll") || 3);
  var pollMs = Math.max(500, (isFinite(every) && every > 0 ? every : 3) * 1000);
  var live = document.getElementById("live");

  // a study name as one path segment, as app.py's study_segment makes it: percent-encoded
  // ("/" and "~" too); "." and ".." (a browser resolves them, however encoded) as "~." and "~.."
  function studyPath(name) {
    var dots = name === "." || name === "..";
    return "/studies/" + (dots ? "~" + name : encodeURIComponent(name).replace(/~/g, "%7E"));
  }

  function designPath(name, number) {
    return studyPath(name) + "/trials/" + number;
  }

  function say(text, bad) {
    if (!live) return;
    live.textContent = text;
    live.style.color = bad ? "#c92a2a" : "";
  }

  function stamp() {
    say("updated " + new Date().toLocaleTimeString());
  }

  // plotly.js, once it has run: the study page loads it deferred (study.html), the figures
  // are asked for meanwhile and plotted then
  var plotlyLoaded = null;
  function plotlyReady() {
    if (!plotlyLoaded) {
      var script = document.getElementById("plotly-js");
      plotlyLoaded =
        window.Plotly || !script
          ? Promise.resolve()
          : new Promise(function (resolve, reject) {
              script.addEventListener("load", function () {
                resolve();
              });
              script.addEventListener("error", function () {
                reject(new Error("plotly.js did not load"));
              });
            });
    }
    return plotlyLoaded;
  }

  function getJSON(url) {
    return fetch(url, { headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().then(function (data) {
        if (!r.ok) throw new Error((data && data.error) || "HTTP " + r.status);
        return data;
      });
    });
  }

  // fn every pollMs, never two at once; first (a promise): the page's own first load, which
  // the polls wait for (on a slow machine it takes longer than pollMs: a poll meanwhile
  // would load everything a second time, answered in any order)
  function poll(fn, first) {
    var busy = !!first;
    if (first) {
      first.then(null, function () {}).then(function () {
        busy = false;
      });
    }
    setInterval(function () {
      if (busy || document.hidden) return;
      busy = true;
      Promise.resolve()
        .then(fn)
        .then(stamp, function (err) {
          say("cannot update: " + err.message, true);
        })
        .then(function () {
          busy = false;
        });
    }, pollMs);
  }

  function badge(text, cls) {
    var span = document.createElement("span");
    span.className = "badge " + (cls || text);
    span.textContent = text;
    return span;
  }

  function link(text, href) {
    var a = document.createElement("a");
    a.href = href;
    a.textContent = text;
    return a;
  }

  function checkbox(value, onChange) {
    var td = document.createElement("td");
    var box = document.createElement("input");
    box.type = "checkbox";
    box.value = String(value);
    box.setAttribute("aria-label", "select " + value);
    box.addEventListener("change", onChange);
    td.appendChild(box);
    return td;
  }

  function checked(table) {
    return Array.prototype.map.call(
      table.querySelectorAll("tbody input[type=checkbox]:checked"),
      function (b) {
        return b.value;
      }
    );
  }

  function keepChecked(table, render) {
    var before = checked(table);
    render();
    table.querySelectorAll("tbody input[type=checkbox]").forEach(function (b) {
      b.checked = before.indexOf(b.value) >= 0;
    });
  }

  // ---- the studies ------------------------------------------------------------------------
  function studiesPage() {
    var table = document.getElementById("studies-table");
    var tbody = table.tBodies[0];
    var button = document.getElementById("compare-studies");
    var none = document.getElementById("no-studies");

    function selectionChanged() {
      button.disabled = checked(table).length < 1;
    }

    function render(rows) {
      keepChecked(table, function () {
        tbody.textContent = "";
        rows.forEach(function (s) {
          var tr = document.createElement("tr");
          tr.setAttribute("data-study", s.name);
          tr.appendChild(checkbox(s.name, selectionChanged));
          var name = document.createElement("td");
          name.className = "name";
          name.appendChild(link(s.name, s.url));
          tr.appendChild(name);
          tr.appendChild(Magnet.cell("td", s.space));
          tr.appendChild(Magnet.cell("td", s.template));
          tr.appendChild(Magnet.cell("td", (s.workloads || []).join(", ")));
          ["designs", "ok", "infeasible", "failed", "running"].forEach(function (k) {
            tr.appendChild(Magnet.cell("td", s.trials[k], s.trials[k], "num " + k));
          });
          tr.appendChild(Magnet.cell("td", s.front_size, s.front_size, "num front"));
          tr.appendChild(
            Magnet.cell("td", Magnet.fmt(s.hypervolume), s.hypervolume, "num hypervolume")
          );
          var best = document.createElement("td");
          best.className = "best";
          Object.keys(s.best || {}).forEach(function (k) {
            var b = s.best[k];
            var line = document.createElement("div");
            line.appendChild(document.createTextNode(k + " " + (b ? Magnet.fmt(b.value) + " " : "-")));
            if (b) line.appendChild(link("#" + b.trial, designPath(s.name, b.trial)));
            best.appendChild(line);
          });
          tr.appendChild(best);
          var state = document.createElement("td");
          state.appendChild(badge(s.state, s.state === "running" ? "running" : ""));
          tr.appendChild(state);
          tbody.appendChild(tr);
        });
      });
      none.hidden = rows.length > 0;
      Magnet.refreshTable(table);
      selectionChanged();
    }

    button.addEventListener("click", function () {
      var q = new URLSearchParams();
      checked(table).forEach(function (n) {
        q.append("study", n);
      });
      location.href = "/compare?" + q.toString();
    });
    Magnet.tables(document);
    render(Magnet.readJSON("initial-studies") || []);
    body.setAttribute("data-ready", "1");
    poll(function () {
      return getJSON("/api/studies").then(render);
    });
  }

  // ---- a study ----------------------------------------------------------------------------
  function studyPage() {
    var data = Magnet.readJSON("study-data");
    var api = "/api" + studyPath(data.name);
    var table = document.getElementById("trials-table");
    var tbody = table.tBodies[0];
    var setSelect = document.getElementById("trial-set");
    var filter = document.getElementById("trial-filter");
    var counter = document.getElementById("trial-count");
    var prev = document.getElementById("page-prev");
    var next = document.getElementById("page-next");
    var button = document.getElementById("compare-designs");
    // the page of the table shown: the server sorts, filters and pages (a study of 100,000
    // trials is never sent whole); a row whose trial did not change keeps its element
    var view = {
      set: setSelect.value,
      sort: "number",
      order: "asc",
      offset: 0,
      limit: Number(table.getAttribute("data-rows")) || 100,
      q: "",
    };
    var shown = 0; // the version of the study the page shows (0: load it)
    var asked = 0; // the last request for a page: an older answer is dropped
    var rows = {}; // number -> {text: its row as JSON, tr: its element}
    var selected = {}; // number -> true: the designs chosen for comparison, over every page
    var loaded = 0; // the study's version whose figures and rows were all loaded (0: load them)
    var failures = 0; // loads that failed (what failed is asked for again at the next poll)

    function value(id) {
      var el = document.getElementById(id);
      return el ? el.value : "";
    }

    function figureQuery(el) {
      var q = new URLSearchParams();
      (el.getAttribute("data-query") || "").split(" ").filter(Boolean).forEach(function (pair) {
        var parts = pair.split("=");
        q.set(parts[0], value(parts[1]));
      });
      return q.toString();
    }

    // a figure shows the answer to the last request made for it: one asked before and
    // answered after it (a busy server answers in any order) is dropped; plotted once
    // plotly.js has run and after (a promise, if given) is settled
    function loadFigure(el, after) {
      var kind = el.getAttribute("data-kind");
      var asked = (el._magnetAsked || 0) + 1;
      el._magnetAsked = asked;
      var fig = getJSON(api + "/figures/" + kind + "?" + figureQuery(el));
      return Promise.all([fig, plotlyReady(), after])
        .then(function (got) {
          // each figure plotted in a task of its own: the browser draws one while the next
          // is plotted (not all of them at the end of one long task)
          return new Promise(function (resolve) {
            setTimeout(resolve, 0, got[0]);
          });
        })
        .then(function (fig) {
          if (asked !== el._magnetAsked) return null;
          return Magnet.plot(el, fig).then(function () {
            if (!el._magnetClicks) {
              el._magnetClicks = true;
              Magnet.onDesignClick(el, function (number) {
                location.href = designPath(data.name, number);
              });
            }
          });
        });
    }

    // whether a figure still waits to be drawn (Magnet.waits), not yet seen or asked for
    function waiting(el) {
      return !el._magnetSeen && Magnet.waits(el);
    }

    // the figures: each waiting one when it may be drawn; the others now, those marked
    // data-last (the 3-D front) plotted after the rest, so that the 2-D figures appear first
    function loadFigures() {
      var plots = document.querySelectorAll(".plot[data-kind]");
      var now = [];
      var last = [];
      Array.prototype.forEach.call(plots, function (el) {
        if (!waiting(el)) {
          if (el.hasAttribute("data-last")) last.push(el);
          else now.push(loadFigure(el));
        } else if (!el._magnetWaiting) {
          el._magnetWaiting = true;
          Magnet.whenMay(el, function () {
            el._magnetSeen = true;
            loadFigure(el).then(null, failed);
          });
        }
      });
      var rest = Promise.all(now).then(null, function () {}); // a failure is said by refresh
      return Promise.all(
        now.concat(
          last.map(function (el) {
            return loadFigure(el, rest);
          })
        )
      );
    }

    function chosen() {
      return Object.keys(selected).map(Number).sort(function (x, y) {
        return x - y;
      });
    }

    function selectionChanged(ev) {
      var box = ev && ev.target;
      if (box) {
        if (box.checked) selected[box.value] = true;
        else delete selected[box.value];
      }
      button.disabled = chosen().length < 2;
    }

    function makeRow(t) {
      var tr = document.createElement("tr");
      tr.className = t.front ? "front" : t.status;
      tr.setAttribute("data-trial", String(t.number));
      tr.appendChild(checkbox(t.number, selectionChanged));
      var num = document.createElement("td");
      num.className = "num";
      num.appendChild(link("#" + t.number, designPath(data.name, t.number)));
      tr.appendChild(num);
      var status = document.createElement("td");
      status.appendChild(badge(t.status));
      if (t.front) status.appendChild(badge("front"));
      tr.appendChild(status);
      data.objectives.forEach(function (o) {
        var v = t.values ? t.values[o] : undefined;
        tr.appendChild(Magnet.cell("td", Magnet.fmt(v), null, "num"));
      });
      tr.appendChild(Magnet.cell("td", t.dataflow || ""));
      data.params.forEach(function (p) {
        var v = t.params[p];
        var text = t.shown && t.shown[p];
        tr.appendChild(Magnet.cell("td", text || Magnet.fmt(v), null, "num"));
      });
      tr.appendChild(Magnet.cell("td", t.reason || "", null, t.reason ? "reason" : ""));
      return tr;
    }

    function renderPage(page) {
      var fresh = {};
      tbody.textContent = "";
      page.rows.forEach(function (t) {
        var text = JSON.stringify(t);
        var known = rows[t.number];
        if (!known || known.text !== text) known = { text: text, tr: makeRow(t) };
        known.tr.querySelector("input").checked = !!selected[t.number];
        fresh[t.number] = known;
        tbody.appendChild(known.tr);
      });
      rows = fresh; // the rows of this page only: a long study's pages are not all kept
      var last = Math.min(page.offset + page.limit, page.total);
      counter.textContent =
        page.total === 0
          ? "no rows"
          : "rows " + (page.offset + 1) + "-" + last + " of " + page.total.toLocaleString("en-US");
      prev.disabled = page.offset === 0;
      next.disabled = last >= page.total;
      selectionChanged();
    }

    // the page of the table as the view says now (and again on each poll that finds the
    // study changed); a request overtaken by a newer one is dropped
    function loadRows() {
      var q = new URLSearchParams(view);
      var mine = (asked += 1);
      return getJSON(api + "/rows?" + q.toString()).then(function (page) {
        if (mine !== asked) return;
        if (page.offset >= page.total && page.total > 0) {
          // the set shrank under this page (a filter, a front that moved): its last page
          view.offset = Math.max(0, Math.floor((page.total - 1) / view.limit) * view.limit);
          return loadRows();
        }
        shown = page.version;
        renderPage(page);
      });
    }

    function changeView(changes) {
      Object.assign(view, changes);
      loadRows().then(null, failed);
    }

    table.tHead.addEventListener("click", function (ev) {
      var th = ev.target.closest("th[data-sort]");
      if (!th) return;
      var key = th.getAttribute("data-sort");
      var order = view.sort === key && view.order === "asc" ? "desc" : "asc";
      table.tHead.querySelectorAll("th").forEach(function (h) {
        h.removeAttribute("aria-sort");
      });
      th.setAttribute("aria-sort", order === "asc" ? "ascending" : "descending");
      changeView({ sort: key, order: order, offset: 0 });
    });
    prev.addEventListener("click", function () {
      changeView({ offset: Math.max(0, view.offset - view.limit) });
    });
    next.addEventListener("click", function () {
      changeView({ offset: view.offset + view.limit });
    });
    var typing = null;
    filter.addEventListener("input", function () {
      clearTimeout(typing);
      typing = setTimeout(function () {
        changeView({ q: filter.value, offset: 0 });
      }, 250);
    });

    function showCounts(s) {
      var values = Object.assign({}, s.trials, {
        front_size: s.front_size,
        hypervolume: Magnet.fmt(s.hypervolume),
      });
      document.querySelectorAll("[data-count]").forEach(function (el) {
        var v = values[el.getAttribute("data-count")];
        el.textContent = v === undefined ? "" : String(v);
      });
    }

    function failed(err) {
      failures += 1;
      loaded = 0;
      say("cannot load: " + err.message, true);
    }

    function refresh(summary) {
      showCounts(summary);
      if (summary.version === loaded) return null;
      var before = failures;
      var page = summary.version === shown ? null : loadRows();
      return Promise.all([loadFigures(), page]).then(function () {
        if (failures === before) loaded = summary.version; // else: everything again next time
      });
    }

    // a choice of axes never names one objective twice: the other select takes the old value
    document.querySelectorAll("select[data-axes]").forEach(function (el) {
      el._magnetOld = el.value;
      el.addEventListener("change", function () {
        var group = document.querySelectorAll('select[data-axes="' + el.getAttribute("data-axes") + '"]');
        group.forEach(function (other) {
          if (other !== el && other.value === el.value) {
            other.value = el._magnetOld;
            other._magnetOld = other.value;
          }
        });
        el._magnetOld = el.value;
        replot(el.getAttribute("data-plot"));
      });
    });
    document.querySelectorAll("select[data-replot]").forEach(function (el) {
      el.addEventListener("change", function () {
        replot(el.getAttribute("data-replot"));
      });
    });

    // the figures (ids, separated by spaces) a choice redraws
    function replot(ids) {
      ids.split(" ").forEach(function (id) {
        var el = document.getElementById(id);
        if (el && !waiting(el)) {
          loadFigure(el).then(null, failed);
        }
      });
    }
    setSelect.addEventListener("change", function () {
      changeView({ set: setSelect.value, offset: 0 });
    });
    button.addEventListener("click", function () {
      var q = new URLSearchParams();
      chosen().forEach(function (n) {
        q.append("design", n + ":" + data.name);
      });
      location.href = "/compare?" + q.toString();
    });
    Magnet.tables(document);
    var first = Promise.resolve(refresh(data.summary));
    first.then(
      function () {
        body.setAttribute("data-ready", "1");
        stamp();
      },
      failed
    );
    poll(function () {
      return getJSON(api).then(refresh);
    }, first);
  }

  // ---- a design, a comparison ----------------------------------------------------------
  function staticPage(id) {
    Magnet.tables(document);
    Magnet.renderPlots(document, Magnet.readJSON(id) || {}).then(function () {
      // a study's front on the compare page: a click opens that design of that study
      document.querySelectorAll("[data-figure='fronts']").forEach(function (el) {
        el.on("plotly_click", function (ev) {
          var p = ev && ev.points && ev.points[0];
          if (p && p.data.meta && p.customdata !== undefined) {
            location.href = designPath(p.data.meta.study, p.customdata);
          }
        });
      });
      body.setAttribute("data-ready", "1");
    });
  }

  if (page === "index") studiesPage();
  else if (page === "study") studyPage();
  else if (page === "design") staticPage("design-figures");
  else if (page === "compare") staticPage("compare-figures");
})();
