"""Properties of the analytical model on random small layers, architectures and mappings.

Architectures are built here: DRAM plus 1 to 3 on-chip levels with random keep sets,
capacities and fan-outs. Mappings split every dimension into random divisors over the
levels (spatial factors within each fan-out, the rest temporal) with random loop orders, or
come from magnet's own capacity-aware sampler. Costs come from the built-in tables
(``price_arch``), never from a stand-in. Properties only: the regression cases found by
them are separate tests below, run once each.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel
from magnet.cost import price_arch
from magnet.dataflow import Dataflow
from magnet.errors import DesignInfeasible, InvalidMappingError
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import sample
from magnet.mapping import LevelMapping, Mapping, MappingBatch, default_keep, to_batch
from magnet.model import analyze, evaluate_batch
from magnet.model.evaluate import _sum_rows, evaluate_mapping
from magnet.workload.dims import DIMS, NUM_DIMS, OPERANDS, RELEVANT, Operand
from magnet.workload.layer import Layer

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ALL = ("weights", "inputs", "outputs")
KEEP_SETS = [(), ("weights",), ("inputs",), ("outputs",), ("weights", "inputs"), ALL]
EXTENTS = [1, 2, 3, 4, 6, 8, 12, 16]


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


# ---- strategies ----------------------------------------------------------------------------
@st.composite
def arches(draw) -> Arch:
    """DRAM + 1..3 on-chip levels (outermost first); fan-outs of 1..3 x 1..2 between levels."""
    inner = draw(st.integers(1, 3))
    levels = [
        StorageLevel(
            name="DRAM", component="dram", block_words=draw(st.sampled_from([1, 2, 4])), keeps=ALL
        )
    ]
    mx, my = 1, 1
    for i in range(inner):
        mx *= draw(st.integers(1, 3))
        my *= draw(st.integers(1, 2))
        levels.append(
            StorageLevel(
                name=f"L{inner - i}",
                component=draw(st.sampled_from(["sram", "regfile"])),
                capacity_bits=8 * draw(st.sampled_from([16, 64, 256, 1024])),
                block_words=draw(st.sampled_from([1, 2])),
                keeps=draw(st.sampled_from(KEEP_SETS)),
                mesh_x=mx,
                mesh_y=my,
            )
        )
    compute = ComputeLevel(
        name="MAC", mesh_x=mx * draw(st.integers(1, 3)), mesh_y=my * draw(st.integers(1, 2))
    )
    return Arch(name="prop", levels=tuple(levels), compute=compute)


@st.composite
def layers(draw) -> Layer:
    return Layer(
        N=draw(st.sampled_from([1, 2])),
        G=draw(st.sampled_from([1, 2])),
        K=draw(st.sampled_from(EXTENTS)),
        C=draw(st.sampled_from(EXTENTS)),
        P=draw(st.sampled_from(EXTENTS)),
        Q=draw(st.sampled_from([1, 2, 3, 4])),
        R=draw(st.integers(1, 3)),
        S=draw(st.integers(1, 3)),
        wstride=draw(st.integers(1, 2)),
        hstride=draw(st.integers(1, 2)),
        wdilation=draw(st.integers(1, 2)),
        hdilation=draw(st.integers(1, 2)),
    )


def draw_mapping(draw, layer: Layer, arch: Arch) -> tuple[np.ndarray, ...]:
    """One perfect factorisation as arrays [level, dim] (level 0 innermost)."""
    nl = len(arch.levels)
    t = np.ones((nl, NUM_DIMS), dtype=np.int32)
    sx, sy = np.ones_like(t), np.ones_like(t)
    rank = np.zeros((nl, NUM_DIMS), dtype=np.int8)
    remaining = list(layer.dims)
    for li, (fx, fy) in enumerate(arch.fanouts):
        for arr, limit in ((sx, fx), (sy, fy)):
            if limit == 1:
                continue
            order = draw(st.permutations(range(NUM_DIMS)))
            for d in order[: draw(st.integers(0, 2))]:
                f = draw(st.sampled_from([f for f in divisors(remaining[d]) if f <= limit]))
                arr[li, d] = f
                remaining[d] //= f
                limit //= f
    for d in range(NUM_DIMS):
        for li in range(nl - 1):
            f = draw(st.sampled_from(divisors(remaining[d])))
            t[li, d] = f
            remaining[d] //= f
        t[nl - 1, d] = remaining[d]
    for li in range(nl):
        rank[li] = draw(st.permutations(range(NUM_DIMS)))
    return t, sx, sy, rank


def make_batch(mappings: list[tuple[np.ndarray, ...]], keep: np.ndarray) -> MappingBatch:
    t, sx, sy, rank = (np.stack(parts, axis=-1) for parts in zip(*mappings, strict=True))
    return MappingBatch(t, sx, sy, rank, keep)


@st.composite
def keeps(draw, arch: Arch) -> np.ndarray:
    """The levels' own keep sets, or (half the time) a mapping's override of the on-chip ones."""
    keep = default_keep(arch)
    if draw(st.booleans()):
        for li in range(len(arch.levels) - 1):  # DRAM (last) keeps everything
            keep[li] = draw(st.lists(st.booleans(), min_size=3, max_size=3))
    return keep


@st.composite
def cases(draw, max_batch: int = 5) -> tuple[Layer, Arch, MappingBatch]:
    arch = draw(arches())
    layer = draw(layers())
    n = draw(st.integers(1, max_batch))
    mappings = [draw_mapping(draw, layer, arch) for _ in range(n)]
    return layer, arch, make_batch(mappings, draw(keeps(arch)))


def used_inputs(layer: Layer) -> int:
    """Input words the layer actually touches: distinct w = s*p + d*r (and h likewise).

    Equals ``layer.operand_size(I)`` unless the windows leave gaps (stride larger than the
    dilated kernel), where the bounding box counts words no MAC ever reads.
    """
    w = {layer.wstride * p + layer.wdilation * r for p in range(layer.P) for r in range(layer.R)}
    h = {layer.hstride * q + layer.hdilation * s for q in range(layer.Q) for s in range(layer.S)}
    return layer.N * layer.G * layer.C * len(w) * len(h)


def min_words(layer: Layer, op: Operand) -> int:
    return used_inputs(layer) if op is Operand.I else layer.operand_size(op)


# ---- a. algorithmic minimum traffic ------------------------------------------------------------
def check_minimum_traffic(layer: Layer, arch: Arch, batch: MappingBatch) -> None:
    counts = analyze(layer, arch, batch)
    inst = counts.instances  # [level, batch]
    for op in Operand:
        size = min_words(layer, op)
        keepers = [li for li in range(len(arch.levels)) if batch.keep[li, op]]
        assert keepers[-1] == len(arch.levels) - 1  # DRAM keeps everything
        for li in keepers:
            name = f"{arch.inner_first[li].name}/{OPERANDS[op]}"
            if op is Operand.O:
                # every output reaches every level that keeps outputs at least once
                assert (counts.updates[li, op] * inst[li] >= size).all(), name
            else:
                # every word leaves every keeper towards the MACs at least once
                assert (counts.reads[li, op] * inst[li] >= size).all(), name
                if li != keepers[-1]:
                    assert (counts.fills[li, op] * inst[li] >= size).all(), name
            if li == keepers[-1]:
                assert (counts.fills[li, op] == 0).all(), name  # nothing above DRAM


@SETTINGS
@given(cases())
def test_every_keeper_moves_at_least_the_operand(case) -> None:
    check_minimum_traffic(*case)


def sampled(layer: Layer, arch: Arch, n: int, seed: int) -> MappingBatch:
    """``n`` mappings from magnet's capacity-aware sampler (no rules beyond the hardware)."""
    try:
        space = Space(layer, arch, Dataflow(name="free"))
    except DesignInfeasible:
        assume(False)  # the smallest tiles do not fit this random architecture
    return sample(space, n, np.random.default_rng(seed))


@settings(max_examples=30, deadline=None)
@given(layers(), arches(), st.integers(0, 2**16))
def test_minimum_traffic_on_sampled_mappings(layer: Layer, arch: Arch, seed: int) -> None:
    check_minimum_traffic(layer, arch, sampled(layer, arch, 16, seed))


@settings(max_examples=30, deadline=None)
@given(layers(), arches(), st.integers(0, 2**16))
def test_the_sampler_covers_the_layer_and_fits_the_hardware(layer, arch, seed) -> None:
    batch = sampled(layer, arch, 64, seed)
    space = Space(layer, arch, Dataflow(name="free"))
    assert space.structure_ok(batch).all()
    total = (batch.factors_t * batch.spatial_x * batch.spatial_y).prod(axis=0)
    assert (total >= np.array(layer.dims)[:, None]).all()


def test_gapped_window_reads_fewer_inputs_than_the_bounding_box() -> None:
    # P=4, R=1, wstride=2: the MACs read inputs 0, 2, 4, 6 -> 4 words, but the bounding box
    # (operand_size) is 2 x 3 + 1 = 7. One word per RF tile, P4 above it: 4 fills, 4 DRAM reads.
    layer = Layer(P=4, wstride=2)
    assert layer.operand_size(Operand.I) == 7
    assert used_inputs(layer) == 4
    a = Arch(
        name="t",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(name="RF", component="regfile", capacity_bits=64, keeps=ALL),
        ),
        compute=ComputeLevel(name="MAC"),
    )
    m = Mapping(levels=(LevelMapping(target="DRAM", temporal={"P": 4}),))
    r = evaluate_mapping(layer, a, price_arch(a), m)
    assert r.accesses["DRAM"]["inputs"]["reads"] == 4
    assert r.accesses["RF"]["inputs"]["fills"] == 4


# ---- b. MAC count ---------------------------------------------------------------------------
@SETTINGS
@given(cases())
def test_mac_count_is_the_layers(case) -> None:
    layer, arch, batch = case
    costs = price_arch(arch)
    res = evaluate_batch(layer, arch, batch, costs)
    c = res.counts
    assert c.macs == layer.macs == math.prod(layer.dims)
    np.testing.assert_array_equal(c.compute_cycles * c.mac_instances, layer.macs)
    np.testing.assert_array_equal(c.padded_macs, layer.macs)
    assert (c.mac_instances <= arch.mac_count).all()
    np.testing.assert_allclose(res.utilization, layer.macs / (res.latency_cycles * arch.mac_count))
    assert ((res.utilization > 0) & (res.utilization <= 1)).all()
    # no adder trees here: every MAC. Fine clock gating (the default): each MAC's input
    # register loads once a MAC, and the gating cell of each MAC in use ticks every cycle
    np.testing.assert_allclose(res.math_pj, layer.macs * costs.mac_pj)
    assert arch.clock_gating == "fine"
    ticks = c.mac_instances * res.latency_cycles * costs.gate_clock_pj_per_cycle
    np.testing.assert_allclose(res.mac_clock_pj, layer.macs * costs.mac_clock_pj_per_cycle + ticks)
    # without gating: every MAC every cycle of the run
    ungated = arch.model_copy(update={"clock_gating": "none"})
    none = evaluate_batch(layer, ungated, batch, price_arch(ungated))
    np.testing.assert_allclose(
        none.mac_clock_pj, arch.mac_count * res.latency_cycles * costs.mac_clock_pj_per_cycle
    )
    for i in np.flatnonzero(res.valid)[:2]:
        r = evaluate_mapping(layer, arch, costs, batch.mapping(int(i), arch))
        assert r.macs == layer.macs
        assert r.compute_cycles * c.mac_instances[i] == layer.macs


@SETTINGS
@given(cases(max_batch=1), st.data())
def test_padded_factors_cost_cycles_not_macs(case, data) -> None:
    # Raise one temporal factor by one: the loop nest is padded; cycles count the padded
    # iterations, the MAC count stays the layer's.
    layer, arch, batch = case
    li = data.draw(st.integers(0, len(arch.levels) - 1))
    d = data.draw(st.integers(0, NUM_DIMS - 1))
    batch.factors_t[li, d, 0] += 1
    padded = math.prod(
        int((batch.factors_t * batch.spatial_x * batch.spatial_y)[:, k, 0].prod())
        for k in range(NUM_DIMS)
    )
    assert padded > layer.macs
    res = evaluate_batch(layer, arch, batch, price_arch(arch))
    c = res.counts
    assert c.macs == layer.macs
    assert c.padded_macs[0] == padded
    assert c.compute_cycles[0] * c.mac_instances[0] == padded
    assert res.utilization[0] <= layer.macs / padded + 1e-12
    # Padding scales counts by real / padded operand size. Without gaps in the input windows
    # (stride and dilation 1) that keeps every count above the minimum; with gaps it does not
    # (see test_padded_strided_input_is_read_at_least_once).
    if (layer.wstride, layer.hstride, layer.wdilation, layer.hdilation) == (1, 1, 1, 1):
        check_minimum_traffic(layer, arch, batch)


def test_padded_strided_input_is_read_at_least_once() -> None:
    # Formerly a bug. 1x1 conv, P=3, wstride=2 (a ResNet down-sampling shape): the MACs read
    # inputs 0, 2, 4. Perfect factor P3 above a one-word RF: 3 fills, 3 DRAM reads. As P4
    # (one padded step): still 3 real words, each read at least once -> DRAM reads >= 3.
    # (A real / padded bounding-box scaling alone gives 4 x 5 / 7 = 2.857.)
    layer = Layer(P=3, wstride=2)
    a = Arch(
        name="t",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(name="RF", component="regfile", capacity_bits=64, keeps=ALL),
        ),
        compute=ComputeLevel(name="MAC"),
    )
    costs = price_arch(a)

    def dram_input_reads(p: int) -> float:
        m = Mapping(levels=(LevelMapping(target="DRAM", temporal={"P": p}),))
        return evaluate_mapping(layer, a, costs, m).accesses["DRAM"]["inputs"]["reads"]

    assert dram_input_reads(3) == 3
    assert dram_input_reads(4) >= 3


# ---- c. loop order of irrelevant loops -----------------------------------------------------
def test_swapping_irrelevant_loops_across_a_relevant_one_changes_counts() -> None:
    # Why property c only permutes irrelevant loops between the same relevant loops: N and P do
    # not index weights, yet P4 / K2 / N2 and N2 / K2 / P4 (outermost first, K fixed in the
    # middle) differ. RF holds one weight. P4,K2,N2: N2 innermost keeps the weight, K2 changes
    # it, P4 repeats that -> 1 x 2 x 4 = 8 fills. N2,K2,P4: P4 keeps it -> 1 x 2 x 2 = 4 fills.
    layer = Layer(N=2, K=2, P=4)
    a = Arch(
        name="t",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(name="RF", component="regfile", capacity_bits=24, keeps=ALL),
        ),
        compute=ComputeLevel(name="MAC"),
    )
    costs = price_arch(a)

    def weight_fills(order: dict[str, int]) -> float:
        m = Mapping(levels=(LevelMapping(target="DRAM", temporal=order),))
        return evaluate_mapping(layer, a, costs, m).accesses["RF"]["weights"]["fills"]

    assert weight_fills({"P": 4, "K": 2, "N": 2}) == 8
    assert weight_fills({"N": 2, "K": 2, "P": 4}) == 4
    assert weight_fills({"K": 2, "N": 2, "P": 4}) == 2  # N, P both inside K: each weight once
    assert weight_fills({"K": 2, "P": 4, "N": 2}) == 2


def permute_irrelevant(draw, rank: np.ndarray, t: np.ndarray, op: Operand) -> np.ndarray:
    """New ranks for one level: loops that do not index ``op`` are shuffled among their own
    positions, within each run of positions not separated by an active loop that does."""
    relevant = {int(d) for d in RELEVANT[op]}
    order = [int(d) for d in np.argsort(rank)]  # dims, innermost first
    new = rank.copy()
    run: list[int] = []
    for d in [*order, None]:
        if d is None or d in relevant:
            if d is None or t[d] > 1:  # an active relevant loop closes the run
                positions = [int(rank[x]) for x in run]
                for x, p in zip(draw(st.permutations(run)), positions, strict=True):
                    new[x] = p
                run = []
            continue
        run.append(d)
    return new


@SETTINGS
@given(cases(max_batch=1), st.data())
def test_order_of_loops_that_do_not_index_an_operand_leaves_it_unchanged(case, data) -> None:
    layer, arch, batch = case
    op = data.draw(st.sampled_from(list(Operand)))
    li = data.draw(st.integers(0, len(arch.levels) - 1))
    before = analyze(layer, arch, batch)
    shuffled = MappingBatch(
        batch.factors_t,
        batch.spatial_x,
        batch.spatial_y,
        batch.rank.copy(),
        batch.keep,
    )
    shuffled.rank[li, :, 0] = permute_irrelevant(
        data.draw, batch.rank[li, :, 0], batch.factors_t[li, :, 0], op
    )
    after = analyze(layer, arch, shuffled)
    for name in ("reads", "fills", "updates", "tile_words"):
        np.testing.assert_array_equal(
            getattr(after, name)[:, op], getattr(before, name)[:, op], err_msg=name
        )
    np.testing.assert_array_equal(after.compute_cycles, before.compute_cycles)


# ---- d. batch == one by one ------------------------------------------------------------------
@SETTINGS
@given(cases(max_batch=6))
def test_batch_evaluation_equals_one_by_one(case) -> None:
    layer, arch, batch = case
    costs = price_arch(arch)
    res = evaluate_batch(layer, arch, batch, costs)
    for i in range(batch.size):
        one = evaluate_batch(layer, arch, batch.take([i]), costs)
        for name in ("reads", "fills", "updates", "tile_words", "overflow_bits", "instances"):
            np.testing.assert_array_equal(
                getattr(one.counts, name)[..., 0], getattr(res.counts, name)[..., i], name
            )
        assert one.valid[0] == res.valid[i]
        assert one.latency_cycles[0] == res.latency_cycles[i]
        assert one.bottleneck[0] == res.bottleneck[i]
        # Exact up to the order of a floating-point sum (see test_batch_energy_is_bitwise_*).
        assert one.energy_pj[0] == pytest.approx(res.energy_pj[i], rel=1e-12)
        np.testing.assert_allclose(
            one.level_energy_pj[:, 0], res.level_energy_pj[:, i], rtol=1e-12, atol=0
        )

        m = batch.mapping(i, arch)
        if not res.valid[i]:
            with pytest.raises(InvalidMappingError, match="over by"):
                evaluate_mapping(layer, arch, costs, m)
            continue
        r = evaluate_mapping(layer, arch, costs, m)
        assert r.latency_cycles == res.latency_cycles[i]
        assert r.energy_pj == pytest.approx(res.energy_pj[i], rel=1e-12)
        for li, lvl in enumerate(arch.inner_first):
            for o, ops in enumerate(OPERANDS):
                if batch.keep[li, o]:
                    got = r.accesses[lvl.name][ops]
                    want = [getattr(res.counts, a)[li, o, i] for a in ("reads", "fills", "updates")]
                    assert [got["reads"], got["fills"], got["updates"]] == want


def test_batch_energy_is_bitwise_equal_to_single_evaluation() -> None:
    # Formerly a bug. The counts and cycles of a mapping are bit-identical whichever batch it
    # is evaluated in; the energy must be too, or the mapper's best mapping and `magnet
    # evaluate` of it disagree.
    layer, arch, batch = _rounding_case()
    costs = price_arch(arch)
    res = evaluate_batch(layer, arch, batch, costs)
    mismatched = [
        i
        for i in range(batch.size)
        if evaluate_batch(layer, arch, batch.take([i]), costs).energy_pj[0] != res.energy_pj[i]
    ]
    assert mismatched == []


@pytest.mark.parametrize("columns", [1, 2, 3, 384])
def test_rows_are_summed_one_after_another_whatever_the_batch(columns: int) -> None:
    # The evaluator's totals add a batch's rows in one order (level after level), whatever the
    # batch's width: numpy's reduction of a single column adds it pairwise, of several row by
    # row. Values of 17 decades apart make any other order differ in the last bits.
    rng = np.random.default_rng(columns)
    x = rng.random((7, 3, 3, columns)) * 10.0 ** rng.integers(-5, 12, (7, 3, 3, columns))
    rows = x.reshape(-1, columns)
    want = rows[0].copy()
    for row in rows[1:]:
        want += row
    assert np.array_equal(_sum_rows(x), want)
    assert not np.array_equal(np.add.accumulate(rows[::-1], axis=0)[-1], want)  # the data tells


def _rounding_case() -> tuple[Layer, Arch, MappingBatch]:
    arch = Arch(
        name="t",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(name="GLB", capacity_bits=8 * 4096, keeps=("inputs", "outputs")),
            StorageLevel(name="RF", component="regfile", capacity_bits=8 * 64, mesh_x=4, mesh_y=2),
        ),
        compute=ComputeLevel(name="MAC", mesh_x=8, mesh_y=2),
    )
    layer = Layer(N=2, K=6, C=4, P=8, Q=3, R=3, S=2, wstride=2, hdilation=2)
    return (
        layer,
        arch,
        sample(Space(layer, arch, Dataflow(name="free")), 64, np.random.default_rng(1)),
    )


# ---- e. YAML round trip ----------------------------------------------------------------------
def active_order(rank: np.ndarray, t: np.ndarray) -> list[int]:
    """Dims with a temporal factor > 1, innermost first (the order that has a meaning)."""
    return [int(d) for d in np.argsort(rank, kind="stable") if t[d] > 1]


@SETTINGS
@given(cases(max_batch=3))
def test_yaml_round_trip_of_batch_mappings(case) -> None:
    layer, arch, batch = case
    for i in range(batch.size):
        m = batch.mapping(i, arch)
        back = Mapping.from_data(yaml.safe_load(m.to_yaml()))
        assert back == m
        for a, b in zip(back.levels, m.levels, strict=True):
            assert list(a.temporal.items()) == list(b.temporal.items())  # order, too
        one = to_batch(m, arch)
        for name in ("factors_t", "spatial_x", "spatial_y"):
            np.testing.assert_array_equal(getattr(one, name)[..., 0], getattr(batch, name)[..., i])
        np.testing.assert_array_equal(one.keep, batch.keep)
        for li in range(len(arch.levels)):
            t = batch.factors_t[li, :, i]
            assert active_order(one.rank[li, :, 0], t) == active_order(batch.rank[li, :, i], t)
        # Ranks of factor-1 loops are not written to YAML; a second trip is a fixed point.
        again = to_batch(one.mapping(0, arch), arch)
        np.testing.assert_array_equal(again.rank, one.rank)
        assert one.mapping(0, arch) == m
        want = analyze(layer, arch, batch.take([i]))
        got = analyze(layer, arch, one)
        for name in ("reads", "fills", "updates"):
            np.testing.assert_array_equal(getattr(got, name), getattr(want, name))


@st.composite
def level_mappings(draw, target: str) -> LevelMapping:
    def factors() -> dict[str, int]:
        dims = draw(st.lists(st.sampled_from(DIMS), unique=True, max_size=4))
        return {d: draw(st.integers(2, 64)) for d in dims}

    keep = draw(st.none() | st.lists(st.sampled_from(ALL), unique=True).map(tuple))
    return LevelMapping(
        target=target, temporal=factors(), spatial_x=factors(), spatial_y=factors(), keep=keep
    )


@SETTINGS
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(*(level_mappings(f"L{i}") for i in range(n)))))
def test_yaml_round_trip_of_written_mappings(levels) -> None:
    m = Mapping(levels=levels)
    text = m.to_yaml()
    back = Mapping.from_data(yaml.safe_load(text))
    assert back == m
    for a, b in zip(back.levels, m.levels, strict=True):
        for key in ("temporal", "spatial_x", "spatial_y"):
            assert list(getattr(a, key).items()) == list(getattr(b, key).items())
    # The string form of the loops reads the same as the dict form.
    for lvl in m.levels:
        if lvl.temporal:
            text_form = " ".join(f"{d}{f}" for d, f in lvl.temporal.items())
            parsed = LevelMapping(target=lvl.target, temporal=text_form)
            assert list(parsed.temporal.items()) == list(lvl.temporal.items())


def test_timeloop_dimension_name_m_is_written_back_as_k() -> None:
    # M is Timeloop's name for K; the YAML written back uses magnet's K.
    m = Mapping.from_data({"mapping": [{"target": "DRAM", "temporal": "M4 P2"}]})
    assert list(m.levels[0].temporal.items()) == [("K", 4), ("P", 2)]
    assert yaml.safe_load(m.to_yaml()) == {
        "mapping": [{"target": "DRAM", "temporal": {"K": 4, "P": 2}}]
    }
