"""Simba's multi-chiplet package (package template) on ResNet-50 at batch 1, 1 to 36 chiplets.

simba-chip chiplets on a mesh network-on-package (GRS links), each at the simba-chip preset's
own operating point, a layer partitioned across chiplets by the mapper's spatial loops at
DRAM. Per chiplet count and per package DRAM (the preset's LPDDR4, one HBM2 stack, and an
unlimited bound): latency, images/s, peak TOPS, TOPS/W, the NoP's share of the energy,
whether DRAM sets the pace, and where the NoP starts to dominate; the 36-chiplet package
beside Simba's published 1,988 images/s and 0.50 ms (MICRO 2019), 2,615 images/s and
127.8 TOPS (VLSI 2019), 1,903 images/s (JSSC 2020) and up to 6.1 TOPS/W (MICRO 2019).

    python experiments/simba-package/run.py [--quick]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402
from magnet.templates import presets  # noqa: E402


def package(cfg: dict[str, Any], mesh: list[int], extra: dict[str, Any]) -> mg.Arch:
    """The preset with ``mesh`` = (x, y) chiplets and the series' parameters ``extra``."""
    template, params = presets()[cfg["preset"]]
    x, y = mesh
    full = {**params, "chiplets_x": x, "chiplets_y": y, **extra}
    return template.build(full, name=f"simba-package-{x}x{y}")


def partitions(record: mg.NetworkRecord, net: mg.Network) -> dict[str, Any]:
    """How the layers were split across chiplets (``LayerRow.partition``): the chiplets a
    layer keeps busy, weighted by its cycles; the layers per split; and the fastest a
    chiplet must receive its weights (each read once: a lower bound, GB/s), the largest over
    the layers whose weights are read from DRAM for every image (a chiplet needs the weights
    of its K and C share; a split over pixels sends each chiplet the same weights; weights
    that stay on chip across images, ``LayerRow.weights_at``, cross no link)."""
    busy_cycles, by_split, weight_gb_per_s = 0.0, {}, 0.0
    for row, entry in zip(record.layers, net.layers, strict=True):
        if entry.layer.is_postprocess:  # on the post-processing units: not partitioned
            continue
        split = row.partition
        busy_cycles += math.prod(split.values()) * row.latency_cycles * row.count
        name = " x ".join(f"{d}{f}" for d, f in sorted(split.items())) or "none"
        by_split[name] = by_split.get(name, 0) + row.count
        if row.weights_at not in (None, "DRAM"):
            continue  # loaded once for the stream
        share_b = entry.layer.operand_sizes["W"] / (split.get("K", 1) * split.get("C", 1))
        seconds = row.latency_cycles / (record.clock_ghz * 1e9)
        weight_gb_per_s = max(weight_gb_per_s, share_b / seconds / 1e9)
    return {
        "chiplets_busy_mean": busy_cycles / record.latency_cycles,
        "layers_by_split": dict(sorted(by_split.items(), key=lambda kv: -kv[1])),
        "weight_gb_per_s_per_chiplet_max": weight_gb_per_s,
    }


def mapped(cfg: dict[str, Any], net: mg.Network, arch: mg.Arch) -> Any:
    """``net`` on ``arch`` mapped under the config's dataflow, objective, seed and mapper."""
    return mg.evaluate(
        net,
        arch,
        dataflow=cfg["dataflow"],
        objective=cfg["objective"],
        seed=cfg["seed"],
        **cfg["mapper"],
    )


def run(
    cfg: dict[str, Any],
    net: mg.Network,
    mesh: list[int],
    series: str,
    clock_ghz: float | None,
    more: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One package on ResNet-50: the numbers of a row of the table (``more``: template
    parameters on top of the series')."""
    extra = {**cfg["series"][series], **(more or {})}
    if clock_ghz is not None:
        extra["clock_ghz"] = clock_ghz
    arch = package(cfg, mesh, extra)
    record = mapped(cfg, net, arch).record()
    by_cat = record.energy_pj_by_category  # "noc": the chips' own; "nop": the links
    nop = by_cat["nop"]
    package_pj = record.energy_pj - by_cat["dram"]
    ops = 2 * record.macs
    dram_cycles = sum(r.latency_cycles * r.count for r in record.layers if r.bottleneck == "DRAM")
    # layers the chip-to-chip links hold back (every word into or out of a chiplet crosses
    # them at most at the link bandwidth, each way)
    link_cycles = sum(r.latency_cycles * r.count for r in record.layers if r.bottleneck == "NoP")
    bytes_per_cycle = record.dram_bytes_per_cycle
    return {
        "series": series,
        "chiplets": record.chiplets,
        "mesh": f"{mesh[0]}x{mesh[1]}",
        "clock_ghz": arch.clock_ghz,
        "voltage_v": arch.voltage_v,
        "dram_gb_per_s": None if bytes_per_cycle is None else bytes_per_cycle * arch.clock_ghz,
        "latency_s": record.latency_s,
        "latency_ms": record.latency_s * 1e3,
        "images_per_s": record.images_per_s,
        # the first image of a stream loads the weights that stay on chip (latency_s, the
        # steady state's, has them there already)
        "first_latency_ms": (record.first_latency_s or record.latency_s) * 1e3,
        "weights_on_chip_bytes": record.weights_on_chip_bytes,
        "weights_kept_share": sum(
            e.layer.operand_sizes["W"] * e.repeat
            for row, e in zip(record.layers, net.layers, strict=True)
            if row.weights_at not in (None, "DRAM")
        )
        / weight_bytes(net),
        "peak_tops": 2 * arch.mac_count * arch.clock_ghz / 1e3,
        "tops": record.tops,
        "utilization": record.utilization,
        "tops_per_w": record.tops_per_w,
        "tops_per_w_package": ops / package_pj,
        "energy_uj_per_image": record.energy_pj / cfg["batch"] * 1e-6,
        "nop_share": nop / record.energy_pj,
        "nop_share_package": nop / package_pj,
        "dram_share": by_cat["dram"] / record.energy_pj,
        "dram_bound_share": dram_cycles / record.latency_cycles,
        "dram_bound": dram_cycles > record.latency_cycles / 2,
        "dram_bytes_per_image": record.dram_bytes / cfg["batch"],
        "nop_bytes_per_image": record.nop_bytes / cfg["batch"],
        "energy_pj_by_category": by_cat,
        "link_bound_share": link_cycles / record.latency_cycles,
        **partitions(record, net),
    }


def non_uniform(cfg: dict[str, Any], net: mg.Network) -> list[dict[str, Any]]:
    """Uniform against non-uniform shares at each hop latency of the sweep (``non_uniform``
    in config.yaml): the network mapped with uniform shares, then the same mappings (and the
    same activations and weights on chip) priced with non-uniform ones, so that the gain is
    the partitioning's alone, not a different search's; images/s of both and the gain."""
    sweep, out = cfg["non_uniform"], []
    for series in sweep["series"]:
        for hop_ns in sweep["hop_ns"]:
            extra = {**cfg["series"][series], "link_hop_ns": hop_ns}
            uniform = package(cfg, sweep["mesh"], {**extra, "partitioning": "uniform"})
            balanced = package(cfg, sweep["mesh"], {**extra, "partitioning": "non-uniform"})
            result = mapped(cfg, net, uniform)
            cycles = {"uniform": result.latency_cycles, "non-uniform": 0}
            for run, entry in zip(result.runs, net.layers, strict=True):
                again = run if entry.layer.is_postprocess else on_arch(run, balanced)
                cycles["non-uniform"] += again.latency_cycles * entry.repeat
            speed = {k: net.batch * uniform.clock_ghz * 1e9 / c for k, c in cycles.items()}
            out.append(
                {
                    "series": series,
                    "hop_ns": hop_ns,
                    "uniform_images_per_s": speed["uniform"],
                    "non_uniform_images_per_s": speed["non-uniform"],
                    "gain": speed["non-uniform"] / speed["uniform"] - 1,
                }
            )
    return out


def on_arch(run: Any, arch: mg.Arch) -> Any:
    """``run`` (a MAC layer as it ran, ``Result``) priced on ``arch``, a design of the same
    shape and prices: the same mapping, the same operands kept on chip."""
    return mg.evaluate(run.layer, arch, run.mapping).with_on_chip(run.on_chip)


def scaling(rows: list[dict[str, Any]], share: float) -> dict[str, Any]:
    """Speed-up and parallel efficiency over one chiplet of the same series (added to the
    rows), and per series the first chiplet count where the NoP takes more than ``share``
    of the package's energy (DRAM excluded) and the first where it outspends the MACs."""
    out: dict[str, Any] = {}
    for series in dict.fromkeys(r["series"] for r in rows):
        mine = sorted((r for r in rows if r["series"] == series), key=lambda r: r["chiplets"])
        one = mine[0]
        for r in mine:
            r["speedup"] = one["latency_s"] / r["latency_s"]
            r["efficiency"] = r["speedup"] / (r["chiplets"] / one["chiplets"])
        over = [r["chiplets"] for r in mine if r["nop_share_package"] > share]
        math_pj = [
            r["chiplets"]
            for r in mine
            if r["energy_pj_by_category"]["nop"] > r["energy_pj_by_category"]["math"]
        ]
        out[series] = {
            "nop_over_share_from": over[0] if over else None,
            "nop_over_math_from": math_pj[0] if math_pj else None,
            "efficiency_below_half_from": next(
                (r["chiplets"] for r in mine if r["efficiency"] < 0.5), None
            ),
        }
    return out


def comparison(
    rows: list[dict[str, Any]], low: list[dict[str, Any]], pub: dict[str, Any], net: mg.Network
) -> list[dict[str, Any]]:
    """Each published number of the 36-chiplet package beside magnet's, per DRAM series,
    with the ratio and why they differ."""
    n, micro, vlsi, jssc = pub["chiplets"], pub["micro2019"], pub["vlsi2019"], pub["jssc2020"]
    at = {r["series"]: r for r in rows if r["chiplets"] == n}
    low_at = {r["series"]: r for r in low}
    speed_why = _speed_why(at, micro, net)
    out = [
        _compare("images/s, batch 1", micro, "images_per_s", at, speed_why),
        _compare("latency per image (ms), batch 1", micro, "latency_ms", at, speed_why),
        _compare("images/s, batch 1", jssc, "images_per_s", at, speed_why),
        _compare(
            "images/s (batch not stated; magnet: batch 1)",
            vlsi,
            "images_per_s",
            at,
            "VLSI 2019 does not state the batch [P]; a larger one reuses each weight. " + speed_why,
        ),
    ]
    lp = at["lpddr4"]
    clock_ghz = vlsi["peak_tops"] * 1e3 / (2 * n * pub["chiplet"]["macs"])
    peak_why = (
        f"magnet: {n} x {pub['chiplet']['macs']} MACs x 2 x {lp['clock_ghz']} GHz, the chiplet's "
        f"{pub['chiplet']['peak_tops']} TOPS peak [P] x {n}; the package's 127.8 implies "
        f"{clock_ghz:.2f} GHz per chiplet [D]; its clock is not in the notes [NF]"
    )
    out += [_compare("peak TOPS", src, "peak_tops", at, peak_why) for src in (micro, vlsi)]
    eff_why = (
        "'up to' 6.1: its operating point and whether it counts DRAM are not in the notes [NF]. "
        "magnet's chiplet alone at 161 MHz is 24.4 TOPS/W without DRAM (2.68x the silicon's "
        "9.1); on the package, GRS links at 1.17 pJ/bit per hop do not scale with the "
        "chiplets' supply and the chiplets leak while they wait for DRAM"
    )
    for label, source in (("1.96 GHz", at), ("161 MHz", low_at)):
        for key, what in (("tops_per_w_package", "without DRAM"), ("tops_per_w", "with DRAM")):
            metric = f"TOPS/W {what}, chiplets at {label}"
            out.append(_compare(metric, micro, key, source, eff_why, "tops_per_w_up_to"))
    return out


def _speed_why(at: dict[str, dict[str, Any]], micro: dict[str, Any], net: mg.Network) -> str:
    """Why magnet's 36-chiplet speed differs from the silicon's, per DRAM series."""
    lp, free = at["lpddr4"], at["stall-free"]
    weights_b = weight_bytes(net)
    floor = lp["dram_gb_per_s"] * 1e9 / weights_b
    silicon_util = micro["images_per_s"] * 2 * net.macs / (micro["peak_tops"] * 1e12)
    return (
        f"lpddr4 (magnet's default DRAM; Simba's DRAM is not in the notes [NF]): DRAM sets the "
        f"pace of {lp['dram_bound_share']:.0%} of the latency; "
        f"{lp['weights_kept_share']:.0%} of ResNet-50's {weights_b / 1e6:.1f} MB of 8-bit "
        f"weights stay in the 36 chiplets' weight buffers across images, the rest is read "
        f"again for every image through {lp['dram_gb_per_s']:.1f} GB/s (all of them would cap "
        f"it at {floor:,.0f} images/s [D]; the first image, loading them, takes "
        f"{lp['first_latency_ms']:.2f} ms). stall-free is unlimited DRAM behind the "
        f"package's links: its words enter at the edge, a 25 GB/s link per column (assumed), "
        f"which set the pace of {free['link_bound_share']:.0%} of the latency; magnet has no "
        f"hop latency (assumed hidden) and charges no sync between layers: "
        f"{free['utilization']:.0%} of peak, where Simba's {micro['images_per_s']:,} images/s "
        f"is {silicon_util:.1%} of {micro['peak_tops']} TOPS [D]"
    )


def weight_bytes(net: mg.Network) -> int:
    """Bytes of the network's weights at 8 bits (simba-chip's weight width)."""
    return sum(e.layer.operand_sizes["W"] * e.repeat for e in net.layers)


def _compare(
    metric: str,
    src: dict[str, Any],
    key: str,
    at: dict[str, dict[str, Any]],
    why: str,
    published_key: str | None = None,
) -> dict[str, Any]:
    """A row of the published table: ``src[published_key or key]`` beside each series'
    ``key`` in ``at`` (series -> row) and their ratios."""
    published = src[published_key or key]
    magnet = {s: r[key] for s, r in at.items()}
    return {
        "metric": metric,
        "source": src["source"],
        "published": published,
        "magnet": magnet,
        "ratio": {s: common.ratio(v, published) for s, v in magnet.items()},
        "why": why,
    }


SERIES_COLORS = {"lpddr4": "#4c78a8", "hbm2": "#f58518", "stall-free": "#54a24b"}
CATEGORY_COLORS = {
    "math": "#4c78a8",
    "memory": "#f58518",
    "noc": "#72b7b2",
    "nop": "#e45756",
    "clock": "#eeca3b",
    "control": "#b279a2",
    "static": "#9d755d",
}


def _lines(fig: go.Figure, rows: list[dict[str, Any]], key: str, cell: tuple[int, int]) -> None:
    """One line per DRAM series of ``key`` against the chiplet count, in ``cell``."""
    for series, color in SERIES_COLORS.items():
        mine = sorted((r for r in rows if r["series"] == series), key=lambda r: r["chiplets"])
        fig.add_trace(
            go.Scatter(
                x=[str(r["chiplets"]) for r in mine],
                y=[r[key] for r in mine],
                name=f"magnet, {series}",
                legendgroup=series,
                showlegend=cell == (1, 1),
                mode="lines+markers",
                line={"color": color},
            ),
            row=cell[0],
            col=cell[1],
        )


def figure(rows: list[dict[str, Any]], pub: dict[str, Any]) -> go.Figure:
    """Images/s, latency, TOPS/W, the NoP's share, DRAM-bound share and the package's
    energy by category against the chiplet count."""
    fig = make_subplots(
        rows=2,
        cols=3,
        subplot_titles=(
            "ResNet-50 images/s, batch 1 (dotted: 1 chiplet x N)",
            "latency per image (ms)",
            "TOPS/W of the package (DRAM excluded)",
            "package energy per image, LPDDR4 (uJ, DRAM excluded)",
            "NoP share of the package energy (no DRAM)",
            "share of the latency in DRAM-bound layers",
        ),
    )
    micro, n = pub["micro2019"], pub["chiplets"]
    counts = sorted({r["chiplets"] for r in rows})
    _speed_panel(fig, rows, pub, counts)
    _lines(fig, rows, "latency_ms", (1, 2))
    _published(
        fig, n, micro["latency_ms"], f"Simba MICRO 2019, {micro['latency_ms']} ms", "star", (1, 2)
    )
    _lines(fig, rows, "tops_per_w_package", (1, 3))
    common.published_line(fig, micro["tops_per_w_up_to"], "Simba: up to 6.1 TOPS/W", 1, 3)
    _energy_bars(fig, rows, (2, 1))
    _lines(fig, rows, "nop_share_package", (2, 2))
    fig.add_hline(y=0.5, line_dash="dash", line_color="#888", row=2, col=2)
    _lines(fig, rows, "dram_bound_share", (2, 3))
    for col in (1, 2, 3):
        for row in (1, 2):
            fig.update_xaxes(type="category", title_text="chiplets", row=row, col=col)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=2)
    fig.update_layout(width=1600, height=900, template="plotly_white", barmode="stack")
    return fig


def _speed_panel(
    fig: go.Figure, rows: list[dict[str, Any]], pub: dict[str, Any], counts: list[int]
) -> None:
    """Images/s per series, one chiplet's scaled linearly, and Simba's three figures."""
    micro, vlsi, jssc = pub["micro2019"], pub["vlsi2019"], pub["jssc2020"]
    n = pub["chiplets"]
    _lines(fig, rows, "images_per_s", (1, 1))
    one = min((r for r in rows if r["series"] == "stall-free"), key=lambda r: r["chiplets"])
    fig.add_trace(
        go.Scatter(
            x=[str(c) for c in counts],
            y=[one["images_per_s"] * c for c in counts],
            name="linear scaling of 1 chiplet (stall-free)",
            mode="lines",
            line={"color": "#888", "dash": "dot"},
        ),
        row=1,
        col=1,
    )
    for src, name, symbol in ((micro, "MICRO 2019", "star"), (jssc, "JSSC 2020", "diamond")):
        label = f"Simba {name}, {src['images_per_s']:,} (batch 1)"
        _published(fig, n, src["images_per_s"], label, symbol, (1, 1))
    label = f"Simba VLSI 2019, {vlsi['images_per_s']:,} (batch not stated)"
    _published(fig, n, vlsi["images_per_s"], label, "triangle-up-open", (1, 1))


def _published(
    fig: go.Figure, chiplets: int, value: float, label: str, symbol: str, cell: tuple[int, int]
) -> None:
    """A published figure as a red marker at its chiplet count."""
    fig.add_trace(
        go.Scatter(
            x=[str(chiplets)],
            y=[value],
            name=label,
            mode="markers",
            marker={"color": common.PUBLISHED_COLOR, "size": 13, "symbol": symbol},
        ),
        row=cell[0],
        col=cell[1],
    )


def _energy_bars(fig: go.Figure, rows: list[dict[str, Any]], cell: tuple[int, int]) -> None:
    """The LPDDR4 series' package energy per image, stacked by category, in ``cell``."""
    mine = sorted((r for r in rows if r["series"] == "lpddr4"), key=lambda r: r["chiplets"])
    for cat, color in CATEGORY_COLORS.items():
        fig.add_trace(
            go.Bar(
                x=[str(r["chiplets"]) for r in mine],
                y=[r["energy_pj_by_category"][cat] * 1e-6 for r in mine],
                name=cat,
                marker_color=color,
            ),
            row=cell[0],
            col=cell[1],
        )


#: The scaling table's columns: (row key, header).
COLUMNS = [
    ("series", "DRAM"),
    ("chiplets", "chiplets"),
    ("mesh", "mesh"),
    ("latency_ms", "latency (ms)"),
    ("images_per_s", "images/s"),
    ("speedup", "speed-up over 1"),
    ("efficiency", "parallel efficiency"),
    ("peak_tops", "peak TOPS"),
    ("tops", "TOPS on ResNet-50"),
    ("utilization", "utilization"),
    ("tops_per_w", "TOPS/W with DRAM"),
    ("tops_per_w_package", "TOPS/W without DRAM"),
    ("nop_share", "NoP share of energy"),
    ("nop_share_package", "NoP share without DRAM"),
    ("dram_share", "DRAM share of energy"),
    ("dram_bound_share", "latency share DRAM-bound"),
    ("dram_bound", "DRAM-bound"),
    ("link_bound_share", "latency share NoP-bound"),
    ("chiplets_busy_mean", "chiplets busy (mean)"),
    ("weight_gb_per_s_per_chiplet_max", "weights into a chiplet, GB/s (max)"),
    ("dram_bytes_per_image", "DRAM bytes per image"),
    ("nop_bytes_per_image", "NoP bytes per image (x links crossed)"),
]


def write_tables(
    out: Path, rows: list[dict[str, Any]], compared: list[dict[str, Any]], notes: list[str]
) -> None:
    """``table`` (the scaling curve, a row per series and chiplet count), ``published``
    (Simba's numbers beside magnet's) and ``partitions`` (how layers were split)."""
    common.write_table(
        out,
        [h for _, h in COLUMNS],
        [[r[k] for k, _ in COLUMNS] for r in rows],
        title="Simba package (simba-chip chiplets, GRS NoP) on ResNet-50, batch 1, os-local-ws",
        notes=notes,
    )
    series = list(compared[0]["magnet"])
    headers = ["metric", "source", "published"]
    for s in series:
        headers += [f"magnet, {s}", "ratio"]
    table = []
    for c in compared:
        line = [c["metric"], c["source"], c["published"]]
        for s in series:
            line += [c["magnet"][s], c["ratio"][s]]
        table.append([*line, c["why"]])
    common.write_table(
        out,
        [*headers, "why they differ"],
        table,
        title="The 36-chiplet package against Simba's published numbers",
        stem="published",
        digits=4,
    )
    common.write_table(
        out,
        ["DRAM", "chiplets", "layers by split across chiplets"],
        [[r["series"], r["chiplets"], _splits(r["layers_by_split"])] for r in rows],
        title="How the mapper split ResNet-50's layers across the chiplets (DRAM's spatial loops)",
        stem="partitions",
    )


def _splits(layers_by_split: dict[str, int]) -> str:
    return ", ".join(f"{split}: {layers}" for split, layers in layers_by_split.items())


NOTES = [
    "Every chiplet is simba-chip at its preset's 1.96 GHz (magnet's 16 nm model gives 1.0 V); "
    "GRS links at 1.17 pJ/bit per hop [PQ], 25 GB/s each way per link, DRAM's links entering "
    "at the edge (a link to each chiplet of row 0) and a 3 mm pitch (assumptions, "
    "package.py). DRAM: lpddr4 is the preset's own (magnet's default, 25.6 GB/s); "
    "hbm2 one stack (256 GB/s, 3.97 pJ/bit [P]); stall-free unlimited bandwidth at LPDDR4's "
    "energy, a bound. DRAM-bound: more than half of the latency in layers whose pace DRAM sets. "
    "The NoP's energy is magnet's nop category (the links, per hop, and the adds that reduce "
    "partial sums across chiplets; 'noc' is the chips' own); NoP bytes are summed over the "
    "links each crosses.",
]


def main() -> None:
    """The full run (or ``--quick``): rows, tables, figure and summary."""
    args, out, clock, cfg = common.start(__file__, common.arguments(__doc__))
    if args.quick:
        cfg = {**cfg, **cfg["quick"]}
    net = mg.load_workload(cfg["workload"], batch=cfg["batch"])
    rows = [run(cfg, net, m, s, None) for s in cfg["series"] for m in cfg["meshes"]]
    low_cfg = cfg["low_point"]
    low = [run(cfg, net, low_cfg["mesh"], s, low_cfg["clock_ghz"]) for s in cfg["series"]]
    found = scaling(rows, cfg["nop_dominates_share"])
    pub = cfg["published"]
    compared = comparison(rows, low, pub, net)
    nup = non_uniform(cfg, net)
    write_tables(out, rows, compared, NOTES)
    common.write_table(
        out,
        ["DRAM", "hop latency (ns)", "images/s, uniform", "images/s, non-uniform", "gain"],
        [
            [
                r["series"],
                r["hop_ns"],
                r["uniform_images_per_s"],
                r["non_uniform_images_per_s"],
                r["gain"],
            ]
            for r in nup
        ],
        title=f"Non-uniform partitioning on {cfg['non_uniform']['mesh'][0]} x "
        f"{cfg['non_uniform']['mesh'][1]} chiplets (Simba: up to 16 % from three tiling "
        "optimisations together [P])",
        stem="non_uniform",
        digits=4,
    )
    common.write_figure(figure(rows, pub), out, png=not args.no_png)
    summary = {
        "experiment": "simba-package",
        "quick": args.quick,
        "published": pub,
        "weights_bytes": weight_bytes(net),
        "macs": net.macs,
        "nop_dominates": {"share": cfg["nop_dominates_share"], **found},
        "comparison": compared,
        "rows": rows,
        "low_point": low,
        "non_uniform": nup,
        "time": clock.report(),
    }
    common.write_summary(out, summary)
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for r in rows + low:
        print(
            f"{r['series']:>10} {r['chiplets']:>2} @ {r['clock_ghz']:.3g} GHz: "
            f"{r['latency_ms']:.3f} ms, {r['images_per_s']:,.0f} img/s, util "
            f"{r['utilization']:.3f}, TOPS/W {r['tops_per_w']:.2f} ({r['tops_per_w_package']:.2f}"
            f" w/o DRAM), NoP {r['nop_share_package']:.3f}, DRAM-bound {r['dram_bound_share']:.2f}"
        )
    print(found)


if __name__ == "__main__":
    main()
