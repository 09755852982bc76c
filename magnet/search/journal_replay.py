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
"""

from __future__ import annotations

import threading
import uuid
from datetime import datetime
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    check_distribution_compatibility,
    json_to_distribution,
)
from optuna.storages import JournalStorage
from optuna.storages.journal import BaseJournalBackend
from optuna.storages.journal._storage import JournalStorageReplayResult
from optuna.trial import FrozenTrial, TrialState

from magnet.perf import paused_gc


def _local_time(text: str | None) -> datetime | None:
    """A journal's ISO time as Optuna keeps it: local time without a zone (None: None)."""
    if text is None:
        return None
    return datetime.fromisoformat(text).astimezone().replace(tzinfo=None)


class ReaderReplay(JournalStorageReplayResult):
    """Optuna's replay of a journal for a reader (see the module docstring)."""

    def __init__(self, worker_id_prefix: str) -> None:
        super().__init__(worker_id_prefix)
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
        dists = {k: self._distribution(v) for k, v in log.get("distributions", {}).items()}
        params = {k: dists[k].to_external_repr(v) for k, v in log.get("params", {}).items()}
        self._trials[trial_id] = FrozenTrial(
            number=number,
            state=TrialState(log.get("state", TrialState.RUNNING.value)),
            value=log.get("value"),
            values=log.get("values"),
            datetime_start=_local_time(log["datetime_start"]),
            datetime_complete=_local_time(log.get("datetime_complete")),
            params=params,
            distributions=dists,
            user_attrs=log.get("user_attrs", {}),
            system_attrs=log.get("system_attrs", {}),
            intermediate_values={int(k): v for k, v in log.get("intermediate_values", {}).items()},
            trial_id=trial_id,
        )
        self._study_id_to_trial_ids[study_id].append(trial_id)
        self._trial_id_to_study_id[trial_id] = study_id
        for name in params:
            self._first.setdefault((study_id, name), dists[name])

    def _apply_set_trial_param(self, log: dict[str, Any]) -> None:
        trial_id = log["trial_id"]
        if not self._trial_exists_and_updatable(trial_id, log):
            return
        name = log["param_name"]
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
    replay it makes)."""

    def __init__(self, log_storage: BaseJournalBackend) -> None:
        self._worker_id_prefix = str(uuid.uuid4()) + "-"
        self._backend = log_storage
        self._thread_lock = threading.Lock()
        self._replay_result = ReaderReplay(self._worker_id_prefix)
        with self._thread_lock:
            self._sync_with_backend()

    def __setstate__(self, state: dict[Any, Any]) -> None:
        super().__setstate__(state)
        self._replay_result = ReaderReplay(self._worker_id_prefix)

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
