"""Records of every older schema version read as the current one (``read_record``): the
frozen records of ``tests/data/records/`` (made by magnet's own history, README.md there)
are upgraded one version at a time and validated; what a version lacked reads as derived
from the record or as None, the documented "not in a record older than version N"; a
record of the current version reads back equal, and one of a later version, or of none, is
refused with a ``MagnetError``."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest

import magnet as mg
from magnet.model import record_upgrades
from magnet.model.records import (
    CATEGORIES,
    OLD_RECORD,
    SCHEMA_VERSION,
    LayerRecord,
    NetworkRecord,
    read_network_record,
    read_record,
)
from magnet.report.text import layer_table, network_table
from magnet.workload.layer import POSTPROCESS_OPS
from magnet.workload.network import NetworkLayer
from tests.conftest import DATA
from tests.test_schemas import errors

RECORDS = DATA / "records"
#: Categories renamed since (old -> new): version 10's ``noc`` was ``network``.
NOW = {"network": "noc"}
#: Each frozen network record: the version magnet wrote it in.
NETWORKS = {
    "v1": 1,
    "v2": 2,
    "v2-memory": 2,
    "v3": 3,
    "v4": 4,
    "v4-package": 4,
    "v5": 5,
    "v5-package": 5,
    "v6": 6,
    "v6-postprocess": 6,
    "v7": 7,
    "v8": 8,
    "v8-fused": 8,
    "v9": 9,
    "v9-zeros": 9,
    "v10": 10,
}
LAYERS = {"layer-v1": 1, "layer-v2-memory": 2, "layer-v4": 4, "layer-v9": 9, "layer-v10": 10}
#: The fields a network record may say are unknown (None), ``rows.`` a layer row's.
NETWORK_UNKNOWNS = (
    "dram_bytes",
    "energy_pj_by_operand",
    "peak_macs_per_cycle",
    "chiplets",
    "nop_bytes",
    "rows.dram_bytes",
    "rows.off_chip",
    "rows.partition",
    "rows.nop_bytes",
    "rows.kind",
)
LAYER_UNKNOWNS = ("clock_ghz", "dram_bytes", "dram_bytes_by_operand", "partition", "nop_bytes")
LAYER_UNKNOWNS += ("kind",)
#: What each frozen record lacked, as read: added in version 3 (DRAM bytes), 4 (operands and
#: roofs), 5 (chiplets) and 6 (kinds); the memory branch's version 2 had version 3's.
V3 = {"dram_bytes", "rows.dram_bytes", "rows.off_chip"}
V4 = {"energy_pj_by_operand", "peak_macs_per_cycle"}
V5 = {"chiplets", "nop_bytes", "rows.partition", "rows.nop_bytes"}
V6 = {"rows.kind"}
UNKNOWN = {
    "v1": V3 | V4 | V5 | V6,
    "v2": V3 | V4 | V5 | V6,
    "v2-memory": V4 | V5 | V6,
    "v3": V4 | V5 | V6,
    "v4": V5 | V6,
    "v4-package": V5 | V6,
    "v5": V6,
    "v5-package": V6,
    "layer-v1": set(LAYER_UNKNOWNS),
    "layer-v2-memory": {"clock_ghz", "partition", "nop_bytes", "kind"},
    "layer-v4": {"partition", "nop_bytes", "kind"},
}


def frozen(name: str) -> dict[str, Any]:
    data = json.loads((RECORDS / f"{name}.json").read_text())
    assert isinstance(data, dict)
    return data


def unknowns(record: NetworkRecord | LayerRecord) -> set[str]:
    """The fields of ``record`` that say "not in this record" (None)."""
    if isinstance(record, LayerRecord):
        return {f for f in LAYER_UNKNOWNS if getattr(record, f) is None}
    out = {f for f in NETWORK_UNKNOWNS if "." not in f and getattr(record, f) is None}
    for f in NETWORK_UNKNOWNS:
        if f.startswith("rows."):
            nones = {getattr(row, f[5:]) is None for row in record.layers}
            assert len(nones) == 1, f"{f}: some rows have it, some do not"
            if nones == {True}:
                out.add(f)
    return out


# ---- every frozen record reads, as the current version -------------------------------------
@pytest.mark.parametrize("name", sorted(NETWORKS | LAYERS))
def test_every_frozen_record_reads_as_the_current_version(name: str) -> None:
    data = frozen(name)
    version = (NETWORKS | LAYERS)[name]
    assert data["schema_version"] == version  # the file is what that version wrote
    before = copy.deepcopy(data)
    record = read_record(data)
    assert data == before  # read, not changed
    assert record.schema_version == SCHEMA_VERSION
    assert isinstance(record, LayerRecord if name in LAYERS else NetworkRecord)
    assert unknowns(record) == UNKNOWN.get(name, set())
    # the upgraded record is one the JSON schema describes (`magnet schema`)
    kind = "layer-record" if name in LAYERS else "network-record"
    assert errors(kind, record.model_dump(mode="json")) == []
    # what was there is kept
    dumped = record.model_dump(mode="json")
    for key in ("macs", "latency_cycles", "energy_pj", "energy_pj_by_level", "mapping"):
        if key in data:
            assert dumped[key] == data[key], key
    # the categories are as written (none made up; version 10 renamed ``network`` ``noc``,
    # in its place) and add up to the energy
    cats = record.energy_pj_by_category
    written = {NOW.get(c, c): v for c, v in data["energy_pj_by_category"].items()}
    assert list(cats) == [c for c in CATEGORIES if c in cats]
    assert {c: v for c, v in cats.items() if c != "postprocess" or v} == {
        c: v for c, v in written.items() if c != "postprocess" or v
    }
    assert math.fsum(cats.values()) == pytest.approx(record.energy_pj, rel=1e-9)


def test_a_record_of_each_version_derives_what_it_can() -> None:
    v1 = read_network_record(frozen("v1"))
    v2 = frozen("v2")  # the same design a version later: its clock recorded
    # the clock, from cycles over seconds: the recorded one
    assert v1.clock_ghz == v2["clock_ghz"] == 1.96 and v1.voltage_v is None
    # no clock or control before version 2 (version 1 counted the clock in math, memory
    # and static); the post-processing unit's category 0 before there was one; no NoP
    # category before version 5 (a version-4 package counted its links in noc, then network)
    assert list(v1.energy_pj_by_category) == [
        "math",
        "postprocess",
        "memory",
        "noc",
        "dram",
        "static",
    ]
    assert v1.energy_pj_by_category["postprocess"] == 0.0
    v4 = read_network_record(frozen("v4-package"))
    assert "nop" not in v4.energy_pj_by_category and v4.chiplets is None
    # the roofline side, from the bottleneck; inputs per second, the batch over the latency
    for row in v1.layers:
        assert row.bound == ("compute" if row.bottleneck == "compute" else "memory")
    assert v1.images_per_s == pytest.approx(1 / v1.latency_s, rel=1e-15)
    assert v1.pipeline is None and v1.skipped_ops == {}
    # a MAC layer of a kind not kept; no weights stayed on chip: the first batch is any
    assert {(r.kind, r.op, r.fused_into, r.weights_at) for r in v1.layers} == {
        (None, None, None, None)
    }
    assert (v1.first_latency_s, v1.first_energy_pj) == (v1.latency_s, v1.energy_pj)
    assert v1.weights_on_chip_bytes == 0.0
    # every tensor dense before version 9
    assert v1.zeros_saved is None
    assert {(r.densities, r.effectual_macs, r.zeros_saved) for r in v1.layers} == {
        (None, None, None)
    }
    # a layer record of version 1: no time in seconds, so no clock
    layer = read_record(frozen("layer-v1"))
    assert isinstance(layer, LayerRecord)
    assert layer.clock_ghz is None and layer.bound == "compute" and layer.kind is None
    assert layer.energy_pj_by_category["postprocess"] == 0.0 and layer.unit_ops is None
    assert layer.mapper is not None and layer.mapper.start == "searched"
    # a fused pipeline of version 8: its stages in the one group
    fused = read_network_record(frozen("v8-fused"))
    assert fused.pipeline and {s.group for s in fused.pipeline} == {0}


def test_the_memory_branchs_version_2_gets_the_operating_point_instead() -> None:
    # version 2 was made twice: main's (operating point) and the memory branch's (DRAM
    # bytes); version 3 has both
    main, memory = frozen("v2"), frozen("v2-memory")
    assert "clock_ghz" in main and "dram_bytes" not in main
    assert "dram_bytes" in memory and "clock_ghz" not in memory
    record = read_network_record(memory)
    assert record.clock_ghz == 1.96 and record.dram_bytes == memory["dram_bytes"]
    assert [r.off_chip for r in record.layers] == [r["off_chip"] for r in memory["layers"]]
    assert "clock" not in record.energy_pj_by_category  # not split out on that branch


@pytest.mark.parametrize("name", [n for n, v in NETWORKS.items() if v >= 2])
def test_the_derivations_hold_where_the_record_has_the_field(name: str) -> None:
    # each rule an upgrade derives by, checked on the records that have the field
    data = frozen(name)
    seconds, cycles = data["latency_s"], data["latency_cycles"]
    assert float(f"{cycles / seconds / 1e9:.12g}") == data.get("clock_ghz", 1.96)
    for row in data["layers"]:
        if "bound" in row and row.get("kind") not in POSTPROCESS_OPS:
            assert row["bound"] == ("compute" if row["bottleneck"] == "compute" else "memory")
    if "images_per_s" in data and not data.get("pipeline"):
        batch = record_upgrades._batch(data)
        assert data["images_per_s"] == pytest.approx(batch / seconds, rel=1e-12)


def test_the_batch_is_the_largest_n_of_the_layers() -> None:
    rows = [{"shape": "K=64,C=3,N=4,P=56"}, {"shape": "K=10,C=512,N=4"}, {"shape": "K=8"}]
    assert record_upgrades._batch({"layers": rows}) == 4
    assert record_upgrades._batch({"layers": [{"shape": "K=8,C=8"}]}) == 1
    assert record_upgrades._batch({"layers": [{"shape": "relu K=64,N=2,P=8"}]}) == 2


def test_the_current_version_reads_back_equal() -> None:
    # a frozen one, network and layer (dc07304) ...
    for name in ("v10", "layer-v10"):
        data = frozen(name)
        assert read_record(data).model_dump(mode="json") == data
    # ... version 9's the same but for the category it names network (3dc39dc: before a
    # row's mapping_start, whose default is None)
    data = frozen("v9")
    dumped = read_record(data).model_dump(mode="json")
    for row in dumped["layers"]:
        assert row.pop("mapping_start") is None
    for part in (data, *data["layers"]):
        cats = part["energy_pj_by_category"]
        part["energy_pj_by_category"] = {NOW.get(c, c): v for c, v in cats.items()}
    assert dumped == {**data, "schema_version": SCHEMA_VERSION}
    # ... and one written now, network and layer
    arch = mg.load_arch("simba-chip")
    net = mg.Network(
        name="two",
        layers=(
            NetworkLayer(layer=mg.parse_layer("K=16,C=8,P=8,Q=8,R=3,S=3", name="a")),
            NetworkLayer(layer=mg.parse_layer("K=10,C=16", name="b")),
        ),
    )
    record = mg.evaluate(net, arch, dataflow="ws").record()
    assert read_record(record.model_dump(mode="json")) == record
    assert read_record(json.loads(record.model_dump_json())) == record
    layer = mg.evaluate(mg.parse_layer("K=16,C=8,P=8,Q=8"), arch, dataflow="ws").record()
    assert read_record(layer.model_dump(mode="json")) == layer


def test_every_older_version_has_its_upgrade() -> None:
    assert sorted(record_upgrades.UPGRADES) == list(range(1, SCHEMA_VERSION))
    assert set(NETWORKS.values()) == set(range(1, SCHEMA_VERSION + 1))


# ---- records that are not of a known version ------------------------------------------------
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"schema_version": SCHEMA_VERSION + 1}, r"a record of version 11, written by a newer"),
        ({"schema_version": None}, r"not a record of a known version: schema_version None"),
        ({"schema_version": 0}, r"not a record of a known version: schema_version 0"),
        ({"schema_version": True}, r"not a record of a known version: schema_version True"),
        ({"schema_version": "9"}, r"not a record of a known version: schema_version '9'"),
        ({"record": "trial"}, r"not a record: 'record' is 'trial'"),
        ({"layers": 5}, r"a network record of version 3: not a record of this shape"),
        ({"layers": [{"name": "x"}]}, r"a network record of version 3: layers\.0\.shape"),
        ({"energy_pj": "a lot"}, r"a network record of version 3: energy_pj"),
    ],
)
def test_a_record_of_no_known_version_or_shape_is_refused(change, message) -> None:
    data = {**frozen("v3"), **change}
    with pytest.raises(mg.MagnetError, match=message):
        read_record(data)


def test_the_version_messages_say_what_this_magnet_reads() -> None:
    with pytest.raises(mg.MagnetError) as info:
        read_record({"record": "network"})
    assert f"this magnet reads records of versions 1 to {SCHEMA_VERSION}" in str(info.value)
    with pytest.raises(mg.MagnetError, match="a layer record where a network record"):
        read_network_record(frozen("layer-v4"))
    with pytest.raises(mg.MagnetError, match=r"read_record\(\): data: expected a dict"):
        read_record([frozen("v3")])  # type: ignore[arg-type]


# ---- the text tables of an upgraded record ---------------------------------------------------
def test_the_text_tables_say_what_an_older_record_lacks() -> None:
    text = network_table(read_network_record(frozen("v1")))
    assert f"dram bytes   {OLD_RECORD}" in text
    assert "1.96 GHz at the node's nominal supply" in text
    layer = read_record(frozen("layer-v1"))
    assert isinstance(layer, LayerRecord)
    text = layer_table(layer, "(loop nest)")
    assert f"operating    clock and supply: {OLD_RECORD}" in text
    assert f"dram bytes   {OLD_RECORD}" in text
