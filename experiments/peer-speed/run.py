"""Whole-network run time: magnet beside ZigZag on ResNet-18 and AlexNet, 1024 MACs.

ZigZag 3.9.1 (``zigzag-dse`` on PyPI) is installed by this script into a throw-away venv
under /tmp (never a dependency of magnet) and driven through its public API
(``zigzag.api.get_hardware_performance_zigzag``) by ``zigzag_driver.py`` in a subprocess,
on its bundled ONNX models and its ``tpu_like`` example (a 32 x 32 weight-stationary
systolic array). magnet maps the same ONNX files on a 32 x 32 systolic array under ws (the
same array and dataflow) and on the simba-chip preset (the same 1024 MACs as Simba's PE
array). Both run one after the other on this machine; CPU seconds include child processes.

    python experiments/peer-speed/run.py [--quick] [--venv /tmp/magnet-zigzag-venv]
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import common  # noqa: E402

import magnet as mg  # noqa: E402


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def ensure_zigzag(venv: Path, cfg: dict[str, Any]) -> Path:
    """The venv's python, with ZigZag installed (created when missing)."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import zigzag.api, six"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"installing {cfg['package']} into {venv} ...", flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", cfg["package"], *cfg["extra_packages"]],
        check=True,
    )
    subprocess.run(probe, check=True)
    return python


def zigzag_inputs(python: Path) -> Path:
    out = subprocess.run(
        [str(python), "-c", "import zigzag, os; print(os.path.dirname(zigzag.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip()) / "inputs"


def run_zigzag(python: Path, inputs: Path, network: str, cfg: dict, scratch: Path) -> dict:
    dump = scratch / network
    dump.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(python),
        str(HERE / "zigzag_driver.py"),
        str(inputs / "workload" / f"{network}.onnx"),
        str(inputs / "hardware" / f"{cfg['accelerator']}.yaml"),
        str(inputs / "mapping" / f"{cfg['mapping']}.yaml"),
        cfg["opt"],
        str(dump),
    ]
    cpu0, wall0 = children_cpu(), time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    cpu, wall = children_cpu() - cpu0, time.perf_counter() - wall0
    if done.returncode != 0:
        raise RuntimeError(f"ZigZag failed on {network}:\n{done.stderr[-3000:]}")
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "tool": "ZigZag 3.9.1",
        "network": network,
        "design": f"{cfg['accelerator']} (32 x 32 WS systolic)",
        "cpu_s": cpu,  # the whole subprocess: interpreter, imports, ONNX parsing, search
        "wall_s": wall,
        "api_cpu_s": inner["cpu_s"],  # the API call alone
        "api_wall_s": inner["wall_s"],
        "layers_mapped": inner["layers"],
        "macs": inner["macs"],
        "energy_pj": inner["energy_pj"],
        "latency_cycles": inner["latency_cycles"],
    }


def magnet_arch(spec: dict[str, Any]) -> mg.Arch:
    if "preset" in spec:
        return mg.load_arch(spec["preset"])
    return mg.templates.get_template(spec["template"]).build(spec["params"])


def magnet_row(network: str, design: str, cpu: float, wall: float, **measured: Any) -> dict:
    """A row of the table for a magnet run (its CPU and wall seconds are all API time)."""
    return {
        "tool": f"magnet {mg.__version__}",
        "network": network,
        "design": design,
        "cpu_s": cpu,
        "wall_s": wall,
        "api_cpu_s": cpu,
        "api_wall_s": wall,
        **measured,
    }


def load(onnx: Path) -> mg.Network:
    """The network as both tools take it: AlexNet's LRN nodes, which magnet does not price
    (nor ZigZag, which maps convolutions and matrix products), left out and listed."""
    return mg.load_workload(str(onnx), skip_ops=True)


def run_magnet(onnx: Path, network: str, name: str, spec: dict, objective: str) -> dict:
    net = load(onnx)
    arch = magnet_arch(spec)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = mg.evaluate(net, arch, dataflow=spec["dataflow"], objective=objective)
    record = result.record()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return magnet_row(
        network,
        f"{name} ({spec['dataflow']})",
        cpu,
        wall,
        layers_mapped=record.unique_shapes,
        layers=record.layers_total,
        macs=record.macs,
        energy_pj=record.energy_pj,
        latency_cycles=record.latency_cycles,
    )


def run_magnet_every_layer(onnx: Path, network: str, name: str, spec: dict, objective: str):
    """As ZigZag does: a mapping search for every layer, repeated shapes included."""
    net = load(onnx)
    design = mg.design(magnet_arch(spec), spec["dataflow"])
    cpu0, wall0 = time.process_time(), time.perf_counter()
    energy = latency = 0.0
    mapped = 0
    for entry in net.layers:
        if entry.layer.is_postprocess:  # not mapped: the post-processing unit runs it
            continue
        for _ in range(entry.repeat):
            outcome = mg.map_layer(entry.layer, design, objective=objective)
            energy += outcome.result.energy_pj
            latency += outcome.result.latency_cycles
            mapped += 1
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return magnet_row(
        network,
        f"{name} ({spec['dataflow']}), every layer mapped",
        cpu,
        wall,
        layers_mapped=mapped,
        layers=mapped,
        macs=net.macs,
        energy_pj=energy,
        latency_cycles=latency,
    )


def figure(rows: list[dict[str, Any]]) -> go.Figure:
    fig = go.Figure()
    networks = list(dict.fromkeys(r["network"] for r in rows))
    for label in dict.fromkeys(f"{r['tool']}: {r['design']}" for r in rows):
        sel = {r["network"]: r for r in rows if f"{r['tool']}: {r['design']}" == label}
        fig.add_trace(
            go.Bar(
                x=networks,
                y=[sel[n]["cpu_s"] if n in sel else None for n in networks],
                name=label,
                text=[f"{sel[n]['cpu_s']:.1f} s" if n in sel else "" for n in networks],
                textposition="outside",
            )
        )
    fig.update_layout(
        title="Whole-network mapping and evaluation: CPU seconds (log scale), same machine, "
        "same ONNX files, 1024 MACs",
        yaxis={"title": "CPU seconds", "type": "log"},
        barmode="group",
        width=1100,
        height=600,
        template="plotly_white",
    )
    return fig


def main() -> None:
    parser = common.arguments(__doc__)
    parser.add_argument("--venv", type=Path, default=None, help="ZigZag's throw-away venv")
    parser.add_argument("--skip-zigzag", action="store_true", help="time magnet only")
    args, out, clock, cfg = common.start(__file__, parser)
    networks = cfg["networks"]
    designs = cfg["magnet"]["designs"]
    with_zigzag = not args.skip_zigzag
    if args.quick:
        networks = cfg["quick"]["networks"]
        designs = {k: v for k, v in designs.items() if k in cfg["quick"]["designs"]}
        with_zigzag = with_zigzag and cfg["quick"]["zigzag"]
    zz = cfg["zigzag"]
    python = ensure_zigzag(args.venv or Path(zz["venv"]), zz)
    inputs = zigzag_inputs(python)
    scratch = Path("/tmp") / "magnet-peer-speed"
    objective = cfg["magnet"]["objective"]
    rows = []
    for network in networks:
        onnx = inputs / "workload" / f"{network}.onnx"
        for name, spec in designs.items():
            rows.append(run_magnet(onnx, network, name, spec, objective))
            print(json.dumps({k: rows[-1][k] for k in ("tool", "network", "design", "cpu_s")}))
            if name == cfg["magnet"]["every_layer"]:
                rows.append(run_magnet_every_layer(onnx, network, name, spec, objective))
                print(json.dumps({k: rows[-1][k] for k in ("network", "design", "cpu_s")}))
        if with_zigzag:
            rows.append(run_zigzag(python, inputs, network, zz, scratch))
            print(json.dumps({k: rows[-1][k] for k in ("tool", "network", "design", "cpu_s")}))
    before = cfg["published_before"]["zigzag_cpu_s"]
    speedups = {}
    for network in networks:
        theirs = next((r for r in rows if r["network"] == network and "ZigZag" in r["tool"]), None)
        for r in rows:
            if r["network"] == network and "magnet" in r["tool"] and theirs is not None:
                speedups[f"{network} {r['design']}"] = theirs["cpu_s"] / r["cpu_s"]
    common.write_table(
        out,
        [
            "network",
            "tool",
            "design",
            "CPU s",
            "wall s",
            "API CPU s",
            "layers mapped",
            "CPU s per layer mapped",
            "MACs",
            "energy (pJ)",
            "latency (cycles)",
        ],
        [
            [
                r["network"],
                r["tool"],
                r["design"],
                r["cpu_s"],
                r["wall_s"],
                r["api_cpu_s"],
                r["layers_mapped"],
                r["cpu_s"] / r["layers_mapped"],
                r["macs"],
                r["energy_pj"],
                r["latency_cycles"],
            ]
            for r in rows
        ],
        title="Whole-network run time, magnet and ZigZag, one after the other on this machine",
        notes=[
            "CPU s: ZigZag's whole subprocess (interpreter start, imports, ONNX parsing and "
            "the search); API CPU s: the get_hardware_performance_zigzag call alone. magnet: "
            "mg.evaluate on the network (mapping every distinct layer shape once, then "
            "pricing every layer). `layers mapped`: layers each tool searched a mapping for. "
            "Energy and latency come from each tool's own cost model and are not comparable "
            f"(ZigZag's tpu_like example energies vs magnet's built-in table). Measured "
            f"before on this machine kind: ZigZag {before['resnet18']} CPU-s on ResNet-18, "
            f"{before['alexnet']} CPU-s on AlexNet.",
        ],
    )
    common.write_figure(figure(rows), out, png=not args.no_png)
    common.write_summary(
        out,
        {
            "experiment": "peer-speed",
            "quick": args.quick,
            "rows": rows,
            "zigzag_cpu_s_over_magnet": speedups,
            "published_before": before,
            "time": clock.report(),
        },
    )
    print(f"wrote {out} in {clock.cpu_s():.1f} CPU-s, {clock.wall_s():.1f} s")
    for key, value in speedups.items():
        print(f"ZigZag / magnet CPU time, {key}: {value:.0f}x")


if __name__ == "__main__":
    main()
