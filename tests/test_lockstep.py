"""Searches in lock step (``magnet.mapper.lockstep``): the batches of several layers priced in
one call give each layer's own results to the bit, and a network's shapes searched together
find what each finds alone."""

from __future__ import annotations

import copy
import dataclasses
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

import magnet as mg
from magnet.cli import main
from magnet.design import Design, build_design
from magnet.errors import PluginError
from magnet.mapper import MapOutcome, get_mapper, lockstep
from magnet.mapper.lockstep import clock, price, run_together
from magnet.mapper.mapper import Tracker, unregister_mapper
from magnet.mapper.mappers import FastMapper
from magnet.mapper.mapspace import Space
from magnet.mapper.sampler import sample
from magnet.mapper.warm import WarmStore
from magnet.mapper.whole_network import (
    _map_shape,
    holding_design,
    lean_design,
    map_network,
    mapper_identity,
)
from magnet.model.evaluate import evaluate_batch, evaluate_batches, layer_view, stack_key
from magnet.templates import simba
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer
from magnet.workload.network import Network, NetworkLayer


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    """The fields of two results (dataclasses of arrays) that are not identical."""
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if dataclasses.is_dataclass(x):
            out += _differences(x, y, f"{path}{f.name}.")
        elif isinstance(x, np.ndarray):
            same = x.shape == y.shape and x.dtype == y.dtype
            if not (same and np.array_equal(x, y, equal_nan=True)):
                out.append(path + f.name)
        elif type(x) is not type(y) or x != y:
            out.append(path + f.name)
    return out


def _designs() -> list[Design]:
    """A chip with both collectors, and a package of 4 chiplets (chip-to-chip fan-outs,
    whose halo shares the counts price per layer)."""
    chip = simba("t", weight_collector=2, accum_collector=4)
    return [
        build_design(chip, "ws-local-os"),
        build_design(mg.load_arch("simba-package-4"), "os-local-ws"),
    ]


@pytest.mark.parametrize("design", _designs(), ids=["chip", "package"])
def test_a_stack_of_layers_prices_each_mapping_as_its_layer_alone(design: Design) -> None:
    # ResNet-50's, MobileNet's and ViT's shapes: 1x1 and 3x3, strided 3x3 and 7x7,
    # depthwise, FC, matmul, and ViT's 16x16 patches of stride 16 (windows that slide, not
    # overlapping)
    layers = [
        layer
        for net in ("resnet50", "mobilenetv2", "vit-b16")
        for layer, _, _ in mg.load_workload(net).unique_layers(mapped=True)
    ] + [Layer(name="patches", K=32, C=16, P=7, Q=7, R=2, S=2, wstride=2, hstride=2)]
    rng = np.random.default_rng(0)
    stacks: dict[tuple[bool, bool] | None, list[tuple[Layer, Any]]] = {}
    for layer in layers:
        view = layer_view(layer, design.arch)
        space = Space(view, design.arch, design.dataflow)
        stacks.setdefault(stack_key(view, design.arch), []).append((view, sample(space, 40, rng)))
    assert None not in stacks  # every dense layer can be stacked
    assert len(stacks) >= 3 and min(len(s) for s in stacks.values()) >= 2
    compared = 0
    for members in stacks.values():
        views = [v for v, _ in members]
        batches = [b for _, b in members]
        for on_chip in ((), (Operand.W,), (Operand.I, Operand.O)):
            together = evaluate_batches(views, design.arch, batches, design.costs, on_chip=on_chip)
            for view, batch, got in zip(views, batches, together, strict=True):
                alone = evaluate_batch(view, design.arch, batch, design.costs, on_chip=on_chip)
                assert _differences(alone, got) == [], view.name
                compared += batch.size
    assert compared == 3 * 40 * len(layers)


def test_layers_that_count_apart_are_not_stacked() -> None:
    arch = simba("t")
    plain, strided = Layer(K=8, C=8, P=4, Q=4), Layer(K=8, C=8, P=4, Q=4, R=3, S=3)
    wide = Layer(K=8, C=8, P=4, Q=4, R=3, S=3, wstride=3, hstride=3)  # windows meet, no overlap
    assert stack_key(plain, arch) == (False, False)
    assert stack_key(strided, arch) == (True, True)
    assert stack_key(wide, arch) == (True, False)
    sparse = plain.model_copy(update={"densities": Layer(densities={"inputs": 0.3}).densities})
    assert stack_key(sparse, arch) is None
    assert stack_key(plain, arch.model_copy(update={"layer_view": "gemm"})) is None


def _asking(design: Design, layer: Layer, times: int, log: list[str], name: str) -> Any:
    """A job pricing ``times`` small batches of ``layer``, logging its turns and its end."""
    space = Space(layer, design.arch, design.dataflow)
    batch = sample(space, 8, np.random.default_rng(1))

    def job() -> float:
        try:
            total = 0.0
            for _ in range(times):
                log.append(name)
                total += float(price(layer, design.arch, batch, design.costs).energy_pj.sum())
            return total
        finally:
            log.append(f"{name} ended")

    return job


def _stacks_counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The layers of each call lock step makes to ``evaluate_batches`` (the real one), as
    the calls come."""
    calls: list[int] = []
    real = lockstep.evaluate_batches

    def counted(layers: list[Layer], *args: Any, **kwargs: Any) -> Any:
        calls.append(len(layers))
        return real(layers, *args, **kwargs)

    monkeypatch.setattr(lockstep, "evaluate_batches", counted)
    return calls


def test_jobs_take_turns_and_their_batches_are_priced_together(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    design = build_design(simba("t"), "ws")
    a, b = Layer(K=16, C=8, P=4, Q=4), Layer(K=8, C=16, P=8, Q=8)
    calls = _stacks_counted(monkeypatch)
    log: list[str] = []
    jobs = [_asking(design, a, 2, log, "a"), _asking(design, b, 3, log, "b")]
    values = run_together(jobs)
    # in turns, in order: both ask, both are answered in one call, ... ; a ends first
    assert log == ["a", "b", "a", "b", "a ended", "b", "b ended"]
    assert calls == [2, 2, 1]
    alone = [job() for job in [_asking(design, a, 2, [], "a"), _asking(design, b, 3, [], "b")]]
    assert values == alone  # outside a job, price is evaluate_batch


def _jobs_a_b_c(*times: int) -> tuple[list[Any], list[str]]:
    """Jobs a, b and c, pricing ``times`` batches each, and the log they share."""
    design = build_design(simba("t"), "ws")
    layer = Layer(K=16, C=8, P=4, Q=4)
    log: list[str] = []
    return [_asking(design, layer, n, log, name) for n, name in zip(times, "abc", strict=True)], log


def test_no_more_jobs_run_at_once_than_its_width() -> None:
    jobs, log = _jobs_a_b_c(2, 1, 1)
    values = run_together(jobs, width=2)
    # c starts once b has ended
    assert log == ["a", "b", "a", "b ended", "c", "a ended", "c ended"]
    assert values == [job() for job in jobs]  # each as alone


def test_an_error_in_one_job_ends_the_others_and_is_raised() -> None:
    design = build_design(simba("t"), "ws")
    layer = Layer(K=16, C=8, P=4, Q=4)
    log: list[str] = []
    asking = _asking(design, layer, 5, log, "a")

    def failing() -> None:
        price(
            layer,
            design.arch,
            sample(Space(layer, design.arch, design.dataflow), 4, np.random.default_rng(2)),
            design.costs,
        )
        raise KeyError("in a plug-in")

    with pytest.raises(KeyError, match="in a plug-in"):
        run_together([asking, failing])
    assert log == ["a", "a", "a ended"]  # suspended where it asked, its cleanup run


def test_the_error_raised_is_the_jobs_not_what_the_others_make_of_their_end() -> None:
    design = build_design(simba("t"), "ws")
    layer = Layer(K=16, C=8, P=4, Q=4)
    batch = sample(Space(layer, design.arch, design.dataflow), 4, np.random.default_rng(2))

    def converting() -> None:  # takes its end (GreenletExit) for an error of its own
        try:
            for _ in range(3):
                price(layer, design.arch, batch, design.costs)
        except BaseException as exc:
            raise RuntimeError("ended") from exc

    def failing() -> None:
        price(layer, design.arch, batch, design.costs)
        price(layer, design.arch, batch, design.costs)
        raise KeyError("in a plug-in")

    with pytest.raises(KeyError, match="in a plug-in"):
        run_together([failing, converting, failing])


class _Picky(FastMapper):
    """A plug-in mapper that prices a batch, then refuses K=256."""

    name = "test-picky"

    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        tracker.price(sample(space, 50, rng))
        if space.layer.K == 256:
            raise ValueError("not K=256")
        super().search(space, tracker, rng)


def test_a_plugin_mappers_searches_run_one_after_another() -> None:
    # its code runs inside plugin_code (stdout redirected for the call): two calls taking
    # turns would restore stdout out of order; its error names its layer
    mg.register_mapper(_Picky)
    try:
        network = mg.load_workload("resnet18")
        stdout = sys.stdout
        with pytest.raises(
            PluginError, match=r"raised ValueError: not K=256 while mapping layer 'layer3"
        ):
            map_network(network, build_design(simba("t")), "test-picky", warm=WarmStore())
        assert sys.stdout is stdout
    finally:
        unregister_mapper("test-picky")


def test_done_ends_the_jobs_after_it_as_if_they_had_not_started() -> None:
    jobs, log = _jobs_a_b_c(3, 1, 3)
    values = run_together(jobs, done=lambda i, _value: i == 1)
    assert values[0] is not None and values[1] is not None and values[2] is None
    # all three ask; answered, a asks again, b ends and c ends where it waited; a goes on
    assert log == ["a", "b", "c", "a", "b ended", "c ended", "a", "a ended"]


def test_a_jobs_clock_runs_only_while_it_runs() -> None:
    design = build_design(simba("t"), "ws")
    layer = Layer(K=16, C=8, P=4, Q=4)
    space = Space(layer, design.arch, design.dataflow)
    batch = sample(space, 8, np.random.default_rng(3))

    def busy() -> float:
        price(layer, design.arch, batch, design.costs)
        end = time.perf_counter() + 0.3
        while time.perf_counter() < end:  # another job's 0.3 s
            pass
        price(layer, design.arch, batch, design.costs)
        return 0.0

    def quick() -> float:
        start = clock()
        for _ in range(3):
            price(layer, design.arch, batch, design.costs)
        return clock() - start

    wall = time.perf_counter()
    _, seconds = run_together([busy, quick])
    assert time.perf_counter() - wall >= 0.3
    assert seconds is not None and seconds < 0.15  # a few small batches, not busy's 0.3 s


def _part_of_resnet18() -> Network:
    """Six of ResNet-18's shapes: the 7x7 stem, 3x3 strided or not, a strided 1x1."""
    shapes = mg.load_workload("resnet18").unique_layers(mapped=True)[:6]
    return Network(name="part", layers=tuple(NetworkLayer(layer=la) for la, _, _ in shapes))


def test_a_network_searched_in_lock_step_finds_what_each_shape_finds_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a neighbouring design fills the store first: the searches then start warm, in lock step
    network = _part_of_resnet18()
    mapper = get_mapper("fast", seed=4, samples=500, rounds=6)  # a shorter search afresh
    store = WarmStore()
    map_network(
        network, build_design(simba("t", weight_collector=4, accum_collector=2)), mapper, warm=store
    )
    design = build_design(simba("t", weight_collector=2, accum_collector=4))
    before = copy.deepcopy(store)
    stacked = _stacks_counted(monkeypatch)
    start = time.perf_counter()
    together = map_network(network, design, mapper, warm=store)
    wall = time.perf_counter() - start
    monkeypatch.undo()
    assert max(stacked) >= 4  # the shapes' batches priced together
    held, lean = holding_design(design), lean_design(design, network)
    who = f"{mapper_identity(mapper)}|lean {lean is not None}"
    starts = []
    shapes = network.unique_layers(mapped=True)
    for layer, _, _ in shapes:
        alone = _map_shape(mapper, layer, design, held, lean, before, who)
        got = together.outcomes[layer.shape_key()]
        for kind in ("result", "holding", "lean"):
            mine, theirs = getattr(got, kind), getattr(alone, kind)
            assert (mine is None) == (theirs is None), (layer.name, kind)
            if mine is not None:
                assert mine.mapping == theirs.mapping, (layer.name, kind)
                assert mine.energy_pj == theirs.energy_pj
                starts.append(mine.start)
        assert got.mappings_evaluated == alone.mappings_evaluated
    assert starts.count("warm") >= len(shapes)  # started from the neighbour's mappings
    # each shape's seconds are its own: together no more than the whole took
    assert sum(o.seconds for o in together.outcomes.values()) <= wall


@pytest.mark.parametrize("store", [None, WarmStore()], ids=["no store", "an empty store"])
def test_a_network_mapped_afresh_maps_its_shapes_one_after_another(
    store: WarmStore | None,
) -> None:
    network = _part_of_resnet18()
    design = build_design(simba("t"))
    names: list[str] = []
    mapper = get_mapper("fast", samples=500, rounds=6)

    def progress(outcome: MapOutcome, _done: int, _total: int) -> None:
        names.append(outcome.layer.name)

    map_network(network, design, mapper, progress=progress, warm=store)
    assert names == [layer.name for layer, _, _ in network.unique_layers(mapped=True)]


def test_magnet_evaluate_prints_a_networks_layers_in_order_as_each_ends(tmp_path: Path) -> None:
    # what the user reads: the progress lines `magnet evaluate` prints, one per shape, in the
    # network's order (in lock step they all came at the end, in the order they ended)
    fields = ("K", "C", "P", "Q", "R", "S", "wstride", "hstride")
    shapes = _part_of_resnet18().unique_layers(mapped=True)
    layers = [{"name": la.name, **{f: getattr(la, f) for f in fields}} for la, _, _ in shapes]
    net = tmp_path / "part.yaml"
    net.write_text(yaml.safe_dump({"name": "part", "layers": layers}))
    args = ["evaluate", "--arch", "simba-chip", "--workload", str(net), "--samples", "500"]
    out = CliRunner().invoke(main, args)
    assert out.exit_code == 0, out.output
    printed = re.findall(r"^\[(\d+)/6\] (\S+)", out.output, flags=re.M)
    assert printed == [(str(i + 1), la.name) for i, (la, _, _) in enumerate(shapes)]
