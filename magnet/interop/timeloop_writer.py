"""Write one evaluated mapping as Timeloop v0.4 input (``timeloop-input.yaml``).

The file holds the architecture (storage levels, outermost first, then the MACs), the
problem (the loop nest magnet maps: the layer, or its GEMM view), the mapping (datatype
keep / bypass lists, temporal and spatial directives) and the ERT / ART of magnet's own
prices for this design. ``magnet.interop.timeloop.load_timeloop`` on the written file
gives back the same cycles, the same accesses at every level and the same energy, in total
and per level (``tests/test_timeloop_export.py``).

What Timeloop has no place for is written so that the energy still adds up:

* the address generation of an access (magnet's ``control``) is added to the energy of each
  read, write and update of the level;
* clock energy, leakage (at the design's voltage and clock) and the wires and reduction adds
  of the fan-out below a level are written as that level's ``leak``: Timeloop charges
  ``leak`` per cycle per instance in use, so it is their sum over this run divided by
  cycles x instances in use;
* the MACs' adder trees, clock and leakage are added to the MAC's ``compute`` energy (their
  sum over this run divided by the MACs);
* what changes counts or cycles and has no Timeloop attribute (a width per operand, a
  capacity that is not a whole number of blocks, a bandwidth shared by reads and writes,
  a streaming buffer, a systolic array's
  fill and drain, the input tensor behind a GEMM view's im2col matrix, the kind of each
  fan-out) and the chip's overhead areas go in a top-level ``magnet`` block, which Timeloop
  ignores and magnet's reader honours;
* a package's chip-to-chip links (their energy per bit per hop, and the halo neighbouring
  chiplets exchange, which changes DRAM's reads) are in that block only: Timeloop, which
  has no chip-to-chip links, counts each chiplet's window from DRAM and no link energy;
* zeros (the layer's densities, each level's formats and gating or skipping, the MACs'
  zeros: ``magnet.arch.sparse``) are in that block only: Sparseloop's
  ``sparse_optimizations`` are not written, so Timeloop prices the dense layer;
* a mapping that spreads one dimension over both X and Y of one fan-out gets a dummy level
  (``NAME_y``) for the Y half, as one Timeloop spatial directive puts a dimension on one axis.

So ``leak`` and ``compute`` are the averages of this run: a file written for one mapping
prices another mapping of the same design only approximately.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from magnet.arch.spec import ComputeLevel, Fanout, StorageLevel
from magnet.arguments import checked_call
from magnet.cost.contract import OVERHEAD_KINDS
from magnet.errors import MagnetError
from magnet.files import (
    TIMELOOP_HEADER,
    check_writable,
    make_folder,
    refuse_foreign,
    write_atomic,
)
from magnet.mapping import LevelMapping
from magnet.model.evaluate import Result, layer_view
from magnet.workload.dims import DIMS, OPERANDS
from magnet.workload.layer import GemmView, Layer

#: The file name Timeloop's tools and ``load_timeloop`` expect in a run folder.
TIMELOOP_FILE = "timeloop-input.yaml"
#: magnet's storage classes as Timeloop (Accelergy) classes.
TIMELOOP_CLASS = {"dram": "DRAM", "sram": "SRAM", "regfile": "regfile", "dummy": "dummy_storage"}
#: Timeloop's names of the dimensions (its conv2D problem calls output channels M).
TIMELOOP_DIM = {d: ("M" if d == "K" else d) for d in DIMS}
_DATA_SPACE = {"weights": "Weights", "inputs": "Inputs", "outputs": "Outputs"}


@checked_call
def timeloop_input(result: Result) -> dict[str, Any]:
    """The Timeloop v0.4 input of ``result`` (a layer, its design and mapping) as data."""
    if result.on_chip:
        raise MagnetError(
            "this result keeps DRAM traffic on chip (a network's layer-to-layer reuse), "
            "which Timeloop has no way to express; export the layer's own result",
            field="on_chip",
        )
    layer = layer_view(result.layer, result.arch)
    dims = [d for d in DIMS if d != "G" or layer.G > 1]
    levels = _levels(result)
    return {
        "architecture": _architecture(result, levels),
        "problem": _problem(layer, dims),
        "mapping": _mapping(result, levels, dims),
        "ERT": {"version": "0.4", "tables": _ert(result, levels)},
        "ART": {"version": "0.4", "tables": _art(result)},
        "magnet": _extensions(result, levels),
    }


def timeloop_target(folder: str | Path) -> Path:
    """The file ``write_timeloop`` writes in ``folder``, checked before any work: the folder
    exists or can be made in its parent (``check_writable``), nothing is in the way of the
    file, and a file there that magnet did not write is left alone."""
    check_writable(folder, "--output", folder=True)
    path = Path(folder) / TIMELOOP_FILE
    refuse_foreign(path, "--output", new_folder=True)
    return path


@checked_call
def write_timeloop(result: Result, folder: str | Path) -> Path:
    """Write ``folder/timeloop-input.yaml`` (the folder is made when its parent exists);
    a file there that magnet did not write is left as it is. Returns the file's path."""
    path = timeloop_target(folder)
    text = yaml.safe_dump(timeloop_input(result), sort_keys=False, default_flow_style=None)
    make_folder(path.parent, "--output")
    from magnet import __version__  # the package imports this module: read it at call time

    return write_atomic(path, f"{TIMELOOP_HEADER} {__version__}\n{text}")


def _instances(name: str, count: int) -> str:
    return f"{name}[1..{count}]"


def _path(name: str, count: int) -> str:
    return f"system.{_instances(name, count)}"


@dataclass(frozen=True)
class _Written:
    """One storage level of the written architecture, outermost first: a level of the
    design (``index`` into ``arch.inner_first``) or a dummy that carries the Y half of a
    fan-out over which the mapping spreads one dimension along both X and Y (``index``
    None), which one Timeloop spatial directive cannot say."""

    level: StorageLevel
    index: int | None
    temporal: dict[str, int]
    spatial_x: dict[str, int]
    spatial_y: dict[str, int]
    fans_out: bool


def _levels(result: Result) -> list[_Written]:
    arch, mapping = result.arch, result.mapping
    names = {lvl.name for lvl in arch.levels}
    out = []
    for lvl in arch.levels:
        li = arch.level_index(lvl.name)
        loops = mapping.level(lvl.name)

        def kept(key: str, loops: LevelMapping | None = loops) -> dict[str, int]:
            return {d: f for d, f in (getattr(loops, key) if loops else {}).items() if f > 1}

        temporal, sx, sy = kept("temporal"), kept("spatial_x"), kept("spatial_y")
        fans_out = arch.fanouts[li] != (1, 1)
        if not set(sx) & set(sy):
            out.append(_Written(lvl, li, temporal, sx, sy, fans_out))
            continue
        name = f"{lvl.name}_y"
        if name in names:
            raise MagnetError(
                f"level {lvl.name}: the mapping spreads one dimension over both X and Y, "
                f"which needs a dummy level {name!r}, a name the design already uses",
                field=lvl.name,
            )
        fx = arch.fanouts[li][0]
        dummy = StorageLevel(
            name=name,
            component="dummy",
            word_bits=1,
            keeps=(),
            mesh_x=lvl.mesh_x * fx,
            mesh_y=lvl.mesh_y,
        )
        out.append(_Written(lvl, li, temporal, sx, {}, True))
        out.append(_Written(dummy, None, {}, {}, sy, True))
    return out


# ---- architecture --------------------------------------------------------------------------


def _architecture(result: Result, levels: list[_Written]) -> dict[str, Any]:
    arch = result.arch
    local = []
    for w in levels:
        lvl = w.level
        # n_words: the block, which sets Timeloop's capacity (depth x n_words words) in every
        # version (src/model/buffer.cpp; without it older ones take width / datawidth as a
        # cluster and hold depth words)
        attrs: dict[str, Any] = {
            "width": lvl.access_bits,
            "datawidth": lvl.word_bits,
            "n_words": lvl.block_words,
        }
        if lvl.is_dummy:
            attrs["depth"] = 1  # keeps nothing (as Timeloop's own inter-PE dummies)
        elif lvl.capacity_bits is not None:
            # whole blocks (the bits beyond the last whole block: magnet.capacity_bits)
            attrs["depth"] = lvl.capacity_bits // lvl.access_bits
        for key in ("read_bandwidth", "write_bandwidth"):  # shared: magnet.shared_bandwidth
            if getattr(lvl, key) is not None:
                attrs[key] = getattr(lvl, key)
        attrs["n_banks"] = int(lvl.attributes.get("banks", 1))
        attrs["meshX"], attrs["meshY"] = lvl.mesh_x, lvl.mesh_y
        local.append(
            {
                "name": _instances(lvl.name, lvl.instances),
                "class": TIMELOOP_CLASS[lvl.component],
                "attributes": attrs,
            }
        )
    c = arch.compute
    local.append(
        {
            "name": _instances(c.name, c.instances),
            "class": "intmac" if c.datatype == "int" else "fpmac",
            "attributes": {
                "multiplier_width": c.operand_bits,
                "adder_width": c.accum_bits,
                "meshX": c.mesh_x,
                "meshY": c.mesh_y,
            },
        }
    )
    return {
        "version": "0.4",
        "subtree": [
            {
                "name": "system",
                "attributes": {
                    "technology": f"{arch.technology_nm:g}nm",
                    "global_cycle_seconds": 1e-9 / arch.clock_ghz,
                },
                "local": local,
            }
        ],
    }


# ---- problem -------------------------------------------------------------------------------


def _problem(layer: Layer, dims: list[str]) -> dict[str, Any]:
    def rank(*names: str) -> list[list[str]]:
        return [[TIMELOOP_DIM[n]] for n in names if n in dims]

    grouped = ["G"] if "G" in dims else []
    spaces = [
        {"name": "Weights", "projection": [rank(d) for d in [*grouped, "C", "K", "R", "S"]]},
        {
            "name": "Inputs",
            "projection": [
                *[rank(d) for d in ["N", *grouped, "C"]],
                [["R", "Wdilation"], ["P", "Wstride"]],
                [["S", "Hdilation"], ["Q", "Hstride"]],
            ],
        },
        {
            "name": "Outputs",
            "projection": [rank(d) for d in ["N", *grouped, "K", "Q", "P"]],
            "read_write": True,
        },
    ]
    coefficients = [
        {"name": name, "default": 1} for name in ("Wstride", "Hstride", "Wdilation", "Hdilation")
    ]
    instance: dict[str, int] = {TIMELOOP_DIM[d]: getattr(layer, d) for d in dims}
    instance.update(
        Wstride=layer.wstride,
        Hstride=layer.hstride,
        Wdilation=layer.wdilation,
        Hdilation=layer.hdilation,
    )
    return {
        "version": "0.4",
        "shape": {
            "name": layer.name,
            "dimensions": [TIMELOOP_DIM[d] for d in dims],
            "coefficients": coefficients,
            "data_spaces": spaces,
        },
        "instance": instance,
    }


# ---- mapping -------------------------------------------------------------------------------


def _factors(values: dict[str, int], dims: list[str]) -> str:
    return " ".join(f"{TIMELOOP_DIM[d]}{values.get(d, 1)}" for d in dims)


def _mapping(result: Result, levels: list[_Written], dims: list[str]) -> list[dict[str, Any]]:
    keep = [
        [] if w.index is None else [OPERANDS[o] for o in range(3) if result.keep[w.index, o]]
        for w in levels
    ]
    directives: list[dict[str, Any]] = [
        {
            "target": w.level.name,
            "type": "datatype",
            "keep": [_DATA_SPACE[o] for o in kept],
            "bypass": [_DATA_SPACE[o] for o in OPERANDS if o not in kept],
        }
        for w, kept in zip(levels, keep, strict=True)
    ]
    for w in levels:
        # Timeloop's permutation lists the innermost loop first; magnet's, the outermost
        inner_first = [*reversed(w.temporal), *[d for d in dims if d not in w.temporal]]
        directives.append(
            {
                "target": w.level.name,
                "type": "temporal",
                "factors": _factors(w.temporal, dims),
                "permutation": "".join(TIMELOOP_DIM[d] for d in inner_first),
            }
        )
        if not w.fans_out:
            continue
        sx, sy = w.spatial_x, w.spatial_y
        order = [*sx, *sy, *[d for d in dims if d not in sx and d not in sy]]
        directives.append(
            {
                "target": w.level.name,
                "type": "spatial",
                "factors": _factors({**sx, **sy}, dims),
                "permutation": "".join(TIMELOOP_DIM[d] for d in order),
                "split": len(sx),
            }
        )
    return directives


# ---- prices --------------------------------------------------------------------------------


def _ert(result: Result, levels: list[_Written]) -> list[dict[str, Any]]:
    arch, costs, b = result.arch, result.costs, result.batch
    # clock, static and on-chip fan-out energy of this run per cycle per instance in use:
    # Timeloop's leak. A package's chip-to-chip links are not in it: the magnet block keeps
    # the link (``fanout``), whose halo exchange a reader must count again (Timeloop cannot)
    used = b.counts.instances[:, 0] * b.latency_cycles[0]
    on_chip = np.where(b.nop, 0.0, b.interconnect_pj[:, 0])
    leak = (b.clock_pj[:, 0] + b.static_pj[:, 0] + on_chip) / used
    tables = []
    for w in levels:
        li = w.index
        energies = {"read": 0.0, "write": 0.0, "update": 0.0, "leak": 0.0}  # an added dummy
        if li is not None:
            control = float(costs.control_pj_per_access[li])
            energies = {
                "read": float(costs.read_pj[li]) + control,
                "write": float(costs.write_pj[li]) + control,
                "update": float(costs.update_pj[li]) + control,
                "leak": float(leak[li]),
            }
        tables.append(
            {
                "name": _path(w.level.name, w.level.instances),
                "actions": [{"name": k, "arguments": {}, "energy": v} for k, v in energies.items()],
            }
        )
    c = arch.compute
    mac_pj = float(b.math_pj[0] + b.mac_clock_pj[0] + b.mac_static_pj[0]) / b.counts.macs
    tables.append(
        {
            "name": _path(c.name, c.instances),
            "actions": [
                {"name": "compute", "arguments": {}, "energy": mac_pj},
                {"name": "leak", "arguments": {}, "energy": 0.0},
            ],
        }
    )
    return tables


def _art(result: Result) -> list[dict[str, Any]]:
    """Each level's and the MAC's area per instance, its clock-gating cell's included (a
    MAC's share of its input register's; Timeloop has no component for the cells)."""
    arch, costs = result.arch, result.costs
    if not costs.area_known:
        return []
    areas = costs.area_um2_by_component
    gates = dict(zip([lvl.name for lvl in arch.inner_first], costs.gated, strict=True))
    # a MAC's share of the cell of the input register it shares
    gates[arch.compute.name] = (costs.mac_clock_pj_per_cycle > 0) / (
        arch.compute.macs_per_input_register
    )
    parts: list[StorageLevel | ComputeLevel] = [*arch.levels, arch.compute]
    return [
        {
            "name": _path(p.name, p.instances),
            "area": areas[p.name] / p.instances + costs.gate_area_um2 * float(gates[p.name]),
        }
        for p in parts
        if p.name in areas
    ]


def _extensions(result: Result, levels: list[_Written]) -> dict[str, Any]:
    """What counts, cycles or area depend on and Timeloop cannot say, and where the design
    came from."""
    arch, costs = result.arch, result.costs
    layer = layer_view(result.layer, arch)
    areas = costs.area_um2_by_component if costs.area_known else {}
    # routers of the written tree (a dummy level takes the Y half of a split fan-out)
    parents = [w.level for w in levels]
    children: list[StorageLevel | ComputeLevel] = [*parents[1:], arch.compute]
    routers = sum(
        child.instances
        for parent, child in zip(parents, children, strict=True)
        if parent.fanout.topology == "mesh" and child.instances > parent.instances
    )
    return {
        "version": 2,
        "operand_bits": {
            lvl.name: dict(lvl.operand_bits) for lvl in arch.levels if lvl.operand_bits
        },
        "capacity_bits": {
            lvl.name: lvl.capacity_bits
            for lvl in arch.levels
            if lvl.capacity_bits is not None
            and not lvl.is_dummy
            and lvl.capacity_bits % lvl.access_bits
        },
        "shared_bandwidth": {
            lvl.name: lvl.shared_bandwidth
            for lvl in arch.levels
            if lvl.shared_bandwidth is not None
        },
        "streaming": [lvl.name for lvl in arch.levels if lvl.streaming],
        # the kind of each fan-out, a package's chip-to-chip link with its energy per bit
        "fanout": {
            lvl.name: lvl.fanout.model_dump(exclude_defaults=True)
            for lvl in arch.levels
            if lvl.fanout != Fanout()
        },
        "pipeline": None if arch.pipeline is None else arch.pipeline.model_dump(),
        # zeros: the layer's densities, each level's formats and actions, the MACs'
        "densities": None if layer.densities.dense else layer.densities.model_dump(),
        "sparse": {
            lvl.name: {k: v.model_dump(exclude_defaults=True) for k, v in lvl.sparse.items()}
            for lvl in arch.levels
            if lvl.sparse
        },
        "zeros": arch.compute.zeros.model_dump(),
        "sparse_capacity": arch.sparse_capacity,
        # the post-processing unit and the area of its parts (its layers are not written)
        "postprocess": None if arch.postprocess is None else arch.postprocess.model_dump(),
        "postprocess_area_um2": (
            {}
            if costs.postprocess is None or not costs.area_known
            else dict(costs.postprocess.part_area_um2)
        ),
        "router_area_um2": areas["routers"] / routers if "routers" in areas else None,
        "overhead_area_um2": {k: areas[k] for k in OVERHEAD_KINDS if k in areas},
        "design": {
            "name": arch.name,
            "template": arch.template,
            "params": arch.params,
            "clock_ghz": arch.clock_ghz,
            "voltage_v": arch.voltage_v,
            "power_gating": arch.power_gating,
            "clock_gating": arch.clock_gating,
            "controller": arch.controller,
            "cost_model": costs.model_name,
            "noc": costs.noc,
        },
        "im2col_input_words": layer.input_tensor_words if isinstance(layer, GemmView) else None,
        "layer": {"name": result.layer.name, "shape": result.layer.shape_str()},
    }
