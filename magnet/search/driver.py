"""The design search: one driver owns the Optuna study and is the only process writing it.

Before the first trial the driver checks the whole configuration (``space._check`` and
``evaluate.preflight``): a bad space, workload, cost model or mapper option is bad input
(``MagnetError``), never a study of infeasible or failed trials.

The driver asks the sampler for trials, turns each into a ``DesignJob`` (a design: template
parameters and a dataflow), hands it to a worker pool (``workers.py``: in-process or Ray,
at most W in flight) and tells the result. What Optuna is told, so that its samplers and
its own tools (``optuna-dashboard``, ``optuna.visualization``) read a magnet study right:

* a design that ran: COMPLETE with its real objective values, and one constraint per limit
  (``feasible`` 0, each limit's relative miss squashed into [0, 1): ``v / (1 + v)``);
* a design that cannot run (a derived constraint broken, a template refusal, a dataflow it
  cannot run, a layer no mapping fits, an objective the cost model does not give): PRUNED
  with its reason, ``feasible`` 1 and every limit 1, so that constraint-aware samplers rank
  it below every design that runs, whatever limit that one misses;
* a design the study already holds: PRUNED as a ``repeat`` of that trial, not evaluated
  again and not counted;
* an evaluation that raises (a bug in a plug-in, a worker that died twice): FAIL, with the
  message and traceback stored on the trial and shown once on stderr; ``max_failures`` in a
  row stop the search (``SearchFailed``).

``trials`` counts distinct designs evaluated (ok or infeasible), earlier runs included, up
to the size of a discrete space: running the same command again resumes, and the sampler is
seeded from the seed and the study's trial count, so a resumed search does not replay the
designs it already has. Trials a killed driver left RUNNING are failed and their designs
queued again, once.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import shlex
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from traceback import format_exception
from types import FrameType
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from magnet.errors import MagnetError, PluginError, SearchFailed
from magnet.search import pareto
from magnet.search.bounds import front_for, unbounded
from magnet.search.design_space import (
    SearchSpace,
    WorkloadSpec,
    as_stored_now,
    check_sampler,
    check_study_name,
    checked,
    constraint_violations,
)
from magnet.search.job import DesignJob, DesignResult, preflight
from magnet.search.storage import (
    DriverLock,
    appends_held,
    check_storage,
    describe,
    open_storage,
    quiet_optuna,
)
from magnet.search.study import CONFIG_ATTR, REFERENCE_ATTR, TRIAL_ATTR, Study, TrialRecord
from magnet.units import check_seed

if TYPE_CHECKING:
    import optuna
    from optuna.storages import BaseStorage
    from optuna.trial import Trial

    from magnet.search.workers import Pool

#: The samplers a space may name (the values of ``SearchSpace.sampler``).
SAMPLERS: tuple[str, ...] = get_args(SearchSpace.model_fields["sampler"].annotation)
#: Feasible trials that fix the hypervolume reference point.
REFERENCE_TRIALS = 10
#: Consecutive failed evaluations that stop the search (``--max-failures``).
MAX_FAILURES = 5
#: The ``worker`` of a trial the driver answered without evaluating it (a repeat, a derived
#: constraint broken); an evaluated trial names its process (``evaluate.worker_id``).
DRIVER_WORKER = "driver"
#: Designs the sampler proposes again, in a row, before the driver queues one it has not
#: seen (drawn at random): a sampler that has converged must not spin on known designs.
REPEATS_BEFORE_NEW = 8
#: What an interrupted search says last.
INTERRUPTED = "interrupted: finished trials are kept; run the same command to resume"


@dataclass(frozen=True)
class SearchOptions:
    """How to run a search (the command line's options)."""

    trials: int | None = None
    workers: int = 1
    sampler: str | None = None
    storage: str | None = None
    study: str | None = None
    seed: int = 0
    ray_address: str | None = None
    timeout: float | None = None
    workloads: tuple[str, ...] = ()
    max_failures: int = MAX_FAILURES


def resolve(space: SearchSpace, options: SearchOptions) -> SearchSpace:
    """The space with the command line's overrides (workloads, sampler, trials)."""
    update: dict[str, Any] = {}
    if options.workloads:
        update["workloads"] = [WorkloadSpec(workload=w) for w in options.workloads]
    if options.sampler is not None:
        if options.sampler not in SAMPLERS:
            raise MagnetError(
                f"unknown sampler {options.sampler!r}; allowed: {', '.join(SAMPLERS)}",
                field="--sampler",
            )
        update["sampler"] = options.sampler
    if options.trials is not None:
        update["trials"] = options.trials
    resolved = space.model_copy(update=update) if update else space
    if options.sampler is not None:
        check_sampler(resolved, None, "--sampler")
    return resolved


def config_of(space: SearchSpace, options: SearchOptions) -> dict[str, Any]:
    """What a study must be resumed with: the space (but the trial count), sampler, seed."""
    data = space.model_dump(mode="json")
    data.pop("trials")
    return {"space": data, "seed": options.seed, "schema": 1}


def _differences(old: Any, new: Any, path: str = "") -> list[str]:
    """``path: old -> new`` for every leaf where two saved configurations differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return out
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


def make_sampler(
    space: SearchSpace, seed: int, trials: int, earlier: int = 0
) -> optuna.samplers.BaseSampler:
    """The space's sampler, seeded from ``seed`` and the number of ``earlier`` trials of the
    study: a fresh study with one seed always gives the same trials, and a resumed one goes
    on from where it stopped instead of replaying the first designs."""
    import optuna

    seed = int(np.random.SeedSequence([seed, earlier]).generate_state(1)[0]) if earlier else seed
    name = space.sampler
    population = min(50, max(8, trials // 5))
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=population)
    if name == "nsga3":
        return optuna.samplers.NSGAIIISampler(seed=seed, population_size=population)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.GridSampler(grid(space), seed=seed)


def grid(space: SearchSpace) -> dict[str, Sequence[Any]]:
    """Every discrete parameter's values (and the dataflows, when more than one): the
    trial parameters Optuna sees, but the float ranges'."""
    out = {name: r.listed() for name, r in space.ranges().items() if r.kind != "float"}
    flows = space.dataflows()
    if len(flows) > 1:
        out["dataflow"] = flows
    return out


def design_key(params: dict[str, Any]) -> str:
    """What identifies a design among a study's trials: its trial parameters."""
    return json.dumps(params, sort_keys=True, default=str)


def unseen_design(
    space: SearchSpace, known: set[str], rng: np.random.Generator
) -> dict[str, Any] | None:
    """Trial parameters of a design of ``space`` not in ``known`` (drawn at random), or None
    when the space holds no other."""
    values = grid(space)
    floats = {n: r for n, r in space.ranges().items() if r.kind == "float"}
    # the trial parameters in Optuna's order: the ranges as the space lists them, then the
    # dataflow (each drawn in this order, so that a seed gives the same designs)
    order = [*space.ranges(), *(["dataflow"] if "dataflow" in values else [])]

    def draw() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in order:
            if name in floats:
                lo, hi = floats[name].bounds()
                log = floats[name].log
                x = rng.uniform(math.log(lo), math.log(hi)) if log else rng.uniform(lo, hi)
                out[name] = math.exp(x) if log else x
            else:
                choices = values[name]
                out[name] = choices[int(rng.integers(len(choices)))]
        return out

    for _ in range(1000):
        params = draw()
        if design_key(params) not in known:
            return params
    if space.size() > 1_000_000:
        return None
    names = list(values)
    left = [
        dict(zip(names, combo, strict=True))
        for combo in itertools.product(*values.values())
        if design_key(dict(zip(names, combo, strict=True))) not in known
    ]
    return left[int(rng.integers(len(left)))] if left else None


def suggest(trial: Trial, space: SearchSpace) -> tuple[dict[str, Any], str]:
    """The trial's template parameters (a group's name replaced by its parameters) and
    dataflow."""
    chosen: dict[str, Any] = {}
    for name, r in space.ranges().items():
        if r.kind == "int":
            values = r.listed()  # the step may be written as a size, like the bounds
            step = values[1] - values[0] if len(values) > 1 else 1
            chosen[name] = trial.suggest_int(name, values[0], values[-1], step=step)
        elif r.kind == "float":
            lo, hi = r.bounds()
            chosen[name] = trial.suggest_float(name, lo, hi, log=r.log)
        else:
            chosen[name] = trial.suggest_categorical(name, r.listed())
    flows = space.dataflows()
    flow = trial.suggest_categorical("dataflow", flows) if len(flows) > 1 else flows[0]
    return space.design(chosen), flow


class Front:
    """The study's front so far (minimised log10 objectives of its feasible designs, none
    dominating or equal to another), kept as designs are told, and the hypervolume reference
    point fixed from the first of them. The driver is the only writer of the study, so the
    reference is read from it once and kept here.

    A design told is compared with the front only (a point it dominates leaves it), and the
    hypervolume is computed again only when the front changed: the driver tells every
    design in turn, and finding the front among every point told, twice a design (for its
    line and for the bounds a job carries), took 4 ms a design after 1,000 of them."""

    def __init__(self, study: optuna.Study, before: Study):
        self.study = study
        self.directions = before.directions
        points = before.points(before.feasible())
        #: The first feasible points (the reference is fixed from them).
        self.first: list[list[float]] = points[:REFERENCE_TRIALS].tolist()
        self.points: pareto.Points = np.unique(points[pareto.nondominated(points)], axis=0)
        self.reference: list[float] | None = before.reference
        self._hypervolume: float | None = None  # of ``points``; None: not computed since

    def add(self, values: list[float]) -> None:
        """A feasible design's objective values (as told to Optuna)."""
        point = pareto.to_minimised_log([values], self.directions)[0]
        if len(self.first) < REFERENCE_TRIALS:
            self.first.append(point.tolist())
        self.store_reference()
        added = pareto.with_point(self.points, point)
        if added is not None:  # else dominated or equalled: the front as it was
            self.points, self._hypervolume = added, None

    def store_reference(self, force: bool = False) -> None:
        """Fix the reference once ``REFERENCE_TRIALS`` feasible designs are known (``force``:
        from those there are, at the end of a run)."""
        if self.reference is not None or not self.first:
            return
        if len(self.first) >= REFERENCE_TRIALS or force:
            self.reference = pareto.reference_point(self.first)
            self.study.set_user_attr(REFERENCE_ATTR, self.reference)

    def size_and_hypervolume(self) -> tuple[int, float | None]:
        """The front's size (distinct designs: a design proposed again has the same point)
        and its hypervolume (None before the reference is fixed)."""
        if self.reference is None:
            return len(self.points), None
        if self._hypervolume is None:
            self._hypervolume = pareto.front_hypervolume(self.points, self.reference)
        return len(self.points), self._hypervolume


class Progress:
    """The search's progress on stderr: one line per finished design, a summary at the end."""

    def __init__(
        self, log: Callable[[str], None], total: int, counts: dict[str, int], front: Front
    ):
        self.log, self.total, self.front = log, total, front
        kinds = ("ok", "infeasible", "dominated", "failed", "repeat")
        self.counts = {k: counts.get(k, 0) for k in kinds}
        self.start = time.monotonic()
        self.finished_here = 0
        self.shown: set[str] = set()  # failure messages whose traceback was shown

    @property
    def done(self) -> int:
        """Distinct designs decided (what ``trials`` counts): evaluated, or dominated by
        their bounds."""
        return self.counts["ok"] + self.counts["infeasible"] + self.counts["dominated"]

    def repeat(self) -> None:
        """A design answered from the study (not evaluated, not counted)."""
        self.counts["repeat"] += 1

    def trial(self, number: int, status: str, text: str) -> None:
        """One finished design: its line, with the front, the counts and the rate."""
        self.counts[status] += 1
        self.finished_here += 1
        elapsed = time.monotonic() - self.start
        rate = self.finished_here / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - self.done)
        eta = left / rate if rate > 0 else math.inf
        front, hv = self.front.size_and_hypervolume()
        hv_text = "-" if hv is None else f"{hv:.3g}"
        eta_text = "-" if not math.isfinite(eta) else f"{eta:.0f}s"
        repeats = f", repeats {self.counts['repeat']}" if self.counts["repeat"] else ""
        if self.counts["dominated"]:
            repeats += f", dominated {self.counts['dominated']}"
        self.log(
            f"[{min(self.done, self.total):>{len(str(self.total))}}/{self.total}] #{number} "
            f"{status:<10} {text} | front {front} | HV {hv_text} | "
            f"ok {self.counts['ok']}, infeasible {self.counts['infeasible']}, "
            f"failed {self.counts['failed']}{repeats} | {rate:.2f} designs/s, eta {eta_text}"
        )

    def failure(self, number: int, reason: str, traceback: str | None) -> None:
        """A failed trial: its reason, and the first time a reason is seen, its traceback."""
        self.trial(number, "failed", reason[:200])
        if traceback and reason not in self.shown:
            self.shown.add(reason)
            self.log(traceback.rstrip())


def check_options(options: SearchOptions) -> None:
    """The command line's values a space file does not check."""
    if options.study is not None:
        try:
            check_study_name(options.study)
        except ValueError as exc:
            raise MagnetError(str(exc), field="--study") from None
    if options.timeout is not None and not (math.isfinite(options.timeout) and options.timeout > 0):
        raise MagnetError(f"give a number of seconds > 0, got {options.timeout}", field="--timeout")
    try:
        check_seed(options.seed)
    except ValueError as exc:
        raise MagnetError(str(exc), field="--seed") from None
    counts = {"--trials": options.trials, "--workers": options.workers}
    counts |= {"--max-failures": options.max_failures}
    for flag, value in counts.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise MagnetError(f"give a whole number, got {value!r}", field=flag)
        if value is not None and value < 1:
            raise MagnetError(f"must be >= 1, got {value}", field=flag)
    from magnet.search.workers import check_address, check_workers

    check_workers(options.workers, options.ray_address)
    if options.ray_address is not None:
        check_address(options.ray_address)
    from magnet.search.job import load_network

    for spec in options.workloads:  # the command line's workloads, checked like the space's
        try:
            load_network(spec, None)
        except MagnetError as exc:
            if exc.field == "--workload":  # already names the flag
                raise
            raise MagnetError(str(exc), field="--workload") from None


def run_search(
    space: SearchSpace,
    options: SearchOptions = SearchOptions(),
    log: Callable[[str], None] = print,
) -> Study:
    """Run (or resume) the search of ``space``; returns the study (see the module docstring).

    Raises ``MagnetError`` for bad input (before any trial is written), ``PluginError`` when
    a plug-in fails on the space's first design, ``SearchFailed`` when evaluations keep
    failing, ``KeyboardInterrupt`` when interrupted (finished trials are kept).

    Changes nothing of the calling process for longer than the call: Optuna's log level is
    set to warnings only while it runs, SIGTERM ends it (as Ctrl-C does) only while it runs
    and only when it runs in the main thread, and the environment is left as it is."""
    check_options(options)
    space = resolve(checked(space), options)
    check_storage(options.storage, options.study or space.name)
    preflight(space, space.source)
    storage = open_storage(options.storage, create=True)
    with quiet_optuna():
        study = _open_study(space, options, storage)
        lock = DriverLock(options.storage, study)
        lock.acquire()
        try:
            _recover_orphans(study, storage, log)
            study.sampler = make_sampler(space, options.seed, space.trials, len(study.trials))
            return _drive(study, storage, space, options, lock, log)
        finally:
            lock.release()


def _open_study(space: SearchSpace, options: SearchOptions, storage: BaseStorage) -> optuna.Study:
    """The study a search of ``space`` writes: made now, or resumed when it was made by magnet
    with this configuration (else bad input, before anything is written)."""
    import optuna

    config = config_of(space, options)
    name = options.study or space.name
    try:  # looked up first: create_study(load_if_exists=True) appends to a journal even then
        storage.get_study_id_from_name(name)
    except KeyError:
        study = optuna.create_study(
            study_name=name, storage=storage, directions=space.directions(), load_if_exists=True
        )
    else:
        study = optuna.load_study(study_name=name, storage=storage)
    saved = study.user_attrs.get(CONFIG_ATTR)
    if saved is not None:  # a study made by an earlier magnet stored its space as it did
        saved = {**saved, "space": as_stored_now(saved["space"])}
    if saved is None:
        if study.trials:
            raise MagnetError(
                f"study {name!r} exists but was not made by magnet; give another --study",
                source=describe(options.storage),
            )
        study.set_user_attr(CONFIG_ATTR, config)
    elif saved != config:
        diff = "; ".join(_differences(saved, config)[:8])
        raise MagnetError(
            f"study {name!r} was run with another configuration ({diff}); resume it with the "
            "same space, or give another --study",
            source=describe(options.storage),
        )
    objectives = [o.metric for o in space.objectives]
    if study.metric_names != objectives:  # Optuna's own tools label the objectives
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names(objectives)
    return study


def _recover_orphans(
    study: optuna.Study,
    storage: BaseStorage,
    log: Callable[[str], None],
    reason: str = "the driver stopped",
) -> None:
    """Trials left RUNNING (by a killed driver, or an interrupt inside ``study.ask``): failed,
    and their designs queued once more. The driver holds the study's lock, so every RUNNING
    trial of the study is one no live driver is evaluating. (Optuna's ``Study`` sets no
    attribute of a trial it did not ask for: the record goes through the storage's public
    ``BaseStorage`` methods, by the trial's number.)"""
    from optuna.trial import TrialState

    orphans = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if not orphans:
        return
    study_id = storage.get_study_id_from_name(study.study_name)
    for t in orphans:
        again = "requeued_from" not in t.user_attrs
        record: TrialRecord = {"status": "failed", "reason": f"{reason} before it finished"}
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, t.number)
        storage.set_trial_user_attr(trial_id, TRIAL_ATTR, record)
        study.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
        if again and t.params:
            study.enqueue_trial(t.params, user_attrs={"requeued_from": t.number})
    log(f"{len(orphans)} trial(s) left running were failed and queued again ({reason})")


class _Designs:
    """The designs of the study by key: those evaluated (trial number and constraints) and
    those in flight; and the generator of unseen designs for a sampler that keeps repeating."""

    def __init__(self, before: Study, space: SearchSpace, seed: int):
        self.known: dict[str, tuple[int, dict[str, float]]] = {}
        for t in before.trials():
            if t.status in ("ok", "infeasible"):
                self.known.setdefault(design_key(t.params), (t.number, t.constraints))
        self.in_flight: dict[str, int] = {}
        self.repeats_in_a_row = 0
        self.space = space
        self.rng = np.random.default_rng([seed, len(before.trials())])

    def holder(self, key: str) -> tuple[int, dict[str, float]] | None:
        """(trial number, constraints) of the trial holding the design ``key``, if any (a
        design in flight has no constraints yet)."""
        if key in self.known:
            return self.known[key]
        return None if key not in self.in_flight else (self.in_flight[key], {})

    def queue_unseen(self, study: optuna.Study) -> bool:
        """Queue a design neither known nor in flight; False when the space has none left."""
        seen = set(self.known) | set(self.in_flight)
        params = unseen_design(self.space, seen, self.rng)
        if params is None:
            return False
        study.enqueue_trial(params, user_attrs={"magnet_unseen": True})
        return True


def _drive(
    study: optuna.Study,
    storage: BaseStorage,
    space: SearchSpace,
    options: SearchOptions,
    lock: DriverLock,
    log: Callable[[str], None],
) -> Study:
    """The driver's loop over a study ready to run: ask, dispatch, tell, until the trials
    wanted are done (or a timeout, the failures or an interrupt end it); then the summary."""
    from magnet.search.workers import make_pool

    before = Study.from_optuna(study, describe(options.storage))
    front = Front(study, before)
    total = int(min(space.trials, space.size()))
    progress = Progress(log, total, before.counts(), front)
    if total < space.trials:
        log(f"the space holds {total} designs: the search evaluates each once at most")
    if progress.done >= total:
        log(
            f"study {study.study_name!r} already has {progress.done} designs "
            f"(of {total}); nothing to do"
        )
        return before
    log(
        f"study {study.study_name!r} in {describe(options.storage)}: {progress.done} designs, "
        f"{total} wanted; sampler {space.sampler}, {options.workers} worker(s)"
    )
    missing = unbounded([o.metric for o in space.objectives]) if space.bounds else []
    if missing:
        log(f"no bound for {', '.join(missing)} (magnet.search.bounds): every design is mapped")
    pool = make_pool(options.workers, options.ray_address, log)
    if pool.startup_seconds:
        log(
            f"{options.workers} Ray workers ready after {pool.startup_seconds:.1f} s of start-up "
            "(the rates below count from here)"
        )
        progress.start = time.monotonic()
    signals = _Signals()
    designs = _Designs(before, space, options.seed)
    run = _Run(study, storage, space, options, progress, pool, designs, signals)
    try:
        signals.install()
        run.loop(lock)
        signals.check()
    except KeyboardInterrupt:
        run.interrupt()
        log(INTERRUPTED)
        raise
    finally:
        try:
            pool.close()
            front.store_reference(force=True)
        finally:
            signals.restore()
    if signals.noted:  # came while the pool closed, every design told: stopped all the same
        log(INTERRUPTED)
        raise KeyboardInterrupt
    result = Study.from_optuna(study, describe(options.storage))
    for line in summary_lines(result):
        log(line)
    if run.failures >= options.max_failures:
        raise SearchFailed(
            f"stopped: {run.failures} evaluations in a row failed; the last: "
            f"{result.trials('failed')[-1].reason} (each failed trial keeps its traceback: "
            f"magnet export --study {shlex.quote(result.name)} -o trials.json)"
        )
    return result


class _Run:
    """One run of the driver's loop: the trials in flight and what ends the run."""

    def __init__(
        self,
        study: optuna.Study,
        storage: BaseStorage,
        space: SearchSpace,
        options: SearchOptions,
        progress: Progress,
        pool: Pool,
        designs: _Designs,
        signals: _Signals,
    ):
        self.study, self.storage, self.space, self.options = study, storage, space, options
        self.progress, self.pool, self.designs = progress, pool, designs
        self.signals = signals
        self.running: dict[int, tuple[Trial, str]] = {}  # trial number -> (Trial, design key)
        self.deadline = None if options.timeout is None else time.monotonic() + options.timeout
        self.failures = 0  # in a row
        self.starved = False  # every unseen design is in flight: wait before asking again
        self.exhausted = False  # the space holds no design left to evaluate

    def loop(self, lock: DriverLock) -> None:
        """Keep the pool full and tell what finishes, until ``enough`` and nothing runs."""
        while True:
            self.signals.check()
            lock.beat()
            while not self.enough() and len(self.running) < self.pool.slots:
                self.ask()
            if not self.running:
                return
            self.collect()

    def enough(self) -> bool:
        """Whether to ask for no more trials (those running are still collected)."""
        return (
            self.exhausted
            or self.starved
            or self.progress.done + len(self.running) >= self.progress.total
            or (self.deadline is not None and time.monotonic() > self.deadline)
            or self.failures >= self.options.max_failures
        )

    def ask(self) -> None:
        """Ask for one trial: a repeat is answered from the study, a design that breaks a
        derived constraint is told at once, any other goes to the pool."""
        study, designs = self.study, self.designs
        trial = study.ask()
        self.running[trial.number] = (trial, "")  # running from now: an interrupt fails it
        with appends_held(self.storage):
            params, flow = suggest(trial, self.space)
        key = design_key(trial.params)
        holder = designs.holder(key)
        if holder is not None:
            _tell_repeat(study, trial, *holder)
            del self.running[trial.number]
            self.progress.repeat()
            designs.repeats_in_a_row += 1
            if designs.repeats_in_a_row % REPEATS_BEFORE_NEW == 0:
                self.starved = not designs.queue_unseen(study)
                self.exhausted = self.starved and not designs.in_flight
            return
        designs.repeats_in_a_row = 0
        broken = constraint_violations(self.space, params)
        if broken:
            outcome = DesignResult(status="infeasible", reason=f"constraint broken: {broken[0]}")
            designs.known[key] = (trial.number, self._tell(trial, outcome))
            del self.running[trial.number]
            return
        number, seed = trial.number, self.options.seed
        job = DesignJob.of(self.space, params, flow, number=number, seed=seed)
        job = replace(job, **front_for(self.space, self.progress.front.points))
        self.running[trial.number] = (trial, key)
        designs.in_flight[key] = trial.number
        self.pool.submit(job)

    def collect(self) -> None:
        """Tell the evaluations that finished (waiting up to a second for one). Only while
        the pool evaluates or waits is an interrupt raised the moment it comes."""
        with self.signals.allowing():
            finished = list(self.pool.results(timeout=1.0))
        for job, outcome in finished:
            self.starved = False  # a design finished: the sampler may find new ones again
            trial, key = self.running[job.number]
            self.designs.in_flight.pop(key, None)
            if isinstance(outcome, BaseException):
                self.failures += 1
                _fail(self.study, trial, outcome, self.progress)
            else:
                self.failures = 0
                self.designs.known[key] = (trial.number, self._tell(trial, outcome))
            del self.running[job.number]  # once told: an interrupt meanwhile fails it

    def _tell(self, trial: Trial, outcome: DesignResult) -> dict[str, float]:
        return _tell(self.study, trial, self.space, outcome, self.progress)

    def interrupt(self) -> None:
        """Ctrl-C or SIGTERM: fail the trials in flight and queue their designs again."""
        from optuna.exceptions import UpdateFinishedTrialError

        self.pool.cancel_all()
        for number, (trial, _) in self.running.items():
            try:
                _fail(self.study, trial, "interrupted", self.progress)
            except UpdateFinishedTrialError:  # told just before the interrupt: it stands
                continue
            if trial.params:  # asked, not yet suggested: no design to run again
                self.study.enqueue_trial(trial.params, user_attrs={"requeued_from": number})
        self.running.clear()
        # a trial the interrupt caught inside study.ask(), before the driver saw it
        _recover_orphans(self.study, self.storage, lambda line: None, "interrupted")


class _Signals:
    """SIGINT and SIGTERM while the driver runs: noted when they come, raised as
    ``KeyboardInterrupt`` where that is safe.

    Python raises ``KeyboardInterrupt`` at whichever bytecode runs when the signal comes, and
    almost nothing the driver calls between two evaluations survives that: inside Optuna's
    journal storage it can leave a trial RUNNING in the file that the storage's replay never
    applied (``apply_logs`` counts an operation before applying it, so the driver cannot see
    that trial to fail it), or become a ``RuntimeError`` or ``OSError`` of the journal's file
    lock (a traceback, exit 1, a trial left RUNNING); inside a finalizer (``simpleeval``'s
    ``__del__``) it is printed as "Exception ignored" and lost, and the search runs on. So
    the handler only notes a signal, and raises at once only inside ``allowing()`` (the pool
    evaluating or waiting: nothing of the study is being written); elsewhere the driver
    raises it at its next ``check()``, between trials. A second signal is raised at once
    wherever it lands (a driver stuck in a storage call still stops; a trial it leaves
    RUNNING is failed and queued again by the next run). Inside a finalizer neither is
    raised (``_in_finalizer``: the garbage collector runs them wherever it runs, the pool's
    wait included, and a traceback of the lost exception would be printed): the next
    ``check()`` raises it, within the pool's wait of a second. SIGINT is taken over only when
    Python's default handler has it (not when it is ignored, or the caller's own).
    """

    def __init__(self) -> None:
        self.noted = 0
        self.allowed = False
        self.previous: dict[int, Any] = {}  # signal -> the handler before install

    def install(self) -> None:
        """Take SIGTERM (and SIGINT, when Python's default handler has it) for the run.
        Only the main thread may set a signal handler: a search run from another thread
        leaves signals to its caller."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in (signal.SIGINT, signal.SIGTERM):
            default = signal.getsignal(signum) is signal.default_int_handler
            if signum == signal.SIGTERM or default:
                self.previous[signum] = signal.signal(signum, self._note)

    def restore(self) -> None:
        """Put back the handlers ``install`` replaced."""
        for signum, handler in self.previous.items():
            # None: a handler not set from Python, which Python cannot put back; the default
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self.previous.clear()

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.noted += 1
        if (self.allowed or self.noted > 1) and not _in_finalizer(frame):
            self.allowed = False  # raised once: the handling code that follows is not held up
            raise KeyboardInterrupt

    def check(self) -> None:
        """Raise a signal that came where it could not be raised (or was lost in a
        finalizer)."""
        if self.noted:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def allowing(self) -> Iterator[None]:
        """A section where a signal is raised the moment it comes."""
        self.check()
        self.allowed = True
        try:
            yield
        finally:
            self.allowed = False


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an object's ``__del__`` (called by the garbage collector
    or as the last reference goes): an exception raised there is printed as "Exception
    ignored", with its traceback, and dropped."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _squash(violation: float) -> float:
    """A limit's relative miss (> 0) into [0, 1), so that a design that runs ranks above one
    that cannot run (1 on every limit) whatever it misses by; <= 0 (met) as it is."""
    return violation / (1.0 + violation) if violation > 0 else violation


#: A design's verdict: its trial record, the objective values to tell (None: PRUNED) and its
#: constraints (Optuna's: <= 0 met).
Verdict = tuple[TrialRecord, list[float] | None, dict[str, float]]


def _verdict(space: SearchSpace, outcome: DesignResult) -> Verdict:
    """What to tell of a design's outcome (see the module docstring): a design that ran is
    ``ok`` with its values, unless the cost model gives no value of an objective (then
    infeasible, PRUNED) or it misses a limit (infeasible, with its values)."""
    record: TrialRecord = {
        "status": outcome.status,
        "reason": outcome.reason,
        "seconds": round(outcome.seconds, 3),
        "worker": outcome.worker or DRIVER_WORKER,
    }
    constraints = {"feasible": 1.0, **{limit.key: 1.0 for limit in space.limits}}
    if outcome.status != "ok":
        return record, None, constraints
    objectives = [o.metric for o in space.objectives]
    values = [outcome.metrics[m] for m in objectives]
    missing = [m for m, v in zip(objectives, values, strict=True) if not math.isfinite(v)]
    if missing:
        record["status"] = "infeasible"
        record["reason"] = f"the cost model gives no {', '.join(missing)}"
    else:
        constraints["feasible"] = 0.0
        _check_limits(space, outcome.metrics, record, constraints)
    record["metrics"] = outcome.metrics
    if outcome.packed_records is not None:
        record["records"] = outcome.packed_records
    record["mappings_evaluated"] = outcome.mappings_evaluated
    record["cache_hits"] = outcome.cache_hits
    return record, None if missing else values, constraints


def _check_limits(
    space: SearchSpace,
    metrics: dict[str, float],
    record: TrialRecord,
    constraints: dict[str, float],
) -> None:
    """Each limit's squashed miss into ``constraints``; the first limit missed makes the
    ``record`` infeasible (a metric without a value misses its limit)."""
    for limit in space.limits:
        value = metrics.get(limit.metric, math.nan)
        violation = _squash(limit.violation(value)) if math.isfinite(value) else 1.0
        constraints[limit.key] = violation
        if violation > 0 and record["status"] == "ok":
            record["status"] = "infeasible"
            record["reason"] = f"outside the limit {limit.key}: {value:.4g}"


def _set_attrs(trial: Trial, constraints: dict[str, float], record: TrialRecord) -> None:
    """A trial's constraints and its record, written to the storage at once, before it is
    told (``appends_held``: the sampler reads them when told)."""
    with appends_held(trial.storage):
        for key, value in constraints.items():
            trial.set_constraint(key, value)
        trial.set_user_attr(TRIAL_ATTR, record)


def _tell(
    study: optuna.Study,
    trial: Trial,
    space: SearchSpace,
    outcome: DesignResult,
    progress: Progress,
) -> dict[str, float]:
    """Tell a design's outcome (see the module docstring); returns its constraints."""
    from optuna.trial import TrialState

    record, values, constraints = _verdict(space, outcome)
    _set_attrs(trial, constraints, record)
    try:
        if values is None:
            study.tell(trial, state=TrialState.PRUNED)
        else:
            study.tell(trial, values)
    except RuntimeError as exc:  # the grid sampler stops the study after its last point
        if "Study.stop" not in str(exc):
            raise
    if record["status"] == "ok" and values is not None:
        progress.front.add(values)
        objectives = [o.metric for o in space.objectives]
        text = "  ".join(f"{m} {v:.4g}" for m, v in zip(objectives, values, strict=True))
    else:
        text = (record.get("reason") or "")[:100]
    progress.trial(trial.number, record["status"], text)
    return constraints


def _tell_repeat(
    study: optuna.Study, trial: Trial, number: int, constraints: dict[str, float]
) -> None:
    """A design the study holds (trial ``number``): PRUNED as its repeat, with its
    constraints (so that samplers rank it as that design), never evaluated again."""
    from optuna.trial import TrialState

    record: TrialRecord = {
        "status": "repeat",
        "reason": f"the design of trial #{number}",
        "of": number,
        "worker": DRIVER_WORKER,
    }
    _set_attrs(trial, constraints, record)
    study.tell(trial, state=TrialState.PRUNED)


def _fail(
    study: optuna.Study, trial: Trial, error: BaseException | str, progress: Progress
) -> None:
    """Fail a trial: an evaluation that raised (its message and traceback kept on the
    trial and shown once), or ``error`` as the reason (an interrupt)."""
    from optuna.trial import TrialState

    traceback: str | None
    if isinstance(error, str):
        reason, traceback = error, None
    else:
        reason = f"{type(error).__name__}: {error}"
        # a plug-in's error: its own traceback (none for a value it returned), not magnet's
        if isinstance(error, PluginError):
            traceback = error.traceback
        else:
            traceback = "".join(format_exception(error))
    record: TrialRecord = {"status": "failed", "reason": reason}
    worker = getattr(error, "magnet_worker", None)  # where it raised, when known
    if isinstance(worker, str):
        record["worker"] = worker
    if traceback:
        record["traceback"] = traceback
    trial.set_user_attr(TRIAL_ATTR, record)
    study.tell(trial, state=TrialState.FAIL)
    progress.failure(trial.number, reason, traceback)


def summary_lines(study: Study) -> list[str]:
    """The summary a search prints at its end: counts, front, best designs, what to run next."""
    summary = study.summary()
    counts = summary["trials"]
    repeats = f"; {counts['repeat']} repeats answered from the study" if counts["repeat"] else ""
    lines = [
        "",
        f"study {study.name!r} ({study.storage})",
        f"  designs    {counts['designs']}: {counts['ok']} ok, {counts['infeasible']} infeasible, "
        f"{counts['dominated']} dominated by their bounds (not mapped); {counts['failed']} "
        f"failed{repeats}",
        f"  front      {summary['front_size']} designs, hypervolume "
        f"{summary['hypervolume']:.4g} (decades^{len(study.objectives)})",
    ]
    for metric, best in summary["best"].items():
        if best is not None:
            lines.append(f"  best       {metric}: {best['value']:.4g} (trial #{best['trial']})")
    storage = "" if study.storage == describe(None) else f" --storage {shlex.quote(study.storage)}"
    lines += [
        f"  front      magnet pareto --study {shlex.quote(study.name)}{storage}",
        f"  dashboard  magnet dashboard{storage}",
    ]
    return lines
