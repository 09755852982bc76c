"""A journal's values index: what ``magnet pareto`` needs of every trial, kept beside the
journal (``JOURNAL.magnet-index``) and brought up to date from where it last stopped.

Reading a 334 MB journal of 100,000 trials takes seconds however it is replayed: nearly all of
it is the trials' records, which a front does not need. The index holds, per trial of every
study of the journal, what decides whether it is on the front (its study, number, state,
values, whether magnet's record says ``ok`` with metrics, whether a constraint is broken) and
where in the journal its parameters were set (the byte offsets of those operations): the
parameters are read for the few trials the front may hold, not for all. Per study it holds
the name, directions and user attributes (magnet's configuration), so that the front is made
by the same ``Study`` code a full reading uses.

The index is a cache and never trusted blindly. It records the journal's bytes it consumed
(the offset of the end of its last whole operation) and their CRC-32; each use reads the
journal from its start, checks those bytes (a journal edited, truncated, replaced or copied
over since: the index is rebuilt) and consumes the operations appended since. The
operations are applied as Optuna's replay applies them (``JournalStorageReplayResult``: an
operation on a study or trial that does not exist, or on a finished trial, is skipped, and
so is a parameter whose distribution clashes with the study's first one), so a journal
written by any Optuna process reads alike; its lines are decoded by pydantic's JSON parser,
which gives ``json``'s values 2.4 times as fast, ``json`` deciding what it refuses
(``_operation``). Whatever the index cannot answer exactly as a full reading would (a
journal Optuna could not read, a line that is not an operation before the last, values that
are not floats, a study that is not there or not magnet's) makes ``indexed_front`` return
None, and the caller reads the study in full, as before: its output or its error is then
the full reading's. An index file that is damaged, of another version or stale is rebuilt;
a file of that name magnet did not write (it does not begin with ``MAGIC``) is left alone,
and so is the index when the folder cannot be written (the front is then made from the
index built in memory). The file is written whole or not at all (a temporary file in the
same folder, then a rename). ``MAGNET_NO_INDEX=1`` in the environment turns the index off
(the full reading, for comparisons).
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from pydantic_core import from_json

from magnet.perf import paused_gc

#: The file's first bytes: a file of the index's name without them is not magnet's.
MAGIC = b"magnet values index\n"
VERSION = 1
SUFFIX = ".magnet-index"
#: How much of the journal is read at once.
BLOCK_BYTES = 1 << 24
#: The index's arrays, in the order of its file, and their types (little-endian).
ARRAYS = {
    "study": "<i4",
    "number": "<i4",
    "state": "i1",
    "ok": "?",
    "metrics": "?",
    "violated": "?",
    "value_counts": "<i8",  # per trial (-1: None), then the values one after the other
    "values": "<f8",
    "source_counts": "<i8",  # per trial, then the offsets one after the other
    "sources": "<i8",
}
#: Optuna's trial states (``TrialState``), as the journal stores them.
RUNNING, COMPLETE, PRUNED, FAIL, WAITING = 0, 1, 2, 3, 4
FINISHED = (COMPLETE, PRUNED, FAIL)
STATES = frozenset((RUNNING, COMPLETE, PRUNED, FAIL, WAITING))
#: The type of every value a trial of the index has (JSON tells ints apart).
FLOAT = frozenset((float,))
#: Optuna's journal operations (``JournalOperation``).
(
    CREATE_STUDY,
    DELETE_STUDY,
    SET_STUDY_USER_ATTR,
    SET_STUDY_SYSTEM_ATTR,
    CREATE_TRIAL,
    SET_TRIAL_PARAM,
    SET_TRIAL_STATE_VALUES,
    SET_TRIAL_INTERMEDIATE_VALUE,
    SET_TRIAL_USER_ATTR,
    SET_TRIAL_SYSTEM_ATTR,
    DISCARD_TRIALS,
) = range(11)
#: Optuna's system attribute of a trial's constraints (a list), and the prefix of one each.
CONSTRAINTS = "constraints"
CONSTRAINTS_PREFIX = CONSTRAINTS + ":"
TRIAL_ATTR = "magnet"  # magnet.search.study.TRIAL_ATTR (not imported: study imports this)


class Unanswerable(Exception):
    """The index cannot answer as a full reading would: read the study in full."""


def index_path(journal: str) -> Path:
    """Where the index of the journal ``journal`` (its real path) lives."""
    return Path(f"{journal}{SUFFIX}")


def _state(value: Any) -> int:
    """A trial state of the journal (``Unanswerable`` for anything but one of Optuna's)."""
    if type(value) is not int or value not in STATES:
        raise Unanswerable("no such trial state")
    return value


def _id(value: Any) -> int:
    """A study's or trial's id of the journal (``Unanswerable`` for anything but an int:
    Optuna would look up a float or a bool as the int it equals)."""
    if type(value) is not int:
        raise Unanswerable("an id that is not an integer")
    return value


class JournalIndex:
    """What the index holds, and the replay that grows it (``consume``)."""

    def __init__(self) -> None:
        #: the journal's bytes consumed, and their CRC-32
        self.offset = 0
        self.crc = 0
        #: live studies by id: name, directions, user attributes
        self.studies: dict[int, dict[str, Any]] = {}
        self.next_study_id = 0
        #: trials made in each study (Optuna numbers a study's trials by it)
        self.counts: dict[int, int] = {}
        #: per study, each parameter's distribution (JSON) as first given in the study
        self.first: dict[int, dict[str, str]] = {}
        #: studies the index cannot answer for (``Unanswerable`` when asked)
        self.unusable: set[int] = set()
        # per trial, by Optuna's trial id (ids run over every study of the journal)
        self.study: list[int] = []
        self.number: list[int] = []
        self.state: list[int] = []
        self.values: list[list[float] | None] = []
        #: magnet's record says ``ok`` (or nothing), and has metrics
        self.ok: list[bool] = []
        self.metrics: list[bool] = []
        #: a constraint broken (> 0); for a trial not finished, its constraints by key
        self.violated: list[bool] = []
        self.constraints: dict[int, dict[str, Any]] = {}
        #: byte offsets of the operations that set the trial's parameters, in order
        self.sources: list[list[int]] = []
        self._parsed: dict[str, Any] = {}
        #: internal values checked per distribution (JSON)
        self._valid: dict[str, set[Any]] = {}
        #: the distributions (JSON) of the last trial made, and the parameters' values
        #: checked against them (name, internal value)
        self._texts: dict[str, str] = {}
        self._checked: set[tuple[str, Any]] = set()

    # ---- replay ----------------------------------------------------------------------------
    def _distribution(self, text: str) -> Any:
        found = self._parsed.get(text)
        if found is None:
            from optuna.distributions import json_to_distribution

            found = self._parsed[text] = json_to_distribution(text)
            self._valid[text] = set()
        return found

    def _updatable(self, trial_id: Any) -> bool:
        return 0 <= _id(trial_id) < len(self.state) and self.state[trial_id] not in FINISHED

    def _summarise_record(self, trial_id: int, record: Any) -> None:
        """``ok`` and ``metrics`` of a trial from its magnet record (``_summary``)."""
        summary = _summary(record)
        if summary is None:
            self.unusable.add(self.study[trial_id])
        else:
            self.ok[trial_id], self.metrics[trial_id] = summary

    def _set_constraint(self, trial_id: int, key: str, value: Any) -> None:
        if key == CONSTRAINTS or key.startswith(CONSTRAINTS_PREFIX):
            self.constraints.setdefault(trial_id, {})[key] = value
            self.violated[trial_id] = self._violated(
                self.study[trial_id], self.constraints[trial_id]
            )

    def _violated(self, study_id: int, constraints: dict[str, Any]) -> bool:
        """``_violated``; constraints in both of Optuna's forms (it warns, a full reading
        shows it) make the trial's study one the index does not answer for."""
        try:
            return _violated(constraints)
        except Unanswerable:
            self.unusable.add(study_id)
            return False

    def _check_values(self, study_id: int, values: Any) -> None:
        if values is not None and not _floats(values):
            self.unusable.add(study_id)  # ints or others: JSON shows them apart

    def apply(self, log: Any, at: int) -> None:
        """Apply one operation (``log``, the line starting at byte ``at``) as Optuna does."""
        op = log["op_code"]
        if op == CREATE_TRIAL:  # nearly every line of a big study
            self._create_trial(log, at)
        elif op == CREATE_STUDY:
            from optuna.study import StudyDirection

            name = log["study_name"]
            directions = [StudyDirection(d).value for d in log["directions"]]
            if any(s["name"] == name for s in self.studies.values()):
                return
            study_id = self.next_study_id
            self.next_study_id += 1
            self.studies[study_id] = {"name": name, "directions": directions, "user_attrs": {}}
            self.counts[study_id] = 0
        elif op == DELETE_STUDY:
            self.studies.pop(_id(log["study_id"]), None)
        elif op in (SET_STUDY_USER_ATTR, SET_STUDY_SYSTEM_ATTR):
            study_id = _id(log["study_id"])
            if study_id in self.studies:
                attr = log["user_attr" if op == SET_STUDY_USER_ATTR else "system_attr"]
                if len(attr) != 1:
                    raise Unanswerable("Optuna's replay refuses this operation")
                if op == SET_STUDY_USER_ATTR:
                    self.studies[study_id]["user_attrs"].update(attr)
        elif op == SET_TRIAL_PARAM:
            self._set_param(log, at)
        elif op == SET_TRIAL_STATE_VALUES:
            trial_id = log["trial_id"]
            if not self._updatable(trial_id):
                return
            state = _state(log["state"])
            if state == self.state[trial_id] == RUNNING:
                return
            if state == RUNNING:
                datetime.fromisoformat(log["datetime_start"])  # as Optuna's replay parses it
            if state in FINISHED:
                datetime.fromisoformat(log["datetime_complete"])
            self.state[trial_id] = state
            if log["values"] is not None:
                self._check_values(self.study[trial_id], log["values"])
                self.values[trial_id] = log["values"]
            if state in FINISHED:
                self.constraints.pop(trial_id, None)  # never changes again
        elif op == SET_TRIAL_INTERMEDIATE_VALUE:
            if self._updatable(log["trial_id"]):
                _ = log["step"], log["intermediate_value"]  # Optuna reads them
        elif op in (SET_TRIAL_USER_ATTR, SET_TRIAL_SYSTEM_ATTR):
            trial_id = log["trial_id"]
            if not self._updatable(trial_id):
                return
            attr = log["user_attr" if op == SET_TRIAL_USER_ATTR else "system_attr"]
            if len(attr) != 1:
                raise Unanswerable("Optuna's replay refuses this operation")
            ((key, value),) = attr.items()
            if op == SET_TRIAL_USER_ATTR:
                if key == TRIAL_ATTR:
                    self._summarise_record(trial_id, value)
            else:
                self._set_constraint(trial_id, key, value)
        elif op != DISCARD_TRIALS:
            raise Unanswerable(f"an operation Optuna does not know: {op!r}")

    def _create_trial(self, log: dict[str, Any], at: int) -> None:
        study_id = _id(log["study_id"])
        if study_id not in self.studies:
            return
        params = log.get("params", {})
        self._check_params(study_id, log.get("distributions", {}), params)
        if log["datetime_start"] is not None:  # as Optuna's replay (a bad one fails it)
            datetime.fromisoformat(log["datetime_start"])
        if "datetime_complete" in log:
            datetime.fromisoformat(log["datetime_complete"])
        state = _state(log.get("state", RUNNING))
        values = log.get("values")
        self._check_values(study_id, values)
        summary = _summary(log.get("user_attrs", {}).get(TRIAL_ATTR))
        if summary is None:
            self.unusable.add(study_id)
            summary = True, False
        constraints = {
            k: v
            for k, v in log.get("system_attrs", {}).items()
            if k == CONSTRAINTS or k.startswith(CONSTRAINTS_PREFIX)
        }
        trial_id = len(self.state)
        self.study.append(study_id)
        self.number.append(self.counts[study_id])
        self.counts[study_id] += 1
        self.state.append(state)
        self.values.append(values)
        self.ok.append(summary[0])
        self.metrics.append(summary[1])
        self.violated.append(self._violated(study_id, constraints) if constraints else False)
        self.sources.append([at] if params else [])
        if constraints and state not in FINISHED:
            self.constraints[trial_id] = constraints

    def _check_params(self, study_id: int, texts: dict[str, str], params: dict[str, Any]) -> None:
        """A new trial's parameters checked as Optuna's replay checks them (a bad one fails
        it: each distinct distribution parsed once, each value of it tried once), and the
        study's first distribution of each kept. A trial with the distributions of the trial
        before (nearly every one) and values checked before costs three comparisons of
        dicts at C speed (0.15 s -> 0.10 s for 100,000 trials)."""
        if texts != self._texts:
            for text in texts.values():
                self._distribution(text)
            self._texts, self._checked = texts, set()
        if not params.items() <= self._checked:
            for k, v in params.items():
                text = texts[k]
                seen = self._valid[text]
                if v not in seen:
                    self._parsed[text].to_external_repr(v)
                    seen.add(v)
                self._checked.add((k, v))
        first = self.first.setdefault(study_id, {})
        if not first.keys() >= params.keys():
            for k in params:
                first.setdefault(k, texts[k])

    def _set_param(self, log: dict[str, Any], at: int) -> None:
        from optuna.distributions import check_distribution_compatibility

        trial_id = log["trial_id"]
        if not self._updatable(trial_id):
            return
        name, text = log["param_name"], log["distribution"]
        dist = self._distribution(text)
        value = log["param_value_internal"]
        firsts = self.first.setdefault(self.study[trial_id], {})
        first = firsts.get(name)
        if first is not None and first != text:
            try:
                check_distribution_compatibility(self._distribution(first), dist)
            except Exception:  # Optuna skips another worker's clashing parameter
                return
        dist.to_external_repr(value)
        self.sources[trial_id].append(at)
        firsts.setdefault(name, text)

    # ---- the journal ---------------------------------------------------------------------
    def consume(self, f: BinaryIO, end: int) -> None:
        """Apply the whole operations of ``f`` (the journal) from ``offset`` to ``end`` (its
        size when looked at) and move ``offset`` past them: a last line without its
        newline (being written, or torn) is left for later, and so is a last whole line that
        is not JSON (Optuna's reader skips it; followed by more, it is corrupt)."""
        f.seek(self.offset)
        left, carry = end - self.offset, b""
        decode = json.JSONDecoder().decode
        with paused_gc():
            while left > 0:
                block = f.read(min(BLOCK_BYTES, left))
                if not block:
                    break
                left -= len(block)
                data = carry + block
                cut = data.rfind(b"\n") + 1
                carry = data[cut:]
                start, at = 0, self.offset
                try:
                    while start < cut:
                        stop = data.index(b"\n", start) + 1
                        log = _operation(data[start:stop], decode)
                        if log is _NOT_JSON:
                            if left == 0 and stop == cut and not carry:
                                return  # the last line: skipped, as Optuna's reader does
                            raise Unanswerable("a line that is not an operation")
                        if not isinstance(log, dict):
                            raise Unanswerable("a line that is not an operation")
                        self.apply(log, at + start)
                        start = stop
                finally:  # what was applied, consumed
                    self.crc = zlib.crc32(memoryview(data)[:start], self.crc)
                    self.offset = at + start

    # ---- the file ------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """The index as its file holds it: ``MAGIC``, the header's length, the header (JSON),
        the arrays."""
        n = len(self.state)
        value_counts = [-1 if v is None else len(v) for v in self.values]
        flat_values = [x for v in self.values if v is not None for x in v]
        source_counts = [len(s) for s in self.sources]
        flat_sources = [x for s in self.sources for x in s]
        columns: dict[str, Any] = {
            "study": self.study,
            "number": self.number,
            "state": self.state,
            "ok": self.ok,
            "metrics": self.metrics,
            "violated": self.violated,
            "value_counts": value_counts,
            "values": flat_values,
            "source_counts": source_counts,
            "sources": flat_sources,
        }
        arrays = {k: np.asarray(columns[k], dtype=d) for k, d in ARRAYS.items()}
        payload = b"".join(a.tobytes() for a in arrays.values())
        header = {
            "version": VERSION,
            "offset": self.offset,
            "crc": self.crc,
            "trials": n,
            "studies": [[k, v] for k, v in self.studies.items()],
            "next_study_id": self.next_study_id,
            "counts": [[k, v] for k, v in self.counts.items()],
            "first": [[k, v] for k, v in self.first.items()],
            "unusable": sorted(self.unusable),
            "constraints": [[k, v] for k, v in self.constraints.items()],
            "arrays": [[k, len(a)] for k, a in arrays.items()],
            "payload_crc": zlib.crc32(payload),
        }
        text = json.dumps(header, separators=(",", ":")).encode()
        return MAGIC + struct.pack("<Q", len(text)) + text + payload

    @classmethod
    def from_bytes(cls, data: bytes) -> JournalIndex:
        """The index of a file's bytes (``ValueError`` and the like when they are not one)."""
        if not data.startswith(MAGIC):
            raise ValueError("not an index")
        at = len(MAGIC)
        (length,) = struct.unpack_from("<Q", data, at)
        at += 8
        header = json.loads(data[at : at + length])
        at += length
        if header["version"] != VERSION or zlib.crc32(data[at:]) != header["payload_crc"]:
            raise ValueError("another version, or damaged")
        arrays = {}
        if [name for name, _ in header["arrays"]] != list(ARRAYS):
            raise ValueError("damaged")
        for name, count in header["arrays"]:
            array = np.frombuffer(data, dtype=ARRAYS[name], count=count, offset=at)
            arrays[name] = array
            at += array.nbytes
        if at != len(data):
            raise ValueError("damaged")
        index = cls()
        index.offset, index.crc = int(header["offset"]), int(header["crc"])
        index.studies = {int(k): v for k, v in header["studies"]}
        index.next_study_id = int(header["next_study_id"])
        index.counts = {int(k): int(v) for k, v in header["counts"]}
        index.first = {int(k): v for k, v in header["first"]}
        index.unusable = {int(s) for s in header["unusable"]}
        index.constraints = {int(k): v for k, v in header["constraints"]}
        n = int(header["trials"])
        index.study = arrays["study"].tolist()
        index.number = arrays["number"].tolist()
        index.state = arrays["state"].tolist()
        index.ok = arrays["ok"].tolist()
        index.metrics = arrays["metrics"].tolist()
        index.violated = arrays["violated"].tolist()
        index.values = _split(arrays["values"], arrays["value_counts"])
        index.sources = _split(arrays["sources"], arrays["source_counts"])
        if not all(len(x) == n for x in (index.study, index.number, index.state, index.ok)):
            raise ValueError("damaged")
        return index

    # ---- a study's front -----------------------------------------------------------------
    def study_id(self, name: str) -> int:
        """The id of the live study ``name`` (``Unanswerable`` when there is none)."""
        for study_id, study in self.studies.items():
            if study["name"] == name:
                if study_id in self.unusable:
                    raise Unanswerable("values the index does not keep")
                return study_id
        raise Unanswerable("no such study")

    def candidates(self, study_id: int, objectives: int) -> tuple[list[int], np.ndarray]:
        """The trial ids of the study's feasible trials (by number) and their values
        (``float[trials, objectives]``), as ``Study.feasible`` sees them."""
        feasible = (
            (np.array(self.study) == study_id)
            & (np.array(self.state) == COMPLETE)
            & np.array(self.ok, dtype=bool)
            & ~np.array(self.violated, dtype=bool)
        )
        ids = np.flatnonzero(feasible).tolist()
        rows = [v for i in ids if (v := self.values[i]) is not None]
        if (
            len(rows) < len(ids)
            or not all(map(self.metrics.__getitem__, ids))
            or min(map(len, rows), default=objectives) < objectives
        ):
            raise Unanswerable("a feasible trial without every objective's value")
        if any(len(v) > objectives for v in rows):
            rows = [v[:objectives] for v in rows]
        return ids, np.array(rows, dtype=float).reshape(len(ids), objectives)


#: What ``_operation`` gives for a line that is not JSON.
_NOT_JSON = object()


def _operation(line: bytes, decode: Callable[[str], Any]) -> Any:
    """The JSON of a journal's line as Optuna's reader decodes it (``json.loads``), or
    ``_NOT_JSON``. pydantic's parser (``pydantic_core.from_json``, Rust) decodes it 2.4 times
    as fast (0.42 s against 1.0 s for a 100,000-trial journal); it gives the same values as
    ``json`` for every text it takes (NaN, infinities, floats to the last bit, big numbers,
    repeated keys: ``tests/test_values_index.py`` compares the two on random and mutated
    texts) and refuses some that ``json`` takes (a lone surrogate, nesting deeper than 200),
    which ``json`` then decodes, or refuses itself (its error is the full reading's)."""
    try:
        return from_json(line)
    except Exception:  # json decides
        try:
            return decode(line.decode())
        except json.JSONDecodeError:
            return _NOT_JSON


def _split(flat: np.ndarray, counts: np.ndarray) -> list[Any]:
    """``flat`` cut into lists of ``counts`` items each (a count of -1: None); at C speed
    when the lists are all of one length (a study's values; parameters set alike)."""
    present = counts >= 0
    sizes = counts[present]
    if int(sizes.sum()) != len(flat):
        raise ValueError("damaged")
    if not len(sizes):
        rows = []
    elif (sizes == sizes[0]).all():
        rows = flat.reshape(len(sizes), int(sizes[0])).tolist()
    else:
        rows = [part.tolist() for part in np.split(flat, np.cumsum(sizes)[:-1])]
    if present.all():
        return rows
    out: list[Any] = [None] * len(counts)
    for i, row in zip(np.flatnonzero(present).tolist(), rows, strict=True):
        out[i] = row
    return out


def _floats(values: Any) -> bool:
    """Whether a trial's values are a list of floats, all (ints or others: JSON shows them
    apart, and the index keeps floats)."""
    return isinstance(values, list) and {*map(type, values)} <= FLOAT


def _summary(record: Any) -> tuple[bool, bool] | None:
    """A trial's magnet record summed up as ``study._view`` reads it: whether it says ``ok``
    (or nothing), and whether it has metrics; None for one a full reading fails on."""
    if not record:
        return True, False
    if not isinstance(record, dict):
        return None
    return record.get("status", "ok") == "ok", bool(record.get("metrics"))


def _violated(constraints: dict[str, Any]) -> bool:
    """Whether a constraint is broken (> 0), from a trial's constraint attributes (its
    system attributes ``constraints`` and ``constraints:KEY``, no others) as Optuna reads them
    (``FrozenTrial.constraints``: the old list, then one key each)."""
    if CONSTRAINTS not in constraints:  # one key each (magnet's): no two alike, in their order
        return any(v > 0 for v in constraints.values())
    found: dict[str, Any] = {}
    for i, c in enumerate(constraints.get(CONSTRAINTS) or []):
        found[str(i)] = c
    for key, value in constraints.items():
        if key.startswith(CONSTRAINTS + ":"):
            if key[len(CONSTRAINTS) + 1 :] in found:
                raise Unanswerable("constraints in both of Optuna's forms")
            found[key[len(CONSTRAINTS) + 1 :]] = value
    return any(v > 0 for v in found.values())


# ---- reading and keeping it ----------------------------------------------------------------
def _read_index(path: Path) -> tuple[JournalIndex | None, bool]:
    """The index in ``path`` (None: none, or not usable) and whether magnet may write
    ``path`` (absent, empty, or a file that begins with ``MAGIC``)."""
    try:
        with open(path, "rb") as f:
            if not f.read(len(MAGIC)).startswith(MAGIC):
                f.seek(0)
                return None, f.read(1) == b""  # empty: a write cut short, magnet's
            f.seek(0)
            data = f.read()
    except FileNotFoundError:
        return None, not path.is_symlink()
    except OSError:  # a folder, unreadable: not magnet's to replace
        return None, False
    try:
        return JournalIndex.from_bytes(data), True
    except Exception:  # damaged, or another version: rebuilt
        return None, True


def _prefix_matches(f: BinaryIO, index: JournalIndex, size: int) -> bool:
    """Whether the journal's first ``index.offset`` bytes are those the index consumed."""
    if index.offset > size:
        return False
    f.seek(0)
    crc, left = 0, index.offset
    while left > 0:
        block = f.read(min(BLOCK_BYTES, left))
        if not block:
            return False
        crc = zlib.crc32(block, crc)
        left -= len(block)
    return crc == index.crc


def _write_index(path: Path, index: JournalIndex) -> None:
    """Write ``index`` to ``path`` whole or not at all; a folder that cannot be written
    leaves things as they were."""
    data = index.to_bytes()
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def journal_index(journal: str) -> JournalIndex:
    """The index of the journal ``journal`` (its real path), brought up to date (rebuilt
    when missing, damaged or stale) and kept in its file when magnet may write it.
    ``Unanswerable`` (or an ``OSError``) when the journal cannot be indexed."""
    path = index_path(journal)
    index, writable = _read_index(path)
    with open(journal, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        fresh = index is None or not _prefix_matches(f, index, size)
        if fresh or index is None:
            index = JournalIndex()
        before = index.offset
        index.consume(f, size)
    if writable and (fresh or index.offset != before):
        with contextlib.suppress(OSError):  # a folder magnet cannot write: kept in memory
            _write_index(path, index)
    return index


def front_params(f: BinaryIO, sources: list[int]) -> dict[str, Any]:
    """A trial's parameters, read from the operations at ``sources`` (byte offsets in the
    journal ``f``) in order, as Optuna's replay makes them (external values; a parameter set
    again keeps its place)."""
    from optuna.distributions import json_to_distribution

    params: dict[str, Any] = {}
    for at in sources:
        f.seek(at)
        log = json.loads(f.readline())
        if log.get("op_code") == CREATE_TRIAL:
            for k, v in log["params"].items():
                dist = json_to_distribution(log["distributions"][k])
                params[k] = dist.to_external_repr(v)
        elif log.get("op_code") == SET_TRIAL_PARAM:
            dist = json_to_distribution(log["distribution"])
            params[log["param_name"]] = dist.to_external_repr(log["param_value_internal"])
        else:
            raise Unanswerable("the journal changed under the index")
    return params


def indexed_front(name: str, storage: str | None) -> tuple[Any, list[Any]] | None:
    """The study ``name`` of the journal ``storage`` (with no trials read: its name,
    configuration and objectives) and its front as ``pareto_json`` gives it, made from the
    journal's index; None when the index cannot answer as a full reading would (a storage
    that is no journal file, a study it does not have, anything it cannot vouch for)."""
    if os.environ.get("MAGNET_NO_INDEX"):
        return None
    from magnet.search import pareto
    from magnet.search.storage import DEFAULT_JOURNAL, _note_stray_end, describe, is_url, locate
    from magnet.search.study import Study, TrialView

    try:
        journal = locate(storage, create=False)
        if is_url(journal):
            return None
        index = journal_index(journal)
        study_id = index.study_id(name)
        study = Study(name, index.studies[study_id]["user_attrs"], [], describe(storage))
        ids, values = index.candidates(study_id, len(study.objectives))
        if len(ids):
            points = pareto.to_minimised_log(values, study.directions)
            ids = [ids[i] for i in np.flatnonzero(pareto.nondominated(points))]
        with open(journal, "rb") as f:
            params = [front_params(f, index.sources[i]) for i in ids]
        views = [
            TrialView(
                number=index.number[i],
                state="COMPLETE",
                status="ok",
                params=p,
                values=dict(zip(study.objectives, index.values[i] or [], strict=False)),
                metrics={},
                reason=None,
                seconds=None,
                started=None,
                finished=None,
                feasible=True,
                constraints={},
            )
            for i, p in zip(ids, params, strict=True)
        ]
        front = [
            {"number": t.number, "params": t.params, "values": t.values}
            for t in study.pareto_front(views)
        ]
    except Exception:  # whatever it is, the full reading says it (or answers)
        return None
    shown = str(DEFAULT_JOURNAL if storage is None else storage)
    _note_stray_end(journal, shown)  # as the full reading says it
    return study, front
