"""Mapping reuse across designs (issue 33, ``magnet.mapper.warm``): a layer answered from a
design that prices it alike, searches started from the nearest designs' best, seeds
re-validated, never trusted."""

from __future__ import annotations

import struct

import numpy as np

import magnet as mg
from magnet.dataflow import Dataflow, Rule
from magnet.design import build_design, searched_designs
from magnet.mapper import get_mapper
from magnet.mapper.mapspace import Space, lift
from magnet.mapper.warm import WarmStore, evaluation_identity, seed_batch
from magnet.mapper.whole_network import map_network
from magnet.mapping import LevelMapping, Mapping, to_batch
from magnet.model.evaluate import evaluate_batch, layer_view
from magnet.workload.network import NetworkLayer

LAYER = mg.Layer(name="c", K=64, C=64, P=14, Q=14, R=3, S=3)
NET = mg.Network(name="one", layers=(NetworkLayer(layer=LAYER),))
OPTIONS = {"samples": 600, "rounds": 10, "seed": 0}


def repaired_mapping(seed: Mapping, space: Space) -> Mapping:
    """``seed`` as the warm start makes it a mapping of ``space`` (``seed_batch``)."""
    batch = seed_batch([seed], space)
    assert batch is not None
    return batch.mapping(0, space.arch)


def design(dataflow: str = "ws", **params: object) -> mg.Design:
    arch = mg.templates.get_template("simba").build(
        {"pe_rows": 2, "pe_cols": 2, "clock_ghz": 1.0, **params}
    )
    return build_design(arch, dataflow)


def test_a_design_that_prices_a_layer_alike_answers_it_outright() -> None:
    # the control processor is area only: the layer's mapping is the other design's,
    # re-priced (one evaluation), its area its own
    store = WarmStore()
    first = map_network(NET, design(controller="none"), "fast", warm=store, **OPTIONS)
    other = design(controller="risc-v")
    assert evaluation_identity(other) == evaluation_identity(design(controller="none"))
    reused = map_network(NET, other, "fast", warm=store, **OPTIONS)
    fresh = map_network(NET, other, "fast", **OPTIONS)
    a, b, c = (o.outcomes[LAYER.shape_key()] for o in (first, reused, fresh))
    assert b.result is not None and b.result.start == "exact"
    assert b.mappings_evaluated <= 3 < c.mappings_evaluated  # its mappings re-priced only
    assert b.result.mapping == c.result.mapping and b.result.edp == c.result.edp
    assert b.result.area_mm2 > a.result.area_mm2  # the controller's area, its own
    row = reused.result.record().layers[0]
    assert row.mapping_start == "exact" and b.stats().start == "exact"


def test_a_neighbouring_design_starts_the_search_and_saves_most_of_it() -> None:
    # the weight buffer halved: the search starts from the first design's best mapping,
    # re-validated on the new buffers, and spends a fraction of a fresh search
    store = WarmStore()
    map_network(NET, design(weight_buffer="64KiB"), "fast", warm=store, **OPTIONS)
    other = design(weight_buffer="32KiB")
    warm = map_network(NET, other, "fast", warm=store, **OPTIONS).outcomes[LAYER.shape_key()]
    fresh = map_network(NET, other, "fast", **OPTIONS).outcomes[LAYER.shape_key()]
    assert warm.result is not None and warm.result.start == "warm"
    assert fresh.result is not None and fresh.result.start == "searched"
    assert warm.mappings_evaluated * 3 < fresh.mappings_evaluated
    assert warm.result.edp <= fresh.result.edp * 1.05
    assert bool(warm.result.batch.valid[0])


def test_a_seed_that_no_longer_fits_is_repaired_or_priced_invalid() -> None:
    # a mapping of a 16-lane design on a 4-lane one: its spatial factors beyond the new
    # fan-out run in time; a weight tile too big for a smaller buffer is shrunk, its loops
    # moved out; what still does not fit prices invalid, never trusted
    wide = design(vector_width=16, weight_buffer="64KiB")
    seed = get_mapper("fast", **OPTIONS).map(LAYER, wide).mapping
    assert seed is not None
    narrow = design(vector_width=4, weight_buffer="16KiB")
    space = Space(layer_view(LAYER, narrow.arch), narrow.arch, narrow.dataflow)
    fixed = repaired_mapping(seed, space)
    for lvl, (fx, fy) in zip(narrow.arch.inner_first, narrow.arch.fanouts, strict=True):
        loops = fixed.level(lvl.name)
        if loops is not None:
            assert np.prod(list(loops.spatial_x.values()) or [1]) <= fx
            assert np.prod(list(loops.spatial_y.values()) or [1]) <= fy
    batch = seed_batch([seed], space)
    assert batch is not None and bool(space.structure_ok(batch)[0])
    priced = evaluate_batch(space.layer, narrow.arch, batch, narrow.costs)
    assert bool(priced.valid[0])
    # a buffer too small for any tile of the layer: the seed prices invalid and the search
    # runs afresh (its outcome infeasible, never the seed)
    tiny = design(weight_buffer="64B")
    outcome = get_mapper("fast", **OPTIONS).map(LAYER, tiny, seeds=[seed])
    assert outcome.result is None or bool(outcome.result.batch.valid[0])


def test_a_seed_of_another_dataflow_or_smaller_buffers_is_repaired_into_a_mapping() -> None:
    # NSGA-II's offspring change the dataflow and the buffers: a seed found under each
    # dataflow with larger buffers, repaired onto each dataflow with smaller ones, is a
    # mapping of it that fits (before the stationarity repair and the shrinking of what
    # loops below a level put in it, 21 of these 32 seeds priced invalid and their searches
    # ran afresh)
    flows = ("ws", "os", "ws-local-os", "os-local-ws")
    strided = mg.Layer(name="s", K=64, C=3, P=112, Q=112, R=7, S=7, wstride=2, hstride=2)
    for layer in (LAYER, strided):
        for a in flows:
            big = design(a, weight_buffer="64KiB", accum_collector=4)
            seed = get_mapper("fast", **OPTIONS).map(layer, big).mapping
            assert seed is not None
            for b in flows:
                small = design(b, weight_buffer="8KiB", input_buffer="4KiB", accum_collector=2)
                space = Space(layer_view(layer, small.arch), small.arch, small.dataflow)
                batch = seed_batch([seed], space)
                assert batch is not None and bool(space.structure_ok(batch)[0]), (a, b)
                priced = evaluate_batch(space.layer, small.arch, batch, small.costs)
                assert bool(priced.valid[0]), (layer.name, a, b)


def test_a_loop_that_breaks_stationarity_moves_out_as_the_outermost() -> None:
    # ws keeps weights stationary in the weight buffer: no loop over them (K, C, R, S) above
    # it may run inside one that is not (N, P, Q). A seed with K4 inside P2 in the global
    # buffer, under P7 in DRAM: K4 moves out to DRAM, outside every loop there; the rest
    # stays where it is
    d = design("ws")
    space = Space(layer_view(LAYER, d.arch), d.arch, d.dataflow)
    loops = {
        "DRAM": {"C": 4, "P": 7},
        "GlobalBuffer": {"P": 2, "K": 4},
        "InputBuffer": {"Q": 14},
        "WeightBuffer": {"K": 16, "C": 16, "R": 3, "S": 3},
    }
    seed = Mapping(
        levels=tuple(
            LevelMapping(target=lvl.name, temporal=loops.get(lvl.name, {})) for lvl in d.arch.levels
        )
    )
    fixed = repaired_mapping(seed, space)
    assert list(fixed.level("DRAM").temporal.items()) == [("K", 4), ("C", 4), ("P", 7)]
    assert fixed.level("GlobalBuffer").temporal == {"P": 2}
    assert fixed.level("InputBuffer").temporal == {"Q": 14}
    batch = seed_batch([seed], space)
    assert batch is not None and bool(space.structure_ok(batch)[0])
    assert not bool(space.structure_ok(to_batch(seed, d.arch))[0])  # the seed itself breaks it


def test_an_alternative_without_a_level_starts_from_the_designs_best() -> None:
    # os searches the design with and without its accumulation collector
    # (searched_designs); a seed is the best over both, written on the whole design. On
    # the alternative it is that mapping with the collector's loops folded into the level
    # above: a mapping found there and lifted comes back exactly, and both searches of
    # the next design start warm
    full = design(accum_collector=4, dataflow="os")
    whole, alternative = searched_designs(full)
    assert len(alternative.arch.levels) == len(whole.arch.levels) - 1
    space = Space(layer_view(LAYER, alternative.arch), alternative.arch, alternative.dataflow)
    found = get_mapper("fast", **OPTIONS).map(LAYER, alternative)
    assert found.result is not None
    own = to_batch(found.result.mapping, alternative.arch)
    lifted = lift(own, alternative.arch, full.arch).mapping(0, full.arch)
    back = seed_batch([lifted], space)
    assert back is not None
    for name in ("factors_t", "spatial_x", "spatial_y", "rank"):
        assert np.array_equal(getattr(back, name), getattr(own, name))
    # the collector's own loops land in the accumulation buffer's, inside them
    # (C2 in the collector under R3 in the buffer: R3 C2 there)
    names = [lvl.name for lvl in full.arch.levels]
    collector = names.index("AccumulationCollector")
    seed = Mapping(
        levels=tuple(
            LevelMapping(target=n, temporal={"C": 2} if i == collector else {})
            if n != "AccumulationBuffer"
            else LevelMapping(target=n, temporal={"R": 3})
            for i, n in enumerate(names)
        )
    )
    folded = repaired_mapping(seed, space).level("AccumulationBuffer")
    assert folded is not None and list(folded.temporal.items()) == [("R", 3), ("C", 2)]
    # the next design's searches (of the design and of its alternative) both start warm:
    # together a fraction of a fresh search (one warm and one fresh: about half)
    store = WarmStore()
    map_network(NET, full, "fast", warm=store, **OPTIONS)
    other = design(accum_collector=4, weight_buffer="64KiB", dataflow="os")
    warm = map_network(NET, other, "fast", warm=store, **OPTIONS).outcomes[LAYER.shape_key()]
    fresh = map_network(NET, other, "fast", **OPTIONS).outcomes[LAYER.shape_key()]
    assert warm.mappings_evaluated * 3 < fresh.mappings_evaluated


def test_a_search_reuses_unless_told_not_to(tmp_path) -> None:
    from magnet.search import job as E
    from magnet.search import load_space
    from magnet.search.job import DesignJob, evaluate_design

    space = load_space("quickstart")
    data = space.model_dump(mode="json")
    data["mapper"]["options"] = {"samples": 300, "rounds": 4}
    jobs = []
    for reuse in (True, False):
        data["mapper"]["reuse"] = reuse
        s = type(space).model_validate(data)
        params = s.design({n: r.first() for n, r in s.ranges().items()})
        jobs.append(DesignJob.of(s, params, "ws"))
    E.WARM_STORE = WarmStore()
    first = evaluate_design(jobs[0])
    again = evaluate_design(jobs[0])  # a design that prices every layer alike: exact
    off = evaluate_design(jobs[1])
    starts = lambda r: {row["mapping_start"] for row in r.records[0]["layers"]} - {None}  # noqa: E731
    assert starts(first) == {"searched"} and starts(again) == {"exact"}
    assert starts(off) == {"searched"}
    assert again.mappings_evaluated < first.mappings_evaluated / 100


def test_a_design_maps_a_shape_once_over_its_workloads_and_keeps_nothing_after() -> None:
    # two workloads of one design, ResNet-18 at batch 1 twice (weights 1 and 2): the second
    # maps none of its shapes again (each distinct shape answered from the job's cache, no
    # mapping priced, none counted twice in the design's evaluations); the same job run
    # again starts with an empty cache: its first workload's shapes come from the reuse
    # store (exact), never from a cache that outlived the job
    from magnet.search import job as E
    from magnet.search import load_space
    from magnet.search.job import DesignJob, evaluate_design

    space = load_space("quickstart")
    data = space.model_dump(mode="json")
    data["mapper"]["options"] = {"samples": 300, "rounds": 4}
    one = [{"workload": "resnet18", "batch": 1}]
    data["workloads"] = one
    s1 = type(space).model_validate(data)
    data["workloads"] = [*one, {"workload": "resnet18", "batch": 1, "weight": 2}]
    s2 = type(space).model_validate(data)
    first = {n: r.first() for n, r in s1.ranges().items()}
    E.WARM_STORE = WarmStore()
    alone = evaluate_design(DesignJob.of(s1, s1.design(first), "ws"))
    E.WARM_STORE = WarmStore()
    both = evaluate_design(DesignJob.of(s2, s2.design(first), "ws"))
    shapes = len(mg.load_workload("resnet18", batch=1).unique_layers(mapped=True))
    assert alone.cache_hits == 0 and both.cache_hits == shapes
    assert both.mappings_evaluated == alone.mappings_evaluated  # the second priced none
    again = evaluate_design(DesignJob.of(s2, s2.design(first), "ws"))
    assert again.cache_hits == shapes  # its second workload's, not the first job's
    starts = {row["mapping_start"] for row in again.records[0]["layers"]} - {None}
    assert starts == {"exact"}


def test_the_repairs_fit_check_is_the_mapspaces() -> None:
    # the repair asks which level a seed's tiles overflow first in plain floats
    # (``Space.first_misfit``); it must answer as ``fits_each`` does on the same tiles, on a
    # strided layer and a 3x3 one, under two dataflows, and on compressed tiles (weights 2:4
    # in a bitmask: 5 bits a word), for tiles that fit and overflow
    rng = np.random.default_rng(0)
    strided = mg.Layer(name="s", K=64, C=3, P=112, Q=112, R=7, S=7, wstride=2, hstride=2)
    zeros = LAYER.model_copy(update={"densities": mg.Layer(densities={"weights": "2:4"}).densities})
    sparse = mg.templates.simba(zeros="skipping", weight_format="bitmask", dram_format="rle")
    cases = [
        (layer, design(flow, weight_buffer="8KiB", input_buffer="4KiB"))
        for layer in (LAYER, strided)
        for flow in ("ws", "os-local-ws")
    ]
    cases.append((zeros, build_design(sparse, "ws")))
    seen = set()
    for layer, d in cases:
        space = Space(layer_view(layer, d.arch), d.arch, d.dataflow)
        for _ in range(200):
            factors = rng.choice([1, 1, 1, 1, 2, 3, 7], size=(8, space.nl)).astype(float)
            fits = space.fits_each(np.cumprod(factors, axis=1))[:-1]
            expected = next((li for li, ok in enumerate(fits) if not ok), None)
            assert space.first_misfit(factors.tolist()) == expected
            seen.add(expected)
    assert 5.0 in space.bits  # the compressed weights' bits a word
    assert None in seen and len(seen) >= 3  # tiles that fit, and overflows at two levels


def test_the_stores_of_a_searchs_workers_trade_what_they_search_afresh(tmp_path) -> None:
    # two workers' stores share a directory, as a Ray pool's do (``WarmStore.share``): what
    # one searched afresh starts the other's searches as if it had mapped the design itself,
    # and answers a design that prices a layer alike outright; a warm outcome is not traded
    first, second = WarmStore(), WarmStore()
    first.share(str(tmp_path), 2)
    second.share(str(tmp_path), 2)
    assert first.exchange is not None and second.exchange is not None
    assert (first.exchange.turn, second.exchange.turn) == (0, 1)
    big, small = design(weight_buffer="64KiB"), design(weight_buffer="32KiB")
    assert not second.knows(small)
    map_network(NET, big, "fast", warm=first, **OPTIONS)
    assert second.knows(small)  # the first store's outcome, read from its file
    key = LAYER.shape_key()
    traded = map_network(NET, small, "fast", warm=second, **OPTIONS).outcomes[key]
    alone = WarmStore()
    map_network(NET, big, "fast", warm=alone, **OPTIONS)
    own = map_network(NET, small, "fast", warm=alone, **OPTIONS).outcomes[key]
    assert traded.result is not None and own.result is not None
    assert traded.result.start == own.result.start == "warm"
    assert traded.result.mapping == own.result.mapping
    assert traded.mappings_evaluated == own.mappings_evaluated
    alike = design(weight_buffer="64KiB", controller="risc-v")  # area only: prices alike
    exact = map_network(NET, alike, "fast", warm=second, **OPTIONS).outcomes[key]
    assert exact.result is not None and exact.result.start == "exact"
    assert (tmp_path / "store-0").stat().st_size > 0  # the search afresh, traded
    assert (tmp_path / "store-1").stat().st_size == 0  # a warm one and an exact one: not
    # a store whose directory cannot be written (another machine's) keeps its own
    lone = WarmStore()
    lone.share(str(tmp_path / "elsewhere"), 2)
    assert lone.exchange is None


def test_a_store_reads_a_record_once_whole_and_a_bad_file_ends_the_trade_not_a_design(
    tmp_path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    source = WarmStore()
    source.share(str(tmp_path / "a"), 2)
    big, small = design(weight_buffer="64KiB"), design(weight_buffer="32KiB")
    map_network(NET, big, "fast", warm=source, **OPTIONS)
    written = (tmp_path / "a" / "store-0").read_bytes()
    reader = WarmStore()
    reader.share(str(tmp_path / "b"), 2)
    peer = tmp_path / "b" / "store-1"  # another worker's file, being written
    peer.write_bytes(written[:10])
    assert not reader.knows(small)  # a record not yet whole is not read
    with peer.open("ab") as f:
        f.write(written[10:])
    assert reader.knows(small)
    with peer.open("ab") as f:
        f.write(struct.pack("<I", 3) + b"abc")  # not a record
    key = LAYER.shape_key()
    outcome = map_network(NET, small, "fast", warm=reader, **OPTIONS).outcomes[key]
    assert outcome.result is not None and outcome.result.start == "warm"
    assert reader.exchange is not None and not reader.exchange.trading  # keeps its own now


def test_a_workers_turn_starts_its_first_searches_midway_with_the_same_outcomes(
    tmp_path,
) -> None:
    # searched afresh while another worker may search the same shapes, the second worker
    # starts at the middle of them; each shape's outcome is its own search's, as in order
    layers = [
        mg.Layer(
            name=f"l{i}", K=32 * (i + 1), C=32, P=14, Q=14, R=1 + 2 * (i % 2), S=1 + 2 * (i % 2)
        )
        for i in range(4)
    ]
    net = mg.Network(name="four", layers=tuple(NetworkLayer(layer=lyr) for lyr in layers))
    (tmp_path / "store-0").write_bytes(b"")  # the first worker's
    store = WarmStore()
    store.share(str(tmp_path), 2)
    assert store.exchange is not None and store.exchange.turn == 1
    names: list[str] = []

    def progress(outcome, done, total) -> None:
        names.append(outcome.layer.name)

    turned = map_network(net, design(), "fast", warm=store, progress=progress, **OPTIONS)
    plain = map_network(net, design(), "fast", **OPTIONS)
    assert names == ["l2", "l3", "l0", "l1"]
    for lyr in layers:
        a, b = turned.outcomes[lyr.shape_key()], plain.outcomes[lyr.shape_key()]
        assert a.result is not None and b.result is not None
        assert a.result.mapping == b.result.mapping and a.result.edp == b.result.edp


def test_a_shape_that_cannot_be_mapped_is_named_alike_whatever_the_turn(tmp_path) -> None:
    # a factor of P=2 fixed at the global buffer: a layer of P=1 cannot be mapped (half its
    # iterations would pad), so the design cannot run the network. Started midway (at l2),
    # the shapes after the failing l3 are still searched, and the outcome named is the
    # network's first that cannot be mapped, l1, as without a turn
    flow = Dataflow(name="bad", rules=(Rule(level="GlobalBuffer", factors={"P": 2}),))
    chip = build_design(mg.load_arch("simba-chip"), flow)
    layers = [
        mg.Layer(name=f"l{i}", K=16 * (i + 1), C=16, P=p, Q=p) for i, p in enumerate((8, 1, 8, 1))
    ]
    net = mg.Network(name="four", layers=tuple(NetworkLayer(layer=lyr) for lyr in layers))
    (tmp_path / "store-0").write_bytes(b"")
    store = WarmStore()
    store.share(str(tmp_path), 2)
    turned = map_network(net, chip, "fast", warm=store, **OPTIONS)
    plain = map_network(net, chip, "fast", **OPTIONS)
    assert turned.status == plain.status == "infeasible"
    assert turned.reason == plain.reason and "'l1'" in str(turned.reason)
