"""Bad input: one clear message naming the file and the field, never a traceback.

Every case runs twice: through the library (it must raise a ``ValueError`` subclass whose
message names the file, the field and, where relevant, what is allowed) and through
``magnet evaluate`` (exit status 2, the same message on stderr after "error:", nothing on
stdout, no traceback). Two cases also run the real command in a subprocess.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.design import build_design
from magnet.errors import InvalidMappingError, MagnetError
from magnet.interop.timeloop import load_timeloop
from magnet.mapping import Mapping
from magnet.model.evaluate import evaluate_mapping
from magnet.templates import load_arch
from magnet.workload.layer import parse_layer
from tests.conftest import DATA, REPO

TINY_ARCH = DATA / "tiny_arch.yaml"  # DRAM -> RF (64 B, 1 instance) -> 2 MACs along x
TINY_MAPPING = DATA / "tiny_mapping.yaml"  # for K=4,C=2,P=4
TIMELOOP = DATA / "timeloop_conv1d.yaml"
TINY_LAYER = "K=4,C=2,P=4"


def run_like_cli(
    arch: str | None = None,
    layer: str | None = None,
    mapping: str | None = None,
    timeloop: str | None = None,
):
    """What ``magnet evaluate`` does, as library calls (no error handling of our own)."""
    if timeloop is not None:
        tl = load_timeloop(timeloop)
        d = tl.design()
        return evaluate_mapping(tl.layer, d.arch, d.costs, tl.mapping, source=timeloop)
    a = load_arch(arch)
    ly = parse_layer(layer)
    m = Mapping.from_yaml(mapping)
    d = build_design(a)
    return evaluate_mapping(ly, d.arch, d.costs, m, source=mapping)


@dataclass
class Case:
    """``files`` are written to a temporary folder; ``{d}`` in arguments is that folder."""

    args: dict[str, str]
    expect: list[str]  # regular expressions that must all be found in the message
    files: dict[str, str] = field(default_factory=dict)
    error: type[Exception] = MagnetError

    def resolve(self, folder: Path) -> dict[str, str]:
        for name, text in self.files.items():
            (folder / name).write_text(text)
        return {k: v.format(d=folder) for k, v in self.args.items()}


def arch_case(name: str, text: str, expect: list[str]) -> Case:
    return Case(
        args={"arch": f"{{d}}/{name}", "layer": TINY_LAYER, "mapping": str(TINY_MAPPING)},
        files={name: text},
        expect=[re.escape(name), *expect],
    )


def mapping_case(text: str, expect: list[str], layer: str = TINY_LAYER, **kw) -> Case:
    return Case(
        args={"arch": str(TINY_ARCH), "layer": layer, "mapping": "{d}/bad_mapping.yaml"},
        files={"bad_mapping.yaml": text},
        expect=[r"bad_mapping\.yaml", *expect],
        **kw,
    )


def layer_case(text: str, expect: list[str]) -> Case:
    return Case(
        args={"arch": str(TINY_ARCH), "layer": text, "mapping": str(TINY_MAPPING)},
        expect=["--layer", *expect],
    )


EXPLICIT = """\
name: x
{top}levels:
  - {{name: DRAM, component: dram}}
  - {{name: RF, component: regfile, {rf}}}
compute: {{name: MAC, mesh_x: 2{mac}}}
"""


def explicit(top: str = "", rf: str = "capacity: 64B", mac: str = "") -> str:
    return EXPLICIT.format(top=top, rf=rf, mac=mac)


def timeloop_case(
    name: str,
    edit: Callable[[dict], None] | None,
    expect: list[str],
    text: str | None = None,
) -> Case:
    """The test's own Timeloop input (tests/data/timeloop_conv1d.yaml) with one thing broken."""
    if text is None:
        data = copy.deepcopy(yaml.safe_load(TIMELOOP.read_text()))
        edit(data)
        text = yaml.safe_dump(data, sort_keys=False)
    return Case(args={"timeloop": f"{{d}}/{name}"}, files={name: text}, expect=[name, *expect])


def components(data: dict) -> list[dict]:
    return data["architecture"]["subtree"][0]["local"]


CASES: dict[str, Case] = {
    # ---- architecture files ----------------------------------------------------------------
    "template-unknown-field": arch_case(
        "typo.yaml",
        "template: simba\nvector_widht: 8\n",
        [r"vector_widht: unknown field", r"allowed: .*\bvector_width\b"],
    ),
    "explicit-unknown-level-field": arch_case(
        "levels.yaml",
        explicit(rf="capacity: 64B, sizee: 3"),
        [r"levels\.1\.sizee: unknown field", r"allowed: .*\bcapacity\b.*"],
    ),
    "template-negative-size": arch_case(
        "neg.yaml",
        "template: simba\nweight_buffer: -4KiB\n",
        [r"weight_buffer", r"'-4KiB'", r"(> 0|not a size)"],
    ),
    "template-negative-bytes": arch_case(
        "negint.yaml", "template: simba\nweight_buffer: -4096\n", [r"weight_buffer", r"> 0"]
    ),
    "template-zero-size": arch_case(
        "zero.yaml", "template: simba\nweight_buffer: 0\n", [r"weight_buffer", r"must be > 0"]
    ),
    "explicit-zero-capacity": arch_case(
        "cap0.yaml", explicit(rf="capacity: 0"), [r"levels\.1", r"capacity must be > 0"]
    ),
    "unknown-template": arch_case(
        "tmpl.yaml",
        "template: simbaa\n",
        [r"template: unknown template 'simbaa'", r"allowed: simba, eyeriss, systolic"],
    ),
    "unknown-preset": Case(
        args={"arch": "simba-chipp", "layer": TINY_LAYER, "mapping": str(TINY_MAPPING)},
        expect=[r"simba-chipp", r"no such file, preset or template", r"presets: simba-chip"],
    ),
    "missing-arch-file": Case(
        args={"arch": "{d}/nothere.yaml", "layer": TINY_LAYER, "mapping": str(TINY_MAPPING)},
        expect=[r"nothere\.yaml", r"no such file", r"presets: .*eyeriss-chip"],
    ),
    # ---- mapping files (tiny_arch.yaml: levels DRAM, RF; RF fans out 2 along x) ------------
    "mapping-unknown-level": mapping_case(
        "mapping:\n  - {target: GLB, temporal: {K: 4}}\n",
        [r"target", r"unknown level 'GLB'", r"the architecture has: DRAM, RF"],
    ),
    "mapping-unknown-dimension": mapping_case(
        "mapping:\n  - {target: DRAM, temporal: {K: 4, X: 2}}\n",
        [r"levels\.0\.temporal", r"unknown dimension 'X'", r"allowed: N, G, K, C, P, Q, R, S"],
    ),
    "mapping-zero-factor": mapping_case(
        "mapping:\n  - {target: DRAM, temporal: {K: 0}}\n",
        [r"levels\.0\.temporal", r"factor of K must be a whole number >= 1, got 0"],
    ),
    "mapping-negative-factor": mapping_case(
        "mapping:\n  - {target: DRAM, temporal: {K: 4}}\n  - {target: RF, spatial_x: {P: -2}}\n",
        [r"levels\.1\.spatial_x", r"factor of P must be a whole number >= 1, got -2"],
    ),
    "mapping-does-not-cover": mapping_case(
        # K: DRAM 2 x RF 1 = 2 < 4.
        "mapping:\n"
        "  - {target: DRAM, temporal: {K: 2}}\n"
        "  - {target: RF, temporal: {P: 4, C: 2}}\n",
        [r"\bK\b", r"multiply to 2", r"K=4"],
        error=InvalidMappingError,
    ),
    "tile-does-not-fit": mapping_case(
        # Every loop inside the RF (64 B = 512 bits) for K=4,C=2,P=16: weights K4 x C2 = 8,
        # inputs C2 x P16 = 32, outputs K4 x P16 = 64 words of 8 bits -> 104 x 8 = 832 bits,
        # over by 832 - 512 = 320 bits = 40 bytes.
        "mapping:\n  - {target: RF, temporal: {K: 4, C: 2, P: 16}}\n",
        [
            r"'RF'",
            r"weights 8 words x 8 bits; inputs 32 words x 8 bits; outputs 64 words x 8 bits",
            r"holds 512 bits",
            r"over by 320 bits \(40 bytes\)",
        ],
        layer="K=4,C=2,P=16",
        error=InvalidMappingError,
    ),
    "spatial-fanout-too-large": mapping_case(
        "mapping:\n"
        "  - {target: DRAM, temporal: {P: 4, C: 2}}\n"
        "  - {target: RF, spatial_x: {K: 4}}\n",
        [r"RF", r"spatial_x uses a fan-out of 4 below 'RF', which has only 2 along x"],
        error=InvalidMappingError,
    ),
    "missing-mapping-file": Case(
        args={"arch": str(TINY_ARCH), "layer": TINY_LAYER, "mapping": "{d}/nomap.yaml"},
        expect=[r"nomap\.yaml", r"file not found"],
    ),
    # ---- --layer ------------------------------------------------------------------------------
    "layer-unknown-key": layer_case(
        "K=4,Z=2", [r"unknown key 'Z'", r"allowed: N, G, K, C, P, Q, R, S, stride"]
    ),
    "layer-zero": layer_case("K=4,C=0", [r"C must be >= 1, got 0"]),
    "layer-not-key-value": layer_case("K=4,C", [r"'C' is not KEY=INTEGER", r"keys: N, G, K"]),
    "layer-negative": layer_case("K=-4", [r"K must be >= 1, got -4"]),
    # ---- Timeloop inputs ------------------------------------------------------------------------
    "timeloop-invalid-yaml": timeloop_case(
        "broken.yaml",
        None,
        [r"not valid YAML", r"line 1, column 21"],
        text="problem: {instance: [\n  R: 3\n",
    ),
    "timeloop-missing-problem": timeloop_case(
        "noproblem.yaml", lambda d: d.pop("problem"), [r"problem", r"missing 'problem'"]
    ),
    "timeloop-unknown-dimension": timeloop_case(
        "dimz.yaml",
        lambda d: d["problem"]["instance"].update(Z=2),
        [r"problem\.instance\.Z", r"unknown dimension 'Z'", r"allowed: N, G, K, C, P, Q, R, S"],
    ),
    "timeloop-storage-count-vs-mesh": timeloop_case(
        "mesh.yaml",
        lambda d: components(d)[1].update(name="Buffer[1..4]", attributes={"meshX": 3}),
        [r"architecture\.Buffer", r"4 instances but meshX x meshY = 3 x 1"],
    ),
    "timeloop-missing-file": Case(
        args={"timeloop": "{d}/notimeloop.yaml"}, expect=[r"notimeloop\.yaml", r"file not found"]
    ),
}


def check_message(message: str, case: Case) -> None:
    for pattern in case.expect:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"


@pytest.mark.parametrize("name", CASES)
def test_library_raises_one_value_error(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    args = case.resolve(tmp_path)
    with pytest.raises(ValueError) as info:
        run_like_cli(**args)
    assert isinstance(info.value, case.error)
    check_message(str(info.value), case)


def cli_args(args: dict[str, str]) -> list[str]:
    out = ["evaluate"]
    for key, value in args.items():
        out += [f"--{key}", value]
    return out


def check_cli_output(code: int, stdout: str, stderr: str, case: Case) -> None:
    assert code == 2, (code, stdout, stderr)
    assert stdout == ""
    assert "Traceback" not in stderr
    assert stderr.startswith("error: ")
    assert stderr.count("error:") == 1
    check_message(stderr, case)


@pytest.mark.parametrize("name", CASES)
def test_cli_exits_2_with_the_message(name: str, tmp_path: Path) -> None:
    case = CASES[name]
    result = CliRunner().invoke(main, cli_args(case.resolve(tmp_path)))
    check_cli_output(result.exit_code, result.stdout, result.stderr, case)


@pytest.mark.subprocess
@pytest.mark.parametrize(
    ("command", "name"),
    [
        ([sys.executable, "-m", "magnet.cli"], "template-unknown-field"),
        (["magnet"], "tile-does-not-fit"),
    ],
)
def test_real_process_exits_2_without_traceback(command, name: str, tmp_path: Path) -> None:
    if command == ["magnet"] and shutil.which("magnet") is None:
        pytest.skip("the magnet console script is not installed")
    case = CASES[name]
    proc = subprocess.run(
        [*command, *cli_args(case.resolve(tmp_path))],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    check_cli_output(proc.returncode, proc.stdout, proc.stderr, case)


def test_a_good_run_of_the_same_files_succeeds(tmp_path: Path) -> None:
    # The fixtures the bad cases start from are themselves valid (so each case breaks one thing).
    result = CliRunner().invoke(
        main,
        [
            "evaluate",
            "--arch",
            str(TINY_ARCH),
            "--layer",
            TINY_LAYER,
            "--mapping",
            str(TINY_MAPPING),
        ],
    )
    assert result.exit_code == 0, result.output
    assert load_timeloop(TIMELOOP).layer.macs == 48


# ---- bugs: cases that should give a clear message but do not -----------------------------------
# Cases that were bugs when this suite was written (the reason says what was wrong); they
# are fixed and stay here as regression tests.
FIXED: dict[str, tuple[Case, str]] = {
    "explicit-unknown-top-field": (
        arch_case(
            "top.yaml",
            explicit(top="frequency: 3\n"),
            [r"frequency: unknown field", r"allowed: .*\blevels\b.*\bcompute\b"],
        ),
        "was: arch/level_tree.py _explain() always lists _LevelFile's fields as 'allowed', so an "
        "unknown top-level key of an explicit arch file is answered with the fields of a "
        "storage level (name, component, capacity_bits, ...) instead of name, levels, "
        "compute, clock_ghz, technology_nm",
    ),
    "explicit-unknown-compute-field": (
        arch_case(
            "mac.yaml",
            explicit(mac=", meshx: 3"),
            [r"compute\.meshx: unknown field", r"allowed: name, component, mesh_x, mesh_y"],
        ),
        "was: an unknown field under compute: lists the storage-level fields as allowed "
        "(capacity_bits, keeps, ...), not ComputeLevel's (name, component, mesh_x, mesh_y, "
        "attributes)",
    ),
    "explicit-negative-capacity": (
        arch_case("capneg.yaml", explicit(rf="capacity: -4KiB"), [r"levels\.1\.capacity"]),
        "was: 'capacity: -4KiB' in an explicit arch file is reported at 'levels.1' with the "
        "whole level dict as the value; the message never names the field 'capacity'",
    ),
    "layer-repeated-key": (
        layer_case("K=4,K=2,C=2,P=4", [r"\bK\b.*(twice|repeated|more than once)"]),
        "was: parse_layer accepts 'K=4,K=2' silently and keeps the last value (mapping "
        "factors reject a repeated dimension, --layer does not)",
    ),
    "layer-huge-value": (
        layer_case("K=99999999999999999999", [r"\bK\b"]),
        "was: --layer K=99999999999999999999 is accepted by parse_layer and then crashes in "
        "numpy with OverflowError (a traceback from the CLI, not a ValueError)",
    ),
    "mapping-outermost-bypass": (
        mapping_case(
            "mapping:\n  - {target: DRAM, temporal: {K: 4, C: 2, P: 4}, keep: [weights]}\n"
            "  - {target: RF, keep: [weights]}\n",
            [r"DRAM", r"inputs"],
            error=InvalidMappingError,
        ),
        "was: check_structure's docstring promises that the outermost level keeps everything "
        "it must, but nothing checks it: a mapping whose every level bypasses inputs and "
        "outputs evaluates, and those operands cost nothing and come from nowhere",
    ),
    "timeloop-compute-count-vs-mesh": (
        timeloop_case(
            "macmesh.yaml",
            lambda d: components(d)[2].update(name="MACC[1..4]", attributes={"meshX": 3}),
            [r"MACC", r"4 instances but meshX x meshY = 3 x 1"],
        ),
        "was: interop/timeloop.py checks count == meshX x meshY for storage components only; "
        "'MACC[1..4]' with meshX: 3 silently becomes 3 MACs (utilisation 1/3)",
    ),
    "timeloop-permutation-unknown-dimension": (
        timeloop_case(
            "perm.yaml",
            lambda d: d["mapping"][0].update(permutation="RZ"),
            [r"mapping\[0\]", r"unknown dimension 'Z'"],
        ),
        "was: an unknown dimension in a Timeloop mapping permutation raises a bare ValueError "
        "from parse_dim (no file, no field); the CLI prints a traceback",
    ),
    "timeloop-zero-stride": (
        timeloop_case(
            "stride.yaml",
            lambda d: d["problem"]["instance"].update(Wstride=0),
            [r"problem\.instance\.Wstride"],
        ),
        "was: problem.instance.Wstride: 0 escapes as a pydantic ValidationError from Layer(); "
        "the CLI prints a traceback",
    ),
    "timeloop-zero-factor": (
        timeloop_case(
            "factor.yaml",
            lambda d: d["mapping"][0].update(factors="R=0 P=1"),
            [r"mapping\[0\]", r"R"],
        ),
        "was: a zero factor in a Timeloop mapping escapes as a pydantic ValidationError from "
        "LevelMapping(); the CLI prints a traceback",
    ),
    "timeloop-energy-not-a-number": (
        timeloop_case(
            "ert.yaml",
            lambda d: d["ERT"]["tables"][0]["actions"][0].update(energy="abc"),
            [r"ERT", r"MainMemory"],
        ),
        "was: a non-numeric ERT energy raises a bare ValueError from float() in _ert() (no "
        "file, no field); the CLI prints a traceback",
    ),
    "timeloop-instance-not-a-mapping": (
        timeloop_case(
            "inst.yaml",
            lambda d: d["problem"].update(instance=[3, 16]),
            [r"problem\.instance"],
        ),
        "was: problem.instance given as a list raises AttributeError in _problem() (not a "
        "ValueError); the CLI prints a traceback",
    ),
}


@pytest.mark.parametrize(
    "name",
    list(FIXED),
)
def test_library_fixed_cases(name: str, tmp_path: Path) -> None:
    case = FIXED[name][0]
    args = case.resolve(tmp_path)
    with pytest.raises(ValueError) as info:
        run_like_cli(**args)
    assert isinstance(info.value, case.error)
    check_message(str(info.value), case)


@pytest.mark.parametrize(
    "name",
    list(FIXED),
)
def test_cli_fixed_cases(name: str, tmp_path: Path) -> None:
    case = FIXED[name][0]
    result = CliRunner().invoke(main, cli_args(case.resolve(tmp_path)))
    check_cli_output(result.exit_code, result.stdout, result.stderr, case)


@pytest.mark.subprocess
def test_ctrl_c_in_a_command_is_one_line_and_exit_130() -> None:
    import signal

    from tests.services import magnet_process

    # a pipelined ResNet-50 on 36 chiplets maps 144 layer shapes: seconds of work
    args = ["--arch", "simba-package-36", "--workload", "resnet50", "--dataflow", "ws"]
    proc = magnet_process("evaluate", *args, "--pipeline")
    # interrupt once it works (its first layer's progress line), not after a fixed sleep that
    # on a loaded machine lands during the imports
    first = proc.stderr.readline()
    assert first.startswith("[1/"), first
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    err = first + err
    assert proc.returncode == 130, err
    assert err.rstrip().splitlines()[-1] == "interrupted: nothing was left half-written"
    assert "Traceback" not in err and "Aborted" not in err and out == ""


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "args, message",
    [
        (["map", "--seed", "-1"], "Invalid value for '--seed': -1 is not in the range"),
        (["map", "--seed", "4294967296"], "0<=x<=4294967295"),
        (["search", "quickstart", "--trials", "1.5e0"], "'1.5e0' is not a valid integer"),
        (["map", "--bogus"], "No such option '--bogus'"),
        (["nosuch"], "No such command 'nosuch'"),
        (["search"], "Missing argument 'SPACE'"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    """click's own refusals (a flag's type or range, an unknown flag or command) are one line
    like every other bad input, not click's usage block, in a real process."""
    from tests.services import magnet_command

    done = subprocess.run(magnet_command(*args), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and message in line and "-h' for help)" in line


def test_whole_number_flags_read_an_exponent_as_files_do() -> None:
    # 2e1 evaluations = 20, as `budget: {evaluations: 2e1}` in a space reads
    args = ["map", "--arch", str(TINY_ARCH), "--layer", TINY_LAYER, "--json"]
    out = CliRunner().invoke(main, [*args, "--budget-evaluations", "2e1", "--samples", "1e1"])
    assert out.exit_code == 0, out.output
    assert "the budget (20 mappings) ended the search" in out.stderr
