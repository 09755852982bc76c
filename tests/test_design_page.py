"""A design's page (the dashboard's and the report's) shows the stored record and prices
nothing: access energy by level and operand, per-layer breakdowns and network breakdowns with
linear / log buttons, the roofline of every workload, sizes in human units, and the area's
overheads by their current names."""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
import shutil
from typing import Any
from urllib.parse import quote

import pytest
import yaml

import magnet as mg
from magnet.cost.contract import OVERHEAD_NOTES
from magnet.model.network_result import LayerMappings
from magnet.model.records import OLD_RECORD
from magnet.report import breakdowns, theme
from magnet.report.design_page import (
    build_arch,
    design_figures,
    design_view,
    template_params,
)
from magnet.report.html import environment, render_report
from magnet.search import load_study, search
from magnet.search.job import pack
from magnet.templates import get_template
from magnet.units import exact_bytes, human_bytes
from magnet.workload.network import Network, NetworkLayer
from tests.conftest import DATA
from tests.helpers import XSS, XSS_LAYER
from tests.test_dashboard import Watched, dashboard
from tests.test_hand_derived import COSTS, LAYER_KCP, arch, buf, dram, mapping

SPACE = DATA / "search" / "small_space.yaml"
#: What a version-4 network record adds (a version-3 record lacks them).
NEW_FIELDS = ("energy_pj_by_operand", "peak_macs_per_cycle", "dram_bytes_per_cycle")


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    """A study whose workload file is gone after the search (renamed away)."""
    root = tmp_path_factory.mktemp("moved")
    net = root / "net.yaml"
    shutil.copy(DATA / "search" / "small_net.yaml", net)
    space = yaml.safe_load(SPACE.read_text())
    space["workloads"] = [str(net)]
    (root / "space.yaml").write_text(yaml.safe_dump(space))
    journal = str(root / "s.journal")
    search(root / "space.yaml", n_trials=3, storage=journal, study="moved")
    net.rename(root / "elsewhere.yaml")
    return load_study("moved", journal)


def body(view) -> str:
    """The design body as the dashboard and the report render it (``design_body``)."""
    template = environment().from_string(
        '{% import "macros.html" as m %}'
        '{{ m.design_body(view, "", {"arch": None, "mappings": []}) }}'
    )
    return template.render(view=view)


def older(trial):
    """``trial`` as magnet wrote it before records kept operands and roofs (version 3)."""
    records = [
        {**{k: v for k, v in r.items() if k not in NEW_FIELDS}, "schema_version": 3}
        for r in trial.stored_records()
    ]
    return dataclasses.replace(trial, _records=pack(records))


# ---- the record -------------------------------------------------------------------------
def test_network_record_keeps_operand_energy_times_repeats() -> None:
    # test_hand_derived.test_two_level_output_stationary_order, one run of K2 C4 P4 (DRAM
    # loops K2 / P4 / C4): RF weights 32 reads + 32 fills, inputs 32 + 32, outputs 24 reads
    # + 32 updates, at 1 pJ; DRAM weights 32 reads, inputs 32 reads, outputs 8 updates, at
    # 10 pJ (720 pJ in all). The layer repeats 3 times: every number x 3.
    net = Network(name="kcp", layers=(NetworkLayer(layer=LAYER_KCP, repeat=3),))
    m = mapping(DRAM={"temporal": {"K": 2, "P": 4, "C": 4}})
    a = arch(dram(), buf("RF", 3))
    maps = LayerMappings(by_name={LAYER_KCP.name: m})
    record = mg.evaluate(net, a, maps, cost_model=COSTS).record()
    assert record.schema_version == 10 == mg.SCHEMA_VERSION
    assert record.energy_pj_by_operand == {
        "DRAM": {"weights": 960.0, "inputs": 960.0, "outputs": 240.0},
        "RF": {"weights": 192.0, "inputs": 192.0, "outputs": 168.0},
    }
    assert list(record.energy_pj_by_operand) == ["DRAM", "RF"]  # outermost first
    # the roofs: one MAC; a DRAM without a bandwidth has no memory roof
    assert record.peak_macs_per_cycle == 1 and record.dram_bytes_per_cycle is None


def test_stored_operand_energy_adds_up_to_the_access_energy(small) -> None:
    # Access energy (reads, fills, updates of every level) is the "memory" (on-chip levels)
    # plus the "dram" category; a level's energy also has its clock, control, leakage and
    # the network below it, so its operands add up to at most the level's energy.
    trials = small.feasible()
    assert trials
    for t in trials:
        for r in t.records:
            ops = r.energy_pj_by_operand
            assert ops is not None
            levels = list(r.energy_pj_by_level)
            assert list(ops) == levels[:-1]  # every storage level; the MACs (last) have none
            access = math.fsum(pj for by_op in ops.values() for pj in by_op.values())
            cats = r.energy_pj_by_category
            assert access == pytest.approx(cats["memory"] + cats["dram"], rel=1e-12)
            assert math.fsum(ops["DRAM"].values()) == pytest.approx(cats["dram"], rel=1e-12)
            for level, by_op in ops.items():
                assert math.fsum(by_op.values()) <= r.energy_pj_by_level[level] * (1 + 1e-12)


def test_record_roofs_are_the_templates_numbers(small) -> None:
    # simba's MACs: vector_width lanes x vector_units x pe_rows x pe_cols; its DRAM: the
    # technology's GB/s (TemplateParams.dram_gb_per_s) over the clock, in bytes per cycle.
    for t in small.feasible():
        p = get_template("simba").Params(**template_params(small, t))
        record = t.records[0]
        macs = p.vector_width * p.vector_units * p.pe_rows * p.pe_cols
        assert record.peak_macs_per_cycle == macs
        assert record.dram_bytes_per_cycle == pytest.approx(p.dram_gb_per_s / p.clock_ghz)


def test_records_grow_little(small) -> None:
    # stored compressed per trial: the operand energies (levels x operands) and the two roofs
    # add a few floats per network, none per layer: about 210 bytes packed on this 2-layer
    # network (+12 %) as on ResNet-18 (+6 %, 3,750 -> 3,970 bytes)
    for t in small.feasible():
        now, before = pack(t.stored_records()), pack(older(t).stored_records())
        assert len(now) - len(before) <= 300 * len(t.records), (len(now), len(before))


# ---- a viewer prices nothing ------------------------------------------------------------
def test_a_design_view_reads_no_workload_and_prices_nothing(moved, monkeypatch) -> None:
    import magnet.workload.loader as loading

    evaluation = importlib.import_module("magnet.model.evaluate")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a viewer must not load a workload or price a mapping")

    monkeypatch.setattr(loading, "load_workload", refuse)
    monkeypatch.setattr(evaluation, "evaluate_batch", refuse)
    t = moved.pareto_front()[0]
    view = design_view(moved, t)
    figures = design_figures(view)
    w = view.workloads[0]
    assert w.operands == t.records[0].energy_pj_by_operand and w.operands_note is None
    shown = {tr["name"]: tr["y"] for tr in figures["operand"]["data"]}
    for level_index, level in enumerate(w.operands):
        for op, pj in w.operands[level].items():
            assert shown[op][level_index] == pj
    assert "<< MAC >>" in w.loop_nests[0]["loop_nest"]  # rebuilt from the parameters
    page = body(view)
    assert OLD_RECORD not in page and "nothing is priced again" in page
    html = render_report(moved)
    assert f"design-{t.number}-roofline-0" in html


def test_an_older_record_says_what_it_lacks(small) -> None:
    t = older(small.pareto_front()[0])
    view = design_view(small, t)
    assert view.workloads[0].operands is None and view.workloads[0].operands_note == OLD_RECORD
    figures = design_figures(view)
    assert figures["operand"]["layout"]["annotations"][0]["text"] == OLD_RECORD
    roof = figures["roofline-0"]
    assert not [tr for tr in roof["data"] if str(tr.get("meta")).startswith("roof:")]
    assert [tr for tr in roof["data"] if str(tr.get("meta")).startswith("layers:")]
    assert f"roofs: {OLD_RECORD}" in roof["layout"]["title"]["text"]
    assert f"Access energy by level and operand, small-net: {OLD_RECORD}." in body(view)


# ---- rooflines --------------------------------------------------------------------------
def test_roofline_points_and_roofs_come_from_the_record(small) -> None:
    for t in small.pareto_front():
        record = t.records[0]
        fig = theme.figure_json(breakdowns.roofline(record))
        points = sorted(
            (x, y, tr["meta"])
            for tr in fig["data"]
            if tr["meta"].startswith("layers:")
            for x, y in zip(tr["x"], tr["y"], strict=True)
        )
        # intensity: MACs per DRAM byte; throughput: MACs per cycle; of one repeat each
        expected = sorted(
            (r.macs / r.dram_bytes, r.macs / r.latency_cycles, f"layers:{r.bound}")
            for r in record.layers
            if r.dram_bytes is not None and r.dram_bytes > 0
        )
        assert points == expected
        peak, bandwidth = record.peak_macs_per_cycle, record.dram_bytes_per_cycle
        roofs = {tr["meta"]: tr for tr in fig["data"] if tr["meta"].startswith("roof:")}
        ridge = peak / bandwidth  # where the memory roof meets the compute roof
        assert roofs["roof:compute"]["y"] == [peak, peak]
        assert roofs["roof:compute"]["x"][0] == pytest.approx(ridge)
        memory = roofs["roof:memory"]
        assert memory["x"][1] == pytest.approx(ridge) and memory["y"][1] == pytest.approx(peak)
        assert memory["y"][0] == pytest.approx(bandwidth * memory["x"][0])
        # the model keeps every layer under its roofs (DRAM cycles = bytes / bandwidth)
        for x, y, _ in points:
            assert y <= min(peak, bandwidth * x) * (1 + 1e-9)
        assert fig["layout"]["xaxis"]["type"] == "log" == fig["layout"]["yaxis"]["type"]


def test_roofline_hover_escapes_layer_names(storage) -> None:
    study = load_study(XSS, storage)
    fig = theme.figure_json(breakdowns.roofline(study.pareto_front()[0].records[0]))
    hover = " ".join(h for tr in fig["data"] for h in tr.get("hovertext") or [])
    assert "&lt;img src=x onerror=alert(2)&gt;" in hover and XSS_LAYER not in hover
    assert "MACs per DRAM byte" in hover and "TOPS" in hover


# ---- linear / log -----------------------------------------------------------------------
def relayout(layout: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``layout`` after plotly's relayout of dotted keys (what a button does)."""
    out = yaml.safe_load(yaml.safe_dump(layout))
    for key, value in changes.items():
        *path, last = key.split(".")
        node = out
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return out


def test_breakdowns_have_linear_and_log_buttons(small) -> None:
    t = small.pareto_front()[0]
    figures = design_figures(design_view(small, t))
    for key in ("category", "level", "operand", "layers-0"):
        layout = figures[key]["layout"]
        (menu,) = layout["updatemenus"]
        assert [b["label"] for b in menu["buttons"]] == ["linear", "log"]
        assert menu["active"] == 0 and layout["barmode"] == "stack"
        linear, log = (relayout(layout, b["args"][0]) for b in menu["buttons"])
        assert log["yaxis"]["type"] == "log" and log["barmode"] == "group"
        assert linear["yaxis"]["type"] == "linear" and linear["barmode"] == "stack"
        assert (
            theme.LOG_NOTE in log["title"]["text"] and theme.STACKED_NOTE in linear["title"]["text"]
        )
        assert layout["title"]["text"] == linear["title"]["text"]
    # the hover of a part keeps its share of the whole, on either axis
    for tr in figures["layers-0"]["data"][:2]:
        assert "of the layer's" in tr["hovertemplate"]


def test_design_comparison_reads_records_and_has_log_buttons(small, monkeypatch) -> None:
    evaluation = importlib.import_module("magnet.model.evaluate")
    monkeypatch.setattr(evaluation, "evaluate_batch", None)  # pricing would fail
    a, b = small.pareto_front()[:2]
    _, by_cat = breakdowns.compare_designs([("a", a), ("b", b)], ["energy_pj"])
    layout = theme.figure_json(by_cat)["layout"]
    (menu,) = layout["updatemenus"]
    log = relayout(layout, menu["buttons"][1]["args"][0])
    assert log["yaxis"]["type"] == "log" and log["barmode"] == "group"  # grouped already
    assert theme.GROUPED_NOTES[1] in log["title"]["text"]
    for trace, t in zip(theme.figure_json(by_cat)["data"], (a, b), strict=True):
        cats = t.records[0].energy_pj_by_category
        assert trace["y"] == [cats[c] for c in trace["x"]]


@pytest.mark.subprocess
def test_log_buttons_work_in_the_dashboard_and_the_report(
    browser,
    storage,
    tmp_path,
) -> None:
    study = load_study("small", storage)
    t = study.pareto_front()[0]
    state = """(sel) => { const gd = document.querySelector(sel);
        return [gd._fullLayout.yaxis.type, gd._fullLayout.barmode]; }"""
    with dashboard(storage) as url:
        w = Watched(browser)
        try:
            w.ready(f"{url}/studies/small/trials/{t.number}")
            for key in ("category", "layers-0"):
                sel = f"[data-figure='{key}']"
                assert w.page.evaluate(state, sel) == ["linear", "stack"]
                w.page.locator(f"{sel} .updatemenu-button").nth(1).click()
                assert w.page.evaluate(state, sel) == ["log", "group"]
            roof = w.page.evaluate("document.querySelector(\"[data-figure='roofline-0']\").data")
            assert {tr["meta"] for tr in roof} >= {"roof:compute", "roof:memory"}
            assert w.errors == []
        finally:
            w.close()
    path = tmp_path / "report.html"
    path.write_text(render_report(study))
    w = Watched(browser, offline=True)
    try:
        w.ready(path.as_uri())
        box = w.page.locator(f"#design-{t.number}")
        box.locator(":scope > summary").click()
        sel = f"[data-figure='design-{t.number}-layers-0']"
        w.page.locator(f"{sel}.js-plotly-plot").wait_for()
        w.page.locator(f"{sel} .updatemenu-button").nth(1).click()
        assert w.page.evaluate(state, sel) == ["log", "group"]
        w.page.locator(f"{sel} .updatemenu-button").nth(0).click()
        assert w.page.evaluate(state, sel) == ["linear", "stack"]
        assert w.errors == []
    finally:
        w.close()


# ---- sizes and names --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("size", "text"),
    [
        (65536, "64 KiB"),
        (1536 * 1024, "1.5 MiB"),
        (3 * 1024, "3 KiB"),
        (384, "384 B"),
        (1000, "1000 B"),  # binary units: below 1 KiB
        (10**6, "977 KiB"),  # three significant digits
        (2**30, "1 GiB"),
        (2**20 - 1, "1 MiB"),  # 1023.999 KiB rounds up into the next unit
        (12.5, "12.5 B"),  # an average over layers
    ],
)
def test_human_sizes(size, text) -> None:
    assert human_bytes(size) == text


def test_pages_print_sizes_in_human_units_with_the_exact_count(small) -> None:
    assert exact_bytes(65536) == "65,536 bytes" and exact_bytes(1) == "1 byte"
    t = small.pareto_front()[0]
    view = design_view(small, t)
    page = body(view)
    # the space fixes global_buffer: 32KiB
    assert '<th>global_buffer <span class="muted">(fixed)</span></th>' in page
    assert '<td class="mono" title="32,768 bytes">32 KiB</td>' in page
    built = build_arch(small, t)
    rows = {a["name"]: a for a in view.area}
    for lvl in built.levels:
        if lvl.capacity_bits is None:
            assert rows[lvl.name]["capacity"]["text"] == "unbounded"
            continue
        each = lvl.capacity_bits // 8
        assert rows[lvl.name]["capacity"] == {"text": human_bytes(each), "title": exact_bytes(each)}
        assert f'title="{exact_bytes(each)}">{human_bytes(each)}</span>' in page
    for row in t.records[0].layers:  # the layer table's DRAM bytes
        assert f'title="{exact_bytes(row.dram_bytes)}">{human_bytes(row.dram_bytes)}<' in page


def test_no_uncore_the_overheads_explained(small, storage) -> None:
    from starlette.testclient import TestClient

    from magnet.dashboard import create_app

    t = small.pareto_front()[0]
    overheads = [k for k in t.records[0].area_mm2_by_component if k in OVERHEAD_NOTES]
    assert overheads, "the built-in tables price overheads"
    with TestClient(create_app(storage), base_url="http://127.0.0.1") as client:
        pages = [
            client.get(f"/studies/small/trials/{t.number}").text,
            client.get("/compare?design=" + quote(f"{t.number}:small")).text,
            render_report(small),
        ]
    for page in pages:
        assert not re.search("uncore", page, re.I)
    area = design_figures(design_view(small, t))["area"]["data"][0]
    notes = dict(zip(area["x"], (c[1] for c in area["customdata"]), strict=True))
    for kind in overheads:
        assert f"<td>{kind}</td><td>{OVERHEAD_NOTES[kind]}</td>" in pages[0]
        assert notes[kind] == OVERHEAD_NOTES[kind]


def test_a_package_design_shows_its_chiplets_split_and_nop(tmp_path) -> None:
    space = yaml.safe_load(SPACE.read_text())
    space.update(
        name="pkg",
        template="package",
        params={**space["params"], "chiplets_x": 2, "chiplets_y": {"choices": [1, 2]}},
        workloads=[str(DATA / "search" / "small_net.yaml")],
    )
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    study = search(tmp_path / "space.yaml", n_trials=2, storage=str(tmp_path / "s.journal"))
    trial = study.feasible()[0]
    record = trial.records[0]
    chiplets = 2 * trial.params["chiplets_y"]
    assert record.chiplets == chiplets and record.schema_version == 10
    page = body(design_view(study, trial))
    assert f'<div class="v">{chiplets}</div><div class="k">chiplets (' in page
    assert '<th title="dimensions split across chiplets">split</th>' in page
    for row in record.layers:  # each layer's split, as K2 or K2xC2, or - on one chiplet
        split = "x".join(f"{d}{f}" for d, f in (row.partition or {}).items()) or "-"
        assert f'<td class="mono">{split}</td>' in page
    # where each layer's weights live across a stream of images, and the first image's time
    # when some stay (the small network's weights fit the chiplets' weight buffers)
    assert "weights at</th>" in page
    assert {row.weights_at for row in record.layers if row.kind == "conv"} == {"WeightBuffer"}
    assert "<td>WeightBuffer</td>" in page
    first = f'<div class="v">{theme.fmt(record.first_latency_s * 1e3)} ms</div>'
    assert first + '<div class="k">first batch (' in page
    # the NoP is a category of the breakdown (a package's links), drawn in its own colour
    bars = breakdowns.energy_by_category(trial.records)
    nop = [t for t in bars.data if t.name == "nop"]
    assert nop and nop[0].marker.color == theme.CATEGORY_COLORS["nop"] and nop[0].y[0] > 0


def test_a_chip_has_no_nop_in_its_breakdown(small) -> None:
    t = small.pareto_front()[0]
    assert t.records[0].energy_pj_by_category["nop"] == 0
    assert "nop" not in [trace.name for trace in breakdowns.energy_by_category(t.records).data]
    assert "split across chiplets" not in body(design_view(small, t))


#: Bars of a figure (selected by ``sel``) drawn with an area.
DRAWN_BARS = """(sel) => [...document.querySelector(sel)
  .querySelectorAll('.cartesianlayer g.point path')]
  .filter(p => p.getBBox().width * p.getBBox().height > 0).length"""


# ---- a record of an older version, stored with a trial ------------------------------------
def test_a_stored_record_of_an_older_version_shows_what_it_lacks(
    storage, tmp_path, browser
) -> None:
    # two trials added to a copy of the shared studies, their records the frozen ones of
    # versions 1 and 3 (tests/data/records): read through read_record, each design page
    # (the dashboard's and the report's) says what its record lacks, and draws the rest
    import html as markup
    import json

    import optuna
    from starlette.testclient import TestClient

    from magnet.dashboard import create_app

    db = tmp_path / "studies.db"
    shutil.copy(storage.removeprefix("sqlite:///"), db)
    url = f"sqlite:///{db}"
    stored = optuna.load_study(study_name="small", storage=url)
    minimize = [d == optuna.study.StudyDirection.MINIMIZE for d in stored.directions]
    done = [t.values for t in stored.trials if t.values is not None]
    best = [(min if m else max)(v[i] for v in done) for i, m in enumerate(minimize)]
    numbers = {}
    # two designs of the front (a design proposed again is shown once), each better than
    # every design on every objective, neither better than the other: both on the front
    for model, (name, first) in zip(stored.best_trials, (("v1", 0.5), ("v3", 0.6)), strict=False):
        data = json.loads((DATA / "records" / f"{name}.json").read_text())
        shares = [first, 1.1 - first] + [0.5] * (len(best) - 2)
        values = [v * s if m else v / s for v, s, m in zip(best, shares, minimize, strict=True)]
        stored.add_trial(
            optuna.trial.create_trial(
                params=model.params,
                distributions=model.distributions,
                values=values,
                # its records: the frozen file, packed as a search stores it
                user_attrs={
                    **model.user_attrs,
                    "magnet": {**model.user_attrs["magnet"], "records": pack([data])},
                },
                system_attrs=model.system_attrs,
            )
        )
        numbers[name] = stored.trials[-1].number
    assert len(numbers) == 2
    study = load_study("small", url)
    lacks = {
        "v1": [
            f"Access energy by level and operand, alexnet: {OLD_RECORD}.",
            f"DRAM bytes and off-chip operands per layer (the roofline): {OLD_RECORD}.",
            f"Each layer's kind (all are MAC layers): {OLD_RECORD}.",
            f"The design's chiplets, its NoP bytes and each layer's split: {OLD_RECORD}.",
        ],
        "v3": [
            f"Access energy by level and operand, alexnet: {OLD_RECORD}.",
            f"The design's roofs (the roofline shows the layers alone): {OLD_RECORD}.",
            f"Each layer's kind (all are MAC layers): {OLD_RECORD}.",
            f"The design's chiplets, its NoP bytes and each layer's split: {OLD_RECORD}.",
        ],
    }
    report = markup.unescape(render_report(study))
    with TestClient(create_app(url), base_url="http://127.0.0.1") as client:
        for name, number in numbers.items():
            t = study.trial(number)
            assert t.stored_records()[0]["schema_version"] == int(name[1:])
            (record,) = t.records
            assert record.schema_version == mg.SCHEMA_VERSION and record.network == "alexnet"
            response = client.get(f"/studies/small/trials/{number}")
            assert response.status_code == 200
            page = markup.unescape(response.text)
            for note in lacks[name]:
                assert f'<p class="note">{note}</p>' in page, note
                assert note in report, note
            assert f"design-{number}-roofline-0" in report
            figures = design_figures(design_view(study, t))
            assert figures["operand"]["layout"]["annotations"][0]["text"] == OLD_RECORD
            assert figures["category"]["data"] and figures["layers-0"]["data"]
            roof = figures["roofline-0"]
            if name == "v1":
                text = roof["layout"]["annotations"][0]["text"]
                assert text == f"DRAM bytes per layer: {OLD_RECORD}"
            else:
                assert f"roofs: {OLD_RECORD}" in roof["layout"]["title"]["text"]
                assert not [tr for tr in roof["data"] if str(tr.get("meta")).startswith("roof:")]
                assert [tr for tr in roof["data"] if str(tr.get("meta")).startswith("layers:")]
            # the mappings it stored, for --mapping-file, one per MAC layer
            maps = yaml.safe_load(
                client.get(f"/studies/small/trials/{number}/mappings/0.yaml").text
            )
            assert list(maps["layers"]) == [row.name for row in record.layers]
    # a record of a later version than this magnet's: refused, saying so, on its page alone
    model = stored.best_trials[-1]
    newer = {**json.loads((DATA / "records" / "v10.json").read_text()), "schema_version": 11}
    stored.add_trial(
        optuna.trial.create_trial(
            params=model.params,
            distributions=model.distributions,
            values=model.values,
            user_attrs={
                **model.user_attrs,
                "magnet": {**model.user_attrs["magnet"], "records": pack([newer])},
            },
            system_attrs=model.system_attrs,
        )
    )
    app = create_app(url)
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        page = markup.unescape(client.get(f"/studies/small/trials/{stored.trials[-1].number}").text)
        assert "a record of version 11, written by a newer magnet" in page
        assert client.get(f"/studies/small/trials/{numbers['v1']}").status_code == 200
    with dashboard(url) as base:
        w = Watched(browser)
        try:
            for name, number in numbers.items():
                w.ready(f"{base}/studies/small/trials/{number}")
                for key in ("category", "level", "area", "layers-0"):
                    # bars drawn with an area, not only data handed to plotly
                    drawn = w.page.evaluate(DRAWN_BARS, f"[data-figure='{key}']")
                    assert drawn > 0, (name, key)
                # what the page says its record lacks, as the reader sees it
                shown = w.page.evaluate("document.body.innerText")
                for note in lacks[name]:
                    assert note in shown, (name, note)
                said = w.page.evaluate(
                    "[...document.querySelectorAll(\"[data-figure='operand'] .annotation-text\")]"
                    ".map(e => e.textContent).join(' ')"
                )
                assert OLD_RECORD in said, (name, said)
            assert w.errors == []
        finally:
            w.close()
