"""A reader's replay of an Optuna journal: Optuna's, made fast for studies of 100,000 trials.

Optuna rebuilds a journal's studies by replaying its operations
(``JournalStorageReplayResult``); at 100,000 trials of nine parameters that took 12.5 of the
14 s of ``magnet pareto``, 7.9 s of it parsing each parameter's distribution (a JSON string
per parameter per trial, ``json_to_distribution``) 900,000 times, and much of the rest in
Python's cyclic garbage collector walking the growing heap again and again.

``ReaderReplay`` applies the same operations with the same outcome (what it keeps is
Optuna's own ``FrozenTrial`` and ``FrozenStudy``; an operation Optuna would skip, such as a
parameter set on a finished trial or one whose distribution clashes with an earlier trial's,
is skipped too: ``tests/test_journal_replay.py`` replays random journals both ways), but
parses each distinct distribution once and finds the earlier trial a parameter is checked
against in a table, not by a walk over the study. It serves only readers: a reader never
writes, so no operation is its own (Optuna raises on its own invalid operations; a reader
has none). ``ReaderJournalStorage`` is Optuna's ``JournalStorage`` replaying with it, and
``magnet.perf.paused_gc`` keeps the collector out of the bulk read.

A trial's records (``TrialAttrs.records``: 2.3 KB a trial, 190 MB of a 100,000-trial study's
1 GB) are not kept: the reader keeps where the journal holds them (``StoredText``: the file,
the byte offset of the line and the keys to the text within it) and reads them again when a
viewer asks (a design page, an export to JSON). A journal only grows, so the line is where
it was; one that changed there since (a journal edited or replaced) is refused, never read
as another trial's.
"""

from __future__ import annotations

import json
import threading
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    check_distribution_compatibility,
    json_to_distribution,
)
from optuna.storages import JournalStorage
from optuna.storages.journal import BaseJournalBackend, JournalFileBackend
from optuna.storages.journal._storage import JournalStorageReplayResult
from optuna.trial import FrozenTrial, TrialState

from magnet.errors import MagnetError
from magnet.perf import paused_gc

#: Strings up to this long are kept once however many lines hold them (``_shared``)
SHARED_CHARS = 100
#: The attribute a trial's records are under (``magnet.search.study.TRIAL_ATTR``, ``records``)
RECORDS = ("magnet", "records")


@dataclass(frozen=True, slots=True)  # one a trial: 100,000 in a big study
class StoredText:
    """A string of a journal's line, read from the journal again when asked: ``keys`` lead to
    it in the JSON of the line that starts at byte ``offset`` of ``path``; ``crc32`` is the
    string's (``zlib.crc32`` of its UTF-8), checked at each reading."""

    path: str
    offset: int
    keys: tuple[str, ...]
    crc32: int

    def read(self) -> str:
        """The text (a ``MagnetError`` naming the journal when the line is not what it was)."""
        value: Any = None
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                value = json.loads(f.readline())
            for key in self.keys:
                value = value[key]
        except (OSError, ValueError, KeyError, TypeError):
            value = None
        if not (isinstance(value, str) and zlib.crc32(value.encode()) == self.crc32):
            raise MagnetError(
                f"the journal's line at byte {self.offset:,} is not the one read before (the "
                "journal was edited or replaced since): open the study again",
                source=self.path,
            )
        return value


def _local_time(text: str | None) -> datetime | None:
    """A journal's ISO time as Optuna keeps it: local time without a zone (None: None)."""
    if text is None:
        return None
    return datetime.fromisoformat(text).astimezone().replace(tzinfo=None)


class ReaderReplay(JournalStorageReplayResult):
    """Optuna's replay of a journal for a reader (see the module docstring)."""

    def __init__(self, worker_id_prefix: str, backend: BaseJournalBackend | None = None) -> None:
        super().__init__(worker_id_prefix)
        #: the journal file (``StoredText``), when the backend reads one (a reader's
        #: ``magnet.search.storage.ReadOnlyJournal`` or Optuna's own)
        file = getattr(backend, "file_backend", backend)
        self._backend = file if isinstance(file, JournalFileBackend) else None
        #: each short string read, once (``_shared``)
        self._strings: dict[str, str] = {}
        #: each distinct distribution JSON, parsed once
        self._distributions: dict[str, BaseDistribution] = {}
        #: (study id, parameter): the distribution it was first given in the study. Optuna
        #: checks a new value against the study's first trial (by number) having the
        #: parameter; compatibility being an equivalence (the same kind, log scale and
        #: choices), and every later value of it checked, the answer is the same.
        self._first: dict[tuple[int, str], BaseDistribution] = {}

    def _distribution(self, text: str) -> BaseDistribution:
        found = self._distributions.get(text)
        if found is None:
            found = self._distributions[text] = json_to_distribution(text)
        return found

    def _apply_create_trial(self, log: dict[str, Any]) -> None:
        study_id = log["study_id"]
        if study_id not in self._studies:
            return
        trial_id = len(self._trials)
        number = len(self._study_id_to_trial_ids[study_id])
        self._stored(log, ("user_attrs", *RECORDS))
        dists = {
            self._one(k): self._distribution(v) for k, v in log.get("distributions", {}).items()
        }
        params = {
            self._one(k): self._one(dists[k].to_external_repr(v))
            for k, v in log.get("params", {}).items()
        }
        self._trials[trial_id] = FrozenTrial(
            number=number,
            state=TrialState(log.get("state", TrialState.RUNNING.value)),
            value=log.get("value"),
            values=log.get("values"),
            datetime_start=_local_time(log["datetime_start"]),
            datetime_complete=_local_time(log.get("datetime_complete")),
            params=params,
            distributions=dists,
            user_attrs=self._shared(log.get("user_attrs", {})),
            system_attrs=self._shared(log.get("system_attrs", {})),
            intermediate_values={int(k): v for k, v in log.get("intermediate_values", {}).items()},
            trial_id=trial_id,
        )
        self._study_id_to_trial_ids[study_id].append(trial_id)
        self._trial_id_to_study_id[trial_id] = study_id
        for name in params:
            self._first.setdefault((study_id, name), dists[name])

    def _apply_set_trial_user_attr(self, log: dict[str, Any]) -> None:
        self._stored(log, ("user_attr", *RECORDS))
        super()._apply_set_trial_user_attr({**log, "user_attr": self._shared(log["user_attr"])})

    def _apply_set_trial_system_attr(self, log: dict[str, Any]) -> None:
        attr = log["system_attr"]
        super()._apply_set_trial_system_attr({**log, "system_attr": self._shared(attr)})

    def _one(self, value: Any) -> Any:
        """``value``, or the equal string read before (``_shared``)."""
        if isinstance(value, str) and len(value) <= SHARED_CHARS:
            return self._strings.setdefault(value, value)
        return value

    def _shared(self, attrs: dict[str, Any], depth: int = 2) -> dict[str, Any]:
        """``attrs`` with its keys and short strings (and those of the dicts in it, to
        ``depth``) the equal ones read before: JSON gives each line its own, and a trial's
        parameter names, metric names and statuses are the same 100,000 times over (177 MB
        of a 100,000-trial study)."""
        one, out = self._strings.setdefault, {}
        for k, v in attrs.items():  # inline: 45 strings a trial, 4.5 million in such a study
            if type(v) is str:
                v = one(v, v) if len(v) <= SHARED_CHARS else v
            elif type(v) is dict and depth > 0:
                v = self._shared(v, depth - 1)
            out[one(k, k) if len(k) <= SHARED_CHARS else k] = v
        return out

    def _stored(self, log: dict[str, Any], keys: tuple[str, ...]) -> None:
        """The text at ``keys`` of ``log`` (a records string) replaced by where the journal
        holds it (``StoredText``), when the backend is a journal file."""
        if self._backend is None:
            return
        *parents, last = keys
        holder: Any = log
        for key in parents:
            holder = holder.get(key) if isinstance(holder, dict) else None
        text = holder.get(last) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(text, str):
            # the line being applied is log number ``log_number_read - 1`` (Optuna's count
            # is raised before each is applied); the backend knows where each line starts
            offset = self._backend._log_number_offset[self.log_number_read - 1]
            path = str(self._backend._file_path)
            holder[last] = StoredText(path, offset, keys, zlib.crc32(text.encode()))

    def _apply_set_trial_param(self, log: dict[str, Any]) -> None:
        trial_id = log["trial_id"]
        if not self._trial_exists_and_updatable(trial_id, log):
            return
        name = self._one(log["param_name"])
        dist = self._distribution(log["distribution"])
        study_id = self._trial_id_to_study_id[trial_id]
        first = self._first.get((study_id, name))
        if first is not None and first is not dist:
            try:
                check_distribution_compatibility(first, dist)
            except Exception:  # Optuna skips another worker's clashing parameter
                return
        trial = self._trials[trial_id]
        changed = FrozenTrial.__new__(FrozenTrial)  # a copy: readers tell trials by identity
        changed.__dict__.update(trial.__dict__)
        changed.params = {**trial.params, name: dist.to_external_repr(log["param_value_internal"])}
        changed.distributions = {**trial.distributions, name: dist}
        self._trials[trial_id] = changed
        self._first.setdefault((study_id, name), dist)


class ReaderJournalStorage(JournalStorage):
    """Optuna's ``JournalStorage`` over a backend a reader cannot write to, replayed by
    ``ReaderReplay`` with the collector paused (Optuna's own constructor, but for the
    replay it makes); ``keep_records=False``: trial records left in the journal
    (``StoredText``)."""

    def __init__(self, log_storage: BaseJournalBackend, keep_records: bool = True) -> None:
        self._worker_id_prefix = str(uuid.uuid4()) + "-"
        self._backend = log_storage
        self._thread_lock = threading.Lock()
        #: where trial records are left in the journal (``StoredText``), the backend
        self._records_from = None if keep_records else log_storage
        self._replay_result = ReaderReplay(self._worker_id_prefix, self._records_from)
        with self._thread_lock:
            self._sync_with_backend()

    def __setstate__(self, state: dict[Any, Any]) -> None:
        super().__setstate__(state)
        self._replay_result = ReaderReplay(self._worker_id_prefix, self._records_from)

    def get_n_trials(
        self, study_id: int, state: tuple[TrialState, ...] | TrialState | None = None
    ) -> int:
        """Optuna's count, of every state without a walk over the study's trials (a
        dashboard asks it at each look: 48 ms at 100,000 trials)."""
        if state is not None:
            return super().get_n_trials(study_id, state)
        with self._thread_lock:
            self._sync_with_backend()
            replay = self._replay_result
            if study_id in replay._studies:
                return len(replay._study_id_to_trial_ids[study_id])
        return super().get_n_trials(study_id)  # no such study: Optuna's error

    def _sync_with_backend(self) -> None:
        with paused_gc():
            super()._sync_with_backend()
