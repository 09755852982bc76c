/* magnet dashboard: live pages over the JSON API (plain JS; study data is set as text only). */
(function () {
  "use strict";

  var body = document.body;
  var page = body.getAttribute("data-page");
  var query = new URLSearchParams(location.search);
  var every = Number(query.get("every") || body.getAttribute("data-poll") || 3);
  var pollMs = Math.max(500, (isFinite(every) && every > 0 ? every : 3) * 1000);
  var live = document.getElementById("live");

  function studyPath(name) {
    return "/studies/" + encodeURIComponent(name);
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

  function poll(fn) {
    var busy = false;
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
    var trials = [];
    var signature = null;

    function value(id) {
      var el = document.getElementById(id);
      return el ? el.value : "";
    }

    function figureQuery(kind) {
      var q = new URLSearchParams();
      if (kind === "front") {
        q.set("x", value("front-x"));
        q.set("y", value("front-y"));
      } else if (kind === "front3d") {
        q.set("x", value("front3d-x"));
        q.set("y", value("front3d-y"));
        q.set("z", value("front3d-z"));
      } else if (kind === "parallel") {
        q.set("color", value("parallel-color"));
      }
      return q.toString();
    }

    function loadFigure(el) {
      var kind = el.getAttribute("data-kind");
      return getJSON(api + "/figures/" + kind + "?" + figureQuery(kind))
        .then(function (fig) {
          return Magnet.plot(el, fig);
        })
        .then(function () {
          if (!el._magnetClicks && (kind === "front" || kind === "front3d")) {
            el._magnetClicks = true;
            Magnet.onDesignClick(el, function (number) {
              location.href = designPath(data.name, number);
            });
          }
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
              loadFigure(el);
            });
          }
          return null;
        })
      );
    }

    function selectionChanged() {
      button.disabled = checked(table).length < 2;
    }

    function renderTrials() {
      var which = setSelect.value;
      keepChecked(table, function () {
        tbody.textContent = "";
        trials.forEach(function (t) {
          if (which === "front" && !t.front) return;
          if (which === "feasible" && !t.feasible) return;
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
            tr.appendChild(Magnet.cell("td", Magnet.fmt(v), v, "num"));
          });
          tr.appendChild(Magnet.cell("td", t.reason || "", null, t.reason ? "reason" : ""));
          tbody.appendChild(tr);
        });
      });
      Magnet.refreshTable(table);
      selectionChanged();
    }

    function loadTrials() {
      return getJSON(api + "/trials").then(function (rows) {
        trials = rows;
        renderTrials();
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

    function refresh(summary) {
      showCounts(summary);
      if (summary.signature === signature) return null;
      signature = summary.signature;
      return Promise.all([loadFigures(), loadTrials()]);
    }

    ["front-x", "front-y"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) el.addEventListener("change", function () {
        loadFigure(document.getElementById("front2d"));
      });
    });
    ["front3d-x", "front3d-y", "front3d-z"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) el.addEventListener("change", function () {
        loadFigure(document.getElementById("front3d"));
      });
    });
    document.getElementById("parallel-color").addEventListener("change", function () {
      loadFigure(document.getElementById("parallel"));
    });
    setSelect.addEventListener("change", renderTrials);
    button.addEventListener("click", function () {
      var q = new URLSearchParams();
      checked(table).forEach(function (n) {
        q.append("design", n + ":" + data.name);
      });
      location.href = "/compare?" + q.toString();
    });
    Magnet.tables(document);
    Promise.resolve(refresh(data.summary)).then(
      function () {
        body.setAttribute("data-ready", "1");
        stamp();
      },
      function (err) {
        say("cannot load: " + err.message, true);
      }
    );
    poll(function () {
      return getJSON(api).then(refresh);
    });
  }

  // ---- a design, a comparison ----------------------------------------------------------
  function staticPage(id) {
    Magnet.tables(document);
    Magnet.renderPlots(document, Magnet.readJSON(id) || {}).then(function () {
      body.setAttribute("data-ready", "1");
    });
  }

  if (page === "index") studiesPage();
  else if (page === "study") studyPage();
  else if (page === "design") staticPage("design-figures");
  else if (page === "compare") staticPage("compare-figures");
})();
