"""Study storage you can trust: magnet never destroys a file that is not its journal, repairs
only a journal's torn last line, lets one driver per study in (through symlinks, on
databases), writes result files whole and never over the storage, and never shows a
password. Through the command line, on real files and real servers; what was kept is
checked (file hashes, rows, trials), not only exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from click.testing import CliRunner

from magnet.cli import main
from magnet.errors import MagnetError
from magnet.search import load_study
from magnet.search import storage as S
from tests.conftest import DATA, REPO
from tests.services import magnet_command

SPACE = DATA / "search" / "small_space.yaml"
PASSWORD = "s3cret-Pa55"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


def search_args(storage: str, *extra: str) -> list[str]:
    return ["search", str(SPACE), "--storage", storage, "--no-report", *extra]


def spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        magnet_command(*args),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def trials_of(name: str, storage: str) -> list[tuple]:
    """(number, state, params, values) of every trial of a study."""
    return [(t.number, t.state, t.params, t.values) for t in load_study(name, storage).trials()]


def designs_in(journal: Path, study: str = "small") -> int:
    """The designs ``study`` has evaluated so far (0 before it exists)."""
    try:
        return load_study(study, str(journal)).counts()["designs"]
    except MagnetError:
        return 0


def journal_lines_decode(path: Path) -> bool:
    raw = path.read_bytes()
    return raw.endswith(b"\n") and all(json.loads(line) for line in raw.splitlines())


@pytest.fixture(scope="module")
def journal3(tmp_path_factory) -> Path:
    """A journal with study ``small``: 3 designs (copied by the tests that change one)."""
    path = tmp_path_factory.mktemp("journal3") / "j.journal"
    assert cli(*search_args(str(path), "--trials", "3")).exit_code == 0
    return path


@pytest.fixture
def journal(journal3, tmp_path) -> Path:
    return Path(shutil.copy(journal3, tmp_path / "j.journal"))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'locks.db'}"
    return request.getfixturevalue("postgres_url")


# ---- files that are not a journal ------------------------------------------------------------
@pytest.mark.parametrize("command", ["search", "studies", "pareto"])
def test_an_sqlite_file_that_is_not_an_optuna_storage_is_refused_untouched(
    tmp_path, command
) -> None:
    db = tmp_path / "mine.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE results (run TEXT, score REAL)")
        conn.execute("INSERT INTO results VALUES ('a', 1.5)")
    before = sha(db)
    args = {
        "search": search_args(str(db), "--trials", "1"),
        "studies": ["studies", "--storage", db],
        "pareto": ["pareto", "--study", "small", "--storage", db],
    }[command]
    out = cli(*args)
    assert out.exit_code == 2, out.output
    assert "is an SQLite database, not a magnet journal" in out.output
    assert f"sqlite:///{db}" in out.output
    assert sha(db) == before
    assert sqlite3.connect(db).execute("SELECT * FROM results").fetchall() == [("a", 1.5)]


def test_an_optuna_sqlite_file_given_as_a_path_is_that_database(tmp_path) -> None:
    db = tmp_path / "studies.db"
    url = f"sqlite:///{db}"
    assert cli(*search_args(url, "--trials", "2")).exit_code == 0
    first = trials_of("small", url)
    out = cli("studies", "--storage", db, "--json")
    assert out.exit_code == 0, out.output
    assert [r["name"] for r in json.loads(out.output)] == ["small"]
    out = cli(*search_args(str(db), "--trials", "3"))  # resumed through the plain path
    assert out.exit_code == 0, out.output
    assert load_study("small", url).counts()["designs"] == 3
    assert trials_of("small", url)[: len(first)] == first


@pytest.mark.parametrize(
    "content",
    [
        b"name: my-space\nparams: {a: 1}\n",
        b"run,score\na,1.5\nb,2.5\n",
        bytes(range(256)) * 8,
        b'{"not": "a journal"}\n{"op_code": 0}\n',
        b"",  # empty: taken for a journal, not refused (checked below)
    ],
    ids=["yaml", "csv", "binary", "json-lines", "empty"],
)
def test_a_file_that_is_not_a_journal_is_refused_untouched(tmp_path, content) -> None:
    path = tmp_path / "data.file"
    path.write_bytes(content)
    for args in (search_args(str(path), "--trials", "1"), ["studies", "--storage", path]):
        out = cli(*args)
        if not content:
            assert out.exit_code == 0, out.output
            continue
        assert out.exit_code == 2, out.output
        assert f"{path}: --storage: cannot read the journal: the file is not a magnet journal" in (
            out.output
        )
        assert "one JSON operation per line" in out.output
        assert path.read_bytes() == content


def test_only_a_bounded_prefix_is_read_to_tell_a_journal(tmp_path, monkeypatch) -> None:
    path = tmp_path / "big.bin"
    path.write_bytes(b"x" * (3 * S.SNIFF_BYTES))
    read: list[int] = []
    real_open = Path.open

    class Counting:
        def __init__(self, f):
            self.f = f

        def read(self, n: int = -1) -> bytes:
            read.append(n)
            return self.f.read(n)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.f.close()

    monkeypatch.setattr(Path, "open", lambda self, *a, **k: Counting(real_open(self, *a, **k)))
    with pytest.raises(MagnetError, match="not a magnet journal"):
        S.locate(str(path), create=True)
    assert read == [S.SNIFF_BYTES]


# ---- the journal: torn and corrupt lines -----------------------------------------------------
def test_a_torn_last_line_is_cut_and_earlier_trials_are_kept(journal) -> None:
    before = trials_of("small", str(journal))
    good = journal.read_bytes()
    torn = b'{"op_code":6,"worker_id":"x","trial_id":3,"us'
    journal.write_bytes(good + torn)
    out = cli(*search_args(str(journal), "--trials", "4"))
    assert out.exit_code == 0, out.output
    after = journal.read_bytes()
    assert after.startswith(good) and torn not in after
    assert journal_lines_decode(journal)
    assert trials_of("small", str(journal))[:3] == before
    assert load_study("small", str(journal)).counts()["designs"] == 4


def test_the_repair_waits_while_another_driver_appends(journal) -> None:
    from optuna.storages.journal import JournalFileOpenLock

    good = journal.read_bytes()
    journal.write_bytes(good + b'{"op_code":4,"wor')
    appending = JournalFileOpenLock(str(journal))  # what Optuna holds while it appends
    appending.acquire()
    opener = threading.Thread(target=S.open_storage, args=(str(journal),), kwargs={"create": True})
    try:
        opener.start()
        time.sleep(0.5)
        assert opener.is_alive() and journal.read_bytes().endswith(b'{"op_code":4,"wor')
    finally:
        appending.release()
    opener.join(timeout=10)
    assert journal.read_bytes() == good


def test_a_last_line_missing_only_its_newline_gets_it(journal) -> None:
    good = journal.read_bytes()
    journal.write_bytes(good[:-1])
    S.open_storage(str(journal), create=True)
    assert journal.read_bytes() == good
    S.open_storage(str(journal), create=True)  # and a sound journal is left as it is
    assert journal.read_bytes() == good


def test_a_corrupt_middle_line_is_refused_and_left_as_is(journal) -> None:
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[4] = b'{"op_code":5,"trial_id":0,"par\n'
    journal.write_bytes(b"".join(lines))
    before = sha(journal)
    for args in (search_args(str(journal), "--trials", "5"), ["studies", "--storage", journal]):
        out = cli(*args)
        assert out.exit_code == 2, out.output
        assert "cannot read the journal: line 5 is corrupt" in out.output
        assert sha(journal) == before


@pytest.mark.subprocess
def test_two_searches_share_a_journal(tmp_path) -> None:
    journal = tmp_path / "shared.journal"
    procs = [spawn(*search_args(str(journal), "--study", "a", "--trials", "6"))]
    deadline = time.monotonic() + 60
    while designs_in(journal, "a") < 1:  # b opens (and checks) the journal while a appends
        assert procs[0].poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    procs.append(spawn(*search_args(str(journal), "--study", "b", "--trials", "6")))
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    for name in "ab":
        study = load_study(name, str(journal))
        assert study.counts()["designs"] == 6
        assert study.counts()["running"] == study.counts()["failed"] == 0
    assert journal_lines_decode(journal)


# ---- one driver per study --------------------------------------------------------------------
@pytest.mark.subprocess
def test_a_second_driver_through_a_symlink_or_dot_path_is_refused(tmp_path, monkeypatch) -> None:
    journal = tmp_path / "j.journal"
    space = yaml.safe_load(SPACE.read_text())
    space["workloads"] = [str(DATA / "search" / "small_net.yaml")]
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(space))
    link = tmp_path / "link.journal"
    link.symlink_to(journal)
    first = spawn("search", str(tmp_path / "space.yaml"), "--storage", str(journal),
                  "--trials", "8", "--no-report")  # fmt: skip
    deadline = time.monotonic() + 60
    while designs_in(journal) < 4:
        assert first.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    stop_outside_appends(first, journal)  # holding its driver lock while the others try
    try:
        monkeypatch.chdir(tmp_path)
        for storage in (str(link), "./j.journal", "../" + tmp_path.name + "/j.journal"):
            out = cli("search", "space.yaml", "--storage", storage, "--trials", "10",
                      "--no-report")  # fmt: skip
            assert out.exit_code == 2, out.output
            assert "another magnet search is running study 'small'" in out.output
    finally:
        os.kill(first.pid, signal.SIGCONT)
    assert first.wait(timeout=120) == 0, first.stderr.read()
    study = load_study("small", str(journal))
    assert study.counts()["designs"] == 8
    assert study.counts()["failed"] == study.counts()["running"] == 0
    assert journal_lines_decode(journal)


def stop_outside_appends(proc: subprocess.Popen, journal: Path) -> None:
    """SIGSTOP ``proc`` at a moment it holds no journal append lock (Optuna's ``.lock``)."""
    while True:
        os.kill(proc.pid, signal.SIGSTOP)
        if not Path(f"{journal}.lock").exists():
            return
        os.kill(proc.pid, signal.SIGCONT)
        time.sleep(0.005)


def test_lock_files_of_long_and_odd_study_names_are_short_and_distinct(journal) -> None:
    names = ["a/" * 128, "a_" * 128, "é ../<x>\\" * 25, "small"]
    locks = [S.DriverLock(str(journal), SimpleNamespace(study_name=n)) for n in names]
    try:
        for lock in locks:
            lock.acquire()
        files = sorted(p.name for p in journal.parent.glob("*.driver.lock"))
        assert len(files) == len(names) and all(len(f.encode()) < 255 for f in files)
        with pytest.raises(MagnetError, match="another magnet search is running"):
            S.DriverLock(str(journal), SimpleNamespace(study_name=names[0])).acquire()
    finally:
        for lock in locks:
            lock.release()


def test_the_database_lock_admits_one_of_two_racing_drivers(db_url) -> None:
    for round_ in range(20):
        study = SimpleNamespace(study_name=f"race-{round_}")
        locks = [S.DriverLock(db_url, study) for _ in range(2)]
        barrier = threading.Barrier(2)
        won: list[bool | str] = [False, False]

        def race(i: int, locks=locks, barrier=barrier, won=won) -> None:
            barrier.wait()
            try:
                locks[i].acquire()
                won[i] = True
            except MagnetError as exc:
                won[i] = "another magnet search is running" in str(exc) and "refused"

        threads = [threading.Thread(target=race, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(map(str, won)) == ["True", "refused"], (round_, won)
        for lock in locks:
            lock.release()


def test_a_dead_drivers_database_lock_is_taken_over(db_url) -> None:
    import sqlalchemy as sa

    gone = subprocess.Popen(["true"])
    gone.wait()
    engine = sa.create_engine(db_url)
    S._create_lock_table(engine)
    table = S._lock_table()
    now = time.time()
    rows = {
        "dead-here": (S.HOST, gone.pid, now),
        "silent-elsewhere": ("another-host", 1, now - 2 * S.STALE_SECONDS),
        "alive-elsewhere": ("another-host", 1, now),
    }
    with engine.begin() as db:
        for name, (host, pid, beat) in rows.items():
            db.execute(sa.delete(table).where(table.c.study_name == name))
            db.execute(
                sa.insert(table).values(
                    study_name=name, token="old", host=host, pid=pid, heartbeat=beat
                )
            )
    for name in ("dead-here", "silent-elsewhere"):
        lock = S.DriverLock(db_url, SimpleNamespace(study_name=name))
        lock.acquire()
        with engine.connect() as db:
            row = db.execute(sa.select(table).where(table.c.study_name == name)).one()
        assert (row.token, row.pid) == (lock.token, os.getpid())
        lock.release()
    with pytest.raises(MagnetError, match=r"is running study 'alive-elsewhere' \(pid 1 on anoth"):
        S.DriverLock(db_url, SimpleNamespace(study_name="alive-elsewhere")).acquire()
    engine.dispose()


@pytest.mark.subprocess
def test_drivers_creating_one_fresh_sqlite_storage_at_once_do_not_crash(tmp_path) -> None:
    for round_ in range(5):  # in threads: the creations overlap every time
        db = tmp_path / f"t{round_}.db"
        barrier = threading.Barrier(3)
        errors: list[Exception] = []

        def create(db: Path = db, barrier=barrier, errors=errors) -> None:
            barrier.wait()
            try:
                S.open_storage(f"sqlite:///{db}", create=True)
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=create) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert sqlite3.connect(db).execute("SELECT count(*) FROM alembic_version").fetchone() == (
            1,
        )
    url = f"sqlite:///{tmp_path / 'fresh.db'}"  # and two searches, as users start them
    procs = [spawn(*search_args(url, "--study", name, "--trials", "2")) for name in "ab"]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert [load_study(n, url).counts()["designs"] for n in "ab"] == [2, 2]


# ---- result files ----------------------------------------------------------------------------
def test_reports_and_exports_never_overwrite_the_storage(journal, tmp_path) -> None:
    link = tmp_path / "link.journal"
    link.symlink_to(journal)
    hard = tmp_path / "hard.journal"
    os.link(journal, hard)
    before = sha(journal)
    storage = ["--study", "small", "--storage", str(journal)]
    for target in (journal, link, hard, Path(os.path.relpath(journal))):
        for args in (
            ["report", *storage, "-o", target],
            ["export", *storage, "-o", target],
            ["search", SPACE, "--storage", journal, "--trials", "4", "--report", target],
        ):
            out = cli(*args)
            assert out.exit_code == 2, (args, out.output)
            assert "is the study storage" in out.output
            assert sha(journal) == before
    # a report naming the storage from Python is refused as well
    from magnet.report import write_report

    with pytest.raises(MagnetError, match="is the study storage"):
        write_report(load_study("small", str(link)), journal)
    assert sha(journal) == before


@pytest.mark.parametrize("name", ["notes.json", "notes.csv", "notes.html", "notes.txt"])
def test_a_users_file_is_never_written_over_but_magnets_own_output_is(journal, tmp_path, name):
    # a mistyped -o names a file the user wrote: refused, byte for byte untouched
    users = tmp_path / name
    users.write_text('{"my": "notes"}\n')
    before = sha(users)
    storage = ["--study", "small", "--storage", journal]
    command = "report" if name.endswith((".html", ".txt")) else "export"
    out = cli(command, *storage, "-o", users)
    assert out.exit_code == 2 and "exists and was not written by magnet" in out.output
    assert sha(users) == before
    out = cli("map", "--arch", "simba-chip", "--layer", "K=8,C=8", "--output", users)
    assert out.exit_code == 2 and "exists and was not written by magnet" in out.output
    assert sha(users) == before
    # a file magnet wrote is written again (a report re-made, an export refreshed)
    if not name.endswith(".txt"):
        ours = tmp_path / f"ours{users.suffix}"
        assert cli(command, *storage, "-o", ours).exit_code == 0
        assert cli(command, *storage, "-o", ours).exit_code == 0


def test_an_sqlite_storage_is_never_overwritten(tmp_path) -> None:
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    assert cli(*search_args(url, "--trials", "1")).exit_code == 0
    before = sha(db)
    for storage in (url, str(db)):
        out = cli("export", "--study", "small", "--storage", storage, "-o", db)
        assert out.exit_code == 2 and "is the study storage" in out.output, out.output
    assert sha(db) == before


@pytest.mark.parametrize("name", ["t.json", "t.csv", "t.html"])
def test_an_output_interrupted_mid_write_leaves_the_old_file(journal, tmp_path, monkeypatch, name):
    out_file = tmp_path / "out" / name
    out_file.parent.mkdir()
    command = "report" if name.endswith(".html") else "export"
    args = [command, "--study", "small", "--storage", journal, "-o", out_file]
    assert cli(*args).exit_code == 0
    old = sha(out_file)

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("magnet.files.os.fsync", disk_full)
    out = cli(*args)
    assert out.exit_code != 0 and isinstance(out.exception, OSError)
    assert sha(out_file) == old
    assert [p.name for p in out_file.parent.iterdir()] == [name]  # no temporary file left
    monkeypatch.undo()
    assert cli(*args).exit_code == 0  # and a write that completes replaces it whole


def test_a_serialiser_failure_leaves_the_old_export(journal, tmp_path, monkeypatch) -> None:
    from magnet.search.study import Study

    out_file = tmp_path / "t.csv"
    args = ["export", "--study", "small", "--storage", journal, "-o", out_file]
    assert cli(*args).exit_code == 0
    old = sha(out_file)
    row = Study._row

    def broken_row(self, trial):  # trial 2's row cannot be made (a serialiser's failure)
        if trial.number == 2:
            raise ValueError("trial 2 cannot be written")
        return row(self, trial)

    monkeypatch.setattr(Study, "_row", broken_row)
    out = cli(*args)
    assert isinstance(out.exception, ValueError)
    assert sha(out_file) == old


# ---- secrets ---------------------------------------------------------------------------------
def test_describe_masks_passwords() -> None:
    assert S.describe("postgresql://me:pw@db.example/s") == "postgresql://me:***@db.example/s"
    assert S.describe("postgresql://me:p@ss/w@h:5/s?password=x&a=1") == (
        "postgresql://me:***@h:5/s?password=***&a=1"
    )
    assert S.describe("postgresql://me@h/s") == "postgresql://me@h/s"
    assert S.describe("sqlite:///x.db") == "sqlite:///x.db"
    assert S.describe(None) == str(S.DEFAULT_JOURNAL)


def test_a_bad_url_error_does_not_show_the_password() -> None:
    out = cli("studies", "--storage", f"postgresql://me:{PASSWORD}@127.0.0.1:1/s")
    assert out.exit_code == 2 and "cannot open the storage" in out.output
    assert PASSWORD not in out.output and "me:***@127.0.0.1:1/s" in out.output


def test_no_password_in_output_reports_exports_or_the_dashboard(postgres_url, tmp_path) -> None:
    from starlette.testclient import TestClient

    from magnet.dashboard import create_app

    url = postgres_url.replace("postgres@", f"postgres:{PASSWORD}@")  # the server trusts anyone
    report = tmp_path / "r.html"
    search = ["search", SPACE, "--storage", url, "--study", "masked", "--trials", "2"]
    runs = [
        cli(*search, "--report", report),
        cli(*search, "--report", report),  # nothing to do
        cli("studies", "--storage", url),
        cli("pareto", "--study", "masked", "--storage", url),
        cli("export", "--study", "masked", "--storage", url, "-o", tmp_path / "t.json"),
        cli("report", "--study", "masked", "--storage", url, "-o", tmp_path / "r2.html"),
    ]
    for out in runs:
        assert out.exit_code == 0, out.output
        assert PASSWORD not in out.output
    assert "postgres:***@" in runs[0].output
    for path in (report, tmp_path / "t.json", tmp_path / "r2.html"):
        assert PASSWORD not in path.read_text()
    assert "postgres:***@" in report.read_text()
    with TestClient(create_app(url), base_url="http://127.0.0.1") as client:
        for page in ("/", "/studies/masked", "/api/studies"):
            response = client.get(page)
            assert response.status_code == 200 and PASSWORD not in response.text


# ---- the journal's append lock ----------------------------------------------------------------
_HOLD_AND_DIE = """
import os, sys
from magnet.search.journal_lock import JournalLock
JournalLock(sys.argv[1]).acquire()
os.kill(os.getpid(), 9)  # dies holding it, as a driver killed mid-append does
"""

_COUNT = """
import sys
from pathlib import Path
from magnet.search.journal_lock import JournalLock
journal, counter = sys.argv[1], Path(sys.argv[2])
lock = JournalLock(journal)
for _ in range(150):
    lock.acquire()
    counter.write_text(str(int(counter.read_text()) + 1))  # a lost update shows in the total
    lock.release()
"""


@pytest.mark.subprocess
def test_a_dead_holders_journal_lock_is_broken_at_once(tmp_path) -> None:
    from magnet.search.journal_lock import JournalLock

    journal = tmp_path / "j.journal"
    journal.touch()
    died = subprocess.run([sys.executable, "-c", _HOLD_AND_DIE, str(journal)], cwd=REPO)
    assert died.returncode == -signal.SIGKILL and Path(f"{journal}.lock").exists()
    lock = JournalLock(str(journal))
    start = time.monotonic()
    lock.acquire()  # Optuna's own lock waits its 30 s grace period here
    assert time.monotonic() - start < 5
    lock.release()
    assert [p.name for p in tmp_path.iterdir()] == ["j.journal"]  # nothing left beside it


def test_a_live_holders_journal_lock_is_waited_for(tmp_path) -> None:
    from magnet.search.journal_lock import JournalLock

    journal = tmp_path / "j.journal"
    journal.touch()
    holder, waiter = JournalLock(str(journal)), JournalLock(str(journal))
    holder.acquire()
    taken = threading.Event()
    thread = threading.Thread(target=lambda: (waiter.acquire(), taken.set()))
    thread.start()
    assert not taken.wait(1.0)  # held: the waiter neither breaks it nor gets in
    holder.release()
    assert taken.wait(10)
    waiter.release()
    thread.join()


@pytest.mark.subprocess
def test_the_journal_lock_excludes_processes(tmp_path) -> None:
    journal, counter = tmp_path / "j.journal", tmp_path / "counter"
    journal.touch()
    counter.write_text("0")
    args = [sys.executable, "-c", _COUNT, str(journal), str(counter)]
    procs = [subprocess.Popen(args, cwd=REPO) for _ in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert counter.read_text() == str(3 * 150)


def test_a_file_in_the_way_of_an_output_folder_is_bad_input(tmp_path) -> None:
    blocker = tmp_path / "results"
    blocker.write_text("the user's notes")
    out = cli(*search_args(str(blocker / "s.journal"), "--trials", "1"))
    assert out.exit_code == 2 and "is a file, not a folder" in out.output
    assert "Traceback" not in out.output and blocker.read_text() == "the user's notes"
    journal = tmp_path / "s.journal"
    assert cli(*search_args(str(journal), "--trials", "1")).exit_code == 0
    out = cli("report", "--study", "small", "--storage", journal, "--output", blocker / "r.html")
    assert out.exit_code == 2 and "is a file, not a folder" in out.output
    assert blocker.read_text() == "the user's notes"


def test_a_search_syncs_its_journal_to_the_disk_at_each_trial_end_only(
    tmp_path, monkeypatch
) -> None:
    # Optuna syncs every operation (13 a design here: its trial, 7 parameters, records, end);
    # magnet syncs the study's operations and each trial's end, which syncs all before it
    from magnet.search import search

    journal = tmp_path / "s.journal"
    synced: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        if os.readlink(f"/proc/self/fd/{fd}") == str(journal):
            synced.append(journal.read_bytes().count(b"\n"))  # its lines by then
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    study = search(SPACE, n_trials=4, storage=str(journal), seed=1)
    ops = [json.loads(line) for line in journal.read_text().splitlines()]
    ends = [i for i, op in enumerate(ops, 1) if op["op_code"] == 6 and op["state"] in (1, 2, 3)]
    study_ops = [i for i, op in enumerate(ops, 1) if op["op_code"] in (0, 1, 2, 3, 10)]
    assert len(ends) == len(study.trials()) == 4
    assert sorted(synced) == sorted(ends + study_ops)  # each sync right after its operation
    assert synced[-1] == len(ops)  # the search's last operation, a trial's end, is on the disk


def test_a_trials_parameters_and_its_attributes_are_each_appended_at_once(
    tmp_path, monkeypatch
) -> None:
    # Optuna appends each operation under the journal's lock; a search holds a trial's
    # parameters (SET_TRIAL_PARAM, op 5; the sampler's note of the trial's generation may
    # join them) for one append, and its constraints and record (SET_TRIAL_SYSTEM_ATTR 9,
    # SET_TRIAL_USER_ATTR 8) for another, before it is told
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    from magnet.search import search
    from magnet.search.journal_lock import JournalLock

    journal = tmp_path / "s.journal"
    appended_at: list[int] = []  # the journal's line count as each append takes the lock
    real = JournalLock.acquire

    def acquire(self: JournalLock) -> bool:
        taken = real(self)
        appended_at.append(journal.read_bytes().count(b"\n"))
        return taken

    monkeypatch.setattr(JournalLock, "acquire", acquire)
    study = search(SPACE, n_trials=4, storage=str(journal), seed=1)
    ops = [json.loads(line) for line in journal.read_text().splitlines()]

    def params(op: dict) -> bool:
        return op["op_code"] == 5

    def attrs(op: dict) -> bool:
        return op["op_code"] == 8 or (
            op["op_code"] == 9 and next(iter(op["system_attr"])).startswith("constraints:")
        )

    for trial in study.trials():  # one study in the journal: a trial's id is its number
        for kind, least in ((params, 5), (attrs, 3)):  # 5 parameters; 2 constraints, a record
            lines = [
                i for i, op in enumerate(ops) if op.get("trial_id") == trial.number and kind(op)
            ]
            assert len(lines) == least
            assert lines == list(range(lines[0], lines[-1] + 1))  # together
            assert not set(lines[1:]) & set(appended_at)  # no append begins among them
    assert len(appended_at) < len(ops) / 2
    # and Optuna's own reader finds every parameter and attribute
    plain = JournalStorage(JournalFileBackend(str(journal)))
    trials = optuna.load_study(study_name=study.name, storage=plain).trials
    assert [t.params for t in trials] == [t.params for t in study.trials()]
    assert all("magnet" in t.user_attrs and len(t.system_attrs) == 3 for t in trials)


def test_appends_held_write_once_at_the_end_nested_or_raising(tmp_path) -> None:
    # a block's operations reach the file at its end, an inner block's with the outer's, and
    # an exception inside still writes them; a storage that is not a search's journal has
    # nothing to hold
    journal = tmp_path / "h.journal"
    storage = S.open_storage(str(journal), create=True)
    backend = storage.search_backend  # type: ignore[attr-defined]

    def lines() -> int:
        return journal.read_bytes().count(b"\n")

    start = lines()
    with S.appends_held(storage):
        backend.append_logs([{"op_code": 2, "study_id": 0, "user_attr": {"a": 1}}])
        with S.appends_held(storage):
            backend.append_logs([{"op_code": 2, "study_id": 0, "user_attr": {"b": 2}}])
        assert lines() == start
    assert lines() == start + 2
    with pytest.raises(RuntimeError), S.appends_held(storage):
        backend.append_logs([{"op_code": 2, "study_id": 0, "user_attr": {"c": 3}}])
        raise RuntimeError
    assert lines() == start + 3
    from optuna.storages import InMemoryStorage

    with S.appends_held(InMemoryStorage()) as held:
        assert held is None  # nothing held: a storage of another kind writes as it goes
