"""The bad inputs an independent trial found still accepted, mis-blamed or crashing (issue 29).

Each class: how YAML reads a scalar (YAML 1.2's core schema, for every file magnet reads),
numbers of thousands of digits, digits that are not ASCII, an empty or repeated item in a
flag, a rule or a workload given twice, prices in a user's datasheet or Timeloop ERT, a
Timeloop file's version, sizes and layer, ONNX batch and IR version, an explicit
architecture's mesh, an architecture file's name and path, NaN in a mapper option, a big YAML
file without aliases, and the layer builders' arguments. From the command line each is exit
2, one ``error:`` line naming the file or flag and the cause, nothing on stdout, no traceback
and every user file unchanged (``refused`` hashes them); from Python a ``MagnetError``.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import onnx
import pytest
import yaml

import magnet as mg
from magnet.errors import MagnetError
from magnet.files import parse_yaml
from magnet.search import load_space
from magnet.units import EXPONENT, MAX_DIGITS, exponent_number
from magnet.workload.onnx_import import load_onnx
from tests.conftest import DATA, REPO
from tests.test_bad_workloads import conv_model, expect, raises, refused

L = "K=16,C=16,P=8,Q=8"
MAP = ("map", "--arch", "simba-chip", "--layer", L, "--dataflow", "ws")
QUICKSTART = (REPO / "search_spaces" / "quickstart.yaml").read_text()
DATASHEET = (REPO / "cost_models" / "sram_compiler_28nm.yaml").read_text()
TIMELOOP = (DATA / "timeloop_conv1d.yaml").read_text()
TINY_ARCH = (DATA / "tiny_arch.yaml").read_text()
NINES = "9" * 5000


def short_numbers(message: str) -> None:
    """No number of more than 40 digits is shown whole (a 5000-digit one is clipped)."""
    assert max((len(run) for run in re.findall(r"[0-9]+", message)), default=0) <= 40, message


# ---- YAML: plain scalars as YAML 1.2's core schema reads them --------------------------------
CORE = {
    # YAML 1.1 reads these otherwise (octal, underscores, binary, sexagesimal, booleans, dates)
    "017": 17,
    "0o17": 15,
    "0x1F": 31,
    "+16": 16,
    "1_6": "1_6",
    "32_768": "32_768",
    "0b10000": "0b10000",
    "1:30": "1:30",
    "yes": "yes",
    "no": "no",
    "on": "on",
    "off": "off",
    "Yes": "Yes",
    "y": "y",
    "2001-12-14": "2001-12-14",
    "-0x10": "-0x10",  # 1.2: no sign on hexadecimal
    "0X1F": "0X1F",
    "0o8": "0o8",
    # the same in both
    "true": True,
    "True": True,
    "FALSE": False,
    "~": None,
    "null": None,
    "": None,
    "1.": 1.0,
    ".5": 0.5,
    "2.5": 2.5,
    "1e6": 1_000_000,  # a whole number written with an exponent is an int (a count, a size)
    "1.5e-3": 0.0015,
    ".inf": math.inf,
    "-.Inf": -math.inf,
    "'017'": "017",
}


@pytest.mark.parametrize("text", CORE)
def test_a_plain_scalar_reads_as_yaml_1_2_s_core_schema_reads_it(text: str) -> None:
    value = parse_yaml(f"a: {text}\n", "t.yaml")["a"]
    assert value == CORE[text] and type(value) is type(CORE[text])


def test_nan_and_a_key_named_like_a_yaml_1_1_boolean() -> None:
    data = parse_yaml("on: .NaN\nno: 1\n", "t.yaml")
    assert set(data) == {"on", "no"} and math.isnan(data["on"])


@pytest.mark.parametrize(
    "text, why",
    [
        ("!!int 1_0", r"'1_0' is not an integer \(YAML 1\.2"),
        ("!!int 0b10", r"'0b10' is not an integer"),
        ("!!bool yes", r"'yes' is not a boolean \(YAML 1\.2: true, false\)"),
        ("!!float x", r"'x' is not a number"),
    ],
)
def test_an_explicit_tag_takes_only_what_yaml_1_2_writes(text: str, why: str) -> None:
    raises(
        lambda: parse_yaml(f"name: n\nK: {text}\n", "t.yaml"), r"t\.yaml: line 2, column 4: ", why
    )


def _yaml_files() -> list[Path]:
    folders = ("magnet", "experiments", "tests/data", "benchmarks", "docs")
    return sorted(
        p for f in folders for p in (REPO / f).rglob("*") if p.suffix in (".yaml", ".yml")
    )


def _as_yaml_1_2(value: Any) -> Any:
    """What magnet reads where YAML 1.1 (``yaml.safe_load``) read text: numbers written with
    an exponent, the one difference the files magnet ships rely on."""
    if isinstance(value, dict):
        return {_as_yaml_1_2(k): _as_yaml_1_2(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_yaml_1_2(v) for v in value]
    if isinstance(value, str) and EXPONENT.fullmatch(value):
        return exponent_number(value)
    return value


def test_every_yaml_file_magnet_ships_reads_as_it_did() -> None:
    """Spaces, cost tables, examples, experiments, benchmarks, test data and the README's
    YAML read the same by YAML 1.1's rules and magnet's, but for numbers with an exponent."""
    texts = {str(p.relative_to(REPO)): p.read_text() for p in _yaml_files()}
    for doc in (REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))):
        for i, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", doc.read_text(), re.S)):
            texts[f"{doc.name} block {i}"] = block
    assert len(texts) > 50
    for name, text in texts.items():
        assert parse_yaml(text, name) == _as_yaml_1_2(yaml.safe_load(text)), name


NET = "name: n\nlayers:\n  - {{name: {name}, K: {k}, C: 16, P: 8, Q: 8, R: {r}}}\n"


@pytest.mark.parametrize("k", ["0b10000", "1_6", "1:30", "yes", "on"])
def test_yaml_1_1_numbers_and_booleans_are_text_for_a_count(k: str, tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text(NET.format(name="a", k=k, r=1))
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        "simba-chip",
        "--dataflow",
        "ws",
        "--workload",
        str(tmp_path / "n.yaml"),
    )
    expect(line, r"n\.yaml: layers\.0\.K: expected a whole number, got " + re.escape(repr(k)))


def test_a_layer_named_no_and_octal_and_hex_counts_are_read(tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text(NET.format(name="no", k="0x10", r="0o3"))
    (entry,) = mg.load_workload(str(tmp_path / "n.yaml")).layers
    assert (entry.layer.name, entry.layer.K, entry.layer.R) == ("no", 16, 3)


def test_an_underscored_size_and_a_space_named_on(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("template: simba\nweight_buffer: 32_768\n")
    line = refused(tmp_path, *MAP[:2], str(tmp_path / "a.yaml"), *MAP[3:])
    expect(line, r"a\.yaml", r"weight_buffer", r"'32_768' is not a size")
    space = tmp_path / "s.yaml"
    space.write_text(QUICKSTART.replace("name: quickstart", "name: on"))
    assert load_space(space).name == "on"


# ---- numbers of thousands of digits -----------------------------------------------------------
BOUND = rf"at most {MAX_DIGITS} digits \(1e308\), got one of 5,000 digits"


@pytest.mark.parametrize("flag", ["--seed", "--samples", "--budget-evaluations"])
def test_a_5000_digit_flag_is_refused_with_its_bound(flag: str, tmp_path: Path) -> None:
    line = refused(tmp_path, *MAP, flag, NINES)
    expect(line, re.escape(flag), BOUND)
    short_numbers(line)


@pytest.mark.parametrize(
    "args, allowed",
    [
        (("map", "--arch", "a" * 5000, "--layer", "K=16,C=16"), "presets: simba-chip, "),
        (("search", "a" * 5000), "built-in spaces: eyeriss, magnet, "),
    ],
)
def test_a_5000_character_name_is_a_name_with_the_allowed_ones(
    args: tuple[str, ...], allowed: str, tmp_path: Path
) -> None:
    # no file name can be 5,000 characters long (255 bytes at most): the name is no file,
    # preset, template or space, and the line lists those; the name is shown by its ends
    line = refused(tmp_path, *args)
    expect(line, r"^error: a{60}\.\.\.a{20} \(5000 characters\): ", "no", allowed)
    assert len(line) < 400


@pytest.mark.parametrize(
    "args, where",
    [
        (("search", "quickstart", "--trials", NINES), "--trials"),
        (
            ("map", "--arch", "simba-chip", "--layer", f"K={NINES}", "--dataflow", "ws"),
            "--layer: K: ",
        ),
        (
            (
                "evaluate",
                "--arch",
                "simba-chip",
                "--dataflow",
                "ws",
                "--workload",
                f"resnet18:batch={NINES}",
            ),
            r"resnet18:batch=9999999999\.\.\.9999 \(5000 digits\): --workload: batch: ",
        ),
    ],
)
def test_5000_digit_trials_layer_and_spec_are_refused(
    args: tuple[str, ...], where: str, tmp_path: Path
) -> None:
    line = refused(tmp_path, *args)
    expect(line, where, BOUND)
    short_numbers(line)


def test_a_5000_digit_number_in_a_yaml_file_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "n.yaml").write_text(NET.format(name="a", k=NINES, r=1))
    line = refused(
        tmp_path,
        "evaluate",
        "--arch",
        "simba-chip",
        "--dataflow",
        "ws",
        "--workload",
        str(tmp_path / "n.yaml"),
    )
    expect(line, r"n\.yaml: line 3, column 18: ", BOUND)
    short_numbers(line)
    raises(lambda: parse_yaml("a: 0x" + "f" * 2000, "t"), r"at most 309 digits .*got one of 2,409")
    assert parse_yaml("a: 1e308", "t")["a"] == 10**308  # the largest whole number it reads


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: mg.parse_layer("K=" + "9" * 100_000), r"--layer: K: .*got one of 100,000 digits"),
        (lambda: mg.Layer(K=10**5000), r"Layer: K: .*got one of 5,001 digits"),
        (lambda: mg.gemm(m=10**5000, k=16, n=16), r"gemm\(\): m: .*got 1000000000\.\.\.0000"),
        (lambda: mg.Budget(evaluations=10**5000), r"Budget: evaluations: "),
    ],
)
def test_a_huge_int_from_python_gives_its_bound_not_python_s_limit(call: Any, field: str) -> None:
    message = raises(call, field)
    short_numbers(message)
    assert "4300" not in message


# ---- the command line's numbers are ASCII digits ----------------------------------------------
@pytest.mark.parametrize(
    "flag, value",
    [
        ("--seed", "１２"),
        ("--seed", "1_000"),
        ("--samples", "１２"),
        ("--budget-evaluations", "1_0"),
        ("--budget-seconds", "１"),
        ("--budget-seconds", "1_0"),
    ],
)
def test_digits_that_are_not_ascii_or_hold_underscores_are_refused(
    flag: str, value: str, tmp_path: Path
) -> None:
    line = refused(tmp_path, *MAP, flag, value)
    expect(line, re.escape(flag), re.escape(repr(value)), r"is not a (valid integer|number)", "0-9")


def test_search_s_whole_number_flags_take_ascii_digits_only(tmp_path: Path) -> None:
    for flag in ("--trials", "--max-failures"):
        expect(
            refused(tmp_path, "search", "quickstart", flag, "２"),
            flag,
            "'２' is not a valid integer",
        )


# ---- an empty or a repeated item --------------------------------------------------------------
@pytest.mark.parametrize(
    "layer, item", [("K=16,,C=16", 2), ("K=16,C=16,", 3), (",K=16", 1), ("K=16, ,C=16", 2)]
)
def test_an_empty_item_of_layer_is_refused_naming_it(layer: str, item: int, tmp_path: Path) -> None:
    line = refused(tmp_path, "map", "--arch", "simba-chip", "--layer", layer, "--dataflow", "ws")
    expect(line, rf"--layer: item {item} of {re.escape(repr(layer))} is empty")


@pytest.mark.parametrize(
    "objective, key", [("energy=1,energy=2", "energy"), ("latency=1,delay=2", "latency")]
)
def test_a_weight_given_twice_is_refused(objective: str, key: str, tmp_path: Path) -> None:
    line = refused(tmp_path, *MAP, "--objective", objective)
    expect(line, rf"--objective: {key} is given twice in {re.escape(repr(objective))}")


@pytest.mark.parametrize("objective", ["energy=１", "energy=1_0,latency=1"])
def test_an_objective_weight_takes_ascii_digits_only(objective: str, tmp_path: Path) -> None:
    line = refused(tmp_path, *MAP, "--objective", objective)
    expect(line, rf"--objective: cannot read objective {re.escape(repr(objective))}")


def test_two_rules_for_one_level_are_refused(tmp_path: Path) -> None:
    flow = tmp_path / "d.yaml"
    flow.write_text(
        "name: mine\nrules:\n  - {level: WeightBuffer, stationary: [weights]}\n"
        "  - {level: InputBuffer, temporal: []}\n  - {level: WeightBuffer, stationary: [inputs]}\n"
    )
    line = refused(tmp_path, *MAP[:-1], str(flow))
    expect(line, r"d\.yaml: rules: rules 1 and 3 are both for level 'WeightBuffer'")


def _space(tmp_path: Path, workloads: str) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(QUICKSTART.replace("workloads: [resnet18]", f"workloads: {workloads}"))
    return path


@pytest.mark.parametrize(
    "workloads",
    [
        "[resnet18, resnet18]",
        "[resnet18, 'resnet18:batch=1']",
        "[resnet18, {workload: resnet18, batch: 1}]",
    ],
)
def test_a_workload_listed_twice_is_refused(workloads: str, tmp_path: Path) -> None:
    assert "workloads: [resnet18]" in QUICKSTART
    space = _space(tmp_path, workloads)
    line = refused(tmp_path, "search", str(space), "--storage", str(tmp_path / "j.journal"))
    expect(line, r"s\.yaml: workloads\.1: .* is workloads\.0 again", "with a weight")


def test_a_workload_at_two_batches_is_two_workloads(tmp_path: Path) -> None:
    space = load_space(_space(tmp_path, "[resnet18, {workload: resnet18, batch: 2}]"))
    assert [w.batch for w in space.workloads] == [None, 2]


# ---- prices in a user's files are bad input when the file is read ----------------------------
ROW = (
    "{capacity_bytes: 4096, width_bits: 64, read_pj: 2.06, write_pj: 2.31, leakage_uw: 5.0, "
    "area_um2: 8510}"
)
SHEET = {
    "read_pj: true": ("read_pj: 2.06", "read_pj: true", r"read_pj: expected a number, got True"),
    "read_pj: .nan": ("read_pj: 2.06", "read_pj: .nan", r"read_pj: expected a finite number"),
    "read_pj: -1": ("read_pj: 2.06", "read_pj: -1", r"read_pj: Input should be greater than 0"),
    "read_pj: 1e19": (
        "read_pj: 2.06",
        "read_pj: 1e19",
        r"read_pj: expected at most 1e\+18.*got 1e\+19",
    ),
    "area: 1e300": ("area_um2: 8510", "area_um2: 1e300", r"area_um2: expected at most 1e\+18"),
    "leakage: .inf": ("leakage_uw: 5.0", "leakage_uw: .inf", r"leakage_uw: expected a finite"),
    "capacity: true": (
        "capacity_bytes: 4096",
        "capacity_bytes: true",
        r"capacity_bytes: expected a whole number",
    ),
}


@pytest.mark.parametrize("case", SHEET)
def test_a_datasheet_s_bad_number_names_the_file_and_field(case: str, tmp_path: Path) -> None:
    old, new, why = SHEET[case]
    assert ROW in DATASHEET
    (tmp_path / "t.yaml").write_text(DATASHEET.replace(ROW, ROW.replace(old, new)))
    line = refused(tmp_path, *MAP, "--cost-model", f"table:{tmp_path / 't.yaml'}")
    expect(line, r"t\.yaml: sram\.rows\.6\.", why)
    assert "plug-in" not in line


def test_a_datasheet_price_scaled_past_the_bound_names_the_file(tmp_path: Path) -> None:
    """Rows within the bound that an architecture at another node scales past it."""
    sheet = re.sub(r"read_pj: [0-9.]+", "read_pj: 9.9e17", DATASHEET)
    (tmp_path / "t.yaml").write_text(sheet)
    (tmp_path / "a.yaml").write_text("template: simba\ntechnology_nm: 65\nclock_ghz: 0.5\n")
    line = refused(
        tmp_path,
        "map",
        "--arch",
        str(tmp_path / "a.yaml"),
        "--layer",
        L,
        "--dataflow",
        "ws",
        "--cost-model",
        f"table:{tmp_path / 't.yaml'}",
    )
    expect(line, r"read_pj: the datasheet .*t\.yaml comes to 3\.\d+e\+18 .*more than 1e\+18")


ERT = "{name: read, energy: 40.0}"


@pytest.mark.parametrize(
    "old, new, field, why",
    [
        (
            ERT,
            "{name: read, energy: -40.0}",
            r"ERT\.MainMemory\.read",
            r"expected a number >= 0, got -40",
        ),
        (
            ERT,
            "{name: read, energy: .nan}",
            r"ERT\.MainMemory\.read",
            r"expected a finite number, got nan",
        ),
        (
            ERT,
            "{name: read, energy: .inf}",
            r"ERT\.MainMemory\.read",
            r"expected a finite number, got inf",
        ),
        (ERT, "{name: read, energy: 1e19}", r"ERT\.MainMemory\.read", r"expected at most 1e\+18"),
        (
            ERT,
            "{name: read, energy: true}",
            r"ERT\.MainMemory\.read",
            r"expected a number, got True",
        ),
        ("area: 900.0", "area: -1", r"ART\.Buffer", r"area \(um\^2\): expected a number >= 0"),
        ("area: 900.0", "area: 1e300", r"ART\.Buffer", r"expected at most 1e\+18"),
    ],
)
def test_a_timeloop_ert_or_art_number_is_bad_input_naming_the_field(
    old: str, new: str, field: str, why: str, tmp_path: Path
) -> None:
    assert old in TIMELOOP
    (tmp_path / "tl.yaml").write_text(TIMELOOP.replace(old, new, 1))
    line = refused(tmp_path, "evaluate", "--timeloop", str(tmp_path / "tl.yaml"))
    expect(line, r"tl\.yaml: " + field, why)


# ---- a Timeloop file's layer, architecture and version ---------------------------------------
INSTANCE = "instance: {R: 3, P: 16}"
BUFFER = "width: 8, datawidth: 8, meshX: 1"
TIMELOOP_CASES = {
    "P 2**70": (
        INSTANCE,
        f"instance: {{R: 3, P: {2**70}}}",
        r"problem\.instance\.P: must be a whole number in 1\.\.2,147,483,647",
    ),
    "R true": (INSTANCE, "instance: {R: true, P: 16}", r"problem\.instance\.R: .*got True"),
    "Wstride 0": (
        INSTANCE,
        "instance: {R: 3, P: 16, Wstride: 0}",
        r"problem\.instance\.Wstride: .*got 0",
    ),
    "10**12 instances": (
        "name: Buffer[1..1]\n",
        "name: Buffer[1..1000000000000]\n",
        r"architecture\.Buffer: mesh_y: .*65536",
    ),
    "version 0.2": (
        "version: '0.4'\n  subtree",
        "version: '0.2'\n  subtree",
        r"architecture\.version: version '0\.2': .*'0\.4' only",
    ),
    "version 0.3": (
        "version: '0.4'\n  subtree",
        "version: 0.3\n  subtree",
        r"architecture\.version: version 0\.3",
    ),
    "width 0": (
        BUFFER,
        "width: 0, datawidth: 8, meshX: 1",
        r"architecture\.Buffer: width must be a finite number > 0, got 0",
    ),
    "datawidth 0": (
        BUFFER,
        "width: 8, datawidth: 0, meshX: 1",
        r"datawidth must be a finite number > 0",
    ),
    "meshX 0": (BUFFER, "width: 8, datawidth: 8, meshX: 0", r"meshX must be a finite number > 0"),
    "meshX 2.5": (
        BUFFER,
        "width: 8, datawidth: 8, meshX: 2.5",
        r"meshX must be a whole number, got 2\.5",
    ),
    "width true": (
        BUFFER,
        "width: true, datawidth: 8, meshX: 1",
        r"width must be a number, got True",
    ),
    "bandwidth 0": (
        BUFFER,
        "width: 8, datawidth: 8, meshX: 1, read_bandwidth: 0",
        r"read_bandwidth must be a finite number > 0",
    ),
    "word bits 2000": (
        BUFFER,
        "width: 2000, datawidth: 2000, meshX: 1",
        r"architecture\.Buffer: word_bits: Input should be less than or equal to 1024",
    ),
}


@pytest.mark.parametrize("case", TIMELOOP_CASES)
def test_a_bad_timeloop_file_is_one_line_naming_the_file_and_field(
    case: str, tmp_path: Path
) -> None:
    old, new, why = TIMELOOP_CASES[case]
    assert old in TIMELOOP
    (tmp_path / "tl.yaml").write_text(TIMELOOP.replace(old, new, 1))
    line = refused(tmp_path, "evaluate", "--timeloop", str(tmp_path / "tl.yaml"))
    expect(line, r"tl\.yaml: ", why)
    assert "validation error" not in line and not line.startswith("error: Layer")


def test_a_timeloop_version_written_as_a_number_is_read(tmp_path: Path) -> None:
    path = tmp_path / "tl.yaml"
    path.write_text(TIMELOOP.replace("version: '0.4'\n  subtree", "version: 0.4\n  subtree", 1))
    assert mg.interop.load_timeloop(path).layer.P == 16


# ---- ONNX: a zero batch, an IR version the installed onnx does not know ----------------------
def test_an_onnx_batch_of_zero_is_zero_sized_unless_a_batch_is_given(tmp_path: Path) -> None:
    path = conv_model(tmp_path / "m.onnx", x_shape=(0, 8, 16, 16))
    raises(
        lambda: load_onnx(path),
        r"m\.onnx: graph\.input: dimension 0 \(the batch\) of graph input 'x' is 0, zero-sized",
    )
    network, _ = load_onnx(path, batch=2)
    assert network.layers[0].layer.N == 2


def test_an_onnx_ir_version_newer_than_onnx_knows_is_refused(tmp_path: Path) -> None:
    path = conv_model(tmp_path / "m.onnx")
    model = onnx.load(str(path))
    model.ir_version = onnx.IR_VERSION + 1
    onnx.save(model, str(path))
    line = refused(
        tmp_path, "evaluate", "--arch", "simba-chip", "--dataflow", "ws", "--workload", str(path)
    )
    expect(
        line,
        rf"m\.onnx: ir_version: IR version {onnx.IR_VERSION + 1} is newer",
        rf"IR versions 1 to {onnx.IR_VERSION}",
    )


# ---- an explicit architecture's mesh -----------------------------------------------------------
@pytest.mark.parametrize(
    "mesh, why",
    [
        (f"mesh_x: {2**40}", r"compute\.mesh_x: Input should be less than or equal to 65536"),
        (
            "mesh_x: 65536\n  mesh_y: 65536",
            r"compute: .*65,536 x 65,536 = 4,294,967,296 instances, more than 2,147,483,647",
        ),
        ("mesh_x: true", r"compute\.mesh_x: expected a whole number, got True"),
    ],
)
def test_an_explicit_architecture_bounds_its_mesh(mesh: str, why: str, tmp_path: Path) -> None:
    assert "mesh_x: 2" in TINY_ARCH
    (tmp_path / "a.yaml").write_text(TINY_ARCH.replace("mesh_x: 2", mesh))
    line = refused(tmp_path, "map", "--arch", str(tmp_path / "a.yaml"), "--layer", "K=4,C=2,P=4")
    expect(line, r"a\.yaml: ", why)


# ---- an architecture file's name and path ------------------------------------------------------
@pytest.mark.parametrize("name", ["5", "''", "[a]", "true"])
def test_an_architecture_name_that_is_no_text_names_the_file(name: str, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(f"template: simba\nname: {name}\n")
    line = refused(
        tmp_path, "map", "--arch", str(tmp_path / "a.yaml"), "--layer", L, "--dataflow", "ws"
    )
    expect(line, r"a\.yaml: name: expected text that is not empty")
    assert "build()" not in line


@pytest.mark.parametrize(
    "target, why",
    [
        ("nowhere.yaml", r"file not found \(a symlink to a path that does not exist\)"),
        ("x.yaml", r"cannot read the file: Too many levels of symbolic links"),
    ],
)
def test_an_architecture_path_that_is_a_broken_symlink_says_so(
    target: str, why: str, tmp_path: Path
) -> None:
    (tmp_path / "x.yaml").symlink_to(tmp_path / target)
    line = refused(
        tmp_path, "map", "--arch", str(tmp_path / "x.yaml"), "--layer", L, "--dataflow", "ws"
    )
    expect(line, r"x\.yaml: ", why)
    assert "no such file, preset or template" not in line


# ---- NaN in a mapper option --------------------------------------------------------------------
@pytest.mark.parametrize("value, shown", [(".nan", "nan"), (".inf", "inf")])
def test_nan_for_a_mapper_option_says_nan(value: str, shown: str, tmp_path: Path) -> None:
    space = tmp_path / "s.yaml"
    space.write_text(QUICKSTART.replace("options: {samples: 1000", f"options: {{samples: {value}"))
    assert space.read_text() != QUICKSTART
    raises(
        lambda: load_space(space),
        rf"s\.yaml: mapper\.options: samples: expected a finite number, got {shown}",
    )


# ---- a big YAML file without aliases ------------------------------------------------------------
# e2e though it starts nothing: parsing 1.7 M values takes about 9 CPU-s here, a sixth of the
# edit loop's minute (-m 'not e2e')
@pytest.mark.e2e
def test_a_big_yaml_file_without_aliases_is_judged_by_its_size_only() -> None:
    many = "[" + "0, " * 1_100_000 + "]"
    assert len(parse_yaml(f"a: &one 1\nb: *one\nc: {many}\n", "t")["c"]) == 1_100_000
    shared = "[" + "0, " * 600_000 + "]"
    raises(
        lambda: parse_yaml(f"a: &x {shared}\nb: *x\n", "t"),
        r"its aliases \(\*anchor\) expand it to 1,200,005 values, more than 1,000,000",
    )


# ---- the layer builders name their own arguments -----------------------------------------------
@pytest.mark.parametrize(
    "call, field",
    [
        (lambda: mg.gemm(m=2**40, k=16, n=16), r"gemm\(\): m: "),
        (
            lambda: mg.fully_connected(in_features=16, out_features=2**31),
            r"fully_connected\(\): out_features: ",
        ),
        (lambda: mg.matmul(m=16, k=16, n=16, heads=2**31), r"matmul\(\): heads: "),
        (
            lambda: mg.depthwise_conv2d(channels=2**40, out_height=4, out_width=4),
            r"depthwise_conv2d\(\): channels: ",
        ),
        (
            lambda: mg.conv2d(
                in_channels=8, out_channels=8, out_height=4, out_width=4, kernel=(3, 2**40)
            ),
            r"conv2d\(\): kernel: ",
        ),
    ],
)
def test_a_layer_builder_names_its_argument_not_the_loop_dimension(call: Any, field: str) -> None:
    message = raises(call, field, r"1\.\.2,147,483,647")
    assert "Layer:" not in message


def test_a_magnet_error_clips_a_long_number_wherever_it_is() -> None:
    error = MagnetError(f"got {NINES}", source=f"f{NINES}.yaml", field=NINES)
    assert str(error).count("9999999999...9999 (5000 digits)") == 3
    short_numbers(str(error))
