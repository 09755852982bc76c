"""Zeros (issue 32): densities, formats, gating and skipping, priced as Sparseloop defines them
(Wu et al., MICRO 2022), against hand arithmetic, Sparseloop's reference stats and the
Sparseloop artifact's Eyeriss v2 PE ground truth (tests/data/reference/sparseloop/)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from pydantic import ValidationError

import magnet as mg
from magnet.arch.sparse import TensorSparsity
from magnet.cli import main
from magnet.interop.timeloop import load_timeloop
from magnet.interop.timeloop_writer import write_timeloop
from magnet.mapper.mapspace import Space
from magnet.model.sparse_counts import fiber_bits, stored_bits, without_each
from magnet.workload.dims import Operand
from magnet.workload.sparsity import Density
from tests.conftest import REPO

REF = REPO / "tests" / "data" / "reference" / "sparseloop"


def arch(buffer: dict | None = None, zeros: str = "none", capacity_bits: int = 512) -> mg.Arch:
    """DRAM, one Buffer (8-bit words) and one MAC: the tutorial's dot-product machine."""
    return mg.Arch.model_validate(
        {
            "name": "dot",
            "levels": [
                {"name": "DRAM", "component": "dram"},
                {"name": "Buffer", "capacity_bits": capacity_bits, "sparse": buffer or {}},
            ],
            "compute": {"name": "MAC", "zeros": zeros, "accum_bits": 8},
        }
    )


def four_macs(level: dict, operand: str) -> mg.Arch:
    """DRAM, ``level`` and 4 MACs skipping on zero ``operand``s."""
    return mg.Arch.model_validate(
        {
            "name": "four",
            "levels": [{"name": "DRAM", "component": "dram"}, level],
            "compute": {
                "name": "MAC",
                "mesh_x": 4,
                "zeros": {"action": "skipping", "operands": [operand]},
            },
        }
    )


def four_lanes(**top: object) -> mg.Mapping:
    """C = 64 in time at the Buffer, K = 4 over its lanes (``top``: DRAM's loops)."""
    return mg.Mapping.model_validate(
        {
            "levels": [
                {"target": "DRAM", **top},
                {"target": "Buffer", "temporal": {"C": 64}, "spatial_x": {"K": 4}},
            ]
        }
    )


DOT = mg.Layer(kind="fc", K=1, C=16, densities={"inputs": "1:4"})  # A: 4 of 16 non-zero
ON_A = {"condition_on": ["inputs"]}
DOT_MAPPING = mg.Mapping.model_validate(
    {"levels": [{"target": "DRAM"}, {"target": "Buffer", "temporal": {"C": 16}}]}
)


def test_a_dense_layer_and_a_design_without_zeros_price_as_before() -> None:
    layer = mg.Layer(K=16, C=8, P=4, Q=4, R=3, S=3)
    sparse_only = layer.model_copy(
        update={"densities": mg.Layer(densities={"inputs": 0.3}).densities}
    )
    a = mg.load_arch("simba-chip")
    dense = mg.evaluate(layer, a, seed=0)
    # zeros the design does nothing with save nothing (Sparseloop: no format, no action)
    again = mg.evaluate(sparse_only, a, dense.mapping)
    assert again.energy_pj == dense.energy_pj and again.latency_cycles == dense.latency_cycles
    assert again.record().zeros_saved is None and again.record().densities == {"inputs": "0.3"}


def test_gating_the_dot_product() -> None:
    # Sparseloop 01.2.2 (gating B and Z on A, A 1:4 of 16): 16 cycles, 4 computes; B reads
    # 16 x 1/4 = 4 made, 12 gated; Z updates 16 x 1/4 = 4; Z reads 15 x 1/4 = 3.75 (the
    # first touch reads nothing; Sparseloop's exact count of the 4 non-zero positions is 3)
    a = arch(
        {"weights": {"action": "gating", **ON_A}, "outputs": {"action": "gating", **ON_A}}, "gating"
    )
    r = mg.evaluate(DOT, a, DOT_MAPPING)
    made = r.batch.counts.made[0, :, :, 0]  # Buffer: [operand, action]
    assert r.latency_cycles == 16 and r.effectual_macs == 4
    assert r.accesses["Buffer"]["weights"]["reads"] * made[0, 0] == 4
    assert r.accesses["Buffer"]["outputs"]["reads"] * made[2, 0] == pytest.approx(3.75)
    assert r.accesses["Buffer"]["outputs"]["updates"] * made[2, 2] == 4
    # the gated reads cost nothing: the Buffer's weight-read energy is a quarter of dense
    dense = mg.evaluate(DOT, arch(), DOT_MAPPING)
    reads = (r.batch.access_energy_pj[0, 0, 0, 0], dense.batch.access_energy_pj[0, 0, 0, 0])
    assert reads[0] == pytest.approx(reads[1] * 0.25)  # [Buffer, weights, reads, mapping]
    saved = r.record().zeros_saved
    assert set(saved) == {"compute", "accesses"} and saved["compute"].cycles == 0
    # the MACs' math: 4 of 16 multiplies done (mac_pj each); gating saves the other 12 and
    # their input register's loads
    assert r.energy_pj_by_category["math"] == pytest.approx(4 * r.costs.mac_pj, rel=1e-9)
    assert saved["compute"].energy_pj > 12 * r.costs.mac_pj


def test_skipping_the_dot_product_with_a_compressed_operand() -> None:
    # Sparseloop 01.2.3 (A coordinate-payload, B and Z skipped on A): 4 cycles; B reads 4;
    # A's reads at the Buffer: 16 words x 1/4 non-zero x (8 data + 8 coordinate bits) / 8 = 8
    # word-equivalents (Sparseloop: 4 data + 4 metadata reads)
    a = arch(
        {
            "inputs": {"format": "cp"},
            "weights": {"action": "skipping", **ON_A},
            "outputs": {"action": "skipping", **ON_A},
        },
        "skipping",
    )
    r = mg.evaluate(DOT, a, DOT_MAPPING)
    assert r.latency_cycles == 4 and r.effectual_macs == 4
    buffer = r.accesses["Buffer"]
    assert buffer["weights"]["reads"] == 4 and buffer["inputs"]["reads"] == 8
    assert buffer["outputs"]["updates"] == 4
    assert r.record().zeros_saved["compute"].cycles == 12  # 16 - 4


def test_the_sparse_matrix_product_computes_only_its_non_zero_pairs() -> None:
    # Sparseloop 02.2.1: 8 x 8 x 8, A 0.25, B 0.5 fixed-structured: 512 x 0.25 x 0.5 = 64
    layer = mg.Layer(kind="fc", K=8, C=8, P=8, densities={"inputs": "1:4", "weights": "1:2"})
    a = mg.Arch.model_validate(
        {
            "name": "spmspm",
            "levels": [
                {"name": "DRAM", "component": "dram"},
                {"name": "Buffer", "capacity_bits": 8192},
            ],
            "compute": {"name": "MAC", "zeros": "skipping", "accum_bits": 8},
        }
    )
    r = mg.evaluate(layer, a, seed=0)
    assert r.effectual_macs == 64 and r.latency_cycles == 64


def eyeriss_v2_pe() -> mg.Arch:
    cfg = mg.files.read_yaml(REPO / "experiments" / "sparseloop-validation" / "config.yaml")
    return mg.Arch.model_validate(cfg["eyeriss_v2_pe"])


def test_the_eyeriss_v2_pe_agrees_with_sparseloop_and_the_measured_masks_are_exact() -> None:
    data = json.loads((REF / "eyeriss_v2_pe.json").read_text())["layers"]["L07"]
    # L07: 64 x 64 pointwise on 32 x 32; uniform densities 0.73 (inputs) and 0.52 (weights):
    # ceil(0.73 x 65,536) = 47,842 and ceil(0.52 x 4,096) = 2,130 non-zeros, so one MAC
    # skipping zeros takes 4,194,304 x 47,842/65,536 x 2,130/4,096 = 1,592,241.6 -> 1,592,242
    # cycles (Sparseloop's uniform model: 1,592,245; ground truth 1,702,140, -6.46 %)
    layer = mg.Layer(
        name="L07", K=64, C=64, P=32, Q=32, densities={"inputs": 0.73, "weights": 0.52}
    )
    r = mg.evaluate(layer, eyeriss_v2_pe(), seed=0)
    assert r.latency_cycles == 1_592_242
    assert abs(r.latency_cycles - data["sl_uniform"]["cycles"]) <= 4
    # the real masks, as each input channel's density: sum over c of nnzW(c) x nnzI(c), the
    # ground truth exactly (1,702,140: the artifact's simulator counts the effectual pairs)
    masks = np.load(REF / data["masks"]["file"])
    channels = []
    for name in ("weights", "iacts"):
        bits = np.unpackbits(masks[name])[: int(masks[f"{name}_count"])]
        channels.append(bits.reshape(-1, 64).mean(axis=0).tolist())
    measured = layer.model_copy(
        update={
            "densities": mg.Layer(
                densities={
                    "weights": {"channels": channels[0]},
                    "inputs": {"channels": channels[1]},
                },
                C=64,
            ).densities
        }
    )
    assert mg.evaluate(measured, eyeriss_v2_pe(), seed=0).latency_cycles == data["gt_cycles"]


def test_lanes_that_step_together_skip_a_step_only_when_all_are_zero() -> None:
    # 4 MAC lanes under one buffer, inputs 0.5 (uniform): each lane's input is non-zero with
    # p = 1/2, independent across lanes (the binomial limit), so a step of the 4 lanes holds
    # a non-zero with probability 1 - (1/2)^4 = 15/16 of 64 steps = 60
    layer = mg.Layer(kind="fc", K=4, C=64, densities={"inputs": 0.5})
    a = four_macs({"name": "Buffer", "capacity_bits": 8192}, "inputs")
    r = mg.evaluate(layer, a, four_lanes())
    # ceil(0.5 x 64) / 64 = 0.5 exactly; 64 x 15/16 = 60
    assert r.latency_cycles == 60


def test_instances_that_run_their_own_loops_wait_for_the_slowest() -> None:
    # 2 x 2 PEs, each its own buffer and one MAC, 64 MACs each between the parent's steps,
    # inputs 0.5: each PE's effectual MACs are binomial(64, 1/2): mean 32, deviation 4; the
    # expected maximum of 4 (Blom): Phi^-1((4 - 0.375) / 4.25) = 1.0294 deviations: 32 +
    # 4.117 = 36.12 per step, x 1 step -> 37 cycles
    layer = mg.Layer(kind="fc", K=4, C=64, densities={"inputs": 0.5})
    a = four_macs({"name": "PE", "capacity_bits": 8192, "mesh_x": 4}, "inputs")
    mapping = mg.Mapping.model_validate(
        {
            "levels": [
                {"target": "DRAM", "spatial_x": {"K": 4}},
                {"target": "PE", "temporal": {"C": 64}},
            ]
        }
    )
    r = mg.evaluate(layer, a, mapping)
    z = 1.0294
    assert r.latency_cycles == math.ceil(32 + z * 4)


def test_structured_tiles_are_empty_as_often_as_their_blocks_allow() -> None:
    d = Density.model_validate("2:4")
    # a tile of 2 words of a 2:4 block is empty when both its words are the block's zeros:
    # C(2, 2) / C(4, 2) = 1/6; a tile of 3 or more words always holds one
    assert d.occupied(np.array([1.0, 2.0, 3.0, 8.0])) == pytest.approx([0.5, 5 / 6, 1.0, 1.0])
    assert d.worst() == 0.5 and Density.model_validate(0.5).worst() == 1.0


def test_a_compressed_tile_fits_where_the_dense_one_does_not() -> None:
    # weights 2:4 in a bitmask: 0.5 x 8 + 1 = 5 bits a word, so a 64-byte buffer holds 102
    # of them where it holds 64 dense words; the mapper sees it (Space.bits)
    layer = mg.Layer(kind="fc", K=10, C=10, densities={"weights": "2:4"})
    a = arch({"weights": {"format": "bitmask"}}, capacity_bits=512)
    bits = stored_bits(layer, a, capacity=True)
    assert bits[0, 0] == 5.0 and bits[0, 1] == 8.0
    assert Space(layer, a, mg.templates.dataflow_for(a, None)).bits[0, 0] == 5.0
    # worst case (the user asks): a uniform tensor's non-zeros may gather: dense size + 1 bit
    worst = a.model_copy(update={"sparse_capacity": "worst"})
    uniform = layer.model_copy(update={"densities": mg.Layer(densities={"weights": 0.5}).densities})
    assert stored_bits(uniform, worst, capacity=True)[0, 0] == 9.0


def test_formats_price_their_metadata() -> None:
    # bits a level stores per dense word at density 0.25 with 8-bit words, one rank
    d = Density.model_validate(0.25)
    cases = {
        ("bitmask", None): 0.25 * 8 + 1,
        ("rle", None): 0.25 * (8 + 4),
        ("cp", 5): 0.25 * (8 + 5),
        ("uncompressed", None): 8,
    }
    for (fmt, meta), bits in cases.items():
        ranks = TensorSparsity(format=fmt, metadata_bits=meta).fiber_ranks("weights")
        assert fiber_bits(ranks, [np.ones(1)], 8, d, 0.25)[0] == pytest.approx(bits)
    # CSR of a weight tile of 4 filters (rows, K) x 16 words each (C x R x S): offsets
    # (4 + 1) x 16 bits, 64 x 0.25 = 16 non-zeros of 8 bits and 8-bit coordinates:
    # (80 + 128 + 128) / 64 = 5.25 bits a word
    ranks = TensorSparsity(format="csr", metadata_bits=8).fiber_ranks("weights")
    assert [r.format for r in ranks] == ["uop", "cp"]
    shapes = [np.array([4.0]), np.array([16.0])]
    assert fiber_bits(ranks, shapes, 8, d, 0.25)[0] == pytest.approx(5.25)
    # a bitmask over the filters above a bitmask over their words: a filter of 16 words
    # at 0.25 is empty with probability 0.75^16 = 0.01002, so 4 x 0.98998 filters are kept,
    # each with its 16-bit mask, and the 16 non-zeros: (4 + 3.96 x 16 + 16 x 8) / 64 =
    # 3.0525 bits a word
    ranks = TensorSparsity(
        ranks=[{"format": "bitmask", "dims": ["K"]}, {"format": "bitmask"}]
    ).fiber_ranks("weights")
    kept = 4 * (1 - 0.75**16)
    expect = (4 + kept * 16 + 16 * 8) / 64
    assert fiber_bits(ranks, shapes, 8, d, 0.25)[0] == pytest.approx(expect)


def test_a_tree_of_ranks_is_priced_on_each_mappings_tiles() -> None:
    # weights K=4 x C=16 kept whole in the Buffer as CSR (rows K): 5.25 bits a word (above),
    # so its 64 weights fill 336 bits, and their DRAM fill of the Buffer moves 336 bits
    layer = mg.Layer(kind="fc", K=4, C=16, densities={"weights": 0.25})
    a = arch({"weights": {"format": "csr", "metadata_bits": 8}}, capacity_bits=4096)
    mapping = mg.Mapping.model_validate(
        {"levels": [{"target": "DRAM"}, {"target": "Buffer", "temporal": {"K": 4, "C": 16}}]}
    )
    r = mg.evaluate(layer, a, mapping)
    assert r.accesses["Buffer"]["weights"]["fills"] * 8 == pytest.approx(336)
    # a rank naming a dim weights do not have is refused, naming it
    with pytest.raises(ValidationError, match="'P' does not index weights; its dims: G K C S R"):
        arch({"weights": {"ranks": [{"format": "uop", "dims": ["P"]}, {"format": "cp"}]}})


def test_eyeriss_chip_gates_zero_inputs_and_codes_its_feature_maps() -> None:
    # AlexNet conv3 at batch 4 on eyeriss-chip, inputs 0.275 / outputs 0.303 dense: its DRAM
    # words of inputs and outputs are x density x 21/16 (a 5-bit run per 16-bit value)
    layer = mg.Layer(
        name="conv3",
        N=4,
        K=384,
        C=256,
        P=13,
        Q=13,
        R=3,
        S=3,
        densities={"inputs": 0.275, "weights": 0.346133, "outputs": 0.303},
    )
    a = mg.load_arch("eyeriss-chip")
    r = mg.evaluate(layer, a, dataflow="rs", seed=0, samples=300)
    dense_arch = without_each(a)["formats"]
    dense = mg.evaluate(layer, dense_arch, r.mapping)
    for op, d in (("inputs", 0.275), ("outputs", 0.303)):
        coded = r.dram_bytes_by_operand[op]
        expect = (
            dense.dram_bytes_by_operand[op]
            * math.ceil(d * layer.operand_size(Operand[op[0].upper()]))
            / layer.operand_size(Operand[op[0].upper()])
            * 21
            / 16
        )
        assert coded == pytest.approx(expect, rel=1e-4), op  # DRAM's blocks round up
    assert r.dram_bytes_by_operand["weights"] == dense.dram_bytes_by_operand["weights"]
    # gating: cycles kept, the MACs done = MACs x ceil(0.275 x |I|)/|I|
    assert r.latency_cycles == dense.latency_cycles
    # 0.275 x 230,400 input words = 63,360 non-zeros exactly: MACs x 0.275
    assert layer.operand_size(Operand.I) == 230_400
    assert r.effectual_macs == pytest.approx(layer.macs * 0.275)
    # saved energy adds up: with the feature off, the energy is this plus what it saves
    for name, saved in r.record().zeros_saved.items():
        without = mg.evaluate(layer, without_each(a)[name], r.mapping)
        assert without.energy_pj == pytest.approx(r.energy_pj + saved.energy_pj), name


def test_a_sparse_design_round_trips_through_timeloop_input(tmp_path: Path) -> None:
    layer = mg.Layer(name="c", K=32, C=16, P=7, Q=7, R=3, S=3, densities={"inputs": 0.4})
    r = mg.evaluate(layer, mg.load_arch("eyeriss-chip"), dataflow="rs", seed=0, samples=200)
    back = load_timeloop(write_timeloop(r, tmp_path))
    again = mg.evaluate(back.layer, back.design(), back.mapping)
    assert again.latency_cycles == r.latency_cycles
    assert again.accesses == r.accesses
    assert again.effectual_macs == r.effectual_macs


@pytest.mark.parametrize(
    ("densities", "message"),
    [
        ("weights=1.5", "less than or equal to 1"),
        ("weights=0", "greater than 0"),
        ("weights=5:4", "N:M needs 1 <= N <= M"),
        ("weights=2:x", "a number in (0, 1] or 'N:M'"),
        ("kernels=0.5", "unknown tensor 'kernels'; allowed: weights, inputs, outputs"),
        ("weights", "is not TENSOR=DENSITY"),
    ],
)
def test_bad_densities_are_one_line_and_exit_2(densities: str, message: str) -> None:
    out = CliRunner().invoke(
        main,
        ["evaluate", "--arch", "eyeriss-chip", "--workload", "alexnet", "--densities", densities],
    )
    assert out.exit_code == 2 and message in out.output and "Traceback" not in out.output
    assert "--densities" in out.output


def test_a_density_table_must_name_the_networks_layers(tmp_path: Path) -> None:
    table = tmp_path / "densities.yaml"
    table.write_text("default: {weights: 2:4}\nlayers:\n  conv9: {inputs: 0.5}\n")
    out = CliRunner().invoke(
        main,
        ["evaluate", "--arch", "eyeriss-chip", "--workload", "alexnet", "--densities", str(table)],
    )
    assert out.exit_code == 2 and str(table) in out.output
    assert "conv9 not a MAC layer of 'alexnet' (its MAC layers: conv1, conv2" in out.output
    # a good table: its layers' own, the default for the rest
    table.write_text("default: {weights: 2:4}\nlayers:\n  conv1: {inputs: 0.9}\n")
    net = mg.load_workload("alexnet", densities=table)
    first, second = [e.layer for e in net.layers if not e.layer.is_postprocess][:2]
    assert first.densities.describe() == "W 2:4, I 0.9" and second.densities.describe() == "W 2:4"


@pytest.mark.parametrize(
    ("level", "message"),
    [
        (
            {"keeps": ["inputs"], "sparse": {"weights": {"format": "rle"}}},
            "sparse.weights: the level does not keep weights",
        ),
        ({"sparse": {"weights": {"action": "skipping"}}}, "skipping needs condition_on"),
        (
            {"sparse": {"weights": {"action": "gating", "condition_on": ["weights"]}}},
            "its own are left out",
        ),
        (
            {"sparse": {"weights": {"format": "zip"}}},
            "'uncompressed', 'bitmask', 'rle', 'cp' or 'csr'",
        ),
    ],
)
def test_bad_sparse_features_name_the_field(tmp_path: Path, level: dict, message: str) -> None:
    spec = tmp_path / "arch.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": "bad",
                "levels": [
                    {"name": "DRAM", "component": "dram"},
                    {"name": "Buffer", "capacity": "1KiB", **level},
                ],
                "compute": {"name": "MAC"},
            }
        )
    )
    out = CliRunner().invoke(main, ["map", "--arch", str(spec), "--layer", "K=4,C=4"])
    assert out.exit_code == 2 and message in out.output and "Traceback" not in out.output


def test_a_condition_on_a_tensor_no_on_chip_level_keeps_is_refused() -> None:
    buffer = {
        "name": "Buffer",
        "capacity_bits": 512,
        "keeps": ["weights", "inputs"],
        "sparse": {"weights": {"action": "gating", "condition_on": ["outputs"]}},
    }
    spec = {"name": "x", "levels": [{"name": "DRAM", "component": "dram"}, buffer], "compute": {}}
    with pytest.raises(ValidationError, match="no on-chip level keeps outputs, so its zeros are"):
        mg.Arch.model_validate(spec)


def test_template_parameters_say_what_the_design_does_with_zeros() -> None:
    a = mg.templates.simba(zeros="skipping", weight_format="bitmask", dram_format="rle")
    weights = {
        lvl.name: lvl.sparse["weights"].format for lvl in a.levels if "weights" in lvl.sparse
    }
    assert set(weights.values()) == {"bitmask"} and "DRAM" in weights
    assert {k: v.format for k, v in a.levels[0].sparse.items()} == {
        "weights": "bitmask",
        "inputs": "rle",
        "outputs": "rle",
    }
    assert a.compute.zeros.action == "skipping" and a.compute.zeros.operands == (
        "weights",
        "inputs",
    )


def test_a_search_space_workload_takes_densities(tmp_path: Path) -> None:
    from magnet.search.design_space import load_space

    text = (REPO / "search_spaces" / "quickstart.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        text.replace(
            "workloads:",
            "workloads:\n  - {workload: resnet18, densities: {weights: 7:4}}\n  # was:",
            1,
        )
    )
    with pytest.raises(mg.MagnetError, match="N:M needs 1 <= N <= M"):
        load_space(bad)


def test_a_search_over_ways_of_handling_zeros_reports_what_each_saves(tmp_path: Path) -> None:
    from magnet.report.html import render_report
    from magnet.search import load_space, search

    space = load_space("sparse")
    data = space.model_dump(mode="json")
    data["workloads"] = [{"workload": "resnet18", "densities": {"weights": 0.4, "inputs": 0.5}}]
    data["mapper"]["options"] = {"samples": 200, "rounds": 2}
    data["params"] = {**data["params"], "zeros": "skipping", "vector_units": 4, "vector_width": 8}
    path = tmp_path / "sparse.yaml"
    path.write_text(yaml.safe_dump(data))
    study = search(path, n_trials=2, storage=str(tmp_path / "s.journal"), seed=0)
    trial = study.trials()[0]
    record = trial.records[0]
    conv = next(row for row in record.layers if row.name == "layer1.0.conv1")
    assert conv.densities == {"weights": "0.4", "inputs": "0.5"}
    assert conv.zeros_saved is not None and conv.zeros_saved["compute"].cycles > 0
    html = render_report(study)
    assert "Zeros: densities and what each way of handling them saves" in html
    assert "compute cycles saved" in html


def test_every_dataflow_of_the_sparse_space_runs_on_its_designs() -> None:
    # MAGNet's ws-local-os keeps partial sums in the accumulation collector: a space whose
    # PEs had none would record half its designs infeasible (as the shipped one once did)
    from magnet.design import build_design
    from magnet.search import load_space
    from magnet.templates import get_template

    space = load_space("sparse")
    template = get_template(space.template)
    first = {name: r.listed()[0] for name, r in space.ranges().items()}
    arch = template.build(template.params(space.design(first)), name="smallest")
    for dataflow in space.dataflows():
        assert build_design(arch, dataflow).dataflow.name == dataflow


def test_lanes_fed_compressed_weights_take_a_step_per_non_zero() -> None:
    # 4 lanes over K, C = 64, weights 2:4: stored uncompressed, a step of the 4 lanes is
    # skipped only when all 4 weights are zero: each lane's weight is zero with probability
    # 1/2 (one word of a 2:4 block), so 1 - (1/2)^4 = 15/16 of 64 steps remain: 60. In a
    # bitmask at the Buffer the lanes get the non-zeros alone: 64 x 2/4 = 32 steps
    layer = mg.Layer(kind="fc", K=4, C=64, densities={"weights": "2:4"})
    cycles = {}
    for fmt in ("uncompressed", "bitmask"):
        buffer = {"name": "Buffer", "capacity_bits": 8192, "sparse": {"weights": {"format": fmt}}}
        cycles[fmt] = mg.evaluate(layer, four_macs(buffer, "weights"), four_lanes()).latency_cycles
    assert cycles == {"uncompressed": 60, "bitmask": 32}


def test_a_sparse_tensor_core_packs_a_tiles_non_zeros_onto_its_lanes() -> None:
    # the dual-side sparse tensor core (experiments/sparseloop-validation): B (weights) at
    # 0.4, uniform, A dense; each step of the Buffer's K loop passes a 32-long B row over 16
    # lanes (2 steps dense); packed, ceil(X / 16) steps with X ~ binomial(32, 0.4):
    # E = sum_x C(32, x) 0.4^x 0.6^(32 - x) ceil(x / 16) = 1 + P(X > 16) = 1.0920; A's 32-long
    # column on 8 lanes keeps its 4 steps: cycles / dense = 1.0920 / 2 = 0.546 (the DSTC
    # paper: 2,500 / 4,600 = 0.543)
    cfg = mg.files.read_yaml(REPO / "experiments" / "sparseloop-validation" / "config.yaml")
    spec = cfg["dstc"]
    a, mapping = mg.Arch.model_validate(spec["arch"]), mg.Mapping.model_validate(spec["mapping"])

    def cycles(densities: dict) -> int:
        return mg.evaluate(
            mg.Layer(**spec["layer"], densities=densities), a, mapping
        ).latency_cycles

    expect = sum(math.comb(32, x) * 0.4**x * 0.6 ** (32 - x) * math.ceil(x / 16) for x in range(33))
    assert expect == pytest.approx(1.0920, abs=1e-4)
    ratio = cycles({"weights": 0.4}) / cycles({})
    assert ratio == pytest.approx(expect / 2, rel=1e-6)


def test_a_network_files_density_out_of_range_names_the_file_and_field(tmp_path: Path) -> None:
    net = tmp_path / "net.yaml"
    net.write_text(
        "name: n\nlayers:\n  - {name: a, K: 16, C: 16, P: 8, Q: 8, densities: {weights: 1.5}}\n"
    )
    out = CliRunner().invoke(
        main, ["evaluate", "--arch", "eyeriss-chip", "--workload", str(net), "--dataflow", "rs"]
    )
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert (
        f"{net}: layers.0.densities.weights.density: Input should be less than or equal to 1"
        in (out.output)
    )
