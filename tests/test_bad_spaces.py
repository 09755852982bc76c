"""Paths that are not YAML files (issue 29, item 7), given as a search space or any other YAML
input: each is refused before any work with one line saying what it is, exit 2, nothing on
stdout, no study written and every file of the user unchanged."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.files import MAX_YAML_BYTES, read_yaml
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
