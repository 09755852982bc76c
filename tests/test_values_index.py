"""A journal's values index (``magnet.search.values_index``): what ``magnet pareto`` reads
instead of every trial's record, against the full reading.

Random journals (every kind of operation Optuna writes, many of them to be skipped) are
indexed whole and in pieces, and each trial's number, state, values, feasibility and
parameters (read back from the offsets the index keeps) are Optuna's replay's. On a real
study, ``magnet pareto`` (table and JSON) prints byte for byte what the full reading prints:
with no index, with one up to date, after trials are appended through Optuna's own API, and
with an index that is damaged, stale, of another journal, of another version, or not
magnet's file (left untouched), in a folder it cannot write, with a torn or stray last line,
and errors alike (a corrupt line, no such study, a study magnet did not make). An index grown
while Optuna appends is the one made afterwards from the whole journal.
"""

from __future__ import annotations

import copy
import json
import random
import shutil
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import optuna
import pytest
from click.testing import CliRunner
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.storages.journal._storage import JournalStorageReplayResult

from magnet.cli import main
from magnet.search import search
from magnet.search.values_index import (
    _NOT_JSON,
    MAGIC,
    JournalIndex,
    Unanswerable,
    _operation,
    _violated,
    front_params,
    index_path,
    indexed_front,
    journal_index,
)
from tests.conftest import DATA
from tests.test_journal_replay import _journal

SPACE = DATA / "search" / "small_space.yaml"


# ---- random journals against Optuna's replay ---------------------------------------------------
def _magnet_attrs(rng: random.Random, logs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``logs`` with some attributes made magnet's record and Optuna's constraints (the
    ones the index reads), of every kind the full reading tells apart."""
    out = []
    for log in copy.deepcopy(logs):
        op = log["op_code"]
        if op == 8 and rng.random() < 0.7:
            log["user_attr"] = {"magnet": _record(rng)}
        elif op == 9 and rng.random() < 0.7:
            key = rng.choice(["constraints:feasible", "constraints:area", "constraints"])
            value: Any = rng.uniform(-1, 1)
            log["system_attr"] = {key: [value, -1.0] if key == "constraints" else value}
        elif op == 4 and "user_attrs" in log:
            log["user_attrs"] = {"magnet": _record(rng)}
        out.append(log)
    return out


def _record(rng: random.Random) -> Any:
    return rng.choice(
        [
            {"status": "ok", "metrics": {"a": 1.0}},
            {"status": "ok", "metrics": {}},
            {"status": "infeasible", "metrics": {"a": 1.0}},
            {"metrics": {"a": 1.0}},
            None,
            {},
        ]
    )


def _write(path: Path, logs: list[dict[str, Any]]) -> None:
    with open(path, "a") as f:
        for log in logs:
            f.write(json.dumps(log, separators=(",", ":")) + "\n")


def _feasible(t: optuna.trial.FrozenTrial) -> tuple[bool, bool]:
    """(feasible, has values) of a trial as ``magnet.search.study._view`` decides them."""
    attrs = t.user_attrs.get("magnet") or {}
    status = attrs.get("status", "failed" if t.state.name == "PRUNED" else "ok")
    violated = any(v > 0 for v in t.constraints.values())
    ok = t.state.name == "COMPLETE" and status == "ok" and not violated
    return ok, bool(t.state.name == "COMPLETE" and t.values is not None and attrs.get("metrics"))


def _compare(index: JournalIndex, logs: list[dict[str, Any]], journal: Path) -> int:
    """Assert the index holds what Optuna's replay of ``logs`` holds; the trials compared."""
    replay = JournalStorageReplayResult("reader-")
    replay.apply_logs(logs)
    studies = {s._study_id: s for s in replay.get_all_studies()}
    assert {k: v["name"] for k, v in index.studies.items()} == {
        k: s.study_name for k, s in studies.items()
    }
    compared = 0
    for study_id, s in studies.items():
        assert index.studies[study_id]["user_attrs"] == s.user_attrs
        for t in replay.get_all_trials(study_id, None):
            i = t._trial_id
            assert (index.study[i], index.number[i], index.state[i]) == (
                study_id,
                t.number,
                t.state.value,
            )
            assert index.values[i] == t.values
            compared += 1
            if study_id in index.unusable:  # constraints in both forms: never answered
                continue
            feasible, with_values = _feasible(t)
            assert (index.state[i] == 1 and index.ok[i] and not index.violated[i]) == feasible
            assert (index.state[i] == 1 and index.values[i] is not None and index.metrics[i]) == (
                with_values
            )
            with open(journal, "rb") as f:
                params = front_params(f, index.sources[i])
            assert params == t.params and list(params) == list(t.params)  # in Optuna's order
    return compared


@pytest.mark.parametrize("seed", range(30))
def test_random_journals_index_as_optuna_replays_them(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    logs = _magnet_attrs(rng, _journal(rng, 300))
    journal = tmp_path / "j.journal"
    _write(journal, logs)
    whole = journal_index(str(journal))
    assert _compare(whole, logs, journal) > 5
    # in pieces: each piece appended, the index read from its file and brought up to date
    pieces = tmp_path / "p.journal"
    cuts = sorted(rng.sample(range(1, len(logs)), 3))
    for start, stop in zip([0, *cuts], [*cuts, len(logs)], strict=True):
        _write(pieces, logs[start:stop])
        grown = journal_index(str(pieces))
        assert grown.offset == pieces.stat().st_size
    assert _compare(grown, logs, pieces) > 5
    assert index_path(str(pieces)).read_bytes() == grown.to_bytes()


def test_a_torn_or_stray_last_line_is_left_for_later(tmp_path: Path) -> None:
    rng = random.Random(7)
    logs = _magnet_attrs(rng, _journal(rng, 60))
    journal = tmp_path / "j.journal"
    _write(journal, logs[:-1])
    size = journal.stat().st_size
    last = json.dumps(logs[-1], separators=(",", ":"))
    with open(journal, "a") as f:
        f.write(last[:20])  # being written
    assert journal_index(str(journal)).offset == size
    with open(journal, "a") as f:
        f.write(last[20:] + "\n")
    assert journal_index(str(journal)).offset == journal.stat().st_size
    _compare(JournalIndex.from_bytes(index_path(str(journal)).read_bytes()), logs, journal)


# ---- the line decoder and the constraint check, against json and Optuna ----------------------
def _json_value(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value with what decoders tell apart: NaN and infinities, -0.0, floats
    to the last bit, big integers, escapes, non-ASCII text and lone surrogates."""
    kind = rng.randrange(10 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False, 0, -0.0, float("nan"), float("inf"), -float("inf")])
    if kind == 1:
        return rng.randint(-(10**30), 10**30) if rng.random() < 0.3 else rng.randint(-9, 9)
    if kind in (2, 3):
        return struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
    if kind in (4, 5):
        alphabet = 'ab"\\/\b\f\n\r\t\x00\x1f é€😀\ud800\udc00'
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(8)))
    if kind in (6, 7):
        return [_json_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "b", "op_code", "é", "a"]
    return {rng.choice(keys): _json_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _decoded(decode: Any, line: bytes) -> tuple[str, str]:
    """What ``decode`` makes of ``line``: its value (repr: NaN, -0.0, ints and floats, key
    order told apart), not JSON, or the error it raises."""
    try:
        value = decode(line)
    except Exception as e:
        return "raises", type(e).__name__
    return ("not json", "") if value is _NOT_JSON else ("value", repr(value))


def test_lines_decode_as_json_decodes_them() -> None:
    """``_operation`` (pydantic's parser, json where it refuses) gives what Optuna's reader
    gets from ``json``, on random texts and on texts with a few bytes changed (each kind of
    outcome met: values, texts json refuses, lines neither takes)."""
    rng = random.Random(0)
    decoder = json.JSONDecoder().decode

    def reference(line: bytes) -> Any:
        try:
            return decoder(line.decode())
        except json.JSONDecodeError:
            return _NOT_JSON

    outcomes: set[str] = set()
    for _ in range(4000):
        value = {"op_code": 4, "x": _json_value(rng)}
        line = json.dumps(value, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")
        lines = [line + b"\n"]
        for _ in range(3):
            mutated = bytearray(line)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(mutated) + 1)
                byte = rng.choice(b'{}[]",:.-+eE0123456789 \\nutfalsNaIiy\x00\x1f\xc3\xa9\xff')
                if rng.random() < 0.5 and at < len(mutated):
                    mutated[at] = byte
                else:
                    mutated.insert(at, byte)
            lines.append(bytes(mutated))
        for text in lines:
            ours = _decoded(lambda b: _operation(b, decoder), text)
            assert ours == _decoded(reference, text), text
            outcomes.add(ours[0])
    assert outcomes == {"value", "not json", "raises"}  # raises: bytes that are not UTF-8
    # what pydantic's parser refuses and json takes: json's values
    deep = b'{"a":' + b"[" * 300 + b"]" * 300 + b"}"
    for text in (b'{"a":"\\ud800"}', deep, b'{"a":' + b"1" * 5000 + b".5}"):
        assert _decoded(lambda b: _operation(b, decoder), text) == _decoded(reference, text)


@pytest.mark.filterwarnings("ignore:Overwrite an old format constraint")  # Optuna's, as meant
@pytest.mark.parametrize("seed", range(3))
def test_a_broken_constraint_is_what_optuna_reads(seed: int) -> None:
    """``_violated`` (one key each: no list, a plain check) against Optuna's reading of a
    trial's constraint attributes; both of Optuna's forms at once: ``Unanswerable``."""
    from optuna.study._constrained_optimization import _get_constraints_from_system_attrs

    rng = random.Random(seed)
    for _ in range(500):
        keys = rng.sample(["constraints:a", "constraints:b", "constraints:0", "constraints"], 2)
        attrs: dict[str, Any] = {}
        for key in keys[: rng.randint(1, 2)]:
            count = rng.randint(0, 2)
            values = [rng.choice([-1.0, 0.0, 0.5, float("nan")]) for _ in range(count)]
            attrs[key] = values if key == "constraints" else (values or [0.0])[0]
        read = _get_constraints_from_system_attrs(attrs)
        if "constraints" in attrs and "constraints:0" in attrs and attrs["constraints"]:
            with pytest.raises(Unanswerable):
                _violated(attrs)
        else:
            assert _violated(attrs) == any(v > 0 for v in read.values()), attrs


def test_candidates_are_the_feasible_trials_with_their_values() -> None:
    """``candidates``: of the study asked, the trials complete, ``ok`` and within their
    constraints, by number, with their first ``objectives`` values; a feasible trial
    without metrics or with too few values: ``Unanswerable``."""
    time = "2026-01-01T00:00:00"
    index = JournalIndex()
    index.apply({"op_code": 0, "study_name": "a", "directions": [1, 1]}, 0)
    index.apply({"op_code": 0, "study_name": "b", "directions": [1]}, 0)
    ok = {"status": "ok", "metrics": {"e": 1.0}}
    trials = [  # study, state, values, record, constraint
        (0, 1, [1.0, 2.0, 9.0], ok, -1.0),  # 0: feasible (a third value, not an objective)
        (1, 1, [5.0, 5.0], ok, -1.0),  # 1: another study
        (0, 1, [3.0, 4.0], ok, 0.5),  # 2: a broken constraint
        (0, 3, None, ok, -1.0),  # 3: failed
        (0, 1, [5.0, 6.0], {"status": "infeasible", "metrics": {"e": 1.0}}, -1.0),  # 4
        (0, 1, [7.0, 8.0], ok, 0.0),  # 5: feasible (a constraint at 0 holds)
    ]
    for study, state, values, record, constraint in trials:
        log = {
            "op_code": 4,
            "study_id": study,
            "datetime_start": time,
            "datetime_complete": time,
            "state": state,
            "values": values,
            "user_attrs": {"magnet": record},
            "system_attrs": {"constraints:limit": constraint},
        }
        index.apply(log, 0)
    ids, values = index.candidates(0, 2)
    assert ids == [0, 5] and values.tolist() == [[1.0, 2.0], [7.0, 8.0]]
    assert index.candidates(1, 1)[1].tolist() == [[5.0]]
    assert index.candidates(1, 1)[0] == [1]
    with pytest.raises(Unanswerable):
        index.candidates(0, 3)  # trial 5 has two values
    index.metrics[5] = False
    with pytest.raises(Unanswerable):
        index.candidates(0, 2)
    index.metrics[5], index.values[5] = True, None
    with pytest.raises(Unanswerable):
        index.candidates(0, 2)


# ---- magnet pareto on a real study --------------------------------------------------------------
@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A journal holding study ``small`` (12 designs of the small space, some infeasible by
    their derived constraint) and a study Optuna made without magnet."""
    journal = tmp_path_factory.mktemp("index") / "made.journal"
    search(SPACE, n_trials=12, storage=str(journal), study="small")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    optuna.create_study(
        study_name="plain", storage=JournalStorage(JournalFileBackend(str(journal)))
    ).optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=3)
    return journal


@pytest.fixture
def journal(made: Path, tmp_path: Path) -> Path:
    """A copy of ``made``'s journal, of this test's own."""
    copied = tmp_path / "s.journal"
    shutil.copy(made, copied)
    return copied


def _pareto(journal: Path, *extra: str, study: str = "small") -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["pareto", "--study", study, "--storage", str(journal), *extra])
    return out.exit_code, out.stdout, out.stderr


def _same(journal: Path, monkeypatch: pytest.MonkeyPatch, study: str = "small") -> None:
    """``magnet pareto`` (table and JSON) prints what the full reading prints."""
    for extra in ((), ("--json",)):
        indexed = _pareto(journal, *extra, study=study)
        with monkeypatch.context() as m:
            m.setenv("MAGNET_NO_INDEX", "1")
            full = _pareto(journal, *extra, study=study)
        assert indexed == full


def _indexed(journal: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Whether ``magnet pareto`` answers from the index (the full reading forbidden)."""

    def forbidden(*args: Any) -> None:
        raise AssertionError("the full reading")

    with monkeypatch.context() as m:
        m.setattr("magnet.cli.study_commands._read_study", forbidden)
        return (
            CliRunner()
            .invoke(main, ["pareto", "--study", "small", "--storage", str(journal)])
            .exit_code
            == 0
        )


def _append(journal: Path, count: int, seed: int) -> None:
    """``count`` trials appended through Optuna's own API, half cloned from feasible ones
    (values scattered, some better), half asked and told as a driver does (parameters,
    constraints, magnet's record, values: one operation each)."""
    study = optuna.load_study(
        study_name="small", storage=JournalStorage(JournalFileBackend(str(journal)))
    )
    rng = random.Random(seed)
    done = [t for t in study.get_trials() if t.state.name == "COMPLETE" and t.values]
    clones = []
    for _ in range(count // 2):
        t = copy.deepcopy(rng.choice(done))
        t.values = [v * rng.uniform(0.7, 1.2) for v in t.values]
        clones.append(t)
    study.add_trials(clones)
    for _ in range(count - count // 2):
        source = rng.choice(done)
        trial = study.ask(fixed_distributions=source.distributions)
        for key, value in source.constraints.items():
            trial.set_constraint(key, value)
        trial.set_user_attr("magnet", source.user_attrs["magnet"])
        study.tell(trial, [v * rng.uniform(0.7, 1.2) for v in source.values])


def test_pareto_prints_what_the_full_reading_prints_as_the_journal_grows(
    journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = index_path(str(journal))
    _same(journal, monkeypatch)  # no index: made
    assert index.read_bytes().startswith(MAGIC)
    made = journal_index(str(journal)).offset
    _same(journal, monkeypatch)  # up to date
    assert _indexed(journal, monkeypatch)
    for seed in range(3):
        _append(journal, 8, seed)
        _same(journal, monkeypatch)  # grown from where it stopped
        assert journal_index(str(journal)).offset == journal.stat().st_size > made
        assert _indexed(journal, monkeypatch)
    code, out, err = _pareto(journal)
    assert code == 0 and len(out.splitlines()) > 2 and err == ""


def test_a_damaged_stale_or_foreign_index_is_never_trusted(
    journal: Path, made: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = index_path(str(journal))
    _same(journal, monkeypatch)
    good = index.read_bytes()
    damaged = bytearray(good)
    damaged[len(damaged) // 2] ^= 0xFF
    other = tmp_path / "other.journal"  # the index of another journal of the same start
    shutil.copy(made, other)
    _append(other, 20, seed=9)
    _same(other, monkeypatch)
    assert b'"version":1,' in good
    for bad in (
        bytes(damaged),
        good[:100],
        b"",
        MAGIC,
        good.replace(b'"version":1,', b'"version":0,', 1),
        index_path(str(other)).read_bytes(),
    ):
        index.write_bytes(bad)
        _same(journal, monkeypatch)
        assert index.read_bytes() == good  # rebuilt
        assert _indexed(journal, monkeypatch)
    # the journal edited under its index: every trial's first value changed
    _append(journal, 6, seed=3)
    _same(journal, monkeypatch)
    before = _pareto(journal)
    journal.write_text(journal.read_text().replace('"values":[', '"values":[1'))
    _same(journal, monkeypatch)
    assert _pareto(journal) != before
    # a file of the index's name that magnet did not write is left as it is
    index.write_text("my notes\n")
    _same(journal, monkeypatch)
    assert index.read_text() == "my notes\n"


@pytest.fixture
def frozen(journal: Path) -> Iterator[Path]:
    """The journal's folder made immutable (``chattr +i``: as root ``chmod`` does not stop a
    write), undone at the end; skipped where the file system has no such attribute."""
    done = subprocess.run(["chattr", "+i", str(journal.parent)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"chattr +i does not work here: {done.stderr.strip()}")
    yield journal
    subprocess.run(["chattr", "-i", str(journal.parent)], check=True)


def test_an_index_that_cannot_be_written_changes_nothing(
    frozen: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(frozen, monkeypatch)  # no file can be made in the folder, even by root
    assert _indexed(frozen, monkeypatch)  # from the index made in memory
    assert sorted(p.name for p in frozen.parent.iterdir()) == ["s.journal"]


def test_a_journal_with_a_stray_torn_or_corrupt_line_reads_alike(
    journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(journal, monkeypatch)
    with open(journal, "a") as f:
        f.write('{"op_code":4,"worker_id":"x","stu')  # torn: a driver killed mid-append
    _same(journal, monkeypatch)
    text = journal.read_text()
    journal.write_text(text[: text.rindex("\n") + 1] + "a note of mine\n")
    _same(journal, monkeypatch)
    assert "note: " in _pareto(journal)[2]
    with open(journal, "a") as f:  # the note is now a corrupt line in the middle
        f.write(text[: text.index("\n") + 1])  # (a study made again: skipped)
    code, _, err = _pareto(journal)
    assert code == 2 and "is corrupt" in err
    _same(journal, monkeypatch)


def test_an_index_grown_while_a_search_appends_is_the_index_made_afterwards(
    journal: Path,
) -> None:
    import threading

    done = threading.Event()

    def appender() -> None:
        try:
            for seed in range(6):
                _append(journal, 6, seed)
        finally:
            done.set()

    writer = threading.Thread(target=appender)
    writer.start()
    grown = 0
    while not done.is_set():  # read as the trials arrive, torn last lines included
        journal_index(str(journal))
        grown += 1
    writer.join()
    final = journal_index(str(journal))
    index_path(str(journal)).unlink()
    assert final.to_bytes() == journal_index(str(journal)).to_bytes()
    assert grown > 1 and final.offset == journal.stat().st_size


def test_errors_are_the_full_readings(journal: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for study in ("nope", "plain"):
        _same(journal, monkeypatch, study=study)
        assert _pareto(journal, study=study)[0] == 2
    _same(journal.parent / "missing.journal", monkeypatch)


def test_a_database_is_read_in_full(storage: str) -> None:
    assert indexed_front("small", storage) is None
