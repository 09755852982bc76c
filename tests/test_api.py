"""The Python API and the command line around it: templates as objects, records, workload
parameters, listings, and the defects a new user hit (each with its test)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any, ClassVar

import click
import pytest
from click.testing import CliRunner
from pydantic import Field

import magnet as mg
from magnet.arch.spec import Arch, StorageLevel
from magnet.cli import main
from magnet.dataflow import Dataflow, Rule
from magnet.errors import MagnetError
from magnet.templates import get_template, register_template, templates, unregister_template
from magnet.templates.parts import assemble, dram
from magnet.templates.template import Int, Template, TemplateParams
from tests.conftest import DATA, REFERENCE, REPO

RES2A = "K=64,C=64,P=56,Q=56,R=3,S=3"


def cli(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def refused(result: Any, *patterns: str) -> None:
    """Exit 2, one clear message, no traceback."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for pattern in patterns:
        assert pattern in result.output, (pattern, result.output)


# ---- templates as objects ----------------------------------------------------------------
class TinyParams(TemplateParams):
    macs: Int = Field(4, ge=1, le=64, description="MACs")


class Tiny(Template):
    """A user template: DRAM, one register file per MAC."""

    name = "tiny-test"
    description = "a test template"
    Params = TinyParams
    dataflows: ClassVar[dict[str, str]] = {"stream": "register file bypassed"}
    presets: ClassVar[dict[str, dict[str, Any]]] = {"tiny-test-8": {"macs": 8}}

    def assemble(self, p: TinyParams, name: str) -> Arch:
        rf = StorageLevel(name="RF", component="regfile", capacity_bits=64, mesh_x=p.macs)
        levels = [dram(p, 8), rf]
        return assemble(name, levels, p, (p.macs, 1), {})

    def dataflow(self, arch: Arch, name: str) -> Dataflow:
        if name != "stream":
            raise self.refuse(name)
        return Dataflow(name=name, rules=(Rule(level="RF", keep=(), temporal=()),))


def test_a_user_template_registers_builds_and_maps() -> None:
    register_template(Tiny)
    try:
        arch = mg.load_arch("tiny-test-8")
        assert arch.template == "tiny-test" and arch.mac_count == 8
        assert arch.params["macs"] == 8
        outcome = mg.map_layer(mg.parse_layer("K=8,C=4,P=4"), arch, "stream")
        assert outcome.status == "mapped"
        assert outcome.mapping.level("RF") is None or not outcome.mapping.level("RF").temporal
        with pytest.raises(MagnetError, match="allowed: stream"):
            mg.dataflow_for(arch, "ws")
    finally:
        unregister_template("tiny-test")
    assert "tiny-test" not in templates()


def test_template_parameters_have_types_ranges_units_and_refuse_bad_values() -> None:
    simba = get_template("simba")
    rows = {row["name"]: row for row in simba.parameter_table()}
    assert rows["weight_buffer"]["default"] == 32 * 1024
    assert "[bytes]" in rows["weight_buffer"]["description"]
    assert ">= 1" in rows["vector_width"]["range"]
    with pytest.raises(MagnetError, match=r"vector_width: expected a whole number, got True$"):
        mg.templates.simba(vector_width=True)
    with pytest.raises(MagnetError, match="above the 1 GiB limit"):
        mg.templates.simba(global_buffer=1e30)
    with pytest.raises(MagnetError, match="number_format fp16 has 16-bit weights"):
        mg.templates.simba(number_format="fp16")


def test_an_arch_rebuilds_from_its_record() -> None:
    arch = mg.templates.simba(vector_units=16, accum_collector=4)
    data = mg.templates.arch_to_data(arch)
    assert data["template"] == "simba" and data["vector_units"] == 16
    assert mg.templates.arch_from_data(data, "record") == arch


# ---- precision and voltage -----------------------------------------------------------------
def test_int4_and_bf16_designs_price_and_scale() -> None:
    layer = mg.parse_layer(RES2A)
    int8 = mg.evaluate(layer, mg.templates.simba(), dataflow="os-local-ws")
    int4 = mg.evaluate(
        layer, mg.templates.simba(weight_bits=4, activation_bits=4), dataflow="os-local-ws"
    )
    bf16 = mg.evaluate(
        layer,
        mg.templates.simba(number_format="bf16", weight_bits=16, activation_bits=16, accum_bits=32),
        dataflow="os-local-ws",
    )
    math8, math4 = (r.energy_pj_by_category["math"] for r in (int8, int4))
    math16 = bf16.energy_pj_by_category["math"]
    assert math4 < math8 < math16


def test_voltage_scales_dynamic_energy_with_its_square() -> None:
    # 16 nm nominal 0.85 V; each design gives only its supply (and runs at fmax of it): at
    # 0.6 V dynamic energy is x (0.6 / 0.85)^2 = 0.498, DRAM unchanged
    layer = mg.parse_layer(RES2A)
    mapping = mg.Mapping.from_yaml("experiments/mappings/simba-chip_resnet50_res2a_branch2b.yaml")
    params = {k: v for k, v in mg.load_arch("simba-chip").params.items() if k != "clock_ghz"}
    nominal = mg.evaluate(layer, mg.templates.simba(**{**params, "voltage_v": 0.85}), mapping)
    low = mg.evaluate(layer, mg.templates.simba(**{**params, "voltage_v": 0.6}), mapping)
    ratio = (0.6 / 0.85) ** 2
    for key in ("math", "memory", "noc", "clock", "control"):
        assert low.energy_pj_by_category[key] == pytest.approx(
            nominal.energy_pj_by_category[key] * ratio, rel=1e-9
        ), key
    assert low.energy_pj_by_category["dram"] == nominal.energy_pj_by_category["dram"]


# ---- records ---------------------------------------------------------------------------------
def test_a_design_given_another_dataflow_keeps_its_cost_model() -> None:
    priced = mg.design(mg.load_arch("simba-chip"), "ws", "eyeriss-normalized")
    again = mg.design(priced, "os-local-ws")
    assert again.costs is priced.costs  # not re-priced with the built-in table
    assert again.dataflow.name == "os-local-ws"


def test_records_are_versioned_json_that_reads_back() -> None:
    net = mg.load_workload(str(DATA / "network" / "tiny_net.yaml"))
    result = mg.evaluate(
        net, mg.load_arch(str(DATA / "network" / "tiny_arch.yaml")), dataflow="free"
    )
    record = result.record()
    text = record.model_dump_json()
    back = mg.NetworkRecord.model_validate_json(text)
    assert back == record and back.schema_version == mg.SCHEMA_VERSION
    assert isinstance(back.latency_cycles, int)
    assert sum(back.energy_pj_by_category.values()) == pytest.approx(back.energy_pj)
    assert set(back.energy_pj_by_category) == {
        "math",
        "postprocess",
        "memory",
        "noc",
        "nop",
        "clock",
        "control",
        "dram",
        "static",
    }
    assert back.energy_pj_by_category["nop"] == 0 and back.chiplets == 1  # a chip: no NoP
    # one inference at batch N: N / latency_s of them a second
    assert back.images_per_s == pytest.approx(net.batch / back.latency_s, rel=1e-12)


# ---- workloads ---------------------------------------------------------------------------------
def test_zoo_parameters_reach_the_cli_and_python() -> None:
    decode = mg.load_workload("gpt2-small:mode=decode,kv_len=1024")
    assert decode.macs == mg.load_workload("gpt2-small", mode="decode", kv_len=1024).macs
    with pytest.raises(MagnetError, match="allowed: prefill, decode"):
        mg.load_workload("gpt2-small:mode=decoder")
    with pytest.raises(MagnetError, match="is not KEY=VALUE"):
        mg.load_workload("gpt2-small:mode")
    out = cli(
        "evaluate",
        "--arch",
        "simba-chip",
        "--workload",
        "gpt2-small:mode=decode,kv_len=64",
        "--dataflow",
        "os-local-ws",
        "--mapper",
        "random",
        "--samples",
        "200",
        "--json",
    )
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["network"] == "gpt2-small"


# ---- listings and help -----------------------------------------------------------------------
def test_archs_and_dataflows_list_presets_parameters_and_loop_nests() -> None:
    archs = json.loads(cli("archs", "--json").output)
    assert archs["presets"]["simba-chip"]["template"] == "simba"
    assert {"simba", "eyeriss", "systolic"} <= set(archs["templates"])
    flows = json.loads(cli("dataflows", "simba", "--json").output)
    nest = flows["simba"]["os-local-ws"]["loop_nest"]
    assert "WeightCollector" in nest and "for N,P,Q" in nest
    refused(cli("dataflows", "nope"), "unknown template 'nope'")
    # --arch alone: that architecture's template, its dataflows priced on it
    own = json.loads(cli("dataflows", "--arch", "simba-chip", "--json").output)
    assert list(own) == ["simba"] and "os-local-ws" in own["simba"]
    refused(cli("dataflows", "eyeriss", "--arch", "simba-chip"), "is a simba architecture")


def test_every_option_has_help_text() -> None:
    for name, command in main.commands.items():
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"magnet {name} {param.opts}"


# ---- the defects a new user hit -----------------------------------------------------------------
def test_bad_command_line_values_exit_2_with_one_clear_line(tmp_path) -> None:
    base = ("map", "--arch", "simba-chip", "--layer", "K=16,C=16,P=8,Q=8")
    refused(cli(*base, "--seed", "-1"), "-1 is not in the range 0<=x<=4294967295")
    refused(cli(*base, "--samples", "0"), "0 is not in the range x>=1")
    refused(cli(*base, "--objective", "energy=nan"), "cannot read objective")
    refused(cli(*base, "--output", str(tmp_path)), "is a directory")
    refused(cli(*base, "--output", str(tmp_path / "missing" / "m.yaml")), "does not exist")
    refused(cli("map", "--arch", str(tmp_path), "--layer", "K=4"), "is a directory")
    # a network needs an architecture, and --timeloop is not one of its options
    refused(
        cli("evaluate", "--workload", "resnet18", "--dataflow", "ws"), "--workload needs --arch"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("template: simba\nvector_width: true\n")
    refused(
        cli("map", "--arch", str(bad), "--layer", "K=4"), "vector_width", "expected a whole number"
    )
    huge = tmp_path / "huge.yaml"
    huge.write_text("template: simba\nglobal_buffer: 1.0e+30\n")
    refused(cli("map", "--arch", str(huge), "--layer", "K=4"), "global_buffer", "1 GiB limit")


@pytest.mark.parametrize("pipeline", [[], ["--pipeline"]])
def test_a_network_without_dataflow_is_mapped_under_free_as_the_help_says(pipeline) -> None:
    """``--dataflow``'s help says "Default: free"; the README's package examples give none."""
    net = str(DATA / "network" / "tiny_net.yaml")
    base = ["evaluate", "--arch", "simba-package-4", "--workload", net, "--samples", "50"]
    default, free = (cli(*base, *pipeline, *df, "--json") for df in ([], ["--dataflow", "free"]))
    assert default.exit_code == 0, default.output
    assert json.loads(default.stdout)["energy_pj"] == json.loads(free.stdout)["energy_pj"]
    assert "Default: free" in " ".join(cli("evaluate", "--help").output.split())


def test_a_timeloop_input_without_an_ert_is_refused_not_silently_priced(tmp_path) -> None:
    import yaml

    case = REFERENCE / "timeloop" / "conv1d_2level_ws_os" / "replay_timeloop_2025-03" / "ws"
    data = yaml.safe_load((case / "timeloop-input.yaml").read_text())
    data.pop("ERT", None)
    path = tmp_path / "no-ert.yaml"
    path.write_text(yaml.safe_dump(data))
    refused(cli("evaluate", "--timeloop", str(path)), "has no ERT")
    # with an explicit cost model it is priced, and says by what
    out = cli("evaluate", "--timeloop", str(path), "--cost-model", "horowitz45", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["cost_model"].startswith("horowitz45")


def test_python_errors_are_magnet_errors_naming_the_field() -> None:
    with pytest.raises(MagnetError, match="K: Input should be greater than or equal to 1"):
        mg.Layer(K=0)
    # the argument the caller gave, not the layer's field it becomes (K)
    with pytest.raises(
        MagnetError, match=r"conv2d\(\): out_channels: expected a whole number in 1\.\."
    ):
        mg.conv2d("c", in_channels=8, out_channels=0, out_height=4, out_width=4)
    # a cost-model spec string from Python, as on the command line
    result = mg.evaluate(
        mg.parse_layer("K=8,C=8,P=4"),
        mg.load_arch("simba-chip"),
        dataflow="free",
        cost_model="horowitz45",
    )
    assert result.costs.model_name.startswith("horowitz45")


#: Run in a fresh process: where glibc serves a 256 MiB block, and where that block is once
#: freed (the /proc/self/maps entry holding the address: a path, "anonymous", or none).
ALLOCATOR_PROBE = """
import ctypes, ctypes.util, json
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]

def mapping_of(address):
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if start <= address < end:
                return fields[5] if len(fields) > 5 else "anonymous"
    return None

def probe():
    block = libc.malloc(256 << 20)
    served, offset = mapping_of(block), block % 4096
    libc.free(block)
    return {"served": served, "page_offset": offset, "freed": mapping_of(block)}

import magnet as mg
from magnet.cli import main
arch = mg.load_arch("simba-chip")
imported = probe()
mg.evaluate(mg.parse_layer("K=8,C=8,P=4"), arch, dataflow="free")
evaluated = probe()
main(["evaluate", "--arch", "simba-chip", "--layer", "K=8,C=8,P=4", "--mapping",
      MAPPING, "--json"], standalone_mode=False)
print(json.dumps({"imported": imported, "evaluated": evaluated, "command": probe()}))
"""


@pytest.mark.subprocess
def test_a_library_call_leaves_the_allocator_and_a_command_tunes_it(tmp_path) -> None:
    # magnet/perf.py: glibc serves big blocks with an mmap of their own and unmaps them on
    # free; tune_allocator raises M_MMAP_THRESHOLD and M_TRIM_THRESHOLD to 1 GiB so that they
    # come from the heap and stay there. A process-wide setting: the CLI (and a search's
    # worker processes) set it, a library call never does. Observed in a fresh process
    # through the kernel's memory map, not through perf's own flag.
    # 256 MiB: above any threshold glibc picks by itself (mallopt(3): the mmap threshold
    # adjusts up to DEFAULT_MMAP_THRESHOLD_MAX = 4 * 1024 * 1024 * sizeof(long) = 32 MiB on
    # 64-bit, the trim threshold to twice that, so no heap keeps 256 MiB spare), below 1 GiB.
    mapping = tmp_path / "m.yaml"
    mapping.write_text("mapping:\n  - target: DRAM\n    temporal: {K: 8, C: 8, P: 4}\n")
    probe = ALLOCATOR_PROBE.replace("MAPPING", repr(str(mapping)))
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(out.stdout.splitlines()[-1])
    # a mapping of its own (an mmapped chunk is page-aligned and its 16-byte header, two
    # size_t, comes first: the block starts 16 bytes into a page), gone on free: after the
    # import, and still after an evaluation through the library
    untouched = {"served": "anonymous", "page_offset": 16, "freed": None}
    assert seen["imported"] == untouched
    assert seen["evaluated"] == untouched
    # after a magnet command in the same process: from the heap, still mapped once freed
    assert seen["command"]["served"] == "[heap]"
    assert seen["command"]["freed"] == "[heap]"
