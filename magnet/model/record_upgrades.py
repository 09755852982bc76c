"""The upgrade of a stored record of each older schema version to the next
(``magnet.model.records.read_record`` runs them in turn, then validates the result).

Each ``to_vN`` takes the JSON data of a network or layer record of version N - 1 and returns
that of version N (a new dict; the one given is not changed): what version N adds, derived
from the record where it determines it, else None, the value that field's docstring says
means "not in a record older than version N". A step fills only what the record lacks, so
that records of one version written by different commits of it (a field added later with a
default) and the two version 2 of history (below) take the same steps.

Version 2 was made twice, on two branches merged into version 3 (e7d9a5c): main's (47adc4a:
the operating point, the ``clock`` and ``control`` categories) and the memory branch's
(2a823e9: DRAM bytes, ``bound``, ``off_chip``). A version-2 record has one or the other, and
``to_v3`` fills in whichever it lacks.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from magnet.model.records import CATEGORIES

Record = dict[str, Any]

#: A network layer's batch in its shape text (``Layer.shape_str``: ``N=4``, absent when 1).
_BATCH = re.compile(r"(?:^|,)N=(\d+)(?:,|$)")


def _network(data: Record) -> bool:
    return data.get("record") == "network"


def _rows(data: Record, fill: Callable[[Record], None]) -> None:
    """``fill`` each layer row of a network record (copies; a layer record has none)."""
    if _network(data):
        rows = [dict(row) for row in data.get("layers") or []]
        for row in rows:
            fill(row)
        data["layers"] = rows


def _category(parts: dict[str, float], name: str, value: float) -> dict[str, float]:
    """``parts`` with ``name`` at ``value`` in its place among ``CATEGORIES``."""
    if name in parts:
        return parts
    order = {c: i for i, c in enumerate(CATEGORIES)}
    rank = order[name]
    out: dict[str, float] = {}
    for key, v in parts.items():
        if name not in out and order.get(key, len(order)) > rank:
            out[name] = value
        out[key] = v
    out.setdefault(name, value)
    return out


def _bound(row: Record) -> None:
    """A layer's roofline side: ``compute`` when its bottleneck is the MACs, else ``memory``
    (as ``bound`` was defined when version 3's DRAM bytes came, 2a823e9)."""
    if "bottleneck" in row:
        row.setdefault("bound", "compute" if row["bottleneck"] == "compute" else "memory")


def _operating_point(data: Record) -> None:
    """The clock and supply, when the record lacks them: a network's clock is its cycles over
    its seconds (``latency_s`` = cycles / clock; 12 significant digits), a layer record's is
    not known (None); the supply is None (the node's nominal one, which version 1 ran at
    unless told otherwise: not recorded)."""
    if "clock_ghz" in data:
        return
    clock = None
    seconds, cycles = data.get("latency_s"), data.get("latency_cycles")
    if _network(data) and isinstance(cycles, int) and isinstance(seconds, int | float):
        clock = float(f"{cycles / seconds / 1e9:.12g}") if 0 < seconds < math.inf else None
    data["clock_ghz"] = clock
    data.setdefault("voltage_v", None)


def to_v2(data: Record) -> Record:
    """Version 2: the operating point (``clock_ghz``, ``voltage_v``: ``_operating_point``).
    The ``clock`` and ``control`` categories are not made up: version 1 counted the clock
    in ``math``, ``memory`` and ``static`` and had no control category."""
    out = {**data, "schema_version": 2}
    _operating_point(out)
    return out


def _dram(row: Record) -> None:
    _bound(row)
    row.setdefault("dram_bytes", None)
    row.setdefault("off_chip", None)


def to_v3(data: Record) -> Record:
    """Version 3: DRAM bytes and the roofline side. ``bound`` is derived (``_bound``);
    ``dram_bytes`` (a network's, a row's, a layer record's), ``dram_bytes_by_operand`` and a
    row's ``off_chip`` are None. A version-2 record of the memory branch, which has these,
    gets the operating point instead (``_operating_point``)."""
    out = {**data, "schema_version": 3}
    _operating_point(out)
    out.setdefault("dram_bytes", None)
    if _network(out):
        _rows(out, _dram)
    else:
        _bound(out)
        out.setdefault("dram_bytes_by_operand", None)
    return out


def to_v4(data: Record) -> Record:
    """Version 4: a network's access energy by level and operand and its roofs, None (not
    kept: ``peak_macs_per_cycle`` None says the roofs are unknown, ``dram_bytes_per_cycle``
    with it). A layer record is unchanged."""
    out = {**data, "schema_version": 4}
    if _network(out):
        out.setdefault("energy_pj_by_operand", None)
        out.setdefault("peak_macs_per_cycle", None)
        out.setdefault("dram_bytes_per_cycle", None)
    return out


def _batch(data: Record) -> int:
    """A network's batch: the largest ``N`` of its layers' shapes (``Network.batch``)."""
    found = [_BATCH.search(str(row.get("shape", ""))) for row in data.get("layers") or []]
    return max([int(m.group(1)) for m in found if m] or [1])


def _package(row: Record) -> None:
    row.setdefault("partition", None)
    row.setdefault("nop_bytes", None)


def to_v5(data: Record) -> Record:
    """Version 5 (packages): ``images_per_s``, the batch over ``latency_s`` (no pipeline
    before version 5: ``pipeline`` None); ``chiplets``, ``nop_bytes`` and a layer's
    ``partition`` None: packages came in version 4 (47813e1) and a version-4 record does not
    say whether its design was one. No ``nop`` category: version 4 counted a package's links
    in ``network``."""
    out = {**data, "schema_version": 5}
    out.setdefault("nop_bytes", None)
    if _network(out):
        seconds = out.get("latency_s")
        if "images_per_s" not in out and isinstance(seconds, int | float) and seconds > 0:
            out["images_per_s"] = _batch(out) / seconds
        out.setdefault("chiplets", None)
        out.setdefault("pipeline", None)
        _rows(out, _package)
    else:
        out.setdefault("partition", None)
    return out


def _unit(part: Record) -> None:
    """No post-processing unit before version 6: its category spent nothing."""
    cats = part.get("energy_pj_by_category")
    if isinstance(cats, dict):
        part["energy_pj_by_category"] = _category(cats, "postprocess", 0.0)


def _mac_row(row: Record) -> None:
    _unit(row)
    row.setdefault("kind", None)
    row.setdefault("op", None)
    row.setdefault("fused_into", None)


def to_v6(data: Record) -> Record:
    """Version 6 (the post-processing unit): every layer before it a MAC layer, of a kind
    not kept (``kind`` None; ``op``, ``fused_into``, ``unit_ops`` None); the
    ``postprocess`` category 0; ``skipped_ops`` empty (none left out on request: operators
    of no MACs were not modelled at all)."""
    out = {**data, "schema_version": 6}
    _unit(out)
    if _network(out):
        out.setdefault("skipped_ops", {})
        _rows(out, _mac_row)
    else:
        out.setdefault("kind", None)
        out.setdefault("op", None)
        out.setdefault("unit_ops", None)
    return out


def _weights_at(row: Record) -> None:
    row.setdefault("weights_at", None)


def to_v7(data: Record) -> Record:
    """Version 7 (weights that stay on chip across batches): none stayed before, so the
    first batch of a stream is any batch (``first_latency_s``, ``first_energy_pj``: the
    network's) and ``weights_on_chip_bytes`` is 0; a row's ``weights_at`` None."""
    out = {**data, "schema_version": 7}
    if _network(out):
        out.setdefault("first_latency_s", out.get("latency_s"))
        out.setdefault("first_energy_pj", out.get("energy_pj"))
        out.setdefault("weights_on_chip_bytes", 0.0)
        _rows(out, _weights_at)
    return out


def to_v8(data: Record) -> Record:
    """Version 8 (fused pipelines): a pipeline stage passes a batch whole (``tiles`` 1) in
    the one group (``group`` 0)."""
    out = {**data, "schema_version": 8}
    if _network(out) and out.get("pipeline"):
        out["pipeline"] = [{"tiles": 1, "group": 0, **stage} for stage in out["pipeline"]]
    return out


def _dense(part: Record) -> None:
    part.setdefault("densities", None)
    part.setdefault("effectual_macs", None)
    part.setdefault("zeros_saved", None)


def to_v9(data: Record) -> Record:
    """Version 9 (zeros): every tensor dense before it (``densities``, ``effectual_macs``,
    ``zeros_saved`` None); a mapping's ``start`` is its default (searched), a row's
    ``mapping_start`` None (no mapping reuse before)."""
    out = {**data, "schema_version": 9}
    if _network(out):
        out.setdefault("zeros_saved", None)
        _rows(out, _dense)
    else:
        _dense(out)
    return out


def _noc(part: Record) -> None:
    cats = part.get("energy_pj_by_category")
    if isinstance(cats, dict) and "network" in cats:
        part["energy_pj_by_category"] = {
            ("noc" if name == "network" else name): value for name, value in cats.items()
        }


def to_v10(data: Record) -> Record:
    """Version 10 (the network is the DNN): the category ``network`` (the chip's wires and
    interconnect reductions) is ``noc``, in its place."""
    out = {**data, "schema_version": 10}
    _noc(out)
    _rows(out, _noc)
    return out


#: The upgrade from each older version to the next, by the version it reads.
UPGRADES: dict[int, Callable[[Record], Record]] = {
    1: to_v2,
    2: to_v3,
    3: to_v4,
    4: to_v5,
    5: to_v6,
    6: to_v7,
    7: to_v8,
    8: to_v9,
    9: to_v10,
}
