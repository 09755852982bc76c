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
    var button = document.getElementById("compare-designs");
    var trials = {}; // number -> row of /updates
    var rows = {}; // number -> its <tr>
    var version = 0; // the study's version the table holds (the rows changed since are asked for)
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
    // answered after it (a busy server answers in any order) is dropped
    function loadFigure(el) {
      var kind = el.getAttribute("data-kind");
      var asked = (el._magnetAsked || 0) + 1;
      el._magnetAsked = asked;
      return getJSON(api + "/figures/" + kind + "?" + figureQuery(el)).then(function (fig) {
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

    function loadFigures() {
      var plots = document.querySelectorAll(".plot[data-kind]");
      return Promise.all(
        Array.prototype.map.call(plots, function (el) {
          if (!el.hasAttribute("data-lazy") || el._magnetSeen) return loadFigure(el);
          if (!el._magnetWaiting) {
            el._magnetWaiting = true;
            Magnet.whenVisible(el, function () {
              el._magnetSeen = true;
              loadFigure(el).then(null, failed);
            });
          }
          return null;
        })
      );
    }

    function selectionChanged() {
      button.disabled = checked(table).length < 2;
    }

    function makeRow(t) {
      var tr = document.createElement("tr");
      tr.className = t.front ? "front" : t.status;
      tr.setAttribute("data-trial", String(t.number));
      tr.appendChild(checkbox(t.number, selectionChanged));
      var num = document.createElement("td");
      num.className = "num";
      num.setAttribute("data-value", String(t.number));
      num.appendChild(link("#" + t.number, designPath(data.name, t.number)));
      tr.appendChild(num);
      var status = document.createElement("td");
      status.appendChild(badge(t.status));
      if (t.front) status.appendChild(badge("front"));
      tr.appendChild(status);
      data.objectives.forEach(function (o) {
        var v = t.values ? t.values[o] : undefined;
        tr.appendChild(Magnet.cell("td", Magnet.fmt(v), v, "num"));
      });
      tr.appendChild(Magnet.cell("td", t.dataflow || ""));
      data.params.forEach(function (p) {
        var v = t.params[p];
        var shown = t.shown && t.shown[p];
        tr.appendChild(Magnet.cell("td", shown || Magnet.fmt(v), v, "num"));
      });
      tr.appendChild(Magnet.cell("td", t.reason || "", null, t.reason ? "reason" : ""));
      return tr;
    }

    function wanted(t) {
      var which = setSelect.value;
      return which === "all" || (which === "front" ? t.front : t.feasible);
    }

    // the rows that changed are made again; the others stay (with their check boxes)
    function renderTrials(changed) {
      changed.forEach(function (n) {
        var old = rows[n];
        var tr = makeRow(trials[n]);
        if (old) {
          tr.querySelector("input").checked = old.querySelector("input").checked;
          if (old.parentNode) old.parentNode.replaceChild(tr, old);
        }
        rows[n] = tr;
      });
      Object.keys(trials).forEach(function (n) {
        var tr = rows[n];
        var keep = wanted(trials[n]);
        if (keep && !tr.parentNode) tbody.appendChild(tr);
        else if (!keep && tr.parentNode) tbody.removeChild(tr);
      });
      Magnet.refreshTable(table);
      selectionChanged();
    }

    function loadUpdates() {
      return getJSON(api + "/updates?since=" + version).then(function (u) {
        var changed = [];
        if (u.complete) {
          trials = {};
          rows = {};
          tbody.textContent = "";
        }
        var front = {};
        u.front.forEach(function (n) {
          front[n] = true;
        });
        u.rows.forEach(function (t) {
          trials[t.number] = t;
          changed.push(t.number);
        });
        Object.keys(trials).forEach(function (n) {
          var t = trials[n];
          if (!!front[n] !== !!t.front) {
            t.front = !!front[n];
            if (changed.indexOf(t.number) < 0) changed.push(t.number);
          }
        });
        version = u.version;
        renderTrials(changed);
      });
    }

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
      return Promise.all([loadFigures(), loadUpdates()]).then(function () {
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
        if (el && (!el.hasAttribute("data-lazy") || el._magnetSeen)) {
          loadFigure(el).then(null, failed);
        }
      });
    }
    setSelect.addEventListener("change", function () {
      renderTrials([]);
    });
    button.addEventListener("click", function () {
      var q = new URLSearchParams();
      checked(table).forEach(function (n) {
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
