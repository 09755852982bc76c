"""Reports: the plotly figures of studies and designs, the self-contained HTML report, and
the commands that write it (``magnet report``, the report at the end of ``magnet search``).
The report in a browser, offline, is tested in test_dashboard.py."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.report import breakdowns, study_figures, theme, write_report
from magnet.report.design_page import design_figures, design_view, safe_file_name
from magnet.report.html import plotly_js
from magnet.search import load_study, search
from magnet.search.pareto import nondominated, to_minimised_log
from tests.conftest import DATA
from tests.helpers import XSS, XSS_LAYER

SPACE = DATA / "search" / "small_space.yaml"


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """A study whose area limit makes some designs infeasible with values."""
    root = tmp_path_factory.mktemp("limited")
    data = yaml.safe_load(SPACE.read_text())
    data["limits"] = [{"metric": "area_mm2", "max": 0.21}]
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    (root / "space.yaml").write_text(yaml.safe_dump(data))
    return search(root / "space.yaml", n_trials=8, storage=str(root / "s.journal"))


def front_numbers(fig) -> list[int]:
    data = theme.figure_json(fig)["data"]
    return sorted(n for t in data if t.get("meta") == "front" for n in t["customdata"])


# ---- figures --------------------------------------------------------------------------------
def test_front_2d_highlights_the_front_by_dataflow(small) -> None:
    front = small.pareto_front()
    for x, y in (("energy_pj", "latency_cycles"), ("latency_cycles", "area_mm2")):
        fig = theme.figure_json(study_figures.front_2d(small, x, y))
        traces = {t["meta"]: t for t in fig["data"] if t["meta"] != "front"}
        fronts = [t for t in fig["data"] if t["meta"] == "front"]
        assert sorted(n for t in fronts for n in t["customdata"]) == sorted(t.number for t in front)
        # one trace per dataflow, named after it
        assert sorted(t["name"] for t in fronts) == sorted(
            f"{d}, front" for d in {t.dataflow for t in front}
        )
        others = [t for t in fig["data"] if t["meta"] == "feasible"]
        shown = {n for t in others for n in t["customdata"]}
        # a design drawn exactly where a front design is (equal on x and y) is not drawn
        # under it (a click would open it instead); the front point's hover names it
        places = {(t.values[x], t.values[y]): t.number for t in front}
        hidden = {
            t.number: places[(t.values[x], t.values[y])]
            for t in small.feasible()
            if t.number not in places.values() and (t.values[x], t.values[y]) in places
        }
        assert shown == {t.number for t in small.feasible()} - set(places.values()) - set(hidden)
        hovers = {
            n: h for t in fronts for n, h in zip(t["customdata"], t["hovertext"], strict=True)
        }
        for twin, number in hidden.items():
            assert f"#{twin}" in hovers[number].split("also here:")[1]
        # the dotted line is the front of these two objectives alone
        stairs = traces["staircase"]
        feasible = small.feasible()
        points = to_minimised_log([[t.values[x], t.values[y]] for t in feasible], ["minimize"] * 2)
        mask = nondominated(points)
        expected = sorted(
            {(t.values[x], t.values[y]) for t, k in zip(feasible, mask, strict=True) if k}
        )
        assert sorted(set(zip(stairs["x"], stairs["y"], strict=True))) == expected
        assert fig["layout"]["xaxis"]["type"] == "log"
        assert "vector_width = " in fronts[0]["hovertext"][0]


def test_infeasible_designs_show_their_reason(limited) -> None:
    infeasible = [t for t in limited.trials() if t.status == "infeasible" and t.values]
    assert infeasible, "the limit should make some design infeasible"
    fig = theme.figure_json(study_figures.front_2d(limited, "energy_pj", "area_mm2"))
    trace = next(t for t in fig["data"] if t["meta"] == "infeasible")
    assert sorted(trace["customdata"]) == sorted(t.number for t in infeasible)
    assert all("outside the limit area_mm2&lt;=0.21" in h for h in trace["hovertext"])
    assert front_numbers(study_figures.front_2d(limited)) == sorted(
        t.number for t in limited.pareto_front()
    )


def test_front_3d_hypervolume_parallel(small) -> None:
    assert front_numbers(study_figures.front_3d(small)) == sorted(
        t.number for t in small.pareto_front()
    )
    fig = theme.figure_json(study_figures.front_3d(small))
    assert fig["layout"]["scene"]["zaxis"]["title"]["text"] == "area_mm2"
    hv = theme.figure_json(study_figures.hypervolume(small))["data"][0]
    assert hv["x"] == [n for n, _ in small.hypervolume_history()]
    assert hv["y"][-1] == pytest.approx(small.hypervolume())
    par = theme.figure_json(study_figures.parallel(small, "latency_cycles"))["data"][0]
    labels = [d["label"] for d in par["dimensions"]]
    assert labels[:4] == ["vector_width", "vector_units", "weight_collector", "accum_collector"]
    assert "dataflow" in labels and labels[-3:] == [f"log10 {o}" for o in small.objectives]
    flows = par["dimensions"][labels.index("dataflow")]
    assert set(flows["ticktext"]) == {t.dataflow for t in small.feasible()}
    assert len(par["line"]["color"]) == len(small.feasible())


def test_importance_per_objective(small, storage) -> None:
    scores = study_figures.importances(small)
    assert scores is not None and set(scores) == set(small.objectives)
    for s in scores.values():
        assert set(s) <= {*small.space.ranges(), "dataflow"}
        assert sum(s.values()) == pytest.approx(1.0)
    fig = theme.figure_json(study_figures.importance(small))
    assert [t["name"] for t in fig["data"]] == small.objectives
    few = load_study(XSS, storage)
    assert study_figures.importances(few) is None
    text = theme.figure_json(study_figures.importance(few))["layout"]["annotations"][0]["text"]
    assert "importance needs at least 10 feasible designs" in text


def test_design_figures_add_up(small) -> None:
    t = small.pareto_front()[0]
    view = design_view(small, t)
    record = t.records[0]
    figs = design_figures(view)
    cat = figs["category"]["data"]
    assert math.fsum(tr["y"][0] for tr in cat) == pytest.approx(record.energy_pj, rel=1e-9)
    level = figs["level"]["data"]
    assert math.fsum(tr["y"][0] for tr in level) == pytest.approx(record.energy_pj, rel=1e-9)
    area = figs["area"]["data"][0]
    assert math.fsum(area["y"]) == pytest.approx(record.area_mm2, rel=1e-9)
    layers = figs["layers-0"]["data"]
    energy = [tr for tr in layers if tr["yaxis"] in ("y", None) and tr["type"] == "bar"]
    assert math.fsum(v for tr in energy for v in tr["y"]) == pytest.approx(record.energy_pj)
    # the operands, as stored, stay within each level's energy (test_design_page.py: more)
    ops = view.workloads[0].operands
    assert ops is not None
    assert ops == record.energy_pj_by_operand and view.workloads[0].operands_note is None
    for lvl, by_op in ops.items():
        assert set(by_op) <= {"weights", "inputs", "outputs"}
        assert math.fsum(by_op.values()) <= record.energy_pj_by_level[lvl] * (1 + 1e-9)
    assert "<< MAC >>" in view.workloads[0].loop_nests[0]["loop_nest"]
    assert view.workloads[0].command.startswith(
        f"magnet evaluate --arch trial-{t.number}.yaml --workload tests/data/search/small_net.yaml"
        f" --dataflow {t.dataflow}"
    )
    assert "--mapping-file" in view.workloads[0].exact_command


def test_comparisons(small, storage) -> None:
    other = load_study(XSS, storage)
    fig = theme.figure_json(
        study_figures.compare_fronts([small, other], "energy_pj", "latency_cycles")
    )
    assert [t["meta"]["study"] for t in fig["data"]] == ["small", XSS]
    # per study, the feasible designs no other of its designs beats on these two objectives,
    # as a step line from the lowest energy
    ok = small.feasible()
    values = [[t.values["energy_pj"], t.values["latency_cycles"]] for t in ok]
    keep = nondominated(to_minimised_log(values, ["minimize", "minimize"]))
    wanted = sorted(
        (t for t, k in zip(ok, keep, strict=True) if k), key=lambda t: t.values["energy_pj"]
    )
    assert fig["data"][0]["customdata"] == [t.number for t in wanted]
    assert fig["data"][0]["x"] == [t.values["energy_pj"] for t in wanted]
    assert fig["data"][0]["line"]["shape"] == "hv"
    assert fig["data"][1]["name"] == "&lt;script&gt;alert(1)&lt;/script&gt;"
    a, b = small.pareto_front()[:2]
    bars, by_cat = breakdowns.compare_designs([("a", a), ("b", b)], ["energy_pj", "area_mm2"])
    bars = theme.figure_json(bars)
    assert [t["y"][0] for t in bars["data"]] == [
        a.metrics["energy_pj"],
        a.metrics["area_mm2"],
        b.metrics["energy_pj"],
        b.metrics["area_mm2"],
    ]
    assert [t["name"] for t in theme.figure_json(by_cat)["data"]] == ["a", "b"]


def test_safe_file_names() -> None:
    assert safe_file_name("quickstart") == "quickstart"
    assert re.fullmatch(r"script_alert_1_script-[0-9a-f]{8}", safe_file_name(XSS))
    assert re.fullmatch(r"etc_passwd-[0-9a-f]{8}", safe_file_name("../../etc/passwd"))
    assert re.fullmatch(r"study-[0-9a-f]{8}", safe_file_name("..."))
    assert len(safe_file_name("x" * 500)) == 100
    # two names never share a file (a report of one overwrote the other's)
    names = ["a/b", "a?b", "a b", ".", "..", "~..", "x" * 500, "x" * 501, "a_b"]
    assert len({safe_file_name(n) for n in names}) == len(names)


# ---- the HTML report ----------------------------------------------------------------------------
def figures_of(text: str) -> dict:
    blob = re.search(
        r'<script type="application/json" id="magnet-figures">(.*?)</script>', text, re.S
    )
    return json.loads(blob.group(1))


def test_report_is_one_self_contained_file(small, tmp_path) -> None:
    path = write_report(small, tmp_path / "new" / "report.html")
    assert path == tmp_path / "new" / "report.html"
    text = path.read_text()
    assert text.count("* plotly.js (strict") == 1  # embedded once, the vendored strict build
    assert text.count(plotly_js()) == 1
    ours = text.replace(plotly_js(), "")
    assert not re.search(r"<script[^>]+src=", ours) and "<link" not in ours
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", ours)
    assert "default-src 'none'" in text  # the page may load nothing
    figures = figures_of(text)
    for key in ("front:energy_pj:latency_cycles", "front:energy_pj:area_mm2", "front3d"):
        assert front_numbers_in(figures[key]) == sorted(t.number for t in small.pareto_front())
    assert {"hypervolume", "parallel", "importance"} <= set(figures)
    for t in small.pareto_front():
        assert f'id="design-{t.number}"' in text
        assert f"design-{t.number}-category" in figures
    best = small.best()
    for metric, (number, _) in best.items():
        assert re.search(rf"<td[^>]*>{metric}</td>.*?#design-{number}", text, re.S)
    assert "magnet evaluate --arch trial-" in text
    assert "data:text/yaml;charset=utf-8," in text  # the downloads travel with the page


def front_numbers_in(fig: dict) -> list[int]:
    return sorted(n for t in fig["data"] if t.get("meta") == "front" for n in t["customdata"])


def test_report_escapes_names(storage, tmp_path) -> None:
    text = write_report(load_study(XSS, storage), tmp_path / "x.html").read_text()
    assert XSS not in text and XSS_LAYER not in text
    assert "<title>magnet report: &lt;script&gt;alert(1)&lt;/script&gt;</title>" in text
    assert "&lt;img src=x onerror=alert(2)&gt;" in text  # the layer in a table
    figures = figures_of(text)  # and inside the figures, escaped for plotly
    assert any("&lt;script&gt;" in json.dumps(f) for f in figures.values())


# ---- the commands --------------------------------------------------------------------------
def test_report_command(storage, tmp_path) -> None:
    out = tmp_path / "r.html"
    r = CliRunner().invoke(
        main, ["report", "--study", "small", "--storage", storage, "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert out.exists() and f"written to {out}" in r.output
    r = CliRunner().invoke(
        main, ["report", "--study", "nope", "--storage", storage, "-o", str(out)]
    )
    assert r.exit_code == 2 and r.output.startswith("error:") and "no study 'nope'" in r.output
    r = CliRunner().invoke(
        main, ["report", "--study", "small", "--storage", storage, "-o", str(tmp_path)]
    )
    assert r.exit_code == 2 and "is a directory" in r.output
    missing = tmp_path / "nowhere" / "r.html"
    r = CliRunner().invoke(
        main, ["report", "--study", "small", "--storage", storage, "-o", str(missing)]
    )
    assert r.exit_code == 2 and "does not exist" in r.output


def test_search_writes_a_report_at_the_end(tmp_path, monkeypatch) -> None:
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    journal = str(tmp_path / "s.journal")
    base = ["search", str(space), "--storage", journal, "--trials", "2", "--study", "a b<i>"]
    r = CliRunner().invoke(main, base)
    assert r.exit_code == 0, r.output
    default = Path("magnet-results") / f"{safe_file_name('a b<i>')}.html"  # a_b_i-HASH.html
    assert default.exists() and f"report written to {default}" in r.output
    assert "&lt;i&gt;" in default.read_text()
    chosen = tmp_path / "chosen.html"
    r = CliRunner().invoke(main, [*base, "--report", str(chosen)])  # resumes: nothing to do
    assert r.exit_code == 0 and chosen.exists() and f"report written to {chosen}" in r.output
    default.unlink()
    r = CliRunner().invoke(main, [*base, "--no-report"])
    assert r.exit_code == 0 and not default.exists() and "report written" not in r.output
    r = CliRunner().invoke(main, [*base, "--no-report", "--report", str(chosen)])
    assert r.exit_code == 2 and "not both" in r.output
    r = CliRunner().invoke(main, [*base, "--report", str(tmp_path / "no" / "r.html")])
    assert r.exit_code == 2 and "does not exist" in r.output
