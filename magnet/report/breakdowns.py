"""Figures of one design (or a few side by side) from their records: energy by category,
level, operand and layer, area, latency and utilisation per layer, and the roofline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypedDict

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from magnet.cost.contract import OVERHEAD_NOTES
from magnet.model.records import OLD_RECORD, LayerRow, NetworkRecord, shown_categories
from magnet.report.design_page import area_note
from magnet.report.theme import (
    CATEGORY_COLORS,
    LEGEND_BELOW,
    OPERAND_COLORS,
    PALETTE,
    _layout,
    _with_scale,
    empty,
    esc,
    fmt,
    subtitled,
)
from magnet.search.study import TrialView
from magnet.units import human_bytes


def _share(part: float, whole: float) -> float:
    return part / whole * 100 if whole else 0.0


def _energy_stack(
    title: str,
    records: list[NetworkRecord],
    parts: list[dict[str, float]],
    colors: dict[str, str] | None = None,
) -> go.Figure:
    """Stacked bars: one bar per workload (``records``), one trace per name of its ``parts``
    (energy by category or level), with linear / log buttons (``scale_menu``)."""
    fig = _layout(go.Figure(), title, barmode="stack")
    workloads = [esc(r.network) for r in records]
    totals = [math.fsum(p.values()) for p in parts]
    names: list[str] = []
    for p in parts:
        names += [n for n in p if n not in names]
    for i, name in enumerate(names):
        color = (colors or {}).get(name, PALETTE[i % len(PALETTE)])
        ys = [p.get(name, 0.0) for p in parts]
        fig.add_trace(
            go.Bar(
                x=workloads,
                y=ys,
                name=esc(name),
                marker={"color": color},
                customdata=[_share(y, t) for y, t in zip(ys, totals, strict=True)],
                hovertemplate=f"{esc(name)}: %{{y:.4g}} pJ "
                "(%{customdata:.1f} % of the total)<extra>%{x}</extra>",
            )
        )
    fig.update_yaxes(title="energy (pJ)")
    return _with_scale(fig, title)


def energy_by_category(records: list[NetworkRecord]) -> go.Figure:
    """Energy of each workload by category (math, postprocess, memory, noc, nop, clock,
    control, dram, static), linear or log; ``nop`` (a package's links) only for a package,
    ``postprocess`` (the post-processing unit's operations) only when spent."""
    shown = shown_categories(r.energy_pj_by_category for r in records)
    parts = [{c: r.energy_pj_by_category.get(c, 0.0) for c in shown} for r in records]
    return _energy_stack("Energy by category", records, parts, CATEGORY_COLORS)


def energy_by_level(records: list[NetworkRecord]) -> go.Figure:
    """Energy of each workload by level (all costs of a level, the MACs last), linear or log."""
    return _energy_stack("Energy by level", records, [r.energy_pj_by_level for r in records])


def energy_by_operand(operands: list[tuple[str, dict[str, dict[str, float]] | None]]) -> go.Figure:
    """Access energy of each level by operand, as the records keep it (``(workload, level ->
    operand -> pJ)``, None for a record written before it was kept), linear or log."""
    title = "Access energy by level and operand"
    known = [(w, o) for w, o in operands if o]
    if not known:
        return empty(OLD_RECORD, title)
    fig = _layout(go.Figure(), title, barmode="stack")
    several = len(known) > 1
    operand_names: list[str] = []
    for _, o in known:
        for ops in o.values():
            operand_names += [n for n in ops if n not in operand_names]
    for name in operand_names:
        xs: list[Any] = [[], []] if several else []
        ys, shares = [], []
        for workload, o in known:
            for level, ops in o.items():
                if several:
                    xs[0].append(esc(workload))
                    xs[1].append(esc(level))
                else:
                    xs.append(esc(level))
                ys.append(ops.get(name, 0.0))
                shares.append(_share(ops.get(name, 0.0), math.fsum(ops.values())))
        fig.add_trace(
            go.Bar(
                x=xs,
                y=ys,
                name=esc(name),
                marker={"color": OPERAND_COLORS.get(name, "#999999")},
                customdata=shares,
                hovertemplate=f"{esc(name)}: %{{y:.4g}} pJ "
                "(%{customdata:.1f} % of the level's accesses)<extra></extra>",
            )
        )
    fig.update_yaxes(title="access energy (pJ)")
    return _with_scale(fig, title)


def area(record: NetworkRecord) -> go.Figure:
    """Area by component (the same design on every workload); the hover says what each
    overhead is (``AREA_NOTES``)."""
    parts = record.area_mm2_by_component
    title = "Area by component"
    if not parts:
        return empty("the cost model gives no area", title)
    total = sum(parts.values())
    fig = _layout(
        go.Figure(),
        subtitled(
            f"{title} (total {fmt(total)} mm²)",
            "storage levels, MACs, routers, then the overheads: " + ", ".join(OVERHEAD_NOTES),
        ),
    )
    items = sorted(parts.items(), key=lambda kv: -kv[1])
    fig.add_trace(
        go.Bar(
            x=[esc(k) for k, _ in items],
            y=[v for _, v in items],
            marker={"color": PALETTE[2]},
            customdata=[
                [v / total * 100 if total else 0, esc(area_note(record, k))] for k, v in items
            ],
            hovertemplate="%{x}: %{y:.4g} mm² (%{customdata[0]:.1f} %)"
            "<br>%{customdata[1]}<extra></extra>",
            name="area",
        )
    )
    fig.update_yaxes(title="area (mm²)")
    fig.update_layout(margin={"t": 80})
    return fig


def layers(record: NetworkRecord) -> go.Figure:
    """Per layer: energy (by category, the layer's repeats included), latency, utilisation;
    energy linear or log (``scale_menu``: on the log axis, the categories of a layer side by
    side; the hover gives each its share of the layer)."""
    rows = record.layers
    title = f"Layers of {esc(record.network)}"
    if not rows:
        return empty("no layers", title)
    fig = make_subplots(
        rows=3,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.04,
        row_heights=[0.45, 0.3, 0.25],
    )
    for trace in _energy_by_layer(rows):
        fig.add_trace(trace, row=1, col=1)
    latency, utilisation = _latency_and_utilisation(rows)
    fig.add_trace(latency, row=2, col=1)
    fig.add_trace(utilisation, row=3, col=1)
    _layout(fig, title, barmode="stack")
    fig.update_yaxes(title="energy (pJ)", row=1, col=1)
    fig.update_yaxes(title="cycles", row=2, col=1)
    fig.update_yaxes(title="util. %", range=[0, 100], row=3, col=1)
    fig.update_xaxes(tickangle=-45, row=3, col=1)
    fig.update_layout(height=620, margin={"b": 120})
    return _with_scale(fig, title)


def _energy_by_layer(rows: list[LayerRow]) -> list[go.Bar]:
    """Energy per layer (pJ, its repeats included), one stacked trace per category (in the
    order the layers first name them), each bar's share of its layer in the hover."""
    names = [esc(r.name) for r in rows]
    cats = shown_categories(r.energy_pj_by_category for r in rows)
    totals = [r.energy_pj * r.count for r in rows]
    bars = []
    for c in cats:
        ys = [r.energy_pj_by_category.get(c, 0.0) * r.count for r in rows]
        bars.append(
            go.Bar(
                x=names,
                y=ys,
                name=esc(c),
                legendgroup=c,
                marker={"color": CATEGORY_COLORS.get(c, "#999999")},
                customdata=[[_share(y, t), t] for y, t in zip(ys, totals, strict=True)],
                hovertemplate=f"%{{x}}<br>{esc(c)}: %{{y:.4g}} pJ (%{{customdata[0]:.1f}} % "
                "of the layer's %{customdata[1]:.4g} pJ)<extra></extra>",
            )
        )
    return bars


def _latency_and_utilisation(rows: list[LayerRow]) -> tuple[go.Bar, go.Bar]:
    """Cycles per layer (its repeats included, with its bottleneck) and MAC utilisation (%)."""
    names = [esc(r.name) for r in rows]
    bottleneck = [esc(r.bottleneck) for r in rows]
    latency = go.Bar(
        x=names,
        y=[r.latency_cycles * r.count for r in rows],
        name="latency",
        marker={"color": "#444444"},
        customdata=list(zip([r.count for r in rows], bottleneck, strict=True)),
        hovertemplate="%{x}<br>%{y:,} cycles (x%{customdata[0]}), "
        "bottleneck %{customdata[1]}<extra></extra>",
        showlegend=False,
    )
    utilisation = go.Bar(
        x=names,
        y=[r.utilization * 100 for r in rows],
        name="utilisation",
        marker={"color": PALETTE[5]},
        hovertemplate="%{x}<br>utilisation %{y:.1f} %<extra></extra>",
        showlegend=False,
    )
    return latency, utilisation


#: Colours of a roofline's layers by their ``bound``.
BOUND_COLORS = {"compute": PALETTE[0], "memory": PALETTE[1]}


class RooflinePoint(TypedDict):
    """A layer on a roofline (``roofline_points``)."""

    row: LayerRow
    intensity: float
    macs_per_cycle: float


def roofline_points(record: NetworkRecord) -> list[RooflinePoint]:
    """The layers a roofline draws: ``{row, intensity, macs_per_cycle}`` per layer row that
    has MACs (a post-processing layer has none) and moved DRAM bytes, with intensity = MACs /
    DRAM bytes and macs_per_cycle = MACs / cycles (one repeat each: both ratios are the same
    for all of a layer's repeats)."""
    return [
        {
            "row": r,
            "intensity": r.macs / r.dram_bytes,
            "macs_per_cycle": r.macs / r.latency_cycles,
        }
        for r in record.layers
        if r.macs > 0 and r.dram_bytes and r.latency_cycles > 0
    ]


def roofline(record: NetworkRecord) -> go.Figure:
    """The layers of a network on the design's roofline, from the record alone.

    x: arithmetic intensity, MACs per byte moved to and from DRAM (a MAC is two ops);
    y: MACs per cycle achieved (the hover adds TOPS at the record's ``clock_ghz``); both
    of one repeat of the layer, log axes (``roofline_points``). Points are coloured by the
    layer's ``bound``: ``memory`` when a level's bandwidth set its latency (the hover names
    it; it may be an on-chip level, below the DRAM roof). Roofs: the design's MACs
    (``peak_macs_per_cycle``) and the DRAM's bytes per cycle times the intensity
    (``dram_bytes_per_cycle``; a stall-free DRAM has none). A record written before it kept
    its roofs (``peak_macs_per_cycle`` None) shows the layers alone, one before it kept DRAM
    bytes per layer (``dram_bytes`` None) none, and a layer that moved no DRAM byte (its activations
    stayed on chip and it has no weights) or has no MACs (a post-processing layer, on the
    post-processing unit) is counted in the subtitle, not drawn.
    """
    title = f"Roofline of {esc(record.network)}"
    rows = record.layers
    if any(r.dram_bytes is None for r in rows):
        return empty(f"DRAM bytes per layer: {OLD_RECORD}", title)
    points = roofline_points(record)
    if not points:
        return empty("no MAC layer moved DRAM bytes: no intensity to draw", title)
    notes = ["x: MACs per DRAM byte; y: MACs per cycle (one repeat)"]
    unmapped = sum(1 for r in rows if r.macs == 0)
    if unmapped:
        notes.append(f"{unmapped} post-processing layer(s) (no MACs) not drawn")
    if len(points) < len(rows) - unmapped:
        notes.append(
            f"{len(rows) - unmapped - len(points)} layer(s) moved no DRAM byte (not drawn)"
        )
    peak = record.peak_macs_per_cycle
    bandwidth = None if peak is None else record.dram_bytes_per_cycle
    if peak is None:
        notes.append(f"roofs: {OLD_RECORD}")
    elif bandwidth is None:
        notes.append("DRAM stall-free: no memory roof")
    fig = _layout(go.Figure(), subtitled(title, esc("; ".join(notes))))
    for trace in _roofline_layers(points, record.clock_ghz):
        fig.add_trace(trace)
    xs = [p["intensity"] for p in points]
    for trace in _roofs(peak, bandwidth, min(xs) / 2, max(xs) * 2):
        fig.add_trace(trace)
    fig.update_xaxes(title="arithmetic intensity (MACs per DRAM byte)", type="log")
    fig.update_yaxes(title="MACs per cycle", type="log")
    fig.update_layout(hovermode="closest", legend=LEGEND_BELOW, margin={"t": 80})
    return fig


def _roofline_layers(points: list[RooflinePoint], clock: float | None) -> list[go.Scatter]:
    """The layers of a roofline, one trace per ``bound`` (``BOUND_COLORS``)."""
    traces = []
    for bound, color in BOUND_COLORS.items():
        group = [p for p in points if p["row"].bound == bound]
        if not group:
            continue
        traces.append(
            go.Scatter(
                x=[p["intensity"] for p in group],
                y=[p["macs_per_cycle"] for p in group],
                mode="markers",
                name=f"{bound}-bound layers",
                marker={"color": color, "size": 9, "line": {"color": "#222222", "width": 1}},
                hovertext=[_roofline_hover(p, bound, clock) for p in group],
                hovertemplate="%{hovertext}<extra></extra>",
                meta=f"layers:{bound}",
            )
        )
    return traces


def _roofs(peak: float | None, bandwidth: float | None, lo: float, hi: float) -> list[go.Scatter]:
    """The roofs over intensities ``lo`` to ``hi`` (widened to show the ridge): the memory
    roof (``bandwidth`` DRAM bytes per cycle x intensity) up to the ridge, then the compute
    roof (``peak`` MACs per cycle); none that the record lacks."""
    roof = {"color": "#444444", "width": 1.5, "dash": "dash"}
    if peak and bandwidth:
        ridge = peak / bandwidth  # the intensity where the two roofs meet
        lo, hi = min(lo, ridge / 2), max(hi, ridge * 2)
        memory = go.Scatter(
            x=[lo, ridge],
            y=[bandwidth * lo, peak],
            mode="lines",
            line=roof,
            name=f"memory roof: {fmt(bandwidth)} DRAM bytes/cycle",
            hovertemplate=f"memory roof: {fmt(bandwidth)} bytes/cycle x intensity<extra></extra>",
            meta="roof:memory",
        )
        return [memory, _compute_roof(peak, ridge, hi, roof)]
    if peak:
        return [_compute_roof(peak, lo, hi, roof)]
    return []


def _compute_roof(peak: float, lo: float, hi: float, line: dict[str, Any]) -> go.Scatter:
    return go.Scatter(
        x=[lo, hi],
        y=[peak, peak],
        mode="lines",
        line=line,
        name=f"compute roof: {fmt(peak)} MACs/cycle",
        hovertemplate=f"compute roof: {fmt(peak)} MACs/cycle<extra></extra>",
        meta="roof:compute",
    )


def _roofline_hover(point: RooflinePoint, bound: str, clock: float | None) -> str:
    r = point["row"]
    lines = [
        f"<b>{esc(r.name)}</b> (x{r.count})",
        esc(r.shape),
        f"{fmt(point['intensity'])} MACs per DRAM byte",
        f"{fmt(point['macs_per_cycle'])} MACs per cycle"
        + (f" ({fmt(2 * point['macs_per_cycle'] * clock / 1e3)} TOPS)" if clock else ""),
        f"{esc(bound)}-bound" + (f": {esc(r.bottleneck)}" if bound == "memory" else ""),
        f"DRAM: {human_bytes(r.dram_bytes or 0.0)} per repeat"
        + (f" ({esc(', '.join(r.off_chip))})" if r.off_chip else ""),
    ]
    return "<br>".join(lines)


def compare_designs(
    designs: list[tuple[str, TrialView]], metrics: Sequence[str]
) -> tuple[go.Figure, go.Figure]:
    """Grouped bars of designs, from their stored records only: their metrics (one panel per
    metric) and their energy by category (all workloads added; linear or log)."""
    labels = [esc(label) for label, _ in designs]
    metrics = [m for m in metrics if any(m in t.metrics for _, t in designs)]
    cols = max(1, len(metrics))
    fig = make_subplots(rows=1, cols=cols, subplot_titles=[esc(m) for m in metrics] or None)
    for j, (label, (_, t)) in enumerate(zip(labels, designs, strict=True)):
        for i, m in enumerate(metrics):
            fig.add_trace(
                go.Bar(
                    x=[label],
                    y=[t.metrics.get(m)],
                    name=label,
                    legendgroup=label,
                    showlegend=i == 0,
                    marker={"color": PALETTE[j % len(PALETTE)]},
                    hovertemplate=f"%{{x}}<br>{esc(m)}: %{{y:.4g}}<extra></extra>",
                ),
                row=1,
                col=i + 1,
            )
    _layout(fig, "Metrics", legend=LEGEND_BELOW, bargap=0.15)
    fig.update_xaxes(showticklabels=False)
    by_cat = _layout(go.Figure(), "Energy by category (all workloads)", barmode="group")
    sums = []
    for _, t in designs:
        total: dict[str, float] = {}
        for r in t.records:
            for c, v in r.energy_pj_by_category.items():
                total[c] = total.get(c, 0.0) + v
        sums.append(total)
    cats = shown_categories(sums)
    for j, total in enumerate(sums):
        by_cat.add_trace(
            go.Bar(
                x=[esc(c) for c in cats],
                y=[total.get(c, 0.0) for c in cats],
                name=labels[j],
                marker={"color": PALETTE[j % len(PALETTE)]},
                hovertemplate="%{x}: %{y:.4g} pJ<extra>%{fullData.name}</extra>",
            )
        )
    by_cat.update_yaxes(title="energy (pJ)")
    return fig, _with_scale(by_cat, "Energy by category (all workloads)", stacked=False)
