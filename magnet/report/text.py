"""Plain-text tables of an evaluation, for the terminal."""

from __future__ import annotations

from magnet.mapping.evaluate import Result
from magnet.mapping.network import NetworkResult


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e6 or abs(value) < 1e-2:
        return f"{value:.3e}"
    return f"{value:,.2f}"


def result_table(result: Result) -> str:
    """Energy by level and operand, accesses, cycles, bottleneck, utilisation and area."""
    d = result.to_dict()
    area = "n/a" if d["area_mm2"] is None else f"{d['area_mm2']:.3f} mm^2"
    lines = [
        f"layer        {result.layer.name}  ({d['shape']})",
        f"arch         {result.arch.name}  ({result.arch.mac_count} MACs)",
        f"cost model   {d['cost_model']}",
        f"MACs         {d['macs']:,}",
        f"cycles       {d['latency_cycles']:,.0f}  (compute {d['compute_cycles']:,.0f}, "
        f"bottleneck: {d['bottleneck']})",
        f"utilization  {d['utilization'] * 100:.2f} %",
        f"energy       {_fmt(d['energy_pj'])} pJ  ({d['energy_pj_per_mac']:.3f} pJ/MAC)",
        f"area         {area}",
        "",
        f"{'level':<24}{'operand':<10}{'reads':>14}{'fills':>14}{'updates':>14}{'energy pJ':>14}",
    ]
    by_op = d["energy_pj_by_operand"]
    for level, ops in d["accesses"].items():
        for op, acts in ops.items():
            lines.append(
                f"{level:<24}{op:<10}{_fmt(acts['reads']):>14}{_fmt(acts['fills']):>14}"
                f"{_fmt(acts['updates']):>14}{_fmt(by_op[level][op]):>14}"
            )
    lines += ["", f"{'level':<24}{'energy pJ':>14}{'share':>8}"]
    total = d["energy_pj"] or 1.0
    for level, energy in d["energy_pj_by_level"].items():
        lines.append(f"{level:<24}{_fmt(energy):>14}{energy / total * 100:>7.1f}%")
    lines.append(f"{'(leakage, incl. above)':<24}{_fmt(d['leakage_pj']):>14}")
    lines.append(f"{'(network, incl. above)':<24}{_fmt(d['network_pj']):>14}")
    lines += ["", "mapping (per instance of each level):", result.mapping.loop_nest(result.arch)]
    return "\n".join(lines)


def network_table(result: NetworkResult) -> str:
    """Per-layer rows and totals of a network evaluation."""
    d = result.to_dict()
    lines = [
        f"network      {d['network']}  ({d['layers_total']} layers, "
        f"{d['unique_shapes']} distinct shapes evaluated)",
        *(f"note         {note}" for note in d["notes"]),
        f"arch         {d['arch']}",
        f"cost model   {d['cost_model']}",
        f"MACs         {d['macs']:,}",
        f"cycles       {d['latency_cycles']:,.0f}  ({d['latency_s'] * 1e3:.3f} ms)",
        f"utilization  {d['utilization'] * 100:.2f} %",
        f"energy       {_fmt(d['energy_pj'])} pJ  ({d['energy_pj_per_mac']:.3f} pJ/MAC)",
        "",
        f"{'layer':<28}{'count':>6}{'MACs':>14}{'energy pJ':>14}{'cycles':>14}{'util':>7}",
    ]
    for row in d["layers"]:
        lines.append(
            f"{row['name']:<28}{row['count']:>6}{row['macs']:>14,}{_fmt(row['energy_pj']):>14}"
            f"{row['latency_cycles']:>14,.0f}{row['utilization'] * 100:>6.1f}%"
        )
    lines += ["", f"{'level':<24}{'energy pJ':>14}{'share':>8}"]
    for level, energy in d["energy_pj_by_level"].items():
        lines.append(f"{level:<24}{_fmt(energy):>14}{energy / d['energy_pj'] * 100:>7.1f}%")
    return "\n".join(lines)
