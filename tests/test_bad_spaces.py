"""Bad search spaces (issue 29, item 4) and paths that are not YAML files (item 7), as a user
gives them: each is refused before any work with one line naming the file (or flag), the
field and what is allowed, exit 2, nothing on stdout, no study written and every file of the
user unchanged. Python callers get the same message as a ``MagnetError``."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.files import MAX_YAML_BYTES, read_yaml
from magnet.search import search
from magnet.search.design_space import (
    MAX_GRID_DESIGNS,
    ParamRange,
    SearchSpace,
    builtin_spaces,
    constraint_violations,
    load_space,
    space_from_data,
)
from tests.conftest import DATA

SPACE = DATA / "search" / "small_space.yaml"
NET = DATA / "search" / "small_net.yaml"
PARAMS = yaml.safe_load(SPACE.read_text())["params"]


def space_data(**changes: Any) -> dict[str, Any]:
    data = yaml.safe_load(SPACE.read_text())
    data["workloads"] = [str(NET)]
    data.update(changes)
    return data


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refused(tmp_path: Path, space: Path, *extra: str, where: str | None = None) -> str:
    """``magnet search SPACE``: exit 2 with one line on stderr starting ``error: WHERE: ``
    (the space file by default), nothing on stdout, no storage made, the space file and the
    network it names unchanged. Returns the line."""
    storage = tmp_path / "studies.journal"
    files = [p for p in (space, NET) if p.is_file()]
    before = {p: digest(p) for p in files}
    out = CliRunner().invoke(
        main, ["search", str(space), "--storage", str(storage), "--no-report", *extra]
    )
    assert out.exit_code == 2, out.output
    assert out.stdout == "" and "Traceback" not in out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith(f"error: {where or space}: "), lines[0]
    assert not storage.exists()  # no study, no trial, no lock
    assert {p: digest(p) for p in files} == before
    return lines[0]


def write(tmp_path: Path, data: dict[str, Any] | str, name: str = "space.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


WIDE = {name: {"int": [1, 256]} for name in ("vector_units", "vector_width", "pe_rows", "pe_cols")}
FORM = r"a constraint is a comparison of parameters, e.g\. weight_buffer >= 256 \* vector_units"
ONE_CHIP = (
    r"every design of this space is a single chip \(template {}\); use a template of packages"
)
# case -> (changes to the small space, the message as a regular expression)
BAD_SPACES: dict[str, tuple[dict[str, Any], str]] = {
    # constraints that are not comparisons, and what else a constraint may not be
    "an unknown objective written without a list": (
        {"objectives": "energy"},
        r"objectives\.0: unknown metric 'energy'; allowed: energy_pj",  # was 'e'
    ),
    "a sum": (
        {"constraints": ["weight_buffer + 4"]},
        rf"constraints\.0: 'weight_buffer \+ 4' is not a comparison.*; {FORM}",
    ),
    "a parameter alone": (
        {"constraints": ["vector_units"]},
        r"constraints\.0: 'vector_units' is not a comparison",
    ),
    "a number": ({"constraints": ["1"]}, r"constraints\.0: '1' is not a comparison"),
    "'and' of parameters": (
        {"constraints": ["vector_units >= 4", "vector_units and pe_rows"]},
        r"constraints\.1: 'vector_units and pe_rows' is not a comparison",
    ),
    "a comparison and a parameter": (
        {"constraints": ["vector_units >= 4 and pe_rows"]},
        r"constraints\.0: .* is not a comparison",
    ),
    "a conditional": (
        {"constraints": ["vector_units > 4 if pe_rows else 1"]},
        r"constraints\.0: .* has a conditional \(x if c else y\)",
    ),
    "constants only": ({"constraints": ["1 < 2"]}, r"constraints\.0: '1 < 2' names no parameter"),
    "an attribute": (
        {"constraints": ["vector_units.real > 1"]},
        r"constraints\.0: .* has an attribute \(x\.y\), which a constraint may not",
    ),
    "a call": (
        {"constraints": ["vector_units(2) > 1"]},
        r"has a call of a function other than min and max",
    ),
    "nested 300 deep": (
        {"constraints": ["-" * 300 + "vector_units > 1"]},
        r"constraints\.0: .* nests operations more than 50 deep",
    ),
    "1,001 characters": (
        {"constraints": ["vector_units > 1" + " " * 985]},
        r"constraints\.0: a constraint has at most 1000 characters, got 1001",
    ),
    "broken by every design": (
        {"constraints": ["vector_units > 1000"]},
        r"constraints\.0: 'vector_units > 1000' is broken by every design of the space "
        r"\(2 checked\)",
    ),
    "listed twice": (
        {"constraints": ["vector_units >= 4", "vector_units  >=  4"]},
        r"constraints: a constraint is listed twice: 'vector_units >= 4'",
    ),
    "101 constraints": (
        {"constraints": [f"vector_units >= {-i}" for i in range(101)]},
        r"constraints: a space has at most 100 constraints, got 101",
    ),
    "str against a number": (
        {"constraints": ["dram_technology > 4"]},
        r"constraints\.0: 'dram_technology > 4' cannot be evaluated at the fixed parameters: "
        r"TypeError",
    ),
    # pow2 ends that are not powers of two (not narrowed to the powers between them)
    "pow2: [3, 40]": (
        {"params": {**PARAMS, "vector_units": {"pow2": [3, 40]}}},
        r"params\.vector_units: 3 is not a power of two \(the nearest are 2 and 4\); give "
        r"powers of two as the ends, or int: \[lo, hi\]",
    ),
    "pow2: [4, 40]": (
        {"params": {**PARAMS, "vector_units": {"pow2": [4, 40]}}},
        r"params\.vector_units: 40 is not a power of two \(the nearest are 32 and 64\)",
    ),
    "pow2 sizes": (
        {"params": {**PARAMS, "weight_buffer": {"pow2": ["12KiB", "100KiB"]}}},
        r"params\.weight_buffer: 12KiB is not a power of two \(the nearest are 8KiB and 16KiB\)",
    ),
    # what needs several chiplets, on a space of single chips
    "pipeline on a chip template": (
        {"workloads": [str(NET), {"workload": str(NET), "pipeline": True}]},
        r"workloads\.1: pipeline: true runs the layers across a package's chiplets, but "
        + ONE_CHIP.format("simba"),
    ),
    "pipeline on a 1 x 1 package": (
        {
            "template": "package",
            "params": {**PARAMS, "chiplets_x": 1, "chiplets_y": 1},
            "workloads": [{"workload": str(NET), "pipeline": True}],
        },
        r"workloads\.0: pipeline: true .*" + ONE_CHIP.format("package"),
    ),
    "fusion on a 1 x 1 package": (
        {
            "template": "package",
            "params": {**PARAMS, "chiplets_x": 1, "chiplets_y": 1},
            "workloads": [{"workload": str(NET), "fuse": True}],
        },
        r"workloads\.0: fuse: true .*" + ONE_CHIP.format("package"),
    ),
    "nop_bytes the only objective on a chip": (
        {"objectives": ["nop_bytes"]},
        r"objectives\.0: nop_bytes counts the bytes over a package's chip-to-chip links \(0 on "
        r"one chip\), but " + ONE_CHIP.format("simba"),
    ),
    "a limit on nop_bytes on a chip": (
        {"limits": [{"metric": "area_mm2", "max": 100}, {"metric": "nop_bytes", "max": 10}]},
        r"limits\.1: nop_bytes .*single chip",
    ),
    # grids too large to list
    "a grid of 4.3e9 designs": (
        {"params": WIDE, "sampler": "grid", "constraints": [], "dataflow": "ws"},
        r"sampler: the grid holds 4,294,967,296 designs \(vector_units 256 x vector_width 256 x "
        r"pe_rows 256 x pe_cols 256\), more than the 1,000,000 the grid sampler can list in "
        r"memory; use another sampler \(nsga2, nsga3, tpe, random",
    ),
    # limits no design can meet
    "min above max": (
        {"limits": [{"metric": "area_mm2", "min": 5}, {"metric": "area_mm2", "max": 1}]},
        r"limits\.0: area_mm2>=5 and area_mm2<=1 \(limits\.1\) leave no value of area_mm2",
    ),
    "a limit twice": (
        {"limits": [{"metric": "area_mm2", "max": 5}, {"metric": "area_mm2", "max": 5.0}]},
        r"limits: a limit is listed twice: 'area_mm2<=5'",
    ),
    "a negative max": (
        {"limits": [{"metric": "area_mm2", "max": -1}]},
        r"limits\.0: no design can meet area_mm2<=-1: area_mm2 is never negative",
    ),
    "utilisation above 1": (
        {"limits": [{"metric": "utilization", "min": 1.5}]},
        r"limits\.0: no design can meet utilization>=1\.5: utilization is never above 1",
    ),
    # numbers too large to hold
    "an int end of 1e23": (
        {"params": {**PARAMS, "vector_units": {"int": [1, 10**23]}}},
        r"params\.vector_units: 100000000000000000000000 is out of bounds: a range's ends lie "
        r"within -9007199254740992\.\.9007199254740992 \(2\^53",
    ),
    "a batch of 1e20": (
        {"workloads": [{"workload": str(NET), "batch": 10**20}]},
        r"workloads\.0\.batch: Input should be less than or equal to 2147483647",
    ),
}


@pytest.mark.parametrize("case", list(BAD_SPACES))
def test_a_bad_space_is_one_line_and_exit_2(tmp_path: Path, case: str) -> None:
    changes, message = BAD_SPACES[case]
    line = refused(tmp_path, write(tmp_path, space_data(**changes)))
    assert re.search(message, line), line
    with pytest.raises(MagnetError, match=message):  # the same from Python
        space_from_data(space_data(**changes), "space.yaml")


# Each neighbour of a bad case above that is right: accepted (so that no case passes by
# refusing everything).
GOOD_SPACES: dict[str, dict[str, Any]] = {
    "comparisons joined": {"constraints": ["not (vector_units > 8) and min(pe_rows, 4) >= 2"]},
    "a constraint on a fixed parameter that holds": {"constraints": ["pe_rows == 2"]},
    "pow2 of sizes": {"params": {**PARAMS, "weight_buffer": {"pow2": ["8KiB", "64KiB"]}}},
    "pipeline on a package of up to 2 chiplets": {
        "template": "package",
        "params": {**PARAMS, "chiplets_x": {"choices": [1, 2]}, "chiplets_y": 1},
        "workloads": [{"workload": str(NET), "pipeline": True}],
        "objectives": ["energy_pj", "nop_bytes"],
    },
    "a grid of exactly the limit": {
        "params": {n: {"int": [1, 100]} for n in ("vector_units", "vector_width", "pe_cols")},
        "sampler": "grid",
        "constraints": [],
        "dataflow": "ws",
    },
    "a constraint only one design of a long range meets": {
        "params": {**PARAMS, "weight_buffer": {"int": ["1KiB", "1GiB"]}},
        "constraints": ["weight_buffer == 5000"],  # 5000 is not in the sample checked
    },
    "a constraint only the inside of a float range meets": {
        "params": {**PARAMS, "clock_ghz": {"float": [0.5, 2.0]}},
        "constraints": ["clock_ghz > 0.9 and clock_ghz < 1.1"],
    },
    "one objective written without a list": {"objectives": "energy_pj"},  # was its letters
    "min below max": {
        "limits": [{"metric": "area_mm2", "min": 0.5}, {"metric": "area_mm2", "max": 100}]
    },
}


@pytest.mark.parametrize("case", list(GOOD_SPACES))
def test_the_right_neighbours_are_accepted(case: str) -> None:
    space = space_from_data(space_data(**GOOD_SPACES[case]), "space.yaml")
    assert space.sampler != "grid" or space.size() <= MAX_GRID_DESIGNS


def test_the_grid_sampler_from_the_command_line_is_checked_too(tmp_path: Path) -> None:
    # --sampler grid replaces the space's sampler after the space was read: checked as well
    big = write(tmp_path, space_data(params=WIDE, constraints=[], dataflow="ws"))
    line = refused(tmp_path, big, "--sampler", "grid", where="--sampler")
    assert "the grid holds 4,294,967,296 designs" in line and "1,000,000" in line
    floats = {**PARAMS, "clock_ghz": {"float": [0.5, 1.0]}}
    with_floats = write(tmp_path, space_data(params=floats), "f.yaml")
    line = refused(tmp_path, with_floats, "--sampler", "grid", where="--sampler")
    assert "the grid sampler needs discrete parameters" in line


def test_a_grid_of_billions_is_refused_without_listing_it() -> None:
    # before: the driver listed every design of the grid (24 GB, then the kernel killed it)
    tracemalloc.start()
    try:
        with pytest.raises(MagnetError, match="the grid holds 4,294,967,296 designs"):
            space_from_data(space_data(params=WIDE, sampler="grid", constraints=[], dataflow="ws"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20  # the grid alone would take hundreds of GB


# e2e though it starts nothing: tracemalloc, on while the space is read and checked, makes it
# about 3 CPU-s here
@pytest.mark.e2e
def test_an_int_range_of_a_billion_values_is_never_listed() -> None:
    # 1,073,740,801 buffer sizes: read, checked (an even sample) and searched without a list
    data = space_data(params={**PARAMS, "weight_buffer": {"int": ["1KiB", "1GiB"]}})
    tracemalloc.start()
    try:
        space = space_from_data(data)
        values = space.ranges()["weight_buffer"].listed()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(values) == 2**30 - 2**10 + 1 and values[-1] == 2**30
    assert peak < 50 * 2**20  # a list of them would take 8 GB


class Counted:
    """A choice that counts how often it is compared for equality."""

    comparisons = 0

    def __init__(self, n: int):
        self.n = n

    def __hash__(self) -> int:
        return hash(self.n)

    def __eq__(self, other: object) -> bool:
        Counted.comparisons += 1
        return isinstance(other, Counted) and other.n == self.n


def test_the_duplicate_choice_check_is_linear() -> None:
    # 100,000 distinct choices: a check comparing each with each makes 10^10 comparisons
    # (the one before compared 5e9 times: ~20 minutes); a linear one makes about none
    Counted.comparisons = 0
    assert len(ParamRange(choices=[Counted(i) for i in range(100_000)]).listed()) == 100_000
    assert Counted.comparisons <= 100_000
    twice = [Counted(i) for i in range(100_000)] + [Counted(7)]
    with pytest.raises(ValueError, match="a choice is listed twice"):
        ParamRange(choices=twice).listed()
    # as written in a space: 1 and 1.0 are one value
    with pytest.raises(ValueError, match=r"a choice is listed twice: 1, 1\.0"):
        ParamRange(choices=[*range(2, 100_000), 1, 1.0]).listed()


def test_only_the_expressions_own_errors_are_blamed_on_the_constraint(monkeypatch) -> None:
    import simpleeval

    data = space_data(constraints=["weight_buffer >= 1024 * vector_units"])
    # a bug inside the evaluator is not the user's constraint: it is raised as it is
    broken = RuntimeError("a bug in the evaluator")

    def fails(*args: Any, **kwargs: Any) -> Any:
        raise broken

    with monkeypatch.context() as m:
        m.setattr(simpleeval.EvalWithCompoundTypes, "eval", fails)
        with pytest.raises(RuntimeError) as caught:
            space_from_data(data)
        assert caught.value is broken
    # a module that cannot be imported is an installation problem, not "cannot be evaluated"
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "simpleeval", None)
        with pytest.raises(ModuleNotFoundError):
            space_from_data(data)
    # the user's own arithmetic is: a division by zero names the constraint and the values
    bad = space_data(constraints=["weight_buffer / (vector_units - 4) > 1"])
    with pytest.raises(MagnetError, match=r"at vector_units=4: ZeroDivisionError"):
        space_from_data(bad)


def test_a_constraint_that_fails_at_a_design_the_check_did_not_reach_breaks_there() -> None:
    # the check evaluates an even sample of a long range: 5000 is not in it, and the search
    # may still propose it; that design is infeasible with the reason (no driver crash)
    data = space_data(
        params={**PARAMS, "weight_buffer": {"int": ["1KiB", "1GiB"]}},
        constraints=["1 / (weight_buffer - 5000) < 1"],
    )
    space = space_from_data(data)
    assert constraint_violations(space, space.design({"weight_buffer": 8192})) == []
    broken = constraint_violations(space, space.design({"weight_buffer": 5000}))
    assert broken == [
        "1 / (weight_buffer - 5000) < 1 (cannot be evaluated: ZeroDivisionError: division by zero)"
    ]


def test_a_space_made_in_python_is_checked_before_a_search(tmp_path: Path) -> None:
    # SearchSpace(...) skips load_space's checks; the search makes them before any work
    space = SearchSpace(**space_data(constraints=["weight_buffer + 4"]))
    storage = tmp_path / "s.journal"
    with pytest.raises(MagnetError, match=r"constraints\.0: .* is not a comparison"):
        search(space, storage=str(storage))
    assert not storage.exists()


# ---- a path that is not a YAML file, for a space and every YAML input ----------------------
def billion_laughs() -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    return "\n".join(lines) + "\nname: t\n"


NOT_YAML: dict[str, tuple[Any, str]] = {
    # case -> (how to make it at PATH, the message)
    "a folder": (lambda p: p.mkdir(), r"is a folder, not a YAML file"),
    "a named pipe": (lambda p: os.mkfifo(p), r"is a named pipe \(FIFO\), not a YAML file"),
    "an empty file": (lambda p: p.write_text(""), r"the file is empty; expected YAML"),
    "blank lines": (lambda p: p.write_text("\n  \n\n"), r"the file is empty; expected YAML"),
    "comments only": (
        lambda p: p.write_text("# a space\n# to come\n"),
        r"holds no YAML data \(only comments, blank lines or null\)",
    ),
    "a binary file": (
        lambda p: p.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256))),
        r"a binary file \(it holds NUL bytes\), not YAML",
    ),
    "not UTF-8": (lambda p: p.write_bytes(b"name: caf\xe9\n"), r"not a text \(YAML\) file"),
    "a broken symlink": (
        lambda p: p.symlink_to(p.parent / "gone.yaml"),
        r"file not found \(a symlink to a path that does not exist\)",
    ),
    "16 MiB and 4 bytes": (
        lambda p: p.write_text("# x\n" * (MAX_YAML_BYTES // 4 + 1)),
        r"is larger than 16 MiB",
    ),
    "a billion laughs": (
        lambda p: p.write_text(billion_laughs()),
        r"its aliases \(\*anchor\) expand it to 1,234,567,911 values, more than 1,000,000",
    ),
    "an alias inside itself": (
        lambda p: p.write_text("a: &x [1, *x]\n"),
        r"an alias \(\*anchor\) refers to its own anchor",
    ),
    "nested 200 deep": (
        lambda p: p.write_text("a: " + "[" * 200 + "]" * 200 + "\n"),
        r"collections nest 201 levels deep, more than 100",
    ),
    "nested 5,000 deep": (
        lambda p: p.write_text("a: " + "[" * 5000 + "]" * 5000 + "\n"),
        r"collections nest deeper than 100 levels",
    ),
    "not YAML": (
        lambda p: p.write_text("name: [a\nb: 1\n"),
        r"not valid YAML: line 2, column 2: expected ',' or '\]', but got ':' \(while parsing "
        r"a flow sequence at line 1, column 7\)",
    ),
}


@pytest.mark.parametrize("case", list(NOT_YAML))
def test_a_path_that_is_no_yaml_file_says_what_it_is(tmp_path: Path, case: str) -> None:
    make, message = NOT_YAML[case]
    path = tmp_path / "space.yaml"
    make(path)
    line = refused(tmp_path, path)
    assert re.search(message, line), line
    with pytest.raises(MagnetError, match=message):  # every YAML input reads through it
        read_yaml(path)


NOT_A_FILE = "not a YAML file; give the path of a YAML file"
LAYER = "K=8,C=8,P=4,Q=4"


def test_a_device_says_what_it_is(tmp_path: Path) -> None:
    # /dev/zero never ends: it is refused by its kind, never read
    line = refused(tmp_path, Path("/dev/zero"))
    assert line == f"error: /dev/zero: is a character device, {NOT_A_FILE}"
    # /dev/null (a device, or on some machines an empty file) is never taken for a space
    line = refused(tmp_path, Path("/dev/null"))
    assert re.search(r"is a character device|the file is empty|holds NUL", line), line


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (
            ["evaluate", "--arch", "simba-chip", "--layer", "K=8,C=8,P=4,Q=4", "--mapping"],
            "mapping",
        ),
        (["evaluate", "--arch", "simba-chip", "--dataflow", "ws", "--workload"], "network"),
        (["map", "--arch", "simba-chip", "--layer", "K=8,C=8,P=4,Q=4", "--dataflow"], "dataflow"),
        (["map", "--layer", "K=8,C=8,P=4,Q=4", "--arch"], "arch"),
        (["evaluate", "--timeloop"], "timeloop"),
        (["map", "--arch", "simba-chip", "--layer", "K=8,C=8,P=4,Q=4", "--cost-model"], "table"),
    ],
)
def test_other_yaml_inputs_say_what_a_fifo_or_a_folder_is(tmp_path: Path, args, flag) -> None:
    fifo, folder = tmp_path / f"{flag}.yaml", tmp_path / "folder.yaml"
    os.mkfifo(fifo)
    folder.mkdir()
    # an architecture's own check of a folder names what else --arch takes
    arch = "is a directory; give an architecture YAML file, a preset or a template"
    for path, what in ((fifo, "is a named pipe (FIFO)"), (folder, "is a folder")):
        given = f"table:{path}" if flag == "table" else str(path)
        out = CliRunner().invoke(main, [*args, given])
        assert out.exit_code == 2 and out.stdout == "", out.output
        expected = arch if flag == "arch" and path == folder else f"{what}, {NOT_A_FILE}"
        assert out.stderr == f"error: {path}: {expected}\n"


@pytest.mark.subprocess
def test_a_real_process_on_a_folder_or_a_fifo_exits_2_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "space.yaml"
    os.mkfifo(fifo)  # opened for reading, it would wait for a writer for ever
    for path, what in ((tmp_path, "is a folder"), (fifo, "is a named pipe (FIFO)")):
        proc = subprocess.run(
            [sys.executable, "-m", "magnet.cli", "search", str(path)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode == 2 and proc.stdout == "", proc.stderr
        assert proc.stderr == f"error: {path}: {what}, {NOT_A_FILE}\n"
        assert not (tmp_path / "magnet-results").exists()


def test_the_built_in_spaces_still_load() -> None:
    # every pow2 range of the shipped spaces has powers of two at its ends, and so on
    assert len(builtin_spaces()) >= 7
    for name in builtin_spaces():
        assert load_space(name).trials >= 1


def test_workload_weights_are_relative_however_large() -> None:
    # weights of 1e308 summed to infinity: every metric NaN, and every design infeasible
    # with a wrong cause ("the cost model gives no energy_pj")
    from magnet.search.job import DesignJob, evaluate_design

    def metrics(weight: float) -> dict[str, float]:
        workloads = [{"workload": str(NET), "weight": weight}]
        workloads.append({"workload": str(NET), "batch": 2, "weight": weight})
        space = space_from_data(space_data(workloads=workloads))
        params = space.design({n: r.first() for n, r in space.ranges().items()})
        result = evaluate_design(DesignJob.of(space, params, space.dataflows()[0]))
        assert result.status == "ok", result.reason
        return result.metrics

    huge, plain = metrics(1e308), metrics(1.0)
    assert huge["energy_pj"] == pytest.approx(plain["energy_pj"], rel=1e-12)
    assert huge == pytest.approx(plain, rel=1e-12, nan_ok=True)


@pytest.mark.parametrize("given", ["", " "])
def test_an_empty_space_argument_is_named_as_such(tmp_path: Path, given: str) -> None:
    # '' was the working folder ("error: .: is a folder")
    storage = tmp_path / "s.journal"
    out = CliRunner().invoke(main, ["search", given, "--storage", str(storage)])
    assert out.exit_code == 2 and out.stdout == "" and not storage.exists()
    # '' is refused by the command line's check of every flag and argument; ' ' by the space's
    assert out.stderr == (
        "error: SPACE: an empty value; give one\n"
        if given == ""
        else f"error: {given!r}: empty: give a space file or a built-in space (eyeriss, magnet, "
        "package-fixed-macs, package, quickstart, simba, sparse, systolic)\n"
    )
    with pytest.raises(MagnetError, match="an empty path: give the path of a YAML file"):
        read_yaml(given)
