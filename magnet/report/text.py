"""Plain-text tables of records, for the terminal."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from magnet.model.records import (
    OLD_RECORD,
    LayerRecord,
    LayerRow,
    NetworkRecord,
    ZeroSaving,
    shown_categories,
)

if TYPE_CHECKING:
    from magnet.search.study import FrontRow


def operating_point(r: LayerRecord | NetworkRecord) -> str:
    """The clock and supply a record ran at, as one phrase."""
    if r.clock_ghz is None:
        return f"clock and supply: {OLD_RECORD}"
    supply = "the node's nominal supply" if r.voltage_v is None else f"{r.voltage_v:.3f} V"
    return f"{r.clock_ghz:.4g} GHz at {supply}"


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-2:
        return f"{value:.3e}"
    return f"{value:,.2f}"


def _bytes(value: float | None) -> str:
    """Bytes with thousands separators; ``?`` where an older record has none (``_old``)."""
    return "?" if value is None else f"{value:,.0f}"


def _old(value: object, text: str) -> str:
    """``text``, or ``OLD_RECORD`` where ``value`` is None: a field an older record lacks."""
    return OLD_RECORD if value is None else text


def _chiplets(r: NetworkRecord) -> int:
    """A network's chiplets, 1 where a record older than version 5 does not say."""
    return 1 if r.chiplets is None else r.chiplets


def _area(record: LayerRecord | NetworkRecord) -> str:
    return "n/a" if record.area_mm2 is None else f"{record.area_mm2:.3f} mm^2"


def partition_text(partition: dict[str, int] | None) -> str:
    """A layer's split across chiplets as ``K4xC2`` (``-``: on one chiplet; ``?``: an older
    record does not say)."""
    if partition is None:
        return "?"
    return "x".join(f"{d}{f}" for d, f in partition.items()) or "-"


def _category_shares(r: LayerRecord | NetworkRecord) -> list[str]:
    """The energy by category (a package's own only for a package: ``shown_categories``)."""
    parts = r.energy_pj_by_category
    shown = {c: parts[c] for c in shown_categories([parts])}
    return _shares("category", shown, r.energy_pj)


def _shares(title: str, values: dict[str, float], total: float) -> list[str]:
    lines = ["", f"{title:<24}{'energy pJ':>14}{'share':>8}"]
    for name, energy in values.items():
        lines.append(f"{name:<24}{_fmt(energy):>14}{energy / (total or 1.0) * 100:>7.1f}%")
    return lines


def _padding(r: LayerRecord) -> str:
    """What padding the mapping's factors add (they multiply to more than the layer along a
    dimension): the share of the loop nest's MACs that compute nothing; empty without."""
    padded = 1
    for level in r.mapping:
        for key in ("temporal", "spatial_x", "spatial_y"):
            padded *= math.prod(level.get(key, {}).values())
    if padded <= r.macs:
        return ""
    share = (padded - r.macs) / padded * 100
    shown = f"{share:.1f} %" if share >= 0.1 else "under 0.1 %"
    return f"  (padded: {shown} of the loop nest's {padded:,} MACs compute padding)"


def _per_mac(r: LayerRecord) -> str:
    """Energy per MAC, or a post-processing layer's unit operations (it has no MACs)."""
    if r.energy_pj_per_mac is not None:
        return f"{r.energy_pj_per_mac:.3f} pJ/MAC"
    ops = ", ".join(f"{n:,.0f} {k}" for k, n in (r.unit_ops or {}).items() if n)
    return f"{r.kind} {r.op} on the post-processing unit: {ops or 'no operations'}"


def kind_text(row: LayerRow) -> str:
    """What a network's layer is: its kind, a post-processing layer's op (``relu``), and
    ``+`` when it ran fused on the output path of the layer before it (``mac``: a MAC layer
    of a record older than version 6, which kind not kept)."""
    return f"{row.op or row.kind or 'mac'}{'+' if row.fused_into else ''}"


def _off_chip(operands: list[str] | None) -> str:
    """The operands a layer moved off chip by initial (``WIO``; ``-``: none; ``?``: an older
    record does not say)."""
    if operands is None:
        return "?"
    return ",".join(o[0].upper() for o in operands) or "-"


def layer_table(record: LayerRecord, loop_nest: str) -> str:
    """Energy by category, level and operand, accesses, cycles, bottleneck, utilisation."""
    r = record
    lines = [
        f"layer        {r.layer}  ({r.shape})",
        f"arch         {r.arch}  (dataflow {r.dataflow or 'as mapped'})",
        f"operating    {operating_point(r)}",
        f"cost model   {r.cost_model}",
        f"MACs         {r.macs:,}",
        f"cycles       {r.latency_cycles:,}  (compute {r.compute_cycles:,}, "
        f"bottleneck: {r.bottleneck}; {r.bound}-bound)",
        f"utilization  {r.utilization * 100:.2f} %{_padding(r)}",
        f"energy       {_fmt(r.energy_pj)} pJ  ({_per_mac(r)})",
        "dram bytes   "
        + _old(
            r.dram_bytes_by_operand,
            f"{_bytes(r.dram_bytes)}  ("
            + ", ".join(f"{op} {_bytes(b)}" for op, b in (r.dram_bytes_by_operand or {}).items())
            + ")",
        ),
        f"area         {_area(r)}",
    ]
    if r.partition or r.nop_bytes:  # a package's (None: an older record does not say)
        lines.append(
            f"chiplets     split {partition_text(r.partition)}; "
            f"NoP {_bytes(r.nop_bytes)} over the links"
        )
    if r.mapper is not None:
        m = r.mapper
        lines.append(
            f"mapper       {m.mapper} ({m.status}), objective {m.objective}: "
            f"{m.mappings_evaluated:,} mappings priced ({m.valid_mappings:,} valid) in "
            f"{m.seconds:.2f}s; mapspace {m.mapspace_size:.3g}"
        )
    if r.densities or r.zeros_saved:
        dens = ", ".join(f"{k} {v}" for k, v in (r.densities or {}).items()) or "dense"
        done = "" if r.effectual_macs is None else f"; {r.effectual_macs:,.0f} MACs done"
        lines.append(f"zeros        {dens}{done}")
        if r.zeros_saved:
            lines.append(f"saved        {_saved_text(r.zeros_saved)}")
    lines += _category_shares(r)
    lines += [
        "",
        f"{'level':<24}{'operand':<10}{'reads':>14}{'fills':>14}{'updates':>14}{'energy pJ':>14}",
    ]
    for level, ops in r.accesses.items():
        for op, acts in ops.items():
            lines.append(
                f"{level:<24}{op:<10}{_fmt(acts['reads']):>14}{_fmt(acts['fills']):>14}"
                f"{_fmt(acts['updates']):>14}{_fmt(r.energy_pj_by_operand[level][op]):>14}"
            )
    lines += _shares("level (all costs)", r.energy_pj_by_level, r.energy_pj)
    lines += ["", "mapping (per instance of each level):", loop_nest]
    return "\n".join(lines)


def _saved_text(saved: dict[str, ZeroSaving] | None) -> str:
    """``compute -1.2e+06 pJ, 0 cycles; formats ...``: what each way of handling zeros saves."""
    return "; ".join(
        f"{name} {_fmt(s.energy_pj)} pJ, {s.cycles:,} cycles" for name, s in (saved or {}).items()
    )


def _zeros_lines(r: NetworkRecord) -> list[str]:
    """Each layer's densities and what the design's ways of handling zeros save on it, and
    their totals (none: every layer dense on a design that handles no zeros)."""
    rows = [row for row in r.layers if row.densities or row.zeros_saved]
    if not rows:
        return []
    lines = [
        "",
        f"{'zeros: layer':<28}{'densities':<32}{'MACs done':>14}  "
        "saved (energy, cycles; one repeat)",
    ]
    for row in rows:
        dens = ", ".join(f"{k[0].upper()} {v}" for k, v in (row.densities or {}).items()) or "dense"
        done = "all" if row.effectual_macs is None else f"{row.effectual_macs:,.0f}"
        lines.append(f"{row.name:<28}{dens:<32}{done:>14}  {_saved_text(row.zeros_saved) or '-'}")
    if r.zeros_saved:
        lines.append(f"{'all layers':<74}  {_saved_text(r.zeros_saved)}")
    return lines


def _stay_lines(r: NetworkRecord) -> list[str]:
    """The weights that stay on chip across batches and the first batch, which loads them
    (none: every layer reads its weights from DRAM for every batch)."""
    dram = next(iter(r.energy_pj_by_level), None)  # outermost first: where weights stream from
    staying = [row for row in r.layers if row.weights_at not in (None, dram)]
    if not staying or r.first_latency_s is None or r.first_energy_pj is None:
        return []
    return [
        f"weights      {sum(row.count for row in staying)} layer(s) keep theirs on chip "
        f"across batches ({_bytes(r.weights_on_chip_bytes)} bytes, every copy)",
        f"first batch  {r.first_latency_s * 1e3:.3f} ms, {_fmt(r.first_energy_pj)} pJ "
        "(loads them from DRAM)",
    ]


def network_table(record: NetworkRecord) -> str:
    """Per-layer rows and totals of a network evaluation."""
    r = record
    lines = [
        f"network      {r.network}  ({r.layers_total} layers, "
        f"{r.unique_shapes} distinct shapes evaluated)",
        *(f"note         {note}" for note in r.notes),
        f"arch         {r.arch}  (dataflow {r.dataflow or 'as mapped'})",
        f"operating    {operating_point(r)}",
        f"cost model   {r.cost_model}",
        f"MACs         {r.macs:,}",
        f"cycles       {r.latency_cycles:,}  ({r.latency_s * 1e3:.3f} ms, "
        f"{r.images_per_s:,.4g} inputs/s)",
        f"utilization  {r.utilization * 100:.2f} %",
        f"energy       {_fmt(r.energy_pj)} pJ  ({r.energy_pj_per_mac:.3f} pJ/MAC, "
        f"{r.tops_per_w:.2f} TOPS/W, {r.power_w:.3f} W)",
        f"throughput   {r.tops:.3f} TOPS"
        + ("" if r.tops_per_mm2 is None else f", {r.tops_per_mm2:.3f} TOPS/mm^2"),
        f"area         {_area(r)}",
        f"dram bytes   {_old(r.dram_bytes, _bytes(r.dram_bytes))}",
        *_stay_lines(r),
        *([f"skipped      {_counts(r.skipped_ops)} (ONNX, not priced)"] if r.skipped_ops else []),
        *(
            [f"chiplets     {r.chiplets}; NoP {_bytes(r.nop_bytes)} over the links"]
            if _chiplets(r) > 1
            else []
        ),
        "",
        (
            f"{'layer':<28}{'kind':<11}{'count':>6}{'MACs':>14}{'energy pJ':>14}{'cycles':>14}"
            f"{'util':>7}"
            f"{'bound':>9}{'dram bytes':>14}  {'off chip':<8}"
            + (f"{'nop bytes':>14}  split" if _chiplets(r) > 1 else "")
        ).rstrip(),
    ]
    for row in r.layers:
        lines.append(
            (
                f"{row.name:<28}{kind_text(row):<11}{row.count:>6}{row.macs:>14,}"
                f"{_fmt(row.energy_pj):>14}"
                f"{row.latency_cycles:>14,}{row.utilization * 100:>6.1f}%{row.bound:>9}"
                f"{_bytes(row.dram_bytes):>14}  "
                f"{_off_chip(row.off_chip):<8}"
                + (
                    f"{_bytes(row.nop_bytes):>14}  {partition_text(row.partition)}"
                    if _chiplets(r) > 1
                    else ""
                )
            ).rstrip()
        )
    if any(row.fused_into for row in r.layers):
        lines.append(
            "(kind+: run by the post-processing unit on the output path of the layer before "
            "it; its cycles are those it adds)"
        )
    if r.pipeline:
        fused = any(s.tiles > 1 for s in r.pipeline)
        head = "fused stage (depth-first)" if fused else "pipeline stage"
        lines += [
            "",
            f"{head:<44}{'layers':>8}{'chiplets':>10}{'cycles':>14}"
            + (f"{'tiles':>8}" if fused else ""),
        ]
        for s in r.pipeline:
            lines.append(
                f"{s.first + ' .. ' + s.last:<44}{s.layers:>8}{s.chiplets:>10}"
                f"{s.latency_cycles:>14,}" + (f"{s.tiles:>8}" if fused else "")
            )
    lines += _zeros_lines(r)
    lines += _category_shares(r)
    lines += _shares("level (all costs)", r.energy_pj_by_level, r.energy_pj)
    if r.area_mm2_by_component:
        lines += ["", f"{'area':<24}{'mm^2':>14}"]
        for name, mm2 in r.area_mm2_by_component.items():
            lines.append(f"{name:<24}{mm2:>14.4f}")
    return "\n".join(lines)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{op} x {n}" for op, n in counts.items())


def front_table(objectives: list[str], front: list[FrontRow]) -> str:
    """A Pareto front (``pareto_json``'s rows: number, params, values) as aligned columns:
    trial number, objectives, parameters."""
    if not front:
        return "no feasible design yet"
    params = sorted({k for t in front for k in t["params"]})
    header = ["#", *objectives, *params]
    rows = [
        [
            str(t["number"]),
            *(f"{t['values'][o]:.4g}" for o in objectives),
            *(str(t["params"].get(p, "")) for p in params),
        ]
        for t in front
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) for row in [header, *rows]
    )
