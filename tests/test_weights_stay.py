"""Weights that stay on chip across a stream of batches (``magnet.model.network_result``)."""

from __future__ import annotations

import pytest

import magnet as mg
from magnet.api import design as build
from magnet.mapper.whole_network import holding_design
from magnet.workload.layer import Layer
from magnet.workload.network import Network

# two 3x3 convs of 32 channels on 14 x 14: 9,216 weight bytes each (32 x 32 x 3 x 3)
A = Layer(name="a", K=32, C=32, P=14, Q=14, R=3, S=3)
B = Layer(name="b", K=32, C=32, P=14, Q=14, R=3, S=3)


def _pair(**params: object) -> mg.NetworkResult:
    arch = mg.templates.simba(**params)
    return mg.evaluate(Network.of("pair", [A, B]), arch, dataflow="os-local-ws")


def test_weights_that_fit_are_read_once_per_stream() -> None:
    # simba-chip's weight buffers: 16 PEs x 32 KiB = 512 KiB hold both layers' 18,432
    # bytes; a batch in the steady state reads no weights from DRAM, the first batch reads
    # each layer's 9,216 bytes once
    result = _pair()
    record = result.record()
    assert [r.weights_at for r in record.layers] == ["WeightBuffer", "WeightBuffer"]
    assert [r.off_chip for r in record.layers] == [["inputs"], ["outputs"]]
    steady = sum(r.dram_bytes for r in result.runs)
    first = sum(r.dram_bytes for r in result.first_runs)
    assert first - steady == 2 * 9_216
    assert record.first_energy_pj > record.energy_pj
    assert record.first_latency_s >= record.latency_s
    assert record.weights_on_chip_bytes >= 2 * 9_216  # every copy counted


def test_weights_that_do_not_fit_are_read_every_batch() -> None:
    # 16 PEs x 640 bytes = 10,240 bytes of weight buffers, 80 bytes = 640 bits per vector
    # unit. Each layer's tile there is at least 9,216 / 128 = 72 weights = 576 bits, so the
    # region the running layer needs leaves at most 640 - 576 = 64 bits for the weights that
    # stay, less than the other layer's 576-bit tile: neither stays; both read their weights
    # from DRAM for every batch and the first batch is any batch
    result = _pair(weight_buffer=640)
    record = result.record()
    assert [r.weights_at for r in record.layers] == ["DRAM", "DRAM"]
    assert all("weights" in r.off_chip for r in record.layers)
    assert record.first_latency_s == record.latency_s
    assert record.first_energy_pj == record.energy_pj
    assert record.weights_on_chip_bytes == 0


def test_a_held_design_loops_over_no_weight_dimension_above_the_weight_buffer() -> None:
    # os-local-ws lets DRAM loop over G, N, P, Q, K and C and the global buffer over G, N,
    # P, Q; with the weights held (NVIDIA's simba-chip.cfg: DRAM and the global buffer over
    # P and Q only; magnet's PIXELS include the batch N), neither loops over a dimension
    # that indexes the weights (G, K, C, R, S)
    d = build(mg.templates.simba(), "os-local-ws")
    held = holding_design(d)
    assert held is not None
    rules = {r.level: r.temporal for r in held.dataflow.rules}
    assert rules["DRAM"] == rules["GlobalBuffer"] == ("N", "P", "Q")
    assert rules["InputBuffer"] == ()


def test_a_post_processing_row_has_no_weights() -> None:
    from magnet.workload.layer import postprocess

    relu = postprocess("r", kind="activation", op="relu", channels=32, height=14, width=14)
    result = mg.evaluate(Network.of("n", [A, relu]), mg.templates.simba(), dataflow="os-local-ws")
    rows = result.record().layers
    assert rows[0].weights_at == "WeightBuffer" and rows[1].weights_at is None


@pytest.mark.parametrize("preset", ["simba-package-4"])
def test_a_package_keeps_weights_in_every_chiplet(preset: str) -> None:
    # 4 chiplets x 512 KiB: the pair's weights stay, and no weight crosses the links in the
    # steady state (its NoP bytes are the first batch's less the weights' trips)
    result = mg.evaluate(Network.of("pair", [A, B]), mg.load_arch(preset), dataflow="os-local-ws")
    record = result.record()
    assert all(r.weights_at == "WeightBuffer" for r in record.layers)
    steady = sum(r.nop_bytes for r in result.runs)
    first = sum(r.nop_bytes for r in result.first_runs)
    assert first - steady >= 2 * 9_216  # every weight crossed at least one link


def test_the_network_table_says_what_stays_and_what_the_first_batch_costs() -> None:
    from magnet.report.text import network_table

    record = _pair().record()
    text = network_table(record)
    assert "weights      2 layer(s) keep theirs on chip across batches" in text
    assert f"first batch  {record.first_latency_s * 1e3:.3f} ms" in text
    assert "weights      " not in network_table(_pair(weight_buffer=640).record())


def test_a_plug_in_that_raises_in_a_further_search_is_named_with_that_search() -> None:
    # the searches for a layer's holding and lean mappings run the user's mapper too: an
    # exception there is the plug-in's, naming the layer and which search it was
    from magnet.errors import PluginError
    from magnet.mapper.mappers import FastMapper

    class SecondTime(FastMapper):
        name = "second-time"
        calls = 0

        def search(self, space, tracker, rng):  # type: ignore[no-untyped-def]
            SecondTime.calls += 1
            if SecondTime.calls > 1:
                raise RuntimeError("only once")
            return super().search(space, tracker, rng)

    # 1 KiB of weight buffer per PE: 1,024 bits per vector unit, where the layer's best tile
    # of at least 9,216 / 128 = 72 weights = 576 bits is more than the lean 1/8 (128 bits)
    net, arch = Network.of("one", [A]), mg.templates.simba(weight_buffer="1KiB")
    with pytest.raises(PluginError) as err:
        mg.evaluate(net, arch, dataflow="os-local-ws", mapper=SecondTime())
    message = str(err.value)
    assert "only once" in message and "layer 'a'" in message
    assert "(its search for a lean mapping: 0.125 of WeightBuffer)" in message


def test_lean_mappings_are_searched_only_where_the_weight_buffers_hold_a_64th_of_the_weights() -> (
    None
):
    # simba-chip's weight home holds capacity_bits x instances bits of 8-bit weights, so
    # 64 times that many weights are the most a network may have for its lean mappings to
    # be searched (LEAN_MIN = 1/64); a fully connected layer of exactly that many (K x C) is
    # at the limit, one more output row of weights is past it
    from magnet.mapper.whole_network import LEAN_MIN, lean_design, map_network
    from magnet.model.evaluate import weight_home
    from magnet.workload.dims import Operand

    d = build(mg.templates.simba(), "os-local-ws")
    level = d.arch.inner_first[weight_home(d.arch)]
    words = level.capacity_bits * level.instances // level.bits(Operand.W)
    limit = int(words / LEAN_MIN)
    assert limit == 64 * words
    c = 4096
    assert limit % c == 0
    at = Layer(name="fc", K=limit // c, C=c)
    past = Layer(name="fc", K=limit // c + 1, C=c)
    assert lean_design(d, Network.of("at", [at])) is not None
    assert lean_design(d, Network.of("past", [past])) is None
    # at the limit the layer's best mapping fills more than 1/8 of the weight buffers, so
    # its lean mapping is searched and found; one row past it, none is searched
    budget = mg.Budget(evaluations=2_000)
    found = map_network(Network.of("at", [at]), d, budget=budget)
    assert [o.lean is not None for o in found.outcomes.values()] == [True]
    found = map_network(Network.of("past", [past]), d, budget=budget)
    assert [o.lean is not None for o in found.outcomes.values()] == [False]
