"""Reading studies: what ``magnet pareto`` / ``export``, the dashboard and the reports see.

A study's trials carry magnet's record in one user attribute (``magnet``): the status
(``ok``, ``infeasible``, ``failed``), the reason, the metrics (weighted means over the
workloads), the seconds, the worker that evaluated the design (``HOST:PID``), and the
compressed ``NetworkRecord`` of every workload; the study carries the search configuration
(``magnet_config``) and the hypervolume reference point. Nothing here writes to storage.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict, TypeVar, get_args

import numpy as np

from magnet.arguments import checked_call, checked_methods
from magnet.errors import MagnetError
from magnet.model.records import NetworkRecord, read_network_record
from magnet.perf import paused_gc
from magnet.search import pareto
from magnet.search.design_space import METRICS, SearchSpace, upgraded
from magnet.search.job import unpack, unpack_json
from magnet.search.journal_replay import StoredText
from magnet.search.storage import describe, open_storage, reading

if TYPE_CHECKING:
    import optuna
    from optuna.storages import BaseStorage
    from optuna.trial import FrozenTrial

T = TypeVar("T")
#: What became of a trial (``TrialView.status``).
Status = Literal["ok", "infeasible", "dominated", "failed", "repeat", "running", "waiting"]
CONFIG_ATTR = "magnet_config"
REFERENCE_ATTR = "magnet_hv_reference"
TRIAL_ATTR = "magnet"
#: Feasible points ``Study.hypervolume_history`` checks at once against the running front.
HISTORY_BLOCK = 1024


class TrialRecord(TypedDict, total=False):
    """What a trial's ``magnet`` user attribute holds (the driver writes it, readers read it
    with ``.get``: a trial written by an older magnet may lack a key)."""

    #: ok, infeasible, failed or repeat
    status: str
    reason: str | None
    #: wall-clock seconds of the evaluation
    seconds: float
    #: ``HOST:PID`` of the process that evaluated it, or ``driver``
    worker: str
    #: the searchable metrics (weighted means over the workloads)
    metrics: dict[str, float]
    #: the compressed ``NetworkRecord`` of every workload (``evaluate.pack``)
    records: str
    mappings_evaluated: int
    cache_hits: int
    #: a failed evaluation's traceback
    traceback: str
    #: a repeat: the trial that holds its design
    of: int


@checked_methods()
@dataclass
class TrialView:
    """One trial, as magnet reads it."""

    number: int
    state: str  # Optuna's: COMPLETE, FAIL, RUNNING, WAITING, PRUNED
    status: str  # ok, infeasible, failed, running, waiting
    params: dict[str, Any]
    values: dict[str, float]  # objective -> value (ok and infeasible-with-metrics trials)
    metrics: dict[str, float]
    reason: str | None
    seconds: float | None
    started: datetime | None
    finished: datetime | None
    feasible: bool
    constraints: dict[str, float]  # Optuna's: <= 0 met (``feasible``, one per limit)
    #: The process that evaluated the design (``HOST:PID``), ``driver`` for a trial the
    #: driver answered itself (a repeat, a derived constraint broken); None when not
    #: recorded (studies made before magnet recorded it, a trial the driver failed).
    worker: str | None = None
    #: the packed records, or where a journal holds them (read when asked: ``_packed``)
    _records: str | StoredText | None = None
    #: What figures show of the trial, made once (``magnet.report.study_figures.hover``).
    hover_text: str | None = field(default=None, repr=False, compare=False)

    @property
    def dataflow(self) -> str | None:
        """The trial's dataflow (None when the space has only one)."""
        return self.params.get("dataflow")

    @cached_property
    def records(self) -> list[NetworkRecord]:
        """The ``NetworkRecord`` of every workload (empty for a design that did not run),
        read once, when first asked for (a study holds up to 100,000 trials; a viewer asks
        for a few): each stored record, of whichever version magnet wrote it in, upgraded to
        the current one (``read_record``)."""
        return [read_network_record(r) for r in self.stored_records()]

    def stored_records(self) -> list[dict[str, Any]]:
        """The records as the trial stores them (JSON data, of the version that wrote them),
        unpacked at each call."""
        packed = self._packed()
        return [] if packed is None else unpack(packed)

    def records_json(self) -> str:
        """``records`` as JSON text, without parsing them (``magnet export`` to JSON)."""
        packed = self._packed()
        return "[]" if packed is None else unpack_json(packed)

    def _packed(self) -> str | None:
        """The packed records (read from the journal when a reader left them there)."""
        stored = self._records
        return stored.read() if isinstance(stored, StoredText) else stored

    def to_dict(self, with_records: bool = False) -> dict[str, Any]:
        """The trial as JSON data (``magnet export``, the API), with its records if asked."""
        out = {
            "number": self.number,
            "state": self.state,
            "status": self.status,
            "params": self.params,
            "values": self.values,
            "metrics": self.metrics,
            "reason": self.reason,
            "seconds": self.seconds,
            "worker": self.worker,
        }
        if with_records:  # unpacked for this answer only: an export of every trial holds none
            out["records"] = self.stored_records()
        return out


def _view(trial: FrozenTrial, objectives: list[str]) -> TrialView:
    """A trial as magnet reads it (its ``magnet`` attribute, Optuna's state and values)."""
    attrs = trial.user_attrs.get(TRIAL_ATTR) or {}
    state = trial.state.name
    status = {"RUNNING": "running", "WAITING": "waiting", "FAIL": "failed"}.get(
        state, attrs.get("status", "failed" if state == "PRUNED" else "ok")
    )
    constraints = dict(trial.constraints)
    violated = any(v > 0 for v in constraints.values())
    values = {}
    if state == "COMPLETE" and trial.values is not None and attrs.get("metrics"):
        values = dict(zip(objectives, trial.values, strict=False))
    return TrialView(
        number=trial.number,
        state=state,
        status=status,
        params=trial.params,  # the trial's own dicts, shared: a view never changes them
        values=values,
        metrics=attrs.get("metrics") or {},
        reason=attrs.get("reason"),
        seconds=attrs.get("seconds"),
        started=trial.datetime_start,
        finished=trial.datetime_complete,
        feasible=state == "COMPLETE" and status == "ok" and not violated,
        constraints=constraints,
        worker=attrs.get("worker"),
        _records=attrs.get("records"),
    )


def has_values(trial: TrialView, metrics: Sequence[str]) -> bool:
    """Whether ``trial`` has a finite value of every one of ``metrics``."""
    values = trial.values
    # a loop, not all() of a generator: asked of 100,000 trials at once (13 ms against 28)
    for m in metrics:  # noqa: SIM110
        if not math.isfinite(values.get(m, math.nan)):
            return False
    return True


def with_values(trials: Iterable[TrialView], metrics: Sequence[str]) -> list[TrialView]:
    """The trials with a finite value of every one of ``metrics``."""
    return [t for t in trials if has_values(t, metrics)]


def _appends(old: list[TrialView], new: list[TrialView]) -> bool:
    """Whether ``new`` comes after all of ``old`` (each by number): no trial of it finished
    late (a lower number)."""
    return not (new and old and new[0].number < old[-1].number)


def _merged(old: list[TrialView], new: list[TrialView]) -> list[TrialView]:
    """``old`` and ``new`` (each by number) as one list by number."""
    return old + new if _appends(old, new) else sorted(old + new, key=attrgetter("number"))


@checked_methods()
class Study:
    """A magnet study (read-only): its configuration and its trials as they were read.

    ``views`` (optional, shared between successive reads of one study) keeps the
    ``TrialView`` of every trial read before: a trial whose Optuna object is unchanged is not
    read again (the dashboard follows a running search this way). ``before``: the study as
    read before, with the same ``views``: its front and hypervolume history are grown by the
    trials new since, not made again from every trial (a trial that is feasible stays so,
    unchanged: Optuna never changes a finished trial; the front of the old front and the new
    trials is the front of all, a trial off the old front being dominated by one on it)."""

    def __init__(
        self,
        name: str,
        user_attrs: dict[str, Any],
        trials: Sequence[Any],
        storage: str,
        views: dict[int, tuple[Any, TrialView]] | None = None,
        before: Study | None = None,
    ):
        self.name = name
        self.storage = storage
        config = user_attrs.get(CONFIG_ATTR)
        if config is None:
            raise MagnetError(
                f"study {self.name!r} was not made by magnet (no search configuration)",
                source=storage,
            )
        self.config: dict[str, Any] = config
        self.user_attrs = user_attrs
        self.space = SearchSpace(**upgraded(config["space"]))
        self.objectives = [o.metric for o in self.space.objectives]
        self.directions = self.space.directions()
        #: Optuna's ``FrozenTrial`` of every trial, by number.
        self.frozen: list[Any] = sorted(trials, key=attrgetter("number"))
        self._views = {} if views is None else views
        self._kept: dict[tuple[Any, ...], Any] = {}
        same_goal = before is not None and (before.objectives, before.directions) == (
            self.objectives,
            self.directions,
        )
        self._before = before if same_goal else None
        #: ``selected``'s rules, by key (the next study read grows what they selected)
        self._keeps: dict[tuple[Any, ...], Callable[[TrialView], bool]] = {}
        self._grow()

    def _grow(self) -> None:
        """Make now, from ``before``, all that it had made and can grow (whatever is asked of
        this study, the next one read can grow from it in turn); then let ``before`` go."""
        before = self._before
        if before is None:
            return
        made = before.__dict__
        grown = ("_read", "_by_number", "_feasible", "_nondominated", "_front", "_status_counts")
        for name in (*grown, "params_run", "dataflows_run"):
            if name in made:
                getattr(self, name)
        if "_history" in made and self.reference is not None:
            self._history  # noqa: B018 (made now)
        for key, keep in before._keeps.items():
            self.selected(key, keep)
        for key in list(before._kept):
            if key[0] == "columns":
                self.value_columns(key[1])
        self._before = None

    @classmethod
    def from_optuna(cls, study: optuna.Study, storage: str) -> Study:
        """The magnet study of an ``optuna.Study``."""
        return cls(study.study_name, study.user_attrs, study.get_trials(deepcopy=False), storage)

    @cached_property
    def _all(self) -> list[TrialView]:
        return self._read[0]

    @cached_property
    def _read(self) -> tuple[list[TrialView], tuple[list[TrialView], list[TrialView]] | None]:
        """Every trial's view (by number: Optuna numbers a study's trials 0, 1, ...) and,
        when ``before`` read them, the trials new or changed since with ``before``'s views of
        those it had (``_changed``): ``before``'s views of the trials unchanged are taken as
        they are."""
        before, frozen = self._before, self.frozen
        old = before.frozen if before is not None and "_read" in before.__dict__ else None
        if old is None or len(old) > len(frozen):
            return self._views_of(range(len(frozen)), [None] * len(frozen)), None
        assert before is not None
        was_all = before._all
        # the trials read again: changed (a trial that was running), then the new ones
        at = [i for i, (a, b) in enumerate(zip(old, frozen, strict=False)) if a is not b]
        at += range(len(old), len(frozen))
        out = self._views_of(at, [*was_all, *([None] * (len(frozen) - len(old)))])
        return out, ([out[i] for i in at], [was_all[i] for i in at if i < len(old)])

    def _views_of(self, at: Iterable[int], out: list[Any]) -> list[TrialView]:
        """``out`` with the views of the trials at ``at`` (of ``frozen``) put in."""
        with paused_gc():  # a view per trial, none freed: the collector would walk them all
            for i in at:
                t = self.frozen[i]
                known = self._views.get(t.number)
                if known is None or known[0] is not t:
                    known = (t, _view(t, self.objectives))
                    self._views[t.number] = known
                out[i] = known[1]
        return out

    @property
    def _changed(self) -> tuple[list[TrialView], list[TrialView]] | None:
        """The trials new or changed since ``before``, and ``before``'s views of those it
        had (None: not read from ``before``)."""
        return self._read[1]

    def trials(self, status: Status | None = None) -> list[TrialView]:
        """Every trial (or those with ``status``), by number."""
        return [t for t in self._all if status is None or t.status == status]

    def trial(self, number: int) -> TrialView:
        """Trial ``number`` (bad input naming the study if it has none)."""
        found = self._by_number.get(number)
        if found is None:
            raise MagnetError(f"study {self.name!r} has no trial {number}", field="trial")
        return found

    @cached_property
    def _by_number(self) -> dict[int, TrialView]:
        before, changed = self._before, self._changed
        if before is None or changed is None or "_by_number" not in before.__dict__:
            return {t.number: t for t in self._all}
        out = dict(before._by_number)
        out.update((t.number, t) for t in changed[0])
        return out

    @cached_property
    def params_run(self) -> frozenset[str]:
        """The parameters its trials set (made once per study as read)."""
        trials, before = self._all, frozenset[str]()
        if self._changed is not None and self._before is not None:  # a trial never drops one
            trials, before = self._changed[0], self._before.params_run
        return before.union(k for t in trials for k in t.params)

    @cached_property
    def dataflows_run(self) -> frozenset[str]:
        """The dataflows its trials ran (made once per study as read)."""
        trials, before = self._all, frozenset[str]()
        if self._changed is not None and self._before is not None:
            trials, before = self._changed[0], self._before.dataflows_run
        return before.union(t.dataflow for t in trials if t.dataflow)

    @cached_property
    def _feasible(self) -> list[TrialView]:
        new, before = self._new_feasible, self._before
        if new is None or before is None:
            return [t for t in self._all if t.feasible]
        return _merged(before._feasible, new)

    def feasible(self) -> list[TrialView]:
        """The trials that ran and meet every limit, by number."""
        return list(self._feasible)

    def feasible_with(self, metrics: Sequence[str]) -> list[TrialView]:
        """``feasible()``'s trials with a finite value of every one of ``metrics`` (made
        once per set of metrics: the figures ask again and again)."""
        key = tuple(metrics)
        if self._of_valued_objectives(key):
            return self.feasible_with(self.objectives)

        def keep(t: TrialView) -> bool:
            return t.feasible and has_values(t, key)

        return self.selected(("feasible with", key), keep)

    def value_columns(self, metrics: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The numbers and the values (``[trial, metric]``) of ``feasible_with(metrics)``'s
        trials, in its order: arrays for the figures of a big study, which would otherwise
        walk 100,000 trials in Python. Made once per study as read, grown from ``before``'s
        when the trials new since come after all of its; those of some of the objectives
        are the objectives' own columns (``_of_valued_objectives``)."""
        key = tuple(metrics)
        if self._of_valued_objectives(key):
            numbers, values = self.value_columns(self.objectives)
            return numbers, values[:, [self.objectives.index(m) for m in key]]
        return self.kept(("columns", key), lambda: self._value_columns(key))

    def _of_valued_objectives(self, metrics: tuple[str, ...]) -> bool:
        """Whether ``metrics`` are some (not all) of the objectives and every feasible
        trial has a value of each objective (as a finished search's have): the feasible
        trials with values of ``metrics`` are then those with values of every objective."""
        objectives = tuple(self.objectives)
        if metrics == objectives or not set(metrics) <= set(objectives):
            return False
        return len(self.feasible_with(objectives)) == len(self._feasible)

    def _value_columns(self, key: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        numbers, values = np.zeros(0, np.int64), np.zeros((0, len(key)))
        new = self.feasible_with(key)
        grown = self._growth(("feasible with", key), self._keeps["feasible with", key])
        if grown is not None:  # a ``before`` made the selection
            assert self._before is not None
            old, added = grown
            if ("columns", key) in self._before._kept and _appends(old, added):
                (numbers, values), new = self._before._kept["columns", key], added
        count = len(new)
        tail = [np.fromiter((t.values[m] for t in new), float, count) for m in key]
        return (
            np.concatenate([numbers, np.fromiter((t.number for t in new), np.int64, count)]),
            np.vstack([values, np.column_stack(tail) if tail else np.zeros((count, 0))]),
        )

    def selected(self, key: tuple[Any, ...], keep: Callable[[TrialView], bool]) -> list[TrialView]:
        """The trials ``keep`` keeps, by number, made once for ``key`` in this study as read:
        ``before``'s (when it made them) and those of the trials new or changed since."""
        self._keeps.setdefault(key, keep)
        return list(self.kept(("selected", *key), lambda: self._selected(key, keep)))

    def _selected(self, key: tuple[Any, ...], keep: Callable[[TrialView], bool]) -> list[TrialView]:
        grown = self._growth(key, keep)
        return [t for t in self._all if keep(t)] if grown is None else _merged(*grown)

    def _growth(
        self, key: tuple[Any, ...], keep: Callable[[TrialView], bool]
    ) -> tuple[list[TrialView], list[TrialView]] | None:
        """``before``'s selection for ``key`` and the trials new or changed since that
        ``keep`` keeps: what the selection grows from; None when it must be made afresh (no
        ``before`` made it, or a trial it kept changed)."""
        before, changed = self._before, self._changed
        if before is None or changed is None or ("selected", *key) not in before._kept:
            return None
        now, was = changed
        if any(keep(t) for t in was):
            return None
        return before._kept["selected", *key], [t for t in now if keep(t)]

    def kept(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        """``make()``, made once for ``key`` in this study as read (what several figures
        derive from every trial alike)."""
        if key not in self._kept:
            self._kept[key] = make()
        found: T = self._kept[key]
        return found

    def columns(self) -> list[str]:
        """The columns of ``rows``: number, state, status, every parameter, ``value:OBJECTIVE``,
        every metric, reason."""
        return self._columns

    @cached_property
    def _columns(self) -> list[str]:
        values = [f"value:{o}" for o in self.objectives]
        return ["number", "state", "status", *sorted(self.params_run), *values, *METRICS, "reason"]

    def rows(self, trials: list[TrialView] | None = None) -> list[dict[str, Any]]:
        """One flat dict per trial (default: every trial) on ``columns``: the rows of ``magnet
        export -o trials.csv``; ``pandas.DataFrame(study.rows())`` makes a data frame of
        it."""
        return [self._row(t) for t in (self._all if trials is None else trials)]

    def _row(self, t: TrialView) -> dict[str, Any]:
        """``t``'s row of ``rows``."""
        known = {
            "number": t.number,
            "state": t.state,
            "status": t.status,
            **t.params,
            **{f"value:{o}": v for o, v in t.values.items()},
            **t.metrics,
            "reason": t.reason,
        }
        return {c: known.get(c) for c in self._columns}

    def points(self, trials: list[TrialView]) -> np.ndarray:
        """Minimised log10 objective vectors of ``trials``."""
        return self._points(trials)

    def _points(self, trials: list[TrialView]) -> np.ndarray:
        # the study's own calls: not checked item by item (a list of 100,000 trials)
        if not trials:
            return np.zeros((0, len(self.objectives)))
        # a column at a time, no list per trial (a big study's would be 100,000)
        values = np.column_stack(
            [
                np.fromiter((t.values[o] for t in trials), float, len(trials))
                for o in self.objectives
            ]
        )
        return pareto.to_minimised_log(values, self.directions)

    def pareto_front(self, trials: list[TrialView] | None = None) -> list[TrialView]:
        """The trials (default: the feasible ones) no other of them dominates, best first by
        the first objective; a design the sampler proposed again appears once (its first
        trial)."""
        return list(self._front) if trials is None else self._front_of(trials)

    def on_front(self, number: int) -> bool:
        """Whether trial ``number`` is one of ``pareto_front()``."""
        return number in self.front_numbers

    @cached_property
    def front_numbers(self) -> frozenset[int]:
        """The numbers of ``pareto_front()``'s trials (``on_front`` for many trials at once:
        a property is not a checked call)."""
        return frozenset(t.number for t in self._front)

    @cached_property
    def _new_feasible(self) -> list[TrialView] | None:
        """The feasible trials new since ``before`` (None: no ``before``, or one of its
        feasible trials is not so here: everything is made afresh)."""
        before, changed = self._before, self._changed
        if before is None or changed is None or "_feasible" not in before.__dict__:
            return None
        now, was = changed
        if any(t.feasible for t in was):  # one that was feasible changed: made afresh
            return None
        return [t for t in now if t.feasible]

    @cached_property
    def _nondominated(self) -> list[TrialView]:
        """The feasible trials no other dominates (equal ones all), in no set order."""
        new, before = self._new_feasible, self._before
        pool = self._feasible if new is None or before is None else before._nondominated + new
        if not pool:
            return []
        mask = pareto.nondominated(self._points(pool))
        return [pool[i] for i in np.flatnonzero(mask)]

    @cached_property
    def _front(self) -> list[TrialView]:
        return self._front_of(self._nondominated)

    def _front_of(self, ok: list[TrialView]) -> list[TrialView]:
        points = self._points(ok)
        if not ok:
            return []
        mask = pareto.nondominated(points)
        front, seen = [], set()
        for i in sorted(np.flatnonzero(mask), key=lambda i: (points[i, 0], ok[i].number)):
            key = json.dumps(ok[i].params, sort_keys=True, default=str)
            if key not in seen:
                seen.add(key)
                front.append(ok[i])
        return front

    @property
    def reference(self) -> list[float] | None:
        """The hypervolume reference point the driver fixed (None before it did)."""
        return self.user_attrs.get(REFERENCE_ATTR)

    def hypervolume(self) -> float:
        """Hypervolume of the feasible trials (decades^objectives; 0 before a reference)."""
        ref = self.reference
        # the non-dominated trials' alone: what ``pareto.hypervolume`` keeps of them all
        points = self._points(self._nondominated)
        return 0.0 if ref is None else pareto.hypervolume(points, ref)

    def hypervolume_history(self) -> list[tuple[int, float]]:
        """(trial number, hypervolume of the feasible trials up to it)."""
        return list(self._history[0]) if self.reference is not None else []

    @cached_property
    def _history(self) -> tuple[list[tuple[int, float]], np.ndarray, float]:
        """``hypervolume_history``, and the running front and its volume at its end: grown
        from ``before``'s when the trials new since come after all of its (by number) and
        the reference is the same."""
        ref = self.reference
        assert ref is not None
        objectives = len(self.objectives)
        out: list[tuple[int, float]] = []
        front, volume, start = np.zeros((0, objectives)), 0.0, 0
        before, new = self._before, self._new_feasible
        if (
            before is not None
            and new is not None
            and "_history" in before.__dict__
            and before.reference == ref
            and _appends(before._feasible, new)
        ):
            out, front, volume = before._history
            out, start = list(out), len(before._feasible)
        new = self._feasible[start:]
        points = self._points(new)
        numbers = np.fromiter((t.number for t in new), np.int64, len(new))
        # a trial some earlier one dominates (or equals) leaves the hypervolume as it was:
        # it is computed again only when the running front changes. The points are checked a
        # block at a time against the front as it stood before the block (the front only
        # improves: what it dominated then stays dominated), the few left one by one; each
        # point's volume is the last one computed at or before it (arrays: 100,000 trials)
        with paused_gc():  # a tuple a trial: the collector would walk the study's heap
            for first in range(0, len(points), HISTORY_BLOCK):
                block = points[first : first + HISTORY_BLOCK]
                beaten = pareto.covered(block, front)
                at, volumes = [0], [volume]  # from the block's first point: the volume before it
                for i in np.flatnonzero(~beaten).tolist():
                    added = pareto.with_point(front, block[i])
                    if added is not None:
                        front = added
                        volume = pareto.front_hypervolume(front, ref)
                        at.append(i)
                        volumes.append(volume)
                # each point's: the last computed at or before it
                filled = np.array(volumes)[np.searchsorted(at, np.arange(len(block)), "right") - 1]
                out.extend(
                    zip(numbers[first : first + len(block)].tolist(), filled.tolist(), strict=True)
                )
        return out, front, volume

    def counts(self) -> dict[str, int]:
        """Trials by status, and ``designs``: the distinct designs decided (ok, infeasible,
        or dominated by their bounds, ``magnet.search.bounds``; what a search's ``trials``
        counts)."""
        out = dict.fromkeys(get_args(Status), 0)
        out.update(self._status_counts)
        out["designs"] = out["ok"] + out["infeasible"] + out["dominated"]
        return out

    @cached_property
    def _status_counts(self) -> Counter[str]:
        """Trials by status (``before``'s, with the changes since)."""
        if self._changed is None or self._before is None:
            return Counter(t.status for t in self._all)
        changed, was = self._changed
        out = Counter(self._before._status_counts)
        out.update(t.status for t in changed)
        out.subtract(t.status for t in was)
        return out

    def best(self) -> dict[str, tuple[int, float] | None]:
        """Per objective: (trial number, value) of the best feasible trial, taken from the
        front (of designs equal in that objective, one that no other design dominates)."""
        out: dict[str, tuple[int, float] | None] = {}
        ok = self._front
        for o, d in zip(self.objectives, self.directions, strict=True):
            if not ok:
                out[o] = None
                continue
            pick = (min if d == "minimize" else max)(ok, key=lambda t: t.values[o])
            out[o] = (pick.number, pick.values[o])
        return out

    def summary(self) -> dict[str, Any]:
        """Counts, front size, hypervolume, best designs and state, as listings show them."""
        counts = self.counts()
        return {
            "name": self.name,
            "space": self.space.name,
            "template": self.space.template,
            "workloads": [w.workload for w in self.space.workloads],
            "objectives": [
                {"metric": o, "direction": d}
                for o, d in zip(self.objectives, self.directions, strict=True)
            ],
            "trials": counts,
            "front_size": len(self.pareto_front()),
            "hypervolume": self.hypervolume(),
            "best": {
                k: (None if v is None else {"trial": v[0], "value": v[1]})
                for k, v in self.best().items()
            },
            "state": "running" if counts["running"] else "idle",
        }


class FrontRow(TypedDict):
    """A design of the front as ``magnet pareto --json`` prints it."""

    number: int
    params: dict[str, Any]
    values: dict[str, float]


def pareto_json(study: Study) -> list[FrontRow]:
    """The front as ``magnet pareto --json`` prints it: objects with params and values."""
    return [
        {"number": t.number, "params": t.params, "values": t.values} for t in study.pareto_front()
    ]


def list_studies(storage: str | None) -> list[str]:
    """The names of the studies in ``storage`` (any, magnet's or not)."""
    return _study_names(open_storage(storage, create=False), storage)


def _study_names(store: BaseStorage, storage: str | None) -> list[str]:
    """The names of the studies in an open storage (its reading errors as bad input)."""
    import optuna

    with reading(storage):
        return [
            s.study_name for s in optuna.get_all_study_summaries(store, include_best_trial=False)
        ]


def load_studies(storage: str | None = None) -> list[Study]:
    """Every study of ``storage`` that magnet made (others are skipped), the storage opened
    once."""
    import optuna

    storage = None if storage is None else str(storage)
    store = open_storage(storage, create=False, keep_records=False)
    out = []
    for name in _study_names(store, storage):
        try:
            with reading(storage):
                study = optuna.load_study(study_name=name, storage=store)
                out.append(Study.from_optuna(study, describe(storage)))
        except MagnetError as exc:
            if exc.field == "--storage":  # the storage failed, not the study
                raise
            continue  # not a magnet study
    return out


@checked_call
def load_study(name: str, storage: str | Path | None = None) -> Study:
    """The magnet study ``name`` in ``storage`` (a Journal path, a URL or None: the default)."""
    import optuna

    storage = None if storage is None else str(storage)
    store = open_storage(storage, create=False, keep_records=False)
    with reading(storage):
        try:
            study = optuna.load_study(study_name=name, storage=store)
        except KeyError:
            study = None
        if study is not None:
            return Study.from_optuna(study, describe(storage))
    known = _study_names(store, storage)
    raise MagnetError(
        f"no study {name!r}; studies here: {', '.join(known) or 'none'}",
        source=describe(storage),
        field="--study",
    )
