"""Every command that writes refuses, before any work and writing nothing, a place it cannot
write: one line naming the path (or the flag) and the cause, exit 2. Each writer (a search's
storage and its report, ``report -o``, ``export -o``, ``export-timeloop --output``,
``map --output``, ``examples --copy``) against each kind of bad target; what is on disk is
compared before and after (every file's kind and hash), not only exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
import subprocess
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.files import write_atomic
from magnet.search import load_study
from tests.conftest import DATA

LAYER = "K=16,C=8,P=7,Q=7"


def cli(*args: Any) -> Any:
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result: Any, cause: str, named: str) -> None:
    """Exit 2 with one line on stderr naming ``named`` and matching ``cause``; nothing on
    stdout, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert named in lines[0], (named, lines[0])
    assert re.search(cause, lines[0]), (cause, lines[0])
    assert result.stdout == "" and "Traceback" not in result.output


def snapshot(root: Path) -> dict[str, str]:
    """Every path under ``root`` with what it is: a file's hash, a link's target, a kind."""
    seen = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                seen[str(path)] = "-> " + os.readlink(path)
            elif stat.S_ISREG(mode):
                seen[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                seen[str(path)] = oct(stat.S_IFMT(mode))
    return seen


def space_file(folder: Path) -> Path:
    """The small test space, its workload given by absolute path (any working folder)."""
    data = yaml.safe_load((DATA / "search" / "small_space.yaml").read_text())
    data["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    path = folder / "space.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """(space, journal): a journal holding study ``small`` with 2 designs of ``space``."""
    folder = tmp_path_factory.mktemp("made")
    space, journal = space_file(folder), folder / "j.journal"
    out = cli("search", space, "--storage", journal, "--trials", "2", "--no-report")
    assert out.exit_code == 0, out.output
    return space, journal


@pytest.fixture
def immutable(request) -> Callable[[Path], None]:
    """``chattr +i`` a path (as root ``chmod`` does not stop a write), undone at the end; the
    test is skipped where the file system has no such attribute (tmpfs)."""
    marked: list[Path] = []

    def mark(path: Path) -> None:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i does not work here: {done.stderr.strip()}")
        marked.append(path)

    yield mark
    for path in marked:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def null_device(path: Path) -> Path:
    """A character device like /dev/null (1, 3) at ``path``: magnet must treat it exactly as
    /dev/null, and a bug that replaced it would not break the machine's own /dev/null."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod is not permitted here (no CAP_MKNOD)")
    return path


# ---- each writer against each kind of bad target ----------------------------------------------
#: command -> (its arguments around the target, the target's suffix, "file" or "folder", the
#: name of a file it writes inside a folder target)
WRITERS: dict[str, tuple[Callable[[str, Path, Path], list[Any]], str, str, str]] = {
    "search --storage": (
        lambda t, space, journal: ["search", space, "--storage", t, "--trials", 1, "--no-report"],
        ".journal",
        "file",
        "",
    ),
    "search --report": (
        lambda t, space, journal: [
            *("search", space, "--storage", journal.with_name("new.journal")),
            *("--trials", 3, "--report", t),
        ],
        ".html",
        "file",
        "",
    ),
    "report -o": (
        lambda t, space, journal: ["report", "--study", "small", "--storage", journal, "-o", t],
        ".html",
        "file",
        "",
    ),
    "export -o": (
        lambda t, space, journal: ["export", "--study", "small", "--storage", journal, "-o", t],
        ".csv",
        "file",
        "",
    ),
    "export-timeloop --output": (
        lambda t, space, journal: [
            *("export-timeloop", "--arch", "simba-chip", "--layer", LAYER),
            *("--dataflow", "ws", "--output", t),
        ],
        "",
        "folder",
        "timeloop-input.yaml",
    ),
    "map --output": (
        lambda t, space, journal: [
            *("map", "--arch", "simba-chip", "--layer", LAYER, "--dataflow", "ws"),
            *("--output", t),
        ],
        ".yaml",
        "file",
        "",
    ),
    "examples --copy": (
        lambda t, space, journal: ["examples", "--copy", t],
        "",
        "folder",
        "README.md",
    ),
}

#: kind of bad target -> what the one line must say
CAUSES = {
    "read-only file": r"is read-only",
    "read-only folder": r"the folder \S*locked is read-only",
    "/dev/null (a character device)": r"is a character device, not a (regular file|folder)",
    "fifo": r"is a named pipe \(fifo\), not a (regular file|folder)",
    "socket": r"is a socket, not a (regular file|folder)",
    "missing folder": r"the folder \S*typo\S* does not exist",
    "file in the way of a folder": r"existing\.txt is a file, not a folder",
    "folder in the way of a file": r"is a directory; give a (file|journal)|would overwrite",
    "dangling symlink": r"is a dangling symlink \(to \S*gone",
    "empty path": r"an empty value; give one, or leave the flag out",
}


def bad_target(kind: str, root: Path, writer: str, immutable: Callable[[Path], None]) -> str:
    """A target of ``kind`` under ``root`` for ``writer`` (made now)."""
    _, suffix, shape, inner = WRITERS[writer]
    name = "out" + suffix if shape == "file" else "tl"
    if kind == "read-only file":  # an empty file (magnet writes over those) or a folder
        path = root / name
        path.mkdir() if shape == "folder" else path.touch()
        immutable(path)
    elif kind == "read-only folder":
        (root / "locked").mkdir()
        immutable(root / "locked")
        path = root / "locked" / name
    elif kind.startswith("/dev/null"):
        path = null_device(root / "null")
    elif kind == "fifo":
        path = root / "fifo"
        os.mkfifo(path)
    elif kind == "socket":
        path = root / "sock"
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))
    elif kind == "missing folder":  # a file's folder must exist; a folder's parent must
        path = root / "typo" / name if shape == "file" else root / "typo" / "deeper" / name
    elif kind == "file in the way of a folder":
        (root / "existing.txt").write_text("the user's notes\n")
        path = root / "existing.txt" / name if shape == "file" else root / "existing.txt" / "sub"
    elif kind == "folder in the way of a file":
        path = root / name
        (path / inner if shape == "folder" else path).mkdir(parents=True)
    elif kind == "dangling symlink":
        path = root / "link"
        path.symlink_to(root / "gone" / name)
    else:
        return ""
    return str(path)


@pytest.mark.parametrize("kind", list(CAUSES))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_place_that_cannot_be_written_is_refused_writing_nothing(
    writer, kind, made, tmp_path, monkeypatch, immutable
) -> None:
    space, journal = made
    root = tmp_path / "w"
    root.mkdir()
    monkeypatch.chdir(root)  # a default output (magnet-results/) would land here: none may
    target = bad_target(kind, root, writer, immutable)
    local = root / "j.journal"
    local.write_bytes(journal.read_bytes())
    before = snapshot(root)
    args, *_ = WRITERS[writer]
    out = cli(*args(target, space, local))
    shown = [str(a) for a in args("X", space, local)]
    named = target or shown[shown.index("X") - 1]  # the path, or the flag
    refused(out, CAUSES[kind], str(named))
    assert snapshot(root) == before


@pytest.mark.parametrize("writer", [w for w, spec in WRITERS.items() if spec[2] == "file"])
def test_a_file_path_ending_with_a_slash_is_refused(writer, made, tmp_path, monkeypatch):
    """``out.html/`` names a folder; ``Path`` would drop the slash and write a file."""
    space, journal = made
    monkeypatch.chdir(tmp_path)
    target = f"out{WRITERS[writer][1]}/"
    out = cli(*WRITERS[writer][0](target, space, journal))
    refused(out, "ends with a slash, as a folder does; give a file name", target)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ["evaluate", "--arch", "simba-chip", "--workload", "", "--dataflow", "ws"],
        ["evaluate", "--arch", "simba-chip", "--layer", LAYER, "--mapping", ""],
        ["evaluate", "--timeloop", ""],
        ["map", "--arch", "simba-chip", "--layer", LAYER, "--cost-model", ""],
        [
            "export-timeloop",
            "--arch",
            "simba-chip",
            "--layer",
            LAYER,
            "--mapping",
            "",
            "--output",
            "t",
        ],
        ["search", "", "--no-report"],
        ["search", "quickstart", "--workload", "resnet18", "--workload", ""],
        ["costs", "--arch", "", "--cost-model", "horowitz45"],
        ["dataflows", ""],
    ],
    ids=lambda args: " ".join(a or "''" for a in args[:1] + [a for a in args if a.startswith("-")]),
)
def test_an_empty_value_is_refused_naming_its_flag(args, tmp_path, monkeypatch) -> None:
    """'' is no value of any flag or argument: never read as "not given" (a silent default:
    --cost-model '' priced with the default model, --mapping '' ran the mapper)."""
    monkeypatch.chdir(tmp_path)
    out = cli(*args)
    shown = args[args.index("") - 1] if args[args.index("") - 1].startswith("-") else ""
    refused(out, "an empty value; give one", shown or ": an empty value")
    assert list(tmp_path.iterdir()) == []


def test_the_checks_come_before_any_work(made, tmp_path, monkeypatch) -> None:
    """No mapping, no design priced, no study read before a bad output is refused."""
    space, journal = made
    worked: list[str] = []
    work = {
        "magnet.search.driver": "preflight",
        "magnet.api": "map_layer",
        "magnet.search": "load_study",
    }
    for module, name in work.items():
        monkeypatch.setattr(import_module(module), name, lambda *a, n=name, **k: worked.append(n))
    missing = tmp_path / "typo" / "x"
    runs = [
        ("search", space, "--storage", f"{missing}.journal", "--no-report"),
        ("search", space, "--storage", tmp_path / "n.journal", "--report", f"{missing}.html"),
        ("map", "--arch", "simba-chip", "--layer", LAYER, "--output", f"{missing}.yaml"),
        ("export-timeloop", "--arch", "simba-chip", "--layer", LAYER, "--output", missing / "tl"),
        ("report", "--study", "small", "--storage", journal, "-o", f"{missing}.html"),
        ("export", "--study", "small", "--storage", journal, "-o", f"{missing}.csv"),
    ]
    for run in runs:
        refused(cli(*run), "does not exist", str(missing))
    assert worked == [] and sorted(p.name for p in tmp_path.iterdir()) == []


def test_magnet_makes_only_the_last_folder_of_a_path(made, tmp_path, monkeypatch) -> None:
    space, journal = made
    monkeypatch.chdir(tmp_path)
    out = cli("examples", "--copy", "new")  # its parent exists: made
    assert out.exit_code == 0 and (tmp_path / "new" / "README.md").is_file(), out.output
    out = cli("export-timeloop", "--arch", "simba-chip", "--layer", LAYER, "--output", "tl")
    assert out.exit_code == 0 and (tmp_path / "tl" / "timeloop-input.yaml").is_file()
    # the default results folder is made in the working folder (storage and report)
    out = cli("search", space, "--trials", 1)
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "magnet-results").iterdir()) == [
        "magnet.journal",
        "magnet.journal.small.driver.lock",
        "small.html",
    ]
    out = cli("report", "--study", "small", "--storage", journal)
    assert out.exit_code == 0 and (tmp_path / "magnet-results" / "small.html").is_file()
    before = snapshot(tmp_path)
    for args in (
        ("export-timeloop", "--arch", "simba-chip", "--layer", LAYER, "--output", "a/b/tl"),
        ("examples", "--copy", "a/b"),
        ("search", space, "--storage", "a/s.journal", "--no-report"),
        ("report", "--study", "small", "--storage", journal, "-o", "a/r.html"),
    ):
        refused(cli(*args), r"the folder a(/b)? does not exist", "a/")
    assert snapshot(tmp_path) == before


def test_a_blocked_default_report_is_refused_before_the_search(made, tmp_path, monkeypatch):
    """The report a search writes at its end by default (magnet-results/STUDY.html) is
    checked before the first trial, as a given --report is."""
    space, _ = made
    monkeypatch.chdir(tmp_path)
    (tmp_path / "magnet-results" / "small.html").mkdir(parents=True)
    before = snapshot(tmp_path)
    out = cli("search", space, "--storage", "s.journal", "--trials", 1)
    refused(out, "is a directory; give a file name", "small.html")
    assert snapshot(tmp_path) == before


def test_a_write_the_system_refuses_late_is_one_line(made, tmp_path, immutable) -> None:
    """An append-only file (``chattr +a``) passes every check a path can be given (it can be
    written to), but cannot be replaced: one line naming it, the file as it was, nothing left
    beside it."""
    _, journal = made
    target = tmp_path / "r.html"
    target.write_text("")
    done = subprocess.run(["chattr", "+a", str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"chattr +a does not work here: {done.stderr.strip()}")
    try:
        out = cli("report", "--study", "small", "--storage", journal, "-o", target)
        refused(out, "cannot write the file: Operation not permitted", str(target))
        assert target.read_text() == "" and [p.name for p in tmp_path.iterdir()] == ["r.html"]
    finally:
        subprocess.run(["chattr", "-a", str(target)], check=True)


def test_the_writer_itself_never_replaces_a_device(tmp_path) -> None:
    """``write_atomic`` (the one writer of every result file) refuses anything but a regular
    file, also called directly: a device stays the device it is."""
    device = null_device(tmp_path / "null")
    for path in (device, tmp_path / "link"):
        if path.name == "link":
            path.symlink_to(device)
        with pytest.raises(MagnetError, match="is a character device, not a regular file"):
            write_atomic(path, "text")
        assert stat.S_ISCHR(device.stat().st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(MagnetError, match=r"is a named pipe \(fifo\)"):
        write_atomic(fifo, "text")


@pytest.mark.parametrize(
    "storage, cause, named",
    [
        ("sqlite://", "in memory, which keeps nothing", "sqlite://"),
        ("sqlite:///:memory:", "in memory, which keeps nothing", "sqlite:///:memory:"),
        ("sqlite:///{root}/typo/s.db", r"the folder \S*typo does not exist", "typo/s.db"),
        ("sqlite:///{root}/x.txt/s.db", r"x\.txt is a file, not a folder", "x.txt/s.db"),
        ("sqlite:///{root}/fifo", r"is a named pipe \(fifo\), not a regular file", "fifo"),
    ],
)
def test_a_database_a_search_cannot_keep_studies_in_is_refused(
    storage, cause, named, made, tmp_path
) -> None:
    space, _ = made
    (tmp_path / "x.txt").write_text("the user's notes\n")
    os.mkfifo(tmp_path / "fifo")
    before = snapshot(tmp_path)
    out = cli("search", space, "--storage", storage.format(root=tmp_path), "--no-report")
    refused(out, cause, named)
    assert snapshot(tmp_path) == before


def test_a_journal_whose_lock_files_cannot_be_made_is_refused(made, tmp_path) -> None:
    space, journal = made
    local = tmp_path / "j.journal"
    local.write_bytes(journal.read_bytes())
    for lock in ("j.journal.lock", "j.journal.small.driver.lock"):
        (tmp_path / lock).mkdir()
        before = snapshot(tmp_path)
        out = cli("search", space, "--storage", local, "--trials", 3, "--no-report")
        refused(out, f"its lock file \\S*{re.escape(lock)} is a directory", str(local))
        assert snapshot(tmp_path) == before
        (tmp_path / lock).rmdir()


@pytest.mark.parametrize("command", ["studies", "report", "pareto"])
def test_a_reader_refuses_a_storage_that_is_not_a_file(command, tmp_path, monkeypatch) -> None:
    """A reader never opens a fifo (it would wait forever) or a device as a journal."""
    monkeypatch.chdir(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    study = [] if command == "studies" else ["--study", "small"]
    for storage, cause in (
        (fifo, r"is a named pipe \(fifo\), not a journal file"),
        ("/dev/null", "is a character device, not a journal file"),
        ("", "an empty value"),
    ):
        out = cli(command, *study, "--storage", storage)
        refused(out, cause, str(storage) or "--storage")


# ---- a refused search leaves the storage as it was ----------------------------------------------
def studies_in(journal: Path) -> list[str]:
    """The study names Optuna reads in ``journal`` (through a backend that cannot write)."""
    import optuna
    from optuna.storages import JournalStorage

    from magnet.search.storage import ReadOnlyJournal

    summaries = optuna.get_all_study_summaries(JournalStorage(ReadOnlyJournal(str(journal))))
    return sorted(s.study_name for s in summaries)


@pytest.fixture
def not_ray() -> Any:
    """HOST:PORT of a server that answers, but not as a Ray head does (a web server)."""
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield f"127.0.0.1:{server.getsockname()[1]}"
    server.close()


#: refusal -> (the flags that cause it, what the line says, whether only a resumed study can
#: be refused so: another configuration than its saved one)
REFUSALS = {
    "another configuration": (["--seed", 1], r"study 'small' was run with another config", True),
    "another sampler": (["--sampler", "tpe"], r"another configuration \(space\.sampler", True),
    "nothing listens at --ray-address": (["--ray-address", "127.0.0.1:1"], "no Ray cluster", False),
    "a web server at --ray-address": (["--ray-address", "NOT_RAY"], "no Ray cluster", False),
    "--ray-address without a port": (["--ray-address", "localhost"], "give HOST:PORT", False),
    "a workload that does not exist": (["--workload", "nope.yaml"], "--workload", False),
    "a bad study name": (["--study", " "], "--study", False),
}


@pytest.mark.parametrize("refusal", list(REFUSALS))
def test_a_refused_search_appends_nothing_and_creates_no_study(
    refusal, made, tmp_path, monkeypatch, not_ray
) -> None:
    """Neither to the journal of the study it would resume (its bytes, its studies), nor a
    new study beside it, nor a fresh storage (the default one included)."""
    space, journal = made
    monkeypatch.chdir(tmp_path)
    local = tmp_path / "j.journal"
    local.write_bytes(journal.read_bytes())
    flags, cause, resumes_only = REFUSALS[refusal]
    flags = [not_ray if f == "NOT_RAY" else f for f in flags]
    storages = [["--storage", local]]
    if not resumes_only:
        storages += [["--storage", tmp_path / "fresh.journal"], []]  # [] the default one
        if "--study" not in flags:
            storages.append(["--storage", local, "--study", "other"])
    before = snapshot(tmp_path)
    for storage in storages:
        out = cli("search", space, "--trials", 4, "--no-report", *flags, *storage)
        assert out.exit_code == 2 and re.search(cause, out.stderr), out.output
        assert "Traceback" not in out.output and len(out.stderr.splitlines()) == 1
        assert snapshot(tmp_path) == before, storage
    assert studies_in(local) == ["small"]


def test_a_resumed_search_with_nothing_to_do_appends_nothing(made, tmp_path) -> None:
    """Resuming looks the study up first (Optuna's create_study(load_if_exists=True) appends
    a create operation to a journal even for a study it then loads)."""
    space, journal = made
    local = tmp_path / "j.journal"
    local.write_bytes(journal.read_bytes())
    out = cli("search", space, "--storage", local, "--trials", 2, "--no-report")
    assert out.exit_code == 0 and "nothing to do" in out.stderr, out.output
    assert local.read_bytes() == journal.read_bytes()


# ---- the torn-line repair cuts only a torn record -----------------------------------------------
@pytest.mark.parametrize(
    "tail",
    [b"my note", b"my note\n", b"42", b'"a JSON string"\n', b"\n", b'{"note": 1}'],
    ids=["note", "note+newline", "number", "json-line", "empty-line", "json-object"],
)
def test_a_users_note_at_the_end_of_a_journal_is_refused_untouched(tail, made, tmp_path):
    space, journal = made
    local = tmp_path / "j.journal"
    local.write_bytes(journal.read_bytes() + tail)
    line = journal.read_bytes().count(b"\n") + 1
    before = snapshot(tmp_path)
    out = cli("search", space, "--storage", local, "--trials", 3, "--no-report")
    refused(
        out, f"line {line} is corrupt \\(not a JSON operation\\); the journal is left", "j.journal"
    )
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize(
    "torn",
    [b'{"op_code":6,"worker_id":"x","trial_id":3,"us', b'{"op_co', b"{", b'{"op_code":'],
)
def test_a_torn_record_is_cut_and_the_search_goes_on(torn, made, tmp_path) -> None:
    """What a driver killed mid-append leaves (a prefix of an Optuna record) is cut; the
    search then appends whole lines after the journal's own."""
    space, journal = made
    local = tmp_path / "j.journal"
    local.write_bytes(journal.read_bytes() + torn)
    out = cli("search", space, "--storage", local, "--trials", 3, "--no-report")
    assert out.exit_code == 0, out.output
    after = local.read_bytes()
    assert after.startswith(journal.read_bytes()) and after.endswith(b"\n")
    assert all(json.loads(line)["op_code"] >= 0 for line in after.splitlines())
    assert load_study("small", str(local)).counts()["designs"] == 3
